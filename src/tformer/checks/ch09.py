"""Checkers for chapter 9, *Encoders, decoders and cross-attention*.

Expected values come from closed forms or from PyTorch itself (``torch.nn.MultiheadAttention``,
``torch.nn.functional.cross_entropy``) — never from the ``tformer`` code the chapter studies.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch
from torch.nn import functional as F

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


@exercise("09.1", "Patches of a larger image")
def ex1(answer) -> None:
    """``answer``: dict ``{"tokens", "values", "cost_ratio"}`` for a 384 × 384 image in
    32-pixel patches, the cost relative to a 224 × 224 image in 16-pixel patches."""
    if not isinstance(answer, Mapping) or not {"tokens", "values", "cost_ratio"} <= set(answer):
        raise Wrong('answer should be a dict {"tokens": ..., "values": ..., "cost_ratio": ...}')
    tokens_new, tokens_standard = (384 // 32) ** 2, (224 // 16) ** 2
    tokens = as_number(answer["tokens"], "the token count")
    if tokens == 384 // 32:
        raise Wrong("12 is the number of patches along one side; the grid is 12 × 12")
    if tokens == 32 * 32 * 3:
        raise Wrong("3,072 is the number of values in one patch, not the number of patches")
    expect_number(tokens, tokens_new, name="the token count")
    values = as_number(answer["values"], "the values per patch")
    if values == 32 * 32:
        raise Wrong("a colour patch has three values per pixel (R, G, B)")
    expect_number(values, 32 * 32 * 3, name="the values per patch")
    ratio = as_number(answer["cost_ratio"], "the cost ratio")
    if abs(ratio - tokens_new / tokens_standard) < 1e-3:
        raise Wrong("that is the ratio of token counts; attention compares every pair of tokens")
    if abs(ratio - tokens_standard / tokens_new) < 1e-3 or abs(
        ratio - (tokens_standard / tokens_new) ** 2
    ) < 1e-3:
        raise Wrong("the ratio is upside down: new cost divided by the standard cost")
    expect_number(ratio, (tokens_new / tokens_standard) ** 2, name="the cost ratio",
                  rel_tol=1e-3, rounding_tol=0.01)


@exercise("09.2", "The shapes of cross-attention")
def ex2(answer) -> None:
    """``answer``: dict with shapes ``Q``, ``K``, ``weights``, ``outputs`` and ``residual``.

    Setting: batch 2, source of 12 tokens, target prefix of 5, d = 512, h = 8.
    """
    batch, s_src, s_tgt, d, h = 2, 12, 5, 512, 8
    expected = {
        "Q": (batch, h, s_tgt, d // h),
        "K": (batch, h, s_src, d // h),
        "weights": (batch, h, s_tgt, s_src),
        "outputs": (batch, s_tgt, d),
    }
    if not isinstance(answer, Mapping):
        raise Wrong("answer should be a dict with keys Q, K, weights, outputs, residual")
    missing = [key for key in (*expected, "residual") if key not in answer]
    if missing:
        raise Wrong(f"the dict is missing the key(s) {missing}")
    for key, shape in expected.items():
        given = as_shape(answer[key], key)
        if given == shape:
            continue
        if key == "weights" and given == (batch, h, s_src, s_tgt):
            raise Wrong("weights are (queries, keys): the queries come from the target")
        if key in ("Q", "K") and len(given) == 4 and given[2] != shape[2]:
            side = "target (decoder)" if key == "Q" else "source (encoder output)"
            raise Wrong(f"{key} comes from the {side}; its position axis has {shape[2]} entries")
        if key == "outputs" and given[1:2] == (s_src,):
            raise Wrong("the output has one row per query, i.e. per target position")
        raise Wrong(f"{key} should have shape {shape}, not {given}")
    residual = str(answer["residual"]).strip().lower()
    if residual not in {"decoder", "encoder"}:
        raise Wrong('residual should be the string "decoder" or "encoder"')
    if residual == "encoder":
        raise Wrong("the output has T_tgt rows: it is added back to the decoder's own stream")


def _big_model_counts() -> tuple[int, int, int]:
    d, d_ff = 1024, 4096
    attention = 4 * d * d + 4 * d
    mlp = d * d_ff + d_ff + d_ff * d + d
    return attention, mlp, 2 * d


@exercise("09.3", "Parameters of the big Transformer's 6 + 6 layers")
def ex3(answer) -> None:
    """``answer``: parameters of all 12 layers of the big model (d = 1024, h = 16,
    d_ff = 4096, biases, LayerNorms), embeddings excluded."""
    attention, mlp, norm = _big_model_counts()
    encoder_layer = attention + mlp + 2 * norm
    decoder_layer = 2 * attention + mlp + 3 * norm
    expected = 6 * encoder_layer + 6 * decoder_layer
    answer = as_number(answer, "the parameter count")
    if answer == 12 * encoder_layer:
        raise Wrong("decoder layers are larger: they add cross-attention and a third LayerNorm")
    if answer == 6 * (encoder_layer - 2 * norm) + 6 * (decoder_layer - 3 * norm):
        raise Wrong("you left out the LayerNorms (γ and β, 2d per LayerNorm)")
    if answer == 6 * encoder_layer + 6 * (decoder_layer - norm):
        raise Wrong("almost: count the decoder's LayerNorms again (one per sub-layer)")
    no_bias = expected - 6 * (4 * 1024 + 4096 + 1024) - 6 * (8 * 1024 + 4096 + 1024)
    if answer == no_bias:
        raise Wrong("the linear maps have biases: 4d per attention block, d_ff + d per MLP")
    expect_number(answer, expected, name="the parameter count")


def _reference_cross(d: int, d_context: int, n_heads: int, seed: int):
    torch.manual_seed(seed)
    reference = torch.nn.MultiheadAttention(
        d, n_heads, bias=False, kdim=d_context, vdim=d_context, batch_first=True,
        dtype=torch.float64,
    )
    return reference.eval()


@exercise("09.4", "Multi-head cross-attention, checked against torch.nn.MultiheadAttention")
def ex4(answer) -> None:
    """``answer``: ``cross_attention(x, memory, W_Q, W_K, W_V, W_O, n_heads)`` → ``(B, T_tgt, d)``.

    ``x`` ``(B, T_tgt, d)``, ``memory`` ``(B, T_src, d_context)``; row convention, no biases:
    ``W_Q`` (d, d), ``W_K``/``W_V`` (d_context, d), ``W_O`` (d, d).
    """
    for n_heads, d, d_context, s_tgt, s_src in ((2, 8, 8, 3, 5), (4, 16, 12, 6, 4)):
        reference = _reference_cross(d, d_context, n_heads, seed=10 * n_heads + s_src)
        x = torch.randn(2, s_tgt, d, dtype=torch.float64)
        memory = torch.randn(2, s_src, d_context, dtype=torch.float64)
        if reference._qkv_same_embed_dim:  # PyTorch packs the three when kdim == vdim == d
            projections = reference.in_proj_weight.chunk(3)
        else:
            projections = (reference.q_proj_weight, reference.k_proj_weight,
                           reference.v_proj_weight)
        w_q, w_k, w_v = (w.detach().T.contiguous() for w in projections)
        w_o = reference.out_proj.weight.detach().T.contiguous()
        with torch.no_grad():
            expected, _ = reference(x, memory, memory, need_weights=False)
        result = call_reader(answer, x.clone(), memory.clone(), w_q, w_k, w_v, w_o, n_heads,
                             name="your cross_attention")
        if isinstance(result, tuple) and result:
            result = result[0]
        setting = f"(h = {n_heads}, d = {d}, d_context = {d_context}, T_tgt = {s_tgt}, T_src = {s_src})"
        if isinstance(result, torch.Tensor) and result.shape == (2, s_src, d):
            raise Wrong(f"{setting}: one output row per *source* position — queries come from x")
        if isinstance(result, torch.Tensor) and result.shape == expected.shape:
            result = result.detach().to(torch.float64)
            for variant, hint in (
                (_cross_unscaled, "the scores are not divided by √d_k"),
                (_self_attention_instead, "keys and values come from memory, not from x"),
            ):
                try:
                    wrong = variant(x, memory, w_q, w_k, w_v, w_o, n_heads)
                except RuntimeError:
                    continue
                if wrong.shape == result.shape and torch.allclose(result, wrong, atol=1e-6):
                    raise Wrong(f"{setting}: {hint}")
        expect_tensor(result, expected, name=f"your output {setting}",
                      axes=("batch", "target positions", "features"), atol=1e-6, rtol=1e-5)


@exercise("09.5", "The masked-language-model loss")
def ex5(answer) -> None:
    """``answer``: ``mlm_loss(logits (B, T, n_vocab), targets (B, T))`` → scalar tensor.

    ``targets`` hold ``-100`` at positions that were not chosen; the loss is the mean
    cross-entropy over the chosen positions only.
    """
    generator = torch.Generator().manual_seed(9)
    logits = torch.randn(3, 10, 7, generator=generator, dtype=torch.float64)
    tokens = torch.randint(7, (3, 10), generator=generator)
    chosen = torch.rand(3, 10, generator=generator) < 0.3
    chosen[0, 0] = True
    targets = torch.where(chosen, tokens, torch.full_like(tokens, -100))
    expected = F.cross_entropy(logits.reshape(-1, 7), targets.reshape(-1), ignore_index=-100)
    result = call_reader(answer, logits.clone(), targets.clone(), name="your mlm_loss")
    value = as_number(result, "your loss")
    if math.isnan(value):
        raise Wrong("the loss is NaN — did you pass -100 as a class index to log_softmax/gather?")
    if isinstance(result, torch.Tensor):
        all_positions = F.cross_entropy(logits.reshape(-1, 7), tokens.reshape(-1))
        clamped = F.cross_entropy(logits.reshape(-1, 7), targets.clamp(min=0).reshape(-1))
        if min(abs(value - float(all_positions)), abs(value - float(clamped))) < 1e-6:
            raise Wrong("that averages over every position; score only the chosen ones")
        summed = expected * chosen.sum()
        if abs(value - float(summed)) < 1e-6:
            raise Wrong("that is the sum over chosen positions; take the mean")
        if abs(value - float(summed) / chosen.numel()) < 1e-6:
            raise Wrong("you divided by all positions; divide by the number of chosen ones")
    expect_number(value, float(expected), name="your loss", rel_tol=1e-6)


def _mlm_all_positions(logits, targets):
    tokens = targets.clamp(min=0)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens.reshape(-1))


def _mlm_sum(logits, targets):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                           ignore_index=-100, reduction="sum")


def _mlm_divide_by_all(logits, targets):
    return _mlm_sum(logits, targets) / targets.numel()


def _self_attention_instead(x, memory, w_q, w_k, w_v, w_o, n_heads):
    """Keys and values from x (self-attention), not from the encoder's memory."""
    batch, s_tgt, d = x.shape
    d_k = d // n_heads
    q = (x @ w_q).view(batch, s_tgt, n_heads, d_k).transpose(1, 2)
    source = x if x.shape[-1] == w_k.shape[0] else x[..., : w_k.shape[0]]
    k = (source @ w_k).view(batch, s_tgt, n_heads, d_k).transpose(1, 2)
    v = (source @ w_v).view(batch, s_tgt, n_heads, d_k).transpose(1, 2)
    heads = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_k), -1) @ v
    return heads.transpose(1, 2).reshape(batch, s_tgt, d) @ w_o


