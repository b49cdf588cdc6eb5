"""The histogram engine: quantile-binned features, depth-wise least-squares trees (numba).

``prepare(X, fit=True)`` bins every feature once per fit into at most ``max_bins`` (255) bins:

* a feature with at most ``max_bins`` distinct values gets one bin per distinct value, with the
  edges at the midpoints between consecutive distinct values (``a/2 + b/2``; ``a`` when that
  rounds to ``b``, as scikit-learn's thresholds). On such features the candidate splits are
  exactly scikit-learn's (between consecutive distinct values of the node);
* otherwise a value repeated at least ``n / max_bins`` times ("heavy") gets a bin of its own,
  and the other edges are quantiles of the training column: with h heavy values, edge k
  lies between the distinct values where the cumulative count crosses
  ``k * n / (max_bins - 2 h)`` (duplicates dropped); at most ``max_bins - 1`` edges in all.

A row goes to bin ``b`` of a feature when ``edges[b - 1] < x <= edges[b]`` (scikit-learn's
"``x <= threshold`` goes left"); ``prepare(X)`` (``fit=False``) bins new rows with the training
edges. Missing values (NaN) are left out of the edges and get the code after the value bins
(``missing_bin_``, at most 255); a feature with NaN in the training rows has that bin in its
histogram (``nan_bin_``). Bins are ``uint8``, C-ordered ``(n, p)`` (the histogram builder reads
a row's bins contiguously).

``grow`` fits one least-squares tree on the target, as ``DecisionTreeRegressor(
criterion="squared_error", max_depth=D)`` with ``min_samples_split=2, min_samples_leaf=1``:

* a node is a leaf when its depth is ``D``, it has fewer than 2 rows, its impurity
  ``sum(y^2)/m - (sum(y)/m)^2`` is ``<= eps`` (float64 machine epsilon, scikit-learn's
  ``EPSILON``), or every feature is constant on it;
* otherwise it is split at the candidate maximising scikit-learn's proxy
  ``S_L^2 / m_L + S_R^2 / m_R`` (the weighted variance reduction up to constants). As in
  scikit-learn, the best candidate is taken even when its gain is zero;
* histograms hold, per (feature, bin), the target sum and the row count (one flat float64
  array, the values side by side; features at offsets, so that a binary feature costs 2
  bins, not 256). The root's histogram is built from all rows (its counts are cached per
  prepared array: the same for every tree of a fit); afterwards only the smaller child of a
  split is built from its rows, and the larger child's histogram is the parent's minus the
  smaller's (histogram subtraction, in the parent's buffer). A split scan lists the non-empty
  bins of each feature (branch-free) and evaluates the candidates between consecutive ones,
  within the parent's non-empty range;
* nodes of at most ``SMALL_NODE`` (32) rows are split by sorting their rows' bins per feature
  instead (same candidates, same proxy): cheaper than 255-bin histograms for deep trees;
* at the last level (depth D - 1) the rows of a split node are labelled with their two leaves
  directly, without partitioning.

**Monotone constraints** (``grow(..., monotonic_cst=...)``): ``DecisionTreeRegressor``'s rule,
as the exact engine (``_nodes.monotone_admissible``, ``monotone_child_bounds``; not
HistGradientBoosting's, which scores splits with values clipped to the bounds); the missing
values count in the child they go to, as in both of scikit-learn's.

**Missing values** go where HistGradientBoosting sends them: the scan over a node's bins has
the missing bin last (missing rows right; the last candidate sends them alone right, threshold
+inf), and where the node has missing rows a second pass puts them left (a candidate of it wins
only with a strictly better proxy; among equal ones the lowest bin, where HistGradientBoosting's
right-to-left scan keeps the highest). Where the node has none in the split feature, a missing
value goes right when the feature has NaN in the training rows, else to the child with more
rows (ties right). Each tree stores ``missing_go_to_left`` per node.

**Tie-breaking** differs from scikit-learn, which visits features in a random order (its
``random_state``) and keeps the first best: here features are scanned in index order, bins in
increasing order, and the first strictly best candidate is kept (lowest feature, then lowest
threshold). Sums are accumulated per bin, so candidates whose gains agree to rounding may be
ordered differently than by scikit-learn's running sums. ``random_state`` is accepted and
ignored: growth is deterministic. scikit-learn also treats two float32 feature values within
1e-7 of each other as equal (``FEATURE_THRESHOLD``); here distinct float64 values are distinct.

**Thresholds on new rows.** The training partition only fixes the threshold between the
largest left value ``a`` and the smallest right value ``b`` of the node. scikit-learn puts it
at ``(a + b) / 2``; here the split keeps the bin edge (between the bins of ``a`` and ``b``)
nearest to the midpoint of the two bins' representative values (the value itself for a
distinct-value bin, the midpoint of the training range of the bin otherwise).

**Weights and gains.** ``grow(..., sample_weight=w)`` grows on the rows of positive weight
and places the rows of weight 0 with the grown tree. Its histograms hold three values per bin:
the sum of weight x target, the weight and the row count; the row count says which bins are
empty (histogram subtraction applies as without weights, and its rounding can leave a tiny
weight in an empty bin). The root's weights and counts are cached per prepared array and
weight array, like the unweighted root counts. ``prepare(X, fit=True, sample_weight=w)``
learns the edges from the positive-weight rows (quantiles of weighted counts), from the same
sort of each column as the unweighted binning. Each tree reports ``split_feature`` and
``split_gain`` per internal node (the weighted
impurity decrease over the root's weight; see ``docs/engines.md``).

Trees grow depth-first with an explicit stack (no leaf limit, so the tree equals the
depth-wise one); leaves are numbered left to right, ``0 .. n_leaves - 1``. Histogram memory is
``O(min(D, n / 33) * total_bins)``, row buffers ``O(n)``; no O(n^2) or O(n * 256 * p) array.
Everything is compiled with ``numba.njit(cache=True)``, single-threaded by default.

**Threads** (``n_jobs``, an attribute the estimators set from theirs; None: one thread): with
more than one thread, the histograms are built and the splits found in parallel over features
(``numba.prange``; the nodes of at most ``SMALL_NODE`` rows and the partitions stay serial).
Every sum keeps its serial order and the best split is reduced in feature order with the
serial tie rule, so any thread count grows the one-thread trees bit for bit. The threads run on
numba's ``omp`` or ``tbb`` layer only (``_threads``: ``workqueue`` aborts when fits run in
several Python threads at once), else on one thread with a warning; the parallel kernels are
compiled at their first use with ``n_jobs`` > 1 only.

An engine instance keeps per-fit scratch (workspace arrays, the root counts of the last
prepared array and weight array, found by identity through weak references): neither may be
modified in place between ``grow`` calls, and one instance must not grow two trees at once
from two threads. Neither is pickled.
"""

