"""The compiled boosting loop's passes over the rows, on one thread and on several.

:mod:`proxboost._compiled_loop` runs every iteration of a fit compiled; this module holds what it
does row by row: the tree's target (the direction r_t, plus Delta_t), the update of F_t, H_t and
Delta_t, the replay of the recursion on rows outside the fit (rows of weight 0, eval and
validation rows), and the recorded losses (``Loss.value``). Each is the Python loop's NumPy
expression, operation for operation, computed one row at a time by a kernel of numbers
(``_direction``, ``_next``, ``_loss_term``) that both variants call: the one-thread pass loops
over the rows with ``range``, the ``*_par`` pass (``n_jobs`` > 1) with ``numba.prange``, so every
row gets the same number on any thread count.

Sums keep NumPy's order: ``np.sum`` adds pairwise (NumPy's ``pairwise_sum``: blocks of up to 128
values over 8 accumulators, halves cut at multiples of 8), as :func:`pairwise_sum` does;
:func:`pairwise_sum_par` sums the two top-level halves of that recursion on two threads and adds
them as NumPy does (left + right: the same number, ``tests/test_compiled_loop.py``).

The compiled loop's entries reach these kernels as attributes of this module (``passes.target``):
numba caches a function that calls kernels so named, not one that names them as plain globals
(a first-class function value).

The one-thread passes are compiled without reference counting (the engines' ``kernel``): they
write into arrays the loop made once per fit and return numbers or nothing, and the loop that
calls them is compiled the same way, so an iteration takes no array out of a record with an atomic
operation (about a fifth of a small fit's time when it did, ``docs/engines.md``).
"""

import numpy as np
from numba import njit, prange

from proxboost.engines._nodes import kernel

LS, LAD, PINBALL, HINGE = 0, 1, 2, 3
LOSS_CODES = {"ls": LS, "lad": LAD, "pinball": PINBALL, "hinge": HINGE}


# ---------------------------------------------------------------------------------------------
# NumPy's reductions, operation for operation
# ---------------------------------------------------------------------------------------------
@njit(error_model="numpy", cache=True, nogil=True)
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


# allocates: reference counting even under a kernel
@njit(error_model="numpy", cache=True, nogil=True, _nrt=True)
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


@njit(error_model="numpy", cache=True, nogil=True, parallel=True)
def pairwise_sum_par(a):
    """:func:`pairwise_sum` with its two top-level halves summed on two threads: NumPy's
    recursion adds the left half's sum to the right half's (the cut at a multiple of 8), and
    each half's sum depends on its values only, so the same number bit for bit."""
    n = a.shape[0]
    if n <= 128:  # one block: NumPy does not cut it
        return _block_sum(a, 0, n)
    half = n // 2
    half -= half % 8
    sums = np.empty(2)
    for h in prange(2):
        sums[h] = pairwise_sum(a[:half]) if h == 0 else pairwise_sum(a[half:])
    return sums[0] + sums[1]


# ---------------------------------------------------------------------------------------------
# The losses (``proxboost.losses``), elementwise as their NumPy expressions
# ---------------------------------------------------------------------------------------------
@njit(error_model="numpy", cache=True, nogil=True)
def _pointwise(spec, y, z):
    """The pointwise loss of one row (``Loss.value`` before its mean)."""
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


@njit(error_model="numpy", cache=True, nogil=True)
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


@njit(error_model="numpy", cache=True, nogil=True)
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


@njit(error_model="numpy", cache=True, nogil=True)
def _loss_term(spec, y, f, w, weighted):
    """One row's loss and its weighted term (the loss itself without weights)."""
    value = _pointwise(spec, y, f)
    return value, (w * value if weighted else value)


@njit(error_model="numpy", cache=True, nogil=True)
def _rescaled(rows, values, terms):
    """The rescaled sum of ``Loss.value`` when the plain one overflows (rare: on one thread
    even in the parallel loop)."""
    top = values.max()
    weighted = rows.w.shape[0] > 0
    for i in range(values.shape[0]):
        scaled = values[i] / top
        terms[i] = rows.w[i] * scaled if weighted else scaled
    return top * (pairwise_sum(terms) / rows.count)


