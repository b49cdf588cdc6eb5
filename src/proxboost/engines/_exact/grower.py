"""The exact engine's tree grower: scikit-learn's ``DepthFirstTreeBuilder`` node loop over a
stack of pending nodes, each node's rows a contiguous segment of ``rows`` (stable partitions),
the children's histograms built from the smaller child's rows and, for the larger child, by
subtraction from the parent's (see :mod:`proxboost.engines.exact`).

``par``: None (one thread: the serial kernels) or the threads' scratch (``records.Threads``,
``n_jobs`` > 1), with which the histograms are built and the splits of the nodes with a
histogram found in parallel over features (``histogram.build_hist_par``,
``split_threads.split_node_par``), the large nodes partitioned (``partition_rows_par``) and the
last level's splits labelled once the node loop ends (``label_pending``): the same numbers bit
for bit. Its type picks the kernels when numba compiles (``par is None`` is decided at compile
time), so the one-thread grower neither calls nor compiles the parallel ones."""

import numpy as np
from numba import njit, prange

from proxboost.engines._atomic import fetch_add
from proxboost.engines._exact.histogram import (
    build_hist,
    build_hist_par,
    build_root_hist,
    build_root_hist_par,
    subtract_ranges,
    zero_ranges,
)
from proxboost.engines._exact.records import (
    INSIDE_BIN,
    VALUES_MISSING_RIGHT,
    Limits,
    Node,
    Workspace,
    threads,
)
from proxboost.engines._exact.split_threads import split_node_par
from proxboost.engines._exact.splitting import split_node
from proxboost.engines._nodes import (
    LEAF,
    SMALL,
    Sums,
    child_buffers,
    gather_sides,
    inlined_kernel,
    keep_leaf_sums,
    kernel,
    monotone_child_bounds,
    own_tree,
    pure,
    release,
    reset_tree,
    row_block,
    target_sums,
)

#: ``range_bounds``'s threshold. On lad/prox fits of the package's regression model (10^5 x 20,
#: all features coarse), the range's bound let about 1.4 times as many rows be evaluated
#: exactly at the root as the positive parts' at a tightness of 0.54 (late iterations), and
#: about as many above 0.8 (early ones), while the positive parts cost a fifth of the tree;
#: on Gaussian targets (tightness about 0.2) it let every bin through.
RANGE_TIGHTNESS = 0.5


@kernel
def impurity(q, s, wsum):
    """scikit-learn's node impurity from the weight, sum and square sum of its rows."""
    return q / wsum - (s / wsum) ** 2.0


@kernel
def goes_left(X32, B, r, f, thr, code):
    """Whether row r goes left on feature f: codes at most ``code`` (code >= 0); inside coarse
    bin c (code = INSIDE_BIN - c): codes below c, or c and ``x <= thr`` (the value read for
    bin c's rows only); else ``x <= thr`` with NaN going right (VALUES_MISSING_RIGHT) or left
    (VALUES_MISSING_LEFT)."""
    if code >= 0:
        return np.int64(B[r, f] <= code)
    if code <= INSIDE_BIN:
        c = INSIDE_BIN - code
        b = np.int64(B[r, f])
        if b != c:
            return np.int64(b < c)
        return np.int64(X32[r, f] <= thr)
    if code == VALUES_MISSING_RIGHT:
        return np.int64(X32[r, f] <= thr)
    return np.int64(not X32[r, f] > thr)


@kernel
def coarse_bin_of(codes, f, a):
    """The bin of value ``a`` (a training value) of coarse feature f: binary searches of its
    sorted values, then of its bins' segments of that order.

    A split between two consecutive node values a < b of a coarse feature (threshold in
    [a, b)) sends left the node rows of the bins below a's, right those of the bins above
    (the bins are ordered by value, a node has no value strictly between a and b), and
    compares the values of a's bin only: ``goes_left`` with code ``INSIDE_BIN - bin``."""
    slot = codes.sorted_slot[f]
    Sv = codes.sorted_values[slot]
    lo = 0
    hi = Sv.shape[0]
    while lo < hi:  # the first position of a
        mid = (lo + hi) >> 1
        if Sv[mid] < a:
            lo = mid + 1
        else:
            hi = mid
    bstart = codes.bin_start[slot]
    c_lo = 0
    c_hi = codes.n_bins[f]
    while c_lo < c_hi:  # the last bin starting at or before it
        mid = (c_lo + c_hi) >> 1
        if bstart[mid] <= lo:
            c_lo = mid + 1
        else:
            c_hi = mid
    return c_lo - 1


