"""The command line of ``run.py``: a Hydra config → the pipeline, checks of a whole sweep before any
fit, user errors as one line (exit code 2), Ctrl-C as one line (exit code 130), a sweep's table.

One run is either a real-world protocol run (``dataset``, ``loss``, ``algo``, ``grid``, ...: see
:func:`proxboost.pipeline.run_experiment`) or, when the config has a ``synthetic`` node (the
``+experiment=intro|convergence|proximal_step`` configs), the synthetic curves of
:mod:`proxboost.curves`.

Before any fit of a multirun, :class:`Preflight` (a Hydra callback, ``hydra.callbacks`` in
``conf/config.yaml``) composes the configuration of every job of the sweep and checks it as the
job itself would (values and their types, the results folder is writable, every data file is
obtainable, the loss fits the dataset's task): one line per problem and exit code 2, nothing
fitted. A sweep that pairs losses with datasets of another task is refused unless
``skip_task_mismatch=true`` (then those jobs are skipped, one line each). At the end of the
sweep it prints one table of the sweep's rows.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import logging
import math
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

from ._vocabulary import TIE_RULES, is_integer
from .losses import LOSS_PARAMETERS

log = logging.getLogger("proxboost.run")

__all__ = [
    "Preflight",
    "UserError",
    "check_jobs",
    "check_values",
    "main",
    "run_arguments",
    "sweep_table",
]


class UserError(ValueError):
    """A mistake in the command: reported in one line, exit code 2, no traceback."""


_GRID_KEYS = ("max_depth", "learning_rate", "step", "max_features")


def _config_dir(hydra_cfg=None) -> Path | None:
    """The folder of the primary config (``conf/``), from Hydra's runtime information."""
    from hydra.core.hydra_config import HydraConfig

    if hydra_cfg is None:
        if not HydraConfig.initialized():
            return None
        hydra_cfg = HydraConfig.get()
    for source in hydra_cfg.runtime.config_sources:
        if source.provider == "main" and source.schema == "file":
            return Path(source.path)
    return None


def _label(cfg, group, keys, conf_dir):
    """The choice's name, plus the changed values when ``keys`` of the group differ from its file
    (e.g. ``pinball-tau0.5``): rows of a modified choice never sit under its name."""
    name = cfg[group].name
    path = None if conf_dir is None else conf_dir / group / f"{name}.yaml"
    if path is None or not path.is_file():
        return name
    default = OmegaConf.to_container(OmegaConf.load(path), resolve=False)
    given = OmegaConf.to_container(cfg[group], resolve=True)
    changed = {k: given.get(k) for k in keys if k in given and given.get(k) != default.get(k)}
    if not changed:
        return name
    return name + "".join(f"-{k}{v}" for k, v in sorted(changed.items()))


def _grid_name(cfg) -> str:
    """The grid's name: the option chosen in the ``grid`` group, as Hydra records it
    (``hydra.runtime.choices``), plus ``-custom<hash>`` of the values given on the command line
    that differ from the option's own (``grid.max_depth=[2]``), so that rows of a modified grid
    never sit under its name. A config composed without Hydra's record (``compose()`` in a test)
    is named by its ``grid.name``."""
    from hydra.core.hydra_config import HydraConfig

    if "hydra" in cfg:  # a job composed by the preflight check
        record = cfg.hydra
    elif HydraConfig.initialized():  # the job itself
        record = HydraConfig.get()
    else:
        return cfg.grid.name
    name = record.runtime.choices["grid"]
    overridden = {o.lstrip("+~").split("=", 1)[0] for o in record.overrides.task}
    keys = [k for k in _GRID_KEYS if f"grid.{k}" in overridden and k in cfg.grid]
    given = OmegaConf.to_container(cfg.grid, resolve=True)
    option = _grid_option(record.job.config_name, name) if keys else {}
    changed = {k: given[k] for k in keys if given[k] != option.get(k)}
    if not changed:
        return name
    from .results import identity_hash

    return f"{name}-custom{identity_hash(changed)[:6]}"


