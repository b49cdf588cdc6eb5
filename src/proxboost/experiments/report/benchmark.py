"""Tables and figure of the quantile benchmark (docs/quantile_benchmark.md) from its stored rows.

The rows are those of ``python run.py -m +experiment=quantile_benchmark`` (and its
``_large`` part): protocol ``benchmark15/...`` or ``benchmark90/...`` — the two budget readings,
15 and 90 configurations per method — losses ``lad``, ``pinball`` (τ = 0.9) and
``pinball-tau0.1``. Per reading, one table of dataset × loss: for each method against ``prox``
(same dataset, loss and split), the median paired relative difference of the test loss
(``(method − prox) / prox``, in %: negative means the method has the lower loss), its wins and
losses over the splits, and the two-sided Wilcoxon signed-rank p-value with Holm's correction
over every dataset × loss × method test of that reading; then the methods' average rank (rank 1
= lowest mean test loss of a dataset × loss cell; ties share their mean rank) with Nemenyi's
critical difference, which the figure draws.

    python -m proxboost.benchmark_report --results results --out benchmark.md --figure ranks.png

Nothing here fits a model or invents a number: a reading without rows says so.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from proxboost.experiments.claims.analysis import holm, wilcoxon_p
from proxboost.experiments.plan import versions

__all__ = [
    "LOSSES",
    "METHODS",
    "READINGS",
    "REFERENCE",
    "average_ranks",
    "benchmark_rows",
    "critical_difference",
    "main",
    "markdown",
    "paired_table",
    "rank_figure",
]

#: The two budget readings: grid option → configurations per method.
READINGS = {"benchmark15": 15, "benchmark90": 90}
#: Loss labels of the rows (pinball at τ = 0.1 is labelled by its τ, the conf/loss option's).
LOSSES = ("pinball-tau0.1", "lad", "pinball")
REFERENCE = "prox"
METHODS = (
    "prox",
    "residual_prox",
    "gradient",
    "lightgbm",
    "sklearn_hgb",
    "xgboost",
    "quantile_forest",
)
ALPHA = 0.05


def benchmark_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """The benchmark's rows of a results table, with a ``reading`` column (the grid option) and
    ``n_splits`` taken from the protocol name (``benchmark15/10splits/T1000`` → 10). One row per
    (reading, dataset, loss, algo, split), else ValueError naming the duplicated cell."""
    if rows.empty:
        columns = ["protocol", "dataset", "loss", "algo", "split", "test_loss"]
        return pd.DataFrame(columns=[*columns, "reading", "n_splits"])
    parts = rows["protocol"].astype(str).str.split("/", expand=True)
    keep = parts[0].isin(READINGS) & rows["loss"].isin(LOSSES) & rows["algo"].isin(METHODS)
    out = rows[keep].copy()
    out["reading"] = parts.loc[keep, 0]
    out["n_splits"] = parts.loc[keep, 1].str.removesuffix("splits").astype(int)
    key = ["reading", "dataset", "loss", "algo", "split"]
    dup = out.duplicated(key, keep=False)
    if dup.any():
        first = out.loc[dup, key].iloc[0].to_dict()
        raise ValueError(
            f"two stored runs for {first}: keep one run per reading, dataset, loss and method"
            " (another engine or settings under the same grid name)"
        )
    return out


def paired_table(rows: pd.DataFrame, reading: str) -> pd.DataFrame:
    """One line per (dataset, loss, method ≠ prox) of a reading: ``n`` paired splits, ``median``
    relative Δ in % (method − prox over prox, per split), ``wins``/``losses`` of the method
    (lower/higher test loss than prox), Wilcoxon ``p`` and its Holm-adjusted ``p_holm`` over
    every line of the reading."""
    r = rows[rows["reading"] == reading]
    wide = r.pivot_table(
        index=["dataset", "loss", "split"], columns="algo", values="test_loss", aggfunc="first"
    )
    lines = []
    if REFERENCE in wide.columns:
        for (dataset, loss), cell in wide.groupby(level=["dataset", "loss"], sort=True):
            ref = cell[REFERENCE].to_numpy(dtype=float)
            for algo in METHODS[1:]:
                if algo not in cell.columns:
                    continue
                val = cell[algo].to_numpy(dtype=float)
                ok = np.isfinite(ref) & np.isfinite(val)
                if not ok.any():
                    continue
                d = val[ok] - ref[ok]
                lines.append(
                    dict(
                        dataset=dataset,
                        loss=loss,
                        algo=algo,
                        n=int(ok.sum()),
                        median=float(np.median(d / np.abs(ref[ok]))) * 100.0,
                        wins=int((d < 0).sum()),
                        losses=int((d > 0).sum()),
                        p=wilcoxon_p(d),
                    )
                )
    table = pd.DataFrame(
        lines, columns=["dataset", "loss", "algo", "n", "median", "wins", "losses", "p"]
    )
    table["p_holm"] = holm(table["p"].to_numpy(dtype=float)) if len(table) else []
    return table


def average_ranks(rows: pd.DataFrame, reading: str) -> tuple[pd.Series, int]:
    """(average rank of each method, number N of dataset × loss cells ranked): each cell ranks
    the methods by their mean test loss over the splits every method has; only the cells where
    every method present in the reading has rows count."""
    r = rows[rows["reading"] == reading]
    methods = [m for m in METHODS if m in set(r["algo"])]
    wide = r.pivot_table(
        index=["dataset", "loss", "split"], columns="algo", values="test_loss", aggfunc="first"
    ).reindex(columns=methods)
    wide = wide.dropna()  # the splits every method has
    if wide.empty:
        return pd.Series(dtype=float), 0
    means = wide.groupby(level=["dataset", "loss"]).mean()
    ranks = means.rank(axis=1, method="average")
    return ranks.mean(axis=0), len(ranks)


def critical_difference(k: int, n_cells: int, alpha: float = ALPHA) -> float:
    """Nemenyi's critical difference of average ranks of k methods over N cells (Demšar 2006):
    q_α √(k(k+1)/(6N)), q_α the studentized range quantile over √2 (infinite df)."""
    if k < 2 or n_cells < 1:
        return math.nan
    q = stats.studentized_range.ppf(1 - alpha, k, np.inf) / math.sqrt(2)
    return float(q * math.sqrt(k * (k + 1) / (6.0 * n_cells)))


def _cell(line) -> str:
    star = "*" if line.p_holm < ALPHA else ""
    return f"{line.median:+.1f} % ({line.wins}/{line.losses}, {line.p_holm:.2g}{star})"


def markdown(rows: pd.DataFrame) -> str:
    """The page's results section: per reading, the dataset × loss table and the rank line."""
    out = []
    for reading, budget in READINGS.items():
        out.append(f"### {budget} configurations per method (`{reading}`)\n")
        table = paired_table(rows, reading)
        if table.empty:
            out.append("No rows of this reading are stored yet.\n")
            continue
        others = [m for m in METHODS[1:] if m in set(table["algo"])]
        out.append("| dataset | loss | splits | " + " | ".join(others) + " |")
        out.append("|---|---|---|" + "---|" * len(others))
        for (dataset, loss), cell in table.groupby(["dataset", "loss"], sort=True):
            by = {line.algo: line for line in cell.itertuples()}
            n = int(cell["n"].max())
            cells = [_cell(by[m]) if m in by else "—" for m in others]
            out.append(f"| {dataset} | {loss} | {n} | " + " | ".join(cells) + " |")
        ranks, n_cells = average_ranks(rows, reading)
        cd = critical_difference(len(ranks), n_cells)
        line = ", ".join(f"{m} {ranks[m]:.2f}" for m in ranks.sort_values().index)
        out.append("")
        out.append(
            f"Average rank over {n_cells} dataset × loss cells (1 = lowest mean test loss): "
            f"{line}; critical difference (Nemenyi, α = {ALPHA}) {cd:.2f}."
        )
        few = sorted(set(table.loc[table["n"] < 20, "dataset"]))
        note = f" Datasets with fewer than 20 splits: {', '.join(few)}." if few else ""
        out.append(
            "\nCells: median relative Δ of the test loss against `prox` (negative: lower than "
            "prox), wins/losses of the method over the splits, Wilcoxon p with Holm's correction "
            f"over the {len(table)} tests of this reading (* below {ALPHA}).{note}\n"
        )
    return "\n".join(out)


