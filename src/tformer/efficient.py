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
    query_tile_size: int | None = None,
    causal: bool = False,
    return_logsumexp: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Exact scaled dot-product attention computed tile by tile with an online softmax.

    The queries are cut into tiles of ``query_tile_size`` rows (default: all queries in one tile)
    and, for each query tile, the keys and values stream past in tiles of ``tile_size``: only a
    ``query_tile_size × tile_size`` block of scores exists at any time (FlashAttention's loop
    order, Dao et al. 2022; FlashAttention-2 puts the query tiles outermost, as here). With
    ``causal``, key tiles that lie entirely in the future of a query tile are skipped.

    Args:
        queries: ``(..., T_q, d_k)``; keys: ``(..., T_k, d_k)``; values: ``(..., T_k, d_v)``.
        tile_size: keys per tile (the last tile may be shorter).
        query_tile_size: queries per tile (``None``: one tile of all ``T_q`` queries).
        causal: query ``i`` sees keys ``j ≤ i + T_k − T_q``.
        return_logsumexp: also return ``L = m + log ℓ`` per query ``(..., T_q)``, the one number
            per row that the backward pass keeps: the weights are then ``P = exp(S − L)``,
            recomputable tile by tile without storing ``S`` or ``P``.

    Returns:
        outputs ``(..., T_q, d_v)`` (and ``L`` if asked) — the weights are never materialised.
    """
    queries, keys, values = _validate_qkv(queries, keys, values)
    if tile_size < 1:
        raise ValueError(f"tile_size must be ≥ 1, got {tile_size}")
    n_queries, n_keys = queries.shape[-2], keys.shape[-2]
    if query_tile_size is None:
        query_tile_size = max(n_queries, 1)
    if query_tile_size < 1:
        raise ValueError(f"query_tile_size must be ≥ 1, got {query_tile_size}")
    scale = 1.0 / math.sqrt(queries.shape[-1])
    batch_shape = torch.broadcast_shapes(queries.shape[:-2], keys.shape[:-2])
    queries = queries.expand(*batch_shape, *queries.shape[-2:])
    outputs, logsumexps = [], []
    offset = n_keys - n_queries  # query i sits at key position i + offset
    for q_start in range(0, n_queries, query_tile_size):
        q_stop = min(q_start + query_tile_size, n_queries)
        query_tile = queries[..., q_start:q_stop, :] * scale
        rows = q_stop - q_start
        running_max = torch.full((*batch_shape, rows, 1), float("-inf"), dtype=queries.dtype,
                                 device=queries.device)
        normaliser = torch.zeros_like(running_max)
        accumulator = torch.zeros((*batch_shape, rows, values.shape[-1]), dtype=queries.dtype,
                                  device=queries.device)
        query_positions = torch.arange(q_start, q_stop, device=queries.device)[:, None] + offset
        last_key = n_keys if not causal else min(n_keys, q_stop + offset)
        for start in range(0, max(last_key, 0), tile_size):
            stop = min(start + tile_size, n_keys)
            scores = query_tile @ keys[..., start:stop, :].transpose(-2, -1)  # (..., rows, tile)
            if causal and stop - 1 > q_start + offset:
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
        outputs.append(accumulator / normaliser)
        logsumexps.append((running_max + torch.log(normaliser)).squeeze(-1))
    output = torch.cat(outputs, dim=-2)
    if return_logsumexp:
        return output, torch.cat(logsumexps, dim=-1)
    return output


def sliding_window_attention(
    queries: Tensorish, keys: Tensorish, values: Tensorish, window: int
) -> AttentionResult:
    """Causal attention in which query ``i`` sees only keys ``i − window + 1 … i`` — the
    *masked reference*: it builds the full ``T × T`` score matrix and masks it, so it costs
    ``O(T²)`` time and memory. :func:`banded_attention` computes the same outputs in ``O(T·w)``.

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


