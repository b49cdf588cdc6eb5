"""The six losses of proximal boosting as small vectorised objects (``docs/method.md``).

Each loss exposes, for targets ``y`` and current predictions ``z`` (float64 arrays of the same
shape; classification targets in {-1, +1}) and optional non-negative row weights ``w`` (None:
all 1):

``value(y, z, w=None)``
    the empirical risk C(z) = sum_i w_i l(y_i, z_i) / sum_i w_i;
``init(y, w=None)``
    the constant minimiser f_0 (``midpoint`` tie rule below);
``negative_gradient(y, z)``
    a negative subgradient, per sample (unweighted: weights act through the tree fit);
``prox_residual(y, z, step)``
    the proximal pseudo-residual r = (prox_{step * l(y, .)}(z) - z) / step, per sample
    (unweighted, like the per-sample step);
``line_search(y, z, leaf_ids, n_leaves, w=None, tie_rule="midpoint", leaf_values=None)``
    the value c of each leaf minimising sum_{i in leaf} w_i l(y_i, z_i + c), all leaves at once;
    ``leaf_values`` (the tree's fitted leaf values g) are read by ``tie_rule="authors"``;
``bounded_line_search(y, z, leaf_ids, n_leaves, bounds, w=None, tie_rule="midpoint", ...)``
    the same under per-leaf bounds ``bounds = (lower, upper)`` (monotone constraints,
    :mod:`proxboost._monotone`): each leaf's minimiser on [lower, upper] (see "Bounded line
    searches" below); infinite bounds give ``line_search``'s values.

Rows of weight 0 take no part in f_0, the line searches or the loss values.

**Proximal step convention.** ``step`` (lambda) is the *per-sample* step of the authors' public
code: the paper's appendix writes lambda_paper = n * lambda. The directions differ only by a
positive factor, which the line search removes.

**Tie rules.** For the piecewise-linear losses (``lad``, ``pinball``, ``hinge``) the minimisers of
a line search can form an interval. ``"midpoint"`` (default): if 0 is a minimiser, the leaf
takes 0 (it need not move); otherwise the midpoint of the interval, or its finite end when the
interval is unbounded (a pure ``hinge`` leaf). ``init`` always applies this rule from z = 0.
``"authors"``: the rule of the authors' public code in exact arithmetic, c = gamma g with the
smallest optimal multiplier gamma among the breakpoints (the lower end of the interval when
g > 0, the upper end when g < 0, the finite end of an unbounded interval; 0 when g = 0).
``"authors_float"``: that rule as the authors' code computes it in floating point (their
line search over every breakpoint, pseudo-residual and f_0: :mod:`proxboost._authors_float`).
See ``docs/estimators.md`` for their measured effect.

**Overflow policy.** Every exponent is clipped to [-700, 700] (``EXP_CLIP``) in losses,
gradients, proximal operators and line searches, so no inf or NaN is ever produced; a
diverging run records a loss that saturates near exp(700) instead of overflowing.

**Newton line search** (``exponential``, ``logistic``): ``newton_steps`` Newton steps from c = 0
(default 1, as scikit-learn and the authors' code). Guards: a step whose second derivative is
below ``1e-12 * leaf weight`` is 0 (underflow would give 0/0), and a single step is capped at
``NEWTON_STEP_CAP`` in magnitude (a logistic step on a badly misclassified pure leaf is about
exp(|z|)). ``line_search_counted`` also returns how many steps were capped (losses keep no state).

**Bounded line searches.** ``ls``: the leaf mean clipped to the bounds (the objective is a
parabola). ``lad``, ``pinball``, ``hinge``: the tie rule applied to the leaf's minimisers inside
the bounds, or the bound nearest the minimisers when none lies inside (convexity). ``exponential``,
``logistic``: a leaf with both bounds infinite keeps the Newton steps above; a leaf with a finite
bound gets the minimiser of its objective on the bounds — not a clipped Newton step: the root of
the increasing derivative, by safeguarded Newton with bisection, or the bound where the derivative
does not change sign inside (compiled, each leaf's rows only, its weights scaled to sum 1 so that
a derivative of thousands of saturated e^700 terms stays finite). An infinite side of such a
leaf is replaced by +-(``newton_steps`` x ``NEWTON_STEP_CAP``), the farthest the Newton line
search moves a leaf (a pure leaf's minimiser is at infinity).

Examples
--------
>>> import numpy as np
>>> from proxboost.losses import make_loss
>>> loss = make_loss("lad")
>>> y, z = np.array([0.0, 1.0, 5.0]), np.zeros(3)
>>> loss.prox_residual(y, z, step=2.0)
array([0. , 0.5, 1. ])
>>> loss.line_search(y, z, leaf_ids=np.array([0, 0, 1]), n_leaves=2)
array([0., 5.])
"""

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from scipy.special import expit

EXP_CLIP = 700.0
NEWTON_STEP_CAP = 10.0
_NEWTON_CURVATURE_FLOOR = 1e-12
_LN2 = np.log(2.0)
_PROX_MAX_ITER = 200


def _exp(a):
    """exp with the exponent clipped at +-EXP_CLIP (overflow policy)."""
    return np.exp(np.clip(a, -EXP_CLIP, EXP_CLIP))


