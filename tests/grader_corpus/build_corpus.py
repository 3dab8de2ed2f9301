"""Build the grader's test fixtures: a tiny solution notebook and a corpus of broken reader copies.

    .venv/bin/python tests/grader_corpus/build_corpus.py [FILE …]

writes

* ``tests/fixtures/solutions/99_fixture.ipynb`` — a three-exercise solution notebook in the
  book's format (heading, solution markers, answer cell tagged ``nbval-check-output``, check cell
  tagged ``check``), executed so its answer outputs are stored. Its checkers are defined in the
  notebook itself with :mod:`tformer.checks.core`, so the fixture does not depend on any chapter;
* ``tests/grader_corpus/99_*.ipynb`` — the reader's copy generated from it by
  :mod:`tformer.authoring`, then broken in one way per file (syntax error, endless loop, dying
  kernel, invalid JSON, deleted cells, wrong answers, NaN, an exception in the reader's function,
  …). ``tests/test_grader.py`` states the verdict each one must get.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from tformer.authoring import reader_copy, sections

HERE = Path(__file__).resolve().parent
FIXTURE = HERE.parent / "fixtures" / "solutions" / "99_fixture.ipynb"

SETUP = """\
# Setup: on Colab, install the book's package `tformer`; elsewhere it is already installed.
import sys

if "google.colab" in sys.modules:
    %pip install -q "tformer @ git+https://github.com/attention-executed/attention-executed@main\""""

CHECKERS = '''\
import math

import torch

from tformer.checks.core import call_reader, exercise, expect_number, expect_tensor, show, show_call

SCORES = torch.tensor([[1.0, 2.0], [0.0, 0.0]])


@exercise("99.1", "A logarithm")
def ex1(answer):
    expect_number(answer, math.log(3), name="log 3", rounding_tol=5e-3)


@exercise("99.2", "Softmax weights")
def ex2(answer):
    expected = torch.softmax(SCORES, dim=-1)
    expect_tensor(answer, expected, name="the weights", axes=("queries", "keys"), rows_sum_to_one=True)


@exercise("99.3", "A function")
def ex3(answer):
    for x in (0.0, 1.0, 2.5):
        expect_number(call_reader(answer, x, name="double"), 2 * x, name=f"double({x})")'''


def _code(source: str, *tags: str):
    cell = nbformat.v4.new_code_cell(source)
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


def _markdown(source: str, *tags: str):
    cell = nbformat.v4.new_markdown_cell(source)
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


def fixture_notebook():
    cells = [
        _code(SETUP, "hide-cell"),
        _markdown("# Exercises — a test fixture\n\nThree tiny exercises that exercise the tooling."),
        _code(CHECKERS, "hide-input"),
        _markdown(
            "## Exercise 99.1 — A logarithm\n\nCompute $\\ln 3$ and store it in `answer`.\n\n"
            "<details><summary>Hint</summary>\n\nUse `math.log`.\n\n</details>"
        ),
        _code("# BEGIN SOLUTION\nanswer = math.log(3)\n# END SOLUTION"),
        _code("show(answer)", "nbval-check-output"),
        _code("ex1(answer)", "check"),
        _markdown(
            "## Exercise 99.2 — Softmax weights\n\nApply the softmax to each row of `SCORES` "
            "(queries are rows, keys are columns)."
        ),
        _code(
            "# BEGIN SOLUTION\nexponentials = torch.exp(SCORES)\n"
            "answer = exponentials / exponentials.sum(dim=-1, keepdim=True)\n# END SOLUTION"
        ),
        _markdown("Each row of the weights sums to 1 because we divide by the row sum.", "solution"),
        _code("show(answer)", "nbval-check-output"),
        _code("ex2(answer)", "check"),
        _markdown("## Exercise 99.3 — A function\n\nWrite `double(x)` returning `2 * x`."),
        _code(
            'def double(x):\n    """Twice x."""\n'
            "    # BEGIN SOLUTION\n    return 2 * x\n    # END SOLUTION"
        ),
        _code("show_call(double, 2.5)", "nbval-check-output"),
        _code("ex3(double)", "check"),
        _markdown("## Your score"),
        _code("from tformer.checks.core import summary\n\nsummary()"),
    ]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def _cell(nb, exercise_id: str, position: int):
    """The ``position``-th cell of an exercise section (0 = heading)."""
    section = next(s for s in sections(nb) if s.exercise_id == exercise_id)
    return nb.cells[section.cell_indices[position]]


