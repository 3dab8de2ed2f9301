"""Checkers for chapter 7, *Multi-head attention and its shapes*.

Every expected value is computed here from first principles or from PyTorch's own
``torch.nn.MultiheadAttention`` — never from :mod:`tformer.multihead`, the code under study.
Before the generic comparison, each checker compares the answer with the typical wrong answers
computed from the exercise's own data (a term left out, a factor forgotten, bits for bytes; an
unscaled, wrongly split or wrongly masked attention) and names the one that matches.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
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
    shown,
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


def _name_count(value: float, variants) -> None:
    """Raise the hint of the first typical wrong count that ``value`` equals.

    ``variants``: ``(count, hint)`` pairs computed from the exercise's own numbers (a term left
    out, a factor forgotten, another unit); a count in a fractional unit (MiB, GiB) matches to
    1e-9. No variant equals the right count, so a right answer never gets one of these hints.
    """
    if not math.isfinite(value):
        return
    for wrong, hint in variants:
        if math.isclose(value, wrong, rel_tol=1e-9):
            raise Wrong(hint)


def _shape(value, key: str) -> tuple[int, ...]:
    """:func:`as_shape`, but a float inside (``64.0`` from ``d / h``) gets its own hint and
    numpy integers count as integers."""
    if isinstance(value, list | tuple):
        items = list(value)
    elif isinstance(value, int | float | np.integer | np.floating):
        items = [value]
    else:
        return as_shape(value, key)
    numbers = [i for i in items if isinstance(i, int | float | np.integer | np.floating)
               and not isinstance(i, bool | np.bool_)]
    if len(numbers) == len(items):
        floats = [float(i) for i in items if isinstance(i, float | np.floating)]
        if floats:
            raise Wrong(f"{key} holds the float {floats[0]!r}: d / h is a float in Python; "
                        "compute d_k = d // h, so that d_k and every shape are integers")
        return tuple(int(i) for i in items)
    return as_shape(value, key)


@exercise("07.1", "Shapes of multi-head attention (B = 8, T = 1024, d = 768, h = 12)")
def ex1(answer) -> None:
    """``answer``: dict with keys d_k, Q, K, V, scores, concat (shapes after splitting heads)."""
    if not isinstance(answer, Mapping):
        raise Wrong("answer should be a dict such as {'d_k': ..., 'Q': (...), ...}")
    missing = [key for key in EXPECTED_SHAPES if key not in answer]
    if missing:
        raise Wrong(f"the dict is missing the key(s) {missing}")
    for key, expected in EXPECTED_SHAPES.items():
        shape = _shape(answer[key], key)
        if shape == expected:
            continue
        if key == "d_k":
            if shape == (D,):
                raise Wrong(f"d_k = {D} is the full width d: the h = {H} heads share it, "
                            "d_k = d // h")
            raise Wrong(f"d_k = {shape[0]} is not right: the heads share the width d equally")
        if key in ("Q", "K", "V"):
            if shape == (M, T, D):
                raise Wrong(f"{key} = {shape} is the shape before the heads are split; give it "
                            "after")
            if shape == (M, T, H, D_K):
                raise Wrong(f"{key} = {shape} is the shape after view but before "
                            "transpose(1, 2)")
            if shape == (M, H, T, D):
                raise Wrong(f"{key} = {shape} gives every head the full width d; a head has "
                            f"d_k = d / h = {D_K} features")
            if shape == (M, H, D_K, T):
                raise Wrong(f"{key} = {shape} has positions and d_k swapped: the order is "
                            "(batch, heads, positions, d_k); Kᵀ is taken only inside Q Kᵀ")
            if shape == (H, M, T, D_K):
                raise Wrong(f"{key} = {shape} has batch and heads swapped: the order is "
                            "(batch, heads, positions, d_k)")
        if key == "scores":
            if len(shape) == 3:
                raise Wrong("the scores have a heads axis too: one T × T table per sample and "
                            "head")
            if shape == (M, T, H, H):
                raise Wrong(f"the scores {shape} are Q Kᵀ taken before transpose(1, 2): with "
                            "(B, T, h, d_k) the product pairs heads, not positions; transpose "
                            "first, for one T × T table per head")
            if shape == (M, H, T, D_K):
                raise Wrong(f"{shape} is the shape of the heads' outputs A V; the scores Q Kᵀ "
                            "are one T × T table per head")
        if key == "concat":
            if shape == (M, H, T, D_K):
                raise Wrong(f"concat = {shape} is the heads' outputs before they are merged: "
                            "transpose(1, 2), then reshape to (B, T, d)")
            if shape == (M, T, H, D_K):
                raise Wrong(f"concat = {shape} is after transpose(1, 2) but before reshape: "
                            "merge the last two axes into d = h · d_k")
            if shape == (M, T, D_K):
                raise Wrong(f"concat = {shape} is one head's width; the h heads side by side "
                            "give d")
        raise Wrong(f"{key} has shape {expected} in this setting, not {shape}")


@exercise("07.2", "Memory of the attention scores")
def ex2(answer) -> None:
    """``answer``: bytes taken by one float32 scores tensor for all samples and heads."""
    elements = M * H * T * T
    expected = 4 * elements
    value = as_number(answer, name="the memory in bytes")  # a tensor would make == ambiguous
    _name_count(value, (
        (elements, f"{shown(value)} is the number of score elements; give the bytes (4 per "
         "float32)"),
        (32 * elements, "that is in bits (32 per float32); give bytes, 4 per float32"),
        (expected / 2**20, f"{shown(value)} is the size in MiB; give it in bytes"),
        (expected / 2**30, f"{shown(value)} is the size in GiB; give it in bytes"),
        (expected // H, "that is one head's worth; every one of the h heads has its own table"),
        (expected // M, "that is one sequence's worth; each of the B = 8 sequences has its own "
         "tables"),
        (2 * elements, "that is 2 bytes per score (float16); a float32 takes 4"),
        (8 * elements, "that is twice the answer: 8 bytes per score (float64), or the scores "
         "and the weights together; one float32 tensor takes 4 bytes per score"),
        (4 * M * H * T * D_K, "that is the size of Q, T × d_k per head; the scores are T × T "
         "per head"),
    ))
    expect_number(answer, expected, name="the memory in bytes", integer=True)


@exercise("07.3", "Parameters of multi-head attention at d = 512")
def ex3(answer) -> None:
    """``answer``: parameter count of a multi-head attention layer with d = 512, h = 8, biases."""
    reference = torch.nn.MultiheadAttention(512, 8, bias=True, device="meta")
    expected = sum(parameter.numel() for parameter in reference.parameters())
    d, h = 512, 8
    d_k = d // h
    value = as_number(answer, name="the parameter count")  # a tensor would make == ambiguous
    per_head = ("that gives every head its own d × d projections; a head's W_Q is d × d_k "
                f"(d_k = {d_k}), so the h heads together make one d × d matrix")
    one_head = ("that counts one head's d × d_k projections; the layer's are d × d, all heads "
                "together")
    _name_count(value, (
        (3 * d * d + 3 * d, "that counts W_Q, W_K and W_V only; the output projection W_O adds "
         "d² + d"),
        (4 * d * d, "the four projections also have a bias vector of length d each"),
        (h * 3 * (d * d + d) + d * d + d, per_head),
        (h * 4 * (d * d + d), per_head),
        (4 * (d * d + d_k), f"each bias has length d = {d} (one entry per output feature, all "
         f"heads together), not d_k = {d_k}"),
        (4 * d * d + 3 * d, "the output projection has a bias b_O too: d more"),
        (4 * d * d + d, "each of the four projections has its own bias of length d: 4d in all"),
        (4 * (d * d_k + d_k), one_head),
        (3 * (d * d_k + d_k) + d * d + d, one_head),
    ))
    expect_number(answer, expected, name="the parameter count", integer=True)


@exercise("07.4", "Multiply-adds of one multi-head attention layer")
def ex4(answer) -> None:
    """``answer``: multiply-adds for one sequence of T = 1024 tokens, d = 768 (any h)."""
    projections = 4 * T * D * D  # Q, K, V and the output projection: T rows times a d × d matrix
    scores = H * T * T * D_K  # every head: T × T dot products of length d_k
    mixing = H * T * T * D_K  # every head: T × T weights times T × d_k values
    expected = projections + scores + mixing
    value = as_number(answer, name="the multiply-add count")  # a tensor would make == ambiguous
    _name_count(value, (
        (projections, "that is the projections only; add the scores Q Kᵀ and the mixing A V"),
        (scores + mixing, "that is the attention part only; add the four d × d projections"),
        (2 * expected, "that is in FLOPs (2 per multiply-add); count multiply-adds"),
        (projections + scores, "that counts the scores Q Kᵀ but not the weighted sum A V of the "
         "values, which costs another T²·d"),
        (projections + 2 * T * T * D_K, "that is the attention part of one head; the h heads "
         "together cost 2·T²·d (h·d_k = d), which is why h does not matter"),
        (projections + 2 * H * T * T * D, "each head's dot products have length d_k = d/h, not "
         "d: the attention part is 2·T²·d for all heads together"),
        (3 * T * D * D + scores + mixing, "that counts three projections; the output "
         "projection W_O adds another T·d²"),
        (expected + 4 * T * D, "leave out the biases, as the statement says: adding a bias is "
         "not a multiply-add"),
    ))
    expect_number(answer, expected, name="the multiply-add count", integer=True)


# A LLaMA-2-70B-sized stack: 80 layers, d = 8192, h = 64 query heads, 8 key/value heads (GQA).
KV_LAYERS, KV_D, KV_HEADS, KV_GROUPS, KV_T, KV_BYTES = 80, 8192, 64, 8, 4096, 2


@exercise("07.5", "The KV cache of grouped-query attention")
def ex5(answer) -> None:
    """``answer``: bytes of the 16-bit KV cache of one 4,096-token sequence (all 80 layers)."""
    d_k = KV_D // KV_HEADS
    expected = 2 * KV_LAYERS * KV_GROUPS * d_k * KV_T * KV_BYTES
    value = as_number(answer, name="the cache size in bytes")  # a tensor would make == ambiguous
    _name_count(value, (
        (expected * KV_HEADS // KV_GROUPS, "that is 8 times too large, the cache of all 64 "
         "heads (standard multi-head attention); with GQA only the 8 key/value heads, each "
         "d/h = 128 wide, are stored"),
        (expected // 2, "that is half of it: the cache stores keys and values (a factor 2), "
         "each number in 2 bytes (another factor 2); count both"),
        (expected * 2, "that is in float32 (4 bytes); the cache here is 16-bit (2 bytes)"),
        (expected // KV_LAYERS, "that is one layer; every one of the 80 layers has its own "
         "cache"),
        (expected // KV_GROUPS, "that is the cache of MQA, one key/value head; here there are "
         "h_kv = 8"),
        (expected // KV_T, "that is one token's worth; the cache holds all 4,096 tokens of the "
         "context"),
        (expected / 2**30, f"{shown(value)} is the size in GiB; give it in bytes"),
        (expected / 2**20, f"{shown(value)} is the size in MiB; give it in bytes"),
    ))
    expect_number(answer, expected, name="the cache size in bytes", integer=True)


_VARIANT_HINTS = {
    "unscaled": "the scores were not divided by √d_k (unscaled)",
    "scaled_by_d": "the scores were divided by √d, not by √d_k of one head",
    "scaled_by_d_k": "the scores were divided by d_k; divide them by √d_k",
    "masked_after_softmax": "the mask was applied after the softmax; mask the scores with -inf "
    "before it",
    "mask_ignored": "the output ignores the mask",
    "mask_inverted": "the mask is inverted: here True means a query may attend, so fill −∞ "
    "where it is False, masked_fill(~mask, ...); True = not allowed is PyTorch's convention",
    "masked_with_0": "the masked scores were set to 0, which still gets the weight e⁰ in the "
    "softmax; fill them with −∞",
    "softmax_over_queries": "the softmax ran over the queries (dim=-2); run it over the keys "
    "(dim=-1), so that each query's weights sum to 1",
    "split_by_view": "the heads were split by view(B, h, T, d_k) alone, which cuts the rows "
    "across positions; view as (B, T, h, d_k), then transpose(1, 2)",
    "split_by_view_merged_by_transpose": "the heads were split by view(B, h, T, d_k) alone, "
    "which cuts the rows across positions; view as (B, T, h, d_k), then transpose(1, 2)",
    "merged_without_transpose": "the heads were merged by reshape alone; transpose(1, 2) back "
    "to (B, T, h, d_k) before reshape(B, T, d)",
    "no_biases": "the biases b_Q, b_K, b_V, b_O were left out",
    "no_input_biases": "the biases b_Q, b_K, b_V were left out: Q = x @ W_Q + b_Q, and so on",
    "no_output_bias": "the output bias b_O was left out: return merged @ W_O + b_O",
    "no_output_projection": "the merged heads were not multiplied by the output projection: "
    "return merged @ W_O + b_O",
    "no_output_projection_or_bias": "the merged heads were not multiplied by the output "
    "projection: return merged @ W_O + b_O",
    "one_head": "the heads were not split: that is one head of width d; split it into n_heads "
    "heads of width d_k = d / h, each scaled by √d_k",
    "weights_transposed": "the weights were used as W.T (PyTorch's (out, in) layout); in the "
    "book's row convention Q = x @ W_Q",
}


def _variant(x, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, n_heads, mask, kind):
    """A typical wrong multi-head attention (``kind``: a key of :data:`_VARIANT_HINTS`),
    written out from its definition (float64)."""
    batch, n_positions, d = x.shape
    if kind == "one_head":
        n_heads = 1
    d_k = d // n_heads
    if kind in ("no_biases", "no_input_biases"):
        b_q, b_k, b_v = (torch.zeros_like(b) for b in (b_q, b_k, b_v))
    if kind in ("no_biases", "no_output_bias", "no_output_projection_or_bias"):
        b_o = torch.zeros_like(b_o)
    if kind == "weights_transposed":
        w_q, w_k, w_v, w_o = (w.T for w in (w_q, w_k, w_v, w_o))
    view_alone = kind in ("split_by_view", "split_by_view_merged_by_transpose")

    def split(t):
        if view_alone:
            return t.reshape(batch, n_heads, n_positions, d_k)
        return t.reshape(batch, n_positions, n_heads, d_k).transpose(1, 2)

    q, k, v = split(x @ w_q + b_q), split(x @ w_k + b_k), split(x @ w_v + b_v)
    scale = {"unscaled": 1.0, "scaled_by_d": d**0.5, "scaled_by_d_k": float(d_k)}.get(
        kind, d_k**0.5
    )
    scores = q @ k.transpose(-2, -1) / scale
    if mask is not None and kind not in ("mask_ignored", "masked_after_softmax"):
        if kind == "mask_inverted":
            scores = scores.masked_fill(mask, float("-inf"))
        elif kind == "masked_with_0":
            scores = scores.masked_fill(~mask, 0.0)
        else:
            scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(-2 if kind == "softmax_over_queries" else -1)
    if mask is not None and kind == "masked_after_softmax":
        weights = weights.masked_fill(~mask, 0.0)
    heads = weights @ v
    if kind in ("split_by_view", "merged_without_transpose"):
        merged = heads.reshape(batch, n_positions, d)
    else:
        merged = heads.transpose(1, 2).reshape(batch, n_positions, d)
    if kind in ("no_output_projection", "no_output_projection_or_bias"):
        return merged + b_o
    return merged @ w_o + b_o


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
    It must return the outputs ``(B, T, d)``. A wrong output is compared with the typical wrong
    attentions of :data:`_VARIANT_HINTS`, computed on the same data (NaN where theirs is NaN).
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
        value = result.detach().to(torch.float64) if isinstance(result, torch.Tensor) else result
        if (
            isinstance(value, torch.Tensor)
            and value.shape == expected.shape
            and not torch.allclose(value, expected, atol=1e-6, rtol=1e-5)
        ):
            weights = (w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o)
            for variant_kind, hint in _VARIANT_HINTS.items():
                try:
                    variant = _variant(x, *weights, n_heads, may_attend, variant_kind)
                except RuntimeError:
                    continue
                if torch.allclose(value, variant, atol=1e-6, rtol=1e-5, equal_nan=True):
                    raise Wrong(f"{setting}: {hint}")
            if not torch.isnan(value).any():
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
        Mistake("d_k by true division", lambda: _shapes(d_k=D / H), hint="d // h"),
        Mistake("every head the full width", lambda: _shapes(d_k=D, Q=(M, H, T, D)), hint="full width"),
        Mistake("heads not merged", lambda: _shapes(concat=(M, H, T, D_K)), hint="before they are merged"),
        Mistake("scores of unsplit heads", lambda: _shapes(scores=(M, T, H, H)), hint="pairs heads"),
    ],
    "07.2": [
        Mistake("elements, not bytes", lambda: M * H * T * T, hint="number of score elements"),
        Mistake("MiB, not bytes", lambda: 4 * M * H * T * T / 2**20, hint="MiB"),
        Mistake("one head only", lambda: 4 * M * T * T, hint="one head's worth"),
        Mistake("bits, not bytes", lambda: 32 * M * H * T * T, hint="bits"),
        Mistake("bytes as a float", lambda: 32 * M * H * T * T / 8, hint="float"),
        Mistake("one sequence only", lambda: 4 * H * T * T, hint="one sequence"),
    ],
    "07.3": [
        Mistake("W_O forgotten", lambda: 3 * 512**2 + 3 * 512, hint="output projection"),
        Mistake("biases forgotten", lambda: 4 * 512**2, hint="bias"),
        Mistake("full d × d projections per head", lambda: 8 * 3 * (512**2 + 512) + 512**2 + 512,
                hint="every head its own"),
        Mistake("biases one head wide", lambda: 4 * (512**2 + 64), hint="not d_k"),
    ],
    "07.4": [
        Mistake("projections only", lambda: 4 * T * D * D, hint="projections only"),
        Mistake("attention only", lambda: 2 * T * T * D, hint="attention part only"),
        Mistake("FLOPs, not multiply-adds", lambda: 2 * (4 * T * D * D + 2 * T * T * D), hint="FLOPs"),
        Mistake("A V left out", lambda: 4 * T * D * D + T * T * D, hint="weighted sum"),
        Mistake("one head's attention", lambda: 4 * T * D * D + 2 * T * T * D_K, hint="one head"),
        Mistake("three projections", lambda: 3 * T * D * D + 2 * T * T * D, hint="three projections"),
    ],
    "07.5": [
        Mistake("all 64 heads cached", lambda: 2 * 80 * 64 * 128 * 4096 * 2, hint="8 key/value heads"),
        Mistake("keys only", lambda: 80 * 8 * 128 * 4096 * 2, hint="keys and values"),
        Mistake("float32", lambda: 2 * 80 * 8 * 128 * 4096 * 4, hint="float32"),
        Mistake("one layer", lambda: 2 * 8 * 128 * 4096 * 2, hint="one layer"),
        Mistake("GiB, not bytes", lambda: 2 * 80 * 8 * 128 * 4096 * 2 / 2**30, hint="GiB"),
        Mistake("MQA", lambda: 2 * 80 * 1 * 128 * 4096 * 2, hint="MQA"),
    ],
    "07.6": [
        Mistake("unscaled scores", lambda: _wrong_mha("unscaled"), hint="unscaled"),
        Mistake("scaled by √d", lambda: _wrong_mha("scaled_by_d"), hint="√d_k of one head"),
        Mistake(
            "masked after the softmax", lambda: _wrong_mha("masked_after_softmax"), hint="after the softmax"
        ),
        Mistake("biases left out", lambda: _wrong_mha("no_biases"), hint="biases"),
        Mistake("split by view alone", lambda: _wrong_mha("split_by_view"), hint="view as (B, T, h, d_k)"),
        Mistake("softmax over the queries", lambda: _wrong_mha("softmax_over_queries"), hint="dim=-2"),
        Mistake("PyTorch's mask convention", lambda: _wrong_mha("mask_inverted"), hint="inverted"),
        Mistake("output bias left out", lambda: _wrong_mha("no_output_bias"), hint="b_O was left out"),
        Mistake("masked with 0", lambda: _wrong_mha("masked_with_0"), hint="set to 0"),
        Mistake("merged without transpose", lambda: _wrong_mha("merged_without_transpose"),
                hint="merged by reshape alone"),
        Mistake("W_O forgotten", lambda: _wrong_mha("no_output_projection"), hint="output projection"),
        Mistake("weights used as W.T", lambda: _wrong_mha("weights_transposed"), hint="row convention"),
    ],
}
