"""The leaves' line search on threads (``n_jobs`` > 1 in the compiled loop): the intervals of
:func:`proxboost._leafops.leaf_intervals_in`, bit for bit, with the grouping of the rows by leaf
and the leaves' selections shared between threads (``tests/test_threads.py`` against the serial
kernel, on 1 to ``NUMBA_NUM_THREADS`` threads).

The compiled loop's parallel entries call it; its one-thread entries name the serial kernel
only, so a one-thread fit never compiles it (:mod:`proxboost._compiled_loop`).
"""

import numpy as np
from numba import njit, prange

from proxboost._leafops import _count_rows, _group_two, _grouped_interval, _place_rows
from proxboost.engines._atomic import fetch_add

#: :func:`_group_chunks`'s largest number of chunks and smallest chunk (rows)
CHUNKS, CHUNK_ROWS = 16, 4096


# allocates: reference counting even under a kernel
@njit(error_model="numpy", cache=True, nogil=True, _nrt=True)
def leaf_intervals_in_par(values, leaf_ids, n_leaves, tau, signs, work, counted):
    """:func:`~proxboost._leafops.leaf_intervals_in` on threads (``n_jobs`` > 1), bit for bit:
    the same grouping (two leaves: ``_group_two``; more: the counting sort with the rows cut
    into chunks, each counting and placing its rows at offsets that keep every leaf's values
    in row order: the arrangement one thread makes; ``counted`` is not used: each chunk counts
    its own rows), then each leaf's selections on one
    thread, the leaves shared between threads (a leaf's selections use its own stretch of
    ``work.scratch``).

    The parallel kernels take the scratch's arrays one by one: numba drops the writes of a
    parallel loop to an array it reaches through a named tuple (numba's GitHub issue 7135)."""
    if n_leaves == 2:
        _group_two(values, leaf_ids, signs, work)
    else:
        cursor = np.zeros((min(CHUNKS, max(values.shape[0] // CHUNK_ROWS, 1)), n_leaves), np.int64)
        counts, n_pos, starts = work.counts, work.n_pos, work.starts
        _group_chunks(values, leaf_ids, signs, cursor, counts, n_pos, starts, work.grouped)
    los, his = work.los[:n_leaves], work.his[:n_leaves]
    hinge = signs.shape[0] > 0
    order = np.argsort(-work.counts[:n_leaves], kind="mergesort")  # the largest leaf first
    _intervals_par(
        work.grouped, work.counts, work.n_pos, work.starts, (tau, hinge), los, his, work.scratch,
        order, np.zeros(1, np.int64),
    )  # fmt: skip


@njit(error_model="numpy", cache=True, nogil=True, parallel=True)
def _intervals_par(grouped, counts, n_pos, starts, level, los, his, scratch, order, taken):
    """:func:`leaf_intervals_in_par`'s selections: the interval of leaf k < len(los) from its
    ``counts[k]`` values at ``starts[k]`` in ``grouped`` into ``los[k]``, ``his[k]``
    (``level``: tau, hinge), the leaves shared between threads.

    The threads take the leaves in ``order`` (the largest first) one at a time from a shared
    counter (``taken``, one int64: how many were taken), each leaf's selection on the thread
    that took it: a selection costs about its leaf's size, and depth-3 trees have leaves of
    10⁴ and 3·10⁵ rows side by side, so a static share (the first half of the leaves to one
    thread) left one thread with most of the work. Every prange iteration takes leaves until
    none is left, so any thread count works the same way (numba's ``prange`` cannot take work
    dynamically on the ``omp`` layer: ``engines/_atomic.py``), and each leaf's interval is the
    one-thread one."""
    for _ in prange(los.shape[0]):
        _take_leaves(grouped, counts, n_pos, starts, level, los, his, scratch, order, taken)


@njit(error_model="numpy", cache=True, nogil=True)
def _take_leaves(grouped, counts, n_pos, starts, level, los, his, scratch, order, taken):
    """:func:`_intervals_par`'s work for one thread: leaves in ``order`` until none is left."""
    while True:
        j = fetch_add(taken, 0)
        if j >= order.shape[0]:
            return
        leaf = order[j]
        start = starts[leaf]
        m = counts[leaf]
        ranks = (level[0], n_pos[leaf], level[1])
        lo, hi = _grouped_interval(grouped, start, m, ranks, scratch[start : start + m])
        los[leaf] = lo
        his[leaf] = hi


@njit(error_model="numpy", cache=True, nogil=True, parallel=True)
def _group_chunks(values, leaf_ids, signs, cursor, counts, n_pos, starts, grouped):
    """``_leafops._group_counting`` with the rows cut into the chunks of ``cursor`` ((chunks,
    n_leaves) zeros; up to ``CHUNKS`` of at least ``CHUNK_ROWS`` rows, shared between the
    threads): each chunk counts its rows per leaf, then places them from its own cursor per
    leaf (the leaf's start plus the earlier chunks' counts) into ``grouped``, filling
    ``counts``, ``n_pos`` (positive signs) and ``starts``: the same numbers as one thread, on
    any thread count."""
    n = values.shape[0]
    k, n_leaves = cursor.shape
    size = (n + k - 1) // k
    positive = np.zeros((k, n_leaves), np.int64)
    for t in prange(k):
        _count_rows(leaf_ids, signs, (t * size, min(n, (t + 1) * size)), cursor[t], positive[t])
    acc = 0
    for leaf in range(n_leaves):
        starts[leaf] = acc
        n_leaf = 0
        n_positive = 0
        for t in range(k):
            c = cursor[t, leaf]
            cursor[t, leaf] = acc  # chunk t's cursor in the leaf
            acc += c
            n_leaf += c
            n_positive += positive[t, leaf]
        counts[leaf] = n_leaf
        n_pos[leaf] = n_positive
    for t in prange(k):
        _place_rows(values, leaf_ids, (t * size, min(n, (t + 1) * size)), cursor[t], grouped)
