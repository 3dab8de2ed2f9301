"""The pieces a Transformer layer is built from, and the layer itself.

* :class:`LayerNorm` — normalises each token's vector on its own (never across the batch or
  the sequence), then scales by ``γ`` and shifts by ``β``.
* :class:`RMSNorm` — the modern variant: divide by the root mean square, no mean subtracted, no ``β``
  (Zhang & Sennrich, 2019).
* :class:`MLP` — the position-wise network ``d → d_ff → d`` (``d_ff = 4d`` by default).
* :class:`SwiGLU` — the gated MLP of LLaMA-style models, ``(SiLU(x W_gate) ⊙ x W_up) W_down``
  (Shazeer, 2020).
* :func:`scale_residual_projections` — GPT-2's initialisation of the projections that write into
  the residual stream, scaled by ``1/√(2L)``.
* :class:`TransformerBlock` — attention and MLP branches, each wrapped in a residual connection:

  pre-norm (GPT-2, the default)::        post-norm (the 2017 paper)::
      x = x + Attn(LN1(x))                   x = LN1(x + Attn(x))
      x = x + MLP(LN2(x))                    x = LN2(x + MLP(x))

* :class:`DecoderBlock` — the encoder–decoder's decoder layer: causal self-attention,
  cross-attention to the encoder output, MLP.

Every module maps ``(B, T, d)`` to ``(B, T, d)``, so layers stack.
"""

from __future__ import annotations

import math
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from tformer._validate import Tensorish, as_float_tensor, check_ndim
from tformer.multihead import KVCache, MultiHeadAttention

Norm = Literal["pre", "post", "none"]
Activation = Literal["gelu", "gelu_tanh", "relu"]


