"""Checkers for chapter 10, *Training and generation*.

Expected values come from closed forms and from PyTorch itself (``F.cross_entropy`` with
``label_smoothing``, ``F.scaled_dot_product_attention``), not from the ``tformer`` code the
chapter studies.
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
    to_array,
)

SENTENCE = ["<start>", "ein", "kleiner", "hund", "<end>"]


@exercise("10.1", "Decoder inputs and targets")
def ex1(answer) -> None:
    """``answer``: ``(inputs, targets)``, two lists of tokens for the target sentence
    ``ein kleiner hund`` with ``<start>`` and ``<end>``."""
    if not isinstance(answer, Sequence) or isinstance(answer, str) or len(answer) != 2:
        raise Wrong("answer should be a pair (inputs, targets) of two lists of tokens")
    if not all(isinstance(part, Sequence) and not isinstance(part, str) for part in answer):
        raise Wrong("inputs and targets should each be a list of tokens such as ['<start>', ...]")
    inputs, targets = (list(part) for part in answer)
    if not all(isinstance(token, str) for token in (*inputs, *targets)):
        raise Wrong("every token should be a string such as '<start>' or 'hund'")
    expected_inputs, expected_targets = SENTENCE[:-1], SENTENCE[1:]
    if inputs == expected_targets and targets == expected_inputs:
        raise Wrong("inputs and targets are swapped: the input starts with <start>")
    if inputs == SENTENCE[1:-1] or targets == SENTENCE[1:-1]:
        raise Wrong("the input begins with <start>, and the last target is <end>")
    if len(inputs) != len(targets):
        raise Wrong(f"inputs and targets need the same length (one target per input position); "
                    f"got {len(inputs)} and {len(targets)}")
    if inputs != expected_inputs:
        raise Wrong(f"the inputs {inputs} are not right: they are the sentence shifted right")
    if targets != expected_targets:
        raise Wrong(f"the targets {targets} are not right: each is the token after its input")


@exercise("10.2", "A label-smoothed loss by hand")
def ex2(answer) -> None:
    """``answer``: the label-smoothed cross-entropy (ε = 0.1) of probabilities
    (0.7, 0.1, 0.1, 0.1) with target 0."""
    probabilities = torch.tensor([[0.7, 0.1, 0.1, 0.1]], dtype=torch.float64)
    target = torch.tensor([0])
    logits = probabilities.log()  # softmax(log p) = p
    expected = F.cross_entropy(logits, target, label_smoothing=0.1).item()
    plain = F.cross_entropy(logits, target).item()
    answer = as_number(answer, "the smoothed loss")
    if abs(answer - plain) < 1e-3:
        raise Wrong("that is the plain cross-entropy −ln 0.7; spread ε = 0.1 over all 4 tokens")
    others_only = 0.9 * plain + 0.1 * math.log(10)  # ε spread over the 3 wrong tokens only
    if abs(answer - others_only) < 1e-3:
        raise Wrong("PyTorch's convention spreads ε over all n_vocab tokens, the target included")
    expect_number(answer, expected, name="the smoothed loss", rel_tol=1e-4, rounding_tol=5e-3)


@exercise("10.3", "The original schedule on a smaller model")
def ex3(answer) -> None:
    """``answer``: dict ``{"peak": float, "quarter_step": int}`` for d = 256, warm-up 2,000."""
    if not isinstance(answer, Mapping) or not {"peak", "quarter_step"} <= set(answer):
        raise Wrong('answer should be a dict {"peak": ..., "quarter_step": ...}')
    d, warmup = 256, 2000
    peak = (d * warmup) ** -0.5
    given_peak = as_number(answer["peak"], "the peak learning rate")
    if math.isclose(given_peak, warmup**-0.5, rel_tol=1e-3):
        raise Wrong("the schedule is multiplied by d^(-1/2): the peak is (d·w)^(-1/2)")
    if math.isclose(given_peak, (512 * 4000) ** -0.5, rel_tol=1e-3):
        raise Wrong("that is the peak of the original model (d = 512, w = 4,000); "
                    "use d = 256, w = 2,000")
    expect_number(given_peak, peak, name="the peak learning rate", rel_tol=1e-3)
    step = as_number(answer["quarter_step"], "the step where the rate is a quarter")
    if step == 4 * warmup:
        raise Wrong("after the peak the rate falls as 1/√s, not 1/s: at 4w it has only halved; "
                    "a quarter needs 16× the warm-up step")
    if step == warmup // 4:
        raise Wrong("that step is on the rising side: the warm-up passes a quarter of the peak at "
                    "s = w/4; the question asks for the step s > w where the decay reaches it")
    if step in (warmup, warmup + 1):
        raise Wrong("that is the peak itself (or the step right after it); the rate is a quarter "
                    "of the peak much later, where (d·s)^(-1/2) = (d·w)^(-1/2) / 4")
    expect_number(step, 16 * warmup, name="the step where the rate is a quarter")


def _reference_top_k(logits: torch.Tensor, k: int, temperature: float) -> torch.Tensor:
    order = torch.sort(logits, descending=True).indices
    keep = torch.zeros_like(logits, dtype=torch.bool)
    keep[order[:k]] = True
    weights = torch.exp((logits - logits.max()) / temperature) * keep
    return weights / weights.sum()


@exercise("10.4", "Top-k sampling with temperature")
def ex4(answer) -> None:
    """``answer``: ``top_k_probabilities(logits (n_vocab,), k, temperature)`` → ``(n_vocab,)``."""
    generator = torch.Generator().manual_seed(4)
    for k, temperature in ((3, 1.0), (1, 0.7), (5, 2.0), (10, 0.5)):
        logits = torch.randn(10, generator=generator, dtype=torch.float64) * 2
        expected = _reference_top_k(logits, k, temperature)
        result = call_reader(answer, logits.clone(), k, temperature,
                             name="your top_k_probabilities")
        name = f"your probabilities (k = {k}, τ = {temperature})"
        probabilities = torch.from_numpy(to_array(result, name))
        if probabilities.shape == expected.shape:
            no_temp = _reference_top_k(logits, k, 1.0)
            if k > 1 and temperature != 1.0 and torch.allclose(probabilities, no_temp, atol=1e-6):
                raise Wrong(f"(k = {k}, τ = {temperature}): the temperature was not applied")
            if k < 10 and (probabilities[expected == 0] > 1e-9).any():
                raise Wrong(f"(k = {k}): tokens outside the top k must get probability 0")
        expect_tensor(probabilities, expected, name=name, axes=("vocabulary",), atol=1e-6)


_KV = dict(layers=24, d=1024, tokens=1024, batch=4, bytes=2)


@exercise("10.5", "The KV cache of GPT-2 medium in float16")
def ex5(answer) -> None:
    """``answer``: bytes of the float16 KV cache of GPT-2 medium (24 layers, d = 1024) for a
    batch of 4 sequences of 1,024 tokens."""
    k = _KV
    numbers = 2 * k["layers"] * k["d"] * k["tokens"] * k["batch"]
    expected = numbers * k["bytes"]
    answer = as_number(answer, "the cache size in bytes")
    if answer == expected // 2:
        raise Wrong("half the right size: the cache holds keys *and* values, and each float16 "
                    "number takes 2 bytes — give bytes")
    if answer == 2 * expected:
        raise Wrong("float16 takes 2 bytes per number, not 4")
    if answer == expected // k["batch"]:
        raise Wrong("that is one sequence; the batch has 4")
    if answer == expected // k["layers"]:
        raise Wrong("every layer has its own cache")
    expect_number(answer, expected, name="the cache size in bytes")


@exercise("10.6", "One cached attention step")
def ex6(answer) -> None:
    """``answer``: ``cached_step(query, new_key, new_value, cached_keys, cached_values)``.

    ``query``, ``new_key``, ``new_value``: 1-D, ``(d_k,)``; caches ``(t, d_k)``. Must return
    ``(output (d_k,), keys (t + 1, d_k), values (t + 1, d_k))``.
    """
    generator = torch.Generator().manual_seed(6)
    n_positions, d_k = 7, 4
    queries, keys, values = (
        torch.randn(n_positions, d_k, generator=generator, dtype=torch.float64) for _ in range(3)
    )
    full = F.scaled_dot_product_attention(queries[None], keys[None], values[None],
                                          is_causal=True)[0]
    cached_keys, cached_values = keys[:1], values[:1]
    outputs = [values[0]]
    for t in range(1, n_positions):
        result = call_reader(answer, queries[t].clone(), keys[t].clone(), values[t].clone(),
                             cached_keys.clone(), cached_values.clone(), name="your cached_step")
        if not isinstance(result, tuple | list) or len(result) != 3:
            raise Wrong("cached_step should return (output, keys, values)")
        output, cached_keys, cached_values = result
        expect_tensor(cached_keys, keys[: t + 1], name=f"the keys after step {t}",
                      axes=("positions", "features"))
        expect_tensor(cached_values, values[: t + 1], name=f"the values after step {t}",
                      axes=("positions", "features"))
        cached_keys = torch.from_numpy(to_array(cached_keys))
        cached_values = torch.from_numpy(to_array(cached_values))
        outputs.append(torch.from_numpy(to_array(output, f"the output at step {t}")))
        if outputs[-1].shape == full[t].shape:
            unscaled = torch.softmax(keys[: t + 1] @ queries[t], 0) @ values[: t + 1]
            if torch.allclose(outputs[-1], unscaled, atol=1e-6) and d_k != 1:
                raise Wrong("divide the scores by √d_k")
            without_new = torch.softmax(keys[:t] @ queries[t] / 2, 0) @ values[:t]
            if torch.allclose(outputs[-1], without_new, atol=1e-6):
                raise Wrong("the new token must attend to itself too: append before attending")
        expect_tensor(output, full[t], name=f"the output at step {t}", axes=("features",),
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


@exercise("10.7", "BLEU's modified n-gram precision")
def ex7(answer) -> None:
    """``answer``: ``modified_precision(candidate, references, n)`` → ``(clipped, total)``."""
    for candidate, refs, n in _precision_cases():
        expected = _reference_precision(candidate, refs, n)
        result = call_reader(answer, list(candidate), [list(r) for r in refs], n,
                             name="your modified_precision")
        if not isinstance(result, tuple | list) or len(result) != 2:
            raise Wrong("modified_precision should return a pair (clipped, total)")
        clipped = as_number(result[0], "the clipped count")
        total = as_number(result[1], "the total")
        setting = f"(candidate {' '.join(candidate)!r}, n = {n})"
        if (clipped, total) == expected:
            continue
        unclipped = sum(
            1 for i in range(len(candidate) - n + 1)
            if any(tuple(candidate[i : i + n]) == tuple(r[j : j + n])
                   for r in refs for j in range(len(r) - n + 1))
        )
        grams = Counter(tuple(candidate[i : i + n]) for i in range(len(candidate) - n + 1))
        summed = sum(
            min(c, sum(sum(tuple(r[j : j + n]) == g for j in range(len(r) - n + 1))
                       for r in refs))
            for g, c in grams.items()
        )
        if total == expected[1] and clipped == unclipped != expected[0]:
            raise Wrong(f"{setting}: clip each n-gram's count by its count in the reference")
        if total == expected[1] and clipped == summed != expected[0]:
            raise Wrong(f"{setting}: clip by the reference where the n-gram is most frequent "
                        "(the maximum over references), not the sum over references")
        if clipped == expected[0] and total != expected[1]:
            raise Wrong(f"{setting}: the denominator is the number of the candidate's n-grams, "
                        f"{expected[1]}")
        raise Wrong(f"{setting}: expected {expected}, got ({clipped:g}, {total:g})")


def _precision_unclipped(candidate, references, n):
    grams = [tuple(candidate[i : i + n]) for i in range(len(candidate) - n + 1)]
    ref_grams = {tuple(r[i : i + n]) for r in references for i in range(len(r) - n + 1)}
    return sum(g in ref_grams for g in grams), len(grams)


def _precision_summed(candidate, references, n):
    grams = Counter(tuple(candidate[i : i + n]) for i in range(len(candidate) - n + 1))
    refs = Counter()
    for r in references:
        refs.update(tuple(r[i : i + n]) for i in range(len(r) - n + 1))
    return sum(min(c, refs[g]) for g, c in grams.items()), sum(grams.values())


def _precision_reference_total(candidate, references, n):
    clipped, _ = _reference_precision(candidate, references, n)
    return clipped, max(len(r) - n + 1 for r in references)


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
    if math.isclose(value, -math.log(0.5), rel_tol=2e-3):
        raise Wrong("−ln(1/2) counts only the top token's term; the entropy sums −p ln p over all "
                    "six tokens")
    expect_number(value, entropy, name="the entropy (nats)", rel_tol=2e-3,
                  rounding_tol=0.01)


def _top_k_softmax_all(logits, k, temperature):
    return torch.softmax(logits / temperature, -1)


_RIGHT_SHIFT = (SENTENCE[:-1], SENTENCE[1:])

MISTAKES: dict[str, list[Mistake]] = {
    "10.1": [
        Mistake("inputs and targets swapped", lambda: (_RIGHT_SHIFT[1], _RIGHT_SHIFT[0]),
                "swapped"),
        Mistake("no start or end token", lambda: (SENTENCE[1:-1], SENTENCE[1:-1]),
                "begins with <start>"),
    ],
    "10.2": [
        Mistake("plain cross-entropy", lambda: -math.log(0.7), "plain cross-entropy"),
        Mistake("ε spread over the wrong tokens only",
                lambda: 0.9 * -math.log(0.7) + 0.1 * math.log(10), "all n_vocab tokens"),
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
    ],
    "10.4": [
        Mistake("temperature not applied", lambda: _top_k_no_temperature,
                "temperature was not applied"),
        Mistake("no top-k cut", lambda: _top_k_softmax_all, "must get probability 0"),
    ],
    "10.5": [
        Mistake("float32 bytes", lambda: 2 * 24 * 1024 * 1024 * 4 * 4, "2 bytes per number"),
        Mistake("one sequence", lambda: 2 * 24 * 1024 * 1024 * 2, "one sequence"),
        Mistake("one layer", lambda: 2 * 1024 * 1024 * 4 * 2, "every layer"),
        Mistake("numbers, not bytes", lambda: 2 * 24 * 1024 * 1024 * 4, "give bytes"),
        Mistake("keys only", lambda: 24 * 1024 * 1024 * 4 * 2, "keys *and* values"),
    ],
    "10.6": [
        Mistake("no 1/√d_k", lambda: _cached_unscaled, "√d_k"),
        Mistake("attends before appending", lambda: _cached_without_new, "attend to itself"),
    ],
    "10.7": [
        Mistake("counts not clipped", lambda: _precision_unclipped, "clip"),
        Mistake("clipped by the sum over references", lambda: _precision_summed, "maximum"),
        Mistake("divided by the reference's n-grams", lambda: _precision_reference_total,
                "denominator"),
    ],
}
