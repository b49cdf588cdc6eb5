# proxboost — the README's two commands are `make test` and `make figures`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# Real-data tests read the data files from a mirror: $PROXBOOST_DATA_MIRROR (.ci/run sets it on
# the CI machine), else data/ once `make datasets` has made it a mirror (its manifest.json; a cache
# that runs filled is not one); without either they are skipped
# with that reason (docs/data.md).

# NumPy's AVX-512 kernels give exp, sin, ... within an ulp, not bit for bit as its AVX2 ones:
# every command uses the AVX2 path on every x86-64 machine, so that results and tests give the
# same numbers everywhere (docs/results.md, "Same numbers on every machine"; run.py sets the same).
export NPY_DISABLE_CPU_FEATURES ?= X86_V4 AVX512_ICL AVX512_SPR

# `make -n results` (and `benchmark`) prints every command as before the scripts: their line is
# run (+) with DRY_RUN=1, and a script then prints its run.py lines without running them.
DRY_RUN = $(if $(findstring n,$(firstword -$(MAKEFLAGS))),1,)

.PHONY: lint format test test-fast figures results datasets bench benchmark env clean slurm-check

env: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[experiments,test]'
	touch $(STAMP)

# ruff: the linter rules and the formatting of pyproject.toml's [tool.ruff]; `make format` fixes both
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(STAMP)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

# The tests run in parallel on every core (pytest-xdist's workers, one process per core: the
# suite is mostly compiling and subprocesses, so two cores take about half the time); TEST_JOBS=0
# runs them in this process, one after the other (to debug with pdb, or read one test's output).
# The tests marked `serial` need the machine to themselves: they run last, in one process.
# The whole suite's target: under 10 minutes on an idle 2-core machine; `make test` ends with
# its 15 slowest tests, so that a run over the target says where the time went.
TEST_JOBS ?= auto
PYTEST = $(PY) -m pytest -q $(if $(filter 0,$(TEST_JOBS)),,-n $(TEST_JOBS))

# Both first compile the kernels into numba's cache, one process per engine
# (tests/compile_kernels.py): with a cold cache (CI, or after an edit of a kernel) the workers and
# the processes tests start would otherwise each compile them again.
test: lint
	$(PY) tests/compile_kernels.py
	$(PYTEST) -m "not serial" --durations=15
	$(PY) -m pytest -q -m serial $(SERIAL_FILES)

# The files declaring a `serial` test (collecting only them, not the whole suite, saves seconds
# of the one-process phase; conftest.py adds no serial mark of its own)
SERIAL_FILES = $(or $(shell grep -l 'mark\.serial' tests/test_*.py),tests)

# The inner loop while editing: every test not marked slow, and the first case of each `grid`
# (tests/conftest.py); the target is 90 s on an idle 2-core machine with the compiled cache warm.
test-fast: lint
	$(PY) tests/compile_kernels.py
	$(PYTEST) -m "not slow"

# The main job: results/claims.csv, results/SUMMARY.md, every figure and the browsable report
# results/report/index.html (from those files and the stored rows) from results/, no fitting.
figures: $(STAMP)
	$(PY) -m proxboost.report --results results
	$(PY) -m proxboost.figures --results results --out figures
	$(PY) -m proxboost.html_report --results results --figures figures --out results/report

# Recompute every stored result into results/, resumably (finished runs are skipped): the named
# experiments of conf/experiment/ (synthetic curves one fit at a time, then the real-world
# sweeps: the run.py lines of experiments/results.sh, each printed as it starts), then claims.csv
# and SUMMARY.md. On Slurm: experiments/results_slurm.sh (docs/running.md).
# Its first line writes results/manifest.csv, the computations the report waits for before it
# reads a new numerics version (docs/results.md, "Reported version").
# BUDGET=2h (45s, 90m, 1h30m): one deadline for all its commands, computed once when the first
# starts; no split or curve is started after it (docs/results.md, "Running in pieces").
# (computed by the system Python from the source file: the deadline must exist before .venv does)
DEADLINE = $(eval DEADLINE := $(if $(BUDGET),$(shell $(PYTHON) src/proxboost/experiments/fits/deadline.py '$(BUDGET)'),))$(DEADLINE)
results: private export PROXBOOST_DEADLINE = $(DEADLINE)
results: private export PROXBOOST_RESUME = $(if $(BUDGET),make results BUDGET=$(BUDGET),)
results: $(STAMP)
	$(PY) -m proxboost.versions --write-manifest --results results
	@+PY=$(PY) DRY_RUN=$(DRY_RUN) bash experiments/results.sh
	$(PY) -m proxboost.report --results results
	$(PY) -m proxboost.budget summary

# The quantile benchmark (docs/quantile_benchmark.md), not part of `results`: it runs once, after
# the round's recompute, resumably (the run.py lines of experiments/benchmark.sh); then its tables
# and figure from the stored rows. BUDGET=2h: in pieces, as `make results` (no split started after
# the deadline; the same command continues).
benchmark: private export PROXBOOST_DEADLINE = $(DEADLINE)
benchmark: private export PROXBOOST_RESUME = $(if $(BUDGET),make benchmark BUDGET=$(BUDGET),)
benchmark: $(STAMP)
	@+PY=$(PY) DRY_RUN=$(DRY_RUN) bash experiments/benchmark.sh
	$(PY) -m proxboost.benchmark_report --results results --out results/quantile_benchmark.md --figure figures/quantile_benchmark_ranks.png --write-docs

# Every real dataset's files (data and description) into data/; exit 1 if one with a verified
# source could not be obtained.
datasets: $(STAMP)
	$(PY) -m proxboost.datasets --prefetch --docs

bench: $(STAMP)
	$(PY) benchmarks/bench_fit.py

# The Slurm path end to end on a throw-away single-node cluster (experiments/slurm_check.sh):
# needs root on Debian/Ubuntu (installs slurm-wlm and munge when missing), so not in `test`.
slurm-check: $(STAMP)
	PY=$(PY) bash experiments/slurm_check.sh

clean:
	rm -rf $(VENV) .pytest_cache
