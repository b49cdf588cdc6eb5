"""Split finding of the exact engine: scikit-learn's ``node_split_best`` (random feature order,
constant-feature bookkeeping, first strictly best proxy ``S_L^2 / W_L + S_R^2 / W_R``) over the
candidates of each feature, read from the node's histogram, from a coarse bin's sorted rows, or
from a small node's sorted values (see :mod:`proxboost.engines.exact`).

On a node with a histogram and at least as many rows as the histogram has bins, the loop starts
from the node's *floor* (``edge_floor``): the best candidate read from the histograms alone, which
the node's best cannot be below. The coarse bins whose bound is below it are then skipped from the
first feature on, not only once the loop has met a good candidate; the split is unchanged (the
running best only filters, see below). On smaller nodes reading every bin once more costs more
than the skipped bins would.

With threads (``n_jobs`` > 1), a node with a histogram is split by
:mod:`proxboost.engines._exact.split_threads` (the same split bit for bit)."""

import numpy as np

from proxboost.engines._exact.records import (
    FEATURE_THRESHOLD,
    VALUES_MISSING_LEFT,
)
from proxboost.engines._nodes import (
    SMALL_LANES,
    SMALL_ROW_BITS,
    inlined_kernel,
    kernel,
    monotone_admissible,
    rank_below,
    small_ranks,
)

#: ``rank_small``'s key of a missing value (plus its place): above every value's (< 2**38).
NAN_KEY = 1 << 40


@kernel
def rand_int(low, high, state):
    """scikit-learn's ``rand_int``: low + our_rand_r(state) % (high - low) (xorshift32)."""
    s = state[0]
    if s == 0:
        s = 1  # DEFAULT_SEED
    s ^= (s << 13) & 0xFFFFFFFF
    s ^= s >> 17
    s ^= (s << 5) & 0xFFFFFFFF
    state[0] = s
    return low + (s % 2147483648) % (high - low)


@kernel
def proxy(sl, wl, s_node, w_node):
    """The proxy of a split with left sums (sl, wl) in a node of sums (s_node, w_node)."""
    sr = s_node - sl
    return sl * sl / wl + sr * sr / (w_node - wl)


@kernel
def may_beat(sl, wl, s_node, w_node, best):
    """Division-free pre-test: False only when proxy(sl, wl) is certainly below best.

    proxy > best  <=>  sl^2 W_R + sr^2 W_L > best W_L W_R; the relative margin covers the
    rounding of both sides, so a candidate passing the exact test always passes this one.
    """
    wr = w_node - wl
    sr = s_node - sl
    return sl * sl * wr + sr * sr * wl >= best * (wl * wr) * (1.0 - 1e-9)


@kernel
def admitted(work, f, sl, wl, node):
    """Whether feature f's monotone constraint admits a split with left sums (sl, wl)."""
    return monotone_admissible(
        work.monotonic[f], sl, wl, node.sum, node.weight, node.lower, node.upper
    )


@kernel
def scan_values(cv, cg, cw, w, k, sl, wl, node, sign, thr, best, tie_wins):
    """Candidates between consecutive sorted node values cv[:k] (w g in cg, w in cw; unit
    weights, cw unused, when ``w`` is None), the sums of the rows left of cv[0] being (sl, wl).
    A candidate wins with a proxy above ``best``, or equal to it while ``tie_wins`` (the best
    so far comes later in the scan order), if the feature's monotone constraint ``sign``
    admits it. Returns (found, best, a, b, sl, wl) with the sums after cv[:k]."""
    s_node = node.sum
    w_node = node.weight
    found = 0
    a = 0.0
    b = 0.0
    for j in range(k - 1):
        sl += cg[j]
        wl += 1.0 if w is None else cw[j]
        v = cv[j]
        vn = cv[j + 1]
        if vn > v + thr and may_beat(sl, wl, s_node, w_node, best):
            prox = proxy(sl, wl, s_node, w_node)
            if (prox > best or (tie_wins and prox == best)) and monotone_admissible(
                sign, sl, wl, s_node, w_node, node.lower, node.upper
            ):
                best = prox
                found = 1
                a = v
                b = vn
                tie_wins = False
    sl += cg[k - 1]
    wl += 1.0 if w is None else cw[k - 1]
    return found, best, a, b, sl, wl


@kernel
def sort_values(cv, cg, cw, k):
    """Sort cv[:k] ascending, carrying cg, cw (shell sort: few values, no allocation)."""
    gap = 1
    while gap < k // 3:
        gap = 3 * gap + 1
    while gap >= 1:
        for i in range(gap, k):
            v = cv[i]
            g = cg[i]
            c = cw[i]
            j = i
            while j >= gap and cv[j - gap] > v:
                cv[j] = cv[j - gap]
                cg[j] = cg[j - gap]
                cw[j] = cw[j - gap]
                j -= gap
            cv[j] = v
            cg[j] = g
            cw[j] = c
        gap //= 3


