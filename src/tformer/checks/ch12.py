"""Checkers for chapter 12, *The induction-head lab*.

Expected values come from closed forms and from explicit Python loops over positions written
here — never from :mod:`tformer.interp`, the code under study. Where a checker needs the trained
model (exercises 12.5 and 12.6) it reads the attention weights through the model's ``record``
hook and scores them with its own loops. ``MISTAKES`` lists every exercise's typical mistakes
(``tests/test_mistakes.py`` feeds each one to its checker).

Before the generic comparison each checker runs the reader's function on every case and names
the typical wrong variant that reproduces all its results (the weight on the key itself or on
the next one, a mean over T or a sum, a T or L taken from outside the function, BOS forgotten;
another axis zeroed, the ablation inverted, a mean ablation; scores swapped between the roles,
the wrong query range or axes for the BOS share; token rows let into a by-hand head's score).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping

import numpy as np
import torch

from tformer.checks.core import (
    Mistake,
    NotAttempted,
    Wrong,
    as_number,
    call_reader,
    exercise,
    expect_number,
    to_array,
)

N_LAYERS, N_HEADS = 2, 2
"""The lab model's shape (``tformer.induction.LabSettings``), for answers checked without it."""


def _patterns(n_positions: int) -> dict[str, torch.Tensor]:
    """Hand-built attention patterns ``(T, T)`` (rows sum to 1; all but the last causal)."""
    T = n_positions
    generator = torch.Generator().manual_seed(12)
    random_scores = torch.randn(T, T, generator=generator)
    unmasked = torch.randn(T, T, generator=generator).softmax(dim=-1)
    random_scores = random_scores.masked_fill(torch.ones(T, T).triu(1).bool(), float("-inf"))
    previous = torch.zeros(T, T)
    previous[0, 0] = 1.0
    for t in range(1, T):
        previous[t, t - 1] = 1.0
    return {
        "a perfect previous-token head": previous,
        "a head attending to itself": torch.eye(T),
        "a uniform causal head": torch.tril(torch.ones(T, T)) / torch.arange(1, T + 1)[:, None],
        "a random causal head": random_scores.softmax(dim=-1),
        "a random head without a causal mask": unmasked,
    }


def _previous_by_loop(weights: torch.Tensor) -> float:
    T = weights.shape[-1]
    return sum(float(weights[t, t - 1]) for t in range(1, T)) / (T - 1)


def _induction_by_loop(weights: torch.Tensor, length: int) -> float:
    T = weights.shape[-1]
    return sum(float(weights[t, t - length + 1]) for t in range(length + 1, T)) / (T - length - 1)


def _scalar(value, name: str) -> float:
    array = to_array(value, name)
    if array.size != 1:
        raise Wrong(
            f"{name} should be one number for a (T, T) pattern, got shape {array.shape} — "
            "average over the query positions"
        )
    return float(array.reshape(()))


def _mean(values) -> float:
    values = list(values)
    return sum(values) / len(values) if values else math.nan


def _previous_variants(T_checked: int):
    """``(hint, score(weights))`` of the typical wrong previous-token scores."""
    variants = [
        ("you averaged over all T queries; position 0 has no previous token, so average over "
         "t = 1 … T − 1",
         lambda w: sum(float(w[t, t - 1]) for t in range(1, w.shape[-1])) / w.shape[-1]),
        ("you read weights[t − 1, t] (transposed: row = query, column = key), which is the "
         "weight on the *next* key; the weight of query t on key t − 1 is weights[t, t − 1]",
         lambda w: _mean(float(w[t - 1, t]) for t in range(1, w.shape[-1]))),
        ("you read weights[t, t], each query's weight on itself; the previous token is key "
         "t − 1: weights[t, t − 1]", lambda w: _mean(float(w[t, t]) for t in range(1, w.shape[-1]))),
        ("you averaged the diagonal weights[t, t], each query's weight on itself; the previous "
         "token is key t − 1: weights[t, t − 1]", lambda w: float(torch.diagonal(w).mean())),
        ("you summed the weights on key t − 1; the score is their mean over t = 1 … T − 1",
         lambda w: sum(float(w[t, t - 1]) for t in range(1, w.shape[-1]))),
    ]
    for other in range(2, T_checked):  # a T from outside the function (the notebook's T = 5)
        variants.append((
            f"your function used T = {other} whatever the size of the weights it is given: "
            "read T from weights.shape[-1]",
            lambda w, other=other: _mean(float(w[t, t - 1]) for t in range(1, other)),
        ))
    return variants


def _explained(values: list[float], variants, cases) -> str | None:
    """The hint of the first variant that reproduces every one of ``values`` on ``cases``."""
    for hint, variant in variants:
        try:
            if all(math.isclose(value, variant(*case), abs_tol=1e-5)
                   for value, case in zip(values, cases)):
                return hint
        except (IndexError, ZeroDivisionError, RuntimeError):
            continue
    return None


