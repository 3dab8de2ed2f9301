"""Helpers for the book's notebooks that must work in every place a reader runs them.

:func:`glue` is MyST-NB's ``glue`` when MyST-NB is installed (the book build, a local checkout,
Binder). On Colab, where it is not, it degrades to showing the value (or nothing, with
``display=False``), so a chapter runs unchanged there and the prose simply shows the role text.
"""

from __future__ import annotations

from typing import Any


def glue(name: str, variable: Any, display: bool = True) -> None:
    """Store ``variable`` under ``name`` for ``{glue:text}`name``` in the page's prose."""
    try:
        from myst_nb import glue as myst_glue
    except ImportError:  # Colab and other environments without MyST-NB
        if display:
            from IPython.display import display as show

            show(variable)
        return
    myst_glue(name, variable, display)
