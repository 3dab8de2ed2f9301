"""Training a small GPT on real text with and without the 1/√d_k division (chapter 4).

The model is the book's :class:`tformer.model.GPT` (pre-norm, learned positions), made small
enough to train in a few seconds on a CPU: one attention-only layer (no MLP) with one head of
width ``d_k = d = 64``, characters of the Python Language Reference
(:func:`tformer.data.load_python_docs`) as tokens, 100 steps.
Four runs differ in two switches only:

* ``init="gpt"`` keeps the book's initialisation, every weight ``N(0, 0.02²)``;
  ``init="xavier"`` redraws every weight matrix of the blocks Xavier-style
  (:func:`xavier_init`, variance ``2 / (fan_in + fan_out)``, ``1/d`` for a square matrix), which
  gives unit-variance queries and keys after the LayerNorm;
* ``scaled=False`` removes the division (:func:`remove_scaling`).

Within one seed all four runs see the same batches, and the two runs of one init start from the
same weights, so the curves differ only by the switches (and floating-point rounding).

* :func:`build_model` — the model of one run, before training.
* :func:`top_weight` — the mean largest attention weight of the last query of each window.
* :func:`train_run` — train one run; returns a :class:`ScaleRun` (losses, top weights).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch
from torch import nn

from tformer.model import GPT, GPTConfig
from tformer.training import train

Init = Literal["gpt", "xavier"]

D, N_HEADS, N_LAYERS, N_CTX = 64, 1, 1, 64
BATCH, N_STEPS, LR = 16, 100, 3e-3
MLP = False  # attention-only: the head is the only way to use context


def xavier_init(model: GPT) -> GPT:
    """Redraw every ``nn.Linear`` weight inside ``model.blocks`` from Xavier's normal law.

    Variance ``2 / (fan_in + fan_out)`` (Glorot & Bengio, 2010): ``1/d`` for the square
    ``W_Q``, ``W_K``, ``W_V``, ``W_O``, so a LayerNorm output with unit-variance entries gives
    queries and keys with unit-variance entries. Embeddings and biases are left as they are.
    Returns ``model`` (changed in place).
    """
    with torch.no_grad():
        for block in model.blocks:
            for module in block.modules():
                if isinstance(module, nn.Linear):
                    nn.init.xavier_normal_(module.weight)
    return model


def remove_scaling(model: GPT) -> GPT:
    """Make every head of ``model`` use unscaled scores ``q·k`` instead of ``q·k/√d_k``.

    A forward hook multiplies the output of each ``W_Q`` by ``√d_k``; the layer then divides
    by ``√d_k`` as usual, so the softmax sees ``(√d_k q)·k/√d_k = q·k``. The parameters, their
    initial values and the function they compute are those of an unscaled layer (the gradient
    flows through the same product). Returns ``model`` (changed in place).
    """
    for block in model.blocks:
        gain = math.sqrt(block.attn.d_k)
        block.attn.W_Q.register_forward_hook(lambda _m, _i, out, g=gain: out * g)
    return model


def build_model(n_vocab: int, *, scaled: bool, init: Init, seed: int) -> GPT:
    """The untrained model of one run: ``torch.manual_seed(seed)``, then the switches."""
    if init not in ("gpt", "xavier"):
        raise ValueError(f"init must be 'gpt' or 'xavier', got {init!r}")
    torch.manual_seed(seed)
    config = GPTConfig.tiny(
        n_vocab, n_ctx=N_CTX, d=D, n_heads=N_HEADS, n_layers=N_LAYERS, mlp=MLP
    )
    model = GPT(config)
    if init == "xavier":
        xavier_init(model)
    if not scaled:
        remove_scaling(model)
    return model


@torch.no_grad()
def top_weight(model: GPT, inputs: torch.Tensor) -> float:
    """Mean, over the windows ``inputs (B, T)`` and the heads of the first layer, of the largest
    attention weight of the last query (which sees all ``T`` keys)."""
    attn = model.blocks[0].attn
    attn.record = True
    try:
        model(inputs)
        weights = attn.last_weights  # (B, h, T, T)
    finally:
        attn.record = False
    return weights[:, :, -1, :].amax(dim=-1).mean().item()


@dataclass
class ScaleRun:
    """One training run: per-step ``losses`` and the mean largest weight of the last query on a
    fixed held-out batch before (``top_before``) and after (``top_after``) training."""

    losses: list[float]
    top_before: float
    top_after: float

    def mean_loss(self, start: int, stop: int) -> float:
        """Mean training loss over steps ``start ≤ step < stop``."""
        window = self.losses[start:stop]
        if not window:
            raise ValueError(f"no steps in [{start}, {stop}) of {len(self.losses)}")
        return sum(window) / len(window)


def train_run(
    data: torch.Tensor,
    n_vocab: int,
    *,
    scaled: bool,
    init: Init,
    seed: int,
    n_steps: int = N_STEPS,
) -> ScaleRun:
    """Train one run on ``data`` (1-D character ids) for ``n_steps`` steps of
    :func:`tformer.training.train` (AdamW, lr ``3e-3``, cosine decay, gradient clipping at 1),
    batches of 16 windows of 64 characters drawn with seed ``1000 + seed``."""
    from tformer.data.text import make_batch

    model = build_model(n_vocab, scaled=scaled, init=init, seed=seed)
    held_out = make_batch(data, 64, N_CTX, generator=torch.Generator().manual_seed(99))[0]
    before = top_weight(model, held_out)
    batches = torch.Generator().manual_seed(1000 + seed)
    log = train(model, lambda: make_batch(data, BATCH, N_CTX, generator=batches), n_steps, lr=LR)
    return ScaleRun(log.losses, before, top_weight(model, held_out))
