"""Exercise authoring: one source (``solutions/``), generated reader copies and book pages.

``python -m tformer.authoring`` (``make exercises``) reads every ``solutions/NN_slug.ipynb`` and
writes

* ``exercises/NN_slug.ipynb`` — the reader's copy: each solution region becomes a stub, markdown
  cells tagged ``solution`` are dropped, outputs and execution counts are cleared; every other
  cell (source, id, metadata) is identical. The notebook metadata gains a ``tformer`` entry
  (chapter, exercise ids, titles and check calls) that the grader uses to notice deleted cells
  even when the file was renamed ("Copy of 02_….ipynb" on Colab).
* ``book/exercises/NN_slug.md`` — the exercise page of the book (MyST markdown, never executed):
  statements, hints, the worked solution collapsed (sphinx-exercise ``{solution}`` with
  ``:class: dropdown``) and links that open the reader's copy in Colab or Binder.

``python -m tformer.authoring --check`` writes nothing and exits 1 listing the files that are out
of date. The solution-notebook format is described in CONTRIBUTING.md ("Exercises").

A solution region is delimited by ``# BEGIN SOLUTION`` and ``# END SOLUTION`` comment lines. Its
stub is, in order of precedence:

1. the text given on the marker, ``# BEGIN SOLUTION stub="answer = None  # YOUR ANSWER HERE"``
   (``\\n`` in the text starts a new line; the marker's indentation is applied);
2. inside a function body: ``raise NotImplementedError  # YOUR CODE HERE``;
3. otherwise one ``name = None  # YOUR ANSWER HERE`` line per variable the region assigns that is
   used outside solution regions (e.g. ``answer``, read by the answer and check cells); a ``def``
   in the region keeps its signature and docstring and gets the ``raise NotImplementedError``
   body; with nothing used elsewhere, the comment ``# YOUR CODE HERE`` (``pass`` when indented).
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import posixpath
import re
import sys
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import nbformat

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_REPOSITORY = ("https://github.com/attention-executed/attention-executed", "main")

BEGIN = re.compile(r"^(?P<indent>[ \t]*)#\s*BEGIN SOLUTION\b(?:\s+stub=(?P<q>[\"'])(?P<stub>.*)(?P=q))?\s*$")
END = re.compile(r"^[ \t]*#\s*END SOLUTION\b\s*$")
# "## Exercise 07.3 — Title", and in the Chinese edition "## 练习 07.3 — 标题".
HEADING = re.compile(
    r"^(?P<hashes>#{1,6})\s*(?:Exercise\s+|练习\s*)(?P<id>\d+\.\d+)\s*"
    r"(?:[—–:：-]+\s*(?P<title>.*?))?\s*$"
)
ANY_HEADING = re.compile(r"^(#{1,6})\s+\S")
CHECK_CALL = re.compile(r"\bch(?P<chapter>\d\d)\.(?P<name>\w+)\s*\(")
ANSWER_STUB = "None  # YOUR ANSWER HERE"
CODE_STUB = "raise NotImplementedError  # YOUR CODE HERE"
ANSWER_TAG, CHECK_TAG, SOLUTION_TAG, HINT_TAG = "nbval-check-output", "check", "solution", "hint"


class AuthoringError(ValueError):
    """A solution notebook does not follow the format (unbalanced markers, unparsable region)."""


# ---------------------------------------------------------------------------------------------
# Reading a notebook's exercise structure (shared with the grader)


@dataclass
class Section:
    """One exercise of a notebook: its heading cell and the cells up to the next heading."""

    exercise_id: str
    title: str
    heading_index: int
    cell_indices: list[int] = field(default_factory=list)
    check_indices: list[int] = field(default_factory=list)
    answer_indices: list[int] = field(default_factory=list)


def tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []) or [])


def heading_of(cell) -> tuple[int, str, str] | None:
    """``(level, exercise id, title)`` when ``cell`` is an exercise heading cell, else ``None``."""
    if cell.get("cell_type") != "markdown":
        return None
    lines = [line for line in str(cell.get("source", "")).splitlines() if line.strip()]
    if not lines:
        return None
    match = HEADING.match(lines[0].strip())
    if not match:
        return None
    return len(match["hashes"]), match["id"], (match["title"] or "").strip()


def _heading_level(cell) -> int | None:
    if cell.get("cell_type") != "markdown":
        return None
    levels = [
        len(match[1])
        for line in str(cell.get("source", "")).splitlines()
        if (match := ANY_HEADING.match(line))
    ]
    return min(levels) if levels else None


def is_check_cell(cell) -> bool:
    return cell.get("cell_type") == "code" and (
        CHECK_TAG in tags(cell) or bool(CHECK_CALL.search(str(cell.get("source", ""))))
    )


def sections(nb) -> list[Section]:
    """The exercises of a notebook in order. A section runs from an ``Exercise NN.k`` heading to
    the next heading of the same or a higher level (so a closing ``## Your score`` is no part of
    the last exercise)."""
    found: list[Section] = []
    current: Section | None = None
    current_level = 0
    for index, cell in enumerate(nb.get("cells", [])):
        heading = heading_of(cell)
        if heading is not None:
            current_level, exercise_id, title = heading
            current = Section(exercise_id, title, index, [index])
            found.append(current)
            continue
        level = _heading_level(cell)
        if current is not None and level is not None and level <= current_level:
            current = None
        if current is None:
            continue
        current.cell_indices.append(index)
        if is_check_cell(cell):
            current.check_indices.append(index)
        if ANSWER_TAG in tags(cell):
            current.answer_indices.append(index)
    return found


def chapter_of(path: Path | str) -> str | None:
    """``"02"`` for ``…/02_soft_dictionary.ipynb`` and for ``Copy of 02_soft_dictionary.ipynb``."""
    match = re.search(r"(?<!\d)(\d\d)_", Path(path).name)
    return match[1] if match else None


# ---------------------------------------------------------------------------------------------
# Solution regions → stubs


@dataclass
class _Region:
    start: int  # index of the BEGIN line
    end: int  # index of the END line
    indent: str
    stub: str | None


def _regions(lines: list[str], where: str) -> list[_Region]:
    regions: list[_Region] = []
    open_region: tuple[int, re.Match] | None = None
    for number, line in enumerate(lines):
        begin, end = BEGIN.match(line), END.match(line)
        if begin:
            if open_region is not None:
                raise AuthoringError(f"{where}: nested '# BEGIN SOLUTION' on line {number + 1}")
            open_region = (number, begin)
        elif end:
            if open_region is None:
                raise AuthoringError(f"{where}: '# END SOLUTION' without BEGIN on line {number + 1}")
            start, match = open_region
            stub = match["stub"].replace("\\n", "\n") if match["stub"] is not None else None
            regions.append(_Region(start, number, match["indent"], stub))
            open_region = None
    if open_region is not None:
        raise AuthoringError(f"{where}: '# BEGIN SOLUTION' on line {open_region[0] + 1} is never closed")
    return regions


def _parseable(source: str) -> str:
    """Blank out IPython-only lines (``%pip``, ``!ls``) so ``ast`` can parse a cell."""
    out = []
    for line in source.splitlines():
        stripped = line.lstrip()
        if stripped.startswith(("%", "!")):
            out.append(line[: len(line) - len(stripped)] + "pass")
        else:
            out.append(line)
    return "\n".join(out)


def _without_regions(source: str, where: str) -> str:
    lines = source.splitlines()
    keep = list(lines)
    for region in reversed(_regions(lines, where)):
        keep[region.start : region.end + 1] = [region.indent + "pass"]
    return "\n".join(keep)


def names_used_outside_solutions(sources: Iterable[str]) -> set[str]:
    """Every name *read* by the notebook's code outside solution regions."""
    used: set[str] = set()
    for number, source in enumerate(sources):
        code = _parseable(_without_regions(source, f"code cell {number}"))
        try:
            tree = ast.parse(code)
        except SyntaxError:  # fall back to every identifier in the text
            used.update(re.findall(r"[A-Za-z_]\w*", code))
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                used.add(node.id)
    return used


