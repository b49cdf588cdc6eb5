"""The tree-engine interface (engines/): names, row weights, split gains, every engine.

Oracles: scikit-learn's ``compute_feature_importances`` (split gains), repeated rows (integer
weights), fits on the positive-weight rows only (weight 0).
"""

import pickle

import numpy as np
import pytest
from sklearn.tree import DecisionTreeRegressor
from sklearn.utils.estimator_checks import check_estimator

from proxboost import BoostingClassifier, BoostingRegressor
from proxboost.engines import ENGINES, make_engine

ALL_ENGINES = sorted(ENGINES)


def _discrete(rng, n, p=6):
    """Few distinct values per feature: every engine's candidates are scikit-learn's."""
    return np.column_stack([rng.randint(0, k, n) * 0.5 for k in (2, 3, 7, 20, 40, 90)[:p]]).astype(
        float
    )


def _partition_pairs(a, b):
    """True when the two leaf labellings define the same partition of the rows."""
    pairs = set(zip(a.tolist(), b.tolist()))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


def test_unknown_engine_lists_the_engines():
    with pytest.raises(ValueError, match=r"engine='gpu'.*allowed values.*sklearn"):
        make_engine("gpu")


@pytest.mark.parametrize("engine", ALL_ENGINES)
def test_leaf_ids_compact_and_gains_per_internal_node(engine):
    rng = np.random.RandomState(0)
    X, y = _discrete(rng, 500), rng.randn(500)
    e = make_engine(engine)
    Xp = e.prepare(X, fit=True)
    ids, tree = e.grow(Xp, y, 4, np.random.RandomState(0))
    assert (
        ids.min() == 0 and ids.max() == tree.n_leaves - 1 and len(np.unique(ids)) == tree.n_leaves
    )
    np.testing.assert_array_equal(tree.apply(Xp), ids)
    assert tree.split_feature.shape == tree.split_gain.shape == (tree.n_leaves - 1,)
    assert tree.split_gain.dtype == np.float64 and (tree.split_gain > -1e-12).all()


def test_sklearn_engine_gains_are_sklearn_importances():
    rng = np.random.RandomState(1)
    X, y = rng.randn(400, 5), rng.randn(400)
    w = rng.rand(400)
    for sample_weight in (None, w):
        e = make_engine("sklearn")
        _, tree = e.grow(e.prepare(X, fit=True), y, 5, 0, sample_weight=sample_weight)
        reg = DecisionTreeRegressor(max_depth=5, random_state=0).fit(
            X.astype(np.float32), y, sample_weight
        )
        np.testing.assert_allclose(
            np.bincount(tree.split_feature, tree.split_gain, minlength=5),
            reg.tree_.compute_feature_importances(normalize=False),
            rtol=1e-12,
            atol=1e-15,
        )


@pytest.mark.parametrize("engine", ALL_ENGINES)
def test_gains_match_sklearn_importances_on_discrete_data(engine):
    """Where the engines grow scikit-learn's tree (few distinct values, no ties), gains agree."""
    rng = np.random.RandomState(2)
    X = _discrete(rng, 800)
    y = X[:, 3] ** 2 + X[:, 5] + rng.randn(800)
    e = make_engine(engine)
    _, tree = e.grow(e.prepare(X, fit=True), y, 3, 0)
    reg = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X.astype(np.float32), y)
    np.testing.assert_allclose(
        np.bincount(tree.split_feature, tree.split_gain, minlength=6),
        reg.tree_.compute_feature_importances(normalize=False),
        rtol=1e-9,
        atol=1e-12,
    )


@pytest.mark.parametrize("engine", ALL_ENGINES)
@pytest.mark.grid
def test_integer_weights_equal_repeated_rows(engine):
    rng = np.random.RandomState(3)
    n = 600
    X, y = _discrete(rng, n), rng.randn(n)
    w = rng.randint(0, 4, n).astype(float)
    rep = np.repeat(np.arange(n), w.astype(int))
    e = make_engine(engine)
    Xp = e.prepare(X, fit=True, sample_weight=w)
    ids, tree = e.grow(Xp, y, 4, np.random.RandomState(0), sample_weight=w)
    e2 = make_engine(engine)
    ids2, tree2 = e2.grow(e2.prepare(X[rep], fit=True), y[rep], 4, np.random.RandomState(0))
    assert _partition_pairs(ids[rep], ids2)
    np.testing.assert_allclose(
        np.bincount(tree.split_feature, tree.split_gain, minlength=6),
        np.bincount(tree2.split_feature, tree2.split_gain, minlength=6),
        rtol=1e-9,
        atol=1e-12,
    )
    # every row, weight 0 included, gets a leaf of the tree
    assert ids.min() >= 0 and ids.max() < tree.n_leaves
    np.testing.assert_array_equal(tree.apply(Xp), ids)


