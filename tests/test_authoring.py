"""Exercise authoring: solutions/ → exercises/ (reader copies) and book/exercises/ (pages).

Also proves the regression net: changing one stored answer output in a solution notebook makes
``pytest --nbval-lax`` fail with a readable diff.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tformer import authoring
from tformer.authoring import (
    AuthoringError,
    book_page,
    generate,
    reader_copy,
    reader_source,
    sections,
    solution_source,
)

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "solutions" / "99_fixture.ipynb"
SANITIZE = ROOT / "tests" / "nbval_sanitize.cfg"


@pytest.fixture
def solution():
    return nbformat.read(FIXTURE, as_version=4)


@pytest.fixture
def repo(tmp_path):
    """A miniature repository: _config.yml with another repository URL, the fixture solution."""
    (tmp_path / "solutions").mkdir()
    shutil.copy(FIXTURE, tmp_path / "solutions" / FIXTURE.name)
    (tmp_path / "_config.yml").write_text(
        "repository:\n  url: https://github.com/example-org/example-book/\n  branch: draft\n",
        encoding="utf-8",
    )
    return tmp_path


# ---------------------------------------------------------------------------------------------
# The repository itself


def test_generated_files_are_up_to_date():
    """exercises/ and book/exercises/ match solutions/ (run `make exercises` if this fails)."""
    drifted = [str(path.relative_to(ROOT)) for path in generate(ROOT, check=True)]
    assert drifted == [], "out of date — run `python -m tformer.authoring`: " + ", ".join(drifted)


def test_check_command_reports_drift_with_exit_status(repo, capsys):
    def check() -> tuple[int, str]:
        status = authoring.main(["--check", "--root", str(repo)])
        return status, capsys.readouterr().out

    status, out = check()
    assert status == 1
    assert "out of date: exercises/99_fixture.ipynb" in out
    assert "out of date: book/exercises/99_fixture.md" in out
    assert authoring.main(["--root", str(repo)]) == 0
    assert capsys.readouterr().out.count("wrote: ") == 2
    assert (repo / "exercises" / "99_fixture.ipynb").exists()
    assert check() == (0, "exercise notebooks and pages are up to date\n")
    # editing the solution makes both generated files stale
    path = repo / "solutions" / "99_fixture.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells[3].source += "\n\nOne more sentence."
    nbformat.write(nb, path)
    status, out = check()
    assert status == 1 and out.count("out of date") == 2
    # a generated file without a solution is reported too
    (repo / "exercises" / "98_orphan.ipynb").write_text("{}", encoding="utf-8")
    assert "98_orphan" in check()[1]


def test_the_module_runs_as_a_command(repo):
    command = [sys.executable, "-m", "tformer.authoring", "--root", str(repo), "--check"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 1 and "out of date" in result.stdout, result.stderr


# ---------------------------------------------------------------------------------------------
# The reader's copy


def test_reader_copy_replaces_solutions_by_stubs_and_keeps_everything_else(solution):
    copy = reader_copy(solution, "solutions/99_fixture.ipynb")
    dropped = [cell for cell in solution.cells if "solution" in cell.metadata.get("tags", [])]
    assert len(dropped) == 1 and len(copy.cells) == len(solution.cells) - 1
    kept = [cell for cell in solution.cells if cell not in dropped]
    changed = []
    for original, cell in zip(kept, copy.cells, strict=True):
        assert cell.get("id") == original.get("id")
        assert cell.metadata == original.metadata
        assert cell.cell_type == original.cell_type
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
        if cell.source != original.source:
            changed.append(cell.source)
    assert changed == [
        "answer = None  # YOUR ANSWER HERE",
        "answer = None  # YOUR ANSWER HERE",
        'def double(x):\n    """Twice x."""\n    raise NotImplementedError  # YOUR CODE HERE',
    ]
    assert "BEGIN SOLUTION" not in json.dumps(copy)
    entry = copy.metadata["tformer"]
    assert entry["chapter"] == "99"
    assert [item["id"] for item in entry["exercises"]] == ["99.1", "99.2", "99.3"]
    assert [item["check"] for item in entry["exercises"]] == ["ex1(answer)", "ex2(answer)", "ex3(double)"]
    assert copy.metadata["kernelspec"] == solution.metadata["kernelspec"]
    nbformat.validate(copy)


def test_stub_rules():
    used = {"answer", "weights"}
    top = "# BEGIN SOLUTION\nscores = q @ k.T\nweights = softmax(scores)\nanswer = weights[0]\n# END SOLUTION"
    assert reader_source(top, used) == (
        "weights = None  # YOUR ANSWER HERE\nanswer = None  # YOUR ANSWER HERE"
    )
    custom = '# BEGIN SOLUTION stub="answer = ...  # a tensor of shape (3,)"\nanswer = 1\n# END SOLUTION'
    assert reader_source(custom, used) == "answer = ...  # a tensor of shape (3,)"
    lines = '    # BEGIN SOLUTION stub="x = 0\\nreturn x"\n    return 1\n    # END SOLUTION'
    assert reader_source("def f():\n" + lines, used) == "def f():\n    x = 0\n    return x"
    in_loop = "for i in range(3):\n    # BEGIN SOLUTION\n    total = i\n    # END SOLUTION\nprint(1)"
    assert reader_source(in_loop, set()) == "for i in range(3):\n    pass  # YOUR CODE HERE\nprint(1)"
    whole_def = (
        "# BEGIN SOLUTION\n@torch.no_grad()\ndef attend(q, k):\n    \"\"\"Doc.\"\"\"\n"
        "    return q @ k.T\n# END SOLUTION\nprint(2)"
    )
    assert reader_source(whole_def, set()) == (
        '@torch.no_grad()\ndef attend(q, k):\n    """Doc."""\n'
        "    raise NotImplementedError  # YOUR CODE HERE\nprint(2)"
    )
    nothing_used = "# BEGIN SOLUTION\nhelper = 3\n# END SOLUTION"
    assert reader_source(nothing_used, set()) == "# YOUR CODE HERE"
    assert reader_source("x = 1\n", set()) == "x = 1\n"
    assert solution_source(top) == "scores = q @ k.T\nweights = softmax(scores)\nanswer = weights[0]"


@pytest.mark.parametrize(
    "header",
    [
        "def attend(\n    queries,\n    keys,\n) -> torch.Tensor:\n",
        "def attend(queries,\n           keys):\n",
        'async def attend(\n    queries, keys\n):\n    """Doc\n    over two lines."""\n',
        "@torch.no_grad()\ndef attend(\n    queries: torch.Tensor,\n    keys: torch.Tensor,\n):\n",
    ],
)
def test_a_multi_line_signature_keeps_the_function_and_stubs_its_body(header):
    """Regression: a region in a function whose ``def`` spans several lines became ``pass`` (the
    function silently returned None in the reader's copy); it must become the code stub."""
    body = "    # BEGIN SOLUTION\n    scores = queries @ keys.T\n    return scores\n    # END SOLUTION\n"
    result = reader_source(header + body + "print(attend)\n", {"attend"})
    assert result == header + "    raise NotImplementedError  # YOUR CODE HERE\nprint(attend)\n"
    compile(result, "<reader copy>", "exec")
    whole = "# BEGIN SOLUTION\n" + header + "    return queries @ keys.T\n# END SOLUTION\n"
    assert reader_source(whole, {"attend"}) == (
        header + "    raise NotImplementedError  # YOUR CODE HERE\n"
    )
    in_loop = header + "    for query in queries:\n" + body.replace("    ", "        ")
    assert reader_source(in_loop, set()) == (
        header + "    for query in queries:\n        pass  # YOUR CODE HERE\n"
    )


def test_only_names_read_by_the_same_exercise_are_stubbed():
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("## Exercise 98.1 — One"),
            nbformat.v4.new_code_cell("# BEGIN SOLUTION\nweights = 1\nanswer = weights\n# END SOLUTION"),
            nbformat.v4.new_code_cell("check(answer)"),
            nbformat.v4.new_markdown_cell("## Exercise 98.2 — Two"),
            nbformat.v4.new_code_cell("weights = 2\nprint(weights)"),
        ]
    )
    assert reader_copy(nb).cells[1].source == "answer = None  # YOUR ANSWER HERE"


