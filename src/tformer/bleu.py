"""BLEU (Papineni et al., 2002): how many of a candidate's n-grams a reference also contains.

For one candidate ``c`` and its references, the **modified n-gram precision** counts each
n-gram of ``c`` at most as often as it occurs in the reference where it is most frequent
(the count is *clipped*), and divides by the number of n-grams in ``c``. On a corpus the
clipped counts and the totals are summed over all sentences *before* dividing:

    p_n = Σ_sentences Σ_ngrams min(count_c, max_ref count) / Σ_sentences (number of n-grams in c)

Precision alone rewards short candidates, so a **brevity penalty** multiplies the score:
``BP = 1`` if the candidates' total length ``c`` exceeds the effective reference length ``r``
(per sentence, the reference length closest to the candidate's, ties to the shorter), else
``exp(1 − r / c)``. Then

    BLEU = BP · exp(Σ_{n=1..N} w_n ln p_n),   w_n = 1/N, N = 4,

a weighted geometric mean of the precisions: one ``p_n = 0`` makes BLEU 0. Scores are in
``[0, 1]``; papers quote ``100 × BLEU``. Tokens can be any hashable items (words, ids).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence

Sentence = Sequence[Hashable]


def ngrams(tokens: Sentence, n: int) -> Counter:
    """Counts of the n-grams (as tuples) of ``tokens``."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    tokens = list(tokens)
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def modified_precision(
    candidate: Sentence, references: Sequence[Sentence], n: int
) -> tuple[int, int]:
    """``(clipped matches, candidate n-grams)`` of one candidate against its references."""
    if not references:
        raise ValueError("need at least one reference")
    counts = ngrams(candidate, n)
    max_ref: Counter = Counter()
    for reference in references:
        max_ref |= ngrams(reference, n)  # elementwise maximum over the references
    clipped = sum(min(count, max_ref[gram]) for gram, count in counts.items())
    return clipped, sum(counts.values())


def closest_reference_length(candidate: Sentence, references: Sequence[Sentence]) -> int:
    """The reference length closest to the candidate's (the shorter one on a tie)."""
    return min((abs(len(ref) - len(candidate)), len(ref)) for ref in references)[1]


def brevity_penalty(candidate_length: int, reference_length: int) -> float:
    """``1`` if ``c > r``, else ``exp(1 − r / c)`` (``0`` for an empty candidate)."""
    if candidate_length > reference_length:
        return 1.0
    if candidate_length == 0:
        return 0.0
    return math.exp(1 - reference_length / candidate_length)


def corpus_bleu(
    candidates: Sequence[Sentence],
    references: Sequence[Sequence[Sentence]],
    max_n: int = 4,
) -> float:
    """Corpus-level BLEU in ``[0, 1]`` with uniform weights ``1 / max_n``.

    ``references[i]`` is the list of reference sentences for ``candidates[i]``.
    """
    if len(candidates) != len(references):
        raise ValueError(
            f"{len(candidates)} candidates but {len(references)} reference lists"
        )
    if not candidates:
        raise ValueError("need at least one candidate")
    matches, totals = [0] * max_n, [0] * max_n
    c = r = 0
    for candidate, refs in zip(candidates, references):
        for n in range(1, max_n + 1):
            clipped, total = modified_precision(candidate, refs, n)
            matches[n - 1] += clipped
            totals[n - 1] += total
        c += len(candidate)
        r += closest_reference_length(candidate, refs)
    if min(matches) == 0:
        return 0.0
    log_precision = sum(math.log(m / t) for m, t in zip(matches, totals)) / max_n
    return brevity_penalty(c, r) * math.exp(log_precision)


def sentence_bleu(candidate: Sentence, references: Sequence[Sentence], max_n: int = 4) -> float:
    """BLEU of a single sentence: :func:`corpus_bleu` of a one-sentence corpus."""
    return corpus_bleu([candidate], [references], max_n)
