"""Build the PDF edition of the book from the executed HTML (``make pdf``).

Usage: .venv/bin/python tools/pdf_book.py [--html _build/html] [--out _build/pdf] [--lang zh]

``--lang zh`` prints the Chinese edition (``_build/html/zh/``, built by ``tools/zh_book.py``) into
``_build/pdf/attention-executed-zh.pdf`` (copied next to the Chinese HTML), with its own title
page and headings, drawn in the CJK font the Chinese pages use.

Route: the pages that ``make book`` already built and executed are assembled, in reading order,
into one print document (``_build/pdf/book.html``): a title page, a table of contents with
internal links, chapter 0, chapters 1-12, an appendix with every chapter's exercises (the worked
solutions left out: the PDF is the reader's copy), the glossary and the references. Headless
Chromium — the browser the project already installs for its browser test — renders MathJax and
prints the document with Playwright's ``page.pdf``: A4, a tagged PDF whose outline (bookmarks)
lists every chapter and section, laid out as a printed book — a contents with page numbers,
running heads (the book's title on left-hand pages, the chapter's on right-hand ones) and
folios in CSS ``@page`` margin boxes, none on the title page and on blank pages, every chapter
on a right-hand page, box titles kept with their boxes, and the document information (title,
author, subject, keywords; the language is the catalogue's /Lang). No notebook is executed
again and nothing is downloaded.

What the assembly changes, so the PDF reads as a book and not as a web page:
- every id is prefixed with its page (``book-05_masks--causal``) and every link between pages
  becomes a link inside the document (cross-references, citations, glossary terms);
- the HTML chrome goes: header links, buttons, the folded setup cell, the folded source of
  hidden-input cells; details blocks (hints) are shown open;
- each scrubbable player (``tformer.plots.to_jshtml``) becomes a strip of four chosen frames
  with their numbers (a PDF cannot animate); live-widget views are dropped (the chapters show the
  player or a static figure beside them);
- code wraps inside the page width (print CSS), margin notes flow into the text.
The result is written to ``_build/pdf/attention-executed.pdf`` and copied next to the HTML
(``_build/html/attention-executed.pdf``), where the book's download menu links to it.
"""

from __future__ import annotations

import argparse
import html as html_lib
import os
import posixpath
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

from bs4 import BeautifulSoup, Tag

TOOLS = Path(__file__).resolve().parent
ROOT = TOOLS.parent
sys.path.insert(0, str(TOOLS))

from screenshots import CHROMIUM, CHROMIUM_ARGS, wait_until_rendered  # noqa: E402
from toc import toc_docnames  # noqa: E402

PDF_NAME = "attention-executed.pdf"
TITLE = "Attention, Executed"
SUBTITLE = ("An interactive textbook on attention and Transformers, "
            "in which every number is computed by the code beside it")
# The fixed words of the print document, per edition (--lang).
EDITIONS = {
    "en": {"pdf": PDF_NAME, "lang": "en", "title": TITLE, "subtitle": SUBTITLE,
           "authors": "The Attention, Executed authors",
           "subject": "Attention and Transformers: scaled dot-product attention, masks, "
                      "multi-head attention, positions, the Transformer block, training, "
                      "decoding, the cost of attention and induction heads, with executed code",
           "keywords": "attention, Transformer, self-attention, multi-head attention, "
                       "PyTorch, textbook",
           "built": "Built {date} from the executed notebooks of the HTML edition.",
           "contents": "Contents", "appendix": "Appendix: Exercises",
           "appendix_note": "This appendix holds every chapter's exercises as the reader's "
                            "notebooks state them (<code>exercises/NN_….ipynb</code>): each "
                            "task, its hints (printed open) and the call that checks the "
                            "answer. The worked solutions are not printed here; they are on "
                            "each exercise page of the HTML edition, folded under the "
                            "exercise."},
    "zh": {"pdf": "attention-executed-zh.pdf", "lang": "zh-CN", "title": "可运行的注意力",
           "subtitle": "一本关于注意力与 Transformer 的交互式教科书，书中每个数字都由代码算出",
           "authors": "《可运行的注意力》（Attention, Executed）的作者们",
           "subject": "注意力与 Transformer：缩放点积注意力、掩码、多头注意力、位置编码、"
                      "Transformer 块、训练、解码、注意力的代价与归纳头，配有已执行的代码",
           "keywords": "注意力, Transformer, 自注意力, 多头注意力, PyTorch, 教科书",
           "built": "{date} 由 HTML 版已执行的笔记本生成。",
           "contents": "目录", "appendix": "附录：练习",
           "appendix_note": "本附录收录各章的练习，与读者笔记本（<code>zh/exercises/NN_….ipynb</code>）"
                            "中的写法相同：每道题的题目、提示（直接印出）和检查答案的调用。"
                            "参考解答不在这里印出；它们在 HTML 版每个练习页面上，折叠在题目下方。"},
}
# What an exercise page says of its folded solutions (tformer.authoring's "checks" phrase) is
# not true of the PDF, which prints none: said instead.
FOLDED = {
    "en": ("The worked solutions below are folded; open one once you have tried.",
           "The worked solutions are not printed here; they are on this page of the HTML edition."),
    "zh": ("下面的参考解答是折叠的：自己做过之后再打开。",
           "参考解答不在这里印出；它们在 HTML 版的这一页上。"),
}
WORDS = EDITIONS["en"]  # the edition being printed (main() sets it)
FRAMES_SHOWN = 4
PRINT_TIMEOUT_MS = 600_000  # loading a 3.7 MB document on a loaded 2-core machine takes > 30 s
# pydata-sphinx-theme's stylesheet makes Chromium's tagged-PDF outline repeat every chapter title
# ("1. 1. From text to vectorsFrom text to vectors"); the print CSS below replaces what the book
# needs of it (admonitions, code boxes, tables).
THEME_CSS_LEFT_OUT = ("pydata-sphinx-theme.css",)
BACK_MATTER = ("book/glossary", "book/references")
SKIPPED = ("book/status",)  # the execution report is about one build, not part of the book