@kernel
def partition_rows(codes, target, w, work, node, f, thr, code, label_l, coarse):
    """Stable partition of the node's rows by X[r, f] <= thr (codes[r, f] <= code when
    code >= 0, the same rows; missing values as ``code`` says: ``goes_left``); node labels
    (``label_l``, ``label_l + 1``); each side's weight, sum and square sum, accumulated over its
    rows in their order (scikit-learn's fresh ``criterion.init`` sums of the children). Returns
    (mid, left sums, right sums).

    Branch-free (both destinations written, cursors advanced by the side): the sides of
    consecutive rows are unpredictable. With unit weights a side's weight is its row count, the
    sum of its ones exactly, so no weight is summed per row (a fifth of the loop's additions).
    """
    X32 = codes.values
    B = codes.codes
    rows = work.rows
    tmp = work.spare_rows
    nid = work.node_label
    label_r = label_l + 1
    il = node.start
    ir = 0
    wl = 0.0
    sl = 0.0
    ql = 0.0
    wr = 0.0
    sr = 0.0
    qr = 0.0
    fu = np.uint64(f)
    for j in range(node.start, node.end):
        r = rows[np.uint64(j)]
        ru = np.uint64(r)
        m = goes_left(X32, B, ru, fu, thr, code)
        c = 1.0 if w is None else w[ru]
        g = target[ru]
        cgl = (c * g) if m else 0.0
        cgr = 0.0 if m else (c * g)
        if w is not None:  # unit weights: counted below
            wl += c if m else 0.0
            wr += 0.0 if m else c
        sl += cgl
        ql += cgl * g
        sr += cgr
        qr += cgr * g
        rows[np.uint64(il)] = r
        tmp[np.uint64(ir)] = r
        il += m
        ir += 1 - m
        if coarse:
            nid[ru] = label_l if m else label_r
    for j in range(ir):
        rows[np.uint64(il + j)] = tmp[np.uint64(j)]
    if w is None:  # a sum of ones is the row count, exactly (below 2**53)
        wl = float(il - node.start)
        wr = float(ir)
    return il, Sums(wl, sl, ql), Sums(wr, sr, qr)


#: Nodes of fewer rows are partitioned by the serial kernel even with threads: a parallel
#: region's start and join cost more than it saves on them. (Both give the same rows, labels
#: and sums, so the threshold moves no number.)
PARALLEL_ROWS = 1 << 14


@kernel
def runs_of_block(codes, work, segment, split, labels):
    """The first pass of ``partition_rows_par`` on one block of rows ``rows[segment[0]:
    segment[1]]``: its left rows (``goes_left`` on ``split`` = (f, thr, code)) written in order
    into ``spare_rows`` from the block's first slot up, its right rows in order from its last
    slot down (``_nodes.gather_side`` reads them back); node labels (``labels``: the left
    label, or -1 for none) as ``partition_rows``. Returns the block's left row count."""
    X32 = codes.values
    B = codes.codes
    rows = work.rows
    runs = work.spare_rows
    nid = work.node_label
    f, thr, code = split
    fu = np.uint64(f)
    lo, hi = segment
    il = lo
    ir = hi - 1
    for j in range(lo, hi):
        r = rows[np.uint64(j)]
        ru = np.uint64(r)
        m = goes_left(X32, B, ru, fu, thr, code)
        runs[np.uint64(il if m else ir)] = r
        il += m
        ir -= 1 - m
        if labels >= 0:
            nid[ru] = labels if m else labels + 1
    return il - lo


@njit(error_model="numpy", cache=True, nogil=True, parallel=True)
def partition_rows_par(codes, target, w, work, node, split, labels, par):
    """``partition_rows`` on ``par``'s k threads (``split``: (f, thr, code); ``labels``: the
    left child's node label, or -1 when no coarse feature needs them): the same rows in the
    same places, the same labels and the same sums bit for bit.

    Two parallel passes: each thread splits its block of rows into its left rows and its right
    rows in ``spare_rows`` (``runs_of_block``); then one thread per side copies the side back,
    block after block, and adds its sums in row order (``_nodes.gather_sides``), the serial
    kernel's order of additions."""
    k = threads(par)
    start = node.start
    end = node.end
    counts = par.left_counts
    for t in prange(k):
        counts[t] = runs_of_block(codes, work, row_block(start, end, t, k), split, labels)
    segment = (start, end)
    return gather_sides(target, w, work.rows, work.spare_rows, segment, counts, par.side_sums)


@kernel
def label_last_level(codes, target, w, rows, leaf_ids, segment, split, first_leaf):
    """Split on the last level: the rows ``rows[segment[0]:segment[1]]`` get the leaf ids
    ``first_leaf`` (left: ``goes_left`` on ``split`` = (f, thr, code)) and ``first_leaf + 1``,
    no partition. Returns the left side's sums, the right side's weight and sum (its leaf's,
    ``leaf_sums``; square sum 0: not needed) and the left row count, each side's sums added
    over its rows in row order (the other side's rows add a zero).

    No branch on the side: a row's target times 1.0 or 0.0 (``m``) is itself or a zero of
    its sign, and adding a zero of either sign to a sum that starts at +0.0 leaves it as
    adding +0.0 does (for finite targets: the engines' targets are), so the sums are those of
    a select, bit for bit. LLVM turned the selects into branches here, which a split's
    random sides mispredicted (about a tenth of a depth-1 fit's time on adult)."""
    X32 = codes.values
    B = codes.codes
    f, thr, code = split
    wl = 0.0
    sl = 0.0
    ql = 0.0
    wr = 0.0
    sr = 0.0
    n_left = 0
    bf = np.uint64(f)
    for j in range(segment[0], segment[1]):
        r = np.uint64(rows[np.uint64(j)])
        m = goes_left(X32, B, r, bf, thr, code)
        on_left = float(m)
        on_right = 1.0 - on_left
        c = 1.0 if w is None else w[r]
        g = target[r]
        wg = c * (g * on_left)  # c g on the left, a zero on the right (c is finite)
        if w is not None:  # unit weights: counted below
            wl += c * on_left
            wr += c * on_right
        sl += wg
        ql += wg * g
        sr += c * (g * on_right)
        n_left += m
        leaf_ids[r] = first_leaf + 1 - m
    if w is None:  # a sum of ones is the row count, exactly (below 2**53)
        wl = float(n_left)
        wr = float(segment[1] - segment[0] - n_left)
    return Sums(wl, sl, ql), Sums(wr, sr, 0.0), n_left


