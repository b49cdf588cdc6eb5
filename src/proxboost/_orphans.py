"""Nothing left behind when ``run.py`` is killed outright (``kill -9``, out of memory).

A killed process runs no handler, so what it started must end, and what it held must be
released, without it:

- **Its workers end by themselves.** Every loky worker of ``run.py`` (the fit pool of a run, the
  pool of Hydra's joblib launcher) starts with :func:`watch_parent` as the pool's initializer, so
  also a worker that never runs a task. A daemon thread compares ``os.getppid()`` with the pid of
  the process that made the pool, every :data:`PARENT_POLL` seconds: when they differ the parent
  is dead (an orphan is adopted by pid 1 or by a subreaper, whose pid is unknown in advance), and
  the worker releases what it holds (:func:`_orphaned`) and ends at once, abandoning any fit in
  progress (its row is never stored; the next run computes it). The compiled tree kernels release
  the GIL, so the thread runs during a fit.
- **Its shared memory is removed.** The named semaphores of a loky pool (``/dev/shm/sem.loky-
  <pid>-*``) and joblib's memory-mapping folders (``joblib_memmapping_folder_<pid>_*``) are named
  after the process that created them. An orphaned worker removes its dead parent's folders (the
  bulk: copies of the data) and stops the parent's resource trackers, which would otherwise print
  a "leaked" warning for each object when the last worker ends (:func:`_stop_resource_trackers`).
  What remains (the semaphores; everything, when the whole process group was killed) is removed
  by :func:`remove_dead_entries` at the start of the next ``run.py``: this user's entries whose
  creator pid is no longer running, with one line saying how many. joblib's folders go to a
  project-named folder (:func:`joblib_temp_folder`, ``$JOBLIB_TEMP_FOLDER``), where it finds
  them too.

The Slurm launcher is not concerned: its jobs are Slurm's, and go on when the submitting command
dies (docs/running.md).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from . import _private_api

__all__ = ["install", "joblib_temp_folder", "remove_dead_entries", "watch_parent"]

#: Seconds between two looks of a worker at its parent's pid.
PARENT_POLL = 1.0

#: Exit code of a worker whose parent died.
EXIT_ORPHANED = 137

SHM = Path("/dev/shm")

#: (pattern of a name in /dev/shm or in the joblib folder, its resource type for loky's tracker)
_ENTRIES = (
    (re.compile(r"^sem\.loky-(\d+)-"), "semlock"),
    (re.compile(r"^joblib_memmapping_folder_(\d+)_"), "folder"),
)


def joblib_temp_folder() -> Path:
    """The folder of joblib's memory-mapping folders in ``run.py``'s processes: a folder of this
    user named after the project, in ``/dev/shm`` (shared memory, where joblib puts them by
    default) or, without it, in the system's temporary folder."""
    base = SHM if SHM.is_dir() and os.access(SHM, os.W_OK) else Path(tempfile.gettempdir())
    return base / f"proxboost-joblib-{os.getuid()}"


def install() -> None:
    """In ``run.py``'s process (and in a job's process): joblib's folders in
    :func:`joblib_temp_folder` (unless ``$JOBLIB_TEMP_FOLDER`` is set), and every loky worker
    started from now on watches this process (:func:`watch_parent`). Idempotent."""
    global _INSTALLED
    if _INSTALLED:
        return
    _INSTALLED = True
    os.environ.setdefault("JOBLIB_TEMP_FOLDER", str(joblib_temp_folder()))
    _private_api.start_loky_workers_with(watch_parent)


_INSTALLED = False


def watch_parent(parent_pid: int) -> None:
    """A pool's initializer: end this worker as soon as ``parent_pid`` (the pool's creator) is no
    longer its parent (:func:`_orphaned`)."""
    threading.Thread(
        target=_watch, args=(int(parent_pid),), name="proxboost-parent-watch", daemon=True
    ).start()


def _watch(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(PARENT_POLL)
    _orphaned(parent_pid)


def _orphaned(parent_pid: int) -> None:
    """The parent died: release this process's split claims, remove the parent's memory-mapping
    folders, stop the parent's resource trackers, end now (a fit in progress is abandoned;
    nothing is stored)."""
    from . import _split_claims  # lazy: the watch must start without the pipeline's imports

    for step in (
        _split_claims.release_all,
        lambda: remove_dead_entries(pids={parent_pid}, kinds=("folder",)),
        _stop_resource_trackers,
        sys.stderr.flush,
    ):
        with contextlib.suppress(Exception):
            step()
    os._exit(EXIT_ORPHANED)


def _stop_resource_trackers() -> None:
    """Stop the resource trackers this worker shares with its dead parent (found by their pipe).

    Left running, each would end with the last worker and print a "leaked" warning for every
    object the parent had registered (a pool's named semaphores, joblib folders, including those
    it named but never created) before removing them. Stopped, they print nothing; what they
    would have removed is removed by the next run (:func:`remove_dead_entries`). The named
    semaphores are left to it on purpose: a sibling worker still starting up may not have
    opened them yet."""
    pipes = set()
    for fd in _private_api.resource_tracker_fds():
        with contextlib.suppress(OSError):
            pipes.add(os.readlink(f"/proc/self/fd/{fd}"))
    if not pipes:
        return
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if b"resource_tracker" not in Path(f"/proc/{pid}/cmdline").read_bytes():
                continue
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{pid}/fd/{fd}") in pipes:
                    os.kill(int(pid), signal.SIGKILL)
                    break


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _entries(folders):
    """``(path, creator pid, resource type)`` of the named semaphores and joblib folders in
    ``folders`` that belong to this user."""
    uid = os.getuid()
    for folder in folders:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            for pattern, rtype in _ENTRIES:
                match = pattern.match(name)
                if match is None:
                    continue
                path = Path(folder) / name
                with contextlib.suppress(OSError):
                    if path.lstat().st_uid == uid:
                        yield path, int(match.group(1)), rtype
                break


def _remove(path: Path, rtype: str) -> bool:
    """Remove one entry; True for the one process that removed it (several orphaned workers may
    try at once: the unlink, or the rename of a folder, succeeds for one only)."""
    try:
        if rtype == "semlock":
            path.unlink()
        else:
            aside = path.with_name(f"{path.name}.removing-{uuid.uuid4().hex[:8]}")
            path.rename(aside)
            shutil.rmtree(aside, ignore_errors=True)
    except OSError:
        return False
    return True


def remove_dead_entries(pids=None, kinds=("semlock", "folder")) -> int:
    """Remove this user's named semaphores and joblib memory-mapping folders (``kinds``), in
    ``/dev/shm`` and in :func:`joblib_temp_folder`, whose creator pid (in their name) is in
    ``pids`` (default: any pid no longer running). Returns how many were removed."""
    folders = dict.fromkeys(
        [SHM, joblib_temp_folder(), Path(os.environ.get("JOBLIB_TEMP_FOLDER", SHM))]
    )
    removed = 0
    for path, pid, rtype in _entries(folders):
        if rtype not in kinds:
            continue
        if (pid not in pids) if pids is not None else _running(pid):
            continue
        removed += _remove(path, rtype)
    return removed


def report_dead_entries() -> None:
    """At the start of ``run.py``: remove what killed runs left in shared memory (one line if
    anything)."""
    removed = remove_dead_entries()
    if removed:
        print(
            f"removed {removed} semaphore(s) and memory-mapping folder(s) left in shared memory by"
            " processes that are no longer running (a killed run)",
            file=sys.stderr,
            flush=True,
        )
