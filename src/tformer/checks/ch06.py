"""Checkers for chapter 6, *Positions: sinusoidal, learned and rotary*.

Expected values are computed here from the formulas with plain ``math``/``torch`` — never with
:mod:`tformer.positions`, the code under study. Tokens are rows; the sinusoidal table is the
chapter's (``PE[p, 2i] = sin(p ω_i)``, ``PE[p, 2i+1] = cos(p ω_i)``, ``ω_i = 10000^(−2i/d)``).

Before the generic comparison each checker compares the answer with the family of wrong variants
a learner plausibly produces, computed from the exercise's own data — the factor 2 of the
exponent dropped, the pairs counted from 1, the position multiplied by the frequency's inverse,
the other layout or pairing, the rotation transposed or reversed, the positions ignored, a term
of the expansion left out, a count per layer, a mean for a maximum — and names what matches.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

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

# The frequency rules a learner may use for pair i of d coordinates (None: the right one).
_FREQUENCY_RULES: dict[str, Callable[[int, int], float]] = {
    "right": lambda i, d: 10000.0 ** (-2 * i / d),
    "no 2": lambda i, d: 10000.0 ** (-i / d),
    "from 1": lambda i, d: 10000.0 ** (-2 * (i + 1) / d),
    "multiplied": lambda i, d: 10000.0 ** (2 * i / d),
}


def _frequencies(d: int, base: float = 10000.0, rule: str = "right") -> list[float]:
    if rule == "right":
        return [base ** (-2 * i / d) for i in range(d // 2)]
    return [_FREQUENCY_RULES[rule](i, d) for i in range(d // 2)]


def _table(n_positions: int, d: int, rule: str = "right") -> torch.Tensor:
    rows = []
    for p in range(n_positions):
        row = []
        for omega in _frequencies(d, rule=rule):
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


def _joined(parts: list[str], limit: int = 290) -> str:
    """The hints of the wrong choices that match, joined by "; " — as many as fit in a verdict
    (the first, the most basic, always)."""
    text = parts[0]
    for part in parts[1:]:
        if len(text) + 2 + len(part) > limit:
            break
        text += "; " + part
    return text


# ---------------------------------------------------------------------------------------------
# 06.1

_POSITIONS_1 = {2: None, 1: "that is the encoding of p = 1: positions count from 0, so position "
                "2 is p = 2", 3: "that is the encoding of p = 3: positions count from 0, so "
                "position 2 is p = 2"}
_RULES_1 = {
    "right": None,
    "no 2": "the second pair has i = 1, so its frequency is 10000^(−2·1/4) = 0.01",
    "from 1": "the pairs are numbered from i = 0, so the first pair turns at frequency "
              "10000^0 = 1",
    "multiplied": "the position is divided by 10000^(2i/d): the second pair's angle is 2/100 = "
                  "0.02, not 2 × 100",
}
_LAYOUTS_1 = {
    "interleaved": None,
    "concat": "that is the sines-then-cosines layout, but the chapter interleaves the pairs: "
              "(sin pω_0, cos pω_0, sin pω_1, cos pω_1)",
    "swapped": "sine and cosine are swapped: even coordinates (0, 2) hold the sines",
}
_UNITS_1 = {"radians": None, "degrees": "math.sin takes radians: the angles p·ω_i are in "
            "radians, not degrees"}


def _encoding_1(p: int, rule: str, layout: str, unit: str) -> np.ndarray:
    angles = [p * omega for omega in _frequencies(4, rule=rule)]
    if unit == "degrees":
        angles = [math.radians(angle) for angle in angles]
    sines, cosines = [math.sin(a) for a in angles], [math.cos(a) for a in angles]
    if layout == "concat":
        return np.array(sines + cosines)
    pairs = zip(cosines, sines) if layout == "swapped" else zip(sines, cosines)
    return np.array([x for pair in pairs for x in pair])


@exercise("06.1", "A sinusoidal encoding by hand")
def ex1(answer) -> None:
    """``answer``: the encoding of position p = 2 for d = 4, four numbers."""
    expected = _table(3, 4)[2]  # (sin 2, cos 2, sin 0.02, cos 0.02)
    value = to_array(answer, "the encoding of position 2")
    if value.shape == (4,) and not np.allclose(value, expected.numpy(), atol=1.5e-3):
        variants = []
        for p, rule, layout, unit in itertools.product(_POSITIONS_1, _RULES_1, _LAYOUTS_1,
                                                       _UNITS_1):
            parts = [hint for hint in (_POSITIONS_1[p], _RULES_1[rule], _LAYOUTS_1[layout],
                                       _UNITS_1[unit]) if hint]
            if parts:
                variants.append((_encoding_1(p, rule, layout, unit), parts))
        for variant, parts in sorted(variants, key=lambda variant: len(variant[1])):
            if not np.allclose(variant, expected.numpy(), atol=2e-3) and np.allclose(
                    value, variant, atol=2e-3):
                raise Wrong(_joined(parts))
    expect_tensor(value, expected, name="the encoding of position 2", axes=("dimensions",),
                  atol=1.5e-3, rtol=0, rounding_tol=1e-2)


# ---------------------------------------------------------------------------------------------
# 06.2

_RULES_2 = {
    "right": None,
    "no 2": "the frequencies are ω_i = 10000^(−2i/d): with 10000^(−i/d) every pair but the first "
            "turns by the wrong angle",
    "from 1": "the pairs are numbered i = 0 … d/2 − 1, so pair 0 turns at frequency "
              "10000^0 = 1",
    "ones": "pair i turns by the angle k·ω_i, not by k",
}
_LAYOUTS_2 = {
    "halves": None,
    "interleaved": "that is the chapter's matrix for the interleaved layout: here coordinates i "
                   "and i + d/2 form a pair, so cos kω_i and sin kω_i sit on the diagonals of "
                   "four (d/2 × d/2) blocks",
}
_ORIENTATIONS_2 = {
    "right": None,
    "transposed": "your matrix is the transpose: with rows PE'(p) @ M the blocks are "
                  "[[C, −S], [S, C]], C = diag(cos kω_i), S = diag(sin kω_i)",
}
_SHIFTS_2 = {"k": None, "1": "the matrix ignores k: it shifts by one position whatever k is"}


def _shift_matrix_of(k: float, d: int, rule: str = "right", layout: str = "halves",
                     orientation: str = "right") -> np.ndarray:
    matrix = np.zeros((d, d))
    omegas = [1.0] * (d // 2) if rule == "ones" else _frequencies(d, rule=rule)
    for i, omega in enumerate(omegas):
        c, s = math.cos(k * omega), math.sin(k * omega)
        block = np.array([[c, -s], [s, c]])
        if orientation == "transposed":
            block = block.T
        index = [i, i + d // 2] if layout == "halves" else [2 * i, 2 * i + 1]
        for a in range(2):
            for b in range(2):
                matrix[index[a], index[b]] = block[a, b]
    return matrix


def _shift_hint(matrix: np.ndarray, k: int, d: int) -> str | None:
    """The hint of the wrong construction whose matrix equals the reader's, if any."""
    right = _shift_matrix_of(k, d)
    variants = []
    for rule, layout, orientation, shift in itertools.product(_RULES_2, _LAYOUTS_2,
                                                              _ORIENTATIONS_2, _SHIFTS_2):
        parts = [hint for hint in (_RULES_2[rule], _LAYOUTS_2[layout], _ORIENTATIONS_2[orientation],
                                   _SHIFTS_2[shift]) if hint]
        if parts:
            variants.append((_shift_matrix_of(1 if shift == "1" else k, d, rule, layout,
                                              orientation), parts))
    for variant, parts in sorted(variants, key=lambda variant: len(variant[1])):
        if not np.allclose(variant, right, atol=1e-6) and np.allclose(matrix, variant, atol=1e-6):
            return _joined(parts)
    return None


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
        hint = _shift_hint(matrix, k, d)
        if hint:
            raise Wrong(hint)
        interleaved = _table(40 + k, d).numpy()
        if np.allclose(interleaved[:-k] @ matrix, interleaved[k:], atol=1e-6):
            raise Wrong(_LAYOUTS_2["interleaved"])
        if np.allclose(table[:-k] @ matrix.T, table[k:], atol=1e-6):
            raise Wrong(_ORIENTATIONS_2["transposed"])
        if np.allclose(table[:-k] @ np.linalg.pinv(matrix), table[k:], atol=1e-6):
            raise Wrong("your matrix shifts by −k instead of +k (it is the inverse)")
        raise Wrong(f"PE'(p) @ shift_matrix({k}, {d}) differs from PE'(p + {k}); pair sin pω_i "
                    "(coordinate i) with cos pω_i (coordinate i + d/2), ω_i = 10000^(−2i/d)")


