"""The boosting loop compiled (numba): every iteration of a common fit without Python.

:meth:`proxboost._fit_loop.BoostingLoop._boost` runs its iterations here when the fit is one this
loop knows (:func:`applies`): the losses without transcendental functions (``ls``, ``lad``,
``pinball`` at one level, ``hinge``), every algorithm, the ``exact`` and ``hist`` engines, with or
without weights, the ``midpoint`` and ``authors`` tie rules, an eval set, early stopping, warm
start, and no monotone constraint, ``verbose=0``. Everything else runs the Python loop, which stays
the reference: this loop performs the same floating-point operations in the same order, so trees,
curves and predictions are bit-identical (``tests/test_compiled_loop.py``). The rules that keeps:

* elementwise steps (directions, updates, replays, the terms of a recorded loss) are the NumPy
  expressions, operation for operation (:mod:`proxboost._row_passes`);
* ``np.bincount`` sums in row order, as the leaf means here;
* ``np.sum`` adds pairwise (NumPy's ``pairwise_sum``: blocks of up to 128 values over 8
  accumulators, halves cut at multiples of 8): ``_row_passes.pairwise_sum`` does the same;
* the weights of a recorded loss are scaled as ``Loss.value`` scales them (once, in NumPy);
* the exact engine's seeds are drawn before the loop with the fit's ``RandomState`` (the same
  draws as one ``randint`` per tree), and the state is then advanced by the trees grown only.

**Threads** (``n_jobs`` > 1 on numba's ``omp`` or ``tbb`` layer: ``engines._threads.
engine_threads``): the loop runs its parallel entry under ``numba_threads(k)``, the thread count
restored afterwards. Each tree grows on the engine's parallel kernels (``grow_in_loop`` picks
them from its record's ``par``: the same trees as one thread, see ``docs/engines.md``), the rows
outside the fit get their leaves in parallel (``apply_in_loop_par``), and the passes over the
rows run their ``prange`` variants (``_row_passes.*_par``): each row's number is computed by the
same expression, so any thread count gives the one-thread numbers bit for bit
(``tests/test_threads.py``). The reductions keep their serial order: the leaf means run on one
thread, the line searches group the rows by leaf as one thread does (each leaf's values in row
order) and share the leaves' selections between threads, and a recorded loss's pairwise sum is
cut only at NumPy's own top level (its two halves on two threads, added left + right). Without
a thread-safe layer the fit runs the one-thread entry (with ``engine_threads``'s one-time
warning); with ``n_jobs`` None or 1 the one-thread entries name serial kernels only, so no
parallel kernel is compiled or entered.

``train_time_`` keeps its meaning: the clock (``CLOCK_MONOTONIC``, ``time.perf_counter``'s) is
read around each iteration's fitting steps, the loss recording excluded (wall time, on any
thread count).

It is the default, and numba caches it as every kernel (one entry per engine and thread mode,
the clock read by symbol name: :mod:`proxboost._clock`), so only the first fit after an install
or a change of the kernels compiles it (the parallel entries at the first fit with threads).
``PROXBOOST_COMPILED_LOOP=0`` (or :data:`FORCE_PYTHON` set to True) runs the Python loop
instead; ``tests/test_compiled_loop.py`` and ``tests/test_threads.py`` compare both paths.
"""

import os
from collections import namedtuple

import numpy as np
from numba import njit

from proxboost import _leaf_threads as leaf_threads
from proxboost import _leafops as leafops
from proxboost import _row_passes as passes
from proxboost._clock import AVAILABLE as CLOCK_AVAILABLE
from proxboost._clock import monotonic
from proxboost._forest import Block
from proxboost._leafops import (
    AUTHORS,
    RULE_CODES,
    _leaf_point,
    _leaf_points,
    _weighted_leaf_points,
    leaf_scratch,
)
from proxboost._row_passes import HINGE, LOSS_CODES, LS, PINBALL

# importable from here as before the row passes moved (the several-level loop imports them)
from proxboost._row_passes import _gradient as _gradient
from proxboost._row_passes import _pointwise as _pointwise
from proxboost._row_passes import _prox as _prox
from proxboost._row_passes import loss_value as loss_value
from proxboost._row_passes import pairwise_sum as pairwise_sum
from proxboost.engines import _descent as descent
from proxboost.engines import exact, hist
from proxboost.engines._descent import Steps
from proxboost.engines._nodes import kernel
from proxboost.engines._threads import engine_threads, numba_threads

