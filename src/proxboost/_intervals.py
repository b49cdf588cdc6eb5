"""Prediction intervals of a model of several quantile levels: the outermost levels' predictions,
conformalized on calibration rows (conformalized quantile regression, :mod:`proxboost.conformal`).
"""

import numpy as np
from sklearn.utils.validation import check_is_fitted

from proxboost.conformal import (
    boundary_draws,
    check_ties,
    conformal_interval,
    cqr_calibration,
    levels_alpha,
)
from proxboost.losses import MultiQuantile


class QuantileIntervals:
    """``calibrate`` and ``predict_interval`` of :class:`proxboost.BoostingRegressor` (a mixin)."""

    def _fitted_taus(self):
        """The levels the model was fitted with (an array), or None for a single-level loss:
        the fitted loss's, never ``self.tau``, which ``set_params`` may have changed since."""
        check_is_fitted(self)
        return self.loss_.taus if isinstance(self.loss_, MultiQuantile) else None

    def _check_interval_model(self):
        taus = self._fitted_taus()
        if taus is None or len(taus) < 2:
            raise ValueError(
                "an interval needs at least two quantile levels; this model was fitted with "
                f"{self.loss_!r}: fit with e.g. loss='pinball', tau=[0.05, 0.95]"
            )
        return taus

    def calibrate(self, X_cal, y_cal, *, ties="closed", random_state=None):
        """Conformalize the interval of the outermost levels on rows used neither for fitting
        nor for model selection (conformalized quantile regression, ``proxboost.conformal``):
        ``predict_interval`` then has coverage at least tau_K - tau_1 on new exchangeable rows,
        with the levels of the fit (a ``tau`` changed by ``set_params`` since then takes effect
        at the next ``fit``). Sets ``interval_correction_`` (+inf when there are too few rows
        for that level).

        ``ties="random"`` breaks ties between equal conformity scores at random (a discrete
        target, e.g. integers, gives many): coverage is then also at most
        1 - alpha + 1/(n + 1) on average, where the closed interval can cover more. The
        intervals of ``predict_interval`` then include their ends with probability
        ``interval_boundary_share_``, drawn per row from ``random_state`` (None, an int or a
        numpy Generator; an int makes ``calibrate`` and every later ``predict_interval`` call
        repeatable: the same rows in the same order get the same intervals)."""
        check_ties(ties)
        taus = self._check_interval_model()
        y_cal = self._encode_target(y_cal, fit=False)
        P = self.predict(X_cal)
        alpha = levels_alpha(taus[0], taus[-1])  # exact: the rank is an integer
        rng = np.random.default_rng(random_state)
        fit = cqr_calibration(P[:, 0], P[:, -1], y_cal, alpha, ties, rng)
        self.interval_correction_ = fit.correction
        # the boundary share and the seed of predict_interval's per-row draws (from the same
        # generator, after the calibration rows' draws: an independent stream). Read only while
        # interval_correction_ exists: a fit drops it, and with it this calibration.
        seed = int(rng.integers(2**63)) if ties == "random" else None
        self._interval_ties = (fit.boundary_share, seed)
        return self

    @property
    def interval_boundary_share_(self):
        """The probability that an interval of ``predict_interval`` includes its ends: 1.0 after
        ``calibrate(..., ties="closed")``; with ``ties="random"``, the uniform of the calibration
        row of the correction's rank (:func:`proxboost.conformal.cqr_calibration`)."""
        if not hasattr(self, "interval_correction_"):
            raise AttributeError(
                "interval_boundary_share_ exists after calibrate(); this model is not calibrated"
            )
        return getattr(self, "_interval_ties", (1.0, None))[0]

    def predict_interval(self, X):
        """(n, 2): the predictions of the outermost levels tau_1 and tau_K (nominal coverage
        tau_K - tau_1), conformalized when ``calibrate`` was called (see
        :func:`proxboost.conformal.conformal_interval` for a negative correction; with
        ``calibrate(..., ties="random")``, a row's ends are included with probability
        ``interval_boundary_share_``, see :func:`proxboost.conformal.boundary_draws`)."""
        self._check_interval_model()
        P = self.predict(X)
        lower, upper = P[:, 0], P[:, -1]
        correction = getattr(self, "interval_correction_", None)
        if correction is not None:
            share, seed = getattr(self, "_interval_ties", (1.0, None))
            closed = None if seed is None else boundary_draws(len(lower), share, seed)
            lower, upper = conformal_interval(lower, upper, correction, closed)
        return np.column_stack([lower, upper])
