"""Tests of the six losses against independent oracles.

Every expected value here is recomputed from the mathematical definition of the loss — the
losses' formulas are re-implemented in this file (``_ell``), proximal points come from
``scipy.optimize`` (``brentq`` on the optimality condition, ``minimize_scalar`` on the proximal
objective), line searches of the piecewise-linear losses from a brute-force evaluation of the
leaf objective on every breakpoint, midpoint and far point, and Newton line searches from
finite-difference derivatives of the leaf objective. Nothing is copied from the implementation.

Conventions checked: ``step`` (lambda) is the per-sample proximal step; the tie
rule (docs/method.md); the Newton guards; the overflow policy (exponents clipped at +-700).
"""

import tracemalloc
import zlib

import numpy as np
import pytest
from scipy.optimize import brentq, minimize_scalar

from proxboost import losses
from proxboost.losses import PARAMETER_RULES, Exponential, Logistic, Pinball, make_loss

LAMBDAS = [10.0**k for k in range(-3, 4)]
TAUS = [0.1, 0.25, 0.5, 0.9]
BETAS = [0.5, 1.0, 2.0]
CLIP = 700.0
LN2 = np.log(2.0)
EPS = np.finfo(float).eps


# ---------------------------------------------------------------------------------------------
# Independent re-implementation of the losses (the oracles' building block)
# ---------------------------------------------------------------------------------------------
def _ell(name, y, z, tau=0.5, beta=1.0):
    """l(y, z) per sample, straight from the definitions in docs/method.md (exponents clipped at
    +-700).
    """
    y, z = np.asarray(y, float), np.asarray(z, float)
    u = y - z
    if name == "ls":
        return 0.5 * u**2
    if name == "lad":
        return np.abs(u)
    if name == "pinball":
        return np.where(u >= 0, tau * u, (tau - 1.0) * u)
    if name == "hinge":
        return np.maximum(0.0, 1.0 - y * z)
    if name == "exponential":
        return np.exp(np.clip(-beta * y * z, -CLIP, CLIP))
    if name == "logistic":  # log2(1 + e^a), a = -y z, written as a + log2(1 + e^-a) for a > 0
        a = np.clip(-y * z, -CLIP, CLIP)
        return np.where(a > 0, a + np.log1p(np.exp(-a)), np.log1p(np.exp(a))) / LN2
    raise ValueError(name)


def _dell_right(name, y, p, tau=0.5):
    """A subgradient selection of p -> l(y, p) (the right derivative) for the nonsmooth losses."""
    u = y - p
    if name == "ls":
        return p - y
    if name == "lad":
        return np.where(u > 0, -1.0, 1.0)  # right derivative of |y - p|
    if name == "pinball":
        return np.where(u > 0, -tau, 1.0 - tau)
    if name == "hinge":
        return np.where(y * p < 1.0, -y, 0.0) if y > 0 else np.where(y * p <= 1.0, -y, 0.0)
    raise ValueError(name)


def _seed(*args):
    """A deterministic seed from the test parameters (hash() of str is salted per process)."""
    return zlib.crc32(repr(args).encode())


def _build(name, tau=0.5, beta=1.0, newton_steps=1):
    if name == "pinball":
        return make_loss(name, tau=tau)
    if name == "exponential":
        return make_loss(name, beta=beta, newton_steps=newton_steps)
    if name == "logistic":
        return make_loss(name, newton_steps=newton_steps)
    return make_loss(name)


NONSMOOTH = [("ls", 0.5), ("lad", 0.5), ("hinge", 0.5)] + [("pinball", t) for t in TAUS]


# ---------------------------------------------------------------------------------------------
# 1. Proximal operators
# ---------------------------------------------------------------------------------------------
def _nonsmooth_inputs(name, tau, lam, rng):
    """Random (y, z) plus the edge cases for this loss and lambda."""
    if name == "hinge":
        y = rng.choice([-1.0, 1.0], size=24)
        z = y * rng.uniform(-3 * lam - 2, 3 * lam + 2, size=24)
        # edges: yz = 1, yz = 1 - lambda, and just around them
        d = 1e-10 * (1.0 + lam)  # the prox is continuous: a branch misplaced by d moves p by ~d
        edge_m = np.array(
            [1.0, 1.0 - lam, 1.0 + d, 1.0 - d, 1.0 - lam + d, 1.0 - lam - d, 1.0 - lam / 2]
        )
        ey = np.tile([1.0, -1.0], len(edge_m))
        ez = np.repeat(edge_m, 2) * ey  # y z = m  <=>  z = m y
        return np.concatenate([y, ey]), np.concatenate([z, ez])
    z = rng.normal(0.0, 3.0, size=24)
    u = rng.normal(0.0, 2.0 * lam + 1.0, size=24)
    d = 1e-10 * (1.0 + lam)  # the prox is continuous: a branch misplaced by d moves p by ~d
    edge_u = [
        0.0,
        lam,
        -lam,
        lam * tau,
        lam * (tau - 1.0),
        0.999 * lam * tau,
        1.001 * lam * (tau - 1.0),
    ]
    edge_u = np.array(edge_u)
    edge_u = np.concatenate([edge_u, edge_u[1:5] + d, edge_u[1:5] - d, [d, -d]])
    ez = rng.normal(0.0, 3.0, size=len(edge_u))
    ez[:2] = 0.0  # y - z exactly the edge value
    return np.concatenate([z + u, ez + edge_u]), np.concatenate([z, ez])


