"""The Chinese edition (issue 17): never stale, same code, same numbers, every page built.

* every English prose unit has an up-to-date Chinese translation (``locale/zh/**``), and the
  failure names the unit, separately for missing, stale, TODO and markup mismatches; editing an
  English paragraph in a temporary copy makes it fail naming that unit;
* ``split_blocks`` reassembles every source exactly;
* the committed Chinese notebooks (``zh/book``, ``zh/exercises``) are up to date and run exactly
  the English code (cell ids, sources, metadata);
* the generated Chinese exercise pages use Chinese fixed phrases and open ``zh/exercises/…``;
* the Chinese build (``book`` marker, the session's build) has a page for every English page,
  executed no notebook (every chapter came from the English execution cache) and shows the same
  glued values as the English pages; every page links to the same page in the other edition.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import i18n  # noqa: E402
import zh_book  # noqa: E402
from toc import source_of, toc_docnames  # noqa: E402

from tformer import authoring  # noqa: E402

SOURCES = i18n.sources(ROOT)
KINDS = {
    "missing": "no translation at all (run `python tools/i18n.py update`, then translate the "
               "new TODO entry)",
    "stale": "translated from an older English text (the English changed since: update the "
             "translation, then its hash, with `python tools/i18n.py update`)",
    "todo": "still TODO (the entry holds the English text: translate it and drop `TODO`)",
    "markup": "markup differs from the English (glue keys, roles' targets, labels, directives, "
              "links and math must be kept)",
    "orphan": "a translation of no English unit",
}


def _report(problems: list[i18n.Problem]) -> str:
    by_kind: dict[str, list[str]] = {}
    for problem in problems:
        by_kind.setdefault(problem.kind, []).append(f"  {problem.unit} — {problem.detail}")
    return "\n".join(f"{len(lines)} unit(s) {KINDS.get(kind, kind)}:\n" + "\n".join(lines[:30])
                     for kind, lines in by_kind.items())


# --- never stale ----------------------------------------------------------------------------------


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_unit_has_an_up_to_date_translation(source: Path):
    problems = i18n.problems_of(source, "zh")
    assert not problems, (f"{source.relative_to(ROOT)}: its Chinese translation "
                          f"({i18n.locale_file(source, 'zh').relative_to(ROOT)}) is not up to date."
                          f"\n{_report(problems)}")


@pytest.fixture()
def copy_of_chapter(tmp_path: Path) -> tuple[Path, Path]:
    """A temporary repository with one chapter and a complete translation file for it (each
    unit's "translation" is its English text with a Chinese comment: the markup is the same and
    the tests do not depend on the state of ``locale/zh``)."""
    source = ROOT / "book" / "04_scaling.ipynb"
    target = tmp_path / "book" / source.name
    target.parent.mkdir(parents=True)
    shutil.copy(source, target)
    translation = i18n.locale_file(target, "zh", tmp_path)
    entries = [i18n.Entry(u.place, u.hash, u.text + "\n<!-- 译文 -->")
               for u in i18n.units_of(target, tmp_path)]
    i18n.write_entries(translation, entries, "<!-- test -->\n")
    return target, translation


def _first_prose_unit(path: Path, root: Path) -> i18n.Unit:
    return next(u for u in i18n.units_of(path, root) if not u.text.lstrip().startswith("#"))


def test_editing_an_english_paragraph_fails_naming_the_unit(copy_of_chapter, tmp_path: Path):
    chapter, translation = copy_of_chapter
    assert not i18n.problems_of(chapter, "zh", tmp_path), "the copy must start up to date"
    unit = _first_prose_unit(chapter, tmp_path)
    notebook = json.loads(chapter.read_text(encoding="utf-8"))
    cell_id = unit.place.split(".")[0]
    for cell in notebook["cells"]:
        if cell.get("id") == cell_id:
            text = "".join(cell["source"])
            assert unit.text in text
            cell["source"] = text.replace(unit.text, unit.text + " An edited sentence.", 1)
    chapter.write_text(json.dumps(notebook, indent=1), encoding="utf-8")

    problems = i18n.problems_of(chapter, "zh", tmp_path)
    assert [p.kind for p in problems] == ["stale"], problems
    assert f"unit {unit.place}" in problems[0].unit and "book/04_scaling.ipynb" in problems[0].unit
    assert "older English text" in problems[0].detail

    # `update` turns it into a TODO holding the new English text and the old translation
    i18n.update(chapter, "zh", tmp_path)
    problems = i18n.problems_of(chapter, "zh", tmp_path)
    assert [p.kind for p in problems] == ["todo"] and f"unit {unit.place}" in problems[0].unit
    entry = next(e for e in i18n.read_entries(translation) if e.place == unit.place)
    assert entry.todo and "An edited sentence." in entry.text
    assert "the translation of the previous English text" in entry.text


def test_missing_todo_and_markup_problems_are_named(copy_of_chapter, tmp_path: Path):
    chapter, translation = copy_of_chapter
    entries = i18n.read_entries(translation)
    units = {u.place: u for u in i18n.units_of(chapter, tmp_path)}
    glued = next(e for e in entries if "{glue:" in e.text)
    todo, missing = [e for e in entries if e is not glued and not e.text.startswith("#")][:2]
    glued.text = re.sub(r"\{glue:[a-z]+\}`[^`]+`", "42", glued.text, count=1)
    todo.todo = True
    entries.remove(missing)
    i18n.write_entries(translation, entries, "<!-- test -->\n")

    found = {p.kind: p for p in i18n.problems_of(chapter, "zh", tmp_path)}
    assert set(found) == {"markup", "todo", "missing"}, found
    assert f"unit {glued.place}" in found["markup"].unit and "missing 'glue" in found["markup"].detail
    assert f"unit {todo.place}" in found["todo"].unit
    assert f"unit {missing.place}" in found["missing"].unit
    assert units[missing.place].describe() == found["missing"].unit
    report = _report(list(found.values()))
    for kind in ("markup", "todo", "missing"):
        assert KINDS[kind] in report


# --- one source, two languages --------------------------------------------------------------------


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_split_blocks_reassembles_every_source(source: Path):
    for cell_id, text in i18n._markdown_cells(source):
        pairs = i18n.split_blocks(text)
        assert "".join(block + separator for block, separator in pairs) == text, (
            f"{source.relative_to(ROOT)} cell {cell_id}")


def _pairs() -> list[tuple[Path, Path]]:
    chapters = [(zh_book.ZH / "book" / p.name, p) for p in zh_book.chapters()]
    copies = [(zh_book.ZH / "exercises" / p.name, ROOT / "exercises" / p.name)
              for p in authoring.solution_notebooks(ROOT)]
    return chapters + copies


@pytest.mark.parametrize("zh, english", _pairs(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_chinese_notebook_runs_the_english_code(zh: Path, english: Path):
    assert zh.exists(), f"{zh.relative_to(ROOT)} is missing: run `python tools/zh_book.py notebooks`"
    zh_nb, en_nb = nbformat.read(zh, as_version=4), nbformat.read(english, as_version=4)
    assert [(c.get("id"), c.cell_type) for c in zh_nb.cells] == [
        (c.get("id"), c.cell_type) for c in en_nb.cells], "cells differ (ids or types)"
    for zh_cell, en_cell in zip(zh_nb.cells, en_nb.cells):
        assert zh_cell.metadata == en_cell.metadata, f"cell {en_cell.get('id')}: metadata"
        if en_cell.cell_type == "code":
            assert zh_cell.source == en_cell.source, f"code cell {en_cell.get('id')} differs"
            assert zh_cell.outputs == en_cell.outputs == [] or zh_cell.outputs == en_cell.outputs
    zh_meta = dict(zh_nb.metadata)
    assert zh_meta.pop("language") == "zh"
    if "tformer" in zh_meta:  # the reader's copy: the grader's record, titles translated
        zh_exercises = zh_meta.pop("tformer")["exercises"]
        en_tformer = dict(en_nb.metadata)["tformer"]
        assert [e["id"] for e in zh_exercises] == [e["id"] for e in en_tformer["exercises"]]
        assert [e["check"] for e in zh_exercises] == [e["check"] for e in en_tformer["exercises"]]
    en_meta = {k: v for k, v in en_nb.metadata.items() if k != "tformer"}
    assert zh_meta == en_meta


def test_chinese_notebooks_are_up_to_date():
    drifted = zh_book.notebooks(check=True)
    assert not drifted, ("out of date: " + ", ".join(str(p.relative_to(ROOT)) for p in drifted)
                         + "\nRun `python tools/zh_book.py notebooks` (make translations) and "
                         "commit the result.")


def test_a_missing_translation_is_an_error_naming_the_unit(copy_of_chapter, tmp_path: Path):
    chapter, translation = copy_of_chapter
    entries = i18n.read_entries(translation)
    dropped = next(e for e in entries if not e.text.startswith("#"))
    i18n.write_entries(translation, [e for e in entries if e is not dropped], "<!-- test -->\n")
    lookup = i18n.lookup_for(chapter, "zh", tmp_path)
    notebook = json.loads(chapter.read_text(encoding="utf-8"))
    cell = next(c for c in notebook["cells"] if c.get("id") == dropped.place.split(".")[0])
    text = "".join(cell["source"])
    with pytest.raises(zh_book.MissingTranslationError, match=re.escape(f"unit {dropped.place}")):
        zh_book.translate_text(text, cell["id"], lookup, "book/04_scaling.ipynb")
    fallback: list[str] = []
    out = zh_book.translate_text(text, cell["id"], lookup, "book/04_scaling.ipynb", fallback)
    assert len(fallback) == 1 and f"unit {dropped.place}" in fallback[0]
    assert re.search(r"[A-Za-z]{4,}", out), "the fallback keeps the English text"


def test_exercise_headings_in_both_languages():
    for line, expected in [("## Exercise 07.3 — Split the heads", ("07.3", "Split the heads")),
                           ("## 练习 07.3 — 拆分各个头", ("07.3", "拆分各个头")),
                           ("## 练习07.3：拆分", ("07.3", "拆分"))]:
        heading = authoring.heading_of({"cell_type": "markdown", "source": line})
        assert heading is not None and heading[1:] == expected, line


def test_chinese_exercise_pages_speak_chinese_and_open_the_chinese_copy():
    from test_launch_links import check_page, parse_launch

    solution = authoring.solution_notebooks(ROOT)[0]
    translated = nbformat.from_dict(zh_book.translate_notebook(nbformat.read(solution, as_version=4),
                                                               solution))
    page = authoring.book_page(translated, solution.stem, ROOT, lang="zh")
    assert "在 Colab 中打开" in page and "Open in Colab" not in page
    assert re.search(r"^## 练习 \d\d\.\d", page, flags=re.M), "no Chinese exercise heading"
    assert "(exercise-" in page and ":label: ex-" in page, "labels must match the English page"
    links = [parsed for url in re.findall(r"\]\((https?://[^)\s]+)\)", page)
             if (parsed := parse_launch(url))]
    assert not check_page(f"book/exercises/{solution.stem}", links, edition="zh")


# --- the Chinese build (the session's build) ---------------------------------------------------------


class _Spans(HTMLParser):
    """Text of glued values (MyST-NB ``pasted-*`` elements) and the language switch links."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.current: list[str] = []
        self.values: list[str] = []
        self.switches: list[dict[str, str | None]] = []

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        classes = (values.get("class") or "").split()
        if tag == "a" and "book-language-switch" in classes:
            self.switches.append(values)
        if self.depth:
            self.depth += 1
        elif "pasted-text" in classes or "pasted-inline" in classes:
            self.depth, self.current = 1, []

    def handle_endtag(self, tag):
        if self.depth:
            self.depth -= 1
            if not self.depth:
                self.values.append(" ".join("".join(self.current).split()))

    def handle_data(self, data):
        if self.depth:
            self.current.append(data)


