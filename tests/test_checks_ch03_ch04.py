"""Chapter 3 and 4 checkers: right answers (computed here from closed forms or plain torch) pass,
typical mistakes get their specific hint, stubs are "not attempted", and nothing ever raises."""

from __future__ import annotations

import math

import pytest
import torch

from tformer.checks import ch03, ch04

GARBAGE = [None, ..., "text", 3, (1,), [1, 2, 3, 4], {"a": 1}, float("nan"), torch.zeros(5)]


def _status(verdict) -> str:
    return verdict.status


def _attention(queries, keys, values):
    weights = torch.softmax(queries @ keys.T / math.sqrt(queries.shape[-1]), dim=-1)
    return weights @ values


def _attention_per_query(queries, keys, values):
    """Exercise 03.4 as its statement asks: a loop over the queries, the softmax by hand."""
    rows = []
    for query in queries:
        scores = keys @ query / math.sqrt(len(query))
        weights = torch.exp(scores - scores.max())
        rows.append(weights @ values / weights.sum())
    return torch.stack(rows)


def _jacobian(p):
    return torch.diag(p) - torch.outer(p, p)


RIGHT = {
    ch03.ex1: (2 * 64 * 512 + 512 * 512 + 2 * 64 + 512,) * 2,
    ch03.ex2: (
        torch.softmax(torch.eye(2) / math.sqrt(2), -1),
        torch.softmax(torch.eye(2) / math.sqrt(2), -1) @ torch.tensor([[2.0, 0], [0, 4]]),
    ),
    ch03.ex3: 1e-7,
    ch03.ex4: _attention_per_query,
    ch03.ex5: (1e-7, ch03._ex5_gaps()["values"]),
    ch03.ex6: (8 * 512 * 512, 4 * 8 * 512 * 512, 4),
    ch03.ex7: 512 * (2 * 64 + 128) / (64 + 128),
    ch04.ex1: (math.sqrt(200), 2.0),
    ch04.ex2: (0.05, 255.0, 0.997),
    ch04.ex3: _jacobian,
    ch04.ex5: torch.softmax(torch.tensor([1.0, 4, 5]) / (2 * math.sqrt(2)), -1),
    ch04.ex6: 128,
}


@pytest.mark.parametrize("checker", list(RIGHT), ids=lambda c: c.exercise_id)
def test_right_answers_pass(checker) -> None:
    assert _status(checker(RIGHT[checker])) == "passed"


def test_trace_exercise_right_answer() -> None:
    p = torch.softmax(torch.tensor([1.0, 1.0, 2.0]) / math.sqrt(2), -1)
    assert ch04.ex4((1 - float((p**2).sum()), 0.42)).passed


@pytest.mark.parametrize(
    ("checker", "answer", "hint"),
    [
        (ch03.ex1, (327_680, 327_680), "biases"),
        (ch03.ex1, (328_320, 656_640), "T axis"),
        (ch03.ex2, (torch.softmax(torch.eye(2), -1), torch.eye(2)), "unscaled"),
        (ch03.ex4, lambda q, k, v: torch.softmax(q @ k.T, -1) @ v, "unscaled"),
        (ch03.ex4, lambda q, k, v: torch.softmax(q @ k.T / 2, 0) @ v, "over the queries"),
        (ch03.ex5, (0.3, 0.3), "same P"),
        (ch03.ex5, (0.0, 0.0), "only the values"),
        (ch03.ex5, (0.0, 0.3), "not right"),
        (ch03.ex6, (512 * 512, 4, 4), "every sequence"),
        (ch03.ex6, (8 * 512 * 512, 8 * 512 * 512, 4), "4 bytes"),
        (ch03.ex7, 1152, "not right"),
        (ch03.ex7, 768, "differ"),
        (ch04.ex1, (200, 4), "variance"),
        (ch04.ex2, (0.0, 16.0, 1.0), "standard deviation"),
        (ch04.ex2, (0.0, 256.0, 1 / 256), "√d_k"),
        (ch04.ex3, lambda p: -torch.outer(p, p), "diagonal"),
        (ch04.ex4, (0.3768, 0.42), "Σ a_i²"),
        (ch04.ex5, torch.softmax(torch.tensor([1.0, 4, 5]) / math.sqrt(2), -1), "temperature 1"),
        (ch04.ex5, torch.softmax(torch.tensor([1.0, 4, 5]) / 2, -1), "√d_k = √2"),
        (ch04.ex6, 64, "still below 0.82"),
        (ch04.ex6, 256, "first width"),
    ],
)
def test_typical_mistakes_get_their_hint(checker, answer, hint) -> None:
    verdict = checker(answer)
    assert verdict.status == "wrong"
    assert hint in verdict.message


