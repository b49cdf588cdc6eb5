"""The exact engine: scikit-learn's regression trees, grown by a compiled (numba) builder.

``engine="exact"`` grows the trees ``DecisionTreeRegressor(criterion="squared_error",
max_depth=D)`` grows (see ``docs/engines.md``), without scikit-learn's per-node sorts:

* **Data** (``prepare(X, fit=True)``, once per fit): X is cast to float32, as scikit-learn does.
  A feature with at most 256 distinct float32 values gets one uint8 code per distinct value
  (*exact-coded*: one histogram bin per distinct value). Every other feature gets at most 255
  *coarse* bins, cut near its quantiles but only where two consecutive distinct values differ by
  more than ``FEATURE_THRESHOLD`` (so the threshold never merges values of two bins), and keeps
  its rows in sorted order (int32 rows, float32 values, computed once).
* **Nodes** own contiguous segments of a row array (stable partitions); every row carries its
  node's label. A node's histogram holds per bin the sum of ``w g`` and of ``w``, and for the
  coarse features also the sum of the positive parts of ``w g``; the larger child's is the
  parent's minus the smaller child's (unit weights: exact counts; with weights both children
  are built). Histograms are zeroed, built, subtracted and scanned only over each feature's
  range of bins non-empty in the parent. Nodes of at most ``SMALL_NODE`` rows sort their
  values instead. The last level labels rows without partitioning.
* **Candidates** as scikit-learn's ``BestSplitter``: between two consecutive node values
  ``a < b`` with ``b > a + FEATURE_THRESHOLD`` (1e-7, in float32 arithmetic); a feature whose
  node values satisfy ``max <= min + FEATURE_THRESHOLD`` is constant in the node and, as in
  scikit-learn, remembered as constant for the node's descendants. The proxy is
  ``S_L^2 / W_L + S_R^2 / W_R``; the threshold ``a/2 + b/2`` (float64; ``a`` if that equals
  ``b``); rows with ``x <= threshold`` go left. On exact-coded features the candidates are read
  from the histogram. On coarse features, candidates between non-empty bins come from the
  histogram, and those inside a bin are evaluated exactly (the node's rows of that bin, in
  value order, from the bin's sorted segment or the node's rows) unless an upper bound of their
  proxy cannot beat the best so far: the proxy is convex in S_L and in W_L, so its maximum over
  the bin's box ``S_L`` in ``[S + negatives, S + positives]``, ``W_L`` in ``[W + w_min,
  W + W_bin - w_min]`` is at a corner. Skipped candidates could not win (ties go to the first).
* **Ties and seeds**: features are visited in scikit-learn's random order: the same
  Fisher-Yates draws over the same ``features`` / constant-feature bookkeeping, driven by the
  same xorshift generator (``our_rand_r``) seeded with ``random_state.randint(0, 2**31 - 1)``,
  one draw per tree as scikit-learn's splitter. The first strictly best proxy wins.
* **Stopping** as ``DepthFirstTreeBuilder``: a node is a leaf at depth D, with fewer than 2
  rows, when its impurity (``sq_sum / W - (sum / W)^2``; children's from the parent's split
  with the right child's square sum by subtraction, as scikit-learn) is at most float64
  epsilon, when no feature has a candidate, or when the split's improvement is below -epsilon.

Sums run in this engine's row order, not scikit-learn's, so two candidates whose proxies
agree to rounding may be ordered differently (a genuine tie; ``tests/test_engines_exact.py``
checks every differing split in exact arithmetic).

Rows of weight 0 take no part in split finding; they get their leaf from the grown tree.
Memory: X as float32 plus one byte per value (codes), plus 8 bytes per value of a coarse
feature (sorted rows and values); per tree O(n) scratch and histograms for at most
``min(D, n / 33) + 3`` nodes: nothing grows with the depth but the tree itself.
An engine instance keeps per-fit scratch (not pickled) and must not grow two trees at once.
"""

import numpy as np
from numba import njit
from sklearn.utils import check_random_state

from ._nodes import EPSILON, LEAF, SMALL, SMALL_NODE, check_weight, child_buffers

MAX_CODES = 256  # features with at most this many distinct values get one code per value (uint8)
FEATURE_THRESHOLD = np.float32(1e-7)  # scikit-learn's tolerance between feature values
RAND_R_MAX = 2147483647  # scikit-learn's seed range: randint(0, RAND_R_MAX)

# Kernels that allocate nothing are compiled without reference counting (`_nrt=False`, a numba
# option that is not public API: pyproject.toml bounds numba to the tested versions): numba
# otherwise
# increments and decrements the count of every array argument at each call (two atomic
# operations per array), which took a quarter of the tree time in the per-feature scans.
_kernel = njit(cache=True, nogil=True, _nrt=False)
# The hot loops (bin scans; histogram zeroing, subtraction and building; partitions) index with
# np.uint64: numba wraps negative signed indices around (extra operations on every access, which
# also kept the range loops from being vectorised); these indices are never negative.


# ---------------------------------------------------------------------------------------------
# scikit-learn's random feature order
# ---------------------------------------------------------------------------------------------
@_kernel
def _rand_int(low, high, state):
    """scikit-learn's ``rand_int``: low + our_rand_r(state) % (high - low) (xorshift32)."""
    s = state[0]
    if s == 0:
        s = 1  # DEFAULT_SEED
    s ^= (s << 13) & 0xFFFFFFFF
    s ^= s >> 17
    s ^= (s << 5) & 0xFFFFFFFF
    state[0] = s
    return low + (s % 2147483648) % (high - low)


# ---------------------------------------------------------------------------------------------
# Histograms: per bin the weighted target sum and the weight (side by side, feature f's bins
# from 2 * off[f]); after them, for the coarse features only, the sum of the positive w g per
# bin (coarse feature f's bins from poff[f]). Each buffer carries per feature a bin range
# (lo, hi) outside which its node has no rows: zeroing, building, subtracting and scanning stay
# inside it (children's ranges are within their parent's).
# ---------------------------------------------------------------------------------------------
@_kernel
def _zero_ranges(Hs, u, off, poff, rlo, rhi):
    """Zero histogram u on its ranges. (Buffers are passed with their index and sliced here: no
    reference counting, unlike slices taken by the caller.)"""
    H = Hs[u]
    lo = rlo[u]
    hi = rhi[u]
    for f in range(off.shape[0] - 1):
        o = off[f]
        for i in range(2 * (o + lo[f]), 2 * (o + hi[f] + 1)):
            H[np.uint64(i)] = 0.0
        if poff[f] >= 0:
            for i in range(poff[f] + lo[f], poff[f] + hi[f] + 1):
                H[np.uint64(i)] = 0.0


