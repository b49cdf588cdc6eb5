"""LightGBM and HistGradientBoosting baselines: curves, selection and refit, settings.

Each adapter is checked against the library used directly, with parameters written out here
(not taken from the adapter): its validation curve is the library's staged raw predictions
scored with our loss (or the misclassification rate), T = 0 is the library's initial
prediction computed with NumPy, and a protocol row refits the selected (grid point, T) on
train ∪ validation.
"""

import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from proxboost.experiments.fits.pipeline import run_experiment, run_protocol
from proxboost.experiments.plan.baselines import HistGradientBoostingMethod, LightGBMMethod
from proxboost.experiments.plan.methods import Algo, make_method
from proxboost.experiments.plan.protocol import ProtocolError, split_indices
from proxboost.losses import make_loss

REPO = Path(__file__).resolve().parents[1]
T_MAX = 25
PARAMS = {"max_depth": 2, "learning_rate": 0.3}


def _loss(name):
    return make_loss(name, tau=0.9) if name == "pinball" else make_loss(name)


def _error(y, z):
    return np.mean(np.where(z >= 0, 1.0, -1.0) != y)


# -- the libraries used directly -------------------------------------------------------------------
def _lgb_booster(loss, params, X, y, rounds):
    import lightgbm as lgb

    objective = {"ls": "l2", "lad": "l1", "pinball": "quantile"}.get(loss.name, "binary")
    d = params["max_depth"]
    p = dict(
        objective=objective,
        max_depth=d,
        num_leaves=2**d,
        learning_rate=params["learning_rate"],
        min_data_in_leaf=1,
        min_sum_hessian_in_leaf=1e-3,
        min_data_in_bin=1,
        num_threads=1,
        deterministic=True,
        force_col_wise=True,
        verbose=-1,
    )
    if loss.name == "pinball":
        p["alpha"] = 0.9
    label = (y > 0).astype(float) if loss.task == "classification" else y
    return lgb.train(p, lgb.Dataset(X, label=label), num_boost_round=rounds)


def _lgb_stages(booster, X):
    return [
        booster.predict(X, num_iteration=t, raw_score=True)
        for t in range(1, booster.num_trees() + 1)
    ]


def _hgb(loss, params, rounds):
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    d = params["max_depth"]
    kw = dict(
        max_iter=rounds,
        max_depth=d,
        max_leaf_nodes=2**d,
        learning_rate=params["learning_rate"],
        min_samples_leaf=1,
        early_stopping=False,
    )
    if loss.task == "classification":
        return HistGradientBoostingClassifier(loss="log_loss", **kw)
    name = {"ls": "squared_error", "lad": "absolute_error", "pinball": "quantile"}[loss.name]
    return HistGradientBoostingRegressor(
        loss=name, quantile=0.9 if loss.name == "pinball" else None, **kw
    )


def _hgb_stages(est, X, classification):
    return list(est.staged_decision_function(X) if classification else est.staged_predict(X))


def _initial(loss, y, float32):
    """The libraries' initial prediction by NumPy: mean, median, 0.9-quantile, log-odds."""
    y = np.asarray(y, dtype=np.float32 if float32 else np.float64).astype(np.float64)
    if loss.task == "classification":
        p = np.mean(y > 0)
        return math.log(p / (1 - p))
    return {"ls": np.mean, "lad": np.median, "pinball": lambda v: np.quantile(v, 0.9)}[loss.name](y)


def _criterion(loss, y, z):
    return (
        _error(y, z) if loss.task == "classification" else loss.value(y, np.asarray(z, dtype=float))
    )


# -- curves ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("algo", ["lightgbm", "sklearn_hgb"])
@pytest.mark.parametrize("loss_name", ["ls", "lad", "pinball", "hinge"])
@pytest.mark.grid
def test_curve_is_the_library_staged_prediction_scored(algo, loss_name, toy_data):
    loss = _loss(loss_name)
    X, y = toy_data(loss.task)
    Xtr, ytr, Xva, yva = X[:80], y[:80], X[80:], y[80:]
    method = make_method(algo, loss)
    values, Ts = method.validation_curve(PARAMS, (Xtr, ytr), (Xva, yva), T_MAX, 0)
    assert values.shape == (T_MAX + 1,) and np.array_equal(Ts, np.arange(T_MAX + 1))
    if algo == "lightgbm":
        stages = _lgb_stages(_lgb_booster(loss, PARAMS, Xtr, ytr, T_MAX), Xva)
    else:
        stages = _hgb_stages(
            _hgb(loss, PARAMS, T_MAX).fit(Xtr, ytr), Xva, loss.task == "classification"
        )
    assert len(stages) == T_MAX
    expected = [_criterion(loss, yva, z) for z in stages]
    np.testing.assert_allclose(values[1:], expected, rtol=1e-12, atol=1e-15)
    # T = 0: the library's own initial prediction (LightGBM keeps labels as float32)
    z0 = _initial(loss, ytr, float32=algo == "lightgbm")
    assert values[0] == pytest.approx(_criterion(loss, yva, np.full(len(yva), z0)), rel=1e-5)
    assert method.val_metric == ("misclassification" if loss.task == "classification" else "loss")
    assert method.reports_loss() == (loss.task == "regression")


