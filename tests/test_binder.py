"""The book on Binder: ``binder/`` installs and runs as repo2docker would run it, minus Docker.

repo2docker reads ``binder/runtime.txt`` (Python 3.11), installs ``binder/requirements.txt`` with
pip, then runs ``binder/postBuild`` from the repository root. Here: a Python 3.11 virtual
environment with ``pip install --retries 0 -r binder/requirements.txt`` (cached in
``~/.cache/attention-executed/binder-<hash of the file>``, reused by later runs), then
``postBuild`` from the root of a checkout of this clone, then one chapter and one reader's
exercise notebook executed in their own folders, as Binder opens them.

What this machine cannot reproduce, stated rather than hidden: ``binder/requirements.txt`` names
PyTorch's CPU wheel index (``--extra-index-url https://download.pytorch.org/whl/cpu``), which is
where mybinder.org gets ``torch==2.13.0+cpu`` (PyPI has no ``+cpu`` builds). This machine reaches
PyPI only: pip still asks that index for every package, each lookup fails at the name lookup, and
pip carries on with its other sources; ``torch 2.13.0+cpu`` comes from the wheel on this machine's
disk. ``--retries 0`` keeps that to one failed lookup per package instead of five with back-off
(about 8.5 s per package, 18 minutes for the 129 pins). The test checks that torch is the pinned
CPU build and reports where it came from; it cannot check that the PyTorch index serves it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import reader_runtimes as rt  # noqa: E402

CHAPTER = next(iter(sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))), None)
EXERCISE = next(iter(sorted((ROOT / "exercises").glob("[0-9][0-9]_*.ipynb"))), None)
NOTEBOOKS = [path for path in (CHAPTER, EXERCISE) if path is not None]


@pytest.fixture(scope="module")
def binder(tmp_path_factory):
    started = time.perf_counter()
    env, built = rt.binder_environment()
    env.restore()
    before = env.freeze()
    work = tmp_path_factory.mktemp("binder")
    url, branch = rt.configured_repository()
    served = rt.snapshot_repository(work / "served", branch)
    repo = work / "repo"
    rt.run(["git", "clone", "--quiet", "--branch", branch, str(served), str(repo)])
    environ = rt.clean_environ(
        env,
        IPYTHONDIR=str(rt.ipython_dir(work / "ipython", colab=False)),
        JUPYTER_CONFIG_DIR=str(work / "jupyter-config"),
        JUPYTER_DATA_DIR=str(work / "jupyter-data"),
        MPLCONFIGDIR=str(work / "matplotlib"),
    )
    try:
        post_build = subprocess.run(
            ["bash", str(repo / "binder" / "postBuild")],
            capture_output=True,
            text=True,
            cwd=repo,
            env=environ,
            check=False,
        )
        where = subprocess.run(
            [env.python, "-c", "import tformer; print(tformer.__file__)"],
            capture_output=True,
            text=True,
            cwd=work,
            env=environ,
            check=False,
        )
        notebooks = [str(repo / path.relative_to(ROOT)) for path in NOTEBOOKS]
        ran = subprocess.run(
            [env.python, str(ROOT / "tools" / "reader_runtimes.py"), "execute", "--in-place", *notebooks],
            capture_output=True,
            text=True,
            env=environ,
            cwd=work,
            check=False,
        )
        executed = json.loads(ran.stdout.splitlines()[-1]) if ran.returncode == 0 and ran.stdout else []
        after = env.freeze()
    finally:
        env.restore()
    print(
        f"\nBinder environment {'built' if built else 'reused'} ({env.path}); "
        f"postBuild and {len(notebooks)} notebooks; total {time.perf_counter() - started:.0f} s"
    )
    yield {
        "env": env, "before": before, "after": after, "post_build": post_build, "where": where,
        "run": ran, "executed": executed, "repo": repo,
    }  # fmt: skip


def test_runtime_is_binders_python(binder):
    version = subprocess.run(
        [binder["env"].python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert version == rt.runtime_python(), (
        f"binder/runtime.txt asks for {rt.runtime_python()}, env has {version}"
    )


def test_every_pin_is_installed(binder):
    pins = rt.read_pins(rt.BINDER / "requirements.txt")
    before = binder["before"]
    off = {name: (version, before.get(name)) for name, version in pins.items() if before.get(name) != version}
    assert not off, f"binder/requirements.txt pins not installed as pinned (pin, installed): {off}"


def test_torch_is_the_cpu_build_and_its_source_is_reported(binder):
    """torch is binder/requirements.txt's CPU build. Where the PyTorch index is unreachable (this
    machine), it must have come from a local wheel, and the test says so."""
    pinned = rt.read_pins(rt.BINDER / "requirements.txt")["torch"]
    assert pinned.endswith("+cpu") and binder["before"]["torch"] == pinned, binder["before"]["torch"]
    log = binder["env"].log.read_text(encoding="utf-8") if binder["env"].log.exists() else ""
    source = re.search(r"(?:Processing|Downloading|Using cached) (\S*torch-2[^\s]*\.whl)", log)
    assert source, "the build log does not say where torch came from"
    reachable = rt.index_reachable()
    print(
        f"\ntorch {pinned} from {source[1]}; the PyTorch index {rt.PYTORCH_INDEX} is "
        f"{'reachable' if reachable else 'unreachable from this machine (pip skipped it)'}"
    )
    if not reachable:
        assert not source[1].startswith("http"), f"torch came from {source[1]} with the index unreachable?"


def test_post_build_installs_tformer_from_the_repository(binder):
    post = binder["post_build"]
    assert post.returncode == 0, f"binder/postBuild failed:\n{post.stdout[-2000:]}\n{post.stderr[-2000:]}"
    location = binder["where"].stdout.strip()
    assert location.startswith(str(binder["repo"])), f"tformer imported from {location!r}, not the repository"
    changed = {
        name: (version, binder["after"].get(name))
        for name, version in binder["before"].items()
        if binder["after"].get(name) != version
    }
    assert not changed, f"postBuild changed pinned packages: {changed}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: str(path.relative_to(ROOT)))
def test_notebook_runs_on_binder(binder, path: Path):
    assert binder["run"].returncode == 0, binder["run"].stderr[-3000:]
    target = str(binder["repo"] / path.relative_to(ROOT))
    outcome = next((item for item in binder["executed"] if item["notebook"] == target), None)
    assert outcome is not None, f"{path.name} was not executed"
    assert outcome["ok"], f"{path.relative_to(ROOT)} failed on Binder:\n{outcome['error']}"
