"""Looking inside a trained model: attention patterns, per-head outputs, head scores, ablations.

Everything here works on any :class:`tformer.model.GPT` through the hooks of
:class:`tformer.multihead.MultiHeadAttention` (``record``, ``last_weights``,
``last_head_outputs``, ``head_hook``); nothing in the model is changed permanently.

* :func:`capture` — run the model once and keep every layer's attention weights
  ``(B, h, T, T)`` and per-head outputs ``(B, h, T, d_k)``.
* :func:`previous_token_score`, :func:`induction_score` — how much of a head's attention goes
  to the previous position / to the token after the previous occurrence of the current token;
  :func:`head_scores` and :func:`classify_heads` apply them to every head.
* :func:`ablate` — a context manager that replaces some heads' outputs by zero or by their mean
  (zero- and mean-ablation); :func:`mean_head_outputs` computes those means.
* :func:`composition_patch` — knock heads out in what a later layer reads through its queries,
  keys or values only (Q-, K- and V-composition, told apart).
* :func:`ov_circuit` (``W_V^h W_O^h``, ``d × d``), :func:`full_ov_circuit` (``W_E W_V^h W_O^h
  W_U``, token to logit) and :func:`copying_score` — how often a head maps a token to itself.
* :func:`token_losses`, :func:`icl_score` — loss at every position, and the in-context-learning
  score (loss late in the context minus loss early on; Olsson et al., 2022).

Scores are defined on sequences ``[BOS] + r + r`` with ``len(r) = L`` (see
:mod:`tformer.data.sequences`): positions ``1 … L`` hold the first copy, ``L + 1 … 2L`` the second.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

import torch
from torch import nn
from torch.nn import functional as F

Head = tuple[int, int]
"""A head is named by ``(layer, head)``, both counted from 0."""

HeadKind = Literal["previous-token", "induction", "other"]


def attention_layers(model: nn.Module) -> list[nn.Module]:
    """The :class:`~tformer.multihead.MultiHeadAttention` module of every block, in order."""
    blocks = getattr(model, "blocks", None)
    if blocks is None:
        raise TypeError(f"expected a tformer GPT with .blocks, got {type(model).__name__}")
    return [block.attn for block in blocks]


@dataclass
class Capture:
    """What :func:`capture` returns.

    ``logits`` ``(B, T, n_vocab)``; ``weights`` ``(n_layers, B, h, T, T)`` (queries as rows, keys
    as columns); ``head_outputs`` ``(n_layers, B, h, T, d_k)`` — each head's output *before*
    ``W_O`` (after any ablation hook).
    """

    logits: torch.Tensor
    weights: torch.Tensor
    head_outputs: torch.Tensor


@torch.no_grad()
def capture(model: nn.Module, tokens: torch.Tensor) -> Capture:
    """Run ``model`` on ``tokens`` ``(B, T)`` and keep every head's attention and output.

    The ``record`` flags are restored afterwards, so training runs are not slowed down.
    """
    layers = attention_layers(model)
    previous = [layer.record for layer in layers]
    try:
        for layer in layers:
            layer.record = True
        logits = model(tokens)
        weights = torch.stack([layer.last_weights for layer in layers])
        head_outputs = torch.stack([layer.last_head_outputs for layer in layers])
    finally:
        for layer, flag in zip(layers, previous):
            layer.record = flag
    return Capture(logits.detach(), weights, head_outputs)


def _check_pattern(weights: torch.Tensor) -> None:
    if weights.ndim < 2 or weights.shape[-1] != weights.shape[-2]:
        raise ValueError(
            f"weights must have shape (..., T, T) with queries as rows and keys as columns, "
            f"got {tuple(weights.shape)}"
        )


def previous_token_score(weights: torch.Tensor) -> torch.Tensor:
    """Mean attention from each position to the one just before it.

    ``weights`` ``(..., T, T)`` → ``(...)``: the average of ``weights[..., t, t − 1]`` over the
    query positions ``t = 1 … T − 1`` (position 0 has no predecessor). A perfect previous-token
    head scores 1; a head spreading its attention uniformly over the causal past scores
    ``(H_T − 1)/(T − 1)`` (``H_T`` the harmonic number), about 0.096 at ``T = 33``.
    """
    _check_pattern(weights)
    n_positions = weights.shape[-1]
    if n_positions < 2:
        raise ValueError("a previous-token score needs at least two positions")
    return torch.diagonal(weights, offset=-1, dim1=-2, dim2=-1).mean(dim=-1)


def induction_score(weights: torch.Tensor, length: int) -> torch.Tensor:
    """Mean attention to the token *after* the previous occurrence of the current token.

    For sequences ``[BOS] + r + r`` with ``len(r) = length = L``, the query at position ``t`` of
    the second copy (``t = L + 1 … T − 1``) holds the token that first appeared at ``t − L``;
    an induction head attends to ``t − L + 1``, the token that came next. The score is the average
    of ``weights[..., t, t − L + 1]`` over those queries: ``(..., T, T)`` → ``(...)``.
    A perfect induction head scores 1; a uniform causal head scores the mean of ``1/(t + 1)``.
    """
    _check_pattern(weights)
    n_positions = weights.shape[-1]
    if length < 2 or n_positions < length + 2:
        raise ValueError(
            f"need L >= 2 and T >= L + 2 positions (a second copy to score), got L={length}, "
            f"T={n_positions}"
        )
    queries = torch.arange(length + 1, n_positions, device=weights.device)
    return weights[..., queries, queries - length + 1].mean(dim=-1)


def head_scores(
    model: nn.Module, tokens: torch.Tensor, length: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Previous-token and induction scores of every head, averaged over the batch.

    ``tokens`` ``(B, 1 + 2L)`` are repeated sequences with segment length ``length``.
    Returns two ``(n_layers, n_heads)`` tensors: (previous-token scores, induction scores).
    """
    weights = capture(model, tokens).weights  # (n_layers, B, h, T, T)
    return (
        previous_token_score(weights).mean(dim=1),
        induction_score(weights, length).mean(dim=1),
    )


