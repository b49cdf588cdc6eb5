"""The exact engine's split finding on threads: ``splitting.split_node`` on a node with a
histogram, the work shared out among the threads, the same split bit for bit.

``split_node_par`` finds the split of a node with a histogram in three steps, the threads taking
the work one item at a time from a shared counter (``_atomic.fetch_add``): on a large node the
coarse bin holding the winner is a few dozen collections and sorts of a bin's rows in one
feature, so a static share of the features left one thread with nearly all of it.

1. Every feature the serial loop would visit (all but the known constants: with scikit-learn's
   ``max_features = p`` the loop visits each once) in parallel: a feature with missing values,
   an exact-coded one or a coarse one with a single non-empty bin is scanned whole; a coarse one
   between its bins only (from the histogram), listing its bins whose inner candidates may beat
   the best known.
2. The listed bins in parallel, the one with the largest bound on its proxy first: each bin's
   rows collected, sorted and scanned when its bound still may beat the best known.
3. One thread settles each coarse feature as the serial scan would (its bins' candidates in
   value order after its best between-bin one: the first of the largest proxies wins), then
   replays the serial loop on the features' results: the same ``our_rand_r`` draws over the same
   feature and constant bookkeeping (so the same order and generator state afterwards), each
   visited feature's best taken only with a proxy strictly above the best so far.

Every scan starts just below the best proxy any thread has found so far on the node
(``shared_start``). Constancy does not depend on it (it is read from the node's non-empty bins
or values before any candidate), and a scan started from just below a proxy ``B`` that some
candidate reaches returns the same candidate as one started from ``-inf`` when its proxy is at
least ``B``, nothing otherwise: the running best only filters (its pre-tests and the coarse
bins' bounds never reject a candidate that beats it), and the node's winner reaches at least
``B``. Which thread found what first changes what is filtered, never the results that can win.
The split is therefore the serial one bit for bit, ties between features and inside a feature
included. Compiled at its first use only."""

import numpy as np
from numba import njit, prange

from proxboost.engines._atomic import fetch_add
from proxboost.engines._exact.records import Workspace, threads
from proxboost.engines._exact.splitting import (
    bound_may_beat,
    draw_feature,
    finish_split,
    holds_every_row,
    inner_bound,
    inner_candidate,
    inner_may_beat,
    nonempty_bins,
    scan_bin_edges,
    scan_binned_missing,
    scan_listed,
    settle_feature,
    visiting,
)
from proxboost.engines._nodes import kernel


@kernel
def thread_work(work, par, t):
    """The workspace of thread t: the shared one with the thread's own scan arrays."""
    return Workspace(
        work.rows,
        work.spare_rows,
        work.node_label,
        work.target_range,
        work.hist,
        work.bin_lo,
        work.bin_hi,
        work.free_buffers,
        par.bin_values[t],
        par.bin_targets[t],
        par.bin_weights[t],
        work.small_values,
        work.small_targets,
        work.small_weights,
        par.nonempty[t],
        par.inner_bins[t],
        par.inner_sum[t],
        par.inner_weight[t],
        work.floor_scans,
        work.leaf_sums,
        work.features,
        work.constant,
        work.rng_state,
        work.monotonic,
    )


@kernel
def shared_start(par):
    """Where a thread's next scan starts: just below the best proxy any thread has found so far
    on this node (-inf before any). Every such proxy is a candidate's, so the node's best is at
    least it; a scan from just below finds every candidate that may win (ties included), as a
    scan from -inf would."""
    seen = -np.inf
    for u in range(threads(par)):
        seen = max(seen, par.thread_best[u])
    return np.nextafter(seen, -np.inf) if seen > -np.inf else seen


@kernel
def publish(par, t, found, prox):
    """Thread t found a candidate of proxy ``prox`` (``found`` > 0): others may start from it."""
    if found > 0 and prox > par.thread_best[t]:
        par.thread_best[t] = prox


