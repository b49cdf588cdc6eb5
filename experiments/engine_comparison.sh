#!/usr/bin/env bash
# Tree engines compared on the protocol (issue 6): the same runs with engine=exact and
# engine=hist — grid=reduced, 20 splits, loss lad, gradient and prox, on engel, sniffer, crabs —
# so that per-split test-loss differences exact − hist can be read from results/
# (protocol reduced/20splits/T1000). Resumable like every sweep.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
"$PY" run.py -m dataset=engel,sniffer,crabs loss=lad algo=gradient,prox grid=reduced \
  protocol.n_splits=20 engine=exact,hist progress=false \
  hydra.sweep.dir="outputs/engine_comparison/\${now:%Y-%m-%d_%H-%M-%S}"
