"""The quantile measurements (docs/quantiles.md, "Measurements") from their stored rows.

Three questions, each answered from the rows of a named experiment on the paper protocol
(``paper/20splits/T1000``, ``exact`` trees, midpoint tie rule, the six regression datasets):

- **the price of several levels** (``+experiment=quantile_levels``): per algorithm, dataset and
  level τ_k of the model of levels 0.05 / 0.5 / 0.95, the ratio of its test pinball loss at τ_k
  (``test_loss_levels[k]``) to the separate single-level run's at τ_k on the same split; the
  cell's median over the splits; the median of the 6 × 3 cells' medians (target ≤ 1.01); and
  the fit time of the one model over the three separate ones (``fit_seconds + refit_seconds``
  of a split; the median over the splits all four have, so that the first split of a fresh
  worker, which also loads or compiles the compiled loop, does not weigh; target ≤ 0.6);
- **the intervals** (``+experiment=quantile_intervals``, the same runs): per algorithm and
  dataset, the mean coverage of the 90 % interval of the outer levels over the splits, before and
  after conformal calibration, with its standard error SE, against the interval the calibration
  guarantees widened by 2·SE, [1 − α − 2·SE, ⌈(n_cal + 1)(1 − α)⌉/(n_cal + 1) + 2·SE]; and
  the same with equal conformity scores ordered at random (``+experiment=quantile_intervals_ties``,
  ``paper/20splits/T1000/ties-random``: the same fits, another calibration);
- **the scale-free step** (``+experiment=step_auto``): per dataset and loss (lad, pinball), the
  paired difference of test losses of ``prox`` with ``step="auto"`` on 15 grid points
  (``paper_auto/20splits/T1000``) minus ``prox`` on the paper's 90 (``paper/...``): median Δ,
  wins and losses over the splits, the two-sided Wilcoxon p. ``auto`` may become the default
  only if every one of the 12 cells has median Δ ≤ 0 or p ≥ 0.05.

    python -m proxboost.quantile_measurements --results results [--write-docs]

Nothing here fits a model or invents a number: a cell without rows says so, and a question
whose cells are not all stored says "pending".
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from proxboost.experiments.claims.analysis import wilcoxon_p
from proxboost.experiments.plan import versions
from proxboost.experiments.report.benchmark import interval_table, with_interval_columns
from proxboost.experiments.report.docs_block import write_block
from proxboost.experiments.store.naming import REGRESSION_DATASETS

__all__ = [
    "ALGOS",
    "DATASETS",
    "LEVELS",
    "coverage_table",
    "markdown",
    "price_summary",
    "price_table",
    "step_auto_decision",
    "step_auto_table",
]

DATASETS = tuple(sorted(REGRESSION_DATASETS))
ALGOS = ("gradient", "prox")
LEVELS = (0.05, 0.5, 0.95)
MULTI_LOSS = "pinball-tau" + "-".join(f"{t:g}" for t in LEVELS)
PAPER = "paper/20splits/T1000"
AUTO = "paper_auto/20splits/T1000"
#: The same runs with the interval's equal scores ordered at random (``quantile_intervals_ties``).
TIES = PAPER + "/ties-random"
STEP_AUTO_LOSSES = ("lad", "pinball")
PRICE_TARGET = 1.01
TIME_TARGET = 0.6
SIGNIFICANCE = 0.05

#: Where ``--write-docs`` writes the tables in docs/quantiles.md.
DOCS_FILE = Path("docs") / "quantiles.md"
MARKER = "quantile-measurements"
BEGIN, END = f"<!-- {MARKER} -->", f"<!-- /{MARKER} -->"


def _paper_rows(rows: pd.DataFrame, protocol: str = PAPER) -> pd.DataFrame:
    """The rows of one protocol on exact trees under the midpoint rule (the paper's settings)."""
    if rows.empty:
        return rows
    keep = (rows["protocol"] == protocol) & (rows["engine"] == "exact")
    if "tie_rule" in rows:
        keep &= rows["tie_rule"].fillna("midpoint") == "midpoint"
    return rows[keep & rows["dataset"].isin(DATASETS)]


def _seconds(r: pd.DataFrame) -> pd.Series:
    return r["fit_seconds"].astype(float) + r["refit_seconds"].fillna(0.0).astype(float)


def _by_split(r: pd.DataFrame, column) -> pd.Series:
    return r.drop_duplicates("split").set_index("split")[column] if len(r) else pd.Series()


# -- the price of several levels --------------------------------------------------------------
def price_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One line per (algo, dataset, level): ``n`` splits paired, ``median_ratio`` of the model of
    several levels' test loss at the level over the separate run's, and per (algo, dataset) the
    ``time_ratio``: the median over the splits all four have of the one model's fit and refit
    seconds over the three separate runs' (repeated on the dataset's lines). NaN where a run is
    missing."""
    r = _paper_rows(rows)
    lines = []
    for algo in ALGOS:
        for dataset in DATASETS:
            d = r[(r["algo"] == algo) & (r["dataset"] == dataset)]
            multi = d[d["loss"] == MULTI_LOSS]
            per_level = (
                _by_split(multi, "test_loss_levels").map(json.loads)
                if len(multi)
                else pd.Series(dtype=object)
            )
            separate = {t: d[d["loss"] == f"pinball-tau{t:g}"] for t in LEVELS}
            common = set(per_level.index)
            for t in LEVELS:
                common &= set(separate[t]["split"])
            time_ratio = math.nan
            if common:
                s = sorted(common)
                own = _by_split(multi.assign(_s=_seconds(multi)), "_s")[s]
                three = sum(
                    _by_split(separate[t].assign(_s=_seconds(separate[t])), "_s")[s] for t in LEVELS
                )
                # the median of the per-split ratios, not a ratio of sums: the first split a
                # fresh worker computes also times the loading (or compiling) of the compiled
                # loop, minutes on an empty cache, and would dominate a sum
                time_ratio = float(np.median(own / three))
            for k, t in enumerate(LEVELS):
                alone = _by_split(separate[t], "test_loss").astype(float)
                splits = sorted(set(per_level.index) & set(alone.index))
                ratios = [per_level[s][k] / alone[s] for s in splits if alone[s] > 0]
                lines.append(
                    dict(
                        algo=algo,
                        dataset=dataset,
                        level=t,
                        n=len(ratios),
                        median_ratio=float(np.median(ratios)) if ratios else math.nan,
                        time_ratio=time_ratio,
                    )
                )
    return pd.DataFrame(
        lines, columns=["algo", "dataset", "level", "n", "median_ratio", "time_ratio"]
    )


def price_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per algo: the cells stored (of 6 × 3), the median of their median ratios, the median of
    the datasets' time ratios, and whether each meets its target ("pending" until every cell
    is stored)."""
    lines = []
    for algo in ALGOS:
        t = table[(table["algo"] == algo) & (table["n"] > 0)]
        cells = len(t)
        total = len(DATASETS) * len(LEVELS)
        ratio = float(t["median_ratio"].median()) if cells else math.nan
        times = t.drop_duplicates("dataset")["time_ratio"].dropna()
        time = float(times.median()) if len(times) else math.nan

        def verdict(value, target, complete):
            if not complete:
                return "pending"
            return "met" if value <= target else "missed"

        lines.append(
            dict(
                algo=algo,
                cells=cells,
                of=total,
                median_ratio=ratio,
                ratio_target=verdict(ratio, PRICE_TARGET, cells == total),
                time_ratio=time,
                time_target=verdict(time, TIME_TARGET, len(times) == len(DATASETS)),
            )
        )
    return pd.DataFrame(lines)


