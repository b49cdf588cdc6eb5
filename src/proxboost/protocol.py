"""The real-world generalisation protocol of SPEC §5.4, with plain arguments (no Hydra).

For one (dataset, loss, method) and each split k = 0 .. n_splits-1:

1. **Split.** Rows are shuffled by ``numpy.random.default_rng((seed, k))`` and cut into
   train / validation / test by the fractions (default 50 / 25 / 25 %; the train and
   validation sizes are rounded, the test part takes the rest). The split depends only on
   (n, seed, k, fractions), so it is the same for every method and loss: differences between
   methods on a split are paired.
2. **Validation curves.** Every grid point is fitted on train with T_max = ``max_estimators``
   iterations and its validation loss is read along the iterations (``eval_loss_`` of the
   estimator: C(f_0), ..., C(f_Tmax); no re-prediction).
3. **Selection.** The selected (grid point, T ∈ [0, T_max]) minimises the validation loss over
   all grid points and iterations. Ties (exact equality) go to the **smallest T**, then to the
   **first grid point** in grid order. In particular T = 0 (f_0 alone, identical for every
   grid point) selects the first grid point.
4. **Refit** on train ∪ validation with the selected parameters and T (T = 0: the constant
   f_0 = ``loss.init(y_train_val)``, no tree).
5. **Test metrics**: ``test_loss`` = ``loss.value`` on the test part; for classification also
   ``test_error``, the misclassification rate of the sign of the decision value (0 counts as
   +1). NaN where not defined.

Grid axes per method: ``max_depth`` × ``learning_rate`` for every boosting algorithm and
XGBoost, × ``step`` (λ, **per sample**, SPEC §2.1: the authors' ``step``, used unchanged) for
the proximal ones (``prox``, ``residual_prox``, ``accelerated_prox``); ``max_features`` for
random forests.

Parallelism: the fits of a run (every (split, grid point) fit and every refit) are tasks run on
joblib's process executor (loky) with at most ``n_jobs`` in flight; a split's refit is
dispatched as soon as its curves are known, so rows are written while the run goes on. Every
task is a pure function of its inputs (random_state = ``seed * 10000 + k`` for every fit of
split k), so the results are identical for any number of workers (``n_jobs=1`` runs the same
tasks in the calling process).
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import os
import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, wait

import numpy as np

from .boosting import ALGOS as _BOOSTING_ALGOS
from .boosting import PROXIMAL_ALGOS

__all__ = [
    "ALGOS",
    "BASELINE_ALGOS",
    "BOOSTING_ALGOS",
    "BoostingMethod",
    "DEFAULT_FRACTIONS",
    "PROXIMAL_ALGOS",
    "ProtocolError",
    "check_task",
    "expand_grid",
    "make_method",
    "protocol_name",
    "resolve_n_jobs",
    "run_experiment",
    "run_protocol",
    "select",
    "split_indices",
    "split_random_state",
    "test_metrics",
    "validate_protocol",
]

log = logging.getLogger(__name__)

BOOSTING_ALGOS = tuple(_BOOSTING_ALGOS)
BASELINE_ALGOS = ("xgboost", "random_forest", "lightgbm", "sklearn_hgb")
ALGOS = BOOSTING_ALGOS + BASELINE_ALGOS
DEFAULT_FRACTIONS = (0.5, 0.25, 0.25)


class ProtocolError(ValueError):
    """Invalid input of the protocol, raised before any fit."""


# -- validation -------------------------------------------------------------------------------------
def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def validate_protocol(n_splits, fractions, max_estimators, seed=0):
    """Check the protocol values; raise :class:`ProtocolError` with the reason."""
    if not _is_int(n_splits) or n_splits < 1:
        raise ProtocolError(f"protocol.n_splits must be an integer >= 1, got {n_splits!r}")
    if not _is_int(max_estimators) or max_estimators < 1:
        raise ProtocolError(f"protocol.max_estimators (T_max) must be an integer >= 1, got {max_estimators!r}")
    if not _is_int(seed) or seed < 0:
        raise ProtocolError(f"protocol.seed must be an integer >= 0, got {seed!r}")
    fr = tuple(fractions)
    if len(fr) != 3 or not all(isinstance(f, (int, float, np.number)) and not isinstance(f, bool) for f in fr):
        raise ProtocolError(f"protocol.fractions must be three numbers (train, validation, test), got {fractions!r}")
    if not all(0.0 < f < 1.0 for f in fr):
        raise ProtocolError(f"protocol.fractions must each lie in (0, 1), got {fr}")
    if abs(sum(fr) - 1.0) > 1e-9:
        raise ProtocolError(f"protocol.fractions (train, validation, test) must sum to 1, got {fr} (sum {sum(fr):.12g})")
    return fr


def check_task(loss_name, loss_task, dataset_name, dataset_task):
    """Raise if the loss does not fit the dataset's task."""
    if loss_task != dataset_task:
        raise ProtocolError(
            f"loss '{loss_name}' is a {loss_task} loss but dataset '{dataset_name}' is a {dataset_task} dataset"
        )


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


