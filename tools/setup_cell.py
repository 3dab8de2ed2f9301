"""The canonical setup cell that starts every notebook of the book (chapters, solutions, exercises).

The cell records the release of `tformer` the notebook was made for and, on Colab, installs that
release: the tag `v<version>` of the repository. The repository URL is defined once, in
`_config.yml` (`repository.url`), the version once, in `pyproject.toml` (`[project] version`, also
`tformer.__version__`); the cell text is built from them, so a release (`tools/release.py`)
rewrites every notebook's cell. Off Colab the cell only sets `TFORMER_NOTEBOOK_VERSION` in the
kernel's environment; the checkers compare it with the installed `tformer` and warn when they
differ (`tformer.checks.core.version_warning`). `tests/test_notebook_policy.py` checks that every
notebook's first cell equals `setup_cell_source()` and carries the `hide-cell` tag.

Usage:
    .venv/bin/python tools/setup_cell.py            print the cell text
    .venv/bin/python tools/setup_cell.py --check    exit 1 if a notebook's setup cell differs
    .venv/bin/python tools/setup_cell.py --fix      rewrite every notebook's setup cell
"""

from __future__ import annotations

import sys
from pathlib import Path

import tomllib
import yaml

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "_config.yml"
PYPROJECT = ROOT / "pyproject.toml"
SETUP_TAG = "hide-cell"
NOTEBOOK_DIRS = ("book", "solutions", "exercises")

# IPython expands {REPOSITORY} and {VERSION} in the %pip line, so every line fits the 79-column
# code box. The environment variable is how the checkers learn the version (tformer.version).
TEMPLATE = """\
# Setup: on Colab, install the book's package `tformer` at the release
# this notebook was made for; anywhere else it is already installed.
import os
import sys

os.environ["TFORMER_NOTEBOOK_VERSION"] = VERSION = "{version}"
REPOSITORY = "{url}"
if "google.colab" in sys.modules:
    %pip install -q "tformer @ git+{{REPOSITORY}}@v{{VERSION}}\""""


def repository(config_path: Path = CONFIG) -> tuple[str, str]:
    """Return (url, branch) of the book's repository as configured in `_config.yml`."""
    config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    repo = config["repository"]
    return str(repo["url"]).rstrip("/"), str(repo["branch"])


def project_version(pyproject: Path = PYPROJECT) -> str:
    """`[project] version` of `pyproject.toml`: the book's one version source."""
    return str(tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"])


def release_tag(version: str | None = None) -> str:
    """The git tag of a release (`v2.0.0`), the one the setup cell installs on Colab."""
    return f"v{version or project_version()}"


def setup_cell_source(config_path: Path = CONFIG, version: str | None = None) -> str:
    """The exact source text of the setup cell (no trailing newline)."""
    url, _branch = repository(config_path)
    return TEMPLATE.format(url=url, version=version or project_version())


def make_setup_cell():
    """A new nbformat code cell holding the setup text, tagged `hide-cell`."""
    import nbformat

    cell = nbformat.v4.new_code_cell(setup_cell_source())
    cell.metadata["tags"] = [SETUP_TAG]
    return cell


def notebooks(root: Path = ROOT) -> list[Path]:
    """Every notebook of the book: chapters, exercise pages, solutions and exercises."""
    found: list[Path] = []
    for folder in NOTEBOOK_DIRS:
        found.extend(
            path
            for path in sorted((root / folder).rglob("*.ipynb"))
            if ".ipynb_checkpoints" not in path.parts
        )
    return found


def _check() -> int:
    import nbformat

    expected = setup_cell_source()
    bad = 0
    for path in notebooks():
        cells = nbformat.read(path, as_version=4).cells
        first = next((cell for cell in cells if cell.cell_type == "code"), None)
        if first is None or first.source.strip() != expected:
            print(f"setup cell differs: {path.relative_to(ROOT)}")
            bad += 1
    return 1 if bad else 0


def _fix(root: Path = ROOT) -> int:
    """Replace the first code cell of every notebook under ``root`` by the canonical setup cell."""
    import nbformat

    expected = setup_cell_source()
    for path in notebooks(root):
        notebook = nbformat.read(path, as_version=4)
        first = next((cell for cell in notebook.cells if cell.cell_type == "code"), None)
        if first is not None and first.source.strip() != expected:
            first.source = expected
            nbformat.write(notebook, path)
            print(f"fixed {path.relative_to(root)}")
    return 0


if __name__ == "__main__":
    if "--check" in sys.argv[1:]:
        sys.exit(_check())
    if "--fix" in sys.argv[1:]:
        sys.exit(_fix())
    print(setup_cell_source())
