"""Threads (``n_jobs``): the exact and hist engines' parallel kernels grow the one-thread trees
bit for bit.

Oracle: the fit with ``n_jobs=1`` (the serial kernels). Every comparison is ``np.array_equal``
(not allclose): trees (features, thresholds, children, missing-value directions, gains), leaf
values, training losses and predictions, for several losses, algorithms, depths, weights and
seeds, on data with tied values, missing values and monotone constraints; for ``exact`` also
constant and duplicated features (exact ties between features, decided by scikit-learn's random
visiting order) under several ``random_state`` seeds. On a machine with fewer cores, n_jobs=4
runs on ``numba.config.NUMBA_NUM_THREADS`` threads (still parallel).
"""

import json
import os
import pickle
import subprocess
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor

import compile_kernels
import numba
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.tree import DecisionTreeRegressor

from proxboost import BoostingClassifier, BoostingRegressor, _compiled_loop
from proxboost.engines import _threads, make_engine
from proxboost.engines._exact import grower as exact_grower
from proxboost.engines._exact import histogram as exact_histogram
from proxboost.engines._exact import records as exact_records
from proxboost.engines._exact.binning import code_features
from proxboost.engines._hist import grower as hist_grower

N_JOBS = (1, 2, 4)
ENGINES = ("hist", "exact")


def _data(seed, n=300, p=5, classification=False, extra=False):
    """Features with ties (a rounded column, a 3-valued one) and missing values (NaN); with
    ``extra``, three more: a constant one, a copy of column 2 (exact ties between features) and
    one constant but for a few rows (constant in most nodes)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X[:, 1] = np.round(X[:, 1], 1)  # ties
    X[:, 2] = rng.integers(0, 3, n)  # few distinct values
    X[rng.random(n) < 0.15, 3] = np.nan  # missing values
    if extra:
        rare = np.where(rng.random(n) < 0.05, rng.normal(size=n), 0.5)
        X = np.column_stack([X, np.full(n, 2.0), X[:, 2], rare])
    y = X[:, 0] + 0.5 * X[:, 2] + np.nan_to_num(X[:, 3]) + rng.standard_t(3, size=n)
    if classification:
        y = (y > np.median(y)).astype(int)
    w = rng.integers(0, 4, n).astype(float)  # integer weights, some 0
    return X, y, w


def _fit(loss, algo, depth, n_jobs, X, y, w, engine="hist", random_state=0, **kw):
    cls = BoostingClassifier if loss == "hinge" else BoostingRegressor
    est = cls(
        loss=loss,
        algo=algo,
        max_depth=depth,
        n_estimators=6,
        engine=engine,
        n_jobs=n_jobs,
        random_state=random_state,
        **kw,
    )
    return est.fit(X, y, sample_weight=w)


def _numbers(est, X):
    """Every number of a fit that threads could move."""
    out = [np.asarray(est.train_loss_), np.asarray(est.n_leaves_)]
    for tree, values in zip(est.estimators_, est.leaf_values_):
        out += [tree.feature, tree.threshold, getattr(tree, "threshold_bin", 0), tree.left]
        out += [tree.right]
        out += [tree.leaf_of_node, tree.missing_go_to_left, tree.split_gain, np.asarray(values)]
    pred = est.decision_function(X) if hasattr(est, "decision_function") else est.predict(X)
    return out + [pred, est.predict(X)]


def _assert_same(a, b):
    assert len(a) == len(b)
    for k, (u, v) in enumerate(zip(a, b)):
        assert np.array_equal(u, v, equal_nan=True), f"number {k} differs"


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "integer-weights"])
@pytest.mark.parametrize("depth", [1, 3, 5])
@pytest.mark.parametrize("algo", ["prox", "gradient"])
@pytest.mark.parametrize("loss", ["lad", "pinball", "hinge", "ls"])
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.grid
def test_any_thread_count_grows_the_one_thread_fit(engine, loss, algo, depth, weighted, seed):
    exact = engine == "exact"  # also constant and duplicated features, several random states
    X, y, w = _data(seed, classification=loss == "hinge", extra=exact)
    w = w if weighted else None
    kw = {"tau": 0.8} if loss == "pinball" else {}
    kw.update(engine=engine, random_state=10 * seed + depth if exact else 0)
    ref = _numbers(_fit(loss, algo, depth, 1, X, y, w, **kw), X)
    assert ref[1].max() > 1  # the trees split
    for n_jobs in N_JOBS[1:]:
        _assert_same(_numbers(_fit(loss, algo, depth, n_jobs, X, y, w, **kw), X), ref)


@pytest.mark.parametrize("params", [{"algo": "accelerated_prox"}, {"tau": [0.2, 0.5, 0.8]}])
@pytest.mark.parametrize("engine", ENGINES)
def test_a_prediction_on_threads_is_the_one_thread_prediction(engine, params):
    """``predict`` with ``n_jobs`` > 1 shares chunks of ``_descent.CHUNK`` rows between threads
    (from two chunks on): a warm-started model (two groups of trees), Nesterov's weights or
    several quantiles, on rows with missing values, partial last chunks included, against one
    thread bit for bit."""
    from proxboost.engines._descent import CHUNK
    from proxboost.engines._exact import predictor as exact_predictor
    from proxboost.engines._hist import predictor as hist_predictor

    X, y, _ = _data(0, n=3 * CHUNK + 5)
    loss = "pinball" if "tau" in params else "lad"
    est = BoostingRegressor(loss=loss, max_depth=4, n_estimators=8, engine=engine, **params)
    est.fit(X, y).set_params(warm_start=True, n_estimators=12).fit(X, y)
    ref = est.predict(X)
    for n_jobs in N_JOBS[1:]:
        assert np.array_equal(est.set_params(n_jobs=n_jobs).predict(X), ref)
        assert np.array_equal(est.predict(X[: CHUNK + 1]), ref[: CHUNK + 1])
    kernel = (exact_predictor if engine == "exact" else hist_predictor).add_trees_par
    assert kernel.signatures  # the rows were shared between threads


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "integer-weights"])
@pytest.mark.parametrize("loss", ["lad", "ls", "hinge"])
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.grid
def test_threads_with_monotone_constraints(engine, loss, weighted):
    X, y, w = _data(3, classification=loss == "hinge", extra=engine == "exact")
    w = w if weighted else None
    cst = [1, 0, 1, -1, 0] + [1, -1, 1][: X.shape[1] - 5]
    kw = {"engine": engine, "monotonic_cst": cst}
    ref = _numbers(_fit(loss, "prox", 4, 1, X, y, w, **kw), X)
    for n_jobs in N_JOBS[1:]:
        _assert_same(_numbers(_fit(loss, "prox", 4, n_jobs, X, y, w, **kw), X), ref)


def _larger_trees(engine_name, X, y, sw, random_state=None, depth=7):
    """Per thread count, the tree grown by the engine alone and its training rows' leaf ids."""
    grown = []
    for n_jobs in N_JOBS:
        engine = make_engine(engine_name, n_jobs=n_jobs)
        Xp = engine.prepare(X, fit=True, **({} if sw is None else {"sample_weight": sw}))
        ids, tree = engine.grow(Xp, y, depth, random_state=random_state, sample_weight=sw)
        missing = tree.missing_go_to_left
        grown.append([ids, tree.feature, tree.threshold, tree.left, tree.split_gain, missing])
    return grown


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.grid
def test_engine_trees_and_leaf_ids_are_the_one_thread_ones_on_a_larger_tree(engine):
    X, y, w = _data(5, n=2000, p=8, extra=engine == "exact")
    X[:, 5] = np.round(X[:, 5])  # many ties
    for sw in (None, w):
        for random_state in (0, 1, 2) if engine == "exact" else (None,):
            grown = _larger_trees(engine, X, y, sw, random_state)
            assert grown[0][3].shape[0] > 63  # enough nodes for histograms and small nodes
            for other in grown[1:]:
                _assert_same(other, grown[0])


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.grid
def test_exact_threads_on_large_nodes_and_coarse_features(seed):
    """exact on 20,000 rows: coarse features (more than 256 values) whose bins are read from
    their global sorted segments (large nodes) and from the node's rows (small ones), features
    with few values (tie-heavy), a constant one, NaN, weights with zeros, a deep tree."""
    rng = np.random.default_rng(seed)
    n = 20_000
    X = np.column_stack(
        [
            rng.normal(size=n),  # coarse
            np.round(rng.normal(size=n), 2),  # coarse, many ties
            rng.integers(0, 4, n),  # four values
            np.where(rng.random(n) < 0.1, np.nan, rng.normal(size=n)),  # coarse with NaN
            np.full(n, -1.0),  # constant
            rng.integers(0, 2, n),  # two values
        ]
    )
    y = X[:, 0] + X[:, 2] + np.sign(X[:, 1]) + rng.normal(size=n)
    y = np.sign(y - np.median(y))  # few target values: many exact ties between candidates
    w = rng.integers(0, 3, n).astype(float)
    for sw in (None, w):
        grown = _larger_trees("exact", X, y, sw, random_state=seed, depth=9)
        assert grown[0][3].shape[0] > 200
        for other in grown[1:]:
            _assert_same(other, grown[0])


