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
