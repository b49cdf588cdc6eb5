"""How much ``step="auto"`` moves when y is scaled by 1000 (not a power of two).

Scaling y by a power of two gives the same fit scaled, bit for bit (tested). Any other factor
rounds differently, and where a line search or a split is decided by an exact tie the rounding
can decide it the other way; the fit then goes on differently. This script fits the data of
``tests/test_boosting_step_auto.py`` (240 rows, 160 to fit, 80 to predict; y = 3 x0 - |x1| +
t_2 noise) with y and with 1000 y, for every proximal algorithm and ``lad`` / ``pinball``
(tau = 0.8), 80 trees as in that test, and prints per case the share of test rows that move,
the move of the test predictions
|P(1000 y) / 1000 - P(y)| divided by the mean absolute deviation of y from its median (median
and maximum over the test rows) and the relative change of the test loss. With
``--write-docs`` the table, date, load and commit go into ``docs/estimators.md`` between the
``bench-step-auto-scale`` markers.

With ``--dataset bostonhousing`` (a dataset of ``proxboost.experiments.datasets``) the same on
``--splits`` random 75/25 splits of it: the mean and largest absolute test-loss change.

Usage: ``python benchmarks/bench_step_auto_scale.py [--dataset NAME] [--splits 5]
[--write-docs]``.
"""

import argparse
import datetime
import os
import subprocess

import numpy as np
from shared import write_between_markers

from proxboost import BoostingRegressor
from proxboost.boosting import ALGOS


def data():
    rng = np.random.RandomState(5)  # the data of tests/test_boosting_step_auto.py
    X = rng.normal(size=(240, 4))
    y = 3.0 * X[:, 0] - np.abs(X[:, 1]) + rng.standard_t(2, size=240)
    return X, y


def cases(X, y, tr, te):
    """Per (algo, loss): the moves of the test predictions (units: y's mean absolute deviation
    from its median on the fitted rows) and the relative change of the test loss."""
    spread = float(np.mean(np.abs(y[tr] - np.median(y[tr]))))
    out = {}
    for algo in sorted(a for a, spec in ALGOS.items() if spec.proximal):
        for loss in ("lad", "pinball"):
            fits = []
            for scale in (1.0, 1000.0):
                est = BoostingRegressor(
                    loss=loss, algo=algo, tau=0.8, step="auto", random_state=0, n_estimators=80
                ).fit(X[tr], scale * y[tr])
                P = est.predict(X[te]) / scale
                fits.append((P, est.loss_.value(y[te], P)))
            move = np.abs(fits[1][0] - fits[0][0]) / spread
            out[algo, loss] = (move, fits[1][1] / fits[0][1] - 1.0)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument("--dataset", default=None, help="also a real dataset, e.g. bostonhousing")
    parser.add_argument("--splits", type=int, default=5)
    args = parser.parse_args()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    load = os.getloadavg()[0]
    X, y = data()
    results = cases(X, y, slice(0, 160), slice(160, None))
    rows = []
    for (algo, loss), (move, change) in results.items():
        rows.append(
            f"| `{algo}` | `{loss}` | {np.mean(move > 1e-9):.0%} | "
            f"{100 * np.median(move):.2f} % | "
            f"{100 * np.max(move):.1f} % | {100 * change:+.2f} % |"
        )
        print(rows[-1], flush=True)
    every = np.concatenate([move for move, _ in results.values()])
    text = (
        f"Measured {datetime.date.today().isoformat()} at commit {commit} (load average "
        f"{load:.1f}; `python benchmarks/bench_step_auto_scale.py --write-docs"
        + (f" --dataset {args.dataset} --splits {args.splits}" if args.dataset else "")
        + "`): the move of "
        "the 80 test predictions in units of the mean absolute deviation of y (rows moved: by "
        "more than 1e-9 of it), over all cases "
        f"median {100 * np.median(every):.2f} %, maximum {100 * np.max(every):.1f} %.\n\n"
        "| algo | loss | rows moved | median move | largest move | test loss, 1000 y against y |\n"
        "|---|---|---|---|---|---|\n" + "\n".join(rows)
    )
    if args.dataset:
        from proxboost.experiments.datasets import load_dataset

        Xd, yd = load_dataset(args.dataset)[:2]
        Xd, yd = np.asarray(Xd, dtype=float), np.asarray(yd, dtype=float)
        per_split = []
        for seed in range(args.splits):
            perm = np.random.RandomState(seed).permutation(len(yd))
            cut = (3 * len(yd)) // 4
            per_split.append(cases(Xd, yd, perm[:cut], perm[cut:]))
        lines = []
        for key in per_split[0]:
            moved = np.mean([np.mean(r[key][0] > 1e-9) for r in per_split])
            changes = np.abs([r[key][1] for r in per_split])
            largest = max(np.max(r[key][0]) for r in per_split)
            lines.append(
                f"| `{key[0]}` | `{key[1]}` | {moved:.0%} | {100 * largest:.1f} % | "
                f"{100 * np.mean(changes):.2f} % | {100 * np.max(changes):.2f} % |"
            )
            print(lines[-1], flush=True)
        text += (
            f"\n\n{args.dataset}, {args.splits} random 75/25 splits (the same settings):\n\n"
            "| algo | loss | rows moved | largest move | mean \\|test loss change\\| | largest |\n"
            "|---|---|---|---|---|---|\n" + "\n".join(lines)
        )
    print(text)
    if args.write_docs:
        write_between_markers("estimators.md", "bench-step-auto-scale", text)


if __name__ == "__main__":
    main()
