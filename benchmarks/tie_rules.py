"""Effect of the leaf tie rule (``midpoint`` vs ``authors``) on the synthetic experiments.

Final training and test loss of ``gradient`` and ``prox`` under both rules, on the settings of
the synthetic experiments (one seed-0 draw, 50/50 split, nu = 0.05, lambda = 1 per sample):
the introduction example (``sines``, ``lad``, T = 500, depth 2 as in the paper, and depth 3)
and the convergence experiment (``regression`` with ``lad``, ``classification`` with
``hinge``, depth 3, T = 1000). Prints a markdown table (used in ``docs/estimators.md``).

Usage: ``python benchmarks/tie_rules.py [--engine exact]``.
"""

import argparse

import numpy as np

from proxboost import BoostingClassifier, BoostingRegressor
from proxboost.experiments.datasets import load_dataset
from proxboost.experiments.fits.curves import synthetic_split

SETTINGS = [  # (dataset, loss, depth, T)
    ("sines", "lad", 2, 500),
    ("sines", "lad", 3, 500),
    ("regression", "lad", 3, 1000),
    ("classification", "hinge", 3, 1000),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", default="exact")
    args = parser.parse_args()
    print(
        "| data | loss | depth | T | algo | train midpoint | train authors | test midpoint | test"
        " authors |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for dataset, loss, depth, T in SETTINGS:
        X, y, info = load_dataset(dataset, random_state=0)
        tr, te = synthetic_split(len(y), 0)
        Est = BoostingClassifier if info.task == "classification" else BoostingRegressor
        for algo in ("gradient", "prox"):
            res = {}
            for rule in ("midpoint", "authors"):
                est = Est(
                    loss=loss,
                    algo=algo,
                    n_estimators=T,
                    learning_rate=0.05,
                    step=1.0,
                    max_depth=depth,
                    random_state=0,
                    engine=args.engine,
                    tie_rule=rule,
                )
                est.fit(X[tr], y[tr], eval_set=(X[te], y[te]))
                res[rule] = (est.train_loss_[-1], est.eval_loss_[-1])
            print(
                f"| {dataset} | {loss} | {depth} | {T} | {algo} | {res['midpoint'][0]:.4f} | "
                f"{res['authors'][0]:.4f} | {res['midpoint'][1]:.4f} | {res['authors'][1]:.4f} |",
                flush=True,
            )


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
