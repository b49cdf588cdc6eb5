"""The protocol (splits, grid, selection, refit, metrics), the method adapters and the baselines."""

import math

import numpy as np
import pytest

from proxboost.losses import make_loss
from proxboost.methods import GRID_CHECKS, BoostingMethod, make_method
from proxboost.pipeline import run_experiment, run_protocol
from proxboost.protocol import (
    ProtocolError,
    check_task,
    expand_grid,
    protocol_name,
    select,
    split_indices,
    validate_protocol,
)
from proxboost.protocol import (
    test_metrics as metrics,
)


# -- splits --------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [101, 200, 235])
def test_split_fractions_disjoint_and_covering(n):
    tr, va, te = split_indices(n, 3)
    assert (len(tr), len(va)) == (round(0.5 * n), round(0.25 * n))
    assert len(tr) + len(va) + len(te) == n
    allidx = np.concatenate([tr, va, te])
    assert np.array_equal(np.sort(allidx), np.arange(n))
    for part in (tr, va, te):
        assert np.all(np.diff(part) > 0)  # sorted, no repeats


def test_splits_paired_seeded_by_k():
    # a split depends only on (n, seed, k): the same for every method and loss (paired)
    a = split_indices(200, 5)
    b = split_indices(200, 5)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    c = split_indices(200, 6)
    assert not np.array_equal(a[0], c[0])
    d = split_indices(200, 5, seed=1)
    assert not np.array_equal(a[0], d[0])
    # custom fractions
    tr, va, te = split_indices(100, 0, fractions=(0.6, 0.2, 0.2))
    assert (len(tr), len(va), len(te)) == (60, 20, 20)


def test_split_too_small():
    with pytest.raises(ProtocolError, match="cannot be split"):
        split_indices(3, 0)


# -- validation of protocol values and tasks ----------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(n_splits=0), "n_splits must be an integer >= 1"),
        (dict(n_splits=2.5), "n_splits must be an integer >= 1"),
        (dict(fractions=(0.5, 0.3, 0.25)), "must sum to 1"),
        (dict(fractions=(0.5, 0.5, 0.0)), r"must each lie in \(0, 1\)"),
        (dict(fractions=(0.5, 0.5)), "three numbers"),
        (dict(max_estimators=0), "max_estimators"),
        (dict(seed=-1), "seed"),
    ],
)
def test_validate_protocol_rejects(kwargs, match):
    args = dict(n_splits=20, fractions=(0.5, 0.25, 0.25), max_estimators=1000, seed=0)
    args.update(kwargs)
    with pytest.raises(ProtocolError, match=match):
        validate_protocol(**args)


def test_task_mismatch_sentence():
    with pytest.raises(ProtocolError) as exc:
        check_task("hinge", "classification", "engel", "regression")
    assert (
        str(exc.value)
        == "loss 'hinge' is a classification loss but dataset 'engel' is a regression dataset"
    )


def test_run_experiment_validates_before_any_fit(tmp_path):
    common = dict(
        grid={"max_depth": [1], "learning_rate": [0.1], "step": [1.0]},
        results_dir=tmp_path,
        progress=False,
        n_splits=1,
        max_estimators=2,
    )
    with pytest.raises(
        ProtocolError,
        match="loss 'lad' is a regression loss but dataset 'spam' is a classification dataset",
    ):
        run_experiment(dataset="spam", loss="lad", algo="prox", **common)
    assert (
        run_experiment(dataset="spam", loss="lad", algo="prox", skip_task_mismatch=True, **common)
        is None
    )
    with pytest.raises(ProtocolError, match="unknown algo 'boost'; valid choices: gradient, prox"):
        run_experiment(dataset="engel", loss="lad", algo="boost", **common)
    with pytest.raises(ProtocolError, match="not a known loss"):
        run_experiment(dataset="engel", loss="l1", algo="prox", **common)
    with pytest.raises(ProtocolError, match="engine 'gpu' is not available"):
        run_experiment(dataset="engel", loss="lad", algo="prox", engine="gpu", **common)
    with pytest.raises(ProtocolError, match="no values for 'step'"):
        run_experiment(
            dataset="engel",
            loss="lad",
            algo="prox",
            **{**common, "grid": {"max_depth": [1], "learning_rate": [0.1]}},
        )
    assert not any(tmp_path.iterdir())  # nothing stored, nothing fitted