def classify_heads(
    previous: torch.Tensor, induction: torch.Tensor, threshold: float = 0.5
) -> dict[Head, HeadKind]:
    """Name every head from its scores (both ``(n_layers, n_heads)``).

    A head whose larger score exceeds ``threshold`` is a ``"previous-token"`` or ``"induction"``
    head accordingly; otherwise ``"other"``. With ``threshold = 0.5`` a head must put most of its
    attention on the one position its role predicts — far above the ≈ 0.1 a uniform head gets.
    """
    if previous.shape != induction.shape or previous.ndim != 2:
        raise ValueError(
            f"both score tensors must be (n_layers, n_heads) of the same shape, got "
            f"{tuple(previous.shape)} and {tuple(induction.shape)}"
        )
    kinds: dict[Head, HeadKind] = {}
    for layer in range(previous.shape[0]):
        for head in range(previous.shape[1]):
            prev, ind = float(previous[layer, head]), float(induction[layer, head])
            if max(prev, ind) <= threshold:
                kinds[(layer, head)] = "other"
            else:
                kinds[(layer, head)] = "previous-token" if prev >= ind else "induction"
    return kinds


def find_head(kinds: dict[Head, HeadKind], kind: HeadKind, scores: torch.Tensor) -> Head | None:
    """The head of ``kind`` with the highest score in ``scores`` ``(n_layers, n_heads)``, or None."""
    candidates = [head for head, label in kinds.items() if label == kind]
    return max(candidates, key=lambda head: float(scores[head]), default=None)


@torch.no_grad()
def mean_head_outputs(model: nn.Module, tokens: torch.Tensor) -> torch.Tensor:
    """Each head's output averaged over batch and positions: ``(n_layers, n_heads, d_k)``.

    These are the replacement values of mean-ablation: the head still writes its typical
    output, but one that no longer depends on the sequence.
    """
    return capture(model, tokens).head_outputs.mean(dim=(1, 3))


def _normalise_heads(heads: Head | Iterable[Head]) -> list[Head]:
    if isinstance(heads, tuple) and len(heads) == 2 and all(isinstance(i, int) for i in heads):
        return [heads]
    return [tuple(head) for head in heads]  # type: ignore[misc]


