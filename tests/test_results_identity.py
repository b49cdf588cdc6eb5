"""Stored rows keep their identity: the identity recomputed by today's code from a stored row's
own settings (loss and its parameters, algo, engine, tie rule, grid, protocol) equals the one
stored in the row, and its hash names the row's folder (rows of the current numerics version).
A change of the estimators' parameters, of the loss parameters or of the method options would
move every stored row to a new folder (and rerun it); this test fails first.

The same through the command line: the ``run.py`` line of each stored run
(:func:`proxboost.experiments.store.results.run_command`), composed from ``conf/`` as ``run.py``
composes it, plans the run in the stored run's folder with its identity, so that a rerun finds every
stored row (a change of a config option, or a Hydra key reaching an identity, fails here).
"""

import io
import json
import math
import shlex
from pathlib import Path

import pandas as pd
import pytest

from proxboost.experiments.fits.pipeline import plan_run, run_identity
from proxboost.experiments.launch.cli import run_arguments
from proxboost.experiments.plan.methods import BOOSTING_ALGOS, make_method
from proxboost.experiments.store import results
from proxboost.experiments.system.sealed import read_sealed
from proxboost.losses import LOSS_PARAMETERS, make_loss

STORED = Path(__file__).resolve().parents[1] / "results" / "paper"
#: Rows of numerics version 0 were made before identities existed; from version 2 on, a row's
#: identity follows today's rules at its own version.
FIRST_IDENTITY_VERSION = 2


def _one_row_per_folder():
    """The first split of every identity folder under results/paper (one row each)."""
    return sorted(
        min(folder.glob("split-*.csv"))
        for folder in {p.parent for p in STORED.rglob("split-*.csv")}
    )


def _recomputed(row):
    stored = json.loads(row["identity"])
    params = {
        k: row[k] for k in LOSS_PARAMETERS if not (isinstance(row[k], float) and math.isnan(row[k]))
    }
    params = {k: int(v) if k == "newton_steps" else float(v) for k, v in params.items()}
    if isinstance(row.get("levels"), str):  # several quantile levels in one model: its tau list
        params["tau"] = json.loads(row["levels"])
    loss = make_loss(stored["loss"]["name"], **params)
    boosting = row["algo"] in BOOSTING_ALGOS
    method = make_method(
        row["algo"],
        loss,
        engine=row["engine"] if boosting else "exact",
        # a baseline's settings come from its algo config: the stored options are those
        options=None if boosting else stored["method"]["options"],
        tie_rule=row["tie_rule"] if boosting else "midpoint",
    )
    identity = run_identity(
        dataset=stored["dataset"],  # the data file's hash: not recomputed (no data read)
        loss=loss,
        method=method,
        grid=json.loads(row["grid"])
        if isinstance(row["grid"], str) and row["grid"].startswith("{")
        else stored["grid"],
        n_splits=int(row["n_splits"]),
        max_estimators=int(row["max_estimators"]),
        fractions=(row["train_fraction"], row["validation_fraction"], row["test_fraction"]),
        seed=int(row["seed"]),
        interval_ties=row["interval_ties"]
        if isinstance(row.get("interval_ties"), str)
        else "closed",
    )
    return stored, identity


@pytest.mark.skipif(not STORED.is_dir(), reason="no stored rows under results/paper")
@pytest.mark.slow
def test_stored_rows_keep_their_identity():
    files = _one_row_per_folder()
    assert files, "no stored rows under results/paper"
    boosting_seen, checked = set(), 0
    for path in files:
        row = pd.read_csv(io.StringIO(read_sealed(path))).iloc[0]
        version = json.loads(row["identity"])["numerics_version"]
        if version < FIRST_IDENTITY_VERSION:
            continue  # made before identities existed (migrated, kept for the record)
        stored, identity = _recomputed(row)
        checked += 1
        # a row of an earlier numerics version (kept while the recompute is partial) has the
        # identity today's rules give it at its own version: only the numbers changed since
        identity = {**identity, "numerics_version": version}
        assert identity == stored, f"{path}: the identity recomputed from the row differs"
        digest = results.identity_hash(results.canonical_json(identity))
        assert digest[: results.HASH_LENGTH] == path.parent.name, path
        if row["algo"] in BOOSTING_ALGOS:
            boosting_seen.add((row["loss"], row["algo"], row["engine"], row["tie_rule"]))
    assert checked and len(boosting_seen) > 1  # the sample covers the estimators' options


