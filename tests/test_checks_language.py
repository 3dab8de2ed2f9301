"""Checker verdicts in the reader's language (issue 17): the language is detected, every English
message of the checkers has a current Chinese template, and every typical mistake gets a Chinese
hint that keeps the English hint's values — while English output stays exactly as it was."""

from __future__ import annotations

import json
import re
import sys
import types

import pytest
import torch
from test_mistakes import CASES, CHECKERS, MISTAKES

import tformer.checks
from tformer.checks import catalogue, language
from tformer.checks.core import Verdict, exercise, expect_number, expect_tensor, show
from tformer.checks.language import split_template, translate

CJK = re.compile(r"[\u3400-\u9fff]")
# three English words in a row: an untranslated phrase (identifiers such as d_k or n_vocab,
# numbers and symbols between words break the run)
ENGLISH = re.compile(r"(?<![\w'])[A-Za-z]{2,}(?: [A-Za-z]{2,}){2,}(?![\w'])")
QUOTED = re.compile(  # reprs and code: values, not prose (an apostrophe as in "GPT-2's" is not)
    r"(?<![A-Za-z0-9])'[^']*'(?![A-Za-z])|\"[^\"]*\"|`[^`]*`"
)
LABEL = re.compile(r"[A-Za-z]{3,}")  # a quoted label such as 'causal (T, T)' is translated
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


@pytest.fixture
def lang(monkeypatch):
    """Speak a language for one test; the kernel-wide choice is restored afterwards."""
    monkeypatch.delenv("TFORMER_LANG", raising=False)

    def choose(name: str) -> None:
        language.set_language(name)

    previous = language._chosen
    yield choose
    language._chosen = previous


# ---------------------------------------------------------------------------------------------
# The catalogues: complete, not stale, well-formed


@pytest.mark.parametrize("module", catalogue.MODULES)
def test_every_message_has_a_current_chinese_template(module):
    missing, stale = catalogue.problems(module)
    assert not missing and not stale, (
        f"tformer/checks/zh/{module}.py: {len(missing)} English message(s) without a Chinese "
        f"translation, {len(stale)} entr(y/ies) whose English is no longer in the source (changed "
        f"or removed: translate the new text, delete the old entry); "
        f"`python -m tformer.checks.catalogue --stub {module}` prints the entries to fill in\n"
        + "".join(f"  untranslated: {t!r}\n" for t in missing)
        + "".join(f"  stale: {t!r}\n" for t in stale)
    )


@pytest.mark.parametrize("module", catalogue.MODULES)
def test_chinese_templates_fill_exactly_the_english_holes(module):
    for english, chinese in catalogue.catalogue(module).items():
        holes = sum(hole for hole, _ in split_template(english))
        used = sorted({int(n) for n in re.findall(r"\{(\d+)\}", chinese)})
        assert used == list(range(holes)), (module, english, chinese)
        assert CJK.search(chinese) or not CJK.search(english), (module, english, chinese)


def test_an_edited_english_message_is_reported_untranslated_and_its_entry_stale():
    source = (catalogue.HERE / "ch02.py").read_text(encoding="utf-8")
    old = "a softmax never gives a negative weight; every weight must be > 0"
    assert old in source
    edited = catalogue.templates_in_source(source.replace(old, "weights are never negative"))
    translated = catalogue.catalogue("ch02")
    assert "weights are never negative" in edited and "weights are never negative" not in translated
    assert old in translated and old not in edited


def test_templates_keep_holes_in_source_form():
    found = catalogue.templates_in_source(
        'def f(x, n):\n'
        '    """Docstring, not a message."""\n'
        '    raise Wrong(f"the value {x:.3f} is off by {n + 1} places" + "; try again")\n'
    )
    assert found == ["the value {x:.3f} is off by {n + 1} places; try again"]


# ---------------------------------------------------------------------------------------------
# Every typical mistake, in Chinese


def _run(eid: str, index: int, name: str, capsys) -> Verdict:
    language.set_language(name)
    mistake = MISTAKES[eid][1][index]
    verdict = CHECKERS[eid](mistake.answer(), *mistake.args)
    capsys.readouterr()
    return verdict


@pytest.mark.parametrize(("exercise_id", "index"), CASES)
def test_every_mistake_gets_a_chinese_hint(exercise_id, index, capsys, lang):
    english = _run(exercise_id, index, "en", capsys)
    chinese = _run(exercise_id, index, "zh", capsys)
    label = f"{exercise_id} ({MISTAKES[exercise_id][1][index].label})"
    assert chinese.status == english.status == "wrong", label
    assert CJK.search(chinese.message), f"{label}: no Chinese in {chinese.message!r}"
    prose = QUOTED.sub("", chinese.message)
    assert not ENGLISH.search(prose), (
        f"{label}: English left untranslated: {ENGLISH.search(prose)[0]!r} in {chinese.message!r}"
    )
    # the values of the English hint (numbers, shapes, quoted answers) are all still there
    values = [v for v in QUOTED.findall(english.message) if not LABEL.search(v)]
    for value in values + NUMBER.findall(english.message):
        assert value in chinese.message, f"{label}: {value!r} lost: {english.message!r} → {chinese.message!r}"


