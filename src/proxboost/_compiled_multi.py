"""The boosting loop of a model of several quantile levels compiled (numba): every iteration of
``tau=[...]`` (:class:`proxboost.losses.MultiQuantile`) without Python.

:meth:`proxboost._fit_loop.BoostingLoop._boost` runs a model of several levels here when
:func:`applies` (the single-level loop's conditions, :mod:`proxboost._compiled_loop`, with one
f_0 per level). It performs the floating-point operations of the Python loop in the same order,
so trees, leaf values, curves, early stopping and predictions are bit-identical
(``tests/test_compiled_multi.py``). Beyond the single-level loop's rules (its docstring):

* F_t and H_t are held level-major, shape (K, n): each level's row is then a contiguous vector,
  and the single-level kernels (direction, line search, recorded loss) serve each level as they
  serve one model;
* tree t is grown on the direction of level t mod K (round robin,
  ``MultiQuantile.tree_target``); its leaf values are the K levels' own line searches, then
  pooling adjacent violators (``_multi_quantile._ordered_leaves``) in the leaves whose values
  break the gap budget's bounds, as ``MultiQuantile.line_search`` does;
* the gap budget (``_multi_quantile.gap_bounds`` and ``tree_gaps``, the functions of the Python
  loop's ``GapBudget``) runs compiled: its ``w @ G`` is a BLAS matrix-vector product, whose order
  of additions is BLAS's and cannot be reproduced by writing the loop, so the loop calls the BLAS
  function NumPy calls, with NumPy's arguments (:mod:`proxboost._blas`). The per-tree rows live
  in preallocated C-contiguous (T, K - 1) and (T, K) arrays, whose first t rows are the operands
  ``np.asarray`` makes of the Python loop's lists of rows (same shape, layout and values), hence
  the same BLAS call and the same result;
* a recorded loss is one value per level; early stopping reads their sum (``np.sum``'s pairwise
  order, as ``_fit_loop._total``).

numba caches the loop (the BLAS functions are called by symbol name), so it compiles once per
install as the single-level loop does.
``PROXBOOST_COMPILED_LOOP=0`` (``_compiled_loop.FORCE_PYTHON``) runs the Python loop instead.
"""

from collections import namedtuple

import numpy as np
from numba import njit

from proxboost import _compiled_loop
from proxboost._blas import vecmat
from proxboost._compiled_loop import (
    _EMPTY,
    _NODE_DTYPES,
    CLOCK_AVAILABLE,
    Out,
    Rows,
    Schedule,
    Spec,
    _advance,
    _collect,
    _gradient,
    _line_search,
    _loss_weights,
    _now,
    _prox,
    _seeds,
    _spec,
    _stops,
    _store,
    leaf_means_in,
    leaf_work,
    loss_value,
    pairwise_sum,
)
from proxboost._leafops import AUTHORS, RULE_CODES, _leaf_interval, _leaf_point, _leaf_ranks
from proxboost._multi_quantile import ROUNDING_MARGIN, _ordered_leaves
from proxboost._nesterov import _model_weights
from proxboost._row_passes import _next
from proxboost.engines import exact, hist
from proxboost.engines._threads import requested_threads
from proxboost.losses import MultiQuantile

#: The levels and their gap budget: tau_1 < ... < tau_K, the gaps and magnitudes of f_0
#: (``GapBudget.d0``, ``abs0``) and one row per tree (filled up to the trees grown) of the
#: budget's ``min_steps`` (T, K - 1) and ``max_abs`` (T, K), C-contiguous; ``ones``: T unit
#: model weights (read only).
Levels = namedtuple("Levels", ["taus", "d0", "abs0", "min_steps", "max_abs", "ones"])