@kernel
def first_pass_feature(codes, target, w, tw, node, f, buf, limits, par, start):
    """The first pass on feature f (thread workspace ``tw``): a feature with missing values, an
    exact-coded one and a coarse one with a single non-empty bin are scanned whole; a coarse
    one with several, between its bins only (``scan_bin_edges``), its bins with room for an
    inner candidate listed in ``par`` for the second pass. Results in ``par`` per feature."""
    par.n_inner[f] = 0
    j_best = -1
    direction = -1
    if codes.nan_bin[f] >= 0:
        res, prox, a, b, lo_bin, hi_bin, direction = scan_binned_missing(
            codes, target, w, tw, node, f, buf, limits.min_weight, start
        )
    else:
        m = nonempty_bins(tw, buf, codes.bin_offset[f], f, holds_every_row(codes, node))
        if codes.positive_offset[f] < 0 or tw.nonempty[0] == tw.nonempty[m - 1]:
            res, prox, a, b, lo_bin, hi_bin = scan_listed(
                codes, target, w, tw, node, f, buf, m, limits.min_weight, start
            )
        else:
            a = 0.0
            b = 0.0
            res, prox, lo_bin, hi_bin, j_best, n_in = scan_bin_edges(
                codes, tw, buf, f, m, node, limits.min_weight, start, (0.0, 0.0)
            )
            # only the bins that may beat the best known now: the second pass takes each
            # listed bin through a shared counter, too costly for the many that cannot win
            if res > 0:
                start = max(start, np.nextafter(prox, -np.inf))
            n = 0
            for i in range(n_in):
                j = tw.inner_bins[i]
                inner = (tw.nonempty[np.uint64(j)], tw.inner_sum[i], tw.inner_weight[i])
                if inner_may_beat(codes, tw, node, f, buf, inner, limits.min_weight, start):
                    par.inner_bin[f, n] = inner[0]
                    par.inner_j[f, n] = j
                    par.inner_sums[f, n, 0] = inner[1]
                    par.inner_sums[f, n, 1] = inner[2]
                    par.inner_key[f, n] = inner_bound(
                        codes, tw, node, f, buf, inner, limits.min_weight
                    )
                    n += 1
            par.n_inner[f] = n
    par.found[f] = res
    par.proxy[f] = prox
    par.edges[f, 0] = a
    par.edges[f, 1] = b
    par.bins[f, 0] = lo_bin
    par.bins[f, 1] = hi_bin
    par.bins[f, 2] = direction
    par.edge_j[f] = j_best
    return res, prox


@kernel
def first_pass(codes, target, w, work, node, buf, limits, par, t, n_known):
    """Thread t's share of the first pass: the features at positions n_known, n_known + 1, ...
    of the workspace's ``features`` one at a time as it takes them (``fetch_add``), each from
    the best any thread has found so far (``shared_start``)."""
    tw = thread_work(work, par, t)
    features = work.features
    while True:
        i = n_known + fetch_add(par.next_item, 0)
        if i >= features.shape[0]:
            break
        f = features[i]
        res, prox = first_pass_feature(
            codes, target, w, tw, node, f, buf, limits, par, shared_start(par)
        )
        publish(par, t, res, prox)


@kernel
def list_inner(work, n_known, par):
    """The second pass's items, (feature, index in its list of inner bins), in the features'
    order then the bins'; returns their number."""
    features = work.features
    n = 0
    for i in range(n_known, features.shape[0]):
        f = features[i]
        for j in range(par.n_inner[f]):
            par.items[n, 0] = f
            par.items[n, 1] = j
            par.item_key[n] = -par.inner_key[f, j]
            par.inner_found[f, j] = 0  # until the second pass finds a candidate there
            n += 1
    sort_items(par.item_key, par.items, n)
    return n


@kernel
def sort_items(keys, items, n):
    """Sort keys[:n] ascending, carrying the rows of items (shell sort, no allocation)."""
    gap = 1
    while gap < n // 3:
        gap = 3 * gap + 1
    while gap >= 1:
        for i in range(gap, n):
            key = keys[i]
            f = items[i, 0]
            j = items[i, 1]
            m = i
            while m >= gap and keys[m - gap] > key:
                keys[m] = keys[m - gap]
                items[m, 0] = items[m - gap, 0]
                items[m, 1] = items[m - gap, 1]
                m -= gap
            keys[m] = key
            items[m, 0] = f
            items[m, 1] = j
        gap //= 3


