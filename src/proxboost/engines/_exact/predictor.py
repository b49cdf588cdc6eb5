"""Prediction of the exact engine: float32 rows to compact leaf ids."""

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def apply_tree(X32, feature, threshold, left, right, leaf_of_node, missing_left):
    """Leaf id of each row: from the root, ``x <= threshold`` goes left, a missing value (NaN)
    where the node's ``missing_left`` says."""
    n = X32.shape[0]
    out = np.empty(n, np.intp)
    for i in range(n):
        node = 0
        while left[node] >= 0:
            x = X32[i, feature[node]]
            if x <= threshold[node] or (x != x and missing_left[node]):
                node = left[node]
            else:
                node = right[node]
        out[i] = leaf_of_node[node]
    return out
