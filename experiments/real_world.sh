#!/usr/bin/env bash
# The real-world results of SPEC §5.4 stored in results/ (called by `make results`).
# Resumable: every (dataset, loss, algo, split) row already stored is skipped, so rerunning
# this script after an interruption finishes the work. Run from the repository root.
#   ENGINE=exact bash experiments/real_world.sh    # the scikit-learn trees instead of histograms
#   PART=paper bash experiments/real_world.sh      # only the paper-protocol part
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
ENGINE=${ENGINE:-hist}
PART=${PART:-all}
ALGOS=gradient,prox,residual_gradient,residual_prox,accelerated_gradient,accelerated_prox,xgboost,random_forest,lightgbm,sklearn_hgb
run() { "$PY" run.py -m "$@" engine="$ENGINE" progress=false hydra.sweep.dir="outputs/real_world/\${now:%Y-%m-%d_%H-%M-%S}"; }

if [[ $PART == all || $PART == paper ]]; then
  # The paper's grid and 20 splits on the three smallest regression datasets.
  for ds in engel sniffer crabs; do
    run dataset=$ds loss=ls,lad,pinball algo=$ALGOS grid=paper
  done
fi
if [[ $PART == all || $PART == reduced ]]; then
  # A named reduced protocol (grid=reduced, 10 splits) everywhere else.
  for ds in bostonhousing redwine whitewine; do
    run dataset=$ds loss=ls,lad,pinball algo=$ALGOS grid=reduced protocol.n_splits=10
  done
  for ds in spam adult advertisements; do
    run dataset=$ds loss=exponential,hinge algo=$ALGOS grid=reduced protocol.n_splits=10 skip_unavailable=true
  done
fi
