"""The command line of ``run.py``: a Hydra config → the pipeline, checks of a whole sweep before any
fit, user errors as one line (exit code 2), Ctrl-C as one line (exit code 130), a sweep's table.

One run is either a real-world protocol run (``dataset``, ``loss``, ``algo``, ``grid``, ...: see
:func:`proxboost.experiments.fits.pipeline.run_experiment`) or, when the config has a ``synthetic``
node (the ``+experiment=intro|convergence|proximal_step`` configs), the synthetic curves of
:mod:`proxboost.experiments.fits.curves`.

Before any fit of a multirun, :class:`Preflight` (a Hydra callback, ``hydra.callbacks`` in
``conf/config.yaml``) composes the configuration of every job of the sweep and checks it as the
job itself would (values and their types, the results folder is writable, every data file is
obtainable, the loss fits the dataset's task): one line per problem and exit code 2, nothing
fitted. A sweep that pairs losses with datasets of another task is refused unless
``skip_task_mismatch=true`` (then those jobs are skipped, one line each). At the end of the
sweep it prints one table of the sweep's rows.
"""

from __future__ import annotations

import errno
import functools
import logging
import math
import os
import tempfile
from collections import Counter
from pathlib import Path

from hydra.core.global_hydra import GlobalHydra
from hydra.core.hydra_config import HydraConfig
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.experimental.callback import Callback
from hydra.types import RunMode
from hydra.utils import instantiate, to_absolute_path
from omegaconf import DictConfig, OmegaConf

from proxboost._vocabulary import TIE_RULES, is_integer
from proxboost.experiments.datasets import ChecksumError, DatasetShapeError, DatasetUnavailableError
from proxboost.experiments.datasets._csv import absolute as csv_params
from proxboost.experiments.fits import curves, pipeline
from proxboost.experiments.fits.pipeline import plan_run
from proxboost.experiments.launch import (
    budget,
    config_keys,
    hydra_setup,
    job_configs,
    orphans,
    plugins,
)
from proxboost.experiments.launch.interrupts import (
    EXIT_INTERRUPTED,
    Interrupts,
    leave_worker,
    this_process,
)
from proxboost.experiments.launch.interrupts import report as report_interrupt
from proxboost.experiments.plan.curves_plan import experiment_dir, is_stored, specs_from_config
from proxboost.experiments.plan.methods import Algo, Engine
from proxboost.experiments.plan.protocol import ProtocolError, TaskMismatchError
from proxboost.experiments.store import results
from proxboost.experiments.store.results import identity_hash
from proxboost.experiments.system import io_errors, private_api
from proxboost.losses import LOSS_PARAMETERS, Loss, MultiQuantile

log = logging.getLogger("proxboost.run")

# before Hydra composes or writes anything: output folders, full disks
# (proxboost.experiments.launch.hydra_setup)
hydra_setup.install()

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


#: The errors of a mistaken command (one line, exit code 2).
_USER_ERRORS = (UserError, ProtocolError, DatasetUnavailableError, ChecksumError, DatasetShapeError)

#: What the option of each instantiated config group builds (``_target_``); a loss of several
#: quantiles (``loss=pinball loss.tau=[0.05,0.5,0.95]``) is a MultiQuantile.
_BUILDS = {"loss": (Loss, MultiQuantile), "algo": Algo, "engine": Engine}


def _hydra_record(cfg):
    """Hydra's record of how ``cfg`` was composed (the chosen options, the command line's
    overrides), or None for a config composed without it (``compose()`` in a test)."""
    if "hydra" in cfg:  # a job composed by the preflight check
        return cfg.hydra
    if HydraConfig.initialized():  # the job itself
        return HydraConfig.get()
    return None


def _searchpath(record) -> tuple[str, ...]:
    """The ``hydra.searchpath`` override of the command (a user's config folders,
    docs/extending.md) as a list of overrides (none without it), for the compositions that
    Hydra's own loader makes again."""
    folders = list(record.searchpath or ()) if record is not None else []
    return (f"hydra.searchpath=[{','.join(repr(str(f)) for f in folders)}]",) if folders else ()


