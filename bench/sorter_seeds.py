"""Chapters 9 and 10: the digit sorter's claims over ten seeds, under every CPU kernel.

For each seed: train the sorter (``tformer.encoder_decoder.train_sorter``: d = 32, 2 + 2 layers,
2 heads, 400 steps), its untrained initial weights and a frozen-encoder copy
(``cut_cross_gradient=True``); then measure what the chapters state, on the chapters' own test
data (the same generator seeds as the notebooks):

- ch09: next-token accuracy, cross-attention alignment (trained vs untrained, best head of the last
  layer) and the heat-map of the source ``3071582``, the W_V = 0 intervention, the frozen encoder
  (weights, embedding change, own-token rows, accuracy);
- ch10: the first loss against ln 12, exposure bias on 500 strings of 10 digits (position by
  position and shift-tolerant, ``tformer.data.sorting.valid_next_tokens``), the beam of the
  source ``37179052``, and greedy vs beam search (b = 4, α = 0 and 0.6) on 150 strings.

    PYTHONPATH=src python bench/sorter_seeds.py            # all four kernels, writes the JSON
    PYTHONPATH=src python bench/sorter_seeds.py --kernels avx512 --seeds 0-2 --dry-run

Like the chapters, each measurement runs on one thread (``torch.set_num_threads(1)``): under
``OMP_NUM_THREADS=2`` the kernel differs but the thread count does not.

Writes ``src/tformer/data/bench/sorter.json`` (read by ``tformer.seed_rates``).
"""

from __future__ import annotations

import copy
import math

import kernels
import torch

from tformer.bleu import corpus_bleu
from tformer.data.sorting import (
    BOS,
    EOS,
    decode_digits,
    encode_digits,
    sorting_batch,
    valid_next_tokens,
)
from tformer.encoder_decoder import train_sorter
from tformer.generation import beam_search, greedy_decode, length_penalty


def alignment(model, batch) -> float:
    """Mean cross-attention weight on the source digits being written (best head, last layer)."""
    with torch.no_grad():
        model(*batch.inputs)
    match = batch.target_out[:, :-1, None] == batch.source[:, None, :]
    weights = model.cross_weights()[-1][:, :, :-1]
    return (weights * match[:, None]).sum(-1).mean((0, 2)).max().item()


def best_head(model, batch) -> int:
    with torch.no_grad():
        model(*batch.inputs)
    match = batch.target_out[:, :-1, None] == batch.source[:, None, :]
    weights = model.cross_weights()[-1][:, :, :-1]
    return int((weights * match[:, None]).sum(-1).mean((0, 2)).argmax())


def accuracy_of(model, batch) -> float:
    with torch.no_grad():
        return (model(*batch.inputs).argmax(-1) == batch.target_out).float().mean().item()


def decode_all(model, sources, **settings) -> tuple[float, float, list[str]]:
    references = ["".join(sorted(decode_digits(s[0]))) for s in sources]
    outputs = [decode_digits(beam_search(model.conditioned_on(s), torch.tensor([[BOS]]), 13,
                                         eos_id=EOS, **settings)[0][0]) for s in sources]
    exact = sum(o == r for o, r in zip(outputs, references)) / len(outputs)
    bleu = corpus_bleu([list(o) for o in outputs], [[list(r)] for r in references])
    return exact, bleu, outputs


def model_score(model, source, digits: str, alpha: float = 0.6) -> float:
    """``log P(Y) / lp(Y)`` of the output ``digits`` + EOS under ``model``."""
    new = (encode_digits(digits).tolist() if digits else []) + [EOS]
    tokens = torch.tensor([[BOS, *new]])
    with torch.no_grad():
        logp = model.conditioned_on(source)(tokens[:, :-1]).log_softmax(-1)
    return logp[0].gather(1, tokens[0, 1:, None]).sum().item() / length_penalty(len(new), alpha)


