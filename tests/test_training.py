"""Learning-rate schedule, next-token loss and the training loop (tformer.training)."""

import math

import pytest
import torch
from torch import nn

from tformer.training import next_token_loss, train, transformer_lr


def test_schedule_closed_form_points():
    # peak at step = warmup: (d * warmup) ** -0.5
    assert transformer_lr(4000) == pytest.approx(1 / math.sqrt(512 * 4000))
    # linear during warm-up, inverse square root after
    assert transformer_lr(1000) == pytest.approx(transformer_lr(4000) / 4)
    assert transformer_lr(16000) == pytest.approx(transformer_lr(4000) / 2)
    assert max(range(1, 20000, 7), key=transformer_lr) in range(3995, 4005)


def test_schedule_errors():
    with pytest.raises(ValueError, match="step counts from 1"):
        transformer_lr(0)
    with pytest.raises(ValueError, match="positive"):
        transformer_lr(5, d=0)


def test_loss_matches_hand_computed_cross_entropy_and_smoothing():
    torch.manual_seed(0)
    logits = torch.randn(2, 3, 5, dtype=torch.float64)
    targets = torch.randint(5, (2, 3))
    log_probs = logits.log_softmax(-1)
    nll = -log_probs.gather(-1, targets[..., None]).squeeze(-1)
    torch.testing.assert_close(next_token_loss(logits, targets), nll.mean())
    eps = 0.1
    smoothed = (1 - eps) * nll - eps * log_probs.mean(-1)  # ε spread over all 5 classes
    loss = next_token_loss(logits, targets, label_smoothing=eps)
    torch.testing.assert_close(loss, smoothed.mean())


def test_loss_errors():
    with pytest.raises(ValueError, match=r"\(B, T, n_vocab\)"):
        next_token_loss(torch.zeros(2, 5), torch.zeros(2, dtype=torch.long))
    with pytest.raises(ValueError, match="label_smoothing"):
        targets = torch.zeros(1, 2, dtype=torch.long)
        next_token_loss(torch.zeros(1, 2, 3), targets, label_smoothing=1)


def test_train_learns_a_fixed_next_token_rule():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Embedding(7, 16), nn.Linear(16, 7))  # bigram model

    def batch():
        inputs = torch.randint(7, (8, 5))
        return inputs, (inputs + 1) % 7

    log = train(model, batch, 150, lr=3e-2, warmup=10)
    assert len(log.losses) == 150 and log.seconds > 0
    assert log.losses[0] > 1.5 and log.final_loss < 0.1
    assert log.learning_rates[9] == pytest.approx(3e-2)


def test_masked_lm_inputs_rates_and_targets():
    from tformer.training import masked_lm_inputs

    tokens = torch.randint(1, 50, (200, 100), generator=torch.Generator().manual_seed(0))
    inputs, targets, chosen = masked_lm_inputs(
        tokens, mask_id=0, n_vocab=50, generator=torch.Generator().manual_seed(1)
    )
    n = tokens.numel()
    assert abs(chosen.sum().item() / n - 0.15) < 0.01  # ≈ 15 % chosen (20,000 draws)
    masked = (inputs == 0).sum().item() / chosen.sum().item()
    assert abs(masked - 0.8) < 0.03
    assert torch.equal(inputs[~chosen], tokens[~chosen])  # unchosen tokens untouched
    assert torch.equal(targets[chosen], tokens[chosen]) and (targets[~chosen] == -100).all()
    with pytest.raises(ValueError, match="rate"):
        masked_lm_inputs(tokens, mask_id=0, n_vocab=50, rate=0)
