"""A CSV file of one's own (dataset=csv; proxboost.experiments.datasets._csv): read as asked
(target, separator, dropped columns, positive class), checked before any fit with one clear line per
problem, identified by its sha256 and read options (never its path), stored under its stem; a
relative path is taken from the folder run.py is launched from.
"""

import json
import subprocess

import numpy as np
import pandas as pd
import pytest
from conftest import run_py_command, run_py_env

from proxboost.experiments.datasets import DatasetUnavailableError, dataset_identity, load_dataset
from proxboost.experiments.fits.pipeline import plan_run, run_protocol
from proxboost.experiments.store import results


def _frame(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=n)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df.insert(0, "id", np.arange(n))
    df["price"] = y
    df["label"] = np.where(y > 0.4, "yes", "no")
    return df


def _write(tmp_path, df, name="houses.csv", sep=","):
    path = tmp_path / name
    df.to_csv(path, index=False, sep=sep)
    return path


def _load(path, **options):
    options.setdefault("task", "regression")
    return load_dataset("csv", path=str(path), **options)


def test_the_file_is_read_as_asked(tmp_path):
    df = _frame()
    path = _write(tmp_path, df, sep=";")
    X, y, info = _load(path, target="price", sep=";", drop=["id", "label"])
    np.testing.assert_array_equal(X, df[["a", "b", "c"]].to_numpy())
    np.testing.assert_array_equal(y, df["price"].to_numpy())
    assert info.feature_names == ("a", "b", "c") and (info.n, info.d) == (60, 3)
    # the task is the loss's: classification codes the positive class +1, any other -1
    X, y, info = _load(
        path, target="label", sep=";", drop=["id", "price"], positive="yes", task="classification"
    )
    np.testing.assert_array_equal(y, np.where(df["label"] == "yes", 1.0, -1.0))
    assert X.shape == (60, 3)


def test_a_target_of_zeros_and_ones_needs_no_positive_class(tmp_path):
    df = _frame()
    df["flag"] = (df["price"] > 0.4).astype(int)
    path = _write(tmp_path, df)
    _, y, info = _load(path, target="flag", drop=["label", "price"], task="classification")
    np.testing.assert_array_equal(y, np.where(df["flag"] == 1, 1.0, -1.0))
    assert info.params["positive"] == 1


def test_the_identity_holds_the_files_bytes_and_read_options_never_its_path(tmp_path):
    df = _frame()
    one = _write(tmp_path, df)
    (tmp_path / "elsewhere").mkdir()
    two = _write(tmp_path / "elsewhere", df, name="renamed.csv")
    options = dict(target="price", drop=["id", "label"])
    identity = dataset_identity(_load(one, **options).info, seed=0)
    assert identity == dataset_identity(_load(two, **options).info, seed=0)  # same bytes
    text = json.dumps(identity)
    assert str(tmp_path) not in text and "houses" not in text
    assert identity["sha256"] == __import__("hashlib").sha256(one.read_bytes()).hexdigest()
    changed = df.copy()
    changed.loc[3, "a"] += 1e-9
    other_bytes = _write(tmp_path, changed, name="changed.csv")
    assert dataset_identity(_load(other_bytes, **options).info, 0) != identity
    # every read option is part of it
    for more in (
        dict(target="a", drop=["id", "label"]),
        dict(target="price", drop=["id", "label", "c"]),
    ):
        assert dataset_identity(_load(one, **more).info, 0) != identity
    semicolons = _write(tmp_path, df, name="semi.csv", sep=";")
    assert dataset_identity(_load(semicolons, sep=";", **options).info, 0)["params"]["sep"] == ";"
    yes = _load(one, target="label", drop=["id", "price"], positive="yes", task="classification")
    no = _load(one, target="label", drop=["id", "price"], positive="no", task="classification")
    assert dataset_identity(yes.info, 0) != dataset_identity(no.info, 0)
    np.testing.assert_array_equal(yes.y, -no.y)


