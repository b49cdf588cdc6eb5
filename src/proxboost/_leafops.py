"""Compiled per-leaf order statistics: the piecewise-linear line searches in O(n).

Drop-in replacements of :func:`proxboost.losses.quantile_line_search` and
:func:`proxboost.losses.hinge_line_search`, with the same signatures and bit-identical results
(same order statistics, same tie rule, same floating-point formulas):

* rows are grouped by leaf with one counting sort (O(n + n_leaves), no comparison sort);
* in a leaf of more than 1024 values, the needed order statistic is found by sample select:
  two pivots bracketing its rank are selected in a strided sample of m^(3/4) values, one
  branch-free pass counts the values below, copies the few between the pivots and keeps the
  smallest above; the answer is selected among the copied values (O(m), about one pass);
* smaller leaves (and the rare sample misses) use an in-place quickselect with a three-way
  (Dutch flag) partition and a median-of-three pivot, so repeated values (pure leaves,
  constant predictions in early iterations) cost one pass; after ``2 log2(m) + 16`` rounds it
  falls back to heapsort, so the worst case is O(m log m) (numba's ``np.sort`` would take
  seconds to compile);
* the (k+1)-th order statistic, when the minimisers form an interval, is the minimum of the
  values right of the selected k-th (all of them are >= the k-th after the selection).

The kernels allocate O(n) scratch per call and hold no state (thread-safe, ``nogil``).

Tie rule (SPEC §2): if 0 minimises, 0; otherwise the midpoint of the interval of minimisers,
or its finite end when it is unbounded; an empty leaf gets 0. For the quantile, ``tau * m`` is
taken as an integer k when ``|tau * m - k| <= 1e-9 * m`` (as in :mod:`proxboost.losses`).

Wiring (done by the owner of ``losses.py``)::

    from ._leafops import quantile_line_search, hinge_line_search

replacing the two lexsort-based functions of the same names (or calling these from them).
"""

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _heapsort(a, lo, hi):
    """Sort a[lo:hi] in place (heapsort: O(m log m) worst case, and quick to compile)."""
    m = hi - lo
    for first in range(m // 2 - 1, -1, -1):
        _sift(a, lo, first, m)
    for end in range(m - 1, 0, -1):
        v = a[lo]
        a[lo] = a[lo + end]
        a[lo + end] = v
        _sift(a, lo, 0, end)


@njit(cache=True, nogil=True)
def _sift(a, lo, root, m):
    v = a[lo + root]
    while True:
        child = 2 * root + 1
        if child >= m:
            break
        if child + 1 < m and a[lo + child + 1] > a[lo + child]:
            child += 1
        if a[lo + child] <= v:
            break
        a[lo + root] = a[lo + child]
        root = child
    a[lo + root] = v


@njit(cache=True, nogil=True)
def _select(a, lo, hi, k):
    """Rearrange a[lo:hi] so that a[k] is its (k - lo + 1)-th smallest value; return a[k].

    Quickselect, three-way partition, median-of-three pivot; heapsort after 2 log2(m) + 16
    rounds. Afterwards a[lo:k] <= a[k] <= a[k+1:hi].
    """
    m = hi - lo
    budget = 16
    while m > 1:
        m >>= 1
        budget += 2
    while hi - lo > 1:
        if budget == 0:
            _heapsort(a, lo, hi)
            return a[k]
        budget -= 1
        mid = lo + (hi - lo) // 2
        x, y, z = a[lo], a[mid], a[hi - 1]
        if x > y:
            x, y = y, x
        if y > z:
            y = z
            if x > y:
                y = x
        pivot = y
        # [lo, lt) < pivot, [lt, i) == pivot, (gt, hi) > pivot
        lt = lo
        i = lo
        gt = hi - 1
        while i <= gt:
            v = a[i]
            if v < pivot:
                a[i] = a[lt]
                a[lt] = v
                lt += 1
                i += 1
            elif v > pivot:
                a[i] = a[gt]
                a[gt] = v
                gt -= 1
            else:
                i += 1
        if k < lt:
            hi = lt
        elif k > gt:
            lo = gt + 1
        else:
            return pivot
    return a[k]


@njit(cache=True, nogil=True)
def _order_pair(a, lo, hi, r, scratch):
    """(r-th, (r+1)-th) smallest values of a[lo:hi] (0-based r; +inf when r + 1 == m).

    Up to 1024 values: quickselect in place, then the minimum right of the r-th. Larger
    ranges: sample select. Two pivots bracketing rank r (+-1.5 sqrt(s) ranks around it) are
    selected in an evenly strided sample of s = m^(3/4) values; one pass counts the values
    below the lower pivot, copies those between the pivots to ``scratch`` and keeps the
    smallest value above the upper pivot; the answer is then selected in the small copied part. When the bracket misses rank
    r (unlikely; adversarial orders only cost time), quickselect on the whole range.
    """
    m = hi - lo
    if m > 1024:
        s = np.int64(np.exp(np.log(m) * 0.75))
        stride = m // s
        sample = np.empty(s)
        for i in range(s):
            sample[i] = a[lo + i * stride]
        pos = (r * s) // m
        delta = np.int64(1.5 * np.sqrt(s)) + 1  # ~3 standard deviations of the sample rank
        i1 = max(pos - delta, 0)
        i2 = min(pos + delta, s - 1)
        p1 = _select(sample, 0, s, i1)
        p2 = _select(sample, i1, s, i2)  # sample[i1:] >= p1 after the first selection
        n_lt = 0
        n_mid = 0
        min_gt = np.inf
        for j in range(lo, hi):
            v = a[j]
            n_lt += 1 if v < p1 else 0
            scratch[n_mid] = v
            n_mid += 1 if (v >= p1 and v <= p2) else 0
            if v > p2 and v < min_gt:
                min_gt = v
        rr = r - n_lt
        if 0 <= rr < n_mid:
            v = _select(scratch, 0, n_mid, rr)
            w = min_gt
            for j in range(rr + 1, n_mid):
                if scratch[j] < w:
                    w = scratch[j]
            return v, w
    k = lo + r
    v = _select(a, lo, hi, k)
    w = np.inf
    for j in range(k + 1, hi):
        if a[j] < w:
            w = a[j]
    return v, w


@njit(cache=True, nogil=True)
def _leaf_points(values, leaf_ids, n_leaves, tau, signs):
    """Tie-rule point of every leaf: tau-quantile (``signs`` empty) or hinge (P = #signs > 0).

    Ranks (1-based) of the interval of minimisers of a leaf of m values:
    quantile: [k, k + 1] when tau * m = k is an integer (to 1e-9 m), else ceil(tau * m) twice;
    hinge: [P, P + 1]. Rank < 1 is -inf, rank > m is +inf (as ``losses._pick_rank``).
    """
    n = values.shape[0]
    hinge = signs.shape[0] > 0
    # counting sort by leaf
    counts = np.zeros(n_leaves, np.int64)
    n_pos = np.zeros(n_leaves, np.int64)
    if hinge:
        for i in range(n):
            leaf = leaf_ids[i]
            counts[leaf] += 1
            n_pos[leaf] += 1 if signs[i] > 0 else 0  # branch-free: signs are random
    else:
        for i in range(n):
            counts[leaf_ids[i]] += 1
    starts = np.empty(n_leaves, np.int64)
    acc = 0
    big = 0
    for k in range(n_leaves):
        starts[k] = acc
        acc += counts[k]
        big = max(big, counts[k])
    fill = starts.copy()
    grouped = np.empty(n)
    for i in range(n):
        leaf = leaf_ids[i]
        k = fill[leaf]
        fill[leaf] = k + 1  # before the store below: no reload of fill through aliasing
        grouped[k] = values[i]
    scratch = np.empty(big)

    out = np.zeros(n_leaves)
    for leaf in range(n_leaves):
        m = counts[leaf]
        if m == 0:
            continue  # empty leaf: 0
        if hinge:
            lo_rank = n_pos[leaf]
            hi_rank = lo_rank + 1
        else:
            tm = tau * m
            k = np.int64(np.rint(tm))
            if abs(tm - k) <= 1e-9 * max(m, 1):
                lo_rank = k
                hi_rank = k + 1
            else:
                lo_rank = np.int64(np.ceil(tm))
                hi_rank = lo_rank
        start = starts[leaf]
        if lo_rank > m:
            lo = np.inf
            hi = np.inf
        elif lo_rank < 1:
            lo = -np.inf
            hi = -np.inf
            if hi_rank >= 1:  # hi_rank == 1: the minimum
                hi = np.inf
                for j in range(start, start + m):
                    if grouped[j] < hi:
                        hi = grouped[j]
        else:
            lo, hi = _order_pair(grouped, start, start + m, lo_rank - 1, scratch)
            if hi_rank == lo_rank:
                hi = lo
        # tie rule: 0 if it minimises, else the midpoint, or the finite end
        if lo <= 0.0 and 0.0 <= hi:
            out[leaf] = 0.0
        elif np.isfinite(lo) and np.isfinite(hi):
            out[leaf] = 0.5 * (lo + hi)
        elif np.isfinite(lo):
            out[leaf] = lo
        else:
            out[leaf] = hi
    return out


_NO_SIGNS = np.empty(0)


def quantile_line_search(u, leaf_ids, n_leaves, tau):
    """Per-leaf minimiser of sum_i rho_tau(u_i - c) (tau-quantile with the tie rule).

    Same signature and results as :func:`proxboost.losses.quantile_line_search`.
    """
    u = np.ascontiguousarray(u, dtype=np.float64)
    leaf_ids = np.ascontiguousarray(leaf_ids, dtype=np.intp)
    return _leaf_points(u, leaf_ids, int(n_leaves), float(tau), _NO_SIGNS)


def hinge_line_search(y, z, leaf_ids, n_leaves):
    """Per-leaf minimiser of sum_i max(0, 1 - y_i (z_i + c)) (tie rule).

    Each sample is a hinge in c with breakpoint y_i - z_i; with P positives in a leaf the
    minimisers are [b_(P), b_(P+1)]. Same signature and results as
    :func:`proxboost.losses.hinge_line_search`.
    """
    y = np.ascontiguousarray(y, dtype=np.float64)
    breakpoints = np.ascontiguousarray(y - np.asarray(z, dtype=np.float64))
    leaf_ids = np.ascontiguousarray(leaf_ids, dtype=np.intp)
    if len(y) == 0:
        return np.zeros(int(n_leaves))
    return _leaf_points(breakpoints, leaf_ids, int(n_leaves), 0.5, y)
