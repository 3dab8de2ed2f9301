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


# Baselines and word counts of chapter 10's character model.
def _ngram_loss_by_loops(train, valid, n_vocab, order, alpha):
    """An independent reference: plain dictionaries and math.log."""
    import math
    from collections import Counter

    train, valid = train.tolist(), valid.tolist()
    if order == 1:
        counts = Counter(train)
        total = len(train) + alpha * n_vocab
        return sum(-math.log((counts[t] + alpha) / total) for t in valid) / len(valid)
    pairs, rows = Counter(zip(train, train[1:])), Counter(train[:-1])
    losses = [
        -math.log((pairs[(a, b)] + alpha) / (rows[a] + alpha * n_vocab))
        for a, b in zip(valid, valid[1:])
    ]
    return sum(losses) / len(losses)


def test_ngram_loss_by_hand():
    import math

    from tformer.data.text import ngram_loss

    train, valid = torch.tensor([0, 1, 0, 1]), torch.tensor([0, 1])
    assert math.isclose(ngram_loss(train, valid, 2, 1), math.log(2))
    # after a 0 the training text shows a 1 twice and a 0 never: p(1 | 0) = 2.1 / 2.2
    assert math.isclose(ngram_loss(train, valid, 2, 2), -math.log(2.1 / 2.2))


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("alpha", [0.1, 1.0])
def test_ngram_loss_matches_counting_loops(order, alpha):
    from tformer.data.text import ngram_loss

    generator = torch.Generator().manual_seed(order)
    train = torch.randint(7, (500,), generator=generator) % 5  # uneven frequencies, ids 5-6 unseen
    valid = torch.randint(7, (200,), generator=generator)
    expected = _ngram_loss_by_loops(train, valid, 7, order, alpha)
    assert abs(ngram_loss(train, valid, 7, order, alpha=alpha) - expected) < 1e-12


def test_bigram_beats_unigram_on_the_python_docs():
    from tformer.data.text import load_python_docs, ngram_loss

    text = load_python_docs()
    tokenizer = CharTokenizer.from_text(text)
    data = tokenizer.encode(text)
    split = int(0.9 * len(data))
    unigram = ngram_loss(data[:split], data[split:], tokenizer.n_vocab, 1)
    bigram = ngram_loss(data[:split], data[split:], tokenizer.n_vocab, 2)
    assert bigram < unigram - 0.5 < unigram < torch.log(torch.tensor(tokenizer.n_vocab)).item()


def test_ngram_loss_errors_name_the_problem():
    from tformer.data.text import ngram_loss

    data = torch.tensor([0, 1, 0])
    with pytest.raises(ValueError, match="order must be 1"):
        ngram_loss(data, data, 2, 3)
    with pytest.raises(ValueError, match="alpha must be positive"):
        ngram_loss(data, data, 2, 1, alpha=0.0)
    with pytest.raises(ValueError, match="valid must be a 1-D tensor"):
        ngram_loss(data, data[None], 2, 1)


def test_words_of_drops_single_letters_and_a_cut_last_word():
    from tformer.data.text import words_of

    assert words_of("the x of a dict, ke") == ["the", "of", "dict"]
    assert words_of("the x of a dict, key.") == ["the", "of", "dict", "key"]
    assert words_of("x = 1") == []
    assert words_of("a b c", min_letters=1) == ["a", "b"]


def test_word_share_counts_over_all_samples():
    from tformer.data.text import word_share

    vocabulary = {"the", "value", "of"}
    assert word_share(["the valu of x ", "value zzq."], vocabulary) == (3, 5)
    assert word_share([], vocabulary) == (0, 0)
