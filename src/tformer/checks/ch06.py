"""Checkers for chapter 6, *Positions: sinusoidal, learned and rotary*.

Expected values are computed here from the formulas with plain ``math``/``torch`` — never with
:mod:`tformer.positions`, the code under study. Tokens are rows; the sinusoidal table is the
chapter's (``PE[p, 2i] = sin(p ω_i)``, ``PE[p, 2i+1] = cos(p ω_i)``, ``ω_i = 10000^(−2i/d)``).
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


def _table_concat(n_positions: int, d: int) -> torch.Tensor:
    """The sines-then-cosines layout: ``(sin pω_0 … sin pω_{d/2−1}, cos pω_0 … cos pω_{d/2−1})``."""
    table = _table(n_positions, d)
    return torch.cat((table[:, 0::2], table[:, 1::2]), dim=1)


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


@exercise("06.2", "The shift matrix of the sines-then-cosines layout")
def ex2(shift_matrix) -> None:
    """``shift_matrix(k, d) -> (d, d)`` with ``PE'(p + k) = PE'(p) @ M`` for every position p, where
    ``PE'`` holds all sines first, then all cosines."""
    for k, d in [(1, 4), (3, 8), (10, 16), (7, 64)]:
        result = call_reader(shift_matrix, k, d, name="shift_matrix")
        matrix = to_array(result, "shift_matrix(k, d)")
        if matrix.shape != (d, d):
            raise Wrong(f"shift_matrix({k}, {d}) has shape {matrix.shape}, expected ({d}, {d})")
        table = _table_concat(40 + k, d).numpy()
        if np.allclose(table[:-k] @ matrix, table[k:], atol=1e-6):
            continue
        interleaved = _table(40 + k, d).numpy()
        if np.allclose(interleaved[:-k] @ matrix, interleaved[k:], atol=1e-6):
            raise Wrong("that is the chapter's matrix for the interleaved layout (sin, cos pairs "
                        "side by side); here coordinate i and i + d/2 form a pair, so cos kω_i and "
                        "sin kω_i sit on the diagonals of four (d/2 × d/2) blocks")
        if np.allclose(table[:-k] @ matrix.T, table[k:], atol=1e-6):
            raise Wrong("your matrix is the transpose: with rows PE'(p) @ M the blocks are "
                        "[[C, −S], [S, C]], C = diag(cos kω_i), S = diag(sin kω_i)")
        if np.allclose(table[:-k] @ np.linalg.inv(matrix), table[k:], atol=1e-6):
            raise Wrong("your matrix shifts by −k instead of +k (it is the inverse)")
        raise Wrong(f"PE'(p) @ shift_matrix({k}, {d}) differs from PE'(p + {k}); pair sin pω_i "
                    "(coordinate i) with cos pω_i (coordinate i + d/2), ω_i = 10000^(−2i/d)")


@exercise("06.3", "RoPE in two dimensions: the score from the offset alone")
def ex3(score_from_offset) -> None:
    """``score_from_offset(query (2,), key (2,), delta, theta) -> float``: the RoPE score of a query
    at n and a key at m with n − m = delta, written without rotation matrices."""
    generator = torch.Generator().manual_seed(63)
    for _trial in range(20):
        query = torch.randn(2, generator=generator, dtype=torch.float64)
        key = torch.randn(2, generator=generator, dtype=torch.float64)
        n, m = (int(x) for x in torch.randint(0, 50, (2,), generator=generator))
        theta = float(torch.rand((), generator=generator, dtype=torch.float64)) + 0.05
        expected = float((_rotation(m * theta) @ key) @ (_rotation(n * theta) @ query))
        result = call_reader(score_from_offset, query.clone(), key.clone(), n - m, theta,
                             name="score_from_offset")
        value = to_array(result, "score_from_offset(...)")
        if value.size != 1:
            raise Wrong("score_from_offset should return one number (a score)")
        value = float(value.reshape(()))
        if math.isclose(value, expected, abs_tol=1e-8):
            continue
        if n != m and math.isclose(value, float(query @ key), abs_tol=1e-9):
            raise Wrong("the score ignores the offset: rotating q by nθ and k by mθ changes it")
        phi, dot = (n - m) * theta, float(query @ key)
        cross = float(query[0] * key[1] - query[1] * key[0])
        if math.isclose(value, dot * math.cos(phi) - cross * math.sin(phi), abs_tol=1e-8):
            raise Wrong("the sign of the sine term is flipped (that is the score for m − n): "
                        "expand kᵀ R(φ) q with R(φ) = [[cos φ, −sin φ], [sin φ, cos φ]]")
        no_theta = dot * math.cos(n - m) + cross * math.sin(n - m)
        if math.isclose(value, no_theta, abs_tol=1e-8):
            raise Wrong("the angle is (n − m)·θ, not n − m radians")
        raise Wrong(f"for n − m = {n - m}, θ = {theta:.3f} the score should be {expected:.6f}, "
                    f"got {value:.6f}")


_COSTS = (2048 * 1024, 16 * 32, 0, 0)


