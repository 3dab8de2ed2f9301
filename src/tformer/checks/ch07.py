"""Checkers for chapter 7, *Multi-head attention and its shapes*.

Every expected value is computed here from first principles or from PyTorch's own
``torch.nn.MultiheadAttention`` — never from :mod:`tformer.multihead`, the code under study.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from tformer.checks.core import (
    Mistake,
    Wrong,
    as_number,
    as_shape,
    call_reader,
    exercise,
    expect_number,
    expect_tensor,
)

# Source 001's multi-head memory exercise (B = 8, T = 128, d = 256, h = 8) is worked in the
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


@exercise("07.1", "Shapes of multi-head attention (B = 8, T = 1024, d = 768, h = 12)")
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
            raise Wrong("that is one head's worth; every one of the h heads has its own table")
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


# A LLaMA-2-70B-sized stack: 80 layers, d = 8192, h = 64 query heads, 8 key/value heads (GQA).
KV_LAYERS, KV_D, KV_HEADS, KV_GROUPS, KV_T, KV_BYTES = 80, 8192, 64, 8, 4096, 2


@exercise("07.5", "The KV cache of grouped-query attention")
def ex5(answer) -> None:
    """``answer``: bytes of the 16-bit KV cache of one 4,096-token sequence (all 80 layers)."""
    d_k = KV_D // KV_HEADS
    expected = 2 * KV_LAYERS * KV_GROUPS * d_k * KV_T * KV_BYTES
    value = as_number(answer, name="the cache size in bytes")  # a tensor would make == ambiguous
    if value == expected * KV_HEADS // KV_GROUPS:
        raise Wrong("that is a cache with all 64 heads; with GQA only the 8 key/value heads are stored")
    if value == expected // 2:
        raise Wrong("the cache stores keys and values: count both")
    if value == expected * 2:
        raise Wrong("that is in float32 (4 bytes); the cache here is 16-bit (2 bytes)")
    if value == expected // KV_LAYERS:
        raise Wrong("that is one layer; every one of the 80 layers has its own cache")
    expect_number(answer, expected, name="the cache size in bytes")


_VARIANT_HINTS = {
    "unscaled": "the scores were not divided by √d_k (unscaled)",
    "scaled by d": "the scores were divided by √d, not by √d_k of one head",
    "masked after softmax": "the mask was applied after the softmax; mask the scores with -inf "
    "before it",
    "no biases": "the biases b_Q, b_K, b_V, b_O were left out",
}


def _variant(x, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, n_heads, mask, kind):
    """A typical wrong multi-head attention, written out from its definition (float64)."""
    batch, n_positions, d = x.shape
    d_k = d // n_heads
    if kind == "no biases":
        b_q, b_k, b_v, b_o = (torch.zeros_like(b) for b in (b_q, b_k, b_v, b_o))

    def split(t):
        return t.view(batch, n_positions, n_heads, d_k).transpose(1, 2)

    q, k, v = split(x @ w_q + b_q), split(x @ w_k + b_k), split(x @ w_v + b_v)
    scale = {"unscaled": 1.0, "scaled by d": d**0.5}.get(kind, d_k**0.5)
    scores = q @ k.transpose(-2, -1) / scale
    if mask is not None and kind != "masked after softmax":
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(-1)
    if mask is not None and kind == "masked after softmax":
        weights = weights.masked_fill(~mask, 0.0)
    heads = weights @ v
    return heads.transpose(1, 2).reshape(batch, n_positions, d) @ w_o + b_o


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
            weights = (w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o)
            for kind, hint in _VARIANT_HINTS.items():
                variant = _variant(x, *weights, n_heads, may_attend, kind)
                if torch.allclose(value, variant, atol=1e-6, rtol=1e-5):
                    raise Wrong(f"{setting}: {hint}")
            worst = float((value - expected).abs().max())
            raise Wrong(
                f"{setting}: your output differs from torch.nn.MultiheadAttention by up to "
                f"{worst:.3g}; check the scaling by √d_k, the biases and the head split"
            )
        expect_tensor(
            result, expected, name=f"your output {setting}", axes=("batch", "queries", "features"),
            atol=1e-6, rtol=1e-5,
        )


def _wrong_mha(kind: str):
    def wrong(x, W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O, n_heads, mask=None):
        return _variant(x, W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O, n_heads, mask, kind)

    return wrong


def _shapes(**changes):
    answer = dict(EXPECTED_SHAPES, d_k=D_K)
    answer.update(changes)
    return answer


MISTAKES: dict[str, list[Mistake]] = {
    "07.1": [
        Mistake("Q before the split", lambda: _shapes(Q=(M, T, D)), hint="before the heads are split"),
        Mistake("view without transpose", lambda: _shapes(K=(M, T, H, D_K)), hint="before transpose"),
        Mistake("scores without a heads axis", lambda: _shapes(scores=(M, T, T)), hint="heads axis"),
    ],
    "07.2": [
        Mistake("elements, not bytes", lambda: M * H * T * T, hint="number of score elements"),
        Mistake("MiB, not bytes", lambda: 4 * M * H * T * T / 2**20, hint="MiB"),
        Mistake("one head only", lambda: 4 * M * T * T, hint="one head's worth"),
    ],
    "07.3": [
        Mistake("W_O forgotten", lambda: 3 * 512**2 + 3 * 512, hint="output projection"),
        Mistake("biases forgotten", lambda: 4 * 512**2, hint="bias"),
    ],
    "07.4": [
        Mistake("projections only", lambda: 4 * T * D * D, hint="projections only"),
        Mistake("attention only", lambda: 2 * T * T * D, hint="attention part only"),
        Mistake("FLOPs, not multiply-adds", lambda: 2 * (4 * T * D * D + 2 * T * T * D), hint="FLOPs"),
    ],
    "07.5": [
        Mistake("all 64 heads cached", lambda: 2 * 80 * 64 * 128 * 4096 * 2, hint="8 key/value heads"),
        Mistake("keys only", lambda: 80 * 8 * 128 * 4096 * 2, hint="keys and values"),
        Mistake("float32", lambda: 2 * 80 * 8 * 128 * 4096 * 4, hint="float32"),
        Mistake("one layer", lambda: 2 * 8 * 128 * 4096 * 2, hint="one layer"),
    ],
    "07.6": [
        Mistake("unscaled scores", lambda: _wrong_mha("unscaled"), hint="unscaled"),
        Mistake("scaled by √d", lambda: _wrong_mha("scaled by d"), hint="√d_k of one head"),
        Mistake(
            "masked after the softmax", lambda: _wrong_mha("masked after softmax"), hint="after the softmax"
        ),
        Mistake("biases left out", lambda: _wrong_mha("no biases"), hint="biases"),
    ],
}
