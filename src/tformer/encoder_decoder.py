"""An encoder–decoder Transformer (the 2017 architecture, small): encoder, decoder, cross-attention.

``source (B, T_src)`` → shared embedding + sinusoidal positions → ``n_layers`` ×
:class:`~tformer.layers.TransformerBlock` (bidirectional) → final LayerNorm → ``memory C``
``(B, T_src, d)``. ``target_in (B, T_tgt)`` → the same embedding + positions → ``n_layers`` ×
:class:`~tformer.layers.DecoderBlock` (causal self-attention, cross-attention to ``C``, MLP) →
final LayerNorm → unembedding ``W_U`` (tied to the embedding, as in the 2017 paper) →
``logits (B, T_tgt, n_vocab)``. Every decoder layer reads the same final ``C``.

Pre-norm by default (it trains in a few hundred steps without a long warm-up); ``norm="post"``
gives the 2017 layout. All sequences of a batch share one length, so there are no padding masks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from tformer.data.sorting import N_VOCAB, sorting_batch
from tformer.layers import Activation, DecoderBlock, LayerNorm, Norm, TransformerBlock
from tformer.positions import sinusoidal_positions
from tformer.training import TrainingLog, train


@dataclass(frozen=True)
class EncoderDecoderConfig:
    """Hyper-parameters of :class:`EncoderDecoder`; ``n_layers`` encoder *and* decoder layers."""

    n_vocab: int
    n_ctx: int = 32
    d: int = 64
    n_layers: int = 2
    n_heads: int = 4
    d_ff: int | None = None
    norm: Norm = "pre"
    activation: Activation = "relu"

    def __post_init__(self) -> None:
        if self.d % self.n_heads:
            raise ValueError(f"d = {self.d} must be divisible by n_heads = {self.n_heads}")

    @property
    def d_mlp(self) -> int:
        return 4 * self.d if self.d_ff is None else self.d_ff

    @property
    def d_k(self) -> int:
        return self.d // self.n_heads

    positions = "sinusoidal"  # read by tformer.generation (no learned table to overrun)


class EncoderDecoder(nn.Module):
    """``forward(source (B, T_src), target_in (B, T_tgt)) → logits (B, T_tgt, n_vocab)``.

    ``cut_cross_gradient=True`` detaches the memory before the decoder reads it: the forward
    pass is unchanged, but no gradient reaches the encoder (it can learn only through
    cross-attention's keys and values). After a forward pass, :meth:`cross_weights` returns each
    decoder layer's cross-attention weights ``(B, h, T_tgt, T_src)``.
    """

    def __init__(self, config: EncoderDecoderConfig) -> None:
        super().__init__()
        self.config = c = config
        final_norm = c.norm == "pre"
        self.embedding = nn.Embedding(c.n_vocab, c.d)
        self.register_buffer("sinusoidal", sinusoidal_positions(c.n_ctx, c.d), persistent=False)
        self.encoder = nn.ModuleList(
            TransformerBlock(c.d, c.n_heads, c.d_mlp, norm=c.norm, activation=c.activation,
                             causal=False)
            for _ in range(c.n_layers)
        )
        self.decoder = nn.ModuleList(
            DecoderBlock(c.d, c.n_heads, c.d_mlp, norm=c.norm, activation=c.activation)
            for _ in range(c.n_layers)
        )
        self.encoder_norm = LayerNorm(c.d) if final_norm else nn.Identity()
        self.decoder_norm = LayerNorm(c.d) if final_norm else nn.Identity()
        self.unembed = nn.Linear(c.d, c.n_vocab, bias=False)  # W_U, tied to the embedding
        self.unembed.weight = self.embedding.weight
        self.cut_cross_gradient = False
        self.apply(self._init_weights)
        # the embedding is multiplied by √d, so rows of norm ≈ 1 keep it level with the positions
        nn.init.normal_(self.embedding.weight, std=c.d**-0.5)

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, std=0.02)

    def _embed(self, tokens: torch.Tensor) -> torch.Tensor:
        tokens = torch.as_tensor(tokens)
        if tokens.ndim != 2:
            raise ValueError(f"tokens must have shape (B, T), got {tuple(tokens.shape)}")
        if tokens.dtype.is_floating_point or tokens.dtype == torch.bool:
            raise TypeError(f"tokens must be integer ids, got dtype {tokens.dtype}")
        n = tokens.shape[1]
        if n > self.config.n_ctx:
            raise ValueError(f"sequence of {n} tokens exceeds n_ctx = {self.config.n_ctx}")
        if tokens.numel() and (tokens.min() < 0 or tokens.max() >= self.config.n_vocab):
            raise ValueError(f"token ids must lie in 0..{self.config.n_vocab - 1}")
        x = self.embedding(tokens.long()) * math.sqrt(self.config.d)
        return x + self.sinusoidal[:n].to(x.dtype)

    def encode(self, source: torch.Tensor) -> torch.Tensor:
        """The memory ``C`` ``(B, T_src, d)``: one vector per source position."""
        x = self._embed(source)
        for layer in self.encoder:
            x = layer(x)
        return self.encoder_norm(x)

    def decode(self, target_in: torch.Tensor, memory: torch.Tensor) -> torch.Tensor:
        """Logits ``(B, T_tgt, n_vocab)``; position ``i`` predicts target token ``i``."""
        if self.cut_cross_gradient:
            memory = memory.detach()
        x = self._embed(target_in)
        if memory.shape[0] != x.shape[0]:
            memory = memory.expand(x.shape[0], -1, -1)  # one source, several beams
        for layer in self.decoder:
            x = layer(x, memory)
        return self.unembed(self.decoder_norm(x))

    def forward(self, source: torch.Tensor, target_in: torch.Tensor) -> torch.Tensor:
        return self.decode(target_in, self.encode(source))

    def cross_weights(self) -> list[torch.Tensor]:
        """Each decoder layer's last cross-attention weights ``(B, h, T_tgt, T_src)``."""
        return [layer.last_cross_weights for layer in self.decoder]

    def conditioned_on(self, source: torch.Tensor) -> ConditionedDecoder:
        """The decoder with the memory of one ``source`` ``(T_src,)`` or ``(1, T_src)`` fixed:
        a ``tokens (B, T) → logits`` model that :func:`tformer.generation.generate`
        (``use_cache=False``) and :func:`~tformer.generation.beam_search` accept."""
        return ConditionedDecoder(self, source)


class ConditionedDecoder(nn.Module):
    """``forward(target_in (B, T)) → logits (B, T, n_vocab)`` for one fixed source.

    The encoder runs once, here; every decoding step reuses its output ``C``.
    """

    def __init__(self, model: EncoderDecoder, source: torch.Tensor) -> None:
        super().__init__()
        source = torch.as_tensor(source)
        if source.ndim == 1:
            source = source[None]
        if source.ndim != 2 or source.shape[0] != 1:
            raise ValueError(f"one source (T_src,) or (1, T_src), got {tuple(source.shape)}")
        self.model = model
        self.config = model.config
        with torch.no_grad():
            self.memory = model.encode(source)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.model.decode(tokens, self.memory)


def train_sorter(
    seed: int = 0,
    n_steps: int = 400,
    *,
    lengths: tuple[int, int] = (3, 10),
    batch_size: int = 32,
    cut_cross_gradient: bool = False,
    **config,
) -> tuple[EncoderDecoder, TrainingLog]:
    """Train the chapters' encoder–decoder to sort digit strings (:mod:`tformer.data.sorting`).

    Defaults (chapters 9 and 10): ``d = 32``, 2 encoder and 2 decoder layers of 2 heads, batches
    of 32 strings with one length from ``lengths`` per batch, 400 AdamW steps at ``lr = 3e-3``
    with 30 warm-up steps. ``seed`` fixes the initial weights and the batches; ``n_steps = 0``
    returns the initial model. ``cut_cross_gradient`` trains with the memory detached.
    """
    torch.manual_seed(seed)
    settings = dict(n_vocab=N_VOCAB, n_ctx=16, d=32, n_layers=2, n_heads=2) | config
    model = EncoderDecoder(EncoderDecoderConfig(**settings))
    model.cut_cross_gradient = cut_cross_gradient
    generator = torch.Generator().manual_seed(1000 + seed)

    def get_batch():
        batch = sorting_batch(batch_size, lengths, generator=generator)
        return batch.inputs, batch.target_out

    if n_steps == 0:  # the freshly initialised model
        return model.eval(), TrainingLog()
    log = train(model, get_batch, n_steps, lr=3e-3, warmup=30)
    model.cut_cross_gradient = False
    return model, log
