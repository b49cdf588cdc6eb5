"""The exact engine (engines/exact.py) against scikit-learn's ``DecisionTreeRegressor``, tree by
tree.

Oracle: scikit-learn itself. Each boosting iteration's target comes from an ``engine="sklearn"``
run; the exact engine grows its tree on the same target with a copy of the same random state
(so it draws the same splitter seed). Trees are walked node by node (the ``compare_trees``
fixture of conftest.py): the same split, or a genuine tie — both chosen splits' gains recomputed
exactly (rational arithmetic) agree to 1e-12 relative. The number of tie-decided nodes is
reported (``pytest -s``).
"""

import copy
import os
import pickle
from collections import namedtuple

import numpy as np
import pytest
from sklearn.tree import DecisionTreeRegressor

from proxboost import BoostingClassifier, BoostingRegressor, _fit_loop
from proxboost.engines import ExactEngine, SklearnEngine, make_engine
from proxboost.engines.exact import FEATURE_THRESHOLD, MAX_CODES

FULL = pytest.mark.skipif(
    not os.environ.get("PROXBOOST_FULL_EQUALITY"),
    reason="exhaustive equality grid: set PROXBOOST_FULL_EQUALITY=1",
)


# ---------------------------------------------------------------------------------------------
# Boosting runs compared tree by tree (conftest's compare_trees)
# ---------------------------------------------------------------------------------------------
class _Twin(SklearnEngine):
    """scikit-learn's engine that also grows the exact engine's tree on every target and
    compares.
    """

    def __init__(self, compare_trees):
        self.compare_trees = compare_trees
        self.exact = ExactEngine()
        self.nodes = 0
        self.ties = 0
        self.proxy_ties = 0
        self.trees = 0

    def prepare(self, X, fit=False, sample_weight=None):
        Xp = super().prepare(X, fit)
        if fit:
            self._X32, self._Xe = Xp, self.exact.prepare(X, fit=True)
        return Xp

    def grow(self, Xp, target, max_depth, random_state=None, sample_weight=None):
        twin_state = copy.deepcopy(random_state)
        ids, tree = super().grow(Xp, target, max_depth, random_state)
        _, ex = self.exact.grow(self._Xe, target, max_depth, twin_state)
        match = self.compare_trees(self._X32, np.asarray(target), tree.tree_, ex)
        self.nodes += match.nodes
        self.ties += match.ties
        self.proxy_ties += match.proxy_ties
        self.trees += 1
        return ids, tree


def _run_twin(monkeypatch, compare_trees, Est, X, y, loss, algo, depth, n_estimators, seed=0):
    twin = _Twin(compare_trees)
    monkeypatch.setattr(_fit_loop, "make_engine", lambda name: twin)
    Est(
        loss=loss,
        algo=algo,
        max_depth=depth,
        n_estimators=n_estimators,
        learning_rate=0.1,
        random_state=seed,
        engine="sklearn",
    ).fit(X, y)
    return twin


# ---------------------------------------------------------------------------------------------
# Equality on synthetic and real data
# ---------------------------------------------------------------------------------------------
CASES = [
    ("regression", BoostingRegressor, "ls", "gradient"),
    ("classification", BoostingClassifier, "exponential", "prox"),
]


@pytest.mark.parametrize("depth", [1, 3, 5, 15])
@pytest.mark.parametrize("task, Est, loss, algo", CASES)
def test_same_trees_as_sklearn_on_synthetic_data(
    monkeypatch, synthetic_data, compare_trees, task, Est, loss, algo, depth
):
    X, y = synthetic_data(task, 300, 20)
    twin = _run_twin(monkeypatch, compare_trees, Est, X, y, loss, algo, depth, 8)
    print(
        f"\n{task} {loss}/{algo} depth {depth}: {twin.trees} trees, {twin.nodes} nodes, {twin.ties}"
        f" tie-decided ({twin.proxy_ties} at proxy rounding)"
    )
    assert twin.trees == 8


@pytest.mark.slow
@FULL
@pytest.mark.parametrize("depth", [1, 3, 5, 15])
@pytest.mark.parametrize("task, Est, loss, algo", CASES)
def test_same_trees_as_sklearn_on_synthetic_data_full_size(
    monkeypatch, synthetic_data, compare_trees, task, Est, loss, algo, depth
):
    X, y = synthetic_data(task, None, None)
    twin = _run_twin(monkeypatch, compare_trees, Est, X, y, loss, algo, depth, 30)
    print(
        f"\n{task} (full) {loss}/{algo} depth {depth}: {twin.trees} trees, {twin.nodes} nodes, "
        f"{twin.ties} tie-decided ({twin.proxy_ties} at proxy rounding)"
    )


