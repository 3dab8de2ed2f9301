"""Chapter 4's training runs with and without 1/√d_k, over 10 seeds and every CPU kernel.

The chapter's experiment (``tformer.scale_training``): the book's GPT, one layer with one head
of width d_k = 64 and no MLP, trained for 100 steps on characters of the Python Language
Reference, four runs per seed — scaled and unscaled scores, at the book's init N(0, 0.02²) and at
Xavier init. Per seed, "loss" is the mean training loss over steps 50–99, "early" over 0–49.
Claims:

* ``xavier_unscaled_worse``: at Xavier init, the unscaled run's loss exceeds the scaled run's by
  more than MARGIN (0.05 nats);
* ``gpt_unscaled_not_worse``: at the book's init, the unscaled run's loss is at most MARGIN above
  the scaled run's;
* ``xavier_unscaled_saturated``: before training, the unscaled Xavier model's last query puts a
  mean largest weight above 0.5 on one of its 64 keys; every other model below 0.2;
* ``xavier_unscaled_stays_sharp``: after training, the unscaled Xavier model's mean largest
  weight is still above 0.5;
* ``xavier_scaled_beats_gpt_scaled``: the scaled Xavier run's loss is below the scaled run's at
  the book's init.

Largest weights are measured on a fixed held-out batch of 64 windows.

Run ``PYTHONPATH=src python bench/ch04_scale_training.py`` (writes
``src/tformer/data/bench/ch04_scale_training.json`` through ``bench/kernels.py``).
"""

from __future__ import annotations

import kernels

from tformer.data import CharTokenizer, load_python_docs
from tformer.scale_training import train_run

MARGIN = 0.05
RUNS = {"gpt_scaled": ("gpt", True), "gpt_unscaled": ("gpt", False),
        "xavier_scaled": ("xavier", True), "xavier_unscaled": ("xavier", False)}


def measure(seed: int) -> dict[str, dict[str, float | bool]]:
    text = load_python_docs()
    tokenizer = CharTokenizer.from_text(text)
    data = tokenizer.encode(text)
    runs = {name: train_run(data, tokenizer.n_vocab, scaled=scaled, init=init, seed=seed)
            for name, (init, scaled) in RUNS.items()}
    late = {name: run.mean_loss(50, 100) for name, run in runs.items()}
    early = {name: run.mean_loss(0, 50) for name, run in runs.items()}
    others = [runs[name].top_before for name in RUNS if name != "xavier_unscaled"]
    claims = {
        "xavier_unscaled_worse": late["xavier_unscaled"] - late["xavier_scaled"] > MARGIN,
        "gpt_unscaled_not_worse": late["gpt_unscaled"] - late["gpt_scaled"] < MARGIN,
        "xavier_unscaled_saturated": (runs["xavier_unscaled"].top_before > 0.5
                                      and max(others) < 0.2),
        "xavier_unscaled_stays_sharp": runs["xavier_unscaled"].top_after > 0.5,
        "xavier_scaled_beats_gpt_scaled": late["xavier_scaled"] < late["gpt_scaled"],
    }
    values: dict[str, float] = {}
    for name, run in runs.items():
        values[f"{name}_loss"] = late[name]
        values[f"{name}_early"] = early[name]
        values[f"{name}_top_before"] = run.top_before
        values[f"{name}_top_after"] = run.top_after
    values["xavier_gap"] = late["xavier_unscaled"] - late["xavier_scaled"]
    values["gpt_gap"] = late["gpt_unscaled"] - late["gpt_scaled"]
    return {"claims": claims, "values": values}


if __name__ == "__main__":
    kernels.main("ch04_scale_training", measure, depends=[
        "src/tformer/scale_training.py", "src/tformer/model.py", "src/tformer/training.py",
        "src/tformer/layers.py", "src/tformer/multihead.py", "src/tformer/attention.py",
        "src/tformer/data/text.py", "src/tformer/data/python_docs.txt",
    ])