@_kernel
def _subtract_ranges(Hb, u, v, off, poff, rlo, rhi):
    """Histogram u -= histogram v on the ranges of u (histogram subtraction)."""
    H = Hb[u]
    Hs = Hb[v]
    lo = rlo[u]
    hi = rhi[u]
    for f in range(off.shape[0] - 1):
        o = off[f]
        for i in range(2 * (o + lo[f]), 2 * (o + hi[f] + 1)):
            H[np.uint64(i)] -= Hs[np.uint64(i)]
        if poff[f] >= 0:
            for i in range(poff[f] + lo[f], poff[f] + hi[f] + 1):
                H[np.uint64(i)] -= Hs[np.uint64(i)]


@_kernel
def _build_hist(Hb, u, B, off, fc, poff, target, gpos, w, rows, start, end):
    """Add rows[start:end] to H (zeroed on the node's ranges), four rows at a time
    (independent updates; each bin still receives its rows in row order).

    ``B``: the rows' bin codes (uint8, row-major). ``fc``: the coarse features (their positive
    parts ``gpos`` go to ``poff``).
    """
    H = Hb[u]
    p = B.shape[1]
    nc = fc.shape[0]
    j = start
    while j + 3 < end:
        r0 = np.uint64(rows[np.uint64(j)])
        r1 = np.uint64(rows[np.uint64(j + 1)])
        r2 = np.uint64(rows[np.uint64(j + 2)])
        r3 = np.uint64(rows[np.uint64(j + 3)])
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
        g0 = c0 * target[r0]
        g1 = c1 * target[r1]
        g2 = c2 * target[r2]
        g3 = c3 * target[r3]
        for f in range(p):
            fu = np.uint64(f)
            o = off[fu]
            i0 = 2 * (o + B[r0, fu])
            i1 = 2 * (o + B[r1, fu])
            i2 = 2 * (o + B[r2, fu])
            i3 = 2 * (o + B[r3, fu])
            H[np.uint64(i0)] += g0
            H[np.uint64(i0 + 1)] += c0
            H[np.uint64(i1)] += g1
            H[np.uint64(i1 + 1)] += c1
            H[np.uint64(i2)] += g2
            H[np.uint64(i2 + 1)] += c2
            H[np.uint64(i3)] += g3
            H[np.uint64(i3 + 1)] += c3
        if nc > 0:
            p0 = gpos[r0]
            p1 = gpos[r1]
            p2 = gpos[r2]
            p3 = gpos[r3]
            for k in range(nc):
                f = np.uint64(fc[np.uint64(k)])
                o = poff[f]
                H[np.uint64(o + B[r0, f])] += p0
                H[np.uint64(o + B[r1, f])] += p1
                H[np.uint64(o + B[r2, f])] += p2
                H[np.uint64(o + B[r3, f])] += p3
        j += 4
    while j < end:
        r = np.uint64(rows[np.uint64(j)])
        c = 1.0 if w is None else w[r]
        g = c * target[r]
        for f in range(p):
            fu = np.uint64(f)
            i = 2 * (off[fu] + B[r, fu])
            H[np.uint64(i)] += g
            H[np.uint64(i + 1)] += c
        if nc > 0:
            gp = gpos[r]
            for k in range(nc):
                f = np.uint64(fc[np.uint64(k)])
                H[np.uint64(poff[f] + B[r, f])] += gp
        j += 1


@_kernel
def _build_root_hist(Hb, u, B, off, fc, poff, target, gpos, counts):
    """Unit weights, all rows: H = histogram of the root, its counts (the same for every tree
    of a fit) copied from ``counts`` (sums zero); only the sums are accumulated."""
    H = Hb[u]
    for i in range(counts.shape[0]):
        H[i] = counts[i]
    for i in range(counts.shape[0], H.shape[0]):
        H[i] = 0.0
    n, p = B.shape
    nc = fc.shape[0]
    for r in range(n):
        ru = np.uint64(r)
        g = target[ru]
        for f in range(p):
            fu = np.uint64(f)
            H[np.uint64(2 * (off[fu] + B[ru, fu]))] += g
        if nc > 0:
            gp = gpos[ru]
            for k in range(nc):
                f = np.uint64(fc[np.uint64(k)])
                H[np.uint64(poff[f] + B[ru, f])] += gp


@njit(cache=True, nogil=True)
def _root_counts(B, off, total_bins):
    counts = np.zeros(2 * total_bins)
    for r in range(B.shape[0]):
        for f in range(B.shape[1]):
            counts[2 * (off[f] + B[r, f]) + 1] += 1.0
    return counts


# ---------------------------------------------------------------------------------------------
# Candidate scans of one feature on one node
# ---------------------------------------------------------------------------------------------
@_kernel
def _proxy(sl, wl, s_node, w_node):
    sr = s_node - sl
    return sl * sl / wl + sr * sr / (w_node - wl)


@_kernel
def _may_beat(sl, wl, s_node, w_node, best):
    """Division-free pre-test: False only when proxy(sl, wl) is certainly below best.

    proxy > best  <=>  sl^2 W_R + sr^2 W_L > best W_L W_R; the relative margin covers the
    rounding of both sides, so a candidate passing the exact test always passes this one.
    """
    wr = w_node - wl
    sr = s_node - sl
    return sl * sl * wr + sr * sr * wl >= best * (wl * wr) * (1.0 - 1e-9)


