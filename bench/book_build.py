"""How long the book takes to build and set up, and how heavy its pages are (issue: the reader's book).

Run: .venv/bin/python bench/book_build.py [--setup]   (or `make bench`, which passes --setup)

1. Clean build: `jupyter-book build . -W --keep-going` into a fresh output folder (every notebook
   executed, nothing cached). Goal ≤ 5 min.
2. Slowest chapter: per-notebook execution time of that clean build, from the build's own
   execution records (jupyter-cache). Goal ≤ 60 s.
3. Cached rebuild: the same build again, with nothing changed. Goal ≤ 15 s.
4. Fresh set-up (with --setup): `git clone` of this repository into a temporary folder, then
   `make setup` (venv, pinned packages, tformer, offline JavaScript). Also the venv's size.
5. Page weights: from _build/page-weights.json, written by the browser test (`make test`).

Results are printed and written to bench/results/book_build.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JUPYTER_BOOK = Path(sys.executable).parent / "jupyter-book"
RESULTS = ROOT / "bench" / "results" / "book_build.json"


def timed(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).splitlines()[-30:])
        raise SystemExit(f"command failed: {' '.join(command)}\n{tail}")
    return elapsed


def notebook_times(output: Path) -> dict[str, float]:
    """Execution seconds per notebook, from the jupyter-cache records of a build."""
    from jupyter_cache import get_cache

    cache = get_cache(output / "_build" / ".jupyter_cache")
    times = {}
    for record in cache.list_cache_records():
        seconds = (record.data or {}).get("execution_seconds")
        if seconds is not None:
            times[Path(record.uri).stem] = float(seconds)
    return times


def folder_size(path: Path) -> int:
    """Bytes of all regular files under `path` (symlinks not followed)."""
    files = (entry for entry in path.rglob("*") if entry.is_file() and not entry.is_symlink())
    return sum(entry.stat().st_size for entry in files)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--setup", action="store_true", help="also time a fresh clone's make setup")
    args = parser.parse_args()
    results: dict[str, object] = {
        "cpu": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
    }

    with tempfile.TemporaryDirectory(prefix="book-bench-") as tmp:
        output = Path(tmp)
        build = [str(JUPYTER_BOOK), "build", str(ROOT), "-W", "--keep-going", "--path-output"]
        clean = timed([*build, str(output)], ROOT)
        cached = timed([*build, str(output)], ROOT)
        times = notebook_times(output)
    slowest = max(times.items(), key=lambda item: item[1]) if times else ("-", 0.0)
    results.update(
        clean_build_s=round(clean, 1),
        cached_rebuild_s=round(cached, 1),
        notebook_execution_s={name: round(seconds, 1) for name, seconds in sorted(times.items())},
        slowest_notebook=slowest[0],
        slowest_notebook_s=round(slowest[1], 1),
    )
    print(f"clean build of the whole book : {clean:7.1f} s   (goal <= 300 s)")
    print(f"slowest notebook              : {slowest[1]:7.1f} s   {slowest[0]} (goal <= 60 s)")
    print(f"cached rebuild                : {cached:7.1f} s   (goal <= 15 s)")
    for name, seconds in sorted(times.items(), key=lambda item: -item[1]):
        print(f"    {seconds:6.1f} s  {name}")

    if args.setup:
        with tempfile.TemporaryDirectory(prefix="book-setup-") as tmp:
            clone = Path(tmp) / "clone"
            subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
            setup = timed(["make", "setup"], clone)
            venv = folder_size(clone / ".venv")
        results.update(fresh_setup_s=round(setup, 1), venv_mb=round(venv / 1e6))
        print(f"fresh clone: make setup       : {setup:7.1f} s   (venv {venv / 1e6:.0f} MB)")

    weights_file = ROOT / "_build" / "page-weights.json"
    if weights_file.exists():
        weights = json.loads(weights_file.read_text())
        heaviest = sorted(weights.items(), key=lambda item: -item[1]["gzip"])[:3]
        results["heaviest_pages"] = dict(heaviest)
        for name, weight in heaviest:
            print(
                f"page weight {name:40s} {weight['gzip'] / 1e6:.2f} MB transferred "
                f"({weight['raw'] / 1e6:.2f} MB uncompressed, own content "
                f"{weight.get('own_raw', weight['html']) / 1e6:.2f} MB)"
            )
    else:
        print("page weights: run `make test` first (the browser test records them)")

    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
