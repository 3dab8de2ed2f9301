"""Chapter 4's claims about saturation under SGD and Adam, over 10 seeds and every CPU kernel.

The chapter's experiment (``tformer.saturation.steer_queries``): 100 independent rows, each one
query trained alone for 500 steps (lr 0.05) to read the middle-ranked of its 16 keys at
d_k = 256, unscaled and scaled, with SGD and with Adam. Claims, per seed (each over the 100 rows):

* ``sgd_freezes_some``: at least 5 unscaled rows stay put under SGD (the query travels less than
  0.01 in 500 steps), and every scaled row travels more than 1;
* ``frozen_means_small_step``: every row SGD leaves put had a first step below 1e-3;
* ``adam_moves_frozen``: Adam moves more than half of those rows a distance above 1;
* ``adam_first_step``: the median unscaled row's first Adam step is at least 0.9 × the scaled one;
* ``unscaled_never``: no unscaled row's target weight exceeds 1e-6 after 500 steps, under either
  optimiser;
* ``scaled_adam_reaches`` / ``scaled_sgd_reaches``: scaled, at least 95 / 90 of the 100 rows give
  their target weight above 0.5 within 500 steps.

Run ``PYTHONPATH=src python bench/ch04_adam_saturation.py`` (writes
``src/tformer/data/bench/ch04_saturation.json`` through ``bench/kernels.py``).
"""

from __future__ import annotations

import kernels

from tformer.saturation import steer_queries

N_ROWS = 100


def measure(seed: int) -> dict[str, dict[str, float | bool]]:
    run = {(opt, scale): steer_queries(256, n_rows=N_ROWS, scale=scale, optimizer=opt, seed=seed)
           for opt in ("sgd", "adam") for scale in (True, False)}
    sgd_u, adam_u = run["sgd", False], run["adam", False]
    sgd_s, adam_s = run["sgd", True], run["adam", True]
    frozen = sgd_u["distance"] < 0.01
    moved = adam_u["distance"][frozen] > 1.0
    ratio = (adam_u["first_step"] / adam_s["first_step"]).median().item()
    worst = max(sgd_u["target_weight"].max().item(), adam_u["target_weight"].max().item())
    reached = {name: int((r["reached"] < 500).sum()) for name, r in
               (("adam", adam_s), ("sgd", sgd_s))}
    return {
        "claims": {
            "sgd_freezes_some": int(frozen.sum()) >= 5 and sgd_s["distance"].min().item() > 1.0,
            "frozen_means_small_step": bool((sgd_u["first_step"][frozen] < 1e-3).all()),
            "adam_moves_frozen": 2 * int(moved.sum()) > int(frozen.sum()),
            "adam_first_step": ratio >= 0.9,
            "unscaled_never": worst < 1e-6,
            "scaled_adam_reaches": reached["adam"] >= 95,
            "scaled_sgd_reaches": reached["sgd"] >= 90,
        },
        "values": {
            "sgd_frozen_rows": int(frozen.sum()),
            "adam_moves_frozen_rows": int(moved.sum()),
            "adam_first_step_ratio": ratio,
            "unscaled_largest_target_weight": worst,
            "scaled_adam_reached_rows": reached["adam"],
            "scaled_sgd_reached_rows": reached["sgd"],
        },
    }


if __name__ == "__main__":
    kernels.main("ch04_saturation", measure, depends=["src/tformer/saturation.py"])