FRAME = re.compile(r'frames\[(\d+)\]\s*=\s*"((?:[^"\\]|\\.|\\\n)*)"', re.S)


def page_key(docname: str) -> str:
    """The id prefix of one page inside the assembled document (``book-05_masks``)."""
    return docname.replace("/", "-")


def reading_order(root: Path = ROOT) -> tuple[list[str], list[str], list[str]]:
    """(main pages, exercise pages, back matter) in the order of the table of contents."""
    names = [name for name in toc_docnames(root) if name not in SKIPPED]
    exercises = [name for name in names if name.startswith("book/exercises/")]
    back = [name for name in names if name in BACK_MATTER]
    main = [name for name in names if name not in exercises and name not in back]
    return main, exercises, back


# --- one page --------------------------------------------------------------------------------


def _resolve(docname: str, url: str) -> tuple[str, str] | None:
    """(target path relative to the HTML root, fragment) of a relative link, else None."""
    parts = urlsplit(url)
    if parts.scheme or parts.netloc or url.startswith("//"):
        return None
    if not parts.path:
        return f"{docname}.html", parts.fragment
    folder = posixpath.dirname(docname)
    return posixpath.normpath(posixpath.join(folder, parts.path)), parts.fragment


def _frame_strip(soup: BeautifulSoup, script_text: str) -> Tag | None:
    """Four evenly spaced frames of a jshtml player, side by side with their numbers."""
    frames = {
        int(index): data.replace("\\\n", "").replace("\\", "") for index, data in FRAME.findall(script_text)
    }
    if not frames:
        return None
    count = max(frames) + 1
    chosen = sorted({round(i * (count - 1) / (FRAMES_SHOWN - 1)) for i in range(FRAMES_SHOWN)})
    strip = soup.new_tag("div", attrs={"class": "pdf-frames"})
    for index in chosen:
        if index not in frames:
            continue
        cell = soup.new_tag("figure", attrs={"class": "pdf-frame"})
        cell.append(soup.new_tag("img", attrs={"src": frames[index], "alt": f"Frame {index + 1} of {count}"}))
        caption = soup.new_tag("figcaption")
        caption.string = f"frame {index + 1} of {count}"
        cell.append(caption)
        strip.append(cell)
    note = soup.new_tag("p", attrs={"class": "pdf-frames-note"})
    note.string = (
        f"An animation of {count} frames in the HTML and notebook editions; "
        f"{len(strip.contents)} of them are printed here."
    )
    strip.append(note)
    return strip


def _replace_players(soup: BeautifulSoup, article: Tag) -> int:
    replaced = 0
    for script in list(article.find_all("script")):
        if script.parent is None:  # removed with an earlier player's output
            continue
        text = script.string or script.get_text()
        if "frames[0]" not in text:
            continue
        strip = _frame_strip(soup, text)
        output = script.find_parent(class_=re.compile(r"\bcell_output\b|\boutput\b"))
        if strip is None or output is None:
            continue
        output.clear()
        output.append(strip)
        replaced += 1
    return replaced


def _strip_chrome(article: Tag) -> None:
    for selector in (
        "a.headerlink",
        "button",
        "div.solution",  # worked solutions on exercise pages: the PDF is the reader's copy
        "div.cell.tag_hide-cell",  # the setup cell
        "details.above-input",  # folded source of hide-input cells (their output stays)
        ".d-print-none",
        "script[type='application/vnd.jupyter.widget-view+json']",
        ".jupyter-widgets",
        "div.widget-subarea",
        "noscript",
    ):
        for element in article.select(selector):
            element.decompose()
    for script in article.find_all("script"):
        script.decompose()
    for style in article.find_all("style"):  # player CSS; the print CSS styles the strips
        style.decompose()
    for details in article.find_all("details"):  # hints and folded outputs: shown open
        summary = details.find("summary")
        if summary is not None:
            label = summary.get_text(" ", strip=True)
            summary.name = "p"
            summary.attrs = {"class": "pdf-summary"}
            summary.string = label
        details.unwrap()
    # empty outputs left behind (a dropped widget view)
    for output in article.select("div.cell_output"):
        if not output.get_text(strip=True) and not output.find("img"):
            output.decompose()


def _shift_headings(article: Tag, by: int) -> None:
    for level in range(6, 0, -1):
        for heading in article.find_all(f"h{level}"):
            heading.name = f"h{min(level + by, 6)}"


