"""The exact engine: scikit-learn's regression trees, grown by a compiled (numba) builder.

``engine="exact"`` grows the trees ``DecisionTreeRegressor(criterion="squared_error",
max_depth=D)`` grows (see ``docs/engines.md``), without scikit-learn's per-node sorts:

* **Data** (``prepare(X, fit=True)``, once per fit): X is cast to float32, as scikit-learn does.
  A feature with at most 256 distinct float32 values gets one uint8 code per distinct value
  (a *histogram feature*: one histogram bin per distinct value, so its candidate splits are
  exactly the distinct values'). Every other feature (a *sorted feature*) keeps its values and
  rows in sorted order (float32 values and int32 row indices, computed once).
* **Nodes** own contiguous segments of a row array and, for sorted features, of per-feature
  sorted (value, row) arrays; a split partitions them stably, so each node's sorted order comes
  for free. Histogram features use per-node histograms (target sum and weight per distinct
  value) with histogram subtraction; nodes of at most ``SMALL_NODE`` rows sort their few codes
  instead. The last level labels its rows without partitioning.
* **Candidates** as scikit-learn's ``BestSplitter``: between two consecutive node values
  ``a < b`` with ``b > a + FEATURE_THRESHOLD`` (1e-7, in float32 arithmetic); a feature whose
  node values satisfy ``max <= min + FEATURE_THRESHOLD`` is constant in the node and, as in
  scikit-learn, remembered as constant for the node's descendants. The proxy is
  ``S_L^2 / W_L + S_R^2 / W_R``; the threshold ``a/2 + b/2`` (float64; ``a`` if that equals
  ``b``); rows with ``x <= threshold`` go left.
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
checks every differing split in extended precision).

Rows of weight 0 take no part in split finding; they get their leaf from the grown tree.
An engine instance keeps per-fit scratch (not pickled) and must not grow two trees at once.
"""

import numpy as np
from numba import njit
from sklearn.utils import check_random_state

MAX_CODES = 256  # features with at most this many distinct values use histograms (uint8 codes)
SMALL_NODE = 32  # nodes of at most this many rows sort their histogram features' codes
FEATURE_THRESHOLD = np.float32(1e-7)  # scikit-learn's tolerance between feature values
RAND_R_MAX = 2147483647  # scikit-learn's seed range: randint(0, RAND_R_MAX)
_EPSILON = np.finfo(np.float64).eps
_LEAF = -1
_SMALL = -2


# ---------------------------------------------------------------------------------------------
# scikit-learn's random feature order
# ---------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
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
# Per-feature candidate scans
# ---------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _scan_sorted(vals, ords, target, w, start, end, s_node, w_node, thr, best):
    """Candidates of one sorted feature on positions [start, end) (values ascending).

    Returns (-1 constant | 0 no better candidate | 1 better, proxy, a, b).
    """
    if vals[end - 1] <= vals[start] + thr:
        return -1, best, 0.0, 0.0
    found = 0
    a = 0.0
    b = 0.0
    sl = 0.0
    wl = 0.0
    for j in range(start, end - 1):
        r = ords[j]
        if w is None:
            sl += target[r]
            wl += 1.0
        else:
            sl += w[r] * target[r]
            wl += w[r]
        v = vals[j]
        vn = vals[j + 1]
        if vn > v + thr:
            sr = s_node - sl
            proxy = sl * sl / wl + sr * sr / (w_node - wl)
            if proxy > best:
                best = proxy
                found = 1
                a = v
                b = vn
    return found, best, a, b


@njit(cache=True, nogil=True)
def _scan_hist(H, o, nb, hv, s_node, w_node, thr, best):
    """Candidates of one histogram feature (bins o .. o + nb - 1 of H, values hv ascending)."""
    first = -1
    last = -1
    for b in range(nb):
        if H[2 * (o + b) + 1] > 0.0:
            if first < 0:
                first = b
            last = b
    if hv[last] <= hv[first] + thr:
        return -1, best, 0.0, 0.0
    found = 0
    a = 0.0
    bb = 0.0
    sl = 0.0
    wl = 0.0
    prev = -1
    for b in range(first, last + 1):
        wb = H[2 * (o + b) + 1]
        if wb <= 0.0:
            continue
        if prev >= 0 and hv[b] > hv[prev] + thr:
            sr = s_node - sl
            proxy = sl * sl / wl + sr * sr / (w_node - wl)
            if proxy > best:
                best = proxy
                found = 1
                a = hv[prev]
                bb = hv[b]
        sl += H[2 * (o + b)]
        wl += wb
        prev = b
    return found, best, a, bb


