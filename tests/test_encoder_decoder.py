"""tformer.encoder_decoder and tformer.data.sorting: wiring, masks, gradients, the trained sorter."""

import pytest
import torch

from tformer import seed_rates
from tformer.data.sorting import (
    BOS,
    EOS,
    N_VOCAB,
    decode_digits,
    encode_digits,
    sorting_batch,
    valid_next_tokens,
)
from tformer.encoder_decoder import EncoderDecoder, EncoderDecoderConfig, train_sorter
from tformer.generation import beam_search, generate, greedy_decode


def _model(seed=0, **overrides):
    torch.manual_seed(seed)
    settings = dict(n_vocab=N_VOCAB, n_ctx=16, d=16, n_layers=2, n_heads=2) | overrides
    return EncoderDecoder(EncoderDecoderConfig(**settings)).eval()


def test_sorting_batch_is_sorted_and_shifted():
    batch = sorting_batch(50, (3, 9), generator=torch.Generator().manual_seed(0))
    length = batch.source.shape[1]
    assert 3 <= length <= 9
    assert batch.target_in.shape == batch.target_out.shape == (50, length + 1)
    assert (batch.target_in[:, 0] == BOS).all() and (batch.target_out[:, -1] == EOS).all()
    assert torch.equal(batch.target_in[:, 1:], batch.target_out[:, :-1])  # shifted by one
    for source, out in zip(batch.source, batch.target_out):
        assert decode_digits(out) == "".join(sorted(decode_digits(source)))
    assert decode_digits(encode_digits("3071")) == "3071"
    again = sorting_batch(50, (3, 9), generator=torch.Generator().manual_seed(0))
    assert torch.equal(again.source, batch.source)


def _ids(text):  # "." is the end token
    return torch.tensor([[EOS if c == "." else int(c) + 2 for c in text]])


@pytest.mark.parametrize(
    "output, expected, live",
    [
        ("0137.", "0137.", 5),  # right: every position expects what the sorted target has
        ("037..", "017..", 4),  # 1 dropped: one error, then 7 and the end are right again
        ("0113.", "01337", 5),  # an extra 1 costs one error; the early end costs another
        ("1....", "03...", 2),  # 0 dropped, then the end too early; padding is not live
    ],
)
def test_valid_next_tokens_by_hand(output, expected, live):
    want, alive = valid_next_tokens(encode_digits("3071")[None], _ids(output))
    assert torch.equal(want, _ids(expected))
    assert alive[0].tolist() == [True] * live + [False] * (5 - live)


def test_valid_next_tokens_agree_with_the_target_on_a_correct_output():
    batch = sorting_batch(20, 6, generator=torch.Generator().manual_seed(3))
    want, alive = valid_next_tokens(batch.source, batch.target_out)
    assert torch.equal(want, batch.target_out) and alive.all()
    with pytest.raises(ValueError, match="outputs"):
        valid_next_tokens(batch.source, batch.target_out[0])


def test_sorting_batch_errors():
    with pytest.raises(ValueError, match="min_L"):
        sorting_batch(2, (5, 3))
    with pytest.raises(ValueError, match="batch_size"):
        sorting_batch(0, 4)
    with pytest.raises(ValueError, match="digits"):
        encode_digits("3a")


def test_shapes_and_cross_weights():
    model = _model()
    source, target = torch.randint(2, 12, (3, 7)), torch.randint(0, 12, (3, 5))
    logits = model(source, target)
    assert logits.shape == (3, 5, N_VOCAB)
    weights = model.cross_weights()
    assert len(weights) == 2 and all(w.shape == (3, 2, 5, 7) for w in weights)
    torch.testing.assert_close(weights[0].sum(-1), torch.ones(3, 2, 5))
    assert model.unembed.weight is model.embedding.weight  # tied W_U


def test_decoder_is_causal_and_reads_the_whole_source():
    model = _model(1)
    source, target = torch.randint(2, 12, (1, 6)), torch.randint(0, 12, (1, 5))
    with torch.no_grad():
        base = model(source, target)
        later = target.clone()
        later[0, 4] = (later[0, 4] + 1) % 12
        assert torch.equal(model(source, later)[0, :4], base[0, :4])
        edited = source.clone()
        edited[0, -1] = 2 + (edited[0, -1] - 1) % 10
        assert ((model(edited, target) - base)[0].abs().amax(-1) > 0).all()


