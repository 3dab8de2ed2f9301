"""Diagrams of the computations the book performs, drawn from real modules and shapes.

Each function returns a matplotlib ``Figure`` whose labels are read off the objects it is given,
so a label cannot disagree with the tensors. White background, palette of :mod:`tformer.plots`.

* :func:`norm_blocks` — a pre-norm and a post-norm :class:`~tformer.layers.TransformerBlock`
  side by side (chapter 8).
* :func:`tiled_attention_io` — one step of tiled attention: which tiles of ``Q``, ``K``, ``V``
  sit in fast memory (SRAM) and what stays in slow memory (HBM) (chapter 11).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

from tformer.plots import PALETTE

_FILL = {"norm": "#FFF4CC", "attn": "#D6EAF8", "mlp": "#FDEBD0", "io": "#F2F2F2"}


def _box(ax, x, y, text, kind, width=2.6, height=0.62):
    ax.add_patch(FancyBboxPatch((x - width / 2, y - height / 2), width, height,
                                boxstyle="round,pad=0.02,rounding_size=0.12",
                                facecolor=_FILL[kind], edgecolor="#333333", lw=1.1))
    ax.text(x, y, text, ha="center", va="center", fontsize=9, color="black")


def _add(ax, x, y):
    ax.add_patch(plt.Circle((x, y), 0.2, facecolor="white", edgecolor="#333333", lw=1.1))
    ax.text(x, y - 0.01, "+", ha="center", va="center", fontsize=12, color="black")


def _arrow(ax, start, end, colour="#333333", style="-|>", **kwargs):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle=style, mutation_scale=11, color=colour,
                                 lw=1.2, shrinkA=0, shrinkB=0, **kwargs))


def _block_steps(block) -> list[tuple[str, str]]:
    """The forward order of ``block`` as (kind, label) steps, read from its modules."""
    d, h = block.attn.d, block.attn.n_heads
    attention = ("attn", f"multi-head attention\nh = {h}, d = {d}")
    mlp = ("mlp", f"MLP  {d} → {block.mlp.d_ff} → {d}")
    ln1 = ("norm", rf"LN$_1$  ($\gamma, \beta \in \mathbb{{R}}^{{{d}}}$)")
    ln2 = ("norm", rf"LN$_2$  ($\gamma, \beta \in \mathbb{{R}}^{{{d}}}$)")
    if block.norm == "pre":
        return [ln1, attention, ("add", ""), ln2, mlp, ("add", "")]
    if block.norm == "post":
        return [attention, ("add", ""), ln1, mlp, ("add", ""), ln2]
    raise ValueError(f"norm_blocks draws pre- and post-norm blocks, got norm={block.norm!r}")


def norm_blocks(pre_block, post_block, n_positions: int):
    """A pre-norm and a post-norm layer side by side, input at the bottom.

    ``pre_block``, ``post_block``: :class:`~tformer.layers.TransformerBlock` with ``norm="pre"``
    and ``norm="post"``; ``n_positions`` (``T``) labels the ``(T, d)`` stream. The residual path
    is drawn in blue: in the pre-norm block it never passes through a LayerNorm.
    """
    fig, axes = plt.subplots(1, 2, figsize=(8.6, 6.4))
    for ax, block, title in ((axes[0], pre_block, "pre-norm (GPT-2)"),
                             (axes[1], post_block, "post-norm (2017 paper)")):
        steps = _block_steps(block)
        d = block.attn.d
        ax.set_xlim(-2.2, 2.4)
        ax.set_ylim(-0.9, len(steps) + 0.9)
        ax.axis("off")
        ax.set_title(title, fontsize=11)
        ax.text(0, -0.55, f"x  (T × d = {n_positions} × {d})", ha="center", fontsize=9)
        y_prev, branch_start = -0.3, -0.3
        residual = PALETTE["blue"]
        for index, (kind, label) in enumerate(steps):
            y = index + 0.4
            if kind == "add":
                _arrow(ax, (0, y_prev + 0.31), (0, y - 0.2))
                # the skip connection: from where the branch left the stream
                ax.plot([0, 1.75, 1.75], [branch_start, branch_start, y], color=residual, lw=1.6)
                _arrow(ax, (1.75, y), (0.2, y), colour=residual)
                _add(ax, 0, y)
                branch_start, y_prev = y + 0.2, y - 0.11
            else:
                start = y_prev + (0.31 if index and steps[index - 1][0] != "add" else 0.11)
                _arrow(ax, (0, start), (0, y - 0.31))
                _box(ax, 0, y, label, kind)
                if kind == "norm" and block.norm == "post":
                    branch_start = y + 0.31
                y_prev = y
        top = len(steps) + 0.4
        last_kind = steps[-1][0]
        _arrow(ax, (0, y_prev + (0.11 if last_kind == "add" else 0.31)), (0, top - 0.1))
        ax.text(0, top + 0.05, f"output  (T × d = {n_positions} × {d})", ha="center", fontsize=9)
    axes[0].text(1.85, 1.2, "residual\n(identity)", color=PALETTE["blue"], fontsize=8.5)
    fig.tight_layout()
    return fig


def tiled_attention_io(n_positions: int, d_k: int, query_tile: int, key_tile: int,
                       step: tuple[int, int] = (1, 2)):
    """Where the tiles of one step of tiled attention live.

    Slow memory (HBM, left) holds ``Q``, ``K``, ``V`` ``(T, d_k)`` and the output ``O``; fast
    memory (SRAM, right) holds one ``query_tile × d_k`` tile of ``Q``, one ``key_tile × d_k`` tile
    each of ``K`` and ``V``, the ``query_tile × key_tile`` tile of scores ``S`` and weights
    ``P``, and per query the running maximum ``m``, normaliser ``ℓ`` and output accumulator.
    ``step = (i, j)``: the query tile and key tile being processed (0-based).
    """
    n_q, n_k = -(-n_positions // query_tile), -(-n_positions // key_tile)
    i, j = step
    fig, ax = plt.subplots(figsize=(9.4, 4.6))
    ax.set_xlim(0, 19)
    ax.set_ylim(-1.6, 10.6)
    ax.axis("off")
    ax.add_patch(Rectangle((0.1, -1.2), 9.3, 11.5, facecolor="#F7F7F7", edgecolor="#888888"))
    ax.add_patch(Rectangle((10.6, -1.2), 8.2, 11.5, facecolor="#EAF4EA", edgecolor="#888888"))
    ax.text(4.75, 9.9, "slow memory (HBM): whole tensors", ha="center", fontsize=10)
    ax.text(14.7, 9.9, "fast memory (SRAM): one tile each", ha="center", fontsize=10)
    height = 8.0  # T positions drawn over 8 units
    for x0, name, n_tiles, active, colour in (
        (0.8, "Q", n_q, i, PALETTE["blue"]),
        (3.0, "K", n_k, j, PALETTE["orange"]),
        (5.2, "V", n_k, j, PALETTE["green"]),
        (7.4, "O", n_q, i, PALETTE["purple"]),
    ):
        ax.text(x0 + 0.6, 9.2, f"{name}\n{n_positions} × {d_k}", ha="center", va="center",
                fontsize=8.5)
        tile_height = height / n_tiles
        for t in range(n_tiles):
            top = 8.4 - t * tile_height
            ax.add_patch(Rectangle((x0, top - tile_height), 1.2, tile_height,
                                   facecolor=colour if t == active else "white",
                                   alpha=0.85 if t == active else 1.0, edgecolor="#555555",
                                   lw=0.6))
    rows = [
        (8.2, f"Q tile {i + 1}/{n_q}:  {query_tile} × {d_k}", PALETTE["blue"]),
        (7.0, f"K tile {j + 1}/{n_k}:  {key_tile} × {d_k}", PALETTE["orange"]),
        (5.8, f"V tile {j + 1}/{n_k}:  {key_tile} × {d_k}", PALETTE["green"]),
        (4.4, f"S, P tile:  {query_tile} × {key_tile}  (never leaves SRAM)", "#BBBBBB"),
        (3.0, f"m, ℓ:  {query_tile} each;  accumulator {query_tile} × {d_k}", PALETTE["purple"]),
    ]
    for y, text, colour in rows:
        ax.add_patch(Rectangle((11.0, y - 0.4), 0.8, 0.8, facecolor=colour, edgecolor="#555555"))
        ax.text(12.1, y, text, va="center", fontsize=8.5)
    tile_q = height / n_q
    tile_k = height / n_k
    _arrow(ax, (2.0, 8.4 - (i + 0.5) * tile_q), (11.0, 8.2), colour=PALETTE["blue"])
    _arrow(ax, (4.2, 8.4 - (j + 0.5) * tile_k), (11.0, 7.0), colour=PALETTE["orange"])
    _arrow(ax, (6.4, 8.4 - (j + 0.5) * tile_k), (11.0, 5.8), colour=PALETTE["green"])
    _arrow(ax, (11.0, 3.0), (8.6, 8.4 - (i + 0.5) * tile_q), colour=PALETTE["purple"],
           linestyle="--")
    ax.text(14.7, 1.5, f"for each of the {n_q} query tiles: read it once,\n"
            f"stream all {n_k} key/value tiles past it,\n"
            "write its output tile once (dashed) after the last.", ha="center", va="center",
            fontsize=8.5)
    ax.text(4.75, -0.6, "naive attention writes and re-reads the whole\n"
            f"{n_positions} × {n_positions} S and P here", ha="center", va="center", fontsize=8.5,
            color=PALETTE["vermillion"])
    return fig
