"""Grade a reader's exercise notebook: ``tformer-grade NOTEBOOK [--json] [--timeout 60]``.

The notebook runs in a fresh kernel (nbclient), one cell at a time, with a timeout per cell. After
every cell the grader reads the verdicts the checkers recorded in
:data:`tformer.checks.core.RESULTS`, so nothing is lost when a later cell hangs or kills the
kernel. It then prints one row per exercise — passed / wrong (with the hint) / not attempted /
error / timed out — and the total.

The report speaks the notebook's language: its metadata ``language`` (``"zh"`` for the Chinese
reader's copies; ``--lang`` overrides) is handed to the kernel as ``TFORMER_LANG``, so the
checkers' hints come back in that language, and the grader's own text follows. ``--json`` keeps
its keys and status values English (machine-readable) and adds ``"language"``.

Nothing a notebook does makes the grader crash:

* invalid JSON or an unreadable file: a report saying so (every expected exercise "error");
* a syntax error in an exercise's cell: that exercise is "error" (never "not attempted");
* an infinite loop: the cell is stopped after the timeout, its exercise is "timed out", the
  kernel is restarted, the cells that ran before are replayed, and grading goes on;
* a dying kernel (``os._exit``, a crash, out of memory): the same, with "error — the kernel died";
* deleted cells: an exercise whose heading is still there but whose check cell is gone is
  "error" with the check call to restore; an exercise gone entirely is "not attempted".

The notebook's setup cell records the ``tformer`` release it was made for
(``os.environ["TFORMER_NOTEBOOK_VERSION"] = VERSION = "2.0.0"``); when the installed ``tformer``
(the grader's own, which the kernel imports too) is another release, the report says so in a
note, as the checkers do under each verdict, and ``--json`` has both under ``"tformer"``.

The expected exercises are the union of the notebook's exercise headings and check cells, the
``tformer`` entry of its metadata (written into every reader's copy) and the checkers registered
in ``tformer.checks.chNN``. The exit status says whether grading ran (0) or could not (1; 2 for a
usage error) — never the score. No Jupyter server or extension is involved, so it works the same
on a laptop, on Binder and on Colab (``!tformer-grade "/content/drive/…/Copy of 02_….ipynb"``).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import logging
import math
import os
import re
import subprocess
import sys
import time
import unicodedata
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError

from tformer import version
from tformer.authoring import CHECK_CALL, Section, chapter_of, sections, tags
from tformer.checks.core import version_warning
from tformer.checks.language import LANGUAGES, normalise, notebook_language, status_text, translate

SYMBOLS = {"passed": "✓", "wrong": "✗", "not attempted": "…", "error": "!", "timed out": "⧗"}
SYNTAX_ERRORS = {"SyntaxError", "IndentationError", "TabError"}
STUB_ERRORS = {"NotImplementedError"}
MARKER = "@@tformer-grade-results@@"
RESULTS_SNIPPET = (
    "print(" + repr(MARKER) + " + __import__('json').dumps(getattr(__import__('sys').modules.get("
    "'tformer.checks.core'), 'RESULTS', {}), default=str))"
)
DEFAULT_TIMEOUT = 60
MAX_RESTARTS = 5


def plain_title(title: str) -> str:
    """A heading's title for a terminal: the ``$…$`` math markers and TeX thousands separators
    dropped (``"Top-$k$ at $T = 8{,}192$"`` → ``"Top-k at T = 8,192"``)."""
    text = title.replace("{,}", ",").replace("\\,", " ").replace("$", "")
    return " ".join(text.split())


@dataclass
class Row:
    """One exercise of the report."""

    exercise: str
    title: str
    status: str
    message: str = ""
    errors: list[str] = field(default_factory=list)
    """Every exception a cell of this exercise raised (the cell, the exception type and its
    message), whatever the verdict: an error is never hidden behind a wrong answer's hint."""


