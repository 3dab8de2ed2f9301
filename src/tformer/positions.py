"""Where a token is: sinusoidal, learned and rotary (RoPE) position information.

Self-attention is permutation-equivariant, so order must be added explicitly.

* :func:`sinusoidal_positions` — eq. 12.6 of the sources: a fixed ``(T, d)`` table added to the
  token embeddings; ``PE[p, 2i] = sin(p / base^(2i/d))``, ``PE[p, 2i+1] = cos(p / base^(2i/d))``.
* :class:`LearnedPositions` — a trainable ``(n_ctx, d)`` table (GPT-2), unusable beyond ``n_ctx``.
* :func:`apply_rope` — rotary positions: rotate each query and key by its position instead of
  adding anything, so the score ``q_n · k_m`` depends only on ``n − m``.

* :func:`alibi_slopes`, :func:`alibi_bias` — ALiBi (Press et al., 2022): no position vectors at
  all; head ``k`` adds ``−m_k · (i − j)`` to the score of query ``i`` and key ``j``.
* :func:`t5_relative_position_bucket`, :func:`relative_position_bias` — T5's relative position
  biases (Raffel et al., 2020): one learned scalar per head and *bucket* of ``j − i``.

Pairing convention (RoPE and the sinusoidal table alike): coordinates ``(2i, 2i+1)`` form pair
``i``, which turns at frequency ``θ_i = base^(−2i/d)``; ``base = 10000``. :func:`apply_rope` also
implements the "split halves" convention (``(i, i + d/2)`` form pair ``i``; Hugging Face's
``rotate_half``); :func:`interleaved_to_halves` is the permutation of ``W_Q``/``W_K`` outputs
that converts weights between the two.
"""

from __future__ import annotations

import functools
import math

import torch
from torch import nn

from tformer._validate import Tensorish, as_float_tensor, check_ndim


def _check_even(d: int, name: str) -> None:
    if d < 2 or d % 2:
        raise ValueError(f"{name} must be a positive even number (pairs of coordinates), got {d}")


def rope_frequencies(d_k: int, base: float = 10000.0) -> torch.Tensor:
    """Angular frequency of each coordinate pair, ``θ_i = base^(−2i/d_k)``, shape ``(d_k/2,)``."""
    _check_even(d_k, "d_k")
    exponents = torch.arange(0, d_k, 2, dtype=torch.float64) / d_k
    return base ** (-exponents)


def sinusoidal_positions(n_positions: int, d: int, base: float = 10000.0) -> torch.Tensor:
    """Sinusoidal table ``(T, d)``: row ``p`` is the encoding of position ``p`` (eq. 12.6)."""
    _check_even(d, "d")
    angles = torch.arange(n_positions, dtype=torch.float64)[:, None] * rope_frequencies(d, base)
    table = torch.empty(n_positions, d, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles)
    return table.to(torch.get_default_dtype())


def rotation_matrix(theta: float | torch.Tensor) -> torch.Tensor:
    """The 2-D rotation ``R(θ) = [[cos θ, −sin θ], [sin θ, cos θ]]`` (column-vector convention)."""
    theta = torch.as_tensor(theta, dtype=torch.float64)
    cos, sin = torch.cos(theta), torch.sin(theta)
    return torch.stack([torch.stack([cos, -sin]), torch.stack([sin, cos])])


