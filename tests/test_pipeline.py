"""The pipeline: result identity per dimension, and the Hydra app end to end (configs, a whole run,
reuse only of the same computation, resume after a kill, launchers, bad input).

Runs ``run.py`` in subprocesses with tiny settings (grid=smoke, few splits, small T_max);
results and Hydra directories live in ``tmp_path``. Real datasets come from the mirror named by
``$PROXBOOST_DATA_MIRROR`` (the ``data_mirror`` fixture: tests needing it are skipped without it).
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from proxboost import results
from proxboost.datasets import dataset_identity
from proxboost.losses import make_loss
from proxboost.methods import ALGOS, Algo
from proxboost.pipeline import plan_run

REPO = Path(__file__).resolve().parents[1]


def _env(tmp_path):
    env = dict(os.environ)
    env.pop("HYDRA_FULL_ERROR", None)
    env["PROXBOOST_DATA_HOME"] = str(tmp_path / "data")
    return env


def _cmd(*args):
    return [sys.executable, str(REPO / "run.py"), *args]


def _run(tmp_path, *args, timeout=180):
    return subprocess.run(
        _cmd(*args),
        cwd=tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _dirs(tmp_path):
    return [
        f"results_dir={tmp_path / 'res'}",
        f"hydra.run.dir={tmp_path / 'run'}",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
    ]


# -- configuration ------------------------------------------------------------------------------
def _compose(overrides=(), hydra_config=False):
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base=None):
        return compose(
            config_name="config", overrides=list(overrides), return_hydra_config=hydra_config
        )


def test_config_groups_and_values():
    from omegaconf import OmegaConf

    cfg = _compose()
    assert (
        cfg.dataset.name == "synthetic"
        and cfg.grid.name == "default"
        and cfg.engine.name == "exact"
    )
    assert cfg.tie_rule == "midpoint"
    assert cfg.protocol.n_splits == 20 and cfg.protocol.seed == 0
    assert dict(cfg.protocol.fractions) == {"train": 0.5, "validation": 0.25, "test": 0.25}
    assert "mirror" in cfg.data
    assert cfg.protocol.max_estimators == cfg.grid.max_estimators  # the default grid sets its T_max
    assert _compose(["grid=paper"]).protocol.max_estimators == 1000
    assert _compose(["grid=default", "protocol.max_estimators=20"]).protocol.max_estimators == 20
    paper = OmegaConf.to_container(_compose(["grid=paper"]).grid)
    assert paper["max_depth"] == [1, 3, 5] and paper["learning_rate"] == [0.05, 0.1, 0.3, 0.5, 1.0]
    assert paper["step"] == [1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0]
    assert paper["max_features"] == [1 / 3, "sqrt", 1.0]
    from hydra.utils import instantiate

    for f in (REPO / "conf" / "loss").glob(
        "*.yaml"
    ):  # each loss config builds its loss (task: the loss's own)
        lc = _compose([f"loss={f.stem}"]).loss
        assert lc.name == f.stem and "task" not in lc
        assert type(instantiate(lc)) is type(make_loss(f.stem))
    assert instantiate(_compose(["loss=pinball", "loss.tau=0.3"]).loss).tau == 0.3
    assert _compose().results_dir == "runs"  # ad-hoc runs: untracked folder
    for f in (REPO / "conf" / "experiment").glob(
        "*.yaml"
    ):  # named experiments: the committed reproduction
        assert _compose([f"+experiment={f.stem}"]).results_dir == "results", f.stem
    assert (
        _compose(["loss=pinball"]).loss.tau == 0.9
        and _compose(["loss=exponential"]).loss.beta == 1.0
    )
    assert sorted(f.stem for f in (REPO / "conf" / "algo").glob("*.yaml")) == sorted(ALGOS)
    assert _compose(["algo=random_forest"]).algo.n_estimators == 500
    from proxboost.engines import ENGINES

    assert sorted(f.stem for f in (REPO / "conf" / "engine").glob("*.yaml")) == sorted(ENGINES)
    slurm = _compose(["hydra/launcher=slurm"], hydra_config=True).hydra.launcher
    assert slurm._target_.endswith("SlurmLauncher") and slurm.cpus_per_task >= 1
    joblib = _compose(["hydra/launcher=joblib"], hydra_config=True).hydra.launcher
    assert joblib._target_.endswith("JoblibLauncher")


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
    ]  # alias of regression
    for changes in same:
        assert _identity(**changes) == base, changes
    assert _identity(loss="ls", loss_params={"tau": 0.3}) == _identity(
        loss="ls"
    )  # τ does not apply to ls


def test_identity_versions_and_numerics_version(monkeypatch):
    import proxboost.methods as methods

    base = _identity(algo="xgboost")
    assert set(base["method"]["libraries"]) == {"xgboost"} and base["method"]["engine"] == "none"
    assert _identity(algo="xgboost", engine="hist") == base  # a baseline's engine does not apply
    assert set(_identity(algo="random_forest")["method"]["libraries"]) == {"scikit-learn"}
    import proxboost.baselines as baselines

    monkeypatch.setattr(baselines, "library_version", lambda module: "0.0-test")
    assert _identity(algo="xgboost") != base
    sklearn_engine = _identity(engine="sklearn")
    assert set(sklearn_engine["method"]["libraries"]) == {"scikit-learn"}
    monkeypatch.setattr(methods, "library_version", lambda m: "0.0-test")
    assert _identity(engine="sklearn") != sklearn_engine
    monkeypatch.setattr(results, "NUMERICS_VERSION", results.NUMERICS_VERSION + 1)
    assert _identity()["numerics_version"] == results.NUMERICS_VERSION


def test_every_engine_names_the_library_that_grows_its_trees():
    from proxboost.engines import ENGINES
    from proxboost.methods import engine_libraries

    for engine in ENGINES:
        assert engine_libraries(engine), (
            f"engine {engine!r}: add its library to methods._ENGINE_MODULE_LIBRARIES"
        )


def test_identity_of_a_real_dataset_is_its_files_sha256(tmp_path, data_mirror):
    import hashlib

    from proxboost.datasets import load_dataset

    info = load_dataset("engel", mirror=data_mirror).info
    identity = dataset_identity(info, 0)
    assert identity == {
        "name": "engel",
        "params": {},
        "sha256": {"engel.csv": hashlib.sha256(open(info.paths[0], "rb").read()).hexdigest()},
    }
    assert dataset_identity(info, 5) == identity  # the seed does not draw real data
    assert str(data_mirror) not in json.dumps(identity)  # no path of this machine
    other = dataset_identity(type(info)(**{**info.as_dict(), "sha256": "0" * 64}), 0)
    assert other != identity


# -- one run, end to end --------------------------------------------------------------------------
@pytest.mark.slow
def test_whole_chain_and_reuse_only_of_the_same_computation(tmp_path):
    args = [
        "loss=pinball",
        "algo=residual_prox",
        "grid=smoke",
        "protocol.n_splits=2",
        "protocol.max_estimators=20",
        "dataset.params.n_samples=300",
        "n_jobs=1",
        *_dirs(tmp_path),
    ]
    out = _run(tmp_path, *args)
    assert out.returncode == 0, out.stdout + out.stderr
    df = results.load(tmp_path / "res")
    assert list(df["split"]) == [0, 1]
    assert (
        set(df["protocol"]) == {"smoke/2splits/T20"}
        and df["dataset"].str.startswith("synthetic-").all()
    )
    assert (
        set(df["loss"]) == {"pinball"}
        and set(df["algo"]) == {"residual_prox"}
        and set(df["engine"]) == {"exact"}
    )
    assert df["n_estimators"].between(0, 20).all() and set(df["max_depth"]) == {2}
    assert (
        set(df["learning_rate"]) <= {0.1, 0.5}
        and set(df["step"]) == {1.0}
        and set(df["tau"]) == {0.9}
    )
    assert df["test_loss"].gt(0).all() and df["test_error"].isna().all()
    assert (
        df["val_loss"].gt(0).all() and (df["n_train"] == 150).all() and (df["n_test"] == 75).all()
    )
    identity = json.loads(df.loc[0, "identity"])
    assert (
        identity["loss"] == {"name": "pinball", "tau": 0.9}
        and identity["protocol"]["max_estimators"] == 20
    )
    assert (
        identity["method"]["options"]["tie_rule"] == "midpoint" and identity["dataset"]["seed"] == 0
    )
    assert df.loc[0, "commit"] and df.loc[0, "xgboost_version"]
    log = (tmp_path / "run" / "run.log").read_text()
    assert (
        "over 2 splits; rows in" in log and "test loss" in log
    )  # the last line says where the rows are
    assert "\r" not in out.stderr  # no carriage-return bar without a terminal (test_progress.py)
    files = sorted((tmp_path / "res").rglob("split-*.csv"))
    stamps = [f.stat().st_mtime_ns for f in files]

    # a sweep holding the same run, a changed grid and a changed τ: only the same run is reused
    sweep = _run(
        tmp_path,
        "-m",
        *args,
        "grid.learning_rate=[0.1,0.5],[0.2]",
        "loss.tau=0.9,0.5",
        "progress=false",
    )
    text = sweep.stdout + sweep.stderr
    assert sweep.returncode == 0, text
    assert (
        text.count("2/2 splits stored, 0 to run") == 1
        and text.count("0/2 splits stored, 2 to run") == 3
    )
    assert (
        "checked the 4 jobs of this sweep before any fit: 3 to run, 1 complete already (only read)"
        in text
    )
    assert [f.stat().st_mtime_ns for f in files] == stamps  # nothing recomputed
    assert (
        "sweep rows: dataset | loss | method" in text
        and text.count("| residual_prox | exact |") == 4
    )
    df = results.load(tmp_path / "res")
    assert len(df) == 8 and df["identity_hash"].nunique() == 4
    assert sorted(set(df["loss"])) == [
        "pinball",
        "pinball-tau0.5",
    ]  # a changed loss has its own folder
    grids = df["protocol"].str.split("/").str[0]
    assert (grids == "smoke").sum() == 4 and grids.str.startswith("smoke-custom").sum() == 4
    assert set(df["tau"]) == {0.9, 0.5}


@pytest.mark.slow
def test_killed_sweep_rerun_has_every_row_once(tmp_path):
    sweep = [
        "-m",
        "algo=gradient,prox",
        "loss=lad",
        "grid=smoke",
        "protocol.n_splits=5",
        "protocol.max_estimators=40",
        "dataset.params.n_samples=300",
        "dataset.params.n_features=10",
        "n_jobs=1",
        "progress=false",
        *_dirs(tmp_path),
    ]
    proc = subprocess.Popen(
        _cmd(*sweep),
        cwd=tmp_path,
        env=_env(tmp_path),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    res = tmp_path / "res"
    try:
        deadline = time.monotonic() + 120
        while (
            not list(res.rglob("split-*.csv"))
            and proc.poll() is None
            and time.monotonic() < deadline
        ):
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    before = {f: f.stat().st_mtime_ns for f in res.rglob("split-*.csv")}
    assert 1 <= len(before) < 10, "the sweep should have been killed halfway"

    out = _run(tmp_path, *sweep, "hydra/launcher=joblib", "hydra.launcher.n_jobs=2")
    assert out.returncode == 0, out.stdout + out.stderr
    df = results.load(res)
    assert len(df) == 10
    assert not df.duplicated(list(results.KEY_COLUMNS)).any()
    assert sorted(zip(df["algo"], df["split"])) == [
        (a, k) for a in ("gradient", "prox") for k in range(5)
    ]
    assert {
        f: f.stat().st_mtime_ns for f in before
    } == before  # stored rows were skipped, not redone


@pytest.mark.slow
def test_submitit_local_real_dataset_xgboost(tmp_path, data_mirror):
    out = _run(
        tmp_path,
        "-m",
        "hydra/launcher=submitit_local",
        "dataset=engel",
        "loss=pinball",
        "algo=xgboost",
        "grid=smoke",
        "protocol.n_splits=1",
        "protocol.max_estimators=10",
        *_dirs(tmp_path),
    )
    assert out.returncode == 0, out.stdout + out.stderr
    df = results.load(tmp_path / "res")
    assert len(df) == 1
    row = df.iloc[0]
    assert (row["dataset"], row["loss"], row["algo"], row["engine"]) == (
        "engel",
        "pinball",
        "xgboost",
        "none",
    )
    assert row["tau"] == 0.9 and row["n_train"] + row["n_validation"] + row["n_test"] == 235
    assert 0 <= row["n_estimators"] <= 10 and row["test_loss"] > 0
    import xgboost

    assert row["xgboost_version"] == xgboost.__version__
    assert list((tmp_path / "sweep").glob(".submitit/*"))  # the job went through submitit