@dataclass
class Report:
    """The outcome of grading one notebook."""

    notebook: str
    chapter: str | None
    graded: bool
    rows: list[Row] = field(default_factory=list)
    problem: str = ""
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    language: str = "en"
    made_for: str | None = None
    """The ``tformer`` release the notebook's setup cell records (``None``: it records none)."""

    @property
    def passed(self) -> int:
        return sum(row.status == "passed" for row in self.rows)

    @property
    def total(self) -> int:
        return len(self.rows)

    def to_dict(self) -> dict[str, Any]:
        counts: dict[str, int] = {}
        for row in self.rows:
            counts[row.status] = counts.get(row.status, 0) + 1
        return {
            "notebook": self.notebook,
            "chapter": self.chapter,
            "graded": self.graded,
            "problem": self.problem,
            "notes": self.notes,
            "score": {"passed": self.passed, "total": self.total, "counts": counts},
            "exercises": [asdict(row) for row in self.rows],
            "seconds": round(self.seconds, 2),
            "language": self.language,
            "tformer": {"installed": version.installed(), "made_for": self.made_for},
        }

    def to_text(self) -> str:
        lang = self.language
        if self.chapter:
            head = translate(
                f"Grading {self.notebook} (chapter {self.chapter}, {self.total} exercises)", lang
            )
        else:
            head = translate(f"Grading {self.notebook} ({self.total} exercises)", lang)
        lines = [head]
        if self.problem:
            lines.append(f"  ! {self.problem}")
        lines += ["  " + translate(f"note: {note}", lang) for note in self.notes]
        lines.append("")
        titles = [plain_title(row.title) for row in self.rows]
        width = min(44, max([_width(title) for title in titles] + [5]))
        dash = " —— " if lang == "zh" else " — "
        for row, title in zip(self.rows, titles, strict=True):
            title = _fit(title, width)
            status = status_text(row.status, lang)
            line = f"  {row.exercise:<6} {title}  {SYMBOLS.get(row.status, '?')} {status}"
            lines.append(f"{line}{dash}{row.message}" if row.message else line)
            shown = _short(row.message, 10**6)  # the first error usually leads the message
            lines += [f"{' ' * 9}! {error}" for error in row.errors
                      if _short(error, 10**6) not in shown]
        counts = self.to_dict()["score"]["counts"]
        unit = " 道" if lang == "zh" else " "
        details = [f"{n}{unit}{status_text(status, lang)}" for status, n in counts.items()
                   if status != "passed"]
        score = translate(f"Score: {self.passed}/{self.total} passed", lang)
        if details and lang == "zh":
            score += "（" + "，".join(details) + "）"
        elif details:
            score += " (" + ", ".join(details) + ")"
        lines += ["", score]
        if not self.graded:
            lines.append(translate("The notebook could not be graded; the rows above say why.", lang))
        return "\n".join(lines)


def _width(text: str) -> int:
    """Columns a text takes in a terminal (CJK characters take two)."""
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


def _fit(text: str, width: int) -> str:
    """``text`` cut with "…" or padded with spaces to ``width`` terminal columns."""
    if _width(text) > width:
        while _width(text) > width - 1:
            text = text[:-1]
        text += "…"
    return text + " " * (width - _width(text))


# ---------------------------------------------------------------------------------------------
# What is expected


def _sort_key(exercise_id: str) -> tuple:
    return tuple(int(part) if part.isdigit() else 0 for part in exercise_id.split("."))


def registered_checkers(chapter: str | None) -> dict[str, Callable]:
    """``{exercise id: checker}`` of ``tformer.checks.chNN`` ({} when there is no such module).

    A module that exists but fails to import raises (``ImportError`` or whatever it raised): a
    broken chapter must be reported, not look like a chapter without exercises.
    """
    if not chapter:
        return {}
    name = f"tformer.checks.ch{chapter}"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name == name:  # no checkers for this chapter: the notebook alone says what to grade
            return {}
        raise
    found = {}
    for name in dir(module):
        function = getattr(module, name, None)
        exercise_id = getattr(function, "exercise_id", None)
        if callable(function) and isinstance(exercise_id, str):
            found[exercise_id] = function
    return found


def _metadata_exercises(nb) -> list[dict]:
    entry = nb.get("metadata", {}).get("tformer", {})
    exercises = entry.get("exercises", []) if isinstance(entry, dict) else []
    return [item for item in exercises if isinstance(item, dict) and isinstance(item.get("id"), str)]


