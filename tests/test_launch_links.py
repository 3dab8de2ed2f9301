"""Every page's Colab and Binder links open that page's own notebook, in the configured repository
and branch (``_config.yml``): a chapter page opens ``book/NN_slug.ipynb``; an exercise page opens
the reader's copy ``exercises/NN_slug.ipynb`` (never the solution, never the generated ``.md``), in
its text and in the launch menu. Pages without a notebook launch nothing. The Chinese edition
(``_build/html/zh/``) opens the Chinese notebooks: ``zh/book/NN_slug.ipynb`` and
``zh/exercises/NN_slug.ipynb`` (``tools/zh_book.py``).

The first test reads the built HTML (``book`` marker, the session's build); the second the
generated exercise pages' markdown, without a build.
"""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from setup_cell import repository  # noqa: E402
from toc import source_of, toc_docnames  # noqa: E402

CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
LAUNCH = CONFIG.get("launch_buttons") or {}
COLAB = str(LAUNCH.get("colab_url", "https://colab.research.google.com")).rstrip("/")
BINDER = str(LAUNCH.get("binderhub_url", "https://mybinder.org")).rstrip("/")


def _configured() -> tuple[str, str]:
    url, branch = repository()
    return re.sub(r"^https://github\.com/", "", url).strip("/"), branch


def parse_launch(url: str) -> tuple[str, str, str, str] | None:
    """``(service, "org/repo", branch, path)`` of a Colab or Binder launch URL, else ``None``."""
    if url.startswith(COLAB + "/"):
        match = re.fullmatch(r"/github/([^/]+/[^/]+)/blob/([^/]+)/(.+)", urlsplit(url).path)
        return ("colab", match[1], unquote(match[2]), unquote(match[3])) if match else ("colab", "", "", url)
    if url.startswith(BINDER + "/"):
        parts = urlsplit(url)
        match = re.fullmatch(r"/v2/gh/([^/]+/[^/]+)/([^/]+)", parts.path)
        query = parse_qs(parts.query)
        if "labpath" in query:
            path = query["labpath"][0]
        elif "urlpath" in query:
            path = re.sub(r"^(lab/)?tree/", "", query["urlpath"][0])
        else:
            path = ""
        return ("binder", match[1], unquote(match[2]), path) if match else ("binder", "", "", url)
    return None


EDITIONS = {"en": "", "zh": "zh/"}  # edition: its notebooks' folder in the repository


def expected_notebook(docname: str, edition: str = "en") -> str | None:
    """The notebook a page launches: its own source notebook, the reader's copy for an exercise
    page, nothing for a markdown page; in the Chinese edition, their copies under ``zh/``."""
    prefix = EDITIONS[edition]
    match = re.fullmatch(r"book/exercises/(\d\d_\w+)", docname)
    if match:
        return f"{prefix}exercises/{match[1]}.ipynb"
    source = source_of(docname)
    if source is not None and source.suffix == ".ipynb":
        return prefix + str(source.relative_to(ROOT))
    return None


class _Hrefs(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.hrefs.append(href)


def launch_links_of(html: Path) -> list[tuple[str, str, str, str]]:
    parser = _Hrefs()
    parser.feed(html.read_text(encoding="utf-8"))
    return [parsed for href in parser.hrefs if (parsed := parse_launch(href))]


def check_page(docname: str, links: list[tuple[str, str, str, str]], edition: str = "en") -> list[str]:
    """The problems of one page's launch links (empty when they are right)."""
    repo, branch = _configured()
    expected = expected_notebook(docname, edition)
    if expected is None:
        return [f"{docname}: a page without a notebook launches {link}" for link in links]
    problems = []
    for service in ("colab", "binder"):
        if not any(link[0] == service for link in links):
            problems.append(f"{docname}: no {service} launch link")
    for service, link_repo, link_branch, path in links:
        if (link_repo, link_branch, path) != (repo, branch, expected):
            problems.append(
                f"{docname}: {service} opens {link_repo}@{link_branch}:{path}, "
                f"expected {repo}@{branch}:{expected}"
            )
    if not (ROOT / expected).exists():
        problems.append(f"{docname}: the notebook {expected} does not exist")
    return problems


def test_parse_launch_understands_both_services():
    repo, branch = _configured()
    assert parse_launch(f"{COLAB}/github/{repo}/blob/{branch}/book/01_x.ipynb") == (
        "colab", repo, branch, "book/01_x.ipynb",
    )  # fmt: skip
    assert (
        parse_launch(f"{BINDER}/v2/gh/{repo}/{branch}?urlpath=tree/book/01_x.ipynb")[3] == "book/01_x.ipynb"
    )
    assert (
        parse_launch(f"{BINDER}/v2/gh/{repo}/{branch}?labpath=exercises%2F01_x.ipynb")[3]
        == "exercises/01_x.ipynb"
    )
    assert parse_launch("https://example.org/") is None


def test_check_page_catches_a_solution_or_markdown_launch():
    repo, branch = _configured()
    wrong = [
        ("colab", repo, branch, "solutions/02_soft_dictionary.ipynb"),
        ("binder", repo, branch, "book/exercises/02_soft_dictionary.md"),
    ]
    problems = check_page("book/exercises/02_soft_dictionary", wrong)
    assert len(problems) == 2 and all("expected" in problem for problem in problems)
    assert check_page("book/exercises/02_soft_dictionary", [])[0].endswith("no colab launch link")
    english = [("colab", repo, branch, "book/05_masks.ipynb")]
    assert "expected" in " ".join(check_page("book/05_masks", english, edition="zh"))


def test_generated_exercise_pages_launch_the_readers_copy():
    pages = sorted((ROOT / "book" / "exercises").glob("[0-9][0-9]_*.md"))
    assert pages
    problems = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        links = [
            parsed for url in re.findall(r"\]\((https?://[^)\s]+)\)", text) if (parsed := parse_launch(url))
        ]
        problems += check_page(f"book/exercises/{page.stem}", links)
    assert not problems, "\n".join(problems)


@pytest.mark.book
@pytest.mark.parametrize("edition", EDITIONS)
def test_every_built_page_launches_its_own_notebook(book_html: Path, zh_html: Path, edition: str):
    html = zh_html if edition == "zh" else book_html
    problems = []
    for docname in toc_docnames():
        page = html / f"{docname}.html"
        if not page.exists():
            problems.append(f"{edition}: {docname}.html was not built")
            continue
        problems += check_page(docname, launch_links_of(page), edition)
        menu = 'class="dropdown dropdown-launch-buttons"' in page.read_text(encoding="utf-8")
        if expected_notebook(docname, edition) and not menu:
            problems.append(f"{docname}: no launch menu (the rocket) in the page header")
    assert not problems, "\n".join(problems)
