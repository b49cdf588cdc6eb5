"""The run pipeline: validation, data, result identity, resume, storage and scheduling of fits.

:func:`run_experiment` runs one (dataset, loss, algo) under the protocol of
:mod:`proxboost.experiments.plan.protocol` and stores one row per split
(:mod:`proxboost.experiments.store.results`):

1. every input is checked before any fit (protocol values, algo, loss, engine, tie rule,
   grid, the loss's task against the dataset's): :func:`plan_run`, whose steps are
   :func:`_method`, :func:`_dataset_params`, :func:`_data` and :func:`_base_row`;
2. the data are loaded (a real data file's sha256 enters the identity);
3. the run's identity (:func:`run_identity`) names its folder; splits whose row is stored
   with the same identity are skipped (:func:`execute`);
4. the other splits are computed by :func:`run_protocol` and each row is stored as soon as
   it is known, so an interrupted run resumes where it stopped.

Scheduling (:func:`run_protocol`; the splits' state is one :class:`_Splits`): every (split, grid
point) fit and every refit is a task of joblib's ``Parallel(return_as="generator_unordered")`` on
``n_jobs`` processes; in a job of the joblib launcher, where joblib would run nested work in
threads, a thread pool of :mod:`concurrent.futures` runs them instead (:func:`_fit_pool` says why).
Splits go in waves big enough to give every worker at least two tasks; the refits of a wave are
dispatched with the fits of the next one, so rows are stored while the run goes on. Every task is a
pure function of its inputs (``random_state = seed * 10000 + k`` for every fit of split k), so the
rows are identical for any number of workers.
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
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field

import numpy as np
from joblib import Parallel, delayed

from proxboost._vocabulary import TIE_RULES
from proxboost.conformal import interval_measurement, levels_alpha
from proxboost.engines import ENGINES
from proxboost.experiments.datasets import (
    SUBSAMPLE_PARAMS,
    DatasetUnavailableError,
    dataset_identity,
    dataset_info,
    generator_defaults,
    load_dataset,
    row_columns,
)
from proxboost.experiments.fits.deadline import expired
from proxboost.experiments.fits.progress import Progress
from proxboost.experiments.plan.methods import (
    BOOSTING_ALGOS,
    DEFAULT_TIE_RULE,
    GRID_CHECKS,
    Algo,
    Engine,
    known_algos,
    n_levels,
)
from proxboost.experiments.plan.protocol import (
    DEFAULT_FRACTIONS,
    DEFAULT_INTERVAL_TIES,
    TIES_STREAM,
    ProtocolError,
    calibration_halves,
    canonical_grid,
    check_task,
    expand_grid,
    level_metrics,
    level_selections,
    protocol_name,
    selection,
    split_indices,
    split_random_state,
    split_row,
    split_sizes,
    test_metrics,
    validate_protocol,
)
from proxboost.experiments.store import results, row_claims
from proxboost.losses import LOSS_PARAMETERS, Loss, MultiQuantile, make_loss

__all__ = [
    "TIE_RULES",
    "Request",
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
def run_identity(
    *,
    dataset,
    loss,
    method,
    grid,
    n_splits,
    max_estimators,
    fractions,
    seed,
    interval_ties=DEFAULT_INTERVAL_TIES,
) -> dict:
    """Everything that determines a run's rows (see :mod:`proxboost.experiments.store.results`):
    ``dataset`` from :func:`dataset_identity`, the loss object and its parameters, the method's
    identity, the searched grid values (canonical: sorted), the protocol values,
    ``NUMERICS_VERSION``. ``interval_ties`` enters only when it is not the default (the rows
    stored before it existed keep their identity)."""
    ties = {} if interval_ties == DEFAULT_INTERVAL_TIES else {"interval_ties": interval_ties}
    return {
        "numerics_version": results.NUMERICS_VERSION,
        "dataset": dataset,
        "loss": {"name": loss.name, **loss.params()},
        "method": method.identity(),
        "grid": canonical_grid(grid, method.grid_axes),
        "protocol": {
            "n_splits": int(n_splits),
            "max_estimators": int(max_estimators),
            "fractions": [float(f) for f in fractions],
            "seed": int(seed),
            **ties,
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


@dataclass
class _OpenSplit:
    """A split whose row is not known yet."""

    parts: tuple  # (train, validation, test) row indices
    curves: list  # per grid point: (values, n_estimators) once its fit is back, else None
    seconds: float = 0.0  # fit seconds so far
    chosen: tuple | None = None  # (g, T, validation value) once every curve is back


class _Splits:
    """The protocol's steps for one run's splits: the fit tasks of a split, the refit tasks of
    the splits whose grid point and T are chosen, and each task's result received (a split's
    row once its refit is back). Every task is a pure function of its inputs."""

    def __init__(
        self,
        X,
        y,
        method,
        grid_points,
        max_estimators,
        fractions,
        seed,
        base_row,
        interval_ties=DEFAULT_INTERVAL_TIES,
    ):
        if not grid_points:
            raise ProtocolError("the grid has no points")
        self.interval_ties = interval_ties
        self.X, self.y, self.method, self.grid_points = X, y, method, grid_points
        self.n_grid = len(grid_points)
        self.max_estimators, self.fractions, self.seed = int(max_estimators), fractions, seed
        self.sizes = split_sizes(len(y), fractions)
        self.base_row = dict(base_row or {})
        self.open = {}  # split -> _OpenSplit
        self.parent_pid = os.getpid()
        self.claim = None  # claim(k) -> whether this process computes split k (row_claims)

    def fit_tasks(self, k) -> list:
        """One validation-curve fit per grid point of split ``k``, on its training part."""
        if self.claim is not None and not self.claim(k):  # stored, or another process's
            return []
        tr, va, te = split_indices(len(self.y), k, self.seed, self.fractions)
        self.open[k] = _OpenSplit((tr, va, te), [None] * self.n_grid)
        train, valid = (self.X[tr], self.y[tr]), (self.X[va], self.y[va])
        rs = split_random_state(k, self.seed)
        fit = self.method.validation_curve
        return [
            delayed(_task)(
                ("fit", k, g), self.parent_pid, fit, p, train, valid, self.max_estimators, rs
            )
            for g, p in enumerate(self.grid_points)
        ]

    def refit_tasks(self) -> list:
        """The refit on train ∪ validation of every split whose choice is made, by split."""
        tasks = []
        for k in sorted(k for k, split in self.open.items() if split.chosen is not None):
            tr, va, te = self.open[k].parts
            trval = np.concatenate([tr, va])
            g, T, _ = self.open[k].chosen
            args = (self._params(g), T, (self.X[trval], self.y[trval]), self.X[te])
            rs = split_random_state(k, self.seed)
            tasks.append(
                delayed(_task)(("refit", k), self.parent_pid, self.method.refit_predict, *args, rs)
            )
        return tasks

    def _choose(self, curves):
        """``(g, T, validation value)`` of a split; for separate models of several levels, one
        g and one T per level (tuples) and the sum of their values."""
        if not getattr(self.method, "separate_levels", False):
            return selection(curves)
        chosen = level_selections(curves)
        return tuple(c[0] for c in chosen), tuple(c[1] for c in chosen), sum(c[2] for c in chosen)

    def _params(self, g):
        """The grid point of ``g``, or the list of the levels' points (``g`` a tuple)."""
        return [self.grid_points[i] for i in g] if isinstance(g, tuple) else self.grid_points[g]

    def receive(self, key, result, elapsed):
        """Take a task's result; return the split's row when it was its refit, else None."""
        split = self.open[key[1]]
        if key[0] == "fit":
            split.curves[key[2]] = result
            split.seconds += elapsed
            if all(c is not None for c in split.curves):
                split.chosen, split.curves = self._choose(split.curves), []
            return None
        return self._row(key[1], self.open.pop(key[1]), result, elapsed)

    def _row(self, k, split, predictions, elapsed) -> dict:
        g, T, val_loss = split.chosen
        method = self.method
        y_test = self.y[split.parts[2]]
        if np.ndim(predictions) == 2:  # several quantiles in one model
            levels = level_metrics(method.loss, y_test, predictions)
            test_loss, test_error = float(np.mean(levels)), math.nan
        else:
            test_loss, test_error = test_metrics(
                method.loss, y_test, predictions, report_loss=method.reports_loss()
            )
        separate = isinstance(g, tuple)  # one choice per level, in levels_choice
        params = {"levels": self._params(g)} if separate else self.grid_points[g]
        row = dict(self.base_row)
        row.update(
            split_row(
                k,
                params,
                None if separate else g,
                self.n_grid,
                None if separate else T,
                val_loss,
                test_loss,
                test_error,
                self.sizes,
                self.seed,
                method.val_metric,
            )
        )
        row.update(fit_seconds=split.seconds + elapsed, refit_seconds=elapsed)
        if separate:
            choices = [
                {"grid_index": i, "n_estimators": t, "params": self.grid_points[i]}
                for i, t in zip(g, T, strict=True)
            ]
            row["levels_choice"] = json.dumps(choices, sort_keys=True)
        if np.ndim(predictions) == 2:
            row.update(self._levels_columns(k, method.loss, levels, y_test, predictions))
        return row

    def _levels_columns(self, k, loss, levels, y_test, predictions) -> dict:
        """The columns of a model of several quantiles: each level's test loss (``test_loss`` is
        their mean) and, with two levels or more, the interval of the outer levels before and after
        conformal calibration, calibrated on one half of the test part and measured on the other
        (:func:`~proxboost.experiments.plan.protocol.calibration_halves`), equal scores ordered by
        the protocol's ``interval_ties`` (random: the split's own stream, ``TIES_STREAM``)."""
        taus = loss.params()["tau"]
        columns = {"test_loss_levels": json.dumps(levels)}
        if len(taus) >= 2:
            cal, cov = calibration_halves(len(self.y), k, self.seed, self.fractions)
            alpha = levels_alpha(taus[0], taus[-1])  # exact: the rank is an integer
            ties, stream = self.interval_ties, (int(self.seed), int(k), TIES_STREAM)
            columns.update(
                interval_measurement(
                    predictions[:, 0], predictions[:, -1], y_test, cal, cov, alpha, ties, stream
                )
            )
        return columns


