"""Checkers for chapter 4, *Why divide by √d_k*.

Expected values come from closed forms or plain ``torch`` (``torch.softmax``, autograd), never
from :mod:`tformer.attention` or :mod:`tformer.saturation`, the code under study. Before the
generic comparison each checker compares the answer with the wrong variants a learner plausibly
produces (a variance for a standard deviation, one factor of a product forgotten, d_k for √d_k,
a softmax applied twice, a temperature after the softmax, …), computed from the exercise's own
data, and names the one that matches.
"""

from __future__ import annotations

import ast
import inspect
import math
import textwrap
from typing import Any

import numpy as np
import torch

from tformer.checks.core import (
    Mistake,
    Wrong,
    as_tuple,
    call_reader,
    exercise,
    expect_number,
    expect_tensor,
    to_array,
)


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.number | torch.Tensor):
        raise Wrong(f"{name} should be a number, got {type(value).__name__}")
    array = to_array(value, name)
    if array.size != 1:
        raise Wrong(f"{name} should be a single number, got shape {array.shape}")
    return float(array.reshape(()))


def _close(value: float, target: float, rel_tol: float = 1e-3) -> bool:
    return math.isclose(value, target, rel_tol=rel_tol, abs_tol=1e-12)


def _names_used(function: Any) -> set[str]:
    """What a reader's function reaches for, read from its source: every attribute name
    (``torch.autograd.functional.jacobian`` gives ``autograd``, ``functional``, ``jacobian``) and
    every plain name it calls (``jacrev(...)`` after ``from torch.func import jacrev``); a local
    variable that is only assigned and read does not count, nor do comments and strings. Empty
    when the source is not available (a function typed in a console, a built-in)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return set()
    names = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    return names | {node.func.id for node in ast.walk(tree)
                    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}


# ---------------------------------------------------------------------------------------------
# 04.1

_D_K_1, _VAR_1 = 50, 2.0
_STD_1 = math.sqrt(_D_K_1 * _VAR_1 * _VAR_1)  # 14.142


@exercise("04.1", "Standard deviation of a score, entries of any variance")
def ex1(answer) -> None:
    """``answer``: (std of q·k, std of q·k/√d_k) for d_k = 50 entries of variance 2 each."""
    d_k, expected = _D_K_1, _STD_1
    unscaled, scaled = as_tuple(answer, 2, "(std before scaling, std after scaling)")
    unscaled_value = _number(unscaled, "the unscaled std")
    scaled_value = _number(scaled, "the scaled std")
    # the unscaled std; simulated variants get a simulation's tolerance (20,000 draws: ~1 %)
    if _close(unscaled_value, expected**2):
        raise Wrong(f"{expected**2:g} is the variance; the standard deviation is its square root")
    if _close(unscaled_value, math.sqrt(d_k), 0.03):
        raise Wrong("that assumes unit-variance entries; here the entries have variance 2, so "
                    "each product q_i k_i has variance 2 · 2 = 4")
    if _close(unscaled_value, math.sqrt(d_k * _VAR_1), 0.03):
        raise Wrong("that uses Var(q_i k_i) = 2, the variance of one factor; for independent "
                    "mean-0 factors Var(q_i k_i) = Var(q_i) · Var(k_i) = 2 · 2 = 4")
    if _close(unscaled_value, math.sqrt(d_k * 16.0), 0.03):
        raise Wrong("that is the std for entries of variance 4 (Var(q_i k_i) = 16): entries of "
                    "variance 2 have std √2, so a simulation multiplies standard normals by √2, "
                    "not by 2")
    if _close(unscaled_value, expected, 0.04) and not _close(unscaled_value, expected, 0.0045):
        raise Wrong(f"close to √(50 · 4) = {expected:.3f}, but not equal: that looks like a "
                    "simulated estimate; give the value of the derivation")
    expect_number(unscaled, expected, name="the unscaled std", rel_tol=1e-3, rounding_tol=0.06)
    # the scaled std
    if _close(scaled_value, expected / d_k):
        raise Wrong("you divided by d_k; the scores are divided by √d_k")
    if _close(scaled_value, 1.0, 0.03):
        raise Wrong("dividing by √d_k gives std 1 only for unit-variance entries; here the "
                    "variance of each product is 4")
    if _close(scaled_value, (expected / math.sqrt(d_k)) ** 2, 0.03):
        raise Wrong("4 is the variance of the scaled score; its standard deviation is √4 = 2")
    if _close(scaled_value, expected, 0.03):
        raise Wrong("the second number is the std *after* dividing the scores by √d_k = √50")
    if _close(scaled_value, expected / math.sqrt(d_k), 0.04) and not _close(
            scaled_value, expected / math.sqrt(d_k), 0.005):
        raise Wrong("close to 2, but not equal: that looks like a simulated estimate; give the "
                    "value of the derivation")
    expect_number(scaled, expected / math.sqrt(d_k), name="the scaled std", rel_tol=1e-3,
                  rounding_tol=0.01)


# ---------------------------------------------------------------------------------------------
# 04.2


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
    # the wrong reductions first: they also move the mean
    if _close(variance, n_draws, 0.1):
        raise Wrong(f"a variance near {n_draws:,} = the number of draws: you summed the products "
                    "over the draws (dim=0); a dot product sums over the d_k coordinates (dim=-1)")
    if _close(variance, 1 / d_k, 0.1):
        raise Wrong("a variance near 1/d_k: you averaged the products q_i k_i (.mean); a dot "
                    "product is their sum (.sum(dim=-1)), with variance d_k")
    if _close(variance, 1.0, 0.1) and _close(scaled_variance, 1 / d_k, 0.1):
        raise Wrong("a variance near 1 is that of one product q_i k_i: sum the d_k products of "
                    "each draw first (dim=-1), then take the variance over the draws")
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
    if _close(scaled_variance, variance / math.sqrt(d_k), 0.1):
        raise Wrong("you divided the variance by √d_k; dividing the *scores* by √d_k divides "
                    "their variance by d_k")
    if _close(scaled_variance, variance, 0.01):
        raise Wrong("the scaled variance equals the variance: divide the scores by √d_k before "
                    "taking the variance")
    if not math.isclose(scaled_variance, 1.0, rel_tol=0.08):
        raise Wrong(f"after dividing by √d_k the variance should be near 1, got {scaled_variance:.4g}")


# ---------------------------------------------------------------------------------------------
# 04.3


def _jacobian_closed(a: torch.Tensor) -> torch.Tensor:
    return torch.diag(a) - torch.outer(a, a)


def _jacobian_variants(a: torch.Tensor) -> list[tuple[np.ndarray, str]]:
    """Wrong Jacobians a learner plausibly writes, each with its hint."""
    n = a.shape[0]
    again = torch.softmax(a, dim=-1)
    return [(value.numpy(), hint) for value, hint in (
        (-torch.outer(a, a), "the diagonal is missing: J = diag(a) − a aᵀ"),
        (torch.diag(a), "the off-diagonal part −a aᵀ is missing"),
        (torch.diag(a * (1 - a)), "only the diagonal a_i(1 − a_i): the off-diagonal entries "
         "−a_i a_j are missing (every score s_j moves every weight a_i)"),
        (_jacobian_closed(again), "you applied the softmax to a again: a already holds the "
         "softmax outputs, so use it directly in J = diag(a) − a aᵀ"),
        (torch.diag(a) - (a**2)[:, None].expand(n, n), "the off-diagonal entries should be "
         "−a_i a_j; yours are −a_i² (an index slip: J_ij = a_i(δ_ij − a_j))"),
        (torch.diag(a) - (a**2)[None, :].expand(n, n), "the off-diagonal entries should be "
         "−a_i a_j; yours are −a_j² (an index slip: J_ij = a_i(δ_ij − a_j))"),
        (torch.outer(a, a) - torch.diag(a), "the sign is flipped: J = diag(a) − a aᵀ"),
        (torch.diag(a) + torch.outer(a, a), "the off-diagonal sign is flipped: J = diag(a) − a aᵀ "
         "(raising one score lowers the other weights)"),
        (torch.eye(n, dtype=a.dtype) - torch.outer(a, a), "the diagonal is δ_ij a_i, not δ_ij: "
         "J = diag(a) − a aᵀ"),
        (torch.eye(n, dtype=a.dtype) - a[None, :].expand(n, n), "that is the Jacobian of the "
         "log-softmax (δ_ij − a_j); the softmax's is a_i(δ_ij − a_j)"),
    )]


@exercise("04.3", "The softmax Jacobian, implemented")
def ex3(answer) -> None:
    """``answer``: a function ``a (n,) -> J (n, n)`` with ``J[i, j] = ∂a_i/∂s_j``."""
    generator = torch.Generator().manual_seed(43)
    rows = [3 * torch.randn(n, generator=generator, dtype=torch.float64) for n in (2, 5, 8)]
    rows.append(torch.tensor([40.0, 0.0, 0.0], dtype=torch.float64))  # saturated
    for scores in rows:
        a = torch.softmax(scores, dim=-1)
        expected = torch.autograd.functional.jacobian(lambda s: torch.softmax(s, dim=-1), scores)
        value = to_array(call_reader(answer, a.clone(), name="your Jacobian function"),
                         "the Jacobian")
        n = a.shape[0]
        if value.shape == (n,) and np.allclose(value, (a * (1 - a)).numpy(), atol=1e-8):
            raise Wrong("you returned only the diagonal a_i(1 − a_i), as a vector; J is the "
                        "(n, n) matrix diag(a) − a aᵀ")
        if value.shape == (n, n) and not np.allclose(value, expected.numpy(), atol=1e-8,
                                                     rtol=1e-6):
            for variant, hint in _jacobian_variants(a):
                if not np.allclose(variant, expected.numpy(), atol=1e-8) and np.allclose(
                        value, variant, atol=1e-8, rtol=1e-6):
                    raise Wrong(hint)
        expect_tensor(value, expected, name=f"the Jacobian for n = {n}",
                      axes=("outputs a_i", "scores s_j"), atol=1e-8, rtol=1e-6)
    shortcut = _names_used(answer) & {"autograd", "jacobian", "jacrev", "jacfwd", "backward",
                                      "grad", "vjp", "jvp"}
    if shortcut:
        raise Wrong("the values are right, but the exercise asks for the closed form, without "
                    f"autograd (your function uses {', '.join(sorted(shortcut))}): "
                    "J = diag(a) − a aᵀ")


# ---------------------------------------------------------------------------------------------
# 04.4

_LOOKUP_A = torch.softmax(torch.tensor([1.0, 1.0, 2.0], dtype=torch.float64) / math.sqrt(2), -1)


def _trace_of(scale: float) -> float:
    a = torch.softmax(torch.tensor([1.0, 1.0, 2.0], dtype=torch.float64) * scale, -1)
    return float(1 - (a**2).sum())


@exercise("04.4", "The trace of the Jacobian, and its smallest value")
def ex4(answer) -> None:
    """``answer``: (trace of J at a = softmax((1, 1, 2)/√2), the smallest trace of a 4-key row
    whose largest weight is 0.7)."""
    a = _LOOKUP_A
    trace, smallest = as_tuple(answer, 2, "(the trace, the smallest trace)")
    trace_value = _number(trace, "the trace")
    if math.isclose(trace_value, float((a**2).sum()), rel_tol=1e-3):
        raise Wrong("that is Σ a_i²; the trace is Σ a_i (1 − a_i) = 1 − Σ a_i²")
    if math.isclose(trace_value, _trace_of(1.0), rel_tol=1e-3):
        raise Wrong("those are the weights of unscaled scores; divide (1, 1, 2) by √d_k = √2")
    if math.isclose(trace_value, _trace_of(0.5), rel_tol=1e-3):
        raise Wrong("you divided (1, 1, 2) by d_k = 2; divide by √d_k = √2")
    if math.isclose(trace_value, _trace_of(math.sqrt(2)), rel_tol=1e-3):
        raise Wrong("you multiplied (1, 1, 2) by √2; divide by √d_k = √2")
    if math.isclose(trace_value, 0.0, abs_tol=1e-5):
        raise Wrong("a trace of 0 is the sum of *every* entry of J (each row of J sums to 0); "
                    "the trace adds only the diagonal, Σ a_i (1 − a_i) = 1 − Σ a_i²")
    expect_number(trace, float(1 - (a**2).sum()), name="the trace", rel_tol=1e-3,
                  rounding_tol=5e-3)
    smallest_value = _number(smallest, "the smallest trace")
    if math.isclose(smallest_value, 1 - 0.49 - 3 * 0.1**2, rel_tol=1e-3):
        raise Wrong("spreading the remaining 0.3 evenly gives the largest trace, not the "
                    "smallest; to make Σ a_i² large, concentrate it")
    if math.isclose(smallest_value, 1 - 0.49 - 2 * 0.15**2, rel_tol=1e-3):
        raise Wrong("splitting the remaining 0.3 over two keys is not yet the smallest trace; "
                    "Σ a_i² is largest when all of it sits on one key")
    if math.isclose(smallest_value, 0.0, abs_tol=1e-6):
        raise Wrong("a trace of 0 needs a one-hot row, but the largest weight is fixed at 0.7")
    if math.isclose(smallest_value, 0.49 + 0.09, rel_tol=1e-3):
        raise Wrong("0.58 is Σ a_i² of the row (0.7, 0.3, 0, 0); the trace is 1 − Σ a_i²")
    if math.isclose(smallest_value, 1 - 0.49, rel_tol=1e-3):
        raise Wrong("that counts only the key of weight 0.7; the remaining 0.3 adds its own "
                    "a_i(1 − a_i) to the trace")
    if math.isclose(smallest_value, 0.7 * 0.3, rel_tol=1e-3):
        raise Wrong("0.21 is a_i(1 − a_i) of one key only; the trace sums it over every key")
    expect_number(smallest, 1 - 0.49 - 0.09, name="the smallest trace", rel_tol=1e-4,
                  rounding_tol=5e-3)


# ---------------------------------------------------------------------------------------------
# 04.5

_DOTS_Q3 = torch.tensor([1.0, 4.0, 5.0], dtype=torch.float64)
_DOTS_000 = torch.tensor([[1.0, 2.0, 3.0], [0.0, 2.0, 2.0], [1.0, 4.0, 5.0]], dtype=torch.float64)


def _weights_at(divisor: float) -> np.ndarray:
    return torch.softmax(_DOTS_Q3 / divisor, -1).numpy()


@exercise("04.5", "The running example at another temperature")
def ex5(answer) -> None:
    """``answer``: query 3's weights (3,) for dot products (1, 4, 5), d_k = 2, temperature 2."""
    value = to_array(answer, "the weights")
    tau, root = 2.0, math.sqrt(2)
    expected = torch.softmax(_DOTS_Q3 / (tau * root), -1)
    if value.shape == (3, 3):
        if np.allclose(value[2], expected.numpy(), atol=2e-3):
            raise Wrong("give only query 3's row of weights (three numbers), not the whole matrix")
        raise Wrong("give query 3's three weights, softmax((1, 4, 5)/(τ√d_k)), not a matrix")
    if value.shape == (3,):
        at_one = _weights_at(root)
        variants = [
            (_weights_at(root / tau), "you multiplied by the temperature; a temperature τ divides "
             "the scores (c = 1/τ), and τ = 2 flattens the weights"),
            (_weights_at(tau), "the temperature comes on top of the usual division by √d_k = √2"),
            (at_one, "those are the weights at temperature 1; divide once more by τ = 2"),
            (_weights_at(tau * 2), "you divided by τ · d_k = 4; the usual division is by "
             "√d_k = √2, so the scores are divided by τ√d_k = 2√2"),
            (_weights_at(tau + root), "you added τ to √d_k; the temperature multiplies the "
             "divisor: softmax((1, 4, 5)/(τ√d_k))"),
            (at_one / tau, "the temperature divides the scores before the softmax, not the weights "
             "after it (your weights sum to 1/τ)"),
            (expected.numpy() - at_one, "that is the change of each weight from τ = 1 to τ = 2; "
             "give the weights at τ = 2 themselves"),
            (at_one - expected.numpy(), "that is the change of each weight from τ = 2 to τ = 1; "
             "give the weights at τ = 2 themselves"),
            (_weights_at(1.0), "those are the weights of the raw dot products; divide (1, 4, 5) "
             "by τ√d_k = 2√2"),
        ]
        for variant, hint in variants:
            if np.allclose(value, variant, atol=2e-3):
                raise Wrong(hint)
    expect_tensor(value, expected, name="the weights", axes=("keys",), atol=1.5e-3, rtol=0,
                  rows_sum_to_one=True, rounding_tol=1e-2)


