"""tformer.masks: shapes, semantics, conversions and error messages."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from tformer.masks import (
    causal_mask,
    combined_mask,
    fully_masked_rows,
    left_padded_positions,
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
    # the same mask, named by its alignment
    assert torch.equal(causal_mask(2, 5, align="lower_right"), expected_offset)


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


def _qkv(n_queries, n_keys, seed=0):
    generator = torch.Generator().manual_seed(seed)
    shape_q, shape_k = (2, 3, n_queries, 4), (2, 3, n_keys, 4)
    return (
        torch.randn(*shape_q, generator=generator, dtype=torch.float64),
        torch.randn(*shape_k, generator=generator, dtype=torch.float64),
        torch.randn(*shape_k, generator=generator, dtype=torch.float64),
    )


@pytest.mark.parametrize(("n_queries", "n_keys"), [(2, 5), (1, 6), (4, 4), (3, 7)])
def test_causal_alignments_agree_with_pytorch(n_queries, n_keys):
    """Upper-left is SDPA's ``is_causal=True``; lower-right is ``causal_lower_right``."""
    from torch.nn.attention.bias import causal_lower_right, causal_upper_left

    import tformer

    queries, keys, values = _qkv(n_queries, n_keys)
    for align, bias in (("lower_right", causal_lower_right), ("upper_left", causal_upper_left)):
        mask = causal_mask(n_queries, n_keys, align=align)
        assert torch.equal(mask, bias(n_queries, n_keys)._materialize())
        ours = tformer.scaled_dot_product_attention(queries, keys, values, mask).outputs
        reference = F.scaled_dot_product_attention(
            queries, keys, values, attn_mask=bias(n_queries, n_keys)
        )
        torch.testing.assert_close(ours, reference)
    upper_left = tformer.scaled_dot_product_attention(
        queries, keys, values, causal_mask(n_queries, n_keys, align="upper_left")
    ).outputs
    torch.testing.assert_close(
        upper_left, F.scaled_dot_product_attention(queries, keys, values, is_causal=True)
    )
    if n_queries < n_keys:  # the two alignments really differ, and SDPA's default is upper-left
        lower_right = causal_mask(n_queries, n_keys)
        assert not torch.equal(lower_right, causal_mask(n_queries, n_keys, align="upper_left"))


def test_lower_right_is_the_kv_cache_case():
    """The last T_q rows of full causal attention over T_k positions = lower-right rectangle."""
    import tformer

    queries, keys, values = _qkv(6, 6, seed=1)
    full = tformer.scaled_dot_product_attention(queries, keys, values, causal_mask(6)).outputs
    last = tformer.scaled_dot_product_attention(
        queries[..., -2:, :], keys, values, causal_mask(2, 6)
    ).outputs
    torch.testing.assert_close(last, full[..., -2:, :])
    wrong = tformer.scaled_dot_product_attention(
        queries[..., -2:, :], keys, values, causal_mask(2, 6, align="upper_left")
    ).outputs
    assert not torch.allclose(wrong, full[..., -2:, :])


def test_causal_mask_errors():
    with pytest.raises(ValueError, match="first 3 queries would see no key"):
        causal_mask(5, 2)
    assert causal_mask(5, 2, align="upper_left").any(dim=-1).all()  # every row sees key 0
    with pytest.raises(ValueError, match="align must be"):
        causal_mask(2, 3, align="diagonal")
    with pytest.raises(ValueError, match="T_q ≥ 1"):
        causal_mask(0, 3)


def test_left_padded_positions():
    real = torch.tensor([[True, True, True, True], [False, False, True, True], [False, True, True, True]])
    expected = torch.zeros(3, 4, dtype=torch.long)
    for b in range(3):  # independent reference: count real tokens seen so far
        seen = 0
        for t in range(4):
            if real[b, t]:
                expected[b, t] = seen
                seen += 1
    assert torch.equal(left_padded_positions(real), expected)
    assert left_padded_positions(real)[1].tolist() == [0, 0, 0, 1]
    with pytest.raises(TypeError, match="boolean"):
        left_padded_positions(real.long())
