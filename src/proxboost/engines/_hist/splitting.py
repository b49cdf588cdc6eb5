"""Split finding of the hist engine: the best candidate between consecutive non-empty bins,
from a node's histogram or, on small nodes, from its rows sorted by bin (features in index
order, bins in increasing order, the first strictly best proxy wins).

``best_split_par`` (``n_jobs`` > 1) scans the features in parallel, each from -inf, then
reduces their bests in feature order with the same strict ``>``: a feature's scan keeps its
first best candidate, and the serial scan keeps it exactly when it beats every earlier
feature's, so the split is the serial one bit for bit. Compiled at its first use only."""

import numpy as np
from numba import njit, prange

from proxboost.engines._nodes import SMALL_LANES, SMALL_ROW_BITS, monotone_admissible, small_ranks


@njit(error_model="numpy", cache=True, nogil=True)
def best_split(H, offsets, lo, hi, m, nonempty, S, bounds, nan_bin):
    """Best (feature, last left bin, proxy, missing left) of a node with histogram H (S slots
    per bin) and weight m, among the candidates the monotone constraints admit (``bounds``: the
    node's (lower, upper) value bounds and the features' constraints,
    ``_nodes.monotone_admissible``; the missing values count in the side they go to, as
    scikit-learn's).

    Per feature, a branch-free pass lists the non-empty bins of the range (``nonempty``, a
    scratch of 256; a bin is empty when its row count is 0), then only those are scanned:
    candidate splits sit between consecutive non-empty bins, the missing values' bin (the last,
    ``nan_bin``) with them: so far they go right, and the last candidate sends them alone right.
    Where the node has missing values, the candidates between its values follow with the missing
    values left (``missing_left_pass``), as HistGradientBoosting's second scan. Also shrinks
    lo/hi to the node's non-empty bin range. Returns (-1, -1, -inf, False) when every feature is
    constant on the node.
    """
    n_features = offsets.shape[0] - 1
    total = 0.0
    o = offsets[0]
    for b in range(lo[0], hi[0] + 1):  # node sum from the histogram itself (consistent sums)
        total += H[S * (o + b)]
    best_proxy = -np.inf
    best_f = -1
    best_b = -1
    best_left = False
    for f in range(n_features):  # strict: a feature's first best wins only over every earlier one
        b, proxy, left = feature_best(
            H, f, (total, m), lo, hi, nonempty, S, bounds, nan_bin, offsets[f]
        )
        if proxy > best_proxy:
            best_proxy = proxy
            best_f = f
            best_b = b
            best_left = left
    return best_f, best_b, best_proxy, best_left


@njit(error_model="numpy", cache=True, nogil=True)
def missing_left_pass(H, o, nonempty, k, node, S, best_proxy, cst):
    """The candidates between a feature's values with its missing values left, in a node with
    (sum, weight) ``node``: ``nonempty[:k]`` lists its non-empty bins (histogram offset o), the
    missing values' last. Returns (last left bin, proxy) of the first candidate beating
    ``best_proxy`` that ``cst`` = (node's lower, upper value bounds, the feature's monotone
    constraint) admits, (-1, best_proxy) when none does."""
    total, m = node
    nan = S * (o + nonempty[k - 1])
    s_left = H[nan]
    n_left = H[nan + 1]
    best_b = -1
    for j in range(k - 2):
        b = nonempty[j]
        s_left += H[S * (o + b)]
        n_left += H[S * (o + b) + 1]
        s_right = total - s_left
        proxy = s_left * s_left / n_left + s_right * s_right / (m - n_left)
        if proxy > best_proxy and monotone_admissible(
            cst[2], s_left, n_left, total, m, cst[0], cst[1]
        ):
            best_proxy = proxy
            best_b = b
    return best_b, best_proxy


@njit(error_model="numpy", cache=True, nogil=True)
def rank_by_bin(bins, target, w, rows, segment, small):
    """Rows ``rows[start:end]``'s bins of feature f (``segment`` = (start, end, f)) in increasing
    order, equal bins in row order (a stable sort), with their w g and w, into ``small``'s first
    three arrays (``best_split_small``). Each row goes to its rank (``_nodes.small_ranks``, on
    16-bit lanes in ``small``'s last array), its key being its bin and then its place."""
    start, end, f = segment
    keys, vals, wts, order = small
    m = end - start
    lanes = order.view(np.int16)
    for j in range(m):
        lanes[np.uint64(j)] = (np.int64(bins[rows[start + j], f]) << SMALL_ROW_BITS) + j
    small_ranks(lanes, m)
    for i in range(m):
        rank = np.int64(lanes[np.uint64(SMALL_LANES + i)])
        r = rows[start + i]
        c = 1.0 if w is None else w[r]
        keys[rank] = bins[r, f]
        vals[rank] = target[r] * c
        if w is not None:
            wts[rank] = c