def leaf_means(values, leaf_ids, n_leaves, w=None):
    """(Weighted) mean of ``values`` in each leaf (0 for an empty or weightless leaf)."""
    if w is None:
        counts = np.bincount(leaf_ids, minlength=n_leaves)
        sums = np.bincount(leaf_ids, weights=values, minlength=n_leaves)
    else:
        counts = np.bincount(leaf_ids, weights=w, minlength=n_leaves)
        sums = np.bincount(leaf_ids, weights=w * values, minlength=n_leaves)
    return np.divide(sums, counts, out=np.zeros(n_leaves), where=counts > 0)


# The piecewise-linear line searches (lad, pinball, hinge) are per-leaf order statistics with the
# tie rule, compiled in O(n) per iteration (counting sort by leaf + selection): see _leafops.
#  - quantile_line_search(u, leaf_ids, n_leaves, tau): per-leaf minimiser of sum rho_tau(u_i - c).
#    On the open interval with k sorted points below c the slope is k - tau * m, so the minimiser
#    is the ceil(tau m)-th order statistic, or the interval between the k-th and (k+1)-th when
#    tau m = k is an integer (decided up to 1e-9 m). Weighted: the slope is S(c) - tau W (S the
#    weight below c, W the leaf's), and "tau m = k" becomes "tau W equals a cumulative weight"
#    (to 1e-9 W).
#  - hinge_line_search(y, z, leaf_ids, n_leaves): each sample is a hinge in c with breakpoint
#    b_i = y_i - z_i; with P positives in a leaf the slope between the k-th and (k+1)-th sorted
#    breakpoints is k - P, so the minimisers are exactly [b_(P), b_(P+1)] (b_(0) = -inf,
#    b_(m+1) = +inf); weighted, P is the positives' weight.
# Empty leaves get 0.
from proxboost import _authors_float  # noqa: E402  (tie_rule="authors_float")
from proxboost._leafops import (  # noqa: E402
    EXPONENTIAL,
    LOGISTIC,
    MIDPOINT,
    _leaf_values_arg,
    bounded_hinge_line_search,
    bounded_margin_minimisers,
    bounded_quantile_line_search,
    check_bounds,
    hinge_line_search,
    quantile_line_search,
)
from proxboost._multi_quantile import _ordered_leaves  # noqa: E402


# ---------------------------------------------------------------------------------------------
# Safeguarded Newton for the smooth proximal operators
# ---------------------------------------------------------------------------------------------
def _solve_increasing(g, dg, lo, hi):
    """Root of an increasing function on brackets [lo, hi] (g(lo) <= 0 <= g(hi)), vectorised.

    Newton steps, falling back to bisection whenever a step leaves the current bracket or fails
    to halve |g| (inside the bracket Newton can fall into a 2-cycle that never ends); runs to
    machine precision (bracket of a few ulps, or an exact zero, or no further progress).
    """
    s = lo.copy()
    prev = np.full(s.shape, np.inf)  # |g| at the previous iterate
    active = np.ones(s.shape, dtype=bool)
    for _ in range(_PROX_MAX_ITER):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        si, loi, hii = s[idx], lo[idx], hi[idx]
        gi = g(si, idx)
        neg, pos = gi < 0, gi > 0
        loi = np.where(neg, si, loi)
        hii = np.where(pos, si, hii)
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = si - gi / dg(si, idx)
        inside = (newton > loi) & (newton < hii) & np.isfinite(newton)
        slow = np.abs(gi) > 0.5 * prev[idx]
        prev[idx] = np.abs(gi)
        cand = np.where(inside & ~slow, newton, 0.5 * (loi + hii))
        tol = 2 * np.finfo(float).eps * np.maximum(np.abs(si), np.finfo(float).tiny)
        converged = inside & (np.abs(newton - si) <= tol)  # no further progress
        done = (gi == 0) | (hii - loi <= tol) | converged
        s[idx] = np.where(gi == 0, si, np.where(converged, newton, cand))
        lo[idx], hi[idx] = loi, hii
        active[idx[done]] = False
    return s


# ---------------------------------------------------------------------------------------------
# The losses' parameters: one rule each, read by the constructors and by the estimators
# ---------------------------------------------------------------------------------------------
def _real(value) -> bool:
    return isinstance(value, Real) and not isinstance(value, (bool, np.bool_))


def _integer(value) -> bool:
    return isinstance(value, Integral) and not isinstance(value, (bool, np.bool_))


@dataclass(frozen=True)
class ParameterRule:
    """What one loss parameter must be: ``check(value)``, and its words (``meaning``: what the
    parameter is; ``allowed``: the values it takes). The one definition of the rule: a loss's
    constructor applies it (:meth:`validate`, like scikit-learn's losses in
    ``sklearn/_loss/loss.py``), and the estimators' ``_parameter_constraints`` reuse it
    (:func:`proxboost._validation.loss_parameter`), so that both refuse the same values."""

    meaning: str
    allowed: str
    check: object  # value -> bool

    def validate(self, name, value):
        """``value`` if the rule holds, else a ``ValueError`` naming the parameter and the rule."""
        if not self.check(value):
            raise ValueError(
                f"{name}={value!r} is out of range: {self.meaning} must be {self.allowed}"
            )
        return value


