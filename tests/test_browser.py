"""Every page of the built book, opened in headless Chromium as a reader would, with no network.

Per page: no JavaScript errors from the book's own scripts and no failed or outgoing requests;
MathJax produced its output and no raw TeX (delimiters, or a command such as \\sqrt{) remains
in the prose; every image loaded; notebook pages
have Colab and Binder launch buttons; scrubbable animations respond to their slider and
ipywidgets render without a kernel and no slider appears outside a player (a slider with no kernel
behind it would be dead); every figure has a caption; no display equation is cut off on the left
(a too-wide equation must scroll from its left edge); in dark mode, figure captions use the body
text colour, output images sit on a light backing so black-on-transparent plots stay readable, and
code inside HTML outputs follows their (dark) text colour;
the page weighs at most 1.5 MB as transferred (gzip), its HTML at most 600 KB and its
own content (HTML, inlined animations, figures) at most 3 MB uncompressed. Page weights are
written to _build/page-weights.json (bench/ reports the heaviest).

Accessibility (WCAG 2.1 AA, issue 15), in light and dark mode: axe-core (pinned in
package-lock.json, injected from node_modules) finds no violation of the wcag2a, wcag2aa, wcag21a,
wcag21aa and best-practice rules (in dark mode, switched on with the theme's button in the same
page, the colour rules `color-contrast` and `link-in-text-block` run again); every image has a
non-empty alt text that is not a file name (or is marked decorative); the <title> and the
navigation are plain text, the page has a meta description, one h1 and no skipped heading level;
math is typeset at build time (no MathJax runtime unless a widget view needs it). A scrubbable
player is driven with the keyboard alone, and Lighthouse scores accessibility and SEO at 100 on two
pages served from localhost.

Both editions: every page is tested in English (``_build/html/``) and in Chinese
(``_build/html/zh/``, issue 17); on Chinese pages the launch buttons open ``zh/book/…``, the prose
is drawn in a CJK font, and the language switch (a link to the same page in the other edition)
is visible, named and keyboard-reachable at desktop and 390 px phone width in light and dark mode.

Phones and tablets (issue 25): every page of both editions at 360, 390 and 800 px scrolls no
page sideways, stacks margin notes at the text column's width below 992 px, shows a scroll cue on
display math and tables wider than the column, and fits every player (and at 320 px); at 390 and
800 px, light and dark, ☰ and the contents button open their panels on screen, links in them
navigate and close them, and the keyboard does the same.
"""

from __future__ import annotations

import fcntl
import gzip
import json
import re
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
from screenshots import CHROMIUM, CHROMIUM_ARGS  # noqa: E402  (one definition of the flags)
from setup_cell import repository  # noqa: E402
from toc import source_of, toc_docnames  # noqa: E402

pytestmark = pytest.mark.book

MAX_PAGE_BYTES = 3 * 1024 * 1024  # a page's own content (HTML, animations, figures), raw
MAX_TRANSFER_BYTES = int(1.5 * 1024 * 1024)  # everything a first visit downloads, gzip
MAX_HTML_BYTES = 600 * 1024  # the page's own HTML file
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
WEIGHTS_FILE = ROOT / "_build" / "page-weights.json"

# Text nodes outside code, scripts and MathJax output that still hold TeX delimiters.
RAW_TEX_JS = r"""() => {
    const skip = "PRE, CODE, SCRIPT, STYLE, MJX-CONTAINER, TEXTAREA, .highlight";
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const found = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (node.parentElement && node.parentElement.closest(skip)) continue;
        if (node.parentElement && node.parentElement.getClientRects().length === 0) continue;
        const text = node.textContent;
        if (text.includes("\\(") || text.includes("\\[") || text.includes("$$") ||
            /\\[A-Za-z]+\{/.test(text)) {
            found.push(text.trim().slice(0, 80));
        }
    }
    return found;
}"""

WAIT_JS = r"""async () => {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
        await MathJax.startup.promise;
    }
    const images = Array.from(document.images);
    images.forEach((img) => { img.loading = "eager"; });
    await Promise.all(images.map((img) => img.complete ? null :
        new Promise((done) => { img.onload = img.onerror = done; })));
}"""

SCRUB_JS = r"""() => {
    const results = [];
    document.querySelectorAll(".animation").forEach((player) => {
        const slider = player.querySelector("input[type=range]");
        const frame = player.querySelector("img");
        if (!slider || !frame) { results.push("player without slider or frame"); return; }
        const before = frame.src;
        slider.value = slider.max;
        slider.dispatchEvent(new Event("input"));
        results.push(frame.src !== before ? "ok" : "slider did not change the frame");
    });
    return results;
}"""


# Display equations whose left edge lies left of their box (centred overflow: unreachable by
# scrolling), figures without a caption, and sliders that are not part of a scrubbable player.
LAYOUT_JS = r"""() => {
    const cut = [];
    document.querySelectorAll("div.math").forEach((box) => {
        const eq = box.querySelector("mjx-container");
        if (eq && eq.getBoundingClientRect().left < box.getBoundingClientRect().left - 1) {
            cut.push(box.textContent.trim().slice(0, 60));
        }
    });
    const uncaptioned = Array.from(document.querySelectorAll("article figure"))
        .filter((f) => !(f.querySelector("figcaption") && f.querySelector("figcaption").textContent.trim()))
        .map((f) => (f.querySelector("img") || f).outerHTML.slice(0, 80));
    const sliders = Array.from(document.querySelectorAll(
        "article input[type=range], article .widget-slider")).filter((s) => !s.closest(".animation"))
        .length;
    return {cut, uncaptioned, sliders};
}"""

# Dark mode: captions in the body text colour (not the theme's muted grey), and every output image
# on a non-transparent backing.
DARK_JS = r"""() => {
    const body = getComputedStyle(document.querySelector("article") || document.body).color;
    const dim = Array.from(document.querySelectorAll("article figcaption .caption-text"))
        .filter((c) => getComputedStyle(c).color !== body).map((c) => c.textContent.slice(0, 50));
    const bare = Array.from(document.querySelectorAll("article .cell_output img"))
        .filter((i) => !i.closest(".animation"))
        .filter((i) => ["rgba(0, 0, 0, 0)", "transparent"].includes(getComputedStyle(i).backgroundColor))
        .map((i) => i.src.slice(-50));
    const faint = Array.from(document.querySelectorAll("article .cell_output .text_html code"))
        .filter((c) => getComputedStyle(c).color !== getComputedStyle(c.closest(".text_html")).color)
        .map((c) => c.textContent.slice(0, 30));
    return {mode: document.documentElement.dataset.theme, dim, bare, faint};
}"""