@exercise("12.1", "The previous-token score")
def ex1(answer) -> None:
    """``answer``: the reader's function ``previous_token_score(weights (T, T)) -> float``."""
    if not callable(answer):
        raise Wrong("answer should be your function previous_token_score (without calling it)")
    patterns = _patterns(9)
    results = [call_reader(answer, weights.clone(), name="previous_token_score")
               for weights in patterns.values()]
    values = [_scalar(result, "the score") for result in results]
    cases = [(weights,) for weights in patterns.values()]
    for (name, weights), value in zip(patterns.items(), values):
        expected = _previous_by_loop(weights)
        if math.isclose(value, expected, abs_tol=1e-5):
            continue
        hint = _explained(values, _previous_variants(9), cases)
        if hint is not None:
            raise Wrong(hint)
        if name == "a perfect previous-token head" and math.isclose(value, 0.0, abs_tol=1e-6):
            raise Wrong("a perfect previous-token head scores 0 with your function: you read "
                        "weights[t − 1, t] (transposed: row = query, column = key) or the "
                        "weight on the next key; the weight of key t − 1 is weights[t, t − 1]")
        raise Wrong(
            f"for {name} the score should be {expected:.4f}, got {value:.4f} — the weight "
            "of key t − 1 sits at weights[t, t − 1] (row = query, column = key)"
        )
    if isinstance(results[0], torch.Tensor | np.ndarray):
        raise Wrong("the value is right, but your function returns a tensor (or array), not the "
                    "Python float the statement asks for: return float(...) or .item()")


def _induction_pattern(T: int, length: int, offset: int) -> torch.Tensor:
    """Second-copy queries attend to key t − L + offset (1: induction, 0: the same token)."""
    weights = torch.eye(T)
    for t in range(length + 1, T):
        weights[t] = 0.0
        weights[t, t - length + offset] = 1.0
    return weights


def _induction_variants():
    """``(hint, score(weights, L))`` of the typical wrong induction scores."""

    def second_copy(w, length, key, queries=None):
        T = w.shape[-1]
        rows = range(length + 1, T) if queries is None else queries(length, T)
        return _mean(float(w[t, key(t, length)]) for t in rows)

    variants = [
        ("a head attending to t − L (the earlier copy of the *same* token) scored 1; the "
         "induction target is one position later, t − L + 1",
         lambda w, L: second_copy(w, L, lambda t, L: t - L)),
        ("your target key is t − L + 2, one too late: the token after the earlier occurrence "
         "is t − L + 1", lambda w, L: second_copy(w, L, lambda t, L: t - L + 2)),
        ("you started at t = L, the last token of the first copy, which has no earlier "
         "occurrence; the second copy's queries are t = L + 1 … 2L",
         lambda w, L: second_copy(w, L, lambda t, L: t - L + 1, lambda L, T: range(L, T))),
        ("you forgot BOS: the sequence is [BOS] + r + r, T = 2L + 1, so the second copy's "
         "queries are t = L + 1 … 2L, not L … 2L − 1",
         lambda w, L: second_copy(w, L, lambda t, L: t - L + 1, lambda L, T: range(L, 2 * L))),
        ("you summed the L target weights; the score is their mean (a perfect head scores 1)",
         lambda w, L: sum(float(w[t, t - L + 1]) for t in range(L + 1, w.shape[-1]))),
        ("you read weights[t − L + 1, t] (row = query, column = key): the weight of query t "
         "on key t − L + 1 is weights[t, t − L + 1]",
         lambda w, L: _mean(float(w[t - L + 1, t]) for t in range(L + 1, w.shape[-1]))),
        ("divide by the L queries of the second copy, not by all T positions",
         lambda w, L: sum(float(w[t, t - L + 1]) for t in range(L + 1, w.shape[-1]))
         / w.shape[-1]),
    ]
    for fixed in range(2, 9):  # an L from outside the function
        variants.append((
            f"your function used L = {fixed} whatever L it is given: use its argument L",
            lambda w, L, fixed=fixed: second_copy(w, fixed, lambda t, L: t - L + 1),
        ))
    return variants


INDUCTION_LENGTHS = (4, 6)
"""Exercise 12.2 scores its patterns at two segment lengths, so that an ignored L shows."""


@exercise("12.2", "The induction score")
def ex2(answer) -> None:
    """``answer``: the reader's function ``induction_score(weights (T, T), length) -> float``."""
    if not callable(answer):
        raise Wrong("answer should be your function induction_score (without calling it)")
    cases, names = [], []
    for length in INDUCTION_LENGTHS:
        T = 2 * length + 1
        patterns = {"a perfect induction head": _induction_pattern(T, length, 1),
                    "a head attending to the earlier copy of the same token":
                        _induction_pattern(T, length, 0)} | _patterns(T)
        for name, weights in patterns.items():
            cases.append((weights, length))
            names.append(f"{name}, segments of length L = {length}")
    values = [_scalar(call_reader(answer, weights.clone(), length, name="induction_score"),
                      "the score") for weights, length in cases]
    for name, (weights, length), value in zip(names, cases, values):
        expected = _induction_by_loop(weights, length)
        if math.isclose(value, expected, abs_tol=1e-5):
            continue
        hint = _explained(values, _induction_variants(), cases)
        if hint is not None:
            raise Wrong(hint)
        if name.startswith("a perfect induction head") and math.isclose(value, 0.0, abs_tol=1e-6):
            raise Wrong("a perfect induction head scores 0 with your function: the target "
                        "key is t − L + 1, the token *after* the earlier occurrence")
        raise Wrong(f"for {name} the score should be {expected:.4f}, got {value:.4f}")