@pytest.mark.slow
@pytest.mark.skipif(not STORED.is_dir(), reason="no stored rows under results/paper")
def test_the_command_line_of_every_stored_run_finds_its_rows(compose, data_mirror):
    """Each stored run's command (``results.run_command``) plans that very run. The commands are
    composed as a sweep's checks compose its jobs (``JobConfigs``: a few Hydra compositions for
    the 326 folders instead of one each, a minute of the suite's time), and every tenth one by
    Hydra itself as well, which must plan the same identity."""
    from hydra.core.global_hydra import GlobalHydra

    from proxboost.experiments.launch.job_configs import JobConfigs

    configs = JobConfigs(GlobalHydra.instance().config_loader(), "config")
    checked = 0
    for path in _one_row_per_folder():
        row = pd.read_csv(io.StringIO(read_sealed(path))).iloc[0]
        identity = json.loads(row["identity"])
        version = identity["numerics_version"]
        if version < FIRST_IDENTITY_VERSION:
            continue
        command = results.run_command(identity, path)
        overrides = shlex.split(command)[2:]  # after "python run.py"
        run = plan_run(**run_arguments(configs(overrides)))
        if checked % 10 == 0:  # the oracle: Hydra's own composition plans the same run
            by_hydra = plan_run(**run_arguments(compose(overrides, hydra_config=True)))
            assert (by_hydra.identity, by_hydra.where) == (run.identity, run.where), command
        planned = json.loads(run.identity)
        checked += 1
        if version != results.NUMERICS_VERSION:  # an earlier version's row: the command plans
            # its recomputation, whose identity differs by the version only
            assert {**planned, "numerics_version": version} == identity, command
            continue
        assert planned == identity, command
        assert run.where == path.parent, command
        # every row file of the folder is found (a run a budget stopped holds some of its splits)
        present = {int(p.stem[len("split-") :]) for p in path.parent.glob("split-*.csv")}
        assert run.stored_splits() == present and run.n_splits == row["n_splits"], command
    assert checked


@pytest.mark.slow
def test_the_command_finds_runs_under_every_kind_of_protocol_folder(compose, data_mirror, tmp_path):
    """Non-default fractions, seed and interval ties each add a folder to the protocol's name
    (``protocol_name``): the command of a run stored under such a folder names the same results
    directory and grid, and plans the run in that very folder with the same identity."""
    overrides = [
        "dataset=engel",
        "loss=pinball",
        "loss.tau=[0.1,0.9]",
        "algo=gradient",
        "grid=smoke",
        "protocol.n_splits=2",
        "protocol.max_estimators=5",
        "protocol.fractions.train=0.6",
        "protocol.fractions.validation=0.2",
        "protocol.fractions.test=0.2",
        "protocol.seed=3",
        "protocol.interval_ties=random",
        f"results_dir={tmp_path}",
    ]
    run = plan_run(**run_arguments(compose(overrides, hydra_config=True)))
    assert run.protocol.count("/") == 5  # smoke/2splits/T5/frac0.6-0.2-0.2/seed3/ties-random
    row_file = run.where / "split-00.csv"
    command = results.run_command(json.loads(run.identity), row_file)
    assert f"results_dir={tmp_path}" in command and "grid=smoke" in command
    again = plan_run(**run_arguments(compose(shlex.split(command)[2:], hydra_config=True)))
    assert again.where == run.where and again.identity == run.identity


@pytest.mark.slow
def test_the_command_finds_runs_of_a_synthetic_dataset_with_a_parameter_its_config_lacks(
    compose, tmp_path
):
    """A generator's parameter that ``conf/dataset/regression.yaml`` does not list (the noise's
    standard deviation) enters the identity when given with ``++``; the command adds it the same
    way, so that Hydra accepts it and the run is planned in its own folder again."""
    overrides = [
        "dataset=regression",
        "dataset.params.n_samples=60",
        "++dataset.params.noise_std=0.5",
        "loss=lad",
        "algo=gradient",
        "grid=smoke",
        "protocol.n_splits=1",
        "protocol.max_estimators=5",
        f"results_dir={tmp_path}",
    ]
    run = plan_run(**run_arguments(compose(overrides, hydra_config=True)))
    assert json.loads(run.identity)["dataset"]["params"]["noise_std"] == 0.5
    command = results.run_command(json.loads(run.identity), run.where / "split-00.csv")
    again = plan_run(**run_arguments(compose(shlex.split(command)[2:], hydra_config=True)))
    assert again.where == run.where and again.identity == run.identity
