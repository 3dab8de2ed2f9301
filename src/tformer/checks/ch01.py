"""Checkers for chapter 1, *From text to vectors*.

Every expected value is computed here from first principles (plain counting, plain indexing) —
never with :mod:`tformer.tokenize`, the code under study. Before the generic comparison, each
checker compares the answer with the exercise's family of wrong variants, computed from the
exercise's own data (a matrix counted once, bytes for parameters, a word left out of the count,
an axis dropped or moved, ids off by one, a merge applied once only, a sum replaced by a mean …),
and names the one that matches.
"""

from __future__ import annotations

import math
import os
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.overrides import TorchFunctionMode

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

GPT2_VOCAB, GPT2_WIDTH, GPT2_CONTEXT = 50_257, 768, 1_024


# ---------------------------------------------------------------------------------------------
# Watching what a reader's function calls (shared with chapters 2 and 3).

_PACKAGE = str(Path(__file__).resolve().parent.parent) + os.sep  # .../tformer/
_CHECKS = str(Path(__file__).resolve().parent) + os.sep  # .../tformer/checks/


class CallWatch(TorchFunctionMode):
    """Inside ``with CallWatch(table) as watch:``, records the torch functions called
    (``watch.names``: ``"one_hot"``, ``"softmax"``, ``"__getitem__"`` …) and how many calls
    there were (``watch.calls``: a loop over the rows makes more for more rows), whether one of the
    ``watched`` tensors was indexed or looked up (``watch.indexed``), and whether the code under
    the check called into ``tformer`` itself (``watch.tformer``). Used to enforce a statement's
    "without …" (a shortcut the exercise rules out) whatever name the reader imported it under;
    it changes no result."""

    LOOKUPS = frozenset({"__getitem__", "index_select", "take", "gather", "embedding",
                         "take_along_dim"})

    def __init__(self, *watched: torch.Tensor) -> None:
        super().__init__()
        self.watched = [tensor for tensor in watched if isinstance(tensor, torch.Tensor)]
        self.names: set[str] = set()
        self.indexed = False
        self.tformer = False
        self.calls = 0

    def _is_watched(self, value: Any) -> bool:
        if not isinstance(value, torch.Tensor):
            return False
        try:
            pointer = value.untyped_storage().data_ptr()
        except Exception:  # noqa: BLE001 - a tensor without storage (meta, subclass)
            return False
        return any(value is tensor or pointer == tensor.untyped_storage().data_ptr()
                   for tensor in self.watched)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        self.names.add(name)
        self.calls += 1
        if name in self.LOOKUPS and any(self._is_watched(arg) for arg in (*args, *kwargs.values())):
            self.indexed = True
        if not self.tformer:
            frame = sys._getframe(1)
            while frame is not None:
                filename = frame.f_code.co_filename
                if filename.startswith(_PACKAGE) and not filename.startswith(_CHECKS):
                    self.tformer = True
                    break
                frame = frame.f_back
        return func(*args, **kwargs)


def watched_call(function: Any, *args: Any, watched: Sequence[torch.Tensor] = (),
                 name: str = "your function") -> tuple[Any, CallWatch]:
    """:func:`call_reader` under a :class:`CallWatch`: ``(result, watch)``."""
    with CallWatch(*watched) as watch:
        result = call_reader(function, *args, name=name)
    return result, watch


def _same(value: np.ndarray, target: Any, atol: float = 1e-5) -> bool:
    """``value`` has ``target``'s shape and values (``target`` a tensor, array or list)."""
    target = target.detach().numpy() if isinstance(target, torch.Tensor) else np.asarray(target)
    return value.shape == target.shape and bool(np.allclose(value, target, atol=atol, rtol=0))


# ---------------------------------------------------------------------------------------------
# 01.1

# Exercise 01.1: a larger model whose unembedding is not tied to its embedding (LLaMA-2 7B's sizes).
UNTIED_VOCAB, UNTIED_WIDTH, UNTIED_CONTEXT = 32_000, 4_096, 4_096
UNTIED_TOTAL = 6.74e9


def _ex1_variants() -> list[tuple[float, str]]:
    """The plausible wrong counts of exercise 01.1 and what each says."""
    n_vocab, d, context = UNTIED_VOCAB, UNTIED_WIDTH, UNTIED_CONTEXT
    one = n_vocab * d
    positions = ("this model has rotary positions, so there is no position table: leave out the "
                 "context × d = 4,096 × 4,096 entries and count only W_E and W_U")
    bias = "W_U has no bias here: leave out the n_vocab (or d) bias entries"
    in_bytes = ("that is a size in bytes, not a number of parameters: a 16-bit float takes 2 "
                "bytes, a 32-bit one 4; the answer counts the parameters")
    in_units = ("that is the count in other units (millions, billions or megabytes); give the "
                "number of parameters itself, an integer")
    variants = [
        (one, "that is one matrix; with untied weights W_U is a second d × n_vocab matrix, "
              "counted separately"),
        (GPT2_VOCAB * GPT2_WIDTH, "that is GPT-2's table from the chapter; use this model's "
                                  "n_vocab and d"),
        (2 * GPT2_VOCAB * GPT2_WIDTH, "that counts two tables with GPT-2's sizes; use this "
                                      "model's n_vocab = 32,000 and d = 4,096"),
        (2 * (n_vocab + d), "you added n_vocab and d; each matrix has n_vocab · d entries"),
        (n_vocab + d, "you added n_vocab and d; each matrix has n_vocab · d entries"),
        (2 * one + n_vocab, bias), (2 * one + d, bias), (2 * one + n_vocab + d, bias),
        (2 * one + context * d, positions), (one + context * d, positions),
        (context * d, positions),
        (2 * one / UNTIED_TOTAL, "that is the share of the model's 6.74 billion parameters "
                                 "(the unchecked follow-up); give the count itself"),
        (100 * 2 * one / UNTIED_TOTAL, "that is the share of the model's 6.74 billion "
                                       "parameters, in per cent; give the count itself"),
        (3 * one, "W_E and W_U are two matrices of n_vocab · d entries each, not three"),
    ]
    for per in (2, 4):
        for tables in (1, 2):
            variants.append((tables * one * per, in_bytes))
            variants.append((tables * one * per / 1e6, in_units))
            variants.append((tables * one * per / 2**20, in_units))
    variants += [(2 * one / 1e6, in_units), (2 * one / 1e9, in_units)]
    return variants


