"""The pipeline (proxboost.experiments.fits.pipeline): a run's identity per dimension, what is
checked before any fit, the rows of the protocol (selection on the validation curves, refit, the
same rows for any number of workers) and the columns every row of a run shares.

The end-to-end runs of ``run.py`` are in test_cli.py; the stored rows' identities in
test_results_identity.py.
"""

import json
import math

import numpy as np
import pytest

from proxboost.experiments.fits.pipeline import plan_run, run_experiment, run_protocol
from proxboost.experiments.plan.methods import Algo, Engine, make_method
from proxboost.experiments.plan.protocol import ProtocolError, expand_grid, select, split_indices
from proxboost.experiments.store import results
from proxboost.losses import make_loss

# -- identity -------------------------------------------------------------------------------------
BASE = dict(
    dataset="regression",
    dataset_params={"n_samples": 60, "n_features": 5},
    loss="pinball",
    loss_params={"tau": 0.9},
    algo="prox",
    engine="exact",
    tie_rule="midpoint",
    grid={
        "max_depth": [1, 2],
        "learning_rate": [0.1, 0.5],
        "step": [1.0],
        "max_features": ["sqrt"],
    },
    n_splits=2,
    max_estimators=5,
    fractions=(0.5, 0.25, 0.25),
    seed=0,
)


def _identity(**changes):
    return json.loads(plan_run(**{**BASE, **changes}).identity)


@pytest.mark.parametrize(
    "changes",
    [
        dict(dataset_params={"n_samples": 61, "n_features": 5}),
        dict(dataset_params={"n_samples": 60, "n_features": 5, "noise_std": 0.5}),
        dict(seed=1),
        dict(loss_params={"tau": 0.5}),
        dict(loss="lad", loss_params={}),
        dict(algo="residual_prox"),
        dict(engine="hist"),
        dict(tie_rule="authors"),
        dict(grid={**BASE["grid"], "max_depth": [1]}),
        dict(grid={**BASE["grid"], "learning_rate": [0.1, 0.50000000000000001 + 1e-16]}),
        dict(grid={**BASE["grid"], "step": [10.0]}),
        dict(n_splits=3),
        dict(max_estimators=6),
        dict(fractions=(0.6, 0.2, 0.2)),
        dict(algo="xgboost"),
        dict(algo=Algo("xgboost", tree_method="exact")),
        dict(algo=Algo("random_forest", n_estimators=7)),
        dict(algo=Algo("random_forest", grid={"max_features": [1.0]})),
    ],
)
def test_identity_changes_with_every_dimension(changes):
    base = _identity()
    other = _identity(**changes)
    assert results.canonical_json(other) != results.canonical_json(base)


def test_identity_writes_defaults_out_and_ignores_what_does_not_change_numbers(tmp_path):
    base = _identity()
    assert base["dataset"] == {
        "name": "regression",
        "seed": 0,
        "params": {
            "n_samples": 60,
            "n_features": 5,
            "noise_std": base["dataset"]["params"]["noise_std"],
        },
    }
    assert base["loss"] == {"name": "pinball", "tau": 0.9}
    assert base["grid"] == {
        "max_depth": [1, 2],
        "learning_rate": [0.1, 0.5],
        "step": [1.0],
    }  # axes searched only
    assert base["method"]["options"]["tie_rule"] == "midpoint"
    assert base["numerics_version"] == results.NUMERICS_VERSION
    same = [
        dict(
            grid={**BASE["grid"], "max_depth": [2, 1, 1], "learning_rate": [0.5, 0.1]}
        ),  # order, repeats
        dict(grid={**BASE["grid"], "max_features": [1.0]}),  # an axis this method does not search
        dict(results_dir=str(tmp_path / "elsewhere"), mirror=str(tmp_path)),
        dict(grid_name="renamed", loss_label="pinball-x"),
        dict(
            dataset_params={"n_samples": 60, "n_features": 5, "noise_std": None}
        ),  # None = the default
        dict(dataset="synthetic", dataset_params={"n_samples": 60, "n_features": 5}),
        dict(algo=Algo("prox"), engine=Engine("exact")),  # the built choices name the same
    ]  # alias of regression
    for changes in same:
        assert _identity(**changes) == base, changes
    assert _identity(loss="ls", loss_params={"tau": 0.3}) == _identity(
        loss="ls"
    )  # τ does not apply to ls
    # an algo's own axes join the grid: a forest searches the same values either way
    forest = _identity(algo=Algo("random_forest", grid={"max_features": ["sqrt"]}))
    assert forest == _identity(algo="random_forest") and forest["grid"] == {
        "max_features": ["sqrt"]
    }


