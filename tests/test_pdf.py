"""The PDF edition (``make pdf`` / ``tools/pdf_book.py``) is a book a reader can use.

The PDF is built once per session from the executed HTML (``built_pdf`` in conftest.py, right
after the book build) and read back with Debian's poppler-utils, so every check looks at what a
reader gets, not at the HTML it came from: no TeX left in the text; every chapter title and
figure caption present, in order; every font embedded, a CJK font among them; an outline with
every chapter and section; every word inside the page's margins; no web chrome; internal links;
page count and size within budget; and that it reads as a printed book: contents with the right
page numbers, running heads with the part's title, folios, no head on the title page, chapters
on right-hand pages, no box title left at a page's foot, document metadata, an appendix that
says what it holds. Four pages (contents, a chapter opening, the page with the biggest figure,
the appendix's opening) are rendered to PNG (``_build/pdf/page-*.png``) for a person to look at.
"""

from __future__ import annotations

import re
import subprocess
import unicodedata
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from conftest import ROOT

pytestmark = pytest.mark.book

PAGES_BUDGET = (120, 450)
SIZE_BUDGET_MIB = 40
MARGIN_PT = 17 / 25.4 * 72  # the 17 mm side margins of tools/pdf_book.py
TEX = re.compile(
    r"\\\(|\\\)|\\\[|\\\]|\$\$|\\(?:frac|sqrt|sum|mathbf|mathrm|mathbb|operatorname|left|right|"
    r"begin|end|text|top|cdot|times|in|le|ge|quad|exp|log|softmax)\b"
)
CHROME = ("Show code cell", "Hide code cell", "Click to show", "Solution to Exercise", "Launch")


def _run(*command: str) -> str:
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode == 0, f"{' '.join(command)} failed:\n{result.stderr[-2000:]}"
    return result.stdout


def _norm(text: str) -> str:
    """Whitespace collapsed, compatibility forms folded, hyphens dropped (pdftotext joins a
    hyphenated word, and prints a heading's hyphen inconsistently)."""
    text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"[\u00ad\u2010\u2011-]", "", text)
    return " ".join(text.split())


@pytest.fixture(scope="module")
def pdf(built_pdf: Path) -> Path:
    return built_pdf


@pytest.fixture(scope="module")
def source(pdf: Path) -> BeautifulSoup:
    """The assembled print document the PDF was printed from."""
    return BeautifulSoup((pdf.parent / "book.html").read_text(encoding="utf-8"), "html.parser")


@pytest.fixture(scope="module")
def text(pdf: Path) -> str:
    return _run("pdftotext", "-enc", "UTF-8", str(pdf), "-")


def test_page_count_and_size_within_budget(pdf: Path):
    info = _run("pdfinfo", str(pdf))
    pages = int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))
    size = pdf.stat().st_size / 2**20
    assert PAGES_BUDGET[0] <= pages <= PAGES_BUDGET[1], f"{pages} pages, budget {PAGES_BUDGET}"
    assert size <= SIZE_BUDGET_MIB, f"{size:.1f} MiB, budget {SIZE_BUDGET_MIB} MiB"
    assert "Tagged:          yes" in info


def test_no_tex_left_in_the_text(text: str, source: BeautifulSoup):
    """Rendered math only: TeX may appear in code (a matplotlib label), never in prose."""
    code = _norm(" ".join(block.get_text() for block in source.find_all("pre"))).replace(" ", "")
    leftovers = [
        line.strip()
        for line in text.splitlines()
        if TEX.search(line) and line.strip().replace(" ", "") not in code
    ]
    assert not leftovers, "raw TeX in the PDF's text:\n" + "\n".join(leftovers[:20])


