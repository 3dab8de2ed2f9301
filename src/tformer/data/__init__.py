"""Small deterministic datasets, generated or shipped in the repository (no downloads).

* :mod:`tformer.data.text` — a shipped generated text corpus and a character tokenizer (chapter 10).
* :mod:`tformer.data.sequences` — repeated random token sequences for the induction lab (chapter 12).
"""

from tformer.data.sequences import (
    BOS,
    SequenceBatch,
    fixed_length_batch,
    half_masks,
    random_batch,
    repeated_batch,
)
from tformer.data.text import CharTokenizer, generate_corpus, load_text, make_batch

__all__ = [
    "BOS",
    "CharTokenizer",
    "SequenceBatch",
    "fixed_length_batch",
    "generate_corpus",
    "half_masks",
    "load_text",
    "make_batch",
    "random_batch",
    "repeated_batch",
]
