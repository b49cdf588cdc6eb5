"""A model's forest (``_forest.py``): a compiled loop's trees are kept as one block and become
Python objects only when ``estimators_`` or ``leaf_values_`` is read; predictions, staged
predictions and importances read the blocks; the objects, once made, are those the block's
arrays and spans describe; a forest mixing blocks and trees of the Python loop gives every tree
its own spans and values; a model pickled before forests still loads."""

import operator
import pickle

import numpy as np
import pytest

# the rows with missing values, and the per-tree oracles of the prediction and importances
from test_packed import _data, _per_tree_importances, _per_tree_sum

from proxboost import BoostingRegressor, _compiled_loop, boosting
from proxboost._fit_loop import _LoopState
from proxboost._forest import Block, Loose


def _blocks(est):
    return [s for s in est._state_.forest.segments if isinstance(s, Block)]


@pytest.mark.parametrize("engine", ["exact", "hist"])
@pytest.mark.parametrize("tau", [None, [0.1, 0.5, 0.9]])
def test_a_fit_makes_no_tree_object_until_one_is_read(engine, tau):
    X, y = _data()
    params = {"loss": "lad"} if tau is None else {"loss": "pinball", "tau": tau}
    est = BoostingRegressor(engine=engine, n_estimators=25, random_state=0, **params).fit(X, y)
    (block,) = _blocks(est)
    assert block._trees is None and block._values is None
    predicted = est.predict(X)
    stages = list(est.staged_predict(X))
    importances = est.feature_importances_
    assert block._trees is None and block._values is None  # none of them made the objects
    trees, values = est.estimators_, est.leaf_values_
    assert est.estimators_ is trees and est.leaf_values_ is values  # made once, then kept
    assert len(trees) == len(values) == est.n_iter_ == 25
    assert np.array_equal(est.n_leaves_, [tree.n_leaves for tree in trees])
    # each object is its span of the block's arrays, each value array its rows of the block's
    starts = [tree._start for tree in trees]
    assert starts == block.spans[:, 0].tolist()
    assert [tree._stop for tree in trees] == block.spans[:, 1].tolist()
    assert np.array_equal(np.concatenate(values), block.values)
    assert all(len(c) == tree.n_leaves for tree, c in zip(trees, values, strict=True))
    for tree in trees:
        assert tree.n_leaves == int((tree.left < 0).sum())
        assert all(field.base is not None for field in (tree.feature, tree.left))  # views
    # and the predictions read from the block are the per-tree oracle's
    assert np.array_equal(predicted, _per_tree_sum(est, X))
    assert np.array_equal(stages[-1], predicted)
    assert np.array_equal(importances, _per_tree_importances(est))


def _mixed(engine, monkeypatch):
    """A model of three segments: a compiled fit of 10 trees, 6 more by the Python loop
    (``warm_start``), 7 more compiled."""
    X, y = _data()
    est = BoostingRegressor(
        loss="lad", engine=engine, n_estimators=10, warm_start=True, random_state=0
    ).fit(X, y)
    monkeypatch.setattr(_compiled_loop, "FORCE_PYTHON", True)
    est.set_params(n_estimators=16).fit(X, y)
    monkeypatch.setattr(_compiled_loop, "FORCE_PYTHON", False)
    est.set_params(n_estimators=23).fit(X, y)
    kinds = [type(s) for s in est._state_.forest.segments]
    assert kinds == [Block, Loose, Block]
    return est, X


@pytest.mark.parametrize("engine", ["exact", "hist"])
def test_runs_over_mixed_segments_give_each_tree_its_own_spans_and_values(engine, monkeypatch):
    est, X = _mixed(engine, monkeypatch)
    forest = est._state_.forest
    trees, values = est.estimators_, est.leaf_values_
    for first, stop in [(0, 23), (3, 12), (9, 11), (10, 16), (15, 17), (16, 23), (22, 23)]:
        seen = []
        for a, b, spans, run_values, head in forest.runs(first, stop):
            assert first <= a < b <= stop
            assert all(trees[t]._arrays is head._arrays for t in range(a, b))
            for k, t in enumerate(range(a, b)):
                assert spans[k, :2].tolist() == [trees[t]._start, trees[t]._stop]
                end = spans[k + 1, 2] if k + 1 < b - a else len(run_values)
                assert np.array_equal(run_values[spans[k, 2] : end, 0], values[t])
                seen.append(t)
        assert seen == list(range(first, stop))
    # the Python loop's trees each own their arrays: one run each
    assert [b - a for a, b, *_ in forest.runs(10, 16)] == [1] * 6
    assert np.array_equal(est.predict(X), _per_tree_sum(est, X))
    monkeypatch.setattr(boosting, "STAGES_BYTES", 8 * len(X) * 4)  # blocks of 4 stages
    stages = list(est.staged_predict(X))
    assert len(stages) == 23 and np.array_equal(stages[-1], est.predict(X))


@pytest.mark.parametrize("engine", ["exact", "hist"])
def test_a_pickle_holds_the_blocks_not_the_objects(engine):
    X, y = _data()
    est = BoostingRegressor(loss="lad", engine=engine, n_estimators=12, random_state=0).fit(X, y)
    trees = est.estimators_  # made and kept: a pickle leaves them out
    (block,) = _blocks(est)
    assert len(block._trees) == len(trees) and all(map(operator.is_, block._trees, trees))
    assert set(block.__getstate__()) == {"kind", "arrays", "spans", "n_leaves", "values", "extra"}
    back = pickle.loads(pickle.dumps(est))
    (loaded,) = _blocks(back)
    assert loaded._trees is None
    assert np.array_equal(back.predict(X), est.predict(X))
    assert all(tree._arrays is loaded.arrays for tree in back.estimators_)
    for old, new in zip(trees, back.estimators_, strict=True):
        assert (old._start, old._stop, old.n_leaves) == (new._start, new._stop, new.n_leaves)


def test_a_model_pickled_before_forests_still_loads():
    """Such a pickle holds the trees and leaf values as lists, in the estimator's dict
    (``estimators_``, ``leaf_values_``) and in the loop state's (``trees``, ``leaf_values``)."""
    X, y = _data()
    est = BoostingRegressor(loss="lad", n_estimators=8, warm_start=True, random_state=0).fit(X, y)
    trees, values = list(est.estimators_), list(est.leaf_values_)
    old_state = dict(est._state_.__dict__)
    del old_state["forest"]
    old_state.update(trees=trees, leaf_values=values)
    state = object.__new__(_LoopState)
    state.__setstate__(old_state)
    old = object.__new__(BoostingRegressor)
    old.__setstate__(
        {**est.__getstate__(), "_state_": state, "estimators_": trees, "leaf_values_": values}
    )
    assert "estimators_" not in vars(old) and "trees" not in vars(state)
    assert old.estimators_ == trees and old.leaf_values_ == values
    assert np.array_equal(old.predict(X), est.predict(X))
    old.set_params(n_estimators=12).fit(X, y)  # warm start continues from the lists
    est.set_params(n_estimators=12).fit(X, y)
    assert np.array_equal(old.predict(X), est.predict(X))


def test_an_unfitted_model_has_no_trees():
    est = BoostingRegressor()
    assert not hasattr(est, "estimators_") and not hasattr(est, "leaf_values_")
    with pytest.raises(AttributeError, match="estimators_"):
        _ = est.estimators_
