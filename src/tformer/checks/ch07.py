"""Checkers for chapter 7, *Multi-head attention and its shapes*.

Every expected value is computed here from first principles or from PyTorch's own
``torch.nn.MultiheadAttention`` — never from :mod:`tformer.multihead`, the code under study.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from tformer.checks.core import (
    Wrong,
    as_number,
    as_shape,
    call_reader,
    exercise,
    expect_number,
    expect_tensor,
)

# Source 001's multi-head memory exercise (m = 8, T = 128, d = 256, H = 8) is worked in the
# chapter; the exercises ask the same questions at GPT-2 small's scale.
M, T, D, H = 8, 1024, 768, 12
D_K = D // H

EXPECTED_SHAPES: dict[str, tuple[int, ...]] = {
    "d_k": (D_K,),
    "Q": (M, H, T, D_K),
    "K": (M, H, T, D_K),
    "V": (M, H, T, D_K),
    "scores": (M, H, T, T),
    "concat": (M, T, D),
}


@exercise("07.1", "Shapes of multi-head attention (m = 8, T = 1024, d = 768, H = 12)")
def ex1(answer) -> None:
    """``answer``: dict with keys d_k, Q, K, V, scores, concat (shapes after splitting heads)."""
    if not isinstance(answer, Mapping):
        raise Wrong("answer should be a dict such as {'d_k': ..., 'Q': (...), ...}")
    missing = [key for key in EXPECTED_SHAPES if key not in answer]
    if missing:
        raise Wrong(f"the dict is missing the key(s) {missing}")
    for key, expected in EXPECTED_SHAPES.items():
        shape = as_shape(answer[key], key)
        if shape == expected:
            continue
        if key == "d_k":
            raise Wrong(f"d_k = {shape[0]} is not right: the heads share the width d equally")
        if key in ("Q", "K", "V") and shape == (M, T, D):
            raise Wrong(f"{key} = {shape} is the shape before the heads are split; give it after")
        if key in ("Q", "K", "V") and shape == (M, T, H, D_K):
            raise Wrong(f"{key} = {shape} is the shape after view but before transpose(1, 2)")
        if key == "scores" and len(shape) == 3:
            raise Wrong("the scores have a heads axis too: one T × T table per sample and head")
        raise Wrong(f"{key} has shape {expected} in this setting, not {shape}")


@exercise("07.2", "Memory of the attention scores")
def ex2(answer) -> None:
    """``answer``: bytes taken by one float32 scores tensor for all samples and heads."""
    elements = M * H * T * T
    expected = 4 * elements
    if isinstance(answer, int | float) and not isinstance(answer, bool):
        if answer == elements:
            raise Wrong(f"{answer} is the number of score elements; give the bytes (float32)")
        if answer == expected / 2**20:
            raise Wrong(f"{answer} is the size in MiB; give it in bytes")
        if answer == expected // H:
            raise Wrong("that is one head's worth; every one of the H heads has its own table")
    expect_number(answer, expected, name="the memory in bytes")


@exercise("07.3", "Parameters of multi-head attention at d = 512")
def ex3(answer) -> None:
    """``answer``: parameter count of a multi-head attention layer with d = 512, h = 8, biases."""
    reference = torch.nn.MultiheadAttention(512, 8, bias=True, device="meta")
    expected = sum(parameter.numel() for parameter in reference.parameters())
    value = as_number(answer, name="the parameter count")  # a tensor would make == ambiguous
    if value == 3 * 512**2 + 3 * 512:
        raise Wrong("that counts W_Q, W_K and W_V only; the output projection W_O adds d² + d")
    if value == 4 * 512**2:
        raise Wrong("the four projections also have a bias vector of length d each")
    expect_number(answer, expected, name="the parameter count")


@exercise("07.4", "Multiply-adds of one multi-head attention layer")
def ex4(answer) -> None:
    """``answer``: multiply-adds for one sequence of T = 1024 tokens, d = 768 (any h)."""
    projections = 4 * T * D * D  # Q, K, V and the output projection: T rows times a d × d matrix
    scores = H * T * T * D_K  # every head: T × T dot products of length d_k
    mixing = H * T * T * D_K  # every head: T × T weights times T × d_k values
    expected = projections + scores + mixing
    value = as_number(answer, name="the multiply-add count")  # a tensor would make == ambiguous
    if value == projections:
        raise Wrong("that is the projections only; add the scores Q Kᵀ and the mixing A V")
    if value == scores + mixing:
        raise Wrong("that is the attention part only; add the four d × d projections")
    if value == 2 * expected:
        raise Wrong("that is in FLOPs (2 per multiply-add); count multiply-adds")
    expect_number(answer, expected, name="the multiply-add count")


@exercise("07.5", "Rank of a head's QK circuit")
def ex5(answer) -> None:
    """``answer``: the (generic) rank of W_Q⁽ⁱ⁾ W_K⁽ⁱ⁾ᵀ for d = 64, h = 4."""
    generator = torch.Generator().manual_seed(7)
    d, n_heads = 64, 4
    d_k = d // n_heads
    w_q = torch.randn(d, d_k, generator=generator, dtype=torch.float64)
    w_k = torch.randn(d, d_k, generator=generator, dtype=torch.float64)
    expected = int(torch.linalg.matrix_rank(w_q @ w_k.T))
    value = as_number(answer, name="the rank")  # a tensor would make == ambiguous
    if value == d:
        raise Wrong("W_QK is d × d, but it passes through a narrower space; which one?")
    expect_number(answer, expected, name="the rank")


def _reference_attention(n_heads: int, d: int, seed: int) -> torch.nn.MultiheadAttention:
    torch.manual_seed(seed)
    reference = torch.nn.MultiheadAttention(d, n_heads, batch_first=True, dtype=torch.float64)
    with torch.no_grad():  # non-zero biases, so a forgotten bias is caught
        reference.in_proj_bias.normal_()
        reference.out_proj.bias.normal_()
    return reference.eval()


@exercise("07.6", "Masked multi-head attention, checked against torch.nn.MultiheadAttention")
def ex6(answer) -> None:
    """``answer``: a function ``(x, W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O, n_heads, mask)``.

    ``x`` is ``(B, T, d)``; the weights are ``(d, d)`` in the book's row convention
    (``Q = x @ W_Q + b_Q``); ``mask`` is boolean ``(T, T)`` with ``True`` = may attend, or None.
    It must return the outputs ``(B, T, d)``.
    """
    for n_heads, d, n_positions, causal in ((2, 8, 5, True), (4, 16, 7, True), (4, 16, 6, False)):
        reference = _reference_attention(n_heads, d, seed=n_heads * 100 + n_positions)
        x = torch.randn(3, n_positions, d, dtype=torch.float64)
        # Row convention: nn.Linear stores W as (out, in) and computes x @ W.T.
        w_q, w_k, w_v = (w.detach().T.contiguous() for w in reference.in_proj_weight.chunk(3))
        b_q, b_k, b_v = (b.detach().clone() for b in reference.in_proj_bias.chunk(3))
        w_o = reference.out_proj.weight.detach().T.contiguous()
        b_o = reference.out_proj.bias.detach().clone()
        may_attend = (
            torch.ones(n_positions, n_positions, dtype=torch.bool).tril() if causal else None
        )
        with torch.no_grad():
            # PyTorch's boolean attn_mask means the opposite: True = NOT allowed.
            expected, _ = reference(
                x, x, x, attn_mask=None if may_attend is None else ~may_attend, need_weights=False
            )
        result = call_reader(
            answer, x.clone(), w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, n_heads, may_attend,
            name="your multi-head attention",
        )
        if isinstance(result, tuple):
            result = result[0]
        kind = "causal" if causal else "no mask"
        setting = f"(h = {n_heads}, d = {d}, T = {n_positions}, {kind})"
        if may_attend is not None and isinstance(result, torch.Tensor) and result.shape == x.shape:
            with torch.no_grad():
                unmasked, _ = reference(x, x, x, need_weights=False)
            if torch.allclose(result.to(unmasked.dtype), unmasked, atol=1e-6):
                raise Wrong(f"{setting}: the output ignores the mask")
        value = result.detach().to(torch.float64) if isinstance(result, torch.Tensor) else result
        if (
            isinstance(value, torch.Tensor)
            and value.shape == expected.shape
            and not torch.isnan(value).any()
            and not torch.allclose(value, expected, atol=1e-6, rtol=1e-5)
        ):
            worst = float((value - expected).abs().max())
            raise Wrong(
                f"{setting}: your output differs from torch.nn.MultiheadAttention by up to "
                f"{worst:.3g}; check the scaling by √d_k, the biases and the head split"
            )
        expect_tensor(
            result, expected, name=f"your output {setting}", axes=("batch", "queries", "features"),
            atol=1e-6, rtol=1e-5,
        )