# -- grid and selection -------------------------------------------------------------------------
def test_grid_axes_per_method():
    grid = {
        "max_depth": [1, 3],
        "learning_rate": [0.1, 1.0],
        "step": [0.1, 1.0, 10.0],
        "max_features": [0.5, "sqrt"],
    }
    hinge = make_loss("hinge")
    assert len(expand_grid(grid, make_method("prox", hinge).grid_axes)) == 12
    assert len(expand_grid(grid, make_method("accelerated_prox", hinge).grid_axes)) == 12
    assert expand_grid(grid, make_method("gradient", hinge).grid_axes) == [
        {"max_depth": 1, "learning_rate": 0.1},
        {"max_depth": 1, "learning_rate": 1.0},
        {"max_depth": 3, "learning_rate": 0.1},
        {"max_depth": 3, "learning_rate": 1.0},
    ]
    assert len(expand_grid(grid, make_method("xgboost", hinge).grid_axes)) == 4
    assert expand_grid(grid, make_method("random_forest", hinge).grid_axes) == [
        {"max_features": 0.5},
        {"max_features": "sqrt"},
    ]
    # values are sorted (numbers, then names), cast to their axis's type, deduplicated
    assert expand_grid(
        {"max_depth": [3, 1, 3], "learning_rate": [1, 0.1]}, ("max_depth", "learning_rate")
    ) == [
        {"max_depth": 1, "learning_rate": 0.1},
        {"max_depth": 1, "learning_rate": 1.0},
        {"max_depth": 3, "learning_rate": 0.1},
        {"max_depth": 3, "learning_rate": 1.0},
    ]
    assert [
        p["max_features"]
        for p in expand_grid({"max_features": ["sqrt", 1, 1 / 3]}, ("max_features",))
    ] == [1 / 3, 1.0, "sqrt"]
    for axis, bad in [
        ("max_depth", 0),
        ("max_depth", 2.5),
        ("learning_rate", 1.5),
        ("step", 0.0),
        ("max_features", "all"),
    ]:
        with pytest.raises(ProtocolError, match=f"grid value {axis}={bad!r} is invalid"):
            expand_grid(
                {**grid, axis: [bad]},
                ("max_depth", "learning_rate", "step", "max_features"),
                GRID_CHECKS,  # the boosting axes are judged by the estimators' constraints
            )


def test_select_argmin_known_answer():
    curves = np.array(
        [
            [5.0, 4.0, 3.0, 3.5, 3.1],
            [5.0, 3.9, 2.5, 2.7, 2.6],
            [5.0, 4.5, 4.4, 2.6, 2.55],
        ]
    )
    assert select(curves) == (1, 2)


def test_select_tie_rule_smallest_T_then_first_grid_point():
    # equal minima at (0, 2), (1, 1), (2, 1): the smallest T wins, then the first grid point
    curves = np.array([[5.0, 4.0, 2.0], [5.0, 2.0, 2.0], [5.0, 2.0, 3.0]])
    assert select(curves) == (1, 1)
    # T = 0 (f_0, the same value for every grid point) best: first grid point
    assert select(np.array([[1.0, 2.0], [1.0, 1.5]])) == (0, 0)
    # NaN (a diverged fit) is never preferred to a finite value
    assert select(np.array([[3.0, np.nan], [3.0, 2.0]])) == (1, 1)


def test_metrics_sign_zero_counts_as_plus_one():
    hinge = make_loss("hinge")
    y = np.array([1.0, -1.0, -1.0, 1.0])
    z = np.array([0.0, 0.0, -2.0, -1.0])
    test_loss, test_error = metrics(hinge, y, z)
    assert test_loss == pytest.approx(np.mean(np.maximum(0, 1 - y * z)))
    assert test_error == pytest.approx(0.5)  # z=0 -> +1: wrong for y=-1; z=-1 wrong for y=+1
    lad = make_loss("lad")
    tl, te = metrics(lad, np.array([1.0, 2.0]), np.array([0.0, 0.0]))
    assert tl == pytest.approx(1.5) and math.isnan(te)
    assert math.isnan(metrics(lad, np.ones(2), np.zeros(2), report_loss=False)[0])


def test_protocol_name():
    assert protocol_name("paper", 20, 1000) == "paper/20splits/T1000"
    assert (
        protocol_name("smoke", 2, 20, (0.6, 0.2, 0.2), seed=3)
        == "smoke/2splits/T20/frac0.6-0.2-0.2/seed3"
    )