def test_lightgbm_curve_stays_flat_once_no_tree_can_grow(toy_data):
    # constant features: no split is ever possible, LightGBM keeps its initial score only
    loss = _loss("lad")
    _, y = toy_data("regression")
    X = np.ones((120, 2))
    method = make_method("lightgbm", loss)
    values, _ = method.validation_curve(PARAMS, (X[:80], y[:80]), (X[80:], y[80:]), T_MAX, 0)
    assert np.all(values == values[0])
    assert values[0] == pytest.approx(
        loss.value(y[80:], np.full(40, np.median(y[:80].astype(np.float32)))), rel=1e-6
    )
    z = method.refit_predict(PARAMS, 7, (X[:80], y[:80]), X[80:], 0)
    assert np.ptp(z) == 0 and z[0] == pytest.approx(np.median(y[:80]), rel=1e-6)


# -- selection and refit on train ∪ validation -----------------------------------------------------
@pytest.mark.parametrize("algo", ["lightgbm", "sklearn_hgb"])
@pytest.mark.parametrize("loss_name", ["lad", "hinge"])
@pytest.mark.slow
def test_row_refits_the_selected_point_on_train_and_validation(algo, loss_name, toy_data):
    loss = _loss(loss_name)
    clf = loss.task == "classification"
    X, y = toy_data(loss.task, n=160)
    grid = [{"max_depth": 1, "learning_rate": 0.5}, {"max_depth": 3, "learning_rate": 0.1}]
    (row,) = run_protocol(
        X, y, make_method(algo, loss), grid, n_splits=1, max_estimators=T_MAX, progress=False
    )
    tr, va, te = split_indices(len(y), 0)
    trval = np.concatenate([tr, va])

    # selection by hand on the library's own curves: lowest value, then smallest T, then first point
    curves = []
    for params in grid:
        if algo == "lightgbm":
            stages = _lgb_stages(_lgb_booster(loss, params, X[tr], y[tr], T_MAX), X[va])
        else:
            stages = _hgb_stages(_hgb(loss, params, T_MAX).fit(X[tr], y[tr]), X[va], clf)
        z0 = np.full(len(va), _initial(loss, y[tr], float32=algo == "lightgbm"))
        curves.append([_criterion(loss, y[va], z) for z in [z0, *stages]])
    curves = np.array(curves)
    best = curves.min()
    T = int(np.flatnonzero(np.isclose(curves, best, rtol=1e-9, atol=0).any(axis=0))[0])
    g = int(np.flatnonzero(np.isclose(curves[:, T], best, rtol=1e-9, atol=0))[0])
    assert (row["grid_index"], row["n_estimators"]) == (g, T)
    assert row["val_loss"] == pytest.approx(best, rel=1e-5)

    # the refit: the library fitted on train ∪ validation with those parameters and T trees
    params = grid[g]
    if T == 0:
        z = np.full(len(te), _initial(loss, y[trval], float32=algo == "lightgbm"))
    elif algo == "lightgbm":
        z = _lgb_booster(loss, params, X[trval], y[trval], T).predict(X[te], raw_score=True)
    else:
        est = _hgb(loss, params, T).fit(X[trval], y[trval])
        z = est.decision_function(X[te]) if clf else est.predict(X[te])
    if clf:
        assert math.isnan(row["test_loss"]) and row["val_metric"] == "misclassification"
        assert row["test_error"] == pytest.approx(_error(y[te], z))
    else:
        assert math.isnan(row["test_error"]) and row["val_metric"] == "loss"
        assert row["test_loss"] == pytest.approx(loss.value(y[te], z), rel=1e-6)