#: The leaf values' scratch, allocated once per fit (an iteration allocated about 14 arrays per
#: level before): the tree's leaf ids (the engine's array, rewritten by each tree), the rows
#: grouped by leaf (``order``; ``starts``: where each leaf starts; ``fill``: the grouping's
#: cursors), one level's values in that order (``grouped``), the selections' ``scratch``, and
#: the pooled leaves' U = y - H_k, (n, K), and weights ``ws`` (ones without weights), what
#: the pooling reads without bounds: zeros (the ``midpoint`` rule's g), the shifts (K, the first
#: 0), the leaves' unbounded intervals (-inf and +inf, (n, K) each; read only), the pooled
#: points' scratch ``kept`` (n K values), and the least-squares fit's ``means``
#: (``_compiled_loop.LeafWork`` of leaves only).
LevelWork = namedtuple(
    "LevelWork",
    [
        "leaf_ids", "order", "starts", "fill", "grouped", "scratch", "U", "ws", "zeros", "shifts",
        "unbounded", "kept", "means",
    ],
)  # fmt: skip


# ---------------------------------------------------------------------------------------------
# The gap budget: gap_bounds and tree_gaps compiled, their products by NumPy's BLAS call
# ---------------------------------------------------------------------------------------------
_EPS = float(np.finfo(float).eps)


@njit(error_model="numpy", cache=True, nogil=True)
def _gap_bounds(levels, t, alphas, accelerated):
    """``GapBudget.next_min_steps(model_weights(alphas[: t + 1]))`` of the trees 0..t-1:
    ``_multi_quantile.gap_bounds``'s operations in its order, its two ``w @ G`` products by the
    BLAS call NumPy makes (``_blas.vecmat``). Without acceleration every alpha is 0, so every
    weight is 1.0 exactly (1 + 0 * w): the O(t) recurrence of ``model_weights``, run again at
    every iteration, is skipped (a twentieth of a small fit's time at T = 1000)."""
    d0, abs0 = levels.d0, levels.abs0
    steps, mags = np.empty(d0.shape[0]), np.empty(abs0.shape[0])
    if t:
        w = _model_weights(alphas[: t + 1])[1 : t + 1] if accelerated else levels.ones[:t]
        vecmat(w, levels.min_steps, t, steps)
        vecmat(w, levels.max_abs, t, mags)
    # the rest element by element, the array expressions' operations in their order (gaps =
    # d0 + steps, scale = abs0 + mags, margin = coef * (scale[1:] + scale[:-1]), -(gaps -
    # margin)) without their five temporary arrays
    coef = ROUNDING_MARGIN * _EPS * (t + 2)
    bounds = np.empty(d0.shape[0])
    for k in range(d0.shape[0]):
        gap = d0[k] + steps[k] if t else d0[k]
        lower = abs0[k] + mags[k] if t else abs0[k]
        upper = abs0[k + 1] + mags[k + 1] if t else abs0[k + 1]
        bounds[k] = -(gap - coef * (upper + lower))
    return bounds


@njit(error_model="numpy", cache=True, nogil=True)
def _record_gaps(levels, t, c):
    """Tree t's rows of the gap budget (``_multi_quantile.tree_gaps`` of its shrunk leaf values
    c, shape (n_leaves, K)): exact operations (differences, minima, maxima, absolute values)."""
    n_leaves, K = c.shape
    if n_leaves == 0:
        raise ValueError("zero-size array to reduction operation minimum which has no identity")
    # numba's np.min and np.max of the columns' differences and magnitudes, element by element
    # (the first value, then strictly smaller or larger ones; the first NaN ends the scan and is
    # the result) without a temporary array per column
    for k in range(K - 1):
        low = c[0, k + 1] - c[0, k]
        for leaf in range(1, n_leaves):
            if np.isnan(low):
                break
            step = c[leaf, k + 1] - c[leaf, k]
            if np.isnan(step) or step < low:
                low = step
        levels.min_steps[t, k] = low
    for k in range(K):
        high = np.abs(c[0, k])
        for leaf in range(1, n_leaves):
            if np.isnan(high):
                break
            size = np.abs(c[leaf, k])
            if np.isnan(size) or size > high:
                high = size
        levels.max_abs[t, k] = high


