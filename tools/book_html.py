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
* The download menu offers the whole book as a PDF (``attention-executed.pdf``, printed by
  ``tools/pdf_book.py`` next to the HTML) instead of the theme's "print this page" button.
* Figures are rendered at twice the resolution they are shown at (``tformer.plots``: "retina"
  PNGs, sharp on high-density screens and in print). After the build, each such image gets a 1x
  copy (``NAME.1x.png``) and ``srcset``, so a standard screen downloads only the image at the size
  it is shown and a high-density screen or the PDF printer takes the 2x file.
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


BOOK_PDF = "attention-executed.pdf"


def _offer_book_pdf(app, pagename, templatename, context, doctree) -> None:
    """Replace the theme's window.print() entry of the download menu by the book's PDF."""
    pathto = context.get("pathto")
    for group in context.get("header_buttons") or []:
        if group.get("label") != "download-buttons" or pathto is None:
            continue
        group["buttons"] = [
            button for button in group["buttons"] if button.get("label") != "download-pdf-button"
        ]
        group["buttons"].append(
            {
                "type": "link",
                "url": pathto(BOOK_PDF, 1),
                "text": "Book PDF",
                "tooltip": "Book PDF: the whole book, for reading offline and printing",
                "icon": "fas fa-file-pdf",
                "label": "download-book-pdf-button",
            }
        )


IMG_TAG = re.compile(r"<img\b[^>]*>")
IMG_ATTR = re.compile(r'(\w[\w-]*)="([^"]*)"')


def _shown_width(attrs: dict[str, str]) -> float | None:
    if attrs.get("width", "").rstrip("px").replace(".", "", 1).isdigit():
        return float(attrs["width"].rstrip("px"))
    match = re.search(r"width:\s*([\d.]+)px", attrs.get("style", ""))
    return float(match.group(1)) if match else None


def _one_x_copies(app, exception) -> None:
    """Give every 2x figure a 1x copy and a srcset (see the module docstring)."""
    if exception is not None or app.builder.format != "html":
        return
    from PIL import Image

    out = Path(app.outdir)
    for page in out.rglob("*.html"):
        if "_static" in page.parts:
            continue
        text = page.read_text(encoding="utf-8")

        def one_x(match: re.Match, page: Path = page) -> str:
            tag = match.group(0)
            attrs = dict(IMG_ATTR.findall(tag))
            src = attrs.get("src", "")
            shown = _shown_width(attrs)
            if "srcset" in attrs or not src.endswith(".png") or "_images/" not in src or not shown:
                return tag
            image_path = (page.parent / src).resolve()
            if not image_path.exists():
                return tag
            with Image.open(image_path) as image:
                if image.width < 1.5 * shown:
                    return tag
                small = image_path.with_suffix(".1x.png")
                if not small.exists():
                    height = round(image.height * shown / image.width)
                    image.convert("RGBA").resize((round(shown), height), Image.LANCZOS).save(
                        small, optimize=True
                    )
            small_src = src[: -len(".png")] + ".1x.png"
            return tag.replace(f'src="{src}"', f'src="{small_src}" srcset="{small_src} 1x, {src} 2x"', 1)

        new = IMG_TAG.sub(one_x, text)
        if new != text:
            page.write_text(new, encoding="utf-8")
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
    # after sphinx-book-theme's own handler (priority 500) has built the header buttons
    app.connect("html-page-context", _offer_book_pdf, priority=900)
    app.connect("build-finished", _one_x_copies)
    app.connect("html-page-context", _exercise_launch_buttons, priority=502)  # after the theme's
    return {"parallel_read_safe": True, "parallel_write_safe": True}
