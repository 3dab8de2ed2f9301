"""Checkers for chapter 3, *Self-attention in matrix form*.

Every expected value is computed here from first principles with plain ``torch`` operations (or
closed forms), never with :mod:`tformer.attention`, the code under study. Tokens are rows. Before
the generic comparison, each checker compares the answer with the exercise's family of wrong
variants (a term of a count left out or added, unscaled or divided by d_k, the scores in place of
the weights, A V transposed, a mask applied after the softmax, a loop over the wrong axis, the mean
change instead of the largest, bits or MiB for bytes, one width for two …) and names the one that
matches.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from tformer.checks.ch01 import watched_call
from tformer.checks.core import (
    Mistake,
    Wrong,
    as_number,
    as_tuple,
    exercise,
    expect_number,
    expect_tensor,
    to_array,
)


def _reference_attention(queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                         *, scale: bool | float = True, softmax_dim: int = -1) -> torch.Tensor:
    scores = queries @ keys.T
    if scale is True:
        scores = scores / math.sqrt(queries.shape[-1])
    elif scale is not False:
        scores = scores * scale
    return torch.softmax(scores, dim=softmax_dim) @ values


def _matches(value: float, variant: float, rel_tol: float = 1e-3) -> bool:
    return math.isfinite(value) and math.isclose(value, variant, rel_tol=rel_tol, abs_tol=1e-12)


def _same(value: np.ndarray, target: Any, atol: float = 2e-4) -> bool:
    target = target.detach().numpy() if isinstance(target, torch.Tensor) else np.asarray(target)
    return value.shape == target.shape and bool(np.allclose(value, target, atol=atol, rtol=0))


# ---------------------------------------------------------------------------------------------
# 03.1

_D, _DK, _DV = 512, 64, 512


def _ex1_variants() -> list[tuple[int, str]]:
    d, d_k, d_v = _D, _DK, _DV
    weights = 2 * d_k * d + d * d_v
    expected = weights + 2 * d_k + d_v
    value_width = ("the value width here is d_v = d = 512, as the statement says, not d_k = 64: "
                   "W_V is d × d_v and b_V has d_v entries")
    output = ("a single head has no output projection W_O: count W_Q, W_K, W_V and their three "
              "biases")
    bias_width = ("each bias has the width of its projection's output: b_Q and b_K have "
                  "d_k = 64 entries, b_V has d_v = 512")
    square = "W_Q and W_K map to d_k = 64, not to d: they are d × d_k matrices"
    return [
        (weights, "that counts the weights only; add the biases b_Q, b_K (d_k each) and b_V (d_v)"),
        (2 * d_k * d + d * d_k + 3 * d_k, value_width), (2 * d_k * d + d * d_k, value_width),
        (expected + d_v * d + d, output), (expected + d_v * d, output),
        (weights + 3 * d, bias_width), (weights + 3 * d_k, bias_width),
        (weights + 2 * d_k, "b_V is missing: it has d_v = 512 entries"),
        (weights + d_v, "b_Q and b_K are missing: d_k = 64 entries each"),
        (weights + d_k + d_v, "one of b_Q and b_K is missing: each has d_k = 64 entries"),
        (3 * d * d + 3 * d, square), (3 * d * d, square),
        (d_k * d + d * d_v + d_k + d_v, "W_Q and W_K are two matrices of d × d_k = 32,768 "
                                        "entries each, with a bias each; you counted one"),
    ]


@exercise("03.1", "Parameters of one head (source 000, exercise 12.2)")
def ex1(answer) -> None:
    """``answer``: (parameters for d = 512, d_k = 64, d_v = d, with biases; the same after T
    doubles), two integers."""
    d, d_k, d_v = _D, _DK, _DV
    expected = 2 * d_k * d + d * d_v + 2 * d_k + d_v  # 328,320
    count, doubled = as_tuple(answer, 2, "(the count, the count when the sequence length doubles)")
    value = as_number(count, "the parameter count")
    if value != expected:
        for variant, hint in _ex1_variants():
            if value == variant:
                raise Wrong(hint)
    expect_number(count, expected, name="the parameter count", integer=True)
    doubled_value = as_number(doubled, "the count after doubling T")
    if math.isfinite(doubled_value) and doubled_value != value:
        raise Wrong("the parameters are W_Q, W_K, W_V and the biases; none of them has a T axis")
    expect_number(doubled, expected, name="the count after doubling T", integer=True)


# ---------------------------------------------------------------------------------------------
# 03.2

_EX2_VALUES = torch.tensor([[2.0, 0.0], [0.0, 4.0]], dtype=torch.float64)


@exercise("03.2", "Attention by hand (source 001)")
def ex2(answer) -> None:
    """``answer``: (weights (2, 2), outputs (2, 2)) for Q = K = I₂, V = [[2, 0], [0, 4]], scaled."""
    eye = torch.eye(2, dtype=torch.float64)
    values = _EX2_VALUES
    scores = eye @ eye.T / math.sqrt(2)
    weights = torch.softmax(scores, dim=-1)
    weights_answer, outputs_answer = as_tuple(answer, 2, "(weights, outputs)")
    value = to_array(weights_answer, "the weights")
    if not _same(value, weights):
        for variant, hint in (
            (torch.softmax(eye, dim=-1),
             "those are the unscaled weights; divide the scores by √d_k = √2 first"),
            (torch.softmax(eye / 2, dim=-1),
             "you divided the scores by d_k = 2; divide them by √d_k = √2"),
            (scores, "those are the scaled scores Q Kᵀ/√d_k; the weights are their softmax along "
                     "each row"),
            (torch.exp(scores), "those are the exponentials of the scores; divide each row by "
                                "its sum to get the weights"),
        ):
            if _same(value, variant):
                raise Wrong(hint)
    expect_tensor(value, weights, name="the weights", axes=("queries", "keys"), atol=2e-4,
                  rtol=0, rows_sum_to_one=True, rounding_tol=5e-3)
    outputs = to_array(outputs_answer, "the outputs")
    if not _same(outputs, weights @ values):
        for variant, hint in (
            (values @ weights, "the outputs are transposed: O = A V (each output row mixes the "
                               "value rows), not V A"),
            (scores @ values, "the outputs mix the values with the scores; use the weights, the "
                              "softmax of the scores"),
            (torch.softmax(eye, dim=-1) @ values,
             "the outputs come from the unscaled weights; use the weights you gave"),
        ):
            if _same(outputs, variant):
                raise Wrong(hint)
    expect_tensor(outputs, weights @ values, name="the outputs",
                  axes=("queries", "features"), atol=2e-4, rtol=0, rounding_tol=5e-3)


# ---------------------------------------------------------------------------------------------
# 03.3

_EX3_V = torch.tensor([1.0, -2.0, 3.0])


def _ex3_deviations() -> list[tuple[float, str]]:
    """The largest |o_i − v| of the plausible wrong computations on the exercise's own data."""
    generator = torch.Generator().manual_seed(3)
    queries = torch.randn(6, 8, generator=generator)
    keys = torch.randn(6, 8, generator=generator)
    values = _EX3_V.expand(6, 3)
    causal = torch.ones(6, 6, dtype=torch.bool).tril()
    scores = queries @ keys.T / math.sqrt(8)

    def deviation(weights: torch.Tensor) -> float:
        return float((weights @ values - _EX3_V).abs().max())

    masked = scores.masked_fill(~causal, float("-inf"))
    fully_masked = ("one query's output is 0: it saw no key at all, so its weights were all 0 "
                    "(not a distribution). A causal mask keeps the diagonal — tril(), not "
                    "tril(-1) — so every query sees at least itself")
    return [
        (deviation(torch.softmax(scores, dim=-1) * causal),
         "the future weights were zeroed after the softmax, so the rows no longer sum to 1: "
         "mask the scores with −∞ before the softmax (or pass the mask to "
         "tformer.scaled_dot_product_attention)"),
        (deviation(torch.exp(scores) * causal),
         "those weights were never normalised: divide each row by its sum (the softmax) after "
         "masking"),
        (deviation(torch.softmax(masked, dim=0)),
         "the softmax ran over the queries (dim=0): each query's weights run over the keys"),
        (float(_EX3_V.abs().max()), fully_masked),
    ]


