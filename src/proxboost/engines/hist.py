"""The histogram engine: quantile-binned features, depth-wise least-squares trees (numba).

``prepare(X, fit=True)`` bins every feature once per fit into at most ``max_bins`` (255) bins:

* a feature with at most ``max_bins`` distinct values gets one bin per distinct value, with the
  edges at the midpoints between consecutive distinct values (``a/2 + b/2``; ``a`` when that
  rounds to ``b``, as scikit-learn's thresholds). On such features the candidate splits are
  exactly scikit-learn's (between consecutive distinct values of the node);
* otherwise a value repeated at least ``n / max_bins`` times ("heavy") gets a bin of its own,
  and the other edges are quantiles of the training column: with h heavy values, edge k
  lies between the distinct values where the cumulative count crosses
  ``k * n / (max_bins - 2 h)`` (duplicates dropped); at most ``max_bins - 1`` edges in all.

A row goes to bin ``b`` of a feature when ``edges[b - 1] < x <= edges[b]`` (scikit-learn's
"``x <= threshold`` goes left"); ``prepare(X)`` (``fit=False``) bins new rows with the training
edges. Bins are ``uint8``, C-ordered ``(n, p)`` (the histogram builder reads a row's bins
contiguously).

``grow`` fits one least-squares tree on the target, as ``DecisionTreeRegressor(
criterion="squared_error", max_depth=D)`` with ``min_samples_split=2, min_samples_leaf=1``:

* a node is a leaf when its depth is ``D``, it has fewer than 2 rows, its impurity
  ``sum(y^2)/m - (sum(y)/m)^2`` is ``<= eps`` (float64 machine epsilon, scikit-learn's
  ``EPSILON``), or every feature is constant on it;
* otherwise it is split at the candidate maximising scikit-learn's proxy
  ``S_L^2 / m_L + S_R^2 / m_R`` (the weighted variance reduction up to constants). As in
  scikit-learn, the best candidate is taken even when its gain is zero;
* histograms hold, per (feature, bin), the target sum and the row count (one flat float64
  array, the values side by side; features at offsets, so that a binary feature costs 2
  bins, not 256). The root's histogram is built from all rows (its counts are cached per
  prepared array: the same for every tree of a fit); afterwards only the smaller child of a
  split is built from its rows, and the larger child's histogram is the parent's minus the
  smaller's (histogram subtraction, in the parent's buffer). A split scan lists the non-empty
  bins of each feature (branch-free) and evaluates the candidates between consecutive ones,
  within the parent's non-empty range;
* nodes of at most ``SMALL_NODE`` (32) rows are split by sorting their rows' bins per feature
  instead (same candidates, same proxy): cheaper than 255-bin histograms for deep trees;
* at the last level (depth D - 1) the rows of a split node are labelled with their two leaves
  directly, without partitioning.

**Tie-breaking** differs from scikit-learn, which visits features in a random order (its
``random_state``) and keeps the first best: here features are scanned in index order, bins in
increasing order, and the first strictly best candidate is kept (lowest feature, then lowest
threshold). Sums are accumulated per bin, so candidates whose gains agree to rounding may be
ordered differently than by scikit-learn's running sums. ``random_state`` is accepted and
ignored: growth is deterministic. scikit-learn also treats two float32 feature values within
1e-7 of each other as equal (``FEATURE_THRESHOLD``); here distinct float64 values are distinct.

**Thresholds on new rows.** The training partition only fixes the threshold between the
largest left value ``a`` and the smallest right value ``b`` of the node. scikit-learn puts it
at ``(a + b) / 2``; here the split keeps the bin edge (between the bins of ``a`` and ``b``)
nearest to the midpoint of the two bins' representative values (the value itself for a
distinct-value bin, the midpoint of the training range of the bin otherwise).

**Weights and gains.** ``grow(..., sample_weight=w)`` grows on the rows of positive weight
and places the rows of weight 0 with the grown tree. Its histograms hold three values per bin:
the sum of weight x target, the weight and the row count; the row count says which bins are
empty (histogram subtraction applies as without weights, and its rounding can leave a tiny
weight in an empty bin). The root's weights and counts are cached per prepared array and
weight array, like the unweighted root counts. ``prepare(X, fit=True, sample_weight=w)``
learns the edges from the positive-weight rows (quantiles of weighted counts), from the same
sort of each column as the unweighted binning. Each tree reports ``split_feature`` and
``split_gain`` per internal node (the weighted
impurity decrease over the root's weight; see ``docs/engines.md``).

Trees grow depth-first with an explicit stack (no leaf limit, so the tree equals the
depth-wise one); leaves are numbered left to right, ``0 .. n_leaves - 1``. Histogram memory is
``O(min(D, n / 33) * total_bins)``, row buffers ``O(n)``; no O(n^2) or O(n * 256 * p) array.
Everything is compiled with ``numba.njit(cache=True)``, single-threaded.

An engine instance keeps per-fit scratch (workspace arrays, the root counts of the last
prepared array and weight array, found by identity through weak references): neither may be
modified in place between ``grow`` calls, and one instance must not grow two trees at once
from two threads. Neither is pickled.
"""

