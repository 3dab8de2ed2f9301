"""Checkers for chapter 5, *Masks: who may look at whom*.

Expected values are computed here with plain ``torch`` operations (``torch.softmax``,
``masked_fill``, ``torch.nn.functional.scaled_dot_product_attention``) — never with
:mod:`tformer.attention` or :mod:`tformer.masks`, the code under study. Tokens are rows.

Before the generic comparison each checker compares the answer with the family of wrong variants
a learner plausibly produces, computed from the exercise's own data — the scores unscaled or
divided by d_k, the mask transposed, shifted off the diagonal or applied after the softmax, a
masked score of 0 instead of −∞, the softmax or the sum over the wrong axis, right padding for
left, a mean per sequence for a mean per token — and names what matches.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import math
import textwrap
from typing import Any

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


def _source_tree(function: Any) -> ast.AST | None:
    """The parsed source of a reader's function, or ``None`` when it is not available (a function
    typed in a console, a built-in)."""
    try:
        return ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None


def _names_used(function: Any) -> set[str]:
    """What a reader's function reaches for, read from its source: every attribute name
    (``torch.softmax`` gives ``softmax``), every plain name it calls (``softmax(...)`` after
    ``from torch.nn.functional import softmax``) and the name ``tformer``; a local variable that
    is only assigned and read does not count, nor do comments and strings."""
    tree = _source_tree(function)
    if tree is None:
        return set()
    names = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    names |= {node.func.id for node in ast.walk(tree)
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    return names | {node.id for node in ast.walk(tree)
                    if isinstance(node, ast.Name) and node.id == "tformer"}


def _joined(parts: list[str], limit: int = 290) -> str:
    """The hints of the wrong choices that match, joined by "; " — as many as fit in a verdict
    (the first, the most basic, always)."""
    text = parts[0]
    for part in parts[1:]:
        if len(text) + 2 + len(part) > limit:
            break
        text += "; " + part
    return text


# ---------------------------------------------------------------------------------------------
# 05.1

_SCALES_1 = {  # factor on the scores -> what it says (None: right)
    1 / math.sqrt(D_K): None,
    1.0: "these are unscaled weights: divide the scores by √d_k = √2 before the softmax",
    1 / D_K: "you divided the scores by d_k = 2: divide them by √d_k = √2",
}
_MASKS_1 = {  # allowed keys -> what it says
    "causal": None,
    "transposed": "your mask is transposed: query i may read keys j ≤ i (the past), so the zeros "
                  "are above the diagonal",
    "none": "nothing is masked: hide the future keys j > i",
}
_FILLS_1 = {
    "-inf": None,
    "0": "the hidden scores were set to 0, not −∞: e^0 still gives a hidden key weight, so fill "
         "them with float('-inf')",
}
_TIMINGS_1 = {
    "before": None,
    "after": "you zeroed the future weights after the softmax, so rows 1 and 2 do not sum to 1: "
             "mask the scores before the softmax",
}
_AXES_1 = {
    -1: None,
    0: "the softmax ran over the queries (dim=0): it runs along the keys (dim=-1), so that each "
       "row sums to 1",
}


def _allowed_1(kind: str) -> torch.Tensor:
    return {"causal": _causal(3), "transposed": _causal(3).T,
            "none": torch.ones(3, 3, dtype=torch.bool)}[kind]


def _weights_1(scale: float, mask: str, fill: str, timing: str, axis: int) -> torch.Tensor:
    scores = SCORES_000 * scale
    allowed = _allowed_1(mask)
    if timing == "after":
        return torch.softmax(scores, dim=axis).masked_fill(~allowed, 0.0)
    return torch.softmax(scores.masked_fill(~allowed, float("-inf") if fill == "-inf" else 0.0),
                         dim=axis)


def _variants_1() -> list[tuple[np.ndarray, list[str]]]:
    """Every combination of the wrong choices (scale, mask, fill value, when, softmax axis),
    fewest wrong choices first, each with the hints of its wrong choices."""
    variants = []
    for scale, mask, fill, timing, axis in itertools.product(
            _SCALES_1, _MASKS_1, _FILLS_1, _TIMINGS_1, _AXES_1):
        if (mask == "none" and (fill != "-inf" or timing != "before")) or (
                timing == "after" and fill != "-inf"):
            continue  # the same weights as a simpler variant
        parts = [hint for hint in (_SCALES_1[scale], _MASKS_1[mask], _FILLS_1[fill],
                                   _TIMINGS_1[timing], _AXES_1[axis]) if hint]
        if parts:
            variants.append((_weights_1(scale, mask, fill, timing, axis).numpy(), parts))
    return sorted(variants, key=lambda variant: len(variant[1]))


@exercise("05.1", "The causal mask with the 1/√d_k scaling")
def ex1(answer) -> None:
    """``answer``: the ``(3, 3)`` causal weights of the running example with scaled scores
    ``S = QKᵀ/√2``."""
    value = to_array(answer, "the causal weights")
    expected = _causal_weights(1 / math.sqrt(D_K))
    if value.shape == (3, 3):
        if np.isnan(value[2]).any():
            raise Wrong("NaN in the last row, which sees every key: 0 · (−∞) = NaN, so build the "
                        "additive mask with masked_fill(~mask, float('-inf')) or torch.where, not "
                        "by multiplying the mask by −∞")
        if np.isnan(value[0]).all() and not np.isnan(value[1:]).any():
            raise Wrong("NaN in row 0: your mask hides the diagonal too, and query 1 then sees no "
                        "key; a query may read its own key (j ≤ i)")
        if not np.isnan(value).any():
            for variant, parts in _variants_1():
                if not np.allclose(variant, expected.numpy(), atol=2e-3) and np.allclose(
                        value, variant, atol=2e-3):
                    raise Wrong(_joined(parts))
    expect_tensor(value, expected, name="the causal weights", axes=("queries", "keys"),
                  atol=1.5e-3, rtol=0, rows_sum_to_one=True, rounding_tol=1e-2)


# ---------------------------------------------------------------------------------------------
# 05.2

_KEPT_2 = {  # which weights survive -> what it says
    "j <= i": None,
    "j >= i": "you kept the future (j ≥ i) and zeroed the past: the causal mask keeps keys j ≤ i",
    "j < i": "you also zeroed the diagonal, but a query may read its own key",
    "j > i": "you kept only the future (j > i): the causal mask keeps keys j ≤ i",
}
_SCALES_2 = {
    1.0: None,
    1 / math.sqrt(2): "the scores are used as given: this exercise divides by nothing before the "
                      "softmax",
    0.5: "the scores are used as given: this exercise divides by nothing before the softmax",
}
_SOFTMAX_AXES_2 = {-1: None, 0: "the softmax runs along the keys (dim=-1), not over the queries"}
_SUM_AXES_2 = {-1: None, 0: "those are column sums (the weight each key receives): add up each "
               "query's row (dim=-1)"}
_PARTS_2 = {"kept": None, "zeroed": "those are the weights that were zeroed: give what is left "
            "in each row"}


def _kept_2(kind: str) -> torch.Tensor:
    causal = _causal(4)
    return {"j <= i": causal, "j >= i": causal.T, "j < i": causal.tril(-1),
            "j > i": causal.T.triu(1)}[kind]


def _late_sums(allowed: torch.Tensor, scale: float = 1.0, softmax_axis: int = -1,
               sum_axis: int = -1) -> torch.Tensor:
    weights = torch.softmax(SCORES_4 * scale, dim=softmax_axis)
    return weights.masked_fill(~allowed, 0.0).sum(dim=sum_axis)


def _variants_2() -> list[tuple[np.ndarray, list[str]]]:
    variants = []
    for kept, scale, softmax_axis, sum_axis, part in itertools.product(
            _KEPT_2, _SCALES_2, _SOFTMAX_AXES_2, _SUM_AXES_2, _PARTS_2):
        parts = [hint for hint in (_KEPT_2[kept], _SCALES_2[scale], _SOFTMAX_AXES_2[softmax_axis],
                                   _SUM_AXES_2[sum_axis], _PARTS_2[part]) if hint]
        if not parts:
            continue
        allowed = _kept_2(kept)
        sums = _late_sums(allowed, scale, softmax_axis, sum_axis)
        if part == "zeroed":
            sums = _late_sums(torch.ones(4, 4, dtype=torch.bool), scale, softmax_axis,
                              sum_axis) - sums
        variants.append((sums.numpy(), parts))
    return sorted(variants, key=lambda variant: len(variant[1]))


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
        if not np.allclose(value, expected.numpy(), atol=1.5e-3):
            for variant, parts in _variants_2():
                if not np.allclose(variant, expected.numpy(), atol=2e-3) and np.allclose(
                        value, variant, atol=2e-3):
                    raise Wrong(_joined(parts))
    if value.shape == (4, 4):
        raise Wrong("give one sum per query row (4 numbers), not the weight matrix")
    expect_tensor(value, expected, name="the row sums", axes=("queries",), atol=1.5e-3, rtol=0,
                  rounding_tol=1e-2)


# ---------------------------------------------------------------------------------------------
# 05.3

_SHAPE_KEYS = ("padding", "combined", "scores", "hidden")
_BATCH, _HEADS, _T_Q, _T_K = 8, 8, 4, 128
_SHAPES_3 = {
    "padding": (_BATCH, 1, 1, _T_K),
    "combined": (_BATCH, 1, _T_Q, _T_K),
    "scores": (_BATCH, _HEADS, _T_Q, _T_K),
}


def _shape_hint(key: str, shape: tuple[int, ...]) -> str:
    """What is wrong with the reader's shape for ``answer[key]``."""
    expected = _SHAPES_3[key]
    if len(shape) == 4 and shape[-2] == shape[-1] == _T_K:
        return (f"answer['{key}'] = {shape}: only the T_q = 4 new positions are queries, so the "
                "query axis has size 4, not 128")
    if len(shape) == 4 and shape[:2] + shape[:1:-1] == expected:
        return (f"answer['{key}'] = {shape} puts the keys before the queries: a score matrix is "
                "T_q × T_k (one row per query), so the key axis comes last")
    if key != "scores" and len(shape) in (2, 3) and shape[0] == _BATCH:
        return (f"answer['{key}'] = {shape} has {len(shape)} axes: against the scores "
                "(B, h, T_q, T_k) axes line up from the right, so its batch axis would meet the "
                f"{'heads' if len(shape) == 3 else 'queries'}; give it 4 axes, {expected}")
    if key == "scores" and shape == (_BATCH * _HEADS, _T_Q, _T_K):
        return (f"answer['scores'] = {shape} merges the batch and head axes; keep them apart: "
                f"{expected}")
    if key == "padding" and shape == _SHAPES_3["combined"]:
        return ("that is the shape of the combined mask; the key-padding mask does not vary with "
                f"the query: {expected}")
    if key == "combined" and shape == _SHAPES_3["padding"]:
        return ("that is the shape of the padding mask; the causal part varies with the query "
                f"too: {expected}")
    if key == "combined" and shape == (1, 1, _T_Q, _T_K):
        return ("that is the causal mask alone; combined with the padding it varies with the "
                f"sequence too: {expected}")
    hint = {
        "padding": "a key-padding mask varies only with the sequence and the key; "
        "put ones on the head and query axes so it broadcasts",
        "combined": "the combined mask varies with sequence, query and key, not head",
        "scores": "scores have one T_q × T_k matrix per sequence and per head",
    }[key]
    return f"answer['{key}'] = {shape} is not right: {hint}"