# ---------------------------------------------------------------------------------------------
# 04.6


def _mean_largest_64(d_k: int) -> float:
    generator = torch.Generator().manual_seed(1000 + d_k)
    queries = torch.randn(2000, 1, d_k, generator=generator)
    keys = torch.randn(2000, 64, d_k, generator=generator)
    return float(torch.softmax(queries @ keys.transpose(-2, -1), dim=-1).amax(dim=-1).mean())


# The exercise's threshold sits between the true means at d_k = 64 (0.792) and 128 (0.855),
# measured with 20,000 draws; with 2,000 draws a mean has a standard error of about 0.005, so
# every seed a reader may choose finds 128 (0.82 is 6 standard errors from either side).
THRESHOLD_64_KEYS = 0.82
# Where a wrong measurement first exceeds 0.82, with 2,000 draws (any seed gives the same width;
# tests/test_checks_ch03_ch04.py measures them): the chapter's 16 keys at d_k = 64 (0.78 at 32,
# 0.84 at 64), the largest weight of all draws (weights.max()) already at d_k = 1 (0.97), each
# key's largest weight over the draws (amax(dim=0)) at d_k = 8 (0.78 at 4, 0.92 at 8). With the
# default scale=True the mean stays near 0.11 at every width, so a loop never stops before 1024.
CROSSING_16_KEYS, CROSSING_MAX_OF_ALL, CROSSING_OVER_DRAWS = 64, 1, 8


