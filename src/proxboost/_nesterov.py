"""Nesterov's sequence of the accelerated algorithms: the alphas and the weights they give the
trees of the model (its own module so that both boosting loops, Python and compiled, take them
from one place without importing each other).

Both are recurrences over the T iterations, compiled (numba) so that a fit does not spend a
Python loop of T steps on them (about 1.7 ms for the alphas and 0.8 ms for the weights at
T = 1000, against a whole compiled fit of about 40 ms on small data). Compiled code performs
the same IEEE operations in the same order as the Python loop they replace (numba contracts no
multiply-add unless asked to, and its square root is correctly rounded, as NumPy's), so the
numbers are the same bit for bit: ``tests/test_nesterov.py`` checks it against the loops
written in Python.
"""

import numpy as np
from numba import njit


@njit(error_model="numpy", cache=True, nogil=True)
def nesterov_alphas(n_estimators):
    """Nesterov's alpha_1 .. alpha_T (beta_0 = 1, so alpha_1 = 0 and alpha_2 ~ 0.2818)."""
    alphas = np.empty(n_estimators)
    beta = 1.0
    for t in range(n_estimators):
        beta_next = (1.0 + np.sqrt(1.0 + 4.0 * beta * beta)) / 2.0
        alphas[t] = (beta - 1.0) / beta_next
        beta = beta_next
    return alphas


def model_weights(alphas):
    """Weights w_0 .. w_T of f_T = sum_t w_t c_t given alpha_1 .. alpha_T.

    w_0 = 1, w_T = 1 and w_t = 1 + alpha_t w_{t+1}, i.e. w_t = 1 + sum_{j=t}^{T-1} prod_{k=t}^{j}
    alpha_k.
    """
    return _model_weights(np.ascontiguousarray(alphas, dtype=np.float64))


@njit(error_model="numpy", cache=True, nogil=True)
def _model_weights(alphas):
    T = alphas.shape[0]
    weights = np.ones(T + 1)
    for t in range(T - 1, 0, -1):
        weights[t] = 1.0 + alphas[t - 1] * weights[t + 1]
    return weights
