# Attention, Executed — two commands on a fresh machine:
#   make book   set everything up, execute every notebook, build the HTML into _build/html, the
#               Chinese edition into _build/html/zh (from the same execution: tools/zh_book.py)
#               and the PDF editions into _build/pdf/attention-executed.pdf and
#               attention-executed-zh.pdf (also served from the HTML)
#   make test   set everything up, run ruff and the whole pytest suite (units, notebook policy,
#               nbval on solutions/, the book build, the browser test), in four processes
# Set-up steps leave stamp files (.venv/.installed, vendor/VERSIONS.txt, .stamp-chromium), so a
# second `make` skips them; deleting .venv or vendor/ redoes the step.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := book

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
CHROMIUM := /usr/bin/chromium
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

# Test-run options: nbval in lax mode on the solution notebooks (only cells tagged
# nbval-check-output are compared), sanitised; notebooks under tests/ are grader fixtures, not
# regression tests (pytest makes the glob absolute from the repository root; * spans folders).
# A cell that runs 120 s fails (the watchdog; nbval's own default is 2000 s): the failure's test
# id names the notebook and the cell.
PYTEST_ARGS := tests $(wildcard solutions) --nbval-lax --nbval-sanitize-with tests/nbval_sanitize.cfg \
	--nbval-cell-timeout=120 --ignore-glob='tests/*.ipynb' --durations=40

.PHONY: setup book pdf test exercises translations release bench clean distclean

STAMP_VENV := $(VENV)/.installed
STAMP_ASSETS := vendor/VERSIONS.txt

setup: $(STAMP_VENV) $(STAMP_ASSETS) .stamp-chromium .stamp-pdf-tools

# Python: a venv with every pin from requirements.txt (torch is the CPU wheel), then tformer
# itself without dependencies so nothing can pull another torch build.
.venv/.installed: requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -e .
	touch $@