def _spans(path: Path) -> _Spans:
    parser = _Spans()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


@pytest.mark.book
def test_every_english_page_exists_in_chinese(zh_html: Path):
    missing = [name for name in toc_docnames() if not (zh_html / f"{name}.html").exists()]
    assert not missing, f"pages missing from _build/html/zh: {missing}"
    intro = (zh_html / "book" / "intro.html").read_text(encoding="utf-8")
    assert '<html lang="zh-CN"' in intro and zh_book.TITLE in intro


@pytest.mark.book
def test_the_chinese_build_executed_nothing(zh_html: Path):
    log = zh_book.LOG.read_text(encoding="utf-8")
    assert "Executing notebook" not in log and "Executed notebook" not in log, (
        "the Chinese build executed a notebook (it must take the English execution's outputs)")
    status = (zh_html / "book" / "status.html").read_text(encoding="utf-8")
    for source in zh_book.chapters():
        assert f"book/{source.stem}" in status, f"{source.stem} missing from the execution table"
    assert "❌" not in status


@pytest.mark.book
@pytest.mark.parametrize("docname", [n for n in toc_docnames()
                                     if (s := source_of(n)) is not None and s.suffix == ".ipynb"])
def test_glued_values_are_the_same_in_both_editions(docname: str, book_html: Path, zh_html: Path):
    english = Counter(_spans(book_html / f"{docname}.html").values)
    chinese = Counter(_spans(zh_html / f"{docname}.html").values)
    assert english, f"{docname}: no glued values found on the English page"
    assert chinese == english, (f"{docname}: glued values differ — only English: "
                                f"{list((english - chinese).elements())[:10]}, only Chinese: "
                                f"{list((chinese - english).elements())[:10]}")