@pytest.mark.parametrize("engine", ALL_ENGINES)
def test_zero_weight_rows_take_no_part(engine):
    """Outlying targets on rows of weight 0 change nothing; unit weights are no weights."""
    rng = np.random.RandomState(4)
    n = 500
    X, y = _discrete(rng, n), rng.randn(n)
    w = (rng.rand(n) < 0.7).astype(float)
    y_wild = np.where(w == 0, 1e6 * rng.randn(n), y)
    e = make_engine(engine)
    Xp = e.prepare(X, fit=True, sample_weight=w)
    ids_a, _ = e.grow(Xp, y, 5, np.random.RandomState(0), sample_weight=w)
    ids_b, _ = e.grow(Xp, y_wild, 5, np.random.RandomState(0), sample_weight=w)
    np.testing.assert_array_equal(ids_a, ids_b)
    Xp1 = e.prepare(X, fit=True)
    ids_1, _ = e.grow(Xp1, y, 5, np.random.RandomState(0), sample_weight=np.ones(n))
    ids_n, _ = e.grow(Xp1, y, 5, np.random.RandomState(0))
    np.testing.assert_array_equal(ids_1, ids_n)


def test_hist_bins_from_positive_weight_rows():
    """Bin edges learned from the positive-weight rows: zero-weight values make no edge."""
    rng = np.random.RandomState(5)
    n = 2000
    X = rng.randn(n, 1)
    w = (X[:, 0] < 1.0).astype(float)  # the upper tail has weight 0
    e = make_engine("hist")
    e.prepare(X, fit=True, sample_weight=w)
    assert e.edges_[0].max() < 1.0
    e.prepare(X[w > 0], fit=True)
    edges_pos = e.edges_[0]
    e.prepare(X, fit=True, sample_weight=w)
    np.testing.assert_array_equal(e.edges_[0], edges_pos)


# ---------------------------------------------------------------------------------------------
# Through the estimators, with every engine
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ALL_ENGINES)
@pytest.mark.parametrize(
    "Est, loss, algo",
    [
        (BoostingRegressor, "lad", "accelerated_prox"),
        (BoostingClassifier, "exponential", "prox"),
    ],
)
def test_estimators_with_every_engine(engine, Est, loss, algo):
    """The identity ||F - f_T(X)|| <= 1e-10 ||f_T(X)||, staged predictions, eval curves,
    pickling.
    """
    rng = np.random.RandomState(6)
    X = np.column_stack([rng.randn(300, 3), rng.randint(0, 4, 300)])
    s = X[:, 0] + np.sin(X[:, 1]) + X[:, 3]
    y = s + 0.3 * rng.randn(300) if Est is BoostingRegressor else np.where(s > 0.5, 1, -1)
    Xe, ye = X[:100], y[:100]
    model = Est(
        loss=loss,
        algo=algo,
        n_estimators=25,
        learning_rate=0.1,
        max_depth=3,
        random_state=0,
        engine=engine,
    ).fit(X, y, eval_set=(Xe, ye))
    raw = model.predict if Est is BoostingRegressor else model.decision_function
    staged = model.staged_predict if Est is BoostingRegressor else model.staged_decision_function
    fT = raw(X)
    assert np.linalg.norm(model.train_prediction_ - fT) <= 1e-10 * np.linalg.norm(fT)
    stages = list(staged(Xe))
    np.testing.assert_allclose(stages[-1], raw(Xe), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        model.eval_loss_[1:],
        [
            model.loss_.value(
                model._encode_target(ye, fit=False) if Est is BoostingClassifier else ye, z
            )
            for z in stages
        ],
        rtol=1e-10,
    )
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(
        (again.predict if Est is BoostingRegressor else again.decision_function)(X), fT
    )


def test_exact_and_sklearn_estimators_agree():
    """On continuous data without ties, the exact engine's booster is scikit-learn's."""
    rng = np.random.RandomState(7)
    X = rng.randn(400, 5)
    y = X[:, 0] ** 2 + np.sin(2 * X[:, 1]) + 0.2 * rng.randn(400)
    a = BoostingRegressor(
        loss="ls", algo="gradient", n_estimators=30, max_depth=3, random_state=0, engine="exact"
    ).fit(X, y)
    b = BoostingRegressor(
        loss="ls", algo="gradient", n_estimators=30, max_depth=3, random_state=0, engine="sklearn"
    ).fit(X, y)
    np.testing.assert_allclose(a.train_loss_, b.train_loss_, rtol=1e-12)
    np.testing.assert_allclose(a.predict(X + 0.01), b.predict(X + 0.01), rtol=1e-12, atol=1e-12)


@pytest.mark.slow
def test_check_estimator_with_exact():
    from test_boosting import (
        EXPECTED_FAILED_CHECKS,
    )  # the same expected failure (row weights and ties)

    check_estimator(
        BoostingRegressor(n_estimators=5, engine="exact"),
        expected_failed_checks=EXPECTED_FAILED_CHECKS,
    )
    check_estimator(
        BoostingClassifier(n_estimators=5, engine="exact"),
        expected_failed_checks=EXPECTED_FAILED_CHECKS,
    )
