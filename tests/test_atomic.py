"""The atomic counter of the threads' work items (``engines._atomic.fetch_add``)."""

import numba
import numpy as np
import pytest
from numba import njit, prange

from proxboost.engines._atomic import fetch_add
from proxboost.engines._threads import threading_layer


@njit
def _take_serially(counters, i, n):
    out = np.empty(n, np.int64)
    for j in range(n):
        out[j] = fetch_add(counters, i)
    return out


@njit(parallel=True)
def _take_on_threads(counters, taken):
    counters[0] = 0
    for t in prange(taken.shape[0]):
        while True:
            i = fetch_add(counters, 0)
            if i >= taken.shape[1]:
                break
            taken[t, i] += 1  # each taker its own row: no race on the marks


def test_fetch_add_returns_the_value_before_and_adds_one():
    counters = np.array([5, 40], np.int64)
    assert _take_serially(counters, 1, 3).tolist() == [40, 41, 42]
    assert counters.tolist() == [5, 43]


def test_fetch_add_refuses_other_arrays():
    with pytest.raises(numba.core.errors.TypingError):
        _take_serially(np.zeros(2), 0, 1)


@pytest.mark.skipif(threading_layer() is None, reason="no thread-safe threading layer")
def test_threads_take_every_item_exactly_once():
    n = 200_000
    previous = numba.get_num_threads()
    numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
    try:
        for _ in range(3):
            taken = np.zeros((4, n), np.int64)
            counters = np.zeros(1, np.int64)
            _take_on_threads(counters, taken)
            assert np.array_equal(taken.sum(axis=0), np.ones(n, np.int64))
            assert counters[0] == n + 4  # each taker's last try, past the end
    finally:
        numba.set_num_threads(previous)