def test_chapter_titles_and_captions_in_order(text: str, source: BeautifulSoup):
    expected: list[str] = []
    for section in source.select("section.pdf-doc"):
        heading = section.find(["h1", "h2"])
        if heading is not None and not heading.find(class_="math"):
            expected.append(_norm(heading.get_text(" ", strip=True)))
        for caption in section.find_all("figcaption"):
            number = caption.find(class_="caption-number")
            words: list[str] = []
            for piece in caption.find(class_="caption-text") or []:
                if getattr(piece, "get", None) and "math" in (piece.get("class") or []):
                    break
                words.append(piece.get_text() if hasattr(piece, "get_text") else str(piece))
            lead = _norm("".join(words))[:40].rsplit(" ", 1)[0]
            if number is not None:
                expected.append(_norm(number.get_text()))
            if len(lead) >= 8:
                expected.append(lead)
    assert len(expected) > 40, "too few titles and captions found in the print document"
    flat = _norm(text)
    position = 0
    for item in expected:
        found = flat.find(item, position)
        assert found >= 0, f"not found (in order) in the PDF text: {item!r}"
        position = found + len(item)


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_every_title_carries_its_math(edition: str, request):
    """Each chapter's and exercise page's title reads in the PDF as the HTML titles it (its
    <title>, where tools/book_html.py writes math as Unicode text: "4. Why divide by √dₖ"): as
    whole lines of the contents and of the page that opens it, and as a bookmark (the √ of chapter 4
    used to be lost: "4. Why divide by dk")."""
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    from pdf_book import reading_order

    pdf = request.getfixturevalue("zh_pdf" if edition == "zh" else "built_pdf")
    html = request.getfixturevalue("zh_html" if edition == "zh" else "book_html")
    main, exercises, _ = reading_order()
    titles = {}
    for docname in main + exercises:
        soup = BeautifulSoup((html / f"{docname}.html").read_text(encoding="utf-8"), "html.parser")
        titles[docname] = _norm(soup.title.get_text().rsplit(" — ", 1)[0])
    assert "√d" in titles["book/04_scaling"], titles["book/04_scaling"]  # NFKC: ₖ reads k
    lines = [_norm(line) for line in _run("pdftotext", "-enc", "UTF-8", str(pdf), "-").splitlines()]
    lines = [line for line in lines if line]
    # a line, or a heading wrapped over two or three lines
    spans = [" ".join(lines[i:i + n]) for n in (1, 2, 3) for i in range(len(lines))]
    # bookmarks compared without spaces (see test_outline_lists_every_chapter_and_section)
    bookmarks = {_norm(title).replace(" ", "") for _, title in _outline(pdf.read_bytes())}
    wrong = []
    for docname, title in titles.items():
        found, marked = spans.count(title), title.replace(" ", "") in bookmarks
        if edition == "zh":  # pdftotext sets a Chinese heading's number on a line of its own
            found += spans.count(re.sub(r"^\d+\. ", "", title))
        if found < 2 or not marked:
            wrong.append(f"{docname}: {title!r} is {found} line(s) of the text"
                         f"{'' if marked else ', no bookmark'}")
    assert not wrong, f"{edition} PDF: titles not as in the HTML:\n" + "\n".join(wrong)


def test_every_font_is_embedded_and_cjk_is_real(pdf: Path, text: str):
    rows = _run("pdffonts", str(pdf)).splitlines()[2:]
    not_embedded = [row for row in rows if row.split()[-5] != "yes"]
    assert rows and not not_embedded, "fonts not embedded:\n" + "\n".join(not_embedded)
    assert any(re.search(r"CJK|WenQuanYi|MicroHei|Noto Sans SC", row) for row in rows), (
        "no CJK font in the PDF: the glossary's Chinese terms would be missing glyphs"
    )
    assert "注意力" in text, "the glossary's Chinese terms are not in the PDF text"


PDF_OBJECT = re.compile(rb"(\d+) 0 obj\s*(<<.*?>>)\s*endobj", re.S)


def _pdf_string(raw: bytes) -> str:
    raw = raw.strip()
    if raw.startswith(b"<"):
        data = bytes.fromhex(raw[1:-1].decode())
        return data[2:].decode("utf-16-be") if data[:2] == b"\xfe\xff" else data.decode("latin-1")
    body = raw[1:-1]
    body = re.sub(rb"\\([()\\])", rb"\1", body)
    if body[:2] == b"\xfe\xff":
        return body[2:].decode("utf-16-be")
    return body.decode("latin-1")