def _log_plan(desc, n_splits, n_grid, n_workers):
    log.info(
        "%s: %d fits + %d refits on %d worker(s); OMP_NUM_THREADS=%s",
        desc,
        n_splits * n_grid,
        n_splits,
        n_workers,
        os.environ.get("OMP_NUM_THREADS", "unset"),
    )


def _waves(splits, n_workers, n_grid) -> list:
    """Splits in waves big enough to give every worker at least two tasks."""
    per_wave = max(1, math.ceil(2 * n_workers / n_grid))
    return [splits[i : i + per_wave] for i in range(0, len(splits), per_wave)]


def _results(book, waves, n_workers):
    """``(key, result, seconds)`` of every task, as they complete: each wave's fits dispatched
    with the refits of the splits chosen so far (so rows are stored while the run goes on), then
    the last refits."""
    with warnings.catch_warnings():
        # an interrupted run abandons its running fits on purpose: joblib's note about
        # discarded or cancelled tasks would only add noise to the one-line message
        warnings.filterwarnings("ignore", message=".*adjusting the input task iterator.*")
        with _fit_pool(n_workers) as parallel:
            for wave in [*waves, []]:
                outputs = parallel(
                    book.refit_tasks() + [t for k in wave for t in book.fit_tasks(k)]
                )
                try:
                    yield from outputs
                finally:  # now, under the filter above (not whenever it is collected)
                    outputs.close()


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
    claim=None,
    interval_ties=DEFAULT_INTERVAL_TIES,
):
    """Run the protocol on ``splits`` (default ``range(n_splits)``) and return the rows (dicts).

    ``on_row(row)`` is called as soon as a split's row is known (e.g. to store it). ``base_row``
    holds columns shared by every row. ``n_jobs``: workers (``None``/-1: every core).
    ``claim(k)``: called when split k's first fit is about to be dispatched; False skips it.
    """
    X, y = np.asarray(X), np.asarray(y, dtype=np.float64)
    splits = list(range(n_splits)) if splits is None else [int(k) for k in splits]
    book = _Splits(
        X, y, method, grid_points, max_estimators, fractions, seed, base_row, interval_ties
    )
    book.claim = claim
    n_tasks = len(splits) * (book.n_grid + 1)
    n_workers = resolve_n_jobs(n_jobs, n_tasks)
    rows = []
    if not splits:
        return rows
    _log_plan(desc or method.name, len(splits), book.n_grid, n_workers)
    bar = Progress(n_tasks, desc, unit="fit", enabled=progress, mininterval=1.0, smoothing=0.1)
    waves = _waves(splits, n_workers, book.n_grid)
    # closed at once when the loop stops early (an interrupt), not whenever it is collected
    with bar, contextlib.closing(_results(book, waves, n_workers)) as done:
        for key, result, elapsed in done:
            bar.update(1)
            row = book.receive(key, result, elapsed)
            if row is None:
                continue
            rows.append(row)
            if on_row is not None:
                on_row(row)
            bar.set_postfix_str(f"rows {len(rows)}/{len(splits)}", refresh=False)
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
    # lazy: the shim imports Hydra (an optional extra), which the pipeline's Python API needs not
    from proxboost.experiments.system.private_api import joblib_uses_threads

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
    futures = [executor.submit(fn, *args, **kwargs) for fn, args, kwargs in tasks]
    try:
        for future in as_completed(futures):
            yield future.result()
    finally:  # stopped early: start nothing more
        for future in futures:
            future.cancel()