@kernel
def collect_bin(codes, target, w, work, node, f, code):
    """The node's rows in coarse bin ``code`` of feature f, sorted by value into the
    workspace's bin_values, bin_targets, bin_weights. Returns their number.

    From the bin's global sorted segment (membership by node label) when it is not much longer
    than the node, else from the node's rows (then sorted). The segment's loop is branch-free
    (every row written at the next slot, the count advanced by its membership): a node holds a
    quarter to a half of a segment's rows in no order, and a branch per row made the collection
    about 7 % of a tree slower on one thread (2·10^5 x 20, depth 3).
    """
    cv = work.bin_values
    cg = work.bin_targets
    cw = work.bin_weights
    slot = codes.sorted_slot[f]
    seg_lo = codes.bin_start[slot, code]
    seg_hi = codes.bin_start[slot, code + 1]
    k = 0
    if seg_hi - seg_lo <= 4 * (node.end - node.start):
        So = codes.sorted_rows[slot]
        Sv = codes.sorted_values[slot]
        nid = work.node_label
        # a node of every row (the root, unit weights) needs no label: one gather less per row
        every_row = node.end - node.start == So.shape[0]
        label = node.label
        for j in range(seg_lo, seg_hi):
            ju = np.uint64(j)
            r = np.uint64(So[ju])
            ku = np.uint64(k)
            c = 1.0 if w is None else w[r]
            cv[ku] = Sv[ju]
            cg[ku] = c * target[r]
            cw[ku] = c
            k += 1 if every_row else np.int64(nid[r] == label)
    else:
        X32 = codes.values
        B = codes.codes
        rows = work.rows
        for j in range(node.start, node.end):
            r = rows[j]
            if B[r, f] == code:
                c = 1.0 if w is None else w[r]
                cv[k] = X32[r, f]
                cg[k] = c * target[r]
                cw[k] = c
                k += 1
        sort_values(cv, cg, cw, k)
    return k


@inlined_kernel
def nonempty_bins(work, buf, o, f, dense):
    """List feature f's non-empty bins (histogram offset o) of buffer ``buf`` in the workspace's
    ``nonempty`` (branch-free), narrow the buffer's range of f to them; return their number.

    ``dense``: the node holds every training row (``holds_every_row``), so every bin of its
    range holds rows (the bins are cut from those rows' values) and the range is listed
    without reading the histogram, in a loop the compiler vectorises: the same list."""
    H = work.hist[buf]
    lo = work.bin_lo[buf]
    hi = work.bin_hi[buf]
    nonempty = work.nonempty
    if dense:
        m = hi[f] - lo[f] + 1
        first = lo[f]
        for j in range(m):
            nonempty[np.uint64(j)] = first + j
        return m
    m = 0
    for b in range(lo[f], hi[f] + 1):
        nonempty[np.uint64(m)] = b
        m += H[np.uint64(2 * (o + b) + 1)] > 0.0
    lo[f] = nonempty[0]
    hi[f] = nonempty[m - 1]
    return m


@kernel
def holds_every_row(codes, node):
    """Whether ``node`` holds every row the bins were cut from (the root of a tree on every
    training row): then each of its bins holds rows (``nonempty_bins``)."""
    return node.end - node.start == codes.values.shape[0]


@inlined_kernel
def scan_exact_coded(codes, work, buf, f, m, node, best):
    """Candidates of an exact-coded feature f between its m consecutive non-empty bins.
    Returns (found, best, a, b, lo_bin, hi_bin); found -1: constant feature."""
    hv = codes.bin_value[f]
    if hv[work.nonempty[m - 1]] <= hv[work.nonempty[0]] + FEATURE_THRESHOLD:
        return -1, best, 0.0, 0.0, -1, -1
    found, best, a, bb, lo_bin, hi_bin, _, _ = coded_pass(
        codes, work, buf, f, m, node, best, 0.0, 0.0
    )
    return found, best, a, bb, lo_bin, hi_bin


@inlined_kernel
def coded_pass(codes, work, buf, f, m, node, best, sl, wl):
    """Candidates of an exact-coded feature f between its m consecutive non-empty bins listed in
    the workspace, the sums of the rows left of the first being (sl, wl). Returns (found, best,
    a, b, lo_bin, hi_bin, sl, wl) with the sums after the m bins."""
    thr = FEATURE_THRESHOLD
    H = work.hist[buf]
    nonempty = work.nonempty
    hv = codes.bin_value[f]
    o = codes.bin_offset[f]
    found = 0
    a = 0.0
    bb = 0.0
    lo_bin = -1
    hi_bin = -1
    prev = -1
    for j in range(m):
        b = nonempty[j]
        if (
            prev >= 0
            and hv[np.uint64(b)] > hv[np.uint64(prev)] + thr
            and may_beat(sl, wl, node.sum, node.weight, best)
        ):
            prox = proxy(sl, wl, node.sum, node.weight)
            if prox > best and admitted(work, f, sl, wl, node):
                best = prox
                found = 1
                a = hv[prev]
                bb = hv[b]
                lo_bin = prev
                hi_bin = b
        sl += H[np.uint64(2 * (o + b))]
        wl += H[np.uint64(2 * (o + b) + 1)]
        prev = b
    return found, best, a, bb, lo_bin, hi_bin, sl, wl


@inlined_kernel
def scan_bin_edges(codes, work, buf, f, m, node, min_weight, best, start):
    """Candidates of a coarse feature f between its m non-empty bins (from the histogram), the
    sums of the rows left of the first being ``start`` = (sl, wl), listing in the workspace the
    bins with room for a candidate inside, with their left sums. Returns (found, best, lo_bin,
    hi_bin, j_best, n_inner)."""
    H = work.hist[buf]
    nonempty = work.nonempty
    multi = codes.multi_valued[f]
    o = codes.bin_offset[f]
    inner = work.inner_bins
    inner_s = work.inner_sum
    inner_w = work.inner_weight
    found = 0
    lo_bin = -1
    hi_bin = -1
    sl, wl = start
    j_best = -1
    n_in = 0
    for j in range(m):
        b = nonempty[j]
        wb = H[np.uint64(2 * (o + b) + 1)]
        if j > 0 and may_beat(sl, wl, node.sum, node.weight, best):
            prox = proxy(sl, wl, node.sum, node.weight)
            if prox > best and admitted(work, f, sl, wl, node):
                best = prox
                found = 1
                lo_bin = nonempty[j - 1]
                hi_bin = b
                j_best = j
        # kept (branch-free) when the bin has two values and room on each side
        inner[np.uint64(n_in)] = j
        inner_s[np.uint64(n_in)] = sl
        inner_w[np.uint64(n_in)] = wl
        n_in += np.int64(multi[np.uint64(b)]) & np.int64(wb >= 2.0 * min_weight)
        sl += H[np.uint64(2 * (o + b))]
        wl += wb
    return found, best, lo_bin, hi_bin, j_best, n_in


