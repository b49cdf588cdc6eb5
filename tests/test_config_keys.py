"""No override is silently ignored (proxboost.experiments.launch.config_keys, the checks of
proxboost.experiments.launch.cli): a key no run reads is refused before any fit, in one line naming
it and the nearest key a run reads."""

from pathlib import Path

import pytest

from proxboost.experiments.launch import config_keys
from proxboost.experiments.launch.cli import (
    UserError,
    check_launcher,
    check_values,
    refuse_unknown_overrides,
)

CONF = Path(__file__).resolve().parents[1] / "conf"
EXPERIMENTS = sorted(p.stem for p in (CONF / "experiment").glob("*.yaml"))
OPTIONS = [
    (group.name, option.stem)
    for group in sorted(CONF.iterdir())
    if group.is_dir() and group.name not in ("hydra", "experiment")
    for option in sorted(group.glob("*.yaml"))
]


@pytest.mark.parametrize("experiment", EXPERIMENTS)
@pytest.mark.grid
def test_every_experiment_reads_every_key_it_sets(compose, experiment):
    assert config_keys.unknown_keys(compose([f"+experiment={experiment}"])) == []


@pytest.mark.slow
def test_every_option_of_every_group_reads_every_key_it_sets(compose):
    for group, option in OPTIONS:
        assert config_keys.unknown_keys(compose([f"{group}={option}"])) == [], (group, option)


@pytest.mark.parametrize(
    "overrides, key, near",
    [
        (["+learning_rate=0.01"], "learning_rate", "grid.learning_rate"),
        (["+grid.learning_rat=[0.01]"], "grid.learning_rat", "grid.learning_rate"),
        (["+optimizer=adam"], "optimizer", None),
        (["+algo.max_dept=3"], "algo.max_dept", None),
        (["+protocol.n_split=3"], "protocol.n_split", "protocol.n_splits"),
        (["+experiment=intro", "+synthetic.learning_rat=0.1"], "synthetic.learning_rat", None),
    ],
)
@pytest.mark.grid
def test_an_added_key_no_run_reads_is_refused_with_the_nearest(compose, overrides, key, near):
    cfg = compose(["loss=lad", "algo=prox", *overrides])
    unknown = config_keys.unknown_keys(cfg)
    assert [k for k, _ in unknown] == [key]
    if near is not None:
        assert unknown[0][1] == near
    with pytest.raises(UserError, match=f"unknown key '{key}'") as err:
        check_values(cfg)
    assert "\n" not in str(err.value)
    if near is not None:
        assert f"did you mean {near}?" in str(err.value)


def test_the_settings_checked_by_their_own_code_stay_open(compose):
    """A dataset's params, the loss's parameters, the engine's settings and a baseline's options
    are checked by their own code against their own lists (one line each, tested there)."""
    cfg = compose(["+dataset.params.missing_rate=0.2", "algo=lightgbm", "+algo.options.x=1"])
    assert config_keys.unknown_keys(cfg) == []


@pytest.mark.parametrize(
    "args, refused",
    [
        (["learning_rate=0.01"], "learning_rate"),
        (["--cfg", "job", "grid.learning_rat=[1]"], "grid.learning_rat"),
        (["-m", "dataset=engel,sniffer", "protocol.n_split=3"], "protocol.n_split"),
        (["loss=lad", "grid.learning_rate=[0.1]", "hydra.launcher.n_jobs=2"], None),
        (["+experiment=paper", "dataset.params.n_samples=100", "+budget=1h"], None),
        (["--config-name", "config", "tie_rule=authors"], None),
    ],
)
def test_an_override_of_a_key_no_configuration_defines_is_refused_before_hydra(args, refused):
    message = refuse_unknown_overrides(args)
    if refused is None:
        assert message is None
    else:
        assert message.startswith(f"unknown key '{refused}'") and "\n" not in message


@pytest.mark.parametrize(
    "settings, ok",
    [
        ({"n_jobs": 2}, True),
        ({"n_jobs": -1}, True),
        ({"n_jobs": 0}, False),
        ({"n_jobs": "two"}, False),
        ({"n_jobs": 2, "backend": "dask"}, False),
        ({"n_jobs": 2, "prefer": "gpus"}, False),
        ({"n_jobs": 2, "batch_size": 0}, False),
    ],
)
def test_invalid_joblib_launcher_settings_are_refused_in_one_line(settings, ok):
    launcher = {"_target_": "hydra_plugins.hydra_joblib_launcher.JoblibLauncher", **settings}
    message = check_launcher(launcher)
    assert (message is None) == ok
    if not ok:
        assert message.startswith("hydra.launcher.") and "\n" not in message
    assert check_launcher({"_target_": "hydra._internal.BasicLauncher", "n_jobs": 0}) is None


@pytest.mark.slow
def test_run_py_refuses_before_any_fit(run_py, run_dirs, tmp_path):
    for args in (["+learning_rate=0.01"], ["learning_rate=0.01"]):
        done = run_py("loss=lad", "algo=prox", *args, *run_dirs)
        assert done.returncode == 2, done.stderr
        lines = [ln for ln in (done.stdout + done.stderr).splitlines() if "unknown key" in ln]
        assert len(lines) == 1 and "did you mean grid.learning_rate?" in lines[0]
        assert "Traceback" not in done.stderr
    assert not (tmp_path / "res").exists()
