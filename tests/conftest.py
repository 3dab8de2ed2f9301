"""Shared pytest fixtures.

`built_book` builds the whole book once per test session, exactly as `make book` does
(`jupyter-book build . -W --keep-going`: every notebook executed, cached by jupyter-cache; any cell
error or Sphinx warning fails), then the Chinese edition into `_build/html/zh/`
(`tools/zh_book.py build`, which executes nothing) and the PDF. Tests marked `book` use it.

For iterating on the page tests only, ``BOOK_PREBUILT=1`` uses the `_build/` already there (both
editions and the PDFs, as the last `make book` or test run left them) and builds nothing; the
build's own tests are then not meaningful, and `make test` never sets it.

``BOOK_SHARD=i/n`` splits the book's tests over n pytest processes (`make test` runs two): shard 0
builds the book and runs the build's own tests and the stripped-cell runs; every shard runs its
share (every n-th) of the other book tests. A shard other than 0 builds nothing: it waits for
shard 0's build record (`_build/book-build.json`: the return codes and logs of the four builds),
while shard 0's process (``BOOK_BUILDER_PID``) is alive, and fails loudly if it died without one.
"""

from __future__ import annotations

import atexit
import json
import multiprocessing
import os
import subprocess
import sys
import time
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
BUILD_RECORD = ROOT / "_build" / "book-build.json"
# Tests that only the building shard can run: they read the build's futures or its own process.
BUILDER_ONLY = ("tests/test_book_build.py", "tests/test_visible_code.py")


def book_shard() -> tuple[int, int]:
    """(this shard, number of shards) from ``BOOK_SHARD=i/n``; (0, 1) when it is not set."""
    value = os.environ.get("BOOK_SHARD", "0/1")
    index, _, count = value.partition("/")
    shard = (int(index), int(count or 1))
    if not 0 <= shard[0] < shard[1]:
        raise pytest.UsageError(f"BOOK_SHARD={value!r}: expected i/n with 0 <= i < n")
    return shard


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test that needs the built book is marked ``book``, whether or not it says so:
    `make test` runs ``-m book`` and ``-m "not book"`` side by side, and only one process may
    build the book (two builds in one tree would corrupt each other). With ``BOOK_SHARD``, the
    book tests this shard does not run are deselected."""
    index, count = book_shard()
    keep, dropped, shared = [], [], 0
    for item in items:
        if BOOK_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.book)
        if count > 1 and item.get_closest_marker("book") is not None:
            builder_only = item.nodeid.startswith(BUILDER_ONLY)
            mine = index == 0 if builder_only else shared % count == index
            shared += not builder_only
            if not mine:
                dropped.append(item)
                continue
        if "stripped_runs" in getattr(item, "fixturenames", ()):
            _WANTS_STRIPPED_RUNS[:] = [True]
        keep.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


def start_stripped_runs() -> dict[Path, Future]:
    """Start every chapter's stripped run (tools/visible_run.py), ``VISIBLE_RUN_JOBS`` at a time,
    each in its own process and kernel (niced), against the build's jupyter-cache (it holds every
    notebook the build executed, even when a warning failed the build). Started once."""
    if not STRIPPED_RUNS:
        sys.path.insert(0, str(ROOT / "tools"))
        import visible_run

        # at a lower priority (nice 5): the Chinese edition and the PDFs, built meanwhile, are
        # what the other shard's page tests wait for; a stripped run is waited for only at the end
        pool = ProcessPoolExecutor(max_workers=VISIBLE_RUN_JOBS,
                                   mp_context=multiprocessing.get_context("spawn"),
                                   initializer=os.nice, initargs=(5,))
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
    if book_shard()[0] != 0:
        return _wait_for_the_build()
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
    if book_shard()[1] > 1:
        _write_build_record(build)
    return build


def _write_build_record(build: BookBuild) -> None:
    """What the other shards need of this build: every step's return code and output."""
    steps = {"zh": _ZH_BUILD, "pdf": _PDF_BUILD, "zh_pdf": _ZH_PDF_BUILD}
    record = {"returncode": build.returncode, "log": build.log,
              **{name: [done[-1].returncode, done[-1].stdout, done[-1].stderr] if done else None
                 for name, done in steps.items()}}
    partial = BUILD_RECORD.with_suffix(".partial")
    partial.write_text(json.dumps(record))
    partial.replace(BUILD_RECORD)  # atomic: a waiting shard never reads half a record


def _wait_for_the_build() -> BookBuild:
    """A non-building shard: shard 0's build record, once it is written (polled every 2 s)."""
    builder = int(os.environ.get("BOOK_BUILDER_PID", "0"))
    while not BUILD_RECORD.exists():
        if builder <= 0:
            pytest.fail("BOOK_SHARD is set but BOOK_BUILDER_PID is not: no build to wait for",
                        pytrace=False)
        try:
            os.kill(builder, 0)
        except ProcessLookupError:
            pytest.fail(f"the building shard (pid {builder}) ended without a build record "
                        f"({BUILD_RECORD}): see its log", pytrace=False)
        time.sleep(2)
    record = json.loads(BUILD_RECORD.read_text())
    for name, done in (("zh", _ZH_BUILD), ("pdf", _PDF_BUILD), ("zh_pdf", _ZH_PDF_BUILD)):
        if record[name] is not None:
            done.append(subprocess.CompletedProcess([], *record[name]))
    return BookBuild(record["returncode"], record["log"], HTML)


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
