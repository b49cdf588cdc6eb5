"""The command line of ``run.py`` (proxboost.experiments.launch.cli): a config → the pipeline's
arguments (the loss, algo and engine built by their options, the folders named from Hydra's record
of the chosen options), user errors in one line with exit code 2 before any fit, for one run and for
a whole sweep, the results folder's writability check, the dry run, and ``run.py`` end to end (a
whole run, reuse only of the same computation, resume after a kill, launchers).

Runs ``run.py`` in subprocesses with tiny settings (grid=smoke, few splits, small T_max); results
and Hydra folders live in ``tmp_path`` (conftest's ``run_py`` and ``run_dirs``). Real datasets
come from the mirror named by ``$PROXBOOST_DATA_MIRROR`` (the ``data_mirror`` fixture).
"""

import json
import os
from pathlib import Path

import pytest
from conftest import kill_run_py_at_first_row

from proxboost.experiments.fits.pipeline import plan_run
from proxboost.experiments.launch.cli import check_writable, run_arguments
from proxboost.experiments.plan.methods import Algo, Engine
from proxboost.experiments.store import results
from proxboost.experiments.store.results import identity_hash
from proxboost.losses import Pinball

REPO = Path(__file__).resolve().parents[1]


# -- a config → the pipeline's arguments ---------------------------------------------------------
@pytest.mark.slow
def test_run_arguments_are_the_objects_the_chosen_options_build(compose):
    args = run_arguments(compose(["loss=pinball", "algo=random_forest", "engine=hist"]))
    assert isinstance(args["loss"], Pinball) and args["loss"].tau == 0.9
    assert isinstance(args["algo"], Algo) and args["algo"].options == {"n_estimators": 500}
    assert args["algo"].grid == {"max_features": [1 / 3, "sqrt", 1.0]}
    assert args["engine"] == Engine("hist")
    assert "name" not in args["grid"] and set(args["grid"]) == {
        "max_depth",
        "learning_rate",
        "step",
    }


@pytest.mark.parametrize(
    "overrides, loss, grid",
    [
        ([], "ls", "default"),
        (["loss=pinball", "grid=paper"], "pinball", "paper"),
        (["loss=pinball", "loss.tau=0.9"], "pinball", "default"),  # the option's own value
        (["loss=pinball", "loss.tau=0.5"], "pinball-tau0.5", "default"),
        (["loss=exponential", "loss.beta=2.0"], "exponential-beta2.0", "default"),
        (["grid=paper", "grid.max_depth=[1,3,5]"], "ls", "paper"),  # the option's own values
        (["grid=paper", "grid.max_depth=[2]"], "ls", {"max_depth": [2]}),
        (
            ["algo=random_forest", "algo.grid.max_features=[sqrt]"],
            "ls",
            {"max_features": ["sqrt"]},
        ),
        (["+experiment=paper", "loss=lad"], "lad", "paper"),
    ],
)
@pytest.mark.grid
def test_folders_are_named_from_hydras_record_of_the_chosen_options(compose, overrides, loss, grid):
    args = run_arguments(compose(overrides, hydra_config=True))
    assert args["loss_label"] == loss
    if isinstance(grid, dict):  # a modified grid: <option>-custom<hash of the changed values>
        option = "paper" if "grid=paper" in overrides else "default"
        grid = f"{option}-custom{identity_hash(grid)[:6]}"
    assert args["grid_name"] == grid


@pytest.mark.slow
def test_without_hydras_record_the_folders_are_the_options_names(compose):
    args = run_arguments(compose(["loss=pinball", "loss.tau=0.5", "grid=smoke"]))
    assert (args["loss_label"], args["grid_name"]) == ("pinball", "smoke")