# ---------------------------------------------------------------------------------------------
# 06.3


def _offset_variants(query: torch.Tensor, key: torch.Tensor, delta: int,
                     theta: float) -> list[tuple[float, str]]:
    """The scores of the wrong expansions of kᵀ R(δθ) q, each with its hint."""
    phi, dot = delta * theta, float(query @ key)
    cross = float(query[0] * key[1] - query[1] * key[0])
    plus = float(query[0] * key[1] + query[1] * key[0])
    return [
        (dot, "the score ignores the offset: rotating q by nθ and k by mθ changes it"),
        (dot * math.cos(phi) - cross * math.sin(phi), "the sign of the sine term is flipped "
         "(that is the score for m − n): expand kᵀ R(φ) q with R(φ) = [[cos φ, −sin φ], "
         "[sin φ, cos φ]]"),
        (dot * math.cos(delta) + cross * math.sin(delta), "the angle is (n − m)·θ, not n − m "
         "radians"),
        (dot * math.cos(phi), "the b sin δθ term is missing: b = q₁k₂ − q₂k₁, which vanishes only "
         "when q and k are parallel"),
        (cross * math.sin(phi), "the a cos δθ term is missing: a = q·k"),
        (dot * math.sin(phi) + cross * math.cos(phi), "a goes with the cosine and b with the sine: "
         "at δ = 0 the score must be q·k"),
        (dot * math.cos(phi) + plus * math.sin(phi), "b is the 2-D cross product q₁k₂ − q₂k₁, with "
         "a minus sign"),
        (dot * math.cos(delta) - cross * math.sin(delta), "the angle is (n − m)·θ, not n − m "
         "radians, and the sine term has the wrong sign (expand kᵀ R(φ) q)"),
        (dot * math.cos(phi / theta**2) + cross * math.sin(phi / theta**2), "the angle is "
         "(n − m)·θ, not (n − m)/θ"),
    ]


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
        for variant, hint in _offset_variants(query, key, n - m, theta):
            if not math.isclose(variant, expected, abs_tol=1e-8) and math.isclose(
                    value, variant, abs_tol=1e-8):
                raise Wrong(hint)
        raise Wrong(f"for n − m = {n - m}, θ = {theta:.3f} the score should be {expected:.6f}, "
                    f"got {value:.6f}")


