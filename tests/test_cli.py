"""The command line of ``run.py`` (proxboost.cli): user errors in one line with exit code 2,
before any fit, for one run and for a whole sweep; the results folder's writability check.

Runs ``run.py`` in subprocesses with tiny settings; results and Hydra directories live in
``tmp_path``.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

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


def _compose(overrides=(), hydra_config=False):
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base=None):
        return compose(
            config_name="config", overrides=list(overrides), return_hydra_config=hydra_config
        )


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
    ],
)
def test_user_errors_are_one_line_before_any_fit(tmp_path, overrides, message):
    from proxboost.cli import check_writable, run_arguments
    from proxboost.pipeline import plan_run

    small = (
        [] if any(o.startswith("dataset=") for o in overrides) else ["dataset.params.n_samples=60"]
    )
    cfg = _compose([*overrides, f"results_dir={tmp_path / 'res'}", *small])
    with pytest.raises(ValueError) as exc:
        plan_run(**run_arguments(cfg, REPO / "conf"))
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
    from proxboost.cli import check_writable

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


@pytest.mark.slow
def test_a_sweep_is_checked_whole_before_any_fit(tmp_path):
    # every problem of every job, one line each, exit code 2, no traceback, nothing fitted
    out = _run(
        tmp_path,
        "-m",
        "dataset=regression,classification",
        "loss=lad,hinge",
        "algo=gradient",
        "grid=smoke",
        "protocol.fractions.train=0.5,0.6",
        *_dirs(tmp_path),
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
    single = _run(tmp_path, "n_jobs=abc", *_dirs(tmp_path), timeout=60)
    assert single.returncode == 2 and "Traceback" not in single.stdout + single.stderr
    assert (
        "n_jobs must be an integer >= 1, -1 or null (every core), got 'abc'"
        in single.stdout + single.stderr
    )
    unknown = _run(tmp_path, "loss=foo", *_dirs(tmp_path), timeout=60)  # Hydra's own message
    assert (
        unknown.returncode != 0 and "Could not find 'loss/foo'" in unknown.stdout + unknown.stderr
    )