@functools.lru_cache(maxsize=32)
def _option(config_name, group, option, searchpath=()) -> dict:
    """The values of the option ``option`` of the config group ``group`` as Hydra composes it
    (no other override than the command's search path)."""
    loader = GlobalHydra.instance().config_loader()
    overrides = [*searchpath, f"{group}={option}"]
    cfg = loader.load_configuration(config_name, overrides, RunMode.RUN)
    return OmegaConf.to_container(cfg[group], resolve=True)


def _loss_label(cfg, record) -> str:
    """The loss's folder name: its name, plus the parameters whose value differs from the chosen
    option's own (e.g. ``pinball-tau0.5``), so that rows of a modified loss never sit under its
    name. An option named otherwise than its loss (``pinball_low``: pinball at τ = 0.1) is
    compared with the loss's own option (``pinball``), so its rows are told apart by name too
    (``pinball-tau0.1``)."""
    name = cfg.loss.name
    if record is None:
        return name
    chosen = record.runtime.choices["loss"]
    if chosen != name and name in GlobalHydra.instance().config_loader().get_group_options("loss"):
        chosen = name
    option = _option(record.job.config_name, "loss", chosen, _searchpath(record))
    given = OmegaConf.to_container(cfg.loss, resolve=True)
    changed = {k: given[k] for k in LOSS_PARAMETERS if k in given and given[k] != option.get(k)}
    return name + "".join(f"-{k}{_label_value(v)}" for k, v in sorted(changed.items()))


def _label_value(value) -> str:
    """A parameter's value in a folder name: a list of levels as ``0.05-0.5-0.95``."""
    if isinstance(value, (list, tuple)):
        return "-".join(str(v) for v in value)
    return str(value)


def _grid_name(cfg, record) -> str:
    """The grid's name: the option chosen in the ``grid`` group, as Hydra records it
    (``hydra.runtime.choices``), plus ``-custom<hash>`` of the grid values given on the command
    line that differ from their option's own (``grid.max_depth=[2]``; the algo's own axes,
    ``algo.grid.max_features=[sqrt]``), so that rows of a modified grid never sit under its name.
    A config composed without Hydra's record is named by its ``grid.name``."""
    if record is None:
        return cfg.grid.name
    name = record.runtime.choices["grid"]
    overridden = {o.lstrip("+~").split("=", 1)[0] for o in record.overrides.task}
    changed = {}
    for group, path in (("grid", ("grid",)), ("algo", ("algo", "grid"))):
        node = OmegaConf.select(cfg, ".".join(path))
        given = {} if node is None else OmegaConf.to_container(node, resolve=True)
        # a key is given on the command line whole or in part (a grid's algo section:
        # grid.lightgbm.min_data_in_leaf=[5])
        keys = [
            k
            for k in given
            if k != "name"
            and any(
                o == ".".join((*path, k)) or o.startswith(".".join((*path, k, "")))
                for o in overridden
            )
        ]
        if keys:
            option = _option(
                record.job.config_name, group, record.runtime.choices[group], _searchpath(record)
            )
            option = option.get("grid", {}) if group == "algo" else option
            changed.update({k: given[k] for k in keys if given[k] != option.get(k)})
    if not changed:
        return name
    return f"{name}-custom{identity_hash(changed)[:6]}"


def _instantiated(cfg, group):
    """The object the chosen option of ``group`` builds (its ``_target_``): a loss, an
    :class:`~proxboost.experiments.plan.methods.Algo` or an
    :class:`~proxboost.experiments.plan.methods.Engine`."""
    try:
        built = instantiate(cfg[group], _convert_="all")
    except Exception as exc:  # instantiate wraps the target's own error
        cause = exc.__cause__ or exc
        raise UserError(f"{group} '{cfg[group].name}': {cause}") from None
    cls = _BUILDS[group]
    if not isinstance(built, cls):
        first = cls[0] if isinstance(cls, tuple) else cls
        raise UserError(
            f"{group} '{cfg[group].name}': its _target_ must be {first.__module__}."
            f"{first.__name__} (it built a {type(built).__name__})"
        )
    return built