# -- bad input ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "overrides, message",
    [
        (["n_jobs=abc"], "n_jobs must be an integer >= 1, -1 or null (every core), got 'abc'"),
        (["progress=maybe"], "progress must be true or false, got 'maybe'"),
        (
            ["tie_rule=lowest"],
            "tie_rule must be one of midpoint, authors, authors_float, got 'lowest'",
        ),
        (["loss=pinball", "loss.tau=2"], "loss 'pinball': tau=2 is out of range"),
        (
            ["dataset=engel", "loss=hinge"],
            "loss 'hinge' is a classification loss but dataset 'engel' is a regression dataset",
        ),
        (["protocol.fractions.train=0.6"], "fractions (train, validation, test) must sum to 1"),
        (["protocol.n_splits=0"], "protocol.n_splits must be an integer >= 1, got 0"),
        (
            ["dataset.params.n_features=2"],
            "dataset 'synthetic': n_features must be an integer >= 4",
        ),
        (["grid.max_depth=[0]"], "grid value max_depth=0 is invalid"),
        (["algo=xgboost", "algo.tree_method=gpu"], "algo 'xgboost'"),
        (["dry_run=maybe"], "dry_run must be true or false, got 'maybe'"),
        (
            ["algo=random_forest", "algo.grid.max_features=[2]"],
            "grid value max_features=2 is invalid",
        ),
        (["+engine.threads=2"], "engine 'exact': "),
        (
            ["algo._target_=builtins.dict"],
            "algo 'prox': its _target_ must be proxboost.experiments.plan.methods.Algo"
            " (it built a dict)",
        ),
    ],
)
@pytest.mark.grid
def test_user_errors_are_one_line_before_any_fit(compose, tmp_path, overrides, message):

    small = (
        [] if any(o.startswith("dataset=") for o in overrides) else ["dataset.params.n_samples=60"]
    )
    cfg = compose([*overrides, f"results_dir={tmp_path / 'res'}", *small])
    with pytest.raises(ValueError) as exc:
        plan_run(**run_arguments(cfg))
        raise AssertionError("accepted")
    assert message in str(exc.value) and "\n" not in str(exc.value)
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(
        ValueError, match="results_dir .* is not writable .*: choose another with results_dir="
    ):
        check_writable(blocker / "res")
    assert not (tmp_path / "res").exists()


def test_the_writability_check_creates_and_removes_nothing(tmp_path, monkeypatch):
    # the jobs of a parallel sweep check the results folder while another job stores its first rows
    # there: a check that created the folder and removed it again pulled it from under that job

    def refuse(*args, **kwargs):
        raise AssertionError("the writability check created or removed a folder")

    for module, name in (
        (Path, "mkdir"),
        (Path, "rmdir"),
        (os, "mkdir"),
        (os, "makedirs"),
        (os, "rmdir"),
    ):
        monkeypatch.setattr(module, name, refuse)
    check_writable(tmp_path / "res" / "sub")
    assert list(tmp_path.iterdir()) == []


# -- a whole sweep's configurations, from a few compositions --------------------------------------
def _sweeps(loader):
    """The multirun configurations of the README's ``python run.py`` lines and of every experiment
    of ``conf/experiment/``, each once."""
    from hydra.types import RunMode
    from test_readme import NOT_RUN, _run_py_overrides, readme_commands

    commands = [c for c in readme_commands() if c.startswith("python run.py ") and c not in NOT_RUN]
    experiments = sorted((REPO / "conf" / "experiment").glob("*.yaml"))
    overrides = [_run_py_overrides(c) for c in commands] + [
        [f"+experiment={path.stem}"] for path in experiments
    ]
    unique = list(dict.fromkeys(map(tuple, overrides)))
    return [loader.load_configuration("config", list(o), RunMode.MULTIRUN) for o in unique]


#: Jobs beyond the sweeps' own: values added, forced, deleted, typed; Hydra's node; a group's
#: option given twice; an option that does not exist; a loss option named otherwise than its loss.
_OTHER_JOBS = [
    ["dataset=engel", "loss=pinball_low", "loss.tau=0.5", "algo=xgboost"],
    ["+experiment=paper", "dataset=sniffer", "grid.max_depth=[2]", "algo.grid=null"],
    ["loss=pinball", "+loss.extra=1", "++protocol.seed=7", "~budget"],
    ["algo=random_forest", "algo.grid.max_features=[sqrt]", "engine=hist", "n_jobs=2"],
    ["+experiment=quantile_levels", "dataset=engel", "loss.tau=[0.1,0.9]"],
    ["dataset=engel", "hydra.job.name=other", "hydra.job.env_copy=[HOME]"],
    ["dataset=engel", "dataset=sniffer"],
    ["dataset=nonexistent"],
    ["+experiment=intro", "synthetic.learning_rate=0.5"],
]


def _same(fast, hydra) -> bool:
    """Equal configurations: unresolved whole, and resolved but for Hydra's own node (its run
    and sweep folders interpolate the time and, in a run, the missing job number)."""
    from omegaconf import OmegaConf

    def resolved(cfg):
        return {
            key: OmegaConf.to_container(cfg[key], resolve=True)
            if OmegaConf.is_config(cfg[key])
            else cfg[key]
            for key in cfg
            if key != "hydra"
        }

    unresolved = OmegaConf.to_container(fast, resolve=False) == OmegaConf.to_container(
        hydra, resolve=False
    )
    return unresolved and resolved(fast) == resolved(hydra)