@kernel
def sign_parts(work, s, wb, H, slot):
    """(upper, lower) bounds on the sum of w g over any rows of a coarse bin whose rows sum to
    ``s`` with weight ``wb``: its positive and negative parts when the tree builds them
    (``H[slot]``: the positive parts, ``histogram.builds_positive``), else from the target's
    range [-g_neg, g_pos] (``work.target_range``): rows of weight W' sum to at most
    min(W' g_pos, s + (wb - W') g_neg), whose largest value over W' is
    g_pos (s + wb g_neg) / (g_pos + g_neg), and symmetrically at least
    -g_neg (wb g_pos - s) / (g_pos + g_neg). Both are the positive and negative parts when
    every target is at an end of the range. The division is a product with the range's
    inverse, computed once per tree (``grower.set_target_range``; 0 when every target is 0)."""
    if work.target_range[0] > 0.0:
        pos = H[np.uint64(slot)]
        return pos, s - pos
    g_pos = work.target_range[1]
    g_neg = work.target_range[2]
    inverse = work.target_range[3]
    return g_pos * inverse * (s + wb * g_neg), -(g_neg * inverse) * (wb * g_pos - s)


@kernel
def bound_may_beat(bound, best):
    """Whether a bound on a bin's inner candidates lets them be evaluated: above ``best`` up to
    a relative margin covering the rounding of both (a candidate equal to the best may still win
    a tie)."""
    return bound + 1e-9 * (abs(bound) + abs(best)) > best


@kernel
def inner_bound_may_beat(sl, wl, wb, pos, neg, node, min_weight, best):
    """Whether the candidates inside a coarse bin (left sums sl, wl before it; its weight wb,
    positive and negative w g sums) may beat ``best``: the proxy is convex in each of S_L and
    W_L, so its maximum over the bin's box of possible (S_L, W_L) is at a corner."""
    s_node = node.sum
    w_node = node.weight
    w_lo = wl + min_weight
    w_hi = wl + wb - min_weight
    # a cheap looser bound first (each term at its own worst corner), then the corners
    lo_l = sl + neg
    hi_l = sl + pos
    lo_r = s_node - hi_l
    hi_r = s_node - lo_l
    # loose > best without division: A W_hi' + B W_lo > best W_lo W_hi' (W_hi' = W - w_hi)
    aa = max(lo_l * lo_l, hi_l * hi_l)
    cc = max(lo_r * lo_r, hi_r * hi_r)
    w_rr = w_node - w_hi
    refine = aa * w_rr + cc * w_lo >= best * (w_lo * w_rr) * (1.0 - 1e-9)
    # then the corners, each by the candidates' division-free pre-test rather than the largest
    # corner proxy (eight divisions): a corner whose proxy reaches best passes either way, the
    # two differ only inside their 1e-9 margins, and a bin let through costs only its
    # evaluation, so the split is the same. All four tests, no early exit: cheaper than the
    # branches on whitewine's pinball fits
    if refine:
        refine = (
            may_beat(lo_l, w_lo, s_node, w_node, best)
            | may_beat(hi_l, w_lo, s_node, w_node, best)
            | may_beat(lo_l, w_hi, s_node, w_node, best)
            | may_beat(hi_l, w_hi, s_node, w_node, best)
        )
    return refine


@inlined_kernel
def corner_bound(sl, wl, wb, pos, neg, node, min_weight):
    """The largest proxy at the corners of the box of ``inner_bound_may_beat``: a bound on the
    proxy of the candidates inside the bin (``inner_bound``: the threads' order of the bins;
    ``inner_bound_may_beat`` tests the corners without dividing)."""
    s_node = node.sum
    w_node = node.weight
    w_lo = wl + min_weight
    w_hi = wl + wb - min_weight
    return max(
        max(proxy(sl + neg, w_lo, s_node, w_node), proxy(sl + pos, w_lo, s_node, w_node)),
        max(proxy(sl + neg, w_hi, s_node, w_node), proxy(sl + pos, w_hi, s_node, w_node)),
    )


@kernel
def range_bound_may_beat(sl, wl, s, wb, work, node, min_weight, best):
    """Whether the candidates inside a coarse bin (left sums sl, wl before it; its sums s, wb)
    may beat ``best``, by the target's range [-g_neg, g_pos] (``work.target_range``): rows of
    weight W' taken from the bin sum to S' with -g_neg W' <= S' <= g_pos W', and the bin's
    other rows to s - S' within the same bounds on wb - W'. That parallelogram, cut to
    min_weight <= W' <= wb - min_weight, holds every inner candidate, and the proxy is jointly
    convex in (S_L, W_L), so its largest value there is at a vertex: the strip's four
    corners and the parallelogram's two other vertices when inside. The box of
    ``inner_bound_may_beat`` lets through candidates taking a bin's whole positive part in one
    row; this bound does not, which matters where the range is lopsided (pinball's proximal
    directions at tau = 0.9 lie in [tau - 1, tau])."""
    return bound_may_beat(range_bound(sl, wl, s, wb, work, node, min_weight), best)