@contextmanager
def ablate(
    model: nn.Module,
    heads: Head | Iterable[Head],
    kind: Literal["zero", "mean"] = "zero",
    *,
    means: torch.Tensor | None = None,
) -> Iterator[nn.Module]:
    """Knock heads out for the duration of a ``with`` block.

    ``heads``: one ``(layer, head)`` or several. ``kind="zero"`` replaces the head's output (before
    ``W_O``) by zeros at every position; ``kind="mean"`` by its average output ``means[layer,
    head]`` (from :func:`mean_head_outputs`, shape ``(n_layers, n_heads, d_k)``). The weights are
    not touched, and any hook already installed keeps running first. On exit the previous hooks
    come back, even after an exception::

        with ablate(model, (0, 1)):
            loss = ...   # the model without head 1 of layer 0
    """
    if kind not in ("zero", "mean"):
        raise ValueError(f"kind must be 'zero' or 'mean', got {kind!r}")
    if kind == "mean" and means is None:
        raise ValueError("mean-ablation needs means=mean_head_outputs(model, reference_tokens)")
    layers = attention_layers(model)
    chosen = _normalise_heads(heads)
    by_layer: dict[int, list[int]] = {}
    for layer, head in chosen:
        if not (0 <= layer < len(layers) and 0 <= head < layers[layer].n_heads):
            raise ValueError(
                f"no head {head} in layer {layer}: the model has {len(layers)} layers of "
                f"{layers[0].n_heads} heads (both counted from 0)"
            )
        by_layer.setdefault(layer, []).append(head)
    saved = {layer: layers[layer].head_hook for layer in by_layer}

    def make_hook(layer: int, previous_hook):
        def hook(outputs: torch.Tensor) -> torch.Tensor:  # (B, h, T, d_k)
            if previous_hook is not None:
                outputs = previous_hook(outputs)
            outputs = outputs.clone()
            for head in by_layer[layer]:
                if kind == "zero":
                    outputs[:, head] = 0.0
                else:
                    outputs[:, head] = means[layer, head].to(outputs)
            return outputs

        return hook

    try:
        for layer, previous_hook in saved.items():
            layers[layer].head_hook = make_hook(layer, previous_hook)
        yield model
    finally:
        for layer, previous_hook in saved.items():
            layers[layer].head_hook = previous_hook


@dataclass(frozen=True)
class HalfLosses:
    """Mean next-token cross-entropy (nats) on the first and on the second copy."""

    first: float
    second: float


def half_losses_from_logits(logits: torch.Tensor, tokens: torch.Tensor, length: int) -> HalfLosses:
    """Split the next-token loss of repeated sequences into halves.

    ``logits`` ``(B, T − 1, n_vocab)`` for inputs ``tokens[:, :-1]``; ``tokens`` ``(B, T)`` with
    ``T = 1 + 2L``. First half: predictions at input positions ``0 … L − 1`` (tokens ``r_1 … r_L``,
    unpredictable). Second half: predictions at ``L + 1 … 2L − 1`` (tokens ``r_2 … r_L`` of the
    copy, predictable by induction). See :func:`tformer.data.sequences.half_masks`.
    """
    from tformer.data.sequences import half_masks

    per_token = F.cross_entropy(logits.transpose(1, 2), tokens[:, 1:], reduction="none")
    first, second = half_masks(length)
    return HalfLosses(float(per_token[:, first].mean()), float(per_token[:, second].mean()))


@torch.no_grad()
def half_losses(model: nn.Module, tokens: torch.Tensor, length: int) -> HalfLosses:
    """:func:`half_losses_from_logits` for ``model`` run on ``tokens[:, :-1]``."""
    return half_losses_from_logits(model(tokens[:, :-1]), tokens, length)


def ov_circuit(model: nn.Module, layer: int, head: int) -> torch.Tensor:
    """A head's OV circuit ``W_V^h W_O^h``, ``(d, d)`` (as in chapter 7).

    ``W_V^h`` is the head's ``d × d_k`` slice of the value projection, ``W_O^h`` its ``d_k × d``
    slice of the output projection (rows convention: ``x W``): a residual-stream vector ``x`` at
    an attended position makes the head write ``x W_V^h W_O^h``. Biases are left out.
    """
    attn = attention_layers(model)[layer]
    if not 0 <= head < attn.n_heads:
        raise ValueError(f"no head {head} in layer {layer} (it has {attn.n_heads} heads)")
    cols = slice(head * attn.d_k, (head + 1) * attn.d_k)
    w_v = attn.W_V.weight[cols].T  # (d, d_k): nn.Linear stores (out, in)
    w_o = attn.W_O.weight[:, cols].T  # (d_k, d)
    return (w_v @ w_o).detach()