REAL = ["whitewine", "redwine", "bostonhousing", "crabs", "engel", "sniffer", "adult", "spam"]


def _real(name, mirror):
    from proxboost.experiments.datasets import DatasetUnavailableError, dataset_info, load_dataset
    from proxboost.experiments.plan.protocol import split_indices

    try:
        X, y, _ = load_dataset(name, mirror=mirror)
    except DatasetUnavailableError as exc:  # pragma: no cover - depends on the mirror
        pytest.skip(f"{name}: {exc}")
    tr, va, _ = split_indices(len(y), 0)
    task = dataset_info(name).task
    return X, y, tr, np.concatenate([tr, va]), task


def _real_case(monkeypatch, compare_trees, mirror, name, part, depth, n_estimators):
    X, y, tr, refit, task = _real(name, mirror)
    rows = tr if part == "train" else np.sort(refit)
    Est, loss, algo = (
        (BoostingRegressor, "ls", "gradient")
        if task == "regression"
        else (BoostingClassifier, "exponential", "prox")
    )
    twin = _run_twin(
        monkeypatch, compare_trees, Est, X[rows], y[rows], loss, algo, depth, n_estimators
    )
    print(
        f"\n{name} ({part}, {len(rows)} x {X.shape[1]}) {loss}/{algo} depth {depth}: {twin.trees}"
        f" trees, {twin.nodes} nodes, {twin.ties} tie-decided ({twin.proxy_ties} at proxy rounding)"
    )


@pytest.mark.parametrize("name", ["crabs", "sniffer"])
def test_same_trees_on_real_data_subset(monkeypatch, compare_trees, data_mirror, name):
    _real_case(monkeypatch, compare_trees, data_mirror, name, "train", 5, 5)


@pytest.mark.slow
@FULL
@pytest.mark.parametrize("depth", [1, 3, 5, 15])
@pytest.mark.parametrize("part", ["train", "refit"])
@pytest.mark.parametrize("name", REAL)
def test_same_trees_on_real_data(monkeypatch, compare_trees, data_mirror, name, part, depth):
    _real_case(monkeypatch, compare_trees, data_mirror, name, part, depth, 10)


# ---------------------------------------------------------------------------------------------
# Single trees: new rows, ties and seeds, FEATURE_THRESHOLD, weights
# ---------------------------------------------------------------------------------------------
def _grow_both(X, y, depth, seed, sample_weight=None):
    e = ExactEngine()
    _, tree = e.grow(
        e.prepare(X, fit=True), y, depth, np.random.RandomState(seed), sample_weight=sample_weight
    )
    reg = DecisionTreeRegressor(max_depth=depth, random_state=np.random.RandomState(seed))
    reg.fit(X.astype(np.float32), y, sample_weight=sample_weight)
    return e, tree, reg


def test_same_thresholds_and_predictions_on_new_rows(compare_trees):
    rng = np.random.RandomState(0)
    X = np.column_stack(
        [rng.randn(400), rng.randint(0, 9, 400) * 0.25, np.round(rng.randn(400), 1)]
    )
    y = np.sin(3 * X[:, 0]) + X[:, 1] + 0.1 * rng.randn(400)
    for depth in (1, 3, 5, 15):
        e, tree, reg = _grow_both(X, y, depth, 0)
        if compare_trees(X.astype(np.float32), y, reg.tree_, tree).ties:
            # genuine ties (checked by compare_trees) decide some deep node: other trees on new rows
            assert depth == 15
            continue
        internal = reg.tree_.children_left >= 0
        np.testing.assert_array_equal(tree.feature[tree.left >= 0], reg.tree_.feature[internal])
        np.testing.assert_array_equal(tree.threshold[tree.left >= 0], reg.tree_.threshold[internal])
        # new rows: between the training values (midpoints and neighbours) and outside their range
        mids = (np.sort(X, axis=0)[1:] + np.sort(X, axis=0)[:-1]) / 2
        new = np.vstack([mids, mids + 1e-9, X.min(0) - 1.0, X.max(0) + 1.0, rng.randn(200, 3) * 3])
        Xn = e.prepare(new)
        ids_e = tree.apply(Xn)
        ids_s = reg.apply(Xn)
        assert len(set(zip(ids_e.tolist(), ids_s.tolist()))) == len(set(ids_e.tolist()))


