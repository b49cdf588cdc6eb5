"""What the compiled tree engines (``exact``, ``hist``) share: the kernels' decorators, node modes
and constants, the weight check, which histogram buffers the children of a split node get, and
the second pass of a partition on threads."""

from collections import namedtuple

import numpy as np
from numba import njit, prange

# Kernels that allocate nothing are compiled without reference counting (`_nrt=False`, a numba
# option that is not public API: pyproject.toml bounds numba to the tested versions): numba
# otherwise increments and decrements the count of every array argument at each call (two atomic
# operations per array), which took a quarter of the tree time in the per-feature scans.
# The hot loops (bin scans; histogram zeroing, subtraction and building; partitions) index with
# np.uint64: numba wraps negative signed indices around (extra operations on every access, which
# also kept the range loops from being vectorised); these indices are never negative.
# A function a kernel calls inherits its setting unless it sets its own (numba's rule): one that
# allocates says `_nrt=True` (the line searches' and sums' arrays under the compiled boosting
# loop), else numba refuses to compile its allocation there.
kernel = njit(error_model="numpy", cache=True, nogil=True, _nrt=False)

# The kernels called once per feature or once per node are inlined into their caller by numba
# (``inline="always"``): a call passes the records field by field, every array as 7-9 machine
# words, so each call taking ``Codes`` and ``Workspace`` stored about 300 words on the stack, and
# LLVM does not inline kernels of that size across numba's compiled libraries. It mattered on
# small trees (crabs, depth 3: about 15 % of the tree; docs/engines.md), not measurably on large
# ones. The arithmetic is the same, operation for operation.
inlined_kernel = njit(error_model="numpy", cache=True, nogil=True, _nrt=False, inline="always")

#: float64 slots (4 KiB) between the threads' own histograms (both engines' ``*_par`` histogram
#: kernels: each thread's row a page away from the next one's)
HIST_GAP = 512
SMALL_NODE = 32  # nodes of at most this many rows are split by sorting, not with histograms
EPSILON = np.finfo(np.float64).eps  # scikit-learn's impurity and improvement tolerance
# A node's mode on the stack: a histogram buffer (>= 0), or one of these
LEAF = -1  # the node is a leaf
SMALL = -2  # the node is split by sorting its rows (at most SMALL_NODE of them)
#: Bits of a row's place in the node in the keys a small node's sort ranks (``rank_below``)
SMALL_ROW_BITS = 6
assert SMALL_NODE < 1 << SMALL_ROW_BITS

#: The tree being grown (node arrays in depth-first order, root 0, ``left == -1`` at leaves;
#: ``threshold`` a value for ``exact``, a bin for ``hist``; ``missing_left`` (uint8) 1 where
#: missing values go left) and every row's leaf id.
TreeArrays = namedtuple(
    "TreeArrays",
    ["feature", "threshold", "left", "right", "leaf_of_node", "gain", "missing_left", "leaf_ids"],
)


def new_tree_arrays(max_nodes, n, threshold_dtype):
    """The :data:`TreeArrays` of a tree of at most ``max_nodes`` nodes on n rows, kept in an
    engine's scratch between trees (:func:`reset_tree` before each)."""
    return TreeArrays(
        np.empty(max_nodes, np.int32),
        np.empty(max_nodes, threshold_dtype),
        np.empty(max_nodes, np.int32),
        np.empty(max_nodes, np.int32),
        np.empty(max_nodes, np.int32),
        np.empty(max_nodes),
        np.empty(max_nodes, np.uint8),
        np.empty(n, np.intp),
    )


@njit(error_model="numpy", cache=True, nogil=True, inline="always")
def rank_below(key, m, ki):
    """The number of key[:m] below ki: a row's place in its small node's sort, where each key
    is the row's value or bin times 2**SMALL_ROW_BITS plus its place in the node (all keys
    differ, equal values keep their row order: a stable sort). No branch: the compiler
    vectorises the count, about twice as fast as an insertion sort, whose shifts end at
    mispredicted exits, on 8 to 32 rows (``_exact.splitting.rank_small`` on coarse features,
    whose keys are values; codes and bins take ``small_ranks``)."""
    rank = 0
    for j in range(m):
        rank += key[j] < ki
    return rank


#: Lanes of ``small_ranks``: a small node's int16 keys, then their ranks (a key is a code or bin,
#: below 256, times 2**SMALL_ROW_BITS plus the row's place: below 2**14)
SMALL_LANES = 1 << SMALL_ROW_BITS


