"""Shared pytest fixtures.

`built_book` builds the whole book once per test session, exactly as `make book` does
(`jupyter-book build . -W --keep-going`: every notebook executed, cached by jupyter-cache; any cell
error or Sphinx warning fails), then the Chinese edition into `_build/html/zh/`
(`tools/zh_book.py build`, which executes nothing) and the PDF. Tests marked `book` use it.

For iterating on the page tests only, ``BOOK_PREBUILT=1`` uses the `_build/` already there (both
editions and the PDFs, as the last `make book` or test run left them) and builds nothing; the
build's own tests are then not meaningful, and `make test` never sets it.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import subprocess
import sys
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"
JUPYTER_BOOK = Path(sys.executable).parent / "jupyter-book"
PDF_TOOL = ROOT / "tools" / "pdf_book.py"
ZH_TOOL = ROOT / "tools" / "zh_book.py"
_PDF_BUILD: list[subprocess.CompletedProcess] = []
_ZH_BUILD: list[subprocess.CompletedProcess] = []
_ZH_PDF_BUILD: list[subprocess.CompletedProcess] = []


BOOK_FIXTURES = {"built_book", "book_html", "zh_html", "zh_pdf", "built_pdf"}
CHAPTERS = sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))
VISIBLE_RUN_JOBS = int(os.environ.get("VISIBLE_RUN_JOBS", "2"))  # stripped chapters run at once
# The stripped-cell runs of tests/test_visible_code.py, started by `built_book` as soon as the
# English build has filled the execution cache, so they run while the Chinese edition and the
# PDFs are built and the browser tests run (a chapter path -> its future).
STRIPPED_RUNS: dict[Path, Future] = {}
_WANTS_STRIPPED_RUNS: list[bool] = []


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that needs the built book is marked ``book``, whether or not it says so:
    `make test` runs ``-m book`` and ``-m "not book"`` as two processes side by side, and only
    the first may build the book (two builds in one tree would corrupt each other)."""
    for item in items:
        if BOOK_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.book)
        if "stripped_runs" in getattr(item, "fixturenames", ()):
            _WANTS_STRIPPED_RUNS[:] = [True]


def start_stripped_runs() -> dict[Path, Future]:
    """Start every chapter's stripped run (tools/visible_run.py), ``VISIBLE_RUN_JOBS`` at a time,
    each in its own process and kernel, against the build's jupyter-cache (it holds every
    notebook the build executed, even when a warning failed the build). Started once."""
    if not STRIPPED_RUNS:
        sys.path.insert(0, str(ROOT / "tools"))
        import visible_run

        pool = ProcessPoolExecutor(max_workers=VISIBLE_RUN_JOBS,
                                   mp_context=multiprocessing.get_context("spawn"))
        atexit.register(pool.shutdown, cancel_futures=True)
        cache = ROOT / "_build" / ".jupyter_cache"
        STRIPPED_RUNS.update({path: pool.submit(visible_run.run, path, cache) for path in CHAPTERS})
    return STRIPPED_RUNS


@dataclass(frozen=True)
class BookBuild:
    returncode: int
    log: str
    html: Path

    def failure_summary(self, lines: int = 60) -> str:
        """The warnings/errors of a failed build, or its last lines."""
        log_lines = self.log.splitlines()
        flagged = [line for line in log_lines if "WARNING" in line or "ERROR" in line]
        return "\n".join((flagged or log_lines)[-lines:])


def build_book(root: Path = ROOT, *extra: str) -> BookBuild:
    """Run the book build in `root` and return its exit code and log."""
    result = subprocess.run(
        [str(JUPYTER_BOOK), "build", str(root), "-W", "--keep-going", *extra],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    return BookBuild(result.returncode, result.stdout + result.stderr, root / "_build" / "html")


@pytest.fixture(scope="session")
def built_book() -> BookBuild:
    """The book as `make book` builds it: the HTML, then the PDF edition printed from it (the
    HTML's download menu links to the PDF, so the link check needs it too)."""
    if os.environ.get("BOOK_PREBUILT") == "1":
        done = subprocess.CompletedProcess([], 0, "", "")
        _ZH_BUILD.append(done), _PDF_BUILD.append(done), _ZH_PDF_BUILD.append(done)
        return BookBuild(0, "BOOK_PREBUILT=1: the existing _build/", HTML)
    build = build_book()
    if _WANTS_STRIPPED_RUNS:
        start_stripped_runs()
    if build.returncode == 0:
        _ZH_BUILD.append(
            subprocess.run([sys.executable, str(ZH_TOOL), "build"], cwd=ROOT, capture_output=True,
                           text=True, check=False)
        )
        _PDF_BUILD.append(
            subprocess.run([sys.executable, str(PDF_TOOL)], cwd=ROOT, capture_output=True,
                           text=True, check=False)
        )
        _ZH_PDF_BUILD.append(
            subprocess.run([sys.executable, str(PDF_TOOL), "--lang", "zh"], cwd=ROOT,
                           capture_output=True, text=True, check=False)
        )
    return build


@pytest.fixture(scope="session")
def book_html(built_book: BookBuild) -> Path:
    """The built HTML folder; fails (not skips) the test if the build failed."""
    if built_book.returncode != 0:
        pytest.fail(f"the book build failed:\n{built_book.failure_summary()}", pytrace=False)
    return built_book.html


@pytest.fixture(scope="session")
def zh_html(book_html: Path) -> Path:
    """The Chinese edition's HTML (`_build/html/zh/`), built by `built_book` after the English."""
    result = _ZH_BUILD[-1]
    if result.returncode != 0:
        pytest.fail(f"the Chinese edition's build failed:\n{(result.stdout + result.stderr)[-3000:]}",
                    pytrace=False)
    return book_html / "zh"


@pytest.fixture(scope="session")
def zh_pdf(zh_html: Path) -> Path:
    """The Chinese PDF edition (`tools/pdf_book.py --lang zh`), printed after the English PDF."""
    result = _ZH_PDF_BUILD[-1]
    if result.returncode != 0:
        pytest.fail(f"the Chinese PDF build failed:\n{(result.stdout + result.stderr)[-3000:]}",
                    pytrace=False)
    return ROOT / "_build" / "pdf" / "attention-executed-zh.pdf"


@pytest.fixture(scope="session")
def built_pdf(book_html: Path) -> Path:
    """The PDF edition (`tools/pdf_book.py`), printed by `built_book` right after the HTML."""
    result = _PDF_BUILD[-1]
    if result.returncode != 0:
        pytest.fail(f"the PDF build failed:\n{(result.stdout + result.stderr)[-3000:]}", pytrace=False)
    return ROOT / "_build" / "pdf" / "attention-executed.pdf"
