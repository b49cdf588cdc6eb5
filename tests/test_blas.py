"""NumPy's BLAS products from compiled code (``proxboost._blas``): NumPy's bits, natively or
through the fallback."""

import os

import numpy as np
import pytest

from proxboost import _blas


def _cases(seed, n=300):
    """Random ``(w, M, t)``: t of the T rows used, 0 to 8 columns, magnitudes 16 decades apart
    (long sums where an order of additions shows)."""
    rng = np.random.RandomState(seed)
    for _ in range(n):
        T = int(rng.randint(1, 2500))
        t, k = int(rng.randint(1, T + 1)), int(rng.randint(0, 9))
        M = rng.normal(size=(T, k)) * 10.0 ** rng.uniform(-8, 8, size=(T, 1))
        w = 1.0 + rng.exponential(size=T) * rng.randint(0, 2)
        yield w, M, t


def test_vecmat_gives_numpys_product_bit_for_bit():
    for w, M, t in _cases(0):
        out = np.full(M.shape[1], np.nan)
        _blas.vecmat(w, M, t, out)
        expected = np.asarray(w[:t]) @ np.asarray(M[:t])
        assert out.tobytes() == expected.tobytes(), (t, M.shape)


def test_a_written_loop_would_not():
    """The check above can fail: a plain left-to-right sum differs from NumPy's BLAS product."""
    differ = 0
    for w, M, t in _cases(1, n=50):
        naive = np.zeros(M.shape[1])
        for i in range(t):
            naive = naive + w[i] * M[i]
        differ += naive.tobytes() != (w[:t] @ M[:t]).tobytes()
    assert differ > 0


def test_the_fallback_gives_numpys_bits_and_the_check_catches_a_wrong_function():
    assert _blas._gives_numpy_bits(_blas._gemv_by_numpy, _blas._dot_by_numpy)

    @_blas._DOT_TYPE
    def wrong_dot(n, x, incx, y, incy):  # a left-to-right sum
        a = np.ctypeslib.as_array(_blas.ctypes.cast(x, _blas.ctypes.POINTER(_blas._f64)), (n,))
        b = np.ctypeslib.as_array(_blas.ctypes.cast(y, _blas.ctypes.POINTER(_blas._f64)), (n,))
        total = 0.0
        for i in range(n):
            total += a[i] * b[i]
        return total

    assert not _blas._gives_numpy_bits(_blas._gemv_by_numpy, wrong_dot)


@pytest.mark.skipif(
    not _blas._library_paths(), reason="this NumPy does not ship scipy-openblas (not a wheel)"
)
def test_numpys_wheel_blas_is_called_natively():
    assert _blas.NATIVE
    assert all(os.path.exists(p) for p in _blas._library_paths())