#: True: every fit runs the Python reference loop (``PROXBOOST_COMPILED_LOOP=0``; tests compare
#: both paths)
FORCE_PYTHON = os.environ.get("PROXBOOST_COMPILED_LOOP", "") == "0"

_EMPTY = np.empty(0)


@njit(error_model="numpy", cache=True, nogil=True)
def _now():
    """Seconds of ``CLOCK_MONOTONIC`` (``time.perf_counter``'s clock)."""
    return monotonic()


#: What an iteration does (scalars): the loss (``LOSS_CODES``), its level, the algorithm's
#: switches, the step lambda, the shrinkage nu, the tie rule (``_leafops.RULE_CODES``), and the
#: early-stopping tolerance.
Spec = namedtuple(
    "Spec", ["loss", "tau", "proximal", "residual", "accelerated", "step", "nu", "rule", "tol"]
)

#: A set of rows following the recursion: prepared features (unused for the training rows; the
#: rows outside the fit hold theirs by feature, (p, m), on one thread, for
#: ``_descent.leaves_by_masks``, and by row, (m, p), on threads), targets, weights as
#: ``Loss.value`` scales them (empty: unit) and their sum (the row count without weights), F_t
#: and H_t (updated in place), and whether its loss is
#: recorded; ``tree_w``: the weights of the trees and line searches (training rows; empty: unit).
Rows = namedtuple("Rows", ["Xp", "y", "w", "count", "F", "H", "record", "tree_w"])

#: The loop's outputs, one slot per iteration: the node arrays of every tree end to end
#: (``nodes``, a tuple of 8 arrays in ``grow_in_loop``'s order; ``node_end[k]``: where tree k
#: ends), the leaf values likewise (``leaf_end``), the curves (training, eval, validation) and
#: the cumulative fitting times.
Out = namedtuple(
    "Out",
    ["nodes", "node_end", "leaf_values", "leaf_end", "train", "eval", "val", "times"],
)


# ---------------------------------------------------------------------------------------------
# Leaf values (bincount's row-order sums, each leaf's line search as the Python loop's)
# ---------------------------------------------------------------------------------------------
@njit(error_model="numpy", cache=True, nogil=True)
def leaf_means_in(values, leaf_ids, n_leaves, w, work):
    """``losses.leaf_means`` (``w`` empty: unweighted) into ``work.means[:n_leaves]`` (returned;
    ``work``: :data:`LeafWork`): :func:`_leaf_means_into`."""
    _leaf_means_into(values, leaf_ids, n_leaves, w, work)
    return work.means[:n_leaves]


@kernel
def _leaf_means_into(values, leaf_ids, n_leaves, w, work):
    """:func:`leaf_means_in` returning nothing (a kernel): bincount's row-order sums, then the
    division where the leaf has weight."""
    counts, sums, out = work.counts, work.sums, work.means
    if n_leaves == 2:
        _two_leaf_sums(values, leaf_ids, w, work)
    else:
        _leaf_sums(values, leaf_ids, n_leaves, w, work)
    for k in range(n_leaves):
        out[k] = sums[k] / counts[k] if counts[k] > 0 else 0.0


@kernel
def _two_leaf_sums(values, leaf_ids, w, work):
    """:func:`leaf_means_in`'s weights and sums of two leaves (a stump's), in registers: each
    row adds its value to its leaf's sum and an exact +0.0 to the other's. Row after row, the
    sums through memory wait on the previous row's store when both rows fall in the same leaf,
    which two leaves make the common case. The same numbers as bincount's: x + 0.0 == x for
    every x but -0.0, and a sum started at +0.0 is never -0.0 (x + y is -0.0 only when both
    are)."""
    weighted = w.shape[0] > 0
    c0 = 0.0
    c1 = 0.0
    s0 = 0.0
    s1 = 0.0
    for i in range(values.shape[0]):
        one = leaf_ids[i] != 0
        c = w[i] if weighted else 1.0
        cv = w[i] * values[i] if weighted else values[i]
        c0 += 0.0 if one else c
        c1 += c if one else 0.0
        s0 += 0.0 if one else cv
        s1 += cv if one else 0.0
    work.counts[0] = c0
    work.counts[1] = c1
    work.sums[0] = s0
    work.sums[1] = s1


@kernel
def _leaf_sums(values, leaf_ids, n_leaves, w, work):
    """:func:`leaf_means_in`'s weights and sums of each leaf, bincount's: in row order."""
    counts, sums = work.counts, work.sums
    for k in range(n_leaves):
        counts[k] = 0.0
        sums[k] = 0.0
    weighted = w.shape[0] > 0
    for i in range(values.shape[0]):
        leaf = leaf_ids[i]
        if weighted:
            counts[leaf] += w[i]
            sums[leaf] += w[i] * values[i]
        else:
            counts[leaf] += 1.0  # exact: integer counts, as bincount's
            sums[leaf] += values[i]


