"""How often a `widgets.interact` cell sits to nbclient's deadline (the stall of issue 21).

Usage: .venv/bin/python bench/interact_stalls.py [--cells 150] [--timeout 5] [--client plain|watched]

Executes a notebook of `--cells` interact cells (each plots and prints, so the Output widget
echoes outputs to the kernel on the shell channel) with plain nbclient (`timeout` seconds a cell)
or with tools/nb_watchdog.WatchedClient (which re-arms the shell socket after each send), and
counts the cells whose client time reached the timeout although the kernel dated its
execute_reply within 1.5 s. Run it with another venv's python to try another ipykernel.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import tempfile
import time
from pathlib import Path

from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import nb_watchdog  # noqa: E402

SETUP = """import ipywidgets as widgets
import matplotlib.pyplot as plt


def show(c=1.0):
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, c])
    plt.show()
    print("c =", c)"""


def stalls(client_name: str, cells: int, timeout: int) -> dict:
    code = [new_code_cell(SETUP)] + [
        new_code_cell(f"widgets.interact(show, c=widgets.FloatSlider(value={i % 7}, min=-8, max=8));")
        for i in range(cells)
    ]
    nb = new_notebook(cells=code, metadata={"kernelspec": {"name": "python3", "language": "python",
                                                           "display_name": "Python 3"}})
    base = NotebookClient if client_name == "plain" else nb_watchdog.WatchedClient
    rows: list[tuple[int, float, float]] = []

    class Timed(base):  # type: ignore[misc, valid-type]
        async def async_execute_cell(self, cell, cell_index, *args, **kwargs):
            started = time.time()
            result = await super().async_execute_cell(cell, cell_index, *args, **kwargs)
            reply = cell.metadata.get("execution", {}).get("shell.execute_reply")
            if reply:
                dated = dt.datetime.fromisoformat(reply.replace("Z", "+00:00")).timestamp()
                rows.append((cell_index, time.time() - started, dated - started))
            return result

    options = {"timeout": timeout} if client_name == "plain" else {"limit": timeout + 100}
    with tempfile.TemporaryDirectory() as cwd:
        started = time.time()
        Timed(nb, kernel_name="python3", record_timing=True,
              resources={"metadata": {"path": cwd}}, **options).execute()
    import ipykernel

    return {
        "client": client_name, "ipykernel": ipykernel.__version__, "cells": cells,
        "timeout": timeout, "seconds": round(time.time() - started, 1),
        "stalled (cell, client s, reply dated s)": [
            (i, round(s, 1), round(k, 2)) for i, s, k in rows if s >= timeout - 0.5 and k < 1.5
        ],
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=150)
    parser.add_argument("--timeout", type=int, default=5)
    parser.add_argument("--client", choices=["plain", "watched"], default="plain")
    args = parser.parse_args()
    print(json.dumps(stalls(args.client, args.cells, args.timeout)))
