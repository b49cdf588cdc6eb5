"""The synthetic models: the paper's two simulations and its introduction example.

Coordinates are written as 1-based superscripts (docs/protocol.md): X¹ is column 0 here.

- ``regression``: X ~ N(0, Σ), Σ_ij = 2^{-|i-j|}, n = 800, d = 100,
  Y = -sin(2X¹) + (X²)² + X³ - exp(-X⁴) + Z, Z ~ N(0, 0.5) (σ = sqrt(0.5)).
- ``classification``: same X law, n = 1500, d = 50,
  Y = +1 if X¹ + (X⁴)³ + X⁹ + sin(X¹²·X¹⁸) + Z > 0.38 else -1, Z ~ N(0, 0.1) (σ = sqrt(0.1)).
- ``sines``: X ~ U[0, 1] (d = 1), Y = sin(2πX) + sin(32πX) + ε, ε ~ N(0, 0.15²), n = 1000.

Missing values: ``load_dataset(..., missing_rate=r)`` replaces each value of X by NaN with
probability r (:func:`remove_values`), after the model's draws.

Random numbers: ``numpy.random.default_rng(random_state)`` (PCG64). For the two Gaussian
models one array of standard normals of shape (n, d + 1) is drawn: its first d columns give
X, its last column the noise, so that the first rows of a larger draw equal a smaller draw
with the same seed, and ``noise_std=0`` with the same seed gives the same X and the
noise-free targets. X is the stationary AR(1) filter X¹ = W¹, X^j = X^{j-1}/2 + sqrt(3/4) W^j
of the standard normals W, whose covariance is exactly 2^{-|i-j|} (O(n·d), no d×d
Cholesky factor, so benchmarks can use large d).
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from scipy.signal import lfilter

REGRESSION_NOISE_STD = math.sqrt(0.5)
CLASSIFICATION_NOISE_STD = math.sqrt(0.1)
CLASSIFICATION_THRESHOLD = 0.38
SINES_NOISE_STD = 0.15


def regression_function(X: np.ndarray) -> np.ndarray:
    """Noise-free ``regression`` target -sin(2X¹) + (X²)² + X³ - exp(-X⁴)."""
    return -np.sin(2.0 * X[:, 0]) + X[:, 1] ** 2 + X[:, 2] - np.exp(-X[:, 3])


def classification_score(X: np.ndarray) -> np.ndarray:
    """Noise-free ``classification`` score X¹ + (X⁴)³ + X⁹ + sin(X¹²·X¹⁸) (label: > 0.38)."""
    return X[:, 0] + X[:, 3] ** 3 + X[:, 8] + np.sin(X[:, 11] * X[:, 17])


def sines_function(X: np.ndarray) -> np.ndarray:
    """Noise-free ``sines`` target sin(2πX) + sin(32πX) of the single column of X."""
    x = X[:, 0]
    return np.sin(2.0 * np.pi * x) + np.sin(32.0 * np.pi * x)


def _check_int(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _check_noise(noise_std) -> float:
    if not isinstance(noise_std, numbers.Real) or not noise_std >= 0 or math.isinf(noise_std):
        raise ValueError(f"noise_std must be a finite number >= 0, got {noise_std!r}")
    return float(noise_std)


def _gaussian_design(rng: np.random.Generator, n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """X ~ N(0, Σ) of shape (n, d) and standard normal noise of shape (n,)."""
    draws = rng.standard_normal((n, d + 1))
    innovations = draws[:, :d].copy()
    innovations[:, 1:] *= math.sqrt(0.75)
    X = lfilter([1.0], [1.0, -0.5], innovations, axis=1)
    return np.ascontiguousarray(X), draws[:, d].copy()


def make_regression(
    n_samples: int = 800,
    n_features: int = 100,
    noise_std: float = REGRESSION_NOISE_STD,
    random_state=None,
) -> tuple[np.ndarray, np.ndarray]:
    """The paper's ``regression`` model.

    Parameters
    ----------
    n_samples : int, default 800
    n_features : int, default 100
        At least 4 (the target uses X¹..X⁴).
    noise_std : float, default sqrt(0.5)
        Standard deviation of the additive Gaussian noise Z.
    random_state : int, numpy Generator or None
        Seed of ``numpy.random.default_rng``; None draws fresh entropy.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64
    y : ndarray of shape (n_samples,), float64
    """
    n = _check_int("n_samples", n_samples, 1)
    d = _check_int("n_features", n_features, 4)
    sigma = _check_noise(noise_std)
    X, z = _gaussian_design(np.random.default_rng(random_state), n, d)
    return X, regression_function(X) + sigma * z


def make_classification(
    n_samples: int = 1500,
    n_features: int = 50,
    noise_std: float = CLASSIFICATION_NOISE_STD,
    random_state=None,
) -> tuple[np.ndarray, np.ndarray]:
    """The paper's ``classification`` model, labels in {-1, +1}.

    Parameters
    ----------
    n_samples : int, default 1500
    n_features : int, default 50
        At least 18 (the score uses X¹⁸).
    noise_std : float, default sqrt(0.1)
        Standard deviation of the Gaussian noise Z added to the score before thresholding.
    random_state : int, numpy Generator or None
        Seed of ``numpy.random.default_rng``; None draws fresh entropy.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64
    y : ndarray of shape (n_samples,), float64 in {-1.0, +1.0}
    """
    n = _check_int("n_samples", n_samples, 1)
    d = _check_int("n_features", n_features, 18)
    sigma = _check_noise(noise_std)
    X, z = _gaussian_design(np.random.default_rng(random_state), n, d)
    score = classification_score(X) + sigma * z
    return X, np.where(score > CLASSIFICATION_THRESHOLD, 1.0, -1.0)


def make_sines(
    n_samples: int = 1000,
    n_features: int = 1,
    noise_std: float = SINES_NOISE_STD,
    random_state=None,
) -> tuple[np.ndarray, np.ndarray]:
    """The ``sines`` model of the paper's introduction.

    Parameters
    ----------
    n_samples : int, default 1000
        The protocol splits it 500 train / 500 test.
    n_features : int, default 1
        Must be 1 (accepted so that all generators share the same parameters).
    noise_std : float, default 0.15
    random_state : int, numpy Generator or None
        Seed of ``numpy.random.default_rng``: X (uniform, shape (n, 1)) is drawn first,
        then the noise.

    Returns
    -------
    X : ndarray of shape (n_samples, 1), float64 in [0, 1)
    y : ndarray of shape (n_samples,), float64
    """
    n = _check_int("n_samples", n_samples, 1)
    if n_features != 1:
        raise ValueError(f"the sines model has exactly one feature; got n_features={n_features!r}")
    sigma = _check_noise(noise_std)
    rng = np.random.default_rng(random_state)
    X = rng.random((n, 1))
    eps = rng.standard_normal(n)
    return X, sines_function(X) + sigma * eps


def remove_values(X: np.ndarray, missing_rate, random_state) -> np.ndarray:
    """X with each value replaced by NaN with probability ``missing_rate`` (missing completely
    at random), drawn from a stream of its own: seed ``[random_state, 1]`` for an integer seed
    (``random_state`` itself gives the model's X), the generator itself when one is given."""
    if (
        isinstance(missing_rate, bool)
        or not isinstance(missing_rate, numbers.Real)
        or not 0 <= missing_rate < 1
    ):
        raise ValueError(f"missing_rate must be a number in [0, 1), got {missing_rate!r}")
    if isinstance(random_state, numbers.Integral):
        random_state = [int(random_state), 1]
    rng = np.random.default_rng(random_state)
    X = np.array(X, dtype=np.float64)
    X[rng.random(X.shape) < missing_rate] = np.nan
    return X