@pytest.mark.parametrize(
    "loss, params, columns",
    [
        ("pinball", {"tau": 0.9}, {"tau": 0.9}),
        ("lad", {"tau": 0.9}, {}),  # the level of lad is not a parameter
        ("exponential", {"beta": 2.0}, {"beta": 2.0, "newton_steps": 1}),
        ("logistic", {"newton_steps": 3}, {"newton_steps": 3}),
        ("hinge", {"beta": 2.0}, {}),
        ("ls", {}, {}),
    ],
)
def test_rows_hold_the_parameters_of_their_loss_and_nan_for_the_others(loss, params, columns):
    sizes = {"n_samples": 60, "n_features": 20}  # the classification model needs d >= 18
    settings = dict(dataset="synthetic", dataset_params=sizes, loss=loss, loss_params=params)
    run = plan_run(**{**BASE, **settings})
    for name in ("tau", "beta", "newton_steps"):
        value = run.base_row[name]
        assert value == columns[name] if name in columns else math.isnan(value), name
    assert run.base_row["loss"] == loss and run.base_row["task"] == make_loss(loss).task


def test_a_setting_plan_run_does_not_know_is_refused_by_name():
    with pytest.raises(TypeError, match="algo_options"):
        plan_run(**{**BASE, "algo_options": {"n_estimators": 7}})


def test_identity_versions_and_numerics_version(monkeypatch):
    import proxboost.experiments.plan.methods as methods

    base = _identity(algo="xgboost")
    assert set(base["method"]["libraries"]) == {"xgboost"} and base["method"]["engine"] == "none"
    assert _identity(algo="xgboost", engine="hist") == base  # a baseline's engine does not apply
    assert set(_identity(algo="random_forest")["method"]["libraries"]) == {"scikit-learn"}
    import proxboost.experiments.plan.baselines as baselines

    monkeypatch.setattr(baselines, "library_version", lambda module: "0.0-test")
    assert _identity(algo="xgboost") != base
    sklearn_engine = _identity(engine="sklearn")
    assert set(sklearn_engine["method"]["libraries"]) == {"scikit-learn"}
    monkeypatch.setattr(methods, "library_version", lambda m: "0.0-test")
    assert _identity(engine="sklearn") != sklearn_engine
    monkeypatch.setattr(results, "NUMERICS_VERSION", results.NUMERICS_VERSION + 1)
    assert _identity()["numerics_version"] == results.NUMERICS_VERSION


# -- checks before any fit, the protocol's rows ------------------------------------------------
def test_run_experiment_validates_before_any_fit(tmp_path):
    common = dict(
        grid={"max_depth": [1], "learning_rate": [0.1], "step": [1.0]},
        results_dir=tmp_path,
        progress=False,
        n_splits=1,
        max_estimators=2,
    )
    with pytest.raises(
        ProtocolError,
        match="loss 'lad' is a regression loss but dataset 'spam' is a classification dataset",
    ):
        run_experiment(dataset="spam", loss="lad", algo="prox", **common)
    assert (
        run_experiment(dataset="spam", loss="lad", algo="prox", skip_task_mismatch=True, **common)
        is None
    )
    with pytest.raises(ProtocolError, match="unknown algo 'boost'; valid choices: gradient, prox"):
        run_experiment(dataset="engel", loss="lad", algo="boost", **common)
    with pytest.raises(ProtocolError, match="not a known loss"):
        run_experiment(dataset="engel", loss="l1", algo="prox", **common)
    with pytest.raises(ProtocolError, match="engine 'gpu' is not available"):
        run_experiment(dataset="engel", loss="lad", algo="prox", engine="gpu", **common)
    with pytest.raises(ProtocolError, match="no values for 'step'"):
        run_experiment(
            dataset="engel",
            loss="lad",
            algo="prox",
            **{**common, "grid": {"max_depth": [1], "learning_rate": [0.1]}},
        )
    assert not any(tmp_path.iterdir())  # nothing stored, nothing fitted


