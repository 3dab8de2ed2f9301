"""tformer.layers: LayerNorm vs torch, identity blocks, pre/post-norm equations, decoder block."""

from __future__ import annotations

import math

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


def test_rmsnorm_matches_torch_and_closed_form():
    from tformer.layers import RMSNorm

    torch.manual_seed(0)
    x = 3 * torch.randn(2, 5, 8, dtype=torch.float64) + 1
    norm = RMSNorm(8, eps=1e-6).double()
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        ours = norm(x)
        reference = torch.nn.RMSNorm(8, eps=1e-6).double()
        reference.weight.copy_(norm.weight)
        torch.testing.assert_close(ours, reference(x))
        by_hand = norm.weight * x / torch.sqrt((x**2).mean(-1, keepdim=True) + 1e-6)
        torch.testing.assert_close(ours, by_hand)
    assert sum(p.numel() for p in norm.parameters()) == 8
    with pytest.raises(ValueError, match="last dimension d = 8"):
        norm(torch.zeros(2, 7, dtype=torch.float64))


def test_swiglu_closed_form_and_parameters():
    from tformer.layers import SwiGLU

    torch.manual_seed(1)
    mlp = SwiGLU(12, 32).double()
    x = torch.randn(3, 4, 12, dtype=torch.float64)
    with torch.no_grad():
        gate, up, down = mlp.gate.weight.T, mlp.up.weight.T, mlp.fc_out.weight.T
        z = x @ gate
        expected = ((z / (1 + torch.exp(-z))) * (x @ up)) @ down  # SiLU(z) = z·σ(z)
        torch.testing.assert_close(mlp(x), expected)
    assert sum(p.numel() for p in mlp.parameters()) == 3 * 12 * 32
    assert SwiGLU(768).d_ff == 2048


def test_scale_residual_projections_divides_by_sqrt_2L():
    from tformer.layers import TransformerBlock, scale_residual_projections

    torch.manual_seed(2)
    blocks = [TransformerBlock(16, 4) for _ in range(3)]
    before = [(b.attn.W_O.weight.clone(), b.mlp.fc_out.weight.clone(), b.mlp.fc_in.weight.clone())
              for b in blocks]
    factor = scale_residual_projections(blocks)
    assert factor == pytest.approx(1 / math.sqrt(6))
    for block, (w_o, fc_out, fc_in) in zip(blocks, before):
        torch.testing.assert_close(block.attn.W_O.weight, w_o * factor)
        torch.testing.assert_close(block.mlp.fc_out.weight, fc_out * factor)
        assert torch.equal(block.mlp.fc_in.weight, fc_in)  # reads are not scaled
    with pytest.raises(ValueError, match="at least 1"):
        scale_residual_projections([], 0)


def test_layer_gradient_norms_against_autograd():
    from tformer.layers import TransformerBlock
    from tformer.training import layer_gradient_norms

    torch.manual_seed(3)
    blocks = torch.nn.Sequential(TransformerBlock(8, 2), TransformerBlock(8, 2))
    blocks(torch.randn(2, 5, 8)).pow(2).sum().backward()
    norms = layer_gradient_norms(blocks)
    for block, value in zip(blocks, norms):
        grads = [p.grad for p in block.parameters() if p.ndim == 2]
        assert value == pytest.approx(float(torch.cat([g.flatten() for g in grads]).norm()),
                                      rel=1e-6)
    assert layer_gradient_norms([torch.nn.Linear(2, 2)]) == [0.0]
