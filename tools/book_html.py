"""A small Sphinx extension (loaded from `_config.yml`) that keeps the built HTML offline and clean.

* matplotlib's ``to_jshtml`` players link Font Awesome 4 from a CDN for their button icons; the
  theme already ships Font Awesome (which draws those ``fa fa-play`` icons), so the link is dropped
  instead of leaving every animated page with a failing request when the reader is offline.
* MathJax is loaded on every page, not only on pages with equations: a chapter title with math
  (e.g. "Why divide by $\\sqrt{d_k}$") appears in the navigation of every page, and would stay raw
  TeX on pages without equations of their own (the references, the execution status).
* The bibliography is labelled by author and year ("Vaswani et al., 2017"), the same text the
  author-year citations in the chapters show, so a reader finds a cited work in the list at a
  glance (pybtex's stock styles label entries [1], [2], … or [VSP+17]).
* sphinx-thebe registers its inline configuration script once per read phase, so a page can carry
  two ``const THEBE_JS_URL`` declarations, a JavaScript error on every page; duplicates are removed.
* An exercise page (``book/exercises/NN_slug.md``, generated markdown) gets the same launch menu
  (the rocket) as a chapter, opening the reader's copy ``exercises/NN_slug.ipynb`` on Colab and
  Binder: the theme gives launch buttons to notebook pages only.
"""

from __future__ import annotations

import re
from pathlib import Path

from pybtex.plugin import register_plugin
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle

FONT_AWESOME_CDN = re.compile(
    r"<link[^>]*href=\"https?://[^\"]*font-awesome[^\"]*\"[^>]*>\s*", re.IGNORECASE
)


def _page_context(app, pagename, templatename, context, doctree) -> None:
    if "body" in context:
        context["body"] = FONT_AWESOME_CDN.sub("", context["body"])
    scripts = context.get("script_files")
    if scripts:
        seen: set[tuple[str, str]] = set()
        unique = []
        for script in scripts:
            filename = getattr(script, "filename", script) or ""
            body = getattr(script, "attributes", {}).get("body", "")
            key = (str(filename), str(body))
            if key in seen:
                continue
            seen.add(key)
            unique.append(script)
        scripts[:] = unique  # in place: later handlers (MathJax, widgets) append to this list


EXERCISE_PAGE = re.compile(r"book/exercises/(?P<slug>\d\d_\w+)")


def _exercise_launch_buttons(app, pagename, templatename, context, doctree) -> None:
    """The theme's launch menu on an exercise page, pointing at ``exercises/<slug>.ipynb``."""
    match = EXERCISE_PAGE.fullmatch(pagename)
    buttons = context.get("header_buttons")
    if not match or buttons is None or any(b.get("label") == "launch-buttons" for b in buttons):
        return
    from tformer.authoring import launch_links

    notebook = f"exercises/{match['slug']}.ipynb"
    if not (Path(app.srcdir) / notebook).exists():
        return
    colab_url, binder_url = launch_links(notebook, Path(app.srcdir))
    links = [("Binder", binder_url, "logo_binder.svg"), ("Colab", colab_url, "logo_colab.png")]
    buttons.insert(0, {
        "type": "group",
        "tooltip": "Launch interactive content",
        "icon": "fas fa-rocket",
        "label": "launch-buttons",
        "buttons": [
            {"type": "link", "text": text, "tooltip": f"Launch on {text}", "url": url,
             "icon": f"_static/images/{icon}"}
            for text, url, icon in links
        ],
    })  # fmt: skip


class AuthorYearLabels(BaseLabelStyle):
    """Labels "Surname, 2017", "Surname and Other, 2017" or "Surname et al., 2017"."""

    def format_labels(self, sorted_entries):
        for entry in sorted_entries:
            people = entry.persons.get("author") or entry.persons.get("editor") or []
            surnames = [" ".join(person.last_names) for person in people]
            if not surnames:
                names = entry.fields.get("title", entry.key)
            elif len(surnames) == 1:
                names = surnames[0]
            elif len(surnames) == 2:
                names = f"{surnames[0]} and {surnames[1]}"
            else:
                names = f"{surnames[0]} et al."
            names = names.replace("{", "").replace("}", "")
            yield f"{names}, {entry.fields.get('year', 'n.d.')}"


class AuthorYearStyle(UnsrtStyle):
    """pybtex's unsrt formatting, sorted by author, labelled by :class:`AuthorYearLabels`."""

    default_label_style = "book_author_year"
    default_sorting_style = "author_year_title"


register_plugin("pybtex.style.labels", "book_author_year", AuthorYearLabels)
register_plugin("pybtex.style.formatting", "book_author_year", AuthorYearStyle)


def setup(app):
    app.set_html_assets_policy("always")
    app.connect("html-page-context", _page_context, priority=100)
    app.connect("html-page-context", _exercise_launch_buttons, priority=502)  # after the theme's
    return {"parallel_read_safe": True, "parallel_write_safe": True}
