"""Where a token is: sinusoidal, learned and rotary (RoPE) position information.

Self-attention is permutation-equivariant, so order must be added explicitly.

* :func:`sinusoidal_positions` — eq. 12.6 of the sources: a fixed ``(T, d)`` table added to the
  token embeddings; ``PE[p, 2i] = sin(p / base^(2i/d))``, ``PE[p, 2i+1] = cos(p / base^(2i/d))``.
* :class:`LearnedPositions` — a trainable ``(n_ctx, d)`` table (GPT-2), unusable beyond ``n_ctx``.
* :func:`apply_rope` — rotary positions: rotate each query and key by its position instead of
  adding anything, so the score ``q_n · k_m`` depends only on ``n − m``.

Pairing convention (RoPE and the sinusoidal table alike): coordinates ``(2i, 2i+1)`` form pair
``i``, which turns at frequency ``θ_i = base^(−2i/d)``; ``base = 10000``.
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


def apply_rope(
    x: Tensorish, positions: Tensorish | None = None, base: float = 10000.0
) -> torch.Tensor:
    """Rotate queries or keys by their positions (RoPE).

    Args:
        x: ``(..., T, d_k)`` queries or keys, ``d_k`` even.
        positions: ``(T,)`` position of each row (default ``0 … T−1``); may be fractional.
        base: frequency base, ``θ_i = base^(−2i/d_k)``.

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
    pairs = x.unflatten(-1, (d_k // 2, 2))  # (..., T, d_k/2, 2): pair i = (x_2i, x_2i+1)
    even, odd = pairs[..., 0], pairs[..., 1]
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2)