# -- one run ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Request:
    """A run as asked for: the arguments of :func:`plan_run`, not checked yet.

    ``loss`` is a loss object or its name (then built with ``loss_params``); ``algo`` an
    :class:`~proxboost.experiments.plan.methods.Algo` or an algorithm's name; ``engine`` an
    :class:`~proxboost.experiments.plan.methods.Engine` or a tree engine's name. ``grid`` maps axes
    to values (the algo's own axes are added to it); ``grid_name`` and ``loss_label`` name the run's
    folders, for people (the identity tells runs apart). ``dataset_params`` set to None mean the
    dataset's default. ``skip_task_mismatch`` / ``skip_unavailable``: skip the run (None) when the
    loss's task is not the dataset's / when the dataset's files cannot be obtained.
    """

    dataset: str = "synthetic"
    loss: object = "ls"
    algo: object = "prox"
    grid: dict = field(default_factory=dict)
    grid_name: str = "custom"
    dataset_params: dict = field(default_factory=dict)
    loss_params: dict = field(default_factory=dict)
    engine: object = "exact"
    tie_rule: str = DEFAULT_TIE_RULE
    n_splits: int = 20
    max_estimators: int = 1000
    fractions: tuple = DEFAULT_FRACTIONS
    seed: int = 0
    interval_ties: str = DEFAULT_INTERVAL_TIES
    results_dir: str = "results"
    mirror: str | None = None
    loss_label: str | None = None
    skip_task_mismatch: bool = False
    skip_unavailable: bool = False


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
    interval_ties: str = DEFAULT_INTERVAL_TIES

    @property
    def where(self):
        return results.run_dir(*self.location)

    def stored_splits(self) -> set:
        return results.stored_splits(*self.location)


