"""The test tiers (README, "Tests") and their order: a parametrised grid marked ``grid`` keeps its
first case in ``make test-fast`` (``-m "not slow"``) and runs every case in ``make test``; a test
marked ``serial`` is left out of ``make test-fast`` and runs in ``make test``'s second,
one-process phase (``-m serial``) and not in its parallel one (``-m "not serial"``); the tests
that take minutes come first. The marks are added by tests/conftest.py's collection hook, which
must run before pytest's own ``-m`` selection (``tryfirst``): collected here in a child pytest on
real test files, as the Makefile collects them."""

import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
GRID = "test_compiled_loop.py::test_compiled_loop_gives_the_python_loops_numbers"


def _collected(*options, path: str = GRID) -> list[str]:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            *options,
            str(TESTS / path),
        ],
        capture_output=True,
        text=True,
        cwd=TESTS.parent,
        check=True,
    ).stdout
    return [line for line in out.splitlines() if "::" in line]


def test_a_grid_keeps_its_first_case_in_the_fast_tier():
    every = _collected()
    fast = _collected("-m", "not slow")
    assert len(every) > 100
    assert fast == every[:1]


def test_the_serial_tests_run_once_alone_and_never_in_the_fast_tier():
    every = _collected(path="test_orphans.py")
    serial = _collected("-m", "serial", path="test_orphans.py")
    parallel = _collected("-m", "not serial", path="test_orphans.py")
    assert len(serial) == 3  # the two tests whose next run must find the shared memory left
    assert sorted(serial + parallel) == sorted(every)
    assert not set(serial) & set(_collected("-m", "not slow", path="test_orphans.py"))


def test_a_test_that_takes_minutes_is_collected_first():
    """conftest.py moves the tests declaring a timeout above the suite's to the front, so that
    `make test`'s parallel workers start them first."""
    order = _collected(path="test_threads.py")
    assert len(order) > 10
    assert order[0].endswith("test_one_thread_neither_calls_nor_compiles_the_parallel_kernels")
