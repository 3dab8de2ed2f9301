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
    if generator is not None and generator.device != probabilities.device:
        # A CPU generator (tformer.reproducible's) drives the draw on the CPU: the same seed
        # then picks the same tokens from the same probabilities on a GPU as on the CPU.
        drawn = torch.multinomial(probabilities.cpu(), 1, generator=generator)
        return drawn.squeeze(-1).to(probabilities.device)
    return torch.multinomial(probabilities, 1, generator=generator).squeeze(-1)



def _device_of(model: torch.nn.Module) -> torch.device:
    """The device of the model's parameters (CPU for a model without any)."""
    parameter = next(model.parameters(), None)
    return parameter.device if parameter is not None else torch.device("cpu")


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
    The prompt is moved to the model's device; the result stays there.
    """
    prompt = torch.as_tensor(prompt, device=_device_of(model))
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


@torch.no_grad()
def beam_search(
    model: GPT, prompt: torch.Tensor, n_new: int, *, beam_width: int = 4
) -> tuple[torch.Tensor, torch.Tensor]:
    """Beam search: keep the ``beam_width`` most probable continuations at every step.

    Args:
        model: a decoder mapping tokens ``(B, T)`` to logits ``(B, T, n_vocab)``.
        prompt: one prompt, ``(T,)`` or ``(1, T)`` token ids.
        n_new: tokens to add.
        beam_width: beams kept per step (``1`` is greedy decoding).

    Returns:
        ``(sequences, log_probs)``: ``(beam_width, T + n_new)`` token ids sorted best first and
        ``(beam_width,)`` total log-probabilities of their ``n_new`` new tokens. With
        ``beam_width ≥ n_vocab ** (n_new − 1)`` no prefix is ever dropped and the first row is
        the most probable continuation overall.
    """
    prompt = torch.as_tensor(prompt, device=_device_of(model))
    if prompt.ndim == 1:
        prompt = prompt[None]
    if prompt.ndim != 2 or prompt.shape[0] != 1 or prompt.shape[1] < 1:
        raise ValueError(f"beam_search takes one prompt (T,) or (1, T), got {tuple(prompt.shape)}")
    if beam_width < 1 or n_new < 1:
        raise ValueError(f"beam_width and n_new must be ≥ 1, got {beam_width} and {n_new}")
    if prompt.shape[1] + n_new > model.config.n_ctx and model.config.positions == "learned":
        raise ValueError(
            f"prompt ({prompt.shape[1]}) + n_new ({n_new}) exceeds n_ctx = {model.config.n_ctx}"
        )
    was_training = model.training
    model.eval()
    sequences = prompt.long()
    scores = torch.zeros(1, dtype=torch.float64, device=sequences.device)
    for _ in range(n_new):
        log_probs = torch.log_softmax(model(sequences)[:, -1].double(), dim=-1)  # (beams, n_vocab)
        candidates = (scores[:, None] + log_probs).flatten()
        scores, flat = torch.topk(candidates, min(beam_width, candidates.numel()))
        n_vocab = log_probs.shape[-1]
        sequences = torch.cat([sequences[flat // n_vocab], (flat % n_vocab)[:, None]], dim=1)
    model.train(was_training)
    return sequences, scores
