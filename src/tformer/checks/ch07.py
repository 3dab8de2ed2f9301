"""Checkers for chapter 7, *Multi-head attention and its shapes*.

Every expected value is computed here from first principles or from PyTorch's own
``torch.nn.MultiheadAttention`` — never from :mod:`tformer.multihead`, the code under study.
Before the generic comparison, each checker compares the answer with the typical wrong answers
computed from the exercise's own data (a term left out, a factor forgotten, bits for bytes; an
unscaled, wrongly split or wrongly masked attention) and names the one that matches.

07.7–07.9 ask for reasoning. 07.7 runs the reader's procedure on one-head, position-only models
built here (adversarial and random) and checks every input it names against the model itself.
07.8 repeats the reader's ablation on copies of the reader's own trained model (and of a
random-weight model), so nothing depends on which head learned what in one run; a forward hook
records what the reader's function ran the model on. 07.9 compares the reader's circuits with
products of weight slices (the layers are built with :class:`tformer.multihead.MultiHeadAttention`,
which the functions take, but read only through their weights) and the reader's rank with matrices
of known rank.
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import torch

from tformer.checks.core import (
    Mistake,
    NotAttempted,
    Wrong,
    as_number,
    as_shape,
    call_reader,
    exercise,
    expect_number,
    expect_tensor,
    shown,
    to_array,
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


# ---------------------------------------------------------------------------------------------
# 07.7 — one head that reads by position cannot output x[t-1] - x[t-2]

N_DIGITS_7 = 4
"""Digits 0 … 3; the classes are the differences -3 … 3 (class index = difference + 3)."""
QUERY_BUDGET = 2
"""How many times the reader's function may run a model."""


@dataclass(frozen=True)
class _OneHead:
    """A one-head model whose attention depends on positions only, at one position ``t ≥ 2``.

    With every other digit fixed, its logits are ``c + w₁ u(a) + w₂ u(b)`` for ``a = x[t-1]``,
    ``b = x[t-2]``: ``w₁, w₂ ≥ 0`` the head's weights on the two positions, ``u`` (rows of
    ``U``, ``(4, 7)``) the value map read through ``W_O`` and the readout, ``c`` ``(7,)`` the
    bias, the current token's direct path and the head's reads of the other positions.
    """

    label: str
    w: tuple[float, float]
    U: torch.Tensor
    c: torch.Tensor

    def answer(self, a: int, b: int) -> int:
        logits = self.c + self.w[0] * self.U[a] + self.w[1] * self.U[b]
        return int(logits.argmax()) - (N_DIGITS_7 - 1)


def _by_tau(label: str, w: tuple[float, float], slopes, intercepts) -> _OneHead:
    """A model whose logits are ``intercepts + τ · slopes`` with ``τ = w₁ a + w₂ b``.

    ``slopes``, ``intercepts``: ``{difference: value}``; the other classes get -100."""
    U, c = torch.zeros(N_DIGITS_7, 7, dtype=torch.float64), torch.full((7,), -100.0,
                                                                        dtype=torch.float64)
    for difference, slope in slopes.items():
        U[:, difference + 3] = slope * torch.arange(N_DIGITS_7, dtype=torch.float64)
        c[difference + 3] = intercepts[difference]
    return _OneHead(label, w, U, c)


def _reads_one(position: int, shift: int) -> _OneHead:
    """Reads one of the two digits only and answers ``x[t-1] - shift`` or ``shift - x[t-2]``:
    the logits ``k s - k²/2`` of the classes ``k`` peak at ``k = s``."""
    k = torch.arange(-3.0, 4.0, dtype=torch.float64)
    sign = 1.0 if position == 1 else -1.0
    U = sign * torch.arange(N_DIGITS_7, dtype=torch.float64)[:, None] * k
    c = -sign * shift * k - k**2 / 2
    if position == 1:
        label = f"the model answering x[t-1] - {shift}"
        return _OneHead(label, (1.0, 0.0), U, c)
    label = f"the model answering {shift} - x[t-2]"
    return _OneHead(label, (0.0, 1.0), U, c)


def _one_head_models() -> list[_OneHead]:
    """Adversarial models (each gets some inputs right that a guess might name) and random ones."""
    zero = torch.zeros(N_DIGITS_7, 7, dtype=torch.float64)
    models = [_OneHead("the model that always answers 0", (0.5, 0.5), zero,
                       torch.eye(7, dtype=torch.float64)[3])]
    models += [_reads_one(1, shift) for shift in range(N_DIGITS_7)]
    models += [_reads_one(2, shift) for shift in range(N_DIGITS_7)]
    # τ = w₁ a + w₂ b: along τ the class with the larger slope takes over (breakpoints 0.25,
    # 0.75, 1.25), so the four inputs with digits 0 and 1 get the classes listed
    models += [
        _by_tau("a model wrong only at (0, 0) among digits 0 and 1",
                (1.0, 0.5), {-2: 0.0, -1: 1.0, 1: 2.0, 0: 3.0},
                {-2: 0.0, -1: -0.25, 1: -1.0, 0: -2.25}),
        _by_tau("a model wrong only at (0, 0) among digits 0 and 1",
                (0.5, 1.0), {-2: 0.0, 1: 1.0, -1: 2.0, 0: 3.0},
                {-2: 0.0, 1: -0.25, -1: -1.0, 0: -2.25}),
        _by_tau("a model right at (0, 0), (1, 0) and (0, 1)",
                (1.0, 0.5), {0: 0.0, -1: 1.0, 1: 2.0}, {0: 0.0, -1: -0.25, 1: -1.0}),
        _by_tau("a model right at (0, 0), (1, 0) and (0, 1)",
                (0.5, 1.0), {0: 0.0, 1: 1.0, -1: 2.0}, {0: 0.0, 1: -0.25, -1: -1.0}),
    ]
    generator = torch.Generator().manual_seed(707)
    for k in range(12):
        w1, w2, rest = (-torch.rand(3, generator=generator, dtype=torch.float64).log()).tolist()
        total = w1 + w2 + rest
        U = torch.randn(N_DIGITS_7, 7, generator=generator, dtype=torch.float64)
        c = torch.randn(7, generator=generator, dtype=torch.float64)
        models.append(_OneHead(f"random model {k + 1}", (w1 / total, w2 / total), U, c))
    return models


def _digit(value) -> int | None:
    """An integer-like value (int, numpy integer, integral float, one-element tensor) or None."""
    if isinstance(value, bool | np.bool_):
        return None
    if isinstance(value, torch.Tensor) and value.numel() == 1 and not value.is_complex():
        value = value.item()
    if isinstance(value, np.ndarray) and value.size == 1:
        value = value.item()
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating) and math.isfinite(value) and value == int(value):
        return int(value)
    return None


