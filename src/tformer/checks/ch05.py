"""Checkers for chapter 5, *Masks: who may look at whom*.

Expected values are computed here with plain ``torch`` operations (``torch.softmax``,
``masked_fill``, ``torch.nn.functional.scaled_dot_product_attention``) — never with
:mod:`tformer.attention` or :mod:`tformer.masks`, the code under study. Tokens are rows.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from tformer.checks.core import (
    Mistake,
    NotAttempted,
    Wrong,
    call_reader,
    exercise,
    expect_number,
    expect_tensor,
    to_array,
)

# The running example in the book's row convention: unscaled scores, queries as rows (d_k = 2).
SCORES_000 = torch.tensor([[1.0, 2.0, 3.0], [0.0, 2.0, 2.0], [1.0, 4.0, 5.0]], dtype=torch.float64)
D_K = 2
# Exercise 05.2's new score matrix (unscaled), four queries and four keys.
SCORES_4 = torch.tensor(
    [[2.0, 1.0, 0.0, 3.0], [1.0, 3.0, 2.0, 0.0], [0.0, 1.0, 1.0, 4.0], [2.0, 2.0, 1.0, 1.0]],
    dtype=torch.float64,
)


def _causal(n: int) -> torch.Tensor:
    return torch.ones(n, n, dtype=torch.bool).tril()


def _masked_softmax(scores: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
    return torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)


def _causal_weights(scale: float) -> torch.Tensor:
    return _masked_softmax(SCORES_000 * scale, _causal(3))


@exercise("05.1", "The causal mask with the 1/√d_k scaling")
def ex1(answer) -> None:
    """``answer``: the ``(3, 3)`` causal weights of the running example with scaled scores
    ``S = QKᵀ/√2``."""
    value = to_array(answer, "the causal weights")
    expected = _causal_weights(1 / math.sqrt(D_K))
    if value.shape == (3, 3):
        if np.allclose(value, _causal_weights(1.0).numpy(), atol=2e-3):
            raise Wrong("these are the chapter's unscaled weights: divide the scores by √d_k = √2 "
                        "before the softmax")
        late = torch.softmax(SCORES_000 / math.sqrt(D_K), -1).masked_fill(~_causal(3), 0.0)
        if np.allclose(value, late.numpy(), atol=2e-3):
            raise Wrong("you zeroed the future weights after the softmax, so rows 1 and 2 do not "
                        "sum to 1: mask the scores before the softmax")
        upper = _masked_softmax(SCORES_000 / math.sqrt(D_K), _causal(3).T)
        if np.allclose(value, upper.numpy(), atol=2e-3):
            raise Wrong("your mask is transposed: query i may read keys j ≤ i (the past), so the "
                        "zeros are above the diagonal")
    expect_tensor(value, expected, name="the causal weights", axes=("queries", "keys"),
                  atol=1.5e-3, rtol=0, rows_sum_to_one=True, rounding_tol=1e-2)


def _late_sums(allowed: torch.Tensor) -> torch.Tensor:
    return torch.softmax(SCORES_4, dim=-1).masked_fill(~allowed, 0.0).sum(dim=-1)


@exercise("05.2", "Masking too late: row sums")
def ex2(answer) -> None:
    """``answer``: the four row sums of ``softmax(SCORES_4)`` after zeroing the future weights."""
    expected = _late_sums(_causal(4))
    value = to_array(answer, "the row sums")
    if value.shape == (4,):
        if np.allclose(value, 1.0, atol=1e-3):
            raise Wrong("every row sums to 1 — that is masking before the softmax (or "
                        "renormalising); zero the future weights of the unmasked softmax and add "
                        "up what is left")
        if np.allclose(value, _late_sums(_causal(4).T).numpy(), atol=2e-3):
            raise Wrong("you kept the future (j ≥ i) and zeroed the past: the causal mask keeps "
                        "keys j ≤ i")
        strict = _late_sums(_causal(4).tril(-1))
        if np.allclose(value, strict.numpy(), atol=2e-3):
            raise Wrong("you also zeroed the diagonal, but a query may read its own key")
    if value.shape == (4, 4):
        raise Wrong("give one sum per query row (4 numbers), not the weight matrix")
    expect_tensor(value, expected, name="the row sums", axes=("queries",), atol=1.5e-3, rtol=0,
                  rounding_tol=1e-2)


_SHAPE_KEYS = ("padding", "combined", "scores", "hidden")
_BATCH, _HEADS, _T_Q, _T_K = 8, 8, 4, 128


@exercise("05.3", "Mask shapes and hidden scores for a KV-cache step")
def ex3(answer) -> None:
    """``answer``: dict with the shapes of the key-padding mask, the combined mask and the scores
    (tuples), and the number of scores the causal mask hides in the ``(T_q, T_k)`` score matrix of
    *one sequence and one head* (int), for B = 8, h = 8, T_q = 4 new queries, T_k = 128 keys."""
    expected = {
        "padding": (_BATCH, 1, 1, _T_K),
        "combined": (_BATCH, 1, _T_Q, _T_K),
        "scores": (_BATCH, _HEADS, _T_Q, _T_K),
        "hidden": _T_Q * (_T_Q - 1) // 2,
    }
    if not isinstance(answer, dict):
        raise Wrong(f"answer should be a dict with keys {', '.join(_SHAPE_KEYS)}")
    missing = [key for key in _SHAPE_KEYS if key not in answer or answer[key] is None]
    if len(missing) == len(_SHAPE_KEYS):
        raise NotAttempted("fill in the four entries of the dict")
    if missing:
        raise Wrong(f"the dict is missing {', '.join(missing)}")
    for key in ("padding", "combined", "scores"):
        try:
            shape = tuple(int(size) for size in answer[key])
        except (TypeError, ValueError):
            raise Wrong(f"answer['{key}'] should be a tuple of sizes, e.g. (8, 1, 1, 128)") from None
        if shape != expected[key]:
            if len(shape) == 4 and shape[-2] == shape[-1] == _T_K:
                raise Wrong(f"answer['{key}'] = {shape}: only the T_q = 4 new positions are "
                            "queries, so the query axis has size 4, not 128")
            hint = {
                "padding": "a key-padding mask varies only with the sequence and the key; "
                "put ones on the head and query axes so it broadcasts",
                "combined": "the combined mask varies with sequence, query and key, not head",
                "scores": "scores have one T_q × T_k matrix per sequence and per head",
            }[key]
            raise Wrong(f"answer['{key}'] = {shape} is not right: {hint}")
    hidden = answer["hidden"]
    upper_left = _T_Q * _T_K - _T_Q * (_T_Q + 1) // 2
    if hidden == upper_left:
        raise Wrong("that is the upper-left (is_causal=True) count; the new queries are the *last* "
                    "4 positions, so the mask is aligned lower-right")
    if hidden in (expected["hidden"] * _BATCH * _HEADS, expected["hidden"] * _BATCH,
                  expected["hidden"] * _HEADS):
        raise Wrong("count the hidden scores per sequence and per head, not for the whole batch")
    if hidden in (_T_Q * (_T_Q + 1) // 2, _T_K * (_T_K - 1) // 2):
        raise Wrong("count again: query i (of 4) is at position 124 + i and sees every key up to "
                    "itself; the diagonal is visible")
    expect_number(hidden, expected["hidden"], name="answer['hidden']")


def _left_dead_rows(lengths: list[int], n: int) -> torch.Tensor:
    lengths_t = torch.tensor(lengths)
    real = torch.arange(n) >= n - lengths_t[:, None]  # (B, T) left padding
    mask = real[:, None, :] & _causal(n)  # (B, T, T)
    return ~mask.any(dim=-1)  # (B, T)


@exercise("05.4", "Which rows are dead?")
def ex4(answer) -> None:
    """``answer``: ``(3, 4)`` booleans (or 0/1), True where a query row of the left-padded,
    causal batch with lengths (4, 2, 1) has no visible key."""
    expected = _left_dead_rows([4, 2, 1], 4)
    value = to_array(answer, "the dead-row table")
    if value.shape == (3, 4):
        right = torch.arange(4) < torch.tensor([4, 2, 1])[:, None]
        right_dead = ~((right[:, None, :] & _causal(4)).any(-1))
        if np.array_equal(value.astype(bool), right_dead.numpy()):
            raise Wrong("that is right padding (pads at the end); the batch is padded on the left")
        if np.array_equal(value.astype(bool), ~expected.numpy()):
            raise Wrong("True and False are swapped: mark the rows that can see *no* key")
    expect_tensor(value, expected.double(), name="the dead-row table",
                  axes=("sequences", "queries"), atol=1e-6, rtol=0)


def padding_loss_data() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The data of exercise 05.5: ``logits (B=3, T=6, n_vocab=7)``, ``targets (3, 6)`` with
    arbitrary token ids at the padded positions, and ``lengths (3,)``."""
    generator = torch.Generator().manual_seed(5)
    logits = torch.randn(3, 6, 7, generator=generator, dtype=torch.float64)
    targets = torch.randint(0, 7, (3, 6), generator=generator)
    lengths = torch.tensor([6, 4, 2])
    return logits, targets, lengths


