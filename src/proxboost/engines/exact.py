"""The exact engine: scikit-learn's regression trees, grown by a compiled (numba) builder.

``engine="exact"`` grows the trees ``DecisionTreeRegressor(criterion="squared_error",
max_depth=D)`` grows (see ``docs/engines.md``), without scikit-learn's per-node sorts:

* **Data** (``prepare(X, fit=True)``, once per fit): X is cast to float32, as scikit-learn does.
  A feature with at most 256 distinct float32 values gets one uint8 code per distinct value
  (*exact-coded*: one histogram bin per distinct value). Every other feature gets at most 255
  *coarse* bins, cut near its quantiles but only where two consecutive distinct values differ by
  more than ``FEATURE_THRESHOLD`` (so the threshold never merges values of two bins), and keeps
  its rows in sorted order (int32 rows, float32 values, computed once).
* **Nodes** own contiguous segments of a row array (stable partitions); every row carries its
  node's label. A node's histogram holds per bin the sum of ``w g`` and of ``w``, and for the
  coarse features also the sum of the positive parts of ``w g``; the larger child's is the
  parent's minus the smaller child's (unit weights: exact counts; with weights both children
  are built). Histograms are zeroed, built, subtracted and scanned only over each feature's
  range of bins non-empty in the parent. Nodes of at most ``SMALL_NODE`` rows sort their
  values instead. The last level labels rows without partitioning.
* **Candidates** as scikit-learn's ``BestSplitter``: between two consecutive node values
  ``a < b`` with ``b > a + FEATURE_THRESHOLD`` (1e-7, in float32 arithmetic); a feature whose
  node values satisfy ``max <= min + FEATURE_THRESHOLD`` is constant in the node and, as in
  scikit-learn, remembered as constant for the node's descendants. The proxy is
  ``S_L^2 / W_L + S_R^2 / W_R``; the threshold ``a/2 + b/2`` (float64; ``a`` if that equals
  ``b``); rows with ``x <= threshold`` go left. On exact-coded features the candidates are read
  from the histogram. On coarse features, candidates between non-empty bins come from the
  histogram, and those inside a bin are evaluated exactly (the node's rows of that bin, in
  value order, from the bin's sorted segment or the node's rows) unless an upper bound of their
  proxy cannot beat the best so far: the proxy is convex in S_L and in W_L, so its maximum over
  the bin's box ``S_L`` in ``[S + negatives, S + positives]``, ``W_L`` in ``[W + w_min,
  W + W_bin - w_min]`` is at a corner. Skipped candidates could not win (ties go to the first).
* **Ties and seeds**: features are visited in scikit-learn's random order: the same
  Fisher-Yates draws over the same ``features`` / constant-feature bookkeeping, driven by the
  same xorshift generator (``our_rand_r``) seeded with ``random_state.randint(0, 2**31 - 1)``,
  one draw per tree as scikit-learn's splitter. The first strictly best proxy wins.
* **Monotone constraints** (``grow(..., monotonic_cst=...)``) as scikit-learn's: a candidate
  split on a constrained feature that beats the best so far is taken only if its children's
  means lie in the node's value bounds and in the constraint's order; the children of a
  constrained split are bounded at the mean of their means (``_nodes.monotone_admissible``,
  ``monotone_child_bounds``; ``docs/engines.md``).
* **Stopping** as ``DepthFirstTreeBuilder``: a node is a leaf at depth D, with fewer than 2
  rows, when its impurity (``sq_sum / W - (sum / W)^2``; children's from the parent's split
  with the right child's square sum by subtraction, as scikit-learn) is at most float64
  epsilon, when no feature has a candidate, or when the split's improvement is below -epsilon.

* **Missing values** (NaN) as scikit-learn 1.9: a feature's missing values have a bin of their
  own (its last; so a feature with NaN is exact-coded with at most 255 distinct values). Where a
  node has missing values in a feature, its candidates are those between the values with the
  missing rows right, the missing rows alone right (threshold +inf), then those between the
  values with the missing rows left; a feature whose node rows are all missing is constant.
  Each split node stores ``missing_go_to_left``: the search's direction, or, where the node had
  no missing value in the feature, the child with more rows (ties right).

Sums run in this engine's row order, not scikit-learn's, so two candidates whose proxies
agree to rounding may be ordered differently (a genuine tie; ``tests/test_engines_exact.py``
checks every differing split in exact arithmetic).

* **Threads** (``n_jobs``, an attribute the estimators set from theirs; None: one thread): with
  more than one thread, the histograms are built in parallel over features, and the split of a
  node with a histogram is found in two steps: every feature the serial loop visits is scanned
  in parallel from ``-inf`` (its first best candidate, or constant), then scikit-learn's feature
  loop is replayed serially on these results (the same ``our_rand_r`` draws and constant
  bookkeeping), a feature's best taken only when strictly above the best so far. Every sum keeps
  its one-thread order and the split is the serial loop's, ties between features included: any
  thread count grows the one-thread trees bit for bit. The nodes of at most ``SMALL_NODE`` rows
  and the partitions stay serial. The threads run on numba's ``omp`` or ``tbb`` layer only
  (``_threads``), else on one thread with a warning; the parallel kernels are compiled at their
  first use with ``n_jobs`` > 1 only.

Rows of weight 0 take no part in split finding; they get their leaf from the grown tree.
Memory: X as float32 plus one byte per value (codes), plus 8 bytes per value of a coarse
feature (sorted rows and values); per tree O(n) scratch and histograms for at most
``min(D, n / 33) + 3`` nodes: nothing grows with the depth but the tree itself.
An engine instance keeps per-fit scratch (not pickled) and must not grow two trees at once.
"""

