"""Checkers for chapter 3, *Self-attention in matrix form*.

Every expected value is computed here from first principles with plain ``torch`` operations (or
closed forms), never with :mod:`tformer.attention`, the code under study. Tokens are rows.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from tformer.checks.core import (
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


@exercise("03.5", "Equivariance, and how positions break it (source 001)")
def ex5(answer) -> None:
    """``answer``: (largest |Sa(PX) − P Sa(X)| without positions, the same with positions added)."""
    without, with_positions = as_tuple(answer, 2, "(gap without positions, gap with positions)")
    without = as_number(without, "the gap without positions")
    with_positions = as_number(with_positions, "the gap with positions")
    if not (math.isfinite(without) and math.isfinite(with_positions)):
        raise Wrong("both gaps should be finite numbers; a NaN or inf points at a broken computation")
    if without > 1e-5:
        raise Wrong(
            f"without positions the gap should be rounding error, got {without:.3g}; compare "
            "Sa(P X) with P Sa(X) (permute the output rows), not with Sa(X)"
        )
    if with_positions < 1e-3:
        raise Wrong(
            "with positions the gap should be clearly non-zero; add the position table to X "
            "*after* permuting the tokens (positions stay where they are), i.e. Sa(PX + E)"
        )


@exercise("03.6", "Shapes and memory of a batch of scores (source 001)")
def ex6(answer) -> None:
    """``answer``: (d_k, number of score entries, bytes of the float32 score tensor) for
    m = 8, T = 128, d = 256, H = 8."""
    batch, length, width, heads = 8, 128, 256, 8
    d_k = width // heads
    n_scores = batch * heads * length * length
    d_k_answer, n_answer, bytes_answer = as_tuple(answer, 3, "(d_k, score entries, bytes)")
    expect_number(d_k_answer, d_k, name="d_k", rel_tol=0, abs_tol=0.5)
    if isinstance(n_answer, int | float) and not isinstance(n_answer, bool):
        if n_answer == batch * length * length:
            raise Wrong("every head has its own T × T score matrix; multiply by H")
        if n_answer == batch * heads * length * d_k:
            raise Wrong("that is the size of Q (B, H, T, d_k); the scores are (B, H, T, T)")
    expect_number(n_answer, n_scores, name="the number of score entries", rel_tol=0, abs_tol=0.5)
    is_number = isinstance(bytes_answer, int | float) and not isinstance(bytes_answer, bool)
    if is_number and bytes_answer in (n_scores, 8 * n_scores):
        raise Wrong("a float32 number takes 4 bytes")
    expect_number(bytes_answer, 4 * n_scores, name="the bytes", rel_tol=0, abs_tol=0.5)


@exercise("03.7", "Where the quadratic term takes over")
def ex7(answer) -> None:
    """``answer``: the length T at which T²(d_k + d_v) equals T·d·(2d_k + d_v), d = d_k = d_v = 768."""
    d = 768
    expected = d * (2 * d + d) / (d + d)  # 1152
    if isinstance(answer, int | float) and not isinstance(answer, bool):
        if math.isclose(answer, 3 * d**2 / d):
            raise Wrong("there are two quadratic terms, T²d_k (scores) and T²d_v (mixing)")
        if math.isclose(answer, d):
            raise Wrong("T = d is where T²d equals Td² for one term each; count all three projections")
    expect_number(answer, expected, name="T*", rel_tol=1e-6, rounding_tol=1.0)