def _outline(data: bytes) -> list[tuple[int, str]]:
    """(depth, title) of every bookmark, in order (Skia writes PDF 1.4 without object streams)."""
    objects = {int(m[1]): m[2] for m in PDF_OBJECT.finditer(data)}

    def ref(d, key):
        m = re.search(rb"/" + key + rb" (\d+) 0 R", d)
        return int(m[1]) if m else None

    root = next(ref(d, b"Outlines") for d in objects.values() if b"/Type /Catalog" in d)
    items = []

    def walk(number, depth):
        while number is not None:
            d = objects[number]
            t = re.search(rb"/Title (\((?:[^()\\]|\\.)*\)|<[0-9A-Fa-f]*>)", d, re.S)
            items.append((depth, _pdf_string(t[1]) if t else ""))
            walk(ref(d, b"First"), depth + 1)
            number = ref(d, b"Next")

    walk(ref(objects[root], b"First"), 0)
    return items


def test_outline_lists_every_chapter_and_section(pdf: Path, source: BeautifulSoup):
    outline = _outline(pdf.read_bytes())
    # compared without spaces: Chromium drops the space where a heading's source breaks a line
    bookmarks = {_norm(title).replace(" ", "") for _, title in outline}
    titles = [_norm(a.get_text(" ", strip=True)) for a in source.select("#pdf-contents a")]
    assert len(titles) > 60
    missing = [title for title in titles if title.replace(" ", "") not in bookmarks]
    assert not missing, f"{len(missing)} contents entries have no bookmark: {missing[:10]}"
    chapters = [title for depth, title in outline if depth == 0 and re.match(r"\d+\. ", title)]
    assert [int(title.split(".")[0]) for title in chapters] == list(range(1, 13)), chapters


def test_every_word_inside_the_margins(pdf: Path):
    bbox = _run("pdftotext", "-bbox", str(pdf), "-")
    outside = []
    for number, page in enumerate(re.finditer(r'<page width="([\d.]+)"[^>]*>(.*?)</page>', bbox, re.S)):
        width = float(page.group(1))
        for word in re.finditer(
            r'<word xMin="([\d.]+)"[^>]*xMax="([\d.]+)"[^>]*>([^<]*)</word>', page.group(2)
        ):
            x_min, x_max = float(word.group(1)), float(word.group(2))
            if x_max > width - MARGIN_PT + 2 or x_min < MARGIN_PT - 2:
                outside.append(f"page {number + 1}: {word.group(3)!r} at x = {x_min:.0f}–{x_max:.0f}")
    assert not outside, f"{len(outside)} words run past the margins:\n" + "\n".join(outside[:15])


def test_no_web_chrome_and_no_solutions(text: str, source: BeautifulSoup):
    found = [phrase for phrase in CHROME if phrase in text]
    assert not found, f"HTML chrome in the PDF: {found}"
    assert not source.select("div.solution, button, script:not([src]) ~ .animation, input[type=range]")


def test_internal_links_resolve_inside_the_document(pdf: Path, source: BeautifulSoup):
    ids = {element["id"] for element in source.find_all(id=True)}
    internal = [a["href"][1:] for a in source.find_all("a", href=True) if a["href"].startswith("#")]
    dangling = sorted({target for target in internal if target not in ids})
    assert len(internal) > 200, "cross-references, citations and terms should link inside the PDF"
    assert not dangling, f"links to no anchor: {dangling[:10]}"
    assert not [
        a["href"]
        for a in source.find_all("a", href=True)
        if ".html" in a["href"] and not a["href"].startswith("http")
    ]
    assert pdf.read_bytes().count(b"/Dest") > 200, "the PDF has too few internal links"


def test_players_become_frame_strips(source: BeautifulSoup):
    strips = source.select("div.pdf-frames")
    assert strips, "no scrubbable player was turned into frames"
    assert all(len(strip.select("img")) >= 2 for strip in strips)


def _biggest_figure_page(pdf: Path) -> int:
    """The page whose largest image covers the most of it (``pdfimages -list``: pixels / ppi)."""
    best, page_of_best = 0.0, 1
    for row in _run("pdfimages", "-list", str(pdf)).splitlines()[2:]:
        cols = row.split()
        if len(cols) < 14 or cols[2] != "image":
            continue
        area = int(cols[3]) / max(float(cols[12]), 1) * int(cols[4]) / max(float(cols[13]), 1)
        if area > best:
            best, page_of_best = area, int(cols[0])
    return page_of_best


