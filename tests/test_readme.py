"""The README serves readers first: the hosted book's address is the configured repository's
GitHub Pages URL, the Colab badge opens a notebook that exists, the local route to the
exercises names commands that exist after `make book`, and the set-up's costs are stated."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _repository() -> tuple[str, str]:
    url = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["repository"]["url"]
    owner, name = re.fullmatch(r"https://github\.com/([^/]+)/([^/]+?)/?", url).groups()
    return owner, name


def test_the_hosted_book_is_the_repositorys_pages_url():
    owner, name = _repository()
    pages = f"https://{owner}.github.io/{name}/"
    head = README.split("## Two commands")[0]
    assert pages in head, f"the README's reader section does not give {pages}"
    assert f"{pages}zh/" in head


def test_the_colab_badge_opens_a_notebook_of_the_repository():
    owner, name = _repository()
    badge = re.search(
        r"\[!\[Open in Colab\]\(https://colab\.research\.google\.com/assets/colab-badge\.svg\)\]"
        r"\(https://colab\.research\.google\.com/github/([^/]+)/([^/]+)/blob/([^/]+)/([^)]+)\)",
        README,
    )
    assert badge, "no Colab badge"
    branch = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["repository"]["branch"]
    assert badge.groups()[:3] == (owner, name, branch)
    assert (ROOT / badge[4]).is_file(), f"the badge opens {badge[4]}, which does not exist"


def test_the_local_exercise_route_names_real_things():
    block = re.search(r"```bash\n(.*?)```", README.split("## What `make book`")[0], re.S)[1]
    lines = [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
    pip = next(line for line in lines if "pip install" in line)
    assert re.search(r'"jupyterlab==\d+\.\d+\.\d+"', pip), "pin the JupyterLab the README installs"
    copied = next(line for line in lines if line.startswith("cp "))
    assert (ROOT / copied.split()[1]).is_file()
    assert any(line.startswith(".venv/bin/jupyter lab ") for line in lines)
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert any(line.startswith(".venv/bin/tformer-grade ") for line in lines)
    assert 'tformer-grade = "tformer.grade:main"' in pyproject


def test_the_readme_says_what_the_set_up_installs_and_costs():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for package in re.findall(r"apt-get install -y -qq ([^;]+);", makefile):
        for name in package.split():
            assert f"`{name}`" in README, f"the README does not say make installs {name}"
    for figure in ("`.venv` 1.7 GB", "`node_modules` 311 MB", "`_build/`", "~/.cache/attention-executed/"):
        assert figure in README
    assert "make test" in README and "make book" in README
