"""tformer.multihead against torch.nn.MultiheadAttention (self- and cross-attention) and a KV cache."""

from __future__ import annotations

import pytest
import torch

from tformer.masks import causal_mask, padding_mask
from tformer.multihead import (
    KVCache,
    MultiHeadAttention,
    merge_heads,
    multihead_param_count,
    split_heads,
)


def copy_into_torch(ours: MultiHeadAttention, d_context: int | None = None) -> torch.nn.MultiheadAttention:
    d = ours.d
    kdim = d_context or d
    reference = torch.nn.MultiheadAttention(
        d, ours.n_heads, batch_first=True, kdim=kdim, vdim=kdim
    ).double()
    with torch.no_grad():
        if kdim == d:
            reference.in_proj_weight.copy_(torch.cat([ours.W_Q.weight, ours.W_K.weight, ours.W_V.weight]))
        else:
            reference.q_proj_weight.copy_(ours.W_Q.weight)
            reference.k_proj_weight.copy_(ours.W_K.weight)
            reference.v_proj_weight.copy_(ours.W_V.weight)
        reference.in_proj_bias.copy_(torch.cat([ours.W_Q.bias, ours.W_K.bias, ours.W_V.bias]))
        reference.out_proj.weight.copy_(ours.W_O.weight)
        reference.out_proj.bias.copy_(ours.W_O.bias)
    return reference


@pytest.mark.parametrize("n_heads", [1, 2, 4, 8])
def test_self_attention_matches_torch(n_heads):
    torch.manual_seed(n_heads)
    ours = MultiHeadAttention(16, n_heads).double()
    reference = copy_into_torch(ours)
    x = torch.randn(3, 7, 16, dtype=torch.float64)
    mask = causal_mask(7)
    outputs, weights = ours(x, mask=mask)
    expected, expected_weights = reference(x, x, x, attn_mask=~mask, average_attn_weights=False)
    torch.testing.assert_close(outputs, expected)
    torch.testing.assert_close(weights, expected_weights)


def test_cross_attention_matches_torch_with_padding():
    torch.manual_seed(1)
    ours = MultiHeadAttention(12, 3, d_context=20).double()
    reference = copy_into_torch(ours, d_context=20)
    x, memory = torch.randn(2, 4, 12, dtype=torch.float64), torch.randn(2, 9, 20, dtype=torch.float64)
    lengths = torch.tensor([9, 5])
    outputs, weights = ours(x, memory, padding_mask(lengths, 9))
    assert weights.shape == (2, 3, 4, 9)
    padded = torch.arange(9)[None, :] >= lengths[:, None]  # True = ignore, torch's convention
    expected, _ = reference(x, memory, memory, key_padding_mask=padded)
    torch.testing.assert_close(outputs, expected)


def test_split_merge_round_trip_and_view_error():
    x = torch.randn(2, 5, 12)
    heads = split_heads(x, 3)
    assert heads.shape == (2, 3, 5, 4)
    torch.testing.assert_close(heads[:, 1], x[..., 4:8])
    torch.testing.assert_close(merge_heads(heads), x)
    per_head_outputs = heads.contiguous()  # what a batched matmul returns: (B, h, T, d_k) in memory
    with pytest.raises(RuntimeError, match="view"):
        per_head_outputs.transpose(1, 2).view(2, 5, 12)
    with pytest.raises(ValueError, match="not divisible"):
        split_heads(x, 5)


def test_parameter_count_independent_of_heads():
    for n_heads in (1, 2, 3, 4, 6, 12):
        module = MultiHeadAttention(768, n_heads)
        assert sum(p.numel() for p in module.parameters()) == multihead_param_count(768) == 2_362_368


@pytest.mark.parametrize("rope", [False, True])
def test_kv_cache_matches_full_recomputation(rope):
    torch.manual_seed(2)
    module = MultiHeadAttention(8, 2, causal=True, rope=rope).double()
    x = torch.randn(2, 6, 8, dtype=torch.float64)
    full = module(x).outputs
    cache = KVCache()
    pieces = [module(x[:, :3], cache=cache).outputs]
    for t in range(3, 6):
        pieces.append(module(x[:, t : t + 1], cache=cache).outputs)
    assert len(cache) == 6
    torch.testing.assert_close(torch.cat(pieces, dim=1), full)


