"""tformer.scale_training: the unscaled switch against a hand-computed softmax(q·k), the Xavier
redraw against its variance law, and the run's bookkeeping."""

from __future__ import annotations

import math

import pytest
import torch

from tformer.multihead import split_heads
from tformer.scale_training import (
    ScaleRun,
    build_model,
    remove_scaling,
    top_weight,
    xavier_init,
)


def _weights_by_hand(model, tokens: torch.Tensor, scaled: bool) -> torch.Tensor:
    """softmax of the causal (q·k or q·k/√d_k) scores, computed without the layer's attention."""
    block = model.blocks[0]
    attn = block.attn
    x = block.ln1(model.embed(tokens))
    q = split_heads(torch.nn.functional.linear(x, attn.W_Q.weight, attn.W_Q.bias), attn.n_heads)
    k = split_heads(attn.W_K(x), attn.n_heads)
    scores = q @ k.mT
    if scaled:
        scores = scores / math.sqrt(attn.d_k)
    T = tokens.shape[1]
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    return scores.masked_fill(future, float("-inf")).softmax(-1)


@pytest.mark.parametrize("scaled", [True, False])
def test_weights_match_softmax_of_plain_or_scaled_dot_products(scaled):
    model = build_model(20, scaled=scaled, init="xavier", seed=3)
    tokens = torch.randint(20, (2, 12), generator=torch.Generator().manual_seed(0))
    attn = model.blocks[0].attn
    attn.record = True
    with torch.no_grad():
        model(tokens)
        expected = _weights_by_hand(model, tokens, scaled)
    torch.testing.assert_close(attn.last_weights, expected, atol=1e-5, rtol=1e-5)


def test_unscaled_is_sharper_than_scaled_at_xavier_init():
    tokens = torch.randint(20, (8, 64), generator=torch.Generator().manual_seed(1))
    unscaled = top_weight(build_model(20, scaled=False, init="xavier", seed=0), tokens)
    scaled = top_weight(build_model(20, scaled=True, init="xavier", seed=0), tokens)
    assert unscaled > 0.4 > 0.2 > scaled


def test_remove_scaling_keeps_the_parameters():
    model = build_model(20, scaled=True, init="gpt", seed=0)
    before = {name: p.clone() for name, p in model.named_parameters()}
    remove_scaling(model)
    after = dict(model.named_parameters())
    assert before.keys() == after.keys()
    for name, value in before.items():
        assert torch.equal(value, after[name]), name


def test_xavier_init_variance_and_untouched_embedding():
    model = build_model(50, scaled=True, init="gpt", seed=0)
    embedding = model.token_embedding.weight.clone()
    xavier_init(model)
    d = model.config.d
    for linear in (model.blocks[0].attn.W_Q, model.blocks[0].attn.W_O):
        # 64·64 draws: the sample variance is within 10 % of 1/d
        assert abs(linear.weight.var().item() * d - 1) < 0.1
    assert torch.equal(model.token_embedding.weight, embedding)
    gpt = build_model(50, scaled=True, init="gpt", seed=0)
    assert abs(gpt.blocks[0].attn.W_Q.weight.std().item() / 0.02 - 1) < 0.1


def test_gpt_and_xavier_pairs_start_from_the_same_weights():
    for init in ("gpt", "xavier"):
        a = build_model(30, scaled=True, init=init, seed=5)
        b = build_model(30, scaled=False, init=init, seed=5)
        for (name, p), q in zip(a.named_parameters(), b.parameters()):
            assert torch.equal(p, q), (init, name)


def test_bad_init_and_empty_window_raise():
    with pytest.raises(ValueError, match="init must be"):
        build_model(10, scaled=True, init="he", seed=0)
    with pytest.raises(ValueError, match="no steps"):
        ScaleRun([1.0, 2.0], 0.1, 0.1).mean_loss(5, 9)
    assert ScaleRun([1.0, 2.0, 3.0], 0.1, 0.1).mean_loss(1, 3) == 2.5
