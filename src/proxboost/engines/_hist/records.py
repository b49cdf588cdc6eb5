"""Named records the hist engine's kernels share (numba compiles named tuples of arrays and
scalars into plain structures: a field costs what a separate argument cost)."""

from collections import namedtuple

import numpy as np

from proxboost.engines._nodes import HIST_GAP, new_tree_arrays

#: The binned training rows and what the engine learned from them (read-only during a fit).
Binned = namedtuple(
    "Binned",
    [
        "bins",  # (n, p) uint8: each value's bin, C order
        "offsets",  # (p + 1,) int64: first histogram bin of each feature
        "n_bins",  # (p,) int32: bins per feature
        "edges",  # (p, width) float64: bin b of feature f holds edges[f, b - 1] < x <= edges[f, b]
        "representative",  # (p, width) float64: a representative value of each bin
        "nan_bin",  # (p,) int32: the bin of the missing values (the last), -1 where X has none
    ],
)

#: Scratch the engine keeps between the trees of a fit: the per-row arrays, the histograms, the
#: small per-tree arrays of the :data:`Workspace`, the tree being grown and the node stack
#: (reset by the grower where a tree needs them reset: nothing is allocated per tree).
Scratch = namedtuple(
    "Scratch",
    [
        "rows",  # (n,) int32: rows taking part; each node owns a contiguous segment
        "spare_rows",  # (n,) int32: the right side during a partition
        "hist",  # (n_buffers, S * total bins) float64: histogram buffers
        "work",  # Workspace
        "tree",  # TreeArrays: (max_nodes,) node arrays (threshold: a bin), (n,) leaf ids
        "stack",  # NodeStack: 2 * depth + 4 pending nodes
        "threshold",  # (max_nodes,) float64: the compiled loop's split values of the bins
        # (max_nodes, 2) float64: per leaf, the weight and the w g sum of its rows, each added in
        # row order (the node's sums, or the last level's: the compiled loop's least-squares
        # leaf values read them instead of a pass over the rows, bincount's sums bit for bit)
        "leaf_sums",
        "pending",  # Pending: the last level's splits the threads label after the node loop
        # (k, S * total bins + HIST_GAP) float64: each thread's own histogram (``n_jobs`` = k > 1,
        # ``histogram.*_par``; the rows a page apart), (0, 0) on one thread
        "thread_hist",
    ],
)

#: The last level's splits whose rows the threads label after the node loop (``n_jobs`` > 1:
#: ``grower.label_pending``), one entry per split, at most one per two nodes: each split's
#: rows labelled and its sides' sums added by one thread, in row order.
Pending = namedtuple(
    "Pending",
    [
        "node",  # (m,) int64: the split node
        "segment",  # (m, 2) int64: its rows' segment [start, end) of ``rows``
        "split",  # (m, 3) int64: feature, threshold bin, missing values' bin if they go left (-1)
        "first_leaf",  # (m,) int64: its left child's leaf id (the right child's is the next)
        "nan_left",  # (m,) bool: the split sends missing values left
        "n_left",  # (m,) int64: its left row count (written by the threads)
        "sums",  # (m, 4) float64: left weight, left w g sum, right weight, right w g sum (threads)
        "taken",  # (1,) int64: how many splits the threads have taken (a shared counter)
    ],
)


def new_scratch(n, p, n_buf, stats_size, max_nodes, depth, small, k):
    """The :data:`Scratch` of trees of stack depth ``depth`` (node capacity ``max_nodes``) on n
    rows of p features, ``n_buf`` histograms of ``stats_size``, small nodes of at most ``small``
    rows, grown on k threads."""
    cap = 2 * depth + 4
    own = (k, stats_size + HIST_GAP) if k > 1 else (0, 0)
    return Scratch(
        rows=np.empty(n, np.int32),
        spare_rows=np.empty(n, np.int32),
        hist=np.empty((n_buf, stats_size)),
        work=Workspace(
            np.zeros((n_buf, p), np.int32),
            np.zeros((n_buf, p), np.int32),
            np.empty(n_buf, np.int32),
            np.empty(small + 1, np.uint8),
            np.empty(small + 1),
            np.empty(small + 1),
            np.empty(256, np.int64),
        ),
        tree=new_tree_arrays(max_nodes, n, np.int32),
        stack=NodeStack(
            *(np.empty(cap, np.int32) for _ in range(5)), *(np.empty(cap) for _ in range(5))
        ),
        threshold=np.empty(max_nodes),
        leaf_sums=np.empty((max_nodes, 2)),
        pending=new_pending(max_nodes // 2 + 1),
        thread_hist=np.empty(own),
    )


def new_pending(m):
    """A :data:`Pending` of m entries."""
    return Pending(
        node=np.empty(m, np.int64),
        segment=np.empty((m, 2), np.int64),
        split=np.empty((m, 3), np.int64),
        first_leaf=np.empty(m, np.int64),
        nan_left=np.empty(m, np.bool_),
        n_left=np.empty(m, np.int64),
        sums=np.empty((m, 4)),
        taken=np.zeros(1, np.int64),
    )


#: Per-tree scratch besides the engine's.
Workspace = namedtuple(
    "Workspace",
    [
        "bin_lo",  # (n_buffers, p) int32: per buffer and feature, its node's lowest bin
        "bin_hi",  # (n_buffers, p) int32: ... and highest bin
        "free_buffers",  # (n_buffers,) int32: stack of free histogram buffers
        "small_bins",  # (SMALL_NODE + 1,) uint8: a small node's bins of one feature, sorted
        "small_targets",  # (SMALL_NODE + 1,) float64: their w g
        "small_weights",  # (SMALL_NODE + 1,) float64: their w
        "nonempty",  # (256,) int64: a node's non-empty bins of one feature
    ],
)

#: Pending nodes (depth-first stack), one array per field.
NodeStack = namedtuple(
    "NodeStack",
    [
        "node_id",  # int32: the node's id (children get theirs when their parent is split)
        "start",  # int32: its segment of rows
        "end",  # int32
        "depth",  # int32
        "mode",  # int32: histogram buffer, LEAF or SMALL
        "weight",  # float64: sum of w
        "sum",  # float64: sum of w g
        "sq_sum",  # float64: sum of w g^2
        "lower",  # float64: lower bound of its value (monotone constraints; -inf: none)
        "upper",  # float64: upper bound
    ],
)

#: Settings of one tree: scalars, and each feature's monotone constraint ((p,) int8: -1, 0, 1).
Limits = namedtuple("Limits", ["max_depth", "epsilon", "small_node", "root_weight", "monotonic"])
