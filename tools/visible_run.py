"""Run a chapter as its page shows it: the removed cells stripped, ``glue`` stubbed (issue 22 §2).

A reader who copies a page's code gets the cells the HTML shows, folded ones included, and none
of the cells the build removes. This tool executes exactly that notebook and compares what it
prints with the book build's full execution of the same notebook:

* **Stripped**: every code cell tagged ``remove-cell`` or ``remove-input`` (its code is not on the
  page either: only its output is). Markdown cells are dropped (they run nothing). Cells tagged
  ``hide-input``, ``hide-cell``, ``hide-output`` or ``remove-output`` stay: their code is on the
  page, a click away, or runs for its effect.
* **Stubbed**: ``myst_nb.glue`` (which ``tformer.notebook.glue`` calls) does nothing, so the
  stripped run shows what a reader without MyST-NB sees minus the glued values.
* **Compared**, cell by cell: the stdout text and the ``text/plain`` of every result and display
  (glue's own outputs excluded), after the nbval sanitiser's normalisations
  (``tests/nbval_sanitize.cfg``: memory addresses, devices, timings) and with every wall-clock
  duration ("in 11.0 s", "1.04 ms") replaced by a placeholder. Both runs use the same
  machine and torch, so anything else that differs is a finding: the page's code prints another
  result than the page shows (a removed cell consumed random numbers, set a flag, trained a model
  the visible code reuses ...). A cell whose printed result legitimately varies from run to run
  (a wall-clock timing table) carries the tag ``nbval-ignore-output`` and is not compared.
* **Names**: a visible cell that reads a name only removed cells bind fails even when the
  stripped run never executes that code (a function defined on the page and called only by a
  removed cell), found by reading the code (``ast``).
* **Failures**: any cell error (a ``NameError`` for a name only a removed cell defines), named by
  the notebook, the cell's index in the notebook file and the exception; cells tagged
  ``raises-exception`` must raise the same exception as in the full run.

The full execution comes from the book build's jupyter-cache (``_build/.jupyter_cache``, matched
on the notebook's code exactly as MyST-NB matches it), or, with ``--full``, from a fresh full
execution here (twice the cost).

Usage: .venv/bin/python tools/visible_run.py book/09_encoders_decoders.ipynb [more ...]
           [--cache _build/.jupyter_cache] [--full]
Prints one line per notebook (ok/FAILED, seconds) and each finding; exit status 1 on any.
"""

from __future__ import annotations

import argparse
import ast
import configparser
import contextlib
import copy
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nb_watchdog import WatchedClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "_build" / ".jupyter_cache"
SANITIZE = ROOT / "tests" / "nbval_sanitize.cfg"

STRIPPED_TAGS = frozenset({"remove-cell", "remove-input"})
IGNORE_OUTPUT_TAG = "nbval-ignore-output"
RAISES_TAG = "raises-exception"
PRELUDE_MARK = "visible-run-prelude"
EPILOGUE_MARK = "visible-run-epilogue"
# Runs last: the kernel's own CPU seconds (what the stripped run costs; bench, not test)
EPILOGUE = """\
import resource as _resource
_usage = _resource.getrusage(_resource.RUSAGE_SELF)
print(f"{_usage.ru_utime + _usage.ru_stime:.3f}")
"""
# Runs first in the stripped notebook: MyST-NB's glue becomes a no-op (tformer.notebook.glue
# imports it from myst_nb at each call; a chapter importing it directly gets the stub too).
PRELUDE = """\
try:
    import myst_nb as _myst_nb
    import myst_nb.ext.glue as _myst_nb_glue
except ImportError:
    pass
else:
    def _no_glue(name, variable, display=True):
        return None
    _myst_nb.glue = _myst_nb_glue.glue = _no_glue
"""


def tags(cell: dict) -> set[str]:
    return set(cell.get("metadata", {}).get("tags", []))


def strip(notebook: nbformat.NotebookNode) -> tuple[nbformat.NotebookNode, list[int]]:
    """The page's code as a notebook (prelude first, epilogue last) and, per cell, its index in
    ``notebook`` (-1 for the prelude and the epilogue)."""
    stripped = copy.deepcopy(notebook)
    kept = [
        (index, cell)
        for index, cell in enumerate(stripped.cells)
        if cell.cell_type == "code" and not STRIPPED_TAGS & tags(cell)
    ]
    prelude = nbformat.v4.new_code_cell(PRELUDE, metadata={"tags": [PRELUDE_MARK]})
    epilogue = nbformat.v4.new_code_cell(EPILOGUE, metadata={"tags": [EPILOGUE_MARK]})
    stripped.cells = [prelude] + [cell for _, cell in kept] + [epilogue]
    for cell in stripped.cells:
        cell.outputs, cell.execution_count = [], None
    return stripped, [-1] + [index for index, _ in kept] + [-1]


