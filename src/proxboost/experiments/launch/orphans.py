"""Nothing left behind when ``run.py`` is killed outright (``kill -9``, out of memory).

A killed process runs no handler, so what it started must end, and what it held must be
released, without it:

- **Its workers end by themselves.** Every loky worker of ``run.py`` (the fit pool of a run, the
  pool of Hydra's joblib launcher) starts with
  :func:`proxboost.experiments.launch.parent_watch.watch_parent` as the pool's initializer
  (:func:`install`), so also a worker that never runs a task: it ends within seconds of its parent's
  death, abandoning any fit in progress (its row is never stored; the next run computes it), after
  releasing its row claims, removing the parent's memory-mapping folders and stopping the parent's
  resource trackers (no "leaked" warning).
- **Its shared memory is removed by the next run.** The named semaphores of a loky pool
  (``/dev/shm/sem.loky-<pid>-*``) and joblib's memory-mapping folders
  (``joblib_memmapping_folder_<pid>_*``) are named after the process that created them. What a
  killed run left (the semaphores; everything, when the whole process group was killed) is
  removed at the start of the next ``run.py`` by :func:`remove_dead_entries`: this user's
  entries whose creator pid is no longer running, with one line saying how many. joblib's folders
  go to a project-named folder (:func:`joblib_temp_folder`, ``$JOBLIB_TEMP_FOLDER``), where it
  finds them too.

The Slurm launcher is not concerned: its jobs are Slurm's, and go on when the submitting command
dies (docs/running.md).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
import tempfile
import uuid
from pathlib import Path

from proxboost.experiments.launch import parent_watch
from proxboost.experiments.system import private_api

__all__ = ["install", "joblib_temp_folder", "remove_dead_entries", "report_dead_entries"]

SHM = Path("/dev/shm")

#: (pattern of a name in /dev/shm or in the joblib folder, what it is)
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
    started from now on watches this process
    (:func:`proxboost.experiments.launch.parent_watch.watch_parent`). Idempotent."""
    global _INSTALLED
    if _INSTALLED:
        return
    _INSTALLED = True
    os.environ.setdefault("JOBLIB_TEMP_FOLDER", str(joblib_temp_folder()))
    try:  # by value: a worker starts the watch without importing proxboost (seconds when busy)
        import cloudpickle

        cloudpickle.register_pickle_by_value(parent_watch)
    except ImportError:  # loky then pickles by reference: the same watch, started later
        pass
    private_api.start_loky_workers_with(parent_watch.watch_parent)


_INSTALLED = False


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
    """Remove one entry; False if another process removed it first (a folder is renamed aside
    before it is emptied, so that only one process removes it)."""
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


def remove_dead_entries() -> int:
    """Remove this user's named semaphores and joblib memory-mapping folders, in ``/dev/shm`` and
    in :func:`joblib_temp_folder`, whose creator pid (in their name) is no longer running.
    Returns how many were removed."""
    folders = dict.fromkeys(
        [SHM, joblib_temp_folder(), Path(os.environ.get("JOBLIB_TEMP_FOLDER", SHM))]
    )
    removed = 0
    for path, pid, rtype in _entries(folders):
        if not _running(pid):
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
