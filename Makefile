# proxboost — the README's two commands are `make test` and `make figures`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# Tests and CI read the local mirror of the datasets when it exists (no network here).
export PROXBOOST_DATA_MIRROR ?= $(if $(wildcard ../shared/datasets/manifest.json),$(abspath ../shared/datasets),)

.PHONY: test figures results datasets bench env clean

env: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -q

figures: $(STAMP)
	$(PY) -m proxboost.figures --results results --out figures

results: $(STAMP)
	$(PY) -m proxboost.experiments_all

datasets: $(STAMP)
	$(PY) -m proxboost.datasets --prefetch

bench: $(STAMP)
	$(PY) -m pip install --quiet -e '.[test,bench]'
	$(PY) benchmarks/bench_fit.py

clean:
	rm -rf $(VENV) .pytest_cache
