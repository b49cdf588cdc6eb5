"""SPEC §5.3 — the introduction example (figure ``intro``).

``sines`` data (SPEC §4.1: n = 1000, seed 0, split 500 train / 500 test), ``lad`` loss,
depth 2 (the paper: "depth less than 3"), T = 500, ν = 0.05, λ = 1 (per sample, SPEC §2.1),
``gradient`` vs ``prox``. Stores the training / test loss curves, the predictions f_T over a
grid of 1000 points of [0, 1] and the data points (``data.csv``).

    python experiments/intro.py [--results results] [--quick] [--list]
"""

import sys

from proxboost.curves import RunSpec, experiment_cli

EXPERIMENT = "intro"
ALGOS = ("gradient", "prox")
DEPTH, T, NU, LAMBDA, SEED, GRID = 2, 500, 0.05, 1.0, 0, 1000


def make_specs(quick=False):
    T_ = 5 if quick else T
    return [
        RunSpec(EXPERIMENT, "sines", "lad", algo, max_depth=DEPTH, learning_rate=NU, n_estimators=T_,
                step=LAMBDA, seed=SEED, grid_predictions=GRID)
        for algo in ALGOS
    ]


if __name__ == "__main__":
    experiment_cli(EXPERIMENT, make_specs, sys.argv[1:], description=__doc__.splitlines()[0])
