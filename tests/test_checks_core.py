"""The checker contract: helpers give specific hints, and no checker ever raises.

Property tests throw garbage (None, ..., text, dicts, ragged and nested lists, NaN, inf, huge
arrays, wrong shapes, functions that raise, objects whose ``__array__`` raises) at the helpers of
``tformer.checks.core`` and at every checker of every ``tformer.checks.chNN`` module, discovered
at collection time so each chapter's checkers are covered as soon as they land.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import math
import pkgutil
import re

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tformer.checks
from tformer.checks import core
from tformer.checks.core import (
    RESULTS,
    NotAttempted,
    Verdict,
    Wrong,
    call_reader,
    exercise,
    expect_number,
    expect_tensor,
    show,
    show_call,
    to_array,
)

# ---------------------------------------------------------------------------------------------
# Garbage


class ArrayRaises:
    """An object whose conversion to an array fails with an unusual exception."""

    def __array__(self, *args, **kwargs):
        raise RuntimeError("__array__ exploded")


class StrRaisesError(Exception):
    def __str__(self):
        raise RuntimeError("even the message fails")


def _raiser(error: BaseException):
    def reader_function(*args, **kwargs):
        raise error

    return reader_function


def _returner(value):
    return lambda *args, **kwargs: value


scalars = st.one_of(
    st.none(),
    st.just(...),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.complex_numbers(allow_nan=True),
    st.text(max_size=20),
    st.binary(max_size=10),
)
nested = st.recursive(
    scalars, lambda children: st.lists(children, max_size=4) | st.tuples(children, children), max_leaves=12
)
arrays = hnp.arrays(
    dtype=st.sampled_from([np.float64, np.float32, np.int64, np.bool_]),
    shape=hnp.array_shapes(min_dims=0, max_dims=4, max_side=5),
    elements=None,
)
tensors = arrays.map(lambda array: torch.from_numpy(np.ascontiguousarray(array)))
specials = st.sampled_from(
    [
        ArrayRaises(),
        np.zeros((1500, 1500)),  # huge
        torch.full((3, 3), float("nan")),
        torch.full((2, 3), float("inf")),
        torch.zeros(0, 3),
        torch.ones(3, 3, requires_grad=True),
        torch.ones(2, 2, dtype=torch.complex64),
        np.array(["a", "b"]),
        np.array([object(), None], dtype=object),
        [[1.0, 2.0], [3.0]],
        {"d_k": None, "Q": "shape"},
        {1, 2, 3},
        object(),
        type,
        print,
        iter([1, 2]),
        _raiser(ValueError("reader bug")),
        _raiser(NotImplementedError()),
        _raiser(ZeroDivisionError("division by zero")),
        _raiser(SystemExit(3)),
        _raiser(RecursionError("too deep")),
        _raiser(StrRaisesError()),
        _returner(None),
        _returner("text"),
        _returner(float("nan")),
        _returner((torch.ones(3), None)),
        _returner(ArrayRaises()),
        lambda: 1.0,  # wrong number of arguments
        (torch.ones(3), torch.ones(2)),
    ]
)
dicts = st.dictionaries(st.text(max_size=5), nested, max_size=3)
garbage = st.one_of(nested, arrays, tensors, specials, dicts)

GARBAGE_SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _only_verdict_exceptions(function, *args, **kwargs):
    """Run a helper: it may return or raise Wrong/NotAttempted with a message, nothing else."""
    try:
        function(*args, **kwargs)
    except (Wrong, NotAttempted) as verdict:
        assert str(verdict).strip(), "a hint must not be empty"
        assert len(str(verdict)) < 1000


# ---------------------------------------------------------------------------------------------
# The helpers never raise anything but a verdict


@GARBAGE_SETTINGS
@given(answer=garbage)
def test_expect_number_survives_garbage(answer):
    _only_verdict_exceptions(expect_number, answer, 1.5, name="the answer", rounding_tol=1e-2)


@GARBAGE_SETTINGS
@given(answer=garbage)
def test_expect_tensor_survives_garbage(answer):
    expected = torch.softmax(torch.arange(6.0).reshape(2, 3), dim=-1)
    _only_verdict_exceptions(
        expect_tensor, answer, expected, name="the weights", axes=("queries", "keys"),
        rows_sum_to_one=True, rounding_tol=1e-2,
    )


@GARBAGE_SETTINGS
@given(answer=garbage, shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))
def test_expect_tensor_survives_garbage_for_any_expected_shape(answer, shape):
    _only_verdict_exceptions(expect_tensor, answer, np.ones(shape), axes=("keys",))


@GARBAGE_SETTINGS
@given(answer=garbage)
def test_to_array_gives_array_or_verdict(answer):
    try:
        array = to_array(answer, "x")
    except (Wrong, NotAttempted):
        return
    assert isinstance(array, np.ndarray) and array.dtype == np.float64


@GARBAGE_SETTINGS
@given(function=garbage, argument=garbage)
def test_call_reader_survives_garbage(function, argument):
    _only_verdict_exceptions(call_reader, function, argument, name="your function")


@GARBAGE_SETTINGS
@given(answer=garbage)
def test_show_and_format_never_raise(answer):
    with contextlib.redirect_stdout(io.StringIO()) as out:
        show(answer)
        show_call(answer, 1.0)
    assert out.getvalue().strip()


@GARBAGE_SETTINGS
@given(answer=garbage, error=st.sampled_from([ValueError, TypeError, IndexError, KeyError,
                                              RuntimeError, SystemExit, StrRaisesError, AssertionError]))
def test_the_decorator_turns_any_exception_into_a_verdict(answer, error):
    @exercise("00.9", "a body that crashes")
    def crashing(value):
        raise error("the body crashed")

    with contextlib.redirect_stdout(io.StringIO()) as out:
        verdict = crashing(answer)
    assert isinstance(verdict, Verdict)
    assert verdict.status in ("error", "not attempted")
    assert RESULTS["00.9"]["status"] == verdict.status
    assert out.getvalue().strip().splitlines() == [str(verdict)]


def test_the_decorator_lets_keyboard_interrupt_through():
    @exercise("00.8")
    def interrupted(value):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        interrupted(1)


# ---------------------------------------------------------------------------------------------
# Every chapter's checkers


def discover_checkers() -> list:
    found = []
    for module_info in pkgutil.iter_modules(tformer.checks.__path__):
        if not re.fullmatch(r"ch\d\d", module_info.name):
            continue
        module = importlib.import_module(f"tformer.checks.{module_info.name}")
        for name in sorted(dir(module)):
            function = getattr(module, name)
            if callable(function) and isinstance(getattr(function, "exercise_id", None), str):
                found.append(pytest.param(function, id=f"{module_info.name}.{name}"))
    return found


CHECKERS = discover_checkers()


def test_some_checkers_were_discovered():
    assert CHECKERS, "no checker found in tformer.checks.chNN"
    ids = [param.values[0].exercise_id for param in CHECKERS]
    assert len(ids) == len(set(ids)), "two checkers share an exercise id"
    for param in CHECKERS:
        checker = param.values[0]
        module = checker.__module__.rsplit(".", 1)[-1]
        assert re.fullmatch(r"\d\d\.\d+", checker.exercise_id), checker.exercise_id
        assert checker.exercise_id.startswith(module[2:] + "."), (
            f"{module}.{checker.__name__} has id {checker.exercise_id}"
        )


def extra_arguments(checker) -> int:
    """How many required arguments a checker takes after the answer (e.g. the reader's merges)."""
    body = inspect.unwrap(checker)
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    required = [
        parameter
        for parameter in inspect.signature(body).parameters.values()
        if parameter.kind in kinds and parameter.default is inspect.Parameter.empty
    ]
    return max(0, len(required) - 1)


# Exercises whose right answer is a constant the garbage strategy can produce, with the reason.
GUESSABLE = {
    "03.3": "the answer is the largest |o_i - v|, which is 0 up to rounding: garbage 0 is right",
}


def test_guessable_exercises_really_accept_their_constant():
    """The allow-list above is not a blanket pass: each entry accepts its constant and rejects
    a clearly wrong number."""
    from tformer.checks import ch03

    assert ch03.ex3(0).status == "passed"
    assert ch03.ex3(0.5).status == "wrong"


@pytest.mark.parametrize("checker", CHECKERS)
@settings(GARBAGE_SETTINGS, max_examples=30)
@given(answer=garbage, data=st.data())
def test_checkers_never_raise_on_garbage(checker, answer, data):
    """A checker returns a Verdict for anything: wrong (with a hint) or not attempted — never an
    "error", which would mean the checker itself crashed instead of explaining the problem, and
    never "passed".
    Every further argument a checker takes comes from the reader too, so it gets garbage as well."""
    extra = data.draw(st.tuples(*[garbage] * extra_arguments(checker)), label="further arguments")
    with contextlib.redirect_stdout(io.StringIO()) as out:
        verdict = checker(answer, *extra)
    assert isinstance(verdict, Verdict)
    assert verdict.exercise == checker.exercise_id
    # garbage is never a right answer (a checker that passes it may pass anything), except where
    # the right answer is a constant garbage can hit
    if verdict.status == "passed":
        assert checker.exercise_id in GUESSABLE, f"{verdict} for garbage {answer!r}"
    else:
        assert verdict.status in ("wrong", "not attempted"), str(verdict)
        assert verdict.message.strip()
    assert out.getvalue().strip().splitlines()[-1] == str(verdict)  # a reader's print may precede


@pytest.mark.parametrize("checker", CHECKERS)
@pytest.mark.parametrize("missing", [None, ...])
def test_checkers_call_a_stub_not_attempted(checker, missing, capsys):
    extra = [None] * extra_arguments(checker)
    assert checker(missing, *extra).status == "not attempted"
    assert checker().status == "not attempted"


@pytest.mark.parametrize("checker", CHECKERS)
def test_checkers_call_a_stub_function_not_attempted_or_wrong(checker, capsys):
    def stub(*args, **kwargs):
        raise NotImplementedError

    extra = [None] * extra_arguments(checker)
    assert checker(stub, *extra).status in ("not attempted", "wrong")


# ---------------------------------------------------------------------------------------------
# The hints the book promises


def _hint(function, *args, **kwargs) -> str:
    with pytest.raises(Wrong) as caught:
        function(*args, **kwargs)
    return str(caught.value)


WEIGHTS = torch.tensor([[0.2, 0.8, 0.0], [0.5, 0.25, 0.25]])


def test_shape_hint_names_the_axis():
    hint = _hint(expect_tensor, torch.ones(2, 4), WEIGHTS, name="w", axes=("queries", "keys"))
    assert "keys has size 4, expected 3" in hint
    assert "queries" not in hint.split(":", 1)[1]


def test_transposed_answer_is_recognised():
    hint = _hint(expect_tensor, WEIGHTS.T, WEIGHTS, axes=("queries", "keys"))
    assert "transpose" in hint and "rows" in hint


def test_batched_transpose_is_recognised():
    batched = WEIGHTS.expand(4, 2, 3)
    hint = _hint(expect_tensor, batched.transpose(-1, -2), batched, axes=("queries", "keys"))
    assert "transpose" in hint


def test_wrong_number_of_axes_is_named():
    hint = _hint(expect_tensor, torch.ones(6), WEIGHTS, axes=("queries", "keys"))
    assert "1 axes" in hint and "queries, keys" in hint


def test_softmax_over_the_wrong_axis_points_at_the_key_axis():
    scores = torch.tensor([[1.0, 2.0, 0.5], [0.0, 1.0, 3.0], [2.0, 2.0, 2.0]])
    hint = _hint(expect_tensor, torch.softmax(scores, 0), torch.softmax(scores, -1),
                 rows_sum_to_one=True, name="the weights")
    assert "columns" in hint and "dim=-1" in hint


def test_rows_not_summing_to_one_are_reported():
    hint = _hint(expect_tensor, WEIGHTS * 2, WEIGHTS, rows_sum_to_one=True)
    assert "sum to 1" in hint


def test_nan_points_at_a_fully_masked_row():
    answer = WEIGHTS.clone()
    answer[1] = float("nan")
    assert "fully masked row" in _hint(expect_tensor, answer, WEIGHTS)
    assert "NaN" in _hint(expect_number, float("nan"), 1.0)


def test_infinity_gets_its_own_hint():
    answer = WEIGHTS.clone()
    answer[0, 0] = float("inf")
    assert "inf" in _hint(expect_tensor, answer, WEIGHTS)
    assert "infinite" in _hint(expect_number, float("-inf"), 1.0)


def test_an_answer_off_by_rounding_says_so():
    assert "rounding" in _hint(expect_number, 0.53, 0.5323, rounding_tol=5e-3)
    assert "rounding" in _hint(expect_tensor, WEIGHTS + 0.004, WEIGHTS, rounding_tol=5e-3)
    assert "rounding" not in _hint(expect_number, 0.6, 0.5323, rounding_tol=5e-3)


def test_largest_difference_is_located():
    answer = WEIGHTS.clone()
    answer[1, 2] = 0.9
    hint = _hint(expect_tensor, answer, WEIGHTS)
    assert "(1, 2)" in hint and "0.9" in hint and "0.25" in hint


def test_right_answers_pass_in_every_container():
    expect_tensor(WEIGHTS.tolist(), WEIGHTS)
    expect_tensor(WEIGHTS.numpy(), WEIGHTS)
    expect_tensor(WEIGHTS.double().requires_grad_(), WEIGHTS)
    expect_number(np.float32(0.25), 0.25)
    expect_number(torch.tensor(0.25), 0.25)
    expect_number(np.array([0.25]), 0.25)


def test_numbers_must_be_single_numbers():
    assert "single number" in _hint(expect_number, [0.25], 0.25)
    assert "single number" in _hint(expect_number, True, 1.0)
    assert "text" in _hint(expect_number, "0.25", 0.25)
    assert "shape (2,)" in _hint(expect_number, np.array([0.25, 1.0]), 0.25)


def test_placeholders_are_not_attempted():
    for helper, args in ((expect_number, (1.0,)), (expect_tensor, (WEIGHTS,)), (to_array, ())):
        with pytest.raises(NotAttempted):
            helper(None, *args)


def test_call_reader_turns_failures_into_verdicts():
    with pytest.raises(NotAttempted, match="NotImplementedError"):
        call_reader(_raiser(NotImplementedError()), 1, name="attention")
    assert "attention raised ValueError: reader bug" in _hint(
        call_reader, _raiser(ValueError("reader bug")), name="attention"
    )
    assert "SystemExit" in _hint(call_reader, _raiser(SystemExit(1)))
    assert "should be a function" in _hint(call_reader, 3.0)
    assert call_reader(lambda x: 2 * x, 4) == 8


def test_the_decorator_records_and_prints(capsys):
    @exercise("00.7", "double")
    def check(answer):
        expect_number(call_reader(answer, 2.0, name="double"), 4.0)

    assert check(lambda x: 2 * x).passed
    assert RESULTS["00.7"] == {"exercise": "00.7", "status": "passed", "message": ""}
    verdict = check(lambda x: x + 3)
    assert verdict.status == "wrong" and "= 5 is not right" in verdict.message
    assert check(None).status == "not attempted"
    assert check.exercise_id == "00.7" and check.title == "double"
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "✓ Exercise 00.7: passed"
    assert lines[1].startswith("✗ Exercise 00.7: wrong — ")
    assert lines[2].startswith("… Exercise 00.7: not attempted")


def test_long_hints_are_cut():
    @exercise("00.6")
    def check(answer):
        raise Wrong("x" * 5000)

    assert len(check(1).message) <= core.MAX_MESSAGE


# ---------------------------------------------------------------------------------------------
# Answer-cell printing: deterministic and stub-safe


def test_show_rounds_deterministically(capsys):
    show(math.log(3))
    show(-1e-9)
    show(torch.tensor([[1 / 3, -1e-9], [2.0, 0.5]]))
    show(None)
    show_call(_raiser(NotImplementedError()), 1)
    show_call(_raiser(ValueError("bad")), 1)
    show_call(lambda x: x / 4, 1.0)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "1.0986"
    assert lines[1] == "0.0"  # no "-0.0"
    assert lines[2:4] == ["[[0.3333, 0.0000],", " [2.0000, 0.5000]]"]
    assert lines[4] == lines[5] == "(not attempted yet)"
    assert "raised ValueError: bad" in lines[6]
    assert lines[7] == "0.25"