class LayerNorm(nn.Module):
    """``γ ⊙ (x − mean(x)) / sqrt(var(x) + ε) + β`` over the last axis of ``x`` ``(..., d)``.

    The mean and (biased) variance are taken over each token's ``d`` features only, so a token's
    result does not depend on the other tokens or the batch. Parameters ``weight`` (``γ``, ones)
    and ``bias`` (``β``, zeros), named as in ``torch.nn.LayerNorm``.
    """

    def __init__(self, d: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.d, self.eps = d, eps
        self.weight = nn.Parameter(torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[-1] != self.d:
            raise ValueError(f"LayerNorm expects last dimension d = {self.d}, got {tuple(x.shape)}")
        mean = x.mean(dim=-1, keepdim=True)
        variance = x.var(dim=-1, keepdim=True, unbiased=False)
        return self.weight * (x - mean) / torch.sqrt(variance + self.eps) + self.bias


class RMSNorm(nn.Module):
    """``γ ⊙ x / sqrt(mean(x²) + ε)`` over the last axis of ``x`` ``(..., d)``.

    No mean is subtracted and there is no shift ``β``: ``d`` parameters instead of LayerNorm's
    ``2d``. Parameter ``weight`` (``γ``, ones), named as in ``torch.nn.RMSNorm``.
    """

    def __init__(self, d: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.d, self.eps = d, eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[-1] != self.d:
            raise ValueError(f"RMSNorm expects last dimension d = {self.d}, got {tuple(x.shape)}")
        mean_square = (x * x).mean(dim=-1, keepdim=True)
        return self.weight * x / torch.sqrt(mean_square + self.eps)


ACTIVATIONS = {
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "relu": F.relu,
}


class MLP(nn.Module):
    """Position-wise ``fc_out(activation(fc_in(x)))``: ``(..., d) → (..., d_ff) → (..., d)``.

    Parameters: ``2·d·d_ff + d_ff + d`` (``8d² + 5d`` for ``d_ff = 4d``).
    """

    def __init__(
        self, d: int, d_ff: int | None = None, activation: Activation = "gelu", bias: bool = True
    ) -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
        self.d_ff = 4 * d if d_ff is None else d_ff
        self.activation = activation
        self.fc_in = nn.Linear(d, self.d_ff, bias=bias)
        self.fc_out = nn.Linear(self.d_ff, d, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc_out(ACTIVATIONS[self.activation](self.fc_in(x)))


class SwiGLU(nn.Module):
    """Gated MLP ``fc_out(SiLU(gate(x)) ⊙ up(x))``: ``(..., d) → (..., d_ff) → (..., d)``.

    Three ``d × d_ff`` matrices and no biases (as in LLaMA): ``3·d·d_ff`` parameters, so
    ``d_ff = 8d/3`` matches the ``8d²`` of a ``4d`` ReLU/GELU MLP. ``SiLU(z) = z·σ(z)``.
    """

    def __init__(self, d: int, d_ff: int | None = None, bias: bool = False) -> None:
        super().__init__()
        self.d_ff = (8 * d) // 3 if d_ff is None else d_ff
        self.gate = nn.Linear(d, self.d_ff, bias=bias)
        self.up = nn.Linear(d, self.d_ff, bias=bias)
        self.fc_out = nn.Linear(self.d_ff, d, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc_out(F.silu(self.gate(x)) * self.up(x))


def _norm_or_identity(norm: Norm, d: int, eps: float) -> nn.Module:
    if norm not in ("pre", "post", "none"):
        raise ValueError(f"norm must be 'pre', 'post' or 'none', got {norm!r}")
    return nn.Identity() if norm == "none" else LayerNorm(d, eps)


class TransformerBlock(nn.Module):
    """One Transformer layer: multi-head self-attention and an MLP, each with a residual.

    Args:
        d: width; n_heads: heads; d_ff: MLP width (default ``4d``).
        norm: ``"pre"`` (normalise the branch input; residual path is the identity),
            ``"post"`` (normalise after the addition, as in the 2017 paper) or ``"none"``.
        activation: the MLP's non-linearity. causal: decoder (``True``) or encoder (``False``).
        mlp: ``False`` gives an attention-only layer. rope: rotary positions in attention.

    ``forward(x (B, T, d), mask=None, *, cache=None) → (B, T, d)``.
    """

    def __init__(
        self,
        d: int,
        n_heads: int,
        d_ff: int | None = None,
        *,
        norm: Norm = "pre",
        activation: Activation = "gelu",
        causal: bool = True,
        mlp: bool = True,
        rope: bool = False,
        bias: bool = True,
        eps: float = 1e-5,
    ) -> None:
        super().__init__()
        self.norm = norm
        self.ln1 = _norm_or_identity(norm, d, eps)
        self.attn = MultiHeadAttention(d, n_heads, bias=bias, causal=causal, rope=rope)
        self.ln2 = _norm_or_identity(norm, d, eps) if mlp else None
        self.mlp = MLP(d, d_ff, activation, bias) if mlp else None

    def forward(
        self, x: Tensorish, mask: Tensorish | None = None, *, cache: KVCache | None = None
    ) -> torch.Tensor:
        x = as_float_tensor(x, "x")
        check_ndim(x, "x", (3,), "(B, T, d)")
        if self.norm == "post":
            x = self.ln1(x + self.attn(x, mask=mask, cache=cache).outputs)
            if self.mlp is not None:
                x = self.ln2(x + self.mlp(x))
            return x
        x = x + self.attn(self.ln1(x), mask=mask, cache=cache).outputs
        if self.mlp is not None:
            x = x + self.mlp(self.ln2(x))
        return x


class DecoderBlock(nn.Module):
    """The encoder–decoder's decoder layer: causal self-attention, cross-attention, MLP.

    Queries of the cross-attention come from the decoder stream ``x`` ``(B, T_tgt, d)``; keys and
    values from ``memory`` ``(B, T_src, d)``, the *final* encoder output, which every decoder
    layer reads. The cross-attention weights are ``(B, h, T_tgt, T_src)`` — not square — and the
    residual adds the attention output back to the decoder stream ``x``.
    ``forward(x, memory, *, memory_mask=None, self_mask=None) → (B, T_tgt, d)``.
    """

    def __init__(
        self,
        d: int,
        n_heads: int,
        d_ff: int | None = None,
        *,
        norm: Norm = "post",
        activation: Activation = "relu",
        bias: bool = True,
        eps: float = 1e-5,
    ) -> None:
        super().__init__()
        self.norm = norm
        self.self_attn = MultiHeadAttention(d, n_heads, bias=bias, causal=True)
        self.cross_attn = MultiHeadAttention(d, n_heads, bias=bias)
        self.mlp = MLP(d, d_ff, activation, bias)
        self.ln1 = _norm_or_identity(norm, d, eps)
        self.ln2 = _norm_or_identity(norm, d, eps)
        self.ln3 = _norm_or_identity(norm, d, eps)
        self.last_cross_weights: torch.Tensor | None = None

    def forward(
        self,
        x: Tensorish,
        memory: Tensorish,
        *,
        memory_mask: Tensorish | None = None,
        self_mask: Tensorish | None = None,
    ) -> torch.Tensor:
        x = as_float_tensor(x, "x")
        memory = as_float_tensor(memory, "memory")
        if self.norm == "post":
            x = self.ln1(x + self.self_attn(x, mask=self_mask).outputs)
            cross = self.cross_attn(x, memory, memory_mask)
            x = self.ln2(x + cross.outputs)
            x = self.ln3(x + self.mlp(x))
        else:
            x = x + self.self_attn(self.ln1(x), mask=self_mask).outputs
            cross = self.cross_attn(self.ln2(x), memory, memory_mask)
            x = x + cross.outputs
            x = x + self.mlp(self.ln3(x))
        self.last_cross_weights = cross.weights.detach()
        return x


def scale_residual_projections(blocks, n_layers: int | None = None) -> float:
    """GPT-2's initialisation: divide the weights that write into the residual stream by ``√(2L)``.

    ``blocks``: an iterable of :class:`TransformerBlock`. Each block has two residual branches
    (attention and MLP), so ``L`` layers add ``2L`` branch outputs to the stream; scaling the last
    matrix of each branch (``attn.W_O`` and ``mlp.fc_out``) by ``1/√(2L)`` keeps the variance of
    the stream at initialisation from growing with depth (Radford et al., 2019, §2.3). Returns the
    factor used. ``n_layers`` defaults to the number of blocks.
    """
    blocks = list(blocks)
    n_layers = len(blocks) if n_layers is None else n_layers
    if n_layers < 1:
        raise ValueError(f"n_layers must be at least 1, got {n_layers}")
    factor = 1.0 / math.sqrt(2 * n_layers)
    with torch.no_grad():
        for block in blocks:
            for linear in (block.attn.W_O, getattr(block.mlp, "fc_out", None)):
                if linear is not None:
                    linear.weight.mul_(factor)
    return factor