@_kernel
def _scan_values(cv, cg, cw, w, k, sl, wl, s_node, w_node, thr, best, tie_wins):
    """Candidates between consecutive sorted node values cv[:k] (w g in cg, w in cw; unit
    weights, cw unused, when ``w`` is None), the sums of the rows left of cv[0] being (sl, wl).
    A candidate wins with a proxy above ``best``, or equal to it while ``tie_wins`` (the best
    so far comes later in the scan order). Returns (found, best, a, b, sl, wl) with the sums
    after cv[:k]."""
    found = 0
    a = 0.0
    b = 0.0
    for j in range(k - 1):
        sl += cg[j]
        wl += 1.0 if w is None else cw[j]
        v = cv[j]
        vn = cv[j + 1]
        if vn > v + thr and _may_beat(sl, wl, s_node, w_node, best):
            proxy = _proxy(sl, wl, s_node, w_node)
            if proxy > best or (tie_wins and proxy == best):
                best = proxy
                found = 1
                a = v
                b = vn
                tie_wins = False
    sl += cg[k - 1]
    wl += 1.0 if w is None else cw[k - 1]
    return found, best, a, b, sl, wl


@_kernel
def _sort_values(cv, cg, cw, k):
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


@_kernel
def _collect(
    X32, B, f, code, Sv, So, seg_lo, seg_hi, nid, label, target, w, rows, start, end, cv, cg, cw
):
    """The node's rows in coarse bin ``code`` of feature f, sorted by value into cv, cg, cw.

    From the bin's global sorted segment (So[seg_lo:seg_hi], membership by node label) when it
    is not much longer than the node, else from the node's rows (then sorted). Returns their
    number.
    """
    k = 0
    if seg_hi - seg_lo <= 4 * (end - start):
        for j in range(seg_lo, seg_hi):
            r = So[j]
            if nid[r] == label:
                c = 1.0 if w is None else w[r]
                cv[k] = Sv[j]
                cg[k] = c * target[r]
                cw[k] = c
                k += 1
    else:
        for j in range(start, end):
            r = rows[j]
            if B[r, f] == code:
                c = 1.0 if w is None else w[r]
                cv[k] = X32[r, f]
                cg[k] = c * target[r]
                cw[k] = c
                k += 1
        _sort_values(cv, cg, cw, k)
    return k


@_kernel
def _scan_binned(
    H,
    o,
    po,
    lo,
    hi,
    hv,
    multi,
    X32,
    B,
    f,
    So,
    Sv,
    bstart,
    nid,
    label,
    target,
    w,
    rows,
    start,
    end,
    s_node,
    w_node,
    wmin,
    best,
    cv,
    cg,
    cw,
    nonempty,
    inner,
    inner_s,
    inner_w,
):
    """Candidates of feature f on a node with histogram H (sums and weights of bin b at
    2 * (o + b), positive parts of a coarse feature at po + b), inside the bin range
    lo[f] .. hi[f], which is narrowed to the node's non-empty bins. ``hv``, ``multi``: the
    feature's distinct values (exact-coded) or multi-valued bins (coarse); ``So``, ``Sv``,
    ``bstart``: a coarse feature's sorted order.

    Exact-coded features (``po`` -1): one bin per distinct value (values hv), candidates between
    consecutive non-empty bins. Otherwise coarse bins whose edges lie at gaps wider than
    FEATURE_THRESHOLD: the
    candidates between non-empty bins come from the histogram; those inside a bin are
    evaluated exactly (its node rows sorted) only when a bound on their proxy beats the best so
    far (the proxy is convex in each of S_L and W_L: its maximum over the bin's box of possible
    (S_L, W_L) is at a corner). Returns (found, best, a, b, lo_bin, hi_bin): found -1 =
    constant feature; a candidate between two bins returns them (lo_bin, hi_bin; those of a
    coarse feature are then resolved into values a, b), one inside a coarse bin its values
    (a, b) and lo_bin = -1.
    """
    thr = FEATURE_THRESHOLD
    m = 0
    for b in range(lo[f], hi[f] + 1):  # branch-free list of the non-empty bins
        nonempty[np.uint64(m)] = b
        m += H[np.uint64(2 * (o + b) + 1)] > 0.0
    first = nonempty[0]
    last = nonempty[m - 1]
    lo[f] = first
    hi[f] = last
    found = 0
    a = 0.0
    bb = 0.0
    lo_bin = -1
    hi_bin = -1
    if po < 0:
        if hv[last] <= hv[first] + thr:
            return -1, best, a, bb, lo_bin, hi_bin
        sl = 0.0
        wl = 0.0
        prev = -1
        for j in range(m):
            b = nonempty[j]
            if (
                prev >= 0
                and hv[np.uint64(b)] > hv[np.uint64(prev)] + thr
                and _may_beat(sl, wl, s_node, w_node, best)
            ):
                proxy = _proxy(sl, wl, s_node, w_node)
                if proxy > best:
                    best = proxy
                    found = 1
                    a = hv[prev]
                    bb = hv[b]
                    lo_bin = prev
                    hi_bin = b
            sl += H[np.uint64(2 * (o + b))]
            wl += H[np.uint64(2 * (o + b) + 1)]
            prev = b
        return found, best, a, bb, lo_bin, hi_bin
    if first == last:
        if not multi[first]:  # one coarse bin holding one distinct value: constant
            return -1, best, a, bb, lo_bin, hi_bin
        k = _collect(
            X32,
            B,
            f,
            first,
            Sv,
            So,
            bstart[first],
            bstart[first + 1],
            nid,
            label,
            target,
            w,
            rows,
            start,
            end,
            cv,
            cg,
            cw,
        )
        if cv[k - 1] <= cv[0] + thr:
            return -1, best, a, bb, lo_bin, hi_bin
        found, best, a, bb, _, _ = _scan_values(
            cv, cg, cw, w, k, 0.0, 0.0, s_node, w_node, thr, best, False
        )
        return found, best, a, bb, lo_bin, hi_bin
    # first the candidates between bins (from the histogram), listing the bins with room for a
    # candidate inside (with their left sums); then those of the listed bins whose bound can
    # still reach the best. The winner is the first (in value order) of the largest proxy, as in
    # one ordered pass: an inner candidate before the best boundary candidate of this feature
    # (bin j < j_best) also wins on an equal proxy.
    sl = 0.0
    wl = 0.0
    j_best = -1
    n_in = 0
    for j in range(m):
        b = nonempty[j]
        wb = H[np.uint64(2 * (o + b) + 1)]
        if j > 0 and _may_beat(sl, wl, s_node, w_node, best):
            proxy = _proxy(sl, wl, s_node, w_node)
            if proxy > best:
                best = proxy
                found = 1
                lo_bin = nonempty[j - 1]
                hi_bin = b
                j_best = j
        inner[np.uint64(n_in)] = (
            j  # kept (branch-free) when the bin has two values and room on each side
        )
        inner_s[np.uint64(n_in)] = sl
        inner_w[np.uint64(n_in)] = wl
        n_in += np.int64(multi[np.uint64(b)]) & np.int64(wb >= 2.0 * wmin)
        sl += H[np.uint64(2 * (o + b))]
        wl += wb
    for t in range(n_in):
        j = inner[t]
        b = nonempty[np.uint64(j)]
        sl = inner_s[t]
        wl = inner_w[t]
        i = 2 * (o + b)
        wb = H[np.uint64(i + 1)]
        pos = H[np.uint64(po + b)]
        neg = H[np.uint64(i)] - pos
        w_lo = wl + wmin
        w_hi = wl + wb - wmin
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
        if refine:  # the corners
            bound = max(
                max(_proxy(lo_l, w_lo, s_node, w_node), _proxy(hi_l, w_lo, s_node, w_node)),
                max(_proxy(lo_l, w_hi, s_node, w_node), _proxy(hi_l, w_hi, s_node, w_node)),
            )
            refine = bound + 1e-9 * (abs(bound) + abs(best)) > best
        if refine:
            k = _collect(
                X32,
                B,
                f,
                b,
                Sv,
                So,
                bstart[b],
                bstart[b + 1],
                nid,
                label,
                target,
                w,
                rows,
                start,
                end,
                cv,
                cg,
                cw,
            )
            res, best, va, vb, _, _ = _scan_values(
                cv, cg, cw, w, k, sl, wl, s_node, w_node, thr, best, j < j_best
            )
            if res > 0:
                found = 1
                a = va
                bb = vb
                lo_bin = -1
                j_best = -1  # the later bins come after this candidate
    return found, best, a, bb, lo_bin, hi_bin


