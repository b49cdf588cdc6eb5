"""Parsers of the public data files: the ``read`` entry of ``registry.json`` -> (X, y, names).

Most files are tables described entirely by their registry entry (``format`` csv or rda,
separator, index column, target, feature columns, label strings); ``adult`` and
``advertisements`` need a few lines of code each (missing values, categorical codes). Rows keep
the file's order; X and y are float64, classification labels ±1.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd

Parsed = tuple[np.ndarray, np.ndarray, tuple[str, ...]]

ADULT_COLUMNS = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
)
ADULT_CATEGORICAL = (
    "workclass",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "native-country",
)


def _numeric(df: pd.DataFrame, path: Path) -> np.ndarray:
    try:
        return df.to_numpy(dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{path}: non-numeric values ({exc}); the file is not the published one"
        ) from exc


def _labels(values: pd.Series, labels: dict, path: Path) -> np.ndarray:
    """Map label strings to ±1 (``labels``: string -> ±1), refusing anything else."""
    text = values.astype(str).str.strip()
    unknown = sorted(set(text.unique()) - set(labels))
    if unknown:
        raise ValueError(f"{path}: unexpected labels {unknown[:5]} (expected {sorted(labels)})")
    return text.map(labels).to_numpy(dtype=np.float64)


def _table(path: Path, spec: dict) -> pd.DataFrame:
    if spec["format"] == "rda":
        import rdata

        with warnings.catch_warnings():  # R files carry no encoding flag for ASCII strings
            warnings.filterwarnings("ignore", message="Unknown encoding", category=UserWarning)
            objects = rdata.read_rda(str(path))
        if spec["object"] not in objects:
            raise ValueError(
                f"{path}: no R object named {spec['object']!r} (found {sorted(objects)})"
            )
        return pd.DataFrame(objects[spec["object"]])
    header = spec.get("header", "infer")
    return pd.read_csv(
        path, sep=spec.get("sep", ","), index_col=spec.get("index_col"), header=header
    )


def read_table(path: Path, spec: dict) -> Parsed:
    """A table: y = the ``target`` column (mapped by ``labels`` if given), X = ``features``
    (default: every other column; header-less columns are named x0, x1, ...)."""
    df = _table(path, spec)
    target = spec["target"]
    features = spec.get("features") or [c for c in df.columns if c != target]
    missing = [c for c in (*features, target) if c not in df.columns]
    if missing:
        raise ValueError(
            f"{path}: expected columns {missing} are missing (found {list(df.columns)[:20]})"
        )
    X = _numeric(df.loc[:, list(features)], path)
    y = (
        _labels(df[target], spec["labels"], path)
        if "labels" in spec
        else _numeric(df[[target]], path)[:, 0]
    )
    names = tuple(f"x{c}" if isinstance(c, (int, np.integer)) else str(c) for c in features)
    return X, y, names


def read_adult(path: Path, spec: dict) -> Parsed:
    """UCI ``adult.data``: complete rows, ``education`` dropped, categoricals as integer codes."""
    text_columns = {c: str for c in (*ADULT_CATEGORICAL, "education", "income")}
    df = pd.read_csv(
        path,
        header=None,
        names=list(ADULT_COLUMNS),
        skipinitialspace=True,
        na_values="?",
        dtype=text_columns,
    )
    df = df.dropna().drop(columns="education")
    y = _labels(df.pop("income").str.rstrip("."), {">50K": 1.0, "<=50K": -1.0}, path)
    for column in ADULT_CATEGORICAL:  # codes in lexicographic order of the categories present
        df[column] = pd.Categorical(df[column]).codes
    return _numeric(df, path), y, tuple(df.columns)


def _clean_numeric(column: pd.Series, path: Path) -> pd.Series:
    """A text column of numbers and '?' (possibly space-padded) as floats with NaN."""
    text = column.astype(str).str.strip()
    text = text.mask(text.eq("?") | column.isna())
    try:
        return pd.to_numeric(text, errors="raise")
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: column {column.name}: non-numeric values ({exc})") from exc


def read_advertisements(path: Path, spec: dict) -> Parsed:
    """UCI ``ad.data``: complete rows ('?' = missing, possibly padded); ``ad.`` -> +1."""
    df = pd.read_csv(path, header=None, skipinitialspace=True, na_values="?", low_memory=False)
    if df.shape[1] < 2:
        raise ValueError(f"{path}: expected comma-separated columns, found {df.shape[1]}")
    features = df.columns[:-1]
    # text columns, e.g. a "?  " padded on the right (na_values only sees left-stripped cells)
    text = [c for c in features if not pd.api.types.is_numeric_dtype(df[c])]
    if text:
        df[text] = df[text].apply(_clean_numeric, path=path)
    df = df.dropna()
    y = _labels(df.pop(df.columns[-1]), {"ad.": 1.0, "nonad.": -1.0}, path)
    d = df.shape[1]
    names = ("height", "width", "aratio", "local", *(f"term{j}" for j in range(4, d)))
    return _numeric(df, path), y, names[:d]


READERS = {
    "csv": read_table,
    "rda": read_table,
    "adult": read_adult,
    "advertisements": read_advertisements,
}
