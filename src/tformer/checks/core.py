"""The machinery every checker is built from.

A checker is a function decorated with :func:`exercise`. Its body inspects the reader's answer
and either returns (passed) or raises :class:`Wrong` with a *specific* hint. The decorator turns
everything into a :class:`Verdict`, prints one line and records it in :data:`RESULTS` (read by the
grader). It never lets an exception escape: a missing answer (``None``, ``...``) is "not
attempted", an unexpected failure inside the checker is reported as "error", never a traceback.

Comparison helpers (:func:`expect_number`, :func:`expect_tensor`, :func:`call_reader`) produce
the hints the book promises: the wrong axis named, rows that do not sum to 1, NaN from a fully
masked row, an answer off only by rounding.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
import torch

Status = Literal["passed", "wrong", "not attempted", "error"]
SYMBOLS: dict[str, str] = {"passed": "✓", "wrong": "✗", "not attempted": "…", "error": "!"}

RESULTS: dict[str, dict[str, str]] = {}
"""Verdicts recorded in this kernel, keyed by exercise id (``"02.1"``); read by the grader."""


class Wrong(Exception):  # noqa: N818 - reads as a verdict: ``raise Wrong("hint")``
    """Raised inside a checker body: the answer is wrong; the message is the hint."""


class NotAttempted(Exception):  # noqa: N818
    """Raised inside a checker body when the answer is (still) the stub."""


@dataclass(frozen=True)
class Verdict:
    """The outcome of one check: ``exercise`` id, ``status`` and a ``message`` (the hint)."""

    exercise: str
    status: Status
    message: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def __str__(self) -> str:
        line = f"{SYMBOLS[self.status]} Exercise {self.exercise}: {self.status}"
        return f"{line} — {self.message}" if self.message else line

    def _repr_html_(self) -> str:  # the plain line is enough; no HTML needed
        return ""

    def __repr__(self) -> str:
        return str(self)


def is_missing(answer: Any) -> bool:
    """``True`` for the stub values a reader's copy starts with: ``None`` and ``...``."""
    return answer is None or answer is Ellipsis


def exercise(exercise_id: str, title: str = "") -> Callable:
    """Decorate a checker body ``check(answer, *args)``; see the module docstring."""

    def decorate(body: Callable[..., Any]) -> Callable[..., Verdict]:
        @functools.wraps(body)
        def checker(answer: Any = None, *args: Any, **kwargs: Any) -> Verdict:
            try:
                if is_missing(answer):
                    raise NotAttempted("replace the placeholder with your answer and run again")
                body(answer, *args, **kwargs)
                verdict = Verdict(exercise_id, "passed")
            except Wrong as wrong:
                verdict = Verdict(exercise_id, "wrong", str(wrong))
            except NotAttempted as missing:
                verdict = Verdict(exercise_id, "not attempted", str(missing))
            except Exception as error:  # noqa: BLE001 - a checker must never raise
                verdict = Verdict(
                    exercise_id, "error", f"the check could not run: {type(error).__name__}: {error}"
                )
            RESULTS[exercise_id] = asdict(verdict)
            print(verdict)
            return verdict

        checker.exercise_id = exercise_id  # type: ignore[attr-defined]
        checker.title = title  # type: ignore[attr-defined]
        return checker

    return decorate


def to_array(answer: Any, name: str = "your answer") -> np.ndarray:
    """Convert a reader's tensor / array / list / number to a float64 numpy array, or raise Wrong."""
    if isinstance(answer, torch.Tensor):
        answer = answer.detach().cpu().numpy()
    try:
        array = np.asarray(answer, dtype=float)
    except (TypeError, ValueError):
        raise Wrong(
            f"{name} should be numbers (a tensor, array or list), got {type(answer).__name__}"
        ) from None
    return array


