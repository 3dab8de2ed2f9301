"""The induction-head lab end to end: train the lab model as the chapter does and check the circuit.

A training run's trajectory follows the CPU kernel's rounding, so no test here asserts what one
seed does. The chapter and its exercises train seeds 0, 1, 2 in order and keep the first whose
circuit forms (:attr:`tformer.induction.Assessment.formed`); ``bench/induction_seeds.py``
measures, for 10 seeds under each CPU kernel configuration of ``bench/kernels.py``, how often the
circuit forms and whether each claim holds for *every* seed that formed (its ``if_formed_``
claims, committed in ``tformer/data/bench/ch12_induction.json``). The tests check both levels:
the committed rates support the selection and the claims, and the selection, run here, yields a
model with every claimed behaviour — its heads found by score, never by index.

Thresholds, and why:

* a previous-token head in layer 0 and an induction head in layer 1, each found by
  ``interp.classify_heads`` at its threshold of 0.5 — most of the head's attention goes to the one
  position its role predicts, against about 0.1 for a head that attends uniformly;
* clean second-half loss below 0.25 · ln 63 ≈ 1.04 nats at L = 16: the copy is mostly predicted
  (chance is ln 63 ≈ 4.14);
* mean-ablating the previous-token head, or every head of the induction layer, raises that loss
  by more than 0.25 · ln 63: the heads are necessary, not just visible;
* the phase change coincides with the circuit forming: layer 0's best previous-token score and
  layer 1's best induction score (recorded every 10 steps) both cross 0.5 within 40 steps of
  the phase-change step, and the ICL score (loss at token 30 minus token 3) goes from ≈ 0 to
  below −0.8 · ln 63;
* K-composition, not Q or V: mean-ablating the previous-token head in layer 1's keys only raises
  the loss by more than 0.25 · ln 63 and halves the induction score; in its queries only or
  values only it raises the loss by less than 0.05 · ln 63;
* the fixed-length model (one L only) of the same seed predicts its own length (below 0.1 · ln 63)
  but fails on another length (above 0.9 · ln 63) — the shortcut the chapter warns about — has no
  previous-token head, and on training-like data with repeated tokens beats the floor of
  content-only copying (it uses position).
"""

from __future__ import annotations

import pytest
import torch

from tformer import interp, seed_rates
from tformer.data import fixed_length_batch
from tformer.induction import CircuitTracker, LabSettings, assess, make_model, train_model

SETTINGS = LabSettings()
RESULT = "ch12_induction"
TRIED = range(3)
"""The seeds the chapter and its solutions try, in order."""

CHAPTER_CLAIMS = (
    "coincide", "training_tail", "plateau_50", "icl", "layers", "prev_ablation",
    "one_less_than_prev", "k_kills", "qv_spare", "copies", "unseen_length", "fails_far",
    "control_kl", "bos_first_copy", "bos_second_copy",
    "shortcut_fits", "shortcut_fails_elsewhere", "shortcut_spares_layer0",
    "shortcut_beats_floor", "shortcut_no_prev",
    "shortcut_looks_inductive", "shortcut_offset",
)
"""What chapter 12 and its solutions assert of the model they show (see the bench's docstring)."""


def test_bench_supports_the_chapter():
    result = seed_rates.load(RESULT)
    for kernel, run in result["kernels"].items():
        formed = run["claims"]["formed"]
        assert any(formed[seed] for seed in TRIED), f"no seed of {list(TRIED)} formed under {kernel}"
    formed = seed_rates.rate(RESULT, "formed")
    assert formed.holds >= 7, formed  # most seeds form: the chapter rarely trains twice
    assert formed.holds < formed.of, formed  # the chapter says "not every run"
    for claim in CHAPTER_CLAIMS:
        rate = seed_rates.rate(RESULT, f"if_formed_{claim}")
        assert rate.everywhere, (claim, rate.per_kernel)
    # The solution notebook's printed facts and verdicts held for 8 of the 9 formed seeds, not
    # all: they must hold at least for the seeds it can show.
    for kernel, run in result["kernels"].items():
        shown = next(seed for seed in TRIED if run["claims"]["formed"][seed])
        assert run["claims"]["exercises"][shown], kernel