@pytest.mark.slow
def test_each_jobs_configuration_is_the_one_hydra_composes(compose, data_mirror):
    """A job's configuration built from its sweep's few compositions
    (:class:`~proxboost.experiments.launch.job_configs.JobConfigs`, the checks of a sweep) equals
    Hydra's own composition of that job, for a varied sample of the jobs of the README's sweeps and
    of every experiment, and for jobs that it leaves to Hydra; Hydra's error stays Hydra's."""
    from hydra.core.global_hydra import GlobalHydra
    from hydra.types import RunMode

    from proxboost.experiments.launch.cli import _sweep_jobs
    from proxboost.experiments.launch.job_configs import JobConfigs

    loader = GlobalHydra.instance().config_loader()
    configs = JobConfigs(loader, "config")
    sweep_jobs = [
        jobs[i * 7 % len(jobs)]  # a different place in each sweep
        for i, jobs in enumerate(_sweep_jobs(config) for config in _sweeps(loader))
        if jobs
    ]
    assert len(sweep_jobs) >= 20
    for job in sweep_jobs + _OTHER_JOBS:
        try:
            hydra = loader.load_configuration("config", job, RunMode.RUN)
        except Exception as exc:
            with pytest.raises(type(exc)):
                configs(job)
            continue
        assert _same(configs(job), hydra), job
    # the sweeps' jobs were built from the compositions, not composed one by one
    assert all(configs.assembled(job) is not None for job in sweep_jobs)
    assert configs.assembled(_OTHER_JOBS[5]) is None  # Hydra's node: Hydra composes it


@pytest.mark.slow
def test_a_bad_value_in_one_job_of_a_sweep_is_still_reported(compose, tmp_path, monkeypatch):
    """check_jobs finds the same problems and mismatches, in the same order, with its
    configurations built from a few compositions as with Hydra composing every job (a small
    sweep's, which it composes one by one, as from a few compositions)."""
    from hydra.core.global_hydra import GlobalHydra
    from hydra.types import RunMode

    from proxboost.experiments.launch import job_configs
    from proxboost.experiments.launch.cli import _sweep_jobs, check_jobs

    monkeypatch.chdir(tmp_path)
    config = (
        GlobalHydra.instance()
        .config_loader()
        .load_configuration(
            "config",
            [
                "dataset=regression,classification",
                "loss=ls,pinball,logistic",
                "algo=gradient,prox",
                "grid=smoke",
                f"results_dir={tmp_path / 'res'}",
            ],
            RunMode.MULTIRUN,
        )
    )
    jobs = _sweep_jobs(config)
    jobs[3] = [*jobs[3], "protocol.n_splits=0"]
    jobs.insert(5, ["dataset=regression", "loss=pinball", "loss.tau=2", "algo=prox", "grid=smoke"])
    jobs.append(["dataset=classification", "loss=logistic", "progress=maybe", "grid=smoke"])
    assert len(jobs) > job_configs.FEW_JOBS  # composed by JobConfigs, not one by one
    fast = check_jobs(config, jobs)
    # a small sweep's jobs are composed one by one: the same checks as from JobConfigs
    few = jobs[: job_configs.FEW_JOBS]
    loader = GlobalHydra.instance().config_loader()
    assert isinstance(job_configs.for_sweep(loader, "config", [], len(few)), job_configs.OneByOne)
    by_parts = job_configs.JobConfigs(loader, "config")
    assert check_jobs(config, few) == check_jobs(config, few, configs=by_parts)
    monkeypatch.setattr(job_configs.JobConfigs, "assembled", lambda self, overrides: None)
    assert fast == check_jobs(config, jobs)  # Hydra composes every job
    problems, mismatched = fast[:2]
    assert problems == [
        "protocol.n_splits must be an integer >= 1, got 0",
        "loss 'pinball': tau=2 is out of range: the pinball level must be a float in (0, 1)",
        "progress must be true or false, got 'maybe'",
    ]
    assert len(mismatched) == 6  # ls and pinball on classification, logistic on regression