@exercise("05.5", "The loss over real tokens")
def ex5(answer) -> None:
    """``answer``: the mean next-token cross-entropy over the real (unpadded) positions."""
    logits, targets, lengths = padding_loss_data()
    real = torch.arange(6) < lengths[:, None]
    per_position = F.cross_entropy(logits.reshape(-1, 7), targets.reshape(-1), reduction="none")
    expected = float(per_position[real.reshape(-1)].mean())
    if isinstance(answer, int | float | np.number | torch.Tensor):
        value = float(to_array(answer).reshape(-1)[0]) if to_array(answer).size == 1 else None
        if value is not None and math.isclose(value, float(per_position.mean()), rel_tol=1e-6):
            raise Wrong("that average includes the padded positions; give them ignore_index")
        if value is not None and math.isclose(
            value, float(per_position[real.reshape(-1)].sum() / per_position.numel()), rel_tol=1e-6
        ):
            raise Wrong("you summed over the real tokens but divided by all positions")
    expect_number(answer, expected, name="the loss", rel_tol=1e-6, rounding_tol=5e-3)


def _reference(queries, keys, values, mask):
    return F.scaled_dot_product_attention(queries, keys, values, attn_mask=mask)


def _check_gradients(masked_attention, queries, keys, values, mask) -> None:
    """Gradients of ``sum(outputs²)`` with respect to queries, keys and values must match SDPA's."""
    leaves = [t.clone().requires_grad_() for t in (queries, keys, values)]
    result = call_reader(masked_attention, *leaves, mask, name="masked_attention")
    outputs = result[0]
    if not isinstance(outputs, torch.Tensor) or not outputs.requires_grad:
        raise Wrong("the outputs carry no gradient: compute them with torch operations on the "
                    "inputs (no numpy, no .detach())")
    outputs.pow(2).sum().backward()
    reference = [t.clone().requires_grad_() for t in (queries, keys, values)]
    _reference(*reference, mask).pow(2).sum().backward()
    for name, mine, theirs in zip(("queries", "keys", "values"), leaves, reference):
        if mine.grad is None or not torch.allclose(mine.grad, theirs.grad, atol=1e-6):
            raise Wrong(f"the outputs match but the gradient with respect to the {name} does not "
                        "match PyTorch's")