def _as_pair(value) -> tuple[int, int]:
    """The reader's returned input ``(a, b)``, or :class:`Wrong`."""
    if value is None:
        raise Wrong("find_failure returned None: return the input it gets wrong, a pair (a, b) "
                    "of digits with a = x[t-1] and b = x[t-2]")
    single = _digit(value)
    if single is not None:
        raise Wrong(f"find_failure returned the number {single}; return the input, a pair "
                    "(a, b) of digits with a = x[t-1] and b = x[t-2], not a difference")
    if isinstance(value, torch.Tensor | np.ndarray):
        value = value.tolist() if value.ndim == 1 else value
    if not isinstance(value, tuple | list) or len(value) != 2:
        shown_value = repr(value)[:40]
        raise Wrong(f"find_failure should return a pair (a, b) of digits, got {shown_value}")
    a, b = (_digit(item) for item in value)
    if a is None or b is None:
        raise Wrong(f"find_failure should return two integer digits, got {value!r}"[:120])
    if not (0 <= a < N_DIGITS_7 and 0 <= b < N_DIGITS_7):
        raise Wrong(f"the input ({a}, {b}) is not a pair of digits: both lie in 0 … 3")
    return a, b


def _one_head_hint(model: _OneHead, pair, seen: list) -> str:
    """Why a returned input that the model gets right was not forced to fail."""
    a, b = pair
    w1, w2 = model.w
    runs = ", ".join(f"({p}, {q}) → {r}" for (p, q), r in seen) or "no answers"
    base = (f"on {model.label} (w₁ = {w1:.2f}, w₂ = {w2:.2f}) your function saw {runs} and "
            f"returned ({a}, {b}), which the model gets right")
    right = {(p, q) for (p, q), r in seen if r == p - q}
    if (a, b) in right:
        return base + ": it had seen that answer, and it was right"
    if not seen:
        return (base + ": some model gets any fixed input right; run this one first — which "
                "input do two right answers force to be wrong?")
    if pair == (0, 1) and {(0, 0), (1, 0)} <= right:
        return (base + ": (0, 1) sits at τ = w₂ on the proof's line, maybe below w₁; beyond "
                "both right answers lies (1, 1), at τ = w₁ + w₂")
    if pair == (1, 0) and {(0, 0), (0, 1)} <= right:
        return (base + ": (1, 0) sits at τ = w₁ on the proof's line, maybe below w₂; beyond "
                "both right answers lies (1, 1), at τ = w₁ + w₂")
    return (base + ": for digits p < q, (p, p), (q, p), (p, q), (q, q) sit on one line of "
            "logits at τ = 0, w₁, w₂, w₁ + w₂; which one must then be wrong?")


@exercise("07.7", "One head that reads by position cannot do it")
def ex7(answer) -> None:
    """``answer``: the reader's ``find_failure(predict) -> (a, b)``.

    ``predict(a, b)`` runs a one-head, position-only model on ``x[t-1] = a``, ``x[t-2] = b`` and
    returns the difference it answers; ``find_failure`` may call it at most twice and must
    return an input the model gets wrong. It is run on the adversarial and random models of
    :func:`_one_head_models`; each returned input is checked with the model itself.
    """
    if not callable(answer):
        raise Wrong("answer should be your function find_failure (without calling it)")
    for model in _one_head_models():
        seen: list = []

        def predict(a, b, model=model, seen=seen):
            digits = (_digit(a), _digit(b))
            if None in digits or not all(0 <= v < N_DIGITS_7 for v in digits):
                raise ValueError(f"predict takes two digits 0 … 3, got ({a!r}, {b!r})")
            result = model.answer(*digits)
            seen.append((digits, result))
            return result

        pair = _as_pair(call_reader(answer, predict, name="find_failure"))
        if len(seen) > QUERY_BUDGET:
            raise Wrong(f"find_failure ran the model {len(seen)} times on {model.label}; it "
                        "may run it at most twice. A search finds a failure but proves nothing "
                        "about other models: which input do two right answers force to be "
                        "wrong?")
        if model.answer(*pair) == pair[0] - pair[1]:
            raise Wrong(_one_head_hint(model, pair, seen))


# ---------------------------------------------------------------------------------------------
# 07.8 — zero-ablating one head of the 2-head model of the difference task


def _task_model(model, name: str = "the model") -> None:
    """:class:`Wrong` unless ``model`` is a one-layer, 2-head model of the difference task."""
    from tformer.model import GPT
    from tformer.two_reads import N_DIGITS

    if not isinstance(model, GPT):
        raise Wrong(f"{name} should be the 2-head model you trained with two_reads.make_model "
                    f"and two_reads.train_model, got {type(model).__name__}")
    attn = getattr(model.blocks[0], "attn", None) if len(model.blocks) else None
    if (len(model.blocks) != 1 or attn is None or attn.n_heads != 2
            or model.config.n_vocab != 2 * N_DIGITS):
        raise Wrong(f"{name} should be a one-layer model of the difference task with two heads, "
                    "as two_reads.make_model(2, seed=1) builds it")


@functools.cache
def _own_two_head_model():
    """An untrained 2-head model of the task with large random weights, so that every head and
    every wrong ablation changes the logits clearly (built without touching the global RNG)."""
    from tformer.two_reads import make_model

    with torch.random.fork_rng():
        model = make_model(2, seed=8).eval()
    generator = torch.Generator().manual_seed(708)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.copy_(0.6 * torch.randn(parameter.shape, generator=generator))
    return model


def _snapshot(model):
    attn = model.blocks[0].attn
    return ({key: value.detach().clone() for key, value in model.state_dict().items()},
            attn.head_hook, attn.record)


def _what_changed(model, snapshot, head: int) -> str | None:
    """How ``ablate`` left the model (``None``: as it found it)."""
    state, hook, record = snapshot
    attn = model.blocks[0].attn
    now = model.state_dict()
    changed = [key for key, value in state.items()
               if key not in now or now[key].shape != value.shape or not torch.equal(now[key], value)]
    if changed:
        weight = now.get("blocks.0.attn.W_O.weight")
        cols = slice(head * attn.d_k, (head + 1) * attn.d_k)
        if weight is not None and weight.shape == state["blocks.0.attn.W_O.weight"].shape and \
                not weight[:, cols].any():
            return (f"ablate(model, {head}) zeroed head {head}'s columns of W_O and left them at "
                    "zero, so the model stays ablated for everything that follows: keep a copy "
                    "of the weight and put it back in a finally block (the checker has restored "
                    "your model)")
        names = ", ".join(changed[:3])
        return (f"ablate(model, {head}) changed the model's weights ({names}) and did not put "
                "them back: an ablation must leave the model as it found it (the checker has "
                "restored your model)")
    if attn.head_hook is not hook:
        return (f"ablate(model, {head}) left a head_hook installed on the attention layer, so "
                "the model stays ablated: remove it in a finally block, or use "
                "tformer.interp.ablate as a with block (the checker has removed it)")
    return None


def _restore(model, snapshot) -> None:
    state, hook, record = snapshot
    attn = model.blocks[0].attn
    try:
        with torch.no_grad():
            for key, value in model.state_dict().items():
                if key in state and value.shape == state[key].shape:
                    value.copy_(state[key])
    finally:
        attn.head_hook, attn.record = hook, record


