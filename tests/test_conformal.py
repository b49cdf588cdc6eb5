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


@pytest.mark.slow
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


@pytest.mark.slow
def test_the_rank_is_exact_for_levels_on_a_grid():
    """ceil((n + 1)(tau_K - tau_1)) for every pair of levels on the 0.005 grid and every n up to
    400, against the rational oracle (j - i)/200 built from the grid's integers: a level is the
    decimal it prints as, so 0.8 - 0.2 is 3/5, not 0.6000000000000001."""
    from fractions import Fraction

    from proxboost.conformal import conformal_rank, levels_alpha

    grid = [float(Fraction(i, 200)) for i in range(200)]  # the doubles nearest 0.005, 0.01, ...
    ranks, float_wrong = {}, 0
    for i in range(1, 200):
        for j in range(i + 1, 200):
            alpha = levels_alpha(grid[i], grid[j])
            assert alpha == Fraction(200 - (j - i), 200), (grid[i], grid[j], alpha)
            float_alpha = 1.0 - (grid[j] - grid[i])
            if (j - i) not in ranks:
                ranks[j - i] = [conformal_rank(n, alpha) for n in range(1, 401)]
                assert ranks[j - i] == [
                    math.ceil((n + 1) * Fraction(j - i, 200)) for n in range(1, 401)
                ]
            float_wrong += any(
                math.ceil((n + 1) * (1.0 - float_alpha)) != ranks[j - i][n - 1]
                for n in (4, 9, 199, 399)
            )
    # the floating-point rank is wrong for many pairs (the test above can fail)
    assert float_wrong > 1000


def test_calibrate_uses_the_exact_rank():
    """Levels (0.2, 0.8) and n = 9 calibration rows: the rank is ceil(10 x 3/5) = 6 (in floating
    point 1 - (0.8 - 0.2) = 0.3999999999999999 gives 7); the correction is the 6th smallest
    score, computed here by brute force."""
    rng = np.random.RandomState(3)
    X, y = rng.normal(size=(80, 2)), rng.normal(size=80)
    est = BoostingRegressor(loss="pinball", tau=[0.2, 0.8], n_estimators=5, random_state=0)
    est.fit(X, y)
    X_cal, y_cal = rng.normal(size=(9, 2)), rng.normal(size=9)
    est.calibrate(X_cal, y_cal)
    P = est.predict(X_cal)
    scores = sorted(max(lo - t, t - hi) for lo, hi, t in zip(P[:, 0], P[:, -1], y_cal))
    assert est.interval_correction_ == scores[5]
    assert scores[5] != scores[6]
    assert cqr_correction(P[:, 0], P[:, -1], y_cal, 0.4) == scores[5]


def test_calibrate_and_intervals_use_the_fitted_levels():
    """``set_params(tau=...)`` after a fit changes nothing until the next fit: calibrate,
    predict_interval and score use the fitted levels (0.05, 0.95), whose rank is
    ceil(20 x 9/10) = 18 on 19 rows (the changed levels 0.25/0.75 would give 10)."""
    rng = np.random.RandomState(4)
    X, y = rng.normal(size=(80, 2)), rng.normal(size=80)
    X_cal, y_cal = rng.normal(size=(19, 2)), rng.normal(size=19)
    est = BoostingRegressor(loss="pinball", tau=[0.05, 0.95], n_estimators=5, random_state=0)
    est.fit(X, y)
    score = est.score(X_cal, y_cal)
    est.set_params(tau=[0.25, 0.75])
    est.calibrate(X_cal, y_cal)
    P = est.predict(X_cal)
    scores = sorted(max(lo - t, t - hi) for lo, hi, t in zip(P[:, 0], P[:, -1], y_cal))
    assert est.interval_correction_ == scores[17] != scores[9]
    lo, hi = est.predict_interval(X_cal).T
    np.testing.assert_array_equal(lo, P[:, 0] - scores[17])
    np.testing.assert_array_equal(hi, P[:, -1] + scores[17])
    assert est.score(X_cal, y_cal) == score
    est.set_params(tau=0.5)  # a scalar now: the fitted model still has two levels
    assert est.predict_interval(X_cal).shape == (19, 2)
    single = BoostingRegressor(loss="pinball", tau=0.5, n_estimators=3).fit(X, y)
    single.set_params(tau=[0.1, 0.9])
    with pytest.raises(ValueError, match="fitted with Pinball"):
        single.predict_interval(X)


def test_the_measurement_counts_the_rows_whose_bounds_cross():
    from proxboost.conformal import interval_measurement

    # rows 0-9 calibrate, 10-19 measure; rows 12, 15 cross (lower > upper) before calibration
    rng = np.random.RandomState(1)
    y = rng.normal(size=20)
    lower, upper = y - 1.0, y + 3.0
    lower[[12, 15]], upper[[12, 15]] = 0.5, 0.2
    cal, ev = np.arange(10), np.arange(10, 20)
    m = interval_measurement(lower, upper, y, cal, ev, 0.5)
    assert m["crossing_raw"] == 2 / 10
    q = m["interval_correction"]  # every calibration score is max(-1, -3): q = -1
    assert q == -1.0
    # widths 4 narrowed by 2 x 1 to 2: not crossing; rows 12 and 15 cross further
    assert m["crossing_calibrated"] == sum(lower[i] - q > upper[i] + q for i in ev) / 10 == 0.2
    assert m["width_raw"] == pytest.approx(np.mean(upper[ev] - lower[ev]))