@exercise("01.1", "Embedding and unembedding of an untied model")
def ex1(answer) -> None:
    """``answer``: the parameters of the token table W_E and the unembedding W_U together, for
    n_vocab = 32,000 and d = 4,096 with untied W_U (no biases), as an integer."""
    expected = 2 * UNTIED_VOCAB * UNTIED_WIDTH
    value = as_number(answer, "the parameter count")
    if math.isfinite(value) and value != expected:
        for variant, hint in _ex1_variants():
            # counts exactly; shares and other units as a reader may round them
            if math.isclose(value, variant, rel_tol=1e-9 if variant >= 1e6 else 5e-3):
                raise Wrong(hint)
    expect_number(answer, expected, name="the parameter count", integer=True)


# ---------------------------------------------------------------------------------------------
# 01.2

# Exercise 01.2: a corpus given as word counts (a word never merges with its neighbours).
WORD_COUNTS: dict[str, int] = {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}

Word = tuple[str, ...]


def _apply_merge(words: dict[Word, int], pair: tuple[str, str]) -> dict[Word, int]:
    merged: dict[Word, int] = {}
    for symbols, count in words.items():
        out, i = [], 0
        while i < len(symbols):
            if symbols[i : i + 2] == pair:
                out.append(pair[0] + pair[1])
                i += 2
            else:
                out.append(symbols[i])
                i += 1
        merged[tuple(out)] = merged.get(tuple(out), 0) + count
    return merged


def _pair_counts(words: dict[Word, int]) -> Counter:
    pairs: Counter = Counter()
    for symbols, count in words.items():
        for pair in zip(symbols, symbols[1:]):
            pairs[pair] += count
    return pairs


def _bpe_merges(word_counts: dict[str, int], n_merges: int,
                recount: dict[str, int] | None = None) -> list[str]:
    """The first merges of BPE on ``word_counts``, as strings (ties: the pair that sorts first).
    ``recount``: the word counts used from the second count on (a reader who drops a word there)."""
    words = {tuple(word): count for word, count in word_counts.items()}
    merges: list[str] = []
    for step in range(n_merges):
        if step == 1 and recount is not None:
            words = {tuple(word): count for word, count in recount.items()}
            for merge in merges:
                words = _apply_merge(words, _split_merge(merge, words))
        pairs = _pair_counts(words)
        if not pairs:
            break
        best = max(pairs.values())
        pair = min(p for p, count in pairs.items() if count == best)
        merges.append(pair[0] + pair[1])
        words = _apply_merge(words, pair)
    return merges


def _split_merge(merge: str, words: dict[Word, int]) -> tuple[str, str]:
    """The pair of symbols of ``words`` whose concatenation is ``merge``."""
    for pair in _pair_counts(words):
        if pair[0] + pair[1] == merge:
            return pair
    return (merge, "")


def _counted(words: dict[Word, int], token: str) -> tuple[int, str]:
    """How often the adjacent pair that forms ``token`` occurs in ``words``, and in which words
    (``"hug 10 + hugs 5"``); ``(0, "")`` when no pair forms it."""
    total, parts = 0, []
    for symbols, count in words.items():
        here = sum(count for pair in zip(symbols, symbols[1:]) if pair[0] + pair[1] == token)
        if here:
            total += here
            parts.append(f"{''.join(symbols)} {here}")
    return total, " + ".join(parts)


def _first_order_second() -> str:
    """The runner-up pair of the *first* count (the answer of someone who does not recount)."""
    pairs = _pair_counts({tuple(word): count for word, count in WORD_COUNTS.items()})
    ranked = sorted(pairs.items(), key=lambda item: (-item[1], item[0]))
    return ranked[1][0][0] + ranked[1][0][1]


def _ex2_suffix(answer: list[str], step: int) -> str:
    """Why a reader's count may have gone wrong at merge ``step`` (0 or 1): the variant that
    reproduces the answer, or ``""``."""
    unweighted = _bpe_merges(dict.fromkeys(WORD_COUNTS, 1), 2)
    left_out = [
        word for word in WORD_COUNTS
        if _bpe_merges({w: c for w, c in WORD_COUNTS.items() if w != word}, 2)[: step + 1]
        == answer[: step + 1]
        or (step == 1 and _bpe_merges(WORD_COUNTS, 2, recount={
            w: c for w, c in WORD_COUNTS.items() if w != word})[:2] == answer[:2])
    ]
    once = unweighted[: step + 1] == answer[: step + 1]
    if once and left_out:
        return ("a word is missing from your count, or each word was counted once: count every "
                "word, weighted by its count")
    if once:
        return ("counting each word once gives your answer: weight every pair by the word's "
                "count (hug occurs 10 times)")
    if left_out:
        return "a word is missing from your count: count every word, weighted by its count"
    return ""


