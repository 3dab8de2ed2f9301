"""Diagrams of the book's computations, drawn from the real tensors of a chapter.

Each function takes the tensors (or their shapes) a chapter computes and returns a matplotlib
``Figure``; every box is labelled with the shape read from the tensors themselves, so a label can
never disagree with the code. The figures use :mod:`tformer.plots`' style: opaque white background
(legible in the theme's dark mode), the colour-blind-safe palette, queries as rows and keys as
columns.

* :func:`text_to_vectors` — chapter 1: text → tokens → ids → rows of the embedding table → ``X``.
* :func:`head_dataflow` — chapter 2: one attention head, ``X → Q, K, V → S → A → O``, with shapes.
* :func:`layer_dataflow` — chapter 3: a self-attention layer written as matrices, biases included.
* :func:`mask_pipeline` — chapter 5: key-padding mask ``&`` causal mask ``=`` combined mask, and
  scores ``+`` additive mask → softmax → weights, for one sequence and head of a batch.
* :func:`induction_circuit` — chapter 12: previous-token head → K-composition → copying.
* :func:`norm_blocks` — a pre-norm and a post-norm :class:`~tformer.layers.TransformerBlock`
  side by side (chapter 8).
* :func:`tiled_attention_io` — one step of tiled attention: which tiles of ``Q``, ``K``, ``V``
  sit in fast memory (SRAM) and what stays in slow memory (HBM) (chapter 11).
* :func:`multihead_split_merge` — chapter 7: split into heads → batched heads → merge, with the
  memory layout (shapes and strides of the real tensors).
* :func:`encoder_decoder_diagram` — chapter 9: encoder and decoder stacks joined by
  cross-attention, with the trained model's shapes.
* :func:`kv_cache_diagram` — chapter 10: what a KV cache stores and reuses at each step.
* :func:`beam_search_diagram` — chapter 10: the hypotheses a beam keeps at each step.
* :func:`where_positions_enter` — chapter 6: added to the embedding, rotating q and k in every
  head of every layer, or as a bias on the scores.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

from tformer import plots
from tformer.plots import CYCLE, PALETTE

_FILL = {
    "input": "#E8E8E8",
    "projection": "#D4E9F7",
    "score": "#FBE7C6",
    "weight": "#D5F0E6",
    "output": "#F6D5E6",
}


def _shape(tensor: torch.Tensor | Sequence[int]) -> str:
    dims = tuple(tensor.shape) if isinstance(tensor, torch.Tensor) else tuple(tensor)
    return " × ".join(str(int(n)) for n in dims)


def _box(ax, x: float, y: float, title: str, shape: str, kind: str, width: float = 1.5) -> None:
    ax.add_patch(
        FancyBboxPatch(
            (x - width / 2, y - 0.42), width, 0.84,
            boxstyle="round,pad=0.04", facecolor=_FILL[kind], edgecolor="black", linewidth=1.0,
        )
    )
    ax.text(x, y + 0.13, title, ha="center", va="center", fontsize=12)
    ax.text(x, y - 0.2, shape, ha="center", va="center", fontsize=9.5, color="#333333")


def _arrow(ax, start: tuple[float, float], end: tuple[float, float], label: str = "",
           offset: tuple[float, float] = (0.0, 0.18)) -> None:
    ax.add_patch(
        FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=13, linewidth=1.1,
                        color=PALETTE["black"], shrinkA=2, shrinkB=2)
    )
    if label:
        mid = ((start[0] + end[0]) / 2 + offset[0], (start[1] + end[1]) / 2 + offset[1])
        ax.text(mid[0], mid[1], label, ha="center", va="bottom", fontsize=9.5,
                color=PALETTE["blue"])


def head_dataflow(
    x: torch.Tensor,
    queries: torch.Tensor,
    keys: torch.Tensor,
    values: torch.Tensor,
    scores: torch.Tensor,
    weights: torch.Tensor,
    outputs: torch.Tensor,
    *,
    scaled: bool = True,
) -> Figure:
    """One head's data flow with the shapes of the given tensors.

    ``x (T, d)``, ``queries (T_q, d_k)``, ``keys (T_k, d_k)``, ``values (T_k, d_v)``,
    ``scores`` and ``weights (T_q, T_k)``, ``outputs (T_q, d_v)``. Returns the figure.
    """
    if scores.shape != weights.shape or scores.shape[-1] != keys.shape[-2]:
        raise ValueError(
            f"scores {tuple(scores.shape)} and weights {tuple(weights.shape)} must both be "
            f"(T_q, T_k) with T_k = {keys.shape[-2]}"
        )
    fig, ax = plt.subplots(figsize=(9.6, 3.4))
    ax.set_xlim(-0.2, 11.4)
    ax.set_ylim(-2.35, 1.9)
    ax.axis("off")
    _box(ax, 0.8, 0.0, "X", _shape(x), "input")
    rows = {"Q": (queries, 1.25), "K": (keys, 0.0), "V": (values, -1.25)}
    for name, (tensor, y) in rows.items():
        _box(ax, 3.3, y, name, _shape(tensor), "projection")
        _arrow(ax, (1.55, 0.0), (2.55, y), f"$W_{name}$", offset=(-0.15, 0.02))
    _box(ax, 5.8, 0.65, "S", _shape(scores), "score")
    score_label = r"$QK^\top/\sqrt{d_k}$" if scaled else r"$QK^\top$"
    _arrow(ax, (4.05, 1.25), (5.05, 0.75))
    _arrow(ax, (4.05, 0.0), (5.05, 0.55))
    ax.text(4.55, 1.25, score_label, ha="center", va="bottom", fontsize=9.5,
            color=PALETTE["blue"])
    _box(ax, 8.0, 0.65, "A", _shape(weights), "weight")
    _arrow(ax, (6.55, 0.65), (7.25, 0.65), "softmax\nover keys", offset=(0.0, 0.3))
    _box(ax, 10.3, -0.3, "O = AV", _shape(outputs), "output", width=1.7)
    _arrow(ax, (8.75, 0.65), (9.45, -0.15))
    _arrow(ax, (4.05, -1.25), (9.45, -0.45))
    ax.text(
        5.7, -2.3,
        f"$T_q$ = {scores.shape[-2]} queries, $T_k$ = {scores.shape[-1]} keys, "
        f"d = {x.shape[-1]}, dₖ = {queries.shape[-1]}, dᵥ = {values.shape[-1]}",
        ha="center", va="bottom", fontsize=9.5, color="#333333",
    )
    fig.tight_layout()
    return fig


def layer_dataflow(d: int, d_k: int, d_v: int, length: int) -> Figure:
    """A self-attention layer as matrix products, with biases: shapes for ``length`` tokens.

    Left to right: ``X (T, d)``; three products with ``W (d, d_k|d_v)`` plus a bias row copied
    into every row; the ``(T, T)`` scores and weights; the ``(T, d_v)`` output. The parameter
    boxes say which shapes contain ``T`` (none do).
    """
    fig, ax = plt.subplots(figsize=(9.6, 3.9))
    ax.set_xlim(-0.2, 11.4)
    ax.set_ylim(-2.5, 2.1)
    ax.axis("off")
    _box(ax, 0.8, 0.0, "X", _shape((length, d)), "input")
    widths = {"Q": d_k, "K": d_k, "V": d_v}
    for (name, width), y in zip(widths.items(), (1.35, 0.0, -1.35)):
        _box(ax, 3.6, y, f"${name} = X W_{name} + 1 b_{name}^\\top$", _shape((length, width)),
             "projection", width=2.6)
        _arrow(ax, (1.55, 0.0), (2.3, y))
        ax.text(3.6, y + 0.5, f"$W_{name}$: {d} × {width},  $b_{name}$: {width}", ha="center",
                va="bottom", fontsize=8.5, color=PALETTE["blue"])
    _box(ax, 6.5, 0.7, "S = QKᵀ/√dₖ", _shape((length, length)), "score", width=2.0)
    _arrow(ax, (4.9, 1.35), (5.5, 0.8))
    _arrow(ax, (4.9, 0.0), (5.5, 0.6))
    _box(ax, 8.7, 0.7, "A = softmax(S)", _shape((length, length)), "weight", width=1.9)
    _arrow(ax, (7.5, 0.7), (7.75, 0.7))
    _box(ax, 10.4, -0.6, "O = AV", _shape((length, d_v)), "output", width=1.5)
    _arrow(ax, (9.4, 0.28), (10.1, -0.18))
    _arrow(ax, (4.9, -1.35), (9.65, -0.75))
    n_parameters = 2 * d * d_k + d * d_v + 2 * d_k + d_v
    ax.text(
        5.6, -2.45,
        f"T = {length}, d = {d}, dₖ = {d_k}, dᵥ = {d_v}: {n_parameters:,} parameters, "
        "no shape with T among them",
        ha="center", va="bottom", fontsize=9.5, color="#333333",
    )
    fig.tight_layout()
    return fig


def _shape_tuple(shape: Sequence[int]) -> str:
    """``(6, 8)``: a shape as Python prints it (the text-to-vectors and mask diagrams)."""
    return "(" + ", ".join(str(int(size)) for size in shape) + ")"


def _operator(ax: Axes, text: str, size: int = 20) -> None:
    ax.axis("off")
    ax.text(0.5, 0.5, text, ha="center", va="center", fontsize=size, color="#333333")


def mask_pipeline(
    scores: torch.Tensor,
    key_padding: torch.Tensor,
    causal: torch.Tensor,
    *,
    batch_shapes: dict[str, Sequence[int]],
    sequence: int = 1,
    head: int = 0,
) -> Figure:
    """How a padding mask and a causal mask reach the weights, for one sequence and one head.

    ``scores``: ``(T, T)`` scores of that sequence and head. ``key_padding``: ``(T,)`` booleans,
    ``True`` at real keys. ``causal``: ``(T, T)`` booleans. ``batch_shapes``: the shapes of the
    whole batch's tensors, printed in the panel titles, with keys ``"padding"``, ``"causal"``,
    ``"combined"`` and ``"scores"`` (e.g. ``(B, 1, 1, T)``, ``(T, T)``, ``(B, 1, T, T)``,
    ``(B, h, T, T)``). ``sequence`` and ``head`` (0-based) are only used in the titles.
    """
    scores = scores.detach().double().cpu()
    n_positions = scores.shape[-1]
    if scores.shape != (n_positions, n_positions) or causal.shape != scores.shape:
        raise ValueError(
            f"mask_pipeline needs (T, T) scores and causal mask, got {tuple(scores.shape)} and "
            f"{tuple(causal.shape)}"
        )
    if key_padding.shape != (n_positions,):
        raise ValueError(f"key_padding must have shape (T,) = ({n_positions},), got "
                         f"{tuple(key_padding.shape)}")
    combined = key_padding[None, :] & causal
    additive = torch.zeros_like(scores).masked_fill(~combined, float("-inf"))
    masked = scores + additive
    live = combined.any(dim=-1, keepdim=True)
    weights = torch.where(live, masked.softmax(dim=-1), torch.zeros_like(masked)).nan_to_num(0.0)
    shown_weights = weights.masked_fill(~combined, float("nan"))

    fig = plt.figure(figsize=(10, 6.8))
    grid = fig.add_gridspec(2, 5, width_ratios=[1, 0.32, 1, 0.32, 1], height_ratios=[1, 1],
                            hspace=0.55, wspace=0.15)
    where = f"sequence {sequence + 1}, head {head + 1}"

    def panel(row: int, col: int, matrix, title: str, **options) -> Axes:
        ax = fig.add_subplot(grid[row, col])
        options.setdefault("ylabel", "query position" if col == 0 else "")
        plots.heatmap(matrix, ax=ax, colorbar=False, **options)
        ax.set_title(title, fontsize=10)
        ax.xaxis.label.set_fontsize(9)
        ax.yaxis.label.set_fontsize(9)
        return ax

    strip = panel(0, 0, key_padding[None, :].int(), "key padding, True = real key\n"
                  f"{_shape_tuple(batch_shapes['padding'])}: one row per sequence", fmt="{:.0f}",
                  vmin=0, vmax=1, ylabel="")
    strip.set_yticks([0], labels=["all queries"])
    strip.set_box_aspect(1 / n_positions)
    _operator(fig.add_subplot(grid[0, 1]), "&")
    panel(0, 2, causal.int(), f"causal, True = j ≤ i\n{_shape_tuple(batch_shapes['causal'])}",
          fmt="{:.0f}", vmin=0, vmax=1)
    _operator(fig.add_subplot(grid[0, 3]), "=")
    panel(0, 4, combined.int(), f"combined ({where})\n{_shape_tuple(batch_shapes['combined'])}"
          " by broadcasting", fmt="{:.0f}", vmin=0, vmax=1)
    panel(1, 0, scores, f"scores S = QKᵀ/√dₖ\n{_shape_tuple(batch_shapes['scores'])}", fmt="{:.1f}",
          cmap=plots.DIVERGING_CMAP, vmin=-float(scores.abs().max()),
          vmax=float(scores.abs().max()))
    _operator(fig.add_subplot(grid[1, 1]), "+ M")
    panel(1, 2, masked, "S + M: additive mask,\n0 where True, −∞ where False", fmt="{:.1f}",
          cmap=plots.DIVERGING_CMAP, vmin=-float(scores.abs().max()),
          vmax=float(scores.abs().max()))
    _operator(fig.add_subplot(grid[1, 3]), "→\nsoftmax\nalong keys", size=11)
    panel(1, 4, shown_weights, "weights A: every live row sums to 1,\nhidden keys get exactly 0",
          vmin=0, vmax=1, masked_text="0")
    return fig


def text_to_vectors(
    pieces: Sequence[str],
    ids: Sequence[int],
    embedding: torch.Tensor,
    *,
    text: str,
    n_show: int = 6,
) -> Figure:
    """Text → tokens → ids → rows of the embedding table → the ``(T, d)`` matrix ``X``.

    ``pieces``: the ``T`` token strings; ``ids``: their ``T`` ids; ``embedding``: the
    ``(n_vocab, d)`` table. At most ``n_show`` columns of each vector are drawn; the titles give
    the true shapes.
    """
    ids = [int(i) for i in ids]
    if len(pieces) != len(ids):
        raise ValueError(f"need one id per token, got {len(pieces)} tokens and {len(ids)} ids")
    n_vocab, width = embedding.shape
    if any(not 0 <= i < n_vocab for i in ids):
        raise ValueError(f"ids must lie in 0..{n_vocab - 1}, got {ids}")
    rows = embedding.detach().double().cpu()[ids]
    shown = rows[:, : min(n_show, width)]
    n_tokens = len(ids)

    fig = plt.figure(figsize=(9.5, 0.5 * n_tokens + 1.8))
    grid = fig.add_gridspec(1, 2, width_ratios=[1.5, 1.1], wspace=0.22)
    flow = fig.add_subplot(grid[0, 0])
    flow.set_xlim(0, 10)
    flow.set_ylim(n_tokens - 0.5, -0.5)  # the same rows as the heat-map beside it
    flow.axis("off")
    box = {"boxstyle": "round,pad=0.3", "facecolor": "#eef4fa", "edgecolor": plots.PALETTE["blue"]}
    middle = (n_tokens - 1) / 2
    flow.text(1.2, middle, f"“{text}”", ha="center", va="center", fontsize=10, wrap=True,
              bbox={**box, "facecolor": "#fdf3e1", "edgecolor": plots.PALETTE["orange"]})
    for heading, x in (("text", 1.2), (f"T = {n_tokens} tokens", 4.6),
                       (f"ids in 0…{n_vocab - 1}", 7.3)):
        flow.text(x, -0.85, heading, ha="center", va="bottom", fontsize=10, clip_on=False)
    flow.text(8.65, -0.3, "selects a row", ha="center", va="bottom", fontsize=8, color="#555555")
    line = {"color": "#999999", "linewidth": 0.8}
    for row, (piece, token_id) in enumerate(zip(pieces, ids)):
        flow.plot([2.5, 3.7], [middle, row], **line)
        flow.text(4.6, row, repr(piece), ha="center", va="center", fontsize=10,
                  family="monospace", bbox=box)
        flow.annotate("", xy=(6.7, row), xytext=(5.6, row),
                      arrowprops={"arrowstyle": "->", "color": "#555555"})
        flow.text(7.3, row, str(token_id), ha="center", va="center", fontsize=10,
                  family="monospace", bbox=box)
        flow.annotate("", xy=(9.4, row), xytext=(7.9, row), annotation_clip=False,
                      arrowprops={"arrowstyle": "->", "color": "#555555"})
    matrix_ax = fig.add_subplot(grid[0, 1])
    plots.heatmap(shown, ax=matrix_ax, colorbar=False, cmap=plots.DIVERGING_CMAP,
                  vmin=-float(shown.abs().max()), vmax=float(shown.abs().max()), fmt="{:.2f}",
                  row_labels=[f"row {i}" for i in ids],
                  col_labels=[str(j) for j in range(shown.shape[1])],
                  xlabel=f"feature (first {shown.shape[1]} of d = {width})", ylabel="")
    matrix_ax.set_title(f"X: rows picked from W_E ({n_vocab} × {width})\n"
                        f"X's shape (T, d) = ({n_tokens}, {width})", fontsize=10)
    return fig


__all__ = ["mask_pipeline", "text_to_vectors"]


def _label_box(ax, x, y, text, colour, width=2.2, height=0.62, fontsize=8.5):
    ax.add_patch(FancyBboxPatch(
        (x - width / 2, y - height / 2), width, height, boxstyle="round,pad=0.04",
        facecolor="white", edgecolor=colour, lw=1.6,
    ))
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize, color="#222222")


def _bent_arrow(ax, start, end, colour, rad=0.0, lw=2.0, style="-|>"):
    ax.add_patch(FancyArrowPatch(
        start, end, arrowstyle=style, mutation_scale=14, color=colour, lw=lw,
        connectionstyle=f"arc3,rad={rad}", shrinkA=2, shrinkB=2,
    ))


def induction_circuit(config, prev_head: tuple[int, int], ind_head: tuple[int, int]):
    """The induction circuit on "… A B … A", drawn for a trained model's ``config`` and heads.

    Three positions (the earlier A, the B after it, the current A) each carry a residual stream
    of width ``config.d`` from the embedding ``W_E`` (``n_vocab × d``) up to the unembedding
    ``W_U`` (``d × n_vocab``). The previous-token head ``prev_head`` moves "A" from A's stream
    into B's; the induction head ``ind_head`` reads it through its *keys* (K-composition), attends
    from the current A to B, and copies B into the current stream, raising B's logit.
    Returns the figure.
    """
    d, d_k, n_vocab = config.d, config.d // config.n_heads, config.n_vocab
    columns = {"A (earlier)": 0.0, "B (next)": 3.2, "A (now)": 7.6}
    levels = {"embed": 0.0, "layer0": 1.6, "layer1": 3.3, "unembed": 4.9}
    fig, ax = plt.subplots(figsize=(9.2, 5.2))
    stream = "#888888"
    for name, x in columns.items():
        ax.plot([x, x], [levels["embed"] + 0.3, levels["unembed"] - 0.3], color=stream, lw=3,
                alpha=0.35, zorder=0)
        ax.text(x, -0.75, name, ha="center", va="center", fontsize=10, weight="bold")
        token = name.split()[0]
        _label_box(ax, x, levels["embed"], f"$W_E$: token {token}\n$n_{{vocab}}$={n_vocab} → d={d}",
             "#555555")
    x_a, x_b, x_now = columns.values()
    blue, orange, green = PALETTE["blue"], PALETTE["orange"], PALETTE["green"]
    lp, hp = prev_head
    li, hi = ind_head
    # layer 0: the previous-token head at B attends to A and writes "previous token = A"
    _label_box(ax, x_b, levels["layer0"],
         f"L{lp} H{hp} previous-token head\nwrites \"previous token = A\"\n"
         f"(d={d} → $d_k$={d_k} → d)", orange, width=2.6, height=0.9)
    _bent_arrow(ax, (x_a + 0.15, levels["embed"] + 0.35), (x_b - 1.3, levels["layer0"]), orange,
           rad=-0.2)
    ax.text(1.0, 1.05, "attends to t − 1", color=orange, fontsize=8.5, ha="center")
    # layer 1: the induction head at the current A; its key at B carries layer 0's write
    _label_box(ax, x_now, levels["layer1"],
         f"L{li} H{hi} induction head\nquery: \"I am A\" (from $W_E$)\n"
         f"$d_k$={d_k}", blue, width=2.6, height=0.9)
    _label_box(ax, x_b, levels["layer1"], "key at B:\n\"previous token = A\"", green, width=2.4,
         height=0.75)
    _bent_arrow(ax, (x_b, levels["layer0"] + 0.48), (x_b, levels["layer1"] - 0.4), green)
    ax.text(x_b - 0.15, 2.45, "K-composition:\n$W_K$ reads\nlayer 0's output", color=green,
            fontsize=8.5, ha="right", va="center")
    _bent_arrow(ax, (x_now - 1.32, levels["layer1"]), (x_b + 1.22, levels["layer1"]), blue,
           style="<|-", lw=2.2)
    ax.text((x_b + x_now) / 2 + 0.05, levels["layer1"] + 0.32, "query matches key:\nattend to B",
            color=blue, fontsize=8.5, ha="center")
    _bent_arrow(ax, (x_b + 0.9, levels["layer1"] - 0.42), (x_now - 1.0, levels["layer1"] - 0.48),
           PALETTE["vermillion"], rad=0.25)
    ax.text((x_b + x_now) / 2 + 0.2, 2.2, "value at B: its OV circuit\ncopies \"B\" forward",
            color=PALETTE["vermillion"], fontsize=8.5, ha="center", va="top")
    _label_box(ax, x_now, levels["unembed"], f"$W_U$: d={d} → $n_{{vocab}}$={n_vocab}\nlogit of B rises",
         "#555555", width=2.6)
    _bent_arrow(ax, (x_now, levels["layer1"] + 0.48), (x_now, levels["unembed"] - 0.33), stream)
    ax.text(-1.3, levels["layer0"], "layer 0", fontsize=9, ha="right", va="center", color="#444444")
    ax.text(-1.3, levels["layer1"], "layer 1", fontsize=9, ha="right", va="center", color="#444444")
    ax.set_xlim(-2.4, 9.2)
    ax.set_ylim(-1.1, 5.5)
    ax.axis("off")
    fig.tight_layout()
    return fig


_BLOCK_FILL = {"norm": "#FFF4CC", "attn": "#D6EAF8", "mlp": "#FDEBD0", "io": "#F2F2F2"}


def _step_box(ax, x, y, text, kind, width=2.6, height=0.62):
    ax.add_patch(FancyBboxPatch((x - width / 2, y - height / 2), width, height,
                                boxstyle="round,pad=0.02,rounding_size=0.12",
                                facecolor=_BLOCK_FILL[kind], edgecolor="#333333", lw=1.1))
    ax.text(x, y, text, ha="center", va="center", fontsize=9, color="black")


def _add_node(ax, x, y):
    ax.add_patch(plt.Circle((x, y), 0.2, facecolor="white", edgecolor="#333333", lw=1.1))
    ax.text(x, y - 0.01, "+", ha="center", va="center", fontsize=12, color="black")


def _flow_arrow(ax, start, end, colour="#333333", style="-|>", **kwargs):
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
                _flow_arrow(ax, (0, y_prev + 0.31), (0, y - 0.2))
                # the skip connection: from where the branch left the stream
                ax.plot([0, 1.75, 1.75], [branch_start, branch_start, y], color=residual, lw=1.6)
                _flow_arrow(ax, (1.75, y), (0.2, y), colour=residual)
                _add_node(ax, 0, y)
                branch_start, y_prev = y + 0.2, y - 0.11
            else:
                start = y_prev + (0.31 if index and steps[index - 1][0] != "add" else 0.11)
                _flow_arrow(ax, (0, start), (0, y - 0.31))
                _step_box(ax, 0, y, label, kind)
                if kind == "norm" and block.norm == "post":
                    branch_start = y + 0.31
                y_prev = y
        top = len(steps) + 0.4
        last_kind = steps[-1][0]
        _flow_arrow(ax, (0, y_prev + (0.11 if last_kind == "add" else 0.31)), (0, top - 0.1))
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
    _flow_arrow(ax, (2.0, 8.4 - (i + 0.5) * tile_q), (11.0, 8.2), colour=PALETTE["blue"])
    _flow_arrow(ax, (4.2, 8.4 - (j + 0.5) * tile_k), (11.0, 7.0), colour=PALETTE["orange"])
    _flow_arrow(ax, (6.4, 8.4 - (j + 0.5) * tile_k), (11.0, 5.8), colour=PALETTE["green"])
    _flow_arrow(ax, (11.0, 3.0), (8.6, 8.4 - (i + 0.5) * tile_q), colour=PALETTE["purple"],
           linestyle="--")
    ax.text(14.7, 1.5, f"for each of the {n_q} query tiles: read it once,\n"
            f"stream all {n_k} key/value tiles past it,\n"
            "write its output tile once (dashed) after the last.", ha="center", va="center",
            fontsize=8.5)
    ax.text(4.75, -0.6, "naive attention writes and re-reads the whole\n"
            f"{n_positions} × {n_positions} S and P here", ha="center", va="center", fontsize=8.5,
            color=PALETTE["vermillion"])
    return fig


def multihead_split_merge(batch: int = 2, n_positions: int = 16, d: int = 256, n_heads: int = 8) -> Figure:
    """Multi-head split → batched heads → merge, with each step's shape, strides and whether it
    shares memory with the step before (``view``/``transpose``) or copies (``reshape``).

    Returns the figure; the tensors are ``x (B, T, d)`` → ``view (B, T, h, d_k)`` →
    ``transpose (B, h, T, d_k)`` → per-head attention ``(B, h, T, d_k)`` → ``transpose
    (B, T, h, d_k)`` → ``reshape (B, T, d)``.
    """
    d_k = d // n_heads
    x = torch.zeros(batch, n_positions, d)
    viewed = x.view(batch, n_positions, n_heads, d_k)
    heads = viewed.transpose(1, 2)
    attended = torch.zeros(heads.shape)  # weights @ values: a fresh, contiguous tensor
    back = attended.transpose(1, 2)
    merged = back.reshape(batch, n_positions, d)
    steps = [
        (r"$Q = x\,W_Q$", x, "(B, T, d)", None),
        (".view", viewed, "(B, T, h, dₖ)", viewed.data_ptr() == x.data_ptr()),
        (".transpose(1, 2)", heads, "(B, h, T, dₖ)", heads.data_ptr() == x.data_ptr()),
        ("B·h attentions", attended, "(B, h, T, dₖ)", False),
        (".transpose(1, 2)", back, "(B, T, h, dₖ)", back.data_ptr() == attended.data_ptr()),
        (".reshape", merged, "(B, T, d)", merged.data_ptr() == back.data_ptr()),
    ]
    fig, ax = plt.subplots(figsize=(12, 3.6))
    ax.set_xlim(0, len(steps) * 2)
    ax.set_ylim(-1.9, 2.2)
    ax.axis("off")
    for i, (label, tensor, axes_names, shares) in enumerate(steps):
        x0 = i * 2 + 0.1
        colour = PALETTE["sky"] if i in (2, 3) else "#f2f2f2"
        ax.add_patch(FancyBboxPatch((x0, 0), 1.75, 1.6, boxstyle="round,pad=0.03",
                                    facecolor=colour, edgecolor="#444444"))
        ax.text(x0 + 0.88, 1.35, label, ha="center", va="center", fontsize=10, weight="bold",
                color="#111111")
        ax.text(x0 + 0.88, 0.95, axes_names, ha="center", va="center", fontsize=9, color="#111111")
        ax.text(x0 + 0.88, 0.6, str(tuple(tensor.shape)), ha="center", va="center", fontsize=9,
                color="#111111")
        ax.text(x0 + 0.88, 0.25, f"strides {tensor.stride()}", ha="center", va="center",
                fontsize=7.5, color="#111111")
        if shares is not None:
            note, note_colour = (
                ("same memory", PALETTE["green"]) if shares else ("new memory", PALETTE["vermillion"])
            )
            ax.annotate("", xy=(x0, 0.8), xytext=(x0 - 0.25, 0.8),
                        arrowprops=dict(arrowstyle="->", color="#444444"))
            ax.text(x0 + 0.88, -0.25, note, ha="center", va="center", fontsize=9,
                    color=note_colour, weight="bold")
    # one token's d features in memory, coloured by the head that owns them
    for j in range(n_heads):
        ax.add_patch(plt.Rectangle((0.1 + j * 1.75 / n_heads, -1.2), 1.75 / n_heads, 0.4,
                                   facecolor=CYCLE[j % len(CYCLE)], edgecolor="white"))
    ax.text(0.1, -1.55, f"one token's d = {d} features: h = {n_heads} blocks of dₖ = {d_k}",
            fontsize=9, color="#111111")
    ax.text(4.1, -1.2, "each head is one (T, dₖ) slice; one batched @ computes all B·h of them",
            fontsize=9, color="#111111")
    ax.text(4.1, -1.55, "after the transpose no single stride merges (h, dₖ): reshape copies",
            fontsize=9, color="#111111")
    fig.tight_layout()
    return fig


def where_positions_enter(n_positions: int = 6, d: int = 8, n_heads: int = 2) -> Figure:
    """Three ways position reaches attention, drawn side by side with their real shapes:
    a ``(T, d)`` table added to the embeddings once (sinusoidal, learned); a rotation of every
    head's ``(T, d_k)`` queries and keys inside every layer (RoPE); a ``(h, T, T)`` bias added to
    every head's scores inside every layer (T5, ALiBi)."""
    from tformer.positions import alibi_bias, apply_rope, sinusoidal_positions

    d_k = d // n_heads
    table = sinusoidal_positions(n_positions, d)
    rotated = apply_rope(torch.ones(n_heads, n_positions, d_k))
    bias = alibi_bias(n_heads, n_positions)
    panels = [
        ("added to the embeddings, once", f"X + P,  P: {tuple(table.shape)}",
         "sinusoidal, learned", ["tokens", "+ P", "layer 1", "layer 2"], 1),
        ("rotates q and k of every head, in every layer",
         f"RoPE(Q_i), RoPE(K_i): {tuple(rotated.shape[1:])} per head", "RoPE",
         ["tokens", "layer 1: rotate q, k", "layer 2: rotate q, k", "…"], 1),
        ("added to every head's scores, in every layer",
         f"S + bias,  bias: {tuple(bias.shape)}", "T5 relative biases, ALiBi",
         ["tokens", "layer 1: S + bias", "layer 2: S + bias", "…"], 1),
    ]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.8))
    for ax, (title, shape, examples, boxes, _), colour in zip(axes, panels, CYCLE):
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.axis("off")
        ax.set_title(title, fontsize=10.5, color="#111111")
        for k, label in enumerate(boxes):
            y = 0.08 + k * 0.19
            marked = ("P" in label and k == 1) or "rotate" in label or "bias" in label
            ax.add_patch(FancyBboxPatch((0.15, y), 0.7, 0.13, boxstyle="round,pad=0.01",
                                        facecolor=colour if marked else "#f2f2f2",
                                        edgecolor="#444444", alpha=0.9 if marked else 1))
            ax.text(0.5, y + 0.065, label, ha="center", va="center", fontsize=9,
                    color="white" if marked else "#111111")
        ax.text(0.5, 0.9, shape, ha="center", fontsize=8.5, color="#111111")
        ax.text(0.5, 0.84, examples, ha="center", fontsize=8.5, style="italic", color="#333333")
    fig.tight_layout()
    return fig


