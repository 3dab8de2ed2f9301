"""Seed rates of the induction-head lab (chapter 12) under every CPU kernel.

Usage: ``PYTHONPATH=src python bench/induction_seeds.py [--kernels avx2] [--seeds 0-2 --dry-run]``
(see ``bench/kernels.py``); writes ``src/tformer/data/bench/ch12_induction.json``.

For each seed it does what the chapter and its exercises do with that seed, on the same
evaluation batches: it trains the lab model with the default :class:`tformer.induction.LabSettings`
(recording every head's scores with :class:`tformer.induction.CircuitTracker`) and the
fixed-length model (``L = 16`` only, half the steps), and records every claim the pages make.

The chapter trains seeds 0, 1, 2, … in order and shows the first whose circuit forms
(:attr:`tformer.induction.Assessment.formed`), so the claims it then asserts must hold for *every
seed that forms*: each ``if_formed_<claim>`` below is "not formed, or <claim>", and the chapter
asserts a claim only if its ``if_formed_`` rate is 10 of 10 under every kernel. The raw claims
(how often they hold at all) are recorded for ``bench/README.md``.

Claims (thresholds in units of the chance loss ``c = ln 63``; losses are second-half losses on
``L = 16`` segments of distinct tokens unless said otherwise):

* ``formed``: the circuit forms within the lab's steps (``Assessment.formed``);
* ``coincide``: layer 0's best previous-token score and layer 1's best induction score (recorded
  every 10 steps) both cross 0.5 within 40 steps of the phase change;
* ``training_tail``: the last 50 steps' second-half training loss < 0.25 c < the first half's;
* ``icl``: the ICL score (loss at token 30 minus token 3) averages within ±0.1 c before the phase
  change and below −0.8 c over the last 5 records;
* ``layers``: every head classified as an induction head sits in layer 1, the previous-token
  head in layer 0; ``two_induction``: both layer-1 heads are classified induction heads;
* ``prev_ablation``: mean-ablating the previous-token head raises the loss by > 0.25 c;
  ``all_induction_ablation``: mean-ablating every induction head leaves > 0.9 c, more than
  ablating the best one alone; ``one_less_than_prev``: ablating the best induction head alone
  raises it less than ablating the previous-token head;
* ``k_kills``: the previous-token head mean-ablated in layer 1's keys only raises the loss by
  > 0.25 c and halves the induction score; ``qv_spare``: in queries only or values only, < 0.05 c
  and the induction score stays above 0.9 of its clean value;
* ``copies``: the induction head's full OV circuit copies more than half of the content tokens;
* ``unseen_length``: the loss is below 0.25 c for some L longer than any training length;
  ``fails_far``: at L = 40 it is above 0.5 c;
* ``control``: on sequences whose second half repeats nothing the second-half loss is above
  chance, the predictions' entropy below 0.75 c, the top guess right < 5 %, and first-half
  tokens seen before cost > 0.5 nats more than new ones; ``control_kl``: that loss equals
  ``ln 63 + D_KL(uniform ‖ q)`` of the predictions within 0.05 nats (sampling noise);
* ``exercises``: the solution notebook's printed facts and verdicts — zero-ablating layer 0's
  best previous-token head takes the loss from < 0.5 to > 2 nats (12.4); the heads with the best
  previous-token and induction score (the lower of L = 10 and 20) sit in layers 0 and 1, and
  ``checks.ch12.ex5`` accepts them (12.5); ``checks.ch12.ex6`` accepts the solution's BOS
  share (12.6);
* ``bos_first_copy``, ``bos_second_copy``: the induction head puts more than half of its weight
  on BOS over the first copy (12.6, printed) and < 10 % in the second (12.6's solution: "a few
  per cent");
* the fixed-length model of the same seed (``L = 16`` only, half the steps):
  ``shortcut_fits``: < 0.1 c at L = 16; ``shortcut_fails_elsewhere``: > 0.9 c at L = 10 and 24;
  ``shortcut_spares_layer0``: < 0.25 c with both layer-0 heads zeroed, where the random-length
  model loses more than 0.25 c; ``shortcut_beats_floor``: on data with repeated tokens it pays
  < 0.25 of the floor of content-only copying; ``random_near_floor``: the random-length model
  pays between the floor and 1.5 times it; ``shortcut_no_prev``: no head has a previous-token
  score above 0.5; ``shortcut_layer0_ind``: a layer-0 head has an induction score above 0.5;
  ``shortcut_looks_inductive``: its most inductive head (the one Fig. 12.9 draws) scores above
  0.5 at L = 16; ``shortcut_offset``: on L = 10 that head puts more than half of its weight 15
  positions back (queries 15 … 20) and scores below 0.25;
* ``plateau_50``: the second-half training loss averages above 0.9 c over the first 50 steps.

Timings depend on the machine and its load; they are recorded, never asserted.
"""

