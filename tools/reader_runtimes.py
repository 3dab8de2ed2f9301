"""The runtimes readers open the book in, rebuilt on this machine: Colab and Binder.

* **Colab**: a virtual environment with Python 3.13 (Colab's) and Colab's own pins
  (``tests/environments/colab-pip-freeze.txt``, Google's published ``pip freeze`` of the default
  runtime) for the packages the book touches (``tests/environments/colab-subset.txt``) and their
  whole dependency closure: torch 2.11.0, numpy 2.1.3, ipywidgets 7.7.1, IPython 7.34,
  ipykernel 6.17.1, traitlets 5.7.1, ... exactly. One difference, forced by this machine (it
  reaches PyPI only, not download.pytorch.org): torch is PyPI's ``torch==2.11.0`` wheel for cp313,
  the CUDA build (it runs on a CPU; it brings ``nvidia-*`` libraries and ``triton``, about 4.7 GB
  in all), where Colab has the same release's ``+cpu`` build. pip runs with no configuration file
  of this machine (see :func:`colab_pip_environ`): only Colab's pins decide.
* **Binder**: what repo2docker builds from ``binder/`` (minus Docker): a virtual environment with
  ``binder/requirements.txt`` (Python of ``binder/runtime.txt``, 3.11), then ``binder/postBuild``
  run from the repository root.

Both live outside the clone, under ``~/.cache/attention-executed/`` (``$ATTENTION_EXECUTED_CACHE``),
in a folder named by a hash of everything that defines them, so a second run (CI's included)
reuses them and a changed pin list builds a new one. ``tests/test_colab.py`` and
``tests/test_binder.py`` use this module.

The base interpreter of an environment (CPython 3.13 for Colab, 3.11 for Binder) is found by
:func:`base_python`: ``$READER_RUNTIME_PYTHON``, the running interpreter's own, ``pythonX.Y`` on
the PATH, ``pyenv prefix X.Y``, ``~/.pyenv/versions/X.Y*`` (each one's version is checked).

Usage (any Python 3.10+):
    python tools/reader_runtimes.py colab     build (or reuse) the Colab environment, print its path
    python tools/reader_runtimes.py binder    build (or reuse) the Binder environment
    python tools/reader_runtimes.py refresh --commit SHA
        rewrite tests/environments/colab-pip-freeze.txt from googlecolab/backend-info at SHA
        (needs access to GitHub, which the build machines do not have)
    python tools/reader_runtimes.py execute [--jobs 2] [--colab] NOTEBOOK...
        (run by the environment's own Python) execute notebooks in fresh kernels, print JSON
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENVIRONMENTS = ROOT / "tests" / "environments"
COLAB_FREEZE = ENVIRONMENTS / "colab-pip-freeze.txt"
COLAB_SUBSET = ENVIRONMENTS / "colab-subset.txt"
BINDER = ROOT / "binder"
CACHE = Path(os.environ.get("ATTENTION_EXECUTED_CACHE", Path.home() / ".cache" / "attention-executed"))
# Colab's Python (its freeze has cp313 wheels); Binder's comes from binder/runtime.txt.
COLAB_PYTHON = "3.13"
PYTHON_VERSION = "3.11"  # Binder's: binder/runtime.txt (test_binder checks the environment's)
# Bump when the way an environment is built changes, so old cached ones are not reused.
BUILD_VERSION = "1"
# The Colab environment's own (2: Python 3.13 and PyPI's torch 2.11.0, with no machine pip
# configuration, instead of Python 3.11 and the machine's torch 2.13.0 CPU wheel).
COLAB_BUILD_VERSION = "2"
FREEZE_URL = "https://raw.githubusercontent.com/googlecolab/backend-info/{commit}/pip-freeze.txt"


def canonical(name: str) -> str:
    """A distribution name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def read_pins(path: Path) -> dict[str, str]:
    """``{canonical name: version}`` of a ``pip freeze``-style file (``name==version`` lines;
    comments, options and ``name @ url`` lines skipped)."""
    pins = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("-") or " @ " in line or "==" not in line:
            continue
        name, _, version = line.partition("==")
        pins[canonical(name.strip())] = version.strip()
    return pins


