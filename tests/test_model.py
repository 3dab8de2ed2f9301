"""tformer.model: GPT-2 small's parameter table (source 000) and equality with Hugging Face's GPT-2.

`transformers` is a test-only dependency: its GPT2LMHeadModel is built from a config with random
weights (nothing is downloaded), its weights are copied into tformer's GPT, and logits and greedy
generations must agree.
"""

from __future__ import annotations

import pytest
import torch

from tformer.generation import generate
from tformer.model import GPT, GPTConfig, count_parameters, multiply_adds_per_token, parameter_formula

# Source 000's table for GPT-2 small (d = 768, 12 layers, 50,257 tokens, 1,024 positions).
SOURCE_TABLE = {
    "attention (per layer)": 2_362_368,
    "MLP (per layer)": 4_722_432,
    "layer norms (per layer)": 3_072,
    "one block": 7_087_872,
    "all blocks": 85_054_464,
    "token embedding": 38_597_376,
    "position embedding": 786_432,
    "final layer norm": 1_536,
    "total": 124_439_808,
}


@pytest.fixture(scope="module")
def gpt2_pair():
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    reference = transformers.GPT2LMHeadModel(
        transformers.GPT2Config(attn_implementation="eager")
    ).eval()
    ours = GPT(GPTConfig.gpt2_small()).eval()
    source = reference.transformer
    with torch.no_grad():
        ours.token_embedding.weight.copy_(source.wte.weight)
        ours.position_embedding.weight.copy_(source.wpe.weight)
        for block, ref in zip(ours.blocks, source.h):
            block.ln1.weight.copy_(ref.ln_1.weight)
            block.ln1.bias.copy_(ref.ln_1.bias)
            block.ln2.weight.copy_(ref.ln_2.weight)
            block.ln2.bias.copy_(ref.ln_2.bias)
            # Hugging Face's Conv1D stores (in, out); nn.Linear stores (out, in)
            q, k, v = ref.attn.c_attn.weight.T.split(768, dim=0)
            qb, kb, vb = ref.attn.c_attn.bias.split(768)
            for linear, weight, bias in [
                (block.attn.W_Q, q, qb), (block.attn.W_K, k, kb), (block.attn.W_V, v, vb),
                (block.attn.W_O, ref.attn.c_proj.weight.T, ref.attn.c_proj.bias),
                (block.mlp.fc_in, ref.mlp.c_fc.weight.T, ref.mlp.c_fc.bias),
                (block.mlp.fc_out, ref.mlp.c_proj.weight.T, ref.mlp.c_proj.bias),
            ]:
                linear.weight.copy_(weight)
                linear.bias.copy_(bias)
        ours.final_norm.weight.copy_(source.ln_f.weight)
        ours.final_norm.bias.copy_(source.ln_f.bias)
    return ours, reference


def test_gpt2_small_parameter_table_matches_source():
    with torch.device("meta"):
        model = GPT(GPTConfig.gpt2_small())
    counts = count_parameters(model)
    for row, value in SOURCE_TABLE.items():
        assert counts[row] == value, row
    assert parameter_formula(GPTConfig.gpt2_small()) == counts
    d = 768
    assert counts["attention (per layer)"] == 4 * d**2 + 4 * d
    assert counts["MLP (per layer)"] == 8 * d**2 + 5 * d


def test_gpt2_total_equals_hugging_face(gpt2_pair):
    ours, reference = gpt2_pair
    assert sum(p.numel() for p in reference.parameters()) == count_parameters(ours)["total"]


def test_gpt2_logits_and_greedy_generation_equal_hugging_face(gpt2_pair):
    ours, reference = gpt2_pair
    tokens = torch.randint(0, 50257, (2, 12), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        expected = reference(tokens).logits
        torch.testing.assert_close(ours(tokens), expected, atol=2e-4, rtol=1e-4)
        sequence = tokens[:1]
        for _ in range(6):  # greedy decoding with the reference, full recomputation
            next_token = reference(sequence).logits[:, -1].argmax(-1, keepdim=True)
            sequence = torch.cat([sequence, next_token], dim=1)
    assert torch.equal(generate(ours, tokens[:1], 6, use_cache=True), sequence)


@pytest.mark.parametrize(
    "config",
    [
        GPTConfig.tiny(37),
        GPTConfig.tiny(37, tie_weights=False, positions="sinusoidal", norm="post", d_ff=96),
        GPTConfig.attention_only(20),
        GPTConfig.tiny(11, bias=False, positions="rope", activation="relu"),
    ],
)
def test_formula_matches_object_for_variants(config):
    model = GPT(config)
    assert parameter_formula(config) == count_parameters(model)
    assert count_parameters(model)["total"] == sum(p.numel() for p in model.parameters())


def test_exercise_12_6_and_multiply_adds():
    config = GPTConfig(n_vocab=50257, n_ctx=1024, d=1024, n_layers=24, n_heads=16)
    assert parameter_formula(config)["all blocks"] == 24 * (12 * 1024**2 + 13 * 1024) == 302_309_376
    # source 000: about 142 million multiply-adds per token for GPT-2 small at N = 1,024
    flops = multiply_adds_per_token(GPTConfig.gpt2_small(), 1024)
    assert flops == 12 * (12 * 768**2 + 2 * 1024 * 768) + 50257 * 768
    assert round(flops / 1e6) == 142


def test_weight_tying_and_causality():
    model = GPT(GPTConfig.tiny(30)).double().eval()
    assert model.unembed.weight is model.token_embedding.weight
    tokens = torch.randint(0, 30, (1, 10))
    changed = tokens.clone()
    changed[0, 6:] = (changed[0, 6:] + 1) % 30
    torch.testing.assert_close(model(tokens)[:, :6], model(changed)[:, :6])


def test_model_input_errors():
    model = GPT(GPTConfig.tiny(30, n_ctx=8))
    with pytest.raises(ValueError, match=r"tokens must have shape \(B, T\)"):
        model(torch.zeros(5, dtype=torch.long))
    with pytest.raises(TypeError, match="tokens must be integer ids"):
        model(torch.zeros(1, 5))
    with pytest.raises(ValueError, match="token ids must lie in 0..29"):
        model(torch.tensor([[1, 30]]))
    with pytest.raises(ValueError, match="cannot represent longer inputs"):
        model(torch.zeros(1, 9, dtype=torch.long))
    with pytest.raises(ValueError, match="divisible by n_heads"):
        GPTConfig(n_vocab=5, n_ctx=4, d=10, n_layers=1, n_heads=3)