# ---------------------------------------------------------------------------------------------
# One level in the single-level kernels
# ---------------------------------------------------------------------------------------------
@njit(error_model="numpy", cache=True, nogil=True)
def _level(spec, tau):
    """The :data:`~proxboost._compiled_loop.Spec` of the pinball loss at level ``tau``."""
    return Spec(
        spec.loss,
        tau,
        spec.proximal,
        spec.residual,
        spec.accelerated,
        spec.step,
        spec.nu,
        spec.rule,
        spec.tol,
    )


@njit(error_model="numpy", cache=True, nogil=True)
def _level_rows(rows, k):
    """Level k's :data:`~proxboost._compiled_loop.Rows` of level-major ``rows`` (views)."""
    return Rows(rows.Xp, rows.y, rows.w, rows.count, rows.F[k], rows.H[k], rows.record, rows.tree_w)


# ---------------------------------------------------------------------------------------------
# One iteration
# ---------------------------------------------------------------------------------------------
@njit(error_model="numpy", cache=True, nogil=True)
def _target(spec, taus, fitted, delta, t):
    """The tree's target: the direction of level t mod K at its H_t (the other levels'
    directions, which the Python loop computes and drops, change nothing), plus Delta_t for the
    residual variants."""
    k = t % taus.shape[0]
    level = _level(spec, taus[k])
    H = fitted.H[k]
    target = np.empty(H.shape[0])
    for i in range(H.shape[0]):
        y, z = fitted.y[i], H[i]
        r = _prox(level, y, z) if spec.proximal else _gradient(level, y, z)
        target[i] = r + delta[i] if spec.residual else r
    return target


@njit(error_model="numpy", cache=True, nogil=True)
def _group(leaf_ids, n_leaves, work):
    """Group the rows by leaf into ``work`` (:data:`LevelWork`): ``order`` the rows leaf after
    leaf, each leaf's in row order (``np.argsort(leaf_ids, kind="stable")``), ``starts[leaf]``
    where each leaf starts (n_leaves + 1 entries), by counting."""
    starts, fill, order = work.starts, work.fill, work.order
    for leaf in range(n_leaves + 1):
        starts[leaf] = 0
    for i in range(leaf_ids.shape[0]):
        starts[leaf_ids[i] + 1] += 1
    for leaf in range(n_leaves):
        starts[leaf + 1] += starts[leaf]
        fill[leaf] = starts[leaf]
    for i in range(leaf_ids.shape[0]):
        leaf = leaf_ids[i]
        order[fill[leaf]] = i
        fill[leaf] += 1


@njit(error_model="numpy", cache=True, nogil=True)
def _line_searches(spec, taus, fitted, n_leaves, fit, work):
    """Each level's own line search at its H_t: the columns of ``MultiQuantile.line_search``
    before the ordering, shape (n_leaves, K). Without weights, the rows are grouped by leaf once
    (``work``, :func:`_group`) for the K levels: each level's values y - H_k are gathered in
    that order, the single-level line search's grouping (``_leafops._leaf_intervals``: each
    leaf's rows in row order), and each leaf's interval and point are found by its kernels, so
    the same numbers without K groupings and their arrays."""
    K = taus.shape[0]
    c = np.empty((n_leaves, K))
    y, n = fitted.y, fitted.y.shape[0]
    if fitted.tree_w.shape[0] > 0 or n == 0:  # weighted: each level's single-level search
        for k in range(K):
            level = _level(spec, taus[k])
            found = _line_search(level, y, fitted.H[k], work.leaf_ids, n_leaves, fitted.tree_w, fit)
            for leaf in range(n_leaves):
                c[leaf, k] = found[leaf]
        return c
    order, starts, grouped = work.order, work.starts, work.grouped
    for k in range(K):
        H = fitted.H[k]
        for j in range(n):
            i = order[j]
            grouped[j] = y[i] - H[i]
        for leaf in range(n_leaves):
            m = starts[leaf + 1] - starts[leaf]
            lo, hi = -np.inf, np.inf
            if m > 0:
                lo_rank, hi_rank = _leaf_ranks(m, taus[k], 0, False)
                lo, hi = _leaf_interval(grouped, starts[leaf], m, lo_rank, hi_rank, work.scratch)
            c[leaf, k] = _leaf_point(lo, hi, m, spec.rule, fit[leaf])
    return c


