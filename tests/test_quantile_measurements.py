"""The quantile measurements' tables from stored rows (fake rows whose answers are known by
construction: ratios, pairing on splits, the guarantee's interval, the step rule)."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from proxboost.experiments.report import quantile_measurements as qm

N = 20


def _row(dataset, loss, algo, split, test_loss, protocol=qm.PAPER, **extra):
    return dict(
        protocol=protocol,
        dataset=dataset,
        loss=loss,
        algo=algo,
        engine=extra.pop("engine", "exact"),
        tie_rule=extra.pop("tie_rule", "midpoint"),
        split=split,
        test_loss=test_loss,
        fit_seconds=extra.pop("fit_seconds", 1.0),
        refit_seconds=extra.pop("refit_seconds", 0.0),
        **extra,
    )


def _levels_rows(dataset="engel", algo="prox", multi_splits=range(N), levels=(2.2, 2.0, 1.8)):
    rows = []
    for t in qm.LEVELS:
        rows += [_row(dataset, f"pinball-tau{t:g}", algo, s, 2.0) for s in range(N)]
        # another tie rule and another engine, with other losses: never read
        rows += [
            _row(dataset, f"pinball-tau{t:g}", algo, s, 9.0, tie_rule="authors") for s in range(N)
        ]
        rows += [_row(dataset, f"pinball-tau{t:g}", algo, s, 9.0, engine="hist") for s in range(N)]
    rows += [
        _row(
            dataset,
            qm.MULTI_LOSS,
            algo,
            s,
            float(np.mean(levels)),
            test_loss_levels=json.dumps(list(levels)),
            fit_seconds=1.5,
            refit_seconds=0.3,
        )
        for s in multi_splits
    ]
    return rows


def test_the_price_is_the_per_level_ratio_on_paired_splits_and_the_time_over_three_fits():
    table = qm.price_table(pd.DataFrame(_levels_rows(multi_splits=range(5))))
    cell = table[(table["algo"] == "prox") & (table["dataset"] == "engel")]
    assert cell["n"].tolist() == [5, 5, 5]  # the splits both have
    assert np.allclose(cell["median_ratio"], [1.1, 1.0, 0.9])
    assert np.allclose(cell["time_ratio"], 1.8 / 3.0)


def test_the_time_ratio_is_a_median_over_splits_not_spoilt_by_a_first_split_that_compiled():
    rows = _levels_rows()
    for r in rows:
        if r["split"] == 0 and r["loss"] == "pinball-tau0.05" and r["tie_rule"] == "midpoint":
            r["fit_seconds"] = 300.0  # a fresh worker's first fit, compiling the loop
    table = qm.price_table(pd.DataFrame(rows))
    cell = table[(table["algo"] == "prox") & (table["dataset"] == "engel")]
    assert np.allclose(cell["time_ratio"], 1.8 / 3.0)
    assert table[table["dataset"] != "engel"]["n"].eq(0).all()
    summary = qm.price_summary(table).set_index("algo")
    assert summary.loc["prox", "cells"] == 3 and summary.loc["prox", "ratio_target"] == "pending"


def test_the_price_targets_are_judged_once_every_cell_is_stored():
    rows = []
    for dataset in qm.DATASETS:
        rows += _levels_rows(dataset, levels=(2.0, 2.0, 2.06))  # ratios 1, 1, 1.03
    summary = qm.price_summary(qm.price_table(pd.DataFrame(rows))).set_index("algo")
    assert summary.loc["prox", "cells"] == 18
    assert summary.loc["prox", "median_ratio"] == pytest.approx(1.0)
    assert summary.loc["prox", "ratio_target"] == "met"
    assert summary.loc["prox", "time_target"] == "met"  # 1.8 s against 3 s: 0.6
    assert summary.loc["gradient", "ratio_target"] == "pending"


def _interval_rows(coverages, dataset="engel", algo="prox", n_cal=29, protocol=qm.PAPER):
    return pd.DataFrame(
        [
            _row(
                dataset,
                qm.MULTI_LOSS,
                algo,
                s,
                1.0,
                protocol,
                test_loss_levels=json.dumps([1.0, 1.0, 1.0]),
                coverage_raw=c - 0.1,
                coverage_calibrated=c,
                width_raw=1.0,
                width_calibrated=1.2,
                crossing_raw=0.0,
                crossing_calibrated=0.0,
                n_calibration=n_cal,
                interval_nominal=0.9,
            )
            for s, c in enumerate(coverages)
        ]
    )


def test_the_calibrated_coverage_is_held_against_the_guarantee_widened_by_two_se():
    rng = np.random.default_rng(0)
    good = 0.9 + 0.02 * rng.standard_normal(N)
    line = qm.coverage_table(_interval_rows(good)).query("algo == 'prox' and dataset == 'engel'")
    se = good.std(ddof=1) / math.sqrt(N)
    assert line["coverage_calibrated_se"].iloc[0] == pytest.approx(se)
    # n_cal = 29, alpha = 0.1: ceil(30 * 0.9) / 30 = 0.9
    assert line["low"].iloc[0] == pytest.approx(0.9 - 2 * se)
    assert line["high"].iloc[0] == pytest.approx(27 / 30 + 2 * se)
    assert line["within"].iloc[0]
    low = 0.8 + 0.001 * rng.standard_normal(N)
    line = qm.coverage_table(_interval_rows(low)).query("algo == 'prox' and dataset == 'engel'")
    assert not line["within"].iloc[0]


def test_the_random_ties_table_reads_its_own_rows_only():
    """The closed rows (coverage 0.95: above the guarantee) and the random-ties rows (0.90)
    of the same runs: each table reads its own protocol's rows, and the page shows both."""
    rng = np.random.default_rng(1)
    closed = _interval_rows(0.95 + 0.001 * rng.standard_normal(N))
    ties = _interval_rows(0.9 + 0.001 * rng.standard_normal(N), protocol=qm.TIES)
    rows = pd.concat([closed, ties], ignore_index=True)
    pick = "algo == 'prox' and dataset == 'engel'"
    assert not qm.coverage_table(rows).query(pick)["within"].iloc[0]
    line = qm.coverage_table(rows, qm.TIES).query(pick)
    assert line["within"].iloc[0] and line["n"].iloc[0] == N
    assert line["coverage_calibrated"].iloc[0] == pytest.approx(ties["coverage_calibrated"].mean())
    page = qm.markdown(pd.concat([rows, pd.DataFrame(_levels_rows("crabs"))], ignore_index=True))
    assert "Within the guarantee: 0 of 1 cells judged (11 without rows)." in page
    assert "Within the guarantee: 1 of 1 cells judged (11 without rows)." in page