def assemble_page(
    docname: str, html_root: Path, out: Path, included: set[str], shift: int = 0
) -> tuple[Tag, dict]:
    """The article of one built page, made self-contained for the print document."""
    path = html_root / f"{docname}.html"
    soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
    article = soup.select_one("article.bd-article")
    if article is None:
        raise SystemExit(f"{path}: no <article class='bd-article'> (was the book built?)")
    key = page_key(docname)
    players = _replace_players(soup, article)
    _strip_chrome(article)
    folded, printed = FOLDED["zh" if WORDS["lang"].startswith("zh") else "en"]
    for text in article.find_all(string=re.compile(re.escape(folded))):
        text.replace_with(text.replace(folded, printed))
    _plain_heading_math(article, soup)
    for element in article.find_all(id=True):
        element["id"] = f"{key}--{element['id']}"
    for link in article.find_all("a", href=True):
        target = _resolve(docname, link["href"])
        if target is None:
            continue
        target_path, fragment = target
        target_doc = target_path.removesuffix(".html")
        if target_path.endswith(".html") and target_doc in included:
            tkey = page_key(target_doc)
            link["href"] = f"#{tkey}--{fragment}" if fragment else f"#{tkey}"
        else:
            link.unwrap()  # a download, an image, or a page the PDF leaves out
    for image in article.find_all("img", src=True):
        image.attrs.pop("loading", None)  # the HTML loads figures lazily; print has no viewport
        if image.get("srcset"):  # print the 2x rendition of a figure (tools/book_html.py)
            candidates = [part.split() for part in image["srcset"].split(",")]
            image["src"] = next((c[0] for c in candidates if c[1:] == ["2x"]), image["src"])
            del image["srcset"]
        src = image["src"]
        if src.startswith("data:"):
            continue
        resolved = _resolve(docname, src)
        if resolved is not None:
            image["src"] = os.path.relpath(html_root / resolved[0], out)
        image["loading"] = "eager"
    if shift:
        _shift_headings(article, shift)
    section = soup.new_tag("section", attrs={"class": "pdf-doc", "id": key})
    for child in list(article.children):
        section.append(child.extract())
    title = section.find(["h1", "h2"])
    stats = {
        "players": players,
        "title": title.get_text(" ", strip=True) if title else docname,
        "styles": [_relocated_style(style, path.parent, out) for style in soup.head.find_all("style")],
    }
    return section, stats


CSS_URL = re.compile(r"""url\((["']?)(?!data:|https?:|#)([^"')]+)\1\)""")


def _relocated_style(style: Tag, base: Path, out: Path) -> str:
    """A page's ``<style>`` (e.g. the build-time math CSS, with its font ``url()``s relative to
    the page) rewritten so its URLs resolve from the print document in ``out``."""
    css = style.string or style.get_text()
    return CSS_URL.sub(
        lambda m: f'url("{os.path.relpath(base / m.group(2).split("?")[0], out)}")', css
    )


# --- the document ------------------------------------------------------------------------------


