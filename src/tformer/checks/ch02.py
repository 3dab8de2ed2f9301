"""Checkers for chapter 2, *Attention as a soft dictionary*.

Every expected value is computed here from first principles with plain ``torch`` operations —
never with :mod:`tformer.attention`, the code under study. Tokens are rows (GUIDE §2); the running
example is scaled by 1/√d_k, as in the chapter. Before the generic comparison, each checker
compares the answer with the exercise's family of wrong variants computed from its own data
(unscaled, divided by d_k instead of √d_k, the softmax over the queries, W transposed, the wrong
query, a term left out of a derivative, a factor inverted, the wrong logarithm …) and names the
one that matches.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from tformer.checks.ch01 import watched_call
from tformer.checks.core import (
    Mistake,
    Wrong,
    as_number,
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

SQRT2 = math.sqrt(2)


def _attention(x: torch.Tensor, *, scale: float = 1 / SQRT2, values: torch.Tensor | None = None,
               w_q: torch.Tensor = W_Q, w_k: torch.Tensor = W_K,
               softmax_dim: int = -1) -> tuple[torch.Tensor, torch.Tensor]:
    """Weights ``(T, T)`` and outputs ``(T, 2)`` of the running example's layer on rows ``x``
    (the variants: another scale, other values, transposed projections, the softmax axis)."""
    queries, keys = x @ w_q, x @ w_k
    values = x @ W_V if values is None else values
    weights = torch.softmax(scale * (queries @ keys.T), dim=softmax_dim)
    return weights, weights @ values


def _close(value: np.ndarray, target: torch.Tensor, atol: float = 1e-3) -> bool:
    target_array = target.detach().numpy() if isinstance(target, torch.Tensor) else target
    return value.shape == target_array.shape and bool(np.allclose(value, target_array, atol=atol))


def _first_match(value: np.ndarray, variants, atol: float = 1e-3) -> str:
    """The hint of the first ``(variant, hint)`` that ``value`` matches, or ``""``."""
    for variant, hint in variants:
        if _close(value, variant, atol):
            return hint
    return ""


def _moved() -> torch.Tensor:
    x = X.clone()
    x[2] = X3_MOVED
    return x


# ---------------------------------------------------------------------------------------------
# 02.1


@exercise("02.1", "Output of position 2 by hand, with x₃ moved")
def ex1(answer) -> None:
    """``answer``: o₂ (2,) of the scaled running example with x₃ = (1, 2)."""
    x = _moved()
    weights, outputs = _attention(x)
    value = to_array(answer, "the output of position 2")
    if value.shape == (3,):
        raise Wrong("three numbers look like the weights of query 2; the output is their "
                    "weighted sum of the values, two numbers")
    if _close(value, outputs[1], 1.5e-3):
        return
    hint = _first_match(value, [
        (_attention(x, scale=1.0)[1][1],
         "those are the unscaled outputs; divide every score by √d_k = √2 first"),
        (_attention(x, scale=0.5)[1][1],
         "you divided the scores by d_k = 2; divide them by √d_k = √2"),
        (weights[1] @ (X @ W_V),
         "the weights are right, but the value of token 3 moved with it: v₃ = x₃ W_V = (1, 2)"),
        (_attention(X)[1][1],
         "that is o₂ of the original example; x₃ moved to (1, 2), so k₃ and v₃ changed"),
        (_attention(x, w_k=W_K.T)[1][1],
         "you used Ω_k = W_Kᵀ, the column convention: with tokens as rows the keys are "
         "k_j = x_j W_K, so k₃ = (3, 2)"),
        (_attention(x, w_q=W_Q.T)[1][1],
         "you used Ω_q = W_Qᵀ, the column convention: with tokens as rows q₂ = x₂ W_Q = (0, 2)"),
        (_attention(x, w_q=W_Q.T, w_k=W_K.T)[1][1],
         "you used Ω_q and Ω_k (the column convention): with tokens as rows q = x W_Q and "
         "k = x W_K"),
        (_attention(x, softmax_dim=0)[1][1],
         "the softmax ran over the queries (dim=0): query 2's weights run over the three keys, "
         "so they sum to 1 along its row"),
        (outputs[0], "that is the output of another position; position 2 is the second query"),
        (outputs[2], "that is the output of another position; position 2 is the second query"),
    ])
    if hint:
        raise Wrong(hint)
    expect_tensor(value, outputs[1], name="the output of position 2", axes=("features",),
                  atol=1.5e-3, rtol=0, rounding_tol=1e-2)


# ---------------------------------------------------------------------------------------------
# 02.2


def _tank_weight(c: float) -> float:
    """The weight on 'tank' when the scaled scores (1/√2, 1/√2, 2/√2) are multiplied by c."""
    scores = (LOOKUP_KEYS @ LOOKUP_QUERY / SQRT2) * c
    return float(torch.softmax(scores, dim=-1)[2])


@exercise("02.2", "How sharp must the soft dictionary be?")
def ex2(answer) -> None:
    """``answer``: the factor c at which the 'tank' weight of the soft lookup is exactly 0.9."""
    scores = LOOKUP_KEYS @ LOOKUP_QUERY / SQRT2  # (0.707, 0.707, 1.414)
    gap = float(scores[2] - scores[0])
    expected = math.log(2 * 0.9 / 0.1) / gap  # 0.9 = 1 / (1 + 2 e^{-c·gap})
    value = as_number(answer, "c")
    if math.isfinite(value) and not math.isclose(value, expected, rel_tol=1e-3):
        variants = [
            (math.log(18),
             "ln 18 is c times the score gap; divide by the gap 1/√2 (scores are scaled)"),
            (math.log(9) / gap,
             "there are two other keys, each with weight e^{-c·gap} relative to 'tank'"),
            (math.log(4.5) / gap,
             "the two other keys add up: 2 e^{-c·gap} = 1/9, so e^{c·gap} = 18, not 4.5"),
            (math.log(18) * gap,
             "c · (1/√2) = ln 18 gives c = √2 · ln 18: you divided ln 18 by √2 instead of "
             "multiplying"),
            (math.log10(18) / gap,
             "that uses log₁₀; the softmax's exponentials call for the natural logarithm "
             "(math.log): c = √2 · ln 18"),
            (math.log2(18) / gap,
             "that uses log₂; the softmax's exponentials call for the natural logarithm "
             "(math.log): c = √2 · ln 18"),
            ((math.log(18) + 1 / SQRT2) / SQRT2,
             "c multiplies all three scores, pump's and valve's too, not only tank's: the "
             "weight is 1 / (1 + 2 e^{−c/√2})"),
            (math.log(2 * 0.1 / 0.9) / gap,
             "that c gives 'tank' the weight 0.1; solve 1 / (1 + 2 e^{−c/√2}) = 0.9"),
        ]
        for variant, hint in variants:
            if math.isclose(value, variant, rel_tol=2e-3):
                raise Wrong(hint)
        if abs(value - expected) <= 0.15:
            weight = _tank_weight(value)
            if abs(value - expected) > 0.02:
                raise Wrong(f"c = {value:g} is rounded too far: at that c the weight on tank is "
                            f"{weight:.3f}, not 0.9; keep three decimals")
        elif abs(value) < 1e3:
            raise Wrong(f"c = {value:g} is not the factor: at that c the weight on tank is "
                        f"{_tank_weight(value):.3f}, not 0.9; solve 1 / (1 + 2 e^{{−c/√2}}) = 0.9")
    expect_number(answer, expected, name="c", rel_tol=1e-3, rounding_tol=0.02)


# ---------------------------------------------------------------------------------------------
# 02.3


def _ex3_expected(scale: float = 1 / SQRT2, component: int = 0) -> torch.Tensor:
    scores = (scale * (LOOKUP_KEYS @ LOOKUP_KEYS.T))[2].clone().requires_grad_(True)
    loss = (torch.softmax(scores, dim=-1) @ LOOKUP_VALUES)[component]
    (gradient,) = torch.autograd.grad(loss, scores)
    return gradient


@exercise("02.3", "Gradient of o₃,₁ with respect to row 3's scores")
def ex3(answer) -> None:
    """``answer``: ∂L/∂S[2, :] for L = outputs[2, 0] in the causal, scaled example, shape (3,)."""
    expected = _ex3_expected()
    value = to_array(answer, "the gradient")
    weights = torch.softmax(LOOKUP_KEYS[2] @ LOOKUP_KEYS.T / SQRT2, dim=-1)
    g = LOOKUP_VALUES[:, 0]
    g_bar = weights @ g
    if not _close(value, expected, 1.5e-3):
        hint = _first_match(value, [
            (_ex3_expected(component=1),
             "that is the gradient of the chapter's o₃,₂ (second component); this exercise "
             "takes the first component, o₃,₁"),
            (g - g_bar, "each entry g_j − ḡ still has to be multiplied by its weight A_3j"),
            (_ex3_expected(scale=1.0),
             "those are the gradients of the unscaled scores; the example divides by √d_k = √2"),
            (weights * g,
             "you left out ḡ: each entry is A_3j (g_j − ḡ), with ḡ = Σ_k A_3k g_k the weighted "
             "mean of the g_j (that is o₃,₁ itself)"),
            (weights * (g - g.mean()),
             "ḡ is the attention-weighted mean Σ_k A_3k g_k, not the plain mean of the g_j"),
            (-expected, "the sign is flipped: ∂L/∂S_3j = A_3j (g_j − ḡ)"),
            (expected / SQRT2,
             "that is the gradient with respect to the unscaled dot products (one more factor "
             "1/√2 from the chain rule); the exercise differentiates by the scaled scores S_3j"),
            (g, "those are the g_j = (∂L/∂o₃)·v_j; the gradient of a score is A_3j (g_j − ḡ)"),
            (weights, "those are the weights A_3j; the gradient of a score is A_3j (g_j − ḡ)"),
        ])
        if hint:
            raise Wrong(hint)
    if value.shape == (3,) and not math.isclose(float(value.sum()), 0.0, abs_tol=2e-3):
        raise Wrong(
            f"the entries sum to {value.sum():.3f}; the gradient of a softmax input always sums "
            "to 0 (adding a constant to every score changes nothing)"
        )
    expect_tensor(value, expected, name="the gradient", axes=("keys",), atol=1.5e-3, rtol=0,
                  rounding_tol=1e-2)


# ---------------------------------------------------------------------------------------------
# 02.4


def _reference_lookup(query, keys, values, c, *, scale: float | None = None):
    scale = 1 / math.sqrt(keys.shape[-1]) if scale is None else scale
    weights = torch.softmax(c * (keys @ query) * scale, dim=-1)
    return weights, weights @ values


_EX4_SHORTCUTS = {"softmax", "log_softmax", "_softmax", "scaled_dot_product_attention"}


def _ex4_cases() -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor, float]]:
    """The lookup of the chapter (d_k = d_v = 2), random ones with d_k = 4 ≠ d_v = 3 and other
    c, and large c (scores that overflow exp without the max subtraction)."""
    generator = torch.Generator().manual_seed(2)
    cases = [(LOOKUP_QUERY, LOOKUP_KEYS, LOOKUP_VALUES, 1.0)]
    for c in (0.3, 3.0):  # c ≠ 1/√d_k = 0.5, so that a forgotten √d_k and c tell apart
        cases.append((torch.randn(4, generator=generator, dtype=torch.float64),
                      torch.randn(6, 4, generator=generator, dtype=torch.float64),
                      torch.randn(6, 3, generator=generator, dtype=torch.float64), c))
    cases.append((LOOKUP_QUERY.float(), LOOKUP_KEYS.float(), LOOKUP_VALUES.float(), 100.0))
    cases.append((LOOKUP_QUERY, LOOKUP_KEYS, LOOKUP_VALUES, 1000.0))
    return cases


def _ex4_weight_hint(weights: np.ndarray, query, keys, values, c: float) -> str:
    """The variant of the weights that ``weights`` matches, as a hint, or ``""``."""
    d_k, d_v = keys.shape[-1], values.shape[-1]
    variants = [
        (_reference_lookup(query, keys, values, c, scale=1.0)[0],
         "the weights are unscaled: divide the scores by √d_k before multiplying by c"),
        (_reference_lookup(query, keys, values, c, scale=1 / d_k)[0],
         "you divided the scores by d_k; divide them by √d_k (and multiply by c)"),
    ]
    if c != 1.0:
        variants += [
            (_reference_lookup(query, keys, values, 1.0)[0],
             f"the weights do not change with c (c = {c:g} gives the weights of c = 1): "
             "multiply the scores by c, softmax(c K q / √d_k)"),
            (_reference_lookup(query, keys, values, 1 / c)[0],
             "you divided the scores by c; c multiplies them: softmax(c K q / √d_k)"),
        ]
    if d_v != d_k:
        variants.append((_reference_lookup(query, keys, values, c, scale=1 / math.sqrt(d_v))[0],
                         "you divided by √d_v, the width of the values (values.shape[-1]); the "
                         "scale is √d_k, the width of the keys (keys.shape[-1])"))
    for variant, hint in variants:
        if _close(weights, variant, 1e-5):
            return hint
    return ""


@exercise("02.4", "Implement the soft lookup")
def ex4(soft_lookup) -> None:
    """``soft_lookup(query (d_k,), keys (T, d_k), values (T, d_v), c) -> (weights (T,), output)``,
    with elementary operations only (no torch.softmax, no tformer), stable for c = 1000."""
    shortcut = False
    for query, keys, values, c in _ex4_cases():
        result, watch = watched_call(soft_lookup, query.clone(), keys.clone(), values.clone(), c,
                                     name="soft_lookup")
        if not isinstance(result, tuple | list) or len(result) != 2:
            raise Wrong("soft_lookup should return a pair (weights, output)")
        shortcut = shortcut or bool(watch.names & _EX4_SHORTCUTS) or watch.tformer
        expected_weights, expected_output = _reference_lookup(query, keys, values, c)
        weights = to_array(result[0], "the weights")
        output = to_array(result[1], f"the output (c = {c:g})")
        if np.isnan(weights).any() or np.isinf(weights).any():
            raise Wrong(
                f"with c = {c:g} the weights contain NaN/inf: exp overflowed — subtract the "
                "largest score before exponentiating"
            )
        if weights.shape == (1, len(keys)) or output.shape == (1, values.shape[-1]):
            raise Wrong(f"the weights have shape {weights.shape} and the output "
                        f"{output.shape}: the query is a vector (d_k,), so keys @ query gives "
                        "(T,) and the output (d_v,) — no extra axis of size 1")
        if not _close(weights, expected_weights, 1e-5):
            hint = _ex4_weight_hint(weights, query, keys, values, c)
            if hint:
                raise Wrong(hint)
        expect_tensor(weights, expected_weights, name=f"the weights (c = {c:g})", axes=("keys",),
                      rows_sum_to_one=True)
        mixed_keys = expected_weights @ keys
        if _close(output, mixed_keys, 1e-5) and not _close(output, expected_output, 1e-5):
            raise Wrong("the output mixes the keys; it is the weighted sum of the values, "
                        "weights @ values")
        expect_tensor(output, expected_output, name=f"the output (c = {c:g})",
                      axes=("features",))
    if shortcut:  # right numbers, but not by the statement's means
        raise Wrong("soft_lookup calls a library softmax (torch.softmax, F.softmax or tformer); "
                    "the exercise asks for exp, sum and max: exp(s − max s) divided by its sum")


# ---------------------------------------------------------------------------------------------
# 02.5


def _ex5_factors(scale: float = 1 / SQRT2) -> tuple[torch.Tensor, torch.Tensor]:
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
    if value.shape == (4,):
        if _close(value[:3], expected):
            raise Wrong("the first three numbers are right; the fourth belongs to the new query "
                        "4, which had no old weights — give one factor for each of queries 1–3")
        raise Wrong("give three factors, one for each of the old queries 1–3; query 4 is new "
                    "and had no old weights")
    if value.shape == (3,) and not _close(value, expected, 1.5e-3):
        if np.allclose(value, 1.0, atol=1e-3):
            raise Wrong("the old weights do not survive a new token: every weight changes, "
                        "because each row's softmax now also divides by e^{s_i4}")
        hint = _first_match(value, [
            (on_key4, "those are the weights on key 4; the old weights shrink by the factor "
                      "1 − A_i4"),
            (_ex5_factors(scale=1.0)[0][:, 0],
             "those factors come from unscaled scores; divide by √d_k = √2"),
            (_ex5_factors(scale=0.5)[0][:, 0],
             "those factors come from scores divided by d_k = 2; divide by √d_k = √2"),
            (1 / expected, "that is old / new, a growth factor above 1: the factor by which a "
                           "weight shrinks is new / old = 1 − A'_i4, below 1"),
            (ratios[0], "those are the three ratios of query 1 (one row of the ratio matrix, "
                        "all equal): one factor per query is a column, ratios[:, 0]"),
            (1 / on_key4, "that is 1 / A'_i4; the factor is 1 − A'_i4"),
        ])
        if hint:
            raise Wrong(hint)
    expect_tensor(value, expected, name="the factors", axes=("queries",), atol=1.5e-3, rtol=0,
                  rounding_tol=1e-2)


# ---------------------------------------------------------------------------------------------
# 02.6


@exercise("02.6", "Attention is not linear in X")
def ex6(answer) -> None:
    """``answer``: the output of query 1 of the scaled running example for the input X/2, (2,)."""
    weights, outputs = _attention(X)
    weights_half_scores = torch.softmax((X @ W_Q) @ (X @ W_K).T / SQRT2 / 2, dim=-1)
    quarter, halved = _attention(X / 2)
    value = to_array(answer, "the output")
    if not _close(value, halved[0], 1.5e-3):
        hint = _first_match(value, [
            (outputs[0] / 2,
             "that is half the original output — what a linear layer would give; halving X also "
             "multiplies every score by 1/4, which flattens the weights"),
            (weights_half_scores[0] @ (X / 2),
             "the scores shrink by a quarter, not a half: both the query and the key are halved"),
            (weights_half_scores[0] @ X,
             "the scores shrink by a quarter, not a half (both the query and the key are "
             "halved), and the values must be halved too"),
            (quarter[0] @ X,
             "the weights are right, but the values are halved too: mix the rows of "
             "(X/2) W_V, not of X W_V"),
            (halved[1], "that is the output of query 2; the exercise asks for query 1 (row 0)"),
            (halved[2], "that is the output of query 3; the exercise asks for query 1 (row 0)"),
            (_attention(X / 2, scale=1.0)[1][0],
             "that is the unscaled output; divide the scores by √d_k = √2"),
            (outputs[0], "that is o₁ of the original X; halve every input first"),
        ])
        if hint:
            raise Wrong(hint)
    expect_tensor(value, halved[0], name="the output", axes=("features",), atol=1.5e-3, rtol=0,
                  rounding_tol=1e-2)


# ---------------------------------------------------------------------------------------------
# 02.7

_EX7_TARGET = torch.tensor([1.5, 1.5], dtype=torch.float64)


def _solve(system: torch.Tensor, rhs: torch.Tensor) -> torch.Tensor | None:
    try:
        return torch.linalg.solve(system, rhs)
    except RuntimeError:  # a singular system is no variant
        return None


def _ex7_variants() -> list[tuple[torch.Tensor, str]]:
    ones = torch.ones(1, 3, dtype=torch.float64)
    rhs = torch.cat([_EX7_TARGET, torch.ones(1, dtype=torch.float64)])
    system = torch.cat([LOOKUP_VALUES.T, ones])
    found = []
    by_rows = _solve(torch.cat([LOOKUP_VALUES, ones.T], dim=1), rhs)
    if by_rows is not None:
        found.append((by_rows, "your system has the values as rows: the coordinate equations "
                               "a₁v₁ + a₂v₂ + a₃v₃ = (1.5, 1.5) put v_j in column j — the matrix "
                               "is Vᵀ with a row of ones below it"))
    for order in ([2, 0, 1], [1, 2, 0], [2, 1, 0], [0, 2, 1], [1, 0, 2]):
        permuted = _solve(system, rhs[order])
        if permuted is not None:
            found.append((permuted, "the right-hand side is not in the order of your matrix's "
                                    "rows: the two coordinate rows go with 1.5, 1.5 and the row "
                                    "of ones with 1"))
    found.append((torch.linalg.pinv(LOOKUP_VALUES.T) @ _EX7_TARGET,
                  "you solved only the two coordinate equations; add the third, "
                  "a₁ + a₂ + a₃ = 1: attention weights always sum to 1"))
    keys = _solve(torch.cat([LOOKUP_KEYS.T, ones]), rhs)
    if keys is not None:
        found.append((keys, "you used the keys; an output is a weighted average of the values "
                            "v₁ = (1, 0), v₂ = (0, 2), v₃ = (3, 3)"))
    expected = _solve(system, rhs)
    found.append((torch.log(expected), "those are log a_j, scores that reach the point (the "
                                       "follow-up); the answer is the weights a_j themselves"))
    return found


@exercise("02.7", "Inside the convex hull")
def ex7(answer) -> None:
    """``answer``: weights (3,) over v₁, v₂, v₃ = (1, 0), (0, 2), (3, 3) whose output is (1.5, 1.5)."""
    target = _EX7_TARGET
    system = torch.cat([LOOKUP_VALUES.T, torch.ones(1, 3, dtype=torch.float64)])
    expected = torch.linalg.solve(system, torch.cat([target, torch.ones(1, dtype=torch.float64)]))
    value = to_array(answer, "the weights")
    if value.shape == (3,) and not _close(value, expected, 2e-3):
        hint = _first_match(value, _ex7_variants(), 2e-3)
        if hint:
            raise Wrong(hint)
    if value.shape == (3,) and not math.isclose(float(value.sum()), 1.0, abs_tol=2e-3):
        raise Wrong(f"the weights sum to {value.sum():.3f}; attention weights always sum to 1")
    if value.shape == (3,) and (value < 0).any():
        raise Wrong("a softmax never gives a negative weight; every weight must be > 0")
    if value.shape == (3,):
        reached = value @ LOOKUP_VALUES.numpy()
        if not np.allclose(reached, target.numpy(), atol=2e-3):
            raise Wrong(f"these weights give the output {reached.round(3)}, not (1.5, 1.5)")
    expect_tensor(value, expected, name="the weights", axes=("keys",), atol=2e-3, rtol=0)


# ---------------------------------------------------------------------------------------------
# Typical mistakes (tests/test_mistakes.py feeds each to its checker).


def _wrong_lookup_unstable(query, keys, values, c=1.0):
    scores = c * (keys @ query) / math.sqrt(keys.shape[-1])
    weights = torch.exp(scores) / torch.exp(scores).sum()
    return weights, weights @ values


def _stable(scores):
    weights = torch.exp(scores - scores.max(dim=-1, keepdim=True).values)
    return weights / weights.sum(dim=-1, keepdim=True)


def _wrong_lookup_unscaled(query, keys, values, c=1.0):
    weights = _stable(c * (keys @ query))
    return weights, weights @ values


def _wrong_lookup_no_c(query, keys, values, c=1.0):
    weights = _stable(keys @ query / math.sqrt(keys.shape[-1]))
    return weights, weights @ values


def _wrong_lookup_value_width(query, keys, values, c=1.0):
    weights = _stable(c * (keys @ query) / math.sqrt(values.shape[-1]))
    return weights, weights @ values


def _wrong_lookup_row_query(query, keys, values, c=1.0):
    weights = _stable(c * (query[None] @ keys.T) / math.sqrt(keys.shape[-1]))
    return weights, weights @ values


def _wrong_lookup_library(query, keys, values, c=1.0):
    weights = torch.softmax(c * (keys @ query) / math.sqrt(keys.shape[-1]), dim=-1)
    return weights, weights @ values


def _wrong_lookup_mixes_keys(query, keys, values, c=1.0):
    weights = _stable(c * (keys @ query) / math.sqrt(keys.shape[-1]))
    return weights, weights @ keys


def _ex3_weights():
    return torch.softmax(LOOKUP_KEYS[2] @ LOOKUP_KEYS.T / SQRT2, -1)


def _ex7_no_sum_row():
    # solves only the two coordinate equations (least squares), forgetting Σ a = 1
    return torch.linalg.lstsq(LOOKUP_VALUES.T, _EX7_TARGET).solution


def _ex7_values_as_rows():
    system = torch.cat([LOOKUP_VALUES, torch.ones(3, 1, dtype=torch.float64)], dim=1)
    return torch.linalg.solve(system, torch.tensor([1.5, 1.5, 1.0], dtype=torch.float64))


def _ex7_solution(rhs=(1.5, 1.5, 1.0)):
    system = torch.cat([LOOKUP_VALUES.T, torch.ones(1, 3, dtype=torch.float64)])
    return torch.linalg.solve(system, torch.tensor(rhs, dtype=torch.float64))


MISTAKES: dict[str, list[Mistake]] = {
    "02.1": [
        Mistake("unscaled scores", lambda: _attention(_moved(), scale=1.0)[1][1], "√d_k"),
        Mistake("old value of token 3", lambda: _attention(_moved())[0][1] @ X, "v₃"),
        Mistake("weights instead of the output", lambda: _attention(_moved())[0][1], "weights"),
        Mistake("the unchanged example", lambda: _attention(X)[1][1], "x₃ moved"),
        Mistake("Ω_k (W_K transposed)", lambda: _attention(_moved(), w_k=W_K.T)[1][1],
                "column convention"),
        Mistake("softmax over the queries", lambda: _attention(_moved(), softmax_dim=0)[1][1],
                "over the queries"),
        Mistake("divided by d_k", lambda: _attention(_moved(), scale=0.5)[1][1], "d_k = 2"),
    ],
    "02.2": [
        Mistake("forgot to divide by the score gap", lambda: math.log(18), "divide by the gap"),
        Mistake("only one other key", lambda: math.log(9) * SQRT2, "two other keys"),
        Mistake("divided by √2 instead of multiplying", lambda: math.log(18) / SQRT2,
                "instead of multiplying"),
        Mistake("log₁₀", lambda: SQRT2 * math.log10(18), "natural logarithm"),
        Mistake("only tank's score multiplied by c", lambda: (math.log(18) + 1 / SQRT2) / SQRT2,
                "not only tank's"),
        Mistake("rounded to 4", lambda: 4.0, "rounded too far"),
    ],
    "02.3": [
        Mistake("the chapter's second component", lambda: _ex3_expected(component=1),
                "first component"),
        Mistake("forgot the weight factor", lambda: LOOKUP_VALUES[:, 0] - _ex3_weights()
                @ LOOKUP_VALUES[:, 0], "A_3j"),
        Mistake("unscaled scores", lambda: _ex3_expected(scale=1.0), "√d_k"),
        Mistake("ḡ left out", lambda: _ex3_weights() * LOOKUP_VALUES[:, 0], "left out ḡ"),
        Mistake("plain mean for ḡ", lambda: _ex3_weights() * (
            LOOKUP_VALUES[:, 0] - LOOKUP_VALUES[:, 0].mean()), "plain mean"),
        Mistake("sign flipped", lambda: -_ex3_expected(), "sign"),
    ],
    "02.4": [
        Mistake("no max subtraction", lambda: _wrong_lookup_unstable, "subtract the largest"),
        Mistake("unscaled scores", lambda: _wrong_lookup_unscaled, "unscaled"),
        Mistake("c ignored", lambda: _wrong_lookup_no_c, "do not change with c"),
        Mistake("scaled by √d_v", lambda: _wrong_lookup_value_width, "√d_v"),
        Mistake("query as a (1, d_k) row", lambda: _wrong_lookup_row_query, "extra axis"),
        Mistake("torch.softmax", lambda: _wrong_lookup_library, "library softmax"),
        Mistake("mixes the keys", lambda: _wrong_lookup_mixes_keys, "mixes the keys"),
    ],
    "02.5": [
        Mistake("weights assumed unchanged", lambda: torch.ones(3), "every weight changes"),
        Mistake("weight on the new key", lambda: _ex5_factors()[1], "weights on key 4"),
        Mistake("unscaled scores", lambda: _ex5_factors(scale=1.0)[0][:, 0], "√d_k"),
        Mistake("nine ratios", lambda: _ex5_factors()[0], "one factor per query"),
        Mistake("old / new", lambda: 1 / _ex5_factors()[0][:, 0], "old / new"),
        Mistake("a row of the ratios", lambda: _ex5_factors()[0][0], "ratios[:, 0]"),
        Mistake("the new query too", lambda: 1 - _attention(torch.cat([X, X4_NEW[None]]))[0][:, 3],
                "fourth belongs to the new query"),
    ],
    "02.6": [
        Mistake("assumed linear", lambda: _attention(X)[1][0] / 2, "linear"),
        Mistake("scores halved, not quartered", lambda: torch.softmax(
            (X @ W_Q) @ (X @ W_K).T / SQRT2 / 2, -1)[0] @ (X / 2), "a quarter"),
        Mistake("values not halved", lambda: _attention(X / 2)[0][0] @ X, "values are halved"),
        Mistake("query 2 instead of query 1", lambda: _attention(X / 2)[1][1], "query 2"),
    ],
    "02.7": [
        Mistake("forgot that weights sum to 1", _ex7_no_sum_row, "a₁ + a₂ + a₃ = 1"),
        Mistake("dictionary keys instead of values", lambda: torch.linalg.solve(
            torch.cat([LOOKUP_KEYS.T, torch.ones(1, 3, dtype=torch.float64)]),
            torch.tensor([1.5, 1.5, 1.0], dtype=torch.float64)), "keys"),
        Mistake("values as rows", _ex7_values_as_rows, "values as rows"),
        Mistake("right-hand side reordered", lambda: _ex7_solution((1.0, 1.5, 1.5)),
                "right-hand side"),
        Mistake("log of the weights", lambda: torch.log(_ex7_solution()), "log a_j"),
    ],
}