def _ablation_hint(name: str, head: int, start: int, stop: int) -> str:
    """The hint for a typical wrong ablation of ``head`` (W_O columns ``start … stop - 1``)."""
    hints = {
        "rows": f"you zeroed rows {start} … {stop - 1} of W_O.weight: nn.Linear stores "
        f"(out, in), so those rows are output features of the layer, not head {head}'s input; "
        f"head {head} writes through the columns W_O.weight[:, {start}:{stop}] (its rows of "
        "W_O in the book's row convention, W_O = weight.T)",
        "rows_and_bias": f"you zeroed rows {start} … {stop - 1} of W_O.weight and of its bias: "
        "nn.Linear stores (out, in), so those are output features of the layer; head "
        f"{head} writes through the columns W_O.weight[:, {start}:{stop}]",
        "bias_too": f"you also zeroed W_O's bias: it belongs to the layer, not to head {head}; "
        f"zero-ablating head {head} removes only its write, head_{head} W_O^({head})",
        "values": f"you zeroed head {head}'s rows of W_V.weight but not its bias b_V: the head "
        f"still writes b_V W_O^({head}), since its weights sum to 1; zero its output, or its "
        "columns of W_O",
        "uniform": f"you zeroed head {head}'s queries or keys: that makes its attention uniform "
        "but does not stop it from writing; zero-ablation replaces the head's output by zeros",
        "other": f"you switched off the other head when asked for head {head}: heads are "
        "counted from 0, and head 0 owns the first d_k columns of W_O.weight",
        "both": "you switched off both heads; ablate(model, head) removes one head and keeps "
        "the other",
        "mean": f"that is a mean-ablation: head {head}'s output was replaced by its mean over the "
        "batch and the positions; zero-ablation replaces it by zeros",
        "mean_positions": f"that is a mean-ablation: head {head}'s output was replaced by its "
        "mean over the batch at each position; zero-ablation replaces it by zeros",
        "intact": "the logits are those of the intact model: your ablation never reached the "
        "forward pass (a hook on the wrong module, or a weight changed in a copy you did not run)",
    }
    return hints[name]


def _zeroed(*tensors) -> None:
    for tensor in tensors:
        if tensor is not None:
            tensor.zero_()


class _AblationVariants:
    """The logits ``(B, T, n_vocab)`` of the right zero-ablation of ``head`` (two ways: W_O's
    columns zeroed, a hook zeroing its output) and of the typical wrong ones, each computed on a
    copy of ``model`` when first asked for."""

    MISTAKES = ("rows", "rows_and_bias", "bias_too", "values", "uniform", "other", "both", "mean",
                "mean_positions")

    def __init__(self, model, x: torch.Tensor, head: int) -> None:
        self.model, self.x, self.head = model, x, head
        self.logits: dict[str, torch.Tensor] = {}

    def __getitem__(self, name: str) -> torch.Tensor:
        if name not in self.logits:
            twin = copy.deepcopy(self.model).eval()
            layer = twin.blocks[0].attn
            layer.head_hook = None
            with torch.no_grad():
                self._change(name, layer)
                self.logits[name] = twin(self.x).detach()
        return self.logits[name]

    def _change(self, name: str, layer) -> None:
        head, d_k, n_heads = self.head, layer.d_k, layer.n_heads
        cols = slice(head * d_k, (head + 1) * d_k)

        def bias(linear, part=slice(None)):
            return None if linear.bias is None else linear.bias[part]

        def columns(heads):
            _zeroed(*(layer.W_O.weight[:, h * d_k:(h + 1) * d_k] for h in heads))

        def replace_by(by):  # the head's output replaced by `by` (None: zeros)
            def hook(heads):
                heads = heads.clone()
                heads[:, head] = 0.0 if by is None else by
                return heads

            layer.head_hook = hook

        if name == "zero":
            columns([head])
        elif name == "zero_hook":
            replace_by(None)
        elif name == "rows":
            _zeroed(layer.W_O.weight[cols])
        elif name == "rows_and_bias":
            _zeroed(layer.W_O.weight[cols], bias(layer.W_O, cols))
        elif name == "bias_too":
            _zeroed(layer.W_O.weight[:, cols], bias(layer.W_O))
        elif name == "values":
            _zeroed(layer.W_V.weight[cols])
        elif name == "uniform":
            _zeroed(layer.W_Q.weight[cols], bias(layer.W_Q, cols))
        elif name == "other":
            columns([h for h in range(n_heads) if h != head][:1])
        elif name == "both":
            columns(range(n_heads))
        elif name in ("mean", "mean_positions"):
            outputs = _head_outputs(self.model, self.x)[:, head]  # (B, T, d_k)
            replace_by(outputs.mean(dim=(0, 1) if name == "mean" else 0))
        elif name != "intact":
            raise KeyError(name)


@torch.no_grad()
def _head_outputs(model, x: torch.Tensor) -> torch.Tensor:
    """The heads' outputs ``(B, h, T, d_k)`` of the intact model on ``x``, before ``W_O``."""
    twin = copy.deepcopy(model).eval()
    attn = twin.blocks[0].attn
    attn.head_hook, attn.record = None, True
    twin(x)
    return attn.last_head_outputs


def _accuracy_of(logits: torch.Tensor, targets: torch.Tensor) -> tuple[int, int]:
    """``(right, total)`` over the positions ``t ≥ 2``."""
    right = (logits[:, 2:].argmax(-1) == targets[:, 2:])
    return int(right.sum()), right.numel()


