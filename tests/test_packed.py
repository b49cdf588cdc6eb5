"""The fitted trees' node storage (``engines/_packed.py``): a compiled loop's trees are spans of
one copy of its outputs; a tree grown alone owns its arrays. Both read the same numbers, pickle
keeps the sharing, and a tree pickled before the arrays were packed still loads."""

import pickle

import numpy as np
import pytest

from proxboost import BoostingRegressor
from proxboost.engines._descent import MASK_ROWS
from proxboost.engines.exact import ExactTree
from proxboost.engines.hist import HistTree


def _data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(150, 4))
    X[rng.random(X.shape) < 0.05] = np.nan
    y = np.nan_to_num(X[:, 0]) + rng.normal(size=150)
    return X, y


def _fields(tree):
    return [getattr(tree, name) for name in tree.FIELDS]


@pytest.mark.parametrize("engine", ["exact", "hist"])
def test_the_loops_trees_are_spans_of_shared_arrays_with_their_own_numbers(engine):
    X, y = _data()
    est = BoostingRegressor(loss="lad", algo="prox", engine=engine, n_estimators=20).fit(X, y)
    trees = est.estimators_
    assert all(tree._arrays is trees[0]._arrays for tree in trees)  # one copy for the fit
    Xp = est.engine_.prepare(X)
    for tree in trees:
        # a tree owning copies of its fields is the same tree: same leaves for every row
        alone = object.__new__(type(tree))
        alone._own([field.copy() for field in _fields(tree)], tree.n_leaves)
        if engine == "hist":
            alone.missing_bin = tree.missing_bin
        assert np.array_equal(alone.apply(Xp), tree.apply(Xp))
        assert tree.node_count == len(tree.left) == len(tree.feature)
        assert tree.n_leaves == int((tree.left < 0).sum())
        assert np.array_equal(tree.split_feature, tree.feature[tree.left >= 0])
    # the spans tile the shared arrays end to end
    ends = [(tree._start, tree._stop) for tree in trees]
    assert ends[0][0] == 0 and all(a[1] == b[0] for a, b in zip(ends, ends[1:]))


@pytest.mark.parametrize("engine", ["exact", "hist"])
def test_a_pickled_model_keeps_the_sharing_and_its_predictions(engine):
    X, y = _data()
    est = BoostingRegressor(loss="lad", algo="prox", engine=engine, n_estimators=20).fit(X, y)
    # the per-tree oracle reads every tree's fields: their views are cut and kept; a pickle
    # leaves them out
    assert np.array_equal(est.predict(X), _per_tree_sum(est, X))
    assert all(tree._views is not None for tree in est.estimators_)
    assert all("_views" not in tree.__getstate__() for tree in est.estimators_)
    back = pickle.loads(pickle.dumps(est))
    assert all(tree._views is None for tree in back.estimators_)
    assert all(tree._arrays is back.estimators_[0]._arrays for tree in back.estimators_)
    assert np.array_equal(back.predict(X), est.predict(X))
    for old, new in zip(est.estimators_, back.estimators_, strict=True):
        for a, b in zip(_fields(old), _fields(new), strict=True):
            assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)


@pytest.mark.parametrize("cls", [ExactTree, HistTree])
def test_a_tree_pickled_before_the_arrays_were_packed_still_loads(cls):
    """Such a pickle holds the instance's dict: one array per field (a hist tree also its
    ``missing_bin`` and the split arrays it computed then)."""
    X, y = _data()
    engine = "exact" if cls is ExactTree else "hist"
    est = BoostingRegressor(loss="lad", algo="prox", engine=engine, n_estimators=5).fit(X, y)
    Xp = est.engine_.prepare(X)
    for tree in est.estimators_:
        state = {name: field.copy() for name, field in zip(tree.FIELDS, _fields(tree))}
        state["n_leaves"] = tree.n_leaves
        if cls is HistTree:
            state.update(missing_bin=tree.missing_bin, split_feature=tree.split_feature)
        old = object.__new__(cls)
        old.__setstate__(state)
        assert np.array_equal(old.apply(Xp), tree.apply(Xp))
        assert old.n_leaves == tree.n_leaves and old.node_count == tree.node_count


def _per_tree_sum(est, X):
    """The prediction as one Python call per tree adds it: the oracle of ``add_trees``."""
    Xp = est.engine_.prepare(np.asarray(X, float))
    F = np.full((len(X),) + np.shape(est.init_), est.init_)
    for w, tree, c in zip(est.weights_[1:], est.estimators_, est.leaf_values_, strict=True):
        F += w * c[tree.apply(Xp)]
    return F