AXE_JS = r"""async (tags) => {
    // preload: false — pages are opened from file://, where axe may not re-fetch stylesheets
    // (bench/page_quality.py runs axe on pages served over HTTP, with the stylesheet checks).
    const result = await axe.run(document, {runOnly: {type: "tag", values: tags}, preload: false});
    return result.violations.map((v) => `${v.id} (${v.impact}): ` + v.nodes.slice(0, 3)
        .map((n) => n.target.join(" ")).join(" | ") + (v.nodes.length > 3 ?
        ` … ${v.nodes.length} nodes` : ""));
}"""

# Images without a text alternative: no alt, an empty alt on a non-decorative image, or an alt
# that is a file name (docutils' fallback).
ALT_JS = r"""() => Array.from(document.images).filter((img) => {
    const decorative = img.getAttribute("role") === "presentation" || img.getAttribute("role") === "none";
    const alt = (img.getAttribute("alt") || "").trim();
    if (decorative) return false;
    return !alt || /\.(png|jpe?g|svg|gif|webp)$/i.test(alt) || alt.startsWith("data:");
}).map((img) => (img.id || img.src).slice(-60))"""

OUTLINE_JS = r"""() => {
    // Headings a reader meets (the theme's print-only title copy is display: none).
    const h1 = Array.from(document.querySelectorAll("h1")).filter((h) => h.getClientRects().length).length;
    const levels = Array.from(document.querySelectorAll("article h1, article h2, article h3, " +
        "article h4, article h5, article h6")).filter((h) => h.getClientRects().length)
        .map((h) => [Number(h.tagName[1]), h.textContent.trim().slice(0, 50)]);
    const skipped = [];
    for (let i = 1; i < levels.length; i++) {
        const [previous, level] = [levels[i - 1][0], levels[i][0]];
        if (level > previous + 1) skipped.push(`h${previous} → h${level} ${levels[i][1]}`);
    }
    const nav = Array.from(document.querySelectorAll("nav, title, .prev-next-area"))
        .map((n) => n.textContent).join(" ");
    const description = document.querySelector("meta[name=description]");
    return {h1, skipped, first: levels.length ? levels[0][0] : 0,
            texInNav: /\\\(|\\\[|\\[A-Za-z]+\{|\$/.test(nav),
            title: document.title,
            description: description ? description.content : ""};
}"""

# Math typeset at build time: no Sphinx math element is left without MathJax output.
UNTYPESET_JS = r"""() => Array.from(document.querySelectorAll("span.math, div.math"))
    .filter((m) => !m.querySelector("mjx-container")).map((m) => m.textContent.slice(0, 60))"""


TRANSITIONS_DONE_JS = ("document.getAnimations()"
                       ".every((a) => !(a instanceof CSSTransition) || a.playState !== 'running')")
# The axe rules whose result depends on the colour theme (run again in dark mode).
DARK_RULES = ["color-contrast", "link-in-text-block"]
AXE_RULES_JS = AXE_JS.replace('{type: "tag", values: tags}', '{type: "rule", values: tags}')


def _axe(page) -> list[str]:
    page.add_script_tag(path=str(AXE))
    return page.evaluate(AXE_JS, AXE_TAGS)


def _pages() -> list[str]:
    return toc_docnames()


EDITIONS = ("en", "zh")


