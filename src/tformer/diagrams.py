"""Diagrams of the computations the book performs, drawn from the real shapes of a model.

Every function takes the configuration (and the heads) a chapter actually uses and draws boxes,
arrows and labels from them, so a label can never disagree with the tensors. Figures use
:mod:`tformer.plots`' palette on an opaque white background (legible in dark mode too).

* :func:`induction_circuit` — previous-token head → K-composition → copying (chapter 12).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from tformer.plots import PALETTE


def _box(ax, x, y, text, colour, width=2.2, height=0.62, fontsize=8.5):
    ax.add_patch(FancyBboxPatch(
        (x - width / 2, y - height / 2), width, height, boxstyle="round,pad=0.04",
        facecolor="white", edgecolor=colour, lw=1.6,
    ))
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize, color="#222222")


def _arrow(ax, start, end, colour, rad=0.0, lw=2.0, style="-|>"):
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
        _box(ax, x, levels["embed"], f"$W_E$: token {token}\n$n_{{vocab}}$={n_vocab} → d={d}",
             "#555555")
    x_a, x_b, x_now = columns.values()
    blue, orange, green = PALETTE["blue"], PALETTE["orange"], PALETTE["green"]
    lp, hp = prev_head
    li, hi = ind_head
    # layer 0: the previous-token head at B attends to A and writes "previous token = A"
    _box(ax, x_b, levels["layer0"],
         f"L{lp} H{hp} previous-token head\nwrites \"previous token = A\"\n"
         f"(d={d} → $d_k$={d_k} → d)", orange, width=2.6, height=0.9)
    _arrow(ax, (x_a + 0.15, levels["embed"] + 0.35), (x_b - 1.3, levels["layer0"]), orange,
           rad=-0.2)
    ax.text(1.0, 1.05, "attends to t − 1", color=orange, fontsize=8.5, ha="center")
    # layer 1: the induction head at the current A; its key at B carries layer 0's write
    _box(ax, x_now, levels["layer1"],
         f"L{li} H{hi} induction head\nquery: \"I am A\" (from $W_E$)\n"
         f"$d_k$={d_k}", blue, width=2.6, height=0.9)
    _box(ax, x_b, levels["layer1"], "key at B:\n\"previous token = A\"", green, width=2.4,
         height=0.75)
    _arrow(ax, (x_b, levels["layer0"] + 0.48), (x_b, levels["layer1"] - 0.4), green)
    ax.text(x_b - 0.15, 2.45, "K-composition:\n$W_K$ reads\nlayer 0's output", color=green,
            fontsize=8.5, ha="right", va="center")
    _arrow(ax, (x_now - 1.32, levels["layer1"]), (x_b + 1.22, levels["layer1"]), blue,
           style="<|-", lw=2.2)
    ax.text((x_b + x_now) / 2 + 0.05, levels["layer1"] + 0.32, "query matches key:\nattend to B",
            color=blue, fontsize=8.5, ha="center")
    _arrow(ax, (x_b + 0.9, levels["layer1"] - 0.42), (x_now - 1.0, levels["layer1"] - 0.48),
           PALETTE["vermillion"], rad=0.25)
    ax.text((x_b + x_now) / 2 + 0.2, 2.2, "value at B: its OV circuit\ncopies \"B\" forward",
            color=PALETTE["vermillion"], fontsize=8.5, ha="center", va="top")
    _box(ax, x_now, levels["unembed"], f"$W_U$: d={d} → $n_{{vocab}}$={n_vocab}\nlogit of B rises",
         "#555555", width=2.6)
    _arrow(ax, (x_now, levels["layer1"] + 0.48), (x_now, levels["unembed"] - 0.33), stream)
    ax.text(-1.3, levels["layer0"], "layer 0", fontsize=9, ha="right", va="center", color="#444444")
    ax.text(-1.3, levels["layer1"], "layer 1", fontsize=9, ha="right", va="center", color="#444444")
    ax.set_xlim(-2.4, 9.2)
    ax.set_ylim(-1.1, 5.5)
    ax.axis("off")
    fig.tight_layout()
    return fig