@pytest.mark.slow
def test_run_protocol_selection_refit_and_workers(toy_data):
    """Rows follow the protocol (selection on the curves, refit at the selected T) and are
    identical with 1 and 2 workers."""
    from proxboost import BoostingClassifier

    X, y = toy_data("classification")
    loss = make_loss("hinge")
    method = make_method("prox", loss)
    grid = expand_grid(
        {"max_depth": [1, 2], "learning_rate": [0.3], "step": [1.0]}, method.grid_axes
    )
    kw = dict(n_splits=3, max_estimators=15, seed=0, progress=False)
    stored = []
    rows1 = run_protocol(X, y, method, grid, n_jobs=1, on_row=stored.append, **kw)
    rows2 = run_protocol(X, y, method, grid, n_jobs=2, **kw)
    assert [r["split"] for r in rows1] == [0, 1, 2] and len(stored) == 3
    drop = ("fit_seconds", "refit_seconds")
    assert [{k: v for k, v in r.items() if k not in drop} for r in rows1] == [
        {k: v for k, v in r.items() if k not in drop} for r in rows2
    ]
    # split 1 by hand
    r = rows1[1]
    tr, va, te = split_indices(len(y), 1)
    curves = [
        BoostingClassifier(
            loss="hinge",
            algo="prox",
            n_estimators=15,
            max_depth=p["max_depth"],
            learning_rate=0.3,
            step=1.0,
            random_state=1,
        )
        .fit(X[tr], y[tr], eval_set=(X[va], y[va]))
        .eval_loss_
        for p in grid
    ]
    g, T = select(np.vstack(curves))
    assert (r["grid_index"], r["n_estimators"], r["val_loss"]) == (g, T, curves[g][T])
    trval = np.concatenate([tr, va])
    if T == 0:
        z = np.full(len(te), loss.init(y[trval]))
    else:
        z = (
            BoostingClassifier(
                loss="hinge",
                algo="prox",
                n_estimators=T,
                max_depth=grid[g]["max_depth"],
                learning_rate=0.3,
                step=1.0,
                random_state=1,
            )
            .fit(X[trval], y[trval])
            .decision_function(X[te])
        )
    assert r["test_loss"] == pytest.approx(loss.value(y[te], z), rel=1e-12)
    assert r["test_error"] == pytest.approx(np.mean(np.where(z >= 0, 1, -1) != y[te]))


def test_run_protocol_in_threads_holds_no_named_semaphore(toy_data, monkeypatch):
    """Where joblib would run the fits in threads (nested in a job of the joblib launcher), they
    run in a thread pool that holds no named semaphore (an interrupted sweep ends that job's
    process at once, so a named one could leak), with the rows of one worker."""
    import multiprocessing.synchronize
    import threading

    from joblib import parallel_config
    from joblib.externals.loky.backend import synchronize as loky_synchronize

    X, y = toy_data("regression")
    method = make_method("prox", make_loss("lad"))
    grid = expand_grid(
        {"max_depth": [1, 2], "learning_rate": [0.3], "step": [1.0]}, method.grid_axes
    )
    kw = dict(n_splits=3, max_estimators=15, seed=0, progress=False)
    rows1 = run_protocol(X, y, method, grid, n_jobs=1, **kw)

    def refuse(self, *args, **kwargs):
        raise AssertionError("a named semaphore was created")

    for module in (multiprocessing.synchronize, loky_synchronize):
        monkeypatch.setattr(module.SemLock, "__init__", refuse)
    threads = set()
    curve = method.validation_curve

    def recorded(*args):
        threads.add(threading.current_thread().name)
        return curve(*args)

    monkeypatch.setattr(method, "validation_curve", recorded)
    with parallel_config(backend="threading"):
        rows2 = run_protocol(X, y, method, grid, n_jobs=2, **kw)
    assert threads and all(name.startswith("proxboost-fit") for name in threads)
    drop = ("fit_seconds", "refit_seconds")
    assert [{k: v for k, v in r.items() if k not in drop} for r in rows1] == [
        {k: v for k, v in r.items() if k not in drop} for r in rows2
    ]