@exercise("06.4", "What positions cost")
def ex4(answer) -> None:
    """``answer``: parameters spent on positions by a 24-layer model with d = 1024, h = 16 and a
    2,048-token context, for (a learned table, T5 biases with 32 buckets, ALiBi, RoPE)."""
    if not isinstance(answer, tuple | list) or len(answer) != 4:
        raise Wrong("give a tuple of four integers (learned table, T5 biases, ALiBi, RoPE)")
    if all(part is None for part in answer):
        raise NotAttempted("fill in the four numbers")
    names = ("the learned table", "the T5 biases", "ALiBi", "RoPE")
    for part, target, name in zip(answer, _COSTS, names):
        if part is None:
            raise Wrong(f"the entry for {name} is missing")
        if name == "the learned table" and part == 1024 * 1024:
            raise Wrong("the context is 2,048 tokens: one row of d numbers per position")
        if name == "the T5 biases" and part == 24 * 16 * 32:
            raise Wrong("T5's table is shared by all layers: count it once, not per layer")
        if name == "the T5 biases" and part == 32:
            raise Wrong("every head has its own scalar per bucket")
        if name in ("ALiBi", "RoPE") and part != 0:
            raise Wrong(f"{name} learns nothing: its slopes or angles are fixed numbers")
        expect_number(part, target, name=f"the parameters of {name}")


def shift_data() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The data of exercise 06.5: token vectors ``x (T=5, d=8)`` and one head's projections
    ``W_Q``, ``W_K`` ``(d=8, d_k=8)`` (row convention, ``q = x @ W_Q``), seeded."""
    generator = torch.Generator().manual_seed(65)
    x, w_q, w_k = torch.randn(3, 8, 8, generator=generator, dtype=torch.float64)
    return x[:5], w_q / math.sqrt(8), w_k / math.sqrt(8)


def _rope_rows(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    return _rope_reference(x, positions, "interleaved")


def _shift_gaps(*, shift_queries_only: bool = False, same_table: bool = False):
    x, w_q, w_k = shift_data()
    start, moved = torch.arange(5), torch.arange(100, 105)

    def rope_scores(pos_q, pos_k):
        return _rope_rows(x @ w_q, pos_q) @ _rope_rows(x @ w_k, pos_k).T

    rope_gap = rope_scores(moved, start if shift_queries_only else moved) - rope_scores(start, start)
    table = _table(105, 8)

    def added_scores(rows):
        z = x + rows
        return (z @ w_q) @ (z @ w_k).T

    later = table[:5] if same_table else table[100:105]
    table_gap = added_scores(later) - added_scores(table[:5])
    return float(rope_gap.abs().max()), float(table_gap.abs().max())


@exercise("06.5", "Shift every position: RoPE against an added table")
def ex5(answer) -> None:
    """``answer``: (largest score change when every position moves from 0…4 to 100…104 under RoPE,
    the same with the sinusoidal table added to the token vectors instead)."""
    if not isinstance(answer, tuple | list) or len(answer) != 2:
        raise Wrong("give a pair (change under RoPE, change with the added table)")
    if all(part is None for part in answer):
        raise NotAttempted("fill in both differences")
    rope, added = (float(to_array(part).reshape(-1)[0]) if to_array(part).size == 1
                   else math.nan for part in answer)
    if math.isnan(rope) or math.isnan(added):
        raise Wrong("each entry should be a single number (the largest absolute difference)")
    if rope > 1e-6:
        raise Wrong(f"under RoPE the change should be ~0, got {rope:.3g}: move the queries *and* "
                    "the keys to positions 100 … 104 — only n − m matters")
    if added < 1e-3:
        raise Wrong("with the added table the change is still ~0: add the rows of positions "
                    "100 … 104 the second time, not those of 0 … 4")
    expect_number(added, _shift_gaps()[1], name="the change with the added table",
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
        Mistake("the interleaved matrix of the chapter", lambda: lambda k, d: _shift_matrix_variant(k, d),
                hint="interleaved layout"),
        Mistake("transposed blocks", lambda: lambda k, d: _shift_matrix_variant(
            k, d, transpose=True, concat=True), hint="transpose"),
        Mistake("shift by −k", lambda: lambda k, d: _shift_matrix_variant(k, d, inverse=True, concat=True),
                hint="transpose"),
    ],
    "06.3": [
        Mistake("offset ignored", lambda: lambda q, k, delta, theta: float(q @ k),
                hint="ignores the offset"),
        Mistake("sine term with the wrong sign", lambda: lambda q, k, delta, theta: float(
            q @ k) * math.cos(delta * theta) - float(q[0] * k[1] - q[1] * k[0]) * math.sin(
            delta * theta), hint="sign of the sine term"),
        Mistake("angle without θ", lambda: lambda q, k, delta, theta: float(q @ k) * math.cos(
            delta) + float(q[0] * k[1] - q[1] * k[0]) * math.sin(delta), hint="not n − m radians"),
    ],
    "06.4": [
        Mistake("T5 table counted per layer", lambda: (2048 * 1024, 24 * 16 * 32, 0, 0),
                hint="shared by all layers"),
        Mistake("context of 1,024", lambda: (1024 * 1024, 512, 0, 0), hint="2,048 tokens"),
        Mistake("RoPE given parameters", lambda: (2048 * 1024, 512, 0, 128), hint="learns nothing"),
    ],
    "06.5": [
        Mistake("only the queries moved", lambda: _shift_gaps(shift_queries_only=True),
                hint="*and* the keys"),
        Mistake("table of the old positions", lambda: _shift_gaps(same_table=True),
                hint="100 … 104"),
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


def _shift_matrix_variant(k: int, d: int, *, transpose: bool = False, inverse: bool = False,
                          concat: bool = False):
    matrix = torch.zeros(d, d, dtype=torch.float64)
    half = d // 2
    for i, omega in enumerate(_frequencies(d)):
        angle = -k * omega if inverse else k * omega
        block = torch.tensor([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
        block = block.T if transpose else block
        index = [i, i + half] if concat else [2 * i, 2 * i + 1]
        for a in range(2):
            for b in range(2):
                matrix[index[a], index[b]] = block[a, b]
    return matrix