@functools.lru_cache(maxsize=16)
def _grid_option(config_name, name) -> dict:
    """The values of the grid option ``name`` as Hydra composes it (no override)."""
    from hydra.core.global_hydra import GlobalHydra
    from hydra.types import RunMode

    loader = GlobalHydra.instance().config_loader()
    cfg = loader.load_configuration(config_name, [f"grid={name}"], RunMode.RUN)
    return OmegaConf.to_container(cfg.grid, resolve=True)


def check_values(cfg) -> None:
    """Types of the top-level run settings (the pipeline checks the protocol, grid and data)."""

    if cfg.n_jobs is not None and not (
        is_integer(cfg.n_jobs) and cfg.n_jobs != 0 and cfg.n_jobs >= -1
    ):
        raise UserError(
            f"n_jobs must be an integer >= 1, -1 or null (every core), got {cfg.n_jobs!r}"
        )
    for key in ("progress", "skip_task_mismatch", "skip_unavailable"):
        if not isinstance(cfg[key], bool):
            raise UserError(f"{key} must be true or false, got {cfg[key]!r}")
    if not isinstance(cfg.results_dir, str) or not cfg.results_dir:
        raise UserError(f"results_dir must be a folder name, got {cfg.results_dir!r}")
    if cfg.tie_rule not in TIE_RULES:
        raise UserError(f"tie_rule must be one of {', '.join(TIE_RULES)}, got {cfg.tie_rule!r}")


def check_writable(folder) -> None:
    """Refuse a results folder that cannot be written, before any fit. Nothing is created or
    removed: the probe is a temporary file in the folder or, while it does not exist yet, in its
    nearest existing parent (where the run will create it). Creating the folder and removing it
    again would race with a parallel job of the same sweep, which may be storing its first row
    there at that moment."""
    path = Path(folder).absolute()
    nearest = next(p for p in (path, *path.parents) if p.exists())
    try:
        if not nearest.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(nearest))
        with tempfile.NamedTemporaryFile(dir=nearest, prefix=".write-check-"):
            pass
    except OSError as exc:
        raise UserError(
            f"results_dir {str(folder)!r} is not writable ({exc.strerror}): "
            "choose another with results_dir=<folder>"
        ) from None


def _results_dir(cfg) -> str:
    from hydra.utils import to_absolute_path

    return to_absolute_path(cfg.results_dir)


def run_arguments(cfg, conf_dir=None) -> dict:
    """The arguments of :func:`proxboost.pipeline.plan_run` for a composed config (``conf_dir``:
    the config folder, default Hydra's primary config source)."""
    from hydra.utils import instantiate

    check_values(cfg)
    config = {
        key: OmegaConf.to_container(cfg[key], resolve=True) for key in ("dataset", "algo", "grid")
    }
    conf_dir = conf_dir or _config_dir()
    try:
        loss = instantiate(cfg.loss)
    except Exception as exc:  # instantiate wraps the loss's own ValueError
        cause = exc.__cause__ or exc
        raise UserError(f"loss '{cfg.loss.name}': {cause}") from None
    fr = cfg.protocol.fractions
    return dict(
        dataset=cfg.dataset.name,
        dataset_params=config["dataset"].get("params") or {},
        loss=loss,
        loss_label=_label(cfg, "loss", LOSS_PARAMETERS, conf_dir),
        algo=cfg.algo.name,
        algo_options={k: v for k, v in config["algo"].items() if k != "name"},
        grid=config["grid"],
        grid_name=_grid_name(cfg),
        engine=cfg.engine.name,
        tie_rule=cfg.tie_rule,
        n_splits=cfg.protocol.n_splits,
        max_estimators=cfg.protocol.max_estimators,
        fractions=(fr.train, fr.validation, fr.test),
        seed=cfg.protocol.seed,
        results_dir=_results_dir(cfg),
        mirror=cfg.data.mirror,
        skip_task_mismatch=cfg.skip_task_mismatch,
        skip_unavailable=cfg.skip_unavailable,
    )