def _edition_html(edition: str, request) -> Path:
    """The edition's HTML folder (the Chinese fixture only when a Chinese page is tested)."""
    return request.getfixturevalue("zh_html" if edition == "zh" else "book_html")


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make setup`", pytrace=False)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def weights():
    recorded: dict[str, dict[str, int]] = {}
    yield recorded
    if recorded:
        WEIGHTS_FILE.parent.mkdir(exist_ok=True)
        # two book shards (BOOK_SHARD) may finish at once: read, merge and write under a lock
        with open(WEIGHTS_FILE.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            previous = json.loads(WEIGHTS_FILE.read_text()) if WEIGHTS_FILE.exists() else {}
            previous.update(recorded)
            WEIGHTS_FILE.write_text(json.dumps(previous, indent=1, sort_keys=True))


def _local_path(url: str) -> Path | None:
    parts = urlsplit(url)
    return Path(unquote(parts.path)) if parts.scheme == "file" else None


@pytest.mark.parametrize("docname", _pages())
@pytest.mark.parametrize("edition", EDITIONS)
def test_page_in_browser(edition: str, docname: str, book_html: Path, browser, weights, request):
    page_file = _edition_html(edition, request) / f"{docname}.html"
    assert page_file.exists(), f"{edition}: {docname}.html was not built"
    html_root = book_html.resolve()

    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    loaded: set[Path] = set()

    def on_console(message):
        location = message.location.get("url", "") if message.location else ""
        if message.type == "error" and (not location or location.startswith("file:")):
            errors.append(f"console error: {message.text}")

    def on_request(request):
        if request.url.startswith(("http:", "https:")):
            errors.append(f"network request: {request.url}")
        path = _local_path(request.url)
        if path is not None:
            loaded.add(path)

    page.on("pageerror", lambda error: errors.append(f"uncaught JS error: {error}"))
    page.on("console", on_console)
    page.on("request", on_request)
    page.on("requestfailed", lambda request: errors.append(f"failed request: {request.url}"))
    try:
        page.goto(page_file.resolve().as_uri(), wait_until="load")
        page.evaluate(WAIT_JS)
        page.wait_for_timeout(200)  # let widget managers finish rendering

        # Math: typeset at build time (the MathJax runtime only where a widget view needs it),
        # and no raw delimiters left in the prose.
        views = page.locator("script[type='application/vnd.jupyter.widget-view+json']").count()
        loads_mathjax = page.locator("script[src*='mathjax/tex-chtml.js']").count() > 0
        assert not loads_mathjax or views, "MathJax runtime loaded on a page without widget views"
        if loads_mathjax:
            assert page.locator("mjx-container").count() > 0, "MathJax produced no output"
        else:
            untypeset = page.evaluate(UNTYPESET_JS)
            assert not untypeset, f"math not typeset at build time: {untypeset[:5]}"
        widget_manager = page.locator("script[src*='widgets/embed.js']").count()
        assert not widget_manager or views, "widget manager loaded on a page without widget views"
        raw = page.evaluate(RAW_TEX_JS)
        assert not raw, f"raw TeX left on the page: {raw[:5]}"

        # Images.
        broken = page.evaluate(
            "() => Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0))"
            ".map(i => i.src.slice(0, 100))"
        )
        assert not broken, f"images that did not load: {broken}"
        no_alt = page.evaluate(ALT_JS)
        assert not no_alt, f"images without alt text: {no_alt}"
        # Icons are inline SVG or CSS masks (tools/book_html.py): no page fetches Font Awesome's
        # webfonts (157 KB for the solid style alone).
        icon_fonts = sorted(path.name for path in loaded if "fontawesome" in path.parts)
        assert not icon_fonts, f"icon webfonts loaded: {icon_fonts}"

        # Plain-text title and navigation, a description, a correct heading outline.
        outline = page.evaluate(OUTLINE_JS)
        assert outline["h1"] == 1, f"{outline['h1']} h1 headings (one expected)"
        assert outline["first"] == 1, "the article does not start with its h1"
        assert not outline["skipped"], f"skipped heading levels: {outline['skipped']}"
        assert not outline["texInNav"], f"TeX in the title or navigation: {outline['title']}"
        assert "\\" not in outline["title"] and "$" not in outline["title"], outline["title"]
        assert len(outline["description"]) >= 40, f"meta description: {outline['description']!r}"

        # Launch buttons on notebook pages.
        source = source_of(docname)
        if source is not None and source.suffix == ".ipynb":
            url, branch = repository()
            repo = urlsplit(url).path.strip("/")
            notebook = f"{'zh/' if edition == 'zh' else ''}{docname}.ipynb"
            colab = f"https://colab.research.google.com/github/{repo}/blob/{branch}/{notebook}"
            assert page.locator(f"a[href='{colab}']").count() > 0, "no Colab launch button"
            binder = page.locator(f"a[href^='https://mybinder.org/v2/gh/{repo}/{branch}']")
            assert binder.count() > 0, "no Binder launch button"
            assert notebook in (binder.first.get_attribute("href") or "")

        # Interactive parts respond without a kernel.
        scrubbed = page.evaluate(SCRUB_JS)
        assert all(result == "ok" for result in scrubbed), scrubbed
        if views:
            rendered = page.locator(".jupyter-widgets.widget-inline-hbox, .jupyter-widgets").count()
            assert rendered >= views, f"{views} widget views but {rendered} rendered widgets"

        layout = page.evaluate(LAYOUT_JS)
        assert not layout["cut"], f"display equations cut off on the left: {layout['cut']}"
        assert not layout["uncaptioned"], f"figures without a caption: {layout['uncaptioned']}"
        assert not layout["sliders"], f"{layout['sliders']} slider(s) outside a player (dead)"

        violations = _axe(page)
        assert not violations, "axe (light mode):\n" + "\n".join(violations)

        # Dark mode, switched on as a reader does it, with the theme's own button (a page opened
        # with the choice already stored is checked by the language-switch and panel tests). Only
        # the rules that depend on colours run again: the rest of axe reads no colour.
        for _ in range(3):
            if page.evaluate("document.documentElement.dataset.theme") == "dark":
                break
            page.locator(".theme-switch-button:visible").first.click()
        page.mouse.move(0, 0)  # the button's tooltip is not part of the page being read
        # the theme's colour transitions (0.15 s) finish before anything reads a colour
        page.wait_for_function(TRANSITIONS_DONE_JS)
        found = page.evaluate(DARK_JS)
        assert found["mode"] == "dark", f"the theme button did not switch dark mode on: {found['mode']}"
        assert not found["dim"], f"dark mode: captions not in the text colour: {found['dim']}"
        assert not found["bare"], f"dark mode: output images on a transparent background: {found['bare']}"
        assert not found["faint"], f"dark mode: code in HTML outputs off the text colour: {found['faint']}"
        violations = page.evaluate(AXE_RULES_JS, DARK_RULES)
        assert not violations, "axe (dark mode):\n" + "\n".join(violations)

        assert not errors, "\n".join(errors)
    finally:
        context.close()

    # Page weight. What a reader downloads: the HTML plus everything it loaded, gzip-compressed as
    # any static host serves text (the theme alone is ~2.4 MB uncompressed, ~0.9 MB on the wire).
    # What the page itself adds (its HTML, inlined animations and its own figures) must stay within
    # the budget even uncompressed.
    files = {page_file.resolve(), *(path for path in loaded if path.is_file())}
    own = {path for path in files if "_static" not in path.relative_to(html_root).parts}
    weight = {
        "raw": sum(path.stat().st_size for path in files),
        "gzip": sum(len(gzip.compress(path.read_bytes(), 6)) for path in files),
        "own_raw": sum(path.stat().st_size for path in own),
        "html": page_file.stat().st_size,
    }
    weights[("zh/" if edition == "zh" else "") + docname] = weight
    outside = [str(path) for path in files if html_root not in path.parents]
    assert not outside, f"page loaded files from outside the book: {outside}"
    assert weight["gzip"] <= MAX_TRANSFER_BYTES, (
        f"{docname}: {weight['gzip'] / 2**20:.2f} MB transferred (gzip) > 1.5 MB: {weight}"
    )
    assert weight["html"] <= MAX_HTML_BYTES, (
        f"{docname}: its HTML weighs {weight['html'] / 1024:.0f} KB > 600 KB"
    )
    assert weight["own_raw"] <= MAX_PAGE_BYTES, (
        f"{docname}: its HTML, animations and figures weigh {weight['own_raw'] / 1e6:.2f} MB > 3 MB"
    )


def _first_page_with_player(book_html: Path) -> str:
    for name in _pages():
        page_file = book_html / f"{name}.html"
        if page_file.exists() and 'class="animation"' in page_file.read_text(encoding="utf-8"):
            return name
    pytest.fail("no page of the book has a scrubbable player", pytrace=False)


def test_player_works_with_the_keyboard_alone(book_html: Path, browser):
    """Tab to a player's slider, press the arrow keys: the frame, its alt text and the slider's
    spoken value change; End reaches the last frame; the Play button is reachable and named."""
    docname = _first_page_with_player(book_html)
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    try:
        page = context.new_page()
        page.goto((book_html / f"{docname}.html").resolve().as_uri(), wait_until="load")
        page.evaluate(WAIT_JS)
        player = page.locator(".animation").first
        slider = player.locator("input[type=range]")
        frame = player.locator("img")
        assert slider.get_attribute("aria-label"), "the player's slider has no label"
        before_src, before_alt = frame.get_attribute("src"), frame.get_attribute("alt")
        assert before_alt and "frame 1 of" in before_alt, f"frame alt text: {before_alt!r}"
        slider.focus()
        assert page.evaluate("() => document.activeElement.type") == "range"
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        assert frame.get_attribute("src") != before_src, "ArrowRight did not change the frame"
        assert "frame 3 of" in frame.get_attribute("alt"), frame.get_attribute("alt")
        assert "frame 3 of" in (slider.get_attribute("aria-valuetext") or "")
        page.keyboard.press("End")
        last = int(slider.get_attribute("max"))
        assert f"frame {last + 1} of {last + 1}" in frame.get_attribute("alt")
        page.keyboard.press("Home")
        assert frame.get_attribute("src") == before_src, "Home did not return to the first frame"
        # The buttons follow the slider in the tab order and are named.
        page.keyboard.press("Tab")
        focused = page.evaluate("() => document.activeElement.getAttribute('aria-label')")
        assert focused, "the control after the slider has no name"
        play = player.locator("button[aria-label=Play]")
        play.focus()
        page.keyboard.press("Enter")
        page.wait_for_function(
            "(img) => !img.alt.includes('frame 1 of')", arg=frame.element_handle(), timeout=10_000
        )  # fails (times out) if Enter on Play did not play
    finally:
        context.close()


LIGHTHOUSE = ROOT / "node_modules" / ".bin" / "lighthouse"
LIGHTHOUSE_PAGES = ["book/intro.html", "book/04_scaling.html", "zh/book/04_scaling.html"]


@pytest.mark.parametrize("page_name", LIGHTHOUSE_PAGES)
def test_lighthouse_accessibility_and_seo(book_html: Path, page_name: str, tmp_path: Path, request):
    """Lighthouse (pinned 12.2.3) scores accessibility and SEO at 100 on a page served from
    localhost (the whole book's four scores are measured by bench/page_quality.py)."""
    import functools
    import http.server
    import os
    import subprocess
    import threading

    if not LIGHTHOUSE.exists():
        pytest.fail(f"{LIGHTHOUSE} is missing: run `make setup`", pytrace=False)
    if page_name.startswith("zh/"):
        request.getfixturevalue("zh_html")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(book_html))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    report = tmp_path / "report.json"
    try:
        subprocess.run(
            [str(LIGHTHOUSE), f"http://127.0.0.1:{server.server_address[1]}/{page_name}",
             "--preset=desktop", "--quiet", "--output=json", f"--output-path={report}",
             "--only-categories=accessibility,seo",
             "--chrome-flags=" + " ".join(["--headless", *CHROMIUM_ARGS])],
            check=True, env={**os.environ, "CHROME_PATH": CHROMIUM}, timeout=300,
        )
    finally:
        server.shutdown()
    data = json.loads(report.read_text())
    for category in ("accessibility", "seo"):
        score = data["categories"][category]["score"]
        failed = [ref["id"] for ref in data["categories"][category]["auditRefs"]
                  if ref["weight"] and data["audits"][ref["id"]].get("score") not in (None, 1)]
        assert score == 1, f"{page_name}: Lighthouse {category} {score * 100:.0f}: {failed}"


# --- the two editions -------------------------------------------------------------------------------

SWITCH_JS = r"""() => {
    const link = document.querySelector("a.book-language-switch");
    if (!link) return null;
    const box = link.getBoundingClientRect();
    const style = getComputedStyle(link);
    return {href: link.href, lang: link.lang, hreflang: link.hreflang,
            name: (link.textContent || "").trim(), title: link.title,
            left: box.left, right: box.right, top: box.top, width: box.width, height: box.height,
            visible: style.visibility !== "hidden" && style.display !== "none" && box.width > 0,
            viewport: window.innerWidth};
}"""

SWITCH_PAGES = [("en", "book/intro"), ("en", "book/05_masks"), ("zh", "book/05_masks"),
                ("zh", "book/exercises/05_masks"), ("zh", "book/glossary")]


@pytest.mark.parametrize("edition, docname", SWITCH_PAGES)
@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("mode", ["light", "dark"])
def test_language_switch(edition: str, docname: str, width: int, mode: str, book_html: Path,
                         zh_html: Path, browser):
    """The link to the same page in the other edition: visible inside the viewport, named in its
    own language (lang/hreflang), reached with the Tab key, and it opens that page."""
    html, other = (zh_html, book_html) if edition == "zh" else (book_html, zh_html)
    context = browser.new_context(viewport={"width": width, "height": 844}, color_scheme=mode)
    context.add_init_script(f"localStorage.setItem('mode', '{mode}'); "
                            f"localStorage.setItem('theme', '{mode}');")
    try:
        page = context.new_page()
        page.goto((html / f"{docname}.html").resolve().as_uri(), wait_until="load")
        switch = page.evaluate(SWITCH_JS)
        assert switch, "no language switch on the page"
        want = "en" if edition == "zh" else "zh-CN"
        assert switch["lang"] == want and switch["hreflang"] == want, switch
        assert switch["name"] == ("English" if edition == "zh" else "中文"), switch
        assert switch["visible"] and switch["width"] >= 24 and switch["height"] >= 24, switch
        assert switch["left"] >= 0 and switch["right"] <= switch["viewport"], (
            f"the switch does not fit at {width} px: {switch}")
        assert _local_path(switch["href"]) == (other / f"{docname}.html").resolve()
        for _ in range(200):  # keyboard: Tab until the switch has the focus
            page.keyboard.press("Tab")
            if page.evaluate("() => document.activeElement.classList.contains("
                             "'book-language-switch')"):
                break
        else:
            pytest.fail("the language switch is not reached with the Tab key")
        with page.expect_navigation(wait_until="load", timeout=15_000):
            page.keyboard.press("Enter")
        assert _local_path(page.url) == (other / f"{docname}.html").resolve()
        assert page.evaluate("() => document.documentElement.lang") == want
    finally:
        context.close()


CJK_FONTS = ("WenQuanYi", "Noto Sans CJK", "Noto Serif CJK", "Source Han", "Droid Sans Fallback")


@pytest.mark.parametrize("docname", ["book/intro", "book/05_masks", "book/glossary"])
def test_chinese_pages_are_drawn_in_a_cjk_font(docname: str, zh_html: Path, browser):
    """The fonts Chromium actually used for the first plain paragraph of a Chinese page
    (DevTools' CSS.getPlatformFontsForNode, which counts only the node's own text, so the paragraph
    has no emphasis: an emphasis's Chinese characters sit in child spans) include a CJK font for
    most of its characters."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    try:
        page = context.new_page()
        page.goto((zh_html / f"{docname}.html").resolve().as_uri(), wait_until="load")
        cdp = context.new_cdp_session(page)
        cdp.send("DOM.enable")
        cdp.send("CSS.enable")
        root = cdp.send("DOM.getDocument")["root"]["nodeId"]
        node = cdp.send("DOM.querySelector", {"nodeId": root,
                                                "selector": "article p:not(:has(em))"})["nodeId"]
        assert node, "no paragraph in the article"
        fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
        cjk = sum(f["glyphCount"] for f in fonts if f["familyName"].startswith(CJK_FONTS))
        total = sum(f["glyphCount"] for f in fonts)
        assert total and cjk / total > 0.3, f"fonts used: {fonts}"
    finally:
        context.close()


@pytest.mark.parametrize("query, page", [("掩码", "book/05_masks"), ("旋转位置嵌入", "book/06_positions")])
def test_chinese_search_finds_chinese_words(query: str, page: str, zh_html: Path, browser):
    """The Chinese edition's search page finds a Chinese word (Sphinx indexes Chinese only with
    jieba; tools/book_html.py indexes character bigrams and splits the query the same way)."""
    from urllib.parse import quote

    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    try:
        tab = context.new_page()
        tab.goto((zh_html / "search.html").resolve().as_uri() + f"?q={quote(query)}",
                 wait_until="load")
        tab.wait_for_selector("#search-results ul.search li", timeout=20_000)
        hits = tab.eval_on_selector_all("#search-results ul.search li a",
                                        "(links) => links.map((a) => a.href)")
        assert any(f"{page}.html" in hit for hit in hits), hits[:10]
    finally:
        context.close()


# --- phones and tablets (issue 25) ------------------------------------------------------------

PHONE_WIDTHS = (360, 390, 800)
SIDEBAR_BREAKPOINT = 992  # below it the sidebars are panels opened from the article header
PLAYER_WIDTH = 320

# At the current width: the page's scroll width and what sticks out of the viewport (outermost
# elements only; what a scrolling box hides is not the page's overflow); margin notes that do not
# take the text column's width below the breakpoint; boxes that scroll sideways (display math,
# tables) without the scroll cue or wider than the viewport; players whose controls do not fit
# them (each held to `playerWidth` px if given: the narrowest column a player must fit).
FIT_JS = r"""async ([breakpoint, playerWidth]) => {
    for (let i = 0; i < 2; i++) await new Promise(requestAnimationFrame);  // the resize laid out
    const vw = innerWidth, found = {scroll: document.documentElement.scrollWidth, inner: vw,
        out: [], notes: [], cues: [], players: [], playerCount: 0};
    const clips = (el) => getComputedStyle(el).overflowX !== "visible";
    if (found.scroll > vw) {
        for (const el of document.querySelectorAll("body *")) {
            const r = el.getBoundingClientRect();
            if (!r.width || r.right <= vw + 0.5) continue;
            let parent = el.parentElement, inner = false;
            for (; parent; parent = parent.parentElement) {
                if (parent.getBoundingClientRect().right > vw + 0.5 || clips(parent)) { inner = true; break; }
            }
            if (!inner) found.out.push(`${el.tagName.toLowerCase()}.${String(el.className.baseVal ??
                el.className).split(" ")[0]} ${Math.round(r.left)}–${Math.round(r.right)} px`);
        }
    }
    const article = document.querySelector("article.bd-article");
    if (!article) return found;
    if (vw < breakpoint) {
        article.querySelectorAll("aside.margin, div.margin, .cell.tag_margin").forEach((note) => {
            const column = note.parentElement, style = getComputedStyle(column);
            const width = column.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
            const box = note.getBoundingClientRect();
            if (getComputedStyle(note).float !== "none" || Math.abs(box.width - width) > 1) {
                found.notes.push(`${note.textContent.trim().slice(0, 30)}: ${Math.round(box.width)} px ` +
                                 `in a ${Math.round(width)} px column`);
            }
        });
    }
    article.querySelectorAll("div.math, .pst-scrollable-table-container").forEach((box) => {
        if (box.scrollWidth <= box.clientWidth + 1) return;
        const style = getComputedStyle(box), r = box.getBoundingClientRect();
        // math: shadows behind it (background gradients); a table: a shadow on top at the right
        // edge, shown while it can scroll right (it starts at the left)
        const after = getComputedStyle(box, "::after");
        const cue = box.matches("div.math") ? style.backgroundImage.includes("gradient") :
            box.scrollLeft === 0 && after.content !== "none" && after.opacity === "1";
        if (!["auto", "scroll"].includes(style.overflowX) || !cue || r.right > vw + 0.5) {
            found.cues.push(box.textContent.trim().slice(0, 40));
        }
    });
    article.querySelectorAll(".animation").forEach((player) => {
        found.playerCount += 1;
        if (playerWidth) player.style.width = `${playerWidth}px`;
        const r = player.getBoundingClientRect();
        const output = player.closest(".output") || player.parentElement;
        const parts = Array.from(player.querySelectorAll("img, input, button, label"))
            .filter((part) => part.getClientRects().length).filter((part) => {
                const p = part.getBoundingClientRect();
                return p.left < r.left - 0.5 || p.right > r.right + 0.5;
            });
        if (parts.length || output.scrollWidth > output.clientWidth + 1 ||
            player.scrollWidth > player.clientWidth + 1) {
            found.players.push(`${parts.length} controls outside the player ` +
                               `(${Math.round(r.width)} px wide, ${player.scrollWidth} px of content)`);
        }
        player.style.width = "";
    });
    return found;
}"""


@pytest.mark.parametrize("edition", EDITIONS)
def test_every_page_fits_phones_and_tablets(edition: str, browser, request):
    """Every page at 360, 390 and 800 px: nothing scrolls sideways (scrollWidth ≤ innerWidth);
    below 992 px margin notes stack at the text column's width; display math and tables wider
    than the column scroll inside their own box, which shows the scroll cue; every scrubbable
    player fits its column with all its controls, and at 360 px fits 320 px (the player held to
    that width). One tab per edition, each page loaded once and resized."""
    html = _edition_html(edition, request)
    problems: list[str] = []
    players = 0
    context = browser.new_context(viewport={"width": max(PHONE_WIDTHS), "height": 844})
    try:
        page = context.new_page()
        for docname in _pages():
            page.set_viewport_size({"width": max(PHONE_WIDTHS), "height": 844})
            page.goto((html / f"{docname}.html").resolve().as_uri(), wait_until="load")
            for width in sorted(PHONE_WIDTHS, reverse=True):
                page.set_viewport_size({"width": width, "height": 844})
                narrowest = width == min(PHONE_WIDTHS)
                found = page.evaluate(FIT_JS, [SIDEBAR_BREAKPOINT,
                                               PLAYER_WIDTH if narrowest else None])
                where = f"{edition} {docname} at {width} px"
                if found["scroll"] > found["inner"]:
                    problems.append(f"{where}: scrolls sideways ({found['scroll']} > "
                                    f"{found['inner']} px): {found['out'][:4]}")
                problems += [f"{where}: margin note {note}" for note in found["notes"]]
                problems += [f"{where}: scrolling box without its cue: {cue!r}"
                             for cue in found["cues"]]
                problems += [f"{where}{f' (player at {PLAYER_WIDTH} px)' if narrowest else ''}: "
                             f"player: {player}" for player in found["players"]]
                players += found["playerCount"] if narrowest else 0
    finally:
        context.close()
    assert players >= 5, f"only {players} scrubbable players found in the {edition} edition"
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:25])


PANEL_JS = r"""(selector) => {
    const panel = document.querySelector(selector);
    if (!panel) return null;
    const box = panel.getBoundingClientRect();
    const links = Array.from(panel.querySelectorAll("a[href]")).filter((a) => a.getClientRects().length);
    return {open: panel.open, left: box.left, right: box.right, width: box.width,
            height: box.height, links: links.length, viewport: innerWidth,
            visible: panel.open && getComputedStyle(panel).visibility !== "hidden" && box.width > 0};
}"""
PANELS = {"primary": "#pst-primary-sidebar-modal", "secondary": "#pst-secondary-sidebar-modal"}


def _panel_shown(page, which: str, width: int) -> dict:
    panel = page.evaluate(PANEL_JS, PANELS[which])
    assert panel and panel["visible"], f"the {which} panel did not open at {width} px: {panel}"
    assert panel["left"] >= 0 and panel["right"] <= panel["viewport"] + 0.5, (
        f"the {which} panel is not on screen at {width} px: {panel}")
    assert panel["width"] >= 200 and panel["links"] >= 5, f"the {which} panel is empty: {panel}"
    return panel


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("width", [390, 800])
@pytest.mark.parametrize("mode", ["light", "dark"])
def test_navigation_panels_open_on_phones_and_tablets(edition: str, width: int, mode: str,
                                                      book_html: Path, browser, request):
    """Below 992 px the sidebars are panels: ☰ opens the book's navigation and the contents
    button the page's sections, each on screen with its links; a link in either navigates (to
    another page; to a section, closing the panel); Escape closes a panel and gives the focus
    back to its button; Enter on the focused button opens it, and the keyboard follows a link."""
    html = _edition_html(edition, request)
    start, other = html / "book" / "05_masks.html", html / "book" / "02_soft_dictionary.html"
    context = browser.new_context(viewport={"width": width, "height": 844}, color_scheme=mode)
    context.add_init_script(f"localStorage.setItem('mode', '{mode}'); "
                            f"localStorage.setItem('theme', '{mode}');")
    try:
        page = context.new_page()
        page.goto(start.resolve().as_uri(), wait_until="load")
        assert page.evaluate("() => document.documentElement.dataset.theme") == mode
        menu = page.locator(".bd-header-article .primary-toggle")
        contents = page.locator(".bd-header-article .secondary-toggle")
        assert menu.is_visible() and contents.is_visible(), "no ☰ or contents button in the header"

        # ☰: the book's navigation; Escape closes it; Enter on the button opens it again.
        menu.click()
        _panel_shown(page, "primary", width)
        page.keyboard.press("Escape")
        assert not page.evaluate(PANEL_JS, PANELS["primary"])["open"], "Escape did not close ☰"
        page.wait_for_function(  # the theme gives the focus back when the panel has closed
            "() => document.activeElement.classList.contains('primary-toggle')", timeout=5_000)
        page.keyboard.press("Enter")
        _panel_shown(page, "primary", width)
        link = page.locator(f"{PANELS['primary']} a[href$='02_soft_dictionary.html']").first
        with page.expect_navigation(wait_until="load", timeout=15_000):
            link.click()
        assert _local_path(page.url) == other.resolve(), page.url

        # The contents button: the page's sections; a section link scrolls there and closes it.
        page.locator(".bd-header-article .secondary-toggle").click()
        _panel_shown(page, "secondary", width)
        section = page.locator(f"{PANELS['secondary']} a[href^='#']").filter(visible=True).nth(2)
        target = section.get_attribute("href")
        section.click()
        page.wait_for_function(f"() => location.hash === {json.dumps(target)}", timeout=5_000)
        assert not page.evaluate(PANEL_JS, PANELS["secondary"])["open"], (
            "the contents panel stayed open over the section it opened")
        top = page.evaluate("(id) => document.getElementById(id).getBoundingClientRect().top",
                            unquote(target[1:]))
        assert 0 <= top < 844 / 2, f"{target} is not at the top of the window ({top:.0f} px)"

        # Keyboard only: focus the button, Enter opens the panel (the focus moves into it), Tab
        # to the second link and Enter follows it.
        page.locator(".bd-header-article .secondary-toggle").focus()
        page.keyboard.press("Enter")
        _panel_shown(page, "secondary", width)
        page.keyboard.press("Tab")
        focused = page.evaluate("() => document.activeElement.getAttribute('href')")
        assert focused and focused.startswith("#"), f"Tab in the panel reached {focused!r}"
        page.keyboard.press("Enter")
        page.wait_for_function(f"() => location.hash === {json.dumps(focused)}", timeout=5_000)
        assert not page.evaluate(PANEL_JS, PANELS["secondary"])["open"]
    finally:
        context.close()


# --- figures at phone width (issue 25) ---------------------------------------------------------

MIN_TEXT_PX = 9  # the smallest text a figure may show, in CSS px (GUIDE §10)
FIGURE_WIDTH = 390
TEXT_SIZE = re.compile(r"([\d.]+) pt at ([\d.]+) dpi")

# Each figure's link (Sphinx's image-reference to the full-resolution file), the width it is shown
# at, its own (desktop) width that the enlarged view uses (assets/book.js: MyST-NB's inline width),
# and whether its "Enlarge" label is shown.
FIGURES_JS = r"""async () => {
    for (let i = 0; i < 2; i++) await new Promise(requestAnimationFrame);
    return Array.from(document.querySelectorAll("article.bd-article a.image-reference")).map((a) => {
        const img = a.querySelector("img"), label = a.querySelector(".book-zoom-label");
        return {href: a.href, shown: img.getBoundingClientRect().width,
                own: parseFloat(img.style.width) || img.naturalWidth,
                label: !!label && getComputedStyle(label).display !== "none" &&
                       label.getBoundingClientRect().width > 0,
                name: (img.alt || "").slice(0, 50)};
    });
}"""


def figure_text_px(png: Path, shown_width: float) -> float | None:
    """The smallest text of the figure in ``png`` in CSS px when it is shown ``shown_width`` px
    wide: its font size in points at the dpi it was drawn at (the PNG's "Smallest text" chunk,
    written by tformer.plots), scaled by the shown width over the PNG's pixel width."""
    from PIL import Image

    with Image.open(png) as image:
        record = image.text.get("Smallest text", "")
        width = image.width
    found = TEXT_SIZE.fullmatch(record)
    if not found:
        return None
    points, dpi = float(found[1]), float(found[2])
    return points * dpi / 72 * shown_width / width


def _pages_with_figures(html: Path) -> list[str]:
    return [name for name in _pages() if (html / f"{name}.html").exists()
            and "image-reference" in (html / f"{name}.html").read_text(encoding="utf-8")]


@pytest.mark.parametrize("edition", EDITIONS)
def test_figures_are_readable_at_phone_width(edition: str, browser, request):
    """At 390 px every figure's smallest text (from its font size and dpi, recorded in the PNG,
    and the width it is shown at) is at least 9 CSS px, or the figure carries the visible
    "Enlarge" affordance and the enlarged view (the figure at its own size) shows it at least
    9 px. A figure without the record fails: it was not drawn through tformer's inline backend."""
    html = _edition_html(edition, request)
    problems, measured = [], 0
    context = browser.new_context(viewport={"width": FIGURE_WIDTH, "height": 844})
    try:
        page = context.new_page()
        for docname in _pages_with_figures(html):
            page.goto((html / f"{docname}.html").resolve().as_uri(), wait_until="load")
            page.evaluate(WAIT_JS)
            for figure in page.evaluate(FIGURES_JS):
                where = f"{edition} {docname}: figure {figure['name']!r}"
                png = _local_path(figure["href"])
                shown = figure_text_px(png, figure["shown"]) if png else None
                if shown is None:
                    problems.append(f"{where}: no text-size record in {figure['href'][-40:]}")
                    continue
                measured += 1
                enlarged = figure_text_px(png, figure["own"])
                if shown >= MIN_TEXT_PX:
                    continue
                if not figure["label"]:
                    problems.append(f"{where}: text {shown:.1f} px at {FIGURE_WIDTH} px and no "
                                    "visible Enlarge label")
                elif enlarged < MIN_TEXT_PX:
                    problems.append(f"{where}: text {shown:.1f} px at {FIGURE_WIDTH} px, "
                                    f"{enlarged:.1f} px enlarged: the figure's code needs "
                                    "larger fonts")
    finally:
        context.close()
    assert measured >= 30, f"only {measured} figures measured in the {edition} edition"
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems)


ZOOM_JS = r"""() => {
    const dialog = document.querySelector("dialog.book-zoom"), img = dialog && dialog.querySelector("img");
    return dialog && {open: dialog.open, src: img ? img.src : "",
                      width: img ? img.getBoundingClientRect().width : 0,
                      loaded: !!img && img.complete && img.naturalWidth > 0,
                      focus: document.activeElement.className, url: location.href};
}"""


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("mode", ["light", "dark"])
def test_figure_enlarges_on_tap_and_with_the_keyboard(edition: str, mode: str, browser, request):
    """At 390 px a figure's link opens the enlarged view in the page (not a navigation): the
    full-resolution image at the figure's own width; Escape closes it and the focus returns to
    the figure; Enter on the focused figure opens it again and the Close button closes it."""
    html = _edition_html(edition, request)
    context = browser.new_context(viewport={"width": FIGURE_WIDTH, "height": 844},
                                  color_scheme=mode)
    context.add_init_script(f"localStorage.setItem('mode', '{mode}'); "
                            f"localStorage.setItem('theme', '{mode}');")
    try:
        page = context.new_page()
        start = (html / "book" / "07_multihead.html").resolve().as_uri()
        page.goto(start, wait_until="load")
        link = page.locator("article a.image-reference").first
        own = page.evaluate("(img) => parseFloat(img.style.width)",
                            link.locator("img").element_handle())
        label = link.locator(".book-zoom-label")
        assert label.is_visible(), "no Enlarge label on a figure scaled to the phone's column"
        assert label.inner_text() == ("放大" if edition == "zh" else "Enlarge")
        link.click()
        page.wait_for_function("() => { const i = document.querySelector('dialog.book-zoom img');"
                               " return i && i.complete; }")
        zoom = page.evaluate(ZOOM_JS)
        assert zoom["open"] and zoom["loaded"], zoom
        assert zoom["url"] == start, "the figure link navigated away"
        href = page.evaluate("(a) => a.href", link.element_handle())
        assert _local_path(zoom["src"]) == _local_path(href), "not the full-resolution image"
        assert abs(zoom["width"] - own) < 1, f"enlarged to {zoom['width']} px, not {own} px"
        assert _axe(page) == [], "axe with the enlarged view open"
        page.keyboard.press("Escape")
        page.wait_for_function("() => document.activeElement.classList.contains('book-zoom-link')",
                               timeout=5_000)
        assert not page.evaluate(ZOOM_JS)["open"], "Escape did not close the enlarged view"
        page.keyboard.press("Enter")
        page.wait_for_function("() => document.querySelector('dialog.book-zoom').open")
        page.locator("dialog.book-zoom .book-zoom__close").click()
        assert not page.evaluate(ZOOM_JS)["open"], "Close did not close the enlarged view"
    finally:
        context.close()


# --- typeset titles, headings and contents (issue 25) ------------------------------------------

RAW_SCRIPT = re.compile(r"(?<![\w.])[A-Za-z]{1,3}_(?:[A-Za-z0-9]|\{)|\\[A-Za-z]+|\$")


def _label_texts(page_file: Path) -> list[tuple[str, str]]:
    """Every label of a page outside code and typeset math: its <title>, its headings, the
    navigation and the page's contents, previous/next links and the exercise and solution
    titles, each with what it is."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(page_file.read_text(encoding="utf-8"), "html.parser")
    for skip in soup.select("code, pre, mjx-container, script, style, .headerlink"):
        skip.decompose()
    found = [("title", soup.title.get_text() if soup.title else "")]
    selectors = {"heading": "article h1, article h2, article h3, article h4, article h5, article h6",
                 "navigation": "nav a, .bd-toc a, .prev-next-area a",
                 "box title": "article p.admonition-title"}
    for kind, selector in selectors.items():
        found += [(kind, element.get_text(" ", strip=True)) for element in soup.select(selector)]
    return found


@pytest.mark.parametrize("edition", EDITIONS)
def test_titles_headings_and_contents_are_typeset(edition: str, request):
    """No page title, heading, navigation or contents entry, previous/next link or box title
    shows raw TeX subscripts (d_k, W_O, T_q) or delimiters: math there is typeset, or Unicode
    (√dₖ) where it is plain text, or HTML sub/superscripts (W<sub>O</sub>)."""
    html = _edition_html(edition, request)
    raw = []
    for docname in _pages():
        for kind, text in _label_texts(html / f"{docname}.html"):
            if RAW_SCRIPT.search(text):
                raw.append(f"{edition} {docname}: {kind} {text[:80]!r}")
    assert not raw, f"{len(raw)} raw labels:\n" + "\n".join(sorted(set(raw))[:30])


# --- search and the language switch (issue 25) -------------------------------------------------


def _search(context, search_page: str, query: str):
    from urllib.parse import quote

    tab = context.new_page()
    tab.goto(f"{search_page}?q={quote(query)}", wait_until="load")
    tab.wait_for_function("() => typeof Search !== 'undefined' && Search.status && "
                          "Search.status.textContent.trim()", timeout=30_000)
    return tab


@pytest.fixture(scope="module")
def served_html(book_html: Path):
    """The built book over HTTP on localhost: the search page fetches each result's page for
    its snippet, which a file:// page may not."""
    import functools
    import http.server
    import threading

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(book_html))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_search_snippets_come_from_the_matching_text(served_html: str, browser):
    """A search result's snippet is the text around the match in the page's article, not the
    page's list of sections (Sphinx's default reads the whole main region, sidebar included)."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    try:
        tab = _search(context, f"{served_html}/search.html", "padding")
        tab.wait_for_selector("#search-results ul.search li p.context", timeout=20_000)
        tab.wait_for_timeout(500)
        snippets = tab.eval_on_selector_all(
            "#search-results ul.search li", "(items) => items.map((li) => [li.querySelector('a')."
            "href, (li.querySelector('p.context') || {}).textContent || ''])")
        masks = [text for href, text in snippets if href.split("#")[0].endswith("05_masks.html")]
        assert masks, snippets[:5]
        sections = [h.strip().rstrip("#") for h in tab.evaluate(
            "async () => { const page = new DOMParser().parseFromString(await (await fetch("
            "'book/05_masks.html')).text(), 'text/html'); return Array.from(page.querySelectorAll("
            "'article h2')).map((h) => h.textContent.trim()); }")]
        for text in masks:
            assert "pad" in text.lower(), text  # "padding", "padded" (the index stems)
            listed = [title for title in sections if title and title in text]
            assert len(listed) <= 1, f"the snippet is the section list: {text!r}"
    finally:
        context.close()


@pytest.mark.parametrize("edition, query, finds", [("en", "掩码", "zh"), ("zh", "evenly", "en")])
def test_search_points_to_the_other_edition(edition: str, query: str, finds: str, book_html: Path,
                                            zh_html: Path, browser):
    """A query in the other edition's script that finds nothing here links to the same search in
    the other edition, which finds it."""
    html, other = (zh_html, book_html) if edition == "zh" else (book_html, zh_html)
    context = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        tab = _search(context, (html / "search.html").resolve().as_uri(), query)
        assert tab.locator("#search-results ul.search li").count() == 0
        pointer = tab.locator(".book-other-edition-search a")
        pointer.wait_for(timeout=5_000)
        assert _local_path(pointer.evaluate("(a) => a.href")) == (other / "search.html").resolve()
        with tab.expect_navigation(wait_until="load"):
            pointer.click()
        tab.wait_for_selector("#search-results ul.search li", timeout=30_000)
    finally:
        context.close()


@pytest.mark.parametrize("edition", EDITIONS)
def test_search_field_does_not_cover_the_query(edition: str, book_html: Path, browser, request):
    """The magnifier in the search page's field sits left of the first character of the query."""
    html = _edition_html(edition, request)
    context = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        tab = context.new_page()
        tab.goto((html / "search.html").resolve().as_uri() + "?q=mask", wait_until="load")
        box = tab.evaluate("""() => {
            const input = document.querySelector("article input[name=q], .bd-search input[name=q]");
            const form = input.closest("form");
            const icon = form.querySelector("svg, i");
            const style = getComputedStyle(input), r = input.getBoundingClientRect();
            return {text: r.left + parseFloat(style.paddingLeft) + parseFloat(style.borderLeftWidth),
                    icon: icon ? icon.getBoundingClientRect().right : null};
        }""")
        assert box["icon"] is None or box["icon"] <= box["text"], box
    finally:
        context.close()


def test_language_switch_keeps_the_section(book_html: Path, zh_html: Path, browser):
    """Deep in a chapter, the language switch opens the other edition at the section being
    read (its label, such as ch05-too-late, is the same in both editions)."""
    context = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        page = context.new_page()
        page.goto((book_html / "book" / "05_masks.html").resolve().as_uri(),
                  wait_until="domcontentloaded", timeout=60_000)
        target = page.evaluate("() => document.querySelectorAll('article section[id]')[4]"
                               ".querySelector(':scope > span[id]').id")  # its label
        page.evaluate(f"() => document.getElementById({json.dumps(target)}).parentElement"
                      ".scrollIntoView()")
        page.wait_for_timeout(200)
        with page.expect_navigation(wait_until="domcontentloaded", timeout=60_000):  # a tap
            page.evaluate("() => document.querySelector('a.book-language-switch').click()")
        assert _local_path(page.url) == (zh_html / "book" / "05_masks.html").resolve()
        assert urlsplit(page.url).fragment == target, page.url
        assert page.evaluate(f"() => !!document.getElementById({json.dumps(target)})")
    finally:
        context.close()
