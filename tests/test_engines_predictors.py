"""The engines' predictors (engines/_exact/predictor.py, engines/_hist/predictor.py): rows go
down four at a time without a branch, along a branch-free layout of the tree.

Oracle: the plain walk from the root (``leaf_of``, one row at a time with branches), on random
trees of every shape the growers make (unbalanced, leaves at any depth, a single leaf, node
arrays larger than the tree with stale entries after it), rows with missing values going either
way, row counts around multiples of four and of the parallel chunk, on the trees of real fits, and
with the compiled loop's layout scratch reused from one tree to the next.
"""

import numpy as np
import pytest

from proxboost import BoostingRegressor
from proxboost.engines._descent import CHUNK, Steps, leaves_by_masks, leaves_of_rows, new_mask_work
from proxboost.engines._exact import predictor as exact_predictor
from proxboost.engines._hist import predictor as hist_predictor
from proxboost.engines._threads import engine_threads, numba_threads


def random_tree(rng, p, max_depth, stale=9):
    """Node arrays (feature, threshold, left, right, leaf_of_node, missing_left) of a random
    tree, its nodes numbered in depth-first order as the growers number them, then ``stale``
    entries of any values (the compiled loop's node arrays are larger than its trees)."""
    feature, threshold, left, right, leaf, missing = ([] for _ in range(6))

    def grow(depth):
        k = len(left)
        for column in (feature, threshold, left, right, leaf, missing):
            column.append(-1)
        if depth == max_depth or (depth > 0 and rng.rand() < 0.3):
            leaf[k] = max(leaf) + 1
            feature[k], threshold[k], missing[k] = -2, -2.0, 0
            return k
        feature[k] = rng.randint(p)
        threshold[k] = rng.normal()
        missing[k] = rng.randint(2)
        left[k] = grow(depth + 1)
        right[k] = grow(depth + 1)
        return k

    grow(0)
    capacity = len(left) + stale
    return (
        np.r_[feature, rng.randint(p, size=stale)].astype(np.int32),
        np.r_[threshold, rng.normal(size=stale)],
        np.r_[left, rng.randint(-1, capacity, size=stale)].astype(np.int32),
        np.r_[right, rng.randint(-1, capacity, size=stale)].astype(np.int32),
        np.r_[leaf, rng.randint(-1, 5, size=stale)].astype(np.int32),
        np.r_[missing, rng.randint(2, size=stale)].astype(np.uint8),
    )


def walked(leaf_of, X, *tree):
    """The plain walk's leaf of each row of X: ``leaf_of(X, i, *tree)`` (either engine's)."""
    return np.array([leaf_of(X, i, *tree) for i in range(X.shape[0])], dtype=np.intp)


def reaches_several_leaves(expected, tree_depth, n):
    """Whether the oracle's leaves are varied enough for the comparison to mean something: a
    split root sends the rows of the long cases to at least two leaves."""
    return tree_depth == 0 or n < 100 or len(np.unique(expected)) > 1


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 7, 8, 9, 13, 16, 2 * CHUNK + 7])
def test_exact_leaves_are_the_plain_walks(seed, n):
    rng = np.random.RandomState(seed)
    p = 5
    X = rng.normal(size=(n, p)).astype(np.float32)
    X[rng.rand(n, p) < 0.15] = np.nan
    feature, threshold, left, right, leaf, missing = random_tree(rng, p, seed % 7)
    args = (feature, threshold, left, right, leaf, missing)
    expected = walked(exact_predictor.leaf_of, X, *args)
    assert reaches_several_leaves(expected, seed % 7, n)
    assert np.array_equal(exact_predictor.apply_tree(X, *args), expected)
    with numba_threads(engine_threads(2)):
        assert np.array_equal(exact_predictor.apply_tree_par(X, *args), expected)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 7, 8, 9, 13, 16, 2 * CHUNK + 7])
def test_hist_leaves_are_the_plain_walks(seed, n):
    rng = np.random.RandomState(seed)
    p = 5
    missing_bin = rng.randint(200, 256, size=p)
    bins = rng.randint(0, 200, size=(n, p)).astype(np.uint8)
    at_missing = rng.rand(n, p) < 0.15
    bins[at_missing] = np.broadcast_to(missing_bin, (n, p))[at_missing]
    feature, threshold, left, right, leaf, missing = random_tree(rng, p, seed % 7)
    nodes = (
        feature,
        np.floor(100 + 60 * threshold).clip(0, 255).astype(np.uint8),
        left,
        right,
        leaf,
    )
    expected = walked(hist_predictor.leaf_of, bins, nodes, missing, missing_bin)
    assert reaches_several_leaves(expected, seed % 7, n)
    assert np.array_equal(hist_predictor.apply_tree(bins, nodes, missing, missing_bin), expected)
    with numba_threads(engine_threads(2)):
        got = hist_predictor.apply_tree_par(bins, nodes, missing, missing_bin)
    assert np.array_equal(got, expected)


