"""scikit-learn's input validation of ``fit``, without its generic work on plain arrays.

``validate_data`` looks for data-frame libraries, reads the estimator's tags, converts and checks
the input in several passes: about 0.13 ms for X and y and 0.07 ms for an eval set's X, even on
small float64 arrays, which is 2 % of a 1,000-tree fit on crabs. For the inputs it would return
unchanged (float64 NumPy arrays: X 2-d with at least one row and one column, no infinity; y 1-d,
C-contiguous, finite, as long as X), the functions below make the same checks in one pass each
and set the same attributes (``n_features_in_``; ``feature_names_in_`` removed, as an array
without column names removes it). Any other input, valid or not, goes to ``validate_data``
itself: its conversions, its error messages and its warnings are scikit-learn's.
``tests/test_plain_data.py`` holds both paths to the same results on valid and invalid inputs.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import validate_data


def _plain_X(X) -> bool:
    """Whether X is an array ``validate_data`` returns as it is (allowing NaN)."""
    return (
        type(X) is np.ndarray
        and X.dtype == np.float64
        and X.ndim == 2
        and X.shape[0] >= 1
        and X.shape[1] >= 1
        and not np.isinf(X).any()
    )


def fit_data(estimator, X, y, y_numeric):
    """``validate_data(estimator, X, y, ensure_all_finite="allow-nan", y_numeric=y_numeric)``
    (``reset=True``): the checked (X, y), ``n_features_in_`` set."""
    plain_y = (
        type(y) is np.ndarray
        and y.dtype == np.float64
        and y.ndim == 1
        and y.flags.c_contiguous
        and _plain_X(X)
        and len(y) == len(X)
        and np.isfinite(y).all()
    )
    if not plain_y:
        return validate_data(estimator, X, y, ensure_all_finite="allow-nan", y_numeric=y_numeric)
    if hasattr(estimator, "feature_names_in_"):  # fitted on named columns before: not now
        delattr(estimator, "feature_names_in_")
    estimator.n_features_in_ = X.shape[1]
    return X, y


def more_data(estimator, X):
    """``validate_data(estimator, X, reset=False, ensure_all_finite="allow-nan")``: rows
    checked against the fit's columns (an eval set's X)."""
    plain = (
        not hasattr(estimator, "feature_names_in_")
        and _plain_X(X)
        and X.shape[1] == getattr(estimator, "n_features_in_", None)
    )
    if not plain:
        return validate_data(estimator, X, reset=False, ensure_all_finite="allow-nan")
    return X