@kernel
def defer_split(codes, pending, i, node_id, node, split, leaves, stats):
    """Entry i of ``pending`` (:data:`records.Pending`): node ``node_id``'s last-level split
    ``split`` = (feature, a, b, code), left to the threads' ``label_pending`` after the node
    loop (``leaves``: its left child's leaf id and its missing rows' direction; ``stats``: the
    node's square sum and impurity)."""
    thr, code = split_rule(codes, split)
    pending.node[i] = node_id
    pending.segment[i, 0] = node.start
    pending.segment[i, 1] = node.end
    pending.rule[i, 0] = split[0]
    pending.rule[i, 1] = code
    pending.threshold[i] = thr
    pending.first_leaf[i] = leaves[0]
    pending.direction[i] = leaves[1]
    pending.node_sums[i, 0] = node.weight
    pending.node_sums[i, 1] = node.sum
    pending.node_sums[i, 2] = stats[0]
    pending.node_sums[i, 3] = stats[1]


@njit(error_model="numpy", cache=True, nogil=True, parallel=True)
def label_pending_par(codes, target, w, rows, leaf_ids, splits, out, order, taken):
    """The threads' labels of the last level's splits (``label_pending``): each thread takes
    the splits in ``order`` (the largest first) one at a time from the shared counter ``taken``
    and labels the split's rows with ``label_last_level`` (``splits``: the splits' segments,
    rules, thresholds and first leaves, :data:`records.Pending`'s fields), leaving its left row
    count and both sides' sums in ``out`` = (n_left, sums). Each split's rows are labelled and
    added up by one thread in row order, so the sums are the one-thread ones on any thread
    count. Arrays one by one: numba drops a parallel loop's writes to an array it reaches
    through a named tuple (numba's GitHub issue 7135)."""
    for _ in prange(order.shape[0]):
        take_pending(codes, target, w, rows, leaf_ids, splits, out, order, taken)


@kernel
def take_pending(codes, target, w, rows, leaf_ids, splits, out, order, taken):
    """``label_pending_par``'s work for one thread: splits in ``order`` until none is left."""
    segment, rule, threshold, firsts = splits
    n_left, sums = out
    while True:
        j = fetch_add(taken, 0)
        if j >= order.shape[0]:
            return
        i = order[j]
        split = (rule[i, 0], threshold[i], rule[i, 1])
        rows_i = (segment[i, 0], segment[i, 1])
        left, right, n_l = label_last_level(
            codes, target, w, rows, leaf_ids, rows_i, split, firsts[i]
        )
        n_left[i] = n_l
        sums[i, 0] = left.weight
        sums[i, 1] = left.sum
        sums[i, 2] = left.sq_sum
        sums[i, 3] = right.weight
        sums[i, 4] = right.sum


@njit(error_model="numpy", cache=True, nogil=True, _nrt=True)
def label_pending(codes, target, w, work, tree, limits, pending, n_pending, par):
    """The ``n_pending`` last-level splits that the node loop left in ``pending``
    (``defer_split``), labelled on the fit's threads (``label_pending_par``, on numba's thread
    count, which the engine and the compiled loop set around a fit: ``numba_threads``), then
    each split finished as on one thread (``last_level_done``). The threads share the splits
    rather than each split's rows: the sides' sums, added in row order, cannot be cut between
    threads. Returns whether every split improves its node (scikit-learn's test, which the
    one-thread grower makes before numbering the next nodes; False: the tree must be grown
    again). On one thread (``par`` None) there is none, and nothing parallel is compiled."""
    if par is None:
        return True
    m = n_pending
    if m == 0:
        return True
    sizes = pending.segment[:m, 1] - pending.segment[:m, 0]
    order = np.argsort(-sizes, kind="mergesort")  # the largest split first
    pending.taken[0] = 0
    splits = (pending.segment, pending.rule, pending.threshold, pending.first_leaf)
    out = (pending.n_left, pending.sums)
    label_pending_par(codes, target, w, work.rows, tree.leaf_ids, splits, out, order, pending.taken)
    for i in range(m):
        stats = pending.node_sums[i]
        node = Node(-1, pending.segment[i, 0], pending.segment[i, 1], stats[1], stats[0], 0.0, 0.0)
        sums = pending.sums[i]
        left = Sums(sums[0], sums[1], sums[2])
        _, _, gain, keep = children_impurity(node, stats[2], stats[3], left, limits)
        if not keep:
            return False
        split = (pending.rule[i, 0], pending.threshold[i], gain, pending.direction[i])
        sides = (left, Sums(sums[3], sums[4], 0.0))
        last_level_done(work, tree, pending.node[i], node, split, pending.n_left[i], sides)
    return True


@kernel
def last_level_done(work, tree, node_id, node, split, n_left, sides):
    """What a kept last-level split of node ``node_id`` leaves once its rows are labelled
    (``split``: feature, threshold, gain, missing rows' direction; ``n_left``: its left row
    count; ``sides``: the left and right :data:`Sums`): the split recorded and both leaves'
    sums kept, on one thread and on the threads (``label_pending``) alike. Its children's ids
    and leaves come first (``last_level_leaves``)."""
    record_split(tree, node_id, split, n_left, node)
    leaf = tree.leaf_of_node[tree.left[node_id]]
    keep_leaf_sums(work.leaf_sums, leaf, sides[0])
    keep_leaf_sums(work.leaf_sums, leaf + 1, sides[1])


