"""The quantile benchmark's report (docs/quantile_benchmark.md), on fake rows of random numbers:
the across-dataset ratios, Wilcoxon p-values and Holm's correction against NumPy, scipy and a
step-down written here; the average ranks and the Friedman test against scipy on the per-dataset
means; Holm over a (dataset, loss) cell's methods only; the subsampled datasets' footnote exactly
when an identity has ``max_rows``; only the splits both (or every) method have; Nemenyi's
critical difference against Demšar's table; the interval table's means, standard errors,
width ratios against prox and crossing shares against NumPy (missing crossing columns as NaN),
its guarantee in exact arithmetic, and the interval rows kept out of the benchmark tables; the
command on a stored results folder.
"""

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from proxboost.experiments.report.benchmark import (
    METHODS,
    across_table,
    average_ranks,
    benchmark_rows,
    critical_difference,
    dataset_means,
    dataset_ratios,
    guarantee,
    interval_markdown,
    interval_rows,
    interval_table,
    main,
    markdown,
    paired_table,
    status_markdown,
    subsampled,
)
from proxboost.experiments.store.results import load, write_row

FOUR = ("prox", "residual_prox", "gradient", "lightgbm")


def _rows(rng, datasets, methods=FOUR, n_splits=10, losses=("lad",), identity=None, shift=None):
    """Benchmark rows of reading ``benchmark15``: per dataset a scale (10^0 … 10^3) times a
    random base per split, times a random factor per method and split (``shift[algo]`` added to
    the method's factors). ``identity(dataset)`` gives a row's identity (none by default)."""
    shift = shift or {}
    rows = []
    for dataset in datasets:
        scale = 10.0 ** rng.integers(0, 4)
        for loss in losses:
            base = scale * rng.uniform(1, 2, n_splits)
            for algo in methods:
                factor = rng.uniform(0.8, 1.2, n_splits) + shift.get(algo, 0.0)
                for k in range(n_splits):
                    row = dict(
                        protocol=f"benchmark15/{n_splits}splits/T1000", dataset=dataset,
                        loss=loss, algo=algo, split=k, test_loss=base[k] * factor[k],
                    )  # fmt: skip
                    if identity is not None:
                        row["identity"] = json.dumps(identity(dataset))
                    rows.append(row)
    return benchmark_rows(pd.DataFrame(rows))


def _holm_by_hand(p):
    """Holm's step-down: the i-th smallest p times (m − i), made monotone, capped at 1."""
    p = np.asarray(p, dtype=float)
    order = np.argsort(p)
    m = len(p)
    adjusted = np.empty(m)
    running = 0.0
    for i, j in enumerate(order):
        running = max(running, (m - i) * p[j])
        adjusted[j] = min(1.0, running)
    return adjusted


def _values(rows, dataset, algo, loss="lad"):
    r = rows[(rows.dataset == dataset) & (rows.algo == algo) & (rows.loss == loss)]
    return r.set_index("split")["test_loss"].sort_index()


# -- across datasets ----------------------------------------------------------------------------
def test_across_datasets_ratios_wilcoxon_and_holm_match_numpy_and_scipy():
    rng = np.random.default_rng(1)
    datasets = [f"d{i}" for i in range(8)]
    rows = _rows(rng, datasets, shift={"gradient": 0.15})
    ratios = dataset_ratios(rows, "benchmark15", "lad")
    assert list(ratios.columns) == list(FOUR[1:]) and list(ratios.index) == datasets
    table = across_table(rows, "benchmark15").set_index("algo")
    assert set(table["loss"]) == {"lad"} and (table["n"] == 8).all()
    p = {}
    for algo in FOUR[1:]:
        x = np.array(
            [_values(rows, d, algo).mean() / _values(rows, d, "prox").mean() - 1 for d in datasets]
        )
        assert ratios[algo].to_numpy() == pytest.approx(x, rel=1e-12)
        line = table.loc[algo]
        assert line["median"] == pytest.approx(100 * np.median(x))
        assert (line["lower"], line["higher"]) == ((x < 0).sum(), (x > 0).sum())
        p[algo] = stats.wilcoxon(x).pvalue
        assert line["p"] == pytest.approx(p[algo])
    # Holm over the three methods of this (loss, reading)
    expected = _holm_by_hand([p[a] for a in FOUR[1:]])
    assert table.loc[list(FOUR[1:]), "p_holm"].to_numpy() == pytest.approx(expected)
    assert table.loc["gradient", "higher"] == 8  # 15 % higher on every split
    assert "catboost" in METHODS and "catboost" not in markdown(rows)  # no rows, no column


