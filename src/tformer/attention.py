"""Scaled dot-product attention, the book's central computation.

Conventions (GUIDE §2): tokens are rows. ``queries`` has shape ``(..., T_q, d_k)``, ``keys``
``(..., T_k, d_k)`` and ``values`` ``(..., T_k, d_v)``; leading axes (batch, heads) broadcast.
Scores ``S = Q Kᵀ / √d_k`` have shape ``(..., T_q, T_k)``: one row per query, one column per key,
and the softmax runs along the key axis, so every row of the weights sums to 1.

A *mask* is either boolean (``True`` = this query may attend to this key, the convention of
``torch.nn.functional.scaled_dot_product_attention``) or additive (``0`` where allowed, ``-inf``
where not), broadcastable to ``(..., T_q, T_k)``; see :mod:`tformer.masks`.
"""

from __future__ import annotations

import math
from typing import Literal, NamedTuple

import torch
from torch import nn

from tformer._validate import Tensorish, as_float_tensor, check_ndim

FullyMasked = Literal["raise", "zero"]


class AttentionResult(NamedTuple):
    """What attention returns: ``outputs`` ``(..., T_q, d_v)`` and ``weights`` ``(..., T_q, T_k)``."""

    outputs: torch.Tensor
    weights: torch.Tensor


class _StableSoftmax(torch.autograd.Function):
    """Softmax with the row maximum subtracted; its backward is the softmax Jacobian applied to
    the incoming gradient, ``∂L/∂s = p ⊙ (g − Σ_j g_j p_j)`` (``J = diag(p) − p pᵀ``, chapter 4),
    which needs only the output ``p`` — no intermediate of the forward pass is kept."""

    @staticmethod
    def forward(ctx, scores: torch.Tensor, dim: int) -> torch.Tensor:  # noqa: ANN001
        row_max = scores.amax(dim=dim, keepdim=True)
        weights = torch.sub(scores, row_max).exp_()  # every entry ≤ 0: exp cannot overflow
        weights.div_(weights.sum(dim=dim, keepdim=True))
        ctx.save_for_backward(weights)
        ctx.dim = dim
        return weights

    @staticmethod
    def backward(ctx, grad_weights: torch.Tensor):  # noqa: ANN001
        (weights,) = ctx.saved_tensors
        weighted_mean = (grad_weights * weights).sum(dim=ctx.dim, keepdim=True)
        return weights * (grad_weights - weighted_mean), None


def softmax(scores: Tensorish, dim: int = -1) -> torch.Tensor:
    """Numerically stable softmax along ``dim`` (the key axis by default).

    The row maximum is subtracted before exponentiating, so scores of magnitude 1e4 neither
    overflow nor underflow to an all-zero row. A row whose scores are all ``-inf`` has no
    defined softmax; it raises ``ValueError`` instead of returning NaN. Differentiable: the
    backward pass applies the softmax Jacobian ``diag(p) − p pᵀ`` without forming it.
    """
    scores = as_float_tensor(scores, "scores")
    row_max = scores.detach().amax(dim=dim, keepdim=True)
    if torch.isneginf(row_max).any():
        raise ValueError(
            "softmax: a row of scores is entirely -inf (every key masked), so its weights are "
            "undefined; see tformer.masks.fully_masked_rows"
        )
    if torch.isnan(row_max).any():
        raise ValueError("softmax: scores contain NaN")
    return _StableSoftmax.apply(scores, dim)


def _scale_factor(scale: bool | float, d_k: int) -> float:
    if isinstance(scale, bool):
        return 1.0 / math.sqrt(d_k) if scale else 1.0
    if isinstance(scale, int | float):
        return float(scale)
    raise TypeError(f"scale must be True, False or a number, got {type(scale).__name__}")


def _validate_qkv(
    queries: Tensorish, keys: Tensorish, values: Tensorish
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    queries = as_float_tensor(queries, "queries")
    keys = as_float_tensor(keys, "keys")
    values = as_float_tensor(values, "values")
    check_ndim(queries, "queries", range(2, 9), "(..., T_q, d_k)")
    check_ndim(keys, "keys", range(2, 9), "(..., T_k, d_k)")
    check_ndim(values, "values", range(2, 9), "(..., T_k, d_v)")
    dtypes = {queries.dtype, keys.dtype, values.dtype}
    if len(dtypes) > 1:
        raise TypeError(
            "queries, keys and values must share one dtype, got "
            f"{queries.dtype}, {keys.dtype} and {values.dtype}"
        )
    if queries.shape[-1] != keys.shape[-1]:
        raise ValueError(
            "queries and keys must have the same last dimension d_k, got queries "
            f"{tuple(queries.shape)} and keys {tuple(keys.shape)}"
        )
    if keys.shape[-2] != values.shape[-2]:
        raise ValueError(
            "keys and values must have the same number of positions T_k (axis -2), got keys "
            f"{tuple(keys.shape)} and values {tuple(values.shape)}"
        )
    return queries, keys, values


def apply_mask(scores: torch.Tensor, mask: Tensorish | None) -> torch.Tensor:
    """Return ``scores`` ``(..., T_q, T_k)`` with ``mask`` applied (boolean or additive).

    Masked entries become ``-inf``. Raises ``ValueError`` when the mask cannot broadcast to the
    scores, naming both shapes.
    """
    if mask is None:
        return scores
    if not isinstance(mask, torch.Tensor):
        mask = torch.as_tensor(mask)
    try:
        torch.broadcast_shapes(mask.shape, scores.shape)
    except RuntimeError:
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} does not broadcast to the scores' shape "
            f"{tuple(scores.shape)} (batch, heads, queries, keys)"
        ) from None
    mask = mask.to(scores.device)
    if mask.dtype == torch.bool:
        return scores.masked_fill(~mask, float("-inf"))
    if mask.is_floating_point():
        return scores + mask.to(scores.dtype)
    raise TypeError(f"mask must be boolean or floating point (additive), got dtype {mask.dtype}")


