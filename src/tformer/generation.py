"""Turning next-token logits into text: greedy, temperature and top-k sampling, KV-cache decoding.

A decoder predicts a distribution over the next token; generation picks one, appends it and
repeats. With a KV cache (:class:`tformer.multihead.KVCache`) each step feeds only the new token:
earlier keys and values never change under a causal mask, so they are reused, not recomputed.
"""

from __future__ import annotations

import torch

from tformer.model import GPT


def sample_next(
    logits: torch.Tensor,
    *,
    temperature: float = 1.0,
    top_k: int | None = None,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Pick the next token for each row of ``logits`` ``(B, n_vocab)``; returns ``(B,)`` ids.

    ``temperature = 0`` is greedy (argmax); otherwise logits are divided by ``temperature`` and,
    with ``top_k``, all but the ``k`` largest are removed before sampling from the softmax.
    """
    if logits.ndim != 2:
        raise ValueError(f"logits must have shape (B, n_vocab), got {tuple(logits.shape)}")
    if temperature < 0:
        raise ValueError(f"temperature must be ≥ 0, got {temperature}")
    if temperature == 0:
        return logits.argmax(dim=-1)
    scaled = logits / temperature
    if top_k is not None:
        if not 1 <= top_k <= logits.shape[-1]:
            raise ValueError(f"top_k must lie in 1..{logits.shape[-1]}, got {top_k}")
        kth = torch.topk(scaled, top_k, dim=-1).values[..., -1:]
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    probabilities = torch.softmax(scaled, dim=-1)
    return torch.multinomial(probabilities, 1, generator=generator).squeeze(-1)


@torch.no_grad()
def generate(
    model: GPT,
    prompt: torch.Tensor,
    n_new: int,
    *,
    temperature: float = 0.0,
    top_k: int | None = None,
    use_cache: bool = True,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Extend ``prompt`` ``(B, T)`` by ``n_new`` tokens; returns ``(B, T + n_new)``.

    ``use_cache=True`` feeds one token per step through a KV cache; ``False`` recomputes the
    whole sequence every step. Both give the same tokens (greedy) — the cache only saves work.
    """
    prompt = torch.as_tensor(prompt)
    if prompt.ndim != 2 or prompt.shape[1] < 1:
        raise ValueError(f"prompt must have shape (B, T) with T ≥ 1, got {tuple(prompt.shape)}")
    if prompt.shape[1] + n_new > model.config.n_ctx and model.config.positions == "learned":
        raise ValueError(
            f"prompt ({prompt.shape[1]}) + n_new ({n_new}) exceeds n_ctx = {model.config.n_ctx}"
        )
    was_training = model.training
    model.eval()
    tokens = prompt
    caches = model.new_caches() if use_cache else None
    step_input = prompt
    for _ in range(n_new):
        if use_cache:
            logits = model(step_input, caches=caches)[:, -1]
        else:
            logits = model(tokens)[:, -1]
        next_token = sample_next(logits, temperature=temperature, top_k=top_k, generator=generator)
        tokens = torch.cat([tokens, next_token[:, None]], dim=1)
        step_input = next_token[:, None]
    model.train(was_training)
    return tokens
