"""Checkers for chapter 2, *Attention as a soft dictionary*.

Every expected value is computed here from first principles with plain ``torch`` operations —
never with :mod:`tformer.attention`, the code under study. Tokens are rows (GUIDE §2); the running
example is scaled by 1/√d_k, as in the chapter.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from tformer.checks.core import (
    Mistake,
    Wrong,
    call_reader,
    exercise,
    expect_number,
    expect_tensor,
    to_array,
)

# The running example, in the book's row convention (W = Ωᵀ of the column-convention original).
X = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype=torch.float64)
W_Q = torch.tensor([[1.0, 0.0], [1.0, 2.0]], dtype=torch.float64).T
W_K = torch.tensor([[1.0, 1.0], [0.0, 1.0]], dtype=torch.float64).T
W_V = torch.eye(2, dtype=torch.float64)

# The soft dictionary (pump, valve, tank) and the causal three-token example built on it (Q = K).
LOOKUP_KEYS = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype=torch.float64)
LOOKUP_VALUES = torch.tensor([[1.0, 0.0], [0.0, 2.0], [3.0, 3.0]], dtype=torch.float64)
LOOKUP_QUERY = torch.tensor([1.0, 1.0], dtype=torch.float64)

X3_MOVED = torch.tensor([1.0, 2.0], dtype=torch.float64)  # exercise 02.1
X4_NEW = torch.tensor([2.0, 1.0], dtype=torch.float64)  # exercise 02.5


def _attention(x: torch.Tensor, *, scale: float = 1 / math.sqrt(2),
               values: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Weights ``(T, T)`` and outputs ``(T, 2)`` of the running example's layer on rows ``x``."""
    queries, keys = x @ W_Q, x @ W_K
    values = x @ W_V if values is None else values
    weights = torch.softmax(scale * (queries @ keys.T), dim=-1)
    return weights, weights @ values


def _close(value: np.ndarray, target: torch.Tensor, atol: float = 1e-3) -> bool:
    target_array = target.detach().numpy()
    return value.shape == target_array.shape and bool(np.allclose(value, target_array, atol=atol))


def _moved() -> torch.Tensor:
    x = X.clone()
    x[2] = X3_MOVED
    return x


@exercise("02.1", "Output of position 2 by hand, with x₃ moved")
def ex1(answer) -> None:
    """``answer``: o₂ (2,) of the scaled running example with x₃ = (1, 2)."""
    x = _moved()
    weights, outputs = _attention(x)
    value = to_array(answer, "the output of position 2")
    if value.shape == (3,):
        raise Wrong("three numbers look like the weights of query 2; the output is their "
                    "weighted sum of the values, two numbers")
    if _close(value, _attention(x, scale=1.0)[1][1]):
        raise Wrong("those are the unscaled outputs; divide every score by √d_k = √2 first")
    if _close(value, weights[1] @ (X @ W_V)):
        raise Wrong("the weights are right, but the value of token 3 moved with it: "
                    "v₃ = x₃ W_V = (1, 2)")
    if _close(value, _attention(X)[1][1]):
        raise Wrong("that is o₂ of the original example; x₃ moved to (1, 2), so k₃ and v₃ changed")
    if _close(value, outputs[0]) or _close(value, outputs[2]):
        raise Wrong("that is the output of another position; position 2 is the second query")
    expect_tensor(value, outputs[1], name="the output of position 2", axes=("features",),
                  atol=1.5e-3, rtol=0, rounding_tol=1e-2)


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


def _ex3_expected(scale: float = 1 / math.sqrt(2), component: int = 0) -> torch.Tensor:
    scores = (scale * (LOOKUP_KEYS @ LOOKUP_KEYS.T))[2].clone().requires_grad_(True)
    loss = (torch.softmax(scores, dim=-1) @ LOOKUP_VALUES)[component]
    (gradient,) = torch.autograd.grad(loss, scores)
    return gradient


@exercise("02.3", "Gradient of o₃,₁ with respect to row 3's scores")
def ex3(answer) -> None:
    """``answer``: ∂L/∂S[2, :] for L = outputs[2, 0] in the causal, scaled example, shape (3,)."""
    expected = _ex3_expected()
    value = to_array(answer, "the gradient")
    if _close(value, _ex3_expected(component=1)):
        raise Wrong("that is the gradient of the chapter's o₃,₂ (second component); this "
                    "exercise takes the first component, o₃,₁")
    weights = torch.softmax(LOOKUP_KEYS[2] @ LOOKUP_KEYS.T / math.sqrt(2), dim=-1)
    g = LOOKUP_VALUES[:, 0]
    if _close(value, g - weights @ g):
        raise Wrong("each entry g_j − ḡ still has to be multiplied by its weight A_3j")
    if _close(value, _ex3_expected(scale=1.0)):
        raise Wrong("those are the gradients of the unscaled scores; the example divides by "
                    "√d_k = √2")
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
    cases.append((LOOKUP_QUERY.float(), LOOKUP_KEYS.float(), LOOKUP_VALUES.float(), 100.0))
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


def _ex5_factors(scale: float = 1 / math.sqrt(2)) -> tuple[torch.Tensor, torch.Tensor]:
    weights, _ = _attention(X, scale=scale)
    weights4, _ = _attention(torch.cat([X, X4_NEW[None]]), scale=scale)
    return weights4[:3, :3] / weights, weights4[:3, 3]