def banded_attention(
    queries: Tensorish,
    keys: Tensorish,
    values: Tensorish,
    window: int,
    *,
    key_padding_mask: Tensorish | None = None,
) -> torch.Tensor:
    """Causal sliding-window attention in ``O(T·w·d)`` time and memory, never forming ``T × T``.

    The ``T`` positions are cut into blocks of ``w`` (the last block is padded). Every key that a
    query in block ``b`` may see lies in block ``b`` or ``b − 1``, so each block of ``w`` queries
    is scored against the ``2w`` keys of those two blocks: ``⌈T/w⌉ · w · 2w`` scores instead of
    ``T²``. A mask inside each ``w × 2w`` block keeps exactly the keys ``i − w + 1 … i``.

    Args:
        queries, keys: ``(..., T, d_k)``; values: ``(..., T, d_v)`` (self-attention, ``T_q = T_k``).
        window: ``w ≥ 1``, the number of keys each query sees (itself included).
        key_padding_mask: optional boolean ``(..., T)``, ``True`` = real key, ``False`` = padding
            (e.g. ``(B, 1, T)`` against ``(B, h, T, d_k)`` heads). A query whose whole window is
            padding raises ``ValueError``, as :func:`scaled_dot_product_attention` does.

    Returns:
        outputs ``(..., T, d_v)``, equal to :func:`sliding_window_attention`'s.
    """
    queries, keys, values = _validate_qkv(queries, keys, values)
    n = queries.shape[-2]
    if keys.shape[-2] != n:
        raise ValueError(f"banded attention needs T_q = T_k, got {n} and {keys.shape[-2]}")
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError(f"window must be an integer ≥ 1, got {window!r}")
    w = min(window, max(n, 1))
    n_blocks = -(-n // w)
    padded = n_blocks * w
    batch_shape = torch.broadcast_shapes(queries.shape[:-2], keys.shape[:-2], values.shape[:-2])
    device, dtype = queries.device, queries.dtype

    def blocks(x: torch.Tensor, before: int) -> torch.Tensor:
        # (..., T, f) → (..., n_blocks, w, f), padded with `before` zeros in front
        x = x.expand(*batch_shape, *x.shape[-2:])
        x = torch.nn.functional.pad(x, (0, 0, before, padded - n))
        return x.reshape(*batch_shape, -1, w, x.shape[-1])

    query_blocks = blocks(queries, 0) / math.sqrt(queries.shape[-1])  # (..., nb, w, d_k)
    key_blocks, value_blocks = blocks(keys, w), blocks(values, w)  # (..., nb + 1, w, ·)
    # keys of block b − 1 and b side by side: (..., nb, 2w, ·)
    near_keys = torch.cat([key_blocks[..., :-1, :, :], key_blocks[..., 1:, :, :]], dim=-2)
    near_values = torch.cat([value_blocks[..., :-1, :, :], value_blocks[..., 1:, :, :]], dim=-2)
    scores = query_blocks @ near_keys.transpose(-2, -1)  # (..., nb, w, 2w)
    query_pos = (torch.arange(n_blocks, device=device)[:, None] * w
                 + torch.arange(w, device=device)[None, :])  # (nb, w)
    key_pos = (torch.arange(n_blocks, device=device)[:, None] * w - w
               + torch.arange(2 * w, device=device)[None, :])  # (nb, 2w)
    offset = query_pos[:, :, None] - key_pos[:, None, :]  # (nb, w, 2w): i − j
    allowed = (offset >= 0) & (offset < window) & (key_pos[:, None, :] >= 0)
    if key_padding_mask is not None:
        real = torch.as_tensor(key_padding_mask, device=device)
        if real.dtype != torch.bool or real.shape[-1] != n:
            raise ValueError(
                f"key_padding_mask must be boolean (..., T = {n}), got {real.dtype} "
                f"{tuple(real.shape)}"
            )
        real = torch.nn.functional.pad(real, (w, padded - n), value=False)
        real = real.reshape(*real.shape[:-1], -1, w)
        near_real = torch.cat([real[..., :-1, :], real[..., 1:, :]], dim=-1)  # (..., nb, 2w)
        allowed = allowed & near_real[..., None, :]
    dead = ~allowed.any(dim=-1)  # (..., nb, w)
    dead = dead.reshape(*dead.shape[:-2], padded)[..., :n]
    if dead.any():
        where = dead.nonzero()[0].tolist()
        raise ValueError(
            f"query at index {tuple(where)} has every key in its window masked, so its attention "
            "weights are undefined; fix the key_padding_mask"
        )
    scores = scores.masked_fill(~allowed, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    weights = torch.nan_to_num(weights, nan=0.0)  # padded query rows beyond T only
    outputs = weights @ near_values  # (..., nb, w, d_v)
    return outputs.reshape(*batch_shape, padded, values.shape[-1])[..., :n, :].to(dtype)


def naive_attention_io(n_positions: int, d_k: int) -> int:
    """Elements naive attention moves between slow memory (HBM) and fast memory (SRAM).

    Dao et al. (2022), Algorithm 0, for one head with ``T`` queries and keys: read ``Q``, ``K``
    (``2Td``), write ``S = QKᵀ`` (``T²``), read ``S`` and write ``P = softmax(S)`` (``2T²``),
    read ``P`` and ``V`` and write ``O`` (``T² + 2Td``): ``4Td + 4T²``, ``Θ(Td + T²)``.
    Multiply by the bytes per element (2 in 16-bit) for bytes.
    """
    t, d = n_positions, d_k
    return 4 * t * d + 4 * t * t


def tiled_attention_io(n_positions: int, d_k: int, query_tile: int) -> int:
    """Elements tiled attention moves between HBM and SRAM, query tiles outermost.

    Each of the ``⌈T/b⌉`` query tiles of ``b`` rows is read once and its output written once
    (``2Td`` in all); for every query tile all ``T`` keys and values stream through SRAM
    (``2Td`` per query tile). ``S`` and ``P`` never leave SRAM. Total ``2Td + 2Td·⌈T/b⌉``,
    whatever the key tile. With ``b = ⌈M/(4d)⌉`` queries against key tiles of at most ``d`` rows
    (Dao et al.'s block shapes, which fit an SRAM of ``M ≥ 8d²`` elements) this is
    ``Θ(T²d²/M)`` (Dao et al., 2022, Theorem 2); with square tiles (:func:`query_tile_for_sram`)
    ``b`` grows only like ``√M`` once ``M`` is well above ``d²``.
    """
    if query_tile < 1:
        raise ValueError(f"query_tile must be ≥ 1, got {query_tile}")
    t, d = n_positions, d_k
    return 2 * t * d + 2 * t * d * -(-t // query_tile)


def query_tile_for_sram(sram_elements: int, d_k: int) -> int:
    """The largest query tile ``b`` whose working set fits in ``M`` SRAM elements.

    One step holds a ``b × d`` query tile, a ``b × d`` accumulator, ``b × d`` tiles of ``K`` and
    ``V`` and a ``b × b`` tile of scores: ``4bd + b² ≤ M`` (key tile = query tile).
    """
    b = int(math.sqrt(4 * d_k * d_k + sram_elements) - 2 * d_k)
    while 4 * (b + 1) * d_k + (b + 1) ** 2 <= sram_elements:
        b += 1
    while b > 1 and 4 * b * d_k + b * b > sram_elements:
        b -= 1
    if b < 1:
        raise ValueError(f"an SRAM of {sram_elements} elements cannot hold a tile at d_k = {d_k}")
    return b


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


class WindowedAttentionLM(torch.nn.Module):
    """One causal attention layer over token + learned position embeddings, read out to logits:
    the smallest model that can learn to fetch a token from a fixed distance back (chapter 11).

    ``window=None`` is full causal attention (:func:`scaled_dot_product_attention` with the
    causal mask); an integer ``w`` uses :func:`banded_attention`, ``O(T·w)``.
    ``forward(tokens (B, T)) → logits (B, T, n_vocab)``.
    """

    def __init__(self, n_vocab: int, n_ctx: int, d: int, window: int | None = None) -> None:
        super().__init__()
        self.window, self.n_ctx = window, n_ctx
        self.embed = torch.nn.Embedding(n_vocab, d)
        self.positions = torch.nn.Parameter(0.5 * torch.randn(n_ctx, d))
        self.W_Q = torch.nn.Linear(d, d, bias=False)
        self.W_K = torch.nn.Linear(d, d, bias=False)
        self.W_V = torch.nn.Linear(d, d, bias=False)
        self.unembed = torch.nn.Linear(d, n_vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        n = tokens.shape[-1]
        if n > self.n_ctx:
            raise ValueError(f"at most n_ctx = {self.n_ctx} positions, got {n}")
        x = self.embed(tokens) + self.positions[:n]
        queries, keys, values = self.W_Q(x), self.W_K(x), self.W_V(x)
        if self.window is None:
            from tformer.masks import causal_mask

            mixed = scaled_dot_product_attention(queries, keys, values,
                                                 causal_mask(n, device=x.device)).outputs
        else:
            mixed = banded_attention(queries, keys, values, self.window)
        return self.unembed(mixed)


def copy_at_distance_batch(
    n_vocab: int, n_positions: int, distance: int, batch_size: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Random tokens ``(B, T)`` and targets ``(B, T)``: position ``t`` must output the token at
    ``t − distance``; the first ``distance`` positions have nothing to copy (target ``-100``,
    ignored by the loss)."""
    if not 0 < distance < n_positions:
        raise ValueError(f"need 0 < distance < n_positions, got {distance} and {n_positions}")
    tokens = torch.randint(0, n_vocab, (batch_size, n_positions), generator=generator)
    targets = torch.full_like(tokens, -100)
    targets[:, distance:] = tokens[:, :-distance]
    return tokens, targets
