"""The hist engine's tree grower: depth-first node loop over a stack of pending nodes, each
node's rows a contiguous segment of ``rows`` (stable partitions), the smaller child's
histogram built from its rows and the larger's by subtraction from the parent's (see
:mod:`proxboost.engines.hist`).

``par``: None (one thread: the serial kernels) or the thread count of the ``*_par`` kernels
(``n_jobs`` > 1). Its type picks the kernels when numba compiles (``par is None`` is decided
at compile time), so the one-thread grower neither calls nor compiles the parallel ones."""

import numpy as np
from numba import njit, prange

from proxboost.engines._atomic import fetch_add
from proxboost.engines._hist.histogram import (
    build_hist,
    build_hist_par,
    build_root_sums,
    build_root_sums_par,
    subtract_ranges,
    zero_ranges,
)
from proxboost.engines._hist.records import Limits
from proxboost.engines._hist.splitting import best_split, best_split_par, best_split_small
from proxboost.engines._nodes import (
    LEAF,
    SMALL,
    Sums,
    child_buffers,
    gather_sides,
    keep_leaf_sums,
    monotone_child_bounds,
    own_tree,
    pure,
    release,
    reset_tree,
    row_block,
)


@njit(error_model="numpy", cache=True, nogil=True)
def goes_left(bins, r, f, thr, nan_left):
    """Whether row r goes left: ``bins[r, f] <= thr``, or ``bins[r, f] == nan_left`` (the
    missing values' bin where they go left; -1 otherwise)."""
    b = bins[np.uint64(r), np.uint64(f)]
    return b <= thr or b == nan_left


@njit(error_model="numpy", cache=True, nogil=True)
def partition(bins, target, w, rows, tmp, start, end, f, thr, nan_left):
    """Stable partition of rows[start:end] by ``goes_left``. Returns (mid, left sums, right
    sums: weight, w g, w g^2 of each side, each accumulated over its rows in row order).

    Branch-free (both destinations written, cursors advanced by the side, the other side's sums
    given an exact +0.0): the sides of consecutive rows are unpredictable, and a mispredicted
    branch per row cost twice the time of the whole loop. Adding +0.0 leaves every sum as the
    side's own rows make it (a sum started at +0.0 is never -0.0). With unit weights a side's
    weight is its row count: the sum of its ones, exactly, without a sum per row. Indices are
    unsigned (numba adds wrap-around code to every possibly negative one): a quarter of the
    pass."""
    il = start
    ir = 0
    cl = 0.0
    sl = 0.0
    ql = 0.0
    cr = 0.0
    sr = 0.0
    qr = 0.0
    for j in range(start, end):
        r = np.uint64(rows[j])
        c = 1.0 if w is None else w[r]
        g = target[r]
        m = goes_left(bins, r, f, thr, nan_left)
        cg = c * g
        cgl = cg if m else 0.0
        cgr = 0.0 if m else cg
        if w is not None:  # unit weights: counted below
            cl += c if m else 0.0
            cr += 0.0 if m else c
        sl += cgl
        ql += cgl * g
        sr += cgr
        qr += cgr * g
        rows[np.uint64(il)] = r
        tmp[np.uint64(ir)] = r
        il += m
        ir += 1 - m
    for j in range(ir):
        rows[il + j] = tmp[j]
    if w is None:  # a sum of ones is the row count, exactly (below 2**53)
        cl = float(il - start)
        cr = float(ir)
    return il, Sums(cl, sl, ql), Sums(cr, sr, qr)


#: Segments of fewer rows are partitioned by the serial kernel even with threads: a parallel
#: region's start and join cost more than it saves on them. (Both give the same rows and sums,
#: so the threshold moves no number.)
PARALLEL_ROWS = 1 << 14