@exercise("02.5", "What a new token does to the old weights")
def ex5(answer) -> None:
    """``answer``: the factors (3,) by which queries 1–3's weights on keys 1–3 shrink when
    x₄ = (2, 1) is appended to the scaled running example."""
    ratios, on_key4 = _ex5_factors()
    expected = ratios[:, 0]
    value = to_array(answer, "the three factors")
    if value.shape == (3, 3):
        raise Wrong("give one factor per query: within a row, every old weight shrinks by the "
                    "same factor — check that your nine ratios agree along each row")
    if value.shape == (3,):
        if np.allclose(value, 1.0, atol=1e-3):
            raise Wrong("the old weights do not survive a new token: every weight changes, "
                        "because each row's softmax now also divides by e^{s_i4}")
        if _close(value, on_key4):
            raise Wrong("those are the weights on key 4; the old weights shrink by the factor "
                        "1 − A_i4")
        if _close(value, _ex5_factors(scale=1.0)[0][:, 0]):
            raise Wrong("those factors come from unscaled scores; divide by √d_k = √2")
    expect_tensor(value, expected, name="the factors", axes=("queries",), atol=1.5e-3, rtol=0,
                  rounding_tol=1e-2)


@exercise("02.6", "Attention is not linear in X")
def ex6(answer) -> None:
    """``answer``: the output of query 1 of the scaled running example for the input X/2, (2,)."""
    _, outputs = _attention(X)
    weights_half = torch.softmax((X @ W_Q) @ (X @ W_K).T / math.sqrt(2) / 2, dim=-1)
    _, halved = _attention(X / 2)
    value = to_array(answer, "the output")
    if _close(value, outputs[0] / 2):
        raise Wrong(
            "that is half the original output — what a linear layer would give; halving X also "
            "multiplies every score by 1/4, which flattens the weights"
        )
    if _close(value, weights_half[0] @ (X / 2)):
        raise Wrong("the scores shrink by a quarter, not a half: both the query and the key are "
                    "halved")
    expect_tensor(value, halved[0], name="the output", axes=("features",), atol=1.5e-3, rtol=0,
                  rounding_tol=1e-2)


@exercise("02.7", "Inside the convex hull")
def ex7(answer) -> None:
    """``answer``: weights (3,) over v₁, v₂, v₃ = (1, 0), (0, 2), (3, 3) whose output is (1.5, 1.5)."""
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


def _wrong_lookup_unstable(query, keys, values, c=1.0):
    scores = c * (keys @ query) / math.sqrt(keys.shape[-1])
    weights = torch.exp(scores) / torch.exp(scores).sum()
    return weights, weights @ values


def _wrong_lookup_unscaled(query, keys, values, c=1.0):
    scores = c * (keys @ query)
    weights = torch.exp(scores - scores.max())
    weights = weights / weights.sum()
    return weights, weights @ values


def _ex7_no_sum_row():
    # solves only the two coordinate equations (least squares), forgetting Σ a = 1
    return torch.linalg.lstsq(LOOKUP_VALUES.T, torch.tensor([1.5, 1.5], dtype=torch.float64)).solution


MISTAKES: dict[str, list[Mistake]] = {
    "02.1": [
        Mistake("unscaled scores", lambda: _attention(_moved(), scale=1.0)[1][1], "√d_k"),
        Mistake("old value of token 3", lambda: _attention(_moved())[0][1] @ X, "v₃"),
        Mistake("weights instead of the output", lambda: _attention(_moved())[0][1], "weights"),
        Mistake("the unchanged example", lambda: _attention(X)[1][1], "x₃ moved"),
    ],
    "02.2": [
        Mistake("forgot to divide by the score gap", lambda: math.log(18), "divide by the gap"),
        Mistake("only one other key", lambda: math.log(9) * math.sqrt(2), "two other keys"),
    ],
    "02.3": [
        Mistake("the chapter's second component", lambda: _ex3_expected(component=1),
                "first component"),
        Mistake("forgot the weight factor", lambda: LOOKUP_VALUES[:, 0] - torch.softmax(
            LOOKUP_KEYS[2] @ LOOKUP_KEYS.T / math.sqrt(2), -1) @ LOOKUP_VALUES[:, 0], "A_3j"),
        Mistake("unscaled scores", lambda: _ex3_expected(scale=1.0), "√d_k"),
    ],
    "02.4": [
        Mistake("no max subtraction", lambda: _wrong_lookup_unstable, "subtract the largest"),
        Mistake("unscaled scores", lambda: _wrong_lookup_unscaled, "unscaled"),
    ],
    "02.5": [
        Mistake("weights assumed unchanged", lambda: torch.ones(3), "every weight changes"),
        Mistake("weight on the new key", lambda: _ex5_factors()[1], "weights on key 4"),
        Mistake("unscaled scores", lambda: _ex5_factors(scale=1.0)[0][:, 0], "√d_k"),
        Mistake("nine ratios", lambda: _ex5_factors()[0], "one factor per query"),
    ],
    "02.6": [
        Mistake("assumed linear", lambda: _attention(X)[1][0] / 2, "linear"),
        Mistake("scores halved, not quartered", lambda: torch.softmax(
            (X @ W_Q) @ (X @ W_K).T / math.sqrt(2) / 2, -1)[0] @ (X / 2), "a quarter"),
    ],
    "02.7": [
        Mistake("forgot that weights sum to 1", _ex7_no_sum_row, "sum to 1"),
        Mistake("dictionary keys instead of values", lambda: torch.linalg.solve(
            torch.cat([LOOKUP_KEYS.T, torch.ones(1, 3, dtype=torch.float64)]),
            torch.tensor([1.5, 1.5, 1.0], dtype=torch.float64)), "negative"),
    ],
}
