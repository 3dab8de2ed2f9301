"""Screenshot the built book's pages in headless Chromium, in light and dark mode (a reader's check).

Usage:
    .venv/bin/python tools/screenshots.py [--html _build/html] [--out /tmp/shots] [--dark]
                                          [--full] [PAGE ...]

PAGE is a path under the HTML folder such as ``book/05_masks.html``; without PAGE every page of
the table of contents is taken. Each screenshot is written to OUT/<page>-<light|dark>.png, and any
request that left the machine or failed, and any JavaScript error, is printed, so the same run
doubles as a quick offline check. Open the PNGs with an image viewer and look at them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def toc_pages(root: Path = ROOT) -> list[str]:
    """HTML paths (relative to the HTML folder) of every page in `_toc.yml`, in reading order."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from toc import toc_docnames

    return [f"{name}.html" for name in toc_docnames(root)]


def wait_until_rendered(page) -> None:
    """Wait for MathJax (if the page loads it) and for images to finish loading."""
    page.wait_for_load_state("load")
    page.evaluate(
        """async () => {
            if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
                await MathJax.startup.promise;
            }
            const images = Array.from(document.images);
            images.forEach((img) => { img.loading = "eager"; });
            await Promise.all(images.map((img) => img.complete ? null :
                new Promise((done) => { img.onload = img.onerror = done; })));
        }"""
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*")
    parser.add_argument("--html", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("--out", type=Path, default=Path("/tmp/attention-executed-shots"))
    parser.add_argument("--dark", action="store_true", help="dark mode instead of light")
    parser.add_argument("--full", action="store_true", help="the whole page, not the first screen")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=1600)
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    mode = "dark" if args.dark else "light"
    args.out.mkdir(parents=True, exist_ok=True)
    pages = args.pages or toc_pages()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(
            viewport={"width": args.width, "height": args.height}, color_scheme=mode
        )
        # pydata-sphinx-theme keeps the reader's choice in localStorage; "auto" follows the OS.
        context.add_init_script(
            f"localStorage.setItem('mode', '{mode}'); localStorage.setItem('theme', '{mode}');"
        )
        for name in pages:
            path = (args.html / name).resolve()
            if not path.exists():
                print(f"missing  {name}")
                continue
            page = context.new_page()
            problems: list[str] = []
            page.on("pageerror", lambda error, problems=problems: problems.append(f"JS: {error}"))
            page.on(
                "requestfailed",
                lambda request, problems=problems: problems.append(f"failed: {request.url}"),
            )
            page.on(
                "request",
                lambda request, problems=problems: problems.append(f"network: {request.url}")
                if request.url.startswith(("http:", "https:"))
                else None,
            )
            page.goto(path.as_uri())
            wait_until_rendered(page)
            target = args.out / (name.replace("/", "__").removesuffix(".html") + f"-{mode}.png")
            page.screenshot(path=str(target), full_page=args.full)
            print(f"{'ok' if not problems else 'PROBLEM':8} {name} -> {target}")
            for problem in problems:
                print(f"         {problem}")
            page.close()
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
