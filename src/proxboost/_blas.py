"""NumPy's own BLAS products inside compiled code, bit for bit.

A BLAS product adds its terms in the order of BLAS's kernel (blocks, several accumulators, fused
multiply-adds), which compiled code cannot reproduce by writing the loop. The several-level loop
(:mod:`proxboost._compiled_multi`) needs ``w @ M`` exactly as NumPy computes it (the gap budget
of the Python loop, ``_multi_quantile.gap_bounds``), so it calls the very function NumPy calls:

* ``w @ M`` with ``M`` of shape (t, k), k >= 2, C-contiguous: ``cblas_dgemv(RowMajor, Trans, t,
  k, 1.0, M, k, w, 1, 0.0, out, 1)``;
* with k = 1 NumPy's matmul takes its dot-product path: ``0.0 + cblas_ddot(t, w, 1, M, 1)``.

:func:`vecmat` emits these calls by symbol name (``proxboost_numpy_dgemv``,
``proxboost_numpy_ddot``), registered with LLVM when this module is imported, so that numba can
cache the kernels that call them (a ctypes pointer of this process could not be cached, see
:mod:`proxboost._clock`). The symbols point at the BLAS library NumPy's wheels ship
(scipy-openblas, 64-bit integers, whose functions carry the ``scipy_`` prefix and the ``64_``
suffix), after a check on random products that they give NumPy's bits: :data:`NATIVE` says
whether they do. Where the library is not found or the check fails (another NumPy build), the
symbols point at a small Python function that computes the product with NumPy itself (ctypes
takes the GIL for it): the same numbers, at the cost of a call into Python.
"""

import ctypes
import glob
import os

import numpy as np
from llvmlite import binding as ll
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

GEMV_SYMBOL, DOT_SYMBOL = "proxboost_numpy_dgemv", "proxboost_numpy_ddot"
ROW_MAJOR, TRANS = 101, 112  # CBLAS_ORDER, CBLAS_TRANSPOSE

_i32, _i64, _f64, _ptr = ctypes.c_int32, ctypes.c_int64, ctypes.c_double, ctypes.c_void_p
_GEMV_TYPE = ctypes.CFUNCTYPE(
    None, _i32, _i32, _i64, _i64, _f64, _ptr, _i64, _ptr, _i64, _f64, _ptr, _i64
)
_DOT_TYPE = ctypes.CFUNCTYPE(_f64, _i64, _ptr, _i64, _ptr, _i64)


def _library_paths():
    """Where NumPy's wheels keep their OpenBLAS (Linux, macOS, Windows)."""
    root = os.path.dirname(os.path.abspath(np.__file__))
    patterns = [
        os.path.join(root, os.pardir, "numpy.libs", "libscipy_openblas64_*"),
        os.path.join(root, ".dylibs", "libscipy_openblas64_*"),
        os.path.join(root, os.pardir, "numpy.libs", "libscipy_openblas64_*.dll"),
    ]
    return sorted({p for pattern in patterns for p in glob.glob(pattern)})


def _native():
    """(gemv, dot) ctypes functions of NumPy's scipy-openblas, or None."""
    for path in _library_paths():
        try:
            lib = ctypes.CDLL(path)
            gemv, dot = lib.scipy_cblas_dgemv64_, lib.scipy_cblas_ddot64_
        except (OSError, AttributeError):
            continue
        gemv.argtypes, gemv.restype = _GEMV_TYPE._argtypes_, None
        dot.argtypes, dot.restype = _DOT_TYPE._argtypes_, _f64
        return gemv, dot
    return None


def _vecmat_with(gemv, dot, w, M):
    """``w @ M`` (M of shape (t, k), C-contiguous float64) by the calls of the module docstring,
    through ctypes: the import-time check runs before any compiled code may call the symbols,
    so it calls the candidate functions the way :func:`vecmat` will (``tests/test_blas.py``
    checks :func:`vecmat` itself against NumPy)."""
    t, k = M.shape
    if k == 1:
        return np.array([0.0 + dot(t, w.ctypes.data, 1, M.ctypes.data, 1)])
    out = np.empty(k)
    gemv(ROW_MAJOR, TRANS, t, k, 1.0, M.ctypes.data, k, w.ctypes.data, 1, 0.0, out.ctypes.data, 1)
    return out


def _gives_numpy_bits(gemv, dot, cases=60, seed=0):
    """Whether the two functions give NumPy's ``w @ M`` bit for bit on random products of the
    budget's shapes (t up to a few thousand trees, 1 to 8 columns, magnitudes far apart)."""
    rng = np.random.RandomState(seed)
    for _ in range(cases):
        t, k = int(rng.randint(1, 3000)), int(rng.randint(1, 9))
        M = rng.normal(size=(t, k)) * 10.0 ** rng.uniform(-8, 8, size=(t, 1))
        w = 1.0 + rng.exponential(size=t) * rng.randint(0, 2)
        if _vecmat_with(gemv, dot, w, M).tobytes() != (w @ M).tobytes():
            return False
    return True