@exercise("05.3", "Mask shapes and hidden scores for a KV-cache step")
def ex3(answer) -> None:
    """``answer``: dict with the shapes of the key-padding mask, the combined mask and the scores
    (tuples), and the number of scores the causal mask hides in the ``(T_q, T_k)`` score matrix of
    *one sequence and one head* (int), for B = 8, h = 8, T_q = 4 new queries, T_k = 128 keys."""
    hidden_expected = _T_Q * (_T_Q - 1) // 2
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
        if shape != _SHAPES_3[key]:
            raise Wrong(_shape_hint(key, shape))
    hidden = answer["hidden"]
    upper_left = _T_Q * _T_K - _T_Q * (_T_Q + 1) // 2
    if isinstance(hidden, int | float | np.number) and not isinstance(hidden, bool):
        if hidden == upper_left:
            raise Wrong("that is the upper-left (is_causal=True) count; the new queries are the "
                        "*last* 4 positions, so the mask is aligned lower-right")
        if hidden in (hidden_expected * _BATCH * _HEADS, hidden_expected * _BATCH,
                      hidden_expected * _HEADS):
            raise Wrong("count the hidden scores per sequence and per head, not for the whole batch")
        if hidden == _T_Q * (_T_Q + 1) // 2:
            raise Wrong("count again: query i (of 4) is at position 124 + i and sees every key up "
                        "to itself; the diagonal is visible")
        if hidden in (_T_K * (_T_K - 1) // 2, _T_K * (_T_K + 1) // 2):
            raise Wrong("that is the count of a full 128 × 128 causal matrix; with the cache only "
                        "the 4 new positions are queries, so the matrix is 4 × 128")
        if hidden == _T_Q * _T_K - hidden_expected:
            raise Wrong("that counts the visible scores; count the hidden ones")
        if hidden == _T_Q * (_T_K - _T_Q):
            raise Wrong("the 124 cached keys are in the past of every new query, so they are "
                        "visible; only new keys after a query are hidden")
        if hidden == 0:
            raise Wrong("the cache does not make every key visible: new query i (at position "
                        "124 + i) may not read the new keys after it")
    expect_number(hidden, hidden_expected, name="answer['hidden']", integer=True)


# ---------------------------------------------------------------------------------------------
# 05.4

_LENGTHS_4, _T_4 = [4, 2, 1], 4
_PADDINGS_4 = {
    "left": None,
    "left >": "each sequence lost its first real token: with left padding the real slots are "
              "t ≥ T − length (>=, not >)",
    "left - 1": "one pad too many counts as real: with left padding the real slots are "
                "t ≥ T − length",
    "right": "that is right padding (pads at the end), but the batch is padded on the left",
}
_CAUSALS_4 = {"tril": None, "triu": "your causal mask is transposed: query t sees the keys j ≤ t"}
_REDUCTIONS_4 = {
    "~any(-1)": None,
    "~all(-1)": "you marked the rows with *some* hidden key (~mask.all), but a dead row has "
                "*no* visible key: ~mask.any(dim=-1)",
    "any(-1)": "True and False are swapped: mark the rows that can see *no* key",
    "all(-1)": "you marked the rows that see every key (mask.all), but a dead row sees none: "
               "~mask.any(dim=-1)",
}


def _real_4(kind: str) -> torch.Tensor:
    lengths, slots = torch.tensor(_LENGTHS_4)[:, None], torch.arange(_T_4)
    return {"left": slots >= _T_4 - lengths, "left >": slots > _T_4 - lengths,
            "left - 1": slots >= _T_4 - lengths - 1, "right": slots < lengths}[kind]


def _dead_4(padding: str = "left", causal: str = "tril", reduction: str = "~any(-1)"):
    allowed = _causal(_T_4) if causal == "tril" else _causal(_T_4).T
    mask = _real_4(padding)[:, None, :] & allowed  # (B, T, T)
    return {"~any(-1)": ~mask.any(-1), "~all(-1)": ~mask.all(-1), "any(-1)": mask.any(-1),
            "all(-1)": mask.all(-1)}[reduction]


def _left_dead_rows(lengths: list[int], n: int) -> torch.Tensor:
    lengths_t = torch.tensor(lengths)
    real = torch.arange(n) >= n - lengths_t[:, None]  # (B, T) left padding
    mask = real[:, None, :] & _causal(n)  # (B, T, T)
    return ~mask.any(dim=-1)  # (B, T)


@exercise("05.4", "Which rows are dead?")
def ex4(answer) -> None:
    """``answer``: ``(3, 4)`` booleans (or 0/1), True where a query row of the left-padded,
    causal batch with lengths (4, 2, 1) has no visible key."""
    expected = _left_dead_rows(_LENGTHS_4, _T_4)
    value = to_array(answer, "the dead-row table")
    if value.shape == (3, 4) and np.isin(value, (0.0, 1.0)).all():
        table = value.astype(bool)
        if not table.any():
            raise Wrong("no row is dead in your table — what right padding (pads at the end) or a "
                        "padding mask without the causal mask gives; here the pads come first, "
                        "and query t sees only keys j ≤ t")
        if not np.array_equal(table, expected.numpy()):
            variants = []
            for padding, causal, reduction in itertools.product(_PADDINGS_4, _CAUSALS_4,
                                                                _REDUCTIONS_4):
                parts = [hint for hint in (_PADDINGS_4[padding], _CAUSALS_4[causal],
                                           _REDUCTIONS_4[reduction]) if hint]
                if parts:
                    variants.append((_dead_4(padding, causal, reduction).numpy(), parts))
            for variant, parts in sorted(variants, key=lambda variant: len(variant[1])):
                if np.array_equal(table, variant):
                    raise Wrong(_joined(parts))
    expect_tensor(value, expected.double(), name="the dead-row table",
                  axes=("sequences", "queries"), atol=1e-6, rtol=0)


# ---------------------------------------------------------------------------------------------
# 05.5


def padding_loss_data() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The data of exercise 05.5: ``logits (B=3, T=6, n_vocab=7)``, ``targets (3, 6)`` with
    arbitrary token ids at the padded positions, and ``lengths (3,)``."""
    generator = torch.Generator().manual_seed(5)
    logits = torch.randn(3, 6, 7, generator=generator, dtype=torch.float64)
    targets = torch.randint(0, 7, (3, 6), generator=generator)
    lengths = torch.tensor([6, 4, 2])
    return logits, targets, lengths


def _loss_variants() -> tuple[float, list[tuple[float, str]]]:
    """The mean loss over the real tokens, and the losses of the wrong recipes with their hints."""
    logits, targets, lengths = padding_loss_data()
    n_vocab, n_positions = logits.shape[-1], logits.shape[1]
    slots = torch.arange(n_positions)
    real = slots < lengths[:, None]

    def per_position(scores=logits, labels=targets):
        return F.cross_entropy(scores.reshape(-1, n_vocab), labels.reshape(-1),
                               reduction="none").reshape(labels.shape)

    losses = per_position()
    expected = float(losses[real].mean())
    variants = [
        (float(losses.mean()), "that average includes the padded positions; give them "
         "ignore_index"),
        (float(losses[real].sum() / losses.numel()), "you summed over the real tokens but divided "
         "by all positions"),
        (float(losses[slots <= lengths[:, None]].mean()), "your real-token mask keeps one pad of "
         "each shorter sequence (t ≤ length); the real positions are t < length"),
        (float(losses[slots >= n_positions - lengths[:, None]].mean()), "the sequences are "
         "padded on the right: the real tokens are the first length positions (t < length), not "
         "the last"),
        (float(torch.stack([losses[b, : int(n)].mean() for b, n in enumerate(lengths)]).mean()),
         "that is the mean of the per-sequence means, which gives a short sequence's tokens more "
         "weight; average over all real tokens at once"),
        (float(losses[real].sum()), "that is the sum over the real tokens; give their mean"),
        (expected / math.log(2), "that is in bits (log base 2); cross_entropy uses the natural "
         "log, nats"),
        (float(per_position(torch.softmax(logits, -1))[real].mean()), "you applied a softmax "
         "before cross_entropy, which takes the raw logits (it applies log_softmax itself)"),
        (float(per_position(logits[:, :-1], targets[:, 1:])[real[:, 1:]].mean()),
         "the logits and targets are already aligned (targets[b, t] is the next token after "
         "position t): do not shift them again"),
        (float(per_position(logits[:, :-1], targets[:, 1:])[real[:, :-1]].mean()),
         "the logits and targets are already aligned (targets[b, t] is the next token after "
         "position t): do not shift them again"),
    ]
    for token in range(n_vocab):  # the pads relabelled with a real token id, so they count
        relabelled = per_position(labels=targets.masked_fill(~real, token))
        variants.append((float(relabelled.mean()), f"the pads were given target {token}, a real "
                         "token id, so they still count: fill them with the ignore_index (−100)"))
    return expected, [(loss, hint) for loss, hint in variants
                      if not math.isclose(loss, expected, rel_tol=1e-6)]


@exercise("05.5", "The loss over real tokens")
def ex5(answer) -> None:
    """``answer``: the mean next-token cross-entropy over the real (unpadded) positions, a Python
    float."""
    expected, variants = _loss_variants()
    if isinstance(answer, int | float | np.number | torch.Tensor | np.ndarray) and not isinstance(
            answer, bool) and to_array(answer).size == 1:
        value = float(to_array(answer).reshape(-1)[0])
        for loss, hint in variants:
            if math.isclose(value, loss, rel_tol=1e-6):
                raise Wrong(hint)
        if isinstance(answer, torch.Tensor | np.ndarray) and math.isclose(value, expected,
                                                                          rel_tol=1e-6):
            raise Wrong(f"the value is right, but it is a {type(answer).__name__}: give a Python "
                        "float (.item())")
    expect_number(answer, expected, name="the loss", rel_tol=1e-6, rounding_tol=5e-3)


# ---------------------------------------------------------------------------------------------
# 05.6


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


def _weight_variants(q, keys, mask, d_k: int) -> list[tuple[np.ndarray, str]]:
    """The weights of the wrong recipes for one case, each with its hint."""
    hidden = ~mask if mask is not None else torch.zeros(1, dtype=torch.bool)
    raw = q @ keys.transpose(-2, -1)
    scores = raw / math.sqrt(d_k)
    masked = scores.masked_fill(hidden, float("-inf"))
    exponentials = torch.exp(masked - masked.amax(-1, keepdim=True))
    variants = [
        (torch.softmax(raw.masked_fill(hidden, float("-inf")), -1),
         "the weights are unscaled: divide the scores by √d_k before the softmax"),
        (torch.softmax(scores.masked_fill(hidden, float("-inf")) / math.sqrt(d_k), -1),
         "you divided the scores by d_k; divide them by √d_k"),
        (torch.softmax(scores, -1),
         "the mask made no difference: your function ignores its mask argument; fill the scores "
         "where the mask is False with −∞ before the softmax"),
        (torch.softmax(scores, -1).masked_fill(hidden, 0.0),
         "you masked after the softmax, so the visible weights do not sum to 1: mask the scores "
         "before the softmax"),
        (torch.softmax(masked, -2), "the weights are normalised over the queries (dim=-2); "
         "normalise over the keys (dim=-1)"),
        (exponentials / exponentials.sum(-1)[..., None, :] if exponentials.shape[-1] ==
         exponentials.shape[-2] else None,
         "each row is divided by another row's sum: use sum(dim=-1, keepdim=True) so the sums "
         "broadcast along the keys"),
    ]
    if mask is not None:
        inverted = torch.softmax(scores.masked_fill(mask, float("-inf")), -1)
        variants.append((inverted, "you hid the keys where the mask is True; True means *may "
                         "attend*, so fill the scores where the mask is False (~mask)"))
    if masked.shape[-1] == masked.shape[-2]:
        column_max = masked - masked.amax(-1)[..., None, :]
        shifted = torch.exp(column_max)
        variants.append((shifted / shifted.sum(-1, keepdim=True), "the row maximum is "
                         "subtracted column by column: take amax(dim=-1, keepdim=True) so it "
                         "broadcasts along the keys"))
    return [(variant.numpy(), hint) for variant, hint in variants if variant is not None]


def _call_case(masked_attention, name: str, mask, *args):
    """Call the reader's function on one case; a ValueError where every query sees a key, or a
    failure on ``mask=None``, gets its own hint."""
    try:
        return call_reader(masked_attention, *args, mask, name="masked_attention")
    except Wrong as wrong:
        message = str(wrong)
        if message.startswith("masked_attention raised ValueError"):
            raise Wrong(f"case '{name}': masked_attention raised ValueError, but every query here "
                        "sees at least one key (True = may attend): hide the keys where the mask "
                        "is False, and raise only for a row without any True") from None
        if mask is None and "NoneType" in message:
            raise Wrong("masked_attention failed with mask=None: without a mask nothing is "
                        "hidden, so skip the masking step when mask is None") from None
        raise


_FORBIDDEN_6 = {"softmax", "log_softmax", "scaled_dot_product_attention", "tformer"}


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
        result = _call_case(masked_attention, name, mask, q.clone(), keys.clone(), values.clone())
        if not isinstance(result, tuple | list) or len(result) != 2:
            raise Wrong("masked_attention should return a pair (outputs, weights)")
        outputs, weights = (to_array(part) for part in result)
        if outputs.shape == (batch, heads, n_q, n) and weights.shape == (batch, heads, n_q, d_k):
            raise Wrong("masked_attention returns the weights first: return (outputs, weights), "
                        "in that order")
        if (np.isnan(outputs).any() or np.isnan(weights).any()) and name != "no mask" and abs(
                float(q.abs().max())) < 100:
            raise Wrong(f"case '{name}': NaN in the result, yet every query here sees at least "
                        "one key: check which keys you hide (True = may attend, so hide ~mask)")
        if np.isnan(outputs).any() or np.isnan(weights).any():
            raise Wrong(f"case '{name}': NaN in the result — subtract the row maximum of the "
                        "*visible* scores before exponentiating")
        if weights.shape != (batch, heads, n_q, n):
            raise Wrong(f"case '{name}': weights have shape {weights.shape}, expected "
                        f"{(batch, heads, n_q, n)} (batch, heads, queries, keys)")
        expected_weights = torch.softmax(
            (q @ keys.transpose(-2, -1) / math.sqrt(d_k)).masked_fill(
                ~mask if mask is not None else torch.zeros(1, dtype=torch.bool), float("-inf")
            ),
            dim=-1,
        )
        if not np.allclose(weights, expected_weights.numpy(), atol=1e-5, rtol=1e-4):
            for variant, hint in _weight_variants(q, keys, mask, d_k):
                if not np.isnan(variant).any() and not np.allclose(
                        variant, expected_weights.numpy(), atol=1e-6) and np.allclose(
                        weights, variant, atol=1e-6):
                    raise Wrong(f"case '{name}': {hint}")
        sums = weights.sum(axis=-1)
        if not np.allclose(sums, 1.0, atol=1e-6):
            raise Wrong(f"case '{name}': some rows of weights sum to {sums.min():.3f}, not 1 — "
                        "you masked after the softmax; mask the scores before the softmax")
        if mask is not None:
            hidden = ~mask.expand(batch, heads, n_q, n).numpy()
            if (weights[hidden] != 0).any():
                raise Wrong(f"case '{name}': masked weights must be exactly 0 (mask the scores "
                            "with -inf before the softmax, not after)")
        expect_tensor(weights, expected_weights, name=f"the weights ({name})",
                      axes=("batch", "heads", "queries", "keys"), rows_sum_to_one=True)
        expect_tensor(outputs, _reference(q, keys, values, mask), name=f"the outputs ({name})",
                      axes=("batch", "heads", "queries", "d_v"))
    _check_gradients(masked_attention, queries, keys, values, padding & _causal(n))
    dead = torch.zeros(n, n, dtype=torch.bool)
    dead[1:] = _causal(n)[1:]  # query 0 sees nothing
    try:
        result = masked_attention(queries.clone(), keys.clone(), values.clone(), dead)
    except ValueError:
        shortcut = _names_used(masked_attention) & _FORBIDDEN_6
        if shortcut:
            raise Wrong("the results are right, but the exercise asks for elementary operations: "
                        f"your function uses {', '.join(sorted(shortcut))}; compute exp(scores − "
                        "row maximum) and divide by its sum yourself") from None
        return
    except NotImplementedError:
        raise NotAttempted("masked_attention still raises NotImplementedError") from None
    except Exception as error:  # noqa: BLE001 - the reader's code may fail in any way
        raise Wrong(f"a fully masked row should raise ValueError, not {type(error).__name__}") from None
    try:
        row = to_array(result[1])[..., 0, :]
    except Exception:  # noqa: BLE001 - whatever came back, the verdict is the same
        row = None
    if row is not None and row.shape[-1] == n and np.allclose(row, 1 / n, atol=1e-6):
        raise Wrong("a query with no visible key got uniform weights instead of a ValueError — a "
                    "large negative fill (−1e9) hides the problem: fill with −∞ and raise "
                    "ValueError when a row's largest visible score is −∞")
    raise Wrong("a mask that leaves query 0 with no visible key must raise ValueError, "
                "not return a result")


# ---------------------------------------------------------------------------------------------
# 05.7


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


def _loops_over_batch(function: Any) -> bool:
    """Whether the function's source has a Python loop over the batch: ``for row in real``,
    ``for b in range(B)`` with ``B`` from ``real.shape``, ``range(len(real))``, …"""
    tree = _source_tree(function)
    if tree is None or not tree.body or not isinstance(tree.body[0], ast.FunctionDef):
        return False
    definition = tree.body[0]
    arguments = {arg.arg for arg in definition.args.args}
    batch_names: set[str] = set()
    for node in ast.walk(definition):  # B, T = real.shape / B = real.shape[0] / len(real)
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, source = node.targets[0], ast.unparse(node.value)
            if isinstance(target, ast.Tuple) and target.elts and isinstance(
                    target.elts[0], ast.Name) and ("shape" in source or "size(" in source):
                batch_names.add(target.elts[0].id)
            elif isinstance(target, ast.Name) and ("shape[0]" in source or "size(0)" in source
                                                   or source.startswith("len(")):
                batch_names.add(target.id)
    iterables = [node.iter for node in ast.walk(definition)
                 if isinstance(node, ast.For | ast.comprehension)]
    for iterable in iterables:
        text = ast.unparse(iterable)
        names = {node.id for node in ast.walk(iterable) if isinstance(node, ast.Name)}
        if "shape[0]" in text or "size(0)" in text or "len(" in text or names & batch_names:
            return True
        if isinstance(iterable, ast.Name) and iterable.id in arguments:
            return True
        if isinstance(iterable, ast.Call) and getattr(iterable.func, "id", "") in (
                "enumerate", "zip") and names & arguments:
            return True
    return False


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
        right = expected.numpy()
        if np.array_equal(value[live], right[live] + 1):
            raise Wrong("off by one: the first real token is position 0, not 1")
        if not np.array_equal(value[live], right[live]):
            if np.array_equal(value[live], slots.numpy()[live]):
                raise Wrong("each real token keeps its slot index: number the real tokens from the "
                            "first one, by counting the real tokens before each slot (a cumsum "
                            "of real, minus 1)")
            lengths = real.sum(-1, keepdim=True).expand_as(real).numpy()
            if np.array_equal(value[live], (lengths - 1 - right)[live]):
                raise Wrong("you numbered the real tokens from the last one; the first real token "
                            "is position 0")
        if np.array_equal(value[live], right[live]) and not np.array_equal(
            value[~live], right[~live]
        ):
            raise Wrong("the real tokens are right but the pads are not 0 (negative or other "
                        "values are not valid rows of a position table)")
        expect_tensor(value, expected.double(), name="the position ids",
                      axes=("sequences", "positions"), atol=0, rtol=0)
        floating = (isinstance(result, torch.Tensor) and (result.is_floating_point()
                                                         or result.dtype == torch.bool)) or (
            isinstance(result, np.ndarray) and not np.issubdtype(result.dtype, np.integer))
        if floating:
            raise Wrong(f"the ids are right, but their dtype is {result.dtype}: position ids index "
                        "a table, so return an integer tensor (.long())")
    if _loops_over_batch(position_ids):
        raise Wrong("the ids are right, but the exercise asks for tensor operations, not a Python "
                    "loop over the batch: a cumulative sum of real along the positions does it")


# ---------------------------------------------------------------------------------------------
# Typical mistakes (tests/test_mistakes.py feeds each one to its checker)


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


def _attention_elementary(queries, keys, values, mask=None, *, ignore_mask=False, invert=False,
                          fill=float("-inf"), check_dead=True, keepdim_max=True):
    scores = queries @ keys.transpose(-2, -1) / math.sqrt(queries.shape[-1])
    if mask is not None and not ignore_mask:
        scores = scores.masked_fill(mask if invert else ~mask, fill)
    row_max = scores.amax(dim=-1, keepdim=True) if keepdim_max else scores.amax(-1)[..., None, :]
    if check_dead and torch.isneginf(scores.amax(dim=-1)).any():
        raise ValueError("a query row has every key masked")
    exponentials = torch.exp(scores - row_max)
    weights = exponentials / exponentials.sum(dim=-1, keepdim=True)
    return weights @ values, weights


def _attention_ignoring_mask(queries, keys, values, mask=None):
    return _attention_elementary(queries, keys, values, mask, ignore_mask=True)


def _attention_inverted_mask(queries, keys, values, mask=None):
    return _attention_elementary(queries, keys, values, mask, invert=True)


def _attention_fill_large_negative(queries, keys, values, mask=None):
    return _attention_elementary(queries, keys, values, mask, fill=-1e9, check_dead=False)


def _attention_max_without_keepdim(queries, keys, values, mask=None):
    return _attention_elementary(queries, keys, values, mask, keepdim_max=False)


def _attention_weights_first(queries, keys, values, mask=None):
    outputs, weights = _attention_elementary(queries, keys, values, mask)
    return weights, outputs


def _attention_torch_softmax(queries, keys, values, mask=None):
    scores = queries @ keys.transpose(-2, -1) / math.sqrt(queries.shape[-1])
    if mask is not None:
        if not mask.any(dim=-1).all():
            raise ValueError("a query row has every key masked")
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ values, weights


def _slot_positions(real):
    return torch.arange(real.shape[1]).expand_as(real).clone()


def _positions_from_one(real):
    return real.long().cumsum(-1)


def _positions_negative_pads(real):
    n_pads = (~real).sum(-1, keepdim=True)
    return torch.arange(real.shape[1])[None, :] - n_pads


def _positions_slots_on_real(real):
    return torch.where(real, torch.arange(real.shape[-1]), 0)


def _positions_float(real):
    return (real.float().cumsum(dim=-1) - 1).clamp(min=0)


def _positions_loop(real):
    rows = []
    for row in real:
        rows.append((row.long().cumsum(-1) - 1).clamp(min=0))
    return torch.stack(rows)


_SHAPES_RIGHT = {"padding": (8, 1, 1, 128), "combined": (8, 1, 4, 128), "scores": (8, 8, 4, 128)}


def _loss_of(real_mask: str) -> float:
    logits, targets, lengths = padding_loss_data()
    slots = torch.arange(6)
    real = {"<=": slots <= lengths[:, None], "left": slots >= 6 - lengths[:, None]}[real_mask]
    return float(F.cross_entropy(logits.reshape(-1, 7), targets.masked_fill(~real, -100).reshape(-1),
                                 ignore_index=-100))


def _loss_per_sequence() -> float:
    logits, targets, lengths = padding_loss_data()
    return float(torch.stack([F.cross_entropy(logits[b, : int(n)], targets[b, : int(n)])
                              for b, n in enumerate(lengths)]).mean())


def _loss_right(as_tensor: bool = False):
    logits, targets, lengths = padding_loss_data()
    real = torch.arange(6) < lengths[:, None]
    loss = F.cross_entropy(logits.reshape(-1, 7), targets.masked_fill(~real, -100).reshape(-1))
    return loss if as_tensor else float(loss)


MISTAKES: dict[str, list[Mistake]] = {
    "05.1": [
        Mistake("unscaled scores (the chapter's weights)", lambda: _causal_weights(1.0), "√d_k"),
        Mistake("masked after the softmax", _late_weights, "before the softmax"),
        Mistake("transposed mask (upper triangle)",
                lambda: _masked_softmax(SCORES_000 / math.sqrt(D_K), _causal(3).T), "transposed"),
        Mistake("masked scores filled with 0", lambda: torch.softmax(
            (SCORES_000 / math.sqrt(D_K)).masked_fill(~_causal(3), 0.0), -1), "not −∞"),
        Mistake("softmax over the queries", lambda: torch.softmax(
            (SCORES_000 / math.sqrt(D_K)).masked_fill(~_causal(3), float("-inf")), 0), "dim=0"),
        Mistake("divided by d_k", lambda: _causal_weights(1 / D_K), "d_k = 2"),
        Mistake("unscaled and masked late", lambda: torch.softmax(SCORES_000, -1).masked_fill(
            ~_causal(3), 0.0), "unscaled weights"),
        Mistake("mask multiplied by −∞", lambda: torch.softmax(
            SCORES_000 / math.sqrt(D_K) + (~_causal(3)).double() * float("-inf"), -1),
            "0 · (−∞)"),
    ],
    "05.2": [
        Mistake("masked before the softmax", lambda: torch.ones(4), "before the softmax"),
        Mistake("kept the future instead of the past", lambda: _late_sums(_causal(4).T),
                "j ≤ i"),
        Mistake("hid the diagonal too", lambda: _late_sums(_causal(4).tril(-1)), "diagonal"),
        Mistake("column sums", lambda: _late_sums(_causal(4), sum_axis=0), "column sums"),
        Mistake("the zeroed weights", lambda: 1 - _late_sums(_causal(4)), "were zeroed"),
        Mistake("scaled the scores", lambda: _late_sums(_causal(4), scale=1 / math.sqrt(2)),
                "used as given"),
    ],
    "05.3": [
        Mistake("upper-left alignment", lambda: {**_SHAPES_RIGHT, "hidden": 4 * 128 - 10},
                "lower-right"),
        Mistake("per batch instead of per sequence and head",
                lambda: {**_SHAPES_RIGHT, "hidden": 6 * 64}, "per sequence"),
        Mistake("square T × T shapes", lambda: {**_SHAPES_RIGHT, "combined": (8, 1, 128, 128),
                                                "hidden": 6}, "query axis"),
        Mistake("padding mask without the singleton axes",
                lambda: {**_SHAPES_RIGHT, "padding": (8, 128), "hidden": 6}, "4 axes"),
        Mistake("keys before queries", lambda: {"padding": (8, 1, 128, 1),
                                                "combined": (8, 1, 128, 4),
                                                "scores": (8, 8, 128, 4), "hidden": 6},
                "keys before the queries"),
        Mistake("three-axis masks", lambda: {**_SHAPES_RIGHT, "padding": (8, 1, 128),
                                             "combined": (8, 4, 128), "hidden": 6}, "heads"),
        Mistake("a full 128 × 128 count", lambda: {**_SHAPES_RIGHT, "hidden": 128 * 127 // 2},
                "128 × 128"),
        Mistake("the visible count", lambda: {**_SHAPES_RIGHT, "hidden": 4 * 128 - 6},
                "visible scores"),
        Mistake("a float count", lambda: {**_SHAPES_RIGHT, "hidden": 6.0}, "float"),
    ],
    "05.4": [
        Mistake("right padding", lambda: ~((torch.arange(4) < torch.tensor([4, 2, 1])[:, None])
                                           [:, None, :] & _causal(4)).any(-1), "right padding"),
        Mistake("True and False swapped", lambda: ~_left_dead_rows([4, 2, 1], 4), "swapped"),
        Mistake("~mask.all instead of ~mask.any", lambda: _dead_4(reduction="~all(-1)"),
                "*some* hidden key"),
        Mistake("> instead of >= in the left padding", lambda: _dead_4(padding="left >"),
                "first real token"),
        Mistake("rows that see every key", lambda: _dead_4(reduction="all(-1)"), "mask.all"),
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
        Mistake("t ≤ length", lambda: _loss_of("<="), "t ≤ length"),
        Mistake("left padding assumed", lambda: _loss_of("left"), "padded on the right"),
        Mistake("mean of per-sequence means", _loss_per_sequence, "per-sequence means"),
        Mistake("a 0-d tensor", lambda: _loss_right(as_tensor=True), "Python float"),
    ],
    "05.6": [
        Mistake("masked after the softmax", lambda: _attention_masked_late, "before the softmax"),
        Mistake("no max subtraction", lambda: _attention_no_max, "subtract the row maximum"),
        Mistake("unscaled scores", lambda: _attention_unscaled, "√d_k"),
        Mistake("no error for a fully masked row", lambda: _attention_no_raise,
                "must raise ValueError"),
        Mistake("mask ignored", lambda: _attention_ignoring_mask, "ignores its mask"),
        Mistake("mask inverted", lambda: _attention_inverted_mask, "True = may attend"),
        Mistake("−1e9 fill, no ValueError", lambda: _attention_fill_large_negative,
                "uniform weights"),
        Mistake("row maximum without keepdim", lambda: _attention_max_without_keepdim,
                "keepdim=True"),
        Mistake("weights returned first", lambda: _attention_weights_first, "in that order"),
        Mistake("torch.softmax instead of elementary operations",
                lambda: _attention_torch_softmax, "elementary operations"),
    ],
    "05.7": [
        Mistake("slot indices (no offset)", lambda: _slot_positions, "offset"),
        Mistake("counting from 1", lambda: _positions_from_one, "off by one"),
        Mistake("negative positions on the pads", lambda: _positions_negative_pads, "pads"),
        Mistake("slot indices kept on the real tokens", lambda: _positions_slots_on_real,
                "slot index"),
        Mistake("a float tensor", lambda: _positions_float, "integer tensor"),
        Mistake("a Python loop over the batch", lambda: _positions_loop, "Python loop"),
    ],
}
