"""The shipped language model (``tformer.pretrained``): its record is current, it loads, and it
reproduces the losses recorded when it was trained."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import torch

from tformer import pretrained
from tformer.data import load_python_docs
from tformer.model import GPT
from tformer.tokenize import train_bpe

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def loaded():
    return pretrained.docs_lm()


def test_record_is_newer_than_its_sources():
    record = pretrained.metadata()
    assert record["script"] == "tools/train_docs_lm.py"
    assert set(record["sources"]) == {record["script"], *pretrained.SOURCES}
    changed = [
        name
        for name, digest in record["sources"].items()
        if not (ROOT / name).exists() or hashlib.sha1((ROOT / name).read_bytes()).hexdigest() != digest
    ]
    assert not changed, f"docs_lm is older than {changed}: rerun {record['script']}"


def test_weights_are_small_and_load_with_weights_only():
    assert pretrained.WEIGHTS_FILE.stat().st_size <= 2_000_000
    state = torch.load(pretrained.WEIGHTS_FILE, map_location="cpu", weights_only=True)
    assert all(tensor.dtype == torch.float32 for tensor in state.values())


def test_shipped_merges_are_the_books_bpe_on_the_corpus():
    record = pretrained.metadata()
    n_merges = record["tokenizer"]["n_merges"]
    assert n_merges == pretrained.N_MERGES
    retrained = train_bpe(load_python_docs(), n_merges)
    assert [list(pair) for pair in retrained.merges] == record["tokenizer"]["merges"]


def test_loaded_model_matches_its_record(loaded):
    model, tokenizer = loaded
    record = pretrained.metadata()
    assert isinstance(model, GPT) and not model.training
    assert tokenizer.n_vocab == model.config.n_vocab == record["config"]["n_vocab"]
    assert model.unembed.weight is model.token_embedding.weight  # tied
    assert sum(p.numel() for p in model.parameters()) == record["parameters"]
    text = "The \"assert\" statement"
    logits = model(torch.tensor([tokenizer.encode(text)]))
    assert logits.shape == (1, len(tokenizer.encode(text)), tokenizer.n_vocab)


def test_validation_split_holds_out_whole_topics():
    topics = pretrained.python_docs_topics()
    text = load_python_docs()
    assert len(topics) == 79
    assert "\n\n".join(topics) == text.rstrip("\n")
    assert all(t.split("\n")[1] == "*" * len(t.split("\n")[0]) for t in topics)


def test_model_reproduces_its_recorded_losses(loaded):
    model, tokenizer = loaded
    record = pretrained.metadata()
    train_ids, validation_ids = pretrained.split_tokens(tokenizer)
    assert len(train_ids) == record["training"]["train_tokens"]
    assert len(validation_ids) == record["training"]["validation_tokens"]
    # float32 inference rounds differently on other CPU kernels: a margin, not an exact tie
    assert pretrained.mean_loss(model, validation_ids) == pytest.approx(
        record["validation_loss"], abs=1e-3
    )
    # a model that learned nothing would sit near ln 768 = 6.64
    assert record["validation_loss"] < 5.0


def test_a_fresh_copy_per_call(loaded):
    model, _ = loaded
    other, _ = pretrained.docs_lm()
    with torch.no_grad():
        other.token_embedding.weight.zero_()
    assert model.token_embedding.weight.abs().sum() > 0


def test_short_stream_is_a_clear_error(loaded):
    model, _ = loaded
    with pytest.raises(ValueError, match="need more than n_ctx"):
        pretrained.mean_loss(model, torch.zeros(10, dtype=torch.long))