def _dropped_last_level_split(tree, ids, y, sw):
    """Whether a depth-2 tree made a node of depth 1 a leaf though the grower searched it for
    a split (its impurity, from its rows' sums added in row order as the partition adds them,
    above scikit-learn's tolerance; several target values; features that vary, so a split
    exists): the one-thread grower found a split there and dropped it, its improvement below
    the tolerance."""
    if tree.left[0] < 0:
        return False
    c = np.ones_like(y) if sw is None else sw
    for child in (tree.left[0], tree.right[0]):
        rows = np.flatnonzero((ids == tree.leaf_of_node[child]) & (c > 0))  # taking part
        if tree.left[child] >= 0 or rows.shape[0] < 2 or np.unique(y[rows]).shape[0] < 2:
            continue
        weight = total = squares = 0.0
        for r in rows:
            weight += c[r]
            total += c[r] * y[r]
            squares += c[r] * y[r] * y[r]
        if squares / weight - (total / weight) ** 2.0 > np.finfo(np.float64).eps:
            return True
    return False


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "integer-weights"])
def test_exact_threads_regrow_a_tree_whose_deferred_last_split_does_not_improve(weighted):
    """On threads, ``exact`` leaves its last level's splits until the node loop ends, but the
    one-thread grower drops a last-level split whose improvement is below scikit-learn's
    tolerance before numbering the next nodes. Targets 1e8 + N(0, 0.01) make the impurities,
    computed from sums, lose their digits: such a split is dropped in some trees. There the
    threads grow the tree again on one thread (with weights, from the rows taking part in
    their first order), so every thread count gives the one-thread tree and leaf ids."""
    checked = 0
    for seed in range(300):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(40, 2))
        y = 1e8 + rng.normal(size=40) * 0.1
        sw = rng.integers(0, 3, 40).astype(float) if weighted else None
        grown = []
        for n_jobs in N_JOBS:
            engine = make_engine("exact", n_jobs=n_jobs)
            Xp = engine.prepare(X, fit=True)
            ids, tree = engine.grow(Xp, y, 2, random_state=0, sample_weight=sw)
            grown.append((ids, tree))
        if not _dropped_last_level_split(grown[0][1], grown[0][0], y, sw):
            continue
        for ids, tree in grown[1:]:
            assert np.array_equal(ids, grown[0][0])
            for name in ("feature", "threshold", "left", "right", "leaf_of_node", "split_gain"):
                assert np.array_equal(getattr(tree, name), getattr(grown[0][1], name)), name
        checked += 1
        if checked == 5:
            return
    pytest.fail(f"only {checked} trees with a dropped last-level split among 300 draws")


