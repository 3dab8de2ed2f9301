"""How often a claim about a trained model holds: seed rates per CPU kernel, as committed data.

A trained model's run is not a fact: floating-point rounding differs with the CPU kernel
(AVX-512, AVX2, the portable default), the thread count and the PyTorch version, and a training
trajectory follows it. So every claim the book makes about a trained model is counted over seeds
under each kernel by a script in ``bench/`` (through ``bench/kernels.py``), and the counts are
committed as JSON in ``tformer/data/bench/<name>.json``, shipped with the package so a chapter
reads the same rates on Colab as in the book build.

One result file looks like::

    {"name": "ch07_heads", "script": "bench/ch07_heads_seeds.py",
     "sources": {"bench/ch07_heads_seeds.py": "<sha1>", "src/tformer/two_reads.py": "<sha1>"},
     "torch": "2.13.0+cpu", "date": "2026-12-01", "seeds": [0, 1, ..., 9],
     "kernels": {"avx512": {"capability": "AVX512", "threads": 2,
                            "claims": {"two_heads_solve": [true, true, ...]},
                            "values": {"acc_2": [1.0, 0.86, ...]}}, ...}}

``claims`` hold one boolean per seed; ``values`` any per-seed numbers worth quoting.
``tests/test_seed_rates.py`` fails when a file's recorded source hashes differ from the files
(a result older than its script or the code it measures).

Usage in a chapter::

    from tformer import seed_rates
    rate = seed_rates.rate("ch07_heads", "two_heads_solve")
    rate.holds, rate.of        # fewest seeds it held for under any kernel, seeds per kernel
    rate.everywhere            # True when it held for every seed under every kernel
    rate.total, rate.runs      # runs it held for, out of seeds x kernels (e.g. 14 of 40)
    glue("heads_rate", rate.holds)   # glue numbers, never describe()'s English words
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

__all__ = ["Rate", "load", "names", "rate", "values"]

PACKAGE_DIR = "data/bench"


@dataclass(frozen=True)
class Rate:
    """How many of ``of`` seeds a claim held for, per kernel and at worst.

    ``per_kernel`` maps a kernel's name (``"avx512"``, ``"avx2"``, ``"default"``, ``"avx512 1
    thread"``) to the count of seeds for which the claim held under it. ``settings`` maps it to
    the configuration the runs really used (``"AVX512/1"``: capability and thread count, as the
    bench recorded them). A bench that pins one thread itself runs ``"avx512"`` and ``"avx512 1
    thread"`` identically: ``n_kernels``, ``total`` and ``runs`` count each setting once.
    """

    claim: str
    per_kernel: dict[str, int]
    of: int
    settings: dict[str, str] = field(default_factory=dict)

    def _distinct(self) -> list[str]:
        """One kernel name per distinct setting (the first), in order."""
        seen: dict[str, str] = {}
        for kernel in self.per_kernel:
            seen.setdefault(self.settings.get(kernel, kernel), kernel)
        return list(seen.values())

    @property
    def holds(self) -> int:
        """The fewest seeds the claim held for under any one kernel."""
        return min(self.per_kernel.values())

    @property
    def most(self) -> int:
        """The most seeds the claim held for under any one kernel."""
        return max(self.per_kernel.values())

    @property
    def everywhere(self) -> bool:
        """True when the claim held for every seed under every kernel."""
        return self.holds == self.of

    @property
    def n_kernels(self) -> int:
        """Distinct kernel settings the claim was measured under."""
        return len(self._distinct())

    @property
    def total(self) -> int:
        """Runs (seed and distinct setting) for which the claim held."""
        return sum(self.per_kernel[kernel] for kernel in self._distinct())

    @property
    def runs(self) -> int:
        """Every run counted: seeds times kernels (``total`` is out of this)."""
        return self.of * self.n_kernels

    def describe(self) -> str:
        """``"10 of 10 seeds under each of 4 CPU kernels"`` or ``"6–8 of 10 seeds, by kernel"``.

        English words, for messages and bench tables. A page glues numbers instead (``holds``,
        ``of``, ``total``, ``runs``, ``n_kernels``): the Chinese edition is built from the English
        execution, so a glued English phrase would show untranslated there.
        """
        if self.holds == self.most:
            return f"{self.holds} of {self.of} seeds under each of {self.n_kernels} CPU kernels"
        return f"{self.holds}–{self.most} of {self.of} seeds, depending on the CPU kernel"


def names() -> list[str]:
    """The names of every committed result."""
    folder = resources.files("tformer").joinpath(PACKAGE_DIR)
    return sorted(p.name.removesuffix(".json") for p in folder.iterdir() if p.name.endswith(".json"))


def load(name: str) -> dict[str, Any]:
    """The committed result ``tformer/data/bench/<name>.json`` (see the module docstring)."""
    path = resources.files("tformer").joinpath(PACKAGE_DIR, f"{name}.json")
    if not path.is_file():
        raise FileNotFoundError(
            f"no committed seed-rate result {name!r} (known: {', '.join(names()) or 'none'}); "
            f"run the bench script that writes it"
        )
    return json.loads(path.read_text(encoding="utf-8"))


def rate(name: str, claim: str) -> Rate:
    """How often ``claim`` held in result ``name``, per kernel (see :class:`Rate`)."""
    result = load(name)
    per_kernel: dict[str, int] = {}
    settings: dict[str, str] = {}
    of = len(result["seeds"])
    for kernel, run in result["kernels"].items():
        if claim not in run["claims"]:
            known = ", ".join(sorted(run["claims"]))
            raise KeyError(f"result {name!r} has no claim {claim!r} under {kernel}; it has: {known}")
        outcomes = run["claims"][claim]
        if len(outcomes) != of:
            raise ValueError(f"{name}/{kernel}/{claim}: {len(outcomes)} outcomes for {of} seeds")
        per_kernel[kernel] = sum(bool(x) for x in outcomes)
        settings[kernel] = f"{run.get('capability', kernel)}/{run.get('threads', '?')}"
    if not per_kernel:
        raise ValueError(f"result {name!r} holds no kernel runs")
    return Rate(claim=claim, per_kernel=per_kernel, of=of, settings=settings)


def values(name: str, key: str) -> dict[str, list[float]]:
    """The per-seed values ``key`` of result ``name``, per kernel."""
    result = load(name)
    return {kernel: run["values"][key] for kernel, run in result["kernels"].items()}
