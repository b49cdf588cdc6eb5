"""SPEC §5.1 — convergence (paper §"Convergence", figures ``convergence`` and ``convergence_time``).

Synthetic ``regression`` (losses ``ls``, ``lad``) and ``classification`` (``exponential`` with
β = 1, ``hinge``), one data draw (seed 0) split 50/50, T = 1000, ν = 0.05, λ = 1 (per sample,
SPEC §2.1), trees of depth 3 and 15; ``gradient``, ``prox``, ``residual_gradient``,
``residual_prox``. Training and test losses and cumulative fit seconds at every iteration.
Runs execute one at a time (wall-clock curves); stored runs are skipped.

    python experiments/convergence.py [--results results] [--quick] [--list]
"""

import sys

from proxboost.curves import RunSpec, experiment_cli

EXPERIMENT = "convergence"
PROBLEMS = (("regression", "ls"), ("classification", "exponential"), ("regression", "lad"), ("classification", "hinge"))
DEPTHS = (3, 15)
ALGOS = ("gradient", "prox", "residual_gradient", "residual_prox")
T, NU, LAMBDA, BETA, SEED = 1000, 0.05, 1.0, 1.0, 0


def make_specs(quick=False):
    T_ = 5 if quick else T
    return [
        RunSpec(EXPERIMENT, dataset, loss, algo, max_depth=depth, learning_rate=NU, n_estimators=T_,
                step=LAMBDA, seed=SEED, beta=BETA)
        for depth in DEPTHS for dataset, loss in PROBLEMS for algo in ALGOS
    ]


if __name__ == "__main__":
    experiment_cli(EXPERIMENT, make_specs, sys.argv[1:], description=__doc__.splitlines()[0])