@njit(error_model="numpy", cache=True, nogil=True)
def runs_of_block(bins, rows, runs, segment, split):
    """The first pass of ``partition_par`` on one block of rows ``rows[segment[0]:segment[1]]``:
    its left rows (``goes_left`` on ``split`` = (f, thr, nan_left)) written in order into
    ``runs`` from the block's first slot up, its right rows in order from its last slot down
    (``_nodes.gather_side`` reads them back). Returns the block's left row count."""
    f, thr, nan_left = split
    lo, hi = segment
    il = lo
    ir = hi - 1
    for j in range(lo, hi):
        r = rows[j]
        m = goes_left(bins, r, f, thr, nan_left)
        runs[np.uint64(il if m else ir)] = r
        il += m
        ir -= 1 - m
    return il - lo


@njit(error_model="numpy", cache=True, nogil=True, parallel=True)
def partition_par(bins, target, w, rows, tmp, start, end, split, k):
    """``partition`` on k threads (``split``: (f, thr, nan_left)): the same rows in the same
    places and the same sums bit for bit.

    Two parallel passes: each thread splits its block of rows into its left rows and its right
    rows in ``tmp`` (``runs_of_block``); then one thread per side copies the side back into
    ``rows``, block after block, and adds its sums in row order (``_nodes.gather_sides``), the
    serial kernel's order of additions. (Counting the blocks' left rows first, to move each
    row straight to its place, read every row's bin twice: two fifths more time on 5·10^5
    rows.)"""
    counts = np.empty(k, np.int64)
    for t in prange(k):
        counts[t] = runs_of_block(bins, rows, tmp, row_block(start, end, t, k), split)
    return gather_sides(target, w, rows, tmp, (start, end), counts, np.empty((2, 3)))


@njit(error_model="numpy", cache=True, nogil=True)
def child_mode(depth, target, rows, segment, sums, limits):
    """LEAF, SMALL (split by sorting) or 0 (split with a histogram) for a node at ``depth`` whose
    rows are ``rows[segment[0]:segment[1]]``: a leaf at impurity q / W - (s / W)^2 <= epsilon
    (scikit-learn's rule) or when its rows all carry one target value (``_nodes.pure``)."""
    start, end = segment
    n_rows = end - start
    if depth >= limits.max_depth or n_rows < 2:
        return LEAF
    mean = sums.sum / sums.weight
    if sums.sq_sum / sums.weight - mean * mean <= limits.epsilon:
        return LEAF
    if pure(target, rows, start, end):
        return LEAF
    if n_rows <= limits.small_node:
        return SMALL
    return 0


@njit(error_model="numpy", cache=True, nogil=True)
def find_split(binned, target, w, scratch, work, buf, start, end, sums, bounds, par):
    """Best (feature, last left bin, first right bin, proxy, missing left) of a node
    (rows[start:end], sums) whose mode is ``buf``: from its histogram, or by sorting (SMALL).
    Feature -1: none. ``bounds``: the node's value bounds and the features' monotone
    constraints."""
    best_f = -1
    best_b = -1
    nxt = -1
    proxy = -np.inf
    left = False
    if buf >= 0:
        S = 2 if w is None else 3
        hist = scratch.hist
        if par is None:
            best_f, best_b, proxy, left = best_split(
                hist[buf],
                binned.offsets,
                work.bin_lo[buf],
                work.bin_hi[buf],
                sums.weight,
                work.nonempty,
                S,
                bounds,
                binned.nan_bin,
            )
        else:
            best_f, best_b, proxy, left = best_split_par(
                hist[buf],
                binned.offsets,
                work.bin_lo[buf],
                work.bin_hi[buf],
                sums.weight,
                S,
                bounds,
                binned.nan_bin,
            )
        if best_f >= 0:
            o = binned.offsets[best_f]
            nxt = best_b + 1
            while hist[buf, S * (o + nxt) + S - 1] == 0.0:
                nxt += 1
    elif buf == SMALL:
        best_f, best_b, nxt, proxy, left = best_split_small(
            binned.bins,
            target,
            w,
            scratch.rows,
            start,
            end,
            (sums.sum, sums.weight),
            (work.small_bins, work.small_targets, work.small_weights, work.nonempty),
            bounds,
            binned.nan_bin,
        )
    return best_f, best_b, nxt, proxy, left


