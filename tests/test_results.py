"""Results store: atomic writes, one row per key, load, skip of stored rows, provenance."""

import math
import os

import pandas as pd
import pytest

from proxboost import results


def _row(split, algo="prox", **extra):
    row = dict(protocol="smoke/2splits/T20", dataset="engel", loss="lad", algo=algo, engine="exact",
               split=split, task="regression", test_loss=0.5 + split, test_error=math.nan, val_loss=0.4,
               n_estimators=7, max_depth=3, learning_rate=0.1, step=1.0, max_features=math.nan,
               tau=math.nan, beta=math.nan, config='{"a": [1, 2], "b": "x,y"}')
    row.update(extra)
    return {**row, **results.provenance()}


def test_atomic_write_csv(tmp_path):
    df = pd.DataFrame({"a": [1, 2], "b": ["x", "y,z"]})
    path = results.atomic_write_csv(df, tmp_path / "deep" / "dir" / "f.csv")
    assert pd.read_csv(path).equals(df)
    assert [p.name for p in path.parent.iterdir()] == ["f.csv"]  # no temporary file left

    class Boom(pd.DataFrame):
        def to_csv(self, *args, **kwargs):
            args[0].write("half a ro")
            raise RuntimeError("killed while writing")

    with pytest.raises(RuntimeError):
        results.atomic_write_csv(Boom({"a": [3]}), path)
    assert pd.read_csv(path).equals(df)  # the old content is intact
    assert [p.name for p in path.parent.iterdir()] == ["f.csv"]


def test_write_load_and_skip(tmp_path):
    assert results.load(tmp_path).empty
    assert list(results.load(tmp_path / "missing").columns) == list(results.ROW_COLUMNS)
    for k in (1, 0):
        results.write_row(tmp_path, _row(k))
    results.write_row(tmp_path, _row(0, algo="gradient", extra_column="kept"))
    # a stray temporary file and another CSV (e.g. curves) are ignored by load
    d = results.run_dir(tmp_path, "smoke/2splits/T20", "engel", "lad", "prox", "exact")
    (d / ".split-05.csv.abc.tmp").write_text("protocol,dataset\nhalf")
    (tmp_path / "curves.csv").write_text("x,y\n1,2\n")
    assert d == tmp_path / "smoke" / "2splits" / "T20" / "engel" / "lad" / "prox" / "exact"
    assert sorted(p.name for p in d.glob("*.csv")) == ["split-00.csv", "split-01.csv"]
    assert results.stored_splits(tmp_path, "smoke/2splits/T20", "engel", "lad", "prox", "exact") == {0, 1}
    assert results.stored_splits(tmp_path, "smoke/2splits/T20", "engel", "lad", "xgboost", "none") == set()

    df = results.load(tmp_path)
    assert len(df) == 3
    assert list(df[["algo", "split"]].itertuples(index=False, name=None)) == [("gradient", 0), ("prox", 0), ("prox", 1)]
    assert list(df.columns[:6]) == list(results.KEY_COLUMNS)
    assert df.loc[2, "test_loss"] == 1.5 and math.isnan(df.loc[2, "test_error"])
    assert df.loc[0, "extra_column"] == "kept" and pd.isna(df.loc[1, "extra_column"])
    assert df.loc[1, "config"] == '{"a": [1, 2], "b": "x,y"}'
    for col in ("commit", "python_version", "numpy_version", "scikit_learn_version", "xgboost_version",
                "proxboost_version", "created"):
        assert isinstance(df.loc[0, col], str) and df.loc[0, col]

    # rewriting a key replaces its row: still one row per key
    results.write_row(tmp_path, _row(1, test_loss=9.0))
    df = results.load(tmp_path)
    assert len(df) == 3 and df.loc[2, "test_loss"] == 9.0
    with pytest.raises(ValueError, match="key columns"):
        results.write_row(tmp_path, {"dataset": "engel"})


def test_provenance(tmp_path):
    p = results.provenance()
    assert set(p) >= {"commit", "created", "python_version", "numpy_version", "scikit_learn_version",
                      "xgboost_version", "pandas_version", "proxboost_version"}
    import xgboost

    assert p["xgboost_version"] == xgboost.__version__
    assert results.git_commit(str(tmp_path)) == "unknown"  # not a git checkout
    c = results.git_commit()
    assert c == "unknown" or len(c.removesuffix("-dirty")) == 40


def test_load_default_path_is_results_in_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    results.write_row("results", _row(0))
    assert len(results.load()) == 1
    assert os.path.isfile(results.row_path("results", "smoke/2splits/T20", "engel", "lad", "prox", "exact", 0))
