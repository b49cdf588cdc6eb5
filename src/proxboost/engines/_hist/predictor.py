"""Prediction of the hist engine: binned rows to compact leaf ids."""

import numpy as np
from numba import njit, prange


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
def apply_tree(bins, nodes, missing_left, missing_bin):
    """Leaf id of each binned row."""
    n = bins.shape[0]
    out = np.empty(n, np.intp)
    for i in range(n):
        out[i] = leaf_of(bins, i, nodes, missing_left, missing_bin)
    return out


@njit(cache=True, nogil=True, parallel=True)
def apply_tree_par(bins, nodes, missing_left, missing_bin):
    """``apply_tree`` with the rows shared between threads (``n_jobs`` > 1): each row's leaf
    is found as on one thread, so the same leaf ids."""
    n = bins.shape[0]
    out = np.empty(n, np.intp)
    for i in prange(n):
        out[i] = leaf_of(bins, i, nodes, missing_left, missing_bin)
    return out


@njit(cache=True, nogil=True)
def label_rows(bins, rows, nodes, missing_left, missing_bin, out):
    """out[r] = leaf of row r, for r in rows (the rows of weight 0, after growth)."""
    for r in rows:
        out[r] = leaf_of(bins, r, nodes, missing_left, missing_bin)