def _synthetic_specs(cfg):
    """The runs of a synthetic experiment's config (:func:`proxboost.curves.specs_from_config`)."""
    from .curves import specs_from_config

    try:
        return specs_from_config(
            OmegaConf.to_container(cfg.synthetic, resolve=True), engine=cfg.engine.name
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise UserError(f"synthetic: {exc}") from None


def _user_errors():
    from .datasets import ChecksumError, DatasetShapeError, DatasetUnavailableError
    from .protocol import ProtocolError

    return (UserError, ProtocolError, DatasetUnavailableError, ChecksumError, DatasetShapeError)


def _inner_n_jobs(cfg):
    """Workers for the fits of one run: ``n_jobs`` if set; else 1 per job when a parallel
    launcher (joblib) runs the sweep's jobs side by side, ``cpus_per_task`` under submitit, and
    every core otherwise (``None``)."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    if cfg.n_jobs is not None:
        return int(cfg.n_jobs)
    hc = HydraConfig.get()
    if hc.mode != RunMode.MULTIRUN:
        return None
    target = str(hc.launcher.get("_target_", ""))
    if "joblib" in target:
        return 1
    if "submitit" in target:
        return int(hc.launcher.get("cpus_per_task") or 1)
    return None


# -- interrupts ------------------------------------------------------------------------------------
# Ctrl-C (SIGINT to the terminal's process group) and SIGTERM (``kill``, ``scancel``, a closing
# session) stop a run the same way: one line, exit code 130, running fits abandoned (their rows
# are recomputed by the rerun), and every named semaphore and memory-mapping folder released,
# so Python's resource tracker has nothing to warn about.
#
# - Basic launcher: the jobs run in this process and their fits in its process pool (loky). The
#   signal becomes a KeyboardInterrupt here; the pool's workers are killed and the pool is torn
#   down completely before the interpreter exits (:func:`_stop_workers`): its queues' named
#   semaphores belong to this process.
# - joblib launcher: each job runs in a worker of the launcher's pool, its fits in a thread pool
#   that holds no named semaphore (:func:`proxboost.pipeline._fit_pool`). Each job ends its worker
#   (:func:`_leave_worker`); this process waits for the workers to end, then joblib stops the pool
#   (:func:`_end_launcher_jobs`) and :func:`_stop_workers` tears it down.

#: The sweep in progress in this process: row folders, synthetic experiment folders and start
#: time (for the Ctrl-C report of a sweep whose jobs run in other processes), and whether a
#: joblib launcher runs its jobs.
_SWEEP = {"locations": [], "experiments": [], "start": None, "joblib_launcher": False}

#: Seconds this process waits for the launcher's workers to end before they are killed.
_LAUNCHER_GRACE = 5.0

#: Whether this process was interrupted (a launcher worker then starts no further job).
_INTERRUPTED = False

#: Whether this process is a joblib-launcher worker between two jobs (it then holds nothing to
#: stop or release, and an interrupt ends it quietly instead of raising inside loky's loop).
_IDLE_WORKER = False


def _interrupt(signum, frame):
    """SIGINT or SIGTERM → KeyboardInterrupt in the main thread. Later signals are ignored while
    the run stops (a second Ctrl-C would cut the clean-up short and print a traceback)."""
    import signal

    global _INTERRUPTED
    _INTERRUPTED = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if _IDLE_WORKER:
        _leave_worker(130)
    _drain_pool()
    if _SWEEP["joblib_launcher"]:
        _end_launcher_jobs(forward=signum != signal.SIGINT)  # Ctrl-C reached the workers already
    raise KeyboardInterrupt


def _handle_interrupts():
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _interrupt)
        signal.signal(signal.SIGTERM, _interrupt)


def _end_launcher_jobs(forward: bool):
    """Interrupt the joblib launcher's workers (``forward``: SIGINT them; a terminal's Ctrl-C
    already did) and wait up to :data:`_LAUNCHER_GRACE` seconds for them to end."""
    import multiprocessing
    import signal
    import time
    from multiprocessing.connection import wait

    workers = multiprocessing.active_children()
    if forward:
        for p in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p.pid, signal.SIGINT)
    deadline = time.monotonic() + _LAUNCHER_GRACE
    while (alive := [p for p in workers if p.is_alive()]) and time.monotonic() < deadline:
        wait([p.sentinel for p in alive], timeout=deadline - time.monotonic())


#: The call queue of this process's loky pool when the run was interrupted (:func:`_drain_pool`).
_INTERRUPTED_POOL = {}


def _loky_executor():
    """This process's loky pool, if it started one (``get_reusable_executor()`` would start one)."""
    from joblib.externals.loky import reusable_executor

    return getattr(reusable_executor, "_executor", None)


