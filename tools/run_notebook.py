"""Execute notebooks in a fresh kernel and report the wall time of each (an authoring aid).

Usage: .venv/bin/python tools/run_notebook.py book/05_masks.ipynb [more.ipynb ...] [--save]

Without --save nothing is written; with --save the executed notebook (outputs included) replaces
the file — use that only for solution notebooks, whose outputs are kept.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nb_watchdog import WatchedClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError


def run(path: Path, save: bool) -> bool:
    notebook = nbformat.read(path, as_version=4)
    # the watchdog: a cell that sits 120 s fails, naming the notebook and the cell
    client = WatchedClient(
        notebook, notebook=str(path), kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    start = time.perf_counter()
    try:
        client.execute()
    except (CellExecutionError, CellTimeoutError) as error:
        print(f"FAILED {path} after {time.perf_counter() - start:.1f}s\n{error}")
        return False
    print(f"ok     {path}  {time.perf_counter() - start:.1f}s")
    if save:
        nbformat.write(notebook, path)
    return True


if __name__ == "__main__":
    args = [arg for arg in sys.argv[1:] if arg != "--save"]
    results = [run(Path(arg), "--save" in sys.argv) for arg in args]
    sys.exit(0 if all(results) else 1)