@njit(error_model="numpy", cache=True, nogil=True)
def best_split_small(bins, target, w, rows, start, end, node, small, bounds, nan_bin):
    """Best (feature, last left bin, first right bin, proxy, missing left) of a small node, by
    sorting its rows (``node``: its (sum, weight); ``bounds``: as ``best_split``'s).

    For nodes of at most ``SMALL_NODE`` rows, sorting the rows' bins (``rank_by_bin``) costs
    less than zeroing, subtracting and scanning 255-bin histograms. ``small``: the workspace's
    (small_bins, small_targets, small_weights, nonempty), where the sorted bins, their w g and
    w are written (``nonempty``: the ranks' keys; a small node has no histogram). Candidates
    and proxy are the histogram path's (the missing values' bin sorts last;
    ``small_missing_left_pass``); sums run over rows in bin order. Returns (-1, -1, -1, -inf,
    False) when every feature is constant on the node. ``weight``: the node's weight (its row
    count if ``w`` is None).
    """
    total, weight = node
    m = end - start
    p = bins.shape[1]
    best_proxy = -np.inf
    best_f = -1
    best_b = -1
    best_next = -1
    best_left = False
    keys, vals, wts, order = small
    for f in range(p):
        rank_by_bin(bins, target, w, rows, (start, end, f), small)
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
            if proxy > best_proxy and monotone_admissible(
                bounds[2][f], s_left, n_left, total, weight, bounds[0], bounds[1]
            ):
                best_proxy = proxy
                best_f = f
                best_b = keys[j]
                best_next = keys[j + 1]
                best_left = False
        if nan_bin[f] >= 0 and keys[m - 1] == nan_bin[f]:
            cst = (bounds[0], bounds[1], bounds[2][f])
            j, proxy = small_missing_left_pass(keys, vals, wts, w, m, node, best_proxy, cst)
            if j >= 0:
                best_proxy = proxy
                best_f = f
                best_b = keys[j]
                best_next = keys[j + 1]
                best_left = True
    return best_f, best_b, best_next, best_proxy, best_left


@njit(error_model="numpy", cache=True, nogil=True)
def small_missing_left_pass(keys, vals, wts, w, m, node, best_proxy, cst):
    """The candidates between a small node's values of one feature with its missing values
    left: ``keys[:m]`` its rows' bins sorted (the missing values' last), ``vals``, ``wts`` their
    w g and w, ``node`` its (sum, weight). Returns (position of the last left value, proxy) of
    the first candidate beating ``best_proxy`` that ``cst`` (as ``missing_left_pass``'s)
    admits, (-1, best_proxy) when none does."""
    total, weight = node
    nan_key = keys[m - 1]
    k = m  # keys[k:] are the missing values
    while k > 0 and keys[k - 1] == nan_key:
        k -= 1
    s_left = 0.0
    n_left = 0.0
    for j in range(k, m):
        s_left += vals[j]
        n_left += 1.0 if w is None else wts[j]
    best_j = -1
    for j in range(k - 1):
        s_left += vals[j]
        n_left += 1.0 if w is None else wts[j]
        if keys[j + 1] == keys[j]:
            continue
        s_right = total - s_left
        proxy = s_left * s_left / n_left + s_right * s_right / (weight - n_left)
        if proxy > best_proxy and monotone_admissible(
            cst[2], s_left, n_left, total, weight, cst[0], cst[1]
        ):
            best_proxy = proxy
            best_j = j
    return best_j, best_proxy


@njit(error_model="numpy", cache=True, nogil=True)
def feature_best(H, f, node, lo, hi, nonempty, S, bounds, nan_bin, o):
    """``best_split``'s scan of feature f alone, from -inf (``node``: the node's (sum, weight)):
    (last left bin, proxy, missing left) of its first best candidate, (-1, -inf, False) when it
    has none. Shrinks lo[f]/hi[f] as ``best_split`` does."""
    total, m = node
    best_proxy = -np.inf
    best_b = -1
    best_left = False
    k = 0
    for b in range(lo[f], hi[f] + 1):
        nonempty[k] = b
        k += H[S * (o + b) + S - 1] != 0.0
    if k == 0:
        return best_b, best_proxy, best_left
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
        if proxy > best_proxy and monotone_admissible(
            bounds[2][f], s_left, n_left, total, m, bounds[0], bounds[1]
        ):
            best_proxy = proxy
            best_b = b
    if nan_bin[f] >= 0 and hi[f] == nan_bin[f] and k >= 3:
        cst = (bounds[0], bounds[1], bounds[2][f])
        b, proxy = missing_left_pass(H, o, nonempty, k, node, S, best_proxy, cst)
        if b >= 0:
            best_proxy = proxy
            best_b = b
            best_left = True
    return best_b, best_proxy, best_left


@njit(error_model="numpy", cache=True, nogil=True, parallel=True)
def best_split_par(H, offsets, lo, hi, m, S, bounds, nan_bin):
    """``best_split`` with the features scanned in parallel (see the module docstring); its own
    scratch of non-empty bins per feature."""
    n_features = offsets.shape[0] - 1
    total = 0.0
    o = offsets[0]
    for b in range(lo[0], hi[0] + 1):  # node sum from the histogram itself (consistent sums)
        total += H[S * (o + b)]
    nonempty = np.empty((n_features, 256), np.int64)
    f_bin = np.empty(n_features, np.int64)
    f_proxy = np.empty(n_features)
    f_left = np.empty(n_features, np.bool_)
    for f in prange(n_features):
        b, proxy, left = feature_best(
            H, f, (total, m), lo, hi, nonempty[f], S, bounds, nan_bin, offsets[f]
        )
        f_bin[f] = b
        f_proxy[f] = proxy
        f_left[f] = left
    best_proxy = -np.inf
    best_f = -1
    best_b = -1
    best_left = False
    for f in range(n_features):  # in feature order, strict: the serial scan's first best
        if f_proxy[f] > best_proxy:
            best_proxy = f_proxy[f]
            best_f = f
            best_b = f_bin[f]
            best_left = f_left[f]
    return best_f, best_b, best_proxy, best_left
