"""Translations of the book's prose: one set of notebooks, two languages.

The English notebooks and pages are the only source. A translation is stored per **prose unit**:
one block of a markdown cell (or of a ``.md`` page), as the blank lines outside fences and display
math delimit it, keyed by the SHA-1 of its English text. Code cells are never translated or
copied by hand: a Chinese notebook is the English notebook with its markdown replaced
unit by unit (``assemble``), so it runs exactly the same code.

Translation files live in ``locale/<lang>/`` and mirror the English sources::

    locale/zh/book/07_multihead.md        units of book/07_multihead.ipynb
    locale/zh/book/glossary.md            units of book/glossary.md
    locale/zh/solutions/07_multihead.md   units of solutions/07_multihead.ipynb (exercise text)

Each unit is a marker line and the translated text up to the next marker::

    <!-- 42ac2303.0 #3f2a9c1b0e -->
    (ch07-why)=
    ## 一个头只返回一种混合
    ...

``42ac2303.0`` is the unit's place (cell id and block number; ``p`` instead of a cell id in a
``.md`` page), ``3f2a9c1b0e`` the hash of the English text it was translated from. A unit whose
English text changed keeps its place but not its hash: it is *stale*. ``TODO`` after the hash
marks a unit that still holds the English text (written by ``update``).

Blocks without prose (display math, code, labels, HTML comments, bare roles) need no translation
and are copied unchanged.

Commands (``python tools/i18n.py ...``):

* ``status`` lists, per source, every unit that is missing, stale or still TODO, and every
  translation whose markup (glue keys, roles' targets, labels, directives, math) differs from
  the English; exit status 1 if there is any. This is what to run after editing English prose.
* ``update`` rewrites the translation files in English order: translations are kept (moved to
  their unit's new place if the text moved), missing and stale units get a ``TODO`` entry holding
  the new English text (a stale unit also keeps its old translation in a comment, to edit).
* ``show SOURCE`` prints a source's units side by side (English, then the translation), for review.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LANGUAGES = ("zh",)

# The English sources whose prose is translated: the chapters and back matter (book/), and the
# solution notebooks (exercise statements and hints; the exercise pages and the reader's copies
# are generated from them). book/exercises/*.md is generated, so it is not listed.
SOURCE_GLOBS = ("book/*.ipynb", "book/*.md", "solutions/*.ipynb")

FENCE = re.compile(r"^(?P<indent> {0,3})(?P<mark>`{3,}|~{3,}|:{3,})(?P<info>.*)$")
# Directives whose body is a list of independent entries: split inside, one unit per entry.
SPLIT_INSIDE = ("{glossary}",)
MARKER = re.compile(r"^<!-- (?P<place>[\w\-]+\.\d+) #(?P<hash>[0-9a-f]{10})(?P<todo> TODO)? -->$")
CJK = re.compile(r"[\u3400-\u9fff]")
# Inline math: $...$ on one line, or broken over two lines of one paragraph.
INLINE_MATH = r"(?<!\\)\$(?:[^$\n]|\n(?![ \t]*\n))+?\$"


def unit_hash(text: str) -> str:
    """The first 10 hex digits of the SHA-1 of a unit's English text (trailing spaces ignored)."""
    normal = "\n".join(line.rstrip() for line in text.strip("\n").split("\n"))
    return hashlib.sha1(normal.encode("utf-8")).hexdigest()[:10]


# ---------------------------------------------------------------------------------------------
# Splitting a markdown text into blocks


