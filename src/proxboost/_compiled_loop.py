"""The boosting loop compiled (numba): every iteration of a common fit without Python.

:meth:`proxboost._fit_loop.BoostingLoop._boost` runs its iterations here when the fit is one this
loop knows (:func:`applies`): the losses without transcendental functions (``ls``, ``lad``,
``pinball`` at one level, ``hinge``), every algorithm, the ``exact`` and ``hist`` engines, with or
without weights, the ``midpoint`` and ``authors`` tie rules, an eval set, early stopping, warm
start, and no monotone constraint, ``verbose=0``. Everything else runs the Python loop, which stays
the reference: this loop performs the same floating-point operations in the same order, so trees,
curves and predictions are bit-identical (``tests/test_compiled_loop.py``). The rules that keeps:

* elementwise steps (directions, updates) are the NumPy expressions, operation for operation;
* ``np.bincount`` sums in row order, as the leaf means here;
* ``np.sum`` adds pairwise (NumPy's ``pairwise_sum``: blocks of up to 128 values over 8
  accumulators, halves cut at multiples of 8): :func:`pairwise_sum` does the same;
* the weights of a recorded loss are scaled as ``Loss.value`` scales them (once, in NumPy);
* the exact engine's seeds are drawn before the loop with the fit's ``RandomState`` (the same
  draws as one ``randint`` per tree), and the state is then advanced by the trees grown only.

``train_time_`` keeps its meaning: the clock (``CLOCK_MONOTONIC``, ``time.perf_counter``'s) is
read around each iteration's fitting steps, the loss recording excluded.

It is the default, and numba caches it as every kernel (one entry per engine, the clock read by
symbol name: :mod:`proxboost._clock`), so only the first fit after an install or a change of the
kernels compiles it. ``PROXBOOST_COMPILED_LOOP=0`` (or :data:`FORCE_PYTHON` set to True) runs the
Python loop instead; ``tests/test_compiled_loop.py`` compares both paths.
"""

import os
from collections import namedtuple

import numpy as np
from numba import njit

from proxboost._clock import AVAILABLE as CLOCK_AVAILABLE
from proxboost._clock import monotonic
from proxboost._leafops import AUTHORS, RULE_CODES, _leaf_points, _weighted_leaf_points
from proxboost.engines import exact, hist
from proxboost.engines._threads import requested_threads

#: True: every fit runs the Python reference loop (``PROXBOOST_COMPILED_LOOP=0``; tests compare
#: both paths)
FORCE_PYTHON = os.environ.get("PROXBOOST_COMPILED_LOOP", "") == "0"

LS, LAD, PINBALL, HINGE = 0, 1, 2, 3
LOSS_CODES = {"ls": LS, "lad": LAD, "pinball": PINBALL, "hinge": HINGE}

_EMPTY = np.empty(0)


@njit(cache=True, nogil=True)
def _now():
    """Seconds of ``CLOCK_MONOTONIC`` (``time.perf_counter``'s clock)."""
    return monotonic()


#: What an iteration does (scalars): the loss (``LOSS_CODES``), its level, the algorithm's
#: switches, the step lambda, the shrinkage nu, the tie rule (``_leafops.RULE_CODES``), and the
#: early-stopping tolerance.
Spec = namedtuple(
    "Spec", ["loss", "tau", "proximal", "residual", "accelerated", "step", "nu", "rule", "tol"]
)

