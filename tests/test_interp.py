"""tformer.interp and tformer.data.sequences against hand-built patterns and closed forms.

Scores are checked on attention patterns constructed by hand (a perfect previous-token head, a
perfect induction head, a uniform causal head whose scores have harmonic-number closed forms);
ablations against the same model with its weights edited by hand; the OV circuit against a
one-token forward pass.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
import torch
from torch.nn import functional as F

from tformer import interp
from tformer.data import BOS, fixed_length_batch, half_masks, random_batch, repeated_batch
from tformer.model import GPT, GPTConfig
from tformer.positions import apply_rope


def shifted_pattern(n_positions: int, shift: int) -> torch.Tensor:
    """Every query ``t >= shift`` attends only to ``t - shift``; earlier queries to position 0."""
    weights = torch.zeros(n_positions, n_positions)
    for t in range(n_positions):
        weights[t, t - shift if t >= shift else 0] = 1.0
    return weights


def uniform_causal(n_positions: int) -> torch.Tensor:
    return torch.tril(torch.ones(n_positions, n_positions)) / torch.arange(1, n_positions + 1)[:, None]


def induction_pattern(length: int) -> torch.Tensor:
    """Queries of the second copy attend to t - L + 1; others to themselves."""
    n_positions = 2 * length + 1
    weights = torch.eye(n_positions)
    for t in range(length + 1, n_positions):
        weights[t] = 0.0
        weights[t, t - length + 1] = 1.0
    return weights


# --- data ---------------------------------------------------------------------------------


def test_repeated_batch_structure_and_determinism():
    batch = repeated_batch(64, 16, 8, 24, seed=3)
    L = batch.length
    assert 8 <= L <= 24 and batch.tokens.shape == (16, 2 * L + 1)
    assert (batch.tokens[:, 0] == BOS).all()
    assert torch.equal(batch.tokens[:, 1 : L + 1], batch.tokens[:, L + 1 :])
    assert batch.tokens[:, 1:].min() >= 1 and batch.tokens.max() <= 63
    again = repeated_batch(64, 16, 8, 24, seed=3)
    assert torch.equal(batch.tokens, again.tokens)
    generator = torch.Generator().manual_seed(5)
    lengths = {repeated_batch(64, 2, 8, 12, generator=generator).length for _ in range(200)}
    assert lengths == set(range(8, 13))  # inclusive range, drawn per batch


def test_fixed_and_random_batches():
    fixed = fixed_length_batch(10, 4, 5, seed=0)
    assert fixed.length == 5 and fixed.tokens.shape == (4, 11) and fixed.repeated
    control = random_batch(1000, 8, 20, seed=0)
    assert control.tokens.shape == (8, 41) and not control.repeated
    # with 999 content tokens, an accidental full repeat is (1/999)**20: never
    assert not torch.equal(control.tokens[:, 1:21], control.tokens[:, 21:])
    assert torch.equal(fixed.inputs, fixed.tokens[:, :-1])
    assert torch.equal(fixed.targets, fixed.tokens[:, 1:])


def test_half_masks():
    first, second = half_masks(5)
    assert first.tolist() == [True] * 5 + [False] * 5
    assert second.tolist() == [False] * 6 + [True] * 4


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: fixed_length_batch(2, 4, 5), "n_vocab"),
        (lambda: fixed_length_batch(10, 4, 1), "L >= 2"),
        (lambda: repeated_batch(10, 4, 9, 8), "min_length <= max_length"),
        (lambda: repeated_batch(10, 4, seed=1, generator=torch.Generator()), "not both"),
    ],
)
def test_data_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- scores on hand-built patterns --------------------------------------------------------


def harmonic(n: int) -> Fraction:
    return sum((Fraction(1, k) for k in range(1, n + 1)), Fraction(0))


def test_previous_token_score_closed_forms():
    T = 17
    assert interp.previous_token_score(shifted_pattern(T, 1)).item() == pytest.approx(1.0)
    assert interp.previous_token_score(torch.eye(T)).item() == 0.0
    # uniform causal: weight 1/(t+1) on t-1, averaged over t = 1..T-1 → (H_T − 1)/(T − 1)
    expected = float((harmonic(T) - 1) / (T - 1))
    assert interp.previous_token_score(uniform_causal(T)).item() == pytest.approx(expected)


def test_induction_score_closed_forms():
    L = 6
    T = 2 * L + 1
    assert interp.induction_score(induction_pattern(L), L).item() == pytest.approx(1.0)
    # a previous-token head puts nothing on t − L + 1 (for L > 2)
    assert interp.induction_score(shifted_pattern(T, 1), L).item() == 0.0
    # a head attending L − 1 back *is* the induction stripe: score 1
    assert interp.induction_score(shifted_pattern(T, L - 1), L).item() == pytest.approx(1.0)
    # uniform causal: mean of 1/(t+1) over t = L+1 .. 2L → (H_{2L+1} − H_{L+1}) / L
    expected = float((harmonic(T) - harmonic(L + 1)) / L)
    assert interp.induction_score(uniform_causal(T), L).item() == pytest.approx(expected)


def test_scores_keep_leading_axes():
    L = 4
    stack = torch.stack([induction_pattern(L), shifted_pattern(2 * L + 1, 1)])  # (2, T, T)
    batch = stack[None].expand(3, 2, -1, -1)  # (B=3, h=2, T, T)
    torch.testing.assert_close(interp.induction_score(batch, L), torch.tensor([[1.0, 0.0]] * 3))
    assert interp.previous_token_score(batch).shape == (3, 2)


def test_score_errors():
    with pytest.raises(ValueError, match=r"\(\.\.\., T, T\)"):
        interp.previous_token_score(torch.ones(3, 4))
    with pytest.raises(ValueError, match="T >= L \\+ 2"):
        interp.induction_score(torch.eye(9), 8)


def test_classify_heads():
    previous = torch.tensor([[0.9, 0.1], [0.05, 0.3]])
    induction = torch.tensor([[0.0, 0.2], [0.85, 0.45]])
    kinds = interp.classify_heads(previous, induction)
    assert kinds == {
        (0, 0): "previous-token", (0, 1): "other", (1, 0): "induction", (1, 1): "other",
    }
    assert interp.find_head(kinds, "induction", induction) == (1, 0)
    assert interp.find_head(kinds, "previous-token", previous) == (0, 0)
    assert interp.classify_heads(previous, induction, threshold=0.4)[(1, 1)] == "induction"
    with pytest.raises(ValueError, match="same shape"):
        interp.classify_heads(previous, induction[0])


def test_phase_change_step():
    curve = [4.0] * 100 + [0.0] * 50
    # trailing mean over 10 steps at step 100 + j is 4(9 − j)/10 < 2  ⇔  j >= 5
    assert interp.phase_change_step(curve, 4.0, window=10) == 105
    assert interp.phase_change_step(curve, 4.0, window=1) == 100
    assert interp.phase_change_step([4.0] * 20, 4.0) is None
    with pytest.raises(ValueError, match="non-empty"):
        interp.phase_change_step([], 4.0)


def test_copying_score():
    assert interp.copying_score(torch.eye(5)) == 1.0
    derangement = torch.eye(5)[[1, 2, 3, 4, 0]]
    assert interp.copying_score(derangement) == 0.0
    circuit = torch.eye(4)
    circuit[0, 3] = 5.0  # row 0 prefers token 3 — unless token 3 is excluded
    assert interp.copying_score(circuit) == 0.75
    assert interp.copying_score(circuit, tokens=[0, 1, 2]) == 1.0
    assert interp.chance_loss(64) == pytest.approx(math.log(63))


# --- on a real (untrained) model ----------------------------------------------------------


@pytest.fixture
def model():
    torch.manual_seed(0)
    net = GPT(GPTConfig.attention_only(16, d=8, n_heads=2, n_ctx=32, tie_weights=False))
    for parameter in net.parameters():  # larger weights than the init, so heads differ clearly
        torch.nn.init.normal_(parameter, std=0.5)
    return net.eval()


def test_capture_matches_a_by_hand_first_layer(model):
    tokens = repeated_batch(16, 3, 4, 4, seed=0).tokens
    result = interp.capture(model, tokens)
    n_layers, B, h, T = 2, 3, 2, tokens.shape[1]
    assert result.weights.shape == (n_layers, B, h, T, T)
    assert result.head_outputs.shape == (n_layers, B, h, T, 4)
    attn = model.blocks[0].attn
    x = model.token_embedding(tokens)
    queries = F.linear(x, attn.W_Q.weight, attn.W_Q.bias).view(B, T, h, 4).transpose(1, 2)
    keys = F.linear(x, attn.W_K.weight, attn.W_K.bias).view(B, T, h, 4).transpose(1, 2)
    values = F.linear(x, attn.W_V.weight, attn.W_V.bias).view(B, T, h, 4).transpose(1, 2)
    queries, keys = apply_rope(queries), apply_rope(keys)
    scores = queries @ keys.transpose(-2, -1) / 2.0
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    weights = scores.masked_fill(future, float("-inf")).softmax(-1)
    torch.testing.assert_close(result.weights[0], weights.detach())
    torch.testing.assert_close(result.head_outputs[0], (weights @ values).detach())
    assert not any(layer.record for layer in interp.attention_layers(model))  # restored


def test_zero_ablation_equals_zeroing_the_heads_slice_of_W_O(model):
    tokens = repeated_batch(16, 2, 5, 5, seed=1).tokens
    with interp.ablate(model, (1, 0)):
        ablated = model(tokens)
    assert model.blocks[1].attn.head_hook is None  # restored
    edited = GPT(model.config)
    edited.load_state_dict(model.state_dict())
    with torch.no_grad():
        edited.blocks[1].attn.W_O.weight[:, 0:4] = 0.0
    torch.testing.assert_close(ablated, edited(tokens))
    assert not torch.allclose(ablated, model(tokens))


def test_mean_ablation_equals_folding_the_mean_into_the_bias(model):
    tokens = repeated_batch(16, 4, 5, 5, seed=2).tokens
    means = interp.mean_head_outputs(model, tokens)
    assert means.shape == (2, 2, 4)
    with interp.ablate(model, [(0, 1)], "mean", means=means):
        ablated = model(tokens)
    edited = GPT(model.config)
    edited.load_state_dict(model.state_dict())
    W_O = edited.blocks[0].attn.W_O
    with torch.no_grad():
        W_O.bias += W_O.weight[:, 4:8] @ means[0, 1]
        W_O.weight[:, 4:8] = 0.0
    torch.testing.assert_close(ablated, edited(tokens), atol=1e-5, rtol=1e-5)


def test_ablation_restores_hooks_after_an_error(model):
    def marker(outputs):
        return outputs

    model.blocks[0].attn.head_hook = marker
    with pytest.raises(RuntimeError), interp.ablate(model, [(0, 0), (1, 1)]):
        raise RuntimeError("boom")
    assert model.blocks[0].attn.head_hook is marker
    assert model.blocks[1].attn.head_hook is None
    model.blocks[0].attn.head_hook = None


def test_ablation_errors(model):
    with pytest.raises(ValueError, match="no head 2 in layer 0"), interp.ablate(model, (0, 2)):
        pass
    with pytest.raises(ValueError, match="mean_head_outputs"), interp.ablate(model, (0, 0), "mean"):
        pass
    with pytest.raises(ValueError, match="'zero' or 'mean'"), interp.ablate(model, (0, 0), "one"):
        pass


def test_ov_circuit_matches_a_one_token_forward_pass(model):
    """On a one-token sequence the head attends to itself with weight 1, so (biases removed and
    the other head zeroed) its contribution to the logits is exactly row i of the full OV circuit,
    and what it writes into the stream is x W_V^h W_O^h, the (d × d) OV circuit."""
    layer, head = 0, 1
    circuit = interp.full_ov_circuit(model, layer, head)
    ov = interp.ov_circuit(model, layer, head)
    assert ov.shape == (8, 8) and torch.linalg.matrix_rank(ov) <= 4
    assert circuit.shape == (16, 16)
    attn = model.blocks[layer].attn
    with torch.no_grad():
        attn.W_V.bias.zero_()
        attn.W_O.bias.zero_()
    for token in (0, 5, 11):
        x = model.token_embedding(torch.tensor([[token]]))
        with interp.ablate(model, (layer, 1 - head)):
            written = attn(x).outputs[0, 0]
        torch.testing.assert_close(model.unembed(written).detach(), circuit[token])
        torch.testing.assert_close(written.detach(), (x[0, 0] @ ov).detach())


def test_half_losses_from_logits():
    L, n_vocab = 3, 5
    tokens = torch.tensor([[0, 1, 2, 3, 1, 2, 3]])
    logits = torch.zeros(1, 2 * L, n_vocab)
    for t in range(L + 1, 2 * L):  # confident and right on the second copy's induction targets
        logits[0, t, tokens[0, t + 1]] = 100.0
    losses = interp.half_losses_from_logits(logits, tokens, L)
    assert losses.first == pytest.approx(math.log(n_vocab))
    assert losses.second == pytest.approx(0.0, abs=1e-6)


def test_distinct_segments_and_copy_floor():
    batch = fixed_length_batch(64, 200, 30, seed=4)
    segment = batch.tokens[:, 1:31]
    assert all(len(set(row.tolist())) == 30 for row in segment)
    assert torch.equal(batch.tokens[:, 1:31], batch.tokens[:, 31:])
    assert interp.copy_floor(batch.tokens, 30) == interp.CopyFloor(0.0, 0.0)
    with pytest.raises(ValueError, match="distinct"):
        fixed_length_batch(8, 2, 8)
    # by hand: r = (5, 6, 5, 7); the copy's queries at t = 5, 6, 7 hold 5, 6, 5. Token 5 occurs
    # twice in r, with successors 6 and 7: ln 2 at t = 5 and at t = 7; token 6 is unique.
    tokens = torch.tensor([[BOS, 5, 6, 5, 7, 5, 6, 5, 7]])
    floor = interp.copy_floor(tokens, 4)
    assert floor.ambiguous == pytest.approx(2 / 3)
    assert floor.loss == pytest.approx(2 * math.log(2) / 3)
    # with replacement, P(r_i occurs again among the other L - 1 tokens) = 1 - (1 - 1/63)^(L-1)
    repeats = fixed_length_batch(64, 400, 16, seed=2, distinct=False).tokens
    assert interp.copy_floor(repeats, 16).ambiguous == pytest.approx(1 - (62 / 63) ** 15, abs=0.02)


def test_composition_patch_reproduces_clean_and_ablated_attention(model):
    tokens = repeated_batch(16, 3, 5, 5, seed=3).tokens
    means = interp.mean_head_outputs(model, tokens)
    clean = interp.composition_patch(model, tokens, (0, 0), [], layer=1, means=means)
    torch.testing.assert_close(clean.logits, model(tokens).detach())
    with interp.ablate(model, (0, 0), "mean", means=means):
        ablated = interp.capture(model, tokens)
    both = interp.composition_patch(model, tokens, (0, 0), ["queries", "keys"], layer=1,
                                    means=means)
    torch.testing.assert_close(both.weights, ablated.weights[1])
    # all three inputs patched = the full ablation minus the head's direct path to the logits
    everything = interp.composition_patch(model, tokens, (0, 0), ["queries", "keys", "values"],
                                          layer=1, means=means)
    torch.testing.assert_close(everything.head_outputs, ablated.head_outputs[1])
    direct = interp.capture(model, tokens)
    keys = interp.composition_patch(model, tokens, (0, 0), ["keys"], layer=1, means=means)
    assert not torch.allclose(keys.weights, direct.weights[1])
    values = interp.composition_patch(model, tokens, (0, 0), ["values"], layer=1, means=means)
    torch.testing.assert_close(values.weights, direct.weights[1])  # values never move weights
    with pytest.raises(ValueError, match="layers before layer 1"):
        interp.composition_patch(model, tokens, (1, 0), ["keys"], layer=1, means=means)
    with pytest.raises(ValueError, match="'queries', 'keys' and 'values'"):
        interp.composition_patch(model, tokens, (0, 0), ["key"], layer=1, means=means)


def test_token_losses_and_icl_score(model):
    tokens = repeated_batch(16, 4, 5, 5, seed=5).tokens
    losses = interp.token_losses(model, tokens)
    assert losses.shape == (10,)
    logits = model(tokens[:, :-1])
    by_hand = F.cross_entropy(logits[:, 6], tokens[:, 7])  # the loss at token 7
    torch.testing.assert_close(losses[6], by_hand.detach())
    assert interp.icl_score(losses, 7, 2) == pytest.approx(float(losses[6] - losses[1]))
    with pytest.raises(ValueError, match="early < late"):
        interp.icl_score(losses, 2, 7)