def test_record_and_head_hook():
    module = MultiHeadAttention(8, 2).double()
    x = torch.randn(1, 4, 8, dtype=torch.float64)
    module.record = True
    outputs = module(x).outputs
    assert module.last_weights.shape == (1, 2, 4, 4)
    assert module.last_head_outputs.shape == (1, 2, 4, 4)
    # the output is the sum of each head's write through its slice of W_O (plus the bias)
    writes = sum(
        module.last_head_outputs[:, h] @ module.W_O.weight[:, 4 * h : 4 * h + 4].T for h in range(2)
    )
    torch.testing.assert_close(outputs, writes + module.W_O.bias)

    def zero_head_0(heads):
        heads = heads.clone()
        heads[:, 0] = 0
        return heads

    module.head_hook = zero_head_0
    ablated = module(x).outputs
    expected = module.last_head_outputs[:, 1] @ module.W_O.weight[:, 4:].T + module.W_O.bias
    torch.testing.assert_close(ablated, expected)


def test_input_validation():
    module = MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match=r"x must have shape \(B, T, d\)"):
        module(torch.randn(4, 8))
    with pytest.raises(ValueError, match="x must have last dimension 8"):
        module(torch.randn(1, 4, 6))
    with pytest.raises(ValueError, match="not divisible by n_heads"):
        MultiHeadAttention(10, 3)


# --- grouped-query and multi-query attention (chapter 7) ---------------------------------


@pytest.mark.parametrize("n_kv_heads", [1, 2, 4])
def test_grouped_query_attention_matches_sdpa_with_repeated_heads(n_kv_heads):
    from torch.nn import functional as F

    from tformer.multihead import MultiHeadAttention, multihead_param_count

    torch.manual_seed(0)
    d, n_heads, B, T = 32, 8, 2, 7
    layer = MultiHeadAttention(d, n_heads, n_kv_heads=n_kv_heads, causal=True)
    x = torch.randn(B, T, d)
    d_k = d // n_heads
    q = layer.W_Q(x).view(B, T, n_heads, d_k).transpose(1, 2)
    k = layer.W_K(x).view(B, T, n_kv_heads, d_k).transpose(1, 2)
    v = layer.W_V(x).view(B, T, n_kv_heads, d_k).transpose(1, 2)
    group = n_heads // n_kv_heads  # an independent expansion: index arithmetic, not repeat_kv
    index = torch.arange(n_heads) // group
    expected = F.scaled_dot_product_attention(q, k[:, index], v[:, index], is_causal=True)
    expected = layer.W_O(expected.transpose(1, 2).reshape(B, T, d))
    torch.testing.assert_close(layer(x).outputs, expected)
    counted = sum(p.numel() for p in layer.parameters())
    assert counted == multihead_param_count(d, n_heads=n_heads, n_kv_heads=n_kv_heads)
    assert counted == 2 * d * d + 2 * d * n_kv_heads * d_k + 2 * d + 2 * n_kv_heads * d_k


def test_grouped_query_cache_stores_kv_heads_only_and_matches_the_full_pass():
    from tformer.multihead import KVCache, MultiHeadAttention

    torch.manual_seed(1)
    layer = MultiHeadAttention(16, 4, n_kv_heads=2, causal=True)
    x = torch.randn(1, 5, 16)
    cache = KVCache()
    with torch.no_grad():
        steps = [layer(x[:, t : t + 1], cache=cache).outputs for t in range(5)]
        full = layer(x).outputs
    torch.testing.assert_close(torch.cat(steps, 1), full)
    assert cache.keys.shape == (1, 2, 5, 4)


def test_grouped_query_rejects_a_non_dividing_number_of_kv_heads():
    from tformer.multihead import MultiHeadAttention

    with pytest.raises(ValueError, match="multiple of n_kv_heads"):
        MultiHeadAttention(16, 4, n_kv_heads=3)