@exercise("01.2", "The first two BPE merges, by hand")
def ex2(answer) -> None:
    """``answer``: the first two merges of BPE on WORD_COUNTS, as strings, e.g. ``["ab", "cd"]``."""
    expected = _bpe_merges(WORD_COUNTS, 2)
    if isinstance(answer, str) or not isinstance(answer, Sequence):
        raise Wrong('give a list of two strings, the merged tokens, such as ["ab", "cd"]')
    if len(answer) == 2 and all(
        isinstance(token, Sequence) and not isinstance(token, str) and len(token) == 2
        and all(isinstance(part, str) for part in token) for token in answer
    ):
        raise Wrong('give each new token as one string, the pair joined: ("u", "g") becomes '
                    '"ug", not a pair of symbols')
    if len(answer) != 2 or not all(isinstance(token, str) for token in answer):
        raise Wrong('give exactly two strings, such as ["ab", "cd"]')
    answer = [token.strip() for token in answer]
    if answer == expected:
        return
    words = {tuple(word): count for word, count in WORD_COUNTS.items()}
    if answer[0] != expected[0]:
        n_right, right_in = _counted(words, expected[0])
        n_given, given_in = _counted(words, answer[0])
        if n_given:
            hint = (f"the first merge is not {answer[0]!r}: {expected[0]!r} occurs {n_right} "
                    f"times ({right_in}), {answer[0]!r} only {n_given} ({given_in})")
        else:
            hint = (f"the first merge is not {answer[0]!r}: count every adjacent pair in every "
                    "word, weighted by the word's count, and take the largest total")
        suffix = _ex2_suffix(answer, 0)
        raise Wrong(f"{hint}; {suffix}" if suffix else hint)
    if answer[1] == _first_order_second():
        raise Wrong("you took the second-largest pair of the first count; recount the pairs "
                    f"after replacing every {expected[0]!r} by one symbol")
    after = _apply_merge(words, _split_merge(expected[0], words))
    n_right, right_in = _counted(after, expected[1])
    n_given, given_in = _counted(after, answer[1])
    if answer[1] == expected[0]:
        hint = (f"{expected[0]!r} is merged already; the second merge is the most frequent pair "
                f"after replacing every {expected[0]!r} by one symbol")
    elif n_given:
        hint = (f"after merging {expected[0]!r}, {expected[1]!r} occurs {n_right} times "
                f"({right_in}), {answer[1]!r} only {n_given} ({given_in})")
    else:
        hint = (f"the second merge is not {answer[1]!r}: recount the pairs after replacing every "
                f"{expected[0]!r} by one symbol (pairs that used its letters separately are gone)")
    suffix = _ex2_suffix(answer, 1)
    raise Wrong(f"{hint}; {suffix}" if suffix else hint)


# ---------------------------------------------------------------------------------------------
# 01.3

_BATCH, _T = 4, 1_000
_SHAPES_13 = {
    "ids": (_BATCH, _T),
    "X": (_BATCH, _T, GPT2_WIDTH),
    "logits": (_BATCH, _T, GPT2_VOCAB),
}
_LAYOUTS_13 = {"ids": "(B, T)", "X": "(B, T, d)", "logits": "(B, T, n_vocab)"}
_AXES_13 = {"ids": ("B", "T"), "X": ("B", "T", "d"), "logits": ("B", "T", "n_vocab")}


def _ex3_diagnose(key: str, shape: tuple[int, ...]) -> str:
    """The hint for a wrong shape of ``answer[key]``."""
    expected = _SHAPES_13[key]
    if GPT2_CONTEXT in shape:
        return (f"answer[{key!r}] = {shape}: 1,024 is the maximum context; these inputs have "
                "T = 1,000 tokens")
    if key == "X" and shape[-2:] == (GPT2_VOCAB, GPT2_WIDTH):
        return ("answer['X'] is the shape of the embedding table W_E; X has one row per token "
                "of *this* input, for each sequence of the batch")
    if key == "X" and shape == (_BATCH, GPT2_WIDTH, _T):
        return "tokens are rows in this book: X is (B, T, d), not (B, d, T)"
    if key == "logits" and shape == (_BATCH, GPT2_VOCAB, _T):
        return ("answer['logits'] is (B, n_vocab, T), the layout F.cross_entropy asks for; the "
                "model itself gives one row of n_vocab scores per position: (B, T, n_vocab)")
    if key == "logits" and shape[-1:] == (GPT2_WIDTH,) and GPT2_VOCAB not in shape:
        return "the logits have one score per vocabulary token (n_vocab), not d numbers"
    if key == "ids" and shape == (_BATCH, _T, GPT2_VOCAB):
        return ("the ids are one integer per token, (B, T); (B, T, n_vocab) would be their "
                "one-hot rows")
    if key == "ids" and shape == (_BATCH, _T, GPT2_WIDTH):
        return "(B, T, d) is X; the ids are one integer per token, (B, T)"
    if len(shape) == len(expected) and sorted(shape) == sorted(expected):
        return (f"answer[{key!r}] = {shape} has the right sizes in the wrong order: it should "
                f"be {_LAYOUTS_13[key]}")
    if len(shape) == len(expected) - 1:
        for axis, symbol in enumerate(_AXES_13[key]):
            if shape == expected[:axis] + expected[axis + 1 :]:
                if symbol == "B":
                    return f"answer[{key!r}] = {shape} has no batch axis: B = 4 comes first"
                if symbol == "T" and key == "logits":
                    return (f"answer[{key!r}] = {shape} has scores for one position only (the "
                            "last, as for generating); the model gives n_vocab scores at every "
                            "one of the T positions")
                return (f"answer[{key!r}] = {shape} has no {symbol} axis: it should be "
                        f"{_LAYOUTS_13[key]}")
    if len(shape) == len(expected) + 1:
        return (f"answer[{key!r}] = {shape} has one axis too many: it should have "
                f"{len(expected)}")
    return (f"answer[{key!r}] = {shape} is not right: name each axis (B, T, d or n_vocab) and "
            "take its size from the statement")


