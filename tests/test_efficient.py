"""tformer.efficient: tiled attention equals naive attention; sliding windows."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from tformer.efficient import sliding_window_attention, tiled_attention
from tformer.masks import sliding_window_mask


@pytest.mark.parametrize("n_keys", [1, 63, 64, 100, 257])
@pytest.mark.parametrize("tile_size", [1, 16, 64, 1000])
@pytest.mark.parametrize("causal", [False, True])
def test_tiled_equals_naive(n_keys, tile_size, causal):
    generator = torch.Generator().manual_seed(n_keys)
    queries = torch.randn(2, 3, n_keys, 16, generator=generator)
    keys = torch.randn(2, 3, n_keys, 16, generator=generator) * 3
    values = torch.randn(2, 3, n_keys, 8, generator=generator)
    expected = F.scaled_dot_product_attention(queries, keys, values, is_causal=causal)
    got = tiled_attention(queries, keys, values, tile_size=tile_size, causal=causal)
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)


def test_tiled_cross_lengths_and_errors():
    queries, keys, values = torch.randn(5, 4), torch.randn(11, 4), torch.randn(11, 3)
    torch.testing.assert_close(
        tiled_attention(queries, keys, values, tile_size=4),
        F.scaled_dot_product_attention(queries, keys, values), atol=1e-5, rtol=1e-5,
    )
    with pytest.raises(ValueError, match="tile_size must be ≥ 1"):
        tiled_attention(queries, keys, values, tile_size=0)


def test_sliding_window_matches_masked_reference():
    queries, keys, values = torch.randn(2, 9, 4), torch.randn(2, 9, 4), torch.randn(2, 9, 5)
    outputs, weights = sliding_window_attention(queries, keys, values, window=3)
    mask = sliding_window_mask(9, 3)
    torch.testing.assert_close(outputs, F.scaled_dot_product_attention(queries, keys, values, attn_mask=mask))
    assert (weights[..., ~mask] == 0).all()
    with pytest.raises(ValueError, match="T_q = T_k"):
        sliding_window_attention(queries[:, :4], keys, values, window=3)
