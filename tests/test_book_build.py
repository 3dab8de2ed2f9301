"""The book builds, every toc page is in the HTML, every internal link and anchor resolves, the
HTML needs no network, and a failing cell fails the build.

The build itself runs once per session (`built_book` in conftest.py), exactly as `make book`.
"""

from __future__ import annotations

import re
import shutil
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
import pytest
from conftest import ROOT, BookBuild, build_book

sys.path.insert(0, str(ROOT / "tools"))
from setup_cell import make_setup_cell  # noqa: E402
from toc import source_of, toc_docnames  # noqa: E402

pytestmark = pytest.mark.book


class _Links(HTMLParser):
    """Collects ids and the href/src targets of one HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.targets: list[tuple[str, str]] = []  # (tag, url)
        self.remote_assets: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for key in ("id", "name"):
            if values.get(key) and (key == "id" or tag == "a"):
                self.ids.add(values[key])
        url = values.get("href") if tag in ("a", "link") else values.get("src")
        if not url:
            return
        self.targets.append((tag, url))
        remote = url.startswith(("http:", "https:", "//"))
        if remote and (tag in ("script", "img", "iframe") or (tag == "link" and _is_asset(values))):
            self.remote_assets.append(f"<{tag}> {url}")


def _is_asset(attrs: dict[str, str | None]) -> bool:
    return (attrs.get("rel") or "") in ("stylesheet", "preload", "icon", "modulepreload")


def _parse(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def _pages(html: Path) -> list[Path]:
    return sorted(path for path in html.rglob("*.html") if "_static" not in path.parts)


def test_build_succeeds_without_warnings(built_book: BookBuild):
    assert built_book.returncode == 0, f"book build failed:\n{built_book.failure_summary()}"
    assert (built_book.html / "index.html").exists()


def test_every_toc_page_is_built(book_html: Path):
    missing = [name for name in toc_docnames() if not (book_html / f"{name}.html").exists()]
    assert not missing, f"pages missing from _build/html: {missing}"


def test_every_notebook_executed_successfully(book_html: Path):
    status = (book_html / "book" / "status.html").read_text(encoding="utf-8")
    assert "❌" not in status, "the execution table reports a failed notebook"
    for name in toc_docnames():
        source = source_of(name)
        if source is not None and source.suffix == ".ipynb":
            assert name in status, f"{name} is missing from the execution table"


def test_internal_links_and_anchors_resolve(book_html: Path):
    parsed = {path: _parse(path) for path in _pages(book_html)}
    broken = []
    for page, links in parsed.items():
        for tag, url in links.targets:
            parts = urlsplit(url)
            if parts.scheme or url.startswith(("//", "mailto:", "javascript:", "data:")):
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(book_html)}: <{tag}> {url} (no such file)")
                continue
            fragment = unquote(parts.fragment)
            if fragment and target.suffix == ".html" and tag == "a":
                ids = parsed[target].ids if target in parsed else _parse(target).ids
                if fragment not in ids:
                    broken.append(f"{page.relative_to(book_html)}: {url} (no anchor #{fragment})")
    assert not broken, "broken internal links:\n" + "\n".join(broken[:50])


def test_pages_load_nothing_from_the_network(book_html: Path):
    remote = []
    for page in _pages(book_html):
        remote += [f"{page.relative_to(book_html)}: {asset}" for asset in _parse(page).remote_assets]
    assert not remote, "pages load assets from the network:\n" + "\n".join(remote[:30])


def test_offline_math_and_widget_assets_are_served(book_html: Path):
    """Math is typeset at build time (tools/tex_render.js) with the pinned MathJax fonts served
    locally; the MathJax runtime and the widget manager stay available for pages with widgets."""
    static = book_html / "_static"
    assert (static / "mathjax" / "tex-chtml.js").stat().st_size > 500_000
    assert (static / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").is_dir()
    assert (static / "widgets" / "embed.js").stat().st_size > 500_000
    intro = (book_html / "book" / "intro.html").read_text(encoding="utf-8")
    assert "<mjx-container" in intro and "<mjx-assistive-mml" in intro
    assert re.search(r'url\("\.\./_static/mathjax/output/chtml/fonts/woff-v2/MathJax_', intro)
    assert "mathjax/tex-chtml.js" not in intro, "MathJax runtime loaded although math is prerendered"
    assert "cdn.jsdelivr" not in intro and "cdnjs" not in intro


# --- the build fails loudly -------------------------------------------------------------------

FAILING_BOOK_FILES = ("_config.yml", "references.bib")


@pytest.fixture(scope="module")
def failing_book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A two-page copy of the book's configuration whose notebook raises in one cell."""
    root = tmp_path_factory.mktemp("failing_book")
    for name in FAILING_BOOK_FILES:
        shutil.copy(ROOT / name, root / name)
    for folder in ("vendor", "assets", "tools"):
        (root / folder).symlink_to(ROOT / folder)
    (root / "_toc.yml").write_text(
        "format: jb-book\nroot: intro\nchapters:\n  - file: broken\n", encoding="utf-8"
    )
    (root / "intro.md").write_text("# Intro\n\nA page.\n", encoding="utf-8")
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# Broken\n\nThe next cell raises."),
        make_setup_cell(),
        nbformat.v4.new_code_cell("raise RuntimeError('deliberately failing cell')"),
    ]
    nbformat.write(notebook, root / "broken.ipynb")
    return root


def test_a_failing_cell_fails_the_build(failing_book: Path):
    result = build_book(failing_book)
    assert result.returncode != 0, "a notebook cell raised but the build succeeded"
    assert "deliberately failing cell" in result.log