@njit(cache=True, nogil=True)
def _scan_small(Bh, h, hv, target, w, rows, start, end, s_node, w_node, thr, best, keys, vals, wts):
    """Candidates of one histogram feature on a small node: insertion sort of its codes."""
    m = end - start
    for j in range(m):
        r = rows[start + j]
        key = Bh[r, h]
        c = 1.0 if w is None else w[r]
        val = c * target[r]
        i = j - 1
        while i >= 0 and keys[i] > key:
            keys[i + 1] = keys[i]
            vals[i + 1] = vals[i]
            wts[i + 1] = wts[i]
            i -= 1
        keys[i + 1] = key
        vals[i + 1] = val
        wts[i + 1] = c
    if hv[keys[m - 1]] <= hv[keys[0]] + thr:
        return -1, best, 0.0, 0.0
    found = 0
    a = 0.0
    b = 0.0
    sl = 0.0
    wl = 0.0
    for j in range(m - 1):
        sl += vals[j]
        wl += wts[j]
        v = hv[keys[j]]
        vn = hv[keys[j + 1]]
        if vn > v + thr:
            sr = s_node - sl
            proxy = sl * sl / wl + sr * sr / (w_node - wl)
            if proxy > best:
                best = proxy
                found = 1
                a = v
                b = vn
    return found, best, a, b


# ---------------------------------------------------------------------------------------------
# Histograms of the histogram features
# ---------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _build_hist(H, Bh, hoff, target, w, rows, start, end):
    """H = histogram (target sum, weight per bin) of rows[start:end]."""
    ph = Bh.shape[1]
    for i in range(2 * hoff[ph]):
        H[i] = 0.0
    for j in range(start, end):
        r = rows[j]
        c = 1.0 if w is None else w[r]
        g = c * target[r]
        for h in range(ph):
            i = 2 * (hoff[h] + Bh[r, h])
            H[i] += g
            H[i + 1] += c


@njit(cache=True, nogil=True)
def _subtract(H, Hs, n):
    for i in range(n):
        H[i] -= Hs[i]


# ---------------------------------------------------------------------------------------------
# The tree builder
# ---------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _split_node(kind, loc, features, constant, n_known, state, src_v, src_o, H, buf, Bh, hoff, hnb, hvals,
                target, w, rows, start, end, s_node, w_node, thr, keys, vals, wts):
    """scikit-learn's ``node_split_best`` on one node: (feature, a, b, n_total_constants).

    feature -1: no candidate on any feature.
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
        k = loc[f]
        if kind[f] == 1:
            res, prox, a, b = _scan_sorted(src_v[k], src_o[k], target, w, start, end, s_node, w_node, thr, best)
        elif buf >= 0:
            res, prox, a, b = _scan_hist(H[buf], hoff[k], hnb[k], hvals[k], s_node, w_node, thr, best)
        else:
            res, prox, a, b = _scan_small(Bh, k, hvals[k], target, w, rows, start, end, s_node, w_node, thr,
                                          best, keys, vals, wts)
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
    # scikit-learn's invariant: known constants keep their order for siblings and children
    for i in range(n_known):
        features[i] = constant[i]
    for i in range(n_known, n_total):
        constant[i] = features[i]
    return best_f, best_a, best_b, n_total


@njit(cache=True, nogil=True)
def _partition_rows(X32, f, thr, target, w, rows, tmp, mark, start, end):
    """Stable partition of rows[start:end] by X[r, f] <= thr; marks, left weight / sums.

    Branch-free (both destinations written, cursors advanced by the side): the sides of
    consecutive rows are unpredictable.
    """
    il = start
    ir = 0
    wl = 0.0
    sl = 0.0
    ql = 0.0
    for j in range(start, end):
        r = rows[j]
        m = np.uint8(X32[r, f] <= thr)
        c = 1.0 if w is None else w[r]
        g = target[r]
        cg = (c * g) if m else 0.0
        wl += c if m else 0.0
        sl += cg
        ql += cg * g
        rows[il] = r
        tmp[ir] = r
        il += m
        ir += 1 - m
        mark[r] = m
    for j in range(ir):
        rows[il + j] = tmp[j]
    return il, wl, sl, ql


@njit(cache=True, nogil=True)
def _partition_sorted(src_v, src_o, dst_v, dst_o, tmp_v, tmp_o, mark, start, end, mid):
    """Stable partition of every sorted feature's segment by mark (left part first)."""
    for k in range(src_o.shape[0]):
        sv = src_v[k]
        so = src_o[k]
        dv = dst_v[k]
        do = dst_o[k]
        il = start
        ir = 0
        for j in range(start, end):  # branch-free, as _partition_rows
            r = so[j]
            v = sv[j]
            m = mark[r]
            do[il] = r
            dv[il] = v
            tmp_o[ir] = r
            tmp_v[ir] = v
            il += m
            ir += 1 - m
        for j in range(ir):
            do[mid + j] = tmp_o[j]
            dv[mid + j] = tmp_v[j]


