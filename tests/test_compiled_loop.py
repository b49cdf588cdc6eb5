"""The compiled boosting loop (``proxboost._compiled_loop``) gives the Python loop's numbers bit
for bit: curves, predictions and every tree's leaf values, over losses, algorithms, engines,
weights, tie rules, eval set, early stopping and warm start."""

import os
import pickle
import time

import numpy as np
import pytest

from proxboost import BoostingClassifier, BoostingRegressor, _compiled_loop
from proxboost._compiled_loop import pairwise_sum
from proxboost._row_passes import pairwise_sum_par
from proxboost.engines._threads import engine_threads, numba_threads

ALGOS = [
    "gradient",
    "prox",
    "residual_gradient",
    "residual_prox",
    "accelerated_gradient",
    "accelerated_prox",
]


def _data(task, weighted, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(90, 4))
    X[:, 3] = np.round(X[:, 3])  # a feature with few values (ties, exact-coded)
    y = X[:, 0] + rng.standard_t(2, size=90)
    if task == "classification":
        y = np.where(y > 0, 1, -1)
    w = rng.uniform(0.1, 2.0, size=90) if weighted else None
    if weighted:
        w[::7] = 0.0  # rows of weight 0: the replay of the idle rows
    return X[:60], y[:60], w if w is None else w[:60], (X[60:], y[60:])


def _fit(force_python, make, X, y, w, eval_set, monkeypatch):
    monkeypatch.setattr(_compiled_loop, "FORCE_PYTHON", force_python)
    return make().fit(X, y, sample_weight=w, eval_set=eval_set)


def _assert_same(a, b, X_eval):
    assert a.n_iter_ == b.n_iter_
    assert np.array_equal(a.train_loss_, b.train_loss_)
    assert np.array_equal(a.eval_loss_, b.eval_loss_)
    if a.validation_loss_ is not None:
        assert np.array_equal(a.validation_loss_, b.validation_loss_)
    assert np.array_equal(a._raw_predict(X_eval), b._raw_predict(X_eval))
    assert np.array_equal(a.train_prediction_, b.train_prediction_)
    for c, d, s, t in zip(
        a.leaf_values_, b.leaf_values_, a.estimators_, b.estimators_, strict=True
    ):
        assert np.array_equal(c, d)
        assert np.array_equal(s.threshold, t.threshold, equal_nan=True)
        assert np.array_equal(s.feature, t.feature)
        # every attribute (node arrays with their dtypes, the leaf count; the loop builds its
        # trees from one copy of its outputs, ``engine.trees``): the Python loop's, byte for byte
        assert _pickled(s) == _pickled(t)


def _pickled(tree):
    """A tree's fields (node arrays) and other attributes in order, each pickled on its own (a
    hist tree of the Python loop may share an array between attributes where the compiled
    loop's has two equal ones; the compiled loop's trees are spans of shared arrays)."""
    public = [name for name in tree._slots() if not name.startswith("_")]
    return [(name, pickle.dumps(getattr(tree, name))) for name in (*tree.FIELDS, *public)]


CASES = [
    (loss, algo, engine, weighted, rule)
    for loss in ["ls", "lad", "pinball", "hinge"]
    for algo in ALGOS
    for engine in ["exact", "hist"]
    for weighted in [False, True]
    for rule in ["midpoint", "authors"]
    if not (loss == "ls" and rule == "authors")
]


@pytest.mark.grid  # every case in `make test`, the first in `make test-fast`
@pytest.mark.parametrize("loss,algo,engine,weighted,rule", CASES)
def test_compiled_loop_gives_the_python_loops_numbers(
    loss, algo, engine, weighted, rule, monkeypatch
):
    task = "classification" if loss == "hinge" else "regression"
    X, y, w, (Xe, ye) = _data(task, weighted)
    est = BoostingClassifier if task == "classification" else BoostingRegressor
    extra = {"tau": 0.3} if loss == "pinball" else {}

    def make():
        return est(
            loss=loss,
            algo=algo,
            engine=engine,
            tie_rule=rule,
            n_estimators=25,
            random_state=3,
            step=0.5,
            **extra,
        )

    a = _fit(True, make, X, y, w, (Xe, ye), monkeypatch)
    b = _fit(False, make, X, y, w, (Xe, ye), monkeypatch)
    _assert_same(a, b, Xe)


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["exact", "hist"])
@pytest.mark.parametrize("loss", ["lad", "hinge"])
def test_early_stopping_and_warm_start_match(engine, loss, monkeypatch):
    task = "classification" if loss == "hinge" else "regression"
    X, y, w, (Xe, ye) = _data(task, True, seed=1)
    est = BoostingClassifier if task == "classification" else BoostingRegressor

    def fits(force_python):
        monkeypatch.setattr(_compiled_loop, "FORCE_PYTHON", force_python)
        kw = dict(loss=loss, algo="accelerated_prox", engine=engine, random_state=0)
        stopping = est(n_estimators=60, n_iter_no_change=3, tol=0.0, **kw).fit(
            X, y, sample_weight=w, eval_set=(Xe, ye)
        )
        warm = est(
            n_estimators=10,
            warm_start=True,
            algo="residual_prox",
            engine=engine,
            loss=loss,
            random_state=0,
        )
        warm.fit(X, y, eval_set=(Xe, ye))
        warm.set_params(n_estimators=25).fit(X, y, eval_set=(Xe, ye))
        return stopping, warm

    (a1, a2), (b1, b2) = fits(True), fits(False)
    _assert_same(a1, b1, Xe)
    _assert_same(a2, b2, Xe)
    # one warm fit in two pieces is the fit at once, across the two loops too
    monkeypatch.setattr(_compiled_loop, "FORCE_PYTHON", True)
    once = est(n_estimators=25, algo="residual_prox", engine=engine, loss=loss, random_state=0)
    _assert_same(once.fit(X, y, eval_set=(Xe, ye)), b2, Xe)