def plan_run(**config) -> Run | None:
    """Check a run's inputs (``config``: the fields of :class:`Request`), load its data and compute
    its identity — no fit. Checked in this order: the protocol values, the algorithm, the loss, the
    tie rule, the engine and the method's options (:func:`_method`), the loss's task against the
    dataset's, the grid, the data and their split. Raises
    :class:`~proxboost.experiments.plan.protocol.ProtocolError` (or the data's errors) with the
    reason; returns ``None`` for a run skipped by ``skip_task_mismatch`` / ``skip_unavailable``."""
    r = Request(**config)
    fractions = validate_protocol(
        r.n_splits, r.fractions, r.max_estimators, r.seed, r.interval_ties
    )
    loss, algo, method = _method(r)
    if r.interval_ties != DEFAULT_INTERVAL_TIES and n_levels(loss) < 2:
        raise ProtocolError(
            f"protocol.interval_ties={r.interval_ties} orders the conformity scores of an "
            "interval, which needs a loss of two levels or more (e.g. loss.tau=[0.05,0.95]); "
            f"remove it for {loss!r}"
        )
    dataset_params = _dataset_params(r, loss)
    if dataset_params is None:
        return None
    grid = {**(r.grid or {}), **algo.grid}  # the grid option's axes and the algo's own
    # a grid option's section named after the algo (e.g. `lightgbm: {min_data_in_leaf: [...]}`)
    # sets that algo's own axes for this grid: each budget reading of a benchmark gives each
    # method its own axes under one grid name
    section = (r.grid or {}).get(algo.name)
    if isinstance(section, dict):
        grid.update(section)
    if hasattr(method, "search_axes"):  # a library's optional axis, searched when given
        method.search_axes(grid)
    grid_points = expand_grid(grid, method.grid_axes, GRID_CHECKS)
    data = _data(r, dataset_params)
    if data is None:
        return None
    X, y, info = data
    dataset_params = _drawn(dataset_params, info)
    split_sizes(len(y), fractions)  # fail before any fit if the data cannot be split
    if n_levels(loss) >= 2:  # the interval of the outer levels needs two test rows
        calibration_halves(len(y), 0, r.seed, fractions)
    identity = results.canonical_json(
        run_identity(
            dataset=dataset_identity(info, r.seed),
            loss=loss,
            method=method,
            grid=grid,
            n_splits=r.n_splits,
            max_estimators=r.max_estimators,
            fractions=fractions,
            seed=r.seed,
            interval_ties=r.interval_ties,
        )
    )
    row = _base_row(r, loss, algo, method, dataset_params, fractions, identity)
    row.update(row_columns(info))  # a user's CSV file: rows under its stem, no path
    location = (r.results_dir, row["protocol"], row["dataset"], row["loss"], algo.name)
    return Run(
        label=f"{row['dataset']}/{row['loss']}/{algo.name}",
        protocol=row["protocol"],
        method=method,
        grid_points=grid_points,
        X=X,
        y=y,
        identity=identity,
        location=(*location, method.engine, identity),
        base_row=row,
        n_splits=int(r.n_splits),
        max_estimators=int(r.max_estimators),
        fractions=fractions,
        seed=int(r.seed),
        tie_rule=r.tie_rule,
        interval_ties=r.interval_ties,
    )


