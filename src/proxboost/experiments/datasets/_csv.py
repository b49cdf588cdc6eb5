"""A user's own CSV file as a dataset: ``run.py dataset=csv dataset.path=<file>
dataset.target=<column>`` (docs/data.md).

The file is read with pandas and checked before any fit, each problem in one line naming the
file, the column and the fix: a missing file or target column, a column that is not numbers
(refused as :mod:`proxboost._input_kinds` refuses it for the estimators), missing values (the
experiments take complete data only; the estimators themselves take NaN), a classification
target that is not two classes.

Read options: ``target`` (the column to predict), ``sep`` (the separator, default ``,``),
``drop`` (columns left out: ids, leaks), ``positive`` (classification: the target value coded
+1, every other value −1; optional when the values are already ±1 or 0/1). The task is the
loss's. The identity of its rows holds the file's sha256 and every read option, never the
path (:func:`identity`); the rows go under the file's stem (:func:`row_columns`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd

from proxboost._input_kinds import _kind
from proxboost.experiments.datasets._files import DatasetUnavailableError
from proxboost.experiments.datasets._registry import CSV_INFO as INFO
from proxboost.experiments.datasets._registry import DatasetInfo

NAME = INFO.name

READ_OPTIONS = ("path", "target", "sep", "drop", "positive")


def _fix(option: str) -> str:
    return f"set it with dataset.{option}=<...> (docs/data.md)"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _table(path, sep) -> tuple[Path, pd.DataFrame]:
    if not path:
        raise ValueError(f"dataset=csv needs the file: {_fix('path')}")
    path = Path(path)
    if not path.is_file():
        raise DatasetUnavailableError(
            f"{path}: no such file; give your CSV file with dataset.path=<file> (a relative path"
            " is taken from the folder run.py is launched from)"
        )
    try:
        return path, pd.read_csv(path, sep=sep)
    except OSError as exc:  # not a full disk: this file is only read
        raise ValueError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(
            f"{path}: not a CSV table with separator {sep!r} ({first}); give the separator with"
            " dataset.sep=<character>"
        ) from None


def _features(path: Path, df: pd.DataFrame, target: str, drop) -> pd.DataFrame:
    unknown = [c for c in drop if c not in df.columns]
    if unknown:
        raise ValueError(
            f"{path}: dataset.drop names columns the file does not have: {unknown} (its columns:"
            f" {list(df.columns)[:20]})"
        )
    X = df.drop(columns=[target, *drop])
    if X.shape[1] == 0:
        raise ValueError(f"{path}: no feature column left besides the target {target!r}")
    for column, dtype in X.dtypes.items():
        kind = _kind(dtype)
        if kind is not None:
            example = X[column].dropna()
            example = f", e.g. {example.iloc[0]!r}" if len(example) else ""
            raise ValueError(
                f"{path}: column {column!r} holds {kind} values{example}, not numbers: encode it"
                f" as numbers in the file, or leave it out with dataset.drop=[{column}]"
            )
    missing = X.isna().sum()
    if missing.any():
        column = missing.index[missing.to_numpy().nonzero()[0][0]]
        rows = np.flatnonzero(X[column].isna().to_numpy())
        raise ValueError(
            f"{path}: column {column!r} has {int(missing[column])} missing value(s) (data rows"
            f" {', '.join(map(str, rows[:5] + 1))}{', ...' if len(rows) > 5 else ''}); the"
            f" experiments take complete data only: fill or remove them in the file, or leave the"
            f" column out with dataset.drop=[{column}]"
        )
    return X


def _target(path: Path, column: pd.Series, task: str, positive):
    """y (float64; ±1 for classification) and the positive class used (None for regression)."""
    name = column.name
    if column.isna().any():
        rows = np.flatnonzero(column.isna().to_numpy()) + 1
        shown = ", ".join(map(str, rows[:5])) + (", ..." if len(rows) > 5 else "")
        raise ValueError(
            f"{path}: target column {name!r} is empty in data row(s) {shown}: remove those rows"
            " from the file"
        )
    if task == "regression":
        if _kind(column.dtype) is not None or column.dtype == bool:
            raise ValueError(
                f"{path}: target column {name!r} is not numbers ({column.dtype}); a regression"
                " loss needs a numeric target (or choose a classification loss)"
            )
        return column.to_numpy(dtype=np.float64), None
    values = sorted(column.unique(), key=str)
    if positive is None:
        as_numbers = pd.to_numeric(pd.Series(values), errors="coerce")
        numeric = set(as_numbers.tolist()) if as_numbers.notna().all() else None
        if numeric is not None and numeric <= {-1.0, 1.0} or numeric == {0.0, 1.0}:
            positive = 1
        else:
            raise ValueError(
                f"{path}: target column {name!r} has the values {values[:10]}: give the class"
                " coded +1 with dataset.positive=<value> (every other value is -1)"
            )
    match = column.astype(str) == str(positive)
    if column.dtype != object:  # numbers: 1 and 1.0 are the same class
        try:
            match = column.astype(float) == float(positive)
        except (TypeError, ValueError):
            pass
    if not match.any():
        raise ValueError(
            f"{path}: dataset.positive={positive!r} is not a value of the target column"
            f" {name!r} (its values: {values[:10]})"
        )
    if match.all():
        raise ValueError(
            f"{path}: every row of the target column {name!r} is the class {positive!r}: a"
            " classification needs two classes"
        )
    return np.where(match.to_numpy(), 1.0, -1.0), positive


def load(path=None, target=None, sep=",", drop=(), positive=None, task=None):
    """``(X, y, info)`` of a CSV file (the module docstring says what is checked)."""
    if task not in ("regression", "classification"):
        raise ValueError(f"dataset=csv takes its task from the loss, got task={task!r}")
    if target is None or target == "":
        raise ValueError(f"dataset=csv needs the column to predict: {_fix('target')}")
    drop = sorted({str(c) for c in (drop or ())})
    path, df = _table(path, sep)
    if target not in df.columns:
        raise ValueError(
            f"{path}: no column {target!r} to predict (its columns: {list(df.columns)[:20]});"
            f" {_fix('target')}"
        )
    if target in drop:
        raise ValueError(f"{path}: the target {target!r} is also in dataset.drop")
    X = _features(path, df, target, drop)
    y, positive = _target(path, df[target], task, positive)
    options = {"target": str(target), "sep": sep, "drop": drop, "task": task}
    if task == "classification":
        options["positive"] = positive
    info = DatasetInfo(
        name=NAME,
        task=task,
        n=X.shape[0],
        d=X.shape[1],
        source=INFO.source,
        licence=INFO.licence,
        description=INFO.description,
        synthetic=False,
        files=(path.name,),
        sha256=_sha256(path),
        paths=(str(path),),
        origin="file",
        params=options,
        feature_names=tuple(str(c) for c in X.columns),
    )
    return X.to_numpy(dtype=np.float64), y, info


def identity(info) -> dict:
    """What determines the rows of a CSV file: its sha256 and every read option (no path, no
    file name: a renamed or moved file keeps its rows' identity)."""
    return {"name": NAME, "params": dict(info.params), "sha256": info.sha256}


def row_columns(info) -> dict:
    """The row columns that name a CSV file's rows: ``dataset`` is the file's stem (its rows'
    folder), ``dataset_params`` its read options (never its path)."""
    return {
        "dataset": Path(info.paths[0]).stem,
        "dataset_params": json.dumps(
            {k: v for k, v in info.params.items() if k != "task"}, sort_keys=True
        ),
    }


def absolute(params: dict, resolve) -> dict:
    """``params`` with the path made absolute by ``resolve`` (Hydra's ``to_absolute_path``: the
    folder ``run.py`` was launched from) and ``drop`` as a tuple."""
    params = dict(params)
    if params.get("path"):
        params["path"] = resolve(str(params["path"]))
    if params.get("drop") is not None:
        drop = params["drop"]
        params["drop"] = tuple([drop] if isinstance(drop, str) else drop)
    return params
