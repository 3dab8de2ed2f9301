"""Training helpers: the original Transformer's learning-rate schedule, the next-token loss and a
small training loop (chapter 10; the induction lab reuses the loop).

* :func:`transformer_lr` — ``d**-0.5 · min(step**-0.5, step · warmup**-1.5)``: linear warm-up
  for ``warmup`` steps, then decay as the inverse square root of the step
  (Vaswani et al., 2017, eq. 3; they used ``d = 512``, ``warmup = 4000`` with Adam
  β₁ = 0.9, β₂ = 0.98, ε = 1e-9).
* :func:`next_token_loss` — mean cross-entropy of ``(B, T, n_vocab)`` logits against
  ``(B, T)`` targets, with optional label smoothing.
* :func:`train` — a plain loop: batches in, per-step losses out.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import nn
from torch.nn import functional as F


def transformer_lr(step: int, d: int = 512, warmup: int = 4000) -> float:
    """Learning rate at ``step`` (counted from 1) of the original Transformer's schedule.

    Rises linearly to its peak ``(d · warmup)**-0.5`` at ``step == warmup``, then falls as
    ``(d · step)**-0.5``.
    """
    if step < 1:
        raise ValueError(f"step counts from 1, got {step}")
    if d < 1 or warmup < 1:
        raise ValueError(f"d and warmup must be positive, got d={d}, warmup={warmup}")
    return d**-0.5 * min(step**-0.5, step * warmup**-1.5)


def next_token_loss(
    logits: torch.Tensor, targets: torch.Tensor, *, label_smoothing: float = 0.0
) -> torch.Tensor:
    """Mean cross-entropy over every position: ``logits`` (B, T, n_vocab), ``targets`` (B, T).

    With ``label_smoothing = ε`` the target distribution puts ``1 - ε`` on the right token and
    spreads ``ε`` uniformly over all ``n_vocab`` tokens (the convention of
    ``torch.nn.functional.cross_entropy``).
    """
    if logits.ndim != 3 or targets.shape != logits.shape[:2]:
        raise ValueError(
            f"logits must be (B, T, n_vocab) and targets (B, T); got {tuple(logits.shape)} "
            f"and {tuple(targets.shape)}"
        )
    if not 0.0 <= label_smoothing < 1.0:
        raise ValueError(f"label_smoothing must lie in [0, 1), got {label_smoothing}")
    return F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), label_smoothing=label_smoothing
    )


@dataclass
class TrainingLog:
    """What :func:`train` returns: per-step ``losses``, ``learning_rates`` and wall ``seconds``."""

    losses: list[float] = field(default_factory=list)
    learning_rates: list[float] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def final_loss(self) -> float:
        """Mean of the last (up to) 20 step losses — less noisy than the very last one."""
        tail = self.losses[-20:]
        return sum(tail) / len(tail)


def train(
    model: nn.Module,
    get_batch: Callable[[], tuple[torch.Tensor, torch.Tensor]],
    n_steps: int,
    *,
    lr: float = 3e-3,
    warmup: int = 0,
    betas: tuple[float, float] = (0.9, 0.98),
    weight_decay: float = 0.0,
    label_smoothing: float = 0.0,
    grad_clip: float | None = 1.0,
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None = None,
) -> TrainingLog:
    """Train ``model`` (tokens (B, T) → logits (B, T, n_vocab)) for ``n_steps`` AdamW steps.

    ``get_batch()`` returns ``(inputs, targets)``, both (B, T) long; ``inputs`` may also be a
    tuple of tensors, passed as ``model(*inputs)`` (an encoder–decoder's ``(source, target_in)``,
    :mod:`tformer.encoder_decoder`). The learning rate warms up
    linearly over ``warmup`` steps, then follows a cosine decay to 10 % of ``lr`` (a short-run
    schedule; :func:`transformer_lr` is the original paper's long-run one). ``loss_fn`` defaults
    to :func:`next_token_loss`.
    """
    if n_steps < 1:
        raise ValueError(f"n_steps must be at least 1, got {n_steps}")
    loss_fn = loss_fn or (
        lambda logits, targets: next_token_loss(logits, targets, label_smoothing=label_smoothing)
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, betas=betas, weight_decay=weight_decay)
    log = TrainingLog()
    model.train()
    parameter = next(model.parameters(), None)
    device = parameter.device if parameter is not None else torch.device("cpu")
    start = time.perf_counter()
    for step in range(n_steps):
        if warmup and step < warmup:
            rate = lr * (step + 1) / warmup
        else:
            progress = (step - warmup) / max(1, n_steps - warmup)
            rate = lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))
        for group in optimizer.param_groups:
            group["lr"] = rate
        inputs, targets = get_batch()
        if isinstance(inputs, tuple):  # e.g. (source, target) of an encoder-decoder
            inputs = tuple(part.to(device) for part in inputs)  # batches may come from the CPU
            logits = model(*inputs)
        else:
            inputs = inputs.to(device)
            logits = model(inputs)
        loss = loss_fn(logits, targets.to(device))
        if not torch.isfinite(loss):
            raise FloatingPointError(f"loss became {loss.item()} at step {step}; lower lr")
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if grad_clip is not None:
            nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()
        log.losses.append(loss.item())
        log.learning_rates.append(rate)
    log.seconds = time.perf_counter() - start
    model.eval()
    return log


def masked_lm_inputs(
    tokens: torch.Tensor,
    *,
    mask_id: int,
    n_vocab: int,
    rate: float = 0.15,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """BERT's masked-language-model corruption of ``tokens`` (any shape, integer ids).

    Each position is chosen with probability ``rate``; a chosen token becomes ``mask_id`` with
    probability 0.8, a uniformly random token with probability 0.1, and stays unchanged with
    probability 0.1 (Devlin et al., 2019). Returns ``(inputs, targets, chosen)``: the corrupted
    ids, the targets (the original id at chosen positions, ``-100`` — ignored by
    ``cross_entropy`` — elsewhere) and the boolean mask of chosen positions.
    """
    if not 0.0 < rate < 1.0:
        raise ValueError(f"rate must lie in (0, 1), got {rate}")
    tokens = torch.as_tensor(tokens)
    # Drawn on the generator's device (the CPU by default), so a seed gives the same corruption
    # on every device; then moved to the tokens' device.
    draws = torch.rand((3, *tokens.shape), generator=generator).to(tokens.device)
    chosen = draws[0] < rate
    inputs = tokens.clone()
    to_mask = chosen & (draws[1] < 0.8)
    to_random = chosen & (draws[1] >= 0.8) & (draws[1] < 0.9)
    random_ids = (draws[2] * n_vocab).long().clamp(max=n_vocab - 1)
    inputs[to_mask] = mask_id
    inputs[to_random] = random_ids[to_random]
    targets = torch.where(chosen, tokens, torch.full_like(tokens, -100))
    return inputs, targets, chosen


def layer_gradient_norms(blocks) -> list[float]:
    """The norm of the gradient of each block's weight matrices, after a ``backward()``.

    ``blocks``: an iterable of modules (e.g. a GPT's ``blocks``). For every block, the square root
    of the sum of squared gradient entries over its 2-D parameters (LayerNorm's ``γ``, ``β`` and the
    biases are left out). A block whose matrices have no gradient counts as 0.
    """
    norms = []
    for block in blocks:
        squares = [
            float((p.grad.double() ** 2).sum())
            for p in block.parameters()
            if p.ndim == 2 and p.grad is not None
        ]
        norms.append(math.sqrt(sum(squares)))
    return norms