@inlined_kernel
def split_rows(codes, target, w, work, node, split, label_l, coarse, par):
    """``partition_rows``, on ``par``'s threads when there are some and the node is large
    (``PARALLEL_ROWS``). Returns (mid, left sums, right sums)."""
    f, thr, code = split
    if par is None:
        return partition_rows(codes, target, w, work, node, f, thr, code, label_l, coarse)
    if node.end - node.start < PARALLEL_ROWS:
        return partition_rows(codes, target, w, work, node, f, thr, code, label_l, coarse)
    return partition_rows_par(codes, target, w, work, node, split, label_l if coarse else -1, par)


@kernel
def split_rule(codes, split):
    """The threshold and rule code of ``split`` = (feature, a, b, code) (``goes_left``): the
    midpoint of a and b (a when it rounds to b); values compared, missing rows going right, on
    a coarse feature without missing values becomes the bin's inner cut (the codes read, not the
    values). The missing rows alone on the right (a = b = inf) get scikit-learn's threshold
    +inf."""
    f, a, b, code = split
    thr = a / 2.0 + b / 2.0
    if thr == b and b != np.inf:
        thr = a
    if code == VALUES_MISSING_RIGHT and codes.positive_offset[f] >= 0 and codes.nan_bin[f] < 0:
        code = INSIDE_BIN - coarse_bin_of(codes, f, a)
    return thr, code


@inlined_kernel
def divide_rows(codes, target, w, work, tree, node, split, last_level, label_l, n_leaves, par):
    """The threshold of ``split`` (feature, a, b, code) and the node's rows divided by it:
    labelled as leaves on the last level (one thread; the threads defer it, ``defer_split``),
    else partitioned. Returns (threshold, mid, left sums, right sums; on the last level the
    right square sum is 0, not needed), ``mid - node.start`` being the left child's row
    count."""
    thr, code = split_rule(codes, split)
    split3 = (split[0], thr, code)
    if last_level:  # children are leaves: label the rows (left / right), no partition
        segment = (node.start, node.end)
        left, right, n_left = label_last_level(
            codes, target, w, work.rows, tree.leaf_ids, segment, split3, n_leaves
        )
        return thr, node.start + n_left, left, right
    coarse = codes.coarse_features.shape[0] > 0  # node labels serve the coarse features only
    mid, left, right = split_rows(codes, target, w, work, node, split3, label_l, coarse, par)
    return thr, mid, left, right


@kernel
def record_split(tree, node_id, split, n_left, node):
    """Node ``node_id`` splits: ``split`` = (feature, threshold, gain, direction of the node's
    missing rows: 0 right, 1 left, -1 none). Without missing rows in the node, a missing value
    goes to the child with more rows (ties right), as scikit-learn's ``missing_go_to_left``."""
    f, thr, gain, direction = split
    tree.feature[node_id] = f
    tree.threshold[node_id] = thr
    tree.gain[node_id] = gain
    if direction < 0:
        direction = np.int64(n_left > node.end - node.start - n_left)
    tree.missing_left[node_id] = direction


@kernel
def make_leaf(work, tree, node_id, node, leaf):
    """Node ``node_id`` becomes leaf ``leaf``, with all its rows (and the node's weight and sum,
    ``leaf_sums``)."""
    tree.leaf_of_node[node_id] = leaf
    keep_leaf_sums(work.leaf_sums, leaf, Sums(node.weight, node.sum, 0.0))
    for j in range(node.start, node.end):
        tree.leaf_ids[work.rows[j]] = leaf


@kernel
def child_mode(target, rows, segment, imp, limits):
    """A child's mode (LEAF or SMALL) and whether it needs a histogram: a leaf with fewer than
    2 rows, at an impurity of at most epsilon (scikit-learn's rule) or when its rows all carry
    one target value (``_nodes.pure``)."""
    start, end = segment
    n_rows = end - start
    mode = LEAF
    if n_rows >= 2 and imp > limits.epsilon and not pure(target, rows, start, end):
        mode = SMALL
    return mode, mode == SMALL and n_rows > limits.small_node


@inlined_kernel
def child_histograms(codes, target, w, work, buf, node, mid, need_l, need_r, n_free, par):
    """Histograms of the children of a node split at ``mid`` whose histogram is in ``buf``:
    the smaller child's from its rows, the larger's as the parent's minus the smaller's (unit
    weights: exact counts; weighted: from its rows, no subtraction, whose rounding could leave
    empty bins non-empty). ``par``: the threads (module docstring). Returns (left buffer, right
    buffer, n_free)."""
    start = node.start
    end = node.end
    small_left = mid - start <= end - mid
    need_small = need_l if small_left else need_r
    into, subtract, buf_l, buf_r, n_free = child_buffers(
        buf, small_left, need_l, need_r, work.free_buffers, n_free
    )
    if into >= 0:
        if into != buf:
            for f in range(work.bin_lo.shape[1]):
                work.bin_lo[into, f] = work.bin_lo[buf, f]
                work.bin_hi[into, f] = work.bin_hi[buf, f]
        if w is None or need_small:
            s_start = start if small_left else mid
            s_end = mid if small_left else end
            if par is None:
                zero_ranges(codes, work, into)
                build_hist(codes, target, w, work, into, s_start, s_end)
            else:
                build_hist_par(codes, target, w, work, into, s_start, s_end, par.hist)
        if subtract and w is None:
            subtract_ranges(codes, work, buf, into)
        elif subtract:
            l_start = mid if small_left else start
            l_end = end if small_left else mid
            if par is None:
                zero_ranges(codes, work, buf)
                build_hist(codes, target, w, work, buf, l_start, l_end)
            else:
                build_hist_par(codes, target, w, work, buf, l_start, l_end, par.hist)
    return buf_l, buf_r, n_free