def used_names_by_cell(nb) -> dict[int, set[str]]:
    """For each code cell, the names its stubs must keep defined: those read outside solution
    regions by the cells of the same exercise (the answer and check cells); for cells outside
    any exercise, by every cell of the notebook."""
    found = sections(nb)
    code = {i: cell.source for i, cell in enumerate(nb.cells) if cell.cell_type == "code"}
    everywhere = names_used_outside_solutions(code.values())
    used = dict.fromkeys(code, everywhere)
    for section in found:
        names = names_used_outside_solutions(code[i] for i in section.cell_indices if i in code)
        for index in section.cell_indices:
            if index in code:
                used[index] = names
    return used


def _def_header_lines(lines: list[str]) -> set[int]:
    """0-based numbers of the lines that belong to a ``def`` header (decorators excluded): the
    ``def`` line and, for a signature spread over several lines, every continuation line."""
    try:
        tree = ast.parse(_parseable("\n".join(lines)))
    except SyntaxError:
        return set()
    header: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            header.update(range(node.lineno - 1, node.body[0].lineno - 1))
    return header


def _inside_function(lines: list[str], region: _Region) -> bool:
    """Is the region directly in a function body (the nearest less-indented line belongs to a
    ``def`` header, whose signature may span several lines)?"""
    width = len(region.indent.expandtabs())
    if width == 0:
        return False
    for number in range(region.start - 1, -1, -1):
        line = lines[number]
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        if len(line[:indent].expandtabs()) < width:
            if re.match(r"\s*(async\s+)?def\s", line):
                return True
            return number in _def_header_lines(lines)
    return False


