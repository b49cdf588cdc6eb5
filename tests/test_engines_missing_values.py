"""Missing values (NaN) in X: every engine (engines/), both estimators, the dataset loader and
``run.py``.

Oracles: scikit-learn's ``DecisionTreeRegressor`` for ``exact`` and ``sklearn`` (tree by tree,
conftest's ``compare_trees``: equal up to genuine ties, checked in exact arithmetic); for
``hist``, the fits on the data with NaN replaced by a value beyond the maximum (missing values
learned right) or below the minimum (learned left), node by node, and scikit-learn's
``HistGradientBoostingRegressor`` (an independent implementation of the same rule) on stumps;
repeated rows for integer weights; the same fit without NaN where the data have none.
"""

import json
import pickle
from fractions import Fraction

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.tree import DecisionTreeRegressor
from test_engines_exact import _run_twin  # the boosting twin of the NaN-free equality tests

from proxboost import BoostingClassifier, BoostingRegressor, _fit_loop
from proxboost.engines import ENGINES, ExactEngine, HistEngine, SklearnEngine, make_engine
from proxboost.experiments.datasets import dataset_identity, load_dataset

ALL_ENGINES = sorted(ENGINES)


def _design(n, rate, seed, rounded=False):
    """Features of every kind a missing value meets, a fraction ``rate`` of each missing:
    continuous (> 256 values: coarse bins in ``exact``), one decimal, binary, a constant, one
    entirely missing, and 256 distinct values (exact-coded without NaN, coarse with it).
    ``rounded``: the continuous column to two decimals (at most 254 values: one ``hist`` bin per
    value). The target depends on the values and on which are missing."""
    rng = np.random.RandomState(seed)
    X = np.column_stack(
        [
            np.round(rng.randn(n), 2) if rounded else rng.randn(n),
            np.round(rng.randn(n), 1),
            rng.randint(0, 2, n),
            np.ones(n),
            np.zeros(n),
            rng.randint(0, 254 if rounded else 256, n),
        ]
    ).astype(float)
    X[rng.rand(*X.shape) < rate] = np.nan
    X[:, 4] = np.nan
    miss = np.isnan(X)
    y = (
        np.sin(2 * np.nan_to_num(X[:, 0]))
        + np.nan_to_num(X[:, 1])
        + np.nan_to_num(X[:, 2])
        + 1.5 * miss[:, 0]
        - 1.0 * miss[:, 3]
        + 0.3 * rng.randn(n)
    )
    return X, y


# ---------------------------------------------------------------------------------------------
# exact and sklearn against scikit-learn's DecisionTreeRegressor
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("depth", [1, 3, 5, 15])
@pytest.mark.parametrize("rate", [0.05, 0.15, 0.3])
@pytest.mark.parametrize("task", ["regression", "classification"])
@pytest.mark.grid
def test_exact_grows_sklearns_trees_with_missing_values(
    monkeypatch, compare_trees, task, rate, depth
):
    """Every iteration's tree of a boosting run, as the NaN-free equality tests: 5-30 % NaN, a
    column entirely NaN, a column whose values (NaN aside) are one constant."""
    X, y = _design(2000, rate, seed=int(100 * rate) + depth)
    Est, loss, algo = (
        (BoostingRegressor, "ls", "gradient")
        if task == "regression"
        else (BoostingClassifier, "exponential", "prox")
    )
    if task == "classification":
        y = np.where(y > np.median(y), 1, -1)
    twin = _run_twin(monkeypatch, compare_trees, Est, X, y, loss, algo, depth, 6, seed=depth)
    assert twin.trees == 6
    print(f"\n{task} NaN {rate:.0%} depth {depth}: {twin.nodes} nodes, {twin.ties} tie-decided")


