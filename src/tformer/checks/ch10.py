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
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence

import torch
from torch.nn import functional as F

from tformer.checks.core import (
    Mistake,
    Wrong,
    as_number,
    call_reader,
    exercise,
    expect_number,
    expect_tensor,
    shown,
    to_array,
)

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


@exercise("10.8", "Predict, then run: the temperature of a coin flip")
def ex8(answer) -> None:
    """``answer``: dict ``{"tau": float, "entropy": float}`` for the logits
    :data:`TEMPERATURE_LOGITS`: the τ at which the top token's probability is 1/2, and the
    entropy (nats) of softmax(z / τ) there."""
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
    "10.8": [
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