@kernel
def push(stack, top, parent, is_left, label, segment, depth, mode, n_constant, imp, sums):
    """Put a pending node (rows ``segment`` = (start, end)) on the stack at ``top``."""
    stack.parent[top] = parent
    stack.is_left[top] = is_left
    stack.label[top] = label
    stack.start[top] = segment[0]
    stack.end[top] = segment[1]
    stack.depth[top] = depth
    stack.mode[top] = mode
    stack.n_constant[top] = n_constant
    stack.impurity[top] = imp
    stack.weight[top] = sums.weight
    stack.sum[top] = sums.sum
    stack.sq_sum[top] = sums.sq_sum


@kernel
def push_children(stack, top, parent, label_l, node, mid, depth, modes, n_const, imps, sides):
    """Push the children of ``parent`` (split at ``mid``; labels ``label_l``, ``label_l + 1``;
    ``sides``: their :data:`Sums`), right then left: the left subtree is grown first
    (scikit-learn's order)."""
    left, right = sides
    segment = (mid, node.end)
    push(stack, top, parent, False, label_l + 1, segment, depth, modes[1], n_const, imps[1], right)
    segment = (node.start, mid)
    push(stack, top + 1, parent, True, label_l, segment, depth, modes[0], n_const, imps[0], left)


@kernel
def push_bounds(stack, top, work, node, f, left):
    """The value bounds of the children of a split on feature f just pushed (right at ``top``,
    left at ``top + 1``; ``left``: the left child's sums): monotone constraints."""
    sign = work.monotonic[f]
    lo_l, hi_l, lo_r, hi_r = monotone_child_bounds(
        sign, node.lower, node.upper, left.sum, left.weight, node.sum, node.weight
    )
    stack.lower[top] = lo_r
    stack.upper[top] = hi_r
    stack.lower[top + 1] = lo_l
    stack.upper[top + 1] = hi_l


@kernel
def pop(stack, top, tree, node_id):
    """The pending node at ``top``, which gets id ``node_id`` (linked to its parent). Returns
    (node, depth, mode, impurity, square sum, number of known constant features)."""
    parent = stack.parent[top]
    if parent >= 0:
        if stack.is_left[top]:
            tree.left[parent] = node_id
        else:
            tree.right[parent] = node_id
    node = Node(
        stack.label[top],
        stack.start[top],
        stack.end[top],
        stack.sum[top],
        stack.weight[top],
        stack.lower[top],
        stack.upper[top],
    )
    return (
        node,
        stack.depth[top],
        stack.mode[top],
        stack.impurity[top],
        stack.sq_sum[top],
        stack.n_constant[top],
    )


@kernel
def children_impurity(node, sq_sum, imp, left, limits):
    """The children's impurities (the right child's square sum by subtraction, as scikit-learn's
    ``children_impurity``), the split's gain (weighted impurity decrease over the root weight)
    and whether its improvement is acceptable. Returns (imp_l, imp_r, gain, keep)."""
    wn = node.weight
    wl = left.weight
    wr = wn - wl
    imp_l = impurity(left.sq_sum, left.sum, wl)
    imp_r = impurity(sq_sum - left.sq_sum, node.sum - left.sum, wr)
    improvement = (wn / limits.root_weight) * (imp - (wr / wn * imp_r) - (wl / wn * imp_l))
    gain = (wn * imp - wl * imp_l - wr * imp_r) / limits.root_weight
    return imp_l, imp_r, gain, not (improvement + limits.epsilon < 0.0)


@inlined_kernel
def children_modes(codes, target, w, work, buf, node, mid, imps, n_free, limits, par):
    """The children's modes (leaf, small or histogram buffer; imps = their impurities), their
    histograms built when the parent has one (``par``: the threads). Returns (mode_l, mode_r,
    n_free)."""
    mode_l, need_l = child_mode(target, work.rows, (node.start, mid), imps[0], limits)
    mode_r, need_r = child_mode(target, work.rows, (mid, node.end), imps[1], limits)
    if buf >= 0:
        buf_l, buf_r, n_free = child_histograms(
            codes, target, w, work, buf, node, mid, need_l, need_r, n_free, par
        )
        mode_l = buf_l if need_l else mode_l
        mode_r = buf_r if need_r else mode_r
    return mode_l, mode_r, n_free


@kernel
def last_level_leaves(tree, node_id, n_nodes, n_leaves):
    """Node ``node_id``'s two children are the leaves ``n_leaves``, ``n_leaves + 1`` (node ids
    ``n_nodes``, ``n_nodes + 1``)."""
    tree.left[node_id] = n_nodes
    tree.right[node_id] = n_nodes + 1
    tree.leaf_of_node[n_nodes] = n_leaves
    tree.leaf_of_node[n_nodes + 1] = n_leaves + 1


@inlined_kernel
def root_mode(codes, target, w, work, limits, n_act, imp, built, par):
    """The root's mode, its histogram built when it has one and ``built`` is False (``par``:
    the threads; ``built``: ``root_pass_par`` built it already). Returns (mode, n_free)."""
    n_free = work.free_buffers.shape[0]
    mode = LEAF
    if (
        limits.max_depth > 0
        and n_act >= 2
        and imp > limits.epsilon
        and not pure(target, work.rows, 0, n_act)
    ):
        mode = SMALL
        if n_act > limits.small_node:
            n_free -= 1
            mode = work.free_buffers[n_free]
            full_ranges(codes, work, mode)
            if built:
                pass
            elif par is None:
                if w is None:
                    build_root_hist(codes, target, work, mode)
                else:
                    zero_ranges(codes, work, mode)
                    build_hist(codes, target, w, work, mode, 0, n_act)
            elif w is None:
                build_root_hist_par(codes, target, work, mode, par.hist, None)
            else:
                build_hist_par(codes, target, w, work, mode, 0, n_act, par.hist)
    return mode, n_free


