"""Interrupts of ``run.py``: Ctrl-C or SIGTERM → one line, exit code 130, nothing left behind.

Ctrl-C (SIGINT to the terminal's process group) and SIGTERM (``kill``, ``scancel``, a closing
session) stop a run the same way: one line, exit code 130, running fits abandoned (their rows are
recomputed by the rerun), and every named semaphore and memory-mapping folder released, so
Python's resource tracker has nothing to warn about.

- Basic launcher: the jobs run in this process and their fits in its process pool (loky). The
  signal becomes a KeyboardInterrupt here; the pool's workers are killed and the pool is torn
  down completely before the interpreter exits (:meth:`Interrupts.stop_workers`): its queues'
  named semaphores belong to this process.
- joblib launcher: each job runs in a worker of the launcher's pool, its fits in a thread pool that
  holds no named semaphore (:func:`proxboost.experiments.fits.pipeline._fit_pool`). Each job ends
  its worker (:func:`leave_worker`); this process waits for the workers to end, then joblib stops
  the pool (:func:`end_launcher_jobs`) and :meth:`Interrupts.stop_workers` tears it down.

A process killed outright (``kill -9``) runs no handler: :mod:`proxboost.experiments.launch.orphans`
makes its workers end by themselves and the next run remove its shared memory.

The private joblib/loky names this needs are used through
:mod:`proxboost.experiments.system.private_api`.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from multiprocessing.connection import wait

from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode

from proxboost.experiments.launch import orphans
from proxboost.experiments.store import results, row_claims
from proxboost.experiments.system import io_errors, private_api, sealed

__all__ = ["Interrupts", "end_launcher_jobs", "interruptible", "leave_worker", "this_process"]

#: Seconds this process waits for the launcher's workers (and for loky's threads) to end.
LAUNCHER_GRACE = 5.0

#: The exit code of an interrupted run (128 + SIGINT, as a shell reports Ctrl-C).
EXIT_INTERRUPTED = 130


@dataclass
class Interrupts:
    """The interrupt handling of one process and the state it needs; :meth:`handle` is the
    process's SIGINT and SIGTERM handler (:meth:`install`).

    ``locations``, ``experiments``, ``start``: the sweep's row folders, synthetic experiment
    folders and start time (for the interrupt line of a sweep whose jobs run in other processes);
    ``joblib_launcher``: whether a joblib launcher runs the sweep's jobs; ``interrupted``: whether
    this process was interrupted (a launcher worker then starts no further job); ``idle_worker``:
    whether this process is a joblib-launcher worker between two jobs (it then holds nothing to
    stop or release, and an interrupt ends it quietly instead of raising inside loky's loop);
    ``interrupted_queue``: the call queue of this process's loky pool when it was interrupted
    (:meth:`drain_pool`), closed by :meth:`stop_workers`."""

    locations: list = field(default_factory=list)
    experiments: list = field(default_factory=list)
    start: float | None = None
    joblib_launcher: bool = False
    interrupted: bool = False
    idle_worker: bool = False
    interrupted_queue: object = None

    def install(self):
        """Make :meth:`handle` this process's SIGINT and SIGTERM handler (main thread only)."""
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, self.handle)
            signal.signal(signal.SIGTERM, self.handle)

    def handle(self, signum, frame):
        """SIGINT or SIGTERM → KeyboardInterrupt in the main thread. Later signals are ignored
        while the run stops (a second Ctrl-C would cut the clean-up short and print a
        traceback)."""
        self.interrupted = True
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if self.idle_worker:
            leave_worker(EXIT_INTERRUPTED)
        self.drain_pool()
        if self.joblib_launcher:
            end_launcher_jobs(forward=signum != signal.SIGINT)  # Ctrl-C reached the workers already
        raise KeyboardInterrupt

    def start_job(self) -> bool:
        """Before a job of ``run.py``: in a joblib-launcher worker, handle interrupts, start
        nothing if the sweep is stopping, and mark the worker busy. Returns whether this process
        is a launcher worker (:meth:`end_job` takes it back)."""
        in_worker = in_launcher_worker()
        if in_worker:
            self.install()
            if self.interrupted:  # the sweep is stopping: start nothing
                leave_worker(EXIT_INTERRUPTED)
            self.idle_worker = False
        return in_worker

    def end_job(self, in_worker: bool):
        """After a job: a launcher worker is idle until its next job."""
        self.idle_worker = in_worker

    def drain_pool(self):
        """Prepare this process's loky pool for the kill that follows the interrupt.

        loky's shutdown with ``kill_workers`` cancels the pending work items but leaves their ids
        queued (CPython's ProcessPoolExecutor drains that queue); its manager thread then looks
        them up, fails with a KeyError traceback and never closes the pool's queues, whose named
        semaphores are then released by a daemon thread racing the interpreter's exit ("leaked
        semlock" warning). So the ids are dropped here, before joblib reacts to the interrupt,
        and the call queue is kept for :meth:`stop_workers` to close in any case. This runs in a
        signal handler: the queue's lock is only tried, never waited for (the interrupted code
        may hold it)."""
        executor = private_api.loky_executor()
        if executor is None:
            return
        self.interrupted_queue = private_api.call_queue(executor)
        private_api.drop_queued_work(executor)

    def stop_workers(self):
        """Kill the process pool's workers now (running fits are abandoned, their rows recomputed
        by the next run) and tear the pool down before the interpreter exits: its manager thread
        is joined, the interrupted pool's call queue closed and its feeder thread joined, and what
        remains is collected here, so that every named semaphore is released, and unregistered,
        by this thread rather than by a daemon thread cut off at exit. Each wait is bounded by
        :data:`LAUNCHER_GRACE` seconds: an interrupted run must stop, even if loky does not."""
        executor = private_api.loky_executor()
        if executor is not None:
            manager = private_api.manager_thread(executor)
            executor.shutdown(wait=False, kill_workers=True)
            if manager is not None:
                manager.join(LAUNCHER_GRACE)
        call_queue, self.interrupted_queue = self.interrupted_queue, None
        if call_queue is not None:
            call_queue.close()  # idempotent: the feeder thread flushes, then ends
            feeder = private_api.feeder_thread(call_queue)
            if feeder is not None:
                feeder.join(LAUNCHER_GRACE)
        executor = manager = call_queue = feeder = (
            None  # this frame's references, so that gc can free the pool
        )
        gc.collect()

    def claim_folders(self) -> list:
        """The folders where the sweep's jobs claim rows
        (:mod:`proxboost.experiments.store.row_claims`)."""
        folders = [results.run_dir(*loc) for loc in self.locations]
        return folders + [p.parent for f in self.experiments for p in f.glob("*/*/*/.*.claim")]

    def rows_stored_since_start(self) -> int:
        """Rows and curves stored in the sweep's folders since :attr:`start`."""
        rows = [p for loc in self.locations for p in results.run_dir(*loc).glob("split-*.csv")]
        # curves: <experiment folder>/<dataset>/<loss>/<algo>/<run>_<hash>.csv
        # (proxboost.experiments.fits.curves)
        rows += [
            p
            for folder in self.experiments
            for p in folder.glob("*/*/*/*.csv")
            if not p.name.endswith(".predictions.csv")
        ]
        return sum(1 for p in rows if p.stat().st_mtime >= self.start)


