"""Chapter 7's one-head model over 10 seeds and 4 CPU kernels: how the single head that fails
the two-read difference task (:mod:`tformer.two_reads`) spends its one attention pattern.

Per seed it trains the 1-head model exactly as ``ch07_heads_seeds.py`` does (same seed, same
steps) and measures where the head looks for each pair of digits (``weights_by_pair``) and what
is left when its weights are fixed at their mean by position (``position_only_accuracy``). One
head is invariant to head order; the weights are probabilities, so no sign is arbitrary.

``one_head_by_content`` holds when the head's weight on t−1 moves with the digits (spans at least
``BY_CONTENT`` over the 16 digit pairs) and fixing it at its mean by position lowers accuracy:
the head chooses between the two digits by content rather than mixing them by position.

Run: ``PYTHONPATH=src python bench/ch07_one_head.py`` (writes
``src/tformer/data/bench/ch07_one_head.json``; ``--kernels default --seeds 0-2 --dry-run`` for
a look).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kernels  # noqa: E402

from tformer import two_reads  # noqa: E402

BY_CONTENT = 0.5  # least span of the weight on t-1 over the digit pairs
EXTREME = 0.1  # a pair's weight on t-1 within this of 0 or 1 counts as a choice


def measure(seed: int) -> dict[str, dict[str, float | bool]]:
    model = two_reads.make_model(1, seed=seed)
    two_reads.train_model(model, seed=seed)
    acc = two_reads.accuracy(model)
    posonly = two_reads.position_only_accuracy(model)
    near = two_reads.weights_by_pair(model)[0, 0]  # (4, 4): weight on t-1 per digit pair
    low, high = float(near.min()), float(near.max())
    extreme = int(((near <= EXTREME) | (near >= 1 - EXTREME)).sum())
    mix = two_reads.offset_weights(model)[0]  # mean weights on t-1, t-2
    claims = {
        "one_head_fails": acc < 0.5,
        "one_head_by_content": high - low >= BY_CONTENT and posonly < acc,
        "one_head_posonly_lower": posonly < acc,
    }
    values = {
        "acc": acc,
        "posonly_acc": posonly,
        "pair_min": low,
        "pair_max": high,
        "pair_range": high - low,
        "extreme_pairs": float(extreme),
        "mean_near": float(mix[0]),
        "mean_far": float(mix[1]),
    }
    return {"claims": claims, "values": values}


if __name__ == "__main__":
    kernels.main("ch07_one_head", measure, depends=["src/tformer/two_reads.py"])
