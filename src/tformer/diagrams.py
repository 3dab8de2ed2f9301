"""Diagrams of the computation, drawn from real tensor shapes.

Every box of a diagram is labelled with the shape of the tensor it stands for, read from the
tensors themselves, so a label can never disagree with the code. Figures use the book's style
(:mod:`tformer.plots`): opaque white background, readable in the theme's dark mode.

* :func:`head_dataflow` — one attention head, ``X → Q, K, V → S → A → O``, with shapes.
* :func:`layer_dataflow` — a self-attention layer written as matrices, biases included.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from tformer.plots import PALETTE

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
        f"T_q = {scores.shape[-2]} queries, T_k = {scores.shape[-1]} keys, "
        f"d = {x.shape[-1]}, d_k = {queries.shape[-1]}, d_v = {values.shape[-1]}",
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
        _box(ax, 3.6, y, f"{name} = X W_{name} + 1 b_{name}ᵀ", _shape((length, width)),
             "projection", width=2.6)
        _arrow(ax, (1.55, 0.0), (2.3, y))
        ax.text(3.6, y + 0.5, f"W_{name}: {d} × {width},  b_{name}: {width}", ha="center",
                va="bottom", fontsize=8.5, color=PALETTE["blue"])
    _box(ax, 6.5, 0.7, "S = QKᵀ/√d_k", _shape((length, length)), "score", width=2.0)
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
        f"T = {length}, d = {d}, d_k = {d_k}, d_v = {d_v}: {n_parameters:,} parameters, "
        "no shape with T among them",
        ha="center", va="bottom", fontsize=9.5, color="#333333",
    )
    fig.tight_layout()
    return fig