@functools.cache
def this_process() -> Interrupts:
    """The interrupt handling of this process. Signal handlers belong to a process, so there is
    one: made by the first caller (:func:`interruptible` in the sweep's process, the first job of
    a joblib-launcher worker) and found again by the later ones (the sweep's check, the worker's
    next jobs, which must know whether the worker was interrupted or is idle)."""
    return Interrupts()


def end_launcher_jobs(forward: bool):
    """Interrupt the joblib launcher's workers (``forward``: SIGINT them; a terminal's Ctrl-C
    already did) and wait up to :data:`LAUNCHER_GRACE` seconds for them to end."""
    workers = multiprocessing.active_children()
    if forward:
        for p in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p.pid, signal.SIGINT)
    deadline = time.monotonic() + LAUNCHER_GRACE
    while (alive := [p for p in workers if p.is_alive()]) and time.monotonic() < deadline:
        wait([p.sentinel for p in alive], timeout=deadline - time.monotonic())


def in_launcher_worker() -> bool:
    """Whether this job runs in a worker process of the joblib launcher (not in the command's
    own process, where joblib runs the jobs when ``hydra.launcher.n_jobs=1``)."""
    hc = HydraConfig.get()
    return (
        hc.mode == RunMode.MULTIRUN
        and "joblib" in str(hc.launcher.get("_target_", ""))
        and multiprocessing.parent_process() is not None
    )


def leave_worker(code: int):
    """End this launcher worker now, releasing what it holds: its job's thread pool may still
    run a fit, so the process does not wait for it; the row claims it holds are released (one
    made just before the interrupt may not be its run's yet, and the sweep's process, which
    removes a dead worker's claims, may have stopped waiting for this one); the exit handlers of
    :mod:`multiprocessing` unlink the named semaphores it created, and the launcher sees the
    worker end."""
    row_claims.release_all(final=True)
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    private_api.run_multiprocessing_exit_handlers()
    os._exit(code)


def report(n_rows: int):
    """The interrupt line (stderr), then exit code 130."""
    print(
        f"interrupted: {n_rows} rows stored; rerun the same command to finish",
        file=sys.stderr,
        flush=True,
    )
    raise SystemExit(EXIT_INTERRUPTED) from None


def interruptible(app, interrupts: Interrupts | None = None):
    """Run ``app`` (the Hydra entry point); Ctrl-C or SIGTERM anywhere in a sweep → one line,
    exit 130. ``interrupts``: default :func:`this_process`."""
    interrupts = this_process() if interrupts is None else interrupts
    interrupts.start = time.time()
    interrupts.install()
    # kill -9 leaves what no handler can release: workers end by themselves, shared memory is
    # removed here by the next run (proxboost.experiments.launch.orphans)
    orphans.install()
    orphans.report_dead_entries()
    try:
        app()
    except KeyboardInterrupt:
        # the joblib launcher's pool (a basic run's job stopped its own already)
        interrupts.stop_workers()
        report(interrupts.rows_stored_since_start())
    except io_errors.StorageExit:
        # a launcher worker met a full disk or a lost permission: joblib killed the other
        # workers; the pool is torn down here too, before the exit, else its queues' named
        # semaphores are released by a daemon thread racing the interpreter's exit, which
        # now and then printed loky's "leaked semlock" warning after the command's line
        interrupts.stop_workers()
        raise
    finally:
        # this process's own claims: an interrupt between a claim and its run's record of it
        # (RowClaims.take) leaves one that only this process can release, since it still runs
        row_claims.release_all()
        # claims of launcher workers that ended without releasing them (killed by joblib when
        # another job failed): nobody else would remove them before they go stale
        with contextlib.suppress(OSError):
            row_claims.remove_dead_claims(interrupts.claim_folders())
        # and the temporary files they were writing (the rows themselves were never written)
        with contextlib.suppress(OSError):
            sealed.remove_dead_temporaries(interrupts.claim_folders())
