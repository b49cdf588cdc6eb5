"""Histograms of the hist engine.

A histogram is a flat float64 array of S slots per (feature, bin), features at offsets (bin b of
feature f at k = offsets[f] + b): slot S * k holds the bin's target sum (weighted: of
weight * target), slot S * k + 1 its weight, slot S * k + S - 1 its row count. Unweighted, S = 2
(the weight is the row count); weighted, S = 3: the exact row count says which bins are empty
after a histogram subtraction, whose rounding can leave a small nonzero weight in an empty bin.

The ``*_par`` kernels (``n_jobs`` > 1) build the same histograms in parallel over features: a
feature's bins are its own, and each bin still gets its rows added in row order, so every sum
is the serial kernel's bit for bit. Each thread adds its rows into its own histogram (one row of
``hists``, the rows a page apart: ``Scratch.thread_hist``), zeroed first on its features' ranges,
then copies those ranges into the node's: the same additions from the same zeros. Adding
straight into the node's histogram, two threads' halves of it side by side, was about 40 %
slower per pass (the cores' prefetchers reach into the lines the other core writes; the exact
engine's histograms measured it). They are compiled at their first use only.
"""

import numpy as np
from numba import njit, prange

from proxboost.engines._nodes import feature_group


@njit(error_model="numpy", cache=True, nogil=True)
def slot(S, offset, b):
    """Slot S (offset + b) of a histogram (bin b of the feature at ``offset``) as an unsigned
    index: numba adds wrap-around code for every possibly negative index, which took a fifth
    of a node's histogram on one thread and a third on two (10^6 x 20 random bins)."""
    return np.uint64(S) * (np.uint64(offset) + np.uint64(b))


@njit(error_model="numpy", cache=True, nogil=True)
def add_rows(H, bins, offsets, target, w, rows, segment, group):
    """Add rows[segment[0]:segment[1]] to the bins of features [first, last) (``group``) of
    histogram H, four rows at a time (independent updates; each bin still receives its rows in
    row order), at unsigned indices (``slot``).

    ``w``: row weights, or None for unit weights (then the weight code is compiled away).
    """
    S = 2 if w is None else 3
    one = np.uint64(1)
    two = np.uint64(2)
    start, end = segment
    first, last = group
    j = start
    while j + 3 < end:
        r0 = np.uint64(rows[j])
        r1 = np.uint64(rows[j + 1])
        r2 = np.uint64(rows[j + 2])
        r3 = np.uint64(rows[j + 3])
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
        for f in range(first, last):
            fu = np.uint64(f)
            o = offsets[fu]
            i0 = slot(S, o, bins[r0, fu])
            i1 = slot(S, o, bins[r1, fu])
            i2 = slot(S, o, bins[r2, fu])
            i3 = slot(S, o, bins[r3, fu])
            H[i0] += g0
            H[i0 + one] += c0
            H[i1] += g1
            H[i1 + one] += c1
            H[i2] += g2
            H[i2 + one] += c2
            H[i3] += g3
            H[i3 + one] += c3
            if w is not None:
                H[i0 + two] += 1.0
                H[i1 + two] += 1.0
                H[i2 + two] += 1.0
                H[i3 + two] += 1.0
        j += 4
    while j < end:
        r = np.uint64(rows[j])
        c = 1.0 if w is None else w[r]
        g = target[r] * c
        for f in range(first, last):
            fu = np.uint64(f)
            i = slot(S, offsets[fu], bins[r, fu])
            H[i] += g
            H[i + one] += c
            if w is not None:
                H[i + two] += 1.0
        j += 1


@njit(error_model="numpy", cache=True, nogil=True)
def build_hist(H, bins, offsets, target, w, rows, start, end):
    """Add rows[start:end] to histogram H (``add_rows`` on every feature)."""
    add_rows(H, bins, offsets, target, w, rows, (start, end), (0, bins.shape[1]))


