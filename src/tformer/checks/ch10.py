"""Checkers for chapter 10, *Training and generation*.

Expected values come from closed forms and from PyTorch itself (``F.cross_entropy`` with
``label_smoothing``, ``F.scaled_dot_product_attention``), not from the ``tformer`` code the
chapter studies. Before the generic comparison each checker compares the answer with the wrong
variants a learner plausibly produces, computed from the exercise's own data (ε spread over the
wrong tokens, probabilities passed as logits, bits for nats; a factor of the cache count left out
or counted twice, another unit; the temperature multiplied, −∞ replaced by 0, the k smallest
logits; √d_k replaced by d_k or √(t + 1), the new key in the value cache; unclipped, summed or
set-based n-gram counts), tests edge inputs (large logits and scores, an exp without the maximum
subtracted overflows) and names what matches.

The predict-then-run exercises (10.8–10.10) take the reader's ``prediction`` besides the measured
answer. The measurement is graded first — for 10.9 and 10.10 against a recomputation from the
reader's own model and data (a batched beam search and a greedy loop written here), never against
a number from one training run — then a missing prediction is "not attempted", and a present one
is compared with what the run showed, in a line printed before the verdict: a wrong guess is not a
failed exercise. What is compared is a fact that holds for every model (width 2 cannot end below
greedy with 2 new tokens but can with 3; the first mistake falls at the same position in both
decoding modes); what depends on the run is reported as this run's.
"""

from __future__ import annotations

import functools
import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence

import torch
from torch.nn import functional as F

from tformer.checks.core import (
    Mistake,
    NotAttempted,
    Wrong,
    as_number,
    as_tuple,
    call_reader,
    exercise,
    expect_number,
    expect_tensor,
    is_missing,
    shown,
    to_array,
)
from tformer.checks.language import translate

SENTENCE = ["<start>", "ein", "kleiner", "hund", "<end>"]
SOURCE = ("a", "small", "dog")
"""The source side of exercise 10.1's pair: the encoder's tokens, never the decoder's."""


def _name_value(value: float, variants, rel_tol: float = 1e-9) -> None:
    """Raise the hint of the first typical wrong value that ``value`` equals.

    ``variants``: ``(wrong value, hint)`` pairs computed from the exercise's own numbers; a
    variant equal to the right value is skipped by the caller's construction (none is)."""
    if not math.isfinite(value):
        return
    for wrong, hint in variants:
        if math.isclose(value, wrong, rel_tol=rel_tol, abs_tol=1e-12):
            raise Wrong(hint)


@exercise("10.1", "Decoder inputs and targets")
def ex1(answer) -> None:
    """``answer``: ``(inputs, targets)``, two lists of tokens for the target sentence
    ``ein kleiner hund`` with ``<start>`` and ``<end>``."""
    if not isinstance(answer, Sequence) or isinstance(answer, str) or len(answer) != 2:
        raise Wrong("answer should be a pair (inputs, targets) of two lists of tokens")
    if all(isinstance(part, str) for part in answer):
        raise Wrong("inputs and targets should be lists of tokens, not strings: "
                    "['<start>', 'ein', ...], one token per position")
    if not all(isinstance(part, Sequence) and not isinstance(part, str) for part in answer):
        raise Wrong("inputs and targets should each be a list of tokens such as ['<start>', ...]")
    inputs, targets = (list(part) for part in answer)
    if not all(isinstance(token, str) for token in (*inputs, *targets)):
        raise Wrong("every token should be a string such as '<start>' or 'hund'")
    expected_inputs, expected_targets = SENTENCE[:-1], SENTENCE[1:]
    if inputs == expected_inputs and targets == expected_targets:
        return
    if inputs == expected_targets and targets == expected_inputs:
        raise Wrong("inputs and targets are swapped: the input starts with <start>")
    if inputs == SENTENCE[1:-1] and targets == SENTENCE[1:-1]:
        raise Wrong("the input begins with <start>, and the last target is <end>")
    if inputs == targets:
        raise Wrong("inputs and targets are the same list: the model would learn to copy the "
                    "token it already reads; each target is the token *after* its input, so "
                    "shift by one (inputs begin with <start>, targets end with <end>)")
    if any(token in SOURCE for token in (*inputs, *targets)):
        raise Wrong("the decoder reads the target sentence shifted right (teacher forcing), not "
                    "the source sentence 'a small dog': the source goes to the encoder")
    if "<end>" in inputs:
        raise Wrong("<end> is never a decoder input (nothing is predicted after it): the inputs "
                    "are <start> followed by the target tokens")
    if "<start>" in targets:
        raise Wrong("<start> is never a target (the model never has to predict it): the targets "
                    "are the target tokens followed by <end>")
    if "<end>" not in targets:
        raise Wrong("the last target must be <end>: it is how the model learns to stop; the "
                    "inputs are then <start> and all 3 target tokens")
    if "<start>" not in inputs:
        raise Wrong("the decoder's first input is <start>: at position 0 it has read nothing "
                    "of the target yet, and must predict 'ein'")
    if len(inputs) != len(targets):
        raise Wrong(f"inputs and targets need the same length (one target per input position); "
                    f"got {len(inputs)} and {len(targets)}")
    if inputs != expected_inputs:
        raise Wrong(f"the inputs {inputs} are not right: they are the sentence shifted right")
    raise Wrong(f"the targets {targets} are not right: each is the token after its input")


_P_10_2 = (0.7, 0.1, 0.1, 0.1)
_EPS_10_2 = 0.1


def _smoothed(q_target: float, q_other: float, log=math.log) -> float:
    """−Σ q ln p for exercise 10.2's p, with ``q_target`` on the first token."""
    return -sum(q * log(p) for q, p in zip((q_target, q_other, q_other, q_other), _P_10_2))


@exercise("10.2", "A label-smoothed loss by hand")
def ex2(answer) -> None:
    """``answer``: the label-smoothed cross-entropy (ε = 0.1) of probabilities
    (0.7, 0.1, 0.1, 0.1) with target 0."""
    probabilities = torch.tensor([_P_10_2], dtype=torch.float64)
    target = torch.tensor([0])
    logits = probabilities.log()  # softmax(log p) = p
    expected = F.cross_entropy(logits, target, label_smoothing=_EPS_10_2).item()
    plain = F.cross_entropy(logits, target).item()
    answer = as_number(answer, "the smoothed loss")
    eps, n_vocab = _EPS_10_2, len(_P_10_2)
    as_logits = F.cross_entropy(probabilities, target, label_smoothing=eps).item()
    _name_value(answer, [
        (plain, "that is the plain cross-entropy −ln 0.7; spread ε = 0.1 over all 4 tokens"),
        (_smoothed(1 - eps, eps / (n_vocab - 1)),
         "PyTorch's convention spreads ε over all n_vocab tokens, the target included"),
        (_smoothed(1 - eps, eps / n_vocab),
         "the target distribution must sum to 1: the correct token gets 1 − ε plus its own "
         "share ε/4 of the spread, 0.925, not 0.9"),
        (_smoothed(1.0, eps / n_vocab),
         "the target distribution must sum to 1: the correct token gets 1 − ε + ε/4 = 0.925, "
         "not 1"),
        ((1 - eps) * plain - eps * sum(math.log(p) for p in _P_10_2),
         "the smoothing term is ε times the *mean* of −ln p over the 4 tokens (ε/4 on each), "
         "not ε times their sum"),
        (as_logits, "F.cross_entropy takes logits, not probabilities: it applied a softmax to "
                    "(0.7, 0.1, 0.1, 0.1) again; pass their log (softmax(ln p) = p)"),
        (expected / math.log(2), "that loss is in bits (log base 2); a cross-entropy is in nats: "
                                 "use the natural log"),
        (expected / math.log(10), "that loss uses log base 10; a cross-entropy is in nats: use "
                                  "the natural log"),
        (expected / n_vocab, "you averaged the 4 terms −q_i ln p_i; the cross-entropy is their "
                             "sum"),
        (-expected, "a cross-entropy is positive: −Σ q_i ln p_i (the log of a probability is "
                    "negative)"),
    ], rel_tol=1e-4)
    expect_number(answer, expected, name="the smoothed loss", rel_tol=1e-4, rounding_tol=5e-3)


