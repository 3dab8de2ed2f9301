"""Checkers for chapter 8, *The Transformer layer, and counting GPT-2*.

Expected values come from closed forms, ``torch.nn.functional.layer_norm`` and
``torch.nn.LayerNorm``, never from :mod:`tformer.layers` or :mod:`tformer.model`, the code the
chapter studies. (The attention and MLP branches of exercise 08.5 are ``tformer`` modules, but the
checker only calls them; the layer arithmetic around them is computed here.)
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from tformer.checks.core import (
    Mistake,
    Wrong,
    as_number,
    call_reader,
    exercise,
    expect_number,
    expect_tensor,
    shown,
)

N_VOCAB, N_CTX = 50257, 1024


def _expect_close(result, expected: torch.Tensor, *, name: str, axes, atol: float, rtol: float):
    """``expect_tensor``, with a plain hint for same-shape answers whose values differ (the core
    helper's transpose test needs the last two axes to be square)."""
    if isinstance(result, torch.Tensor) and result.shape == expected.shape:
        value = result.detach().to(torch.float64)
        if not torch.isnan(value).any() and not torch.allclose(value, expected, atol=atol,
                                                               rtol=rtol):
            worst = (value - expected).abs().flatten().argmax()
            index = tuple(int(i) for i in torch.unravel_index(worst, expected.shape))
            raise Wrong(
                f"{name} differs from the expected values; the largest difference is at index "
                f"{index}: {float(value[index]):.4g} instead of {float(expected[index]):.4g}"
            )
    expect_tensor(result, expected, name=name, axes=axes, atol=atol, rtol=rtol)


def _name_count(value: float, variants) -> None:
    """Raise the hint of the first typical wrong count (``(count, hint)`` pairs, computed from
    the exercise's own numbers) that ``value`` equals. No variant equals the right count."""
    if not math.isfinite(value):
        return
    for wrong, hint in variants:
        if math.isclose(value, wrong, rel_tol=1e-9):
            raise Wrong(hint)


def _as_float64(result):
    """The reader's result as a float64 tensor, or ``None`` if it is not numbers."""
    try:
        return torch.as_tensor(result, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError):
        return None


def _block(d: int) -> int:
    return 12 * d * d + 13 * d


D_LLAMA, FF_LLAMA, LAYERS_LLAMA = 1024, 2816, 24


def _llama_layer(d: int = D_LLAMA, d_ff: int = FF_LLAMA) -> int:
    return 4 * d * d + 3 * d * d_ff + 2 * d


@exercise("08.1", "Twenty-four LLaMA-style layers at d = 1,024")
def ex1(answer) -> None:
    """``answer``: parameters in 24 layers with RMSNorm, SwiGLU (d_ff = 2,816), no biases."""
    d, d_ff, n = D_LLAMA, FF_LLAMA, LAYERS_LLAMA
    expected = n * _llama_layer()
    value = as_number(answer, name="the parameter count")  # a tensor would make == ambiguous
    _name_count(value, (
        (n * _block(d), "that is GPT-2's layer, 12d² + 13d: this layer has no biases, RMSNorm "
         "and a SwiGLU MLP"),
        (n * (4 * d * d + 2 * d * d_ff + 2 * d), "SwiGLU has three d × d_ff matrices (gate, up, "
         "down), not two"),
        (n * (4 * d * d + 3 * d * d_ff + 4 * d), "RMSNorm has no β: d parameters per norm, 2d "
         "per layer"),
        (n * (4 * d * d + 3 * d * d_ff), "the two RMSNorms of each layer have d parameters (γ) "
         "each"),
        (_llama_layer(), "that is one layer; the stack has 24"),
        (n * (4 * d * d + 3 * d * d_ff + d), "each layer has two RMSNorms, one before each "
         "branch: 2d per layer"),
        (n * (3 * d * d + 3 * d * d_ff + 2 * d), "that counts three of the four attention "
         "matrices: W_Q, W_K, W_V and W_O make 4d²"),
        (n * (4 * d * d + 3 * d * 4 * d + 2 * d), "d_ff is 2,816 here, not 4d"),
        (n * (4 * d * d + 4 * d + 3 * d * d_ff + 2 * d), "there are no biases anywhere: the "
         "attention projections have none either"),
    ))
    expect_number(answer, expected, name="the parameter count", integer=True)


LN_INPUT = (2.0, 4.0, 4.0, 6.0)
LN_GAMMA = (1.0, 1.0, 1.0, 0.5)
LN_BETA = (0.0, 0.0, 0.5, 0.0)


@exercise("08.2", "LayerNorm of one token by hand")
def ex2(answer) -> None:
    """``answer``: LayerNorm of x = (2, 4, 4, 6) with γ = (1, 1, 1, 0.5), β = (0, 0, 0.5, 0)."""
    x = torch.tensor(LN_INPUT, dtype=torch.float64)
    gamma = torch.tensor(LN_GAMMA, dtype=torch.float64)
    beta = torch.tensor(LN_BETA, dtype=torch.float64)
    expected = F.layer_norm(x, (4,), gamma, beta, eps=0.0)
    std = x.std(unbiased=False)
    standardised = (x - x.mean()) / std
    value = _as_float64(answer)
    if value is not None and value.shape == expected.shape and not torch.allclose(
        value, expected, atol=2e-3
    ):
        for wrong, hint in (
            (gamma * (x - x.mean()) / x.std(unbiased=True) + beta,
             "you divided the variance by d − 1; LayerNorm divides by d"),
            (standardised, "that is the normalised vector before γ and β; apply them too"),
            (gamma * (x - x.mean()) / x.var(unbiased=False) + beta,
             "you divided by the variance; divide by its square root, the standard deviation"),
            (gamma * standardised, "you applied γ but not β: add β = (0, 0, 0.5, 0) after the "
             "scaling"),
            (standardised + beta, "you added β but did not multiply by γ = (1, 1, 1, 0.5) "
             "first"),
            (beta * standardised + gamma, "γ and β are swapped: γ multiplies the standardised "
             "vector, β is added"),
            (gamma * x / std + beta, "you divided x by its standard deviation without "
             "subtracting the mean 4 first"),
        ):
            if torch.allclose(value, wrong, atol=2e-3):
                raise Wrong(hint)
    expect_tensor(answer, expected, name="your output", axes=("features",), atol=2e-3, rtol=0,
                  rounding_tol=1e-2)


@exercise("08.3", "What ε does to a quiet token")
def ex3(answer) -> None:
    """``answer``: mean square of LayerNorm's output (before γ, β) at v = 4·10⁻⁵, ε = 10⁻⁵."""
    v, eps = 4e-5, 1e-5
    expected = v / (v + eps)
    value = as_number(answer, name="the mean square")
    for wrong, hint in (
        (1.0, "1 would hold with ε = 0; here v is only four times ε"),
        (math.sqrt(expected), "that is the root mean square √(v/(v + ε)); the question asks "
         "for the mean square"),
        (eps / (v + eps), "that is ε/(v + ε), how much is lost; the mean square is v/(v + ε)"),
        ((v + eps) / v, "that is (v + ε)/v, upside down: ε enlarges the denominator, so the "
         "mean square v/(v + ε) is below 1"),
        (v / (math.sqrt(v) + eps) ** 2, "that puts ε outside the square root, dividing by "
         "√v + ε; LayerNorm divides by √(v + ε), so the mean square is v/(v + ε)"),
        (v / eps, "that is v/ε; ε is added to v in the denominator: v/(v + ε)"),
        (eps / v, "that is ε/v; the mean square is v/(v + ε)"),
    ):
        if math.isfinite(value) and math.isclose(value, wrong, rel_tol=1e-3):
            raise Wrong(hint)
    expect_number(answer, expected, name="the mean square", rel_tol=1e-3, rounding_tol=0.02)


def _layer_norm_variants(x, gamma, beta, eps):
    """``(wrong output, hint)`` for the typical wrong LayerNorms of ``x`` (float64)."""
    mean = x.mean(-1, keepdim=True)
    biased = x.var(-1, keepdim=True, unbiased=False)
    centred = x - mean
    yield (gamma * centred / torch.sqrt(x.var(-1, keepdim=True, unbiased=True) + eps) + beta,
           "you used the unbiased variance (d − 1); LayerNorm divides by d")
    yield (gamma * centred / (biased + eps) + beta,
           "you divided by the variance; divide by sqrt(variance + eps)")
    yield (centred / torch.sqrt(biased + eps),
           "you standardised but left out γ and β: return "
           "gamma * (x − mean) / sqrt(variance + eps) + beta")
    yield (gamma * centred / torch.sqrt(biased + eps),
           "you left out β: return gamma * (x − mean) / sqrt(variance + eps) + beta")
    d = x.shape[-1]
    yield (F.batch_norm(x.reshape(-1, d), None, None, gamma, beta, training=True,
                        eps=eps).reshape(x.shape),
           "you normalised each feature across the tokens (batch norm); normalise each token "
           "across its features (dim=-1)")
    for axis in range(x.dim() - 1):
        m = x.mean(axis, keepdim=True)
        s = x.var(axis, keepdim=True, unbiased=False)
        yield (gamma * (x - m) / torch.sqrt(s + eps) + beta,
               f"you normalised over axis {axis} (dim={axis}); normalise each token over the "
               "last axis, dim=-1, whatever the number of axes")
    yield (gamma * (x - x.mean()) / torch.sqrt(x.var(unbiased=False) + eps) + beta,
           "you used one mean and variance for the whole tensor; each token needs its own, "
           "over its last axis (dim=-1, keepdim=True)")
    yield (gamma * centred / (torch.sqrt(biased) + eps) + beta,
           "you added eps to the standard deviation; add it to the variance, under the square "
           "root: sqrt(variance + eps)")
    for fixed in (1e-5, 1e-6, 1e-12, 0.0) if eps > 1e-3 else ():  # only a large eps shows
        if fixed != eps:
            yield (gamma * centred / torch.sqrt(biased + fixed) + beta,
                   f"with eps = {eps:g} your layer_norm gave the result of eps = {fixed:g}: use "
                   "the eps argument it is given, not a constant")
    if x.shape[-1] == x.shape[-2]:  # the statistics broadcast along the wrong axis
        flat_mean = x.mean(-1)
        for variance in (x.var(-1, unbiased=False), ((x - flat_mean) ** 2).mean(-1)):
            yield (gamma * (x - flat_mean) / torch.sqrt(variance + eps) + beta,
                   "the mean and the variance lost their last axis: use keepdim=True, so that "
                   "each token's statistics broadcast over its own features")


@exercise("08.4", "Implement LayerNorm")
def ex4(answer) -> None:
    """``answer``: a function ``layer_norm(x, gamma, beta, eps)`` normalising the last axis.

    Compared with ``F.layer_norm`` on two to four axes (a square matrix first, so statistics
    without ``keepdim`` broadcast instead of failing), and on quiet tokens with a large ``eps``,
    so that an ignored ``eps`` or one added outside the square root shows.
    """
    generator = torch.Generator().manual_seed(8)
    for shape, eps, scale in (((6, 6), 1e-5, 3.0), ((5, 8), 1e-5, 3.0), ((3, 4, 16), 1e-5, 3.0),
                              ((2, 3, 5, 6), 1e-5, 3.0), ((4, 3, 8), 0.5, 0.5)):
        d = shape[-1]
        x = scale * torch.randn(*shape, generator=generator, dtype=torch.float64) + 1
        gamma = torch.rand(d, generator=generator, dtype=torch.float64) + 0.5
        beta = torch.randn(d, generator=generator, dtype=torch.float64)
        expected = F.layer_norm(x, (d,), gamma, beta, eps=eps)
        result = call_reader(answer, x.clone(), gamma, beta, eps, name="your layer_norm")
        value = _as_float64(result)  # a malformed result gets its hint from _expect_close below
        if value is not None and value.shape == expected.shape and not torch.allclose(
            value, expected, atol=1e-6, rtol=1e-5
        ):
            for wrong, hint in _layer_norm_variants(x, gamma, beta, eps):
                if torch.allclose(value, wrong, atol=1e-6, rtol=1e-5):
                    raise Wrong(hint)
        _expect_close(result, expected, name=f"your layer_norm on shape {shape}, eps = {eps:g}",
                      axes=None, atol=1e-6, rtol=1e-5)
    # The batch must not matter (source 001's question): change the other samples.
    x = torch.randn(4, 3, 8, generator=generator, dtype=torch.float64)
    gamma, beta = torch.ones(8, dtype=torch.float64), torch.zeros(8, dtype=torch.float64)
    first = call_reader(answer, x, gamma, beta, 1e-5, name="your layer_norm")
    changed = x.clone()
    changed[1:] = 50 * torch.randn(3, 3, 8, generator=generator, dtype=torch.float64)
    second = call_reader(answer, changed, gamma, beta, 1e-5, name="your layer_norm")
    try:
        unchanged = torch.allclose(torch.as_tensor(first)[0], torch.as_tensor(second)[0],
                                   atol=1e-12)
    except (TypeError, ValueError, RuntimeError, IndexError):
        raise Wrong("your layer_norm should return a tensor shaped like its input") from None
    if not unchanged:
        raise Wrong("sample 0's output changed when the other samples changed; "
                    "LayerNorm must use each token's own statistics only")


def _layer_reference(x, attention, mlp, norm1, norm2, kind):
    if kind == "pre":
        x = x + attention(norm1(x))
        return x + mlp(norm2(x))
    x = norm1(x + attention(x))
    return norm2(x + mlp(x))


def _layer_variants(x, attention, mlp, norm1, norm2, kind):
    """``(wrong layer output, hint)`` for the typical wrong layers of ``kind``."""
    other = "post" if kind == "pre" else "pre"
    yield (_layer_reference(x, attention, mlp, norm1, norm2, other),
           f"kind={kind!r} computed the {other}-norm layer; swap them")
    yield (_no_residual_layer(x, attention, mlp, norm1, norm2, kind),
           f"kind={kind!r}: the residual additions x + … are missing")
    yield (_layer_reference(x, attention, mlp, norm2, norm1, kind),
           f"kind={kind!r}: norm1 and norm2 are swapped; norm1 belongs to the attention "
           "branch, norm2 to the MLP")
    after = x + norm1(attention(x))
    if kind == "pre":
        stream = norm1(x)
        stream = stream + attention(stream)
        yield (norm2(stream) + mlp(norm2(stream)),
               "kind='pre': the branch was added to the normalised x; add it to x itself, "
               "x + attention(norm1(x)), so that the residual stream is never normalised")
        yield (x + attention(norm1(x)) + mlp(norm2(x)),
               "kind='pre': the MLP read the layer's input x; it must read the stream after "
               "the attention branch, x + attention(norm1(x))")
        yield (after + norm2(mlp(after)),
               "kind='pre': you normalised each branch's output; pre-norm normalises its "
               "input, x + attention(norm1(x))")
    else:
        yield (after + norm2(mlp(after)),
               "kind='post': you normalised the branch output before adding it; post-norm "
               "normalises the sum, norm1(x + attention(x))")
        stream = norm1(x + attention(x))
        yield (norm2(stream + mlp(x)),
               "kind='post': the MLP read the layer's input x; it must read the stream after "
               "the attention sub-layer, norm1(x + attention(x))")


@exercise("08.5", "A pre-norm and a post-norm layer")
def ex5(answer) -> None:
    """``answer``: ``transformer_layer(x, attention, mlp, norm1, norm2, kind)``, kind "pre"/"post"."""
    from tformer.layers import MLP
    from tformer.multihead import MultiHeadAttention

    torch.manual_seed(5)
    d = 16
    attention_module = MultiHeadAttention(d, 4, causal=True).double()
    mlp = MLP(d).double()
    norm1, norm2 = torch.nn.LayerNorm(d).double(), torch.nn.LayerNorm(d).double()
    with torch.no_grad():  # distinct γ and β, so that swapped norms show
        for norm in (norm1, norm2):
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.uniform_(-0.5, 0.5)

    def attention(x):
        return attention_module(x).outputs

    x = 2 * torch.randn(2, 6, d, dtype=torch.float64) + 1
    with torch.no_grad():
        for kind in ("pre", "post"):
            expected = _layer_reference(x, attention, mlp, norm1, norm2, kind)
            result = call_reader(answer, x.clone(), attention, mlp, norm1, norm2, kind,
                                 name="your transformer_layer")
            if (isinstance(result, torch.Tensor) and result.shape == x.shape
                    and not torch.allclose(result.to(x.dtype), expected, atol=1e-8, rtol=1e-6)):
                for wrong, hint in _layer_variants(x, attention, mlp, norm1, norm2, kind):
                    if torch.allclose(result.to(x.dtype), wrong, atol=1e-8, rtol=1e-6):
                        raise Wrong(hint)
            _expect_close(result, expected, name=f"your {kind}-norm layer",
                          axes=("batch", "positions", "features"), atol=1e-8, rtol=1e-6)


UNTIED = {"d": 512, "n_layers": 8, "n_vocab": 32_000, "n_ctx": 2_048}


def _untied_total() -> int:
    d, n_layers, n_vocab = UNTIED["d"], UNTIED["n_layers"], UNTIED["n_vocab"]
    return n_layers * _block(d) + 2 * n_vocab * d + 2 * d


@exercise("08.6", "An untied model with rotary positions")
def ex6(answer) -> None:
    """``answer``: parameters of a pre-norm GPT with d = 512, 8 layers, n_vocab = 32,000,
    a context of 2,048 with RoPE (no position table) and an untied output layer without bias."""
    d, n_layers, n_vocab, n_ctx = UNTIED["d"], UNTIED["n_layers"], UNTIED["n_vocab"], UNTIED["n_ctx"]
    expected = _untied_total()
    value = as_number(answer, name="the parameter count")  # a tensor would make == ambiguous
    _name_count(value, (
        (expected - n_vocab * d, "the output layer is untied here: its n_vocab × d matrix is a "
         "second table"),
        (expected + n_ctx * d, "RoPE rotates queries and keys and has no parameters: no "
         "position table"),
        (expected - 2 * d, "the final LayerNorm after the last layer has 2d parameters"),
        (expected + n_vocab, "the output layer has no bias here"),
        (n_layers * _block(d), "that is the 8 layers only; add the embedding and the output "
         "layer"),
        (_block(d) + 2 * n_vocab * d + 2 * d, "that counts one layer; the model has 8"),
        (expected - n_layers * 13 * d, "each layer has 12d² + 13d parameters: the 13d are its "
         "biases and LayerNorms"),
    ))
    expect_number(answer, expected, name="the parameter count", integer=True)


@exercise("08.7", "Multiply-adds per token of GPT-2 medium")
def ex7(answer) -> None:
    """``answer``: forward multiply-adds per token of GPT-2 medium at a context of N = 1,024."""
    d, n_layers, n_context = 1024, 24, 1024
    weights = n_layers * 12 * d * d + N_VOCAB * d
    attention = n_layers * 2 * n_context * d
    expected = weights + attention
    value = as_number(answer, name="the multiply-add count")  # a tensor would make == ambiguous
    _name_count(value, (
        (weights, "add the attention term: 2·T·d per layer (scores and mixing)"),
        (weights - N_VOCAB * d + attention, "the output layer multiplies every final vector by "
         "the n_vocab × d matrix too, even though its parameters are tied"),
        (2 * expected, "that is in FLOPs; count multiply-adds"),
        (354_823_168, "that is the parameter count (exercise 08.6); count one multiply-add per "
         "weight-matrix entry, the tied output layer included but not the position table, plus "
         "2·T·d per layer"),  # GPT-2 medium's parameters
        (expected - attention // 2, "the attention term is 2·T·d per layer: the last token's "
         "scores (T·d) and its weighted sum of the values (another T·d)"),
        (weights + attention * n_context, "that counts the attention of all T queries, "
         "2·T²·d per layer; the last token's query alone costs 2·T·d"),
        (expected + N_CTX * d, "the position table is a look-up, not a matrix product: it "
         "costs no multiply-adds"),
        (expected + N_VOCAB * d, "the token embedding is a look-up and costs nothing; only the "
         "output layer's n_vocab × d product counts, once"),
        (expected + n_layers * 13 * d, "that counts the biases and LayerNorm parameters (13d "
         "per layer) too; they are not weight-matrix entries"),
        (expected - n_layers * 8 * d * d, "the MLP's two d × 4d matrices add 8d² per layer"),
        (expected - n_layers * 4 * d * d, "the attention's four d × d projections add 4d² per "
         "layer"),
    ))
    if (math.isfinite(value) and value != expected and value % 100_000 == 0
            and abs(value - expected) < 0.01 * expected):
        raise Wrong(f"{shown(value)} is the count rounded; give the exact integer")
    expect_number(answer, expected, name="the multiply-add count", integer=True)


POST_D = 4


@exercise("08.8", "A post-norm layer cannot be the identity")
def ex8(answer) -> None:
    """``answer``: dict with ``"mean"`` and ``"variance"`` (biased) of every row of LN's output
    (γ = 1, β = 0, ε = 0), ``"never_fixed"``: an x ∈ ℝ⁴ that no post-norm layer returns
    unchanged, and ``"fixed"``: an x ∈ ℝ⁴ that the layer with silent branches returns unchanged."""
    if not isinstance(answer, dict) or not {"mean", "variance", "never_fixed", "fixed"} <= set(
        answer
    ):
        raise Wrong('answer should be a dict with keys "mean", "variance", "never_fixed", '
                    '"fixed"')
    mean = as_number(answer["mean"], name="the mean")
    variance = as_number(answer["variance"], name="the variance")
    if math.isclose(variance, POST_D / (POST_D - 1), rel_tol=1e-3):
        raise Wrong("that is the variance divided by d − 1; LayerNorm's output has biased "
                    "variance exactly 1")
    if math.isclose(variance, POST_D, rel_tol=1e-6):
        raise Wrong("that is the sum of squares Σ yᵢ² = d = 4 of an output row; the variance "
                    "divides it by d: 1")
    expect_number(mean, 0.0, name="the mean of every output row", abs_tol=1e-6)
    expect_number(variance, 1.0, name="the (biased) variance of every output row", rel_tol=1e-6)
    vectors = {}
    for key in ("never_fixed", "fixed"):
        try:
            vector = torch.as_tensor(answer[key], dtype=torch.float64).flatten()
        except (TypeError, ValueError, RuntimeError):
            raise Wrong(f'answer["{key}"] should be a vector of {POST_D} numbers') from None
        if vector.numel() != POST_D or not torch.isfinite(vector).all():
            raise Wrong(f'answer["{key}"] should be a vector of {POST_D} finite numbers')
        vectors[key] = vector

    def stats(v):
        return float(v.mean()), float(v.var(unbiased=False)), float(v.var(unbiased=True))

    m, v_biased, v_unbiased = stats(vectors["never_fixed"])
    if abs(m) < 1e-6 and abs(v_biased - 1) < 1e-6:
        raise Wrong('answer["never_fixed"] has mean 0 and variance 1: the layer with silent '
                    "branches (f = 0) returns it unchanged, LN(x + 0) = x")
    # the numerical check: for this x, LN(x + f(x)) over many branch outputs never equals x
    generator = torch.Generator().manual_seed(8)
    x = vectors["never_fixed"]
    for _ in range(200):
        branch = torch.randn(POST_D, generator=generator, dtype=torch.float64) * 3
        out = F.layer_norm((x + branch)[None], (POST_D,), eps=0.0)[0]
        if torch.allclose(out, x, atol=1e-9):  # cannot happen: out has mean 0, variance 1
            raise Wrong('answer["never_fixed"] was returned unchanged by a post-norm layer')
    m, v_biased, v_unbiased = stats(vectors["fixed"])
    if not vectors["fixed"].any():
        raise Wrong('answer["fixed"] is the zero vector: with ε = 0, LN(0) = 0/0 is undefined '
                    "(NaN), and every output of LN has variance 1")
    if abs(m) < 1e-6 and abs(v_unbiased - 1) < 1e-6:
        raise Wrong('answer["fixed"] has variance 1 only when divided by d − 1; LayerNorm '
                    "divides by d")
    if abs(m) > 1e-6:
        raise Wrong('answer["fixed"] must have mean 0: LayerNorm\'s output always has')
    if abs(v_biased - 1) > 1e-6:
        raise Wrong(f'answer["fixed"] has mean 0 but variance {v_biased:.4g}: LN rescales it '
                    "to variance 1, so LN(x) ≠ x; a fixed point needs mean 0 and (biased) "
                    "variance 1")
    out = F.layer_norm(vectors["fixed"][None], (POST_D,), eps=0.0)[0]
    if not torch.allclose(out, vectors["fixed"], atol=1e-6):
        raise Wrong('answer["fixed"] must have (biased) variance 1, or LN(x) ≠ x')


def _layer_norm_unbiased(x, gamma, beta, eps=1e-5):
    mean = x.mean(-1, keepdim=True)
    return gamma * (x - mean) / torch.sqrt(x.var(-1, keepdim=True, unbiased=True) + eps) + beta


def _layer_norm_no_affine(x, gamma, beta, eps=1e-5):
    return F.layer_norm(x, x.shape[-1:], eps=eps)


def _layer_norm_batch_axis(x, gamma, beta, eps=1e-5):
    flat = x.reshape(-1, x.shape[-1])
    return F.batch_norm(flat, None, None, gamma, beta, training=True, eps=eps).reshape(x.shape)


def _layer_norm_variance(x, gamma, beta, eps=1e-5):
    mean = x.mean(-1, keepdim=True)
    return gamma * (x - mean) / (x.var(-1, keepdim=True, unbiased=False) + eps) + beta


def _swapped_layer(x, attention, mlp, norm1, norm2, kind):
    return _layer_reference(x, attention, mlp, norm1, norm2, "post" if kind == "pre" else "pre")


def _no_residual_layer(x, attention, mlp, norm1, norm2, kind):
    if kind == "pre":
        return mlp(norm2(attention(norm1(x))))
    return norm2(mlp(norm1(attention(x))))


def _layer_norm_eps_outside(x, gamma, beta, eps=1e-5):
    mean = x.mean(-1, keepdim=True)
    return gamma * (x - mean) / (x.var(-1, keepdim=True, unbiased=False).sqrt() + eps) + beta


def _layer_norm_fixed_eps(x, gamma, beta, eps=1e-5):
    return F.layer_norm(x, x.shape[-1:], gamma, beta, eps=1e-5)


def _layer_norm_dim1(x, gamma, beta, eps=1e-5):
    mean = x.mean(1, keepdim=True)
    return gamma * (x - mean) / torch.sqrt(((x - mean) ** 2).mean(1, keepdim=True) + eps) + beta


def _layer_norm_no_keepdim(x, gamma, beta, eps=1e-5):
    mean = x.mean(-1)
    return gamma * (x - mean) / torch.sqrt(((x - mean) ** 2).mean(-1) + eps) + beta


def _layer_norm_gamma_only(x, gamma, beta, eps=1e-5):
    return F.layer_norm(x, x.shape[-1:], gamma, None, eps=eps)


def _normalised_stream_layer(x, attention, mlp, norm1, norm2, kind):
    if kind == "post":
        return _layer_reference(x, attention, mlp, norm1, norm2, kind)
    h = norm1(x)
    x = h + attention(h)
    h = norm2(x)
    return h + mlp(h)


def _parallel_layer(x, attention, mlp, norm1, norm2, kind):
    if kind == "post":
        return _layer_reference(x, attention, mlp, norm1, norm2, kind)
    return x + attention(norm1(x)) + mlp(norm2(x))


def _norms_swapped_layer(x, attention, mlp, norm1, norm2, kind):
    return _layer_reference(x, attention, mlp, norm2, norm1, kind)


def _branch_normalised_layer(x, attention, mlp, norm1, norm2, kind):
    if kind == "pre":
        return _layer_reference(x, attention, mlp, norm1, norm2, kind)
    x = x + norm1(attention(x))
    return x + norm2(mlp(x))


_TOKEN = torch.tensor(LN_INPUT, dtype=torch.float64)
_GAMMA = torch.tensor(LN_GAMMA, dtype=torch.float64)
_BETA = torch.tensor(LN_BETA, dtype=torch.float64)
_D, _FF = D_LLAMA, FF_LLAMA
_POST_OK = {"mean": 0.0, "variance": 1.0, "never_fixed": [1.0, 2.0, 3.0, 4.0],
            "fixed": [1.0, -1.0, 1.0, -1.0]}

MISTAKES: dict[str, list[Mistake]] = {
    "08.1": [
        Mistake("GPT-2's layer formula", lambda: 24 * (12 * _D * _D + 13 * _D), "biases"),
        Mistake("SwiGLU with two matrices", lambda: 24 * (4 * _D * _D + 2 * _D * _FF + 2 * _D),
                "three"),
        Mistake("RMSNorm counted with β", lambda: 24 * (4 * _D * _D + 3 * _D * _FF + 4 * _D),
                "no β"),
        Mistake("one layer only", lambda: _llama_layer(), "24"),
        Mistake("RMSNorms forgotten", lambda: 24 * (4 * _D * _D + 3 * _D * _FF), "two RMSNorms"),
        Mistake("a float count", lambda: float(24 * _llama_layer()), "float"),
    ],
    "08.2": [
        Mistake("unbiased variance (d − 1)",
                lambda: _GAMMA * (_TOKEN - 4) / _TOKEN.std(unbiased=True) + _BETA, "d − 1"),
        Mistake("γ and β forgotten", lambda: F.layer_norm(_TOKEN, (4,), eps=0.0), "γ and β"),
        Mistake("divided by the variance, not the standard deviation",
                lambda: _GAMMA * (_TOKEN - 4) / 2.0 + _BETA, "standard deviation"),
        Mistake("β forgotten", lambda: _GAMMA * (_TOKEN - 4) / math.sqrt(2), "not β"),
        Mistake("mean not subtracted", lambda: _GAMMA * _TOKEN / math.sqrt(2) + _BETA,
                "subtracting the mean"),
    ],
    "08.3": [
        Mistake("ε ignored", lambda: 1.0, "ε = 0"),
        Mistake("root mean square instead of mean square", lambda: math.sqrt(0.8), "root mean"),
        Mistake("the lost fraction ε/(v + ε)", lambda: 0.2, "ε/(v + ε)"),
        Mistake("ratio upside down", lambda: 1.25, "upside down"),
        Mistake("ε outside the square root", lambda: 4e-5 / (math.sqrt(4e-5) + 1e-5) ** 2,
                "outside the square root"),
    ],
    "08.4": [
        Mistake("unbiased variance", lambda: _layer_norm_unbiased, "unbiased"),
        Mistake("γ and β forgotten", lambda: _layer_norm_no_affine, "γ and β"),
        Mistake("normalised over the wrong axis (batch norm)", lambda: _layer_norm_batch_axis,
                "batch norm"),
        Mistake("variance instead of standard deviation", lambda: _layer_norm_variance,
                "divided by the variance"),
        Mistake("ε added to the standard deviation", lambda: _layer_norm_eps_outside,
                "standard deviation"),
        Mistake("eps argument ignored", lambda: _layer_norm_fixed_eps, "eps argument"),
        Mistake("statistics over dim=1", lambda: _layer_norm_dim1, "axis 1"),
        Mistake("statistics without keepdim", lambda: _layer_norm_no_keepdim, "keepdim"),
        Mistake("β forgotten", lambda: _layer_norm_gamma_only, "left out β"),
    ],
    "08.5": [
        Mistake("pre and post swapped", lambda: _swapped_layer, "swap"),
        Mistake("residual additions missing", lambda: _no_residual_layer, "residual"),
        Mistake("pre-norm stream normalised", lambda: _normalised_stream_layer,
                "normalised x"),
        Mistake("parallel branches", lambda: _parallel_layer, "read the layer's input"),
        Mistake("norms swapped", lambda: _norms_swapped_layer, "norm1 and norm2 are swapped"),
        Mistake("post-norm branch normalised", lambda: _branch_normalised_layer,
                "normalises the sum"),
    ],
    "08.6": [
        Mistake("output layer counted as tied", lambda: _untied_total() - 32_000 * 512, "untied"),
        Mistake("a position table for RoPE", lambda: _untied_total() + 2_048 * 512, "RoPE"),
        Mistake("final LayerNorm forgotten", lambda: _untied_total() - 2 * 512, "final LayerNorm"),
        Mistake("a bias on the output layer", lambda: _untied_total() + 32_000, "no bias"),
    ],
    "08.7": [
        Mistake("attention term forgotten",
                lambda: 24 * 12 * 1024**2 + N_VOCAB * 1024, "attention term"),
        Mistake("output layer left out",
                lambda: 24 * (12 * 1024**2 + 2 * 1024 * 1024), "output layer"),
        Mistake("FLOPs instead of multiply-adds",
                lambda: 2 * (24 * (12 * 1024**2 + 2 * 1024 * 1024) + N_VOCAB * 1024), "FLOPs"),
        Mistake("the parameter count", lambda: 354_823_168, "parameter count"),
        Mistake("scores only, not A V", lambda: 24 * (12 * 1024**2 + 1024 * 1024) + N_VOCAB * 1024,
                "weighted sum"),
        Mistake("per sequence, not per token",
                lambda: 24 * (12 * 1024**2 + 2 * 1024**3) + N_VOCAB * 1024, "all T queries"),
        Mistake("rounded", lambda: 404_000_000, "rounded"),
    ],
    "08.8": [
        Mistake("variance divided by d − 1", lambda: {**_POST_OK, "variance": 4 / 3}, "d − 1"),
        Mistake("a counter-example that is a fixed point",
                lambda: {**_POST_OK, "never_fixed": [1.0, -1.0, 1.0, -1.0]}, "silent branches"),
        Mistake("fixed point with unbiased variance 1",
                lambda: {**_POST_OK, "fixed": [math.sqrt(0.75), -math.sqrt(0.75),
                                               math.sqrt(0.75), -math.sqrt(0.75)]}, "d − 1"),
        Mistake("fixed point with non-zero mean",
                lambda: {**_POST_OK, "fixed": [2.0, 0.0, 2.0, 0.0]}, "mean 0"),
        Mistake("the zero vector as the fixed point",
                lambda: {**_POST_OK, "fixed": [0.0, 0.0, 0.0, 0.0]}, "zero vector"),
        Mistake("fixed point with variance 1/2",
                lambda: {**_POST_OK, "fixed": [1.0, -1.0, 0.0, 0.0]}, "variance 0.5"),
        Mistake("sum of squares as the variance", lambda: {**_POST_OK, "variance": 4.0},
                "sum of squares"),
    ],
}