def full_ov_circuit(model: nn.Module, layer: int, head: int) -> torch.Tensor:
    """A head's *full* OV circuit, read from tokens to logits: ``W_E W_V^h W_O^h W_U``.

    ``(n_vocab, n_vocab)``: ``W_E`` ``(n_vocab, d)`` is the token embedding, ``W_U`` ``(d,
    n_vocab)`` the unembedding. Row ``i`` is the change in the logits when the head attends fully
    to a position holding (only) the embedding of token ``i``. Biases are left out — they do not
    depend on the token.
    """
    w_e = model.token_embedding.weight  # (n_vocab, d)
    w_u = model.unembed.weight.T  # (d, n_vocab)
    return (w_e @ ov_circuit(model, layer, head) @ w_u).detach()


def copying_score(circuit: torch.Tensor, tokens: Iterable[int] | None = None) -> float:
    """Top-1 accuracy of a token-to-logit matrix as a copier.

    ``circuit`` ``(n_vocab, n_vocab)``; restricted to the rows and columns ``tokens`` (default: all),
    the fraction of rows whose largest entry sits on the diagonal — the head, attending to token
    ``i``, raises the logit of ``i`` above every other candidate. Chance level is ``1/len(tokens)``.
    """
    if circuit.ndim != 2 or circuit.shape[0] != circuit.shape[1]:
        raise ValueError(f"circuit must be square (n_vocab, n_vocab), got {tuple(circuit.shape)}")
    device = circuit.device
    ids = torch.arange(circuit.shape[0], device=device) if tokens is None else torch.as_tensor(
        list(tokens), device=device
    )
    sub = circuit[ids][:, ids]
    return float((sub.argmax(dim=1) == torch.arange(len(ids), device=device)).float().mean())


def phase_change_step(
    losses: Iterable[float], plateau: float, *, window: int = 10, fraction: float = 0.5
) -> int | None:
    """The step at which a loss curve falls off its plateau, or ``None`` if it never does.

    ``losses``: one value per step. The curve is smoothed by a trailing mean over ``window`` steps;
    the phase change is the first step at which the smoothed loss drops below
    ``fraction · plateau`` (default: half of the plateau, e.g. ``0.5 · ln 63`` for the second-half
    loss of the induction lab). Later recoveries above the line do not move the mark.
    """
    values = torch.as_tensor(list(losses), dtype=torch.float64)
    if values.ndim != 1 or values.numel() == 0:
        raise ValueError("losses must be a non-empty sequence of numbers")
    if window < 1:
        raise ValueError(f"window must be positive, got {window}")
    cumulative = torch.cat([torch.zeros(1, dtype=values.dtype), values.cumsum(0)])
    steps = torch.arange(values.numel())
    starts = (steps - window + 1).clamp(min=0)
    smoothed = (cumulative[steps + 1] - cumulative[starts]) / (steps + 1 - starts)
    below = torch.nonzero(smoothed < fraction * plateau)
    return int(below[0]) if below.numel() else None


def chance_loss(n_vocab: int) -> float:
    """``ln(n_vocab − 1)``: the loss of a uniform guess over the content tokens (BOS excluded)."""
    return math.log(n_vocab - 1)


Path = Literal["queries", "keys", "values"]
"""The three inputs of a head through which it can read an earlier head's output."""


