"""Preparation of the exact engine's training rows: per feature one uint8 code per distinct
value (at most MAX_CODES of them), else coarse bins cut near the quantiles at gaps wider than
FEATURE_THRESHOLD, with the rows' sorted order (see :mod:`proxboost.engines.exact`). Missing
values (NaN) of a feature get a bin of their own, its last (so that a feature with NaN is
exact-coded with at most MAX_CODES - 1 distinct values)."""

import numpy as np
from numba import njit

from proxboost.engines._exact.histogram import root_counts
from proxboost.engines._exact.records import FEATURE_THRESHOLD, MAX_CODES, Codes


def coarse_edges(u, counts, n_bins, thr):
    """Cut positions (after u[i]) of at most n_bins coarse bins of the sorted distinct values u:
    near the quantiles, and only where the next value exceeds u[i] + FEATURE_THRESHOLD (float32),
    so that values of two different bins are never merged by the threshold."""
    valid = np.flatnonzero(u[1:] > u[:-1] + thr)  # cut after u[i] allowed
    if len(valid) == 0:
        return valid
    cum = np.cumsum(counts)
    targets = np.arange(1, n_bins) * (cum[-1] / n_bins)
    pos = np.searchsorted(cum, targets, side="left")  # first i with cum[i] >= target
    k = np.searchsorted(valid, pos, side="left")  # first allowed cut at or after it
    return np.unique(valid[k[k < len(valid)]])


#: Training sets of at most this many rows have their exact-coded features found and coded by one
#: compiled call (``exact_codes``) instead of a ``np.unique`` per feature: on small data the
#: NumPy calls were most of a fit's fixed cost, and more so run cold after a fit's compiled loop
#: (crabs' 100 x 4: 0.12 ms of warm NumPy calls, about 0.4 ms of a 1,000-tree fit's wall time in
#: fits run one after the other). Above it the NumPy path alone: a column with more than
#: MAX_CODES values would be sorted twice.
COMPILED_ROWS = 1 << 14


@njit(error_model="numpy", cache=True, nogil=True)
def exact_codes(X32, B, n_bins, bin_value, nan_bin):
    """Code every feature of X32 with at most MAX_CODES distinct values (NaN counted as one,
    after the others): B[:, f] the rank of each row's value among them, ``bin_value[f]`` the
    values, ``n_bins[f]`` their number, ``nan_bin[f]`` the NaN bin (-1: none), exactly as
    ``np.unique(X32[:, f], return_inverse=True)`` gives them: its sorted distinct values, NaN
    last. The one difference: where a feature holds both +0.0 and -0.0 (equal values, one
    bin), the bin's value is the first of them in row order here, and np.unique's the first
    in its sort's order, which depends on the CPU's sort routine. No split can show it: a
    threshold is a/2 + b/2 between bin values a < b, the same with either zero (half of a
    zero adds nothing to half of a non-zero value; the engine refuses infinity), and bins are
    compared by value. Returns the features coded (bool per feature); the others are left
    untouched."""
    n, p = X32.shape
    exact = np.zeros(p, np.bool_)
    rank = np.empty(n, np.int64)
    for f in range(p):
        col = X32[:, f].copy()
        order = np.argsort(col, kind="mergesort")  # NaN last, as np.unique's
        k = 0
        for i in range(n):
            v = col[order[i]]
            if i > 0:
                prev = col[order[i - 1]]
                k += not (v == prev or (np.isnan(v) and np.isnan(prev)))
            rank[i] = k
            if k >= MAX_CODES:
                break
        if k >= MAX_CODES:  # a coarse feature: left to the NumPy path
            continue
        exact[f] = True
        n_bins[f] = k + 1 if n > 0 else 0
        for i in range(n):
            r = order[i]
            B[r, f] = rank[i]
            v = col[r]
            if i == 0 or rank[i] != rank[i - 1]:
                if np.isnan(v):
                    nan_bin[f] = rank[i]
                else:
                    bin_value[f, rank[i]] = v
    return exact


def code_features(X32):
    """The :data:`~.records.Codes` record of float32 training rows X32, and the size of one
    histogram buffer."""
    n, p = X32.shape
    B = np.empty((n, p), np.uint8)
    n_bins = np.zeros(p, np.int64)
    exact = np.zeros(p, np.bool_)
    bin_value = np.full((p, MAX_CODES), np.inf, dtype=np.float32)
    multi = np.zeros((p, MAX_CODES), np.bool_)  # coarse bin holding two or more distinct values
    slot = np.zeros(p, np.int64)
    sorted_cols = []
    nan_bin = np.full(p, -1, np.int64)
    if n <= COMPILED_ROWS:
        exact = exact_codes(X32, B, n_bins, bin_value, nan_bin)
    for f in np.flatnonzero(~exact):  # every feature on large data, the coarse ones on small
        # np.unique gathers the NaN of a column into one last "value": their bin, after the others
        u, inv, counts = np.unique(X32[:, f], return_inverse=True, return_counts=True)
        inv = inv.reshape(-1)
        n_values = len(u) - int(np.isnan(u[-1])) if len(u) else 0
        if len(u) <= MAX_CODES:  # one bin per distinct value (and one for NaN)
            exact[f] = True
            n_bins[f] = len(u)
            bin_value[f, :n_values] = u[:n_values]
            B[:, f] = inv
        else:  # coarse bins (and one for NaN), refined from the sorted order when needed
            cuts = coarse_edges(u[:n_values], counts[:n_values], MAX_CODES - 1, FEATURE_THRESHOLD)
            bin_of_u = np.searchsorted(cuts, np.arange(len(u)), side="left")
            bin_of_u[n_values:] = len(cuts) + 1
            B[:, f] = bin_of_u[inv]
            n_bins[f] = len(cuts) + 1 + len(u) - n_values
            multi[f, : n_bins[f]] = np.bincount(bin_of_u, minlength=n_bins[f]) >= 2
            multi[f, len(cuts) + 1 :] = False
            slot[f] = len(sorted_cols)
            sorted_cols.append(f)
        if n_values < len(u):
            nan_bin[f] = n_bins[f] - 1
    off = np.concatenate(([0], np.cumsum(n_bins))).astype(np.int64)
    ps = len(sorted_cols)
    So = np.empty((max(ps, 1), n if ps else 0), np.int32)
    Sv = np.empty((max(ps, 1), n if ps else 0), np.float32)
    bstart = np.zeros((max(ps, 1), MAX_CODES + 1), np.int64)
    for k, f in enumerate(sorted_cols):
        order = np.argsort(X32[:, f], kind="stable")
        So[k] = order
        Sv[k] = X32[order, f]
        counts = np.bincount(B[:, f], minlength=n_bins[f])
        bstart[k, 1 : n_bins[f] + 1] = np.cumsum(counts)
    # positive parts of the coarse features' bins, after the sums and weights of all bins
    coarse_bins = np.where(exact, 0, n_bins)
    poff = np.where(exact, -1, 2 * off[-1] + np.cumsum(coarse_bins) - coarse_bins)
    codes = Codes(
        values=X32,
        codes=B,
        bin_offset=off,
        positive_offset=poff.astype(np.int64),
        n_bins=n_bins,
        coarse_features=np.flatnonzero(~exact),
        bin_value=bin_value,
        multi_valued=multi,
        sorted_slot=slot,
        sorted_rows=So,
        sorted_values=Sv,
        bin_start=bstart,
        root_counts=root_counts(B, off, int(off[-1])),  # the root's bin counts, unit weights
        nan_bin=nan_bin,
    )
    return codes, int(2 * off[-1] + coarse_bins.sum())