@njit(error_model="numpy", cache=True, nogil=True)
def leaf_means(values, leaf_ids, n_leaves, w):
    """:func:`leaf_means_in` with a scratch of its own (of leaves only: it reads no row
    scratch)."""
    return leaf_means_in(values, leaf_ids, n_leaves, w, leaf_work(0, n_leaves))


#: The leaf values' scratch, made once per fit and reused at every tree (an iteration allocated
#: about fifteen arrays for them before): the least-squares fit's weights, sums and means (one
#: per leaf), the line search's values y - H (one per row) and its ``_leafops.LeafScratch``, and
#: the shrunk leaf values ``c``.
LeafWork = namedtuple("LeafWork", ["counts", "sums", "means", "u", "leaf", "c"])


@njit(error_model="numpy", cache=True, nogil=True)
def leaf_work(n, n_leaves):
    """A :data:`LeafWork` for up to ``n`` rows and ``n_leaves`` leaves."""
    return LeafWork(
        np.empty(n_leaves), np.empty(n_leaves), np.empty(n_leaves), np.empty(n),
        leaf_scratch(n, n_leaves), np.empty(n_leaves),
    )  # fmt: skip


@njit(error_model="numpy", cache=True, nogil=True)
def _line_search(spec, y, H, leaf_ids, n_leaves, w, fit):
    """``loss.line_search(y, H, leaf_ids, n_leaves, w, tie_rule, fit)`` (``w`` empty:
    unweighted)."""
    n = y.shape[0]
    u = np.empty(n)
    for i in range(n):
        u[i] = y[i] - H[i]
    if spec.loss == LS:
        return leaf_means(u, leaf_ids, n_leaves, w)
    if n == 0:
        return np.zeros(n_leaves)
    g = fit if spec.rule == AUTHORS else fit[:0]
    tau = 0.5 if spec.loss != PINBALL else spec.tau
    signs = y if spec.loss == HINGE else y[:0]
    if w.shape[0] == 0:
        return _leaf_points(u, leaf_ids, n_leaves, tau, signs, spec.rule, g)
    return _weighted_leaf_points(u, w, leaf_ids, n_leaves, tau, signs, spec.rule, g)


# ---------------------------------------------------------------------------------------------
# One iteration
# ---------------------------------------------------------------------------------------------
@njit(error_model="numpy", nogil=True, _nrt=False)
def _leaf_values(spec, fitted, leaf_ids, n_leaves, work, intervals, leaf_sums, residuals):
    """The least-squares fit into ``work.means[:n_leaves]`` and the shrunk line-searched leaf
    values c into ``work.c[:n_leaves]`` (``work``: :data:`LeafWork`): ``_leaf_values`` of the
    boosting loop (a leaf whose fitted value is exactly 0 keeps 0). The fit's weights and sums
    are the engine's ``leaf_sums`` (both engines, on any thread count: each added in row order
    while the tree grew, bincount's numbers).
    Where the tree's target pass left the line search's values y - H_t in ``residuals`` (rows:
    ``lad``, ``pinball`` and ``hinge`` without weights, :func:`_iterations`), the line search
    runs in ``work`` too: :func:`_line_search`'s operations, without its arrays, the leaves'
    intervals by the kernel ``intervals``
    (``_leafops.leaf_intervals_in`` or, on threads, ``_leaf_threads.leaf_intervals_in_par``:
    the same intervals). Without reference counting, as :func:`_iterations`; not cached itself
    (a kernel argument): compiled into each entry below."""
    for k in range(n_leaves):
        count = leaf_sums[k, 0]
        work.means[k] = leaf_sums[k, 1] / count if count > 0 else 0.0
    fit = work.means[:n_leaves]
    c = work.c[:n_leaves]
    if residuals.shape[0] == 0:  # least squares, weights or no rows: its own arrays
        _searched(spec, fitted, leaf_ids, n_leaves, fit, c)
        return
    y = fitted.y
    tau = 0.5 if spec.loss != PINBALL else spec.tau
    signs = y if spec.loss == HINGE else y[:0]
    leaf = work.leaf
    counted = spec.loss != HINGE  # the rows' count per leaf is its weight (no weights here)
    if counted:
        for k in range(n_leaves):
            leaf.counts[k] = np.int64(leaf_sums[k, 0])
    intervals(residuals, leaf_ids, n_leaves, tau, signs, leaf, counted)
    for k in range(n_leaves):
        found = _leaf_point(leaf.los[k], leaf.his[k], leaf.counts[k], spec.rule, fit[k])
        c[k] = spec.nu * (0.0 if fit[k] == 0.0 else found)


