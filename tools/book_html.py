"""A small Sphinx extension (loaded from `_config.yml`) that keeps the built HTML offline, light and
accessible (WCAG 2.1 AA; issue 15). Each concern is one function, connected in :func:`setup`.

* **Plain-text titles** (:func:`tex_to_text`, :func:`plain_titles`): a title with math ("Why divide
  by $\\sqrt{d_k}$") is plain Unicode text ("Why divide by √dₖ") wherever it is a label — the
  ``<title>``, the navigation, the page's table of contents, previous/next links, the search index.
  The page's own heading keeps its typeset math.
* **Figure alt text** (:func:`figure_alt`): a figure image without alt text gets its caption's
  first sentence (docutils would otherwise use the file name).
* **Meta description** (:func:`meta_description`): from the page's first paragraph.
* **Scripts a page uses** (:func:`page_scripts`): the ipywidgets manager (and the MathJax runtime it
  typesets labels with) only on pages where a widget view is rendered; duplicate sphinx-thebe
  configuration scripts removed (a JavaScript error otherwise).
* **Math at build time** (:class:`TexRenderer`, :func:`render_math`): every TeX expression is
  typeset by MathJax 3 (mathjax-full, pinned) in Node during the build; pages carry the CommonHTML
  output, its assistive MathML for screen readers and the CSS for their own characters, and need no
  MathJax runtime. A TeX error is a build warning (an error under ``-W``).
* **Icons as inline SVG** (:func:`inline_icons`): the theme's Font Awesome script (1.4 MB, which
  swaps ``<i class="fa-…">`` for SVG at run time) is replaced by the same SVG paths in the HTML.
* **Accessible markup** (:func:`accessible_markup`): names for the navigation's fold toggles, no
  aria-label that hides a button's visible text, landmarks for the sidebar, list roles of the
  bibliography, no empty table headers, an image's size in its tag.
* matplotlib's ``to_jshtml`` players link Font Awesome 4 from a CDN; the link is dropped.
* The bibliography is labelled by author and year ("Vaswani et al., 2017"), the same text the
  author-year citations in the chapters show.
* The download menu offers the whole book as a PDF (``attention-executed.pdf``, printed by
  ``tools/pdf_book.py`` next to the HTML) instead of the theme's "print this page" button.
* Figures are rendered at twice the resolution they are shown at (``tformer.plots``: "retina"
  PNGs, sharp on high-density screens and in print). After the build, each such image gets a 1x
  copy (``NAME.1x.png``) and ``srcset``, so a standard screen downloads only the image at the size
  it is shown and a high-density screen or the PDF printer takes the 2x file.
* An exercise page (``book/exercises/NN_slug.md``, generated markdown) gets the same launch menu
  (the rocket) as a chapter, opening the reader's copy ``exercises/NN_slug.ipynb`` on Colab and
  Binder: the theme gives launch buttons to notebook pages only.
* **Two editions** (:func:`language_switch`): the English book (``_build/html/``) and the Chinese
  edition (``_build/html/zh/``, built by ``tools/zh_book.py`` with ``language: zh_CN``). Every
  page's header starts with a link to the same page in the other edition (a real ``<a>`` with
  ``lang``/``hreflang`` and its language's own name as text), Chinese pages say
  ``<html lang="zh-CN">``, and in the Chinese edition the exercise pages' launch menu opens
  ``zh/exercises/NN_slug.ipynb``.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import shutil
import struct
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path

from docutils import nodes
from pybtex.plugin import register_plugin
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle
from sphinx.search.zh import SearchChinese
from sphinx.util import logging
from sphinxcontrib.bibtex.plugin import register_plugin as register_bibtex_plugin
from sphinxcontrib.bibtex.style.referencing import PersonStyle
from sphinxcontrib.bibtex.style.referencing.author_year import AuthorYearReferenceStyle

logger = logging.getLogger(__name__)
ROOT = Path(__file__).resolve().parent.parent

FONT_AWESOME_CDN = re.compile(
    r"<link[^>]*href=\"https?://[^\"]*font-awesome[^\"]*\"[^>]*>\s*", re.IGNORECASE
)
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


# --- plain-text titles ---------------------------------------------------------------------------

GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε",
    "zeta": "ζ", "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ",
    "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ",
    "tau": "τ", "upsilon": "υ", "phi": "ϕ", "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω",
    "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π", "Sigma": "Σ",
    "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
}
SYMBOLS = {
    "times": "×", "cdot": "·", "to": "→", "rightarrow": "→", "leftarrow": "←", "mapsto": "↦",
    "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠", "approx": "≈",
    "sim": "∼", "infty": "∞", "sum": "∑", "prod": "∏", "top": "⊤", "in": "∈", "ldots": "…",
    "dots": "…", "cdots": "⋯", "pm": "±", "mid": "|", "ell": "ℓ", "odot": "⊙", "otimes": "⊗",
    "oplus": "⊕", "nabla": "∇", "partial": "∂", "propto": "∝", "equiv": "≡", "cdotp": "·",
    "lVert": "‖", "rVert": "‖", "Vert": "‖", "|": "‖", "langle": "⟨", "rangle": "⟩",
    "{": "{", "}": "}", "%": "%", "$": "$", "&": "&", "#": "#", "_": "_",
    ",": "\u2009", ";": " ", ":": " ", " ": " ", "quad": " ", "qquad": "  ", "!": "", "\\": " ",
}
TEXT_COMMANDS = {
    "text", "mathrm", "mathbf", "mathit", "mathsf", "mathtt", "mathcal", "mathbb", "boldsymbol",
    "bm", "operatorname", "textbf", "textit", "emph", "texttt", "textrm", "mathbfit", "hat",
    "tilde", "bar", "vec", "overline", "widehat", "mbox",
}
RELATIONS = set("→←↦≤≥≠≈∼∈∝≡×")
IGNORED = {"left", "right", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr",
           "displaystyle", "textstyle", "limits", "nolimits"}
SUBSCRIPT = dict(zip("0123456789+-=()aehijklmnoprstuvxβγρφχ",
                     "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓᵦᵧᵨᵩᵪ", strict=True))
SUPERSCRIPT = dict(zip("0123456789+-=()inT⊤−",
                       "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁱⁿᵀᵀ⁻", strict=True))


def tex_to_text(tex: str) -> str:
    """A plain-text (Unicode) reading of a short TeX expression: ``\\sqrt{d_k}`` → ``√dₖ``."""
    text, _ = _tex_run(tex.strip(), 0, stop=None)
    return re.sub(r"\s+", " ", text).strip()


# Sub- and superscripts that Unicode has no characters for (W_O, d_{model}) are marked with these
# private-use characters by _tex_run; tex_to_text keeps TeX's "_"/"^" there, tex_to_html writes
# <sub>/<sup>.
_SCRIPT_OPEN = {"_": "\ue000", "^": "\ue002"}
_SCRIPT_CLOSE = "\ue001"


def tex_to_html(tex: str) -> str:
    """An HTML reading of a short TeX expression for labels (the navigation, a page's contents):
    Unicode where it has the characters, ``<sub>``/``<sup>`` where it has not (``W_O`` →
    ``W<sub>O</sub>``), never a raw ``_``."""
    text, _ = _tex_run(tex.strip(), 0, stop=None, marked=True)
    text = html.escape(re.sub(r"\s+", " ", text).strip(), quote=False)
    text = text.replace(_SCRIPT_OPEN["_"], "<sub>").replace(_SCRIPT_OPEN["^"], "<sup>")
    return re.sub(r"(<su[bp]>)([^\ue001]*)\ue001", lambda m: f"{m[1]}{m[2]}</{m[1][1:4]}>", text)


def _tex_run(tex: str, i: int, stop: str | None, marked: bool = False) -> tuple[str, int]:
    out: list[str] = []
    while i < len(tex):
        char = tex[i]
        if stop is not None and char == stop:
            return "".join(out), i + 1
        piece, i = _tex_atom(tex, i)
        if piece in ("_", "^"):
            script, i = _tex_atom(tex, i)
            table = SUBSCRIPT if piece == "_" else SUPERSCRIPT
            if script and all(c in table for c in script):
                out.append("".join(table[c] for c in script))
            elif marked and script:
                out.append(_SCRIPT_OPEN[piece] + script + _SCRIPT_CLOSE)
            else:
                out.append(piece + script)
            continue
        out.append(piece)
    return "".join(out), i


def _tex_atom(tex: str, i: int) -> tuple[str, int]:
    """One unit of TeX at ``i``: a group, a command with its arguments, or a character."""
    char = tex[i]
    if char == "{":
        return _tex_run(tex, i + 1, stop="}")
    if char in "_^":
        return char, i + 1
    if char == "~":
        return " ", i + 1
    if char != "\\":
        return char, i + 1
    match = re.match(r"\\([A-Za-z]+|.)", tex[i:])
    if match is None:
        return "", i + 1
    name, i = match.group(1), i + match.end()
    if name.isalpha():
        while i < len(tex) and tex[i] == " ":
            i += 1
    if name == "sqrt":
        arg, i = _tex_arg(tex, i)
        return "√" + _simple(arg), i
    if name in ("frac", "dfrac", "tfrac"):
        top, i = _tex_arg(tex, i)
        bottom, i = _tex_arg(tex, i)
        return f"{_simple(top)}/{_simple(bottom)}", i
    if name in TEXT_COMMANDS:
        return _tex_arg(tex, i)
    if name in IGNORED:
        return "", i
    if name in GREEK:
        return GREEK[name], i
    if name in SYMBOLS:
        symbol = SYMBOLS[name]
        return (f" {symbol} " if symbol in RELATIONS else symbol), i
    return name, i  # \log, \exp, \max, \softmax …: the name reads as itself


def _simple(text: str) -> str:
    """``text`` as one operand: in parentheses if it has an operator or a space in it."""
    return f"({text})" if re.search(r"[\s+\-−/=<>×·]", text) else text


def _tex_arg(tex: str, i: int) -> tuple[str, int]:
    while i < len(tex) and tex[i] == " ":
        i += 1
    if i >= len(tex):
        return "", i
    return _tex_atom(tex, i)


def _plain_copy(node: nodes.Node, markup: bool = False) -> None:
    """Replace every math node below ``node`` by its plain-text reading, in place (with
    ``markup``, by its HTML reading: :func:`tex_to_html`)."""
    for math in list(node.findall(nodes.math)):
        tex = math.astext()
        if markup and tex_to_html(tex) != html.escape(tex_to_text(tex), quote=False):
            reading = nodes.raw("", f'<span class="book-math-label">{tex_to_html(tex)}</span>',
                                format="html")
        else:
            reading = nodes.Text(tex_to_text(tex))
        math.parent.replace(math, reading)


def plain_titles(app, doctree) -> None:
    """Plain-text titles and table-of-contents entries for the page just read (doctree-read,
    after Sphinx's title and toc collectors): the titles as Unicode text (the <title>, previous/next
    links, the search index), the contents entries as HTML where Unicode has no subscript (W_O)."""
    env = app.env
    docname = env.docname
    for store in (env.titles, env.longtitles):
        if docname in store:
            _plain_copy(store[docname])
    if docname in env.tocs:
        _plain_copy(env.tocs[docname], markup=True)


def plain_text(node: nodes.Node) -> str:
    """A node's text with its math read as plain text."""
    copy = node.deepcopy()
    _plain_copy(copy)
    return re.sub(r"\s+", " ", copy.astext()).strip()


# --- figure alt text -----------------------------------------------------------------------------

SENTENCE_END = re.compile(r"[.!?](?=\s+[A-Z0-9(“\"])|[。！？](?=.)")
ABBREVIATIONS = ("fig.", "figs.", "eq.", "eqs.", "e.g.", "i.e.", "cf.", "vs.", "al.", "ch.",
                 "sec.", "no.", "approx.", "resp.", "p.", "pp.")


def first_sentence(text: str) -> str:
    """The first sentence of a caption (a full stop after "fig.", "e.g." … does not end it)."""
    text = re.sub(r"^(Fig(ure)?\.?\s*[\d.]+\s*)", "", text.strip())
    for match in SENTENCE_END.finditer(text):
        words = text[: match.end()].split()
        if words and words[-1].lower().lstrip("(") in ABBREVIATIONS:
            continue
        return text[: match.end()].strip()
    return text


def figure_alt(app, doctree, docname) -> None:
    """Every figure image without alt text gets its caption's first sentence (doctree-resolved)."""
    for figure in doctree.findall(nodes.figure):
        caption = next(iter(figure.findall(nodes.caption)), None)
        if caption is None:
            continue
        alt = first_sentence(plain_text(caption))
        for image in figure.findall(nodes.image):
            if not image.get("alt", "").strip() and alt:
                image["alt"] = alt


def lazy_images(app, doctree, docname) -> None:
    """Every image of a page loads when it nears the viewport (doctree-resolved: docutils' HTML
    writer renders ``loading="lazy"``). A phone then fetches the figures it scrolls to, not the
    page's whole megabyte before it can draw. The PDF edition loads them all
    (tools/pdf_book.py drops the attribute)."""
    for image in doctree.findall(nodes.image):
        image.setdefault("loading", "lazy")


# --- meta description ----------------------------------------------------------------------------

SKIP_FOR_DESCRIPTION = (nodes.Admonition, nodes.sidebar, nodes.topic, nodes.caption,
                        nodes.footnote, nodes.citation, nodes.field_list)


def description_of(doctree, limit: int = 160) -> str:
    """The first paragraph of a page as one plain-text line of at most ``limit`` characters."""
    for paragraph in doctree.findall(nodes.paragraph):
        ancestor, skip = paragraph.parent, False
        while ancestor is not None:
            if isinstance(ancestor, SKIP_FOR_DESCRIPTION) or "cell_output" in ancestor.get(
                "classes", []
            ):
                skip = True
                break
            ancestor = ancestor.parent
        text = "" if skip else plain_text(paragraph)
        if len(text) < 40:
            continue
        if len(text) > limit:
            text = text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"
        return text
    return ""


def meta_description(app, pagename, templatename, context, doctree) -> None:
    description = description_of(doctree) if doctree is not None else ""
    if not description:
        description = f"{app.config.project}: {context.get('title', pagename)}"
    context["metatags"] = context.get("metatags", "") + (
        f'\n<meta name="description" content="{html.escape(description, quote=True)}" />'
    )


# --- scripts a page uses -------------------------------------------------------------------------


def page_scripts(app, pagename, templatename, context, doctree) -> None:
    """Drop duplicate scripts, and the widget manager where no widget view is rendered
    (html-page-context, after MyST-NB and sphinx.ext.mathjax added theirs)."""
    scripts = context.get("script_files")
    if not scripts:
        return
    has_views = WIDGET_VIEW in context.get("body", "")
    widget_files = {f"_static/{name}" for name in app.config.nb_ipywidgets_js or {}}
    seen: set[tuple[str, str]] = set()
    kept = []
    for script in scripts:
        filename = str(getattr(script, "filename", script) or "")
        attributes = getattr(script, "attributes", {})
        body = attributes.get("body", "")
        key = (filename, str(body))
        if key in seen:
            continue
        seen.add(key)
        is_widget = filename in widget_files or attributes.get("type") == WIDGET_STATE
        is_mathjax = "mathjax" in filename or "MathJax" in str(body)
        if (is_widget or is_mathjax) and not has_views:
            continue
        kept.append(script)
    scripts[:] = kept
    context["book_runtime_mathjax"] = has_views


# --- math at build time --------------------------------------------------------------------------

MATH_SPAN = re.compile(
    r'<(span|div) class="math notranslate nohighlight"([^>]*)>(.*?)</\1>', re.DOTALL
)
DELIMITED = re.compile(r"^\s*(\\\(|\\\[)(.*)(\\\)|\\\])\s*$", re.DOTALL)
FONTS = "_static/mathjax/output/chtml/fonts/woff-v2"


class TexRenderer:
    """One Node process (tools/tex_render.js) per build, fed one page at a time."""

    def __init__(self) -> None:
        self._process: subprocess.Popen | None = None
        self._lock = threading.Lock()

    def render(self, math: list[tuple[str, bool]], font_url: str) -> dict:
        with self._lock:
            if self._process is None or self._process.poll() is not None:
                node = shutil.which("node")
                if node is None:
                    raise RuntimeError("node is needed to typeset the book's math (`make setup`)")
                self._process = subprocess.Popen(
                    [node, str(ROOT / "tools" / "tex_render.js")], cwd=ROOT, text=True,
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                )
            request = json.dumps({"math": math, "fontURL": font_url})
            try:
                self._process.stdin.write(request + "\n")
                self._process.stdin.flush()
                reply = self._process.stdout.readline()
            except BrokenPipeError:
                reply = ""
            if not reply:
                self._process = None
                raise RuntimeError("tools/tex_render.js stopped: is mathjax-full installed "
                                   "(pinned in package-lock.json)? Run `make setup`.")
            return json.loads(reply)

    def close(self, *args) -> None:
        if self._process is not None:
            self._process.stdin.close()
            self._process.wait(timeout=30)
            self._process = None


RENDERER = TexRenderer()


def _unsplit(tex: str) -> str:
    """Sphinx wraps a multi-line display equation in ``split``; an ``aligned`` block with a
    ``\\tag`` inside it is an error there, and needs no wrapper."""
    match = re.fullmatch(r"\s*\\begin\{split\}(.*)\\end\{split\}\s*", tex, re.DOTALL)
    return match.group(1) if match else tex


def render_math(page: str, font_url: str, pagename: str) -> str:
    """Typeset every Sphinx math span/div of ``page`` and add the CSS for its characters."""
    found = []
    for match in MATH_SPAN.finditer(page):
        inner = match.group(3)
        # An equation number (<span class="eqno">) may precede the TeX in a display block.
        prefix_match = re.match(r"(\s*<span class=\"eqno\">.*?</span>)?(.*)", inner, re.DOTALL)
        prefix, tex_html = prefix_match.group(1) or "", prefix_match.group(2)
        delimited = DELIMITED.match(html.unescape(tex_html))
        if delimited is None:
            continue
        found.append((match, prefix, delimited.group(2), delimited.group(1) == "\\["))
    if not found:
        return page
    math = [(tex, display) for _, _, tex, display in found]
    result = RENDERER.render(math, font_url)
    failed = {i for i, out in enumerate(result["html"]) if out is None and found[i][3]}
    if failed:  # once more, with the display equations that failed unwrapped (one CSS sheet)
        math = [(_unsplit(tex), display) if i in failed else (tex, display)
                for i, (tex, display) in enumerate(math)]
        result = RENDERER.render(math, font_url)
    pieces, last = [], 0
    for (match, prefix, tex, _display), out in zip(found, result["html"], strict=True):
        if out is None:
            logger.warning(f"TeX error on {pagename}: {tex[:120]!r}", type="book_html",
                           subtype="tex")
            continue
        out = _trim_math(out)
        pieces += [page[last:match.start()], f"<{match.group(1)} class=\"math notranslate "
                   f"nohighlight\"{match.group(2)}>{prefix}{out}</{match.group(1)}>"]
        last = match.end()
    pieces.append(page[last:])
    # MathJax's runtime scales math so that its x-height matches the surrounding text's; CSS does
    # the same: in font-size, 1ex is the parent font's x-height (MathJax's TeX font: 0.442em).
    css = (_minify_css(result["css"])
           + 'mjx-container[jax="CHTML"]{position:relative;font-size:calc(1ex / 0.442)}')
    style = f'<style id="book-math-css">{css}</style>\n'
    return "".join(pieces).replace("</head>", style + "</head>", 1)


def _trim_math(markup: str) -> str:
    """Drop what HTML does not need from MathJax's output: the MathML namespace (the HTML parser
    sets it), IE's ``unselectable`` and the container's inline ``position`` (set by the page's
    math CSS instead)."""
    markup = markup.replace(' xmlns="http://www.w3.org/1998/Math/MathML"', "")
    markup = markup.replace(' unselectable="on"', "")
    return re.sub(r'(<mjx-container [^>]*?) style="position: relative;"', r"\1", markup)


def _minify_css(css: str) -> str:
    css = re.sub(r"\s*\n\s*", "", css)
    return re.sub(r"\s*([{};:,>])\s*", r"\1", css)


# --- icons as inline SVG -------------------------------------------------------------------------

ICON_TAG = re.compile(r'<(i|span) class="([^"]*\bfa[a-z-]*\b[^"]*)"([^>]*)>\s*</\1>')
ICON_PACKS = {"fab": "brands", "fa-brands": "brands", "far": "regular", "fa-regular": "regular",
              "fas": "solid", "fa-solid": "solid", "fa": "solid"}
ICON_MODIFIERS = {"fa-lg", "fa-fw", "fa-flip-horizontal", "fa-spin", "fa-xs", "fa-sm", "fa-2x"}
_ICONS: dict[str, dict[str, tuple[int, int, str]]] = {}


def _font_awesome_icons() -> dict[str, dict[str, tuple[int, int, str]]]:
    """Font Awesome's SVG paths by pack and name (and alias), read from the theme's own script."""
    if _ICONS:
        return _ICONS
    import pydata_sphinx_theme

    script = (Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme" /
              "static" / "scripts" / "fontawesome.js").read_text(encoding="utf-8")
    entry = re.compile(
        r'(?:"([^"]+)"|([A-Za-z0-9_$]+)):\[(\d+),(\d+),\[([^\]]*)\],"[^"]*","([^"]*)"\]'
    )
    for start in re.finditer(r"var p=\{", script):
        end = script.find('}(function(){d("', start.end())
        pack_name = re.match(r'\}\(function\(\)\{d\("(\w+)"', script[end:]).group(1)
        pack = _ICONS.setdefault(ICON_PACKS[pack_name], {})
        for match in entry.finditer(script, start.end(), end):
            name = match.group(1) or match.group(2)
            icon = (int(match.group(3)), int(match.group(4)), match.group(6))
            pack[name] = icon
            for alias in re.findall(r'"([^"]+)"', match.group(5)):
                pack.setdefault(alias, icon)
    return _ICONS


def _icon_svg(match: re.Match, used: dict[str, tuple[int, int, str]]) -> str:
    classes = match.group(2).split()
    pack = next((ICON_PACKS[c] for c in classes if c in ICON_PACKS), None)
    names = [c[3:] for c in classes if c.startswith("fa-") and c not in ICON_PACKS
             and c not in ICON_MODIFIERS]
    icons = _font_awesome_icons().get(pack or "solid", {})
    name = next((n for n in names if n in icons), None)
    if name is None:
        return match.group(0)
    symbol = f"book-icon-{pack or 'solid'}-{name}"
    used[symbol] = icons[name]
    width, height, _ = icons[name]
    attributes = re.sub(r'\s+title="[^"]*"', "", match.group(3))
    return (
        f'<svg class="svg-inline--fa {" ".join(classes)}" aria-hidden="true" focusable="false"'
        f' viewBox="0 0 {width} {height}"{attributes}><use href="#{symbol}"></use></svg>'
    )


def inline_icons(page: str) -> str:
    """Font Awesome ``<i>`` icons as inline SVG (each drawing once per page, in a hidden sprite at
    the top of the body), and no Font Awesome script."""
    page = re.sub(r'<script defer src="[^"]*_static/scripts/fontawesome\.js[^"]*"></script>\s*',
                  "", page)
    page = re.sub(r'<link rel="preload" as="script" href="[^"]*fontawesome\.js[^"]*" />\s*',
                  "", page)
    used: dict[str, tuple[int, int, str]] = {}
    page = ICON_TAG.sub(lambda match: _icon_svg(match, used), page)
    if not used:
        return page
    symbols = "".join(
        f'<symbol id="{symbol}" viewBox="0 0 {width} {height}"><path fill="currentColor"'
        f' d="{path}"/></symbol>' for symbol, (width, height, path) in used.items()
    )
    sprite = (f'<svg xmlns="http://www.w3.org/2000/svg" class="book-icons" aria-hidden="true"'
              f' width="0" height="0" style="position:absolute">{symbols}</svg>')
    body = re.search(r"<body[^>]*>", page)
    if body is None:
        return page + sprite
    return page[: body.end()] + sprite + page[body.end():]


# The theme draws an icon after each admonition's title with a CSS ``content`` glyph of Font
# Awesome's webfont, which makes every page with a note or an exercise fetch the whole 157 KB
# font. The same drawings (read from the theme's own Font Awesome data) as CSS masks instead:
# admonition type -> icon, as the theme and sphinx-exercise choose them.
ADMONITION_ICONS = {
    "": "bell", "note": "circle-info", "tip": "lightbulb", "hint": "lightbulb",
    "seealso": "share", "important": "circle-exclamation", "attention": "circle-exclamation",
    "warning": "triangle-exclamation", "caution": "triangle-exclamation",
    "danger": "triangle-exclamation", "error": "circle-xmark", "todo": "pencil",
    "exercise": "pencil",
}
ICONS_CSS = "book-icons.css"


def _mask_url(name: str, style: str = "solid") -> str:
    width, height, path = _font_awesome_icons()[style][name]
    svg = f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}"><path d="{path}"/></svg>'
    return f"url(\"data:image/svg+xml;base64,{base64.b64encode(svg.encode()).decode()}\")"