@torch.no_grad()
def composition_patch(
    model: nn.Module,
    tokens: torch.Tensor,
    heads: Head | Iterable[Head],
    into: Iterable[Path],
    *,
    layer: int,
    means: torch.Tensor,
) -> Capture:
    """Mean-ablate ``heads`` only in the ``into`` inputs of layer ``layer``'s attention.

    The residual stream entering block ``layer`` is computed twice: clean, and with ``heads``
    (all in earlier layers) mean-ablated (:func:`ablate`). Layer ``layer``'s queries, keys and
    values are each computed from the *patched* stream if named in ``into`` and from the clean
    one otherwise; the residual connection and every other path carry the clean stream. So
    ``into=["keys"]`` removes exactly what the heads contribute through K-composition,
    ``["queries"]`` through Q-composition, ``["values"]`` through V-composition, and ``[]``
    reproduces the clean model. Returns the logits ``(B, T, n_vocab)`` and layer ``layer``'s
    attention weights ``(B, h, T, T)`` in :class:`Capture` (``head_outputs`` of that layer,
    ``(B, h, T, d_k)``); works for attention-only and pre-norm blocks.
    """
    from tformer.multihead import merge_heads, split_heads

    into = set(into)
    unknown = into - {"queries", "keys", "values"}
    if unknown:
        raise ValueError(f"into may name 'queries', 'keys' and 'values' only, got {sorted(unknown)}")
    chosen = _normalise_heads(heads)
    if any(h_layer >= layer for h_layer, _ in chosen):
        raise ValueError(f"the patched heads {chosen} must sit in layers before layer {layer}")
    blocks = model.blocks
    if getattr(blocks[layer], "norm", "none") == "post":
        raise ValueError("composition_patch supports attention-only and pre-norm blocks only")
    streams = {}
    for name, context in (("clean", None), ("patched", chosen)):
        previous, model.record = model.record, True
        try:
            if context is None:
                model(tokens)
            else:
                with ablate(model, context, "mean", means=means):
                    model(tokens)
            streams[name] = model.residual_stream[layer]
        finally:
            model.record = previous
    block = blocks[layer]
    attn = block.attn

    def source(path: str) -> torch.Tensor:
        return block.ln1(streams["patched" if path in into else "clean"])

    weights = attn(source("queries"), context=source("keys")).weights  # (B, h, T, T)
    values = split_heads(attn.W_V(source("values")), attn.n_heads)
    head_outputs = weights @ values
    x = streams["clean"] + attn.W_O(merge_heads(head_outputs))
    if block.mlp is not None:
        x = x + block.mlp(block.ln2(x))
    for later in blocks[layer + 1 :]:
        x = later(x)
    logits = model.unembed(model.final_norm(x))
    return Capture(logits, weights, head_outputs)


@torch.no_grad()
def token_losses(model: nn.Module, tokens: torch.Tensor) -> torch.Tensor:
    """Next-token loss at every position, averaged over the batch: ``(T − 1,)``.

    Entry ``t − 1`` is the loss of predicting token ``t`` from tokens ``0 … t − 1`` (the "loss at
    token ``t``"), for ``tokens`` ``(B, T)``.
    """
    logits = model(tokens[:, :-1])
    per_token = F.cross_entropy(logits.transpose(1, 2), tokens[:, 1:], reduction="none")
    return per_token.mean(dim=0)


def icl_score(losses: torch.Tensor, late: int, early: int) -> float:
    """In-context-learning score: loss at token ``late`` minus loss at token ``early``.

    ``losses`` from :func:`token_losses` (entry ``t − 1`` is token ``t``). Olsson et al. (2022)
    use the 500th and the 50th token of 512-token contexts; negative means the model predicts
    better late in the context, having learned from the context itself.
    """
    if not 1 <= early < late <= losses.shape[-1]:
        raise ValueError(
            f"need 1 <= early < late <= {losses.shape[-1]} (tokens are counted from 0, and "
            f"token 0 is never predicted), got early={early}, late={late}"
        )
    return float(losses[..., late - 1] - losses[..., early - 1])


@dataclass(frozen=True)
class CopyFloor:
    """What repeated tokens inside the segment cost a copier that matches by content only.

    ``ambiguous``: fraction of second-half queries whose token occurs in the first copy with more
    than one distinct successor; ``loss``: the mean second-half loss (nats) of a copier that
    matches by content alone — it cannot tell the occurrences apart, so it spreads its prediction
    evenly over the successors of every occurrence of the token in the first copy.
    """

    ambiguous: float
    loss: float


def copy_floor(tokens: torch.Tensor, length: int) -> CopyFloor:
    """:class:`CopyFloor` of repeated sequences ``tokens`` ``(B, 1 + 2L)``, by direct count.

    For each second-half prediction (input position ``t = L + 1 … 2L − 1``, target ``tokens[t +
    1]``) it lists the successors ``tokens[j + 1]`` of every first-copy position ``j = 1 … L``
    with ``tokens[j] == tokens[t]``; the copier predicts their empirical distribution, so its loss
    is ``−ln(share of successors equal to the target)`` (``ln k`` for a token that occurs ``k``
    times in the segment). With distinct segment tokens there is one occurrence and the floor
    is 0.
    """
    rows = torch.as_tensor(tokens).tolist()
    n_ambiguous = n_queries = 0
    total = 0.0
    for row in rows:
        for t in range(length + 1, 2 * length):
            successors = [row[j + 1] for j in range(1, length + 1) if row[j] == row[t]]
            share = successors.count(row[t + 1]) / len(successors)
            total -= math.log(share)
            n_ambiguous += len(set(successors)) > 1
            n_queries += 1
    return CopyFloor(n_ambiguous / n_queries, total / n_queries)
