"""Unit tests of the book's Sphinx extension (tools/book_html.py): plain-text titles, figure alt
text from captions, meta descriptions, icons as inline SVG, accessible markup, math at build time.
"""

from __future__ import annotations

import shutil
import sys

import pytest
from conftest import ROOT
from docutils import nodes

sys.path.insert(0, str(ROOT / "tools"))
import book_html  # noqa: E402


@pytest.mark.parametrize(
    ("tex", "text"),
    [
        (r"\sqrt{d_k}", "√dₖ"),
        (r"QK^\top", "QKᵀ"),
        (r"\frac{1}{\sqrt{d_k}}", "1/√dₖ"),
        (r"\frac{a+b}{2}", "(a+b)/2"),
        (r"d_{\text{model}}", "d_model"),
        (r"\mathrm{softmax}(x)_i", "softmax(x)ᵢ"),
        (r"O(T^2)", "O(T²)"),
        (r"\alpha_{ij}", "αᵢⱼ"),
        (r"n \times d", "n × d"),
        (r"x \in \mathbb{R}^{d}", "x ∈ R^d"),
    ],
)
def test_tex_to_text_reads_math_as_plain_unicode(tex, text):
    assert book_html.tex_to_text(tex) == text


def test_titles_lose_their_tex():
    title = nodes.title("", "4. Why divide by ", nodes.math("", r"\sqrt{d_k}"))
    book_html._plain_copy(title)
    assert title.astext() == "4. Why divide by √dₖ"
    assert not list(title.findall(nodes.math))


@pytest.mark.parametrize(
    ("caption", "sentence"),
    [
        ("Why scores are divided (after source 000's fig. 12.2). One query, 16 keys.",
         "Why scores are divided (after source 000's fig. 12.2)."),
        ("Fig. 4.1 Entropy of rows, e.g. five rows. Then more.", "Entropy of rows, e.g. five rows."),
        ("No full stop at all", "No full stop at all"),
    ],
)
def test_first_sentence_of_a_caption(caption, sentence):
    assert book_html.first_sentence(caption) == sentence


def test_figure_without_alt_gets_its_caption_sentence():
    document = nodes.document(None, None)
    figure = nodes.figure()
    figure += nodes.image(uri="a.png")
    figure += nodes.caption("", "The weights of one head. Brighter is larger.")
    described = nodes.figure()
    described += nodes.image(uri="b.png", alt="Written for it.")
    described += nodes.caption("", "A caption. More.")
    document += [figure, described]
    book_html.figure_alt(None, document, "page")
    assert figure.next_node(nodes.image)["alt"] == "The weights of one head."
    assert described.next_node(nodes.image)["alt"] == "Written for it."


def test_images_load_lazily_in_the_html():
    """Every image is marked lazy and docutils' HTML writer (the one Sphinx extends) renders the
    attribute; an image that says otherwise keeps its own setting."""
    from docutils.core import publish_from_doctree
    from docutils.utils import new_document

    document = new_document("page")
    document += nodes.image(uri="a.png", alt="A figure.")
    document += nodes.image(uri="b.png", alt="Another.", loading="embed")
    book_html.lazy_images(None, document, "page")
    html = publish_from_doctree(document, writer_name="html5").decode()
    assert html.count('loading="lazy"') == 1 and 'src="a.png"' in html


def test_description_is_the_first_real_paragraph():
    document = nodes.document(None, None)
    note = nodes.note()
    note += nodes.paragraph("", "A note that is long enough to be a description, but is a note.")
    document += nodes.paragraph("", "Short.")
    document += note
    long = "The attention formula divides every score by a number; " * 5
    document += nodes.paragraph("", long)
    description = book_html.description_of(document)
    assert description.startswith("The attention formula divides")
    assert len(description) <= 160 and description.endswith("…")


def test_icons_become_inline_svg():
    page = ('<script defer src="_static/scripts/fontawesome.js?digest=1"></script>'
            '<button aria-label="Play"><i class="fa fa-play fa-flip-horizontal"></i></button>'
            '<i class="theme-switch fa-solid fa-sun fa-lg" data-mode="light" title="Light"></i>'
            '<span class="fab fa-github"></span>')
    out = book_html.inline_icons(page)
    assert "fontawesome.js" not in out and "<i " not in out and "<span" not in out
    assert out.count('<svg class="svg-inline--fa') == 3 and out.count("<use href=") == 3
    assert out.count("<symbol ") == 3  # each drawing once, in the page's sprite
    assert 'data-mode="light"' in out and 'title="Light"' not in out
    assert out.count('aria-hidden="true"') == 4  # the three icons and the sprite


