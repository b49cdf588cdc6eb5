"""Named records the exact engine's kernels share (numba compiles named tuples of arrays and
scalars into plain structures: a field costs what a separate argument cost)."""

from collections import namedtuple

import numpy as np

from proxboost.engines._nodes import kernel, new_tree_arrays

MAX_CODES = 256  # features with at most this many distinct values get one code per value (uint8)
FEATURE_THRESHOLD = np.float32(1e-7)  # scikit-learn's tolerance between feature values
# A split's ``code`` (the rows going left: codes at most ``code`` when >= 0): these negative values
# compare the float32 values with the threshold instead, missing values (NaN) going right or left
VALUES_MISSING_RIGHT = -1  # x <= threshold (False for NaN)
VALUES_MISSING_LEFT = -2  # not x > threshold (True for NaN)
# code <= INSIDE_BIN: a split inside coarse bin c = INSIDE_BIN - code of a feature without missing
# values; rows of lower bins go left, of higher bins right, and only bin c's rows compare their
# float32 value with the threshold (the same rows as x <= threshold, from the codes' 1 byte per
# value instead of the values' rows: at 10^5 x 20 a partition then reads a quarter of the memory)
INSIDE_BIN = -3

#: The prepared training rows (read-only during a fit). Histogram layout: per bin the weighted
#: target sum and the weight side by side (feature f's bins from ``2 * bin_offset[f]``); after
#: them, for the coarse features only, the sum of the positive w g per bin (from
#: ``positive_offset[f]``, -1 for exact-coded features).
Codes = namedtuple(
    "Codes",
    [
        "values",  # (n, p) float32: the rows as scikit-learn's trees see them
        "codes",  # (n, p) uint8: each value's bin
        "bin_offset",  # (p + 1,) int64: first bin of each feature (cumulated bin counts)
        "positive_offset",  # (p,) int64: histogram position of a coarse feature's positive parts
        "n_bins",  # (p,) int64: bins per feature
        "coarse_features",  # (p_coarse,) int64: the features with coarse bins
        "bin_value",  # (p, MAX_CODES) float32: an exact-coded feature's value of each bin
        "multi_valued",  # (p, MAX_CODES) bool: coarse bins holding two or more distinct values
        "sorted_slot",  # (p,) int64: a coarse feature's row in the sorted_* arrays
        "sorted_rows",  # (p_coarse, n) int32: the rows in value order, per coarse feature
        "sorted_values",  # (p_coarse, n) float32: their values
        "bin_start",  # (p_coarse, MAX_CODES + 1) int64: each bin's segment of the sorted order
        "root_counts",  # (2 * total bins,) float64: the root's counts (unit weights) per bin
        "nan_bin",  # (p,) int64: the bin of a feature's missing values (its last), -1 without any
    ],
)

#: Scratch of one tree (reused between trees where the engine keeps it).
Workspace = namedtuple(
    "Workspace",
    [
        "rows",  # (n,) int32: rows taking part; each node owns a contiguous segment
        "spare_rows",  # (n,) int32: the right side during a partition
        "node_label",  # (n,) int32: each row's node label (coarse features' sorted segments)
        # (4,) float64: 1.0 when the tree builds the coarse features' positive parts, else 0.0
        # (its coarse bins' inner bounds then come from the target's range); the largest
        # target g_pos and the largest negated target g_neg of the rows taking part (both
        # >= 0); 1 / (g_pos + g_neg) (0 when both are 0)
        "target_range",
        "hist",  # (n_buffers, hist size) float64: histogram buffers
        "bin_lo",  # (n_buffers, p) int64: per buffer and feature, its node's lowest bin
        "bin_hi",  # (n_buffers, p) int64: ... and highest bin
        "free_buffers",  # (n_buffers,) int32: stack of free histogram buffers
        "bin_values",  # (n,) float32: a coarse bin's node values, sorted
        "bin_targets",  # (n,) float64: their w g
        "bin_weights",  # (n,) float64: their w
        "small_values",  # (SMALL_NODE + 1,) float32: a small node's values, sorted
        "small_targets",  # (SMALL_NODE + 1,) float64: their w g
        "small_weights",  # (SMALL_NODE + 1,) float64: their w
        "nonempty",  # (MAX_CODES,) int64: a node's non-empty bins of one feature
        "inner_bins",  # (MAX_CODES,) int64: bins with room for a candidate inside
        "inner_sum",  # (MAX_CODES,) float64: the w g left of each of them
        "inner_weight",  # (MAX_CODES,) float64: the w left of each of them
        # (p, 6) float64: per exact-coded feature, its candidates' scan from -inf by the node's
        # floor (``splitting.edge_floor``): found (-1 constant, 0, 1), proxy, a, b, lo_bin, hi_bin
        "floor_scans",
        # (max_nodes, 2) float64: per leaf, the weight and the w g sum of its rows, each added in
        # row order (the node's or the last level's sums; the compiled loop's least-squares leaf
        # values read them instead of a pass over the rows: bincount's sums, bit for bit)
        "leaf_sums",
        "features",  # (p,) int64: scikit-learn's feature permutation
        "constant",  # (p,) int64: the features known constant, in their order
        "rng_state",  # (1,) int64: scikit-learn's xorshift state
        "monotonic",  # (p,) int8: each feature's monotone constraint (-1, 0, 1)
    ],
)

