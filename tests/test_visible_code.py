"""The page's code runs on its own and prints what the page shows (issue 22 §2).

Each chapter is executed once more with its removed cells stripped and ``glue`` stubbed
(``tools/visible_run.py``), and every visible cell's printed result is compared with the book
build's execution of the same notebook, read from the build's jupyter-cache: any cell error (a
``NameError`` for a name only a removed cell defines) or changed printed result fails, naming the
notebook and the cell. The chapters run as soon as the English book is built (``built_book``
starts them, ``conftest.start_stripped_runs``), two at a time by default (``VISIBLE_RUN_JOBS``;
most chapters use one thread), while the Chinese edition and the PDFs are built and the browser
tests run; the first tests below check the checker itself on small notebooks.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest
from conftest import CHAPTERS, ROOT, BookBuild, start_stripped_runs

sys.path.insert(0, str(ROOT / "tools"))
import visible_run  # noqa: E402


def _notebook(tmp_path: Path, *cells: tuple[str, list[str]]) -> Path:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    notebook.cells = [nbformat.v4.new_markdown_cell("# A page")] + [
        nbformat.v4.new_code_cell(source, metadata={"tags": cell_tags}) for source, cell_tags in cells
    ]
    path = tmp_path / "page.ipynb"
    nbformat.write(notebook, path)
    return path


# --- the checker, on small notebooks (each executes twice: --full) -----------------------------


def test_stripping_keeps_folded_cells_and_drops_removed_ones():
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell("text"),
        nbformat.v4.new_code_cell("a = 1", metadata={"tags": ["hide-input"]}),
        nbformat.v4.new_code_cell("b = 2", metadata={"tags": ["remove-cell"]}),
        nbformat.v4.new_code_cell("c = 3", metadata={"tags": ["remove-input"]}),
        nbformat.v4.new_code_cell("d = 4", metadata={"tags": ["remove-output", "hide-cell"]}),
    ]
    stripped, origin = visible_run.strip(notebook)
    assert [cell.source for cell in stripped.cells[1:-1]] == ["a = 1", "d = 4"]
    assert origin == [-1, 1, 4, -1]
    assert visible_run.PRELUDE_MARK in stripped.cells[0].metadata["tags"]
    assert visible_run.EPILOGUE_MARK in stripped.cells[-1].metadata["tags"]


def test_each_kind_of_finding_is_named(tmp_path):
    """One page with every kind of failure (one execution of each kind of notebook keeps the
    suite cheap): a name only a removed cell defines, a removed cell that consumes random
    numbers (the page's code prints another number), a removed-input cell that changes a value,
    an expected exception that turns into another one, and a function that reads a removed name
    but is never called on the page (found by reading the code)."""
    path = _notebook(
        tmp_path,
        ("import random\nrandom.seed(0)\nscale = 1", []),
        ("secret = 41\nflag = True", ["remove-cell"]),
        ("print(secret + 1)", []),
        ("random.random()", ["remove-cell"]),
        ("print(round(random.random(), 6))", []),
        ("scale = 2", ["remove-input"]),
        ("[scale * x for x in range(3)]", []),
        ("if flag:\n    raise ValueError('shape')", ["raises-exception"]),
        ("def reveal():\n    return secret  # never called on the page", []),
    )
    report = visible_run.run(path, full=True)
    assert not report.ok and report.problem is None
    assert len(report.errors) == 3, str(report)
    assert f"{path}, cell 3" in report.errors[0] and "NameError" in report.errors[0]
    assert "'secret'" in report.errors[0]
    assert "cell 8" in report.errors[1] and "'flag'" in report.errors[1]
    assert "cell 9" in report.errors[2] and "uses secret, which only removed" in report.errors[2]
    assert len(report.changed) == 2, str(report)
    assert "cell 5" in report.changed[0] and "stdout" in report.changed[0]
    assert "cell 7" in report.changed[1] and "text/plain" in report.changed[1]
    assert "[0, 2, 4]" in report.changed[1] and "[0, 1, 2]" in report.changed[1]


def test_a_page_that_stands_alone_passes_with_glue_stubbed(tmp_path):
    """Glue calls, sanitised addresses and timings, figures' reprs and expected exceptions are
    not findings; a run-dependent cell tagged nbval-ignore-output is not compared."""
    path = _notebook(
        tmp_path,
        ("from myst_nb import glue\nimport time\nvalue = 6 * 7", []),
        ("glue('value', value)\nglue('hidden', value, display=False)\nprint(value)", []),
        ("glue('checked', value == 42, display=False)\nassert value == 42", ["remove-cell"]),
        ("print(f'{time.perf_counter()} s per call')", []),
        ("print(f'400 steps in {time.perf_counter():.1f} s; loss 0.465')", []),
        ("print(f'T = 1024: {1e3 * time.perf_counter() % 90:8.2f} ms, peak 8.25 MiB')", []),
        ("print(object())", []),
        ("print(time.perf_counter_ns())", ["nbval-ignore-output"]),
        ("raise ValueError('as the page says')", ["raises-exception"]),
    )
    report = visible_run.run(path, full=True)
    assert report.ok, str(report)
    assert report.kernel_cpu is not None and report.kernel_cpu > 0


def test_no_cached_execution_is_a_failure_not_a_pass(tmp_path):
    path = _notebook(tmp_path, ("print(1)", []))
    report = visible_run.run(path, cache=tmp_path / "no-cache")
    assert not report.ok and "no execution of this notebook" in report.problem


# --- every chapter ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stripped_runs(built_book: BookBuild) -> dict[Path, visible_run.Report]:
    """Every chapter's stripped run, compared with the book build's execution in its
    jupyter-cache. `built_book` starts them right after the English build
    (``conftest.start_stripped_runs``), so they overlap the rest of the book's tests."""
    return {path: future.result() for path, future in start_stripped_runs().items()}


@pytest.mark.book
@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_the_page_code_runs_alone_and_prints_what_the_page_shows(path: Path, stripped_runs):
    report = stripped_runs[path]
    assert report.ok, str(report)
