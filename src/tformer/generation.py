"""Turning next-token logits into text: greedy, temperature and top-k sampling, KV-cache decoding,
beam search with the GNMT length penalty.

A decoder predicts a distribution over the next token; generation picks one, appends it and
repeats. With a KV cache (:class:`tformer.multihead.KVCache`) each step feeds only the new token:
earlier keys and values never change under a causal mask, so they are reused, not recomputed.
"""

from __future__ import annotations

import torch
from torch import nn

from tformer.model import GPT


def length_penalty(length: int, alpha: float) -> float:
    """GNMT's length penalty ``lp(Y) = ((5 + |Y|) / 6) ** α`` (Wu et al., 2016).

    Beam search ranks a hypothesis by ``log P(Y) / lp(Y)``: a longer hypothesis has summed more
    negative log-probabilities, and dividing by ``lp`` (which grows with ``|Y|``) offsets that
    bias towards short outputs. ``α = 0`` gives ``lp = 1`` (raw log-probabilities);
    *Attention Is All You Need* used ``α = 0.6`` with beam size 4.
    """
    if length < 0:
        raise ValueError(f"length must be non-negative, got {length}")
    return ((5 + length) / 6) ** alpha


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
    model: GPT | nn.Module,
    prompt: torch.Tensor,
    n_new: int,
    *,
    beam_width: int = 4,
    eos_id: int | None = None,
    alpha: float = 0.0,
    trace: list | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Beam search: keep the ``beam_width`` most probable continuations at every step.

    With ``eos_id`` a hypothesis that emits it is *finished*: it leaves the beam and is scored
    ``log P(Y) / lp(Y)`` with :func:`length_penalty` (``|Y|`` counts the new tokens, EOS
    included); the search stops when ``beam_width`` hypotheses have finished *and* no alive
    hypothesis can still beat them (its best possible score is ``log P / lp(n_new)``: log P only
    falls, lp only grows), or after ``n_new`` steps (unfinished beams then compete with their own
    normalised scores). Returns the
    hypotheses best first, padded with ``eos_id`` to a common length, and their normalised
    scores. ``trace``, if a list, receives one entry per step: a list of
    ``(new tokens, log P, finished)`` for each hypothesis kept or finished at that step.

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
    if eos_id is not None:
        return _beam_search_eos(model, prompt.long(), n_new, beam_width, eos_id, alpha, trace)
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
        if trace is not None:
            start = prompt.shape[1]
            trace.append([(tuple(row[start:].tolist()), score.item(), False)
                          for row, score in zip(sequences, scores)])
    model.train(was_training)
    return sequences, scores


def _beam_search_eos(model, prompt, n_new, beam_width, eos_id, alpha, trace):
    was_training = model.training
    model.eval()
    start = prompt.shape[1]
    alive, alive_scores = prompt, torch.zeros(1, dtype=torch.float64)
    finished: list[tuple[float, float, torch.Tensor]] = []  # (normalised, log P, tokens)
    for _ in range(n_new):
        log_probs = torch.log_softmax(model(alive)[:, -1].double(), dim=-1)
        candidates = (alive_scores[:, None] + log_probs).flatten()
        n_vocab = log_probs.shape[-1]
        order = torch.argsort(candidates, descending=True)[: 2 * beam_width]
        kept, kept_scores, step = [], [], []
        for flat in order.tolist():
            tokens = torch.cat([alive[flat // n_vocab], torch.tensor([flat % n_vocab])])
            score = candidates[flat].item()
            if flat % n_vocab == eos_id:
                normalised = score / length_penalty(len(tokens) - start, alpha)
                finished.append((normalised, score, tokens))
                step.append((tuple(tokens[start:].tolist()), score, True))
            elif len(kept) < beam_width:
                kept.append(tokens)
                kept_scores.append(score)
                step.append((tuple(tokens[start:].tolist()), score, False))
            if len(kept) == beam_width and len(step) >= beam_width:
                break
        if trace is not None:
            trace.append(step)
        if not kept:
            break
        if len(finished) >= beam_width:
            # An alive hypothesis can only lose log-probability, and lp grows with the length,
            # so its best possible final score is log P / lp(n_new). Stop once no alive
            # hypothesis can beat the beam_width-th best finished one.
            kth_best = sorted((item[0] for item in finished), reverse=True)[beam_width - 1]
            if max(kept_scores) / length_penalty(n_new, alpha) <= kth_best:
                break
        alive, alive_scores = torch.stack(kept), torch.tensor(kept_scores, dtype=torch.float64)
    else:
        for tokens, score in zip(alive, alive_scores.tolist()):
            finished.append((score / length_penalty(len(tokens) - start, alpha), score, tokens))
    model.train(was_training)
    finished.sort(key=lambda item: -item[0])
    finished = finished[:beam_width]
    width = max(len(tokens) for *_, tokens in finished)
    padded = torch.full((len(finished), width), eos_id, dtype=torch.long)
    for row, (*_, tokens) in enumerate(finished):
        padded[row, : len(tokens)] = tokens
    return padded, torch.tensor([item[0] for item in finished], dtype=torch.float64)


@torch.no_grad()
def greedy_decode(
    model: nn.Module, source: torch.Tensor, max_new: int, *, bos_id: int, eos_id: int
) -> torch.Tensor:
    """Free-running greedy decoding of an encoder–decoder for a batch of sources ``(B, T_src)``.

    The decoder starts from ``bos_id`` and is fed its *own* previous outputs; returns the
    ``(B, max_new)`` generated tokens (positions after a row's first ``eos_id`` are ``eos_id``).
    """
    was_training = model.training
    model.eval()
    memory = model.encode(source)
    tokens = torch.full((source.shape[0], 1), bos_id, dtype=torch.long)
    done = torch.zeros(source.shape[0], dtype=torch.bool)
    for _ in range(max_new):
        next_token = model.decode(tokens, memory)[:, -1].argmax(-1)
        next_token = torch.where(done, torch.full_like(next_token, eos_id), next_token)
        done |= next_token == eos_id
        tokens = torch.cat([tokens, next_token[:, None]], 1)
    model.train(was_training)
    return tokens[:, 1:]