import weakref

import numpy as np
from numba import njit

from ._nodes import EPSILON, LEAF, SMALL, SMALL_NODE, check_weight, child_buffers

MAX_BINS = 255


# ---------------------------------------------------------------------------------------------
# Binning
# ---------------------------------------------------------------------------------------------
def _midpoints(a, b):
    """scikit-learn's threshold between consecutive values: a/2 + b/2, or a if that rounds to b."""
    mid = a / 2.0 + b / 2.0
    return np.where(mid == b, a, mid)


def _fit_feature(col, max_bins, weight=None):
    """Edges, bin codes and representative values of one training column (weighted counts).

    With ``weight``, the distinct values and counts come from the same sort of the whole column
    as without (no second sort of the positive-weight rows): the counts are the weights' sums
    per distinct value, and the values whose rows all have weight 0 are dropped before the edges
    are placed, so they make no edge and no representative value.
    """
    uniq, inverse, counts = np.unique(col, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    if weight is None:
        edges, bin_of_uniq, rep = _edges(uniq, counts, len(col), max_bins)
        return edges, (inverse if bin_of_uniq is None else bin_of_uniq[inverse]), rep
    counts = np.bincount(inverse, weights=weight, minlength=len(uniq))
    seen = counts > 0
    if seen.all():  # every value has positive weight: the unweighted steps on weighted counts
        edges, bin_of_uniq, rep = _edges(uniq, counts, None, max_bins)
        return edges, (inverse if bin_of_uniq is None else bin_of_uniq[inverse]), rep
    edges, _, rep = _edges(uniq[seen], counts[seen], None, max_bins)
    # bin of each distinct value = number of edges below it (searchsorted(edges, uniq), counted
    # from where each edge falls among the sorted values: O(#values), not O(#values log #edges))
    first_above = np.searchsorted(uniq, edges, side="right")
    bin_of_uniq = np.cumsum(np.bincount(first_above, minlength=len(uniq) + 1)[: len(uniq)])
    return edges, bin_of_uniq[inverse], rep


def _edges(uniq, counts, n, max_bins):
    """Edges, bin of each distinct value (None: one bin each) and representative value per bin.

    ``uniq``: sorted distinct values, ``counts``: their (weighted) counts, ``n``: their total
    (None: summed here).
    """
    if len(uniq) <= max_bins:
        return _midpoints(uniq[:-1], uniq[1:]), None, uniq.copy()
    n = counts.sum() if n is None else n
    cum = np.cumsum(counts)
    heavy = np.flatnonzero(counts >= n / max_bins)  # values worth a bin of their own
    n_quantile = max_bins - 2 * len(heavy)
    if n_quantile < 2:
        heavy, n_quantile = heavy[:0], max_bins
    targets = np.arange(1, n_quantile) * (n / n_quantile)
    cut = np.searchsorted(cum, targets, side="left")  # an edge right after uniq[cut]
    cut = np.unique(np.concatenate([cut, heavy - 1, heavy]))
    cut = cut[(cut >= 0) & (cut < len(uniq) - 1)]
    edges = _midpoints(uniq[cut], uniq[cut + 1])
    bin_of_uniq = np.searchsorted(edges, uniq, side="left")
    n_bins = len(edges) + 1
    lo = np.full(n_bins, np.inf)
    hi = np.full(n_bins, -np.inf)
    np.minimum.at(lo, bin_of_uniq, uniq)
    np.maximum.at(hi, bin_of_uniq, uniq)
    return edges, bin_of_uniq, lo / 2.0 + hi / 2.0


# ---------------------------------------------------------------------------------------------
# Compiled kernels
# ---------------------------------------------------------------------------------------------
# A histogram is a flat float64 array of S slots per (feature, bin), features at offsets (bin b of
# feature f at k = offsets[f] + b): slot S * k holds the bin's target sum (weighted: of
# weight * target), slot S * k + 1 its weight, slot S * k + S - 1 its row count. Unweighted, S = 2
# (the weight is the row count); weighted, S = 3: the exact row count says which bins are empty
# after a histogram subtraction, whose rounding can leave a small nonzero weight in an empty bin.
@njit(cache=True, nogil=True)
def _build_hist(H, bins, offsets, target, w, rows, start, end):
    """Add rows[start:end] to histogram H (four rows at a time: independent updates).

    ``w``: row weights, or None for unit weights (then the weight code is compiled away).
    """
    p = bins.shape[1]
    S = 2 if w is None else 3
    j = start
    while j + 3 < end:
        r0 = rows[j]
        r1 = rows[j + 1]
        r2 = rows[j + 2]
        r3 = rows[j + 3]
        if w is None:
            c0 = 1.0
            c1 = 1.0
            c2 = 1.0
            c3 = 1.0
        else:
            c0 = w[r0]
            c1 = w[r1]
            c2 = w[r2]
            c3 = w[r3]
        g0 = target[r0] * c0
        g1 = target[r1] * c1
        g2 = target[r2] * c2
        g3 = target[r3] * c3
        for f in range(p):
            o = offsets[f]
            i0 = S * (o + bins[r0, f])
            i1 = S * (o + bins[r1, f])
            i2 = S * (o + bins[r2, f])
            i3 = S * (o + bins[r3, f])
            H[i0] += g0
            H[i0 + 1] += c0
            H[i1] += g1
            H[i1 + 1] += c1
            H[i2] += g2
            H[i2 + 1] += c2
            H[i3] += g3
            H[i3 + 1] += c3
            if w is not None:
                H[i0 + 2] += 1.0
                H[i1 + 2] += 1.0
                H[i2 + 2] += 1.0
                H[i3 + 2] += 1.0
        j += 4
    while j < end:
        r = rows[j]
        c = 1.0 if w is None else w[r]
        g = target[r] * c
        for f in range(p):
            i = S * (offsets[f] + bins[r, f])
            H[i] += g
            H[i + 1] += c
            if w is not None:
                H[i + 2] += 1.0
        j += 1


@njit(cache=True, nogil=True)
def _root_stats(bins, offsets, w, rows, n_act):
    """The root histogram of rows[:n_act] without its target sums: weights and row counts per bin.

    The same for every tree grown on the same prepared rows and weights (computed once per fit).
    Weights are added in row order, as ``_build_hist`` would.
    """
    p = bins.shape[1]
    S = 2 if w is None else 3
    stats = np.zeros(S * offsets[p])
    for j in range(n_act):
        r = rows[j]
        c = 1.0 if w is None else w[r]
        for f in range(p):
            i = S * (offsets[f] + bins[r, f])
            stats[i + 1] += c
            if w is not None:
                stats[i + 2] += 1.0
    return stats


@njit(cache=True, nogil=True)
def _build_root_sums(H, bins, offsets, target, w, rows, n_act, stats):
    """Root histogram of rows[:n_act] from its known weights and counts (``_root_stats``): only
    the target sums are accumulated, in row order (as ``_build_hist``).

    The loop runs over all rows in order, without the ``rows`` indirection: unweighted,
    rows[:n_act] are all rows; weighted, a row of weight 0 adds an exact 0.0 to its bin's sum
    (a select, whatever its target), which leaves every sum as the positive-weight rows make it.
    """
    n, p = bins.shape
    for k in range(stats.shape[0]):
        H[k] = stats[k]
    if w is None:
        for r in range(n_act):
            g = target[r]
            for f in range(p):
                H[2 * (offsets[f] + bins[r, f])] += g
    else:
        for r in range(n):
            c = w[r]
            g = target[r] * c if c > 0.0 else 0.0
            for f in range(p):
                H[3 * (offsets[f] + bins[r, f])] += g


@njit(cache=True, nogil=True)
def _zero_ranges(H, offsets, lo, hi, S):
    for f in range(offsets.shape[0] - 1):
        o = offsets[f]
        for i in range(S * (o + lo[f]), S * (o + hi[f] + 1)):
            H[i] = 0.0


@njit(cache=True, nogil=True)
def _subtract_ranges(H, Hs, offsets, lo, hi, S):
    """H -= Hs on the given bin ranges (histogram subtraction)."""
    for f in range(offsets.shape[0] - 1):
        o = offsets[f]
        for i in range(S * (o + lo[f]), S * (o + hi[f] + 1)):
            H[i] -= Hs[i]


@njit(cache=True, nogil=True)
def _best_split(H, offsets, lo, hi, m, nonempty, S):
    """Best (feature, last left bin, proxy) of a node with histogram H (S slots per bin) and
    weight m.

    Per feature, a branch-free pass lists the non-empty bins of the range (``nonempty``, a
    scratch of 256; a bin is empty when its row count is 0), then only those are scanned:
    candidate splits sit between consecutive non-empty bins. Also shrinks lo/hi to the node's
    non-empty bin range. Returns (-1, -1, -inf) when every feature is constant on the node.
    """
    n_features = offsets.shape[0] - 1
    best_proxy = -np.inf
    best_f = -1
    best_b = -1
    total = 0.0
    o = offsets[0]
    for b in range(lo[0], hi[0] + 1):  # node sum from the histogram itself (consistent sums)
        total += H[S * (o + b)]
    for f in range(n_features):
        o = offsets[f]
        k = 0
        for b in range(lo[f], hi[f] + 1):
            nonempty[k] = b
            k += H[S * (o + b) + S - 1] != 0.0
        if k == 0:
            continue
        lo[f] = nonempty[0]
        hi[f] = nonempty[k - 1]
        s_left = 0.0
        n_left = 0.0
        for j in range(k - 1):
            b = nonempty[j]
            s_left += H[S * (o + b)]
            n_left += H[S * (o + b) + 1]
            s_right = total - s_left
            proxy = s_left * s_left / n_left + s_right * s_right / (m - n_left)
            if proxy > best_proxy:
                best_proxy = proxy
                best_f = f
                best_b = b
    return best_f, best_b, best_proxy


@njit(cache=True, nogil=True)
def _best_split_small(bins, target, w, rows, start, end, total, weight, keys, vals, wts):
    """Best (feature, last left bin, first right bin, proxy) of a small node, by sorting its rows.

    For nodes of at most ``SMALL_NODE`` rows, sorting the rows' bins (insertion sort) costs
    less than zeroing, subtracting and scanning 255-bin histograms. Candidates and proxy are
    the histogram path's; sums run over rows in bin order. Returns (-1, -1, -1, -inf) when every
    feature is constant on the node. ``weight``: the node's weight (its row count if ``w`` is
    None).
    """
    m = end - start
    p = bins.shape[1]
    best_proxy = -np.inf
    best_f = -1
    best_b = -1
    best_next = -1
    for f in range(p):
        for j in range(m):
            r = rows[start + j]
            key = bins[r, f]
            c = 1.0 if w is None else w[r]
            val = target[r] * c
            i = j - 1
            while i >= 0 and keys[i] > key:
                keys[i + 1] = keys[i]
                vals[i + 1] = vals[i]
                if w is not None:
                    wts[i + 1] = wts[i]
                i -= 1
            keys[i + 1] = key
            vals[i + 1] = val
            if w is not None:
                wts[i + 1] = c
        if keys[0] == keys[m - 1]:
            continue
        s_left = 0.0
        n_left = 0.0
        for j in range(m - 1):
            s_left += vals[j]
            if w is None:
                n_left = j + 1.0
            else:
                n_left += wts[j]
            if keys[j + 1] == keys[j]:
                continue
            s_right = total - s_left
            proxy = s_left * s_left / n_left + s_right * s_right / (weight - n_left)
            if proxy > best_proxy:
                best_proxy = proxy
                best_f = f
                best_b = keys[j]
                best_next = keys[j + 1]
    return best_f, best_b, best_next, best_proxy


@njit(cache=True, nogil=True)
def _partition(bins, target, w, rows, tmp, start, end, f, thr):
    """Stable partition of rows[start:end] by bins[:, f] <= thr; weights, sums, squares per side."""
    wl = start
    wr = 0
    cl = 0.0
    sl = 0.0
    ql = 0.0
    cr = 0.0
    sr = 0.0
    qr = 0.0
    for j in range(start, end):
        r = rows[j]
        c = 1.0 if w is None else w[r]
        g = target[r]
        cg = c * g
        if bins[r, f] <= thr:
            rows[wl] = r
            wl += 1
            cl += c
            sl += cg
            ql += cg * g
        else:
            tmp[wr] = r
            wr += 1
            cr += c
            sr += cg
            qr += cg * g
    for j in range(wr):
        rows[wl + j] = tmp[j]
    return wl, cl, sl, ql, cr, sr, qr


@njit(cache=True, nogil=True)
def _child_mode(depth, max_depth, m, wsum, s, q, eps, small):
    """-1: leaf; -2: split by sorting (small node); 0: split with a histogram.

    m rows of total weight wsum; impurity q / wsum - (s / wsum)^2 as scikit-learn's.
    """
    if depth >= max_depth or m < 2:
        return LEAF
    mean = s / wsum
    if q / wsum - mean * mean <= eps:
        return LEAF
    if m <= small:
        return SMALL
    return 0


@njit(cache=True, nogil=True)
def _grow_tree(
    bins,
    offsets,
    n_bins,
    edges,
    rep,
    target,
    w,
    n_act,
    max_depth,
    max_nodes,
    eps,
    small,
    root_stats,
    rows,
    tmp,
    hist,
):
    """Grow one tree (see the module docstring). Workspace: rows, tmp (n,), hist (buffers,
    S * total bins; S = 2 unweighted, 3 weighted).

    ``rows[:n_act]``: the rows taking part (all rows, or those of positive weight), ``w``: their
    weights or None (unit weights). Rows not taking part keep leaf id -1.
    ``root_stats``: the root's weights and row counts per bin (``_root_stats``).
    """
    n, p = bins.shape
    S = 2 if w is None else 3
    feature = np.full(max_nodes, -1, np.int32)
    threshold = np.zeros(max_nodes, np.int32)
    left = np.full(max_nodes, -1, np.int32)
    right = np.full(max_nodes, -1, np.int32)
    leaf_of_node = np.full(max_nodes, -1, np.int32)
    gain = np.zeros(max_nodes)
    leaf_ids = np.full(n, -1, np.intp)
    keys = np.empty(small + 1, np.uint8)
    vals = np.empty(small + 1)
    wts = np.empty(small + 1)
    nonempty = np.empty(256, np.int64)

    n_buf = hist.shape[0]
    rlo = np.zeros((n_buf, p), np.int32)
    rhi = np.zeros((n_buf, p), np.int32)
    free = np.arange(n_buf - 1, -1, -1).astype(np.int32)  # stack of free buffers
    n_free = n_buf

    # node stack: id, start, end, depth, mode (buffer >= 0, LEAF or SMALL), sum, sum of squares
    cap = 2 * max_depth + 4
    st_id = np.empty(cap, np.int32)
    st_start = np.empty(cap, np.int32)
    st_end = np.empty(cap, np.int32)
    st_depth = np.empty(cap, np.int32)
    st_mode = np.empty(cap, np.int32)
    st_w = np.empty(cap)
    st_s = np.empty(cap)
    st_q = np.empty(cap)

    w0 = 0.0
    s0 = 0.0
    q0 = 0.0
    for j in range(n_act):
        r = rows[j]
        c = 1.0 if w is None else w[r]
        w0 += c
        s0 += c * target[r]
        q0 += c * target[r] * target[r]
    mode0 = _child_mode(0, max_depth, n_act, w0, s0, q0, eps, small)
    if mode0 == 0:
        n_free -= 1
        mode0 = free[n_free]
        for f in range(p):
            rlo[mode0, f] = 0
            rhi[mode0, f] = n_bins[f] - 1
        _build_root_sums(hist[mode0], bins, offsets, target, w, rows, n_act, root_stats)
    st_id[0] = 0
    st_start[0] = 0
    st_end[0] = n_act
    st_depth[0] = 0
    st_mode[0] = mode0
    st_w[0] = w0
    st_s[0] = s0
    st_q[0] = q0
    top = 1
    n_nodes = 1
    n_leaves = 0

    while top > 0:
        top -= 1
        node = st_id[top]
        start = st_start[top]
        end = st_end[top]
        depth = st_depth[top]
        buf = st_mode[top]
        wnode = st_w[top]
        snode = st_s[top]
        best_f = -1
        best_b = -1
        nxt = -1
        proxy = -np.inf
        if buf >= 0:
            best_f, best_b, proxy = _best_split(
                hist[buf], offsets, rlo[buf], rhi[buf], wnode, nonempty, S
            )
            if best_f >= 0:
                o = offsets[best_f]
                nxt = best_b + 1
                while hist[buf, S * (o + nxt) + S - 1] == 0.0:
                    nxt += 1
        elif buf == SMALL:
            best_f, best_b, nxt, proxy = _best_split_small(
                bins, target, w, rows, start, end, snode, wnode, keys, vals, wts
            )
        if best_f < 0:  # leaf
            if buf >= 0:
                free[n_free] = buf
                n_free += 1
            leaf_of_node[node] = n_leaves
            for j in range(start, end):
                leaf_ids[rows[j]] = n_leaves
            n_leaves += 1
            continue

        # threshold bin: the edge between the node's two bins nearest to their midpoint
        mid = rep[best_f, best_b] / 2.0 + rep[best_f, nxt] / 2.0
        thr = best_b
        gap = abs(edges[best_f, best_b] - mid)
        for k in range(best_b + 1, nxt):
            d = abs(edges[best_f, k] - mid)
            if d < gap:
                gap = d
                thr = k

        lnode = n_nodes
        rnode = n_nodes + 1
        n_nodes += 2
        feature[node] = best_f
        threshold[node] = thr
        left[node] = lnode
        right[node] = rnode
        # weighted impurity decrease: proxy - S^2 / W (the sums of squares cancel), over W_root
        gain[node] = (proxy - snode * snode / wnode) / w0
        if depth + 1 >= max_depth:  # both children are leaves: label the rows, no partition
            if buf >= 0:
                free[n_free] = buf
                n_free += 1
            leaf_of_node[lnode] = n_leaves
            leaf_of_node[rnode] = n_leaves + 1
            for j in range(start, end):
                r = rows[j]
                leaf_ids[r] = n_leaves if bins[r, best_f] <= best_b else n_leaves + 1
            n_leaves += 2
            continue

        mid_pos, wl, sl, ql, wr, sr, qr = _partition(
            bins, target, w, rows, tmp, start, end, best_f, best_b
        )

        nl = mid_pos - start
        nr = end - mid_pos
        mode_l = _child_mode(depth + 1, max_depth, nl, wl, sl, ql, eps, small)
        mode_r = _child_mode(depth + 1, max_depth, nr, wr, sr, qr, eps, small)
        if buf >= 0:
            small_is_left = nl <= nr
            s_start = start if small_is_left else mid_pos
            s_end = mid_pos if small_is_left else end
            into, subtract, buf_l, buf_r, n_free = child_buffers(
                buf, small_is_left, mode_l == 0, mode_r == 0, free, n_free
            )
            if into >= 0:
                if into != buf:
                    for f in range(p):
                        rlo[into, f] = rlo[buf, f]
                        rhi[into, f] = rhi[buf, f]
                _zero_ranges(hist[into], offsets, rlo[into], rhi[into], S)
                _build_hist(hist[into], bins, offsets, target, w, rows, s_start, s_end)
                if subtract:
                    _subtract_ranges(hist[buf], hist[into], offsets, rlo[buf], rhi[buf], S)
            if mode_l == 0:
                mode_l = buf_l
            if mode_r == 0:
                mode_r = buf_r

        # push right then left: left subtree first, leaves numbered left to right
        st_id[top] = rnode
        st_start[top] = mid_pos
        st_end[top] = end
        st_depth[top] = depth + 1
        st_mode[top] = mode_r
        st_w[top] = wr
        st_s[top] = sr
        st_q[top] = qr
        top += 1
        st_id[top] = lnode
        st_start[top] = start
        st_end[top] = mid_pos
        st_depth[top] = depth + 1
        st_mode[top] = mode_l
        st_w[top] = wl
        st_s[top] = sl
        st_q[top] = ql
        top += 1

    return (
        feature[:n_nodes].copy(),
        threshold[:n_nodes].copy(),
        left[:n_nodes].copy(),
        right[:n_nodes].copy(),
        leaf_of_node[:n_nodes].copy(),
        gain[:n_nodes].copy(),
        leaf_ids,
        n_leaves,
    )


@njit(cache=True, nogil=True)
def _leaf_of(bins, i, feature, threshold, left, right, leaf_of_node):
    node = 0
    while left[node] >= 0:
        if bins[i, feature[node]] <= threshold[node]:
            node = left[node]
        else:
            node = right[node]
    return leaf_of_node[node]


@njit(cache=True, nogil=True)
def _apply_tree(bins, feature, threshold, left, right, leaf_of_node):
    n = bins.shape[0]
    out = np.empty(n, np.intp)
    for i in range(n):
        out[i] = _leaf_of(bins, i, feature, threshold, left, right, leaf_of_node)
    return out


@njit(cache=True, nogil=True)
def _label_rows(bins, rows, feature, threshold, left, right, leaf_of_node, out):
    """out[r] = leaf of row r, for r in rows (the rows of weight 0, after growth)."""
    for r in rows:
        out[r] = _leaf_of(bins, r, feature, threshold, left, right, leaf_of_node)


# ---------------------------------------------------------------------------------------------
# Public objects
# ---------------------------------------------------------------------------------------------
class HistTree:
    """A fitted histogram tree: binned rows -> compact leaf ids (picklable, compiled apply).

    Node arrays (root 0, ``left == -1`` at leaves): ``feature``, ``threshold_bin`` (rows with
    ``bin <= threshold_bin`` go left), ``left``, ``right``, ``leaf_of_node``; ``threshold``
    holds the matching float edges on the original feature scale (``x <= threshold`` goes left).
    Per internal node: ``split_feature`` and ``split_gain`` (weighted impurity decrease over the
    root's weight, see ``docs/engines.md``).
    """

    def __init__(
        self, feature, threshold_bin, left, right, leaf_of_node, n_leaves, threshold, gain
    ):
        internal = left >= 0
        self.split_feature = feature[internal].astype(np.intp)
        self.split_gain = gain[internal]
        self.feature = feature
        self.threshold_bin = threshold_bin
        self.left = left
        self.right = right
        self.leaf_of_node = leaf_of_node
        self.n_leaves = int(n_leaves)
        self.threshold = threshold

    @property
    def node_count(self):
        return len(self.left)

    def apply(self, Xp):
        Xp = _as_bins(Xp)
        return _apply_tree(
            Xp, self.feature, self.threshold_bin, self.left, self.right, self.leaf_of_node
        )


def _as_bins(Xp):
    if not (isinstance(Xp, np.ndarray) and Xp.dtype == np.uint8 and Xp.ndim == 2):
        raise TypeError(
            "the hist engine works on binned rows (uint8, 2-d): pass X through engine.prepare first"
        )
    return Xp if Xp.flags.c_contiguous else np.ascontiguousarray(Xp)


class HistEngine:
    """Histogram tree engine (``engine="hist"``): see the module docstring.

    Parameters
    ----------
    max_bins : int in [2, 255], default=255
        Maximum number of bins per feature.
    """

    name = "hist"

    def __init__(self, max_bins=MAX_BINS):
        if not (isinstance(max_bins, (int, np.integer)) and 2 <= max_bins <= 255):
            raise ValueError(
                f"max_bins={max_bins!r} is out of range; allowed values: an integer in [2, 255]"
            )
        self.max_bins = int(max_bins)
        self.edges_ = None
        self._reset_cache()

    def _reset_cache(self):
        # per-fit scratch, rebuilt on demand and never pickled: the prepared training bins and
        # the weights of the last grow (weak references), the rows of positive weight and of
        # weight 0, the root's weights and counts per bin, and the grower's workspace arrays
        self._bins_ref = None
        self._weight_ref = None
        self._rows = None
        self._work = None

    def __getstate__(self):
        state = self.__dict__.copy()
        for key in ("_bins_ref", "_weight_ref", "_rows", "_work"):
            state[key] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._reset_cache()

    # -- binning ---------------------------------------------------------------------------------
    def prepare(self, X, fit=False, sample_weight=None):
        """Bin X (uint8, C order). ``fit=True`` learns the edges from X first.

        With ``sample_weight`` (fit only), the edges are learned from the rows of positive weight
        and the quantiles on weighted counts; every row is then binned with these edges.
        """
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-dimensional, got shape {X.shape}")
        if not np.isfinite(X).all():
            raise ValueError("X contains NaN or infinity: the hist engine bins finite values only")
        n, p = X.shape
        out = np.empty((n, p), dtype=np.uint8)
        if fit:
            self._reset_cache()
            w = None if sample_weight is None else check_weight(sample_weight, n)
            edges, reps = [], []
            for j in range(p):
                e, codes, rep = _fit_feature(X[:, j], self.max_bins, w)
                edges.append(e)
                reps.append(rep)
                out[:, j] = codes
            self.edges_ = edges
            n_bins = np.array([len(e) + 1 for e in edges], dtype=np.int32)
            self.n_bins_ = n_bins
            self.offsets_ = np.concatenate(([0], np.cumsum(n_bins))).astype(np.int64)
            width = max(int(n_bins.max(initial=1)), 2)
            self._edges2d = np.full((p, width), np.inf)
            self._rep2d = np.full((p, width), np.inf)
            for j in range(p):
                self._edges2d[j, : len(edges[j])] = edges[j]
                self._rep2d[j, : len(reps[j])] = reps[j]
            return out
        if self.edges_ is None:
            raise ValueError(
                "HistEngine.prepare(X) needs the bin edges: call prepare(X_train, fit=True) first"
            )
        if p != len(self.edges_):
            raise ValueError(
                f"X has {p} features, the bin edges were learned on {len(self.edges_)}"
            )
        for j in range(p):
            out[:, j] = np.searchsorted(self.edges_[j], X[:, j], side="left")
        return out

    # -- trees -----------------------------------------------------------------------------------
    def grow(self, Xp, target, max_depth, random_state=None, sample_weight=None):
        """Grow one least-squares tree on ``target``; ``random_state`` is ignored (deterministic).

        ``sample_weight``: optional non-negative row weights; rows of weight 0 take no part in
        the split search and get their leaf ids from the grown tree.
        """
        if self.edges_ is None:
            raise ValueError("HistEngine.grow needs prepared data: call prepare(X, fit=True) first")
        Xp = _as_bins(Xp)
        if Xp.shape[1] != len(self.edges_):
            raise ValueError(
                f"Xp has {Xp.shape[1]} features, the bin edges were learned on {len(self.edges_)}"
            )
        target = np.ascontiguousarray(target, dtype=np.float64)
        n = Xp.shape[0]
        if target.shape != (n,):
            raise ValueError(f"target has shape {target.shape}, expected ({n},)")
        max_depth = int(max_depth)
        max_nodes = max(min(2 ** (max_depth + 1) - 1, 2 * n - 1), 1)
        stack_depth = min(max_depth, max(n, 1))
        # histogram buffers in use at once: the node being split, one scratch, and the pending
        # histogram nodes on the stack (one per depth at most, each > SMALL_NODE disjoint rows)
        n_buf = min(stack_depth, n // (SMALL_NODE + 1)) + 3
        w, active, idle, root_stats = self._rows_and_root_stats(Xp, sample_weight)
        n_act = len(active)
        shape = (n, n_buf, len(root_stats))
        if self._work is None or self._work[0] != shape:
            self._work = (
                shape,
                np.empty(n, np.int32),
                np.empty(n, np.int32),
                np.empty((n_buf, len(root_stats))),
            )
        _, rows, tmp, hist = self._work
        rows[:n_act] = active
        feature, thr, left, right, leaf_of_node, gain, leaf_ids, n_leaves = _grow_tree(
            Xp,
            self.offsets_,
            self.n_bins_,
            self._edges2d,
            self._rep2d,
            target,
            w,
            n_act,
            stack_depth,
            max_nodes,
            EPSILON,
            SMALL_NODE,
            root_stats,
            rows,
            tmp,
            hist,
        )
        if len(idle):
            _label_rows(Xp, idle, feature, thr, left, right, leaf_of_node, leaf_ids)
        internal = left >= 0
        threshold = np.full(len(left), np.nan)
        threshold[internal] = self._edges2d[feature[internal], thr[internal]]
        return leaf_ids, HistTree(
            feature, thr, left, right, leaf_of_node, n_leaves, threshold, gain
        )

    def _rows_and_root_stats(self, Xp, sample_weight):
        """(weights or None, rows of positive weight, rows of weight 0, root weights and counts).

        Computed once per prepared array and weight array (found by identity: neither may be
        modified in place between ``grow`` calls), the same for every tree of a fit.
        """
        hit = (
            self._rows is not None
            and self._bins_ref() is Xp
            and (
                self._rows[0] is None
                if sample_weight is None
                else self._weight_ref is not None and self._weight_ref() is sample_weight
            )
        )
        if hit:
            return self._rows
        n = Xp.shape[0]
        if sample_weight is None:
            active = np.arange(n, dtype=np.int32)
            self._rows = (None, active, active[:0], _root_stats(Xp, self.offsets_, None, active, n))
        else:
            w = check_weight(sample_weight, n)
            positive = w > 0
            active = np.flatnonzero(positive).astype(np.int32)
            idle = np.flatnonzero(~positive).astype(np.int32)
            self._rows = (w, active, idle, _root_stats(Xp, self.offsets_, w, active, len(active)))
        self._bins_ref = weakref.ref(Xp)
        self._weight_ref = (
            weakref.ref(sample_weight) if isinstance(sample_weight, np.ndarray) else None
        )
        return self._rows
