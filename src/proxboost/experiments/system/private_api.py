"""Every use of a private name of joblib, its vendored loky, Hydra or CPython's multiprocessing, in
one place: nothing else in proxboost touches them, so a release that renames one breaks only the
small functions below (and the tests of tests/test_interrupts.py, which exercise each of them).

Checked against joblib 1.6.0 (vendored loky 3.6.0), hydra-core 1.3.8, hydra-joblib-launcher 1.2.0
and CPython 3.11. None of these is pinned (pyproject.toml: ``hydra-core>=1.3``,
``hydra-joblib-launcher>=1.2``, joblib through scikit-learn; constraints.txt pins none of them):
where a name may be missing the accessors return ``None`` and the caller skips that step.

Private names used, and why:

- ``joblib.externals.loky.reusable_executor._executor``: this process's loky pool, if it started
  one (the public ``get_reusable_executor()`` would start a pool just to stop it).
- ``_work_ids`` of a loky executor (a :class:`queue.Queue`): the ids of queued work items. loky's
  shutdown with ``kill_workers`` cancels the items but leaves their ids queued; its manager thread
  then fails on them with a KeyError traceback and never closes the pool's queues. They are
  dropped after an interrupt.
- ``_call_queue`` of a loky executor and ``_thread`` of that queue (its feeder thread): closed and
  joined after an interrupt, so that the queue's named semaphores are released by the main thread,
  not by a daemon thread cut off at exit ("leaked semlock" warning).
- ``_executor_manager_thread`` of a loky executor: joined after the kill, for the same reason.
- ``joblib._parallel_backends.ThreadingBackend`` and ``joblib.parallel.get_active_backend``
  (undocumented): whether joblib would run tasks in threads (in a job of the joblib launcher),
  where proxboost uses a :mod:`concurrent.futures` thread pool instead (no named semaphore).
- ``hydra._internal.core_plugins.basic_sweeper.BasicSweeper.split_arguments``: the jobs of a
  multirun exactly as Hydra's basic sweeper will launch them, to check them all before any fit.
- ``ConfigLoaderImpl._parse_overrides_and_create_caching_repo`` (Hydra's repository of config
  files, with the command's ``hydra.searchpath``), ``ConfigLoaderImpl._apply_overrides_to_config``
  (how Hydra sets a job's ``key=value`` overrides) and ``config_loader_impl.get_overrides_dirname``
  (its ``hydra.job.override_dirname``): the configurations of a sweep's jobs built from a few
  compositions (:mod:`proxboost.experiments.launch.job_configs`), with Hydra's own steps.
- ``multiprocessing.util._exit_function``: the exit handlers of :mod:`multiprocessing` (they
  unlink the named semaphores this process created), run before ``os._exit`` ends a launcher
  worker.
- ``tqdm.std.tqdm._lock`` (checked against tqdm 4.70): whether tqdm has made its default lock,
  which includes a multiprocessing semaphore; in a joblib-launcher worker that is a named one the
  worker never releases when an interrupted sweep kills it ("leaked semaphore" at exit). One bar
  per process needs a thread lock only, set before tqdm makes its own.
- ``joblib._parallel_backends.LokyBackend`` (through the public, experimental
  ``joblib.register_parallel_backend``): the backend registered as ``"loky"`` in ``run.py``'s
  processes is a subclass whose pools start every worker with an ``initializer`` (the parent-death
  watch of :mod:`proxboost.experiments.launch.orphans`), also for the pool of Hydra's joblib
  launcher, which names the backend ``"loky"`` and takes no initializer of its own.
- ``hydra.core.utils._save_config`` (the writer of ``.hydra/*.yaml``) and
  ``hydra._internal.utils.run_and_report`` (which turns any exception of a run into a traceback and
  exit code 1): wrapped so that a failed write of Hydra's own files names its file and leaves no
  partial file, and a disk-full or permission error anywhere becomes one line and exit code 2
  (:mod:`proxboost.experiments.system.io_errors`).
"""

from __future__ import annotations

import functools
import os
import threading
from multiprocessing import util

from hydra._internal import config_loader_impl
from hydra._internal import utils as hydra_internal_utils
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core import utils as hydra_core_utils
from joblib import register_parallel_backend
from joblib._parallel_backends import LokyBackend, ThreadingBackend
from joblib.externals.loky import reusable_executor
from joblib.parallel import get_active_backend
from tqdm import std as tqdm_std