def _default_stub(body: str, indent: str, used: set[str], where: str) -> list[str]:
    code = textwrap.dedent(body)
    try:
        tree = ast.parse(_parseable(code))
    except SyntaxError as error:
        raise AuthoringError(f"{where}: the solution region does not parse: {error}") from None
    code_lines = code.splitlines()
    stub: list[str] = []
    assigned: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            first = min([node.lineno] + [decorator.lineno for decorator in node.decorator_list])
            body_start = node.body[0]
            keep_until = body_start.lineno - 1
            if (
                isinstance(body_start, ast.Expr)
                and isinstance(body_start.value, ast.Constant)
                and isinstance(body_start.value.value, str)
            ):
                keep_until = body_start.end_lineno or body_start.lineno
            header = code_lines[first - 1 : keep_until]
            inner = " " * (body_start.col_offset)
            stub.extend(header + [inner + CODE_STUB])
            continue
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        for target in targets:
            for sub in ast.walk(target):
                if isinstance(sub, ast.Name) and sub.id in used and sub.id not in assigned:
                    assigned.append(sub.id)
    stub.extend(f"{name} = {ANSWER_STUB}" for name in assigned)
    if not stub:
        stub = ["pass  # YOUR CODE HERE" if indent else "# YOUR CODE HERE"]
    return [indent + line if line else line for line in stub]


def reader_source(source: str, used: set[str], where: str = "cell") -> str:
    """The reader's version of a code cell: every solution region replaced by its stub."""
    lines = source.splitlines()
    regions = _regions(lines, where)
    if not regions:
        return source
    out = list(lines)
    for region in reversed(regions):
        if region.stub is not None:
            stub = [region.indent + line for line in region.stub.splitlines()] or [region.indent]
        elif _inside_function(lines, region):
            stub = [region.indent + CODE_STUB]
        else:
            body = "\n".join(lines[region.start + 1 : region.end])
            stub = _default_stub(body, region.indent, used, where)
        out[region.start : region.end + 1] = stub
    text = "\n".join(out)
    return text + "\n" if source.endswith("\n") else text


def solution_source(source: str, where: str = "cell") -> str:
    """The worked version of a code cell: the marker lines removed, the region kept."""
    lines = source.splitlines()
    drop = set()
    for region in _regions(lines, where):
        drop.update({region.start, region.end})
    return "\n".join(line for number, line in enumerate(lines) if number not in drop)


def has_solution(source: str) -> bool:
    return any(BEGIN.match(line) for line in source.splitlines())


# ---------------------------------------------------------------------------------------------
# The reader's copy


ROLE = re.compile(r"\{(?P<role>doc|ref)\}`(?P<body>[^`]*)`")


def _chapter_title(target: str, root: Path) -> str:
    """The title of the chapter notebook ``book/NN_slug`` (its first ``#`` heading), or ``target``."""
    path = root / f"{target}.ipynb"
    try:
        for line in nbformat.read(path, as_version=4).cells[0].source.splitlines():
            if line.startswith("# "):
                return line[2:].strip()
    except (OSError, IndexError, ValueError):
        pass
    return target