def _detect_chapter(path: Path, nb) -> str | None:
    if nb is not None:
        entry = nb.get("metadata", {}).get("tformer", {})
        if isinstance(entry, dict) and re.fullmatch(r"\d\d", str(entry.get("chapter", ""))):
            return str(entry["chapter"])
    chapter = chapter_of(path)
    if chapter or nb is None:
        return chapter
    for section in sections(nb):
        return section.exercise_id.split(".")[0].zfill(2)
    for cell in nb.get("cells", []):
        match = CHECK_CALL.search(str(cell.get("source", "")))
        if match:
            return match["chapter"]
    return None


@dataclass
class _Expected:
    title: str = ""
    check_call: str = ""


def expected_exercises(nb, chapter: str | None) -> dict[str, _Expected]:
    """Every exercise the notebook should contain, in order, with its title and check call."""
    expected: dict[str, _Expected] = {}
    for exercise_id, checker in registered_checkers(chapter).items():
        expected[exercise_id] = _Expected(
            getattr(checker, "title", ""), f"checks.ch{chapter}.{checker.__name__}(answer)"
        )
    if nb is not None:
        for item in _metadata_exercises(nb):
            entry = expected.setdefault(item["id"], _Expected())
            entry.title = entry.title or str(item.get("title", ""))
            entry.check_call = str(item.get("check") or entry.check_call)
        for section in sections(nb):
            entry = expected.setdefault(section.exercise_id, _Expected())
            entry.title = section.title or entry.title
    return dict(sorted(expected.items(), key=lambda item: _sort_key(item[0])))


# ---------------------------------------------------------------------------------------------
# Running the cells


@dataclass
class _CellRun:
    index: int
    outcome: str  # "ok", "error", "syntax", "timeout", "dead", "not run"
    ename: str = ""
    evalue: str = ""


class _QuietClient(NotebookClient):
    """Keeps only error outputs (a reader's infinite print loop cannot fill the memory), except
    for the grader's own snippet, whose printed line carries the verdicts."""

    keep_streams = False

    def output(self, outs, msg, display_id, cell_index):  # type: ignore[override]
        msg_type = msg.get("msg_type")
        if msg_type == "error" or (self.keep_streams and msg_type == "stream"):
            return super().output(outs, msg, display_id, cell_index)
        return None


class _Kernel:
    def __init__(self, nb, cwd: Path, timeout: float, kernel_name: str, startup_timeout: float,
                 lang: str = "en"):
        self.env = {**os.environ, "TFORMER_LANG": lang}  # the checkers speak the reader's language
        # nbclient stores each executed cell back at its index: give it its own list of cells,
        # with one more slot for the grader's snippet, so the reader's notebook stays intact.
        own = nbformat.NotebookNode(nb)
        own["cells"] = list(nb.cells) + [nbformat.v4.new_code_cell("")]
        self.snippet_index = len(nb.cells)
        self.client = _QuietClient(
            own,
            # whole seconds: nbclient 0.10 (Colab's) declares both timeouts Integer traits
            timeout=math.ceil(timeout),
            kernel_name=kernel_name,
            allow_errors=True,
            startup_timeout=math.ceil(startup_timeout),
            shutdown_kernel="immediate",
            record_timing=False,
            resources={"metadata": {"path": str(cwd)}},
        )

    def start(self) -> None:
        self.client.km = self.client.create_kernel_manager()
        self.client.start_new_kernel(stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     env=self.env)
        self.client.start_new_kernel_client()

    def stop(self) -> None:
        try:
            if self.client.km is not None:
                self.client._cleanup_kernel()
        except Exception:  # noqa: BLE001 - the kernel may already be gone
            pass
        self.client.km = None
        self.client.kc = None

    def run(self, cell, index: int) -> _CellRun:
        try:
            self.client.execute_cell(cell, index, store_history=True)
        except CellTimeoutError:
            return _CellRun(index, "timeout")
        except DeadKernelError:
            return _CellRun(index, "dead")
        except Exception as error:  # noqa: BLE001 - zmq / kernel failures count as a dead kernel
            return _CellRun(index, "dead", type(error).__name__, str(error))
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                ename, evalue = str(output.get("ename", "")), str(output.get("evalue", ""))
                outcome = "syntax" if ename in SYNTAX_ERRORS else "error"
                if "raises-exception" in tags(cell) and outcome == "error":
                    return _CellRun(index, "ok")
                return _CellRun(index, outcome, ename, evalue)
        return _CellRun(index, "ok")

    def results(self) -> dict[str, dict] | None:
        """The kernel's ``RESULTS`` (``None`` when the kernel does not answer)."""
        snippet = nbformat.v4.new_code_cell(RESULTS_SNIPPET)
        self.client.keep_streams = True
        try:
            self.client.execute_cell(snippet, self.snippet_index, store_history=False)
        except Exception:  # noqa: BLE001
            return None
        finally:
            self.client.keep_streams = False
        text = "".join(
            str(output.get("text", ""))
            for output in snippet.outputs
            if output.get("output_type") == "stream"
        )
        for line in text.splitlines():
            if line.startswith(MARKER):
                try:
                    parsed = json.loads(line[len(MARKER) :])
                except ValueError:
                    return None
                return parsed if isinstance(parsed, dict) else None
        return None


