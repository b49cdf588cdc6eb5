"""The run pipeline: validation, data, result identity, resume, storage and scheduling of fits.

:func:`run_experiment` runs one (dataset, loss, algo) under the protocol of
:mod:`proxboost.protocol` and stores one row per split (:mod:`proxboost.results`):

1. every input is checked before any fit (protocol values, algo, loss, engine, tie rule,
   grid, the loss's task against the dataset's);
2. the data are loaded (a real data file's sha256 enters the identity);
3. the run's identity (:func:`run_identity`) names its folder; splits whose row is stored
   with the same identity are skipped;
4. the other splits are computed by :func:`run_protocol` and each row is stored as soon as
   it is known, so an interrupted run resumes where it stopped.

Scheduling (:func:`run_protocol`): every (split, grid point) fit and every refit is a task
of joblib's ``Parallel(return_as="generator_unordered")`` on ``n_jobs`` processes; in a job of
the joblib launcher, where joblib would run nested work in threads, a thread pool of
:mod:`concurrent.futures` runs them instead (:func:`_fit_pool` says why). Splits go in
waves big enough to give every worker at least two tasks; the refits of a wave are
dispatched with the fits of the next one, so rows are stored while the run goes on. Every task
is a pure function of its inputs (``random_state = seed * 10000 + k`` for every fit of split
k), so the rows are identical for any number of workers.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import math
import os
import signal
import time
import warnings
from dataclasses import dataclass

import numpy as np

from . import results
from ._progress import Progress
from ._vocabulary import TIE_RULES
from .datasets import dataset_identity
from .losses import LOSS_PARAMETERS, Loss, make_loss
from .methods import (
    ALGOS,
    BOOSTING_ALGOS,
    DEFAULT_TIE_RULE,
    GRID_CHECKS,
    loss_params,
    make_method,
)
from .protocol import (
    DEFAULT_FRACTIONS,
    ProtocolError,
    canonical_grid,
    check_task,
    expand_grid,
    protocol_name,
    selection,
    split_indices,
    split_random_state,
    split_row,
    split_sizes,
    test_metrics,
    validate_protocol,
)

__all__ = [
    "TIE_RULES",
    "Run",
    "execute",
    "plan_run",
    "resolve_n_jobs",
    "run_experiment",
    "run_identity",
    "run_protocol",
    "summary_line",
]

log = logging.getLogger(__name__)

#: Tie rules of the leaf line searches (docs/method.md).

#: Row columns of the losses' parameters.
_LOSS_COLUMNS = ("tau", "beta", "newton_steps")


def resolve_n_jobs(n_jobs, n_tasks=None) -> int:
    """``None`` or ``-1`` → every core available to this process; capped by ``n_tasks``."""
    if n_jobs is None or int(n_jobs) < 1:
        try:
            n = len(os.sched_getaffinity(0))
        except AttributeError:  # pragma: no cover - not on Linux
            n = os.cpu_count() or 1
    else:
        n = int(n_jobs)
    if n_tasks is not None:
        n = min(n, max(int(n_tasks), 1))
    return max(n, 1)


# -- identity --------------------------------------------------------------------------------------
def run_identity(*, dataset, loss, method, grid, n_splits, max_estimators, fractions, seed) -> dict:
    """Everything that determines a run's rows (see :mod:`proxboost.results`): ``dataset`` from
    :func:`dataset_identity`, the loss object and its parameters, the method's identity, the
    searched grid values (canonical: sorted), the protocol values, ``NUMERICS_VERSION``."""
    return {
        "numerics_version": results.NUMERICS_VERSION,
        "dataset": dataset,
        "loss": {"name": loss.name, **loss_params(loss)},
        "method": method.identity(),
        "grid": canonical_grid(grid, method.grid_axes),
        "protocol": {
            "n_splits": int(n_splits),
            "max_estimators": int(max_estimators),
            "fractions": [float(f) for f in fractions],
            "seed": int(seed),
        },
    }


# -- scheduling ------------------------------------------------------------------------------------
def _task(key, parent_pid, fn, *args):
    if os.getpid() != parent_pid:
        # a worker process. Ctrl-C reaches every process of the terminal's group: the parent
        # handles it (one line, then it kills the workers); a worker must not print its own
        # traceback. (Inside a joblib-launcher job the tasks run in threads of the job's process:
        # signals are the process's own business there.)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    t0 = time.perf_counter()
    return key, fn(*args), time.perf_counter() - t0


def run_protocol(
    X,
    y,
    method,
    grid_points,
    *,
    n_splits=20,
    max_estimators=1000,
    fractions=DEFAULT_FRACTIONS,
    seed=0,
    splits=None,
    n_jobs=1,
    on_row=None,
    progress=True,
    desc=None,
    base_row=None,
):
    """Run the protocol on ``splits`` (default ``range(n_splits)``) and return the rows (dicts).

    ``on_row(row)`` is called as soon as a split's row is known (e.g. to store it). ``base_row``
    holds columns shared by every row. ``n_jobs``: workers (``None``/-1: every core).
    """
    from joblib import delayed

    X = np.asarray(X)
    y = np.asarray(y, dtype=np.float64)
    splits = list(range(n_splits)) if splits is None else [int(k) for k in splits]
    G = len(grid_points)
    if G == 0:
        raise ProtocolError("the grid has no points")
    sizes = split_sizes(len(y), fractions)
    n_tasks = len(splits) * (G + 1)
    n_workers = resolve_n_jobs(n_jobs, n_tasks)
    rows = []
    if not splits:
        return rows
    log.info(
        "%s: %d fits + %d refits on %d worker(s); OMP_NUM_THREADS=%s",
        desc or method.name,
        len(splits) * G,
        len(splits),
        n_workers,
        os.environ.get("OMP_NUM_THREADS", "unset"),
    )
    per_wave = max(1, math.ceil(2 * n_workers / G))
    parent_pid = os.getpid()
    waves = [splits[i : i + per_wave] for i in range(0, len(splits), per_wave)]
    parts = {}  # split -> (train, valid, test indices) while the split is open
    curves = {}  # split -> [(values, n_estimators) or None] * G
    seconds = {}  # split -> fit seconds so far
    chosen = {}  # split -> (g, T, validation value), waiting for its refit

    def fit_tasks(k):
        tr, va, te = parts[k] = split_indices(len(y), k, seed, fractions)
        curves[k], seconds[k] = [None] * G, 0.0
        for g, params in enumerate(grid_points):
            yield delayed(_task)(
                ("fit", k, g),
                parent_pid,
                method.validation_curve,
                params,
                (X[tr], y[tr]),
                (X[va], y[va]),
                int(max_estimators),
                split_random_state(k, seed),
            )

    def refit_task(k):
        tr, va, te = parts[k]
        trval = np.concatenate([tr, va])
        g, T, _ = chosen[k]
        return delayed(_task)(
            ("refit", k),
            parent_pid,
            method.refit_predict,
            grid_points[g],
            T,
            (X[trval], y[trval]),
            X[te],
            split_random_state(k, seed),
        )

    def handle(key, result, elapsed):
        if key[0] == "fit":
            _, k, g = key
            curves[k][g] = result
            seconds[k] += elapsed
            if all(c is not None for c in curves[k]):
                chosen[k] = selection(curves.pop(k))
            return
        _, k = key
        g, T, val_loss = chosen.pop(k)
        test_loss, test_error = test_metrics(
            method.loss, y[parts.pop(k)[2]], result, report_loss=method.reports_loss()
        )
        row = dict(base_row or {})
        row.update(
            split_row(
                k,
                grid_points[g],
                g,
                G,
                T,
                val_loss,
                test_loss,
                test_error,
                sizes,
                seed,
                method.val_metric,
            )
        )
        row.update(fit_seconds=seconds.pop(k) + elapsed, refit_seconds=elapsed)
        rows.append(row)
        if on_row is not None:
            on_row(row)
        bar.set_postfix_str(f"rows {len(rows)}/{len(splits)}", refresh=False)

    bar = Progress(n_tasks, desc, unit="fit", enabled=progress, mininterval=1.0, smoothing=0.1)
    try:
        with warnings.catch_warnings():
            # an interrupted run abandons its running fits on purpose: joblib's note about
            # discarded or cancelled tasks would only add noise to the one-line message
            warnings.filterwarnings("ignore", message=".*adjusting the input task iterator.*")
            with _fit_pool(n_workers) as parallel:
                for wave in [*waves, []]:
                    tasks = [refit_task(k) for k in sorted(chosen)]
                    tasks += [t for k in wave for t in fit_tasks(k)]
                    outputs = parallel(tasks)
                    try:
                        for key, result, elapsed in outputs:
                            bar.update(1)
                            handle(key, result, elapsed)
                    finally:  # now, under the filter above (not whenever it is collected)
                        outputs.close()
    finally:
        bar.close()
    rows.sort(key=lambda r: r["split"])
    return rows


@contextlib.contextmanager
def _fit_pool(n_workers):
    """``parallel(tasks)``: run joblib ``delayed`` tasks on ``n_workers`` and yield their results
    as they complete.

    joblib's ``Parallel``, except where joblib would run the tasks in threads (nested in a job of
    the joblib launcher): there a :class:`~concurrent.futures.ThreadPoolExecutor`. joblib's thread
    pool holds named semaphores, and an interrupted sweep ends its launcher's workers at once (the
    first one to end makes loky kill the others), so a worker cannot always release them: the
    sweep then ends with a "leaked semlock" warning. The executor holds none. Its running fits
    are abandoned, not awaited, when the consumer stops early (an interrupt)."""
    from concurrent.futures import ThreadPoolExecutor

    from joblib import Parallel

    from ._private_api import joblib_uses_threads

    if n_workers == 1 or not joblib_uses_threads():
        with Parallel(n_jobs=n_workers, return_as="generator_unordered") as parallel:
            yield parallel
        return
    executor = ThreadPoolExecutor(max_workers=n_workers, thread_name_prefix="proxboost-fit")
    try:
        yield functools.partial(_completed, executor)
    finally:
        executor.shutdown(wait=False, cancel_futures=True)


def _completed(executor, tasks):
    """Submit joblib ``delayed`` tasks to ``executor``; yield their results as they complete."""
    from concurrent.futures import as_completed

    futures = [executor.submit(fn, *args, **kwargs) for fn, args, kwargs in tasks]
    try:
        for future in as_completed(futures):
            yield future.result()
    finally:  # stopped early: start nothing more
        for future in futures:
            future.cancel()


# -- one run ---------------------------------------------------------------------------------------
def _dataset_task(dataset):
    from .datasets import dataset_info

    task = getattr(dataset_info(dataset), "task", None)
    if task not in ("regression", "classification"):
        return None  # the task is chosen by the loss (synthetic)
    return task


@functools.lru_cache(maxsize=8)
def _load_dataset(name, seed, mirror, params):
    """:func:`proxboost.datasets.load_dataset`, once per process for the same arguments: the
    checks of a sweep and its jobs (basic launcher: the same process) load each dataset once."""
    from .datasets import load_dataset

    return load_dataset(name, random_state=seed, mirror=mirror, **dict(params))


def _loss_columns(loss) -> dict:
    """The row's loss-parameter columns: the loss's own parameters (pinball: ``tau``;
    exponential: ``beta``, ``newton_steps``; ...), NaN for the ones it does not take."""
    params = loss_params(loss)
    return {name: params.get(name, math.nan) for name in _LOSS_COLUMNS}


def _short_hash(params) -> str:
    return results.identity_hash(params)[:8]


@dataclass
class Run:
    """One planned run: everything checked, data loaded, identity known; nothing fitted yet."""

    label: str
    protocol: str
    method: object
    grid_points: list
    X: np.ndarray
    y: np.ndarray
    identity: str  # canonical JSON
    location: tuple  # (results_dir, protocol, dataset, loss, algo, engine, identity) of its folder
    base_row: dict
    n_splits: int
    max_estimators: int
    fractions: tuple
    seed: int
    tie_rule: str

    @property
    def where(self):
        return results.run_dir(*self.location)

    def stored_splits(self) -> set:
        return results.stored_splits(*self.location)


def plan_run(
    *,
    dataset="synthetic",
    loss="ls",
    algo="prox",
    grid=None,
    grid_name="custom",
    dataset_params=None,
    loss_params=None,
    algo_options=None,
    engine="exact",
    tie_rule=DEFAULT_TIE_RULE,
    n_splits=20,
    max_estimators=1000,
    fractions=DEFAULT_FRACTIONS,
    seed=0,
    results_dir="results",
    mirror=None,
    loss_label=None,
    skip_task_mismatch=False,
    skip_unavailable=False,
):
    """Check a run's inputs, load its data and compute its identity — no fit.

    ``loss`` is a loss object or its name (then built with ``loss_params``). Raises
    :class:`~proxboost.protocol.ProtocolError` (or the data's errors) with the reason; returns
    ``None`` for a run skipped by ``skip_task_mismatch`` / ``skip_unavailable``.
    """

    fractions = validate_protocol(n_splits, fractions, max_estimators, seed)
    if algo not in ALGOS:
        raise ProtocolError(f"unknown algo '{algo}'; valid choices: {', '.join(ALGOS)}")
    if isinstance(loss, Loss):
        loss_obj = loss
    else:
        loss_kw = {k: v for k, v in dict(loss_params or {}).items() if k in LOSS_PARAMETERS}
        try:
            loss_obj = make_loss(loss, **loss_kw)
        except ValueError as exc:
            raise ProtocolError(str(exc)) from exc
    loss = loss_obj.name
    if tie_rule not in TIE_RULES:
        raise ProtocolError(
            f"tie_rule '{tie_rule}' is not a tie rule; valid choices: {', '.join(TIE_RULES)}"
        )
    if algo in BOOSTING_ALGOS:
        from .engines import ENGINES

        if engine not in ENGINES:
            raise ProtocolError(
                f"engine '{engine}' is not available; valid choices: {', '.join(sorted(ENGINES))}"
            )
    try:
        method = make_method(algo, loss_obj, engine=engine, options=algo_options, tie_rule=tie_rule)
        method.identity()  # builds the estimator once: a bad option fails here
    except (TypeError, ValueError) as exc:
        raise ProtocolError(f"algo '{algo}': {exc}") from exc
    # None means "the dataset's default" (configs write `n_samples: null`): dropped
    dataset_params = {k: v for k, v in dict(dataset_params or {}).items() if v is not None}
    dataset_task = _dataset_task(dataset)
    if dataset_task is None:
        dataset_params.setdefault("task", loss_obj.task)
        dataset_task = dataset_params["task"]
    try:
        check_task(loss, loss_obj.task, dataset, dataset_task)
    except ProtocolError as exc:
        if skip_task_mismatch:
            log.warning("skipped: %s", exc)
            return None
        raise
    grid_points = expand_grid(grid or {}, method.grid_axes, GRID_CHECKS)

    from .datasets import DatasetUnavailableError

    try:
        X, y, info = _load_dataset(dataset, seed, mirror, tuple(sorted(dataset_params.items())))
    except DatasetUnavailableError as exc:
        if skip_unavailable:
            log.warning("skipped: dataset '%s' is unavailable: %s", dataset, exc)
            return None
        raise
    except (TypeError, ValueError) as exc:  # the dataset's own parameter checks
        raise ProtocolError(f"dataset '{dataset}': {exc}") from None
    split_sizes(len(y), fractions)  # fail before any fit if the data cannot be split
    identity = results.canonical_json(
        run_identity(
            dataset=dataset_identity(info, seed),
            loss=loss_obj,
            method=method,
            grid=grid or {},
            n_splits=n_splits,
            max_estimators=max_estimators,
            fractions=fractions,
            seed=seed,
        )
    )

    protocol = protocol_name(grid_name, n_splits, max_estimators, fractions, seed)
    extra = {k: v for k, v in dataset_params.items() if k != "task"}
    dataset_key = dataset if not extra else f"{dataset}-{_short_hash(extra)}"
    loss_key = loss_label or loss
    base_row = {
        "protocol": protocol,
        "dataset": dataset_key,
        "loss": loss_key,
        "algo": algo,
        "engine": method.engine,
        "task": loss_obj.task,
        **_loss_columns(loss_obj),
        "grid": grid_name,
        "max_estimators": int(max_estimators),
        "n_splits": int(n_splits),
        "train_fraction": fractions[0],
        "validation_fraction": fractions[1],
        "test_fraction": fractions[2],
        "seed": int(seed),
        "dataset_params": json.dumps(extra, sort_keys=True),
        "tie_rule": tie_rule if algo in BOOSTING_ALGOS else "none",
        "identity": identity,
    }
    return Run(
        label=f"{dataset_key}/{loss_key}/{algo}",
        protocol=protocol,
        method=method,
        grid_points=grid_points,
        X=X,
        y=y,
        identity=identity,
        location=(results_dir, protocol, dataset_key, loss_key, algo, method.engine, identity),
        base_row=base_row,
        n_splits=int(n_splits),
        max_estimators=int(max_estimators),
        fractions=fractions,
        seed=int(seed),
        tie_rule=tie_rule,
    )


def execute(run: Run, n_jobs=None, progress=True):
    """Compute the splits of ``run`` not stored yet, storing each row as soon as it is known;
    return every row of the run (a DataFrame)."""
    method, where = run.method, run.where
    if method.engine == "none":
        log.info(
            "%s grows its own trees: the tree engine does not apply (stored as engine=none)",
            method.name,
        )
    stored = run.stored_splits()
    todo = [k for k in range(run.n_splits) if k not in stored]
    log.info(
        "%s: protocol %s, engine %s, tie rule %s, %d grid points x T_max %d; %d/%d splits stored, "
        "%d to run; rows in %s",
        run.label,
        run.protocol,
        method.engine,
        run.tie_rule,
        len(run.grid_points),
        run.max_estimators,
        run.n_splits - len(todo),
        run.n_splits,
        len(todo),
        where,
    )
    if todo:
        results_dir = run.location[0]

        def store(row):
            path = results.write_row(results_dir, {**row, **results.provenance()})
            log.info(
                "%s split %d: %s, T=%d, %s -> %s",
                run.label,
                row["split"],
                _metrics_text(row),
                row["n_estimators"],
                row["params"],
                path,
            )

        t0 = time.perf_counter()
        run_protocol(
            run.X,
            run.y,
            method,
            run.grid_points,
            n_splits=run.n_splits,
            max_estimators=run.max_estimators,
            fractions=run.fractions,
            seed=run.seed,
            splits=todo,
            n_jobs=n_jobs,
            on_row=store,
            progress=progress,
            desc=run.label,
            base_row=run.base_row,
        )
        log.info("%s: %d rows computed in %.1f s", run.label, len(todo), time.perf_counter() - t0)
    df = results.load(where)
    log.info(summary_line(df, run.label, run.protocol, method.engine, where))
    return df


def run_experiment(*, n_jobs=None, progress=True, **config):
    """One run: (dataset, loss, algo) under the protocol, stored row by row; returns the run's rows.

    ``config``: the arguments of :func:`plan_run` (checked before any fit). Rows stored under
    ``results_dir`` with the same identity are skipped; the missing splits are computed and
    stored as soon as each is known. Returns a DataFrame of all the run's rows (stored earlier
    or now), or ``None`` if the run was skipped (``skip_task_mismatch``: the loss's task
    differs from the dataset's; ``skip_unavailable``: the dataset's files cannot be found or
    fetched). ``grid_name`` and ``loss_label`` name the run's folders (for people; the
    identity tells runs apart).
    """
    run = plan_run(**config)
    return None if run is None else execute(run, n_jobs=n_jobs, progress=progress)


def _metrics_text(row) -> str:
    parts = []
    if not math.isnan(row["test_loss"]):
        parts.append(f"test loss {row['test_loss']:.6g}")
    if not math.isnan(row["test_error"]):
        parts.append(f"test error {row['test_error']:.4g}")
    return ", ".join(parts) or "no test metric"


def summary_line(df, label, protocol, engine, where) -> str:
    """``<label> [<protocol>, engine <e>]: test loss m ± s (and error) over n splits; rows in
    <dir>``
    (std with ddof=1)."""
    n = len(df)
    if n == 0:
        return f"{label} [{protocol}, engine {engine}]: no rows; rows in {where}"
    parts = []
    tl = df["test_loss"].astype(float)
    if tl.notna().any():
        parts.append(f"test loss {tl.mean():.4g} ± {tl.std(ddof=1) if n > 1 else 0.0:.2g}")
    else:
        parts.append("test loss not reported (docs/protocol.md)")
    te = df["test_error"].astype(float)
    if te.notna().any():
        parts.append(f"misclassification {te.mean():.4g} ± {te.std(ddof=1) if n > 1 else 0.0:.2g}")
    return (
        f"{label} [{protocol}, engine {engine}]: {', '.join(parts)} over {n} splits; rows in"
        f" {where}"
    )
