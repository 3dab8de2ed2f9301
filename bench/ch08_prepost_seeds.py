"""Seed sweep for chapter 8's pre-norm vs post-norm experiment: how often does each claim hold?

Usage: .venv/bin/python bench/ch08_prepost_seeds.py [n_seeds=10]

For every seed it trains the chapter's character-level stacks (:mod:`tformer.normalisation`,
80 AdamW steps, lr 3e-3, no clipping) — pre- and post-norm, L ∈ {2, 6, 8}, with and without a
20-step warm-up — plus the L = 6 stacks at lr 1e-2, and probes the gradients at initialisation
for L ∈ {2, 16}, also with the embeddings scaled by 50 (standard deviation 1). It prints, per
claim, in how many seeds it holds. The chapter states a claim as a fact only if it holds for at
least 8 of 10 seeds. Timings are printed, never asserted.
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace

import torch

from tformer.normalisation import StackSettings, make_stack, probe_gradients, train_stack


def main(n_seeds: int = 10) -> int:
    torch.set_num_threads(1)
    base = StackSettings()
    counts: dict[str, int] = {}

    def tally(name: str, holds: bool) -> None:
        counts[name] = counts.get(name, 0) + bool(holds)

    start = time.process_time()
    for seed in range(n_seeds):
        final = {}
        for lr in (3e-3, 1e-2):
            settings = replace(base, lr=lr)
            for n_layers in ((2, 6, 8) if lr == 3e-3 else (6,)):
                for norm in ("pre", "post"):
                    for warmup in (0, 20):
                        run = train_stack(norm, n_layers, warmup, seed, settings)
                        final[lr, norm, n_layers, warmup] = run.final_loss
                        if lr == 3e-3 and warmup == 0 and n_layers == 6:
                            grads = run.gradients_trained
                            if norm == "pre":
                                tally("pre, L=6, trained: layer 1 gradient > top layer's",
                                      grads[0] > grads[-1])
        for (lr, norm, n_layers, warmup), loss in final.items():
            if norm == "pre":
                tally(f"lr {lr:g}, L={n_layers}, warm-up {warmup}: pre-norm loss < post-norm",
                      loss < final[lr, "post", n_layers, warmup])
                if warmup == 20:
                    tally(f"lr {lr:g}, L={n_layers}: warm-up lowers pre-norm's loss",
                          loss < final[lr, "pre", n_layers, 0])
                    tally(f"lr {lr:g}, L={n_layers}: warm-up lowers post-norm's loss",
                          final[lr, "post", n_layers, 20] < final[lr, "post", n_layers, 0])
        top = {(norm, n): probe_gradients(make_stack(norm, n, seed))[-1]
               for norm in ("pre", "post") for n in (2, 16)}
        tally("init: pre-norm top-layer gradient at L=16 < at L=2",
              top["pre", 16] < top["pre", 2])
        tally("init: post-norm top-layer gradient at L=16 within 25% of L=2",
              0.8 < top["post", 16] / top["post", 2] < 1.25)
        scaled = {(norm, n): probe_gradients(make_stack(norm, n, seed, embedding_scale=50.0))[-1]
                  for norm in ("pre", "post") for n in (2, 16)}
        tally("init, embeddings x 50: pre-norm top-layer gradient at L=16 within 25% of L=2",
              0.8 < scaled["pre", 16] / scaled["pre", 2] < 1.25)
        tally("init, embeddings x 50: post / pre top-layer gradient at L=16 in (0.7, 1.4)",
              0.7 < scaled["post", 16] / scaled["pre", 16] < 1.4)
        for norm in ("pre", "post"):
            grads = probe_gradients(make_stack(norm, 6, seed))
            if norm == "pre":
                tally("init: pre-norm, L=6, layer 1 gradient > top layer's", grads[0] > grads[-1])
            else:
                tally("init: post-norm, L=6, largest / smallest layer gradient < 1.25",
                      max(grads) / min(grads) < 1.25)
        print(f"seed {seed} done, {time.process_time() - start:.0f} s CPU", flush=True)
    print(f"\n{n_seeds} seeds, {time.process_time() - start:.0f} s CPU in all")
    for name, count in counts.items():
        print(f"{count:2d}/{n_seeds}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10))
