"""Prediction of the hist engine: binned rows to compact leaf ids, eight rows at a time without a
branch, a model's trees of at most 64 leaves by masks (:mod:`proxboost.engines._descent` says
how and why); :func:`leaf_of` is the plain walk, which the tests compare them with."""

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


@njit(error_model="numpy", cache=True, nogil=True)
def steps_work(cap):
    """A ``_descent.StepsWork`` for trees of node capacity ``cap`` (threshold bins, the bin that
    goes left besides those)."""
    return new_steps_work(cap, np.zeros(cap, np.int64), np.full(cap, -1, np.int64))


@kernel
def fill_steps(nodes, missing_left, missing_bin, work):
    """The tree's ``_descent.Steps`` into ``work`` (``steps_work``): ``descent``'s layout, the
    split nodes' feature, threshold bin and the bin that goes left besides those (the missing
    bin where missing values go left, else -1). Returns the depth. A work filled for an earlier
    tree keeps that tree's columns at nodes that are leaves now: a leaf's two children are
    itself, so they are never used but as a valid feature."""
    feature, threshold, left, right, _ = nodes
    depth, n_splits = descent(left, right, work)
    for j in range(n_splits):
        k = work.splits[j]
        work.feature[k] = feature[k]
        work.threshold[k] = threshold[k]
        work.missing[k] = missing_bin[feature[k]] if missing_left[k] else -1
    return depth


@njit(error_model="numpy", cache=True, nogil=True)
def steps_of(nodes, missing_left, missing_bin):
    """The tree's ``_descent.Steps`` (``fill_steps`` on a work of its own)."""
    work = steps_work(nodes[2].shape[0])
    depth = fill_steps(nodes, missing_left, missing_bin, work)
    return Steps(work.child, work.feature, work.threshold, work.missing, depth)


@njit(error_model="numpy", cache=True, nogil=True)
def apply_tree(bins, nodes, missing_left, missing_bin):
    """Leaf id of each binned row."""
    n = bins.shape[0]
    out = np.empty(n, np.intp)
    leaves_of_rows(bins, 0, n, steps_of(nodes, missing_left, missing_bin), nodes[4], out)
    return out


@njit(error_model="numpy", cache=True, nogil=True)
def apply_tree_par(bins, nodes, missing_left, missing_bin):
    """``apply_tree`` with chunks of rows shared between threads (``n_jobs`` > 1,
    ``_descent.leaves_of_rows_par``): each row's leaf is found as on one thread, so the same
    leaf ids."""
    n = bins.shape[0]
    out = np.empty(n, np.intp)
    steps = steps_of(nodes, missing_left, missing_bin)
    leaves_of_rows_par(bins, 0, n, steps, nodes[4], out)
    return out


@njit(error_model="numpy", cache=True, nogil=True)
def label_rows(bins, rows, nodes, missing_left, missing_bin, out):
    """out[r] = leaf of row r, for r in rows (the rows of weight 0, after growth)."""
    for r in rows:
        out[r] = leaf_of(bins, r, nodes, missing_left, missing_bin)


@njit(error_model="numpy", cache=True, nogil=True)
def span_leaves(bins, XT, arrays, missing_bin, span, work, masks, leaves):
    """``leaves`` = leaf ids of the binned rows (``XT``: by feature, for the masks;
    ``_descent.block_leaves``) in the tree ``span`` (first node, end node, ...) of the node
    ``arrays`` that trees share (``HistTree.FIELDS`` order; ``PackedNodes``; ``missing_bin``:
    per feature), its layout filled in ``work`` (``steps_work`` of at least its node count)."""
    feature, threshold, left, right, leaf_of_node, missing = arrays[:6]
    s, e = span[0], span[1]
    nodes = (feature[s:e], threshold[s:e], left[s:e], right[s:e], leaf_of_node[s:e])
    depth = fill_steps(nodes, missing[s:e], missing_bin, work)
    steps = Steps(work.child, work.feature, work.threshold, work.missing, depth)
    block_leaves(bins, XT, steps, nodes[4], masks, leaves)


@njit(error_model="numpy", cache=True, nogil=True)
def prediction_work(bins, spans):
    """The scratch of a prediction of the binned rows through the trees ``spans``: the layout's
    (``steps_work``) and the masks' (``_descent.prediction_masks``, uint8 thresholds: empty for
    a tree of more than 64 leaves), the rows per block and the block's leaf ids."""
    n, cap = bins.shape[0], largest_span(spans)
    masks = prediction_masks(cap, n, np.zeros(cap, np.uint8))
    block = block_rows(n, masks)
    return steps_work(cap), masks, block, np.empty(min(n, block), np.intp)


@njit(error_model="numpy", cache=True, nogil=True)
def add_trees(bins, arrays, missing_bin, spans, values, weights, F):
    """F += weights[t] * (tree t's leaf values of the binned rows), for the trees in ``spans``
    in their order (the exact engine's ``add_trees``): the same numbers as
    ``F += w * c[leaves]`` tree after tree. Trees of at most 64 leaves go by masks, a block of
    rows at a time through every tree (``_descent.prediction_masks``), larger ones by the
    walk."""
    work, masks, block, leaves = prediction_work(bins, spans)
    for start in range(0, bins.shape[0], block):
        X, rows = bins[start : start + block], slice(start, start + block)
        XT, m = by_feature(X, masks), X.shape[0]
        for t in range(spans.shape[0]):
            span_leaves(X, XT, arrays, missing_bin, spans[t], work, masks, leaves[:m])
            add_leaf_values(leaves[:m], values, spans[t, 2], weights[t], F[rows])


@njit(error_model="numpy", cache=True, nogil=True)
def stage_trees(bins, arrays, missing_bin, spans, values, alphas, FH, out):
    """out[t] = the prediction after tree t (``staged_predict``; the exact engine's
    ``stage_trees``), by blocks of rows as :func:`add_trees`."""
    work, masks, block, leaves = prediction_work(bins, spans)
    for start in range(0, bins.shape[0], block):
        X, rows = bins[start : start + block], slice(start, start + block)
        XT, m = by_feature(X, masks), X.shape[0]
        FH_rows = (FH[0][rows], FH[1][rows])
        for t in range(spans.shape[0]):
            span_leaves(X, XT, arrays, missing_bin, spans[t], work, masks, leaves[:m])
            add_stage(leaves[:m], values, spans[t, 2], alphas[t], FH_rows, out[t, rows])


@njit(error_model="numpy", cache=True, nogil=True, parallel=True)
def add_trees_par(bins, arrays, missing_bin, spans, values, weights, F):
    """``add_trees`` with chunks of ``CHUNK`` rows shared between threads (``n_jobs`` > 1), each
    chunk through every tree in order: each entry of F gets the same sums."""
    n = bins.shape[0]
    for t in prange((n + CHUNK - 1) // CHUNK):
        rows = slice(t * CHUNK, min(n, (t + 1) * CHUNK))
        add_trees(bins[rows], arrays, missing_bin, spans, values, weights, F[rows])