@njit(error_model="numpy", cache=True, nogil=True)
def threshold_bin(binned, f, b, nxt):
    """The edge between the node's bins b and nxt of feature f nearest to the midpoint of their
    representative values; the last value bin when nxt is the missing values' bin (they alone
    go right: threshold +inf, as scikit-learn's)."""
    if nxt == binned.nan_bin[f]:
        return nxt - 1
    rep = binned.representative
    edges = binned.edges
    mid = rep[f, b] / 2.0 + rep[f, nxt] / 2.0
    thr = b
    gap = abs(edges[f, b] - mid)
    for k in range(b + 1, nxt):
        d = abs(edges[f, k] - mid)
        if d < gap:
            gap = d
            thr = k
    return thr


@njit(error_model="numpy", cache=True, nogil=True)
def children_histograms(binned, target, w, scratch, work, buf, segment, modes, n_free, par):
    """The children's modes (``modes``: from ``child_mode``), with their histograms when they
    need one: the smaller child's from its rows, the larger's by subtraction from the parent's
    buffer ``buf``. ``segment``: (start, mid, end). Returns (mode_l, mode_r, n_free)."""
    start, mid, end = segment
    mode_l, mode_r = modes
    S = 2 if w is None else 3
    hist = scratch.hist
    small_is_left = mid - start <= end - mid
    s_start = start if small_is_left else mid
    s_end = mid if small_is_left else end
    into, subtract, buf_l, buf_r, n_free = child_buffers(
        buf, small_is_left, mode_l == 0, mode_r == 0, work.free_buffers, n_free
    )
    if into >= 0:
        rlo = work.bin_lo
        rhi = work.bin_hi
        if into != buf:
            for f in range(rlo.shape[1]):
                rlo[into, f] = rlo[buf, f]
                rhi[into, f] = rhi[buf, f]
        if par is None:
            zero_ranges(hist[into], binned.offsets, rlo[into], rhi[into], S)
            build_hist(
                hist[into], binned.bins, binned.offsets, target, w, scratch.rows, s_start, s_end
            )
        else:
            rows = scratch.rows
            segment = (s_start, s_end)
            ranges = (rlo[into], rhi[into])
            own = scratch.thread_hist
            build_hist_par(
                hist[into], binned.bins, binned.offsets, target, w, rows, segment, ranges, own
            )
        if subtract:
            subtract_ranges(hist[buf], hist[into], binned.offsets, rlo[buf], rhi[buf], S)
    if mode_l == 0:
        mode_l = buf_l
    if mode_r == 0:
        mode_r = buf_r
    return mode_l, mode_r, n_free


@njit(error_model="numpy", cache=True, nogil=True)
def push(stack, top, node_id, start, end, depth, mode, sums, bounds):
    """Put a pending node on the stack at ``top`` (``bounds``: its value's (lower, upper))."""
    stack.node_id[top] = node_id
    stack.start[top] = start
    stack.end[top] = end
    stack.depth[top] = depth
    stack.mode[top] = mode
    stack.weight[top] = sums.weight
    stack.sum[top] = sums.sum
    stack.sq_sum[top] = sums.sq_sum
    stack.lower[top] = bounds[0]
    stack.upper[top] = bounds[1]


@njit(error_model="numpy", cache=True, nogil=True)
def root_mode(binned, target, w, scratch, work, limits, n_act, root, root_stats, par):
    """The root's mode, its histogram built (from the cached ``root_stats``) when it has one.
    Returns (mode, n_free)."""
    n_free = work.free_buffers.shape[0]
    mode = child_mode(0, target, scratch.rows, (0, n_act), root, limits)
    if mode == 0:
        n_free -= 1
        mode = work.free_buffers[n_free]
        for f in range(binned.n_bins.shape[0]):
            work.bin_lo[mode, f] = 0
            work.bin_hi[mode, f] = binned.n_bins[f] - 1
        hist = scratch.hist[mode]
        if par is None:
            build_root_sums(
                hist, binned.bins, binned.offsets, target, w, scratch.rows, n_act, root_stats
            )
        else:
            own = scratch.thread_hist
            build_root_sums_par(
                hist, binned.bins, binned.offsets, target, w, n_act, root_stats, own
            )
    return mode, n_free