def _drain_pool():
    """Prepare this process's loky pool for the kill that follows the interrupt.

    loky's shutdown with ``kill_workers`` cancels the pending work items but leaves their ids
    queued (CPython's ProcessPoolExecutor drains that queue); its manager thread then looks them
    up, fails with a KeyError traceback and never closes the pool's queues, whose named
    semaphores are then released by a daemon thread racing the interpreter's exit ("leaked
    semlock" warning). So the ids are dropped here, before joblib reacts to the interrupt, and
    the call queue is kept for :func:`_stop_workers` to close in any case. This runs in a signal
    handler: the queue's lock is only tried, never waited for (the interrupted code may hold it)."""
    executor = _loky_executor()
    if executor is None:
        return
    _INTERRUPTED_POOL["call_queue"] = getattr(executor, "_call_queue", None)
    work_ids = getattr(executor, "_work_ids", None)  # a queue.Queue
    if work_ids is not None and work_ids.mutex.acquire(blocking=False):
        try:
            work_ids.queue.clear()
        finally:
            work_ids.mutex.release()


def _stop_workers():
    """Kill the process pool's workers now (running fits are abandoned, their rows recomputed
    by the next run) and tear the pool down before the interpreter exits: its manager thread is
    joined, the interrupted pool's call queue closed and its feeder thread joined, and what
    remains is collected here, so that every named semaphore is released, and unregistered, by
    this thread rather than by a daemon thread cut off at exit. Each wait is bounded by
    :data:`_LAUNCHER_GRACE` seconds: an interrupted run must stop, even if loky does not."""
    import gc

    executor = _loky_executor()
    if executor is not None:
        manager = getattr(executor, "_executor_manager_thread", None)
        executor.shutdown(wait=False, kill_workers=True)
        if manager is not None:
            manager.join(_LAUNCHER_GRACE)
    call_queue = _INTERRUPTED_POOL.pop("call_queue", None)
    if call_queue is not None:
        call_queue.close()  # idempotent: the feeder thread flushes, then ends
        feeder = getattr(call_queue, "_thread", None)
        if feeder is not None:
            feeder.join(_LAUNCHER_GRACE)
    executor = manager = call_queue = feeder = (
        None  # this frame's references, so that gc can free the pool
    )
    gc.collect()


def _in_launcher_worker() -> bool:
    """Whether this job runs in a worker process of the joblib launcher (not in the command's
    own process, where joblib runs the jobs when ``hydra.launcher.n_jobs=1``)."""
    import multiprocessing

    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    hc = HydraConfig.get()
    return (
        hc.mode == RunMode.MULTIRUN
        and "joblib" in str(hc.launcher.get("_target_", ""))
        and multiprocessing.parent_process() is not None
    )


def _leave_worker(code: int):
    """End this launcher worker now, releasing what it holds: its job's thread pool may still
    run a fit, so the process does not wait for it; the exit handlers of :mod:`multiprocessing`
    unlink the named semaphores it created, and the launcher sees the worker end."""
    from multiprocessing import util

    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    util._exit_function()
    os._exit(code)


