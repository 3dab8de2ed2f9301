"""Exercise checkers: ``checks.chNN.exK(answer)`` prints a verdict and never raises.

Each chapter's checkers live in ``tformer.checks.chNN``; the shared machinery (the
:func:`~tformer.checks.core.exercise` decorator, verdicts, comparison helpers with hints) is in
:mod:`tformer.checks.core`.
"""

from tformer.checks.core import RESULTS, Verdict, Wrong, exercise

__all__ = ["RESULTS", "Verdict", "Wrong", "exercise"]