def test_four_pages_rendered_for_a_person_to_look_at(pdf: Path, source: BeautifulSoup):
    numbers = _contents_numbers(source)
    pages = {
        "page-contents": numbers["pdf-contents"],
        "page-chapter-2": numbers["book-02_soft_dictionary"],
        "page-big-figure": _biggest_figure_page(pdf),
        "page-appendix": numbers["pdf-appendix-exercises"],
    }
    for name, number in pages.items():
        _run("pdftoppm", "-r", "60", "-png", "-singlefile", "-f", str(number), "-l", str(number),
             str(pdf), str(pdf.parent / name))
        image = pdf.parent / f"{name}.png"
        assert image.stat().st_size > 10_000, f"{image} (page {number}) looks empty"


# --- a printed book ---------------------------------------------------------------------------

HEAD_PT = 18 / 25.4 * 72  # the top margin: the running head lives above it
FOOT_PT = 20 / 25.4 * 72  # the bottom margin: the folio lives below it


def _contents_numbers(source: BeautifulSoup) -> dict[str, int]:
    """{anchor: page} as the contents print them, and the contents' own first page."""
    numbers = {slot["data-target"]: int(slot.get_text()) for slot in source.select(".pdf-toc-page")}
    pdf = ROOT / "_build" / "pdf" / "attention-executed.pdf"
    heading = _norm(source.select_one("#pdf-contents h1").get_text(" ", strip=True))
    pages = _run("pdftotext", "-enc", "UTF-8", "-l", "8", str(pdf), "-").split("\f")
    numbers["pdf-contents"] = next(  # the first page whose text (after its head) opens with it
        number for number, page in enumerate(pages, start=1)
        if [_norm(line) for line in page.splitlines() if line.strip()][1:2] == [heading])
    return numbers


def _pages_words(pdf: Path) -> list[tuple[float, list[tuple[float, float, str]]]]:
    """(page height, [(yMin, yMax, word)]) of every page."""
    bbox = _run("pdftotext", "-bbox", str(pdf), "-")
    pages = []
    for page in re.finditer(r'<page width="[\d.]+" height="([\d.]+)">(.*?)</page>', bbox, re.S):
        words = [(float(m[1]), float(m[2]), html_unescape(m[3])) for m in re.finditer(
            r'<word xMin="[\d.]+" yMin="([\d.]+)" xMax="[\d.]+" yMax="([\d.]+)">([^<]*)</word>',
            page.group(2))]
        pages.append((float(page.group(1)), words))
    return pages


def html_unescape(text: str) -> str:
    import html

    return html.unescape(text)


def _margins(pdf: Path) -> list[tuple[str, str, bool]]:
    """(running head, folio, page has body text) of every page."""
    out = []
    for height, words in _pages_words(pdf):
        # the margin boxes sit in the outer half of the margins (a display formula's glyph
        # may dip a little into the bottom margin)
        head = " ".join(w for y0, y1, w in words if y1 <= HEAD_PT * 0.75)
        foot = " ".join(w for y0, y1, w in words if y1 >= height - FOOT_PT / 2)
        body = any(y1 > HEAD_PT and y0 < height - FOOT_PT for y0, y1, _ in words)
        out.append((head, foot, body))
    return out


@pytest.fixture(scope="module")
def margins(pdf: Path) -> list[tuple[str, str, bool]]:
    return _margins(pdf)