def _cross_unscaled(x, memory, w_q, w_k, w_v, w_o, n_heads):
    batch, s_tgt, d = x.shape
    d_k = d // n_heads
    q = (x @ w_q).view(batch, s_tgt, n_heads, d_k).transpose(1, 2)
    k = (memory @ w_k).view(batch, -1, n_heads, d_k).transpose(1, 2)
    v = (memory @ w_v).view(batch, -1, n_heads, d_k).transpose(1, 2)
    heads = torch.softmax(q @ k.transpose(-2, -1), -1) @ v
    return heads.transpose(1, 2).reshape(batch, s_tgt, d) @ w_o


def _cross_queries_from_memory(x, memory, w_q, w_k, w_v, w_o, n_heads):
    batch, s_src, _ = memory.shape
    d = w_o.shape[0]
    d_k = d // n_heads
    q = (memory @ w_k).view(batch, s_src, n_heads, d_k).transpose(1, 2)
    k = (memory @ w_k).view(batch, s_src, n_heads, d_k).transpose(1, 2)
    v = (memory @ w_v).view(batch, s_src, n_heads, d_k).transpose(1, 2)
    heads = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_k), -1) @ v
    return heads.transpose(1, 2).reshape(batch, s_src, d) @ w_o


_RIGHT_SHAPES = {"Q": (2, 8, 5, 64), "K": (2, 8, 12, 64), "weights": (2, 8, 5, 12),
                 "outputs": (2, 5, 512), "residual": "decoder"}
