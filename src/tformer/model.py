"""A GPT-style decoder-only Transformer, its presets, and how to count what it costs.

``tokens (B, T)`` → token embedding (+ positions) → ``n_layers`` × :class:`TransformerBlock`
→ final LayerNorm → unembedding (tied to the token embedding by default) → ``logits (B, T, n_vocab)``.

Presets: :meth:`GPTConfig.gpt2_small` (124,439,808 parameters), :meth:`GPTConfig.tiny` (trains
on a CPU in seconds) and :meth:`GPTConfig.attention_only` (the induction-head lab's model: no MLP,
no LayerNorm, rotary positions).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal

import torch
from torch import nn

from tformer.layers import Activation, LayerNorm, Norm, TransformerBlock
from tformer.multihead import KVCache
from tformer.positions import LearnedPositions, sinusoidal_positions

Positions = Literal["learned", "sinusoidal", "rope", "none"]


@dataclass(frozen=True)
class GPTConfig:
    """Hyper-parameters of :class:`GPT`. ``d_ff`` defaults to ``4·d``."""

    n_vocab: int
    n_ctx: int
    d: int
    n_layers: int
    n_heads: int
    d_ff: int | None = None
    positions: Positions = "learned"
    norm: Norm = "pre"
    mlp: bool = True
    activation: Activation = "gelu_tanh"
    bias: bool = True
    tie_weights: bool = True
    final_norm: bool = True
    scale_embeddings: bool = False  # multiply token embeddings by √d, as the 2017 paper does
    eps: float = 1e-5

    def __post_init__(self) -> None:
        if self.d % self.n_heads:
            raise ValueError(f"d = {self.d} must be divisible by n_heads = {self.n_heads}")
        if self.positions not in ("learned", "sinusoidal", "rope", "none"):
            raise ValueError(f"unknown positions {self.positions!r}")

    @property
    def d_mlp(self) -> int:
        return 4 * self.d if self.d_ff is None else self.d_ff

    @property
    def d_k(self) -> int:
        return self.d // self.n_heads

    @classmethod
    def gpt2_small(cls) -> GPTConfig:
        """GPT-2 small: 50,257 tokens, 1,024 positions, d = 768, 12 layers of 12 heads."""
        return cls(n_vocab=50257, n_ctx=1024, d=768, n_layers=12, n_heads=12)

    @classmethod
    def tiny(cls, n_vocab: int, **overrides) -> GPTConfig:
        """A small pre-norm GPT for CPU experiments (d = 64, 2 layers, 4 heads, 128 positions)."""
        settings = dict(n_vocab=n_vocab, n_ctx=128, d=64, n_layers=2, n_heads=4)
        return cls(**(settings | overrides))

    @classmethod
    def attention_only(
        cls,
        n_vocab: int,
        d: int = 32,
        n_layers: int = 2,
        n_heads: int = 2,
        n_ctx: int = 64,
        positions: Positions = "rope",
        **overrides,
    ) -> GPTConfig:
        """Attention-only decoder: no MLP, no LayerNorm, rotary positions by default."""
        settings = dict(
            n_vocab=n_vocab, n_ctx=n_ctx, d=d, n_layers=n_layers, n_heads=n_heads,
            positions=positions, norm="none", mlp=False, final_norm=False,
        )
        return cls(**(settings | overrides))

    def but(self, **changes) -> GPTConfig:
        """A copy with some fields changed: ``config.but(n_layers=24)``."""
        return replace(self, **changes)


class GPT(nn.Module):
    """Decoder-only Transformer. ``forward(tokens (B, T)) → logits (B, T, n_vocab)``.

    With ``record = True`` the forward pass keeps ``residual_stream``: the ``(B, T, d)`` stream
    after the embedding and after each block (detached).
    """

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.config = config
        c = config
        self.token_embedding = nn.Embedding(c.n_vocab, c.d)
        self.position_embedding = LearnedPositions(c.n_ctx, c.d) if c.positions == "learned" else None
        if c.positions == "sinusoidal":
            self.register_buffer("sinusoidal", sinusoidal_positions(c.n_ctx, c.d), persistent=False)
        self.blocks = nn.ModuleList(
            TransformerBlock(
                c.d, c.n_heads, c.d_mlp, norm=c.norm, activation=c.activation, causal=True,
                mlp=c.mlp, rope=c.positions == "rope", bias=c.bias, eps=c.eps,
            )
            for _ in range(c.n_layers)
        )
        self.final_norm = LayerNorm(c.d, c.eps) if c.final_norm else nn.Identity()
        self.unembed = nn.Linear(c.d, c.n_vocab, bias=False)
        if c.tie_weights:
            self.unembed.weight = self.token_embedding.weight
        self.record = False
        self.residual_stream: list[torch.Tensor] = []
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, std=0.02)

    def embed(self, tokens: torch.Tensor, offset: int = 0) -> torch.Tensor:
        """Token embeddings plus (learned or sinusoidal) positions: ``(B, T)`` → ``(B, T, d)``."""
        x = self.token_embedding(tokens)
        if self.config.scale_embeddings:
            x = x * math.sqrt(self.config.d)
        n_positions = tokens.shape[1]
        if self.position_embedding is not None:
            x = x + self.position_embedding(n_positions, offset)
        elif self.config.positions == "sinusoidal":
            if offset + n_positions > self.config.n_ctx:
                raise ValueError(f"sequence longer than n_ctx = {self.config.n_ctx}")
            x = x + self.sinusoidal[offset : offset + n_positions].to(x.dtype)
        return x

    def forward(
        self, tokens: torch.Tensor, *, caches: list[KVCache] | None = None
    ) -> torch.Tensor:
        """Logits ``(B, T, n_vocab)`` for token ids ``(B, T)``; position ``t`` predicts ``t + 1``.

        ``caches``: one :class:`KVCache` per layer for incremental decoding; ``tokens`` are then
        only the new positions.
        """
        tokens = torch.as_tensor(tokens)
        if tokens.ndim != 2:
            raise ValueError(f"tokens must have shape (B, T), got {tuple(tokens.shape)}")
        if tokens.dtype not in (torch.int64, torch.int32, torch.int16, torch.uint8):
            raise TypeError(f"tokens must be integer ids, got dtype {tokens.dtype}")
        if tokens.numel() and (tokens.min() < 0 or tokens.max() >= self.config.n_vocab):
            raise ValueError(
                f"token ids must lie in 0..{self.config.n_vocab - 1}, got "
                f"{tokens.min().item()}..{tokens.max().item()}"
            )
        if caches is not None and len(caches) != len(self.blocks):
            raise ValueError(f"need one KVCache per layer ({len(self.blocks)}), got {len(caches)}")
        offset = len(caches[0]) if caches else 0
        x = self.embed(tokens.long(), offset)
        self.residual_stream = [x.detach()] if self.record else []
        for i, block in enumerate(self.blocks):
            x = block(x, cache=caches[i] if caches is not None else None)
            if self.record:
                self.residual_stream.append(x.detach())
        return self.unembed(self.final_norm(x))

    def new_caches(self) -> list[KVCache]:
        """One empty :class:`KVCache` per layer."""
        return [KVCache() for _ in self.blocks]


def _numel(module: nn.Module | None) -> int:
    return 0 if module is None else sum(p.numel() for p in module.parameters())


def count_parameters(model: GPT) -> dict[str, int]:
    """Parameters by component, read off the model object (tied weights counted once)."""
    first = model.blocks[0]
    counts = {
        "attention (per layer)": _numel(first.attn),
        "MLP (per layer)": _numel(first.mlp),
        "layer norms (per layer)": _numel(first.ln1) + _numel(first.ln2),
        "one block": _numel(first),
        "all blocks": sum(_numel(block) for block in model.blocks),
        "token embedding": _numel(model.token_embedding),
        "position embedding": _numel(model.position_embedding),
        "final layer norm": _numel(model.final_norm),
    }
    if not model.config.tie_weights:
        counts["unembedding"] = _numel(model.unembed)
    counts["total"] = sum(p.numel() for p in model.parameters())
    return counts


def parameter_formula(config: GPTConfig) -> dict[str, int]:
    """The same breakdown as :func:`count_parameters`, from closed forms in ``d``, ``d_ff``, …

    attention ``4d² + 4d``; MLP ``2·d·d_ff + d_ff + d`` (``8d² + 5d`` at ``d_ff = 4d``);
    two LayerNorms ``4d``; token embedding ``n_vocab·d``; learned positions ``n_ctx·d``.
    """
    c = config
    d, bias = c.d, int(c.bias)
    attention = 4 * d * d + 4 * d * bias
    mlp = (2 * d * c.d_mlp + (c.d_mlp + d) * bias) if c.mlp else 0
    norms = 0 if c.norm == "none" else (4 * d if c.mlp else 2 * d)
    block = attention + mlp + norms
    counts = {
        "attention (per layer)": attention,
        "MLP (per layer)": mlp,
        "layer norms (per layer)": norms,
        "one block": block,
        "all blocks": c.n_layers * block,
        "token embedding": c.n_vocab * d,
        "position embedding": c.n_ctx * d if c.positions == "learned" else 0,
        "final layer norm": 2 * d if c.final_norm else 0,
    }
    if not c.tie_weights:
        counts["unembedding"] = c.n_vocab * d
    counts["total"] = sum(value for key, value in counts.items() if key not in (
        "attention (per layer)", "MLP (per layer)", "layer norms (per layer)", "one block"
    ))
    return counts


def multiply_adds_per_token(config: GPTConfig, n_context: int) -> int:
    """Forward multiply-adds for one token with ``n_context`` tokens of context.

    Every weight-matrix entry is used once per token — the per-layer projections (``4d²``) and
    MLP (``2·d·d_ff``), and the unembedding (``n_vocab·d``, used even when tied) — plus the
    attention itself: ``n_context·d`` for the scores and ``n_context·d`` for mixing the values,
    per layer. Embedding look-ups, biases and LayerNorms are negligible and not counted.
    """
    c = config
    per_layer = 4 * c.d * c.d + (2 * c.d * c.d_mlp if c.mlp else 0) + 2 * n_context * c.d
    return c.n_layers * per_layer + c.n_vocab * c.d
