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


def _block(d: int) -> int:
    return 12 * d * d + 13 * d


D_LLAMA, FF_LLAMA, LAYERS_LLAMA = 1024, 2816, 24


def _llama_layer(d: int = D_LLAMA, d_ff: int = FF_LLAMA) -> int:
    return 4 * d * d + 3 * d * d_ff + 2 * d


@exercise("08.1", "Twenty-four LLaMA-style layers at d = 1,024")
def ex1(answer) -> None:
    """``answer``: parameters in 24 layers with RMSNorm, SwiGLU (d_ff = 2,816), no biases."""
    d, d_ff, n_layers = D_LLAMA, FF_LLAMA, LAYERS_LLAMA
    expected = n_layers * _llama_layer()
    value = as_number(answer, name="the parameter count")  # a tensor would make == ambiguous
    if value == n_layers * _block(d):
        raise Wrong("that is GPT-2's layer, 12d² + 13d: this layer has no biases, RMSNorm and "
                    "a SwiGLU MLP")
    if value == n_layers * (4 * d * d + 2 * d * d_ff + 2 * d):
        raise Wrong("SwiGLU has three d × d_ff matrices (gate, up, down), not two")
    if value == n_layers * (4 * d * d + 3 * d * d_ff + 4 * d):
        raise Wrong("RMSNorm has no β: d parameters per norm, 2d per layer")
    if value == n_layers * (4 * d * d + 3 * d * d_ff):
        raise Wrong("the two RMSNorms of each layer have d parameters (γ) each")
    if value == _llama_layer():
        raise Wrong("that is one layer; the stack has 24")
    expect_number(answer, expected, name="the parameter count")


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
    unbiased = gamma * (x - x.mean()) / x.std(unbiased=True) + beta
    no_affine = F.layer_norm(x, (4,), eps=0.0)
    try:
        value = torch.as_tensor(answer, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError):
        value = None
    if value is not None and value.shape == expected.shape:
        if torch.allclose(value, unbiased, atol=2e-3):
            raise Wrong("you divided the variance by d − 1; LayerNorm divides by d")
        if torch.allclose(value, no_affine, atol=2e-3):
            raise Wrong("that is the normalised vector before γ and β; apply them too")
        by_variance = gamma * (x - x.mean()) / x.var(unbiased=False) + beta
        if torch.allclose(value, by_variance, atol=2e-3):
            raise Wrong("you divided by the variance; divide by its square root, the standard "
                        "deviation")
    expect_tensor(answer, expected, name="your output", axes=("features",), atol=2e-3, rtol=0,
                  rounding_tol=1e-2)


@exercise("08.3", "What ε does to a quiet token")
def ex3(answer) -> None:
    """``answer``: mean square of LayerNorm's output (before γ, β) at v = 4·10⁻⁵, ε = 10⁻⁵."""
    variance, eps = 4e-5, 1e-5
    expected = variance / (variance + eps)
    if isinstance(answer, int | float) and math.isclose(answer, 1.0):
        raise Wrong("1 would hold with ε = 0; here v is only four times ε")
    if isinstance(answer, int | float) and math.isclose(answer, math.sqrt(expected), rel_tol=1e-3):
        raise Wrong("that is the root mean square √(v/(v + ε)); the question asks for the mean "
                    "square")
    if isinstance(answer, int | float) and math.isclose(answer, eps / (variance + eps),
                                                        rel_tol=1e-3):
        raise Wrong("that is ε/(v + ε), how much is lost; the mean square is v/(v + ε)")
    expect_number(answer, expected, name="the mean square", rel_tol=1e-3, rounding_tol=0.02)