@njit(error_model="numpy", cache=True, nogil=True)
def label_last_level(bins, target, w, rows, segment, split, leaf_ids, first_leaf):
    """The last level's split ``(f, b, nan_left)`` of a node: its rows ``rows[segment[0]:
    segment[1]]`` labelled with leaf ``first_leaf`` (``goes_left``) or the next one, and each
    side's weight and w g sum, in one pass, each side's rows adding
    theirs in row order and the other side's an exact +0.0 (as ``partition``): the leaves'
    sums, ``np.bincount``'s bit for bit. Returns (left row count, left sums, right sums;
    square sums 0, not needed)."""
    f, b, nan_left = split
    n_left = 0
    cl = 0.0
    sl = 0.0
    cr = 0.0
    sr = 0.0
    for j in range(segment[0], segment[1]):
        r = np.uint64(rows[j])
        m = goes_left(bins, r, f, b, nan_left)
        leaf_ids[r] = first_leaf if m else first_leaf + 1
        c = 1.0 if w is None else w[r]
        cg = c * target[r]
        if w is not None:  # unit weights: counted below
            cl += c if m else 0.0
            cr += 0.0 if m else c
        sl += cg if m else 0.0
        sr += 0.0 if m else cg
        n_left += m
    if w is None:  # a sum of ones is the row count, exactly (below 2**53)
        cl = float(n_left)
        cr = float(segment[1] - segment[0] - n_left)
    return n_left, Sums(cl, sl, 0.0), Sums(cr, sr, 0.0)


@njit(error_model="numpy", cache=True, nogil=True, parallel=True)
def label_pending_par(bins, target, w, rows, leaf_ids, segment, split, firsts, out, order, taken):
    """The threads' labels of the last level's splits (``label_pending``): each thread takes
    the splits in ``order`` (the largest first) one at a time from the shared counter ``taken``
    and labels the split's rows with ``label_last_level`` (``segment``, ``split``, ``firsts``:
    the splits' fields, :data:`~proxboost.engines._hist.records.Pending`), leaving its left row
    count and both sides' sums in ``out`` = (n_left, sums). Each split's rows are labelled and
    added up by one thread in row order, so the sums are the one-thread ones on any thread
    count. Arrays one by one: numba drops a parallel loop's writes to an array it reaches
    through a named tuple (numba's GitHub issue 7135)."""
    for _ in prange(order.shape[0]):
        take_pending(bins, target, w, rows, leaf_ids, segment, split, firsts, out, order, taken)


@njit(error_model="numpy", cache=True, nogil=True)
def take_pending(bins, target, w, rows, leaf_ids, segment, split, firsts, out, order, taken):
    """``label_pending_par``'s work for one thread: splits in ``order`` until none is left."""
    n_left, sums = out
    while True:
        j = fetch_add(taken, 0)
        if j >= order.shape[0]:
            return
        i = order[j]
        rule = (split[i, 0], split[i, 1], split[i, 2])
        n_l, left, right = label_last_level(
            bins, target, w, rows, (segment[i, 0], segment[i, 1]), rule, leaf_ids, firsts[i]
        )
        n_left[i] = n_l
        sums[i, 0] = left.weight
        sums[i, 1] = left.sum
        sums[i, 2] = right.weight
        sums[i, 3] = right.sum