@njit(cache=True, nogil=True)
def _impurity(q, s, wsum):
    return q / wsum - (s / wsum) ** 2.0


@njit(cache=True, nogil=True)
def _grow(X32, kind, loc, Bh, hoff, hnb, hvals, Sv0, So0, target, w, rows, n_act, root_prepared,
          max_depth, max_nodes, seed, eps, thr, small, sv, so, tmp_v, tmp_o, tmp_r, mark, H):
    """Grow one tree depth-first (scikit-learn's node order); see the module docstring.

    ``rows[:n_act]``: the rows taking part; ``Sv0, So0``: their sorted values / rows per sorted
    feature (read at the root when ``root_prepared``, else already in ``sv, so``).
    """
    n, p = X32.shape
    ps = So0.shape[0]
    ph = Bh.shape[1]
    n_bins = hoff[ph]
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
    keys = np.empty(small + 1, np.uint8)
    vals = np.empty(small + 1)
    wts = np.empty(small + 1)

    n_buf = H.shape[0]
    free = np.arange(n_buf - 1, -1, -1).astype(np.int32)
    n_free = n_buf

    cap = 2 * max_depth + 4
    st_parent = np.empty(cap, np.int32)
    st_isleft = np.empty(cap, np.bool_)
    st_start = np.empty(cap, np.int64)
    st_end = np.empty(cap, np.int64)
    st_depth = np.empty(cap, np.int32)
    st_mode = np.empty(cap, np.int32)
    st_nconst = np.empty(cap, np.int64)
    st_imp = np.empty(cap)
    st_w = np.empty(cap)
    st_s = np.empty(cap)
    st_q = np.empty(cap)

    w0 = 0.0
    s0 = 0.0
    q0 = 0.0
    for j in range(n_act):
        r = rows[j]
        c = 1.0 if w is None else w[r]
        g = target[r]
        w0 += c
        s0 += c * g
        q0 += c * g * g
    imp0 = _impurity(q0, s0, w0)
    mode0 = _LEAF
    if max_depth > 0 and n_act >= 2 and imp0 > eps:
        mode0 = _SMALL
        if ph > 0 and n_act > small:
            n_free -= 1
            mode0 = free[n_free]
            _build_hist(H[mode0], Bh, hoff, target, w, rows, 0, n_act)
    st_parent[0] = -1
    st_isleft[0] = False
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
        n_const = 0
        thr_v = 0.0
        last_level = False
        mid = start
        wl = 0.0
        sl = 0.0
        ql = 0.0
        wr = 0.0
        imp_l = 0.0
        imp_r = 0.0
        if buf != _LEAF:
            at_root = root_prepared and node == 0
            src_v = Sv0 if at_root else sv
            src_o = So0 if at_root else so
            best_f, a, b, n_const = _split_node(kind, loc, features, constant, st_nconst[top], state, src_v, src_o,
                                                H, buf, Bh, hoff, hnb, hvals, target, w, rows, start, end, sn, wn,
                                                thr, keys, vals, wts)
        if best_f >= 0:
            thr_v = a / 2.0 + b / 2.0
            if thr_v == b:
                thr_v = a
            last_level = depth + 1 >= max_depth
            if last_level:  # children are leaves: left weight / sums only, no partition
                for j in range(start, end):
                    r = rows[j]
                    if X32[r, best_f] <= thr_v:
                        c = 1.0 if w is None else w[r]
                        g = target[r]
                        wl += c
                        sl += c * g
                        ql += c * g * g
                        mid += 1
            else:
                mid, wl, sl, ql = _partition_rows(X32, best_f, thr_v, target, w, rows, tmp_r, mark, start, end)
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
            for j in range(start, end):
                r = rows[j]
                leaf_ids[r] = n_leaves if X32[r, best_f] <= thr_v else n_leaves + 1
            n_leaves += 2
            continue

        at_root = root_prepared and node == 0
        if ps > 0:
            _partition_sorted(Sv0 if at_root else sv, So0 if at_root else so, sv, so, tmp_v, tmp_o, mark,
                              start, end, mid)
        # children's sums, fresh over their rows (scikit-learn's criterion.init)
        nl = mid - start
        nr = end - mid
        wr_f = 0.0
        sr_f = 0.0
        qr_f = 0.0
        for j in range(mid, end):
            r = rows[j]
            c = 1.0 if w is None else w[r]
            g = target[r]
            wr_f += c
            sr_f += c * g
            qr_f += c * g * g
        mode_l = _LEAF
        mode_r = _LEAF
        if nl >= 2 and imp_l > eps:
            mode_l = _SMALL
        if nr >= 2 and imp_r > eps:
            mode_r = _SMALL
        need_l = ph > 0 and mode_l == _SMALL and nl > small
        need_r = ph > 0 and mode_r == _SMALL and nr > small
        if need_l or need_r:
            # histograms of the children that need one: the smaller from its rows, the larger by
            # subtraction from the parent's (unit weights: exact counts) or from its rows
            small_left = nl <= nr
            if buf < 0:  # the parent had none (cannot happen above SMALL_NODE rows, kept safe)
                n_free -= 1
                buf = free[n_free]
                _build_hist(H[buf], Bh, hoff, target, w, rows, start, end)
            n_free -= 1
            nb = free[n_free]
            if small_left:
                _build_hist(H[nb], Bh, hoff, target, w, rows, start, mid)
            else:
                _build_hist(H[nb], Bh, hoff, target, w, rows, mid, end)
            if w is None:
                _subtract(H[buf], H[nb], 2 * n_bins)
            elif small_left:
                _build_hist(H[buf], Bh, hoff, target, w, rows, mid, end)
            else:
                _build_hist(H[buf], Bh, hoff, target, w, rows, start, mid)
            lb = nb if small_left else buf
            rb = buf if small_left else nb
            if need_l:
                mode_l = lb
            else:
                free[n_free] = lb
                n_free += 1
            if need_r:
                mode_r = rb
            else:
                free[n_free] = rb
                n_free += 1
        elif buf >= 0:
            free[n_free] = buf
            n_free += 1
        # push right then left: the left subtree first (scikit-learn's order)
        st_parent[top] = node
        st_isleft[top] = False
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

    return (feature[:n_nodes].copy(), threshold[:n_nodes].copy(), left[:n_nodes].copy(),
            right[:n_nodes].copy(), leaf_of_node[:n_nodes].copy(), gain[:n_nodes].copy(), leaf_ids, n_leaves)


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
    """Prepared training rows: float32 X plus the per-feature codes / sorted orders."""

    def __init__(self, X32, kind, loc, Bh, hoff, hnb, hvals, Sv0, So0):
        self.X32 = X32
        self.kind = kind
        self.loc = loc
        self.Bh = Bh
        self.hoff = hoff
        self.hnb = hnb
        self.hvals = hvals
        self.Sv0 = Sv0
        self.So0 = So0

    @property
    def shape(self):
        return self.X32.shape

    def __len__(self):
        return self.X32.shape[0]