def test_ties_follow_the_seed():
    """Duplicated features tie exactly: the seed picks one; the same seed the same tree."""
    rng = np.random.RandomState(1)
    base = rng.randn(200, 2)
    X = np.column_stack([base, base, base])  # features 0, 2, 4 (and 1, 3, 5) are identical
    y = base[:, 0] + base[:, 1] ** 2
    features = set()
    for seed in range(12):
        _, t1, reg = _grow_both(X, y, 3, seed)
        _, t2, _ = _grow_both(X, y, 3, seed)
        np.testing.assert_array_equal(t1.feature, t2.feature)
        np.testing.assert_array_equal(t1.threshold, t2.threshold)
        np.testing.assert_array_equal(
            t1.feature, np.where(reg.tree_.children_left >= 0, reg.tree_.feature, -1)
        )
        features.add(int(t1.feature[0]))
    assert len(features) >= 2  # different seeds, different trees


def test_ties_follow_the_seed_where_the_floor_scans_the_features_first():
    """As above, on a node that reads the floor first (a coarse feature, and more rows than
    the histogram has bins): the exact-coded copies' scans are kept by the floor and read by
    the feature loop, which must still keep the copy the seed visits first (scikit-learn's).
    The root only: below it scikit-learn's copies no longer tie exactly (each feature's sort
    leaves the node's rows in another order, so its sums round differently), ours still do."""
    rng = np.random.RandomState(2)
    n = 3000
    x = rng.randint(0, 40, n) * 0.5  # exact-coded: 40 values
    X = np.column_stack([x, rng.randn(n), x, x])  # feature 1 is coarse (3000 values)
    y = x + rng.randn(n)
    roots = set()
    for seed in range(12):
        _, tree, reg = _grow_both(X, y, 1, seed)
        assert tree.feature[0] == reg.tree_.feature[0]
        assert tree.threshold[0] == reg.tree_.threshold[0]
        roots.add(int(tree.feature[0]))
    assert len(roots) >= 2 and 1 not in roots  # a copy of x, decided by the seed


def test_feature_threshold_merges_close_values(compare_trees):
    """Values closer than 1e-7 (float32) give no candidate between them; a node spread over such
    values only is constant. scikit-learn is the oracle."""
    ulp = np.spacing(np.float32(0.5))  # 5.96e-8 < FEATURE_THRESHOLD
    assert ulp < FEATURE_THRESHOLD
    base = np.float32(0.5)
    chain = base + ulp * np.arange(5, dtype=np.float32)  # consecutive gaps below the threshold
    rng = np.random.RandomState(2)
    X = np.column_stack(
        [rng.choice(chain, 300), rng.choice(chain[::2], 300), rng.randint(0, 3, 300)]
    ).astype(np.float64)
    y = rng.randn(300) + X[:, 2]
    for seed in range(4):
        for depth in (1, 4):
            _, tree, reg = _grow_both(X, y, depth, seed)
            compare_trees(X.astype(np.float32), y, reg.tree_, tree)
            np.testing.assert_array_equal(
                tree.feature, np.where(reg.tree_.children_left >= 0, reg.tree_.feature, -1)
            )


@pytest.mark.parametrize("target", ["continuous", "signs", "three values"])
def test_feature_threshold_on_many_valued_features(target, compare_trees):
    """More than 256 distinct values (coarse bins refined exactly), including chains of values
    closer than 1e-7 and features whose values are all within such chains."""
    rng = np.random.RandomState(5)
    n = 3000
    ulp = np.spacing(np.float32(0.5))
    X = np.column_stack(
        [
            np.float32(0.5)
            + ulp * rng.randint(0, 2000, n).astype(np.float32),  # every gap below the threshold
            np.float32(0.5)
            + ulp * (2 * rng.randint(0, 600, n)).astype(np.float32),  # gaps of 2 ulp: above it
            rng.randn(n),
            np.round(3 * rng.randn(n), 1),
            rng.randint(0, 1000, n) * 1e-8,
        ]
    ).astype(np.float64)
    y = {
        "continuous": rng.randn(n),
        "signs": np.sign(rng.randn(n)),
        "three values": rng.choice([-1.0, 0.0, 1.0], n),
    }[target]
    assert not ExactEngine().prepare(X, fit=True).exact[[0, 1, 2, 4]].any()
    for seed, depth in [(0, 3), (1, 6), (2, 15)]:
        _, tree, reg = _grow_both(X, y, depth, seed)
        compare_trees(X.astype(np.float32), y, reg.tree_, tree)