def test_holm_across_datasets_is_per_loss():
    rng = np.random.default_rng(2)
    rows = _rows(rng, [f"d{i}" for i in range(7)], losses=("lad", "pinball"))
    table = across_table(rows, "benchmark15")
    assert len(table) == 2 * 3
    for _, block in table.groupby("loss"):
        assert block["p_holm"].to_numpy() == pytest.approx(_holm_by_hand(block["p"]))


# -- average ranks and the Friedman test --------------------------------------------------------
def test_ranks_and_friedman_match_scipy_on_the_per_dataset_means():
    rng = np.random.default_rng(3)
    datasets = [f"d{i}" for i in range(6)]
    rows = _rows(rng, datasets, shift={"lightgbm": 0.1})
    # a tie on d0: gradient's losses are residual_prox's
    tie = (rows.dataset == "d0") & (rows.algo == "gradient")
    rows.loc[tie, "test_loss"] = _values(rows, "d0", "residual_prox").to_numpy()
    means = np.array([[_values(rows, d, a).mean() for a in FOUR] for d in datasets])
    assert dataset_means(rows, "benchmark15", "lad").to_numpy() == pytest.approx(means)
    ranks, n, p = average_ranks(rows, "benchmark15", "lad")
    assert n == 6 and list(ranks.index) == list(FOUR)
    by_dataset = np.array([stats.rankdata(line) for line in means])
    assert by_dataset[0, 1] == by_dataset[0, 2] and by_dataset[0, 1] % 1 == 0.5  # shared
    assert ranks.to_numpy() == pytest.approx(by_dataset.mean(axis=0))
    assert p == pytest.approx(stats.friedmanchisquare(*means.T).pvalue)
    text = markdown(rows)
    assert f"| lad | 6 | {' | '.join(f'{r:.2f}' for r in ranks)} | {p:.2g} |" in text


def test_friedman_needs_three_methods_and_two_datasets():
    rng = np.random.default_rng(4)
    two_methods = _rows(rng, ["a", "b", "c"], methods=("prox", "gradient"))
    ranks, n, p = average_ranks(two_methods, "benchmark15", "lad")
    assert n == 3 and len(ranks) == 2 and np.isnan(p)
    one_dataset = _rows(rng, ["a"])
    ranks, n, p = average_ranks(one_dataset, "benchmark15", "lad")
    assert n == 1 and np.isnan(p)
    assert "| lad | 1 | " in markdown(one_dataset) and " | — | " in markdown(one_dataset)


# -- per dataset and loss -----------------------------------------------------------------------
def test_holm_per_cell_is_over_that_cells_methods_only():
    rng = np.random.default_rng(5)
    # gradient higher on every split: its p is the smallest (2/1024 with 10 splits)
    rows = _rows(rng, ["a", "b"], losses=("lad", "pinball"), shift={"gradient": 0.5})
    table = paired_table(rows, "benchmark15")
    assert len(table) == 2 * 2 * 3
    for (dataset, loss), cell in table.groupby(["dataset", "loss"]):
        cell = cell.set_index("algo")
        p = []
        for algo in FOUR[1:]:
            prox, val = _values(rows, dataset, "prox", loss), _values(rows, dataset, algo, loss)
            p.append(stats.wilcoxon(val - prox).pvalue)
            d = (val - prox).to_numpy()
            assert cell.loc[algo, "median"] == pytest.approx(100 * np.median(d / prox.to_numpy()))
            assert (cell.loc[algo, "wins"], cell.loc[algo, "losses"]) == (
                (d < 0).sum(),
                (d > 0).sum(),
            )
        assert cell.loc[list(FOUR[1:]), "p"].to_numpy() == pytest.approx(p)
        assert cell.loc[list(FOUR[1:]), "p_holm"].to_numpy() == pytest.approx(_holm_by_hand(p))
    # over the whole reading (12 tests) gradient's adjusted p would be 12 × 2/1024, not 3 ×
    whole = _holm_by_hand(table["p"])
    assert not np.allclose(whole, table["p_holm"])
    gradient = table[table.algo == "gradient"]["p_holm"]
    assert gradient.to_numpy() == pytest.approx(3 * 2 / 1024)
    assert "0.0059*" in markdown(rows)