@pytest.mark.book
def test_every_page_links_to_the_other_edition(book_html: Path, zh_html: Path):
    problems = []
    for docname in toc_docnames():
        for html, other_root, lang in ((book_html, zh_html, "zh-CN"), (zh_html, book_html, "en")):
            page = html / f"{docname}.html"
            switches = _spans(page).switches
            if len(switches) != 1:
                problems.append(f"{page.relative_to(book_html)}: {len(switches)} language links")
                continue
            link = switches[0]
            target = (page.parent / str(link["href"])).resolve()
            if target != (other_root / f"{docname}.html").resolve():
                problems.append(f"{page.relative_to(book_html)}: links to {link['href']}")
            if link.get("lang") != lang or link.get("hreflang") != lang:
                problems.append(f"{page.relative_to(book_html)}: lang/hreflang {link}")
    assert not problems, "\n".join(problems[:40])


def test_joining_wrapped_chinese_lines_keeps_markup_lines():
    """A translator's line break between two Chinese characters is joined (a browser would show
    a space), but not after a directive's title, a heading or an option, nor between a glossary
    term and its indented definition."""
    join = i18n.join_cjk_lines
    assert join("第一行中文，\n第二行。") == "第一行中文，第二行。"
    assert join("- 列表项，\n  续行。") == "- 列表项，续行。"
    assert join("术语\n  定义，\n  续行。") == "术语\n  定义，续行。"
    for kept in ("```{margin} 资料的两处小错\n它的图注说", "## 标题\n正文", ":alt: 中文\n中文",
                 "(ch05-label)=\n正文", "English\nwords"):
        assert join(kept) == kept