def test_verdict_lines_in_both_languages(lang, capsys):
    @exercise("98.1", "A test exercise")
    def ex1(answer) -> None:
        expect_number(answer, 2.0, name="the unscaled std", rounding_tol=0.1)

    lang("en")
    assert str(ex1(2.0)) == "✓ Exercise 98.1: passed"
    assert str(ex1(2.05)) == (
        "✗ Exercise 98.1: wrong — the unscaled std = 2.05 is off only by rounding; keep more digits"
    )
    assert str(ex1(None)) == (
        "… Exercise 98.1: not attempted — replace the placeholder with your answer and run again"
    )
    lang("zh")
    assert str(ex1(2.0)) == "✓ 练习 98.1：通过"
    assert str(ex1(2.05)) == "✗ 练习 98.1：有误 —— 未缩放的标准差 = 2.05 只有舍入误差；请多保留几位数字"
    assert str(ex1(None)) == "… 练习 98.1：未作答 —— 把占位符换成你的答案，然后重新运行"
    assert tformer.checks.core.RESULTS["98.1"]["status"] == "not attempted"  # machine-stable
    printed = capsys.readouterr().out
    assert "✓ Exercise 98.1: passed\n" in printed and "✓ 练习 98.1：通过\n" in printed


def test_a_checker_that_fails_says_so_in_chinese(lang, capsys):
    @exercise("98.2")
    def ex2(answer) -> None:
        raise RuntimeError("boom")

    lang("zh")
    assert ex2(1).message == "检查无法运行：RuntimeError: boom"
    assert ex2(1).status == "error"
    show(None)
    assert capsys.readouterr().out.endswith("（尚未作答）\n")


def test_nested_values_translate_and_axis_names_too(lang):
    lang("zh")
    try:
        expect_tensor([[1.0, 2.0, 3.0]], [[1.0, 2.0]], name="the weights", axes=("queries", "keys"))
    except tformer.checks.Wrong as wrong:
        message = translate(str(wrong))
    assert message == "权重的形状是 (1, 3)：键的大小是 3，应为 2"
    def stub(*args):
        raise ValueError("not today")

    assert tformer.checks.ch02.ex4(stub).message == "soft_lookup 抛出了 ValueError: not today"
    assert translate("not a message the checkers know") == "not a message the checkers know"
    assert translate("", "zh") == ""


def test_axis_name_lists_in_chinese():
    from tformer.checks.core import Wrong, expect_tensor

    with pytest.raises(Wrong) as wrong:
        expect_tensor(torch.zeros(3), torch.zeros(2, 4, 3), name="the weights",
                      axes=("batch", "queries", "keys"))
    assert "（批量、查询、键）" in language.translate(str(wrong.value), "zh")
    with pytest.raises(Wrong) as wrong:
        expect_tensor(torch.zeros(3, 4), torch.zeros(4, 3), name="the weights",
                      axes=("queries", "keys"))
    assert "（查询 × 键）" in language.translate(str(wrong.value), "zh")


def test_english_is_untouched(lang):
    lang("en")
    for module in catalogue.MODULES:
        for english in catalogue.catalogue(module):
            assert translate(english) is english


# ---------------------------------------------------------------------------------------------
# Detection


def _notebook(tmp_path, lang_value: str | None, name: str = "nb.ipynb"):
    metadata = {"kernelspec": {"language": "python", "name": "python3"}}
    if lang_value is not None:
        metadata["language"] = lang_value
    path = tmp_path / name
    path.write_text(json.dumps({"cells": [], "metadata": metadata, "nbformat": 4,
                                "nbformat_minor": 5}), encoding="utf-8")
    return path