# -- missing splits ----------------------------------------------------------------------------
def test_a_method_missing_splits_is_compared_on_the_common_splits_only():
    rng = np.random.default_rng(6)
    rows = _rows(rng, ["a", "b", "c"], n_splits=6)
    gone = (rows.dataset == "a") & (rows.algo == "gradient") & rows.split.isin([0, 3])
    rows = rows[~gone]
    common = [1, 2, 4, 5]
    prox = _values(rows, "a", "prox")
    ratios = dataset_ratios(rows, "benchmark15", "lad")
    expected = _values(rows, "a", "gradient").mean() / prox.loc[common].mean() - 1
    assert ratios.loc["a", "gradient"] == pytest.approx(expected)
    expected = _values(rows, "a", "residual_prox").mean() / prox.mean() - 1  # all six splits
    assert ratios.loc["a", "residual_prox"] == pytest.approx(expected)
    means = dataset_means(rows, "benchmark15", "lad")  # the splits every method has
    for algo in FOUR:
        assert means.loc["a", algo] == pytest.approx(_values(rows, "a", algo).loc[common].mean())
    table = paired_table(rows, "benchmark15").set_index(["dataset", "algo"])
    assert table.loc[("a", "gradient"), "n"] == 4 and table.loc[("a", "lightgbm"), "n"] == 6
    d = _values(rows, "a", "gradient") - prox.loc[common]
    assert table.loc[("a", "gradient"), "p"] == pytest.approx(stats.wilcoxon(d).pvalue)


# -- subsampled datasets ------------------------------------------------------------------------
def _identity(big):
    def identity(dataset):
        params = {"max_rows": 30000, "subsample_seed": 7} if dataset in big else {}
        return {"dataset": {"name": dataset, "params": params}, "protocol": {"seed": 0}}

    return identity


NOTE = "† subsampled to 30,000 rows (seed 7) before the split: training sets of 15,000 rows"


def test_the_subsampled_footnote_appears_exactly_when_an_identity_has_max_rows():
    rng = np.random.default_rng(7)
    plain = _rows(rng, ["a", "b", "c"], identity=_identity(()))
    assert subsampled(plain).empty
    assert "†" not in markdown(plain) and "subsampled" not in markdown(plain)
    rows = _rows(rng, ["a", "b", "c"], identity=_identity({"b"}))
    assert subsampled(rows).to_dict("records") == [
        dict(dataset="b", max_rows=30000, seed=7, n_train=15000)
    ]
    text = markdown(rows)
    assert text.count(NOTE) == 3  # under each of the reading's three tables
    assert "| b† | lad |" in text and "| a | lad |" in text and "| lad | 3† |" in text
    # a dataset left out of every table (no prox rows) leaves no note
    rows = rows[~((rows.dataset == "b") & (rows.algo != "gradient"))]
    assert "†" not in markdown(rows)


def test_the_training_size_follows_the_identitys_fractions():
    rng = np.random.default_rng(8)

    def identity(dataset):
        params = {"max_rows": 20000, "subsample_seed": 3}
        return {"dataset": {"params": params}, "protocol": {"fractions": [0.6, 0.2, 0.2]}}

    rows = _rows(rng, ["a", "b"], identity=identity)
    note = "subsampled to 20,000 rows (seed 3) before the split: training sets of 12,000 rows"
    assert note in markdown(rows)


