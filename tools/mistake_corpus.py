"""Feed the independent learner-mistake corpus to the checkers (issue 22 §4).

``tests/learner_mistakes/chNN.py`` each hold ``MISTAKES``: a list of dicts, written by someone who
had not read the checkers, with

* ``exercise``: the exercise id (``"05.1"``);
* ``mistake``: what the learner did wrong, in a tutor's words;
* ``code``: the learner's answer cell(s), as the learner would type them in the reader's notebook
  (they assign the same names the exercise's answer cell assigns: ``answer``, a function, ...).

For each chapter the solution notebook (``solutions/NN_*.ipynb``) is run in one namespace, cell by
cell, as a reader's kernel would run it. At each exercise, every mistake gets its own copy of the
namespace as it stood at the exercise's heading: the exercise's cells run with the mistake's code
executed right after the answer cells (so it replaces what they assign), then the check cell, whose
:class:`~tformer.checks.core.Verdict` is recorded. The exercise's cells before its first answer
cell (its data, a model it trains) run once; each mistake gets deep copies of what they made. The
solution's own answer then runs, and the notebook goes on.

``python tools/mistake_corpus.py [05 ...] [--json out.json]`` prints one line per mistake;
``--dry`` runs the mistakes' code without any check (for the corpus's authors: a mistake must run).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import importlib.util
import io
import itertools
import json
import linecache
import os
import re
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "learner_mistakes"
SOLUTIONS = ROOT / "solutions"
HEADING = re.compile(r"^#+\s*Exercise\s+(\d\d\.\d+)", re.M)
ANSWER_MARKS = ("# BEGIN SOLUTION", "YOUR ANSWER HERE")


@dataclass
class Outcome:
    """One mistake's verdict: ``status`` is the checker's, or ``"crashed"`` when the mistake's
    own code or a cell of the exercise raised (``message`` then holds the exception)."""

    exercise: str
    mistake: str
    status: str
    message: str
    seconds: float


def load_corpus(chapter: str) -> list[dict[str, str]]:
    path = CORPUS / f"ch{chapter}.py"
    if not path.exists():
        return []
    spec = importlib.util.spec_from_file_location(f"learner_mistakes_ch{chapter}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return list(module.MISTAKES)


def _python(source: str) -> str:
    """A cell's source as plain Python (IPython's magics become ``get_ipython()`` calls, which
    only the set-up cell has, behind its Colab test)."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(source)


_cells = itertools.count()


def _run(source: str, namespace: dict[str, Any]) -> Any:
    """Execute a cell; return the value of its last expression (as a notebook would show it).
    Like IPython, the cell's code is registered in ``linecache`` under its own name, so that
    ``inspect.getsource`` finds a function the cell defines (checkers read a reader's source)."""
    code = _python(source)
    name = f"<cell-{next(_cells)}>"
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    tree = ast.parse(code, name)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, name, "exec"), namespace)  # noqa: S102 - the notebook's own code
    if last is not None:
        return eval(compile(ast.Expression(last.value), name, "eval"), namespace)  # noqa: S307
    return None


def _sections(notebook: dict) -> tuple[list[str], list[tuple[str, list[dict]]]]:
    """The code before the first exercise, and each exercise's cells (id, cells)."""
    preamble: list[str] = []
    sections: list[tuple[str, list[dict]]] = []
    for cell in notebook["cells"]:
        source = "".join(cell["source"])
        heading = HEADING.search(source) if cell["cell_type"] == "markdown" else None
        if heading:
            sections.append((heading[1], []))
        elif cell["cell_type"] == "code":
            if sections:
                sections[-1][1].append(cell)
            else:
                preamble.append(source)
    return preamble, sections


def _is_check(cell: dict) -> bool:
    return "check" in cell.get("metadata", {}).get("tags", [])


def _attempt(cells: list[dict], namespace: dict[str, Any], code: str | None) -> Any:
    """Run one exercise's cells; ``code`` (a mistake) right after its last answer cell. Returns
    the check cell's value (the verdict)."""
    answer_cells = [i for i, cell in enumerate(cells)
                    if any(mark in "".join(cell["source"]) for mark in ANSWER_MARKS)]
    last_answer = answer_cells[-1] if answer_cells else -1
    verdict = None
    for index, cell in enumerate(cells):
        if _is_check(cell):
            verdict = _run("".join(cell["source"]), namespace)
            break
        _run("".join(cell["source"]), namespace)
        if index == last_answer and code is not None:
            _run(code, namespace)
    return verdict


