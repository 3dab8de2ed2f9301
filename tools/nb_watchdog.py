"""Notebook execution that never stalls: the fix for the lost wake-up, and a per-cell watchdog,
for every place this project executes notebooks.

The stall (bench/README.md, "A build that never stalls"): nbclient waits for a cell's
``execute_reply`` with an asyncio poll on the shell socket. In a cell with a live widget
(``widgets.interact``: its Output widget captures the cell's outputs), nbclient mimics a
frontend and echoes each captured output back to the kernel (``OutputWidget.sync_state``) with
``shell_channel.send``, which jupyter_client's ``Session.send`` performs on a plain
``zmq.Socket.shadow`` of that same socket, bypassing pyzmq's asyncio wrapper. If the reply lands
just then, the raw send processes libzmq's read-activation command (libzmq: after a send a socket
may become readable without its file descriptor signalling) and nothing re-checks
``ZMQ_EVENTS``: the poll sleeps, kernel and client idle in epoll, until its deadline, when one
last look finds the reply and the cell "succeeds" after exactly ``timeout`` seconds.

1. The fix: ``WatchedClient`` asks the asyncio socket for ``ZMQ_EVENTS`` after every send on the
   shell channel; pyzmq's wrapper then re-checks readiness and wakes the pending poll.
2. The watchdog: nbclient's ``timeout`` cannot catch such a stall (the cell passes at the
   deadline), so each cell runs as a task watched by the client itself. Once the kernel has used
   no CPU for ``limit`` seconds (``LIMIT`` = 120 s; every chapter runs in well under a minute)
   while no reply came, or the cell has run ``CEILING * limit`` seconds in all, the cell fails
   with a ``CellTimeoutError`` naming the notebook, the cell's index and the first line of its
   source, whatever it waited for. Idle, not wall time: on a machine shared by many jobs a
   training cell may take minutes and is not stalled (a build at load 19 failed chapter 7 at a
   120 s wall-time limit).

Used by the book build (this module is a Sphinx extension, ``local_extensions`` in
``_config.yml``: its ``setup`` puts ``execute`` under jupyter-cache, through which MyST-NB's
``execute_notebooks: cache`` runs every notebook, with ``execute: timeout`` as the limit and the
notebook's path in the error), ``tools/run_notebook.py`` and ``tools/reader_runtimes.py`` (the
Colab and Binder tests). Works with nbclient 0.10 (Colab's) and 0.11.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import zmq
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError

LIMIT = 120  # seconds a cell may sit idle; chapters must finish in <= 60 s in all
CEILING = 5  # a cell busy this many times LIMIT fails too (a runaway loop)
GRACE = 10  # nbclient's own deadline comes this much later, so the watchdog always fires first
CHECK = 2.0  # seconds between looks at the kernel's CPU time
BUSY = 0.05  # CPU seconds the kernel must use between two looks to count as working


def kernel_cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU seconds of the kernel process and its live children (a ``%pip``), or
    None when they cannot be read (no psutil, no local process): then only wall time counts."""
    try:
        import psutil

        kernel = psutil.Process(pid)
        return sum(sum(p.cpu_times()[:2]) for p in [kernel, *kernel.children(recursive=True)])
    except Exception:  # noqa: BLE001 - any failure means "cannot tell", never an error
        return None


def describe(notebook: str, index: int, source: str) -> str:
    """``book/02_x.ipynb, cell 53: `first line``` (the first non-empty line, shortened)."""
    first = next((line.strip() for line in source.splitlines() if line.strip()), "")
    if len(first) > 72:
        first = first[:69] + "..."
    return f"{notebook or 'notebook'}, cell {index}: `{first}`"


def rearm_after_send(channel: Any) -> None:
    """After each send on ``channel``, read ``ZMQ_EVENTS`` through its asyncio socket: pyzmq then
    schedules the wake-up a raw send may have swallowed (a no-op when nothing is waiting)."""
    send = channel.send

    def send_and_rearm(msg: dict) -> None:
        send(msg)
        channel.socket.get(zmq.EVENTS)

    channel.send = send_and_rearm


class WatchedClient(NotebookClient):
    """A ``NotebookClient`` whose shell channel cannot swallow a reply's wake-up, and whose every
    cell fails loudly once it has run ``limit`` seconds.

    ``notebook`` names the notebook in the error (nbclient itself does not know the file)."""

    def __init__(self, nb: Any, *, limit: float = LIMIT, notebook: str = "", **kwargs: Any):
        # whole seconds: nbclient 0.10 declares `timeout` an Integer trait
        kwargs["timeout"] = int(CEILING * limit) + GRACE
        super().__init__(nb, **kwargs)
        self.limit = limit
        self.notebook_name = notebook

    async def async_start_new_kernel_client(self):
        kc = await super().async_start_new_kernel_client()
        rearm_after_send(kc.shell_channel)
        return kc

    def _kernel_pid(self) -> int | None:
        try:
            return self.km.provisioner.process.pid
        except AttributeError:
            return None

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        """Run the cell; fail it once the kernel has done nothing for ``limit`` seconds (no CPU
        time used while no reply came: a stall, whatever it waits for), or has run
        ``CEILING * limit`` seconds in all. A busy cell on a loaded machine is slow, not idle."""
        run = asyncio.ensure_future(
            super().async_execute_cell(cell, cell_index, execution_count, store_history)
        )
        loop = asyncio.get_running_loop()
        started = idle_since = loop.time()
        pid = self._kernel_pid()
        cpu = kernel_cpu_seconds(pid)
        while True:
            done, _ = await asyncio.wait({run}, timeout=min(CHECK, self.limit))
            if run in done:
                return run.result()
            now, before, cpu = loop.time(), cpu, kernel_cpu_seconds(pid)
            if cpu is not None and before is not None and abs(cpu - before) >= BUSY:
                idle_since = now
            if now - idle_since >= self.limit:
                what = f"sat idle {self.limit:g} s (the kernel used no CPU and sent no reply)"
                break
            if now - started >= CEILING * self.limit:
                what = f"ran {CEILING * self.limit:g} s"
                break
        run.cancel()
        # nbclient reports its own cancellation as DeadKernelError; the cause is the watchdog
        with contextlib.suppress(BaseException):
            await run
        where = describe(self.notebook_name, cell_index, cell.get("source", ""))
        raise CellTimeoutError(
            f"{where} {what} without finishing (watchdog: tools/nb_watchdog.py; a chapter "
            f"runs in <= 60 s, so this is a stall or a runaway cell)"
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
