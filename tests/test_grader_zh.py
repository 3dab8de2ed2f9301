"""The grader in the reader's language (issue 17): a Chinese reader's copy is graded in Chinese
(every exercise 未作答), a Chinese notebook with solved exercises gets full marks in Chinese, the
hints come back from the kernel in Chinese, and ``--json`` stays machine-readable.

The Chinese copies are ``zh/exercises/NN_….ipynb`` when they are committed; until then they are
built here from ``exercises/`` and ``locale/zh`` with ``tools/i18n.translate_notebook``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat
import pytest

from tformer.grade import grade, main

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = "02_soft_dictionary.ipynb"  # a fast chapter: seven exercises, a few seconds
CORPUS = ROOT / "tests" / "grader_corpus"
CJK = re.compile(r"[\u3400-\u9fff]")


def _chinese(kind: str, directory: Path) -> Path:
    """The Chinese copy of ``exercises/`` (the reader's) or ``solutions/`` (solved) of CHAPTER."""
    committed = ROOT / "zh" / kind / CHAPTER
    if committed.exists():
        return committed
    sys.path.insert(0, str(ROOT))
    try:
        from tools import i18n
    finally:
        sys.path.remove(str(ROOT))
    source = ROOT / "solutions" / CHAPTER
    notebook = json.loads((ROOT / kind / CHAPTER).read_text(encoding="utf-8"))
    translated = i18n.translate_notebook(
        notebook, i18n.lookup_for(source, "zh"), f"solutions/{CHAPTER}", "zh"
    )
    path = directory / kind / CHAPTER
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(translated, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    directory = tmp_path_factory.mktemp("zh")
    return {
        "reader": grade(_chinese("exercises", directory), timeout=300),
        "solved": grade(_chinese("solutions", directory), timeout=300),
    }


def test_a_chinese_reader_copy_is_graded_in_chinese(reports):
    report = reports["reader"]
    text = report.to_text()
    assert report.graded and report.language == "zh", text
    assert report.total == 7 and report.passed == 0, text
    assert {row.status for row in report.rows} == {"not attempted"}, text
    assert all(CJK.search(row.title) for row in report.rows), text  # the Chinese headings
    assert all(CJK.search(row.message) for row in report.rows), text  # the kernel spoke Chinese
    assert text.splitlines()[0].startswith("正在评分 "), text
    assert "（第 02 章，7 道练习）" in text.splitlines()[0], text
    assert text.count("… 未作答 —— ") == 7, text
    assert text.splitlines()[-1] == "得分：0/7 通过（7 道未作答）", text
    assert "Exercise" not in text and "not attempted" not in text, text


def test_a_solved_chinese_notebook_gets_full_marks_in_chinese(reports):
    report = reports["solved"]
    text = report.to_text()
    assert report.graded and report.language == "zh", text
    assert report.passed == report.total == 7, text
    assert text.count("✓ 通过") == 7, text
    assert text.splitlines()[-1] == "得分：7/7 通过", text


def test_lang_option_and_json(capsys):
    notebook = CORPUS / "99_wrong_answers.ipynb"
    assert main([str(notebook), "--lang", "zh", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["language"] == "zh"
    assert set(data) >= {"notebook", "chapter", "graded", "score", "exercises", "language"}
    assert [row["status"] for row in data["exercises"]] == ["wrong"] * 3
    assert data["score"]["counts"] == {"wrong": 3}
    messages = [row["message"] for row in data["exercises"]]
    assert messages[0] == "log 3 = 1.1 只有舍入误差；请多保留几位数字", messages
    assert "必须沿键轴（dim=-1）做" in messages[1], messages
    assert messages[2] == "double(0.0) = 2 不对", messages
    assert main([str(notebook), "--lang", "en"]) == 0
    text = capsys.readouterr().out
    assert "✗ wrong — log 3 = 1.1 is off only by rounding; keep more digits" in text
    assert text.rstrip().endswith("Score: 0/3 passed (3 wrong)")


def test_the_grader_speaks_chinese_about_broken_notebooks(tmp_path):
    nb = nbformat.read(CORPUS / "99_deleted_cells.ipynb", as_version=4)
    nb.metadata["language"] = "zh"
    path = tmp_path / "99_deleted_cells.ipynb"
    nbformat.write(nb, path)
    rows = {row.exercise: row for row in grade(path, timeout=60).rows}
    assert rows["99.1"].status == "passed"
    assert rows["99.2"].status == "error"
    assert rows["99.2"].message == "这道练习的检查单元格不见了；请添加一个内容为 `ex2(answer)` 的单元格"
    assert rows["99.3"].status == "not attempted"
    assert rows["99.3"].message.startswith("笔记本里没有这道练习")
    missing = grade(tmp_path / "nothing_here.ipynb", lang="zh")
    assert missing.problem == f"没有这个文件：{tmp_path / 'nothing_here.ipynb'}"


def test_a_cell_error_is_reported_in_chinese():
    report = grade(CORPUS / "99_error_after_partial_answer.ipynb", timeout=60, lang="zh")
    rows = {row.exercise: row for row in report.rows}
    error = "抛出了 NameError: name 'totals' is not defined"
    assert rows["99.2"].status == "wrong"
    assert rows["99.2"].errors[0].startswith("第 9 个单元格（`answer = torch.exp(SCORES)")
    assert error in rows["99.2"].errors[0], rows["99.2"]
    assert "；检查评的是这些单元格在出错之前已经设定的内容：权重的每一行之和应为 1" in rows["99.2"].message
    assert report.notes == [f"练习 99.2 中，{rows['99.2'].errors[0]}"], report.notes
    assert "注：练习 99.2 中，第 9 个单元格" in report.to_text()