def split_blocks(text: str) -> list[tuple[str, str]]:
    """Split MyST markdown into ``(block, separator)`` pairs; ``"".join(b + s) == text``.

    A block ends at a blank line, except inside a fence (```` ``` ````, ``~~~``, ``:::``) or a
    display-math ``$$`` block; inside a ``{glossary}`` fence each entry is its own block, and the
    fence's opening and closing lines are blocks of their own.
    """
    lines = text.split("\n")
    spans: list[tuple[int, int]] = []  # [start, end) line ranges of blocks
    start: int | None = None
    fence: tuple[str, int, bool] | None = None  # (char, length, split inside)
    in_math = False

    def close(end: int) -> None:
        nonlocal start
        if start is not None and end > start:
            spans.append((start, end))
        start = None

    for i, line in enumerate(lines):
        stripped = line.strip()
        if fence is not None:
            char, length, split = fence
            is_close = (stripped and set(stripped) == {char} and len(stripped) >= length
                        and len(line) - len(line.lstrip()) <= 3)
            if is_close:
                if split:
                    close(i)
                    spans.append((i, i + 1))
                    fence = None
                    continue
                fence = None
                continue
            if split and not stripped:
                close(i)
                continue
            if start is None:
                start = i
            continue
        if in_math:
            if stripped.endswith("$$"):
                in_math = False
            continue
        if not stripped:
            close(i)
            continue
        if start is None:
            start = i
        match = FENCE.match(line)
        if match:
            info = match["info"].strip()
            split = any(info.startswith(name) for name in SPLIT_INSIDE)
            fence = (match["mark"][0], len(match["mark"]), split)
            if split:
                close(i)
                spans.append((i, i + 1))
                start = None
            continue
        if stripped.startswith("$$") and not (len(stripped) > 2 and stripped.endswith("$$")):
            in_math = True
    close(len(lines))

    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)  # start of each line; the last is len + 1

    def block_span(s: int, e: int) -> tuple[int, int]:
        return offsets[s], offsets[e] - 1  # without the newline after the block's last line

    pairs: list[tuple[str, str]] = []
    if not spans:
        return [("", text)]
    first_start = block_span(*spans[0])[0]
    if first_start:
        pairs.append(("", text[:first_start]))
    for n, (s, e) in enumerate(spans):
        begin, finish = block_span(s, e)
        following = block_span(*spans[n + 1])[0] if n + 1 < len(spans) else len(text)
        pairs.append((text[begin:finish], text[finish:following]))
    assert "".join(b + s for b, s in pairs) == text, "split_blocks lost text"
    return pairs


_CODE_FENCE_INFO = re.compile(r"^(\{(code-cell|code-block|code|sourcecode)\}.*|[\w+-]*)$")


def _prose_of(block: str) -> str:
    """What a reader reads of a block once math, code, markup and targets are removed."""
    lines = block.split("\n")
    kept: list[str] = []
    fence: tuple[str, int, bool] | None = None
    for line in lines:
        stripped = line.strip()
        if fence is not None:
            char, length, is_code = fence
            if stripped and set(stripped) == {char} and len(stripped) >= length:
                fence = None
                continue
            option = re.match(r"^\s*:([\w-]+):", line)
            if not is_code and not (option and option[1] not in ("alt", "caption")):
                kept.append(line)
            continue
        match = FENCE.match(line)
        if match:
            info = match["info"].strip()
            fence = (match["mark"][0], len(match["mark"]), bool(_CODE_FENCE_INFO.match(info)))
            # the directive's argument (an admonition's title) is prose; a glue key is not
            if info.startswith("{") and "}" in info:
                name, _, argument = info[1:].partition("}")
                if not name.startswith("glue") and name not in ("margin", "glossary"):
                    kept.append(argument)
            continue
        option = re.match(r"^\s*:([\w-]+):", line)
        if option and option[1] not in ("alt", "caption"):  # directive options are not prose
            continue
        kept.append(line)
    text = "\n".join(kept)
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"\$\$.*?\$\$", " ", text, flags=re.S)
    text = re.sub(INLINE_MATH, " ", text)
    text = re.sub(r"\{[\w:-]+\}`([^`<]*)<[^`>]*>`", r" \1 ", text)  # role with a title
    text = re.sub(r"\{[\w:-]+\}`[^`]*`", " ", text)  # bare role: its target only
    text = re.sub(r"``[^`]*``|`[^`\n]*`", " ", text)
    text = re.sub(r"^\s*\([\w\-:]+\)=\s*$", " ", text, flags=re.M)
    text = re.sub(r"https?://\S+", " ", text)
    text = re.sub(r"\]\([^)]*\)", "] ", text)
    return text


def needs_translation(block: str) -> bool:
    """A block needs translating if it holds prose: a word of two Latin letters outside markup."""
    if re.search(r"\\text\{[^{}]*[A-Za-z]+ +[A-Za-z]+", block):  # words inside the math
        return True
    return bool(re.search(r"[A-Za-z]{2,}", _prose_of(block)))


# ---------------------------------------------------------------------------------------------
# Units of a source


