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


def _name_count(value: float, variants) -> None:
    """Raise the hint of the first typical wrong value (``(value, hint)`` pairs, computed from
    the exercise's own numbers) that ``value`` equals (to 1e-6, relative). None equals the
    right answer."""
    if not math.isfinite(value):
        return
    for wrong, hint in variants:
        if math.isclose(value, wrong, rel_tol=1e-6):
            raise Wrong(hint)


@exercise("09.1", "Patches of a larger image")
def ex1(answer) -> None:
    """``answer``: dict ``{"tokens", "values", "cost_ratio"}`` for a 384 × 384 image in
    32-pixel patches, the cost relative to a 224 × 224 image in 16-pixel patches."""
    if not isinstance(answer, Mapping) or not {"tokens", "values", "cost_ratio"} <= set(answer):
        raise Wrong('answer should be a dict {"tokens": ..., "values": ..., "cost_ratio": ...}')
    tokens_new, tokens_standard = (384 // 32) ** 2, (224 // 16) ** 2
    tokens = as_number(answer["tokens"], "the token count")
    _name_count(tokens, (
        (384 // 32, "12 is the number of patches along one side; the grid is 12 × 12"),
        (32 * 32 * 3, "3,072 is the number of values in one patch, not the number of patches"),
        (tokens_new + 1, "145 counts the class token; the question asks for the patches, "
         "12 × 12 = 144"),
        (tokens_standard, "196 is the standard setting's count; this image has 384/32 = 12 "
         "patches per side"),
        ((384 // 16) ** 2, "that is the count for 16-pixel patches; here a patch is 32 × 32 "
         "pixels"),
    ))
    expect_number(tokens, tokens_new, name="the token count")
    values = as_number(answer["values"], "the values per patch")
    _name_count(values, (
        (32 * 32, "a colour patch has three values per pixel (R, G, B)"),
        (16 * 16 * 3, "that is a 16 × 16 patch; here a patch is 32 × 32 pixels"),
        (384 * 384 * 3, "that is the whole image; give the values of one patch"),
    ))
    expect_number(values, 32 * 32 * 3, name="the values per patch")
    ratio = as_number(answer["cost_ratio"], "the cost ratio")
    expected = (tokens_new / tokens_standard) ** 2
    if abs(ratio - tokens_new / tokens_standard) < 1e-3:
        raise Wrong("that is the ratio of token counts; attention compares every pair of tokens")
    if abs(ratio - tokens_standard / tokens_new) < 1e-3 or abs(
        ratio - (tokens_standard / tokens_new) ** 2
    ) < 1e-3:
        raise Wrong("the ratio is upside down: new cost divided by the standard cost")
    if abs(ratio - expected) > 1e-3:
        _name_count(ratio, (
            (((tokens_new + 1) / (tokens_standard + 1)) ** 2, "that ratio counts the class "
             "token; the chapter compares patch tokens only, (144/196)²"),
            (12 / 14, "that is the ratio of patches per side; the cost grows with the square of "
             "the token count"),
            (100 * expected, "that is a percentage; give the factor new cost / standard cost"),
            (1 - expected, "that is the fraction saved, 1 − ratio; give the factor new cost / "
             "standard cost"),
        ))
    expect_number(ratio, expected, name="the cost ratio", rel_tol=1e-3, rounding_tol=0.01)


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
        if key == "weights" and given in ((batch, h, s_tgt, s_tgt), (batch, h, s_src, s_src)):
            raise Wrong("square weights belong to a self-attention; cross-attention pairs the "
                        f"{s_tgt} target queries with the {s_src} source keys")
        if key in ("Q", "K") and given == (batch, h, shape[2], d):
            raise Wrong(f"{key} gives every head the full width d; a head has d_k = d / h = "
                        f"{d // h} features")
        if key in ("Q", "K") and given == (batch, shape[2], h, d // h):
            raise Wrong(f"{key} = {given} is the shape after view but before transpose(1, 2)")
        if key in ("Q", "K") and len(given) == 4 and given[2] != shape[2]:
            side = "target (decoder)" if key == "Q" else "source (encoder output)"
            raise Wrong(f"{key} comes from the {side}; its position axis has {shape[2]} entries")
        if key == "outputs" and given == (batch, h, s_tgt, d // h):
            raise Wrong("that is the heads' output before they are merged and multiplied by W_O")
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
    d, d_ff = 1024, 4096
    attention, mlp, norm = _big_model_counts()
    encoder_layer = attention + mlp + 2 * norm
    decoder_layer = 2 * attention + mlp + 3 * norm
    expected = 6 * encoder_layer + 6 * decoder_layer
    value = as_number(answer, "the parameter count")
    _name_count(value, (
        (12 * encoder_layer, "decoder layers are larger: they add cross-attention and a third "
         "LayerNorm"),
        # 5 LayerNorms per encoder–decoder pair (10d) equal the 2 MLPs' biases (2(d_ff + d))
        (expected - 5 * 6 * norm, "you left out the LayerNorms (γ and β, 2d per LayerNorm), or "
         "the MLP biases (d_ff + d per layer): at this size both come to 61,440; count both"),
        (6 * encoder_layer + 6 * (decoder_layer - norm), "almost: count the decoder's "
         "LayerNorms again (one per sub-layer)"),
        (expected - 6 * (4 * d + d_ff + d) - 6 * (8 * d + d_ff + d), "the linear maps have "
         "biases: 4d per attention block, d_ff + d per MLP"),
        (expected - 5 * 6 * d, "each LayerNorm has γ and β: 2d parameters, not d"),
        (encoder_layer + decoder_layer, "that is one encoder layer and one decoder layer; the "
         "model has 6 of each"),
        (12 * decoder_layer, "that counts 12 decoder layers; the 6 encoder layers have no "
         "cross-attention and only two LayerNorms"),
        (expected - 6 * 4 * d - 6 * 8 * d, "the attention projections have biases too: 4d per "
         "attention block"),
        (6 * encoder_layer, "that is the 6 encoder layers only; add the 6 decoder layers"),
        (6 * decoder_layer, "that is the 6 decoder layers only; add the 6 encoder layers"),
        (expected + 2 * norm, "post-norm stacks have no final LayerNorm: one after every "
         "sub-layer is all"),
    ))
    expect_number(value, expected, name="the parameter count")


def _reference_cross(d: int, d_context: int, n_heads: int, seed: int):
    torch.manual_seed(seed)
    reference = torch.nn.MultiheadAttention(
        d, n_heads, bias=False, kdim=d_context, vdim=d_context, batch_first=True,
        dtype=torch.float64,
    )
    return reference.eval()


_SPLIT_BY_VIEW = ("the heads were split by view(B, h, T, d_k) alone, which cuts the rows across "
                  "positions; view as (B, T, h, d_k), then transpose(1, 2)")
_NOT_PROJECTED = "the merged heads were not multiplied by W_O: return merged @ W_O"
_CROSS_HINTS = {
    "unscaled": "the scores are not divided by √d_k",
    "self_attention": "keys and values come from memory, not from x",
    "causal": "you applied a causal mask; cross-attention lets every target position read every "
    "source token, so it needs no mask",
    "one_head": "the heads were not split: that is one head of width d; split it into n_heads "
    "heads of width d_k = d / h, each scaled by √d_k",
    "split_by_view": _SPLIT_BY_VIEW,
    "split_by_view_merged_by_transpose": _SPLIT_BY_VIEW,
    "merged_without_transpose": "the heads were merged by reshape alone; transpose(1, 2) back "
    "to (B, T_tgt, h, d_k) before reshape(B, T_tgt, d)",
    "softmax_over_queries": "the softmax ran over the target positions (dim=-2); run it over "
    "the source keys (dim=-1), so that each query's weights sum to 1",
    "no_output_projection": _NOT_PROJECTED,
    "scaled_by_d": "the scores were divided by √d, not by √d_k of one head",
    "scaled_by_d_k": "the scores were divided by d_k; divide them by √d_k",
    "keys_values_swapped": "W_K and W_V are swapped: the keys are memory @ W_K, the values "
    "memory @ W_V",
    "weights_transposed": "the weights were used as W.T (PyTorch's (out, in) layout); in the "
    "book's row convention Q = x @ W_Q",
}


def _cross_variant(x, memory, w_q, w_k, w_v, w_o, n_heads, kind):
    """A typical wrong cross-attention (``kind``: a key of :data:`_CROSS_HINTS`), float64."""
    if kind == "self_attention":
        return _self_attention_instead(x, memory, w_q, w_k, w_v, w_o, n_heads)
    batch, s_tgt, d = x.shape
    s_src = memory.shape[1]
    if kind == "one_head":
        n_heads = 1
    d_k = d // n_heads
    if kind == "keys_values_swapped":
        w_k, w_v = w_v, w_k
    if kind == "weights_transposed":
        w_q, w_k, w_v, w_o = (w.T for w in (w_q, w_k, w_v, w_o))
    view_alone = kind in ("split_by_view", "split_by_view_merged_by_transpose")

    def split(t, n_positions):
        if view_alone:
            return t.reshape(batch, n_heads, n_positions, d_k)
        return t.reshape(batch, n_positions, n_heads, d_k).transpose(1, 2)

    q, k, v = split(x @ w_q, s_tgt), split(memory @ w_k, s_src), split(memory @ w_v, s_src)
    scale = {"unscaled": 1.0, "scaled_by_d": d**0.5, "scaled_by_d_k": float(d_k)}.get(
        kind, d_k**0.5
    )
    scores = q @ k.transpose(-2, -1) / scale
    if kind == "causal":
        allowed = torch.ones(s_tgt, s_src, dtype=torch.bool).tril()
        scores = scores.masked_fill(~allowed, float("-inf"))
    heads = torch.softmax(scores, -2 if kind == "softmax_over_queries" else -1) @ v
    if kind in ("split_by_view", "merged_without_transpose"):
        merged = heads.reshape(batch, s_tgt, d)
    else:
        merged = heads.transpose(1, 2).reshape(batch, s_tgt, d)
    return merged if kind == "no_output_projection" else merged @ w_o


@exercise("09.4", "Multi-head cross-attention, checked against torch.nn.MultiheadAttention")
def ex4(answer) -> None:
    """``answer``: ``cross_attention(x, memory, W_Q, W_K, W_V, W_O, n_heads)`` → ``(B, T_tgt, d)``.

    ``x`` ``(B, T_tgt, d)``, ``memory`` ``(B, T_src, d_context)``; row convention, no biases:
    ``W_Q`` (d, d), ``W_K``/``W_V`` (d_context, d), ``W_O`` (d, d). A wrong output is compared
    with the typical wrong cross-attentions of :data:`_CROSS_HINTS` on the same data.
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
            if not torch.allclose(result, expected, atol=1e-6, rtol=1e-5):
                for kind, hint in _CROSS_HINTS.items():
                    try:
                        wrong = _cross_variant(x, memory, w_q, w_k, w_v, w_o, n_heads, kind)
                    except RuntimeError:
                        continue
                    if wrong.shape == result.shape and torch.allclose(
                        result, wrong, atol=1e-6, rtol=1e-5, equal_nan=True
                    ):
                        raise Wrong(f"{setting}: {hint}")
        expect_tensor(result, expected, name=f"your output {setting}",
                      axes=("batch", "target positions", "features"), atol=1e-6, rtol=1e-5)


def _mlm_variants(logits, targets, chosen, expected):
    """``(wrong loss, hint)`` for the typical wrong masked-language-model losses."""
    n_vocab = logits.shape[-1]
    tokens = targets.clamp(min=0)
    flat = logits.reshape(-1, n_vocab)
    yield (F.cross_entropy(flat, tokens.reshape(-1)),
           "that averages over every position; score only the chosen ones")
    summed = expected * chosen.sum()
    yield summed, "that is the sum over chosen positions; take the mean"
    yield summed / chosen.numel(), "you divided by all positions; divide by the number of " \
        "chosen ones"
    yield summed / chosen.shape[0], "you divided the sum by the batch size B; divide by the " \
        "number of chosen positions"
    for dim in (0, 1):
        log_probs = torch.log_softmax(logits, dim=dim)
        picked = log_probs.gather(-1, tokens[..., None]).squeeze(-1)
        yield (-picked[chosen].mean(),
               f"the log-softmax ran over dim={dim}; take it over the vocabulary (dim=-1)")
    per_token = F.cross_entropy(flat, targets.reshape(-1), ignore_index=-100,
                                reduction="none").reshape(targets.shape)
    counts = chosen.sum(dim=1)
    per_sequence = per_token.sum(dim=1) / counts.clamp(min=1)
    for mean in (per_sequence.mean(), per_sequence[counts > 0].mean()):
        yield (mean, "you averaged each sequence, then the sequences: a sequence with few "
               "chosen positions weighs as much as one with many; average over all chosen "
               "positions at once")
    yield (expected / math.log(2),
           "that is in bits (divided by log 2); cross-entropy from the natural log_softmax is "
           "in nats")
    yield (-expected, "the loss is negative: cross-entropy is −log p, mind the minus sign")
    probabilities = torch.softmax(logits, -1).gather(-1, tokens[..., None]).squeeze(-1)
    yield (-probabilities[chosen].mean(),
           "you averaged probabilities p, not log-probabilities: the loss is the mean of −log p")


@exercise("09.5", "The masked-language-model loss")
def ex5(answer) -> None:
    """``answer``: ``mlm_loss(logits (B, T, n_vocab), targets (B, T))`` → scalar tensor.

    ``targets`` hold ``-100`` at positions that were not chosen; the loss is the mean
    cross-entropy over the chosen positions only. The sequences hold different numbers of
    chosen positions, so a per-sequence mean differs from the mean over all chosen positions.
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
        raise Wrong("the loss is NaN, a 0/0: one sequence here has no chosen position, so a "
                    "mean per sequence divides by 0; average over all chosen positions at once")
    if abs(value - float(expected)) > 1e-6:
        for wrong, hint in _mlm_variants(logits, targets, chosen, expected):
            if abs(value - float(wrong)) < 1e-6:
                raise Wrong(hint)
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


def _wrong_cross(kind: str):
    def wrong(x, memory, W_Q, W_K, W_V, W_O, n_heads):
        return _cross_variant(x, memory, W_Q, W_K, W_V, W_O, n_heads, kind)

    return wrong


def _mlm_per_sequence(logits, targets):
    chosen = targets != -100
    picked = torch.log_softmax(logits, -1).gather(-1, targets.clamp(min=0)[..., None])[..., 0]
    return (-(picked * chosen).sum(1) / chosen.sum(1).clamp(min=1)).mean()


def _mlm_bits(logits, targets):
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=-100) / math.log(2)


def _mlm_over_positions(logits, targets):
    chosen = targets != -100
    picked = torch.log_softmax(logits, 1).gather(-1, targets.clamp(min=0)[..., None])[..., 0]
    return -picked[chosen].mean()


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
        Mistake("class token counted", lambda: {"tokens": 145, "values": 3072,
                                                "cost_ratio": (145 / 197) ** 2},
                "class token"),
        Mistake("class token in the ratio only", lambda: {"tokens": 144, "values": 3072,
                                                          "cost_ratio": (145 / 197) ** 2},
                "class token"),
        Mistake("16-pixel patches", lambda: {"tokens": 576, "values": 768,
                                             "cost_ratio": (576 / 196) ** 2},
                "16-pixel patches"),
    ],
    "09.2": [
        Mistake("weights transposed (keys × queries)",
                lambda: {**_RIGHT_SHAPES, "weights": (2, 8, 12, 5)}, "queries come from"),
        Mistake("queries from the source", lambda: {**_RIGHT_SHAPES, "Q": (2, 8, 12, 64)},
                "target (decoder)"),
        Mistake("residual added to the encoder output",
                lambda: {**_RIGHT_SHAPES, "residual": "encoder"}, "decoder's own stream"),
        Mistake("keys from the decoder, square weights",
                lambda: {**_RIGHT_SHAPES, "weights": (2, 8, 5, 5)}, "square weights"),
        Mistake("outputs per source token", lambda: {**_RIGHT_SHAPES, "outputs": (2, 12, 512)},
                "per target position"),
        Mistake("heads not merged", lambda: {**_RIGHT_SHAPES, "outputs": (2, 8, 5, 64)},
                "before they are merged"),
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
        Mistake("LayerNorm as d parameters",
                lambda: 6 * (_BIG[0] + _BIG[1] + 2 * 1024) + 6 * (2 * _BIG[0] + _BIG[1] + 3 * 1024),
                "not d"),
        Mistake("MLP biases forgotten",
                lambda: 6 * (_BIG[0] + 2 * 1024 * 4096 + 2 * _BIG[2])
                + 6 * (2 * _BIG[0] + 2 * 1024 * 4096 + 3 * _BIG[2]),
                "MLP biases"),
        Mistake("one layer of each", lambda: 3 * _BIG[0] + 2 * _BIG[1] + 5 * _BIG[2], "6 of each"),
        Mistake("twelve decoder layers", lambda: 12 * (2 * _BIG[0] + _BIG[1] + 3 * _BIG[2]),
                "12 decoder layers"),
    ],
    "09.4": [
        Mistake("keys and values from x (self-attention)", lambda: _self_attention_instead,
                "keys and values come from memory"),
        Mistake("no 1/√d_k", lambda: _cross_unscaled, "√d_k"),
        Mistake("queries from the memory", lambda: _cross_queries_from_memory,
                "queries come from x"),
        Mistake("causal mask in cross-attention", lambda: _wrong_cross("causal"), "causal mask"),
        Mistake("one head", lambda: _wrong_cross("one_head"), "not split"),
        Mistake("split by view alone", lambda: _wrong_cross("split_by_view"),
                "view as (B, T, h, d_k)"),
        Mistake("softmax over the targets", lambda: _wrong_cross("softmax_over_queries"),
                "dim=-2"),
        Mistake("W_O forgotten", lambda: _wrong_cross("no_output_projection"), "W_O"),
        Mistake("W_K and W_V swapped", lambda: _wrong_cross("keys_values_swapped"), "swapped"),
    ],
    "09.5": [
        Mistake("averaged over every position", lambda: _mlm_all_positions,
                "score only the chosen"),
        Mistake("summed instead of averaged", lambda: _mlm_sum, "take the mean"),
        Mistake("divided by all positions", lambda: _mlm_divide_by_all,
                "divide by the number of chosen"),
        Mistake("mean per sequence, then over the batch", lambda: _mlm_per_sequence,
                "averaged each sequence"),
        Mistake("loss in bits", lambda: _mlm_bits, "bits"),
        Mistake("log-softmax over the positions", lambda: _mlm_over_positions, "dim=1"),
    ],
}
