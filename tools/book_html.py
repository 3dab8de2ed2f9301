"""A small Sphinx extension (loaded from `_config.yml`) that keeps the built HTML offline and clean.

* matplotlib's ``to_jshtml`` players link Font Awesome 4 from a CDN for their button icons; the
  theme already ships Font Awesome (which draws those ``fa fa-play`` icons), so the link is dropped
  instead of leaving every animated page with a failing request when the reader is offline.
* MathJax is loaded on every page, not only on pages with equations: a chapter title with math
  (e.g. "Why divide by $\\sqrt{d_k}$") appears in the navigation of every page, and would stay raw
  TeX on pages without equations of their own (the references, the execution status).
* sphinx-thebe registers its inline configuration script once per read phase, so a page can carry
  two ``const THEBE_JS_URL`` declarations, a JavaScript error on every page; duplicates are removed.
"""

from __future__ import annotations

import re

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


def setup(app):
    app.set_html_assets_policy("always")
    app.connect("html-page-context", _page_context, priority=100)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