def check_values(cfg) -> None:
    """Types of the top-level run settings (the pipeline checks the protocol, grid and data),
    after importing the ``plugins`` (their registered losses, datasets and methods are known
    from then on)."""
    try:
        plugins.import_plugins(cfg.get("plugins"))
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if cfg.n_jobs is not None and not (
        is_integer(cfg.n_jobs) and cfg.n_jobs != 0 and cfg.n_jobs >= -1
    ):
        raise UserError(
            f"n_jobs must be an integer >= 1, -1 or null (every core), got {cfg.n_jobs!r}"
        )
    for key in ("progress", "skip_task_mismatch", "skip_unavailable", "dry_run"):
        if not isinstance(cfg[key], bool):
            raise UserError(f"{key} must be true or false, got {cfg[key]!r}")
    if not isinstance(cfg.results_dir, str) or not cfg.results_dir:
        raise UserError(f"results_dir must be a folder name, got {cfg.results_dir!r}")
    if cfg.tie_rule not in TIE_RULES:
        raise UserError(f"tie_rule must be one of {', '.join(TIE_RULES)}, got {cfg.tie_rule!r}")
    unknown = config_keys.unknown_keys(cfg)
    if unknown:  # no override is silently ignored (proxboost.experiments.launch.config_keys)
        raise UserError(config_keys.message(unknown))
    _deadline(cfg)


def _deadline(cfg):
    """The command's deadline (:func:`proxboost.experiments.fits.deadline.deadline`); a bad budget
    is a UserError."""
    try:
        return budget.deadline(cfg.get("budget"))
    except ValueError as exc:
        raise UserError(str(exc)) from None


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
    return to_absolute_path(cfg.results_dir)


def run_arguments(cfg) -> dict:
    """The arguments of :func:`proxboost.experiments.fits.pipeline.plan_run` for a composed config:
    the loss, algo and engine built by their options' ``_target_``, the folders' names from Hydra's
    record of the chosen options."""
    check_values(cfg)
    record = _hydra_record(cfg)
    loss, algo, engine = (_instantiated(cfg, group) for group in ("loss", "algo", "engine"))
    grid = OmegaConf.to_container(cfg.grid, resolve=True)
    dataset = OmegaConf.to_container(cfg.dataset, resolve=True)
    params = dataset.get("params") or {}
    if cfg.dataset.name == "csv":  # a user's file: relative to the folder run.py was started in
        params = csv_params(params, to_absolute_path)
    fr = cfg.protocol.fractions
    return dict(
        dataset=cfg.dataset.name,
        dataset_params=params,
        loss=loss,
        loss_label=_loss_label(cfg, record),
        algo=algo,
        grid={axis: values for axis, values in grid.items() if axis != "name"},
        grid_name=_grid_name(cfg, record),
        engine=engine,
        tie_rule=cfg.tie_rule,
        n_splits=cfg.protocol.n_splits,
        max_estimators=cfg.protocol.max_estimators,
        fractions=(fr.train, fr.validation, fr.test),
        seed=cfg.protocol.seed,
        interval_ties=cfg.protocol.get("interval_ties", "closed"),
        results_dir=_results_dir(cfg),
        mirror=cfg.data.mirror,
        skip_task_mismatch=cfg.skip_task_mismatch,
        skip_unavailable=cfg.skip_unavailable,
    )


