"""Every exercise names its typical mistakes, and its checker recognises each one.

Each ``tformer.checks.chNN`` module lists ``MISTAKES``: exercise id -> [:class:`Mistake`].
For every mistake, the checker must say "wrong" and its hint must contain the listed phrase —
not a generic "differs from the expected values". Every exercise lists at least two mistakes.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import tformer.checks
from tformer.checks.core import Mistake

MIN_MISTAKES = 2


def _modules():
    for info in pkgutil.iter_modules(tformer.checks.__path__):
        if info.name.startswith("ch"):
            yield importlib.import_module(f"tformer.checks.{info.name}")


def _checkers(module):
    return {
        value.exercise_id: value
        for value in vars(module).values()
        if callable(value) and hasattr(value, "exercise_id")
    }


CHECKERS = {eid: fn for module in _modules() for eid, fn in _checkers(module).items()}
MISTAKES = {
    eid: (module, mistakes)
    for module in _modules()
    for eid, mistakes in getattr(module, "MISTAKES", {}).items()
}
CASES = [
    pytest.param(eid, index, id=f"{eid}-{mistake.label}")
    for eid, (_, mistakes) in sorted(MISTAKES.items())
    for index, mistake in enumerate(mistakes)
]


@pytest.mark.parametrize("exercise_id", sorted(CHECKERS))
def test_every_exercise_lists_its_typical_mistakes(exercise_id):
    listed = MISTAKES.get(exercise_id, (None, []))[1]
    assert len(listed) >= MIN_MISTAKES, (
        f"exercise {exercise_id} lists {len(listed)} typical mistakes in MISTAKES; "
        f"at least {MIN_MISTAKES} expected"
    )
    assert all(isinstance(m, Mistake) for m in listed)


def test_mistakes_name_existing_exercises():
    unknown = sorted(set(MISTAKES) - set(CHECKERS))
    assert not unknown, f"MISTAKES lists exercises that have no checker: {unknown}"


@pytest.mark.parametrize(("exercise_id", "index"), CASES)
def test_checker_names_the_mistake(exercise_id, index, capsys):
    mistake = MISTAKES[exercise_id][1][index]
    verdict = CHECKERS[exercise_id](mistake.answer(), *mistake.args)
    capsys.readouterr()
    assert verdict.status == "wrong", (
        f"{exercise_id} ({mistake.label}): expected 'wrong', got {verdict.status}: {verdict.message}"
    )
    assert mistake.hint.lower() in verdict.message.lower(), (
        f"{exercise_id} ({mistake.label}): hint should mention {mistake.hint!r}, got {verdict.message!r}"
    )
