"""Prediction intervals of a model of several quantile levels: the outermost levels' predictions,
conformalized on calibration rows (conformalized quantile regression, :mod:`proxboost.conformal`).
"""

import numpy as np
from sklearn.utils.validation import check_is_fitted

from proxboost.conformal import conformal_interval, cqr_correction, levels_alpha
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

    def calibrate(self, X_cal, y_cal):
        """Conformalize the interval of the outermost levels on rows used neither for fitting
        nor for model selection (conformalized quantile regression, ``proxboost.conformal``):
        ``predict_interval`` then has coverage at least tau_K - tau_1 on new exchangeable rows,
        with the levels of the fit (a ``tau`` changed by ``set_params`` since then takes effect
        at the next ``fit``). Sets ``interval_correction_`` (+inf when there are too few rows
        for that level)."""
        taus = self._check_interval_model()
        y_cal = self._encode_target(y_cal, fit=False)
        P = self.predict(X_cal)
        alpha = levels_alpha(taus[0], taus[-1])  # exact: the rank is an integer
        self.interval_correction_ = cqr_correction(P[:, 0], P[:, -1], y_cal, alpha)
        return self

    def predict_interval(self, X):
        """(n, 2): the predictions of the outermost levels tau_1 and tau_K (nominal coverage
        tau_K - tau_1), conformalized when ``calibrate`` was called (see
        :func:`proxboost.conformal.conformal_interval` for a negative correction)."""
        self._check_interval_model()
        P = self.predict(X)
        lower, upper = P[:, 0], P[:, -1]
        correction = getattr(self, "interval_correction_", None)
        if correction is not None:
            lower, upper = conformal_interval(lower, upper, correction)
        return np.column_stack([lower, upper])
