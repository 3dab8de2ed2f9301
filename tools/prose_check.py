"""The prose states no measurement by hand and points at nothing the reader cannot follow
(issue 22 §2; GUIDE §9).

Two checks on the markdown cells of the chapter notebooks (``book/*.ipynb``):

* **Hand-typed rates** (:func:`typed_rates`): a seed rate or sweep result written as a number
  instead of a ``{glue:text}`` role: "6 of 10 seeds", "in 9/10 runs", "8 out of 10 kernels",
  "ten seeds", "all four CPU kernels", "90 % of the runs". Glue roles, math, links' targets,
  citations and code are blanked first, so ``{glue:text}`rate` of {glue:text}`seeds` seeds``
  passes. A count or percentage counts only next to a word for repeated trainings (seed, run,
  restart, trial, initialisation, CPU kernel): years, model sizes, layer and head counts and
  equation numbers are left alone.
* **Unfollowable references** (:func:`internal_references`): the internal seed texts ("source
  000", "source 3", "seed text") and repository paths (``bench/``, ``tests/``, ``src/``,
  ``tools/``) outside a box whose title starts with "Reproduce" (a ``{admonition}`` or any other
  directive), which may name the script that reproduces a result.

Usage: .venv/bin/python tools/prose_check.py [book/NN_x.ipynb ...]   (default: every chapter)
Prints each finding (notebook, cell, the phrase in its sentence); exit status 1 on any.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

NUMBER_WORDS = (
    "two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|"
    "fifty|hundred"
)
COUNT = rf"(?:\d[\d,]*|{NUMBER_WORDS}|one|zero|no|none|all|every)"
# what a seed rate or a sweep counts: repeated trainings, and the CPU kernels they ran under
TRIALS = (
    r"(?:random\s+|different\s+|training\s+|independent\s+)?"
    r"(?:seeds?|runs?|restarts?|trials?|initiali[sz]ations?|trainings?|CPU\s+kernels?|kernels?)"
)

RATE_PATTERNS = [
    # "6 of 10 seeds", "nine out of ten runs", "3 of the 4 CPU kernels", "all 10 of 10 seeds"
    re.compile(rf"\b{COUNT}\s+(?:out\s+)?of\s+(?:the\s+|its\s+|our\s+|all\s+)?"
               rf"(?:\d[\d,]*|{NUMBER_WORDS})\b(?:\s+\w+){{0,3}}?\s+{TRIALS}\b", re.I),
    # "6 of 10" with the trials named before it: "seeds: 6 of 10", "runs (9 of 10)"
    re.compile(rf"\b{TRIALS}\W{{1,3}}(?:[\w,:;()\-]+\s+){{0,5}}?\d+\s+(?:out\s+)?of\s+\d+\b", re.I),
    # "9/10 seeds", "in 9/10 runs", "10/10", "holds 7 / 10"
    re.compile(rf"\b\d+\s*/\s*\d+\b(?:\s+\w+){{0,2}}?\s+{TRIALS}\b", re.I),
    re.compile(rf"\b{TRIALS}\W{{1,3}}(?:[\w,:;()\-]+\s+){{0,5}}?\d+\s*/\s*\d+\b", re.I),
    # "ten seeds", "4 CPU kernels", "100 runs" (a count next to the trials)
    re.compile(rf"\b(?:\d[\d,]*|{NUMBER_WORDS})(?:\s+(?:random|different|training|independent|"
               rf"more|other|fresh|new))?\s+(?:seeds|runs|restarts|trials|initiali[sz]ations|"
               rf"trainings|CPU\s+kernels)\b", re.I),
    # "in 90 % of the runs", "60% of seeds"
    re.compile(rf"\b\d+(?:\.\d+)?\s?(?:%|percent)\s+of\s+(?:the\s+|all\s+)?(?:\w+\s+)?{TRIALS}\b",
               re.I),
]
# a percentage or a count in a sentence about seeds or runs: "the success rate over seeds is 80 %"
SENTENCE_KEYWORD = re.compile(r"\b(?:seeds?|restarts?|CPU\s+kernels?|success\s+rate)\b", re.I)
# ... or a glued count over a typed total: "{glue:text}`k` of 10 at six layers"
SENTENCE_NUMBER = re.compile(
    r"\b\d+(?:\.\d+)?\s?(?:%|percent)|\b\d+\s*/\s*\d+\b|"
    rf"\bGLUED\s+(?:out\s+)?of\s+(?:the\s+)?(?:\d[\d,]*|{NUMBER_WORDS})\b", re.I)
# not a result: a claim's threshold ("accuracy above 85 %"), timing repeats ("best of five
# runs"), and "the two runs" compared with each other
NOT_A_RESULT = re.compile(
    r"(?:\b(?:above|below|than|least|most|within|exceeds?|reaches?)\s+(?:\w+\s+)?$)|"
    r"(?:\b(?:best|median|mean|minimum|fastest)\s+of\s+(?:\w+\s+to\s+)?$)", re.I)
PAIR = re.compile(r"\b(?:the|these|those|both)\s+$", re.I)

SEED_TEXT_PATTERNS = [
    re.compile(r"\bsources?\s+(?:0\d\d|\d{1,3})\b(?!\s*(?:bits|tokens|positions|words))", re.I),
    re.compile(r"\bseed[-\s]+texts?\b", re.I),
    re.compile(r"\b00[0-9]\s*§"),
    re.compile(r"\b(?:lecture\s+)?notes\s+00\d\b", re.I),
    re.compile(r"\b00[0-9]'s\b"),
    re.compile(r"\bseeds/\d"),
]
PATH_PATTERN = re.compile(r"(?<![\w.\-/])(?:bench|tests|src|tools)/[\w.*\-/]*")

# blanked before checking: roles (glue, cite, ref, ...), inline code, math, link targets, HTML
_BLANKS = [
    (re.compile(r"\{glue(?::\w+)?\}`[^`]*`"), " GLUED "),  # a glued value
    re.compile(r"\{[\w:\-]+\}`[^`]*`"),  # {glue:text}`name:fmt`, {cite:p}`x`, {numref}`y`
    re.compile(r"`[^`\n]*`"),  # inline code
    re.compile(r"\$\$.*?\$\$", re.S),
    re.compile(r"\$[^$\n]+\$"),
    re.compile(r"\]\([^)\s]*\)"),  # link targets (the link's text stays)
    re.compile(r"<[^>\n]+>"),  # HTML tags and autolinks
    re.compile(r"^\s*\(\S+\)=\s*$", re.M),  # MyST targets
    re.compile(r"^\s*:[\w-]+:.*$", re.M),  # directive options (:label:, :class: ...)
]
_FENCE = re.compile(r"^(\s*)(`{3,}|:{3,})\s*(\{[\w:\-]+\})?\s*(.*)$")


def blank(text: str) -> str:
    """``text`` with glue roles replaced by ``GLUED``; other roles, code, math, link targets
    and HTML by a neutral word."""
    for pattern in _BLANKS:
        pattern, replacement = pattern if isinstance(pattern, tuple) else (pattern, " X ")
        text = pattern.sub(replacement, text)
    return text


def split_reproduce(markdown: str) -> tuple[str, str]:
    """(the prose outside every "Reproduce" box, the prose inside them). A box is a fenced
    directive (backticks or colons) whose argument (its title) starts with "Reproduce", for
    example ``:::{admonition} Reproduce this table``; plain code fences are dropped."""
    outside, inside = [], []
    stack: list[tuple[str, int, str]] = []  # (fence character, length, kind)
    for line in markdown.splitlines():
        match = _FENCE.match(line)
        if match and stack and match.group(2)[0] == stack[-1][0] and \
                len(match.group(2)) >= stack[-1][1] and not match.group(3) and not match.group(4):
            stack.pop()
            continue
        if match and (match.group(3) or not stack or stack[-1][2] != "code"):
            directive, title = match.group(3), match.group(4).strip()
            if directive:
                kind = "reproduce" if title.lower().startswith("reproduce") else "directive"
                if directive in ("{code-cell}", "{code-block}", "{code}", "{math}"):
                    kind = "code"
            else:
                kind = "code"
            stack.append((match.group(2)[0], len(match.group(2)), kind))
            if kind == "directive" and title:
                outside.append(title)  # a box's title is prose too
            continue
        kinds = {kind for _, _, kind in stack}
        if "code" in kinds:
            continue
        (inside if "reproduce" in kinds else outside).append(line)
    return "\n".join(outside), "\n".join(inside)


def _sentence(text: str, start: int, end: int) -> str:
    left = max(text.rfind(". ", 0, start), text.rfind("\n\n", 0, start))
    right = min((i for i in (text.find(". ", end), text.find("\n\n", end)) if i >= 0),
                default=len(text))
    return " ".join(text[left + 1 : right + 1].split())


def typed_rates(markdown: str) -> list[str]:
    """The phrases of ``markdown`` that state a seed rate or sweep result by hand, each with
    its sentence: ``"'6 of 10 seeds' in: The pair forms in 6 of 10 seeds."``."""
    text = blank(split_reproduce(markdown)[0])
    found: dict[tuple[int, int], str] = {}
    for pattern in RATE_PATTERNS:
        for match in pattern.finditer(text):
            before = text[max(0, match.start() - 40) : match.start()]
            if NOT_A_RESULT.search(before) or (
                PAIR.search(before) and match.group(0).lower().startswith("two ")
            ):
                continue
            found[match.span()] = match.group(0)
    for paragraph in re.finditer(r"[^\n](?:.|\n(?!\n))*", text):
        for sentence in re.split(r"(?<=[.!?])\s+", paragraph.group(0)):
            if SENTENCE_KEYWORD.search(sentence):
                for match in SENTENCE_NUMBER.finditer(sentence):
                    if NOT_A_RESULT.search(sentence[: match.start()]):
                        continue
                    offset = paragraph.start() + paragraph.group(0).find(sentence)
                    found.setdefault((offset + match.start(), offset + match.end()), match.group(0))
    spans = sorted(found)
    merged = [s for s in spans if not any(o != s and o[0] <= s[0] and s[1] <= o[1] for o in spans)]
    findings = [f"{' '.join(found[s].split())!r} in: {_sentence(text, *s)}" for s in merged]
    return [finding.replace("GLUED", "{glue}") for finding in findings]


def internal_references(markdown: str) -> list[str]:
    """References to the seed texts anywhere and repository paths outside "Reproduce" boxes."""
    outside, inside = split_reproduce(markdown)
    findings = []
    for text in (outside, inside):
        stripped = re.sub(r"\{[\w:\-]+\}`[^`]*`", " X ", text)  # roles name labels, not sources
        spans: list[tuple[int, int]] = []
        for pattern in SEED_TEXT_PATTERNS:
            for m in pattern.finditer(stripped):
                if any(a < m.end() and m.start() < b for a, b in spans):
                    continue  # "source 002 §6" is one reference, not two
                spans.append(m.span())
                findings.append(f"seed text {m.group(0)!r} in: {_sentence(stripped, *m.span())}")
    for match in PATH_PATTERN.finditer(outside):
        findings.append(f"path {match.group(0)!r} outside a Reproduce box in: "
                        f"{_sentence(outside, *match.span())}")
    return findings


def markdown_cells(path: Path) -> list[tuple[int, str]]:
    """(index in the notebook, source) of each markdown cell."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    return [
        (index, "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"])
        for index, cell in enumerate(notebook["cells"])
        if cell["cell_type"] == "markdown"
    ]


def check(path: Path) -> list[str]:
    """Every finding of both checks in one notebook, each naming its cell."""
    findings = []
    for index, source in markdown_cells(path):
        findings += [f"cell {index}: typed rate {x}" for x in typed_rates(source)]
        findings += [f"cell {index}: {x}" for x in internal_references(source)]
    return findings


def chapters() -> list[Path]:
    return sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))


def main(argv: list[str]) -> int:
    paths = [Path(arg) for arg in argv] or chapters()
    failed = False
    for path in paths:
        findings = check(path)
        failed = failed or bool(findings)
        print(f"{'ok    ' if not findings else 'FAILED'} {path}")
        for finding in findings:
            print(f"  {finding}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