@pytest.mark.slow
def test_a_sweep_is_checked_whole_before_any_fit(tmp_path, run_py, run_dirs):
    # every problem of every job, one line each, exit code 2, no traceback, nothing fitted
    out = run_py(
        "-m",
        "dataset=regression,classification",
        "loss=lad,hinge",
        "algo=gradient",
        "grid=smoke",
        "protocol.fractions.train=0.5,0.6",
        *run_dirs,
        timeout=120,
    )
    text = out.stdout + out.stderr
    assert out.returncode == 2, text
    assert "fractions (train, validation, test) must sum to 1" in text
    assert (
        "2 job(s) of this sweep pair a loss with a dataset of another task" in text
    )  # (others: fractions)
    assert "add skip_task_mismatch=true to skip them" in text
    assert "Traceback" not in text and "Launching" not in text and not (tmp_path / "res").exists()
    single = run_py("n_jobs=abc", *run_dirs, timeout=60)
    assert single.returncode == 2 and "Traceback" not in single.stdout + single.stderr
    assert (
        "n_jobs must be an integer >= 1, -1 or null (every core), got 'abc'"
        in single.stdout + single.stderr
    )
    unknown = run_py("loss=foo", *run_dirs, timeout=60)  # Hydra's own message
    assert (
        unknown.returncode != 0 and "Could not find 'loss/foo'" in unknown.stdout + unknown.stderr
    )


@pytest.mark.slow
def test_a_dry_run_lists_what_would_be_computed_and_writes_nothing(tmp_path, run_py, run_dirs):
    args = [
        "loss=lad",
        "grid=smoke",
        "protocol.n_splits=2",
        "protocol.max_estimators=5",
        "dataset.params.n_samples=200",
        "n_jobs=1",
        "progress=false",
        *run_dirs,
    ]
    dry = run_py("-m", "algo=gradient,prox", *args, "dry_run=true")
    text = dry.stdout + dry.stderr
    assert dry.returncode == 0, text
    assert text.count("0/2 splits stored, 2 to compute (splits 0, 1)") == 2
    assert not (tmp_path / "res").exists()  # nothing fitted, nothing written
    done = run_py("algo=gradient", *args)
    assert done.returncode == 0, done.stdout + done.stderr
    files = {f: f.stat().st_mtime_ns for f in (tmp_path / "res").rglob("*") if f.is_file()}
    assert len(files) == 2
    dry = run_py("-m", "algo=gradient,prox", *args, "dry_run=true")
    text = dry.stdout + dry.stderr
    assert "2/2 splits stored, 0 to compute; rows in" in text
    assert "0/2 splits stored, 2 to compute" in text  # prox: not stored yet
    assert {f: f.stat().st_mtime_ns for f in (tmp_path / "res").rglob("*") if f.is_file()} == files
    # a synthetic experiment: the curves it would compute
    intro = ["+experiment=intro", "synthetic.seed=[0]", "synthetic.tie_rule=[midpoint]"]
    dry = run_py(*intro, "dry_run=true", *run_dirs)
    text = dry.stdout + dry.stderr
    assert dry.returncode == 0, text
    assert "dry run: [intro] 2 runs, 0 stored, 2 to compute" in text
    assert text.count("dry run: would compute intro: sines/lad/") == 2
    assert not (tmp_path / "res" / "synthetic").exists()


@pytest.mark.slow
def test_whole_chain_and_reuse_only_of_the_same_computation(tmp_path, run_py, run_dirs):
    args = [
        "loss=pinball",
        "algo=residual_prox",
        "grid=smoke",
        "protocol.n_splits=2",
        "protocol.max_estimators=20",
        "dataset.params.n_samples=300",
        "n_jobs=1",
        *run_dirs,
    ]
    out = run_py(*args)
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
    sweep = run_py(
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
def test_killed_sweep_rerun_has_every_row_once(tmp_path, run_py, run_dirs):
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
        *run_dirs,
    ]
    res = tmp_path / "res"
    before = kill_run_py_at_first_row(tmp_path, *sweep, timeout=120)
    assert 1 <= len(before) < 10, "the sweep should have been killed halfway"

    out = run_py(*sweep, "hydra/launcher=joblib", "hydra.launcher.n_jobs=2")
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
def test_submitit_local_real_dataset_xgboost(tmp_path, data_mirror, run_py, run_dirs):
    out = run_py(
        "-m",
        "hydra/launcher=submitit_local",
        "dataset=engel",
        "loss=pinball",
        "algo=xgboost",
        "grid=smoke",
        "protocol.n_splits=1",
        "protocol.max_estimators=10",
        *run_dirs,
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