@exercise("08.4", "Implement LayerNorm")
def ex4(answer) -> None:
    """``answer``: a function ``layer_norm(x, gamma, beta, eps)`` normalising the last axis."""
    generator = torch.Generator().manual_seed(8)
    for shape in ((5, 8), (3, 4, 16), (2, 3, 5, 6)):
        d = shape[-1]
        x = 3 * torch.randn(*shape, generator=generator, dtype=torch.float64) + 1
        gamma = torch.rand(d, generator=generator, dtype=torch.float64) + 0.5
        beta = torch.randn(d, generator=generator, dtype=torch.float64)
        expected = F.layer_norm(x, (d,), gamma, beta, eps=1e-5)
        result = call_reader(answer, x.clone(), gamma, beta, 1e-5, name="your layer_norm")
        try:  # a malformed result gets its hint from _expect_close below
            value = torch.as_tensor(result, dtype=torch.float64)
        except (TypeError, ValueError, RuntimeError):
            value = None
        if value is not None and value.shape == expected.shape:
            unbiased = gamma * (x - x.mean(-1, keepdim=True)) / torch.sqrt(
                x.var(-1, keepdim=True, unbiased=True) + 1e-5
            ) + beta
            if torch.allclose(value, unbiased, atol=1e-6):
                raise Wrong("you used the unbiased variance (d − 1); LayerNorm divides by d")
            standardised = (x - x.mean(-1, keepdim=True)) / torch.sqrt(
                x.var(-1, keepdim=True, unbiased=False) + 1e-5
            )
            by_variance = gamma * (x - x.mean(-1, keepdim=True)) / (
                x.var(-1, keepdim=True, unbiased=False) + 1e-5
            ) + beta
            if torch.allclose(value, by_variance, atol=1e-6):
                raise Wrong("you divided by the variance; divide by sqrt(variance + eps)")
            if torch.allclose(value, standardised, atol=1e-6):
                raise Wrong("you standardised but left out γ and β: return "
                            "gamma * (x − mean) / sqrt(variance + eps) + beta")
            batch_statistics = F.batch_norm(
                x.reshape(-1, d), None, None, gamma, beta, training=True, eps=1e-5
            ).reshape(shape)
            if torch.allclose(value, batch_statistics, atol=1e-6):
                raise Wrong("you normalised each feature across the tokens (batch norm); "
                            "normalise each token across its features (dim=-1)")
        _expect_close(result, expected, name=f"your layer_norm on shape {shape}", axes=None,
                      atol=1e-6, rtol=1e-5)
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
    with torch.no_grad():
        for norm in (norm1, norm2):
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.uniform_(-0.5, 0.5)

    def attention(x):
        return attention_module(x).outputs

    x = 2 * torch.randn(2, 6, d, dtype=torch.float64) + 1
    with torch.no_grad():
        expected = {kind: _layer_reference(x, attention, mlp, norm1, norm2, kind)
                    for kind in ("pre", "post")}
        for kind, other in (("pre", "post"), ("post", "pre")):
            result = call_reader(answer, x.clone(), attention, mlp, norm1, norm2, kind,
                                 name="your transformer_layer")
            if isinstance(result, torch.Tensor) and result.shape == x.shape:
                if torch.allclose(result, expected[other], atol=1e-8):
                    raise Wrong(f"kind={kind!r} computed the {other}-norm layer; swap them")
                no_residual = (
                    mlp(norm2(attention(norm1(x)))) if kind == "pre"
                    else norm2(mlp(norm1(attention(x))))
                )
                if torch.allclose(result, no_residual, atol=1e-8):
                    raise Wrong(f"kind={kind!r}: the residual additions x + … are missing")
            _expect_close(result, expected[kind], name=f"your {kind}-norm layer",
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
    if value == expected - n_vocab * d:
        raise Wrong("the output layer is untied here: its n_vocab × d matrix is a second table")
    if value == expected + n_ctx * d:
        raise Wrong("RoPE rotates queries and keys and has no parameters: no position table")
    if value == expected - 2 * d:
        raise Wrong("the final LayerNorm after the last layer has 2d parameters")
    if value == expected + n_vocab:
        raise Wrong("the output layer has no bias here")
    if value == n_layers * _block(d):
        raise Wrong("that is the 8 layers only; add the embedding and the output layer")
    expect_number(answer, expected, name="the parameter count")


@exercise("08.7", "Multiply-adds per token of GPT-2 medium")
def ex7(answer) -> None:
    """``answer``: forward multiply-adds per token of GPT-2 medium at a context of N = 1,024."""
    d, n_layers, n_context = 1024, 24, 1024
    weights = n_layers * 12 * d * d + N_VOCAB * d
    attention = n_layers * 2 * n_context * d
    expected = weights + attention
    value = as_number(answer, name="the multiply-add count")  # a tensor would make == ambiguous
    if value == weights:
        raise Wrong("add the attention term: 2·N·d per layer (scores and mixing)")
    if value == weights - N_VOCAB * d + attention:
        raise Wrong("the output layer multiplies every final vector by the n_vocab × d matrix "
                    "too, even though its parameters are tied")
    if value == 2 * expected:
        raise Wrong("that is in FLOPs; count multiply-adds")
    if value == 354_823_168:  # GPT-2 medium's parameters (exercise 08.6)
        raise Wrong("that is the parameter count (exercise 08.6); count one multiply-add per "
                    "weight-matrix entry, the tied output layer included but not the position "
                    "table, plus 2·N·d per layer")
    expect_number(answer, expected, name="the multiply-add count")


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
    if abs(m) < 1e-6 and abs(v_unbiased - 1) < 1e-6:
        raise Wrong('answer["fixed"] has variance 1 only when divided by d − 1; LayerNorm '
                    "divides by d")
    if abs(m) > 1e-6:
        raise Wrong('answer["fixed"] must have mean 0: LayerNorm\'s output always has')
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
    ],
    "08.2": [
        Mistake("unbiased variance (d − 1)",
                lambda: _GAMMA * (_TOKEN - 4) / _TOKEN.std(unbiased=True) + _BETA, "d − 1"),
        Mistake("γ and β forgotten", lambda: F.layer_norm(_TOKEN, (4,), eps=0.0), "γ and β"),
        Mistake("divided by the variance, not the standard deviation",
                lambda: _GAMMA * (_TOKEN - 4) / 2.0 + _BETA, "standard deviation"),
    ],
    "08.3": [
        Mistake("ε ignored", lambda: 1.0, "ε = 0"),
        Mistake("root mean square instead of mean square", lambda: math.sqrt(0.8), "root mean"),
        Mistake("the lost fraction ε/(v + ε)", lambda: 0.2, "ε/(v + ε)"),
    ],
    "08.4": [
        Mistake("unbiased variance", lambda: _layer_norm_unbiased, "unbiased"),
        Mistake("γ and β forgotten", lambda: _layer_norm_no_affine, "γ and β"),
        Mistake("normalised over the wrong axis (batch norm)", lambda: _layer_norm_batch_axis,
                "batch norm"),
        Mistake("variance instead of standard deviation", lambda: _layer_norm_variance,
                "divided by the variance"),
    ],
    "08.5": [
        Mistake("pre and post swapped", lambda: _swapped_layer, "swap"),
        Mistake("residual additions missing", lambda: _no_residual_layer, "residual"),
    ],
    "08.6": [
        Mistake("output layer counted as tied", lambda: _untied_total() - 32_000 * 512, "untied"),
        Mistake("a position table for RoPE", lambda: _untied_total() + 2_048 * 512, "RoPE"),
        Mistake("final LayerNorm forgotten", lambda: _untied_total() - 2 * 512, "final LayerNorm"),
    ],
    "08.7": [
        Mistake("attention term forgotten",
                lambda: 24 * 12 * 1024**2 + N_VOCAB * 1024, "attention term"),
        Mistake("output layer left out",
                lambda: 24 * (12 * 1024**2 + 2 * 1024 * 1024), "output layer"),
        Mistake("FLOPs instead of multiply-adds",
                lambda: 2 * (24 * (12 * 1024**2 + 2 * 1024 * 1024) + N_VOCAB * 1024), "FLOPs"),
        Mistake("the parameter count", lambda: 354_823_168, "parameter count"),
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
    ],
}