def sinusoidal_shift_matrix(k: float, d: int, base: float = 10000.0) -> torch.Tensor:
    """The fixed ``(d, d)`` matrix ``M_k`` with ``PE(p + k) = PE(p) @ M_k`` for every ``p``.

    Each pair ``(sin pθ, cos pθ)`` becomes ``(sin (p+k)θ, cos (p+k)θ)`` by the angle-addition
    formulas, so ``M_k`` is block-diagonal with one 2×2 block per frequency and does not depend
    on ``p``.
    """
    theta = rope_frequencies(d, base) * k
    matrix = torch.zeros(d, d, dtype=torch.float64)
    for i, angle in enumerate(theta):
        cos, sin = math.cos(angle), math.sin(angle)
        # row vector (s, c) @ [[cos, -sin], [sin, cos]] = (s cos + c sin, -s sin + c cos)
        matrix[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = torch.tensor([[cos, -sin], [sin, cos]])
    return matrix.to(torch.get_default_dtype())


class LearnedPositions(nn.Module):
    """A trainable position table of ``n_ctx`` rows of width ``d`` (GPT-2: 1,024 × 768).

    ``forward(n_positions, offset=0)`` returns rows ``offset … offset + n_positions − 1``,
    shape ``(T, d)``; asking beyond ``n_ctx`` raises ``ValueError`` — a learned table simply has
    no row for an unseen position.
    """

    def __init__(self, n_ctx: int, d: int) -> None:
        super().__init__()
        self.n_ctx = n_ctx
        self.weight = nn.Parameter(torch.empty(n_ctx, d))
        nn.init.normal_(self.weight, std=0.01)

    def forward(self, n_positions: int, offset: int = 0) -> torch.Tensor:
        if offset + n_positions > self.n_ctx:
            raise ValueError(
                f"learned positions cover 0..{self.n_ctx - 1}; asked for positions up to "
                f"{offset + n_positions - 1}. A learned table cannot represent longer inputs."
            )
        return self.weight[offset : offset + n_positions]


@functools.lru_cache(maxsize=32)
def _rope_table(
    d_k: int, base: float, n_positions: int, device: torch.device, dtype: torch.dtype
) -> tuple[torch.Tensor, torch.Tensor]:
    """``cos`` and ``sin`` of ``p·θ_i`` for ``p < n_positions`` (rounded up to a power of two)."""
    size = 1 << max(n_positions - 1, 1).bit_length()
    angles = torch.arange(size, dtype=torch.float64)[:, None] * rope_frequencies(d_k, base)
    return torch.cos(angles).to(device, dtype), torch.sin(angles).to(device, dtype)


def rotate_pairs(x: torch.Tensor, convention: str = "interleaved") -> torch.Tensor:
    """``rot(x)``: each pair ``(a, b)`` becomes ``(−b, a)`` — a quarter turn, the ``sin`` part of RoPE.

    ``"interleaved"``: pairs ``(2i, 2i+1)``; ``"halves"``: pairs ``(i, i + d/2)`` (``rotate_half``).
    """
    if convention == "interleaved":
        pairs = x.unflatten(-1, (x.shape[-1] // 2, 2))
        return torch.stack((-pairs[..., 1], pairs[..., 0]), dim=-1).flatten(-2)
    if convention == "halves":
        first, second = x.chunk(2, dim=-1)
        return torch.cat((-second, first), dim=-1)
    raise ValueError(f"convention must be 'interleaved' or 'halves', got {convention!r}")


def interleaved_to_halves(d_k: int) -> torch.Tensor:
    """Index ``perm`` with ``x[..., perm]`` moving pair ``(2i, 2i+1)`` to ``(i, i + d_k/2)``.

    Permuting the output features of each head's ``W_Q`` and ``W_K`` by ``perm`` turns weights
    trained with interleaved RoPE into weights for the split-halves convention (what Hugging Face's
    LLaMA conversion script does); scores are unchanged because ``q`` and ``k`` move alike.
    """
    _check_even(d_k, "d_k")
    return torch.cat((torch.arange(0, d_k, 2), torch.arange(1, d_k, 2)))


def apply_rope(
    x: Tensorish,
    positions: Tensorish | None = None,
    base: float = 10000.0,
    *,
    convention: str = "interleaved",
) -> torch.Tensor:
    """Rotate queries or keys by their positions (RoPE).

    Args:
        x: ``(..., T, d_k)`` queries or keys, ``d_k`` even.
        positions: ``(T,)`` position of each row (default ``0 … T−1``); may be fractional.
        base: frequency base, ``θ_i = base^(−2i/d_k)``.
        convention: ``"interleaved"`` (pairs ``(2i, 2i+1)``, RoFormer, Meta's LLaMA) or
            ``"halves"`` (pairs ``(i, i + d_k/2)``, GPT-NeoX, Hugging Face): computed elementwise as
            ``x ⊙ cos + rot(x) ⊙ sin`` (:func:`rotate_pairs`).

    Returns:
        ``(..., T, d_k)``: pair ``(x_2i, x_2i+1)`` of row ``p`` rotated by angle ``p·θ_i``.
        Norms are unchanged and no parameters are involved.
    """
    x = as_float_tensor(x, "x")
    check_ndim(x, "x", range(2, 9), "(..., T, d_k)")
    n_positions, d_k = x.shape[-2], x.shape[-1]
    _check_even(d_k, "d_k (last dimension of x)")
    if positions is None:
        positions = torch.arange(n_positions, device=x.device)
    positions = torch.as_tensor(positions, device=x.device)
    if positions.shape != (n_positions,):
        raise ValueError(
            f"positions must have shape (T,) = ({n_positions},), got {tuple(positions.shape)}"
        )
    if positions.dtype.is_floating_point:
        angles = positions.to(torch.float64)[:, None] * rope_frequencies(d_k, base).to(x.device)
        cos, sin = torch.cos(angles).to(x.dtype), torch.sin(angles).to(x.dtype)  # (T, d_k/2)
    else:  # integer positions: rows of a cached table (a training loop asks for the same ones)
        table_cos, table_sin = _rope_table(d_k, base, int(positions.max()) + 1, x.device, x.dtype)
        cos, sin = table_cos[positions], table_sin[positions]
    if convention == "halves":  # pair i = (x_i, x_{i+d/2}): x ⊙ cos + rot(x) ⊙ sin
        cos, sin = torch.cat((cos, cos), -1), torch.cat((sin, sin), -1)
        return x * cos + rotate_pairs(x, "halves") * sin
    if convention != "interleaved":
        raise ValueError(f"convention must be 'interleaved' or 'halves', got {convention!r}")
    pairs = x.unflatten(-1, (d_k // 2, 2))  # (..., T, d_k/2, 2): pair i = (x_2i, x_2i+1)
    even, odd = pairs[..., 0], pairs[..., 1]
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2)


def alibi_slopes(n_heads: int) -> torch.Tensor:
    """ALiBi's per-head slopes ``(h,)``: ``m_k = 2^(−8k/h)`` for ``k = 1 … h`` when ``h`` is a
    power of two; otherwise the slopes of the nearest lower power of two ``n``, followed by every
    other slope of ``2n`` heads (Press et al., 2022)."""
    if n_heads < 1:
        raise ValueError(f"n_heads must be positive, got {n_heads}")

    def geometric(n: int) -> torch.Tensor:
        return 2.0 ** (-8.0 * torch.arange(1, n + 1, dtype=torch.float64) / n)

    closest = 1 << (n_heads.bit_length() - 1)
    slopes = geometric(closest)
    if closest < n_heads:
        slopes = torch.cat((slopes, geometric(2 * closest)[0::2][: n_heads - closest]))
    return slopes.to(torch.get_default_dtype())


def alibi_bias(n_heads: int, n_queries: int, n_keys: int | None = None) -> torch.Tensor:
    """ALiBi's additive bias ``(h, T_q, T_k)``: ``−m_k · (i − j)`` for query ``i``, key ``j``.

    Positions are aligned at the end (query ``i`` is position ``T_k − T_q + i``, as with a KV
    cache). Use it with the causal mask: above the diagonal the values are positive but masked.
    """
    n_keys = n_queries if n_keys is None else n_keys
    query_pos = torch.arange(n_keys - n_queries, n_keys)[:, None]
    distance = (query_pos - torch.arange(n_keys)[None, :]).to(torch.get_default_dtype())
    return -alibi_slopes(n_heads)[:, None, None] * distance


def t5_relative_position_bucket(
    relative_position: torch.Tensor,
    *,
    bidirectional: bool = True,
    n_buckets: int = 32,
    max_distance: int = 128,
) -> torch.Tensor:
    """T5's bucket of each relative position ``j − i`` (key minus query), integer tensor.

    Half of the buckets (bidirectional: per direction) hold the exact distances ``0 … n/2 − 1``;
    the rest cover ``n/2 … max_distance`` logarithmically, and larger distances share the last
    bucket (Raffel et al., 2020; the same rule as the reference T5 code). Decoders
    (``bidirectional=False``) only bucket keys at or before the query.
    """
    relative_position = torch.as_tensor(relative_position).long()
    buckets = torch.zeros_like(relative_position)
    if bidirectional:
        n_buckets //= 2
        buckets += (relative_position > 0).long() * n_buckets
        distance = relative_position.abs()
    else:
        distance = (-relative_position).clamp(min=0)
    max_exact = n_buckets // 2
    is_small = distance < max_exact
    large = max_exact + (
        torch.log(distance.float().clamp(min=1) / max_exact)
        / math.log(max_distance / max_exact)
        * (n_buckets - max_exact)
    ).long()
    large = large.clamp(max=n_buckets - 1)
    return buckets + torch.where(is_small, distance, large)


def relative_position_bias(
    table: torch.Tensor, n_queries: int, n_keys: int | None = None, **bucket_options
) -> torch.Tensor:
    """T5's bias ``(h, T_q, T_k)`` from a learned ``table`` ``(n_buckets, h)``: entry ``(k, i, j)``
    is ``table[bucket(j − i), k]``, added to head ``k``'s scores."""
    n_keys = n_queries if n_keys is None else n_keys
    relative = torch.arange(n_keys)[None, :] - torch.arange(n_queries)[:, None]
    buckets = t5_relative_position_bucket(relative, n_buckets=table.shape[0], **bucket_options)
    return table[buckets].permute(2, 0, 1)
