"""Accessibility and Lighthouse scores of the built book, served from localhost (issue 15).

Run after a build (`make book`):
    .venv/bin/python bench/page_quality.py [--axe] [--lighthouse] [PAGE ...]

* ``--axe``: axe-core (node_modules/axe-core, pinned in package-lock.json) on every page of the
  table of contents, light and dark mode, rules wcag2a, wcag2aa, wcag21a, wcag21aa and
  best-practice; prints the violations by rule (nodes and pages).
* ``--lighthouse``: Lighthouse (node_modules/.bin/lighthouse, pinned 12.2.3) with the desktop
  preset (``--preset mobile``: its phone preset) on every chapter page (or the PAGEs given, e.g.
  ``book/04_scaling.html``): performance, accessibility, best practices and SEO scores, total
  blocking time and transferred bytes.
  Chromium is /usr/bin/chromium with the book's flags (CHROME_PATH); pages are served by a local
  HTTP server that gzips text as a static host does (Lighthouse simulates a 10 Mbit/s link, so
  uncompressed serving would understate what a reader gets).

Without either flag both run. Results go to bench/results/page_quality.json.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import io
import json
import os
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"
RESULTS = ROOT / "bench" / "results" / "page_quality.json"
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
LIGHTHOUSE = ROOT / "node_modules" / ".bin" / "lighthouse"
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
CATEGORIES = ["performance", "accessibility", "best-practices", "seo"]

sys.path.insert(0, str(ROOT / "tools"))
from screenshots import CHROMIUM, CHROMIUM_ARGS, toc_pages, wait_until_rendered  # noqa: E402

COMPRESSED = {".html", ".css", ".js", ".svg", ".json", ".txt", ".map"}


def serve(folder: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    """A quiet HTTP server for `folder` on a free localhost port (daemon thread) that gzips text
    (HTML, CSS, JavaScript, SVG) as any static host does."""

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def send_head(self):
            path = Path(self.translate_path(self.path))
            if path.is_dir():
                path = path / "index.html"
            if (path.suffix not in COMPRESSED or not path.is_file()
                    or "gzip" not in self.headers.get("Accept-Encoding", "")):
                return super().send_head()
            body = gzip.compress(path.read_bytes(), 6)
            self.send_response(200)
            self.send_header("Content-Type", self.guess_type(str(path)))
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            return io.BytesIO(body)

    handler = functools.partial(Handler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def run_axe(page) -> list[dict]:
    """axe-core's violations on an open Playwright page (axe injected from node_modules)."""
    page.add_script_tag(path=str(AXE))
    return page.evaluate(
        """async (tags) => {
            const result = await axe.run(document, {runOnly: {type: "tag", values: tags}});
            return result.violations.map((v) => ({
                id: v.id, impact: v.impact,
                nodes: v.nodes.map((n) => n.target.join(" ") + " :: " + n.failureSummary
                    .split("\\n").slice(1, 2).join("")),
            }));
        }""",
        AXE_TAGS,
    )


def axe_all(pages: list[str], base: str) -> dict:
    from playwright.sync_api import sync_playwright

    by_rule: Counter[str] = Counter()
    pages_by_rule: dict[str, set[str]] = {}
    detail: dict[str, list[dict]] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for mode in ("light", "dark"):
            context = browser.new_context(
                viewport={"width": 1280, "height": 1000}, color_scheme=mode
            )
            context.add_init_script(
                f"localStorage.setItem('mode', '{mode}'); localStorage.setItem('theme', '{mode}');"
            )
            for name in pages:
                page = context.new_page()
                page.goto(f"{base}/{name}")
                wait_until_rendered(page)
                violations = run_axe(page)
                detail[f"{name} ({mode})"] = violations
                for violation in violations:
                    by_rule[violation["id"]] += len(violation["nodes"])
                    pages_by_rule.setdefault(violation["id"], set()).add(f"{name} ({mode})")
                print(f"axe {mode:5} {name}: {sum(len(v['nodes']) for v in violations)} nodes")
                page.close()
            context.close()
        browser.close()
    return {
        "by_rule": {rule: {"nodes": n, "pages": len(pages_by_rule[rule])} for rule, n in
                    by_rule.most_common()},
        "detail": detail,
    }


def lighthouse(url: str, preset: str = "desktop") -> dict:
    """Lighthouse's four scores for ``url``: ``preset`` "desktop", or "mobile" (Lighthouse's
    default: a mid-range phone's screen, a 4x slower CPU and a slow 4G link, simulated)."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        flags = " ".join(["--headless", *CHROMIUM_ARGS])
        subprocess.run(
            [str(LIGHTHOUSE), url, *(["--preset=desktop"] if preset == "desktop" else []),
             "--quiet", "--output=json",
             f"--output-path={report}", f"--chrome-flags={flags}",
             f"--only-categories={','.join(CATEGORIES)}"],
            check=True, env={**os.environ, "CHROME_PATH": CHROMIUM},
        )
        data = json.loads(report.read_text())
    audits = data["audits"]
    failed = {
        category: [ref["id"] for ref in data["categories"][category]["auditRefs"]
                   if ref["weight"] > 0 and (audits[ref["id"]].get("score") is not None)
                   and audits[ref["id"]]["score"] < 1]
        for category in CATEGORIES
    }
    return {
        **{category: round(100 * data["categories"][category]["score"]) for category in CATEGORIES},
        "tbt_ms": round(audits["total-blocking-time"]["numericValue"]),
        "preset": preset,
        "transfer_kb": round(audits["total-byte-weight"]["numericValue"] / 1024),
        "failed_audits": failed,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*")
    parser.add_argument("--axe", action="store_true")
    parser.add_argument("--lighthouse", action="store_true")
    parser.add_argument("--html", type=Path, default=HTML)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--preset", choices=["desktop", "mobile"], default="desktop",
                        help="Lighthouse's form factor and throttling (default: desktop)")
    args = parser.parse_args()
    both = not (args.axe or args.lighthouse)
    server, base = serve(args.html)
    results: dict[str, object] = {}
    try:
        if args.axe or both:
            results["axe"] = axe_all(args.pages or toc_pages(), base)
            for rule, count in results["axe"]["by_rule"].items():
                print(f"{rule:32} {count['nodes']:5} nodes on {count['pages']:3} page views")
        if args.lighthouse or both:
            chapters = args.pages or [p for p in toc_pages() if Path(p).name[:2].isdigit()
                                      and "/exercises/" not in p]
            scores = {}
            for name in chapters:
                scores[name] = lighthouse(f"{base}/{name}", args.preset)
                row = scores[name]
                print(f"lighthouse {name}: " + " / ".join(str(row[c]) for c in CATEGORIES)
                      + f"  TBT {row['tbt_ms']} ms, {row['transfer_kb']} KB")
            results["lighthouse"] = scores
    finally:
        server.shutdown()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