def _panel_box(ax, x, y, w, h, text, colour, *, fontsize=9):
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.02",
                                facecolor=colour, edgecolor="black", lw=0.8, alpha=0.9))
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize)


def _labelled_arrow(ax, start, end, *, colour="black", text=None, style="-|>"):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle=style, mutation_scale=10, lw=1.0,
                                 color=colour, shrinkA=2, shrinkB=2))
    if text:
        ax.text((start[0] + end[0]) / 2 + 0.05, (start[1] + end[1]) / 2, text, fontsize=8,
                color=colour, va="center")


def _shape_text(shape: Sequence[int]) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ")"


def encoder_decoder_diagram(shapes: dict[str, Sequence[int]], n_layers: int) -> Figure:
    """The encoder–decoder's data flow with the shapes of one forward pass.

    ``shapes`` keys: ``source``, ``source_embedded``, ``memory``, ``target_in``,
    ``target_embedded``, ``cross_weights`` (one layer's ``(B, h, T_tgt, T_src)``), ``logits``.
    """
    fig, ax = plt.subplots(figsize=(9.6, 5.6))
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 10)
    ax.axis("off")
    enc, dec = PALETTE["sky"], PALETTE["orange"]
    # encoder column (left), data flows upwards
    _panel_box(ax, 2.2, 0.8, 3.2, 0.8, f"source tokens {_shape_text(shapes['source'])}", "white")
    _panel_box(ax, 2.2, 2.3, 3.2, 0.8, f"embedding ·√d + positions\n{_shape_text(shapes['source_embedded'])}",
         "white")
    _panel_box(ax, 2.2, 4.5, 3.2, 1.6, f"encoder layer × {n_layers}\nself-attention (no mask)\n+ MLP",
         enc)
    _panel_box(ax, 2.2, 6.9, 3.2, 0.9, f"memory C {_shape_text(shapes['memory'])}\n(final encoder output)",
         enc)
    _labelled_arrow(ax, (2.2, 1.2), (2.2, 1.9))
    _labelled_arrow(ax, (2.2, 2.7), (2.2, 3.7))
    _labelled_arrow(ax, (2.2, 5.3), (2.2, 6.45))
    # decoder column (right)
    _panel_box(ax, 7.6, 0.8, 3.4, 0.8, f"target_in (BOS + shifted) {_shape_text(shapes['target_in'])}",
         "white")
    _panel_box(ax, 7.6, 2.3, 3.4, 0.8, f"embedding ·√d + positions\n{_shape_text(shapes['target_embedded'])}",
         "white")
    _panel_box(ax, 7.6, 3.65, 3.4, 0.7, "causal self-attention", dec)
    _panel_box(ax, 7.6, 4.75, 3.4, 0.9,
         f"cross-attention: Q from decoder,\nK, V from C; A {_shape_text(shapes['cross_weights'])}",
         dec)
    _panel_box(ax, 7.6, 5.85, 3.4, 0.6, "MLP", dec)
    ax.add_patch(Rectangle((5.7, 3.15), 3.8, 3.15, fill=False, ls="--", lw=0.8))
    ax.text(9.55, 6.2, f"× {n_layers}", fontsize=9, ha="left")
    _panel_box(ax, 7.6, 7.5, 3.4, 0.8, f"unembedding W_U (tied)\nlogits {_shape_text(shapes['logits'])}",
         "white")
    _panel_box(ax, 7.6, 9.0, 3.4, 0.7, "softmax → next-token distribution", "white")
    _labelled_arrow(ax, (7.6, 1.2), (7.6, 1.9))
    _labelled_arrow(ax, (7.6, 2.7), (7.6, 3.3))
    _labelled_arrow(ax, (7.6, 4.0), (7.6, 4.3))
    _labelled_arrow(ax, (7.6, 5.2), (7.6, 5.55))
    _labelled_arrow(ax, (7.6, 6.15), (7.6, 7.1))
    _labelled_arrow(ax, (7.6, 7.9), (7.6, 8.65))
    # memory → every decoder layer's cross-attention
    _labelled_arrow(ax, (3.8, 6.9), (5.9, 4.85), colour=PALETTE["blue"])
    ax.text(3.2, 5.2, "the same C to\nevery decoder layer\n(keys and values)", fontsize=8,
            color=PALETTE["blue"])
    fig.tight_layout()
    return fig


