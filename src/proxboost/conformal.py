"""Conformalized quantile regression: intervals whose coverage holds on new data.

Romano, Patterson and Candès (2019), "Conformalized quantile regression". Given a lower and an
upper quantile model fitted on some rows, and *other* rows (the calibration set, used neither
for fitting nor for selecting the model), the conformity score of a calibration row is
E_i = max(lower(x_i) - y_i, y_i - upper(x_i)): how far y_i lies outside its interval (negative
inside). With q the ceil((n + 1)(1 - alpha))-th smallest of the n scores, the interval
[lower(x) - q, upper(x) + q] covers a new exchangeable row with probability at least 1 - alpha
(and at most 1 - alpha + 1/(n + 1) when the scores have no ties).

Ties. Where the predictions take few distinct values and y is discrete (an integer target: wine
quality 3-8), many scores are equal, and a test row whose score equals q is always covered by
the closed interval: coverage can exceed 1 - alpha + 1/(n + 1). ``ties="random"`` breaks the ties
at random, as if every score carried an independent uniform U as a second key (Vovk, Gammerman
and Shafer, *Algorithmic learning in a random world*, 2005: smoothed conformal predictors): q and
the U of the calibration row of rank ceil((n + 1)(1 - alpha)) in the order (score, U) give the
``boundary_share`` u; a new row's interval is closed (its ends included) when its own U is at
most u, open (each end moved inwards by one floating-point step) otherwise. The scores are then
distinct with probability one and both bounds hold with ties too. Which rows get open ends
depends only on their position and the random state, never on their data.

The same functions serve proxboost's estimators (``BoostingRegressor.calibrate``) and any other
pair of quantile predictions (the benchmark calibrates every method with this code).

The rank is computed exactly. A level or an ``alpha`` given as a float is taken as the decimal it
prints as (``repr``: the shortest decimal that reads back as that float, i.e. what the user
wrote), so that levels (0.2, 0.8) give alpha = 2/5 exactly and the rank ceil((n + 1) 3/5) in
integer arithmetic; in floating point 1 - (0.8 - 0.2) is 0.3999999999999999 and the rank would
be one too high whenever n + 1 is a multiple of 5. A :class:`fractions.Fraction` is taken as is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np


def exact_level(value) -> Fraction:
    """``value`` as an exact rational: a Fraction or an int as is, a float as the decimal it
    prints as (``Fraction(repr(float(value)))``: 0.8 is 4/5, not the binary double nearest it)."""
    if isinstance(value, (Fraction, int)) and not isinstance(value, bool):
        return Fraction(value)
    return Fraction(repr(float(value)))


def levels_alpha(tau_low, tau_high) -> Fraction:
    """The miscoverage alpha = 1 - (tau_high - tau_low) of the interval between two quantile
    levels, exactly (each level as the decimal it prints as: :func:`exact_level`)."""
    return 1 - (exact_level(tau_high) - exact_level(tau_low))


def conformal_rank(n: int, alpha) -> int:
    """ceil((n + 1)(1 - alpha)) in integer arithmetic (``alpha`` exactly: :func:`exact_level`)."""
    a = exact_level(alpha)
    p, q = (1 - a).numerator, (1 - a).denominator
    return -((-(int(n) + 1) * p) // q)


#: How equal conformity scores are ordered: ``closed`` (a row whose score equals q is covered:
#: the intervals are closed) or ``random`` (ties broken by an independent uniform per row).
TIES = ("closed", "random")


def check_ties(ties) -> str:
    """``ties`` if it is one of :data:`TIES`; ValueError naming the allowed values otherwise."""
    if not isinstance(ties, str) or ties not in TIES:
        raise ValueError(f"ties={ties!r} is not allowed; allowed values: {', '.join(TIES)}")
    return ties


@dataclass(frozen=True)
class Calibration:
    """What conformal calibration learns: the ``correction`` q added to both ends, and the
    ``boundary_share`` u: the probability that a new row's interval includes its ends (1.0 with
    ``ties="closed"``; with ``ties="random"``, the U of the row of rank q)."""

    correction: float
    boundary_share: float = 1.0


def cqr_correction(lower, upper, y, alpha) -> float:
    """The correction q of conformalized quantile regression at miscoverage ``alpha`` (a float,
    taken as the decimal it prints as, or a Fraction: see :func:`conformal_rank`).

    Returns +inf when the calibration set is too small for the level (ceil((n + 1)(1 - alpha))
    > n): no finite interval has the guarantee then.
    """
    return cqr_calibration(lower, upper, y, alpha).correction


def cqr_calibration(lower, upper, y, alpha, ties="closed", random_state=None) -> Calibration:
    """:class:`Calibration` of conformalized quantile regression: q as in :func:`cqr_correction`
    and, with ``ties="random"``, the boundary share drawn with ``random_state`` (anything
    :func:`numpy.random.default_rng` takes): one uniform per calibration row, in row order."""
    check_ties(ties)
    lower, upper, y = (np.asarray(a, dtype=float).ravel() for a in (lower, upper, y))
    if not (len(lower) == len(upper) == len(y)) or len(y) == 0:
        raise ValueError(
            f"calibration needs as many lower, upper and y values, at least one; got "
            f"{len(lower)}, {len(upper)} and {len(y)}"
        )
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha={alpha!r} is not allowed; allowed values: a float in (0, 1)")
    scores = np.maximum(lower - y, y - upper)
    n = len(scores)
    rank = conformal_rank(n, alpha)
    if rank > n:
        return Calibration(math.inf)
    if ties == "closed":
        return Calibration(float(np.partition(scores, rank - 1)[rank - 1]))
    u = np.random.default_rng(random_state).random(n)
    row = np.lexsort((u, scores))[rank - 1]  # rank in the order (score, U)
    return Calibration(float(scores[row]), float(u[row]))


def boundary_draws(n, boundary_share, random_state=None):
    """Which of ``n`` new rows get closed ends (a boolean array): all of them for a share of 1,
    else row i when its uniform U_i (drawn with ``random_state``, in row order) is at most the
    share."""
    if boundary_share >= 1.0:
        return np.ones(n, dtype=bool)
    return np.random.default_rng(random_state).random(n) <= boundary_share


def conformal_interval(lower, upper, correction, closed=None):
    """``(lower - q, upper + q)``. A negative q narrows the interval; where it would make the
    lower end pass the upper one (an interval narrower than -2q), both ends are set to the middle
    of the uncorrected interval: an empty interval is never returned.

    ``closed`` (a boolean per row, default all True; :func:`boundary_draws`): where False, the
    row's ends are moved inwards by one floating-point step (``numpy.nextafter``), so that a y
    on an end of the interval is not covered; an interval of a single point stays closed (it
    would be empty otherwise)."""
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    lo, hi = lower - correction, upper + correction
    crossed = lo > hi
    if np.any(crossed):
        middle = lower[crossed] / 2.0 + upper[crossed] / 2.0
        lo, hi = lo.copy(), hi.copy()
        lo[crossed] = hi[crossed] = middle
    if closed is not None:
        open_ = ~np.asarray(closed, dtype=bool) & (lo < hi)
        if np.any(open_):
            lo, hi = lo.copy(), hi.copy()
            lo[open_] = np.nextafter(lo[open_], np.inf)
            hi[open_] = np.nextafter(hi[open_], -np.inf)
            # two steps inwards can pass each other on an interval one step wide: keep one point
            lo[open_] = np.minimum(lo[open_], hi[open_])
    return lo, hi


def coverage_and_width(lower, upper, y) -> tuple[float, float]:
    """``(coverage, width)``: the fraction of the rows with lower <= y <= upper and the mean of
    upper - lower (+inf for an infinite interval)."""
    lower, upper, y = (np.asarray(a, dtype=float).ravel() for a in (lower, upper, y))
    return float(np.mean((lower <= y) & (y <= upper))), float(np.mean(upper - lower))


def interval_measurement(
    lower, upper, y, calibration, evaluation, alpha, ties="closed", random_state=None
) -> dict:
    """Coverage and width of an interval before and after conformal calibration, for any pair
    of lower and upper predictions (one model's outer levels, two separate quantile models, a
    quantile forest): the correction q (:func:`cqr_correction`) is computed on the rows
    ``calibration`` only, coverage and width are measured on the rows ``evaluation`` only (two
    disjoint index arrays into ``lower``, ``upper`` and ``y``), raw and calibrated
    (:func:`conformal_interval`). The columns of a result row:

    ``interval_nominal`` (1 - alpha), ``coverage_raw``, ``width_raw``, ``interval_correction``,
    ``coverage_calibrated``, ``width_calibrated``, ``n_calibration``, ``n_coverage``, and
    ``crossing_raw``: the share of the evaluation rows whose lower bound is above their upper
    bound (separate models can cross; a model of ordered levels cannot), and
    ``crossing_calibrated``: the share whose corrected bounds ``lower - q`` and ``upper + q``
    cross (a negative q can make any interval cross; :func:`conformal_interval` then sets both
    ends to the middle).

    With ``ties="random"`` (:func:`cqr_calibration`), one generator made from ``random_state``
    draws the calibration rows' uniforms, then the evaluation rows' (:func:`boundary_draws`), and
    the row gets two more columns: ``interval_ties`` ("random") and ``interval_boundary_share``."""
    lower, upper, y = (np.asarray(a, dtype=float).ravel() for a in (lower, upper, y))
    cal, ev = np.asarray(calibration, dtype=np.intp), np.asarray(evaluation, dtype=np.intp)
    if len(np.intersect1d(cal, ev)) or len(cal) == 0 or len(ev) == 0:
        raise ValueError(
            "calibration and evaluation rows must be disjoint and non-empty; got "
            f"{len(cal)} and {len(ev)} rows, {len(np.intersect1d(cal, ev))} in both"
        )
    rng = np.random.default_rng(random_state) if ties == "random" else None
    fit = cqr_calibration(lower[cal], upper[cal], y[cal], alpha, ties, rng)
    q = fit.correction
    coverage_raw, width_raw = coverage_and_width(lower[ev], upper[ev], y[ev])
    closed = boundary_draws(len(ev), fit.boundary_share, rng) if rng is not None else None
    lo, hi = conformal_interval(lower[ev], upper[ev], q, closed)
    coverage_cal, width_cal = coverage_and_width(lo, hi, y[ev])
    ties_columns = (
        {"interval_ties": ties, "interval_boundary_share": fit.boundary_share}
        if ties == "random"
        else {}
    )
    return {
        "interval_nominal": float(1 - exact_level(alpha)),
        "coverage_raw": coverage_raw,
        "width_raw": width_raw,
        "interval_correction": q,
        "coverage_calibrated": coverage_cal,
        "width_calibrated": width_cal,
        "n_calibration": len(cal),
        "n_coverage": len(ev),
        "crossing_raw": float(np.mean(lower[ev] > upper[ev])),
        "crossing_calibrated": float(np.mean(lower[ev] - q > upper[ev] + q)),
        **ties_columns,
    }
