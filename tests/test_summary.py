"""SUMMARY.md and claims.csv from small stored results: the 34-row table first, deterministic
output.
"""

import math
import re

import numpy as np
import pandas as pd
import pytest

from proxboost.experiments.claims import CLAIMS_COLUMNS, STATEMENTS, judge
from proxboost.experiments.report.summary import (
    build_summary,
    intro_grid_table,
    main,
    variant_table,
    verdict_agreement,
)
from proxboost.experiments.store.results import write_row


def _rows(dataset, loss, values_by_algo, protocol="paper/20splits/T1000", engine="exact"):
    out = []
    for algo, values in values_by_algo.items():
        for k, v in enumerate(values):
            out.append(
                dict(
                    protocol=protocol,
                    dataset=dataset,
                    loss=loss,
                    algo=algo,
                    split=k,
                    test_loss=v,
                    test_error=math.nan,
                    engine="none" if algo in ("xgboost", "random_forest") else engine,
                    commit="c0ffee",
                )
            )
    return pd.DataFrame(out)


@pytest.mark.slow
def test_summary_opens_with_the_34_statements(tmp_path):
    g = np.linspace(1, 2, 20)
    for _, r in _rows(
        "sniffer", "lad", {"gradient": g, "prox": g - 0.5, "random_forest": [math.nan] * 20}
    ).iterrows():
        write_row(tmp_path, {**r.to_dict(), "identity": {}})
    main(["--results", str(tmp_path)])
    text = (tmp_path / "SUMMARY.md").read_text()
    lines = text.splitlines()
    head = lines.index("| id | statement (paper section) | verdict | rests on | numbers |")
    assert not re.search(r"\bl\. ?\d", text)  # sections of the paper, not lines of its source
    assert "| 6c | lad, pinball: P always better than G (Section 5.2.1) |" in text
    # nothing before the table but its intro (what the verdicts are, how the criteria came about)
    intro = lines.index("## The paper's statements")
    assert [line for line in lines[:head] if line.startswith("## ")] == [lines[intro]]
    assert sum(bool(line) for line in lines[intro + 1 : head]) == 2
    table = lines[head + 2 : head + 2 + 34]
    assert [row.split(" | ")[0].lstrip("| ") for row in table] == list(STATEMENTS)
    assert "| 6c | " in text and "paper/20splits/T1000, exact trees" in text
    claims = pd.read_csv(tmp_path / "claims.csv")
    assert tuple(claims.columns) == CLAIMS_COLUMNS
    assert set(claims["verdict"]) <= {"confirmed", "contradicted", "inconclusive"}
    assert (claims["scope"] == "all").sum() == 34
    cell = claims[(claims["id"] == "6c") & (claims["scope"] == "loss=lad;dataset=sniffer")].iloc[0]
    assert cell["verdict"] == "confirmed" and cell["n_support"] == 20
    assert "| random_forest | 20 | not reported |" in text


@pytest.mark.slow
def test_summary_is_deterministic(tmp_path, curve_frame):
    curves = pd.concat(
        [
            curve_frame("intro", "lad", "gradient", 2, np.linspace(1, 0.5, 11)),
            curve_frame("intro", "lad", "prox", 2, np.linspace(1, 0.2, 11), step=1.0),
        ]
    )
    real = _rows("crabs", "ls", {"gradient": [1.0, 2.0], "prox": [1.5, 2.5]})
    a = build_summary(curves, real, judge(curves, real, sha="x"), "results")
    b = build_summary(
        curves.sample(frac=1, random_state=1),
        real.iloc[::-1],
        judge(curves, real, sha="x"),
        "results",
    )
    assert a == b
    assert not re.search(r"20\d\d-\d\d-\d\dT", a) and "/tmp" not in a and str(tmp_path) not in a


def test_variant_table_engines_and_tie_rules():
    rows = []
    for split, (ex, hi) in enumerate([(5.0, 4.0), (6.0, 5.0), (7.0, 6.0), (3.0, 3.0)]):
        for engine, loss in (("exact", ex), ("hist", hi)):
            rows.append(
                dict(
                    protocol="p/4splits/T10",
                    dataset="engel",
                    loss="lad",
                    algo="prox",
                    split=split,
                    engine=engine,
                    test_loss=loss,
                    fit_seconds=2.0 if engine == "exact" else 0.5,
                )
            )
    lines = variant_table(pd.DataFrame(rows), "engine", "Engines", "why")
    table = [line for line in lines if line.startswith("| p/")]
    cells = [c.strip() for c in table[0].strip("|").split("|")]
    assert len(table) == 1 and cells[3:5] == ["prox", "4"]
    assert float(cells[5]) == 1.0 and cells[7] == "0/1/3" and cells[9] == "2 / 0.5"
    assert (
        variant_table(pd.DataFrame(rows), "tie_rule", "Tie rules", "why") == []
    )  # no tie_rule column
    tied = pd.DataFrame(rows).assign(
        tie_rule=lambda d: np.where(d["engine"] == "exact", "midpoint", "authors"), engine="exact"
    )
    lines = variant_table(tied, "tie_rule", "Tie rules", "why")
    assert any(line.startswith("**authors − midpoint**") for line in lines)