def _step_rows(dataset, loss, delta, n=N):
    grid = [_row(dataset, loss, "prox", s, 1.0 + 0.01 * s) for s in range(n)]
    auto = [
        _row(dataset, loss, "prox", s, 1.0 + 0.01 * s + d, qm.AUTO) for s, d in enumerate(delta)
    ]
    return grid + auto


def test_the_step_rule_needs_every_cell_and_names_the_ones_where_auto_is_worse():
    rows = []
    for dataset in qm.DATASETS:
        for loss in qm.STEP_AUTO_LOSSES:
            rows += _step_rows(dataset, loss, np.linspace(-0.02, 0.01, N))  # auto mostly lower
    table = qm.step_auto_table(pd.DataFrame(rows))
    assert (table["n"] == N).all() and table["ok"].all()
    assert "qualifies as the default" in qm.step_auto_decision(table)
    # crabs/lad: auto higher by 0.05 on every split
    worse = [r for r in rows if not (r["dataset"] == "crabs" and r["loss"] == "lad")]
    worse += _step_rows("crabs", "lad", np.full(N, 0.05))
    table = qm.step_auto_table(pd.DataFrame(worse))
    cell = table.set_index(["dataset", "loss"]).loc[("crabs", "lad")]
    assert cell["median_delta"] == pytest.approx(0.05) and cell["losses"] == N and not cell["ok"]
    decision = qm.step_auto_decision(table)
    assert "crabs/lad" in decision and "stays" in decision
    partial = qm.step_auto_table(pd.DataFrame(_step_rows("engel", "lad", np.zeros(N))))
    assert qm.step_auto_decision(partial).startswith("pending: 1 of 12")


def test_the_page_writes_between_its_markers(tmp_path):
    page = tmp_path / "quantiles.md"
    page.write_text(f"before\n{qm.BEGIN}\nold\n{qm.END}\nafter\n")
    text = qm.markdown(pd.DataFrame(_levels_rows()))
    qm.write_docs(text, page)
    written = page.read_text()
    assert written.startswith("before\n") and written.endswith(f"{qm.END}\nafter\n")
    assert "old" not in written and "| prox | engel | 20 | 1.1 | 1 | 0.9 | 0.6 |" in written
    assert "pending" in written


def test_the_command_reads_the_stored_rows(tmp_path, capsys):
    from proxboost.experiments.store.results import write_row

    for row in _levels_rows(multi_splits=range(3)):
        # an identity of its own per run, as stored runs have (one folder each)
        run = {k: row[k] for k in ("loss", "algo", "engine", "tie_rule")}
        write_row(tmp_path, {**row, "identity": run})
    qm.main(["--results", str(tmp_path)])
    printed = capsys.readouterr().out
    assert "| prox | engel | 3 | 1.1 | 1 | 0.9 | 0.6 |" in printed