@pytest.mark.parametrize("depth", [3, 15])
@pytest.mark.parametrize("name", ["bostonhousing", "whitewine", "spam"])
@pytest.mark.grid
def test_exact_grows_sklearns_trees_on_real_data_with_missing_values(
    monkeypatch, compare_trees, data_mirror, name, depth
):
    """A real dataset's training half with 15 % of its values made missing."""
    X, y, info = load_dataset(name, mirror=data_mirror)
    rng = np.random.RandomState(17)
    rows = rng.permutation(len(X))[: min(len(X) // 2, 2000)]
    X, y = X[rows].copy(), y[rows]
    X[rng.rand(*X.shape) < 0.15] = np.nan
    Est, loss, algo = (
        (BoostingRegressor, "lad", "prox")
        if info.task == "regression"
        else (BoostingClassifier, "hinge", "prox")
    )
    twin = _run_twin(monkeypatch, compare_trees, Est, X, y, loss, algo, depth, 6)
    assert twin.trees == 6
    print(f"\n{name} NaN 15% depth {depth}: {twin.nodes} nodes, {twin.ties} tie-decided")


def _grow_both(X, y, depth, seed, sample_weight=None):
    """(exact engine, its tree, scikit-learn's tree fitted with its own input checks)."""
    e = ExactEngine()
    _, tree = e.grow(
        e.prepare(X, fit=True), y, depth, np.random.RandomState(seed), sample_weight=sample_weight
    )
    reg = DecisionTreeRegressor(max_depth=depth, random_state=np.random.RandomState(seed))
    reg.fit(X.astype(np.float32), y, sample_weight=sample_weight)
    return e, tree, reg


def _new_rows(X, rng, m=600):
    """Rows to predict: resampled values, values outside the training range, and each value
    missing with probability 0.3 (every column, whether it had NaN in training or not)."""
    new = X[rng.randint(0, len(X), m)].copy()
    new[: m // 4] += rng.randn(m // 4, X.shape[1]) * 3
    new[rng.rand(*new.shape) < 0.3] = np.nan
    return new


@pytest.mark.parametrize("train_rate", [0.0, 0.2])
def test_exact_thresholds_directions_and_new_rows_as_sklearn(compare_trees, train_rate):
    """Where no node is tie-decided, the trees are scikit-learn's node for node (feature,
    threshold, ``missing_go_to_left``, +inf where the missing rows alone go right), so new rows
    with NaN land in corresponding leaves; a fit without any NaN still stores per node where a
    missing value goes (the child with more rows, ties right)."""
    rng = np.random.RandomState(7)
    X, y = _design(800, train_rate, seed=7)
    X = X[:, [0, 1, 2, 5]] if train_rate == 0 else X  # no column made only of NaN then
    compared = 0
    for depth, seed in [(1, 0), (2, 1), (3, 2), (6, 3), (12, 4)]:
        e, tree, reg = _grow_both(X, y, depth, seed)
        if compare_trees(X.astype(np.float32), y, reg.tree_, tree).ties:
            continue
        compared += 1
        t = reg.tree_
        for ours, theirs in [
            (tree.feature, t.feature),
            (tree.threshold, t.threshold),
            (tree.missing_go_to_left, t.missing_go_to_left),
        ]:
            np.testing.assert_array_equal(ours[tree.left >= 0], theirs[t.children_left >= 0])
        new = _new_rows(X, rng)
        ids_e, ids_s = tree.apply(e.prepare(new)), reg.apply(new.astype(np.float32))
        assert len(set(zip(ids_e.tolist(), ids_s.tolist()))) == len(set(ids_e.tolist()))
    assert compared >= 3
    if train_rate > 0:  # the +inf threshold occurs (the missing rows of column 3 alone)
        _, tree, _ = _grow_both(X, y, 3, 0)
        assert np.isinf(tree.threshold).any()


def test_exact_weighted_trees_with_missing_values_are_sklearns():
    rng = np.random.RandomState(8)
    X, y = _design(1000, 0.2, seed=8)
    w = rng.rand(1000) * (rng.rand(1000) < 0.8)
    for depth in (2, 6):
        _, tree, reg = _grow_both(X, y, depth, 0, sample_weight=w)
        pos = w > 0
        X32 = np.ascontiguousarray(X[pos], dtype=np.float32)
        a, b = tree.apply(X32), reg.apply(X32)
        assert len(set(zip(a.tolist(), b.tolist()))) == len(set(a.tolist())) == len(set(b.tolist()))
        # the gains node for node (one partition reached through two features, a tie of a
        # small deep node, moves a gain between features: their sorted list stays the same)
        ours = np.sort(tree.split_gain)
        internal = reg.tree_.children_left >= 0
        w_, imp = reg.tree_.weighted_n_node_samples, reg.tree_.impurity
        lc, rc = reg.tree_.children_left[internal], reg.tree_.children_right[internal]
        gains = (w_[internal] * imp[internal] - w_[lc] * imp[lc] - w_[rc] * imp[rc]) / w_[0]
        np.testing.assert_allclose(ours, np.sort(gains), rtol=1e-9, atol=1e-15)


def test_sklearn_engine_passes_the_missing_value_mask():
    """The sklearn engine's trees are scikit-learn's own (fitted with its input checks) exactly;
    without the mask (``check_input=False`` alone) scikit-learn grows another tree, sorting NaN
    among the values."""
    X, y = _design(600, 0.2, seed=9)
    X32 = X.astype(np.float32)
    e = SklearnEngine()
    Xp = e.prepare(X, fit=True)
    w = np.random.RandomState(9).randint(0, 3, 600).astype(float)
    for sample_weight in (None, w):
        _, tree = e.grow(Xp, y, 6, np.random.RandomState(1), sample_weight=sample_weight)
        pos = slice(None) if sample_weight is None else w > 0
        sw = None if sample_weight is None else w[pos]
        reg = DecisionTreeRegressor(max_depth=6, random_state=np.random.RandomState(1))
        reg.fit(X32[pos], y[pos], sample_weight=sw)  # scikit-learn's checks compute the mask
        for name in ("feature", "threshold", "missing_go_to_left", "value", "n_node_samples"):
            np.testing.assert_array_equal(getattr(tree.tree_, name), getattr(reg.tree_, name))
    unmasked = DecisionTreeRegressor(max_depth=6, random_state=np.random.RandomState(1))
    unmasked.fit(X32, y, check_input=False)
    _, tree = e.grow(Xp, y, 6, np.random.RandomState(1))
    assert not np.array_equal(unmasked.tree_.threshold, tree.tree_.threshold)


# ---------------------------------------------------------------------------------------------
# hist: the fits with NaN replaced beyond the range, HistGradientBoosting
# ---------------------------------------------------------------------------------------------
def _rows_of_nodes(tree, bins):
    """Per node of a hist tree: (node, its training rows, its depth), following the split rule
    with the missing values' directions."""
    out, stack = [], [(0, np.arange(len(bins)), 0)]
    while stack:
        node, rows, depth = stack.pop()
        out.append((node, rows, depth))
        if tree.left[node] >= 0:
            left = _hist_goes_left(tree, bins[rows], node)
            stack += [(tree.left[node], rows[left], depth + 1)]
            stack += [(tree.right[node], rows[~left], depth + 1)]
    return out


def _hist_goes_left(tree, bins, node):
    f = tree.feature[node]
    b = bins[:, f]
    missing = b == tree.missing_bin[f]
    return np.where(missing, bool(tree.missing_go_to_left[node]), b <= tree.threshold_bin[node])


def _exact_gain(y, left):
    """The split's gain S_L^2 / n_L + S_R^2 / n_R - S^2 / n in rational arithmetic."""
    yl, yr = [Fraction(v) for v in y[left]], [Fraction(v) for v in y[~left]]
    sl, sr = sum(yl, Fraction(0)), sum(yr, Fraction(0))
    return sl * sl / len(yl) + sr * sr / len(yr) - (sl + sr) ** 2 / len(y)


def _replaced_stump(X, y, direction):
    """The hist stump on X with NaN replaced below the minimum (direction "left") or beyond the
    maximum ("right"): (rows sent left, exact gain), or None without a split."""
    big = np.nanmax(np.abs(X)) + 10 if not np.isnan(X).all() else 10.0
    Xr = np.where(np.isnan(X), -big if direction == "left" else big, X)
    e = HistEngine()
    ids, tree = e.grow(e.prepare(Xr, fit=True), y, 1)
    if tree.n_leaves < 2:
        return None
    return ids == 0, _exact_gain(y, ids == 0)


@pytest.mark.parametrize("rate", [0.05, 0.15, 0.3])
def test_hist_splits_are_those_of_nan_replaced_beyond_the_range(rate):
    """Node by node: the split is the better of the stumps on the node's rows with NaN replaced
    beyond the maximum (missing values right) and below the minimum (left), in exact arithmetic,
    and its rows are those of the stump of the direction it learned (ties aside). Every feature
    has at most 254 values, so a value beyond the range gets a bin of its own."""
    X, y = _design(400, rate, seed=int(100 * rate), rounded=True)
    e = HistEngine()
    bins = e.prepare(X, fit=True)
    _, tree = e.grow(bins, y, 4)
    checked = 0
    for node, rows, depth in _rows_of_nodes(tree, bins):
        stumps = {d: _replaced_stump(X[rows], y[rows], d) for d in ("right", "left")}
        if tree.left[node] < 0:
            if depth < 4 and len(rows) >= 2 and np.ptp(y[rows]) > 0:
                assert stumps["right"] is None and stumps["left"] is None
            continue
        left = _hist_goes_left(tree, bins[rows], node)
        gain = _exact_gain(y[rows], left)
        best = max(s[1] for s in stumps.values() if s is not None)
        assert abs(gain - best) <= 1e-12 * abs(best)
        own = stumps["left" if tree.missing_go_to_left[node] else "right"]
        f = tree.feature[node]
        if np.isnan(X[rows, f]).any() and abs(own[1] - gain) > 1e-12 * abs(gain):
            pytest.fail(f"node {node}: the learned direction's best split is not the split")
        if np.isnan(X[rows, f]).any():
            checked += 1
            assert (
                np.array_equal(own[0], left)
                or np.array_equal(own[0], ~left)
                or (abs(own[1] - gain) <= 1e-12 * abs(gain))
            )
    assert checked >= 2  # splits whose node had missing values in its feature


@pytest.mark.parametrize("seed", range(6))
def test_hist_stumps_are_histgradientboostings(seed):
    """A least-squares stump of scikit-learn's HistGradientBoostingRegressor (one iteration, one
    split, no regularisation; its gain orders splits as the proxy does) sends the training rows
    and a row of NaN where the hist engine does."""
    rng = np.random.RandomState(seed)
    n = 500
    X = np.round(rng.randn(n, 4), 1)
    X[:, 3] = rng.randint(0, 3, n)
    X[rng.rand(n, 4) < [0.2, 0.0, 0.1, 0.3]] = np.nan  # column 1 without NaN
    y = rng.randn(n) + [2, -2][seed % 2] * np.isnan(X[:, seed % 4]) + (X[:, 1] > 0.5)
    e = HistEngine()
    bins = e.prepare(X, fit=True)
    ids, tree = e.grow(bins, y, 1)
    hgb = HistGradientBoostingRegressor(
        max_iter=1,
        learning_rate=1.0,
        max_leaf_nodes=2,
        min_samples_leaf=1,
        l2_regularization=0.0,
        early_stopping=False,
        max_bins=255,
    ).fit(X, y)
    pred = hgb.predict(X)
    assert len(np.unique(pred)) == 2
    assert len(set(zip(ids.tolist(), pred.tolist()))) == 2  # the same partition
    nan_row = np.full((1, 4), np.nan)
    ours = tree.apply(e.prepare(nan_row))[0]
    theirs = hgb.predict(nan_row)[0]
    assert theirs == pred[ids == ours][0]


def test_hist_missing_bin_and_code_width():
    """255 value bins and the missing values' bin: code 255 (uint8); a feature without NaN in
    training sends a new NaN to the child with more rows, ties right (HistGradientBoosting)."""
    rng = np.random.RandomState(10)
    n = 3000
    X = np.column_stack([rng.randn(n), rng.randn(n)])
    X[rng.rand(n) < 0.1, 0] = np.nan
    y = 10.0 * np.isnan(X[:, 0]) + 0.1 * rng.randn(n)
    e = HistEngine()
    bins = e.prepare(X, fit=True)
    assert bins[:, 0].max() == 255 and (bins[np.isnan(X[:, 0]), 0] == 255).all()
    assert e.n_bins_.tolist() == [256, 255]
    ids, tree = e.grow(bins, y, 1)
    assert tree.feature[0] == 0 and tree.threshold[0] == np.inf
    assert not tree.missing_go_to_left[0]
    np.testing.assert_array_equal(ids == 1, np.isnan(X[:, 0]))
    # column 1 has no NaN: a new NaN goes to the child with more rows
    y1 = (X[:, 1] > np.quantile(X[:, 1], 0.7)).astype(float)
    _, t1 = e.grow(bins, y1, 1)
    assert t1.feature[0] == 1
    new = np.array([[0.0, np.nan]])
    n_left = int((bins[:, 1] <= t1.threshold_bin[0]).sum())
    assert n_left > n // 2
    assert t1.apply(e.prepare(new))[0] == 0 and t1.missing_go_to_left[0]


# ---------------------------------------------------------------------------------------------
# Every engine
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ALL_ENGINES)
def test_missing_only_column_never_split_and_constant_column_split_on_nan(engine):
    """A column entirely NaN is accepted and never split on; a column whose other values are
    one constant splits its missing rows from the others."""
    rng = np.random.RandomState(11)
    n = 300
    X = np.column_stack([np.full(n, np.nan), np.where(rng.rand(n) < 0.4, np.nan, 2.0)])
    y = 3.0 * np.isnan(X[:, 1]) + 0.01 * rng.randn(n)
    e = make_engine(engine)
    Xp = e.prepare(X, fit=True)
    ids, tree = e.grow(Xp, y, 3, np.random.RandomState(0))
    assert 0 not in tree.split_feature.tolist() and tree.split_feature[0] == 1
    assert set(ids[np.isnan(X[:, 1])]).isdisjoint(ids[~np.isnan(X[:, 1])])
    # new rows: a value in the NaN column goes where the tree says, never split on it
    new = np.array([[5.0, 2.0], [np.nan, np.nan]])
    assert tree.apply(e.prepare(new)).tolist() == [
        ids[~np.isnan(X[:, 1])][0],
        ids[np.isnan(X[:, 1])][0],
    ]


@pytest.mark.parametrize("engine", ALL_ENGINES)
def test_integer_weights_equal_repeated_rows_with_missing_values(engine):
    """Integer weights grow the trees of repeated rows on data with NaN (training rows). New rows
    with NaN are left out: where a node had no missing value in its feature, a missing value goes
    to the child with more rows, counted, not weighted, so there the two fits differ by design."""
    rng = np.random.RandomState(12)
    n = 600
    X = np.column_stack([rng.randint(0, k, n) * 0.5 for k in (2, 3, 7, 20, 40)]).astype(float)
    X[rng.rand(n, 5) < 0.15] = np.nan
    y = rng.randn(n) + np.isnan(X[:, 2])
    w = rng.randint(0, 4, n).astype(float)
    rep = np.repeat(np.arange(n), w.astype(int))
    e = make_engine(engine)
    Xp = e.prepare(X, fit=True, sample_weight=w)
    ids, tree = e.grow(Xp, y, 4, np.random.RandomState(0), sample_weight=w)
    e2 = make_engine(engine)
    ids2, tree2 = e2.grow(e2.prepare(X[rep], fit=True), y[rep], 4, np.random.RandomState(0))
    assert len(set(zip(ids[rep].tolist(), ids2.tolist()))) == tree.n_leaves == tree2.n_leaves
    new = X[rng.randint(0, n, 400)] + 0.25 * rng.randint(-1, 2, (400, 5))
    new = new[~np.isnan(new).any(axis=1)]
    a, b = tree.apply(e.prepare(new)), tree2.apply(e2.prepare(new))
    assert len(set(zip(a.tolist(), b.tolist()))) == len(set(a.tolist()))


@pytest.mark.parametrize("engine", ALL_ENGINES)
def test_infinity_refused_in_one_line(engine):
    e = make_engine(engine)
    X = np.array([[0.0, np.nan], [np.inf, 1.0]])
    with pytest.raises(ValueError, match="infinity") as info:
        e.prepare(X, fit=True)
    assert "\n" not in str(info.value)
    e.prepare(np.array([[0.0, np.nan], [1.0, 1.0]]), fit=True)
    with pytest.raises(ValueError, match="infinity"):
        e.prepare(X)


@pytest.mark.parametrize("engine", ["exact", "hist"])
def test_pickled_trees_keep_the_directions(engine):
    X, y = _design(500, 0.2, seed=13)
    e = make_engine(engine)
    Xp = e.prepare(X, fit=True)
    _, tree = e.grow(Xp, y, 5, np.random.RandomState(0))
    new = e.prepare(_new_rows(X, np.random.RandomState(13)))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(tree)).apply(new), tree.apply(new))
    assert tree.missing_go_to_left.any() and not tree.missing_go_to_left.all()