def plain_links(markdown: str, root: Path = ROOT) -> str:
    """Markdown for Jupyter and Colab: the book's ``{doc}`` and ``{ref}`` roles (which they show
    as raw markup) become ordinary links to the chapter notebook on the repository's site."""
    url, branch, _ = repository(root)

    def link(match: re.Match) -> str:
        inner = re.match(r"^(?P<text>.*?)\s*<(?P<target>[^>]+)>$", match["body"], re.S)
        text, target = (inner["text"], inner["target"]) if inner else (None, match["body"])
        if match["role"] == "ref":
            chapter = re.match(r"ch(\d\d)", target)
            found = sorted((root / "book").glob(f"{chapter[1]}_*.ipynb")) if chapter else []
            if not found:
                return text or target
            target = f"book/{found[0].stem}"
        else:
            target = posixpath.normpath(posixpath.join("solutions", target)).lstrip("/")
        suffix = ".ipynb" if (root / f"{target}.ipynb").exists() else ".md"
        return f"[{text or _chapter_title(target, root)}]({url}/blob/{quote(branch)}/{target}{suffix})"

    return ROLE.sub(link, markdown)


def reader_copy(solution_nb, source_path: str = "", links: bool = True) -> nbformat.NotebookNode:
    """The reader's notebook generated from a solution notebook (see the module docstring); with
    ``links``, its markdown's ``{doc}``/``{ref}`` roles as plain links (:func:`plain_links`)."""
    nb = copy.deepcopy(solution_nb)
    used = used_names_by_cell(nb)
    cells = []
    for index, cell in enumerate(nb.cells):
        if nb.get("nbformat_minor", 0) >= 5 and not cell.get("id"):
            cell["id"] = f"cell-{index}"  # deterministic: nbformat would invent a random one
        where = f"{source_path or 'notebook'} cell {index}"
        if cell.cell_type == "markdown" and SOLUTION_TAG in tags(cell):
            continue
        if cell.cell_type == "code":
            cell.source = reader_source(cell.source, used[index], where)
            cell.outputs = []
            cell.execution_count = None
        elif cell.cell_type == "markdown" and links:
            cell.source = plain_links(cell.source)
        cells.append(cell)
    nb.cells = cells
    chapter = chapter_of(source_path) if source_path else None
    exercises = []
    for section in sections(solution_nb):
        checks = [solution_nb.cells[i].source.strip() for i in section.check_indices]
        exercises.append({"id": section.exercise_id, "title": section.title, "check": "\n".join(checks)})
    if chapter is None and exercises:
        chapter = exercises[0]["id"].split(".")[0].zfill(2)
    nb.metadata["tformer"] = {
        "chapter": chapter,
        "generated_from": source_path,
        "exercises": exercises,
        "note": "Generated by `python -m tformer.authoring`; do not edit by hand.",
    }
    return nb


# ---------------------------------------------------------------------------------------------
# The book page


def repository(root: Path = ROOT) -> tuple[str, str, dict]:
    """``(url, branch, launch_buttons)`` from ``_config.yml`` (defaults when it is absent)."""
    config_path = root / "_config.yml"
    url, branch = DEFAULT_REPOSITORY
    launch: dict = {}
    if config_path.exists():
        try:
            import yaml

            config = yaml.safe_load(config_path.read_text(encoding="utf-8")) or {}
            repo = config.get("repository") or {}
            url = str(repo.get("url") or url).rstrip("/")
            branch = str(repo.get("branch") or branch)
            launch = config.get("launch_buttons") or {}
        except Exception:  # noqa: BLE001 - a broken config falls back to the defaults
            pass
    return url, branch, launch


def launch_links(notebook_path: str, root: Path = ROOT) -> tuple[str, str]:
    """Colab and Binder URLs that open ``notebook_path`` (relative to the repository root)."""
    url, branch, launch = repository(root)
    github = re.sub(r"^https?://github\.com/", "", url).strip("/")
    colab = str(launch.get("colab_url") or "https://colab.research.google.com").rstrip("/")
    binder = str(launch.get("binderhub_url") or "https://mybinder.org").rstrip("/")
    colab_url = f"{colab}/github/{github}/blob/{quote(branch)}/{notebook_path}"
    binder_url = f"{binder}/v2/gh/{github}/{quote(branch)}?labpath={quote(notebook_path, safe='')}"
    return colab_url, binder_url