#: The rules of every loss parameter (by name: a name means the same thing in every loss).
PARAMETER_RULES = {
    "tau": ParameterRule(
        "the pinball level", "a float in (0, 1)", lambda v: _real(v) and 0.0 < v < 1.0
    ),
    "beta": ParameterRule(
        "the exponential scale", "a float > 0", lambda v: _real(v) and 0.0 < v < np.inf
    ),
    "newton_steps": ParameterRule(
        "the number of Newton steps", "an integer >= 1", lambda v: _integer(v) and v >= 1
    ),
}


# ---------------------------------------------------------------------------------------------
# Loss objects
# ---------------------------------------------------------------------------------------------
class Loss:
    """Base class: shared validation and the task of a loss."""

    name = None
    task = None
    #: the names of the loss's own parameters: its constructor's arguments, each checked by its
    #: rule in :data:`PARAMETER_RULES` (see :meth:`params`)
    param_names = ()
    #: Largest |y| a fit accepts: within it every internal sum (over up to 10^7 rows, weights
    #: included) and the recorded losses stay finite. Labels of the classifiers are +-1.
    target_bound = np.inf

    def value(self, y, z, w=None):
        """The mean loss: sum(l) / n, or with weights sum(w l) / sum(w), the weights first scaled
        by a power of two so that the largest lies in [0.5, 1) (exact: the mean depends on
        the weights' ratios only, and no product overflows). Integer weights then give the
        mean of the rows repeated, bit for bit wherever the sums are exact (dyadic data)."""
        values = self.pointwise(y, z)
        if w is not None:
            _, exponent = np.frexp(np.max(w))
            w = np.ldexp(w, -exponent)
        with np.errstate(over="ignore"):
            total = np.sum(values) if w is None else np.sum(w * values)
        count = len(values) if w is None else np.sum(w)
        if not np.isfinite(total):  # ~18,000 saturated values exp(700) overflow the plain sum
            top = np.max(values)
            scaled = values / top
            return float(top * ((np.sum(scaled) if w is None else np.sum(w * scaled)) / count))
        return float(total / count)

    def init(self, y, w=None):
        y = np.asarray(y, dtype=float)
        return float(
            self.line_search(y, np.zeros_like(y), np.zeros(len(y), dtype=np.intp), 1, w)[0]
        )

    def line_search_counted(
        self, y, z, leaf_ids, n_leaves, w=None, tie_rule="midpoint", leaf_values=None
    ):
        """(leaf values of :meth:`line_search`, number of capped Newton steps): the losses are
        stateless, so a fit sums the counts itself. Only the Newton line searches cap steps."""
        return self.line_search(y, z, leaf_ids, n_leaves, w, tie_rule, leaf_values), 0

    def bounded_line_search(
        self, y, z, leaf_ids, n_leaves, bounds, w=None, tie_rule="midpoint", leaf_values=None
    ):
        """:meth:`line_search` under per-leaf bounds ``bounds = (lower, upper)``."""
        raise NotImplementedError

    def bounded_line_search_counted(
        self, y, z, leaf_ids, n_leaves, bounds, w=None, tie_rule="midpoint", leaf_values=None
    ):
        """(values of :meth:`bounded_line_search`, number of capped Newton steps), as
        :meth:`line_search_counted`."""
        args = (y, z, leaf_ids, n_leaves, bounds, w, tie_rule, leaf_values)
        return self.bounded_line_search(*args), 0

    def auto_step(self, y, f0, w=None) -> float:
        """The per-sample proximal step of ``step="auto"``: 1, for the losses whose step carries
        no unit of y (least squares: lambda multiplies a squared error; the margin losses: the
        labels are +-1). :class:`Pinball` and ``lad`` override it."""
        return 1.0

    def direction(self, y, z, step, proximal):
        """The direction of an iteration: proximal pseudo-residual or negative subgradient."""
        return self.prox_residual(y, z, step) if proximal else self.negative_gradient(y, z)

    def __repr__(self):
        params = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({params})"

    def params(self) -> dict:
        """The loss's own parameters and their values (``{"tau": 0.9}`` for pinball, ``{}``
        for ls): what a result's identity and row record of the loss besides its name."""
        return {name: getattr(self, name) for name in self.param_names}

    @staticmethod
    def _validated(name, value):
        return PARAMETER_RULES[name].validate(name, value)


class LeastSquares(Loss):
    """``ls``: l(y, z) = (y - z)^2 / 2."""

    name, task = "ls", "regression"
    #: the squares of residuals up to 2e150, summed over 10^7 rows, stay below 1.8e308
    target_bound = 1e150

    def pointwise(self, y, z):
        return 0.5 * (y - z) ** 2

    def init(self, y, w=None):
        return float(np.average(y, weights=w))

    def negative_gradient(self, y, z):
        return y - z

    def prox_residual(self, y, z, step):
        return (y - z) / (1.0 + step)

    def line_search(self, y, z, leaf_ids, n_leaves, w=None, tie_rule="midpoint", leaf_values=None):
        return leaf_means(y - z, leaf_ids, n_leaves, w)

    def bounded_line_search(
        self, y, z, leaf_ids, n_leaves, bounds, w=None, tie_rule="midpoint", leaf_values=None
    ):
        lower, upper = check_bounds(*bounds, int(n_leaves))
        return np.clip(leaf_means(y - z, leaf_ids, n_leaves, w), lower, upper)


