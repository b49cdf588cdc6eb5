"""The reported numerics version while a recompute is partial (proxboost.experiments.plan.versions):
tiny results folders with version-2 rows and curves, then part and all of their version-3
counterparts."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from proxboost.experiments.claims.__main__ import NOT_COMPUTED, compare_versions
from proxboost.experiments.claims.__main__ import main as claims_main
from proxboost.experiments.plan import versions
from proxboost.experiments.report.summary import write_reports
from proxboost.experiments.store import results

N_SPLITS = 20
SNIFFER = {"name": "sniffer", "params": {}, "sha256": {"sniffer.csv": "0" * 64}}
GRID = {"learning_rate": [0.1], "max_depth": [1]}
PROTOCOL = {"fractions": [0.5, 0.25, 0.25], "max_estimators": 10, "n_splits": N_SPLITS, "seed": 0}


def _identity(algo, version):
    method = {"algo": algo, "engine": "exact", "options": {"tie_rule": "midpoint"}}
    text = results.canonical_json(
        {
            "numerics_version": 2,
            "dataset": SNIFFER,
            "loss": {"name": "lad"},
            "method": method,
            "grid": GRID,
            "protocol": PROTOCOL,
        }
    )
    # a version-2 identity as stored, its version-3 counterpart as the recompute will store it
    return text if version == 2 else versions.target_identity(text, version)


def _write_run(root, algo, version, values, splits=range(N_SPLITS), fit_seconds=None):
    identity = _identity(algo, version)
    for k in splits:
        timing = {} if fit_seconds is None else {"fit_seconds": float(fit_seconds[k])}
        results.write_row(
            root,
            {
                **timing,
                "protocol": "paper/20splits/T10",
                "dataset": "sniffer",
                "loss": "lad",
                "algo": algo,
                "engine": "exact",
                "split": k,
                "task": "regression",
                "test_loss": float(values[k]),
                "test_error": math.nan,
                "n_splits": N_SPLITS,
                "tie_rule": "midpoint",
                "identity": identity,
                "commit": f"v{version}",
            },
        )


def _write_legacy_row(root):
    """A version-0 row (stored before identities named a numerics version): gradient on the hist
    engine, a computation of its own beside the exact-engine runs of ``_write_run``."""
    legacy = json.loads(_identity("gradient", 2))
    legacy["numerics_version"] = 0
    legacy["method"]["engine"] = "hist"
    results.write_row(
        root,
        {
            "protocol": "paper/20splits/T10",
            "dataset": "sniffer",
            "loss": "lad",
            "algo": "gradient",
            "engine": "hist",
            "split": 0,
            "test_loss": 1.0,
            "n_splits": 1,
            "identity": legacy,
        },
    )


def _curve_identity(version):
    text = results.canonical_json(
        {
            "numerics_version": 2,
            "dataset": {"name": "regression", "params": {}, "seed": 0},
            "split": "halves",
            "loss": {"name": "lad"},
            "method": {"algo": "gradient", "engine": "exact", "options": {"tie_rule": "midpoint"}},
            "params": {"max_depth": 3, "learning_rate": 0.05, "n_estimators": 5},
            "grid_predictions": 0,
        }
    )
    return text if version == 2 else versions.target_identity(text, version)


def _write_curve(root, version, offset=0.0):
    """A curve file as :func:`proxboost.experiments.fits.curves.run_one` writes it (settings on the
    first row)."""
    identity = _curve_identity(version)
    t = np.arange(6)
    curve = pd.DataFrame(
        {
            "iteration": t,
            "seconds": 0.01 * t,
            "train_loss": np.exp(-t) + offset,
            "test_loss": np.exp(-t) + 0.1 + offset,
            "n_leaves": [math.nan, 8, 8, 8, 8, 8],
        }
    )
    settings = {
        "experiment": "convergence",
        "dataset": "regression",
        "task": "regression",
        "loss": "lad",
        "algo": "gradient",
        "max_depth": 3,
        "learning_rate": 0.05,
        "step": math.nan,
        "n_estimators": 5,
        "tau": math.nan,
        "beta": math.nan,
        "newton_steps": math.nan,
        "seed": 0,
        "random_state": 0,
        "engine": "exact",
        "tie_rule": "midpoint",
        "n_train": 10,
        "n_test": 10,
        "n_features": 1,
        "split": "halves",
        "fit_seconds": 0.05,
        "identity_hash": results.identity_hash(identity),
        "identity": identity,
        "commit": f"v{version}",
    }
    for key, value in settings.items():
        col = pd.Series([None] * len(curve), dtype=object)
        col.iloc[0] = value
        curve[key] = col
    name = "depth-03_nu-0.05_T-5_seed-0_exact_midpoint"
    short = results.identity_hash(identity)[: results.HASH_LENGTH]
    path = root / "synthetic/convergence/regression/lad/gradient" / f"{name}_{short}.csv"
    results.atomic_write_csv(curve, path)
    return path


GRADIENT = np.linspace(1.0, 2.0, N_SPLITS)
PROX = GRADIENT - 0.5  # version 2: prox below gradient on every split
PROX_V3 = GRADIENT + 0.5  # version 3: prox above gradient on every split


@pytest.fixture
def store(tmp_path):
    """A folder of version-2 results (two runs, one curve) and its manifest."""
    _write_run(tmp_path, "gradient", 2, GRADIENT)
    _write_run(tmp_path, "prox", 2, PROX)
    _write_curve(tmp_path, 2)
    path, n = versions.write_manifest(tmp_path)
    assert path == tmp_path / versions.MANIFEST and n == 3
    return tmp_path


def _versions_in(df):
    return {json.loads(s)["numerics_version"] for s in df["identity"].dropna().unique()}


def test_target_version_is_never_below_the_code():
    assert versions.TARGET_VERSION >= results.NUMERICS_VERSION


@pytest.mark.slow
def test_manifest_names_the_version_3_identities(store):
    m = versions.read_manifest(store)
    assert sorted(m["kind"]) == ["curve", "run", "run"]
    assert set(m["version"]) == {3} and set(m["source_version"]) == {2}
    run = m[m["kind"] == "run"].iloc[0]
    assert run["splits"] == N_SPLITS
    assert run["path"].endswith(run["hash"][: results.HASH_LENGTH])
    curve = m[m["kind"] == "curve"].iloc[0]
    assert curve["hash"] == results.identity_hash(_curve_identity(3))
    # rewriting gives the same manifest (make results writes it at each start)
    before = (store / versions.MANIFEST).read_bytes()
    versions.write_manifest(store)
    assert (store / versions.MANIFEST).read_bytes() == before


@pytest.mark.slow
def test_version_2_only(store):
    assert versions.reported_version(store) == 2
    assert versions.progress(store) == (0, 3)
    assert _versions_in(versions.load(store)) == {2}
    assert versions.progress_line(store) == (
        "Recompute to numerics version 3 in progress: 0 of 3 computations stored"
        " — `make results` resumes it"
    )


@pytest.mark.slow
def test_partial_version_3_reports_version_2(store):
    _write_run(store, "gradient", 3, GRADIENT + 100)  # one run complete
    _write_run(store, "prox", 3, PROX_V3 + 100, splits=range(5))  # one run in part: not counted
    assert versions.progress(store) == (1, 3)
    assert versions.reported_version(store) == 2
    rows = versions.load(store)
    assert _versions_in(rows) == {2} and len(rows) == 2 * N_SPLITS
    assert (rows["test_loss"] < 100).all()  # never a version-3 number
    assert _versions_in(versions.load_curves(store)) == {2}
    write_reports(store)
    summary = (store / "SUMMARY.md").read_text().splitlines()
    assert summary[2] == (
        "Recompute to numerics version 3 in progress: 1 of 3 computations stored"
        " — `make results` resumes it"
    )
    assert any(line.startswith("Numbers read: numerics version 2 only") for line in summary)
    claims = pd.read_csv(store / "claims.csv", dtype=str, keep_default_na=False)
    assert not claims["numbers"].str.contains("100.").any()


@pytest.mark.slow
def test_complete_version_3_reports_version_3(store):
    _write_run(store, "gradient", 3, GRADIENT + 100)
    _write_run(store, "prox", 3, PROX_V3 + 100)
    _write_curve(store, 3, offset=50.0)
    assert versions.progress(store) == (3, 3)
    assert versions.reported_version(store) == 3
    assert versions.progress_line(store) is None
    rows = versions.load(store)
    assert _versions_in(rows) == {3} and (rows["test_loss"] > 100).all()
    curves = versions.load_curves(store)
    assert _versions_in(curves) == {3} and (curves["train_loss"] >= 50).all()
    write_reports(store)
    text = (store / "SUMMARY.md").read_text()
    assert "in progress" not in text
    assert "Numbers read: numerics version 3 only" in text


@pytest.mark.slow
def test_a_new_experiment_of_version_3_waits_for_the_reported_version(store):
    identity = json.loads(_identity("gradient", 3))
    identity["loss"] = {"name": "pinball", "tau": 0.9}  # never had a version-2 row
    _write_run(store, "gradient", 2, GRADIENT)  # (unchanged)
    results.write_row(
        store,
        {
            "protocol": "paper/20splits/T10",
            "dataset": "sniffer",
            "loss": "pinball",
            "algo": "gradient",
            "engine": "exact",
            "split": 0,
            "test_loss": 7.0,
            "n_splits": 1,
            "identity": identity,
        },
    )
    assert versions.progress(store) == (0, 3)  # not counted
    assert "pinball" not in set(versions.load(store)["loss"])


@pytest.mark.slow
def test_without_a_manifest_the_newest_version_is_read(tmp_path):
    _write_run(tmp_path, "gradient", 2, GRADIENT)
    assert versions.read_versions(tmp_path) == {2}
    _write_run(tmp_path, "prox", 3, PROX_V3)
    assert versions.read_versions(tmp_path) == {3}
    assert versions.progress_line(tmp_path) is None
    _write_legacy_row(tmp_path)
    assert versions.read_versions(tmp_path) == {3, 0}


@pytest.mark.slow
def test_legacy_rows_are_read_with_version_2_until_their_counterpart(store):
    _write_legacy_row(store)
    versions.write_manifest(store)
    assert versions.progress(store) == (0, 4)
    assert versions.read_versions(store) == {2, 0}
    assert "hist" in set(versions.load(store)["engine"])


@pytest.mark.slow
def test_compare_versions(store, capsys):
    _write_run(store, "gradient", 3, GRADIENT + 1)
    partial = compare_versions(store, 2, 3)
    assert list(partial.columns) == [
        "statement",
        "scope",
        "protocol",
        "verdict_v2",
        "verdict_v3",
        "numbers_v2",
        "numbers_v3",
    ]
    assert len(partial) and (partial["verdict_v3"] == NOT_COMPUTED).any()
    # one line per judged cell: a scope judged under two protocols is two cells, never paired
    # across protocols
    assert not partial.duplicated(["statement", "scope", "protocol"]).any()
    _write_run(store, "prox", 3, PROX_V3)
    _write_curve(store, 3, offset=50.0)
    complete = compare_versions(store, 2, 3)
    assert not (complete["verdict_v3"] == NOT_COMPUTED).all()
    assert (complete["numbers_v2"] != complete["numbers_v3"]).any()
    out = store / "compare.csv"
    claims_main(["--results", str(store), "--compare-versions", "2", "3", "--out", str(out)])
    printed = capsys.readouterr().out
    assert "| statement | scope | protocol | verdict_v2 | verdict_v3 | numbers_v2 |" in printed
    assert out.is_file()
    claims_main(["--results", str(store), "--compare-versions", "2", "3", "--verdicts-only"])
    printed = capsys.readouterr().out
    changed = complete[complete["verdict_v2"] != complete["verdict_v3"]]
    assert f"{len(changed)} differ in verdict" in printed


@pytest.mark.slow
def test_the_remaining_cost_is_what_the_sources_took(tmp_path):
    """The first lines of `make results`: the computations not stored at the target and their
    time as the stored source computations took it (missing splits only; a curve's last time)."""
    seconds = np.arange(1.0, N_SPLITS + 1.0)
    _write_run(tmp_path, "gradient", 2, GRADIENT, fit_seconds=seconds)
    _write_run(tmp_path, "prox", 2, PROX)  # no stored time
    _write_curve(tmp_path, 2)  # its last seconds: 0.05
    versions.write_manifest(tmp_path)
    m, total, unknown = versions.remaining_cost(tmp_path)
    assert (m, unknown) == (3, 1) and total == pytest.approx(seconds.sum() + 0.05)
    _write_run(tmp_path, "gradient", 3, GRADIENT, splits=range(5))  # part of its splits stored
    m, total, unknown = versions.remaining_cost(tmp_path)
    assert (m, unknown) == (3, 1) and total == pytest.approx(seconds[5:].sum() + 0.05)
    _write_run(tmp_path, "gradient", 3, GRADIENT, splits=range(5, N_SPLITS))
    _write_curve(tmp_path, 3)
    m, total, unknown = versions.remaining_cost(tmp_path)
    assert (m, total, unknown) == (1, 0.0, 1)
    line = versions.cost_line(tmp_path, cores=2)
    assert (
        line.startswith("left to recompute: 1 computations") and "1 without a stored time" in line
    )
    _write_run(tmp_path, "prox", 3, PROX)
    assert versions.remaining_cost(tmp_path) == (0, 0.0, 0)
    assert versions.cost_line(tmp_path).startswith("nothing left to recompute")


def test_a_scope_whose_protocol_text_changed_is_compared_as_one_cell():
    """A synthetic experiment that gained a tie rule describes its protocol with more runs: its
    cells are paired across the two versions (protocol shown old → new), while two protocols of
    one version (exact and hist trees) stay two cells."""
    from proxboost.experiments.claims.__main__ import _paired

    def judged(rows):
        return pd.DataFrame(rows, columns=["id", "scope", "protocol", "verdict", "numbers"])

    old = judged(
        [
            ("7a", "all", "intro, 10 runs", "contradicted", "x"),
            ("6a", "engel", "exact trees", "confirmed", "a"),
            ("6a", "engel", "hist trees", "inconclusive", "b"),
        ]
    )
    new = judged(
        [
            ("7a", "all", "intro, 15 runs", "confirmed", "y"),
            ("6a", "engel", "exact trees", "confirmed", "a2"),
            ("6a", "engel", "hist trees", "contradicted", "b2"),
        ]
    )
    both = _paired(old, new).set_index(["id", "scope", "protocol"])
    assert len(both) == 3
    assert both.loc[("7a", "all", "intro, 10 runs → intro, 15 runs"), "verdict_b"] == "confirmed"
    assert both.loc[("6a", "engel", "hist trees"), "verdict_a"] == "inconclusive"
    assert both.loc[("6a", "engel", "hist trees"), "verdict_b"] == "contradicted"