# -- Nemenyi, empty readings, duplicates, the command -------------------------------------------
def test_critical_difference_matches_demsars_table():
    # Demšar (2006), table 5(a): q_0.05 for k = 2, 3, 7, 10
    for k, q in ((2, 1.960), (3, 2.343), (7, 2.949), (10, 3.164)):
        assert critical_difference(k, 12) == pytest.approx(q * np.sqrt(k * (k + 1) / 72), 1e-3)


def test_an_empty_reading_says_so_and_duplicates_are_refused():
    assert "No rows of this reading are stored yet." in markdown(benchmark_rows(pd.DataFrame()))
    rows = _rows(np.random.default_rng(9), ["a"])
    with pytest.raises(ValueError, match="two stored runs for"):
        benchmark_rows(pd.concat([rows, rows.iloc[:1]]))


def test_the_command_reads_a_results_folder(tmp_path):
    rows = _rows(np.random.default_rng(10), ["a", "b", "c"], methods=FOUR[:3], n_splits=3)
    identity = _identity({"c"})
    results = tmp_path / "results"
    for r in rows.drop(columns=["reading", "n_splits"]).to_dict("records"):
        write_row(results, {**r, "engine": "none", "identity": identity(r["dataset"])})
    intervals = _interval_frame(np.random.default_rng(11), ["a", "b"], n_splits=3)
    for r in intervals.to_dict("records"):
        write_row(results, {**r, "engine": "none", "identity": {"dataset": r["dataset"]}})
    # rows of other experiments are left out
    write_row(
        results,
        dict(protocol="paper/20splits/T1000", dataset="a", loss="lad", algo="prox", split=0,
             test_loss=1.0, engine="exact", identity={}),
    )  # fmt: skip
    stored = benchmark_rows(load(results))
    assert len(stored) == len(rows) and set(stored["reading"]) == {"benchmark15"}
    text = markdown(stored)
    assert NOTE in text and "Datasets with fewer than 20 splits: a, b, c." in text
    stored_intervals = interval_rows(load(results))
    assert len(stored_intervals) == len(intervals)
    text += "\n" + interval_markdown(stored_intervals)
    assert "| a | prox | 3 | 47 |" in text and "No interval rows" not in text
    out, fig = tmp_path / "b.md", tmp_path / "ranks.png"
    assert 0 == main(["--results", str(results), "--out", str(out), "--figure", str(fig)])
    status = status_markdown(stored, stored_intervals)
    assert "**Partial**: 0 of the" in status  # a, b, c are no planned datasets
    assert out.read_text() == status + "\n" + text and fig.stat().st_size > 0


def test_write_docs_puts_the_tables_and_the_figure_into_the_pages_block(tmp_path, monkeypatch):
    from proxboost.experiments.report import benchmark

    results = tmp_path / "results"
    rows = _rows(np.random.default_rng(12), ["a", "b"], methods=FOUR[:3], n_splits=3)
    for r in rows.drop(columns=["reading", "n_splits"]).to_dict("records"):
        write_row(results, {**r, "engine": "none", "identity": _identity(set())(r["dataset"])})
    page = tmp_path / "docs" / "page.md"
    page.parent.mkdir()
    page.write_text("# head\n<!-- benchmark-results -->\nold\n<!-- /benchmark-results -->\nend\n")
    monkeypatch.setattr(benchmark, "DOCS_FILE", page)
    out, fig = tmp_path / "b.md", tmp_path / "figures" / "ranks.png"
    fig.parent.mkdir()
    argv = ["--results", str(results), "--out", str(out), "--figure", str(fig), "--write-docs"]
    assert 0 == main(argv)
    written = page.read_text()
    assert written.startswith("# head\n<!-- benchmark-results -->\nWritten by `python -m")
    assert out.read_text().rstrip() in written and "old" not in written
    assert "](../figures/ranks.png)" in written and written.endswith(
        "<!-- /benchmark-results -->\nend\n"
    )


# -- intervals ---------------------------------------------------------------------------------
INTERVAL_METHODS = ("prox", "lightgbm", "catboost", "quantile_forest")


