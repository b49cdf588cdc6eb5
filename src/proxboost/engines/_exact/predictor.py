"""Prediction of the exact engine: float32 rows to compact leaf ids."""

import numpy as np
from numba import njit, prange


@njit(cache=True, nogil=True)
def leaf_of(X32, i, feature, threshold, left, right, leaf_of_node, missing_left):
    """Leaf id of row i (see ``apply_tree``)."""
    node = 0
    while left[node] >= 0:
        x = X32[i, feature[node]]
        if x <= threshold[node] or (x != x and missing_left[node]):
            node = left[node]
        else:
            node = right[node]
    return leaf_of_node[node]


@njit(cache=True, nogil=True)
def apply_tree(X32, feature, threshold, left, right, leaf_of_node, missing_left):
    """Leaf id of each row: from the root, ``x <= threshold`` goes left, a missing value (NaN)
    where the node's ``missing_left`` says."""
    n = X32.shape[0]
    out = np.empty(n, np.intp)
    for i in range(n):
        out[i] = leaf_of(X32, i, feature, threshold, left, right, leaf_of_node, missing_left)
    return out


@njit(cache=True, nogil=True, parallel=True)
def apply_tree_par(X32, feature, threshold, left, right, leaf_of_node, missing_left):
    """``apply_tree`` with the rows shared between threads (``n_jobs`` > 1): each row's leaf
    is found as on one thread, so the same leaf ids."""
    n = X32.shape[0]
    out = np.empty(n, np.intp)
    for i in prange(n):
        out[i] = leaf_of(X32, i, feature, threshold, left, right, leaf_of_node, missing_left)
    return out