@pytest.mark.parametrize("engine", ["exact", "hist"])
def test_fitted_trees_send_new_rows_where_the_plain_walk_does(engine):
    rng = np.random.RandomState(3)
    X = rng.normal(size=(400, 6))
    X[:, 2] = np.round(X[:, 2])  # ties: exact-coded
    X[rng.rand(400, 6) < 0.05] = np.nan
    y = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) ** 2 + rng.standard_t(2, size=400)
    est = BoostingRegressor(loss="lad", max_depth=5, n_estimators=20, engine=engine, random_state=0)
    est.fit(X, y)
    X_new = rng.normal(size=(103, 6))
    X_new[rng.rand(103, 6) < 0.1] = np.nan
    Xp = est.engine_.prepare(X_new)
    for tree in est.estimators_:
        fields = tree._fields()
        if engine == "exact":
            feature, threshold, left, right, leaf, _, missing = fields
            tree_args = (feature, threshold, left, right, leaf, missing)
            expected = walked(exact_predictor.leaf_of, Xp, *tree_args)
        else:
            feature, threshold_bin, left, right, leaf, missing, _, _ = fields
            nodes = (feature, threshold_bin, left, right, leaf)
            expected = walked(hist_predictor.leaf_of, Xp, nodes, missing, tree.missing_bin)
        assert len(np.unique(expected)) > 1  # the rows reach several leaves
        assert np.array_equal(tree.apply(Xp), expected)


def padded(tree, capacity, rng):
    """``random_tree``'s arrays padded with stale entries to ``capacity`` nodes (two trees of
    one compiled loop share its node capacity)."""
    extra = capacity - tree[2].shape[0]
    stale = (rng.randint(0, 5, extra), rng.normal(size=extra), rng.randint(-1, capacity, extra))
    pads = (stale[0], stale[1], stale[2], stale[2], stale[0], rng.randint(2, size=extra))
    return tuple(np.r_[a, pad].astype(a.dtype) for a, pad in zip(tree, pads, strict=True))


@pytest.mark.parametrize("engine", ["exact", "hist"])
@pytest.mark.parametrize("seed", range(10))
def test_a_reused_steps_work_gives_the_new_trees_leaves(engine, seed):
    # the compiled loop fills one StepsWork tree after tree: a node split in the first tree and a
    # leaf (or not reached) in the second keeps the first tree's columns, never followed
    rng = np.random.RandomState(seed)
    p, n = 5, 203
    if engine == "exact":
        module = exact_predictor
        X = rng.normal(size=(n, p)).astype(np.float32)
        X[rng.rand(n, p) < 0.15] = np.nan

        def fill(tree, work):
            return module.fill_steps(*tree[:4], tree[5], work)

        def walk(tree):
            return walked(module.leaf_of, X, *tree)
    else:
        module = hist_predictor
        missing_bin = rng.randint(200, 256, size=p)
        X = rng.randint(0, 200, size=(n, p)).astype(np.uint8)
        at_missing = rng.rand(n, p) < 0.15
        X[at_missing] = np.broadcast_to(missing_bin, (n, p))[at_missing]

        def nodes(tree):
            threshold = np.floor(100 + 60 * tree[1]).clip(0, 255).astype(np.uint8)
            return (tree[0], threshold, tree[2], tree[3], tree[4])

        def fill(tree, work):
            return module.fill_steps(nodes(tree), tree[5], missing_bin, work)

        def walk(tree):
            return walked(module.leaf_of, X, nodes(tree), tree[5], missing_bin)

    first = random_tree(rng, p, 6, stale=0)
    second = random_tree(rng, p, 1 + seed % 4, stale=0)
    while len(np.unique(walk(second))) < 2:  # a tree whose comparison means something
        second = random_tree(rng, p, 1 + seed % 4, stale=0)
    capacity = max(first[2].shape[0], second[2].shape[0]) + 3
    first, second = padded(first, capacity, rng), padded(second, capacity, rng)
    work = module.steps_work(capacity)
    fill(first, work)
    depth = fill(second, work)
    steps = Steps(work.child, work.feature, work.threshold, work.missing, depth)
    got = np.full(n, -7, np.intp)
    leaves_of_rows(X, 0, n, steps, second[4], got)
    assert np.array_equal(got, walk(second))


def full_tree(depth, p, rng):
    """``random_tree``'s arrays (without stale entries) of a full tree of ``depth``: 2**depth
    leaves, numbered left to right as the growers number them."""
    feature, threshold, left, right, leaf = ([] for _ in range(5))

    def grow(d):
        k = len(left)
        for column in (feature, threshold, left, right, leaf):
            column.append(-1)
        if d == depth:
            leaf[k] = max(leaf) + 1
            return k
        feature[k], threshold[k] = rng.randint(p), rng.normal()
        left[k] = grow(d + 1)
        right[k] = grow(d + 1)
        return k

    grow(0)
    size = len(left)
    return (
        np.array(feature, np.int32),
        np.array(threshold, np.float64),
        np.array(left, np.int32),
        np.array(right, np.int32),
        np.array(leaf, np.int32),
        rng.randint(2, size=size).astype(np.uint8),
    )


