"""Exercise checkers: ``checks.chNN.exK(answer)`` prints a verdict and never raises.

Each chapter's checkers live in ``tformer.checks.chNN``; the shared machinery (the
:func:`~tformer.checks.core.exercise` decorator, verdicts, comparison helpers with hints, the
answer-cell printers :func:`~tformer.checks.core.show` / :func:`~tformer.checks.core.show_call`)
is in :mod:`tformer.checks.core`.

Verdicts and hints are printed in the reader's language (English or Chinese), chosen once per
kernel from the notebook's metadata (:mod:`tformer.checks.language`);
``checks.set_language("zh")`` overrides it.

``from tformer import checks`` is enough in a notebook: ``checks.ch02`` imports the chapter's
checkers on first use.
"""

from __future__ import annotations

import importlib
import re
from types import ModuleType

from tformer.checks.core import (
    RESULTS,
    NotAttempted,
    Verdict,
    Wrong,
    exercise,
    show,
    show_call,
    summary,
)
from tformer.checks.language import set_language

__all__ = [
    "RESULTS",
    "NotAttempted",
    "Verdict",
    "Wrong",
    "exercise",
    "set_language",
    "show",
    "show_call",
    "summary",
]


def __getattr__(name: str) -> ModuleType:
    """Import ``tformer.checks.chNN`` lazily, so ``checks.ch02.ex1(answer)`` just works."""
    if re.fullmatch(r"ch\d\d", name):
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