# allocates: reference counting even under a kernel
@njit(error_model="numpy", cache=True, nogil=True, _nrt=True)
def _searched(spec, fitted, leaf_ids, n_leaves, fit, c):
    """c = the shrunk :func:`_line_search` (least squares, weights, no rows: its arrays
    allocated and freed here, not in the kernel calling it)."""
    found = _line_search(spec, fitted.y, fitted.H, leaf_ids, n_leaves, fitted.tree_w, fit)
    for k in range(n_leaves):
        c[k] = spec.nu * (0.0 if fit[k] == 0.0 else found[k])


@njit(error_model="numpy", cache=True, nogil=True, _nrt=False)
def _store(out, k, nodes, m, c):
    """Append tree k's node arrays (their first ``m`` entries) and leaf values to ``out``.
    Compiled without reference counting (it allocates nothing and returns nothing: as the
    engines' ``kernel``, ``engines/_exact/records.py``): its records' arrays are taken out
    without an atomic operation each, about 40 per tree otherwise."""
    start = out.node_end[k - 1] if k > 0 else 0
    for j in range(m):
        out.nodes[0][start + j] = nodes[0][j]
        out.nodes[1][start + j] = nodes[1][j]
        out.nodes[2][start + j] = nodes[2][j]
        out.nodes[3][start + j] = nodes[3][j]
        out.nodes[4][start + j] = nodes[4][j]
        out.nodes[5][start + j] = nodes[5][j]
        out.nodes[6][start + j] = nodes[6][j]
        out.nodes[7][start + j] = nodes[7][j]
    out.node_end[k] = start + m
    lstart = out.leaf_end[k - 1] if k > 0 else 0
    for j in range(c.shape[0]):
        out.leaf_values[lstart + j] = c[j]
    out.leaf_end[k] = lstart + c.shape[0]


@njit(error_model="numpy", cache=True, nogil=True, _nrt=False)
def _stops(spec, history, value, t):
    """scikit-learn's rule: stop unless ``value`` beats one of the last values by tol."""
    better = False
    bar = value + spec.tol
    for h in history:
        better |= bar < h
    if better:
        history[t % history.shape[0]] = value
    return not better


@njit(error_model="numpy", nogil=True, _nrt=False)
def _iterations(
    grow, steps, leaves, target, update, replay, record, intervals, engine, loop, scratch, elapsed
):
    """Iterations ``schedule.first`` .. ``schedule.last - 1`` of ``loop`` (:data:`Loop`; the
    module docstring) with the engine kernels ``grow`` and ``steps`` (its ``grow_in_loop`` and
    ``steps_in_loop``, ``engine`` the engine's loop record: each tree is grown into
    ``scratch.nodes``), the predictor ``leaves`` of the rows outside the fit
    (``_descent.leaves_by_masks``, or on threads ``_descent.leaves_in_loop_par``), the row
    passes ``target``, ``update``, ``replay`` and ``record`` (:mod:`proxboost._row_passes`: one
    thread, or their parallel ``*_par`` variants) and the leaves' ``intervals``
    (:func:`_leaf_values`), every array in ``scratch`` (:data:`Scratch`).
    Returns (iterations done, stopped early).

    Compiled without reference counting: it allocates nothing (the entries below make the
    scratch) and every kernel it calls returns numbers or nothing, so taking arrays out of the
    records costs no atomic operation each (about a fifth of a small fit's iteration when it
    did). Not cached itself (its kernels are arguments): compiled into each cached entry
    below."""
    spec, fitted, delta, replays, schedule, out = loop
    idle, evaluation, validation = replays
    nodes, leaf_ids, tree_target, work = scratch[:4]
    # the tree's leaf of each node, the rows' leaf ids, the masks' scratch (one thread)
    outside = (nodes[5], scratch.leaves, scratch.masks)
    # y - H_t for the line search run in ``work`` (``_leaf_values``: ``lad``, ``pinball`` and
    # ``hinge`` without weights), left in ``work.u`` by the target pass; else no rows
    in_work = spec.loss != LS and fitted.tree_w.shape[0] == 0
    residuals = work.u[: fitted.y.shape[0] if in_work else 0]
    done = 0
    for t in range(schedule.first, schedule.last):
        t0 = _now()
        target(spec, fitted, delta, tree_target, residuals)
        m, n_leaves = grow(engine, tree_target, schedule.seeds[t - schedule.first])
        _leaf_values(
            spec, fitted, leaf_ids, n_leaves, work, intervals, scratch.leaf_sums, residuals
        )
        fit, c = work.means[:n_leaves], work.c[:n_leaves]
        alpha = schedule.alphas[t]
        update(spec, fitted, delta, (tree_target, leaf_ids, c, fit), alpha)
        depth = -1  # the tree's steps, once some rows outside the fit need them
        if idle.F.shape[0] > 0:
            depth = steps(engine, nodes, scratch.steps)
            _replay_tree(leaves, replay, idle, _steps(scratch.steps, depth), outside, (c, alpha))
        elapsed += _now() - t0
        _store(out, done, nodes, m, c)
        out.times[done] = elapsed
        if depth < 0 and (evaluation.record or validation.record):
            depth = steps(engine, nodes, scratch.steps)
        tree_steps = _steps(scratch.steps, depth)
        if evaluation.record:
            _replay_tree(leaves, replay, evaluation, tree_steps, outside, (c, alpha))
        if validation.record:
            _replay_tree(leaves, replay, validation, tree_steps, outside, (c, alpha))
        record(spec, fitted, replays, out, done, scratch.terms)
        done += 1
        if validation.record and _stops(spec, schedule.history, out.val[done - 1], t):
            return done, True
    return done, False