@njit(error_model="numpy", cache=True, nogil=True)
def loss_value(spec, rows):
    """``Loss.value(y, F, w)`` of ``rows`` (its weights scaled beforehand, as ``value`` does)."""
    return loss_value_in(spec, rows, np.empty(rows.y.shape[0]))


@kernel
def loss_value_in(spec, rows, terms):
    """:func:`loss_value` with its terms in ``terms`` (at least as long as the rows)."""
    y, F, w = rows.y, rows.F, rows.w
    n = y.shape[0]
    weighted = w.shape[0] > 0
    for i in range(n):
        _, terms[i] = _loss_term(spec, y[i], F[i], w[i] if weighted else 1.0, weighted)
    total = pairwise_sum(terms[:n])
    if not np.isfinite(total):
        return _rescaled_value(spec, rows, terms[:n])
    return total / rows.count


# allocates: reference counting even under a kernel
@njit(error_model="numpy", cache=True, nogil=True, _nrt=True)
def _rescaled_value(spec, rows, terms):
    """:func:`_rescaled` of the rows' losses (their array allocated and freed here, not in the
    kernel calling it)."""
    return _rescaled(rows, _values(spec, rows), terms)


@njit(error_model="numpy", cache=True, nogil=True)
def _values(spec, rows):
    """The rows' unweighted losses, for :func:`_rescaled` only: computed again where a sum
    overflowed (rare) rather than stored for every sum, the same numbers (one expression)."""
    y, F = rows.y, rows.F
    values = np.empty(y.shape[0])
    for i in range(y.shape[0]):
        values[i] = _pointwise(spec, y[i], F[i])
    return values


@njit(error_model="numpy", cache=True, nogil=True, parallel=True)
def loss_value_par(spec, rows):
    """:func:`loss_value` with the rows' terms computed by several threads (each by the same
    expression) and their sum's two halves on two (:func:`pairwise_sum_par`)."""
    y, F, w = rows.y, rows.F, rows.w
    n = y.shape[0]
    weighted = w.shape[0] > 0
    terms = np.empty(n)
    for i in prange(n):
        _, terms[i] = _loss_term(spec, y[i], F[i], w[i] if weighted else 1.0, weighted)
    total = pairwise_sum_par(terms)
    if not np.isfinite(total):
        return _rescaled(rows, _values(spec, rows), terms)
    return total / rows.count


# ---------------------------------------------------------------------------------------------
# The passes of one iteration over the rows (``spec``, ``Rows``: ``_compiled_loop``'s records)
# ---------------------------------------------------------------------------------------------
@njit(error_model="numpy", cache=True, nogil=True)
def _direction(spec, y, z, d):
    """One row of the tree's target: the direction r_t at H_t = z, plus Delta_t = d for the
    residual variants."""
    r = _prox(spec, y, z) if spec.proximal else _gradient(spec, y, z)
    return r + d if spec.residual else r


@kernel
def target(spec, fitted, delta, out, residuals):
    """The tree's target (:func:`_direction` of every row) into ``out``, and y - H_t into
    ``residuals`` when it has rows: the values of the leaves' line search, which H_t is still
    when it runs (computed here, where y and H_t are read anyway, rather than in a pass of
    their own)."""
    y, H = fitted.y, fitted.H
    if residuals.shape[0] > 0:
        for i in range(y.shape[0]):
            out[i] = _direction(spec, y[i], H[i], delta[i])
            residuals[i] = y[i] - H[i]
    else:
        for i in range(y.shape[0]):
            out[i] = _direction(spec, y[i], H[i], delta[i])