def _normalise(nb) -> None:
    """Make a hand-edited notebook safe to run: string sources, metadata dicts, output lists."""
    cells = nb.get("cells")
    if not isinstance(cells, list):
        raise ValueError("the notebook has no list of cells")
    kept = []
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") not in ("code", "markdown", "raw"):
            continue
        source = cell.get("source", "")
        if isinstance(source, list):
            source = "".join(str(part) for part in source)
        cell["source"] = str(source)
        if not isinstance(cell.get("metadata"), dict):
            cell["metadata"] = nbformat.NotebookNode()
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        kept.append(cell)
    nb["cells"] = kept
    if not isinstance(nb.get("metadata"), dict):
        nb["metadata"] = nbformat.NotebookNode()


def _cell_label(nb, index: int, lang: str = "en") -> str:
    lines = [line.strip() for line in nb.cells[index].source.splitlines() if line.strip()]
    first = lines[0] if lines else ""
    first = first if len(first) <= 40 else first[:39] + "…"
    if first:
        return translate(f"cell {index + 1} (`{first}`)", lang)
    return translate(f"cell {index + 1}", lang)


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---------------------------------------------------------------------------------------------
# Grading


def grade(
    path: str | Path,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    kernel_name: str = "python3",
    startup_timeout: float = 120,
    max_restarts: int = MAX_RESTARTS,
    lang: str | None = None,
) -> Report:
    """Run the notebook at ``path`` in a fresh kernel and return the :class:`Report`.

    ``lang`` (``"en"`` / ``"zh"``): the language of the report and of the checkers' hints;
    by default the notebook's metadata ``language``, else English.
    """
    start = time.perf_counter()
    path = Path(path)
    logging.getLogger("traitlets").setLevel(logging.CRITICAL)
    nb = None
    problem = ""
    try:
        nb = nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
        _normalise(nb)
    except FileNotFoundError:
        problem = f"no such file: {path}"
    except UnicodeDecodeError:
        problem = "the file is not text (is it really a .ipynb notebook?)"
    except Exception as error:  # noqa: BLE001 - invalid JSON, not a notebook, …
        problem = f"the notebook could not be read — it is not valid notebook JSON ({_short(error, 120)})"
        nb = None
    lang = normalise(lang) or (notebook_language(nb) if nb is not None else None) or "en"
    problem = translate(problem, lang)
    chapter = _detect_chapter(path, nb)
    broken = ""
    try:
        expected = expected_exercises(nb, chapter)
    except Exception as error:  # noqa: BLE001 - a broken checkers module is reported, never fatal
        broken = (
            f"the checkers of chapter {chapter} could not be loaded "
            f"({type(error).__name__}: {_short(error, 160)})"
        )
        expected = expected_exercises(nb, None)
    report = Report(str(path), chapter, graded=False, problem=problem, language=lang)
    if broken:
        report.notes.append(translate(broken, lang))
    if nb is not None:
        report.made_for = version.notebook_version(nb)
        warning = version_warning(report.made_for, lang) if report.made_for else ""
        if warning:
            report.notes.append(warning)
    if nb is None:
        report.rows = [
            Row(exercise_id, translate(entry.title, lang), "error",
                translate(f"not graded: {problem}", lang))
            for exercise_id, entry in expected.items()
        ]
        report.seconds = time.perf_counter() - start
        return report
    if not expected:
        report.problem = translate(
            "no exercises found: no `## Exercise NN.k` headings, no check cells and no known "
            "chapter (name the file NN_….ipynb)", lang
        )
        report.seconds = time.perf_counter() - start
        return report
    runs, verdicts, fatal = _execute(nb, path.resolve().parent, timeout, kernel_name,
                                     startup_timeout, max_restarts, report)
    if fatal.startswith("kernel:"):
        report.problem = translate(fatal, lang).removeprefix("kernel:")
        report.rows = [
            Row(exercise_id, translate(entry.title, lang), "error",
                translate(f"not graded: {report.problem}", lang))
            for exercise_id, entry in expected.items()
        ]
        report.seconds = time.perf_counter() - start
        return report
    fatal = translate(fatal, lang)
    report.rows = _rows(nb, expected, runs, verdicts, fatal, chapter, lang)
    report.notes += [translate(note, lang) for note in error_notes(report)]
    report.graded = True
    report.problem = fatal
    report.seconds = time.perf_counter() - start
    return report


