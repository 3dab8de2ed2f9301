"""Checkers for chapter 2, *Attention as a soft dictionary* (the book's first complete exercise set).

Every expected value is computed here from first principles with plain ``torch`` operations —
never with :mod:`tformer.attention`, the code under study. Tokens are rows (GUIDE §2).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from tformer.checks.core import Wrong, call_reader, exercise, expect_number, expect_tensor, to_array

# Source 000's worked example, in the book's row convention.
X = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype=torch.float64)
W_Q = torch.tensor([[1.0, 0.0], [1.0, 2.0]], dtype=torch.float64).T  # Ω_qᵀ
W_K = torch.tensor([[1.0, 1.0], [0.0, 1.0]], dtype=torch.float64).T  # Ω_kᵀ
W_V = torch.eye(2, dtype=torch.float64)  # Ω_vᵀ

# Source 004's soft dictionary (pump, valve, tank) and its causal three-token example (Q = K).
LOOKUP_KEYS = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype=torch.float64)
LOOKUP_VALUES = torch.tensor([[1.0, 0.0], [0.0, 2.0], [3.0, 3.0]], dtype=torch.float64)
LOOKUP_QUERY = torch.tensor([1.0, 1.0], dtype=torch.float64)


def _unscaled_attention(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Weights ``(T, T)`` and outputs ``(T, 2)`` of 000's unscaled layer on rows ``x``."""
    queries, keys, values = x @ W_Q, x @ W_K, x @ W_V
    weights = torch.softmax(queries @ keys.T, dim=-1)
    return weights, weights @ values


def _close(value: np.ndarray, target: torch.Tensor, atol: float = 1e-3) -> bool:
    target_array = target.detach().numpy()
    return value.shape == target_array.shape and bool(np.allclose(value, target_array, atol=atol))


@exercise("02.1", "Output of position 2 by hand (source 000, exercise 12.1)")
def ex1(answer) -> None:
    """``answer``: the output vector of query 2, shape ``(2,)``, to at least three decimals."""
    weights, outputs = _unscaled_attention(X)
    value = to_array(answer, "the output of position 2")
    if _close(value, outputs[0]) or _close(value, outputs[2]):
        raise Wrong("that is the output of another position; position 2 is the second query")
    if _close(value, weights[1, :2]):
        raise Wrong("those look like attention weights; the output is the weighted sum of values")
    expect_tensor(
        value, outputs[1], name="the output of position 2", axes=("features",), atol=1.5e-3,
        rtol=0, rounding_tol=1e-2,
    )


@exercise("02.2", "How sharp must the soft dictionary be?")
def ex2(answer) -> None:
    """``answer``: the factor c at which the 'tank' weight of the soft lookup is exactly 0.9."""
    scores = LOOKUP_KEYS @ LOOKUP_QUERY / math.sqrt(2)  # (0.707, 0.707, 1.414)
    gap = float(scores[2] - scores[0])
    expected = math.log(2 * 0.9 / 0.1) / gap  # 0.9 = 1 / (1 + 2 e^{-c·gap})
    if isinstance(answer, int | float) and not isinstance(answer, bool):
        if math.isclose(float(answer), math.log(18), rel_tol=1e-3):
            raise Wrong("ln 18 is c times the score gap; divide by the gap 1/√2 (scores are scaled)")
        if math.isclose(float(answer), math.log(9) / gap, rel_tol=1e-3):
            raise Wrong("there are two other keys, each with weight e^{-c·gap} relative to 'tank'")
    expect_number(answer, expected, name="c", rel_tol=1e-3, rounding_tol=0.02)


@exercise("02.3", "Gradient of o₃,₁ with respect to row 3's scores")
def ex3(answer) -> None:
    """``answer``: ∂L/∂S[2, :] for L = outputs[2, 0] in 004's causal, scaled example, shape (3,)."""
    scores = (LOOKUP_KEYS @ LOOKUP_KEYS.T / math.sqrt(2))[2].clone().requires_grad_(True)
    loss = (torch.softmax(scores, dim=-1) @ LOOKUP_VALUES)[0]
    (expected,) = torch.autograd.grad(loss, scores)
    value = to_array(answer, "the gradient")
    if value.shape == (3,) and not math.isclose(float(value.sum()), 0.0, abs_tol=2e-3):
        raise Wrong(
            f"the entries sum to {value.sum():.3f}; the gradient of a softmax input always sums "
            "to 0 (adding a constant to every score changes nothing)"
        )
    expect_tensor(value, expected, name="the gradient", axes=("keys",), atol=1.5e-3, rtol=0,
                  rounding_tol=1e-2)


def _reference_lookup(query, keys, values, c):
    weights = torch.softmax(c * (keys @ query) / math.sqrt(keys.shape[-1]), dim=-1)
    return weights, weights @ values


