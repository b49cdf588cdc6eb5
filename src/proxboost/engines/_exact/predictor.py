"""Prediction of the exact engine: float32 rows to compact leaf ids.

A row's way down the tree is a chain of dependent loads (node, its feature, the row's value,
the child), and which child it takes is data: a branch per node mispredicted about half the
time. So rows go down four at a time, without a branch: the tree is first laid out as
:data:`Steps` (both children of node k at ``2 k`` and ``2 k + 1``, a leaf its own two
children), every row takes exactly as many steps as the tree is deep, and the child is an
index computed from the comparison. Four independent chains keep the core busy while each
waits on its loads (about twice as fast as one row at a time with branches on
whitewine's 2,449 held-out rows at depth 5). The leaves reached are those of :func:`leaf_of`,
the plain walk, which the tests compare them with.
"""

from collections import namedtuple

import numpy as np
from numba import njit, prange

#: A tree laid out for branch-free steps (arrays indexed by node id, only the nodes reached
#: from the root filled): ``child`` (2 per node: left, right; a leaf: itself twice), the split
#: ``feature`` (0 at a leaf), ``threshold``, ``missing_left`` (a missing value goes left), and
#: ``depth``, the number of steps that takes every row to its leaf.
Steps = namedtuple("Steps", ["child", "feature", "threshold", "missing_left", "depth"])

#: Rows per parallel chunk (``apply_tree_par``): many blocks of four per thread.
CHUNK = 1024


@njit(cache=True, nogil=True)
def leaf_of(X32, i, feature, threshold, left, right, leaf_of_node, missing_left):
    """Leaf id of row i (see ``apply_tree``): the plain walk from the root."""
    node = 0
    while left[node] >= 0:
        x = X32[i, feature[node]]
        if x <= threshold[node] or (x != x and missing_left[node]):
            node = left[node]
        else:
            node = right[node]
    return leaf_of_node[node]


@njit(cache=True, nogil=True)
def steps_of(feature, threshold, left, right, missing_left):
    """The tree's :data:`Steps`, by a walk from the root (node arrays of any capacity: the
    entries of nodes not reached are never read)."""
    cap = left.shape[0]
    child = np.empty(2 * cap, np.int64)
    feat = np.zeros(cap, np.int64)
    thr = np.zeros(cap)
    miss = np.zeros(cap, np.bool_)
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
            miss[k] = missing_left[k] != 0
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
def step(X32, i, node, steps):
    """Row i's next node from ``node``: the right child's slot when ``x > threshold`` or a
    missing x goes right, computed, not branched on (a leaf stays)."""
    x = X32[i, steps.feature[node]]
    goes_left = (x <= steps.threshold[node]) | ((x != x) & steps.missing_left[node])
    return steps.child[2 * node + 1 - goes_left]


@njit(cache=True, nogil=True)
def leaves_of_rows(X32, start, end, steps, leaf_of_node, out):
    """out[i] = leaf id of row i for i in [start, end): four rows down the tree together."""
    i = start
    while i + 4 <= end:
        a = b = c = d = 0
        for _ in range(steps.depth):
            a = step(X32, i, a, steps)
            b = step(X32, i + 1, b, steps)
            c = step(X32, i + 2, c, steps)
            d = step(X32, i + 3, d, steps)
        out[i] = leaf_of_node[a]
        out[i + 1] = leaf_of_node[b]
        out[i + 2] = leaf_of_node[c]
        out[i + 3] = leaf_of_node[d]
        i += 4
    while i < end:
        a = 0
        for _ in range(steps.depth):
            a = step(X32, i, a, steps)
        out[i] = leaf_of_node[a]
        i += 1


@njit(cache=True, nogil=True)
def apply_tree(X32, feature, threshold, left, right, leaf_of_node, missing_left):
    """Leaf id of each row: from the root, ``x <= threshold`` goes left, a missing value (NaN)
    where the node's ``missing_left`` says."""
    n = X32.shape[0]
    out = np.empty(n, np.intp)
    steps = steps_of(feature, threshold, left, right, missing_left)
    leaves_of_rows(X32, 0, n, steps, leaf_of_node, out)
    return out


@njit(cache=True, nogil=True)
def leaves_of_chunk(X32, t, arrays, depth, leaf_of_node, out):
    """``leaves_of_rows`` on chunk t of ``CHUNK`` rows (``arrays``: the :data:`Steps` but its
    depth; the record is made here, not in the parallel loop, whose generated code cannot name
    it)."""
    n = X32.shape[0]
    steps = Steps(arrays[0], arrays[1], arrays[2], arrays[3], depth)
    leaves_of_rows(X32, t * CHUNK, min(n, (t + 1) * CHUNK), steps, leaf_of_node, out)


@njit(cache=True, nogil=True, parallel=True)
def apply_tree_par(X32, feature, threshold, left, right, leaf_of_node, missing_left):
    """``apply_tree`` with chunks of rows shared between threads (``n_jobs`` > 1): each row's
    leaf is found as on one thread, so the same leaf ids."""
    n = X32.shape[0]
    out = np.empty(n, np.intp)
    steps = steps_of(feature, threshold, left, right, missing_left)
    arrays = (steps.child, steps.feature, steps.threshold, steps.missing_left)
    depth = steps.depth
    for t in prange((n + CHUNK - 1) // CHUNK):
        leaves_of_chunk(X32, t, arrays, depth, leaf_of_node, out)
    return out