def interruptible(app):
    """Run ``app`` (the Hydra entry point); Ctrl-C or SIGTERM anywhere in a sweep → one line,
    exit 130."""
    import time

    _SWEEP["start"] = time.time()
    _handle_interrupts()
    try:
        app()
    except KeyboardInterrupt:
        from . import results

        _stop_workers()  # the joblib launcher's pool (a basic run's job stopped its own already)
        rows = [p for loc in _SWEEP["locations"] for p in results.run_dir(*loc).glob("split-*.csv")]
        # curves: <experiment folder>/<dataset>/<loss>/<algo>/<run>_<hash>.csv (proxboost.curves)
        rows += [
            p
            for folder in _SWEEP["experiments"]
            for p in folder.glob("*/*/*/*.csv")
            if not p.name.endswith(".predictions.csv")
        ]
        n = sum(1 for p in rows if p.stat().st_mtime >= _SWEEP["start"])
        print(
            f"interrupted: {n} rows stored; rerun the same command to finish",
            file=sys.stderr,
            flush=True,
        )
        raise SystemExit(130) from None


def main(cfg: DictConfig):
    """One job of ``run.py``; returns the mean test loss (Hydra sweepers may read it)."""
    global _IDLE_WORKER

    in_launcher_worker = _in_launcher_worker()
    if in_launcher_worker:
        _handle_interrupts()
        if _INTERRUPTED:  # the sweep is stopping: start nothing
            _leave_worker(130)
        _IDLE_WORKER = False
    try:
        return _job(cfg, in_launcher_worker)
    finally:
        _IDLE_WORKER = in_launcher_worker


def _job(cfg: DictConfig, in_launcher_worker: bool):
    """The body of :func:`main`: one run or synthetic experiment, with errors and interrupts."""
    from . import curves, pipeline

    try:
        if "synthetic" in cfg:
            check_values(cfg)
            check_writable(_results_dir(cfg))
            specs = _synthetic_specs(cfg)
            curves.run_curves(
                cfg.synthetic.experiment,
                specs,
                _results_dir(cfg),
                progress=cfg.progress,
                log=log.info,
            )
            return None
        args = run_arguments(cfg)
        check_writable(args["results_dir"])
        run = pipeline.plan_run(**args)
        if run is None:
            return None
        df = pipeline.execute(run, n_jobs=_inner_n_jobs(cfg), progress=cfg.progress)
    except _user_errors() as exc:
        log.error("%s", exc)
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        _stop_workers()
        if in_launcher_worker:  # the sweep's own process reports, once
            _leave_worker(130)
        n = (
            pipeline.ROWS_STORED + curves.CURVES_STORED
        )  # by this command (a basic sweep: every job)
        print(
            f"interrupted: {n} rows stored; rerun the same command to finish",
            file=sys.stderr,
            flush=True,
        )
        raise SystemExit(130) from None
    if df is None or df.empty:
        return None
    return float(df["test_loss"].mean())