@pytest.mark.parametrize("algo", ["lightgbm", "sklearn_hgb"])
def test_refit_at_zero_is_the_initial_prediction(algo, toy_data):
    loss = _loss("pinball")
    X, y = toy_data("regression")
    z = make_method(algo, loss).refit_predict(PARAMS, 0, (X[:90], y[:90]), X[90:], 0)
    assert np.ptp(z) == 0
    assert z[0] == pytest.approx(_initial(loss, y[:90], float32=algo == "lightgbm"), rel=1e-6)


# -- settings --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "algo, cls", [("lightgbm", LightGBMMethod), ("sklearn_hgb", HistGradientBoostingMethod)]
)
@pytest.mark.grid
def test_config_lists_the_fixed_settings(compose, algo, cls):
    from hydra.utils import instantiate

    built = instantiate(compose([f"algo={algo}"]).algo, _convert_="all")
    assert built.name == algo and built.options == cls.defaults
    method = built.method(_loss("lad"))
    assert method.settings == cls.defaults
    assert method.versions() == {
        method.library: __import__("lightgbm" if algo == "lightgbm" else "sklearn").__version__
    }


@pytest.mark.parametrize("algo", ["lightgbm", "sklearn_hgb"])
@pytest.mark.parametrize(
    "loss, options, match",
    [
        (SimpleNamespace(name="huber", task="regression"), {}, "no objective for loss 'huber'"),
        (make_loss("lad"), {"min_leaf": 1}, r"unknown .* setting\(s\) \['min_leaf'\]"),
    ],
)
def test_bad_settings_refused_when_built(algo, loss, options, match):
    with pytest.raises(ProtocolError, match=match):
        make_method(algo, loss, options=options)


@pytest.mark.parametrize(
    "algo, options, match",
    [
        ("lightgbm", {"min_data_in_leaf": 0}, "min_data_in_leaf=0 is invalid"),
        ("lightgbm", {"num_threads": 1.5}, "num_threads=1.5 is invalid"),
        ("sklearn_hgb", {"early_stopping": True}, "early_stopping=True is invalid"),
        (
            "sklearn_hgb",
            {"max_bins": 300},
            r"max_bins=300 is invalid: must be an integer in \[2, 255\]",
        ),
    ],
)
def test_bad_values_refused_before_any_fit(tmp_path, monkeypatch, algo, options, match):
    import proxboost.experiments.fits.pipeline

    def no_data(*args, **kwargs):  # pragma: no cover - reached only if validation comes too late
        raise AssertionError("data loaded before the settings were checked")

    monkeypatch.setattr(proxboost.experiments.fits.pipeline, "load_dataset", no_data)
    with pytest.raises(ProtocolError, match=match):
        run_experiment(
            dataset="synthetic",
            loss="lad",
            algo=Algo(algo, **options),
            grid={"max_depth": [1], "learning_rate": [0.5]},
            n_splits=1,
            max_estimators=3,
            results_dir=tmp_path,
            progress=False,
            n_jobs=1,
        )


@pytest.mark.slow
def test_rows_record_the_library_versions(tmp_path):
    import lightgbm
    import sklearn

    grid = {"max_depth": [1], "learning_rate": [0.5]}
    for algo in ("lightgbm", "sklearn_hgb"):
        df = run_experiment(
            dataset="synthetic",
            dataset_params={"n_samples": 80},
            loss="lad",
            algo=algo,
            grid=grid,
            n_splits=1,
            max_estimators=3,
            results_dir=tmp_path,
            progress=False,
            n_jobs=1,
        )
        assert len(df) == 1 and df.loc[0, "engine"] == "none"
        assert df.loc[0, "lightgbm_version"] == lightgbm.__version__
        assert df.loc[0, "scikit_learn_version"] == sklearn.__version__


# -- quantile regression forests ------------------------------------------------------------------
QRF_PARAMS = {"max_features": 1.0, "min_samples_leaf": 3}


@pytest.mark.parametrize("loss_name, tau", [("pinball", 0.9), ("lad", 0.5)])
@pytest.mark.grid
def test_quantile_forest_predicts_the_run_quantile_scored_by_our_loss(loss_name, tau, toy_data):
    from quantile_forest import RandomForestQuantileRegressor

    X, y = toy_data("regression", n=150)
    train, valid = (X[:100], y[:100]), (X[100:], y[100:])
    loss = _loss(loss_name)
    method = make_method("quantile_forest", loss, options={"n_estimators": 30})
    values, n_estimators = method.validation_curve(QRF_PARAMS, train, valid, T_MAX, 7)
    direct = RandomForestQuantileRegressor(
        n_estimators=30, max_features=1.0, min_samples_leaf=3, random_state=7, n_jobs=1
    ).fit(*train)
    pred = direct.predict(valid[0], quantiles=[tau])
    residual = valid[1] - pred
    pinball = np.mean(np.maximum(tau * residual, (tau - 1) * residual))
    expected = 2 * pinball if loss_name == "lad" else pinball  # lad is |r|, twice pinball at 0.5
    assert values.shape == (1,) and list(n_estimators) == [30]
    assert values[0] == pytest.approx(expected, rel=1e-12)
    refit = method.refit_predict(QRF_PARAMS, 30, train, valid[0], 7)
    np.testing.assert_array_equal(refit, pred)