def _parts(source: BeautifulSoup) -> list[tuple[int, str]]:
    """(first page, running head) of each part of the book: the contents' top-level entries and
    the appendix's entries, in page order."""
    numbers = _contents_numbers(source)
    heads = {}
    for slot in source.select("#pdf-contents > ol > li > .pdf-toc-line .pdf-toc-page, "
                              "#pdf-contents li li .pdf-toc-page"):
        anchor = slot["data-target"]
        if anchor.startswith(("book-exercises-", "pdf-", "book-")) and "--" not in anchor:
            heads[anchor] = _norm(slot.find_parent(class_="pdf-toc-line").a.get_text(" ", strip=True))
    heads["pdf-contents"] = _norm(source.select_one("#pdf-contents h1").get_text(" ", strip=True))
    return sorted((numbers[anchor], title) for anchor, title in heads.items())


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_contents_page_numbers_are_the_pages(edition: str, request):
    """Every contents entry's number is the page its heading is printed on (chapters, sections,
    the appendix's exercise pages, glossary, references), and the numbers only grow."""
    pdf = request.getfixturevalue("zh_pdf" if edition == "zh" else "built_pdf")
    name = "book-zh.html" if edition == "zh" else "book.html"
    source = BeautifulSoup((pdf.parent / name).read_text(encoding="utf-8"), "html.parser")
    pages = _run("pdftotext", "-enc", "UTF-8", str(pdf), "-").split("\f")
    squeeze = re.compile(r"\s+")
    entries = [(slot.find_parent(class_="pdf-toc-line").a.get_text(" ", strip=True),
                int(slot.get_text())) for slot in source.select(".pdf-toc-page")]
    assert len(entries) > 60 and all(number > 2 for _, number in entries)
    numbers = [number for _, number in entries]
    assert numbers == sorted(numbers), "the contents' page numbers go backwards"
    def on(title: str, page: str) -> bool:  # a heading's Latin and CJK runs may part lines
        title, page = (squeeze.sub("", unicodedata.normalize("NFKC", t)) for t in (title, page))
        cjk = re.search(r"[^\x00-\u2fff]{4,}$", title)  # a closing CJK run, 4+ characters
        return title[:18] in page or bool(cjk and cjk[0] in page)

    wrong = [f"{title!r} on p. {number}" for title, number in entries
             if not on(title, pages[number - 1])]
    assert not wrong, f"{len(wrong)} contents entries give the wrong page: {wrong[:8]}"
    contents = "".join(pages[numbers[0] - 1:numbers[0] + 3])  # the printed numbers are there
    assert re.search(r"\b" + str(numbers[-1]) + r"\b", "".join(pages[:12])) and contents


def test_chapters_start_on_right_hand_pages(source: BeautifulSoup, margins):
    numbers = _contents_numbers(source)
    starts = {anchor: page for anchor, page in numbers.items()
              if "--" not in anchor and not anchor.startswith("book-exercises-")}
    assert len(starts) >= 16  # contents, chapters 0-12, appendix, glossary, references
    even = {anchor: page for anchor, page in starts.items() if page % 2 == 0}
    assert not even, f"parts starting on a left-hand page: {even}"
    for page in sorted(starts.values()):  # the page before an opening: text, or a blank verso
        head, foot, body = margins[page - 2]
        assert body or (not head and not foot), f"page {page - 1}: a blank page with a head"


def test_folios_and_no_head_on_the_title_page(margins):
    assert margins[0] == ("", "", True), f"the title page has a head or folio: {margins[0]}"
    wrong = []
    for number, (head, foot, body) in enumerate(margins[1:], start=2):
        if not body and not head and not foot:
            continue  # a blank verso
        if foot != str(number):
            wrong.append(f"page {number}: folio {foot!r}")
    assert not wrong, "folios are not the plain page number:\n" + "\n".join(wrong[:10])


def test_running_heads_name_the_part(source: BeautifulSoup, margins):
    """Left-hand pages: the book's title; right-hand pages: the title of the chapter (or the
    contents, appendix page, glossary, references) they belong to."""
    title = _norm(source.select_one("#pdf-title h1").get_text())
    parts = _parts(source)
    wrong = []
    for number, (head, _foot, body) in enumerate(margins, start=1):
        if number == 1 or not body:
            continue
        if number % 2 == 0:
            expected = title
        else:
            expected = [t for first, t in parts if first <= number][-1]
        if _norm(head).replace(" ", "") != expected.replace(" ", ""):
            wrong.append(f"page {number}: head {head!r}, expected {expected!r}")
    assert not wrong, f"{len(wrong)} running heads wrong:\n" + "\n".join(wrong[:10])