@exercise("12.3", "A uniform head's induction score, by hand")
def ex3(answer) -> None:
    """``answer``: induction score of the uniform causal head for L = 4 (T = 9), a number."""
    expected = sum(1 / (t + 1) for t in range(5, 9)) / 4
    value = as_number(answer, "the induction score")
    fractions = [1 / (t + 1) for t in range(5, 9)]
    variants = [
        (0.25, "0.25 = 1/L is not it: a uniform head at query t spreads its weight over t + 1 "
               "keys (positions 0 … t)"),
        (sum(1 / t for t in range(5, 9)) / 4,
         "you used weight 1/t: query t sees t + 1 keys (positions 0 … t, BOS and itself "
         "included), so each gets 1/(t + 1)"),
        (sum(fractions), "that is the sum of the four fractions; the score is their mean — "
                         "divide by 4"),
        (1 / 9, "1/9 ignores the causal mask: query t sees only the keys 0 … t, so each gets "
                "1/(t + 1), not 1/T"),
        (4 / sum(range(6, 10)), "that adds numerators and denominators, 4/(6 + 7 + 8 + 9); "
                                "the mean of the fractions is (1/6 + 1/7 + 1/8 + 1/9) / 4"),
        (sum(1 / (t + 1) for t in range(4, 9)) / 5,
         "you included query 4, the last token of the first copy; the second copy's queries "
         "are t = 5 … 8"),
    ]
    if math.isfinite(value) and not math.isclose(value, expected, abs_tol=5e-4):
        for wrong, hint in variants:
            if math.isclose(value, wrong, abs_tol=5e-4):
                raise Wrong(hint)
    expect_number(answer, expected, name="the induction score", abs_tol=5e-4, rounding_tol=5e-3)


AXIS_NAMES = {0: "batch item", 2: "position", 3: "feature"}
"""What index ``head`` picks on each axis of the hook's ``(B, h, T, d_k)`` input but the heads'."""


def _ablation_hint(result: torch.Tensor, original: torch.Tensor, head: int) -> str | None:
    """What a wrong hook did, when it matches a typical mistake."""
    if torch.equal(result, original):
        return ("your hook returns its input unchanged: zero head `head` of a clone and return "
                "that clone")
    for axis, label in AXIS_NAMES.items():
        zeroed = original.clone()
        zeroed.select(axis, head).zero_()
        if torch.equal(result, zeroed):
            return (f"you zeroed {label} {head}, not head {head}: the head axis is dim 1 of "
                    "(B, h, T, d_k) — outputs[:, head] = 0")
    kept = torch.zeros_like(original)
    kept[:, head] = original[:, head]
    if torch.equal(result, kept):
        return (f"you kept head {head} and zeroed all the others; zero-ablation zeroes head "
                f"{head} only")
    others = [h for h in range(original.shape[1]) if h != head]
    if torch.equal(result[:, others], original[:, others]):
        part = original[:, head]
        for dims in ((0, 1), (0,), (1,), (0, 1, 2), (1, 2), (0, 2), (2,)):
            mean = part.mean(dim=dims, keepdim=True).expand_as(part)
            if torch.allclose(result[:, head], mean, atol=1e-6):
                return ("that is a mean ablation (the head's output replaced by its mean); "
                        f"zero-ablation sets head {head}'s outputs to 0")
    for other in others:
        zeroed = original.clone()
        zeroed[:, other] = 0.0
        if torch.equal(result, zeroed):
            return (f"you zeroed head {other} when asked for head {head}: index the head axis "
                    "with the argument head (heads are counted from 0)")
    return None


@exercise("12.4", "A zero-ablation hook")
def ex4(answer) -> None:
    """``answer``: the reader's ``zero_ablation(head) -> hook``; hook maps (B, h, T, d_k) tensors.

    The hook is built for heads 1, 0 and 2 of a 3-head input."""
    if not callable(answer):
        raise Wrong("answer should be your function zero_ablation (without calling it)")
    generator = torch.Generator().manual_seed(4)
    for head in (1, 0, 2):
        hook = call_reader(answer, head, name="zero_ablation")
        if not callable(hook):
            raise Wrong("zero_ablation(head) should return a function (the hook), got "
                        f"{type(hook).__name__}")
        outputs = torch.randn(2, 3, 5, 4, generator=generator)
        original = outputs.clone()
        result = call_reader(hook, outputs, name="the hook")
        if not isinstance(result, torch.Tensor) or result.shape != original.shape:
            raise Wrong(f"the hook must return a tensor of the same shape {tuple(original.shape)}")
        if not torch.equal(outputs, original):
            raise Wrong("the hook changed its input in place; clone it first, so the recorded "
                        "outputs and any other hook still see the original")
        right = original.clone()
        right[:, head] = 0.0
        if torch.equal(result, right):
            continue
        hint = _ablation_hint(result, original, head)
        if hint is not None:
            raise Wrong(hint)
        if result[:, head].abs().max() != 0:
            raise Wrong(f"head {head}'s outputs should be all zeros")
        raise Wrong("the other heads' outputs must pass through unchanged")


