# mustcite: `make demo` runs the main job end to end; `make test` runs the test suite.
# Both create the virtual environment and install everything on a fresh machine.

PYTHON ?= python3.11
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
MUSTCITE := $(VENV)/bin/mustcite
WORK   ?= mustcite-work
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export MUSTCITE_WORK ?= $(abspath $(WORK))

.PHONY: venv demo test test-all browser-deps clean bench

# The stamp is rebuilt when pyproject.toml changes. torch==2.13.0 (CPU build) goes in first so that
# nothing else pulls a CUDA build.
$(VENV)/.installed: pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON)"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e '.[dense,serve,judges,test]'
	touch $@

venv: $(VENV)/.installed

# Debian's chromium for the browser tests (never `playwright install`: it downloads a browser).
browser-deps:
	@if ! command -v chromium >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -q && apt-get install -y -q chromium; \
	  else sudo apt-get update -q && sudo apt-get install -y -q chromium; fi; \
	fi

demo: venv
	bash scripts/demo.sh

test: venv browser-deps
	$(PY) -m pytest -q -m "not slow" tests

test-all: venv
	$(PY) -m pytest -q tests

# The quick benchmark scripts (each writes benchmarks/results/<name>.json). Not included: the local
# LLM judge (benchmarks/local_judge_multicite.py, about an hour on 2 cores).
BENCHES := corpus_build extract_markdown_quality extract_throughput extract_pdf_gold offline_judge_multicite annotate_throughput retrieval_speed recommend_latency
bench: venv
	for b in $(BENCHES); do $(PY) benchmarks/$$b.py || exit 1; done

clean:
	rm -rf $(WORK) .pytest_cache