@njit(error_model="numpy", nogil=True, _nrt=False)
def _steps(work, depth):
    """The :data:`~proxboost.engines._descent.Steps` an engine's ``steps_in_loop`` left in
    ``work``, of the tree's ``depth``."""
    return Steps(work.child, work.feature, work.threshold, work.missing, depth)


@njit(error_model="numpy", nogil=True, _nrt=False)
def _replay_tree(leaves, replay, rows, tree_steps, outside, step):
    """The rows outside the fit ``rows`` (:data:`Rows`) through the tree: their leaves by the
    predictor ``leaves`` (``outside``: the tree's leaf of each node, the scratch of leaf ids,
    the masks' scratch), then F and H by the pass ``replay`` (``step``: the leaf values c,
    alpha). The kernels are arguments of their own: in a tuple they would become first-class
    function values, which numba cannot cache."""
    leaves(rows.Xp, tree_steps, outside)
    replay(rows, outside[1], step[0], step[1])


#: What the iterations reuse, made once per fit (:func:`_scratch`): the engine's tree arrays
#: (``tree_in_loop``: the node arrays and the training rows' leaf ids), the tree's target, the
#: leaf values' :data:`LeafWork`, the steps of the rows outside the fit
#: (``_descent.StepsWork``), their leaf ids and their masks' scratch (``_descent.MaskWork``;
#: empty on threads), the terms of a recorded loss, and the engine's leaf sums
#: (``leaf_sums_in_loop``: each leaf's weight and w g sum, added while the tree grew).
Scratch = namedtuple(
    "Scratch",
    ["nodes", "leaf_ids", "target", "work", "steps", "leaves", "masks", "terms", "leaf_sums"],
)


@njit(error_model="numpy", cache=True, nogil=True)
def _scratch(loop, tree, steps, leaf_sums, by_masks):
    """The :data:`Scratch` of ``loop`` (``tree``: the engine's ``tree_in_loop``, ``steps`` its
    ``steps_work_in_loop``, ``leaf_sums`` its ``leaf_sums_in_loop``). ``by_masks``: whether the
    rows outside the fit go down the trees by masks (one thread); their scratch then holds the
    node capacity's thresholds in the rows' type (``loop.fitted.Xp``'s: float32 values for
    ``exact``, uint8 bins for ``hist``), else it is empty."""
    nodes, leaf_ids = tree
    n = loop.fitted.y.shape[0]
    idle, evaluation, validation = loop.replays
    m = max(idle.F.shape[0], evaluation.F.shape[0], validation.F.shape[0])
    work = leaf_work(n, n + 1)  # a tree has at most one leaf per row
    target = np.empty(n)
    leaves, terms = np.empty(m, np.intp), np.empty(max(n, m))
    cap = nodes[3].shape[0] if by_masks else 0
    thresholds = np.zeros(cap, loop.fitted.Xp.dtype)
    masks = descent.new_mask_work(cap, m if by_masks else 0, thresholds)
    return Scratch(nodes, leaf_ids, target, work, steps, leaves, masks, terms, leaf_sums)


