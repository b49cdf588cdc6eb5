"""The real-world protocol as pure functions: splits, grid, selection, refit data, test metrics.

For one (dataset, loss, method) and each split k = 0 .. n_splits-1 (docs/protocol.md):

1. **Split.** Rows are shuffled by ``numpy.random.default_rng((seed, k))`` and cut into
   train / validation / test by the fractions (default 50 / 25 / 25 %; the train and
   validation sizes are rounded, the test part takes the rest). The split depends only on
   (n, seed, k, fractions), so it is the same for every method and loss: differences between
   methods on a split are paired.
2. **Validation curves.** Every grid point is fitted on train with T_max = ``max_estimators``
   iterations and its validation criterion is read along the iterations (:meth:`validation_curve` of
   a :mod:`proxboost.experiments.plan.methods` object).
3. **Selection.** The selected (grid point, T ∈ [0, T_max]) minimises the validation loss over
   all grid points and iterations. Ties (exact equality) go to the **smallest T**, then to the
   **first grid point** in grid order (the values of each axis sorted, axes in the method's
   order). In particular T = 0 (f_0 alone, identical for every grid point) selects the first
   grid point.
4. **Refit** on train ∪ validation with the selected parameters and T (T = 0: the constant
   f_0 = ``loss.init(y_train_val)``, no tree).
5. **Test metrics**: ``test_loss`` = ``loss.value`` on the test part; for classification also
   ``test_error``, the misclassification rate of the sign of the decision value (0 counts as
   +1). NaN where not defined.

Grid axes per method: ``max_depth`` × ``learning_rate`` for every boosting algorithm and
XGBoost, × ``step`` (λ, **per sample**: the authors' ``step``, used unchanged) for the
proximal ones; ``max_features`` for random forests.

Running these steps (data, workers, storage, resume) is :mod:`proxboost.experiments.fits.pipeline`'s
job.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np

from proxboost._vocabulary import is_integer
from proxboost.conformal import TIES
from proxboost.experiments.store.naming import (
    DEFAULT_FRACTIONS,
    DEFAULT_INTERVAL_TIES,
    protocol_name,
)

__all__ = [
    "DEFAULT_FRACTIONS",
    "GRID_AXES",
    "LEVELS_VAL_METRIC",
    "ProtocolError",
    "TaskMismatchError",
    "DEFAULT_INTERVAL_TIES",
    "TIES_STREAM",
    "calibration_halves",
    "level_selections",
    "canonical_grid",
    "check_task",
    "expand_grid",
    "level_metrics",
    "protocol_name",
    "select",
    "selection",
    "split_indices",
    "split_random_state",
    "split_row",
    "split_sizes",
    "test_metrics",
    "validate_protocol",
]

#: The stream of the random ties' uniforms of split k: ``default_rng((seed, k, TIES_STREAM))``
#: (the split itself shuffles with ``default_rng((seed, k))``).
TIES_STREAM = 1


class ProtocolError(ValueError):
    """Invalid input of the protocol, raised before any fit."""


class TaskMismatchError(ProtocolError):
    """A loss of one task (regression, classification) asked of a dataset of the other."""


#: ``val_metric`` of a model of several quantiles: it is selected on the sum of its levels'
#: validation pinball losses (the criterion its early stopping watches too).
LEVELS_VAL_METRIC = "sum_of_levels"


# -- validation ------------------------------------------------------------------------------------


def validate_protocol(
    n_splits, fractions, max_estimators, seed=0, interval_ties=DEFAULT_INTERVAL_TIES
):
    """Check the protocol values; raise :class:`ProtocolError` with the reason."""
    if interval_ties not in TIES:
        raise ProtocolError(
            f"protocol.interval_ties must be one of {', '.join(TIES)}, got {interval_ties!r}"
        )
    if not is_integer(n_splits) or n_splits < 1:
        raise ProtocolError(f"protocol.n_splits must be an integer >= 1, got {n_splits!r}")
    if not is_integer(max_estimators) or max_estimators < 1:
        raise ProtocolError(
            f"protocol.max_estimators (T_max) must be an integer >= 1, got {max_estimators!r}"
        )
    if not is_integer(seed) or seed < 0:
        raise ProtocolError(f"protocol.seed must be an integer >= 0, got {seed!r}")
    fr = tuple(fractions)
    if len(fr) != 3 or not all(
        isinstance(f, (int, float, np.number)) and not isinstance(f, bool) for f in fr
    ):
        raise ProtocolError(
            f"protocol.fractions must be three numbers (train, validation, test), got {fractions!r}"
        )
    if not all(0.0 < f < 1.0 for f in fr):
        raise ProtocolError(f"protocol.fractions must each lie in (0, 1), got {fr}")
    if abs(sum(fr) - 1.0) > 1e-9:
        raise ProtocolError(
            f"protocol.fractions (train, validation, test) must sum to 1, got {fr} (sum"
            f" {sum(fr):.12g})"
        )
    return fr


def check_task(loss_name, loss_task, dataset_name, dataset_task):
    """Raise if the loss does not fit the dataset's task."""
    if loss_task != dataset_task:
        raise TaskMismatchError(
            f"loss '{loss_name}' is a {loss_task} loss but dataset '{dataset_name}' is a"
            f" {dataset_task} dataset"
        )


