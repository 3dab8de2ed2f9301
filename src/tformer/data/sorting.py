"""Sorting a digit string: a tiny "translation" task whose alignment can be checked by eye.

The source is a string of ``L`` random digits, the target the same digits in ascending order,
followed by an end token: ``"3071" → "0137"``. To write output digit ``k`` the decoder has to find
a source position holding ``k`` — the alignment is by *content*, and the cross-attention weights
of a trained model can be read against the two strings (chapter 9). Every error of a generated
target can be spotted by hand (chapter 10).

Token ids (``N_VOCAB = 12``): ``BOS = 0`` (the decoder's start token), ``EOS = 1`` (end of the
target), digits ``0 … 9`` are ids ``2 … 11``. Every sequence of a batch has the same ``L``
(drawn once per batch), so no padding is needed.

Deterministic given its ``generator`` (a :class:`torch.Generator`); nothing is downloaded.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

BOS, EOS, FIRST_DIGIT = 0, 1, 2
N_VOCAB = 12


@dataclass(frozen=True)
class SortingBatch:
    """``source`` ``(B, L)``; ``target_in`` ``(B, L + 1)`` = BOS + sorted source (the decoder's
    input, shifted right by one); ``target_out`` ``(B, L + 1)`` = sorted source + EOS."""

    source: torch.Tensor
    target_in: torch.Tensor
    target_out: torch.Tensor

    @property
    def inputs(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``(source, target_in)`` — what an encoder–decoder reads."""
        return self.source, self.target_in


def sorting_batch(
    batch_size: int,
    length: int | tuple[int, int],
    *,
    generator: torch.Generator | None = None,
) -> SortingBatch:
    """``batch_size`` random digit strings of length ``L`` and their sorted versions.

    ``length`` is ``L`` or an inclusive range ``(min_L, max_L)`` from which one ``L`` is drawn
    for the whole batch.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    generator = generator or torch.Generator().manual_seed(0)
    if isinstance(length, tuple):
        low, high = length
        if not 1 <= low <= high:
            raise ValueError(f"need 1 <= min_L <= max_L, got {length}")
        length = int(torch.randint(low, high + 1, (1,), generator=generator))
    if length < 1:
        raise ValueError(f"the source needs at least one digit, got L = {length}")
    source = torch.randint(FIRST_DIGIT, N_VOCAB, (batch_size, length), generator=generator)
    ordered = source.sort(dim=1).values
    bos = torch.full((batch_size, 1), BOS, dtype=torch.long)
    eos = torch.full((batch_size, 1), EOS, dtype=torch.long)
    return SortingBatch(source, torch.cat([bos, ordered], 1), torch.cat([ordered, eos], 1))


def encode_digits(digits: str) -> torch.Tensor:
    """``"307"`` → ``tensor([5, 2, 9])`` (digit ``k`` is id ``k + 2``)."""
    if not digits.isdigit():
        raise ValueError(f"expected a string of digits, got {digits!r}")
    return torch.tensor([FIRST_DIGIT + int(c) for c in digits])


def decode_digits(ids: torch.Tensor | list[int]) -> str:
    """Token ids → a digit string; ``BOS`` is dropped and ``EOS`` ends the string."""
    out = []
    for token in torch.as_tensor(ids).tolist():
        if token == EOS:
            break
        if token != BOS:
            out.append(str(token - FIRST_DIGIT))
    return "".join(out)


def valid_next_tokens(source: torch.Tensor, outputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The right next token for each position of free-running ``outputs``, given *their own* prefix.

    ``source`` ``(B, L)`` and ``outputs`` ``(B, T)`` (token ids, as from
    :func:`tformer.generation.greedy_decode`). After a prefix that may already contain mistakes,
    the best a sorter can still do is to write the smallest source digit it has not used yet that
    is at least the last digit it wrote (digits it skipped can no longer appear in order), or
    ``EOS`` when none is left. Scoring each output against that — not against the digit at the same
    position of the sorted source — is *shift-tolerant*: one dropped digit costs one error, not one
    error for every later position.

    Returns ``expected`` ``(B, T)`` (that token at every position) and ``live`` ``(B, T)``, True up
    to and including each row's first ``EOS`` (later positions are padding).
    """
    if source.ndim != 2 or outputs.ndim != 2 or source.shape[0] != outputs.shape[0]:
        raise ValueError(
            f"need source (B, L) and outputs (B, T), got {tuple(source.shape)} and "
            f"{tuple(outputs.shape)}"
        )
    expected = torch.full(outputs.shape, EOS, dtype=torch.long)
    live = torch.zeros(outputs.shape, dtype=torch.bool)
    for row, (digits, written) in enumerate(zip(source.tolist(), outputs.tolist())):
        unused, last = sorted(digits), FIRST_DIGIT
        for t, token in enumerate(written):
            live[row, t] = True
            candidates = [d for d in unused if d >= last]
            expected[row, t] = candidates[0] if candidates else EOS
            if token == EOS:
                break
            if token in unused:
                unused.remove(token)
            last = max(last, token)
    return expected, live