@pytest.mark.parametrize(
    "edit, options, expected",
    [
        (None, dict(path="missing.csv", target="price"), "no such file"),
        (None, dict(target="cost"), "no column 'cost' to predict"),
        (None, dict(target="price", drop=["id"]), "column 'label' holds string values"),
        (None, dict(target="price", drop=["id", "label", "nope"]), "does not have: ['nope']"),
        ("nan", dict(target="price", drop=["id", "label"]), "column 'b' has 1 missing value"),
        ("nan-target", dict(target="price", drop=["id", "label"]), "is empty in data row(s) 5"),
        (
            None,
            dict(target="label", drop=["id", "price"], task="classification"),
            "give the class coded +1 with dataset.positive=<value>",
        ),
        (
            None,
            dict(target="label", drop=["id", "price"], task="classification", positive="maybe"),
            "dataset.positive='maybe' is not a value",
        ),
        (None, dict(target="label", drop=["id", "price"]), "target column 'label' is not numbers"),
        (None, dict(target=None), "needs the column to predict"),
    ],
)
def test_a_problem_with_the_file_is_one_line_naming_it_and_the_fix(
    tmp_path, edit, options, expected
):
    df = _frame()
    if edit == "nan":
        df.loc[7, "b"] = np.nan
    if edit == "nan-target":
        df.loc[4, "price"] = np.nan
    path = _write(tmp_path, df)
    options = {"path": str(path), **options}
    if options["path"] == "missing.csv":
        options["path"] = str(tmp_path / "missing.csv")
    with pytest.raises((ValueError, DatasetUnavailableError)) as err:
        _load(**options)
    message = str(err.value)
    assert expected in message and "\n" not in message, message
    if edit == "nan":
        assert "data rows 8" in message and "dataset.drop=[b]" in message
    if "holds" in expected:
        assert "dataset.drop=[label]" in message


def test_the_run_is_refused_before_any_fit_and_rows_name_the_file_by_its_stem(tmp_path):
    path = _write(tmp_path, _frame())
    common = dict(
        dataset="csv",
        loss="ls",
        algo="prox",
        grid={"max_depth": [2], "learning_rate": [0.5], "step": [1.0]},
        n_splits=2,
        max_estimators=5,
        results_dir=str(tmp_path / "res"),
    )
    with pytest.raises(ValueError, match="column 'label' holds string values"):
        plan_run(**common, dataset_params={"path": str(path), "target": "price", "drop": ["id"]})
    run = plan_run(
        **common, dataset_params={"path": str(path), "target": "price", "drop": ["id", "label"]}
    )
    assert run.base_row["dataset"] == "houses" and run.location[2] == "houses"
    assert json.loads(run.base_row["dataset_params"]) == {
        "drop": ["id", "label"],
        "sep": ",",
        "target": "price",
    }
    assert str(tmp_path) not in json.dumps(run.base_row)


@pytest.mark.slow
def test_run_py_on_a_csv_file_end_to_end(tmp_path):
    # the file sits in the folder run.py is launched from and is given by a relative path;
    # hydra.job.chdir=true moves the job into its output folder: the path must still be found
    df = _frame(n=80, seed=1)
    _write(tmp_path, df)
    args = [
        "dataset=csv",
        "dataset.path=houses.csv",
        "dataset.target=price",
        "dataset.drop=[id,label]",
        "loss=lad",
        "algo=prox",
        "grid=smoke",
        "protocol.n_splits=2",
        "protocol.max_estimators=15",
        "progress=false",
        "hydra.job.chdir=true",
        f"results_dir={tmp_path / 'res'}",
    ]
    out = subprocess.run(
        run_py_command(*args),
        cwd=tmp_path,
        env=run_py_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    stored = results.load(tmp_path / "res")
    assert len(stored) == 2 and set(stored["dataset"]) == {"houses"}
    assert all("/houses/lad/prox/" in str(p) for p in (tmp_path / "res").rglob("split-*.csv"))
    for _, row in stored.iterrows():  # no path anywhere in a row
        assert str(tmp_path) not in row.to_json()
    # the rows are those of the protocol on the same numbers, read independently of the loader
    run = plan_run(
        dataset="synthetic",  # any planned run of the same method and grid
        loss="lad",
        algo="prox",
        grid={"max_depth": [2], "learning_rate": [0.1, 0.5], "step": [1.0]},
        n_splits=2,
        max_estimators=15,
    )
    rows = run_protocol(
        df[["a", "b", "c"]].to_numpy(),
        df["price"].to_numpy(),
        run.method,
        run.grid_points,
        n_splits=2,
        max_estimators=15,
        progress=False,
    )
    np.testing.assert_array_equal(
        stored.sort_values("split")["test_loss"].to_numpy(dtype=float),
        [r["test_loss"] for r in rows],
    )
    # a problem found before any fit: one line, exit code 2, nothing stored
    bad = subprocess.run(
        run_py_command(*[a for a in args if not a.startswith("dataset.drop")], "protocol.seed=1"),
        cwd=tmp_path,
        env=run_py_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert bad.returncode == 2
    assert "holds string values" in bad.stdout + bad.stderr and "Traceback" not in bad.stderr
    assert len(results.load(tmp_path / "res")) == 2
