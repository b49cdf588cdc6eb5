"""Histograms of the exact engine: per bin the sums of ``w g`` and of ``w`` (and, for coarse
features, of the positive parts of ``w g``; layout in :data:`records.Codes`). Each buffer
carries per feature a bin range (``bin_lo``, ``bin_hi``) outside which its node has no rows:
zeroing, building, subtracting and scanning stay inside it (children's ranges are within their
parent's). Buffers are passed by index and sliced here: no reference counting, unlike slices
taken by the caller."""

import numpy as np
from numba import njit, prange

from proxboost.engines._nodes import (
    ROOT_SUMS_LEAD,
    feature_group,
    feature_group_after,
    inlined_kernel,
    kernel,
    target_sums,
)


@kernel
def builds_positive(codes, work):
    """Whether the tree's histograms carry the coarse features' positive parts (decided per
    tree by ``grower.root_pass``; without them, nothing reads those slots)."""
    return codes.coarse_features.shape[0] > 0 and work.target_range[0] > 0.0


@inlined_kernel
def positive_part(wg):
    """A row's positive part max(w g, 0), computed where a histogram adds it rather than stored
    per row: the same value, without a pass storing it and a load reading it."""
    return wg if wg > 0.0 else 0.0


@inlined_kernel
def add_positive_parts(H, po, b, g):
    """Add four rows' positive parts (``g``: their w g) to a coarse feature's slots from ``po``
    (their codes ``b``)."""
    H[np.uint64(po + b[0])] += positive_part(g[0])
    H[np.uint64(po + b[1])] += positive_part(g[1])
    H[np.uint64(po + b[2])] += positive_part(g[2])
    H[np.uint64(po + b[3])] += positive_part(g[3])


@kernel
def zero_ranges(codes, work, u):
    """Zero histogram buffer u on its ranges."""
    fill_group(codes, work, u, work.hist[u], None, (0, codes.bin_offset.shape[0] - 1))


@kernel
def fill_group(codes, work, u, H, src, group):
    """H = src (None: 0) on buffer u's ranges of the features [first, last) (``group``), their
    positive parts included when the tree builds them: everything a node's histogram holds for
    those features. H and src are buffer u or a thread's own histogram (the same layout)."""
    lo = work.bin_lo[u]
    hi = work.bin_hi[u]
    off = codes.bin_offset
    poff = codes.positive_offset
    positive = builds_positive(codes, work)
    first, last = group
    for f in range(first, last):
        o = off[f]
        for i in range(2 * (o + lo[f]), 2 * (o + hi[f] + 1)):
            H[np.uint64(i)] = 0.0 if src is None else src[np.uint64(i)]
        if positive and poff[f] >= 0:
            for i in range(poff[f] + lo[f], poff[f] + hi[f] + 1):
                H[np.uint64(i)] = 0.0 if src is None else src[np.uint64(i)]


@kernel
def subtract_ranges(codes, work, u, v):
    """Histogram u -= histogram v on the ranges of u (histogram subtraction)."""
    H = work.hist[u]
    Hs = work.hist[v]
    lo = work.bin_lo[u]
    hi = work.bin_hi[u]
    off = codes.bin_offset
    poff = codes.positive_offset
    positive = builds_positive(codes, work)
    for f in range(off.shape[0] - 1):
        o = off[f]
        for i in range(2 * (o + lo[f]), 2 * (o + hi[f] + 1)):
            H[np.uint64(i)] -= Hs[np.uint64(i)]
        if positive and poff[f] >= 0:
            for i in range(poff[f] + lo[f], poff[f] + hi[f] + 1):
                H[np.uint64(i)] -= Hs[np.uint64(i)]