@torch.no_grad()
def _own_scores(model, tokens: torch.Tensor, length: int) -> tuple[torch.Tensor, torch.Tensor]:
    layers = [block.attn for block in model.blocks]
    for layer in layers:
        layer.record = True
    try:
        model(tokens)
        weights = [layer.last_weights.mean(dim=0) for layer in layers]  # (h, T, T) per layer
    finally:
        for layer in layers:
            layer.record = False
    previous = torch.tensor([[_previous_by_loop(w) for w in layer] for layer in weights])
    induction = torch.tensor([[_induction_by_loop(w, length) for w in layer] for layer in weights])
    return previous, induction


def _as_head(value, name: str) -> tuple[int, int]:
    if (
        isinstance(value, tuple | list)
        and len(value) == 2
        and all(isinstance(i, int) and not isinstance(i, bool) for i in value)
    ):
        head = int(value[0]), int(value[1])
        if 0 <= head[0] < N_LAYERS and head[1] > N_HEADS:
            raise Wrong(f"{name} {head} does not exist: the lab model has {N_HEADS} heads per "
                        "layer — a head index that large is a batch index: last_weights is "
                        "(B, h, T, T), so average over the batch (dim=0), then loop over the "
                        "heads")
        if not (0 <= head[0] < N_LAYERS and 0 <= head[1] < N_HEADS):
            raise Wrong(f"{name} {head} does not exist: the lab model has {N_LAYERS} layers of "
                        f"{N_HEADS} heads, both counted from 0")
        return head
    raise Wrong(f"{name} should be a (layer, head) pair of integers such as (0, 1), got {value!r}")


ROLE_THRESHOLD = 0.5
"""A head does a job when most of its attention goes where the job predicts (as in
``tformer.interp.classify_heads``)."""

CHECK_LENGTHS = (10, 20)
"""Exercise 12.5 scores heads at two segment lengths: a head that works by content works at both."""


@exercise("12.5", "Which head, which layer?")
def ex5(answer, model=None) -> None:
    """``answer``: ``{"previous-token": (layer, head), "induction": (layer, head)}``.

    With ``model`` the heads are checked against the trained model's own attention on fresh
    sequences with L = 10 and L = 20 (distinct tokens), scored here position by position; a
    head's score is its lower score over the two lengths, and any head scoring above
    ``ROLE_THRESHOLD`` in its role passes (heads are interchangeable).
    """
    if not isinstance(answer, Mapping) or set(answer) != {"previous-token", "induction"}:
        raise Wrong('answer should be a dict {"previous-token": (layer, head), '
                    '"induction": (layer, head)}')
    previous_head = _as_head(answer["previous-token"], "the previous-token head")
    induction_head = _as_head(answer["induction"], "the induction head")
    if previous_head == induction_head:
        raise Wrong("you named one head for both roles; the circuit needs two different heads "
                    "(if every head got the same score, e.g. 0, max() just returned the first "
                    "one: check that you read weights[t, t − 1] with row = query)")
    previous = induction = None
    if model is not None:
        from tformer.data import fixed_length_batch

        scores = []
        for length in CHECK_LENGTHS:
            tokens = fixed_length_batch(model.config.n_vocab, 64, length,
                                        seed=500 + length).tokens
            scores.append(_own_scores(model, tokens.to(next(model.parameters()).device), length))
        previous = torch.minimum(scores[0][0], scores[1][0])
        induction = torch.minimum(scores[0][1], scores[1][1])
    if previous_head[0] >= induction_head[0]:
        if previous is not None and float(previous[induction_head]) > ROLE_THRESHOLD and \
                float(induction[previous_head]) > ROLE_THRESHOLD:
            raise Wrong(f"the roles are swapped: {induction_head} is the previous-token head and "
                        f"{previous_head} the induction head — did you swap the two scores? The "
                        "induction head reads what the previous-token head wrote, so it sits in "
                        "the later layer")
        raise Wrong("an induction head that finds the earlier occurrence by content reads what "
                    "the previous-token head wrote, so it must sit in a later layer (a head "
                    "that attends a fixed offset back by position can sit in any layer — but "
                    "it works at one length only)")
    if model is None:
        return
    # Heads are interchangeable: any head that does the job passes (a trained model may have
    # two induction heads), judged by the chapter's threshold, not by its index.
    for kind, head, score in (("previous-token", previous_head, previous),
                              ("induction", induction_head, induction)):
        if float(score[head]) > ROLE_THRESHOLD:
            continue
        best = divmod(int(score.argmax()), score.shape[1])
        hint = (f"head {best} scores {float(score[best]):.2f} in this role" if best != head
                else "no head of this model does the job — did its circuit form?")
        value = float(score[head])
        if kind == "previous-token":
            raise Wrong(f"head {head} has previous-token score {value:.2f} (lower of L = 10 and "
                        f"20), not above {ROLE_THRESHOLD}: it is not a previous-token head; {hint}")
        raise Wrong(f"head {head} has induction score {value:.2f} (lower of L = 10 and 20), not "
                    f"above {ROLE_THRESHOLD}: it is not an induction head; {hint}")