@pytest.mark.parametrize("weighted", [False, True])
def test_inner_bounds_from_positive_parts_or_target_range(weighted, compare_trees):
    """A coarse bin's inner candidates are skipped on a bound: from the bin's positive parts, or
    from the target's range when the targets lie near its ends (``grower.range_bounds``). Both
    only filter: scikit-learn's trees on targets of every tightness, each bound used by some.
    With weights, scikit-learn may split a pure node (its rounded impurity above epsilon: the
    one deliberate difference, docs/engines.md), so its leaves refine ours there only."""
    rng = np.random.RandomState(6)
    n = 2000
    X = np.column_stack([rng.randn(n), rng.exponential(size=n), np.round(rng.randn(n), 2)])
    w = rng.exponential(size=n) if weighted else None
    u = rng.standard_t(3, size=n)
    targets = {
        "signs": np.sign(u),
        "lad prox": u / np.maximum(1.0, np.abs(u)),  # tightness above one half
        "lad prox, small residuals": np.clip(u / 4, -1, 1),  # below it
        "pinball prox": np.where(u > 0.9, 0.9, np.where(u < -0.1, -0.1, u)),  # asymmetric range
        "nonnegative": np.abs(u),
        "gaussian": u,
    }
    modes = set()
    for name, y in targets.items():
        for seed, depth in [(0, 3), (1, 7)]:
            e, tree, reg = _grow_both(X, y, depth, seed, sample_weight=w)
            modes.add(float(e._work[1].target_range[0]))
            if weighted:  # the same partition of the rows, but for pure nodes (see above)
                a, b = tree.apply(e.prepare(X)), reg.apply(X.astype(np.float32))
                pairs = set(zip(a.tolist(), b.tolist()))
                assert len(pairs) == len(set(b.tolist())), name  # scikit-learn's refines ours
                for leaf in {la for la, _ in pairs if sum(1 for lb in pairs if lb[0] == la) > 1}:
                    assert np.ptp(y[a == leaf]) == 0.0, name  # only pure leaves split further
            else:
                compare_trees(X.astype(np.float32), y, reg.tree_, tree)
    assert modes == {0.0, 1.0}  # both bounds were used


def _best_inner_candidate(sl, wl, g, c, node_sum, node_weight):
    """Brute force: the largest proxy over every set of a bin's rows (targets g, weights c) that
    an inner candidate could put left (any order of values: every subset with at least one row
    on each side), the rows left of the bin summing to (sl, wl)."""
    best = -np.inf
    k = len(g)
    for mask in range(1, 2**k - 1):
        take = np.array([(mask >> i) & 1 for i in range(k)], dtype=bool)
        s_l, w_l = sl + np.sum(c[take] * g[take]), wl + np.sum(c[take])
        s_r, w_r = node_sum - s_l, node_weight - w_l
        best = max(best, s_l * s_l / w_l + s_r * s_r / w_r)
    return best


