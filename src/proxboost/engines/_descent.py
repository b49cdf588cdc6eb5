"""How the engines' predictors send rows down a tree: eight rows at a time, without a branch.

A row's way down is a chain of dependent loads (node, its feature, the row's value, the
child), and which child it takes is data: a branch per node was mispredicted about every other
time. So the tree is first laid out as :data:`Steps`: both children of node k at ``2 k`` and
``2 k + 1`` of one array, a leaf its own two children, so that every row can take exactly as
many steps as the tree is deep and the child is an index computed from the comparison. Eight
rows go down together: eight independent chains keep the core busy while each waits on its
loads (four were about twice as fast as the plain walk on whitewine's 2,449 held-out rows at
depth 5; eight with unsigned indices, below, 1.6-1.9 times as fast again on its 1,225-row eval
set). A step indexes with unsigned integers: numba adds wrap-around code for every possibly
negative index, which took a quarter to 30 % of a step.

The engines differ only in the comparison (:func:`goes_left`): ``exact`` reads float32 values
(``x <= threshold``, a missing value, NaN, left where the node says), ``hist`` uint8 bins
(``bin <= threshold``, the missing bin left where the node says). Each predictor fills the
split nodes' columns of its :data:`Steps` (``fill_steps`` in ``_exact/predictor.py`` and
``_hist/predictor.py``) on :func:`descent`'s layout, in a :data:`StepsWork` of its own
(``steps_of``: ``predict``) or in the compiled loop's, filled again for each tree. The leaves
reached are those of the plain walk (``tests/test_engines_predictors.py``).

The compiled boosting loop sends its rows outside the fit (the eval set, validation rows, rows of
weight 0) down each new tree by masks instead (:func:`leaves_by_masks`), from the rows held by
feature: every split node clears, in a word of bits per row (one bit per leaf, leaves numbered
left to right), the bits of its left subtree's leaves where the row goes right, one pass over
one feature's values per split node, without a dependent load (the comparisons vectorise); the
row's leaf is the lowest bit left. That leaf is the walk's: a leaf's bit is cleared only by a
node on whose other side the leaf lies, and every leaf left of the walk's has an ancestor where
the walk went right with that leaf on the left (QuickScorer's exit leaf, Lucchese et al.,
SIGIR 2015). On whitewine's 1,225 eval rows a depth-3 tree took 1.5 us against 8.2 us for
the eight-row walk, a depth-5 tree 5.4 us against 13.5 us; a tree of at most 32 leaves takes
words of 32 bits, twice as many rows to a vector (1.1 and 3.6 us). Both engines' model
predictions go by masks too, a block of rows at a time (:func:`prediction_masks`,
:func:`block_leaves`). ``hist``'s masks compare uint8 bins with uint8 thresholds
(:func:`column_threshold`) and a uint8 missing bin (:func:`column_missing`: where no bin goes
left besides those up to the threshold, the threshold itself): 16 bins to one compare (AVX-512
here) where int64 thresholds, as the walk's, compared 4 or 8. On 9,796 rows of 11 random bins
(a scratch timing of the kernel alone, 2026-12-05, load about 1.7) a depth-3 tree took 10.8 us
against 13.2 us with int64 thresholds and 42.7 us for the walk, a depth-5 tree 28.0 against
38.8 and 63.5 us.
"""

from collections import namedtuple

import numpy as np
from numba import njit, prange, types
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import overload

from proxboost.engines._nodes import kernel

#: A tree laid out for branch-free steps (arrays indexed by node id; only the nodes reached from
#: the root are filled): ``child`` (:func:`descent`), and per split node its ``feature`` (0 at a
#: leaf), ``threshold`` (a value for ``exact``, a bin for ``hist``) and ``missing``: for
#: ``exact`` whether a missing value goes left, for ``hist`` the bin that goes left besides those
#: up to the threshold (the feature's missing bin where missing values go left, else -1, no
#: bin); ``depth``, the number of steps that takes every row to its leaf.
Steps = namedtuple("Steps", ["child", "feature", "threshold", "missing", "depth"])

#: :data:`Steps`' arrays (at a node capacity) with :func:`descent`'s split list and its
#: stack of pending (node, depth) pairs: made once (``steps_work`` of each predictor) and
#: filled for each tree, as the compiled boosting loop does (``steps_in_loop`` of each engine).
StepsWork = namedtuple(
    "StepsWork", ["child", "feature", "threshold", "missing", "splits", "pending"]
)