@exercise("10.3", "The original schedule on a smaller model")
def ex3(answer) -> None:
    """``answer``: dict ``{"peak": float, "quarter_step": int}`` for d = 256, warm-up 2,000."""
    if not isinstance(answer, Mapping) or not {"peak", "quarter_step"} <= set(answer):
        raise Wrong('answer should be a dict {"peak": ..., "quarter_step": ...}')
    d, warmup = 256, 2000
    peak = (d * warmup) ** -0.5
    given_peak = as_number(answer["peak"], "the peak learning rate")
    _name_value(given_peak, [
        (warmup**-0.5, "the schedule is multiplied by d^(-1/2): the peak is (d·w)^(-1/2)"),
        ((512 * 4000) ** -0.5, "that is the peak of the original model (d = 512, w = 4,000); "
                               "use d = 256, w = 2,000"),
        (d**-0.5 * warmup**-1.5, "that is d^(-1/2)·w^(-3/2), the warm-up branch without its "
                                 "factor s: at the peak s = w, so s·w^(-3/2) = w^(-1/2) and "
                                 "the peak is (d·w)^(-1/2)"),
        ((d * warmup) ** 0.5, "the exponents are negative: the peak is (d·w)^(-1/2), a small "
                              "number"),
        (d**-0.5, "that is d^(-1/2) alone; the min(…) still has to be evaluated at the peak "
                  "s = w, where it is w^(-1/2)"),
        ((d * warmup) ** -0.5 / 4, "that is a quarter of the peak; give the peak itself, "
                                   "(d·w)^(-1/2)"),
    ], rel_tol=1e-3)
    expect_number(given_peak, peak, name="the peak learning rate", rel_tol=1e-3)
    step = as_number(answer["quarter_step"], "the step where the rate is a quarter")
    if step == 4 * warmup:
        raise Wrong("after the peak the rate falls as 1/√s, not 1/s: at 4w it has only halved; "
                    "a quarter needs 16× the warm-up step")
    if step == 2 * warmup:
        raise Wrong("at s = 2w the rate is the peak divided by √2; (d·s)^(-1/2) falls to a "
                    "quarter where √(s/w) = 4, that is s = 16w")
    if step == warmup // 4:
        raise Wrong("that step is on the rising side: the warm-up passes a quarter of the peak at "
                    "s = w/4; the question asks for the step s > w where the decay reaches it")
    if step in (warmup, warmup + 1):
        raise Wrong("that is the peak itself (or the step right after it); the rate is a quarter "
                    "of the peak much later, where (d·s)^(-1/2) = (d·w)^(-1/2) / 4")
    if step == 17 * warmup:
        raise Wrong("the schedule counts s from the start of training, not from the end of the "
                    "warm-up: the rate is a quarter of the peak at s = 16w itself")
    if step == 16:
        raise Wrong("16 is the ratio s/w; give the step itself, s = 16w")
    expect_number(step, 16 * warmup, name="the step where the rate is a quarter")


def _reference_top_k(logits: torch.Tensor, k: int, temperature: float) -> torch.Tensor:
    order = torch.sort(logits, descending=True).indices
    keep = torch.zeros_like(logits, dtype=torch.bool)
    keep[order[:k]] = True
    weights = torch.exp((logits - logits.max()) / temperature) * keep
    return weights / weights.sum()


def _kept_softmax(logits: torch.Tensor, kept: torch.Tensor, scaled: torch.Tensor,
                  fill: float = float("-inf")) -> torch.Tensor:
    """softmax over the vocabulary of ``scaled`` at ``kept``, ``fill`` elsewhere."""
    out = torch.full_like(logits, fill)
    out[kept] = scaled[kept]
    return torch.softmax(out, -1)


def _top_k_variants(logits: torch.Tensor, k: int, temperature: float):
    """``(hint, probabilities)`` of the typical wrong top-k samplers on these logits."""
    order = torch.sort(logits, descending=True).indices
    top, n_vocab = order[:k], logits.shape[0]
    full = torch.softmax(logits / temperature, -1)
    not_renormalised = torch.zeros_like(logits)
    not_renormalised[top] = full[top]
    sorted_probabilities = torch.zeros_like(logits)
    sorted_probabilities[:k] = torch.softmax(logits[top] / temperature, -1)
    return [
        ("the temperature was not applied: divide the kept logits by τ",
         _kept_softmax(logits, top, logits)),
        ("you multiplied the logits by τ; temperature divides them: softmax(z / τ), so a low "
         "τ sharpens and a high τ flattens", _kept_softmax(logits, top, logits * temperature)),
        ("the discarded tokens still get probability: set their logits to −∞ (not 0) before "
         "the softmax, so exp gives exactly 0", _kept_softmax(logits, top, logits / temperature,
                                                               fill=0.0)),
        ("you zeroed the discarded tokens after a softmax over the whole vocabulary without "
         "renormalising: the k kept probabilities must sum to 1 (take the softmax over the kept "
         "logits only)", not_renormalised),
        ("that is the softmax over the whole vocabulary: keep only the k largest logits and "
         "give every other token probability 0", full),
        ("you kept the k *smallest* logits: sort in descending order (torch.topk, or argsort "
         "with descending=True)", _kept_softmax(logits, order[-k:], logits / temperature)),
        ("you kept k + 1 tokens: off by one — keep exactly the k largest logits",
         _kept_softmax(logits, order[: k + 1], logits / temperature) if k < n_vocab else None),
        ("you kept k − 1 tokens: off by one — keep exactly the k largest logits",
         _kept_softmax(logits, order[: k - 1], logits / temperature) if k > 1 else None),
        ("the probabilities are in sorted order: put each one back at its token's index "
         "(the indices from torch.topk), not at positions 0 … k − 1", sorted_probabilities),
    ]


TOP_K_CASES = ((3, 1.0), (1, 0.7), (5, 2.0), (10, 0.5), (4, 0.25))
"""Exercise 10.4's settings (k, τ) on 10 random logits each; the last has large logits."""


@exercise("10.4", "Top-k sampling with temperature")
def ex4(answer) -> None:
    """``answer``: ``top_k_probabilities(logits (n_vocab,), k, temperature)`` → ``(n_vocab,)``."""
    generator = torch.Generator().manual_seed(4)
    for index, (k, temperature) in enumerate(TOP_K_CASES):
        logits = torch.randn(10, generator=generator, dtype=torch.float64) * 2
        if index == len(TOP_K_CASES) - 1:
            logits = logits * 100  # exp(z / τ) overflows without the maximum subtracted
        expected = _reference_top_k(logits, k, temperature)
        result = call_reader(answer, logits.clone(), k, temperature,
                             name="your top_k_probabilities")
        name = f"your probabilities (k = {k}, τ = {temperature})"
        setting = f"(k = {k}, τ = {temperature})"
        probabilities = torch.from_numpy(to_array(result, name))
        if probabilities.shape == (k,) and k < expected.shape[0]:
            raise Wrong(f"{setting}: you returned only the k kept probabilities; return a vector "
                        f"over the whole vocabulary ({expected.shape[0]} entries) with 0 for the "
                        "discarded tokens")
        if probabilities.shape == expected.shape:
            if torch.allclose(probabilities, expected, atol=1e-6):
                continue
            if not torch.isfinite(probabilities).all():
                raise Wrong(f"{setting}: with logits as large as {float(logits.abs().max()):.0f} "
                            "your probabilities are NaN or inf: exp overflows — subtract the "
                            "largest kept logit before exponentiating (torch.softmax does)")
            for hint, variant in _top_k_variants(logits, k, temperature):
                if variant is not None and not torch.allclose(variant, expected, atol=1e-6) \
                        and torch.allclose(probabilities, variant, atol=1e-6):
                    raise Wrong(f"{setting}: {hint}")
            total = float(probabilities.sum())
            if not math.isclose(total, 1.0, abs_tol=1e-6):
                raise Wrong(f"{setting}: your probabilities sum to {total:.4f}, not 1: take the "
                            "softmax over the kept logits only")
            kept = int((probabilities > 1e-12).sum())
            if kept != k:
                raise Wrong(f"{setting}: {kept} tokens have a probability above 0; keep exactly "
                            "the k largest logits")
            if not torch.equal(probabilities > 1e-12, expected > 0):
                raise Wrong(f"{setting}: the tokens you kept are not the k largest logits")
        expect_tensor(probabilities, expected, name=name, axes=("vocabulary",), atol=1e-6)


_KV = dict(layers=24, d=1024, tokens=1024, batch=4, bytes=2)
KV_HEADS = 16
"""GPT-2 medium's heads: d = h·d_k = 16 · 64 (a factor that must not enter the count again)."""


