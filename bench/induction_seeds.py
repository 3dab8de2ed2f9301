"""Seed sweep for the induction-head lab (chapter 12): which of the chapter's claims hold per seed?

Usage: .venv/bin/python bench/induction_seeds.py [n_seeds=10] [--fixed-length L] [--distinct]

For each seed it trains the lab model with the default :class:`tformer.induction.LabSettings`
(``--distinct``: training segments without repeated tokens; ``--fixed-length``: one L only),
recording every head's scores during training (:class:`tformer.induction.CircuitTracker`), and
reports:

* ``phase``: the phase-change step of the second-half loss; ``prev@``/``ind@``: the first recorded
  step (every 10) at which layer 0's best previous-token score / layer 1's best induction score
  exceeds 0.5 — the circuit forming; ``coincide``: both within ``WINDOW`` steps of ``phase``;
* ``clean``, ``-prev``, ``-layer``: second-half loss at L = 16 (distinct segment tokens) clean,
  with the previous-token head mean-ablated, with both layer-1 heads mean-ablated;
* ``K``, ``Q``, ``V``: the loss with the previous-token head mean-ablated only in layer 1's keys,
  queries or values (:func:`tformer.interp.composition_patch`); ``K kills``: the keys-only patch
  raises the loss by more than 0.25 · ln 63 and halves the induction score; ``Q, V spare``: the
  queries-only and values-only patches each raise it by less than 0.05 · ln 63;
* ``icl``: the ICL score (loss at token 30 minus token 3, L = 16) at the first and last record;
* ``formed``: :attr:`tformer.induction.Assessment.formed`.

The chapter states a claim as a fact only if at least 8 of 10 seeds show it. Timings depend on the
machine and its load; they are printed, never asserted.
"""

from __future__ import annotations

import dataclasses
import sys
import time

from tformer import interp
from tformer.induction import CircuitTracker, LabSettings, assess, make_model, train_model

WINDOW = 40
"""Steps either side of the phase change within which both head scores must cross 0.5."""


def main(n_seeds: int = 10, fixed_length: int | None = None, distinct: bool = False) -> dict:
    settings = dataclasses.replace(LabSettings(), distinct=distinct)
    chance = interp.chance_loss(settings.n_vocab)
    print(f"settings: {settings}; chance loss ln {settings.n_vocab - 1} = {chance:.3f}")
    print("seed train_s phase prev@ ind@ coincide clean -prev -layer     K     Q     V"
          "  K_kills QV_spare  icl0  icl_end formed")
    counts = dict(formed=0, coincide=0, k_kills=0, qv_spare=0)
    start = time.perf_counter()
    for seed in range(n_seeds):
        model = make_model(settings, seed)
        tracker = CircuitTracker(model, settings)
        log = train_model(model, settings, seed=seed, fixed_length=fixed_length, callback=tracker)
        history = tracker.history()
        phase = interp.phase_change_step(log.second, chance)
        prev_at = history.first_step_above(history.previous[:, 0].amax(dim=-1))
        ind_at = history.first_step_above(history.induction[:, 1].amax(dim=-1))
        coincide = (
            phase is not None and prev_at is not None and ind_at is not None
            and abs(prev_at - phase) <= WINDOW and abs(ind_at - phase) <= WINDOW
        )
        result = assess(model, settings)
        k, q, v = (result.patched.get(path, (float("nan"), 0.0)) for path in ("keys", "queries", "values"))
        ind_clean = float(result.induction[result.ind_head]) if result.ind_head else 0.0
        k_kills = bool(result.patched) and k[0] - result.clean > 0.25 * chance and k[1] < 0.5 * ind_clean
        qv_spare = bool(result.patched) and max(q[0], v[0]) - result.clean < 0.05 * chance
        for name, flag in (("formed", result.formed), ("coincide", coincide),
                           ("k_kills", k_kills), ("qv_spare", qv_spare)):
            counts[name] += bool(flag)
        print(
            f"{seed:4d} {log.seconds:7.1f} {str(phase):>5} {str(prev_at):>5} {str(ind_at):>4}"
            f" {'yes' if coincide else 'no':>8} {result.clean:5.2f} {result.without_previous:5.2f}"
            f" {result.without_induction_layer:6.2f} {k[0]:5.2f} {q[0]:5.2f} {v[0]:5.2f}"
            f" {'yes' if k_kills else 'no':>8} {'yes' if qv_spare else 'no':>8}"
            f" {float(history.icl[0]):5.2f} {float(history.icl[-1]):8.2f}"
            f" {'yes' if result.formed else 'NO':>6}",
            flush=True,
        )
    summary = ", ".join(f"{name} {count}/{n_seeds}" for name, count in counts.items())
    print(f"{summary} ({time.perf_counter() - start:.0f} s in all)")
    return counts


if __name__ == "__main__":
    args = sys.argv[1:]
    fixed = None
    if "--fixed-length" in args:
        index = args.index("--fixed-length")
        fixed = int(args[index + 1])
        del args[index : index + 2]
    distinct = "--distinct" in args
    args = [arg for arg in args if arg != "--distinct"]
    main(int(args[0]) if args else 10, fixed, distinct)