# ---------------------------------------------------------------------------------------------
# 06.4

_L_4, _D_4, _H_4, _CONTEXT_4, _BUCKETS_4 = 24, 1024, 16, 2048, 32
_COSTS = (_CONTEXT_4 * _D_4, _BUCKETS_4 * _H_4, 0, 0)
_NAMES_4 = ("the learned table", "the T5 biases", "ALiBi", "RoPE")
_WRONG_COUNTS_4: dict[str, dict[int, str]] = {
    "the learned table": {
        1024 * 1024: "the context is 2,048 tokens: one row of d numbers per position",
        _L_4 * _CONTEXT_4 * _D_4: "a learned table is added once, to the input embeddings: "
                                  "count it once, not per layer",
        _CONTEXT_4: "each position has a whole row of d = 1,024 numbers, not one",
        _CONTEXT_4 * _D_4 // _H_4: "the table is added to the token vectors of width d = 1,024, "
                                   "not to one head's d_k",
    },
    "the T5 biases": {
        _L_4 * _H_4 * _BUCKETS_4: "T5's table is shared by all layers: count it once, not per "
                                  "layer",
        _BUCKETS_4: "every head has its own scalar per bucket",
        _BUCKETS_4 * _D_4: "a T5 bias is one scalar per bucket and head, not a vector of d",
        _CONTEXT_4 * _H_4: "T5 buckets the distances: 32 buckets per head, not one bias per "
                           "position",
        (2 * _CONTEXT_4 - 1) * _H_4: "T5 buckets the distances: 32 buckets per head, not one "
                                     "bias per relative distance",
    },
}


