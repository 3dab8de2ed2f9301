"""tformer.notebook.glue: MyST-NB's glue when available, a harmless fallback otherwise."""

from __future__ import annotations

import builtins
import sys

import pytest

from tformer.notebook import glue


def test_glue_falls_back_without_myst_nb(monkeypatch, capsys):
    real_import = builtins.__import__

    def no_myst_nb(name, *args, **kwargs):
        if name.startswith("myst_nb"):
            raise ImportError("myst_nb is not installed (as on Colab)")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_myst_nb)
    monkeypatch.delitem(sys.modules, "myst_nb", raising=False)
    glue("hidden", 0.5, display=False)
    assert capsys.readouterr().out == ""
    glue("shown", 0.25)
    assert "0.25" in capsys.readouterr().out


def test_glue_uses_myst_nb_when_installed(monkeypatch):
    myst_nb = pytest.importorskip("myst_nb")
    calls = []
    monkeypatch.setattr(myst_nb, "glue", lambda *args: calls.append(args))
    glue("name", 1.5, display=False)
    assert calls == [("name", 1.5, False)]