class Pinball(Loss):
    """``pinball``: l(y, z) = max(tau u, (tau - 1) u), u = y - z, tau in (0, 1)."""

    param_names = ("tau",)

    name, task = "pinball", "regression"
    #: residuals up to 2e300, summed over 10^7 rows (the mean is rescaled), stay finite
    target_bound = 1e300

    def __init__(self, tau=0.5):
        self.tau = float(self._validated("tau", tau))

    def pointwise(self, y, z):
        u = y - z
        return np.maximum(self.tau * u, (self.tau - 1.0) * u)

    def negative_gradient(self, y, z):
        u = y - z
        return np.where(u > 0, self.tau, np.where(u < 0, self.tau - 1.0, 0.0))

    def prox_residual(self, y, z, step):
        u, tau = y - z, self.tau
        return np.where(u > step * tau, tau, np.where(u < step * (tau - 1.0), tau - 1.0, u / step))

    def line_search(self, y, z, leaf_ids, n_leaves, w=None, tie_rule="midpoint", leaf_values=None):
        if tie_rule == "authors_float":
            return _authors_float.line_search(self, y, z, leaf_ids, n_leaves, leaf_values)
        return quantile_line_search(y - z, leaf_ids, n_leaves, self.tau, w, tie_rule, leaf_values)

    def bounded_line_search(
        self, y, z, leaf_ids, n_leaves, bounds, w=None, tie_rule="midpoint", leaf_values=None
    ):
        _no_bounded_authors_float(tie_rule)
        return bounded_quantile_line_search(
            y - z, leaf_ids, n_leaves, self.tau, bounds, w, tie_rule, leaf_values
        )

    def auto_step(self, y, f0, w=None) -> float:
        """The step of ``step="auto"``, in the units of y: the weighted median absolute
        deviation of y from f_0, so that at the first iteration the proximal direction is the
        scaled residual u / lambda on the half of the rows nearest f_0 and the subgradient's sign
        on the other half. Falls back to the weighted mean absolute deviation when more than
        half of the weight sits on f_0, and to 1 when y is constant. Every operation (the
        deviations, an exact weighted selection and a midpoint) commutes with multiplying y by
        a power of two, so 1024 y gives 1024 lambda bit for bit."""
        deviation = np.abs(np.asarray(y, dtype=float) - f0)
        zeros = np.zeros(len(deviation), dtype=np.intp)
        spread = float(quantile_line_search(deviation, zeros, 1, 0.5, w)[0])
        if spread <= 0.0:
            spread = float(np.average(deviation, weights=w))
        return spread if spread > 0.0 else 1.0


class LeastAbsolute(Pinball):
    """``lad``: l(y, z) = |y - z| (the pinball loss at tau = 1/2, times 2)."""

    name = "lad"
    param_names = ()  # the level is 1/2 by definition

    def __init__(self):
        super().__init__(tau=0.5)

    def pointwise(self, y, z):
        return np.abs(y - z)

    def negative_gradient(self, y, z):
        return np.sign(y - z)

    def prox_residual(self, y, z, step):
        u = y - z
        return u / np.maximum(step, np.abs(u))


class Hinge(Loss):
    """``hinge``: l(y, z) = max(0, 1 - y z), y in {-1, +1}."""

    name, task = "hinge", "classification"

    def pointwise(self, y, z):
        return np.maximum(0.0, 1.0 - y * z)

    def negative_gradient(self, y, z):
        return np.where(y * z < 1.0, y, 0.0)

    def prox_residual(self, y, z, step):
        m = y * z
        return np.where(m < 1.0 - step, y, np.where(m > 1.0, 0.0, (y - z) / step))

    def line_search(self, y, z, leaf_ids, n_leaves, w=None, tie_rule="midpoint", leaf_values=None):
        if tie_rule == "authors_float":
            return _authors_float.line_search(self, y, z, leaf_ids, n_leaves, leaf_values)
        return hinge_line_search(y, z, leaf_ids, n_leaves, w, tie_rule, leaf_values)

    def bounded_line_search(
        self, y, z, leaf_ids, n_leaves, bounds, w=None, tie_rule="midpoint", leaf_values=None
    ):
        _no_bounded_authors_float(tie_rule)
        return bounded_hinge_line_search(y, z, leaf_ids, n_leaves, bounds, w, tie_rule, leaf_values)


def _no_bounded_authors_float(tie_rule):
    if tie_rule == "authors_float":
        raise ValueError(
            'tie_rule="authors_float" reproduces the authors\' unbounded line search; under'
            ' bounds (monotone constraints) use tie_rule="midpoint" or "authors"'
        )


def _class_weights(y, w):
    """(weight of the +1 class, total weight); counts without weights."""
    if w is None:
        return np.sum(y > 0), len(y)
    return np.sum(w[y > 0]), np.sum(w)