def _fence(text: str, char: str = "`", minimum: int = 3) -> str:
    longest = max((len(run) for run in re.findall(rf"{re.escape(char)}+", text)), default=0)
    return char * max(minimum, longest + 1)


DOC_ROLE = re.compile(r"\{doc\}`(?P<body>[^`]*)`")


def _fix_doc_links(markdown: str, source_dir: str) -> str:
    """``{doc}`` targets relative to ``solutions/`` → absolute (``/book/02_…``) for the page."""

    def fix(match: re.Match) -> str:
        body = match["body"]
        inner = re.match(r"^(?P<text>.*)<(?P<target>[^>]+)>$", body, re.S)
        target = inner["target"] if inner else body
        if target.startswith("/"):
            return match[0]
        absolute = "/" + posixpath.normpath(posixpath.join(source_dir, target)).lstrip("/")
        return "{doc}`" + (f"{inner['text']}<{absolute}>" if inner else absolute) + "`"

    return DOC_ROLE.sub(fix, markdown)


DETAILS = re.compile(
    r"<details>\s*<summary>(?P<summary>.*?)</summary>(?P<body>.*?)</details>", re.S | re.I
)


# The fixed phrases of a generated exercise page, per language (the Chinese edition's pages are
# generated from the translated solution notebooks; tools/zh_book.py).
PHRASES = {
    "en": {
        "exercises": "Exercises {chapter}",
        "exercise": "Exercise {id}",
        "do_title": "Do the exercises in a notebook",
        "open_copy": "Download the reader's copy, the notebook {download}, or open it online, "
                     "and fill in the cells marked `YOUR ANSWER HERE`:",
        "colab": "Open in Colab",
        "binder": "Open in Binder",
        "locally": "locally, in a clone of the repository after `make setup`: "
                   "`.venv/bin/python -m pip install jupyterlab`, then "
                   "`.venv/bin/jupyter lab {path}`",
        "checks": "Each exercise ends with a check cell that prints ✓ (passed), ✗ with a hint, or "
                  "… (not attempted). `tformer-grade {slug}.ipynb` grades the whole notebook in a "
                  "fresh kernel. The worked solutions below are folded; open one once you have "
                  "tried.",
        "prelude": "Every exercise below uses the objects defined at the top of the notebook:",
        "hint": "Hint",
        "in_notebook": "In the notebook:",
        "output": "Output:",
        "see_notebook": "See the notebook.",
    },
    "zh": {
        "exercises": "练习 {chapter}",
        "exercise": "练习 {id}",
        "do_title": "在笔记本中做练习",
        "open_copy": "下载读者副本，即笔记本 {download}，或在线打开它，"
                     "然后填写标有 `YOUR ANSWER HERE` 的单元格：",
        "colab": "在 Colab 中打开",
        "binder": "在 Binder 中打开",
        "locally": "本地：在仓库的克隆中运行 `make setup` 之后，先运行 "
                   "`.venv/bin/python -m pip install jupyterlab`，再运行 "
                   "`.venv/bin/jupyter lab {path}`",
        "checks": "每个练习都以一个检查单元格结尾，它打印 ✓（通过）、✗ 加一条提示，或 …（尚未作答）。"
                  "`tformer-grade {slug}.ipynb` 在一个新内核中为整个笔记本评分。"
                  "下面的参考解答是折叠的：自己做过之后再打开。",
        "prelude": "下面的每个练习都用到笔记本开头定义的这些对象：",
        "hint": "提示",
        "in_notebook": "笔记本中的代码：",
        "output": "输出：",
        "see_notebook": "见笔记本。",
    },
}


def _page_markdown(markdown: str, source_dir: str, drop_first_heading: bool = False,
                   hint_title: str = "Hint") -> str:
    """Markdown from a notebook made safe inside a directive: headings become bold lines and
    ``<details>`` hints become collapsed hint admonitions."""
    lines = markdown.splitlines()
    if drop_first_heading:
        while lines and not lines[0].strip():
            lines.pop(0)
        if lines:
            lines.pop(0)
    out = []
    for line in lines:
        match = ANY_HEADING.match(line)
        out.append(f"**{line.lstrip('#').strip()}**" if match else line)
    text = "\n".join(out).strip()

    def hint(match: re.Match) -> str:
        body = match["body"].strip()
        summary = re.sub(r"<[^>]+>", "", match["summary"]).strip() or hint_title
        fence = _fence(body)
        return f"{fence}{{admonition}} {summary}\n:class: hint dropdown\n\n{body}\n{fence}"

    return _fix_doc_links(DETAILS.sub(hint, text), source_dir)