def _prox_point_brentq(name, tau, y, z, lam):
    """prox_{lam l(y,.)}(z): root of the increasing h(p) = p - z + lam * dl(p) (jump point at
    kinks).
    """
    a, b = min(z, y) - lam - 1.0, max(z, y) + lam + 1.0
    h = lambda p: p - z + lam * float(_dell_right(name, y, p, tau))  # noqa: E731
    assert h(a) < 0 < h(b)
    return brentq(h, a, b, xtol=1e-16 * (b - a), rtol=4 * EPS, maxiter=500)


@pytest.mark.parametrize("lam", LAMBDAS)
@pytest.mark.parametrize("name,tau", NONSMOOTH)
def test_prox_nonsmooth_against_brentq(name, tau, lam):
    rng = np.random.default_rng(_seed(name, tau, lam))
    y, z = _nonsmooth_inputs(name, tau, lam, rng)
    loss = _build(name, tau=tau)
    r = loss.prox_residual(y, z, lam)
    assert r.shape == y.shape and np.all(np.isfinite(r))
    p = z + lam * r
    p_orc = np.array([_prox_point_brentq(name, tau, yi, zi, lam) for yi, zi in zip(y, z)])
    scale = np.abs(z) + np.abs(y) + lam + 1.0
    np.testing.assert_array_less(np.abs(p - p_orc), 1e-12 * scale)


@pytest.mark.parametrize("lam", LAMBDAS)
@pytest.mark.parametrize("name,tau", NONSMOOTH)
def test_prox_nonsmooth_minimises_prox_objective(name, tau, lam):
    """Second oracle: minimize_scalar on lam l(y, p) + (p - z)^2 / 2; the library's p attains the
    minimum (the objective is 1-strongly convex, so this pins p down) and is close to scipy's."""
    rng = np.random.default_rng(_seed(name, tau, lam, 2))
    y, z = _nonsmooth_inputs(name, tau, lam, rng)
    p = z + lam * _build(name, tau=tau).prox_residual(y, z, lam)
    for yi, zi, pi in zip(y, z, p):

        def F(q, yi=yi, zi=zi):
            return lam * float(_ell(name, yi, q, tau)) + 0.5 * (q - zi) ** 2

        a, b = min(zi, yi) - lam - 1.0, max(zi, yi) + lam + 1.0
        res = minimize_scalar(
            F, bounds=(a, b), method="bounded", options={"xatol": 1e-12 * (b - a)}
        )
        scale = abs(zi) + abs(yi) + lam + 1.0
        assert F(pi) <= res.fun + 1e-12 * scale**2
        assert abs(pi - res.x) <= 1e-6 * scale


@pytest.mark.parametrize("lam", LAMBDAS)
@pytest.mark.parametrize("name,tau", NONSMOOTH)
def test_prox_nonsmooth_optimality_condition(name, tau, lam):
    """Subdifferential inclusion (z - p)/lam in d_p l(y, p), vectorised over many samples."""
    rng = np.random.default_rng(_seed(name, tau, lam, 3))
    y = np.concatenate([_nonsmooth_inputs(name, tau, lam, rng)[0] for _ in range(20)])
    rng = np.random.default_rng(_seed(name, tau, lam, 3))
    z = np.concatenate([_nonsmooth_inputs(name, tau, lam, rng)[1] for _ in range(20)])
    r = _build(name, tau=tau).prox_residual(y, z, lam)
    p = z + lam * r
    tol = 1e-12 * (np.abs(y) + np.abs(z) + lam + 1.0)
    rtol = tol / lam  # r = (p - z) / lam: a rounding of p is magnified by 1 / lam in r
    v = y - p  # r must lie in the subdifferential of rho(v) (a -d_p l(y, p))
    if name == "ls":
        np.testing.assert_array_less(np.abs(lam * r - lam * v), tol * (1 + lam))
        return
    if name == "hinge":
        m = y * p
        yr = y * r
        assert np.all(yr[m < 1.0 - tol] == 1.0)
        assert np.all(yr[m > 1.0 + tol] == 0.0)
        assert np.all((yr >= -rtol) & (yr <= 1.0 + rtol))
        assert np.all(np.abs(m[(yr > 0) & (yr < 1)] - 1.0) <= tol[(yr > 0) & (yr < 1)])
        return
    hi, lo = (1.0, -1.0) if name == "lad" else (tau, tau - 1.0)
    assert np.all(r[v > tol] == hi)
    assert np.all(r[v < -tol] == lo)
    assert np.all((r >= lo - rtol) & (r <= hi + rtol))
    inner = (r > lo) & (r < hi)
    assert np.all(np.abs(v[inner]) <= tol[inner])


def _log_neg_dphi(name, beta, s):
    """ln(-phi'(s)) of the margin loss phi (exponents clipped at +-700, overflow policy)."""
    if name == "exponential":
        return np.log(beta) + np.clip(-beta * s, -CLIP, CLIP)
    return -np.logaddexp(0.0, np.clip(s, -CLIP, CLIP)) - np.log(LN2)


def _kappa(name, beta, s):
    """-d/ds ln(-phi'(s)) (0 where the exponent is clipped)."""
    if name == "exponential":
        return beta if abs(beta * s) < CLIP else 0.0
    return 1.0 / (1.0 + np.exp(-np.clip(s, -CLIP, CLIP))) if abs(s) < CLIP else 0.0