def test_quantile_forest_quantiles_are_ordered(toy_data):
    X, y = toy_data("regression", n=150)
    method = make_method("quantile_forest", _loss("pinball"), options={"n_estimators": 30})
    q = method.predict_quantiles(QRF_PARAMS, (X[:100], y[:100]), X[100:], [0.1, 0.5, 0.9], 0)
    assert q.shape == (50, 3) and np.all(np.diff(q, axis=1) >= 0)


@pytest.mark.parametrize("loss_name", ["ls", "hinge"])
def test_quantile_forest_refuses_losses_without_a_quantile(loss_name):
    with pytest.raises(ProtocolError, match="quantile_forest predicts a quantile"):
        make_method("quantile_forest", _loss(loss_name))


@pytest.mark.slow
def test_quantile_forest_runs_the_protocol(tmp_path):
    df = run_experiment(
        dataset="synthetic",
        dataset_params={"n_samples": 80},
        loss="pinball",
        loss_params={"tau": 0.9},
        algo=Algo("quantile_forest", n_estimators=20),
        grid={"max_features": [1.0, "sqrt"], "min_samples_leaf": [1, 5]},
        n_splits=2,
        max_estimators=3,
        results_dir=tmp_path,
        progress=False,
        n_jobs=1,
    )
    assert len(df) == 2 and set(df["engine"]) == {"none"} and df["test_loss"].notna().all()
    assert set(df["n_grid"]) == {4}
    with pytest.raises(ProtocolError, match="min_samples_leaf"):
        run_experiment(
            dataset="synthetic",
            loss="lad",
            algo="quantile_forest",
            grid={"max_features": [1.0], "min_samples_leaf": [0.5]},
            n_splits=1,
            results_dir=tmp_path,
            progress=False,
        )


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


@pytest.mark.slow
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


# -- CatBoost -------------------------------------------------------------------------------------
def _catboost(loss, params, X, y, rounds, **kw):
    """CatBoost used directly, its settings written out here."""
    from catboost import CatBoostRegressor

    objective = {"ls": "RMSE", "lad": "MAE", "pinball": "Quantile:alpha=0.9"}[loss.name]
    return CatBoostRegressor(
        loss_function=objective,
        depth=params["max_depth"],
        learning_rate=params["learning_rate"],
        iterations=rounds,
        random_seed=0,
        thread_count=1,
        verbose=False,
        allow_writing_files=False,
        **kw,
    ).fit(X, y)


@pytest.mark.parametrize("loss_name", ["ls", "lad", "pinball"])
@pytest.mark.grid
def test_catboost_curve_is_its_prediction_after_each_tree_scored(loss_name, toy_data):
    loss = _loss(loss_name)
    X, y = toy_data("regression")
    Xtr, ytr, Xva, yva = X[:80], y[:80], X[80:], y[80:]
    method = make_method("catboost", loss)
    values, Ts = method.validation_curve(PARAMS, (Xtr, ytr), (Xva, yva), T_MAX, 0)
    assert values.shape == (T_MAX + 1,) and np.array_equal(Ts, np.arange(T_MAX + 1))
    model = _catboost(loss, PARAMS, Xtr, ytr, T_MAX)
    expected = [loss.value(yva, model.predict(Xva, ntree_end=t)) for t in range(1, T_MAX + 1)]
    np.testing.assert_allclose(values[1:], expected, rtol=1e-12, atol=1e-15)
    # T = 0: its starting value (boost_from_average): the mean, or the τ-quantile of the
    # training targets as the lower order statistic (NumPy's "inverted_cdf"), to float32 precision
    z0 = model.get_scale_and_bias()[1]
    assert values[0] == loss.value(yva, np.full(len(yva), z0))
    tau = {"ls": None, "lad": 0.5, "pinball": 0.9}[loss_name]
    start = np.mean(ytr) if tau is None else np.quantile(ytr, tau, method="inverted_cdf")
    assert z0 == pytest.approx(start, rel=1e-5)
    assert method.val_metric == "loss" and method.reports_loss()