def _check_one_ablation(answer, model, head: int, whose: str) -> float:
    """Run the reader's ``ablate(model, head)``; return the checker's own accuracy."""
    from tformer.two_reads import test_batch

    x, targets = test_batch(n_digits=model.config.n_vocab // 2)
    snapshot = _snapshot(model)
    calls: list[tuple] = []

    def spy(module, args, output):
        tokens = args[0] if args else None
        if isinstance(tokens, torch.Tensor) and isinstance(output, torch.Tensor):
            calls.append((tokens.detach().clone(), output.detach().clone()))

    handle = model.register_forward_hook(spy)
    try:
        result = call_reader(answer, model, head, name="ablate")
    finally:
        handle.remove()
        changed = _what_changed(model, snapshot, head)
        if changed is not None:
            _restore(model, snapshot)
    if changed is not None:
        raise Wrong(changed)
    if result is None:
        raise Wrong(f"ablate(model, {head}) returned None: return the accuracy of the ablated "
                    "model on the held-out batch, a number between 0 and 1")
    value = as_number(result, name=f"ablate(model, {head})")
    variants = _AblationVariants(model, x, head)
    d_k = model.blocks[0].attn.d_k

    def hint(name: str) -> str:
        return f"{whose}, for head {head}: {_ablation_hint(name, head, head * d_k, (head + 1) * d_k)}"

    def close(output, name):
        logits = variants[name]
        return output.shape == logits.shape and torch.allclose(
            output.to(logits), logits, atol=1e-4, rtol=1e-4)

    def matches(value_, accuracy_):
        return math.isfinite(value_) and math.isclose(value_, accuracy_, abs_tol=1e-6)

    right, total = _accuracy_of(variants["zero"], targets)
    accuracy = right / total
    on_test = [output for tokens, output in calls
               if tokens.shape == x.shape and torch.equal(tokens.to(x.device).long(), x)]
    correct = [output for output in on_test if close(output, "zero") or close(output, "zero_hook")]

    def seen() -> list[str]:  # the wrong ablations whose logits the reader's model produced
        return [name for name in _AblationVariants.MISTAKES
                if any(close(output, name) for output in on_test)]

    if matches(value, accuracy) or any(matches(value, _accuracy_of(o, targets)[0] / total)
                                       for o in correct):
        if on_test and not correct and seen():  # the right number from a wrong ablation
            raise Wrong(hint(seen()[0]))
        return accuracy
    if calls and not on_test:
        shapes = ", ".join(sorted({str(tuple(tokens.shape)) for tokens, _ in calls}))
        raise Wrong(f"ablate(model, {head}) ran the model only on other sequences ({shapes}) "
                    "than the held-out batch two_reads.test_batch(): measure the accuracy on "
                    "that fixed held-out batch, as two_reads.accuracy does, not on training "
                    "batches")
    if on_test and not correct:
        if seen():
            raise Wrong(hint(seen()[0]))
        if any(close(output, "intact") for output in on_test):
            raise Wrong(hint("intact"))
        last = on_test[-1].to(variants["zero"])
        if last.shape == variants["zero"].shape:
            delta = last - variants["zero"]
            if float(delta.abs().max()) > 1e-3 and float(
                    (delta - delta.mean(dim=0)).abs().max()) < 1e-4:
                raise Wrong(f"{whose}, head {head}: your ablated model still adds the same "
                            "vector to every sequence, the head's output replaced by a "
                            "constant (a mean-ablation?); zero-ablation replaces it by zeros, so "
                            "the head writes nothing")
        raise Wrong(f"{whose}, head {head}: the logits of your ablated model on the held-out "
                    f"batch differ from those of zero-ablating head {head} (its output replaced "
                    "by zeros before W_O, W_O's bias kept)")
    if not on_test and matches(value, _accuracy_of(variants["zero_hook"], targets)[0] / total):
        return accuracy  # no forward pass seen, and the other right route's accuracy
    intact = _accuracy_of(variants["intact"], targets)[0] / total
    guesses = [
        (right, f"ablate returned the number of right positions, {right:,}; return the accuracy, "
         f"{right:,} / {total:,}"),
        (100 * accuracy, "that is a percentage; return the accuracy as a fraction between 0 and 1"),
        (accuracy * total / (total + 2 * x.shape[0]), "you counted positions 0 and 1 too, which "
         "have no target (-100); the accuracy is over the positions t ≥ 2"),
        (1 - accuracy, "that is the error rate, 1 - accuracy; return the accuracy"),
        (intact - accuracy, "that is the drop in accuracy; return the accuracy of the ablated "
         "model itself"),
    ]
    if not on_test:  # no forward pass seen: compare with the wrong ablations' accuracies
        guesses += [(_accuracy_of(variants[name], targets)[0] / total, hint(name))
                    for name in (*_AblationVariants.MISTAKES, "intact")]
    for guess, message in guesses:
        if math.isfinite(value) and math.isclose(value, guess, rel_tol=1e-6, abs_tol=1e-6):
            raise Wrong(message)
    raise Wrong(f"{whose}, with head {head} zero-ablated, {right:,} of the {total:,} held-out "
                f"positions t ≥ 2 are right (accuracy {accuracy:.4f}), but ablate(model, {head}) "
                f"returned {shown(value)}: zero head {head}'s output, then measure as "
                "two_reads.accuracy does")


@exercise("07.8", "Zero-ablating one head")
def ex8(answer, model=None, worse=None) -> None:
    """``answer``: the reader's ``ablate(model, head) -> accuracy``; ``model``: the reader's
    trained 2-head model; ``worse``: the head (0 or 1) whose ablation lowers the accuracy more.

    The ablation is tried on an untrained model with large random weights, then on ``model``;
    the expected accuracies and the typical wrong ablations are computed here on copies of the
    model (W_O's columns zeroed, or a hook that zeroes the head's output), and a forward hook
    records what the reader's function ran the model on.
    """
    if not callable(answer):
        raise Wrong("answer should be your function ablate (without calling it)")
    own = _own_two_head_model()
    for head in (0, 1):
        _check_one_ablation(answer, own, head, "on a model with random weights")
    if model is None:
        raise NotAttempted("ablate works on a model with random weights; now pass your trained "
                           "model and your answer: checks.ch07.ex8(ablate, model, worse)")
    _task_model(model, "the model")
    accuracies = [_check_one_ablation(answer, model, head, "on your model") for head in (0, 1)]
    if worse is None or worse is Ellipsis:
        raise NotAttempted("ablate is right; now give worse, the head whose ablation hurts "
                           "more")
    choice = _digit(worse)
    if choice is None or choice not in (0, 1):
        if choice == 2:
            raise Wrong("worse = 2: heads are counted from 0, so the two heads are 0 and 1")
        raise Wrong(f"worse should be a head index, 0 or 1, got {repr(worse)[:40]}")
    from tformer.two_reads import test_batch

    total = test_batch()[1][:, 2:].numel()
    counts = [round(a * total) for a in accuracies]
    if abs(counts[0] - counts[1]) <= 1:
        return  # a tie (one position apart is within the rounding of two right ablations)
    expected = int(counts[1] < counts[0])
    if choice != expected:
        raise Wrong(f"on your model, {counts[0]:,} of {total:,} held-out positions are right "
                    f"without head 0 and {counts[1]:,} without head 1: removing head "
                    f"{expected} leaves fewer right, so it hurts more")


# ---------------------------------------------------------------------------------------------
# 07.9 — the ranks of QK and OV circuits

CIRCUIT_RANKS = {
    "qk": [16, 16, 16, 16],
    "ov": [16, 16, 16, 16],
    "ov_pair": 32,
    "ov_layer": 64,
    "gqa_ov_pair": 16,
    "gqa_ov_layer": 32,
}
"""The ranks asked for in 07.9, for layers of width d = 64 with h = 4 heads (d_k = 16): the
standard layer and a GQA layer with h_kv = 2 (query heads 0 and 1 read key/value head 0). They
hold for generic weights (random ones included), whatever the seed: a product through k
dimensions has rank at most k, and for generic factors exactly min(k, …)."""


@functools.cache
def _circuit_layers() -> tuple:
    """The layers the reader's circuit functions are tried on: ``(label, layer)``.

    Built with :class:`tformer.multihead.MultiHeadAttention` (the functions take one) but read
    only through its weights; biases are non-zero, so a circuit that adds them is caught."""
    from tformer.multihead import MultiHeadAttention

    with torch.random.fork_rng():
        torch.manual_seed(709)
        return (
            ("h = 4, d = 32", MultiHeadAttention(32, 4)),
            ("h = 1, d = 16", MultiHeadAttention(16, 1)),
            ("GQA, h = 4, h_kv = 2, d = 32", MultiHeadAttention(32, 4, n_kv_heads=2)),
            ("MQA, h = 4, h_kv = 1, d = 16", MultiHeadAttention(16, 4, n_kv_heads=1)),
        )


def _circuit_parts(layer, i: int):
    """Head ``i``'s blocks in the row convention (``x @ W``): ``W_Q^(i)``, ``W_K^(g)``,
    ``W_V^(g)`` (``d × d_k``), ``W_O^(i)`` (``d_k × d``) and their biases; ``g = i // (h / h_kv)``
    is the key/value head that query head ``i`` reads."""
    d_k = layer.d_k
    group = i // (layer.n_heads // layer.n_kv_heads)
    q, kv = slice(i * d_k, (i + 1) * d_k), slice(group * d_k, (group + 1) * d_k)
    weight = {name: getattr(layer, name).weight.detach().double().T
              for name in ("W_Q", "W_K", "W_V", "W_O")}
    bias = {name: getattr(layer, name).bias.detach().double()
            for name in ("W_Q", "W_K", "W_V", "W_O")}
    return q, kv, weight, bias


def _qk_variants(layer, i: int) -> dict[str, torch.Tensor]:
    q, kv, W, b = _circuit_parts(layer, i)
    d, d_k = layer.d, layer.d_k
    variants = {
        "right": W["W_Q"][:, q] @ W["W_K"][:, kv].T,
        "bias": (W["W_Q"][:, q] + b["W_Q"][q]) @ (W["W_K"][:, kv] + b["W_K"][kv]).T,
        "input_slice": W["W_Q"].T[:, q] @ W["W_K"].T[:, kv].T
        if layer.n_kv_heads == layer.n_heads and d_k != d else None,
    }
    variants["transposed"] = variants["right"].T
    variants["scaled"] = variants["right"] / math.sqrt(d_k)
    if d_k == d:  # one head: W_Q W_K has the right shape too
        variants["no_transpose"] = W["W_Q"] @ W["W_K"]
        variants["pytorch_layout"] = W["W_Q"].T @ W["W_K"]
    return {name: value for name, value in variants.items() if value is not None}


def _ov_variants(layer, i: int) -> dict[str, torch.Tensor]:
    q, kv, W, b = _circuit_parts(layer, i)
    variants = {
        "right": W["W_V"][:, kv] @ W["W_O"][q],
        "bias": (W["W_V"][:, kv] + b["W_V"][kv]) @ W["W_O"][q] + b["W_O"],
        "value_bias": (W["W_V"][:, kv] + b["W_V"][kv]) @ W["W_O"][q],
        "W_O_rows": W["W_V"][:, kv] @ W["W_O"].T[q],
        "input_slice": W["W_V"].T[:, kv] @ W["W_O"][q]
        if layer.n_kv_heads == layer.n_heads and layer.d_k != layer.d else None,
    }
    variants["transposed"] = variants["right"].T
    return {name: value for name, value in variants.items() if value is not None}


def _circuit_hint(kind: str, name: str, i: int, d_k: int) -> str:
    """The hint for a typical wrong circuit ``name`` of head ``i`` (``kind``: QK or OV)."""
    start, stop = i * d_k, (i + 1) * d_k
    hints = {
        ("QK", "bias"): "you added the biases b_Q and b_K: the circuit is the bilinear part of "
        "the score, x_t W_Q^(i) W_K^(i)ᵀ x_sᵀ, biases left out",
        ("QK", "input_slice"): f"you sliced the input features of W_Q and W_K: head {i} owns "
        f"their output features {start} … {stop - 1}, the columns of W_Q = layer.W_Q.weight.T",
        ("QK", "transposed"): "that is W_K^(i) W_Q^(i)ᵀ, the transpose: the rows of the QK "
        "circuit index the query's input x_t, its columns the key's",
        ("QK", "scaled"): "you divided by √d_k: the circuit is W_Q^(i) W_K^(i)ᵀ; the scale "
        "belongs to the score, not to the circuit",
        ("QK", "no_transpose"): "that is W_Q W_K, without the transpose of W_K: the score "
        "q kᵀ = x_t W_Q (x_s W_K)ᵀ = x_t W_Q W_Kᵀ x_sᵀ",
        ("QK", "pytorch_layout"): "that is W_Qᵀ W_K: nn.Linear stores (out, in), so in the "
        "book's row convention W_Q = layer.W_Q.weight.T",
        ("OV", "bias"): "you added the biases b_V and b_O: the OV circuit W_V^(i) W_O^(i) is the "
        "linear map from an attended input to the head's write, biases left out",
        ("OV", "value_bias"): "you added the bias b_V: the OV circuit W_V^(i) W_O^(i) is the "
        "linear map, biases left out",
        ("OV", "W_O_rows"): f"you took rows {start} … {stop - 1} of layer.W_O.weight: nn.Linear "
        f"stores (out, in), so head {i} writes through its columns, W_O.weight[:, {start}:{stop}] "
        "(its rows of W_O = weight.T in the row convention)",
        ("OV", "input_slice"): f"you sliced the input features of W_V: head {i} owns its output "
        f"features {start} … {stop - 1}, the columns of W_V = layer.W_V.weight.T",
        ("OV", "transposed"): "that is (W_V^(i) W_O^(i))ᵀ: the rows of the OV circuit index the "
        "attended input x_s, its columns the output features",
    }
    return hints[(kind, name)]


def _wrong_group(layer, i: int, matrix: np.ndarray, kind: str) -> int | None:
    """The key/value head other than the right one whose circuit ``matrix`` is (GQA), if any."""
    q, kv, W, _ = _circuit_parts(layer, i)
    d_k = layer.d_k
    for k in range(layer.n_kv_heads):
        block = slice(k * d_k, (k + 1) * d_k)
        if block == kv:
            continue
        other = (W["W_Q"][:, q] @ W["W_K"][:, block].T if kind == "QK"
                 else W["W_V"][:, block] @ W["W_O"][q])
        if np.allclose(matrix, other.numpy(), atol=1e-6, rtol=1e-4):
            return k
    return None


def _check_circuit(function, kind: str, name: str) -> None:
    """Compare the reader's ``qk_circuit`` / ``ov_circuit`` with the right circuit of every head of
    every layer of :func:`_circuit_layers`, naming the typical mistakes."""
    variants_of = _qk_variants if kind == "QK" else _ov_variants
    circuit = "W_Q^(i) W_K^(i)ᵀ" if kind == "QK" else "W_V^(i) W_O^(i)"
    for label, layer in _circuit_layers():
        d, d_k = layer.d, layer.d_k
        gqa = layer.n_kv_heads != layer.n_heads
        for i in range(layer.n_heads):
            try:
                with torch.no_grad():
                    result = call_reader(function, layer, i, name=name)
            except Wrong as wrong:
                if gqa:
                    raise Wrong(f"{wrong} (on the layer {label}, W_K and W_V have only "
                                f"h_kv·d_k = {layer.n_kv_heads * d_k} output features: query "
                                "head i reads key/value head i // (h / h_kv))") from None
                if "cannot be multiplied" in str(wrong):
                    raise Wrong(f"{wrong} (in the row convention W_Q^(i), W_K^(i) and W_V^(i) "
                                f"are d × d_k and W_O^(i) is d_k × d: the circuit is {circuit})"
                                ) from None
                raise
            matrix = to_array(result, f"{name}(layer, {i})")
            shape = matrix.shape
            if shape == (d_k, d_k) and d_k != d:
                raise Wrong(f"{name}(layer, {i}) on the layer {label} has shape {shape}, d_k × d_k: "
                            "that is the product the other way round, inside the head; the "
                            f"circuit is a d × d map of the residual stream, ({d}, {d})")
            if shape in ((d, d_k), (d_k, d)) and d_k != d:
                raise Wrong(f"{name}(layer, {i}) on the layer {label} has shape {shape}: that is "
                            f"one factor; the circuit is the product of two, a ({d}, {d}) matrix")
            if shape == (d + 1, d + 1):
                raise Wrong(f"{name}(layer, {i}) on the layer {label} has shape {shape}: the "
                            "biases do not belong in the circuit, which is the "
                            f"({d}, {d}) product of the weights")
            if shape != (d, d):
                raise Wrong(f"{name}(layer, {i}) on the layer {label} has shape {shape}; the "
                            f"circuit is a ({d}, {d}) matrix")
            variants = {key: value.numpy() for key, value in variants_of(layer, i).items()}
            if np.allclose(matrix, variants["right"], atol=1e-6, rtol=1e-4):
                continue
            for variant, value in variants.items():
                if variant != "right" and np.allclose(matrix, value, atol=1e-6, rtol=1e-4):
                    raise Wrong(f"{name}(layer, {i}) on the layer {label}: "
                                f"{_circuit_hint(kind, variant, i, d_k)}")
            group = _wrong_group(layer, i, matrix, kind) if gqa else None
            if group is not None:
                right = i // (layer.n_heads // layer.n_kv_heads)
                raise Wrong(f"{name}(layer, {i}) on the layer {label}: query head {i} reads "
                            f"key/value head {right}, not {group}: head i reads i // (h / h_kv), "
                            "the heads of a group are consecutive")
            raise Wrong(f"{name}(layer, {i}) on the layer {label} is not head {i}'s {kind} "
                        f"circuit {circuit} (row convention, biases left out): check which slice "
                        "of each weight belongs to the head")


def _rank_cases():
    """``(description, matrix, rank)``: low-rank float32 products at three scales, genuine small
    singular values, float64, a tall matrix and a zero matrix."""
    generator = torch.Generator().manual_seed(79)
    A = torch.randn(48, 12, generator=generator)
    B = torch.randn(12, 48, generator=generator)
    product = A @ B
    U = torch.linalg.qr(torch.randn(48, 48, generator=generator, dtype=torch.float64))[0]
    V = torch.linalg.qr(torch.randn(48, 48, generator=generator, dtype=torch.float64))[0]
    spectrum = torch.tensor([1.0] * 6 + [3e-3] * 6 + [0.0] * 36, dtype=torch.float64)
    return [
        ("P = A @ B, a 48 × 48 float32 product of rank 12", product, 12),
        ("1e-8 · P", product * 1e-8, 12),
        ("1e6 · P", product * 1e6, 12),
        ("a 48 × 48 float32 matrix of rank 12 whose six smallest singular values are 3e-3 of the "
         "largest", ((U * spectrum) @ V.T).float(), 12),
        ("P in float64", A.double() @ B.double(), 12),
        ("A, a 48 × 12 matrix", A, 12),
        ("an 8 × 8 matrix of zeros", torch.zeros(8, 8), 0),
    ]


def _check_rank_function(function) -> None:
    for description, matrix, expected in _rank_cases():
        result = call_reader(function, matrix.clone(), name="rank")
        if isinstance(result, torch.Tensor):
            raise Wrong(f"rank({description}) returned a tensor, {repr(result)[:30]}: return a "
                        "Python int, e.g. int(torch.linalg.matrix_rank(matrix))")
        value = _digit(result)
        if value is None or isinstance(result, float | np.floating):
            raise Wrong(f"rank({description}) returned {repr(result)[:40]}: return a Python int, "
                        "the number of singular values above the tolerance")
        if value == expected:
            continue
        if description.startswith("P = A") and value > expected:
            raise Wrong(f"rank(P) = {value}, but P = A @ B passes through 12 dimensions: its "
                        "singular values beyond the 12th are float32 rounding noise, about 1e-7 "
                        "of the largest, not 0. Count only singular values above a tolerance "
                        "relative to the largest (torch.linalg.matrix_rank's default is "
                        "σ_max · max(m, n) · eps)")
        if description in ("1e-8 · P", "1e6 · P"):
            raise Wrong(f"rank({description}) = {value}, but scaling a matrix does not change its "
                        "rank: your tolerance is absolute; make it relative to the largest "
                        "singular value (rtol, not atol)")
        if description.startswith("a 48 × 48") and value < expected:
            raise Wrong(f"rank = {value} for a matrix of rank 12 whose six smallest singular values "
                        "are 3e-3 of the largest: your tolerance is too large; float32 noise is "
                        "about 1e-7 of the largest singular value, so a relative tolerance "
                        "between (say 1e-5) keeps every genuine singular value")
        raise Wrong(f"rank({description}) returned {value}; its rank is {expected}")


def _rank_entry(answer, key: str):
    value = answer[key]
    if key in ("qk", "ov"):
        if isinstance(value, torch.Tensor | np.ndarray):
            raise Wrong(f"{key} is a {type(value).__name__}: give a list of 4 Python ints, one "
                        "rank per head, e.g. [rank(qk_circuit(layer, i)) for i in range(4)]")
        if not isinstance(value, list | tuple) or len(value) != 4:
            raise Wrong(f"{key} should be a list of 4 ranks, one per head of the layer")
        items = list(value)
    else:
        items = [value]
    for item in items:
        if isinstance(item, torch.Tensor):
            raise Wrong(f"{key} holds a tensor, {repr(item)[:30]}: a rank is a count; give "
                        "int(...) of it")
        if _digit(item) is None or isinstance(item, float | np.floating):
            raise Wrong(f"{key} should hold Python ints (ranks), got {repr(item)[:40]}")
    return [int(item) for item in items] if key in ("qk", "ov") else int(items[0])


def _rank_hint(key: str, value) -> str:
    """Why a rank the reader typed is not the one of :data:`CIRCUIT_RANKS`."""
    if key in ("qk", "ov"):
        if 64 in value:
            return (f"{key} = {value}: 64 is d, the width of the residual stream; each circuit "
                    "is a product through the head's d_k = 16 dimensions, so its rank is at "
                    "most d_k")
        return (f"{key} = {value}: each circuit W (d × d_k) times (d_k × d) has rank at most "
                "d_k = 16, and exactly 16 for generic weights")
    hints = {
        ("ov_pair", 16): "ov_pair = 16 is one head's rank: two heads write through two different "
        "16-dimensional subspaces, so their sum reaches 2·d_k = 32",
        ("ov_pair", 64): "ov_pair = 64: a sum of two matrices of rank 16 has rank at most 32",
        ("ov_layer", 16): "ov_layer is the sum of all four heads' OV circuits, W_V W_O with every "
        "head in it: rank up to min(d, h·d_k) = 64",
        ("ov_layer", 32): "ov_layer sums all four heads, not two: W_V W_O, rank up to "
        "min(d, h·d_k) = 64",
        ("gqa_ov_pair", 32): "in the GQA layer query heads 0 and 1 share key/value head 0, so "
        "their OV circuits are W_V^(0) W_O^(0) + W_V^(0) W_O^(1) = W_V^(0) (W_O^(0) + W_O^(1)): "
        "one 16-dimensional value space, rank at most d_k = 16",
        ("gqa_ov_layer", 64): "the GQA layer's W_V is d × h_kv·d_k = 64 × 32: every head reads one "
        "of two value heads, so the layer's OV map has rank at most h_kv·d_k = 32",
        ("gqa_ov_layer", 16): "the GQA layer has two key/value heads of d_k = 16 each: its OV map "
        "W_V^(0) (W_O^(0) + W_O^(1)) + W_V^(1) (W_O^(2) + W_O^(3)) reaches rank 32",
    }
    if (key, value) in hints:
        return hints[(key, value)]
    return (f"{key} = {value} is not the rank your rank function gives for it: compute it, and "
            "check it against the bound (≤ d_k, ≤ 2·d_k, ≤ min(d, h·d_k))")


@exercise("07.9", "Circuit ranks")
def ex9(answer, qk_circuit=None, ov_circuit=None, rank=None) -> None:
    """``answer``: dict of ranks (keys of :data:`CIRCUIT_RANKS`) for the notebook's layers;
    ``qk_circuit(layer, i)``, ``ov_circuit(layer, i)``: the reader's ``(d, d)`` circuits;
    ``rank(matrix)``: the reader's numerical rank (a Python int).

    The functions are tried on the layers of :func:`_circuit_layers` and the matrices of
    :func:`_rank_cases`, the circuits compared with products of the weights' slices computed
    here (float64), the ranks with the bounds, which generic weights attain.
    """
    if not isinstance(answer, Mapping):
        raise Wrong("answer should be a dict of ranks with the keys "
                    f"{', '.join(CIRCUIT_RANKS)}")
    missing = [key for key in CIRCUIT_RANKS if key not in answer]
    if missing:
        raise Wrong(f"the dict is missing the key(s) {missing}")
    values = {key: _rank_entry(answer, key) for key in CIRCUIT_RANKS}
    if rank is None or qk_circuit is None or ov_circuit is None:
        raise NotAttempted("pass your functions too: checks.ch07.ex9(answer, qk_circuit, "
                           "ov_circuit, rank)")
    _check_rank_function(rank)
    _check_circuit(qk_circuit, "QK", "qk_circuit")
    _check_circuit(ov_circuit, "OV", "ov_circuit")
    for key, expected in CIRCUIT_RANKS.items():
        if values[key] != expected:
            raise Wrong(_rank_hint(key, values[key]))


def _wrong_mha(kind: str):
    def wrong(x, W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O, n_heads, mask=None):
        return _variant(x, W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O, n_heads, mask, kind)

    return wrong


def _shapes(**changes):
    answer = dict(EXPECTED_SHAPES, d_k=D_K)
    answer.update(changes)
    return answer


class _LazyArgs:
    """Checker arguments built on first use (so importing this module trains no model)."""

    def __init__(self, build) -> None:
        self.build = build

    def __iter__(self):
        return iter(self.build())


# --- typical mistakes of 07.7 – 07.9 (tests/test_mistakes.py) --------------------------------


def _forced(predict):
    """07.7's right answer: two runs, then the input the proof forces to fail."""
    if predict(0, 0) != 0:
        return (0, 0)
    if predict(1, 0) != 1:
        return (1, 0)
    return (1, 1)


def _forced_wrong_side(predict):
    if predict(0, 0) != 0:
        return (0, 0)
    if predict(1, 0) != 1:
        return (1, 0)
    return (0, 1)


def _search_all(predict):
    for a in range(N_DIGITS_7):
        for b in range(N_DIGITS_7):
            if predict(a, b) != a - b:
                return (a, b)
    return (0, 0)


def _returns_seen(predict):
    predict(0, 0)
    return (0, 0)


@functools.cache
def _mistake_model():
    """An untrained 2-head model with large random weights: the reader's model in 07.8's
    mistakes (cheap, and every wrong ablation changes its logits)."""
    from tformer.two_reads import make_model

    with torch.random.fork_rng():
        model = make_model(2, seed=9).eval()
    generator = torch.Generator().manual_seed(809)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.copy_(0.6 * torch.randn(parameter.shape, generator=generator))
    return model


def _accuracy_right(model, head) -> float:
    """07.8's right answer: W_O's columns of ``head`` zeroed, then put back."""
    from tformer.two_reads import accuracy

    attn = model.blocks[0].attn
    saved = attn.W_O.weight.detach().clone()
    try:
        with torch.no_grad():
            attn.W_O.weight[:, head * attn.d_k:(head + 1) * attn.d_k] = 0.0
        return accuracy(model)
    finally:
        with torch.no_grad():
            attn.W_O.weight.copy_(saved)


def _drop(model, head) -> float:
    """Returns the drop in accuracy instead of the accuracy."""
    from tformer.two_reads import accuracy

    return accuracy(model) - _accuracy_right(model, head)


def _ablate_by(change, restore=True, data="test"):
    """A reader's ``ablate`` that applies ``change(attn, head)`` to a weight (restored or not)."""
    from tformer.two_reads import accuracy, difference_batch

    def ablate(model, head):
        attn = model.blocks[0].attn
        saved = {k: v.detach().clone() for k, v in attn.state_dict().items()}
        try:
            with torch.no_grad():
                change(attn, head)
            if data == "test":
                return accuracy(model)
            x, targets = difference_batch(512, generator=torch.Generator().manual_seed(1001))
            with torch.no_grad():
                predictions = model(x).argmax(-1)
            return float((predictions[:, 2:] == targets[:, 2:]).float().mean())
        finally:
            if restore:
                attn.load_state_dict(saved)
                attn.head_hook = None

    return ablate


def _by_hook(replace):
    def change(attn, head):
        def hook(outputs):
            outputs = outputs.clone()
            outputs[:, head] = replace(outputs[:, head])
            return outputs

        attn.head_hook = hook

    return change


def _columns(attn, head):
    attn.W_O.weight[:, head * attn.d_k:(head + 1) * attn.d_k] = 0.0


def _worse_reversed():
    model = _mistake_model()
    accuracies = [_accuracy_right(model, head) for head in (0, 1)]
    return model, int(accuracies[0] < accuracies[1])  # the head that hurts less


def _qk_right(layer, i):
    d_k, g = layer.d_k, i // (layer.n_heads // layer.n_kv_heads)
    W_Q, W_K = layer.W_Q.weight.detach().T, layer.W_K.weight.detach().T
    return W_Q[:, i * d_k:(i + 1) * d_k] @ W_K[:, g * d_k:(g + 1) * d_k].T


def _ov_right(layer, i):
    d_k, g = layer.d_k, i // (layer.n_heads // layer.n_kv_heads)
    W_V, W_O = layer.W_V.weight.detach().T, layer.W_O.weight.detach().T
    return W_V[:, g * d_k:(g + 1) * d_k] @ W_O[i * d_k:(i + 1) * d_k]


def _rank_right(matrix):
    return int(torch.linalg.matrix_rank(matrix))


def _qk_with_biases(layer, i):
    d_k = layer.d_k
    q = slice(i * d_k, (i + 1) * d_k)
    g = i // (layer.n_heads // layer.n_kv_heads)
    k = slice(g * d_k, (g + 1) * d_k)
    W_Q = layer.W_Q.weight.detach().T[:, q] + layer.W_Q.bias.detach()[q]
    W_K = layer.W_K.weight.detach().T[:, k] + layer.W_K.bias.detach()[k]
    return W_Q @ W_K.T


def _ov_rows_of_weight(layer, i):
    d_k, g = layer.d_k, i // (layer.n_heads // layer.n_kv_heads)
    W_V = layer.W_V.weight.detach().T
    return W_V[:, g * d_k:(g + 1) * d_k] @ layer.W_O.weight.detach()[i * d_k:(i + 1) * d_k]


def _qk_ungrouped(layer, i):
    d_k, k = layer.d_k, i % layer.n_kv_heads
    W_Q, W_K = layer.W_Q.weight.detach().T, layer.W_K.weight.detach().T
    return W_Q[:, i * d_k:(i + 1) * d_k] @ W_K[:, k * d_k:(k + 1) * d_k].T


_CIRCUITS = (_qk_right, _ov_right, _rank_right)


def _ranks(**changes):
    return {**{key: (list(value) if isinstance(value, list) else value)
               for key, value in CIRCUIT_RANKS.items()}, **changes}


_LAB_07_8 = _LazyArgs(lambda: (_mistake_model(), 0))
_WORSE_REVERSED = _LazyArgs(_worse_reversed)


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
    "07.7": [
        Mistake("always (1, 1), without running the model", lambda: lambda predict: (1, 1),
                hint="run this one first"),
        Mistake("searches all 16 inputs", lambda: _search_all, hint="at most twice"),
        Mistake("(0, 1) after two right answers", lambda: _forced_wrong_side,
                hint="maybe below w₁"),
        Mistake("returns the difference, not the input", lambda: lambda predict: predict(0, 0),
                hint="not a difference"),
        Mistake("returns an input it saw answered right", lambda: _returns_seen,
                hint="it had seen that answer"),
        Mistake("digits out of range", lambda: lambda predict: (4, 0), hint="0 … 3"),
    ],
    "07.8": [
        Mistake("rows of W_O.weight", lambda: _ablate_by(
            lambda attn, h: attn.W_O.weight[h * attn.d_k:(h + 1) * attn.d_k].zero_()),
            hint="rows 0 … 15 of W_O.weight", args=_LAB_07_8),
        Mistake("mean-ablation", lambda: _ablate_by(_by_hook(
            lambda part: part.mean(dim=(0, 1), keepdim=True).expand_as(part))),
            hint="mean-ablation", args=_LAB_07_8),
        Mistake("zeroed in place, never restored", lambda: _ablate_by(_columns, restore=False),
                hint="restored your model", args=_LAB_07_8),
        Mistake("both heads", lambda: _ablate_by(
            lambda attn, h: attn.W_O.weight.zero_()), hint="both heads", args=_LAB_07_8),
        Mistake("the other head", lambda: _ablate_by(lambda attn, h: _columns(attn, 1 - h)),
                hint="counted from 0", args=_LAB_07_8),
        Mistake("training data", lambda: _ablate_by(_columns, data="train"),
                hint="held-out batch", args=_LAB_07_8),
        Mistake("the drop in accuracy", lambda: _drop, hint="drop in accuracy", args=_LAB_07_8),
        Mistake("W_V's rows, bias kept", lambda: _ablate_by(
            lambda attn, h: attn.W_V.weight[h * attn.d_k:(h + 1) * attn.d_k].zero_()),
            hint="b_V", args=_LAB_07_8),
        Mistake("hook left installed", lambda: _ablate_by(
            _by_hook(torch.zeros_like), restore=False), hint="head_hook", args=_LAB_07_8),
        Mistake("worse: the head that hurts less", lambda: _accuracy_right,
                hint="hurts more", args=_WORSE_REVERSED),
    ],
    "07.9": [
        Mistake("rank as a tensor", lambda: _ranks(),
                hint="Python int", args=(_qk_right, _ov_right, torch.linalg.matrix_rank)),
        Mistake("no tolerance", lambda: _ranks(), hint="rounding noise", args=(
            _qk_right, _ov_right, lambda m: int(torch.linalg.matrix_rank(m, atol=0, rtol=0)))),
        Mistake("absolute tolerance", lambda: _ranks(), hint="relative", args=(
            _qk_right, _ov_right, lambda m: int(torch.linalg.matrix_rank(m, atol=1e-3)))),
        Mistake("tolerance too large", lambda: _ranks(), hint="too large", args=(
            _qk_right, _ov_right, lambda m: int(torch.linalg.matrix_rank(m, rtol=1e-2)))),
        Mistake("QK with the biases", lambda: _ranks(), hint="biases",
                args=(_qk_with_biases, _ov_right, _rank_right)),
        Mistake("QK as one factor", lambda: _ranks(), hint="one factor", args=(
            lambda layer, i: layer.W_Q.weight.detach().T[:, i * layer.d_k:(i + 1) * layer.d_k],
            _ov_right, _rank_right)),
        Mistake("W_O's rows of the (out, in) weight", lambda: _ranks(), hint="columns",
                args=(_qk_right, _ov_rows_of_weight, _rank_right)),
        Mistake("GQA heads grouped by i % h_kv", lambda: _ranks(), hint="consecutive",
                args=(_qk_ungrouped, _ov_right, _rank_right)),
        Mistake("QK transposed", lambda: _ranks(), hint="transpose",
                args=(lambda layer, i: _qk_right(layer, i).T, _ov_right, _rank_right)),
        Mistake("d instead of d_k", lambda: _ranks(qk=[64] * 4), hint="width of the residual",
                args=_CIRCUITS),
        Mistake("GQA pair as two value heads", lambda: _ranks(gqa_ov_pair=32),
                hint="share key/value head 0", args=_CIRCUITS),
        Mistake("GQA layer as full width", lambda: _ranks(gqa_ov_layer=64),
                hint="h_kv·d_k = 32", args=_CIRCUITS),
        Mistake("pair as one head", lambda: _ranks(ov_pair=16), hint="one head's rank",
                args=_CIRCUITS),
        Mistake("ranks as a tensor", lambda: _ranks(ov=torch.tensor([16] * 4)), hint="list of 4",
                args=_CIRCUITS),
    ],
}