@exercise("02.4", "Implement the soft lookup")
def ex4(soft_lookup) -> None:
    """``soft_lookup(query (d_k,), keys (T, d_k), values (T, d_v), c) -> (weights (T,), output)``."""
    generator = torch.Generator().manual_seed(2)
    cases = [(LOOKUP_QUERY, LOOKUP_KEYS, LOOKUP_VALUES, 1.0)]
    for c in (0.5, 3.0):
        cases.append((torch.randn(4, generator=generator, dtype=torch.float64),
                      torch.randn(6, 4, generator=generator, dtype=torch.float64),
                      torch.randn(6, 3, generator=generator, dtype=torch.float64), c))
    cases.append((LOOKUP_QUERY, LOOKUP_KEYS, LOOKUP_VALUES, 1000.0))
    for query, keys, values, c in cases:
        result = call_reader(soft_lookup, query.clone(), keys.clone(), values.clone(), c,
                             name="soft_lookup")
        if not isinstance(result, tuple | list) or len(result) != 2:
            raise Wrong("soft_lookup should return a pair (weights, output)")
        expected_weights, expected_output = _reference_lookup(query, keys, values, c)
        weights = to_array(result[0], "the weights")
        if np.isnan(weights).any() or np.isinf(weights).any():
            raise Wrong(
                f"with c = {c:g} the weights contain NaN/inf: exp overflowed — subtract the "
                "largest score before exponentiating"
            )
        if c == 1.0 and weights.shape == (3,) and np.allclose(
            weights, torch.softmax(keys @ query, -1).numpy(), atol=1e-4
        ):
            raise Wrong("the weights are unscaled: divide the scores by √d_k before multiplying by c")
        expect_tensor(weights, expected_weights, name=f"the weights (c = {c:g})", axes=("keys",),
                      rows_sum_to_one=True)
        expect_tensor(result[1], expected_output, name=f"the output (c = {c:g})",
                      axes=("features",))


@exercise("02.5", "A fourth token: the same matrices, a bigger table")
def ex5(answer) -> None:
    """``answer``: the (4, 4) weight matrix, queries × keys, after appending x₄ = (2, 0)."""
    x4 = torch.cat([X, torch.tensor([[2.0, 0.0]], dtype=torch.float64)])
    weights, _ = _unscaled_attention(x4)
    value = to_array(answer, "the weights")
    if _close(value, weights.T):
        raise Wrong(
            "this is source 000's layout (keys × queries, columns sum to 1); the book's table has "
            "one row per query — transpose it"
        )
    expect_tensor(value, weights, name="the weights", axes=("queries", "keys"), atol=2e-3,
                  rtol=0, rows_sum_to_one=True, rounding_tol=1e-2)


@exercise("02.6", "Attention is not linear in X")
def ex6(answer) -> None:
    """``answer``: the output of query 1 when every input is doubled (2X), shape (2,)."""
    _, outputs = _unscaled_attention(X)
    _, doubled = _unscaled_attention(2 * X)
    value = to_array(answer, "the output")
    if _close(value, 2 * outputs[0]):
        raise Wrong(
            "that is 2 × the original output — what a linear layer would give; doubling X also "
            "multiplies every score by 4, which sharpens the weights"
        )
    expect_tensor(value, doubled[0], name="the output", axes=("features",), atol=1.5e-3, rtol=0,
                  rounding_tol=1e-2)


@exercise("02.7", "Inside the convex hull")
def ex7(answer) -> None:
    """``answer``: weights (3,) over v₁, v₂, v₃ of 004's example whose output is (1.5, 1.5)."""
    target = torch.tensor([1.5, 1.5], dtype=torch.float64)
    system = torch.cat([LOOKUP_VALUES.T, torch.ones(1, 3, dtype=torch.float64)])
    expected = torch.linalg.solve(system, torch.cat([target, torch.ones(1, dtype=torch.float64)]))
    value = to_array(answer, "the weights")
    if value.shape == (3,) and not math.isclose(float(value.sum()), 1.0, abs_tol=2e-3):
        raise Wrong(f"the weights sum to {value.sum():.3f}; attention weights always sum to 1")
    if value.shape == (3,) and (value < 0).any():
        raise Wrong("a softmax never gives a negative weight; every weight must be > 0")
    if value.shape == (3,):
        reached = value @ LOOKUP_VALUES.numpy()
        if not np.allclose(reached, target.numpy(), atol=2e-3):
            raise Wrong(f"these weights give the output {reached.round(3)}, not (1.5, 1.5)")
    expect_tensor(value, expected, name="the weights", axes=("keys",), atol=2e-3, rtol=0)
