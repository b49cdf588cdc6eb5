"""The report of one's own sweep: any results folder → a summary table and one figure, for exactly
the datasets, losses and methods it holds.

    python -m proxboost.sweep runs                    # writes runs/report.md and runs/report.png
    python -m proxboost.sweep runs --out my-report    # elsewhere

The table has one line per (protocol, dataset, loss, method, engine, tie rule): rows (splits), mean
± std (ddof 1) of the test loss and of the test misclassification rate, the mean selected T. The
figure has one panel per (dataset, loss) with the test loss of every split per method. Both are made
from the stored rows only (:func:`proxboost.experiments.store.results.load`), deterministically: the
same rows give the same files byte for byte. (The paper's own figures and claims are ``make
figures``, :mod:`proxboost.experiments.report.summary` and
:mod:`proxboost.experiments.report.figures`.)
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure  # draws and saves without a backend (no pyplot, no state)

from proxboost.experiments.plan import versions
from proxboost.experiments.store.results import stops_on_damage
from proxboost.experiments.system.sealed import atomic_path

__all__ = ["main", "summary_table", "write_report"]

_GROUP = ["protocol", "dataset", "loss", "algo", "engine", "tie_rule"]


def _mean_std(values: pd.Series) -> str:
    v = values.astype(float).dropna()
    if v.empty:
        return "—"
    std = v.std(ddof=1) if len(v) > 1 else 0.0
    return f"{v.mean():.4g} ± {std:.2g}"


def summary_table(df: pd.DataFrame) -> pd.DataFrame:
    """One line per (protocol, dataset, loss, method, engine, tie rule) of the rows ``df``."""
    df = df.copy()
    if "tie_rule" not in df.columns:
        df["tie_rule"] = "—"
    df["tie_rule"] = df["tie_rule"].fillna("—").astype(str)
    out = []
    for key, g in df.groupby(_GROUP, sort=True):
        out.append(
            dict(
                zip(_GROUP, key),
                rows=len(g),
                test_loss=_mean_std(g["test_loss"]),
                test_error=_mean_std(g["test_error"]),
                mean_T=f"{g['n_estimators'].astype(float).mean():.0f}",
            )
        )
    return pd.DataFrame(out, columns=[*_GROUP, "rows", "test_loss", "test_error", "mean_T"])


def _markdown(table: pd.DataFrame, folder: str) -> str:
    lines = [
        f"# Sweep report: `{folder}`",
        "",
        (
            "Test loss and misclassification: mean ± std over the stored splits (made by "
            "`python -m proxboost.sweep`; nothing is fitted)."
        ),
        "",
        "| " + " | ".join(table.columns) + " |",
        "|" + "---|" * len(table.columns),
    ]
    for row in table.itertuples(index=False):
        lines.append("| " + " | ".join(str(v) for v in row) + " |")
    return "\n".join(lines) + "\n"


def _figure(df: pd.DataFrame, path: Path):
    panels = sorted(df.groupby(["dataset", "loss"]).groups)
    n = len(panels)
    cols = min(3, n)
    rows = math.ceil(n / cols)
    fig = Figure(figsize=(4.5 * cols, 3.2 * rows), layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    for ax, (dataset, loss) in zip(axes, panels):
        g = df[(df["dataset"] == dataset) & (df["loss"] == loss)]
        methods = sorted(g["algo"].unique())
        for i, algo in enumerate(methods):
            v = g.loc[g["algo"] == algo, "test_loss"].astype(float).dropna()
            ax.plot(np.full(len(v), i), v, "o", alpha=0.6, markersize=3)
            if len(v):
                ax.plot([i - 0.3, i + 0.3], [v.mean()] * 2, "k-", linewidth=1)
        ax.set_xticks(range(len(methods)), methods, rotation=45, ha="right", fontsize=7)
        ax.set_title(f"{dataset} / {loss}", fontsize=9)
        ax.set_ylabel("test loss per split")
    for ax in axes[n:]:
        ax.set_visible(False)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=100, metadata={"Software": None})
    return fig


def write_report(results_dir, out=None) -> list[Path]:
    """Write ``report.md`` and ``report.png`` for the rows under ``results_dir`` (into ``out``,
    default ``results_dir``); returns the paths written."""

    df = versions.load(results_dir)  # one numerics version (docs/results.md)
    if df.empty:
        raise SystemExit(
            f"no result rows under {results_dir}: run a sweep first (python run.py -m ...)"
        )
    out = Path(results_dir if out is None else out)
    md = out / "report.md"
    with atomic_path(md) as tmp:
        tmp.write_text(_markdown(summary_table(df), str(results_dir)))
    png = out / "report.png"
    _figure(df, png)
    return [md, png]


@stops_on_damage
def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m proxboost.sweep", description=__doc__.splitlines()[0]
    )
    parser.add_argument("results", help="a results folder (e.g. runs, or results)")
    parser.add_argument(
        "--out", default=None, help="where to write report.md and report.png (default: the folder)"
    )
    args = parser.parse_args(argv)
    for path in write_report(args.results, args.out):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