@exercise("05.6", "Masked attention, compared with PyTorch")
def ex6(masked_attention) -> None:
    """``masked_attention(queries, keys, values, mask=None) -> (outputs, weights)`` for
    ``(..., T, d_k)`` inputs and a boolean mask (True = may attend) broadcastable to the scores."""
    generator = torch.Generator().manual_seed(6)
    batch, heads, n, d_k = 2, 3, 5, 4

    def draw(*shape):
        return torch.randn(*shape, generator=generator, dtype=torch.float64)

    queries, keys, values = draw(batch, heads, n, d_k), draw(batch, heads, n, d_k), draw(
        batch, heads, n, d_k
    )
    lengths = torch.tensor([5, 3])
    padding = (torch.arange(n) < lengths[:, None])[:, None, None, :]  # (B, 1, 1, T)
    cases = [
        ("no mask", queries, None),
        ("causal (T, T)", queries, _causal(n)),
        ("padding (B, 1, 1, T)", queries, padding),
        ("combined (B, 1, T, T)", queries, padding & _causal(n)),
        ("combined with scores ~1e4", queries * 1e4, padding & _causal(n)),
        ("2 new queries, 5 keys, lower-right causal", queries[..., -2:, :],
         torch.ones(2, n, dtype=torch.bool).tril(n - 2)),
    ]
    for name, q, mask in cases:
        n_q = q.shape[-2]
        result = call_reader(masked_attention, q.clone(), keys.clone(), values.clone(), mask,
                             name="masked_attention")
        if not isinstance(result, tuple | list) or len(result) != 2:
            raise Wrong("masked_attention should return a pair (outputs, weights)")
        outputs, weights = (to_array(part) for part in result)
        if np.isnan(outputs).any() or np.isnan(weights).any():
            raise Wrong(f"case '{name}': NaN in the result — subtract the row maximum of the "
                        "*visible* scores before exponentiating")
        if weights.shape != (batch, heads, n_q, n):
            raise Wrong(f"case '{name}': weights have shape {weights.shape}, expected "
                        f"{(batch, heads, n_q, n)} (batch, heads, queries, keys)")
        sums = weights.sum(axis=-1)
        if not np.allclose(sums, 1.0, atol=1e-6):
            raise Wrong(f"case '{name}': some rows of weights sum to {sums.min():.3f}, not 1 — "
                        "you masked after the softmax; mask the scores before the softmax")
        if mask is not None:
            hidden = ~mask.expand(batch, heads, n_q, n).numpy()
            if (weights[hidden] != 0).any():
                raise Wrong(f"case '{name}': masked weights must be exactly 0 (mask the scores "
                            "with -inf before the softmax, not after)")
        unscaled = torch.softmax(
            (q @ keys.transpose(-2, -1)).masked_fill(
                ~mask if mask is not None else torch.zeros(1, dtype=torch.bool), float("-inf")
            ),
            dim=-1,
        )
        if name == "no mask" and np.allclose(weights, unscaled.numpy(), atol=1e-6):
            raise Wrong("the weights are unscaled: divide the scores by √d_k before the softmax")
        expected_weights = torch.softmax(
            (q @ keys.transpose(-2, -1) / math.sqrt(d_k)).masked_fill(
                ~mask if mask is not None else torch.zeros(1, dtype=torch.bool), float("-inf")
            ),
            dim=-1,
        )
        expect_tensor(weights, expected_weights, name=f"the weights ({name})",
                      axes=("batch", "heads", "queries", "keys"), rows_sum_to_one=True)
        expect_tensor(outputs, _reference(q, keys, values, mask), name=f"the outputs ({name})",
                      axes=("batch", "heads", "queries", "d_v"))
    _check_gradients(masked_attention, queries, keys, values, padding & _causal(n))
    dead = torch.zeros(n, n, dtype=torch.bool)
    dead[1:] = _causal(n)[1:]  # query 0 sees nothing
    try:
        masked_attention(queries.clone(), keys.clone(), values.clone(), dead)
    except ValueError:
        return
    except NotImplementedError:
        raise NotAttempted("masked_attention still raises NotImplementedError") from None
    except Exception as error:  # noqa: BLE001 - the reader's code may fail in any way
        raise Wrong(f"a fully masked row should raise ValueError, not {type(error).__name__}") from None
    raise Wrong("a mask that leaves query 0 with no visible key must raise ValueError, "
                "not return a result")


