"""Checkers for chapter 4, *Why divide by √d_k*.

Expected values come from closed forms or plain ``torch`` (``torch.softmax``, autograd), never
from :mod:`tformer.attention` or :mod:`tformer.saturation`, the code under study.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from tformer.checks.core import Wrong, as_tuple, call_reader, exercise, expect_number, expect_tensor, to_array


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.number | torch.Tensor):
        raise Wrong(f"{name} should be a number, got {type(value).__name__}")
    array = to_array(value, name)
    if array.size != 1:
        raise Wrong(f"{name} should be a single number, got shape {array.shape}")
    return float(array.reshape(()))


@exercise("04.1", "Standard deviation of a score (source 000, exercise 12.3)")
def ex1(answer) -> None:
    """``answer``: (std of q·k, std of q·k/√d_k) for d_k = 128 unit-variance entries."""
    unscaled, scaled = as_tuple(answer, 2, "(std before scaling, std after scaling)")
    if math.isclose(_number(unscaled, "the unscaled std"), 128.0):
        raise Wrong("128 is the variance; the standard deviation is its square root")
    expect_number(unscaled, math.sqrt(128), name="the unscaled std", rel_tol=1e-3,
                  rounding_tol=0.06)
    expect_number(scaled, 1.0, name="the scaled std", rel_tol=1e-3, rounding_tol=0.01)


@exercise("04.2", "Mean and variance of a dot product, simulated (source 001)")
def ex2(answer) -> None:
    """``answer``: (empirical mean of q·k, empirical Var(q·k), empirical Var(q·k/√d_k)) for
    d_k = 256 and 10,000 draws."""
    mean, variance, scaled_variance = (
        _number(x, name) for x, name in zip(
            as_tuple(answer, 3, "(mean, variance, scaled variance)"),
            ("the mean", "the variance", "the scaled variance"),
        )
    )
    d_k, n_draws = 256, 10_000
    # standard error of the mean of 10,000 scores of variance 256: 0.16
    if abs(mean) > 5 * math.sqrt(d_k / n_draws):
        raise Wrong(f"the mean {mean:.3g} is far from 0; each term q_i k_i has mean 0")
    if math.isclose(variance, 16.0, rel_tol=0.1):
        raise Wrong("that looks like a standard deviation; give the variance")
    if not math.isclose(variance, d_k, rel_tol=0.08):
        raise Wrong(f"Var(q·k) should be close to d_k = {d_k}, got {variance:.4g}; "
                    "are the entries standard normal and the draws independent?")
    if math.isclose(scaled_variance, 1 / d_k, rel_tol=0.1):
        raise Wrong("you divided by d_k; divide the scores by √d_k (the variance then drops by d_k)")
    if not math.isclose(scaled_variance, 1.0, rel_tol=0.08):
        raise Wrong(f"after dividing by √d_k the variance should be near 1, got {scaled_variance:.4g}")


@exercise("04.3", "The softmax Jacobian, implemented")
def ex3(answer) -> None:
    """``answer``: a function ``p (n,) -> J (n, n)`` with ``J[i, j] = ∂p_i/∂s_j``."""
    generator = torch.Generator().manual_seed(43)
    rows = [3 * torch.randn(n, generator=generator, dtype=torch.float64) for n in (2, 5, 8)]
    rows.append(torch.tensor([40.0, 0.0, 0.0], dtype=torch.float64))  # saturated
    for scores in rows:
        p = torch.softmax(scores, dim=-1)
        expected = torch.autograd.functional.jacobian(lambda s: torch.softmax(s, dim=-1), scores)
        value = to_array(call_reader(answer, p.clone(), name="your Jacobian function"),
                         "the Jacobian")
        n = p.shape[0]
        if value.shape == (n, n):
            if np.allclose(value, -np.outer(p, p), atol=1e-8):
                raise Wrong("the diagonal is missing: J = diag(p) − p pᵀ")
            if np.allclose(value, np.diag(p.numpy()), atol=1e-8):
                raise Wrong("the off-diagonal part −p pᵀ is missing")
        expect_tensor(value, expected, name=f"the Jacobian for n = {n}",
                      axes=("outputs p_i", "scores s_j"), atol=1e-8, rtol=1e-6)


@exercise("04.4", "The trace of the Jacobian, by hand")
def ex4(answer) -> None:
    """``answer``: (trace of J at p = softmax(1, 2, 3), the largest possible trace for 16 keys)."""
    p = torch.softmax(torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64), dim=-1)
    trace, largest = as_tuple(answer, 2, "(the trace, the largest trace for 16 keys)")
    if math.isclose(_number(trace, "the trace"), float((p**2).sum()), rel_tol=1e-3):
        raise Wrong("that is Σ p_i²; the trace is Σ p_i (1 − p_i) = 1 − Σ p_i²")
    expect_number(trace, float(1 - (p**2).sum()), name="the trace", rel_tol=1e-3,
                  rounding_tol=5e-3)
    if math.isclose(_number(largest, "the largest trace"), 1.0):
        raise Wrong("the trace reaches 1 only with infinitely many keys; with 16 uniform weights "
                    "it is 1 − 16 · (1/16)²")
    expect_number(largest, 1 - 1 / 16, name="the largest trace", rel_tol=1e-4, rounding_tol=5e-3)


@exercise("04.5", "The worked example, scaled (source 000)")
def ex5(answer) -> None:
    """``answer``: query 2's weights (3,) for scores (0, 2, 2) divided by √2."""
    scores = torch.tensor([0.0, 2.0, 2.0], dtype=torch.float64)
    value = to_array(answer, "the weights")
    if value.shape == (3,):
        if np.allclose(value, torch.softmax(scores, -1).numpy(), atol=2e-3):
            raise Wrong("those are the unscaled weights (0.063, 0.468, 0.468); divide by √2 first")
        if np.allclose(value, torch.softmax(scores / 2, -1).numpy(), atol=2e-3):
            raise Wrong("you divided by d_k = 2; divide by √d_k = √2")
    expect_tensor(value, torch.softmax(scores / math.sqrt(2), -1), name="the weights",
                  axes=("keys",), atol=1.5e-3, rtol=0, rows_sum_to_one=True, rounding_tol=1e-2)


@exercise("04.6", "When does unscaled attention become a hard choice?")
def ex6(answer) -> None:
    """``answer``: the smallest d_k among 1, 2, 4, …, 1024 at which the mean largest unscaled
    weight (one query, 16 keys, 2,000 draws) exceeds 0.9."""
    value = _number(answer, "d_k")
    means = {}
    for d_k in (128, 256):  # recomputed here with plain torch: 0.89 and 0.92 (±0.005)
        generator = torch.Generator().manual_seed(1000 + d_k)
        queries = torch.randn(2000, 1, d_k, generator=generator)
        keys = torch.randn(2000, 16, d_k, generator=generator)
        weights = torch.softmax(queries @ keys.transpose(-2, -1), dim=-1)
        means[d_k] = float(weights.amax(dim=-1).mean())
    expected = 128 if means[128] > 0.9 else 256
    if value == expected // 2:
        raise Wrong(f"at d_k = {expected // 2} the mean largest weight is about "
                    f"{means[expected // 2]:.2f}, still below 0.9")
    if value > expected and value in (512.0, 1024.0):
        raise Wrong("the mean already exceeds 0.9 at a smaller width; look again")
    if value not in [float(2**k) for k in range(11)]:
        raise Wrong("the widths to try are the powers of two 1, 2, 4, …, 1024")
    expect_number(value, expected, name="d_k", rel_tol=0, abs_tol=0.5)