_TOKENS, _STANDARD = (384 // 32) ** 2, (224 // 16) ** 2
_BIG = _big_model_counts()

MISTAKES: dict[str, list[Mistake]] = {
    "09.1": [
        Mistake("patches per side", lambda: {"tokens": 12, "values": 3072,
                                             "cost_ratio": (144 / 196) ** 2},
                "along one side"),
        Mistake("ratio of token counts, not squared",
                lambda: {"tokens": 144, "values": 3072, "cost_ratio": 144 / 196},
                "every pair of tokens"),
        Mistake("forgot the colour channels", lambda: {"tokens": 144, "values": 1024,
                                                       "cost_ratio": (144 / 196) ** 2},
                "three values per pixel"),
        Mistake("ratio upside down", lambda: {"tokens": 144, "values": 3072,
                                              "cost_ratio": (196 / 144) ** 2},
                "upside down"),
    ],
    "09.2": [
        Mistake("weights transposed (keys × queries)",
                lambda: {**_RIGHT_SHAPES, "weights": (2, 8, 12, 5)}, "queries come from"),
        Mistake("queries from the source", lambda: {**_RIGHT_SHAPES, "Q": (2, 8, 12, 64)},
                "target (decoder)"),
        Mistake("residual added to the encoder output",
                lambda: {**_RIGHT_SHAPES, "residual": "encoder"}, "decoder's own stream"),
    ],
    "09.3": [
        Mistake("twelve encoder layers", lambda: 12 * (_BIG[0] + _BIG[1] + 2 * _BIG[2]),
                "decoder layers are larger"),
        Mistake("no LayerNorms", lambda: 6 * (_BIG[0] + _BIG[1]) + 6 * (2 * _BIG[0] + _BIG[1]),
                "left out the LayerNorms"),
        Mistake("two LayerNorms in the decoder layer",
                lambda: 6 * (_BIG[0] + _BIG[1] + 2 * _BIG[2])
                + 6 * (2 * _BIG[0] + _BIG[1] + 2 * _BIG[2]),
                "decoder's LayerNorms"),
    ],
    "09.4": [
        Mistake("keys and values from x (self-attention)", lambda: _self_attention_instead,
                "keys and values come from memory"),
        Mistake("no 1/√d_k", lambda: _cross_unscaled, "√d_k"),
        Mistake("queries from the memory", lambda: _cross_queries_from_memory,
                "queries come from x"),
    ],
    "09.5": [
        Mistake("averaged over every position", lambda: _mlm_all_positions,
                "score only the chosen"),
        Mistake("summed instead of averaged", lambda: _mlm_sum, "take the mean"),
        Mistake("divided by all positions", lambda: _mlm_divide_by_all,
                "divide by the number of chosen"),
    ],
}
