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


@pytest.mark.parametrize("n_positions", [1, 5, 16, 17, 50])
@pytest.mark.parametrize("window", [1, 3, 4, 16, 64])
def test_banded_equals_masked_sdpa(n_positions, window):
    from tformer.efficient import banded_attention

    generator = torch.Generator().manual_seed(100 * n_positions + window)
    shape = (2, 3, n_positions)
    queries = torch.randn(*shape, 8, generator=generator, dtype=torch.float64)
    keys = torch.randn(*shape, 8, generator=generator, dtype=torch.float64) * 2
    values = torch.randn(*shape, 5, generator=generator, dtype=torch.float64)
    mask = sliding_window_mask(n_positions, window)
    expected = F.scaled_dot_product_attention(queries, keys, values, attn_mask=mask)
    torch.testing.assert_close(banded_attention(queries, keys, values, window), expected)


def test_banded_key_padding_and_fully_masked_rows():
    from tformer.efficient import banded_attention

    generator = torch.Generator().manual_seed(7)
    queries, keys = (torch.randn(2, 10, 4, generator=generator, dtype=torch.float64)
                     for _ in range(2))
    values = torch.randn(2, 10, 3, generator=generator, dtype=torch.float64)
    real = torch.ones(2, 10, dtype=torch.bool)
    real[1, 3] = False  # one padded key in the middle of sequence 1
    mask = sliding_window_mask(10, 3) & real[:, None, :]
    expected = F.scaled_dot_product_attention(queries, keys, values, attn_mask=mask)
    got = banded_attention(queries, keys, values, 3, key_padding_mask=real)
    torch.testing.assert_close(got, expected)
    # window 1 and a padded key: that query sees nothing
    with pytest.raises(ValueError, match=r"query at index \(1, 3\) has every key"):
        banded_attention(queries, keys, values, 1, key_padding_mask=real)
    with pytest.raises(ValueError, match="window must be an integer"):
        banded_attention(queries, keys, values, 0)
    with pytest.raises(ValueError, match="T_q = T_k"):
        banded_attention(queries[:, :4], keys, values, 3)
    with pytest.raises(ValueError, match="key_padding_mask must be boolean"):
        banded_attention(queries, keys, values, 3, key_padding_mask=real.float())


@pytest.mark.parametrize("query_tile", [1, 3, 16, 1000])
@pytest.mark.parametrize("causal", [False, True])
def test_tiled_query_tiles_and_logsumexp(query_tile, causal):
    generator = torch.Generator().manual_seed(query_tile)
    queries = torch.randn(2, 37, 8, generator=generator, dtype=torch.float64)
    keys = torch.randn(2, 45, 8, generator=generator, dtype=torch.float64) * 2
    values = torch.randn(2, 45, 5, generator=generator, dtype=torch.float64)
    scores = queries @ keys.transpose(-2, -1) / 8**0.5
    if causal:  # lower-right aligned: query i sees keys j <= i + 8
        future = torch.ones(37, 45, dtype=torch.bool).triu(1 + 45 - 37)
        scores = scores.masked_fill(future, float("-inf"))
    outputs, logsumexp = tiled_attention(queries, keys, values, tile_size=7,
                                         query_tile_size=query_tile, causal=causal,
                                         return_logsumexp=True)
    torch.testing.assert_close(outputs, torch.softmax(scores, -1) @ values)
    torch.testing.assert_close(logsumexp, torch.logsumexp(scores, -1))
    # the backward pass's recomputation: P = exp(S − L) from the saved L alone
    torch.testing.assert_close(torch.exp(scores - logsumexp[..., None]),
                               torch.softmax(scores, -1))
    with pytest.raises(ValueError, match="query_tile_size must be ≥ 1"):
        tiled_attention(queries, keys, values, query_tile_size=0)


def test_io_model_counts():
    from tformer.efficient import naive_attention_io, query_tile_for_sram, tiled_attention_io

    assert naive_attention_io(1024, 64) == 4 * 1024 * 64 + 4 * 1024**2
    # one query tile holding every query: Q, K, V read once and O written once
    assert tiled_attention_io(1024, 64, 1024) == 4 * 1024 * 64
    assert tiled_attention_io(1000, 64, 256) == 2 * 1000 * 64 * (1 + 4)
    b = query_tile_for_sram(48 * 1024, 64)
    assert 4 * b * 64 + b * b <= 48 * 1024 < 4 * (b + 1) * 64 + (b + 1) ** 2
    with pytest.raises(ValueError, match="cannot hold a tile"):
        query_tile_for_sram(10, 64)


def test_windowed_lm_and_copy_task():
    from tformer.efficient import WindowedAttentionLM, copy_at_distance_batch

    tokens, targets = copy_at_distance_batch(16, 10, 3, 4, torch.Generator().manual_seed(0))
    assert (targets[:, :3] == -100).all() and torch.equal(targets[:, 3:], tokens[:, :-3])
    torch.manual_seed(0)
    full, windowed = WindowedAttentionLM(16, 10, 8), WindowedAttentionLM(16, 10, 8, window=4)
    windowed.load_state_dict(full.state_dict())
    assert full(tokens).shape == (4, 10, 16)
    # a window as long as the sequence is full causal attention
    wide = WindowedAttentionLM(16, 10, 8, window=10)
    wide.load_state_dict(full.state_dict())
    torch.testing.assert_close(wide(tokens), full(tokens), atol=1e-6, rtol=1e-5)
    # the windowed model's output at position 9 ignores the token at position 0
    changed = tokens.clone()
    changed[:, 0] = (changed[:, 0] + 1) % 16
    assert torch.equal(windowed(tokens)[:, 9], windowed(changed)[:, 9])
    with pytest.raises(ValueError, match="distance"):
        copy_at_distance_batch(16, 10, 10, 4, torch.Generator())