from collections import namedtuple

import numpy as np
from numba import njit
from sklearn.utils import check_random_state

from proxboost.engines._exact.binning import code_features
from proxboost.engines._exact.grower import grow, grow_in_place, grow_tree
from proxboost.engines._exact.predictor import (
    add_trees,
    add_trees_par,
    apply_tree,
    apply_tree_par,
    fill_steps,
    stage_trees,
    steps_work,
)
from proxboost.engines._exact.records import FEATURE_THRESHOLD, MAX_CODES, Threads, new_scratch
from proxboost.engines._nodes import (
    EPSILON,
    HIST_GAP,
    SMALL_NODE,
    check_monotonic_cst,
    check_weight,
    kernel,
    loop_nodes,
)
from proxboost.engines._packed import PackedNodes
from proxboost.engines._threads import engine_threads, numba_threads

RAND_R_MAX = 2147483647  # scikit-learn's seed range: randint(0, RAND_R_MAX)

__all__ = ["FEATURE_THRESHOLD", "MAX_CODES", "ExactData", "ExactEngine", "ExactTree"]


class ExactData:
    """Prepared training rows (see the module docstring): the :data:`~._exact.records.Codes`
    record (float32 X, per-feature bin codes and histogram offsets, the distinct values of
    exact-coded features, and the sorted orders of the others) and the size of a histogram."""

    def __init__(self, codes, hist_size):
        self.codes = codes
        self.hist_size = hist_size

    @property
    def X32(self):
        return self.codes.values

    @property
    def exact(self):
        """Per feature: whether it is exact-coded (one bin per distinct value)."""
        return self.codes.positive_offset < 0

    @property
    def shape(self):
        return self.codes.values.shape

    def __len__(self):
        return self.codes.values.shape[0]


class ExactTree(PackedNodes):
    """A fitted exact tree: float32 rows -> compact leaf ids (picklable, compiled apply).

    Node arrays (root 0, ``left == -1`` at leaves, scikit-learn's depth-first node order):
    ``feature``, ``threshold`` (float64; float32 ``x <= threshold`` goes left), ``left``,
    ``right``, ``leaf_of_node``, ``missing_go_to_left`` (uint8: 1 where a missing value goes
    left, as scikit-learn's ``tree_.missing_go_to_left``). Per internal node: ``split_feature``
    and ``split_gain``. The trees of a compiled loop share one copy of their arrays
    (:mod:`~proxboost.engines._packed`).
    """

    __slots__ = ()
    FIELDS = {
        "feature": "split feature per node (-1 at leaves)",
        "threshold": "split threshold per node (float32 ``x <= threshold`` goes left)",
        "left": "left child per node (-1 at leaves)",
        "right": "right child per node (-1 at leaves)",
        "leaf_of_node": "compact leaf id per node (-1 at internal nodes)",
        "gain": "split gain per node (0 at leaves)",
        "missing_go_to_left": "1 where a missing value goes left",
    }

    def __init__(self, feature, threshold, left, right, leaf_of_node, n_leaves, gain, missing):
        self._own((feature, threshold, left, right, leaf_of_node, gain, missing), n_leaves)

    def apply(self, Xp):
        X32 = _as_float32(Xp)
        feature, threshold, left, right, leaf_of_node, _, missing = self._fields()
        return apply_tree(X32, feature, threshold, left, right, leaf_of_node, missing)

    def _add_group(self, Xp, spans, values, weights, F, threads):
        """``PackedNodes.add_trees`` for the trees sharing this tree's arrays."""
        add = add_trees if threads == 1 else add_trees_par
        add(_as_float32(Xp), self._arrays, spans, values, weights, F)

    def _stage_group(self, Xp, spans, values, alphas, FH, out):
        """``PackedNodes.stage_trees`` for the trees sharing this tree's arrays."""
        stage_trees(_as_float32(Xp), self._arrays, spans, values, alphas, FH, out)