def test_cut_cross_gradient_zeroes_exactly_the_encoders_gradient():
    model = _model(2).train()
    batch = sorting_batch(4, 5, generator=torch.Generator().manual_seed(1))

    def encoder_grads(cut):
        model.zero_grad()
        model.cut_cross_gradient = cut
        logits = model(*batch.inputs)
        torch.nn.functional.cross_entropy(logits.flatten(0, 1), batch.target_out.flatten()
                                          ).backward()
        model.cut_cross_gradient = False
        return logits.detach(), [p.grad for p in model.encoder.parameters()]

    intact_logits, intact = encoder_grads(False)
    cut_logits, cut = encoder_grads(True)
    torch.testing.assert_close(intact_logits, cut_logits)  # the forward pass is unchanged
    assert all(g is not None for g in intact) and sum(g.abs().sum() for g in intact) > 0
    assert all(g is None for g in cut)
    assert model.embedding.weight.grad is not None  # the shared embedding still learns


def test_conditioned_decoder_matches_the_full_model_and_generation():
    model = _model(3)
    source = torch.randint(2, 12, (1, 6))
    decoder = model.conditioned_on(source)
    target = torch.randint(0, 12, (4, 5))
    with torch.no_grad():
        torch.testing.assert_close(decoder(target), model(source.expand(4, -1), target))
    bos = torch.tensor([[BOS]])
    tokens = generate(decoder, bos, 7, temperature=0.0, use_cache=False)[0, 1:]
    free = greedy_decode(model, source, 7, bos_id=BOS, eos_id=EOS)[0]
    # identical until the first EOS (greedy_decode pads with EOS afterwards)
    stop = int((tokens == EOS).nonzero()[0]) + 1 if (tokens == EOS).any() else 7
    assert torch.equal(tokens[:stop], free[:stop])
    sequences, _ = beam_search(decoder, bos, 7, beam_width=1)
    assert torch.equal(sequences[0, 1:], tokens)


def test_errors():
    model = _model()
    with pytest.raises(ValueError, match="n_ctx"):
        model(torch.randint(2, 12, (1, 20)), torch.zeros(1, 2, dtype=torch.long))
    with pytest.raises(TypeError, match="integer"):
        model(torch.zeros(1, 3), torch.zeros(1, 2, dtype=torch.long))
    with pytest.raises(ValueError, match="divisible"):
        EncoderDecoderConfig(n_vocab=12, d=10, n_heads=3)
    with pytest.raises(ValueError, match="one source"):
        model.conditioned_on(torch.zeros(2, 3, dtype=torch.long))



@pytest.fixture
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny models: more threads only add contention
    yield
    torch.set_num_threads(threads)


# The claims chapters 9 and 10 state as general, measured by bench/sorter_seeds.py over ten seeds
# under each CPU kernel (src/tformer/data/bench/sorter.json); one seed's outcome is not a test.
ROBUST_CLAIMS = [
    "learns", "aligns", "example_most_rows_aligned", "blind_drops_30_points",
    "frozen_encoder_unchanged", "frozen_embedding_moves_10pc", "frozen_rows_own_token_95pc",
    "first_loss_above_uniform", "init_predicts_own_input", "free_mean_over_1p5x_forced",
    "free_over_forced_tenth", "free_tenth_over_2x_second", "first_position_agrees",
    "free_equals_forced_on_track",
    "greedy_wrong_mostly_short", "shift_tolerant_under_half_free",
    "shift_tolerant_under_2x_forced", "off_track_worse_than_forced", "repeats_5x_harder",
    "beam_example_sorted", "penalty_exact_ge_no_penalty", "beam_never_scores_below_greedy",
]


@pytest.mark.parametrize("claim", ROBUST_CLAIMS)
def test_the_chapters_general_claims_hold_for_every_seed_and_kernel(claim):
    rate = seed_rates.rate("sorter", claim)
    assert rate.everywhere, f"{claim}: {rate.describe()}"


def test_beam_versus_greedy_is_stated_as_seed_dependent():
    """Chapter 10 says the beam brings no systematic gain over greedy: not both rates 10/10."""
    exact = seed_rates.rate("sorter", "beam_exact_ge_greedy")
    bleu = seed_rates.rate("sorter", "beam_bleu_ge_greedy")
    assert not (exact.everywhere and bleu.everywhere)


@pytest.mark.slow
def test_the_cut_leaves_the_encoder_at_its_initial_weights(one_thread):
    """An invariant, for any seed and kernel: with the memory detached, no gradient reaches the
    encoder, so AdamW never moves it — while the shared embedding does train."""
    frozen, _ = train_sorter(3, n_steps=40, cut_cross_gradient=True)
    untrained, _ = train_sorter(3, n_steps=0)
    for part in ("encoder", "encoder_norm"):
        for a, b in zip(getattr(frozen, part).state_dict().values(),
                        getattr(untrained, part).state_dict().values()):
            assert torch.equal(a, b)
    assert not torch.equal(frozen.embedding.weight, untrained.embedding.weight)