@exercise("01.3", "Shapes from ids to logits")
def ex3(answer) -> None:
    """``answer``: dict with the shapes of the token ids, of X and of the logits, for a batch of
    B = 4 inputs of T = 1,000 tokens to GPT-2 small."""
    if not isinstance(answer, dict):
        raise Wrong('give a dict {"ids": (...), "X": (...), "logits": (...)}')
    missing = [key for key in _SHAPES_13 if answer.get(key) is None]
    if missing:
        raise Wrong(f"the dict is missing {', '.join(missing)}")
    for key, expected in _SHAPES_13.items():
        try:
            shape = tuple(int(size) for size in answer[key])
        except (TypeError, ValueError):
            raise Wrong(f"answer[{key!r}] should be a tuple of sizes, e.g. (4, 1000)") from None
        if shape != expected:
            raise Wrong(_ex3_diagnose(key, shape))


# ---------------------------------------------------------------------------------------------
# 01.4

_EX4_N_VOCAB, _EX4_WIDTH = 20, 5


def _ex4_table() -> torch.Tensor:
    return torch.randn(_EX4_N_VOCAB, _EX4_WIDTH, generator=torch.Generator().manual_seed(1))


_EX4_CASES = (  # (label, ids): one input, a batch, inputs without the largest id
    ("single", torch.tensor([3, 7, 3, 0, 19])),
    ("batch", torch.tensor([[3, 7, 3], [19, 0, 11]])),
    ("short", torch.tensor([4, 0, 4, 2])),
    ("token", torch.tensor([11])),
)


def _shifted_rows(table: torch.Tensor, ids: torch.Tensor, shift: int) -> torch.Tensor:
    """Row ids + shift of the table, zero where that row does not exist (what comparing the ids
    with torch.arange(-shift, n_vocab - shift) gives)."""
    n_vocab = table.shape[0]
    moved = ids + shift
    inside = (moved >= 0) & (moved < n_vocab)
    rows = table[moved.clamp(0, n_vocab - 1)]
    return rows * inside[..., None]


def _ex4_value_hint(value: np.ndarray, ids: torch.Tensor, table: torch.Tensor) -> str:
    """A specific hint for a wrong result of embed on ``ids``, or ``""``."""
    n_vocab, width = table.shape
    if value.shape == (*ids.shape, n_vocab):
        return ("this has one column per vocabulary entry: that is the one-hot matrix; "
                "multiply it by the table")
    if ids.ndim == 2 and value.shape != (*ids.shape, width):
        return (f"for a batch of ids of shape {tuple(ids.shape)} (B, T) the result should have "
                f"shape {(*ids.shape, width)} (B, T, d), got {value.shape}: build the one-hot "
                "tensor (B, T, n_vocab) along a new last axis, e.g. by comparing ids[..., None] "
                "with torch.arange(n_vocab)")
    for shift in (-1, 1):
        for rows in (table[(ids + shift) % n_vocab], _shifted_rows(table, ids, shift)):
            if _same(value, rows):
                return ("off by one: id t selects row t of the table (ids start at 0), so the 1 "
                        "of the one-hot row goes in column ids[p]: compare the ids with "
                        "torch.arange(n_vocab), which starts at 0")
    if _same(value, table[ids] * 0):
        return ("every row is zero: no id matched its column; compare ids[..., None] with "
                "torch.arange(n_vocab), so each id gets a 1 in its own column")
    return ""


@exercise("01.4", "Embedding as a one-hot product")
def ex4(embed) -> None:
    """``embed(ids (..., T) long, table (n_vocab, d)) -> (..., T, d)`` via a one-hot product:
    one input ``(T,)`` or a batch ``(B, T)``, without indexing the table and without
    ``nn.functional.one_hot``."""
    table = _ex4_table()
    outcomes: dict[str, tuple[bool, str, np.ndarray | None]] = {}  # label -> (right, hint, value)
    for label, ids in _EX4_CASES:
        given = table.clone()
        try:
            result, watch = watched_call(embed, ids.clone(), given, watched=[given], name="embed")
        except Wrong as wrong:
            outcomes[label] = (False, str(wrong), None)
            continue
        if "one_hot" in watch.names:
            raise Wrong("embed calls nn.functional.one_hot, the shortcut the exercise rules out: "
                        "build H yourself by comparing ids[..., None] with torch.arange(n_vocab)")
        if watch.indexed or "embedding" in watch.names:
            raise Wrong("embed looks the rows up in the table (indexing or F.embedding); the "
                        "exercise asks for the product H @ table of the one-hot rows with it")
        value = to_array(result, "embed(ids, table)")
        right = _same(value, table[ids])
        outcomes[label] = (right, "" if right else _ex4_value_hint(value, ids, table), value)
    if all(right for right, _, _ in outcomes.values()):
        return
    one_d = ("single", "short", "token")
    if outcomes["batch"][0] and not any(outcomes[label][0] for label in one_d):
        raise Wrong("embed works on a batch (B, T) but not on one input (T,): index with "
                    "ids[..., None], which adds the new last axis for ids of any shape")
    has_largest = {label: int(ids.max()) == _EX4_N_VOCAB - 1 for label, ids in _EX4_CASES}
    if all(outcomes[label][0] == has_largest[label] for label in outcomes):
        raise Wrong("embed is right only when the ids contain the largest id n_vocab − 1: the "
                    "one-hot rows need n_vocab = table.shape[0] columns, whatever ids occur "
                    "(ids.max() + 1 is too few)")
    for label, ids in _EX4_CASES:
        right, hint, value = outcomes[label]
        if right:
            continue
        if hint:
            raise Wrong(hint)
        if value is None:  # the call raised: call_reader's message names the exception
            raise Wrong(outcomes[label][1])
        expect_tensor(value, table[ids], name="embed(ids, table)",
                      axes=("positions", "width") if ids.ndim == 1 else ("batch", "positions",
                                                                         "width"))


