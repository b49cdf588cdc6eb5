#!/usr/bin/env bash
# `make results` on a Slurm cluster: the same commands in the same order, the sweeps (-m lines)
# through hydra/launcher=slurm, one array job per sweep (conf/hydra/launcher/slurm.yaml,
# docs/running.md "Slurm"). Its arguments are added to every -m line: the launcher's settings.
#   bash experiments/results_slurm.sh hydra.launcher.partition=<p>
#   bash experiments/results_slurm.sh hydra.launcher.partition=<p> hydra.launcher.account=<a>
# The lines without -m (synthetic curves, one fit at a time) run where the script is started,
# so start it on a host where that is allowed (e.g. inside a small allocation). Every line
# resumes where it stopped: after a time limit or a cancel, run the same command again.
# Arguments are split at spaces (an override holding a space cannot be passed here).
# Environment: PY (Python with proxboost installed, on a file system the nodes share);
# DRY_RUN=1 prints the lines without running them.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}

run() {
  echo "$*"
  if [[ ${DRY_RUN:-} != 1 ]]; then "$@"; fi
}

run "$PY" -m proxboost.versions --write-manifest --results results
PY=$PY MULTIRUN_OVERRIDES="hydra/launcher=slurm $*" bash experiments/results.sh
run "$PY" -m proxboost.report --results results
