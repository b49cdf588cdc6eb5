"""SUMMARY.md and claims.csv from small stored results: the 34-row table first, deterministic output."""

import math
import re

import numpy as np
import pandas as pd

from proxboost.claims import CLAIMS_COLUMNS, STATEMENTS, judge
from proxboost.report import build_summary, intro_grid_table, main, variant_table
from proxboost.results import write_row


def _rows(dataset, loss, values_by_algo, protocol="paper/20splits/T1000", engine="exact"):
    out = []
    for algo, values in values_by_algo.items():
        for k, v in enumerate(values):
            out.append(dict(protocol=protocol, dataset=dataset, loss=loss, algo=algo, split=k, test_loss=v,
                            test_error=math.nan, engine="none" if algo in ("xgboost", "random_forest") else engine,
                            commit="c0ffee"))
    return pd.DataFrame(out)


def test_summary_opens_with_the_34_statements(tmp_path):
    g = np.linspace(1, 2, 20)
    for _, r in _rows("sniffer", "lad", {"gradient": g, "prox": g - 0.5, "random_forest": [math.nan] * 20}).iterrows():
        write_row(tmp_path, {**r.to_dict(), "identity": {}})
    main(["--results", str(tmp_path)])
    text = (tmp_path / "SUMMARY.md").read_text()
    lines = text.splitlines()
    head = lines.index("| id | statement (paper line) | verdict | rests on | numbers |")
    assert not any(line.startswith("## ") for line in lines[2:head - 4])      # nothing before the table but its intro
    table = lines[head + 2:head + 2 + 34]
    assert [row.split(" | ")[0].lstrip("| ") for row in table] == list(STATEMENTS)
    assert "| 6c | " in text and "paper/20splits/T1000, exact trees" in text
    claims = pd.read_csv(tmp_path / "claims.csv")
    assert tuple(claims.columns) == CLAIMS_COLUMNS
    assert set(claims["verdict"]) <= {"confirmed", "contradicted", "inconclusive"}
    assert (claims["scope"] == "all").sum() == 34
    cell = claims[(claims["id"] == "6c") & (claims["scope"] == "loss=lad;dataset=sniffer")].iloc[0]
    assert cell["verdict"] == "confirmed" and cell["n_support"] == 20
    assert "| random_forest | 20 | not reported |" in text


def test_summary_is_deterministic(tmp_path, curve_frame):
    curves = pd.concat([curve_frame("intro", "lad", "gradient", 2, np.linspace(1, 0.5, 11)),
                        curve_frame("intro", "lad", "prox", 2, np.linspace(1, 0.2, 11), step=1.0)])
    real = _rows("crabs", "ls", {"gradient": [1.0, 2.0], "prox": [1.5, 2.5]})
    a = build_summary(curves, real, judge(curves, real, sha="x"), "results")
    b = build_summary(curves.sample(frac=1, random_state=1), real.iloc[::-1], judge(curves, real, sha="x"), "results")
    assert a == b
    assert not re.search(r"20\d\d-\d\d-\d\dT", a) and "/tmp" not in a and str(tmp_path) not in a


def test_variant_table_engines_and_tie_rules():
    rows = []
    for split, (ex, hi) in enumerate([(5.0, 4.0), (6.0, 5.0), (7.0, 6.0), (3.0, 3.0)]):
        for engine, loss in (("exact", ex), ("hist", hi)):
            rows.append(dict(protocol="p/4splits/T10", dataset="engel", loss="lad", algo="prox", split=split,
                             engine=engine, test_loss=loss, fit_seconds=2.0 if engine == "exact" else 0.5))
    lines = variant_table(pd.DataFrame(rows), "engine", "Engines", "why")
    table = [line for line in lines if line.startswith("| p/")]
    cells = [c.strip() for c in table[0].strip("|").split("|")]
    assert len(table) == 1 and cells[3:5] == ["prox", "4"]
    assert float(cells[5]) == 1.0 and cells[7] == "0/1/3" and cells[9] == "2 / 0.5"
    assert variant_table(pd.DataFrame(rows), "tie_rule", "Tie rules", "why") == []        # no tie_rule column
    tied = pd.DataFrame(rows).assign(tie_rule=lambda d: np.where(d["engine"] == "exact", "midpoint", "authors"),
                                     engine="exact")
    lines = variant_table(tied, "tie_rule", "Tie rules", "why")
    assert any(line.startswith("**authors − midpoint**") for line in lines)


def test_intro_grid_table_per_setting(curve_frame):
    tt = np.arange(501)
    frames = []
    for nu in (0.05, 0.1):
        for seed in range(2):
            frames.append(curve_frame("intro", "lad", "gradient", 2, 0.12 + 0.5 * np.exp(-tt / 20), seed=seed,
                                      learning_rate=nu))
            frames.append(curve_frame("intro", "lad", "prox", 2, 0.6 * np.exp(-tt / 200), step=1.0, seed=seed,
                                      learning_rate=nu))
    lines = intro_grid_table(pd.concat(frames))
    rows = [line for line in lines if line.startswith("| 0.")]
    assert len(rows) == 2 and all(" | 2 | " in r and r.endswith("| 2/0/0 | 2/0/0 | 2/0/0 |") for r in rows)


def test_synthetic_table_shows_seed_0_under_the_default_rule(curve_frame):
    from proxboost.report import synthetic_tables

    frames = [curve_frame("convergence", "lad", "prox", 3, np.linspace(1, 0.5, 11), step=1.0, seed=s, tie_rule=r)
              for s in range(3) for r in ("midpoint", "authors")]
    lines = synthetic_tables(pd.concat(frames))
    rows = [line for line in lines if line.startswith("| x |")]
    assert len(rows) == 1 and "| 0 | midpoint |" in rows[0]
    assert any("6 runs stored" in line for line in lines)