# -- splits, grid, selection, metrics --------------------------------------------------------------
def split_sizes(n, fractions=DEFAULT_FRACTIONS):
    n_train = int(round(fractions[0] * n))
    n_val = int(round(fractions[1] * n))
    n_test = n - n_train - n_val
    if min(n_train, n_val, n_test) < 1 or n_train < 2:
        raise ProtocolError(
            f"{n} rows cannot be split by fractions {tuple(fractions)}: sizes"
            f" {n_train}/{n_val}/{n_test}"
        )
    return n_train, n_val, n_test


def split_indices(n, k, seed=0, fractions=DEFAULT_FRACTIONS):
    """Row indices (train, validation, test) of split ``k`` — each sorted, disjoint, covering
    0..n-1.

    Shuffled by ``numpy.random.default_rng((seed, k))``: the same for every method and loss.
    """
    n_train, n_val, _ = split_sizes(n, fractions)
    perm = np.random.default_rng((int(seed), int(k))).permutation(n)
    return (
        np.sort(perm[:n_train]),
        np.sort(perm[n_train : n_train + n_val]),
        np.sort(perm[n_train + n_val :]),
    )


def calibration_halves(n, k, seed=0, fractions=DEFAULT_FRACTIONS):
    """The test part of split ``k`` cut in two for the interval measurement: ``(calibration,
    coverage)``, positions into the (sorted) test indices of :func:`split_indices`.

    The rule: the test rows in the split's own shuffled order (the permutation of
    :func:`split_indices`), the first half (rounded down) calibrates, the rest measures coverage
    and width. No new random draw: the halves depend only on (n, seed, k, fractions), like the
    split, and neither half takes part in fitting or selection (train and validation do)."""
    n_train, n_val, n_test = split_sizes(n, fractions)
    perm = np.random.default_rng((int(seed), int(k))).permutation(n)
    shuffled = perm[n_train + n_val :]
    if n_test < 2:
        raise ProtocolError(
            f"{n} rows give a test part of {n_test} row(s): the interval measurement needs at "
            "least 2 (one to calibrate, one to measure); use more rows or a larger test fraction"
        )
    position = np.empty(n, dtype=np.intp)
    position[np.sort(shuffled)] = np.arange(n_test)  # row index -> position in the sorted test
    half = n_test // 2
    return np.sort(position[shuffled[:half]]), np.sort(position[shuffled[half:]])


def split_random_state(k, seed=0) -> int:
    """``random_state`` of every fit of split ``k`` (grid fits and refit)."""
    return int(seed) * 10_000 + int(k)


def _is_number(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)


#: Check of the grid values of the axes that are no estimator parameter: (predicate, what a valid
#: value is). The boosting axes (max_depth, learning_rate, step) are judged by the estimators' own
#: parameter constraints: the pipeline passes those checks in (``methods.GRID_CHECKS``).
GRID_AXES = {
    "max_features": (
        lambda v: v in ("sqrt", "log2") or (_is_number(v) and 0 < v <= 1),
        "a fraction in (0, 1], 'sqrt' or 'log2'",
    ),
    "min_samples_leaf": (
        lambda v: _is_number(v) and float(v) >= 1 and float(v) == int(v),
        "a positive integer",
    ),
    # the libraries' own leaf-size axes (proxboost.experiments.plan.baselines, "leaf_axis")
    "min_data_in_leaf": (
        lambda v: _is_number(v) and float(v) >= 1 and float(v) == int(v),
        "a positive integer",
    ),
    "min_child_weight": (lambda v: _is_number(v) and float(v) >= 0, "a number >= 0"),
}


#: Type of each axis's values in a canonical grid (``max_features``: a fraction or a name).
_AXIS_TYPES = {
    "max_depth": int,
    "min_samples_leaf": int,
    "min_data_in_leaf": int,
    "learning_rate": float,
    "step": lambda v: v if isinstance(v, str) else float(v),  # a number, or "auto"
}


def _sort_key(value):
    return (1, value, 0.0) if isinstance(value, str) else (0, "", float(value))