def _names(source: str) -> tuple[set[str], set[str]]:
    """(names a cell binds, names it reads) anywhere in its code, function bodies included;
    IPython syntax (``%pip``) is translated first. A cell that does not parse gives nothing."""
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        tree = ast.parse(TransformerManager().transform_cell(source))
    except SyntaxError:
        return set(), set()
    bound, read = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
    return bound, read


def removed_names(notebook: nbformat.NotebookNode) -> list[tuple[int, list[str]]]:
    """(cell index, names) for each visible code cell that reads a name only removed cells
    bind: a function the page defines may use such a name without the stripped run calling it
    (chapter 9's ``cross_map`` read ``example``, which a removed cell made)."""
    visible, removed = set(), set()
    cells = [(i, c) for i, c in enumerate(notebook.cells) if c.cell_type == "code"]
    for _, cell in cells:
        bound, _ = _names(cell.source)
        (removed if STRIPPED_TAGS & tags(cell) else visible).update(bound)
    only_removed = removed - visible
    found = []
    for index, cell in cells:
        if STRIPPED_TAGS & tags(cell):
            continue
        used = sorted(_names(cell.source)[1] & only_removed)
        if used:
            found.append((index, used))
    return found


# A wall-clock duration anywhere in a printed line ("400 steps in 11.0 s", "one pass 1.04 ms"):
# the rest of the line is still compared. Tables of timings without units on each number
# (or speed-up factors) need the nbval-ignore-output tag on their cell instead.
# The padding before it goes too: a fixed-width "{t:8.2f} ms" pads "46.09" and "5.74" differently.
DURATION = (re.compile(r"(?<![\w.])[ \t]*\d+(?:\.\d+)?\s?(?:ns|µs|us|ms|s|min)\b"), " DURATION")


def load_sanitizers(path: Path = SANITIZE) -> list[tuple[re.Pattern, str]]:
    """The nbval sanitiser's (regex, replacement) pairs, in file order, then ``DURATION``."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(path, encoding="utf-8")
    pairs = [(re.compile(parser[s]["regex"]), parser[s]["replace"]) for s in parser.sections()]
    return [*pairs, DURATION]


def sanitize(text: str, sanitizers: list[tuple[re.Pattern, str]]) -> str:
    for pattern, replacement in sanitizers:
        text = pattern.sub(replacement, text)
    return text


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def printed(cell: dict, sanitizers: list[tuple[re.Pattern, str]]) -> dict:
    """What a cell printed: its whole stdout (chunking varies between runs), the text/plain of
    each result or display that is not a glue record, and its error (name and message)."""
    stdout, plain, error = [], [], None
    for output in cell.get("outputs", []):
        kind = output.get("output_type")
        if kind == "stream" and output.get("name") == "stdout":
            stdout.append(_text(output.get("text", "")))
        elif kind in ("execute_result", "display_data"):
            if "scrapbook" in output.get("metadata", {}):
                continue  # a glue record: the prose shows it, the stub drops it
            if "text/plain" in output.get("data", {}):
                plain.append(sanitize(_text(output["data"]["text/plain"]), sanitizers))
        elif kind == "error":
            error = f"{output.get('ename')}: {output.get('evalue')}"
    return {"stdout": sanitize("".join(stdout), sanitizers), "text/plain": plain, "error": error}


def cached_execution(notebook: nbformat.NotebookNode, cache: Path) -> nbformat.NotebookNode | None:
    """The book build's executed copy of ``notebook`` from jupyter-cache, or None when the cache
    holds no execution of this notebook's current code."""
    from jupyter_cache import get_cache

    if not (cache / "global.db").exists():
        return None
    store = get_cache(str(cache))
    try:
        # the cache stores code cells only; merged, the indices are the notebook file's
        _, merged = store.merge_match_into_notebook(copy.deepcopy(notebook))
    except KeyError:
        return None
    return merged


