"""Chapter 9, 10 and 11 checkers: right answers pass, typical mistakes get a hint, nothing crashes.

Right answers are computed here from closed forms or with PyTorch's own functions
(``F.scaled_dot_product_attention``, ``F.cross_entropy``), independently of the checkers.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from tformer.checks import ch09, ch10, ch11

GARBAGE = ["text", [1, 2], {"a": 1}, float("nan"), object()]
ALL = [
    ch09.ex1, ch09.ex2, ch09.ex3, ch09.ex4, ch09.ex5,
    ch10.ex1, ch10.ex2, ch10.ex3, ch10.ex4, ch10.ex5, ch10.ex6, ch10.ex7,
    ch11.ex1, ch11.ex2, ch11.ex3, ch11.ex4, ch11.ex5, ch11.ex6,
]


def _cross(x, memory, W_Q, W_K, W_V, W_O, n_heads):
    batch, s_tgt, d = x.shape

    def split(t):
        return t.view(batch, -1, n_heads, d // n_heads).transpose(1, 2)

    heads = F.scaled_dot_product_attention(split(x @ W_Q), split(memory @ W_K), split(memory @ W_V))
    return heads.transpose(1, 2).reshape(batch, s_tgt, d) @ W_O


def _top_k(logits, k, temperature):
    kept = torch.topk(logits, k).indices
    probabilities = torch.zeros_like(logits)
    probabilities[kept] = torch.softmax(logits[kept] / temperature, 0)
    return probabilities


def _modified_precision(candidate, references, n):
    from collections import Counter

    def grams(tokens):
        return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))

    counts, refs = grams(candidate), [grams(r) for r in references]
    clipped = sum(min(c, max(r[g] for r in refs)) for g, c in counts.items())
    return clipped, sum(counts.values())


def _cached_step(query, key, value, keys, values):
    keys, values = torch.cat([keys, key[None]]), torch.cat([values, value[None]])
    output = F.scaled_dot_product_attention(query[None, None], keys[None], values[None])[0, 0]
    return output, keys, values


def _merge(a, b):
    m = max(float(a[0]), float(b[0]))
    return m, a[1] * math.exp(a[0] - m) + b[1] * math.exp(b[0] - m), (
        a[2] * math.exp(a[0] - m) + b[2] * math.exp(b[0] - m)
    )


def _tiled(queries, keys, values, tile_size):  # no tiling needed to be right
    return F.scaled_dot_product_attention(queries[None], keys[None], values[None])[0]


RIGHT = {
    ch09.ex1: {"tokens": 144, "values": 3072, "cost_ratio": (144 / 196) ** 2},
    ch09.ex2: {"Q": (2, 8, 5, 64), "K": (2, 8, 12, 64), "weights": (2, 8, 5, 12),
               "outputs": (2, 5, 512), "residual": "decoder"},
    ch09.ex3: 6 * (4 * 1024**2 + 4 * 1024 + 2 * 1024 * 4096 + 4096 + 1024 + 4 * 1024)
    + 6 * (8 * 1024**2 + 8 * 1024 + 2 * 1024 * 4096 + 4096 + 1024 + 6 * 1024),
    ch09.ex4: _cross,
    ch09.ex5: lambda logits, targets: F.cross_entropy(
        logits.flatten(0, 1), targets.flatten(), ignore_index=-100
    ),
    ch10.ex1: (["<start>", "ein", "kleiner", "hund"], ["ein", "kleiner", "hund", "<end>"]),
    ch10.ex2: -(0.925 * math.log(0.7) + 0.075 * math.log(0.1)),
    ch10.ex3: {"peak": 1 / math.sqrt(256 * 2000), "quarter_step": 32000},
    ch10.ex4: _top_k,
    ch10.ex5: 2 * 24 * 1024 * 1024 * 4 * 2,
    ch10.ex6: _cached_step,
    ch10.ex7: _modified_precision,
    ch11.ex1: {"naive_mib": 130.0, "tiled_mib": 33.0},
    ch11.ex2: {"pairs": 4_989_184, "fraction": 4_989_184 / 10**8},
    ch11.ex3: _merge,
    ch11.ex4: _tiled,
    ch11.ex5: {"scores": 10_485_760, "wasted": 1 - 4_989_184 / 10_485_760},
    ch11.ex6: 172,
}


@pytest.mark.parametrize("checker", ALL, ids=lambda c: c.exercise_id)
def test_right_answers_pass(checker):
    assert checker(RIGHT[checker]).status == "passed"


@pytest.mark.parametrize("checker", ALL, ids=lambda c: c.exercise_id)
def test_missing_and_garbage_never_crash(checker):
    assert checker(None).status == "not attempted"
    for garbage in GARBAGE:
        assert checker(garbage).status in ("wrong", "not attempted")


@pytest.mark.parametrize(
    ("checker", "answer", "hint"),
    [
        (ch09.ex1, {"tokens": 144, "values": 3072, "cost_ratio": 144 / 196},
         "ratio of token counts"),
        (ch09.ex2, {**RIGHT[ch09.ex2], "residual": "encoder"}, "decoder's own stream"),
        (ch09.ex3, 12 * (4 * 1024**2 + 4 * 1024 + 2 * 1024 * 4096 + 5120 + 4096),
         "decoder layers"),
        (ch10.ex1, (RIGHT[ch10.ex1][1], RIGHT[ch10.ex1][0]), "swapped"),
        (ch10.ex2, -math.log(0.7), "plain cross-entropy"),
        (ch10.ex3, {"peak": 1 / math.sqrt(256 * 2000), "quarter_step": 8000}, "1/√s"),
        (ch10.ex5, 2 * 24 * 1024 * 1024 * 2, "one sequence"),
        (ch11.ex1, {"naive_mib": 65.0, "tiled_mib": 16.5}, "2 bytes"),
        (ch11.ex5, {"scores": 10_240_000, "wasted": 0.5}, "⌈T/w⌉"),
        (ch11.ex6, 171, "one short"),
    ],
)
def test_typical_mistakes_get_a_hint(checker, answer, hint):
    verdict = checker(answer)
    assert verdict.status == "wrong" and hint in verdict.message


def test_function_mistakes_get_a_hint():
    def self_attention_instead(x, memory, W_Q, W_K, W_V, W_O, n_heads):
        return _cross(memory, memory, W_Q, W_K @ torch.eye(W_K.shape[1]), W_V, W_O, n_heads)

    assert ch09.ex4(self_attention_instead).status == "wrong"
    no_temperature = ch10.ex4(lambda logits, k, t: _top_k(logits, k, 1.0))
    assert "temperature" in no_temperature.message

    def unscaled_merge(a, b):
        return max(float(a[0]), float(b[0])), a[1] + b[1], a[2] + b[2]

    assert "rescaling" in ch11.ex3(unscaled_merge).message
    assert ch11.ex4(lambda q, k, v, t: torch.softmax(q @ k.T, 1) @ v).status == "wrong"


TENSOR_GARBAGE = [torch.zeros(2), torch.ones(2, 3), (torch.ones(3), None), [None, None], (None, ["a"])]


@pytest.mark.parametrize("checker", ALL, ids=lambda c: c.exercise_id)
def test_tensors_and_none_inside_answers_give_a_verdict(checker):
    """Regression: ``answer == N`` on a tensor answer (ambiguous truth value) and a ``None``
    inside a pair made checkers report "error" instead of a hint."""
    for garbage in TENSOR_GARBAGE:
        assert checker(garbage).status in ("wrong", "not attempted"), (checker, garbage)
    for key_garbage in ({"tokens": torch.ones(2), "cost_ratio": None},
                        {"peak": torch.ones(2), "quarter_step": torch.ones(2)},
                        {"scores": torch.ones(2), "mib": "256"}):
        assert checker(key_garbage).status in ("wrong", "not attempted")


@pytest.mark.parametrize("checker", [ch09.ex3, ch10.ex2, ch10.ex5, ch11.ex6],
                         ids=lambda c: c.exercise_id)
def test_a_number_given_as_a_one_element_tensor_passes(checker):
    # a count (an int) as an integer tensor, any other number as a float64 tensor
    dtype = torch.int64 if isinstance(RIGHT[checker], int) else torch.float64
    assert checker(torch.tensor(RIGHT[checker], dtype=dtype)).status == "passed"