def _bos_share(weights: torch.Tensor, queries: range) -> float:
    """Mean weight on key 0 over ``queries`` and the batch; ``weights`` ``(B, T, T)``."""
    return sum(float(weights[:, t, 0].mean()) for t in queries) / len(queries)


@exercise("12.6", "Where does an induction head look when there is nothing to find?")
def ex6(answer, model=None, tokens=None, length: int = 16) -> None:
    """``answer``: an induction head's mean attention on BOS over the first-copy queries.

    ``tokens`` ``(B, 2L + 1)`` repeated sequences; the first-copy queries ``t = 1 … L`` hold
    tokens that have not occurred before. Any head whose induction score on ``tokens`` (scored
    here) exceeds ``ROLE_THRESHOLD`` counts as an induction head (the highest-scoring one if
    none does); the expected values are computed here with a loop over positions.
    """
    value = _scalar(answer, "the share of attention on BOS")

    def out_of_range() -> None:
        if not 0.0 <= value <= 1.0:
            if 1.0 < value <= 100.0:
                raise Wrong(f"{value:g} looks like a percentage; give the share as a fraction "
                            "between 0 and 1")
            raise Wrong(f"{value:g} cannot be a share of attention: weights lie in [0, 1]")

    if model is None or tokens is None:
        out_of_range()
        raise NotAttempted("pass the model and the tokens: ex6(answer, model, tokens, L)")
    tokens = tokens.to(next(model.parameters()).device)
    layers = [block.attn for block in model.blocks]
    for layer in layers:
        layer.record = True
    try:
        with torch.no_grad():
            model(tokens)
        weights = [layer.last_weights for layer in layers]  # (B, h, T, T) per layer
    finally:
        for layer in layers:
            layer.record = False
    T = tokens.shape[1]
    induction = [[_induction_by_loop(w[:, h].mean(dim=0), length) for h in range(w.shape[1])]
                 for w in weights]
    ranked = sorted(((lay, h) for lay in range(len(induction)) for h in range(len(induction[0]))),
                    key=lambda lh: induction[lh[0]][lh[1]], reverse=True)
    # every head above the threshold is an induction head (a model may have two); else the best
    accepted = [lh for lh in ranked if induction[lh[0]][lh[1]] > ROLE_THRESHOLD] or ranked[:1]
    first_copy = range(1, length + 1)
    for layer, head in accepted:
        if math.isclose(value, _bos_share(weights[layer][:, head], first_copy), abs_tol=5e-3):
            return
    layer, head = accepted[0]
    chosen = weights[layer][:, head]
    expected = _bos_share(chosen, first_copy)
    variants = [
        (length * expected, f"that is the sum over the L = {length} queries; the share is "
                            "their mean, a fraction between 0 and 1"),
        (100 * expected, f"{value:g} looks like a percentage; give the share as a fraction "
                         "between 0 and 1"),
        (_bos_share(chosen, range(0, length + 1)),
         "you included query 0: BOS can only attend to itself (weight 1), and it is not a token "
         "waiting for its successor; average over t = 1 … L"),
        (_bos_share(chosen, range(1, T)),
         "you averaged over the second copy too; only the first copy's queries t = 1 … L have "
         "no earlier occurrence to find"),
        (_bos_share(chosen, range(length + 1, T)),
         "you averaged over the second copy's queries t = L + 1 … 2L, where the head has a real "
         "target; the question is about the first copy, t = 1 … L"),
        (_mean(float(chosen[:, 0, t].mean()) for t in first_copy),
         "you read weights[:, 0, t], the BOS query's weight on key t, which the causal mask "
         "makes 0; the weight of query t on BOS (key 0) is weights[:, t, 0]"),
        (_mean(float(chosen[:, t, 1].mean()) for t in first_copy),
         "key 1 is the first token of the segment; BOS is key 0: average weights[:, t, 0]"),
        (_bos_share(weights[layer].mean(dim=1), first_copy),
         f"that averages over all the heads of layer {layer}; measure the induction head "
         f"{(layer, head)} alone"),
    ]
    for wrong, hint in variants:
        if not math.isclose(wrong, expected, abs_tol=5e-3) and math.isclose(
                value, wrong, rel_tol=1e-3, abs_tol=1e-3):
            raise Wrong(hint)
    for other_layer, layer_weights in enumerate(weights):
        for other_head in range(layer_weights.shape[1]):
            if (other_layer, other_head) not in accepted and math.isclose(
                value, _bos_share(layer_weights[:, other_head], first_copy), abs_tol=1e-3
            ):
                raise Wrong(f"that is the share of head {(other_layer, other_head)}; measure the "
                            f"induction head {(layer, head)}")
    out_of_range()
    raise Wrong(f"the share of attention on BOS (key 0) should be {expected:.3f}, got "
                f"{value:.3f}: average weights[t, 0] of the induction head over t = 1 … L")


