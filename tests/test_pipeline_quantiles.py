"""The named experiments of the quantile measurements (docs/quantiles.md, "Measurements"):
``quantile_levels`` (one model of several quantiles against separate single-level models),
``quantile_intervals`` (coverage and width before and after conformal calibration) and
``step_auto`` (``step="auto"`` in a grid): they compose, their runs are told apart by their
identity, a multi-level run is selected on the sum of its levels' validation losses and stores
each level's test loss, the interval is calibrated and measured on rows used neither for fitting
nor for selection, tiny runs store rows and resume without recomputing, and bad settings are
refused in one line before any fit.
"""

import json
import math

import numpy as np
import pytest
from omegaconf import OmegaConf

from proxboost import BoostingRegressor
from proxboost.conformal import interval_measurement
from proxboost.experiments.fits.pipeline import plan_run, run_experiment, run_protocol
from proxboost.experiments.launch import cli
from proxboost.experiments.plan.methods import make_method
from proxboost.experiments.plan.protocol import (
    ProtocolError,
    calibration_halves,
    expand_grid,
    select,
    split_indices,
    split_random_state,
)
from proxboost.losses import make_loss

LEVELS = [0.05, 0.5, 0.95]
EXPERIMENTS = ("quantile_levels", "quantile_intervals", "quantile_intervals_ties", "step_auto")
SIX = ["engel", "sniffer", "crabs", "bostonhousing", "redwine", "whitewine"]

TINY = dict(
    dataset="regression",
    dataset_params={"n_samples": 80, "n_features": 4},
    loss="pinball",
    loss_params={"tau": LEVELS},
    algo="prox",
    grid={"max_depth": [1, 2], "learning_rate": [0.3], "step": [1.0]},
    grid_name="smoke",
    n_splits=2,
    max_estimators=5,
)


def _sweep(cfg) -> dict:
    return {k: str(v) for k, v in cfg.hydra.sweeper.params.items()}


# -- the configurations -----------------------------------------------------------------------
@pytest.mark.slow
def test_the_three_experiments_compose_with_the_paper_protocol(compose):
    for name in EXPERIMENTS:
        cfg = compose([f"+experiment={name}"], hydra_config=True)
        assert cfg.results_dir == "results" and cfg.protocol.n_splits == 20, name
        assert cfg.protocol.max_estimators == 1000 and cfg.protocol.fractions.train == 0.5, name
        assert _sweep(cfg)["dataset"].split(",") == SIX, name
    levels = compose(["+experiment=quantile_levels"], hydra_config=True)
    assert levels.loss.name == "pinball" and levels.grid.name == "paper"
    assert _sweep(levels)["loss.tau"] == "[0.05,0.5,0.95],0.05,0.5,0.95"
    intervals = compose(["+experiment=quantile_intervals"], hydra_config=True)
    assert _sweep(intervals)["loss.tau"] == "[0.05,0.5,0.95]"  # the multi-level runs of levels
    assert _sweep(intervals)["algo"] == _sweep(levels)["algo"]
    auto = compose(["+experiment=step_auto"], hydra_config=True)
    grid = OmegaConf.to_container(auto.grid)
    assert grid["step"] == ["auto"] and grid["name"] == "paper_auto"
    paper = OmegaConf.to_container(compose(["grid=paper"]).grid)
    assert (grid["max_depth"], grid["learning_rate"]) == (
        paper["max_depth"],
        paper["learning_rate"],
    )
    assert len(expand_grid(grid, ("max_depth", "learning_rate", "step"))) == 15
    assert _sweep(auto)["loss"] == "lad,pinball" and _sweep(auto)["algo"] == "prox"


def _job(compose, *overrides):
    """The arguments of plan_run of one job of an experiment, as run.py composes them."""
    cfg = compose(list(overrides), hydra_config=True)
    OmegaConf.set_readonly(cfg.hydra, False)
    cfg.hydra.runtime.choices.grid = cfg.grid.name
    cfg.hydra.job.config_name = "config"
    return cli.run_arguments(cfg)


