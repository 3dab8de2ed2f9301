"""Checkers for chapter 12, *The induction-head lab*.

Expected values come from closed forms and from explicit Python loops over positions written
here — never from :mod:`tformer.interp`, the code under study. Where a checker needs the trained
model (exercises 12.5 and 12.6) it reads the attention weights through the model's ``record``
hook and scores them with its own loops. ``MISTAKES`` lists every exercise's typical mistakes
(``tests/test_mistakes.py`` feeds each one to its checker).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping

import torch

from tformer.checks.core import (
    Mistake,
    NotAttempted,
    Wrong,
    call_reader,
    exercise,
    expect_number,
    to_array,
)

N_LAYERS, N_HEADS = 2, 2
"""The lab model's shape (``tformer.induction.LabSettings``), for answers checked without it."""


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
        if name == "a perfect previous-token head" and math.isclose(value, 0.0, abs_tol=1e-6):
            raise Wrong("a perfect previous-token head scores 0 with your function: you read "
                        "weights[t − 1, t] (transposed: row = query, column = key) or the "
                        "weight on the next key; the weight of key t − 1 is weights[t, t − 1]")
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
    value = _scalar(call_reader(answer, duplicate, length, name="induction_score"), "the score")
    if math.isclose(value, 1.0, abs_tol=1e-5):
        raise Wrong("a head attending to t − L (the earlier copy of the *same* token) scored 1; "
                    "the induction target is one position later, t − L + 1")
    cases = {"a perfect induction head": induction} | _patterns(T)
    for name, weights in cases.items():
        value = _scalar(call_reader(answer, weights.clone(), length, name="induction_score"), "the score")
        expected = _induction_by_loop(weights, length)
        if not math.isclose(value, expected, abs_tol=1e-5):
            if name == "a perfect induction head" and math.isclose(value, 0.0, abs_tol=1e-6):
                raise Wrong("a perfect induction head scores 0 with your function: the target "
                            "key is t − L + 1, the token *after* the earlier occurrence")
            raise Wrong(f"for {name} the score should be {expected:.4f}, got {value:.4f}")


@exercise("12.3", "A uniform head's induction score, by hand")
def ex3(answer) -> None:
    """``answer``: induction score of the uniform causal head for L = 4 (T = 9), a number."""
    expected = sum(1 / (t + 1) for t in range(5, 9)) / 4
    if isinstance(answer, int | float) and math.isclose(float(answer), 0.25, abs_tol=1e-3):
        raise Wrong("0.25 = 1/L is not it: a uniform head at query t spreads its weight over "
                    "t + 1 keys (positions 0 … t)")
    one_over_t = sum(1 / t for t in range(5, 9)) / 4
    if isinstance(answer, int | float) and math.isclose(float(answer), one_over_t, abs_tol=1e-3):
        raise Wrong("you used weight 1/t: query t sees t + 1 keys (positions 0 … t, BOS and "
                    "itself included), so each gets 1/(t + 1)")
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
        head = int(value[0]), int(value[1])
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
        raise Wrong("you named one head for both roles; the circuit needs two different heads")
    if previous_head[0] >= induction_head[0]:
        raise Wrong("an induction head that finds the earlier occurrence by content reads what "
                    "the previous-token head wrote, so it must sit in a later layer (a head "
                    "that attends a fixed offset back by position can sit in any layer — but "
                    "it works at one length only)")
    if model is None:
        return
    from tformer.data import fixed_length_batch

    scores = []
    for length in CHECK_LENGTHS:
        tokens = fixed_length_batch(model.config.n_vocab, 64, length, seed=500 + length).tokens
        scores.append(_own_scores(model, tokens.to(next(model.parameters()).device), length))
    previous = torch.minimum(scores[0][0], scores[1][0])
    induction = torch.minimum(scores[0][1], scores[1][1])
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
    if not 0.0 <= value <= 1.0:
        if 1.0 < value <= 100.0:
            raise Wrong(f"{value:g} looks like a percentage; give the share as a fraction "
                        "between 0 and 1")
        raise Wrong(f"{value:g} cannot be a share of attention: weights lie in [0, 1]")
    if model is None or tokens is None:
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
    for layer, head in accepted:
        if math.isclose(value, _bos_share(weights[layer][:, head], range(1, length + 1)),
                        abs_tol=5e-3):
            return
    layer, head = accepted[0]
    chosen = weights[layer][:, head]
    expected = _bos_share(chosen, range(1, length + 1))
    if math.isclose(value, _bos_share(chosen, range(0, length + 1)), abs_tol=1e-3):
        raise Wrong("you included query 0: BOS can only attend to itself (weight 1), and it is "
                    "not a token waiting for its successor; average over t = 1 … L")
    if math.isclose(value, _bos_share(chosen, range(1, T)), abs_tol=1e-3):
        raise Wrong("you averaged over the second copy too; only the first copy's queries "
                    "t = 1 … L have no earlier occurrence to find")
    for other_layer, layer_weights in enumerate(weights):
        for other_head in range(layer_weights.shape[1]):
            if (other_layer, other_head) not in accepted and math.isclose(
                value, _bos_share(layer_weights[:, other_head], range(1, length + 1)), abs_tol=1e-3
            ):
                raise Wrong(f"that is the share of head {(other_layer, other_head)}; measure the "
                            f"induction head {(layer, head)}")
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