N_CTX_BY_HAND, D_TOKEN_BY_HAND, N_VOCAB_BY_HAND = 40, 16, 64
"""Exercise 12.7's setting: up to 40 positions, 16-dimensional token embeddings, 64 tokens."""


def _attend_by_hand(P, W_Q, W_K, tokens: torch.Tensor, causal: bool = True) -> torch.Tensor:
    """The reader's head on ``tokens`` ``(B, T)``: weights ``(B, T, T)``."""
    generator = torch.Generator().manual_seed(712)
    embedding = torch.randn(N_VOCAB_BY_HAND, D_TOKEN_BY_HAND, generator=generator)
    T = tokens.shape[1]
    x = torch.cat([embedding[tokens], P[:T].expand(tokens.shape[0], T, P.shape[1])], dim=-1)
    scores = (x @ W_Q) @ (x @ W_K).transpose(-2, -1) / math.sqrt(W_Q.shape[1])
    if causal:
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
    return scores.softmax(dim=-1)


def _as_matrix(value, name: str) -> torch.Tensor:
    array = torch.as_tensor(to_array(value, name))
    if array.ndim != 2:
        raise Wrong(f"{name} should be a matrix (2-D), got shape {tuple(array.shape)}")
    if not torch.isfinite(array).all():
        raise Wrong(f"{name} contains NaN or infinity")
    return array


@exercise("12.7", "Build a previous-token head by hand")
def ex7(answer) -> None:
    """``answer``: ``(P, W_Q, W_K)`` — positional embeddings ``(n_ctx, d_pos)`` with n_ctx ≥ 40,
    and query/key matrices ``(16 + d_pos, d_k)``. The stream at position t is ``[e(x_t), p_t]``.

    Passes when the head's previous-token score is at least 0.95 on fresh random sequences of
    length 40 and 17; the diagnosis runs the head with and without its causal mask.
    """
    if not isinstance(answer, tuple | list) or len(answer) != 3:
        raise Wrong("answer should be the tuple (P, W_Q, W_K)")
    P, W_Q, W_K = (_as_matrix(value, name) for value, name in zip(answer, ("P", "W_Q", "W_K")))
    if P.shape[0] < N_CTX_BY_HAND:
        raise Wrong(f"P has {P.shape[0]} rows; it needs one per position, n_ctx = "
                    f"{N_CTX_BY_HAND}")
    width = D_TOKEN_BY_HAND + P.shape[1]
    for name, matrix in (("W_Q", W_Q), ("W_K", W_K)):
        if matrix.shape[0] != width:
            raise Wrong(f"{name} has {matrix.shape[0]} rows; the stream [e(x_t), p_t] has "
                        f"{D_TOKEN_BY_HAND} + {P.shape[1]} = {width} coordinates")
    if W_Q.shape[1] != W_K.shape[1]:
        raise Wrong(f"W_Q and W_K need the same number of columns d_k, got {W_Q.shape[1]} and "
                    f"{W_K.shape[1]}")
    generator = torch.Generator().manual_seed(7)
    for T in (N_CTX_BY_HAND, 17):
        tokens = torch.randint(0, N_VOCAB_BY_HAND, (32, T), generator=generator)
        weights = _attend_by_hand(P, W_Q, W_K, tokens)
        rows = range(1, T)
        previous = sum(float(weights[:, t, t - 1].mean()) for t in rows) / len(rows)
        if previous >= 0.95:
            continue
        itself = sum(float(weights[:, t, t].mean()) for t in rows) / len(rows)
        unmasked = _attend_by_hand(P, W_Q, W_K, tokens, causal=False)
        following = sum(float(unmasked[:, t, t + 1].mean()) for t in range(T - 1)) / (T - 1)
        masked_scores = weights.log()
        best = masked_scores.argmax(dim=-1)[:, 1:]
        right = float((best == torch.arange(T - 1)).float().mean())
        message = f"previous-token score {previous:.2f} at T = {T} (needs 0.95): "
        d_token = D_TOKEN_BY_HAND
        if W_Q[:d_token].abs().max() > 0 or W_K[:d_token].abs().max() > 0:
            positional_q, positional_k = W_Q.clone(), W_K.clone()
            positional_q[:d_token], positional_k[:d_token] = 0.0, 0.0
            fixed = _attend_by_hand(P, positional_q, positional_k, tokens)
            if sum(float(fixed[:, t, t - 1].mean()) for t in rows) / len(rows) >= 0.95:
                raise Wrong(message + "the first 16 rows of W_Q and W_K (the token "
                            "coordinates) let the token embeddings into the score, so a query "
                            "also matches its own token; zero those rows, so that the score "
                            "depends on positions only")
        if itself >= 0.5:
            raise Wrong(message + "the head attends to itself — q_t matches k_t best; W_Q should "
                        "turn position t into what W_K makes of position t − 1 (a shift), not "
                        "the identity")
        if following >= 0.5:
            raise Wrong(message + "without the causal mask the head attends to the next token "
                        "t + 1: your shift runs the wrong way (off by one, or W_Q and W_K "
                        "transposed/swapped), and the mask hides t + 1")
        if right >= 0.9:
            raise Wrong(message + "key t − 1 already has the largest score, but the softmax is "
                        "not sharp enough: scale the scores up (multiply W_Q by a larger factor) "
                        "so the margin beats ln(number of keys) even after dividing by √d_k")
        raise Wrong(message + f"only {right:.0%} of the queries give key t − 1 the largest "
                    "score; make the score depend on positions only (zero rows for the token "
                    "coordinates) and peak at key t − 1")