def icons_css() -> str:
    """The stylesheet that replaces the theme's webfont icons (see ADMONITION_ICONS)."""
    rules = [
        "/* Written by tools/book_html.py: admonition icons as masks, no icon webfont. */",
        "div.admonition>.admonition-title::after{content:\"\"!important;font:inherit;"
        "margin-top:.3rem;background-color:currentColor;"
        "-webkit-mask:var(--book-icon) center/contain no-repeat;"
        "mask:var(--book-icon) center/contain no-repeat}",
        "div.solution>.admonition-title::after{content:none!important}",
        ".bd-sidebar-secondary.hide:not(:hover) .onthispage::after{content:none}",
        # The theme marks links to GitHub and GitLab with the brand's glyph (the brands font).
        "a.github::before,a.gitlab::before{content:\"\"!important;font:inherit;"
        "display:inline-block;width:.9em;height:.9em;vertical-align:-.1em;"
        "background-color:var(--pst-color-text-muted);"
        "-webkit-mask:var(--book-icon) center/contain no-repeat;"
        "mask:var(--book-icon) center/contain no-repeat}",
    ]
    for kind in ("github", "gitlab"):
        rules.append(f"a.{kind}::before{{--book-icon:{_mask_url(kind, 'brands')}}}")
    for kind, name in ADMONITION_ICONS.items():
        selector = f"div.admonition{'.' + kind if kind else ''}>.admonition-title::after"
        rules.append(f"{selector}{{--book-icon:{_mask_url(name)}}}")
    return "\n".join(rules) + "\n"