class _MarginLoss(Loss):
    """Smooth margin losses l(y, z) = phi(y z): Newton line search, exact proximal operator.

    Subclasses give phi and its first two derivatives ``_phi``, ``_dphi``, ``_d2phi`` of the
    margin m = y z (exponents clipped, overflow policy).
    """

    task = "classification"

    def __init__(self, newton_steps=1):
        self.newton_steps = int(self._validated("newton_steps", newton_steps))

    def pointwise(self, y, z):
        return self._phi(y * z)

    def negative_gradient(self, y, z):
        return -y * self._dphi(y * z)

    def line_search(self, y, z, leaf_ids, n_leaves, w=None, tie_rule="midpoint", leaf_values=None):
        return self.line_search_counted(y, z, leaf_ids, n_leaves, w, tie_rule, leaf_values)[0]

    def line_search_counted(
        self, y, z, leaf_ids, n_leaves, w=None, tie_rule="midpoint", leaf_values=None
    ):
        """(leaf values, number of Newton steps that hit ``NEWTON_STEP_CAP``)."""
        # per-leaf (weighted) means of the derivatives (same Newton step as the sums; sums of
        # ~18,000 saturated exp(700) terms would overflow), so the floor is 1e-12 on the mean
        # curvature. The tie rule does not apply: the objective is strictly convex.
        if w is None:
            counts = np.bincount(leaf_ids, minlength=n_leaves)
            inv_count = 1.0 / np.maximum(counts, 1)[leaf_ids]
        else:
            totals = np.bincount(leaf_ids, weights=w, minlength=n_leaves)
            inv_count = w / np.where(totals > 0, totals, 1.0)[leaf_ids]
        c = np.zeros(n_leaves)
        n_capped = 0
        for _ in range(self.newton_steps):
            m = y * (z + c[leaf_ids])
            grad = np.bincount(leaf_ids, weights=y * self._dphi(m) * inv_count, minlength=n_leaves)
            hess = np.bincount(leaf_ids, weights=self._d2phi(m) * inv_count, minlength=n_leaves)
            ok = hess >= _NEWTON_CURVATURE_FLOOR
            delta = np.where(ok, -grad / np.where(ok, hess, 1.0), 0.0)
            capped = np.abs(delta) > NEWTON_STEP_CAP
            n_capped += int(capped.sum())
            c += np.clip(delta, -NEWTON_STEP_CAP, NEWTON_STEP_CAP)
        return c, n_capped

    def bounded_line_search(
        self, y, z, leaf_ids, n_leaves, bounds, w=None, tie_rule="midpoint", leaf_values=None
    ):
        args = (y, z, leaf_ids, n_leaves, bounds, w, tie_rule, leaf_values)
        return self.bounded_line_search_counted(*args)[0]

    def bounded_line_search_counted(
        self, y, z, leaf_ids, n_leaves, bounds, w=None, tie_rule="midpoint", leaf_values=None
    ):
        """Leaves with both bounds infinite: :meth:`line_search_counted`; the others: the
        minimiser of the leaf's objective on its bounds (module docstring, "Bounded line
        searches"), which caps no step."""
        n_leaves = int(n_leaves)
        lower, upper = check_bounds(*bounds, n_leaves)
        bounded = np.isfinite(lower) | np.isfinite(upper)
        if not bounded.any():
            return self.line_search_counted(y, z, leaf_ids, n_leaves, w, tie_rule, leaf_values)
        c, n_capped = np.zeros(n_leaves), 0
        free = ~bounded
        if free.any():  # each leaf's Newton steps read its own rows only: a subset suffices
            rows = free[leaf_ids]
            ids = (np.cumsum(free) - 1)[leaf_ids[rows]]
            wr = None if w is None else w[rows]
            c[free], n_capped = self.line_search_counted(y[rows], z[rows], ids, free.sum(), wr)
        reach = self.newton_steps * NEWTON_STEP_CAP
        lo = np.where(np.isfinite(lower), lower, np.minimum(-reach, upper))[bounded]
        hi = np.where(np.isfinite(upper), upper, np.maximum(reach, lower))[bounded]
        c[bounded] = self._bounded_minimiser(y, z, leaf_ids, bounded, w, lo, hi)
        return c, n_capped

    def _bounded_minimiser(self, y, z, leaf_ids, bounded, w, lo, hi):
        """Minimiser on [lo, hi] of each leaf of ``bounded`` (a mask over the leaves): the
        root of its increasing derivative, or a bound (compiled:
        :func:`proxboost._leafops.bounded_margin_minimisers`)."""
        rows = bounded[leaf_ids]
        ids = (np.cumsum(bounded) - 1)[leaf_ids[rows]]  # leaf -> its place among the bounded
        kind = EXPONENTIAL if self.name == "exponential" else LOGISTIC
        beta = getattr(self, "beta", 1.0)
        wr = None if w is None else w[rows]
        return bounded_margin_minimisers(kind, beta, y[rows], z[rows], ids, len(lo), (lo, hi), wr)

    def prox_residual(self, y, z, step):
        # In the signed variable s = y p (y^2 = 1) both classes solve the same increasing equation
        # s - s0 + step * phi'(s) = 0 with s0 = y z; as -phi' > 0 decreases, the root lies in
        # (s0, s0 - step * phi'(s0)]. It is solved for the move t = s - s0 in (0, -step phi'(s0)],
        # so that r = y t / step keeps its relative precision when t << |s0| (s itself would round
        # t away: r = 0 for y z >~ 37).
        s0 = y * z
        step = np.broadcast_to(np.asarray(step, dtype=float), s0.shape)
        t = _solve_increasing(
            lambda t, i: t + step[i] * self._dphi(s0[i] + t),
            lambda t, i: 1.0 + step[i] * self._d2phi(s0[i] + t),
            np.zeros(s0.shape),
            -step * self._dphi(s0),
        )
        return y * t / step


