"""Repeated random token sequences: the training data of the induction-head lab (chapter 12).

A sequence is ``[BOS] + r + r``: a beginning-of-sequence token followed by ``L`` *distinct*
tokens drawn at random from the *content* tokens ``1 … n_vocab − 1`` (without replacement) and
then the same ``L`` tokens again. Position ``0`` holds BOS, positions ``1 … L`` the first copy,
``L + 1 … 2L`` the second.
The first copy is pure noise (the best possible loss on it is ``ln(n_vocab − 1)``), while every
token of the second copy after its first can be predicted exactly — but only by *copying*:
find the earlier occurrence of the current token and read off the token that followed it.
Because the tokens of ``r`` are distinct, that earlier occurrence is unique, so a perfect copier
reaches a loss of 0. (With ``distinct=False`` tokens may repeat inside ``r``; a query whose token
occurs twice in ``r`` then has two candidate successors, and even a perfect copier pays for the
ambiguity — chapter 12 measures it.)

Three generators:

* :func:`repeated_batch` — ``L`` drawn at random **for every batch** (the lab's training data).
  With one fixed ``L`` a model can cheat: attend from position ``t`` to ``t − L + 1`` by position
  alone, with no previous-token head (section "The fixed-length shortcut" of chapter 12).
* :func:`fixed_length_batch` — one fixed ``L`` (the shortcut's training data, and evaluation).
* :func:`random_batch` — ``1 + 2L`` random tokens with no repetition (the control: nothing to copy).

Every function is deterministic given its ``generator`` (a :class:`torch.Generator`) or ``seed``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

BOS = 0
"""The beginning-of-sequence token id; content tokens are ``1 … n_vocab − 1``."""


@dataclass(frozen=True)
class SequenceBatch:
    """A batch of sequences and the positions that matter for scoring.

    ``tokens`` ``(batch, 1 + 2L)`` long; ``length`` is ``L``; ``repeated`` tells whether the second
    half repeats the first (``False`` for the random control).
    """

    tokens: torch.Tensor
    length: int
    repeated: bool = True

    @property
    def n_positions(self) -> int:
        """``T = 1 + 2L``."""
        return self.tokens.shape[1]

    def to(self, device: torch.device | str) -> SequenceBatch:
        return SequenceBatch(self.tokens.to(device), self.length, self.repeated)

    @property
    def inputs(self) -> torch.Tensor:
        """``tokens[:, :-1]`` — what the model reads, ``(batch, 2L)``."""
        return self.tokens[:, :-1]

    @property
    def targets(self) -> torch.Tensor:
        """``tokens[:, 1:]`` — the next token at every input position, ``(batch, 2L)``."""
        return self.tokens[:, 1:]


def _generator(generator: torch.Generator | None, seed: int | None) -> torch.Generator:
    if generator is not None and seed is not None:
        raise ValueError("pass either generator or seed, not both")
    if generator is None:
        generator = torch.Generator().manual_seed(0 if seed is None else seed)
    return generator


def _check(n_vocab: int, batch_size: int, length: int) -> None:
    if n_vocab < 3:
        raise ValueError(f"n_vocab must be at least 3 (BOS + two content tokens), got {n_vocab}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    if length < 2:
        raise ValueError(f"the repeated segment needs length L >= 2, got L = {length}")


def fixed_length_batch(
    n_vocab: int,
    batch_size: int,
    length: int,
    *,
    generator: torch.Generator | None = None,
    seed: int | None = None,
    distinct: bool = True,
) -> SequenceBatch:
    """``batch_size`` sequences ``[BOS] + r + r`` with ``len(r) = length``; tokens ``(batch, 1 + 2L)``.

    With ``distinct=True`` (the default) ``r`` is a uniformly random ordered sample of ``L``
    different content tokens (needs ``L ≤ n_vocab − 1``); with ``distinct=False`` its tokens are
    independent and uniform over ``1 … n_vocab − 1`` (they may repeat within ``r``).
    """
    _check(n_vocab, batch_size, length)
    generator = _generator(generator, seed)
    if distinct:
        if length > n_vocab - 1:
            raise ValueError(
                f"cannot draw L = {length} distinct tokens from {n_vocab - 1} content tokens; "
                "pass distinct=False or use a larger vocabulary"
            )
        keys = torch.rand(batch_size, n_vocab - 1, generator=generator)
        segment = keys.argsort(dim=1)[:, :length] + 1
    else:
        segment = torch.randint(1, n_vocab, (batch_size, length), generator=generator)
    bos = torch.full((batch_size, 1), BOS, dtype=torch.long)
    return SequenceBatch(torch.cat([bos, segment, segment], dim=1), length, True)


def repeated_batch(
    n_vocab: int,
    batch_size: int,
    min_length: int = 8,
    max_length: int = 24,
    *,
    generator: torch.Generator | None = None,
    seed: int | None = None,
    distinct: bool = True,
) -> SequenceBatch:
    """Like :func:`fixed_length_batch`, with ``L`` drawn uniformly from ``min_length … max_length``
    (inclusive) **once per batch** — every sequence of the batch shares it, so no padding is needed.
    """
    if not 2 <= min_length <= max_length:
        raise ValueError(
            f"need 2 <= min_length <= max_length, got min_length={min_length}, max_length={max_length}"
        )
    generator = _generator(generator, seed)
    length = int(torch.randint(min_length, max_length + 1, (1,), generator=generator))
    return fixed_length_batch(n_vocab, batch_size, length, generator=generator, distinct=distinct)


def random_batch(
    n_vocab: int,
    batch_size: int,
    length: int,
    *,
    generator: torch.Generator | None = None,
    seed: int | None = None,
) -> SequenceBatch:
    """The control: ``[BOS]`` followed by ``2L`` independent random tokens — nothing repeats
    on purpose, so the second half is as unpredictable as the first."""
    _check(n_vocab, batch_size, length)
    generator = _generator(generator, seed)
    body = torch.randint(1, n_vocab, (batch_size, 2 * length), generator=generator)
    bos = torch.full((batch_size, 1), BOS, dtype=torch.long)
    return SequenceBatch(torch.cat([bos, body], dim=1), length, False)


def half_masks(length: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Which *predictions* count as first half and which as second half, for segment length ``L``.

    Predictions are indexed by input position ``t = 0 … 2L − 1`` (the model at ``t`` predicts the
    token at ``t + 1``). Returns two boolean masks of shape ``(2L,)``:

    * first half: ``t = 0 … L − 1`` — predicting ``r_1 … r_L``, impossible better than chance;
    * second half: ``t = L + 1 … 2L − 1`` — predicting ``r_2 … r_L`` of the second copy, each of
      which follows an earlier occurrence of the current token (the induction targets).

    The prediction at ``t = L`` (of the second copy's first token) belongs to neither: when ``L``
    varies, nothing tells the model that the first copy has just ended.
    """
    t = torch.arange(2 * length)
    return t < length, t > length
