"""Versioned releases: what a reader's notebook installs, and the warning when it is not that.

* One version everywhere: ``pyproject.toml``'s ``[project] version`` (read here with ``tomllib``),
  ``tformer.__version__`` (from the checkout and from an installed wheel) and the release the
  setup cell records and installs (``v<version>``).
* The setup cell, run as on Colab (a fake ``google.colab``), installs the *tag* from a temporary
  repository served through git's ``url.<local>.insteadOf`` — not the branch, whose head is
  moved to another version after tagging.
* A notebook made for another release makes every verdict carry a one-line warning naming both
  versions, in English and in Chinese, and the grader reports it. The expected lines are written
  out literally, never built with the code under test.
* ``tools/release.py`` writes the version and rewrites every setup cell (in a scratch copy).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import tomllib

import tformer
from tformer.checks import language
from tformer.checks.core import exercise, expect_number
from tformer.grade import grade

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import reader_runtimes as rt  # noqa: E402
import setup_cell  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "solutions" / "99_fixture.ipynb"


def _pyproject_version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def _recorded(source: str) -> str:
    found = re.search(r'^os\.environ\["TFORMER_NOTEBOOK_VERSION"\] = VERSION = "([^"]+)"$', source, re.M)
    assert found, f"the setup cell records no version:\n{source}"
    return found[1]


def test_one_version_everywhere():
    version = _pyproject_version()
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), version
    assert tformer.__version__ == version
    fresh = subprocess.run(
        [sys.executable, "-c", "import tformer; print(tformer.__version__)"],
        capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    assert fresh.stdout.strip() == version
    source = setup_cell.setup_cell_source()
    assert _recorded(source) == version
    assert source.rstrip().endswith('%pip install -q "tformer @ git+{REPOSITORY}@v{VERSION}"'), source
    assert setup_cell.release_tag() == f"v{version}"


def test_setup_cell_is_short_valid_python_and_off_colab_only_records_the_version(monkeypatch):
    source = setup_cell.setup_cell_source()
    assert all(len(line) <= 79 for line in source.splitlines())
    assert len(source.splitlines()) <= 10
    python = source.replace("%pip install", "pass  # %pip install")
    compile(python, "<setup cell>", "exec")
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    monkeypatch.setenv("TFORMER_NOTEBOOK_VERSION", "restored after the test")
    namespace: dict = {}
    exec(source.replace("    %pip install", "    raise AssertionError  # %pip install"), namespace)
    assert os.environ["TFORMER_NOTEBOOK_VERSION"] == _pyproject_version()


@pytest.mark.slow
def test_setup_cell_installs_the_release_tag_not_the_branch(tmp_path):
    """A temporary repository: tag ``v<version>`` is this working tree (``snapshot_repository``),
    then a clone's branch moves on to version 99.0.0, and the clone is served. The setup cell
    (run in IPython with a fake google.colab, pip writing into a scratch ``--target`` without
    dependencies, so nothing touches this venv) must install the tag, and the installed wheel
    must report the tag's version."""
    version = _pyproject_version()
    url, branch = rt.configured_repository()
    served = rt.snapshot_repository(tmp_path / "served", branch)
    tags = subprocess.run(["git", "-C", str(served), "tag"], capture_output=True, text=True, check=True)
    assert tags.stdout.split() == [f"v{version}"]
    # the branch moves on: a later commit with another version
    moved = tmp_path / "moved"
    git = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    identity = ["-c", "user.name=t", "-c", "user.email=t@localhost"]
    subprocess.run(["git", "clone", "--quiet", str(served), str(moved)], check=True, env=git)
    pyproject = moved / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(f'version = "{version}"', 'version = "99.0.0"', 1))
    subprocess.run(["git", "-C", str(moved), *identity, "commit", "-qam", "later"], check=True, env=git)
    tags = subprocess.run(["git", "-C", str(moved), "tag"], capture_output=True, text=True, check=True)
    assert tags.stdout.split() == [f"v{version}"]  # the clone kept the tag; it serves from here

    target = tmp_path / "target"
    environ = {
        key: value for key, value in os.environ.items()
        if not key.startswith(("PIP_", "GIT_CONFIG", "PYTHONPATH", "IPYTHON", "JUPYTER"))
    }
    environ.update(
        GIT_CONFIG_GLOBAL=str(rt.git_config_serving(moved, url, tmp_path / "gitconfig")),
        GIT_CONFIG_NOSYSTEM="1",
        IPYTHONDIR=str(rt.ipython_dir(tmp_path / "ipython", colab=True)),
        PIP_CONFIG_FILE=os.devnull,  # no machine configuration, no index: git and the build only
        PIP_TARGET=str(target),
        PIP_NO_DEPS="1",
        PIP_NO_INDEX="1",
        PIP_NO_BUILD_ISOLATION="0",  # pip's inverted spelling: "0" turns build isolation off
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    ran = subprocess.run(
        [sys.executable, "-m", "IPython", "--no-banner", "--colors=NoColor", "-c",
         setup_cell.setup_cell_source()],
        capture_output=True, text=True, env=environ, cwd=tmp_path, check=False, timeout=600,
    )
    assert ran.returncode == 0 and (target / "tformer").is_dir(), f"{ran.stdout}\n{ran.stderr}"
    # what pip recorded (PEP 610): the URL, the revision asked for and the commit it resolved to
    direct = json.loads((target / f"tformer-{version}.dist-info" / "direct_url.json").read_text())
    tagged = subprocess.run(["git", "-C", str(moved), "rev-parse", f"v{version}^{{commit}}"],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert direct["url"] == url
    assert direct["vcs_info"]["requested_revision"] == f"v{version}"
    assert direct["vcs_info"]["commit_id"] == tagged
    probe = subprocess.run(
        [sys.executable, "-c", "import tformer; print(tformer.__version__); print(tformer.__file__)"],
        capture_output=True, text=True, check=True, cwd=tmp_path,
        env={**environ, "PYTHONPATH": str(target)},
    )
    installed, where = probe.stdout.split()
    assert Path(where).is_relative_to(target), where  # the wheel, not a checkout
    assert installed == version, f"installed {installed}; the tag is v{version} (99.0.0: the branch)"


# --- the warning --------------------------------------------------------------------------------


@pytest.fixture
def versions(monkeypatch):
    """Set the installed version and the one the notebook was made for; English by default."""
    previous = language._chosen
    language.set_language("en")

    def set_versions(installed: str, made_for: str | None) -> None:
        monkeypatch.setattr(tformer, "__version__", installed)
        if made_for is None:
            monkeypatch.delenv("TFORMER_NOTEBOOK_VERSION", raising=False)
        else:
            monkeypatch.setenv("TFORMER_NOTEBOOK_VERSION", made_for)

    yield set_versions
    language._chosen = previous


@exercise("98.5", "A test exercise")
def _ex(answer) -> None:
    expect_number(answer, 2.0)


def test_an_older_notebook_warns_under_the_verdict(versions, capsys):
    versions("2.0.0", "1.9.0")
    _ex(2.0)
    assert capsys.readouterr().out == (
        "✓ Exercise 98.5: passed\n"
        "⚠ this notebook was made for tformer 1.9.0, but tformer 2.0.0 is installed: its checks "
        "may not match (install tformer v1.9.0 and restart the kernel)\n"
    )


def test_a_newer_notebook_warns_in_chinese(versions, capsys):
    versions("2.0.0", "2.1.0")
    language.set_language("zh")
    _ex(3.0)
    assert capsys.readouterr().out == (
        "✗ 练习 98.5：有误 —— 你的答案 = 3 不对\n"
        "⚠ 本笔记本是为 tformer 2.1.0 编写的，但已安装的是 tformer 2.0.0：检查结果可能与之不符"
        "（请安装 tformer v2.1.0 并重启内核）\n"
    )


@pytest.mark.parametrize(("installed", "made_for"), [("2.0.0", "2.0.0"), ("2.0.0", "2.0"), ("2.0.0", None)])
def test_no_warning_for_the_same_release_or_none_recorded(versions, capsys, installed, made_for):
    versions(installed, made_for)
    _ex(2.0)
    assert capsys.readouterr().out == "✓ Exercise 98.5: passed\n"


def test_the_printed_warning_translates_on_a_chinese_page():
    english = (
        "⚠ this notebook was made for tformer 1.9.0, but tformer 2.0.0 is installed: its checks "
        "may not match (install tformer v1.9.0 and restart the kernel)"
    )
    assert language.translate_printed(english, "zh") == (
        "⚠ 本笔记本是为 tformer 1.9.0 编写的，但已安装的是 tformer 2.0.0：检查结果可能与之不符"
        "（请安装 tformer v1.9.0 并重启内核）"
    )


def _fixture_made_for(tmp_path: Path, made_for: str) -> Path:
    """The grader fixture (solved) with a setup cell that records ``made_for``."""
    nb = nbformat.read(FIXTURE, as_version=4)
    first = next(cell for cell in nb.cells if cell.cell_type == "code")
    first.source = setup_cell.setup_cell_source(version=made_for)
    path = tmp_path / FIXTURE.name
    nbformat.write(nb, path)
    return path


def test_the_grader_reports_another_release(versions, tmp_path):
    versions("2.0.0", None)
    path = _fixture_made_for(tmp_path, "1.9.0")
    report = grade(path, timeout=60)
    assert report.graded and report.passed == report.total == 3, report.to_text()
    text = report.to_text()
    assert (
        "  note: ⚠ this notebook was made for tformer 1.9.0, but tformer 2.0.0 is installed: its "
        "checks may not match (install tformer v1.9.0 and restart the kernel)\n"
    ) in text, text
    assert report.to_dict()["tformer"] == {"installed": "2.0.0", "made_for": "1.9.0"}
    chinese = grade(path, timeout=60, lang="zh").to_text()
    assert (
        "  注：⚠ 本笔记本是为 tformer 1.9.0 编写的，但已安装的是 tformer 2.0.0：检查结果可能与之不符"
        "（请安装 tformer v1.9.0 并重启内核）\n"
    ) in chinese, chinese
    same = grade(_fixture_made_for(tmp_path, "2.0.0"), timeout=60)
    assert not [note for note in same.notes if "made for" in note], same.notes


# --- the release procedure ----------------------------------------------------------------------


def test_release_writes_the_version_and_every_setup_cell(tmp_path):
    """``tools/release.py 7.8.9`` in a scratch copy (pyproject, _config.yml, tools, src and the
    notebook folders): pyproject says 7.8.9, every notebook's setup cell records and installs
    it, ``--check`` agrees; the real repository is not touched."""
    scratch = tmp_path / "repo"
    for name in ("pyproject.toml", "_config.yml", "CONTRIBUTING.md"):
        (scratch / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, scratch / name)
    for folder in ("tools", "src", *setup_cell.NOTEBOOK_DIRS):
        shutil.copytree(ROOT / folder, scratch / folder, ignore=shutil.ignore_patterns("__pycache__"))
    before = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    environ = {**os.environ, "PYTHONPATH": str(scratch / "src")}
    done = subprocess.run([sys.executable, str(scratch / "tools" / "release.py"), "7.8.9"],
                          capture_output=True, text=True, env=environ, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "git tag -a v7.8.9" in done.stdout and "git push origin main v7.8.9" in done.stdout
    assert 'version = "7.8.9"' in (scratch / "pyproject.toml").read_text(encoding="utf-8")
    assert 'VERSION = "7.8.9"' in (scratch / "CONTRIBUTING.md").read_text(encoding="utf-8")
    notebooks = setup_cell.notebooks(scratch)
    assert notebooks
    for path in notebooks:
        first = next(c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
        assert 'os.environ["TFORMER_NOTEBOOK_VERSION"] = VERSION = "7.8.9"' in first.source, path
        assert first.source.endswith('%pip install -q "tformer @ git+{REPOSITORY}@v{VERSION}"'), path
    checked = subprocess.run([sys.executable, str(scratch / "tools" / "release.py"), "--check"],
                             capture_output=True, text=True, env=environ, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert (ROOT / "pyproject.toml").read_text(encoding="utf-8") == before
    bad = subprocess.run([sys.executable, str(scratch / "tools" / "release.py"), "2.1"],
                         capture_output=True, text=True, env=environ, check=False)
    assert bad.returncode != 0 and "major.minor.patch" in bad.stderr