@inlined_kernel
def range_bound(sl, wl, s, wb, work, node, min_weight):
    """The bound of ``range_bound_may_beat``: the proxy's largest value over the parallelogram."""
    g_pos = work.target_range[1]
    g_neg = work.target_range[2]
    s_node = node.sum
    w_node = node.weight
    bound = -np.inf
    for side in range(2):
        wp = min_weight if side == 0 else wb - min_weight
        hi = min(g_pos * wp, s + g_neg * (wb - wp))
        lo = max(-g_neg * wp, s - g_pos * (wb - wp))
        bound = max(bound, proxy(sl + hi, wl + wp, s_node, w_node))
        bound = max(bound, proxy(sl + lo, wl + wp, s_node, w_node))
    inverse = work.target_range[3]  # 1 / (g_pos + g_neg), 0 when both are 0
    if inverse > 0.0:
        w_up = (s + wb * g_neg) * inverse  # where S' = g_pos W' meets s - S' = -g_neg (wb - W')
        if min_weight < w_up < wb - min_weight:
            bound = max(bound, proxy(sl + g_pos * w_up, wl + w_up, s_node, w_node))
        w_down = (wb * g_pos - s) * inverse  # where S' = -g_neg W' meets s - S' = g_pos (wb - W')
        if min_weight < w_down < wb - min_weight:
            bound = max(bound, proxy(sl - g_neg * w_down, wl + w_down, s_node, w_node))
    return bound


@inlined_kernel
def scan_binned(codes, target, w, work, node, f, buf, min_weight, best):
    """Candidates of feature f on a node with histogram buffer ``buf``, inside the buffer's bin
    range of f, which is narrowed to the node's non-empty bins.

    Exact-coded features: one bin per distinct value, candidates between consecutive non-empty
    bins. Coarse features (bin edges at gaps wider than FEATURE_THRESHOLD): the candidates
    between non-empty bins come from the histogram; those inside a bin are evaluated exactly
    (its node rows sorted) only when a bound on their proxy beats the best so far. The winner
    is the first (in value order) of the largest proxy, as in one ordered pass: an inner
    candidate before the best boundary candidate of this feature (bin j < j_best) also wins on
    an equal proxy. Returns (found, best, a, b, lo_bin, hi_bin): found -1 = constant feature;
    a candidate between two bins returns them (lo_bin, hi_bin; those of a coarse feature are
    then resolved into values a, b), one inside a coarse bin its values (a, b) and lo_bin = -1.
    """
    m = nonempty_bins(work, buf, codes.bin_offset[f], f, holds_every_row(codes, node))
    return scan_listed(codes, target, w, work, node, f, buf, m, min_weight, best)


@inlined_kernel
def scan_listed(codes, target, w, work, node, f, buf, m, min_weight, best):
    """``scan_binned`` once feature f's m non-empty bins are listed in the workspace."""
    thr = FEATURE_THRESHOLD
    if codes.positive_offset[f] < 0:
        return scan_exact_coded(codes, work, buf, f, m, node, best)
    cv = work.bin_values
    cg = work.bin_targets
    cw = work.bin_weights
    first = work.nonempty[0]
    if first == work.nonempty[m - 1]:
        if not codes.multi_valued[f, first]:  # one coarse bin holding one value: constant
            return -1, best, 0.0, 0.0, -1, -1
        k = collect_bin(codes, target, w, work, node, f, first)
        if cv[k - 1] <= cv[0] + thr:
            return -1, best, 0.0, 0.0, -1, -1
        found, best, a, bb, _, _ = scan_values(
            cv, cg, cw, w, k, 0.0, 0.0, node, work.monotonic[f], thr, best, False
        )
        return found, best, a, bb, -1, -1
    return coarse_pass(codes, target, w, work, node, f, buf, m, min_weight, best, (0.0, 0.0))


@inlined_kernel
def coarse_pass(codes, target, w, work, node, f, buf, m, min_weight, best, start):
    """Candidates of a coarse feature f with m >= 2 non-empty bins listed in the workspace, the
    sums of the rows left of the first being ``start`` = (sl, wl): between the bins from the
    histogram, inside a bin exactly when a bound on their proxy may beat the best so far (see
    ``scan_binned``). Returns (found, best, a, b, lo_bin, hi_bin) as ``scan_binned``."""
    found, best, lo_bin, hi_bin, j_best, n_in = scan_bin_edges(
        codes, work, buf, f, m, node, min_weight, best, start
    )
    a = 0.0
    bb = 0.0
    for t in range(n_in):
        j = work.inner_bins[t]
        b = work.nonempty[np.uint64(j)]
        inner = (b, work.inner_sum[t], work.inner_weight[t])
        res, best, va, vb = inner_candidate(
            codes, target, w, work, node, f, buf, inner, min_weight, best, j < j_best
        )
        if res > 0:
            found = 1
            a = va
            bb = vb
            lo_bin = -1
            j_best = -1  # the later bins come after this candidate
    return found, best, a, bb, lo_bin, hi_bin


@inlined_kernel
def bin_sums(codes, work, f, buf, b):
    """Coarse bin b of feature f in histogram ``buf``: its w g and w sums and the bounds on the
    w g sum of any of its rows (``sign_parts``)."""
    H = work.hist[buf]
    i = 2 * (codes.bin_offset[f] + b)
    s_b = H[np.uint64(i)]
    w_b = H[np.uint64(i + 1)]
    pos, neg = sign_parts(work, s_b, w_b, H, codes.positive_offset[f] + b)
    return s_b, w_b, pos, neg


