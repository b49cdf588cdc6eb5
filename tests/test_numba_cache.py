"""numba's cache folder is named by the kernel sources, so no stale kernel is ever loaded."""

import os
import shutil
import subprocess
import sys
import time
import warnings

import pytest

from proxboost import _numba_cache


def _copy(tmp_path):
    package = tmp_path / "proxboost"
    shutil.copytree(_numba_cache.PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    return package


def test_the_key_changes_with_any_kernel_source_and_only_with_them(tmp_path):
    package = _copy(tmp_path)
    key = _numba_cache.sources_key(package)
    assert key == _numba_cache.sources_key(_numba_cache.PACKAGE)
    report = package / "report.py"  # no compiled code
    report.write_text(report.read_text() + "\n# a comment\n")
    assert _numba_cache.sources_key(package) == key
    splitting = package / "engines" / "_exact" / "splitting.py"  # called by the cached grower
    splitting.write_text(splitting.read_text().replace("np.", "np .", 1))
    assert _numba_cache.sources_key(package) != key


def test_the_tests_themselves_use_the_versioned_folder():
    """pytest's own start must not import numba before tests/conftest.py imports proxboost (a
    warning filter naming numba's warning class did): the test processes would otherwise
    cache beside the sources, where an edit of a kernel's callee left the kernel stale."""
    import numba

    expected = _numba_cache.cache_root() / _numba_cache.sources_key()
    mine = os.environ.get("NUMBA_CACHE_DIR")
    if mine and mine != str(expected):
        pytest.skip("NUMBA_CACHE_DIR was set before the tests started: the user's choice")
    assert numba.config.CACHE_DIR == str(expected)


def test_a_kernel_numba_cannot_cache_fails_its_test():
    """pyproject.toml's warning filter (by message: the class is numba's)."""
    from numba.core.errors import NumbaWarning

    message = 'Cannot cache compiled function "f" as it uses ...'
    with pytest.raises(NumbaWarning, match="Cannot cache compiled function"):
        warnings.warn(NumbaWarning(message), stacklevel=1)


def _cache_dir_in_a_fresh_process(env):
    code = "import os, proxboost; print(os.environ.get('NUMBA_CACHE_DIR'))"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


@pytest.mark.slow
def test_importing_proxboost_points_numba_at_the_versioned_folder(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    root = tmp_path / "proxboost" / "numba"
    unused = _numba_cache.IN_USE_SECONDS + 3600
    for i in range(_numba_cache.KEEP + 3):  # folders of other source versions, long unused
        (root / f"old{i}").mkdir(parents=True)
        os.utime(root / f"old{i}", (time.time() - unused - 100 * (i + 1),) * 2)
    expected = root / _numba_cache.sources_key()
    assert _cache_dir_in_a_fresh_process(env) == str(expected)
    kept = sorted(p.name for p in root.iterdir())
    assert (
        len(kept) == _numba_cache.KEEP + 1
        and "old0" in kept
        and f"old{_numba_cache.KEEP + 2}" not in kept
    )
    # beyond the last few, a folder used recently may be another checkout's, in use: kept
    for i in range(_numba_cache.KEEP + 2):
        (root / f"recent{i}").mkdir()
        os.utime(root / f"recent{i}", (time.time() - 60 * (i + 1),) * 2)
    os.utime(expected, (time.time() - unused,) * 2)  # (this version's folder is touched anyway)
    assert _cache_dir_in_a_fresh_process(env) == str(expected)
    kept = {p.name for p in root.iterdir()}
    assert {f"recent{i}" for i in range(_numba_cache.KEEP + 2)} <= kept
    assert not any(name.startswith("old") for name in kept)
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "mine")  # the user's choice is kept
    assert _cache_dir_in_a_fresh_process(env) == str(tmp_path / "mine")