def test_verdict_agreement_pairs_cells_that_differ_only_in_the_rule():
    base, authors, hist = (
        "paper/20splits/T1000, exact trees",
        "paper/20splits/T1000, exact trees, tie rule authors",
        "paper/20splits/T1000, hist trees",
    )
    claims = pd.DataFrame(
        [
            ("6c", "all", "confirmed", base),
            ("6c", "all", "contradicted", authors),  # "all": not paired
            ("6c", "loss=lad;dataset=crabs", "confirmed", base),
            ("6c", "loss=lad;dataset=crabs", "confirmed", authors),
            ("6c", "loss=pinball;dataset=crabs", "confirmed", base),
            ("6c", "loss=pinball;dataset=crabs", "inconclusive", authors),
            ("6d", "loss=lad;dataset=engel", "contradicted", authors),  # one rule only
            ("6d", "loss=lad;dataset=engel", "confirmed", hist),  # other engine, other rule
            ("1a", "loss=lad", "confirmed", "synthetic convergence, exact trees, seeds 0–4 (5)"),
        ],
        columns=["id", "scope", "verdict", "protocol"],
    )
    lines = verdict_agreement(claims, "tie_rule")
    assert lines[0].startswith(
        "Verdicts of the cells judged under both **authors** and **midpoint**: 1 of 2 the same"
    )
    assert (
        "| 6c | loss=pinball;dataset=crabs | paper/20splits/T1000 | inconclusive | confirmed |"
        in lines
    )
    assert sum(line.startswith("| 6") for line in lines) == 1
    assert verdict_agreement(claims, "engine") == []  # no cell under both engines
    same = claims[claims["scope"] != "loss=pinball;dataset=crabs"]
    assert verdict_agreement(same, "tie_rule")[0].endswith("1 of 1 the same.")


def test_intro_grid_table_per_setting(curve_frame):
    tt = np.arange(501)
    frames = []
    for nu in (0.05, 0.1):
        for seed in range(2):
            frames.append(
                curve_frame(
                    "intro",
                    "lad",
                    "gradient",
                    2,
                    0.12 + 0.5 * np.exp(-tt / 20),
                    seed=seed,
                    learning_rate=nu,
                )
            )
            frames.append(
                curve_frame(
                    "intro",
                    "lad",
                    "prox",
                    2,
                    0.6 * np.exp(-tt / 200),
                    step=1.0,
                    seed=seed,
                    learning_rate=nu,
                )
            )
    lines = intro_grid_table(pd.concat(frames))
    rows = [line for line in lines if line.startswith("| 0.")]
    assert len(rows) == 2 and all(
        " | 2 | " in r and r.endswith("| 2/0/0 | 2/0/0 | 2/0/0 |") for r in rows
    )


def test_synthetic_table_shows_seed_0_under_the_default_rule(curve_frame):
    from proxboost.experiments.report.summary import synthetic_tables

    frames = [
        curve_frame(
            "convergence", "lad", "prox", 3, np.linspace(1, 0.5, 11), step=1.0, seed=s, tie_rule=r
        )
        for s in range(3)
        for r in ("midpoint", "authors")
    ]
    lines = synthetic_tables(pd.concat(frames))
    rows = [line for line in lines if line.startswith("| x |")]
    assert len(rows) == 1 and "| 0 | midpoint |" in rows[0]
    assert any("6 runs stored" in line for line in lines)


@pytest.mark.slow
def test_hinge_tables_show_the_loss_independent_methods_once_per_split(classification_rows):
    from proxboost.experiments.report.summary import real_world_tables

    raw = classification_rows()
    lines = real_world_tables(raw)
    start = lines.index("### spam")
    tables = {}
    for loss in ("exponential", "hinge"):
        i = lines.index(f"**{loss}**", start)
        j = lines.index("", i + 2)
        tables[loss] = {
            r.split(" | ")[0].lstrip("| "): [c.strip() for c in r.strip("|").split("|")]
            for r in lines[i + 4 : j]
        }
    for loss, table in tables.items():
        g = (
            raw[(raw["algo"] == "gradient") & (raw["loss"] == loss)]
            .sort_values("split")["test_error"]
            .to_numpy()
        )
        for algo in ("random_forest", "lightgbm", "sklearn_hgb"):
            cells = table[f"{algo} (loss-independent)"]
            err = raw[raw["algo"] == algo].sort_values("split")["test_error"].to_numpy()
            assert cells[1] == "20" and cells[2] == "not reported"
            mean, std = (float(v) for v in cells[6].split(" ± "))
            assert mean == pytest.approx(err.mean(), rel=1e-3) and std == pytest.approx(
                err.std(ddof=1), rel=1e-3
            )
            assert float(cells[7]) == pytest.approx(
                np.median(err - g), rel=1e-3
            )  # paired with this loss's gradient
    assert any("run with `exponential`" in line for line in lines)