# -- splits, grid, selection, metrics ---------------------------------------------------------------
def split_sizes(n, fractions=DEFAULT_FRACTIONS):
    n_train = int(round(fractions[0] * n))
    n_val = int(round(fractions[1] * n))
    n_test = n - n_train - n_val
    if min(n_train, n_val, n_test) < 1 or n_train < 2:
        raise ProtocolError(
            f"{n} rows cannot be split by fractions {tuple(fractions)}: sizes {n_train}/{n_val}/{n_test}"
        )
    return n_train, n_val, n_test


def split_indices(n, k, seed=0, fractions=DEFAULT_FRACTIONS):
    """Row indices (train, validation, test) of split ``k`` — each sorted, disjoint, covering 0..n-1.

    Shuffled by ``numpy.random.default_rng((seed, k))``: the same for every method and loss.
    """
    n_train, n_val, _ = split_sizes(n, fractions)
    perm = np.random.default_rng((int(seed), int(k))).permutation(n)
    return (np.sort(perm[:n_train]), np.sort(perm[n_train:n_train + n_val]), np.sort(perm[n_train + n_val:]))


def split_random_state(k, seed=0) -> int:
    """``random_state`` of every fit of split ``k`` (grid fits and refit)."""
    return int(seed) * 10_000 + int(k)


def _is_number(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)


#: Check of one grid value per axis: (predicate, what a valid value is).
GRID_AXES = {
    "max_depth": (lambda v: _is_int(v) and v >= 1, "an integer >= 1"),
    "learning_rate": (lambda v: _is_number(v) and 0 < v <= 1, "a number in (0, 1]"),
    "step": (lambda v: _is_number(v) and v > 0 and math.isfinite(v), "a number > 0 (per-sample λ)"),
    "max_features": (lambda v: v in ("sqrt", "log2") or (_is_number(v) and 0 < v <= 1),
                     "a fraction in (0, 1], 'sqrt' or 'log2'"),
}


def expand_grid(grid, axes):
    """Grid points (dicts) of the ``axes`` of ``grid``, in ``itertools.product`` order of ``axes``.

    ``grid`` maps an axis name to a list of values (other keys are ignored). Every value is
    checked (:data:`GRID_AXES`) so that a bad grid fails before any fit.
    """
    values = []
    for axis in axes:
        if axis not in grid or grid[axis] is None:
            raise ProtocolError(f"the grid has no values for '{axis}' (needed by this method)")
        v = grid[axis]
        v = list(v) if isinstance(v, (list, tuple)) else [v]
        if not v:
            raise ProtocolError(f"the grid's '{axis}' list is empty")
        if axis in GRID_AXES:
            ok, what = GRID_AXES[axis]
            bad = [x for x in v if not ok(x)]
            if bad:
                raise ProtocolError(f"grid value {axis}={bad[0]!r} is invalid: must be {what}")
        values.append(v)
    return [dict(zip(axes, combo)) for combo in itertools.product(*values)]


def select(curves):
    """Index (grid point g, position t) minimising a (G, L) array of validation curves.

    Ties (exact equality) go to the smallest t, then to the first g. NaN counts as +inf
    (a fit whose loss is not finite is never preferred to a finite one).
    """
    c = np.asarray(curves, dtype=np.float64)
    if c.ndim != 2 or c.size == 0:
        raise ValueError(f"curves must be a non-empty 2-d array (grid points × T), got shape {c.shape}")
    c = np.where(np.isnan(c), np.inf, c)
    m = c.min()
    t = int(np.flatnonzero((c == m).any(axis=0))[0])
    g = int(np.flatnonzero(c[:, t] == m)[0])
    return g, t


