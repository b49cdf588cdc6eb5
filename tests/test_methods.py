"""Methods (proxboost.experiments.plan.methods): the method objects of the protocol over the
boosting estimators and the baselines, the Algo and Engine that the config options build, the
estimator factory and the grid checks.

Oracles: the estimators built directly (same predictions, same parameters), the estimators' own
parameter validation (the grid checks accept exactly what they accept), f_0 of the loss.
"""

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

from proxboost import BoostingClassifier, BoostingRegressor
from proxboost.engines import ENGINES
from proxboost.experiments.plan.methods import (
    ALGOS,
    GRID_CHECKS,
    Algo,
    BoostingMethod,
    Engine,
    engine_libraries,
    estimator_options,
    make_estimator,
    make_method,
)
from proxboost.losses import make_loss


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


def test_every_engine_names_the_library_that_grows_its_trees():
    for engine in ENGINES:
        assert engine_libraries(engine), (
            f"engine {engine!r}: add its library to methods._ENGINE_MODULE_LIBRARIES"
        )


def test_an_algo_holds_its_name_its_own_grid_axes_and_its_settings(toy_data):
    algo = Algo("random_forest", grid={"max_features": ["sqrt"]}, n_estimators=7)
    assert (algo.name, algo.grid, algo.options) == (
        "random_forest",
        {"max_features": ["sqrt"]},
        {"n_estimators": 7},
    )
    loss = make_loss("ls")
    built = algo.method(loss)
    direct = make_method("random_forest", loss, options={"n_estimators": 7})
    assert built.identity() == direct.identity() and built.n_estimators == 7
    assert Algo("prox").grid == {} and Algo("prox").options == {}
    boosting = Algo("prox").method(loss, engine="hist", tie_rule="authors")
    assert boosting.identity() == make_method("prox", loss, "hist", tie_rule="authors").identity()
    assert "grid" in repr(algo) and "n_estimators=7" in repr(algo)


def test_an_engine_is_its_name():
    assert Engine("hist") == Engine("hist") != Engine("exact") and Engine("hist").name == "hist"


def test_an_unknown_algo_lists_the_algos():
    with pytest.raises(ValueError, match="unknown algo 'boost'; valid choices: gradient, prox"):
        make_method("boost", make_loss("ls"))
    with pytest.raises(ValueError, match="not a boosting algorithm"):
        BoostingMethod("xgboost", make_loss("ls"))
    assert set(ALGOS) >= {"prox", "xgboost", "random_forest"}


@pytest.mark.parametrize(
    "loss_name, params, cls",
    [
        ("pinball", {"tau": 0.3}, BoostingRegressor),
        ("lad", {}, BoostingRegressor),
        ("exponential", {"beta": 2.0, "newton_steps": 2}, BoostingClassifier),
        ("hinge", {}, BoostingClassifier),
    ],
)
def test_make_estimator_is_the_estimator_of_the_loss_with_its_parameters(
    loss_name, params, cls, toy_data
):
    loss = make_loss(loss_name, **params)
    X, y = toy_data(loss.task, n=60)
    settings = dict(n_estimators=5, max_depth=2, learning_rate=0.3, step=1.0, random_state=3)
    est = make_estimator(loss, "prox", engine="exact", **settings)
    assert type(est) is cls
    direct = cls(loss=loss_name, algo="prox", engine="exact", **params, **settings)
    assert est.get_params() == direct.get_params()
    np.testing.assert_array_equal(est.fit(X, y).predict(X), direct.fit(X, y).predict(X))


def test_estimator_options_hold_what_changes_numbers_and_the_tie_rule():
    loss = make_loss("pinball", tau=0.9)
    base = estimator_options(make_estimator(loss, "prox"))
    assert base["tie_rule"] == "midpoint"
    # the loss's parameters, the grid's axes and the per-fit settings are recorded elsewhere
    for key in ("loss", "tau", "max_depth", "learning_rate", "step", "n_estimators"):
        assert key not in base
    # settings that never change the numbers stay out; one that does is in
    # n_jobs (threads): any value grows the same trees bit for bit (tests/test_threads.py)
    assert "n_jobs" not in base
    nochange = (dict(verbose=1), dict(warm_start=True), dict(random_state=5), dict(n_jobs=2))
    for same in (*nochange, dict(n_jobs=-1), dict(n_jobs=4, engine="hist")):
        assert estimator_options(make_estimator(loss, "prox", **same)) == base
    assert estimator_options(make_estimator(loss, "prox", tol=0.5)) != base


@pytest.mark.parametrize("axis", ["max_depth", "learning_rate", "step"])
@pytest.mark.parametrize("value", [0, 1, 3, 2.5, -1.0, 1e-3, 1.0, 1.5, "auto", "x", True, None])
def test_grid_checks_accept_what_the_estimators_accept(axis, value):
    ok, what = GRID_CHECKS[axis]
    est = BoostingRegressor(**{axis: value})
    try:
        est._validate_params()
        accepted = True
    except InvalidParameterError:
        accepted = False
    assert ok(value) == accepted and what