def _interval_frame(rng, datasets, n_splits=6, methods=INTERVAL_METHODS, crossing=True):
    """Stored interval rows (not yet read by :func:`interval_rows`): random coverages, widths
    (per dataset a scale) and crossing shares; without the crossing columns if not ``crossing``."""
    rows = []
    for dataset in datasets:
        scale = 10.0 ** rng.integers(0, 3)
        for algo in methods:
            for k in range(n_splits):
                row = dict(
                    protocol=f"benchmark15/{n_splits}splits/T1000", dataset=dataset,
                    loss="pinball-tau0.05-0.95", algo=algo, split=k, test_loss=1.0,
                    coverage_raw=rng.uniform(0.8, 0.95),
                    coverage_calibrated=rng.uniform(0.88, 0.95),
                    width_raw=scale * rng.uniform(1, 2), width_calibrated=scale * rng.uniform(1, 2),
                    interval_correction=0.1, interval_nominal=0.9, n_calibration=47, n_coverage=48,
                )  # fmt: skip
                if crossing:
                    row |= dict(crossing_raw=rng.uniform(0, 0.1), crossing_calibrated=0.0)
                rows.append(row)
    return pd.DataFrame(rows)


def _column(rows, dataset, algo, column):
    r = rows[(rows.dataset == dataset) & (rows.algo == algo)]
    return r.set_index("split")[column].sort_index()


def test_interval_means_standard_errors_and_width_ratios_match_numpy():
    rng = np.random.default_rng(20)
    rows = interval_rows(_interval_frame(rng, ["b", "a"]))
    table = interval_table(rows)
    assert list(zip(table.dataset, table.algo)) == [
        (d, m) for d in ("a", "b") for m in INTERVAL_METHODS
    ]
    for line in table.itertuples():
        assert line.n == 6
        for kind in ("raw", "calibrated"):
            x = _column(rows, line.dataset, line.algo, f"coverage_{kind}").to_numpy()
            assert getattr(line, f"coverage_{kind}") == pytest.approx(x.mean())
            se = np.std(x, ddof=1) / np.sqrt(x.size)
            assert getattr(line, f"coverage_{kind}_se") == pytest.approx(se)
            w = _column(rows, line.dataset, line.algo, f"width_{kind}")
            prox = _column(rows, line.dataset, "prox", f"width_{kind}")
            assert getattr(line, f"width_{kind}") == pytest.approx(w.mean())
            assert getattr(line, f"width_{kind}_ratio") == pytest.approx(w.mean() / prox.mean())
            c = _column(rows, line.dataset, line.algo, f"crossing_{kind}")
            assert getattr(line, f"crossing_{kind}") == pytest.approx(c.mean())
        assert (line.guarantee_low, line.guarantee_high) == pytest.approx((0.9, 44 / 48))
    assert (table.loc[table.algo == "prox", "width_raw_ratio"] == 1.0).all()
    text = interval_markdown(rows)
    assert text.startswith("### Intervals (90 %, τ = 0.05 / 0.95)")
    first = table.iloc[1]  # a, lightgbm
    cell = f"{first.coverage_raw:.3f} ± {first.coverage_raw_se:.3f}"
    assert f"| a | lightgbm | 6 | 47 | {cell} |" in text
    assert f"| {first.width_raw_ratio:.2f}× ({first.width_raw:.3g}) |" in text
    assert "α = 0.1" in text and "n_cal = 47 here" in text and "| [0.900, 0.917] |" in text


def test_the_width_ratio_is_over_the_splits_both_have():
    rng = np.random.default_rng(21)
    frame = _interval_frame(rng, ["a"])
    frame = frame[~((frame.algo == "lightgbm") & frame.split.isin([1, 4]))]
    rows = interval_rows(frame)
    line = interval_table(rows).set_index("algo").loc["lightgbm"]
    prox = _column(rows, "a", "prox", "width_calibrated").loc[[0, 2, 3, 5]]
    w = _column(rows, "a", "lightgbm", "width_calibrated")
    assert line["n"] == 4 and line["width_calibrated_ratio"] == pytest.approx(
        w.mean() / prox.mean()
    )