from __future__ import annotations

import contextlib
import io

import kernels
import torch

import tformer
import tformer.checks.ch12
from tformer import checks, interp
from tformer.data import fixed_length_batch, random_batch, repeated_batch
from tformer.induction import (
    CircuitTracker,
    LabSettings,
    assess,
    make_model,
    train_model,
)

SETTINGS = LabSettings()
CHANCE = interp.chance_loss(SETTINGS.n_vocab)
VALUES = ("train_seconds", "phase", "icl_end", "n_induction", "clean", "prev_mean", "ind_mean",
          "copying", "loss_40", "bos_first_copy", "bos_second_copy")
"""The random-length model's recorded values (NaN where a seed's circuit did not form)."""
WINDOW = 40
"""Steps either side of the phase change within which both head scores must cross 0.5."""


def _second(model, tokens, length) -> float:
    return interp.half_losses(model, tokens, length).second


@torch.no_grad()
def _main_model(seed: int) -> tuple[dict, dict, object]:
    """The chapter's random-length model: its claims, values, and the model itself."""
    model = make_model(SETTINGS, seed)
    tracker = CircuitTracker(model, SETTINGS, every=10)
    with torch.enable_grad():
        log = train_model(model, SETTINGS, seed=seed, callback=tracker)
    history = tracker.history()
    result = assess(model, SETTINGS)
    claims: dict[str, bool] = {"formed": result.formed}
    values: dict[str, float] = dict.fromkeys(VALUES, float("nan"))  # every seed has every key
    values["train_seconds"] = log.seconds

    phase = interp.phase_change_step(log.second, CHANCE)
    prev_at = history.first_step_above(history.previous[:, 0].amax(dim=-1))
    ind_at = history.first_step_above(history.induction[:, 1].amax(dim=-1))
    values["phase"] = float("nan") if phase is None else phase
    claims["coincide"] = (
        phase is not None and prev_at is not None and ind_at is not None
        and abs(prev_at - phase) <= WINDOW and abs(ind_at - phase) <= WINDOW
    )
    first = sum(log.first[-50:]) / 50
    second = sum(log.second[-50:]) / 50
    claims["training_tail"] = second < 0.25 * CHANCE < first
    claims["plateau_50"] = sum(log.second[:50]) / 50 > 0.9 * CHANCE
    icl_end = float(history.icl[-5:].mean())
    before = history.steps < (phase if phase is not None else 10**9) - WINDOW
    icl_start = float(history.icl[before].mean()) if before.any() else float("nan")
    claims["icl"] = abs(icl_start) < 0.1 * CHANCE and icl_end < -0.8 * CHANCE
    values["icl_end"] = icl_end

    # scores and classification (the chapter's evaluation batch)
    evaluation = fixed_length_batch(SETTINGS.n_vocab, 256, 16, seed=123)
    tokens, L = evaluation.tokens, evaluation.length
    previous, induction = interp.head_scores(model, tokens, L)
    kinds = interp.classify_heads(previous, induction)
    prev_head = interp.find_head(kinds, "previous-token", previous)
    ind_head = interp.find_head(kinds, "induction", induction)
    induction_heads = [h for h, kind in kinds.items() if kind == "induction"]
    found = prev_head is not None and ind_head is not None
    claims["layers"] = (
        found and prev_head[0] == 0 and all(layer == 1 for layer, _ in induction_heads)
    )
    claims["two_induction"] = len(induction_heads) == 2
    values["n_induction"] = len(induction_heads)
    for name in ("prev_ablation", "all_induction_ablation", "one_less_than_prev", "k_kills",
                 "qv_spare", "copies", "unseen_length", "fails_far", "bos_first_copy",
                 "bos_second_copy"):
        claims[name] = False
    if found and prev_head[0] < ind_head[0]:
        reference = repeated_batch(SETTINGS.n_vocab, 256, seed=99, distinct=False).tokens
        means = interp.mean_head_outputs(model, reference)
        clean = _second(model, tokens, L)
        with interp.ablate(model, prev_head, "mean", means=means):
            prev_mean = _second(model, tokens, L) - clean
        with interp.ablate(model, ind_head, "mean", means=means):
            ind_mean = _second(model, tokens, L) - clean
        with interp.ablate(model, induction_heads, "mean", means=means):
            no_induction = _second(model, tokens, L)
        claims["prev_ablation"] = prev_mean > 0.25 * CHANCE
        claims["all_induction_ablation"] = (
            no_induction > 0.9 * CHANCE and no_induction - clean > ind_mean
        )
        claims["one_less_than_prev"] = ind_mean < prev_mean
        values.update(clean=clean, prev_mean=prev_mean, ind_mean=ind_mean)
        patched = {}
        for path in ("keys", "queries", "values"):
            run = interp.composition_patch(model, tokens, prev_head, [path],
                                           layer=ind_head[0], means=means)
            loss = interp.half_losses_from_logits(run.logits[:, :-1], tokens, L).second
            score = float(interp.induction_score(run.weights[:, ind_head[1]], L).mean())
            patched[path] = (loss, score)
        ind_clean = float(induction[ind_head])
        claims["k_kills"] = (
            patched["keys"][0] - clean > 0.25 * CHANCE and patched["keys"][1] < 0.5 * ind_clean
        )
        claims["qv_spare"] = all(
            patched[p][0] - clean < 0.05 * CHANCE and patched[p][1] > 0.9 * ind_clean
            for p in ("queries", "values")
        )
        content = range(1, SETTINGS.n_vocab)
        copying = interp.copying_score(interp.full_ov_circuit(model, *ind_head), content)
        claims["copies"] = copying > 0.5
        values["copying"] = copying
        curve = {}
        for n in range(3, 41):
            batch = fixed_length_batch(SETTINGS.n_vocab, 64, n, seed=200 + n)
            curve[n] = _second(model, batch.tokens, n)
        good = [n for n, loss in curve.items() if loss < 0.25 * CHANCE]
        claims["unseen_length"] = any(n > SETTINGS.max_length for n in good)
        claims["fails_far"] = curve[40] > 0.5 * CHANCE
        values["loss_40"] = curve[40]
        first_copy = fixed_length_batch(SETTINGS.n_vocab, 256, 16, seed=5).tokens
        weights = interp.capture(model, first_copy).weights[ind_head[0], :, ind_head[1]]
        bos_second = float(weights[:, 17:, 0].mean())
        bos_first = float(weights[:, 1:17, 0].mean())
        claims["bos_second_copy"] = bos_second < 0.1
        claims["bos_first_copy"] = bos_first > 0.5
        values.update(bos_first_copy=bos_first, bos_second_copy=bos_second)
    claims["control"], claims["control_kl"] = _control(model)
    claims["exercises"] = _exercises(model)
    return claims, values, model