def rank_figure(rows: pd.DataFrame, path) -> Path:
    """Average ranks with Nemenyi's critical difference, one panel per reading (png)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(READINGS), 1, figsize=(7, 2.6 * len(READINGS)), squeeze=False)
    for ax, (reading, budget) in zip(axes[:, 0], READINGS.items()):
        ranks, n_cells = average_ranks(rows, reading)
        r = rows[rows["reading"] == reading]
        few = sorted(set(r.loc[r["n_splits"] < 20, "dataset"]))
        note = f"\nfewer than 20 splits: {', '.join(few)}" if few else ""
        ax.set_title(
            f"{budget} configurations per method ({n_cells} dataset × loss cells){note}",
            fontsize=10,
        )
        if ranks.empty:
            ax.text(0.5, 0.5, "no rows stored", ha="center", va="center", transform=ax.transAxes)
            continue
        ranks = ranks.sort_values()
        cd = critical_difference(len(ranks), n_cells)
        y = np.arange(len(ranks))
        ax.plot(ranks.to_numpy(), y, "o")
        best = float(ranks.iloc[0])
        # methods right of the bar's end differ from the best by more than the CD
        ax.axvspan(best, best + cd, color="0.85", label=f"best + CD ({cd:.2f})")
        ax.set_yticks(y, list(ranks.index))
        ax.set_xlim(0.8, len(ranks) + 0.2)
        ax.set_xlabel("average rank (1 = lowest test loss)")
        ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default="results", help="folder of the stored rows")
    parser.add_argument("--out", required=True, help="markdown file of the tables")
    parser.add_argument("--figure", required=True, help="png of the average ranks")
    args = parser.parse_args(argv)
    rows = benchmark_rows(versions.load(args.results))  # one numerics version
    Path(args.out).write_text(markdown(rows), encoding="utf-8")
    rank_figure(rows, args.figure)
    print(f"{args.out}, {args.figure}: {len(rows)} benchmark rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