def _kv_variants(expected: int):
    k = _KV
    return [
        (expected // 2, "half the right size: the cache holds keys *and* values, and each "
                        "float16 number takes 2 bytes — give bytes"),
        (2 * expected, "float16 takes 2 bytes per number, not 4"),
        (expected // k["batch"], "that is one sequence; the batch has 4"),
        (expected // k["layers"], "every layer has its own cache"),
        (expected * KV_HEADS, "d = 1,024 already counts all 16 heads (d = h·d_k = 16 · 64): "
                              "multiplying by h as well counts every number 16 times"),
        (expected // KV_HEADS, "each layer caches all h = 16 heads: use the full width "
                               "d = h·d_k = 1,024 per position, not one head's d_k = 64"),
        (expected / 2**20, "that is the size in MiB (2²⁰ bytes); give the number of bytes"),
        (expected / 1e6, "that is the size in megabytes (10⁶ bytes); give the number of bytes"),
        (expected / 2**30, "that is the size in GiB (2³⁰ bytes); give the number of bytes"),
        (expected / 1e9, "that is the size in gigabytes (10⁹ bytes); give the number of bytes"),
        (expected // 1024, "1,024 times too small: that is the size in KiB, or a factor of "
                           "1,024 is missing — the width d or the 1,024 positions"),
        (8 * expected, "that counts bits; a byte is 8 bits — give bytes"),
    ]


@exercise("10.5", "The KV cache of GPT-2 medium in float16")
def ex5(answer) -> None:
    """``answer``: bytes of the float16 KV cache of GPT-2 medium (24 layers, d = 1024) for a
    batch of 4 sequences of 1,024 tokens."""
    k = _KV
    numbers = 2 * k["layers"] * k["d"] * k["tokens"] * k["batch"]
    expected = numbers * k["bytes"]
    value = as_number(answer, "the cache size in bytes")
    _name_value(value, _kv_variants(expected))
    if math.isfinite(value) and value > 0 and value != expected:
        factors = ("the cache holds 2 (keys and values) × 24 layers × d = 1,024 × 1,024 "
                   "positions × 4 sequences × 2 bytes")
        small, large = expected / value, value / expected
        if small > 1 and math.isclose(small, round(small), rel_tol=1e-9) and small <= 2**30:
            raise Wrong(f"your count is exactly {shown(round(small))} times too small: "
                        f"{factors} — check which factor is missing")
        if large > 1 and math.isclose(large, round(large), rel_tol=1e-9) and large <= 2**30:
            raise Wrong(f"your count is exactly {shown(round(large))} times too large: "
                        f"{factors} — check which factor does not belong")
    expect_number(answer, expected, name="the cache size in bytes", integer=True)


def _cached_outputs(query, keys, values, t: int):
    """``(hint, output)`` of the typical wrong cached steps at step ``t`` (keys ``(t + 1, d_k)``)."""
    d_k = query.shape[-1]
    scores = keys @ query
    return [
        ("divide the scores by √d_k", torch.softmax(scores, 0) @ values),
        ("you divided the scores by d_k; divide them by √d_k",
         torch.softmax(scores / d_k, 0) @ values),
        ("you divided by the square root of the number of keys (t + 1); the scale is √d_k, "
         "the width of a key (query.shape[-1])",
         torch.softmax(scores / math.sqrt(t + 1), 0) @ values),
        ("the new token must attend to itself too: append before attending",
         torch.softmax(keys[:t] @ query / math.sqrt(d_k), 0) @ values[:t]),
        ("your output is the sum of the values: every weight is 1, so the softmax ran over an "
         "axis of size 1; take it over the t + 1 keys", values.sum(0)),
        ("your output is the plain mean of the values: the weights are uniform — compute them "
         "from the scores q · k / √d_k", values.mean(0)),
        ("the weights do not sum to 1: normalise exp(scores) by its sum (use the softmax)",
         torch.exp(scores / math.sqrt(d_k)) @ values),
    ]


def _cache_hint(given, right, old, new, other_new, kind: str):
    """A hint when the returned ``kind`` cache ``given`` is not ``right`` (= old + [new]), else
    None; ``kind`` is "key" or "value", ``other_new`` the new vector of the other kind."""
    if given.ndim != 2:
        return None
    if given.shape == old.shape:
        return (f"the {kind} cache did not grow: append the new {kind} to it, so that after "
                f"step t it holds t + 1 rows")
    if given.shape != right.shape:
        return None
    if torch.allclose(given, torch.cat([old, other_new[None]]), atol=1e-12):
        return ("the value cache got the new key: append new_value to cached_values"
                if kind == "value" else
                "the key cache got the new value: append new_key to cached_keys")
    if torch.allclose(given, torch.cat([new[None], old]), atol=1e-12):
        return (f"the new {kind} went to the front of the cache; append it at the end — the "
                "last row is the newest position")
    return None


LARGE_QUERY = 1000.0
"""Exercise 10.6's last query is scaled by this: its scores overflow exp without the maximum
subtracted."""


@exercise("10.6", "One cached attention step")
def ex6(answer) -> None:
    """``answer``: ``cached_step(query, new_key, new_value, cached_keys, cached_values)``.

    ``query``, ``new_key``, ``new_value``: 1-D, ``(d_k,)``; caches ``(t, d_k)``. Must return
    ``(output (d_k,), keys (t + 1, d_k), values (t + 1, d_k))``. The last step has large scores
    (its query is scaled by :data:`LARGE_QUERY`).
    """
    generator = torch.Generator().manual_seed(6)
    n_positions, d_k = 7, 4
    queries, keys, values = (
        torch.randn(n_positions, d_k, generator=generator, dtype=torch.float64) for _ in range(3)
    )
    queries[-1] *= LARGE_QUERY
    full = F.scaled_dot_product_attention(queries[None], keys[None], values[None],
                                          is_causal=True)[0]
    cached_keys, cached_values = keys[:1], values[:1]
    for t in range(1, n_positions):
        result = call_reader(answer, queries[t].clone(), keys[t].clone(), values[t].clone(),
                             cached_keys.clone(), cached_values.clone(), name="your cached_step")
        if not isinstance(result, tuple | list) or len(result) != 3:
            raise Wrong("cached_step should return (output, keys, values)")
        output, new_keys, new_values = result
        for given, right, new, other_new, kind in (
            (new_keys, keys[: t + 1], keys[t], values[t], "key"),
            (new_values, values[: t + 1], values[t], keys[t], "value"),
        ):
            given_tensor = torch.from_numpy(to_array(given, f"the cached {kind}s (step {t})"))
            old = right[:t]
            if given_tensor.shape != right.shape or not torch.allclose(given_tensor, right,
                                                                       atol=1e-12):
                hint = _cache_hint(given_tensor, right, old, new, other_new, kind)
                if hint is not None:
                    raise Wrong(f"(step {t}): {hint}")
            expect_tensor(given_tensor, right, name=f"the cached {kind}s (step {t})",
                          axes=("positions", "features"))
        cached_keys = torch.from_numpy(to_array(new_keys))
        cached_values = torch.from_numpy(to_array(new_values))
        value = torch.from_numpy(to_array(output, f"the output (step {t})"))
        if value.shape == (1, d_k):
            raise Wrong(f"(step {t}): the output has shape (1, {d_k}); return the 1-D output "
                        f"of shape (d_k,) = ({d_k},), like the query")
        if value.shape == full[t].shape and not torch.allclose(value, full[t], atol=1e-6):
            if not torch.isfinite(value).all():
                largest = float((keys[: t + 1] @ queries[t]).abs().max() / math.sqrt(d_k))
                raise Wrong(f"(step {t}): with scores as large as {largest:.0f} your output is "
                            "NaN or inf: exp overflows — subtract the largest score before "
                            "exponentiating (torch.softmax does)")
            for hint, variant in _cached_outputs(queries[t], keys[: t + 1], values[: t + 1], t):
                if not torch.allclose(variant, full[t], atol=1e-6) and torch.allclose(
                        value, variant, atol=1e-6):
                    raise Wrong(hint)
        expect_tensor(value, full[t], name=f"the output (step {t})", axes=("features",),
                      atol=1e-6)


def _reference_precision(candidate, references, n):
    """Clipped n-gram matches by explicit list counting (independent of tformer.bleu)."""
    grams = [tuple(candidate[i : i + n]) for i in range(len(candidate) - n + 1)]
    clipped = 0
    for gram in set(grams):
        in_refs = [
            sum(tuple(ref[i : i + n]) == gram for i in range(len(ref) - n + 1))
            for ref in references
        ]
        clipped += min(grams.count(gram), max(in_refs))
    return clipped, len(grams)


def _precision_cases():
    rng = random.Random(7)
    words = ["a", "b", "c", "d", "e"]
    cases = [
        (["the", "the", "the", "the"], [["the", "cat"], ["the", "the", "mat"]], 1),
        (["the", "cat", "sat", "on", "the", "mat"], [["the", "cat", "is", "on", "the", "mat"]], 2),
        (["x", "y", "z"], [["a", "b", "c"]], 1),
        (["a", "b"], [["a", "b", "c"]], 3),
    ]
    for _ in range(12):
        candidate = [rng.choice(words) for _ in range(rng.randint(3, 9))]
        refs = [[rng.choice(words) for _ in range(rng.randint(3, 9))]
                for _ in range(rng.randint(1, 3))]
        cases.append((candidate, refs, rng.randint(1, 3)))
    return cases


def _grams(tokens, n, window_end: int = 1) -> list[tuple]:
    """The n-grams of ``tokens``; ``window_end = 0`` drops the last one (an off-by-one)."""
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + window_end)]


def _precision_unclipped(candidate, references, n):
    seen = {g for r in references for g in _grams(r, n)}
    grams = _grams(candidate, n)
    return sum(g in seen for g in grams), len(grams)