def test_catboost_refit_is_the_first_trees_of_a_longer_fit(toy_data):
    # the protocol's premise: a refit with T trees is the longer fit's model cut at T
    loss = _loss("pinball")
    X, y = toy_data("regression")
    method = make_method("catboost", loss)
    z = method.refit_predict(PARAMS, 7, (X[:90], y[:90]), X[90:], 0)
    longer = _catboost(loss, PARAMS, X[:90], y[:90], T_MAX)
    np.testing.assert_array_equal(z, longer.predict(X[90:], ntree_end=7))
    z0 = method.refit_predict(PARAMS, 0, (X[:90], y[:90]), X[90:], 0)
    assert np.ptp(z0) == 0 and z0[0] == longer.get_scale_and_bias()[1]


def test_catboost_l2_leaf_reg_is_an_axis_only_when_a_grid_gives_it(toy_data):
    loss = _loss("lad")
    fixed, searched = make_method("catboost", loss), make_method("catboost", loss)
    searched.search_axes({"l2_leaf_reg": [1.0, 30.0]})
    assert fixed.grid_axes == ("max_depth", "learning_rate")
    assert searched.grid_axes == ("max_depth", "learning_rate", "l2_leaf_reg")
    assert "l2_leaf_reg" in fixed.identity()["options"]
    assert "l2_leaf_reg" not in searched.identity()["options"]
    X, y = toy_data("regression")
    params = {**PARAMS, "l2_leaf_reg": 30.0}
    z = searched.refit_predict(params, 5, (X[:90], y[:90]), X[90:], 0)
    expected = _catboost(loss, PARAMS, X[:90], y[:90], 5, l2_leaf_reg=30.0).predict(X[90:])
    np.testing.assert_array_equal(z, expected)
    assert not np.array_equal(z, fixed.refit_predict(PARAMS, 5, (X[:90], y[:90]), X[90:], 0))


@pytest.mark.parametrize(
    "loss, options, match",
    [
        (make_loss("hinge"), {}, "regression losses ls, lad, pinball, not loss=hinge"),
        (make_loss("lad"), {"depth": 3}, r"unknown catboost setting\(s\) \['depth'\]"),
        (make_loss("lad"), {"thread_count": 0}, "thread_count=0 is invalid"),
    ],
)
def test_catboost_bad_settings_refused_when_built(loss, options, match):
    with pytest.raises(ProtocolError, match=match):
        make_method("catboost", loss, options=options)


@pytest.mark.grid
def test_catboost_config_lists_the_fixed_settings(compose):
    import catboost
    from hydra.utils import instantiate

    from proxboost.experiments.plan.baselines import CatBoostMethod

    built = instantiate(compose(["algo=catboost"]).algo, _convert_="all")
    method = built.method(_loss("pinball"))
    assert built.options == CatBoostMethod.defaults == method.settings
    assert method.versions() == {"catboost": catboost.__version__}
    assert method.identity()["options"]["objective"] == "Quantile:alpha=0.9"


# -- several quantile levels ----------------------------------------------------------------------
LEVELS = (0.05, 0.95)


def _levels():
    from proxboost.losses import MultiQuantile

    return MultiQuantile(list(LEVELS))


@pytest.mark.grid
def test_catboost_multiquantile_curve_is_its_prediction_after_each_tree(toy_data):
    from catboost import CatBoostRegressor

    X, y = toy_data("regression")
    Xtr, ytr, Xva, yva = X[:80], y[:80], X[80:], y[80:]
    method = make_method("catboost", _levels())
    values, _ = method.validation_curve(PARAMS, (Xtr, ytr), (Xva, yva), T_MAX, 0)
    model = CatBoostRegressor(
        loss_function="MultiQuantile:alpha=0.05,0.95", depth=2, learning_rate=0.3,
        iterations=T_MAX, random_seed=0, thread_count=1, verbose=False, allow_writing_files=False,
    ).fit(Xtr, ytr)  # fmt: skip

    def criterion(P):  # the sum of the two levels' mean pinball losses
        return sum(_loss_at(t).value(yva, P[:, k]) for k, t in enumerate(LEVELS))

    expected = [criterion(model.predict(Xva, ntree_end=t)) for t in range(1, T_MAX + 1)]
    np.testing.assert_allclose(values[1:], expected, rtol=1e-12, atol=1e-15)
    assert method.val_metric == "sum_of_levels"
    z = method.refit_predict(PARAMS, 9, (Xtr, ytr), Xva, 0)
    assert z.shape == (len(Xva), 2)
    np.testing.assert_array_equal(z, model.predict(Xva, ntree_end=9))


