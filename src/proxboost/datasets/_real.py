"""Parsers of the original public files of the nine real datasets (SPEC §4.2).

Each reader takes the path of the public file and returns ``(X, y, feature_names)`` with
X float64 of shape (n, d), y float64 of shape (n,) (classification labels in {-1.0, +1.0}),
applying the preprocessing of the mirror's ``MANIFEST.md``. Rows keep the file's order.

Encodings:

- ``adult``: complete rows of ``adult.data`` (``?`` = missing); the attribute ``education``
  is dropped (a one-to-one relabelling of ``education-num``); the 7 categorical attributes
  (workclass, marital-status, occupation, relationship, race, sex, native-country) are
  **integer codes** 0..K-1 in lexicographic order of the category strings present in the
  complete rows (one column each, which keeps the paper's d = 13; trees split on codes);
  income ``>50K`` -> +1, ``<=50K`` -> -1.
- ``crabs``: the factors ``sp`` and ``sex`` and the within-group ``index`` are dropped (as in
  the manifest): X = FL, RW, CL, BD, y = CW; no categorical column remains.
- ``bostonhousing``: ``chas`` is already the 0/1 dummy in ``Boston.csv``.
- ``spam``: column 57, 1 (spam) -> +1, 0 -> -1.
- ``advertisements``: complete rows (``?`` = missing, possibly space-padded); the binary term
  columns are kept as 0/1; ``ad.`` -> +1, ``nonad.`` -> -1.
- The other sets are numeric as published.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "ADULT_CATEGORICAL",
    "ADULT_COLUMNS",
    "read_adult",
    "read_advertisements_table",
    "read_bostonhousing",
    "read_crabs",
    "read_engel",
    "read_sniffer",
    "read_spam",
    "read_wine",
]

Parsed = tuple[np.ndarray, np.ndarray, tuple[str, ...]]

ADULT_COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "income",
)
ADULT_CATEGORICAL = (
    "workclass", "marital-status", "occupation", "relationship", "race", "sex",
    "native-country",
)
BOSTON_FEATURES = (
    "crim", "zn", "indus", "chas", "nox", "rm", "age", "dis", "rad", "tax", "ptratio",
    "black", "lstat",
)


def _columns(df: pd.DataFrame, columns, path: Path) -> pd.DataFrame:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(
            f"{path}: expected columns {missing} are missing (found {list(df.columns)}); "
            "the file is not in the published format"
        )
    return df.loc[:, list(columns)]


def _numeric(df: pd.DataFrame, path: Path) -> np.ndarray:
    try:
        return df.to_numpy(dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: non-numeric feature values ({exc})") from exc


def _labels(values: pd.Series, positive: str, negative: str, path: Path) -> np.ndarray:
    """Map two label strings to +1 / -1, refusing anything else."""
    text = values.astype(str).str.strip()
    unknown = sorted(set(text.unique()) - {positive, negative})
    if unknown:
        raise ValueError(
            f"{path}: unexpected labels {unknown[:5]} (expected {positive!r} or {negative!r})"
        )
    return np.where(text.to_numpy() == positive, 1.0, -1.0)


def _regression(df: pd.DataFrame, features, target: str, path: Path) -> Parsed:
    X = _numeric(_columns(df, features, path), path)
    y = _numeric(_columns(df, [target], path), path)[:, 0]
    return X, y, tuple(features)


def read_wine(path: Path) -> Parsed:
    """``winequality-{white,red}.csv``: ';'-separated; y = quality, X = the 11 other columns."""
    df = pd.read_csv(path, sep=";")
    features = [c for c in df.columns if c != "quality"]
    return _regression(df, features, "quality", path)


def read_bostonhousing(path: Path) -> Parsed:
    """MASS ``Boston.csv`` (Rdatasets export, row names first): y = medv, 13 features."""
    return _regression(pd.read_csv(path, index_col=0), BOSTON_FEATURES, "medv", path)


def read_crabs(path: Path) -> Parsed:
    """MASS ``crabs.csv``: X = FL, RW, CL, BD; y = CW (sp, sex, index dropped)."""
    return _regression(pd.read_csv(path, index_col=0), ("FL", "RW", "CL", "BD"), "CW", path)


def read_engel(path: Path) -> Parsed:
    """quantreg ``engel.csv``: X = income; y = foodexp."""
    return _regression(pd.read_csv(path, index_col=0), ("income",), "foodexp", path)


def read_sniffer(path: Path) -> Parsed:
    """alr4 ``sniffer.rda`` (via ``rdata``): X = TankTemp, GasTemp, TankPres, GasPres; y = Y."""
    import rdata

    with warnings.catch_warnings():
        # R's data files carry no encoding flag for ASCII strings; rdata warns and assumes ASCII.
        warnings.filterwarnings("ignore", message="Unknown encoding", category=UserWarning)
        objects = rdata.read_rda(str(path))
    if "sniffer" not in objects:
        raise ValueError(f"{path}: no R object named 'sniffer' (found {sorted(objects)})")
    features = ("TankTemp", "GasTemp", "TankPres", "GasPres")
    return _regression(pd.DataFrame(objects["sniffer"]), features, "Y", path)


def read_adult(path: Path) -> Parsed:
    """UCI ``adult.data``: complete rows, ``education`` dropped, categoricals as integer codes."""
    text_columns = {c: str for c in (*ADULT_CATEGORICAL, "education", "income")}
    df = pd.read_csv(
        path, header=None, names=list(ADULT_COLUMNS), skipinitialspace=True,
        na_values="?", dtype=text_columns,
    )
    df = df.dropna().drop(columns="education")
    # adult.test writes the labels with a trailing '.'; adult.data does not.
    y = _labels(df.pop("income").str.rstrip("."), ">50K", "<=50K", path)
    for column in ADULT_CATEGORICAL:
        df[column] = pd.Categorical(df[column]).codes
    return _numeric(df, path), y, tuple(df.columns)


def read_spam(path: Path) -> Parsed:
    """UCI ``spambase.data``: 57 features, column 57 is 1 (spam, +1) or 0 (-1)."""
    df = pd.read_csv(path, header=None)
    if df.shape[1] != 58:
        raise ValueError(f"{path}: expected 58 columns, found {df.shape[1]}")
    y = _labels(df.pop(57).astype(int).astype(str), "1", "0", path)
    return _numeric(df, path), y, tuple(f"x{j}" for j in range(df.shape[1]))


def _clean_numeric(column: pd.Series, path: Path) -> pd.Series:
    """A text column of numbers and '?' (possibly space-padded) as floats with NaN."""
    text = column.astype(str).str.strip()
    text = text.mask(text.eq("?") | column.isna())
    try:
        return pd.to_numeric(text, errors="raise")
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: column {column.name}: non-numeric values ({exc})") from exc


def read_advertisements_table(path: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...], int]:
    """UCI ``ad.data``: complete rows; last column ``ad.`` (+1) / ``nonad.`` (-1).

    The size check (n, d) is done by the caller. Returns ``(X, y, feature_names, n_rows)``,
    ``n_rows`` being the number of rows before dropping incomplete ones.
    """
    df = pd.read_csv(path, header=None, skipinitialspace=True, na_values="?", low_memory=False)
    if df.shape[1] < 2:
        raise ValueError(f"{path}: expected comma-separated columns, found {df.shape[1]}")
    n_rows = len(df)
    features = df.columns[:-1]
    # text columns, e.g. a "?  " padded on the right (na_values only sees left-stripped cells)
    text = [c for c in features if not pd.api.types.is_numeric_dtype(df[c])]
    if text:
        df[text] = df[text].apply(_clean_numeric, path=path)
    df = df.dropna()
    y = _labels(df.pop(df.columns[-1]), "ad.", "nonad.", path)
    d = df.shape[1]
    names = ("height", "width", "aratio", "local", *(f"term{j}" for j in range(4, d)))
    return _numeric(df, path), y, names[:d], n_rows