@_kernel
def _scan_small(X32, f, target, w, rows, start, end, s_node, w_node, thr, best, keys, vals, wts):
    """Candidates of one feature on a small node: insertion sort of its float32 values."""
    m = end - start
    for j in range(m):
        r = rows[start + j]
        key = X32[r, f]
        c = 1.0 if w is None else w[r]
        val = c * target[r]
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
    if keys[m - 1] <= keys[0] + thr:
        return -1, best, 0.0, 0.0
    found, best, a, b, _, _ = _scan_values(
        keys, vals, wts, w, m, 0.0, 0.0, s_node, w_node, thr, best, False
    )
    return found, best, a, b


@_kernel
def _bin_edge_values(f, lo_bin, hi_bin, So, Sv, bstart, nid, label, X32, B, rows, start, end):
    """(largest node value in coarse bin lo_bin, smallest in hi_bin) of feature f (sorted order
    So, Sv, bstart)."""
    a = -np.inf
    b = np.inf
    seg_lo = bstart[lo_bin + 1] - bstart[lo_bin]
    seg_hi = bstart[hi_bin + 1] - bstart[hi_bin]
    if seg_lo + seg_hi <= 4 * (end - start):
        for j in range(bstart[lo_bin + 1] - 1, bstart[lo_bin] - 1, -1):
            if nid[So[j]] == label:
                a = Sv[j]
                break
        for j in range(bstart[hi_bin], bstart[hi_bin + 1]):
            if nid[So[j]] == label:
                b = Sv[j]
                break
    else:
        for j in range(start, end):
            r = rows[j]
            code = B[r, f]
            v = X32[r, f]
            if code == lo_bin and v > a:
                a = v
            if code == hi_bin and v < b:
                b = v
    return a, b


# ---------------------------------------------------------------------------------------------
# The tree builder
# ---------------------------------------------------------------------------------------------
@_kernel
def _split_node(
    features,
    constant,
    n_known,
    state,
    H,
    buf,
    rlo,
    rhi,
    off,
    poff,
    hv,
    multi,
    X32,
    B,
    So,
    Sv,
    bstart,
    loc,
    nid,
    label,
    target,
    w,
    rows,
    start,
    end,
    s_node,
    w_node,
    wmin,
    thr,
    keys,
    vals,
    wts,
    cv,
    cg,
    cw,
    nonempty,
    inner,
    inner_s,
    inner_w,
):
    """scikit-learn's ``node_split_best`` on one node: (feature, a, b, code, n_total_constants).

    feature -1: no candidate on any feature. ``code`` >= 0 when the split falls between two bins
    of the feature: the rows going left are then those with codes at most ``code`` (the same
    rows as ``x <= threshold``, read from the smaller uint8 codes); -1 otherwise.
    """
    p = features.shape[0]
    f_i = p
    n_visited = 0
    n_found = 0
    n_drawn = 0
    n_total = n_known
    best = -np.inf
    best_f = -1
    best_a = 0.0
    best_b = 0.0
    best_lo = -1
    best_hi = -1
    while f_i > n_total and (n_visited < p or n_visited <= n_found + n_drawn):
        n_visited += 1
        f_j = _rand_int(n_drawn, f_i - n_found, state)
        if f_j < n_known:
            t = features[n_drawn]
            features[n_drawn] = features[f_j]
            features[f_j] = t
            n_drawn += 1
            continue
        f_j += n_found
        f = features[f_j]
        lo_bin = -1
        hi_bin = -1
        if buf >= 0:
            k = loc[f]  # (slices cost nothing here: no reference counting)
            res, prox, a, b, lo_bin, hi_bin = _scan_binned(
                H[buf],
                off[f],
                poff[f],
                rlo[buf],
                rhi[buf],
                hv[f],
                multi[f],
                X32,
                B,
                f,
                So[k],
                Sv[k],
                bstart[k],
                nid,
                label,
                target,
                w,
                rows,
                start,
                end,
                s_node,
                w_node,
                wmin,
                best,
                cv,
                cg,
                cw,
                nonempty,
                inner,
                inner_s,
                inner_w,
            )
        else:
            res, prox, a, b = _scan_small(
                X32, f, target, w, rows, start, end, s_node, w_node, thr, best, keys, vals, wts
            )
        if res < 0:  # constant in this node (and its descendants)
            t = features[f_j]
            features[f_j] = features[n_total]
            features[n_total] = t
            n_found += 1
            n_total += 1
            continue
        f_i -= 1
        t = features[f_i]
        features[f_i] = features[f_j]
        features[f_j] = t
        if res > 0:
            best = prox
            best_f = f
            best_a = a
            best_b = b
            best_lo = lo_bin
            best_hi = hi_bin
    # scikit-learn's invariant: known constants keep their order for siblings and children
    for i in range(n_known):
        features[i] = constant[i]
    for i in range(n_known, n_total):
        constant[i] = features[i]
    if (
        best_f >= 0 and best_lo >= 0 and poff[best_f] >= 0
    ):  # between two coarse bins: their edge values
        k = loc[best_f]
        best_a, best_b = _bin_edge_values(
            best_f, best_lo, best_hi, So[k], Sv[k], bstart[k], nid, label, X32, B, rows, start, end
        )
    return best_f, best_a, best_b, best_lo, n_total