@pytest.mark.slow
def test_first_forming_seed_shows_the_circuit():
    for seed in TRIED:
        model = make_model(SETTINGS, seed)
        tracker = CircuitTracker(model, SETTINGS)
        log = train_model(model, SETTINGS, seed=seed, callback=tracker)
        result = assess(model, SETTINGS)
        if result.formed:
            break
    else:
        pytest.fail(f"none of seeds {list(TRIED)} formed the circuit")
    chance = interp.chance_loss(SETTINGS.n_vocab)
    phase = interp.phase_change_step(log.second, chance)
    assert phase is not None
    history = tracker.history()
    prev_at = history.first_step_above(history.previous[:, 0].amax(dim=-1))
    ind_at = history.first_step_above(history.induction[:, 1].amax(dim=-1))
    assert abs(prev_at - phase) <= 40 and abs(ind_at - phase) <= 40, (phase, prev_at, ind_at)
    assert abs(float(history.icl[history.steps < phase - 40].mean())) < 0.1 * chance
    assert float(history.icl[-5:].mean()) < -0.8 * chance
    assert result.prev_head is not None and result.prev_head[0] == 0, result.previous
    assert result.ind_head is not None and result.ind_head[0] == 1, result.induction
    assert result.clean < 0.25 * chance
    assert result.without_previous - result.clean > 0.25 * chance
    assert result.without_induction_layer - result.clean > 0.25 * chance
    keys, queries, values = (result.patched[path] for path in ("keys", "queries", "values"))
    assert keys[0] - result.clean > 0.25 * chance
    assert keys[1] < 0.5 * float(result.induction[result.ind_head])
    assert queries[0] - result.clean < 0.05 * chance and values[0] - result.clean < 0.05 * chance

    shortcut = make_model(SETTINGS, seed)
    train_model(shortcut, SETTINGS, seed=seed, fixed_length=16, steps=SETTINGS.steps // 2)
    # the bench's evaluation batches and thresholds (shortcut_fits, _fails_elsewhere, _no_prev,
    # _beats_floor)
    own = fixed_length_batch(SETTINGS.n_vocab, 256, 16, seed=316).tokens
    other = fixed_length_batch(SETTINGS.n_vocab, 256, 10, seed=310).tokens
    assert interp.half_losses(shortcut, own, 16).second < 0.1 * chance
    assert interp.half_losses(shortcut, other, 10).second > 0.9 * chance
    evaluation = fixed_length_batch(SETTINGS.n_vocab, 256, 16, seed=123).tokens
    previous, _ = interp.head_scores(shortcut, evaluation, 16)
    assert float(previous.max()) < 0.5, previous  # no previous-token head at all
    repeats = fixed_length_batch(SETTINGS.n_vocab, 512, 16, seed=123, distinct=False).tokens
    floor = interp.copy_floor(repeats, 16).loss
    assert interp.half_losses(shortcut, repeats, 16).second < 0.25 * floor


@pytest.mark.slow
def test_training_is_deterministic_on_cpu():
    runs = []
    for _ in range(2):
        model = make_model(SETTINGS, 3)
        runs.append(train_model(model, SETTINGS, seed=3, steps=20).second)
    assert runs[0] == runs[1]


def test_make_model_is_the_documented_architecture():
    model = make_model(SETTINGS, 0)
    config = model.config
    assert (config.positions, config.norm, config.mlp, config.final_norm) == ("rope", "none", False, False)
    assert not config.tie_weights and config.n_layers == 2
    assert torch.equal(make_model(SETTINGS, 0).token_embedding.weight, model.token_embedding.weight)
    std = float(model.token_embedding.weight.detach().std())
    assert 0.9 < std < 1.1
