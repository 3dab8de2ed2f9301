"""Checkers for chapter 1, *From text to vectors*.

Every expected value is computed here from first principles (plain counting, plain indexing) —
never with :mod:`tformer.tokenize`, the code under study.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
import torch

from tformer.checks.core import (
    Mistake,
    Wrong,
    call_reader,
    exercise,
    expect_number,
    expect_tensor,
    to_array,
)

GPT2_VOCAB, GPT2_WIDTH, GPT2_CONTEXT = 50_257, 768, 1_024

# Exercise 01.2: a corpus given as word counts (a word never merges with its neighbours).
WORD_COUNTS: dict[str, int] = {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}


def _bpe_merges(word_counts: dict[str, int], n_merges: int) -> list[str]:
    """The first merges of BPE on ``word_counts``, as strings (ties: the pair that sorts first)."""
    words = {tuple(word): count for word, count in word_counts.items()}
    merges: list[str] = []
    for _ in range(n_merges):
        pairs: Counter = Counter()
        for symbols, count in words.items():
            for pair in zip(symbols, symbols[1:]):
                pairs[pair] += count
        best = max(pairs.values())
        pair = min(p for p, count in pairs.items() if count == best)
        merges.append(pair[0] + pair[1])
        merged = {}
        for symbols, count in words.items():
            out, i = [], 0
            while i < len(symbols):
                if symbols[i : i + 2] == pair:
                    out.append(pair[0] + pair[1])
                    i += 2
                else:
                    out.append(symbols[i])
                    i += 1
            merged[tuple(out)] = count
        words = merged
    return merges


# Exercise 01.1: a larger model whose unembedding is not tied to its embedding (LLaMA-2 7B's sizes).
UNTIED_VOCAB, UNTIED_WIDTH, UNTIED_CONTEXT = 32_000, 4_096, 4_096


@exercise("01.1", "Embedding and unembedding of an untied model")
def ex1(answer) -> None:
    """``answer``: the parameters of the token table W_E and the unembedding W_U together, for
    n_vocab = 32,000 and d = 4,096 with untied W_U (no biases)."""
    one = UNTIED_VOCAB * UNTIED_WIDTH
    if isinstance(answer, int | float) and not isinstance(answer, bool):
        if answer == one:
            raise Wrong("that is one matrix; with untied weights W_U is a second d × n_vocab "
                        "matrix, counted separately")
        if answer == GPT2_VOCAB * GPT2_WIDTH:
            raise Wrong("that is GPT-2's table from the chapter; use this model's n_vocab and d")
        if answer == 2 * (UNTIED_VOCAB + UNTIED_WIDTH):
            raise Wrong("you added n_vocab and d; each matrix has n_vocab · d entries")
        if answer in (2 * one * 4, one * 4):
            raise Wrong("that is a size in bytes (float32); count the parameters")
        if answer == UNTIED_CONTEXT * UNTIED_WIDTH or answer == one + UNTIED_CONTEXT * UNTIED_WIDTH:
            raise Wrong("the context length sets T, not a table here (this model has no learned "
                        "position table); count W_E and W_U")
    expect_number(answer, 2 * one, name="the parameter count", rel_tol=0, abs_tol=0.5)


def _first_order_second() -> str:
    """The runner-up pair of the *first* count (the answer of someone who does not recount)."""
    pairs: Counter = Counter()
    for word, count in WORD_COUNTS.items():
        for pair in zip(word, word[1:]):
            pairs[pair] += count
    ranked = sorted(pairs.items(), key=lambda item: (-item[1], item[0]))
    return ranked[1][0][0] + ranked[1][0][1]


@exercise("01.2", "The first two BPE merges, by hand")
def ex2(answer) -> None:
    """``answer``: the first two merges of BPE on WORD_COUNTS, as strings, e.g. ``["ab", "cd"]``."""
    expected = _bpe_merges(WORD_COUNTS, 2)
    if isinstance(answer, str) or not isinstance(answer, Sequence):
        raise Wrong('give a list of two strings, the merged tokens, such as ["ab", "cd"]')
    if len(answer) != 2 or not all(isinstance(token, str) for token in answer):
        raise Wrong('give exactly two strings, such as ["ab", "cd"]')
    answer = [token.strip() for token in answer]
    unweighted = _bpe_merges(dict.fromkeys(WORD_COUNTS, 1), 2)
    if answer == unweighted and unweighted != expected:
        raise Wrong("you counted each word once; weight every pair by the word's count "
                    "(hug occurs 10 times)")
    if answer[0] == expected[0] and answer[1] == _first_order_second():
        raise Wrong("you took the second-largest pair of the first count; recount the pairs "
                    f"after replacing every {expected[0]!r} by one symbol")
    if answer[0] != expected[0]:
        raise Wrong(
            f"the first merge is not {answer[0]!r}: count every adjacent pair in every word, "
            "weighted by the word's count, and take the largest total"
        )
    if answer[1] != expected[1]:
        raise Wrong(
            f"the second merge is not {answer[1]!r}: recount the pairs after replacing every "
            f"{expected[0]!r} by one symbol (pairs that used its letters separately are gone)"
        )


_BATCH, _T = 4, 1_000
_SHAPES_13 = {
    "ids": (_BATCH, _T),
    "X": (_BATCH, _T, GPT2_WIDTH),
    "logits": (_BATCH, _T, GPT2_VOCAB),
}


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
            raise Wrong(f"answer['{key}'] should be a tuple of sizes, e.g. (4, 1000)") from None
        if shape == expected:
            continue
        if GPT2_CONTEXT in shape:
            raise Wrong(f"answer['{key}'] = {shape}: 1,024 is the maximum context; these inputs "
                        "have T = 1,000 tokens")
        if key == "X" and shape[-2:] == (GPT2_VOCAB, GPT2_WIDTH):
            raise Wrong("answer['X'] is the shape of the embedding table W_E; X has one row per "
                        "token of *this* input, for each sequence of the batch")
        if key == "X" and shape == (_BATCH, GPT2_WIDTH, _T):
            raise Wrong("tokens are rows in this book: X is (B, T, d), not (B, d, T)")
        if key == "logits" and shape == (_BATCH, _T, GPT2_WIDTH):
            raise Wrong("the logits have one score per vocabulary token (n_vocab), not d numbers")
        if len(shape) == len(expected) - 1:
            raise Wrong(f"answer['{key}'] = {shape} has no batch axis: B = 4 comes first")
        raise Wrong(f"answer['{key}'] = {shape} is not right")


@exercise("01.4", "Embedding as a one-hot product")
def ex4(embed) -> None:
    """``embed(ids (..., T) long, table (n_vocab, d)) -> (..., T, d)`` via a one-hot product:
    one input ``(T,)`` or a batch ``(B, T)``."""
    generator = torch.Generator().manual_seed(1)
    table = torch.randn(20, 5, generator=generator)
    batch = torch.tensor([[3, 7, 3], [19, 0, 11]])
    for ids in (torch.tensor([3, 7, 3, 0, 19]), torch.tensor([11]), batch):
        result = call_reader(embed, ids.clone(), table.clone(), name="embed")
        value = to_array(result, "embed(ids, table)")
        if value.shape == (*ids.shape, table.shape[0]):
            raise Wrong("this has one column per vocabulary entry: that is the one-hot matrix; "
                        "multiply it by the table")
        if ids.ndim == 2 and value.shape != (*ids.shape, table.shape[1]):
            raise Wrong(f"for a batch of ids of shape {tuple(ids.shape)} (B, T) the result "
                        f"should have shape {(*ids.shape, table.shape[1])} (B, T, d), got "
                        f"{value.shape}: build the one-hot tensor (B, T, n_vocab) along a new "
                        "last axis, e.g. by comparing ids[..., None] with torch.arange(n_vocab)")
        n_vocab = table.shape[0]
        for shifted in (table[(ids - 1) % n_vocab], table[(ids + 1) % n_vocab]):
            if value.shape == tuple(shifted.shape) and np.allclose(value, shifted.numpy()):
                raise Wrong("off by one: id t selects row t of the table (ids start at 0), so "
                            "the 1 of the one-hot row goes in column ids[p]")
        expect_tensor(value, table[ids], name="embed(ids, table)", axes=("positions", "width"))


# Exercise 01.5: a six-token vocabulary with width 2, and a renumbering of its ids.
RENAME_TABLE = torch.arange(12.0).reshape(6, 2)
RENAME_PERMUTATION = torch.tensor([2, 0, 5, 1, 4, 3])  # old id t gets the new id permutation[t]


@exercise("01.5", "Renumbering the vocabulary")
def ex5(answer) -> None:
    """``answer``: the table W_E' with W_E'[RENAME_PERMUTATION[t]] = RENAME_TABLE[t] for every id t."""
    value = to_array(answer, "the renamed table")
    expected = torch.empty_like(RENAME_TABLE)
    expected[RENAME_PERMUTATION] = RENAME_TABLE
    if value.shape == tuple(RENAME_TABLE.shape) and np.allclose(value, RENAME_TABLE.numpy()):
        raise Wrong("that is the table unchanged: move row t to position permutation[t]")
    if value.shape == tuple(RENAME_TABLE.shape) and np.allclose(
        value, RENAME_TABLE[RENAME_PERMUTATION].numpy()
    ):
        raise Wrong("table[permutation] moves the rows the wrong way: row t must land at "
                    "position permutation[t], i.e. W_E'[permutation] = table")
    expect_tensor(value, expected, name="the renamed table", axes=("new ids", "width"))


def _replay(word: bytes, merges: Sequence[tuple[int, int]]) -> list[int]:
    ids = list(word)
    for rank, pair in enumerate(merges):
        out, i = [], 0
        while i < len(ids):
            if i + 1 < len(ids) and (ids[i], ids[i + 1]) == tuple(pair):
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


@exercise("01.6", "Replaying merges on an unseen word")
def ex6(apply_merges, merges) -> None:
    """``apply_merges(word: bytes, merges) -> list[int]``, merges applied in the order learned."""
    merges = _as_merges(merges)
    for word in (b" gardeners", b" cleverly", b"Z\xc3\xbcrich", b"a", b""):
        result = call_reader(apply_merges, word, list(merges), name="apply_merges")
        expected = _replay(word, merges)
        try:
            got = [int(i) for i in result]
        except (TypeError, ValueError):
            raise Wrong("apply_merges should return a list of integer token ids") from None
        if got == list(word) and expected != list(word):
            raise Wrong(f"for {word!r} no merge was applied; replay every merge in order")
        if got != expected:
            raise Wrong(
                f"for {word!r} you returned {got}, expected {expected}: apply merge 0 everywhere, "
                "then merge 1, …; merge r creates id 256 + r"
            )


# Exercise 01.7: ids with a repeated token, and the gradient G = ∂L/∂X that reaches the lookup.
GRAD_N_VOCAB = 6
GRAD_IDS = torch.tensor([4, 1, 4, 0])
GRAD_UPSTREAM = torch.tensor(
    [[1.0, 0.0, 2.0], [0.0, 1.0, 0.0], [3.0, -1.0, 1.0], [0.5, 0.5, 0.5]]
)  # (T, d)


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
    if value.shape == tuple(expected.shape):
        last_wins = torch.zeros_like(expected)
        last_wins[GRAD_IDS] = GRAD_UPSTREAM  # what `grad[ids] = G` does with a repeated id
        first_wins = torch.zeros_like(expected)
        for position in reversed(range(len(GRAD_IDS))):
            first_wins[GRAD_IDS[position]] = GRAD_UPSTREAM[position]
        if np.allclose(value, last_wins.numpy()) or np.allclose(value, first_wins.numpy()):
            raise Wrong("token 4 occurs at two positions: its row receives the SUM of both "
                        "positions' gradients (∂L/∂W_E = Hᵀ G), not one of them")
    expect_tensor(value, expected, name="the gradient of W_E", axes=("vocabulary tokens", "width"),
                  atol=1e-4, rtol=0)


def _embed_one_hot_only(ids, table):
    return torch.nn.functional.one_hot(ids, table.shape[0]).to(table.dtype)


def _embed_transposed(ids, table):
    return table[ids].transpose(-2, -1)


def _embed_one_input_only(ids, table):
    # builds H for a 1-D ids tensor only: a batch of ids gets flattened
    flat = ids.reshape(-1)
    one_hot = torch.zeros(len(flat), table.shape[0], dtype=table.dtype)
    one_hot[torch.arange(len(flat)), flat] = 1.0
    return one_hot @ table


def _embed_off_by_one(ids, table):
    return table[(ids - 1) % table.shape[0]]


def _merges_unapplied(word, merges):
    return list(word)


def _merges_without_offset(word, merges):
    return [i - 256 if i >= 256 else i for i in _replay(word, merges)]


def _renamed_the_wrong_way():
    return RENAME_TABLE[RENAME_PERMUTATION]


def _gradient_last_wins():
    grad = torch.zeros(GRAD_N_VOCAB, GRAD_UPSTREAM.shape[1])
    grad[GRAD_IDS] = GRAD_UPSTREAM
    return grad


def _ex6_merges() -> list[tuple[int, int]]:
    """A few real merges for the mistakes test: ' t', 'he', ' the' and 'er' as byte pairs."""
    return [(32, 116), (104, 101), (256, 257), (101, 114)]


MISTAKES: dict[str, list[Mistake]] = {
    "01.1": [
        Mistake("one matrix only (as if tied)", lambda: UNTIED_VOCAB * UNTIED_WIDTH, "untied"),
        Mistake("GPT-2's printed count", lambda: GPT2_VOCAB * GPT2_WIDTH, "GPT-2"),
        Mistake("bytes instead of parameters", lambda: 8 * UNTIED_VOCAB * UNTIED_WIDTH, "bytes"),
    ],
    "01.2": [
        Mistake("unweighted pair counts", lambda: _bpe_merges(dict.fromkeys(WORD_COUNTS, 1), 2),
                "weight every pair"),
        Mistake("no recount after the first merge", lambda: ["ug", _first_order_second()],
                "recount"),
        Mistake("merges in the wrong order", lambda: ["un", "ug"], "largest total"),
    ],
    "01.3": [
        Mistake("the table's shape for X", lambda: {**_SHAPES_13, "X": (4, 50_257, 768)},
                "embedding table"),
        Mistake("the context instead of T", lambda: {**_SHAPES_13, "X": (4, 1_024, 768)},
                "maximum context"),
        Mistake("logits of width d", lambda: {**_SHAPES_13, "logits": (4, 1_000, 768)},
                "n_vocab"),
        Mistake("no batch axis", lambda: {**_SHAPES_13, "ids": (1_000,)}, "batch axis"),
    ],
    "01.4": [
        Mistake("returned the one-hot matrix", lambda: _embed_one_hot_only, "one-hot matrix"),
        Mistake("transposed result", lambda: _embed_transposed, "transpose"),
        Mistake("ids off by one", lambda: _embed_off_by_one, "off by one"),
        Mistake("a batch of ids flattened", lambda: _embed_one_input_only, "(B, T, d)"),
    ],
    "01.5": [
        Mistake("rows moved the wrong way", _renamed_the_wrong_way, "wrong way"),
        Mistake("table unchanged", lambda: RENAME_TABLE.clone(), "unchanged"),
    ],
    "01.6": [
        Mistake("no merge applied", lambda: _merges_unapplied, "no merge was applied",
                args=(_ex6_merges(),)),
        Mistake("merge ids without the 256 offset", lambda: _merges_without_offset, "256 + r",
                args=(_ex6_merges(),)),
    ],
    "01.7": [
        Mistake("gradient per position (∂L/∂X)", lambda: GRAD_UPSTREAM.clone(),
                "one row per position"),
        Mistake("repeated token: last position wins", _gradient_last_wins, "SUM"),
    ],
}