def test_outlying_splits_are_named_under_their_table():
    from proxboost.experiments.report.summary import real_world_tables

    rng = np.random.default_rng(1)
    g = rng.uniform(1, 2, 20)
    p = g - 0.1
    p[7] = 50 * np.median(p)  # one test point with a huge loss
    lines = real_world_tables(_rows("sniffer", "ls", {"gradient": g, "prox": p}))
    notes = [line for line in lines if line.startswith("Outlying splits")]
    assert len(notes) == 1
    assert "split 7 of prox" in notes[0] and "gradient" not in notes[0].split(":", 1)[1]
    ratio = float(re.search(r"test loss [^,]+, (\d+) × its median", notes[0]).group(1))
    assert ratio == round(p[7] / np.median(p))
    p[7] = 9 * np.median(p)  # below the factor: no note
    assert not any(
        line.startswith("Outlying")
        for line in real_world_tables(_rows("sniffer", "ls", {"gradient": g, "prox": p}))
    )


def test_baselines_table_against_an_independent_computation():
    from scipy import stats

    from proxboost.experiments.report.summary import baselines_table

    rng = np.random.default_rng(0)
    base = rng.uniform(1, 2, 20)
    frames = []
    for loss in ("lad", "pinball"):
        values = {
            "gradient": base,
            "prox": base - 0.1 * rng.uniform(0.5, 1.5, 20),
            "residual_prox": base + 0.05,
            "lightgbm": base,
            "sklearn_hgb": base + rng.normal(0, 0.1, 20),
        }
        frames.append(
            _rows("engel", loss, values).assign(
                n_grid=lambda d: np.where(d["algo"].isin(["lightgbm", "sklearn_hgb"]), 15, 90)
            )
        )
    real = pd.concat(frames, ignore_index=True)
    lines = baselines_table(real)
    rows = [
        line
        for line in lines
        if line.startswith("| lad | engel") or line.startswith("| pinball | engel")
    ]
    assert len(rows) == 2
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    assert cells[2] == "paper/20splits/T1000, exact trees, 20 splits"
    lad = real[real["loss"] == "lad"]

    def col(algo):
        return lad[lad["algo"] == algo].sort_values("split")["test_loss"].to_numpy()

    d = col("prox") - col("lightgbm")
    p = stats.wilcoxon(d).pvalue
    assert (
        cells[3]
        == f"{np.median(d):.3g} ({np.median(d) / np.median(col('lightgbm')):+.1%}) · 20/0/0 · p"
        f" {p:.2g}"
    )
    assert cells[5].startswith("0.05 (") and " · 0/0/20 · " in cells[5]  # RP − LGBM: always worse
    assert any("90 grid points against 15" in line for line in lines)
    assert baselines_table(_rows("engel", "lad", {"gradient": base}))[0].startswith(
        "_No stored LightGBM"
    )


@pytest.mark.slow
def test_cpu_table_counts_every_stored_row_once(classification_rows, tmp_path, capsys):
    from proxboost.experiments.report.summary import cpu_table

    raw = classification_rows(n_splits=4)
    lines = cpu_table(raw)
    header = [
        c.strip()
        for c in next(line for line in lines if line.startswith("| dataset")).strip("|").split("|")
    ]
    spam = dict(
        zip(
            header,
            [
                c.strip()
                for c in (
                    next(line for line in lines if line.startswith("| spam")).strip("|").split("|")
                )
            ],
        )
    )
    # fit_seconds = 1 + split: 10 s per method and loss; random forests only ran once per split
    assert spam["rows"] == str(len(raw)) and spam["random_forest"] == "< 0.01"
    assert float(spam["total"]) == pytest.approx(10 * (7 * 2 + 3) / 3600, abs=0.005)
    assert spam["total"] == f"{10 * (7 * 2 + 3) / 3600:.2f}"
    for _, r in raw.iterrows():
        write_row(tmp_path, {**r.to_dict(), "identity": {}})
    main(["--results", str(tmp_path), "--cpu-table"])
    out = capsys.readouterr().out
    assert out.startswith("**paper/20splits/T1000** (68 rows)") and "| spam | 68 |" in out
    main(["--results", str(tmp_path), "--baselines-table"])
    assert capsys.readouterr().out.startswith("_No stored LightGBM")
    assert not (tmp_path / "SUMMARY.md").exists()  # tables are printed only