PRINT_CSS = """
@page { size: A4; margin: 18mm 17mm 20mm 17mm; }
/* running heads, folios and the named page of each part: page_css() */
html, body { background: #fff !important; color: #111 !important; }
html { font-size: 10pt; }
body { margin: 0; font-family: "DejaVu Serif", "Noto Serif", Georgia, serif; line-height: 1.45; }
/* CJK in WenQuanYi Micro Hei first: Chromium's PDF writer embeds it as a CID TrueType font, but
   draws Noto CJK (a CFF face inside an OpenType collection) as nameless Type 3 glyph procedures */
html:not(:lang(zh)) body :lang(zh), .glossary .zh {
  font-family: "WenQuanYi Micro Hei", "Noto Sans CJK SC", sans-serif; }
html:lang(zh) body { line-height: 1.7;
  font-family: "DejaVu Serif", "WenQuanYi Micro Hei", "Noto Serif CJK SC", serif; }
h1, h2, h3, h4 { font-family: "DejaVu Sans", "Noto Sans", "WenQuanYi Micro Hei", sans-serif;
  color: #111 !important; break-after: avoid; page-break-after: avoid; }
h1 { font-size: 20pt; margin: 0 0 10pt; }
h2 { font-size: 14pt; margin: 16pt 0 6pt; }
h3 { font-size: 11.5pt; margin: 12pt 0 4pt; }
.pdf-doc, .pdf-part { break-before: page; page-break-before: always; }
.pdf-part h1 { font-size: 24pt; margin-top: 35%; text-align: center; }
.pdf-title { text-align: center; padding-top: 30%; }
.pdf-title h1 { font-size: 30pt; margin-bottom: 12pt; }
.pdf-title p { font-size: 12pt; }
.pdf-toc ol { list-style: none; padding-left: 0; }
.pdf-toc ol ol { padding-left: 1.4em; font-size: 9pt; }
.pdf-toc li { margin: 2pt 0; }
.pdf-toc > ol > li { margin-top: 5pt; }
.pdf-toc > ol > li > .pdf-toc-line { font-weight: bold; }
.pdf-toc a { color: #111 !important; text-decoration: none; }
.pdf-toc-line { display: flex; align-items: baseline; break-inside: avoid; }
.pdf-toc-leader { flex: 1; border-bottom: 1px dotted #999; margin: 0 4pt; min-width: 1.5em; }
.pdf-toc-page { display: inline-block; min-width: 2.2em; text-align: right;
  font-variant-numeric: tabular-nums; }
.pdf-probe { display: inline-block; width: 0; white-space: nowrap; overflow: visible;
  vertical-align: top; font-size: 2pt; line-height: 0; color: #fff; }
.pdf-blank { page: pdf-blank; break-before: page; }
.pdf-keep { break-inside: avoid; page-break-inside: avoid; }
.pdf-appendix-note { max-width: 32em; margin: 12pt auto; text-align: left; }
a { color: #0b4f8a !important; text-decoration: none; }
p, li { orphans: 3; widows: 3; }
figure, .pdf-frames, table, .admonition, div.math, .cell_output img { break-inside: avoid; }
img { max-width: 100% !important; height: auto !important; }
figure img { max-width: 88% !important; }
figcaption { font-size: 9pt; color: #222 !important; }
pre, pre code, .highlight pre { white-space: pre-wrap !important; overflow-wrap: anywhere;
  word-break: break-word; overflow: visible !important; max-height: none !important; }
.highlight pre, .output pre, .cell_output pre { font-size: 7.8pt; line-height: 1.35; }
code { font-size: 0.9em; overflow-wrap: anywhere; }
div.cell_output, div.output, .cell_output .output { overflow: visible !important;
  max-height: none !important; }
table { max-width: 100%; font-size: 8.5pt; table-layout: auto; }
td, th { overflow-wrap: anywhere; }
div.math, mjx-container[display="true"] { overflow: visible !important; max-width: 100%; }
aside.margin, .margin.sidebar, aside.sidebar { float: none !important; width: auto !important;
  margin: 6pt 0 !important; padding: 4pt 8pt !important; border-left: 3px solid #888 !important;
  background: #f5f5f5 !important; font-size: 9pt; position: static !important; }
.admonition { margin: 8pt 0 !important; }
.pdf-summary { font-weight: bold; margin-bottom: 2pt; }
.pdf-plain-math { font-family: "DejaVu Serif", serif; font-style: italic; }
.pdf-frames { display: grid; grid-template-columns: 1fr 1fr; gap: 6pt 10pt; margin: 6pt 0; }
.pdf-frame { margin: 0; text-align: center; min-width: 0; }
.pdf-frame img { width: 100% !important; max-width: 100% !important; }
.pdf-frame figcaption { font-size: 7.5pt; }
.pdf-frames-note { grid-column: 1 / -1; font-size: 8pt; font-style: italic; margin: 2pt 0 0; }
.admonition, div.admonition { border: 1px solid #ccc; border-left: 4px solid #0b6fb8;
  border-radius: 3px; padding: 4pt 9pt; background: #f8fafc !important; }
.admonition.warning, .admonition.caution { border-left-color: #c77c00; }
.admonition.tip, .admonition.hint { border-left-color: #1b8a5a; }
p.admonition-title::before, p.admonition-title::after { content: none !important; }
.admonition-title { font-weight: bold; margin: 0 0 3pt; font-family: "DejaVu Sans", sans-serif;
  break-after: avoid; page-break-after: avoid; }
div.highlight, .cell_input { background: #f6f8fa !important; border: 1px solid #ddd; border-radius: 3px;
  padding: 3pt 6pt; margin: 4pt 0; }
div.highlight pre { background: transparent !important; border: none; margin: 0; padding: 0; }
.cell_output pre, .output pre { background: #fbfbfb !important; border: 1px solid #eee; padding: 3pt 6pt; }
table { border-collapse: collapse; margin: 6pt 0; }
th, td { border-bottom: 1px solid #ccc; padding: 2pt 6pt; text-align: left; vertical-align: top; }
dl.glossary dt { font-weight: bold; margin-top: 6pt; }
dl.glossary dd { margin-left: 1.5em; }
.bd-sidebar-primary, .bd-sidebar-secondary, .bd-header, .bd-footer, .prev-next-area,
  .header-article-items, .toggle-button { display: none !important; }
"""


def _head_assets(first_page: Path, out: Path) -> str:
    """Stylesheets and MathJax of a built chapter page, with paths valid from ``out`` (the pages'
    inline ``<style>`` elements are collected from every page: each page's math CSS holds only
    the glyphs that page uses)."""
    soup = BeautifulSoup(first_page.read_text(encoding="utf-8"), "html.parser")
    base = first_page.parent
    parts: list[str] = []
    for element in soup.head.find_all(["link", "style", "script"]):
        if element.name == "link" and "stylesheet" in (element.get("rel") or []):
            href = element["href"].split("?")[0]
            if href.endswith(THEME_CSS_LEFT_OUT):
                continue
            element["href"] = os.path.relpath(base / href, out)
            parts.append(str(element))
        elif element.name == "script":
            src = element.get("src", "")
            text = element.string or ""
            if "mathjax" in src.lower():
                element["src"] = os.path.relpath(base / src.split("?")[0], out)
                parts.append(str(element))
            elif text.lstrip().startswith("window.MathJax"):
                parts.append(str(element))
    return "\n".join(parts)


def _toc_line(text: str, anchor: str) -> str:
    """One line of the contents: the linked title, a dotted leader and the page number's slot
    (``PAGE_SLOT``, filled in by :func:`fill_page_numbers` once the pages are known)."""
    return (
        f'<span class="pdf-toc-line"><a href="#{anchor}">{html_lib.escape(text)}</a>'
        f'<span class="pdf-toc-leader"></span>'
        f'<span class="pdf-toc-page" data-target="{anchor}">{PAGE_SLOT}</span></span>'
    )


