"""Conformalized quantile regression (``proxboost.conformal``, ``BoostingRegressor.calibrate``)."""

import math

import numpy as np
import pytest

from proxboost import BoostingRegressor
from proxboost.conformal import conformal_interval, cqr_correction


def test_the_correction_is_the_conformal_quantile_of_the_scores():
    rng = np.random.RandomState(0)
    for n, alpha in [(9, 0.1), (50, 0.2), (123, 0.05)]:
        lower, upper = rng.normal(size=n) - 1, rng.normal(size=n) + 1
        y = rng.normal(scale=2, size=n)
        q = cqr_correction(lower, upper, y, alpha)
        scores = np.maximum(lower - y, y - upper)
        need = math.ceil((n + 1) * (1 - alpha))
        # the smallest q with at least `need` scores <= q (brute force over the scores)
        assert q == min(s for s in scores if np.sum(scores <= s) >= need)
    assert cqr_correction([0.0] * 5, [1.0] * 5, [0.5] * 5, 0.1) == math.inf  # 5 rows < 1/alpha


def test_a_negative_correction_never_gives_an_empty_interval():
    lower, upper = np.array([0.0, 0.0]), np.array([1.0, 10.0])
    lo, hi = conformal_interval(lower, upper, -1.0)
    np.testing.assert_array_equal(lo, [0.5, 1.0])
    np.testing.assert_array_equal(hi, [0.5, 9.0])


def test_calibrated_coverage_holds_on_new_data():
    """Coverage of the calibrated 90 % interval, averaged over 30 random calibration / test
    partitions of fresh data, lies in the guarantee [1 - alpha, ceil((n+1)(1-alpha))/(n+1)]
    up to 4 standard errors (Beta spread of each partition's coverage and test sampling)."""
    rng = np.random.RandomState(1)

    def draw(n):
        x = rng.uniform(-2, 2, size=(n, 2))
        return x, np.sin(x[:, 0]) + (0.2 + np.abs(x[:, 1])) * rng.standard_t(4, size=n)

    X, y = draw(400)
    est = BoostingRegressor(
        loss="pinball", tau=[0.05, 0.95], n_estimators=60, learning_rate=0.2, random_state=0
    ).fit(X, y)
    raw = est.predict_interval(X)
    X_pool, y_pool = draw(6000)
    n_cal, alpha, coverages = 199, 0.1, []
    for r in range(30):
        perm = np.random.RandomState(r).permutation(len(y_pool))
        cal, test = perm[:n_cal], perm[n_cal:]
        est.calibrate(X_pool[cal], y_pool[cal])
        lo, hi = est.predict_interval(X_pool[test]).T
        coverages.append(np.mean((y_pool[test] >= lo) & (y_pool[test] <= hi)))
    rank = math.ceil((n_cal + 1) * (1 - alpha))
    beta_sd = math.sqrt(rank * (n_cal + 1 - rank) / ((n_cal + 1) ** 2 * (n_cal + 2)))
    se = math.sqrt(beta_sd**2 / 30 + alpha * (1 - alpha) / (30 * (len(y_pool) - n_cal)))
    mean = float(np.mean(coverages))
    assert 1 - alpha - 4 * se <= mean <= rank / (n_cal + 1) + 4 * se, (mean, se)
    np.testing.assert_array_equal(
        raw, BoostingRegressor(**est.get_params()).fit(X, y).predict_interval(X)
    )


def test_calibration_belongs_to_one_fit_and_needs_two_levels():
    rng = np.random.RandomState(2)
    X, y = rng.normal(size=(100, 2)), rng.normal(size=100)
    est = BoostingRegressor(loss="pinball", tau=[0.1, 0.9], n_estimators=10, random_state=0)
    est.fit(X, y)
    before = est.predict_interval(X)
    est.calibrate(X, y)
    assert est.interval_correction_ is not None
    est.fit(X, y)  # refitting drops the calibration of the previous model
    assert not hasattr(est, "interval_correction_")
    np.testing.assert_array_equal(est.predict_interval(X), before)
    for tau in (0.5, [0.5]):
        single = BoostingRegressor(loss="pinball", tau=tau, n_estimators=3).fit(X, y)
        with pytest.raises(ValueError, match="an interval needs at least two quantile levels"):
            single.predict_interval(X)
        with pytest.raises(ValueError, match="an interval needs at least two quantile levels"):
            single.calibrate(X, y)