# ---------------------------------------------------------------------------------------------
# 01.5

# Exercise 01.5: a six-token vocabulary with width 2, and a renumbering of its ids.
RENAME_TABLE = torch.arange(12.0).reshape(6, 2)
RENAME_PERMUTATION = torch.tensor([2, 0, 5, 1, 4, 3])  # old id t gets the new id permutation[t]
RENAME_CHECK_IDS = torch.tensor([0, 5, 5, 2])  # the old ids the statement checks on


@exercise("01.5", "Renumbering the vocabulary")
def ex5(answer) -> None:
    """``answer``: the table W_E' (a tensor or array) with W_E'[RENAME_PERMUTATION[t]] =
    RENAME_TABLE[t] for every id t."""
    value = to_array(answer, "the renamed table")
    expected = torch.empty_like(RENAME_TABLE)
    expected[RENAME_PERMUTATION] = RENAME_TABLE
    table, permutation = RENAME_TABLE.numpy(), RENAME_PERMUTATION
    looked_up = RENAME_TABLE[RENAME_CHECK_IDS]
    if _same(value, looked_up):
        raise Wrong("that is X for the ids [0, 5, 5, 2], the statement's check; the answer is "
                    "the whole renamed table, one row per id (6 × 2)")
    if _same(value, table):
        raise Wrong("that is the table unchanged: move row t to position permutation[t]")
    if _same(value, RENAME_TABLE[RENAME_PERMUTATION]):
        raise Wrong("table[permutation] moves the rows the wrong way: row t must land at "
                    "position permutation[t], i.e. W_E'[permutation] = table")
    if value.shape == table.shape:
        moved = [t for t in range(len(permutation))
                 if np.allclose(value[int(permutation[t])], table[t])]
        missing = [t for t in range(len(permutation)) if t not in moved]
        if moved and 0 < len(missing) <= 2:
            old = ", ".join(str(t) for t in missing)
            new = ", ".join(str(int(permutation[t])) for t in missing)
            if missing == [len(permutation) - 1]:
                raise Wrong(f"the row of the last old id t = {old} never reached position "
                            f"permutation[{old}] = {new}: the loop stops one id early — run it "
                            "over range(len(permutation))")
            raise Wrong(f"the rows of old ids {old} did not reach their new positions {new}: "
                        "move the row of every old id t to position permutation[t]")
    if not isinstance(answer, torch.Tensor | np.ndarray) and _same(value, expected):
        raise Wrong("the rows are right, but answer is a Python list: a table is a tensor, so "
                    "that it can be indexed by a tensor of ids (answer[permutation[old_ids]]); "
                    "build it with torch.empty_like(table) or torch.tensor(...)")
    expect_tensor(value, expected, name="the renamed table", axes=("new ids", "width"))


# ---------------------------------------------------------------------------------------------
# 01.6


def _replay(word: bytes, merges: Sequence[tuple[int, int]], *, first_only: bool = False,
            offset: int = 256, keep_last: bool = True) -> list[int]:
    """Merge 0 everywhere, then merge 1, …; merge r makes id ``offset + r``. The variants:
    ``first_only`` merges only the first occurrence of each pair; ``keep_last=False`` scans with
    ``while i < len(ids) - 1`` (the last symbol is lost when it is not merged)."""
    ids = list(word)
    for rank, pair in enumerate(merges):
        out, i, done = [], 0, False
        while i < (len(ids) if keep_last else len(ids) - 1):
            if not done and i + 1 < len(ids) and (ids[i], ids[i + 1]) == tuple(pair):
                out.append(offset + rank)
                i += 2
                done = first_only
            else:
                out.append(ids[i])
                i += 1
        ids = out
    return ids


def _greedy(word: bytes, merges: Sequence[tuple[int, int]]) -> list[int]:
    """One left-to-right scan merging any known pair of bytes where it meets it."""
    rank_of = {tuple(pair): rank for rank, pair in enumerate(merges)}
    ids, out, i = list(word), [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) in rank_of:
            out.append(256 + rank_of[(ids[i], ids[i + 1])])
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def _reversed_order(word: bytes, merges: Sequence[tuple[int, int]]) -> list[int]:
    """The merges applied from the last learned to the first (each keeps its id 256 + r)."""
    ids = list(word)
    for rank in reversed(range(len(merges))):
        out, i = [], 0
        while i < len(ids):
            if i + 1 < len(ids) and (ids[i], ids[i + 1]) == tuple(merges[rank]):
                out.append(256 + rank)
                i += 2
            else:
                out.append(ids[i])
                i += 1
        ids = out
    return ids


