"""The Chinese edition (简体中文版): generated notebooks and the book in ``_build/html/zh/``.

One set of notebooks, one execution, two languages. The English notebooks and pages are the only
source; ``locale/zh/**`` holds the translated prose units (``tools/i18n.py``). This tool writes

* the **committed Chinese notebooks** that Colab and Binder open from the repository:
  ``zh/book/NN_slug.ipynb`` (each chapter with its markdown translated; code cells, ids and
  metadata identical; no outputs, like ``book/*.ipynb``) and ``zh/exercises/NN_slug.ipynb`` (the
  reader's copy ``exercises/NN_slug.ipynb`` translated with the units of ``solutions/NN_slug.ipynb``;
  cell ids are shared). Notebook metadata ``"language": "zh"`` tells ``tformer.checks`` and the
  grader to speak Chinese;
* the **Chinese book's source tree** ``_build/zh-src/``: a generated ``_config.yml``
  (``language: zh_CN``, the title 可运行的注意力, the English execution cache), a ``_toc.yml``
  with Chinese part captions, the assembled chapters and pages, the exercise pages generated from
  the translated solutions (``tformer.authoring.book_page(..., lang="zh")``), and symlinks to
  ``assets/``, ``vendor/``, ``tools/`` and ``references.bib``;
* the **Chinese HTML** in ``_build/html/zh/``, built from that tree by Jupyter Book with
  ``execute_notebooks: cache`` on the English book's jupyter-cache (``_build/.jupyter_cache``):
  jupyter-cache matches a notebook by its code cells, which are the English ones, so every chapter
  takes the outputs of the English execution and **nothing is executed twice**. Before building,
  every chapter is matched against the cache; a chapter that is not there stops the build (run the
  English build first) instead of executing. The build log is kept in ``_build/zh/build.log``.

Commands (``python tools/zh_book.py ...``)::

    notebooks [--check]      write zh/book/*.ipynb and zh/exercises/*.ipynb (--check: compare only)
    source                   write _build/zh-src/
    build                    source, then the Chinese HTML into _build/html/zh/

A missing or stale translation is an error naming the unit. ``--allow-missing`` (development
only, never the default) puts the English text in place of every untranslated unit and lists them.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "src"))

import i18n  # noqa: E402

from tformer import authoring  # noqa: E402

LANG = "zh"
SPHINX_LANGUAGE = "zh_CN"
TITLE = "可运行的注意力"
SUBTITLE = "Attention, Executed"
ZH = ROOT / "zh"  # the committed Chinese notebooks
SRC = ROOT / "_build" / "zh-src"  # the generated source tree
OUT = ROOT / "_build" / "zh"  # Jupyter Book's --path-output (doctrees, jupyter_execute, html)
HTML = ROOT / "_build" / "html" / "zh"  # where readers find the Chinese edition
CACHE = ROOT / "_build" / ".jupyter_cache"  # the English build's execution cache
LOG = OUT / "build.log"
JUPYTER_BOOK = Path(sys.executable).parent / "jupyter-book"
LINKED = ("assets", "vendor", "tools", "references.bib")
PART_CAPTIONS = {
    "Attention from scratch": "从零实现注意力",
    "Order and structure": "顺序与结构",
    "Transformers at work": "Transformer 实战",
    "Back matter": "附录",
}
FOOTER = (
    "<p>本书页面上的每一个数字，都是构建本书时由旁边的代码计算出来的。"
    f"英文原版：<span lang=\"en\"><em>{SUBTITLE}</em></span>。</p>"
)


class MissingTranslationError(KeyError):
    """A prose unit has no up-to-date translation (the message names the unit)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


# ---------------------------------------------------------------------------------------------
# Translating a notebook or page, with an optional English fallback (development builds only)