@njit(error_model="numpy", cache=True, nogil=True)
def _violated(c, b):
    """The leaves where some c[:, k] - c[:, k - 1] < b[k - 1] (``np.flatnonzero`` order)."""
    n_leaves, K = c.shape
    leaves = np.empty(n_leaves, np.int64)
    count = 0
    for leaf in range(n_leaves):
        bad = False
        for k in range(1, K):
            bad |= c[leaf, k] - c[leaf, k - 1] < b[k - 1]
        if bad:
            leaves[count] = leaf
            count += 1
    return leaves[:count]


@njit(error_model="numpy", cache=True, nogil=True)
def _order_leaves(spec, taus, fitted, fit, b, c, work):
    """``MultiQuantile._ordered`` (no bounds): pool adjacent violators, in place, in the leaves
    of ``c`` that break c[:, k] - c[:, k - 1] >= b[k - 1]. The rows grouped by leaf are
    ``work``'s (:func:`_group`); U (y - H_k, and the weights) is written for the violated
    leaves' rows only, the only rows ``_ordered_leaves`` reads."""
    violated = _violated(c, b)
    if violated.shape[0] == 0:
        return
    n_leaves, K = c.shape
    order, starts, U, ws = work.order, work.starts, work.U, work.ws
    weighted = fitted.tree_w.shape[0] > 0
    for leaf in violated:
        for j in range(starts[leaf], starts[leaf + 1]):
            i = order[j]
            for k in range(K):
                U[j, k] = fitted.y[i] - fitted.H[k, i]
            if weighted:
                ws[j] = fitted.tree_w[i]
    g = fit if spec.rule == AUTHORS else work.zeros[:n_leaves]
    shifts = work.shifts  # np.concatenate([[0.0], np.cumsum(b)]): cumsum's first term is b[0]
    for k in range(1, K):
        shifts[k] = b[0] if k == 1 else shifts[k - 1] + b[k - 1]
    shifted = (work.unbounded[0][:n_leaves], work.unbounded[1][:n_leaves])
    _ordered_leaves(U, ws, starts, violated, taus, shifts, spec.rule, g, c, shifted, work.kept)


@njit(error_model="numpy", cache=True, nogil=True)
def _work(fitted, leaf_ids, K):
    """The fit's :data:`LevelWork`: ``starts`` and ``fill`` sized for one leaf per row."""
    n = fitted.y.shape[0]
    starts = np.zeros(n + 2, np.int64)
    unbounded = (np.full((n + 1, K), -np.inf), np.full((n + 1, K), np.inf))
    return LevelWork(
        leaf_ids, np.empty(n, np.int64), starts, starts.copy(), np.empty(n), np.empty(n),
        np.empty((n, K)), np.ones(n), np.zeros(n + 1), np.zeros(K), unbounded,
        np.empty(n * K), leaf_work(0, n + 1),
    )  # fmt: skip


@njit(error_model="numpy", cache=True, nogil=True)
def _all_nonpositive(values):
    """``np.all(values <= 0.0)`` (NaN is not), without the temporary array."""
    for value in values:
        if not value <= 0.0:
            return False
    return True