def _left_padded_cases() -> list[torch.Tensor]:
    return [
        torch.tensor([[True, True, True, True], [False, False, True, True],
                      [False, True, True, True], [False, False, False, True]]),
        torch.arange(7)[None, :] >= torch.tensor([0, 3, 6, 2, 5])[:, None],
    ]


def _position_reference(real: torch.Tensor) -> torch.Tensor:
    """Count the real tokens before each slot, with a plain loop; pads get 0."""
    positions = torch.zeros(real.shape, dtype=torch.long)
    for b in range(real.shape[0]):
        seen = 0
        for t in range(real.shape[1]):
            if real[b, t]:
                positions[b, t] = seen
                seen += 1
    return positions


@exercise("05.7", "Position ids for a left-padded batch")
def ex7(position_ids) -> None:
    """``position_ids(real) -> (B, T)`` integer tensor: for a boolean ``(B, T)`` tensor that is
    ``True`` at real tokens of a left-padded batch, number each sequence's real tokens 0, 1, …;
    padded slots get 0."""
    for real in _left_padded_cases():
        result = call_reader(position_ids, real.clone(), name="position_ids")
        value = to_array(result, "the position ids")
        expected = _position_reference(real)
        if value.shape != tuple(real.shape):
            raise Wrong(f"position_ids should return shape {tuple(real.shape)} (B, T), got "
                        f"{value.shape}")
        slots = torch.arange(real.shape[1]).expand_as(real)
        if np.array_equal(value, slots.numpy()):
            raise Wrong("these are the slot indices 0 … T−1: after left padding the first real "
                        "token must get position 0, so offset by the number of pads")
        live = real.numpy()
        if np.array_equal(value[live], expected.numpy()[live] + 1):
            raise Wrong("off by one: the first real token is position 0, not 1")
        if np.array_equal(value[live], expected.numpy()[live]) and not np.array_equal(
            value[~live], expected.numpy()[~live]
        ):
            raise Wrong("the real tokens are right but the pads are not 0 (negative or other "
                        "values are not valid rows of a position table)")
        expect_tensor(value, expected.double(), name="the position ids",
                      axes=("sequences", "positions"), atol=0, rtol=0)