def test_unavailable_dataset_fails_or_is_skipped(tmp_path, monkeypatch):
    from proxboost.experiments.datasets import DatasetUnavailableError

    monkeypatch.setenv("PROXBOOST_OFFLINE", "1")
    monkeypatch.setenv("PROXBOOST_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("PROXBOOST_DATA_MIRROR", str(tmp_path / "no-mirror"))
    kw = dict(
        dataset="advertisements",
        loss="hinge",
        algo="gradient",
        results_dir=tmp_path / "res",
        grid={"max_depth": [1], "learning_rate": [0.1]},
        n_splits=1,
        max_estimators=2,
        progress=False,
    )
    with pytest.raises(DatasetUnavailableError, match="ad.data"):
        run_experiment(**kw)
    assert run_experiment(skip_unavailable=True, **kw) is None
    assert not (tmp_path / "res").exists()


# -- the same computation under another protocol folder --------------------------------------------
def _stored_fields(path):
    import csv
    import io

    from proxboost.experiments.system.sealed import read_sealed

    header, values = list(csv.reader(io.StringIO(read_sealed(path))))
    return dict(zip(header, values, strict=True))


def test_a_run_reuses_the_rows_of_the_same_computation_stored_elsewhere(tmp_path, monkeypatch):
    import proxboost.experiments.fits.pipeline as pipeline

    config = {**BASE, "grid_name": "first", "results_dir": str(tmp_path), "n_jobs": 1}
    first = run_experiment(**config, progress=False).sort_values("split")
    assert len(first) == 2

    def no_fit(*args, **kwargs):  # pragma: no cover - reached only if a split is recomputed
        raise AssertionError("a split of the same computation was recomputed")

    monkeypatch.setattr(pipeline, "run_protocol", no_fit)
    again = run_experiment(**{**config, "grid_name": "again"}, progress=False)
    again = again.sort_values("split")
    assert set(again["protocol"]) == {"again/2splits/T5"} and set(again["grid"]) == {"again"}
    assert list(again["identity_hash"]) == list(first["identity_hash"])
    for k in range(2):
        src = results.row_path(
            tmp_path,
            "first/2splits/T5",
            *first.iloc[0][["dataset", "loss", "algo", "engine"]],
            first.iloc[0]["identity"],
            k,
        )
        dst = results.row_path(
            tmp_path,
            "again/2splits/T5",
            *first.iloc[0][["dataset", "loss", "algo", "engine"]],
            first.iloc[0]["identity"],
            k,
        )
        a, b = _stored_fields(src), _stored_fields(dst)
        # every field's text is the source's (the numbers bit for bit), but where it belongs
        assert b.pop("reused_from") == src.relative_to(tmp_path).as_posix()
        assert {k: v for k, v in a.items() if k not in ("protocol", "grid")} == {
            k: v for k, v in b.items() if k not in ("protocol", "grid")
        }
    # another computation (one more grid value) is not the same: it is computed
    with pytest.raises(AssertionError, match="recomputed"):
        run_experiment(
            **{**config, "grid_name": "other", "grid": {**BASE["grid"], "step": [1.0, 2.0]}},
            progress=False,
        )