@exercise("06.4", "What positions cost")
def ex4(answer) -> None:
    """``answer``: parameters spent on positions by a 24-layer model with d = 1024, h = 16 and a
    2,048-token context, for (a learned table, T5 biases with 32 buckets, ALiBi, RoPE)."""
    if not isinstance(answer, tuple | list) or len(answer) != 4:
        raise Wrong("give a tuple of four integers (learned table, T5 biases, ALiBi, RoPE)")
    if all(part is None for part in answer):
        raise NotAttempted("fill in the four numbers")
    numbers = [part for part in answer if isinstance(part, int | float | np.number)
               and not isinstance(part, bool)]
    if len(numbers) == 4 and [float(x) for x in numbers] != [float(x) for x in _COSTS] and sorted(
            float(x) for x in numbers) == sorted(float(x) for x in _COSTS):
        raise Wrong("the right four counts in the wrong order: give (learned table, T5 biases, "
                    "ALiBi, RoPE)")
    for part, target, name in zip(answer, _COSTS, _NAMES_4):
        if part is None:
            raise Wrong(f"the entry for {name} is missing")
        if isinstance(part, int | float | np.number) and not isinstance(part, bool):
            for count, hint in _WRONG_COUNTS_4.get(name, {}).items():
                if part == count:
                    raise Wrong(hint)
        if name in ("ALiBi", "RoPE") and isinstance(part, int | float | np.number) and part != 0:
            raise Wrong(f"{name} learns nothing: its slopes or angles are fixed numbers")
        expect_number(part, target, name=f"the parameters of {name}", integer=True)


# ---------------------------------------------------------------------------------------------
# 06.5


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


def _shift_variants() -> tuple[list[tuple[float, str]], list[tuple[float, str]]]:
    """The RoPE and added-table differences of the wrong recipes, each with its hint."""
    x, w_q, w_k = shift_data()
    start, moved = torch.arange(5), torch.arange(100, 105)
    table = _table(105, 8)

    def rope(q_pos, k_pos):
        return _rope_rows(x @ w_q, q_pos) @ _rope_rows(x @ w_k, k_pos).T

    def rope_queries_only(pos):
        return _rope_rows(x @ w_q, pos) @ (x @ w_k).T

    def rope_keys_only(pos):
        return (x @ w_q) @ _rope_rows(x @ w_k, pos).T

    def rope_on_x(pos):
        z = _rope_rows(x, pos)
        return (z @ w_q) @ (z @ w_k).T

    def added(rows):
        z = x + rows
        return (z @ w_q) @ (z @ w_k).T

    def added_after(rows):
        return (x @ w_q + rows) @ (x @ w_k + rows).T

    rope_gaps = [
        ((rope(moved, start) - rope(start, start)).abs().max(), "under RoPE the change should be "
         "~0: you moved only the queries; move the queries *and* the keys to positions 100 … 104 "
         "— only n − m matters"),
        ((rope(start, moved) - rope(start, start)).abs().max(), "under RoPE the change should be "
         "~0: you moved only the keys; move the queries *and* the keys to positions 100 … 104"),
        ((rope_queries_only(moved) - rope_queries_only(start)).abs().max(), "under RoPE the "
         "change should be ~0: you rotated only the queries; rotate the keys too, by their own "
         "positions — only n − m matters"),
        ((rope_keys_only(moved) - rope_keys_only(start)).abs().max(), "under RoPE the change "
         "should be ~0: you rotated only the keys; rotate the queries too, by their own "
         "positions — only n − m matters"),
        ((rope_on_x(moved) - rope_on_x(start)).abs().max(), "under RoPE the change should be ~0: "
         "you rotated the token vectors x before projecting; RoPE rotates q = x W_Q and "
         "k = x W_K, after the projections"),
    ]
    right = added(table[100:105]) - added(table[:5])
    after = added_after(table[100:105]) - added_after(table[:5])
    added_gaps = [
        (after.abs().max(), "add the rows to x before projecting, as the statement asks: "
         "z = x + PE, then q = z W_Q and k = z W_K"),
        (right.abs().mean(), "that is the mean absolute difference; give the largest, "
         ".abs().max()"),
        (after.abs().mean(), "that is the mean absolute difference, with the rows added after "
         "projecting; add them to x, and give the largest difference, .abs().max()"),
        (right.max(), "that is the largest signed difference; take the absolute value first, "
         ".abs().max()"),
    ]
    return ([(float(gap), hint) for gap, hint in rope_gaps],
            [(float(gap), hint) for gap, hint in added_gaps])


