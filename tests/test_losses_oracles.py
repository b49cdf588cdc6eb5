"""The oracle suite every loss with an exact leaf line search passes, built-in or registered.

Each check takes a case ``(name, loss, ell)``: a loss object and its formula ``ell(y, z)`` per
row, written independently of the loss's code. The oracles know nothing else of the loss: the
formula, finite differences of it, ``scipy.optimize.minimize_scalar`` on the proximal objective
and on each leaf's objective, and the convexity of those objectives (a local minimum, checked a
little to either side, is the minimum). :data:`ORACLE_CHECKS` runs here over the built-in losses
(``ls``, ``lad``, ``pinball`` at several levels, ``hinge``; the Newton line searches of the
margin losses take one step, not the minimiser: ``tests/test_losses.py`` checks them) and in
``tests/test_extending.py`` over the example loss of ``docs/extending.md``, as over any loss a
user registers.
"""

import zlib

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from proxboost.losses import make_loss

LAMBDAS = [1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0, 1000.0]
LEAF_SIZES = [1, 2, 3, 4, 5, 7, 10, 20, 40]


def _rng(name, *args):
    return np.random.default_rng(zlib.crc32(repr((name, *args)).encode()))


def _data(loss, rng, n):
    """Targets of the loss's task and predictions around them."""
    if loss.task == "classification":
        return rng.choice([-1.0, 1.0], size=n), rng.normal(0.0, 2.0, size=n)
    return rng.normal(1.0, 3.0, size=n), rng.normal(0.0, 2.0, size=n)


def _minimum(obj, lo, hi, xatol=1e-12):
    res = minimize_scalar(obj, bounds=(lo, hi), method="bounded", options={"xatol": xatol})
    return float(res.fun), float(res.x)


def _leaf_minimiser_check(obj, c, span, tol):
    """``c`` minimises the convex ``obj``: no worse than scipy's minimum on a wide bracket, and
    no worse than the points a little to either side."""
    fmin, _ = _minimum(obj, c - span, c + span)
    assert obj(c) <= fmin + tol, (c, obj(c), fmin)
    for d in (1e-6 * span, 1e-3 * span):
        assert obj(c) <= min(obj(c - d), obj(c + d)) + tol, (c, d)


# ---------------------------------------------------------------------------------------------
# The checks (each: a case -> None, assertions inside)
# ---------------------------------------------------------------------------------------------
def check_value(case):
    """``value``: the (weighted) mean of the formula."""
    name, loss, ell = case
    rng = _rng(name, "value")
    y, z = _data(loss, rng, 50)
    w = rng.uniform(0.0, 3.0, size=50)
    np.testing.assert_allclose(loss.value(y, z), np.mean(ell(y, z)), rtol=1e-12)
    np.testing.assert_allclose(loss.value(y, z, w), np.average(ell(y, z), weights=w), rtol=1e-12)


def check_negative_gradient(case):
    """Central finite differences of the formula, where the formula is differentiable (rows whose
    one-sided differences disagree sit at a kink and are left out)."""
    name, loss, ell = case
    y, z = _data(loss, _rng(name, "gradient"), 200)
    h = 1e-6
    right = (ell(y, z + h) - ell(y, z)) / h
    left = (ell(y, z) - ell(y, z - h)) / h
    smooth = np.abs(right - left) <= 1e-4 * (1.0 + np.abs(right))
    assert smooth.sum() >= 150
    fd = -(ell(y, z + h) - ell(y, z - h)) / (2 * h)
    g = loss.negative_gradient(y, z)
    assert g.shape == y.shape
    np.testing.assert_allclose(g[smooth], fd[smooth], rtol=1e-5, atol=1e-6)


def check_prox(case):
    """The proximal point p = z + lambda r minimises lambda l(y, p) + (p - z)^2 / 2 (1-strongly
    convex: p is pinned down) for lambda from 1e-3 to 1e3, a scalar step and one per row."""
    name, loss, ell = case
    rng = _rng(name, "prox")
    for lam in LAMBDAS:
        y, z = _data(loss, rng, 30)
        r = loss.prox_residual(y, z, lam)
        assert r.shape == y.shape and np.all(np.isfinite(r))
        p = z + lam * r
        for yi, zi, pi in zip(y, z, p):

            def F(q, yi=yi, zi=zi, lam=lam):
                return lam * float(ell(np.array([yi]), np.array([q]))[0]) + 0.5 * (q - zi) ** 2

            scale = abs(yi) + abs(zi) + 1.0
            span = scale + lam * (1.0 + abs(yi))
            fmin, x = _minimum(F, zi - span, zi + span, xatol=1e-12 * span)
            assert F(pi) <= fmin + 1e-10 * scale**2 * (1.0 + lam), (lam, yi, zi, pi, x)
            assert abs(pi - x) <= 1e-5 * span, (lam, yi, zi, pi, x)
    y, z = _data(loss, rng, 30)
    steps = rng.uniform(0.1, 10.0, size=30)
    per_row = loss.prox_residual(y, z, steps)
    one_by_one = [loss.prox_residual(y[i : i + 1], z[i : i + 1], steps[i])[0] for i in range(30)]
    np.testing.assert_allclose(per_row, one_by_one, rtol=1e-12, atol=1e-15)


def _leaves(loss, rng, n_empty=2):
    sizes = LEAF_SIZES * 2
    leaf_ids = rng.permutation(np.repeat(np.arange(len(sizes)), sizes))
    y, z = _data(loss, rng, len(leaf_ids))
    return y, z, leaf_ids, len(sizes) + n_empty


