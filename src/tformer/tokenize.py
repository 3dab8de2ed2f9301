"""A tiny byte-pair-encoding (BPE) tokenizer, small enough to read in one sitting (chapter 1).

Byte-pair encoding (Sennrich et al., 2016; byte-level as in GPT-2) starts from the 256 possible
bytes, so *every* string can be encoded, and learns a list of **merges**: repeatedly find the
most frequent adjacent pair of tokens in the training text and glue it into one new token.
A frequent word ends up as one token; a rare or unseen word splits into known pieces.

* :func:`pretokenize` — split text into word-like chunks (a word keeps its leading space, as in
  GPT-2), so merges never cross a word boundary.
* :func:`train_bpe` — learn ``n_merges`` merges from a text; returns a :class:`BPETokenizer`.
* :class:`BPETokenizer` — ``encode(str) -> list[int]``, ``decode(list[int]) -> str``,
  ``pieces(str) -> list[str]`` (the tokens as text), ``n_vocab`` = 256 + number of merges.

Token ids ``0…255`` are the single bytes; id ``256 + r`` is the token created by merge ``r``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

N_BYTES = 256
_CHUNK = re.compile(r" ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+")


def pretokenize(text: str) -> list[str]:
    """Split ``text`` into chunks: words (with their leading space), numbers, punctuation, spaces.

    ``"".join(pretokenize(text)) == text`` always holds.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return _CHUNK.findall(text)


def _merge_pair(ids: tuple[int, ...], pair: tuple[int, int], new_id: int) -> tuple[int, ...]:
    """Replace each non-overlapping ``pair`` in ``ids`` (left to right) by ``new_id``."""
    merged: list[int] = []
    i = 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            merged.append(new_id)
            i += 2
        else:
            merged.append(ids[i])
            i += 1
    return tuple(merged)


def _pair_counts(words: dict[tuple[int, ...], int]) -> Counter:
    counts: Counter = Counter()
    for ids, frequency in words.items():
        for pair in zip(ids, ids[1:]):
            counts[pair] += frequency
    return counts


@dataclass
class BPETokenizer:
    """A trained byte-level BPE tokenizer.

    ``merges[r] = (left_id, right_id)`` created token ``256 + r``; ``vocab[id]`` is its bytes.
    ``merge_counts[r]`` is how often the pair occurred in the training text when it was merged.
    """

    merges: list[tuple[int, int]]
    merge_counts: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.vocab: dict[int, bytes] = {i: bytes([i]) for i in range(N_BYTES)}
        for rank, (left, right) in enumerate(self.merges):
            if left not in self.vocab or right not in self.vocab:
                raise ValueError(f"merge {rank} uses an id not defined before it: {(left, right)}")
            self.vocab[N_BYTES + rank] = self.vocab[left] + self.vocab[right]
        self._rank = {pair: rank for rank, pair in enumerate(self.merges)}
        self._cache: dict[str, tuple[int, ...]] = {}

    @property
    def n_vocab(self) -> int:
        """Vocabulary size: 256 byte tokens plus one token per merge."""
        return N_BYTES + len(self.merges)

    def token_text(self, token_id: int) -> str:
        """The text of one token (bytes decoded leniently; a partial UTF-8 byte shows as �)."""
        return self.vocab[token_id].decode("utf-8", errors="replace")

    def _encode_chunk(self, chunk: str) -> tuple[int, ...]:
        if chunk in self._cache:
            return self._cache[chunk]
        ids = tuple(chunk.encode("utf-8"))
        while len(ids) > 1:
            # apply the earliest-learned merge present in the chunk, exactly as in training
            ranked = [(self._rank[pair], pair) for pair in zip(ids, ids[1:]) if pair in self._rank]
            if not ranked:
                break
            rank, pair = min(ranked)
            ids = _merge_pair(ids, pair, N_BYTES + rank)
        self._cache[chunk] = ids
        return ids

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (any string: unknown characters fall back to their bytes)."""
        return [i for chunk in pretokenize(text) for i in self._encode_chunk(chunk)]

    def decode(self, ids: Iterable[int]) -> str:
        """The text of a list of token ids; ``decode(encode(text)) == text``."""
        ids = [int(i) for i in ids]
        bad = [i for i in ids if i not in self.vocab]
        if bad:
            raise ValueError(f"token ids must lie in [0, {self.n_vocab}), got {bad[:5]}")
        return b"".join(self.vocab[i] for i in ids).decode("utf-8", errors="replace")

    def pieces(self, text: str) -> list[str]:
        """``text`` split into its tokens, each shown as text."""
        return [self.token_text(i) for i in self.encode(text)]


def train_bpe(text: str, n_merges: int) -> BPETokenizer:
    """Learn ``n_merges`` byte-pair merges from ``text``.

    Words (see :func:`pretokenize`) are counted once; each step merges the most frequent adjacent
    pair over all words, weighted by word frequency. Ties go to the pair whose bytes sort first, so
    training is deterministic. Stops early if no pair occurs twice.
    """
    if not isinstance(n_merges, int) or n_merges < 0:
        raise ValueError(f"n_merges must be a non-negative integer, got {n_merges!r}")
    words: dict[tuple[int, ...], int] = Counter(
        tuple(chunk.encode("utf-8")) for chunk in pretokenize(text)
    )
    vocab = {i: bytes([i]) for i in range(N_BYTES)}
    merges: list[tuple[int, int]] = []
    merge_counts: list[int] = []
    for _ in range(n_merges):
        counts = _pair_counts(words)
        if not counts:
            break
        count = max(counts.values())
        if count < 2:
            break
        tied = [pair for pair, n in counts.items() if n == count]
        pair = min(tied, key=lambda p: (vocab[p[0]], vocab[p[1]]))
        new_id = N_BYTES + len(merges)
        vocab[new_id] = vocab[pair[0]] + vocab[pair[1]]
        merges.append(pair)
        merge_counts.append(count)
        merged: Counter = Counter()
        for ids, frequency in words.items():
            merged[_merge_pair(ids, pair, new_id)] += frequency
        words = merged
    return BPETokenizer(merges, merge_counts)

