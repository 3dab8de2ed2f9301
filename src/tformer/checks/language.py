"""The reader's language for checker verdicts: detected once per kernel, English by default.

The Chinese notebooks run exactly the code cells of the English ones, so no code cell says which
language to speak. :func:`language` decides on first use and remembers it:

1. :func:`set_language` (``tformer.checks.set_language("zh")``), if it was called;
2. the environment variable ``TFORMER_LANG`` (``zh`` / ``en``; the grader and the tests set it);
3. the notebook's own metadata ``language``, read from the notebook the kernel belongs to:
   ``JPY_SESSION_NAME`` (its path; Jupyter Server ≥ 2: JupyterLab, Notebook 7, Binder),
   ``__vsc_ipynb_file__`` in the user namespace (VS Code), or the open notebook asked from the
   Colab front end (``google.colab._message.blocking_request("get_ipynb")``, with a timeout);
4. otherwise English.

Detection never raises, never prints and never waits longer than :data:`COLAB_TIMEOUT` seconds.

Messages are translated by template (see :mod:`tformer.checks.catalogue`): each Chinese catalogue
``tformer.checks.zh.<module>`` maps an English template — the message as the source writes it,
``"{name} = {value:g} is not right"`` — to a Chinese one with numbered holes,
``"{0} = {1} 不对"``. :func:`translate` matches a finished English message against the
templates (most literal text first), translates each captured value in turn (a value may itself
be a phrase such as ``"the unscaled std"``, or a whole nested hint) and fills the Chinese holes.
An English message without a template is returned unchanged (a test makes sure there is none).
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LANGUAGES = ("en", "zh")
COLAB_TIMEOUT = 5.0
"""Seconds to wait for the Colab front end to hand over the notebook."""
MAX_NOTEBOOK_BYTES = 64 * 2**20

STATUS: dict[str, dict[str, str]] = {
    "zh": {"passed": "通过", "wrong": "有误", "not attempted": "未作答", "error": "出错",
           "timed out": "超时"},
}
"""The verdict statuses in each language (the machine-readable status stays English)."""

_chosen: str | None = None


def normalise(value: Any) -> str | None:
    """``"zh"`` for ``zh``, ``zh-CN``, ``zh_Hans`` …, ``"en"`` for ``en…``, else ``None``."""
    if not isinstance(value, str):
        return None
    head = value.strip().lower().replace("_", "-").split("-")[0]
    return head if head in LANGUAGES else None


def set_language(language: str) -> None:
    """Speak ``language`` (``"zh"`` or ``"en"``) from now on in this kernel, whatever was detected.

    ``from tformer import checks; checks.set_language("zh")``.
    """
    chosen = normalise(language)
    if chosen is None:
        raise ValueError(f"unknown language {language!r}; choose one of {', '.join(LANGUAGES)}")
    global _chosen
    _chosen = chosen


def language() -> str:
    """The language of this kernel's verdicts, detected on first use (see the module docstring)."""
    global _chosen
    if _chosen is None:
        try:
            _chosen = detect_language()
        except Exception:  # noqa: BLE001 - detection must never break a checker
            _chosen = "en"
    return _chosen


def reset() -> None:
    """Forget the chosen language (the next :func:`language` call detects it again)."""
    global _chosen
    _chosen = None


def detect_language() -> str:
    """The reader's language from the environment or the notebook's metadata; ``"en"`` if unknown."""
    explicit = normalise(os.environ.get("TFORMER_LANG"))
    if explicit:
        return explicit
    for find in (_from_session_name, _from_vscode, _from_colab):
        try:
            found = find()
        except Exception:  # noqa: BLE001
            found = None
        if found:
            return found
    return "en"


def notebook_language(nb: Any) -> str | None:
    """The ``language`` entry of a notebook's metadata (a dict or notebook node), normalised.

    A notebook whose metadata lost the entry (a platform may rewrite metadata when it saves a
    copy) is recognised by its text: markdown cells that are mostly Chinese make it ``"zh"``.
    """
    metadata = nb.get("metadata") if isinstance(nb, dict) else None
    found = normalise(metadata.get("language")) if isinstance(metadata, dict) else None
    return found or _language_of_text(nb)