@pytest.fixture
def clean(monkeypatch):
    for name in ("TFORMER_LANG", "JPY_SESSION_NAME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    previous = language._chosen
    language.reset()
    yield monkeypatch
    language._chosen = previous


def test_default_is_english(clean, tmp_path):
    clean.chdir(tmp_path)
    assert language.detect_language() == "en"


@pytest.mark.parametrize(("value", "expected"), [("zh", "zh"), ("zh-CN", "zh"), ("en", "en"),
                                                   ("fr", "en"), ("", "en")])
def test_environment_variable(clean, value, expected):
    clean.setenv("TFORMER_LANG", value)
    assert language.detect_language() == expected


def test_jupyter_session_name(clean, tmp_path):
    path = _notebook(tmp_path, "zh")
    clean.setenv("JPY_SESSION_NAME", str(path))
    assert language.detect_language() == "zh"
    # relative to the server's root, while the kernel runs in the notebook's folder
    clean.chdir(tmp_path)
    clean.setenv("JPY_SESSION_NAME", "some/folder/nb.ipynb")
    assert language.detect_language() == "zh"
    clean.setenv("JPY_SESSION_NAME", str(_notebook(tmp_path, None, "en.ipynb")))
    assert language.detect_language() == "en"
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{ not json", encoding="utf-8")
    clean.setenv("JPY_SESSION_NAME", str(broken))
    assert language.detect_language() == "en"
    clean.setenv("TFORMER_LANG", "en")  # the explicit variable wins
    clean.setenv("JPY_SESSION_NAME", str(path))
    assert language.detect_language() == "en"


def test_vscode_notebook_file(clean, tmp_path):
    shell = types.SimpleNamespace(user_ns={"__vsc_ipynb_file__": str(_notebook(tmp_path, "zh"))})
    clean.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    assert language.detect_language() == "zh"


def _fake_colab(clean, reply):
    calls = []

    def blocking_request(kind, request="", timeout_sec=None):
        calls.append((kind, timeout_sec))
        if isinstance(reply, BaseException):
            raise reply
        return reply

    message = types.ModuleType("google.colab._message")
    message.blocking_request = blocking_request  # type: ignore[attr-defined]
    colab = types.ModuleType("google.colab")
    colab._message = message  # type: ignore[attr-defined]
    clean.setitem(sys.modules, "google.colab", colab)
    clean.setitem(sys.modules, "google.colab._message", message)
    return calls


def test_colab_asks_the_front_end_with_a_timeout(clean, capsys):
    calls = _fake_colab(clean, {"ipynb": {"metadata": {"language": "zh"}, "cells": []}})
    assert language.detect_language() == "zh"
    assert calls == [("get_ipynb", language.COLAB_TIMEOUT)]
    _fake_colab(clean, TimeoutError("no answer"))
    assert language.detect_language() == "en"
    assert capsys.readouterr() == ("", "")


def test_a_notebook_that_lost_its_metadata_is_recognised_by_its_text(clean):
    # Colab rewrites metadata when it saves a copy; the Chinese prose still says what it is.
    def notebook(*texts):
        return {"metadata": {}, "cells": [
            {"cell_type": "markdown", "source": [text]} for text in texts
        ] + [{"cell_type": "code", "source": "x = 'some English code and comments'"}]}

    chinese = notebook("## 练习 02.1 — 第一个查询的权重", "计算权重 $A$，形状为 `(3, 3)`。")
    english = notebook("## Exercise 02.1 — Weights of the first query", "Compute $A$.")
    mixed = notebook("The glossary lists 中文 terms next to English ones, like 注意力 for attention.")
    assert language.notebook_language(chinese) == "zh"
    assert language.notebook_language(english) is None
    assert language.notebook_language(mixed) is None  # an English text quoting Chinese terms
    assert language.notebook_language({**chinese, "metadata": {"language": "en"}}) == "en"
    _fake_colab(clean, {"ipynb": chinese})
    assert language.detect_language() == "zh"


def test_detected_once_and_overridden(clean, tmp_path):
    clean.setenv("TFORMER_LANG", "zh")
    assert language.language() == "zh"
    clean.setenv("TFORMER_LANG", "en")
    assert language.language() == "zh"  # once per kernel
    tformer.checks.set_language("en")
    assert language.language() == "en"
    with pytest.raises(ValueError, match="unknown language"):
        tformer.checks.set_language("klingon")


def test_printed_output_of_an_english_execution_in_chinese():
    printed = (
        "✓ Exercise 02.1: passed\n"
        "✗ Exercise 02.7: wrong — the weights sum to 0.643; attention weights always sum to 1\n"
        "(not attempted yet)\n"
        "(soft_lookup raised ValueError: no)\n"
        "(1, 2)\n"
        "Total: 1/2 passed\n"
    )
    assert language.translate_printed(printed, "en") == printed
    assert language.translate_printed(printed, "zh") == (
        "✓ 练习 02.1：通过\n"
        "✗ 练习 02.7：有误 —— 这些权重之和为 0.643；注意力权重之和总是 1\n"
        "（尚未作答）\n"
        "（soft_lookup 抛出了 ValueError: no）\n"
        "(1, 2)\n"
        "合计：1/2 通过\n"
    )
