"""The runtimes readers open the book in, rebuilt on this machine: Colab and Binder.

* **Colab**: a virtual environment with Colab's own pins (``tests/environments/
  colab-pip-freeze.txt``, Google's published ``pip freeze`` of the default runtime) for the
  packages the book touches (``tests/environments/colab-subset.txt``) and their whole dependency
  closure. Two deliberate differences, forced by this machine: Python 3.11 instead of Colab's
  3.13, and torch 2.13.0 (the CPU wheel on this machine's disk, the only torch it has) instead of
  Colab's 2.11.0. Everything else is at Colab's version.
* **Binder**: what repo2docker builds from ``binder/`` (minus Docker): a virtual environment with
  ``binder/requirements.txt``, then ``binder/postBuild`` run from the repository root.

Both live outside the clone, under ``~/.cache/attention-executed/`` (``$ATTENTION_EXECUTED_CACHE``),
in a folder named by a hash of everything that defines them, so a second run (CI's included)
reuses them and a changed pin list builds a new one. ``tests/test_colab.py`` and
``tests/test_binder.py`` use this module.

Usage (any Python 3.10+; the environments themselves use Python 3.11):
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
# The torch this machine has: a CPU wheel for CPython 3.11 on disk (pip finds it by itself).
MACHINE_TORCH = "torch==2.13.0"
PYTHON_VERSION = "3.11"
# Bump when the way an environment is built changes, so old cached ones are not reused.
BUILD_VERSION = "1"
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


def base_python() -> str:
    """A CPython 3.11 (the machine's torch wheel is for 3.11): ``$READER_RUNTIME_PYTHON``, the
    interpreter behind the running one, or ``python3.11`` on the PATH."""
    candidates = [
        os.environ.get("READER_RUNTIME_PYTHON", ""),
        str(Path(sys.base_prefix) / "bin" / f"python{PYTHON_VERSION}"),
        shutil.which(f"python{PYTHON_VERSION}") or "",
    ]
    for candidate in filter(None, candidates):
        if Path(candidate).exists():
            return candidate
    raise RuntimeError(f"no python{PYTHON_VERSION} found; set READER_RUNTIME_PYTHON")


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
    """A cached virtual environment: ``path/bin/python``, its log and its pristine freeze."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.python = str(path / "bin" / "python")
        self.log = path / "build.log"
        self.pristine_file = path / "pristine-freeze.txt"

    def pip(self, *args: str, **kwargs) -> subprocess.CompletedProcess:
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


def _build(name: str, key: str, steps) -> tuple[Environment, bool]:
    """Reuse ``CACHE/<name>-<key>`` if complete, else build it with ``steps(env)``.
    Returns the environment and whether it was built now."""
    path = CACHE / f"{name}-{key}"
    env = Environment(path)
    with _locked(name):
        if (path / ".complete").exists():
            return env, False
        shutil.rmtree(path, ignore_errors=True)
        run([base_python(), "-m", "venv", str(path)])
        env.log.write_text(f"building {name} environment {key}\n", encoding="utf-8")
        steps(env)
        env.pristine_file.write_text(env.pip("freeze", "--all").stdout, encoding="utf-8")
        (path / ".complete").write_text(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), encoding="utf-8")
        return env, True


# --- Colab ------------------------------------------------------------------------------------


def colab_constraints() -> str:
    """Colab's pins as a pip constraints file, torch replaced by this machine's."""
    pins = read_pins(COLAB_FREEZE)
    pins.pop("torch", None)
    lines = [f"{name}=={version}" for name, version in sorted(pins.items())]
    return "\n".join([*lines, MACHINE_TORCH]) + "\n"


def colab_key() -> str:
    """A hash of what defines the environment: the constraints and the subset's names (not the
    comments around them), the machine's torch and the Python version."""
    return _digest(
        colab_constraints().encode(),
        "\n".join(sorted(canonical(name) for name in subset_names())).encode(),
        f"{BUILD_VERSION} {MACHINE_TORCH} python{PYTHON_VERSION}".encode(),
    )


def colab_environment() -> tuple[Environment, bool]:
    """The Colab environment (built on first use, reused after)."""
    pins = read_pins(COLAB_FREEZE)

    def steps(env: Environment) -> None:
        constraints = env.path / "colab-constraints.txt"
        constraints.write_text(colab_constraints(), encoding="utf-8")
        env.pip("install", "--quiet", f"pip=={pins['pip']}")  # the setup cell runs Colab's pip
        names = ["torch" if canonical(n) == "torch" else n for n in subset_names()]
        env.pip("install", "--quiet", "-c", str(constraints), *names)

    return _build("colab", colab_key(), steps)


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
    """``(url, branch)`` from ``_config.yml`` (the setup cell's ``git+<url>@<branch>``)."""
    sys.path.insert(0, str(ROOT / "tools"))
    from setup_cell import repository

    return repository()


def snapshot_repository(dest: Path, branch: str) -> Path:
    """A git repository at ``dest`` whose ``branch`` holds the clone's working tree as it is now
    (committed or not, minus what .gitignore ignores): what the setup cell's URL serves."""
    dest.mkdir(parents=True, exist_ok=True)
    git = ["git", f"--git-dir={dest / '.git'}", f"--work-tree={ROOT}"]
    environ = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    run(["git", "init", "--quiet", f"--initial-branch={branch}", str(dest)], env=environ)
    run([*git, "add", "--all", "."], cwd=ROOT, env=environ)
    run(
        [
            *git,
            "-c",
            "user.name=snapshot",
            "-c",
            "user.email=snapshot@localhost",
            "commit",
            "--quiet",
            "--no-verify",
            "-m",
            "working tree snapshot",
        ],
        cwd=ROOT,
        env=environ,
    )
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
    installed ``tformer``), no virtualenv of the caller, no user Jupyter/IPython configuration."""
    environ = {
        key: value
        for key, value in os.environ.items()
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
