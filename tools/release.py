"""Make a release of the book: one version everywhere, then tag it.

    .venv/bin/python tools/release.py 2.1.0     (or: make release VERSION=2.1.0)

1. writes ``version = "2.1.0"`` into ``pyproject.toml`` (``[project]``), the one version source
   (``tformer.__version__`` reads it);
2. rewrites every notebook's setup cell (``tools/setup_cell.py --fix``), and the one shown in
   CONTRIBUTING.md, so each records 2.1.0
   and on Colab installs ``tformer @ git+<repository.url>@v2.1.0``;
3. prints what is left to do by hand: regenerate the Chinese notebooks (``make translations``),
   run the tests, commit, tag ``v2.1.0`` and push the tag (CONTRIBUTING.md, "Releasing"). Until
   the tag is pushed, a reader's Colab copy of the new notebooks cannot install ``tformer``.

``--check`` only verifies that pyproject's version, ``tformer.__version__`` and every notebook's
setup cell agree (exit 1 naming what differs).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"
sys.path.insert(0, str(ROOT / "tools"))

import setup_cell  # noqa: E402

SEMVER = re.compile(r"\d+\.\d+\.\d+")
VERSION_LINE = re.compile(r'^(\[project\]\s*$(?:(?!^\[).)*?^version\s*=\s*")([^"]+)(")', re.M | re.S)


def write_version(version: str, pyproject: Path = PYPROJECT) -> str:
    """Set ``[project] version`` in ``pyproject``; returns the previous version."""
    text = pyproject.read_text(encoding="utf-8")
    found = VERSION_LINE.search(text)
    if found is None:
        raise SystemExit(f"no `version = \"...\"` line in the [project] table of {pyproject}")
    pyproject.write_text(text[: found.start(2)] + version + text[found.end(2) :], encoding="utf-8")
    return found[2]


def _write_contributing_version(version: str, contributing: Path = ROOT / "CONTRIBUTING.md") -> None:
    """CONTRIBUTING.md shows the canonical setup cell: the version it records follows the release."""
    if not contributing.exists():
        return
    text = contributing.read_text(encoding="utf-8")
    new = re.sub(r'(VERSION = ")\d+\.\d+\.\d+(")', rf"\g<1>{version}\g<2>", text)
    if new != text:
        contributing.write_text(new, encoding="utf-8")
        print(f"CONTRIBUTING.md: its setup cell records {version}")


def _installed_version() -> str:
    """``tformer.__version__`` as a fresh interpreter of this checkout reads it."""
    result = subprocess.run(
        [sys.executable, "-c", "import tformer; print(tformer.__version__)"],
        capture_output=True, text=True, check=False, cwd=ROOT,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT / "src")},
    )
    return result.stdout.strip() or f"(import failed: {result.stderr.strip()[-200:]})"


def check() -> int:
    version = setup_cell.project_version()
    problems = []
    if _installed_version() != version:
        problems.append(f"tformer.__version__ is {_installed_version()}, pyproject.toml says {version}")
    if setup_cell._check() != 0:
        problems.append(f"setup cells above do not record {version} (run tools/setup_cell.py --fix)")
    for problem in problems:
        print(problem)
    if not problems:
        print(f"release {version}: pyproject.toml, tformer.__version__ and every setup cell agree")
    return 1 if problems else 0


def release(version: str) -> int:
    if not SEMVER.fullmatch(version):
        raise SystemExit(f"VERSION must look like 2.1.0 (major.minor.patch), got {version!r}")
    previous = write_version(version)
    print(f"pyproject.toml: version {previous} -> {version}")
    subprocess.run([sys.executable, str(ROOT / "tools" / "setup_cell.py"), "--fix"], check=True, cwd=ROOT)
    _write_contributing_version(version)
    tag = setup_cell.release_tag(version)
    print(
        f"\nNext (CONTRIBUTING.md, 'Releasing'):\n"
        f"  make translations   # the zh/ notebooks carry the new setup cell too\n"
        f"  make test\n"
        f"  git commit -am 'Release {version}'\n"
        f"  git tag -a {tag} -m 'Attention, Executed {version}'\n"
        f"  git push origin main {tag}   # Colab copies install tformer from this tag"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("version", nargs="?", help="the new version, major.minor.patch (2.1.0)")
    parser.add_argument("--check", action="store_true", help="only check that everything agrees")
    args = parser.parse_args(argv)
    if args.check:
        return check()
    if not args.version:
        parser.error("give the new VERSION (or --check)")
    return release(args.version)


if __name__ == "__main__":
    sys.exit(main())