@dataclass(frozen=True)
class Unit:
    """One prose unit of an English source: its place, its English text and that text's hash."""

    source: str  # path relative to the repository root, e.g. "book/07_multihead.ipynb"
    place: str  # "<cell id>.<block number>", or "p.<block number>" in a .md page
    text: str

    @property
    def hash(self) -> str:
        return unit_hash(self.text)

    def describe(self) -> str:
        first = " ".join(self.text.split())[:70]
        return f"{self.source} unit {self.place} (“{first}…”)"


def _markdown_cells(path: Path) -> list[tuple[str, str]]:
    """``(cell id, source)`` of every markdown cell of a notebook, or of a .md page as one cell."""
    if path.suffix == ".md":
        return [("p", path.read_text(encoding="utf-8"))]
    notebook = json.loads(path.read_text(encoding="utf-8"))
    cells = []
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] == "markdown":
            source = cell["source"]
            text = "".join(source) if isinstance(source, list) else source
            cells.append((cell.get("id") or f"cell{index}", text))
    return cells


def units_of(path: Path, root: Path = ROOT) -> list[Unit]:
    """The prose units of one English source, in reading order."""
    relative = path.resolve().relative_to(root.resolve()).as_posix()
    units = []
    for cell_id, text in _markdown_cells(path):
        for n, (block, _) in enumerate(split_blocks(text)):
            if block and needs_translation(block):
                units.append(Unit(relative, f"{cell_id}.{n}", block))
    return units


def sources(root: Path = ROOT) -> list[Path]:
    """Every English source with prose to translate."""
    found: list[Path] = []
    for pattern in SOURCE_GLOBS:
        found.extend(sorted(root.glob(pattern)))
    return found


def locale_file(source: Path, lang: str, root: Path = ROOT) -> Path:
    relative = source.resolve().relative_to(root.resolve())
    return root / "locale" / lang / relative.with_suffix(".md")


# ---------------------------------------------------------------------------------------------
# Translation files


@dataclass
class Entry:
    place: str
    hash: str
    text: str
    todo: bool = False


def read_entries(path: Path) -> list[Entry]:
    """The entries of one translation file (an empty list if it does not exist)."""
    if not path.exists():
        return []
    entries: list[Entry] = []
    current: Entry | None = None
    body: list[str] = []

    def flush() -> None:
        if current is not None:
            current.text = "\n".join(body).strip("\n")
            entries.append(current)

    for line in path.read_text(encoding="utf-8").split("\n"):
        match = MARKER.match(line)
        if match:
            flush()
            current = Entry(match["place"], match["hash"], "", bool(match["todo"]))
            body = []
        elif current is not None:
            body.append(line)
    flush()
    return entries


