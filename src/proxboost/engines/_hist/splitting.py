"""Split finding of the hist engine: the best candidate between consecutive non-empty bins,
from a node's histogram or, on small nodes, from its rows sorted by bin (features in index
order, bins in increasing order, the first strictly best proxy wins)."""

import numpy as np
from numba import njit

from .._nodes import monotone_admissible


@njit(cache=True, nogil=True)
def best_split(H, offsets, lo, hi, m, nonempty, S, bounds):
    """Best (feature, last left bin, proxy) of a node with histogram H (S slots per bin) and
    weight m, among the candidates the monotone constraints admit (``bounds``: the node's
    (lower, upper) value bounds and the features' constraints, ``_nodes.monotone_admissible``).

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
            if proxy > best_proxy and monotone_admissible(
                bounds[2][f], s_left, n_left, total, m, bounds[0], bounds[1]
            ):
                best_proxy = proxy
                best_f = f
                best_b = b
    return best_f, best_b, best_proxy


@njit(cache=True, nogil=True)
def best_split_small(bins, target, w, rows, start, end, node, keys, vals, wts, bounds):
    """Best (feature, last left bin, first right bin, proxy) of a small node, by sorting its rows
    (``node``: its (sum, weight); ``bounds``: as ``best_split``'s).

    For nodes of at most ``SMALL_NODE`` rows, sorting the rows' bins (insertion sort) costs
    less than zeroing, subtracting and scanning 255-bin histograms. Candidates and proxy are
    the histogram path's; sums run over rows in bin order. Returns (-1, -1, -1, -inf) when every
    feature is constant on the node. ``weight``: the node's weight (its row count if ``w`` is
    None).
    """
    total, weight = node
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
            if proxy > best_proxy and monotone_admissible(
                bounds[2][f], s_left, n_left, total, weight, bounds[0], bounds[1]
            ):
                best_proxy = proxy
                best_f = f
                best_b = keys[j]
                best_next = keys[j + 1]
    return best_f, best_b, best_next, best_proxy