def _as_merges(merges) -> list[tuple[int, int]]:
    """The merges as a list of integer pairs, or a Wrong naming what to pass."""
    hint = ("pass the tokenizer's merges as the second argument: "
            "checks.ch01.ex6(apply_merges, tokenizer.merges)")
    if isinstance(merges, str | bytes) or not isinstance(merges, Sequence) or len(merges) > 5000:
        raise Wrong(hint)
    pairs = []
    for rank, pair in enumerate(merges):
        if (
            not isinstance(pair, Sequence) or len(pair) != 2
            or not all(isinstance(i, int | np.integer) and not isinstance(i, bool) for i in pair)
            or not all(0 <= int(i) < 256 + rank for i in pair)
        ):
            raise Wrong(hint)
        pairs.append((int(pair[0]), int(pair[1])))
    return pairs


# The checker's own merges (not the notebook's): 'bc', 'ab', 'bcbc', 'a'+'bc' — pairs that repeat
# inside a word, a merge that overlaps an earlier one, and merges of merged tokens.
EX6_OWN_MERGES = [(98, 99), (97, 98), (256, 256), (97, 256)]
EX6_OWN_WORDS = (b"abcabc", b"bcbcx", b"abab", b"xabc", b"a", b"")
EX6_WORDS = (b" gardeners", b" cleverly", b"Z\xc3\xbcrich", b"a", b"")


def _ex6_hint(got: list[int], word: bytes, merges: list[tuple[int, int]],
              notebook: list[tuple[int, int]], own: bool) -> str:
    """The variant of apply_merges that gives ``got`` for ``word``, as a hint, or ``""``."""
    expected = _replay(word, merges)
    variants = [
        (list(word), f"for {word!r} no merge was applied; replay every merge in order"),
        (_replay(word, merges, offset=255),
         "merge r makes the id 256 + r, not 255 + r (ids 0–255 are the bytes themselves)"),
        (_replay(word, merges, offset=257), "merge r makes the id 256 + r, not 257 + r"),
        (_replay(word, merges, offset=0),
         "merge r makes the id 256 + r; ids 0–255 are the bytes themselves"),
        (_replay(word, merges, keep_last=False),
         f"for {word!r} the last symbol is lost: scan while i < len(ids) and copy a symbol "
         "that is not merged, the last one too"),
        (_replay(word, merges, first_only=True),
         f"for {word!r} only the first occurrence of a pair was merged: merge r replaces "
         "every occurrence of its pair in the word"),
        (_greedy(word, merges),
         f"for {word!r} you merged pairs in the order they appear in the word: apply the merges "
         "in the order they were learned — merge 0 everywhere, then merge 1, … (a merged token "
         "can merge again)"),
        (_reversed_order(word, merges), "the merges ran from the last learned to the first: "
                                        "apply merge 0 first, then merge 1, …"),
    ]
    if own:
        variants.insert(0, (_replay(word, notebook),
                            "apply_merges ignores its merges argument: with other merges than "
                            "the notebook's tokenizer it returns the notebook's tokens; use the "
                            "merges it is given"))
    for variant, hint in variants:
        if variant != expected and got == variant:
            return hint
    return ""


@exercise("01.6", "Replaying merges on an unseen word")
def ex6(apply_merges, merges) -> None:
    """``apply_merges(word: bytes, merges) -> list[int]``, merges applied in the order learned;
    tried on the notebook's merges and on the checker's own."""
    notebook = _as_merges(merges)
    for merge_list, words, own in ((notebook, EX6_WORDS, False),
                                   (EX6_OWN_MERGES, EX6_OWN_WORDS, True)):
        for word in words:
            result = call_reader(apply_merges, word, list(merge_list), name="apply_merges")
            expected = _replay(word, merge_list)
            try:
                got = [int(i) for i in result]
            except (TypeError, ValueError):
                raise Wrong("apply_merges should return a list of integer token ids") from None
            if got == expected:
                continue
            hint = _ex6_hint(got, word, merge_list, notebook, own)
            if hint:
                raise Wrong(hint)
            shown = f" (merges {merge_list})" if own else ""
            raise Wrong(
                f"for {word!r}{shown} you returned {got}, expected {expected}: apply merge 0 "
                "everywhere, then merge 1, …; merge r creates id 256 + r"
            )


# ---------------------------------------------------------------------------------------------
# 01.7

# Exercise 01.7: ids with a repeated token, and the gradient G = ∂L/∂X that reaches the lookup.
GRAD_N_VOCAB = 6
GRAD_IDS = torch.tensor([4, 1, 4, 0])
GRAD_UPSTREAM = torch.tensor(
    [[1.0, 0.0, 2.0], [0.0, 1.0, 0.0], [3.0, -1.0, 1.0], [0.5, 0.5, 0.5]]
)  # (T, d)


