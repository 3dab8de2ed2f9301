"""The grader (``tformer-grade``): broken reader notebooks each get the right verdict, shipped
solutions get full marks and shipped reader copies get zero with every exercise not attempted.

The corpus in ``tests/grader_corpus/`` is built by ``tests/grader_corpus/build_corpus.py`` from
the fixture ``tests/fixtures/solutions/99_fixture.ipynb`` (three exercises whose checkers are
defined inside the notebook); the expected verdicts below are written by hand.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat
import pytest

from tformer.authoring import reader_copy, sections
from tformer.grade import grade, registered_checkers

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "grader_corpus"
FIXTURE = ROOT / "tests" / "fixtures" / "solutions" / "99_fixture.ipynb"
SOLUTIONS = sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb"))

SHIPPED_TIMEOUT = 600  # seconds per cell when grading the shipped solutions and exercises
PASSED = ("passed", "")
# file → {exercise: (status, a phrase the message must contain)}
EXPECTED = {
    "99_solved.ipynb": {"99.1": PASSED, "99.2": PASSED, "99.3": PASSED},
    "99_stubs.ipynb": {
        "99.1": ("not attempted", "placeholder"),
        "99.2": ("not attempted", "placeholder"),
        "99.3": ("not attempted", "NotImplementedError"),
    },
    "99_syntax_error.ipynb": {"99.1": ("error", "syntax error"), "99.2": PASSED, "99.3": PASSED},
    "99_kernel_death.ipynb": {"99.1": ("error", "kernel died"), "99.2": PASSED, "99.3": PASSED},
    "99_deleted_cells.ipynb": {
        "99.1": PASSED,
        "99.2": ("error", "check cell of this exercise is missing; add a cell with `ex2(answer)`"),
        "99.3": ("not attempted", "not in the notebook"),
    },
    "99_wrong_answers.ipynb": {
        "99.1": ("wrong", "off only by rounding"),
        "99.2": ("wrong", "must run over the key axis"),
        "99.3": ("wrong", "double(0.0) = 2 is not right"),
    },
    "99_nan_answer.ipynb": {
        "99.1": ("wrong", "NaN"),
        "99.2": ("wrong", "fully masked row"),
        "99.3": PASSED,
    },
    "99_function_raises.ipynb": {
        "99.1": PASSED,
        "99.2": PASSED,
        "99.3": ("wrong", "double raised ValueError: not today"),
    },
    "99_exception_in_answer.ipynb": {
        "99.1": ("error", "raised ZeroDivisionError"),
        "99.2": PASSED,
        "99.3": PASSED,
    },
    "99_error_after_partial_answer.ipynb": {
        "99.1": PASSED,
        "99.2": ("wrong", "cell 9 (`answer = torch.exp(SCORES) # the numer…`) raised NameError: "
                          "name 'totals' is not defined; the check graded what the cells set"),
        "99.3": PASSED,
    },
    "99_malformed.ipynb": {
        "99.1": ("wrong", "not the text"),
        "99.2": ("wrong", "regular shape"),
        "99.3": PASSED,
    },
}


def _reader_copy_of_fixture(directory: Path) -> Path:
    copy = directory / FIXTURE.name
    nb = nbformat.read(FIXTURE, as_version=4)
    nbformat.write(reader_copy(nb, "tests/fixtures/solutions/99_fixture.ipynb"), copy)
    return copy


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, object]:
    """Every notebook of these tests graded once, two at a time (each in its own kernel)."""
    reader_fixture = _reader_copy_of_fixture(tmp_path_factory.mktemp("fixture"))
    jobs = {f"corpus/{name}": CORPUS / name for name in EXPECTED}
    for solution in SOLUTIONS:
        jobs[f"solutions/{solution.name}"] = solution
        copy = ROOT / "exercises" / solution.name
        if copy.exists():
            jobs[f"exercises/{solution.name}"] = copy
    jobs[f"solutions/{FIXTURE.name}"] = FIXTURE
    jobs[f"exercises/{FIXTURE.name}"] = reader_fixture
    workers = max(1, min(2, os.cpu_count() or 1))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        # a generous per-cell limit: the lab's training cells must not time out on a busy machine
        futures = {
            key: pool.submit(grade, path, timeout=60 if key.startswith("corpus/") else SHIPPED_TIMEOUT)
            for key, path in jobs.items()
        }
        return {key: future.result() for key, future in futures.items()}


def _verdicts(report) -> dict[str, tuple[str, str]]:
    return {row.exercise: (row.status, row.message) for row in report.rows}


def _assert_matches(report, expected: dict[str, tuple[str, str]]) -> None:
    got = _verdicts(report)
    assert list(got) == list(expected), report.to_text()
    for exercise_id, (status, phrase) in expected.items():
        assert got[exercise_id][0] == status, report.to_text()
        assert phrase in got[exercise_id][1], report.to_text()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_notebook_gets_the_right_verdicts(name, graded):
    report = graded[f"corpus/{name}"]
    assert report.graded, report.to_text()
    _assert_matches(report, EXPECTED[name])
    assert report.passed == sum(status == "passed" for status, _ in EXPECTED[name].values())


def test_a_cell_error_is_reported_next_to_the_verdict(graded):
    """Issue 25: a cell that raised after assigning part of ``answer`` was graded as an ordinary
    wrong answer (an unrelated hint, no note): the exception must show with the verdict."""
    report = graded["corpus/99_error_after_partial_answer.ipynb"]
    rows = {row.exercise: row for row in report.rows}
    error = "raised NameError: name 'totals' is not defined"
    assert rows["99.2"].status == "wrong", report.to_text()
    assert len(rows["99.2"].errors) == 1 and error in rows["99.2"].errors[0], report.to_text()
    assert rows["99.2"].errors[0].startswith("cell 9 (`answer = torch.exp(SCORES)")
    assert rows["99.2"].message.index(error) < rows["99.2"].message.index("should sum to 1")
    assert rows["99.1"].errors == rows["99.3"].errors == []
    assert [note for note in report.notes if error in note] == [
        f"in exercise 99.2, {rows['99.2'].errors[0]}"
    ], report.notes
    data = report.to_dict()
    assert data["exercises"][1]["errors"] == rows["99.2"].errors
    assert any(error in note for note in data["notes"])
    text = report.to_text()
    assert "note: in exercise 99.2, cell 9" in text and "✗ wrong — cell 9" in text, text


def test_every_cell_error_of_an_exercise_is_listed(graded):
    """Errors and their notes for the other broken notebooks: the ZeroDivisionError of 99.1's
    answer cell and the NameErrors of the two cells after it are all named; a stub's
    NotImplementedError is not an error; a function that raises inside the checker is the
    checker's verdict, not a cell error."""
    rows = {row.exercise: row for row in graded["corpus/99_exception_in_answer.ipynb"].rows}
    assert [e.split(" raised ")[1].split(":")[0] for e in rows["99.1"].errors] == [
        "ZeroDivisionError", "NameError", "NameError"
    ], rows["99.1"]
    assert all(row.errors == [] for row in graded["corpus/99_stubs.ipynb"].rows)
    assert not graded["corpus/99_stubs.ipynb"].notes
    assert all(row.errors == [] for row in graded["corpus/99_function_raises.ipynb"].rows)
    text = graded["corpus/99_exception_in_answer.ipynb"].to_text()
    assert "! cell 7 (`ex1(answer)`) raised NameError" in text, text