def _synthetic_specs(cfg):
    """The runs of a synthetic experiment's config
    (:func:`proxboost.experiments.plan.curves_plan.specs_from_config`)."""
    try:
        return specs_from_config(
            OmegaConf.to_container(cfg.synthetic, resolve=True),
            engine=_instantiated(cfg, "engine").name,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise UserError(f"synthetic: {exc}") from None


def _inner_n_jobs(cfg):
    """Workers for the fits of one run: ``n_jobs`` if set; else 1 per job when a parallel
    launcher (joblib) runs the sweep's jobs side by side, ``cpus_per_task`` under submitit, and
    every core otherwise (``None``)."""
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


def main(cfg: DictConfig):
    """One job of ``run.py``; returns the mean test loss (Hydra sweepers may read it)."""
    interrupts = this_process()
    in_launcher_worker = interrupts.start_job()
    orphans.install()  # a launcher worker's or Slurm job's own pools
    try:
        return _job(cfg, in_launcher_worker, interrupts)
    finally:
        interrupts.end_job(in_launcher_worker)


def _job(cfg: DictConfig, in_launcher_worker: bool, interrupts: Interrupts):
    """The body of :func:`main`: one run or synthetic experiment, with errors and interrupts."""
    try:
        if "synthetic" in cfg:
            check_values(cfg)
            check_writable(_results_dir(cfg))
            specs = _synthetic_specs(cfg)
            deadline = _deadline(cfg)
            single = _budget_start(cfg, [], [(_results_dir(cfg), s) for s in specs], deadline)
            if cfg.dry_run:
                return _dry_run_curves(cfg.synthetic.experiment, specs, _results_dir(cfg))
            curves.run_curves(
                cfg.synthetic.experiment,
                specs,
                _results_dir(cfg),
                progress=cfg.progress,
                log=log.info,
                deadline=deadline,
            )
            _budget_end(single, deadline)
            return None
        args = run_arguments(cfg)
        check_writable(args["results_dir"])
        run = pipeline.plan_run(**args)
        if run is None:
            return None
        deadline = _deadline(cfg)
        single = _budget_start(cfg, [run], [], deadline)
        if cfg.dry_run:
            return _dry_run(run)
        df = pipeline.execute(
            run, n_jobs=_inner_n_jobs(cfg), progress=cfg.progress, deadline=deadline
        )
        _budget_end(single, deadline)
    except _USER_ERRORS as exc:
        log.error("%s", exc)
        raise SystemExit(2) from None
    except (Exception, io_errors.StorageExit) as exc:
        if not io_errors.is_storage_error(exc):
            raise
        interrupts.stop_workers()  # running fits are abandoned; stored rows are kept
        io_errors.stop(exc)  # one line, exit code 2 (a full disk, a lost permission)
    except KeyboardInterrupt:
        interrupts.stop_workers()
        if in_launcher_worker:  # the sweep's own process reports, once
            leave_worker(EXIT_INTERRUPTED)
        # rows and curves this command stored (a basic sweep: every job), counted in the store
        report_interrupt(results.stored_since(_results_dir(cfg)))
    if df is None or df.empty:
        return None
    return float(df["test_loss"].mean())


def _budget_start(cfg, runs, specs, deadline):
    """A command of one job (not a sweep, whose :class:`Preflight` speaks for all its jobs): the
    estimate and the deadline before any fit. Returns what :func:`_budget_end` needs, or None."""
    if HydraConfig.initialized() and HydraConfig.get().mode == RunMode.MULTIRUN:
        return None
    for line in budget.start_lines(budget.of_runs(runs, specs), _workers(cfg), deadline):
        log.info("%s", line)
    return runs, specs


def _budget_end(single, deadline) -> None:
    if single is not None:
        for line in budget.end_lines(budget.of_runs(*single), deadline):
            log.info("%s", line)


def _workers(cfg, config=None) -> int:
    """Workers that share a command's fits: the joblib launcher's jobs, else ``n_jobs``."""
    launcher = (config.hydra.launcher if config is not None else {}) or {}
    if "joblib" in str(launcher.get("_target_", "")):
        return pipeline.resolve_n_jobs(launcher.get("n_jobs"))
    return pipeline.resolve_n_jobs(cfg.n_jobs)


def _dry_run(run) -> None:
    """``dry_run=true``: what the run would compute (its splits not stored yet), nothing fitted."""
    todo = sorted(set(range(run.n_splits)) - run.stored_splits())
    log.info(
        "dry run: %s [%s, engine %s]: %d/%d splits stored, %d to compute%s; rows in %s",
        run.label,
        run.protocol,
        run.method.engine,
        run.n_splits - len(todo),
        run.n_splits,
        len(todo),
        f" (splits {', '.join(map(str, todo))})" if todo else "",
        run.where,
    )


def _dry_run_curves(experiment, specs, results_dir) -> None:
    """``dry_run=true`` for a synthetic experiment: the curves it would compute, nothing fitted."""
    todo = [spec for spec in specs if not is_stored(results_dir, spec)]
    log.info(
        "dry run: [%s] %d runs, %d stored, %d to compute -> %s",
        experiment,
        len(specs),
        len(specs) - len(todo),
        len(todo),
        experiment_dir(results_dir, experiment),
    )
    for spec in todo:
        log.info("dry run: would compute %s (%s)", spec.label(), spec.name)


# -- a whole sweep ---------------------------------------------------------------------------------
#: The joblib launcher's settings a sweep checks before its first job (joblib's own checks come
#: only when the pool starts, as a traceback): value check, and what it must be.
_JOBLIB_SETTINGS = {
    "n_jobs": (lambda v: v is None or (is_integer(v) and v != 0), "an integer other than 0"),
    "backend": (lambda v: v in (None, "loky", "multiprocessing", "threading"), "loky"),
    "prefer": (lambda v: v in (None, "processes", "threads"), "processes or threads"),
    "require": (lambda v: v in (None, "sharedmem"), "null or sharedmem"),
    "batch_size": (lambda v: v in (None, "auto") or (is_integer(v) and v >= 1), "auto or >= 1"),
}


def check_launcher(launcher) -> str | None:
    """One line refusing an invalid joblib launcher setting (``hydra.launcher.n_jobs=0``, ...),
    None when the launcher's settings are valid (or it is another launcher)."""
    if "joblib" not in str(launcher.get("_target_", "")):
        return None
    for key, (valid, what) in _JOBLIB_SETTINGS.items():
        value = launcher.get(key)
        if not valid(value):
            return f"hydra.launcher.{key} must be {what}, got {value!r}"
    return None


#: run.py's own options that take a value (Hydra's argparse); the rest are overrides.
_OPTIONS_WITH_VALUE = (
    "--cfg", "-c", "--package", "-p", "--config-path", "-cp", "--config-name", "-cn",
    "--config-dir", "-cd", "--experimental-rerun",
)  # fmt: skip


def refuse_unknown_overrides(args) -> str | None:
    """One line for a ``key=value`` override (no ``+``) of a key that no configuration defines,
    before Hydra composes anything (Hydra would refuse it with a six-line message and exit 1):
    naming the key and the nearest one a run reads. None when every such key is known (keys
    added with ``+`` are checked once composed, by :func:`check_values`)."""
    overrides, skip = [], False
    for arg in args:
        if skip or arg.startswith("-"):
            skip = not skip and arg in _OPTIONS_WITH_VALUE
            continue
        overrides.append(arg)
    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except Exception:  # Hydra's own message for a malformed override
        return None
    known = config_keys.known_paths()
    groups = {p for p in known if "." not in p}
    for override in parsed:
        key = override.key_or_group
        if override.is_add() or override.is_force_add() or override.is_delete():
            continue
        if key.split(".")[0] == "hydra" or "/" in key or key in groups:
            continue
        if key in known or any(key.startswith(p + ".") for p in config_keys.OPEN):
            continue
        return config_keys.message([(key, config_keys.nearest(key, known))])
    return None


def _sweep_jobs(config) -> list[list[str]]:
    """The override lists of every job of a basic-sweeper multirun."""
    params = [f"{k}={v}" for k, v in (config.hydra.sweeper.get("params") or {}).items()]
    parsed = OverridesParser.create().parse_overrides(params + list(config.hydra.overrides.task))
    return private_api.sweep_jobs(parsed)


def check_jobs(config, jobs, planned=None, configs=None):
    """Check ``jobs`` (override lists, :func:`_sweep_jobs`) of the multirun whose configuration is
    ``config`` as each job would check itself, without fitting. Returns the problems (lines),
    the loss/dataset task mismatches (lines), the number of jobs skipped because their data are
    unavailable (``skip_unavailable``), the row folders of the other real-world jobs, the
    folders of the synthetic experiments and the number of real-world jobs whose rows are all
    stored already (they will only be read). ``planned``: a list that receives the planned runs
    and ``(results_dir, spec)`` pairs of the curves (for the estimates of :mod:`.budget`).
    ``configs``: the :class:`~proxboost.experiments.launch.job_configs.JobConfigs` to compose the
    jobs with, so that a caller checking several sweeps at one moment (the README's, in a test)
    composes each base and option once; by default (and when it was made for another config or
    search path) one for this sweep (``job_configs.for_sweep``: a small sweep job by job)."""
    # each job's configuration as Hydra composes it, after the command's search path (a user's
    # config folders); in a large sweep from a few compositions (0.1 s each) rather than one per
    # job
    loader, name, searchpath = (
        GlobalHydra.instance().config_loader(),
        config.hydra.job.config_name,
        _searchpath(config.hydra),
    )
    if configs is None or not configs.composes(loader, name, searchpath):
        configs = job_configs.for_sweep(loader, name, searchpath, len(jobs))
    problems, mismatched, skipped, locations, experiments, complete = [], [], 0, [], [], 0
    for overrides in jobs:
        cfg = configs(overrides)
        try:
            if "synthetic" in cfg:
                check_values(cfg)
                check_writable(_results_dir(cfg))
                specs = _synthetic_specs(cfg)
                if planned is not None:
                    planned += [(_results_dir(cfg), spec) for spec in specs]
                experiments.append(experiment_dir(_results_dir(cfg), cfg.synthetic.experiment))
                continue
            args = run_arguments(cfg)
            check_writable(args["results_dir"])
            run = plan_run(**{**args, "skip_task_mismatch": False})
        except TaskMismatchError as exc:
            mismatched.append(str(exc))
            continue
        except _USER_ERRORS as exc:
            problems.append(str(exc))
            continue
        if run is None:  # skip_unavailable
            skipped += 1
        else:
            locations.append(run.location)
            complete += len(run.stored_splits()) == run.n_splits
            if planned is not None:
                planned.append(run)
    return problems, mismatched, skipped, locations, experiments, complete


class Preflight(Callback):
    """Checks every job of a multirun before any fit; prints the sweep's table at its end."""

    def __init__(self):
        self.locations = []
        self.planned, self.deadline = [], None

    def on_multirun_start(self, config: DictConfig, **kwargs) -> None:
        sweep = this_process()
        sweep.joblib_launcher = "joblib" in str(config.hydra.launcher.get("_target_", ""))
        launcher = check_launcher(config.hydra.launcher)
        if launcher:
            log.error("%s", launcher)
            raise SystemExit(2)
        jobs = _sweep_jobs(config)
        planned = []
        problems, mismatched, skipped, locations, experiments, complete = check_jobs(
            config, jobs, planned
        )
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
        sweep.locations += locations
        sweep.experiments += dict.fromkeys(experiments)
        log.info(
            "checked the %d jobs of this sweep before any fit: %d to run, %d complete already "
            "(only read), %d skipped",
            len(jobs),
            len(jobs) - len(mismatched) - skipped - complete,
            complete,
            len(mismatched) + skipped,
        )
        self._budget_start(config, planned)

    def _budget_start(self, config, planned):
        """The sweep's estimate and deadline, once, before any fit; the deadline is handed to the
        jobs (and the launcher's workers) in the environment."""
        self.planned = planned
        self.deadline = _deadline(config)
        budget.share(self.deadline)
        estimate = budget.of_runs(*self._split_planned())
        for line in budget.start_lines(estimate, _workers(config, config), self.deadline):
            log.info("%s", line)

    def _split_planned(self):
        runs = [p for p in self.planned if not isinstance(p, tuple)]
        return runs, [p for p in self.planned if isinstance(p, tuple)]

    def on_multirun_end(self, config: DictConfig, **kwargs) -> None:
        if self.locations:
            for line in sweep_table(self.locations):
                log.info("%s", line)
        for line in budget.end_lines(budget.of_runs(*self._split_planned()), self.deadline):
            log.info("%s", line)


def sweep_table(locations) -> list[str]:
    """Lines of a table of the rows stored at ``locations`` (dataset, loss, method, engine,
    mean ± std test loss and error, rows, folder)."""
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