def by_masks(X, tree_steps, leaf, work):
    """``leaves_by_masks`` of the rows X (n, p), held by feature as the compiled loop holds its
    rows outside the fit."""
    got = np.full(X.shape[0], -7, np.intp)
    leaves_by_masks(np.ascontiguousarray(X.T), tree_steps, (leaf, got, work))
    return got


@pytest.mark.parametrize("engine", ["exact", "hist"])
@pytest.mark.parametrize("seed", range(12))
def test_masks_give_the_plain_walks_leaves(engine, seed):
    """``_descent.leaves_by_masks`` (the compiled loop's rows outside the fit) against the plain
    walk: trees of 1 to 64 leaves and more (then the walk on the columns), leaf ids in any
    order, one scratch reused from a larger tree to a smaller one; ``exact``'s values at, just
    below and just above each threshold's float32 neighbours, infinite and missing, and
    infinite thresholds; ``hist``'s bins (uint8 comparisons) with the missing bin going left
    or right (the bin 255 among them), thresholds 0 and 254 and bins at both."""
    rng = np.random.RandomState(100 + seed)
    p, n = 5, 2 * CHUNK + 13
    depth = [0, 1, 3, 5, 6, 7, 8][seed % 7]
    trees = [full_tree(6, p, rng), random_tree(rng, p, depth, stale=0)]
    if seed % 3 == 0:
        trees[1] = full_tree(min(depth, 7), p, rng)
    for tree in trees:  # leaf ids in any order
        leaf = tree[4]
        ids = rng.permutation(int(leaf.max()) + 1)
        leaf[leaf >= 0] = ids[leaf[leaf >= 0]]
    n_leaves = [int(np.sum(tree[2] < 0)) for tree in trees]
    capacity = max(tree[2].shape[0] for tree in trees) + 3
    trees = [padded(tree, capacity, rng) for tree in trees]
    if engine == "exact":
        for tree in trees:
            split = tree[2] >= 0
            inf = split & (rng.rand(capacity) < 0.1)
            tree[1][inf] = np.where(rng.rand(inf.sum()) < 0.7, np.inf, -np.inf)
        thresholds = np.concatenate([tree[1][tree[2] >= 0] for tree in trees])
        near = thresholds[np.isfinite(thresholds)].astype(np.float32)
        near = np.concatenate([near, np.nextafter(near, np.float32(np.inf))])
        near = np.concatenate([near, np.nextafter(near, np.float32(-np.inf))])
        X = rng.normal(size=(n, p)).astype(np.float32)
        take = rng.rand(n, p) < 0.5
        X[take] = rng.choice(near, size=take.sum())
        X[rng.rand(n, p) < 0.03] = np.inf
        X[rng.rand(n, p) < 0.03] = -np.inf
        X[rng.rand(n, p) < 0.1] = np.nan
        work = new_mask_work(capacity, n, np.zeros(capacity, np.float32))
        steps_work = exact_predictor.steps_work(capacity)

        def fill(tree):
            return exact_predictor.fill_steps(*tree[:4], tree[5], steps_work)

        def walk(tree):
            return walked(exact_predictor.leaf_of, X, *tree)
    else:
        missing_bin = rng.randint(200, 256, size=p)
        missing_bin[rng.randint(p)] = 255  # the last bin (a missing -1 cast to uint8)
        X = rng.randint(0, 200, size=(n, p)).astype(np.uint8)
        X[rng.rand(n, p) < 0.05] = 0
        X[rng.rand(n, p) < 0.05] = 254
        at_missing = rng.rand(n, p) < 0.15
        X[at_missing] = np.broadcast_to(missing_bin, (n, p))[at_missing]
        for tree in trees:  # thresholds at both ends of the bins, 0 and 254
            split = tree[2] >= 0
            tree[1][split & (rng.rand(capacity) < 0.1)] = -10.0
            tree[1][split & (rng.rand(capacity) < 0.1)] = 10.0
        work = new_mask_work(capacity, n, np.zeros(capacity, np.uint8))
        steps_work = hist_predictor.steps_work(capacity)

        def nodes(tree):
            threshold = np.floor(100 + 60 * tree[1]).clip(0, 254).astype(np.uint8)
            return (tree[0], threshold, tree[2], tree[3], tree[4])

        ends = np.concatenate([nodes(tree)[1][tree[2] >= 0] for tree in trees[:1]])
        assert {0, 254} <= set(ends.tolist())  # the full tree of 64 leaves has both

        def fill(tree):
            return hist_predictor.fill_steps(nodes(tree), tree[5], missing_bin, steps_work)

        def walk(tree):
            return walked(hist_predictor.leaf_of, X, nodes(tree), tree[5], missing_bin)

    assert n_leaves[0] == 64  # uint64 words; the second tree: 32-bit words, or the walk
    if depth == 7 and seed % 3 == 0:  # a full tree of 128 leaves: the walk on the columns
        assert n_leaves[1] == 128
    for tree, leaves in zip(trees, n_leaves, strict=True):
        tree_depth = fill(tree)
        tree_steps = Steps(*steps_work[:4], tree_depth)
        expected = walk(tree)
        assert leaves == 1 or len(np.unique(expected)) > 1
        assert np.array_equal(by_masks(X, tree_steps, tree[4], work), expected)