# RoPE's change is 0 in exact arithmetic: float32 rounding at positions near 100 leaves ~1e-5.
_ROPE_ZERO = 1e-3


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
    expected_added = _shift_gaps()[1]
    rope_variants, added_variants = _shift_variants()
    if rope > _ROPE_ZERO and added < _ROPE_ZERO and math.isclose(rope, expected_added,
                                                                 rel_tol=1e-3):
        raise Wrong("the pair is (change under RoPE, change with the added table): yours is the "
                    "other way round")
    if rope > _ROPE_ZERO:
        for gap, hint in rope_variants:
            if math.isclose(rope, gap, rel_tol=1e-3):
                raise Wrong(hint)
        raise Wrong(f"under RoPE the change should be ~0, got {rope:.3g}: move the queries *and* "
                    "the keys to positions 100 … 104 — only n − m matters")
    if added < 1e-3:
        raise Wrong("with the added table the change is still ~0: add the rows of positions "
                    "100 … 104 the second time, not those of 0 … 4")
    if not math.isclose(added, expected_added, rel_tol=1e-3):
        for gap, hint in added_variants:
            if math.isclose(added, gap, rel_tol=1e-3):
                raise Wrong(hint)
    expect_number(added, expected_added, name="the change with the added table",
                  rel_tol=1e-3, rounding_tol=5e-3)


# ---------------------------------------------------------------------------------------------
# 06.6

_D_K_6, _L_6 = 128, 4096