# -- refit --------------------------------------------------------------------------------------
@pytest.mark.parametrize("loss_name", ["lad", "pinball", "hinge", "exponential"])
def test_refit_with_T0_is_constant_f0(loss_name):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(41, 3))
    loss = make_loss(loss_name, tau=0.9)
    y = (
        np.where(rng.normal(size=41) > 0.3, 1.0, -1.0)
        if loss.task == "classification"
        else rng.exponential(size=41)
    )
    method = BoostingMethod("prox", loss)
    z = method.refit_predict(
        {"max_depth": 2, "learning_rate": 0.1, "step": 1.0}, 0, (X, y), X[:7], 0
    )
    assert z.shape == (7,) and np.all(z == loss.init(y))


@pytest.mark.slow
def test_run_protocol_selection_refit_and_workers(toy_data):
    """Rows follow the protocol (selection on the curves, refit at the selected T) and are
    identical with 1 and 2 workers."""
    from proxboost import BoostingClassifier

    X, y = toy_data("classification")
    loss = make_loss("hinge")
    method = make_method("prox", loss)
    grid = expand_grid(
        {"max_depth": [1, 2], "learning_rate": [0.3], "step": [1.0]}, method.grid_axes
    )
    kw = dict(n_splits=3, max_estimators=15, seed=0, progress=False)
    stored = []
    rows1 = run_protocol(X, y, method, grid, n_jobs=1, on_row=stored.append, **kw)
    rows2 = run_protocol(X, y, method, grid, n_jobs=2, **kw)
    assert [r["split"] for r in rows1] == [0, 1, 2] and len(stored) == 3
    drop = ("fit_seconds", "refit_seconds")
    assert [{k: v for k, v in r.items() if k not in drop} for r in rows1] == [
        {k: v for k, v in r.items() if k not in drop} for r in rows2
    ]
    # split 1 by hand
    r = rows1[1]
    tr, va, te = split_indices(len(y), 1)
    curves = [
        BoostingClassifier(
            loss="hinge",
            algo="prox",
            n_estimators=15,
            max_depth=p["max_depth"],
            learning_rate=0.3,
            step=1.0,
            random_state=1,
        )
        .fit(X[tr], y[tr], eval_set=(X[va], y[va]))
        .eval_loss_
        for p in grid
    ]
    g, T = select(np.vstack(curves))
    assert (r["grid_index"], r["n_estimators"], r["val_loss"]) == (g, T, curves[g][T])
    trval = np.concatenate([tr, va])
    if T == 0:
        z = np.full(len(te), loss.init(y[trval]))
    else:
        z = (
            BoostingClassifier(
                loss="hinge",
                algo="prox",
                n_estimators=T,
                max_depth=grid[g]["max_depth"],
                learning_rate=0.3,
                step=1.0,
                random_state=1,
            )
            .fit(X[trval], y[trval])
            .decision_function(X[te])
        )
    assert r["test_loss"] == pytest.approx(loss.value(y[te], z), rel=1e-12)
    assert r["test_error"] == pytest.approx(np.mean(np.where(z >= 0, 1, -1) != y[te]))


def test_run_protocol_in_threads_holds_no_named_semaphore(toy_data, monkeypatch):
    """Where joblib would run the fits in threads (nested in a job of the joblib launcher), they
    run in a thread pool that holds no named semaphore (an interrupted sweep ends that job's
    process at once, so a named one could leak), with the rows of one worker."""
    import multiprocessing.synchronize
    import threading

    from joblib import parallel_config
    from joblib.externals.loky.backend import synchronize as loky_synchronize

    X, y = toy_data("regression")
    method = make_method("prox", make_loss("lad"))
    grid = expand_grid(
        {"max_depth": [1, 2], "learning_rate": [0.3], "step": [1.0]}, method.grid_axes
    )
    kw = dict(n_splits=3, max_estimators=15, seed=0, progress=False)
    rows1 = run_protocol(X, y, method, grid, n_jobs=1, **kw)

    def refuse(self, *args, **kwargs):
        raise AssertionError("a named semaphore was created")

    for module in (multiprocessing.synchronize, loky_synchronize):
        monkeypatch.setattr(module.SemLock, "__init__", refuse)
    threads = set()
    curve = method.validation_curve

    def recorded(*args):
        threads.add(threading.current_thread().name)
        return curve(*args)

    monkeypatch.setattr(method, "validation_curve", recorded)
    with parallel_config(backend="threading"):
        rows2 = run_protocol(X, y, method, grid, n_jobs=2, **kw)
    assert threads and all(name.startswith("proxboost-fit") for name in threads)
    drop = ("fit_seconds", "refit_seconds")
    assert [{k: v for k, v in r.items() if k not in drop} for r in rows1] == [
        {k: v for k, v in r.items() if k not in drop} for r in rows2
    ]


