"""``tie_rule="authors_float"`` against curves computed by the authors' public code.

The reference curves in ``tests/data/authors_float/`` were produced by running the authors' code
itself (``NOTE.md`` there says how); proxboost's training curves must equal them bit for bit
with ``engine="sklearn"`` (scikit-learn's trees, as theirs).
"""

import csv
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from proxboost.boosting import BoostingClassifier, BoostingRegressor
from proxboost.experiments.datasets import load_dataset
from proxboost.experiments.fits.curves import synthetic_split
from proxboost.losses import make_loss

DATA = Path(__file__).resolve().parent / "data" / "authors_float"
SEED = 0
#: (dataset, loss, max_depth) of each reference file ``{dataset}_{loss}.csv``
CASES = [("regression", "lad", 3), ("classification", "hinge", 3), ("sines", "lad", 2)]


def _reference(dataset, loss):
    """{(algo, nu): curve} of a reference file (columns ``{algo}_nu{nu}``)."""
    with open(DATA / f"{dataset}_{loss}.csv", newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    curves = {}
    for j, name in enumerate(header[1:], start=1):
        algo, _, nu = name.rpartition("_nu")
        curves[algo, float(nu)] = np.array([float(r[j]) for r in body])
    return curves


def _train(dataset):
    X, y, _ = load_dataset(dataset, random_state=SEED)
    tr, _ = synthetic_split(len(y), SEED)
    return X[tr], y[tr]


def _curve(
    dataset, loss, depth, algo, nu, n_estimators, tie_rule="authors_float", engine="sklearn"
):
    X, y = _train(dataset)
    cls = BoostingClassifier if loss == "hinge" else BoostingRegressor
    est = cls(
        loss=loss,
        algo=algo,
        engine=engine,
        tie_rule=tie_rule,
        n_estimators=n_estimators,
        learning_rate=nu,
        step=1.0,
        max_depth=depth,
        random_state=SEED,
    )
    return est.fit(X, y).train_loss_


def _params():
    for dataset, loss, depth in CASES:
        for (algo, nu), ref in _reference(dataset, loss).items():
            yield pytest.param(dataset, loss, depth, algo, nu, ref, id=f"{dataset}-{algo}-nu{nu:g}")


@pytest.mark.parametrize("dataset, loss, depth, algo, nu, ref", list(_params()))
@pytest.mark.slow
def test_training_curve_equals_the_authors_bit_for_bit(dataset, loss, depth, algo, nu, ref):
    ours = _curve(dataset, loss, depth, algo, nu, len(ref) - 1)
    assert ours.dtype == ref.dtype == np.float64
    differ = np.flatnonzero(ours != ref)
    assert differ.size == 0, (
        f"first difference at iteration {differ[0]}: {ours[differ[0]]!r} != {ref[differ[0]]!r}"
    )


def test_the_references_cover_the_four_algorithms_at_nu_005():
    for dataset, loss, _ in CASES:
        keys = set(_reference(dataset, loss))
        algos = {"gradient", "prox", "accelerated_gradient", "accelerated_prox"}
        assert {(a, 0.05) for a in algos} <= keys, dataset


@pytest.mark.slow
def test_the_exact_arithmetic_rule_departs_from_the_authors_curve():
    """The references can tell the rules apart: ``authors`` (exact) leaves them at once."""
    ref = _reference("sines", "lad")["gradient", 0.05]
    ours = _curve("sines", "lad", 2, "gradient", 0.05, 5, tie_rule="authors")
    assert ours[0] == ref[0] and ours[1] != ref[1]


def _exact_objective(name, y, z, c):
    c = Fraction(c)
    if name == "hinge":
        return sum(max(Fraction(0), 1 - Fraction(a) * (Fraction(b) + c)) for a, b in zip(y, z))
    return sum(abs(Fraction(a) - Fraction(b) - c) for a, b in zip(y, z))


@pytest.mark.parametrize("name", ["lad", "hinge"])
def test_leaf_value_is_g_times_a_multiplier_that_minimises_up_to_rounding(name):
    """Each leaf takes fl(g * fl(u_i / g)) for one of its rows, and that point minimises the
    exact leaf objective to within rounding (1e-12 relative); g = 0 gives 0."""
    rng = np.random.default_rng(3)
    loss = make_loss(name)
    n, n_leaves = 60, 4
    leaf_ids = rng.integers(0, n_leaves, size=n)
    if name == "hinge":
        y = rng.choice([-1.0, 1.0], size=n)
        z = rng.normal(size=n) * 0.3
    else:
        y = rng.normal(size=n)
        z = 0.1 * rng.integers(-3, 4, size=n)  # repeated residuals: ties
    g = np.array([0.7, -1.3, 0.0, 0.1])
    c = loss.line_search(y, z, leaf_ids, n_leaves, None, "authors_float", g)
    assert c[2] == 0.0
    for leaf in (0, 1, 3):
        rows = leaf_ids == leaf
        u = y[rows] - z[rows]
        assert c[leaf] in set(g[leaf] * (u / g[leaf])), leaf
        values = [_exact_objective(name, y[rows], z[rows], v) for v in u]
        best = min(values)
        assert _exact_objective(name, y[rows], z[rows], c[leaf]) - best <= 1e-12 * max(best, 1)


def test_sample_weight_is_refused_in_one_line():
    X, y = _train("sines")
    est = BoostingRegressor(loss="lad", engine="sklearn", tie_rule="authors_float", n_estimators=2)
    with pytest.raises(ValueError, match="takes no sample_weight") as err:
        est.fit(X, y, sample_weight=1.0 + np.arange(len(y)) % 2)
    assert "\n" not in str(err.value)
    # uniform weights are no weights (the unweighted path): accepted, the unweighted fit
    uniform = est.fit(X, y, sample_weight=np.full(len(y), 2.0)).train_loss_
    np.testing.assert_array_equal(uniform, est.fit(X, y).train_loss_)


def test_order_statistic_kernels_refuse_the_rule():
    from proxboost._leafops import quantile_line_search

    with pytest.raises(ValueError, match="authors_float"):
        quantile_line_search(np.ones(3), np.zeros(3, dtype=np.intp), 1, 0.5, None, "authors_float")


@pytest.mark.slow
def test_losses_without_ties_are_unchanged():
    X, y = _train("sines")
    fits = [
        BoostingRegressor(loss="ls", tie_rule=rule, n_estimators=5, random_state=0)
        .fit(X, y)
        .train_loss_
        for rule in ("midpoint", "authors_float")
    ]
    np.testing.assert_array_equal(*fits)


@pytest.mark.slow
def test_adding_the_rule_to_intro_sensitivity_keeps_the_stored_runs_of_the_others(monkeypatch):
    """The rule joined the experiment with the recompute to numerics version 3; adding it
    leaves every run of the other rules where it was: each is found among the stored runs of
    the version the report reads (while the recompute is partial, the runs of the version
    before, planned here at that version)."""
    from test_curves import ROOT, _specs

    from proxboost.experiments.plan.curves_plan import is_stored
    from proxboost.experiments.plan.versions import reported_version
    from proxboost.experiments.store import results as store

    results = ROOT / "results"
    if not (results / "synthetic" / "intro").is_dir():
        pytest.skip("no stored intro runs in results/")
    monkeypatch.setattr(store, "NUMERICS_VERSION", reported_version(results))
    n_old = n_new = 0
    for nu in ("0.05", "0.1", "1.0"):
        for sigma in ("0.1", "0.15"):
            specs = _specs(
                "intro_sensitivity",
                f"synthetic.learning_rate={nu}",
                f"synthetic.dataset_params.noise_std={sigma}",
            )
            assert {s.tie_rule for s in specs} == {"midpoint", "authors", "authors_float"}
            old = [s for s in specs if s.tie_rule != "authors_float"]
            missing = [s.name for s in old if not is_stored(results, s)]
            assert not missing, missing[:3]
            n_old += len(old)
            n_new += len(specs) - len(old)
    assert n_old == 2 * n_new