@njit(error_model="numpy", cache=True, nogil=True)
def label_pending(binned, target, w, scratch, n_pending):
    """The last level's splits that the node loop left in ``scratch.pending`` (on threads:
    ``last_level_leaves``), labelled on the fit's threads (``label_pending_par``, on numba's
    thread count, which the engine sets to its own around a fit: ``numba_threads``), then each
    split's leaf sums and missing values' direction (``last_level_done``, as on one thread).
    The threads share the splits rather than each split's rows: the sides' sums, added in row
    order, cannot be cut between threads, and the compiled loop reads them (its least-squares
    leaf values) instead of a pass over all rows on one thread."""
    pending = scratch.pending
    m = n_pending
    if m == 0:
        return
    sizes = pending.segment[:m, 1] - pending.segment[:m, 0]
    order = np.argsort(-sizes, kind="mergesort")  # the largest split first
    pending.taken[0] = 0
    label_pending_par(
        binned.bins, target, w, scratch.rows, scratch.tree.leaf_ids, pending.segment,
        pending.split, pending.first_leaf, (pending.n_left, pending.sums), order, pending.taken,
    )  # fmt: skip
    for i in range(m):
        at = (pending.node[i], pending.first_leaf[i], pending.nan_left[i])
        sums = pending.sums[i]
        sides = (Sums(sums[0], sums[1], 0.0), Sums(sums[2], sums[3], 0.0))
        counts = (pending.n_left[i], pending.segment[i, 1] - pending.segment[i, 0])
        last_level_done(binned, scratch, at, pending.split[i, 0], counts, sides)


@njit(error_model="numpy", cache=True, nogil=True)
def last_level_done(binned, scratch, at, f, counts, sides):
    """What a last-level split of node ``at[0]`` on feature f leaves once its rows are
    labelled (``at``: node, its left child's leaf id, whether missing values go left;
    ``counts``: its left and all its rows; ``sides``: the left and right :data:`Sums`): both
    leaves' sums and the missing values' direction."""
    node, first_leaf, nan_left = at
    keep_leaf_sums(scratch.leaf_sums, first_leaf, sides[0])
    keep_leaf_sums(scratch.leaf_sums, first_leaf + 1, sides[1])
    n_l = counts[0]
    scratch.tree.missing_left[node] = missing_goes_left(binned, f, nan_left, n_l, counts[1] - n_l)


@njit(error_model="numpy", cache=True, nogil=True)
def split_rows(binned, target, w, scratch, segment, split, par):
    """``partition`` of the segment's rows by ``split`` = (f, thr, nan_left), on ``par``'s
    threads when there are some and the segment is large (``PARALLEL_ROWS``). Returns (mid,
    left sums, right sums)."""
    start, end = segment
    f, thr, nan_left = split
    bins = binned.bins
    rows = scratch.rows
    tmp = scratch.spare_rows
    if par is None:
        return partition(bins, target, w, rows, tmp, start, end, f, thr, nan_left)
    if end - start < PARALLEL_ROWS:
        return partition(bins, target, w, rows, tmp, start, end, f, thr, nan_left)
    return partition_par(bins, target, w, rows, tmp, start, end, split, par)


@njit(error_model="numpy", cache=True, nogil=True)
def missing_goes_left(binned, f, left, n_left, n_right):
    """Where a missing value goes at a split on feature f (``left``: the split's missing values
    go left): as HistGradientBoosting, the split's direction on a feature with missing values
    in the training rows, else the child with more rows (ties right)."""
    if binned.nan_bin[f] >= 0:
        return np.uint8(left)
    return np.uint8(n_left > n_right)


@njit(error_model="numpy", cache=True, nogil=True)
def make_leaf(tree, scratch, node, segment, leaf, sums):
    """Node ``node`` becomes leaf ``leaf``, with its rows ``scratch.rows[segment[0]:
    segment[1]]`` and its weight and sum (``scratch.leaf_sums``: added in row order by the
    partition or the root's pass that made the node)."""
    tree.leaf_of_node[node] = leaf
    keep_leaf_sums(scratch.leaf_sums, leaf, sums)
    rows = scratch.rows
    for j in range(segment[0], segment[1]):
        tree.leaf_ids[rows[j]] = leaf