def _smooth_prox_oracle(name, beta, s0, lam):
    """t = y (p - z) > 0 (the move of the margin) solving t = -lam phi'(s0 + t).

    Solved by brentq in v = ln t on the log form h(v) = v - ln(lam) - ln(-phi'(s0 + e^v)) (no
    overflow), bracketed by -lam phi'(s0 + t_hi) <= t <= t_hi = -lam phi'(s0), then polished by
    Newton steps on h. Returns ln t.
    """
    h = lambda v: v - np.log(lam) - _log_neg_dphi(name, beta, s0 + np.exp(v))  # noqa: E731
    v_hi = np.log(lam) + _log_neg_dphi(name, beta, s0)
    v_lo = np.log(lam) + _log_neg_dphi(name, beta, s0 + np.exp(v_hi))
    if h(v_hi) <= 0.0:
        return v_hi
    if h(v_lo) >= 0.0:
        return v_lo
    v = brentq(h, v_lo, v_hi, xtol=1e-15, rtol=4 * EPS, maxiter=500)
    for _ in range(3):
        dv = h(v) / (1.0 + np.exp(v) * _kappa(name, beta, s0 + np.exp(v)))
        if abs(h(v - dv)) < abs(h(v)):
            v -= dv
    return v


SMOOTH = [("exponential", b) for b in BETAS] + [("logistic", 1.0)]
MARGINS = [
    -1e4,
    -800.0,
    -300.0,
    -50.0,
    -30.0,
    -5.0,
    -1.0,
    0.0,
    1.0,
    5.0,
    30.0,
    50.0,
    300.0,
    800.0,
    1e4,
]


@pytest.mark.parametrize("lam", LAMBDAS)
@pytest.mark.parametrize("name,beta", SMOOTH)
def test_prox_smooth_against_brentq(name, beta, lam):
    """exponential / logistic prox: root of p - z - lam B(y, p) = 0 to machine precision, where
    B = beta y e^{-beta y p} (exponential) or y / (ln2 (1 + e^{y p})) (logistic), for margins
    y z from -1e4 to 1e4 (plain Newton from z diverges or crawls for large lambda / |z|)."""
    s0 = np.array(MARGINS * 2)
    y = np.repeat([1.0, -1.0], len(MARGINS))
    z = y * s0
    r = _build(name, beta=beta).prox_residual(y, z, lam)
    assert np.all(np.isfinite(r))
    yr = y * r  # = t / lam > 0, on y's side of z
    kmax = beta if name == "exponential" else 1.0
    for i in range(len(y)):
        v = _smooth_prox_oracle(name, beta, s0[i], lam)
        t_orc = np.exp(v)
        rtol = 1e-12 + 8 * EPS * kmax * max(abs(s0[i]), t_orc)
        assert abs(yr[i] - t_orc / lam) <= rtol * t_orc / lam, (s0[i], y[i], yr[i], t_orc / lam)
        # relative residual of the optimality condition, evaluated at the returned point
        t = lam * yr[i]
        resid = t - lam * np.exp(_log_neg_dphi(name, beta, s0[i] + t))
        assert abs(resid) <= rtol * t, (s0[i], y[i], resid / t)
        # the bracket: 0 < y (p - z) <= lam B(y, z)
        assert 0.0 < t <= lam * np.exp(_log_neg_dphi(name, beta, s0[i])) * (1 + rtol)


@pytest.mark.parametrize("name,beta", SMOOTH)
@pytest.mark.grid
def test_prox_smooth_dense_sweep(name, beta):
    """Optimality condition on a dense random sweep of margins and steps, vectorised.

    Includes logistic inputs where safeguarded Newton that bisects only when a step leaves the
    bracket falls into a 2-cycle inside it and stops after its iteration budget far from the root
    (e.g. y z = -2.7276115328034365, lambda = 701.367658560378: relative residual 1.4e4)."""
    rng = np.random.default_rng(_seed("sweep", name, beta))
    wide = 10.0 ** rng.uniform(-3, 6, 500)
    cycles = [-2.7276115328034365, -2.7253407068588587, -2.8880159661393634, -3.2323524613158554]
    s0 = np.concatenate([rng.uniform(-40, 40, 4000), -wide, wide, cycles])
    lams = [701.367658560378, 22.02785770397043, 13.791681624957421]
    lams = np.concatenate([10.0 ** rng.uniform(-3, 3, 12), lams])
    y = np.where(rng.random(len(s0)) < 0.5, 1.0, -1.0)
    loss = _build(name, beta=beta)
    kmax = beta if name == "exponential" else 1.0
    for lam in lams:
        r = loss.prox_residual(y, y * s0, lam)
        t = lam * y * r
        assert np.all(t > 0)
        resid = np.abs(t - lam * np.exp(_log_neg_dphi(name, beta, s0 + t))) / t
        rtol = 1e-12 + 8 * EPS * kmax * np.maximum(np.abs(s0), t)
        bad = resid > rtol
        assert not bad.any(), (lam, s0[bad][:5], resid[bad][:5])


@pytest.mark.parametrize("name,beta", SMOOTH)
def test_prox_smooth_random_and_per_sample_step(name, beta):
    """Random inputs, lambda given per sample as an array  equals scalar calls."""
    rng = np.random.default_rng(7)
    n = 60
    y = rng.choice([-1.0, 1.0], size=n)
    z = rng.normal(0, 4, size=n)
    lam = 10.0 ** rng.uniform(-3, 3, size=n)
    loss = _build(name, beta=beta)
    r = loss.prox_residual(y, z, lam)
    for i in range(n):
        t_orc = np.exp(_smooth_prox_oracle(name, beta, y[i] * z[i], lam[i]))
        assert abs(y[i] * r[i] * lam[i] - t_orc) <= 1e-12 * t_orc
        assert loss.prox_residual(y[i : i + 1], z[i : i + 1], lam[i])[0] == pytest.approx(
            r[i], rel=1e-13
        )