def _write_icons_css(app, exception) -> None:
    if exception is None and app.builder.format == "html":
        static = Path(app.builder.outdir) / "_static"
        static.mkdir(parents=True, exist_ok=True)
        (static / ICONS_CSS).write_text(icons_css(), encoding="utf-8")


# --- accessible markup ---------------------------------------------------------------------------


def _name_fold_toggles(page: str) -> str:
    """The navigation's <summary> fold toggles hold only an icon: name them after their entry."""

    def named(match: re.Match) -> str:
        title = re.sub(r"<[^>]+>", "", match.group(2)).strip()
        return (f'{match.group(1)}<details{match.group(3)}><summary>'
                f'<span class="visually-hidden">Sections of {title}</span>')

    return re.sub(r'(<a class="[^"]*reference internal[^"]*" href="[^"]*">(.*?)</a>)'
                  r'<details([^>]*)><summary>(?!<span class="visually-hidden">)', named, page)


def _image_sizes(page: str, outdir: Path, pagename: str, images: dict[str, str],
                 srcdir: Path) -> str:
    """width/height on <img> of PNG files (no layout shift while they load)."""
    sources = {Path(dest).name: src for src, dest in images.items()}

    def sized(match: re.Match) -> str:
        tag, src = match.group(0), match.group(1)
        if " width=" in tag or not src.endswith(".png") or src.startswith("data:"):
            return tag
        name = Path(src).name
        file = outdir / "_images" / name
        if not file.exists() and name in sources:
            file = srcdir / sources[name]
        if not file.exists():
            file = (outdir / pagename).parent / src
        try:
            header = file.read_bytes()[:24]
        except OSError:
            return tag
        if header[:8] != b"\x89PNG\r\n\x1a\n":
            return tag
        width, height = struct.unpack(">II", header[16:24])
        return tag.replace("<img ", f'<img width="{width}" height="{height}" ', 1)

    return re.sub(r'<img [^>]*src="([^"]+)"[^>]*>', sized, page)


