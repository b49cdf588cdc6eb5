"""The protocol's pure functions (proxboost.experiments.plan.protocol): splits, checks of its
values, the grid, selection, test metrics and the protocol's name. Running them on data is
test_pipeline.py's."""

import math

import numpy as np
import pytest

from proxboost.experiments.plan.methods import GRID_CHECKS, make_method
from proxboost.experiments.plan.protocol import (
    ProtocolError,
    check_task,
    expand_grid,
    protocol_name,
    select,
    split_indices,
    validate_protocol,
)
from proxboost.experiments.plan.protocol import (
    test_metrics as metrics,
)
from proxboost.losses import make_loss


# -- splits --------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [101, 200, 235])
def test_split_fractions_disjoint_and_covering(n):
    tr, va, te = split_indices(n, 3)
    assert (len(tr), len(va)) == (round(0.5 * n), round(0.25 * n))
    assert len(tr) + len(va) + len(te) == n
    allidx = np.concatenate([tr, va, te])
    assert np.array_equal(np.sort(allidx), np.arange(n))
    for part in (tr, va, te):
        assert np.all(np.diff(part) > 0)  # sorted, no repeats


def test_splits_paired_seeded_by_k():
    # a split depends only on (n, seed, k): the same for every method and loss (paired)
    a = split_indices(200, 5)
    b = split_indices(200, 5)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    c = split_indices(200, 6)
    assert not np.array_equal(a[0], c[0])
    d = split_indices(200, 5, seed=1)
    assert not np.array_equal(a[0], d[0])
    # custom fractions
    tr, va, te = split_indices(100, 0, fractions=(0.6, 0.2, 0.2))
    assert (len(tr), len(va), len(te)) == (60, 20, 20)


def test_split_too_small():
    with pytest.raises(ProtocolError, match="cannot be split"):
        split_indices(3, 0)


# -- validation of protocol values and tasks ----------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(n_splits=0), "n_splits must be an integer >= 1"),
        (dict(n_splits=2.5), "n_splits must be an integer >= 1"),
        (dict(fractions=(0.5, 0.3, 0.25)), "must sum to 1"),
        (dict(fractions=(0.5, 0.5, 0.0)), r"must each lie in \(0, 1\)"),
        (dict(fractions=(0.5, 0.5)), "three numbers"),
        (dict(max_estimators=0), "max_estimators"),
        (dict(seed=-1), "seed"),
    ],
)
def test_validate_protocol_rejects(kwargs, match):
    args = dict(n_splits=20, fractions=(0.5, 0.25, 0.25), max_estimators=1000, seed=0)
    args.update(kwargs)
    with pytest.raises(ProtocolError, match=match):
        validate_protocol(**args)


def test_task_mismatch_sentence():
    with pytest.raises(ProtocolError) as exc:
        check_task("hinge", "classification", "engel", "regression")
    assert (
        str(exc.value)
        == "loss 'hinge' is a classification loss but dataset 'engel' is a regression dataset"
    )