def _random_binned_rows(rng, n, weighted):
    """n rows of 4 features of 10 bins, targets with some -0.0, weights with zeros (or None) and
    the rows in a random order: the hist kernels' inputs in the tests below."""
    bins = rng.integers(0, 10, size=(n, 4)).astype(np.uint8)
    target = rng.normal(size=n)
    target[rng.random(n) < 0.1] = -0.0
    w = rng.integers(0, 3, n).astype(float) if weighted else None
    return bins, target, w, rng.permutation(n).astype(np.intp)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_hist_parallel_partition_and_labels_are_the_serial_ones(k):
    """The hist engine's partition on k threads (each thread's block of rows split into its
    left and right rows, then one thread per side copying the side back with its sums) puts
    every row where the serial kernel does and returns the same sums bit for bit, signs of
    zeros included; the serial last-level labels put each row on the partition's side, with the
    partition's sums. Kernels called directly: in a fit the
    parallel partition runs on nodes of ``PARALLEL_ROWS`` rows or more only."""
    rng = np.random.default_rng(k)
    for trial in range(40):
        n = int(rng.integers(1, 2000))
        bins, target, w, rows0 = _random_binned_rows(rng, n, weighted=trial % 2 == 0)
        start = int(rng.integers(0, n))
        end = int(rng.integers(start, n + 1))
        split = (int(rng.integers(0, 4)), int(rng.integers(0, 10)), int(rng.choice([-1, 9])))
        serial_rows, par_rows = rows0.copy(), rows0.copy()
        serial = hist_grower.partition(
            bins, target, w, serial_rows, np.zeros(n, np.intp), start, end, *split
        )
        par = hist_grower.partition_par(
            bins, target, w, par_rows, np.zeros(n, np.intp), start, end, split, k
        )
        assert np.array_equal(par_rows, serial_rows)
        assert par[0] == serial[0]
        for a, b in zip(serial[1:], par[1:]):
            assert np.array_equal(np.signbit(a), np.signbit(b)) and tuple(a) == tuple(b)
        ids = np.full(n, -1)
        labelled = hist_grower.label_last_level(bins, target, w, rows0, (start, end), split, ids, 3)
        assert labelled[0] == serial[0] - start
        expected = np.full(n, -1)  # leaf 3: the rows the partition puts left; 4: the others
        expected[rows0[start:end]] = 4
        expected[serial_rows[start : serial[0]]] = 3
        assert np.array_equal(ids, expected)
        # the serial labels' sums of each side (the last level's leaf sums): the partition's
        # (row order, an exact +0.0 from the other side), signs of zeros included
        for side in (1, 2):
            got, want = labelled[side], serial[side]
            assert (got.weight, got.sum) == (want.weight, want.sum)
            assert np.signbit(got.sum) == np.signbit(want.sum)


