"""Several quantiles in one model (``tau=[...]``): columns that never cross, by construction."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics import make_scorer, mean_pinball_loss
from sklearn.model_selection import GridSearchCV

from proxboost import BoostingRegressor
from proxboost.boosting import ALGOS
from proxboost.losses import MultiQuantile, check_taus, make_loss

RNG = np.random.RandomState(11)
N = 200
X = RNG.uniform(-2, 2, size=(N, 3))
Y = X[:, 0] + (0.1 + np.abs(X[:, 1])) * RNG.standard_t(3, size=N)  # heteroscedastic
W = RNG.randint(0, 4, size=N).astype(float)
FAR = RNG.normal(scale=50.0, size=(500, 3))  # rows far outside the training data
TAUS = [0.05, 0.3, 0.5, 0.9, 0.95]


def _never_cross(est, Xs):
    for P in [est.predict(Xs), *est.staged_predict(Xs)]:
        assert P.shape == (len(Xs), len(est.tau))
        assert np.all(np.diff(P, axis=1) >= 0.0)


@pytest.mark.parametrize("engine", ["exact", "hist", "sklearn"])
@pytest.mark.parametrize("algo", sorted(ALGOS))
@pytest.mark.grid
def test_columns_never_cross_anywhere_at_any_stage(engine, algo):
    est = BoostingRegressor(
        loss="pinball",
        tau=TAUS,
        algo=algo,
        engine=engine,
        n_estimators=40,
        learning_rate=0.5,
        max_depth=3,
        random_state=0,
    ).fit(X, Y, sample_weight=W, eval_set=(X[:50], Y[:50]))
    assert est.train_loss_.shape == (41, len(TAUS)) and est.eval_loss_.shape == (41, len(TAUS))
    _never_cross(est, np.vstack([X, FAR]))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.grid
def test_the_interval_follows_the_local_spread(seed):
    """Gaps open where the data spread and stay small where they do not: on data 40 times as
    spread for x_1 > 0, the interval there ends much wider than for x_1 < 0."""
    rng = np.random.RandomState(seed)
    x = rng.uniform(-1, 1, size=(600, 2))
    y = x[:, 1] + np.where(x[:, 0] < 0, 0.05, 2.0) * rng.normal(size=600)
    est = BoostingRegressor(
        loss="pinball", tau=[0.1, 0.9], n_estimators=200, learning_rate=0.2, random_state=seed
    ).fit(x, y)
    width = np.diff(est.predict(np.array([[-0.5, 0.0], [0.5, 0.0]])), axis=1).ravel()
    assert width[0] < 0.25 * width[1]
    _never_cross(est, np.vstack([x, FAR[:, :2]]))


def test_ordered_leaves_solve_the_constrained_problem():
    """Pooling adjacent violators against a brute-force search over a grid of ordered c."""
    rng = np.random.RandomState(0)
    taus = np.array([0.2, 0.5, 0.7])
    loss = MultiQuantile(taus)
    for _ in range(15):
        m = 7
        y = rng.normal(size=m)
        H = -np.array([0.5, 0.0, -0.5]) + 0.3 * rng.normal(size=(m, 3))  # levels out of order
        w = rng.randint(1, 4, size=m).astype(float)
        b = np.array([-0.1, 0.05])
        c = loss.line_search(y, H, np.zeros(m, dtype=np.intp), 1, w, "midpoint", None, b)[0]
        assert np.all(np.diff(c) >= b - 1e-12)

        def level_loss(k, cs, y=y, H=H, w=w):
            """Weighted pinball loss of level k for each constant of ``cs`` (an array)."""
            pinball = make_loss("pinball", tau=taus[k])
            pred = H[:, k][:, None] + np.asarray(cs, float)[None, :]
            return np.sum(w[:, None] * pinball.pointwise(y[:, None], pred), axis=0)

        grid = np.linspace(-3, 3, 61)
        # brute force over every ordered triple of the grid (c_2 >= c_1 + b_1, c_3 >= c_2 + b_2)
        total = (
            level_loss(0, grid)[:, None, None]
            + level_loss(1, grid)[None, :, None]
            + level_loss(2, grid)[None, None, :]
        )
        ordered = (grid[None, :, None] >= grid[:, None, None] + b[0] - 1e-12) & (
            grid[None, None, :] >= grid[None, :, None] + b[1] - 1e-12
        )
        best = total[ordered].min()
        found = sum(level_loss(k, [c[k]])[0] for k in range(3))
        assert found <= best + 1e-9


def test_the_sort_free_quantile_of_unit_weights_is_the_sorted_one():
    """Unit weights skip the sort (order statistics by partition): the same interval, bit for
    bit, as the stable sort with cumulative weights, on points with many exact ties, at levels
    whose tau W is a cumulative weight (the tie), just off it (within and beyond 1e-9 W), and
    random."""
    from proxboost._multi_quantile import _sorted_quantile_interval, _unit_quantile_interval

    rng = np.random.RandomState(0)
    checked = ties = 0
    for m in [0, 1, 2, 3, 7, 8, 33, 128, 301]:
        for trial in range(12):
            points = rng.randint(-3, 4, size=m) * 0.5 if trial % 2 else rng.normal(size=m)
            taus = [rng.uniform(0.01, 0.99), *(k / max(m, 1) for k in (1, m // 2, m - 1) if k)]
            taus += [t * (1 + 5e-10) for t in taus[1:]] + [t * (1 + 1e-6) for t in taus[1:]]
            for tau in taus:
                if not 0 < tau < 1:
                    continue
                unit = _unit_quantile_interval(points, tau)
                sorted_ = _sorted_quantile_interval(points, np.ones(m), tau)
                assert unit == sorted_, (m, trial, tau)
                checked += 1
                ties += m > 0 and unit[0] != unit[1]
    assert checked > 500 and ties > 50  # the tie case (an interval) is exercised


def test_the_pooled_quantile_read_near_its_bracket_is_the_full_partitions():
    """The pooled levels' quantile (``_pooled_unit_interval``) reads its order statistics from
    the points inside a bracket, counting the others: the same interval, bit for bit, as
    partitioning every pooled point, whatever the bracket (around the quantile, beside it, empty,
    infinite), on points with many exact ties and at levels whose tau W is a cumulative weight;
    and the rank it starts from is the first rank of the plain scan over every rank."""
    from proxboost._multi_quantile import (
        _pooled_points,
        _pooled_unit_interval,
        _unit_quantile_interval,
        _unit_rank,
    )

    def scanned_rank(m, tau):  # the scan from rank 0, as the reference first wrote it
        for j in range(m):
            cum, target, tol = float(j + 1), tau * m, 1e-9 * m
            if abs(cum - target) <= tol or cum > target:
                return j, abs(cum - target) <= tol
        return -1, False

    rng = np.random.RandomState(1)
    checked = ties = outside = 0
    for trial in range(400):
        n, K = rng.randint(1, 40), rng.randint(2, 5)
        U = rng.randint(-4, 5, size=(n, K)) * 0.5 if trial % 2 else rng.normal(size=(n, K))
        shifts = np.concatenate([[0.0], np.cumsum(rng.choice([0.0, -0.5, 0.25], size=K - 1))])
        first = rng.randint(0, K - 1)
        last = rng.randint(first + 1, K)
        start = rng.randint(0, n)
        stop = rng.randint(start + 1, n + 1)
        m = (stop - start) * (last - first + 1)
        points = _pooled_points(U, start, stop, shifts, first, last)
        taus = [rng.uniform(0.01, 0.99), *(k / m for k in range(1, m))][:8]
        for tau in taus:
            assert _unit_rank(m, tau) == scanned_rank(m, tau)
            reference = _unit_quantile_interval(points, tau)
            q = reference[0]
            for near in [
                (q - 0.3, q + 0.3),
                (q, q),
                (q + 0.1, q + 2.0),
                (q - 2.0, q - 0.1),
                (1.0, -1.0),
                (-np.inf, np.inf),
                tuple(np.sort(rng.normal(size=2))),
            ]:
                kept = np.full(m + trial % 3, np.nan)  # a scratch, possibly larger
                found = _pooled_unit_interval(U, start, stop, shifts, first, last, tau, near, kept)
                assert found == reference, (trial, tau, near)
                checked += 1
                ties += found[0] != found[1]
                outside += not near[0] <= q <= near[1]
    assert checked > 5000 and ties > 500 and outside > 1000
    U = rng.normal(size=(6, 2))
    U[2, 1] = np.nan  # NaN: the full partition's answer
    shifts = np.zeros(2)
    for tau in (0.2, 0.5, 0.9):
        reference = _unit_quantile_interval(_pooled_points(U, 0, 6, shifts, 0, 1), tau)
        found = _pooled_unit_interval(U, 0, 6, shifts, 0, 1, tau, (-0.5, 0.5), np.empty(12))
        np.testing.assert_array_equal(found, reference)


def test_one_level_and_the_scalar():
    one = BoostingRegressor(loss="pinball", tau=[0.7], n_estimators=20, random_state=0).fit(X, Y)
    assert one.predict(X).shape == (N, 1)
    scalar = BoostingRegressor(loss="pinball", tau=0.7, n_estimators=20, random_state=0).fit(X, Y)
    assert scalar.predict(X).shape == (N,)


@pytest.mark.parametrize(
    "tau, loss, match",
    [
        ([0.5, 0.5], "pinball", "strictly increasing"),
        ([0.9, 0.1], "pinball", "strictly increasing"),
        ([0.0, 0.5], "pinball", "strictly increasing"),
        ([], "pinball", "non-empty"),
        (["a"], "pinball", "strictly increasing"),
        ([0.1, 0.9], "lad", "needs loss='pinball'"),
    ],
)
def test_bad_levels_are_refused_in_one_line(tau, loss, match):
    with pytest.raises(ValueError, match=match):
        BoostingRegressor(loss=loss, tau=tau, n_estimators=2).fit(X, Y)


def test_clone_pickle_params_and_grid_search():
    est = BoostingRegressor(loss="pinball", tau=[0.1, 0.9], n_estimators=15, random_state=0)
    assert clone(est).get_params()["tau"] == [0.1, 0.9]
    fitted = est.fit(X, Y)
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(again.predict(X), fitted.predict(X))
    other = clone(est).set_params(tau=[0.2, 0.5, 0.8])
    assert other.fit(X, Y).predict(X).shape == (N, 3)

    def mean_pinball(y_true, P):
        return np.mean(
            [mean_pinball_loss(y_true, P[:, k], alpha=t) for k, t in enumerate([0.1, 0.9])]
        )

    search = GridSearchCV(
        BoostingRegressor(loss="pinball", tau=[0.1, 0.9], n_estimators=15, random_state=0),
        {"max_depth": [1, 3]},
        scoring=make_scorer(mean_pinball, greater_is_better=False),
        cv=3,
    ).fit(X, Y)
    assert search.best_params_["max_depth"] in (1, 3)
    # score is the negated mean pinball loss over the levels
    assert fitted.score(X, Y) == pytest.approx(-mean_pinball(Y, fitted.predict(X)))


def test_early_stopping_uses_the_sum_and_warm_start_continues():
    def make(**kw):
        return BoostingRegressor(
            loss="pinball", tau=[0.1, 0.5, 0.9], learning_rate=0.5, random_state=0, **kw
        )

    es = make(n_estimators=500, n_iter_no_change=5).fit(X, Y)
    assert es.n_iter_ < 500 and es.validation_loss_.shape == (es.n_iter_ + 1, 3)
    once = make(n_estimators=30).fit(X, Y)
    warm = make(n_estimators=12, warm_start=True).fit(X, Y)
    warm.set_params(n_estimators=30).fit(X, Y)
    np.testing.assert_array_equal(once.predict(FAR), warm.predict(FAR))
    np.testing.assert_array_equal(once.train_loss_, warm.train_loss_)


def test_levels_are_checked_and_start_together():
    assert check_taus(0.3) is None
    np.testing.assert_array_equal(check_taus([0.1, 0.2]), [0.1, 0.2])
    f0 = MultiQuantile([0.1, 0.5, 0.8]).init(Y)
    np.testing.assert_array_equal(
        f0, np.full(3, make_loss("pinball", tau=np.mean([0.1, 0.5, 0.8])).init(Y))
    )


# check_estimator on a model of several levels: every check passes but these, declared through
# scikit-learn's expected_failed_checks (docs/quantiles.md, "scikit-learn's checks").
EXPECTED_FAILED_CHECKS_LEVELS = {
    "check_regressors_train": (
        "predict returns one column per level, shape (n, K), where the check wants shape (n,); "
        "and score is the negated mean pinball loss (at most 0), where the check wants an R^2 "
        "above 0.5"
    ),
    "check_sample_weight_equivalence_on_dense_data": (
        "the tied splits of the scalar model (tests/test_boosting.py); the repeated-rows oracle "
        "on dyadic data stands in: test_integer_weights_are_repeated_rows_several_levels"
    ),
}


@pytest.mark.slow
def test_check_estimator_with_several_levels():
    """Exactly the declared checks fail (check_regressors_train runs three times, for float64,
    float32 and read-only data); the rest pass, but scikit-learn's array-API check, which skips
    itself unless SCIPY_ARRAY_API=1."""
    from sklearn.utils.estimator_checks import check_estimator

    est = BoostingRegressor(loss="pinball", tau=[0.1, 0.5, 0.9], n_estimators=10)
    results = check_estimator(
        est, expected_failed_checks=EXPECTED_FAILED_CHECKS_LEVELS, on_fail=None
    )
    not_passed = sorted((r["check_name"], r["status"]) for r in results if r["status"] != "passed")
    assert not_passed == [
        ("check_array_api_input", "skipped"),
        ("check_regressors_train", "xfail"),
        ("check_regressors_train", "xfail"),
        ("check_regressors_train", "xfail"),
        ("check_sample_weight_equivalence_on_dense_data", "xfail"),
    ]


@pytest.mark.parametrize("algo", ["prox", "gradient", "accelerated_prox"])
@pytest.mark.parametrize("engine", ["exact", "hist"])
def test_integer_weights_are_repeated_rows_several_levels(algo, engine):
    """Integer weights give the model of the rows repeated: predictions bit for bit on dyadic
    data (integer targets / 2^18, quarter-integer features: no tie is rounded differently);
    the recorded losses to 1e-15 relative (the non-crossing margins make the predictions
    non-dyadic, so the weighted and the repeated mean round differently)."""
    for seed in range(2):
        rng = np.random.default_rng([seed, len(algo), len(engine)])
        X = rng.integers(0, 16, size=(64, 3)) / 4.0
        y = rng.integers(-(2**24), 2**24, size=64) / 2.0**18 + 4.0 * X[:, 0]
        w = rng.integers(0, 4, size=64).astype(float)
        rep = np.repeat(np.arange(64), w.astype(int))
        kw = dict(loss="pinball", tau=[0.25, 0.5, 0.75], algo=algo, engine=engine)
        kw.update(n_estimators=15, max_depth=3, learning_rate=0.5, step=2.0, random_state=seed)
        weighted = BoostingRegressor(**kw).fit(X, y, sample_weight=w)
        repeated = BoostingRegressor(**kw).fit(X[rep], y[rep])
        assert np.array_equal(weighted.predict(X), repeated.predict(X)), seed
        np.testing.assert_allclose(weighted.train_loss_, repeated.train_loss_, rtol=1e-15)


def test_trees_fit_the_levels_directions_in_turn(monkeypatch):
    """Tree t is grown on the direction of level t mod K (round robin), not on the mean of the
    K directions: with ``algo="gradient"`` that is the pinball's negative gradient at the level's
    predictions of the previous stage, tau_k where y is above, tau_k - 1 below (computed here).
    The Python loop, whose engine calls are seen here; the compiled loop grows the same trees
    (tests/test_compiled_multi.py)."""
    import proxboost._fit_loop as _fit_loop
    from proxboost import _compiled_loop

    monkeypatch.setattr(_compiled_loop, "FORCE_PYTHON", True)

    targets, make = [], _fit_loop.make_engine

    def spy(name):
        engine = make(name)
        grow = engine.grow

        def logged(Xp, target, *args, **kw):
            targets.append(np.array(target, copy=True))
            return grow(Xp, target, *args, **kw)

        engine.grow = logged
        return engine

    monkeypatch.setattr(_fit_loop, "make_engine", spy)
    taus = [0.1, 0.5, 0.9]
    est = BoostingRegressor(
        loss="pinball", tau=taus, algo="gradient", n_estimators=7, learning_rate=0.5
    ).fit(X, Y)
    stages = [np.tile(est.init_, (N, 1)), *est.staged_predict(X)]
    assert len(targets) == 7
    for t, target in enumerate(targets):
        k, F = t % 3, stages[t][:, t % 3]
        expected = np.where(Y > F, taus[k], np.where(Y < F, taus[k] - 1.0, 0.0))
        np.testing.assert_array_equal(target, expected)