def _language_of_text(nb: Any) -> str | None:
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        return None
    text = "".join(
        "".join(cell["source"]) if isinstance(cell.get("source"), list) else str(cell["source"])
        for cell in cells
        if isinstance(cell, dict) and cell.get("cell_type") == "markdown" and "source" in cell
    )
    letters = len(re.findall(r"[A-Za-z]", text))
    chinese = len(re.findall(r"[\u3400-\u9fff]", text))
    # a Chinese character carries about as much as a short English word
    return "zh" if chinese and chinese * 3 > letters else None


def _from_file(name: str | os.PathLike) -> str | None:
    path = Path(name)
    # JPY_SESSION_NAME is relative to the server's root; the kernel runs in the notebook's folder
    for candidate in (path, Path.cwd() / path.name):
        try:
            if candidate.suffix == ".ipynb" and candidate.is_file() and \
                    candidate.stat().st_size <= MAX_NOTEBOOK_BYTES:
                return notebook_language(json.loads(candidate.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    return None


def _from_session_name() -> str | None:
    name = os.environ.get("JPY_SESSION_NAME")
    return _from_file(name) if name else None


def _from_vscode() -> str | None:
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None  # type: ignore[attr-defined]
    name = getattr(shell, "user_ns", {}).get("__vsc_ipynb_file__") if shell is not None else None
    return _from_file(name) if isinstance(name, str) else None


def _from_colab() -> str | None:
    if "google.colab" not in sys.modules:  # only inside a Colab kernel; never import it here
        return None
    from google.colab import _message  # type: ignore[import-not-found]

    reply = _message.blocking_request("get_ipynb", request="", timeout_sec=COLAB_TIMEOUT)
    return notebook_language(reply.get("ipynb")) if isinstance(reply, dict) else None


# ---------------------------------------------------------------------------------------------
# Translation by template


HOLE = re.compile(r"\{(\d+)\}")
# a space between two Chinese characters (a Chinese value in a hole "{0} 是…") is dropped
SETTING = re.compile(r"(\([^()]*\)): (.+)", re.DOTALL)
_CJK = r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]"
CJK_GAP = re.compile(rf"(?<={_CJK}) (?={_CJK})")


def split_template(template: str) -> list[tuple[bool, str]]:
    """``[(is_hole, text)]`` of a template: ``{{``/``}}`` are literal braces, ``{…}`` a hole
    (nested braces, as in ``{value:.{digits}f}``, stay inside the hole)."""
    pieces: list[tuple[bool, str]] = []
    literal, i = "", 0
    while i < len(template):
        char = template[i]
        if char in "{}" and template[i : i + 2] in ("{{", "}}"):
            literal += char
            i += 2
            continue
        if char == "{":
            depth, j = 1, i + 1
            while j < len(template) and depth:
                depth += {"{": 1, "}": -1}.get(template[j], 0)
                j += 1
            if literal:
                pieces.append((False, literal))
                literal = ""
            pieces.append((True, template[i + 1 : j - 1]))
            i = j
            continue
        literal += char
        i += 1
    if literal:
        pieces.append((False, literal))
    return pieces


@dataclass(frozen=True)
class _Entry:
    pattern: re.Pattern[str]
    anchor: str  # the longest literal piece: a cheap test before the regex
    target: str
    weight: int


def _compile(english: str, target: str) -> _Entry | None:
    pieces = split_template(english)
    literals = [text for hole, text in pieces if not hole]
    if not literals:
        return None
    parts = []
    for index, (hole, text) in enumerate(pieces):
        if not hole:
            parts.append(re.escape(text))
        elif index >= 2 and pieces[index - 1] == (False, " ") and pieces[index - 2][0]:
            parts.append(r"(\([^()]*\)|\S+)")  # "{name} {head}": the second is a short value
        else:
            parts.append("(.*?)")
    regex = "".join(parts)
    return _Entry(re.compile(regex, re.DOTALL), max(literals, key=len), target,
                  sum(len(text) for text in literals))


_entries: dict[str, list[_Entry]] = {}
_words: dict[str, dict[str, str]] = {}
_setting_words: dict[str, dict[str, str]] = {}


def _load(lang: str) -> list[_Entry]:
    if lang not in _entries:
        entries: list[_Entry] = []
        words: dict[str, str] = {}
        setting_words: dict[str, str] = {}
        try:
            package = importlib.import_module(f"tformer.checks.{lang}")
        except ImportError:
            package = None
        names = [info.name for info in pkgutil.iter_modules(getattr(package, "__path__", []))]
        for module in names:
            try:
                catalogue = importlib.import_module(f"tformer.checks.{lang}.{module}")
            except ImportError:
                continue
            words.update(getattr(catalogue, "WORDS", {}))
            setting_words.update(getattr(catalogue, "SETTING_WORDS", {}))
            for english, target in getattr(catalogue, "MESSAGES", {}).items():
                entry = _compile(english, target) if target else None
                if entry is not None:
                    entries.append(entry)
        entries.sort(key=lambda entry: -entry.weight)
        _entries[lang], _words[lang], _setting_words[lang] = entries, words, setting_words
    return _entries[lang]


def translate(message: str, lang: str | None = None) -> str:
    """``message`` in ``lang`` (default: :func:`language`); unchanged in English, or when no
    template matches. Never raises."""
    lang = lang or language()
    if lang == "en" or not message:
        return message
    try:
        return CJK_GAP.sub("", _translate(str(message), lang, 0))
    except Exception:  # noqa: BLE001 - a broken catalogue entry must not break a checker
        return message


def _translate(text: str, lang: str, depth: int) -> str:
    entries = _load(lang)
    words = _words[lang]
    if text in words:
        return words[text]
    if depth > 4:
        return text
    for entry in entries:
        if entry.anchor not in text:
            continue
        match = entry.pattern.fullmatch(text)
        if match is None:
            continue
        values = [_translate(value, lang, depth + 1) for value in match.groups()]
        return HOLE.sub(lambda hole, values=values: values[int(hole[1])], entry.target)
    setting = SETTING.fullmatch(text)  # "(h = 2, d = 8): <hint>", built as f"{setting}: {hint}"
    if setting:
        return f"{_setting(setting[1], lang)}：{_translate(setting[2], lang, depth + 1)}"
    if text.startswith("(") and text.endswith(")") and "(" not in text[1:-1]:
        return _setting(text, lang)
    if "; " in text:  # a list of hints joined by "; "
        return "；".join(_translate(part, lang, depth + 1) for part in text.split("; "))
    for separator, joined in ((", ", "、"), (" × ", " × ")):  # axis names: "batch, queries, keys"
        parts = text.split(separator)
        if len(parts) > 1 and all(part in words for part in parts):
            return joined.join(words[part] for part in parts)
    return text


def _setting(text: str, lang: str) -> str:
    """A checker's test setting, ``"(h = 2, d = 8, T = 5, causal)"``, with its words translated."""
    words = _setting_words[lang]
    if not words:
        return text
    pattern = r"(?<![\w'])(" + "|".join(map(re.escape, words)) + r")(?![\w'])"
    return re.sub(pattern, lambda found: words[found[1]], text)


VERDICT_LINE = re.compile(
    r"^(?P<symbol>[✓✗…!]) Exercise (?P<id>\S+): (?P<status>passed|wrong|not attempted|error)"
    r"(?: — (?P<message>.*))?$"
)
PRINTED = ("(not attempted yet)", "No exercise has been checked in this session yet.")


def translate_printed(text: str, lang: str) -> str:
    """The printed output of a checker cell (verdict lines, ``(not attempted yet)``, the
    summary) in ``lang``; other lines unchanged. For pages that show the output of an English
    execution in another language. Never raises."""
    if lang == "en":
        return text
    try:
        lines = []
        for line in text.split("\n"):
            verdict = VERDICT_LINE.match(line)
            if verdict and lang == "zh":
                line = f"{verdict['symbol']} 练习 {verdict['id']}：{status_text(verdict['status'], lang)}"
                if verdict["message"] is not None:
                    line += " —— " + translate(verdict["message"], lang)
            elif line in PRINTED or line.startswith(("Total: ", "⚠ ")):  # ⚠: version warning
                line = translate(line, lang)
            elif line.startswith("(") and line.endswith(")"):  # show_call's "(<hint>)"
                inner = translate(line[1:-1], lang)
                line = f"（{inner}）" if inner != line[1:-1] else translate(line, lang)
            lines.append(line)
        return "\n".join(lines)
    except Exception:  # noqa: BLE001
        return text


def status_text(status: str, lang: str | None = None) -> str:
    """A verdict status (``"not attempted"``) as the reader reads it (``"未作答"``)."""
    return STATUS.get(lang or language(), {}).get(status, status)