def chapter9(model, log, untrained, frozen) -> tuple[dict, dict]:
    test = sorting_batch(500, 8, generator=torch.Generator().manual_seed(5))
    accuracy = accuracy_of(model, test)
    trained, initial = alignment(model, test), alignment(untrained, test)
    # the heat-map of the chapter: source 3071582, the best head of the last layer
    example = encode_digits("3071582")[None]
    target_in = torch.cat([torch.zeros(1, 1, dtype=torch.long), example.sort(1).values], 1)
    with torch.no_grad():
        model(example, target_in)
    weights = model.cross_weights()[-1][0, best_head(model, test)][:-1]  # digit rows (7, 7)
    written = example.sort(1).values[0]
    rows_aligned = sum(bool(example[0, int(w.argmax())] == d) for w, d in zip(weights, written))
    row_5 = int((written == encode_digits("5")[0]).nonzero()[0])
    five_aligned = bool(example[0, int(weights[row_5].argmax())] == encode_digits("5")[0])
    blind = copy.deepcopy(model)
    with torch.no_grad():
        for layer in blind.decoder:
            layer.cross_attn.W_V.weight.zero_()
            layer.cross_attn.W_V.bias.zero_()
    blind_accuracy = accuracy_of(blind, test)
    unchanged = all(
        torch.equal(a, b)
        for part in ("encoder", "encoder_norm")
        for a, b in zip(getattr(frozen, part).state_dict().values(),
                        getattr(untrained, part).state_dict().values())
    )
    embedding_change = ((frozen.embedding.weight - untrained.embedding.weight).norm()
                        / untrained.embedding.weight.norm()).item()
    with torch.no_grad():
        nearest = (frozen.encode(test.source) @ frozen.embedding.weight.T).argmax(-1)
    own_token = (nearest == test.source).float().mean().item()
    frozen_accuracy = accuracy_of(frozen, test)
    claims = {
        "learns": log.final_loss < 0.5 < log.losses[0] and accuracy > 0.85,
        "aligns": trained > 2 * initial,
        "example_most_rows_aligned": rows_aligned >= 4,
        "example_five_aligned": five_aligned,
        "blind_drops_30_points": blind_accuracy < accuracy - 0.3,
        "frozen_encoder_unchanged": unchanged,
        "frozen_embedding_moves_10pc": embedding_change > 0.1,
        "frozen_rows_own_token_95pc": own_token > 0.95,
        "frozen_higher": frozen_accuracy > accuracy,
    }
    values = {
        "accuracy": accuracy, "first_loss": log.losses[0], "final_loss": log.final_loss,
        "align_trained": trained, "align_untrained": initial,
        "example_rows_aligned": rows_aligned, "blind_accuracy": blind_accuracy,
        "frozen_accuracy": frozen_accuracy, "frozen_gap": abs(frozen_accuracy - accuracy),
        "frozen_embedding_change": embedding_change, "frozen_own_token": own_token,
    }
    return claims, values


def exposure(model) -> tuple[dict, dict]:
    ten = sorting_batch(500, 10, generator=torch.Generator().manual_seed(7))
    with torch.no_grad():
        forced = model(*ten.inputs).argmax(-1)
    free = greedy_decode(model, ten.source, 11, bos_id=BOS, eos_id=EOS)
    forced_wrong = forced != ten.target_out
    forced_err = forced_wrong.float().mean(0)
    free_err = (free != ten.target_out).float().mean(0)
    wrong = free != ten.target_out
    earlier = (wrong.cumsum(1) - wrong.long()) > 0  # an earlier position is wrong
    agree_on_track = (free[~earlier] == forced[~earlier]).float().mean().item()
    # shift-tolerant: each output against the right continuation of its own prefix
    expected, live = valid_next_tokens(ten.source, free)
    local_wrong = (free != expected) & live
    local_err = local_wrong.sum(0) / live.sum(0).clamp(min=1)
    off_track = earlier & live  # decisions after the prefix already went wrong
    n_digits = (free != EOS).sum(1)
    wrong_rows = wrong.any(1)
    too_short = (wrong_rows & (n_digits < 10)).sum().item()
    # where the teacher-forced errors are: a repeated digit (the target equals the previous one)
    repeat = torch.cat([torch.zeros(500, 1, dtype=torch.bool),
                        ten.target_out[:, 1:] == ten.target_in[:, 1:]], 1)
    repeat_err = forced_wrong[repeat].float().mean().item()
    other_err = forced_wrong[~repeat].float().mean().item()
    free_mean, forced_mean = free_err[:-1].mean().item(), forced_err[:-1].mean().item()
    local_mean = local_err[:-1].mean().item()
    off_local = local_wrong[off_track].float().mean().item()
    off_forced = forced_wrong[off_track].float().mean().item()
    claims = {
        "free_mean_over_1p5x_forced": free_mean > 1.5 * forced_mean,
        "free_over_forced_tenth": bool(free_err[-2] > forced_err[-2]),
        "first_position_agrees": bool(free_err[0] == forced_err[0]),
        "free_tenth_over_2x_second": bool(free_err[-2] > 2 * free_err[1]),
        "free_equals_forced_on_track": agree_on_track > 0.999,
        "greedy_wrong_mostly_short": too_short > 0.8 * wrong_rows.sum().item(),
        "shift_tolerant_under_half_free": local_mean < 0.5 * free_mean,
        "shift_tolerant_under_2x_forced": local_mean < 2 * forced_mean,
        "off_track_worse_than_forced": off_local > off_forced,
        "repeats_5x_harder": repeat_err > 5 * other_err,
    }
    values = {
        "forced_mean": forced_mean, "free_mean": free_mean, "shift_tolerant_mean": local_mean,
        "forced_tenth": forced_err[-2].item(), "free_tenth": free_err[-2].item(),
        "greedy_wrong": wrong_rows.sum().item(), "greedy_too_short": too_short,
        "off_track_free": off_local, "off_track_forced": off_forced,
        "forced_repeat_error": repeat_err, "forced_other_error": other_err,
    }
    return claims, values


