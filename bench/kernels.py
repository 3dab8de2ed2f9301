"""Run a seed benchmark under every CPU kernel and commit its outcomes as data.

A bench script that counts how often a trained-model claim holds defines one function,
``measure(seed) -> {"claims": {name: bool}, "values": {name: float}}``, and ends with::

    if __name__ == "__main__":
        kernels.main("ch07_heads", measure, depends=["src/tformer/two_reads.py"])

Run as ``PYTHONPATH=src python bench/ch07_heads_seeds.py`` it re-runs itself once per kernel
configuration below, in a fresh process with ``ATEN_CPU_CAPABILITY`` (and ``OMP_NUM_THREADS``) set
— the kernel is chosen when torch is imported, so it cannot change inside one process — collects
every seed's outcomes, prints a table of the rates and writes
``src/tformer/data/bench/<name>.json`` (read by :mod:`tformer.seed_rates`; shipped with the package).

Options: ``--kernels avx2,default`` runs a subset (merged into the existing file's other kernels
only if the sources are unchanged), ``--seeds 0-4`` fewer seeds (not written: a committed result
always has 10), ``--dry-run`` prints without writing.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "src" / "tformer" / "data" / "bench"
SEEDS = list(range(10))

# name -> environment. The native kernel of the book's machine is AVX-512; "default" is the
# portable kernel without vector extensions; one thread changes how reductions split.
KERNELS: dict[str, dict[str, str]] = {
    "avx512": {"ATEN_CPU_CAPABILITY": "avx512", "OMP_NUM_THREADS": "2"},
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "OMP_NUM_THREADS": "2"},
    "default": {"ATEN_CPU_CAPABILITY": "default", "OMP_NUM_THREADS": "2"},
    "avx512 1 thread": {"ATEN_CPU_CAPABILITY": "avx512", "OMP_NUM_THREADS": "1"},
}

Measure = Callable[[int], dict[str, dict[str, float | bool]]]


def sha1(path: Path) -> str:
    return hashlib.sha1(path.read_bytes()).hexdigest()


def sources(script: Path, depends: Iterable[str]) -> dict[str, str]:
    """Hashes of the script and of every file it measures (relative to the repository root)."""
    files = [script.resolve().relative_to(ROOT).as_posix(), "bench/kernels.py", *depends]
    return {name: sha1(ROOT / name) for name in sorted(set(files))}


def _child(measure: Measure, seeds: list[int], out: Path) -> None:
    import torch

    runs = []
    for seed in seeds:
        start = time.process_time()
        outcome = measure(seed)
        outcome["cpu_seconds"] = time.process_time() - start
        runs.append(outcome)
        print(f"  seed {seed}: {outcome['claims']}", file=sys.stderr, flush=True)
    claims = {key: [bool(r["claims"][key]) for r in runs] for key in runs[0]["claims"]}
    values = {key: [float(r["values"][key]) for r in runs] for key in runs[0].get("values", {})}
    out.write_text(
        json.dumps(
            {
                "capability": torch.backends.cpu.get_cpu_capability(),
                "threads": torch.get_num_threads(),
                "torch": torch.__version__,
                "cpu_seconds": round(sum(r["cpu_seconds"] for r in runs), 1),
                "claims": claims,
                "values": values,
            }
        )
    )


def _parse_seeds(text: str) -> list[int]:
    if "-" in text:
        low, high = text.split("-")
        return list(range(int(low), int(high) + 1))
    return [int(s) for s in text.split(",")]


def main(name: str, measure: Measure, depends: Iterable[str] = ()) -> None:
    """The command line of a seed benchmark (see the module docstring)."""
    parser = argparse.ArgumentParser(description=f"seed rates of {name} under every CPU kernel")
    parser.add_argument("--kernels", default=",".join(KERNELS))
    parser.add_argument("--seeds", default=f"{SEEDS[0]}-{SEEDS[-1]}")
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--child-out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    seeds = _parse_seeds(args.seeds)
    if args.child_out:
        _child(measure, seeds, Path(args.child_out))
        return

    script = Path(sys.modules["__main__"].__file__).resolve()
    wanted = [k.strip() for k in args.kernels.split(",")]
    unknown = [k for k in wanted if k not in KERNELS]
    if unknown:
        raise SystemExit(f"unknown kernel(s) {unknown}; known: {list(KERNELS)}")
    hashes = sources(script, depends)
    path = RESULTS / f"{name}.json"
    previous = json.loads(path.read_text()) if path.exists() else None
    kernels: dict[str, dict] = {}
    if previous and previous.get("sources") == hashes and previous.get("seeds") == seeds:
        kernels = {k: v for k, v in previous["kernels"].items() if k not in wanted}
    for kernel in wanted:
        out = RESULTS / f".{name}.{kernel.replace(' ', '_').replace(',', '')}.tmp"
        RESULTS.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, **KERNELS[kernel]}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
        print(f"== {name}: {kernel}", flush=True)
        cmd = [sys.executable, str(script), "--seeds", args.seeds, "--child-out", str(out)]
        subprocess.run(cmd, env=env, check=True)
        kernels[kernel] = json.loads(out.read_text())
        out.unlink()
    ordered = {k: kernels[k] for k in KERNELS if k in kernels}
    torch_versions = sorted({run.pop("torch") for run in ordered.values() if "torch" in run})
    result = {
        "name": name,
        "script": script.relative_to(ROOT).as_posix(),
        "sources": hashes,
        "torch": ", ".join(torch_versions) or (previous or {}).get("torch", ""),
        "date": dt.date.today().isoformat(),
        "seeds": seeds,
        "kernels": ordered,
    }
    _print_table(result)
    if args.dry_run or seeds != SEEDS:
        print("(not written: --dry-run or not the standard 10 seeds)")
        return
    path.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path.relative_to(ROOT)}")


def _print_table(result: dict) -> None:
    kernels = list(result["kernels"])
    claims = list(next(iter(result["kernels"].values()))["claims"])
    n = len(result["seeds"])
    width = max(len(c) for c in claims)
    print(f"{'claim':<{width}}  " + "  ".join(f"{k:>16}" for k in kernels))
    for claim in claims:
        counts = [sum(result["kernels"][k]["claims"][claim]) for k in kernels]
        print(f"{claim:<{width}}  " + "  ".join(f"{f'{c}/{n}':>16}" for c in counts))
    print("CPU s: " + ", ".join(f"{k} {result['kernels'][k]['cpu_seconds']}" for k in kernels))