@inlined_kernel
def find_split(codes, target, w, work, node, n_known, buf, limits, par):
    """``split_node`` on one thread (``par`` None) and on the small nodes; with threads, on a
    node with a histogram, ``split_node_par`` (the same split)."""
    if par is None:
        return split_node(codes, target, w, work, node, n_known, buf, limits)
    else:
        if buf < 0:
            return split_node(codes, target, w, work, node, n_known, buf, limits)
        return split_node_par(codes, target, w, work, node, n_known, buf, limits, par)


@kernel
def grow_nodes(codes, target, w, work, tree, stack, limits, n_act, root, built, pending, par):
    """The node loop of ``grow`` on its preallocated records (no reference counting: ``grow``
    allocates, this kernel only reads and writes; ``par``: the threads; ``built``: the root's
    histogram is built, ``root_pass_par``). Returns (n_nodes, n_leaves)."""
    imp0 = impurity(root.sq_sum, root.sum, root.weight)
    mode0, n_free = root_mode(codes, target, w, work, limits, n_act, imp0, built, par)
    push(stack, 0, -1, False, 0, (0, n_act), 0, mode0, 0, imp0, root)
    stack.lower[0] = -np.inf  # the root's value is unbounded
    stack.upper[0] = np.inf
    top = 1
    n_nodes = 0
    n_leaves = 0
    n_labels = 1
    n_pending = 0  # the last level's splits left to the threads (``defer_split``)
    while top > 0:
        top -= 1
        node_id = n_nodes  # node ids in scikit-learn's depth-first order
        n_nodes += 1
        node, depth, buf, imp, sq_sum, n_known = pop(stack, top, tree, node_id)
        best_f, a, b, code, n_const, direction = -1, 0.0, 0.0, -1, 0, -1
        if buf != LEAF:
            best_f, a, b, code, n_const, direction = find_split(
                codes, target, w, work, node, n_known, buf, limits, par
            )
        last_level = depth + 1 >= limits.max_depth
        if par is not None and best_f >= 0 and last_level:  # labelled after the loop
            n_free = release(work.free_buffers, buf, n_free)
            split = (best_f, a, b, code)
            leaves = (n_leaves, direction)
            defer_split(codes, pending, n_pending, node_id, node, split, leaves, (sq_sum, imp))
            n_pending += 1
            last_level_leaves(tree, node_id, n_nodes, n_leaves)
            n_nodes += 2
            n_leaves += 2
            continue
        thr, mid, imp_l, imp_r, gain = 0.0, node.start, 0.0, 0.0, 0.0
        sums_l = sums_r = Sums(0.0, 0.0, 0.0)
        if best_f >= 0:
            split = (best_f, a, b, code)
            thr, mid, sums_l, sums_r = divide_rows(
                codes, target, w, work, tree, node, split, last_level, n_labels, n_leaves, par
            )
            if not last_level:
                n_labels += 2  # the children's labels are taken by the partition
            imp_l, imp_r, gain, keep = children_impurity(node, sq_sum, imp, sums_l, limits)
            if not keep:
                best_f = -1
        if best_f < 0:  # leaf
            n_free = release(work.free_buffers, buf, n_free)
            make_leaf(work, tree, node_id, node, n_leaves)
            n_leaves += 1
            continue
        chosen = (best_f, thr, gain, direction)
        if last_level:
            n_free = release(work.free_buffers, buf, n_free)
            last_level_leaves(tree, node_id, n_nodes, n_leaves)
            last_level_done(work, tree, node_id, node, chosen, mid - node.start, (sums_l, sums_r))
            n_nodes += 2
            n_leaves += 2
            continue
        record_split(tree, node_id, chosen, mid - node.start, node)
        # the children's own sums are the partition's fresh ones (scikit-learn's criterion.init)
        mode_l, mode_r, n_free = children_modes(
            codes, target, w, work, buf, node, mid, (imp_l, imp_r), n_free, limits, par
        )
        modes = (mode_l, mode_r)
        imps = (imp_l, imp_r)
        sides = (sums_l, sums_r)
        push_children(
            stack, top, node_id, n_labels - 2, node, mid, depth + 1, modes, n_const, imps, sides
        )
        push_bounds(stack, top, work, node, best_f, sums_l)
        top += 2
    if not label_pending(codes, target, w, work, tree, limits, pending, n_pending, par):
        return -1, -1  # a deferred split does not improve its node: ``grow_in_place`` regrows
    return n_nodes, n_leaves


@kernel
def new_records(scratch, p, max_nodes, seed, monotonic):
    """The records of one tree, on the engine's ``scratch`` (nothing allocated): its workspace
    (with the features' monotone constraints), its node arrays and the node stack, reset as a
    new tree needs them (histogram ranges and node arrays as freshly allocated ones were, the
    free buffers, the feature order and the random state); the other arrays are written before
    they are read."""
    n_buf = scratch.hist.shape[0]
    scratch.rng_state[0] = seed
    for b in range(n_buf):
        scratch.free_buffers[b] = n_buf - 1 - b
        for f in range(p):
            scratch.bin_lo[b, f] = 0
            scratch.bin_hi[b, f] = 0
    for f in range(p):
        scratch.features[f] = f
    tree = scratch.tree
    reset_tree(tree, max_nodes)
    work = Workspace(
        scratch.rows,
        scratch.spare_rows,
        scratch.node_label,
        scratch.target_range,
        scratch.hist,
        scratch.bin_lo,
        scratch.bin_hi,
        scratch.free_buffers,
        scratch.bin_values,
        scratch.bin_targets,
        scratch.bin_weights,
        scratch.small_values,
        scratch.small_targets,
        scratch.small_weights,
        scratch.nonempty,
        scratch.inner_bins,
        scratch.inner_sum,
        scratch.inner_weight,
        scratch.floor_scans,
        scratch.leaf_sums,
        scratch.features,
        scratch.constant,
        scratch.rng_state,
        monotonic,
    )
    return work, tree, scratch.stack


