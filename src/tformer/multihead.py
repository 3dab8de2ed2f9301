"""Multi-head attention: ``h`` attention heads side by side, then one output projection.

Shapes, step by step (``B`` batch, ``T`` positions, ``d`` width, ``h`` heads, ``d_k = d / h``)::

    x (B, T, d) --W_Q--> (B, T, d) --view--> (B, T, h, d_k) --transpose--> (B, h, T, d_k)
    weights = softmax(Q Kᵀ / √d_k)                       (B, h, T_q, T_k)
    heads   = weights @ V                                (B, h, T_q, d_k)
    merged  = heads.transpose(1, 2).reshape(B, T_q, d)   (B, T_q, d)
    output  = merged @ W_O                               (B, T_q, d)

With ``n_kv_heads < h`` the layer is grouped-query attention (GQA; ``n_kv_heads = 1`` is
multi-query attention, MQA): ``h / n_kv_heads`` query heads share each key/value head, so ``W_K``
and ``W_V`` are ``d × n_kv_heads·d_k`` and a KV cache stores ``n_kv_heads`` heads, not ``h``.

The same module does self-attention (``context=None``) and cross-attention (keys and values from
``context``), and decodes incrementally with a :class:`KVCache`.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from tformer._validate import Tensorish, as_float_tensor, check_ndim
from tformer.attention import AttentionResult, scaled_dot_product_attention
from tformer.masks import causal_mask
from tformer.positions import apply_rope


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """``(B, T, d)`` → ``(B, h, T, d_k)`` by ``view`` then ``transpose`` (``d_k = d / h``)."""
    check_ndim(x, "x", (3,), "(B, T, d)")
    batch, n_positions, d = x.shape
    if d % n_heads:
        raise ValueError(f"width d = {d} is not divisible by n_heads = {n_heads}")
    return x.view(batch, n_positions, n_heads, d // n_heads).transpose(1, 2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """``(B, h, T, d_k)`` → ``(B, T, h·d_k)`` by ``transpose`` then ``reshape``.

    ``reshape``, not ``view``: after the transpose the memory is no longer contiguous.
    """
    check_ndim(x, "x", (4,), "(B, h, T, d_k)")
    batch, n_heads, n_positions, d_k = x.shape
    return x.transpose(1, 2).reshape(batch, n_positions, n_heads * d_k)


def multihead_param_count(
    d: int, bias: bool = True, *, n_heads: int = 1, n_kv_heads: int | None = None
) -> int:
    """Parameters of multi-head attention of width ``d``: ``4d² + 4d`` (``4d²`` without biases),
    whatever the number of heads.

    With ``n_kv_heads`` key/value heads (GQA, MQA) ``W_K`` and ``W_V`` shrink to
    ``d × n_kv_heads·d_k``: ``2d² + 2d·n_kv·d_k`` weights plus ``2d + 2·n_kv·d_k`` biases.
    """
    if n_kv_heads is None or n_kv_heads == n_heads:
        return 4 * d * d + (4 * d if bias else 0)
    d_kv = n_kv_heads * (d // n_heads)
    return 2 * d * d + 2 * d * d_kv + ((2 * d + 2 * d_kv) if bias else 0)


def repeat_kv(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """``(B, n_kv, T, d_k)`` → ``(B, h, T, d_k)``: key/value head ``j`` serves query heads
    ``j·g … (j+1)·g - 1`` with ``g = h / n_kv`` (the grouping of GQA)."""
    n_kv = x.shape[1]
    if n_heads % n_kv:
        raise ValueError(f"n_heads = {n_heads} is not a multiple of n_kv_heads = {n_kv}")
    return x.repeat_interleave(n_heads // n_kv, dim=1)


class KVCache:
    """Keys and values of the positions decoded so far, each ``(B, h, T_cached, d_k)``.

    Appending a new position never changes the earlier keys and values (the causal mask means
    earlier positions never see later ones), so they are computed once and reused.
    """

    def __init__(self) -> None:
        self.keys: torch.Tensor | None = None
        self.values: torch.Tensor | None = None

    def __len__(self) -> int:
        return 0 if self.keys is None else self.keys.shape[-2]

    def append(
        self, keys: torch.Tensor, values: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Add ``(B, h, T_new, d_k)`` keys and values; return all cached keys and values."""
        if self.keys is None:
            self.keys, self.values = keys, values
        else:
            self.keys = torch.cat([self.keys, keys], dim=-2)
            self.values = torch.cat([self.values, values], dim=-2)
        return self.keys, self.values


HeadHook = Callable[[torch.Tensor], torch.Tensor]


