"""Checkers for chapter 12, *The induction-head lab*.

Expected values come from closed forms and from explicit Python loops over positions written
here — never from :mod:`tformer.interp`, the code under study. Where a checker needs the trained
model (exercise 12.5) it reads the attention weights through the model's ``record`` hook and
scores them with its own loops.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch

from tformer.checks.core import Wrong, call_reader, exercise, expect_number, to_array


def _patterns(n_positions: int) -> dict[str, torch.Tensor]:
    """Hand-built attention patterns ``(T, T)`` (rows sum to 1, causal)."""
    T = n_positions
    generator = torch.Generator().manual_seed(12)
    random_scores = torch.randn(T, T, generator=generator)
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


@exercise("12.1", "The previous-token score")
def ex1(answer) -> None:
    """``answer``: the reader's function ``previous_token_score(weights (T, T)) -> float``."""
    if not callable(answer):
        raise Wrong("answer should be your function previous_token_score (without calling it)")
    for name, weights in _patterns(9).items():
        value = _scalar(call_reader(answer, weights.clone(), name="previous_token_score"), "the score")
        expected = _previous_by_loop(weights)
        if name == "a perfect previous-token head" and math.isclose(value, 8 / 9, abs_tol=1e-6):
            raise Wrong("you averaged over all T queries; position 0 has no previous token, "
                        "so average over t = 1 … T − 1")
        if not math.isclose(value, expected, abs_tol=1e-5):
            raise Wrong(
                f"for {name} the score should be {expected:.4f}, got {value:.4f} — the weight "
                "of key t − 1 sits at weights[t, t − 1] (row = query, column = key)"
            )


@exercise("12.2", "The induction score")
def ex2(answer) -> None:
    """``answer``: the reader's function ``induction_score(weights (T, T), length) -> float``."""
    if not callable(answer):
        raise Wrong("answer should be your function induction_score (without calling it)")
    length = 4
    T = 2 * length + 1
    induction = torch.eye(T)
    for t in range(length + 1, T):
        induction[t] = 0.0
        induction[t, t - length + 1] = 1.0
    duplicate = torch.eye(T)
    for t in range(length + 1, T):
        duplicate[t] = 0.0
        duplicate[t, t - length] = 1.0
    cases = {"a perfect induction head": induction} | _patterns(T)
    for name, weights in cases.items():
        value = _scalar(call_reader(answer, weights.clone(), length, name="induction_score"), "the score")
        expected = _induction_by_loop(weights, length)
        if not math.isclose(value, expected, abs_tol=1e-5):
            if name == "a perfect induction head" and math.isclose(value, 0.0, abs_tol=1e-6):
                raise Wrong("a perfect induction head scores 0 with your function: the target "
                            "key is t − L + 1, the token *after* the earlier occurrence")
            raise Wrong(f"for {name} the score should be {expected:.4f}, got {value:.4f}")
    value = _scalar(call_reader(answer, duplicate, length, name="induction_score"), "the score")
    if math.isclose(value, 1.0, abs_tol=1e-5):
        raise Wrong("a head attending to t − L (the earlier copy of the *same* token) scored 1; "
                    "the induction target is one position later, t − L + 1")


@exercise("12.3", "A uniform head's induction score, by hand")
def ex3(answer) -> None:
    """``answer``: induction score of the uniform causal head for L = 4 (T = 9), a number."""
    expected = sum(1 / (t + 1) for t in range(5, 9)) / 4
    if isinstance(answer, int | float) and math.isclose(float(answer), 0.25, abs_tol=1e-3):
        raise Wrong("0.25 = 1/L is not it: a uniform head at query t spreads its weight over "
                    "t + 1 keys (positions 0 … t)")
    expect_number(answer, expected, name="the induction score", abs_tol=5e-4, rounding_tol=5e-3)