def test_accessible_markup():
    page = ('<a class="reference internal" href="a.html">1. From text</a><details><summary>'
            '<span class="toctree-toggle" role="presentation"></span></summary></details>'
            '<summary aria-label="Toggle hidden content"><p>Show code cell source</p></summary>'
            '<table><thead><tr><th class="head"></th><th class="head"><p>x</p></th></tr></thead>'
            '</table>')
    out = book_html.accessible_markup(page)
    assert '<span class="visually-hidden">Sections of 1. From text</span>' in out
    assert book_html.accessible_markup(out) == out  # idempotent
    assert "Toggle hidden content" not in out
    assert "<td></td>" in out and '<th class="head"><p>x</p></th>' in out


@pytest.mark.skipif(shutil.which("node") is None, reason="node is part of `make setup`")
def test_math_is_typeset_with_assistive_mathml():
    page = ('<html><head></head><body><p><span class="math notranslate nohighlight">'
            r"\(\sqrt{d_k}\)</span></p>"
            '<div class="math notranslate nohighlight">\n\\[\\begin{split}\\begin{aligned}'
            "a &amp;= b \\\\\nc &amp;= d\n\\end{aligned}\\tag{1.1}\\end{split}\\]</div>"
            "</body></html>")
    out = book_html.render_math(page, "../fonts", "page")
    book_html.RENDERER.close()
    assert out.count("<mjx-container") == 2 and out.count("<mjx-assistive-mml") == 2
    assert "<msqrt>" in out and "\\sqrt" not in out
    assert '<style id="book-math-css">' in out and 'url("../fonts/MathJax_' in out
    css = out[out.index('<style id="book-math-css">'):out.index("</style>")]
    assert css.count("{") == css.count("}"), "unbalanced math CSS"
    assert css.endswith("font-size:calc(1ex / 0.442)}")


@pytest.mark.parametrize(
    ("tex", "markup"),
    [
        ("W_O", "W<sub>O</sub>"),
        (r"\sqrt{d_k}", "√dₖ"),
        ("T_q = 3", "T<sub>q</sub> = 3"),
        (r"d_{\text{model}}", "d<sub>model</sub>"),
        ("a < b_O", "a &lt; b<sub>O</sub>"),
    ],
)
def test_contents_entries_use_sub_and_superscripts_where_unicode_has_none(tex, markup):
    assert book_html.tex_to_html(tex) == markup
    assert "\ue000" not in book_html.tex_to_text(tex)  # plain text keeps TeX's "_" there


def test_toc_entries_get_markup_titles_stay_plain():
    title = nodes.title("", "each head writes through its slice of ", nodes.math("", "W_O"))
    entry = title.deepcopy()
    book_html._plain_copy(title)
    book_html._plain_copy(entry, markup=True)
    assert title.astext() == "each head writes through its slice of W_O"
    raw = entry.next_node(nodes.raw)
    assert raw is not None and "W<sub>O</sub>" in raw.astext()


SETUP_PAGE = (
    '<p>hook</p><div class="cell tag_hide-cell docutils container">\n'
    '<details class="admonition hide above-input">\n<summary>\n'
    '<p class="collapsed admonition-title">Show code cell content</p>\n</summary>\n'
    '<div class="cell_input docutils container"><div class="highlight"><pre>%pip</pre></div>'
    "</div>\n</details>\n</div>\n"
    '<div class="cell tag_hide-input docutils container">\n'
    '<details class="admonition hide above-input">\n<summary>\n'
    '<p class="collapsed admonition-title">Show code cell source</p>\n</summary>\n'
    '<div class="cell_input docutils container"><div class="highlight"><pre>import torch</pre>'
    "</div></div>\n</details>\n</div>\n<section>next</section>"
)


def test_setup_and_imports_become_one_named_fold():
    out = book_html.one_setup_fold(SETUP_PAGE, chinese=False)
    assert "Show code cell" not in out
    assert out.count("<details") == 1 and out.count("</details>") == 1
    assert out.count("<div") == out.count("</div>") == SETUP_PAGE.count("<div")
    fold = out[out.index("<details"):out.index("</details>")]
    assert "%pip" in fold and "import torch" in fold and "installs tformer" in fold
    assert out.startswith("<p>hook</p>") and out.endswith("<section>next</section>")
    assert "模块" in book_html.one_setup_fold(SETUP_PAGE, chinese=True)
    assert book_html.one_setup_fold("<p>no cells</p>", chinese=False) == "<p>no cells</p>"


def test_solutions_are_titled_with_their_number():
    page = ('<p class="admonition-title">Solution to<a class="reference internal" '
            'href="#ex-05-3"> Exercise</a></p>')
    out = book_html.numbered_solutions(page)
    assert "Solution to <a" in out and ">Exercise 05.3</a>" in out