def _method(request: Request):
    """(loss object, :class:`~proxboost.experiments.plan.methods.Algo`, method object) of a request,
    each checked: the algorithm's name, the loss and its parameters, the tie rule, the engine (for a
    boosting algorithm) and the method's options."""
    algo = request.algo if isinstance(request.algo, Algo) else Algo(request.algo)
    engine = request.engine.name if isinstance(request.engine, Engine) else request.engine
    if algo.name not in known_algos():
        raise ProtocolError(
            f"unknown algo '{algo.name}'; valid choices: {', '.join(known_algos())}"
        )
    loss = request.loss
    if not isinstance(loss, (Loss, MultiQuantile)):
        given = dict(request.loss_params or {})
        try:
            loss = make_loss(loss, **{k: v for k, v in given.items() if k in LOSS_PARAMETERS})
        except ValueError as exc:
            raise ProtocolError(str(exc)) from exc
    tie_rule = request.tie_rule
    if tie_rule not in TIE_RULES:
        raise ProtocolError(
            f"tie_rule '{tie_rule}' is not a tie rule; valid choices: {', '.join(TIE_RULES)}"
        )
    if algo.name in BOOSTING_ALGOS and engine not in ENGINES:
        raise ProtocolError(
            f"engine '{engine}' is not available; valid choices: {', '.join(sorted(ENGINES))}"
        )
    try:
        method = algo.method(loss, engine=engine, tie_rule=tie_rule)
        method.identity()  # builds the estimator once: a bad option fails here
    except (TypeError, ValueError) as exc:
        raise ProtocolError(f"algo '{algo.name}': {exc}") from exc
    return loss, algo, method


