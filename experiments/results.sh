#!/usr/bin/env bash
# The run.py lines of `make results`: the named experiments of conf/experiment/ (synthetic curves
# one fit at a time, then the real-world sweeps), each resuming where it stopped (docs/results.md,
# "Recomputing the stored results"). `make results` runs the manifest line before them and the
# report and the budget summary after them, with PROXBOOST_DEADLINE and PROXBOOST_RESUME set when
# BUDGET=... is given; run it rather than this script.
#   bash experiments/results.sh        # the lines alone, with .venv/bin/python (`make env`)
# Environment: PY (Python with proxboost installed); DRY_RUN=1 prints the lines without running
# them (`make -n results` sets it); MULTIRUN_OVERRIDES, words added to every -m line (what
# experiments/results_slurm.sh sets to hydra/launcher=slurm ...). Each line is printed before it
# runs, as make prints its commands; the first that fails stops the script (exit status non-zero).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
source experiments/_run.sh # run(), one copy for results.sh and benchmark.sh

run "$PY" run.py +experiment=intro
run "$PY" run.py -m +experiment=intro_sensitivity
run "$PY" run.py +experiment=convergence
run "$PY" run.py +experiment=convergence_authors
run "$PY" run.py +experiment=proximal_step
run "$PY" run.py -m +experiment=paper
run "$PY" run.py -m +experiment=paper_classification
run "$PY" run.py -m +experiment=paper_forests
run "$PY" run.py -m +experiment=engine_comparison_paper
run "$PY" run.py -m +experiment=tie_rules
run "$PY" run.py -m +experiment=quantile_levels
run "$PY" run.py -m +experiment=quantile_intervals
run "$PY" run.py -m +experiment=quantile_intervals_ties
run "$PY" run.py -m +experiment=step_auto
