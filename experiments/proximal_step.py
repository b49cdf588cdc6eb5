"""SPEC §5.2 — proximal step (paper §"Proximal step", figure ``proximal_step``).

Same data and split as §5.1 (seed 0, 50/50), depth 3, T = 1000, ν = 0.05 (the paper does not
say; §5.1's value), losses ``lad`` and ``hinge``; λ ∈ {1e-2, 1e-1, 1, 10, 100} (per sample,
SPEC §2.1) for ``prox``, ``residual_prox``, ``accelerated_prox``, and their gradient
counterparts once each (independent of λ). Training and test loss at every iteration.

    python experiments/proximal_step.py [--results results] [--quick] [--list]
"""

import sys

from proxboost.boosting import GRADIENT_ALGOS, PROXIMAL_ALGOS as PROX_ALGOS
from proxboost.curves import RunSpec, experiment_cli

EXPERIMENT = "proximal_step"
PROBLEMS = (("regression", "lad"), ("classification", "hinge"))
STEPS = (1e-2, 1e-1, 1.0, 10.0, 100.0)
DEPTH, T, NU, SEED = 3, 1000, 0.05, 0


def make_specs(quick=False):
    T_ = 5 if quick else T
    specs = []
    for dataset, loss in PROBLEMS:
        for algo in GRADIENT_ALGOS:
            specs.append(RunSpec(EXPERIMENT, dataset, loss, algo, max_depth=DEPTH, learning_rate=NU,
                                 n_estimators=T_, step=None, seed=SEED))
        for algo in PROX_ALGOS:
            for step in STEPS:
                specs.append(RunSpec(EXPERIMENT, dataset, loss, algo, max_depth=DEPTH, learning_rate=NU,
                                     n_estimators=T_, step=step, seed=SEED))
    return specs


if __name__ == "__main__":
    experiment_cli(EXPERIMENT, make_specs, sys.argv[1:], description=__doc__.splitlines()[0])