def beams(model) -> tuple[dict, dict]:
    source = torch.tensor([[5, 9, 3, 9, 11, 2, 7, 4]])  # the digits 37179052
    hypotheses, _ = beam_search(model.conditioned_on(source), torch.tensor([[BOS]]), 12,
                                beam_width=4, eos_id=EOS, alpha=0.6)
    example_sorted = decode_digits(hypotheses[0]) == "".join(sorted(decode_digits(source[0])))
    rng = torch.Generator().manual_seed(8)
    sources = [sorting_batch(1, (3, 10), generator=rng).source for _ in range(150)]
    greedy = decode_all(model, sources, beam_width=1, alpha=0.0)
    beam0 = decode_all(model, sources, beam_width=4, alpha=0.0)
    beam6 = decode_all(model, sources, beam_width=4, alpha=0.6)
    references = ["".join(sorted(decode_digits(s[0]))) for s in sources]
    errors = [k for k, r in enumerate(references) if beam6[2][k] != r]
    short = sum(len(beam6[2][k]) < len(references[k]) for k in errors)
    scores = [(model_score(model, s, b), model_score(model, s, g))
              for s, b, g in zip(sources, beam6[2], greedy[2])]
    lower = sum(b < g - 1e-9 for b, g in scores)
    preferred = all(model_score(model, sources[k], beam6[2][k])
                    >= model_score(model, sources[k], references[k]) - 1e-9 for k in errors)
    claims = {
        "beam_example_sorted": example_sorted,
        "beam_exact_ge_greedy": beam6[0] >= greedy[0],
        "beam_bleu_ge_greedy": beam6[1] >= greedy[1],
        "penalty_exact_ge_no_penalty": beam6[0] >= beam0[0],
        "beam_wrong_mostly_short": short > 0.8 * len(errors),
        "beam_never_scores_below_greedy": lower == 0,
        "beam_wrong_preferred_to_right": preferred,
    }
    values = {
        "exact_greedy": greedy[0], "exact_beam0": beam0[0], "exact_beam6": beam6[0],
        "bleu_greedy": greedy[1], "bleu_beam0": beam0[1], "bleu_beam6": beam6[1],
        "beam_wrong": len(errors), "beam_too_short": short,
    }
    return claims, values


def measure(seed: int) -> dict:
    # the chapters run single-threaded (torch.set_num_threads(1) in their import cell); so does
    # the bench, and its "avx512" and "avx512 1 thread" rows measure the same computation
    torch.set_num_threads(1)
    model, log = train_sorter(seed)
    untrained, _ = train_sorter(seed, n_steps=0)
    frozen, _ = train_sorter(seed, cut_cross_gradient=True)
    claims, values = chapter9(model, log, untrained, frozen)
    claims["first_loss_above_uniform"] = log.losses[0] > math.log(12)
    # at initialisation the tied, √d-scaled embedding makes the decoder predict its own input
    batch = sorting_batch(500, 8, generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        copies = (untrained(*batch.inputs).argmax(-1) == batch.target_in).float().mean().item()
    claims["init_predicts_own_input"] = copies > 0.5
    values["init_copies"] = copies
    for part in (exposure(model), beams(model)):
        claims |= part[0]
        values |= part[1]
    return {"claims": claims, "values": values}


if __name__ == "__main__":
    kernels.main("sorter", measure, depends=[
        "src/tformer/encoder_decoder.py", "src/tformer/data/sorting.py",
        "src/tformer/generation.py", "src/tformer/training.py", "src/tformer/layers.py",
        "src/tformer/multihead.py", "src/tformer/bleu.py",
    ])