class Exponential(_MarginLoss):
    """``exponential``: l(y, z) = exp(-beta y z), beta > 0."""

    param_names = ("beta", "newton_steps")

    name = "exponential"

    def __init__(self, beta=1.0, newton_steps=1):
        super().__init__(newton_steps)
        self.beta = float(self._validated("beta", beta))

    def init(self, y, w=None):
        p, n = _class_weights(y, w)
        if p == 0 or p == n:  # log(p / (n - p)) is infinite: the clipped margin instead
            return float(np.sign(p - n / 2) * EXP_CLIP / self.beta)
        return float(np.log(p / (n - p)) / (2.0 * self.beta))

    def prox_residual(self, y, z, step):
        # The move t = y (p - z) > 0 solves t = step beta e^{-beta (s0 + t)} (s0 = y z), i.e.
        # w e^w = x with w = beta t, x = step beta^2 e^{-beta s0}: w = W(x) (Lambert). Newton from
        # s0 moves by ~1/beta per step (hundreds of steps for beta |s0| >~ 200, then garbage), so
        # w is found in log scale: v = ln w solves e^v + v = L = ln x, convex increasing in v;
        # Newton from v0 = ln ln(1 + x) >= v (W(x) <= ln(1 + x)) decreases monotonically and
        # quadratically to v. Overflow policy: L is a logarithm and never overflows; the exponent
        # -beta s0 is clipped below at -EXP_CLIP (the clipped loss of a well-classified sample,
        # as in the gradient). The root always lies in the unclipped region for |s0| < 1e300.
        b = self.beta
        s0 = y * z
        log_bstep = np.log(b * np.asarray(step, dtype=float))
        L = log_bstep + np.log(b) + np.maximum(-b * s0, -EXP_CLIP)
        L = np.broadcast_to(L, s0.shape)
        # ln ln(1 + x); below L = -40, ln W(x) = L - x + O(x^2) = L to double precision
        v = np.where(L > -40.0, np.log(np.logaddexp(0.0, np.maximum(L, -40.0))), L)
        for _ in range(_PROX_MAX_ITER):
            ev = np.exp(v)
            v_new = v - (ev + v - L) / (ev + 1.0)
            tol = 4 * np.finfo(float).eps * np.maximum(np.abs(v), 1.0)
            converged = ~(v_new < v) | (np.abs(v_new - v) <= tol)
            v = np.where(v_new < v, v_new, v)  # monotone from above: a rounding up-step is noise
            if np.all(converged):
                break
        # r = y t / step = y w / (beta step). For w > 0.5 one Newton step on w + ln w = L in w
        # itself removes the |v| eps relative error of exp(v); tiny w stays in log scale
        w = np.exp(v)
        big = L > 0.0
        with np.errstate(divide="ignore", invalid="ignore"):
            w = np.where(big, w - (w + np.log(w) - L) * w / (w + 1.0), w)
        return y * np.where(big, w / (b * np.asarray(step, dtype=float)), np.exp(v - log_bstep))

    def _phi(self, m):
        return _exp(-self.beta * m)

    def _dphi(self, m):
        return -self.beta * _exp(-self.beta * m)

    def _d2phi(self, m):
        return self.beta**2 * _exp(-self.beta * m)


class Logistic(_MarginLoss):
    """``logistic``: l(y, z) = log2(1 + exp(-y z))."""

    param_names = ("newton_steps",)

    name = "logistic"

    def init(self, y, w=None):
        p, n = _class_weights(y, w)
        if p == 0 or p == n:
            return float(np.sign(p - n / 2) * EXP_CLIP)
        return float(np.log(p / (n - p)))

    def _phi(self, m):
        return np.logaddexp(0.0, -np.clip(m, -EXP_CLIP, EXP_CLIP)) / _LN2

    def _dphi(self, m):
        return -expit(-np.clip(m, -EXP_CLIP, EXP_CLIP)) / _LN2

    def _d2phi(self, m):
        m = np.clip(m, -EXP_CLIP, EXP_CLIP)
        return expit(m) * expit(-m) / _LN2


# -- several quantiles in one model (the method: proxboost._multi_quantile's docstring) -----------
def check_taus(tau):
    """The levels of ``tau`` as a 1-D float array when it is a list (strictly increasing, in
    (0, 1)), or None when it is a scalar; raises ValueError with one line otherwise."""
    if np.ndim(tau) == 0:
        return None
    taus = np.asarray(tau, dtype=float) if _all_numbers(tau) else None
    if (
        taus is None
        or taus.ndim != 1
        or len(taus) == 0
        or not np.all(np.isfinite(taus))
        or not np.all((taus > 0) & (taus < 1))
        or not np.all(np.diff(taus) > 0)
    ):
        raise ValueError(
            f"tau={tau!r} is not allowed; allowed values: a float in (0, 1), or a non-empty, "
            "strictly increasing list of floats in (0, 1) (several quantiles in one model)"
        )
    return taus


def _all_numbers(values) -> bool:
    try:
        return all(
            isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
            for v in values
        )
    except TypeError:
        return False


