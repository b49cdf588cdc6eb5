"""``warm_start``: fitting T1 trees, then T2 > T1 with warm_start=True, is the fit of T2 trees at
once, bit for bit (curves, predictions, leaf values), for every algorithm, engine and loss."""

import numpy as np
import pytest

from proxboost import BoostingClassifier, BoostingRegressor
from proxboost.boosting import ALGOS

RNG = np.random.RandomState(3)
N = 90
X = RNG.normal(size=(N, 4))
Y = X[:, 0] - np.abs(X[:, 1]) + RNG.standard_t(3, size=N)
LABELS = np.where(Y > 0, "b", "a")
W = RNG.randint(0, 3, size=N).astype(float)  # zeros: rows replayed outside the fit
X_EVAL, Y_EVAL = X[:30] + 0.1, Y[:30]


def _assert_same_fit(a, b, X_test):
    assert a.n_iter_ == b.n_iter_
    for name in ("train_loss_", "eval_loss_", "validation_loss_", "alphas_", "weights_"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_array_equal(a.train_prediction_, b.train_prediction_)
    for ca, cb in zip(a.leaf_values_, b.leaf_values_, strict=True):
        np.testing.assert_array_equal(ca, cb)
    np.testing.assert_array_equal(a._raw_predict(X_test), b._raw_predict(X_test))
    for sa, sb in zip(a._staged_raw_predict(X_test), b._staged_raw_predict(X_test), strict=True):
        np.testing.assert_array_equal(sa, sb)


def _grow_in_two(make, fit_args, fit_kwargs, t1=7, t2=16):
    once = make(n_estimators=t2).fit(*fit_args, **fit_kwargs)
    warm = make(n_estimators=t1, warm_start=True).fit(*fit_args, **fit_kwargs)
    assert warm.n_iter_ == min(t1, once.n_iter_)
    warm.set_params(n_estimators=t2).fit(*fit_args, **fit_kwargs)
    return once, warm


@pytest.mark.parametrize("engine", ["exact", "hist", "sklearn"])
@pytest.mark.parametrize("algo", sorted(ALGOS))
@pytest.mark.parametrize("loss", ["ls", "lad", "pinball"])
def test_regressor_in_two_fits_equals_one(engine, algo, loss):
    def make(**kw):
        return BoostingRegressor(
            loss=loss,
            algo=algo,
            engine=engine,
            max_depth=2,
            learning_rate=0.3,
            tau=0.8,
            random_state=0,
            **kw,
        )

    once, warm = _grow_in_two(make, (X, Y), {"sample_weight": W, "eval_set": (X_EVAL, Y_EVAL)})
    _assert_same_fit(once, warm, X_EVAL)


@pytest.mark.parametrize("engine", ["exact", "hist"])
@pytest.mark.parametrize("algo", ["prox", "residual_prox", "accelerated_gradient"])
@pytest.mark.parametrize("loss", ["hinge", "logistic", "exponential"])
def test_classifier_in_two_fits_equals_one(engine, algo, loss):
    def make(**kw):
        return BoostingClassifier(
            loss=loss, algo=algo, engine=engine, max_depth=2, random_state=1, **kw
        )

    once, warm = _grow_in_two(make, (X, LABELS), {"eval_set": (X_EVAL, LABELS[:30])})
    _assert_same_fit(once, warm, X_EVAL)


@pytest.mark.parametrize("t1", [3, 12, 60])
def test_early_stopping_continues_its_history(t1):
    """The validation rows and the history carry over; a fit that stopped stays stopped."""

    def make(**kw):
        return BoostingRegressor(
            loss="lad", learning_rate=0.5, n_iter_no_change=4, random_state=2, **kw
        )

    once, warm = _grow_in_two(make, (X, Y), {}, t1=t1, t2=200)
    assert once.n_iter_ < 200  # it did stop
    _assert_same_fit(once, warm, X_EVAL)


def test_fewer_estimators_or_other_data_is_refused():
    est = BoostingRegressor(n_estimators=10, warm_start=True).fit(X, Y)
    with pytest.raises(ValueError, match=r"n_estimators=5 must be larger or equal to n_iter_=10"):
        est.set_params(n_estimators=5).fit(X, Y)
    with pytest.raises(ValueError, match="continues the previous fit, which was on other data"):
        est.set_params(n_estimators=20).fit(X, Y + 1)
    with pytest.raises(ValueError, match="other data"):
        est.fit(X, Y, eval_set=(X_EVAL, Y_EVAL))
    with pytest.raises(ValueError, match="cannot change n_iter_no_change"):
        est.set_params(n_iter_no_change=3).fit(X, Y)
    same = est.set_params(n_estimators=10, n_iter_no_change=None).fit(X, Y)
    assert same.n_iter_ == 10


def test_data_with_missing_values_continue_and_other_missing_values_are_refused():
    """With missing values the fingerprint counts them per column beside the other values'
    sums: the same data continues, the same data with a missing value filled by 0 (the same
    sum of the values) is refused."""
    X_nan = X.copy()
    X_nan[::7, 1] = np.nan
    est = BoostingRegressor(n_estimators=5, warm_start=True).fit(X_nan, Y)
    assert est.set_params(n_estimators=8).fit(X_nan.copy(), Y).n_iter_ == 8
    filled = np.where(np.isnan(X_nan), 0.0, X_nan)
    with pytest.raises(ValueError, match="other data"):
        est.set_params(n_estimators=10).fit(filled, Y)


def test_without_warm_start_a_fit_starts_anew():
    a = BoostingRegressor(n_estimators=10, random_state=0).fit(X, Y)
    b = BoostingRegressor(n_estimators=10, random_state=0).fit(X, Y).fit(X, Y)
    _assert_same_fit(a, b, X_EVAL)


def test_warm_start_stays_out_of_the_stored_identities():
    """Adding the parameter changes no stored row's identity: the options of a default estimator
    are those recorded in a stored row of the paper protocol."""
    import csv
    import json
    from pathlib import Path

    from proxboost.experiments.plan.methods import estimator_options

    stored = sorted(
        Path(__file__).parents[1].glob("results/paper/*/*/*/lad/prox/exact/*/split-00.csv")
    )
    assert stored, "no stored row of lad/prox/exact under results/paper"
    with open(stored[0], newline="") as f:
        identity = json.loads(next(csv.DictReader(f))["identity"])
    assert estimator_options(BoostingRegressor(loss="lad")) == identity["method"]["options"]
