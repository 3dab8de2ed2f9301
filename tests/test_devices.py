"""tformer on any device: the functions that create tensors of their own (masks, generation,
training, tiled attention, interpretability scores) put them on the device of their inputs.

Each test runs on the CPU and, when a GPU is present, on CUDA, where it also compares with the CPU
result (the GPU sums in another order: agreement to float32 tolerance, exact for token ids).
"""

from __future__ import annotations

import pytest
import torch

import tformer
from tformer.attention import attention_loop, scaled_dot_product_attention
from tformer.efficient import online_softmax_states, tiled_attention
from tformer.generation import beam_search, generate, sample_next
from tformer.interp import copying_score, ov_circuit
from tformer.masks import causal_mask
from tformer.model import GPT, GPTConfig
from tformer.training import masked_lm_inputs, train

DEVICES = [
    "cpu",
    pytest.param(
        "cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
    ),
]


def _model(device: str) -> GPT:
    torch.manual_seed(0)
    config = GPTConfig(n_vocab=11, n_ctx=16, d=16, n_heads=2, n_layers=1)
    return GPT(config).to(device)


@pytest.mark.parametrize("device", DEVICES)
def test_attention_loop_with_mask_on_device(device):
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 5, 4, device=device) for _ in range(3))
    mask = causal_mask(5, device=device)
    loop = attention_loop(q, k, v, mask=mask)
    fused = scaled_dot_product_attention(q, k, v, mask=mask)
    assert loop.outputs.device.type == device
    torch.testing.assert_close(loop.outputs, fused.outputs)


@pytest.mark.parametrize("device", DEVICES)
def test_generation_takes_a_cpu_prompt_and_a_cpu_generator(device):
    model = _model(device)
    prompt = torch.tensor([[1, 2, 3]])  # on the CPU, as a reader types it
    greedy = generate(model, prompt, 5)
    sampled = generate(model, prompt, 5, temperature=1.0, generator=torch.Generator().manual_seed(0))
    assert greedy.device.type == device and sampled.shape == (1, 8)
    sequences, scores = beam_search(model, prompt, 3, beam_width=2)
    assert sequences.device.type == device and scores.shape == (2,)
    if device != "cpu":
        reference = generate(model.cpu(), prompt, 5)
        assert torch.equal(greedy.cpu(), reference)


def test_sampling_with_a_cpu_generator_is_device_independent():
    """The draw happens on the generator's device, so the tokens depend on the probabilities and
    the seed only; on a GPU the same seed picks the same tokens."""
    logits = torch.randn(4, 9, generator=torch.Generator().manual_seed(1))
    first = sample_next(logits, temperature=1.0, generator=torch.Generator().manual_seed(5))
    again = sample_next(logits, temperature=1.0, generator=torch.Generator().manual_seed(5))
    assert torch.equal(first, again)
    if torch.cuda.is_available():
        on_gpu = sample_next(logits.cuda(), temperature=1.0, generator=torch.Generator().manual_seed(5))
        assert on_gpu.device.type == "cuda" and torch.equal(on_gpu.cpu(), first)


@pytest.mark.parametrize("device", DEVICES)
def test_train_moves_cpu_batches_to_the_model(device):
    model = _model(device)
    generator = torch.Generator().manual_seed(0)

    def batch():
        tokens = torch.randint(0, 11, (4, 9), generator=generator)  # CPU batches
        return tokens[:, :-1], tokens[:, 1:]

    log = train(model, batch, 3)
    assert len(log.losses) == 3 and all(loss == loss for loss in log.losses)


@pytest.mark.parametrize("device", DEVICES)
def test_masked_lm_inputs_same_corruption_on_every_device(device):
    tokens = torch.arange(40).reshape(4, 10) % 7 + 1
    cpu = masked_lm_inputs(tokens, mask_id=0, n_vocab=8, generator=torch.Generator().manual_seed(2))
    dev = masked_lm_inputs(
        tokens.to(device), mask_id=0, n_vocab=8, generator=torch.Generator().manual_seed(2)
    )
    for a, b in zip(cpu, dev, strict=True):
        assert b.device.type == device and torch.equal(a, b.cpu())


@pytest.mark.parametrize("device", DEVICES)
def test_tiled_and_online_softmax_on_device(device):
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 6, 4, device=device) for _ in range(3))
    torch.testing.assert_close(
        tiled_attention(q, k, v, tile_size=4), scaled_dot_product_attention(q, k, v).outputs
    )
    scores = torch.randn(7, device=device)
    values = torch.randn(7, 3)  # values left on the CPU
    last = online_softmax_states(scores, values, tile_size=3)[-1]
    torch.testing.assert_close(last["output"], torch.softmax(scores, 0) @ values.to(device))


@pytest.mark.parametrize("device", DEVICES)
def test_copying_score_on_device(device):
    model = _model(device)
    circuit = ov_circuit(model, 0, 0)
    assert circuit.device.type == device
    score = copying_score(circuit, tokens=[1, 2, 3])
    assert 0.0 <= score <= 1.0
    assert copying_score(torch.eye(5, device=device)) == 1.0


def test_device_helper_prefers_cuda_when_present():
    assert tformer.device().type == ("cuda" if torch.cuda.is_available() else "cpu")