@njit(error_model="numpy", cache=True, nogil=True)
def _exact_scratch(engine, loop, by_masks):
    """:func:`_scratch` of the exact engine's loop record ``engine``."""
    tree = exact.tree_in_loop(engine)
    steps, sums = exact.steps_work_in_loop(tree[0]), exact.leaf_sums_in_loop(engine)
    return _scratch(loop, tree, steps, sums, by_masks)


@njit(error_model="numpy", cache=True, nogil=True)
def _hist_scratch(engine, loop, by_masks):
    """:func:`_scratch` of the hist engine's loop record ``engine``."""
    tree = hist.tree_in_loop(engine)
    steps, sums = hist.steps_work_in_loop(tree[0]), hist.leaf_sums_in_loop(engine)
    return _scratch(loop, tree, steps, sums, by_masks)


# One cached entry per engine and thread mode: numba's cache cannot keep a function whose
# arguments are kernels (their type is the dispatcher itself), but it keeps one that names them
# as attributes of their modules in the call itself (``exact.grow_in_loop``, ``passes.target``):
# a kernel named as a plain global of this module, bound to a local name or put in a tuple
# becomes a first-class function value, which numba cannot cache. The serial entries
# name serial kernels only, so a one-thread fit never compiles a parallel one; the parallel
# entries run under ``numba_threads(k)`` (``boost``). Each makes the loop's scratch first.
@njit(error_model="numpy", cache=True, nogil=True)
def _run_exact(engine, loop, elapsed):
    """:func:`_iterations` of the exact engine on one thread."""
    return _iterations(
        exact.grow_in_loop,
        exact.steps_in_loop,
        descent.leaves_by_masks,
        passes.target,
        passes.update,
        passes.replay,
        passes.record,
        leafops.leaf_intervals_in,
        engine,
        loop,
        _exact_scratch(engine, loop, True),
        elapsed,
    )


@njit(error_model="numpy", cache=True, nogil=True)
def _run_hist(engine, loop, elapsed):
    """:func:`_iterations` of the hist engine on one thread."""
    return _iterations(
        hist.grow_in_loop,
        hist.steps_in_loop,
        descent.leaves_by_masks,
        passes.target,
        passes.update,
        passes.replay,
        passes.record,
        leafops.leaf_intervals_in,
        engine,
        loop,
        _hist_scratch(engine, loop, True),
        elapsed,
    )


@njit(error_model="numpy", cache=True, nogil=True)
def _run_exact_par(engine, loop, elapsed):
    """:func:`_iterations` of the exact engine on threads (``engine.par``: their scratch)."""
    return _iterations(
        exact.grow_in_loop,
        exact.steps_in_loop,
        descent.leaves_in_loop_par,
        passes.target_par,
        passes.update_par,
        passes.replay_par,
        passes.record_par,
        leaf_threads.leaf_intervals_in_par,
        engine,
        loop,
        _exact_scratch(engine, loop, False),
        elapsed,
    )


@njit(error_model="numpy", cache=True, nogil=True)
def _run_hist_par(engine, loop, elapsed):
    """:func:`_iterations` of the hist engine on threads (``engine.par``: their count)."""
    return _iterations(
        hist.grow_in_loop,
        hist.steps_in_loop,
        descent.leaves_in_loop_par,
        passes.target_par,
        passes.update_par,
        passes.replay_par,
        passes.record_par,
        leaf_threads.leaf_intervals_in_par,
        engine,
        loop,
        _hist_scratch(engine, loop, False),
        elapsed,
    )


#: The compiled loop of each engine that has one: on one thread, and on several
RUNS = {"exact": _run_exact, "hist": _run_hist}
RUNS_PAR = {"exact": _run_exact_par, "hist": _run_hist_par}


#: Which iterations to run: the first and the end, the seeds of their trees (exact engine),
#: Nesterov's alphas (indexed by t) and the early-stopping history (updated in place).
Schedule = namedtuple("Schedule", ["first", "last", "seeds", "alphas", "history"])

#: What the iterations read and write: the :data:`Spec`, the training :data:`Rows`, the
#: residual Delta_t (updated in place), the replays (rows of weight 0, eval set, validation
#: rows: :data:`Rows`), the :data:`Schedule` and the :data:`Out` record.
Loop = namedtuple("Loop", ["spec", "fitted", "delta", "replays", "schedule", "out"])