@njit(error_model="numpy", cache=True, nogil=True)
def _leaf_values(spec, levels, fitted, work, n_leaves, target, t, alphas):
    """(least-squares fit, shrunk leaf values c of shape (n_leaves, K)): the several-levels
    branch of ``BoostingLoop._leaf_values``, with tree t's rows of the gap budget recorded
    (``work``: :data:`LevelWork`, its ``leaf_ids`` the tree's)."""
    fit = leaf_means_in(target, work.leaf_ids, n_leaves, fitted.tree_w, work.means)
    min_steps = _gap_bounds(levels, t, alphas, spec.accelerated)
    b = min_steps / spec.nu
    _group(work.leaf_ids, n_leaves, work)
    c = _line_searches(spec, levels.taus, fitted, n_leaves, fit, work)
    _order_leaves(spec, levels.taus, fitted, fit, b, c, work)
    if _all_nonpositive(min_steps):  # 0 in every level satisfies the bounds: keep the rule
        for leaf in range(n_leaves):
            if fit[leaf] == 0.0:
                c[leaf, :] = 0.0
    for leaf in range(n_leaves):  # c = nu * c, in place
        for k in range(c.shape[1]):
            c[leaf, k] = spec.nu * c[leaf, k]
    _record_gaps(levels, t, c)
    return fit, c


@njit(error_model="numpy", cache=True, nogil=True)
def _update(spec, fitted, delta, step, alpha):
    """F_{t+1} = H_t + c[leaf], Delta_{t+1} = target - fit[leaf], Nesterov's H_{t+1} of every
    level (``step``: (target, leaf ids, leaf values c, least-squares fit))."""
    target, leaf_ids, c, fit = step
    F, H = fitted.F, fitted.H
    for i in range(F.shape[1]):
        leaf = leaf_ids[i]
        if spec.residual:
            delta[i] = target[i] - fit[leaf]
        for k in range(F.shape[0]):
            F[k, i], H[k, i] = _next(H[k, i], F[k, i], c[leaf, k], alpha, spec.accelerated)


@njit(error_model="numpy", cache=True, nogil=True)
def _replay(rows, leaf_ids, c, alpha):
    """``_Replay.update`` of rows outside the fit (H skips the Nesterov term when alpha = 0)."""
    F, H = rows.F, rows.H
    for i in range(F.shape[1]):
        leaf = leaf_ids[i]
        for k in range(F.shape[0]):
            F[k, i], H[k, i] = _next(H[k, i], F[k, i], c[leaf, k], alpha, alpha != 0)


@njit(error_model="numpy", cache=True, nogil=True)
def _losses(spec, taus, rows, into):
    """``MultiQuantile.value`` of ``rows`` into ``into``: each level's ``Loss.value``."""
    for k in range(taus.shape[0]):
        into[k] = loss_value(_level(spec, taus[k]), _level_rows(rows, k))


@njit(error_model="numpy", cache=True, nogil=True)
def _record(spec, taus, fitted, replays, out, k):
    """The curves of iteration k: training, eval and validation losses, one per level."""
    _losses(spec, taus, fitted, out.train[k])
    evaluation, validation = replays[1], replays[2]
    if evaluation.record:
        _losses(spec, taus, evaluation, out.eval[k])
    if validation.record:
        _losses(spec, taus, validation, out.val[k])