# --- typical mistakes (tests/test_mistakes.py) ----------------------------------------------


def _previous_correct(weights):
    T = weights.shape[-1]
    return float(sum(weights[t, t - 1] for t in range(1, T)) / (T - 1))


def _induction_correct(weights, L):
    T = weights.shape[-1]
    return float(sum(weights[t, t - L + 1] for t in range(L + 1, T)) / (T - L - 1))


def _hook(head, in_place=False, axis=1):
    def hook(outputs):
        outputs = outputs if in_place else outputs.clone()
        outputs.index_fill_(axis, torch.tensor([head]), 0.0)
        return outputs

    return hook


@functools.cache
def _untrained_lab():
    """An untrained lab model and a batch of repeated sequences (cheap; mistakes of 12.6)."""
    from tformer.data import fixed_length_batch
    from tformer.induction import LabSettings, make_model

    model = make_model(LabSettings(), seed=0).eval()
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():  # larger weights than the init, so that the heads differ clearly
        for parameter in model.parameters():
            parameter.copy_(0.5 * torch.randn(parameter.shape, generator=generator))
    return model, fixed_length_batch(64, 32, 16, seed=5).tokens, 16


class _LazyArgs:
    """Checker arguments built on first use (so importing this module builds no model)."""

    def __init__(self, build) -> None:
        self.build = build

    def __iter__(self):
        return iter(self.build())


def _bos_share_of(head=None, queries=None):
    def answer():
        model, tokens, length = _untrained_lab()
        layers = [block.attn for block in model.blocks]
        for layer in layers:
            layer.record = True
        with torch.no_grad():
            model(tokens)
        weights = [layer.last_weights for layer in layers]
        for layer in layers:
            layer.record = False
        induction = [[_induction_by_loop(w[:, h].mean(0), length) for h in range(w.shape[1])]
                     for w in weights]
        best = max(((lay, h) for lay in range(2) for h in range(2)),
                   key=lambda lh: induction[lh[0]][lh[1]])
        others = [(lay, h) for lay in range(2) for h in range(2) if (lay, h) != best]
        lay, h = best if head is None else others[head]
        rows = queries if queries is not None else range(1, length + 1)
        return _bos_share(weights[lay][:, h], rows)

    return answer


def _by_hand(scale=20.0, shift=-1):
    """(P, W_Q, W_K) of a previous-token head (shift=-1) or of a typical mistake."""
    n, d_tok = N_CTX_BY_HAND, D_TOKEN_BY_HAND
    P = torch.eye(n)
    move = torch.zeros(n, n)
    for t in range(n):
        if 0 <= t + shift < n:
            move[t, t + shift] = 1.0
    W_Q = torch.cat([torch.zeros(d_tok, n), scale * math.sqrt(n) * move])
    W_K = torch.cat([torch.zeros(d_tok, n), torch.eye(n)])
    return P, W_Q, W_K


def _by_hand_with_tokens():
    """The by-hand head with the identity on the token block too (the token rows matter)."""
    P, W_Q, W_K = _by_hand()
    d_tok = D_TOKEN_BY_HAND
    W_Q, W_K = W_Q.clone(), W_K.clone()
    W_Q[:d_tok, :d_tok] = 20 * math.sqrt(N_CTX_BY_HAND) * torch.eye(d_tok)
    W_K[:d_tok, :d_tok] = torch.eye(d_tok)
    return P, W_Q, W_K


_LAB = _LazyArgs(lambda: _untrained_lab())

def _hook_with(change):
    """A hook that returns ``change(clone of outputs, head)``."""

    def zero_ablation(head):
        def hook(outputs):
            return change(outputs.clone(), head)

        return hook

    return zero_ablation


def _only(outputs, head):
    kept = torch.zeros_like(outputs)
    kept[:, head] = outputs[:, head]
    return kept


def _mean_ablated(outputs, head):
    outputs[:, head] = outputs[:, head].mean(dim=(0, 1), keepdim=True)
    return outputs


