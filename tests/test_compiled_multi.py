"""The compiled loop of several quantile levels (``proxboost._compiled_multi``) gives the Python
loop's numbers bit for bit: trees, leaf values, curves, early stopping and predictions (training
rows, rows far outside, every stage), over algorithms, engines, weights, tie rules, numbers of
levels and seeds; it is the path taken, and its gap budget makes NumPy's own BLAS call."""

import numpy as np
import pytest
from test_compiled_loop import _pickled  # every tree attribute, each pickled on its own

from proxboost import BoostingRegressor, _compiled_loop, _compiled_multi
from proxboost._fit_loop import BoostingLoop, model_weights, nesterov_alphas
from proxboost._multi_quantile import GapBudget, gap_bounds
from proxboost.losses import MultiQuantile

ALGOS = [
    "gradient",
    "prox",
    "residual_gradient",
    "residual_prox",
    "accelerated_gradient",
    "accelerated_prox",
]
LEVELS = {2: [0.25, 0.5], 3: [0.05, 0.5, 0.95]}


def _data(weighted, seed):
    """Heteroscedastic rows with a few-valued feature (ties), weights with zeros (the replay
    of idle rows), an eval set, and rows far outside the training data."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(120, 4))
    X[:, 3] = np.round(X[:, 3])
    y = X[:, 0] + (0.2 + np.abs(X[:, 1])) * rng.standard_t(2, size=120)
    w = None
    if weighted:
        w = rng.uniform(0.1, 2.0, size=80)
        w[::7] = 0.0
    return X[:80], y[:80], w, (X[80:], y[80:]), 50.0 * rng.normal(size=(40, 4))


def _fit(force_python, monkeypatch, X, y, w, fit_kw=None, **kw):
    monkeypatch.setattr(_compiled_loop, "FORCE_PYTHON", force_python)
    est = BoostingRegressor(loss="pinball", **{"random_state": 3, **kw})
    return est.fit(X, y, sample_weight=w, **(fit_kw or {}))


def _assert_same(a, b, Xs):
    """Every number of the two fits, and their predictions of ``Xs``, bit for bit."""
    assert a.n_iter_ == b.n_iter_
    assert np.array_equal(a.init_, b.init_)
    assert np.array_equal(a.train_loss_, b.train_loss_)
    for curve in ("eval_loss_", "validation_loss_"):
        assert (getattr(a, curve) is None) == (getattr(b, curve) is None)
        if getattr(a, curve) is not None:
            assert np.array_equal(getattr(a, curve), getattr(b, curve))
    assert np.array_equal(a.train_prediction_, b.train_prediction_)
    assert len(a.train_time_) == len(b.train_time_) == a.n_iter_ + 1
    assert np.all(np.diff(a.train_time_) >= 0) and np.all(np.diff(b.train_time_) >= 0)
    for c, d, s, t in zip(a.leaf_values_, b.leaf_values_, a.estimators_, b.estimators_):
        assert c.shape == d.shape == (s.n_leaves, len(a.tau))
        assert np.array_equal(c, d)
        assert s.n_leaves == t.n_leaves
        assert np.array_equal(s.feature, t.feature)
        assert np.array_equal(s.threshold, t.threshold, equal_nan=True)
        assert _pickled(s) == _pickled(t)  # every attribute, byte for byte (``engine.trees``)
    for X in Xs:
        assert np.array_equal(a.predict(X), b.predict(X))
        for p, q in zip(a.staged_predict(X), b.staged_predict(X), strict=True):
            assert np.array_equal(p, q)


CASES = [
    (algo, engine, weighted, K, rule)
    for algo in ALGOS
    for engine in ["exact", "hist"]
    for weighted in [False, True]
    for K in [2, 3]
    for rule in ["midpoint", "authors"]
]


@pytest.mark.grid  # every case in `make test`, the first in `make test-fast`
@pytest.mark.parametrize("algo,engine,weighted,K,rule", CASES)
def test_compiled_multi_gives_the_python_loops_numbers(
    algo, engine, weighted, K, rule, monkeypatch
):
    taken = []
    boost = _compiled_multi.boost
    monkeypatch.setattr(_compiled_multi, "boost", lambda *a: taken.append(1) or boost(*a))
    for seed in range(2):
        X, y, w, (Xe, ye), far = _data(weighted, seed)
        kw = dict(tau=LEVELS[K], algo=algo, engine=engine, tie_rule=rule, n_estimators=30)
        kw.update(learning_rate=0.8, step=0.5, fit_kw={"eval_set": (Xe, ye)})
        a = _fit(True, monkeypatch, X, y, w, **kw)
        assert len(taken) == seed  # the reference: the Python loop
        b = _fit(False, monkeypatch, X, y, w, **kw)
        assert len(taken) == seed + 1  # the compiled loop of several levels
        _assert_same(a, b, (X, Xe, far))


def test_the_data_pool_levels_and_widen_gaps(monkeypatch):
    """The cases above reach the ordered leaf search's pooling (leaves whose own optima break
    the bounds) and the accelerated bounds that force a tree to widen the gaps: without them,
    half of the compiled loop would go untested."""
    import proxboost.losses as losses

    pooled, widened = [], []
    ordered, bounds = losses._ordered_leaves, GapBudget.next_min_steps

    def spy_pool(U, ws, starts, leaves, *args):
        pooled.append(len(leaves))
        return ordered(U, ws, starts, leaves, *args)

    def spy_bounds(self, weights):
        widened.append(np.any(bounds(self, weights) > 0.0))
        return bounds(self, weights)

    monkeypatch.setattr(losses, "_ordered_leaves", spy_pool)
    monkeypatch.setattr(GapBudget, "next_min_steps", spy_bounds)
    X, y, w, _, _ = _data(True, 0)
    kw = dict(tau=LEVELS[3], algo="accelerated_prox", n_estimators=30, learning_rate=0.8)
    _fit(True, monkeypatch, X, y, w, step=0.5, **kw)
    assert sum(pooled) > 0 and any(widened)


@pytest.mark.parametrize("engine", ["exact", "hist"])
def test_early_stopping_and_warm_start_match(engine, monkeypatch):
    X, y, w, (Xe, ye), far = _data(True, 1)
    kw = dict(tau=LEVELS[3], engine=engine, learning_rate=0.5, random_state=0)

    def fits(force_python):
        stopping = _fit(
            force_python,
            monkeypatch,
            X,
            y,
            w,
            fit_kw={"eval_set": (Xe, ye)},
            algo="accelerated_prox",
            n_estimators=200,
            n_iter_no_change=3,
            tol=0.0,
            **kw,
        )
        warm = BoostingRegressor(
            loss="pinball", algo="residual_prox", n_estimators=10, warm_start=True, **kw
        )
        warm.fit(X, y, eval_set=(Xe, ye))
        warm.set_params(n_estimators=25).fit(X, y, eval_set=(Xe, ye))
        return stopping, warm

    (a1, a2), (b1, b2) = fits(True), fits(False)
    assert a1.n_iter_ < 200  # early stopping happened
    _assert_same(a1, b1, (X, far))
    _assert_same(a2, b2, (X, far))
    # one fit in two pieces, one compiled and the other in Python (either way), is the fit at once
    once = BoostingRegressor(loss="pinball", algo="accelerated_prox", n_estimators=30, **kw)
    once.fit(X, y, sample_weight=w)
    for first_python in (False, True):
        monkeypatch.setattr(_compiled_loop, "FORCE_PYTHON", first_python)
        mixed = BoostingRegressor(
            loss="pinball", algo="accelerated_prox", n_estimators=12, warm_start=True, **kw
        ).fit(X, y, sample_weight=w)
        monkeypatch.setattr(_compiled_loop, "FORCE_PYTHON", not first_python)
        mixed.set_params(n_estimators=30).fit(X, y, sample_weight=w)
        _assert_same(mixed, once, (X, far))


def test_the_python_loop_runs_what_the_compiled_one_does_not_take(monkeypatch):
    """Threads, ``verbose``, monotone constraints and ``tie_rule="authors_float"`` run the
    Python loop; a plain model of several levels never calls it."""
    X, y, _, _, _ = _data(False, 0)
    calls = []
    python_loop = BoostingLoop._python_loop

    def spy(self, *args):
        calls.append(1)
        return python_loop(self, *args)

    monkeypatch.setattr(BoostingLoop, "_python_loop", spy)
    kw = dict(tau=LEVELS[2], n_estimators=5)
    _fit(False, monkeypatch, X, y, None, **kw)
    assert calls == []
    for extra in ({"verbose": 1}, {"monotonic_cst": [1, 0, 0, 0]}, {"n_jobs": 2}):
        _fit(False, monkeypatch, X, y, None, **kw, **extra)
    assert len(calls) == 3


def test_the_gap_budget_gives_numpy_the_python_loops_blas_operands():
    """The first t rows of a preallocated C-contiguous array are the operand ``np.asarray``
    makes of the Python loop's list of rows: the same BLAS product, bit for bit, at every t and
    K (long sums of mixed magnitudes, where an order of additions shows), and the compiled
    loop's compiled budget (its products by NumPy's BLAS call) gives
    ``GapBudget.next_min_steps`` exactly."""
    rng = np.random.default_rng(0)
    for K in (1, 2, 3, 5):
        T = 300
        alphas = nesterov_alphas(T)
        f0 = np.full(K, 0.3)
        budget = GapBudget(f0)
        levels = _compiled_multi._levels(MultiQuantile(np.linspace(0.1, 0.9, K)), budget, T)
        for t in range(T):
            weights = model_weights(alphas[: t + 1])
            expected = budget.next_min_steps(weights)
            w = np.asarray(weights[1 : t + 1])
            if t:
                for rows, G in (
                    (budget.min_steps, levels.min_steps),
                    (budget.max_abs, levels.max_abs),
                ):
                    assert np.array_equal(w @ np.asarray(rows), w @ G[:t]), (K, t)
            got = gap_bounds(
                levels.d0, levels.abs0, levels.min_steps[:t], levels.max_abs[:t], weights
            )
            assert np.array_equal(expected, got), (K, t)
            assert np.array_equal(expected, _compiled_multi._gap_bounds(levels, t, alphas, True))
            # without acceleration (alphas all 0) the weights are ones: the shortcut's bounds
            zeros = np.zeros_like(alphas[: t + 1])
            assert np.array_equal(
                budget.next_min_steps(model_weights(zeros)),
                _compiled_multi._gap_bounds(levels, t, zeros, False),
            ), (K, t)
            c = rng.standard_normal((7, K)) * 10.0 ** rng.integers(-8, 8, (7, K))
            c = np.sort(c, axis=1)
            budget.add(c)
            _compiled_multi._record_gaps(levels, t, c)
            assert np.array_equal(levels.min_steps[t], budget.min_steps[-1])
            assert np.array_equal(levels.max_abs[t], budget.max_abs[-1])


def test_numba_caches_the_loop_with_its_blas_calls(monkeypatch):
    """numba saves the compiled loop of several levels (which calls NumPy's BLAS by symbol name)
    to its cache, as every other kernel: only the first fit after an install compiles it."""
    X, y, _, _, _ = _data(False, 0)
    _fit(False, monkeypatch, X, y, None, tau=LEVELS[2], n_estimators=3)
    for kernel in (_compiled_multi._run_exact, _compiled_multi._gap_bounds):
        assert kernel._cache._cache_file._load_index(), kernel