def _dataset_task(dataset):
    task = getattr(dataset_info(dataset), "task", None)
    if task not in ("regression", "classification"):
        return None  # the task is chosen by the loss (synthetic)
    return task


def _dataset_params(request: Request, loss) -> dict | None:
    """The dataset's parameters (a synthetic dataset's ``task`` is the loss's), once the loss's
    task is checked against the dataset's; None when it differs and ``skip_task_mismatch``."""
    # None means "the dataset's default" (configs write `n_samples: null`): dropped
    params = {k: v for k, v in dict(request.dataset_params or {}).items() if v is not None}
    dataset_task = _dataset_task(request.dataset)
    if dataset_task is None:
        params.setdefault("task", loss.task)
        dataset_task = params["task"]
    try:
        check_task(loss.name, loss.task, request.dataset, dataset_task)
    except ProtocolError as exc:
        if request.skip_task_mismatch:
            log.warning("skipped: %s", exc)
            return None
        raise
    return params


@functools.lru_cache(maxsize=8)
def _load_dataset(name, seed, mirror, params):
    """:func:`proxboost.experiments.datasets.load_dataset`, once per process for the same arguments:
    the checks of a sweep and its jobs (basic launcher: the same process) load each dataset once."""
    return load_dataset(name, random_state=seed, mirror=mirror, **dict(params))


def _data(request: Request, dataset_params):
    """``(X, y, info)`` of the request's dataset; None when its files are unavailable and
    ``skip_unavailable``."""
    name = request.dataset
    # hashable (the loads are cached): a list value (a CSV file's dropped columns) as a tuple
    params = tuple(
        sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in dataset_params.items())
    )
    try:
        return _load_dataset(name, request.seed, request.mirror, params)
    except DatasetUnavailableError as exc:
        if request.skip_unavailable:
            log.warning("skipped: dataset '%s' is unavailable: %s", name, exc)
            return None
        raise
    except (TypeError, ValueError) as exc:  # the dataset's own parameter checks
        raise ProtocolError(f"dataset '{name}': {exc}") from None


def _drawn(dataset_params, info) -> dict:
    """A dataset's parameters as they acted: a real dataset's subsampling (``max_rows``,
    ``subsample_seed``) only when rows were removed (a dataset already small enough is the whole
    dataset, under its plain name); a generator's parameters not at their default."""
    kept = {k: v for k, v in dataset_params.items() if k not in SUBSAMPLE_PARAMS}
    if info.synthetic:
        # a generator's parameter given at its default draws the data of no parameter: the
        # folder's name (a hash of the given ones) leaves it out, so that the command rebuilt from
        # a row's identity, which writes every default out, finds the same folder
        defaults = generator_defaults(info.name)
        return {k: v for k, v in dataset_params.items() if k not in defaults or v != defaults[k]}
    return {**kept, **{k: info.params[k] for k in SUBSAMPLE_PARAMS if k in info.params}}


def _base_row(request: Request, loss, algo, method, dataset_params, fractions, identity) -> dict:
    """The columns shared by every row of a run: what it is, its protocol, its identity. The
    loss's parameter columns hold the loss's own parameters (NaN for those it does not take)."""
    r = request
    extra = {k: v for k, v in dataset_params.items() if k != "task"}
    # a subsampled dataset keeps its name (tables mark it); its draw is in the identity
    named = {k: v for k, v in extra.items() if k not in SUBSAMPLE_PARAMS}
    params = loss.params()
    levels = {}
    if n_levels(loss):
        # the levels of a model of several quantiles: their own column (``tau`` stays a number
        # column, NaN here: this run is no run at one level)
        levels = {"levels": json.dumps(params.pop("tau"))}
    return {
        "protocol": protocol_name(
            r.grid_name, r.n_splits, r.max_estimators, fractions, r.seed, r.interval_ties
        ),
        "dataset": r.dataset if not named else f"{r.dataset}-{_short_hash(named)}",
        "loss": r.loss_label or loss.name,
        "algo": algo.name,
        "engine": method.engine,
        "task": loss.task,
        **{name: params.get(name, math.nan) for name in LOSS_PARAMETERS},
        "grid": r.grid_name,
        "max_estimators": int(r.max_estimators),
        "n_splits": int(r.n_splits),
        "train_fraction": fractions[0],
        "validation_fraction": fractions[1],
        "test_fraction": fractions[2],
        "seed": int(r.seed),
        "dataset_params": json.dumps(extra, sort_keys=True),
        "tie_rule": r.tie_rule if algo.name in BOOSTING_ALGOS else "none",
        **levels,
        "identity": identity,
    }