def _toc(entries: list[tuple[str, str, list[tuple[str, str]]]]) -> str:
    items = []
    for title, target, sections in entries:
        sub = "".join(f"<li>{_toc_line(text, anchor)}</li>" for text, anchor in sections)
        sub_list = f"<ol>{sub}</ol>" if sub else ""
        items.append(f"<li>{_toc_line(title, target)}{sub_list}</li>")
    return (
        f'<section class="pdf-doc pdf-toc" id="pdf-contents" {RECTO} style="page: pdf-pg-contents">'
        f'<h1>{_probe("pdf-contents")}{WORDS["contents"]}</h1>'
        f"<ol>{''.join(items)}</ol></section>"
    )


# --- page numbers: probes, blank versos, running heads ----------------------------------------
#
# Chromium's print engine has no target-counter() (a contents page number), no string-set (a
# running head taken from the text) and ignores break-before: right. So the document is printed
# twice. The first print carries a probe, an invisible absolutely positioned marker
# ("@@P17@@", white 2 pt text in a zero-width inline block that takes no room), at the start of
# each heading the contents lists (in the flow: an absolutely positioned probe right after a
# forced page break is painted on the page before);
# pdftotext says on which page each probe landed. The second print drops the probes, inserts a
# blank page before each chapter that would start on a left-hand (even) page, and fills in the
# contents' page numbers (their slots are reserved in the first print, so nothing reflows).
# Running heads and folios are CSS margin boxes: one named page per part of the book
# (@page pdf-pg-5:right { @top-right { content: "5. Masks" } }).

PAGE_SLOT = "000"
RECTO = 'data-pdf-recto=""'
PROBE = re.compile(r"@@P(\d+)@@")
PROBE_SPAN = re.compile(r'<span class="pdf-probe">@@P\d+@@</span>')
BLANK_SLOT = "<!--pdf-blank:{key}-->"
_probes: list[str] = []  # anchor of probe i (assemble() fills it)


def _probe(anchor: str) -> str:
    _probes.append(anchor)
    return f'<span class="pdf-probe">@@P{len(_probes) - 1}@@</span>'


def _css_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def page_css(heads: list[tuple[str, str]], lang: str) -> str:
    """``@page`` rules: a folio on the outer foot of every page, the book's title as the head of
    left-hand pages and each part's own title on its right-hand pages; none on the title page
    and on blank pages. ``heads``: (named page, running head) in order."""
    font = ('font-family: "DejaVu Sans", "WenQuanYi Micro Hei", "Noto Sans CJK SC", sans-serif;'
            " font-size: 7.5pt; color: #444;")
    rules = [
        f"@page :left {{ @top-left {{ content: {_css_string(WORDS['title'])}; {font} }}"
        f" @bottom-left {{ content: counter(page); {font} }} }}",
        f"@page :right {{ @bottom-right {{ content: counter(page); {font} }} }}",
    ]
    for name, head in heads:
        rules.append(f"@page {name}:right {{ @top-right {{ content: {_css_string(head)}; {font} }} }}")
    silent = " ".join(f"@{box} {{ content: none; }}"
                      for box in ("top-left", "top-right", "bottom-left", "bottom-right"))
    rules += [f"@page pdf-front {{ {silent} }}", f"@page pdf-blank {{ {silent} }}"]
    return "\n".join(rules)


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _label_on(label: str, body: str) -> bool:
    """Whether a heading's text is on a page: its first 16 characters, or its closing run of
    CJK text when that has 4 or more characters (pdftotext may set a heading's Latin run apart
    from its CJK run: "LayerNorm：一次一个词元")."""
    label = _squeezed(label)
    cjk = re.search(r"[^\x00-\u2fff]{4,}$", label)
    if label[:16] in body or bool(cjk and cjk[0] in body):
        return True
    # or every Latin and CJK run of its opening, in any order ("层，以及清点GPT-2" before
    # "8.Transformer" when the two scripts' fonts sit on different baselines)
    runs = re.findall(r"[^\x00-\u2fff]+|[\x00-\u2fff]+", label[:24])
    return len(runs) > 1 and all(run in body for run in runs)


def _page_bodies(pdf: Path) -> list[str]:
    """Each page's text without whitespace and without its running head (the first line of
    every page but the title page), so a title found on a page is the page's own."""
    pages = subprocess.run(["pdftotext", "-enc", "UTF-8", str(pdf), "-"], capture_output=True,
                           text=True, check=True).stdout.split("\f")
    bodies = []
    for number, page in enumerate(pages, start=1):
        lines = [line for line in page.splitlines() if line.strip()]
        bodies.append(_squeezed("".join(lines[1:] if number > 1 else lines)))
    return bodies


def probe_pages(pdf: Path, labels: dict[str, str]) -> dict[str, int]:
    """{anchor: page number} of every probe in a first print. The probes are found by their size
    in ``pdftotext -bbox`` (words under 4 pt high, joined in reading order): in plain text,
    pdftotext can interleave a probe's glyphs with the heading's that they overlap. A heading
    right after a forced page break has its probe painted whole on the page before as well (and
    only in pieces on its own page): when the heading's text (``labels``) is not on the probe's
    page but on the next, the next is its page."""
    bbox = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout
    word = re.compile(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="[\d.]+" yMax="([\d.]+)">'
                      r"([^<]*)</word>")
    pages: dict[str, int] = {}
    for number, page in enumerate(re.findall(r"<page [^>]*>(.*?)</page>", bbox, re.S), start=1):
        tiny = sorted((round(float(m[2])), float(m[1]), m[4]) for m in word.finditer(page)
                      if float(m[3]) - float(m[2]) < 4)
        for match in PROBE.finditer("".join(text for _, _, text in tiny)):
            pages.setdefault(_probes[int(match[1])], number)
    missing = [anchor for anchor in _probes if anchor not in pages]
    if missing:
        raise SystemExit(f"the first print lost the page of {len(missing)} headings: {missing[:5]}")
    text = _page_bodies(pdf)
    for anchor, page in pages.items():
        label = labels.get(anchor, "")
        if (label and not _label_on(label, text[page - 1]) and page < len(text)
                and _label_on(label, text[page])):
            pages[anchor] = page + 1
    return pages


