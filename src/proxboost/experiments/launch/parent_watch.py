"""The watch each loky worker of ``run.py`` starts with: end as soon as the parent is dead.

Started by the pool's initializer (:func:`watch_parent`, installed by
:mod:`proxboost.experiments.launch.orphans`), so also in a worker that never runs a task. A daemon
thread compares ``os.getppid()`` with the pid of the process that made the pool, every :data:`POLL`
seconds: when they differ, the parent is dead (an orphan is adopted by pid 1 or by a subreaper,
whose pid is not known in advance), and the worker, before it ends at once (a fit in progress is
abandoned: its row is never stored):

- releases the row claims it holds (a joblib-launcher worker runs jobs: :mod:`_split_claims`);
- removes its dead parent's joblib memory-mapping folders (copies of the data, in ``/dev/shm``
  or ``$JOBLIB_TEMP_FOLDER``);
- stops the resource trackers it shares with its dead parent (found by their pipe): left running,
  each would end with the last worker and print a "leaked" warning for every object the parent had
  registered. What they would have removed (the pool's named semaphores, left on purpose: a sibling
  still starting may not have opened them yet) is removed by the next run
  (:func:`proxboost.experiments.launch.orphans.remove_dead_entries`).

This module uses the standard library only and is pickled by value
(:mod:`proxboost.experiments.launch.orphans` registers it with cloudpickle): a worker runs the watch
before it imports proxboost, which takes seconds on a busy machine. The compiled tree kernels
release the GIL, so the thread runs during a fit.
"""

import os
import shutil
import signal
import sys
import threading
import time
import uuid

__all__ = ["EXIT_ORPHANED", "POLL", "watch_parent"]

#: Seconds between two looks of a worker at its parent's pid.
POLL = 1.0

#: Exit code of a worker whose parent died.
EXIT_ORPHANED = 137


def watch_parent(parent_pid: int) -> None:
    """A pool's initializer: end this worker as soon as ``parent_pid`` (the pool's creator) is no
    longer its parent."""
    threading.Thread(
        target=_watch, args=(int(parent_pid),), name="proxboost-parent-watch", daemon=True
    ).start()


def _watch(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(POLL)
    for step in (_release_claims, lambda: _remove_folders(parent_pid), _stop_resource_trackers):
        try:
            step()
        except Exception:  # ending matters more than any clean-up step
            pass
    os._exit(EXIT_ORPHANED)


def _release_claims() -> None:
    claims = sys.modules.get(
        "proxboost.experiments.store.row_claims"
    )  # imported only if it runs jobs
    if claims is not None:
        claims.release_all(final=True)


def _remove_folders(parent_pid: int) -> None:
    prefix = f"joblib_memmapping_folder_{parent_pid}_"
    for folder in {"/dev/shm", os.environ.get("JOBLIB_TEMP_FOLDER") or "/dev/shm"}:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if name.startswith(prefix):
                aside = os.path.join(folder, f"{name}.removing-{uuid.uuid4().hex[:8]}")
                try:  # one worker only succeeds: the others find it gone
                    os.rename(os.path.join(folder, name), aside)
                except OSError:
                    continue
                shutil.rmtree(aside, ignore_errors=True)


def _pipes(pid, skip_stdio=False) -> set:
    """The pipes process ``pid`` (or ``"self"``) holds open."""
    found = set()
    folder = f"/proc/{pid}/fd"
    for fd in os.listdir(folder):
        if skip_stdio and int(fd) < 3:  # stdio may be a pipe shared with unrelated processes
            continue
        try:
            link = os.readlink(f"{folder}/{fd}")
        except OSError:
            continue
        if link.startswith("pipe:"):
            found.add(link)
    return found


def _stop_resource_trackers() -> None:
    """Kill the resource trackers holding a pipe this worker holds (its parent's: a worker
    inherits the write end of each tracker's pipe)."""
    mine = _pipes("self", skip_stdio=True)
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if b"resource_tracker" not in fh.read():
                    continue
            if _pipes(pid) & mine:
                os.kill(int(pid), signal.SIGKILL)
        except OSError:
            continue
