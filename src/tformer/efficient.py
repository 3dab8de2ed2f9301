"""Exact attention without the ``T × T`` matrix, and attention restricted to a window.

:func:`tiled_attention` is the idea behind FlashAttention in plain torch: keys and values are
visited one tile at a time while each query keeps a running maximum ``m``, a running normaliser
``ℓ = Σ exp(s − m)`` and a running weighted sum of values (the *online softmax*). When a new tile
raises the maximum, the old sums are rescaled by ``exp(m_old − m_new)``. The result equals
``softmax(Q Kᵀ/√d_k) V`` exactly (up to rounding), but only a ``T_q × tile`` block of scores
exists at any time: memory grows like ``T``, not ``T²``; the arithmetic is still ``T²``.
"""

from __future__ import annotations

import math

import torch

from tformer._validate import Tensorish
from tformer.attention import AttentionResult, _validate_qkv, scaled_dot_product_attention
from tformer.masks import sliding_window_mask


def tiled_attention(
    queries: Tensorish,
    keys: Tensorish,
    values: Tensorish,
    *,
    tile_size: int = 128,
    causal: bool = False,
) -> torch.Tensor:
    """Exact scaled dot-product attention computed tile by tile with an online softmax.

    Args:
        queries: ``(..., T_q, d_k)``; keys: ``(..., T_k, d_k)``; values: ``(..., T_k, d_v)``.
        tile_size: keys per tile (the last tile may be shorter).
        causal: query ``i`` sees keys ``j ≤ i + T_k − T_q``.

    Returns:
        outputs ``(..., T_q, d_v)`` — the weights are never materialised.
    """
    queries, keys, values = _validate_qkv(queries, keys, values)
    if tile_size < 1:
        raise ValueError(f"tile_size must be ≥ 1, got {tile_size}")
    n_queries, n_keys = queries.shape[-2], keys.shape[-2]
    scale = 1.0 / math.sqrt(queries.shape[-1])
    batch_shape = torch.broadcast_shapes(queries.shape[:-2], keys.shape[:-2])
    running_max = torch.full((*batch_shape, n_queries, 1), float("-inf"), dtype=queries.dtype,
                             device=queries.device)
    normaliser = torch.zeros_like(running_max)
    accumulator = torch.zeros((*batch_shape, n_queries, values.shape[-1]), dtype=queries.dtype,
                              device=queries.device)
    query_positions = torch.arange(n_queries, device=queries.device)[:, None] + (n_keys - n_queries)
    for start in range(0, n_keys, tile_size):
        stop = min(start + tile_size, n_keys)
        scores = queries @ keys[..., start:stop, :].transpose(-2, -1) * scale  # (..., T_q, tile)
        if causal:
            key_positions = torch.arange(start, stop, device=queries.device)[None, :]
            scores = scores.masked_fill(key_positions > query_positions, float("-inf"))
        tile_max = scores.amax(dim=-1, keepdim=True)
        new_max = torch.maximum(running_max, tile_max)
        # rows that have seen only -inf so far keep a harmless max of 0
        safe_max = torch.where(torch.isneginf(new_max), torch.zeros_like(new_max), new_max)
        rescale = torch.exp(running_max - safe_max)
        exponentials = torch.exp(scores - safe_max)
        normaliser = normaliser * rescale + exponentials.sum(dim=-1, keepdim=True)
        accumulator = accumulator * rescale + exponentials @ values[..., start:stop, :]
        running_max = new_max
    if (normaliser == 0).any():
        raise ValueError("a query row has every key masked; its attention output is undefined")
    return accumulator / normaliser


def sliding_window_attention(
    queries: Tensorish, keys: Tensorish, values: Tensorish, window: int
) -> AttentionResult:
    """Causal attention in which query ``i`` sees only keys ``i − window + 1 … i``.

    Shapes as in :func:`tformer.attention.scaled_dot_product_attention` with ``T_q = T_k``.
    """
    queries, keys, values = _validate_qkv(queries, keys, values)
    if queries.shape[-2] != keys.shape[-2]:
        raise ValueError(
            f"sliding-window self-attention needs T_q = T_k, got {queries.shape[-2]} and "
            f"{keys.shape[-2]}"
        )
    mask = sliding_window_mask(queries.shape[-2], window, device=queries.device)
    return scaled_dot_product_attention(queries, keys, values, mask)


def online_softmax_states(
    scores: Tensorish, values: Tensorish, tile_size: int
) -> list[dict[str, torch.Tensor]]:
    """The running state of the online softmax for **one query**, after each tile of keys.

    Args:
        scores: ``(T_k,)`` the query's (already scaled) scores; values: ``(T_k, d_v)``.
        tile_size: keys per tile.

    Returns:
        one dict per tile with ``seen`` (keys read so far), ``max`` (running maximum ``m``),
        ``normaliser`` (``ℓ = Σ exp(s − m)`` over the keys seen) and ``output`` (the weighted
        average of the values seen so far, ``acc / ℓ``). After the last tile ``output`` equals
        ``softmax(scores) @ values``. This is the same recurrence as :func:`tiled_attention`,
        unrolled for teaching.
    """
    scores = torch.as_tensor(scores)
    values = torch.as_tensor(values)
    if scores.ndim != 1 or values.ndim != 2 or values.shape[0] != scores.shape[0]:
        raise ValueError(
            f"need scores (T_k,) and values (T_k, d_v); got {tuple(scores.shape)} and "
            f"{tuple(values.shape)}"
        )
    if tile_size < 1:
        raise ValueError(f"tile_size must be ≥ 1, got {tile_size}")
    options = {"dtype": scores.dtype, "device": scores.device}
    values = values.to(scores.device)
    running_max = torch.tensor(float("-inf"), **options)
    normaliser = torch.tensor(0.0, **options)
    accumulator = torch.zeros(values.shape[1], **options)
    states = []
    for start in range(0, len(scores), tile_size):
        tile = scores[start : start + tile_size]
        new_max = torch.maximum(running_max, tile.max())
        rescale = torch.exp(running_max - new_max)
        exponentials = torch.exp(tile - new_max)
        normaliser = normaliser * rescale + exponentials.sum()
        accumulator = accumulator * rescale + exponentials @ values[start : start + tile_size]
        running_max = new_max
        states.append({
            "seen": torch.tensor(start + len(tile)),
            "max": running_max.clone(),
            "normaliser": normaliser.clone(),
            "output": accumulator / normaliser,
        })
    return states