MISTAKES: dict[str, list[Mistake]] = {
    "12.1": [
        Mistake("averaged over all T queries",
                lambda: lambda w: float(sum(w[t, t - 1] for t in range(1, w.shape[-1])) / w.shape[-1]),
                "t = 1 … T − 1"),
        Mistake("transposed (row = key)", lambda: lambda w: _previous_correct(w.T), "transposed"),
        Mistake("the weight on the query itself",
                lambda: lambda w: float(torch.diagonal(w).mean()), "on itself"),
        Mistake("a 0-d tensor", lambda: lambda w: torch.diagonal(w, offset=-1).mean(),
                "Python float"),
        Mistake("the notebook's T = 5", lambda: lambda w: float(
            sum(w[t, t - 1] for t in range(1, 5)) / 4), "used T = 5"),
        Mistake("summed, not averaged", lambda: lambda w: float(torch.diagonal(w, -1).sum()),
                "summed"),
    ],
    "12.2": [
        Mistake("the earlier occurrence itself (t − L)",
                lambda: lambda w, L: float(sum(w[t, t - L] for t in range(L + 1, w.shape[-1]))
                                           / (w.shape[-1] - L - 1)),
                "one position later"),
        Mistake("off by one the other way (t − L + 2)",
                lambda: lambda w, L: float(sum(w[t, t - L + 2] for t in range(L + 1, w.shape[-1]))
                                           / (w.shape[-1] - L - 1)),
                "t − L + 1"),
        Mistake("queries from t = L", lambda: lambda w, L: float(
            sum(w[t, t - L + 1] for t in range(L, w.shape[-1])) / (w.shape[-1] - L)),
            "started at t = L"),
        Mistake("BOS forgotten", lambda: lambda w, L: float(
            sum(w[t, t - L + 1] for t in range(L, 2 * L)) / L), "forgot BOS"),
        Mistake("summed, not averaged", lambda: lambda w, L: float(
            sum(w[t, t - L + 1] for t in range(L + 1, w.shape[-1]))), "summed"),
        Mistake("indices swapped", lambda: lambda w, L: float(
            sum(w[t - L + 1, t] for t in range(L + 1, w.shape[-1])) / L), "row = query"),
        Mistake("L = 3 hard-coded", lambda: lambda w, L: _induction_correct(w, 3),
                "used L = 3"),
    ],
    "12.3": [
        Mistake("1/L instead of 1/(t + 1)", lambda: 0.25, "t + 1 keys"),
        Mistake("1/t instead of 1/(t + 1)", lambda: (1 / 5 + 1 / 6 + 1 / 7 + 1 / 8) / 4, "t + 1 keys"),
        Mistake("a sum, not a mean", lambda: 1 / 6 + 1 / 7 + 1 / 8 + 1 / 9, "divide by 4"),
        Mistake("no causal mask", lambda: 1 / 9, "causal mask"),
        Mistake("numerators over denominators", lambda: 4 / 30, "numerators and denominators"),
    ],
    "12.4": [
        Mistake("changed the input in place", lambda: lambda head: _hook(head, in_place=True),
                "in place"),
        Mistake("zeroed a position, not a head", lambda: lambda head: _hook(head, axis=2),
                "position 1, not head 1"),
        Mistake("zeroed a feature, not a head", lambda: lambda head: _hook(head, axis=3),
                "feature 1, not head 1"),
        Mistake("kept only the head", lambda: _hook_with(_only), "zeroed all the others"),
        Mistake("a mean ablation", lambda: _hook_with(_mean_ablated), "mean ablation"),
        Mistake("returned the input unchanged", lambda: _hook_with(lambda x, h: x * 1.0),
                "unchanged"),
        Mistake("always head 1", lambda: lambda head: _hook(1), "when asked for head 0"),
    ],
    "12.5": [
        Mistake("layers the wrong way round",
                lambda: {"previous-token": (1, 0), "induction": (0, 1)}, "later layer"),
        Mistake("one head for both roles",
                lambda: {"previous-token": (0, 0), "induction": (0, 0)}, "two different heads"),
        Mistake("heads counted from 1",
                lambda: {"previous-token": (1, 1), "induction": (2, 2)}, "counted from 0"),
        Mistake("a batch index for a head",
                lambda: {"previous-token": (0, 47), "induction": (1, 12)}, "batch index"),
    ],
    "12.6": [
        Mistake("included query 0 (BOS)", _bos_share_of(queries=range(0, 17)), "query 0", _LAB),
        Mistake("averaged over the second copy too", _bos_share_of(queries=range(1, 33)),
                "second copy too", _LAB),
        Mistake("measured another head", _bos_share_of(head=0), "measure the induction head",
                _LAB),
        Mistake("a percentage", lambda: 90.0, "percentage", _LAB),
        Mistake("the second copy only", _bos_share_of(queries=range(17, 33)),
                "second copy's queries", _LAB),
        Mistake("query and key axes swapped", lambda: 0.0, "weights[:, 0, t]", _LAB),
        Mistake("the sum over the queries", lambda: 16 * _bos_share_of()(), "sum over the L",
                _LAB),
    ],
    "12.7": [
        Mistake("W_Q = W_K: attends to itself", lambda: _by_hand(shift=0), "attends to itself"),
        Mistake("shift the wrong way: the next token", lambda: _by_hand(shift=+1),
                "next token"),
        Mistake("scores too small for the softmax", lambda: _by_hand(scale=0.3),
                "not sharp enough"),
        Mistake("P with too few rows", lambda: (torch.eye(20),) + _by_hand()[1:], "n_ctx"),
        Mistake("token rows let into the score", lambda: _by_hand_with_tokens(),
                "first 16 rows"),
    ],
}
