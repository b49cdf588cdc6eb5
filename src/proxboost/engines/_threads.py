"""Threads of the engines' parallel kernels (``n_jobs``).

numba's ``workqueue`` threading layer aborts the process when two Python threads enter parallel
kernels at once, which the experiment launcher does (it runs fits in threads): the parallel
kernels therefore run only on the thread-safe ``omp`` or ``tbb`` layer, and on one thread (the
serial kernels, with a one-line warning) where neither can be loaded. The thread count is set
per call (``numba.set_num_threads`` is per calling thread) and restored afterwards.
"""

import os
import warnings
from contextlib import contextmanager

import numba

SAFE_LAYERS = ("omp", "tbb")

_warned = False


def resolve_n_jobs(n_jobs):
    """The thread count of ``n_jobs`` (scikit-learn's rule): None -> 1, -1 -> all cores,
    -k -> cores + 1 - k (at least 1); 0 is refused."""
    if n_jobs is None:
        return 1
    n_jobs = int(n_jobs)
    if n_jobs == 0:
        raise ValueError("n_jobs=0 is not allowed; allowed values: None, -1, an integer != 0")
    if n_jobs < 0:
        return max((os.cpu_count() or 1) + 1 + n_jobs, 1)
    return n_jobs


def threading_layer():
    """The thread-safe layer the parallel kernels run on ("omp" or "tbb"), or None.

    Before numba has launched its threads, a default configuration is narrowed to
    "threadsafe" (tbb, else omp) so that the launch never picks ``workqueue``; once launched,
    the layer is whatever numba loaded."""
    from numba.np.ufunc import parallel

    if not parallel._is_initialized:
        previous = numba.config.THREADING_LAYER
        if previous == "default":
            numba.config.THREADING_LAYER = "threadsafe"
        try:
            parallel._launch_threads()
        except (ValueError, ImportError, OSError):
            numba.config.THREADING_LAYER = previous  # no thread-safe layer: leave numba as it was
            return None
    layer = numba.threading_layer()
    return layer if layer in SAFE_LAYERS else None


def requested_threads(n_jobs):
    """The thread count ``n_jobs`` asks for, clamped to ``numba.config.NUMBA_NUM_THREADS``."""
    return max(min(resolve_n_jobs(n_jobs), int(numba.config.NUMBA_NUM_THREADS)), 1)


def engine_threads(n_jobs):
    """The threads an engine's kernels use for ``n_jobs``: clamped to
    ``numba.config.NUMBA_NUM_THREADS``; 1 (with a one-time warning) without a thread-safe
    threading layer."""
    global _warned
    k = requested_threads(n_jobs)
    if k <= 1:
        return 1
    if threading_layer() is None:
        if not _warned:
            _warned = True
            warnings.warn(
                f"n_jobs={n_jobs!r}: numba has no thread-safe threading layer (omp or tbb); "
                "the trees grow on one thread (same numbers)",
                RuntimeWarning,
                stacklevel=3,
            )
        return 1
    return k


@contextmanager
def numba_threads(k):
    """numba's thread count set to k for the calling thread inside the block, then restored."""
    previous = numba.get_num_threads()
    numba.set_num_threads(k)
    try:
        yield
    finally:
        numba.set_num_threads(previous)