@njit(error_model="numpy", cache=True, nogil=True, parallel=True)
def number_rows_par(codes, target, work, n_act, stats):
    """``root_pass``'s row list and labels with unit weights (every row, label 0), on k threads
    (k = ``stats.shape[0]``), each a block of the rows, with its block's target range: its
    largest target, its largest negated target and the sums of its positive and of its
    negative targets in stats[t] (coarse features only; zeros otherwise)."""
    coarse = codes.coarse_features.shape[0] > 0
    rows = work.rows
    labels = work.node_label
    k = stats.shape[0]
    for t in prange(k):
        start, end = row_block(0, n_act, t, k)
        g_pos = 0.0
        g_neg = 0.0
        above = 0.0
        below = 0.0
        for j in range(start, end):
            rows[j] = j
            if coarse:
                labels[j] = 0
                g = target[j]
                g_pos = g if g > g_pos else g_pos
                g_neg = -g if -g > g_neg else g_neg
                above += g if g > 0.0 else 0.0
                below += 0.0 if g > 0.0 else g
        stats[t, 0] = g_pos
        stats[t, 1] = g_neg
        stats[t, 2] = above
        stats[t, 3] = below


@kernel
def root_pass_par(codes, target, work, limits, n_act, par):
    """``root_pass`` with unit weights on the threads (every row): the row list, labels and
    target range by blocks of rows (``number_rows_par``), then, when the root will need a
    histogram (``root_mode``'s tests that do not read the sums), that histogram built in the
    buffer ``root_mode`` takes, thread 0 adding the root's sums beside the other threads'
    features (``histogram.build_root_hist_par``); else the sums alone. Returns (root sums,
    whether the histogram is built: ``root_mode`` then uses it, or leaves it unused when the
    root turns out to be a leaf).

    The root's sums are the serial pass's bit for bit (the same additions, in row order). The
    sums of positive and of negative targets are added block by block, so their last bits may
    differ from one thread's: they only choose the coarse bins' bound (``range_bounds``), which
    decides what is evaluated, never the split."""
    stats = par.block_stats
    number_rows_par(codes, target, work, n_act, stats)
    g_pos = 0.0
    g_neg = 0.0
    above = 0.0
    below = 0.0
    for t in range(stats.shape[0]):
        g_pos = max(g_pos, stats[t, 0])
        g_neg = max(g_neg, stats[t, 1])
        above += stats[t, 2]
        below += stats[t, 3]
    coarse = codes.coarse_features.shape[0] > 0
    set_target_range(work, coarse, (above, below), float(n_act), (g_pos, g_neg))
    built = limits.max_depth > 0 and n_act > limits.small_node
    if not built:
        s0, q0 = target_sums(target, n_act)
        return Sums(float(n_act), s0, q0), built
    u = work.free_buffers[work.free_buffers.shape[0] - 1]  # the one root_mode takes
    full_ranges(codes, work, u)
    build_root_hist_par(codes, target, work, u, par.hist, par.root_sums)
    return Sums(float(n_act), par.root_sums[0], par.root_sums[1]), built


@kernel
def full_ranges(codes, work, u):
    """Buffer u's bin ranges: every bin of every feature (the root's)."""
    for f in range(codes.n_bins.shape[0]):
        work.bin_lo[u, f] = 0
        work.bin_hi[u, f] = codes.n_bins[f] - 1


@kernel
def root_pass(codes, target, w, work, n_act):
    """One pass over the rows taking part: row list and labels (unit weights: every row), root
    sums and, with coarse features, the target's range and whether the tree builds the positive
    parts (``work.target_range``, ``range_bounds``). Returns (root sums, smallest weight)."""
    coarse = codes.coarse_features.shape[0] > 0  # labels, target range: coarse features only
    rows = work.rows
    wmin = np.inf
    w0 = 0.0
    s0 = 0.0
    q0 = 0.0
    g_pos = 0.0  # the largest target and the largest negated target
    g_neg = 0.0
    above = 0.0  # the sums of w g over the rows of positive and of negative target
    below = 0.0
    for j in range(n_act):
        if w is None:
            rows[j] = j
            if coarse:
                work.node_label[j] = 0
        r = rows[j]
        c = 1.0 if w is None else w[r]
        g = target[r]
        wg = c * g
        w0 += c
        s0 += wg
        q0 += wg * g
        if coarse:
            g_pos = g if g > g_pos else g_pos
            g_neg = -g if -g > g_neg else g_neg
            above += wg if g > 0.0 else 0.0
            below += 0.0 if g > 0.0 else wg
        if c < wmin:
            wmin = c
    set_target_range(work, coarse, (above, below), w0, (g_pos, g_neg))
    return Sums(w0, s0, q0), wmin