def _short_hash(params) -> str:
    return results.identity_hash(params)[:8]


def _claims(run) -> row_claims.RowClaims:
    """The row claims of the splits of a planned run: a split another process is computing is
    skipped (docs/running.md)."""
    rows = {k: results.row_path(*run.location, k) for k in range(run.n_splits)}
    return row_claims.RowClaims(
        rows, lambda k: results.stored_identity(rows[k]) == run.identity, run.label
    )


def execute(run: Run, n_jobs=None, progress=True, deadline=None):
    """Compute the splits of ``run`` not stored yet, storing each row as soon as it is known;
    return every row of the run (a DataFrame). ``deadline`` (a :func:`time.time` value): no
    split is started after it; splits in flight are finished and stored (:mod:`.deadline`)."""
    method, where = run.method, run.where
    if method.engine == "none":
        log.info(
            "%s grows its own trees: the tree engine does not apply (stored as engine=none)",
            method.name,
        )
    stored = run.stored_splits() | _reuse(run)
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
    if todo and expired(deadline):
        log.info("%s: budget reached, %d split(s) not started", run.label, len(todo))
        todo = []
    if todo:
        results_dir = run.location[0]

        def store(row):
            path = results.write_row(results_dir, {**row, **results.provenance()})
            claims.done(row["split"])  # stored: others may read it
            log.info(
                "%s split %d: %s, %s, %s -> %s",
                run.label,
                row["split"],
                _metrics_text(row),
                _rounds_text(row["n_estimators"]),
                row["params"],
                path,
            )

        def take(k):  # before split k's first fit is dispatched: the deadline, then the claim
            if expired(deadline):
                return False
            return claims.take(k)

        t0 = time.perf_counter()
        computed = 0
        with _claims(run) as claims:  # splits another process computes: skipped
            while todo:  # then waited for; those it left without a row are computed here
                computed += len(
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
                        claim=take,
                        interval_ties=run.interval_ties,
                    )
                )
                if expired(deadline):
                    log.info("%s: budget reached, no further split started", run.label)
                    break
                todo = claims.wait()
        log.info("%s: %d rows computed in %.1f s", run.label, computed, time.perf_counter() - t0)
    df = results.load(where)
    log.info(summary_line(df, run.label, run.protocol, method.engine, where))
    return df


def _reuse(run: Run) -> set:
    """Splits of ``run`` not stored in its folder but stored, with the same identity, under
    another protocol folder (a benchmark reading whose grid equals the paper's): stored again
    in the run's folder from those rows' text, not recomputed (``reused_from`` names the
    source). Returns the split indices so stored."""
    stored = run.stored_splits()
    found = results.same_rows_elsewhere(*run.location)
    found = {k: p for k, p in found.items() if k < run.n_splits and k not in stored}
    columns = {"protocol": run.protocol, "grid": run.base_row["grid"]}
    for _, path in sorted(found.items()):
        results.store_reused(run.location[0], path, columns)
    if found:
        log.info(
            "%s: %d split(s) reused from the same computation in %s",
            run.label,
            len(found),
            found[min(found)].parent,
        )
    return set(found)


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


def _rounds_text(n_estimators) -> str:
    """``T=<n>``, or ``T per level`` where the row holds no single T (NaN: the two separate
    models of an interval, each selected its own; their configurations are in ``params``)."""
    return "T per level" if math.isnan(n_estimators) else f"T={int(n_estimators)}"


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
