"""The book's small language model, trained once on real text and shipped as data.

:func:`docs_lm` returns ``(model, tokenizer)``: a :class:`tformer.model.GPT` (pre-norm, learned
positions, tied embeddings, the book's own N(0, 0.02²) initialisation before training) trained on
the Python Language Reference (:func:`tformer.data.load_python_docs`), and the book's byte-pair
tokenizer with :data:`N_MERGES` merges learned from the same text
(:func:`tformer.tokenize.train_bpe`).

* ``model(tokens (B, T)) → logits (B, T, n_vocab)``, ``T ≤ n_ctx``; in ``eval()`` mode.
* :func:`metadata` — the recipe and the recorded losses (``docs_lm.json``).
* :func:`python_docs_topics` — the corpus cut into its 79 topics; :func:`split_tokens` — the
  training and validation token streams (every :data:`VALIDATION_EVERY`-th topic, from topic 2
  on, held out).
* :func:`mean_loss` — mean next-token cross-entropy over a token stream.

The weights are fixed data (``tools/train_docs_lm.py`` wrote them), so what a chapter measures on
this model is the same on every machine up to the rounding of inference: compare with margins,
not exact ties.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import torch

from tformer.data.text import load_python_docs
from tformer.model import GPT, GPTConfig
from tformer.tokenize import BPETokenizer
from tformer.training import next_token_loss

__all__ = [
    "N_MERGES", "VALIDATION_EVERY", "docs_lm", "mean_loss", "metadata", "python_docs_topics",
    "split_tokens",
]

DATA = Path(__file__).with_name("data")
WEIGHTS_FILE = DATA / "docs_lm.pt"
METADATA_FILE = DATA / "docs_lm.json"
N_MERGES = 512  # vocabulary 256 + 512 = 768 tokens
VALIDATION_EVERY = 8  # topics 2, 10, 18, ... (counted from 0) are held out: 10 % of the text
# Every file the shipped weights depend on (besides the training script itself).
SOURCES = [  # the corpus enters as python_docs.txt (load_python_docs only reads it)
    "src/tformer/pretrained.py",
    "src/tformer/model.py",
    "src/tformer/layers.py",
    "src/tformer/multihead.py",
    "src/tformer/attention.py",
    "src/tformer/masks.py",
    "src/tformer/positions.py",
    "src/tformer/tokenize.py",
    "src/tformer/training.py",
    "src/tformer/data/python_docs.txt",
]
_TITLE = re.compile(r"(?m)^(.+)\n(\*+)\n")


def python_docs_topics(text: str | None = None) -> list[str]:
    """The corpus cut into its topics, in order; each starts with its title underlined by ``*``.

    ``"\\n\\n".join(python_docs_topics(text)) == text.rstrip("\\n")``.
    """
    text = load_python_docs() if text is None else text
    starts = [m.start() for m in _TITLE.finditer(text) if len(m.group(2)) == len(m.group(1))]
    if not starts or starts[0] != 0:
        raise ValueError("text does not start with a topic title underlined by '*'")
    ends = [*starts[1:], len(text)]
    return [text[a:b].rstrip("\n") for a, b in zip(starts, ends)]


def split_tokens(
    tokenizer: BPETokenizer, text: str | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Training and validation token ids, ``(N_train,)`` and ``(N_val,)`` long tensors.

    Topic ``i`` (counted from 0) is held out when ``i % VALIDATION_EVERY == 2`` (10 topics,
    10 % of the characters); each split is its topics joined by a blank line.
    """
    topics = python_docs_topics(text)
    held_out = [i % VALIDATION_EVERY == 2 for i in range(len(topics))]
    parts = []
    for keep in (False, True):
        joined = "\n\n".join(t for t, h in zip(topics, held_out) if h == keep)
        parts.append(torch.tensor(tokenizer.encode(joined), dtype=torch.long))
    return parts[0], parts[1]


@torch.no_grad()
def mean_loss(model: GPT, ids: torch.Tensor, batch: int = 64) -> float:
    """Mean next-token cross-entropy (nats) of ``model`` over ``ids`` ``(N,)``.

    The stream is read in non-overlapping windows of ``n_ctx`` inputs (each window's targets are
    its inputs shifted by one); a last partial window is dropped.
    """
    n_ctx = model.config.n_ctx
    n_windows = (len(ids) - 1) // n_ctx
    if n_windows < 1:
        raise ValueError(f"need more than n_ctx = {n_ctx} tokens, got {len(ids)}")
    inputs = ids[: n_windows * n_ctx].view(n_windows, n_ctx)
    targets = ids[1 : n_windows * n_ctx + 1].view(n_windows, n_ctx)
    was_training = model.training
    model.eval()
    total = 0.0
    for i in range(0, n_windows, batch):
        logits = model(inputs[i : i + batch])
        total += float(next_token_loss(logits, targets[i : i + batch])) * len(logits)
    model.train(was_training)
    return total / n_windows


def metadata() -> dict[str, Any]:
    """The shipped model's record: tokenizer merges, config, training recipe, losses, hashes."""
    if not METADATA_FILE.exists():
        raise FileNotFoundError(
            f"{METADATA_FILE} is missing: run tools/train_docs_lm.py to train the model"
        )
    return json.loads(METADATA_FILE.read_text(encoding="utf-8"))


def docs_lm() -> tuple[GPT, BPETokenizer]:
    """The trained model (in ``eval()`` mode) and its tokenizer, loaded from the shipped files.

    ``model(tokens (B, T)) → logits (B, T, 768)`` for ``T ≤ 128``; ``tokenizer.encode(str)``
    gives the ids. Each call returns a fresh copy, so changing it changes nothing shipped.
    """
    record = metadata()
    tokenizer = BPETokenizer([tuple(pair) for pair in record["tokenizer"]["merges"]])
    config = GPTConfig.tiny(**record["config"])
    model = GPT(config)
    state = torch.load(WEIGHTS_FILE, map_location="cpu", weights_only=True)
    model.load_state_dict(state)
    model.eval()
    return model, tokenizer