@pytest.mark.parametrize("name", ["ls", "lad", "pinball", "hinge"])
def test_prox_per_sample_step_array(name):
    rng = np.random.default_rng(8)
    y = rng.choice([-1.0, 1.0], size=40) if name == "hinge" else rng.normal(size=40)
    z = rng.normal(size=40)
    lam = 10.0 ** rng.uniform(-3, 3, size=40)
    loss = _build(name, tau=0.25)
    r = loss.prox_residual(y, z, lam)
    expected = [loss.prox_residual(y[i : i + 1], z[i : i + 1], lam[i])[0] for i in range(40)]
    np.testing.assert_array_equal(r, expected)


# ---------------------------------------------------------------------------------------------
# 2. Negative (sub)gradients
# ---------------------------------------------------------------------------------------------
ALL = [("ls", 0.5, 1.0), ("lad", 0.5, 1.0), ("hinge", 0.5, 1.0), ("logistic", 0.5, 1.0)]
ALL += [("pinball", t, 1.0) for t in TAUS] + [("exponential", 0.5, b) for b in BETAS]


@pytest.mark.parametrize("name,tau,beta", ALL)
def test_negative_gradient_finite_differences(name, tau, beta):
    rng = np.random.default_rng(11)
    n = 200
    if name in ("hinge", "exponential", "logistic"):
        y = rng.choice([-1.0, 1.0], size=n)
        z = rng.normal(0, 2, size=n)
        if name == "hinge":  # away from the kink y z = 1
            z = np.where(np.abs(y * z - 1) < 1e-3, z + 0.01, z)
    else:
        y = rng.normal(0, 2, size=n)
        z = y - np.where(rng.random(n) < 0.5, -1, 1) * rng.uniform(1e-3, 3, size=n)  # |u| >= 1e-3
    h = 1e-6
    fd = -(_ell(name, y, z + h, tau, beta) - _ell(name, y, z - h, tau, beta)) / (2 * h)
    g = _build(name, tau=tau, beta=beta).negative_gradient(y, z)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name,tau", [("lad", 0.5)] + [("pinball", t) for t in TAUS])
def test_negative_gradient_at_kink_is_zero(name, tau):
    y = np.array([-2.0, 0.0, 3.5, 1e6])
    g = _build(name, tau=tau).negative_gradient(y, y.copy())  # u = 0
    np.testing.assert_array_equal(g, 0.0)
    # one-sided values next to the kink are the documented tau / tau - 1 (lad: +-1)
    up = _build(name, tau=tau).negative_gradient(np.array([1.0]), np.array([1.0 - 1e-12]))
    dn = _build(name, tau=tau).negative_gradient(np.array([1.0]), np.array([1.0 + 1e-12]))
    assert (up[0], dn[0]) == ((1.0, -1.0) if name == "lad" else (tau, tau - 1.0))


def test_hinge_negative_gradient_at_kink_is_zero():
    y = np.array([1.0, -1.0, 1.0, -1.0])
    z = np.array([1.0, -1.0, 1.0 - 1e-12, -1.0 + 1e-12])  # y z = 1, 1, just below 1, just below 1
    g = make_loss("hinge").negative_gradient(y, z)
    np.testing.assert_array_equal(g, [0.0, 0.0, 1.0, -1.0])


# ---------------------------------------------------------------------------------------------
# Brute force for the piecewise-linear line searches (and init)
# ---------------------------------------------------------------------------------------------
def _pl_expected(obj, breakpoints):
    """Minimiser interval of a convex piecewise-linear obj (kinks only at breakpoints), by brute
    force on every breakpoint, midpoint and two far points, and the tie rule's choice in it.

    Returns (expected value, interval lo, interval hi, minimum, tolerance on values).
    """
    b = np.unique(breakpoints)
    span = b[-1] - b[0] + 1.0
    far_lo, far_hi = b[0] - 10 * span, b[-1] + 10 * span
    cand = np.concatenate([b, 0.5 * (b[1:] + b[:-1])])
    vals = np.array([obj(c) for c in cand])
    f_lo, f_hi = obj(far_lo), obj(far_hi)
    tol = 1e-10 * (1.0 + np.sum(np.abs(breakpoints)) + len(breakpoints))
    fmin = min(vals.min(), f_lo, f_hi)
    at = cand[vals <= fmin + tol]
    lo = -np.inf if f_lo <= fmin + tol else at.min()
    hi = np.inf if f_hi <= fmin + tol else at.max()
    assert np.isfinite(lo) or np.isfinite(hi)
    if lo <= 0.0 <= hi:
        expected = 0.0
    elif np.isfinite(lo) and np.isfinite(hi):
        expected = 0.5 * (lo + hi)
    else:
        expected = lo if np.isfinite(lo) else hi
    return expected, lo, hi, fmin, tol


def _leaf_objective(name, tau, y, z):
    return lambda c: float(np.sum(_ell(name, y, z + c, tau)))


def _check_pl_line_search(name, tau, y, z, leaf_ids, n_leaves):
    loss = _build(name, tau=tau)
    c = loss.line_search(y, z, leaf_ids, n_leaves)
    assert c.shape == (n_leaves,)
    for leaf in range(n_leaves):
        mask = leaf_ids == leaf
        if not mask.any():
            assert c[leaf] == 0.0
            continue
        yl, zl = y[mask], z[mask]
        obj = _leaf_objective(name, tau, yl, zl)
        expected, lo, hi, fmin, tol = _pl_expected(obj, yl - zl)
        assert obj(c[leaf]) <= fmin + tol, (leaf, c[leaf], lo, hi)
        scale = 1e-12 * (1.0 + np.max(np.abs(yl - zl)))
        assert lo - scale <= c[leaf] <= hi + scale
        assert abs(c[leaf] - expected) <= scale, (name, tau, leaf, c[leaf], expected, lo, hi)


