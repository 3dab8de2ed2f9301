"""Small, honest measurements of time and memory, for the cost figures of the book.

* :func:`time_call` — best wall time of a call over a few repeats (after a warm-up).
* :func:`peak_tensor_bytes` — the largest number of bytes held by tensors *created during* a
  call, on any device (:class:`tformer.profiling.MemoryTracker` under ``torch.no_grad()``), so
  it measures what the computation materialises (e.g. a ``T × T`` score matrix), not the
  allocator's caching.
* :func:`machine_description` — one line naming the CPU/GPU, thread count and torch version, so
  a figure can state the machine it was measured on.

These helpers are for figures and ``bench/`` scripts; timings are never asserted in tests.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from typing import Any

import torch

from tformer.profiling import peak_memory


def _synchronize() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def time_call(fn: Callable[..., Any], *args: Any, repeats: int = 3, warmup: int = 1) -> float:
    """Best (minimum) wall time in seconds of ``fn(*args)`` over ``repeats`` runs.

    The minimum, as :mod:`timeit` recommends: on a shared machine other processes only ever
    add time, so the fastest run is the least disturbed one. ``warmup`` runs come first and are
    not timed. Runs under ``torch.no_grad()``; synchronises CUDA when a GPU is present.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    times = []
    with torch.no_grad():
        for run in range(warmup + repeats):
            _synchronize()
            start = time.perf_counter()
            fn(*args)
            _synchronize()
            if run >= warmup:
                times.append(time.perf_counter() - start)
    return min(times)


def peak_tensor_bytes(fn: Callable[..., Any], *args: Any) -> int:
    """Peak bytes of the tensors ``fn(*args)`` creates, under ``torch.no_grad()``
    (:class:`tformer.profiling.MemoryTracker`; the call's result is counted too)."""
    with torch.no_grad():
        _, peak_bytes, _ = peak_memory(fn, *args)
    return peak_bytes


def machine_description() -> str:
    """One line describing where a measurement ran, e.g. for a figure caption."""
    if torch.cuda.is_available():
        where = f"GPU {torch.cuda.get_device_name()}"
    else:
        cpu = platform.processor() or platform.machine()
        try:
            with open("/proc/cpuinfo", encoding="utf-8") as info:
                for line in info:
                    if line.startswith("model name"):
                        cpu = line.split(":", 1)[1].strip()
                        break
        except OSError:
            pass
        where = f"CPU {cpu}"
    return (
        f"{where}, {os.cpu_count()} logical cores, {torch.get_num_threads()} torch threads, "
        f"torch {torch.__version__}"
    )