@exercise("03.3", "Equal values give that value back (source 001)")
def ex3(answer) -> None:
    """``answer``: the largest |o_i − v| over all queries and coordinates (a number near 0)."""
    if isinstance(answer, bool) or not isinstance(answer, int | float | np.number | torch.Tensor):
        raise Wrong(f"give one number, the largest deviation; got {type(answer).__name__}")
    array = to_array(answer, "the deviation")
    if array.shape == (6, 3):
        raise Wrong("those are the (6, 3) outputs, or their deviations; the answer is one "
                    "number, the largest |o_i − v|: (outputs − v).abs().max()")
    if array.shape in ((6,), (3,)):
        raise Wrong("that is the largest deviation along one axis only; take it over all queries "
                    "and all coordinates: (outputs − v).abs().max()")
    if array.size != 1:
        raise Wrong(f"give one number, the largest deviation; got an array of shape {array.shape}")
    value = float(array.reshape(()))
    if math.isnan(value):
        raise Wrong("the deviation is NaN — is a query row fully masked?")
    if value < 0:
        raise Wrong("a largest absolute deviation cannot be negative")
    if value > 1e-5:
        for variant, hint in _ex3_deviations():
            if _matches(value, variant, 2e-3):
                raise Wrong(hint)
        raise Wrong(
            f"the outputs differ from v by {value:.3g}; with weights that are non-negative and "
            "sum to 1 over the keys, an average of equal vectors is that vector — mask the "
            "scores before the softmax and let it run over the keys"
        )