def canonical_grid(grid, axes, checks=None) -> dict:
    """``{axis: values}`` for the ``axes`` of ``grid``: every value checked (``checks``, default
    :data:`GRID_AXES`: ``{axis: (predicate, what a valid value is)}``),
    cast to its axis's type, duplicates dropped and **sorted** (numbers ascending, then
    names), so that a grid's result does not depend on how its values were written.

    ``grid`` maps an axis name to a list of values (other keys are ignored).
    """
    out = {}
    for axis in axes:
        if axis not in grid or grid[axis] is None:
            raise ProtocolError(f"the grid has no values for '{axis}' (needed by this method)")
        v = grid[axis]
        v = list(v) if isinstance(v, (list, tuple)) else [v]
        if not v:
            raise ProtocolError(f"the grid's '{axis}' list is empty")
        checks = GRID_AXES if checks is None else checks
        if axis in checks:
            ok, what = checks[axis]
            bad = [x for x in v if not ok(x)]
            if bad:
                raise ProtocolError(f"grid value {axis}={bad[0]!r} is invalid: must be {what}")
        cast = _AXIS_TYPES.get(axis, lambda x: x if isinstance(x, str) else float(x))
        out[axis] = sorted({cast(x) for x in v}, key=_sort_key)
    return out


def expand_grid(grid, axes, checks=None):
    """Grid points (dicts) of the ``axes`` of ``grid``: ``itertools.product`` of the
    :func:`canonical_grid` values, in the order of ``axes``. A bad value fails here, before
    any fit."""
    values = canonical_grid(grid, axes, checks)
    return [dict(zip(axes, combo)) for combo in itertools.product(*(values[a] for a in axes))]


def select(curves):
    """Index (grid point g, position t) minimising a (G, L) array of validation curves.

    Ties (exact equality) go to the smallest t, then to the first g. NaN counts as +inf
    (a fit whose loss is not finite is never preferred to a finite one).
    """
    c = np.asarray(curves, dtype=np.float64)
    if c.ndim != 2 or c.size == 0:
        raise ValueError(
            f"curves must be a non-empty 2-d array (grid points × T), got shape {c.shape}"
        )
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


def level_metrics(loss, y, z) -> list:
    """The test loss of every level of a model of several quantiles: ``loss.value(y, z)`` of a
    :class:`~proxboost.losses.MultiQuantile` on predictions of shape (n, K)."""
    values = loss.value(np.asarray(y, dtype=np.float64), np.asarray(z, dtype=np.float64))
    return [float(v) for v in np.atleast_1d(values)]


# -- one split: selection and its row -------------------------------------------------------------
def selection(curves):
    """``(g, T, value)`` selected on a split's validation curves.

    ``curves[g] = (values, n_estimators)`` for grid point g: the criterion and the T of each
    position (boosting: 0..T_max; a random forest: its one size). See :func:`select`.
    """
    g, t = select(np.vstack([c[0] for c in curves]))
    values, n_estimators = curves[g]
    return g, int(n_estimators[t]), float(values[t])


def level_selections(curves):
    """One ``(g, T, value)`` per quantile level, each selected on that level's curves alone:
    ``curves[g] = (values of shape (K, L), n_estimators)``, K separate models of one method
    (:class:`~proxboost.experiments.plan.baselines.SeparateLevels`), each with its own grid
    point and T. Selecting them one by one minimises the sum of the K levels' validation
    losses over every combination of choices, since each term depends on its own choice only."""
    n_levels = np.shape(curves[0][0])[0]
    return [selection([(values[k], n) for values, n in curves]) for k in range(n_levels)]


def _nan_if_none(value):
    return math.nan if value is None else value


def split_row(k, params, g, n_grid, T, val_loss, test_loss, test_error, sizes, seed, val_metric):
    """The columns of one split's result row that the protocol determines."""
    n_train, n_val, n_test = sizes
    return dict(
        split=int(k),
        test_loss=test_loss,
        test_error=test_error,
        val_loss=val_loss,
        val_metric=val_metric,
        n_estimators=math.nan if T is None else int(T),  # None: one T per level
        max_depth=_nan_if_none(params.get("max_depth")),
        learning_rate=_nan_if_none(params.get("learning_rate")),
        step=_nan_if_none(params.get("step")),
        max_features=str(params["max_features"]) if "max_features" in params else math.nan,
        params=json.dumps(params, sort_keys=True),
        grid_index=math.nan if g is None else int(g),
        n_grid=int(n_grid),
        random_state=split_random_state(k, seed),
        n_train=n_train,
        n_validation=n_val,
        n_test=n_test,
    )