def loky_executor():
    """This process's loky pool, or ``None`` if it started none."""
    return getattr(reusable_executor, "_executor", None)


def call_queue(executor):
    """The queue that feeds ``executor``'s workers, or ``None``."""
    return getattr(executor, "_call_queue", None)


def feeder_thread(queue):
    """The thread that flushes ``queue`` (a multiprocessing queue) to its pipe, or ``None``."""
    return getattr(queue, "_thread", None)


def manager_thread(executor):
    """``executor``'s manager thread, or ``None``."""
    return getattr(executor, "_executor_manager_thread", None)


def drop_queued_work(executor) -> None:
    """Drop the ids of ``executor``'s queued work items. Safe in a signal handler: the queue's lock
    is only tried, never waited for (the interrupted code may hold it)."""
    work_ids = getattr(executor, "_work_ids", None)  # a queue.Queue
    if work_ids is not None and work_ids.mutex.acquire(blocking=False):
        try:
            work_ids.queue.clear()
        finally:
            work_ids.mutex.release()


def joblib_uses_threads() -> bool:
    """Whether joblib's active backend runs tasks in threads of this process."""
    backend, _ = get_active_backend()
    return isinstance(backend, ThreadingBackend)


def sweep_jobs(parsed_overrides) -> list[list[str]]:
    """The override lists of every job of a basic-sweeper multirun of ``parsed_overrides``."""
    return BasicSweeper.split_arguments(parsed_overrides, None)[0]


def config_repository(loader, config_name, overrides):
    """Hydra's repository of config files as ``loader`` composes ``config_name`` with
    ``overrides`` (their ``hydra.searchpath`` adds folders): ``group_exists(group)``,
    ``load_config(path)`` (a file's content, defaults list and header)."""
    return loader._parse_overrides_and_create_caching_repo(config_name, list(overrides))[1]


def apply_config_overrides(overrides, cfg) -> None:
    """Set the parsed ``key=value`` overrides (``+``, ``++``, ``~`` too) on the composed ``cfg``,
    as Hydra does after composing a job."""
    config_loader_impl.ConfigLoaderImpl._apply_overrides_to_config(list(overrides), cfg)


def overrides_dirname(overrides, exclude_keys, item_sep, kv_sep) -> str:
    """Hydra's ``hydra.job.override_dirname`` of a job's parsed task overrides."""
    return config_loader_impl.get_overrides_dirname(
        overrides=list(overrides), exclude_keys=exclude_keys, item_sep=item_sep, kv_sep=kv_sep
    )


def run_multiprocessing_exit_handlers() -> None:
    """What :mod:`multiprocessing` does when a process exits normally (``os._exit`` skips it)."""
    util._exit_function()


def use_a_thread_lock_for_tqdm():
    """Give tqdm a thread lock unless it already made its lock (see the module docstring)."""
    if not hasattr(tqdm_std.tqdm, "_lock"):
        tqdm_std.tqdm.set_lock(threading.RLock())


def start_loky_workers_with(initializer) -> None:
    """From now on, every loky pool this process starts runs ``initializer(pool's creator pid)`` in
    each of its workers when the worker starts (even one that never runs a task)."""

    class _LokyBackend(LokyBackend):
        def configure(self, n_jobs=1, parallel=None, **kwargs):
            kwargs.setdefault("initializer", initializer)
            kwargs.setdefault("initargs", (os.getpid(),))
            return super().configure(n_jobs=n_jobs, parallel=parallel, **kwargs)

    _LokyBackend.__name__ = _LokyBackend.__qualname__ = "LokyBackend"
    register_parallel_backend("loky", _LokyBackend)


def wrap_hydra_writes(save_config, run_and_report) -> None:
    """Wrap Hydra's writer of ``.hydra/*.yaml`` and its top-level error report (once):
    ``save_config(original, cfg, filename, output_dir)``, ``run_and_report(original, func)``."""
    for module, name, wrapper in (
        (hydra_core_utils, "_save_config", save_config),
        (hydra_internal_utils, "run_and_report", run_and_report),
    ):
        original = getattr(module, name, None)
        if original is None or getattr(original, "__wrapped_by_proxboost__", False):
            continue
        wrapped = functools.partial(wrapper, original)
        wrapped.__wrapped_by_proxboost__ = True
        setattr(module, name, wrapped)
