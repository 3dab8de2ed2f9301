"""Small, honest measurements of time and memory, for the cost figures of the book.

* :func:`time_call` — best wall time of a call over a few repeats (after a warm-up).
* :class:`PeakTensorMemory` / :func:`peak_tensor_bytes` — the largest number of bytes held by
  tensors *created during* a call, on any device. It counts tensor storages as they are
  produced by PyTorch operations and releases them when they are freed, so it measures what the
  computation materialises (e.g. a ``T × T`` score matrix), not the allocator's caching.
* :func:`machine_description` — one line naming the CPU/GPU, thread count and torch version, so
  a figure can state the machine it was measured on.

These helpers are for figures and ``bench/`` scripts; timings are never asserted in tests.
"""

from __future__ import annotations

import os
import platform
import time
import weakref
from collections.abc import Callable
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten


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


class PeakTensorMemory(TorchDispatchMode):
    """Context manager tracking the bytes of tensor storages created inside it.

    ``live`` is the number of bytes currently held by tensors created in the context, ``peak``
    the largest value ``live`` reached. Views share their base's storage and are counted once.
    Tensors that existed before entering (inputs, parameters) are not counted, nor are views
    of them (e.g. the transposed weight ``nn.Linear`` passes to ``addmm``).
    """

    def __init__(self) -> None:
        super().__init__()
        self.live = 0
        self.peak = 0
        self._storages: dict[int, tuple[int, int]] = {}  # data_ptr -> (live tensors, bytes)

    def _release(self, key: int) -> None:
        count, n_bytes = self._storages[key]
        if count == 1:
            del self._storages[key]
            self.live -= n_bytes
        else:
            self._storages[key] = (count - 1, n_bytes)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        result = func(*args, **(kwargs or {}))
        inputs = {
            tensor.untyped_storage().data_ptr()
            for tensor in tree_flatten((args, kwargs))[0]
            if isinstance(tensor, torch.Tensor)
        }
        for tensor in tree_flatten(result)[0]:
            if not isinstance(tensor, torch.Tensor):
                continue
            storage = tensor.untyped_storage()
            key = storage.data_ptr()
            if key == 0:  # empty tensor, nothing allocated
                continue
            if key in inputs and key not in self._storages:  # a view of pre-existing memory
                continue
            if key in self._storages:
                count, n_bytes = self._storages[key]
                self._storages[key] = (count + 1, n_bytes)
            else:
                self._storages[key] = (1, storage.nbytes())
                self.live += storage.nbytes()
                self.peak = max(self.peak, self.live)
            weakref.finalize(tensor, self._release, key)
        return result


def peak_tensor_bytes(fn: Callable[..., Any], *args: Any) -> int:
    """Peak bytes of the tensors ``fn(*args)`` creates (under ``torch.no_grad()``).

    The result of the call is counted too, since it is alive when the call returns.
    """
    tracker = PeakTensorMemory()
    with torch.no_grad(), tracker:
        result = fn(*args)
    del result
    return tracker.peak


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
