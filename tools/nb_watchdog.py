"""A per-cell watchdog for every place this project executes notebooks.

No notebook cell may sit past ``LIMIT`` seconds (every chapter runs in well under a minute):
past it the cell fails with a ``CellTimeoutError`` that names the notebook, the cell's index and
the first line of its source.

nbclient's own ``timeout`` is not enough. The stall seen with ipykernel 7.4 (bench/README.md,
"A build that never stalls") was a reply that had reached the client while the client's event
loop never woke for it; nbclient's wait for ``execute_reply`` ends at its deadline with one last
look at the socket, finds the reply there and reports the cell as a success. A cell could
therefore sit idle for the whole ``timeout`` and still pass. The watchdog runs each cell as a
task with a deadline of its own, ``LIMIT``, shorter than the deadline it gives nbclient, so
whatever a cell waits for (a reply, an output, a kernel that died quietly), it fails at ``LIMIT``.

Used by the book build (this module is a Sphinx extension, ``local_extensions`` in
``_config.yml``: its ``setup`` puts ``execute`` under jupyter-cache, through which MyST-NB's
``execute_notebooks: cache`` runs every notebook, with ``execute: timeout`` as the limit and the
notebook's path in the error), ``tools/run_notebook.py`` and
``tools/reader_runtimes.py`` (the Colab and Binder tests). Works with nbclient 0.10 (Colab's) and
0.11.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError

LIMIT = 120  # seconds a cell may run; chapters must finish in <= 60 s in all
GRACE = 10  # nbclient's own deadline comes this much later, so the watchdog always fires first


def describe(notebook: str, index: int, source: str) -> str:
    """``book/02_x.ipynb, cell 53: `first line``` (the first non-empty line, shortened)."""
    first = next((line.strip() for line in source.splitlines() if line.strip()), "")
    if len(first) > 72:
        first = first[:69] + "..."
    return f"{notebook or 'notebook'}, cell {index}: `{first}`"


class WatchedClient(NotebookClient):
    """A ``NotebookClient`` whose every cell fails loudly once it has run ``limit`` seconds.

    ``notebook`` names the notebook in the error (nbclient itself does not know the file)."""

    def __init__(self, nb: Any, *, limit: float = LIMIT, notebook: str = "", **kwargs: Any):
        # whole seconds: nbclient 0.10 declares `timeout` an Integer trait
        kwargs["timeout"] = int(limit) + GRACE
        super().__init__(nb, **kwargs)
        self.limit = limit
        self.notebook_name = notebook

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        run = asyncio.ensure_future(
            super().async_execute_cell(cell, cell_index, execution_count, store_history)
        )
        done, _ = await asyncio.wait({run}, timeout=self.limit)
        if run in done:
            return run.result()
        run.cancel()
        # nbclient reports its own cancellation as DeadKernelError; the cause is the watchdog
        with contextlib.suppress(BaseException):
            await run
        where = describe(self.notebook_name, cell_index, cell.get("source", ""))
        raise CellTimeoutError(
            f"{where} sat {self.limit:g} s without finishing (watchdog: nb_watchdog.LIMIT; "
            f"a chapter runs in <= 60 s, so this is a stall or a runaway cell)"
        )


def execute(nb: Any, cwd: str | None = None, km: Any = None, **kwargs: Any) -> Any:
    """``nbclient.execute`` with the watchdog: ``timeout`` is the per-cell limit."""
    limit = kwargs.pop("timeout", None) or LIMIT
    resources = {"metadata": {"path": cwd}} if cwd is not None else {}
    name = kwargs.pop("notebook", "") or (_building[-1] if _building else "")
    return WatchedClient(nb, limit=limit, notebook=name, resources=resources, km=km,
                         **kwargs).execute()


_building: list[str] = []  # the notebook MyST-NB is executing (its path, for the error)


def install() -> None:
    """Make jupyter-cache (hence MyST-NB's ``execute_notebooks: cache``) execute through the
    watchdog: it calls ``nbclient.execute`` by the name ``executenb`` in its executor module.
    MyST-NB's cache client is wrapped only to tell the watchdog which notebook it executes."""
    from jupyter_cache.executors import utils
    from myst_nb.core.execute.cache import NotebookClientCache

    utils.executenb = execute
    start = NotebookClientCache.start_client
    if getattr(start, "watched", False):
        return

    def start_client(self):
        _building.append(str(self.path))
        try:
            return start(self)
        finally:
            _building.pop()

    start_client.watched = True  # type: ignore[attr-defined]
    NotebookClientCache.start_client = start_client


def setup(app: Any) -> dict:
    """Sphinx extension: the book build executes every notebook under the watchdog."""
    install()
    return {"parallel_read_safe": True, "parallel_write_safe": True}
