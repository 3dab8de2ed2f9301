"""The machinery every checker is built from.

A checker is a function decorated with :func:`exercise`. Its body inspects the reader's answer
and either returns (passed) or raises :class:`Wrong` with a *specific* hint. The decorator turns
everything into a :class:`Verdict`, prints one line and records it in :data:`RESULTS` (read by the
grader, :mod:`tformer.grade`). It never lets an exception escape: a missing answer (``None``,
``...``) is "not attempted", an unexpected failure inside the checker is reported as "error",
never a traceback.

Comparison helpers (:func:`expect_number`, :func:`expect_tensor`, :func:`call_reader`) produce
the hints the book promises: the wrong axis named, rows that do not sum to 1, NaN from a fully
masked row, an answer off only by rounding. They accept anything a reader may pass (``None``,
strings, dicts, ragged lists, objects whose ``__array__`` raises, huge arrays) and turn it into
:class:`Wrong` / :class:`NotAttempted`, never into a crash.

Answer cells print their result with :func:`show` / :func:`show_call`: deterministic, rounded,
and a stub prints "not attempted yet" instead of raising, so a reader's copy runs cleanly.

A checker in ``tformer/checks/chNN.py`` looks like this::

    @exercise("02.1", "Weights of the first query")
    def ex1(answer) -> None:
        expect_tensor(answer, EXPECTED, name="the weights", axes=("keys",), rounding_tol=5e-3)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
import torch

from tformer import version
from tformer.checks.language import language, status_text, translate

Status = Literal["passed", "wrong", "not attempted", "error"]
SYMBOLS: dict[str, str] = {"passed": "✓", "wrong": "✗", "not attempted": "…", "error": "!"}
MAX_MESSAGE = 300
"""Hints longer than this are cut (a reader's exception message can be arbitrarily long)."""

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
        if language() == "zh":
            line = f"{SYMBOLS[self.status]} 练习 {self.exercise}：{status_text(self.status)}"
            return f"{line} —— {self.message}" if self.message else line
        line = f"{SYMBOLS[self.status]} Exercise {self.exercise}: {self.status}"
        return f"{line} — {self.message}" if self.message else line

    def _repr_html_(self) -> str:  # the printed line is enough; no second copy in HTML
        return ""

    def __repr__(self) -> str:
        return str(self)


def _shorten(text: str, limit: int = MAX_MESSAGE) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _describe(error: BaseException) -> str:
    """``TypeError: message`` for an exception, robust to a ``__str__`` that itself raises."""
    try:
        message = str(error)
    except Exception:  # noqa: BLE001
        message = "<unprintable message>"
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def is_missing(answer: Any) -> bool:
    """``True`` for the stub values a reader's copy starts with: ``None`` and ``...``."""
    return answer is None or answer is Ellipsis


def exercise(exercise_id: str, title: str = "") -> Callable:
    """Decorate a checker body ``check(answer, *args)``; see the module docstring.

    The decorated checker takes the reader's answer (default ``None``), never raises (only a
    ``KeyboardInterrupt`` passes through, so an interrupted kernel stays interruptible), prints
    one line and returns a :class:`Verdict`. It carries ``exercise_id`` and ``title`` attributes,
    which the grader uses to list a chapter's exercises.
    """

    def decorate(body: Callable[..., Any]) -> Callable[..., Verdict]:
        @functools.wraps(body)
        def checker(answer: Any = None, *args: Any, **kwargs: Any) -> Verdict:
            try:
                if is_missing(answer):
                    raise NotAttempted("replace the placeholder with your answer and run again")
                body(answer, *args, **kwargs)
                verdict = Verdict(exercise_id, "passed")
            except Wrong as wrong:
                verdict = Verdict(exercise_id, "wrong", _shorten(translate(_message(wrong))))
            except NotAttempted as missing:
                verdict = Verdict(
                    exercise_id, "not attempted", _shorten(translate(_message(missing)))
                )
            except KeyboardInterrupt:
                raise
            except BaseException as error:  # noqa: BLE001 - a checker must never raise
                verdict = Verdict(
                    exercise_id, "error",
                    _shorten(translate(f"the check could not run: {_describe(error)}")),
                )
            RESULTS[exercise_id] = asdict(verdict)
            print(verdict)
            warning = version_warning()
            if warning:
                print(warning)
            return verdict

        checker.exercise_id = exercise_id  # type: ignore[attr-defined]
        checker.title = title  # type: ignore[attr-defined]
        return checker

    return decorate


def version_warning(expected: str | None = None, lang: str | None = None) -> str:
    """One line, in ``lang`` (default: the reader's language), when the installed ``tformer`` is
    not the release ``expected`` (default: what the notebook's setup cell recorded,
    :func:`tformer.version.made_for`); ``""`` when they agree or nothing was recorded. Printed
    under every verdict; the grader reports it too.
    """
    try:
        expected = expected or version.made_for()
        installed = version.installed()
        if expected is None or version.same_release(expected, installed):
            return ""
        return translate(
            f"⚠ this notebook was made for tformer {expected}, but tformer {installed} is "
            f"installed: its checks may not match (install tformer v{expected} and restart the kernel)",
            lang,
        )
    except Exception:  # noqa: BLE001 - a checker must never raise
        return ""


def _message(error: BaseException) -> str:
    try:
        return str(error)
    except Exception:  # noqa: BLE001
        return ""


def to_array(answer: Any, name: str = "your answer") -> np.ndarray:
    """Convert a reader's tensor / array / list / number to a float64 numpy array, or raise Wrong.

    Strings, dicts, sets, ``None`` inside lists, ragged lists, complex numbers and objects whose
    conversion fails in any way all become a :class:`Wrong` that names ``name``.
    """
    if is_missing(answer):
        raise NotAttempted(f"{name} is still the placeholder; replace it with your answer")
    if isinstance(answer, str | bytes):
        raise Wrong(f"{name} should be numbers, got the text {_shorten(repr(answer), 40)}")
    if isinstance(answer, dict | set | frozenset):
        raise Wrong(f"{name} should be numbers (a tensor, array or list), got a {type(answer).__name__}")
    try:
        if isinstance(answer, torch.Tensor):
            if answer.is_complex():
                raise Wrong(f"{name} should be real numbers, got a complex tensor")
            answer = answer.detach().to("cpu", torch.float64).numpy()
        if isinstance(answer, np.ndarray) and np.iscomplexobj(answer):
            raise Wrong(f"{name} should be real numbers, got a complex array")
        array = np.asarray(answer, dtype=float)
    except Wrong:
        raise
    except Exception as error:  # noqa: BLE001 - ragged lists, failing __array__, anything
        kind = type(answer).__name__
        if isinstance(answer, list | tuple):
            hint = "a list of lists whose rows have different lengths, or non-numbers inside"
            raise Wrong(f"{name} should be numbers of a regular shape; got {hint}") from None
        raise Wrong(
            f"{name} should be numbers (a tensor, array or list), got {kind} "
            f"({_shorten(_describe(error), 80)})"
        ) from None
    return array


def _is_number_like(answer: Any) -> bool:
    if isinstance(answer, bool | np.bool_):
        return False
    if isinstance(answer, int | float | np.number):
        return True
    return isinstance(answer, torch.Tensor | np.ndarray)


def as_number(answer: Any, name: str = "your answer") -> float:
    """The reader's answer as one Python float, or :class:`Wrong` / :class:`NotAttempted`.

    Use it before comparing an answer with ``==`` in a checker (a tensor answer would make
    ``answer == 42`` ambiguous): ``value = as_number(answer, "the parameter count")``.
    NaN and inf are returned as they are; :func:`expect_number` gives them their hints.
    """
    if is_missing(answer):
        raise NotAttempted(f"{name} is still the placeholder; replace it with your answer")
    if isinstance(answer, str):
        raise Wrong(f"{name} should be a number, not the text {_shorten(repr(answer), 40)}")
    if not _is_number_like(answer):
        raise Wrong(f"{name} should be a single number, got {type(answer).__name__}")
    if isinstance(answer, int) and abs(answer) > 2**53:
        return float(answer) if abs(answer) < 1e308 else math.copysign(math.inf, answer)
    value = to_array(answer, name)
    if value.size != 1:
        raise Wrong(f"{name} should be a single number, got an array of shape {value.shape}")
    return float(value.reshape(()))


def shown(value: float) -> str:
    """A number as a hint prints it: a whole number exactly, with thousands separators
    (``262,144,000``, never ``2.62144e+08``), anything else to 6 significant digits."""
    if math.isfinite(value) and value == int(value) and abs(value) < 1e18:
        return f"{int(value):,}"
    return f"{value:g}"


def _is_integer_typed(answer: Any) -> bool:
    if isinstance(answer, bool | np.bool_):
        return False
    if isinstance(answer, int | np.integer):
        return True
    if isinstance(answer, torch.Tensor):
        return not (answer.is_floating_point() or answer.is_complex())
    if isinstance(answer, np.ndarray):
        return np.issubdtype(answer.dtype, np.integer)
    return False


def expect_number(
    answer: Any,
    expected: float,
    *,
    name: str = "your answer",
    rel_tol: float = 1e-6,
    abs_tol: float = 1e-9,
    rounding_tol: float | None = None,
    integer: bool = False,
) -> None:
    """Raise :class:`Wrong` unless ``answer`` is a number close to ``expected``.

    Accepts Python/numpy numbers and one-element tensors/arrays. ``rounding_tol``: an answer
    within this distance (but outside ``rel_tol``/``abs_tol``) is called "off by rounding" —
    e.g. the reader typed 0.53 for 0.532. ``integer``: the answer is a count, so it must be an
    integer (a Python ``int``, or an integer tensor/array), compared exactly; a float with the
    right value gets its own hint.
    """
    value = as_number(answer, name)
    if integer and not _is_integer_typed(answer):
        if math.isfinite(value) and value == expected:
            raise Wrong(f"{name} has the right value but is the float {value!r}: a count is an "
                        "integer, so give an int (use // instead of /, or int(...))")
        if math.isfinite(value) and value != int(value):
            raise Wrong(f"{name} = {shown(value)} is not a whole number: a count is an exact "
                        "integer")
    if integer and math.isfinite(value):
        rel_tol, abs_tol = 0.0, 0.0
    if math.isnan(value):
        raise Wrong(f"{name} is NaN — look for a division by zero or a fully masked row")
    if math.isinf(value):
        raise Wrong(f"{name} is infinite — look for an overflow, a log of 0 or a division by 0")
    if math.isclose(value, expected, rel_tol=rel_tol, abs_tol=abs_tol):
        return
    if rounding_tol is not None and abs(value - expected) <= rounding_tol:
        raise Wrong(f"{name} = {shown(value)} is off only by rounding; keep more digits")
    raise Wrong(f"{name} = {shown(value)} is not right")


def _axis_names(axes: Sequence[str] | None, ndim: int) -> list[str]:
    names = [str(axis) for axis in axes] if axes is not None else []
    if len(names) < ndim:  # name the leading (batch-like) axes generically
        names = [f"axis {i}" for i in range(ndim - len(names))] + names
    return names[-ndim:] if ndim else []


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

    ``axes`` names the trailing axes (e.g. ``("queries", "keys")``) so a shape mismatch says
    which axis is wrong, and a transposed answer is recognised. ``rows_sum_to_one`` adds the
    softmax-axis hint for attention weights. NaN and ±inf in the answer get their own hints.
    """
    value = to_array(answer, name)
    target = np.asarray(to_array(expected, "expected"), dtype=float)
    names = _axis_names(axes, target.ndim)
    if value.shape != target.shape:
        if value.ndim == target.ndim >= 2 and value.shape == target.shape[:-2] + target.shape[
            -1:-3:-1
        ]:
            raise Wrong(
                f"{name} has shape {value.shape}, the transpose of the expected {target.shape} "
                f"({' × '.join(names)}); tokens are rows in this book"
            )
        if value.ndim != target.ndim:
            raise Wrong(
                f"{name} has {value.ndim} axes {value.shape}; expected {target.ndim} axes "
                f"({', '.join(names) or 'a single number'}) of shape {target.shape}"
            )
        bad = [
            f"{names[i]} has size {value.shape[i]}, expected {target.shape[i]}"
            for i in range(target.ndim)
            if value.shape[i] != target.shape[i]
        ]
        raise Wrong(f"{name} has shape {value.shape}: " + "; ".join(bad))
    if np.isnan(value).any():
        raise Wrong(
            f"{name} contains NaN — typically a softmax over a fully masked row "
            "(every score −∞); check the mask"
        )
    if np.isinf(value).any() and not np.isinf(target).any():
        raise Wrong(
            f"{name} contains ±inf — masked scores are −∞ only before the softmax; "
            "look for an overflow or a division by 0"
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
            shown = np.array2string(np.round(sums, 3), threshold=6, edgeitems=2)
            raise Wrong(f"the rows of {name} should sum to 1 (softmax over keys); they sum to {shown}")
    if rounding_tol is not None and np.allclose(value, target, atol=rounding_tol, rtol=0):
        raise Wrong(f"{name} is off only by rounding; keep more digits")
    if (
        value.ndim >= 2
        and value.shape[-1] == value.shape[-2]
        and np.allclose(np.swapaxes(value, -1, -2), target, atol=atol, rtol=rtol)
    ):
        raise Wrong(f"{name} is the transpose of the expected matrix; tokens are rows in this book")
    if target.ndim == 0:
        raise Wrong(f"{name} = {float(value):.4g} is not right")
    difference = np.abs(value - target)
    difference[np.isnan(difference)] = np.inf
    worst = np.unravel_index(int(difference.argmax()), target.shape)
    raise Wrong(
        f"{name} differs from the expected values; the largest difference is at index "
        f"{tuple(int(i) for i in worst)}: {value[worst]:.4g} instead of {target[worst]:.4g}"
    )


def call_reader(function: Any, *args: Any, name: str = "your function", **kwargs: Any) -> Any:
    """Call a reader's function; turn a stub, a non-callable or any exception into a verdict.

    ``NotImplementedError`` (the stub body) becomes :class:`NotAttempted`; any other exception,
    ``SystemExit`` included, becomes :class:`Wrong` naming the exception.
    """
    if is_missing(function):
        raise NotAttempted("define the function and run the cell again")
    if not callable(function):
        raise Wrong(f"{name} should be a function, got {type(function).__name__}")
    try:
        return function(*args, **kwargs)
    except NotImplementedError:
        raise NotAttempted(f"{name} still raises NotImplementedError — fill in its body") from None
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - the reader's code may fail in any way
        raise Wrong(f"{name} raised {_shorten(_describe(error), 200)}") from None


# ---------------------------------------------------------------------------------------------
# Answer cells: deterministic, rounded printing that never raises on a stub.

NOT_ATTEMPTED_LINE = "(not attempted yet)"


def format_value(value: Any, digits: int = 4) -> str:
    """A deterministic text for a number / tensor / array / list / dict, rounded to ``digits``.

    ``-0.0`` prints as ``0.0``; tensors and arrays print as numpy arrays with fixed precision,
    so the text is the same on every machine (what nbval compares).
    """
    if is_missing(value):
        return translate(NOT_ATTEMPTED_LINE)
    if isinstance(value, bool | np.bool_ | str | int | np.integer):
        return repr(value.item() if isinstance(value, np.generic) else value)
    if isinstance(value, float | np.floating):
        rounded = round(float(value), digits) + 0.0
        return repr(rounded)
    if isinstance(value, torch.Size):
        return repr(tuple(value))
    if isinstance(value, dict):
        items = ", ".join(f"{key!r}: {format_value(item, digits)}" for key, item in value.items())
        return "{" + items + "}"
    if isinstance(value, torch.Tensor | np.ndarray) or (
        isinstance(value, list | tuple) and value and not isinstance(value[0], str | dict)
    ):
        try:
            array = to_array(value)
        except (Wrong, NotAttempted):
            return repr(value)
        if array.ndim == 0:
            return format_value(float(array), digits)
        rounded = np.round(array, digits) + 0.0
        return np.array2string(
            rounded, precision=digits, floatmode="maxprec_equal", suppress_small=True,
            separator=", ", threshold=200,
        )
    return repr(value)



def as_tuple(answer: Any, size: int, what: str) -> list[Any]:
    """The reader's answer as a list of exactly ``size`` items, or :class:`Wrong` naming ``what``.

    A number, a 0-d array, a string or anything that is not a sequence gets the hint too.
    """
    try:
        values = None if isinstance(answer, str | bytes) else list(answer)
    except TypeError:  # a number, a 0-d array, or anything else that is not a sequence
        values = None
    if values is None or len(values) != size:
        raise Wrong(f"give {size} values in a tuple: {what}")
    return values


def as_shape(value: Any, name: str) -> tuple[int, ...]:
    """A shape given as ``torch.Size``, a tuple/list of integers or one integer, as a tuple."""
    if isinstance(value, torch.Size):
        return tuple(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    if isinstance(value, tuple | list) and all(
        isinstance(item, int) and not isinstance(item, bool) for item in value
    ):
        return tuple(value)
    shown = _shorten(repr(value), 60)
    raise Wrong(f"{name} should be a tuple of integers such as (2, 8, 5, 64), got {shown}")


def show(answer: Any, digits: int = 4) -> None:
    """Print ``answer`` rounded to ``digits`` (see :func:`format_value`); a stub prints
    ``(not attempted yet)``. Use it in answer cells: ``show(answer)``."""
    try:
        text = format_value(answer, digits)
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - an answer cell must not raise
        text = translate(f"(could not print the answer: {_shorten(_describe(error), 120)})")
    print(text)


def show_call(function: Any, *args: Any, digits: int = 4, **kwargs: Any) -> None:
    """Call the reader's ``function(*args, **kwargs)`` and :func:`show` the result.

    A stub (``None`` or a body that raises ``NotImplementedError``) prints ``(not attempted
    yet)``; any other exception prints one line naming it. Never raises.
    """
    try:
        result = call_reader(function, *args, **kwargs)
    except NotAttempted:
        print(translate(NOT_ATTEMPTED_LINE))
        return
    except Wrong as wrong:
        print(f"({_shorten(translate(_message(wrong)), 200)})")
        return
    show(result, digits)


def summary() -> None:
    """Print every verdict recorded in this kernel and the total (no file needed; Colab-friendly)."""
    if not RESULTS:
        print(translate("No exercise has been checked in this session yet."))
        return
    for key in sorted(RESULTS, key=_exercise_sort_key):
        print(Verdict(**RESULTS[key]))
    passed = sum(result["status"] == "passed" for result in RESULTS.values())
    print(translate(f"Total: {passed}/{len(RESULTS)} passed"))


def _exercise_sort_key(exercise_id: str) -> tuple:
    return tuple(int(part) if part.isdigit() else 0 for part in str(exercise_id).split("."))


@dataclass(frozen=True)
class Mistake:
    """A typical wrong answer to one exercise and the hint its checker must give for it.

    Every ``tformer/checks/chNN.py`` lists its exercises' typical mistakes in a module-level
    ``MISTAKES: dict[str, list[Mistake]]`` keyed by exercise id (``"02.1"``);
    ``tests/test_mistakes.py`` feeds each one to the checker and asserts that the verdict is
    "wrong" and that its message contains ``hint`` (case-insensitive). ``answer`` is a
    zero-argument callable that builds the wrong answer (a value, or a wrong function for an
    implementation exercise); ``args`` are the checker's further positional arguments, if any.
    """

    label: str
    """What the learner did, e.g. ``"scores instead of weights"``."""
    answer: Callable[[], Any]
    hint: str
    args: tuple = ()