@njit(error_model="numpy", cache=True, nogil=True, parallel=True)
def target_par(spec, fitted, delta, out, residuals):
    """:func:`target` with the rows shared between threads."""
    y, H = fitted.y, fitted.H
    if residuals.shape[0] > 0:
        for i in prange(y.shape[0]):
            out[i] = _direction(spec, y[i], H[i], delta[i])
            residuals[i] = y[i] - H[i]
    else:
        for i in prange(y.shape[0]):
            out[i] = _direction(spec, y[i], H[i], delta[i])


@njit(error_model="numpy", cache=True, nogil=True)
def _next(h, f, c, alpha, momentum):
    """One row's (F_{t+1}, H_{t+1}) = (H_t + c, F_{t+1} + alpha (F_{t+1} - F_t)), the
    Nesterov term only with ``momentum`` (``h``, ``f``: H_t, F_t; ``c``: its leaf's value)."""
    f_next = h + c
    return f_next, (f_next + alpha * (f_next - f) if momentum else f_next)


# The passes below take their arrays out of the records before the loop, and their per-row
# kernels take numbers: a kernel taking a record and a row index cost 1.5-2x the whole fit at
# depth 1 (the records' arrays are reference-counted at every call, row after row).
@kernel
def update(spec, fitted, delta, step, alpha):
    """F_{t+1} = H_t + c[leaf], Delta_{t+1} = target - fit[leaf], Nesterov's H_{t+1} of every
    training row (``step``: (target, leaf ids, leaf values c, least-squares fit))."""
    target, leaf_ids, c, fit = step
    F, H = fitted.F, fitted.H
    for i in range(F.shape[0]):
        leaf = leaf_ids[i]
        if spec.residual:
            delta[i] = target[i] - fit[leaf]
        F[i], H[i] = _next(H[i], F[i], c[leaf], alpha, spec.accelerated)


@njit(error_model="numpy", cache=True, nogil=True, parallel=True)
def update_par(spec, fitted, delta, step, alpha):
    """:func:`update` with the rows shared between threads."""
    target, leaf_ids, c, fit = step
    F, H = fitted.F, fitted.H
    for i in prange(F.shape[0]):
        leaf = leaf_ids[i]
        if spec.residual:
            delta[i] = target[i] - fit[leaf]
        F[i], H[i] = _next(H[i], F[i], c[leaf], alpha, spec.accelerated)


@kernel
def replay(rows, leaf_ids, c, alpha):
    """``_Replay.update`` of rows outside the fit (H skips the Nesterov term when alpha = 0)."""
    F, H = rows.F, rows.H
    for i in range(F.shape[0]):
        F[i], H[i] = _next(H[i], F[i], c[leaf_ids[i]], alpha, alpha != 0)


@njit(error_model="numpy", cache=True, nogil=True, parallel=True)
def replay_par(rows, leaf_ids, c, alpha):
    """:func:`replay` with the rows shared between threads."""
    F, H = rows.F, rows.H
    for i in prange(F.shape[0]):
        F[i], H[i] = _next(H[i], F[i], c[leaf_ids[i]], alpha, alpha != 0)


@kernel
def record(spec, fitted, replays, out, k, terms):
    """The curves of iteration k: training, eval and validation losses (``terms``: scratch for
    the longest of their rows)."""
    out.train[k] = loss_value_in(spec, fitted, terms)
    evaluation, validation = replays[1], replays[2]
    if evaluation.record:
        out.eval[k] = loss_value_in(spec, evaluation, terms)
    if validation.record:
        out.val[k] = loss_value_in(spec, validation, terms)


# allocates: reference counting even under a kernel
@njit(error_model="numpy", cache=True, nogil=True, _nrt=True)
def record_par(spec, fitted, replays, out, k, terms):
    """:func:`record` with :func:`loss_value_par` (``terms`` unused: each sum on threads makes
    its own)."""
    out.train[k] = loss_value_par(spec, fitted)
    evaluation, validation = replays[1], replays[2]
    if evaluation.record:
        out.eval[k] = loss_value_par(spec, evaluation)
    if validation.record:
        out.val[k] = loss_value_par(spec, validation)