def write_entries(path: Path, entries: list[Entry], header: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    parts = [header.rstrip("\n") + "\n"]
    for entry in entries:
        todo = " TODO" if entry.todo else ""
        parts.append(f"<!-- {entry.place} #{entry.hash}{todo} -->\n{entry.text.strip()}\n")
    path.write_text("\n".join(parts), encoding="utf-8")


HEADER = (
    "<!-- Chinese translation of {source}, one entry per prose unit; see tools/i18n.py.\n"
    "     After editing the English, run `python tools/i18n.py update` and translate the TODO "
    "entries. -->\n"
)


def _is_translated(entry: Entry) -> bool:
    return not entry.todo and bool(CJK.search(entry.text))


@dataclass
class Lookup:
    """A source's translations, found by hash first (a unit that moved keeps its translation)."""

    by_hash: dict[str, Entry]
    by_place: dict[str, Entry]

    @classmethod
    def of(cls, entries: list[Entry]) -> Lookup:
        return cls({e.hash: e for e in entries if not e.todo},
                   {e.place: e for e in entries})

    def translation(self, unit: Unit) -> Entry | None:
        return self.by_hash.get(unit.hash)


# ---------------------------------------------------------------------------------------------
# Markup that must survive translation


_ROLE = re.compile(r"\{(?P<role>[\w:-]+)\}`(?P<body>[^`]*)`")


def skeleton(text: str) -> Counter:
    """The markup of a unit that a translation must keep: glue keys, roles' targets, labels,
    directives and their options' values except :alt:, link targets and the math."""
    items: Counter = Counter()
    for match in _ROLE.finditer(text):
        role, body = match["role"], match["body"]
        target = body.rsplit("<", 1)[1].rstrip(">").strip() if body.endswith(">") and "<" in body \
            else body.strip()
        target = " ".join(target.split())  # a target may be wrapped over two lines
        items[f"{role}:{target.lower() if role == 'term' else target}"] += 1
    for match in re.finditer(r"^\s*\(([\w\-:]+)\)=\s*$", text, flags=re.M):
        items[f"label:{match[1]}"] += 1
    for match in re.finditer(r"^\s*(`{3,}|~{3,}|:{3,})\s*(\{[\w:-]+\})\s*(\S*)", text, flags=re.M):
        argument = match[3] if match[2].startswith("{glue") else ""
        items[f"directive:{match[2]} {argument}".strip()] += 1
    for match in re.finditer(r"^\s*:(name|label|class|width|figwidth|align):\s*(.*)$", text,
                             flags=re.M):
        items[f"option:{match[1]}={match[2].strip()}"] += 1
    for match in re.finditer(r"\]\(([^)]+)\)", text):
        items[f"link:{match[1]}"] += 1
    math = re.findall(r"\$\$.*?\$\$|" + INLINE_MATH, text, flags=re.S)
    for formula in math:
        formula = re.sub(r"\\(text|mathrm|textrm|mbox)\{[^{}]*\}", r"\\\1{}", formula)
        items["math:" + "".join(formula.split())] += 1
    return items


def markup_problems(english: str, translation: str) -> list[str]:
    """How a translation's markup differs from the English unit's (empty if it does not)."""
    want, have = skeleton(english), skeleton(translation)
    problems = []
    for item in sorted((want - have).keys()):
        problems.append(f"missing {item!r}")
    for item in sorted((have - want).keys()):
        problems.append(f"extra {item!r}")
    return problems


def emphasis_problems(translation: str) -> list[str]:
    """Emphasis that would not render: CommonMark opens ``**`` only if it is not squeezed between
    a letter and punctuation, and Chinese text has no spaces — ``是**{term}`x`**，`` stays literal.
    Renders the unit with markdown-it (when available) and reports asterisks left in the text."""
    try:
        from markdown_it import MarkdownIt
    except ImportError:  # the check needs the book's venv; everything else runs on plain Python
        return []
    html = MarkdownIt("commonmark").render(translation)
    html = re.sub(r"<code>.*?</code>|<pre>.*?</pre>", " ", html, flags=re.S)
    html = re.sub(r"\$\$.*?\$\$|" + INLINE_MATH, " ", html, flags=re.S)
    problems = []
    for match in re.finditer(r"[^\n]{0,20}\*+[^\n]{0,20}", html):
        problems.append(f"emphasis does not render near {match[0].strip()!r}")
    return problems


# ---------------------------------------------------------------------------------------------
# Status, update, assemble


@dataclass
class Problem:
    unit: str
    kind: str  # "missing", "stale", "todo", "markup", "orphan"
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.kind}: {self.unit}" + (f" — {self.detail}" if self.detail else "")


def problems_of(source: Path, lang: str, root: Path = ROOT) -> list[Problem]:
    """Every unit of ``source`` without an up-to-date translation into ``lang``, and every
    translation whose markup differs from its English unit."""
    units = units_of(source, root)
    entries = read_entries(locale_file(source, lang, root))
    lookup = Lookup.of(entries)
    found: list[Problem] = []
    for unit in units:
        entry = lookup.translation(unit)
        if entry is None:
            old = lookup.by_place.get(unit.place)
            if old is not None and old.todo:
                found.append(Problem(unit.describe(), "todo", "still the English text"))
            elif old is not None:
                found.append(Problem(unit.describe(), "stale",
                                     f"translated from an older English text (#{old.hash}, "
                                     f"now #{unit.hash})"))
            else:
                found.append(Problem(unit.describe(), "missing", "no translation"))
            continue
        if not _is_translated(entry):
            found.append(Problem(unit.describe(), "todo", "holds no Chinese text"))
            continue
        for detail in markup_problems(unit.text, entry.text):
            found.append(Problem(unit.describe(), "markup", detail))
        for detail in emphasis_problems(entry.text):
            found.append(Problem(unit.describe(), "markup", detail))
    return found


