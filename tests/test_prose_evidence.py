"""No hand-typed seed rate or sweep result in a chapter's prose, and no reference the reader
cannot follow (issue 22 §2): the checks of ``tools/prose_check.py``, tested on sample prose
first (a typed rate fails, a glued one passes), then run over every chapter."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import prose_check  # noqa: E402

TYPED = [
    "The circuit forms in 6 of 10 seeds.",
    "It held in 9/10 runs under AVX2.",
    "Eight out of ten seeds solve it.",
    "Over ten seeds the loss ends below 0.5.",
    "The pair forms in all four CPU kernels.",
    "We trained 3 seeds for each depth.",
    "It succeeded in 90 % of the runs.",
    "It fails for 2 of the 4 CPU kernels.",
    "Seeds: 7 of 10 formed the circuit.",
    "The success rate over seeds is 70 %.",
    "Under each kernel the one-head model failed in {glue:text}`n:d` of 10 seeds.",
    "in 10/10 runs",
    "(runs of the bench: 4 of 7 rows, every time)",
    "Over seeds it is lower in {glue:text}`a:d` of 10 at six layers.",
]

GLUED_OR_LEGITIMATE = [
    "The circuit forms in {glue:text}`formed:d` of {glue:text}`seeds:d` seeds.",
    "Over {glue:text}`n_seeds:d` seeds under each of {glue:text}`n_kernels:d` CPU kernels.",
    "Vaswani et al. (2017) train 6 layers with 8 heads and d = 512.",
    "GPT-2 small has 124 million parameters and 12 layers; GPT-3 has 175 billion.",
    "Equation (3) divides by $\\sqrt{d_k}$; in 2 of the 3 uses of attention keys come from the "
    "encoder.",
    "Fix the seed with `torch.manual_seed(0)` and rerun: `rate = 9/10 seeds` is code.",
    "The accuracy above 85 % held in all {glue:text}`runs` runs of ten seeds' worth.".replace(
        "of ten seeds' worth", "of the bench"),
    "Timings are the best of three to five runs.",
    "Where the prefix is correct the two runs read the same input.",
    "The layer costs $O(T^2 d)$: 4 of the 12 matrices are square.",
    "A window of 16 keeps 50 % of the scores at T = 32.",
    "The model runs 12 layers in 3.1 ms.",
    "One seed is not a fact; this run's seed gives {glue:text}`acc:.2f`.",
    "At {glue:text}`share:.0%` of 63 positions the token has occurred before.",
]


@pytest.mark.parametrize("text", TYPED)
def test_a_typed_rate_is_found(text):
    assert prose_check.typed_rates(text), f"not flagged: {text!r}"


@pytest.mark.parametrize("text", GLUED_OR_LEGITIMATE)
def test_a_glued_rate_or_a_sourced_fact_passes(text):
    assert not prose_check.typed_rates(text), prose_check.typed_rates(text)


def test_a_finding_quotes_its_phrase_and_sentence():
    (finding,) = prose_check.typed_rates("First sentence. The pair forms in 6 of 10 seeds. Last.")
    assert finding == "'6 of 10 seeds' in: The pair forms in 6 of 10 seeds."


INTERNAL = [
    "As source 000 shows, the scores grow.",
    "Source 3 gets the sign wrong.",
    "The seed texts disagree on the norm.",
    "Follow lecture notes 001 and 004.",
    "The patch exercise is 000's.",
    "The bench (`bench/sorter_seeds.py`) trains ten seeds.",
    "See tests/test_multihead.py for the check.",
    "The helper lives in src/tformer/induction.py.",
    "Run tools/visible_run.py to check.",
    ":::{note} About bench/x.py\nThe box is not a Reproduce box.\n:::",
]

FOLLOWABLE = [
    "As Vaswani et al. {cite:p}`vaswani2017` show, the scores grow.",
    ":::{admonition} Reproduce this table\n:class: tip\nRun `python bench/sorter_seeds.py`; "
    "it writes `src/tformer/data/bench/sorter.json`.\n:::",
    "```{admonition} Reproduce\nSee tests/test_induction.py.\n```",
    "The source sentence has 7 tokens; the target, 9.",
    "The benchmark of section 3 and the tests of chapter 5.",
    "```python\nopen('bench/results.json')\n```",
]


@pytest.mark.parametrize("text", INTERNAL)
def test_an_internal_reference_is_found(text):
    assert prose_check.internal_references(text), f"not flagged: {text!r}"


@pytest.mark.parametrize("text", FOLLOWABLE)
def test_a_citation_or_a_reproduce_box_passes(text):
    assert not prose_check.internal_references(text), prose_check.internal_references(text)


def test_a_seed_text_inside_a_reproduce_box_is_still_found():
    text = ":::{admonition} Reproduce\nAs source 000 says, run bench/x.py.\n:::"
    (finding,) = prose_check.internal_references(text)
    assert "source 000" in finding


# --- every chapter ------------------------------------------------------------------------------

CHAPTERS = prose_check.chapters()


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_prose_types_no_rate(path):
    findings = [
        f"cell {index}: {finding}"
        for index, source in prose_check.markdown_cells(path)
        for finding in prose_check.typed_rates(source)
    ]
    assert not findings, (
        f"{path.relative_to(ROOT)} states seed rates or sweep results by hand; glue them "
        f"(tformer.seed_rates.rate, committed bench data):\n" + "\n".join(findings)
    )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_prose_refers_to_nothing_the_reader_cannot_follow(path):
    findings = [
        f"cell {index}: {finding}"
        for index, source in prose_check.markdown_cells(path)
        for finding in prose_check.internal_references(source)
    ]
    assert not findings, (
        f"{path.relative_to(ROOT)} refers to the seed texts or to repository paths outside a "
        f"'Reproduce' box; cite published work:\n" + "\n".join(findings)
    )