def accessible_markup(page: str) -> str:
    page = _name_fold_toggles(page)
    # A button whose aria-label hides its visible text ("Search" on "Search Ctrl+K"; the folded
    # cells' "Toggle hidden content" on "Show code cell source"): the visible text is the name.
    page = re.sub(r'(<button class="btn search-button-field[^"]*" title="([^"]*)") '
                  r'aria-label="\2"', r"\1", page)  # "Search", and the Chinese edition's "搜索"
    page = page.replace('<summary aria-label="Toggle hidden content">', "<summary>")
    # The primary sidebar (site title, search, navigation) is the site's navigation landmark
    # region: content outside landmarks is invisible to landmark navigation.
    page = page.replace('<div id="pst-primary-sidebar" class="bd-sidebar-primary bd-sidebar">',
                        '<div id="pst-primary-sidebar" class="bd-sidebar-primary bd-sidebar" '
                        'role="region" aria-label="Book navigation">')
    # Bibliography: doc-biblioentry is deprecated; a list of list items with their back-links.
    page = page.replace('role="doc-biblioentry"', 'role="listitem"')
    page = re.sub(r'(<div class="citation" id="[^"]*" role=")doc-biblioentry(")', r"\1listitem\2",
                  page)
    # An empty corner cell of a table header is a data cell, not a header without a name.
    page = re.sub(r'<th class="head"( [^>]*)?>(\s*<p>\s*</p>\s*)?</th>', r"<td\1></td>", page)
    return page


