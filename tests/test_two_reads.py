"""Chapter 7's difference task (tformer.two_reads): data, and the trained behaviour the text uses."""

from __future__ import annotations

import pytest
import torch

from tformer import two_reads


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


@pytest.mark.slow
@pytest.mark.parametrize("seed", [4, 7])
def test_one_head_fails_and_eight_heads_solve_the_task(seed):
    one = two_reads.make_model(1, seed=seed)
    two_reads.train_model(one, seed=seed)
    assert two_reads.accuracy(one) < 0.5
    eight = two_reads.make_model(8, seed=seed)
    two_reads.train_model(eight, seed=seed)
    assert two_reads.accuracy(eight) >= 0.99


@pytest.mark.slow
def test_two_heads_solve_it_with_different_mixtures_for_the_chapter_seed():
    model = two_reads.make_model(2, seed=4)
    two_reads.train_model(model, seed=4)
    assert two_reads.accuracy(model) >= 0.99
    assert abs(float(torch.linalg.det(two_reads.offset_weights(model)))) > 0.5
