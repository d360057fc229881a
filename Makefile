# allocbias: two commands, each doing its own set-up.
#   make book   execute every notebook of _toc.yml with papermill (PROFILE=default) and build the HTML book
#   make book-student  the same book with every exercise solution removed, into _build/student/html
#   make assignments   the course's assignments (otter-grader): student and autograder folders, an answer key
#   make test   run the library's tests and every notebook with the smoke profile (two pytest-xdist workers,
#               each chapter executed once into build/smoke/), then re-execute the fast chapters' executed copies
#               with nbval and compare every output (a chapter that is not deterministic fails)
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
PROFILE ?= default
STAMP := $(VENV)/.installed-stamp

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export PYTHONHASHSEED := 0
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: help install book book-student notebooks html test test-lib test-notebooks test-nbval bench llama-server clean \
	assignments

# Chapters re-executed by nbval in `make test`: the fast ones, under the smoke profile.
NBVAL_CHAPTERS := 03_decisions 11_real_model_scores 13_why_averages_fail 14_local_law_144 15_ll144_audits 16_real_essays

help:
	@echo "make book [PROFILE=default|smoke]  execute the notebooks and build the book into _build/html"
	@echo "make book-student [PROFILE=...]    the book without exercise solutions, into _build/student/html"
	@echo "make test                          library tests + every notebook under the smoke profile + nbval"
	@echo "make test-nbval                    re-execute the fast chapters with nbval and compare every output"
	@echo "make assignments                   the course's assignments (otter-grader) into dist/assignments"
	@echo "make bench                         run the benchmarks (ratios measured side by side)"
	@echo "make llama-server                  build llama-cpp-python's OpenAI server (~15-20 min, optional)"

# The environment: created once, re-installed only when a requirements file changes.
$(STAMP): requirements.txt requirements-nodeps.txt constraints.txt pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -r requirements.txt -c constraints.txt
	$(PY) -m pip install -q --no-deps -r requirements-nodeps.txt
	@touch $@

install: $(STAMP)

# Execute the notebooks (papermill, one profile) into build/notebooks/, then render them.
notebooks: $(STAMP)
	$(PY) -m allocbias.book execute --profile $(PROFILE)

html: $(STAMP)
	rm -rf _build/html _build/.doctrees
	$(VENV)/bin/jupyter-book build . -W -n --keep-going 2>&1 | tee build/jupyter-book.log
	@echo "The book is in _build/html/index.html"

book: notebooks html

# The student edition: the same executed notebooks (chapters whose executed copy is current are not re-run) with
# every exercise solution removed from the pages, the search index and the downloadable notebooks in _sources/
# (the local Sphinx extension book/_ext/student_edition.py, which fails the build if one is left), written to
# _build/student/html.
book-student: notebooks
	sed 's#^sphinx:$$#sphinx:\n  local_extensions:\n    student_edition: $(CURDIR)/book/_ext/#' _config.yml > build/_config_student.yml
	$(VENV)/bin/jupyter-book build . --config build/_config_student.yml --path-output build/student -W -n --keep-going
	rm -rf _build/student && mkdir -p _build/student && cp -r build/student/_build/html _build/student/html
	@echo "The student edition is in _build/student/html/index.html"

# The course's assignments (assignments/aN/aN.ipynb, otter-grader master notebooks): `otter assign` into
# dist/assignments/aN/{student,autograder} (with the Gradescope autograder zip), the instructor's answer key into
# dist/assignments/answer_key/. Fails unless the solutions score full marks under otter's grading, the unmodified
# student notebook scores at most a quarter of them, and the student folder holds no solution, rubric, hidden test
# or answer value (scripts/build_assignments.py).
assignments: $(STAMP)
	$(PY) scripts/build_assignments.py

test-lib: $(STAMP)
	$(PY) -m pytest tests -m "not notebooks" -q

test-notebooks: $(STAMP)
	$(PY) -m pytest tests -m notebooks -q

# Two pytest-xdist workers, each given whole scopes (tests/conftest.py: a chapter's tests together, the chapters
# first, then the smoke book, then the library's modules); the 30 slowest tests are printed every run.
TEST_WORKERS ?= 2
test: $(STAMP)
	$(PY) -m pytest tests -q -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder --durations=30
	$(MAKE) --no-print-directory test-nbval

# Execute the fast chapters (smoke profile) into build/smoke/, then re-execute those copies with nbval and compare
# every output with the executed one; tests/nbval_sanitize.cfg masks timings and styled tables' random ids only.
# Each chapter's cells run in one kernel, in order, on one of the two workers (--dist loadfile).
# After `pytest tests` the copies are there already, stamped with their inputs' digest (tests/conftest.py executes
# every chapter into build/smoke/ the way the runner does), so the runner finds them current and executes nothing.
test-nbval: $(STAMP)
	$(PY) -m allocbias.book execute --profile smoke --only $(NBVAL_CHAPTERS) --out build/smoke
	$(PY) -m pytest -q -p no:cacheprovider -p tests.nbval_history -n $(TEST_WORKERS) --dist loadfile --nbval \
		--nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg \
		$(addprefix build/smoke/,$(addsuffix .ipynb,$(NBVAL_CHAPTERS)))

bench: $(STAMP)
	@for b in benchmarks/*_bench.py; do echo "== $$b"; $(PY) $$b; done

llama-server: $(STAMP)
	bash scripts/build_llama_server.sh

clean:
	rm -rf _build build dist .pytest_cache .hypothesis
