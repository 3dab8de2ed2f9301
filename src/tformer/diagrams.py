"""Diagrams of the book's computations, drawn from real tensor shapes (GUIDE §8).

Each function builds the tensors it describes, reads their shapes and strides, and draws them,
so a label can never disagree with the code. Figures use :mod:`tformer.plots`' palette on a white
background (readable in the dark theme too).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from tformer.plots import CYCLE, PALETTE


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
        ("Q = x W_Q", x, "(B, T, d)", None),
        (".view", viewed, "(B, T, h, d_k)", viewed.data_ptr() == x.data_ptr()),
        (".transpose(1, 2)", heads, "(B, h, T, d_k)", heads.data_ptr() == x.data_ptr()),
        ("B·h attentions", attended, "(B, h, T, d_k)", False),
        (".transpose(1, 2)", back, "(B, T, h, d_k)", back.data_ptr() == attended.data_ptr()),
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
    ax.text(0.1, -1.55, f"one token's d = {d} features: h = {n_heads} blocks of d_k = {d_k}",
            fontsize=9, color="#111111")
    ax.text(4.1, -1.2, "each head is one (T, d_k) slice; one batched @ computes all B·h of them",
            fontsize=9, color="#111111")
    ax.text(4.1, -1.55, "after the transpose no single stride merges (h, d_k): reshape copies",
            fontsize=9, color="#111111")
    fig.tight_layout()
    return fig
