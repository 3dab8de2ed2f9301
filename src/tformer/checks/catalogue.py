"""The English message templates of the checkers, read from their source with :mod:`ast`.

A *template* is a message as the source writes it: a string literal, an f-string or a ``+``
concatenation of them, with every interpolated part kept as a hole in source form —
``"{name} = {value:g} is off only by rounding; keep more digits"``. Each checker module
``tformer/checks/chNN.py`` (and ``core.py``) has a Chinese catalogue
``tformer/checks/zh/chNN.py`` mapping each of its templates to a Chinese template whose holes
are numbered in the English order (``"{0} = {1} 只有舍入误差……"``);
:mod:`tformer.checks.language` matches a message against the templates at run time.

This module is for the tests and for translators, not imported by a checker at run time::

    python -m tformer.checks.catalogue          # list untranslated and stale templates
    python -m tformer.checks.catalogue --stub   # the same, as catalogue entries to fill in

Messages are taken from: the arguments of ``Wrong(...)`` / ``NotAttempted(...)``, every
``name=`` / ``what`` argument and the positional ``name`` of the comparison helpers, exercise
titles (``@exercise(id, title)``), ``print(...)`` and strings assigned to a variable or returned
by a function that end up in a message (``hint = "..."``) — in short every string expression of
three or more English words, except docstrings and the ``Mistake(...)`` test data.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODULES = ("core", *sorted(path.stem for path in HERE.glob("ch[0-9][0-9].py")), "grade")
PATHS = {"grade": HERE.parent / "grade.py"}  # the grader's own messages
WORDS = re.compile(r"[A-Za-z]{2,}[,;:]? [A-Za-z]{2,}")  # two English words in a row
SKIP_CALLS = {  # calls whose string arguments are not messages to a reader
    "Mistake", "Generator", "manual_seed", "einsum", "startswith", "split", "join", "getattr",
    "hasattr", "add_argument", "ArgumentParser", "error", "TypeError", "ValueError",
    "AttributeError", "NotImplementedError",
}


def _call_name(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _pieces(node: ast.expr) -> list[tuple[bool, str]] | None:
    """``[(is_hole, text)]`` of a string expression, or ``None`` if it is not one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [(False, node.value)]
    if isinstance(node, ast.JoinedStr):
        out: list[tuple[bool, str]] = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                out.append((False, str(part.value)))
            else:
                assert isinstance(part, ast.FormattedValue)
                text = ast.unparse(part.value)
                if part.conversion != -1:
                    text += "!" + chr(part.conversion)
                if part.format_spec is not None:
                    spec = "".join(
                        str(v.value) if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}"
                        for v in part.format_spec.values  # type: ignore[attr-defined]
                    )
                    text += ":" + spec
                out.append((True, text))
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _pieces(node.left), _pieces(node.right)
        if left is None and right is None:
            return None
        return (left or [(True, ast.unparse(node.left))]) + (right or [(True, ast.unparse(node.right))])
    return None


def _own_parts(node: ast.expr) -> set[int]:
    """The string nodes that are part of the template ``node`` (not the strings in its holes)."""
    if isinstance(node, ast.JoinedStr):
        own = {id(part) for part in node.values if isinstance(part, ast.Constant)}
        for part in node.values:
            if isinstance(part, ast.FormattedValue) and part.format_spec is not None:
                own.add(id(part.format_spec))
                own.update(_own_parts(part.format_spec))
        return own
    if isinstance(node, ast.BinOp):
        own = set()
        for side in (node.left, node.right):
            if _pieces(side) is not None:
                own.add(id(side))
                own.update(_own_parts(side))
        return own
    return set()


def template_text(pieces: list[tuple[bool, str]]) -> str:
    """The template string: literal text with ``{``/``}`` doubled, holes as ``{source}``."""
    return "".join(
        "{" + text + "}" if hole else text.replace("{", "{{").replace("}", "}}")
        for hole, text in pieces
    )


def _is_message(pieces: list[tuple[bool, str]]) -> bool:
    literal = " ".join(text for hole, text in pieces if not hole)
    return bool(WORDS.search(literal))


def templates_in_source(source: str) -> list[str]:
    """Every message template of a module's source, in source order, without repeats."""
    tree = ast.parse(source)
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _call_name(node) in SKIP_CALLS:
            skip.update(id(sub) for arg in [*node.args, *node.keywords] for sub in ast.walk(arg))
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                skip.add(id(body[0].value))
        # a string statement after an assignment is an attribute docstring
        body = getattr(node, "body", None)
        for statement in body[1:] if isinstance(body, list) else []:
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                skip.add(id(statement.value))
    explicit = {  # the argument of translate(...), Wrong(...), NotAttempted(...) is a message
        id(node.args[0]) for node in ast.walk(tree)
        if isinstance(node, ast.Call) and node.args
        and _call_name(node) in ("translate", "Wrong", "NotAttempted")
    }
    found: dict[str, None] = {}
    inner: set[int] = set()
    for node in ast.walk(tree):
        if id(node) in skip or id(node) in inner:
            continue
        pieces = _pieces(node)  # type: ignore[arg-type]
        if pieces is None:
            continue
        inner.update(_own_parts(node))  # type: ignore[arg-type]
        if _is_message(pieces) or (id(node) in explicit and re.search("[A-Za-z]{2}", "".join(
                text for hole, text in pieces if not hole))):
            found.setdefault(template_text(pieces), None)
    return list(found)


def source_templates(module: str) -> list[str]:
    """The templates of ``tformer/checks/<module>.py`` (``"grade"``: of ``tformer/grade.py``)."""
    path = PATHS.get(module, HERE / f"{module}.py")
    return templates_in_source(path.read_text(encoding="utf-8"))


def catalogue(module: str, language: str = "zh") -> dict[str, str]:
    """The translation catalogue of one module (``{}`` if it has none yet)."""
    try:
        return dict(importlib.import_module(f"tformer.checks.{language}.{module}").MESSAGES)
    except ModuleNotFoundError:
        return {}


def problems(module: str, language: str = "zh") -> tuple[list[str], list[str]]:
    """``(untranslated templates, stale catalogue keys)`` of one module."""
    templates = source_templates(module)
    translated = catalogue(module, language)
    missing = [t for t in templates if not translated.get(t)]
    stale = [key for key in translated if key not in set(templates)]
    return missing, stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", default=list(MODULES))
    parser.add_argument("--stub", action="store_true", help="print catalogue entries to fill in")
    args = parser.parse_args(argv)
    bad = 0
    for module in args.modules:
        missing, stale = problems(module)
        bad += len(missing) + len(stale)
        if args.stub and missing:
            print(f"# {module}")
            for template in missing:
                print(f"    {template!r}:\n        {''!r},")
        elif missing or stale:
            print(f"{module}: {len(missing)} untranslated, {len(stale)} stale")
            for template in missing:
                print(f"  untranslated: {template!r}")
            for key in stale:
                print(f"  stale: {key!r}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
