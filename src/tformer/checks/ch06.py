"""Checkers for chapter 6, *Positions: sinusoidal, learned and rotary*.

Expected values are computed here from the formulas with plain ``math``/``torch`` — never with
:mod:`tformer.positions`, the code under study. Tokens are rows; the sinusoidal table follows
eq. 12.6 (``PE[p, 2i] = sin(p ω_i)``, ``PE[p, 2i+1] = cos(p ω_i)``, ``ω_i = 10000^(−2i/d)``).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from tformer.checks.core import (
    Mistake,
    NotAttempted,
    Wrong,
    call_reader,
    exercise,
    expect_number,
    expect_tensor,
    to_array,
)


def _frequencies(d: int, base: float = 10000.0) -> list[float]:
    return [base ** (-2 * i / d) for i in range(d // 2)]


def _table(n_positions: int, d: int) -> torch.Tensor:
    rows = []
    for p in range(n_positions):
        row = []
        for omega in _frequencies(d):
            row += [math.sin(p * omega), math.cos(p * omega)]
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float64)


def _rotation(angle: float) -> torch.Tensor:
    return torch.tensor(
        [[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]],
        dtype=torch.float64,
    )


@exercise("06.1", "A sinusoidal encoding by hand")
def ex1(answer) -> None:
    """``answer``: the encoding of position p = 2 for d = 4, four numbers."""
    expected = _table(3, 4)[2]  # (sin 2, cos 2, sin 0.02, cos 0.02)
    value = to_array(answer, "the encoding of position 2")
    if value.shape == (4,):
        swapped = expected[[1, 0, 3, 2]].numpy()
        if np.allclose(value, swapped, atol=2e-3):
            raise Wrong("sine and cosine are swapped: even coordinates (0, 2) hold the sines")
        wrong_exponent = [math.sin(2), math.cos(2), math.sin(2 * 10000 ** -0.25),
                          math.cos(2 * 10000 ** -0.25)]
        if np.allclose(value, wrong_exponent, atol=2e-3):
            raise Wrong("the second pair has i = 1, so its frequency is 10000^(−2·1/4) = 0.01")
    expect_tensor(value, expected, name="the encoding of position 2", axes=("dimensions",),
                  atol=1.5e-3, rtol=0, rounding_tol=1e-2)


@exercise("06.2", "The shift matrix")
def ex2(shift_matrix) -> None:
    """``shift_matrix(k, d) -> (d, d)`` with ``PE(p + k) = PE(p) @ M`` for every position p."""
    for k, d in [(1, 4), (3, 8), (10, 16), (7, 64)]:
        result = call_reader(shift_matrix, k, d, name="shift_matrix")
        matrix = to_array(result, "shift_matrix(k, d)")
        if matrix.shape != (d, d):
            raise Wrong(f"shift_matrix({k}, {d}) has shape {matrix.shape}, expected ({d}, {d})")
        table = _table(40 + k, d).numpy()
        shifted = table[:-k] @ matrix
        if np.allclose(shifted, table[k:], atol=1e-6):
            continue
        if np.allclose(table[:-k] @ matrix.T, table[k:], atol=1e-6):
            raise Wrong("your matrix is the transpose: with rows PE(p) @ M the 2×2 block is "
                        "[[cos kω, −sin kω], [sin kω, cos kω]]")
        if np.allclose(table[:-k] @ np.linalg.inv(matrix), table[k:], atol=1e-6):
            raise Wrong("your matrix shifts by −k instead of +k (it is the inverse)")
        raise Wrong(f"PE(p) @ shift_matrix({k}, {d}) differs from PE(p + {k}); build one 2×2 "
                    "rotation block per frequency ω_i = 10000^(−2i/d)")


@exercise("06.3", "RoPE in two dimensions: the score depends on n − m")
def ex3(rope_score_2d) -> None:
    """``rope_score_2d(query (2,), key (2,), n, m, theta) -> float``: the score of the query
    rotated by nθ and the key rotated by mθ."""
    generator = torch.Generator().manual_seed(63)
    for trial in range(20):
        query = torch.randn(2, generator=generator, dtype=torch.float64)
        key = torch.randn(2, generator=generator, dtype=torch.float64)
        n, m = (int(x) for x in torch.randint(0, 50, (2,), generator=generator))
        theta = float(torch.rand((), generator=generator, dtype=torch.float64)) + 0.05
        expected = float(key @ _rotation((n - m) * theta) @ query)  # eq. 12.7, right side
        result = call_reader(rope_score_2d, query.clone(), key.clone(), n, m, theta,
                             name="rope_score_2d")
        value = to_array(result, "rope_score_2d(...)")
        if value.size != 1:
            raise Wrong("rope_score_2d should return one number (a score)")
        value = float(value.reshape(()))
        if trial == 0 and math.isclose(value, float(query @ key), abs_tol=1e-9) and n != m:
            raise Wrong("the score ignores the positions: rotate the query by nθ and the key by mθ")
        if not math.isclose(value, expected, abs_tol=1e-8):
            mirrored = float(key @ _rotation((m - n) * theta) @ query)
            if math.isclose(value, mirrored, abs_tol=1e-8):
                raise Wrong("the rotation goes the wrong way (angle −nθ or R(θ)ᵀ); use "
                            "R(θ) = [[cos θ, −sin θ], [sin θ, cos θ]] applied to column vectors")
            raise Wrong(f"for n = {n}, m = {m}, θ = {theta:.3f} the score should be "
                        f"kᵀ R((n − m)θ) q = {expected:.6f}, got {value:.6f}")


@exercise("06.4", "What positions cost")
def ex4(answer) -> None:
    """``answer``: (parameters of a learned table for n_ctx = 1024, d = 1024; for n_ctx = 2048,
    d = 1024; of RoPE for any size)."""
    expected = (1024 * 1024, 2048 * 1024, 0)
    if not isinstance(answer, tuple | list) or len(answer) != 3:
        raise Wrong("give a tuple of three integers")
    if all(part is None for part in answer):
        raise NotAttempted("fill in the three numbers")
    names = ("the 1,024-position table", "the 2,048-position table", "RoPE")
    for part, target, name in zip(answer, expected, names):
        if part is None:
            raise Wrong(f"the entry for {name} is missing")
        if name == "RoPE" and part != 0:
            raise Wrong("RoPE's angles are fixed functions of the position: it learns nothing")
        expect_number(part, target, name=f"the parameters of {name}")


def equivariance_data() -> tuple[torch.nn.Module, torch.Tensor, torch.Tensor]:
    """The data of exercise 06.5: a seeded ``SelfAttention(d=8, d_k=4)`` layer, ``x (T=5, d=8)``
    and a permutation ``perm (5,)`` of the positions."""
    from tformer.attention import SelfAttention

    with torch.random.fork_rng():  # leave the reader's random state alone
        torch.manual_seed(65)
        layer = SelfAttention(8, 4)
        x = torch.randn(5, 8)
    perm = torch.tensor([3, 0, 4, 1, 2])
    return layer, x, perm


@exercise("06.5", "Equivariance, with and without positions")
def ex5(answer) -> None:
    """``answer``: (largest |layer(x[perm]) − layer(x)[perm]| without positions, the same with
    sinusoidal positions added after permuting)."""
    if not isinstance(answer, tuple | list) or len(answer) != 2:
        raise Wrong("give a pair (difference without positions, difference with positions)")
    if all(part is None for part in answer):
        raise NotAttempted("fill in both differences")
    without, with_positions = (float(to_array(part).reshape(-1)[0]) if to_array(part).size == 1
                               else math.nan for part in answer)
    if math.isnan(without) or math.isnan(with_positions):
        raise Wrong("each entry should be a single number (the largest absolute difference)")
    if without > 1e-5:
        raise Wrong(f"without positions the difference should be ~0 (equivariance), got "
                    f"{without:.3g}: compare layer(x[perm]) with layer(x)[perm]")
    if with_positions < 1e-3:
        raise Wrong("with positions the difference is still ~0: add the *same* table "
                    "PE[0…T−1] to both inputs after permuting — positions do not move with tokens")
    layer, x, perm = equivariance_data()
    table = _table(5, 8).to(x.dtype)
    with torch.no_grad():
        gap = layer(x[perm] + table).outputs - layer(x + table).outputs[perm]
    expect_number(with_positions, float(gap.abs().max()), name="the difference with positions",
                  rel_tol=1e-3, rounding_tol=5e-3)


@exercise("06.6", "How many RoPE pairs complete a turn?")
def ex6(answer) -> None:
    """``answer``: for d_k = 128, base 10000 and L = 4096, the number of pairs i with
    L·θ_i ≥ 2π."""
    thetas = _frequencies(128)
    expected = sum(1 for theta in thetas if 4096 * theta >= 2 * math.pi)
    is_number = isinstance(answer, int | float | np.number) and not isinstance(answer, bool)
    if is_number and int(answer) in (128 - expected, 64 - expected):
        raise Wrong("that counts the pairs that do *not* complete a turn")
    if is_number and int(answer) == expected - 1:
        raise Wrong("off by one: the pairs are numbered from i = 0, so count 0 … i_max")
    expect_number(answer, expected, name="the number of pairs")


def _rope_reference(x: torch.Tensor, positions: torch.Tensor, convention: str) -> torch.Tensor:
    """Rotate each row of ``x (T, d)`` by an explicit ``(d, d)`` rotation matrix built from 2×2
    blocks on the convention's index pairs (an independent construction)."""
    d = x.shape[-1]
    pairs = (
        [(2 * i, 2 * i + 1) for i in range(d // 2)]
        if convention == "interleaved"
        else [(i, i + d // 2) for i in range(d // 2)]
    )
    rows = []
    for row, p in zip(x, positions):
        matrix = torch.eye(d, dtype=torch.float64)
        for i, (a, b) in enumerate(pairs):
            angle = float(p) * 10000.0 ** (-2 * i / d)
            matrix[a, a], matrix[a, b] = math.cos(angle), -math.sin(angle)
            matrix[b, a], matrix[b, b] = math.sin(angle), math.cos(angle)
        rows.append(matrix @ row)
    return torch.stack(rows)


@exercise("06.7", "apply_rope in d dimensions, both pairing conventions")
def ex7(apply_rope) -> None:
    """``apply_rope(x (T, d), positions (T,), convention) -> (T, d)``, ``convention`` in
    ``"interleaved"`` (pairs (2i, 2i+1)) and ``"halves"`` (pairs (i, i + d/2)); base 10000."""
    generator = torch.Generator().manual_seed(67)
    for convention in ("interleaved", "halves"):
        for d, n_positions in ((4, 3), (16, 6)):
            x = torch.randn(n_positions, d, generator=generator, dtype=torch.float64)
            pos = torch.tensor([0, 1, 5, 9, 30, 200][:n_positions])
            expected = _rope_reference(x, pos, convention)
            result = call_reader(apply_rope, x.clone(), pos.clone(), convention, name="apply_rope")
            value = to_array(result, "apply_rope(...)")
            if value.shape != tuple(x.shape):
                raise Wrong(f"apply_rope should return shape {tuple(x.shape)}, got {value.shape}")
            if np.allclose(value, expected.numpy(), atol=1e-8):
                continue
            other = "halves" if convention == "interleaved" else "interleaved"
            setting = f"({convention}, d = {d})"
            if np.allclose(value, _rope_reference(x, pos, other).numpy(), atol=1e-8):
                raise Wrong(f"{setting}: that is the {other} pairing convention; "
                            f"'{convention}' pairs " + ("(2i, 2i+1)" if convention == "interleaved"
                                                        else "(i, i + d/2)"))
            if np.allclose(value, _rope_reference(x, -pos, convention).numpy(), atol=1e-8):
                raise Wrong(f"{setting}: the rotation goes the wrong direction (angle −pθ_i)")
            if np.allclose(value, _rope_reference(x, pos + 1, convention).numpy(), atol=1e-8):
                raise Wrong(f"{setting}: position off by one — positions count from 0, rotate row "
                            "t by its own position")
            if np.allclose(value, x.numpy(), atol=1e-8):
                raise Wrong(f"{setting}: nothing was rotated")
            raise Wrong(f"{setting}: differs from the rotation matrices; check the exponent of "
                        "θ_i = 10000^(−2i/d) (i counts pairs from 0)")


def _rope_variant(kind: str):
    def rope(x, positions, convention):
        d = x.shape[-1]
        i = torch.arange(d // 2, dtype=torch.float64)
        exponent = {"exponent": 2 * (i + 1) / d}.get(kind, 2 * i / d)
        pos = positions.to(torch.float64) + (1 if kind == "offset" else 0)
        angles = pos[:, None] * 10000.0 ** (-exponent)
        if kind == "mixed":
            convention = "interleaved"
        if convention == "interleaved":
            a, b = x[:, 0::2], x[:, 1::2]
        else:
            a, b = x[:, : d // 2], x[:, d // 2 :]
        ra, rb = a * angles.cos() - b * angles.sin(), a * angles.sin() + b * angles.cos()
        out = torch.empty_like(x)
        if convention == "interleaved":
            out[:, 0::2], out[:, 1::2] = ra, rb
        else:
            out[:, : d // 2], out[:, d // 2 :] = ra, rb
        return out

    return rope


def _encoding(*values):
    return np.array(values)


_FREQUENCIES_128 = _frequencies(128)
_TURNS = sum(1 for theta in _FREQUENCIES_128 if 4096 * theta >= 2 * math.pi)

MISTAKES: dict[str, list[Mistake]] = {
    "06.1": [
        Mistake("sine and cosine swapped", lambda: _encoding(math.cos(2), math.sin(2), math.cos(0.02),
                                                            math.sin(0.02)), hint="swapped"),
        Mistake("frequency exponent i/d", lambda: _encoding(
            math.sin(2), math.cos(2), math.sin(2 * 10000**-0.25), math.cos(2 * 10000**-0.25)),
            hint="10000^(−2·1/4)"),
    ],
    "06.2": [
        Mistake("transposed block", lambda: lambda k, d: _shift_matrix_variant(k, d, transpose=True),
                hint="transpose"),
        Mistake("shift by −k", lambda: lambda k, d: _shift_matrix_variant(k, d, inverse=True),
                hint="transpose"),
    ],
    "06.3": [
        Mistake("positions ignored", lambda: lambda q, k, n, m, theta: float(q @ k),
                hint="ignores the positions"),
        Mistake("rotation the wrong way", lambda: lambda q, k, n, m, theta: float(
            k @ _rotation((m - n) * theta) @ q), hint="wrong way"),
    ],
    "06.4": [
        Mistake("RoPE given parameters", lambda: (1024 * 1024, 2048 * 1024, 128), hint="learns nothing"),
        Mistake("one number instead of three", lambda: 1024 * 1024, hint="tuple of three"),
    ],
    "06.5": [
        Mistake("compared without permuting", lambda: (0.5, 0.4), hint="equivariance"),
        Mistake("positions moved with the tokens", lambda: (0.0, 0.0), hint="still ~0"),
    ],
    "06.6": [
        Mistake("counted the other pairs", lambda: 64 - _TURNS, hint="do *not* complete"),
        Mistake("off by one", lambda: _TURNS - 1, hint="off by one"),
    ],
    "06.7": [
        Mistake("pairs vs halves mixed", lambda: _rope_variant("mixed"), hint="pairing convention"),
        Mistake("exponent 2(i+1)/d", lambda: _rope_variant("exponent"), hint="exponent"),
        Mistake("position offset by one", lambda: _rope_variant("offset"), hint="off by one"),
    ],
}


def _shift_matrix_variant(k: int, d: int, *, transpose: bool = False, inverse: bool = False):
    matrix = torch.zeros(d, d, dtype=torch.float64)
    for i, omega in enumerate(_frequencies(d)):
        angle = -k * omega if inverse else k * omega
        block = torch.tensor([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
        matrix[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = block.T if transpose else block
    return matrix