# ---------------------------------------------------------------------------------------------
# Estimators
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ALL_ENGINES)
@pytest.mark.parametrize("Est, loss", [(BoostingRegressor, "lad"), (BoostingClassifier, "hinge")])
def test_estimators_fit_and_predict_with_missing_values(engine, Est, loss):
    X, y = _design(400, 0.2, seed=14)
    if Est is BoostingClassifier:
        y = np.where(y > np.median(y), 1, -1)
    X_eval, y_eval = X[:100], y[:100]
    est = Est(loss=loss, algo="prox", n_estimators=15, max_depth=3, engine=engine, random_state=0)
    est.fit(X[100:], y[100:], eval_set=(X_eval, y_eval))
    raw = est.decision_function(X_eval) if Est is BoostingClassifier else est.predict(X_eval)
    assert np.isfinite(raw).all() and np.isfinite(est.eval_loss_).all()
    assert est.train_loss_[-1] < est.train_loss_[0]
    assert est.feature_importances_[4] == 0  # the column entirely NaN
    staged = list(est.staged_predict(X_eval))
    np.testing.assert_array_equal(staged[-1], est.predict(X_eval))
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict(X_eval), est.predict(X_eval))


def test_exact_and_sklearn_estimators_agree_with_missing_values():
    """Continuous features and target (no tied splits): the same trees, the same numbers."""
    rng = np.random.RandomState(15)
    X = rng.randn(500, 5)
    X[rng.rand(500, 5) < 0.2] = np.nan
    y = np.nan_to_num(X[:, 0]) + np.isnan(X[:, 1]) + 0.1 * rng.randn(500)
    fits = [
        BoostingRegressor(loss="ls", n_estimators=10, max_depth=3, engine=e, random_state=0).fit(
            X[:400], y[:400]
        )
        for e in ("exact", "sklearn")
    ]
    np.testing.assert_allclose(fits[0].train_loss_, fits[1].train_loss_, rtol=1e-12)
    np.testing.assert_allclose(fits[0].predict(X[400:]), fits[1].predict(X[400:]), rtol=1e-12)


