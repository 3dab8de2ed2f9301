"""Attention masks: which keys each query may see.

Boolean masks use ``True`` for *may attend* (PyTorch's convention). Shapes are chosen to
broadcast against scores ``(batch, heads, queries, keys)``:

* :func:`causal_mask` — ``(T_q, T_k)``, lower triangular, aligned lower-right (KV cache) or
  upper-left (PyTorch's ``is_causal=True``);
* :func:`padding_mask` — ``(B, 1, 1, T)``, hides padded *keys* from every query;
* :func:`combined_mask` — ``(B, 1, T, T)``, causal and padding together;
* :func:`sliding_window_mask` — ``(T, T)``, causal and at most ``window`` keys back;
* :func:`left_padded_positions` — ``(B, T)`` position ids that start at 0 after left padding.
"""

from __future__ import annotations

from typing import Literal

import torch

from tformer._validate import Tensorish


def causal_mask(
    n_queries: int,
    n_keys: int | None = None,
    *,
    align: Literal["lower_right", "upper_left"] = "lower_right",
    device=None,
) -> torch.Tensor:
    """Boolean ``(T_q, T_k)`` causal mask; ``True`` = may attend.

    For a square mask (``T_q = T_k``) both alignments are the same lower triangle. For a
    rectangular one they differ:

    * ``align="lower_right"`` (default): the queries are the *last* ``T_q`` of ``T_k`` positions,
      as when new tokens attend to a KV cache; query ``i`` sees keys ``j ≤ i + (T_k − T_q)``, so
      the diagonal ends in the bottom-right corner. Needs ``T_q ≤ T_k`` (otherwise the first rows
      would see no key). PyTorch: ``torch.nn.attention.bias.causal_lower_right``.
    * ``align="upper_left"``: query ``i`` sees keys ``j ≤ i``, the diagonal starts in the top-left
      corner, as if queries and keys both started at position 0. This is what
      ``scaled_dot_product_attention(..., is_causal=True)`` builds
      (``torch.nn.attention.bias.causal_upper_left``).
    """
    n_keys = n_queries if n_keys is None else n_keys
    if n_queries < 1 or n_keys < 1:
        raise ValueError(f"causal_mask needs T_q ≥ 1 and T_k ≥ 1, got T_q={n_queries}, T_k={n_keys}")
    if align == "lower_right":
        if n_keys < n_queries:
            raise ValueError(
                f"causal_mask(align='lower_right') needs 1 ≤ T_q ≤ T_k, got T_q={n_queries}, "
                f"T_k={n_keys}: the first {n_queries - n_keys} queries would see no key"
            )
        diagonal = n_keys - n_queries
    elif align == "upper_left":
        diagonal = 0
    else:
        raise ValueError(f"align must be 'lower_right' or 'upper_left', got {align!r}")
    return torch.ones(n_queries, n_keys, dtype=torch.bool, device=device).tril(diagonal)


def left_padded_positions(real: torch.Tensor) -> torch.Tensor:
    """Position ids ``(B, T)`` for a left-padded batch: the first real token of every sequence is
    position 0, the next 1, and so on; padded slots get 0 (they are masked anyway).

    ``real``: boolean ``(B, T)``, ``True`` at real tokens. Without this offset a prompt padded
    with ``p`` slots on the left would start at position ``p`` and read the wrong rows of a learned
    position table. RoPE scores depend only on position differences, so a RoPE model gives the same
    outputs in exact arithmetic; the offset still avoids rounding at large positions and ids past a
    precomputed angle table.
    """
    if real.dtype != torch.bool or real.ndim != 2:
        raise TypeError(f"real must be a boolean (B, T) tensor, got {real.dtype} {tuple(real.shape)}")
    return (real.long().cumsum(dim=-1) - 1).clamp(min=0)


def padding_mask(lengths: Tensorish, n_positions: int) -> torch.Tensor:
    """Boolean ``(B, 1, 1, T)`` mask hiding keys at positions ``≥ lengths[b]``.

    ``lengths`` holds each sequence's true length (``B`` integers in ``1..T``).
    """
    lengths = torch.as_tensor(lengths)
    if lengths.ndim != 1:
        raise ValueError(f"lengths must have shape (B,), got {tuple(lengths.shape)}")
    if lengths.is_floating_point() or lengths.dtype == torch.bool:
        raise TypeError(f"lengths must be integers, got dtype {lengths.dtype}")
    if (lengths < 0).any() or (lengths > n_positions).any():
        raise ValueError(f"lengths must lie in 0..{n_positions}, got {lengths.tolist()}")
    positions = torch.arange(n_positions, device=lengths.device)
    return (positions[None, :] < lengths[:, None])[:, None, None, :]


def combined_mask(lengths: Tensorish, n_positions: int) -> torch.Tensor:
    """Boolean ``(B, 1, T, T)`` mask: causal *and* not a padded key."""
    keys_ok = padding_mask(lengths, n_positions)  # (B, 1, 1, T)
    return keys_ok & causal_mask(n_positions, device=keys_ok.device)  # broadcast → (B, 1, T, T)


def sliding_window_mask(n_positions: int, window: int, *, device=None) -> torch.Tensor:
    """Boolean ``(T, T)`` causal mask that also hides keys more than ``window − 1`` steps back.

    Query ``i`` sees keys ``i − window + 1 … i`` (``window`` keys, itself included).
    """
    if window < 1:
        raise ValueError(f"window must be ≥ 1, got {window}")
    causal = causal_mask(n_positions, device=device)
    return causal & ~causal_mask(n_positions, device=device).tril(-window)


def to_additive(mask: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Boolean mask → additive mask: ``0`` where allowed, ``-inf`` where masked."""
    if mask.dtype != torch.bool:
        raise TypeError(f"to_additive expects a boolean mask, got dtype {mask.dtype}")
    additive = torch.zeros(mask.shape, dtype=dtype, device=mask.device)
    return additive.masked_fill(~mask, float("-inf"))


def to_boolean(additive: torch.Tensor) -> torch.Tensor:
    """Additive mask → boolean: ``True`` where the entry is neither ``-inf`` nor the dtype's
    most negative finite value (the stand-in some libraries use for ``-inf``)."""
    if not additive.is_floating_point():
        raise TypeError(f"to_boolean expects a floating-point mask, got dtype {additive.dtype}")
    return additive > torch.finfo(additive.dtype).min


def fully_masked_rows(mask: torch.Tensor) -> torch.Tensor:
    """Boolean ``(..., T_q)``: ``True`` for query rows that may attend to no key at all."""
    allowed = mask if mask.dtype == torch.bool else to_boolean(mask)
    return ~allowed.any(dim=-1)
