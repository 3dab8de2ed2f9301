"""tformer.generation.beam_search against exhaustive search and greedy decoding."""

import itertools

import pytest
import torch

from tformer.generation import beam_search, generate
from tformer.model import GPT, GPTConfig


def _tiny_model(seed: int) -> GPT:
    torch.manual_seed(seed)
    model = GPT(GPTConfig(n_vocab=5, n_ctx=16, d=16, n_layers=1, n_heads=2))
    with torch.no_grad():  # sharper distributions than the 0.02 init, so the search matters
        for parameter in model.parameters():
            parameter.mul_(20)
    return model.eval()


def _exhaustive(model: GPT, prompt: torch.Tensor, n_new: int) -> dict[tuple, float]:
    """Log-probability of every continuation, each scored by its own full forward pass."""
    scores = {}
    for continuation in itertools.product(range(model.config.n_vocab), repeat=n_new):
        tokens = torch.cat([prompt, torch.tensor(continuation)])[None]
        with torch.no_grad():
            log_probs = torch.log_softmax(model(tokens)[0].double(), dim=-1)
        n = len(prompt)
        scores[continuation] = sum(
            log_probs[n - 1 + i, token].item() for i, token in enumerate(continuation)
        )
    return scores


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_wide_beam_finds_the_exhaustive_optimum(seed):
    model, prompt, n_new = _tiny_model(seed), torch.tensor([1, 3]), 3
    exhaustive = _exhaustive(model, prompt, n_new)
    best = max(exhaustive, key=exhaustive.get)
    sequences, log_probs = beam_search(model, prompt, n_new, beam_width=5 ** (n_new - 1))
    assert tuple(sequences[0, 2:].tolist()) == best
    assert log_probs[0].item() == pytest.approx(exhaustive[best], rel=1e-5, abs=1e-5)
    # every returned beam carries its true log-probability, best first
    for row, score in zip(sequences[:10], log_probs[:10]):
        assert score.item() == pytest.approx(exhaustive[tuple(row[2:].tolist())], rel=1e-5, abs=1e-5)
    assert torch.all(log_probs[:-1] >= log_probs[1:])


def test_width_one_is_greedy():
    model, prompt = _tiny_model(3), torch.tensor([[2, 0, 4]])
    sequences, _ = beam_search(model, prompt, 6, beam_width=1)
    torch.testing.assert_close(sequences, generate(model, prompt, 6, temperature=0.0))


def test_beam_search_errors():
    model = _tiny_model(0)
    with pytest.raises(ValueError, match="one prompt"):
        beam_search(model, torch.zeros(2, 3, dtype=torch.long), 2)
    with pytest.raises(ValueError, match="beam_width"):
        beam_search(model, torch.tensor([1]), 2, beam_width=0)
    with pytest.raises(ValueError, match="exceeds n_ctx"):
        beam_search(model, torch.tensor([1]), 16)