# -- a whole sweep ---------------------------------------------------------------------------------
def _sweep_jobs(config) -> list[list[str]]:
    """The override lists of every job of a basic-sweeper multirun."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser

    params = [f"{k}={v}" for k, v in (config.hydra.sweeper.get("params") or {}).items()]
    parsed = OverridesParser.create().parse_overrides(params + list(config.hydra.overrides.task))
    return BasicSweeper.split_arguments(parsed, None)[0]


def check_jobs(config, jobs):
    """Check ``jobs`` (override lists, :func:`_sweep_jobs`) of the multirun whose configuration is
    ``config`` as each job would check itself, without fitting. Returns the problems (lines),
    the loss/dataset task mismatches (lines), the number of jobs skipped because their data are
    unavailable (``skip_unavailable``), the row folders of the other real-world jobs, the
    folders of the synthetic experiments and the number of real-world jobs whose rows are all
    stored already (they will only be read)."""
    from hydra.core.global_hydra import GlobalHydra
    from hydra.types import RunMode

    from .curves import experiment_dir
    from .pipeline import plan_run
    from .protocol import TaskMismatchError

    conf_dir = _config_dir(config.hydra)
    loader = GlobalHydra.instance().config_loader()
    problems, mismatched, skipped, locations, experiments, complete = [], [], 0, [], [], 0
    for overrides in jobs:
        cfg = loader.load_configuration(config.hydra.job.config_name, overrides, RunMode.RUN)
        try:
            if "synthetic" in cfg:
                check_values(cfg)
                check_writable(_results_dir(cfg))
                _synthetic_specs(cfg)
                experiments.append(experiment_dir(_results_dir(cfg), cfg.synthetic.experiment))
                continue
            args = run_arguments(cfg, conf_dir)
            check_writable(args["results_dir"])
            run = plan_run(**{**args, "skip_task_mismatch": False})
        except TaskMismatchError as exc:
            mismatched.append(str(exc))
            continue
        except _user_errors() as exc:
            problems.append(str(exc))
            continue
        if run is None:  # skip_unavailable
            skipped += 1
        else:
            locations.append(run.location)
            complete += len(run.stored_splits()) == run.n_splits
    return problems, mismatched, skipped, locations, experiments, complete


class Preflight(Callback):
    """Checks every job of a multirun before any fit; prints the sweep's table at its end."""

    def __init__(self):
        self.locations = []

    def on_multirun_start(self, config: DictConfig, **kwargs) -> None:
        _SWEEP["joblib_launcher"] = "joblib" in str(config.hydra.launcher.get("_target_", ""))
        jobs = _sweep_jobs(config)
        problems, mismatched, skipped, locations, experiments, complete = check_jobs(config, jobs)
        if mismatched and not config.skip_task_mismatch:
            problems.append(
                f"{len(mismatched)} job(s) of this sweep pair a loss with a dataset of another task"
                f" (e.g. {mismatched[0]}); add skip_task_mismatch=true to skip them"
            )
        if problems:
            for line in dict.fromkeys(problems):  # each problem once, in order
                log.error("%s", line)
            raise SystemExit(2)
        for line, count in Counter(
            mismatched
        ).items():  # one line per distinct pair, with its job count
            log.warning("skipped %d job%s: %s", count, "s" * (count > 1), line)
        self.locations += locations
        _SWEEP["locations"] += locations
        _SWEEP["experiments"] += dict.fromkeys(experiments)
        log.info(
            "checked the %d jobs of this sweep before any fit: %d to run, %d complete already "
            "(only read), %d skipped",
            len(jobs),
            len(jobs) - len(mismatched) - skipped - complete,
            complete,
            len(mismatched) + skipped,
        )

    def on_multirun_end(self, config: DictConfig, **kwargs) -> None:
        if self.locations:
            for line in sweep_table(self.locations):
                log.info("%s", line)


def sweep_table(locations) -> list[str]:
    """Lines of a table of the rows stored at ``locations`` (dataset, loss, method, engine,
    mean ± std test loss and error, rows, folder)."""
    from . import results

    lines = [
        "sweep rows: dataset | loss | method | engine | test loss mean ± std | test error mean ±"
        " std | rows | folder"
    ]
    for location in locations:
        where = results.run_dir(*location)
        df = results.load(where)
        _, _, dataset, loss, algo, engine, _ = location

        def cell(col, df=df):
            v = df[col].astype(float) if len(df) else df[col]
            if not len(df) or v.isna().all():
                return "—"
            std = v.std(ddof=1) if v.notna().sum() > 1 else 0.0
            return f"{v.mean():.4g} ± {std:.2g}" if not math.isnan(std) else f"{v.mean():.4g}"

        lines.append(
            f"{dataset} | {loss} | {algo} | {engine} | {cell('test_loss')} | {cell('test_error')} |"
            f" {len(df)} | {where}"
        )
    return lines