# ---------------------------------------------------------------------------------------------
# The Python side: which fits, and the state before and after
# ---------------------------------------------------------------------------------------------
#: A fit's loop inputs, shared with the Python loop (``_fit_loop.BoostingLoop._boost``): the
#: loss and algorithm objects, the engine and the prepared training rows, y, the weights (None:
#: unit), lambda, Nesterov's alphas, T, the loop state, the replays (rows of weight 0, eval set,
#: validation rows; None: absent) and the monotone constraints.
Fit = namedtuple(
    "Fit", ["loss", "algo", "engine", "Xp", "y", "w", "lam", "alphas", "T", "state", "replays"]
)

_NODE_DTYPES = (np.int32, np.float64, np.int32, np.int32, np.int32, np.int32, np.float64, np.uint8)
RAND_R_MAX = 2147483647  # the exact engine's seed range (``engines.exact.RAND_R_MAX``)


def applies(estimator, fit, cst) -> bool:
    """Whether this fit runs compiled (see the module docstring), else the Python loop."""
    return (
        not FORCE_PYTHON
        and fit.loss.name in LOSS_CODES
        and np.ndim(fit.state.f0) == 0
        and fit.state.budget is None
        and fit.engine.name in RUNS
        and CLOCK_AVAILABLE
        and cst is None
        and estimator.tie_rule in RULE_CODES
        and not estimator.verbose
    )


def _loss_weights(w):
    """(the weights as ``Loss.value`` scales them, empty without weights; their sum, or the row
    count)."""
    if w is None:
        return _EMPTY, None
    _, exponent = np.frexp(np.max(w))
    scaled = np.ldexp(w, -exponent)
    return scaled, np.sum(scaled)


def _rows(Xp, y, w, F, H):
    """The :data:`Rows` of rows whose loss is recorded (F and H copied: updated in place)."""
    loss_w, count = _loss_weights(w)
    count = float(len(y)) if count is None else count
    tree_w = _EMPTY if w is None else np.ascontiguousarray(w, dtype=np.float64)
    F, H = (np.array(v, dtype=np.float64) for v in (F, H))
    return Rows(Xp, np.ascontiguousarray(y, dtype=np.float64), loss_w, count, F, H, True, tree_w)


def _replay_rows(tracker, empty_Xp, record, by_feature):
    """The :data:`Rows` of a replay (``_Replay`` / ``_EvalTracker``; None: an empty one), its
    prepared rows ``by_feature`` (one thread: a transposed copy, (p, m)) or as they are."""
    if tracker is None:
        return Rows(empty_Xp, _EMPTY, _EMPTY, 1.0, _EMPTY.copy(), _EMPTY.copy(), False, _EMPTY)
    Xp = np.ascontiguousarray(tracker.Xp.T) if by_feature else tracker.Xp
    if not record:
        F, H = tracker.F.copy(), tracker.H.copy()
        return Rows(Xp, _EMPTY, _EMPTY, 1.0, F, H, False, _EMPTY)
    return _rows(Xp, tracker.y, tracker.w, tracker.F, tracker.H)


def _spec(estimator, fit):
    algo, loss = fit.algo, fit.loss
    return Spec(
        LOSS_CODES[loss.name],
        float(getattr(loss, "tau", 0.5)),
        algo.proximal,
        algo.residual,
        algo.accelerated,
        float(fit.lam),
        float(estimator.learning_rate),
        RULE_CODES[estimator.tie_rule],
        float(estimator.tol),
    )


def _outputs(n_iter, max_nodes):
    size = n_iter * max_nodes
    return Out(
        tuple(np.zeros(size, dtype) for dtype in _NODE_DTYPES),
        np.zeros(n_iter, np.int64),
        np.zeros(size),
        np.zeros(n_iter, np.int64),
        np.zeros(n_iter),
        np.zeros(n_iter),
        np.zeros(n_iter),
        np.zeros(n_iter),
    )


def _seeds(fit, n_iter, may_stop):
    """(the exact engine's tree seeds, the state to redraw from or None): the seeds are drawn
    from the fit's ``RandomState`` itself, one ``randint`` per tree as the Python loop draws
    them; when the fit ``may_stop`` early, its state before the draws is kept, so that
    :func:`_advance` can leave it advanced by the trees grown only. Zeros for ``hist``."""
    if fit.engine.name != "exact":
        return np.zeros(n_iter, np.int64), None
    rng = fit.state.rng
    before = rng.get_state() if may_stop else None
    return rng.randint(0, RAND_R_MAX, size=n_iter).astype(np.int64), before