def _turning_pairs(angle: float = 2 * math.pi, exponent: float = 2.0) -> int:
    """How many pairs i = 0 … 63 satisfy L·θ_i ≥ angle, with θ_i = 10000^(−exponent·i/d_k)."""
    return sum(1 for i in range(_D_K_6 // 2)
               if _L_6 * 10000.0 ** (-exponent * i / _D_K_6) >= angle)


def _bound_6(angle: float = 2 * math.pi, exponent: float = 2.0) -> float:
    """The real bound on i from solving L·10000^(−exponent·i/d_k) = angle by hand."""
    return _D_K_6 / exponent * math.log(_L_6 / angle) / math.log(10000)


@exercise("06.6", "How many RoPE pairs complete a turn?")
def ex6(answer) -> None:
    """``answer``: for d_k = 128, base 10000 and L = 4096, the number of pairs i with
    L·θ_i ≥ 2π."""
    expected = _turning_pairs()
    is_number = (isinstance(answer, int | float | np.number) and not isinstance(answer, bool)) or (
        isinstance(answer, torch.Tensor) and answer.numel() == 1 and not answer.is_complex())
    if is_number and math.isfinite(float(answer)):
        value = float(answer)
        if value != int(value):
            if math.isclose(value, _bound_6(), rel_tol=1e-3):
                raise Wrong(f"{value:.4g} is the bound on i, not a count: the pairs i = 0 … "
                            f"{math.floor(_bound_6())} satisfy it, so there are {expected} (an "
                            "integer)")
            if math.isclose(value, _bound_6() + 1, rel_tol=1e-3):
                raise Wrong(f"{value:.4g} is not a whole number: count the pairs i = 0 … "
                            f"{math.floor(_bound_6())}, an integer")
        wrong_counts = {
            _D_K_6 // 2 - expected: "that counts the pairs that do *not* complete a turn",
            _D_K_6 - expected: "that counts the pairs that do *not* complete a turn",
            expected - 1: "off by one: the pairs are numbered from i = 0, so count 0 … i_max",
            math.floor(_bound_6(exponent=1.0)) + 1: "that solves with θ_i = 10000^(−i/d_k): the "
            "exponent is −2i/d_k = −i/64, and there are only 64 pairs",
            _D_K_6 // 2: "not every pair turns: the slowest, θ_63 = 10000^(−126/128), turns "
                         f"{_L_6 * 10000.0 ** (-126 / 128) / (2 * math.pi):.2f} times in 4,096 "
                         "tokens",
            _turning_pairs(angle=1.0): "a full turn is 2π radians: L·θ_i ≥ 2π, not ≥ 1",
            _turning_pairs(angle=math.pi): "a full turn is 2π radians: L·θ_i ≥ 2π, not ≥ π (half "
                                           "a turn)",
            2 * expected: "that counts coordinates; each pair has two, so count the pairs",
        }
        if value in wrong_counts and value != expected:
            raise Wrong(wrong_counts[int(value)])
    expect_number(answer, expected, name="the number of pairs", integer=True)


# ---------------------------------------------------------------------------------------------
# 06.7


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


def _rope_elementwise(x: torch.Tensor, positions: torch.Tensor, pairing: str, angles_for: str,
                      direction: int, rule: str) -> torch.Tensor:
    """``x ⊙ cos + rot(x) ⊙ sin`` with the choices a learner makes: which coordinates ``rot``
    pairs, for which pairing the angles are laid out, the sense of the rotation and the
    frequency rule."""
    d = x.shape[-1]
    theta = torch.tensor(_frequencies(d, rule=rule), dtype=torch.float64)
    angles = positions.to(torch.float64)[:, None] * theta * direction
    if angles_for == "interleaved":
        cos, sin = angles.cos().repeat_interleave(2, -1), angles.sin().repeat_interleave(2, -1)
    else:
        cos, sin = angles.cos().repeat(1, 2), angles.sin().repeat(1, 2)
    if pairing == "interleaved":
        rot = torch.stack((-x[:, 1::2], x[:, 0::2]), dim=-1).reshape(x.shape)
    else:
        rot = torch.cat((-x[:, d // 2:], x[:, : d // 2]), dim=-1)
    return x * cos + rot * sin


_PAIRS_7 = {"interleaved": "(2i, 2i+1)", "halves": "(i, i + d/2)"}
_LAYOUT_HINTS_7 = {
    "interleaved": "the pairs are right, but cos and sin are laid out for 'halves': for "
                   "'interleaved' pair i is (2i, 2i+1), so repeat each angle twice in a row, "
                   "θ_0, θ_0, θ_1, θ_1, … (repeat_interleave)",
    "halves": "the pairs are right, but cos and sin are laid out for 'interleaved': for 'halves' "
              "pair i is (i, i + d/2), so repeat the angles as a block, "
              "[θ_0 … θ_{d/2−1}, θ_0 … θ_{d/2−1}] (repeat)",
}


def _rope_hint(value: np.ndarray, x: torch.Tensor, pos: torch.Tensor, convention: str) -> str | None:
    """The hint of the wrong elementwise recipe whose output equals the reader's, if any."""
    other = "halves" if convention == "interleaved" else "interleaved"
    expected = _rope_reference(x, pos, convention).numpy()
    positions = {"given": None,
                 "arange": "the positions argument is ignored: rotate row t by positions[t], not by t",
                 "plus 1": "position off by one — positions count from 0, rotate row t by its own "
                           "position"}
    layouts = {convention: None, other: _LAYOUT_HINTS_7[convention]}
    pairings = {convention: None, other: f"that is the {other} pairing convention: '{convention}' "
                f"pairs {_PAIRS_7[convention]}"}
    directions = {1: None, -1: "the rotation goes the wrong direction (angle −pθ_i)"}
    rules = {"right": None, "no 2": "θ_i = 10000^(−2i/d): the exponent has the factor 2",
             "from 1": "the pairs are numbered from i = 0, so pair 0 turns at θ_0 = 1"}
    variants = []
    for where, pairing, layout, direction, rule in itertools.product(
            positions, pairings, layouts, directions, rules):
        if pairing != convention and layout != convention:
            hints = [pairings[pairing]]  # the other convention throughout
        else:
            hints = [pairings[pairing], layouts[layout]]
        parts = [hint for hint in (positions[where], *hints, directions[direction], rules[rule])
                 if hint]
        if not parts:
            continue
        p = {"given": pos, "arange": torch.arange(len(pos)), "plus 1": pos + 1}[where]
        variants.append((_rope_elementwise(x, p, pairing, layout, direction, rule).numpy(), parts))
    for variant, parts in sorted(variants, key=lambda variant: len(variant[1])):
        if not np.allclose(variant, expected, atol=1e-8) and np.allclose(value, variant,
                                                                          atol=1e-6):
            return _joined(parts)
    return None


# Pass tolerance: angles computed in float32 (a learner's torch.arange(d // 2) / d) are off by
# ~1e-5 at position 200; every wrong recipe above is off by more than 0.1.
_ROPE_TOLERANCE = 1e-4


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
            if np.allclose(value, expected.numpy(), atol=_ROPE_TOLERANCE, rtol=0):
                continue
            setting = f"({convention}, d = {d})"
            if np.allclose(value, x.numpy(), atol=1e-8):
                raise Wrong(f"{setting}: nothing was rotated")
            hint = _rope_hint(value, x, pos, convention)
            if hint:
                raise Wrong(f"{setting}: {hint}")
            raise Wrong(f"{setting}: differs from the rotation matrices; check the exponent of "
                        "θ_i = 10000^(−2i/d) (i counts pairs from 0)")


# ---------------------------------------------------------------------------------------------
# Typical mistakes (tests/test_mistakes.py feeds each one to its checker)


def _rope_variant(kind: str):
    def rope(x, positions, convention):
        d = x.shape[-1]
        i = torch.arange(d // 2, dtype=torch.float64)
        exponent = {"exponent": 2 * (i + 1) / d, "no 2": i / d}.get(kind, 2 * i / d)
        pos = positions.to(torch.float64) + (1 if kind == "offset" else 0)
        if kind == "arange":
            pos = torch.arange(x.shape[0], dtype=torch.float64)
        angles = pos[:, None] * 10000.0 ** (-exponent)
        if kind == "mixed":
            convention = "interleaved"
        if kind == "layout" and convention == "halves":
            return _rope_elementwise(x, positions, "halves", "interleaved", 1, "right")
        if convention == "interleaved":
            a, b = x[:, 0::2], x[:, 1::2]
        else:
            a, b = x[:, : d // 2], x[:, d // 2 :]
        if kind == "backwards":
            angles = -angles
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


def _shift_matrix_variant(k: int, d: int, *, transpose: bool = False, inverse: bool = False,
                          concat: bool = False, rule: str = "right"):
    matrix = torch.zeros(d, d, dtype=torch.float64)
    half = d // 2
    for i, omega in enumerate(_frequencies(d, rule=rule)):
        angle = -k * omega if inverse else k * omega
        block = torch.tensor([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
        block = block.T if transpose else block
        index = [i, i + half] if concat else [2 * i, 2 * i + 1]
        for a in range(2):
            for b in range(2):
                matrix[index[a], index[b]] = block[a, b]
    return matrix


def _cross(q, k):
    return float(q[0] * k[1] - q[1] * k[0])


_FREQUENCIES_128 = _frequencies(128)
_TURNS = sum(1 for theta in _FREQUENCIES_128 if 4096 * theta >= 2 * math.pi)
_ADDED_GAP = _shift_gaps()[1]

MISTAKES: dict[str, list[Mistake]] = {
    "06.1": [
        Mistake("sine and cosine swapped", lambda: _encoding(math.cos(2), math.sin(2), math.cos(0.02),
                                                            math.sin(0.02)), hint="swapped"),
        Mistake("frequency exponent i/d", lambda: _encoding(
            math.sin(2), math.cos(2), math.sin(2 * 10000**-0.25), math.cos(2 * 10000**-0.25)),
            hint="10000^(−2·1/4)"),
        Mistake("concat", lambda: _encoding(math.sin(2), math.sin(0.02), math.cos(2),
                                                 math.cos(0.02)), hint="sines-then-cosines"),
        Mistake("positions from 1", lambda: _encoding(math.sin(1), math.cos(1), math.sin(0.01),
                                                      math.cos(0.01)), hint="p = 1"),
        Mistake("multiplied by 10000^(2i/d)", lambda: _encoding(math.sin(2), math.cos(2),
                                                                math.sin(200), math.cos(200)),
                hint="not 2 × 100"),
        Mistake("degrees", lambda: _encoding(math.sin(math.radians(2)), math.cos(math.radians(2)),
                                             math.sin(math.radians(0.02)),
                                             math.cos(math.radians(0.02))), hint="radians"),
    ],
    "06.2": [
        Mistake("the interleaved matrix of the chapter", lambda: lambda k, d: _shift_matrix_variant(k, d),
                hint="interleaved layout"),
        Mistake("transposed blocks", lambda: lambda k, d: _shift_matrix_variant(
            k, d, transpose=True, concat=True), hint="transpose"),
        Mistake("shift by −k", lambda: lambda k, d: _shift_matrix_variant(k, d, inverse=True, concat=True),
                hint="transpose"),
        Mistake("frequencies without the factor 2", lambda: lambda k, d: _shift_matrix_variant(
            k, d, concat=True, rule="no 2"), hint="10000^(−i/d)"),
        Mistake("pairs counted from 1", lambda: lambda k, d: _shift_matrix_variant(
            k, d, concat=True, rule="from 1"), hint="numbered i = 0"),
        Mistake("k ignored", lambda: lambda k, d: _shift_matrix_variant(1, d, concat=True),
                hint="ignores k"),
    ],
    "06.3": [
        Mistake("offset ignored", lambda: lambda q, k, delta, theta: float(q @ k),
                hint="ignores the offset"),
        Mistake("sine term with the wrong sign", lambda: lambda q, k, delta, theta: float(
            q @ k) * math.cos(delta * theta) - _cross(q, k) * math.sin(delta * theta),
            hint="sign of the sine term"),
        Mistake("angle without θ", lambda: lambda q, k, delta, theta: float(q @ k) * math.cos(
            delta) + _cross(q, k) * math.sin(delta), hint="not n − m radians"),
        Mistake("b term dropped", lambda: lambda q, k, delta, theta: float(q @ k) * math.cos(
            delta * theta), hint="b sin δθ term is missing"),
        Mistake("cos and sin swapped", lambda: lambda q, k, delta, theta: float(q @ k) * math.sin(
            delta * theta) + _cross(q, k) * math.cos(delta * theta), hint="goes with the cosine"),
    ],
    "06.4": [
        Mistake("T5 table counted per layer", lambda: (2048 * 1024, 24 * 16 * 32, 0, 0),
                hint="shared by all layers"),
        Mistake("context of 1,024", lambda: (1024 * 1024, 512, 0, 0), hint="2,048 tokens"),
        Mistake("RoPE given parameters", lambda: (2048 * 1024, 512, 0, 128), hint="learns nothing"),
        Mistake("ALiBi's slopes counted", lambda: (2048 * 1024, 512, 16, 0), hint="learns nothing"),
        Mistake("one scalar per bucket", lambda: (2048 * 1024, 32, 0, 0), hint="its own scalar"),
        Mistake("float counts", lambda: (2048.0 * 1024, 512.0, 0.0, 0.0), hint="float"),
        Mistake("learned table per layer", lambda: (24 * 2048 * 1024, 512, 0, 0),
                hint="not per layer"),
    ],
    "06.5": [
        Mistake("only the queries moved", lambda: _shift_gaps(shift_queries_only=True),
                hint="*and* the keys"),
        Mistake("table of the old positions", lambda: _shift_gaps(same_table=True),
                hint="100 … 104"),
        Mistake("only the queries rotated", lambda: (_shift_variants()[0][2][0], _ADDED_GAP),
                hint="rotate the keys too"),
        Mistake("RoPE on x before the projections", lambda: (_shift_variants()[0][4][0],
                                                             _ADDED_GAP), hint="before projecting"),
        Mistake("table added after the projections", lambda: (0.0, _shift_variants()[1][0][0]),
                hint="add the rows to x before projecting"),
        Mistake("mean instead of max", lambda: (0.0, _shift_variants()[1][1][0]),
                hint="mean absolute difference"),
        Mistake("the pair reversed", lambda: (_ADDED_GAP, 0.0), hint="other way round"),
    ],
    "06.6": [
        Mistake("counted the other pairs", lambda: 64 - _TURNS, hint="do *not* complete"),
        Mistake("off by one", lambda: _TURNS - 1, hint="off by one"),
        Mistake("the real bound", lambda: 64 * math.log(4096 / (2 * math.pi)) / math.log(10000),
                hint="bound on i"),
        Mistake("factor 2 dropped", lambda: 91, hint="−i/64"),
        Mistake("one radian for a turn", lambda: 58, hint="not ≥ 1"),
        Mistake("a float count", lambda: float(_TURNS), hint="float"),
    ],
    "06.7": [
        Mistake("pairs vs halves mixed", lambda: _rope_variant("mixed"), hint="pairing convention"),
        Mistake("exponent 2(i+1)/d", lambda: _rope_variant("exponent"), hint="numbered from i = 0"),
        Mistake("position offset by one", lambda: _rope_variant("offset"), hint="off by one"),
        Mistake("factor 2 dropped", lambda: _rope_variant("no 2"), hint="factor 2"),
        Mistake("positions ignored", lambda: _rope_variant("arange"), hint="positions argument"),
        Mistake("cos and sin laid out for interleaved pairs", lambda: _rope_variant("layout"),
                hint="laid out for 'interleaved'"),
        Mistake("rotation backwards", lambda: _rope_variant("backwards"), hint="wrong direction"),
    ],
}