import weakref
from collections import namedtuple

import numpy as np
from numba import njit

from proxboost.engines._hist.binning import fit_feature
from proxboost.engines._hist.grower import grow_in_scratch, grow_tree
from proxboost.engines._hist.histogram import root_stats
from proxboost.engines._hist.predictor import (
    add_trees,
    add_trees_par,
    apply_tree,
    apply_tree_par,
    fill_steps,
    label_rows,
    stage_trees,
    steps_work,
)
from proxboost.engines._hist.records import Binned, new_scratch
from proxboost.engines._nodes import (
    EPSILON,
    SMALL_NODE,
    check_monotonic_cst,
    check_weight,
    kernel,
    loop_nodes,
)
from proxboost.engines._packed import PackedNodes
from proxboost.engines._threads import engine_threads, numba_threads

MAX_BINS = 255


class HistTree(PackedNodes):
    """A fitted histogram tree: binned rows -> compact leaf ids (picklable, compiled apply).

    Node arrays (root 0, ``left == -1`` at leaves): ``feature``, ``threshold_bin`` (rows with
    ``bin <= threshold_bin`` go left), ``left``, ``right``, ``leaf_of_node``,
    ``missing_go_to_left`` (uint8: 1 where a missing value goes left); ``threshold`` holds the
    matching float edges on the original feature scale (``x <= threshold`` goes left; +inf where
    only the missing values go right). ``missing_bin``: per feature, the bin of a missing value
    (shared with the engine). Per internal node: ``split_feature`` and ``split_gain`` (weighted
    impurity decrease over the root's weight, see ``docs/engines.md``). The trees of a compiled
    loop share one copy of their arrays (:mod:`~proxboost.engines._packed`).
    """

    __slots__ = ("missing_bin",)
    FIELDS = {
        "feature": "split feature per node (-1 at leaves)",
        "threshold_bin": "split bin per node (``bin <= threshold_bin`` goes left)",
        "left": "left child per node (-1 at leaves)",
        "right": "right child per node (-1 at leaves)",
        "leaf_of_node": "compact leaf id per node (-1 at internal nodes)",
        "missing_go_to_left": "1 where a missing value goes left",
        "threshold": "split threshold per node on the feature's scale",
        "gain": "split gain per node (0 at leaves)",
    }

    def __init__(self, nodes, n_leaves, threshold, gain):
        feature, threshold_bin, left, right, leaf_of_node, missing, missing_bin = nodes
        arrays = (feature, threshold_bin, left, right, leaf_of_node, missing, threshold, gain)
        self._own(arrays, n_leaves)
        self.missing_bin = missing_bin

    def apply(self, Xp):
        Xp = _as_bins(Xp)
        feature, threshold_bin, left, right, leaf_of_node, missing, _, _ = self._fields()
        nodes = (feature, threshold_bin, left, right, leaf_of_node)
        return apply_tree(Xp, nodes, missing, self.missing_bin)

    def _shares_arrays(self, other):
        return super()._shares_arrays(other) and self.missing_bin is other.missing_bin

    def _add_group(self, Xp, spans, values, weights, F, threads):
        """``PackedNodes.add_trees`` for the trees sharing this tree's arrays."""
        add = add_trees if threads == 1 else add_trees_par
        add(_as_bins(Xp), self._arrays, self.missing_bin, spans, values, weights, F)

    def _stage_group(self, Xp, spans, values, alphas, FH, out):
        """``PackedNodes.stage_trees`` for the trees sharing this tree's arrays."""
        stage_trees(_as_bins(Xp), self._arrays, self.missing_bin, spans, values, alphas, FH, out)