@pytest.mark.parametrize(
    "source, problem",
    [
        ("# BEGIN SOLUTION\nanswer = 1", "never closed"),
        ("answer = 1\n# END SOLUTION", "without BEGIN"),
        ("# BEGIN SOLUTION\n# BEGIN SOLUTION\n# END SOLUTION", "nested"),
        ("# BEGIN SOLUTION\nanswer = (\n# END SOLUTION", "does not parse"),
    ],
)
def test_malformed_markers_are_reported(source, problem):
    with pytest.raises(AuthoringError, match=problem):
        reader_source(source, {"answer"})


def test_sections_follow_headings(solution):
    found = sections(solution)
    assert [(s.exercise_id, s.title) for s in found] == [
        ("99.1", "A logarithm"), ("99.2", "Softmax weights"), ("99.3", "A function"),
    ]
    assert all(len(s.check_indices) == 1 and len(s.answer_indices) == 1 for s in found)
    last = found[-1]
    assert "summary()" not in "".join(solution.cells[i].source for i in last.cell_indices)


# ---------------------------------------------------------------------------------------------
# The book page


def test_book_page_has_statement_hints_folded_solution_and_launch_links(solution, repo):
    page = book_page(solution, "99_fixture", repo)
    colab = (
        "https://colab.research.google.com/github/example-org/example-book/blob/draft/"
        "exercises/99_fixture.ipynb"
    )
    binder = "https://mybinder.org/v2/gh/example-org/example-book/draft?labpath=exercises%2F99_fixture.ipynb"
    assert f"[**Open in Colab**]({colab})" in page
    assert f"[**Open in Binder**]({binder})" in page
    assert page.count("{exercise}") == 3 and page.count("{solution}") == 3
    assert page.count(":class: dropdown") == 3
    assert "## Exercise 99.1 — A logarithm" in page
    assert "{admonition} Hint\n:class: hint dropdown\n\nUse `math.log`." in page
    # the worked solution sits inside the solution directive, the stub inside the exercise
    solution_block = re.search(r"(`{4,})\{solution\} ex-99-2\n(.*?)\n\1\n", page, re.S)[2]
    exercise_block = re.search(r"(`{4,})\{exercise\}\n:label: ex-99-2\n(.*?)\n\1\n", page, re.S)[2]
    assert "exponentials / exponentials.sum" in solution_block
    assert "Each row of the weights sums to 1" in solution_block
    assert "0.2689" in solution_block  # the stored answer output
    assert "answer = None  # YOUR ANSWER HERE" in exercise_block
    assert "exponentials" not in exercise_block
    assert "BEGIN SOLUTION" not in page
    # a markdown page without notebook front matter: the build never executes it
    assert not page.startswith("---") and "kernelspec" not in page