@pytest.mark.parametrize(
    "checker",
    [ch03.ex1, ch03.ex2, ch03.ex3, ch03.ex4, ch03.ex5, ch03.ex6, ch03.ex7,
     ch04.ex1, ch04.ex2, ch04.ex3, ch04.ex4, ch04.ex5, ch04.ex6],
    ids=lambda c: c.exercise_id,
)
def test_stubs_and_garbage_never_crash(checker) -> None:
    assert checker(None).status == "not attempted"
    for answer in GARBAGE[2:]:
        assert checker(answer).status in ("wrong", "not attempted"), answer


def test_03_4_the_statement_is_enforced() -> None:
    """A batched answer and one that calls torch.softmax compute the right numbers, but the
    statement asks for a loop over the queries and a softmax by hand."""
    def batched(queries, keys, values):
        scores = queries @ keys.T / math.sqrt(queries.shape[-1])
        weights = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
        return weights / weights.sum(dim=-1, keepdim=True) @ values

    batched = ch03.ex4(batched)
    assert batched.status == "wrong" and "explicit Python loop" in batched.message
    library = ch03.ex4(lambda q, k, v: torch.stack([torch.softmax(k @ x / 2, -1) @ v for x in q]))
    assert library.status == "wrong" and "library softmax" in library.message


def test_function_stubs_are_not_attempted() -> None:
    def stub(*args):
        raise NotImplementedError

    assert ch03.ex4(stub).status == "not attempted"
    assert ch04.ex3(stub).status == "not attempted"


@pytest.mark.parametrize("seed", range(0, 1000, 97))
def test_exercise_04_6_has_one_answer_whatever_seed_the_reader_picks(seed) -> None:
    """The exercise lets the reader choose the seed: with 2,000 draws of 64 keys the first width
    whose mean largest unscaled weight exceeds the threshold is 128 for every seed (the true
    means, 0.792 at 64 and 0.855 at 128, sit about 6 standard errors either side of 0.82)."""
    from tformer.saturation import random_attention_weights

    def mean_largest(d_k: int) -> float:
        weights = random_attention_weights(
            d_k, 64, 2000, scale=False, generator=torch.Generator().manual_seed(seed))
        return weights.amax(dim=-1).mean().item()

    assert mean_largest(64) < ch04.THRESHOLD_64_KEYS < mean_largest(128)
    assert ch04.ex6(128).passed


@pytest.mark.parametrize("seed", [0, 97, 485])
def test_exercise_04_6_wrong_measurements_cross_where_the_hints_say(seed) -> None:
    """The hints of 04.6 name a wrong measurement by the width it reports: the chapter's 16 keys
    first exceed 0.82 at d_k = 64, the largest weight of all draws at d_k = 1, and each key's
    largest weight over the draws (amax(dim=0)) at d_k = 8 — for every seed."""
    from tformer.saturation import random_attention_weights

    def first_width(measure, n_keys=64):
        for d_k in [2**k for k in range(7)]:
            weights = random_attention_weights(
                d_k, n_keys, 2000, scale=False, generator=torch.Generator().manual_seed(seed))
            if measure(weights) > ch04.THRESHOLD_64_KEYS:
                return d_k
        return None

    assert first_width(lambda w: w.amax(dim=-1).mean().item(), 16) == ch04.CROSSING_16_KEYS
    assert first_width(lambda w: w.max().item()) == ch04.CROSSING_MAX_OF_ALL
    assert first_width(lambda w: w.amax(dim=0).mean().item()) == ch04.CROSSING_OVER_DRAWS


def test_04_3_the_closed_form_is_required() -> None:
    def by_autograd(a):
        return torch.autograd.functional.jacobian(lambda s: torch.softmax(s, -1), a.log())

    def closed_form(a):
        jacobian = torch.diag(a) - torch.outer(a, a)  # a local name, not autograd
        return jacobian

    verdict = ch04.ex3(by_autograd)
    assert verdict.status == "wrong" and "autograd" in verdict.message
    assert ch04.ex3(closed_form).passed