def update(source: Path, lang: str, root: Path = ROOT) -> tuple[int, int]:
    """Rewrite ``source``'s translation file in English order; returns (kept, todo)."""
    units = units_of(source, root)
    path = locale_file(source, lang, root)
    entries = read_entries(path)
    lookup = Lookup.of(entries)
    relative = source.resolve().relative_to(root.resolve()).as_posix()
    result: list[Entry] = []
    kept = todo = 0
    for unit in units:
        entry = lookup.translation(unit)
        if entry is not None:
            result.append(Entry(unit.place, unit.hash, entry.text))
            kept += 1
            continue
        old = lookup.by_place.get(unit.place)
        text = unit.text
        if old is not None and not old.todo:
            text += ("\n\n<!-- the translation of the previous English text, to edit:\n"
                     + old.text.replace("-->", "--\\>") + "\n-->")
        result.append(Entry(unit.place, unit.hash, text, todo=True))
        todo += 1
    write_entries(path, result, HEADER.format(source=relative))
    return kept, todo


# Chinese characters and full-width punctuation. A line break between two of them would be shown
# as a space by browsers (HTML collapses a newline into a space), so the assembled text joins them.
_WIDE = "\u3000-\u303f\u3400-\u9fff\uff00-\uffef\u2018-\u201d\u2014\u2026"
_WIDE_BREAK = re.compile(f"(?<=[{_WIDE}])\n[ \t]*(?=[{_WIDE}])")
_PUNCTUATION = "\u3000-\u303f\uff00-\uffef\u2018-\u201d\u2014\u2026"  # full-width punctuation
# A cross-reference whose shown text is Chinese: no space between it and Chinese text.
_XREF = re.compile(r"\{(?P<role>doc|ref|numref|term)\}`(?P<body>[^`]*)`")


def _shown_ends(match: re.Match) -> tuple[bool, bool]:
    """Whether the text a cross-reference shows starts / ends with a Chinese character."""
    body = match["body"]
    if body.endswith(">") and "<" in body:
        title = body.rsplit("<", 1)[0].strip()
        wide = re.compile(f"[{_WIDE}]")
        return bool(title) and bool(wide.fullmatch(title[0])), bool(title) and bool(
            wide.fullmatch(title[-1]))
    if match["role"] in ("doc", "ref"):  # the target's title: a Chinese heading
        return True, True
    if match["role"] == "numref":  # "图 11.2": Chinese, then a number
        return True, False
    return False, False  # a bare {term} shows the English term


def tidy_cross_references(text: str) -> str:
    """Drop the space a translator left between Chinese text and a cross-reference that shows
    Chinese text (``熟悉 {doc}`02_soft_dictionary` 中的`` would read “熟悉 作为软字典的注意力 中的”)."""
    out, end = [], 0
    for match in _XREF.finditer(text):
        starts, ends = _shown_ends(match)
        before = text[end:match.start()]
        if starts and before.endswith(" ") and re.search(f"[{_WIDE}] $", text[:match.start()]):
            before = before[:-1]
        out.append(before + match[0])
        end = match.end()
        if ends and text[end:end + 1] == " " and re.match(f" [{_WIDE}]", text[end:end + 2]):
            end += 1
    out.append(text[end:])
    return "".join(out)


# A line after which a break is markup, not a wrapped sentence: a fence or directive line (its
# title), a heading, a directive option, a label, a table row or an HTML line.
_MARKUP_LINE = re.compile(r"^\s*(`{3,}|~{3,}|:{3,}|#{1,6}\s|:[\w-]+:|\(|\||<)")
_LIST_ITEM = re.compile(r"^\s*([-*+]|\d+[.)])\s")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def join_cjk_lines(text: str) -> str:
    """``text`` with every line break between two Chinese characters removed (a translator may
    wrap lines; a reader must not see the stray spaces). A break after a markup line (a
    directive's title, a heading, an option) and the break between a glossary term and its
    indented definition are kept."""
    wide = re.compile(f"[{_WIDE}]")
    punctuation = re.compile(f"[{_PUNCTUATION}]")
    lines = text.split("\n")
    out = [lines[0]]
    for index, line in enumerate(lines[1:], start=1):
        following = lines[index + 1] if index + 1 < len(lines) else ""
        # a glossary entry's term lines: each stands alone above its indented definition
        term_line = bool(following.strip()) and _indent(following) > _indent(line)
        previous = out[-1].split("\n")[-1] if out else ""
        last = previous.rstrip()
        first = line.lstrip()[:1]
        joins = (
            last and first
            and (
                (wide.fullmatch(last[-1]) and wide.fullmatch(first))
                # next to full-width punctuation a break is a stray space whatever follows
                # ("计算；⏎$T$"), unless the next line starts a list item or markup
                or ((punctuation.fullmatch(last[-1]) or punctuation.fullmatch(first))
                    and not _LIST_ITEM.match(line) and not _MARKUP_LINE.match(line)
                    and not term_line)
            )
            and not _MARKUP_LINE.match(previous)
            and not (_indent(line) > _indent(previous) and not _LIST_ITEM.match(previous))
        )
        if joins:
            out[-1] = out[-1].rstrip() + line.lstrip()
        else:
            out.append(line)
    return "\n".join(out)