@pytest.mark.slow
def test_a_multi_level_run_is_told_apart_from_the_single_level_runs(compose, tmp_path):
    """Labels and identities of the jobs of quantile_levels (no data file needed: the synthetic
    regression data stand in for the datasets)."""
    small = ["dataset=regression", "dataset.params.n_samples=80", f"results_dir={tmp_path}"]
    runs = {}
    for tau in ("[0.05,0.5,0.95]", "0.05", "0.5", "0.95"):
        args = _job(compose, "+experiment=quantile_levels", f"loss.tau={tau}", *small)
        runs[tau] = plan_run(**args)
    labels = {tau: run.base_row["loss"] for tau, run in runs.items()}
    assert labels == {
        "[0.05,0.5,0.95]": "pinball-tau0.05-0.5-0.95",
        "0.05": "pinball-tau0.05",
        "0.5": "pinball-tau0.5",
        "0.95": "pinball-tau0.95",
    }
    identities = {tau: json.loads(run.identity) for tau, run in runs.items()}
    assert identities["[0.05,0.5,0.95]"]["loss"] == {"name": "pinball", "tau": LEVELS}
    assert len({run.identity for run in runs.values()}) == 4
    assert len({run.where for run in runs.values()}) == 4
    multi = runs["[0.05,0.5,0.95]"].base_row
    assert multi["levels"] == "[0.05, 0.5, 0.95]" and math.isnan(multi["tau"])
    assert runs["0.5"].base_row["tau"] == 0.5 and "levels" not in runs["0.5"].base_row
    # the interval experiment plans the very same run (its rows are shared)
    same = plan_run(
        **_job(compose, "+experiment=quantile_intervals", "loss.tau=[0.05,0.5,0.95]", *small)
    )
    assert same.identity == runs["[0.05,0.5,0.95]"].identity
    # random ties: the same fits, their own identity and protocol folder
    ties = plan_run(
        **_job(compose, "+experiment=quantile_intervals_ties", "loss.tau=[0.05,0.5,0.95]", *small)
    )
    identity, closed = json.loads(ties.identity), json.loads(same.identity)
    assert identity["protocol"].pop("interval_ties") == "random"
    assert identity == closed and "interval_ties" not in closed["protocol"]
    assert ties.protocol == same.protocol + "/ties-random"
    # step="auto" in a grid: in the identity and the protocol's name, not the paper grid's
    auto = plan_run(**_job(compose, "+experiment=step_auto", "loss=lad", *small))
    paper = plan_run(**_job(compose, "+experiment=paper", "loss=lad", "algo=prox", *small))
    assert json.loads(auto.identity)["grid"]["step"] == ["auto"]
    assert auto.protocol == "paper_auto/20splits/T1000" and paper.protocol.startswith("paper/")
    assert [p["step"] for p in auto.grid_points] == ["auto"] * 15


# -- bad settings: one line, before any fit ---------------------------------------------------
@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(loss_params={"tau": [0.5, 0.05]}), r"tau=\[0.5, 0.05\] is not allowed"),
        (dict(loss_params={"tau": [0.05, 1.0]}), "strictly increasing list of floats in"),
        (dict(algo="random_forest"), "algo 'random_forest': fits one quantile level per model"),
        (dict(tie_rule="authors_float"), "with several quantiles use tie_rule="),
        (dict(grid={**TINY["grid"], "step": ["automatic"]}), "grid value step='automatic'"),
        (dict(dataset_params={"n_samples": 6, "n_features": 4}), "a test part of 1 row"),
        (dict(interval_ties="open"), "protocol.interval_ties must be one of closed, random"),
        (
            dict(interval_ties="random", loss_params={"tau": 0.5}),
            "needs a loss of two levels or more",
        ),
    ],
)
def test_bad_settings_are_refused_in_one_line_before_any_fit(tmp_path, changes, message):
    with pytest.raises(ProtocolError, match=message) as info:
        run_experiment(**{**TINY, **changes, "results_dir": tmp_path, "progress": False})
    assert "\n" not in str(info.value)
    assert not any(tmp_path.iterdir())  # nothing stored, nothing fitted


# -- the rows ---------------------------------------------------------------------------------
def _pinball(y, z, tau):
    u = y - z
    return float(np.mean(np.maximum(tau * u, (tau - 1.0) * u)))


def _brute_force_correction(lower, upper, y, alpha):
    scores = sorted(max(lo - v, v - hi) for lo, hi, v in zip(lower, upper, y))
    rank = math.ceil((len(scores) + 1) * (1 - alpha))
    return math.inf if rank > len(scores) else scores[rank - 1]


