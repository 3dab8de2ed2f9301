"""Input checking shared by every module: clear errors instead of deep tracebacks.

Readers pass numpy arrays, lists and tensors of any dtype; these helpers turn them into
floating-point tensors or raise a ``TypeError``/``ValueError`` that names the argument, the
expected shape and the actual shape.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

Tensorish = torch.Tensor | np.ndarray | Sequence


def as_float_tensor(value: Tensorish, name: str) -> torch.Tensor:
    """Return ``value`` as a floating-point tensor (numpy float64 stays float64).

    Integer and boolean inputs are converted to the default float dtype; complex inputs and
    non-numeric objects raise ``TypeError`` naming ``name``.
    """
    if isinstance(value, torch.Tensor):
        tensor = value
    elif isinstance(value, np.ndarray | list | tuple | float | int):
        try:
            tensor = torch.as_tensor(np.asarray(value))
        except (TypeError, ValueError) as error:
            raise TypeError(f"{name} must be numeric, got {type(value).__name__}: {error}") from None
    else:
        raise TypeError(
            f"{name} must be a torch.Tensor or numpy array, got {type(value).__name__}"
        )
    if tensor.is_complex():
        raise TypeError(f"{name} must be real-valued, got dtype {tensor.dtype}")
    if not tensor.is_floating_point():
        tensor = tensor.to(torch.get_default_dtype())
    return tensor


def check_ndim(tensor: torch.Tensor, name: str, allowed: Sequence[int], layout: str) -> None:
    """Raise ``ValueError`` unless ``tensor.ndim`` is one of ``allowed``; ``layout`` names the axes."""
    if tensor.ndim not in allowed:
        raise ValueError(
            f"{name} must have shape {layout} ({' or '.join(map(str, allowed))} dims), "
            f"got shape {tuple(tensor.shape)}"
        )


def check_last_dim(tensor: torch.Tensor, name: str, expected: int, meaning: str) -> None:
    """Raise ``ValueError`` unless the last axis of ``tensor`` has size ``expected``."""
    if tensor.shape[-1] != expected:
        raise ValueError(
            f"{name} must have last dimension {meaning} = {expected}, got shape {tuple(tensor.shape)}"
        )


def check_finite(tensor: torch.Tensor, name: str) -> None:
    """Raise ``ValueError`` if ``tensor`` holds NaN (infinities are allowed: masks use -inf)."""
    if torch.isnan(tensor).any():
        raise ValueError(f"{name} contains NaN")