def test_pandas_missing_values_are_nan():
    """pandas' nullable columns (``pd.NA``) and None in an object array are missing values: the
    fit is the one on the float array with NaN."""
    pd = pytest.importorskip("pandas")
    rng = np.random.RandomState(18)
    a = np.round(rng.randn(200), 1)
    b = rng.randint(0, 5, 200).astype(float)
    a[::5] = np.nan
    b[::7] = np.nan
    y = np.nan_to_num(a) + np.isnan(b) + 0.1 * rng.randn(200)
    X = np.column_stack([a, b])
    frame = pd.DataFrame(
        {
            "a": pd.array(np.where(np.isnan(a), None, a), dtype="Float64"),
            "b": pd.array([None if np.isnan(v) else int(v) for v in b], dtype="Int64"),
        }
    )
    objects = np.where(np.isnan(X), None, X).astype(object)
    ref = BoostingRegressor(n_estimators=5, random_state=0).fit(X, y).predict(X)
    for data in (frame, objects):
        pred = BoostingRegressor(n_estimators=5, random_state=0).fit(data, y).predict(data)
        np.testing.assert_array_equal(pred, ref)


@pytest.mark.parametrize("where", ["fit", "eval_set", "predict"])
def test_estimators_refuse_infinity_before_any_tree(where, monkeypatch):
    X = np.random.RandomState(0).normal(size=(20, 2))
    X[2, 0] = np.nan
    y = np.arange(20.0)
    bad = X.copy()
    bad[3, 1] = np.inf
    if where == "predict":
        est = BoostingRegressor(n_estimators=3).fit(X, y)
        with pytest.raises(ValueError, match="infinity"):
            est.predict(bad)
        return
    monkeypatch.setattr(_fit_loop, "make_engine", lambda name: pytest.fail("an engine was built"))
    with pytest.raises(ValueError, match="infinity"):
        if where == "fit":
            BoostingRegressor().fit(bad, y)
        else:
            BoostingRegressor().fit(X, y, eval_set=(bad, y))


