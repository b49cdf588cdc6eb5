"""A stored row is what today's code computes at its identity: one split of a few stored runs of
the current numerics version, recomputed from its ``run.py`` line into a
temporary results folder, gives the stored row's numbers bit for bit (selected configuration,
validation and test losses, sizes). Anything that moves a number at an unchanged identity (a
change of the boosting loop, compiled or not, of an engine, of the protocol) fails here before a
stored row and a recomputed one could be mixed.

The runs are the smallest dataset's (engel, 235 rows), one per loss among the boosting rows
stored at the current version; each takes a few seconds.
"""

import io
import json
import shlex
import shutil
from pathlib import Path

import pandas as pd
import pytest

from proxboost.experiments.fits.pipeline import execute, plan_run
from proxboost.experiments.launch.cli import run_arguments
from proxboost.experiments.plan.methods import BOOSTING_ALGOS
from proxboost.experiments.store import results
from proxboost.experiments.system.sealed import read_sealed

STORED = Path(__file__).resolve().parents[1] / "results" / "paper"
#: The columns of a row that record how, where and when it was computed, not what (and the
#: packages' versions, ``*_version``)
NOT_NUMBERS = {"fit_seconds", "refit_seconds", "commit", "created"}


def _compared(column) -> bool:
    return column not in NOT_NUMBERS and not column.endswith("_version")


def _row(path) -> pd.Series:
    return pd.read_csv(io.StringIO(read_sealed(path))).iloc[0]


def _current_runs(dataset="engel"):
    """One stored boosting run per loss at the current numerics version (its split-00 file),
    each of another algorithm where there is one (proximal ones first)."""
    candidates = []
    for path in sorted(STORED.glob(f"*/*/{dataset}/*/*/*/*/split-00.csv")):
        row = _row(path)
        identity = json.loads(row["identity"])
        if identity["numerics_version"] == results.NUMERICS_VERSION and row["algo"] in (
            BOOSTING_ALGOS
        ):
            candidates.append((row["loss"], row["algo"], path))
    chosen, algos = {}, set()
    for fresh_algo_only in (True, False):
        for loss, algo, path in sorted(candidates, key=lambda c: ("prox" not in c[1], c)):
            if loss not in chosen and not (fresh_algo_only and algo in algos):
                chosen[loss] = path
                algos.add(algo)
    return sorted(chosen.values())


@pytest.mark.slow
@pytest.mark.skipif(not STORED.is_dir(), reason="no stored rows under results/paper")
def test_a_stored_split_is_recomputed_bit_for_bit(compose, data_mirror, tmp_path):
    runs = _current_runs()
    if not runs:
        pytest.skip("no engel row stored at the current numerics version yet")
    for stored_file in runs:
        stored = _row(stored_file)
        identity = json.loads(stored["identity"])
        command = results.run_command(identity, stored_file)
        results_dir = tmp_path / stored_file.parent.name
        overrides = [*shlex.split(command)[2:], f"results_dir={results_dir}"]
        run = plan_run(**run_arguments(compose(overrides, hydra_config=True)))
        assert json.loads(run.identity) == identity, command
        # the other splits are there already: only split 0 is computed
        run.where.mkdir(parents=True)
        for other in stored_file.parent.glob("split-*.csv"):
            if other.name != stored_file.name:
                shutil.copy(other, run.where / other.name)
        execute(run, n_jobs=1, progress=False)
        again = _row(run.where / stored_file.name)
        compared = [c for c in stored.index if _compared(c)]
        different = {
            c: (stored[c], again[c])
            for c in compared
            if not (stored[c] == again[c] or (pd.isna(stored[c]) and pd.isna(again[c])))
        }
        assert not different, f"{command}: {different}"
