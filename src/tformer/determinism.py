"""Reproducible runs: one call seeds every random source the book uses, on CPU and on a GPU.

``tformer.reproducible(seed)`` seeds Python's ``random``, NumPy's global generator and torch (CPU
and every CUDA device) and returns a ``torch.Generator`` seeded the same way, for code that takes
an explicit generator. ``deterministic=True`` also asks torch for deterministic kernels
(``torch.use_deterministic_algorithms(True)``). On CUDA that alone makes cuBLAS raise
("Deterministic behavior was enabled … but this operation is not deterministic because it uses
CuBLAS and you have CUDA >= 10.2") unless the environment variable ``CUBLAS_WORKSPACE_CONFIG`` is
set *before CUDA is initialised*; so the helper sets it to ``":4096:8"`` when it is unset, and warns
when CUDA was already initialised without a valid setting (restart the kernel and call
``reproducible`` first).

Determinism is per device and library version: the same seed gives the same numbers on every run of
one machine, not the same numbers on a CPU and a GPU (kernels sum in different orders).
"""

from __future__ import annotations

import os
import random
import warnings

import numpy as np
import torch

CUBLAS_VARIABLE = "CUBLAS_WORKSPACE_CONFIG"
CUBLAS_SETTING = ":4096:8"
# The two settings NVIDIA documents for deterministic cuBLAS (the second uses less memory).
CUBLAS_VALID = (":4096:8", ":16:8")


def _cuda_initialized() -> bool:
    return bool(torch.cuda.is_available() and torch.cuda.is_initialized())


def configure_cublas(environ: dict | None = None, cuda_initialized: bool | None = None) -> str | None:
    """Make sure ``CUBLAS_WORKSPACE_CONFIG`` allows deterministic cuBLAS; return a warning text if
    it cannot take effect (CUDA already initialised without a valid setting), else ``None``.

    ``environ`` (default ``os.environ``) and ``cuda_initialized`` (default: ask torch) are
    parameters so the logic can be tested without a GPU.
    """
    environ = os.environ if environ is None else environ
    initialized = _cuda_initialized() if cuda_initialized is None else cuda_initialized
    current = environ.get(CUBLAS_VARIABLE)
    if current in CUBLAS_VALID:
        return None
    if current is None:
        environ[CUBLAS_VARIABLE] = CUBLAS_SETTING
    if initialized:
        return (
            f"CUDA was initialised before {CUBLAS_VARIABLE} was set "
            f"(it is {current!r} now, {environ.get(CUBLAS_VARIABLE)!r} from here on): cuBLAS keeps "
            "the old setting, so deterministic algorithms can raise a RuntimeError on the GPU. "
            "Restart the kernel and call tformer.reproducible(..., deterministic=True) before any "
            "CUDA work."
        )
    if current is not None:
        return (
            f"{CUBLAS_VARIABLE}={current!r} is not one of {CUBLAS_VALID}: cuBLAS will not be "
            f"deterministic on the GPU. Unset it or set it to {CUBLAS_SETTING!r}."
        )
    return None


def reproducible(seed: int = 0, *, deterministic: bool = False) -> torch.Generator:
    """Seed ``random``, NumPy and torch (CPU and all GPUs) with ``seed``; return a CPU
    ``torch.Generator`` seeded with it.

    With ``deterministic=True``, also set ``CUBLAS_WORKSPACE_CONFIG`` if unset and call
    ``torch.use_deterministic_algorithms(True)`` (a ``RuntimeWarning`` says so if cuBLAS cannot
    follow because CUDA started first). Call it at the top of the cell that draws.
    """
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    if deterministic:
        problem = configure_cublas()
        if problem:
            warnings.warn(problem, RuntimeWarning, stacklevel=2)
        torch.use_deterministic_algorithms(True)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)  # also seeds every CUDA device
    generator = torch.Generator()
    generator.manual_seed(seed)
    return generator
