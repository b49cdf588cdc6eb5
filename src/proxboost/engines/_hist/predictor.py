"""Prediction of the hist engine: binned rows to compact leaf ids.

As the exact engine's (``engines/_exact/predictor.py``, which says why): rows go down four at
a time without a branch, the tree laid out as :data:`Steps` (a leaf its own two children, as
many steps for every row as the tree is deep); the leaves reached are those of
:func:`leaf_of`, the plain walk, which the tests compare them with.
"""

from collections import namedtuple

import numpy as np
from numba import njit, prange

#: A tree laid out for branch-free steps (arrays indexed by node id, only the nodes reached
#: from the root filled): ``child`` (2 per node: left, right; a leaf: itself twice), the split
#: ``feature`` (0 at a leaf), ``threshold`` (bin), ``missing_bin`` (the bin that goes left
#: besides those up to the threshold: the feature's missing bin where missing values go left,
#: else -1, no bin), and ``depth``, the number of steps that takes every row to its leaf.
Steps = namedtuple("Steps", ["child", "feature", "threshold", "missing_bin", "depth"])

#: Rows per parallel chunk (``apply_tree_par``): many blocks of four per thread.
CHUNK = 1024


@njit(cache=True, nogil=True)
def leaf_of(bins, i, nodes, missing_left, missing_bin):
    """Leaf id of row i: from the root, ``bin <= threshold`` goes left, a missing value (its
    feature's ``missing_bin``) where the node's ``missing_left`` says. ``nodes``: (feature,
    threshold, left, right, leaf_of_node)."""
    feature, threshold, left, right, leaf_of_node = nodes
    node = 0
    while left[node] >= 0:
        f = feature[node]
        b = bins[i, f]
        if b <= threshold[node] or (missing_left[node] and b == missing_bin[f]):
            node = left[node]
        else:
            node = right[node]
    return leaf_of_node[node]


@njit(cache=True, nogil=True)
def steps_of(nodes, missing_left, missing_bin):
    """The tree's :data:`Steps`, by a walk from the root (node arrays of any capacity: the
    entries of nodes not reached are never read)."""
    feature, threshold, left, right, _ = nodes
    cap = left.shape[0]
    child = np.empty(2 * cap, np.int64)
    feat = np.zeros(cap, np.int64)
    thr = np.zeros(cap, np.int64)
    miss = np.full(cap, -1, np.int64)
    pending = np.empty(2 * (cap + 1), np.int64)  # (node, its depth) pairs
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
            feat[k] = feature[k]
            thr[k] = threshold[k]
            if missing_left[k]:
                miss[k] = missing_bin[feature[k]]
            for c in (left[k], right[k]):
                pending[2 * top] = c
                pending[2 * top + 1] = d + 1
                top += 1
        else:
            child[2 * k] = k
            child[2 * k + 1] = k
            depth = max(depth, d)
    return Steps(child, feat, thr, miss, depth)


@njit(nogil=True)
def step(bins, i, node, steps):
    """Row i's next node from ``node``: the right child's slot unless the row's bin is at most
    the threshold or is the missing bin that goes left, computed, not branched on (a leaf
    stays)."""
    b = np.int64(bins[i, steps.feature[node]])
    goes_left = (b <= steps.threshold[node]) | (b == steps.missing_bin[node])
    return steps.child[2 * node + 1 - goes_left]


@njit(cache=True, nogil=True)
def leaves_of_rows(bins, start, end, steps, leaf_of_node, out):
    """out[i] = leaf id of row i for i in [start, end): four rows down the tree together."""
    i = start
    while i + 4 <= end:
        a = b = c = d = 0
        for _ in range(steps.depth):
            a = step(bins, i, a, steps)
            b = step(bins, i + 1, b, steps)
            c = step(bins, i + 2, c, steps)
            d = step(bins, i + 3, d, steps)
        out[i] = leaf_of_node[a]
        out[i + 1] = leaf_of_node[b]
        out[i + 2] = leaf_of_node[c]
        out[i + 3] = leaf_of_node[d]
        i += 4
    while i < end:
        a = 0
        for _ in range(steps.depth):
            a = step(bins, i, a, steps)
        out[i] = leaf_of_node[a]
        i += 1


@njit(cache=True, nogil=True)
def apply_tree(bins, nodes, missing_left, missing_bin):
    """Leaf id of each binned row."""
    n = bins.shape[0]
    out = np.empty(n, np.intp)
    leaves_of_rows(bins, 0, n, steps_of(nodes, missing_left, missing_bin), nodes[4], out)
    return out


@njit(cache=True, nogil=True)
def leaves_of_chunk(bins, t, arrays, depth, leaf_of_node, out):
    """``leaves_of_rows`` on chunk t of ``CHUNK`` rows (``arrays``: the :data:`Steps` but its
    depth; the record is made here, not in the parallel loop, whose generated code cannot name
    it)."""
    n = bins.shape[0]
    steps = Steps(arrays[0], arrays[1], arrays[2], arrays[3], depth)
    leaves_of_rows(bins, t * CHUNK, min(n, (t + 1) * CHUNK), steps, leaf_of_node, out)


@njit(cache=True, nogil=True, parallel=True)
def apply_tree_par(bins, nodes, missing_left, missing_bin):
    """``apply_tree`` with chunks of rows shared between threads (``n_jobs`` > 1): each row's
    leaf is found as on one thread, so the same leaf ids."""
    n = bins.shape[0]
    out = np.empty(n, np.intp)
    steps = steps_of(nodes, missing_left, missing_bin)
    leaf_of_node = nodes[4]
    arrays = (steps.child, steps.feature, steps.threshold, steps.missing_bin)
    depth = steps.depth
    for t in prange((n + CHUNK - 1) // CHUNK):
        leaves_of_chunk(bins, t, arrays, depth, leaf_of_node, out)
    return out


@njit(cache=True, nogil=True)
def label_rows(bins, rows, nodes, missing_left, missing_bin, out):
    """out[r] = leaf of row r, for r in rows (the rows of weight 0, after growth)."""
    for r in rows:
        out[r] = leaf_of(bins, r, nodes, missing_left, missing_bin)