def _regression_leaves(rng, sizes, duplicates=False):
    leaf_ids = np.repeat(np.arange(len(sizes)), sizes)
    n = len(leaf_ids)
    if duplicates:  # few distinct values: repeated breakpoints
        y = rng.integers(-3, 4, size=n).astype(float)
        z = rng.integers(-1, 2, size=n).astype(float)
    else:
        y = rng.normal(0, 2, size=n)
        z = rng.normal(0, 1, size=n)
    perm = rng.permutation(n)  # leaves interleaved in shuffled order
    return y[perm], z[perm], leaf_ids[perm]


# 1..12 (odd and even), 20, 40 (tau m integer for every tau in TAUS), 7 and 9 (never integer)
LEAF_SIZES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 20, 40]


@pytest.mark.parametrize("duplicates", [False, True])
@pytest.mark.parametrize("name,tau", [("ls", 0.5), ("lad", 0.5)] + [("pinball", t) for t in TAUS])
def test_regression_line_search_brute_force(name, tau, duplicates):
    rng = np.random.default_rng(_seed(name, tau, duplicates))
    y, z, leaf_ids = _regression_leaves(rng, LEAF_SIZES * 2, duplicates)
    n_leaves = 2 * len(LEAF_SIZES) + 3  # three trailing empty leaves
    if name == "ls":
        c = make_loss("ls").line_search(y, z, leaf_ids, n_leaves)
        for leaf in range(n_leaves):
            mask = leaf_ids == leaf
            expected = 0.0 if not mask.any() else sum(y[mask] - z[mask]) / mask.sum()
            assert c[leaf] == pytest.approx(expected, rel=1e-12, abs=1e-13)
            if mask.any():  # a minimiser of the quadratic: no better value nearby
                obj = _leaf_objective("ls", tau, y[mask], z[mask])
                assert obj(c[leaf]) <= min(obj(c[leaf] + 1e-4), obj(c[leaf] - 1e-4))
        return
    _check_pl_line_search(name, tau, y, z, leaf_ids, n_leaves)


def test_lad_line_search_tie_rule_by_hand():
    """Hand-made leaves where the minimiser set is known from the definition."""
    u = [1.0, 3.0, -1.0, 3.0, -3.0, -1.0, 5.0, 2.0, 2.0, 7.0, 9.0, 0.0, 4.0]
    ids = [0, 0, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4]
    # leaf 0 {1,3}: [1,3] -> 2; leaf 1 {-1,3}: [-1,3] contains 0 -> 0; leaf 2 {-3,-1,5}: -1;
    # leaf 3 {2,2,7,9}: [2,7] -> 4.5; leaf 4 {0,4}: [0,4] contains 0 -> 0; leaf 5 empty -> 0
    c = make_loss("lad").line_search(np.array(u), np.zeros(len(u)), np.array(ids), 6)
    np.testing.assert_array_equal(c, [2.0, 0.0, -1.0, 4.5, 0.0, 0.0])
    # pinball tau = 0.25, leaf of 4 (tau m = 1): interval [u_(1), u_(2)]
    u4 = np.array([5.0, 1.0, 9.0, 3.0])
    c = make_loss("pinball", tau=0.25).line_search(u4, np.zeros(4), np.zeros(4, int), 1)
    assert c[0] == 2.0
    # tau = 0.9, m = 10 (tau m = 9): [u_(9), u_(10)] = [9, 10] -> 9.5
    c = make_loss("pinball", tau=0.9).line_search(
        np.arange(1.0, 11.0), np.zeros(10), np.zeros(10, int), 1
    )
    assert c[0] == 9.5


