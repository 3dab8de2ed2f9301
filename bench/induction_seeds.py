"""Seed sweep for the induction-head lab (chapter 12): does the circuit form for every seed?

Usage: .venv/bin/python bench/induction_seeds.py [n_seeds=10] [--fixed-length L]

For each seed it trains the lab model with the default :class:`tformer.induction.LabSettings`
and reports the training time, the phase-change step, the best previous-token score in layer 0,
the best induction score in layer 1, the clean second-half loss at L = 16, the losses with the
previous-token head / the induction layer mean-ablated, and whether the circuit "formed"
(:attr:`tformer.induction.Assessment.formed`). The lab promises formation for at least 9 of 10
seeds. Timings depend on the machine and its load; they are printed, never asserted.
"""

from __future__ import annotations

import sys
import time

from tformer import interp
from tformer.induction import LabSettings, assess, make_model, train_model


def main(n_seeds: int = 10, fixed_length: int | None = None) -> int:
    settings = LabSettings()
    chance = interp.chance_loss(settings.n_vocab)
    print(f"settings: {settings}; chance loss ln {settings.n_vocab - 1} = {chance:.3f}")
    print("seed  train s  phase  prev(L0)  ind(L1)  clean  -prev  -layer  formed")
    formed = 0
    start = time.perf_counter()
    for seed in range(n_seeds):
        model = make_model(settings, seed)
        log = train_model(model, settings, seed=seed, fixed_length=fixed_length)
        phase = interp.phase_change_step(log.second, chance)
        result = assess(model, settings)
        formed += result.formed
        print(
            f"{seed:4d}  {log.seconds:7.1f}  {str(phase):>5}  {float(result.previous[0].max()):8.2f}"
            f"  {float(result.induction[1].max()):7.2f}  {result.clean:5.2f}"
            f"  {result.without_previous:5.2f}  {result.without_induction_layer:6.2f}"
            f"  {'yes' if result.formed else 'NO'}",
            flush=True,
        )
    print(f"formed for {formed} of {n_seeds} seeds ({time.perf_counter() - start:.0f} s in all)")
    return formed


if __name__ == "__main__":
    args = sys.argv[1:]
    fixed = None
    if "--fixed-length" in args:
        index = args.index("--fixed-length")
        fixed = int(args[index + 1])
        del args[index : index + 2]
    main(int(args[0]) if args else 10, fixed)