@_kernel
def _partition_rows(
    X32, B, f, thr, code, target, w, rows, tmp, nid, label_l, label_r, start, end, coarse
):
    """Stable partition of rows[start:end] by X[r, f] <= thr (B[r, f] <= code when code >= 0,
    the same rows); node labels; each side's weight,
    sum and square sum, accumulated over its rows in their order (scikit-learn's fresh
    ``criterion.init`` sums of the children).

    Branch-free (both destinations written, cursors advanced by the side): the sides of
    consecutive rows are unpredictable.
    """
    il = start
    ir = 0
    wl = 0.0
    sl = 0.0
    ql = 0.0
    wr = 0.0
    sr = 0.0
    qr = 0.0
    fu = np.uint64(f)
    for j in range(start, end):
        r = rows[np.uint64(j)]
        ru = np.uint64(r)
        m = np.int64(B[ru, fu] <= code) if code >= 0 else np.int64(X32[ru, fu] <= thr)
        c = 1.0 if w is None else w[ru]
        g = target[ru]
        cgl = (c * g) if m else 0.0
        cgr = 0.0 if m else (c * g)
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
    return il, wl, sl, ql, wr, sr, qr


@_kernel
def _impurity(q, s, wsum):
    return q / wsum - (s / wsum) ** 2.0