def test_range_bound_holds_every_inner_candidate():
    """``range_bound_may_beat`` (a coarse bin's inner candidates bounded through the target's
    range: the vertices of a parallelogram in (W', S')) and ``inner_bound_may_beat`` (the box of
    the bin's positive and negative parts) against brute force over every subset of a bin's
    rows: with ``best`` at the largest candidate each must let the bin through (no candidate is
    ever skipped, ties included), and on lopsided ranges the parallelogram rules out bins the
    box lets through."""
    from proxboost.engines._exact.grower import set_target_range
    from proxboost.engines._exact.records import Node
    from proxboost.engines._exact.splitting import inner_bound_may_beat, range_bound_may_beat

    Work = namedtuple("Work", ["target_range"])
    rng = np.random.RandomState(11)
    ruled_out = 0
    for case in range(300):
        g_pos, g_neg = [(1.0, 1.0), (0.9, 0.1), (0.1, 0.9), (2.0, 0.0)][case % 4]
        k = rng.randint(2, 9)
        ends = rng.rand(k) < 0.5  # some targets at an end of the range, the others inside
        g = np.where(
            ends, np.where(rng.rand(k) < 0.5, g_pos, -g_neg), rng.uniform(-g_neg, g_pos, k)
        )
        c = np.ones(k) if case % 3 else rng.exponential(size=k) + 0.05
        s_b, w_b = float(np.sum(c * g)), float(np.sum(c))
        sl, wl = rng.uniform(-3, 3), rng.uniform(0.5, 5)
        node_sum, node_weight = sl + s_b + rng.uniform(-3, 3), wl + w_b + rng.uniform(0.5, 5)
        node = Node(0, 0, 1, node_sum, node_weight, -np.inf, np.inf)
        work = Work(np.zeros(4))  # the range's bounds (no coarse positive parts), as a tree sets
        set_target_range(work, False, (0.0, 0.0), 1.0, (g_pos, g_neg))
        top = _best_inner_candidate(sl, wl, g, c, node_sum, node_weight)
        m = float(np.min(c))
        assert range_bound_may_beat(sl, wl, s_b, w_b, work, node, m, top), case
        # where the range's parallelogram rules the bin out, the box may not (lopsided ranges)
        pos, neg = float(np.sum(c * np.maximum(g, 0))), float(np.sum(c * np.minimum(g, 0)))
        assert inner_bound_may_beat(sl, wl, w_b, pos, neg, node, m, top), case  # the box too
        best = top * (1 + 1e-6) + 1e-9
        if not range_bound_may_beat(sl, wl, s_b, w_b, work, node, m, best):
            ruled_out += inner_bound_may_beat(sl, wl, w_b, pos, neg, node, m, best)
    assert ruled_out > 10


def test_weighted_trees_equal_sklearn_weighted_trees():
    rng = np.random.RandomState(3)
    X = np.column_stack([rng.randn(500), rng.randint(0, 6, 500)])
    y = X[:, 0] ** 2 + X[:, 1] + rng.randn(500)
    w = rng.rand(500) * (rng.rand(500) < 0.8)
    for depth in (2, 6):
        _, tree, reg = _grow_both(X, y, depth, 0, sample_weight=w)
        pos = w > 0
        a, b = (
            tree.apply(np.ascontiguousarray(X[pos], dtype=np.float32)),
            reg.apply(X[pos].astype(np.float32)),
        )
        assert len(set(zip(a.tolist(), b.tolist()))) == len(set(a.tolist())) == len(set(b.tolist()))
        np.testing.assert_allclose(
            np.bincount(tree.split_feature, tree.split_gain, minlength=2),
            reg.tree_.compute_feature_importances(normalize=False),
            rtol=1e-9,
            atol=1e-15,
        )


def test_many_distinct_values_use_sorted_orders(compare_trees):
    """Features with more distinct values than the histogram codes hold (256) are split exactly
    from sorted orders, not binned."""
    rng = np.random.RandomState(4)
    X = np.column_stack(
        [rng.randn(2000), rng.randint(0, MAX_CODES, 2000), rng.randint(0, MAX_CODES + 1, 2000)]
    )
    y = np.sin(X[:, 0] * 3) + (X[:, 1] > 100) + (X[:, 2] % 7 == 0) + 0.1 * rng.randn(2000)
    e = ExactEngine()
    Xp = e.prepare(X, fit=True)
    np.testing.assert_array_equal(Xp.exact, [False, True, False])
    for depth in (3, 8):
        _, tree, reg = _grow_both(X, y, depth, 0)
        assert compare_trees(X.astype(np.float32), y, reg.tree_, tree).ties == 0 or depth == 8


