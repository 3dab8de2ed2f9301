"""The shipped corpus, the character tokenizer and next-token batches (tformer.data.text)."""

import pytest
import torch

from tformer.data.text import CORPUS_FILE, CharTokenizer, generate_corpus, load_text, make_batch


def test_shipped_corpus_is_the_generators_output():
    assert CORPUS_FILE.read_text(encoding="utf-8") == generate_corpus()


def test_corpus_is_small_and_plain():
    text = load_text()
    assert 20_000 < len(text.encode("utf-8")) <= 100_000
    assert text.isascii()


def test_tokenizer_round_trip_and_vocabulary():
    text = load_text()
    tokenizer = CharTokenizer.from_text(text)
    assert tokenizer.n_vocab == len(set(text))
    sample = text[:500]
    ids = tokenizer.encode(sample)
    assert ids.dtype == torch.long and ids.shape == (500,)
    assert tokenizer.decode(ids) == sample
    # ids follow sorted character order (an independent construction of the mapping)
    assert tokenizer.encode("cat").tolist() == [sorted(set(text)).index(c) for c in "cat"]


def test_tokenizer_errors_name_the_problem():
    tokenizer = CharTokenizer.from_text("abc")
    with pytest.raises(ValueError, match="not in the vocabulary"):
        tokenizer.encode("abz")
    with pytest.raises(ValueError, match=r"ids must lie in \[0, 3\)"):
        tokenizer.decode([0, 3])


def test_make_batch_targets_are_inputs_shifted_by_one():
    data = torch.arange(100)
    inputs, targets = make_batch(data, 4, 8, generator=torch.Generator().manual_seed(0))
    assert inputs.shape == targets.shape == (4, 8)
    torch.testing.assert_close(targets, inputs + 1)  # arange: next token = token + 1
    assert int(targets.max()) <= 99


def test_make_batch_errors():
    with pytest.raises(ValueError, match="1-D"):
        make_batch(torch.zeros(2, 5, dtype=torch.long), 1, 2)
    with pytest.raises(ValueError, match="need more than block_size"):
        make_batch(torch.arange(5), 1, 5)


# The real-text corpus (chapters 1-4 and 10): frozen from Python 3.11.7's pydoc_data.topics.
PYTHON_DOCS_SHA256 = "2a95af4ac93f5b719944030ce3769070ddf827d847cba42192afa8da989e5dc4"


def test_python_docs_are_the_frozen_snapshot():
    import hashlib

    from tformer.data.text import PYTHON_DOCS_FILE, load_python_docs

    assert hashlib.sha256(PYTHON_DOCS_FILE.read_bytes()).hexdigest() == PYTHON_DOCS_SHA256
    text = load_python_docs()
    assert len(text) == 465_048
    assert text.startswith('The "assert" statement\n')
    assert text.count("\n\n") > 79  # 79 topics, each several paragraphs


def test_python_docs_rebuild_from_the_interpreter_they_were_frozen_from():
    import platform

    from tformer.data.text import PYTHON_DOCS_PYTHON, load_python_docs, python_docs_from_pydoc

    rebuilt = python_docs_from_pydoc()
    if platform.python_version() == PYTHON_DOCS_PYTHON:
        assert rebuilt == load_python_docs()
    else:  # another Python ships another text: the reason the corpus is frozen
        assert rebuilt != load_python_docs() and len(rebuilt) > 400_000