# -- the intervals ------------------------------------------------------------------------------
def coverage_table(rows: pd.DataFrame, protocol: str = PAPER) -> pd.DataFrame:
    """One line per (algo, dataset) of the model of several levels (the rows of ``protocol``:
    :data:`PAPER`, closed intervals, or :data:`TIES`, random ties): the quantile benchmark's
    interval table (:func:`~proxboost.experiments.report.benchmark.interval_table`: ``n``
    splits, mean coverage before and after calibration with its SE over the splits, widths,
    crossing shares, the guarantee's ends), ``n`` = 0 where nothing is stored, and the guarantee
    widened by 2·SE (``low``, ``high``) with ``within`` (the calibrated mean coverage inside it;
    None where it cannot be judged)."""
    r = _paper_rows(rows, protocol)
    r = r[r["loss"] == MULTI_LOSS].drop_duplicates(["algo", "dataset", "split"])
    table = interval_table(with_interval_columns(r).assign(reading=MULTI_LOSS), MULTI_LOSS)
    cells = pd.MultiIndex.from_product([ALGOS, DATASETS], names=["algo", "dataset"])
    table = table.set_index(["algo", "dataset"]).reindex(cells).reset_index()
    table["n"] = table["n"].fillna(0).astype(int)
    two_se = 2 * table["coverage_calibrated_se"]
    table["low"] = table["guarantee_low"] - two_se
    table["high"] = table["guarantee_high"] + two_se
    table["within"] = [
        None if math.isnan(low) or math.isnan(high) else bool(low <= c <= high)
        for c, low, high in zip(table["coverage_calibrated"], table["low"], table["high"])
    ]
    return table


