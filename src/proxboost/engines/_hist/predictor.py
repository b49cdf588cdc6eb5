"""Prediction of the hist engine: binned rows to compact leaf ids."""

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def leaf_of(bins, i, feature, threshold, left, right, leaf_of_node):
    """Leaf id of row i: from the root, ``bin <= threshold`` goes left."""
    node = 0
    while left[node] >= 0:
        if bins[i, feature[node]] <= threshold[node]:
            node = left[node]
        else:
            node = right[node]
    return leaf_of_node[node]


@njit(cache=True, nogil=True)
def apply_tree(bins, feature, threshold, left, right, leaf_of_node):
    """Leaf id of each binned row."""
    n = bins.shape[0]
    out = np.empty(n, np.intp)
    for i in range(n):
        out[i] = leaf_of(bins, i, feature, threshold, left, right, leaf_of_node)
    return out


@njit(cache=True, nogil=True)
def label_rows(bins, rows, feature, threshold, left, right, leaf_of_node, out):
    """out[r] = leaf of row r, for r in rows (the rows of weight 0, after growth)."""
    for r in rows:
        out[r] = leaf_of(bins, r, feature, threshold, left, right, leaf_of_node)