class MultiQuantile:
    """The pinball losses at K ordered levels, as one loss of vector-valued predictions: values,
    f_0, directions and leaf line searches take and return one column per level."""

    name, task = "pinball", "regression"
    target_bound = Pinball.target_bound

    def __init__(self, taus):
        self.taus = np.asarray(taus, dtype=float)
        self.levels = [Pinball(tau) for tau in self.taus]

    def params(self):
        return {"tau": [float(t) for t in self.taus]}

    def __repr__(self):
        return f"MultiQuantile(tau={self.params()['tau']})"

    def value(self, y, F, w=None) -> np.ndarray:
        """The mean pinball loss of each level, shape (K,)."""
        return np.array([level.value(y, F[:, k], w) for k, level in enumerate(self.levels)])

    def init(self, y, w=None) -> np.ndarray:
        """f_0: every level starts at the same constant, the weighted quantile of y at the mean
        level. Gaps then start at zero and open only where the trees find spread: starting from
        the K marginal quantiles would put the marginal gap everywhere, and the gaps could then
        shrink only as far as the worst case over all trees allows."""
        start = Pinball(float(np.mean(self.taus))).init(y, w)
        return np.full(len(self.taus), start)

    def auto_step(self, y, f0, w=None) -> float:
        """The step of ``step="auto"``: one lambda for every level, the single level's rule
        (:meth:`Pinball.auto_step`, which does not depend on tau) at the common start f_0."""
        return self.levels[0].auto_step(y, float(f0[0]), w)

    def tree_target(self, directions, t):
        """The target of tree t: the direction of level t mod K (round robin). One tree per
        iteration serves every level (each gets its own leaf values); the round robin lets the
        trees find where each level's direction varies — the mean of the K directions would
        carry the location and lose the spread."""
        return directions[:, t % directions.shape[1]]

    def direction(self, y, H, step, proximal) -> np.ndarray:
        """Each level's direction at its own predictions, shape (n, K)."""
        return np.column_stack(
            [level.direction(y, H[:, k], step, proximal) for k, level in enumerate(self.levels)]
        )

    def line_search(self, y, H, leaf_ids, n_leaves, w, tie_rule, leaf_values, min_steps):
        """Leaf values c of shape (n_leaves, K) minimising each leaf's sum of the K pinball
        losses at H + c, subject to c[:, k] - c[:, k - 1] >= min_steps[k - 1] in every leaf
        (``min_steps`` None: c[:, k] >= c[:, k - 1], the plain order)."""
        c = np.column_stack(
            [
                level.line_search(y, H[:, k], leaf_ids, n_leaves, w, tie_rule, leaf_values)
                for k, level in enumerate(self.levels)
            ]
        )
        return self._ordered(y, H, leaf_ids, n_leaves, w, tie_rule, leaf_values, min_steps, c)

    def bounded_line_search(
        self, y, H, leaf_ids, n_leaves, bounds, w, tie_rule, leaf_values, min_steps
    ):
        """:meth:`line_search` under per-leaf, per-level bounds ``bounds = (lower, upper)`` of
        shape (n_leaves, K) each (monotone constraints): the exact minimiser under both the
        ordering and the bounds, provided each leaf's ``lower`` and ``upper`` rows satisfy the
        ordering constraints themselves (rows of infinities do). In the shifted variables of
        the module docstring the bounds are then non-decreasing in k, so a pooled block of
        levels always has a non-empty common interval [max lower, min upper], and pooling
        adjacent violators with each block at its bounded optimum solves the problem."""
        lower, upper = (np.asarray(b, dtype=float) for b in bounds)
        c = np.column_stack(
            [
                level.bounded_line_search(
                    y,
                    H[:, k],
                    leaf_ids,
                    n_leaves,
                    (lower[:, k], upper[:, k]),
                    w,
                    tie_rule,
                    leaf_values,
                )
                for k, level in enumerate(self.levels)
            ]
        )
        c = self._ordered(
            y, H, leaf_ids, n_leaves, w, tie_rule, leaf_values, min_steps, c, (lower, upper)
        )
        # back from the shifted variables c~_k + shifts[k], a value may round one ulp past its
        # bound, and a neighbouring leaf's value at that bound would then come in the wrong
        # order: the bounds are exact (a gap one ulp short is within the budget's rounding
        # margin)
        return np.minimum(np.maximum(c, lower), upper)

    def _ordered(
        self, y, H, leaf_ids, n_leaves, w, tie_rule, leaf_values, min_steps, c, bounds=None
    ):
        """The levels' own values ``c`` made to satisfy the ordering constraints where they do
        not: pooling adjacent violators in those leaves (under ``bounds``, if any)."""
        K = len(self.taus)
        b = np.zeros(K - 1) if min_steps is None else np.asarray(min_steps, dtype=float)
        violated = np.flatnonzero(np.any(np.diff(c, axis=1) < b, axis=1))
        if len(violated) == 0:
            return c
        # the violating leaves' rows, grouped by leaf (one stable sort)
        order = np.argsort(leaf_ids, kind="stable")
        starts = np.searchsorted(leaf_ids[order], np.arange(n_leaves + 1))
        U = np.ascontiguousarray(y[order, None] - H[order])
        ws = np.ones(len(order)) if w is None else np.ascontiguousarray(w[order], dtype=float)
        rule, g = _leaf_values_arg(tie_rule, leaf_values, n_leaves)
        if rule == MIDPOINT:
            g = np.zeros(n_leaves)
        shifts = np.concatenate([[0.0], np.cumsum(b)])
        if bounds is None:
            shifted = (np.full((n_leaves, K), -np.inf), np.full((n_leaves, K), np.inf))
        else:  # the bounds in the shifted variables c~_k = c_k - shifts[k]
            shifted = tuple(np.ascontiguousarray(side - shifts) for side in bounds)
        kept = np.empty(U.size)  # the pooled points' scratch
        _ordered_leaves(U, ws, starts, violated, self.taus, shifts, rule, g, c, shifted, kept)
        return c


