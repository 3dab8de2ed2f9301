"""tformer.layers: LayerNorm vs torch, identity blocks, pre/post-norm equations, decoder block."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from tformer.layers import MLP, DecoderBlock, LayerNorm, TransformerBlock


def test_layernorm_matches_torch_and_is_per_token():
    torch.manual_seed(0)
    ours, reference = LayerNorm(10).double(), torch.nn.LayerNorm(10).double()
    with torch.no_grad():
        ours.weight.uniform_(0.5, 1.5)
        ours.bias.uniform_(-1, 1)
        reference.weight.copy_(ours.weight)
        reference.bias.copy_(ours.bias)
    x = torch.randn(3, 4, 10, dtype=torch.float64) * 5 + 2
    torch.testing.assert_close(ours(x), reference(x))
    # a token's result does not depend on the other tokens in the batch
    torch.testing.assert_close(ours(x[1:2, 2:3]), ours(x)[1:2, 2:3])
    with pytest.raises(ValueError, match="last dimension d = 10"):
        ours(torch.randn(2, 9))


@pytest.mark.parametrize("activation", ["gelu", "gelu_tanh", "relu"])
def test_mlp_against_functional(activation):
    mlp = MLP(6, 10, activation).double()
    x = torch.randn(2, 3, 6, dtype=torch.float64)
    hidden = x @ mlp.fc_in.weight.T + mlp.fc_in.bias
    act = {"gelu": F.gelu, "relu": F.relu, "gelu_tanh": lambda h: F.gelu(h, approximate="tanh")}[activation]
    torch.testing.assert_close(mlp(x), act(hidden) @ mlp.fc_out.weight.T + mlp.fc_out.bias)
    assert sum(p.numel() for p in MLP(768).parameters()) == 8 * 768**2 + 5 * 768
    with pytest.raises(ValueError, match="activation must be one of"):
        MLP(4, activation="swish")


def zero_branch_outputs(block: TransformerBlock) -> None:
    with torch.no_grad():
        block.attn.W_O.weight.zero_()
        block.attn.W_O.bias.zero_()
        block.mlp.fc_out.weight.zero_()
        block.mlp.fc_out.bias.zero_()


def test_pre_norm_block_with_zeroed_branches_is_identity():
    block = TransformerBlock(8, 2, norm="pre").double()
    zero_branch_outputs(block)
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    torch.testing.assert_close(block(x), x)


def test_post_norm_block_with_zeroed_branches_is_two_layernorms():
    block = TransformerBlock(8, 2, norm="post").double()
    zero_branch_outputs(block)
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    torch.testing.assert_close(block(x), F.layer_norm(F.layer_norm(x, (8,)), (8,)))


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_block_equations(norm):
    torch.manual_seed(3)
    block = TransformerBlock(8, 2, norm=norm, causal=True).double()
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    attn = lambda h: block.attn(h).outputs  # noqa: E731 - causal inside
    if norm == "pre":
        h = x + attn(block.ln1(x))
        expected = h + block.mlp(block.ln2(h))
    else:
        h = block.ln1(x + attn(x))
        expected = block.ln2(h + block.mlp(h))
    torch.testing.assert_close(block(x), expected)


def test_causal_block_ignores_the_future():
    block = TransformerBlock(8, 2).double()
    x = torch.randn(1, 6, 8, dtype=torch.float64)
    changed = x.clone()
    changed[:, 4:] += 10
    torch.testing.assert_close(block(x)[:, :4], block(changed)[:, :4])


def test_decoder_block_cross_attention_shapes_and_equations():
    torch.manual_seed(4)
    block = DecoderBlock(8, 2, 16).double()
    x, memory = torch.randn(2, 3, 8, dtype=torch.float64), torch.randn(2, 7, 8, dtype=torch.float64)
    out = block(x, memory)
    assert out.shape == (2, 3, 8)
    assert block.last_cross_weights.shape == (2, 2, 3, 7)
    h = block.ln1(x + block.self_attn(x).outputs)
    h = block.ln2(h + block.cross_attn(h, memory).outputs)
    torch.testing.assert_close(out, block.ln3(h + block.mlp(h)))
