"""Prediction of the exact engine: float32 rows to compact leaf ids, eight rows at a time
without a branch (:mod:`proxboost.engines._descent` says how and why); :func:`leaf_of` is the
plain walk, which the tests compare them with."""

import numpy as np
from numba import njit, prange

from proxboost.engines._descent import (
    CHUNK,
    Steps,
    add_leaf_values,
    add_stage,
    block_leaves,
    block_rows,
    by_feature,
    descent,
    largest_span,
    leaves_of_rows,
    leaves_of_rows_par,
    new_steps_work,
    prediction_masks,
)
from proxboost.engines._nodes import kernel


@njit(error_model="numpy", cache=True, nogil=True)
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


@njit(error_model="numpy", cache=True, nogil=True)
def steps_work(cap):
    """A ``_descent.StepsWork`` for trees of node capacity ``cap`` (threshold values, whether a
    missing value goes left)."""
    return new_steps_work(cap, np.zeros(cap), np.zeros(cap, np.bool_))


@kernel
def fill_steps(feature, threshold, left, right, missing_left, work):
    """The tree's ``_descent.Steps`` into ``work`` (``steps_work``): ``descent``'s layout, the
    split nodes' feature, threshold value and whether a missing value goes left. Returns the
    depth. A work filled for an earlier tree keeps that tree's columns at nodes that are leaves
    now: a leaf's two children are itself, so they are never used but as a valid feature."""
    depth, n_splits = descent(left, right, work)
    for j in range(n_splits):
        k = work.splits[j]
        work.feature[k] = feature[k]
        work.threshold[k] = threshold[k]
        work.missing[k] = missing_left[k] != 0
    return depth


@njit(error_model="numpy", cache=True, nogil=True)
def steps_of(feature, threshold, left, right, missing_left):
    """The tree's ``_descent.Steps`` (``fill_steps`` on a work of its own)."""
    work = steps_work(left.shape[0])
    depth = fill_steps(feature, threshold, left, right, missing_left, work)
    return Steps(work.child, work.feature, work.threshold, work.missing, depth)


@njit(error_model="numpy", cache=True, nogil=True)
def apply_tree(X32, feature, threshold, left, right, leaf_of_node, missing_left):
    """Leaf id of each row: from the root, ``x <= threshold`` goes left, a missing value (NaN)
    where the node's ``missing_left`` says."""
    n = X32.shape[0]
    out = np.empty(n, np.intp)
    steps = steps_of(feature, threshold, left, right, missing_left)
    leaves_of_rows(X32, 0, n, steps, leaf_of_node, out)
    return out


@njit(error_model="numpy", cache=True, nogil=True)
def apply_tree_par(X32, feature, threshold, left, right, leaf_of_node, missing_left):
    """``apply_tree`` with chunks of rows shared between threads (``n_jobs`` > 1,
    ``_descent.leaves_of_rows_par``): each row's leaf is found as on one thread, so the same
    leaf ids."""
    n = X32.shape[0]
    out = np.empty(n, np.intp)
    steps = steps_of(feature, threshold, left, right, missing_left)
    leaves_of_rows_par(X32, 0, n, steps, leaf_of_node, out)
    return out


@njit(error_model="numpy", cache=True, nogil=True)
def span_leaves(X32, XT, arrays, span, work, masks, leaves):
    """``leaves`` = leaf ids of the rows X32 (``XT``: by feature, for ``masks``;
    ``_descent.block_leaves``) in the tree ``span`` (first node, end node, ...) of the node
    ``arrays`` that trees share (``ExactTree.FIELDS`` order; ``PackedNodes``), its layout
    filled in ``work`` (``steps_work`` of at least its node count)."""
    feature, threshold, left, right, leaf_of_node, _, missing = arrays
    s, e = span[0], span[1]
    depth = fill_steps(feature[s:e], threshold[s:e], left[s:e], right[s:e], missing[s:e], work)
    steps = Steps(work.child, work.feature, work.threshold, work.missing, depth)
    block_leaves(X32, XT, steps, leaf_of_node[s:e], masks, leaves)


@njit(error_model="numpy", cache=True, nogil=True)
def prediction_work(X32, spans):
    """The scratch of a prediction of the rows X32 through the trees ``spans``: the layout's
    (``steps_work``), the masks' (``_descent.prediction_masks``: empty for a tree of more than
    64 leaves), the rows per block and the block's leaf ids."""
    n, cap = X32.shape[0], largest_span(spans)
    masks = prediction_masks(cap, n, np.zeros(cap, np.float32))
    block = block_rows(n, masks)
    return steps_work(cap), masks, block, np.empty(min(n, block), np.intp)


@njit(error_model="numpy", cache=True, nogil=True)
def add_trees(X32, arrays, spans, values, weights, F):
    """F += weights[t] * (tree t's leaf values of the rows), for the trees in ``spans`` in
    their order: a model's prediction without a Python call per tree (``PackedNodes.add_trees``).
    ``arrays``: the trees' shared node arrays; ``spans[t]``: tree t's (first node, end node,
    first leaf value); ``values``: the leaf values, one row of K per leaf; F: (n, K). Each
    F[i, k] gets ``w * c`` added tree after tree, as ``F += w * c[leaves]`` adds it: the same
    numbers. Trees of at most 64 leaves go by masks, a block of rows at a time through every
    tree (``_descent.prediction_masks``), larger ones by the walk."""
    work, masks, block, leaves = prediction_work(X32, spans)
    for start in range(0, X32.shape[0], block):
        X, rows = X32[start : start + block], slice(start, start + block)
        XT, m = by_feature(X, masks), X.shape[0]
        for t in range(spans.shape[0]):
            span_leaves(X, XT, arrays, spans[t], work, masks, leaves[:m])
            add_leaf_values(leaves[:m], values, spans[t, 2], weights[t], F[rows])


@njit(error_model="numpy", cache=True, nogil=True)
def stage_trees(X32, arrays, spans, values, alphas, FH, out):
    """out[t] = the prediction after tree t (``staged_predict``), for the trees in ``spans``
    in their order, from the model's F and H = ``FH`` (each (n, K), updated: Nesterov's
    recursion with ``alphas``; ``_descent.add_stage``); the rest as :func:`add_trees`."""
    work, masks, block, leaves = prediction_work(X32, spans)
    for start in range(0, X32.shape[0], block):
        X, rows = X32[start : start + block], slice(start, start + block)
        XT, m = by_feature(X, masks), X.shape[0]
        FH_rows = (FH[0][rows], FH[1][rows])
        for t in range(spans.shape[0]):
            span_leaves(X, XT, arrays, spans[t], work, masks, leaves[:m])
            add_stage(leaves[:m], values, spans[t, 2], alphas[t], FH_rows, out[t, rows])


@njit(error_model="numpy", cache=True, nogil=True, parallel=True)
def add_trees_par(X32, arrays, spans, values, weights, F):
    """``add_trees`` with chunks of ``CHUNK`` rows shared between threads (``n_jobs`` > 1), each
    chunk through every tree in order: each entry of F gets the same sums."""
    n = X32.shape[0]
    for t in prange((n + CHUNK - 1) // CHUNK):
        rows = slice(t * CHUNK, min(n, (t + 1) * CHUNK))
        add_trees(X32[rows], arrays, spans, values, weights, F[rows])