@_kernel
def _grow_nodes(
    X32,
    B,
    off,
    poff,
    nbins,
    hv,
    multi,
    loc,
    So,
    Sv,
    bstart,
    target,
    w,
    rows,
    n_act,
    max_depth,
    eps,
    thr,
    small,
    tmp_r,
    nid,
    gpos,
    H,
    cv,
    cg,
    cw,
    root_counts,
    fc,
    coarse,
    wmin,
    w0,
    s0,
    q0,
    feature,
    threshold,
    left,
    right,
    leaf_of_node,
    gain,
    leaf_ids,
    features,
    constant,
    state,
    keys,
    vals,
    wts,
    nonempty,
    inner,
    inner_s,
    inner_w,
    free,
    n_free,
    rlo,
    rhi,
    st_parent,
    st_isleft,
    st_label,
    st_start,
    st_end,
    st_depth,
    st_mode,
    st_nconst,
    st_imp,
    st_w,
    st_s,
    st_q,
):
    """The node loop of ``_grow`` on its preallocated arrays (no reference counting:
    ``_grow`` allocates, this kernel only reads and writes). Returns (n_nodes, n_leaves)."""
    p = X32.shape[1]
    imp0 = _impurity(q0, s0, w0)
    mode0 = LEAF
    if max_depth > 0 and n_act >= 2 and imp0 > eps:
        mode0 = SMALL
        if n_act > small:
            n_free -= 1
            mode0 = free[n_free]
            for f in range(p):
                rlo[mode0, f] = 0
                rhi[mode0, f] = nbins[f] - 1
            if w is None:
                _build_root_hist(H, mode0, B, off, fc, poff, target, gpos, root_counts)
            else:
                _zero_ranges(H, mode0, off, poff, rlo, rhi)
                _build_hist(H, mode0, B, off, fc, poff, target, gpos, w, rows, 0, n_act)
    st_parent[0] = -1
    st_isleft[0] = False
    st_label[0] = 0
    st_start[0] = 0
    st_end[0] = n_act
    st_depth[0] = 0
    st_mode[0] = mode0
    st_nconst[0] = 0
    st_imp[0] = imp0
    st_w[0] = w0
    st_s[0] = s0
    st_q[0] = q0
    top = 1
    n_nodes = 0
    n_leaves = 0
    n_labels = 1

    while top > 0:
        top -= 1
        node = n_nodes  # node ids in scikit-learn's depth-first order
        n_nodes += 1
        parent = st_parent[top]
        if parent >= 0:
            if st_isleft[top]:
                left[parent] = node
            else:
                right[parent] = node
        label = st_label[top]
        start = st_start[top]
        end = st_end[top]
        depth = st_depth[top]
        buf = st_mode[top]
        imp = st_imp[top]
        wn = st_w[top]
        sn = st_s[top]
        qn = st_q[top]
        best_f = -1
        a = 0.0
        b = 0.0
        code = -1
        n_const = 0
        thr_v = 0.0
        last_level = False
        mid = start
        wl = 0.0
        sl = 0.0
        ql = 0.0
        wr = 0.0
        wr_f = 0.0
        sr_f = 0.0
        qr_f = 0.0
        imp_l = 0.0
        imp_r = 0.0
        label_l = 0
        label_r = 0
        if buf != LEAF:
            best_f, a, b, code, n_const = _split_node(
                features,
                constant,
                st_nconst[top],
                state,
                H,
                buf,
                rlo,
                rhi,
                off,
                poff,
                hv,
                multi,
                X32,
                B,
                So,
                Sv,
                bstart,
                loc,
                nid,
                label,
                target,
                w,
                rows,
                start,
                end,
                sn,
                wn,
                wmin,
                thr,
                keys,
                vals,
                wts,
                cv,
                cg,
                cw,
                nonempty,
                inner,
                inner_s,
                inner_w,
            )
        if best_f >= 0:
            thr_v = a / 2.0 + b / 2.0
            if thr_v == b:
                thr_v = a
            last_level = depth + 1 >= max_depth
            if last_level:  # children are leaves: label the rows (left / right), no partition
                bf = np.uint64(best_f)
                for j in range(start, end):
                    r = np.uint64(rows[np.uint64(j)])
                    m = (B[r, bf] <= code) if code >= 0 else (X32[r, bf] <= thr_v)
                    c = 1.0 if w is None else w[r]
                    g = target[r]
                    wg = (c * g) if m else 0.0
                    wl += c if m else 0.0
                    sl += wg
                    ql += wg * g
                    leaf_ids[r] = n_leaves if m else n_leaves + 1
            else:
                label_l = n_labels
                label_r = n_labels + 1
                n_labels += 2
                mid, wl, sl, ql, wr_f, sr_f, qr_f = _partition_rows(
                    X32,
                    B,
                    best_f,
                    thr_v,
                    code,
                    target,
                    w,
                    rows,
                    tmp_r,
                    nid,
                    label_l,
                    label_r,
                    start,
                    end,
                    coarse,
                )
            wr = wn - wl
            imp_l = _impurity(ql, sl, wl)
            imp_r = _impurity(qn - ql, sn - sl, wr)  # scikit-learn's children_impurity
            improvement = (wn / w0) * (imp - (wr / wn * imp_r) - (wl / wn * imp_l))
            if improvement + eps < 0.0:
                best_f = -1
        if best_f < 0:  # leaf
            if buf >= 0:
                free[n_free] = buf
                n_free += 1
            leaf_of_node[node] = n_leaves
            for j in range(start, end):
                leaf_ids[rows[j]] = n_leaves
            n_leaves += 1
            continue

        feature[node] = best_f
        threshold[node] = thr_v
        gain[node] = (wn * imp - wl * imp_l - wr * imp_r) / w0
        if last_level:
            if buf >= 0:
                free[n_free] = buf
                n_free += 1
            left[node] = n_nodes
            right[node] = n_nodes + 1
            leaf_of_node[n_nodes] = n_leaves
            leaf_of_node[n_nodes + 1] = n_leaves + 1
            n_nodes += 2
            n_leaves += 2
            continue

        # the children's own sums are the partition's fresh ones (scikit-learn's criterion.init)
        nl = mid - start
        nr = end - mid
        mode_l = LEAF
        mode_r = LEAF
        if nl >= 2 and imp_l > eps:
            mode_l = SMALL
        if nr >= 2 and imp_r > eps:
            mode_r = SMALL
        need_l = mode_l == SMALL and nl > small
        need_r = mode_r == SMALL and nr > small
        if buf >= 0:
            # the smaller child's histogram from its rows, the larger's as the parent's minus the
            # smaller's (unit weights: exact counts; weighted: from its rows, no subtraction,
            # whose rounding could leave empty bins non-empty)
            small_left = nl <= nr
            need_small = need_l if small_left else need_r
            into, subtract, buf_l, buf_r, n_free = child_buffers(
                buf, small_left, need_l, need_r, free, n_free
            )
            if into >= 0:
                if into != buf:
                    for f in range(p):
                        rlo[into, f] = rlo[buf, f]
                        rhi[into, f] = rhi[buf, f]
                if w is None or need_small:
                    _zero_ranges(H, into, off, poff, rlo, rhi)
                    _build_hist(
                        H,
                        into,
                        B,
                        off,
                        fc,
                        poff,
                        target,
                        gpos,
                        w,
                        rows,
                        start if small_left else mid,
                        mid if small_left else end,
                    )
                if subtract and w is None:
                    _subtract_ranges(H, buf, into, off, poff, rlo, rhi)
                elif subtract:
                    _zero_ranges(H, buf, off, poff, rlo, rhi)
                    _build_hist(
                        H,
                        buf,
                        B,
                        off,
                        fc,
                        poff,
                        target,
                        gpos,
                        w,
                        rows,
                        mid if small_left else start,
                        end if small_left else mid,
                    )
            if need_l:
                mode_l = buf_l
            if need_r:
                mode_r = buf_r
        # push right then left: the left subtree first (scikit-learn's order)
        st_parent[top] = node
        st_isleft[top] = False
        st_label[top] = label_r
        st_start[top] = mid
        st_end[top] = end
        st_depth[top] = depth + 1
        st_mode[top] = mode_r
        st_nconst[top] = n_const
        st_imp[top] = imp_r
        st_w[top] = wr_f
        st_s[top] = sr_f
        st_q[top] = qr_f
        top += 1
        st_parent[top] = node
        st_isleft[top] = True
        st_label[top] = label_l
        st_start[top] = start
        st_end[top] = mid
        st_depth[top] = depth + 1
        st_mode[top] = mode_l
        st_nconst[top] = n_const
        st_imp[top] = imp_l
        st_w[top] = wl
        st_s[top] = sl
        st_q[top] = ql
        top += 1

    return n_nodes, n_leaves