def _execute(nb, cwd, timeout, kernel_name, startup_timeout, max_restarts, report):
    """Run every code cell; returns ``(runs by cell index, verdicts, fatal problem)``."""
    found = sections(nb)
    section_of = {index: s.exercise_id for s in found for index in s.cell_indices}
    runs: dict[int, _CellRun] = {}
    verdicts: dict[str, dict] = {}
    failed_sections: set[str] = set()
    restarts = 0
    lang = report.language
    kernel = _Kernel(nb, cwd, timeout, kernel_name, startup_timeout, lang)
    try:
        kernel.start()
    except Exception as error:  # noqa: BLE001
        kernel.stop()
        return runs, verdicts, f"kernel:could not start a Python kernel ({_short(error, 120)})"
    fatal = ""
    try:
        code_cells = [i for i, cell in enumerate(nb.cells) if cell.cell_type == "code"]
        for position, index in enumerate(code_cells):
            cell = nb.cells[index]
            if not cell.source.strip():
                runs[index] = _CellRun(index, "ok")
                continue
            run = kernel.run(cell, index)
            runs[index] = run
            if run.outcome in ("ok", "error", "syntax"):
                results = kernel.results()
                if results is None:
                    run = runs[index] = _CellRun(index, "dead")
                else:
                    verdicts.update(results)
                    if run.outcome != "ok" and index not in section_of:
                        report.notes.append(translate(
                            f"{_cell_label(nb, index, lang)} outside the exercises raised "
                            f"{run.ename}: {_short(run.evalue, 120)}", lang
                        ))
                    continue
            # timed out or the kernel died: restart, replay what ran before, go on
            section = section_of.get(index)
            if section:
                failed_sections.add(section)
            else:
                what = "timed out" if run.outcome == "timeout" else "killed the kernel"
                report.notes.append(
                    translate(f"{_cell_label(nb, index, lang)} outside the exercises {what}", lang)
                )
            kernel.stop()
            restored = False
            while restarts < max_restarts and not restored:
                restarts += 1
                restored = _restart_and_replay(
                    kernel, nb, code_cells[:position], runs, section_of, failed_sections, verdicts
                )
            if not restored:
                fatal = (
                    f"gave up after {restarts} kernel restarts; the cells after "
                    f"{_cell_label(nb, index)} were not run"
                )
                for later in code_cells[position + 1 :]:
                    runs[later] = _CellRun(later, "not run")
                break
    finally:
        kernel.stop()
    return runs, verdicts, fatal


