"""Tests for the tiny byte-pair-encoding tokenizer, ``tformer.tokenize``.

Expected values come from hand-worked examples (the classic ``aaabdaaabac`` string) and from
properties any BPE must satisfy, never from output of the code under test pasted back.
"""

from __future__ import annotations

import pytest

from tformer.data.text import load_text
from tformer.tokenize import N_BYTES, BPETokenizer, pretokenize, train_bpe

HAND_TEXT = "aaabdaaabac"


@pytest.fixture(scope="module")
def corpus() -> str:
    return load_text()


@pytest.fixture(scope="module")
def tokenizer(corpus: str) -> BPETokenizer:
    return train_bpe(corpus, 300)


def test_pretokenize_is_lossless_and_keeps_leading_spaces() -> None:
    text = "The cat, 42 dogs!\n\n  end"
    chunks = pretokenize(text)
    assert "".join(chunks) == text
    assert chunks[:4] == ["The", " cat", ",", " 42"]


def test_hand_worked_merges() -> None:
    # By hand: "aa" occurs 4 times (twice in each "aaab"), so it is merged first; then "a"+"b"
    # and "aa"+"a" tie at 2 — the tie goes to the pair whose bytes sort first, ("a", "b");
    # then "aa"+"ab" occurs twice.
    tok = train_bpe(HAND_TEXT, 3)
    assert [tok.token_text(N_BYTES + r) for r in range(3)] == ["aa", "ab", "aaab"]
    assert tok.merge_counts == [4, 2, 2]
    assert tok.pieces(HAND_TEXT) == ["aaab", "d", "aaab", "a", "c"]
    assert tok.n_vocab == N_BYTES + 3


def test_training_stops_when_no_pair_repeats() -> None:
    tok = train_bpe("abcdef", 10)
    assert tok.merges == []
    assert tok.encode("abc") == [ord("a"), ord("b"), ord("c")]


def test_round_trip(tokenizer: BPETokenizer, corpus: str) -> None:
    for text in [corpus[:2000], "Unseen words: zebra-crossing, Ωmega, 東京, emoji 🙂!", "", "  \n"]:
        assert tokenizer.decode(tokenizer.encode(text)) == text


def test_zero_merges_is_plain_utf8(corpus: str) -> None:
    tok = train_bpe(corpus, 0)
    text = "héllo"
    assert tok.encode(text) == list(text.encode("utf-8"))


def test_merges_shorten_the_sequence(corpus: str) -> None:
    text = corpus[:5000]
    lengths = [len(train_bpe(corpus, n).encode(text)) for n in (0, 50, 150, 300)]
    assert lengths[0] == len(text.encode("utf-8"))
    assert all(later < earlier for earlier, later in zip(lengths, lengths[1:]))


def test_each_merge_is_the_most_frequent_pair(corpus: str) -> None:
    # Independent recount: after the first merge is applied, no remaining pair may be more
    # frequent than the count recorded for the second merge.
    tok = train_bpe(corpus, 2)
    words = [tuple(chunk.encode("utf-8")) for chunk in pretokenize(corpus)]
    counts: dict[tuple[int, int], int] = {}
    for ids in words:
        for pair in zip(ids, ids[1:]):
            counts[pair] = counts.get(pair, 0) + 1
    assert tok.merge_counts[0] == max(counts.values())
    assert counts[tok.merges[0]] == max(counts.values())


def test_unseen_word_splits_into_known_pieces(tokenizer: BPETokenizer, corpus: str) -> None:
    word = " gardeners"
    assert word not in pretokenize(corpus)
    pieces = tokenizer.pieces(word)
    assert "".join(pieces) == word
    assert 1 < len(pieces) < len(word)
    assert pieces[0] == " garden"  # a word of the corpus, learned as one token
    assert all(tokenizer.encode(piece) == [tokenizer.encode(word)[i]] for i, piece in
               enumerate(pieces))


def test_frequent_words_become_single_tokens(tokenizer: BPETokenizer) -> None:
    for word in [" the", " and", " river"]:
        assert len(tokenizer.encode(word)) == 1


def test_errors_are_clear(tokenizer: BPETokenizer) -> None:
    with pytest.raises(ValueError, match="token ids must lie in"):
        tokenizer.decode([tokenizer.n_vocab + 5])
    with pytest.raises(ValueError, match="n_merges must be a non-negative integer"):
        train_bpe("abc", -1)
    with pytest.raises(TypeError, match="text must be a str"):
        tokenizer.encode(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="uses an id not defined"):
        BPETokenizer([(300, 5)])
