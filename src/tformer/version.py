"""Which ``tformer`` this is, and which one the open notebook was made for.

The one version source is ``version`` in ``pyproject.toml``. :data:`__version__` reads it there
when ``tformer`` runs from a source checkout (``src/tformer`` next to the repository's
``pyproject.toml``: an editable install, or ``PYTHONPATH=src``), and otherwise from the installed
distribution's metadata (a wheel built from that same file, e.g. by a Colab setup cell's
``%pip install "tformer @ git+…@v2.0.0"``).

Every notebook's setup cell (``tools/setup_cell.py``) records the release it was made for in the
kernel's environment, ``os.environ["TFORMER_NOTEBOOK_VERSION"] = VERSION = "2.0.0"``, and on Colab
installs the tag ``v2.0.0``. :func:`made_for` reads it back (``None`` when no setup cell ran);
:func:`notebook_version` finds it in a notebook's text (the grader's way).
"""

from __future__ import annotations

import os
import re
from importlib import metadata
from pathlib import Path
from typing import Any

VARIABLE = "TFORMER_NOTEBOOK_VERSION"
"""The environment variable the setup cell sets to the release the notebook was made for."""

_PROJECT_VERSION = re.compile(r'^\[project\]\s*$(?:(?!^\[).)*?^version\s*=\s*"([^"]+)"', re.M | re.S)
_SETUP_CELL_VERSION = re.compile(
    r'^\s*os\.environ\["' + VARIABLE + r'"\]\s*=\s*VERSION\s*=\s*"([^"]+)"', re.M
)


def _source_checkout_version() -> str | None:
    """``[project] version`` of the ``pyproject.toml`` two folders above this package
    (``src/tformer/`` → the repository root), if it is tformer's."""
    pyproject = Path(__file__).resolve().parent.parent.parent / "pyproject.toml"
    try:
        text = pyproject.read_text(encoding="utf-8")
    except OSError:
        return None
    if not re.search(r'^name\s*=\s*"tformer"\s*$', text, re.M):
        return None
    found = _PROJECT_VERSION.search(text)
    return found[1] if found else None


def _installed_version() -> str:
    try:
        return metadata.version("tformer")
    except metadata.PackageNotFoundError:
        return "0+unknown"


__version__ = _source_checkout_version() or _installed_version()


def installed() -> str:
    """The running ``tformer``'s version (:data:`tformer.__version__`)."""
    import tformer

    return str(getattr(tformer, "__version__", __version__))


def made_for() -> str | None:
    """The release the notebook in this kernel was made for (its setup cell set it), or ``None``."""
    value = os.environ.get(VARIABLE, "").strip()
    return value or None


def notebook_version(nb: Any) -> str | None:
    """The release a notebook (a dict or notebook node) was made for, read from its first code
    cell (the setup cell), or ``None`` for a notebook whose setup cell records none."""
    cells = nb.get("cells") if isinstance(nb, dict) else None
    for cell in cells if isinstance(cells, list) else []:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            found = _SETUP_CELL_VERSION.search("".join(source) if isinstance(source, list) else str(source))
            return found[1] if found else None
    return None


def same_release(a: str, b: str) -> bool:
    """Whether two version strings name the same release (``2.0`` is ``2.0.0``, ``v2.0.0`` too)."""

    def parts(text: str) -> tuple:
        text = text.strip().lower().removeprefix("v").split("+")[0]
        numbers = [int(piece) if piece.isdigit() else piece for piece in text.split(".")]
        while len(numbers) > 1 and numbers[-1] == 0:
            numbers.pop()
        return tuple(numbers)

    return parts(a) == parts(b)