def check_line_search(case):
    """Each leaf's value minimises its (weighted) objective; an empty leaf gets 0; a weighted row
    counts as that many rows."""
    name, loss, ell = case
    rng = _rng(name, "line search")
    y, z, leaf_ids, n_leaves = _leaves(loss, rng)
    for w in (None, rng.uniform(0.0, 3.0, size=len(y)) * (rng.random(len(y)) > 0.2)):
        c = loss.line_search(y, z, leaf_ids, n_leaves, w)
        assert c.shape == (n_leaves,)
        for leaf in range(n_leaves):
            rows = leaf_ids == leaf
            if w is not None:
                rows &= w > 0
            if not rows.any():
                if not (leaf_ids == leaf).any():
                    assert c[leaf] == 0.0
                continue
            wl = np.ones(rows.sum()) if w is None else w[rows]
            yl, zl = y[rows], z[rows]

            def obj(v, yl=yl, zl=zl, wl=wl):
                return float(np.sum(wl * ell(yl, zl + v)))

            span = 10.0 + np.max(np.abs(yl - zl))
            _leaf_minimiser_check(obj, c[leaf], span, 1e-9 * (1.0 + obj(c[leaf])))
    # integer weights: the rows repeated
    counts = rng.integers(1, 4, size=len(y))
    c_w = loss.line_search(y, z, leaf_ids, n_leaves, counts.astype(float))
    rep = np.repeat(np.arange(len(y)), counts)
    c_rep = loss.line_search(y[rep], z[rep], leaf_ids[rep], n_leaves)
    np.testing.assert_allclose(c_w, c_rep, rtol=1e-9, atol=1e-12)


def check_init(case):
    """f_0 minimises the formula summed over the sample (weighted too)."""
    name, loss, ell = case
    rng = _rng(name, "init")
    for n in (1, 2, 5, 37):
        y, _ = _data(loss, rng, n)
        if loss.task == "classification":
            y[0], y[-1] = 1.0, -1.0  # both classes: a finite minimiser
        for w in (None, rng.uniform(0.5, 2.0, size=n)):
            f0 = loss.init(y, w)
            wl = np.ones(n) if w is None else w

            def obj(v, y=y, wl=wl):
                return float(np.sum(wl * ell(y, np.full(len(y), v))))

            span = 10.0 + np.max(np.abs(y))
            _leaf_minimiser_check(obj, f0, span, 1e-9 * (1.0 + obj(f0)))


def check_bounded_line_search(case):
    """Under per-leaf bounds: each leaf's value lies in its bounds and minimises its objective
    there; infinite bounds give the line search's values."""
    name, loss, ell = case
    rng = _rng(name, "bounded")
    y, z, leaf_ids, n_leaves = _leaves(loss, rng, n_empty=0)
    free = loss.line_search(y, z, leaf_ids, n_leaves)
    inf = np.full(n_leaves, np.inf)
    np.testing.assert_array_equal(
        loss.bounded_line_search(y, z, leaf_ids, n_leaves, (-inf, inf)), free
    )
    lower = free + rng.uniform(-1.0, 1.0, size=n_leaves)
    upper = lower + rng.uniform(0.0, 1.0, size=n_leaves)
    c = loss.bounded_line_search(y, z, leaf_ids, n_leaves, (lower, upper))
    assert np.all((lower <= c) & (c <= upper))
    for leaf in range(n_leaves):
        rows = leaf_ids == leaf

        def obj(v, yl=y[rows], zl=z[rows]):
            return float(np.sum(ell(yl, zl + v)))

        fmin, _ = _minimum(obj, lower[leaf], upper[leaf])
        edges = min(obj(lower[leaf]), obj(upper[leaf]))
        assert obj(c[leaf]) <= min(fmin, edges) + 1e-9 * (1.0 + abs(fmin)), leaf


def check_finite_at_extremes(case):
    """No inf or NaN for targets and predictions up to 1e6 in magnitude."""
    name, loss, ell = case
    z = np.array([-1e6, -1e4, -800.0, 0.0, 800.0, 1e4, 1e6] * 2)
    if loss.task == "classification":
        y = np.repeat([1.0, -1.0], 7)
    else:
        y = -z[::-1]
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        assert np.isfinite(loss.value(y, z))
        assert np.all(np.isfinite(loss.negative_gradient(y, z)))
        for lam in (1e-3, 1.0, 1e3):
            assert np.all(np.isfinite(loss.prox_residual(y, z, lam)))
        assert np.all(np.isfinite(loss.line_search(y, z, np.arange(len(y)) % 3, 4)))
        assert np.isfinite(loss.init(y))


#: The suite, in order: what every loss with an exact line search passes
ORACLE_CHECKS = [
    check_value,
    check_negative_gradient,
    check_prox,
    check_line_search,
    check_init,
    check_bounded_line_search,
    check_finite_at_extremes,
]


# ---------------------------------------------------------------------------------------------
# The built-in losses, their formulas written again (docs/method.md)
# ---------------------------------------------------------------------------------------------
def _pinball(tau):
    return lambda y, z: np.where(y - z >= 0, tau * (y - z), (tau - 1.0) * (y - z))


BUILTIN_CASES = [
    ("ls", make_loss("ls"), lambda y, z: 0.5 * (y - z) ** 2),
    ("lad", make_loss("lad"), lambda y, z: np.abs(y - z)),
    *[(f"pinball-{t}", make_loss("pinball", tau=t), _pinball(t)) for t in (0.1, 0.25, 0.9)],
    ("hinge", make_loss("hinge"), lambda y, z: np.maximum(0.0, 1.0 - y * z)),
]


@pytest.mark.parametrize("check", ORACLE_CHECKS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("case", BUILTIN_CASES, ids=lambda c: c[0])
def test_builtin_losses_pass_the_oracle_suite(case, check):
    check(case)