@njit(error_model="numpy", nogil=True)
def _iterations(
    grow, tree, apply, engine, spec, levels, fitted, delta, replays, schedule, out, elapsed
):
    """Iterations ``schedule.first`` .. ``schedule.last - 1`` of a model of several levels, as
    ``_compiled_loop._iterations`` (its arguments, with ``levels``: :data:`Levels`). Returns
    (iterations done, stopped early). Not cached itself: compiled into each engine's entry."""
    nodes, leaf_ids = tree(engine)
    work = _work(fitted, leaf_ids, levels.taus.shape[0])
    done = 0
    for t in range(schedule.first, schedule.last):
        t0 = _now()
        target = _target(spec, levels.taus, fitted, delta, t)
        m, n_leaves = grow(engine, target, schedule.seeds[t - schedule.first])
        fit, c = _leaf_values(spec, levels, fitted, work, n_leaves, target, t, schedule.alphas)
        alpha = schedule.alphas[t]
        _update(spec, fitted, delta, (target, leaf_ids, c, fit), alpha)
        idle, evaluation, validation = replays
        if idle.F.shape[1] > 0:
            _replay(idle, apply(engine, idle.Xp, nodes), c, alpha)
        elapsed += _now() - t0
        _store(out, done, nodes, m, c.ravel())
        out.times[done] = elapsed
        if evaluation.record:
            _replay(evaluation, apply(engine, evaluation.Xp, nodes), c, alpha)
        if validation.record:
            _replay(validation, apply(engine, validation.Xp, nodes), c, alpha)
        _record(spec, levels.taus, fitted, replays, out, done)
        done += 1
        # the Python loop's rule on the sum of the levels' validation losses (``_total``)
        total = pairwise_sum(out.val[done - 1]) if validation.record else 0.0
        if validation.record and _stops(spec, schedule.history, total, t):
            return done, True
    return done, False


# One cached entry per engine, as in ``_compiled_loop`` (numba caches no function taking kernels)
@njit(error_model="numpy", cache=True, nogil=True)
def _run_exact(engine, spec, levels, fitted, delta, replays, schedule, out, elapsed):
    """:func:`_iterations` of the exact engine."""
    return _iterations(
        exact.grow_in_loop,
        exact.tree_in_loop,
        exact.apply_in_loop,
        engine,
        spec,
        levels,
        fitted,
        delta,
        replays,
        schedule,
        out,
        elapsed,
    )


@njit(error_model="numpy", cache=True, nogil=True)
def _run_hist(engine, spec, levels, fitted, delta, replays, schedule, out, elapsed):
    """:func:`_iterations` of the hist engine."""
    return _iterations(
        hist.grow_in_loop,
        hist.tree_in_loop,
        hist.apply_in_loop,
        engine,
        spec,
        levels,
        fitted,
        delta,
        replays,
        schedule,
        out,
        elapsed,
    )


#: The compiled loop of each engine that has one
RUNS = {"exact": _run_exact, "hist": _run_hist}


# ---------------------------------------------------------------------------------------------
# The Python side: which fits, and the state before and after
# ---------------------------------------------------------------------------------------------
def applies(estimator, fit, cst) -> bool:
    """Whether this fit of several levels runs here (the module docstring), else the Python
    loop."""
    return (
        not _compiled_loop.FORCE_PYTHON
        and isinstance(fit.loss, MultiQuantile)
        and fit.state.budget is not None
        and fit.engine.name in RUNS
        and CLOCK_AVAILABLE
        and cst is None
        and estimator.tie_rule in RULE_CODES
        and not estimator.verbose
        and requested_threads(estimator.n_jobs) == 1  # the compiled loop grows on one thread
    )


def _level_major(F):
    """A copy of (n, K) predictions as (K, n), C-contiguous (updated in place)."""
    return np.array(np.asarray(F, dtype=np.float64).T, order="C")