# Offline JavaScript (MathJax 3, the ipywidgets embed manager), pinned in package-lock.json.
# Only the files a page can load are copied to vendor/ (served as _build/html/_static/...).
MJ := node_modules/mathjax/es5
WM := node_modules/@jupyter-widgets/html-manager
vendor/VERSIONS.txt: package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	rm -rf vendor
	mkdir -p vendor/mathjax/input/tex vendor/mathjax/output/chtml vendor/widgets
	cp $(MJ)/tex-chtml.js vendor/mathjax/
	cp -r $(MJ)/input/tex/extensions vendor/mathjax/input/tex/
	cp -r $(MJ)/output/chtml/fonts vendor/mathjax/output/chtml/
	cp -r $(MJ)/a11y $(MJ)/sre $(MJ)/ui $(MJ)/adaptors vendor/mathjax/
	cp node_modules/mathjax/LICENSE vendor/mathjax/LICENSE
	cp $(WM)/dist/embed.js $(WM)/dist/embed.js.LICENSE.txt vendor/widgets/
	cp $(WM)/dist/*.woff2 $(WM)/dist/*.woff vendor/widgets/
	printf 'mathjax %s (Apache-2.0)\n@jupyter-widgets/html-manager %s (BSD-3-Clause)\n' \
		"$$(node -p "require('./node_modules/mathjax/package.json').version")" \
		"$$(node -p "require('./$(WM)/package.json').version")" > $@

# Headless Chromium for the browser test, and CJK and emoji fonts so the glossary's Chinese
# terms and the execution table's status marks show in screenshots (Debian packages).
.stamp-chromium:
	if [ ! -x $(CHROMIUM) ]; then \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium fonts-wqy-microhei fonts-noto-cjk fonts-noto-color-emoji; \
	fi
	touch $@

# The PDF edition reads the PDF back with poppler-utils (its tests) and prints the glossary's
# Chinese terms in a CJK font (Debian packages; installed only when missing).
.stamp-pdf-tools:
	if ! command -v pdftotext >/dev/null || ! fc-list :lang=zh | grep -q .; then \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq poppler-utils fonts-wqy-microhei; \
	fi
	touch $@

# The Chinese edition is built from the English book's execution cache: it executes nothing.
book: setup
	$(BIN)/jupyter-book build . -W --keep-going
	$(PY) tools/zh_book.py build
	$(PY) tools/pdf_book.py
	$(PY) tools/pdf_book.py --lang zh

# The PDF edition alone, from the executed book (tools/pdf_book.py: headless Chromium prints the
# assembled HTML; nothing is executed twice).
pdf: book

# ruff and pytest both run even if the first fails; the target fails if either did.
# Four pytest processes run side by side so both cores stay busy: the tests that need the built
# book (marked `book`: the build, the stripped-cell runs, the browser and PDF checks) in two shards
# (BOOK_SHARD, tests/conftest.py: shard 0 builds the book, shard 1 waits for that build and then
# takes every other page test, so the browser checks after the build use both cores), everything
# else (units, checkers, nbval on solutions/, the grader), and the reader-runtime tests
# (tests/test_colab.py, tests/test_binder.py), which execute the notebooks again in their own
# Colab and Binder environments. The book tests' and reader tests' reports are printed at the end.
# OpenMP threads that wait for work sleep instead of spinning: the processes share two cores, and a
# spinning PyTorch thread burns the time another process needs.
READER_TESTS := tests/test_colab.py tests/test_binder.py
READER_LOG := _build/reader-runtimes.log
BOOK_LOG := _build/book-tests.log
BOOK_LOG_2 := _build/book-tests-2.log

test: export OMP_WAIT_POLICY = PASSIVE
test: setup
	status=0; \
	$(BIN)/ruff check . || status=1; \
	mkdir -p _build; \
	rm -f _build/book-build.json; \
	$(PY) -m pytest $(READER_TESTS) > $(READER_LOG) 2>&1 & reader=$$!; \
	BOOK_SHARD=0/2 $(PY) -m pytest $(PYTEST_ARGS) $(addprefix --ignore=,$(READER_TESTS)) -m book \
		> $(BOOK_LOG) 2>&1 & book=$$!; \
	BOOK_SHARD=1/2 BOOK_BUILDER_PID=$$book $(PY) -m pytest $(PYTEST_ARGS) \
		$(addprefix --ignore=,$(READER_TESTS)) -m book > $(BOOK_LOG_2) 2>&1 & book2=$$!; \
	$(PY) -m pytest $(PYTEST_ARGS) $(addprefix --ignore=,$(READER_TESTS)) -m "not book" || status=1; \
	wait $$book || status=1; \
	wait $$book2 || status=1; \
	echo "== the book's tests, shard 0 (build, stripped cells, browser, PDF): $(BOOK_LOG)"; \
	cat $(BOOK_LOG); \
	echo "== the book's tests, shard 1 (browser, PDF): $(BOOK_LOG_2)"; \
	cat $(BOOK_LOG_2); \
	wait $$reader || status=1; \
	echo "== reader runtimes (Colab, Binder): $(READER_LOG)"; \
	cat $(READER_LOG); \
	exit $$status

# Regenerate the reader's exercise notebooks and the book's exercise pages from solutions/.
exercises: setup
	$(PY) -m tformer.authoring

# Regenerate the committed Chinese notebooks (zh/book/, zh/exercises/) from the English ones and
# locale/zh/ (after `python tools/i18n.py status` is clean).
translations: setup
	$(PY) tools/zh_book.py notebooks

# A release: `make release VERSION=2.1.0` writes the version into pyproject.toml and every
# notebook's setup cell (which installs the tag v2.1.0 on Colab); it prints the steps left
# (translations, tests, commit, tag, push: CONTRIBUTING.md, "Releasing").
release: setup
	test -n "$(VERSION)" || { echo "usage: make release VERSION=x.y.z"; exit 2; }
	$(PY) tools/release.py $(VERSION)

# Speed and memory measurements (never timed tests): every bench/*.py; the book benchmark also
# times a fresh clone's set-up.
bench: setup
	for script in $(filter-out bench/book_build.py,$(wildcard bench/*.py)); do \
		echo "== $$script"; \
		$(PY) $$script; \
	done
	echo "== bench/book_build.py --setup"
	$(PY) bench/book_build.py --setup

clean:
	rm -rf _build

distclean: clean
	rm -rf $(VENV) node_modules vendor .stamp-chromium .stamp-pdf-tools