PLAYER_FRAME = re.compile(
    r'(frames\[\d+\] = ")data:image/(png|jpeg|svg\+xml);base64,([A-Za-z0-9+/=\\\n]+)(")'
)
FRAME_SUFFIX = {"png": ".png", "jpeg": ".jpg", "svg+xml": ".svg"}


def player_frames_as_files(page: str, outdir: Path, pagename: str) -> str:
    """A scrubbable player's frames, which matplotlib inlines as base64, become image files in
    _images/ (named by their content): the page's HTML is lighter by a third more than the frames
    weigh, the browser fetches and caches them in parallel, and the player preloads them as
    before (its frame list holds their URLs instead of data URIs)."""
    images = outdir / "_images"
    depth = "../" * pagename.count("/")

    def as_file(match: re.Match) -> str:
        data = base64.b64decode(match.group(3).replace("\\\n", ""))
        name = f"frame-{hashlib.sha256(data).hexdigest()[:20]}{FRAME_SUFFIX[match.group(2)]}"
        images.mkdir(parents=True, exist_ok=True)
        target = images / name
        if not target.exists():
            target.write_bytes(data)
        return f"{match.group(1)}{depth}_images/{name}{match.group(4)}"

    return PLAYER_FRAME.sub(as_file, page)


SETUP_LABEL = {
    False: "Set-up code: installs tformer on Colab, then the chapter's imports",
    True: "准备代码：在 Colab 上安装 tformer，然后导入本章用到的模块",
}
_CELL_START = re.compile(r'<div class="cell (tag_hide-cell|tag_hide-input) docutils container">')
_FOLD = re.compile(r'<details class="admonition hide above-input">\s*<summary>.*?</summary>\s*',
                   re.DOTALL)


def _div_end(page: str, start: int) -> int:
    """The index just past the ``</div>`` that closes the ``<div`` at ``start``."""
    depth, i = 0, start
    for match in re.compile(r"<div\b|</div>").finditer(page, start):
        depth += 1 if match[0] == "<div" else -1
        i = match.end()
        if depth == 0:
            return i
    return i


def _unfold(cell: str) -> str:
    """A hidden cell's markup without its own fold (its ``<details>`` and summary)."""
    folded = _FOLD.search(cell)
    if folded is None:
        return cell
    end = cell.rfind("</details>")
    return cell[: folded.start()] + cell[folded.end(): end] + cell[end + len("</details>"):]