def _hinge_leaves(rng, sizes, kinds):
    ys, zs, ids = [], [], []
    for leaf, (m, kind) in enumerate(zip(sizes, kinds)):
        if kind == "pos":
            y = np.ones(m)
        elif kind == "neg":
            y = -np.ones(m)
        elif kind == "balanced":
            y = np.repeat([1.0, -1.0], [m // 2, m - m // 2])
        else:
            y = rng.choice([-1.0, 1.0], size=m)
        z = rng.normal(0, 2, size=m) if kind != "dup" else rng.integers(-2, 3, size=m).astype(float)
        ys.append(y)
        zs.append(z)
        ids.append(np.full(m, leaf))
    y, z, ids = map(np.concatenate, (ys, zs, ids))
    perm = rng.permutation(len(y))
    return y[perm], z[perm], ids[perm]


def test_hinge_line_search_brute_force():
    rng = np.random.default_rng(21)
    sizes, kinds = [], []
    for m in [1, 2, 3, 4, 5, 6, 9, 10, 17, 30]:
        for kind in ["pos", "neg", "balanced", "mixed", "dup"]:
            sizes.append(m)
            kinds.append(kind)
    y, z, ids = _hinge_leaves(rng, sizes, kinds)
    _check_pl_line_search("hinge", 0.5, y, z, ids, len(sizes) + 2)


def test_hinge_line_search_pure_leaves():
    """Pure leaf: the interval of minimisers is unbounded; its finite end is taken (largest
    breakpoint 1 - z for y = +1, smallest -1 - z for y = -1) unless 0 is a minimiser."""
    z = np.array([0.5, 2.0, 3.0, -1.5, -4.0, 0.0])
    y = np.array([1.0, 1.0, 1.0, -1.0, -1.0, -1.0])
    ids = np.array([0, 0, 0, 1, 1, 1])
    c = make_loss("hinge").line_search(y, z, ids, 2)
    # leaf 0: breakpoints 1 - z = {0.5, -1, -2}: minimisers [0.5, inf) -> 0.5
    # leaf 1: breakpoints -1 - z = {0.5, 3, -1}: minimisers (-inf, -1] -> -1
    np.testing.assert_array_equal(c, [0.5, -1.0])
    # all margins already >= 1: 0 is a minimiser -> 0
    c = make_loss("hinge").line_search(
        np.array([1.0, -1.0]), np.array([2.0, -3.0]), np.array([0, 1]), 2
    )
    np.testing.assert_array_equal(c, [0.0, 0.0])


# ---------------------------------------------------------------------------------------------
# 3. init (constant minimiser f_0)
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name,tau", [("lad", 0.5), ("hinge", 0.5)] + [("pinball", t) for t in TAUS]
)
def test_init_piecewise_linear_brute_force(name, tau):
    rng = np.random.default_rng(_seed(name, tau, "init"))
    cases = []
    for m in [1, 2, 3, 4, 5, 8, 10, 11, 20, 40]:
        if name == "hinge":
            cases += [rng.choice([-1.0, 1.0], size=m), np.ones(m), -np.ones(m)]
            cases.append(np.repeat([1.0, -1.0], [m // 2, m - m // 2]))
        else:
            cases += [rng.normal(1.0, 2, size=m), rng.integers(-2, 4, size=m).astype(float)]
    if name != "hinge":
        cases += [np.array([-1.0, 2.0]), np.array([1.0, 3.0]), np.array([-4.0, -2.0, 5.0, 6.0])]
    for y in cases:
        f0 = _build(name, tau=tau).init(y)
        obj = _leaf_objective(name, tau, y, np.zeros_like(y))
        expected, lo, hi, fmin, tol = _pl_expected(obj, y)
        assert obj(f0) <= fmin + tol
        assert f0 == pytest.approx(expected, abs=1e-12), (y, f0, lo, hi)


def test_init_tie_rule_by_hand():
    lad, hinge = make_loss("lad"), make_loss("hinge")
    assert lad.init(np.array([-1.0, 2.0])) == 0.0  # 0 between the middle values
    assert lad.init(np.array([1.0, 3.0, 10.0, -5.0])) == 2.0  # midpoint of [1, 3]
    assert lad.init(np.array([4.0, 1.0, 9.0])) == 4.0  # odd count: the median
    assert hinge.init(np.array([1.0, -1.0, 1.0, -1.0])) == 0.0  # balanced
    assert hinge.init(np.array([1.0, -1.0, 1.0])) == 1.0  # sign of sum y
    assert hinge.init(np.array([-1.0, -1.0, 1.0])) == -1.0
    assert make_loss("pinball", tau=0.25).init(np.array([8.0, 2.0, 4.0, 6.0])) == 3.0  # [2, 4]


def test_init_ls_and_margin_losses_against_scipy():
    rng = np.random.default_rng(31)
    y = rng.normal(2.0, 3.0, size=37)
    res = minimize_scalar(
        lambda c: np.sum(_ell("ls", y, c)),
        bounds=(-20, 20),
        method="bounded",
        options={"xatol": 1e-12},
    )
    assert make_loss("ls").init(y) == pytest.approx(res.x, abs=1e-7)
    for p, n in [(3, 10), (7, 10), (1, 2), (50, 51)]:
        yc = np.repeat([1.0, -1.0], [p, n - p])
        for name, beta in SMOOTH:

            def obj(c, name=name, yc=yc, n=n, beta=beta):
                return np.sum(_ell(name, yc, np.full(n, c), beta=beta))

            res = minimize_scalar(obj, bounds=(-30, 30), method="bounded", options={"xatol": 1e-12})
            f0 = _build(name, beta=beta).init(yc)
            assert f0 == pytest.approx(res.x, abs=1e-6), (name, beta, p, n)
    # pure classes: no minimiser; init stays finite with the sign of the class
    for name, beta in SMOOTH:
        assert np.isfinite(_build(name, beta=beta).init(np.ones(5)))
        assert (
            _build(name, beta=beta).init(np.ones(5)) > 0 > _build(name, beta=beta).init(-np.ones(5))
        )


# ---------------------------------------------------------------------------------------------
# 4b. Newton line searches (exponential, logistic)
# ---------------------------------------------------------------------------------------------
def _fd_newton(name, beta, y, z, steps, h=1e-3):
    """Independent Newton steps on F(c) = sum l(y, z + c) with central finite differences,
    the guards (curvature floor 1e-12 * leaf size, step cap)."""
    c = 0.0
    F = lambda c: float(np.sum(_ell(name, y, z + c, beta=beta)))  # noqa: E731
    for _ in range(steps):
        f0, fp, fm = F(c), F(c + h), F(c - h)
        d1 = (fp - fm) / (2 * h)
        d2 = (fp - 2 * f0 + fm) / h**2
        delta = 0.0 if d2 < 1e-12 * len(y) else -d1 / d2
        c += float(np.clip(delta, -losses.NEWTON_STEP_CAP, losses.NEWTON_STEP_CAP))
    return c


@pytest.mark.parametrize("steps", [1, 3])
@pytest.mark.parametrize("name,beta", SMOOTH)
def test_newton_line_search_finite_differences(name, beta, steps):
    rng = np.random.default_rng(41)
    sizes = [1, 2, 3, 5, 8, 13, 30]
    ids = np.repeat(np.arange(len(sizes)), sizes)
    y = rng.choice([-1.0, 1.0], size=len(ids))
    y[ids == 2] = 1.0  # a pure leaf
    z = rng.normal(0.0, 1.0, size=len(ids))
    perm = rng.permutation(len(ids))
    y, z, ids = y[perm], z[perm], ids[perm]
    loss = _build(name, beta=beta, newton_steps=steps)
    c = loss.line_search(y, z, ids, len(sizes) + 1)
    assert c[-1] == 0.0  # empty leaf
    for leaf in range(len(sizes)):
        m = ids == leaf
        expected = _fd_newton(name, beta, y[m], z[m], steps)
        assert c[leaf] == pytest.approx(expected, rel=1e-5, abs=1e-7), (leaf, c[leaf], expected)


@pytest.mark.parametrize("beta", BETAS)
def test_exponential_one_step_formula(beta):
    """The closed form of one step: c = (A - B) / (beta (A + B))."""
    rng = np.random.default_rng(43)
    y = rng.choice([-1.0, 1.0], size=25)
    z = rng.normal(size=25)
    A = np.sum(np.exp(-beta * z[y > 0]))
    B = np.sum(np.exp(beta * z[y < 0]))
    c = make_loss("exponential", beta=beta).line_search(y, z, np.zeros(25, int), 1)
    assert c[0] == pytest.approx((A - B) / (beta * (A + B)), rel=1e-13)


def test_newton_curvature_floor():
    """Leaves whose curvature is below 1e-12 * leaf size do not move (0/0 otherwise)."""
    # exponential, y z = +800: the curvature underflows (clipped exponent -700 -> ~1e-304)
    for beta in BETAS:
        loss = make_loss("exponential", beta=beta, newton_steps=3)
        y = np.array([1.0, 1.0, -1.0, -1.0, 1.0])
        c = loss.line_search(y, 800.0 * y, np.zeros(5, int), 1)
        assert c[0] == 0.0
    # threshold: a pure +1 leaf of margin a with beta^2 e^{-beta a} = (1 +- 1%) 1e-12 per sample;
    # above the floor the step is (A - B)/(beta (A + B)) = 1/beta, below it is 0
    beta = 1.0
    for factor, expected in [(1.01, 1.0), (0.99, 0.0)]:
        a = -np.log(factor * 1e-12)
        c = make_loss("exponential", beta=beta).line_search(
            np.ones(4), np.full(4, a), np.zeros(4, int), 1
        )
        assert c[0] == pytest.approx(expected, abs=1e-12)
    # logistic, well classified pure leaf y z = +30: curvature ~ 1.4e-13 per sample -> 0
    c = make_loss("logistic").line_search(np.ones(3), np.full(3, 30.0), np.zeros(3, int), 1)
    assert c[0] == 0.0


def test_newton_step_cap_counts():
    """A logistic step on a badly misclassified pure leaf is ~ e^{|yz|}: capped and counted.

    At y z = -20 the curvature per sample is ~3e-9 (above the floor) and the step ~4.9e8; at
    y z = -30 the curvature is e^{-30}/ln2 ~ 1.4e-13 < 1e-12, so the floor (not the cap) applies.
    """
    cap = losses.NEWTON_STEP_CAP
    assert 0 < cap < np.inf
    loss = make_loss("logistic")
    y = np.array([1.0, 1.0, -1.0, -1.0, 1.0, 1.0])
    z = np.array([-20.0, -20.0, 20.0, 20.0, -30.0, -30.0])
    ids = np.array([0, 0, 1, 1, 2, 2])
    c, n_capped = loss.line_search_counted(y, z, ids, 3)
    np.testing.assert_array_equal(c, [cap, -cap, 0.0])
    assert n_capped == 2
    np.testing.assert_array_equal(loss.line_search(y, z, ids, 3), c)  # the same values
    # three steps from y z = -25: margins -25 -> -15 -> -5 -> +5, each step (~e^{|yz|}) capped
    loss3 = make_loss("logistic", newton_steps=3)
    c, n_capped = loss3.line_search_counted(y[:4], 1.25 * z[:4], ids[:4], 2)
    np.testing.assert_array_equal(c, [3 * cap, -3 * cap])
    assert n_capped == 6
    # a step within the cap is not counted; the loss keeps no state between calls
    small_step = loss.line_search_counted(
        np.array([1.0, -1.0]), np.array([0.3, 0.1]), np.zeros(2, int), 1
    )
    assert small_step[1] == 0 and not hasattr(loss, "n_capped_steps")
    # exponential: one step is at most 1/beta in magnitude, so only beta < 1/cap can be capped
    small = make_loss("exponential", beta=0.5 / cap)
    c, n_capped = small.line_search_counted(np.ones(3), np.zeros(3), np.zeros(3, int), 1)
    assert c[0] == cap and n_capped == 1
    for other in ("ls", "lad", "hinge"):
        assert make_loss(other).line_search_counted(y, z, ids, 3)[1] == 0


# ---------------------------------------------------------------------------------------------
# 5. Overflow policy
# ---------------------------------------------------------------------------------------------
EXTREME = [-1e6, -1e4, -800.0, -700.0, 0.0, 700.0, 800.0, 1e4, 1e6]


@pytest.mark.parametrize("name,tau,beta", ALL)
def test_no_inf_or_nan_for_extreme_predictions(name, tau, beta):
    z = np.array(EXTREME * 2)
    y = (
        np.repeat([1.0, -1.0], len(EXTREME))
        if name in ("hinge", "exponential", "logistic")
        else -z[::-1]
    )
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # no inf/NaN intermediates
        for steps in (1, 3):
            loss = _build(name, tau=tau, beta=beta, newton_steps=steps)
            assert np.isfinite(loss.value(y, z))
            assert np.all(np.isfinite(loss.negative_gradient(y, z)))
            for lam in (1e-3, 1.0, 1e3):
                assert np.all(np.isfinite(loss.prox_residual(y, z, lam)))
            ids = np.arange(len(y)) % 3
            assert np.all(np.isfinite(loss.line_search(y, z, ids, 4)))
            assert np.all(np.isfinite(loss.line_search(y, z, np.arange(len(y)), len(y))))
            assert np.isfinite(loss.init(y))


@pytest.mark.parametrize("name,beta", SMOOTH)
def test_value_saturates(name, beta):
    """Badly misclassified samples give a saturated (finite) loss, also summed over many samples
    (2e4 values of ~exp(700) overflow a plain sum)."""
    loss = _build(name, beta=beta)
    n = 20000
    y = np.ones(n)
    sat = loss.value(y, np.full(n, -1e6))
    assert np.isfinite(sat)
    assert sat == pytest.approx(float(_ell(name, 1.0, -1e6, beta=beta)), rel=1e-12)
    assert sat >= loss.value(y, np.full(n, -10.0))
    # the Newton line search of such a leaf stays finite too: exponential, clipped exponents,
    # one step (A - B) / (beta (A + B)) = 1 / beta; logistic, the curvature e^{-700} is below
    # the floor, step 0
    c = loss.line_search(y, np.full(n, -1e6), np.zeros(n, int), 1)
    assert c[0] == pytest.approx(1.0 / beta if name == "exponential" else 0.0, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# 6. Vectorisation / memory
# ---------------------------------------------------------------------------------------------
def test_large_line_search_vectorised():
    rng = np.random.default_rng(51)
    sizes = [24999, 25001, 25001, 24999, 25001, 24999, 25001, 24999]  # odd counts
    n, n_leaves = sum(sizes), len(sizes)
    odd_ids = rng.permutation(np.repeat(np.arange(n_leaves), sizes))
    y = rng.normal(size=n)
    z = rng.normal(size=n)
    yc = np.where(y > 0, 1.0, -1.0)
    tracemalloc.start()
    try:
        c_lad = make_loss("lad").line_search(y, z, odd_ids, n_leaves)
        c_pin = make_loss("pinball", tau=0.9).line_search(y, z, odd_ids, n_leaves)
        c_ls = make_loss("ls").line_search(y, z, odd_ids, n_leaves)
        c_hin = make_loss("hinge").line_search(yc, z, odd_ids, n_leaves)
        for name in ("exponential", "logistic"):
            assert np.all(
                np.isfinite(make_loss(name, newton_steps=3).line_search(yc, z, odd_ids, n_leaves))
            )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64e6, peak  # O(n): a few arrays of 1.6 MB, never m x m
    for leaf in range(n_leaves):
        u = (y - z)[odd_ids == leaf]
        s = np.sort(u)
        m = len(u)
        assert c_lad[leaf] == np.median(u)
        assert c_pin[leaf] == s[int(np.ceil(0.9 * m)) - 1]  # 0.9 m is never an integer here
        assert c_ls[leaf] == pytest.approx(np.mean(u), rel=1e-10, abs=1e-14)
        b = np.sort((yc - z)[odd_ids == leaf])
        P = int(np.sum(yc[odd_ids == leaf] > 0))
        assert 0 < P < m
        lo, hi = b[P - 1], b[P]  # slope k - P between the k-th and (k+1)-th breakpoints
        assert c_hin[leaf] == (0.0 if lo <= 0 <= hi else 0.5 * (lo + hi))


# ---------------------------------------------------------------------------------------------
# 7. make_loss validation
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs,param",
    [
        (dict(name="squared"), "loss"),
        (dict(name="pinball", tau=0.0), "tau"),
        (dict(name="pinball", tau=1.0), "tau"),
        (dict(name="pinball", tau=-0.3), "tau"),
        (dict(name="pinball", tau=float("nan")), "tau"),
        (dict(name="exponential", beta=0.0), "beta"),
        (dict(name="exponential", beta=-1.0), "beta"),
        (dict(name="exponential", newton_steps=0), "newton_steps"),
        (dict(name="logistic", newton_steps=0), "newton_steps"),
        (dict(name="logistic", newton_steps=-2), "newton_steps"),
    ],
)
def test_make_loss_validation(kwargs, param):
    with pytest.raises(ValueError, match=param):
        make_loss(**kwargs)


def test_make_loss_valid_and_parameters_used():
    assert make_loss("pinball", tau=0.9).tau == 0.9
    assert make_loss("exponential", beta=2.0).beta == 2.0
    assert make_loss("logistic", newton_steps=4).newton_steps == 4
    for name in ("ls", "lad", "pinball", "exponential", "logistic", "hinge"):
        assert make_loss(name).name == name


@pytest.mark.parametrize(
    "cls, params",
    [
        (Pinball, {"tau": 1.0}),
        (Pinball, {"tau": True}),
        (Exponential, {"beta": 0.0}),
        (Exponential, {"newton_steps": 0}),
        (Logistic, {"newton_steps": 1.5}),
    ],
)
def test_the_loss_constructors_check_their_parameters(cls, params):
    """The one rule of each parameter (losses.PARAMETER_RULES) holds however a loss is built."""
    (name,) = params
    with pytest.raises(ValueError, match=f"^{name}=.* is out of range: .* must be "):
        cls(**params)
    assert set(cls.param_names) <= set(PARAMETER_RULES)
