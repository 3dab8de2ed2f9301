"""The notebook watchdog (tools/nb_watchdog.py): no cell in the book build or in a test sits past
its limit without failing, and the failure names the notebook and the cell.

Short limits here (3 s); the book and the tests use 120 s."""

from __future__ import annotations

import asyncio
import gc
import select
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import nbformat
import pytest
import yaml
import zmq
import zmq.asyncio
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_client.session import Session
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import nb_watchdog  # noqa: E402

KERNEL = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}


@pytest.fixture(autouse=True)
def collect_clients():
    """Collect the clients' sockets and cancelled tasks right after each test: left to a later
    garbage collection, their finalizers can run inside an `ast.parse` (pytest rewriting a
    module it imports) and trip CPython 3.11's "AST constructor recursion depth mismatch"."""
    yield
    gc.collect()


def sleepy(seconds: float = 60) -> nbformat.NotebookNode:
    """A title, a quick cell (1) and a cell (2) that sleeps far past any limit used here."""
    return new_notebook(
        cells=[
            new_markdown_cell("# Sleepy"),
            new_code_cell("x = 1"),
            new_code_cell(f"import time\n\ntime.sleep({seconds})  # past the limit"),
        ],
        metadata=KERNEL,
    )


async def wait_for_a_reply_while_the_client_sends(rearm: bool) -> tuple[float, bool, bool]:
    """The stall without a kernel: nbclient's wait for execute_reply (an asyncio poll on the
    shell DEALER), the reply arriving while the event loop is busy, and a send on the same
    channel (nbclient's OutputWidget.sync_state) before the loop looks. Returns the seconds the
    wait took and whether the socket's FD signalled before and after that send."""
    context = zmq.asyncio.Context()
    try:
        kernel = context.socket(zmq.ROUTER)
        port = kernel.bind_to_random_port("tcp://127.0.0.1")
        client = context.socket(zmq.DEALER)
        client.connect(f"tcp://127.0.0.1:{port}")
        session = Session()
        shell = AsyncZMQSocketChannel(client, session)
        if rearm:
            nb_watchdog.rearm_after_send(shell)
        fd = client.getsockopt(zmq.FD)
        shell.send(session.msg("execute_request", {}))
        ident = (await kernel.recv_multipart())[0]
        started = time.perf_counter()
        waiting = asyncio.ensure_future(shell.get_msg(timeout=3))
        await asyncio.sleep(0.05)  # the wait is registered; nothing has arrived
        session.send(kernel, "execute_reply", {"status": "ok"}, ident=[ident])
        signalled = bool(select.select([fd], [], [], 10)[0])  # the loop is busy meanwhile
        shell.send(session.msg("comm_msg", {}))
        still = bool(select.select([fd], [], [], 0)[0])
        reply = await waiting
        assert reply["msg_type"] == "execute_reply"
        return time.perf_counter() - started, signalled, still
    finally:
        context.destroy(linger=0)


def test_a_send_on_the_shell_channel_swallows_the_replys_wakeup_unless_rearmed():
    """The cause of the stall, and the fix. Plain jupyter_client sends on a zmq.Socket.shadow,
    which drains the FD's signal: the reply sits unseen until the wait's deadline (3 s) and is
    then returned as if on time. With `rearm_after_send` the wait ends at once. (If a pyzmq or
    jupyter_client release stops swallowing the wake-up, the first half fails: then the
    workaround can go.)"""
    seconds, signalled, still = asyncio.run(wait_for_a_reply_while_the_client_sends(False))
    assert signalled and not still, "the send consumed the reply's wake-up"
    assert seconds >= 2.9, seconds
    seconds, signalled, _ = asyncio.run(wait_for_a_reply_while_the_client_sends(True))
    assert signalled and seconds < 2, seconds


