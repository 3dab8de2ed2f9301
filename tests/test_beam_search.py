"""tformer.generation.beam_search against exhaustive search and greedy decoding."""

import itertools
import math

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


def test_length_penalty_closed_form():
    from tformer.generation import length_penalty

    assert length_penalty(1, 0.6) == pytest.approx(1.0)  # ((5 + 1) / 6) ** α
    assert length_penalty(7, 0.6) == pytest.approx(2 ** 0.6)
    assert length_penalty(10, 0.0) == 1.0
    with pytest.raises(ValueError, match="non-negative"):
        length_penalty(-1, 0.6)


def _exhaustive_with_eos(model, prompt, n_new, eos, alpha):
    """Normalised score of every finished output (ends in EOS) and every full-length one."""
    from tformer.generation import length_penalty

    scores = {}
    n_vocab = model.config.n_vocab
    for length in range(1, n_new + 1):
        for continuation in itertools.product(range(n_vocab), repeat=length):
            if eos in continuation[:-1]:
                continue  # nothing follows the end token
            if continuation[-1] != eos and length < n_new:
                continue
            tokens = torch.cat([prompt, torch.tensor(continuation)])[None]
            with torch.no_grad():
                log_probs = torch.log_softmax(model(tokens)[0].double(), dim=-1)
            n = len(prompt)
            log_p = sum(log_probs[n - 1 + i, t].item() for i, t in enumerate(continuation))
            scores[continuation] = log_p / length_penalty(length, alpha)
    return scores


@pytest.mark.parametrize(("seed", "alpha"), [(0, 0.0), (1, 0.6), (2, 1.0)])
def test_wide_beam_with_eos_finds_the_best_normalised_score(seed, alpha):
    model, prompt, n_new, eos = _tiny_model(seed), torch.tensor([1, 3]), 3, 0
    exhaustive = _exhaustive_with_eos(model, prompt, n_new, eos, alpha)
    best = max(exhaustive, key=exhaustive.get)
    sequences, scores = beam_search(model, prompt, n_new, beam_width=5 ** n_new,
                                    eos_id=eos, alpha=alpha)
    row = sequences[0, 2:].tolist()
    found = tuple(row[: row.index(eos) + 1]) if eos in row else tuple(row)
    assert found == best
    assert scores[0].item() == pytest.approx(exhaustive[best], rel=1e-6, abs=1e-6)
    assert torch.all(scores[:-1] >= scores[1:])


def test_length_penalty_changes_the_winner():
    """Hand-made distributions: a short output with a higher log P loses once lengths count."""
    from torch import nn

    from tformer.generation import length_penalty

    class Fixed(nn.Module):  # token 0 = EOS; after BOS: EOS 0.5, token 1 0.5; then 1 -> EOS 0.9
        config = GPTConfig(n_vocab=3, n_ctx=8, d=2, n_layers=1, n_heads=1)

        def forward(self, tokens):
            probs = torch.full((*tokens.shape, 3), 1e-6)  # a bigram model: each position
            probs[..., 0] = torch.where(tokens == 2, 0.5, 0.9)  # predicts from its own token
            probs[..., 1] = torch.where(tokens == 2, 0.5, 0.1 - 2e-6)
            return probs.log()

    model, bos = Fixed(), torch.tensor([2])
    short = math.log(0.5)  # [EOS]
    long = math.log(0.5) + math.log(0.9)  # [1, EOS]
    assert short > long  # raw log P prefers the short output
    assert long / length_penalty(2, 1.0) > short / length_penalty(1, 1.0)
    raw, _ = beam_search(model, bos, 4, beam_width=2, eos_id=0, alpha=0.0)
    penalised, _ = beam_search(model, bos, 4, beam_width=2, eos_id=0, alpha=1.0)
    assert raw[0, 1:2].tolist() == [0] and penalised[0, 1:3].tolist() == [1, 0]


def test_search_does_not_stop_while_an_alive_hypothesis_can_still_win():
    """b = 1: [EOS] finishes at step 1, but [1, EOS] scores higher once lengths count."""
    from torch import nn

    class Fixed(nn.Module):  # token 0 = EOS; after BOS: EOS 0.5, token 1 0.5; then 1 -> EOS 0.99
        config = GPTConfig(n_vocab=3, n_ctx=8, d=2, n_layers=1, n_heads=1)

        def forward(self, tokens):
            probs = torch.full((*tokens.shape, 3), 1e-6)
            probs[..., 0] = torch.where(tokens == 2, 0.5, 0.99)
            probs[..., 1] = torch.where(tokens == 2, 0.5, 0.01 - 2e-6)
            return probs.log()

    sequences, scores = beam_search(Fixed(), torch.tensor([2]), 4, beam_width=1, eos_id=0,
                                    alpha=1.0)
    assert sequences[0, 1:3].tolist() == [1, 0]
    assert scores[0].item() == pytest.approx((math.log(0.5) + math.log(0.99)) / (7 / 6), rel=1e-5)


def test_trace_records_every_step():
    model, trace = _tiny_model(4), []
    beam_search(model, torch.tensor([1]), 3, beam_width=2, eos_id=0, alpha=0.6, trace=trace)
    assert 1 <= len(trace) <= 3
    assert all(len(step) >= 1 for step in trace)
    tokens, log_p, finished = trace[0][0]
    assert len(tokens) == 1 and log_p <= 0 and isinstance(finished, bool)
