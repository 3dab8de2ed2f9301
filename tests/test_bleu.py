"""tformer.bleu against cases worked by hand and against the formula of Papineni et al. (2002)."""

import itertools
import math
import random

import pytest

from tformer.bleu import (
    brevity_penalty,
    closest_reference_length,
    corpus_bleu,
    modified_precision,
    ngrams,
    sentence_bleu,
)

CAT = ["the", "cat", "sat", "on", "the", "mat"]
REF = ["the", "cat", "is", "on", "the", "mat"]


def test_modified_precision_by_hand():
    # unigrams: the ×2 (the reference has 2), cat, on, mat match; sat does not → 5/6
    assert modified_precision(CAT, [REF], 1) == (5, 6)
    # bigrams: "the cat", "on the", "the mat" of 5 → 3/5
    assert modified_precision(CAT, [REF], 2) == (3, 5)
    # trigrams: only "on the mat" of 4 → 1/4; 4-grams: none of 3
    assert modified_precision(CAT, [REF], 3) == (1, 4)
    assert modified_precision(CAT, [REF], 4) == (0, 3)


def test_clipping_papineni_example():
    """Papineni et al.'s example: seven "the" against references with at most two."""
    candidate = ["the", "the", "the", "the", "the", "the", "the"]
    references = [["the", "cat", "is", "on", "the", "mat"], ["there", "is", "a", "cat", "on", "the", "mat"]]
    assert modified_precision(candidate, references, 1) == (2, 7)


def test_clipping_takes_the_maximum_over_references_not_the_sum():
    candidate = ["the", "the", "the", "the"]
    assert modified_precision(candidate, [["the", "cat"], ["the", "the", "mat"]], 1) == (2, 4)


def test_bleu_by_hand_with_a_zero_four_gram_count():
    # up to trigrams: (5/6 · 3/5 · 1/4)^(1/3) = (1/8)^(1/3) = 0.5, BP = 1 (c = r = 6)
    assert corpus_bleu([CAT], [[REF]], max_n=3) == pytest.approx(0.5)
    # no 4-gram matches: the geometric mean, and BLEU-4, is 0
    assert corpus_bleu([CAT], [[REF]]) == 0.0


def test_brevity_penalty_by_hand():
    short = ["the", "cat"]
    # p1 = 2/2, p2 = 1/1 → mean 1; c = 2, r = 6 → BP = exp(1 − 3) = e^-2
    assert corpus_bleu([short], [[REF]], max_n=2) == pytest.approx(math.exp(-2))
    assert brevity_penalty(7, 6) == 1.0
    assert brevity_penalty(6, 6) == 1.0  # exp(1 − 1)
    assert brevity_penalty(3, 6) == pytest.approx(math.exp(-1))
    assert brevity_penalty(0, 6) == 0.0


def test_effective_reference_length_is_the_closest_shorter_on_ties():
    refs = [list("abcd"), list("abcdef")]
    assert closest_reference_length(list("abcde"), refs) == 4  # 4 and 6 tie → shorter
    assert closest_reference_length(list("abcdefg"), refs) == 6


def test_corpus_level_sums_counts_before_dividing():
    # sentence A: p1 = 2/2, p2 = 1/1; sentence B: p1 = 2/4 (c, e), p2 = 0/3
    a, a_ref = ["a", "b"], ["a", "b"]
    b, b_ref = ["c", "d", "e", "f"], ["c", "x", "e", "y"]
    # corpus: p1 = 4/6, p2 = 1/4, c = r = 6 → sqrt(1/6)
    assert corpus_bleu([a, b], [[a_ref], [b_ref]], max_n=2) == pytest.approx(math.sqrt(1 / 6))
    averaged = (sentence_bleu(a, [a_ref], 2) + sentence_bleu(b, [b_ref], 2)) / 2
    assert averaged == pytest.approx(0.5)  # the average of sentence scores is different


def test_identical_text_scores_one():
    assert corpus_bleu([CAT, REF], [[CAT], [REF]]) == pytest.approx(1.0)


def _formula(candidates, references, max_n):
    """Papineni et al.'s definition, written out with plain lists."""
    log_p = 0.0
    for n in range(1, max_n + 1):
        matched = total = 0
        for cand, refs in zip(candidates, references):
            grams = [tuple(cand[i : i + n]) for i in range(len(cand) - n + 1)]
            for gram in set(grams):
                best = max(
                    [tuple(r[i : i + n]) for i in range(len(r) - n + 1)].count(gram) for r in refs
                )
                matched += min(grams.count(gram), best)
            total += len(grams)
        if matched == 0:
            return 0.0
        log_p += math.log(matched / total) / max_n
    c = sum(len(cand) for cand in candidates)
    r = sum(min(refs, key=lambda ref: (abs(len(ref) - len(cand)), len(ref))).__len__()
            for cand, refs in zip(candidates, references))
    bp = 1.0 if c > r else math.exp(1 - r / c)
    return bp * math.exp(log_p)


@pytest.mark.parametrize("seed", range(5))
def test_against_the_formula_on_random_corpora(seed):
    rng = random.Random(seed)
    words = list("abcd")
    candidates, references = [], []
    for _ in range(6):
        candidates.append([rng.choice(words) for _ in range(rng.randint(4, 12))])
        references.append([[rng.choice(words) for _ in range(rng.randint(4, 12))]
                           for _ in range(rng.randint(1, 3))])
    for max_n in (1, 2, 4):
        assert corpus_bleu(candidates, references, max_n) == pytest.approx(
            _formula(candidates, references, max_n)
        )


def test_ngrams_and_errors():
    assert ngrams("abab", 2) == {("a", "b"): 2, ("b", "a"): 1}
    assert sum(ngrams("ab", 3).values()) == 0
    with pytest.raises(ValueError, match="n must be"):
        ngrams("ab", 0)
    with pytest.raises(ValueError, match="reference"):
        modified_precision(CAT, [], 1)
    with pytest.raises(ValueError, match="candidates but"):
        corpus_bleu([CAT], [[REF], [REF]])
    assert list(itertools.islice(ngrams(CAT, 1), 1)) == [("the",)]
