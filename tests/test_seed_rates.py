"""The committed seed rates (``src/tformer/data/bench/*.json``, written by ``bench/kernels.py``).

A chapter glues these rates beside its claims about trained models, so a stale file would put
an old measurement on the page: each file records the SHA-1 of its bench script and of every
source it measures, and the test fails when any of them changed since (rerun the script).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tformer import seed_rates

ROOT = Path(__file__).resolve().parent.parent
RESULTS = sorted((ROOT / "src" / "tformer" / "data" / "bench").glob("*.json"))
REQUIRED_KERNELS = {"avx512", "avx2", "default", "avx512 1 thread"}


@pytest.mark.parametrize("path", RESULTS, ids=[p.stem for p in RESULTS])
def test_result_is_newer_than_its_sources(path):
    result = json.loads(path.read_text(encoding="utf-8"))
    assert result["name"] == path.stem
    assert result["script"] in result["sources"]
    changed = [
        name
        for name, digest in result["sources"].items()
        if not (ROOT / name).exists() or hashlib.sha1((ROOT / name).read_bytes()).hexdigest() != digest
    ]
    assert not changed, f"{path.name} is older than {changed}: rerun {result['script']}"


@pytest.mark.parametrize("path", RESULTS, ids=[p.stem for p in RESULTS])
def test_result_covers_every_kernel_and_ten_seeds(path):
    result = json.loads(path.read_text(encoding="utf-8"))
    assert result["seeds"] == list(range(10))
    assert set(result["kernels"]) == REQUIRED_KERNELS
    capabilities = {k: run["capability"] for k, run in result["kernels"].items()}
    assert capabilities["default"] == "DEFAULT" and capabilities["avx2"] == "AVX2", capabilities
    threads = {k: run["threads"] for k, run in result["kernels"].items()}
    assert threads["avx512 1 thread"] == 1, threads
    for kernel, run in result["kernels"].items():
        for claim, outcomes in run["claims"].items():
            assert len(outcomes) == 10, (kernel, claim)
            assert all(isinstance(x, bool) for x in outcomes), (kernel, claim)


def test_rate_counts_the_worst_kernel(monkeypatch):
    fake = {
        "seeds": list(range(4)),
        "kernels": {
            "avx512": {"claims": {"c": [True, True, True, True]}},
            "default": {"claims": {"c": [True, False, True, True]}},
        },
    }
    monkeypatch.setattr(seed_rates, "load", lambda name: fake)
    rate = seed_rates.rate("x", "c")
    assert (rate.holds, rate.most, rate.of, rate.everywhere) == (3, 4, 4, False)
    assert (rate.total, rate.runs, rate.n_kernels) == (7, 8, 2)
    assert rate.describe() == "3–4 of 4 seeds, depending on the CPU kernel"
    fake["kernels"]["default"]["claims"]["c"] = [True] * 4
    assert seed_rates.rate("x", "c").describe() == "4 of 4 seeds under each of 2 CPU kernels"
    with pytest.raises(KeyError, match="has no claim 'missing'"):
        seed_rates.rate("x", "missing")


def test_a_setting_run_twice_counts_once(monkeypatch):
    """A bench that pins one thread runs "avx512" and "avx512 1 thread" identically: the two
    are one setting, so the page must not claim four kernel settings and 40 runs."""
    fake = {
        "seeds": list(range(2)),
        "kernels": {
            "avx512": {"capability": "AVX512", "threads": 1, "claims": {"c": [True, True]}},
            "avx2": {"capability": "AVX2", "threads": 1, "claims": {"c": [True, False]}},
            "avx512 1 thread": {"capability": "AVX512", "threads": 1, "claims": {"c": [True, True]}},
        },
    }
    monkeypatch.setattr(seed_rates, "load", lambda name: fake)
    rate = seed_rates.rate("x", "c")
    assert (rate.n_kernels, rate.total, rate.runs, rate.holds) == (2, 3, 4, 1)
    fake["kernels"]["avx512"]["threads"] = 2  # a bench that does not pin threads: three settings
    rate = seed_rates.rate("x", "c")
    assert (rate.n_kernels, rate.total, rate.runs) == (3, 5, 6)


def test_unknown_result_names_the_known_ones():
    with pytest.raises(FileNotFoundError, match="no committed seed-rate result 'no-such-bench'"):
        seed_rates.load("no-such-bench")


def test_every_seed_bench_has_its_committed_result():
    """Each bench script that counts seeds (``kernels.main("<name>", ...)``) has its committed
    result, and each committed result comes from such a script: no rate the book could glue
    is missing from the staleness check above, and none is orphaned."""
    import re

    scripts = {}
    for script in sorted((ROOT / "bench").glob("*.py")):
        if script.name == "kernels.py":  # the runner itself (its docstring shows a call)
            continue
        for name in re.findall(r'kernels\.main\(\s*"([\w-]+)"', script.read_text(encoding="utf-8")):
            scripts[name] = f"bench/{script.name}"
    assert scripts, "no bench script calls kernels.main"
    committed = {path.stem: json.loads(path.read_text(encoding="utf-8"))["script"] for path in RESULTS}
    missing = sorted(set(scripts) - set(committed))
    assert not missing, f"bench results never committed: {[(n, scripts[n]) for n in missing]}"
    orphaned = sorted(set(committed) - set(scripts))
    assert not orphaned, f"committed results no bench script writes: {orphaned}"
    assert committed == scripts
