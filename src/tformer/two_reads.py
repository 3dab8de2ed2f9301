"""Chapter 7's task that one head cannot do: read two positions and output their difference.

Each sequence holds ``T`` random digits ``0 … n_digits - 1``. At every position ``t ≥ 2`` the
target is ``x[t-1] - x[t-2]`` (shifted by ``n_digits - 1`` so that classes are ``0 … 2·n_digits - 2``).
The model is one causal attention layer with rotary positions and a linear readout, no MLP
(:meth:`tformer.model.GPTConfig.attention_only` with one layer): the values carry the digits only,
in the *same* coordinates for both positions, so one head's output is one weighted mixture
``w₁ v(x[t-1]) + w₂ v(x[t-2]) + …`` — and a single mixture cannot be read out as a difference.

* :func:`difference_batch` — inputs ``(B, T)`` and targets ``(B, T)`` (``-100`` = no target).
* :func:`make_model`, :func:`train_model` — equal width ``d`` for every number of heads, trained
  through :func:`tformer.training.train`.
* :func:`accuracy`, :func:`offset_weights` — how well it does, and where each head looks.
* :func:`weights_by_pair` — where each head looks, for each pair of digits it reads: a head whose
  weights depend on the digits shows it here, not in the mean of :func:`offset_weights`.
* :func:`position_only_accuracy` — an intervention: every head's weights replaced by their mean
  over the held-out sequences (attention by position only, the case the one-head proof covers).
"""

from __future__ import annotations

import torch

from tformer.model import GPT, GPTConfig
from tformer.multihead import split_heads
from tformer.training import TrainingLog, train

N_DIGITS, N_POSITIONS, D, BATCH, STEPS, LR = 4, 8, 32, 64, 1200, 3e-2


def difference_batch(
    batch_size: int = BATCH,
    *,
    n_digits: int = N_DIGITS,
    n_positions: int = N_POSITIONS,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Random digits ``(B, T)`` and targets ``x[t-1] - x[t-2] + n_digits - 1`` (``-100`` at t < 2)."""
    if n_positions < 3 or n_digits < 2:
        raise ValueError(f"need n_positions ≥ 3 and n_digits ≥ 2, got {n_positions}, {n_digits}")
    x = torch.randint(0, n_digits, (batch_size, n_positions), generator=generator)
    targets = torch.full_like(x, -100)
    targets[:, 2:] = x[:, 1:-1] - x[:, :-2] + n_digits - 1
    return x, targets


def make_model(n_heads: int, *, seed: int = 0, d: int = D, n_digits: int = N_DIGITS) -> GPT:
    """One attention-only layer of width ``d`` with ``n_heads`` heads (``d_k = d / n_heads``)."""
    torch.manual_seed(seed)
    config = GPTConfig.attention_only(
        2 * n_digits, d=d, n_layers=1, n_heads=n_heads, n_ctx=N_POSITIONS, tie_weights=False
    )
    return GPT(config)


def train_model(
    model: GPT, *, seed: int = 0, steps: int = STEPS, lr: float = LR
) -> TrainingLog:
    """Train on a stream of :func:`difference_batch` drawn from ``seed``; one CPU thread."""
    n_digits = model.config.n_vocab // 2
    generator = torch.Generator().manual_seed(1000 + seed)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return train(
            model, lambda: difference_batch(n_digits=n_digits, generator=generator), steps, lr=lr
        )
    finally:
        torch.set_num_threads(threads)


def test_batch(n: int = 512, n_digits: int = N_DIGITS) -> tuple[torch.Tensor, torch.Tensor]:
    """A fixed held-out batch (its own seed, never used for training)."""
    return difference_batch(n, n_digits=n_digits, generator=torch.Generator().manual_seed(999))


@torch.no_grad()
def accuracy(model: GPT) -> float:
    """Fraction of positions ``t ≥ 2`` of :func:`test_batch` whose difference is right."""
    x, targets = test_batch(n_digits=model.config.n_vocab // 2)
    predictions = model(x).argmax(-1)
    return float((predictions[:, 2:] == targets[:, 2:]).float().mean())


@torch.no_grad()
def offset_weights(model: GPT) -> torch.Tensor:
    """``(h, 2)``: each head's mean attention weight on positions ``t - 1`` and ``t - 2``."""
    x, _ = test_batch(n_digits=model.config.n_vocab // 2)
    attn = model.blocks[0].attn
    attn.record = True
    try:
        model(x)
        weights = attn.last_weights  # (B, h, T, T)
    finally:
        attn.record = False
    t = torch.arange(2, x.shape[1])
    return torch.stack([weights[:, :, t, t - 1], weights[:, :, t, t - 2]], -1).mean((0, 2))


@torch.no_grad()
def _test_weights(model: GPT, x: torch.Tensor) -> torch.Tensor:
    """The attention weights ``(B, h, T, T)`` of the model's one layer on ``x``."""
    attn = model.blocks[0].attn
    previous, attn.record = attn.record, True
    try:
        model(x)
        return attn.last_weights
    finally:
        attn.record = previous


@torch.no_grad()
def weights_by_pair(model: GPT) -> torch.Tensor:
    """``(h, 2, n, n)``: each head's mean weight on ``t - 1`` (``[:, 0]``) and ``t - 2`` (``[:, 1]``).

    Averaged over the positions ``t ≥ 2`` of :func:`test_batch` whose digits are
    ``x[t-1] = a`` (row ``a``) and ``x[t-2] = b`` (column ``b``), for the ``n = n_digits`` digits.
    """
    n = model.config.n_vocab // 2
    x, _ = test_batch(n_digits=n)
    weights = _test_weights(model, x)
    t = torch.arange(2, x.shape[1])
    near = weights[:, :, t, t - 1].transpose(0, 1).reshape(weights.shape[1], -1)  # (h, B*T')
    far = weights[:, :, t, t - 2].transpose(0, 1).reshape(weights.shape[1], -1)
    pair = (x[:, 1:-1] * n + x[:, :-2]).reshape(-1)  # a * n + b, (B*T',)
    counts = torch.bincount(pair, minlength=n * n)
    if (counts == 0).any():
        raise ValueError("the test batch misses a pair of digits; use more sequences")
    result = torch.zeros(weights.shape[1], 2, n * n)
    for k, w in enumerate((near, far)):
        result[:, k].index_add_(1, pair, w)
    return (result / counts).reshape(weights.shape[1], 2, n, n)


@torch.no_grad()
def position_only_accuracy(model: GPT) -> float:
    """:func:`accuracy` with every head's weights fixed at their mean over the test sequences.

    Each head then attends by position only — weight ``mean_b A[b, i, t, s]`` from query ``t`` to
    key ``s``, whatever the digits — while values, ``W_O`` and the readout stay the model's. A
    solution that works by fixed offsets keeps most of its accuracy; one whose heads choose by
    content falls to about the accuracy of always answering 0.
    """
    x, targets = test_batch(n_digits=model.config.n_vocab // 2)
    block = model.blocks[0]
    attn = block.attn
    fixed = _test_weights(model, x).mean(0)  # (h, T, T)
    values = split_heads(attn.W_V(block.ln1(model.embed(x))), attn.n_heads)  # (B, h, T, d_k)
    previous = attn.head_hook
    attn.head_hook = lambda heads: fixed @ values
    try:
        predictions = model(x).argmax(-1)
    finally:
        attn.head_hook = previous
    return float((predictions[:, 2:] == targets[:, 2:]).float().mean())