def test_book_page_defaults_to_the_books_repository(solution, tmp_path):
    page = book_page(solution, "99_fixture", tmp_path)  # no _config.yml there
    assert "github/attention-executed/attention-executed/blob/main/exercises/99_fixture.ipynb" in page


def test_doc_links_are_rewritten_for_the_page():
    text = "See {doc}`the chapter <../book/02_soft_dictionary>` and {doc}`/book/intro`."
    assert authoring._fix_doc_links(text, "solutions") == (
        "See {doc}`the chapter </book/02_soft_dictionary>` and {doc}`/book/intro`."
    )


def test_reader_notebooks_have_plain_links_not_roles():
    """Jupyter and Colab show {doc}/{ref} roles as raw markup: the reader's copy links to the
    chapter notebooks on the repository's site instead."""
    text = ("See {doc}`the chapter <../book/05_masks>`, {doc}`../book/02_soft_dictionary` and "
            "{ref}`its section <ch07-gqa>`.")
    out = authoring.plain_links(text)
    base = "https://github.com/attention-executed/attention-executed/blob/main/book/"
    assert out == (f"See [the chapter]({base}05_masks.ipynb), [Attention as a soft dictionary]"
                   f"({base}02_soft_dictionary.ipynb) and [its section]({base}07_multihead.ipynb).")
    for notebook in sorted((ROOT / "exercises").glob("*.ipynb")):
        for cell in nbformat.read(notebook, as_version=4).cells:
            if cell.cell_type == "markdown":
                assert not re.search(r"\{(doc|ref|term|glue)[^}]*\}`", cell.source), notebook.name


def test_book_page_builds_without_warnings(solution, tmp_path):
    """Sphinx (MyST + sphinx-exercise, as in the book) renders the page with no warning."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "conf.py").write_text(
        "extensions = ['myst_nb', 'sphinx_exercise', 'sphinx_togglebutton']\n"
        "myst_enable_extensions = ['dollarmath', 'amsmath', 'colon_fence']\n"
        "exclude_patterns = ['_build']\nroot_doc = 'index'\n",
        encoding="utf-8",
    )
    (source / "index.md").write_text(book_page(solution, "99_fixture", ROOT), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-W", "-q", "-E", "-D", "nb_execution_mode=off",
         str(source), str(tmp_path / "html")],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    html = (tmp_path / "html" / "index.html").read_text(encoding="utf-8")
    assert "Open in Colab" in html and "dropdown" in html


# ---------------------------------------------------------------------------------------------
# nbval: a changed stored answer fails with a readable diff


def _nbval(notebook: Path, cwd: Path) -> subprocess.CompletedProcess:
    args = [sys.executable, "-m", "pytest", "--nbval-lax", str(notebook), "-p", "no:cacheprovider",
            "-p", "no:randomly", "--rootdir", str(cwd), "-c", "/dev/null", "-q"]
    if SANITIZE.exists():
        args += ["--nbval-sanitize-with", str(SANITIZE)]
    return subprocess.run(args, capture_output=True, text=True, timeout=600, cwd=cwd)


def test_changing_a_stored_answer_makes_nbval_fail_with_a_diff(tmp_path):
    notebook = tmp_path / FIXTURE.name
    shutil.copy(FIXTURE, notebook)
    untouched = _nbval(notebook, tmp_path)
    assert untouched.returncode == 0, untouched.stdout + untouched.stderr

    nb = nbformat.read(notebook, as_version=4)
    answer_cell = next(c for c in nb.cells if "nbval-check-output" in c.metadata.get("tags", []))
    stored = answer_cell.outputs[0]["text"]
    assert stored == "1.0986\n"
    answer_cell.outputs[0]["text"] = "1.0987\n"
    nbformat.write(nb, notebook)
    tampered = _nbval(notebook, tmp_path)
    report = tampered.stdout + tampered.stderr
    assert tampered.returncode != 0, report
    assert "1 failed" in report
    assert "1.0987" in report and "1.0986" in report  # expected vs obtained, side by side
    assert "show(answer)" in report  # the cell that failed is shown