def _rows(Xp, y, w, F, H):
    """The :data:`~proxboost._compiled_loop.Rows` of rows whose losses are recorded, F and H
    level-major."""
    loss_w, count = _loss_weights(w)
    count = float(len(y)) if count is None else count
    tree_w = _EMPTY if w is None else np.ascontiguousarray(w, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    return Rows(Xp, y, loss_w, count, _level_major(F), _level_major(H), True, tree_w)


def _replay_rows(tracker, empty_Xp, record, K):
    """The rows of a replay (``_Replay`` / ``_EvalTracker``; None: an empty one)."""
    if tracker is None:
        none = np.empty((K, 0))
        return Rows(empty_Xp, _EMPTY, _EMPTY, 1.0, none, none.copy(), False, _EMPTY)
    if not record:
        F, H = _level_major(tracker.F), _level_major(tracker.H)
        return Rows(tracker.Xp, _EMPTY, _EMPTY, 1.0, F, H, False, _EMPTY)
    return _rows(tracker.Xp, tracker.y, tracker.w, tracker.F, tracker.H)


def _levels(loss, budget, last):
    """The :data:`Levels` of a fit up to tree ``last``, the budget's rows of the trees grown
    so far (``warm_start``) copied in."""
    K, first = len(loss.taus), len(budget.min_steps)
    min_steps, max_abs = np.zeros((last, K - 1)), np.zeros((last, K))
    if first:
        min_steps[:first], max_abs[:first] = budget.min_steps, budget.max_abs
    taus = np.ascontiguousarray(loss.taus, dtype=np.float64)
    d0, abs0 = (np.ascontiguousarray(a, dtype=np.float64) for a in (budget.d0, budget.abs0))
    return Levels(taus, d0, abs0, min_steps, max_abs, np.ones(last))


def _outputs(n_iter, max_nodes, K):
    """The loop's :data:`~proxboost._compiled_loop.Out`: K leaf values per leaf, K losses per
    curve point."""
    size = n_iter * max_nodes
    nodes = tuple(np.zeros(size, dtype) for dtype in _NODE_DTYPES)
    ends = np.zeros(n_iter, np.int64), np.zeros(n_iter, np.int64)
    curves = tuple(np.zeros((n_iter, K)) for _ in range(3))
    return Out(nodes, ends[0], np.zeros(size * K), ends[1], *curves, np.zeros(n_iter))


def boost(estimator, fit):
    """Run the iterations of ``fit`` compiled, leaving ``fit.state`` (its gap budget too) and
    the replays as the Python loop leaves them."""
    state = fit.state
    first = len(state.forest)
    last = fit.T if not state.stopped else first
    if last <= first:
        return
    _, _, record, max_nodes = fit.engine.compiled(fit.Xp, estimator.max_depth, fit.w)
    K = len(fit.loss.taus)
    empty = np.empty((0, fit.Xp.shape[1]), np.uint8 if fit.engine.name == "hist" else np.float32)
    fitted = _rows(empty, fit.y, fit.w, state.F, state.H)
    replays = tuple(
        _replay_rows(tracker, empty, recorded, K)
        for tracker, recorded in zip(fit.replays, (False, True, True), strict=True)
    )
    levels = _levels(fit.loss, state.budget, last)
    history = state.history if state.history is not None else np.zeros(1)
    seeds, before = _seeds(fit, last - first, fit.replays[2] is not None)
    schedule = Schedule(first, last, seeds, fit.alphas, history)
    out = _outputs(last - first, max_nodes, K)
    delta = np.array(state.delta, dtype=np.float64)
    args = (_spec(estimator, fit), levels, fitted, delta, replays, schedule, out)
    done, stopped = RUNS[fit.engine.name](record, *args, float(state.elapsed))
    if fit.engine.name == "exact":  # the trees' draws, as one randint per tree
        _advance(state.rng, before, done, last - first)
    _collect(fit, out, done, stopped, K)
    state.budget.min_steps.extend(levels.min_steps[first : first + done].copy())
    state.budget.max_abs.extend(levels.max_abs[first : first + done].copy())
    state.F, state.H, state.delta = fitted.F.T.copy(), fitted.H.T.copy(), delta
    for tracker, rows in zip(fit.replays, replays, strict=True):
        if tracker is not None:
            tracker.F, tracker.H = rows.F.T.copy(), rows.H.T.copy()
    _, ev, val = fit.replays
    if ev is not None:
        ev.losses.extend(out.eval[:done].copy())
    if val is not None:
        val.losses.extend(out.val[:done].copy())