# -- the scale-free step ------------------------------------------------------------------------
def _prox_losses(r: pd.DataFrame, dataset: str, loss: str) -> pd.Series:
    """The test losses of ``prox`` on a (dataset, loss), by split."""
    c = r[(r["algo"] == "prox") & (r["dataset"] == dataset) & (r["loss"] == loss)]
    return _by_split(c, "test_loss").astype(float)


def step_auto_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One line per (dataset, loss): ``n`` paired splits, the ``median_delta`` of test losses
    (auto on 15 points − the 90-point grid; negative: auto lower), ``wins`` / ``losses`` of
    auto, the Wilcoxon ``p`` and ``ok`` (median Δ ≤ 0 or p ≥ 0.05; None without pairs)."""
    auto = _paper_rows(rows, AUTO)
    grid = _paper_rows(rows, PAPER)
    lines = []
    for dataset in DATASETS:
        for loss in STEP_AUTO_LOSSES:
            a, g = (_prox_losses(r, dataset, loss) for r in (auto, grid))
            splits = sorted(set(a.index) & set(g.index))
            d = np.array([a[s] - g[s] for s in splits], dtype=float)
            median = float(np.median(d)) if d.size else math.nan
            p = wilcoxon_p(d) if d.size else math.nan
            ok = None if not d.size else bool(median <= 0 or p >= SIGNIFICANCE)
            lines.append(
                dict(
                    dataset=dataset,
                    loss=loss,
                    n=int(d.size),
                    median_delta=median,
                    relative=median / float(np.median(g[splits])) if d.size else math.nan,
                    wins=int((d < 0).sum()),
                    losses=int((d > 0).sum()),
                    p=p,
                    ok=ok,
                )
            )
    return pd.DataFrame(lines)


def step_auto_decision(table: pd.DataFrame) -> str:
    """The rule's answer in one sentence: pending until all 12 cells are stored."""
    stored = table[table["n"] > 0]
    total = len(DATASETS) * len(STEP_AUTO_LOSSES)
    if len(stored) < total:
        return f"pending: {len(stored)} of {total} (dataset, loss) cells stored"
    bad = stored[~stored["ok"].astype(bool)]
    if bad.empty:
        return (
            f"every one of the {total} cells has median Δ ≤ 0 or p ≥ {SIGNIFICANCE:g}:"
            ' `step="auto"` qualifies as the default'
        )
    names = ", ".join(f"{r.dataset}/{r.loss}" for r in bad.itertuples())
    return (
        f"{len(bad)} of {total} cells have auto significantly worse (median Δ > 0, p <"
        f" {SIGNIFICANCE:g}: {names}): the default step stays as it is"
    )


# -- the page -----------------------------------------------------------------------------------
def _f(value, digits=4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:.{digits}g}"