def _late_weights():
    return torch.softmax(SCORES_000 / math.sqrt(D_K), -1).masked_fill(~_causal(3), 0.0)


def _attention_masked_late(queries, keys, values, mask=None):
    weights = torch.softmax(queries @ keys.transpose(-2, -1) / math.sqrt(queries.shape[-1]), -1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ values, weights


def _attention_no_max(queries, keys, values, mask=None):
    scores = queries @ keys.transpose(-2, -1) / math.sqrt(queries.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    exponentials = torch.exp(scores)
    weights = exponentials / exponentials.sum(-1, keepdim=True)
    return weights @ values, weights


def _attention_unscaled(queries, keys, values, mask=None):
    scores = queries @ keys.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores - scores.amax(-1, keepdim=True), -1)
    return weights @ values, weights


def _attention_no_raise(queries, keys, values, mask=None):
    scores = queries @ keys.transpose(-2, -1) / math.sqrt(queries.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, -1)
    return weights @ values, weights


def _slot_positions(real):
    return torch.arange(real.shape[1]).expand_as(real).clone()


def _positions_from_one(real):
    return real.long().cumsum(-1)


def _positions_negative_pads(real):
    n_pads = (~real).sum(-1, keepdim=True)
    return torch.arange(real.shape[1])[None, :] - n_pads


MISTAKES: dict[str, list[Mistake]] = {
    "05.1": [
        Mistake("unscaled scores (the chapter's weights)", lambda: _causal_weights(1.0), "√d_k"),
        Mistake("masked after the softmax", _late_weights, "before the softmax"),
        Mistake("transposed mask (upper triangle)",
                lambda: _masked_softmax(SCORES_000 / math.sqrt(D_K), _causal(3).T), "transposed"),
    ],
    "05.2": [
        Mistake("masked before the softmax", lambda: torch.ones(4), "before the softmax"),
        Mistake("kept the future instead of the past", lambda: _late_sums(_causal(4).T),
                "j ≤ i"),
        Mistake("hid the diagonal too", lambda: _late_sums(_causal(4).tril(-1)), "diagonal"),
    ],
    "05.3": [
        Mistake("upper-left alignment", lambda: {
            "padding": (8, 1, 1, 128), "combined": (8, 1, 4, 128), "scores": (8, 8, 4, 128),
            "hidden": 4 * 128 - 10}, "lower-right"),
        Mistake("per batch instead of per sequence and head", lambda: {
            "padding": (8, 1, 1, 128), "combined": (8, 1, 4, 128), "scores": (8, 8, 4, 128),
            "hidden": 6 * 64}, "per sequence"),
        Mistake("square T × T shapes", lambda: {
            "padding": (8, 1, 1, 128), "combined": (8, 1, 128, 128), "scores": (8, 8, 4, 128),
            "hidden": 6}, "query axis"),
    ],
    "05.4": [
        Mistake("right padding", lambda: ~((torch.arange(4) < torch.tensor([4, 2, 1])[:, None])
                                           [:, None, :] & _causal(4)).any(-1), "right padding"),
        Mistake("True and False swapped", lambda: ~_left_dead_rows([4, 2, 1], 4), "swapped"),
    ],
    "05.5": [
        Mistake("pads counted in the mean", lambda: float(F.cross_entropy(
            padding_loss_data()[0].reshape(-1, 7), padding_loss_data()[1].reshape(-1))),
            "ignore_index"),
        Mistake("summed over real tokens, divided by all", lambda: float(
            F.cross_entropy(padding_loss_data()[0].reshape(-1, 7),
                            padding_loss_data()[1].reshape(-1), reduction="none")[
                (torch.arange(6) < padding_loss_data()[2][:, None]).reshape(-1)].sum() / 18),
            "divided by all positions"),
    ],
    "05.6": [
        Mistake("masked after the softmax", lambda: _attention_masked_late, "before the softmax"),
        Mistake("no max subtraction", lambda: _attention_no_max, "subtract the row maximum"),
        Mistake("unscaled scores", lambda: _attention_unscaled, "√d_k"),
        Mistake("no error for a fully masked row", lambda: _attention_no_raise,
                "must raise ValueError"),
    ],
    "05.7": [
        Mistake("slot indices (no offset)", lambda: _slot_positions, "offset"),
        Mistake("counting from 1", lambda: _positions_from_one, "off by one"),
        Mistake("negative positions on the pads", lambda: _positions_negative_pads, "pads"),
    ],
}