@njit(error_model="numpy", cache=True, nogil=True, inline="always")
def small_ranks(lanes, m):
    """The rank of each of a small node's keys ``lanes[:m]`` (int16; all different) among them,
    the number of keys below it, into ``lanes[SMALL_LANES:SMALL_LANES + m]``: the ranks
    ``rank_below`` gives. The keys' order is the rows' in a stable sort by code or bin.

    Each key adds one to the rank of every key above it, over all ``SMALL_LANES`` lanes at once
    (the keys past m may hold anything: their ranks are never read): a loop of fixed width over
    16-bit lanes, which the compiler vectorises with no remainder. On 25 rows it took 24 ns
    against 94 ns for ``rank_below``'s 64-bit counts, on 32 rows 55 against 98 ns, on 8 rows 15
    against 12 ns (``docs/engines.md``)."""
    for i in range(SMALL_LANES):
        lanes[np.uint64(SMALL_LANES + i)] = 0
    for j in range(m):
        kj = lanes[np.uint64(j)]
        for i in range(SMALL_LANES):
            lanes[np.uint64(SMALL_LANES + i)] += lanes[np.uint64(i)] > kj


@njit(error_model="numpy", cache=True, nogil=True)
def reset_tree(tree, max_nodes):
    """``tree``'s first ``max_nodes`` nodes and every row's leaf id as a new tree starts them:
    no feature, threshold 0, no children, no leaf, gain 0, missing values right; leaf ids -1."""
    for k in range(max_nodes):
        tree.feature[k] = -1
        tree.threshold[k] = 0
        tree.left[k] = -1
        tree.right[k] = -1
        tree.leaf_of_node[k] = -1
        tree.gain[k] = 0.0
        tree.missing_left[k] = 0
    tree.leaf_ids[:] = -1


@njit(error_model="numpy", cache=True, nogil=True)
def own_tree(tree, n_nodes, n_leaves):
    """The tree grown in an engine's scratch as arrays of its own (``grow_tree``'s return: the
    node arrays, every row's leaf id, the number of leaves): the scratch is reused by the next
    tree."""
    return (
        tree.feature[:n_nodes].copy(),
        tree.threshold[:n_nodes].copy(),
        tree.left[:n_nodes].copy(),
        tree.right[:n_nodes].copy(),
        tree.leaf_of_node[:n_nodes].copy(),
        tree.gain[:n_nodes].copy(),
        tree.missing_left[:n_nodes].copy(),
        tree.leaf_ids.copy(),
        n_leaves,
    )


@njit(error_model="numpy", cache=True, nogil=True)
def loop_nodes(tree, thresholds, threshold_bins):
    """The arrays the compiled boosting loop grows each tree into (an engine's
    ``tree_in_loop``): the node arrays (feature, threshold value, threshold bin, left, right,
    leaf_of_node, gain, missing) and every row's leaf id. ``exact`` keeps values in ``tree``
    and zeros as bins, ``hist`` bins in ``tree`` and their values beside."""
    nodes = (
        tree.feature,
        thresholds,
        threshold_bins,
        tree.left,
        tree.right,
        tree.leaf_of_node,
        tree.gain,
        tree.missing_left,
    )
    return nodes, tree.leaf_ids


#: Sums over a node's rows (scalars): weight, w g, w g^2.
Sums = namedtuple("Sums", ["weight", "sum", "sq_sum"])


@njit(error_model="numpy", cache=True, nogil=True)
def keep_leaf_sums(leaf_sums, leaf, sums):
    """Row ``leaf`` of an engine's ``leaf_sums`` ((max_nodes, 2): weight, w g sum) from the
    :data:`Sums` of the leaf's rows, for the compiled loop's least-squares leaf values."""
    leaf_sums[leaf, 0] = sums.weight
    leaf_sums[leaf, 1] = sums.sum


