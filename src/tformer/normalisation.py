"""Pre-norm against post-norm, measured: small character-level GPTs built, trained and probed
(chapter 8; the seed sweep is ``bench/ch08_prepost_seeds.py``).

* :func:`make_stack` — a GPT of ``n_layers`` pre- or post-norm blocks on the book's text corpus.
* :func:`probe_gradients` — the gradient norm of every layer's weight matrices on a fixed batch.
* :func:`train_stack` — train one stack through :func:`tformer.training.train` and probe it.

Everything is seeded; with ``torch.set_num_threads(1)`` a run is reproducible bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import torch

from tformer.data.text import CharTokenizer, load_text, make_batch
from tformer.layers import Norm
from tformer.model import GPT, GPTConfig
from tformer.training import layer_gradient_norms, next_token_loss, train


@dataclass(frozen=True)
class StackSettings:
    """The experiment's fixed choices: width, heads, context, batch, steps, learning rate."""

    d: int = 32
    n_heads: int = 4
    n_ctx: int = 16
    batch_size: int = 16
    steps: int = 80
    lr: float = 3e-3
    probe_seed: int = 99


@lru_cache(maxsize=1)
def corpus() -> tuple[CharTokenizer, torch.Tensor]:
    """The shipped corpus as ``(tokenizer, ids (N,))``."""
    text = load_text()
    tokenizer = CharTokenizer.from_text(text)
    return tokenizer, tokenizer.encode(text)


def make_stack(norm: Norm, n_layers: int, seed: int,
               settings: StackSettings = StackSettings(), *,
               embedding_scale: float = 1.0, output_scale: float | None = None) -> GPT:
    """A GPT with ``n_layers`` ``norm``-blocks (``"pre"`` or ``"post"``), GPT-2's initialisation.

    A pre-norm stack gets the final LayerNorm GPT-2 has; a post-norm stack already ends in one.
    ``embedding_scale`` multiplies the token and position embeddings after initialisation (an
    intervention: ``50`` turns GPT-2's standard deviation 0.02 into 1, same random draws).

    The output matrix (unembedding) is tied to the token embedding, as in GPT-2, so with
    ``output_scale=None`` ``embedding_scale`` scales it too. A number unties them: the
    unembedding becomes a copy of the initial token embedding (the same function at
    initialisation) and is multiplied by ``output_scale``, the input side by ``embedding_scale``
    alone — the two scales can then be changed one at a time.
    """
    tokenizer, _ = corpus()
    torch.manual_seed(seed)
    config = GPTConfig.tiny(
        n_vocab=tokenizer.n_vocab, d=settings.d, n_layers=n_layers, n_heads=settings.n_heads,
        n_ctx=settings.n_ctx, norm=norm, final_norm=norm == "pre",
    )
    model = GPT(config)
    if output_scale is not None:
        copy = model.token_embedding.weight.detach().clone()
        model.unembed.weight = torch.nn.Parameter(copy * output_scale)
    if embedding_scale != 1.0:
        with torch.no_grad():
            model.token_embedding.weight.mul_(embedding_scale)
            if model.position_embedding is not None:
                model.position_embedding.weight.mul_(embedding_scale)
    return model


def probe_batch(settings: StackSettings = StackSettings()) -> tuple[torch.Tensor, torch.Tensor]:
    """One fixed batch ``(inputs, targets)``, both ``(batch_size, n_ctx)``."""
    _, data = corpus()
    generator = torch.Generator().manual_seed(settings.probe_seed)
    return make_batch(data, settings.batch_size, settings.n_ctx, generator=generator)


def probe_gradients(model: GPT, settings: StackSettings = StackSettings()) -> list[float]:
    """Gradient norm of each layer's weight matrices for the loss on :func:`probe_batch`."""
    inputs, targets = probe_batch(settings)
    model.zero_grad(set_to_none=True)
    next_token_loss(model(inputs), targets).backward()
    norms = layer_gradient_norms(model.blocks)
    model.zero_grad(set_to_none=True)
    return norms


@dataclass
class StackRun:
    """One trained stack: per-step ``losses``, and the probe gradients before and after."""

    losses: list[float]
    gradients_at_init: list[float]
    gradients_trained: list[float]

    @property
    def final_loss(self) -> float:
        """Mean of the last 10 step losses."""
        tail = self.losses[-10:]
        return sum(tail) / len(tail)


def train_stack(norm: Norm, n_layers: int, warmup: int, seed: int,
                settings: StackSettings = StackSettings()) -> StackRun:
    """Train one stack for ``settings.steps`` AdamW steps, no gradient clipping.

    ``warmup`` steps of linear warm-up, then the cosine decay of :func:`tformer.training.train`.
    Clipping is off so that nothing hides a large gradient.
    """
    _, data = corpus()
    model = make_stack(norm, n_layers, seed, settings)
    at_init = probe_gradients(model, settings)
    batches = torch.Generator().manual_seed(seed)
    log = train(
        model,
        lambda: make_batch(data, settings.batch_size, settings.n_ctx, generator=batches),
        settings.steps, lr=settings.lr, warmup=warmup, grad_clip=None,
    )
    return StackRun(log.losses, at_init, probe_gradients(model, settings))
