"""Chapter 11's trained comparison of full and windowed attention, over 10 seeds and every kernel.

The chapter's copier (:class:`tformer.efficient.WindowedAttentionLM`: one causal attention layer
over token and position embeddings, 16 token kinds, 32 positions, d = 32) learns to output at
every position t ≥ 12 the token 12 positions back, for 300 AdamW steps at lr 1e-2
(``tformer.training.train``), with full attention, a window of 16 or a window of 8. Accuracy on
256 held-out sequences. Claims, per seed:

* ``full_solves`` / ``window16_solves``: held-out accuracy above 0.99;
* ``window8_at_chance``: accuracy below 0.15 and the mean loss of the last 20 steps above
  0.95 · ln 16 (the needed token lies outside every window of 8; chance is 1/16).

Run ``PYTHONPATH=src python bench/ch11_copier_seeds.py`` (writes
``src/tformer/data/bench/ch11_copier.json`` through ``bench/kernels.py``). The timing of banded
against masked attention is ``bench/ch11_windows.py``, kept apart: timings are not seed claims.
"""

from __future__ import annotations

import math

import kernels
import torch

from tformer.efficient import WindowedAttentionLM, copy_at_distance_batch
from tformer.training import train

DISTANCE, STEPS = 12, 300


def train_copier(window: int | None, seed: int) -> tuple[float, float]:
    """The chapter's ``train_copier``: (held-out accuracy, final training loss)."""
    torch.manual_seed(seed)
    model = WindowedAttentionLM(n_vocab=16, n_ctx=32, d=32, window=window)
    batches = torch.Generator().manual_seed(seed)
    log = train(model, lambda: copy_at_distance_batch(16, 32, DISTANCE, 32, batches), STEPS,
                lr=1e-2)
    tokens, targets = copy_at_distance_batch(16, 32, DISTANCE, 256,
                                             torch.Generator().manual_seed(1000))
    with torch.no_grad():
        hits = model(tokens).argmax(-1) == targets
    return hits[:, DISTANCE:].float().mean().item(), log.final_loss


def measure(seed: int) -> dict[str, dict[str, float | bool]]:
    runs = {name: train_copier(w, seed) for name, w in (("full", None), ("window16", 16),
                                                        ("window8", 8))}
    (acc8, loss8) = runs["window8"]
    return {
        "claims": {
            "full_solves": runs["full"][0] > 0.99,
            "window16_solves": runs["window16"][0] > 0.99,
            "window8_at_chance": acc8 < 0.15 and loss8 > 0.95 * math.log(16),
        },
        "values": {f"{name}_accuracy": acc for name, (acc, _) in runs.items()}
        | {f"{name}_loss": loss for name, (_, loss) in runs.items()},
    }


if __name__ == "__main__":
    kernels.main("ch11_copier", measure,
                 depends=["src/tformer/efficient.py", "src/tformer/training.py"])
