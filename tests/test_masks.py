"""tformer.masks: shapes, semantics, conversions and error messages."""

from __future__ import annotations

import pytest
import torch

from tformer.masks import (
    causal_mask,
    combined_mask,
    fully_masked_rows,
    padding_mask,
    sliding_window_mask,
    to_additive,
    to_boolean,
)


def test_causal_mask_is_lower_triangular_and_cache_aware():
    expected = torch.tensor([[i >= j for j in range(4)] for i in range(4)])
    assert torch.equal(causal_mask(4), expected)
    # two new queries at positions 3 and 4 of a 5-long sequence
    expected_offset = torch.tensor([[j <= 3 for j in range(5)], [j <= 4 for j in range(5)]])
    assert torch.equal(causal_mask(2, 5), expected_offset)
    with pytest.raises(ValueError, match="1 ≤ T_q ≤ T_k"):
        causal_mask(5, 2)


def test_padding_and_combined_shapes_and_values():
    lengths = torch.tensor([4, 2])
    padding = padding_mask(lengths, 4)
    assert padding.shape == (2, 1, 1, 4)
    assert padding[1, 0, 0].tolist() == [True, True, False, False]
    combined = combined_mask(lengths, 4)
    assert combined.shape == (2, 1, 4, 4)
    for b, length in enumerate(lengths.tolist()):
        for i in range(4):
            for j in range(4):
                assert combined[b, 0, i, j] == (j <= i and j < length)


@pytest.mark.parametrize(
    ("lengths", "error", "message"),
    [
        ([[1, 2]], ValueError, r"lengths must have shape \(B,\)"),
        ([1.5, 2.0], TypeError, "lengths must be integers"),
        ([5, 2], ValueError, "lengths must lie in 0..4"),
    ],
)
def test_padding_mask_errors(lengths, error, message):
    with pytest.raises(error, match=message):
        padding_mask(torch.tensor(lengths), 4)


def test_sliding_window():
    mask = sliding_window_mask(6, 3)
    for i in range(6):
        for j in range(6):
            assert mask[i, j] == (i - 3 < j <= i)
    with pytest.raises(ValueError, match="window must be ≥ 1"):
        sliding_window_mask(4, 0)


def test_additive_boolean_round_trip_and_errors():
    mask = combined_mask(torch.tensor([3, 1]), 3)
    additive = to_additive(mask)
    assert set(additive.unique().tolist()) == {0.0, float("-inf")}
    assert torch.equal(to_boolean(additive), mask)
    most_negative = torch.finfo(torch.float32).min
    finfo_style = torch.zeros(3).masked_fill(torch.tensor([False, True, False]), most_negative)
    assert to_boolean(finfo_style).tolist() == [True, False, True]
    with pytest.raises(TypeError, match="expects a boolean mask"):
        to_additive(additive)
    with pytest.raises(TypeError, match="expects a floating-point mask"):
        to_boolean(mask)


def test_fully_masked_rows():
    lengths = torch.tensor([0, 2])
    rows = fully_masked_rows(combined_mask(lengths, 3))
    assert rows.shape == (2, 1, 3)
    assert rows[0].all() and not rows[1].any()