@njit(error_model="numpy", cache=True, nogil=True)
def last_level_leaves(binned, target, w, scratch, at, segment, split, children, n_pending, par):
    """The ``children`` (left, right node ids) of node ``at[0]`` split on the last level
    (``at``: node, its left child's leaf id, whether missing values go left) become leaves: on
    one thread its rows labelled now (``label_last_level``), each side's weight and sum into
    ``scratch.leaf_sums`` and the missing values' direction set; on threads the split is left
    in ``scratch.pending`` as entry ``n_pending``, for ``label_pending`` after the node loop.
    Returns the number of pending splits."""
    tree = scratch.tree
    node, first_leaf, nan_left = at
    tree.leaf_of_node[children[0]] = first_leaf
    tree.leaf_of_node[children[1]] = first_leaf + 1
    if par is not None:
        pending = scratch.pending
        pending.node[n_pending] = node
        pending.segment[n_pending, 0] = segment[0]
        pending.segment[n_pending, 1] = segment[1]
        for k in range(3):
            pending.split[n_pending, k] = split[k]
        pending.first_leaf[n_pending] = first_leaf
        pending.nan_left[n_pending] = nan_left
        return n_pending + 1
    n_l, sums_l, sums_r = label_last_level(
        binned.bins, target, w, scratch.rows, segment, split, tree.leaf_ids, first_leaf
    )
    counts = (n_l, segment[1] - segment[0])
    last_level_done(binned, scratch, at, split[0], counts, (sums_l, sums_r))
    return n_pending


@njit(error_model="numpy", cache=True, nogil=True)
def grow_nodes(binned, target, w, scratch, work, tree, stack, limits, n_act, root_stats, root, par):
    """The node loop of ``grow_tree`` on its preallocated records. Returns (n_nodes, n_leaves)."""
    rows = scratch.rows
    mode0, n_free = root_mode(
        binned, target, w, scratch, work, limits, n_act, root, root_stats, par
    )
    push(stack, 0, 0, 0, n_act, 0, mode0, root, (-np.inf, np.inf))
    top = 1
    n_nodes = 1
    n_leaves = 0
    n_pending = 0  # the last level's splits left to the threads (``last_level_leaves``)
    while top > 0:
        top -= 1
        node = stack.node_id[top]
        start = stack.start[top]
        end = stack.end[top]
        depth = stack.depth[top]
        buf = stack.mode[top]
        sums = Sums(stack.weight[top], stack.sum[top], stack.sq_sum[top])
        bounds = (stack.lower[top], stack.upper[top], limits.monotonic)
        best_f, best_b, nxt, proxy, nan_left = find_split(
            binned, target, w, scratch, work, buf, start, end, sums, bounds, par
        )
        if best_f < 0:  # leaf
            n_free = release(work.free_buffers, buf, n_free)
            make_leaf(tree, scratch, node, (start, end), n_leaves, sums)
            n_leaves += 1
            continue
        lnode = n_nodes
        rnode = n_nodes + 1
        n_nodes += 2
        tree.feature[node] = best_f
        tree.threshold[node] = threshold_bin(binned, best_f, best_b, nxt)
        tree.left[node] = lnode
        tree.right[node] = rnode
        # weighted impurity decrease: proxy - S^2 / W (the sums of squares cancel), over W_root
        tree.gain[node] = (proxy - sums.sum * sums.sum / sums.weight) / limits.root_weight
        nan_code = binned.nan_bin[best_f] if nan_left else -1
        if depth + 1 >= limits.max_depth:  # both children are leaves: label rows, no partition
            n_free = release(work.free_buffers, buf, n_free)
            at = (node, n_leaves, nan_left)
            split = (best_f, best_b, nan_code)
            n_pending = last_level_leaves(
                binned, target, w, scratch, at, (start, end), split, (lnode, rnode), n_pending, par
            )
            n_leaves += 2
            continue
        mid, sums_l, sums_r = split_rows(
            binned, target, w, scratch, (start, end), (best_f, best_b, nan_code), par
        )
        tree.missing_left[node] = missing_goes_left(
            binned, best_f, nan_left, mid - start, end - mid
        )
        mode_l = child_mode(depth + 1, target, rows, (start, mid), sums_l, limits)
        mode_r = child_mode(depth + 1, target, rows, (mid, end), sums_r, limits)
        if buf >= 0:
            mode_l, mode_r, n_free = children_histograms(
                binned,
                target,
                w,
                scratch,
                work,
                buf,
                (start, mid, end),
                (mode_l, mode_r),
                n_free,
                par,
            )
        lo_l, hi_l, lo_r, hi_r = monotone_child_bounds(
            limits.monotonic[best_f], bounds[0], bounds[1], sums_l.sum, sums_l.weight, *sums[1::-1]
        )
        # push right then left: left subtree first, leaves numbered left to right
        push(stack, top, rnode, mid, end, depth + 1, mode_r, sums_r, (lo_r, hi_r))
        push(stack, top + 1, lnode, start, mid, depth + 1, mode_l, sums_l, (lo_l, hi_l))
        top += 2
    if par is not None:
        label_pending(binned, target, w, scratch, n_pending)
    return n_nodes, n_leaves