def _restart_and_replay(kernel, nb, earlier, runs, section_of, failed_sections, verdicts) -> bool:
    try:
        kernel.start()
    except Exception:  # noqa: BLE001
        kernel.stop()
        return False
    for index in earlier:
        if runs[index].outcome != "ok" or section_of.get(index) in failed_sections:
            continue
        if not nb.cells[index].source.strip():
            continue
        replay = nbformat.v4.new_code_cell(nb.cells[index].source)
        replay.metadata = nb.cells[index].metadata
        if kernel.run(replay, index).outcome not in ("ok", "error", "syntax"):
            kernel.stop()
            return False
    results = kernel.results()
    if results is None:
        kernel.stop()
        return False
    for key, value in results.items():
        verdicts.setdefault(key, value)
    return True


def _rows(nb, expected, runs, verdicts, fatal, chapter, lang="en") -> list[Row]:
    by_id: dict[str, Section] = {}
    for section in sections(nb):
        by_id.setdefault(section.exercise_id, section)
    ids = list(expected)
    for exercise_id in verdicts:  # checks the notebook ran that no other source announced
        if exercise_id not in expected and (not chapter or exercise_id.startswith(f"{int(chapter)}.")
                                            or exercise_id.startswith(f"{chapter}.")):
            ids.append(exercise_id)
    rows = []
    for exercise_id in sorted(ids, key=_sort_key):
        entry = expected.get(exercise_id, _Expected())
        section = by_id.get(exercise_id)
        title = (section.title if section else "") or translate(entry.title, lang)
        status, message = _status(nb, exercise_id, section, entry, runs, verdicts, fatal)
        if (status, message) != _verdict_of(verdicts, exercise_id):  # the grader's own words
            message = translate(message, lang)
        errors = [translate(_error_text(nb, run), lang) for run in _real_errors(section, runs)]
        rows.append(Row(exercise_id, title, status, _short(message, 300), errors))
    return rows


def _real_errors(section: Section | None, runs: dict[int, _CellRun]) -> list[_CellRun]:
    """The exceptions the cells of ``section`` raised, in cell order (a stub's
    ``NotImplementedError`` is not one: it means "not attempted")."""
    indices = section.cell_indices if section else []
    return [runs[i] for i in indices
            if i in runs and runs[i].outcome == "error" and runs[i].ename not in STUB_ERRORS]


def _error_text(nb, run: _CellRun) -> str:
    return f"{_cell_label(nb, run.index)} raised {run.ename}: {_short(run.evalue, 160)}"


def error_notes(report: Report) -> list[str]:
    """One note per cell error inside an exercise, naming the exercise (English; the rows'
    ``errors`` are already in the report's language)."""
    return [f"in exercise {row.exercise}, {error}" for row in report.rows for error in row.errors]


def _verdict_of(verdicts, exercise_id) -> tuple[str, str] | None:
    verdict = verdicts.get(exercise_id)
    if isinstance(verdict, dict):
        return str(verdict.get("status")), str(verdict.get("message", ""))
    return None