def markdown(rows: pd.DataFrame) -> str:
    """The three measurements' tables and verdicts as Markdown."""
    price, cover, step = price_table(rows), coverage_table(rows), step_auto_table(rows)
    cover_ties = coverage_table(rows, TIES)
    out = [
        "Computed by `python -m proxboost.quantile_measurements --results results --write-docs`"
        " from the stored rows"
        f" ({PAPER}, exact trees, midpoint rule); a cell without rows shows —.",
        "",
        "**Several levels, the price** (model of levels 0.05 / 0.5 / 0.95 against three"
        " single-level runs; median over the splits of the per-split ratio of test pinball"
        " losses at each level; time ratio: fit + refit seconds of a split, one model over the"
        " three, median over the splits):",
        "",
        "| algo | dataset | splits | ratio τ = 0.05 | ratio τ = 0.5 | ratio τ = 0.95 |"
        " time ratio |",
        "|---|---|---|---|---|---|---|",
    ]
    for (algo, dataset), g in price.groupby(["algo", "dataset"], sort=False):
        ratios = " | ".join(_f(v) for v in g["median_ratio"])
        out.append(
            f"| {algo} | {dataset} | {int(g['n'].max())} | {ratios} |"
            f" {_f(g['time_ratio'].iloc[0], 3)} |"
        )
    out += ["", "| algo | cells stored | median of the cells' ratios | target ≤ 1.01 |"
            " median time ratio | target ≤ 0.6 |", "|---|---|---|---|---|---|"]  # fmt: skip
    for s in price_summary(price).itertuples():
        out.append(
            f"| {s.algo} | {s.cells} of {s.of} | {_f(s.median_ratio)} | {s.ratio_target} |"
            f" {_f(s.time_ratio, 3)} | {s.time_target} |"
        )
    out += [
        "",
        "**Intervals** (90 %, levels 0.05 and 0.95 of the same models; mean over the splits,"
        " ± its standard error; the guarantee widened by 2·SE):",
        "",
        *_coverage_lines(cover),
        "",
        "**Intervals, ties broken at random** (the same models and calibration rows,"
        ' `calibrate(..., ties="random")`; rows of'
        f" {TIES}):",
        "",
        *_coverage_lines(cover_ties),
    ]
    out += [
        "",
        '**Scale-free step** (`prox`, `step="auto"` on 15 grid points against the 90-point grid;'
        " Δ = auto − grid per split, negative: auto lower; two-sided Wilcoxon p over the splits):",
        "",
        "| dataset | loss | splits | median Δ | median Δ / grid's median | auto lower / higher |"
        " p |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in step.itertuples():
        out.append(
            f"| {r.dataset} | {r.loss} | {r.n} | {_f(r.median_delta, 3)} |"
            f" {_f(100 * r.relative, 3)} % | {r.wins} / {r.losses} | {_f(r.p, 2)} |"
        )
    out += ["", f"Decision on the default step: {step_auto_decision(step)}.", ""]
    return "\n".join(out)


def _coverage_lines(cover: pd.DataFrame) -> list:
    lines = [
        "| algo | dataset | splits | coverage before | coverage after | guarantee ± 2·SE |"
        " within | width before | width after | crossing rows |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in cover.itertuples():
        within = "—" if c.within is None else ("yes" if c.within else "**no**")
        lines.append(
            f"| {c.algo} | {c.dataset} | {c.n} |"
            f" {_f(c.coverage_raw, 3)} ± {_f(c.coverage_raw_se, 2)} |"
            f" {_f(c.coverage_calibrated, 3)} ± {_f(c.coverage_calibrated_se, 2)} |"
            f" [{_f(c.low, 3)}, {_f(c.high, 3)}] | {within} | {_f(c.width_raw)} |"
            f" {_f(c.width_calibrated)} | {_f(c.crossing_raw, 2)} |"
        )
    judged = [w for w in cover["within"] if w is not None]
    lines += [
        "",
        f"Within the guarantee: {sum(judged)} of {len(judged)} cells judged"
        f" ({len(cover) - len(judged)} without rows).",
    ]
    return lines


def write_docs(text: str, path: Path = DOCS_FILE) -> Path:
    """Replace the block between :data:`BEGIN` and :data:`END` of ``path`` by ``text``."""
    return write_block(path, MARKER, text)


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m proxboost.quantile_measurements",
        description="The quantile measurements' tables from the stored rows.",
    )
    p.add_argument("--results", default="results", help="results directory (default: results)")
    p.add_argument("--write-docs", action="store_true", help=f"write them into {DOCS_FILE}")
    args = p.parse_args(argv)
    read = versions.read_versions(args.results)
    text = markdown(versions.load(args.results, versions=read))
    print(text)
    if args.write_docs:
        print(f"wrote {write_docs(text)}")


if __name__ == "__main__":
    main()