def test_a_cell_past_the_limit_fails_naming_the_notebook_and_the_cell(tmp_path):
    client = nb_watchdog.WatchedClient(
        sleepy(), limit=3, notebook="book/sleepy.ipynb", kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    started = time.perf_counter()
    with pytest.raises(CellTimeoutError) as error:
        client.execute()
    seconds = time.perf_counter() - started
    assert "book/sleepy.ipynb, cell 2: `import time`" in str(error.value)
    assert "sat idle 3 s" in str(error.value)
    # it fired at the limit (plus kernel start and shutdown), not when the sleep ended
    assert seconds < 40, seconds


def test_a_busy_cell_is_slow_not_idle_until_the_ceiling(tmp_path):
    """Idle time, not wall time: a cell that computes past the limit runs on (a loaded machine
    makes training cells slow); one that computes past CEILING times the limit fails, named."""
    busy = "import time\n\nend = time.time() + {}\nwhile time.time() < end:\n    pass"
    notebook = new_notebook(
        cells=[new_code_cell(busy.format(3)), new_code_cell(busy.format(60))], metadata=KERNEL
    )
    client = nb_watchdog.WatchedClient(
        notebook, limit=1, notebook="busy.ipynb", kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    with pytest.raises(CellTimeoutError) as error:
        client.execute()
    assert f"busy.ipynb, cell 1: `import time` ran {nb_watchdog.CEILING} s" in str(error.value)
    assert notebook.cells[0].get("execution_count") == 1, "the 3 s busy cell ran to its end"


def lose_the_reply_wakeup(client: NotebookClient) -> None:
    """Make every wait for an execute_reply behave as in the ipykernel 7.4 stall: the reply is
    in the client's socket at once, but nothing looks at it until the wait's deadline."""

    def hook(cell, cell_index):
        channel = client.kc.shell_channel
        if getattr(channel, "lossy", False):
            return
        found = channel.get_msg

        async def get_msg(timeout=None):
            if timeout:
                await asyncio.sleep(timeout)
            return await found(timeout=1)

        channel.get_msg = get_msg
        channel.lossy = True

    client.on_cell_execute = hook


def test_a_reply_found_only_at_nbclient_deadline_passes_nbclient_but_not_the_watchdog(tmp_path):
    """The gap the watchdog closes: with nbclient's own timeout, a cell whose reply is noticed
    only at the deadline 'succeeds' after sitting the whole timeout."""
    notebook = new_notebook(cells=[new_code_cell("x = 1")], metadata=KERNEL)
    resources = {"metadata": {"path": str(tmp_path)}}

    plain = NotebookClient(nbformat.from_dict(notebook), timeout=3, kernel_name="python3",
                           resources=resources)
    lose_the_reply_wakeup(plain)
    started = time.perf_counter()
    plain.execute()  # no error: the stall is invisible to nbclient
    assert time.perf_counter() - started >= 3

    watched = nb_watchdog.WatchedClient(nbformat.from_dict(notebook), limit=3,
                                        notebook="quick.ipynb", kernel_name="python3",
                                        resources=resources)
    lose_the_reply_wakeup(watched)
    with pytest.raises(CellTimeoutError, match=r"quick\.ipynb, cell 0: `x = 1`"):
        watched.execute()


def test_the_book_build_executes_through_the_watchdog(tmp_path):
    """A one-page book configured as ours (execute_notebooks: cache, the nb_watchdog local
    extension): the build fails at the limit, and its log names the notebook and the cell."""
    nbformat.write(sleepy(), tmp_path / "sleepy.ipynb")
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: sleepy\n", encoding="utf-8")
    (tmp_path / "_config.yml").write_text(textwrap.dedent(f"""\
        title: Sleepy
        execute:
          execute_notebooks: cache
          timeout: 3
        sphinx:
          local_extensions:
            nb_watchdog: {ROOT / "tools"}
          config:
            nb_execution_raise_on_error: true
            nb_execution_show_tb: true
        """), encoding="utf-8")
    started = time.perf_counter()
    build = subprocess.run(
        [str(Path(sys.executable).parent / "jupyter-book"), "build", str(tmp_path), "-W"],
        capture_output=True, text=True, cwd=tmp_path, check=False, timeout=300,
    )
    seconds = time.perf_counter() - started
    log = build.stdout + build.stderr
    assert build.returncode != 0, log[-3000:]
    assert f"{tmp_path / 'sleepy.ipynb'}, cell 2: `import time`" in log, log[-3000:]
    assert seconds < 55, seconds  # stopped at the limit, not after the 60 s sleep


def test_every_place_that_executes_notebooks_uses_the_watchdog():
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert config["execute"]["timeout"] <= nb_watchdog.LIMIT
    assert config["sphinx"]["local_extensions"].get("nb_watchdog") == "tools"
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert f"--nbval-cell-timeout={nb_watchdog.LIMIT}" in makefile
    for tool in ("run_notebook.py", "reader_runtimes.py"):
        source = (ROOT / "tools" / tool).read_text(encoding="utf-8")
        assert "WatchedClient(" in source and "NotebookClient(" not in source, tool
    # no other test or tool builds its own unwatched client
    for path in [*ROOT.glob("tests/*.py"), *ROOT.glob("tools/*.py")]:
        if path.name in ("test_watchdog.py", "nb_watchdog.py"):
            continue
        assert "NotebookClient(" not in path.read_text(encoding="utf-8"), path