def test_an_endless_loop_times_out_and_grading_goes_on():
    # 30 s: long enough for the import cells on a loaded 2-core machine (10 s timed out there)
    report = grade(CORPUS / "99_infinite_loop.ipynb", timeout=30)
    assert report.graded, report.to_text()
    _assert_matches(
        report, {"99.1": PASSED, "99.2": ("timed out", "time limit"), "99.3": PASSED}
    )


def test_invalid_json_still_gives_a_report():
    report = grade(CORPUS / "99_invalid_json.ipynb")
    assert not report.graded
    assert "not valid notebook JSON" in report.problem
    assert "could not be graded" in report.to_text()


def test_invalid_json_lists_the_chapters_exercises_as_errors(tmp_path):
    broken = tmp_path / "Copy of 02_soft_dictionary.ipynb"
    broken.write_text('{"cells": [', encoding="utf-8")
    report = grade(broken)
    assert not report.graded
    assert [row.exercise for row in report.rows] == sorted(registered_checkers("02"), key=_key)
    assert {row.status for row in report.rows} == {"error"}
    assert all("not valid notebook JSON" in row.message for row in report.rows)


def _key(exercise_id: str) -> tuple[int, ...]:
    return tuple(int(part) for part in exercise_id.split("."))


def test_deleted_exercises_are_found_through_the_registered_checkers(tmp_path):
    """Solution notebooks carry no ``tformer`` metadata: the registry alone reveals the gap."""
    nb = nbformat.read(ROOT / "solutions" / "02_soft_dictionary.ipynb", as_version=4)
    found = sections(nb)
    last, before_last = found[-1], found[-2]
    drop = set(last.cell_indices) | set(before_last.check_indices)
    nb.cells = [cell for index, cell in enumerate(nb.cells) if index not in drop]
    path = tmp_path / "02_soft_dictionary.ipynb"
    nbformat.write(nb, path)
    rows = _verdicts(grade(path))
    assert rows[last.exercise_id][0] == "not attempted"
    assert "not in the notebook" in rows[last.exercise_id][1]
    assert rows[before_last.exercise_id][0] == "error"
    assert "checks.ch02." in rows[before_last.exercise_id][1]
    changed = (last.exercise_id, before_last.exercise_id)
    others = [status for key, (status, _) in rows.items() if key not in changed]
    assert others and set(others) == {"passed"}