@_GEMV_TYPE
def _gemv_by_numpy(order, trans, m, n, alpha, a, lda, x, incx, beta, y, incy):
    """The fallback: ``y = x @ A`` of the module docstring's call, by NumPy (the GIL taken)."""
    A = np.ctypeslib.as_array(ctypes.cast(a, ctypes.POINTER(_f64)), shape=(m, lda))[:, :n]
    w = np.ctypeslib.as_array(ctypes.cast(x, ctypes.POINTER(_f64)), shape=(m,))
    np.ctypeslib.as_array(ctypes.cast(y, ctypes.POINTER(_f64)), shape=(n,))[:] = w @ A


@_DOT_TYPE
def _dot_by_numpy(n, x, incx, y, incy):
    """The fallback of the one-column product, by NumPy."""
    a = np.ctypeslib.as_array(ctypes.cast(x, ctypes.POINTER(_f64)), shape=(n,))
    b = np.ctypeslib.as_array(ctypes.cast(y, ctypes.POINTER(_f64)), shape=(n, 1))
    return float((a @ b)[0])


def _register():
    native = _native()
    if native is not None and _gives_numpy_bits(*native):
        gemv, dot = native
        ok = True
    else:
        gemv, dot, ok = _gemv_by_numpy, _dot_by_numpy, False
    ll.add_symbol(GEMV_SYMBOL, ctypes.cast(gemv, ctypes.c_void_p).value)
    ll.add_symbol(DOT_SYMBOL, ctypes.cast(dot, ctypes.c_void_p).value)
    return ok


#: True: the compiled products call NumPy's BLAS directly; False: they call back into NumPy
NATIVE = _register()


def _data(context, builder, array_type, value):
    return context.make_array(array_type)(context, builder, value).data


@intrinsic
def _gemv_trans(typingctx, t, k, M, w, out):
    """``cblas_dgemv(RowMajor, Trans, t, k, 1.0, M, k, w, 1, 0.0, out, 1)``."""

    def codegen(context, builder, signature, args):
        i32, i64, f64 = ir.IntType(32), ir.IntType(64), ir.DoubleType()
        ptr = f64.as_pointer()
        fnty = ir.FunctionType(
            ir.VoidType(), [i32, i32, i64, i64, f64, ptr, i64, ptr, i64, f64, ptr, i64]
        )
        fn = cgutils.get_or_insert_function(builder.module, fnty, GEMV_SYMBOL)
        t64 = context.cast(builder, args[0], signature.args[0], types.int64)
        k64 = context.cast(builder, args[1], signature.args[1], types.int64)
        m_ptr, w_ptr, out_ptr = (
            _data(context, builder, signature.args[i], args[i]) for i in (2, 3, 4)
        )
        one = ir.Constant(i64, 1)
        builder.call(
            fn,
            [
                ir.Constant(i32, ROW_MAJOR),
                ir.Constant(i32, TRANS),
                t64,
                k64,
                ir.Constant(f64, 1.0),
                m_ptr,
                k64,
                w_ptr,
                one,
                ir.Constant(f64, 0.0),
                out_ptr,
                one,
            ],
        )
        return context.get_dummy_value()

    return types.void(t, k, M, w, out), codegen


@intrinsic
def _ddot(typingctx, t, w, M):
    """``cblas_ddot(t, w, 1, M, 1)``."""

    def codegen(context, builder, signature, args):
        i64, f64 = ir.IntType(64), ir.DoubleType()
        ptr = f64.as_pointer()
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(f64, [i64, ptr, i64, ptr, i64]), DOT_SYMBOL
        )
        t64 = context.cast(builder, args[0], signature.args[0], types.int64)
        w_ptr, m_ptr = (_data(context, builder, signature.args[i], args[i]) for i in (1, 2))
        one = ir.Constant(i64, 1)
        return builder.call(fn, [t64, w_ptr, one, m_ptr, one])

    return types.float64(t, w, M), codegen


@njit(error_model="numpy", cache=True, nogil=True)
def vecmat(w, M, t, out):
    """``out[:] = w[:t] @ M[:t]`` as NumPy computes it (1 <= t; ``w`` and ``M`` C-contiguous,
    ``M`` of shape (T, k) with T >= t, ``out`` of length k)."""
    k = M.shape[1]
    if k == 1:
        out[0] = 0.0 + _ddot(t, w, M)
    elif k > 1:  # (k = 0: nothing to compute; BLAS would refuse lda = 0)
        _gemv_trans(t, k, M, w, out)