def execute(notebook: nbformat.NotebookNode, path: Path, allow_errors: bool) -> None:
    """Execute in place in a fresh kernel, from the notebook's folder (as the book build does),
    under the watchdog (tools/nb_watchdog.py)."""
    client = WatchedClient(
        notebook, notebook=str(path), kernel_name="python3", allow_errors=allow_errors,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()


def _first_line(source: str) -> str:
    line = next((x.strip() for x in source.splitlines() if x.strip()), "")
    return line if len(line) <= 60 else line[:57] + "..."


def _short(text: str, limit: int = 300) -> str:
    text = text.rstrip("\n")
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


@dataclass
class Report:
    """The findings of one notebook's stripped run."""

    path: Path
    seconds: float = 0.0
    kernel_cpu: float | None = None  # CPU seconds the stripped run's kernel used
    errors: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    problem: str | None = None  # the run could not be compared at all

    @property
    def ok(self) -> bool:
        return not (self.errors or self.changed or self.problem)

    def __str__(self) -> str:
        cpu = "" if self.kernel_cpu is None else f", kernel CPU {self.kernel_cpu:.1f}s"
        head = f"{'ok    ' if self.ok else 'FAILED'} {self.path}  stripped run {self.seconds:.1f}s{cpu}"
        lines = [head]
        if self.problem:
            lines.append(f"  {self.problem}")
        lines += [f"  error: {x}" for x in self.errors]
        lines += [f"  changed: {x}" for x in self.changed]
        return "\n".join(lines)


def compare(stripped: nbformat.NotebookNode, origin: list[int], full: nbformat.NotebookNode,
            report: Report, sanitizers: list[tuple[re.Pattern, str]]) -> None:
    """Fill ``report`` with each stripped cell's error and each printed result that differs."""
    name = str(report.path)
    for cell, index in zip(stripped.cells, origin):
        if index < 0:
            continue
        where = f"{name}, cell {index} (`{_first_line(cell.source)}`)"
        mine, theirs = printed(cell, sanitizers), printed(full.cells[index], sanitizers)
        cell_tags = tags(cell)
        if mine["error"] and not (RAISES_TAG in cell_tags and mine["error"] == theirs["error"]):
            report.errors.append(f"{where} raised {_short(mine['error'], 200)}")
            continue
        if RAISES_TAG in cell_tags and mine["error"] != theirs["error"]:
            report.changed.append(f"{where}: raised {mine['error']!r}, the full run {theirs['error']!r}")
        if IGNORE_OUTPUT_TAG in cell_tags:
            continue
        if mine["stdout"] != theirs["stdout"]:
            report.changed.append(
                f"{where}: stdout\n    page code prints: {_short(mine['stdout'])!r}\n"
                f"    full run printed: {_short(theirs['stdout'])!r}"
            )
        if mine["text/plain"] != theirs["text/plain"]:
            report.changed.append(
                f"{where}: text/plain\n    page code shows: {_short(repr(mine['text/plain']))}\n"
                f"    full run showed: {_short(repr(theirs['text/plain']))}"
            )


def run(path: Path, cache: Path = CACHE, full: bool = False) -> Report:
    """Strip, execute and compare one notebook (see the module docstring)."""
    report = Report(path)
    notebook = nbformat.read(path, as_version=4)
    reference = None
    if full:
        reference = copy.deepcopy(notebook)
        try:
            execute(reference, path, allow_errors=False)
        except (CellExecutionError, CellTimeoutError) as error:
            report.problem = f"the full execution itself failed: {_short(str(error), 600)}"
            return report
    else:
        reference = cached_execution(notebook, cache)
        if reference is None:
            report.problem = (
                f"no execution of this notebook's current code in {cache} (build the book, or "
                f"pass --full)"
            )
            return report
    stripped, origin = strip(notebook)
    start = time.perf_counter()
    try:
        # errors do not stop the run: every cell is compared, every error named
        execute(stripped, path, allow_errors=True)
    except CellTimeoutError as error:
        report.problem = str(error)
    report.seconds = time.perf_counter() - start
    with contextlib.suppress(ValueError, IndexError, KeyError):
        report.kernel_cpu = float(printed(stripped.cells[-1], [])["stdout"])
    compare(stripped, origin, reference, report, load_sanitizers())
    for index, names in removed_names(notebook):
        where = f"{path}, cell {index} "
        if any(error.startswith(where) for error in report.errors):
            continue  # the run already failed there
        report.errors.append(
            f"{where}(`{_first_line(notebook.cells[index].source)}`) uses {', '.join(names)}, "
            f"which only removed cells define"
        )
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--cache", type=Path, default=CACHE,
                        help="the book build's jupyter-cache (default: _build/.jupyter_cache)")
    parser.add_argument("--full", action="store_true",
                        help="execute the full notebook here as the reference instead")
    args = parser.parse_args(argv)
    ok = True
    for path in args.notebooks:
        report = run(path, args.cache, args.full)
        print(report, flush=True)
        ok = ok and report.ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
