"""tformer.reproducible: seeds every source, and its deterministic mode is safe on a GPU.

The cuBLAS logic is tested with a fake environment and a flag for "CUDA already initialised", so
it runs on CPU; the last test runs a deterministic matmul on CUDA when a GPU is present.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

import tformer
from tformer.determinism import CUBLAS_SETTING, CUBLAS_VARIABLE, configure_cublas


@pytest.fixture
def restore_determinism():
    before = torch.are_deterministic_algorithms_enabled()
    state = torch.random.get_rng_state()
    yield
    torch.use_deterministic_algorithms(before)
    torch.random.set_rng_state(state)


def _draws():
    return random.random(), float(np.random.rand()), float(torch.rand(())), torch.randn(3)


def test_same_seed_same_numbers_everywhere(restore_determinism):
    tformer.reproducible(7)
    first = _draws()
    tformer.reproducible(7)
    second = _draws()
    assert first[:3] == second[:3]
    assert torch.equal(first[3], second[3])
    tformer.reproducible(8)
    assert _draws()[:3] != first[:3]


def test_returned_generator_is_seeded(restore_determinism):
    a = torch.rand(4, generator=tformer.reproducible(3))
    b = torch.rand(4, generator=torch.Generator().manual_seed(3))
    assert torch.equal(a, b)


def test_deterministic_mode_enables_deterministic_algorithms(restore_determinism, monkeypatch):
    monkeypatch.delenv(CUBLAS_VARIABLE, raising=False)
    tformer.reproducible(0, deterministic=True)
    assert torch.are_deterministic_algorithms_enabled()
    import os

    assert os.environ[CUBLAS_VARIABLE] == CUBLAS_SETTING


def test_default_leaves_algorithms_alone(restore_determinism):
    torch.use_deterministic_algorithms(False)
    tformer.reproducible(0)
    assert not torch.are_deterministic_algorithms_enabled()


@pytest.mark.parametrize("seed", [-1, 1.5, "0", True])
def test_bad_seed_is_a_clear_error(seed):
    with pytest.raises(ValueError, match="non-negative int"):
        tformer.reproducible(seed)


def test_cublas_unset_before_cuda_is_set_silently():
    environ: dict[str, str] = {}
    assert configure_cublas(environ, cuda_initialized=False) is None
    assert environ == {CUBLAS_VARIABLE: ":4096:8"}


@pytest.mark.parametrize("value", [":4096:8", ":16:8"])
def test_cublas_valid_setting_is_kept(value):
    environ = {CUBLAS_VARIABLE: value}
    assert configure_cublas(environ, cuda_initialized=True) is None
    assert environ[CUBLAS_VARIABLE] == value


def test_cublas_unset_after_cuda_started_warns_to_restart():
    environ: dict[str, str] = {}
    message = configure_cublas(environ, cuda_initialized=True)
    assert message and "Restart the kernel" in message and CUBLAS_VARIABLE in message
    assert environ[CUBLAS_VARIABLE] == ":4096:8"  # set anyway, for child processes


def test_cublas_invalid_setting_is_reported_not_overwritten():
    environ = {CUBLAS_VARIABLE: ":1:1"}
    message = configure_cublas(environ, cuda_initialized=False)
    assert message and "':1:1'" in message
    assert environ[CUBLAS_VARIABLE] == ":1:1"


def test_reproducible_warns_when_cuda_started_first(restore_determinism, monkeypatch):
    monkeypatch.delenv(CUBLAS_VARIABLE, raising=False)
    monkeypatch.setattr("tformer.determinism._cuda_initialized", lambda: True)
    with pytest.warns(RuntimeWarning, match="CUDA was initialised before"):
        tformer.reproducible(0, deterministic=True)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_deterministic_matmul_on_cuda(restore_determinism):
    tformer.reproducible(0, deterministic=True)
    a = torch.randn(64, 64, device="cuda")
    assert torch.equal(a @ a, a @ a)