def one_setup_fold(page: str, chinese: bool) -> str:
    """A chapter opens with its set-up cell (``hide-cell``) and its imports (``hide-input``), two
    folds labelled "Show code cell content" and "Show code cell source". Make them one fold that
    says what it holds (the PDF drops it: class ``above-input``)."""
    first = _CELL_START.search(page)
    if first is None or first[1] != "tag_hide-cell":
        return page
    end = _div_end(page, first.start())
    cells = [_unfold(page[first.start():end])]
    second = _CELL_START.match(page, len(page[:end]) + len(page[end:]) - len(page[end:].lstrip()))
    if second is not None and second[1] == "tag_hide-input":
        end2 = _div_end(page, second.start())
        cell = page[second.start():end2]
        if 'class="cell_output' not in cell:  # the imports print nothing
            cells.append(_unfold(cell))
            end = end2
    fold = (f'<details class="book-setup above-input"><summary>{SETUP_LABEL[chinese]}</summary>'
            + "\n".join(cells) + "</details>")
    return page[: first.start()] + fold + page[end:]


SEARCH_SCRIPTS = re.compile(
    r'<script (?:defer )?src="[^"]*(?:searchtools\.js|language_data\.js|searchindex\.js)">'
    r"</script>\s*")
# Theme scripts that only wire up the page once it is parsed (each waits for DOMContentLoaded or
# load itself): deferred, they no longer block the first paint; their order is kept.
DEFERRABLE = re.compile(r'<script ((?:data-[\w-]+="[^"]*" )*)src="([^"]*/(?:clipboard\.min|'
                        r'copybutton|togglebutton|design-tabs|sphinx-book-theme)\.js[^"]*)">')


def _defer_search(page: str, pagename: str = "search") -> str:
    """Sphinx's search tools and its index (130 kB of script to parse) only on the search page,
    where they run deferred; the theme's page scripts deferred on every page."""
    if pagename == "search":
        page = re.sub(
            r'<script src="([^"]*(?:searchtools\.js|language_data\.js|searchindex\.js))">',
            r'<script defer src="\1">', page)
    else:
        page = SEARCH_SCRIPTS.sub("", page)
    return DEFERRABLE.sub(r'<script defer \1src="\2">', page)


# A display equation or output wider than its column scrolls sideways; keyboard readers reach the
# hidden part only if the scrolling box can take focus (the theme does this for code blocks).
SCROLL_TAB_STOPS_JS = """document.addEventListener("DOMContentLoaded", function () {
  var mark = function () {
    document.querySelectorAll("div.math, .cell_output .output").forEach(function (box) {
      if (box.scrollWidth > box.clientWidth + 1) { box.tabIndex = 0; }
      else if (box.getAttribute("tabindex") === "0") { box.removeAttribute("tabindex"); }
    });
  };
  mark();
  window.addEventListener("resize", mark);
});"""


# --- two editions --------------------------------------------------------------------------------

EDITIONS = {
    # edition: (its <html lang>, the other edition's lang, the link text, the link's title)
    "en": ("en", "zh-CN", "中文", "阅读本页的中文版"),
    "zh": ("zh-CN", "en", "English", "Read this page in English"),
}
HEADER_BUTTONS = '<div class="article-header-buttons">'


def chinese_edition(app) -> bool:
    """Is this build the Chinese edition (``language: zh_CN`` in its ``_config.yml``)?"""
    return str(getattr(app.config, "language", "") or "").lower().startswith("zh")


def other_edition_url(pagename: str, chinese: bool) -> str:
    """The same page in the other edition, relative to ``pagename``'s HTML file: the Chinese
    edition is the folder ``zh/`` of the English one."""
    up = "../" * pagename.count("/")
    return f"{up}../{pagename}.html" if chinese else f"{up}zh/{pagename}.html"


# The theme's and the players' control names that its zh_CN catalogue leaves in English.
ZH_UI = {
    "Link to this heading": "链接到此标题", "Link to this image": "链接到此图片",
    "Link to this equation": "链接到此公式", "Link to this table": "链接到此表格",
    "Link to this code": "链接到此代码",
    "Toggle primary sidebar": "切换左侧边栏", "Toggle secondary sidebar": "切换右侧边栏",
    "Launch on Colab": "在 Colab 中打开", "Launch on Binder": "在 Binder 中打开",
    "Launch interactive content": "在线运行本页", "Source repositories": "源代码仓库",
    "Search this book...": "在本书中搜索…", "Color mode": "颜色模式", "Page": "本页",
    "Main": "正文", "Book navigation": "本书导航", "Fullscreen mode": "全屏模式",
    "Play": "播放", "Pause": "暂停", "Play backwards": "倒放", "First frame": "第一帧",
    "Last frame": "最后一帧", "Next frame": "下一帧", "Previous frame": "上一帧",
    "Decrease speed": "减速", "Increase speed": "加速", "Repetition mode": "重复模式",
    "Frame": "帧",
}
_UI_ATTRIBUTE = re.compile(r'\b(aria-label|title|data-bs-title|placeholder)="([^"]+)"')


def chinese_ui(page: str) -> str:
    """The Chinese edition's control names (tooltips, accessible names, the search box)."""
    return _UI_ATTRIBUTE.sub(
        lambda m: f'{m[1]}="{ZH_UI[m[2]]}"' if m[2] in ZH_UI else m[0], page)


# Text (not attributes) that the theme, MyST-NB, sphinx-exercise and matplotlib's player leave in
# English on a Chinese page: (pattern, replacement) pairs applied to the final HTML.
ZH_TEXT = [
    (re.compile(r'(<span class="btn__text-container">)Repository(</span>)'), r"\1源代码仓库\2"),
    (re.compile(r'(<span class="btn__text-container">)Open issue(</span>)'), r"\1提交问题\2"),
    (re.compile(r'alt="(Binder|Colab) logo"'), r'alt="\1 标志"'),
    (re.compile(r'(<span class="visually-hidden">)Sections of ([^<]*)(</span>)'),
     r"\1“\2”的各节\3"),
    (re.compile(r"(<label for=\"_anim_radio\d_\w+\">)(Once|Loop|Reflect)(</label>)"),
     lambda m: m[1] + {"Once": "播放一次", "Loop": "循环", "Reflect": "往返"}[m[2]] + m[3]),
    # the accessible player (tformer.plots): "frame 3 of 16" in the alt text and the slider
    (re.compile(r"frame (\d+) of (\d+)"), r"第 \1 帧，共 \2 帧"),
    (re.compile(r'"frame " \+ \(frame \+ 1\) \+ " of " \+ anim\.frames\.length'),
     '"第 " + (frame + 1) + " 帧，共 " + anim.frames.length + " 帧"'),
    # sphinx-exercise's "Solution to <a>Exercise</a>": the exercise's number, the Chinese order
    (re.compile(r'<p class="admonition-title">解答<a class="reference internal" '
                r'href="#ex-(\d\d)-(\d+)"> 练习</a>'),
     r'<p class="admonition-title"><a class="reference internal" href="#ex-\1-\2">'
     r"练习 \1.\2</a> 的解答"),
    # MyST-NB's execution table
    (re.compile(r'(<th class="head"><p>)(Document|Modified|Method|Run Time \(s\)|Status)'
                r"(</p></th>)"),
     lambda m: m[1] + {"Document": "文档", "Modified": "修改时间", "Method": "方式",
                       "Run Time (s)": "运行时间（秒）", "Status": "状态"}[m[2]] + m[3]),
    (re.compile(r"(<td><p>)cache(</p></td>)"), r"\1缓存\2"),
    (re.compile(r"作者： "), "作者："),
]