def _output_text(cell) -> str:
    texts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream" and output.get("name") == "stdout":
            texts.append(str(output.get("text", "")))
        elif output.get("output_type") in ("execute_result", "display_data"):
            plain = output.get("data", {}).get("text/plain")
            if plain:
                texts.append(str(plain) + "\n")
    return "".join(texts).rstrip("\n")


def _code_block(source: str, language: str = "python") -> str:
    fence = _fence(source)
    return f"{fence}{language}\n{source.rstrip()}\n{fence}"


def _is_setup_cell(cell) -> bool:
    return cell.cell_type == "code" and "google.colab" in cell.source


def book_page(solution_nb, slug: str, root: Path = ROOT, lang: str = "en") -> str:
    """The MyST markdown exercise page for ``solutions/<slug>.ipynb``.

    ``lang="zh"``: the Chinese edition's page, from the translated solution notebook; its fixed
    phrases are Chinese and its launch links open ``zh/exercises/<slug>.ipynb``.
    """
    words = PHRASES[lang]
    source_dir = "solutions"
    notebook_path = f"{'' if lang == 'en' else lang + '/'}exercises/{slug}.ipynb"
    colab_url, binder_url = launch_links(notebook_path, root)
    found = sections(solution_nb)
    first_exercise = found[0].heading_index if found else len(solution_nb.cells)
    used = used_names_by_cell(solution_nb)

    title = words["exercises"].format(chapter=slug[:2])
    default_title = True
    intro: list[str] = []
    prelude_code: list[str] = []
    for index, cell in enumerate(solution_nb.cells[:first_exercise]):
        if cell.cell_type == "markdown":
            text = cell.source.strip()
            match = re.match(r"^#\s+(.+)$", text.splitlines()[0]) if text else None
            if match and default_title and index == 0:
                title, default_title = match[1].strip(), False
                text = "\n".join(text.splitlines()[1:]).strip()
            if text:
                intro.append(_page_markdown(text, source_dir, hint_title=words["hint"]))
        elif cell.cell_type == "code" and not _is_setup_cell(cell) and cell.source.strip():
            prelude_code.append(cell.source.strip())

    parts = [
        f"<!-- Generated from solutions/{slug}.ipynb by `python -m tformer.authoring`; "
        "do not edit by hand. -->",
        "",
        f"# {title}",
        "",
        *[block + "\n" for block in intro],
        f"```{{admonition}} {words['do_title']}",
        ":class: tip",
        "",
        words["open_copy"].format(download=(
            f'<a class="book-notebook-download" href="../../exercises/{slug}.ipynb" '
            f'download="{slug}.ipynb"><code>{notebook_path}</code></a>')),
        "",
        f"- [**{words['colab']}**]({colab_url})",
        f"- [**{words['binder']}**]({binder_url})",
        f"- {words['locally'].format(path=notebook_path)}",
        "",
        words["checks"].format(slug=slug),
        "```",
        "",
    ]
    if prelude_code:
        parts += [
            words["prelude"],
            "",
            _code_block("\n\n".join(prelude_code)),
            "",
        ]
    for section in found:
        label = f"ex-{section.exercise_id.replace('.', '-')}"
        statement: list[str] = []
        hints: list[str] = []
        worked_md: list[str] = []
        stub_code: list[str] = []
        worked_code: list[str] = []
        for index in section.cell_indices:
            cell = solution_nb.cells[index]
            where = f"solutions/{slug}.ipynb cell {index}"
            if cell.cell_type == "markdown":
                first = index == section.heading_index
                text = _page_markdown(cell.source, source_dir, drop_first_heading=first,
                                      hint_title=words["hint"])
                if not text:
                    continue
                if SOLUTION_TAG in tags(cell):
                    worked_md.append(text)
                elif HINT_TAG in tags(cell):
                    hints.append(text)
                else:
                    statement.append(text)
            elif cell.cell_type == "code" and index not in section.check_indices:
                if not cell.source.strip():
                    continue
                if has_solution(cell.source):
                    stub_code.append(reader_source(cell.source, used[index], where).strip())
                    worked_code.append(solution_source(cell.source, where).strip())
                elif ANSWER_TAG in tags(cell):
                    shown = cell.source.strip()
                    output = _output_text(cell)
                    worked_code.append(shown)
                    if output:
                        worked_code.append(("output", output))  # type: ignore[arg-type]
                else:
                    stub_code.append(cell.source.strip())
                    worked_code.append(cell.source.strip())
        body = [*statement]
        for hint in hints:
            fence = _fence(hint)
            body.append(f"{fence}{{admonition}} {words['hint']}\n:class: hint dropdown\n\n{hint}\n"
                        f"{fence}")
        if stub_code:
            body.append(f"{words['in_notebook']}\n\n" + _code_block("\n\n".join(stub_code)))
        solution_parts = [*worked_md]
        for item in worked_code:
            if isinstance(item, tuple):
                solution_parts.append(f"{words['output']}\n\n" + _code_block(item[1], "text"))
            else:
                solution_parts.append(_code_block(item))
        exercise_body = "\n\n".join(body)
        solution_body = "\n\n".join(solution_parts) or words["see_notebook"]
        heading = words["exercise"].format(id=section.exercise_id) + (
            f" — {section.title}" if section.title else "")
        outer = _fence(exercise_body + solution_body, minimum=4)
        parts += [
            f"(exercise-{section.exercise_id.replace('.', '-')})=",
            f"## {heading}",
            "",
            f"{outer}{{exercise}}",
            f":label: {label}",
            ":nonumber:",
            "",
            exercise_body,
            outer,
            "",
            f"{outer}{{solution}} {label}",
            ":class: dropdown",
            "",
            solution_body,
            outer,
            "",
        ]
    return "\n".join(parts).rstrip() + "\n"