_LAB = _LazyArgs(lambda: _untrained_lab())

MISTAKES: dict[str, list[Mistake]] = {
    "12.1": [
        Mistake("averaged over all T queries",
                lambda: lambda w: float(sum(w[t, t - 1] for t in range(1, w.shape[-1])) / w.shape[-1]),
                "t = 1 … T − 1"),
        Mistake("transposed (row = key)", lambda: lambda w: _previous_correct(w.T), "transposed"),
        Mistake("the weight on the query itself",
                lambda: lambda w: float(torch.diagonal(w).mean()), "row = query"),
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
    ],
    "12.3": [
        Mistake("1/L instead of 1/(t + 1)", lambda: 0.25, "t + 1 keys"),
        Mistake("1/t instead of 1/(t + 1)", lambda: (1 / 5 + 1 / 6 + 1 / 7 + 1 / 8) / 4, "t + 1 keys"),
    ],
    "12.4": [
        Mistake("changed the input in place", lambda: lambda head: _hook(head, in_place=True),
                "in place"),
        Mistake("zeroed a position, not a head", lambda: lambda head: _hook(head, axis=2),
                "position 1, not head 1"),
    ],
    "12.5": [
        Mistake("layers the wrong way round",
                lambda: {"previous-token": (1, 0), "induction": (0, 1)}, "later layer"),
        Mistake("one head for both roles",
                lambda: {"previous-token": (0, 0), "induction": (0, 0)}, "two different heads"),
        Mistake("heads counted from 1",
                lambda: {"previous-token": (1, 1), "induction": (2, 2)}, "counted from 0"),
    ],
    "12.6": [
        Mistake("included query 0 (BOS)", _bos_share_of(queries=range(0, 17)), "query 0", _LAB),
        Mistake("averaged over the second copy too", _bos_share_of(queries=range(1, 33)),
                "second copy too", _LAB),
        Mistake("measured another head", _bos_share_of(head=0), "measure the induction head",
                _LAB),
        Mistake("a percentage", lambda: 90.0, "percentage", _LAB),
    ],
    "12.7": [
        Mistake("W_Q = W_K: attends to itself", lambda: _by_hand(shift=0), "attends to itself"),
        Mistake("shift the wrong way: the next token", lambda: _by_hand(shift=+1),
                "next token"),
        Mistake("scores too small for the softmax", lambda: _by_hand(scale=0.3),
                "not sharp enough"),
        Mistake("P with too few rows", lambda: (torch.eye(20),) + _by_hand()[1:], "n_ctx"),
    ],
}