@exercise("12.4", "A zero-ablation hook")
def ex4(answer) -> None:
    """``answer``: the reader's ``zero_ablation(head) -> hook``; hook maps (B, h, T, d_k) tensors."""
    if not callable(answer):
        raise Wrong("answer should be your function zero_ablation (without calling it)")
    hook = call_reader(answer, 1, name="zero_ablation")
    if not callable(hook):
        raise Wrong("zero_ablation(head) should return a function (the hook), got "
                    f"{type(hook).__name__}")
    outputs = torch.randn(2, 3, 5, 4, generator=torch.Generator().manual_seed(4))
    original = outputs.clone()
    result = call_reader(hook, outputs, name="the hook")
    if not isinstance(result, torch.Tensor) or result.shape != original.shape:
        raise Wrong(f"the hook must return a tensor of the same shape {tuple(original.shape)}")
    if not torch.equal(outputs, original):
        raise Wrong("the hook changed its input in place; clone it first, so the recorded "
                    "outputs and any other hook still see the original")
    if result[:, 1].abs().max() != 0:
        if result[:, :, 1].abs().max() == 0:
            raise Wrong("you zeroed position 1, not head 1: the head axis is dim 1 of (B, h, T, d_k)")
        raise Wrong("head 1's outputs should be all zeros")
    keep = [0, 2]
    if not torch.equal(result[:, keep], original[:, keep]):
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
        return int(value[0]), int(value[1])
    raise Wrong(f"{name} should be a (layer, head) pair of integers such as (0, 1), got {value!r}")


@exercise("12.5", "Which head, which layer?")
def ex5(answer, model=None, tokens=None, length=None) -> None:
    """``answer``: ``{"previous-token": (layer, head), "induction": (layer, head)}``.

    With ``model``, ``tokens`` ``(B, 2L + 1)`` and ``length`` the heads are checked against the
    trained model's own attention, scored here position by position.
    """
    if not isinstance(answer, Mapping) or set(answer) != {"previous-token", "induction"}:
        raise Wrong('answer should be a dict {"previous-token": (layer, head), '
                    '"induction": (layer, head)}')
    previous_head = _as_head(answer["previous-token"], "the previous-token head")
    induction_head = _as_head(answer["induction"], "the induction head")
    if previous_head[0] >= induction_head[0]:
        raise Wrong("the induction head reads what the previous-token head wrote, so the "
                    "previous-token head must sit in an earlier layer")
    if model is None:
        return
    previous, induction = _own_scores(model, tokens, length)
    best_previous = divmod(int(previous.argmax()), previous.shape[1])
    best_induction = divmod(int(induction.argmax()), induction.shape[1])
    if previous_head != best_previous:
        raise Wrong(f"head {previous_head} has previous-token score "
                    f"{float(previous[previous_head]):.2f}; another head scores higher")
    if induction_head != best_induction:
        raise Wrong(f"head {induction_head} has induction score "
                    f"{float(induction[induction_head]):.2f}; another head scores higher")


@exercise("12.6", "What if the sequence is not repeated?")
def ex6(answer, n_vocab: int = 64) -> None:
    """``answer``: the trained model's second-half loss on non-repeated random sequences (nats).

    Anything from 0.9 · ln(n_vocab − 1) up is right: a copier cannot beat chance on noise, and it
    may do worse (it still copies, confidently, whatever its induction head lands on).
    """
    chance = math.log(n_vocab - 1)
    value = _scalar(answer, "the second-half loss")
    if value < 0.5 * chance:
        raise Wrong(f"{value:.2f} nats is the loss on *repeated* sequences; run the model on "
                    "random_batch(...), where the second half repeats nothing")
    if value < 0.9 * chance:
        raise Wrong(f"{value:.2f} nats is clearly better than chance (ln {n_vocab - 1} = "
                    f"{chance:.2f}); on noise a model that can only copy cannot beat chance — "
                    "did you measure the first half, or use repeated sequences?")