def scaled_dot_product_attention(
    queries: Tensorish,
    keys: Tensorish,
    values: Tensorish,
    mask: Tensorish | None = None,
    *,
    scale: bool | float = True,
    fully_masked: FullyMasked = "raise",
) -> AttentionResult:
    """Attention ``softmax(Q Kᵀ / √d_k + mask) V``, returning outputs *and* weights.

    Args:
        queries: ``(..., T_q, d_k)``.
        keys: ``(..., T_k, d_k)``.
        values: ``(..., T_k, d_v)``.
        mask: boolean (``True`` = may attend) or additive, broadcastable to ``(..., T_q, T_k)``.
        scale: ``True`` divides scores by ``√d_k``; ``False`` leaves them unscaled; a number
            multiplies the scores by that number.
        fully_masked: what to do with a query row whose keys are all masked. ``"raise"``
            (default) raises ``ValueError``; ``"zero"`` gives that row zero weights and a zero
            output, as PyTorch's fused kernels do.

    Returns:
        ``AttentionResult(outputs (..., T_q, d_v), weights (..., T_q, T_k))``.
    """
    queries, keys, values = _validate_qkv(queries, keys, values)
    if fully_masked not in ("raise", "zero"):
        raise ValueError(f"fully_masked must be 'raise' or 'zero', got {fully_masked!r}")
    d_k = queries.shape[-1]
    factor = _scale_factor(scale, d_k)
    # scale the (T_q, d_k) queries rather than the (T_q, T_k) scores: same result, less work
    scores = (queries * factor if factor != 1.0 else queries) @ keys.transpose(-2, -1)
    scores = apply_mask(scores, mask)
    dead_rows = None
    if mask is not None:  # read dead rows off the (small, broadcast) mask, not the scores
        mask = torch.as_tensor(mask)
        allowed = mask if mask.dtype == torch.bool else ~torch.isneginf(mask)
        dead_rows = ~allowed.any(dim=-1, keepdim=True)  # (..., T_q, 1), broadcastable
    if dead_rows is not None and dead_rows.any():
        if fully_masked == "raise":
            dead = torch.broadcast_to(dead_rows.squeeze(-1).to(scores.device), scores.shape[:-1])
            where = dead.nonzero()[0].tolist()
            raise ValueError(
                f"query row at index {tuple(where)} of (..., T_q) has every key masked, so its "
                "attention weights are undefined; fix the mask, or pass fully_masked='zero' to "
                "give such rows zero output"
            )
        dead_rows = dead_rows.to(scores.device)
        scores = scores.masked_fill(dead_rows, 0.0)
    weights = softmax(scores, dim=-1)
    if dead_rows is not None and dead_rows.any():
        weights = weights.masked_fill(dead_rows, 0.0)
    return AttentionResult(weights @ values, weights)


def attention_loop(
    queries: Tensorish,
    keys: Tensorish,
    values: Tensorish,
    mask: Tensorish | None = None,
    *,
    scale: bool | float = True,
) -> AttentionResult:
    """The same computation one query at a time — slow, but each step is visible.

    For query ``i``: scores against every key, softmax over keys, weighted sum of values.
    Shapes as in :func:`scaled_dot_product_attention`; a boolean mask broadcastable to
    ``(..., T_q, T_k)``. Fully masked rows raise ``ValueError``.
    """
    queries, keys, values = _validate_qkv(queries, keys, values)
    d_k = queries.shape[-1]
    factor = _scale_factor(scale, d_k)
    n_queries, n_keys = queries.shape[-2], keys.shape[-2]
    full_mask = None
    if mask is not None:
        zeros = torch.zeros(n_queries, n_keys, dtype=queries.dtype, device=queries.device)
        full_mask = apply_mask(zeros, mask)
    outputs, weights = [], []
    for i in range(n_queries):
        query = queries[..., i : i + 1, :]  # (..., 1, d_k)
        row_scores = (query @ keys.transpose(-2, -1)) * factor  # (..., 1, T_k)
        if full_mask is not None:
            row_scores = row_scores + full_mask[..., i : i + 1, :]
        row_weights = softmax(row_scores, dim=-1)
        weights.append(row_weights)
        outputs.append(row_weights @ values)  # (..., 1, d_v)
    return AttentionResult(torch.cat(outputs, dim=-2), torch.cat(weights, dim=-2))


