"""tformer — the shared implementation behind *Attention, Executed*.

Each idea of the book lives in one module, named after the concept:

``attention``   scaled dot-product attention, softmax, a per-query loop, a single head
``masks``       causal, padding, combined and sliding-window masks
``positions``   sinusoidal, learned and rotary (RoPE) positions
``multihead``   splitting/merging heads, multi-head self- and cross-attention, KV cache
``layers``      LayerNorm, MLP, pre-/post-norm Transformer blocks, decoder block
``model``       a GPT-style decoder, presets, parameter and FLOP counts
``generation``  greedy / temperature / top-k sampling, beam search with a length penalty,
                KV-cache decoding
``encoder_decoder``  the encoder–decoder of chapters 9–10 (a digit sorter) and its training
``bleu``        BLEU: clipped n-gram precisions, brevity penalty, corpus-level score
``efficient``   tiled exact attention (online softmax), sliding windows
``interp``      attention patterns, per-head outputs, ablations, Q/K/V-composition patches
``data``        small deterministic datasets and a shipped public-domain text
``plots``       the book's figure style and helpers
``diagrams``    diagrams of every computation the book performs, drawn from real tensor shapes
``tokenize``    a tiny byte-pair-encoding tokenizer (chapter 1)
``normalisation``  pre- and post-norm character-level stacks for chapter 8's experiment
``two_reads``   the difference task of chapter 7 and its 1-, 2-, 4- and 8-head models
``saturation``  random-score experiments on softmax saturation (chapter 4)
``vision``      image patches as tokens (chapter 9)
``training``    next-token loss, the original learning-rate schedule, a small training loop
``induction``   the induction-head lab's model, training and assessment (chapter 12)
``determinism`` ``reproducible(seed, deterministic=...)``: seeds everything, GPU-safe
``seed_rates``  how often each claim about a trained model holds, per CPU kernel (bench data)
``profiling``   peak tensor memory on any device; ``bench_utils`` timing helpers
``notebook``    ``glue`` that works with MyST-NB and without it (Colab)
``version``     ``__version__`` and the release a notebook's setup cell was made for
``checks``      the exercise checkers; ``grade`` the notebook grader; ``authoring`` builds
                the reader's exercise notebooks and pages from ``solutions/``
"""

from __future__ import annotations

import torch

from tformer.attention import (
    AttentionResult,
    SelfAttention,
    attention_loop,
    scaled_dot_product_attention,
    self_attention_param_count,
    softmax,
)
from tformer.determinism import reproducible
from tformer.version import __version__  # pyproject.toml's version (checkout or installed wheel)

__all__ = [
    "AttentionResult",
    "SelfAttention",
    "__version__",
    "attention_loop",
    "device",
    "reproducible",
    "scaled_dot_product_attention",
    "self_attention_param_count",
    "softmax",
]


def device() -> torch.device:
    """``cuda`` when a GPU is present, otherwise ``cpu`` — the book never requires a GPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")
