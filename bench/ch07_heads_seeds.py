"""Chapter 7's heads experiment over 10 seeds: 1, 2, 4 and 8 heads of equal width (d = 32)
on the two-read difference task (:mod:`tformer.two_reads`).

Prints, per number of heads, the test accuracy of every seed, how many seeds solve the task
(accuracy ≥ 0.99), the best accuracy of the one-head model, and CPU seconds per model.
Run: ``PYTHONPATH=src python bench/ch07_heads_seeds.py``.
"""

from __future__ import annotations

import time

from tformer import two_reads

SEEDS = range(10)
HEADS = (1, 2, 4, 8)
SOLVED = 0.99


def main() -> None:
    for n_heads in HEADS:
        accuracies, seconds, asymmetric = [], [], 0
        for seed in SEEDS:
            model = two_reads.make_model(n_heads, seed=seed)
            start = time.process_time()
            two_reads.train_model(model, seed=seed)
            seconds.append(time.process_time() - start)
            accuracies.append(two_reads.accuracy(model))
            w = two_reads.offset_weights(model)  # (h, 2)
            if n_heads > 1:
                # two heads whose mixtures differ: |det| of the best 2 x 2 minor
                det = max(
                    abs(float(w[i, 0] * w[j, 1] - w[i, 1] * w[j, 0]))
                    for i in range(n_heads) for j in range(i + 1, n_heads)
                )
                asymmetric += det > 0.05
        solved = sum(a >= SOLVED for a in accuracies)
        print(
            f"h = {n_heads}: solved (acc ≥ {SOLVED}) in {solved}/10 seeds; "
            f"max acc {max(accuracies):.3f}, min {min(accuracies):.3f}; "
            f"heads with different mixtures (|det| > 0.05) in {asymmetric}/10; "
            f"{sum(seconds) / len(seconds):.1f} s CPU per model"
        )
        print("   accuracies:", " ".join(f"{a:.3f}" for a in accuracies), flush=True)


if __name__ == "__main__":
    main()