_SIMPLE_EM = re.compile(r"<em>([^<]*)</em>")


def chinese_text(page: str) -> str:
    """The Chinese edition's page text that the tools it is built with leave in English, and
    the Chinese characters of every emphasis wrapped in ``<span class="zh-em">`` (book.css draws
    them with emphasis dots: CJK fonts have no italics)."""
    for pattern, replacement in ZH_TEXT:
        page = pattern.sub(replacement, page)
    return _SIMPLE_EM.sub(
        lambda em: "<em>" + CJK_RUN.sub(lambda run: f'<span class="zh-em">{run[0]}</span>', em[1])
        + "</em>", page)


CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")


def cjk_bigrams(text: str) -> list[str]:
    """The search terms of Chinese text without word boundaries: every pair of adjacent
    characters of each run of Chinese characters (a lone character is its own term)."""
    terms = []
    for run in CJK_RUN.findall(text):
        terms += [run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)]
    return terms


# The search page's query splitter for Chinese, the same rule in JavaScript: a query "注意力"
# becomes the terms "注意" and "意力", and a page matches when it holds both.
CJK_SPLIT_QUERY_JS = r"""
function splitQuery(query) {
  const cjk = /[\u3400-\u9fff\uf900-\ufaff]+/u;
  const terms = [];
  query.split(/[^\p{Letter}\p{Number}_]+/u).forEach((part) => {
    part.split(/([\u3400-\u9fff\uf900-\ufaff]+)/u).forEach((piece) => {
      if (!piece) return;
      if (!cjk.test(piece)) { terms.push(piece); return; }
      if (piece.length === 1) terms.push(piece);
      for (let i = 0; i + 1 < piece.length; i++) terms.push(piece.slice(i, i + 2));
    });
  });
  return terms;
}
"""


class ChineseBigramSearch(SearchChinese):
    """Sphinx's Chinese search indexes Chinese words only with jieba (not a dependency of the
    book): without it a Chinese query finds nothing. Index character bigrams instead."""

    js_splitter_code = CJK_SPLIT_QUERY_JS

    def split(self, input: str) -> list[str]:
        return cjk_bigrams(input) + super().split(input)


def language_switch(page: str, pagename: str, chinese: bool) -> str:
    """``<html lang>`` of the edition, and a link to the other edition first in the header."""
    lang, other, text, title = EDITIONS["zh" if chinese else "en"]
    page = re.sub(r'<html lang="[^"]*"', f'<html lang="{lang}"', page, count=1)
    if HEADER_BUTTONS not in page:
        return page
    link = (
        f'<a class="btn btn-sm book-language-switch" href="{other_edition_url(pagename, chinese)}"'
        f' lang="{other}" hreflang="{other}" title="{title}">'
        f'<span class="book-language-switch__text">{text}</span></a>'
    )
    return page.replace(HEADER_BUTTONS, HEADER_BUTTONS + "\n" + link, 1)


# --- the rendered page ---------------------------------------------------------------------------


def finish_page(app, pagename: str, context: dict, page: str) -> str:
    """Everything done to the final HTML of one page."""
    page = FONT_AWESOME_CDN.sub("", page)
    page = player_frames_as_files(page, Path(app.builder.outdir), pagename)
    if not context.get("book_runtime_mathjax"):
        font_url = context["pathto"](FONTS, 1) if "pathto" in context else FONTS
        page = render_math(page, font_url, pagename)
    page = inline_icons(page)
    page = accessible_markup(page)
    page = _defer_search(page, pagename)
    page = one_setup_fold(page, chinese_edition(app))
    page = numbered_solutions(page)
    page = language_switch(page, pagename, chinese_edition(app))
    if chinese_edition(app):
        page = chinese_text(chinese_ui(page))
    builder = app.builder
    return _image_sizes(page, Path(builder.outdir), pagename, getattr(builder, "images", {}),
                        Path(app.srcdir))


def wrap_page_render(app) -> None:
    """Post-process every page the HTML builder renders (builder-inited)."""
    builder = app.builder
    if getattr(builder, "format", "") != "html" or not hasattr(builder, "templates"):
        return
    render = builder.templates.render

    def render_and_finish(template: str, context: dict) -> str:
        output = render(template, context)
        if template.endswith(".html") and "pagename" in context:
            output = finish_page(app, context["pagename"], context, output)
        return output

    builder.templates.render = render_and_finish


# --- bibliography --------------------------------------------------------------------------------


BOOK_PDF = "attention-executed.pdf"
BOOK_PDF_ZH = "attention-executed-zh.pdf"


def _offer_book_pdf(app, pagename, templatename, context, doctree) -> None:
    """Replace the theme's window.print() entry of the download menu by the book's PDF."""
    pathto = context.get("pathto")
    for group in context.get("header_buttons") or []:
        if group.get("label") != "download-buttons" or pathto is None:
            continue
        group["buttons"] = [
            button for button in group["buttons"] if button.get("label") != "download-pdf-button"
        ]
        chinese = chinese_edition(app)  # the Chinese edition's own PDF (pdf_book.py --lang zh)
        group["buttons"].append(
            {
                "type": "link",
                "url": pathto(BOOK_PDF_ZH if chinese else BOOK_PDF, 1),
                "text": "全书 PDF" if chinese else "Book PDF",
                "tooltip": "全书 PDF：供离线阅读和打印" if chinese
                else "Book PDF: the whole book, for reading offline and printing",
                "icon": "fas fa-file-pdf",
                "label": "download-book-pdf-button",
            }
        )


IMG_TAG = re.compile(r"<img\b[^>]*>")
IMG_ATTR = re.compile(r'(\w[\w-]*)="([^"]*)"')