def _advance(rng, before, done, n_iter):
    """Leave ``rng`` advanced by the ``done`` trees grown: the first ``done`` of ``n_iter``
    draws of one ``randint`` (the legacy generator draws them one after the other, so they
    are the draws of ``randint(size=done)``)."""
    if done < n_iter:
        rng.set_state(before)
        rng.randint(0, RAND_R_MAX, size=done)


def boost(estimator, fit):
    """Run the iterations of ``fit`` compiled, leaving ``fit.state`` and the replays as the
    Python loop leaves them."""
    state = fit.state
    first = len(state.forest)
    last = fit.T if not state.stopped else first
    if last <= first:
        return
    # threads: n_jobs's count on a thread-safe layer, else 1 (engine_threads warns once)
    k = engine_threads(estimator.n_jobs)
    _, _, record, max_nodes = fit.engine.compiled(fit.Xp, estimator.max_depth, fit.w, k)
    idle, ev, val = fit.replays
    p = fit.Xp.shape[1]
    empty = np.empty((0, p), np.uint8 if fit.engine.name == "hist" else np.float32)
    fitted = _rows(empty, fit.y, fit.w, state.F, state.H)
    replays = tuple(
        _replay_rows(tracker, empty, recorded, k == 1)
        for tracker, recorded in zip(fit.replays, (False, True, True), strict=True)
    )
    history = state.history if state.history is not None else np.zeros(1)
    seeds, before = _seeds(fit, last - first, val is not None)
    schedule = Schedule(first, last, seeds, fit.alphas, history)
    out = _outputs(last - first, max_nodes)
    delta = np.array(state.delta, dtype=np.float64)
    loop = Loop(_spec(estimator, fit), fitted, delta, replays, schedule, out)
    if k > 1:  # the parallel entry, compiled at its first use with threads only
        with numba_threads(k):
            done, stopped = RUNS_PAR[fit.engine.name](record, loop, float(state.elapsed))
    else:
        done, stopped = RUNS[fit.engine.name](record, loop, float(state.elapsed))
    if fit.engine.name == "exact":  # the trees' draws, as one randint per tree
        _advance(state.rng, before, done, last - first)
    _collect(fit, out, done, stopped)
    state.F, state.H, state.delta = fitted.F, fitted.H, delta
    for tracker, rows in zip((idle, ev, val), replays, strict=True):
        if tracker is not None:
            tracker.F, tracker.H = rows.F, rows.H
    if ev is not None:
        ev.losses.extend(out.eval[:done].tolist())
    if val is not None:
        val.losses.extend(out.val[:done].tolist())


def _trimmed(a, used):
    """The first ``used`` entries of one of the loop's outputs, kept by the model: a view when
    they fill at least seven eighths of it (the trees' nodes of a depth seldom leave more
    empty), else a copy, so that the model never holds more than 8/7 of what it uses. The
    copies of a 1,000-tree fit's outputs took about 0.1 ms of a crabs fit's 11 ms."""
    return a[:used] if 8 * used >= 7 * a.shape[0] else a[:used].copy()


def _collect(fit, out, done, stopped, K=0):
    """The trees, leaf values, curves and times of the ``done`` iterations into the state.
    ``K``: the quantile levels of a several-level loop (``_compiled_multi``: K values per leaf,
    (n_leaves, K), and one training loss per level), 0 for one loss.

    The trees and their leaf values join the model's forest as one block (one copy of the
    loop's outputs and each tree's span of them): no Python object per tree is made here
    (``_forest``)."""
    state = fit.state
    if done == 0:
        return
    node_end, leaf_end = out.node_end[:done], out.leaf_end[:done]
    spans = np.empty((done, 3), np.int64)
    spans[0, 0], spans[1:, 0] = 0, node_end[:-1]
    spans[:, 1] = node_end
    spans[0, 2], spans[1:, 2] = 0, leaf_end[:-1]
    n_leaves = (leaf_end - spans[:, 2]).astype(np.intp)
    nodes = tuple(_trimmed(a, node_end[-1]) for a in out.nodes)
    leaves = _trimmed(out.leaf_values, leaf_end[-1])
    if K:  # one row of K values per leaf: the bounds in rows
        leaves = leaves.reshape(-1, K)
        spans[:, 2] //= K
        n_leaves //= K
    kind, arrays, extra = fit.engine.packed(nodes)
    state.forest.add_block(Block(kind, arrays, spans, n_leaves, leaves, extra))
    state.train_loss.extend(out.train[:done].copy() if K else out.train[:done].tolist())
    state.times.extend(out.times[:done].tolist())
    state.elapsed = float(out.times[done - 1])
    state.stopped = stopped
