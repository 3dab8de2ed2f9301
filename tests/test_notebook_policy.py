"""Policy tests: the rules of CONTRIBUTING.md that keep the notebooks, the toc and the environment
consistent. Each test names the offending files in its message."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from setup_cell import SETUP_TAG, notebooks, setup_cell_source  # noqa: E402
from toc import source_of, toc_docnames  # noqa: E402

ALL_NOTEBOOKS = notebooks()
BOOK_NOTEBOOKS = sorted((ROOT / "book").rglob("*.ipynb"))
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def _first_code_cell(notebook: nbformat.NotebookNode):
    return next((cell for cell in notebook.cells if cell.cell_type == "code"), None)


# --- the setup cell -------------------------------------------------------------------------


def test_setup_cell_uses_configured_repository_and_the_release_tag():
    """A chapter's actual first cell installs the configured repository at the release tag
    ``v<pyproject version>``, never the branch: read from _config.yml and pyproject.toml here,
    independently of tools/setup_cell.py, which writes the cell."""
    import tomllib

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    url = config["repository"]["url"].removesuffix(".git").rstrip("/")
    branch = config["repository"].get("branch", "main")
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    for path in (BOOK_NOTEBOOKS[0], SOLUTIONS[0]):
        source = _first_code_cell(_read(path)).source
        assert re.search(rf'^REPOSITORY = "{re.escape(url)}"$', source, re.M), (_rel(path), url)
        assert re.search(rf'VERSION = "{re.escape(version)}"', source), (_rel(path), version)
        assert 'git+{REPOSITORY}@v{VERSION}"' in source, _rel(path)
        assert f"@{branch}" not in source, _rel(path)


def test_contributing_shows_the_canonical_setup_cell():
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert setup_cell_source() in text, (
        "CONTRIBUTING.md's setup cell differs from tools/setup_cell.py (built from _config.yml)"
    )


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=_rel)
def test_setup_cell_is_first_code_cell(path: Path):
    cell = _first_code_cell(_read(path))
    assert cell is not None, f"{_rel(path)} has no code cell"
    assert cell.source.strip() == setup_cell_source(), (
        f"{_rel(path)}: the first code cell is not the canonical setup cell "
        "(print it with `.venv/bin/python tools/setup_cell.py`)"
    )
    assert SETUP_TAG in cell.metadata.get("tags", []), f"{_rel(path)}: setup cell lacks {SETUP_TAG}"


def test_all_setup_cells_identical():
    sources = {}
    for path in ALL_NOTEBOOKS:
        cell = _first_code_cell(_read(path))
        sources.setdefault(cell.source.strip() if cell else "", []).append(_rel(path))
    assert len(sources) <= 1, f"setup cells differ: {list(sources.values())}"


# --- outputs: chapters without, solutions with --------------------------------------------


@pytest.mark.parametrize("path", BOOK_NOTEBOOKS, ids=_rel)
def test_book_notebooks_have_no_outputs(path: Path):
    dirty = [
        index
        for index, cell in enumerate(_read(path).cells)
        if cell.cell_type == "code" and (cell.get("outputs") or cell.get("execution_count"))
    ]
    assert not dirty, f"{_rel(path)}: cells {dirty} carry outputs; commit book notebooks cleared"


@pytest.mark.parametrize("path", SOLUTIONS, ids=_rel)
def test_solutions_keep_answer_outputs(path: Path):
    checked = [
        cell
        for cell in _read(path).cells
        if cell.cell_type == "code" and "nbval-check-output" in cell.metadata.get("tags", [])
    ]
    assert checked, f"{_rel(path)}: no cell tagged nbval-check-output"
    empty = [cell.source.splitlines()[0] for cell in checked if not cell.get("outputs")]
    assert not empty, f"{_rel(path)}: answer cells without stored output: {empty}"


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=_rel)
def test_kernelspec_is_python3(path: Path):
    kernelspec = _read(path).metadata.get("kernelspec", {})
    assert kernelspec.get("name") == "python3", f"{_rel(path)}: kernelspec {kernelspec!r}"


# --- table of contents ------------------------------------------------------------------------


def test_every_toc_entry_exists():
    missing = [name for name in toc_docnames() if source_of(name) is None]
    assert not missing, f"_toc.yml lists files that do not exist: {missing}"


def test_every_chapter_notebook_is_in_the_toc():
    listed = set(toc_docnames())
    chapters = sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))
    absent = [_rel(path) for path in chapters if _rel(path).removesuffix(".ipynb") not in listed]
    assert not absent, f"chapter notebooks missing from _toc.yml: {absent}"


def test_each_chapter_is_followed_by_its_exercise_page():
    names = toc_docnames()
    for index, name in enumerate(names):
        match = re.fullmatch(r"book/(\d\d_\w+)", name)
        if match:
            assert names[index + 1] == f"book/exercises/{match.group(1)}", (
                f"{name} is not followed by its exercise page in _toc.yml"
            )


CHAPTERS = sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("path", CHAPTERS, ids=_rel)
def test_chapter_title_is_not_numbered_by_hand(path: Path):
    """The toc numbers chapters (numbered: 1); a title "7. Multi-head …" would read "7. 7. …"."""
    titles = [
        line
        for cell in _read(path).cells
        if cell.cell_type == "markdown"
        for line in cell.source.splitlines()
        if line.startswith("# ")
    ]
    assert titles, f"{_rel(path)} has no '# ' title"
    assert not re.match(r"#\s+(Chapter\s+)?\d+[.:]", titles[0]), (
        f"{_rel(path)}: title {titles[0]!r} carries its own number; the book numbers chapters"
    )


# --- environment --------------------------------------------------------------------------------


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            name, _, version = line.partition("==")
            assert version, f"{_rel(path)}: '{line}' is not pinned with =="
            pins[name.lower().replace("_", "-")] = version
    return pins


def test_requirements_pin_everything_and_cpu_torch():
    pins = _pins(ROOT / "requirements.txt")
    assert pins["torch"] == "2.13.0"
    for name in ("jupyter-book", "myst-nb", "nbval", "numpy", "matplotlib", "ipywidgets", "pytest"):
        assert name in pins, f"requirements.txt does not pin {name}"


def test_binder_environment_matches_requirements():
    binder = _pins(ROOT / "binder" / "requirements.txt")
    main = _pins(ROOT / "requirements.txt")
    assert binder["torch"] == main["torch"] + "+cpu", "Binder must install the CPU build of torch"
    text = (ROOT / "binder" / "requirements.txt").read_text(encoding="utf-8")
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in text
    differing = {
        name: (version, main.get(name))
        for name, version in binder.items()
        if name != "torch" and main.get(name) != version
    }
    assert not differing, f"binder/requirements.txt pins differ from requirements.txt: {differing}"


def test_config_fails_loudly():
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert config["only_build_toc_files"] is True
    assert config["execute"]["execute_notebooks"] == "cache"
    assert config["execute"]["allow_errors"] is False
    assert config["sphinx"]["config"]["nb_execution_raise_on_error"] is True
    for folder in (".venv", "_build", ".pytest_cache", "src", "node_modules"):
        assert folder in config["exclude_patterns"], folder
    assert not (ROOT / "_static").exists(), (
        "a root _static/ makes Jupyter Book inject every .js in it into every page; "
        "put static files under assets/"
    )


# --- visible code fits the code box -----------------------------------------------------------

CODE_WIDTH = 79
HIDDEN_TAGS = {"remove-input", "remove-cell"}


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=_rel)
def test_visible_code_fits_the_code_box(path: Path):
    """Every line of code a reader can see (chapters, exercises, solutions; folded cells
    included, since a click shows them) is at most 79 columns wide."""
    long_lines = [
        f"cell {index}: {len(line)} columns: {line.strip()[:60]}"
        for index, cell in enumerate(_read(path).cells)
        if cell.cell_type == "code" and not HIDDEN_TAGS & set(cell.metadata.get("tags", []))
        for line in cell.source.splitlines()
        if len(line) > CODE_WIDTH
    ]
    assert not long_lines, f"{_rel(path)}: code wider than {CODE_WIDTH} columns:\n" + "\n".join(
        long_lines
    )