# ---------------------------------------------------------------------------------------------
# 03.4

_EX4_SHORTCUTS = {"softmax", "log_softmax", "_softmax", "scaled_dot_product_attention"}


def _ex4_cases() -> list[tuple[str, torch.Tensor, torch.Tensor, torch.Tensor]]:
    """(label, queries, keys, values): T_q < T_k, T_q = T_k, T_q > T_k, and scores up to 1,000
    (exp overflows without the max subtraction)."""
    generator = torch.Generator().manual_seed(34)
    queries = torch.randn(5, 4, generator=generator, dtype=torch.float64)
    keys = torch.randn(7, 4, generator=generator, dtype=torch.float64)
    values = torch.randn(7, 3, generator=generator, dtype=torch.float64)
    square = torch.randn(6, 4, generator=generator, dtype=torch.float64)
    many = torch.randn(8, 4, generator=generator, dtype=torch.float64)
    few = torch.randn(3, 4, generator=generator, dtype=torch.float64)
    return [
        ("fewer", queries, keys, values),
        ("square", square, square, square[:, :2]),
        ("more", many, few, few[:, :2]),
        ("large", 500 * queries, keys, values),
    ]


def _ex4_value_hint(value: np.ndarray, queries, keys, values) -> str:
    d_k = queries.shape[-1]
    scores = queries @ keys.T / math.sqrt(d_k)
    shifted = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
    for variant, hint in (
        (_reference_attention(queries, keys, values, scale=False),
         "your outputs are unscaled; divide each score by √d_k"),
        (_reference_attention(queries, keys, values, scale=1 / d_k),
         "you divided the scores by d_k; divide them by √d_k"),
        (_reference_attention(queries, keys, values, softmax_dim=0),
         "the softmax ran over the queries; each query's weights run over the keys"),
        (shifted @ values, "the weights are not normalised: divide exp(s − max s) by its sum, so "
                           "that each query's weights sum to 1"),
        (torch.exp(scores) @ values, "the weights are not normalised: divide exp(s − max s) by "
                                     "its sum, so that each query's weights sum to 1"),
    ):
        if _same(value, variant, 1e-5):
            return hint
    return ""