@kernel
def add_rows(codes, target, w, work, H, segment, group):
    """Add rows[segment[0]:segment[1]] to the bins (and a coarse feature's positive parts) of
    features [first, last) (``group``) of histogram H (a buffer or a thread's own histogram),
    four rows at a time (independent updates;
    each bin and positive part still receives its rows in row order). The positive parts are
    added in the same pass over a feature's codes as its sums: a second loop, reading every
    code again, made the histograms of all-coarse data about twice as slow."""
    rows = work.rows
    B = codes.codes
    off = codes.bin_offset
    poff = codes.positive_offset
    fc = codes.coarse_features
    nc = fc.shape[0] if builds_positive(codes, work) else 0
    start, end = segment
    first, last = group
    j = start
    while j + 3 < end:
        r0 = np.uint64(rows[np.uint64(j)])
        r1 = np.uint64(rows[np.uint64(j + 1)])
        r2 = np.uint64(rows[np.uint64(j + 2)])
        r3 = np.uint64(rows[np.uint64(j + 3)])
        c0 = 1.0 if w is None else w[r0]
        c1 = 1.0 if w is None else w[r1]
        c2 = 1.0 if w is None else w[r2]
        c3 = 1.0 if w is None else w[r3]
        g0 = c0 * target[r0]
        g1 = c1 * target[r1]
        g2 = c2 * target[r2]
        g3 = c3 * target[r3]
        for f in range(first, last):
            fu = np.uint64(f)
            o = off[fu]
            b0 = B[r0, fu]
            b1 = B[r1, fu]
            b2 = B[r2, fu]
            b3 = B[r3, fu]
            i0 = 2 * (o + b0)
            i1 = 2 * (o + b1)
            i2 = 2 * (o + b2)
            i3 = 2 * (o + b3)
            H[np.uint64(i0)] += g0
            H[np.uint64(i0 + 1)] += c0
            H[np.uint64(i1)] += g1
            H[np.uint64(i1 + 1)] += c1
            H[np.uint64(i2)] += g2
            H[np.uint64(i2 + 1)] += c2
            H[np.uint64(i3)] += g3
            H[np.uint64(i3 + 1)] += c3
            po = poff[fu]
            if nc > 0 and po >= 0:
                add_positive_parts(H, po, (b0, b1, b2, b3), (g0, g1, g2, g3))
        j += 4
    while j < end:
        r = np.uint64(rows[np.uint64(j)])
        c = 1.0 if w is None else w[r]
        g = c * target[r]
        for f in range(first, last):
            fu = np.uint64(f)
            i = 2 * (off[fu] + B[r, fu])
            H[np.uint64(i)] += g
            H[np.uint64(i + 1)] += c
        if nc > 0:
            gp = positive_part(g)
            for k in range(nc):
                fi = fc[np.uint64(k)]
                f = np.uint64(fi)
                if fi >= first and fi < last:
                    H[np.uint64(poff[f] + B[r, f])] += gp
        j += 1


@kernel
def build_hist(codes, target, w, work, u, start, end):
    """Add rows[start:end] to buffer u (zeroed on the node's ranges): ``add_rows`` on every
    feature."""
    add_rows(codes, target, w, work, work.hist[u], (start, end), (0, codes.codes.shape[1]))


@kernel
def add_root_rows(codes, target, work, H, group):
    """Add every row's target (and positive part) to the bins of features [first, last)
    (``group``) of histogram H (a buffer or a thread's own histogram), four rows at a time,
    each bin's rows in row order (the root's sums with unit weights; the positive parts in the
    same pass, as ``add_rows``)."""
    B = codes.codes
    off = codes.bin_offset
    poff = codes.positive_offset
    fc = codes.coarse_features
    n = B.shape[0]
    nc = fc.shape[0] if builds_positive(codes, work) else 0
    first, last = group
    r = 0
    while r + 3 < n:
        r0 = np.uint64(r)
        r1 = np.uint64(r + 1)
        r2 = np.uint64(r + 2)
        r3 = np.uint64(r + 3)
        g0 = target[r0]
        g1 = target[r1]
        g2 = target[r2]
        g3 = target[r3]
        for f in range(first, last):
            fu = np.uint64(f)
            o = off[fu]
            b0 = B[r0, fu]
            b1 = B[r1, fu]
            b2 = B[r2, fu]
            b3 = B[r3, fu]
            H[np.uint64(2 * (o + b0))] += g0
            H[np.uint64(2 * (o + b1))] += g1
            H[np.uint64(2 * (o + b2))] += g2
            H[np.uint64(2 * (o + b3))] += g3
            po = poff[fu]
            if nc > 0 and po >= 0:
                add_positive_parts(H, po, (b0, b1, b2, b3), (g0, g1, g2, g3))
        r += 4
    while r < n:
        ru = np.uint64(r)
        g = target[ru]
        for f in range(first, last):
            fu = np.uint64(f)
            H[np.uint64(2 * (off[fu] + B[ru, fu]))] += g
        if nc > 0:
            gp = positive_part(g)
            for k in range(nc):
                fi = fc[np.uint64(k)]
                f = np.uint64(fi)
                if fi >= first and fi < last:
                    H[np.uint64(poff[f] + B[ru, f])] += gp
        r += 1


@kernel
def root_from_counts(codes, work, u):
    """Buffer u = the root's counts (``root_counts``, the same for every tree of a fit), sums
    zero."""
    H = work.hist[u]
    counts = codes.root_counts
    for i in range(counts.shape[0]):
        H[i] = counts[i]
    for i in range(counts.shape[0], H.shape[0]):
        H[i] = 0.0