def _ex7_variants(expected: torch.Tensor) -> list[tuple[torch.Tensor, str]]:
    """The plausible wrong gradients of exercise 01.7 and what each says."""
    ids, upstream = GRAD_IDS, GRAD_UPSTREAM
    repeated = ("token 4 occurs at two positions: its row receives the SUM of both positions' "
                "gradients (∂L/∂W_E = Hᵀ G), not one of them")
    last_wins = torch.zeros_like(expected)
    last_wins[ids] = upstream  # what `grad[ids] = G` does with a repeated id
    first_wins = torch.zeros_like(expected)
    for position in reversed(range(len(ids))):
        first_wins[ids[position]] = upstream[position]
    counts = torch.bincount(ids, minlength=GRAD_N_VOCAB).clamp(min=1).to(expected.dtype)
    by_position = torch.zeros_like(expected)
    by_position[: len(ids)] = upstream
    shifted = [torch.zeros_like(expected) for _ in range(2)]
    for position, token in enumerate(ids.tolist()):
        for k, shift in enumerate((-1, 1)):
            if 0 <= token + shift < GRAD_N_VOCAB:
                shifted[k][token + shift] += upstream[position]
    return [
        (last_wins, repeated), (first_wins, repeated),
        (expected / counts[:, None],
         "you averaged the positions of token 4; its row receives their SUM: each occurrence "
         "adds its own gradient (∂L/∂W_E = Hᵀ G)"),
        (by_position,
         "row p of your answer is the gradient of position p; it belongs to the row of the "
         "token at that position, row ids[p] (∂L/∂W_E = Hᵀ G)"),
        (-expected, "that is −∂L/∂W_E, the direction of a gradient-descent step; give the "
                    "gradient itself, Hᵀ G"),
        (upstream.sum(0).expand_as(expected),
         "every row got the sum of all positions; only the rows of tokens that occur receive a "
         "gradient, each the sum over its own positions"),
        (shifted[0], "off by one: the gradient of position p goes to row ids[p] (ids start at 0), "
                     "not to row ids[p] − 1"),
        (shifted[1], "off by one: the gradient of position p goes to row ids[p] (ids start at 0), "
                     "not to row ids[p] + 1"),
    ]


@exercise("01.7", "The gradient of the embedding table")
def ex7(answer) -> None:
    """``answer``: ∂L/∂W_E, shape (GRAD_N_VOCAB, d), for X = W_E[GRAD_IDS] and ∂L/∂X = GRAD_UPSTREAM."""
    expected = torch.zeros(GRAD_N_VOCAB, GRAD_UPSTREAM.shape[1])
    for position, token in enumerate(GRAD_IDS.tolist()):  # plain loop: row t sums its positions
        expected[token] += GRAD_UPSTREAM[position]
    value = to_array(answer, "the gradient of W_E")
    if value.shape == tuple(GRAD_UPSTREAM.shape):
        raise Wrong("that has one row per position, like ∂L/∂X; ∂L/∂W_E has one row per "
                    f"vocabulary token ({GRAD_N_VOCAB} rows)")
    if not _same(value, expected, atol=1e-4):
        for variant, hint in _ex7_variants(expected):
            if _same(value, variant, atol=1e-4):
                raise Wrong(hint)
    expect_tensor(value, expected, name="the gradient of W_E", axes=("vocabulary tokens", "width"),
                  atol=1e-4, rtol=0)


# ---------------------------------------------------------------------------------------------
# Typical mistakes (tests/test_mistakes.py feeds each to its checker).


def _embed_one_hot_only(ids, table):
    return (ids[..., None] == torch.arange(table.shape[0])).to(table.dtype)


def _embed_transposed(ids, table):
    one_hot = (ids[..., None] == torch.arange(table.shape[0])).to(table.dtype)
    return (one_hot @ table).transpose(-2, -1)


def _embed_one_input_only(ids, table):
    # builds H for a 1-D ids tensor only: a batch of ids gets flattened
    flat = ids.reshape(-1)
    one_hot = torch.zeros(len(flat), table.shape[0], dtype=table.dtype)
    one_hot[torch.arange(len(flat)), flat] = 1.0
    return one_hot @ table


def _embed_off_by_one(ids, table):
    one_hot = (ids[..., None] == torch.arange(1, table.shape[0] + 1)).to(table.dtype)
    return one_hot @ table


def _embed_library_one_hot(ids, table):
    return torch.nn.functional.one_hot(ids, table.shape[0]).to(table.dtype) @ table


def _embed_indexing(ids, table):
    return table[ids]


def _embed_width_from_ids(ids, table):
    one_hot = (ids[..., None] == torch.arange(int(ids.max()) + 1)).to(table.dtype)
    return one_hot @ table


def _embed_batch_only(ids, table):
    one_hot = (ids[:, :, None] == torch.arange(table.shape[0])).to(table.dtype)
    return one_hot @ table


def _merges_unapplied(word, merges):
    return list(word)


def _merges_without_offset(word, merges):
    return [i - 256 if i >= 256 else i for i in _replay(word, merges)]


def _merges_first_only(word, merges):
    return _replay(word, merges, first_only=True)


def _merges_drop_last(word, merges):
    return _replay(word, merges, keep_last=False)


def _merges_global(word, merges):
    return _replay(word, _ex6_merges())  # the notebook's merges, whatever it is given


def _renamed_the_wrong_way():
    return RENAME_TABLE[RENAME_PERMUTATION]


def _renamed_but_the_last():
    renamed = torch.zeros_like(RENAME_TABLE)
    for t in range(len(RENAME_PERMUTATION) - 1):
        renamed[RENAME_PERMUTATION[t]] = RENAME_TABLE[t]
    return renamed


def _renamed_as_list():
    renamed = torch.empty_like(RENAME_TABLE)
    renamed[RENAME_PERMUTATION] = RENAME_TABLE
    return renamed.tolist()


def _gradient_last_wins():
    grad = torch.zeros(GRAD_N_VOCAB, GRAD_UPSTREAM.shape[1])
    grad[GRAD_IDS] = GRAD_UPSTREAM
    return grad


def _gradient(reduce: str = "sum"):
    grad = torch.zeros(GRAD_N_VOCAB, GRAD_UPSTREAM.shape[1]).index_add_(0, GRAD_IDS, GRAD_UPSTREAM)
    if reduce == "mean":
        counts = torch.bincount(GRAD_IDS, minlength=GRAD_N_VOCAB).clamp(min=1)
        grad = grad / counts[:, None]
    return grad