@pytest.mark.parametrize("multi", [False, True])
@pytest.mark.parametrize("stopping", [False, True])
def test_a_random_state_instance_advances_as_in_the_python_loop(stopping, multi, monkeypatch):
    """The compiled loops draw the exact engine's tree seeds from the fit's generator and, after
    an early stop, leave it advanced by the trees grown only: a ``RandomState`` passed as
    ``random_state`` ends where the Python loop leaves it."""
    X, y, _, _ = _data("regression", False, seed=1)
    X, y = np.vstack([X, X + 0.01]), np.concatenate([y, y[::-1]])  # room for a validation part

    def after(force_python):
        monkeypatch.setattr(_compiled_loop, "FORCE_PYTHON", force_python)
        rng = np.random.RandomState(7)
        loss = dict(loss="pinball", tau=[0.2, 0.8]) if multi else dict(loss="lad")
        stop = dict(n_iter_no_change=2, tol=0.0) if stopping else {}
        est = BoostingRegressor(algo="prox", n_estimators=80, random_state=rng, **loss, **stop)
        est.fit(X, y)
        return est, rng.randint(0, 2**31 - 1, size=5)

    (a, after_python), (b, after_compiled) = after(True), after(False)
    assert a.n_iter_ == b.n_iter_
    assert (b.n_iter_ < 80) == stopping
    assert np.array_equal(after_python, after_compiled)


def test_the_compiled_clock_is_perf_counters():
    """``train_time_`` of a compiled fit is read from the clock ``time.perf_counter`` reads."""
    if not _compiled_loop.CLOCK_AVAILABLE:
        pytest.skip("no CLOCK_MONOTONIC here: the compiled loop is not taken")
    before = time.perf_counter()
    now = _compiled_loop._now()
    after = time.perf_counter()
    assert before <= now <= after


def test_the_compiled_loop_is_the_default():
    assert _compiled_loop.FORCE_PYTHON is (os.environ.get("PROXBOOST_COMPILED_LOOP") == "0")


@pytest.mark.slow
def test_pairwise_sum_is_numpys_sum():
    rng = np.random.default_rng(0)
    for n in [*range(300), 1000, 1023, 1024, 1025, 8191, 8192, 8193, 100_003, 1_000_000]:
        a = rng.standard_normal(n) * 10.0 ** rng.integers(-8, 8, n)
        assert pairwise_sum(a) == np.sum(a), n


def test_pairwise_sum_on_two_threads_is_numpys_sum():
    """``pairwise_sum_par`` (NumPy's two top-level halves on two threads, added left + right)
    gives ``np.sum`` bit for bit; values over 16 orders of magnitude, so that another cut (at
    n // 2, not at its multiple of 8 below) gives another number, checked too."""
    k = engine_threads(2)
    if k < 2:
        pytest.skip("no thread-safe threading layer or one numba thread")
    rng = np.random.default_rng(1)
    other_cut_differs = False
    with numba_threads(k):
        for n in [*range(300), 1000, 1023, 1024, 1025, 8191, 8192, 8193, 100_003]:
            a = rng.standard_normal(n) * 10.0 ** rng.integers(-8, 8, n)
            assert pairwise_sum_par(a) == np.sum(a), n
            other_cut_differs |= np.sum(a[: n // 2]) + np.sum(a[n // 2 :]) != np.sum(a)
    assert other_cut_differs


@pytest.mark.parametrize("engine", ["exact", "hist"])
def test_the_model_keeps_at_most_8_7_of_the_loops_outputs_it_uses(engine):
    """The trees of a compiled loop keep its node and leaf arrays as views where they fill at
    least seven eighths of them (full trees), else copies (trees stopped by pure nodes): never
    more than 8/7 of the memory they use; both cases occur, and the numbers are the Python
    loop's (the comparisons above)."""
    rng = np.random.RandomState(0)
    X = rng.normal(size=(200, 3))
    kinds = set()
    for y in (rng.normal(size=200), (X[:, 0] > 0).astype(float)):  # full trees, then pure nodes
        est = BoostingRegressor(loss="ls", n_estimators=20, max_depth=3, engine=engine).fit(X, y)
        for block in est._state_.forest.segments:
            for a in (*block.arrays, block.values):
                if a.base is None:
                    kinds.add("copy")
                else:
                    kinds.add("view")
                    assert 8 * a.shape[0] >= 7 * a.base.shape[0]
    assert kinds == {"copy", "view"}
