"""Read `_toc.yml`: the book's pages in reading order (used by the tests and tools/screenshots.py)."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
SOURCE_SUFFIXES = (".ipynb", ".md")


def toc_docnames(root: Path = ROOT) -> list[str]:
    """Every `file:` entry of `_toc.yml` (root first), without suffix, e.g. ``book/05_masks``."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    names = [toc["root"]]

    def walk(entries) -> None:
        for entry in entries or []:
            if "file" in entry:
                names.append(str(entry["file"]))
            walk(entry.get("sections"))
            walk(entry.get("chapters"))

    for part in toc.get("parts") or []:
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return [name.removesuffix(".ipynb").removesuffix(".md") for name in names]


def source_of(docname: str, root: Path = ROOT) -> Path | None:
    """The .ipynb or .md file behind a toc entry, or None if it does not exist."""
    for suffix in SOURCE_SUFFIXES:
        path = root / f"{docname}{suffix}"
        if path.exists():
            return path
    return None