@njit(cache=True, nogil=True)
def _grow(
    X32,
    B,
    off,
    poff,
    nbins,
    exact,
    hv,
    multi,
    loc,
    So,
    Sv,
    bstart,
    target,
    w,
    rows,
    n_act,
    max_depth,
    max_nodes,
    seed,
    eps,
    thr,
    small,
    tmp_r,
    nid,
    gpos,
    H,
    cv,
    cg,
    cw,
    root_counts,
):
    """Grow one tree depth-first (scikit-learn's node order); see the module docstring.

    ``rows[:n_act]``: the rows taking part (``nid`` 0 on them, -1 elsewhere); with unit weights
    (``w`` None) every row, set here.
    """
    n, p = X32.shape
    fc = np.flatnonzero(~exact)
    coarse = fc.shape[0] > 0  # node labels and positive parts serve the coarse features only
    # one pass over the rows: row list, labels, positive parts, smallest weight, root sums
    wmin = np.inf
    w0 = 0.0
    s0 = 0.0
    q0 = 0.0
    for j in range(n_act):
        if w is None:
            rows[j] = j
            if coarse:
                nid[j] = 0
        r = rows[j]
        c = 1.0 if w is None else w[r]
        g = target[r]
        wg = c * g
        w0 += c
        s0 += wg
        q0 += wg * g
        if coarse:
            gpos[r] = wg if wg > 0.0 else 0.0
        if c < wmin:
            wmin = c
    feature = np.full(max_nodes, -1, np.int32)
    threshold = np.zeros(max_nodes)
    left = np.full(max_nodes, -1, np.int32)
    right = np.full(max_nodes, -1, np.int32)
    leaf_of_node = np.full(max_nodes, -1, np.int32)
    gain = np.zeros(max_nodes)
    leaf_ids = np.full(n, -1, np.intp)
    features = np.arange(p)
    constant = np.empty(p, np.int64)
    state = np.empty(1, np.int64)
    state[0] = seed
    keys = np.empty(small + 1, np.float32)
    vals = np.empty(small + 1)
    wts = np.empty(small + 1)
    nonempty = np.empty(MAX_CODES, np.int64)
    inner = np.empty(
        MAX_CODES, np.int64
    )  # coarse bins with room for a candidate inside, their left sums
    inner_s = np.empty(MAX_CODES)
    inner_w = np.empty(MAX_CODES)

    n_buf = H.shape[0]
    free = np.arange(n_buf - 1, -1, -1).astype(np.int32)
    n_free = n_buf
    rlo = np.zeros((n_buf, p), np.int64)  # per buffer and feature: its node's bin range
    rhi = np.zeros((n_buf, p), np.int64)

    cap = 2 * max_depth + 4
    st_parent = np.empty(cap, np.int32)
    st_isleft = np.empty(cap, np.bool_)
    st_label = np.empty(cap, np.int32)
    st_start = np.empty(cap, np.int64)
    st_end = np.empty(cap, np.int64)
    st_depth = np.empty(cap, np.int32)
    st_mode = np.empty(cap, np.int32)
    st_nconst = np.empty(cap, np.int64)
    st_imp = np.empty(cap)
    st_w = np.empty(cap)
    st_s = np.empty(cap)
    st_q = np.empty(cap)

    n_nodes, n_leaves = _grow_nodes(
        X32,
        B,
        off,
        poff,
        nbins,
        hv,
        multi,
        loc,
        So,
        Sv,
        bstart,
        target,
        w,
        rows,
        n_act,
        max_depth,
        eps,
        thr,
        small,
        tmp_r,
        nid,
        gpos,
        H,
        cv,
        cg,
        cw,
        root_counts,
        fc,
        coarse,
        wmin,
        w0,
        s0,
        q0,
        feature,
        threshold,
        left,
        right,
        leaf_of_node,
        gain,
        leaf_ids,
        features,
        constant,
        state,
        keys,
        vals,
        wts,
        nonempty,
        inner,
        inner_s,
        inner_w,
        free,
        n_free,
        rlo,
        rhi,
        st_parent,
        st_isleft,
        st_label,
        st_start,
        st_end,
        st_depth,
        st_mode,
        st_nconst,
        st_imp,
        st_w,
        st_s,
        st_q,
    )
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
def _apply_tree(X32, feature, threshold, left, right, leaf_of_node):
    n = X32.shape[0]
    out = np.empty(n, np.intp)
    for i in range(n):
        node = 0
        while left[node] >= 0:
            if X32[i, feature[node]] <= threshold[node]:
                node = left[node]
            else:
                node = right[node]
        out[i] = leaf_of_node[node]
    return out


# ---------------------------------------------------------------------------------------------
# Public objects
# ---------------------------------------------------------------------------------------------
class ExactData:
    """Prepared training rows (see the module docstring): float32 X, per-feature bin codes and
    histogram offsets, the distinct values of exact-coded features, and the sorted orders of the
    others."""

    def __init__(self, X32, B, off, nbins, exact, hv, multi, loc, So, Sv, bstart):
        self.X32 = X32
        self.B = B
        self.off = off
        # positive parts of the coarse features' bins, after the sums and weights of all bins
        coarse_bins = np.where(exact, 0, nbins)
        self.poff = np.where(exact, -1, 2 * off[-1] + np.cumsum(coarse_bins) - coarse_bins).astype(
            np.int64
        )
        self.hist_size = int(2 * off[-1] + coarse_bins.sum())
        self.nbins = nbins
        self.exact = exact
        self.hv = hv
        self.multi = multi
        self.loc = loc
        self.So = So
        self.Sv = Sv
        self.bstart = bstart
        self.root_counts = _root_counts(B, off, int(off[-1]))  # the root's bin counts, unit weights

    @property
    def shape(self):
        return self.X32.shape

    def __len__(self):
        return self.X32.shape[0]


def _coarse_edges(u, counts, n_bins, thr):
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


class ExactTree:
    """A fitted exact tree: float32 rows -> compact leaf ids (picklable, compiled apply).

    Node arrays (root 0, ``left == -1`` at leaves, scikit-learn's depth-first node order):
    ``feature``, ``threshold`` (float64; float32 ``x <= threshold`` goes left), ``left``,
    ``right``, ``leaf_of_node``. Per internal node: ``split_feature`` and ``split_gain``.
    """

    def __init__(self, feature, threshold, left, right, leaf_of_node, n_leaves, gain):
        self.feature = feature
        self.threshold = threshold
        self.left = left
        self.right = right
        self.leaf_of_node = leaf_of_node
        self.n_leaves = int(n_leaves)
        self.gain = gain

    @property
    def split_feature(self):
        return self.feature[self.left >= 0].astype(np.intp)

    @property
    def split_gain(self):
        return self.gain[self.left >= 0]

    @property
    def node_count(self):
        return len(self.left)

    def apply(self, Xp):
        X32 = _as_float32(Xp)
        return _apply_tree(
            X32, self.feature, self.threshold, self.left, self.right, self.leaf_of_node
        )