def _as_float32(Xp):
    if isinstance(Xp, ExactData):
        return Xp.X32
    if not (isinstance(Xp, np.ndarray) and Xp.dtype == np.float32 and Xp.ndim == 2):
        raise TypeError(
            "the exact engine works on prepared rows: pass X through engine.prepare first"
        )
    return Xp if Xp.flags.c_contiguous else np.ascontiguousarray(Xp)


class ExactEngine:
    """Compiled exact tree engine (``engine="exact"``): see the module docstring.

    Parameters
    ----------
    n_jobs : int or None, default=None
        Threads of the histogram and split kernels (scikit-learn's rule: None one, -1 all
        cores); any value grows the same trees (see the module docstring).
    """

    name = "exact"
    n_jobs = None  # one thread for an engine pickled before n_jobs existed

    def __init__(self, n_jobs=None):
        self.n_jobs = n_jobs
        self._work = None
        self._threads = None

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_work"] = None
        state["_threads"] = None
        return state

    def prepare(self, X, fit=False, sample_weight=None):
        """float32 rows; with ``fit=True`` also the codes and sorted orders of the training rows.

        ``sample_weight`` is accepted for the common interface and not needed: the candidate
        splits are the node's own values, whatever the weights.
        """
        with np.errstate(over="ignore"):  # values beyond float32's range become inf: refused
            X32 = np.ascontiguousarray(X, dtype=np.float32)
        if X32.ndim != 2:
            raise ValueError(f"X must be 2-dimensional, got shape {X32.shape}")
        if np.isinf(X32).any():
            raise ValueError(
                "X contains infinity (or values beyond float32's range, about 3.4e38): the exact "
                "engine splits float32 values and NaN (missing) only; rescale the features"
            )
        if not fit:
            return X32
        n = X32.shape[0]
        if n >= 2**31 - 1:
            raise ValueError(
                f"X has {n} rows; the exact engine indexes rows with int32 (at most 2**31 - 2)"
            )
        return ExactData(*code_features(X32))

    def grow(
        self, Xp, target, max_depth, random_state=None, sample_weight=None, monotonic_cst=None
    ):
        """Grow one tree on ``target``: scikit-learn's tree for the same ``random_state`` draw
        (``monotonic_cst``: -1, 0, 1 per feature, as ``DecisionTreeRegressor``'s; None: none)."""
        if not isinstance(Xp, ExactData):
            raise TypeError(
                "ExactEngine.grow needs prepared training rows: call prepare(X, fit=True)"
            )
        if not isinstance(random_state, np.random.RandomState):
            random_state = check_random_state(random_state)
        seed = int(random_state.randint(0, RAND_R_MAX))  # scikit-learn's splitter seed
        target = np.ascontiguousarray(target, dtype=np.float64)
        n, p = Xp.shape
        depth_cap, max_nodes = _tree_size(n, max_depth)
        scratch = self._scratch(Xp, depth_cap)
        if sample_weight is None:
            w, n_act = None, n  # rows and node labels are set by the compiled builder
        else:
            w = check_weight(sample_weight, n)
            active = w > 0
            n_act = int(active.sum())
            scratch.rows[:n_act] = np.flatnonzero(active)
            scratch.node_label[:] = np.where(active, 0, -1)
        monotonic = check_monotonic_cst(monotonic_cst, p)
        k = engine_threads(self.n_jobs)
        if k > 1:
            sizes = (n_act, depth_cap, max_nodes, seed)
            consts = (EPSILON, FEATURE_THRESHOLD, SMALL_NODE)
            par = self._thread_scratch(Xp, k)
            with numba_threads(k):
                grown = grow_tree(Xp.codes, target, w, scratch, sizes, consts, monotonic, par)
        else:  # None: the serial kernels (the parallel ones are not even compiled)
            grown = grow(
                Xp.codes,
                target,
                w,
                scratch,
                n_act,
                depth_cap,
                max_nodes,
                seed,
                EPSILON,
                FEATURE_THRESHOLD,
                SMALL_NODE,
                monotonic,
            )
        feature, threshold, left, right, leaf_of_node, gain, missing, leaf_ids, n_leaves = grown
        tree = ExactTree(feature, threshold, left, right, leaf_of_node, n_leaves, gain, missing)
        if n_act < n:
            idle = np.flatnonzero(leaf_ids < 0)
            leaf_ids[idle] = tree.apply(np.ascontiguousarray(Xp.X32[idle]))
        return leaf_ids, tree

    def _scratch(self, Xp, depth_cap):
        """The per-fit scratch of the trees of ``depth_cap`` on the prepared rows ``Xp`` (kept
        between trees: ``records.Scratch``)."""
        n, p = Xp.shape
        # histograms in use at once: the node being split, one scratch, and the pending nodes
        # with a histogram on the stack (one per depth at most, each > SMALL_NODE disjoint rows)
        n_buf = min(depth_cap, n // (SMALL_NODE + 1)) + 3
        _, max_nodes = _tree_size(n, depth_cap)
        shape = (n, p, n_buf, Xp.hist_size, depth_cap)
        if self._work is None or self._work[0] != shape:
            scratch = new_scratch(n, p, n_buf, Xp.hist_size, max_nodes, depth_cap, SMALL_NODE)
            self._work = (shape, scratch)
        return self._work[1]

    def _thread_scratch(self, Xp, k):
        """The scratch of k threads on the prepared rows ``Xp`` (``records.Threads``, kept
        between trees)."""
        n, p = Xp.shape
        if self._threads is None or self._threads[0] != (n, p, k, Xp.hist_size):
            self._threads = (
                (n, p, k, Xp.hist_size),
                Threads(
                    bin_values=np.empty((k, n), np.float32),
                    bin_targets=np.empty((k, n)),
                    bin_weights=np.empty((k, n)),
                    nonempty=np.empty((k, MAX_CODES), np.int64),
                    inner_bins=np.empty((k, MAX_CODES), np.int64),
                    inner_sum=np.empty((k, MAX_CODES)),
                    inner_weight=np.empty((k, MAX_CODES)),
                    found=np.zeros(p, np.int64),
                    proxy=np.zeros(p),
                    edges=np.zeros((p, 2)),
                    bins=np.zeros((p, 3), np.int64),
                    edge_j=np.zeros(p, np.int64),
                    n_inner=np.zeros(p, np.int64),
                    inner_bin=np.zeros((p, MAX_CODES), np.int64),
                    inner_j=np.zeros((p, MAX_CODES), np.int64),
                    inner_sums=np.zeros((p, MAX_CODES, 2)),
                    inner_found=np.zeros((p, MAX_CODES), np.int64),
                    inner_best=np.zeros((p, MAX_CODES, 3)),
                    inner_key=np.zeros((p, MAX_CODES)),
                    items=np.zeros((p * MAX_CODES, 2), np.int64),
                    item_key=np.zeros(p * MAX_CODES),
                    thread_best=np.zeros(k),
                    next_item=np.zeros(2, np.int64),
                    left_counts=np.zeros(k, np.int64),
                    side_sums=np.zeros((2, 3)),
                    block_stats=np.zeros((k, 4)),
                    root_sums=np.zeros(2),
                    hist=np.empty((k, Xp.hist_size + HIST_GAP)),
                ),
            )
        return self._threads[1]

    def compiled(self, Xp, max_depth, sample_weight=None, threads=1):
        """What the compiled boosting loop (:mod:`proxboost._compiled_loop`) needs to grow this
        engine's trees without Python: ``(grow kernel, apply kernel, record, max_nodes)``.
        ``sample_weight``: positive weights or None (rows of weight 0 are not supported).
        ``threads``: the loop's thread count (``engine_threads``); above 1 the record carries
        the threads' scratch (the parallel kernels) and the apply kernel is the parallel one,
        to be called under ``numba_threads(threads)``."""
        n, p = Xp.shape
        depth_cap, max_nodes = _tree_size(n, max_depth)
        w = None if sample_weight is None else check_weight(sample_weight, n)
        if w is not None and not (w > 0).all():
            raise ValueError("the compiled loop takes positive weights only")
        par = self._thread_scratch(Xp, threads) if threads > 1 else None
        scratch = self._scratch(Xp, depth_cap)
        monotonic = np.zeros(p, np.int8)
        record = ExactLoop(Xp.codes, scratch, w, depth_cap, max_nodes, monotonic, par)
        apply = apply_in_loop if par is None else apply_in_loop_par
        return grow_in_loop, apply, record, max_nodes

    @staticmethod
    def packed(nodes):
        """(tree class, node arrays, attributes of every tree) of the trees a compiled loop
        grew into ``nodes`` (``grow_in_loop``'s order: feature, threshold, threshold bin
        (unused), left, right, leaf_of_node, gain, missing): a ``_forest.Block``'s parts."""
        feature, threshold, _, left, right, leaf_of_node, gain, missing = nodes
        return ExactTree, (feature, threshold, left, right, leaf_of_node, gain, missing), {}


def _tree_size(n, max_depth):
    """(depth cap, node capacity) of a tree of ``max_depth`` on n rows."""
    depth_cap = min(int(max_depth), max(n, 1))
    return depth_cap, max(min(2 ** (depth_cap + 1) - 1, 2 * n - 1), 1)


#: The compiled loop's record of this engine (see ``ExactEngine.compiled``): the prepared rows'
#: codes, the scratch, the positive weights (None: unit), the depth, the node capacity, the
#: (absent) monotone constraints, and the threads' scratch (``records.Threads``; None: one
#: thread). ``par``'s type picks the grower's kernels when numba compiles, as in ``grow``.
ExactLoop = namedtuple(
    "ExactLoop", ["codes", "scratch", "w", "depth", "max_nodes", "monotonic", "par"]
)


@kernel
def grow_in_loop(engine, target, seed):
    """``ExactEngine.grow`` inside the compiled loop (every row of positive weight): the tree is
    left in the engine's scratch, whose arrays ``tree_in_loop`` gives once per fit, valid until
    the next tree (the loop stores it before growing the next one). Returns (the number of
    nodes, the number of leaves). On the threads' kernels when ``engine.par`` is a scratch (the
    loop runs under ``numba_threads``), on the serial ones, not even compiled otherwise, when
    it is None.

    A ``kernel`` (no reference counting), as ``grower.grow_in_place``: it allocates nothing and
    returns numbers, so taking the records' arrays out costs no atomic operation per array
    (returning views of the scratch instead cost about 60 of them per tree)."""
    scratch = engine.scratch
    n = target.shape[0]
    if engine.w is not None:  # rows and labels as ``grow`` sets them when every row takes part
        for i in range(n):
            scratch.rows[i] = i
            scratch.node_label[i] = 0
    sizes = (n, engine.depth, engine.max_nodes, seed)
    consts = (EPSILON, FEATURE_THRESHOLD, SMALL_NODE)
    return grow_in_place(
        engine.codes, target, engine.w, scratch, sizes, consts, engine.monotonic, engine.par
    )


@njit(error_model="numpy", cache=True, nogil=True)
def tree_in_loop(engine):
    """The arrays ``grow_in_loop`` grows each tree into, at the node capacity: (node arrays
    (feature, threshold, threshold bin (zeros), left, right, leaf_of_node, gain, missing), every
    row's leaf id). A tree of m nodes holds their first m entries (nodes reached from the root
    0 only, so ``apply_in_loop`` reads them whole)."""
    tree = engine.scratch.tree
    return loop_nodes(tree, tree.threshold, engine.scratch.threshold_bins)


@njit(error_model="numpy", cache=True, nogil=True)
def leaf_sums_in_loop(engine):
    """Where ``grow_in_loop`` leaves each leaf's weight and w g sum (rows: leaves), each added
    in row order as ``np.bincount`` adds them: the compiled loop's least-squares leaf values
    read them instead of a pass over the rows."""
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
    feature, threshold, _, left, right, _, _, missing = nodes
    return fill_steps(feature, threshold, left, right, missing, work)


@njit(error_model="numpy", cache=True, nogil=True)
def apply_in_loop(engine, Xp, nodes):
    """Leaf ids of the prepared rows ``Xp`` (float32) in the tree ``nodes`` (``grow_in_loop``)."""
    feature, threshold, _, left, right, leaf_of_node, _, missing = nodes
    return apply_tree(Xp, feature, threshold, left, right, leaf_of_node, missing)


@njit(error_model="numpy", cache=True, nogil=True)
def apply_in_loop_par(engine, Xp, nodes):
    """``apply_in_loop`` with the rows shared between threads (the same leaf ids)."""
    feature, threshold, _, left, right, leaf_of_node, _, missing = nodes
    return apply_tree_par(Xp, feature, threshold, left, right, leaf_of_node, missing)