@inlined_kernel
def inner_may_beat(codes, work, node, f, buf, inner, min_weight, best):
    """Whether coarse bin b of feature f (``inner`` = (b, sl, wl), as ``inner_candidate``) may
    hold a candidate beating ``best``: both bounds on its inner candidates' proxy allow it."""
    b, sl, wl = inner
    s_b, w_b, pos, neg = bin_sums(codes, work, f, buf, b)
    if not inner_bound_may_beat(sl, wl, w_b, pos, neg, node, min_weight, best):
        return False
    return range_bound_may_beat(sl, wl, s_b, w_b, work, node, min_weight, best)


@kernel
def inner_bound(codes, work, node, f, buf, inner, min_weight):
    """The tighter of the two bounds of ``inner_may_beat`` on bin b's inner candidates."""
    b, sl, wl = inner
    s_b, w_b, pos, neg = bin_sums(codes, work, f, buf, b)
    corners = corner_bound(sl, wl, w_b, pos, neg, node, min_weight)
    return min(corners, range_bound(sl, wl, s_b, w_b, work, node, min_weight))


@inlined_kernel
def inner_candidate(codes, target, w, work, node, f, buf, inner, min_weight, best, tie_wins):
    """The candidates inside coarse bin b of feature f, ``inner`` = (b, sl, wl) with the sums
    of the node's rows left of the bin: its rows collected and scanned (``scan_values``) only
    when the bounds on their proxy may beat ``best``. Returns (found, best, a, b)."""
    b, sl, wl = inner
    if inner_may_beat(codes, work, node, f, buf, inner, min_weight, best):
        k = collect_bin(codes, target, w, work, node, f, b)
        res, best, va, vb, _, _ = scan_values(
            work.bin_values,
            work.bin_targets,
            work.bin_weights,
            w,
            k,
            sl,
            wl,
            node,
            work.monotonic[f],
            FEATURE_THRESHOLD,
            best,
            tie_wins,
        )
        return res, best, va, vb
    return 0, best, 0.0, 0.0


@inlined_kernel
def rank_small(codes, target, w, work, node, f):
    """A small node's values of feature f in ascending order, equal values in row order (the
    order of a stable sort), with their w g and w, into the workspace's small_values,
    small_targets, small_weights; its missing values (NaN) are left out. Returns (k, nan_s,
    nan_w): the number of values written, the sums of w g and w of the missing ones (in row
    order).

    Each row goes to its rank among the node's keys, its key ordering it by value and then by
    its place in the node: the same order as an insertion sort, hence the same sums. An
    exact-coded feature's key is its code (``_nodes.small_ranks``, on 16-bit lanes): the codes
    number the distinct values in increasing order, -0.0 and 0.0 sharing one, missing values
    last. A coarse feature's key is the value's order-preserving integer (float32 bits, -0.0
    read as 0.0; above them all for NaN; ``_nodes.rank_below``)."""
    if codes.positive_offset[f] < 0:
        return rank_small_coded(codes, target, w, work, node, f)
    X32 = codes.values
    rows = work.rows
    start = node.start
    m = node.end - start
    # free on a small node: it has no histogram, and no coarse bin of it is collected
    values = work.bin_values
    bits = values.view(np.int32)
    key = work.nonempty
    nan_s = 0.0
    nan_w = 0.0
    k = m
    for j in range(m):
        r = rows[start + j]
        v = X32[r, f]
        values[j] = v + np.float32(0.0)  # -0.0 + 0.0 is 0.0
        b = np.int64(bits[j])
        key[j] = ((b ^ ((b >> 31) & 0x7FFFFFFF)) << SMALL_ROW_BITS) + j
        if v != v:
            key[j] = NAN_KEY + j
            c = 1.0 if w is None else w[r]
            nan_s += c * target[r]
            nan_w += c
            k -= 1
    for i in range(m):
        rank = rank_below(key, m, key[i])
        if rank < k:
            place_small(X32, target, w, work, rows[start + i], f, rank)
    return k, nan_s, nan_w


@inlined_kernel
def rank_small_coded(codes, target, w, work, node, f):
    """``rank_small`` of an exact-coded feature f: each row's key is its code (missing values
    have the last), ranked on 16-bit lanes in the workspace's ``nonempty`` (free on a small
    node)."""
    X32 = codes.values
    B = codes.codes
    nan_code = codes.nan_bin[f]  # -1: none
    rows = work.rows
    start = node.start
    m = node.end - start
    lanes = work.nonempty.view(np.int16)
    nan_s = 0.0
    nan_w = 0.0
    k = m
    for j in range(m):
        r = rows[start + j]
        code = np.int64(B[r, f])
        lanes[np.uint64(j)] = (code << SMALL_ROW_BITS) + j
        if code == nan_code:
            c = 1.0 if w is None else w[r]
            nan_s += c * target[r]
            nan_w += c
            k -= 1
    small_ranks(lanes, m)
    for i in range(m):
        rank = np.int64(lanes[np.uint64(SMALL_LANES + i)])
        if rank < k:
            place_small(X32, target, w, work, rows[start + i], f, rank)
    return k, nan_s, nan_w


@inlined_kernel
def place_small(X32, target, w, work, r, f, rank):
    """Row r's value of feature f, its w g and w at place ``rank`` of a small node's sorted
    arrays (``rank_small``)."""
    c = 1.0 if w is None else w[r]
    work.small_values[rank] = X32[r, f]
    work.small_targets[rank] = c * target[r]
    if w is not None:
        work.small_weights[rank] = c