def _exact_records(rng, n, k):
    """The exact engine's records for a direct call of its partitions: prepared rows with
    coarse features (more than 256 values), exact-coded ones (ties) and missing values; the
    workspace on the engine's scratch; the threads' scratch of k threads."""
    X = np.column_stack(
        [
            rng.normal(size=n),  # coarse once n > 256
            rng.integers(0, 7, n).astype(float),  # exact-coded, ties
            np.where(rng.random(n) < 0.2, np.nan, rng.normal(size=n)),  # missing values
        ]
    )
    engine = make_engine("exact", n_jobs=k)
    Xp = engine.prepare(X, fit=True)
    scratch = engine._scratch(Xp, 4)
    fields = [getattr(scratch, name) for name in exact_records.Workspace._fields[:-1]]
    work = exact_records.Workspace(*fields, np.zeros(X.shape[1], np.int8))
    return Xp.codes, work, engine._thread_scratch(Xp, k)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_exact_parallel_partition_is_the_serial_one(k):
    """The exact engine's partition on k threads (each thread's block of rows split into its
    left and right rows, then one thread per side copying the side back with its sums) puts
    every row where the serial kernel does, gives the same node labels and returns the same
    sums bit for bit, signs of zeros included, for the rules of every kind of split (codes of
    an exact-coded feature, values with missing values going right or left, a coarse bin's
    inner cut). Kernels called directly: in a fit the parallel partition runs on nodes of
    ``PARALLEL_ROWS`` rows or more only."""
    rng = np.random.default_rng(20 + k)
    for trial in range(24):
        n = int(rng.integers(1, 1500))
        codes, work, par = _exact_records(rng, n, k)
        target = rng.normal(size=n)
        target[rng.random(n) < 0.1] = -0.0
        w = rng.integers(0, 3, n).astype(float) if trial % 2 else None
        order = rng.permutation(n).astype(work.rows.dtype)
        start = int(rng.integers(0, n))
        end = int(rng.integers(start, n + 1))
        f = int(rng.integers(0, 3))
        thr = float(rng.normal())
        code = [
            int(rng.integers(0, 7)) if f == 1 else exact_records.VALUES_MISSING_RIGHT,
            exact_records.VALUES_MISSING_RIGHT,
            exact_records.VALUES_MISSING_LEFT,
            exact_records.INSIDE_BIN - int(rng.integers(0, codes.n_bins[0])),
        ][trial % 4]
        f = 0 if trial % 4 == 3 else f
        node = exact_records.Node(5, start, end, 0.0, 0.0, -np.inf, np.inf)
        labels = 7 if trial % 3 else -1
        results = []
        for parallel in (False, True):
            work.rows[:n] = order
            work.node_label[:n] = -1
            if parallel:
                got = exact_grower.partition_rows_par(
                    codes, target, w, work, node, (f, thr, code), labels, par
                )
            else:
                got = exact_grower.partition_rows(
                    codes, target, w, work, node, f, thr, code, 7, labels >= 0
                )
            results.append((got, work.rows[:n].copy(), work.node_label[:n].copy()))
        (serial, rows_s, labels_s), (par_got, rows_p, labels_p) = results
        assert np.array_equal(rows_p, rows_s) and np.array_equal(labels_p, labels_s)
        assert par_got[0] == serial[0]
        for a, b in zip(serial[1:], par_got[1:]):
            assert tuple(a) == tuple(b) and np.array_equal(np.signbit(a), np.signbit(b))


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_exact_parallel_histograms_are_the_serial_ones(k):
    """The exact engine's histograms on k threads (each thread's features added into its own
    histogram, then copied into the node's buffer) equal the serial kernels' on the buffer's bin
    ranges bit for bit, positive parts included when the tree builds them, and write nothing
    outside those ranges: a node's (random ranges, rows and weights) and the root's. Both the
    buffer and the threads' own histograms start as NaN, so a slot left unwritten shows."""
    rng = np.random.default_rng(40 + k)
    for trial in range(16):
        n = int(rng.integers(1, 1500))
        codes, work, par = _exact_records(rng, n, k)
        target = rng.normal(size=n) * 10.0 ** rng.integers(-6, 6, n)  # rounding matters
        w = rng.integers(1, 4, n).astype(float) if trial % 2 else None
        positive = trial % 4 < 2 and codes.coarse_features.shape[0] > 0
        work.target_range[0] = 1.0 if positive else 0.0
        root = trial % 3 == 0 and w is None
        # both buffers on the same ranges: full at the root, random elsewhere
        lo = np.zeros_like(codes.n_bins) if root else rng.integers(0, codes.n_bins)
        hi = codes.n_bins - 1 if root else rng.integers(lo, codes.n_bins)
        work.bin_lo[:2] = lo
        work.bin_hi[:2] = hi
        work.rows[:n] = rng.permutation(n)
        start = 0 if root else int(rng.integers(0, n))
        end = n if root else int(rng.integers(start, n + 1))
        work.hist[:2] = np.nan
        par.hist[:] = np.nan
        sums = np.full(2, np.nan) if trial % 12 == 0 else None  # thread 0 adds the sums too
        if root:
            exact_histogram.build_root_hist(codes, target, work, 0)
            exact_histogram.build_root_hist_par(codes, target, work, 1, par.hist, sums)
        else:
            exact_histogram.zero_ranges(codes, work, 0)
            exact_histogram.build_hist(codes, target, w, work, 0, start, end)
            exact_histogram.build_hist_par(codes, target, w, work, 1, start, end, par.hist)
        in_ranges = np.zeros(work.hist.shape[1], bool)
        off, poff = codes.bin_offset, codes.positive_offset
        for f in range(codes.n_bins.shape[0]):
            lo, hi = work.bin_lo[0, f], work.bin_hi[0, f]
            in_ranges[2 * (off[f] + lo) : 2 * (off[f] + hi + 1)] = True
            if positive and poff[f] >= 0:
                in_ranges[poff[f] + lo : poff[f] + hi + 1] = True
        serial, threads = work.hist[0], work.hist[1]
        assert not np.isnan(threads[in_ranges]).any()
        assert np.array_equal(threads[in_ranges], serial[in_ranges])
        assert np.isnan(threads[~in_ranges]).all()
        if root and sums is not None:
            assert tuple(sums) == _row_order_sums(target)