# -- ties broken at random ----------------------------------------------------------------------
def test_random_ties_take_the_rank_in_the_order_score_then_uniform():
    """q and the boundary share are the score and the uniform of the pair of rank
    ceil((n + 1)(1 - alpha)) in the sorted (score, U) pairs, the U drawn by the same generator
    in row order (brute force); without ties q is the closed rule's."""
    from proxboost.conformal import cqr_calibration

    rng = np.random.RandomState(5)
    for n, alpha in [(19, 0.1), (50, 0.2), (99, 0.05)]:
        lower, upper = np.zeros(n), np.full(n, 2.0)
        y = rng.binomial(6, 0.4, size=n).astype(float)  # integer: scores -1, 0, 1, ... tie
        fit = cqr_calibration(lower, upper, y, alpha, ties="random", random_state=7)
        u = np.random.default_rng(7).random(n)
        pairs = sorted(zip(np.maximum(lower - y, y - upper), u))
        rank = math.ceil((n + 1) * (1 - alpha))
        assert (fit.correction, fit.boundary_share) == pairs[rank - 1]
        assert fit.correction == cqr_correction(lower, upper, y, alpha)
        distinct = y + rng.uniform(-0.4, 0.4, size=n)
        assert cqr_calibration(
            lower, upper, distinct, alpha, ties="random", random_state=1
        ).correction == cqr_correction(lower, upper, distinct, alpha)


def test_random_ties_restore_the_upper_bound_on_an_integer_target():
    """Integer y: the closed intervals cover far more than ceil((n + 1)(1 - alpha))/(n + 1) on
    average over 3000 calibration/test draws; with random ties the mean coverage is that bound
    (exactly, in expectation: the pairs (score, U) are distinct and exchangeable) within 4
    standard errors."""
    from proxboost.conformal import interval_measurement

    rng = np.random.default_rng(11)
    n_cal, n_test, reps, alpha = 19, 50, 3000, 0.1
    cal, ev = np.arange(n_cal), np.arange(n_cal, n_cal + n_test)
    closed, ties = [], []
    for r in range(reps):
        y = rng.poisson(3.0, size=n_cal + n_test).astype(float)
        lower, upper = np.full(len(y), 1.0), np.full(len(y), 5.0)
        closed.append(interval_measurement(lower, upper, y, cal, ev, alpha)["coverage_calibrated"])
        m = interval_measurement(lower, upper, y, cal, ev, alpha, "random", (r,))
        ties.append(m["coverage_calibrated"])
    bound = math.ceil((n_cal + 1) * (1 - alpha)) / (n_cal + 1)
    se = np.std(ties, ddof=1) / math.sqrt(reps)
    assert abs(np.mean(ties) - bound) <= 4 * se, (np.mean(ties), bound, se)
    assert np.mean(closed) > bound + 10 * np.std(closed, ddof=1) / math.sqrt(reps)


def test_open_ends_exclude_exactly_the_ends():
    lower, upper = np.array([0.0, 0.0, 1.0]), np.array([2.0, 2.0, 1.0])
    lo, hi = conformal_interval(lower, upper, 1.0, closed=[True, False, False])
    np.testing.assert_array_equal(lo[:1], [-1.0])
    np.testing.assert_array_equal(hi[:1], [3.0])
    assert -1.0 < lo[1] < -1.0 + 1e-12 and 3.0 - 1e-12 < hi[1] < 3.0
    assert (lo[2], hi[2]) == (np.nextafter(0.0, 1.0), np.nextafter(2.0, 0.0))
    point_lo, point_hi = conformal_interval(np.array([1.0]), np.array([1.0]), 0.0, [False])
    assert point_lo[0] == point_hi[0] == 1.0  # a single point stays closed, never empty


def test_the_estimator_breaks_ties_repeatably_and_forgets_them_at_the_next_fit():
    rng = np.random.RandomState(6)
    X = rng.normal(size=(200, 2))
    y = np.round(X[:, 0] + rng.normal(size=200))  # an integer target
    est = BoostingRegressor(loss="pinball", tau=[0.1, 0.9], n_estimators=5, random_state=0)
    est.fit(X[:100], y[:100])
    closed = est.calibrate(X[100:150], y[100:150]).predict_interval(X[150:])
    assert est.interval_boundary_share_ == 1.0
    est.calibrate(X[100:150], y[100:150], ties="random", random_state=3)
    first = est.predict_interval(X[150:])
    np.testing.assert_array_equal(first, est.predict_interval(X[150:]))  # repeatable
    import pickle

    np.testing.assert_array_equal(first, pickle.loads(pickle.dumps(est)).predict_interval(X[150:]))
    share = est.interval_boundary_share_
    assert 0.0 < share < 1.0
    P = est.predict(X[100:150])
    q = est.interval_correction_
    assert q == cqr_correction(P[:, 0], P[:, -1], y[100:150], 0.2)
    # each row is the closed interval, or the same one with both ends one step inwards
    same = (first == closed).all(axis=1)
    inward = (first[:, 0] == np.nextafter(closed[:, 0], np.inf)) & (
        first[:, 1] == np.nextafter(closed[:, 1], -np.inf)
    )
    assert (same | inward).all() and same.any() and inward.any()
    with pytest.raises(ValueError, match="ties='open' is not allowed; allowed values: closed"):
        est.calibrate(X[100:150], y[100:150], ties="open")
    est.fit(X[:100], y[:100])
    with pytest.raises(AttributeError, match="not calibrated"):
        _ = est.interval_boundary_share_
    np.testing.assert_array_equal(
        est.predict_interval(X[150:]),
        BoostingRegressor(**est.get_params()).fit(X[:100], y[:100]).predict_interval(X[150:]),
    )