@inlined_kernel
def scan_small(codes, target, w, work, node, f, thr, best):
    """Candidates of one feature on a small node: its float32 values sorted (``rank_small``)."""
    keys = work.small_values
    m, _, _ = rank_small(codes, target, w, work, node, f)  # (no missing value)
    if keys[m - 1] <= keys[0] + thr:
        return -1, best, 0.0, 0.0
    found, best, a, b, _, _ = scan_values(
        keys,
        work.small_targets,
        work.small_weights,
        w,
        m,
        0.0,
        0.0,
        node,
        work.monotonic[f],
        thr,
        best,
        False,
    )
    return found, best, a, b


@kernel
def missing_candidates(found, best, nan_s, nan_w, node, work, f):
    """After the first pass over a feature's values (missing rows right; ``found``, ``best``),
    the candidate that sends the missing rows alone right (sums nan_s, nan_w), as scikit-learn's
    threshold +inf, if feature f's monotone constraint admits it (scikit-learn checks this
    candidate as any other: the missing rows' mean ordered after the others'). Returns (found,
    best, a, b, direction): a = b = inf when it wins, direction 0 (missing right) when the
    first pass or this candidate won, -1 otherwise."""
    sl = node.sum - nan_s
    wl = node.weight - nan_w
    a = np.inf
    if may_beat(sl, wl, node.sum, node.weight, best):
        prox = proxy(sl, wl, node.sum, node.weight)
        if prox > best and admitted(work, f, sl, wl, node):
            return 1, prox, a, a, 0
    return found, best, 0.0, 0.0, 0 if found > 0 else -1


@kernel
def values_pass(codes, target, w, work, node, f, buf, m, min_weight, best, start):
    """Candidates of feature f between its node values (histogram path: m >= 1 non-empty value
    bins listed in the workspace), the sums of the rows left of the smallest value being
    ``start`` = (sl, wl). Returns (found, best, a, b, lo_bin, hi_bin) as ``scan_binned``."""
    if codes.positive_offset[f] < 0:
        found, best, a, bb, lo_bin, hi_bin, _, _ = coded_pass(
            codes, work, buf, f, m, node, best, start[0], start[1]
        )
        return found, best, a, bb, lo_bin, hi_bin
    if m >= 2:
        return coarse_pass(codes, target, w, work, node, f, buf, m, min_weight, best, start)
    first = work.nonempty[0]
    if not codes.multi_valued[f, first]:
        return 0, best, 0.0, 0.0, -1, -1
    k = collect_bin(codes, target, w, work, node, f, first)
    found, best, a, bb, _, _ = scan_values(
        work.bin_values,
        work.bin_targets,
        work.bin_weights,
        w,
        k,
        start[0],
        start[1],
        node,
        work.monotonic[f],
        FEATURE_THRESHOLD,
        best,
        False,
    )
    return found, best, a, bb, -1, -1


@kernel
def scan_binned_missing(codes, target, w, work, node, f, buf, min_weight, best):
    """``scan_binned`` for a feature f with missing values in the training rows, plus the
    direction of the missing rows of the winning candidate (-1: the node has none). As
    scikit-learn: without missing rows in the node, ``scan_binned``; all rows missing, a constant
    feature; else the candidates with the missing rows right (between the values, then the
    missing rows alone), then with them left (between the values). The missing values' bin stays
    in the buffer's range of f (its children need it)."""
    o = codes.bin_offset[f]
    nb = codes.nan_bin[f]
    H = work.hist[buf]
    lo = work.bin_lo[buf]
    hi = work.bin_hi[buf]
    # outside the buffer's range the bin holds no rows of the node (and is not maintained)
    nan_s = H[np.uint64(2 * (o + nb))] if hi[f] == nb else 0.0
    nan_w = H[np.uint64(2 * (o + nb) + 1)] if hi[f] == nb else 0.0
    if not nan_w > 0.0:
        found, best, a, bb, lo_bin, hi_bin = scan_binned(
            codes, target, w, work, node, f, buf, min_weight, best
        )
        return found, best, a, bb, lo_bin, hi_bin, -1
    m = 0
    if lo[f] < nb:
        hi[f] = nb - 1  # the value bins: narrowed to the non-empty ones
        m = nonempty_bins(work, buf, o, f, holds_every_row(codes, node))
    if m == 0:  # every row of the node is missing: constant
        lo[f] = nb
        hi[f] = nb
        return -1, best, 0.0, 0.0, -1, -1, -1
    hi[f] = nb
    found, best, a, bb, lo_bin, hi_bin = values_pass(
        codes, target, w, work, node, f, buf, m, min_weight, best, (0.0, 0.0)
    )
    found, best, na, nbb, direction = missing_candidates(found, best, nan_s, nan_w, node, work, f)
    if direction == 0 and na == np.inf:
        a, bb, lo_bin, hi_bin = na, nbb, -1, -1
    res, best, va, vb, l2, h2 = values_pass(
        codes, target, w, work, node, f, buf, m, min_weight, best, (nan_s, nan_w)
    )
    if res > 0:
        return 1, best, va, vb, l2, h2, 1
    return found, best, a, bb, lo_bin, hi_bin, direction