@kernel
def root_counts_group(codes, work, u, H, group):
    """H = the root's counts (``root_counts``) on buffer u's ranges of the features [first,
    last) (``group``), sums and positive parts zero: ``root_from_counts`` on those features."""
    counts = codes.root_counts
    fill_group(codes, work, u, H, None, group)
    lo = work.bin_lo[u]
    hi = work.bin_hi[u]
    off = codes.bin_offset
    first, last = group
    for f in range(first, last):
        o = off[f]
        for i in range(2 * (o + lo[f]) + 1, 2 * (o + hi[f] + 1), 2):
            H[np.uint64(i)] = counts[np.uint64(i)]


@kernel
def build_root_hist(codes, target, work, u):
    """Unit weights, all rows: buffer u = histogram of the root, its counts copied from
    ``root_counts``; only the sums are accumulated (``add_root_rows`` on every feature)."""
    root_from_counts(codes, work, u)
    add_root_rows(codes, target, work, work.hist[u], (0, codes.codes.shape[1]))


@njit(error_model="numpy", cache=True, nogil=True)
def root_counts(B, off, total_bins):
    """The root's histogram with unit weights: the count of each bin (sums left zero)."""
    counts = np.zeros(2 * total_bins)
    for r in range(B.shape[0]):
        for f in range(B.shape[1]):
            counts[2 * (off[f] + B[r, f]) + 1] += 1.0
    return counts


# -- threads (n_jobs > 1) -------------------------------------------------------------------------
# The ``*_par`` kernels build the same histograms in parallel over features: a feature's bins (and
# a coarse feature's positive parts) are its own, and each bin still receives its rows' ``w g``,
# ``w`` and positive parts in row order, as in the serial kernels: every sum bit for bit. They are
# compiled at their first use with threads only.
#
# Each thread adds its rows into its own histogram (``Threads.hist``: one row per thread, a page
# apart), zeroed first on its features' ranges, and then copies those ranges into the node's
# buffer: the same additions from the same zeros, so the same sums. Adding straight into the
# node's buffer, two threads' halves of it side by side, took about 40 % longer per pass (10^5
# rows x 20 features: 0.94 against 0.66 ms on two threads, one thread 1.33 ms; the gap between
# the two halves had to reach a few pages to remove it: the cores' prefetchers reach into the
# lines the other core writes).


@njit(error_model="numpy", cache=True, nogil=True, parallel=True)
def build_hist_par(codes, target, w, work, u, start, end, hists):
    """``build_hist`` on the threads of ``hists`` (one histogram per thread, ``Threads.hist``),
    in parallel over features (the same sums: each bin's rows in row order); buffer u need not
    be zeroed (each thread writes its features' ranges).

    Each thread takes one group of features (``feature_group``) and passes over the rows once
    (``add_rows``, the serial kernel's loop of four rows at a time): a pass per feature would
    read every row's cache line once per feature, which made two threads slower than one on
    large data, and a loop of one row at a time was slower per thread than the serial loop.
    The thread count is the scratch's, not numba's ``get_num_threads()`` in the kernel, which
    would keep numba from caching every function compiled with it."""
    p = codes.codes.shape[1]
    k = hists.shape[0]
    for t in prange(k):
        group = feature_group(p, t, k)
        H = hists[t]
        fill_group(codes, work, u, H, None, group)
        add_rows(codes, target, w, work, H, (start, end), group)
        fill_group(codes, work, u, work.hist[u], H, group)


@njit(error_model="numpy", cache=True, nogil=True, parallel=True)
def build_root_hist_par(codes, target, work, u, hists, sums):
    """``build_root_hist`` on the threads of ``hists``, in parallel over features (the same
    sums, in row order; one pass over the rows per thread into its own histogram, as
    ``build_hist_par``). With ``sums`` (an array of 2, or None), thread 0 first adds the root's
    target sums into it (``target_sums``: sum and square sum, in row order) and takes fewer
    features (``feature_group_after``): the serial root pass's two chains of additions, which
    no thread count shortens, run beside the other threads' features."""
    p = codes.codes.shape[1]
    k = hists.shape[0]
    for t in prange(k):
        if sums is None:
            group = feature_group(p, t, k)
        else:
            group = feature_group_after(p, t, k, ROOT_SUMS_LEAD)
            if t == 0:
                sums[0], sums[1] = target_sums(target, codes.codes.shape[0])
        H = hists[t]
        root_counts_group(codes, work, u, H, group)
        add_root_rows(codes, target, work, H, group)
        fill_group(codes, work, u, work.hist[u], H, group)
