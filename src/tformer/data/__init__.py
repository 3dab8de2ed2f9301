"""Small deterministic datasets, generated or shipped in the repository (no downloads).

* :mod:`tformer.data.text` — a shipped generated corpus, a shipped real one (the Python
  Language Reference's help topics) and a character tokenizer.
* :mod:`tformer.data.sorting` — sorting digit strings, the encoder–decoder's task (chapters 9–10).
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
from tformer.data.sorting import (
    SortingBatch,
    decode_digits,
    encode_digits,
    sorting_batch,
    valid_next_tokens,
)
from tformer.data.text import (
    CharTokenizer,
    generate_corpus,
    load_python_docs,
    load_text,
    make_batch,
)

__all__ = [
    "BOS",
    "CharTokenizer",
    "SequenceBatch",
    "SortingBatch",
    "decode_digits",
    "encode_digits",
    "fixed_length_batch",
    "generate_corpus",
    "half_masks",
    "load_python_docs",
    "load_text",
    "make_batch",
    "random_batch",
    "repeated_batch",
    "sorting_batch",
    "valid_next_tokens",
]