def _as_bins(Xp):
    if not (isinstance(Xp, np.ndarray) and Xp.dtype == np.uint8 and Xp.ndim == 2):
        raise TypeError(
            "the hist engine works on binned rows (uint8, 2-d): pass X through engine.prepare first"
        )
    return Xp if Xp.flags.c_contiguous else np.ascontiguousarray(Xp)


class HistEngine:
    """Histogram tree engine (``engine="hist"``): see the module docstring.

    Parameters
    ----------
    max_bins : int in [2, 255], default=255
        Maximum number of bins per feature.
    n_jobs : int or None, default=None
        Threads of the histogram and split kernels (scikit-learn's rule: None one, -1 all
        cores); any value grows the same trees (see the module docstring).
    """

    name = "hist"
    n_jobs = None  # one thread for an engine pickled before n_jobs existed

    def __init__(self, max_bins=MAX_BINS, n_jobs=None):
        if not (isinstance(max_bins, (int, np.integer)) and 2 <= max_bins <= 255):
            raise ValueError(
                f"max_bins={max_bins!r} is out of range; allowed values: an integer in [2, 255]"
            )
        self.max_bins = int(max_bins)
        self.n_jobs = n_jobs
        self.edges_ = None
        self._reset_cache()

    def _reset_cache(self):
        # per-fit scratch, rebuilt on demand and never pickled: the prepared training bins and
        # the weights of the last grow (weak references), the rows of positive weight and of
        # weight 0, the root's weights and counts per bin, and the grower's workspace arrays
        self._bins_ref = None
        self._weight_ref = None
        self._rows = None
        self._work = None

    def __getstate__(self):
        state = self.__dict__.copy()
        for key in ("_bins_ref", "_weight_ref", "_rows", "_work"):
            state[key] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._reset_cache()

    # -- binning ---------------------------------------------------------------------------------
    def prepare(self, X, fit=False, sample_weight=None):
        """Bin X (uint8, C order). ``fit=True`` learns the edges from X first.

        With ``sample_weight`` (fit only), the edges are learned from the rows of positive weight
        and the quantiles on weighted counts; every row is then binned with these edges.
        """
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-dimensional, got shape {X.shape}")
        if np.isinf(X).any():
            raise ValueError(
                "X contains infinity: the hist engine bins finite values and NaN (missing) only; "
                "replace the infinite values"
            )
        n, p = X.shape
        out = np.empty((n, p), dtype=np.uint8)
        if fit:
            self._reset_cache()
            w = None if sample_weight is None else check_weight(sample_weight, n)
            edges, reps, has_nan = [], [], np.zeros(p, bool)
            for j in range(p):
                e, codes, rep, has_nan[j] = fit_feature(X[:, j], self.max_bins, w)
                edges.append(e)
                reps.append(rep)
                out[:, j] = codes
            self.edges_ = edges
            # bins: the values' (at most max_bins), then the missing values' where X has NaN
            n_values = np.array([len(e) + 1 for e in edges], dtype=np.int32)
            self.missing_bin_ = n_values
            self.nan_bin_ = np.where(has_nan, n_values, -1).astype(np.int32)
            n_bins = n_values + has_nan
            self.n_bins_ = n_bins
            self.offsets_ = np.concatenate(([0], np.cumsum(n_bins))).astype(np.int64)
            width = max(int(n_bins.max(initial=1)), 2)
            self._edges2d = np.full((p, width), np.inf)
            self._rep2d = np.full((p, width), np.inf)
            for j in range(p):
                self._edges2d[j, : len(edges[j])] = edges[j]
                self._rep2d[j, : len(reps[j])] = reps[j]
            return out
        if self.edges_ is None:
            raise ValueError(
                "HistEngine.prepare(X) needs the bin edges: call prepare(X_train, fit=True) first"
            )
        if p != len(self.edges_):
            raise ValueError(
                f"X has {p} features, the bin edges were learned on {len(self.edges_)}"
            )
        for j in range(p):
            out[:, j] = np.searchsorted(self.edges_[j], X[:, j], side="left")
            missing = np.isnan(X[:, j])
            if missing.any():
                out[missing, j] = self.missing_bin_[j]
        return out

    # -- trees -----------------------------------------------------------------------------------
    def grow(
        self, Xp, target, max_depth, random_state=None, sample_weight=None, monotonic_cst=None
    ):
        """Grow one least-squares tree on ``target``; ``random_state`` is ignored (deterministic).
        ``monotonic_cst``: -1, 0, 1 per feature (None: none), scikit-learn's tree rule.

        ``sample_weight``: optional non-negative row weights; rows of weight 0 take no part in
        the split search and get their leaf ids from the grown tree.
        """
        if self.edges_ is None:
            raise ValueError("HistEngine.grow needs prepared data: call prepare(X, fit=True) first")
        Xp = _as_bins(Xp)
        if Xp.shape[1] != len(self.edges_):
            raise ValueError(
                f"Xp has {Xp.shape[1]} features, the bin edges were learned on {len(self.edges_)}"
            )
        target = np.ascontiguousarray(target, dtype=np.float64)
        n = Xp.shape[0]
        if target.shape != (n,):
            raise ValueError(f"target has shape {target.shape}, expected ({n},)")
        max_nodes, stack_depth = _tree_size(n, max_depth)
        w, active, idle, stats = self._rows_and_root_stats(Xp, sample_weight)
        n_act = len(active)
        k = engine_threads(self.n_jobs)
        scratch = self._scratch(Xp, max_depth, len(stats), k)
        scratch.rows[:n_act] = active
        kernel_args = (
            self._binned(Xp),
            target,
            w,
            scratch,
            n_act,
            stack_depth,
            max_nodes,
            EPSILON,
            SMALL_NODE,
            stats,
            check_monotonic_cst(monotonic_cst, Xp.shape[1]),
        )
        if k > 1:
            with numba_threads(k):
                grown = grow_tree(*kernel_args, k)
        else:  # None: the serial kernels (the parallel ones are not even compiled)
            grown = grow_tree(*kernel_args, None)
        feature, thr, left, right, leaf_of_node, gain, missing, leaf_ids, n_leaves = grown
        internal = left >= 0
        threshold = np.full(len(left), np.nan)
        threshold[internal] = self._edges2d[feature[internal], thr[internal]]
        tree = HistTree(
            (feature, thr, left, right, leaf_of_node, missing, self.missing_bin_),
            n_leaves,
            threshold,
            gain,
        )
        if len(idle):
            nodes = (feature, thr, left, right, leaf_of_node)
            label_rows(Xp, idle, nodes, missing, self.missing_bin_, leaf_ids)
        return leaf_ids, tree

    def _binned(self, Xp):
        return Binned(Xp, self.offsets_, self.n_bins_, self._edges2d, self._rep2d, self.nan_bin_)

    def _scratch(self, Xp, max_depth, stats_size, k):
        """The per-fit scratch of the trees of ``max_depth`` on the binned rows ``Xp``, grown on
        k threads (kept between trees of one shape: ``records.Scratch``)."""
        n, p = Xp.shape
        max_nodes, stack_depth = _tree_size(n, max_depth)
        # histogram buffers in use at once: the node being split, one scratch, and the pending
        # histogram nodes on the stack (one per depth at most, each > SMALL_NODE disjoint rows)
        n_buf = min(stack_depth, n // (SMALL_NODE + 1)) + 3
        shape = (n, p, n_buf, stats_size, max_nodes, stack_depth, k)
        if self._work is None or self._work[0] != shape:
            sizes = (n_buf, stats_size, max_nodes, stack_depth, SMALL_NODE, k)
            scratch = new_scratch(n, p, *sizes)
            self._work = (shape, scratch)
        return self._work[1]

    def compiled(self, Xp, max_depth, sample_weight=None, threads=1):
        """What the compiled boosting loop (:mod:`proxboost._compiled_loop`) needs to grow this
        engine's trees without Python: ``(grow kernel, apply kernel, record, max_nodes)``.
        ``sample_weight``: positive weights or None (rows of weight 0 are not supported).
        ``threads``: the loop's thread count (``engine_threads``); above 1 the record asks for
        the parallel kernels and the apply kernel is the parallel one, to be called under
        ``numba_threads(threads)``."""
        Xp = _as_bins(Xp)
        n, p = Xp.shape
        max_nodes, stack_depth = _tree_size(n, max_depth)
        w, active, idle, stats = self._rows_and_root_stats(Xp, sample_weight)
        if len(idle):
            raise ValueError("the compiled loop takes positive weights only")
        record = HistLoop(
            self._binned(Xp),
            self._scratch(Xp, max_depth, len(stats), threads),
            w,
            active,
            stack_depth,
            max_nodes,
            stats,
            np.zeros(p, np.int8),
            self.missing_bin_,
            int(threads) if threads > 1 else None,
        )
        apply = apply_in_loop if threads <= 1 else apply_in_loop_par
        return grow_in_loop, apply, record, max_nodes

    def packed(self, nodes):
        """(tree class, node arrays, attributes of every tree) of the trees a compiled loop
        grew into ``nodes`` (``grow_in_loop``'s order: feature, threshold, threshold bin,
        left, right, leaf_of_node, gain, missing): a ``_forest.Block``'s parts."""
        feature, threshold, thr, left, right, leaf_of_node, gain, missing = nodes
        arrays = (feature, thr, left, right, leaf_of_node, missing, threshold, gain)
        return HistTree, arrays, {"missing_bin": self.missing_bin_}

    def _rows_and_root_stats(self, Xp, sample_weight):
        """(weights or None, rows of positive weight, rows of weight 0, root weights and counts).

        Computed once per prepared array and weight array (found by identity: neither may be
        modified in place between ``grow`` calls), the same for every tree of a fit.
        """
        hit = (
            self._rows is not None
            and self._bins_ref() is Xp
            and (
                self._rows[0] is None
                if sample_weight is None
                else self._weight_ref is not None and self._weight_ref() is sample_weight
            )
        )
        if hit:
            return self._rows
        n = Xp.shape[0]
        if sample_weight is None:
            active = np.arange(n, dtype=np.int32)
            self._rows = (None, active, active[:0], root_stats(Xp, self.offsets_, None, active, n))
        else:
            w = check_weight(sample_weight, n)
            positive = w > 0
            active = np.flatnonzero(positive).astype(np.int32)
            idle = np.flatnonzero(~positive).astype(np.int32)
            self._rows = (w, active, idle, root_stats(Xp, self.offsets_, w, active, len(active)))
        self._bins_ref = weakref.ref(Xp)
        self._weight_ref = (
            weakref.ref(sample_weight) if isinstance(sample_weight, np.ndarray) else None
        )
        return self._rows


def _tree_size(n, max_depth):
    """(node capacity, stack depth) of a tree of ``max_depth`` on n rows."""
    max_depth = int(max_depth)
    return max(min(2 ** (max_depth + 1) - 1, 2 * n - 1), 1), min(max_depth, max(n, 1))


#: The compiled loop's record of this engine (see ``HistEngine.compiled``).
HistLoop = namedtuple(
    "HistLoop",
    [
        "binned",  # Binned: the training rows' bins and the learned edges
        "scratch",  # Scratch of the trees
        "w",  # (n,) positive weights, or None (unit weights)
        "active",  # (n,) int32: the rows taking part (all)
        "depth",  # the stack depth
        "max_nodes",  # node capacity of a tree
        "stats",  # the root's weights and counts per bin
        "monotonic",  # (p,) int8 zeros: no constraint
        "missing_bin",  # (p,) the bin of each feature's missing values
        "par",  # the thread count of the parallel kernels, or None (one thread: the serial ones)
    ],
)


# reference counting even under the loop
@njit(error_model="numpy", cache=True, nogil=True, _nrt=True)
def grow_in_loop(engine, target, seed):
    """``HistEngine.grow`` inside the compiled loop (``seed`` unused: the engine is
    deterministic): the tree is left in the engine's scratch, whose arrays ``tree_in_loop``
    gives once per fit, valid until the next tree (the loop stores it before growing the next
    one), with each split node's threshold value. Returns (the number of nodes, the number of
    leaves). On the parallel kernels when ``engine.par`` is a thread count (the loop runs under
    ``numba_threads``), on the serial ones, not even compiled otherwise, when None."""
    scratch = engine.scratch
    n_act = engine.active.shape[0]
    scratch.rows[:n_act] = engine.active
    tree, m, n_leaves = grow_in_scratch(
        engine.binned,
        target,
        engine.w,
        scratch,
        n_act,
        engine.depth,
        engine.max_nodes,
        EPSILON,
        SMALL_NODE,
        engine.stats,
        engine.monotonic,
        engine.par,  # its type picks the kernels when numba compiles (None: the serial ones)
    )
    feature, thr, left = tree.feature, tree.threshold, tree.left
    threshold = scratch.threshold
    for k in range(m):
        threshold[k] = engine.binned.edges[feature[k], thr[k]] if left[k] >= 0 else np.nan
    return m, n_leaves


@njit(error_model="numpy", cache=True, nogil=True)
def tree_in_loop(engine):
    """The arrays ``grow_in_loop`` grows each tree into, at the node capacity: (node arrays
    (feature, threshold, threshold bin, left, right, leaf_of_node, gain, missing), every row's
    leaf id). A tree of m nodes holds their first m entries (nodes reached from the root 0
    only, so ``apply_in_loop`` reads them whole)."""
    tree = engine.scratch.tree
    return loop_nodes(tree, engine.scratch.threshold, tree.threshold)


@njit(error_model="numpy", cache=True, nogil=True)
def leaf_sums_in_loop(engine):
    """Where ``grow_in_loop`` leaves each leaf's weight and w g sum (rows: leaves), each added
    in row order as ``np.bincount`` adds them: the compiled loop's least-squares leaf values
    read them instead of a pass over the rows (as ``exact.leaf_sums_in_loop``), on any thread
    count (on threads each last-level split's rows are labelled and added up by one thread:
    ``grower.label_pending``)."""
    return engine.scratch.leaf_sums


@njit(error_model="numpy", cache=True, nogil=True)
def steps_work_in_loop(nodes):
    """The scratch ``steps_in_loop`` fills, at the node capacity of ``tree_in_loop``'s arrays."""
    return steps_work(nodes[3].shape[0])


@kernel
def steps_in_loop(engine, nodes, work):
    """The ``_descent.Steps`` of the tree ``nodes`` (``grow_in_loop``'s) into ``work``
    (``steps_work_in_loop``), for the compiled loop's rows outside the fit. Returns the
    depth."""
    feature, _, thr, left, right, leaf_of_node, _, missing = nodes
    return fill_steps((feature, thr, left, right, leaf_of_node), missing, engine.missing_bin, work)


@njit(error_model="numpy", cache=True, nogil=True)
def apply_in_loop(engine, Xp, nodes):
    """Leaf ids of the binned rows ``Xp`` in the tree ``nodes`` (``grow_in_loop``)."""
    feature, _, thr, left, right, leaf_of_node, _, missing = nodes
    return apply_tree(Xp, (feature, thr, left, right, leaf_of_node), missing, engine.missing_bin)


@njit(error_model="numpy", cache=True, nogil=True)
def apply_in_loop_par(engine, Xp, nodes):
    """``apply_in_loop`` with the rows shared between threads (the same leaf ids)."""
    feature, _, thr, left, right, leaf_of_node, _, missing = nodes
    nodes = (feature, thr, left, right, leaf_of_node)
    return apply_tree_par(Xp, nodes, missing, engine.missing_bin)
