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


@exercise("08.1", "Parameters of 24 layers at d = 1,024 (source 000, exercise 12.6)")
def ex1(answer) -> None:
    """``answer``: parameters in 24 Transformer layers of width 1,024 (``12d² + 13d`` each)."""
    d, n_layers = 1024, 24
    expected = n_layers * _block(d)
    value = as_number(answer, name="the parameter count")  # a tensor would make == ambiguous
    if value == n_layers * 12 * d * d:
        raise Wrong("that is 24 · 12d² only; the 13d biases and LayerNorm parameters count too")
    if value == _block(d):
        raise Wrong("that is one layer; the model has 24")
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
    expect_tensor(answer, expected, name="your output", axes=("features",), atol=2e-3, rtol=0,
                  rounding_tol=1e-2)


@exercise("08.3", "What ε does to a quiet token")
def ex3(answer) -> None:
    """``answer``: mean square of LayerNorm's output (before γ, β) at v = 4·10⁻⁵, ε = 10⁻⁵."""
    variance, eps = 4e-5, 1e-5
    expected = variance / (variance + eps)
    if isinstance(answer, int | float) and math.isclose(answer, 1.0):
        raise Wrong("1 would hold with ε = 0; here v is only four times ε")
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


@exercise("08.6", "All parameters of GPT-2 medium")
def ex6(answer) -> None:
    """``answer``: parameters of GPT-2 medium (d = 1,024, 24 layers, tied output layer)."""
    d, n_layers = 1024, 24
    expected = n_layers * _block(d) + N_VOCAB * d + N_CTX * d + 2 * d
    value = as_number(answer, name="the parameter count")  # a tensor would make == ambiguous
    if value == expected + N_VOCAB * d:
        raise Wrong("the output layer is tied to the token embedding; count that matrix once")
    if value == expected - N_CTX * d:
        raise Wrong("GPT-2 learns a position table too: n_ctx · d parameters")
    if value == expected - 2 * d:
        raise Wrong("the final LayerNorm after the last layer has 2d parameters")
    if value == n_layers * _block(d):
        raise Wrong("that is the 24 layers only (exercise 08.1); add the embeddings")
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