@exercise("04.6", "When does unscaled attention over 64 keys become sharp?")
def ex6(answer) -> None:
    """``answer``: the smallest d_k among 1, 2, 4, …, 1024 at which the mean largest unscaled
    weight of a row of 64 keys (2,000 draws, any seed) exceeds 0.82."""
    value = _number(answer, "d_k")
    expected = 128  # 0.792 at 64, 0.855 at 128 (see THRESHOLD_64_KEYS)
    if math.isfinite(value) and value == int(value) and 0 <= value <= 10 and 2 ** int(value) == expected:
        raise Wrong(f"{value:g} is the exponent k of d_k = 2^k; give the width itself, "
                    f"2^{value:g} = {expected}")
    if value not in [float(2**k) for k in range(11)]:
        raise Wrong("the widths to try are the powers of two 1, 2, 4, …, 1024")
    if value == 1024:
        raise Wrong("1024 is the last width in the list, where a loop that never breaks ends: "
                    "with the default scale=True the mean largest weight stays near 0.11 at every "
                    "width; pass scale=False for the unscaled scores")
    if value < expected:
        below = (f"at d_k = {value:g} the mean largest weight is about "
                 f"{_mean_largest_64(int(value)):.2f}, still below 0.82")
        if value == CROSSING_16_KEYS:
            raise Wrong(f"{below}; 64 is where the chapter's 16 keys cross it — pass n_keys=64")
        if value == CROSSING_MAX_OF_ALL:
            raise Wrong(f"{below}; a single row of the 2,000 is sharp already, but the criterion "
                        "is the mean over the draws of each row's largest weight, "
                        "weights.amax(dim=-1).mean(), not weights.max()")
        if value == CROSSING_OVER_DRAWS:
            raise Wrong(f"{below}; amax(dim=0) takes each key's largest weight over the draws: "
                        "take each row's largest weight, amax(dim=-1), then the mean")
        raise Wrong(below)
    if value > expected:
        raise Wrong(f"at d_k = {value:g} the mean is above 0.82, but so it is at a smaller "
                    f"width; the answer is the first width whose mean exceeds 0.82")
    expect_number(value, expected, name="d_k", rel_tol=0, abs_tol=0.5)


