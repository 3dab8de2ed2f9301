"""Chapter 7's difference task (tformer.two_reads): data, and the trained behaviour the text uses."""

from __future__ import annotations

import pytest
import torch

from tformer import seed_rates, two_reads
from tformer.interp import ablate


def test_difference_batch_targets_are_the_shifted_differences():
    x, targets = two_reads.difference_batch(5, generator=torch.Generator().manual_seed(0))
    assert x.shape == targets.shape == (5, two_reads.N_POSITIONS)
    assert (targets[:, :2] == -100).all()
    for b in range(5):
        for t in range(2, x.shape[1]):
            assert targets[b, t] == x[b, t - 1] - x[b, t - 2] + two_reads.N_DIGITS - 1


def test_equal_width_models_have_equal_parameter_counts():
    counts = {
        sum(p.numel() for p in two_reads.make_model(h).parameters()) for h in (1, 2, 4, 8)
    }
    assert len(counts) == 1


def test_difference_batch_rejects_too_short_sequences():
    with pytest.raises(ValueError, match="n_positions"):
        two_reads.difference_batch(2, n_positions=2)


def test_the_committed_bench_has_every_kernel_and_the_claims_the_chapter_glues():
    result = seed_rates.load("ch07_heads")
    assert len(result["seeds"]) == 10 and len(result["kernels"]) == 4
    for claim in ("one_head_fails", "two_heads_solve", "four_heads_solve", "eight_heads_solve",
                  "needs_both_heads", "heads_split_offsets", "ov_opposite_tilts"):
        assert 0 <= seed_rates.rate("ch07_heads", claim).holds <= 10


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_one_head_fails_on_every_seed(seed):
    # Robust (the bench: every seed under every kernel); the chapter asserts it too.
    assert seed_rates.rate("ch07_heads", "one_head_fails").everywhere
    one = two_reads.make_model(1, seed=seed)
    two_reads.train_model(one, seed=seed)
    assert two_reads.accuracy(one) < 0.5


@pytest.mark.slow
def test_some_of_the_first_seeds_solve_it_with_two_heads_and_then_need_both():
    # The chapter shows the first seed (of at most 6) whose 2-head model solves the task; the
    # bench's worst kernel solves it in at least half the seeds, so 6 tries failing all would
    # be a regression, not bad luck worth a retry.
    solved = []
    for seed in range(6):
        model = two_reads.make_model(2, seed=seed)
        two_reads.train_model(model, seed=seed)
        if two_reads.accuracy(model) >= 0.99:
            solved.append(model)
            break
    assert solved, "no seed of 0-5 trained a 2-head model that solves the difference task"
    model = solved[0]
    weights = two_reads.offset_weights(model)  # (h, 2)
    assert weights.shape == (2, 2) and (weights >= 0).all() and (weights.sum(1) <= 1 + 1e-6).all()
    for head in (0, 1):  # invariant under head order: both heads are needed
        with ablate(model, (0, head)):
            assert two_reads.accuracy(model) < 0.99