# -- baselines ----------------------------------------------------------------------------------
@pytest.mark.parametrize("loss_name", ["ls", "lad", "pinball", "logistic", "hinge", "exponential"])
def test_xgboost_curve_is_our_loss_on_its_margin(loss_name, toy_data):
    import xgboost as xgb

    loss = make_loss(loss_name, tau=0.9)
    X, y = toy_data(loss.task)
    method = make_method("xgboost", loss)
    params = {"max_depth": 2, "learning_rate": 0.3}
    Xtr, ytr, Xva, yva = X[:80], y[:80], X[80:], y[80:]
    values, Ts = method.validation_curve(params, (Xtr, ytr), (Xva, yva), 12, 0)
    assert (
        values.shape == (13,) and np.array_equal(Ts, np.arange(13)) and np.all(np.isfinite(values))
    )
    booster = method._train(params, method._dmatrix(Xtr, ytr), ytr, 12, 0)
    dva = xgb.DMatrix(Xva.astype(np.float32))
    for t in (1, 5, 12):
        margin = booster.predict(dva, output_margin=True, iteration_range=(0, t)).astype(float)
        assert values[t] == pytest.approx(loss.value(yva, margin), rel=1e-6, abs=1e-9)
    # refit at T equals a fresh fit's margin; T = 0 is XGBoost's intercept (constant)
    z = method.refit_predict(params, 5, (Xtr, ytr), Xva, 0)
    assert loss.value(yva, z) == pytest.approx(values[5], rel=1e-6)
    z0 = method.refit_predict(params, 0, (Xtr, ytr), Xva, 0)
    assert np.ptp(z0) == 0 and loss.value(yva, z0) == pytest.approx(values[0], rel=1e-6)
    if loss_name == "exponential":
        assert z0[0] == pytest.approx(loss.init(ytr), rel=1e-6)


def test_random_forest_reports_ls_loss_and_error_only(toy_data):
    Xr, yr = toy_data("regression")
    Xc, yc = toy_data("classification")
    grid = [{"max_features": "sqrt"}, {"max_features": 1.0}]
    kw = dict(n_splits=2, max_estimators=10, progress=False)
    rows = run_protocol(
        Xr,
        yr,
        make_method("random_forest", make_loss("ls"), options={"n_estimators": 20}),
        grid,
        **kw,
    )
    assert all(np.isfinite(r["test_loss"]) and math.isnan(r["test_error"]) for r in rows)
    assert all(r["val_metric"] == "squared_error" and r["n_estimators"] == 20 for r in rows)
    rows = run_protocol(
        Xr,
        yr,
        make_method("random_forest", make_loss("lad"), options={"n_estimators": 20}),
        grid,
        **kw,
    )
    assert all(math.isnan(r["test_loss"]) for r in rows)
    rows = run_protocol(
        Xc,
        yc,
        make_method("random_forest", make_loss("hinge"), options={"n_estimators": 20}),
        grid,
        **kw,
    )
    assert all(math.isnan(r["test_loss"]) and 0 <= r["test_error"] <= 1 for r in rows)
    assert all(
        r["val_metric"] == "misclassification" and r["max_features"] in ("sqrt", "1.0")
        for r in rows
    )


def test_unavailable_dataset_fails_or_is_skipped(tmp_path, monkeypatch):
    from proxboost.datasets import DatasetUnavailableError

    monkeypatch.setenv("PROXBOOST_OFFLINE", "1")
    monkeypatch.setenv("PROXBOOST_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("PROXBOOST_DATA_MIRROR", str(tmp_path / "no-mirror"))
    kw = dict(
        dataset="advertisements",
        loss="hinge",
        algo="gradient",
        results_dir=tmp_path / "res",
        grid={"max_depth": [1], "learning_rate": [0.1]},
        n_splits=1,
        max_estimators=2,
        progress=False,
    )
    with pytest.raises(DatasetUnavailableError, match="ad.data"):
        run_experiment(**kw)
    assert run_experiment(skip_unavailable=True, **kw) is None
    assert not (tmp_path / "res").exists()