@pytest.mark.slow
def test_a_multi_level_row_by_hand(toy_data):
    """Selection on the sum of the levels' validation losses, the refit's per-level test losses,
    and the interval: corrected on the calibration half, measured on the other half only."""
    X, y = toy_data("regression", n=160)
    loss = make_loss("pinball", tau=LEVELS)
    method = make_method("prox", loss)
    grid = expand_grid(
        {"max_depth": [1, 2], "learning_rate": [0.3, 0.9], "step": [1.0]}, method.grid_axes
    )
    rows = run_protocol(X, y, method, grid, n_splits=2, max_estimators=8, progress=False)
    r = rows[1]
    tr, va, te = split_indices(len(y), 1)

    def model(p, T):
        return BoostingRegressor(
            loss="pinball",
            tau=LEVELS,
            algo="prox",
            n_estimators=T,
            max_depth=p["max_depth"],
            learning_rate=p["learning_rate"],
            step=1.0,
            random_state=1,
        )

    # the validation criterion: the sum over levels of each level's mean pinball loss, by hand
    curves = []
    for p in grid:
        est = model(p, 8).fit(X[tr], y[tr])
        curves.append(
            [
                sum(_pinball(y[va], F[:, k], tau) for k, tau in enumerate(LEVELS))
                for F in [np.tile(est.init_, (len(va), 1))] + list(est.staged_predict(X[va]))
            ]
        )
    g, T = select(np.array(curves))
    assert (r["grid_index"], r["n_estimators"]) == (g, T)
    assert r["val_loss"] == pytest.approx(curves[g][T], rel=1e-12)
    assert r["val_metric"] == "sum_of_levels"
    trval = np.concatenate([tr, va])
    P = model(grid[g], T).fit(X[trval], y[trval]).predict(X[te]) if T else None
    assert P is not None, "the toy problem selects some trees"
    levels = json.loads(r["test_loss_levels"])
    assert levels == pytest.approx([_pinball(y[te], P[:, k], t) for k, t in enumerate(LEVELS)])
    assert r["test_loss"] == pytest.approx(np.mean(levels), rel=1e-12)
    # the interval: the halves partition the test part and avoid train and validation
    cal, cov = calibration_halves(len(y), 1)
    assert len(np.intersect1d(cal, cov)) == 0 and len(cal) + len(cov) == len(te)
    assert len(np.intersect1d(te[cal], trval)) == len(np.intersect1d(te[cov], trval)) == 0
    q = _brute_force_correction(P[cal, 0], P[cal, -1], y[te][cal], 0.1)
    lo, hi, yc = P[cov, 0], P[cov, -1], y[te][cov]
    assert r["interval_correction"] == pytest.approx(q, rel=1e-12)
    assert r["coverage_raw"] == np.mean((lo <= yc) & (yc <= hi))
    assert r["width_raw"] == pytest.approx(np.mean(hi - lo), rel=1e-12)
    assert r["coverage_calibrated"] == np.mean((lo - q <= yc) & (yc <= hi + q))
    assert (r["n_calibration"], r["n_coverage"], r["interval_nominal"]) == (
        len(cal),
        len(cov),
        pytest.approx(0.9),
    )


def test_the_calibration_half_is_a_fixed_random_half_of_the_test_part():
    n = 235  # engel: 118 / 59 / 58
    for k in range(3):
        tr, va, te = split_indices(n, k)
        cal, cov = calibration_halves(n, k)
        assert (len(cal), len(cov)) == (29, 29)
        assert sorted(np.concatenate([cal, cov])) == list(range(len(te)))
        again = calibration_halves(n, k)
        assert all(np.array_equal(a, b) for a, b in zip((cal, cov), again))
    # different splits calibrate on different rows; not simply the first rows of the file
    assert not np.array_equal(split_indices(n, 0)[2][cal], split_indices(n, 1)[2][cal])
    assert not np.array_equal(cal, np.arange(29))


def test_the_interval_step_takes_any_lower_and_upper_predictions():
    """Any pair of predictions (here: two unrelated arrays, crossing in places): the correction
    depends on the calibration rows only, coverage and width on the other rows only."""
    rng = np.random.default_rng(3)
    n = 40
    y = rng.normal(size=n)
    lower, upper = rng.normal(-1, 0.5, size=n), rng.normal(1, 0.5, size=n)
    cal, ev = np.arange(0, n, 2), np.arange(1, n, 2)
    m = interval_measurement(lower, upper, y, cal, ev, alpha=0.2)
    assert m["interval_correction"] == _brute_force_correction(lower[cal], upper[cal], y[cal], 0.2)
    assert m["coverage_raw"] == np.mean((lower[ev] <= y[ev]) & (y[ev] <= upper[ev]))
    moved = y.copy()
    moved[ev] += 100.0  # the rows measured do not move the correction ...
    m2 = interval_measurement(lower, upper, moved, cal, ev, alpha=0.2)
    assert m2["interval_correction"] == m["interval_correction"] and m2["coverage_raw"] == 0.0
    moved = y.copy()
    moved[cal] += 100.0  # ... the calibration rows do, and never count in the coverage
    m3 = interval_measurement(lower, upper, moved, cal, ev, alpha=0.2)
    assert m3["interval_correction"] > 50 and m3["coverage_raw"] == m["coverage_raw"]
    assert m3["coverage_calibrated"] == 1.0
    with pytest.raises(ValueError, match="disjoint"):
        interval_measurement(lower, upper, y, cal, np.concatenate([ev, cal[:1]]), alpha=0.2)