def expect_number(
    answer: Any,
    expected: float,
    *,
    name: str = "your answer",
    rel_tol: float = 1e-6,
    abs_tol: float = 1e-9,
    rounding_tol: float | None = None,
) -> None:
    """Raise :class:`Wrong` unless ``answer`` is a number close to ``expected``.

    ``rounding_tol``: an answer within this distance (but outside ``rel_tol``/``abs_tol``) is
    called "off by rounding" — e.g. the reader typed 0.53 for 0.532.
    """
    if isinstance(answer, bool) or not isinstance(answer, int | float | np.number | torch.Tensor):
        raise Wrong(f"{name} should be a single number, got {type(answer).__name__}")
    value = to_array(answer, name)
    if value.size != 1:
        raise Wrong(f"{name} should be a single number, got an array of shape {value.shape}")
    value = float(value.reshape(()))
    if math.isnan(value):
        raise Wrong(f"{name} is NaN — look for a division by zero or a fully masked row")
    if math.isclose(value, expected, rel_tol=rel_tol, abs_tol=abs_tol):
        return
    if rounding_tol is not None and abs(value - expected) <= rounding_tol:
        raise Wrong(f"{name} = {value:g} is off only by rounding; keep more digits")
    raise Wrong(f"{name} = {value:g} is not right")


def expect_tensor(
    answer: Any,
    expected: Any,
    *,
    name: str = "your answer",
    axes: Sequence[str] | None = None,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    rows_sum_to_one: bool = False,
    rounding_tol: float | None = None,
) -> None:
    """Raise :class:`Wrong` unless ``answer`` matches ``expected`` (shape first, then values).

    ``axes`` names the axes (e.g. ``("queries", "keys")``) so a shape mismatch says which axis is
    wrong, and a transposed answer is recognised. ``rows_sum_to_one`` adds the softmax-axis hint
    for attention weights.
    """
    value = to_array(answer, name)
    target = to_array(expected, "expected")
    axes = list(axes) if axes is not None else [f"axis {i}" for i in range(target.ndim)]
    if value.shape != target.shape:
        if value.ndim == 2 and value.shape == target.shape[::-1]:
            raise Wrong(
                f"{name} has shape {value.shape}, the transpose of the expected {target.shape} "
                f"({' × '.join(axes)}); tokens are rows in this book"
            )
        if value.ndim != target.ndim:
            raise Wrong(
                f"{name} has {value.ndim} axes {value.shape}; expected {target.ndim} axes "
                f"({', '.join(axes)}) of shape {target.shape}"
            )
        bad = [
            f"{axes[i]} has size {value.shape[i]}, expected {target.shape[i]}"
            for i in range(target.ndim)
            if value.shape[i] != target.shape[i]
        ]
        raise Wrong(f"{name} has shape {value.shape}: " + "; ".join(bad))
    if np.isnan(value).any():
        raise Wrong(
            f"{name} contains NaN — typically a softmax over a fully masked row "
            "(every score −∞); check the mask"
        )
    if np.allclose(value, target, atol=atol, rtol=rtol):
        return
    if rows_sum_to_one and value.ndim >= 1:
        sums = value.sum(axis=-1)
        if not np.allclose(sums, 1.0, atol=1e-4):
            col_sums = value.sum(axis=-2) if value.ndim >= 2 else None
            if col_sums is not None and np.allclose(col_sums, 1.0, atol=1e-4):
                raise Wrong(
                    f"the columns of {name} sum to 1 but the rows do not — the softmax ran over "
                    "queries; it must run over the key axis (dim=-1)"
                )
            raise Wrong(f"the rows of {name} should sum to 1 (softmax over keys); they sum to {sums.round(3)}")
    if rounding_tol is not None and np.allclose(value, target, atol=rounding_tol, rtol=0):
        raise Wrong(f"{name} is off only by rounding; keep more digits")
    worst = np.unravel_index(np.abs(value - target).argmax(), target.shape)
    raise Wrong(
        f"{name} differs from the expected values; the largest difference is at index "
        f"{tuple(int(i) for i in worst)}: {value[worst]:.4g} instead of {target[worst]:.4g}"
    )


def call_reader(function: Any, *args: Any, name: str = "your function", **kwargs: Any) -> Any:
    """Call a reader's function; turn a stub, a non-callable or any exception into a verdict."""
    if is_missing(function):
        raise NotAttempted("define the function and run the cell again")
    if not callable(function):
        raise Wrong(f"{name} should be a function, got {type(function).__name__}")
    try:
        return function(*args, **kwargs)
    except NotImplementedError:
        raise NotAttempted(f"{name} still raises NotImplementedError — fill in its body") from None
    except Exception as error:  # noqa: BLE001 - the reader's code may fail in any way
        raise Wrong(f"{name} raised {type(error).__name__}: {error}") from None