class ExactTree:
    """A fitted exact tree: float32 rows -> compact leaf ids (picklable, compiled apply).

    Node arrays (root 0, ``left == -1`` at leaves, scikit-learn's depth-first node order):
    ``feature``, ``threshold`` (float64; float32 ``x <= threshold`` goes left), ``left``,
    ``right``, ``leaf_of_node``. Per internal node: ``split_feature`` and ``split_gain``.
    """

    def __init__(self, feature, threshold, left, right, leaf_of_node, n_leaves, gain):
        internal = left >= 0
        self.feature = feature
        self.threshold = threshold
        self.left = left
        self.right = right
        self.leaf_of_node = leaf_of_node
        self.n_leaves = int(n_leaves)
        self.split_feature = feature[internal].astype(np.intp)
        self.split_gain = gain[internal]

    @property
    def node_count(self):
        return len(self.left)

    def apply(self, Xp):
        X32 = _as_float32(Xp)
        return _apply_tree(X32, self.feature, self.threshold, self.left, self.right, self.leaf_of_node)


def _as_float32(Xp):
    if isinstance(Xp, ExactData):
        return Xp.X32
    if not (isinstance(Xp, np.ndarray) and Xp.dtype == np.float32 and Xp.ndim == 2):
        raise TypeError("the exact engine works on prepared rows: pass X through engine.prepare first")
    return Xp if Xp.flags.c_contiguous else np.ascontiguousarray(Xp)