@torch.no_grad()
def _control(model) -> tuple[bool, bool]:
    """The chapter's 'nothing to copy' claims (sequences whose second half repeats nothing)."""
    control = random_batch(SETTINGS.n_vocab, 256, 16, seed=5)
    logits = model(control.inputs)
    second = logits[:, 17:]
    probs = second.softmax(dim=-1)
    targets = control.targets[:, 17:]
    loss = float(torch.nn.functional.cross_entropy(second.transpose(1, 2), targets))
    entropy = float(-(probs * probs.clamp_min(1e-12).log()).sum(-1).mean())
    top_right = float((probs.argmax(dim=-1) == targets).float().mean())
    again = torch.zeros_like(control.inputs, dtype=torch.bool)
    for t in range(2, 17):
        again[:, t] = (control.inputs[:, 1:t] == control.inputs[:, t:t + 1]).any(1)
    first_ce = torch.nn.functional.cross_entropy(
        logits[:, :16].transpose(1, 2), control.targets[:, :16], reduction="none")
    seen = again[:, :16]
    kl = float((-probs[..., 1:].log().mean(-1) - CHANCE).mean())  # D_KL(uniform ‖ q)
    return (
        loss > CHANCE and entropy < 0.75 * CHANCE and top_right < 0.05
        and float(first_ce[seen].mean()) > float(first_ce[~seen].mean()) + 0.5
    ), abs(CHANCE + kl - loss) < 0.05


@torch.no_grad()
def _exercises(model) -> bool:
    """What the solution notebook prints in 12.4 and 12.5 (compared by nbval)."""
    evaluation = fixed_length_batch(SETTINGS.n_vocab, 256, 16, seed=123).tokens
    previous, induction = interp.head_scores(model, evaluation, 16)
    clean = _second(model, evaluation, 16)
    with interp.ablate(model, (0, int(previous[0].argmax()))):
        ablated = _second(model, evaluation, 16)
    lower = []
    for L in (10, 20):
        tokens = fixed_length_batch(SETTINGS.n_vocab, 64, L, seed=40 + L).tokens
        lower.append(interp.head_scores(model, tokens, L))
    prev = torch.minimum(lower[0][0], lower[1][0])
    ind = torch.minimum(lower[0][1], lower[1][1])
    answer = {"previous-token": divmod(int(prev.argmax()), prev.shape[1]),
              "induction": divmod(int(ind.argmax()), ind.shape[1])}
    first = fixed_length_batch(SETTINGS.n_vocab, 256, 16, seed=5).tokens
    layer, head = 1, int(induction[1].argmax())  # 12.6's solution: the induction head of 12.4
    with io.StringIO() as sink, contextlib.redirect_stdout(sink):  # the checkers print verdicts
        passed_5 = checks.ch12.ex5(answer, model).passed
        weights = interp.capture(model, first).weights[layer, :, head]
        passed_6 = checks.ch12.ex6(float(weights[:, 1:17, 0].mean()), model, first, 16).passed
    return (
        clean < 0.5 and ablated > 2
        and answer["previous-token"][0] == 0 and answer["induction"][0] == 1
        and passed_5 and passed_6
    )