@kernel
def set_target_range(work, coarse, sides, weight, extremes):
    """``work.target_range``: whether the tree builds the coarse features' positive parts
    (``range_bounds`` on ``sides`` = the sums of w g over the rows of positive and of negative
    target, and ``extremes`` = the largest target and the largest negated target), then those
    two extremes and the inverse of their sum, the range (``records.Workspace``)."""
    g_pos, g_neg = extremes
    work.target_range[1] = g_pos
    work.target_range[2] = g_neg
    # the range's inverse, so that the coarse bins' bounds multiply rather than divide (a bound
    # only filters candidates, within margins far above a rounding's change)
    span = g_pos + g_neg
    work.target_range[3] = 1.0 / span if span > 0.0 else 0.0
    work.target_range[0] = (
        1.0 if coarse and not range_bounds(sides[0], sides[1], weight, g_pos, g_neg) else 0.0
    )


@kernel
def range_bounds(above, below, weight, g_pos, g_neg):
    """Whether the tree's coarse bins bound their inner candidates by the target's range
    (``splitting.sign_parts``) rather than by their positive parts, which every histogram then
    adds for each row and coarse feature: when the rows' targets lie, on average, at least
    ``RANGE_TIGHTNESS`` of the way to the range's end on their side (``above`` and ``below``:
    the sums of w g over the rows of positive and of negative target; ``weight``: the rows'
    weight). The two bounds coincide when every target is at an end (sign-like targets: the
    gradient of ``lad``, most proximal directions of the piecewise-linear losses); the range's
    is looser in between and useless on Gaussian-like targets (``ls``), where the positive
    parts are kept. Either bound only decides which candidates are evaluated: the split is
    the same."""
    if weight <= 0.0:
        return False
    share = 0.0
    if g_pos > 0.0:
        share += above / g_pos
    if g_neg > 0.0:
        share -= below / g_neg
    return share >= RANGE_TIGHTNESS * weight


@njit(error_model="numpy", cache=True, nogil=True)
def grow(codes, target, w, scratch, n_act, max_depth, max_nodes, seed, eps, thr, small, monotonic):
    """Grow one tree depth-first (scikit-learn's node order); see the exact engine's docstring.

    ``scratch.rows[:n_act]``: the rows taking part (``node_label`` 0 on them, -1 elsewhere);
    with unit weights (``w`` None) every row, set here. ``monotonic``: (p,) int8, each
    feature's monotone constraint (zeros: none). Returns the node arrays (feature, threshold,
    left, right, leaf_of_node, gain, missing_left), every row's leaf id and the number of leaves.
    """
    sizes = (n_act, max_depth, max_nodes, seed)
    return grow_tree(codes, target, w, scratch, sizes, (eps, thr, small), monotonic, None)


@njit(error_model="numpy", cache=True, nogil=True)
def grow_tree(codes, target, w, scratch, sizes, consts, monotonic, par):
    """``grow`` with ``sizes`` = (n_act, max_depth, max_nodes, seed), ``consts`` = (eps, thr,
    small) and ``par``: None (one thread, ``grow``) or the threads' scratch (``n_jobs`` > 1;
    module docstring). The returned arrays are the tree's own (copies of the scratch's)."""
    n_nodes, n_leaves = grow_in_place(codes, target, w, scratch, sizes, consts, monotonic, par)
    return own_tree(scratch.tree, n_nodes, n_leaves)


@kernel
def grow_in_place(codes, target, w, scratch, sizes, consts, monotonic, par):
    """``grow_tree`` leaving the tree in ``scratch.tree`` (valid until the next tree grown on
    this scratch: the compiled loop reads it before growing the next one). Returns (n_nodes,
    n_leaves). A ``kernel`` (no reference counting): it allocates nothing and returns numbers
    only, so taking the records' arrays out costs no atomic operation per array, which was a
    fifth of an iteration of the compiled loop on small trees (``docs/engines.md``)."""
    n_act, max_depth, max_nodes, seed = sizes
    eps, thr, small = consts
    p = codes.values.shape[1]
    work, tree, stack = new_records(scratch, p, max_nodes, seed, monotonic)
    if par is not None and w is None and n_act >= PARALLEL_ROWS:
        limits = Limits(max_depth, eps, thr, small, 1.0, float(n_act))  # root_pass's, unit w
        root, built = root_pass_par(codes, target, work, limits, n_act, par)
    else:
        root, wmin = root_pass(codes, target, w, work, n_act)
        limits = Limits(max_depth, eps, thr, small, wmin, root.weight)
        built = False
    records = (work, tree, stack, limits)
    n_nodes, n_leaves = grow_nodes(
        codes, target, w, *records, n_act, root, built, scratch.pending, par
    )
    if n_nodes >= 0:
        return n_nodes, n_leaves
    # The threads deferred a last-level split that turns out not to improve its node (scikit-
    # learn's test, which rounding alone can fail): the one-thread grower makes that node a
    # leaf before numbering the next nodes, so the tree is grown again, on one thread, from the
    # rows as they came in. Rare; the same tree as on one thread in every case.
    restore_rows(work, w)
    work, tree, stack = new_records(scratch, p, max_nodes, seed, monotonic)
    root, wmin = root_pass(codes, target, w, work, n_act)
    records = (work, tree, stack, limits)
    return grow_nodes(codes, target, w, *records, n_act, root, False, scratch.pending, None)


@kernel
def restore_rows(work, w):
    """The rows taking part and their node labels as a weighted tree starts from them (each
    row of positive weight, in increasing order, label 0; the others keep label -1): the
    partitions reorder the rows and relabel them, never the others. Unit weights: nothing
    (``root_pass`` sets every row)."""
    if w is None:
        return
    labels = work.node_label
    j = 0
    for r in range(labels.shape[0]):
        if labels[r] >= 0:
            work.rows[j] = r
            labels[r] = 0
            j += 1