@kernel
def scan_small_missing(codes, target, w, work, node, f, thr, best):
    """``scan_small`` for a feature f with missing values in the training rows, plus the
    direction of the missing rows of the winning candidate (-1: the node has none); the
    candidates as ``scan_binned_missing``."""
    keys = work.small_values
    vals = work.small_targets
    wts = work.small_weights
    k, nan_s, nan_w = rank_small(codes, target, w, work, node, f)
    n_nan = node.end - node.start - k
    if k == 0 or (n_nan == 0 and keys[k - 1] <= keys[0] + thr):
        return -1, best, 0.0, 0.0, -1
    found, best, a, b, _, _ = scan_values(
        keys, vals, wts, w, k, 0.0, 0.0, node, work.monotonic[f], thr, best, False
    )
    if n_nan == 0:
        return found, best, a, b, -1
    found, best, na, nb, direction = missing_candidates(found, best, nan_s, nan_w, node, work, f)
    if direction == 0 and na == np.inf:
        a, b = na, nb
    res, best, va, vb, _, _ = scan_values(
        keys, vals, wts, w, k, nan_s, nan_w, node, work.monotonic[f], thr, best, False
    )
    if res > 0:
        return 1, best, va, vb, 1
    return found, best, a, b, direction


@kernel
def bin_edge_values(codes, work, node, f, lo_bin, hi_bin):
    """(largest node value in coarse bin lo_bin, smallest in hi_bin) of feature f."""
    slot = codes.sorted_slot[f]
    So = codes.sorted_rows[slot]
    Sv = codes.sorted_values[slot]
    bstart = codes.bin_start[slot]
    nid = work.node_label
    a = -np.inf
    b = np.inf
    seg_lo = bstart[lo_bin + 1] - bstart[lo_bin]
    seg_hi = bstart[hi_bin + 1] - bstart[hi_bin]
    if seg_lo + seg_hi <= 4 * (node.end - node.start):
        for j in range(bstart[lo_bin + 1] - 1, bstart[lo_bin] - 1, -1):
            if nid[So[j]] == node.label:
                a = Sv[j]
                break
        for j in range(bstart[hi_bin], bstart[hi_bin + 1]):
            if nid[So[j]] == node.label:
                b = Sv[j]
                break
    else:
        X32 = codes.values
        B = codes.codes
        rows = work.rows
        for j in range(node.start, node.end):
            r = rows[j]
            code = B[r, f]
            v = X32[r, f]
            if code == lo_bin and v > a:
                a = v
            if code == hi_bin and v < b:
                b = v
    return a, b


@kernel
def scan_missing(codes, target, w, work, node, f, buf, limits, best):
    """The best candidate of a feature f with missing values in the training rows on the node
    (histogram buffer ``buf``, or SMALL): (found, best, a, b, lo_bin, hi_bin, direction of the
    missing rows, -1 when the node has none)."""
    if buf >= 0:
        return scan_binned_missing(codes, target, w, work, node, f, buf, limits.min_weight, best)
    res, prox, a, b, direction = scan_small_missing(
        codes, target, w, work, node, f, limits.feature_threshold, best
    )
    return res, prox, a, b, -1, -1, direction


@kernel
def edge_floor(codes, work, node, n_known, buf, min_weight):
    """A lower bound on the node's best proxy known before the feature loop: the best
    candidate between two non-empty bins of every feature without missing values in the
    histogram ``buf`` (coarse features' edges, exact-coded features' candidates), returned
    just below it (the next float down); -inf without a coarse feature, whose inner bins are
    all it serves. Returns (floor, whether the exact-coded features' scans were kept).

    Every feature is visited (scikit-learn's ``max_features = p``), so the node's best is at
    least the floor, and a scan started from just below it finds every candidate that may win
    (proxy >= floor; ties included) as a scan from -inf would, while skipping the coarse bins
    whose bound is below: the loop's first features prune as its last ones do. The split is
    unchanged bit for bit. (Threads do not use it: their first step reads the same bins.)

    The exact-coded features' scans are kept in ``work.floor_scans``: the loop reads them
    instead of scanning those features again (``floor_scan``)."""
    features = work.features
    coarse = False
    for i in range(n_known, features.shape[0]):
        f = features[i]
        coarse |= codes.nan_bin[f] < 0 and codes.positive_offset[f] >= 0
    if not coarse:
        return -np.inf, False
    floor = -np.inf
    dense = holds_every_row(codes, node)
    for i in range(n_known, features.shape[0]):
        f = features[i]
        if codes.nan_bin[f] >= 0:
            continue
        m = nonempty_bins(work, buf, codes.bin_offset[f], f, dense)
        kept = work.floor_scans[f]
        kept[0] = -1.0  # one non-empty bin: a constant feature (as ``scan_exact_coded``)
        if m < 2:
            continue
        if codes.positive_offset[f] < 0:
            found, best, a, b, lo_bin, hi_bin = scan_exact_coded(
                codes, work, buf, f, m, node, -np.inf
            )
            kept[0] = found
            kept[1] = best
            kept[2] = a
            kept[3] = b
            kept[4] = lo_bin
            kept[5] = hi_bin
        else:
            found, best, _, _, _, _ = scan_bin_edges(
                codes, work, buf, f, m, node, min_weight, -np.inf, (0.0, 0.0)
            )
        if found > 0 and best > floor:
            floor = best
    return (np.nextafter(floor, -np.inf) if floor > -np.inf else floor), True


@kernel
def floor_scan(work, f, best):
    """``scan_binned`` of an exact-coded feature f without missing values from the running
    ``best``, read from its scan from -inf kept by ``edge_floor``: a scan from ``best`` finds
    the first candidate of the feature's largest proxy P when P > best (the candidate the scan
    from -inf kept: the first to reach P), nothing otherwise; -1 for a constant feature. The
    same tuple, bit for bit."""
    kept = work.floor_scans[f]
    if kept[0] < 0.0:
        return -1, best, 0.0, 0.0, -1, -1
    if kept[0] > 0.0 and kept[1] > best:
        return 1, kept[1], kept[2], kept[3], np.int64(kept[4]), np.int64(kept[5])
    return 0, best, 0.0, 0.0, -1, -1