# ---------------------------------------------------------------------------------------------
# The command line


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tformer.grade", *args],
        capture_output=True, text=True, timeout=600, cwd=cwd,
    )


def test_cli_prints_a_table_and_exits_zero_whatever_the_score():
    result = _cli(str(CORPUS / "99_wrong_answers.ipynb"))
    assert result.returncode == 0, result.stderr
    assert "Score: 0/3 passed (3 wrong)" in result.stdout
    assert "99.2" in result.stdout and "✗ wrong — " in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_cli_json_report():
    result = _cli(str(CORPUS / "99_deleted_cells.ipynb"), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["graded"] is True
    counts = {"passed": 1, "error": 1, "not attempted": 1}
    assert report["score"] == {"passed": 1, "total": 3, "counts": counts}
    assert [row["status"] for row in report["exercises"]] == ["passed", "error", "not attempted"]


def test_cli_exit_status_says_whether_grading_ran(tmp_path):
    invalid = _cli(str(CORPUS / "99_invalid_json.ipynb"), "--json")
    assert invalid.returncode == 1 and json.loads(invalid.stdout)["graded"] is False
    missing = _cli(str(tmp_path / "nowhere.ipynb"))
    assert missing.returncode == 1 and "no such file" in missing.stdout
    not_text = tmp_path / "03_binary.ipynb"
    not_text.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe")
    assert _cli(str(not_text)).returncode == 1
    assert _cli().returncode == 2  # usage error: no notebook given
    assert _cli(str(CORPUS / "99_solved.ipynb"), "--timeout", "-1").returncode == 2


def test_a_kernel_that_cannot_start_gives_a_report():
    report = grade(CORPUS / "99_solved.ipynb", kernel_name="no-such-kernel")
    assert not report.graded and "could not start a Python kernel" in report.problem
    assert [row.status for row in report.rows] == ["error"] * 3


def test_grade_colab_grades_the_notebook_the_front_end_hands_over(monkeypatch, capsys):
    """Colab's front end is simulated: it hands over the open notebook as JSON."""
    import types

    from tformer.grade import grade_colab

    assert grade_colab() == 2 and "Colab only" in capsys.readouterr().out
    content = json.loads((CORPUS / "99_wrong_answers.ipynb").read_text(encoding="utf-8"))
    message = types.SimpleNamespace(blocking_request=lambda *args, **kwargs: {"ipynb": content})
    colab = types.ModuleType("google.colab")
    colab._message = message
    google = types.ModuleType("google")
    google.colab = colab
    monkeypatch.setitem(sys.modules, "google", google)
    monkeypatch.setitem(sys.modules, "google.colab", colab)
    monkeypatch.setitem(sys.modules, "google.colab._message", message)
    assert grade_colab() == 0
    out = capsys.readouterr().out
    assert "Grading this notebook (chapter 99, 3 exercises)" in out
    assert "Score: 0/3 passed (3 wrong)" in out


def test_chapter_two_has_checkers():
    """The two tests above need chapter 2's checkers: a broken or empty module must fail here,
    not turn them into skips."""
    assert len(registered_checkers("02")) >= 5


def test_console_script_is_installed_and_runs():
    """The installed ``tformer-grade`` command (entry point metadata of the installed package, not
    the text of pyproject.toml) starts the grader."""
    from importlib.metadata import entry_points

    (script,) = [ep for ep in entry_points(group="console_scripts") if ep.name == "tformer-grade"]
    from tformer.grade import main

    assert script.load() is main
    ran = subprocess.run(
        [sys.executable, "-c", "import sys; from tformer.grade import main; sys.exit(main())", "--help"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert ran.returncode == 0 and "usage" in ran.stdout.lower(), ran.stderr


class _BrokenCheckers:
    """An import hook under which ``tformer.checks.ch99`` exists but raises when imported."""

    def find_spec(self, name, path=None, target=None):
        if name != "tformer.checks.ch99":
            return None
        import importlib.util

        class Loader:
            def create_module(self, spec):
                return None

            def exec_module(self, module):
                raise ImportError("cannot import name 'softmax' from 'tformer.attention'")

        return importlib.util.spec_from_loader(name, Loader())


def test_a_missing_checkers_module_means_no_registered_exercises():
    assert registered_checkers("99") == {}


def test_a_broken_checkers_module_is_reported_not_hidden(monkeypatch):
    monkeypatch.setattr(sys, "meta_path", [_BrokenCheckers(), *sys.meta_path])
    monkeypatch.delitem(sys.modules, "tformer.checks.ch99", raising=False)
    with pytest.raises(ImportError, match="cannot import name 'softmax'"):
        registered_checkers("99")
    report = grade(CORPUS / "99_solved.ipynb")
    assert any(
        "checkers of chapter 99 could not be loaded" in note and "softmax" in note for note in report.notes
    ), report.notes
    assert report.graded and [row.exercise for row in report.rows] == ["99.1", "99.2", "99.3"]


# ---------------------------------------------------------------------------------------------
# Shipped notebooks: full marks for solutions/, zero for exercises/


def _ids(paths):
    return [path.stem for path in paths]


@pytest.mark.parametrize("solution", [*SOLUTIONS, FIXTURE], ids=_ids([*SOLUTIONS, FIXTURE]))
def test_solutions_get_full_marks(solution, graded):
    report = graded[f"solutions/{solution.name}"]
    assert report.graded and not report.problem, report.to_text()
    assert report.total >= 1
    assert report.passed == report.total, report.to_text()
    assert not report.notes, report.to_text()
    chapter = solution.name[:2]
    registered = set(registered_checkers(chapter))
    assert registered <= {row.exercise for row in report.rows}


@pytest.mark.parametrize("solution", [*SOLUTIONS, FIXTURE], ids=_ids([*SOLUTIONS, FIXTURE]))
def test_shipped_exercises_get_zero_all_not_attempted(solution, graded):
    copy = ROOT / "exercises" / solution.name
    assert solution == FIXTURE or copy.exists(), f"{copy.name} is missing: run `make exercises`"
    report = graded[f"exercises/{solution.name}"]
    assert report.graded and not report.problem, report.to_text()
    assert report.total >= 1 and report.passed == 0
    assert {row.status for row in report.rows} == {"not attempted"}, report.to_text()
    assert not report.notes, report.to_text()  # the reader's copy runs cleanly as shipped


def test_the_text_report_shows_titles_without_math_markers():
    from tformer.grade import Report, Row, plain_title

    assert plain_title("Top-$k$ with temperature") == "Top-k with temperature"
    assert plain_title("The score matrix at $T = 8{,}192$") == "The score matrix at T = 8,192"
    report = Report("x.ipynb", "11", True, [Row("11.2", "The score matrix at $T = 8{,}192$", "passed")])
    assert "11.2   The score matrix at T = 8,192" in report.to_text()
    assert report.to_dict()["exercises"][0]["title"] == "The score matrix at $T = 8{,}192$"