_MISSING = object()


def _split_given(cells: list[dict]) -> tuple[list[dict], list[dict]]:
    """An exercise's cells before its first answer (or check) cell, and the rest."""
    for index, cell in enumerate(cells):
        if _is_check(cell) or any(mark in "".join(cell["source"]) for mark in ANSWER_MARKS):
            return cells[:index], cells[index:]
    return cells, []


def _copy(value: Any) -> Any:
    """A deep copy where one can be made (a mistake may change a model or a tensor in place),
    else the value itself (modules, functions, classes)."""
    if isinstance(value, type) or callable(value) and not hasattr(value, "state_dict"):
        return value
    try:
        return copy.deepcopy(value)
    except Exception:  # noqa: BLE001 - an object that cannot be copied is shared, as before
        return value


def run_chapter(chapter: str, dry: bool = False) -> list[Outcome]:
    corpus = load_corpus(chapter)
    notebook_path = next(SOLUTIONS.glob(f"{chapter}_*.ipynb"))
    notebook = json.loads(notebook_path.read_text(encoding="utf-8"))
    preamble, sections = _sections(notebook)
    known = {eid for eid, _ in sections}
    outcomes = [Outcome(m["exercise"], m["mistake"], "crashed", "no such exercise", 0.0)
                for m in corpus if m["exercise"] not in known]
    namespace: dict[str, Any] = {"__name__": "__main__"}
    os.environ.setdefault("MPLBACKEND", "Agg")
    cwd = Path.cwd()
    os.chdir(SOLUTIONS)  # a notebook runs in its own folder
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            for source in preamble:
                _run(source, namespace)
        for exercise_id, cells in sections:
            # The cells before the first answer cell (data, a model to train) do not depend on
            # the answer: they run once, and each mistake gets its own copies of what they made.
            given, cells = _split_given(cells)
            base = dict(namespace)
            with contextlib.redirect_stdout(io.StringIO()):
                for cell in given:
                    _run("".join(cell["source"]), base)
            made = {name: value for name, value in base.items()
                    if namespace.get(name, _MISSING) is not value}
            for mistake in (m for m in corpus if m["exercise"] == exercise_id):
                trial = {**base, **{name: _copy(value) for name, value in made.items()}}
                start = time.perf_counter()
                try:
                    with contextlib.redirect_stdout(io.StringIO()):
                        if dry:
                            _attempt([c for c in cells if not _is_check(c)], trial,
                                     mistake["code"])
                            verdict = None
                        else:
                            verdict = _attempt(cells, trial, mistake["code"])
                except Exception as error:  # noqa: BLE001 - reported, not hidden
                    outcomes.append(Outcome(exercise_id, mistake["mistake"], "crashed",
                                            f"{type(error).__name__}: {error}",
                                            time.perf_counter() - start))
                    continue
                seconds = time.perf_counter() - start
                if dry:
                    outcomes.append(Outcome(exercise_id, mistake["mistake"], "ran", "", seconds))
                elif verdict is None or not hasattr(verdict, "status"):
                    outcomes.append(Outcome(exercise_id, mistake["mistake"], "crashed",
                                            f"the check cell returned {verdict!r}", seconds))
                else:
                    outcomes.append(Outcome(exercise_id, mistake["mistake"], verdict.status,
                                            verdict.message, seconds))
            with contextlib.redirect_stdout(io.StringIO()):
                _attempt(cells, base, None)  # the solution, so later exercises can build on it
            namespace = base
    finally:
        os.chdir(cwd)
    return outcomes


def chapters() -> list[str]:
    return sorted(path.name[:2] for path in SOLUTIONS.glob("[0-9][0-9]_*.ipynb"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapters", nargs="*", help="two-digit chapter numbers (default: all)")
    parser.add_argument("--json", type=Path, help="write every outcome to this file")
    parser.add_argument("--dry", action="store_true", help="run the mistakes, no checks")
    args = parser.parse_args(argv)
    outcomes: list[Outcome] = []
    for chapter in args.chapters or chapters():
        results = run_chapter(chapter, dry=args.dry)
        outcomes += results
        for o in results:
            print(f"{o.exercise} [{o.status}] {o.mistake}\n    -> {o.message}", flush=True)
    if args.json:
        args.json.write_text(json.dumps([asdict(o) for o in outcomes], indent=1,
                                        ensure_ascii=False) + "\n", encoding="utf-8")
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
    print(f"{len(outcomes)} mistakes: {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