def test_breaks_next_to_full_width_punctuation_are_joined_but_not_list_items_or_terms():
    join = i18n.join_cjk_lines
    assert join("计算；\n$(T\\times T)$ 的分数") == "计算；$(T\\times T)$ 的分数"
    assert join("乘积：\n{glue:text}`ch03_x`") == "乘积：{glue:text}`ch03_x`"
    assert join("倍**\n（见下文）") == "倍**（见下文）"
    assert join("如下：\n- 第一项") == "如下：\n- 第一项"  # a list starts
    assert join("中文\n$x$ 与") == "中文\n$x$ 与"  # Chinese then math: the space is wanted
    term = "RMSNorm（均方根归一化）\nRMSNorm\n  定义。"  # a glossary entry's two term lines
    assert join(term) == term


def test_spaces_around_cross_references_that_show_chinese_are_dropped():
    tidy = i18n.tidy_cross_references
    assert tidy("熟悉 {doc}`02_soft_dictionary` 中的") == "熟悉{doc}`02_soft_dictionary`中的"
    assert tidy("见 {ref}`ch05-padding` 一节") == "见{ref}`ch05-padding`一节"
    assert tidy("是 {term}`词元 <token>` 的") == "是{term}`词元 <token>`的"
    assert tidy("如 {numref}`fig-ch11-window` 所示") == "如{numref}`fig-ch11-window` 所示"
    for kept in ("论文 {cite}`vaswani2017attention` 提出", "共 {glue:text}`n` 个",
                 "读作 {term}`GPT-2 <GPT-2>` 的", "见 **{term}`残差流 <residual stream>`**"):
        assert tidy(kept) == kept


