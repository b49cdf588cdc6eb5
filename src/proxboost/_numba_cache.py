"""Where numba caches the compiled kernels: a folder named by the hash of every kernel source.

numba's on-disk cache checks only the file of the function it loads: a kernel that calls kernels
of other files (the engines' growers call their splitting, histogram and node modules) would
keep running its cached code after one of those files changed, without any error. proxboost
therefore points ``NUMBA_CACHE_DIR`` at ``<user cache>/proxboost/numba/<hash>``, the hash of
every file that holds or feeds compiled code (the ``engines`` package and the modules that
``import numba``): any edit of them gives a fresh folder, so a stale kernel can never be loaded.
A ``NUMBA_CACHE_DIR`` set by the user is left as it is (their choice), as is a process that
imported numba before proxboost (numba reads the variable once). Checkouts of neighbouring
versions (git worktrees) thus share nothing stale. So that the disk does not fill, the folders of
other versions beyond the last few used are removed, but only once unused for two days: a process
of another checkout may still be compiling into one (a sweep runs for hours from a worktree while
its developers import other versions; removing its folder under it made numba fail to save a
kernel).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import time
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
#: Cache folders of other source versions kept (the most recently used ones) ...
KEEP = 4
#: ... and, beyond them, those used within this many seconds (possibly in use by another checkout).
IN_USE_SECONDS = 2 * 24 * 3600


def kernel_sources(package: Path = PACKAGE) -> list[Path]:
    """The files whose change can change a compiled kernel, sorted."""
    engines = set((package / "engines").rglob("*.py"))
    others = {p for p in package.rglob("*.py") if "numba" in p.read_text(encoding="utf-8")}
    return sorted(engines | others)


def sources_key(package: Path = PACKAGE) -> str:
    """16 hex digits of the sha256 of the kernel sources (their paths and bytes)."""
    digest = hashlib.sha256()
    for path in kernel_sources(package):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "proxboost" / "numba"


def use_versioned_cache() -> Path | None:
    """Set ``NUMBA_CACHE_DIR`` to this source version's folder (see the module docstring);
    returns it, or None when it was not ours to set."""
    if os.environ.get("NUMBA_CACHE_DIR") or "numba" in sys.modules:
        return None
    root = cache_root()
    folder = root / sources_key()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        os.utime(folder)  # most recently used
        others = sorted(
            (p for p in root.iterdir() if p.is_dir() and p != folder),
            key=lambda p: p.stat().st_mtime,
            reverse=True,
        )
        for old in others[KEEP:]:
            if time.time() - old.stat().st_mtime > IN_USE_SECONDS:
                shutil.rmtree(old, ignore_errors=True)
    except OSError:  # no writable cache folder: numba's default (beside the sources)
        return None
    os.environ["NUMBA_CACHE_DIR"] = str(folder)
    return folder