def check_weight(sample_weight, n):
    """``sample_weight`` as a contiguous float64 array of shape (n,), finite and non-negative."""
    w = np.ascontiguousarray(sample_weight, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(f"sample_weight has shape {w.shape}, expected ({n},)")
    if not (np.isfinite(w).all() and (w >= 0).all()):
        raise ValueError("sample_weight must be finite and non-negative")
    return w


@njit(error_model="numpy", cache=True, nogil=True)
def pure(target, rows, start, end):
    """Whether the rows ``rows[start:end]`` (those of positive weight) all carry one target value,
    by exact comparison: such a node is a leaf. scikit-learn stops at an impurity below float64
    epsilon, computed from rounded sums, so a pure node whose sums round to an impurity above
    epsilon is split (between rows of one value: the split changes nothing in the tree's target,
    but each child gets its own leaf value from the line search), and whether it is depends on
    how the sums were rounded: integer weights and the same rows repeated give different sums.
    The exact comparison decides it the same way for both (``docs/engines.md``). It stops at the
    first row that differs, so an impure node costs a few comparisons."""
    first = target[rows[start]]
    for j in range(start + 1, end):
        if target[rows[j]] != first:
            return False
    return True


@njit(error_model="numpy", cache=True, nogil=True)
def row_block(start, end, t, k):
    """Rows [lo, hi) of block t of k: contiguous blocks of ``end - start`` rows (the share of
    each thread in the first pass of the engines' partitions on threads)."""
    n = end - start
    return start + t * n // k, start + (t + 1) * n // k


@njit(error_model="numpy", cache=True, nogil=True)
def gather_side(target, w, rows, runs, segment, counts, side):
    """The second pass of a partition on threads (both engines' ``partition`` on k threads):
    side ``side`` (0 left, 1 right) of the node's rows ``rows[segment[0]:segment[1]]`` copied
    back from the runs the first pass left in ``runs``, and its weight, w g and w g^2 sums.

    The first pass cut the node's rows into k blocks (``row_block``; k = ``counts.shape[0]``,
    ``counts[t]``: block t's left rows) and wrote each block's left rows in order from the
    block's first slot up, its right rows in order from its last slot down. Reading the left
    runs up and the right runs down, block after block, gives each side's rows in their order in
    the node, where the one-thread partition puts them (stable), and adds the side's sums in
    that order, the one-thread kernel's additions (its other side's rows add an exact +0.0,
    which leaves a sum started at +0.0 unchanged). Returns (weight, w g, w g^2)."""
    start, end = segment
    k = counts.shape[0]
    n_left = 0
    for t in range(k):
        n_left += counts[t]
    o = start if side == 0 else start + n_left
    first = o
    c_sum = 0.0
    s_sum = 0.0
    q_sum = 0.0
    for t in range(k):
        lo, hi = row_block(start, end, t, k)
        n = counts[t] if side == 0 else hi - lo - counts[t]
        for i in range(n):
            r = runs[lo + i] if side == 0 else runs[hi - 1 - i]
            rows[o] = r
            o += 1
            c = 1.0 if w is None else w[r]
            g = target[r]
            cg = c * g
            if w is not None:  # unit weights: the row count, below
                c_sum += c
            s_sum += cg
            q_sum += cg * g
    if w is None:  # a sum of ones is the row count, exactly (below 2**53)
        c_sum = float(o - first)
    return c_sum, s_sum, q_sum


@njit(error_model="numpy", cache=True, nogil=True, parallel=True)
def gather_sides(target, w, rows, runs, segment, counts, out):
    """The second pass of a partition on threads: both sides of the node's rows copied back,
    one thread per side (``gather_side``), their weight, w g and w g^2 sums left in ``out``
    ((2, 3)). Returns (mid, left :data:`Sums`, right :data:`Sums`)."""
    for side in prange(2):
        out[side, 0], out[side, 1], out[side, 2] = gather_side(
            target, w, rows, runs, segment, counts, side
        )
    n_left = 0
    for t in range(counts.shape[0]):
        n_left += counts[t]
    left = Sums(out[0, 0], out[0, 1], out[0, 2])
    return segment[0] + n_left, left, Sums(out[1, 0], out[1, 1], out[1, 2])


@njit(error_model="numpy", cache=True, nogil=True)
def feature_group(p, t, k):
    """Features [first, last) of thread t of k: contiguous groups of p // k or p // k + 1 (the
    share of each thread in the engines' parallel histograms)."""
    return t * p // k, (t + 1) * p // k


@njit(error_model="numpy", cache=True, nogil=True)
def feature_group_after(p, t, k, lead):
    """``feature_group`` when thread 0 first does ``lead`` features' worth of other work (the
    root's sums: ``ROOT_SUMS_LEAD``): the p + lead shares cut as ``feature_group`` cuts p, thread
    0's first ``lead`` being that work (no feature at all when it is worth its whole share)."""
    first, last = feature_group(p + lead, t, k)
    return max(first - lead, 0), max(last - lead, 0)


#: What adding the root's target sums in row order costs, in features of a root histogram on
#: two threads: two chains of dependent additions (about 4 cycles a row) against about a cycle
#: and a half a row per feature (2·10^5 and 10^6 rows x 20 features: 4.3 and 4.9).
ROOT_SUMS_LEAD = 4


@njit(error_model="numpy", cache=True, nogil=True)
def target_sums(target, n):
    """The sums of target[:n] and of its squares, in row order (a root's sums with unit
    weights, the serial root pass's additions)."""
    s = 0.0
    q = 0.0
    for r in range(n):
        g = target[np.uint64(r)]
        s += g
        q += g * g
    return s, q


@njit(error_model="numpy", cache=True, nogil=True)
def child_buffers(buf, small_left, need_l, need_r, free, n_free):
    """Histogram buffers of the two children of a node whose histogram is in buffer ``buf``.

    The smaller child's histogram is built from its rows; the larger child's, when it needs one,
    is the parent's minus the smaller child's, left in the parent's buffer (histogram
    subtraction). ``free[:n_free]`` is the stack of free buffers. Returns ``(into, subtract,
    mode_l, mode_r, n_free)``: the buffer in which to build the smaller child's histogram (a new
    one when the larger child needs a histogram, else ``buf``; -1 when neither child needs one,
    ``buf`` then being freed), whether to subtract it from ``buf`` afterwards, and each child's
    buffer (-1: none). A new buffer that only serves the subtraction is freed at once: nothing
    takes a buffer before the caller has used it.
    """
    need_small = need_l if small_left else need_r
    need_large = need_r if small_left else need_l
    small_buf = -1
    large_buf = -1
    into = -1
    if need_large:
        if n_free == 0:
            raise RuntimeError("histogram buffers exhausted (bug)")
        n_free -= 1
        into = free[n_free]
        large_buf = buf
        if need_small:
            small_buf = into
        else:
            free[n_free] = into
            n_free += 1
    elif need_small:
        into = buf
        small_buf = buf
    else:
        free[n_free] = buf
        n_free += 1
    if small_left:
        return into, need_large, small_buf, large_buf, n_free
    return into, need_large, large_buf, small_buf, n_free


@njit(error_model="numpy", cache=True, nogil=True)
def release(free, buf, n_free):
    """Return histogram buffer ``buf`` (if any: ``buf >= 0``) to the free stack ``free[:n_free]``;
    the new stack size."""
    if buf >= 0:
        free[n_free] = buf
        n_free += 1
    return n_free


# Monotone constraints (``grow(..., monotonic_cst=...)``): scikit-learn's rule for its
# ``DecisionTreeRegressor(monotonic_cst=...)`` (``_criterion.pyx``: ``check_monotonicity``,
# ``middle_value``; ``_tree.pyx``: the children's bounds), so that the compiled engines grow
# scikit-learn's trees. Values are the children's means sum / weight of the target.
@njit(error_model="numpy", cache=True, nogil=True)
def monotone_admissible(sign, sl, wl, s_node, w_node, lower, upper):
    """Whether a candidate split on a feature of constraint ``sign`` (-1, 0, 1), with left sums
    (sl, wl) in a node of sums (s_node, w_node) and value bounds [lower, upper], may be taken:
    always on an unconstrained feature; on a constrained one, both children's means within the
    bounds and in the constraint's order (left <= right for +1, left >= right for -1)."""
    if sign == 0:
        return True
    vl = sl / wl
    vr = (s_node - sl) / (w_node - wl)
    inside = vl >= lower and vr >= lower and vl <= upper and vr <= upper
    return inside and (vl - vr) * sign <= 0.0


@njit(error_model="numpy", cache=True, nogil=True)
def monotone_child_bounds(sign, lower, upper, sl, wl, s_node, w_node):
    """The children's value bounds (lower_l, upper_l, lower_r, upper_r) of a split on a feature
    of constraint ``sign`` in a node bounded by [lower, upper]: the node's bounds on an
    unconstrained feature; else split at the mean of the children's means, the left child
    below it for +1 (above for -1)."""
    if sign == 0:
        return lower, upper, lower, upper
    mid = sl / (2.0 * wl) + (s_node - sl) / (2.0 * (w_node - wl))
    if sign > 0:
        return lower, mid, mid, upper
    return mid, upper, lower, mid


def check_monotonic_cst(monotonic_cst, p):
    """The constraints as an int8 array of shape (p,) with values in {-1, 0, 1} (None: zeros)."""
    if monotonic_cst is None:
        return np.zeros(p, np.int8)
    cst = np.asarray(monotonic_cst)
    if cst.shape != (p,) or not np.isin(cst, (-1, 0, 1)).all():
        raise ValueError(f"monotonic_cst must hold one of -1, 0, 1 per feature ({p}); got {cst!r}")
    return np.ascontiguousarray(cst, dtype=np.int8)


@kernel
def split_gains(feature, left, gain, spans, out):
    """out[t, f] += the split gains of tree t's split nodes on feature f, node after node as
    ``np.bincount(split_feature, split_gain)`` adds them, for the trees ``spans`` (rows: first
    node, end node) of the node arrays they share (``PackedNodes.gains_by_feature``)."""
    for t in range(spans.shape[0]):
        for j in range(spans[t, 0], spans[t, 1]):
            if left[j] >= 0:
                out[t, feature[j]] += gain[j]