#: A set of rows following the recursion: prepared features (for ``apply``; unused for the
#: training rows), targets, weights as ``Loss.value`` scales them (empty: unit) and their sum
#: (the row count without weights), F_t and H_t (updated in place), and whether its loss is
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
# NumPy's reductions, operation for operation
# ---------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _block_sum(a, lo, n):
    """NumPy's ``pairwise_sum`` of a[lo:lo+n] for n <= 128: 8 accumulators, then the rest."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    stop = n - n % 8
    while i < stop:
        j = lo + i
        r0 += a[j]
        r1 += a[j + 1]
        r2 += a[j + 2]
        r3 += a[j + 3]
        r4 += a[j + 4]
        r5 += a[j + 5]
        r6 += a[j + 6]
        r7 += a[j + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for j in range(lo + i, lo + n):
        res += a[j]
    return res


@njit(cache=True, nogil=True)
def pairwise_sum(a):
    """``np.sum(a)`` of a contiguous float64 vector, bit for bit: NumPy's recursion (halves cut
    at a multiple of 8 down to blocks of 128, left sum + right sum), with an explicit stack
    (numba's cache cannot load a recursive kernel)."""
    n = a.shape[0]
    if n <= 128:
        return _block_sum(a, 0, n)
    lo = np.empty(64, np.int64)  # pending ranges, and how far each is (0: new, 1: left done)
    size = np.empty(64, np.int64)
    phase = np.empty(64, np.int64)
    sums = np.empty(64)
    lo[0], size[0], phase[0] = 0, n, 0
    top = 1
    n_sums = 0
    while top > 0:
        k = top - 1
        m = size[k]
        if m <= 128:
            sums[n_sums] = _block_sum(a, lo[k], m)
            n_sums += 1
            top -= 1
            continue
        half = m // 2
        half -= half % 8
        if phase[k] < 2:  # push the left half, then the right half
            right = phase[k] == 1
            lo[top] = lo[k] + half if right else lo[k]
            size[top] = m - half if right else half
            phase[top] = 0
            phase[k] += 1
            top += 1
        else:
            sums[n_sums - 2] = sums[n_sums - 2] + sums[n_sums - 1]
            n_sums -= 1
            top -= 1
    return sums[0]


@njit(cache=True, nogil=True)
def leaf_means(values, leaf_ids, n_leaves, w):
    """``losses.leaf_means`` (``w`` empty: unweighted): bincount's row-order sums, then the
    division where the leaf has weight."""
    counts = np.zeros(n_leaves)
    sums = np.zeros(n_leaves)
    weighted = w.shape[0] > 0
    for i in range(values.shape[0]):
        leaf = leaf_ids[i]
        if weighted:
            counts[leaf] += w[i]
            sums[leaf] += w[i] * values[i]
        else:
            counts[leaf] += 1.0  # exact: integer counts, as bincount's
            sums[leaf] += values[i]
    out = np.zeros(n_leaves)
    for k in range(n_leaves):
        if counts[k] > 0:
            out[k] = sums[k] / counts[k]
    return out


# ---------------------------------------------------------------------------------------------
# The losses (``proxboost.losses``), elementwise as their NumPy expressions
# ---------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _pointwise(spec, y, z):
    u = y - z
    if spec.loss == LS:
        return 0.5 * (u * u)  # NumPy's u ** 2 is u * u
    if spec.loss == LAD:
        return abs(u)
    if spec.loss == PINBALL:
        a = spec.tau * u
        b = (spec.tau - 1.0) * u
        return a if a >= b else b
    m = 1.0 - y * z
    return 0.0 if 0.0 >= m else m


@njit(cache=True, nogil=True)
def _gradient(spec, y, z):
    """``negative_gradient`` of one row."""
    if spec.loss == LS:
        return y - z
    if spec.loss == LAD:
        u = y - z
        return 1.0 if u > 0 else (-1.0 if u < 0 else 0.0)
    if spec.loss == PINBALL:
        u = y - z
        return spec.tau if u > 0 else (spec.tau - 1.0 if u < 0 else 0.0)
    return y if y * z < 1.0 else 0.0


@njit(cache=True, nogil=True)
def _prox(spec, y, z):
    """``prox_residual`` of one row."""
    step = spec.step
    if spec.loss == LS:
        return (y - z) / (1.0 + step)
    if spec.loss == LAD:
        u = y - z
        au = abs(u)
        return u / (step if step >= au else au)
    if spec.loss == PINBALL:
        u = y - z
        tau = spec.tau
        return tau if u > step * tau else (tau - 1.0 if u < step * (tau - 1.0) else u / step)
    m = y * z
    return y if m < 1.0 - step else (0.0 if m > 1.0 else (y - z) / step)


@njit(cache=True, nogil=True)
def loss_value(spec, rows):
    """``Loss.value(y, F, w)`` of ``rows`` (its weights scaled beforehand, as ``value`` does)."""
    n = rows.y.shape[0]
    weighted = rows.w.shape[0] > 0
    values = np.empty(n)
    terms = np.empty(n)
    for i in range(n):
        values[i] = _pointwise(spec, rows.y[i], rows.F[i])
        terms[i] = rows.w[i] * values[i] if weighted else values[i]
    total = pairwise_sum(terms)
    if not np.isfinite(total):  # the rescaled sum of ``Loss.value``
        top = values.max()
        for i in range(n):
            scaled = values[i] / top
            terms[i] = rows.w[i] * scaled if weighted else scaled
        return top * (pairwise_sum(terms) / rows.count)
    return total / rows.count


@njit(cache=True, nogil=True)
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
@njit(cache=True, nogil=True)
def _target(spec, fitted, delta):
    """The tree's target: the direction r_t at H_t, plus Delta_t for the residual variants."""
    n = fitted.y.shape[0]
    target = np.empty(n)
    for i in range(n):
        y, z = fitted.y[i], fitted.H[i]
        r = _prox(spec, y, z) if spec.proximal else _gradient(spec, y, z)
        target[i] = r + delta[i] if spec.residual else r
    return target


@njit(cache=True, nogil=True)
def _update(spec, fitted, delta, step, alpha):
    """F_{t+1} = H_t + c[leaf], Delta_{t+1} = target - fit[leaf], Nesterov's H_{t+1} (the
    training rows; ``step``: (target, leaf ids, leaf values c, least-squares fit))."""
    target, leaf_ids, c, fit = step
    F, H = fitted.F, fitted.H
    for i in range(F.shape[0]):
        leaf = leaf_ids[i]
        f_next = H[i] + c[leaf]
        if spec.residual:
            delta[i] = target[i] - fit[leaf]
        H[i] = f_next + alpha * (f_next - F[i]) if spec.accelerated else f_next
        F[i] = f_next


@njit(cache=True, nogil=True)
def _replay(rows, leaf_ids, c, alpha):
    """``_Replay.update`` of rows outside the fit (H skips the Nesterov term when alpha = 0)."""
    F, H = rows.F, rows.H
    for i in range(F.shape[0]):
        f_next = H[i] + c[leaf_ids[i]]
        H[i] = f_next + alpha * (f_next - F[i]) if alpha else f_next
        F[i] = f_next


@njit(cache=True, nogil=True)
def _leaf_values(spec, fitted, leaf_ids, n_leaves, target):
    """(least-squares fit, shrunk line-searched leaf values c): ``_leaf_values`` of the
    boosting loop (a leaf whose fitted value is exactly 0 keeps 0)."""
    w = fitted.tree_w
    fit = leaf_means(target, leaf_ids, n_leaves, w)
    found = _line_search(spec, fitted.y, fitted.H, leaf_ids, n_leaves, w, fit)
    c = np.empty(n_leaves)
    for k in range(n_leaves):
        c[k] = spec.nu * (0.0 if fit[k] == 0.0 else found[k])
    return fit, c


@njit(cache=True, nogil=True)
def _store(out, k, nodes, c):
    """Append tree k's node arrays and leaf values to ``out``."""
    start = out.node_end[k - 1] if k > 0 else 0
    m = nodes[0].shape[0]
    stop = start + m
    out.nodes[0][start:stop] = nodes[0]
    out.nodes[1][start:stop] = nodes[1]
    out.nodes[2][start:stop] = nodes[2]
    out.nodes[3][start:stop] = nodes[3]
    out.nodes[4][start:stop] = nodes[4]
    out.nodes[5][start:stop] = nodes[5]
    out.nodes[6][start:stop] = nodes[6]
    out.nodes[7][start:stop] = nodes[7]
    out.node_end[k] = start + m
    lstart = out.leaf_end[k - 1] if k > 0 else 0
    out.leaf_values[lstart : lstart + c.shape[0]] = c
    out.leaf_end[k] = lstart + c.shape[0]


@njit(cache=True, nogil=True)
def _record(spec, fitted, replays, out, k):
    """The curves of iteration k: training, eval and validation losses."""
    out.train[k] = loss_value(spec, fitted)
    evaluation, validation = replays[1], replays[2]
    if evaluation.record:
        out.eval[k] = loss_value(spec, evaluation)
    if validation.record:
        out.val[k] = loss_value(spec, validation)


@njit(cache=True, nogil=True)
def _stops(spec, history, value, t):
    """scikit-learn's rule: stop unless ``value`` beats one of the last values by tol."""
    better = False
    bar = value + spec.tol
    for h in history:
        better |= bar < h
    if better:
        history[t % history.shape[0]] = value
    return not better


@njit(nogil=True)
def _iterations(grow, apply, engine, spec, fitted, delta, replays, schedule, out, elapsed):
    """Iterations ``schedule.first`` .. ``schedule.last - 1`` (the module docstring) with the
    engine kernels ``grow`` and ``apply`` (``grow_in_loop``, ``apply_in_loop``): ``engine`` the
    engine's loop record; ``fitted`` the training rows (:data:`Rows`), ``delta`` the residual
    Delta_t (in place); ``replays``: (rows of weight 0, eval set, validation rows). Returns
    (iterations done, stopped early). Not cached itself (its kernels are arguments): compiled
    into each engine's cached entry below."""
    done = 0
    for t in range(schedule.first, schedule.last):
        t0 = _now()
        target = _target(spec, fitted, delta)
        nodes, leaf_ids, n_leaves = grow(engine, target, schedule.seeds[t - schedule.first])
        fit, c = _leaf_values(spec, fitted, leaf_ids, n_leaves, target)
        alpha = schedule.alphas[t]
        _update(spec, fitted, delta, (target, leaf_ids, c, fit), alpha)
        idle, evaluation, validation = replays
        if idle.F.shape[0] > 0:
            _replay(idle, apply(engine, idle.Xp, nodes), c, alpha)
        elapsed += _now() - t0
        _store(out, done, nodes, c)
        out.times[done] = elapsed
        if evaluation.record:
            _replay(evaluation, apply(engine, evaluation.Xp, nodes), c, alpha)
        if validation.record:
            _replay(validation, apply(engine, validation.Xp, nodes), c, alpha)
        _record(spec, fitted, replays, out, done)
        done += 1
        if validation.record and _stops(spec, schedule.history, out.val[done - 1], t):
            return done, True
    return done, False


# One cached entry per engine: numba's cache cannot keep a function whose arguments are kernels
# (their type is the dispatcher itself), but it keeps one that calls them by name.
@njit(cache=True, nogil=True)
def _run_exact(engine, spec, fitted, delta, replays, schedule, out, elapsed):
    """:func:`_iterations` of the exact engine."""
    return _iterations(
        exact.grow_in_loop,
        exact.apply_in_loop,
        engine,
        spec,
        fitted,
        delta,
        replays,
        schedule,
        out,
        elapsed,
    )


@njit(cache=True, nogil=True)
def _run_hist(engine, spec, fitted, delta, replays, schedule, out, elapsed):
    """:func:`_iterations` of the hist engine."""
    return _iterations(
        hist.grow_in_loop,
        hist.apply_in_loop,
        engine,
        spec,
        fitted,
        delta,
        replays,
        schedule,
        out,
        elapsed,
    )


#: The compiled loop of each engine that has one
RUNS = {"exact": _run_exact, "hist": _run_hist}


#: Which iterations to run: the first and the end, the seeds of their trees (exact engine),
#: Nesterov's alphas (indexed by t) and the early-stopping history (updated in place).
Schedule = namedtuple("Schedule", ["first", "last", "seeds", "alphas", "history"])


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
        and requested_threads(estimator.n_jobs) == 1  # the compiled loop grows on one thread
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


def _replay_rows(tracker, empty_Xp, record):
    """The :data:`Rows` of a replay (``_Replay`` / ``_EvalTracker``; None: an empty one)."""
    if tracker is None:
        return Rows(empty_Xp, _EMPTY, _EMPTY, 1.0, _EMPTY.copy(), _EMPTY.copy(), False, _EMPTY)
    if not record:
        F, H = tracker.F.copy(), tracker.H.copy()
        return Rows(tracker.Xp, _EMPTY, _EMPTY, 1.0, F, H, False, _EMPTY)
    return _rows(tracker.Xp, tracker.y, tracker.w, tracker.F, tracker.H)


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


def _seeds(fit, n_iter):
    """The exact engine's tree seeds (drawn from a copy of the fit's ``RandomState``; the
    state itself advances by the trees grown, after the loop); zeros for ``hist``."""
    if fit.engine.name != "exact":
        return np.zeros(n_iter, np.int64)
    rng = np.random.RandomState()
    rng.set_state(fit.state.rng.get_state())
    return rng.randint(0, RAND_R_MAX, size=n_iter).astype(np.int64)


def boost(estimator, fit):
    """Run the iterations of ``fit`` compiled, leaving ``fit.state`` and the replays as the
    Python loop leaves them."""
    state = fit.state
    first = len(state.trees)
    last = fit.T if not state.stopped else first
    if last <= first:
        return
    _, _, record, max_nodes = fit.engine.compiled(fit.Xp, estimator.max_depth, fit.w)
    idle, ev, val = fit.replays
    p = fit.Xp.shape[1]
    empty = np.empty((0, p), np.uint8 if fit.engine.name == "hist" else np.float32)
    fitted = _rows(empty, fit.y, fit.w, state.F, state.H)
    replays = tuple(
        _replay_rows(tracker, empty, recorded)
        for tracker, recorded in zip(fit.replays, (False, True, True), strict=True)
    )
    history = state.history if state.history is not None else np.zeros(1)
    schedule = Schedule(first, last, _seeds(fit, last - first), fit.alphas, history)
    out = _outputs(last - first, max_nodes)
    delta = np.array(state.delta, dtype=np.float64)
    run = RUNS[fit.engine.name]
    args = (_spec(estimator, fit), fitted, delta, replays, schedule, out, float(state.elapsed))
    done, stopped = run(record, *args)
    if fit.engine.name == "exact":  # the trees' draws, as one randint per tree
        state.rng.randint(0, RAND_R_MAX, size=done)
    _collect(fit, out, done, stopped)
    state.F, state.H, state.delta = fitted.F, fitted.H, delta
    for tracker, rows in zip((idle, ev, val), replays, strict=True):
        if tracker is not None:
            tracker.F, tracker.H = rows.F, rows.H
    if ev is not None:
        ev.losses.extend(out.eval[:done].tolist())
    if val is not None:
        val.losses.extend(out.val[:done].tolist())


def _collect(fit, out, done, stopped):
    """The trees, leaf values, curves and times of the ``done`` iterations into the state.

    One Python object per tree is unavoidable (``estimators_`` is a list of trees): each gets
    views of one copy of the loop's outputs, cut with plain int boundaries (``tolist``), the
    cheapest slicing NumPy offers; this was a fifth of a small fit's time."""
    state = fit.state
    if done == 0:
        return
    ends = out.node_end[:done].tolist()
    leaf_ends = out.leaf_end[:done].tolist()
    nodes = tuple(a[: ends[-1]].copy() for a in out.nodes)
    leaves = out.leaf_values[: leaf_ends[-1]].copy()
    make_tree = fit.engine.tree
    start, leaf_start = 0, 0
    trees, leaf_values = [], []
    for stop, leaf_stop in zip(ends, leaf_ends, strict=True):
        trees.append(make_tree(tuple([a[start:stop] for a in nodes]), leaf_stop - leaf_start))
        leaf_values.append(leaves[leaf_start:leaf_stop])
        start, leaf_start = stop, leaf_stop
    state.trees.extend(trees)
    state.leaf_values.extend(leaf_values)
    state.train_loss.extend(out.train[:done].tolist())
    state.times.extend(out.times[:done].tolist())
    state.elapsed = float(out.times[done - 1])
    state.stopped = stopped