def lay_out(document: str, pages: dict[str, int]) -> tuple[str, dict[str, int]]:
    """The second print's document (blank versos inserted, page numbers filled in, probes gone)
    and the final page of each anchor."""
    soup_keys = re.findall(r"<!--pdf-blank:([^>]+?)-->", document)
    starts = sorted((pages[key], key) for key in soup_keys)
    shift_at: list[tuple[int, int]] = []  # (first page of a part, blanks inserted before it)
    blanks: set[str] = set()
    shift = 0
    for page, key in starts:
        if (page + shift) % 2 == 0:
            shift += 1
            blanks.add(key)
        shift_at.append((page, shift))

    def final(page: int) -> int:
        extra = 0
        for start, inserted in shift_at:
            if page >= start:
                extra = inserted
        return page + extra

    numbers = {anchor: final(page) for anchor, page in pages.items()}
    out = PROBE_SPAN.sub("", document)
    out = re.sub(r"<!--pdf-blank:([^>]+?)-->",
                 lambda m: '<div class="pdf-blank"></div>' if m[1] in blanks else "", out)
    out = re.sub(r'(<span class="pdf-toc-page" data-target="([^"]+)">)' + PAGE_SLOT + "<",
                 lambda m: f"{m[1]}{numbers[m[2]]}<", out)
    return out, numbers


def _heading_text(heading: Tag) -> str:
    return " ".join(heading.get_text(" ", strip=True).split())


SUBSCRIPTS = dict(zip("0123456789aehijklmnoprstuvx+-=()", "₀₁₂₃₄₅₆₇₈₉ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ₊₋₌₍₎", strict=True))
SUPERSCRIPTS = dict(zip("0123456789n+-=()iT", "⁰¹²³⁴⁵⁶⁷⁸⁹ⁿ⁺⁻⁼⁽⁾ⁱᵀ", strict=True))


def _script(text: str, table: dict[str, str], marker: str) -> str:
    if text and all(char in table for char in text):
        return "".join(table[char] for char in text)
    return marker + text


def mathml_text(node: Tag) -> str:
    """A plain-text (Unicode) reading of typeset math, from the MathML that MathJax writes beside
    its output for screen readers (``<msqrt><msub><mi>d</mi><mi>k</mi>…`` -> ``√dₖ``)."""
    children = [child for child in node.children if isinstance(child, Tag)]
    if node.name == "msqrt":
        inner = "".join(mathml_text(child) for child in children)
        return "√" + (inner if len(inner) <= 3 else f"({inner})")
    if node.name in ("msub", "msup") and len(children) == 2:
        table, marker = (SUBSCRIPTS, "_") if node.name == "msub" else (SUPERSCRIPTS, "^")
        return mathml_text(children[0]) + _script(mathml_text(children[1]), table, marker)
    if node.name == "mfrac" and len(children) == 2:
        return f"{mathml_text(children[0])}/{mathml_text(children[1])}"
    if children:
        return "".join(mathml_text(child) for child in children)
    text = node.get_text()
    return f" {text} " if node.name == "mo" and text in "=+−<>≤≥≈×→∈" else text


def _heading_labels(soup: BeautifulSoup) -> dict[str, str]:
    """The plain-text label the HTML page gives each heading with math (tools/book_html.py writes
    a title's math as Unicode text in the page's <title>, the navigation and the page's
    contents), by section id; the page's own title under the key ``""``."""
    labels = {link["href"][1:]: _heading_text(link)
              for link in soup.select(".bd-sidebar-secondary a[href^='#']")}
    if soup.title is not None:  # "4. Why divide by √dₖ — Attention, Executed"
        labels[""] = soup.title.get_text().rsplit(" — ", 1)[0].strip()
    return labels


def _plain_heading_math(article: Tag, soup: BeautifulSoup) -> None:
    """Math in a heading as text, so that the PDF's text, contents and bookmarks carry it
    (Chromium takes the outline from heading text; MathJax's glyphs are CSS content). The text
    is the HTML's own label of that heading, with the math kept in italics where it reads the
    same."""
    labels = _heading_labels(soup)
    for heading in article.find_all(["h1", "h2", "h3", "h4", "h5", "h6"]):
        maths = heading.select(".math")
        if not maths:
            continue
        for math in maths:
            mathml = math.find("math")
            plain = soup.new_tag("span", attrs={"class": "pdf-plain-math"})
            plain.string = " ".join(mathml_text(mathml).split()) if mathml else math.get_text()
            math.replace_with(plain)
        section = heading.find_parent("section")
        label = labels.get("" if heading.name == "h1" else (section or {}).get("id", ""))
        number = heading.find(class_="section-number")
        prefix = number.get_text().strip() if number is not None else ""
        if label and not label.startswith(prefix):  # the contents' labels have no number
            label = f"{prefix} {label}"
        if label and _heading_text(heading) != " ".join(label.split()):
            heading.clear()  # the typeset reading differs: the HTML's label, exactly
            if number is not None:
                heading.append(number)
            heading.append(label.removeprefix(prefix).strip())