def test_metrics(loss, y, z, report_loss=True):
    """``(test_loss, test_error)``: ``loss.value(y, z)`` (NaN if not reported) and, for
    classification, the misclassification rate of sign(z) with 0 counted as +1 (else NaN)."""
    y = np.asarray(y, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    test_loss = float(loss.value(y, z)) if report_loss else math.nan
    if loss.task == "classification":
        test_error = float(np.mean(np.where(z >= 0, 1.0, -1.0) != y))
    else:
        test_error = math.nan
    return test_loss, test_error


def _fmt(x):
    return f"{x:g}"


def protocol_name(grid_name, n_splits, max_estimators, fractions=DEFAULT_FRACTIONS, seed=0):
    """Name of a protocol: ``<grid>/<n>splits/T<T_max>``, plus ``/frac<a>-<b>-<c>`` and
    ``/seed<s>`` when these differ from the defaults (0.5/0.25/0.25, seed 0).
    Example: ``paper/20splits/T1000``."""
    name = f"{grid_name}/{int(n_splits)}splits/T{int(max_estimators)}"
    fr = tuple(float(f) for f in fractions)
    if any(abs(a - b) > 1e-12 for a, b in zip(fr, DEFAULT_FRACTIONS)):
        name += "/frac" + "-".join(_fmt(f) for f in fr)
    if int(seed) != 0:
        name += f"/seed{int(seed)}"
    return name


# -- methods ----------------------------------------------------------------------------------------
class BoostingMethod:
    """The six boosting algorithms of :mod:`proxboost.boosting` in the protocol's shape."""

    val_metric = "loss"

    def __init__(self, algo, loss, engine="exact"):
        if algo not in BOOSTING_ALGOS:
            raise ProtocolError(f"algo '{algo}' is not a boosting algorithm; valid: {', '.join(BOOSTING_ALGOS)}")
        self.name = algo
        self.loss = loss
        self.engine = engine
        self.grid_axes = ("max_depth", "learning_rate") + (("step",) if algo in PROXIMAL_ALGOS else ())

    def reports_loss(self) -> bool:
        return True

    def _estimator(self, params, n_estimators, random_state):
        from .boosting import BoostingClassifier, BoostingRegressor

        kw = dict(
            loss=self.loss.name, algo=self.name, n_estimators=int(n_estimators),
            learning_rate=float(params["learning_rate"]), max_depth=int(params["max_depth"]),
            random_state=int(random_state), engine=self.engine,
        )
        if "step" in params:
            kw["step"] = float(params["step"])
        if self.loss.task == "classification":
            return BoostingClassifier(beta=getattr(self.loss, "beta", 1.0),
                                      newton_steps=getattr(self.loss, "newton_steps", 1), **kw)
        return BoostingRegressor(tau=self.loss.tau if self.loss.name == "pinball" else 0.5, **kw)

    def validation_curve(self, params, X_train, y_train, X_val, y_val, max_estimators, random_state):
        est = self._estimator(params, max_estimators, random_state)
        est.fit(X_train, y_train, eval_set=(X_val, y_val))
        values = np.asarray(est.eval_loss_, dtype=np.float64)
        return values, np.arange(len(values))

    def refit_decision(self, params, n_estimators, X, y, X_test, random_state):
        if int(n_estimators) == 0:
            return np.full(len(X_test), float(self.loss.init(np.asarray(y, dtype=np.float64))))
        est = self._estimator(params, n_estimators, random_state).fit(X, y)
        if self.loss.task == "classification":
            return np.asarray(est.decision_function(X_test), dtype=np.float64)
        return np.asarray(est.predict(X_test), dtype=np.float64)


def make_method(algo, loss, engine="exact", options=None):
    """The method object of ``algo`` for a loss object (``options``: method settings from the
    algo config, e.g. ``n_estimators`` of random forests)."""
    options = dict(options or {})
    if algo in BOOSTING_ALGOS:
        return BoostingMethod(algo, loss, engine=engine)
    if algo == "xgboost":
        from .baselines import XGBoostMethod

        return XGBoostMethod(loss, tree_method=options.get("tree_method", "hist"))
    if algo == "random_forest":
        from .baselines import RandomForestMethod

        return RandomForestMethod(loss, n_estimators=options.get("n_estimators", 500))
    if algo == "lightgbm":
        from .baselines import LightGBMMethod

        return LightGBMMethod(loss, **options)
    if algo == "sklearn_hgb":
        from .baselines import HistGradientBoostingMethod

        return HistGradientBoostingMethod(loss, **options)
    raise ProtocolError(f"unknown algo '{algo}'; valid choices: {', '.join(ALGOS)}")


# -- tasks (module level: picklable for the process executor) ----------------------------------------
def _fit_task(method, params, X_train, y_train, X_val, y_val, max_estimators, random_state):
    t0 = time.perf_counter()
    values, n_estimators = method.validation_curve(params, X_train, y_train, X_val, y_val,
                                                   max_estimators, random_state)
    return values, n_estimators, time.perf_counter() - t0


def _refit_task(method, params, n_estimators, X, y, X_test, random_state):
    t0 = time.perf_counter()
    z = method.refit_decision(params, n_estimators, X, y, X_test, random_state)
    return z, time.perf_counter() - t0


def _nan_if_none(value):
    return math.nan if value is None else value


def run_protocol(X, y, method, grid_points, *, n_splits=20, max_estimators=1000,
                 fractions=DEFAULT_FRACTIONS, seed=0, splits=None, n_jobs=1, on_row=None,
                 progress=True, desc=None, base_row=None):
    """Run the protocol on ``splits`` (default ``range(n_splits)``) and return the rows (dicts).

    ``on_row(row)`` is called as soon as a split's row is known (e.g. to store it). ``base_row``
    holds columns shared by every row. ``n_jobs``: workers (``None``/-1: every core).
    """
    X = np.asarray(X)
    y = np.asarray(y, dtype=np.float64)
    splits = list(range(n_splits)) if splits is None else [int(k) for k in splits]
    G = len(grid_points)
    if G == 0:
        raise ProtocolError("the grid has no points")
    n_train, n_val, n_test = split_sizes(len(y), fractions)
    n_tasks = len(splits) * (G + 1)
    n_workers = resolve_n_jobs(n_jobs, n_tasks)
    rows = []
    if not splits:
        return rows
    log.info("%s: %d fits + %d refits on %d worker(s); OMP_NUM_THREADS=%s", desc or method.name,
             len(splits) * G, len(splits), n_workers, os.environ.get("OMP_NUM_THREADS", "unset"))

    data = {}  # split -> (X_tr, y_tr, X_va, y_va, idx_trval, idx_te) while the split is open

    def split_data(k):
        if k not in data:
            tr, va, te = split_indices(len(y), k, seed, fractions)
            data[k] = (X[tr], y[tr], X[va], y[va], np.concatenate([tr, va]), te)
        return data[k]

    curves = {k: [None] * G for k in splits}
    fit_seconds = {k: 0.0 for k in splits}
    selected = {}
    pending = deque((k, g) for k in splits for g in range(G))
    refits = deque()

    def next_task():
        if refits:
            k = refits.popleft()
            g, T, _ = selected[k]
            _, _, _, _, trval, te = split_data(k)
            return ("refit", k), _refit_task, (method, grid_points[g], T, X[trval], y[trval], X[te],
                                             split_random_state(k, seed))
        k, g = pending.popleft()
        X_tr, y_tr, X_va, y_va, _, _ = split_data(k)
        return ("fit", k, g), _fit_task, (method, grid_points[g], X_tr, y_tr, X_va, y_va,
                                          int(max_estimators), split_random_state(k, seed))

    bar = _progress_bar(n_tasks, desc, progress)

    def handle(key, result):
        bar.update(1)
        if key[0] == "fit":
            _, k, g = key
            values, n_est, seconds = result
            curves[k][g] = (values, n_est)
            fit_seconds[k] += seconds
            if all(c is not None for c in curves[k]):
                g_sel, t_sel = select(np.vstack([c[0] for c in curves[k]]))
                values_sel, n_est_sel = curves[k][g_sel]
                # (grid index, selected T, validation value at T)
                selected[k] = (g_sel, int(n_est_sel[t_sel]), float(values_sel[t_sel]))
                refits.append(k)
            return
        _, k = key
        z, seconds = result
        g_sel, T, val_loss = selected[k]
        y_te = y[data[k][5]]
        test_loss, test_error = test_metrics(method.loss, y_te, z, report_loss=method.reports_loss())
        params = grid_points[g_sel]
        row = dict(base_row or {})
        row.update(
            split=k, test_loss=test_loss, test_error=test_error, val_loss=val_loss,
            val_metric=method.val_metric, n_estimators=T,
            max_depth=_nan_if_none(params.get("max_depth")),
            learning_rate=_nan_if_none(params.get("learning_rate")),
            step=_nan_if_none(params.get("step")),
            max_features=str(params["max_features"]) if "max_features" in params else math.nan,
            params=json.dumps(params, sort_keys=True), grid_index=g_sel, n_grid=G,
            random_state=split_random_state(k, seed), n_train=n_train, n_validation=n_val, n_test=n_test,
            fit_seconds=fit_seconds[k] + seconds, refit_seconds=seconds,
        )
        del data[k], curves[k]
        rows.append(row)
        if on_row is not None:
            on_row(row)
        bar.set_postfix_str(f"rows {len(rows)}/{len(splits)}", refresh=False)

    try:
        if n_workers == 1:
            while refits or pending:
                key, fn, args = next_task()
                handle(key, fn(*args))
        else:
            from joblib.externals.loky import get_reusable_executor

            executor = get_reusable_executor(max_workers=n_workers)
            inflight = {}
            try:
                while refits or pending or inflight:
                    while len(inflight) < n_workers and (refits or pending):
                        key, fn, args = next_task()
                        inflight[executor.submit(fn, *args)] = key
                    done, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
                    for fut in sorted(done, key=lambda f: inflight[f]):
                        key = inflight.pop(fut)
                        handle(key, fut.result())
            except BaseException:
                for fut in inflight:
                    fut.cancel()
                raise
    finally:
        bar.close()
    rows.sort(key=lambda r: r["split"])
    return rows


def _progress_bar(total, desc, enabled):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="fit", disable=not enabled, mininterval=1.0,
                dynamic_ncols=True, smoothing=0.1)