def translate_text(source_text: str, cell_id: str, lookup: Lookup, relative: str) -> str:
    """One markdown cell (or page) with every prose unit replaced by its translation.

    Raises ``KeyError`` naming the unit if a translation is missing (the build must not publish
    English paragraphs on a Chinese page silently).
    """
    out = []
    for n, (block, separator) in enumerate(split_blocks(source_text)):
        if block and needs_translation(block):
            unit = Unit(relative, f"{cell_id}.{n}", block)
            entry = lookup.translation(unit)
            if entry is None or not _is_translated(entry):
                raise KeyError(f"no translation: {unit.describe()}")
            block = tidy_cross_references(join_cjk_lines(entry.text))
        out.append(block + separator)
    return "".join(out)


def assemble(source: Path, lang: str, root: Path = ROOT) -> str:
    """The translated text of an English source: a notebook's JSON with its markdown cells
    translated (code cells, outputs and metadata untouched, ``metadata.language`` set), or a
    .md page's text."""
    relative = source.resolve().relative_to(root.resolve()).as_posix()
    lookup = Lookup.of(read_entries(locale_file(source, lang, root)))
    if source.suffix == ".md":
        return translate_text(source.read_text(encoding="utf-8"), "p", lookup, relative)
    notebook = json.loads(source.read_text(encoding="utf-8"))
    return json.dumps(translate_notebook(notebook, lookup, relative, lang), ensure_ascii=False,
                      indent=1) + "\n"


def translate_notebook(notebook: dict, lookup: Lookup, relative: str, lang: str) -> dict:
    """A copy of a notebook (any: chapter, solution, reader's copy, executed) with its markdown
    cells translated through ``lookup``; cells are matched by id."""
    notebook = json.loads(json.dumps(notebook))
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        source = cell["source"]
        text = "".join(source) if isinstance(source, list) else source
        cell["source"] = translate_text(text, cell.get("id") or f"cell{index}", lookup, relative)
    notebook.setdefault("metadata", {})["language"] = lang
    return notebook


def lookup_for(source: Path, lang: str, root: Path = ROOT) -> Lookup:
    return Lookup.of(read_entries(locale_file(source, lang, root)))


# ---------------------------------------------------------------------------------------------
# Command line


def _sources_from(args: list[str], root: Path) -> list[Path]:
    if not args:
        return sources(root)
    return [root / a if not Path(a).is_absolute() else Path(a) for a in args]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("status", "update", "show", "size"))
    parser.add_argument("sources", nargs="*", help="English sources (default: all)")
    parser.add_argument("--lang", default="zh", choices=LANGUAGES)
    args = parser.parse_args(argv)
    chosen = _sources_from(args.sources, ROOT)
    if args.command == "status":
        total = 0
        for source in chosen:
            found = problems_of(source, args.lang)
            total += len(found)
            for problem in found:
                print(problem)
        count = sum(len(units_of(s)) for s in chosen)
        print(f"{count} prose units in {len(chosen)} sources; {total} need work", file=sys.stderr)
        return 1 if total else 0
    if args.command == "update":
        for source in chosen:
            kept, todo = update(source, args.lang)
            if todo:
                print(f"{locale_file(source, args.lang).relative_to(ROOT)}: {kept} kept, "
                      f"{todo} to translate")
        return 0
    if args.command == "size":
        english = chinese = 0
        for source in chosen:
            english += sum(len(u.text) for u in units_of(source))
            chinese += sum(len(e.text) for e in read_entries(locale_file(source, args.lang))
                           if not e.todo)
        print(f"English prose units: {english:,} characters; {args.lang}: {chinese:,} characters")
        return 0
    for source in chosen:  # show
        lookup = lookup_for(source, args.lang)
        for unit in units_of(source):
            entry = lookup.translation(unit)
            print(f"=== {unit.place} #{unit.hash}\n{unit.text}\n--- {args.lang}\n"
                  f"{entry.text if entry else '(none)'}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
