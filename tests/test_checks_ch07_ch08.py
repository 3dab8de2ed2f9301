"""Chapter 7 and 8 checkers: right answers pass, typical mistakes get a hint, nothing crashes.

Right answers are computed here from closed forms or with PyTorch's own modules
(``torch.nn.MultiheadAttention``, ``F.layer_norm``), independently of the checkers.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from tformer.checks import ch07, ch08

GARBAGE = ["text", [1, 2], {"a": 1}, float("nan"), object()]


def _status(checker, answer) -> str:
    return checker(answer).status


def _reference_mha(x, W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O, n_heads, mask=None):
    # The reader's function, written with torch's fused kernel instead of by hand.
    batch, n_positions, d = x.shape

    def split(t):
        return t.view(batch, n_positions, n_heads, d // n_heads).transpose(1, 2)

    heads = F.scaled_dot_product_attention(
        split(x @ W_Q + b_Q), split(x @ W_K + b_K), split(x @ W_V + b_V), attn_mask=mask
    )
    return heads.transpose(1, 2).reshape(batch, n_positions, d) @ W_O + b_O


def _layer(x, attention, mlp, norm1, norm2, kind):
    if kind == "pre":
        x = x + attention(norm1(x))
        return x + mlp(norm2(x))
    x = norm1(x + attention(x))
    return norm2(x + mlp(x))


RIGHT = [
    (ch07.ex1, {"d_k": 64, "Q": (8, 12, 1024, 64), "K": (8, 12, 1024, 64),
                "V": (8, 12, 1024, 64), "scores": (8, 12, 1024, 1024), "concat": (8, 1024, 768)}),
    (ch07.ex2, 8 * 12 * 1024 * 1024 * 4),
    (ch07.ex3, 4 * 512**2 + 4 * 512),
    (ch07.ex4, 4 * 1024 * 768**2 + 2 * 1024**2 * 768),
    (ch07.ex5, 2 * 80 * 8 * 128 * 4096 * 2),
    (ch07.ex6, _reference_mha),
    (ch08.ex1, 24 * (4 * 1024**2 + 3 * 1024 * 2816 + 2 * 1024)),
    (ch08.ex2, [-math.sqrt(2), 0.0, 0.5, math.sqrt(2) / 2]),
    (ch08.ex3, 0.8),
    (ch08.ex4, lambda x, gamma, beta, eps: F.layer_norm(x, x.shape[-1:], gamma, beta, eps)),
    (ch08.ex5, _layer),
    (ch08.ex6, 8 * (12 * 512**2 + 13 * 512) + 2 * 32_000 * 512 + 2 * 512),
    (ch08.ex8, {"mean": 0, "variance": 1, "never_fixed": [0, 0, 0, 5], "fixed": [1, -1, -1, 1]}),
    (ch08.ex7, 24 * (12 * 1024**2 + 2 * 1024 * 1024) + 50257 * 1024),
]
WRONG = [
    (ch07.ex2, 8 * 12 * 1024 * 1024, "score elements"),
    (ch07.ex3, 3 * 512**2 + 3 * 512, "output projection"),
    (ch07.ex4, 2 * (4 * 1024 * 768**2 + 2 * 1024**2 * 768), "FLOPs"),
    (ch07.ex5, 2 * 80 * 64 * 128 * 4096 * 2, "key/value heads"),
    (ch08.ex1, 24 * (12 * 1024**2 + 13 * 1024), "biases"),
    (ch08.ex2, [-math.sqrt(1.5), 0.0, 0.5, math.sqrt(1.5) / 2], "d − 1"),
    (ch08.ex6, 8 * (12 * 512**2 + 13 * 512) + 32_000 * 512 + 2 * 512, "untied"),
    (ch08.ex7, 354_823_168, "parameter count"),
]


@pytest.mark.parametrize(("checker", "answer"), RIGHT, ids=lambda v: getattr(v, "__name__", ""))
def test_right_answers_pass(checker, answer):
    assert _status(checker, answer) == "passed"


@pytest.mark.parametrize(("checker", "answer", "hint"), WRONG)
def test_typical_mistakes_get_their_hint(checker, answer, hint):
    verdict = checker(answer)
    assert verdict.status == "wrong"
    assert hint in verdict.message


@pytest.mark.parametrize("checker", [c for c, _ in RIGHT], ids=lambda c: c.exercise_id)
def test_missing_and_garbage_answers_never_crash(checker):
    assert _status(checker, None) == "not attempted"
    for answer in GARBAGE:
        assert _status(checker, answer) in ("wrong", "not attempted")


def test_multihead_checker_catches_an_ignored_mask_and_a_missing_bias():
    def no_mask(*args):
        return _reference_mha(*args[:-1], None)

    def no_bias(x, W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O, n_heads, mask=None):
        zero = torch.zeros_like(b_Q)
        return _reference_mha(x, W_Q, W_K, W_V, W_O, zero, zero, zero, zero, n_heads, mask)

    assert "ignores the mask" in ch07.ex6(no_mask).message
    assert ch07.ex6(no_bias).status == "wrong"


def test_layer_checkers_name_the_mistake():
    def swapped(x, attention, mlp, norm1, norm2, kind):
        return _layer(x, attention, mlp, norm1, norm2, "post" if kind == "pre" else "pre")

    def batch_norm(x, gamma, beta, eps):
        flat = x.reshape(-1, x.shape[-1])
        return F.batch_norm(flat, None, None, gamma, beta, training=True, eps=eps).reshape(x.shape)

    assert "swap" in ch08.ex5(swapped).message
    assert "batch norm" in ch08.ex4(batch_norm).message
    assert ch08.ex4(lambda x, gamma, beta, eps: 2 * x).status == "wrong"

    def no_gamma_beta(x, gamma, beta, eps):
        return F.layer_norm(x, x.shape[-1:], None, None, eps)

    assert "γ and β" in ch08.ex4(no_gamma_beta).message


# --- 07.7 – 07.9: one head by position, ablating a head, circuit ranks --------------------------


def _two_runs(predict):
    # the proof: if (0, 0) and (1, 0) are both answered right, (1, 1) is not
    if predict(0, 0) != 0:
        return (0, 0)
    if predict(1, 0) != 1:
        return (1, 0)
    return (1, 1)


def _two_runs_other_pair(predict):
    # (0, 0) and (1, 1) both answered 0: class 0 wins on [0, w1 + w2], so (1, 0) fails
    if predict(0, 0) != 0:
        return (0, 0)
    if predict(1, 1) != 0:
        return (1, 1)
    return (1, 0)


def test_one_head_checker_passes_the_proofs_and_rejects_every_guess_and_search():
    assert ch07.ex7(_two_runs).status == "passed"
    assert ch07.ex7(_two_runs_other_pair).status == "passed"
    for a in range(4):
        for b in range(4):
            assert ch07.ex7(lambda predict, a=a, b=b: (a, b)).status == "wrong", (a, b)

    def search(predict):
        return next(((a, b) for a in range(4) for b in range(4) if predict(a, b) != a - b), (0, 0))

    assert "at most twice" in ch07.ex7(search).message
    assert "not a difference" in ch07.ex7(lambda predict: predict(0, 0)).message


def test_the_one_head_models_are_position_only_and_each_fails_on_the_binary_square():
    """The proof holds for the checker's models: weights ≥ 0, one value map, and among the four
    inputs with digits 0 and 1 at least one is answered wrongly."""
    for model in ch07._one_head_models():
        assert min(model.w) >= 0 and model.U.shape == (4, 7) and model.c.shape == (7,)
        logits = {(a, b): model.c + model.w[0] * model.U[a] + model.w[1] * model.U[b]
                  for a in (0, 1) for b in (0, 1)}
        wrong = [(a, b) for (a, b), row in logits.items() if int(row.argmax()) - 3 != a - b]
        assert wrong, model.label


def _random_two_head_model(seed):
    from tformer import two_reads

    model = two_reads.make_model(2, seed=seed).eval()
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.copy_(0.6 * torch.randn(parameter.shape, generator=generator))
    return model


def _ablate_with_interp(model, head):
    # the reader's function, written with tformer.interp.ablate (a hook on the heads' outputs)
    from tformer import interp, two_reads

    with interp.ablate(model, (0, head)):
        return two_reads.accuracy(model)


def test_ablation_checker_recomputes_on_the_readers_model():
    from tformer import two_reads

    model = _random_two_head_model(11)
    before = {key: value.clone() for key, value in model.state_dict().items()}
    accuracies = [_ablate_with_interp(model, head) for head in (0, 1)]
    worse = int(accuracies[1] < accuracies[0])
    assert accuracies[0] != accuracies[1]
    rng = torch.random.get_rng_state()
    assert ch07.ex8(_ablate_with_interp, model, worse).status == "passed"
    assert torch.equal(torch.random.get_rng_state(), rng)  # the reader's RNG is left alone
    verdict = ch07.ex8(_ablate_with_interp, model, 1 - worse)
    assert verdict.status == "wrong" and "hurts more" in verdict.message
    assert f"{round(accuracies[0] * 3072):,}" in verdict.message
    assert "counted from 0" in ch07.ex8(_ablate_with_interp, model, 2).message
    assert ch07.ex8(_ablate_with_interp).status == "not attempted"  # no model yet
    assert ch07.ex8(_ablate_with_interp, model).status == "not attempted"  # no worse yet
    assert ch07.ex8(_ablate_with_interp, "my model", 0).status == "wrong"
    assert "two heads" in ch07.ex8(_ablate_with_interp, two_reads.make_model(4), 0).message
    assert all(torch.equal(before[key], value) for key, value in model.state_dict().items())


def test_ablation_checker_accepts_either_head_when_the_ablations_tie():
    model = _random_two_head_model(12)
    with torch.no_grad():
        model.blocks[0].attn.W_O.weight.zero_()  # no head writes anything: both ablations tie
    assert ch07.ex8(_ablate_with_interp, model, 0).status == "passed"
    assert ch07.ex8(_ablate_with_interp, model, 1).status == "passed"


def test_ablation_checker_restores_a_model_left_ablated():
    model = _random_two_head_model(13)
    before = {key: value.clone() for key, value in model.state_dict().items()}

    def in_place(model, head):
        from tformer import two_reads

        attn = model.blocks[0].attn
        with torch.no_grad():
            attn.W_O.weight[:, head * attn.d_k:(head + 1) * attn.d_k] = 0.0
        return two_reads.accuracy(model)

    verdict = ch07.ex8(in_place, model, 0)
    assert verdict.status == "wrong" and "restored" in verdict.message
    assert all(torch.equal(before[key], value) for key, value in model.state_dict().items())


def _qk(layer, i):
    g = i // (layer.n_heads // layer.n_kv_heads)
    q, k = slice(i * layer.d_k, (i + 1) * layer.d_k), slice(g * layer.d_k, (g + 1) * layer.d_k)
    return layer.W_Q.weight[q].T @ layer.W_K.weight[k]  # nn.Linear stores (out, in)


def _ov(layer, i):
    g = i // (layer.n_heads // layer.n_kv_heads)
    q, k = slice(i * layer.d_k, (i + 1) * layer.d_k), slice(g * layer.d_k, (g + 1) * layer.d_k)
    return layer.W_V.weight[k].T @ layer.W_O.weight[:, q].T


def _rank(matrix):
    values = torch.linalg.svdvals(matrix.double())
    return int((values > 1e-5 * values.max()).sum()) if values.numel() and values.max() > 0 else 0


# the bounds, which generic weights attain: d_k = 16; 2 d_k; min(d, h d_k); GQA: d_k, h_kv d_k
RANKS = {"qk": [16] * 4, "ov": [16] * 4, "ov_pair": 32, "ov_layer": 64, "gqa_ov_pair": 16,
         "gqa_ov_layer": 32}


def test_circuit_rank_checker_passes_an_independent_solution_and_names_mistakes():
    from tformer.multihead import MultiHeadAttention

    torch.manual_seed(0)
    layer, gqa = MultiHeadAttention(64, 4), MultiHeadAttention(64, 4, n_kv_heads=2)
    with torch.no_grad():
        computed = {
            "qk": [_rank(_qk(layer, i)) for i in range(4)],
            "ov": [_rank(_ov(layer, i)) for i in range(4)],
            "ov_pair": _rank(_ov(layer, 0) + _ov(layer, 1)),
            "ov_layer": _rank(sum(_ov(layer, i) for i in range(4))),
            "gqa_ov_pair": _rank(_ov(gqa, 0) + _ov(gqa, 1)),
            "gqa_ov_layer": _rank(sum(_ov(gqa, i) for i in range(4))),
        }
    assert computed == RANKS
    assert ch07.ex9(RANKS, _qk, _ov, _rank).status == "passed"
    assert ch07.ex9(RANKS).status == "not attempted"  # the functions are needed too

    def no_transpose_h1(layer, i):
        return layer.W_Q.weight.T @ layer.W_K.weight.T if layer.n_heads == 1 else _qk(layer, i)

    assert "without the transpose" in ch07.ex9(RANKS, no_transpose_h1, _ov, _rank).message
    scaled = ch07.ex9(RANKS, lambda layer, i: _qk(layer, i) / math.sqrt(layer.d_k), _ov, _rank)
    assert "divided by √d_k" in scaled.message
    assert "Python int" in ch07.ex9(RANKS, _qk, _ov, lambda m: float(_rank(m))).message
    assert "int(...)" in ch07.ex9(dict(RANKS, ov_layer=torch.tensor(64)), _qk, _ov, _rank).message
    assert "at most 32" in ch07.ex9(dict(RANKS, ov_pair=64), _qk, _ov, _rank).message


@pytest.mark.parametrize("checker", [ch07.ex7, ch07.ex8, ch07.ex9], ids=lambda c: c.exercise_id)
def test_new_checkers_never_crash_on_garbage(checker):
    assert _status(checker, None) == "not attempted"
    for answer in GARBAGE + [print, lambda *args: None, lambda *args: (9, 9)]:
        assert _status(checker, answer) in ("wrong", "not attempted")
    if checker is ch07.ex8:
        for model in GARBAGE:
            assert checker(_ablate_with_interp, model, 0).status in ("wrong", "not attempted")
    if checker is ch07.ex9:
        for function in GARBAGE + [print]:
            assert checker(RANKS, function, function, function).status in ("wrong", "not attempted")
