"""Checkers for chapter 3, *Self-attention in matrix form*.

Every expected value is computed here from first principles with plain ``torch`` operations (or
closed forms), never with :mod:`tformer.attention`, the code under study. Tokens are rows.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from tformer.checks.core import (
    Mistake,
    Wrong,
    as_number,
    as_tuple,
    call_reader,
    exercise,
    expect_number,
    expect_tensor,
    to_array,
)


def _reference_attention(queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                         *, scale: bool = True, softmax_dim: int = -1) -> torch.Tensor:
    scores = queries @ keys.T
    if scale:
        scores = scores / math.sqrt(queries.shape[-1])
    return torch.softmax(scores, dim=softmax_dim) @ values


@exercise("03.1", "Parameters of one head (source 000, exercise 12.2)")
def ex1(answer) -> None:
    """``answer``: (parameters for d = 512, d_k = 64, d_v = d, with biases; the same after T doubles)."""
    d, d_k, d_v = 512, 64, 512
    expected = 2 * d_k * d + d * d_v + 2 * d_k + d_v  # 328,320
    count, doubled = as_tuple(answer, 2, "(the count, the count when the sequence length doubles)")
    if isinstance(count, int | float) and not isinstance(count, bool):
        if count == 2 * d_k * d + d * d_v:
            raise Wrong("that counts the weights only; add the biases b_Q, b_K (d_k each) and b_V (d_v)")
        if count == 2 * d_k * d + d * d_k + 3 * d_k:
            raise Wrong("source 000 keeps the value width equal to d = 512, not d_k")
    expect_number(count, expected, name="the parameter count", rel_tol=0, abs_tol=0.5)
    if isinstance(doubled, int | float) and not isinstance(doubled, bool) and doubled != count:
        raise Wrong("the parameters are W_Q, W_K, W_V and the biases; none of them has a T axis")
    expect_number(doubled, expected, name="the count after doubling T", rel_tol=0, abs_tol=0.5)


@exercise("03.2", "Attention by hand (source 001)")
def ex2(answer) -> None:
    """``answer``: (weights (2, 2), outputs (2, 2)) for Q = K = I₂, V = [[2, 0], [0, 4]], scaled."""
    eye = torch.eye(2, dtype=torch.float64)
    values = torch.tensor([[2.0, 0.0], [0.0, 4.0]], dtype=torch.float64)
    weights = torch.softmax(eye @ eye.T / math.sqrt(2), dim=-1)
    weights_answer, outputs_answer = as_tuple(answer, 2, "(weights, outputs)")
    unscaled = torch.softmax(eye, dim=-1).numpy()
    value = to_array(weights_answer, "the weights")
    if value.shape == (2, 2) and np.allclose(value, unscaled, atol=2e-4):
        raise Wrong("those are the unscaled weights; divide the scores by √d_k = √2 first")
    expect_tensor(value, weights, name="the weights", axes=("queries", "keys"), atol=2e-4,
                  rtol=0, rows_sum_to_one=True, rounding_tol=5e-3)
    expect_tensor(outputs_answer, weights @ values, name="the outputs",
                  axes=("queries", "features"), atol=2e-4, rtol=0, rounding_tol=5e-3)


@exercise("03.3", "Equal values give that value back (source 001)")
def ex3(answer) -> None:
    """``answer``: the largest |o_i − v| over all queries and coordinates (a number near 0)."""
    if isinstance(answer, bool) or not isinstance(answer, int | float | np.number | torch.Tensor):
        raise Wrong(f"give one number, the largest deviation; got {type(answer).__name__}")
    array = to_array(answer, "the deviation")
    if array.size != 1:
        raise Wrong(f"give one number, the largest deviation; got an array of shape {array.shape}")
    value = float(array.reshape(()))
    if math.isnan(value):
        raise Wrong("the deviation is NaN — is a query row fully masked?")
    if value < 0:
        raise Wrong("a largest absolute deviation cannot be negative")
    if value > 1e-5:
        raise Wrong(
            f"the outputs differ from v by {value:.3g}; with weights that are non-negative and "
            "sum to 1 over the keys, an average of equal vectors is that vector — check the "
            "softmax axis"
        )


@exercise("03.4", "Attention, one query at a time")
def ex4(answer) -> None:
    """``answer``: a function ``(queries (T_q, d_k), keys (T_k, d_k), values (T_k, d_v)) -> outputs``."""
    generator = torch.Generator().manual_seed(34)
    queries = torch.randn(5, 4, generator=generator, dtype=torch.float64)
    keys = torch.randn(7, 4, generator=generator, dtype=torch.float64)
    values = torch.randn(7, 3, generator=generator, dtype=torch.float64)
    result = call_reader(answer, queries, keys, values, name="attention_per_query")
    if isinstance(result, tuple):  # (outputs, weights) is fine too
        result = result[0]
    value = to_array(result, "the outputs")
    expected = _reference_attention(queries, keys, values)
    unscaled = _reference_attention(queries, keys, values, scale=False).numpy()
    if value.shape == expected.shape and np.allclose(value, unscaled):
        raise Wrong("your outputs are unscaled; divide each score by √d_k")
    over_queries = _reference_attention(queries, keys, values, softmax_dim=0).numpy()
    if value.shape == expected.shape and np.allclose(value, over_queries, atol=1e-6):
        raise Wrong("the softmax ran over the queries; each query's weights run over the keys")
    expect_tensor(value, expected, name="the outputs", axes=("queries", "values"), atol=1e-6)
    square = torch.randn(6, 4, generator=generator, dtype=torch.float64)  # T_q = T_k
    result = call_reader(answer, square, square, square[:, :2], name="attention_per_query")
    value = to_array(result[0] if isinstance(result, tuple) else result, "the outputs")
    wrong_axis = _reference_attention(square, square, square[:, :2], softmax_dim=0).numpy()
    if value.shape == wrong_axis.shape and np.allclose(value, wrong_axis, atol=1e-6):
        raise Wrong("the softmax ran over the queries; each query's weights run over the keys")
    expect_tensor(value, _reference_attention(square, square, square[:, :2]),
                  name="the outputs for self-attention", axes=("queries", "values"), atol=1e-6)


_EX5_PERM = torch.tensor([3, 0, 5, 1, 4, 2])


def _ex5_data() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(35)
    queries = torch.randn(4, 8, generator=generator)
    keys = torch.randn(6, 8, generator=generator)
    values = torch.randn(6, 3, generator=generator)
    return queries, keys, values, torch.eye(6)[_EX5_PERM]


def _ex5_gaps() -> dict[str, float]:
    queries, keys, values, perm = _ex5_data()
    base = _reference_attention(queries, keys, values)

    def gap(k: torch.Tensor, v: torch.Tensor) -> float:
        return float((_reference_attention(queries, k, v) - base).abs().max())

    return {"together": gap(perm @ keys, perm @ values), "values": gap(keys, perm @ values),
            "keys": gap(perm @ keys, values)}


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
        if math.isclose(together, gaps["values"], rel_tol=1e-3) and values_only < 1e-5:
            raise Wrong("the two gaps are swapped: the first gap is for keys and values permuted "
                        "together, the second for the values alone")
        raise Wrong(
            f"with keys and values permuted together the outputs should not change, got a gap "
            f"of {together:.3g}; apply the same P to both (and nothing to the queries)"
        )
    if values_only < 1e-3:
        raise Wrong("permute only the values, not the keys: the weights then meet the wrong "
                    "values and the outputs change")
    expect_number(values_only, gaps["values"], name="the gap with only the values permuted",
                  rel_tol=1e-3, rounding_tol=5e-3)


@exercise("03.6", "Memory of a batch of score matrices")
def ex6(answer) -> None:
    """``answer``: (entries of the (B, T, T) score tensor, its float32 bytes, the factor by which
    they grow when T doubles) for B = 8, T = 512, d_k = 64, one head."""
    batch, length, d_k = 8, 512, 64
    n_scores = batch * length * length
    n_answer, bytes_answer, factor = as_tuple(answer, 3, "(score entries, bytes, growth factor)")
    if isinstance(n_answer, int | float) and not isinstance(n_answer, bool):
        if n_answer == length * length:
            raise Wrong("that is one T × T matrix; every sequence of the batch has its own")
        if n_answer == batch * length * length * d_k:
            raise Wrong("each score is one number; the (B, T, T) tensor has no d_k axis")
    expect_number(n_answer, n_scores, name="the number of score entries", rel_tol=0, abs_tol=0.5)
    is_number = isinstance(bytes_answer, int | float) and not isinstance(bytes_answer, bool)
    if is_number and bytes_answer in (n_scores, 2 * n_scores, 8 * n_scores):
        raise Wrong("a float32 number takes 4 bytes")
    expect_number(bytes_answer, 4 * n_scores, name="the bytes", rel_tol=0, abs_tol=0.5)
    if isinstance(factor, int | float) and not isinstance(factor, bool) and factor == 2:
        raise Wrong("the score tensor is quadratic in T: doubling T quadruples it")
    expect_number(factor, 4, name="the growth factor", rel_tol=1e-9)


@exercise("03.7", "Where the quadratic terms take over, with unequal widths")
def ex7(answer) -> None:
    """``answer``: the length T* at which T²(d_k + d_v) equals T·d·(2d_k + d_v), for d = 512,
    d_k = 64, d_v = 128."""
    d, d_k, d_v = 512, 64, 128
    expected = d * (2 * d_k + d_v) / (d_k + d_v)  # 682.67
    if isinstance(answer, int | float) and not isinstance(answer, bool):
        if math.isclose(answer, 3 * d**2 / (d_k + d_v)):
            raise Wrong("3d² is the projection cost only when d_k = d_v = d; here the projections "
                        "cost Td(2d_k + d_v)")
        if math.isclose(answer, 1.5 * d):
            raise Wrong("1.5 d holds when d_k = d_v; here d_k and d_v differ")
        if math.isclose(answer, d * (2 * d_k + d_v) / d_k) or math.isclose(
            answer, d * (2 * d_k + d_v) / d_v
        ):
            raise Wrong("there are two quadratic terms, T²d_k (scores) and T²d_v (mixing)")
    expect_number(answer, expected, name="T*", rel_tol=1e-6, rounding_tol=1.0)


def _attention_unscaled(queries, keys, values):
    return torch.softmax(queries @ keys.T, dim=-1) @ values


def _attention_over_queries(queries, keys, values):
    return torch.softmax(queries @ keys.T / math.sqrt(queries.shape[-1]), dim=0) @ values


def _ex2_answer(scale: bool = True, transpose_outputs: bool = False):
    eye = torch.eye(2, dtype=torch.float64)
    values = torch.tensor([[2.0, 0.0], [0.0, 4.0]], dtype=torch.float64)
    weights = torch.softmax(eye / (math.sqrt(2) if scale else 1.0), dim=-1)
    outputs = weights @ values
    return weights, outputs.T if transpose_outputs else outputs


_D, _DK = 512, 64
_N5 = 8 * 512 * 512

MISTAKES: dict[str, list[Mistake]] = {
    "03.1": [
        Mistake("weights only", lambda: (2 * _DK * _D + _D * _D,) * 2, "biases"),
        Mistake("count grows with T", lambda: (2 * _DK * _D + _D * _D + 2 * _DK + _D,
                                               2 * (2 * _DK * _D + _D * _D + 2 * _DK + _D)),
                "T axis"),
        Mistake("value width d_k", lambda: (2 * _DK * _D + _D * _DK + 3 * _DK,) * 2, "value width"),
    ],
    "03.2": [
        Mistake("unscaled", lambda: _ex2_answer(scale=False), "unscaled"),
        Mistake("transposed outputs", lambda: _ex2_answer(transpose_outputs=True), "transpose"),
    ],
    "03.3": [
        Mistake("fully masked row", lambda: float("nan"), "NaN"),
        Mistake("softmax over the queries", lambda: 0.8, "softmax axis"),
        Mistake("signed deviation", lambda: -1e-7, "negative"),
    ],
    "03.4": [
        Mistake("unscaled", lambda: _attention_unscaled, "unscaled"),
        Mistake("softmax over the queries", lambda: _attention_over_queries, "over the queries"),
    ],
    "03.5": [
        Mistake("gaps swapped", lambda: (_ex5_gaps()["values"], 0.0), "swapped"),
        Mistake("keys permuted, values not", lambda: (_ex5_gaps()["keys"], _ex5_gaps()["values"]),
                "same P"),
        Mistake("permuted keys and values in the second case too", lambda: (0.0, 0.0),
                "only the values"),
    ],
    "03.6": [
        Mistake("one sequence only", lambda: (512 * 512, 4 * 512 * 512, 4), "every sequence"),
        Mistake("8 bytes per float", lambda: (_N5, 8 * _N5, 4), "4 bytes"),
        Mistake("linear growth", lambda: (_N5, 4 * _N5, 2), "quadruples"),
    ],
    "03.7": [
        Mistake("3d² projections", lambda: 3 * 512**2 / (64 + 128), "Td(2d_k + d_v)"),
        Mistake("1.5 d", lambda: 1.5 * 512, "differ"),
        Mistake("one quadratic term", lambda: 512 * (2 * 64 + 128) / 64, "two quadratic terms"),
    ],
}