#: Pending nodes (depth-first stack), one array per field.
NodeStack = namedtuple(
    "NodeStack",
    [
        "parent",  # int32: the parent's node id (-1: root)
        "is_left",  # bool: whether the node is its parent's left child
        "label",  # int32: the node's row label
        "start",  # int64: its segment of rows
        "end",  # int64
        "depth",  # int32
        "mode",  # int32: histogram buffer, LEAF or SMALL
        "n_constant",  # int64: features known constant in it
        "impurity",  # float64
        "weight",  # float64: sum of w
        "sum",  # float64: sum of w g
        "sq_sum",  # float64: sum of w g^2
        "lower",  # float64: lower bound of its value (monotone constraints; -inf: none)
        "upper",  # float64: upper bound
    ],
)

#: Settings of one tree (scalars).
Limits = namedtuple(
    "Limits",
    [
        "max_depth",
        "epsilon",  # impurity and improvement tolerance
        "feature_threshold",  # float32 tolerance between feature values
        "small_node",  # nodes of at most this many rows are split by sorting
        "min_weight",  # the smallest weight of a row taking part
        "root_weight",  # the root's total weight
    ],
)

#: The node being split (scalars).
Node = namedtuple("Node", ["label", "start", "end", "sum", "weight", "lower", "upper"])

#: Scratch the engine keeps between the trees of a fit: the workspace's arrays (the per-row
#: arrays, the histograms and the small per-tree ones, reset by the grower where a tree needs
#: them reset), the tree being grown (``TreeArrays`` at the node capacity) and the node stack.
#: Keeping them saves the tree's ~40 allocations: on small data (100 rows) they were a sixth
#: of the tree's time.
Scratch = namedtuple(
    "Scratch",
    [
        "rows",
        "spare_rows",
        "node_label",
        "target_range",
        "hist",
        "bin_values",
        "bin_targets",
        "bin_weights",
        "bin_lo",
        "bin_hi",
        "free_buffers",
        "small_values",
        "small_targets",
        "small_weights",
        "nonempty",
        "inner_bins",
        "inner_sum",
        "inner_weight",
        "floor_scans",
        "leaf_sums",
        "features",
        "constant",
        "rng_state",
        "tree",  # TreeArrays: (max_nodes,) node arrays, (n,) leaf ids
        "stack",  # NodeStack: 2 * depth + 4 pending nodes
        "threshold_bins",  # (max_nodes,) int32 zeros: the compiled loop's unused threshold bins
        "pending",  # Pending: the last level's splits the threads label after the node loop
    ],
)