# ---------------------------------------------------------------------------------------------
# Typical mistakes (tests/test_mistakes.py feeds each one to its checker)


def _jacobian_without_diagonal(a):
    return -torch.outer(a, a)


def _jacobian_diagonal_only(a):
    return torch.diag(a)


def _jacobian_elementwise(a):
    return torch.diag(a * (1 - a))


def _jacobian_softmax_again(a):
    p = torch.softmax(a, dim=-1)
    return torch.diag(p) - torch.outer(p, p)


def _jacobian_index_slip(a):
    return a[:, None] * (torch.eye(a.shape[0], dtype=a.dtype) - a[:, None])


def _jacobian_by_autograd(a):
    return torch.autograd.functional.jacobian(lambda s: torch.softmax(s, dim=-1), a.log())


def _trace_answer(a: torch.Tensor, smallest: float) -> tuple[float, float]:
    return float(1 - (a**2).sum()), smallest


MISTAKES: dict[str, list[Mistake]] = {
    "04.1": [
        Mistake("variance instead of std", lambda: (200.0, 4.0), "square root"),
        Mistake("assumed unit variance", lambda: (math.sqrt(50), 1.0), "variance 2"),
        Mistake("divided by d_k", lambda: (math.sqrt(200), math.sqrt(200) / 50), "√d_k"),
        Mistake("Var(q_i k_i) of one factor", lambda: (10.0, math.sqrt(2)), "one factor"),
        Mistake("entries of variance 4", lambda: (28.38, 4.01), "not by 2"),
        Mistake("a simulated estimate", lambda: (14.45, 2.04), "simulated estimate"),
        Mistake("the scaled variance", lambda: (math.sqrt(200), 4.0), "√4 = 2"),
    ],
    "04.2": [
        Mistake("standard deviation", lambda: (0.0, 16.0, 1.0), "standard deviation"),
        Mistake("divided by d_k", lambda: (0.0, 256.0, 1 / 256), "√d_k"),
        Mistake("variance divided by √d_k", lambda: (0.1, 255.0, 255.0 / 16), "divided the variance"),
        Mistake("summed over the draws", lambda: (1.47, 9980.0, 39.0), "dim=0"),
        Mistake("mean instead of sum", lambda: (0.0, 0.0039, 0.0039 / 256), "averaged"),
    ],
    "04.3": [
        Mistake("no diagonal", lambda: _jacobian_without_diagonal, "diagonal is missing"),
        Mistake("diagonal only", lambda: _jacobian_diagonal_only, "off-diagonal"),
        Mistake("elementwise a(1 − a)", lambda: _jacobian_elementwise, "only the diagonal"),
        Mistake("softmax applied again", lambda: _jacobian_softmax_again, "softmax to a again"),
        Mistake("index slip a_i for a_j", lambda: _jacobian_index_slip, "−a_i²"),
        Mistake("autograd instead of the closed form", lambda: _jacobian_by_autograd, "autograd"),
    ],
    "04.4": [
        Mistake("Σ a_i² instead of the trace", lambda: (float((_LOOKUP_A**2).sum()), 0.42),
                "Σ a_i²"),
        Mistake("unscaled weights", lambda: (float(1 - (torch.softmax(
            torch.tensor([1.0, 1.0, 2.0]), -1) ** 2).sum()), 0.42), "√d_k"),
        Mistake("remainder spread evenly", lambda: _trace_answer(_LOOKUP_A, 0.48),
                "largest trace"),
        Mistake("sum of every entry of J", lambda: (0.0, 0.42), "every* entry"),
        Mistake("divided by d_k", lambda: (_trace_of(0.5), 0.42), "d_k = 2"),
        Mistake("Σ a_i² in part (b)", lambda: _trace_answer(_LOOKUP_A, 0.58), "1 − Σ a_i²"),
    ],
    "04.5": [
        Mistake("multiplied by τ", lambda: torch.softmax(_DOTS_Q3 * 2 / math.sqrt(2), -1),
                "multiplied by the temperature"),
        Mistake("forgot √d_k", lambda: torch.softmax(_DOTS_Q3 / 2, -1), "√d_k"),
        Mistake("temperature 1", lambda: torch.softmax(_DOTS_Q3 / math.sqrt(2), -1),
                "temperature 1"),
        Mistake("weights divided by τ", lambda: torch.softmax(_DOTS_Q3 / math.sqrt(2), -1) / 2,
                "not the weights"),
        Mistake("the change from τ = 1", lambda: torch.softmax(_DOTS_Q3 / (2 * math.sqrt(2)), -1)
                - torch.softmax(_DOTS_Q3 / math.sqrt(2), -1), "change of each weight"),
        Mistake("divided by τ · d_k", lambda: torch.softmax(_DOTS_Q3 / 4, -1), "τ · d_k"),
    ],
    "04.6": [
        Mistake("one width too far", lambda: 256, "first width"),
        Mistake("one width too small", lambda: 64, "still below 0.82"),
        Mistake("the chapter's 16 keys", lambda: 64, "n_keys=64"),
        Mistake("scale=True: the loop ran out", lambda: 1024, "scale=False"),
        Mistake("weights.max() over all draws", lambda: 1, "amax(dim=-1)"),
        Mistake("the exponent instead of the width", lambda: 7, "exponent"),
    ],
}