# ---------------------------------------------------------------------------------------------
# Files


def _dumps(nb) -> str:
    return nbformat.writes(nb) + "\n"


def targets(solution_path: Path, root: Path = ROOT) -> dict[Path, str]:
    """``{output path: expected text}`` for one solution notebook."""
    slug = solution_path.stem
    try:
        relative = solution_path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        relative = f"solutions/{solution_path.name}"
    nb = nbformat.read(solution_path, as_version=4)
    return {
        root / "exercises" / f"{slug}.ipynb": _dumps(reader_copy(nb, relative)),
        root / "book" / "exercises" / f"{slug}.md": book_page(nb, slug, root),
    }


def solution_notebooks(root: Path = ROOT) -> list[Path]:
    return sorted(path for path in (root / "solutions").glob("[0-9][0-9]_*.ipynb"))


def generate(root: Path = ROOT, *, check: bool = False, paths: list[Path] | None = None) -> list[Path]:
    """Write (or, with ``check``, only compare) every generated file; return those that differed."""
    drifted: list[Path] = []
    for solution in paths if paths is not None else solution_notebooks(root):
        for path, text in targets(solution, root).items():
            current = path.read_text(encoding="utf-8") if path.exists() else None
            if current == text:
                continue
            drifted.append(path)
            if not check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    if check:  # generated files whose solution notebook is gone
        expected = {solution.stem for solution in solution_notebooks(root)} if paths is None else None
        if expected is not None:
            for stale in sorted((root / "exercises").glob("[0-9][0-9]_*.ipynb")) + sorted(
                (root / "book" / "exercises").glob("[0-9][0-9]_*.md")
            ):
                if stale.stem not in expected:
                    drifted.append(stale)
    return drifted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tformer.authoring",
        description="Generate exercises/NN_*.ipynb and book/exercises/NN_*.md from solutions/.",
    )
    parser.add_argument("solutions", nargs="*", type=Path, help="solution notebooks (default: all)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if out of date")
    parser.add_argument("--root", type=Path, default=ROOT, help="repository root (default: this one)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    try:
        drifted = generate(root, check=args.check, paths=args.solutions or None)
    except (AuthoringError, nbformat.ValidationError, json.JSONDecodeError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for path in drifted:
        shown = path.relative_to(root) if path.is_relative_to(root) else path
        print(f"{'out of date' if args.check else 'wrote'}: {shown}")
    if args.check and drifted:
        print("Run `python -m tformer.authoring` (make exercises) and commit the result.")
        return 1
    if not drifted:
        print("exercise notebooks and pages are up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