def test_language_switch_markup():
    import book_html

    page = '<html lang="en" data-theme="auto"><body><div class="article-header-buttons"></div>'
    english = book_html.language_switch(page, "book/05_masks", chinese=False)
    assert 'href="../zh/book/05_masks.html" lang="zh-CN" hreflang="zh-CN"' in english
    assert ">中文</span></a>" in english and english.startswith('<html lang="en"')
    chinese = book_html.language_switch(page, "book/exercises/05_masks", chinese=True)
    assert chinese.startswith('<html lang="zh-CN"')
    assert 'href="../../../book/exercises/05_masks.html" lang="en" hreflang="en"' in chinese
    assert book_html.other_edition_url("genindex", chinese=True) == "../genindex.html"
    assert book_html.chinese_ui('<button title="Play" aria-label="Play">') == (
        '<button title="播放" aria-label="播放">')


@pytest.mark.book
def test_the_chinese_pdf_edition(zh_pdf: Path, zh_html: Path):
    """`tools/pdf_book.py --lang zh`: the Chinese title, Chinese text drawn in an embedded CJK
    font, math in the MathJax fonts, and the Chinese download menu links to it."""
    import subprocess

    info = subprocess.run(["pdfinfo", str(zh_pdf)], capture_output=True, text=True, check=True)
    assert f"Title:{' ' * 10}{zh_book.TITLE}" in info.stdout or zh_book.TITLE in info.stdout
    pages = int(re.search(r"Pages:\s+(\d+)", info.stdout)[1])
    assert pages > 100, f"only {pages} pages"
    text = subprocess.run(["pdftotext", "-f", "1", "-l", "30", str(zh_pdf), "-"],
                          capture_output=True, text=True, check=True).stdout
    assert zh_book.TITLE in text and "目录" in text and len(i18n.CJK.findall(text)) > 2000
    fonts = subprocess.run(["pdffonts", str(zh_pdf)], capture_output=True, text=True,
                           check=True).stdout
    assert re.search(r"WenQuanYi|NotoSansCJK|NotoSerifCJK|SourceHan", fonts), fonts[:800]
    assert (zh_html / zh_pdf.name).exists()
    intro = (zh_html / "book" / "intro.html").read_text(encoding="utf-8")
    assert f'href="../{zh_pdf.name}"' in intro


@pytest.mark.book
def test_chinese_citations_and_labels_say_deng(book_html: Path, zh_html: Path):
    english = (book_html / "book" / "references.html").read_text(encoding="utf-8")
    chinese = (zh_html / "book" / "references.html").read_text(encoding="utf-8")
    assert "Vaswani et al., 2017" in english and "Vaswani 等, 2017" not in english
    assert "Vaswani 等, 2017" in chinese and "et al., 2017" not in chinese
    chapter = (zh_html / "book" / "07_multihead.html").read_text(encoding="utf-8")
    assert "Vaswani 等, 2017</a>" in chapter


def test_chinese_page_text_left_in_english_by_the_tools():
    import book_html

    page = (
        '<span class="btn__text-container">Repository</span>'
        '<label for="_anim_radio2_ab12">Loop</label>'
        '<img alt="heads, frame 3 of 16">'
        '<p class="admonition-title">解答<a class="reference internal" href="#ex-05-2"> 练习</a></p>'
        '<th class="head"><p>Run Time (s)</p></th><td><p>cache</p></td>'
        "<p>作者： X</p><p><em>精确</em>的 <em>Attention Is All You Need</em></p>"
    )
    text = book_html.chinese_text(page)
    for expected in ("源代码仓库", ">循环<", "第 3 帧，共 16 帧",
                     '<a class="reference internal" href="#ex-05-2">练习 05.2</a> 的解答',
                     "运行时间（秒）", "<td><p>缓存</p></td>", "作者：X",
                     '<em><span class="zh-em">精确</span></em>',
                     "<em>Attention Is All You Need</em>"):
        assert expected in text, expected
