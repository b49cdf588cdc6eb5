"""Nesterov's alphas and model weights, compiled: the same numbers as the loops written in
Python, bit for bit (stored rows depend on them), and the recurrences' identities."""

import math

import numpy as np
import pytest

from proxboost._nesterov import model_weights, nesterov_alphas


def _alphas_in_python(T):
    """The recurrence as plain Python floats (math.sqrt: correctly rounded, as numba's)."""
    out, beta = [], 1.0
    for _ in range(T):
        beta_next = (1.0 + math.sqrt(1.0 + 4.0 * beta * beta)) / 2.0
        out.append((beta - 1.0) / beta_next)
        beta = beta_next
    return np.array(out, dtype=np.float64)


def _weights_in_python(alphas):
    T = len(alphas)
    weights = [1.0] * (T + 1)
    for t in range(T - 1, 0, -1):
        weights[t] = 1.0 + float(alphas[t - 1]) * weights[t + 1]
    return np.array(weights)


@pytest.mark.parametrize("T", [0, 1, 2, 3, 17, 1000, 5000])
def test_alphas_equal_the_python_recurrence_bit_for_bit(T):
    alphas = nesterov_alphas(T)
    assert alphas.shape == (T,) and alphas.dtype == np.float64
    np.testing.assert_array_equal(alphas, _alphas_in_python(T))


@pytest.mark.parametrize("T", [0, 1, 2, 17, 1000, 5000])
def test_weights_equal_the_python_recurrence_bit_for_bit(T):
    for alphas in (nesterov_alphas(T), np.zeros(T), np.random.RandomState(T).uniform(-1, 1, T)):
        np.testing.assert_array_equal(model_weights(alphas), _weights_in_python(alphas))


def test_weights_take_lists_views_and_integers():
    alphas = nesterov_alphas(50)
    reference = _weights_in_python(alphas[::2])
    np.testing.assert_array_equal(model_weights(alphas[::2]), reference)  # a strided view
    np.testing.assert_array_equal(model_weights(list(alphas[::2])), reference)
    np.testing.assert_array_equal(model_weights(np.zeros(4, np.int64)), np.ones(5))


def test_alphas_behave_as_nesterov_s_sequence():
    # alpha_1 = 0, increasing below 1, and alpha_t ~ (t - 1) / (t + 2) (beta_t ~ (t + 1) / 2)
    alphas = nesterov_alphas(2000)
    assert alphas[0] == 0.0 and np.all(np.diff(alphas) > 0) and alphas[-1] < 1.0
    t = np.arange(1, 2001)
    np.testing.assert_allclose(alphas[999:], ((t - 1) / (t + 2))[999:], rtol=1e-2)