def _answer(nb, exercise_id: str, source: str) -> None:
    _cell(nb, exercise_id, 1).source = source


def corpus(solution_nb) -> dict[str, object]:
    """``{file name: notebook or raw text}`` — one broken reader copy per failure mode."""
    stub = reader_copy(solution_nb, "tests/fixtures/solutions/99_fixture.ipynb")

    def solved():
        nb = nbformat.from_dict(json.loads(json.dumps(stub)))
        _answer(nb, "99.1", "answer = math.log(3)")
        _answer(nb, "99.2", "answer = torch.softmax(SCORES, dim=-1)")
        _cell(nb, "99.3", 1).source = "def double(x):\n    return 2 * x"
        return nb

    out: dict[str, object] = {"99_stubs.ipynb": stub, "99_solved.ipynb": solved()}

    nb = solved()
    _answer(nb, "99.1", "answer = math.log(3")
    out["99_syntax_error.ipynb"] = nb

    nb = solved()
    _answer(nb, "99.2", "answer = 0\nwhile True:\n    answer += 1")
    out["99_infinite_loop.ipynb"] = nb

    nb = solved()
    _answer(nb, "99.1", "import os\n\nos._exit(1)")
    out["99_kernel_death.ipynb"] = nb

    text = nbformat.writes(solved())
    out["99_invalid_json.ipynb"] = text[: len(text) // 2]  # cut in the middle: not JSON

    nb = solved()
    check_22 = _cell(nb, "99.2", 3)  # heading, answer, show, check
    section_3 = next(s for s in sections(nb) if s.exercise_id == "99.3")
    drop = {id(check_22)} | {id(nb.cells[i]) for i in section_3.cell_indices}
    nb.cells = [cell for cell in nb.cells if id(cell) not in drop]
    out["99_deleted_cells.ipynb"] = nb

    nb = solved()
    _answer(nb, "99.1", "answer = 1.1  # ln 3 to two decimals")
    _answer(nb, "99.2", "answer = torch.softmax(SCORES, dim=0)  # over the wrong axis")
    _cell(nb, "99.3", 1).source = "def double(x):\n    return x + 2"
    out["99_wrong_answers.ipynb"] = nb

    nb = solved()
    _answer(nb, "99.1", "answer = float('nan')")
    _answer(
        nb,
        "99.2",
        "masked = SCORES.masked_fill(torch.ones(2, 2, dtype=torch.bool), float('-inf'))\n"
        "answer = torch.softmax(masked, dim=-1)  # every key masked: NaN",
    )
    out["99_nan_answer.ipynb"] = nb

    nb = solved()
    _cell(nb, "99.3", 1).source = 'def double(x):\n    raise ValueError("not today")'
    out["99_function_raises.ipynb"] = nb

    nb = solved()
    _answer(nb, "99.1", "answer = 1 / 0")
    out["99_exception_in_answer.ipynb"] = nb

    nb = solved()  # the cell raises after it assigned part of the answer (issue 25)
    _answer(
        nb,
        "99.2",
        "answer = torch.exp(SCORES)  # the numerators\n"
        "answer = answer / totals  # totals was never defined: NameError",
    )
    out["99_error_after_partial_answer.ipynb"] = nb

    nb = solved()
    _answer(nb, "99.2", "answer = [[0.27, 0.73], [0.5]]  # a ragged list")
    _answer(nb, "99.1", "answer = 'about 1.1'")
    out["99_malformed.ipynb"] = nb
    return out


def main(only: list[str] | None = None) -> None:
    """Execute the fixture and write it and the corpus; with ``only`` (file names), write just
    those corpus files from the committed fixture, leaving the rest untouched."""
    if only:
        nb = nbformat.read(FIXTURE, as_version=4)
        built = corpus(nb)
        for name in only:
            nbformat.write(built[name], HERE / name)
            print(f"wrote {(HERE / name).relative_to(HERE.parent.parent)}")
        return
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    nb = fixture_notebook()
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    for cell in nb.cells:  # keep the stored outputs free of run-specific metadata
        cell.metadata.pop("execution", None)
    nbformat.write(nb, FIXTURE)
    print(f"wrote {FIXTURE.relative_to(HERE.parent.parent)}")
    for name, content in corpus(nb).items():
        path = HERE / name
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            nbformat.write(content, path)
        print(f"wrote {path.relative_to(HERE.parent.parent)}")


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