def _per_tree_stages(est, X):
    """The staged predictions as one Python call per tree computes them (Nesterov's recursion):
    the oracle of ``stage_trees``."""
    Xp = est.engine_.prepare(np.asarray(X, float))
    F = H = np.full((len(X),) + np.shape(est.init_), est.init_)
    stages = []
    for tree, c, alpha in zip(est.estimators_, est.leaf_values_, est.alphas_, strict=True):
        F_next = H + c[tree.apply(Xp)]
        H = F_next + alpha * (F_next - F) if alpha else F_next
        F = F_next
        stages.append(F.copy())
    return stages


def _per_tree_importances(est):
    """The importances as one ``np.bincount`` per tree computes them: the oracle of
    ``gains_by_feature``."""
    p = est.n_features_in_
    per_tree = [
        np.bincount(tree.split_feature, tree.split_gain, minlength=p)
        for tree in est.estimators_
        if len(tree.split_feature) > 0
    ]
    mean = np.mean(per_tree, axis=0)
    return mean / mean.sum()


def _same_stages(est, X):
    got = list(est.staged_predict(X))
    want = _per_tree_stages(est, X)
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        assert a.shape == b.shape and np.array_equal(a, b)


@pytest.mark.parametrize("engine", ["exact", "hist"])
@pytest.mark.parametrize(
    "params",
    [
        {"algo": "prox"},
        {"algo": "accelerated_prox"},  # Nesterov's model weights
        {"algo": "residual_gradient", "max_depth": 5},
        {"loss": "pinball", "tau": [0.1, 0.5, 0.9]},  # one row of three values per leaf
        {"algo": "prox", "max_depth": 7},  # more than 64 leaves: the walk, not the masks
    ],
)
def test_a_models_prediction_adds_its_trees_as_one_call_per_tree_does(monkeypatch, engine, params):
    """``PackedNodes.add_trees`` (``predict``'s compiled sum over the trees) against the sum
    of one ``apply`` per tree, bit for bit: the trees of one compiled loop (one group), a
    warm start's two loops (two groups), and trees grown by the Python loop (each owning its
    arrays: one group each). The staged predictions likewise, against the Python recursion,
    in one block and in blocks of a few stages that cut across a warm start's two groups; and
    the importances against one ``np.bincount`` per tree. Both engines' trees of at most 64
    leaves go by masks in blocks of rows (several blocks here), larger ones by the walk."""
    from proxboost import _compiled_loop, boosting

    X, y = _data()
    kwargs = {"loss": "lad", "engine": engine, "n_estimators": 30, "random_state": 0, **params}
    est = BoostingRegressor(**kwargs).fit(X, y)
    assert np.array_equal(est.predict(X), _per_tree_sum(est, X))
    est.set_params(warm_start=True, n_estimators=45).fit(X, y)
    assert len({id(tree._arrays) for tree in est.estimators_}) == 2
    assert np.array_equal(est.predict(X), _per_tree_sum(est, X))
    try:
        _compiled_loop.FORCE_PYTHON = True
        alone = BoostingRegressor(**kwargs).fit(X, y)
    finally:
        _compiled_loop.FORCE_PYTHON = False
    assert len({id(tree._arrays) for tree in alone.estimators_}) == len(alone.estimators_)
    assert np.array_equal(alone.predict(X), _per_tree_sum(alone, X))
    rows = np.random.default_rng(0).normal(size=(37, X.shape[1]))  # new rows, not a multiple of 8
    rows[::5, 1] = np.nan
    assert np.array_equal(est.predict(rows), _per_tree_sum(est, rows))
    # importances: the per-tree bincounts' numbers
    for model in (est, alone):
        assert np.array_equal(model.feature_importances_, _per_tree_importances(model))
    # staged predictions: the same recursion, bit for bit, in blocks of stages
    for model in (est, alone):
        _same_stages(model, rows)
    monkeypatch.setattr(boosting, "STAGES_BYTES", 8 * 37 * 7)  # blocks of 7 (or 2) stages
    _same_stages(est, rows)
    # several blocks of rows by the masks (``_descent.MASK_ROWS``), the last one partial
    many = np.random.default_rng(1).normal(size=(2 * MASK_ROWS + 37, X.shape[1]))
    many[::7, 0] = np.nan
    assert np.array_equal(est.predict(many), _per_tree_sum(est, many))
    monkeypatch.setattr(boosting, "STAGES_BYTES", 8 * len(many) * 5)
    _same_stages(est, many)
    if params.get("max_depth") == 7:
        assert max(tree.n_leaves for tree in est.estimators_) > 64