# -- one run: data, validation, resume, storage ------------------------------------------------------
def _dataset_task(dataset, loss):
    from .datasets import dataset_info

    task = getattr(dataset_info(dataset), "task", None)
    if task not in ("regression", "classification"):
        return None  # the task is chosen by the loss (synthetic)
    return task


def run_experiment(*, dataset="synthetic", loss="ls", algo="prox", grid=None, grid_name="custom",
                   dataset_params=None, loss_params=None, algo_options=None, engine="exact",
                   n_splits=20, max_estimators=1000, fractions=DEFAULT_FRACTIONS, seed=0,
                   results_dir="results", mirror=None, n_jobs=None, progress=True, config=None,
                   skip_task_mismatch=False, skip_unavailable=False):
    """One run: (dataset, loss, algo) under the protocol, stored row by row; returns the run's rows.

    Everything is validated before any fit (protocol values, algo, loss, engine, grid, the
    loss's task against the dataset's). Rows already stored under ``results_dir`` are skipped;
    the missing splits are computed and stored as soon as each is known. Returns a DataFrame of
    all the run's rows (stored earlier or now), or ``None`` if the run was skipped
    (``skip_task_mismatch``: the loss's task differs from the dataset's; ``skip_unavailable``:
    the dataset's files cannot be found or fetched) — both for sweeps over datasets × losses.
    """
    from . import results
    from .losses import make_loss

    fractions = validate_protocol(n_splits, fractions, max_estimators, seed)
    if algo not in ALGOS:
        raise ProtocolError(f"unknown algo '{algo}'; valid choices: {', '.join(ALGOS)}")
    loss_params = {k: v for k, v in dict(loss_params or {}).items() if k in ("tau", "beta", "newton_steps")}
    try:
        loss_obj = make_loss(loss, **loss_params)
    except ValueError as exc:
        raise ProtocolError(str(exc)) from exc
    if algo in BOOSTING_ALGOS:
        from .engines import ENGINES

        if engine not in ENGINES:
            raise ProtocolError(f"engine '{engine}' is not available; valid choices: {', '.join(sorted(ENGINES))}")
    method = make_method(algo, loss_obj, engine=engine, options=algo_options)
    engine_label = method.engine
    # None means "the dataset's default" (configs write `n_samples: null`): dropped
    dataset_params = {k: v for k, v in dict(dataset_params or {}).items() if v is not None}
    dataset_task = _dataset_task(dataset, loss_obj)
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
    grid_points = expand_grid(grid or {}, method.grid_axes)
    protocol = protocol_name(grid_name, n_splits, max_estimators, fractions, seed)
    dataset_key = dataset if not {k: v for k, v in dataset_params.items() if k != "task"} else (
        dataset + "-" + _short_hash(dataset_params))
    where = results.run_dir(results_dir, protocol, dataset_key, loss, algo, engine_label)
    label = f"{dataset_key}/{loss}/{algo}"

    stored = results.stored_splits(results_dir, protocol, dataset_key, loss, algo, engine_label)
    todo = [k for k in range(n_splits) if k not in stored]
    log.info("%s: protocol %s, engine %s, %d grid points x T_max %d; %d/%d splits stored, %d to run; rows in %s",
             label, protocol, engine_label, len(grid_points), max_estimators, n_splits - len(todo), n_splits,
             len(todo), where)
    if todo:
        from .datasets import DatasetUnavailableError, load_dataset

        try:
            X, y, _ = load_dataset(dataset, random_state=seed, mirror=mirror, **dataset_params)
        except DatasetUnavailableError as exc:
            if skip_unavailable:
                log.warning("skipped: dataset '%s' is unavailable: %s", dataset, exc)
                return None
            raise
        split_sizes(len(y), fractions)  # fail before any fit if the data cannot be split
        base_row = {
            "protocol": protocol, "dataset": dataset_key, "loss": loss, "algo": algo, "engine": engine_label,
            "task": loss_obj.task, "tau": getattr(loss_obj, "tau", math.nan) if loss == "pinball" else math.nan,
            "beta": getattr(loss_obj, "beta", math.nan) if loss == "exponential" else math.nan,
            "newton_steps": getattr(loss_obj, "newton_steps", math.nan) if loss_obj.task == "classification" else math.nan,
            "grid": grid_name, "max_estimators": int(max_estimators), "n_splits": int(n_splits),
            "train_fraction": fractions[0], "validation_fraction": fractions[1], "test_fraction": fractions[2],
            "seed": int(seed), "dataset_params": json.dumps(dataset_params, sort_keys=True),
            "config": json.dumps(config if config is not None else {}, sort_keys=True, default=str),
        }

        def store(row):
            path = results.write_row(results_dir, {**row, **results.provenance()})
            log.info("%s split %d: test loss %.6g, test error %.4g, T=%d, %s -> %s", label, row["split"],
                     row["test_loss"], row["test_error"], row["n_estimators"], row["params"], path)

        t0 = time.perf_counter()
        run_protocol(X, y, method, grid_points, n_splits=n_splits, max_estimators=int(max_estimators),
                     fractions=fractions, seed=seed, splits=todo, n_jobs=n_jobs, on_row=store,
                     progress=progress, desc=label, base_row=base_row)
        log.info("%s: %d rows computed in %.1f s", label, len(todo), time.perf_counter() - t0)
    df = results.load(where)
    log.info(summary_line(df, label, protocol, engine_label, where))
    return df


def _short_hash(params) -> str:
    import hashlib

    return hashlib.sha1(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()[:8]


def summary_line(df, label, protocol, engine, where) -> str:
    """``<label> [<protocol>, engine <e>]: test loss m ± s (and error) over n splits; rows in <dir>``
    (std with ddof=1)."""
    n = len(df)
    if n == 0:
        return f"{label} [{protocol}, engine {engine}]: no rows; rows in {where}"
    parts = []
    tl = df["test_loss"].astype(float)
    if tl.notna().any():
        parts.append(f"test loss {tl.mean():.4g} ± {tl.std(ddof=1) if n > 1 else 0.0:.2g}")
    else:
        parts.append("test loss not reported (SPEC §5.4)")
    te = df["test_error"].astype(float)
    if te.notna().any():
        parts.append(f"misclassification {te.mean():.4g} ± {te.std(ddof=1) if n > 1 else 0.0:.2g}")
    return f"{label} [{protocol}, engine {engine}]: {', '.join(parts)} over {n} splits; rows in {where}"
