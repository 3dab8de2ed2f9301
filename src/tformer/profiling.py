"""Measuring the memory a computation allocates, on any device (chapters 3 and 11, bench/).

:class:`MemoryTracker` is a ``TorchDispatchMode``: every tensor storage created by a PyTorch
operation inside ``with MemoryTracker() as tracker:`` is recorded with its size, and forgotten
again when the last tensor using it is freed. ``tracker.peak_bytes`` is the largest total of
simultaneously alive storages created inside the block, ``tracker.largest_bytes`` the single
largest one. Views share their base's storage and are counted once; tensors that existed before
the block (inputs, parameters) are not counted, nor are views of them (such as the transposed
weight ``nn.Linear`` hands to ``addmm``). It counts tensor storage only (not Python objects or
allocator overhead), works on CPU, where ``torch.cuda.max_memory_allocated`` does not exist, and
agrees with it on a GPU.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten


class MemoryTracker(TorchDispatchMode):
    """Track the bytes of tensor storage allocated by operations run inside the ``with`` block."""

    def __init__(self) -> None:
        super().__init__()
        self.current_bytes = 0
        self.peak_bytes = 0
        self.largest_bytes = 0
        self._storages: dict[int, tuple[int, int]] = {}  # data_ptr -> (live tensors, bytes)

    def _release(self, key: int) -> None:
        count, n_bytes = self._storages[key]
        if count == 1:
            del self._storages[key]
            self.current_bytes -= n_bytes
        else:
            self._storages[key] = (count - 1, n_bytes)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        outputs = func(*args, **(kwargs or {}))
        inputs = {
            tensor.untyped_storage().data_ptr()
            for tensor in tree_flatten((args, kwargs))[0]
            if isinstance(tensor, torch.Tensor) and tensor.device.type != "meta"
        }
        for tensor in tree_flatten(outputs)[0]:
            if not isinstance(tensor, torch.Tensor) or tensor.device.type == "meta":
                continue
            storage = tensor.untyped_storage()
            key, n_bytes = storage.data_ptr(), storage.nbytes()
            if key == 0 or n_bytes == 0:  # an empty tensor: nothing allocated
                continue
            if key in inputs and key not in self._storages:  # a view of pre-existing memory
                continue
            if key in self._storages:  # another view of a storage created in the block
                count, known_bytes = self._storages[key]
                self._storages[key] = (count + 1, known_bytes)
            else:
                self._storages[key] = (1, n_bytes)
                self.current_bytes += n_bytes
                self.peak_bytes = max(self.peak_bytes, self.current_bytes)
                self.largest_bytes = max(self.largest_bytes, n_bytes)
            weakref.finalize(tensor, self._release, key)
        return outputs


def peak_memory(function: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, int, int]:
    """Run ``function(*args, **kwargs)``; return ``(result, peak_bytes, largest_bytes)``.

    The result is alive when the call returns, so it counts towards the peak.
    """
    with MemoryTracker() as tracker:
        result = function(*args, **kwargs)
    return result, tracker.peak_bytes, tracker.largest_bytes