# -- grid and selection -------------------------------------------------------------------------
def test_grid_axes_per_method():
    grid = {
        "max_depth": [1, 3],
        "learning_rate": [0.1, 1.0],
        "step": [0.1, 1.0, 10.0],
        "max_features": [0.5, "sqrt"],
    }
    hinge = make_loss("hinge")
    assert len(expand_grid(grid, make_method("prox", hinge).grid_axes)) == 12
    assert len(expand_grid(grid, make_method("accelerated_prox", hinge).grid_axes)) == 12
    assert expand_grid(grid, make_method("gradient", hinge).grid_axes) == [
        {"max_depth": 1, "learning_rate": 0.1},
        {"max_depth": 1, "learning_rate": 1.0},
        {"max_depth": 3, "learning_rate": 0.1},
        {"max_depth": 3, "learning_rate": 1.0},
    ]
    assert len(expand_grid(grid, make_method("xgboost", hinge).grid_axes)) == 4
    assert expand_grid(grid, make_method("random_forest", hinge).grid_axes) == [
        {"max_features": 0.5},
        {"max_features": "sqrt"},
    ]
    # values are sorted (numbers, then names), cast to their axis's type, deduplicated
    assert expand_grid(
        {"max_depth": [3, 1, 3], "learning_rate": [1, 0.1]}, ("max_depth", "learning_rate")
    ) == [
        {"max_depth": 1, "learning_rate": 0.1},
        {"max_depth": 1, "learning_rate": 1.0},
        {"max_depth": 3, "learning_rate": 0.1},
        {"max_depth": 3, "learning_rate": 1.0},
    ]
    assert [
        p["max_features"]
        for p in expand_grid({"max_features": ["sqrt", 1, 1 / 3]}, ("max_features",))
    ] == [1 / 3, 1.0, "sqrt"]
    for axis, bad in [
        ("max_depth", 0),
        ("max_depth", 2.5),
        ("learning_rate", 1.5),
        ("step", 0.0),
        ("max_features", "all"),
    ]:
        with pytest.raises(ProtocolError, match=f"grid value {axis}={bad!r} is invalid"):
            expand_grid(
                {**grid, axis: [bad]},
                ("max_depth", "learning_rate", "step", "max_features"),
                GRID_CHECKS,  # the boosting axes are judged by the estimators' constraints
            )


def test_select_argmin_known_answer():
    curves = np.array(
        [
            [5.0, 4.0, 3.0, 3.5, 3.1],
            [5.0, 3.9, 2.5, 2.7, 2.6],
            [5.0, 4.5, 4.4, 2.6, 2.55],
        ]
    )
    assert select(curves) == (1, 2)


def test_select_tie_rule_smallest_T_then_first_grid_point():
    # equal minima at (0, 2), (1, 1), (2, 1): the smallest T wins, then the first grid point
    curves = np.array([[5.0, 4.0, 2.0], [5.0, 2.0, 2.0], [5.0, 2.0, 3.0]])
    assert select(curves) == (1, 1)
    # T = 0 (f_0, the same value for every grid point) best: first grid point
    assert select(np.array([[1.0, 2.0], [1.0, 1.5]])) == (0, 0)
    # NaN (a diverged fit) is never preferred to a finite value
    assert select(np.array([[3.0, np.nan], [3.0, 2.0]])) == (1, 1)


def test_metrics_sign_zero_counts_as_plus_one():
    hinge = make_loss("hinge")
    y = np.array([1.0, -1.0, -1.0, 1.0])
    z = np.array([0.0, 0.0, -2.0, -1.0])
    test_loss, test_error = metrics(hinge, y, z)
    assert test_loss == pytest.approx(np.mean(np.maximum(0, 1 - y * z)))
    assert test_error == pytest.approx(0.5)  # z=0 -> +1: wrong for y=-1; z=-1 wrong for y=+1
    lad = make_loss("lad")
    tl, te = metrics(lad, np.array([1.0, 2.0]), np.array([0.0, 0.0]))
    assert tl == pytest.approx(1.5) and math.isnan(te)
    assert math.isnan(metrics(lad, np.ones(2), np.zeros(2), report_loss=False)[0])


def test_protocol_name():
    assert protocol_name("paper", 20, 1000) == "paper/20splits/T1000"
    assert (
        protocol_name("smoke", 2, 20, (0.6, 0.2, 0.2), seed=3)
        == "smoke/2splits/T20/frac0.6-0.2-0.2/seed3"
    )


# -- refit --------------------------------------------------------------------------------------


# -- baselines ----------------------------------------------------------------------------------


def test_the_stored_commands_know_every_axis_of_an_algo_grid():
    """The command a stored row prints puts these axes under ``algo.grid``: the names the store
    knows are the protocol's (they live apart so that the store does not import the plan)."""
    from proxboost.experiments.plan.protocol import GRID_AXES
    from proxboost.experiments.store.naming import ALGO_GRID_AXES

    assert set(ALGO_GRID_AXES) == set(GRID_AXES)