def _row_order_sums(target):
    """The sums of the target and of its squares added one row after the other in Python
    floats: the serial root pass's additions."""
    s = q = 0.0
    for g in target.tolist():
        s += g
        q += g * g
    return s, q


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_exact_root_pass_on_threads_is_the_serial_one(k):
    """The exact engine's root pass on k threads (unit weights, every row: row list, labels and
    target range by blocks of rows, the root's histogram built with thread 0 adding the root's
    sums beside the other threads' features) gives the serial pass's root sums bit for bit (and
    those of one Python float loop), the same rows, labels and target range, and the serial
    root histogram, positive parts included when the tree builds them. Targets of every kind:
    Gaussian (the positive parts kept), sign-like (the range's bound), constant."""
    rng = np.random.default_rng(50 + k)
    n = exact_grower.PARALLEL_ROWS + int(rng.integers(0, 3000))
    codes, work, par = _exact_records(rng, n, k)
    limits = exact_records.Limits(3, 1e-15, 1e-7, 32, 1.0, float(n))
    work.free_buffers[:] = np.arange(work.free_buffers.shape[0])  # all free, as a tree starts
    for kind in ("gaussian", "signs", "constant"):
        target = {
            "gaussian": rng.normal(size=n) * 10.0 ** rng.integers(-6, 6, n),
            "signs": np.where(rng.random(n) < 0.3, -1.0, 1.0) * rng.choice([1.0, 0.5], n),
            "constant": np.full(n, 0.25),
        }[kind]
        results = []
        for parallel in (False, True):
            work.rows[:] = -1
            work.node_label[:] = -1
            work.target_range[:] = np.nan
            work.hist[:] = np.nan
            u = work.free_buffers[-1]
            work.bin_lo[u] = 0
            work.bin_hi[u] = codes.n_bins - 1
            if parallel:
                root, built = exact_grower.root_pass_par(codes, target, work, limits, n, par)
                assert built
            else:
                root, _ = exact_grower.root_pass(codes, target, None, work, n)
                exact_histogram.build_root_hist(codes, target, work, u)
            results.append(
                (tuple(root), work.rows[:n].copy(), work.node_label[:n].copy(),
                 work.target_range.copy(), work.hist[u].copy())
            )  # fmt: skip
        (root_s, rows_s, labels_s, range_s, hist_s), (root_p, rows_p, labels_p, range_p, hist_p) = (
            results
        )
        assert root_p == root_s == (float(n), *_row_order_sums(target))
        assert np.array_equal(rows_p, np.arange(n)) and np.array_equal(rows_s, rows_p)
        assert np.array_equal(labels_p, labels_s) and (labels_p == 0).all()
        assert np.array_equal(range_p[1:], range_s[1:])
        if kind != "gaussian":  # far from the tightness threshold: the same choice
            assert range_p[0] == range_s[0]
        sums_and_counts = 2 * codes.bin_offset[-1]  # the positive parts after them
        assert np.array_equal(hist_p[:sums_and_counts], hist_s[:sums_and_counts])
        if range_p[0] > 0 and range_s[0] > 0:
            assert np.array_equal(hist_p, hist_s)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_hist_last_level_splits_on_threads_are_labelled_as_on_one_thread(k):
    """The hist engine's last level on k threads (``label_pending_par``: the splits shared
    between the threads, each labelled and added up by one thread) gives every split's rows the
    serial kernel's leaves, left row counts and both sides' sums bit for bit (signs of zeros
    included), whatever the splits' sizes and the order the threads take them in."""
    rng = np.random.default_rng(10 + k)
    for trial in range(30):
        n = int(rng.integers(1, 3000))
        bins, target, w, rows = _random_binned_rows(rng, n, weighted=trial % 2 == 0)
        cuts = np.unique(np.concatenate([[0, n], rng.integers(0, n + 1, rng.integers(0, 9))]))
        m = cuts.shape[0] - 1
        segment = np.stack([cuts[:-1], cuts[1:]], axis=1).astype(np.int64)
        split = np.stack(
            [rng.integers(0, 4, m), rng.integers(0, 10, m), rng.choice([-1, 9], m)], axis=1
        ).astype(np.int64)
        firsts = 2 * np.arange(m, dtype=np.int64)
        want_ids = np.full(n, -1)
        want = []
        for i in range(m):
            rule = tuple(int(v) for v in split[i])
            want.append(
                hist_grower.label_last_level(
                    bins, target, w, rows, tuple(segment[i]), rule, want_ids, firsts[i]
                )
            )
        ids = np.full(n, -1)
        n_left, sums = np.full(m, -1, np.int64), np.full((m, 4), np.nan)
        order = rng.permutation(m).astype(np.int64)
        with _threads.numba_threads(min(k, numba.config.NUMBA_NUM_THREADS)):
            hist_grower.label_pending_par(
                bins, target, w, rows, ids, segment, split, firsts, (n_left, sums), order,
                np.zeros(1, np.int64),
            )  # fmt: skip
        assert np.array_equal(ids, want_ids)
        for i, (n_l, left, right) in enumerate(want):
            assert n_left[i] == n_l
            got = sums[i]
            expected = np.array([left.weight, left.sum, right.weight, right.sum])
            assert np.array_equal(got, expected)
            assert np.array_equal(np.signbit(got), np.signbit(expected))


def test_the_leaves_line_search_on_threads_is_the_serial_one():
    """``_leaf_threads.leaf_intervals_in_par`` on 1 to ``NUMBA_NUM_THREADS`` threads: the serial
    kernel's grouping (each leaf's values in row order: the whole ``grouped``, the counts, the
    starts and the hinge's positive signs) and its intervals, bit for bit (signs of zeros
    included), with empty leaves, ties, two leaves (a stump) and many, and leaves on both sides
    of the sample-select size; both kernels get a scratch left dirty by other calls."""
    from proxboost._leaf_threads import leaf_intervals_in_par
    from proxboost._leafops import leaf_intervals_in, leaf_scratch

    rng = np.random.default_rng(5)
    n_max, leaves_max = 70000, 70
    serial, par = leaf_scratch(n_max, leaves_max), leaf_scratch(n_max, leaves_max)
    before = numba.get_num_threads()
    try:
        for trial in range(60):
            k = 1 + trial % numba.config.NUMBA_NUM_THREADS
            numba.set_num_threads(k)
            n = int(rng.choice([1, 2, 5, 300, 2100, 9000, n_max]))
            n_leaves = int(rng.choice([1, 2, 3, 8, leaves_max]))
            values = np.round(rng.standard_t(3, size=n), 1 if trial % 2 else 9)  # ties
            values[rng.random(n) < 0.05] = -0.0
            leaf_ids = rng.integers(0, n_leaves, size=n)
            if trial % 7 == 0:
                leaf_ids[leaf_ids == n_leaves - 1] = 0  # an empty leaf
            signs = np.sign(rng.normal(size=n)) if trial % 3 == 0 else np.empty(0)
            tau = 0.5 if signs.size else float(rng.choice([0.5, 0.1, rng.uniform(0.01, 0.99)]))
            leaf_intervals_in(values, leaf_ids, n_leaves, tau, signs, serial, False)
            leaf_intervals_in_par(values, leaf_ids, n_leaves, tau, signs, par, False)
            for name in ("counts", "n_pos", "starts", "los", "his"):
                a, b = getattr(serial, name)[:n_leaves], getattr(par, name)[:n_leaves]
                assert np.array_equal(a, b) and np.array_equal(np.signbit(a), np.signbit(b)), name
            if n_leaves > 2:  # a stump's grouping is _group_two's in both
                assert np.array_equal(serial.grouped[:n], par.grouped[:n]), trial
    finally:
        numba.set_num_threads(before)


def _large_data():
    """50,000 rows (weights with zeros leave about 33,000 taking part): nodes of at least
    ``PARALLEL_ROWS`` rows, partitioned or labelled on the threads."""
    assert exact_grower.PARALLEL_ROWS == hist_grower.PARALLEL_ROWS < 30_000
    rng = np.random.default_rng(7)
    n = 50_000
    X = np.column_stack(
        [
            rng.normal(size=n),
            np.round(rng.normal(size=n), 1),
            rng.integers(0, 5, n),
            np.where(rng.random(n) < 0.1, np.nan, rng.normal(size=n)),
        ]
    )
    y = X[:, 0] + X[:, 2] + np.sign(X[:, 1]) + rng.standard_t(3, size=n)
    return X, y, rng.integers(0, 3, n).astype(float)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.slow