@pytest.mark.slow
def test_summary_dates_the_stored_rows_against_the_criteria():
    from proxboost.experiments.claims.criteria import CRITERIA_FIRST_COMMIT, CRITERIA_FIRST_WRITTEN
    from proxboost.experiments.report.summary import provenance

    written = pd.Timestamp(CRITERIA_FIRST_WRITTEN)
    g = np.linspace(1, 2, 20)
    new = _rows("crabs", "lad", {"gradient": g, "prox": g - 0.5}).assign(
        created=(written + pd.Timedelta(hours=2)).isoformat()
    )
    old = _rows("crabs", "lad", {"gradient": g, "prox": g - 0.4}, engine="hist").assign(
        created=(written - pd.Timedelta(hours=3)).isoformat()
    )
    both = pd.concat([new, old], ignore_index=True)
    text = provenance(None, both, judge(None, both, sha="x"))[0]
    assert f"`{CRITERIA_FIRST_COMMIT}`" in text and "after the first results" in text
    assert f"real-world rows: {len(new)} of {len(both)} created after them" in text
    assert (
        f"{len(old)} rows of paper/20splits/T1000, hist trees (crabs): no verdict rests on them"
        in text
    )
    # the same old rows alone: now the verdicts rest on them, and the summary says which
    claims = judge(None, old, sha="x")
    alone = provenance(None, old, claims)[0]
    resting = claims[(claims["scope"] == "all") & claims["protocol"].str.contains("hist trees")]
    assert f"real-world rows: 0 of {len(old)} created after them" in alone and len(resting)
    assert f"hist trees (crabs): the verdicts of {', '.join(resting['id'])} rest on them" in alone
    assert "no creation time" in provenance(None, new.drop(columns="created"), None)[0]


@pytest.mark.slow
def test_summary_gives_every_reading_beside_the_headline(classification_rows):
    real = classification_rows()
    claims = judge(None, real, sha="x")
    text = build_summary(None, real, claims, "results")
    row = next(line for line in text.splitlines() if line.startswith("| 6h | "))
    assert "readings: exponential and hinge (headline)" in row and ", hinge " in row
    details = text.split("### 6h. ", 1)[1].split("\n### ", 1)[0]
    for name in ("exponential and hinge", "hinge"):
        verdict = claims.loc[claims["scope"] == f"reading={name}", "verdict"].iloc[0]
        assert f"- **{name}**: {verdict}. " in details
    cells = [line for line in details.splitlines() if line.startswith("| loss=")]
    assert len(cells) == 8 and "reading=" not in details.split("| scope |", 1)[1]


@pytest.mark.slow
def test_summary_says_which_verdicts_survive_the_corrected_test():
    from proxboost.experiments.claims.judging import second_readings
    from proxboost.experiments.report.second_reading import corrected_table

    # 6c: P below G on every split of 12 cells, the mean carried by one split
    d = -np.concatenate([0.001 * (1 + np.arange(19)), [10.0]])
    rows = []
    for ds in ("whitewine", "redwine", "bostonhousing", "crabs", "engel", "sniffer"):
        for loss in ("lad", "pinball"):
            for algo, shift in (("gradient", 0.0), ("prox", d)):
                for k, v in enumerate(np.linspace(1.0, 2.0, 20) + shift):
                    rows.append(
                        dict(
                            protocol="paper/20splits/T1000",
                            dataset=ds,
                            loss=loss,
                            algo=algo,
                            split=k,
                            test_loss=v,
                            engine="exact",
                        )
                    )
    claims = judge(None, pd.DataFrame(rows), sha="x")
    second = second_readings(claims).set_index("id")
    assert list(second.index) == ["6c"]  # the other real-world statements have no rows here
    assert second.loc["6c", "wilcoxon"] == "confirmed" and not second.loc["6c", "survives"]
    table = "\n".join(corrected_table(claims))
    assert "| 6c | headline | confirmed | inconclusive | **no** |" in table
    assert "; change: 6c confirmed → inconclusive." in table
    text = build_summary(None, pd.DataFrame(rows), claims, "results")
    assert "### Real-world verdicts under the corrected resampled t-test" in text
    details = text.split("### 6c. ", 1)[1].split("\n### ", 1)[0]
    assert "- **headline**: inconclusive. " in details
    assert "test=" not in details.split("| scope |", 1)[1]
