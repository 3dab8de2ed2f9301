// Renders the book's TeX to MathJax CommonHTML at build time, so pages need no MathJax runtime
// (tools/book_html.py starts one process per build and talks to it line by line).
//
// Input, one JSON object per line:  {"math": [[tex, display], ...], "fontURL": "..."}
// Output, one JSON object per line: {"html": ["<mjx-container ...>", ...], "css": "...",
//                                    "errors": ["message", ...]}
// Every expression becomes an <mjx-container> with its MathML beside it for assistive technology
// (MathJax's assistive-mml: screen readers read the MathML, the visual rendering is aria-hidden).
// The CSS covers only the characters of that page; the fonts are the pinned MathJax 3 fonts.
// mathjax-full is pinned in package-lock.json; nothing is fetched from the network.
"use strict";

const readline = require("readline");
const { mathjax } = require("mathjax-full/js/mathjax.js");
const { TeX } = require("mathjax-full/js/input/tex.js");
const { CHTML } = require("mathjax-full/js/output/chtml.js");
const { liteAdaptor } = require("mathjax-full/js/adaptors/liteAdaptor.js");
const { RegisterHTMLHandler } = require("mathjax-full/js/handlers/html.js");
const { AssistiveMmlHandler } = require("mathjax-full/js/a11y/assistive-mml.js");
const { AllPackages } = require("mathjax-full/js/input/tex/AllPackages.js");

const adaptor = liteAdaptor();
AssistiveMmlHandler(RegisterHTMLHandler(adaptor));
const packages = AllPackages.filter((name) => !["bussproofs", "noundefined", "noerrors"].includes(name));

function render(request) {
  const tex = new TeX({ packages, formatError: (jax, err) => { throw err; } });
  const chtml = new CHTML({ fontURL: request.fontURL, adaptiveCSS: true });
  const doc = mathjax.document("", { InputJax: tex, OutputJax: chtml });
  const html = [];
  const errors = [];
  for (const [source, display] of request.math) {
    let node;
    try {
      node = doc.convert(source, { display, em: 16, ex: 8, containerWidth: 80 * 16 });
    } catch (err) {
      errors.push(`${err.message} in: ${source.slice(0, 120)}`);
      html.push(null);
      continue;
    }
    html.push(adaptor.outerHTML(node));
  }
  return { html, css: adaptor.textContent(chtml.styleSheet(doc)), errors };
}

const lines = readline.createInterface({ input: process.stdin, terminal: false });
lines.on("line", (line) => {
  let reply;
  try {
    reply = render(JSON.parse(line));
  } catch (err) {
    reply = { html: [], css: "", errors: [String(err && err.stack || err)] };
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
});
