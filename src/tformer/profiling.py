"""Measuring the memory a computation allocates, on any device (chapter 11).

:class:`MemoryTracker` is a ``TorchDispatchMode``: every tensor produced by a PyTorch operation
inside ``with MemoryTracker() as tracker:`` is recorded with the size of its storage, and
forgotten again when the tensor is freed. ``tracker.peak_bytes`` is the largest total of
simultaneously alive tensors created inside the block, ``tracker.largest_bytes`` the single
largest one. It counts tensor storage only (not Python objects or allocator overhead), works on
CPU, where ``torch.cuda.max_memory_allocated`` does not exist, and agrees with it on GPU.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten


class MemoryTracker(TorchDispatchMode):
    """Track bytes of tensor storage allocated by operations run inside the ``with`` block."""

    def __init__(self) -> None:
        super().__init__()
        self.current_bytes = 0
        self.peak_bytes = 0
        self.largest_bytes = 0
        self._live: dict[int, int] = {}

    def _release(self, key: int) -> None:
        self.current_bytes -= self._live.pop(key, 0)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        outputs = func(*args, **(kwargs or {}))
        for tensor in tree_flatten(outputs)[0]:
            if not isinstance(tensor, torch.Tensor) or tensor.device.type == "meta":
                continue
            storage = tensor.untyped_storage()
            key, size = storage.data_ptr(), storage.nbytes()
            if size == 0 or key in self._live:  # a view of a tensor already counted
                continue
            self._live[key] = size
            self.current_bytes += size
            self.peak_bytes = max(self.peak_bytes, self.current_bytes)
            self.largest_bytes = max(self.largest_bytes, size)
            weakref.finalize(tensor, self._release, key)
        return outputs


def peak_memory(function: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, int, int]:
    """Run ``function(*args, **kwargs)``; return ``(result, peak_bytes, largest_bytes)``."""
    with MemoryTracker() as tracker:
        result = function(*args, **kwargs)
    return result, tracker.peak_bytes, tracker.largest_bytes