def _shown_width(attrs: dict[str, str]) -> float | None:
    """The CSS width an image is shown at: its style's width (the ``width`` attribute may hold
    the intrinsic size, kept for the aspect ratio), else the ``width`` attribute."""
    match = re.search(r"width:\s*([\d.]+)px", attrs.get("style", ""))
    if match:
        return float(match.group(1))
    if attrs.get("width", "").rstrip("px").replace(".", "", 1).isdigit():
        return float(attrs["width"].rstrip("px"))
    return None


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

    notebook = f"{'zh/' if chinese_edition(app) else ''}exercises/{match['slug']}.ipynb"
    if not (ROOT / notebook).exists():
        return
    colab_url, binder_url = launch_links(notebook, Path(app.srcdir))
    links = [("Binder", binder_url, "logo_binder.svg"), ("Colab", colab_url, "logo_colab.png")]
    buttons.insert(0, {
        "type": "group",
        "tooltip": "Launch interactive content",
        "icon": "fas fa-rocket",
        "label": "launch-buttons",
        "buttons": [
            {"type": "link", "text": text, "url": url,
             "tooltip": f"在 {text} 中打开" if chinese_edition(app) else f"Launch on {text}",
             "icon": f"_static/images/{icon}"}
            for text, url, icon in links
        ],
    })  # fmt: skip


def _exercise_download(app, pagename, templatename, context, doctree) -> None:
    """The download menu of an exercise page offers the reader's notebook
    (``exercises/<slug>.ipynb``, copied next to the HTML by :func:`_copy_reader_notebooks`), not
    the page's generated markdown source."""
    match = EXERCISE_PAGE.fullmatch(pagename)
    pathto = context.get("pathto")
    if not match or pathto is None:
        return
    chinese = chinese_edition(app)
    for group in context.get("header_buttons") or []:
        if group.get("label") != "download-buttons":
            continue
        for button in group["buttons"]:
            if button.get("label") == "download-source-button":
                button["url"] = pathto(f"exercises/{match['slug']}.ipynb", 1)
                button["text"] = ".ipynb"
                button["tooltip"] = ("下载练习笔记本" if chinese
                                     else "Download the exercise notebook")
                button["icon"] = "fas fa-file-arrow-down"


def _copy_reader_notebooks(app, exception) -> None:
    """The reader's notebooks (``exercises/``; the Chinese edition's ``zh/exercises/``) next to the
    HTML as ``exercises/<slug>.ipynb``: the exercise pages' download links point there."""
    if exception is not None or app.builder.format != "html":
        return
    source = ROOT / ("zh/exercises" if chinese_edition(app) else "exercises")
    target = Path(app.outdir) / "exercises"
    target.mkdir(parents=True, exist_ok=True)
    for notebook in sorted(source.glob("[0-9][0-9]_*.ipynb")):
        shutil.copyfile(notebook, target / notebook.name)


# sphinx-exercise titles an unnumbered exercise's solution "Solution to Exercise": the number is
# the exercise's label (ex-05-3 → 05.3).
SOLUTION_TITLE = re.compile(r'<p class="admonition-title">Solution to<a class="reference internal" '
                            r'href="#ex-(\d\d)-(\d+)"> Exercise</a>')


def numbered_solutions(page: str) -> str:
    return SOLUTION_TITLE.sub(r'<p class="admonition-title">Solution to '
                              r'<a class="reference internal" href="#ex-\1-\2">Exercise \1.\2</a>',
                              page)


class AuthorYearLabels(BaseLabelStyle):
    """Labels "Surname, 2017", "Surname and Other, 2017" or "Surname et al., 2017"."""

    AND, ET_AL = " and ", " et al."

    def format_labels(self, sorted_entries):
        for entry in sorted_entries:
            people = entry.persons.get("author") or entry.persons.get("editor") or []
            surnames = [" ".join(person.last_names) for person in people]
            if not surnames:
                names = entry.fields.get("title", entry.key)
            elif len(surnames) == 1:
                names = surnames[0]
            elif len(surnames) == 2:
                names = f"{surnames[0]}{self.AND}{surnames[1]}"
            else:
                names = f"{surnames[0]}{self.ET_AL}"
            names = names.replace("{", "").replace("}", "")
            yield f"{names}, {entry.fields.get('year', 'n.d.')}"


class AuthorYearStyle(UnsrtStyle):
    """pybtex's unsrt formatting, sorted by author, labelled by :class:`AuthorYearLabels`."""

    default_label_style = "book_author_year"
    default_sorting_style = "author_year_title"


class ChineseAuthorYearLabels(AuthorYearLabels):
    """The Chinese edition's labels: "Vaswani 等, 2017", "Bahdanau 和 Bengio, 2015"."""

    AND, ET_AL = " 和 ", " 等"


class ChineseAuthorYearStyle(AuthorYearStyle):
    default_label_style = "book_author_year_zh"


@dataclass
class ChineseAuthorYearReferences(AuthorYearReferenceStyle):
    """In-text citations of the Chinese edition, matching its labels: [Vaswani 等, 2017]."""

    person: PersonStyle = field(
        default_factory=lambda: PersonStyle(sep2=" 和 ", last_sep=" 和 ", other=" 等"))


register_plugin("pybtex.style.labels", "book_author_year", AuthorYearLabels)
register_plugin("pybtex.style.formatting", "book_author_year", AuthorYearStyle)
register_plugin("pybtex.style.labels", "book_author_year_zh", ChineseAuthorYearLabels)
register_plugin("pybtex.style.formatting", "book_author_year_zh", ChineseAuthorYearStyle)
register_bibtex_plugin("sphinxcontrib.bibtex.style.referencing", "author_year_zh",
                       ChineseAuthorYearReferences)


def setup(app):
    # MathJax's script is added per page by sphinx.ext.mathjax; page_scripts keeps it only where
    # a widget view needs the runtime. Math elsewhere is typeset at build time.
    app.set_html_assets_policy("always")
    app.add_search_language(ChineseBigramSearch)  # the Chinese edition's search
    app.add_js_file(None, body=SCROLL_TAB_STOPS_JS)
    app.add_css_file(ICONS_CSS, priority=900)  # after the theme's, which it overrides
    app.connect("build-finished", _write_icons_css)
    app.connect("doctree-read", plain_titles, priority=900)
    app.connect("doctree-resolved", figure_alt)
    app.connect("doctree-resolved", lazy_images)
    app.connect("html-page-context", meta_description)
    app.connect("html-page-context", page_scripts, priority=900)
    app.connect("builder-inited", wrap_page_render)
    app.connect("build-finished", RENDERER.close)
    # after sphinx-book-theme's own handler (priority 500) has built the header buttons
    app.connect("html-page-context", _offer_book_pdf, priority=900)
    app.connect("build-finished", _one_x_copies)
    app.connect("html-page-context", _exercise_launch_buttons, priority=502)  # after the theme's
    app.connect("html-page-context", _exercise_download, priority=900)
    app.connect("build-finished", _copy_reader_notebooks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
