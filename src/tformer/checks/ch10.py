"""Checkers for chapter 10, *Training and generation*.

Expected values come from closed forms and from PyTorch itself (``F.cross_entropy`` with
``label_smoothing``, ``F.scaled_dot_product_attention``), not from the ``tformer`` code the
chapter studies.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import torch
from torch.nn import functional as F

from tformer.checks.core import (
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


@exercise("10.3", "The original learning-rate schedule")
def ex3(answer) -> None:
    """``answer``: dict ``{"peak": float, "half_step": int}`` for d = 512, warm-up 4,000."""
    if not isinstance(answer, Mapping) or not {"peak", "half_step"} <= set(answer):
        raise Wrong('answer should be a dict {"peak": ..., "half_step": ...}')
    d, warmup = 512, 4000
    peak = (d * warmup) ** -0.5
    expect_number(answer["peak"], peak, name="the peak learning rate", rel_tol=1e-3)
    half_step = as_number(answer["half_step"], "the step where the rate has halved")
    if half_step == 2 * warmup:
        raise Wrong("after the peak the rate falls as 1/√s, not 1/s: halving needs 4× the step")
    if half_step == warmup / 2:
        raise Wrong("that is the half-way point of the warm-up; give the step *after* the peak")
    expect_number(half_step, 4 * warmup, name="the step where the rate has halved")


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


@exercise("10.5", "The KV cache of GPT-2 small")
def ex5(answer) -> None:
    """``answer``: bytes of the float32 KV cache of GPT-2 small (12 layers, d = 768) for a
    batch of 8 sequences of 1,024 tokens."""
    layers, d, tokens, batch = 12, 768, 1024, 8
    expected = 2 * layers * d * tokens * batch * 4
    answer = as_number(answer, "the cache size in bytes")
    if answer == expected // 2:
        raise Wrong("the cache holds keys *and* values")
    if answer == expected // 4:
        raise Wrong("that is a number of floats; give bytes (4 per float32)")
    if answer == expected // batch:
        raise Wrong("that is one sequence; the batch has 8")
    if answer == expected // layers:
        raise Wrong("every layer has its own cache")
    expect_number(answer, expected, name="the cache size in bytes")


@exercise("10.6", "One cached attention step")
def ex6(answer) -> None:
    """``answer``: ``cached_step(query, new_key, new_value, cached_keys, cached_values)``.

    ``query``, ``new_key``, ``new_value``: ``(d_k,)``; caches ``(t, d_k)``. Must return
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