def _status(nb, exercise_id, section, entry, runs, verdicts, fatal) -> tuple[str, str]:
    verdict = verdicts.get(exercise_id)
    cell_runs = [runs[i] for i in (section.cell_indices if section else []) if i in runs]
    for run in cell_runs:
        if run.outcome == "timeout":
            label = _cell_label(nb, run.index)
            return "timed out", f"{label} ran longer than the time limit (an endless loop?)"
    for run in cell_runs:
        if run.outcome == "dead":
            return "error", (
                f"the kernel died while running {_cell_label(nb, run.index)} (os._exit, a crash "
                "or running out of memory)"
            )
    for run in cell_runs:
        if run.outcome == "syntax":
            return "error", f"syntax error in {_cell_label(nb, run.index)}: {run.ename}: {run.evalue}"
    errors = [run for run in cell_runs if run.outcome == "error"]
    real_errors = _real_errors(section, runs)
    if isinstance(verdict, dict) and verdict.get("status") in SYMBOLS:
        status, message = str(verdict["status"]), str(verdict.get("message", ""))
        if real_errors:
            error = _error_text(nb, real_errors[0])
            if status == "not attempted":
                return "error", error
            # the checker graded what the cells had set before the exception: say so first,
            # or its hint reads as the reason (the verdict stays the checker's)
            if message:
                return status, f"{error}; the check graded what the cells set before it: {message}"
            return status, f"{error}; the check graded what the cells set before it"
        return status, message
    if section is None:
        return "not attempted", (
            "this exercise is not in the notebook (its cells were deleted); copy them back from "
            "the original exercise notebook"
        )
    if real_errors:
        return "error", _error_text(nb, real_errors[0])
    if errors:
        return "not attempted", "the code still raises NotImplementedError — fill in the stub"
    if any(run.outcome == "not run" for run in cell_runs):
        return "error", f"not run: {fatal}"
    if not section.check_indices:
        call = entry.check_call or "the check call"
        return "error", f"the check cell of this exercise is missing; add a cell with `{call}`"
    return "error", "the check cell ran but recorded no verdict (was the checker replaced?)"


# ---------------------------------------------------------------------------------------------
# Colab: grade the notebook that is open, without downloading it


def grade_colab(timeout: float = DEFAULT_TIMEOUT) -> int:
    """On Colab, grade the open notebook (as last saved in the browser) in a fresh kernel.

    Run ``from tformer.grade import grade_colab; grade_colab()`` in a cell: the notebook is
    fetched from the Colab front end, written to a temporary file and graded by
    ``python -m tformer.grade`` in a separate process (a new kernel, as on a laptop). Returns the
    grader's exit status. Elsewhere use the command line: ``tformer-grade NOTEBOOK``.
    """
    import tempfile

    try:
        from google.colab import _message  # type: ignore[import-not-found]
    except ImportError:
        print(translate("grade_colab() works on Colab only; elsewhere run: tformer-grade NOTEBOOK.ipynb"))
        return 2
    try:
        reply = _message.blocking_request("get_ipynb", request="", timeout_sec=60)
        content = reply["ipynb"]
    except Exception as error:  # noqa: BLE001
        print(translate(f"Colab did not hand over the notebook ({error}); download it and run tformer-grade"))
        return 1
    folder = Path(tempfile.mkdtemp(prefix="tformer-grade-"))
    path = folder / "colab_notebook.ipynb"
    path.write_text(json.dumps(content), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "tformer.grade", str(path), "--timeout", str(timeout)],
        capture_output=True, text=True, check=False,
    )
    print(result.stdout.replace(str(path), translate("this notebook")), end="")
    return result.returncode


# ---------------------------------------------------------------------------------------------
# Command line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tformer-grade",
        description="Grade an exercise notebook of 'Attention, Executed' in a fresh kernel.",
        epilog="Exit status: 0 graded (whatever the score), 1 could not be graded, 2 usage error.",
    )
    parser.add_argument("notebook", type=Path, help="the notebook to grade (.ipynb)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT,
        help=f"seconds allowed per cell (default {DEFAULT_TIMEOUT})",
    )
    parser.add_argument("--kernel", default="python3", help="kernel name (default python3)")
    parser.add_argument(
        "--lang", choices=LANGUAGES, default=None,
        help="language of the report and the hints (default: the notebook's metadata, else en)",
    )
    args = parser.parse_args(argv)
    if args.timeout <= 0:
        parser.error("--timeout must be positive")
    try:
        report = grade(args.notebook, timeout=args.timeout, kernel_name=args.kernel, lang=args.lang)
    except Exception as error:  # noqa: BLE001 - last resort: still a report, never a traceback
        report = Report(str(args.notebook), None, graded=False,
                        problem=f"internal grader error: {type(error).__name__}: {error}",
                        language=args.lang or "en")
    text = json.dumps(report.to_dict(), indent=2, ensure_ascii=False) if args.json else report.to_text()
    with contextlib.suppress(BrokenPipeError):  # `tformer-grade … | head`
        print(text)
    return 0 if report.graded else 1


if __name__ == "__main__":
    sys.exit(main())