def new_scratch(n, p, n_buf, hist_size, max_nodes, depth, small):
    """The :data:`Scratch` of trees of ``depth`` (node capacity ``max_nodes``) on n rows of p
    features, with ``n_buf`` histograms of ``hist_size`` and small nodes of at most ``small``
    rows."""
    cap = 2 * depth + 4
    return Scratch(
        rows=np.empty(n, np.int32),
        spare_rows=np.empty(n, np.int32),
        node_label=np.empty(n, np.int32),
        target_range=np.zeros(4),
        hist=np.empty((n_buf, hist_size)),
        bin_values=np.empty(n, np.float32),
        bin_targets=np.empty(n),
        bin_weights=np.empty(n),
        bin_lo=np.zeros((n_buf, p), np.int64),
        bin_hi=np.zeros((n_buf, p), np.int64),
        free_buffers=np.empty(n_buf, np.int32),
        small_values=np.empty(small + 1, np.float32),
        small_targets=np.empty(small + 1),
        small_weights=np.empty(small + 1),
        nonempty=np.empty(MAX_CODES, np.int64),
        inner_bins=np.empty(MAX_CODES, np.int64),
        inner_sum=np.empty(MAX_CODES),
        inner_weight=np.empty(MAX_CODES),
        floor_scans=np.empty((p, 6)),
        leaf_sums=np.empty((max_nodes, 2)),
        features=np.empty(p, np.int64),
        constant=np.empty(p, np.int64),
        rng_state=np.empty(1, np.int64),
        tree=new_tree_arrays(max_nodes, n, np.float64),
        stack=NodeStack(
            *(
                np.empty(cap, dtype)
                for dtype in (
                    np.int32,
                    np.bool_,
                    np.int32,
                    np.int64,
                    np.int64,
                    np.int32,
                    np.int32,
                    np.int64,
                    *(np.float64,) * 6,
                )
            )
        ),
        threshold_bins=np.zeros(max_nodes, np.int32),
        pending=new_pending(max_nodes // 2 + 1),  # as hist's: fewer split nodes than that
    )


#: Scratch of the threads (``n_jobs`` > 1; None on one thread): per thread, the arrays of a
#: feature's scan that the serial kernels keep in the workspace; per feature, the result of its
#: scan and its coarse bins left to scan inside; the work items the threads take one at a time
#: (split finding in parallel over features, then over coarse bins, reduced in scikit-learn's
#: visiting order: ``split_threads.split_node_par``).
Threads = namedtuple(
    "Threads",
    [
        "bin_values",  # (k, n) float32: per thread, the workspace's bin_values
        "bin_targets",  # (k, n) float64
        "bin_weights",  # (k, n) float64
        "nonempty",  # (k, MAX_CODES) int64
        "inner_bins",  # (k, MAX_CODES) int64
        "inner_sum",  # (k, MAX_CODES) float64
        "inner_weight",  # (k, MAX_CODES) float64
        "found",  # (p,) int64: per feature, its scan's result (-1 constant, 0 none, 1 a split)
        "proxy",  # (p,) float64: the proxy of its first best candidate
        "edges",  # (p, 2) float64: its values a, b
        "bins",  # (p, 3) int64: its lo_bin, hi_bin and the missing rows' direction
        "edge_j",  # (p,) int64: a coarse feature's best between-bin candidate (its j_best)
        "n_inner",  # (p,) int64: how many of its bins have room for an inner candidate
        "inner_bin",  # (p, MAX_CODES) int64: these bins
        "inner_j",  # (p, MAX_CODES) int64: their places among the feature's non-empty bins
        "inner_sums",  # (p, MAX_CODES, 2) float64: the w g and w of the rows left of each
        "inner_found",  # (p, MAX_CODES) int64: each one's result (0 none, 1 a candidate)
        "inner_best",  # (p, MAX_CODES, 3) float64: its first best candidate's proxy, a, b
        "inner_key",  # (p, MAX_CODES) float64: a bound on each one's inner candidates' proxy
        "items",  # (p * MAX_CODES, 2) int64: the second pass's (feature, index) pairs
        "item_key",  # (p * MAX_CODES,) float64: their bounds, negated (the largest first)
        "thread_best",  # (k,) float64: the best proxy each thread has found on the node
        "next_item",  # (2,) int64: the next feature and inner bin to take (``fetch_add``)
        "left_counts",  # (k,) int64: per block of rows, its left rows (partitions)
        "side_sums",  # (2, 3) float64: its two sides' weight, w g, w g^2
        "block_stats",  # (k, 4) float64: per block of rows, its target's range (root pass)
        "root_sums",  # (2,) float64: the root's w g and w g^2 sums (``root_pass_par``)
        # (k, hist_size + HIST_GAP) float64: each thread's own histogram (``histogram.*_par``),
        # the rows a page apart
        "hist",
    ],
)

#: The last level's splits whose rows the threads label after the node loop (``n_jobs`` > 1:
#: ``grower.label_pending``), one entry per split, at most one per two nodes: each split's rows
#: labelled and its sides' sums added by one thread, in row order.
Pending = namedtuple(
    "Pending",
    [
        "node",  # (m,) int64: the split node's id
        "segment",  # (m, 2) int64: its rows' segment [start, end) of ``rows``
        "rule",  # (m, 2) int64: the split's feature and code (``grower.goes_left``)
        "threshold",  # (m,) float64: its threshold
        "first_leaf",  # (m,) int64: its left child's leaf id (the right child's is the next)
        "direction",  # (m,) int64: its missing rows' direction (0 right, 1 left, -1 none)
        "node_sums",  # (m, 4) float64: the node's weight, w g sum, square sum and impurity
        "n_left",  # (m,) int64: its left row count (written by the threads)
        "sums",  # (m, 5) float64: left weight, w g, w g^2; right weight, w g (threads)
        "taken",  # (1,) int64: how many splits the threads have taken (a shared counter)
    ],
)


def new_pending(m):
    """A :data:`Pending` of m entries."""
    return Pending(
        node=np.empty(m, np.int64),
        segment=np.empty((m, 2), np.int64),
        rule=np.empty((m, 2), np.int64),
        threshold=np.empty(m),
        first_leaf=np.empty(m, np.int64),
        direction=np.empty(m, np.int64),
        node_sums=np.empty((m, 4)),
        n_left=np.empty(m, np.int64),
        sums=np.empty((m, 5)),
        taken=np.zeros(1, np.int64),
    )


@kernel
def threads(par):
    """The thread count of the :data:`Threads` scratch ``par`` (its per-thread arrays' rows)."""
    return par.bin_values.shape[0]