def _precision_summed(candidate, references, n):
    allowed = Counter(g for r in references for g in _grams(r, n))
    counts = Counter(_grams(candidate, n))
    return sum(min(c, allowed[g]) for g, c in counts.items()), sum(counts.values())


def _precision_best_reference(candidate, references, n):
    counts = Counter(_grams(candidate, n))
    best = max(sum(min(c, Counter(_grams(r, n))[g]) for g, c in counts.items())
               for r in references)
    return best, sum(counts.values())


def _precision_first_reference(candidate, references, n):
    counts, allowed = Counter(_grams(candidate, n)), Counter(_grams(references[0], n))
    return sum(min(c, allowed[g]) for g, c in counts.items()), sum(counts.values())


def _precision_short_window(candidate, references, n):
    counts = Counter(_grams(candidate, n, 0))
    most: Counter = Counter()
    for r in references:
        for g, c in Counter(_grams(r, n, 0)).items():
            most[g] = max(most[g], c)
    return sum(min(c, most[g]) for g, c in counts.items()), sum(counts.values())


def _precision_distinct(candidate, references, n):
    grams = set(_grams(candidate, n))
    return len(grams & {g for r in references for g in _grams(r, n)}), len(grams)


def _precision_reference_total(candidate, references, n):
    clipped, _ = _reference_precision(candidate, references, n)
    return clipped, max(len(r) - n + 1 for r in references)


PRECISION_VARIANTS = (
    ("clip each n-gram's count by its count in the reference", _precision_unclipped),
    ("clip by the reference where the n-gram is most frequent (the maximum over references), "
     "not the sum over references", _precision_summed),
    ("you clipped against each reference as a whole and kept the best one; take the maximum "
     "per n-gram instead — different n-grams may be most frequent in different references",
     _precision_best_reference),
    ("you clipped against the first reference only; each n-gram's limit is its largest count "
     "over all the references", _precision_first_reference),
    ("your n-gram window is one short: a sentence of length m has m − n + 1 n-grams, "
     "range(len(tokens) − n + 1)", _precision_short_window),
    ("you counted each distinct n-gram once (a set): repeats count too, up to their clip — use "
     "a Counter", _precision_distinct),
    ("the denominator is the number of the candidate's n-grams, not the reference's",
     _precision_reference_total),
)
"""``(hint, function)`` of the typical wrong modified precisions."""


@exercise("10.7", "BLEU's modified n-gram precision")
def ex7(answer) -> None:
    """``answer``: ``modified_precision(candidate, references, n)`` → ``(clipped, total)``.

    The function runs on every case first; a typical wrong count that reproduces all its
    results is named (with a case where it differs), else the first wrong case is diagnosed.
    """
    cases = _precision_cases()
    given = []
    for candidate, refs, n in cases:
        result = call_reader(answer, list(candidate), [list(r) for r in refs], n,
                             name="your modified_precision")
        if (isinstance(result, int | float) and not isinstance(result, bool)) or (
                isinstance(result, torch.Tensor) and result.numel() == 1):
            raise Wrong("return the pair (clipped, total), not the precision clipped / total")
        if not isinstance(result, tuple | list) or len(result) != 2:
            raise Wrong("modified_precision should return a pair (clipped, total)")
        given.append((as_number(result[0], "the clipped count"),
                      as_number(result[1], "the total")))
    expected = [_reference_precision(*case) for case in cases]
    wrong = [i for i in range(len(cases)) if given[i] != expected[i]]
    if not wrong:
        return

    def setting(i):
        candidate, _, n = cases[i]
        return f"(candidate {' '.join(candidate)!r}, n = {n})"

    for hint, variant in PRECISION_VARIANTS:
        values = [variant(*case) for case in cases]
        if all(values[i] == given[i] for i in range(len(cases))):
            raise Wrong(f"{setting(wrong[0])}: {hint}")
    i = wrong[0]
    candidate, refs, n = cases[i]
    clipped, total = given[i]
    for hint, variant in PRECISION_VARIANTS[:2]:
        value = variant(*cases[i])
        if total == expected[i][1] and clipped == value[0] != expected[i][0]:
            raise Wrong(f"{setting(i)}: {hint}")
    if clipped == expected[i][0] and total != expected[i][1]:
        raise Wrong(f"{setting(i)}: the denominator is the number of the candidate's n-grams, "
                    f"{expected[i][1]}")
    raise Wrong(f"{setting(i)}: expected {expected[i]}, got ({clipped:g}, {total:g})")


def _cached_unscaled(query, new_key, new_value, cached_keys, cached_values):
    keys = torch.cat([cached_keys, new_key[None]])
    values = torch.cat([cached_values, new_value[None]])
    return torch.softmax(keys @ query, 0) @ values, keys, values


def _cached_without_new(query, new_key, new_value, cached_keys, cached_values):
    weights = torch.softmax(cached_keys @ query / math.sqrt(query.shape[-1]), 0)
    keys = torch.cat([cached_keys, new_key[None]])
    values = torch.cat([cached_values, new_value[None]])
    return weights @ cached_values, keys, values


def _top_k_no_temperature(logits, k, temperature):
    kept = torch.topk(logits, k).indices
    scaled = torch.full_like(logits, float("-inf"))
    scaled[kept] = logits[kept]
    return torch.softmax(scaled, -1)


TEMPERATURE_LOGITS = (3.0, 2.0, 0.5, 0.0, -1.0, -2.0)


def _top_probability(temperature: float) -> float:
    logits = torch.tensor(TEMPERATURE_LOGITS, dtype=torch.float64)
    return torch.softmax(logits / temperature, -1)[0].item()


def _entropy(temperature: float) -> float:
    logits = torch.tensor(TEMPERATURE_LOGITS, dtype=torch.float64)
    log_p = torch.log_softmax(logits / temperature, -1)
    return -(log_p.exp() * log_p).sum().item()


def _half_temperature() -> float:
    low, high = 1e-3, 1e3  # the top probability falls steadily as τ grows
    for _ in range(200):
        middle = math.sqrt(low * high)
        low, high = (middle, high) if _top_probability(middle) > 0.5 else (low, middle)
    return math.sqrt(low * high)


def _choice(prediction, options: tuple[str, ...], form: str) -> str:
    """The reader's prediction as one of ``options`` (lower case). A missing prediction is
    :class:`NotAttempted` (the run alone is not the exercise); anything else is :class:`Wrong`."""
    if is_missing(prediction):
        raise NotAttempted(f"the run is right, but the prediction is missing: set {form} (what "
                           "you expect before running) and run the check again")
    if isinstance(prediction, str) and prediction.strip().lower() in options:
        return prediction.strip().lower()
    raise Wrong(f"write the prediction as {form}; got {_short_repr(prediction)}")


def _short_repr(value) -> str:
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a reader's object may fail to print
        text = f"a {type(value).__name__}"
    return text if len(text) <= 40 else text[:39] + "…"


@exercise("10.8", "Predict, then run: the temperature of a coin flip")
def ex8(answer, prediction=None) -> None:
    """``answer``: dict ``{"tau": float, "entropy": float}`` for the logits
    :data:`TEMPERATURE_LOGITS`: the τ at which the top token's probability is 1/2, and the
    entropy (nats) of softmax(z / τ) there. ``prediction``: ``"above"`` or ``"below"`` (1), the
    guess made before running; once the run is right it is compared with the run."""
    if not isinstance(answer, Mapping) or not {"tau", "entropy"} <= set(answer):
        raise Wrong('answer should be a dict {"tau": ..., "entropy": ...}')
    tau = _half_temperature()
    given = as_number(answer["tau"], "the temperature τ")
    if given <= 0:
        raise Wrong(f"the temperature must be positive, got τ = {given:g}")
    if math.isclose(given, 1 / tau, rel_tol=2e-3):
        raise Wrong("that τ multiplies the logits; temperature divides them: softmax(z / τ) "
                    "(at τ = 1 the top token already has more than 1/2, so τ must exceed 1)")
    if math.isclose(given, 1.0, abs_tol=1e-9):
        raise Wrong("at τ = 1 the top token's probability is "
                    f"{_top_probability(1.0):.3f}, not 1/2: raise τ until it falls to 1/2")
    top = _top_probability(given)
    if not math.isclose(given, tau, rel_tol=1e-3):
        if top > 0.5:
            raise Wrong(f"at τ = {given:g} the top token's probability is {top:.4f}, still above "
                        "1/2: it falls steadily as τ grows, so the answer is a larger τ — bisect "
                        "until four significant digits stop changing")
        raise Wrong(f"at τ = {given:g} the top token's probability is {top:.4f}, already below "
                    "1/2: it falls steadily as τ grows, so the answer is a smaller τ — bisect "
                    "until four significant digits stop changing")
    entropy = _entropy(tau)
    value = as_number(answer["entropy"], "the entropy")
    if math.isclose(value, entropy / math.log(2), rel_tol=2e-3):
        raise Wrong("that entropy is in bits (log base 2); the question asks for nats: use the "
                    "natural log, −Σ p ln p")
    if math.isclose(value, _entropy(1.0), rel_tol=2e-3):
        raise Wrong("that is the entropy at τ = 1; compute it at your τ, where the distribution "
                    "is flatter")
    if math.isclose(value, entropy / math.log(10), rel_tol=2e-3):
        raise Wrong("that entropy uses log base 10; the question asks for nats: use the natural "
                    "log, −Σ p ln p")
    if math.isclose(value, -entropy, rel_tol=2e-3):
        raise Wrong("an entropy is never negative: −Σ p ln p (each ln p is negative, the minus "
                    "sign makes the sum positive)")
    if math.isclose(value, -math.log(0.5), rel_tol=2e-3):
        raise Wrong("−ln(1/2) counts only the top token's term; the entropy sums −p ln p over all "
                    "six tokens")
    expect_number(value, entropy, name="the entropy (nats)", rel_tol=2e-3,
                  rounding_tol=0.01)
    choice = _choice(prediction, ("above", "below"), 'prediction = "above" or "below"')
    top_at_1 = _top_probability(1.0)
    if choice == "above":
        print(translate(f'your prediction "above": right — at τ = 1 the top token already has '
                        f"{top_at_1:.3f}, more than 1/2, and a higher temperature flattens the "
                        f"distribution, so its share falls to 1/2 only at τ = {tau:.4f}"))
    else:
        print(translate(f'your prediction "below": the run says τ = {tau:.4f}, above 1 — at '
                        f"τ = 1 the top token already has {top_at_1:.3f}, more than 1/2, and "
                        "only a higher temperature, which flattens the distribution, brings "
                        "its share down to 1/2"))