def translate_text(text: str, cell_id: str, lookup: i18n.Lookup, relative: str,
                   fallback: list[str] | None = None) -> str:
    """One markdown cell or page translated unit by unit, as :func:`i18n.translate_text`; with
    ``fallback`` (a list), an untranslated unit keeps its English text and is appended to it."""
    if fallback is None:
        try:
            return i18n.translate_text(text, cell_id, lookup, relative)
        except KeyError as error:
            raise MissingTranslationError(f"{error.args[0]} — run `python tools/i18n.py status`") from None
    out = []
    for n, (block, separator) in enumerate(i18n.split_blocks(text)):
        if block and i18n.needs_translation(block):
            unit = i18n.Unit(relative, f"{cell_id}.{n}", block)
            entry = lookup.translation(unit)
            if entry is not None and i18n._is_translated(entry):
                block = entry.text
            else:
                fallback.append(unit.describe())
        out.append(block + separator)
    return "".join(out)


def translate_notebook(notebook: dict, source: Path, fallback: list[str] | None = None,
                       units_of: Path | None = None) -> dict:
    """A copy of ``notebook`` with its markdown translated through the units of ``units_of``
    (default ``source``); code cells, ids, outputs and metadata untouched, ``language`` set."""
    units_source = units_of or source
    relative = units_source.resolve().relative_to(ROOT).as_posix()
    lookup = i18n.lookup_for(units_source, LANG)
    if fallback is None:
        try:
            return i18n.translate_notebook(notebook, lookup, relative, LANG)
        except KeyError as error:
            raise MissingTranslationError(f"{error.args[0]} — run `python tools/i18n.py status`") from None
    notebook = copy.deepcopy(notebook)
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] == "markdown":
            text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            cell["source"] = translate_text(text, cell.get("id") or f"cell{index}", lookup,
                                            relative, fallback)
    notebook.setdefault("metadata", {})["language"] = LANG
    return notebook


def _read(path: Path) -> dict:
    return nbformat.read(path, as_version=4)


def _dumps(notebook: dict) -> str:
    return nbformat.writes(nbformat.from_dict(notebook)) + "\n"


def zh_chapter(source: Path, fallback: list[str] | None = None) -> dict:
    """``zh/book/NN_slug.ipynb``: the chapter with its markdown translated."""
    return translate_notebook(_read(source), source, fallback)


def zh_reader_copy(slug: str, fallback: list[str] | None = None) -> dict:
    """``zh/exercises/NN_slug.ipynb``: the reader's copy, translated with the solution's units;
    the exercise titles in its ``tformer`` metadata are the translated headings."""
    # translated from the reader's copy as the solution's cells read (roles unchanged, so the
    # solution's units match), then with plain links for Jupyter and Colab
    solution = nbformat.read(ROOT / "solutions" / f"{slug}.ipynb", as_version=4)
    english = authoring.reader_copy(solution, f"solutions/{slug}.ipynb", links=False)
    notebook = translate_notebook(json.loads(nbformat.writes(english)),
                                  ROOT / "exercises" / f"{slug}.ipynb", fallback,
                                  units_of=ROOT / "solutions" / f"{slug}.ipynb")
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            cell["source"] = authoring.plain_links(source, ROOT)
    titles = {}
    for cell in notebook["cells"]:
        heading = authoring.heading_of(cell)
        if heading is not None:
            titles[heading[1]] = heading[2]
    for exercise in notebook.get("metadata", {}).get("tformer", {}).get("exercises", []):
        exercise["title"] = titles.get(exercise["id"], exercise["title"])
    return notebook


def chapters() -> list[Path]:
    return sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))


def notebook_targets(fallback: list[str] | None = None) -> dict[Path, str]:
    """``{path: text}`` of every committed Chinese notebook."""
    found = {ZH / "book" / source.name: _dumps(zh_chapter(source, fallback))
             for source in chapters()}
    for solution in authoring.solution_notebooks(ROOT):
        found[ZH / "exercises" / solution.name] = _dumps(zh_reader_copy(solution.stem, fallback))
    return found


def write_if_changed(path: Path, text: str) -> bool:
    """Write ``text`` unless ``path`` already holds it (keeps mtimes, so Sphinx rebuilds only
    the pages that changed); True if it wrote."""
    if path.exists() and not path.is_symlink() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink():
        path.unlink()
    path.write_text(text, encoding="utf-8")
    return True