@torch.no_grad()
def _shortcut(seed: int, model) -> tuple[dict, dict]:
    """The fixed-length model of the same seed against the random-length ``model``."""
    shortcut = make_model(SETTINGS, seed)
    with torch.enable_grad():
        train_model(shortcut, SETTINGS, seed=seed, fixed_length=16, steps=SETTINGS.steps // 2)

    def evaluate(net, n, ablate_layer0=False):
        tokens = fixed_length_batch(SETTINGS.n_vocab, 256, n, seed=300 + n).tokens
        layer0 = [(0, h) for h in range(SETTINGS.n_heads)] if ablate_layer0 else []
        with interp.ablate(net, layer0):
            return _second(net, tokens, n)

    fixed = {n: evaluate(shortcut, n) for n in (10, 16, 24)}
    fixed_no0, rand_no0 = evaluate(shortcut, 16, True), evaluate(model, 16, True)
    repeats = fixed_length_batch(SETTINGS.n_vocab, 512, 16, seed=123, distinct=False).tokens
    floor = interp.copy_floor(repeats, 16).loss
    rep_random, rep_fixed = _second(model, repeats, 16), _second(shortcut, repeats, 16)
    evaluation = fixed_length_batch(SETTINGS.n_vocab, 256, 16, seed=123).tokens
    s_prev, s_ind = interp.head_scores(shortcut, evaluation, 16)
    s_kinds = interp.classify_heads(s_prev, s_ind)
    s_best = interp.find_head(s_kinds, "induction", s_ind) or (1, int(s_ind[1].argmax()))
    other = fixed_length_batch(SETTINGS.n_vocab, 256, 10, seed=7).tokens  # T = 21
    weights = interp.capture(shortcut, other).weights[s_best[0], :, s_best[1]]  # (B, T, T)
    queries = torch.arange(15, other.shape[1])
    offset_15 = float(weights[:, queries, queries - 15].mean())
    ind_10 = float(interp.induction_score(weights, 10).mean())
    claims = {
        "shortcut_fits": fixed[16] < 0.1 * CHANCE,
        "shortcut_fails_elsewhere": min(fixed[10], fixed[24]) > 0.9 * CHANCE,
        "shortcut_spares_layer0": fixed_no0 < 0.25 * CHANCE < rand_no0 - fixed_no0,
        "shortcut_beats_floor": rep_fixed < 0.25 * floor,
        "random_near_floor": floor < rep_random < 1.5 * floor,
        "shortcut_no_prev": float(s_prev.max()) < 0.5,
        "shortcut_layer0_ind": float(s_ind[0].max()) > 0.5,
        "shortcut_looks_inductive": float(s_ind[s_best]) > 0.5,
        "shortcut_offset": offset_15 > 0.5 and ind_10 < 0.25,
    }
    values = {"shortcut_16": fixed[16], "shortcut_10": fixed[10], "shortcut_offset_15": offset_15,
              "shortcut_ind_10": ind_10, "shortcut_best_ind": float(s_ind[s_best]),
              "shortcut_best_layer": s_best[0], "shortcut_prev": float(s_prev.max()),
              "shortcut_layer0_ind": float(s_ind[0].max())}
    return claims, values


def measure(seed: int) -> dict[str, dict]:
    tformer.reproducible(0, deterministic=True)  # as the chapter's first cell does
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the chapter does (training runs on one thread anyway)
    try:
        claims, values, model = _main_model(seed)
        short_claims, short_values = _shortcut(seed, model)
    finally:
        torch.set_num_threads(threads)
    claims.update(short_claims)
    values.update(short_values)
    for name in [c for c in claims if c != "formed"]:
        claims[f"if_formed_{name}"] = (not claims["formed"]) or claims[name]
    return {"claims": claims, "values": values}


if __name__ == "__main__":
    kernels.main("ch12_induction", measure,
                 depends=["src/tformer/induction.py", "src/tformer/interp.py",
                          "src/tformer/checks/ch12.py"])
