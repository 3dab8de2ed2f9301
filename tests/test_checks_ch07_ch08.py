"""Chapter 7 and 8 checkers: right answers pass, typical mistakes get a hint, nothing crashes.

Right answers are computed here from closed forms or with PyTorch's own modules
(``torch.nn.MultiheadAttention``, ``F.layer_norm``), independently of the checkers.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from tformer.checks import ch07, ch08

GARBAGE = ["text", [1, 2], {"a": 1}, float("nan"), object()]


def _status(checker, answer) -> str:
    return checker(answer).status


def _reference_mha(x, W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O, n_heads, mask=None):
    # The reader's function, written with torch's fused kernel instead of by hand.
    batch, n_positions, d = x.shape

    def split(t):
        return t.view(batch, n_positions, n_heads, d // n_heads).transpose(1, 2)

    heads = F.scaled_dot_product_attention(
        split(x @ W_Q + b_Q), split(x @ W_K + b_K), split(x @ W_V + b_V), attn_mask=mask
    )
    return heads.transpose(1, 2).reshape(batch, n_positions, d) @ W_O + b_O


def _layer(x, attention, mlp, norm1, norm2, kind):
    if kind == "pre":
        x = x + attention(norm1(x))
        return x + mlp(norm2(x))
    x = norm1(x + attention(x))
    return norm2(x + mlp(x))


RIGHT = [
    (ch07.ex1, {"d_k": 64, "Q": (8, 12, 1024, 64), "K": (8, 12, 1024, 64),
                "V": (8, 12, 1024, 64), "scores": (8, 12, 1024, 1024), "concat": (8, 1024, 768)}),
    (ch07.ex2, 8 * 12 * 1024 * 1024 * 4),
    (ch07.ex3, 4 * 512**2 + 4 * 512),
    (ch07.ex4, 4 * 1024 * 768**2 + 2 * 1024**2 * 768),
    (ch07.ex5, 2 * 80 * 8 * 128 * 4096 * 2),
    (ch07.ex6, _reference_mha),
    (ch08.ex1, 24 * (4 * 1024**2 + 3 * 1024 * 2816 + 2 * 1024)),
    (ch08.ex2, [-math.sqrt(2), 0.0, 0.5, math.sqrt(2) / 2]),
    (ch08.ex3, 0.8),
    (ch08.ex4, lambda x, gamma, beta, eps: F.layer_norm(x, x.shape[-1:], gamma, beta, eps)),
    (ch08.ex5, _layer),
    (ch08.ex6, 8 * (12 * 512**2 + 13 * 512) + 2 * 32_000 * 512 + 2 * 512),
    (ch08.ex8, {"mean": 0, "variance": 1, "never_fixed": [0, 0, 0, 5], "fixed": [1, -1, -1, 1]}),
    (ch08.ex7, 24 * (12 * 1024**2 + 2 * 1024 * 1024) + 50257 * 1024),
]
WRONG = [
    (ch07.ex2, 8 * 12 * 1024 * 1024, "score elements"),
    (ch07.ex3, 3 * 512**2 + 3 * 512, "output projection"),
    (ch07.ex4, 2 * (4 * 1024 * 768**2 + 2 * 1024**2 * 768), "FLOPs"),
    (ch07.ex5, 2 * 80 * 64 * 128 * 4096 * 2, "key/value heads"),
    (ch08.ex1, 24 * (12 * 1024**2 + 13 * 1024), "biases"),
    (ch08.ex2, [-math.sqrt(1.5), 0.0, 0.5, math.sqrt(1.5) / 2], "d − 1"),
    (ch08.ex6, 8 * (12 * 512**2 + 13 * 512) + 32_000 * 512 + 2 * 512, "untied"),
    (ch08.ex7, 354_823_168, "parameter count"),
]


@pytest.mark.parametrize(("checker", "answer"), RIGHT, ids=lambda v: getattr(v, "__name__", ""))
def test_right_answers_pass(checker, answer):
    assert _status(checker, answer) == "passed"


@pytest.mark.parametrize(("checker", "answer", "hint"), WRONG)
def test_typical_mistakes_get_their_hint(checker, answer, hint):
    verdict = checker(answer)
    assert verdict.status == "wrong"
    assert hint in verdict.message


@pytest.mark.parametrize("checker", [c for c, _ in RIGHT], ids=lambda c: c.exercise_id)
def test_missing_and_garbage_answers_never_crash(checker):
    assert _status(checker, None) == "not attempted"
    for answer in GARBAGE:
        assert _status(checker, answer) in ("wrong", "not attempted")


def test_multihead_checker_catches_an_ignored_mask_and_a_missing_bias():
    def no_mask(*args):
        return _reference_mha(*args[:-1], None)

    def no_bias(x, W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O, n_heads, mask=None):
        zero = torch.zeros_like(b_Q)
        return _reference_mha(x, W_Q, W_K, W_V, W_O, zero, zero, zero, zero, n_heads, mask)

    assert "ignores the mask" in ch07.ex6(no_mask).message
    assert ch07.ex6(no_bias).status == "wrong"


def test_layer_checkers_name_the_mistake():
    def swapped(x, attention, mlp, norm1, norm2, kind):
        return _layer(x, attention, mlp, norm1, norm2, "post" if kind == "pre" else "pre")

    def batch_norm(x, gamma, beta, eps):
        flat = x.reshape(-1, x.shape[-1])
        return F.batch_norm(flat, None, None, gamma, beta, training=True, eps=eps).reshape(x.shape)

    assert "swap" in ch08.ex5(swapped).message
    assert "batch norm" in ch08.ex4(batch_norm).message
    assert ch08.ex4(lambda x, gamma, beta, eps: 2 * x).status == "wrong"

    def no_gamma_beta(x, gamma, beta, eps):
        return F.layer_norm(x, x.shape[-1:], None, None, eps)

    assert "γ and β" in ch08.ex4(no_gamma_beta).message