@exercise("03.4", "Attention, one query at a time")
def ex4(answer) -> None:
    """``answer``: a function ``(queries (T_q, d_k), keys (T_k, d_k), values (T_k, d_v)) ->
    outputs (T_q, d_v)`` with a Python loop over the queries and a softmax by hand."""
    outcomes: dict[str, tuple[bool, str]] = {}
    shortcut, calls = False, {}
    for label, queries, keys, values in _ex4_cases():
        try:
            result, watch = watched_call(answer, queries.clone(), keys.clone(), values.clone(),
                                         name="attention_per_query")
        except Wrong as wrong:
            outcomes[label] = (False, str(wrong))
            continue
        shortcut = shortcut or bool(watch.names & _EX4_SHORTCUTS) or watch.tformer
        calls[label] = watch.calls
        if isinstance(result, tuple):  # (outputs, weights) is fine too
            result = result[0]
        value = to_array(result, "the outputs")
        expected = _reference_attention(queries.double(), keys.double(), values.double())
        if _same(value, expected, 1e-6):
            outcomes[label] = (True, "")
            continue
        if np.isnan(value).any() or np.isinf(value).any():
            hint = ("for large scores the outputs contain NaN or inf: exp overflowed — subtract "
                    "each query's largest score before exponentiating")
        elif value.shape[:1] == (keys.shape[0],) and keys.shape[0] != queries.shape[0]:
            hint = (f"for {queries.shape[0]} queries and {keys.shape[0]} keys your function "
                    f"returns {keys.shape[0]} rows: loop over the queries (one output row per "
                    "query), not over the keys")
        else:
            hint = _ex4_value_hint(value, queries.double(), keys.double(), values.double())
        if not hint:
            try:
                expect_tensor(value, expected, name="the outputs", axes=("queries", "values"),
                              atol=1e-6)
            except Wrong as wrong:
                hint = str(wrong)
        outcomes[label] = (False, hint)
    if all(right for right, _ in outcomes.values()):
        if shortcut:  # right numbers, but not by the statement's means
            raise Wrong("attention_per_query calls a library softmax or attention "
                        "(torch.softmax, tformer, …); the exercise asks for the softmax by hand: "
                        "exp(s − max s) divided by its sum")
        if calls["more"] <= calls["fewer"]:  # 8 queries take no more torch calls than 5
            raise Wrong("the outputs are right, but the exercise asks for an explicit Python loop "
                        "over the queries (one query's scores, softmax and weighted sum at a time)")
        return
    if outcomes["square"][0] and not (outcomes["fewer"][0] and outcomes["more"][0]):
        raise Wrong("attention_per_query works when T_q = T_k but not when the numbers of "
                    "queries and keys differ: loop over the queries (`for query in queries`), "
                    "take each one's scores against all T_k keys, and return T_q rows")
    for right, hint in outcomes.values():
        if not right:
            raise Wrong(hint)


# ---------------------------------------------------------------------------------------------
# 03.5

_EX5_PERM = torch.tensor([3, 0, 5, 1, 4, 2])


def _ex5_data() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(35)
    queries = torch.randn(4, 8, generator=generator)
    keys = torch.randn(6, 8, generator=generator)
    values = torch.randn(6, 3, generator=generator)
    return queries, keys, values, torch.eye(6)[_EX5_PERM]