def _gradient_by_position():
    grad = torch.zeros(GRAD_N_VOCAB, GRAD_UPSTREAM.shape[1])
    grad[: len(GRAD_IDS)] = GRAD_UPSTREAM
    return grad


def _ex6_merges() -> list[tuple[int, int]]:
    """A few real merges for the mistakes test: ' t', 'he', ' the' and 'er' as byte pairs."""
    return [(32, 116), (104, 101), (256, 257), (101, 114)]


_ONE = UNTIED_VOCAB * UNTIED_WIDTH

MISTAKES: dict[str, list[Mistake]] = {
    "01.1": [
        Mistake("one matrix only (as if tied)", lambda: _ONE, "untied"),
        Mistake("GPT-2's printed count", lambda: GPT2_VOCAB * GPT2_WIDTH, "GPT-2"),
        Mistake("bytes instead of parameters", lambda: 8 * _ONE, "bytes"),
        Mistake("float16 bytes of both tables", lambda: 2 * 2 * _ONE, "bytes"),
        Mistake("a position table added", lambda: 2 * _ONE + UNTIED_CONTEXT * UNTIED_WIDTH,
                "no position table"),
        Mistake("a bias on W_U", lambda: 2 * _ONE + UNTIED_VOCAB, "no bias"),
        Mistake("a float count", lambda: 2 * 32e3 * 4.096e3, "integer"),
        Mistake("the share of the model", lambda: 2 * _ONE / UNTIED_TOTAL, "share"),
    ],
    "01.2": [
        Mistake("unweighted pair counts", lambda: _bpe_merges(dict.fromkeys(WORD_COUNTS, 1), 2),
                "counted once"),
        Mistake("no recount after the first merge", lambda: ["ug", _first_order_second()],
                "recount"),
        Mistake("merges in the wrong order", lambda: ["un", "ug"], "'ug' occurs 20 times"),
        Mistake("a word left out", lambda: ["pu", "pun"], "missing from your count"),
        Mistake("pairs of symbols", lambda: [("u", "g"), ("u", "n")], "one string"),
    ],
    "01.3": [
        Mistake("the table's shape for X", lambda: {**_SHAPES_13, "X": (4, 50_257, 768)},
                "embedding table"),
        Mistake("the context instead of T", lambda: {**_SHAPES_13, "X": (4, 1_024, 768)},
                "maximum context"),
        Mistake("logits of width d", lambda: {**_SHAPES_13, "logits": (4, 1_000, 768)},
                "n_vocab"),
        Mistake("no batch axis", lambda: {**_SHAPES_13, "ids": (1_000,)}, "batch axis"),
        Mistake("logits of the last position only", lambda: {**_SHAPES_13, "logits": (4, 50_257)},
                "one position only"),
        Mistake("logits laid out for cross_entropy",
                lambda: {**_SHAPES_13, "logits": (4, 50_257, 1_000)}, "cross_entropy"),
    ],
    "01.4": [
        Mistake("returned the one-hot matrix", lambda: _embed_one_hot_only, "one-hot matrix"),
        Mistake("transposed result", lambda: _embed_transposed, "transpose"),
        Mistake("ids off by one", lambda: _embed_off_by_one, "off by one"),
        Mistake("a batch of ids flattened", lambda: _embed_one_input_only, "(B, T, d)"),
        Mistake("nn.functional.one_hot", lambda: _embed_library_one_hot, "rules out"),
        Mistake("indexing the table", lambda: _embed_indexing, "looks the rows up"),
        Mistake("n_vocab from the ids", lambda: _embed_width_from_ids, "table.shape[0]"),
        Mistake("a hard-coded batch axis", lambda: _embed_batch_only, "not on one input"),
    ],
    "01.5": [
        Mistake("rows moved the wrong way", _renamed_the_wrong_way, "wrong way"),
        Mistake("table unchanged", lambda: RENAME_TABLE.clone(), "unchanged"),
        Mistake("loop stops one early", _renamed_but_the_last, "one id early"),
        Mistake("a Python list", _renamed_as_list, "Python list"),
        Mistake("X for the checked ids", lambda: RENAME_TABLE[RENAME_CHECK_IDS], "whole renamed"),
    ],
    "01.6": [
        Mistake("no merge applied", lambda: _merges_unapplied, "no merge was applied",
                args=(_ex6_merges(),)),
        Mistake("merge ids without the 256 offset", lambda: _merges_without_offset, "256 + r",
                args=(_ex6_merges(),)),
        Mistake("first occurrence only", lambda: _merges_first_only, "first occurrence",
                args=(_ex6_merges(),)),
        Mistake("last symbol dropped", lambda: _merges_drop_last, "last symbol is lost",
                args=(_ex6_merges(),)),
        Mistake("merges argument ignored", lambda: _merges_global, "ignores its merges",
                args=(_ex6_merges(),)),
        Mistake("greedy scan in word order", lambda: _greedy, "order they were learned",
                args=(_ex6_merges(),)),
    ],
    "01.7": [
        Mistake("gradient per position (∂L/∂X)", lambda: GRAD_UPSTREAM.clone(),
                "one row per position"),
        Mistake("repeated token: last position wins", _gradient_last_wins, "SUM"),
        Mistake("repeated token averaged", lambda: _gradient("mean"), "averaged"),
        Mistake("rows by position", _gradient_by_position, "row ids[p]"),
        Mistake("minus the gradient", lambda: -_gradient(), "gradient-descent step"),
    ],
}
