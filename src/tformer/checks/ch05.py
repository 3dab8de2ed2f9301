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
    NotAttempted,
    Wrong,
    call_reader,
    exercise,
    expect_number,
    expect_tensor,
    to_array,
)

# Source 000's worked example in the book's row convention: unscaled scores, queries as rows.
SCORES_000 = torch.tensor([[1.0, 2.0, 3.0], [0.0, 2.0, 2.0], [1.0, 4.0, 5.0]], dtype=torch.float64)


def _causal(n: int) -> torch.Tensor:
    return torch.ones(n, n, dtype=torch.bool).tril()


@exercise("05.1", "Source 000's exercise 12.5: the causal mask on the third query")
def ex1(answer) -> None:
    """``answer``: the three weights of query 3 (scores 1, 4, 5) after the causal mask."""
    value = to_array(answer, "the weights of query 3")
    expected = torch.softmax(SCORES_000[2], dim=-1)
    if value.shape == (3,):
        if np.allclose(value, [0.0, 0.0, 1.0], atol=1e-3):
            raise Wrong("query 3 is the last position: the causal mask hides nothing from it")
        two_keys = torch.softmax(SCORES_000[2, :2], dim=-1).numpy()
        if np.allclose(value[:2], two_keys, atol=2e-3) and abs(value[2]) < 1e-3:
            raise Wrong(
                "you hid key 3 from query 3, but a query may attend to itself: the causal mask "
                "allows keys j ≤ i"
            )
        if np.allclose(value, torch.softmax(SCORES_000[2] / math.sqrt(2), -1).numpy(), atol=2e-3):
            raise Wrong("these weights are scaled by 1/√2; source 000's example is unscaled")
    expect_tensor(
        value, expected, name="the weights of query 3", axes=("keys",), atol=1.5e-3, rtol=0,
        rounding_tol=1e-2,
    )


@exercise("05.2", "Masking too late: row sums")
def ex2(answer) -> None:
    """``answer``: the three row sums after zeroing future weights *after* the softmax."""
    weights = torch.softmax(SCORES_000, dim=-1).masked_fill(~_causal(3), 0.0)
    expected = weights.sum(dim=-1)
    value = to_array(answer, "the row sums")
    if value.shape == (3,) and np.allclose(value, 1.0, atol=1e-3):
        raise Wrong(
            "every row sums to 1 — that is masking *before* the softmax (or renormalising); "
            "zero the future weights of the unmasked softmax and add up what is left"
        )
    if value.shape == (3, 3):
        raise Wrong("give one sum per query row (3 numbers), not the weight matrix")
    expect_tensor(value, expected, name="the row sums", axes=("queries",), atol=1.5e-3, rtol=0,
                  rounding_tol=1e-2)


_SHAPE_KEYS = ("padding", "combined", "scores", "hidden")


@exercise("05.3", "Mask shapes for a real batch")
def ex3(answer) -> None:
    """``answer``: dict with the shapes of the padding mask, combined mask and scores (tuples),
    and the number of causally hidden scores per head (int), for B = 8, h = 8, T = 128."""
    batch, heads, n = 8, 8, 128
    expected = {
        "padding": (batch, 1, 1, n),
        "combined": (batch, 1, n, n),
        "scores": (batch, heads, n, n),
        "hidden": n * (n - 1) // 2,
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
            hint = {
                "padding": "a key-padding mask varies only with the sequence and the key; "
                "put ones on the head and query axes so it broadcasts",
                "combined": "the combined mask varies with sequence, query and key, not head",
                "scores": "scores have one T × T matrix per sequence and per head",
            }[key]
            raise Wrong(f"answer['{key}'] = {shape} is not right: {hint}")
    hidden = answer["hidden"]
    if hidden == n * n // 2 or hidden == n * (n + 1) // 2:
        raise Wrong("count again: the diagonal is visible (a query sees itself)")
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
    ]
    for name, q, mask in cases:
        result = call_reader(masked_attention, q.clone(), keys.clone(), values.clone(), mask,
                             name="masked_attention")
        if not isinstance(result, tuple | list) or len(result) != 2:
            raise Wrong("masked_attention should return a pair (outputs, weights)")
        outputs, weights = (to_array(part) for part in result)
        if np.isnan(outputs).any() or np.isnan(weights).any():
            raise Wrong(f"case '{name}': NaN in the result — subtract the row maximum of the "
                        "*visible* scores before exponentiating")
        if weights.shape != (batch, heads, n, n):
            raise Wrong(f"case '{name}': weights have shape {weights.shape}, expected "
                        f"{(batch, heads, n, n)} (batch, heads, queries, keys)")
        sums = weights.sum(axis=-1)
        if not np.allclose(sums, 1.0, atol=1e-6):
            raise Wrong(f"case '{name}': some rows of weights sum to {sums.min():.3f}, not 1 — "
                        "apply the mask to the scores *before* the softmax")
        if mask is not None:
            hidden = ~mask.expand(batch, heads, n, n).numpy()
            if (weights[hidden] != 0).any():
                raise Wrong(f"case '{name}': masked weights must be exactly 0 (mask the scores "
                            "with -inf before the softmax, not after)")
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