@pytest.mark.slow
def test_tiny_runs_store_rows_and_resume_without_recomputing(tmp_path, monkeypatch):
    from proxboost.experiments.plan import methods

    kw = dict(results_dir=tmp_path, progress=False, n_jobs=1)
    multi = run_experiment(**TINY, **kw)
    single = run_experiment(**{**TINY, "loss_params": {"tau": 0.5}}, **kw)
    auto = run_experiment(**{**TINY, "grid": {**TINY["grid"], "step": ["auto"]}}, **kw)
    assert len(multi) == len(single) == len(auto) == 2
    assert set(multi["levels"]) == {"[0.05, 0.5, 0.95]"} and multi["tau"].isna().all()
    assert {"coverage_raw", "coverage_calibrated", "width_raw", "width_calibrated"} <= set(multi)
    assert (multi["fit_seconds"] > 0).all() and (multi["refit_seconds"] >= 0).all()
    assert "levels" not in single and "coverage_raw" not in single
    assert set(auto["step"].astype(str)) == {"auto"}
    assert {json.loads(p)["step"] for p in auto["params"]} == {"auto"}

    def no_fit(*args, **kwargs):
        raise AssertionError("a stored row was recomputed")

    monkeypatch.setattr(methods.BoostingMethod, "validation_curve", no_fit)
    monkeypatch.setattr(methods.BoostingMethod, "refit_predict", no_fit)
    again = run_experiment(**TINY, **kw)
    assert again.drop(columns="created").equals(multi.drop(columns="created"))
    run_experiment(**{**TINY, "grid": {**TINY["grid"], "step": ["auto"]}}, **kw)
    with pytest.raises(AssertionError, match="recomputed"):  # a third split is computed
        run_experiment(**{**TINY, "n_splits": 3}, **kw)


def test_random_ties_rows_repeat_and_differ_from_closed_only_in_the_interval(tmp_path):
    """A run with ``interval_ties="random"`` on an integer target: its own folder; the same fits
    and selections as the closed run (every column but the calibrated interval's is equal), the
    interval measured by :func:`interval_measurement` with the split's own stream, and the same
    rows when computed again."""
    from proxboost.experiments.plan.protocol import TIES_STREAM

    kw = dict(progress=False, n_jobs=1)
    tiny = {**TINY, "max_estimators": 3, "grid": {**TINY["grid"], "max_depth": [1]}}
    closed = run_experiment(**tiny, results_dir=tmp_path / "a", **kw)
    ties = run_experiment(**tiny, interval_ties="random", results_dir=tmp_path / "a", **kw)
    again = run_experiment(**tiny, interval_ties="random", results_dir=tmp_path / "b", **kw)
    assert set(ties["protocol"]) == {closed["protocol"][0] + "/ties-random"}
    assert set(ties["interval_ties"]) == {"random"} and "interval_ties" not in closed
    calibrated = ["interval_correction", "coverage_calibrated", "width_calibrated"]
    calibrated += ["crossing_calibrated", "interval_ties", "interval_boundary_share"]
    same = [c for c in closed if c not in calibrated + ["protocol", "identity", "identity_hash"]]
    same = [c for c in same if c not in ("created", "fit_seconds", "refit_seconds")]
    assert ties[same].equals(closed[same])
    skip = ["created", "fit_seconds", "refit_seconds"]
    assert ties.drop(columns=skip).equals(again.drop(columns=skip))
    assert (ties["interval_boundary_share"].between(0, 1)).all()
    # the split's stream: the row's interval columns recomputed by hand from the refit
    k = int(ties["split"][0])
    run = plan_run(**tiny, interval_ties="random", results_dir=tmp_path / "a")
    tr, va, te = split_indices(len(run.y), k, 0)
    choice = json.loads(ties["params"][0])
    P = run.method.refit_predict(
        choice,
        int(ties["n_estimators"][0]),
        (run.X[np.r_[tr, va]], run.y[np.r_[tr, va]]),
        run.X[te],
        split_random_state(k, 0),
    )
    cal, cov = calibration_halves(len(run.y), k, 0)
    m = interval_measurement(
        P[:, 0], P[:, -1], run.y[te], cal, cov, 0.1, "random", (0, k, TIES_STREAM)
    )
    for column in calibrated[:3] + ["interval_boundary_share"]:
        assert m[column] == ties[column][0], column


def test_a_multi_level_refit_at_t0_is_every_levels_start():
    loss = make_loss("pinball", tau=LEVELS)
    method = make_method("gradient", loss)
    y = np.arange(11.0)
    P = method.refit_predict(
        {"max_depth": 1, "learning_rate": 0.1}, 0, (y[:, None], y), np.zeros((4, 1)), 0
    )
    est = BoostingRegressor(loss="pinball", tau=LEVELS, n_estimators=1).fit(y[:, None], y)
    assert P.shape == (4, 3) and np.array_equal(P, np.tile(est.init_, (4, 1)))