@kernel
def second_pass(codes, target, w, work, node, buf, limits, par, t, n_items):
    """Thread t's share of the second pass: the listed inner bins one at a time as it takes them,
    each evaluated (``inner_candidate``) from the best any thread has found so far; its first
    best candidate (if it may win) in ``par``. The bins come largest bound first: once a bin's
    bound cannot beat the best, no later one can (the bounds only fall, the best only rises),
    and the thread stops; the bins left untaken keep ``list_inner``'s "none"."""
    tw = thread_work(work, par, t)
    while True:
        i = fetch_add(par.next_item, 1)
        if i >= n_items:
            break
        start = shared_start(par)
        if not bound_may_beat(-par.item_key[i], start):
            break  # (``inner_candidate`` would find nothing here, nor in any later bin)
        f = par.items[i, 0]
        j = par.items[i, 1]
        inner = (par.inner_bin[f, j], par.inner_sums[f, j, 0], par.inner_sums[f, j, 1])
        res, prox, a, b = inner_candidate(
            codes, target, w, tw, node, f, buf, inner, limits.min_weight, start, False
        )
        par.inner_found[f, j] = res
        par.inner_best[f, j, 0] = prox
        par.inner_best[f, j, 1] = a
        par.inner_best[f, j, 2] = b
        publish(par, t, res, prox)


@kernel
def settle_inner(work, n_known, par):
    """Each coarse feature's result as ``coarse_pass`` gives it: its inner candidates taken in
    value order after its best between-bin candidate, a bin before that one (j < j_best) also
    winning on an equal proxy, so that the first of the largest proxies wins."""
    features = work.features
    for i in range(n_known, features.shape[0]):
        f = features[i]
        best = par.proxy[f] if par.found[f] > 0 else -np.inf
        j_best = par.edge_j[f]
        for j in range(par.n_inner[f]):
            if par.inner_found[f, j] <= 0:
                continue
            prox = par.inner_best[f, j, 0]
            if prox > best or (prox == best and par.inner_j[f, j] < j_best):
                best = prox
                j_best = -1
                par.found[f] = 1
                par.proxy[f] = prox
                par.edges[f, 0] = par.inner_best[f, j, 1]
                par.edges[f, 1] = par.inner_best[f, j, 2]
                par.bins[f, 0] = -1


@kernel
def replay_visits(work, n_known, par):
    """``split_node``'s feature loop on the scans in ``par``: the same draws, swaps and constant
    bookkeeping, each visited feature's best taken when its proxy is strictly above the best so
    far (the serial scan's first best). Returns (best feature or -1, n_total_constants)."""
    features = work.features
    p = features.shape[0]
    visit = (p, 0, 0, 0, n_known)
    best = -np.inf
    best_f = -1
    while visiting(visit, p):
        f_j, visit = draw_feature(features, work.rng_state, n_known, visit)
        if f_j < 0:
            continue
        f = features[f_j]
        visit = settle_feature(features, f_j, par.found[f] < 0, visit)
        if par.found[f] > 0 and par.proxy[f] > best:
            best = par.proxy[f]
            best_f = f
    return best_f, visit[4]


@njit(error_model="numpy", cache=True, nogil=True, parallel=True)
def split_node_par(codes, target, w, work, node, n_known, buf, limits, par):
    """``split_node`` on a node with histogram buffer ``buf``, the features scanned in parallel
    and reduced in the serial visiting order (module docstring): the same result bit for bit,
    and the same generator state and feature order afterwards."""
    k = threads(par)
    for t in range(k):
        par.thread_best[t] = -np.inf
    par.next_item[0] = 0
    par.next_item[1] = 0
    for t in prange(k):
        first_pass(codes, target, w, work, node, buf, limits, par, t, n_known)
    n_items = list_inner(work, n_known, par)
    for t in prange(k):
        second_pass(codes, target, w, work, node, buf, limits, par, t, n_items)
    settle_inner(work, n_known, par)
    best_f, n_total = replay_visits(work, n_known, par)
    if best_f < 0:
        return finish_split(codes, work, node, n_known, n_total, (-1, 0.0, 0.0, -1, -1, -1))
    edges, bins = par.edges[best_f], par.bins[best_f]
    best = (best_f, edges[0], edges[1], bins[0], bins[1], bins[2])
    return finish_split(codes, work, node, n_known, n_total, best)