# ---------------------------------------------------------------------------------------------
# 10.9: beam width


BEAM_LENGTHS = (2, 3)
"""Exercise 10.9 searches continuations of 2 and of 3 new tokens."""
BEAM_TOLERANCE = 1e-6
"""Log-probabilities closer than this count as equal: one text scored in batches of different
sizes can differ in its last digits."""
_INTEGER_DTYPES = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)


def _as_prompts(prompts) -> torch.Tensor:
    """The reader's prompts as one ``(N, T)`` long tensor, or :class:`Wrong`."""
    if isinstance(prompts, list | tuple) and prompts and all(
            isinstance(p, torch.Tensor) and p.ndim == 1 for p in prompts) and len(
            {p.shape[0] for p in prompts}) == 1:
        prompts = torch.stack(list(prompts))
    if isinstance(prompts, torch.Tensor) and prompts.ndim == 1:
        prompts = prompts[None]
    if not isinstance(prompts, torch.Tensor) or prompts.ndim != 2 or \
            prompts.dtype not in _INTEGER_DTYPES or 0 in prompts.shape:
        raise Wrong("pass the prompts as the cell does: a tensor of token ids of shape "
                    "(N, T), one prompt per row")
    return prompts.long()


@torch.no_grad()
def _reference_beams(model, prompts: torch.Tensor, n_new: int, width: int) -> torch.Tensor:
    """A width-``width`` beam search of ``n_new`` tokens for all prompts at once, written
    independently of :mod:`tformer.generation` (no end token, no length penalty): the total
    log-probabilities ``(N, width)`` of the hypotheses kept at the end, best first."""
    count = prompts.shape[0]
    sequences = prompts[:, None, :]
    scores = torch.zeros(count, 1, dtype=torch.float64)
    for _ in range(n_new):
        kept = sequences.shape[1]
        log_p = model(sequences.reshape(count * kept, -1))[:, -1].double().log_softmax(-1)
        n_vocab = log_p.shape[-1]
        candidates = (scores[..., None] + log_p.cpu().view(count, kept, n_vocab)).view(count, -1)
        scores, flat = candidates.topk(min(width, candidates.shape[1]), dim=-1)
        parents = (flat // n_vocab)[..., None].expand(-1, -1, sequences.shape[2])
        new = (flat % n_vocab)[..., None].to(sequences.device)
        sequences = torch.cat([sequences.gather(1, parents.to(sequences.device)), new], 2)
    return scores


def _beam_counts(model, prompts: torch.Tensor) -> dict[str, tuple[int, ...]]:
    """Exercise 10.9's counts on the reader's model and prompts, per length in BEAM_LENGTHS:
    ``lower`` / ``higher`` (width 2's best below / above greedy's by more than the tolerance),
    ``ties`` and the counts a search comparing width 2's *second* hypothesis gives."""
    if not callable(model):
        raise Wrong(f"pass the model as the cell does (the language model from docs_lm()), "
                    f"not a {type(model).__name__}")
    device = next(iter(model.parameters()), torch.empty(0)).device if isinstance(
        model, torch.nn.Module) else torch.device("cpu")
    was_training = getattr(model, "training", False)
    counts: dict[str, list[int]] = {key: [] for key in
                                    ("lower", "higher", "ties", "second_lower", "second_higher")}
    try:
        if isinstance(model, torch.nn.Module):
            model.eval()
        for n_new in BEAM_LENGTHS:
            greedy = _reference_beams(model, prompts.to(device), n_new, 1)[:, 0]
            wide = _reference_beams(model, prompts.to(device), n_new, 2)
            for key, column in (("", 0), ("second_", 1)):
                difference = wide[:, min(column, wide.shape[1] - 1)] - greedy
                counts[key + "lower"].append(int((difference < -BEAM_TOLERANCE).sum()))
                counts[key + "higher"].append(int((difference > BEAM_TOLERANCE).sum()))
            counts["ties"].append(int(((wide[:, 0] - greedy).abs() <= BEAM_TOLERANCE).sum()))
    except Wrong:
        raise
    except Exception as error:  # noqa: BLE001 - the reader's model or prompts may not fit
        raise Wrong(f"the model could not run on the prompts ({type(error).__name__}): pass "
                    "the language model and the (N, T) prompts the cell builds") from None
    finally:
        if isinstance(model, torch.nn.Module):
            model.train(was_training)
    return {key: tuple(value) for key, value in counts.items()}


def _count_pair(value, key: str) -> tuple[float, float]:
    pair = as_tuple(value, 2, f'answer["{key}"] = (count for 2 new tokens, count for 3 new '
                              "tokens)")
    return tuple(as_number(item, f'a count in answer["{key}"]') for item in pair)


@exercise("10.9", "Predict, then run: can a wider beam do worse?")
def ex9(answer, prediction=None, model=None, prompts=None) -> None:
    """``answer``: ``{"lower": (l2, l3), "higher": (h2, h3)}``, the number of prompts on which
    width 2's best continuation of 2 (3) new tokens has a total log-probability below (above)
    greedy decoding's by more than :data:`BEAM_TOLERANCE`. ``prediction``:
    ``{2: "never" | "sometimes", 3: ...}``, whether width 2 can end below greedy. The counts are
    recomputed on the reader's ``model`` and ``prompts`` ``(N, T)`` with a batched beam search
    of this module's own."""
    if not isinstance(answer, Mapping) or not {"lower", "higher"} <= set(answer):
        raise Wrong('answer should be a dict {"lower": (lower_2, lower_3), '
                    '"higher": (higher_2, higher_3)}: counts of prompts for 2 and 3 new tokens')
    given = {key: _count_pair(answer[key], key) for key in ("lower", "higher")}
    if model is None or prompts is None:
        raise NotAttempted("pass the model and the prompts as the cell does: "
                           "ex9(answer, prediction, model, prompts)")
    prompts = _as_prompts(prompts)
    counts = _beam_counts(model, prompts)
    n_prompts = prompts.shape[0]
    second = (counts["second_lower"], counts["second_higher"])
    if (given["lower"], given["higher"]) == second != (counts["lower"], counts["higher"]):
        raise Wrong("you compared width 2's second hypothesis: beam_search returns its "
                    "hypotheses best first, so compare scores[0] with greedy's")
    for key, other in (("lower", "higher"), ("higher", "lower")):
        right, mine = counts[key], given[key]
        if mine == right:
            continue
        if mine == right[::-1]:
            raise Wrong(f'your "{key}" counts are in the wrong order: give (2 new tokens, '
                        "3 new tokens)")
        if mine == counts[other]:
            raise Wrong(f'those are the "{other}" counts: "lower" counts the prompts where '
                        "width 2's best log-probability is below greedy's, \"higher\" those "
                        "where it is above")
        if any(0 < x < 1 for x in mine) and all(
                math.isclose(x, r / n_prompts, abs_tol=1e-9) for x, r in zip(mine, right)):
            raise Wrong(f"give counts of prompts (out of {n_prompts}), not fractions")
        if mine == tuple(r + t for r, t in zip(right, counts["ties"])):
            raise Wrong(f'you counted the ties as "{key}": width 2 found exactly '
                        f"greedy's log-probability on {counts['ties'][0]} and "
                        f"{counts['ties'][1]} prompts — count only differences larger than 10⁻⁶")
        length = BEAM_LENGTHS[0] if mine[0] != right[0] else BEAM_LENGTHS[1]
        raise Wrong(f'your "{key}" count for {length} new tokens is not what these prompts '
                    f"give: compare beam_search(model, prompt, {length}, beam_width=2)'s best "
                    "score with beam_width=1's, prompt by prompt, with the 10⁻⁶ margin")
    choices = _beam_prediction(prediction)
    lower_2, lower_3 = counts["lower"]
    said = choices[2]
    if said == "never":
        print(translate(f"2 new tokens, \"{said}\": right — width 2 keeps greedy's first token, "
                        "and its last step picks the best second token for every prefix it "
                        "kept, so it can never end below greedy (this run: "
                        f"{lower_2} of {n_prompts} prompts)"))
    else:
        print(translate(f"2 new tokens, \"{said}\": not so — width 2 keeps greedy's first "
                        "token, and its last step picks the best second token for every prefix "
                        f"it kept, so it can never end below greedy (this run: {lower_2} of "
                        f"{n_prompts} prompts)"))
    said = choices[3]
    why = ("at step 2 both of width 2's places can go to continuations of the runner-up first "
           "token, so greedy's two-token prefix is dropped — though with its third token it "
           "would have scored higher")
    if lower_3 and said == "sometimes":
        print(translate(f'3 new tokens, "{said}": right — width 2 ended below greedy on '
                        f"{lower_3} of {n_prompts} prompts: {why}"))
    elif lower_3:
        print(translate(f'3 new tokens, "{said}": the run disagrees — width 2 ended below '
                        f"greedy on {lower_3} of {n_prompts} prompts: {why}"))
    elif said == "sometimes":
        print(translate(f'3 new tokens, "{said}": right in general, though these prompts show '
                        f"no case: {why}"))
    else:
        print(translate(f'3 new tokens, "{said}": these prompts show no case, but nothing '
                        f"guarantees it: {why}"))


def _beam_prediction(prediction) -> dict[int, str]:
    form = 'prediction = {2: "never" or "sometimes", 3: "never" or "sometimes"}'
    if is_missing(prediction):
        raise NotAttempted(f"the run is right, but the prediction is missing: set {form} (what "
                           "you expect before running) and run the check again")
    if isinstance(prediction, Mapping):
        found = {}
        for key, value in prediction.items():
            if isinstance(key, int | str) and str(key).strip() in ("2", "3") and isinstance(
                    value, str) and value.strip().lower() in ("never", "sometimes"):
                found[int(str(key).strip())] = value.strip().lower()
        if set(found) == {2, 3}:
            return found
    raise Wrong(f"write the prediction as {form}; got {_short_repr(prediction)}")


# ---------------------------------------------------------------------------------------------
# 10.10: exposure bias


@torch.no_grad()
def _two_modes(model, test) -> tuple[torch.Tensor, torch.Tensor]:
    """Teacher-forced and free-running (greedy) outputs ``(B, T)`` of an encoder–decoder on a
    :class:`~tformer.data.sorting.SortingBatch`, the greedy loop written here (after the first
    end token a row is padded with it, as :func:`tformer.generation.greedy_decode` does)."""
    from tformer.data.sorting import BOS, EOS

    forced = model(test.source, test.target_in).argmax(-1)
    memory = model.encode(test.source)
    tokens = torch.full((test.source.shape[0], 1), BOS, dtype=torch.long)
    done = torch.zeros(test.source.shape[0], dtype=torch.bool)
    for _ in range(test.target_out.shape[1]):
        next_token = model.decode(tokens, memory)[:, -1].argmax(-1)
        next_token = torch.where(done, torch.full_like(next_token, EOS), next_token)
        done |= next_token == EOS
        tokens = torch.cat([tokens, next_token[:, None]], 1)
    return forced, tokens[:, 1:]


def _first_mistake(wrong: torch.Tensor) -> torch.Tensor:
    """The position of each row's first True ``(B,)``; the row length where there is none."""
    none = torch.full((wrong.shape[0],), wrong.shape[1])
    return torch.where(wrong.any(1), wrong.long().argmax(1), none)


def _sorter_run(model, test):
    """Everything exercise 10.10 measures, recomputed from the reader's sorter and strings."""
    from tformer.data.sorting import BOS, valid_next_tokens

    parts = [getattr(test, name, None) for name in ("source", "target_in", "target_out")]
    if not all(isinstance(p, torch.Tensor) and p.ndim == 2 and p.dtype == torch.int64
               for p in parts) or parts[0].shape[0] != parts[2].shape[0] or \
            parts[1].shape != parts[2].shape:
        raise Wrong("pass the test strings as the cell does: the SortingBatch from "
                    "sorting_batch(...), with .source, .target_in and .target_out")
    if not all(callable(getattr(model, name, None)) for name in ("encode", "decode")):
        raise Wrong("pass the sorter as the cell does: the encoder–decoder from train_sorter()")
    was_training = getattr(model, "training", False)
    try:
        model.eval()
        forced, free = _two_modes(model, test)
        tolerant_expected, live = valid_next_tokens(test.source, free)
    except Exception as error:  # noqa: BLE001 - the reader's model may not fit the strings
        raise Wrong(f"the sorter could not run on the strings ({type(error).__name__}): pass "
                    "the model from train_sorter() and the batch from sorting_batch()") from None
    finally:
        model.train(was_training)
    target_in, target_out = test.target_in, test.target_out
    wrong_forced, wrong_free = forced != target_out, free != target_out
    with_bos = torch.cat([torch.full_like(free[:, :1], BOS), free], 1)
    first_forced, first_free = _first_mistake(wrong_forced), _first_mistake(wrong_free)
    tolerant = (free != tolerant_expected) & live
    return {
        "forced": wrong_forced.double().mean(0), "free": wrong_free.double().mean(0),
        "forced_unshifted": (forced != target_in).double().mean(0),
        "free_unshifted": (free != target_in).double().mean(0),
        "free_with_bos": (with_bos[:, :-1] != target_out).double().mean(0),
        "free_tolerant": tolerant.double().sum(0) / live.sum(0).clamp(min=1),
        "same_first": int((first_forced == first_free).sum()),
        "perfect": int((~wrong_forced.any(1)).sum()),
        "outputs_agree": int((forced == free).all(1).sum()),
        "same_count": int((wrong_forced.sum(1) == wrong_free.sum(1)).sum()),
        "strings": target_out.shape[0],
    }


def _check_rates(value, run: dict, key: str, other: str, name: str) -> None:
    right = run[key]
    positions, strings = right.shape[0], run["strings"]
    rates = to_array(value, name)
    if rates.shape == (strings,):
        raise Wrong(f"{name}: you averaged over the positions (dim=1), one number per string; "
                    f"average over the {strings} strings (dim=0), one rate per output position")
    if rates.shape == (positions + 1,):
        raise Wrong(f"{name}: {positions + 1} entries, one too many — drop the start token: "
                    f"there are {positions} outputs (the digits and the end token)")
    if rates.shape == (positions - 1,):
        raise Wrong(f"{name}: {positions - 1} entries, one too few — the end token is an "
                    f"output too: score all {positions} positions")
    variants = [
        (run[other], "those are the teacher-forced error rates" if other == "forced" else
         "those are the free-running error rates"),
        (1 - right, "those are accuracies — give the error rate, the share of wrong outputs"),
        (right * strings, f"those are counts — divide by the {strings} strings for a rate"),
        (100 * right, "those are percentages — give each rate as a fraction between 0 and 1"),
        (run[key + "_unshifted"], "you compared the outputs with target_in, the decoder's "
                                  "input; score them against target_out, the token each "
                                  "position must predict"),
    ]
    if key == "free":
        variants += [
            (run["free_tolerant"], "that is the shift-tolerant error (valid_next_tokens); "
                                   "score the free-running outputs position by position "
                                   "against target_out, like the teacher-forced ones"),
            (run["free_with_bos"], "your outputs are shifted by one: greedy_decode's outputs "
                                   "start with the first digit, not with the start token"),
        ]
    if rates.shape == tuple(right.shape):
        given = torch.from_numpy(rates)
        if torch.allclose(given, right, atol=1e-6):
            return
        for variant, hint in variants:
            if not torch.allclose(variant, right, atol=1e-6) and torch.allclose(
                    given, variant, atol=1e-6):
                raise Wrong(f"{name} are not right: {hint}")
    expect_tensor(rates, right, name=name, axes=("output positions",), atol=1e-6)


@exercise("10.10", "Predict, then run: where does free-running go wrong first?")
def ex10(answer, prediction=None, model=None, test=None) -> None:
    """``answer``: ``{"forced": (T,), "free": (T,), "same_first": int}`` — the error rate at each
    output position teacher-forced and free-running (greedy), scored against ``target_out``, and
    the number of strings whose first mistake is at the same position in both modes (a string
    without a mistake counts as the same). ``prediction``: ``"earlier"``, ``"same"`` or
    ``"later"`` — where free-running makes a string's first mistake. Everything is recomputed
    from the reader's ``model`` (the sorter) and ``test`` (a ``SortingBatch``)."""
    if not isinstance(answer, Mapping) or not {"forced", "free", "same_first"} <= set(answer):
        raise Wrong('answer should be a dict {"forced": error rates, "free": error rates, '
                    '"same_first": number of strings}')
    if model is None or test is None:
        raise NotAttempted("pass the sorter and the test strings as the cell does: "
                           "ex10(answer, prediction, sorter, test)")
    run = _sorter_run(model, test)
    _check_rates(answer["forced"], run, "forced", "free", "the teacher-forced error rates")
    _check_rates(answer["free"], run, "free", "forced", "the free-running error rates")
    same, strings = run["same_first"], run["strings"]
    value = as_number(answer["same_first"], "the number of strings with the same first mistake")
    given_count = answer["same_first"]
    integer_typed = isinstance(given_count, int) or (
        isinstance(given_count, torch.Tensor) and not given_count.is_floating_point())
    variants = [
        (None if integer_typed else same / strings,
         f"give the number of strings (out of {strings}), not a fraction"),
        (same - run["perfect"], f"the strings without any mistake ({run['perfect']} here) "
                                "count too: their first mistake is the same (there is none) in "
                                "both modes"),
        (run["outputs_agree"], "that counts the strings whose outputs agree at every position; "
                               "compare only the position of each string's first mistake"),
        (run["same_count"], "that counts the strings with as many mistakes in both modes; "
                            "compare the position of each string's first mistake"),
        (strings - same, "that counts the strings whose first mistakes differ; give those "
                         "where it is at the same position"),
    ]
    for wrong, hint in variants:
        if wrong is not None and wrong != same and math.isclose(value, wrong, abs_tol=1e-9):
            raise Wrong(hint)
    expect_number(value, same, name="the number of strings with the same first mistake")
    choice = _choice(prediction, ("earlier", "same", "later"),
                     'prediction = "earlier", "same" or "later"')
    gap = run["free"] - run["forced"]
    worst = int(gap.argmax())
    if gap[worst] > 0:
        report = (f"in this run free-running is worse at {int((gap > 0).sum())} of the "
                  f"{gap.shape[0]} positions, most at position {worst + 1} "
                  f"({run['free'][worst]:.1%} against {run['forced'][worst]:.1%})")
    else:
        report = "in this run free-running is nowhere worse than teacher forcing"
    rest = "" if same == strings else (f" (the other {strings - same} can differ only through "
                                       "the rounding of a near-tie)")
    if choice == "same":
        print(translate(f'your prediction "same": right — up to its first mistake a string is '
                        "read the same way in both modes, the correct prefix, so the mistake "
                        f"falls at the same position: {same} of {strings} strings{rest}; "
                        f"the two modes can only part after it — {report}"))
    else:
        print(translate(f'your prediction "{choice}": the run disagrees — the first mistake '
                        f"falls at the same position in {same} of {strings} strings{rest}: up "
                        "to it both modes read the same correct prefix, so they cannot differ "
                        f"before it; the two modes can only part after it — {report}"))


def _top_k_softmax_all(logits, k, temperature):
    return torch.softmax(logits / temperature, -1)


_RIGHT_SHIFT = (SENTENCE[:-1], SENTENCE[1:])


def _top_k_multiplied(logits, k, temperature):
    kept = torch.topk(logits, k).indices
    return _kept_softmax(logits, kept, logits * temperature)


def _top_k_zero_fill(logits, k, temperature):
    kept = torch.topk(logits, k).indices
    return _kept_softmax(logits, kept, logits / temperature, fill=0.0)


def _top_k_not_renormalised(logits, k, temperature):
    kept = torch.topk(logits, k).indices
    out = torch.zeros_like(logits)
    out[kept] = torch.softmax(logits / temperature, -1)[kept]
    return out


def _top_k_smallest(logits, k, temperature):
    return _kept_softmax(logits, torch.argsort(logits)[:k], logits / temperature)


def _top_k_one_more(logits, k, temperature):
    order = torch.sort(logits, descending=True).indices
    return _kept_softmax(logits, order[: k + 1], logits / temperature)


def _top_k_only_kept(logits, k, temperature):
    return torch.softmax(torch.topk(logits, k).values / temperature, -1)


def _top_k_by_hand(logits, k, temperature):
    kept = torch.topk(logits, k).indices
    out = torch.zeros_like(logits)
    e = torch.exp(logits[kept] / temperature)
    out[kept] = e / e.sum()
    return out


def _cached_step_with(weights_of, key_cache=None, value_cache=None):
    """A cached step whose weights are ``weights_of(scores (t + 1,), d_k)`` and whose caches may
    be built wrongly (``key_cache(cached, new_key, new_value)``)."""

    def step(query, new_key, new_value, cached_keys, cached_values):
        keys = (key_cache or (lambda c, k, v: torch.cat([c, k[None]])))(cached_keys, new_key,
                                                                         new_value)
        values = (value_cache or (lambda c, k, v: torch.cat([c, v[None]])))(cached_values,
                                                                             new_key, new_value)
        right_keys = torch.cat([cached_keys, new_key[None]])
        right_values = torch.cat([cached_values, new_value[None]])
        weights = weights_of(right_keys @ query, query.shape[-1])
        return weights @ right_values, keys, values

    return step


class _LazyArgs:
    """Checker arguments built on first use (so importing this module builds no model)."""

    def __init__(self, build) -> None:
        self.build = build

    def __iter__(self):
        return iter(self.build())


@functools.cache
def _beam_lab():
    """Exercise 10.9's model and its first 50 prompts (the mistakes of 10.9)."""
    from tformer.pretrained import docs_lm, split_tokens

    model, tokenizer = docs_lm()
    prompts = split_tokens(tokenizer)[1][: 100 * 180].view(100, 180)[:50, :16]
    return model, prompts, _beam_counts(model, prompts)


def _beam_answer(**changes):
    def answer():
        counts = _beam_lab()[2]
        right = {"lower": counts["lower"], "higher": counts["higher"]}
        return {key: change(counts) for key, change in changes.items()} | {
            key: value for key, value in right.items() if key not in changes}

    return answer


_BEAM_ARGS = _LazyArgs(lambda: ({2: "never", 3: "sometimes"}, *_beam_lab()[:2]))


@functools.cache
def _sorter_lab():
    """A briefly trained sorter, strings of 6 digits and their run (the mistakes of 10.10)."""
    from tformer.data.sorting import sorting_batch
    from tformer.encoder_decoder import train_sorter

    model, _ = train_sorter(seed=0, n_steps=60)
    test = sorting_batch(100, 6, generator=torch.Generator().manual_seed(11))
    return model, test, _sorter_run(model, test)


def _sorter_answer(**changes):
    def answer():
        run = _sorter_lab()[2]
        right = {"forced": run["forced"], "free": run["free"], "same_first": run["same_first"]}
        return right | {key: change(run) for key, change in changes.items()}

    return answer


_SORTER_ARGS = _LazyArgs(lambda: ("same", *_sorter_lab()[:2]))


_E_10_2 = _smoothed(1 - _EPS_10_2 + _EPS_10_2 / 4, _EPS_10_2 / 4)
_KV_BYTES = 2 * 24 * 1024 * 1024 * 4 * 2

MISTAKES: dict[str, list[Mistake]] = {
    "10.1": [
        Mistake("inputs and targets swapped", lambda: (_RIGHT_SHIFT[1], _RIGHT_SHIFT[0]),
                "swapped"),
        Mistake("no start or end token", lambda: (SENTENCE[1:-1], SENTENCE[1:-1]),
                "begins with <start>"),
        Mistake("no shift: targets = inputs", lambda: (SENTENCE, SENTENCE), "same list"),
        Mistake("no <end> target", lambda: (SENTENCE[:-2], SENTENCE[1:-1]), "must be <end>"),
        Mistake("the source sentence as the input",
                lambda: (["<start>", *SOURCE], SENTENCE[1:]), "not the source sentence"),
        Mistake("two strings", lambda: (" ".join(SENTENCE[:-1]), " ".join(SENTENCE[1:])),
                "not strings"),
    ],
    "10.2": [
        Mistake("plain cross-entropy", lambda: -math.log(0.7), "plain cross-entropy"),
        Mistake("ε spread over the wrong tokens only",
                lambda: 0.9 * -math.log(0.7) + 0.1 * math.log(10), "all n_vocab tokens"),
        Mistake("the target's own share forgotten", lambda: _smoothed(0.9, 0.025),
                "its own share"),
        Mistake("probabilities passed as logits", lambda: F.cross_entropy(
            torch.tensor([_P_10_2]), torch.tensor([0]), label_smoothing=0.1).item(),
            "takes logits"),
        Mistake("bits", lambda: _E_10_2 / math.log(2), "bits"),
        Mistake("ε times the sum, not the mean", lambda: 0.9 * -math.log(0.7)
                - 0.1 * sum(math.log(p) for p in _P_10_2), "*mean*"),
    ],
    "10.3": [
        Mistake("decay as 1/s", lambda: {"peak": (256 * 2000) ** -0.5, "quarter_step": 8000},
                "1/√s"),
        Mistake("forgot d^(-1/2)", lambda: {"peak": 2000**-0.5, "quarter_step": 32000},
                "d^(-1/2)"),
        Mistake("the original model's numbers",
                lambda: {"peak": (512 * 4000) ** -0.5, "quarter_step": 32000},
                "original model"),
        Mistake("the warm-up side's quarter",
                lambda: {"peak": (256 * 2000) ** -0.5, "quarter_step": 500}, "rising side"),
        Mistake("the step right after the peak",
                lambda: {"peak": (256 * 2000) ** -0.5, "quarter_step": 2001}, "peak itself"),
        Mistake("warm-up branch without its s",
                lambda: {"peak": 256**-0.5 * 2000**-1.5, "quarter_step": 32000},
                "without its factor s"),
        Mistake("steps counted from the end of the warm-up",
                lambda: {"peak": (256 * 2000) ** -0.5, "quarter_step": 34000},
                "start of training"),
    ],
    "10.9": [
        Mistake("lower and higher swapped",
                _beam_answer(lower=lambda c: c["higher"], higher=lambda c: c["lower"]),
                '"higher" counts', _BEAM_ARGS),
        Mistake("ties counted as lower",
                _beam_answer(lower=lambda c: tuple(a + b for a, b in zip(c["lower"], c["ties"]))),
                "counted the ties", _BEAM_ARGS),
        Mistake("width 2's second hypothesis compared",
                _beam_answer(lower=lambda c: c["second_lower"],
                             higher=lambda c: c["second_higher"]), "second hypothesis",
                _BEAM_ARGS),
        Mistake("fractions of the prompts",
                _beam_answer(lower=lambda c: tuple(x / 50 for x in c["lower"]),
                             higher=lambda c: tuple(x / 50 for x in c["higher"])),
                "not fractions", _BEAM_ARGS),
        Mistake("the lengths in the wrong order",
                _beam_answer(lower=lambda c: c["lower"][::-1], higher=lambda c: c["higher"][::-1]),
                "wrong order", _BEAM_ARGS),
        Mistake("one number per key", _beam_answer(lower=lambda c: sum(c["lower"])),
                "give 2 values", _BEAM_ARGS),
        Mistake("a prediction that is not one of the options", _beam_answer(),
                "write the prediction as", _LazyArgs(lambda: ("never", *_beam_lab()[:2]))),
    ],
    "10.10": [
        Mistake("the two modes swapped",
                _sorter_answer(forced=lambda r: r["free"], free=lambda r: r["forced"]),
                "free-running error rates", _SORTER_ARGS),
        Mistake("teacher-forced outputs scored against target_in",
                _sorter_answer(forced=lambda r: r["forced_unshifted"]), "target_in",
                _SORTER_ARGS),
        Mistake("accuracies, not error rates", _sorter_answer(free=lambda r: 1 - r["free"]),
                "accuracies", _SORTER_ARGS),
        Mistake("free-running scored shift-tolerantly",
                _sorter_answer(free=lambda r: r["free_tolerant"]), "shift-tolerant",
                _SORTER_ARGS),
        Mistake("free-running outputs shifted by the start token",
                _sorter_answer(free=lambda r: r["free_with_bos"]), "shifted by one",
                _SORTER_ARGS),
        Mistake("the share of strings, not their number",
                _sorter_answer(same_first=lambda r: r["same_first"] / r["strings"]),
                "not a fraction", _SORTER_ARGS),
        Mistake("strings whose outputs agree everywhere",
                _sorter_answer(same_first=lambda r: r["outputs_agree"]),
                "agree at every position", _SORTER_ARGS),
        Mistake("a prediction that is not one of the options", _sorter_answer(),
                "write the prediction as", _LazyArgs(lambda: ("yes", *_sorter_lab()[:2]))),
    ],
    "10.8": [
        Mistake("a prediction that is not one of the options",
                lambda: {"tau": _half_temperature(), "entropy": _entropy(_half_temperature())},
                "write the prediction as", (1.5,)),
        Mistake("τ multiplies the logits", lambda: {"tau": 1 / _half_temperature(),
                                                     "entropy": _entropy(_half_temperature())},
                "temperature divides"),
        Mistake("entropy in bits", lambda: {"tau": _half_temperature(),
                                            "entropy": _entropy(_half_temperature()) / math.log(2)},
                "bits"),
        Mistake("entropy at τ = 1", lambda: {"tau": _half_temperature(), "entropy": _entropy(1.0)},
                "entropy at τ = 1"),
        Mistake("stopped at τ = 1", lambda: {"tau": 1.0, "entropy": _entropy(1.0)}, "at τ = 1"),
        Mistake("bisection not converged", lambda: {"tau": 1.5, "entropy": _entropy(1.5)},
                "above 1/2"),
        Mistake("only the top token's term", lambda: {"tau": _half_temperature(),
                                                      "entropy": math.log(2)},
                "sums −p ln p"),
        Mistake("the minus sign forgotten", lambda: {"tau": _half_temperature(),
                                                     "entropy": -_entropy(_half_temperature())},
                "never negative"),
    ],
    "10.4": [
        Mistake("temperature not applied", lambda: _top_k_no_temperature,
                "temperature was not applied"),
        Mistake("no top-k cut", lambda: _top_k_softmax_all, "whole vocabulary"),
        Mistake("τ multiplies the logits", lambda: _top_k_multiplied, "temperature divides"),
        Mistake("discarded logits set to 0", lambda: _top_k_zero_fill, "−∞ (not 0)"),
        Mistake("not renormalised", lambda: _top_k_not_renormalised, "renormalising"),
        Mistake("the k smallest logits", lambda: _top_k_smallest, "*smallest*"),
        Mistake("k + 1 tokens kept", lambda: _top_k_one_more, "k + 1 tokens"),
        Mistake("only the k kept probabilities", lambda: _top_k_only_kept,
                "whole vocabulary (10 entries)"),
        Mistake("exp without the maximum", lambda: _top_k_by_hand, "overflows"),
    ],
    "10.5": [
        Mistake("float32 bytes", lambda: 2 * 24 * 1024 * 1024 * 4 * 4, "2 bytes per number"),
        Mistake("one sequence", lambda: 2 * 24 * 1024 * 1024 * 2, "one sequence"),
        Mistake("one layer", lambda: 2 * 1024 * 1024 * 4 * 2, "every layer"),
        Mistake("numbers, not bytes", lambda: 2 * 24 * 1024 * 1024 * 4, "give bytes"),
        Mistake("keys only", lambda: 24 * 1024 * 1024 * 4 * 2, "keys *and* values"),
        Mistake("times the heads", lambda: 16 * _KV_BYTES, "16 heads"),
        Mistake("one head's width", lambda: _KV_BYTES // 16, "not one head's d_k"),
        Mistake("MiB", lambda: _KV_BYTES // 2**20, "MiB"),
        Mistake("a float count", lambda: float(_KV_BYTES), "float"),
        Mistake("layers and batch forgotten", lambda: _KV_BYTES // 96, "96 times too small"),
    ],
    "10.6": [
        Mistake("no 1/√d_k", lambda: _cached_unscaled, "√d_k"),
        Mistake("attends before appending", lambda: _cached_without_new, "attend to itself"),
        Mistake("softmax over an axis of size 1",
                lambda: _cached_step_with(lambda s, d: torch.ones_like(s)), "axis of size 1"),
        Mistake("scaled by the number of keys",
                lambda: _cached_step_with(lambda s, d: torch.softmax(s / math.sqrt(len(s)), 0)),
                "number of keys"),
        Mistake("exp without the maximum", lambda: _cached_step_with(
            lambda s, d: torch.exp(s / math.sqrt(d)) / torch.exp(s / math.sqrt(d)).sum()),
            "overflows"),
        Mistake("the new key in the value cache", lambda: _cached_step_with(
            lambda s, d: torch.softmax(s / math.sqrt(d), 0),
            value_cache=lambda c, k, v: torch.cat([c, k[None]])), "value cache got the new key"),
    ],
    "10.7": [
        Mistake("counts not clipped", lambda: _precision_unclipped, "clip"),
        Mistake("clipped by the sum over references", lambda: _precision_summed, "maximum"),
        Mistake("divided by the reference's n-grams", lambda: _precision_reference_total,
                "denominator"),
        Mistake("the best reference as a whole", lambda: _precision_best_reference,
                "maximum per n-gram"),
        Mistake("distinct n-grams (a set)", lambda: _precision_distinct, "Counter"),
        Mistake("the window one short", lambda: _precision_short_window, "m − n + 1"),
    ],
}