@njit(error_model="numpy", cache=True, nogil=True)
def new_records(p, scratch, max_nodes):
    """The per-tree records (workspace, node arrays, node stack) on the engine's ``scratch``,
    reset as a new tree needs them: histogram ranges and node arrays as freshly allocated ones
    were, and every buffer free; the other arrays are written before they are read."""
    work = scratch.work
    n_buf = scratch.hist.shape[0]
    for b in range(n_buf):
        work.free_buffers[b] = n_buf - 1 - b
        for f in range(p):
            work.bin_lo[b, f] = 0
            work.bin_hi[b, f] = 0
    reset_tree(scratch.tree, max_nodes)
    return work, scratch.tree, scratch.stack


@njit(error_model="numpy", cache=True, nogil=True)
def grow_tree(
    binned, target, w, scratch, n_act, max_depth, max_nodes, eps, small, root_stats, monotonic, par
):
    """Grow one tree (see the hist engine's docstring).

    ``scratch.rows[:n_act]``: the rows taking part (all rows, or those of positive weight),
    ``w``: their weights or None (unit weights). Rows not taking part keep leaf id -1.
    ``root_stats``: the root's weights and row counts per bin (``histogram.root_stats``).
    ``monotonic``: (p,) int8, each feature's monotone constraint (zeros: none).
    ``par``: None, or the thread count of the parallel kernels (module docstring).
    The returned arrays are the tree's own (copies of the scratch's).
    """
    tree, n_nodes, n_leaves = grow_in_scratch(
        binned,
        target,
        w,
        scratch,
        n_act,
        max_depth,
        max_nodes,
        eps,
        small,
        root_stats,
        monotonic,
        par,
    )
    return own_tree(tree, n_nodes, n_leaves)


@njit(error_model="numpy", cache=True, nogil=True)
def grow_in_scratch(
    binned, target, w, scratch, n_act, max_depth, max_nodes, eps, small, root_stats, monotonic, par
):
    """``grow_tree`` leaving the tree in ``scratch.tree`` (valid until the next tree grown on
    this scratch: the compiled loop reads it before growing the next one). Returns (the
    scratch's ``TreeArrays``, n_nodes, n_leaves)."""
    p = binned.bins.shape[1]
    work, tree, stack = new_records(p, scratch, max_nodes)
    rows = scratch.rows
    w0 = 0.0
    s0 = 0.0
    q0 = 0.0
    for j in range(n_act):
        r = rows[j]
        c = 1.0 if w is None else w[r]
        w0 += c
        s0 += c * target[r]
        q0 += c * target[r] * target[r]
    limits = Limits(max_depth, eps, small, w0, monotonic)
    root = Sums(w0, s0, q0)
    n_nodes, n_leaves = grow_nodes(
        binned, target, w, scratch, work, tree, stack, limits, n_act, root_stats, root, par
    )
    return tree, n_nodes, n_leaves