def parse_freeze(text: str) -> dict[str, str]:
    """``{canonical name: version}`` of ``pip freeze`` output (``name @ url`` lines keep the url)."""
    found = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if " @ " in line:
            name, _, url = line.partition(" @ ")
            found[canonical(name)] = "@ " + url
        elif "==" in line:
            name, _, version = line.partition("==")
            found[canonical(name)] = version
    return found


def subset_names(path: Path = COLAB_SUBSET) -> list[str]:
    return [
        line.split("#", 1)[0].strip()
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.split("#", 1)[0].strip()
    ]


def _python_version(candidate: str) -> str | None:
    """``"3.13"`` for an interpreter that runs, else ``None`` (a pyenv shim with no such version
    selected fails here, as does a missing file)."""
    try:
        result = subprocess.run(
            [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True, text=True, timeout=60, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout.strip() if result.returncode == 0 else None


def python_candidates(version: str) -> list[str]:
    """Where a CPython ``version`` (``"3.13"``) may be, in the order :func:`base_python` tries."""
    executable = f"python{version}"
    candidates = [
        os.environ.get("READER_RUNTIME_PYTHON", ""),
        str(Path(sys.base_prefix) / "bin" / executable),
        shutil.which(executable) or "",
    ]
    if shutil.which("pyenv"):
        try:
            prefix = subprocess.run(
                ["pyenv", "prefix", version], capture_output=True, text=True, timeout=60, check=False
            )
        except (OSError, subprocess.SubprocessError):
            prefix = None
        if prefix is not None and prefix.returncode == 0:
            candidates += [str(Path(line) / "bin" / executable) for line in prefix.stdout.split()]
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    installed = sorted((pyenv_root / "versions").glob(f"{version}*/bin/{executable}"), reverse=True)
    candidates += [str(path) for path in installed]
    return list(dict.fromkeys(filter(None, candidates)))


def base_python(version: str = PYTHON_VERSION) -> str:
    """A CPython ``version`` to build an environment from; the first of
    :func:`python_candidates` that runs and is that version. Raises naming every place looked at."""
    tried = []
    for candidate in python_candidates(version):
        found = _python_version(candidate)
        if found == version:
            return candidate
        tried.append(f"{candidate} ({'Python ' + found if found else 'does not run'})")
    raise RuntimeError(
        f"no Python {version} found for the reader-runtime environment. Looked for: "
        f"$READER_RUNTIME_PYTHON, python{version} next to {sys.executable} and on the PATH, "
        f"`pyenv prefix {version}`, ~/.pyenv/versions/{version}*/bin/python{version}"
        + (f"; found but not usable: {', '.join(tried)}" if tried else "; none of them exists")
        + f". Install CPython {version} (e.g. `pyenv install {version}`) or set "
        f"READER_RUNTIME_PYTHON to its interpreter."
    )


def _digest(*parts: bytes) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(hashlib.sha256(part).digest())
    return hasher.hexdigest()[:16]


def run(cmd: list[str], log: Path | None = None, **kwargs) -> subprocess.CompletedProcess:
    """Run a command; on failure raise with its output (also appended to ``log``)."""
    result = subprocess.run(cmd, capture_output=True, text=True, check=False, **kwargs)
    if log is not None:
        with log.open("a", encoding="utf-8") as handle:
            handle.write(f"$ {' '.join(cmd)}\n{result.stdout}{result.stderr}\n")
    if result.returncode != 0:
        raise RuntimeError(
            f"command failed ({result.returncode}): {' '.join(cmd)}\n{result.stdout[-4000:]}"
            f"\n{result.stderr[-4000:]}"
        )
    return result


class Environment:
    """A cached virtual environment: ``path/bin/python``, its log and its pristine freeze.
    ``pip_environ``: the process environment its pip runs in (``None``: the caller's)."""

    def __init__(self, path: Path, pip_environ: dict[str, str] | None = None) -> None:
        self.path = path
        self.python = str(path / "bin" / "python")
        self.log = path / "build.log"
        self.pristine_file = path / "pristine-freeze.txt"
        self.pip_environ = pip_environ

    def pip(self, *args: str, **kwargs) -> subprocess.CompletedProcess:
        if self.pip_environ is not None:
            kwargs.setdefault("env", self.pip_environ)
        return run([self.python, "-m", "pip", *args], log=self.log, **kwargs)

    def freeze(self) -> dict[str, str]:
        return parse_freeze(self.pip("freeze", "--all").stdout)

    @property
    def pristine(self) -> dict[str, str]:
        return parse_freeze(self.pristine_file.read_text(encoding="utf-8"))

    def restore(self) -> list[str]:
        """Put the environment back to its pristine freeze (uninstall what was added, reinstall
        what changed, without dependencies); returns what had to be undone."""
        now, pristine = self.freeze(), self.pristine
        added = sorted(set(now) - set(pristine))
        changed = sorted(
            name
            for name in pristine
            if now.get(name) != pristine[name] and not pristine[name].startswith("@")
        )
        if added:
            self.pip("uninstall", "-y", *added)
        if changed:
            self.pip("install", "--no-deps", *(f"{name}=={pristine[name]}" for name in changed))
        return [f"+{name}" for name in added] + [f"~{name}" for name in changed]


@contextlib.contextmanager
def _locked(name: str):
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _build(
    name: str, key: str, steps, python: str = PYTHON_VERSION, pip_environ: dict[str, str] | None = None
) -> tuple[Environment, bool]:
    """Reuse ``CACHE/<name>-<key>`` if complete, else build it from CPython ``python`` with
    ``steps(env)``. Returns the environment and whether it was built now."""
    path = CACHE / f"{name}-{key}"
    env = Environment(path, pip_environ)
    with _locked(name):
        if (path / ".complete").exists():
            return env, False
        base = base_python(python)  # before removing anything: a clear error if there is none
        shutil.rmtree(path, ignore_errors=True)
        run([base, "-m", "venv", str(path)])
        env.log.write_text(f"building {name} environment {key}\n", encoding="utf-8")
        steps(env)
        env.pristine_file.write_text(env.pip("freeze", "--all").stdout, encoding="utf-8")
        (path / ".complete").write_text(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), encoding="utf-8")
        return env, True


# --- Colab ------------------------------------------------------------------------------------


def colab_torch() -> str:
    """``torch==<Colab's release>``, read from the freeze's ``torch @ <url>`` line (Colab installs
    the ``+cpu`` wheel from download.pytorch.org; this machine gets the same release from PyPI)."""
    for line in _url_lines():
        name, _, url = line.partition(" @ ")
        if canonical(name.strip()) == "torch":
            match = re.search(r"/torch-(\d+(?:\.\d+)*)(?:%2B|\+)", url)
            if match:
                return f"torch=={match[1]}"
    raise RuntimeError(f"no `torch @ <wheel url>` line with a version in {COLAB_FREEZE}")


# PyPI's torch for Linux is the CUDA build: it needs these, which Colab's CPU torch does not. Colab
# lists one of them for another package (nvidia-nccl-cu13, for JAX) at a version that need not be
# the one torch asks for, so they are left to torch's own pins.
CUDA_ONLY = re.compile(r"nvidia-.*|triton|cuda-.*")


def colab_constraints() -> str:
    """Colab's pins as a pip constraints file (torch as :func:`colab_torch`; the CUDA libraries
    that only PyPI's torch needs left out, see :data:`CUDA_ONLY`)."""
    pins = read_pins(COLAB_FREEZE)
    pins.pop("torch", None)
    lines = [f"{name}=={version}" for name, version in sorted(pins.items()) if not CUDA_ONLY.fullmatch(name)]
    return "\n".join([*lines, colab_torch()]) + "\n"


def colab_pip_environ() -> dict[str, str]:
    """The environment the Colab environment's pip runs in (building it, restoring it, and the
    setup cell's ``%pip install`` in its kernels): this machine's pip configuration switched off.

    This machine configures pip for its own book venv, and none of it exists on Colab: a global
    ``constraint`` file (``/etc/xdg/pip/pip.conf`` → ``constraints.txt``, capping torch to the
    releases on its disk), a user ``find-links`` (``/opt/wheels``: a cp311 torch 2.13.0+cpu) and
    ``extra-index-url``s (local ``file:///opt/pypi*`` mirrors). Left on, they would add their own
    constraints to Colab's and offer builds Colab never sees. ``PIP_CONFIG_FILE=os.devnull`` makes
    pip load no configuration file at all (global, user and site alike; ``--isolated`` skips only
    the user's), and the ``PIP_*`` variables that select packages are dropped; what is left
    (certificates, time-outs, proxies) only carries the download. So Colab's pins are the only
    constraints, and packages come from PyPI, as on Colab.
    """
    selecting = ("PIP_CONSTRAINT", "PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX",
                 "PIP_REQUIREMENT", "PIP_PRE", "PIP_NO_BINARY", "PIP_ONLY_BINARY", "PIP_REQUIRE")
    environ = {key: value for key, value in os.environ.items() if not key.startswith(selecting)}
    environ["PIP_CONFIG_FILE"] = os.devnull
    environ["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return environ


def colab_key() -> str:
    """A hash of what defines the environment: the constraints and the subset's names (not the
    comments around them), the build recipe's version and the Python version."""
    return _digest(
        colab_constraints().encode(),
        "\n".join(sorted(canonical(name) for name in subset_names())).encode(),
        f"{COLAB_BUILD_VERSION} {colab_torch()} python{COLAB_PYTHON} no-machine-pip-config".encode(),
    )


def colab_environment() -> tuple[Environment, bool]:
    """The Colab environment (built on first use, reused after)."""
    pins = read_pins(COLAB_FREEZE)

    def steps(env: Environment) -> None:
        constraints = env.path / "colab-constraints.txt"
        constraints.write_text(colab_constraints(), encoding="utf-8")
        env.pip("install", "--quiet", f"pip=={pins['pip']}")  # the setup cell runs Colab's pip
        env.pip("install", "--quiet", "-c", str(constraints), *subset_names())

    return _build("colab", colab_key(), steps, python=COLAB_PYTHON, pip_environ=colab_pip_environ())


def colab_extras(env: Environment) -> dict[str, str]:
    """Packages of the environment that Colab's list does not have (pulled in by the subset)."""
    pins = read_pins(COLAB_FREEZE)
    colab_names = pins.keys() | {canonical(line.split(" @ ")[0]) for line in _url_lines()}
    return {name: version for name, version in env.pristine.items() if name not in colab_names}


def _url_lines() -> list[str]:
    return [
        line
        for line in COLAB_FREEZE.read_text(encoding="utf-8").splitlines()
        if " @ " in line and not line.startswith("#")
    ]


# --- Binder -----------------------------------------------------------------------------------

# The PyTorch CPU index named in binder/requirements.txt. This machine reaches PyPI only: each
# lookup there fails at the DNS step and pip falls back to its other indexes (torch 2.13.0+cpu is
# this machine's wheel on disk). pip retries a failed lookup five times with back-off (~8 s per
# package, ~18 min for the 129 pins), so the test passes --retries 0: one failed lookup each.
PYTORCH_INDEX = "https://download.pytorch.org/whl/cpu"


def index_reachable(url: str = PYTORCH_INDEX, timeout: float = 5.0) -> bool:
    """Whether the index's host resolves and accepts a TCP connection on port 443."""
    import socket
    from urllib.parse import urlsplit

    try:
        with socket.create_connection((urlsplit(url).hostname, 443), timeout=timeout):
            return True
    except OSError:
        return False


def binder_key() -> str:
    return _digest(
        (BINDER / "requirements.txt").read_bytes(),
        (BINDER / "runtime.txt").read_bytes() if (BINDER / "runtime.txt").exists() else b"",
        f"{BUILD_VERSION} python{PYTHON_VERSION}".encode(),
    )


def binder_environment() -> tuple[Environment, bool]:
    """The Binder environment: ``binder/requirements.txt`` installed as repo2docker does
    (``pip install --no-cache-dir -r binder/requirements.txt``), plus ``--retries 0``."""

    def steps(env: Environment) -> None:
        env.pip("install", "--retries", "0", "-r", str(BINDER / "requirements.txt"))

    return _build("binder", binder_key(), steps)


def run_post_build(env: Environment, repo: Path) -> subprocess.CompletedProcess:
    """``binder/postBuild`` run from the repository root ``repo`` with the environment first on
    the PATH (as repo2docker runs it inside the image)."""
    environ = clean_environ(env)
    return run(["bash", str(repo / "binder" / "postBuild")], log=env.log, cwd=repo, env=environ)


def runtime_python(runtime_txt: Path = BINDER / "runtime.txt") -> str:
    """The Python version binder/runtime.txt asks for (``python-3.11`` → ``3.11``)."""
    return runtime_txt.read_text(encoding="utf-8").strip().removeprefix("python-")


# --- the repository, served locally -------------------------------------------------------------


def configured_repository() -> tuple[str, str]:
    """``(url, branch)`` from ``_config.yml`` (the repository the setup cell installs from)."""
    sys.path.insert(0, str(ROOT / "tools"))
    from setup_cell import repository

    return repository()


def release_tag() -> str:
    """The tag the setup cell installs on Colab, ``v<pyproject.toml's version>``."""
    sys.path.insert(0, str(ROOT / "tools"))
    from setup_cell import release_tag as tag

    return tag()


def snapshot_repository(dest: Path, branch: str, tag: str | None = None) -> Path:
    """A git repository at ``dest`` whose ``branch`` holds the clone's working tree as it is now
    (committed or not, minus what .gitignore ignores), tagged ``tag`` (default
    :func:`release_tag`, the one the setup cell asks for): what the setup cell's URL serves."""
    dest.mkdir(parents=True, exist_ok=True)
    git = ["git", f"--git-dir={dest / '.git'}", f"--work-tree={ROOT}"]
    environ = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    run(["git", "init", "--quiet", f"--initial-branch={branch}", str(dest)], env=environ)
    run([*git, "add", "--all", "."], cwd=ROOT, env=environ)
    identity = ["-c", "user.name=snapshot", "-c", "user.email=snapshot@localhost"]
    run(
        [*git, *identity, "commit", "--quiet", "--no-verify", "-m", "working tree snapshot"],
        cwd=ROOT,
        env=environ,
    )
    run([*git, *identity, "tag", "-a", tag or release_tag(), "-m", "snapshot release"], cwd=ROOT, env=environ)
    return dest


def git_config_serving(local: Path, url: str, config: Path) -> Path:
    """A throw-away global git config that sends ``url`` to the local repository ``local``
    (``url.<local>.insteadOf``); used through ``GIT_CONFIG_GLOBAL``, never the user's config."""
    config.write_text(
        f'[url "file://{local}"]\n\tinsteadOf = {url}\n[protocol "file"]\n\tallow = always\n'
        "[advice]\n\tdetachedHead = false\n",
        encoding="utf-8",
    )
    return config


# --- running notebooks in an environment -------------------------------------------------------


def clean_environ(env: Environment, **extra: str) -> dict[str, str]:
    """The process environment for running things inside ``env``: its ``bin`` first on the PATH,
    no PYTHONPATH (a developer's shell points it at the worktree's ``src``, which would hide the
    installed ``tformer``), no virtualenv of the caller, no user Jupyter/IPython configuration;
    started from the environment's ``pip_environ`` when it has one (Colab's: no machine pip
    configuration, so the setup cell's ``%pip install`` sees what it would see on Colab)."""
    environ = {
        key: value
        for key, value in (env.pip_environ if env.pip_environ is not None else os.environ).items()
        if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONSTARTUP")
        and not key.startswith(("JUPYTER", "IPYTHON", "GIT_CONFIG", "PIP_REQUIRE"))
    }
    environ["PATH"] = f"{env.path / 'bin'}{os.pathsep}{environ.get('PATH', '')}"
    environ["VIRTUAL_ENV"] = str(env.path)
    environ["JUPYTER_PATH"] = str(env.path / "share" / "jupyter")
    environ["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    environ["PYTHONDONTWRITEBYTECODE"] = "1"
    environ.update(extra)
    return environ


FAKE_COLAB = """\
# Installed by tools/reader_runtimes.py: makes this kernel look like Colab's to the setup cell.
import sys
import types

_google = sys.modules.get("google") or types.ModuleType("google")
_google.__path__ = getattr(_google, "__path__", [])
_colab = types.ModuleType("google.colab")
_colab.__path__ = []
_google.colab = _colab
sys.modules["google"] = _google
sys.modules["google.colab"] = _colab
"""


def ipython_dir(folder: Path, colab: bool) -> Path:
    """An IPython profile folder for the kernels; with ``colab`` a startup file puts a fake
    ``google.colab`` module in ``sys.modules`` before the first cell, as on Colab."""
    startup = folder / "profile_default" / "startup"
    startup.mkdir(parents=True, exist_ok=True)
    if colab:
        (startup / "00-fake-google-colab.py").write_text(FAKE_COLAB, encoding="utf-8")
    return folder


def _execute_one(path: str, cwd: str, timeout: int) -> dict:
    import nbformat

    started = time.perf_counter()
    notebook = nbformat.read(path, as_version=4)
    outcome = {"notebook": path, "ok": True, "error": "", "seconds": 0.0, "setup_output": ""}
    try:
        # the watchdog (tools/nb_watchdog.py): a cell that sits `timeout` s fails, named
        from nb_watchdog import WatchedClient

        WatchedClient(
            notebook, limit=timeout, notebook=path, kernel_name="python3",
            resources={"metadata": {"path": cwd}},
        ).execute()
    except Exception as error:  # noqa: BLE001 - reported, not raised
        outcome["ok"] = False
        outcome["error"] = f"{type(error).__name__}: {str(error)[-3000:]}"
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    if code:
        outcome["setup_output"] = "".join(
            str(out.get("text", "")) + str(out.get("evalue", "")) for out in code[0].get("outputs", [])
        )[-2000:]
    outcome["seconds"] = round(time.perf_counter() - started, 1)
    return outcome


def execute(notebooks: list[str], jobs: int, timeout: int, in_place: bool = False) -> list[dict]:
    """Execute each notebook in a fresh kernel of this Python (run it with the environment's
    Python), each in its own empty working folder (as on Colab, where the notebook arrives alone),
    or with ``in_place`` in the notebook's own folder (as on Binder, which opens the repository).
    The first runs alone, so its setup cell's ``%pip install`` is the one that installs
    ``tformer``; the rest run ``jobs`` at a time."""
    from concurrent.futures import ThreadPoolExecutor

    results = []
    with tempfile.TemporaryDirectory(prefix="notebook-cwd-") as scratch:

        def one(index_path: tuple[int, str]) -> dict:
            index, path = index_path
            cwd = Path(path).resolve().parent if in_place else Path(scratch) / str(index)
            cwd.mkdir(exist_ok=True)
            return _execute_one(path, str(cwd), timeout)

        indexed = list(enumerate(notebooks))
        if indexed:
            results.append(one(indexed[0]))
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            results.extend(pool.map(one, indexed[1:]))
    return results


# --- refresh ----------------------------------------------------------------------------------


def refresh(commit: str, date: str) -> None:
    """Rewrite ``colab-pip-freeze.txt`` from googlecolab/backend-info at ``commit``."""
    import urllib.request

    with urllib.request.urlopen(FREEZE_URL.format(commit=commit), timeout=60) as response:
        published = response.read().decode("utf-8")
    header = [
        "# Colab's default (CPU) runtime: the whole `pip freeze` that Google publishes.",
        "# source:  googlecolab/backend-info, pip-freeze.txt",
        f"# commit:  {commit}",
        f"# date:    {date}",
        "# refresh: .venv/bin/python tools/reader_runtimes.py refresh --commit <sha> --date <date>",
        "#          (needs GitHub access; the Colab test rebuilds its environment on the next run",
        "#          because the environment is keyed by a hash of this file)",
        "# Below this header: the file exactly as published.",
    ]
    COLAB_FREEZE.write_text("\n".join(header) + "\n" + published, encoding="utf-8")
    print(f"wrote {COLAB_FREEZE.relative_to(ROOT)} ({len(read_pins(COLAB_FREEZE))} pins)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("colab")
    sub.add_parser("binder")
    fresh = sub.add_parser("refresh")
    fresh.add_argument("--commit", required=True)
    fresh.add_argument("--date", default=time.strftime("%Y-%m-%d"))
    ex = sub.add_parser("execute")
    ex.add_argument("notebooks", nargs="+")
    ex.add_argument("--jobs", type=int, default=1)
    ex.add_argument("--timeout", type=int, default=120, help="seconds a cell may run (watchdog)")
    ex.add_argument("--in-place", action="store_true", help="run in the notebook's folder")
    args = parser.parse_args(argv)
    if args.command in ("colab", "binder"):
        started = time.perf_counter()
        env, built = (colab_environment if args.command == "colab" else binder_environment)()
        verb = "built" if built else "reused"
        print(f"{verb} {env.path} in {time.perf_counter() - started:.0f} s")
    elif args.command == "refresh":
        refresh(args.commit, args.date)
    else:
        print(json.dumps(execute(args.notebooks, args.jobs, args.timeout, args.in_place)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
