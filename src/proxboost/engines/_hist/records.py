"""Named records the hist engine's kernels share (numba compiles named tuples of arrays and
scalars into plain structures: a field costs what a separate argument cost)."""

from collections import namedtuple

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

#: Scratch the engine keeps between the trees of a fit.
Scratch = namedtuple(
    "Scratch",
    [
        "rows",  # (n,) int32: rows taking part; each node owns a contiguous segment
        "spare_rows",  # (n,) int32: the right side during a partition
        "hist",  # (n_buffers, S * total bins) float64: histogram buffers
    ],
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
