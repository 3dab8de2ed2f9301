"""Chapter 7's difference task (tformer.two_reads): data, and the trained behaviour the text uses."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest
import torch

from tformer import seed_rates, two_reads
from tformer.interp import ablate

BENCH = Path(__file__).resolve().parent.parent / "bench"


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
                  "needs_both_heads", "heads_split_offsets", "ov_opposite_tilts",
                  "solved_by_position", "solved_by_content", "opposite_signs",
                  "sum_tracks_difference", "shared_axis"):
        assert 0 <= seed_rates.rate("ch07_heads", claim).holds <= 10


def test_the_two_kinds_of_solution_split_the_solved_runs():
    solved = seed_rates.rate("ch07_heads", "two_heads_solve").per_kernel
    kinds = [seed_rates.rate("ch07_heads", c).per_kernel
             for c in ("solved_by_position", "solved_by_content")]
    assert {k: kinds[0][k] + kinds[1][k] for k in solved} == solved


def test_weights_by_pair_matches_a_loop_over_the_test_batch():
    model = two_reads.make_model(2, seed=3)
    by_pair = two_reads.weights_by_pair(model)  # (h, 2, 4, 4)
    x, _ = two_reads.test_batch()
    attn = model.blocks[0].attn
    attn.record = True
    with torch.no_grad():
        model(x)
    attn.record = False
    w = attn.last_weights
    for a, b in [(0, 0), (1, 3), (3, 2)]:
        sums, n = torch.zeros(2, 2), 0
        for s in range(x.shape[0]):
            for t in range(2, x.shape[1]):
                if x[s, t - 1] == a and x[s, t - 2] == b:
                    sums += torch.stack([w[s, :, t, t - 1], w[s, :, t, t - 2]], 1)
                    n += 1
        torch.testing.assert_close(by_pair[:, :, a, b], sums / n)


def test_position_only_accuracy_changes_nothing_when_attention_ignores_content():
    # Zero W_Q and W_K: every score is 0, the weights are uniform over the causal prefix,
    # the same for every sequence, so fixing them at their mean changes nothing.
    model = two_reads.make_model(2, seed=0)
    attn = model.blocks[0].attn
    with torch.no_grad():
        for layer in (attn.W_Q, attn.W_K):
            layer.weight.zero_()
            layer.bias.zero_()
        model.unembed.weight.normal_()  # a readout whose accuracy is not 0
    assert two_reads.position_only_accuracy(model) == two_reads.accuracy(model)


def test_position_only_accuracy_leaves_the_model_as_it_was():
    model = two_reads.make_model(2, seed=1)
    before = two_reads.accuracy(model)
    two_reads.position_only_accuracy(model)
    assert model.blocks[0].attn.head_hook is None
    assert two_reads.accuracy(model) == before


def _swap_heads(model):
    swapped = copy.deepcopy(model)
    attn = swapped.blocks[0].attn
    d_k = attn.d_k
    order = torch.cat([torch.arange(d_k, 2 * d_k), torch.arange(d_k)])
    with torch.no_grad():
        for layer in (attn.W_Q, attn.W_K, attn.W_V):
            layer.weight.copy_(layer.weight[order])
            layer.bias.copy_(layer.bias[order])
        attn.W_O.weight.copy_(attn.W_O.weight[:, order])
    return swapped


def test_the_bench_facts_do_not_depend_on_which_head_is_called_head_1():
    sys.path.insert(0, str(BENCH))
    try:
        import ch07_heads_seeds
    finally:
        sys.path.remove(str(BENCH))
    model = two_reads.make_model(2, seed=2)
    swapped = _swap_heads(model)
    torch.testing.assert_close(  # the swap is the same function, heads relabelled
        two_reads.weights_by_pair(swapped), two_reads.weights_by_pair(model).flip(0))
    facts = ch07_heads_seeds.two_head_facts(model)
    for name, value in ch07_heads_seeds.two_head_facts(swapped).items():
        assert value == pytest.approx(facts[name], rel=1e-4, abs=1e-5), name


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1])
def test_one_head_fails_on_every_seed(seed):
    # Robust (the bench: every seed under every kernel, 10 seeds each); the chapter asserts it
    # too, on its own seeds, in the book build and in the Colab run. One more seed here keeps the
    # claim guarded in the unit suite; the bench, not this test, measures the rate.
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