def test_the_compiled_loop_on_threads_gives_the_one_thread_numbers_on_large_nodes(engine):
    """The compiled loop on nodes of at least ``PARALLEL_ROWS`` rows: on the last level the
    threads label the rows, and the leaves' sums the loop divides come from the threads'
    kernel (``exact``) or from the loop's own pass (``hist``, whose threads leave none): the
    one-thread fit's numbers, with and without weights, at depths 1 (the root labelled) and 3."""
    X, y, w = _large_data()
    for sw in (None, w):
        for depth in (1, 3):
            ref = _numbers(_fit("lad", "prox", depth, 1, X, y, sw, engine=engine), X)
            assert ref[1].max() == 2**depth  # every level split
            for n_jobs in N_JOBS[1:]:
                _assert_same(
                    _numbers(_fit("lad", "prox", depth, n_jobs, X, y, sw, engine=engine), X), ref
                )


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.slow
def test_threads_partition_large_nodes_as_one_thread(engine):
    """Nodes of at least ``PARALLEL_ROWS`` rows are partitioned (or, on the last level,
    labelled) on the threads: 50,000 rows (weights with zeros leave about 33,000 taking part),
    coarse features for ``exact`` (node labels written by the partition), missing values: the
    one-thread trees and leaf ids."""
    X, y, w = _large_data()
    for sw in (None, w):
        for depth in (1, 5):  # depth 1: the root's rows labelled as leaves on the threads
            grown = _larger_trees(engine, X, y, sw, random_state=0, depth=depth)
            for other in grown[1:]:
                _assert_same(other, grown[0])


@pytest.mark.slow
def test_exact_ties_between_features_keep_the_serial_winner():
    """Three copies of one feature: every split on it ties exactly between the copies, and the
    serial scan keeps the copy scikit-learn's random order visits first (the same as
    DecisionTreeRegressor's, for the same random_state). The threads must keep that winner:
    reducing in feature order, or with >=, picks another copy for some seeds."""
    rng = np.random.default_rng(11)
    n = 400
    x = rng.normal(size=n)
    X = np.column_stack([x, rng.normal(size=n), x, x, rng.integers(0, 3, n)])
    y = x + 0.1 * rng.normal(size=n)
    roots = []
    for seed in range(12):
        trees = _larger_trees("exact", X, y, None, random_state=seed, depth=4)
        for other in trees[1:]:
            _assert_same(other, trees[0])
        ref = DecisionTreeRegressor(max_depth=4, random_state=seed).fit(X.astype(np.float32), y)
        assert trees[1][1][0] == ref.tree_.feature[0]
        roots.append(trees[0][1][0])
    assert len(set(roots)) >= 2  # the tie is decided by the visiting order, not by index


