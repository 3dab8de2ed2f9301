"""Diagrams of the computation, drawn by code from real tensor shapes (GUIDE §8).

Each function takes the shapes a chapter's model actually produced, so a label can never
disagree with the tensors, and returns a matplotlib figure on the book's white background.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

from tformer.plots import PALETTE


def _box(ax, x, y, w, h, text, colour, *, fontsize=9):
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.02",
                                facecolor=colour, edgecolor="black", lw=0.8, alpha=0.9))
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize)


def _arrow(ax, start, end, *, colour="black", text=None, style="-|>"):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle=style, mutation_scale=10, lw=1.0,
                                 color=colour, shrinkA=2, shrinkB=2))
    if text:
        ax.text((start[0] + end[0]) / 2 + 0.05, (start[1] + end[1]) / 2, text, fontsize=8,
                color=colour, va="center")


def _shape(shape: Sequence[int]) -> str:
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
    _box(ax, 2.2, 0.8, 3.2, 0.8, f"source tokens {_shape(shapes['source'])}", "white")
    _box(ax, 2.2, 2.3, 3.2, 0.8, f"embedding ·√d + positions\n{_shape(shapes['source_embedded'])}",
         "white")
    _box(ax, 2.2, 4.5, 3.2, 1.6, f"encoder layer × {n_layers}\nself-attention (no mask)\n+ MLP",
         enc)
    _box(ax, 2.2, 6.9, 3.2, 0.9, f"memory C {_shape(shapes['memory'])}\n(final encoder output)",
         enc)
    _arrow(ax, (2.2, 1.2), (2.2, 1.9))
    _arrow(ax, (2.2, 2.7), (2.2, 3.7))
    _arrow(ax, (2.2, 5.3), (2.2, 6.45))
    # decoder column (right)
    _box(ax, 7.6, 0.8, 3.4, 0.8, f"target_in (BOS + shifted) {_shape(shapes['target_in'])}",
         "white")
    _box(ax, 7.6, 2.3, 3.4, 0.8, f"embedding ·√d + positions\n{_shape(shapes['target_embedded'])}",
         "white")
    _box(ax, 7.6, 3.65, 3.4, 0.7, "causal self-attention", dec)
    _box(ax, 7.6, 4.75, 3.4, 0.9,
         f"cross-attention: Q from decoder,\nK, V from C; A {_shape(shapes['cross_weights'])}",
         dec)
    _box(ax, 7.6, 5.85, 3.4, 0.6, "MLP", dec)
    ax.add_patch(Rectangle((5.7, 3.15), 3.8, 3.15, fill=False, ls="--", lw=0.8))
    ax.text(9.55, 6.2, f"× {n_layers}", fontsize=9, ha="left")
    _box(ax, 7.6, 7.5, 3.4, 0.8, f"unembedding W_U (tied)\nlogits {_shape(shapes['logits'])}",
         "white")
    _box(ax, 7.6, 9.0, 3.4, 0.7, "softmax → next-token distribution", "white")
    _arrow(ax, (7.6, 1.2), (7.6, 1.9))
    _arrow(ax, (7.6, 2.7), (7.6, 3.3))
    _arrow(ax, (7.6, 4.0), (7.6, 4.3))
    _arrow(ax, (7.6, 5.2), (7.6, 5.55))
    _arrow(ax, (7.6, 6.15), (7.6, 7.1))
    _arrow(ax, (7.6, 7.9), (7.6, 8.65))
    # memory → every decoder layer's cross-attention
    _arrow(ax, (3.8, 6.9), (5.9, 4.85), colour=PALETTE["blue"])
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
        ax.text(0.1, y + 0.35, f"cached {name}\n(B, h = {n_heads}, T = {n_cached}, d_k = {d_k})",
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
        _arrow(ax, (x_new + 2.2, y + 0.35), (x_new + 0.8, y + 0.35), text=None)
    x_q = 3.3 + 0.75 * cells + 2.9
    _box(ax, x_q + 1.2, 2.55, 2.5, 2.6,
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
