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
the page weighs at most 3 MB as transferred (gzip), and its
own content (HTML, inlined animations, figures) at most 3 MB uncompressed. Page weights are
written to _build/page-weights.json (bench/ reports the heaviest).
"""

from __future__ import annotations

import gzip
import json
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

MAX_PAGE_BYTES = 3 * 1024 * 1024
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


def _pages() -> list[str]:
    return toc_docnames()


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
        previous = json.loads(WEIGHTS_FILE.read_text()) if WEIGHTS_FILE.exists() else {}
        previous.update(recorded)
        WEIGHTS_FILE.write_text(json.dumps(previous, indent=1, sort_keys=True))


def _local_path(url: str) -> Path | None:
    parts = urlsplit(url)
    return Path(unquote(parts.path)) if parts.scheme == "file" else None


@pytest.mark.parametrize("docname", _pages())
def test_page_in_browser(docname: str, book_html: Path, browser, weights):
    page_file = book_html / f"{docname}.html"
    assert page_file.exists(), f"{docname}.html was not built"
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

        # Math: MathJax ran and left no raw delimiters in the prose.
        loads_mathjax = page.locator("script[src*='mathjax/tex-chtml.js']").count() > 0
        if loads_mathjax:
            assert page.locator("mjx-container").count() > 0, "MathJax produced no output"
        raw = page.evaluate(RAW_TEX_JS)
        assert not raw, f"raw TeX left on the page: {raw[:5]}"

        # Images.
        broken = page.evaluate(
            "() => Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0))"
            ".map(i => i.src.slice(0, 100))"
        )
        assert not broken, f"images that did not load: {broken}"

        # Launch buttons on notebook pages.
        source = source_of(docname)
        if source is not None and source.suffix == ".ipynb":
            url, branch = repository()
            repo = urlsplit(url).path.strip("/")
            colab = f"https://colab.research.google.com/github/{repo}/blob/{branch}/{docname}.ipynb"
            assert page.locator(f"a[href='{colab}']").count() > 0, "no Colab launch button"
            binder = page.locator(f"a[href^='https://mybinder.org/v2/gh/{repo}/{branch}']")
            assert binder.count() > 0, "no Binder launch button"
            assert f"{docname}.ipynb" in (binder.first.get_attribute("href") or "")

        # Interactive parts respond without a kernel.
        scrubbed = page.evaluate(SCRUB_JS)
        assert all(result == "ok" for result in scrubbed), scrubbed
        views = page.locator("script[type='application/vnd.jupyter.widget-view+json']").count()
        if views:
            rendered = page.locator(".jupyter-widgets.widget-inline-hbox, .jupyter-widgets").count()
            assert rendered >= views, f"{views} widget views but {rendered} rendered widgets"

        layout = page.evaluate(LAYOUT_JS)
        assert not layout["cut"], f"display equations cut off on the left: {layout['cut']}"
        assert not layout["uncaptioned"], f"figures without a caption: {layout['uncaptioned']}"
        assert not layout["sliders"], f"{layout['sliders']} slider(s) outside a player (dead)"

        assert not errors, "\n".join(errors)
    finally:
        context.close()

    dark = browser.new_context(viewport={"width": 1280, "height": 1000}, color_scheme="dark")
    # pydata-sphinx-theme reads the reader's choice from localStorage.
    dark.add_init_script("localStorage.setItem('mode', 'dark'); localStorage.setItem('theme', 'dark');")
    try:
        dark_page = dark.new_page()
        dark_page.goto(page_file.resolve().as_uri(), wait_until="load")
        found = dark_page.evaluate(DARK_JS)
        assert found["mode"] == "dark", f"dark mode did not switch on: {found['mode']}"
        assert not found["dim"], f"dark mode: captions not in the text colour: {found['dim']}"
        assert not found["bare"], f"dark mode: output images on a transparent background: {found['bare']}"
        assert not found["faint"], f"dark mode: code in HTML outputs off the text colour: {found['faint']}"
    finally:
        dark.close()

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
    weights[docname] = weight
    outside = [str(path) for path in files if html_root not in path.parents]
    assert not outside, f"page loaded files from outside the book: {outside}"
    assert weight["gzip"] <= MAX_PAGE_BYTES, (
        f"{docname}: {weight['gzip'] / 1e6:.2f} MB transferred (gzip) > 3 MB: {weight}"
    )
    assert weight["own_raw"] <= MAX_PAGE_BYTES, (
        f"{docname}: its HTML, animations and figures weigh {weight['own_raw'] / 1e6:.2f} MB > 3 MB"
    )