def self_attention_param_count(d: int, d_k: int, d_v: int | None = None, bias: bool = True) -> int:
    """Parameters of one self-attention head: ``2·d_k·d + d·d_v`` weights (+ ``2·d_k + d_v`` biases)."""
    d_v = d if d_v is None else d_v
    weights = 2 * d_k * d + d * d_v
    return weights + (2 * d_k + d_v if bias else 0)


class SelfAttention(nn.Module):
    """One self-attention head: ``Q = X W_Q + b_Q``, ``K = X W_K + b_K``, ``V = X W_V + b_V``.

    Input ``x`` ``(..., T, d)``; output ``(..., T, d_v)`` and weights ``(..., T, T)``.
    ``W_Q, W_K ∈ R^{d×d_k}``, ``W_V ∈ R^{d×d_v}`` (stored transposed, as ``nn.Linear`` does).
    """

    def __init__(self, d: int, d_k: int, d_v: int | None = None, bias: bool = True) -> None:
        super().__init__()
        self.d, self.d_k, self.d_v = d, d_k, d if d_v is None else d_v
        self.W_Q = nn.Linear(d, d_k, bias=bias)
        self.W_K = nn.Linear(d, d_k, bias=bias)
        self.W_V = nn.Linear(d, self.d_v, bias=bias)

    def forward(
        self, x: torch.Tensor, mask: Tensorish | None = None, *, scale: bool | float = True
    ) -> AttentionResult:
        """Attend from every position of ``x`` ``(..., T, d)`` to every (unmasked) position."""
        x = as_float_tensor(x, "x")
        check_ndim(x, "x", range(2, 9), "(..., T, d)")
        if x.shape[-1] != self.d:
            raise ValueError(f"x must have last dimension d = {self.d}, got shape {tuple(x.shape)}")
        return scaled_dot_product_attention(
            self.W_Q(x), self.W_K(x), self.W_V(x), mask, scale=scale
        )


def _check_probability_rows(weights: Tensorish, name: str) -> torch.Tensor:
    weights = as_float_tensor(weights, name)
    check_ndim(weights, name, range(1, 9), "(..., T_k)")
    if torch.isnan(weights).any():
        raise ValueError(f"{name} contain NaN (a softmax over a fully masked row?)")
    if (weights < 0).any():
        raise ValueError(f"{name} must be non-negative: each row is a distribution over keys")
    sums = weights.sum(dim=-1)
    if not torch.allclose(sums, torch.ones_like(sums), atol=1e-4):
        raise ValueError(
            f"each row of {name} must sum to 1 over the key axis (dim=-1); the row sums range "
            f"from {sums.min().item():.4g} to {sums.max().item():.4g}"
        )
    return weights


def softmax_jacobian(weights: Tensorish) -> torch.Tensor:
    """Jacobian of the softmax at its output ``p``: ``J = diag(p) − p pᵀ``.

    ``weights`` ``(..., T_k)`` are softmax outputs (each row sums to 1); the result has shape
    ``(..., T_k, T_k)`` with ``J[..., i, j] = ∂p_i / ∂s_j = p_i (δ_ij − p_j)``. ``J`` is
    symmetric, its rows sum to 0 (adding a constant to every score changes nothing) and its
    trace is ``1 − Σ p_i²``, largest for uniform weights and 0 for a one-hot row.
    """
    weights = _check_probability_rows(weights, "weights")
    return torch.diag_embed(weights) - weights.unsqueeze(-1) * weights.unsqueeze(-2)


def entropy(weights: Tensorish) -> torch.Tensor:
    """Entropy in nats of each row of attention ``weights`` ``(..., T_k)`` → shape ``(...)``.

    ``H(p) = −Σ_j p_j ln p_j`` with ``0 · ln 0 = 0``, so masked (zero) weights contribute
    nothing. It ranges from 0 (all weight on one key) to ``ln T_k`` (uniform weights).
    """
    weights = _check_probability_rows(weights, "weights")
    return -torch.special.xlogy(weights, weights).sum(dim=-1)


def self_attention_multiply_adds(
    T: int, d: int, d_k: int | None = None, d_v: int | None = None
) -> dict[str, int]:
    """Multiply-adds of one self-attention head on ``T`` tokens of width ``d`` (biases ignored).

    Returns ``{"projections": T·d·(2·d_k + d_v), "scores": T²·d_k, "mixing": T²·d_v,
    "total": …}``; with ``d_k = d_v = d`` that is ``3Td² + T²d_k + T²d_v``. The projections
    grow linearly in ``T``, scores and mixing quadratically.
    """
    d_k = d if d_k is None else d_k
    d_v = d if d_v is None else d_v
    for name, value in (("T", T), ("d", d), ("d_k", d_k), ("d_v", d_v)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    parts = {"projections": T * d * (2 * d_k + d_v), "scores": T * T * d_k, "mixing": T * T * d_v}
    parts["total"] = sum(parts.values())
    return parts