def _four_blocks(m, repeat_first):
    """One coarse feature (over 256 distinct values) whose targets are +1, -1, +1, -1 in four
    blocks of m rows along it: the cuts after the first and after the third block give the same
    two terms of the proxy in the other order, so the same float (an exact tie inside one
    feature). The first block's values are repeated ``repeat_first`` times each, which moves the
    coarse bins' edges."""
    first = np.repeat(np.arange(m // repeat_first), repeat_first)
    x = np.concatenate([first, np.arange(m // repeat_first, m // repeat_first + 3 * m)])
    y = np.repeat([1.0, -1.0, 1.0, -1.0], m)
    return x.astype(float)[:, None], y


@pytest.mark.parametrize(
    "m,repeat_first,first_on_an_edge",
    [(85, 1, False), (256, 4, True)],
    ids=["first-cut-inside-a-bin", "first-cut-on-an-edge"],
)
def test_exact_ties_inside_a_coarse_feature_keep_the_first_cut(m, repeat_first, first_on_an_edge):
    """Of two tied cuts in one coarse feature, the serial scan keeps the first in value order,
    whether it lies inside a coarse bin (found by the bins' inner scans, after the between-bin
    candidate: the settling's tie rule j < j_best) or on a bin edge (an inner candidate of a
    later bin, equal, must not replace it). The threads must keep it too."""
    X, y = _four_blocks(m, repeat_first)
    codes, _ = code_features(X.astype(np.float32))
    edges = codes.sorted_values[0, codes.bin_start[0, 1 : codes.n_bins[0]] - 1]
    first, third = X[m - 1, 0], X[3 * m - 1, 0]
    assert (first in edges) == first_on_an_edge and (third in edges) != first_on_an_edge
    grown = _larger_trees("exact", X, y, None, random_state=0, depth=1)
    assert grown[0][2][0] == (first + X[m, 0]) / 2  # the first cut (the serial winner)
    for other in grown[1:]:
        _assert_same(other, grown[0])


@pytest.mark.parametrize("engine", ENGINES)
def test_fits_in_several_python_threads_at_once(engine):
    """The launcher runs fits in threads: the thread-safe layer takes them side by side."""
    X, y, _ = _data(7)
    ref = _numbers(_fit("lad", "prox", 4, 1, X, y, None, engine=engine), X)
    with ThreadPoolExecutor(3) as pool:
        runs = list(
            pool.map(lambda _: _fit("lad", "prox", 4, 2, X, y, None, engine=engine), range(3))
        )
    for est in runs:
        _assert_same(_numbers(est, X), ref)
    assert numba.threading_layer() in _threads.SAFE_LAYERS


@pytest.mark.parametrize("engine", ENGINES)
def test_the_thread_count_is_restored_after_a_fit(engine):
    X, y, _ = _data(8)
    before = numba.get_num_threads()
    _fit("ls", "gradient", 3, 2, X, y, None, engine=engine)
    assert numba.get_num_threads() == before


@pytest.mark.parametrize("engine", ENGINES)
def test_without_a_thread_safe_layer_one_thread_and_one_warning(monkeypatch, engine):
    X, y, w = _data(9)
    ref = _numbers(_fit("lad", "prox", 3, 1, X, y, w, engine=engine), X)
    monkeypatch.setattr(_threads, "threading_layer", lambda: None)
    monkeypatch.setattr(_threads, "_warned", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = _fit("lad", "prox", 3, 2, X, y, w, engine=engine)
        _fit("lad", "prox", 3, -1, X, y, w, engine=engine)
    ours = [c for c in caught if "thread-safe threading layer" in str(c.message)]
    assert len(ours) == 1
    assert "\n" not in str(ours[0].message)
    _assert_same(_numbers(est, X), ref)


@pytest.mark.parametrize("bad", [0, 1.5, "2", True])
def test_n_jobs_is_validated(bad):
    X, y, _ = _data(0, n=50)
    with pytest.raises(ValueError, match=r"^n_jobs=.* is not allowed; allowed values: None, -1"):
        BoostingRegressor(n_jobs=bad, n_estimators=2, engine="hist").fit(X, y)


@pytest.mark.parametrize("n_jobs", [None, 1, 2, -1, -2, -100])
def test_n_jobs_follows_scikit_learn(n_jobs):
    X, y, _ = _data(0, n=50)
    BoostingRegressor(n_jobs=n_jobs, n_estimators=2, engine="hist").fit(X, y)


def test_resolve_n_jobs(monkeypatch):
    monkeypatch.setattr(_threads.os, "cpu_count", lambda: 8)
    assert [_threads.resolve_n_jobs(k) for k in (None, 1, 3, -1, -2, -8, -20)] == [
        1,
        1,
        3,
        8,
        7,
        1,
        1,
    ]
    with pytest.raises(ValueError, match="n_jobs=0"):
        _threads.resolve_n_jobs(0)
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 2)
    assert _threads.requested_threads(-1) == 2


def test_clone_get_params_and_pickle_keep_n_jobs():
    X, y, _ = _data(1)
    for cls in (BoostingRegressor, BoostingClassifier):
        est = cls(n_jobs=2, engine="hist", n_estimators=3)
        assert est.get_params()["n_jobs"] == 2
        assert clone(est).get_params()["n_jobs"] == 2
        assert cls().get_params()["n_jobs"] is None
    est = BoostingRegressor(n_jobs=2, engine="hist", n_estimators=3, loss="lad").fit(X, y)
    back = pickle.loads(pickle.dumps(est))
    assert back.n_jobs == 2 and back.engine_.n_jobs == 2
    assert np.array_equal(back.predict(X), est.predict(X))


@pytest.mark.parametrize("engine", ["exact", "sklearn"])
def test_other_engines_accept_n_jobs_with_the_same_numbers(engine):
    X, y, _ = _data(2, n=120)
    X = np.nan_to_num(X)
    fits = [
        BoostingRegressor(loss="lad", engine=engine, n_jobs=k, n_estimators=3, random_state=0)
        .fit(X, y)
        .predict(X)
        for k in (1, 2)
    ]
    assert np.array_equal(fits[0], fits[1])


def _spy_runs(monkeypatch):
    """Wrap the compiled loop's entries (one thread and threads) to record each call's entry
    and numba's thread count during it."""
    calls = []

    def spy(name, run):
        def call(*args):
            calls.append((name, numba.get_num_threads()))
            return run(*args)

        return call

    for runs, kind in ((_compiled_loop.RUNS, "serial"), (_compiled_loop.RUNS_PAR, "par")):
        for engine, run in list(runs.items()):
            monkeypatch.setitem(runs, engine, spy(f"{engine}/{kind}", run))
    monkeypatch.setattr(_compiled_loop, "FORCE_PYTHON", False)
    return calls


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.grid
def test_the_compiled_loop_is_taken_with_threads(monkeypatch, engine):
    """n_jobs > 1 runs the parallel entry of the compiled loop under numba_threads(k); n_jobs
    None or 1 its one-thread entry; without a thread-safe layer the one-thread entry too."""
    X, y, w = _data(4)
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one numba thread: n_jobs > 1 runs on one")
    assert _threads.engine_threads(2) == 2  # a thread-safe layer
    calls = _spy_runs(monkeypatch)
    before = numba.get_num_threads()
    _fit("lad", "prox", 3, 2, X, y, w, engine=engine)
    _fit("lad", "prox", 3, 4, X, y, w, engine=engine)  # clamped to NUMBA_NUM_THREADS
    _fit("lad", "prox", 3, None, X, y, w, engine=engine)
    _fit("lad", "prox", 3, 1, X, y, w, engine=engine)
    assert numba.get_num_threads() == before
    threads = min(4, numba.config.NUMBA_NUM_THREADS)
    assert calls == [
        (f"{engine}/par", 2),
        (f"{engine}/par", threads),
        (f"{engine}/serial", before),
        (f"{engine}/serial", before),
    ]
    monkeypatch.setattr(_threads, "threading_layer", lambda: None)
    monkeypatch.setattr(_threads, "_warned", True)  # the warning has its own test
    calls.clear()
    _fit("lad", "prox", 3, 2, X, y, w, engine=engine)
    assert calls == [(f"{engine}/serial", before)]


def _curves_and_numbers(est, X_eval):
    """``_numbers`` plus the eval and validation curves, the iterations and the raw
    predictions of the eval rows."""
    curves = [np.asarray(est.eval_loss_), np.asarray(est.validation_loss_), est.n_iter_]
    return _numbers(est, X_eval) + curves + [est._raw_predict(X_eval), est.train_prediction_]


THREAD_LOOP_CASES = [
    (loss, algo, engine, algo in ("prox", "residual_gradient"))
    for loss in ("ls", "lad", "pinball", "hinge")
    for algo in ("gradient", "prox", "residual_gradient", "accelerated_prox")
    for engine in ENGINES
]


@pytest.mark.grid
@pytest.mark.parametrize("loss,algo,engine,weighted", THREAD_LOOP_CASES)
def test_the_compiled_loop_on_threads_gives_the_one_thread_and_python_numbers(
    monkeypatch, loss, algo, engine, weighted
):
    """Compiled loop with n_jobs 1, 2 and 4 and the Python loop: the same trees, leaf values,
    curves (training, eval, validation; early stopping) and predictions, ``np.array_equal``.
    300 rows (weights with zeros: the idle rows' replay), so that the sums of the losses are
    cut in halves (more than 128 rows), 150 eval rows."""
    X, y, w = _data(20 + len(loss), n=450, classification=loss == "hinge", extra=True)
    w = w[:300] if weighted else None
    X, y, X_eval, y_eval = X[:300], y[:300], X[300:], y[300:]
    kw = {"tau": 0.7} if loss == "pinball" else {}
    kw.update(engine=engine, random_state=5, n_iter_no_change=3, validation_fraction=0.3, tol=0.0)

    def fit(n_jobs):
        cls = BoostingClassifier if loss == "hinge" else BoostingRegressor
        est = cls(loss=loss, algo=algo, max_depth=3, n_estimators=20, n_jobs=n_jobs, **kw)
        return est.fit(X, y, sample_weight=w, eval_set=(X_eval, y_eval))

    calls = _spy_runs(monkeypatch)
    fits = {n_jobs: _curves_and_numbers(fit(n_jobs), X_eval) for n_jobs in N_JOBS}
    assert [name for name, _ in calls] == [f"{engine}/serial"] + 2 * [f"{engine}/par"]
    monkeypatch.setattr(_compiled_loop, "FORCE_PYTHON", True)
    python = _curves_and_numbers(fit(1), X_eval)
    assert len(calls) == 3  # the Python loop
    assert fits[1][1].max() > 1  # the trees split
    for n_jobs in N_JOBS:
        _assert_same(fits[n_jobs], python)


# A process's one-thread fits on both engines (argv: the tests' folder, for compile_kernels.py),
# then what they compiled, per engine (compile_kernels.compiled_report).
_KERNELS_COMPILED = """
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import compile_kernels
from proxboost import BoostingRegressor
X = np.random.default_rng(0).normal(size=(300, 3))
report = {}
for engine in ("exact", "hist"):
    BoostingRegressor(engine=engine, n_estimators=2).fit(X, X[:, 0], eval_set=(X, X[:, 0]))
    report[engine] = compile_kernels.compiled_report(engine)
print(json.dumps(report))
"""


def _compiled_by_one_thread_fits(**env):
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run(
        [sys.executable, "-c", _KERNELS_COMPILED, here],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # compiles both engines and the loop from scratch, unless compile_kernels did
@pytest.mark.timeout(1800)  # minutes of compiling when the machine is shared
def test_one_thread_neither_calls_nor_compiles_the_parallel_kernels(tmp_path):
    """One-thread fits (the default n_jobs; the compiled loop) compile the serial kernels only:
    no kernel of the package that is parallel (numba's ``parallel=True``) or named for threads
    (``*_par``: the loop's parallel entries and their helpers) has a signature after them, while
    the serial witnesses, kernels compiled only as callees of the loop, have one (so a parallel
    callee would show). The parallel kernels are found in the package, not listed here: a new
    one is covered without editing this test. That two threads do call them is the tests above
    (``_spy_runs``).

    Only a cold cache shows what the loop calls (a cached caller hides its callees). The record
    of ``tests/compile_kernels.py``, which compiled these kernel sources from scratch in one
    process per engine, every option on one thread before two, is read when it exists;
    otherwise a fresh process with an empty cache fits both engines, and its record is kept in
    its place. Which kernels a fit compiles is decided by numba's typing, before LLVM optimises
    anything: that process compiles without LLVM's optimisations (``NUMBA_OPT=0``; numba then
    declines to cache the kernels, which it does not need). A call of a parallel kernel from
    Python, which the kernel sources do not decide, is seen by a process on the warm cache
    (a cached kernel it loads has a signature too)."""
    reports = {engine: compile_kernels.stored_report(engine) for engine in ENGINES}
    if None in reports.values():
        reports = _compiled_by_one_thread_fits(NUMBA_CACHE_DIR=str(tmp_path), NUMBA_OPT="0")
        for engine, report in reports.items():
            compile_kernels.store_report(engine, report)
    for engine, report in reports.items():
        # the parallel kernels of both engines, of the loop and of the row passes are found
        found = report["parallel_kernels"]
        for part in ("engines._exact.", "engines._hist.", "_compiled_loop.", "_row_passes."):
            assert any(part in name for name in found), (part, found)
        assert report["serial"] >= 1, (engine, report)
        assert report["parallel compiled"] == [], (engine, report)
    warm = _compiled_by_one_thread_fits()
    for engine, report in warm.items():
        assert report["parallel compiled"] == [], (engine, report)


_THREE_THREADS = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])  # this file's folder
from test_threads import _data, _fit, _numbers
X, y, w = _data(3, p=5, extra=True)
for engine in ("exact", "hist"):
    for weights in (None, w):
        one, three = (_numbers(_fit("lad", "prox", 4, k, X, y, weights, engine=engine), X)
                      for k in (1, 3))
        assert len(one) == len(three)
        assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(one, three)), engine
print("ok")
"""


@pytest.mark.slow  # a subprocess with three numba threads
def test_three_threads_grow_the_one_thread_trees():
    """With 3 threads (more than this machine's cores: the runs above are clamped to them) the
    8 features are shared unevenly between the threads: still the one-thread numbers."""
    here = os.path.dirname(os.path.abspath(__file__))
    env = {**os.environ, "NUMBA_NUM_THREADS": "3"}
    out = subprocess.run(
        [sys.executable, "-c", _THREE_THREADS, here], env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("ok")