def _keep_box_titles(section: Tag, soup: BeautifulSoup) -> None:
    """A box's title and the start of its body in one unbreakable block, so no title is left at
    the foot of a page (``break-after: avoid`` alone does not hold in Chromium)."""
    for title in section.select("p.admonition-title, p.sidebar-title"):
        following = title.find_next_sibling()
        keep = soup.new_tag("div", attrs={"class": "pdf-keep"})
        title.insert_before(keep)
        keep.append(title.extract())
        if following is not None:
            keep.append(following.extract())


def assemble(html_root: Path, out: Path) -> tuple[str, dict]:
    main, exercises, back = reading_order()
    included = set(main) | set(exercises) | set(back)
    body: list[str] = []
    toc: list[tuple[str, str, list[tuple[str, str]]]] = []
    stats = {"players": 0, "pages": 0}
    styles: list[str] = []
    heads: list[tuple[str, str]] = [("pdf-pg-contents", WORDS["contents"])]
    _probes.clear()

    def add(docname: str, shift: int = 0, toc_sections: bool = True, recto: bool = True,
            head: str = "") -> None:
        section, page_stats = assemble_page(docname, html_root, out, included, shift)
        stats["players"] += page_stats["players"]
        for css in page_stats["styles"]:
            if css not in styles:
                styles.append(css)
        stats["pages"] += 1
        key = page_key(docname)
        top = section.find(["h1", "h2"])
        title = _heading_text(top) if top else docname
        if top is not None:
            top.insert(0, BeautifulSoup(_probe(key), "html.parser"))
        sections = []
        if toc_sections:
            level = f"h{2 + shift}"
            for heading in section.find_all(level):
                parent = heading.find_parent("section")
                if parent is not None and parent.get("id"):
                    sections.append((_heading_text(heading), parent["id"]))
                    heading.insert(0, BeautifulSoup(_probe(parent["id"]), "html.parser"))
        _keep_box_titles(section, BeautifulSoup("", "html.parser"))
        name = f"pdf-pg-{len(heads)}"
        heads.append((name, head or title))
        section["style"] = f"page: {name}"
        if recto:
            section[RECTO.split("=")[0]] = ""
            body.append(BLANK_SLOT.format(key=key))
        toc.append((title, key, sections))
        body.append(str(section))

    for docname in main:
        add(docname)
    heads.append(("pdf-pg-appendix", WORDS["appendix"]))
    body.append(BLANK_SLOT.format(key="pdf-appendix-exercises"))
    body.append(
        f'<section class="pdf-part" id="pdf-appendix-exercises" {RECTO} '
        f'style="page: pdf-pg-appendix"><h1>{_probe("pdf-appendix-exercises")}'
        f'{WORDS["appendix"]}</h1>'
        f"<p class='pdf-appendix-note'>{WORDS['appendix_note']}</p></section>"
    )
    appendix: list[tuple[str, str]] = []
    for docname in exercises:
        # each exercise page on a new page, not necessarily a right-hand one
        add(docname, shift=1, toc_sections=False, recto=False)
        title, key, _ = toc.pop()  # listed under the appendix, not as a chapter
        appendix.append((title, key))
    toc.append((WORDS["appendix"], "pdf-appendix-exercises", appendix))
    for docname in back:
        add(docname, toc_sections=False)
    stats["labels"] = {"pdf-contents": WORDS["contents"],
                       "pdf-appendix-exercises": WORDS["appendix"]}
    for title, anchor, sections in toc:
        stats["labels"][anchor] = title
        stats["labels"].update({a: t for t, a in sections})

    assets = _head_assets(html_root / f"{main[1] if len(main) > 1 else main[0]}.html", out)
    title_page = (
        f'<section class="pdf-title" id="pdf-title" style="page: pdf-front">'
        f'<h1>{WORDS["title"]}</h1>'
        f"<p>{WORDS['subtitle']}</p><p>{WORDS['authors']}</p>"
        f"<p>{WORDS['built'].format(date=time.strftime('%Y-%m-%d'))}</p>"
        "</section>"
    )
    document = (
        f'<!DOCTYPE html><html lang="{WORDS["lang"]}" data-theme="light" data-mode="light">'
        f'<head><meta charset="utf-8"><title>{WORDS["title"]}</title>{assets}'
        + "".join(f"<style>{css}</style>" for css in styles)
        + f"<style>{PRINT_CSS}\n{page_css(heads, WORDS['lang'])}</style></head>"
        f"<body>{title_page}{BLANK_SLOT.format(key='pdf-contents')}"
        f"{_toc(toc)}"
        f"{''.join(body)}</body></html>"
    )
    return document, stats