# -- scikit-learn's visit of the features ------------------------------------------------------
# ``node_split_best`` draws the features in a random order (skipping the known constants), moves
# each one found constant to the known constants and each other one visited to the end; the
# serial loop (``split_node``) and the threads' replay (``replay_visits``) share these steps.
# The visit's state: (f_i, n_visited, n_found, n_drawn, n_total), scikit-learn's names.


@kernel
def visiting(visit, p):
    """Whether the visit of the p features goes on (scikit-learn's loop condition)."""
    f_i, n_visited, n_found, n_drawn, n_total = visit
    return f_i > n_total and (n_visited < p or n_visited <= n_found + n_drawn)


@kernel
def draw_feature(features, rng_state, n_known, visit):
    """Draw the next feature: (its position in ``features``, the visit), the position -1 when
    the draw hit a known constant (moved to the drawn ones; nothing to scan)."""
    f_i, n_visited, n_found, n_drawn, n_total = visit
    n_visited += 1
    f_j = rand_int(n_drawn, f_i - n_found, rng_state)
    if f_j < n_known:
        features[n_drawn], features[f_j] = features[f_j], features[n_drawn]
        return -1, (f_i, n_visited, n_found, n_drawn + 1, n_total)
    return f_j + n_found, (f_i, n_visited, n_found, n_drawn, n_total)


@kernel
def settle_feature(features, f_j, constant, visit):
    """After the scan of the feature at ``f_j``: to the known constants when it is ``constant``
    in the node (and its descendants), else to the visited end. Returns the visit."""
    f_i, n_visited, n_found, n_drawn, n_total = visit
    if constant:
        features[f_j], features[n_total] = features[n_total], features[f_j]
        return (f_i, n_visited, n_found + 1, n_drawn, n_total + 1)
    f_i -= 1
    features[f_i], features[f_j] = features[f_j], features[f_i]
    return (f_i, n_visited, n_found, n_drawn, n_total)


@kernel
def finish_split(codes, work, node, n_known, n_total, best):
    """The end of a split search with the winner ``best`` = (feature or -1, a, b, lo_bin,
    hi_bin, direction): the known constants' order restored (scikit-learn's invariant: they
    keep it for siblings and children), the edge values of a split between two coarse bins.
    Returns ``split_node``'s tuple."""
    best_f, best_a, best_b, best_lo, best_hi, best_dir = best
    features = work.features
    constant = work.constant
    for i in range(n_known):
        features[i] = constant[i]
    for i in range(n_known, n_total):
        constant[i] = features[i]
    if best_f >= 0 and best_lo >= 0 and codes.positive_offset[best_f] >= 0:
        # between two coarse bins: their edge values
        best_a, best_b = bin_edge_values(codes, work, node, best_f, best_lo, best_hi)
    code = VALUES_MISSING_LEFT if best_dir == 1 else best_lo
    return best_f, best_a, best_b, code, n_total, best_dir


@inlined_kernel
def split_node(codes, target, w, work, node, n_known, buf, limits):
    """scikit-learn's ``node_split_best`` on one node: (feature, a, b, code, n_total_constants,
    direction).

    feature -1: no candidate on any feature. ``code`` >= 0 when the split falls between two bins
    of the feature: the rows going left are then those with codes at most ``code`` (the same
    rows as ``x <= threshold``, read from the smaller uint8 codes); else VALUES_MISSING_RIGHT or
    VALUES_MISSING_LEFT. ``direction``: where the node's missing values of the feature go (0
    right, 1 left), -1 when the node has none.
    """
    features = work.features
    p = features.shape[0]
    visit = (p, 0, 0, 0, n_known)
    best = -np.inf
    kept = False
    if buf >= 0 and node.end - node.start >= codes.bin_offset[codes.bin_offset.shape[0] - 1]:
        # the floor reads every bin once more: it pays for itself only where the coarse bins
        # it lets the first features skip hold more rows than the histogram has bins
        best, kept = edge_floor(codes, work, node, n_known, buf, limits.min_weight)
    found = (-1, 0.0, 0.0, -1, -1, -1)
    while visiting(visit, p):
        f_j, visit = draw_feature(features, work.rng_state, n_known, visit)
        if f_j < 0:
            continue
        f = features[f_j]
        # (the NaN-free scans called here directly: a dispatching kernel in between cost 15 %
        # of the tree time at depth 8)
        lo_bin = -1
        hi_bin = -1
        direction = -1
        if codes.nan_bin[f] >= 0:
            res, prox, a, b, lo_bin, hi_bin, direction = scan_missing(
                codes, target, w, work, node, f, buf, limits, best
            )
        elif kept and codes.positive_offset[f] < 0:  # scanned by the floor
            res, prox, a, b, lo_bin, hi_bin = floor_scan(work, f, best)
        elif buf >= 0:
            res, prox, a, b, lo_bin, hi_bin = scan_binned(
                codes, target, w, work, node, f, buf, limits.min_weight, best
            )
        else:
            res, prox, a, b = scan_small(
                codes, target, w, work, node, f, limits.feature_threshold, best
            )
        visit = settle_feature(features, f_j, res < 0, visit)
        if res > 0:
            best = prox
            found = (f, a, b, lo_bin, hi_bin, direction)
    return finish_split(codes, work, node, n_known, visit[4], found)