def notebooks(check: bool = False, fallback: list[str] | None = None) -> list[Path]:
    """Write (``check``: only compare) the committed Chinese notebooks; the ones that differed."""
    targets = notebook_targets(fallback)
    drifted = [path for path, text in targets.items()
               if not path.exists() or path.read_text(encoding="utf-8") != text]
    for folder in (ZH / "book", ZH / "exercises"):  # notebooks whose English source is gone
        drifted += [path for path in sorted(folder.glob("*.ipynb")) if path not in targets]
    if not check:
        for path in drifted:
            if path in targets:
                write_if_changed(path, targets[path])
            else:
                path.unlink()
    return drifted


# ---------------------------------------------------------------------------------------------
# The Chinese book's source tree


def zh_config() -> dict:
    """The English ``_config.yml`` with the Chinese edition's title, language, footer, launch
    path (``zh/``) and the English execution cache."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    config["title"] = TITLE
    config["author"] = "《可运行的注意力》（Attention, Executed）的作者们"
    config["exclude_patterns"] = [p for p in config.get("exclude_patterns", [])
                                  if p not in ("zh", "locale")] + ["zh", "locale"]
    config["execute"] = {**config.get("execute", {}), "execute_notebooks": "cache",
                         "cache": str(CACHE)}
    config.setdefault("html", {})["extra_footer"] = FOOTER
    config.setdefault("repository", {})["path_to_book"] = "zh"
    sphinx_config = config.setdefault("sphinx", {}).setdefault("config", {})
    sphinx_config["language"] = SPHINX_LANGUAGE
    # citations and bibliography labels "Vaswani 等, 2017" (tools/book_html.py)
    sphinx_config["bibtex_reference_style"] = "author_year_zh"
    sphinx_config["bibtex_default_style"] = "book_author_year_zh"
    # MyST-NB's fold buttons ("Show code cell source"): its {type} is an English word
    sphinx_config["nb_code_prompt_show"] = "显示代码单元格"
    sphinx_config["nb_code_prompt_hide"] = "隐藏代码单元格"
    # sphinx-togglebutton's hint on the folded solutions ("Click to show")
    sphinx_config["togglebutton_hint"] = "点击展开"
    sphinx_config["togglebutton_hint_hide"] = "点击收起"
    return config


def zh_toc() -> dict:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    for part in toc.get("parts") or []:
        caption = part.get("caption")
        if caption not in PART_CAPTIONS:
            raise KeyError(f"_toc.yml part caption {caption!r} has no Chinese caption in "
                           "tools/zh_book.py PART_CAPTIONS")
        part["caption"] = PART_CAPTIONS[caption]
    return toc


def _yaml(data: dict, comment: str) -> str:
    return comment + yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=100)


def source_tree(fallback: list[str] | None = None) -> list[Path]:
    """Write ``_build/zh-src/``; returns the files written (unchanged files are left alone)."""
    SRC.mkdir(parents=True, exist_ok=True)
    note = "# Generated by tools/zh_book.py from the English book; do not edit.\n"
    expected: dict[Path, str] = {
        SRC / "_config.yml": _yaml(zh_config(), note),
        SRC / "_toc.yml": _yaml(zh_toc(), note),
    }
    for source in chapters():
        expected[SRC / "book" / source.name] = _dumps(zh_chapter(source, fallback))
    for page in sorted((ROOT / "book").glob("*.md")):
        relative = page.relative_to(ROOT).as_posix()
        lookup = i18n.lookup_for(page, LANG)
        expected[SRC / relative] = translate_text(page.read_text(encoding="utf-8"), "p", lookup,
                                                  relative, fallback)
    for solution in authoring.solution_notebooks(ROOT):
        translated = nbformat.from_dict(translate_notebook(_read(solution), solution, fallback))
        expected[SRC / "book" / "exercises" / f"{solution.stem}.md"] = authoring.book_page(
            translated, solution.stem, ROOT, lang=LANG)
    for name in LINKED:
        link = SRC / name
        if not link.is_symlink():
            if link.exists():
                shutil.rmtree(link) if link.is_dir() else link.unlink()
            link.symlink_to(ROOT / name)
    written = [path for path, text in expected.items() if write_if_changed(path, text)]
    for stale in list(SRC.glob("book/**/*.ipynb")) + list(SRC.glob("book/**/*.md")):
        if stale not in expected:
            stale.unlink()
            written.append(stale)
    return written


def uncached_chapters() -> list[str]:
    """The chapters whose code the English execution cache does not hold (each would execute)."""
    from jupyter_cache import get_cache

    if not CACHE.exists():
        return [source.name for source in chapters()]
    cache = get_cache(str(CACHE))
    missing = []
    for source in sorted((SRC / "book").glob("*.ipynb")):
        try:
            cache.match_cache_notebook(nbformat.read(source, as_version=4))
        except KeyError:
            missing.append(f"book/{source.name}")
    return missing


def build(fallback: list[str] | None = None, extra: tuple[str, ...] = ()) -> int:
    """The Chinese HTML: source tree, cache check, Jupyter Book, copy into _build/html/zh."""
    start = time.perf_counter()
    source_tree(fallback)
    missing = uncached_chapters()
    if missing:
        print("error: the English execution cache has no run of " + ", ".join(missing)
              + "\nBuild the English book first (`jupyter-book build . -W --keep-going`): the "
              "Chinese edition reuses its execution and never executes a notebook.",
              file=sys.stderr)
        return 1
    OUT.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        [str(JUPYTER_BOOK), "build", str(SRC), "--path-output", str(OUT), "-W", "--keep-going",
         *extra],
        cwd=ROOT, capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(
            filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))},
    )
    LOG.write_text(result.stdout + result.stderr, encoding="utf-8")
    if result.returncode != 0:
        flagged = [line for line in LOG.read_text(encoding="utf-8").splitlines()
                   if "WARNING" in line or "ERROR" in line]
        print("\n".join(flagged[-60:] or (result.stdout + result.stderr).splitlines()[-60:]),
              file=sys.stderr)
        print(f"error: the Chinese edition's build failed (log: {LOG.relative_to(ROOT)})",
              file=sys.stderr)
        return result.returncode
    if HTML.exists():
        shutil.rmtree(HTML)
    shutil.copytree(OUT / "_build" / "html", HTML)
    executed = re.findall(r"Executing notebook|Executed notebook", LOG.read_text(encoding="utf-8"))
    print(f"Chinese edition: {HTML.relative_to(ROOT)}/ in {time.perf_counter() - start:.1f} s"
          f" ({len(executed)} notebook executions)")
    return 0


# ---------------------------------------------------------------------------------------------
# Command line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("notebooks", "source", "build"))
    parser.add_argument("--check", action="store_true",
                        help="notebooks: write nothing; exit 1 if a notebook is out of date")
    parser.add_argument("--allow-missing", action="store_true",
                        help="development only: English text for untranslated units")
    parser.add_argument("--all", action="store_true", help="build: rewrite every page")
    args = parser.parse_args(argv)
    fallback: list[str] | None = [] if args.allow_missing else None
    try:
        if args.command == "notebooks":
            drifted = notebooks(check=args.check, fallback=fallback)
            for path in drifted:
                print(f"{'out of date' if args.check else 'wrote'}: {path.relative_to(ROOT)}")
            if args.check and drifted:
                print("Run `python tools/zh_book.py notebooks` (make translations) and commit "
                      "the result.")
                return 1
            if not drifted:
                print("Chinese notebooks are up to date")
            status = 0
        elif args.command == "source":
            written = source_tree(fallback)
            print(f"{SRC.relative_to(ROOT)}: {len(written)} files written")
            status = 0
        else:
            status = build(fallback, ("--all",) if args.all else ())
    except MissingTranslationError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if fallback:
        print(f"warning: {len(fallback)} units left in English (--allow-missing):", file=sys.stderr)
        for unit in fallback[:40]:
            print(f"  {unit}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
