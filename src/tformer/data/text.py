"""Two shipped text corpora, a character tokenizer and the baselines of a character model.

The first corpus, ``tiny_tales.txt`` (about 75 KB), is **generated**, not transcribed: a seeded random
walk through the small grammar below writes short sentences about a village, its animals and its
weather. It was written for this book and is dedicated to the public domain (CC0), so the book
ships it without any licence question and without a download. ``python -m tformer.data.text``
regenerates it byte for byte (a test checks that the shipped file matches the generator).

Its small vocabulary and regular structure make it a quick toy corpus for tokenizer and
training demonstrations; the book's real English text is the second corpus below.

* :func:`load_python_docs` — a second, **real** English corpus: the 79 help topics of the Python
  Language Reference that CPython's standard library ships as ``pydoc_data.topics`` (what
  ``help("assert")`` prints), 465,048 characters, frozen from Python 3.11.7 so that every reader's
  Python (3.10–3.13 ship different versions) sees the same text. PSF License (see README.md).
  :func:`python_docs_from_pydoc` rebuilds it from the running interpreter.
  Chapter 10's character model trains on it.
* :func:`load_text` — the generated corpus as one string.
* :class:`CharTokenizer` — characters to integer ids and back.
* :func:`make_batch` — a random batch of ``(inputs, targets)`` windows, targets shifted by one.
* :func:`ngram_loss` — the held-out cross-entropy of a count-based unigram or bigram model, the
  baselines a trained character model must beat.
* :func:`words_of` and :func:`word_share` — the words of a generated sample, and how many of them
  are words of a corpus.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

import torch

CORPUS_FILE = Path(__file__).with_name("tiny_tales.txt")
PYTHON_DOCS_FILE = Path(__file__).with_name("python_docs.txt")
PYTHON_DOCS_PYTHON = "3.11.7"  # the interpreter whose pydoc_data.topics was frozen
CORPUS_SEED = 2017
CORPUS_SENTENCES = 1400

_NAMES = ["Anna", "Ben", "Clara", "Dev", "Ella", "Finn", "Greta", "Hugo", "Ida", "Jonas"]
_ANIMALS = ["cat", "dog", "fox", "hen", "goat", "owl", "mouse", "horse", "duck", "frog"]
_PLACES = ["the mill", "the river", "the market", "the old bridge", "the garden", "the hill",
           "the bakery", "the forest", "the well", "the school"]
_THINGS = ["a red apple", "a warm loaf", "a blue kite", "a small bell", "a wooden boat",
           "a jar of honey", "a lost key", "a letter", "a basket of eggs", "a green hat"]
_ADJECTIVES = ["quiet", "bright", "sleepy", "clever", "muddy", "happy", "hungry", "brave"]
_WEATHER = ["the rain fell softly", "the sun was warm", "the wind blew from the sea",
            "snow covered the roofs", "a fog rolled over the fields", "the sky was clear"]
_TIMES = ["in the morning", "at noon", "in the evening", "at night", "on Monday", "after lunch"]


def _sentence(rng: random.Random) -> str:
    name, other = rng.sample(_NAMES, 2)
    animal = rng.choice(_ANIMALS)
    place, place2 = rng.sample(_PLACES, 2)
    thing = rng.choice(_THINGS)
    adjective = rng.choice(_ADJECTIVES)
    time = rng.choice(_TIMES)
    templates = [
        f"{time}, {name} walked to {place} with the {adjective} {animal}.",
        f"{name} found {thing} near {place}.",
        f"the {adjective} {animal} followed {name} from {place} to {place2}.",
        f"{rng.choice(_WEATHER)}, so {name} stayed at {place}.",
        f"{name} gave {thing} to {other}, and {other} said thank you.",
        f"\"where is the {animal}?\" asked {name}. \"Near {place},\" said {other}.",
        f"{time} the {animal} was {adjective}, and {rng.choice(_WEATHER)}.",
        f"{name} and {other} carried {thing} over {place}.",
        f"every day {name} fed the {animal} {time}.",
    ]
    return rng.choice(templates)


def generate_corpus(n_sentences: int = CORPUS_SENTENCES, seed: int = CORPUS_SEED) -> str:
    """The corpus text: ``n_sentences`` sentences from the grammar, paragraphs of 3–6 sentences."""
    rng = random.Random(seed)
    paragraphs, sentences = [], []
    target = rng.randint(3, 6)
    for _ in range(n_sentences):
        sentence = _sentence(rng)
        first = 1 if sentence.startswith('"') else 0  # capitalise the first letter
        sentences.append(sentence[:first] + sentence[first].upper() + sentence[first + 1 :])
        if len(sentences) == target:
            paragraphs.append(" ".join(sentences))
            sentences, target = [], rng.randint(3, 6)
    if sentences:
        paragraphs.append(" ".join(sentences))
    return "\n\n".join(paragraphs) + "\n"


def python_docs_from_pydoc() -> str:
    """The running interpreter's ``pydoc_data.topics``: every topic, sorted by name, stripped of
    leading and trailing newlines, joined by one blank line, with a final newline.

    On Python :data:`PYTHON_DOCS_PYTHON` this is exactly the shipped ``python_docs.txt``.
    """
    from pydoc_data.topics import topics

    return "\n\n".join(topics[name].strip("\n") for name in sorted(topics)) + "\n"


def load_python_docs() -> str:
    """The shipped real-text corpus ``python_docs.txt`` as one string (465,048 characters)."""
    return PYTHON_DOCS_FILE.read_text(encoding="utf-8")


def load_text() -> str:
    """The shipped corpus ``tiny_tales.txt`` as one string (no network, no download)."""
    return CORPUS_FILE.read_text(encoding="utf-8")


@dataclass
class CharTokenizer:
    """Characters ↔ integer ids; the vocabulary is the sorted set of characters in ``text``.

    ``encode(str) -> (T,) long tensor``; ``decode(ids) -> str``; ``n_vocab`` ids in total.
    """

    chars: list[str]

    @classmethod
    def from_text(cls, text: str) -> CharTokenizer:
        return cls(sorted(set(text)))

    def __post_init__(self) -> None:
        self._index = {char: i for i, char in enumerate(self.chars)}

    @property
    def n_vocab(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> torch.Tensor:
        unknown = sorted(set(text) - set(self._index))
        if unknown:
            raise ValueError(f"characters not in the vocabulary: {unknown!r}")
        return torch.tensor([self._index[char] for char in text], dtype=torch.long)

    def decode(self, ids) -> str:
        ids = ids.tolist() if isinstance(ids, torch.Tensor) else list(ids)
        if any(not 0 <= i < self.n_vocab for i in ids):
            raise ValueError(f"ids must lie in [0, {self.n_vocab}), got {ids}")
        return "".join(self.chars[i] for i in ids)


def make_batch(
    data: torch.Tensor,
    batch_size: int,
    block_size: int,
    *,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """A random batch of windows from ``data`` (1-D long tensor of token ids).

    Returns ``inputs`` and ``targets``, both ``(batch_size, block_size)``, with
    ``targets[b, t] == inputs[b, t + 1]``: the target at every position is the next token.
    """
    if data.ndim != 1:
        raise ValueError(f"data must be a 1-D tensor of token ids, got shape {tuple(data.shape)}")
    if len(data) <= block_size:
        raise ValueError(f"data has {len(data)} tokens; need more than block_size={block_size}")
    starts = torch.randint(len(data) - block_size, (batch_size,), generator=generator)
    windows = torch.stack([data[start : start + block_size + 1] for start in starts.tolist()])
    return windows[:, :-1], windows[:, 1:]


def ngram_loss(
    train: torch.Tensor, valid: torch.Tensor, n_vocab: int, order: int, *, alpha: float = 0.1
) -> float:
    """Mean cross-entropy in nats per token on ``valid`` of an add-``alpha`` n-gram model.

    ``train`` and ``valid`` are 1-D long tensors of token ids in ``[0, n_vocab)``. ``order=1``
    predicts every token from the training frequencies alone (the unigram model); ``order=2``
    from the training frequencies of what follows the previous token (the bigram model).
    ``alpha`` is added to every count, so a pair never seen in training keeps a small probability.
    """
    if order not in (1, 2):
        raise ValueError(f"order must be 1 (unigram) or 2 (bigram), got {order}")
    if alpha <= 0:
        raise ValueError(f"alpha must be positive (an unseen token would cost ∞), got {alpha}")
    for name, ids in (("train", train), ("valid", valid)):
        if ids.ndim != 1 or len(ids) < 2:
            raise ValueError(f"{name} must be a 1-D tensor of at least 2 ids, got {tuple(ids.shape)}")
    if order == 1:
        counts = torch.bincount(train, minlength=n_vocab).double() + alpha
        return -(counts / counts.sum()).log()[valid].mean().item()
    pairs = torch.bincount(train[:-1] * n_vocab + train[1:], minlength=n_vocab * n_vocab)
    counts = pairs.view(n_vocab, n_vocab).double() + alpha  # row: previous token
    log_probs = (counts / counts.sum(1, keepdim=True)).log()
    return -log_probs[valid[:-1], valid[1:]].mean().item()


WORD = re.compile(r"[A-Za-z]+")


def words_of(sample: str, *, min_letters: int = 2) -> list[str]:
    """The words of a generated sample: runs of at least ``min_letters`` ASCII letters.

    A last word that runs into the end of the sample is dropped (the length limit may have cut
    it). Single letters are left out by default: almost every letter is a "word" of a corpus of
    code and prose (``x``, ``a``, ``s``), so they would count as English whatever the model wrote.
    """
    found = WORD.findall(sample)
    if found and sample[-1:].isalpha():
        found = found[:-1]
    return [word for word in found if len(word) >= min_letters]


def word_share(samples: list[str], vocabulary: set[str]) -> tuple[int, int]:
    """``(hits, total)``: of the words of all ``samples`` (:func:`words_of`), how many are in
    ``vocabulary`` (e.g. ``set(WORD.findall(corpus))``)."""
    found = [word for sample in samples for word in words_of(sample)]
    return sum(word in vocabulary for word in found), len(found)


if __name__ == "__main__":  # regenerate the shipped file
    CORPUS_FILE.write_text(generate_corpus(), encoding="utf-8")
    print(f"wrote {CORPUS_FILE} ({CORPUS_FILE.stat().st_size:,} bytes)")