def _check_weight(sample_weight, n):
    w = np.ascontiguousarray(sample_weight, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(f"sample_weight has shape {w.shape}, expected ({n},)")
    if not (np.isfinite(w).all() and (w >= 0).all()):
        raise ValueError("sample_weight must be finite and non-negative")
    return w


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
            raise ValueError("X contains NaN or infinity (or values beyond float32's range): the exact "
                             "engine splits finite float32 values only")
        if not fit:
            return X32
        n, p = X32.shape
        if n >= 2**31 - 1:
            raise ValueError(f"X has {n} rows; the exact engine indexes rows with int32 (at most 2**31 - 2)")
        kind = np.zeros(p, np.int64)
        loc = np.zeros(p, np.int64)
        hist_cols, sorted_cols = [], []
        uniques = []
        for f in range(p):
            u, inv = np.unique(X32[:, f], return_inverse=True)
            if len(u) <= MAX_CODES:
                loc[f] = len(hist_cols)
                hist_cols.append(inv.reshape(-1).astype(np.uint8))
                uniques.append(u)
            else:
                kind[f] = 1
                loc[f] = len(sorted_cols)
                sorted_cols.append(f)
        ph = len(hist_cols)
        Bh = np.ascontiguousarray(np.column_stack(hist_cols)) if ph else np.zeros((n, 0), np.uint8)
        hnb = np.array([len(u) for u in uniques], dtype=np.int64)
        hoff = np.concatenate(([0], np.cumsum(hnb))).astype(np.int64)
        hvals = np.full((max(ph, 1), MAX_CODES), np.inf, dtype=np.float32)
        for h, u in enumerate(uniques):
            hvals[h, : len(u)] = u
        ps = len(sorted_cols)
        So0 = np.empty((ps, n), np.int32)
        Sv0 = np.empty((ps, n), np.float32)
        for k, f in enumerate(sorted_cols):
            order = np.argsort(X32[:, f], kind="stable")
            So0[k] = order
            Sv0[k] = X32[order, f]
        return ExactData(X32, kind, loc, Bh, hoff, hnb, hvals, Sv0, So0)

    def grow(self, Xp, target, max_depth, random_state=None, sample_weight=None):
        """Grow one tree on ``target``: scikit-learn's tree for the same ``random_state`` draw."""
        if not isinstance(Xp, ExactData):
            raise TypeError("ExactEngine.grow needs prepared training rows: call prepare(X, fit=True)")
        seed = int(check_random_state(random_state).randint(0, RAND_R_MAX))
        target = np.ascontiguousarray(target, dtype=np.float64)
        n, p = Xp.shape
        max_depth = int(max_depth)
        ps, ph = Xp.So0.shape[0], Xp.Bh.shape[1]
        depth_cap = min(max_depth, max(n, 1))
        max_nodes = max(min(2 ** (depth_cap + 1) - 1, 2 * n - 1), 1)
        n_buf = (min(depth_cap, n // (SMALL_NODE + 1)) + 3) if ph else 0
        shape = (n, ps, n_buf, int(Xp.hoff[-1]))
        if self._work is None or self._work[0] != shape:
            self._work = (shape, np.empty(n, np.int32), np.empty((ps, n), np.float32), np.empty((ps, n), np.int32),
                          np.empty(n, np.float32), np.empty(n, np.int32), np.empty(n, np.int32),
                          np.empty(n, np.uint8), np.empty((n_buf, 2 * int(Xp.hoff[-1]))))
        _, rows, sv, so, tmp_v, tmp_o, tmp_r, mark, H = self._work
        if sample_weight is None:
            w, n_act, root_prepared = None, n, True
            rows[:] = np.arange(n, dtype=np.int32)
        else:
            w = _check_weight(sample_weight, n)
            active = w > 0
            n_act = int(active.sum())
            rows[:n_act] = np.flatnonzero(active)
            root_prepared = n_act == n
            if not root_prepared:  # sorted orders of the positive-weight rows only
                for k in range(ps):
                    keep = active[Xp.So0[k]]
                    so[k, :n_act] = Xp.So0[k][keep]
                    sv[k, :n_act] = Xp.Sv0[k][keep]
        feature, threshold, left, right, leaf_of_node, gain, leaf_ids, n_leaves = _grow(
            Xp.X32, Xp.kind, Xp.loc, Xp.Bh, Xp.hoff, Xp.hnb, Xp.hvals, Xp.Sv0, Xp.So0, target, w, rows, n_act,
            root_prepared, depth_cap, max_nodes, seed, _EPSILON, FEATURE_THRESHOLD, SMALL_NODE,
            sv, so, tmp_v, tmp_o, tmp_r, mark, H,
        )
        tree = ExactTree(feature, threshold, left, right, leaf_of_node, n_leaves, gain)
        if n_act < n:
            idle = np.flatnonzero(leaf_ids < 0)
            leaf_ids[idle] = tree.apply(np.ascontiguousarray(Xp.X32[idle]))
        return leaf_ids, tree
