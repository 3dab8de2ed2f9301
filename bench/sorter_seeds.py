"""Chapters 9 and 10: the digit sorter's claims over ten seeds (tformer.encoder_decoder).

For each seed: train the sorter (400 steps) and, with the cut, a frozen-encoder copy; then
measure what the chapters state — next-token accuracy, cross-attention alignment (trained vs
untrained, last layer's best head), the frozen encoder's weights and accuracy, exposure bias
(free-running vs teacher-forced error by position) and greedy vs beam search (b = 4, α = 0 and
0.6: exact matches and BLEU). Prints one row per seed and how many seeds show each claim.

    PYTHONPATH=src .venv/bin/python bench/sorter_seeds.py [n_seeds] [n_strings]
"""

from __future__ import annotations

import sys
import time

import torch

from tformer.bleu import corpus_bleu
from tformer.data.sorting import BOS, EOS, decode_digits, encode_digits, sorting_batch
from tformer.encoder_decoder import train_sorter
from tformer.generation import beam_search, greedy_decode, length_penalty


def alignment(model, batch) -> float:
    with torch.no_grad():
        model(*batch.inputs)
    match = batch.target_out[:, :-1, None] == batch.source[:, None, :]
    weights = model.cross_weights()[-1][:, :, :-1]
    return (weights * match[:, None]).sum(-1).mean((0, 2)).max().item()


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


def main(n_seeds: int = 10, n_strings: int = 150) -> None:
    torch.set_num_threads(1)
    claims = {name: 0 for name in ("accuracy > 85 %", "alignment > 2x untrained",
                                   "frozen encoder unchanged", "free error > 1.5x forced",
                                   "free > forced at digit 10", "beam(0.6) exact >= greedy",
                                   "beam(0.6) BLEU >= greedy", "beam(0.6) exact >= beam(0)",
                                   "most beam errors too short", "beam outscores greedy more often")}
    print("seed  train_s  acc   align(untr)  frozen_acc  forced%  free%  "
          "exact g/b0/b6        BLEU g/b0/b6")
    for seed in range(n_seeds):
        start = time.process_time()
        model, log = train_sorter(seed)
        train_seconds = time.process_time() - start
        untrained, _ = train_sorter(seed, n_steps=0)
        frozen, _ = train_sorter(seed, cut_cross_gradient=True)
        test = sorting_batch(500, 8, generator=torch.Generator().manual_seed(5))
        with torch.no_grad():
            accuracy = (model(*test.inputs).argmax(-1) == test.target_out).float().mean().item()
            frozen_acc = (frozen(*test.inputs).argmax(-1) == test.target_out).float().mean().item()
        unchanged = all(torch.equal(a, b) for a, b in zip(
            frozen.encoder.state_dict().values(), untrained.encoder.state_dict().values()))
        a_trained, a_untrained = alignment(model, test), alignment(untrained, test)
        ten = sorting_batch(500, 10, generator=torch.Generator().manual_seed(7))
        with torch.no_grad():
            forced = model(*ten.inputs).argmax(-1)
        free = greedy_decode(model, ten.source, 11, bos_id=BOS, eos_id=EOS)
        forced_err = (forced != ten.target_out).float().mean(0)
        free_err = (free != ten.target_out).float().mean(0)
        rng = torch.Generator().manual_seed(8)
        sources = [sorting_batch(1, (3, 10), generator=rng).source for _ in range(n_strings)]
        greedy = decode_all(model, sources, beam_width=1)
        beam0 = decode_all(model, sources, beam_width=4, alpha=0.0)
        beam6 = decode_all(model, sources, beam_width=4, alpha=0.6)
        wrong = free != ten.target_out
        earlier = (wrong.cumsum(1) - wrong.long()) > 0
        after_share = (wrong & earlier).sum().item() / wrong.sum().item()
        references = ["".join(sorted(decode_digits(s[0]))) for s in sources]
        errors = [k for k, r in enumerate(references) if beam6[2][k] != r]
        short = sum(len(beam6[2][k]) < len(references[k]) for k in errors)
        scores = [(model_score(model, s, b), model_score(model, s, g))
                  for s, b, g in zip(sources, beam6[2], greedy[2])]
        higher = sum(b > g + 1e-9 for b, g in scores)
        lower = sum(b < g - 1e-9 for b, g in scores)
        shown = {
            "accuracy > 85 %": accuracy > 0.85,
            "alignment > 2x untrained": a_trained > 2 * a_untrained,
            "frozen encoder unchanged": unchanged,
            "free error > 1.5x forced": free_err[:-1].mean() > 1.5 * forced_err[:-1].mean(),
            "free > forced at digit 10": bool(free_err[-2] > forced_err[-2]),
            "beam(0.6) exact >= greedy": beam6[0] >= greedy[0],
            "beam(0.6) BLEU >= greedy": beam6[1] >= greedy[1],
            "beam(0.6) exact >= beam(0)": beam6[0] >= beam0[0],
            "most beam errors too short": short > 0.8 * len(errors),
            "beam outscores greedy more often": higher > lower,
        }
        for name, ok in shown.items():
            claims[name] += bool(ok)
        print(f"{seed:4d}  {train_seconds:6.1f}  {accuracy:.3f}  {a_trained:.2f} ({a_untrained:.2f})"
              f"   {frozen_acc:.3f}      {100 * forced_err[:-1].mean():5.1f}  "
              f"{100 * free_err[:-1].mean():5.1f}  "
              f"{greedy[0]:.2f}/{beam0[0]:.2f}/{beam6[0]:.2f}   "
              f"{100 * greedy[1]:.1f}/{100 * beam0[1]:.1f}/{100 * beam6[1]:.1f}   "
              f"free errors after an error {100 * after_share:.0f} %; beam wrong {len(errors)}"
              f" (too short {short}); beam vs greedy score higher {higher} lower {lower}",
              flush=True)
    print()
    for name, count in claims.items():
        print(f"{name:28s} {count}/{n_seeds} seeds")


if __name__ == "__main__":
    main(*(int(arg) for arg in sys.argv[1:3]))
