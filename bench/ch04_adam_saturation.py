"""Chapter 4's claim about saturation and Adam, over 10 seeds.

For d_k = 256, one query trained (alone) for 500 steps to read a middle-ranked key
(``tformer.saturation.steer_query``): count the seeds in which (a) SGD's first step on the unscaled
row is below 1e-3 and (a') its query travels less than 0.01 in 500 steps (frozen), (b') unscaled
Adam's first step is at least half the scaled one, (b) unscaled Adam moves the query a total
distance above 1 (not frozen), (c) scaled Adam reaches weight 0.5 on the target, (d) unscaled
Adam does not.

    PYTHONPATH=src .venv/bin/python bench/ch04_adam_saturation.py
"""

from __future__ import annotations

import torch

from tformer.saturation import steer_query

torch.set_num_threads(1)
names = ("sgd frozen", "sgd stays", "adam first step", "adam moves", "scaled reaches",
         "unscaled does not")
counts = dict.fromkeys(names, 0)
for seed in range(10):
    run = {(opt, scale): steer_query(256, scale=scale, optimizer=opt, seed=seed)
           for opt in ("adam", "sgd") for scale in (True, False)}
    counts["sgd frozen"] += run["sgd", False]["first_step"] < 1e-3
    counts["sgd stays"] += run["sgd", False]["distance"] < 0.01
    counts["adam first step"] += (run["adam", False]["first_step"]
                                  > 0.5 * run["adam", True]["first_step"])
    counts["adam moves"] += run["adam", False]["distance"] > 1.0
    counts["scaled reaches"] += run["adam", True]["reached"] < 500
    counts["unscaled does not"] += run["adam", False]["reached"] == 500
for name, count in counts.items():
    print(f"{name:>18}: {count}/10 seeds")
