"""Numeric extremes: features beyond float32, weights of any scale, targets near the bound."""

import warnings

import numpy as np
import pytest

from proxboost import BoostingClassifier, BoostingRegressor
from proxboost.boosting import ALGOS
from proxboost.losses import make_loss

RNG = np.random.RandomState(7)
N = 80
X = RNG.normal(size=(N, 3))
Y = X[:, 0] + RNG.standard_t(3, size=N)
LABELS = (Y > 0).astype(int)


@pytest.mark.slow
def test_the_histogram_engine_bins_float64_features_of_any_size():
    est = BoostingRegressor(engine="hist", n_estimators=5).fit(X * 1e300, Y)
    ref = BoostingRegressor(engine="hist", n_estimators=5).fit(X, Y)
    np.testing.assert_array_equal(est.predict(X * 1e300), ref.predict(X))


@pytest.mark.parametrize("engine", ["exact", "sklearn"])
def test_features_beyond_float32_are_refused_everywhere(engine):
    """The float32 engines (scikit-learn's tree and its compiled twin) refuse them in one line."""
    huge = X * 1e300
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one clear error, no numpy overflow warning before it
        with pytest.raises(ValueError, match="float32"):
            BoostingRegressor(engine=engine, n_estimators=2).fit(huge, Y)
        est = BoostingRegressor(engine=engine, n_estimators=2).fit(X, Y)
        with pytest.raises(ValueError, match="float32"):
            est.predict(huge)
        with pytest.raises(ValueError, match="float32"):
            BoostingRegressor(engine=engine, n_estimators=2).fit(X, Y, eval_set=(huge, Y))


@pytest.mark.parametrize("engine", ["exact", "hist", "sklearn"])
@pytest.mark.parametrize("loss", ["lad", "pinball", "ls"])
@pytest.mark.parametrize("scale", [1e-200, 0.1, 3.0, 1e200])
def test_uniform_weights_of_any_size_are_the_unweighted_fit(engine, loss, scale):
    def fit(w):
        est = BoostingRegressor(
            loss=loss, algo="gradient", engine=engine, n_estimators=20, random_state=0, tau=0.7
        )
        return est.fit(X, Y, sample_weight=w, eval_set=(X, Y, w))

    a, b = fit(None), fit(np.full(N, scale))
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_array_equal(a.train_loss_, b.train_loss_)
    np.testing.assert_array_equal(a.eval_loss_, b.eval_loss_)


@pytest.mark.parametrize("engine", ["exact", "hist", "sklearn"])
@pytest.mark.parametrize("algo", sorted(ALGOS))
@pytest.mark.grid
def test_weights_times_a_power_of_two_give_the_same_fit(engine, algo):
    w = RNG.randint(0, 4, size=N).astype(float)
    fits = [
        BoostingClassifier(
            loss="hinge", algo=algo, engine=engine, n_estimators=15, random_state=0
        ).fit(X, LABELS, sample_weight=c * w)
        for c in (1.0, 2.0**-700, 2.0**900)
    ]
    for other in fits[1:]:
        np.testing.assert_array_equal(other.decision_function(X), fits[0].decision_function(X))
        np.testing.assert_array_equal(other.train_loss_, fits[0].train_loss_)


def test_other_scales_agree_to_rounding_for_the_smooth_losses():
    w = RNG.uniform(0.5, 2.0, size=N)
    for loss in ("logistic", "exponential"):
        a = BoostingClassifier(loss=loss, n_estimators=20, random_state=0).fit(
            X, LABELS, sample_weight=w
        )
        b = BoostingClassifier(loss=loss, n_estimators=20, random_state=0).fit(
            X, LABELS, sample_weight=0.3 * w
        )
        np.testing.assert_allclose(b.train_loss_, a.train_loss_, rtol=1e-10)
    a = BoostingRegressor(loss="ls", n_estimators=20, random_state=0).fit(X, Y, sample_weight=w)
    b = BoostingRegressor(loss="ls", n_estimators=20, random_state=0).fit(
        X, Y, sample_weight=0.3 * w
    )
    np.testing.assert_allclose(b.train_loss_, a.train_loss_, rtol=1e-10)


def test_weights_spanning_too_far_are_refused():
    w = np.ones(N)
    w[0] = 1e-310  # subnormal next to 1: would underflow
    w[1] = 1.0e10
    with pytest.raises(ValueError, match="span too many orders of magnitude"):
        BoostingRegressor(n_estimators=2).fit(X, Y, sample_weight=w)


@pytest.mark.parametrize("loss", ["ls", "lad", "pinball"])
@pytest.mark.parametrize("algo", sorted(ALGOS))
def test_targets_just_inside_the_bound_fit_finitely_and_beyond_are_refused(loss, algo):
    bound = make_loss(loss).target_bound
    y = Y / np.max(np.abs(Y))
    est = BoostingRegressor(loss=loss, algo=algo, n_estimators=10, learning_rate=0.5, tau=0.8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.fit(X, 0.99 * bound * y, eval_set=(X, 0.99 * bound * y))
    assert np.all(np.isfinite(est.train_loss_)) and np.all(np.isfinite(est.eval_loss_))
    assert np.all(np.isfinite(est.predict(X)))
    with pytest.raises(ValueError, match="beyond the .* that loss="):
        est.fit(X, 1.01 * bound * y)
    with pytest.raises(ValueError, match="eval_set's y_eval has values up to"):
        est.fit(X, y, eval_set=(X, 1.01 * bound * y))