def kv_cache_diagram(
    n_layers: int, n_heads: int, n_cached: int, d_k: int, d: int, *, show: int = 8
) -> Figure:
    """What a KV cache holds at one decoding step, per layer: ``(B, h, T, d_k)`` keys and values.

    The step computes the query, key and value of the one new position (``(1, d)`` per layer),
    appends the key and value as column ``T + 1`` and lets the query read all ``T + 1``.
    """
    fig, ax = plt.subplots(figsize=(9.6, 3.6))
    ax.set_xlim(0, 12)
    ax.set_ylim(0, 5)
    ax.axis("off")
    cells = min(show, n_cached)
    for row, (name, colour) in enumerate([("keys", PALETTE["sky"]), ("values", PALETTE["green"])]):
        y = 3.0 - 1.6 * row
        ax.text(0.1, y + 0.35, f"cached {name}\n(B, h = {n_heads}, T = {n_cached}, dₖ = {d_k})",
                fontsize=9, va="center")
        for i in range(cells):
            ax.add_patch(Rectangle((3.3 + 0.75 * i, y), 0.7, 0.7, facecolor=colour,
                                   edgecolor="black", lw=0.6, alpha=0.6))
        if n_cached > cells:
            ax.text(3.3 + 0.75 * cells + 0.05, y + 0.35, "…", fontsize=12, va="center")
        x_new = 3.3 + 0.75 * cells + 0.5
        ax.add_patch(Rectangle((x_new, y), 0.7, 0.7, facecolor=PALETTE["vermillion"],
                               edgecolor="black", lw=0.8))
        ax.text(x_new + 0.35, y - 0.22, "new", fontsize=8, ha="center", va="top")
        _labelled_arrow(ax, (x_new + 2.2, y + 0.35), (x_new + 0.8, y + 0.35), text=None)
    x_q = 3.3 + 0.75 * cells + 2.9
    _panel_box(ax, x_q + 1.2, 2.55, 2.5, 2.6,
         f"one new token\nx (1, d = {d})\n→ q, k, v\n(1, h, 1, d_k)\nper layer", "white")
    ax.text(3.3, 4.55, f"stored per layer, for each of the {n_layers} layers; "
            f"reused, never recomputed", fontsize=9)
    ax.text(3.3, 0.35, f"the query reads all T + 1 = {n_cached + 1} keys: "
            f"≈ 2·(T + 1)·d multiply-adds per layer, growing with T", fontsize=9)
    fig.tight_layout()
    return fig