#: Rows per chunk of a parallel predictor: many blocks of eight per thread.
CHUNK = 1024


@njit(error_model="numpy", cache=True, nogil=True)
def new_steps_work(cap, threshold, missing):
    """A :data:`StepsWork` of node capacity ``cap``, its ``threshold`` and ``missing`` columns
    the given zero arrays (their dtype is the predictor's); ``feature`` zeros: a leaf's feature,
    read by every step that stays at the leaf, is a valid column."""
    return StepsWork(
        np.empty(2 * cap, np.int64),
        np.zeros(cap, np.int64),
        threshold,
        missing,
        np.empty(cap, np.int64),
        np.empty(2 * (cap + 1), np.int64),
    )


@kernel
def descent(left, right, work):
    """``child`` and ``splits`` of ``work`` (:data:`StepsWork`): ``child[2 k]`` and
    ``child[2 k + 1]`` the left and right child of node k, a leaf its own two children;
    ``splits[:n_splits]`` the split nodes reached from the root, whose columns each predictor
    fills. Returns (depth, n_splits), the depth being the number of steps that takes any row
    from the root to its leaf. By a walk from the root: node arrays of any capacity (the
    compiled loop's are larger than its trees), the entries of nodes not reached neither
    written nor read."""
    child, splits, pending = work.child, work.splits, work.pending
    n_splits = 0
    pending[0] = 0
    pending[1] = 0
    top = 1
    depth = 0
    while top > 0:
        top -= 1
        k = pending[2 * top]
        d = pending[2 * top + 1]
        if left[k] >= 0:
            child[2 * k] = left[k]
            child[2 * k + 1] = right[k]
            splits[n_splits] = k
            n_splits += 1
            for c in (left[k], right[k]):
                pending[2 * top] = c
                pending[2 * top + 1] = d + 1
                top += 1
        else:
            child[2 * k] = k
            child[2 * k + 1] = k
            depth = max(depth, d)
    return depth, n_splits


def goes_left(v, threshold, missing):
    """Whether a row whose value (``exact``) or bin (``hist``) is ``v`` goes left at a node of
    ``threshold`` and ``missing`` (:data:`Steps`), as a 0/1 computed without a branch. Compiled
    only (an overload chosen by the type of ``v``)."""
    raise NotImplementedError("compiled only: called inside the engines' kernels")


@overload(goes_left)
def _goes_left(v, threshold, missing):
    if isinstance(v, types.Float):  # exact: x <= threshold, NaN where ``missing`` says

        def value_goes_left(v, threshold, missing):
            return (v <= threshold) | ((v != v) & missing)

        return value_goes_left

    if isinstance(threshold, types.Integer) and threshold.bitwidth == 8:
        # hist by masks (:func:`masks_pass`): uint8 bin, threshold and missing bin
        # (:func:`column_missing`), compared on uint8 lanes (16 to a compare on AVX-512)

        def narrow_bin_goes_left(v, threshold, missing):
            return (v <= threshold) | (v == missing)

        return narrow_bin_goes_left

    def bin_goes_left(v, threshold, missing):  # hist: bin <= threshold, or the missing bin
        b = np.int64(v)
        return (b <= threshold) | (b == missing)

    return bin_goes_left


@njit(error_model="numpy", nogil=True)
def step(X, i, node, steps):
    """Row i's node after ``node``: its left or right child (a leaf stays), the slot computed
    from the comparison (unsigned indices: no wrap-around code)."""
    k = np.uint64(node)
    v = X[np.uint64(i), np.uint64(steps.feature[k])]
    left = goes_left(v, steps.threshold[k], steps.missing[k])
    return steps.child[2 * k + 1 - np.uint64(left)]


@kernel
def leaves_of_rows(X, start, end, steps, leaf_of_node, out):
    """out[i] = leaf id of row i of X (values or bins) for i in [start, end): eight rows down
    the tree together, then the rest one by one."""
    i = start
    while i + 8 <= end:
        a = b = c = d = e = f = g = h = 0
        for _ in range(steps.depth):
            a = step(X, i, a, steps)
            b = step(X, i + 1, b, steps)
            c = step(X, i + 2, c, steps)
            d = step(X, i + 3, d, steps)
            e = step(X, i + 4, e, steps)
            f = step(X, i + 5, f, steps)
            g = step(X, i + 6, g, steps)
            h = step(X, i + 7, h, steps)
        out[i] = leaf_of_node[a]
        out[i + 1] = leaf_of_node[b]
        out[i + 2] = leaf_of_node[c]
        out[i + 3] = leaf_of_node[d]
        out[i + 4] = leaf_of_node[e]
        out[i + 5] = leaf_of_node[f]
        out[i + 6] = leaf_of_node[g]
        out[i + 7] = leaf_of_node[h]
        i += 8
    while i < end:
        a = 0
        for _ in range(steps.depth):
            a = step(X, i, a, steps)
        out[i] = leaf_of_node[a]
        i += 1