def _ex5_gaps() -> dict[str, float]:
    """The gaps of exercise 03.5 and of its variants: ``values`` (the answer), ``keys`` (only the
    keys permuted, which is the values permuted by Pᵀ), ``mismatched`` (P on the keys, Pᵀ on the
    values), and other measures of the values-only change."""
    queries, keys, values, perm = _ex5_data()
    base = _reference_attention(queries, keys, values)

    def change(k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return _reference_attention(queries, k, v) - base

    values_only = change(keys, perm @ values)
    return {
        "together": float(change(perm @ keys, perm @ values).abs().max()),
        "values": float(values_only.abs().max()),
        "keys": float(change(perm @ keys, values).abs().max()),
        "mismatched": float(change(perm @ keys, perm.T @ values).abs().max()),
        "mean": float(values_only.abs().mean()),
        "sum": float(values_only.abs().sum()),
        "signed": float(values_only.max()),
        "norm": float(values_only.norm()),
    }


@exercise("03.5", "Reordering the memory of cross-attention")
def ex5(answer) -> None:
    """``answer``: (largest output change when keys and values are permuted together, the same
    when only the values are permuted), for the exercise's T_q = 4 queries and T_k = 6 keys."""
    together, values_only = as_tuple(answer, 2, "(gap with keys and values permuted together, "
                                                "gap with only the values permuted)")
    together = as_number(together, "the first gap")
    values_only = as_number(values_only, "the second gap")
    if not (math.isfinite(together) and math.isfinite(values_only)):
        raise Wrong("both gaps should be finite numbers; a NaN or inf points at a broken computation")
    gaps = _ex5_gaps()
    if together > 1e-5:
        if _matches(together, gaps["values"]) and values_only < 1e-5:
            raise Wrong("the two gaps are swapped: the first gap is for keys and values permuted "
                        "together, the second for the values alone")
        if _matches(together, gaps["mismatched"]):
            raise Wrong("the keys were permuted with P but the values with Pᵀ (the inverse "
                        "permutation), so they fell out of step: apply the same P to both")
        raise Wrong(
            f"with keys and values permuted together the outputs should not change, got a gap "
            f"of {together:.3g}; apply the same P to both (and nothing to the queries)"
        )
    if values_only < 1e-3:
        raise Wrong("permute only the values, not the keys: the weights then meet the wrong "
                    "values and the outputs change")
    for key, hint in (
        ("keys", "that is the gap with only the keys permuted (the same as permuting the values "
                 "by Pᵀ, the inverse of P); the second gap permutes only the values by P: "
                 "K unchanged, V → PV = values[perm]"),
        ("mean", "that is the mean absolute change; the exercise asks for the largest one, "
                 ".abs().max()"),
        ("sum", "that is the sum of the absolute changes; the exercise asks for the largest one, "
                ".abs().max()"),
        ("norm", "that is the norm of the change; the exercise asks for the largest absolute "
                 "entry, .abs().max()"),
        ("signed", "that is the largest signed change; take the absolute value first, "
                   ".abs().max()"),
    ):
        if _matches(values_only, gaps[key]):
            raise Wrong(hint)
    expect_number(values_only, gaps["values"], name="the gap with only the values permuted",
                  rel_tol=1e-3, rounding_tol=5e-3)


# ---------------------------------------------------------------------------------------------
# 03.6

_B6, _T6, _D6, _DK6 = 8, 512, 256, 64


@exercise("03.6", "Memory of a batch of score matrices")
def ex6(answer) -> None:
    """``answer``: (entries of the (B, T, T) score tensor, its float32 bytes, the factor by which
    they grow when T doubles) for B = 8, T = 512, d = 256, d_k = 64, one head; the two counts are
    integers."""
    batch, length, width, d_k = _B6, _T6, _D6, _DK6
    n_scores = batch * length * length
    n_answer, bytes_answer, factor = as_tuple(answer, 3, "(score entries, bytes, growth factor)")
    n_value = as_number(n_answer, "the number of score entries")
    if n_value != n_scores:
        for variant, hint in (
            (length * length, "that is one T × T matrix; every sequence of the batch has its own"
             if _matches(as_number(factor, "the growth factor"), 4) else
             "B · T · d_k counts the entries of Q (or K, V), which grow linearly in T; S = Q Kᵀ "
             "has one entry per query–key pair: B × T × T"),
            (batch * length * length * d_k,
             "each score is one number; the (B, T, T) tensor has no d_k axis"),
            (batch * length * d_k, "B · T · d_k counts the entries of Q (or K, V); S = Q Kᵀ has "
                                   "one entry per query–key pair: B × T × T"),
            (batch * length * width, "B · T · d counts the entries of X; S = Q Kᵀ has one entry "
                                     "per query–key pair: B × T × T"),
            (2 * n_scores, "that counts two B × T × T tensors (S and the weights A); count S "
                           "alone"),
        ):
            if n_value == variant:
                raise Wrong(hint)
    expect_number(n_answer, n_scores, name="the number of score entries", integer=True)
    bytes_value = as_number(bytes_answer, "the bytes")
    n_bytes = 4 * n_scores
    if bytes_value != n_bytes:
        for variant, hint in (
            (n_scores, "a float32 number takes 4 bytes"),
            (2 * n_scores, "a float32 number takes 4 bytes"),
            (8 * n_scores, "a float32 number takes 4 bytes"),
            (32 * n_scores, "that is the size in bits: a float32 has 32 bits, which is 4 bytes"),
            (n_bytes / 2**20, "that is the size in MiB (2²⁰ bytes); give it in bytes"),
            (n_bytes / 1e6, "that is the size in MB (10⁶ bytes); give it in bytes"),
            (n_bytes / 2**10, "that is the size in KiB (2¹⁰ bytes); give it in bytes"),
        ):
            if _matches(bytes_value, variant, 1e-3):
                raise Wrong(hint)
    expect_number(bytes_answer, n_bytes, name="the bytes", integer=True)
    factor_value = as_number(factor, "the growth factor")
    for variant, hint in (
        (2, "the score tensor is quadratic in T: doubling T quadruples it"),
        (8, "the score tensor is quadratic in T, not cubic: doubling T multiplies it by "
            "2² = 4"),
        (16, "the score tensor is quadratic in T: doubling T multiplies it by 2² = 4, not 2⁴"),
        (0.25, "that is the factor for halving T; doubling T multiplies the memory by 4"),
        (0.5, "that is the factor for halving T in a linear tensor; the score tensor is "
              "quadratic in T, so doubling T multiplies it by 4"),
    ):
        if _matches(factor_value, variant, 1e-9):
            raise Wrong(hint)
    expect_number(factor, 4, name="the growth factor", rel_tol=1e-9)


# ---------------------------------------------------------------------------------------------
# 03.7


@exercise("03.7", "Where the quadratic terms take over, with unequal widths")
def ex7(answer) -> None:
    """``answer``: the length T* at which T²(d_k + d_v) equals T·d·(2d_k + d_v), for d = 512,
    d_k = 64, d_v = 128, not rounded."""
    d, d_k, d_v = 512, 64, 128
    expected = d * (2 * d_k + d_v) / (d_k + d_v)  # 682.67
    value = as_number(answer, "T*")
    if math.isfinite(value) and not _matches(value, expected, 1e-6):
        one_width = ("that divides by one width only (2d_k, or d_v alone): the quadratic terms "
                     "are T²d_k (scores) plus T²d_v (mixing), so both widths belong in the "
                     "denominator")
        variants = [
            (math.floor(expected), f"{math.floor(expected)} is T* rounded down — // is integer "
                                   "division; use / and give T* unrounded"),
            (round(expected), f"{round(expected)} is T* rounded; give it unrounded"),
            (3 * d**2 / (d_k + d_v), "3d² is the projection cost only when d_k = d_v = d; here "
                                     "the projections cost Td(2d_k + d_v)"),
            (1.5 * d, "1.5 d holds when d_k = d_v; here d_k and d_v differ"),
            (d * (2 * d_k + d_v) / (2 * d_k), one_width),
            (d * (2 * d_k + d_v) / d_v, one_width),
            (d * (2 * d_k + d_v) / d_k, "that keeps only the scores T²d_k; there are two "
                                        "quadratic terms, T²d_k (scores) and T²d_v (mixing)"),
            (d * (d_k + 2 * d_v) / (d_k + d_v), "W_Q and W_K have width d_k and W_V has d_v: the "
                                                "projections cost Td(2d_k + d_v), not "
                                                "Td(d_k + 2d_v)"),
            (d * 3 * d_k / (d_k + d_v), "the projections cost Td(2d_k + d_v): W_V maps to "
                                        "d_v = 128, not to d_k"),
            (d * (2 * d_k + d_v) / (d_k + d_v) / 2, "the projections are T·d·(2d_k + d_v), "
                                                    "not half of it"),
        ]
        for variant, hint in variants:
            if _matches(value, variant, 1e-6):
                raise Wrong(hint)
    expect_number(answer, expected, name="T*", rel_tol=1e-6, rounding_tol=1.0)


# ---------------------------------------------------------------------------------------------
# Typical mistakes (tests/test_mistakes.py feeds each to its checker).


def _per_query(queries, keys, values, *, scale: float | None = None, normalise: bool = True,
               stable: bool = True, over_keys: bool = False):
    """A loop over the queries (or, ``over_keys``, over range(len(keys))) with a hand softmax."""
    scale = 1 / math.sqrt(queries.shape[-1]) if scale is None else scale
    rows = []
    for i in range(len(keys) if over_keys else len(queries)):
        scores = keys @ queries[i] * scale
        weights = torch.exp(scores - scores.max()) if stable else torch.exp(scores)
        if normalise:
            weights = weights / weights.sum()
        rows.append(weights @ values)
    return torch.stack(rows)


def _attention_unscaled(queries, keys, values):
    return _per_query(queries, keys, values, scale=1.0)


def _attention_over_queries(queries, keys, values):
    return torch.softmax(queries @ keys.T / math.sqrt(queries.shape[-1]), dim=0) @ values


def _attention_unstable(queries, keys, values):
    return _per_query(queries, keys, values, stable=False)


def _attention_unnormalised(queries, keys, values):
    return _per_query(queries, keys, values, normalise=False)


def _attention_over_keys(queries, keys, values):
    return _per_query(queries, keys, values, over_keys=True)


def _attention_library(queries, keys, values):
    return torch.stack([torch.softmax(keys @ query / math.sqrt(len(query)), -1) @ values
                        for query in queries])


def _ex2_answer(scale: bool | float = True, transpose_outputs: bool = False,
                scores: bool = False):
    eye = torch.eye(2, dtype=torch.float64)
    factor = 1 / math.sqrt(2) if scale is True else 1.0 if scale is False else scale
    weights = torch.softmax(eye * factor, dim=-1)
    outputs = weights @ _EX2_VALUES
    first = eye / math.sqrt(2) if scores else weights
    return first, outputs.T if transpose_outputs else outputs


_N5 = 8 * 512 * 512
_COUNT = 2 * _DK * _D + _D * _DV + 2 * _DK + _DV

MISTAKES: dict[str, list[Mistake]] = {
    "03.1": [
        Mistake("weights only", lambda: (2 * _DK * _D + _D * _D,) * 2, "biases"),
        Mistake("count grows with T", lambda: (_COUNT, 2 * _COUNT), "T axis"),
        Mistake("value width d_k", lambda: (2 * _DK * _D + _D * _DK + 3 * _DK,) * 2, "value width"),
        Mistake("an output projection", lambda: (_COUNT + _DV * _D + _D,) * 2, "no output projection"),
        Mistake("a float count", lambda: (float(_COUNT),) * 2, "integer"),
    ],
    "03.2": [
        Mistake("unscaled", lambda: _ex2_answer(scale=False), "unscaled"),
        Mistake("transposed outputs", lambda: _ex2_answer(transpose_outputs=True), "transposed"),
        Mistake("divided by d_k", lambda: _ex2_answer(scale=0.5), "d_k = 2"),
        Mistake("scores for weights", lambda: _ex2_answer(scores=True), "scaled scores"),
    ],
    "03.3": [
        Mistake("fully masked row", lambda: float("nan"), "NaN"),
        Mistake("softmax over the queries", lambda: 0.8, "over the keys"),
        Mistake("signed deviation", lambda: -1e-7, "negative"),
        Mistake("mask after the softmax", lambda: _ex3_deviations()[0][0], "after the softmax"),
        Mistake("diagonal masked, zero rows", lambda: 3.0, "tril(-1)"),
        Mistake("the outputs themselves", lambda: _EX3_V.expand(6, 3), "one number"),
    ],
    "03.4": [
        Mistake("unscaled", lambda: _attention_unscaled, "unscaled"),
        Mistake("softmax over the queries", lambda: _attention_over_queries, "over the queries"),
        Mistake("no max subtraction", lambda: _attention_unstable, "subtract each query's"),
        Mistake("not normalised", lambda: _attention_unnormalised, "not normalised"),
        Mistake("loop over the keys", lambda: _attention_over_keys, "T_q = T_k"),
        Mistake("torch.softmax inside", lambda: _attention_library, "library softmax"),
    ],
    "03.5": [
        Mistake("gaps swapped", lambda: (_ex5_gaps()["values"], 0.0), "swapped"),
        Mistake("keys permuted, values not", lambda: (_ex5_gaps()["keys"], _ex5_gaps()["values"]),
                "same P"),
        Mistake("permuted keys and values in the second case too", lambda: (0.0, 0.0),
                "only the values"),
        Mistake("keys only for the second gap", lambda: (0.0, _ex5_gaps()["keys"]),
                "only the keys permuted"),
        Mistake("mean change", lambda: (0.0, _ex5_gaps()["mean"]), "mean absolute change"),
        Mistake("P on keys, Pᵀ on values", lambda: (_ex5_gaps()["mismatched"],
                                                    _ex5_gaps()["values"]), "Pᵀ"),
    ],
    "03.6": [
        Mistake("one sequence only", lambda: (512 * 512, 4 * 512 * 512, 4), "every sequence"),
        Mistake("8 bytes per float", lambda: (_N5, 8 * _N5, 4), "4 bytes"),
        Mistake("linear growth", lambda: (_N5, 4 * _N5, 2), "quadruples"),
        Mistake("entries of Q", lambda: (8 * 512 * 64, 4 * 8 * 512 * 64, 2), "entries of Q"),
        Mistake("bits", lambda: (_N5, 32 * _N5, 4), "bits"),
        Mistake("MiB", lambda: (_N5, 4 * _N5 / 2**20, 4), "MiB"),
    ],
    "03.7": [
        Mistake("3d² projections", lambda: 3 * 512**2 / (64 + 128), "Td(2d_k + d_v)"),
        Mistake("1.5 d", lambda: 1.5 * 512, "differ"),
        Mistake("one quadratic term", lambda: 512 * (2 * 64 + 128) / 64, "two quadratic terms"),
        Mistake("integer division", lambda: 512 * (2 * 64 + 128) // (64 + 128), "rounded down"),
        Mistake("2 d_k for both terms", lambda: 512 * (2 * 64 + 128) / (2 * 64), "one width"),
    ],
}