def beam_search_diagram(trace: list, label, *, max_steps: int | None = None) -> Figure:
    """The hypotheses beam search keeps at each step (rows, top to bottom), best first (columns).

    ``trace`` is the list :func:`tformer.generation.beam_search` fills; ``label(tokens)`` turns a
    hypothesis's new tokens into text. Finished hypotheses (they emitted the end token) are
    drawn in orange; each cell shows the text and its log-probability.
    """
    steps = trace[:max_steps] if max_steps else trace
    width = max(len(step) for step in steps)
    fig, ax = plt.subplots(figsize=(1.55 * width + 0.9, 0.5 * len(steps) + 0.8))
    ax.set_xlim(-0.5, width - 0.5)
    ax.set_ylim(len(steps) - 0.5, -0.5)
    for row, step in enumerate(steps):
        for col, (tokens, log_p, finished) in enumerate(step):
            colour = PALETTE["orange"] if finished else PALETTE["sky"]
            ax.add_patch(Rectangle((col - 0.47, row - 0.43), 0.94, 0.86, facecolor=colour,
                                   alpha=0.55, edgecolor="black", lw=0.5))
            ax.text(col, row, f"{label(tokens)}  {log_p:.2f}", ha="center", va="center",
                    fontsize=8.5, family="monospace")
    ax.set_yticks(range(len(steps)), [str(i + 1) for i in range(len(steps))])
    ax.set_xticks([])
    ax.set_ylabel("step (tokens generated)")
    ax.set_xlabel("candidates kept or finished at that step, best first")
    for side in ("bottom", "right", "top"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    return fig