def print_pdf(document: Path, target: Path) -> None:
    """Print ``document`` to ``target``: A4 and margins from its ``@page`` rules, whose margin
    boxes carry the running heads and folios (Chromium's header and footer templates cannot
    change with the chapter)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(color_scheme="light")
        page = context.new_page()
        page.set_default_timeout(PRINT_TIMEOUT_MS)
        page.goto(document.resolve().as_uri(), timeout=PRINT_TIMEOUT_MS)
        wait_until_rendered(page)
        page.emulate_media(media="print")
        page.pdf(
            path=str(target),
            format="A4",
            print_background=True,
            display_header_footer=False,
            margin={"top": "18mm", "bottom": "20mm", "left": "17mm", "right": "17mm"},
            outline=True,
            tagged=True,
            prefer_css_page_size=True,
        )
        browser.close()


def _pdf_text(value: str) -> bytes:
    """A PDF text string: UTF-16BE with its byte-order mark, in hex."""
    return b"<FEFF" + value.encode("utf-16-be").hex().upper().encode() + b">"


def set_metadata(pdf: Path, info: dict[str, str]) -> None:
    """Add ``info`` (Title, Author, Subject, Keywords …) to the PDF's document information by an
    incremental update (PDF 1.7 §7.5.6): the Info dictionary is written again, with Chromium's
    own entries (Creator, Producer, dates) kept, behind the unchanged file. Chromium writes only
    the title; the language is the catalogue's /Lang, from the document's ``lang``."""
    data = pdf.read_bytes()
    startxref = int(re.findall(rb"startxref\s+(\d+)", data)[-1])
    trailer = data[data.rindex(b"trailer"):]
    size = int(re.search(rb"/Size (\d+)", trailer)[1])
    root = re.search(rb"/Root (\d+ \d+ R)", trailer)[1]
    ident = re.search(rb"/ID\s*(\[[^\]]*\])", trailer)
    old = re.search(rb"/Info (\d+) 0 R", trailer)
    kept = b""
    number = size
    if old is not None:
        number = int(old[1])
        match = re.search(rb"(?<![0-9])" + old[1] + rb" 0 obj\s*<<(.*?)>>\s*endobj", data, re.S)
        if match:  # keep every entry but the ones replaced
            body = match[1]
            for key in info:
                body = re.sub(rb"/" + key.encode() + rb"\s*(\((?:[^()\\]|\\.)*\)|<[^>]*>)", b"", body)
            kept = body.strip()
    entries = b" ".join(b"/" + key.encode() + b" " + _pdf_text(value) for key, value in info.items())
    obj = b"%d 0 obj\n<< %s %s >>\nendobj\n" % (number, entries, kept)
    offset = len(data) + (0 if data.endswith(b"\n") else 1)
    update = (b"" if data.endswith(b"\n") else b"\n") + obj
    xref = b"xref\n%d 1\n%010d 00000 n \n" % (number, offset)
    new_size = max(size, number + 1)
    tail = b"trailer\n<< /Size %d /Root %s /Info %d 0 R /Prev %d%s >>\nstartxref\n%d\n%%%%EOF\n" % (
        new_size, root, number, startxref, (b" /ID " + ident[1]) if ident else b"",
        offset + len(obj))
    pdf.write_bytes(data + update + xref + tail)


def print_book(source: Path, document: str, target: Path,
               labels: dict[str, str]) -> dict[str, int]:
    """The two prints (see "page numbers" above); returns the final page of each contents
    entry, checked against the second print: each part's title (``titles``, by anchor) on the
    page the contents gives it, each on a right-hand page."""
    first = target.with_name(target.stem + "-first-print.pdf")
    source.write_text(document, encoding="utf-8")
    print_pdf(source, first)
    document, numbers = lay_out(document, probe_pages(first, labels))
    first_pages = _page_count(first)
    first.unlink()
    source.write_text(document, encoding="utf-8")
    print_pdf(source, target)
    blanks = document.count('<div class="pdf-blank"></div>')
    if _page_count(target) != first_pages + blanks:
        raise SystemExit(f"{target}: the second print has {_page_count(target)} pages, "
                         f"expected {first_pages} + {blanks} blank: the layout moved")
    text = _page_bodies(target)
    wrong = [f"{label!r} not on page {numbers[anchor]}" for anchor, label in labels.items()
             if not _label_on(label, text[numbers[anchor] - 1])]
    if wrong:
        raise SystemExit(f"{target}: the contents' page numbers are wrong: {wrong[:5]}")
    return numbers


def _page_count(pdf: Path) -> int:
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    return int(re.search(r"^Pages:\s+(\d+)", info, re.M)[1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "pdf")
    parser.add_argument("--lang", choices=sorted(EDITIONS), default="en",
                        help="the edition: en (_build/html) or zh (_build/html/zh)")
    args = parser.parse_args(argv)
    global WORDS
    WORDS = EDITIONS[args.lang]
    if args.lang != "en" and args.html == ROOT / "_build" / "html":
        args.html = args.html / args.lang
    if not (args.html / "index.html").exists():
        print(f"no built book in {args.html}: run `make book` first", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    document, stats = assemble(args.html, args.out)
    source = args.out / ("book.html" if args.lang == "en" else f"book-{args.lang}.html")
    assembled = time.perf_counter() - start
    target = args.out / WORDS["pdf"]
    numbers = print_book(source, document, target, stats["labels"])
    set_metadata(target, {"Title": WORDS["title"], "Author": WORDS["authors"],
                          "Subject": WORDS["subject"], "Keywords": WORDS["keywords"]})
    shutil.copyfile(target, args.html / WORDS["pdf"])
    total = time.perf_counter() - start
    size = target.stat().st_size / 2**20
    print(
        f"{target}: {size:.1f} MiB, {_page_count(target)} pages from {stats['pages']} HTML "
        f"pages ({stats['players']} players as frame strips), {len(numbers)} contents entries "
        f"numbered; assembled in {assembled:.1f} s, printed twice in {total - assembled:.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