def test_warm_start_sees_other_missing_values():
    X = np.random.RandomState(1).normal(size=(50, 3))
    X[::7, 0] = np.nan
    y = np.arange(50.0)
    est = BoostingRegressor(n_estimators=3, warm_start=True).fit(X, y)
    other = X.copy()
    other[1, 0] = np.nan
    est.set_params(n_estimators=5)
    with pytest.raises(ValueError, match="other data"):
        est.fit(other, y)
    est.fit(X, y)
    assert est.n_iter_ == 5


# ---------------------------------------------------------------------------------------------
# Datasets and run.py
# ---------------------------------------------------------------------------------------------
def test_synthetic_missing_rate():
    X, y, info = load_dataset("regression", random_state=3, n_samples=2000, n_features=10)
    Xm, ym, info_m = load_dataset(
        "regression", random_state=3, n_samples=2000, n_features=10, missing_rate=0.2
    )
    observed = ~np.isnan(Xm)
    assert abs(1 - observed.mean() - 0.2) < 0.01
    np.testing.assert_array_equal(Xm[observed], X[observed])  # the model's X, y: unchanged
    np.testing.assert_array_equal(ym, y)
    again, _, _ = load_dataset(
        "regression", random_state=3, n_samples=2000, n_features=10, missing_rate=0.2
    )
    np.testing.assert_array_equal(again, Xm)
    # without missing_rate the identity is the paper's: no new key
    assert "missing_rate" not in dataset_identity(info, 3)["params"]
    assert dataset_identity(info_m, 3)["params"]["missing_rate"] == 0.2
    with pytest.raises(ValueError, match="missing_rate"):
        load_dataset("regression", random_state=3, n_samples=20, missing_rate=1.0)


@pytest.mark.parametrize("name", ["bostonhousing", "crabs", "adult", "spam"])
def test_real_datasets_keep_their_complete_rows(data_mirror, name):
    X, y, info = load_dataset(name, mirror=data_mirror)
    assert np.isfinite(X).all() and X.shape == (info.n, info.d)


@pytest.mark.slow
def test_run_py_with_missing_values(tmp_path, run_py, run_dirs):
    from proxboost.experiments.store import results

    args = [
        "loss=lad",
        "algo=prox",
        "grid=smoke",
        "protocol.n_splits=2",
        "protocol.max_estimators=10",
        "dataset.params.n_samples=200",
        "+dataset.params.missing_rate=0.2",
        "n_jobs=1",
        "progress=false",
        *run_dirs,
    ]
    for engine in ("exact", "hist"):
        out = run_py(*args, f"engine={engine}")
        assert out.returncode == 0, out.stdout + out.stderr
    df = results.load(tmp_path / "res")
    assert len(df) == 4 and set(df["engine"]) == {"exact", "hist"}
    assert np.isfinite(df["test_loss"]).all()
    identity = json.loads(df.loc[0, "identity"])
    assert identity["dataset"]["params"]["missing_rate"] == 0.2