def _as_float32(Xp):
    if isinstance(Xp, ExactData):
        return Xp.X32
    if not (isinstance(Xp, np.ndarray) and Xp.dtype == np.float32 and Xp.ndim == 2):
        raise TypeError(
            "the exact engine works on prepared rows: pass X through engine.prepare first"
        )
    return Xp if Xp.flags.c_contiguous else np.ascontiguousarray(Xp)


class ExactEngine:
    """Compiled exact tree engine (``engine="exact"``): see the module docstring."""

    name = "exact"

    def __init__(self):
        self._work = None

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_work"] = None
        return state

    def prepare(self, X, fit=False, sample_weight=None):
        """float32 rows; with ``fit=True`` also the codes and sorted orders of the training rows.

        ``sample_weight`` is accepted for the common interface and not needed: the candidate
        splits are the node's own values, whatever the weights.
        """
        X32 = np.ascontiguousarray(X, dtype=np.float32)
        if X32.ndim != 2:
            raise ValueError(f"X must be 2-dimensional, got shape {X32.shape}")
        if not np.isfinite(X32).all():
            raise ValueError(
                "X contains NaN or infinity (or values beyond float32's range): the exact "
                "engine splits finite float32 values only"
            )
        if not fit:
            return X32
        n, p = X32.shape
        if n >= 2**31 - 1:
            raise ValueError(
                f"X has {n} rows; the exact engine indexes rows with int32 (at most 2**31 - 2)"
            )
        B = np.empty((n, p), np.uint8)
        nbins = np.zeros(p, np.int64)
        exact = np.zeros(p, np.bool_)
        hv = np.full((p, MAX_CODES), np.inf, dtype=np.float32)
        multi = np.zeros((p, MAX_CODES), np.bool_)  # coarse bin holding two or more distinct values
        loc = np.zeros(p, np.int64)
        sorted_cols = []
        for f in range(p):
            u, inv, counts = np.unique(X32[:, f], return_inverse=True, return_counts=True)
            inv = inv.reshape(-1)
            if len(u) <= MAX_CODES:  # one bin per distinct value
                exact[f] = True
                nbins[f] = len(u)
                hv[f, : len(u)] = u
                B[:, f] = inv
            else:  # coarse bins, refined from the sorted order when needed
                cuts = _coarse_edges(u, counts, MAX_CODES - 1, FEATURE_THRESHOLD)
                bin_of_u = np.searchsorted(cuts, np.arange(len(u)), side="left")
                B[:, f] = bin_of_u[inv]
                nbins[f] = len(cuts) + 1
                multi[f, : nbins[f]] = np.bincount(bin_of_u, minlength=nbins[f]) >= 2
                loc[f] = len(sorted_cols)
                sorted_cols.append(f)
        off = np.concatenate(([0], np.cumsum(nbins))).astype(np.int64)
        ps = len(sorted_cols)
        So = np.empty((max(ps, 1), n if ps else 0), np.int32)
        Sv = np.empty((max(ps, 1), n if ps else 0), np.float32)
        bstart = np.zeros((max(ps, 1), MAX_CODES + 1), np.int64)
        for k, f in enumerate(sorted_cols):
            order = np.argsort(X32[:, f], kind="stable")
            So[k] = order
            Sv[k] = X32[order, f]
            counts = np.bincount(B[:, f], minlength=nbins[f])
            bstart[k, 1 : nbins[f] + 1] = np.cumsum(counts)
        return ExactData(X32, B, off, nbins, exact, hv, multi, loc, So, Sv, bstart)

    def grow(self, Xp, target, max_depth, random_state=None, sample_weight=None):
        """Grow one tree on ``target``: scikit-learn's tree for the same ``random_state`` draw."""
        if not isinstance(Xp, ExactData):
            raise TypeError(
                "ExactEngine.grow needs prepared training rows: call prepare(X, fit=True)"
            )
        if not isinstance(random_state, np.random.RandomState):
            random_state = check_random_state(random_state)
        seed = int(random_state.randint(0, RAND_R_MAX))  # scikit-learn's splitter seed
        target = np.ascontiguousarray(target, dtype=np.float64)
        n, p = Xp.shape
        max_depth = int(max_depth)
        depth_cap = min(max_depth, max(n, 1))
        max_nodes = max(min(2 ** (depth_cap + 1) - 1, 2 * n - 1), 1)
        # histograms in use at once: the node being split, one scratch, and the pending nodes
        # with a histogram on the stack (one per depth at most, each > SMALL_NODE disjoint rows)
        n_buf = min(depth_cap, n // (SMALL_NODE + 1)) + 3
        shape = (n, n_buf, Xp.hist_size)
        if self._work is None or self._work[0] != shape:
            self._work = (
                shape,
                np.empty(n, np.int32),
                np.empty(n, np.int32),
                np.empty(n, np.int32),
                np.empty(n),
                np.empty((n_buf, Xp.hist_size)),
                np.empty(n, np.float32),
                np.empty(n),
                np.empty(n),
            )
        _, rows, tmp_r, nid, gpos, H, cv, cg, cw = self._work
        if sample_weight is None:
            w, n_act = None, n  # rows and node labels are set by the compiled builder
        else:
            w = check_weight(sample_weight, n)
            active = w > 0
            n_act = int(active.sum())
            rows[:n_act] = np.flatnonzero(active)
            nid[:] = np.where(active, 0, -1)
        feature, threshold, left, right, leaf_of_node, gain, leaf_ids, n_leaves = _grow(
            Xp.X32,
            Xp.B,
            Xp.off,
            Xp.poff,
            Xp.nbins,
            Xp.exact,
            Xp.hv,
            Xp.multi,
            Xp.loc,
            Xp.So,
            Xp.Sv,
            Xp.bstart,
            target,
            w,
            rows,
            n_act,
            depth_cap,
            max_nodes,
            seed,
            EPSILON,
            FEATURE_THRESHOLD,
            SMALL_NODE,
            tmp_r,
            nid,
            gpos,
            H,
            cv,
            cg,
            cw,
            Xp.root_counts,
        )
        tree = ExactTree(feature, threshold, left, right, leaf_of_node, n_leaves, gain)
        if n_act < n:
            idle = np.flatnonzero(leaf_ids < 0)
            leaf_ids[idle] = tree.apply(np.ascontiguousarray(Xp.X32[idle]))
        return leaf_ids, tree