def test_missing_crossing_columns_are_nan_and_shown_as_a_dash():
    rng = np.random.default_rng(22)
    old = _interval_frame(rng, ["a"], crossing=False)
    rows = interval_rows(old)
    assert rows["crossing_raw"].isna().all() and rows["crossing_calibrated"].isna().all()
    table = interval_table(rows)
    assert table["crossing_raw"].isna().all() and table["coverage_raw"].notna().all()
    assert "| — | — |" in interval_markdown(rows)
    # newer rows beside older ones: the mean is over the splits that record it
    new = _interval_frame(rng, ["a"], n_splits=6).assign(split=lambda f: f.split + 6)
    new["protocol"] = old["protocol"].iloc[0]
    rows = interval_rows(pd.concat([old, new], ignore_index=True))
    line = interval_table(rows).set_index("algo").loc["catboost"]
    assert line["n"] == 12
    expected = new.loc[new.algo == "catboost", "crossing_raw"].mean()
    assert line["crossing_raw"] == pytest.approx(expected)


def test_interval_rows_never_enter_the_benchmark_tables():
    rng = np.random.default_rng(23)
    bench = _rows(rng, ["a", "b", "c"], methods=INTERVAL_METHODS).drop(
        columns=["reading", "n_splits"]
    )
    both = pd.concat([bench, _interval_frame(rng, ["a", "b"], n_splits=10)], ignore_index=True)
    alone = benchmark_rows(bench)
    assert benchmark_rows(both)[list(alone.columns)].equals(alone)
    assert markdown(benchmark_rows(both)) == markdown(benchmark_rows(bench))
    assert set(interval_rows(both)["loss"]) == {"pinball-tau0.05-0.95"}
    assert len(interval_rows(bench)) == 0


def test_the_guarantee_is_exact_and_an_empty_section_says_so():
    assert guarantee(47, 0.9) == (pytest.approx(0.9), 44 / 48)
    # 20 × 0.9 is 18.000000000000004 in floating point: the rank is 18, not 19
    assert guarantee(19, 0.9)[1] == 18 / 20
    assert guarantee(9, 0.8)[1] == 8 / 10
    assert np.isnan(guarantee(np.nan, 0.9)[1])
    text = interval_markdown(interval_rows(pd.DataFrame()))
    assert "No interval rows are stored yet" in text
    assert interval_table(interval_rows(pd.DataFrame())).empty


# -- completeness -------------------------------------------------------------------------------
def test_the_status_counts_runs_with_every_planned_split():
    from proxboost.experiments.report.benchmark import (
        INTERVAL_DATASETS,
        INTERVAL_METHODS,
        LOSSES,
        PLANNED,
        completeness,
        status_markdown,
    )

    rng = np.random.default_rng(0)
    # engel: 20 splits planned in both readings; barro: 10 in reading (a)
    full = _rows(rng, ["engel"], methods=("prox",), n_splits=20)
    short = _rows(rng, ["barro"], methods=("prox", "gradient"), n_splits=9)  # one split missing
    ten = _rows(rng, ["barro"], methods=("lightgbm",), n_splits=10)
    rows = pd.concat([full, short, ten], ignore_index=True)
    intervals = pd.DataFrame(
        [dict(dataset="crabs", algo="catboost", split=k) for k in range(20)]
        + [dict(dataset="crabs", algo="prox", split=k) for k in range(19)]
    )
    planned = sum(len(d) for d in PLANNED.values()) * len(LOSSES) * len(METHODS) + len(
        INTERVAL_DATASETS
    ) * len(INTERVAL_METHODS)
    assert completeness(rows, intervals) == (3, planned)  # engel/prox, barro/lightgbm, crabs/cb
    assert "**Partial**: 3 of the" in status_markdown(rows, intervals)
    assert "CPU-hours" not in status_markdown(rows, intervals)  # no row records a fit time
    # the cost line: the sum of the rows' fit times, interval rows included
    rows["fit_seconds"] = 3600.0 / len(rows)
    intervals["fit_seconds"] = [18.0] * 20 + [np.nan] * 19
    assert "fits took 1.1 CPU-hours" in status_markdown(rows, intervals)  # 1 h + 360 s