@njit(error_model="numpy", cache=True, nogil=True)
def root_stats(bins, offsets, w, rows, n_act):
    """The root histogram of rows[:n_act] without its target sums: weights and row counts per bin.

    The same for every tree grown on the same prepared rows and weights (computed once per fit).
    Weights are added in row order, as ``build_hist`` would.
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


@njit(error_model="numpy", cache=True, nogil=True)
def add_root_sums(H, bins, offsets, target, w, n_act, group):
    """The root's target sums (``build_root_sums``) on the bins of features [first, last)
    (``group``), four rows at a time (each bin still receives its rows in row order), at
    unsigned indices (``slot``)."""
    first, last = group
    S = 2 if w is None else 3
    n = n_act if w is None else bins.shape[0]
    r = 0
    while r + 3 < n:
        if w is None:
            g0 = target[r]
            g1 = target[r + 1]
            g2 = target[r + 2]
            g3 = target[r + 3]
        else:
            g0 = target[r] * w[r] if w[r] > 0.0 else 0.0
            g1 = target[r + 1] * w[r + 1] if w[r + 1] > 0.0 else 0.0
            g2 = target[r + 2] * w[r + 2] if w[r + 2] > 0.0 else 0.0
            g3 = target[r + 3] * w[r + 3] if w[r + 3] > 0.0 else 0.0
        r0 = np.uint64(r)
        r1 = np.uint64(r + 1)
        r2 = np.uint64(r + 2)
        r3 = np.uint64(r + 3)
        for f in range(first, last):
            fu = np.uint64(f)
            o = offsets[fu]
            H[slot(S, o, bins[r0, fu])] += g0
            H[slot(S, o, bins[r1, fu])] += g1
            H[slot(S, o, bins[r2, fu])] += g2
            H[slot(S, o, bins[r3, fu])] += g3
        r += 4
    while r < n:
        if w is None:
            g = target[r]
        else:
            g = target[r] * w[r] if w[r] > 0.0 else 0.0
        ru = np.uint64(r)
        for f in range(first, last):
            fu = np.uint64(f)
            H[slot(S, offsets[fu], bins[ru, fu])] += g
        r += 1


@njit(error_model="numpy", cache=True, nogil=True)
def build_root_sums(H, bins, offsets, target, w, rows, n_act, stats):
    """Root histogram of rows[:n_act] from its known weights and counts (``root_stats``): only
    the target sums are accumulated, in row order (as ``build_hist``).

    The loop runs over all rows in order, without the ``rows`` indirection: unweighted,
    rows[:n_act] are all rows; weighted, a row of weight 0 adds an exact 0.0 to its bin's sum
    (a select, whatever its target), which leaves every sum as the positive-weight rows make it.
    """
    for k in range(stats.shape[0]):
        H[k] = stats[k]
    add_root_sums(H, bins, offsets, target, w, n_act, (0, bins.shape[1]))


@njit(error_model="numpy", cache=True, nogil=True)
def zero_ranges(H, offsets, lo, hi, S):
    """H = 0 on the given bin ranges."""
    fill_group(H, None, offsets, (lo, hi), S, (0, offsets.shape[0] - 1))


@njit(error_model="numpy", cache=True, nogil=True)
def subtract_ranges(H, Hs, offsets, lo, hi, S):
    """H -= Hs on the given bin ranges (histogram subtraction)."""
    for f in range(offsets.shape[0] - 1):
        o = offsets[f]
        for i in range(S * (o + lo[f]), S * (o + hi[f] + 1)):
            H[i] -= Hs[i]


@njit(error_model="numpy", cache=True, nogil=True)
def fill_group(H, src, offsets, ranges, S, group):
    """H = src (None: 0) on the bin ranges ``ranges`` = (lo, hi) of the features [first, last)
    (``group``)."""
    lo, hi = ranges
    first, last = group
    for f in range(first, last):
        o = offsets[f]
        for i in range(S * (o + lo[f]), S * (o + hi[f] + 1)):
            H[i] = 0.0 if src is None else src[i]


@njit(error_model="numpy", cache=True, nogil=True, parallel=True)
def build_hist_par(H, bins, offsets, target, w, rows, segment, ranges, hists):
    """``build_hist`` of rows[segment[0]:segment[1]] into H on its bin ranges ``ranges`` = (lo,
    hi) (H need not be zeroed there), on the threads of ``hists`` (one histogram per thread), in
    parallel over features (the same sums: each bin's rows in row order).

    Each thread takes one group of features (``feature_group``) and passes over the rows once,
    adding each row to its group's bins (``add_rows``, the serial kernel's loop) in its own
    histogram (module docstring): a pass per feature would read every row's cache line once
    per feature, which made two threads slower than one on large data, and a loop of one row
    at a time was a third slower per thread than the serial loop's four. The thread count is
    the scratch's, not numba's ``get_num_threads()`` in the kernel, which would keep numba from
    caching every function compiled with it."""
    p = bins.shape[1]
    k = hists.shape[0]
    S = 2 if w is None else 3
    for t in prange(k):
        group = feature_group(p, t, k)
        own = hists[t]
        fill_group(own, None, offsets, ranges, S, group)
        add_rows(own, bins, offsets, target, w, rows, segment, group)
        fill_group(H, own, offsets, ranges, S, group)


@njit(error_model="numpy", cache=True, nogil=True, parallel=True)
def build_root_sums_par(H, bins, offsets, target, w, n_act, stats, hists):
    """``build_root_sums`` on the threads of ``hists``, in parallel over features (the same
    sums, in row order; one pass over the rows per thread into its own histogram, as
    ``build_hist_par``)."""
    p = bins.shape[1]
    k = hists.shape[0]
    S = 2 if w is None else 3
    for t in prange(k):
        first, last = feature_group(p, t, k)
        own = hists[t]
        for i in range(S * offsets[first], S * offsets[last]):
            own[i] = stats[i]
        add_root_sums(own, bins, offsets, target, w, n_act, (first, last))
        for i in range(S * offsets[first], S * offsets[last]):
            H[i] = own[i]