def test_no_box_title_at_the_foot_of_a_page(pdf: Path, source: BeautifulSoup):
    titles = {_norm(t.get_text(" ", strip=True))
              for t in source.select("p.admonition-title, p.sidebar-title")}
    assert len(titles) > 10
    stranded = []
    for number, (height, words) in enumerate(_pages_words(pdf), start=1):
        body = [(y0, w) for y0, y1, w in words if y1 > HEAD_PT and y0 < height - FOOT_PT]
        if not body:
            continue
        last_y = max(y0 for y0, _ in body)
        last_line = _norm(" ".join(w for y0, w in body if abs(y0 - last_y) < 2))
        if last_line in titles:
            stranded.append(f"page {number}: {last_line!r}")
    assert not stranded, "box titles left at the foot of a page:\n" + "\n".join(stranded)


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_document_metadata(edition: str, request):
    pdf = request.getfixturevalue("zh_pdf" if edition == "zh" else "built_pdf")
    info = dict(re.findall(r"^(\w+):\s+(.*)$", _run("pdfinfo", str(pdf)), re.M))
    expected_title = "可运行的注意力" if edition == "zh" else "Attention, Executed"
    assert info.get("Title") == expected_title, info
    assert "Attention, Executed" in info.get("Author", ""), info
    assert len(info.get("Subject", "")) > 40 and "Transformer" in info["Subject"], info
    assert "Transformer" in info.get("Keywords", ""), info
    lang = "zh-CN" if edition == "zh" else "en"
    assert f"/Lang ({lang})".encode() in pdf.read_bytes(), "the catalogue has no /Lang"
    _run("pdftotext", "-f", "1", "-l", "1", str(pdf), "-")  # the updated file still reads


def test_title_page_and_appendix_say_what_they_hold(text: str, source: BeautifulSoup):
    flat = _norm(text)
    assert _norm("An interactive textbook on attention and Transformers, in which every number "
                 "is computed by the code beside it") in flat
    note = _norm(source.select_one("#pdf-appendix-exercises").get_text(" ", strip=True))
    assert "worked solutions are not printed" in note and "folded" not in note.split(";")[0]
    assert "worked solutions below are folded" not in flat  # what the HTML's pages say
    assert _norm("The worked solutions are not printed here") in flat


def test_the_book_links_to_the_pdf(pdf: Path):
    html = ROOT / "_build" / "html"
    assert (html / pdf.name).read_bytes() == pdf.read_bytes()
    page = (html / "book" / "05_masks.html").read_text(encoding="utf-8")
    assert f'href="../{pdf.name}"' in page, "the download menu does not offer the book's PDF"
    intro = (html / "book" / "intro.html").read_text(encoding="utf-8")
    assert pdf.name in intro, "chapter 0 does not say where the PDF is"


def _style_width(image) -> float | None:
    match = re.search(r"width:\s*([\d.]+)px", image.get("style", ""))
    return float(match.group(1)) if match else None


def test_figures_are_printed_at_print_resolution(pdf: Path, source: BeautifulSoup):
    """Figures carry twice the pixels they are shown with (about 220 dpi on the page)."""
    from PIL import Image

    checked, coarse = 0, []
    for image in source.find_all("img", src=True):
        shown = _style_width(image)
        if "_images/" not in image["src"] or not shown:
            continue
        with Image.open(pdf.parent / image["src"]) as file:
            checked += 1
            if file.width < 1.9 * shown:
                coarse.append(f"{image['src']}: {file.width} px shown at {shown:.0f} px")
    assert checked > 20, f"only {checked} figures found in the print document"
    assert not coarse, "figures below print resolution:\n" + "\n".join(coarse[:10])


def test_html_pages_serve_figures_at_their_shown_size(book_html: Path):
    """The web pages download a 1x copy on standard screens (srcset), the 2x one elsewhere."""
    from PIL import Image

    page = book_html / "book" / "01_text_to_vectors.html"
    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    figures = [image for image in soup.find_all("img", src=True) if "_images/" in image["src"]]
    assert figures
    for image in figures:
        assert image.get("srcset", "").endswith(" 2x"), f"no 2x candidate: {image}"
        with Image.open(page.parent / image["src"]) as small:
            assert abs(small.width - _style_width(image)) <= 1, image["src"]


def test_every_math_glyph_is_styled(source: BeautifulSoup, pdf: Path):
    """Build-time math draws each character with a CSS rule of its page; the print document
    carries every page's rules, so no equation prints with missing glyphs."""
    css = " ".join(style.get_text() for style in source.find_all("style"))
    used = {
        name
        for element in source.find_all("mjx-c")
        for name in element.get("class", [])
        if name.startswith("mjx-c")
    }
    missing = sorted(name for name in used if f".{name}" not in css)
    assert used, "no typeset math found in the print document"
    assert not missing, f"{len(missing)} math glyphs have no CSS rule: {missing[:10]}"
    fonts = set(re.findall(r'url\("([^"]+\.woff2?)"\)', css))
    lost = sorted(font for font in fonts if not (pdf.parent / font).exists())
    assert fonts and not lost, f"math fonts the print document cannot load: {lost[:5]}"