@njit(error_model="numpy", cache=True, nogil=True)
def leaves_of_chunk(X, t, arrays, depth, leaf_of_node, out):
    """:func:`leaves_of_rows` on chunk t of ``CHUNK`` rows, for a parallel loop over chunks
    (``arrays``: the :data:`Steps` but their depth; the record is made here, not in the parallel
    loop, whose generated code cannot name it)."""
    n = X.shape[0]
    steps = Steps(arrays[0], arrays[1], arrays[2], arrays[3], depth)
    leaves_of_rows(X, t * CHUNK, min(n, (t + 1) * CHUNK), steps, leaf_of_node, out)


@njit(error_model="numpy", cache=True, nogil=True, parallel=True)
def leaves_of_rows_par(X, start, end, steps, leaf_of_node, out):
    """:func:`leaves_of_rows` of all the rows, chunks of ``CHUNK`` rows shared between threads
    (the predictors' ``apply_tree_par`` and the compiled loop's rows outside the fit).
    ``start`` is 0 and ``end`` the row count: the signature is :func:`leaves_of_rows`'s, so
    that the compiled loop calls either with the same arguments."""
    arrays = (steps.child, steps.feature, steps.threshold, steps.missing)
    depth = steps.depth
    for t in prange((end - start + CHUNK - 1) // CHUNK):
        leaves_of_chunk(X, t, arrays, depth, leaf_of_node, out)


@kernel
def largest_span(spans):
    """The most nodes of a tree in ``spans`` (rows: first node, end node, ...), at least 1: the
    capacity of a layout reused for all of them (a model's prediction, ``add_trees``)."""
    cap = 1
    for t in range(spans.shape[0]):
        cap = max(cap, spans[t, 1] - spans[t, 0])
    return cap


@kernel
def add_leaf_values(leaves, values, first, w, F):
    """F[i, k] += w * values[first + leaves[i], k]: one tree's shrunk leaf values added to a
    model's prediction F (n, K), the same product and sum per entry as NumPy's
    ``F += w * c[leaves]``."""
    for i in range(F.shape[0]):
        for k in range(F.shape[1]):
            F[i, k] += w * values[first + leaves[i], k]


@kernel
def add_stage(leaves, values, first, alpha, FH, out):
    """One tree's step of a staged prediction (``staged_predict``): per entry, as the Python
    recursion computes it, f = H + c[leaf], then H = f + alpha (f - F) (f where alpha is 0)
    and F = f; out = f. ``FH``: (F, H), each (n, K), updated in place."""
    F, H = FH
    for i in range(F.shape[0]):
        for k in range(F.shape[1]):
            f = H[i, k] + values[first + leaves[i], k]
            H[i, k] = f + alpha * (f - F[i, k]) if alpha != 0.0 else f
            F[i, k] = f
            out[i, k] = f


# -- the compiled loop's rows outside the fit, by masks ------------------------------------------
#: Most leaves a tree may have for :func:`leaves_by_masks` (one bit each in a uint64); a larger
#: tree takes the walk (max_depth > 6 only).
MASK_LEAVES = 64
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_ALL32 = np.uint32(0xFFFFFFFF)

#: The scratch of :func:`leaves_by_masks` (node capacity ``cap``, ``m`` rows): the nodes in
#: preorder (left first), each node's number of leaves and its first leaf's position (left to
#: right), the split nodes in preorder with the bits each clears and its threshold in the
#: rows' type (:func:`column_threshold`), the leaf id at each position, and the rows' bits.
MaskWork = namedtuple(
    "MaskWork", ["order", "size", "first", "splits", "clear", "threshold", "leaf_at", "bits"]
)


@njit(error_model="numpy", cache=True, nogil=True)
def new_mask_work(cap, m, threshold):
    """A :data:`MaskWork` for trees of node capacity ``cap`` and ``m`` rows, ``threshold`` its
    zero array of ``cap`` thresholds (float32 for ``exact``'s values, uint8 for ``hist``'s
    bins)."""
    return MaskWork(
        np.empty(cap, np.int64),
        np.empty(cap, np.int64),
        np.empty(cap, np.int64),
        np.empty(cap, np.int64),
        np.empty(cap, np.uint64),
        threshold,
        np.empty(MASK_LEAVES, np.int64),
        np.empty(m, np.uint64),
    )


def column_threshold(threshold):
    """A split's threshold in the type of the rows' values: for ``exact``'s float64 threshold
    t, the largest float32 not above t (a float32 x has x <= t exactly when x is at most that
    float32, so the comparison runs on float32, eight to a vector); ``hist``'s bin as a uint8
    (bins 0 to 254: the comparison runs on uint8 lanes, with :func:`column_missing`).
    Compiled only (an overload chosen by the type of ``threshold``)."""
    raise NotImplementedError("compiled only: called inside the engines' kernels")


@overload(column_threshold)
def _column_threshold(threshold):
    if isinstance(threshold, types.Float):

        def value_threshold(threshold):
            t32 = np.float32(threshold)  # nearest: one float32 down if above
            if np.float64(t32) > threshold:
                t32 = np.nextafter(t32, np.float32(-np.inf))
            return t32

        return value_threshold

    def bin_threshold(threshold):
        return np.uint8(threshold)

    return bin_threshold


def column_missing(missing, threshold):
    """A split's ``missing`` (:data:`Steps`) for :func:`masks_pass`: ``exact``'s (whether a
    missing value goes left) as is; for ``hist`` the bin that goes left besides those up to the
    uint8 ``threshold`` (:func:`column_threshold`), as a uint8: the missing bin, or where there
    is none (-1) the threshold itself, which goes left anyway, so that the test stays
    ``(bin <= threshold) | (bin == missing)`` on uint8 lanes. Compiled only (an overload chosen
    by the type of ``missing``)."""
    raise NotImplementedError("compiled only: called inside the engines' kernels")


@overload(column_missing)
def _column_missing(missing, threshold):
    if isinstance(missing, types.Boolean):
        return lambda missing, threshold: missing

    def bin_missing(missing, threshold):
        return np.uint8(missing) if missing >= 0 else threshold

    return bin_missing


@kernel
def fill_masks(steps, leaf_of_node, work):
    """The masks of the tree ``steps`` (:data:`Steps`; ``leaf_of_node``: its leaf ids) into
    ``work`` (:data:`MaskWork`). Returns the number of split nodes, or -1 when the tree has
    more than :data:`MASK_LEAVES` leaves. Three passes over the nodes reached from the root:
    the preorder (left child first: leaves left to right), the leaf counts in reverse, and
    each node's first leaf position."""
    child, order, size, first = steps.child, work.order, work.size, work.first
    stack = first  # free until the third pass
    stack[0] = 0
    top = 1
    n = 0
    while top > 0:
        top -= 1
        k = stack[top]
        order[n] = k
        n += 1
        if child[2 * k] != k:  # a split: its left child on top
            stack[top] = child[2 * k + 1]
            stack[top + 1] = child[2 * k]
            top += 2
    for j in range(n - 1, -1, -1):
        k = order[j]
        left, right = child[2 * k], child[2 * k + 1]
        size[k] = 1 if left == k else size[left] + size[right]
    if size[0] > MASK_LEAVES:
        return -1
    first[0] = 0
    n_splits = 0
    for j in range(n):
        k = order[j]
        left, right = child[2 * k], child[2 * k + 1]
        if left == k:
            work.leaf_at[first[k]] = leaf_of_node[k]
            continue
        first[left] = first[k]
        first[right] = first[k] + size[left]
        ones = (np.uint64(1) << np.uint64(size[left])) - np.uint64(1)
        left_bits = ones << np.uint64(first[k])  # the left subtree's leaves
        work.splits[n_splits] = k
        work.clear[n_splits] = ~left_bits
        work.threshold[n_splits] = column_threshold(steps.threshold[k])
        n_splits += 1
    return n_splits


def bits_word(value, ones):
    """``value`` (a uint64 mask) cut to the width of the rows' bits ``ones`` (all ones: uint32
    or uint64). Compiled only (an overload chosen by the type of ``ones``)."""
    raise NotImplementedError("compiled only: called inside the engines' kernels")


@overload(bits_word)
def _bits_word(value, ones):
    if ones.bitwidth == 32:
        return lambda value, ones: np.uint32(value & np.uint64(0xFFFFFFFF))
    return lambda value, ones: value


@kernel
def masks_pass(XT, steps, work, n_splits, bits, out):
    """:func:`leaves_by_masks`' passes, with the rows' ``bits`` (``(bits, ones)``: their array
    and a word of all ones, uint32 when the tree has at most 32 leaves, else uint64)."""
    bits, ones = bits
    m = np.uint64(XT.shape[1])
    for i in range(m):
        bits[i] = ones
    for s in range(n_splits):
        k = np.uint64(work.splits[s])
        values = XT[np.uint64(steps.feature[k])]
        threshold = work.threshold[s]
        missing = column_missing(steps.missing[k], threshold)
        clear = bits_word(work.clear[s], ones)
        for i in range(m):
            bits[i] &= ones if goes_left(values[i], threshold, missing) else clear
    for i in range(m):
        out[i] = work.leaf_at[np.uint64(trailing_zeros(bits[i]))]


@kernel
def leaves_by_masks(XT, steps, outside):
    """Leaf ids of rows held by feature (``XT``: (p, m), a feature's values in a row of it: the
    compiled loop's rows outside the fit, a block of ``exact``'s prediction) in the tree
    ``steps``: ``outside`` = (the tree's ``leaf_of_node``, the leaf ids' output, a
    :data:`MaskWork`). The leaves of
    :func:`leaves_of_rows` (the module docstring); a tree of more than :data:`MASK_LEAVES`
    leaves takes that walk on the columns. A tree of at most 32 leaves takes words of 32 bits:
    twice as many rows to a vector (about a third faster on whitewine's eval set)."""
    leaf_of_node, out, work = outside
    n_splits = fill_masks(steps, leaf_of_node, work)
    if n_splits < 0:
        leaves_of_rows(XT.T, 0, XT.shape[1], steps, leaf_of_node, out)
    elif work.size[0] <= 32:  # the tree's leaves (fill_masks)
        masks_pass(XT, steps, work, n_splits, (work.bits.view(np.uint32), _ALL32), out)
    else:
        masks_pass(XT, steps, work, n_splits, (work.bits, _ALL), out)


@kernel
def leaves_in_loop_par(X, steps, outside):
    """:func:`leaves_by_masks`'s place on threads: :func:`leaves_of_rows_par` of the rows held
    by row (``X``: (m, p)), the :data:`MaskWork` of ``outside`` unused."""
    leaves_of_rows_par(X, 0, X.shape[0], steps, outside[0], outside[1])


# -- a model's prediction by masks ---------------------------------------------------------------
#: Rows per block of a model's prediction by masks: each block is copied by feature once and
#: goes through every tree, its columns and bits staying in the caches.
MASK_ROWS = 4096


@njit(error_model="numpy", cache=True, nogil=True)
def prediction_masks(cap, n, threshold):
    """The :data:`MaskWork` of a prediction of n rows through trees of at most ``cap`` nodes
    (``threshold``: ``cap`` zeros in the rows' type, :func:`new_mask_work`): by masks when no
    tree can have more than :data:`MASK_LEAVES` leaves, else an empty one (the walk, by row)."""
    if cap > 2 * MASK_LEAVES - 1:
        return new_mask_work(0, 0, threshold[:0])
    return new_mask_work(cap, min(n, MASK_ROWS), threshold)


@njit(error_model="numpy", cache=True, nogil=True)
def block_rows(n, masks):
    """Rows per block of a prediction with ``masks`` (:func:`prediction_masks`): the walk takes
    all n rows at once."""
    return MASK_ROWS if masks.bits.shape[0] > 0 else max(n, 1)


@njit(error_model="numpy", cache=True, nogil=True)
def by_feature(X, masks):
    """The rows X (m, p) by feature, (p, m) (a copy), when the prediction goes by ``masks``;
    else an empty array (the walk reads X itself)."""
    if masks.bits.shape[0] == 0:
        return np.empty((0, 0), X.dtype)
    return np.ascontiguousarray(X.T)


@kernel
def block_leaves(X, XT, steps, leaf_of_node, masks, leaves):
    """``leaves`` = the leaf ids of a block of rows (``X`` by row; ``XT``: the same by feature,
    read when ``masks`` is not empty) in the tree ``steps``."""
    if masks.bits.shape[0] > 0:
        leaves_by_masks(XT, steps, (leaf_of_node, leaves, masks))
    else:
        leaves_of_rows(X, 0, X.shape[0], steps, leaf_of_node, leaves)
