"""tformer.attention against torch's scaled_dot_product_attention, autograd and closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from tformer.attention import (
    SelfAttention,
    attention_loop,
    scaled_dot_product_attention,
    self_attention_param_count,
    softmax,
)
from tformer.masks import causal_mask, combined_mask, padding_mask


def random_qkv(batch=2, heads=3, n_q=5, n_k=6, d_k=4, d_v=7, dtype=torch.float64, seed=0):
    generator = torch.Generator().manual_seed(seed)
    make = lambda *shape: torch.randn(*shape, generator=generator, dtype=dtype)  # noqa: E731
    return make(batch, heads, n_q, d_k), make(batch, heads, n_k, d_k), make(batch, heads, n_k, d_v)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", ["none", "padding", "causal", "both"])
def test_matches_torch_sdpa(case, dtype):
    queries, keys, values = random_qkv(n_q=6, n_k=6, dtype=dtype)
    lengths = torch.tensor([6, 3])
    mask = {
        "none": None,
        "padding": padding_mask(lengths, 6),
        "causal": causal_mask(6),
        "both": combined_mask(lengths, 6),
    }[case]
    outputs, weights = scaled_dot_product_attention(queries, keys, values, mask)
    reference = F.scaled_dot_product_attention(queries, keys, values, attn_mask=mask)
    tolerance = 1e-12 if dtype == torch.float64 else 1e-5
    torch.testing.assert_close(outputs, reference, atol=tolerance, rtol=tolerance)
    torch.testing.assert_close(weights.sum(-1), torch.ones_like(weights.sum(-1)))


def test_additive_mask_equals_boolean_mask():
    queries, keys, values = random_qkv(n_q=6, n_k=6)
    boolean = causal_mask(6)
    additive = torch.zeros(6, 6, dtype=torch.float64).masked_fill(~boolean, float("-inf"))
    torch.testing.assert_close(
        scaled_dot_product_attention(queries, keys, values, boolean).outputs,
        scaled_dot_product_attention(queries, keys, values, additive).outputs,
    )


def test_huge_scores_stay_finite_and_match_reference():
    queries, keys, values = random_qkv(dtype=torch.float32)
    queries = queries * 1e4 / queries.abs().max()
    keys = keys / keys.abs().max()
    outputs, weights = scaled_dot_product_attention(queries, keys, values, scale=1.0)
    assert torch.isfinite(outputs).all() and torch.isfinite(weights).all()
    reference = F.scaled_dot_product_attention(queries, keys, values, scale=1.0)
    torch.testing.assert_close(outputs, reference, atol=1e-4, rtol=1e-4)


def test_softmax_closed_form_and_stability():
    scores = torch.tensor([[1.0, 2.0, 3.0], [1e4, 1e4 - 1.0, -1e4]], dtype=torch.float64)
    expected_first = np.exp([1, 2, 3]) / np.exp([1, 2, 3]).sum()
    np.testing.assert_allclose(softmax(scores)[0].numpy(), expected_first, rtol=1e-12)
    second = softmax(scores)[1]
    np.testing.assert_allclose(second[1] / second[0], math.exp(-1.0), rtol=1e-12)
    assert torch.isfinite(second).all()


def test_softmax_of_all_masked_row_raises():
    with pytest.raises(ValueError, match="entirely -inf"):
        softmax(torch.tensor([[float("-inf")] * 3]))


def test_scaling_switch():
    queries, keys, values = random_qkv(d_k=16)
    unscaled = scaled_dot_product_attention(queries, keys, values, scale=False).outputs
    reference = F.scaled_dot_product_attention(queries, keys, values, scale=1.0)
    torch.testing.assert_close(unscaled, reference)
    custom = scaled_dot_product_attention(queries, keys, values, scale=0.5).outputs
    torch.testing.assert_close(custom, F.scaled_dot_product_attention(queries, keys, values, scale=0.5))


@settings(max_examples=40, deadline=None)
@given(
    batch=st.integers(1, 3),
    heads=st.integers(1, 3),
    n_q=st.integers(1, 7),
    n_k=st.integers(1, 7),
    d_k=st.integers(1, 9),
    d_v=st.integers(1, 9),
    seed=st.integers(0, 2**16),
    use_mask=st.booleans(),
)
def test_random_shapes_match_reference(batch, heads, n_q, n_k, d_k, d_v, seed, use_mask):
    queries, keys, values = random_qkv(batch, heads, n_q, n_k, d_k, d_v, seed=seed)
    mask = None
    if use_mask:
        mask = torch.rand(batch, 1, n_q, n_k, generator=torch.Generator().manual_seed(seed)) > 0.3
        mask[..., 0] = True  # keep every row alive
    outputs, _ = scaled_dot_product_attention(queries, keys, values, mask)
    reference = F.scaled_dot_product_attention(queries, keys, values, attn_mask=mask)
    torch.testing.assert_close(outputs, reference, atol=1e-10, rtol=1e-10)
    looped, _ = attention_loop(queries, keys, values, mask)
    torch.testing.assert_close(looped, reference, atol=1e-10, rtol=1e-10)


def test_gradcheck_float64():
    queries, keys, values = (t.requires_grad_() for t in random_qkv(batch=1, heads=2, n_q=3, n_k=4))
    mask = causal_mask(3, 4)
    assert torch.autograd.gradcheck(
        lambda q, k, v: scaled_dot_product_attention(q, k, v, mask).outputs, (queries, keys, values)
    )


def test_fully_masked_row_raises_by_default_and_zero_option():
    queries, keys, values = random_qkv(n_q=3, n_k=3)
    mask = torch.tensor([[True, False, False], [False, False, False], [True, True, True]])
    with pytest.raises(ValueError, match=r"query row at index .* has every key masked"):
        scaled_dot_product_attention(queries, keys, values, mask)
    outputs, weights = scaled_dot_product_attention(queries, keys, values, mask, fully_masked="zero")
    assert not torch.isnan(outputs).any()
    assert torch.all(outputs[..., 1, :] == 0) and torch.all(weights[..., 1, :] == 0)
    alive = scaled_dot_product_attention(queries[..., [0, 2], :], keys, values, mask[[0, 2]]).outputs
    torch.testing.assert_close(outputs[..., [0, 2], :], alive)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (dict(queries=torch.randn(3, 4), keys=torch.randn(3, 5)), ValueError, "same last dimension d_k"),
        (dict(keys=torch.randn(4, 4)), ValueError, "same number of positions T_k"),
        (dict(queries=torch.randn(4)), ValueError, r"queries must have shape \(\.\.\., T_q, d_k\)"),
        (dict(queries=torch.randn(3, 4, dtype=torch.float64)), TypeError, "share one dtype"),
        (dict(queries="not a tensor"), TypeError, "queries must be a torch.Tensor or numpy array"),
        (dict(queries=torch.randn(3, 4, dtype=torch.cfloat)), TypeError, "real-valued"),
        (dict(mask=torch.ones(2, 2, dtype=torch.bool)), ValueError, "does not broadcast"),
        (dict(mask=torch.ones(3, 3, dtype=torch.int64)), TypeError, "boolean or floating point"),
        (dict(fully_masked="ignore"), ValueError, "fully_masked must be"),
        (dict(scale="yes"), TypeError, "scale must be"),
    ],
)
def test_validation_messages(kwargs, error, message):
    arguments = dict(queries=torch.randn(3, 4), keys=torch.randn(3, 4), values=torch.randn(3, 2))
    arguments.update(kwargs)
    with pytest.raises(error, match=message):
        scaled_dot_product_attention(**arguments)


def test_numpy_inputs_are_accepted():
    rng = np.random.default_rng(0)
    queries, keys, values = rng.normal(size=(3, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 3))
    outputs, weights = scaled_dot_product_attention(queries, keys, values)
    scores = queries @ keys.T / np.sqrt(2)
    expected = np.exp(scores) / np.exp(scores).sum(1, keepdims=True)
    np.testing.assert_allclose(weights.numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(outputs.numpy(), expected @ values, rtol=1e-12)


def test_self_attention_layer_parameter_count_and_reference():
    for d, d_k, d_v, bias in [(512, 64, 512, True), (8, 3, 5, False), (6, 6, 6, True)]:
        layer = SelfAttention(d, d_k, d_v, bias=bias)
        assert sum(p.numel() for p in layer.parameters()) == self_attention_param_count(d, d_k, d_v, bias)
    assert self_attention_param_count(512, 64) == 2 * 64 * 512 + 512**2 + 2 * 64 + 512
    layer = SelfAttention(6, 4, 5).double()
    x = torch.randn(2, 7, 6, dtype=torch.float64)
    outputs, _ = layer(x)
    queries = x @ layer.W_Q.weight.T + layer.W_Q.bias
    keys = x @ layer.W_K.weight.T + layer.W_K.bias
    values = x @ layer.W_V.weight.T + layer.W_V.bias
    torch.testing.assert_close(outputs, F.scaled_dot_product_attention(queries, keys, values))
    with pytest.raises(ValueError, match="last dimension d = 6"):
        layer(torch.randn(2, 7, 5, dtype=torch.float64))


def test_permutation_equivariance_without_positions():
    layer = SelfAttention(6, 4).double()
    x = torch.randn(5, 6, dtype=torch.float64)
    permutation = torch.randperm(5, generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(layer(x[permutation]).outputs, layer(x).outputs[permutation])
