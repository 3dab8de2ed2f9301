"""Checkers for chapter 1, *From text to vectors*.

Every expected value is computed here from first principles (plain counting, plain indexing) —
never with :mod:`tformer.tokenize`, the code under study.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
import torch

from tformer.checks.core import Wrong, call_reader, exercise, expect_number, expect_tensor, to_array

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


@exercise("01.1", "GPT-2's token embedding table")
def ex1(answer) -> None:
    """``answer``: the number of parameters in GPT-2's token embedding table."""
    expected = GPT2_VOCAB * GPT2_WIDTH
    if isinstance(answer, int | float) and not isinstance(answer, bool):
        if answer == GPT2_VOCAB + GPT2_WIDTH:
            raise Wrong("you added n_vocab and d; the table has one row of d numbers per token")
        if answer == expected * 4:
            raise Wrong("that is the size in bytes (float32); count the parameters")
        if answer == GPT2_CONTEXT * GPT2_WIDTH:
            raise Wrong("that is the position table (1,024 × 768); the token table has n_vocab rows")
    expect_number(answer, expected, name="the parameter count", rel_tol=0, abs_tol=0.5)


@exercise("01.2", "The first two BPE merges, by hand")
def ex2(answer) -> None:
    """``answer``: the first two merges of BPE on WORD_COUNTS, as strings, e.g. ``["ab", "cd"]``."""
    expected = _bpe_merges(WORD_COUNTS, 2)
    if isinstance(answer, str) or not isinstance(answer, Sequence):
        raise Wrong('give a list of two strings, the merged tokens, such as ["ab", "cd"]')
    if len(answer) != 2 or not all(isinstance(token, str) for token in answer):
        raise Wrong('give exactly two strings, such as ["ab", "cd"]')
    answer = [token.strip() for token in answer]
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


@exercise("01.3", "Shape of the input matrix")
def ex3(answer) -> None:
    """``answer``: the shape (T, d) of X for a 1,000-token input to GPT-2 small."""
    expected = (1_000, GPT2_WIDTH)
    if isinstance(answer, torch.Size):
        answer = tuple(answer)
    if not isinstance(answer, tuple | list) or len(answer) != 2:
        raise Wrong("give the shape as a pair of integers (rows, columns)")
    shape = tuple(int(x) for x in answer) if all(
        isinstance(x, int | np.integer) and not isinstance(x, bool) for x in answer
    ) else None
    if shape is None:
        raise Wrong("give the shape as a pair of integers (rows, columns)")
    if shape == (GPT2_VOCAB, GPT2_WIDTH):
        raise Wrong("that is the embedding table E; X has one row per token of *this* input")
    if shape == (GPT2_CONTEXT, GPT2_WIDTH):
        raise Wrong("1,024 is the maximum context; this input has T = 1,000 tokens")
    if shape == expected[::-1]:
        raise Wrong("tokens are rows in this book: (T, d), not (d, T)")
    if shape != expected:
        raise Wrong(f"{shape} is not right: rows = tokens of the input, columns = width d")


@exercise("01.4", "Embedding as a one-hot product")
def ex4(embed) -> None:
    """``embed(ids (T,) long, table (n_vocab, d)) -> (T, d)`` via a one-hot matrix product."""
    generator = torch.Generator().manual_seed(1)
    table = torch.randn(20, 5, generator=generator)
    for ids in (torch.tensor([3, 7, 3, 0, 19]), torch.tensor([11])):
        result = call_reader(embed, ids.clone(), table.clone(), name="embed")
        value = to_array(result, "embed(ids, table)")
        if value.shape == (len(ids), table.shape[0]):
            raise Wrong("this has one column per vocabulary entry: that is the one-hot matrix; "
                        "multiply it by the table")
        expect_tensor(value, table[ids], name="embed(ids, table)", axes=("positions", "width"))


# Exercise 01.5: a six-token vocabulary with width 2, and a renumbering of its ids.
RENAME_TABLE = torch.arange(12.0).reshape(6, 2)
RENAME_PERMUTATION = torch.tensor([2, 0, 5, 1, 4, 3])  # old id t gets the new id permutation[t]


@exercise("01.5", "Renumbering the vocabulary")
def ex5(answer) -> None:
    """``answer``: the table E' with E'[RENAME_PERMUTATION[t]] = RENAME_TABLE[t] for every id t."""
    value = to_array(answer, "the renamed table")
    expected = torch.empty_like(RENAME_TABLE)
    expected[RENAME_PERMUTATION] = RENAME_TABLE
    if value.shape == tuple(RENAME_TABLE.shape) and np.allclose(
        value, RENAME_TABLE[RENAME_PERMUTATION].numpy()
    ):
        raise Wrong("table[permutation] moves the rows the wrong way: row t must land at "
                    "position permutation[t], i.e. E'[permutation] = table")
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
    """``answer``: ∂L/∂E, shape (GRAD_N_VOCAB, d), for X = E[GRAD_IDS] and ∂L/∂X = GRAD_UPSTREAM."""
    expected = torch.zeros(GRAD_N_VOCAB, GRAD_UPSTREAM.shape[1])
    for position, token in enumerate(GRAD_IDS.tolist()):  # plain loop: row t sums its positions
        expected[token] += GRAD_UPSTREAM[position]
    value = to_array(answer, "the gradient of E")
    if value.shape == tuple(GRAD_UPSTREAM.shape):
        raise Wrong("that has one row per position, like ∂L/∂X; ∂L/∂E has one row per "
                    f"vocabulary token ({GRAD_N_VOCAB} rows)")
    if value.shape == tuple(expected.shape):
        last_wins = torch.zeros_like(expected)
        last_wins[GRAD_IDS] = GRAD_UPSTREAM  # what `grad[ids] = G` does with a repeated id
        first_wins = torch.zeros_like(expected)
        for position in reversed(range(len(GRAD_IDS))):
            first_wins[GRAD_IDS[position]] = GRAD_UPSTREAM[position]
        if np.allclose(value, last_wins.numpy()) or np.allclose(value, first_wins.numpy()):
            raise Wrong("token 4 occurs at two positions: its row receives the SUM of both "
                        "positions' gradients (∂L/∂E = Hᵀ G), not one of them")
    expect_tensor(value, expected, name="the gradient of E", axes=("vocabulary tokens", "width"),
                  atol=1e-4, rtol=0)
