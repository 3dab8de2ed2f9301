"""Train the book's small language model on the Python Language Reference, once, and ship it.

Run ``PYTHONPATH=src python tools/train_docs_lm.py`` (a few minutes on two CPU cores). It writes

* ``src/tformer/data/docs_lm.pt`` — the model's ``state_dict`` (float32), and
* ``src/tformer/data/docs_lm.json`` — what it is: the BPE merges, the model configuration, the
  training recipe, the train and validation losses, the torch version and the SHA-1 of this script
  and of every source the result depends on (``tests/test_pretrained.py`` fails when one of them
  changed since: rerun this script).

The corpus is :func:`tformer.data.load_python_docs` (79 help topics). The tokenizer is the book's
own BPE, :func:`tformer.tokenize.train_bpe` with :data:`N_MERGES` merges on the whole corpus
(deterministic, the same on every machine). Every :data:`VALIDATION_EVERY`-th topic, from topic 2
on, is held out from training (10 topics, 10 % of the text); the validation loss is the mean
next-token cross-entropy over those topics, read in non-overlapping windows of ``n_ctx`` tokens.

Training follows the CPU's rounding, so another machine would train slightly different weights;
that is why the weights are shipped as data and never retrained by the book.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from datetime import date
from pathlib import Path

import torch

from tformer import pretrained
from tformer.data import load_python_docs
from tformer.model import GPT, GPTConfig
from tformer.tokenize import train_bpe
from tformer.training import train

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = "tools/train_docs_lm.py"

N_MERGES = pretrained.N_MERGES
VALIDATION_EVERY = pretrained.VALIDATION_EVERY
CONFIG = dict(n_ctx=128, d=96, n_layers=2, n_heads=4)  # GPTConfig.tiny's shape, a little wider
SEED = 0
STEPS = 1000
BATCH = 32
LR = 3e-3
WARMUP = 100
WEIGHT_DECAY = 0.01


def main() -> None:
    start = time.perf_counter()
    torch.manual_seed(SEED)
    text = load_python_docs()
    tokenizer = train_bpe(text, N_MERGES)
    train_ids, validation_ids = pretrained.split_tokens(tokenizer, text)
    config = GPTConfig.tiny(tokenizer.n_vocab, **CONFIG)
    model = GPT(config)
    generator = torch.Generator().manual_seed(SEED)
    n_ctx = config.n_ctx

    def batch() -> tuple[torch.Tensor, torch.Tensor]:
        starts = torch.randint(len(train_ids) - n_ctx - 1, (BATCH,), generator=generator)
        windows = torch.stack([train_ids[s : s + n_ctx + 1] for s in starts.tolist()])
        return windows[:, :-1], windows[:, 1:]

    log = train(model, batch, STEPS, lr=LR, warmup=WARMUP, weight_decay=WEIGHT_DECAY)
    train_loss = pretrained.mean_loss(model, train_ids)
    validation_loss = pretrained.mean_loss(model, validation_ids)
    print(f"train loss {train_loss:.4f}, validation loss {validation_loss:.4f}, "
          f"{log.seconds:.0f} s of training")

    sources = [SCRIPT, *pretrained.SOURCES]
    metadata = {
        "name": "docs_lm",
        "script": SCRIPT,
        "sources": {
            name: hashlib.sha1((ROOT / name).read_bytes()).hexdigest() for name in sources
        },
        "corpus": "tformer.data.load_python_docs()",
        "corpus_characters": len(text),
        "tokenizer": {"n_merges": N_MERGES, "merges": [list(pair) for pair in tokenizer.merges]},
        "config": {"n_vocab": config.n_vocab, **CONFIG},
        "training": {
            "seed": SEED, "steps": STEPS, "batch": BATCH, "lr": LR, "warmup": WARMUP,
            "weight_decay": WEIGHT_DECAY, "optimizer": "AdamW (0.9, 0.98), cosine decay",
            "validation_every": VALIDATION_EVERY,
            "train_tokens": len(train_ids), "validation_tokens": len(validation_ids),
        },
        "train_loss": train_loss,
        "validation_loss": validation_loss,
        "first_step_loss": log.losses[0],
        "parameters": sum(p.numel() for p in model.parameters()),
        "torch": torch.__version__,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "threads": torch.get_num_threads(),
        "python": sys.version.split()[0],
        "seconds": round(time.perf_counter() - start, 1),
        "date": date.today().isoformat(),
    }
    torch.save(model.state_dict(), pretrained.WEIGHTS_FILE)
    pretrained.METADATA_FILE.write_text(json.dumps(metadata, indent=1) + "\n", encoding="utf-8")
    size = pretrained.WEIGHTS_FILE.stat().st_size
    print(f"wrote {pretrained.WEIGHTS_FILE.name} ({size / 1e6:.2f} MB) and "
          f"{pretrained.METADATA_FILE.name}")


if __name__ == "__main__":
    main()
