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