LOSSES = {
    cls.name: cls for cls in (LeastSquares, LeastAbsolute, Pinball, Exponential, Logistic, Hinge)
}
#: The built-in losses of each task (the estimators accept these and the registered ones)
REGRESSION_LOSSES = tuple(k for k, v in LOSSES.items() if v.task == "regression")
CLASSIFICATION_LOSSES = tuple(k for k, v in LOSSES.items() if v.task == "classification")
BUILTIN_LOSSES = tuple(LOSSES)
#: Every loss parameter name, in the order the losses declare them
LOSS_PARAMETERS = tuple(dict.fromkeys(n for cls in LOSSES.values() for n in cls.param_names))


#: The loss parameters each estimator has: a registered loss takes its parameters among them
ESTIMATOR_LOSS_PARAMETERS = {"regression": ("tau",), "classification": ("beta", "newton_steps")}
#: What a registered loss must implement itself (:class:`Loss` gives the rest)
REQUIRED_METHODS = ("pointwise", "negative_gradient", "prox_residual", "line_search")


def register_loss(cls):
    """Add a loss class to :data:`LOSSES`, so that ``make_loss(cls.name)`` and the estimators
    (``loss=cls.name``) take it, without editing proxboost (``docs/extending.md``). Usable as a
    class decorator; returns ``cls``.

    ``cls`` derives from :class:`Loss`, sets ``name`` (not taken) and ``task``
    ("regression" or "classification"), implements :data:`REQUIRED_METHODS` and takes its
    parameters (``param_names``) among its estimator's (:data:`ESTIMATOR_LOSS_PARAMETERS`).
    Anything else is refused by a one-line ``ValueError`` before anything changes. A registered
    loss runs the Python fit loop (the compiled loop knows the built-in losses only).
    """
    problem = _registration_problem(cls)
    if problem:
        raise ValueError(f"register_loss({getattr(cls, '__name__', cls)!r}): {problem}")
    LOSSES[cls.name] = cls
    return cls


def _registration_problem(cls) -> str:
    """What keeps ``cls`` from being registered, with the fix ("" when nothing does)."""
    if not (isinstance(cls, type) and issubclass(cls, Loss)):
        return "a loss is a class deriving from proxboost.losses.Loss; derive from it"
    name = cls.name
    if not (isinstance(name, str) and name.isidentifier()):
        return f"name={name!r} is not a name; set the class attribute name, e.g. name = 'expectile'"
    if name in LOSSES:
        kind = "a built-in loss" if name in BUILTIN_LOSSES else "registered earlier"
        return f"the name {name!r} is taken ({kind}); choose another name"
    if cls.task not in ESTIMATOR_LOSS_PARAMETERS:
        return f"task={cls.task!r}; set task = 'regression' or 'classification'"
    missing = [m for m in REQUIRED_METHODS if not callable(getattr(cls, m, None))]
    if missing:
        return f"it does not implement {', '.join(missing)}; a loss implements {REQUIRED_METHODS}"
    allowed = ESTIMATOR_LOSS_PARAMETERS[cls.task]
    extra = [p for p in cls.param_names if p not in allowed]
    if extra:
        return (
            f"param_names {extra} are no parameters of the {cls.task} estimator; take them among"
            f" {allowed} (a new estimator parameter needs an edit of proxboost)"
        )
    try:
        cls(**{p: getattr(cls(), p) for p in cls.param_names})
    except Exception as exc:  # noqa: BLE001 (any failure of the constructor is the user's)
        return f"{cls.__name__}() and {cls.__name__}(**params) must build: {exc}"
    return ""


def unregister_loss(name):
    """Remove a loss added by :func:`register_loss` (a built-in loss is refused)."""
    if name in BUILTIN_LOSSES:
        raise ValueError(f"unregister_loss({name!r}): a built-in loss cannot be removed")
    if name not in LOSSES:
        raise ValueError(f"unregister_loss({name!r}): no loss of that name is registered")
    del LOSSES[name]


def make_loss(name, tau=0.5, beta=1.0, newton_steps=1):
    """Build a loss object by id; its constructor checks the parameters that apply to it
    (:data:`PARAMETER_RULES`), the others are ignored.

    Parameters
    ----------
    name : {"ls", "lad", "pinball", "exponential", "logistic", "hinge"} or a registered loss
    tau : float in (0, 1), used by ``pinball``; a strictly increasing list of levels gives the
        loss of several quantiles in one model (:class:`MultiQuantile`, pinball only).
    beta : float > 0, used by ``exponential``.
    newton_steps : int >= 1, used by ``exponential`` and ``logistic``.
    """
    if name not in LOSSES:
        raise ValueError(f"loss={name!r} is not a known loss; allowed values: {list(LOSSES)}")
    if name == "pinball" and np.ndim(tau) > 0:
        return MultiQuantile(check_taus(list(tau)))
    given = {"tau": tau, "beta": beta, "newton_steps": newton_steps}
    cls = LOSSES[name]
    return cls(**{param: given[param] for param in cls.param_names})