def _loss_at(tau):
    return make_loss("pinball", tau=tau)


def test_quantile_forest_several_levels_is_one_forest(toy_data):
    from quantile_forest import RandomForestQuantileRegressor

    X, y = toy_data("regression")
    method = make_method("quantile_forest", _levels(), options={"n_estimators": 30})
    values, _ = method.validation_curve(QRF_PARAMS, (X[:80], y[:80]), (X[80:], y[80:]), T_MAX, 7)
    forest = RandomForestQuantileRegressor(
        n_estimators=30, max_features=1.0, min_samples_leaf=3, random_state=7, n_jobs=1
    ).fit(X[:80], y[:80])
    P = forest.predict(X[80:], quantiles=list(LEVELS))
    assert values[0] == pytest.approx(sum(_loss_at(t).value(y[80:], P[:, k])
                                          for k, t in enumerate(LEVELS)), rel=1e-12)  # fmt: skip
    z = method.refit_predict(QRF_PARAMS, 30, (X[:80], y[:80]), X[80:], 7)
    np.testing.assert_array_equal(z, P)


@pytest.mark.parametrize("algo", ["lightgbm", "sklearn_hgb", "xgboost"])
@pytest.mark.grid
def test_separate_levels_are_the_single_level_models(algo, toy_data):
    X, y = toy_data("regression")
    train, valid = (X[:80], y[:80]), (X[80:], y[80:])
    method = make_method(algo, _levels())
    assert method.separate_levels and method.val_metric == "sum_of_levels"
    assert method.identity()["options"]["levels"] == "separate models"
    values, Ts = method.validation_curve(PARAMS, train, valid, T_MAX, 0)
    other = {**PARAMS, "max_depth": 1}
    z = method.refit_predict([PARAMS, other], [4, 9], train, X[80:], 0)
    for k, tau in enumerate(LEVELS):
        single = make_method(algo, _loss_at(tau))
        v, _ = single.validation_curve(PARAMS, train, valid, T_MAX, 0)
        np.testing.assert_array_equal(values[k], v)
        refit = single.refit_predict([PARAMS, other][k], [4, 9][k], train, X[80:], 0)
        np.testing.assert_array_equal(z[:, k], refit)


@pytest.mark.slow
def test_separate_levels_rows_select_each_level_on_its_own(toy_data):
    """The row's choice per level is the one that minimises that level's validation loss alone
    (found here by brute force over the grid and T), and its test loss their refits' mean."""
    X, y = toy_data("regression", n=160)
    grid = [{"max_depth": 1, "learning_rate": 0.5}, {"max_depth": 3, "learning_rate": 0.1}]
    (row,) = run_protocol(
        X, y, make_method("lightgbm", _levels()), grid, n_splits=1, max_estimators=T_MAX,
        progress=False,
    )  # fmt: skip
    tr, va, te = split_indices(len(y), 0)
    choices, preds, total = [], [], 0.0
    for tau in LEVELS:
        single = make_method("lightgbm", _loss_at(tau))
        curves = np.array(
            [single.validation_curve(p, (X[tr], y[tr]), (X[va], y[va]), T_MAX, 0)[0] for p in grid]
        )
        best = curves.min()
        T = int(np.flatnonzero((curves == best).any(axis=0))[0])
        g = int(np.flatnonzero(curves[:, T] == best)[0])
        choices.append({"grid_index": g, "n_estimators": T, "params": grid[g]})
        total += best
        trval = np.concatenate([tr, va])
        preds.append(single.refit_predict(grid[g], T, (X[trval], y[trval]), X[te], 0))
    assert json.loads(row["levels_choice"]) == choices
    assert math.isnan(row["n_estimators"]) and math.isnan(row["grid_index"])
    assert row["val_loss"] == pytest.approx(total, rel=1e-12)
    levels = [_loss_at(t).value(y[te], preds[k]) for k, t in enumerate(LEVELS)]
    assert row["test_loss"] == pytest.approx(np.mean(levels), rel=1e-12)
    assert "crossing_raw" in row and 0.0 <= row["crossing_raw"] <= 1.0


def test_random_forest_refuses_several_levels():
    with pytest.raises(ValueError, match="fits one quantile level per model"):
        make_method("random_forest", _levels())