class MultiHeadAttention(nn.Module):
    """Multi-head attention with ``n_heads`` heads of width ``d_k = d / n_heads``.

    Args:
        d: model width (queries' input width and output width).
        n_heads: number of heads ``h``.
        bias: biases on the four projections.
        causal: add the causal mask (cache-aware) on top of any ``mask`` passed to ``forward``.
        rope: rotate queries and keys by absolute position (RoPE, :func:`apply_rope`).
        d_context: input width of keys and values for cross-attention (default ``d``).
        n_kv_heads: key/value heads (default ``n_heads``; fewer = GQA, 1 = MQA).

    Interpretability: with ``record = True`` each forward stores ``last_weights``
    ``(B, h, T_q, T_k)`` and ``last_head_outputs`` ``(B, h, T_q, d_k)`` (detached); ``head_hook``,
    if set, maps the per-head outputs ``(B, h, T_q, d_k)`` before they are merged (ablations).
    """

    def __init__(
        self,
        d: int,
        n_heads: int,
        *,
        bias: bool = True,
        causal: bool = False,
        rope: bool = False,
        rope_base: float = 10000.0,
        d_context: int | None = None,
        n_kv_heads: int | None = None,
    ) -> None:
        super().__init__()
        if d % n_heads:
            raise ValueError(f"width d = {d} is not divisible by n_heads = {n_heads}")
        n_kv_heads = n_heads if n_kv_heads is None else n_kv_heads
        if n_kv_heads < 1 or n_heads % n_kv_heads:
            raise ValueError(
                f"n_heads = {n_heads} must be a positive multiple of n_kv_heads = {n_kv_heads}"
            )
        self.d, self.n_heads, self.d_k = d, n_heads, d // n_heads
        self.n_kv_heads = n_kv_heads
        self.d_context = d if d_context is None else d_context
        self.causal, self.rope, self.rope_base = causal, rope, rope_base
        self.W_Q = nn.Linear(d, d, bias=bias)
        self.W_K = nn.Linear(self.d_context, n_kv_heads * self.d_k, bias=bias)
        self.W_V = nn.Linear(self.d_context, n_kv_heads * self.d_k, bias=bias)
        self.W_O = nn.Linear(d, d, bias=bias)
        self.record = False
        self.last_weights: torch.Tensor | None = None
        self.last_head_outputs: torch.Tensor | None = None
        self.head_hook: HeadHook | None = None

    def _check_input(self, x: Tensorish, name: str, width: int) -> torch.Tensor:
        x = as_float_tensor(x, name)
        check_ndim(x, name, (3,), "(B, T, d)")
        if x.shape[-1] != width:
            raise ValueError(
                f"{name} must have last dimension {width}, got shape {tuple(x.shape)}"
            )
        return x

    def forward(
        self,
        x: Tensorish,
        context: Tensorish | None = None,
        mask: Tensorish | None = None,
        *,
        cache: KVCache | None = None,
    ) -> AttentionResult:
        """Attend from ``x`` ``(B, T_q, d)`` to ``context`` ``(B, T_k, d_context)`` (default ``x``).

        ``mask`` (boolean or additive) broadcasts to ``(B, h, T_q, T_k)``. With a ``cache``, the
        new keys and values are appended to it and queries attend to all cached positions.
        Returns outputs ``(B, T_q, d)`` and weights ``(B, h, T_q, T_k)``.
        """
        x = self._check_input(x, "x", self.d)
        source = x if context is None else self._check_input(context, "context", self.d_context)
        queries = split_heads(self.W_Q(x), self.n_heads)
        keys = split_heads(self.W_K(source), self.n_kv_heads)  # (B, n_kv, T_k, d_k)
        values = split_heads(self.W_V(source), self.n_kv_heads)
        n_past = len(cache) if cache is not None else 0
        if self.rope:
            q_positions = torch.arange(n_past, n_past + queries.shape[-2], device=x.device)
            k_positions = torch.arange(n_past, n_past + keys.shape[-2], device=x.device)
            queries = apply_rope(queries, q_positions, self.rope_base)
            keys = apply_rope(keys, k_positions, self.rope_base)
        if cache is not None:
            keys, values = cache.append(keys, values)  # the cache keeps n_kv heads
        if self.n_kv_heads != self.n_heads:
            keys, values = repeat_kv(keys, self.n_heads), repeat_kv(values, self.n_heads)
        if self.causal:
            causal = causal_mask(queries.shape[-2], keys.shape[-2], device=x.device)
            if mask is None:
                mask = causal
            else:
                mask = torch.as_tensor(mask, device=x.device)
                mask = mask & causal if mask.dtype == torch.bool else mask.masked_fill(
                    ~causal, float("-inf")
                )
        heads, weights = scaled_dot_product_attention(queries, keys, values, mask)
        if self.head_hook is not None:
            heads = self.head_hook(heads)
        if self.record:
            self.last_weights = weights.detach()
            self.last_head_outputs = heads.detach()
        return AttentionResult(self.W_O(merge_heads(heads)), weights)