@pytest.mark.parametrize("seed", range(3))
def test_every_bin_holds_training_rows(seed):
    """What ``nonempty_bins`` assumes on a node of every training row (the root): each bin of
    each feature (exact-coded, coarse, the missing values') holds at least one of the rows the
    bins were cut from, so its dense listing is the histogram's non-empty bins."""
    from proxboost.engines._exact.binning import code_features

    rng = np.random.RandomState(seed)
    n = 1000
    X = np.column_stack(
        [
            rng.randn(n),  # coarse
            rng.randn(n).round(1),  # exact-coded
            rng.choice([-0.0, 0.0, 1.0, 1.0 + 1e-7, 2.0], n),  # ties, signed zeros, near values
            np.repeat(rng.randn(n // 100), 100),  # coarse bins of repeated values
            rng.exponential(size=n) * 1e30,  # wide range
        ]
    ).astype(np.float32)
    X[rng.rand(n, X.shape[1]) < 0.1] = np.nan
    codes, _ = code_features(X)
    counts = codes.root_counts[1::2]
    assert (codes.positive_offset >= 0).any() and (codes.positive_offset < 0).any()
    for f in range(X.shape[1]):
        o, nb = codes.bin_offset[f], codes.n_bins[f]
        assert codes.bin_offset[f + 1] - o == nb
        assert (counts[o : o + nb] > 0).all(), f
        np.testing.assert_array_equal(
            counts[o : o + nb], np.bincount(codes.codes[:, f], minlength=nb)
        )


def _coded_columns(rng, n):
    """Columns for the binning tests: ties, signed zeros, subnormals, NaN (some, all, none),
    exactly MAX_CODES and MAX_CODES + 1 distinct values (when n allows), a constant."""
    from proxboost.engines._exact.records import MAX_CODES

    ties = np.array([-2.5, -0.0, 0.0, 1.0, 1.0 + 1e-7, 3e-39, -3e-39, 7.0], np.float32)
    cols = [
        rng.choice(ties, n),
        rng.randn(n).round(1),
        np.full(n, np.nan),
        np.full(n, -0.0),
        rng.randn(n),
        np.arange(n) % MAX_CODES,
        np.arange(n) % (MAX_CODES + 1),
    ]
    X = np.column_stack(cols).astype(np.float32)
    X[:, 1][rng.rand(n) < 0.2] = np.nan
    X[:, 0][rng.rand(n) < 0.1] = np.nan
    return X


@pytest.mark.parametrize("n", [1, 2, 7, 255, 256, 257, 600, 3000])
def test_the_compiled_codes_are_numpy_uniques(n, monkeypatch):
    """``exact_codes`` (small data) codes each feature as the ``np.unique`` path does (large
    data): every field of the codes record equal, the bins' values equal as numbers; only the
    representative of +0.0 and -0.0 in one column may differ in sign (the first in row order
    against np.unique's sort), and then the trees grown on both are the same bit for bit."""
    from proxboost.engines._exact import binning

    rng = np.random.RandomState(n)
    X = _coded_columns(rng, n)
    assert n <= binning.COMPILED_ROWS  # the first call takes the compiled path
    compiled, size = binning.code_features(X)
    monkeypatch.setattr(binning, "COMPILED_ROWS", -1)
    reference, size_ref = binning.code_features(X)
    assert size == size_ref
    for field in compiled._fields:
        got, want = getattr(compiled, field), getattr(reference, field)
        if field == "bin_value":
            np.testing.assert_array_equal(got, want)  # as numbers: -0.0 == 0.0
            signs = [set(np.signbit(X[:, f][X[:, f] == 0]).tolist()) for f in range(X.shape[1])]
            both_zeros = [f for f, sign in enumerate(signs) if sign == {False, True}]
            same_bits = got.view(np.uint32) == want.view(np.uint32)
            differ = np.flatnonzero(~same_bits.all(axis=1))
            assert set(differ) <= set(both_zeros)
        else:
            np.testing.assert_array_equal(got, want, err_msg=field)
    if n >= 2:
        target = rng.randn(n)
        grown = []
        for rows in (-1, 1 << 30):  # the NumPy path, the compiled one
            monkeypatch.setattr(binning, "COMPILED_ROWS", rows)
            e = ExactEngine()
            leaf_ids, tree = e.grow(e.prepare(X, fit=True), target, 4, 0)
            grown.append((leaf_ids, tree.feature, tree.threshold, tree.left, tree.gain))
        for a, b in zip(*grown, strict=True):
            assert a.tobytes() == b.tobytes()


def test_a_split_inside_a_coarse_bin_reads_the_codes_and_sends_the_same_rows():
    """A split between two consecutive values a < b inside a coarse bin is partitioned from the
    codes (bins below a's left, above right, a's bin by its values): the same rows go left as
    by ``x <= threshold``, for every consecutive pair of a feature with ties, values closer than
    FEATURE_THRESHOLD, negative zeros and a long run of one value; and ``coarse_bin_of`` finds
    every training value's bin."""
    from numba import njit

    from proxboost.engines._exact.binning import code_features
    from proxboost.engines._exact.grower import coarse_bin_of, goes_left
    from proxboost.engines._exact.records import INSIDE_BIN, VALUES_MISSING_RIGHT

    @njit
    def disagreements(codes, f, u):
        X32, B = codes.values, codes.codes
        bad = 0
        for i in range(u.shape[0] - 1):
            a = np.float64(u[i])
            b = np.float64(u[i + 1])
            thr = a / 2.0 + b / 2.0
            if thr == b:
                thr = a
            inside = INSIDE_BIN - coarse_bin_of(codes, f, a)
            for r in range(X32.shape[0]):
                ru, fu = np.uint64(r), np.uint64(f)
                bad += goes_left(X32, B, ru, fu, thr, VALUES_MISSING_RIGHT) != goes_left(
                    X32, B, ru, fu, thr, inside
                )
        return bad

    @njit
    def bins_of(codes, f):
        out = np.empty(codes.values.shape[0], np.int64)
        for r in range(out.shape[0]):
            out[r] = coarse_bin_of(codes, f, np.float64(codes.values[r, f]))
        return out

    rng = np.random.RandomState(7)
    x = rng.randn(1500).astype(np.float32)
    x[:40] = x[40:80] + np.float32(2e-8)  # closer than the threshold: one bin
    x[80:90] = -0.0
    x[90:100] = 0.0
    x[100:400] = x[400]  # one value filling several quantiles
    X = np.column_stack([x, rng.exponential(size=1500).round(2), rng.randn(1500)])
    codes, _ = code_features(X.astype(np.float32))
    for f in range(X.shape[1]):
        assert codes.positive_offset[f] >= 0  # coarse: the sorted path
        np.testing.assert_array_equal(bins_of(codes, f), codes.codes[:, f])
        assert disagreements(codes, f, np.unique(codes.values[:, f])) == 0


@pytest.mark.parametrize("seed", range(4))
def test_a_small_node_sorts_its_values_as_a_stable_sort(seed):
    """``rank_small`` (a small node's values sorted by counting ranks): the values, w g and w in
    the order of a stable sort (equal values, -0.0 with 0.0 included, in row order; the same
    bits as read), missing values left out with their sums in row order; on nodes of 1 to
    SMALL_NODE rows with heavy ties, negative zeros, subnormals and NaN, for exact-coded
    features (ranked by code) and coarse ones (ranked by value), both asserted to occur."""
    from proxboost.engines._exact.binning import code_features
    from proxboost.engines._exact.records import Node
    from proxboost.engines._exact.splitting import rank_small
    from proxboost.engines._nodes import SMALL_NODE

    rng = np.random.RandomState(seed)
    n = 800  # more distinct values than MAX_CODES in the coarse columns
    ties = np.array([-2.5, -0.0, 0.0, 1.0, 1.5, 3e-39, 7.0, 255.0], np.float32)
    tied_coarse = rng.randn(n).astype(np.float32)
    tied_coarse[rng.rand(n) < 0.2] = -0.0
    tied_coarse[rng.rand(n) < 0.2] = 0.0
    X = np.column_stack([rng.choice(ties, n), rng.randn(n), tied_coarse]).astype(np.float32)
    X[:, 0][rng.rand(n) < 0.15] = np.nan
    X[:, 1][rng.rand(n) < 0.15] = np.nan
    codes, _ = code_features(X)
    assert codes.positive_offset[0] < 0 and codes.nan_bin[0] >= 0  # exact-coded, with NaN
    assert codes.positive_offset[1] >= 0 and codes.positive_offset[2] >= 0  # coarse
    target = rng.randn(n)
    weight = rng.rand(n) + 0.5
    Work = namedtuple(
        "Work", "rows bin_values nonempty small_values small_targets small_weights".split()
    )
    for m in (1, 2, 3, 12, 17, 25, SMALL_NODE):
        rows = rng.permutation(n)[: m + 4].astype(np.int32)
        node = Node(0, 4, 4 + m, 0.0, 0.0, -np.inf, np.inf)
        for f in range(X.shape[1]):
            for w in (None, weight):
                work = Work(
                    rows,
                    np.empty(n, np.float32),
                    np.full(MAX_CODES, -7, np.int64),  # stale keys and ranks of another node
                    np.full(SMALL_NODE + 1, 7.0, np.float32),
                    np.zeros(SMALL_NODE + 1),
                    np.zeros(SMALL_NODE + 1),
                )
                k, nan_s, nan_w = rank_small(codes, target, w, work, node, f)
                seg = rows[4 : 4 + m]
                known = ~np.isnan(X[seg, f])
                order = seg[known][np.argsort(X[seg[known], f], kind="stable")]
                c = np.ones(n) if w is None else w
                assert k == len(order)
                np.testing.assert_array_equal(
                    work.small_values[:k].view(np.int32), X[order, f].view(np.int32)
                )
                np.testing.assert_array_equal(work.small_targets[:k], c[order] * target[order])
                if w is not None:
                    np.testing.assert_array_equal(work.small_weights[:k], w[order])
                s = cw = 0.0
                for r in seg[~known]:  # the missing rows' sums, in row order
                    s += c[r] * target[r]
                    cw += c[r]
                assert (nan_s, nan_w) == (s, cw)


def test_small_ranks_are_the_ranks_of_the_keys():
    """``small_ranks`` (16-bit lanes) against ``rank_below`` and NumPy's stable argsort, on keys
    of any code or bin (0 to 255) and place, with stale values in the lanes past m."""
    from numba import njit

    from proxboost.engines._nodes import (
        SMALL_LANES,
        SMALL_NODE,
        SMALL_ROW_BITS,
        rank_below,
        small_ranks,
    )

    @njit
    def both(lanes, keys, m):
        small_ranks(lanes, m)
        out = np.empty(m, np.int64)
        for i in range(m):
            out[i] = rank_below(keys, m, keys[i])
        return out

    rng = np.random.RandomState(0)
    for m in list(range(1, SMALL_NODE + 1)) * 4:
        codes = rng.choice([0, 1, 254, 255, rng.randint(256)], m)
        keys = (codes.astype(np.int64) << SMALL_ROW_BITS) + np.arange(m)
        lanes = rng.randint(-(2**15), 2**15, 4 * SMALL_LANES).astype(np.int16)
        lanes[:m] = keys
        old = both(lanes, keys, m)
        expected = np.argsort(np.argsort(keys, kind="stable"), kind="stable")
        np.testing.assert_array_equal(lanes[SMALL_LANES : SMALL_LANES + m], expected)
        np.testing.assert_array_equal(old, expected)


# ---------------------------------------------------------------------------------------------
# Interface
# ---------------------------------------------------------------------------------------------
def test_bad_input():
    e = make_engine("exact")
    with pytest.raises(ValueError, match="infinity"):
        e.prepare(np.array([[0.0], [np.inf]]), fit=True)
    with pytest.raises(ValueError, match="float32"):
        e.prepare(np.array([[0.0], [1e300]]), fit=True)
    with pytest.raises(TypeError, match="prepare"):
        e.grow(np.zeros((3, 1), np.float32), np.zeros(3), 2)
    Xp = e.prepare(np.arange(6.0).reshape(3, 2), fit=True)
    with pytest.raises(ValueError, match="sample_weight"):
        e.grow(Xp, np.zeros(3), 2, sample_weight=-np.ones(3))


def test_pickled_tree_and_engine():
    rng = np.random.RandomState(5)
    X, y = rng.randn(300, 4), rng.randn(300)
    e = ExactEngine()
    Xp = e.prepare(X, fit=True)
    ids, tree = e.grow(Xp, y, 4, 0)
    tree2 = pickle.loads(pickle.dumps(tree))
    np.testing.assert_array_equal(tree2.apply(e.prepare(X)), ids)
    e2 = pickle.loads(pickle.dumps(e))
    ids2, _ = e2.grow(e2.prepare(X, fit=True), y, 4, 0)
    np.testing.assert_array_equal(ids2, ids)


def test_degenerate_nodes():
    e = ExactEngine()
    for X, y in [
        (np.zeros((1, 1)), np.ones(1)),
        (np.zeros((5, 2)), np.arange(5.0)),
        (np.arange(6.0)[:, None], np.full(6, 2.5)),
    ]:
        ids, tree = e.grow(e.prepare(X, fit=True), y, 5, 0)
        assert tree.n_leaves == 1 and (ids == 0).all()
