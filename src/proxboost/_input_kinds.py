"""Which feature columns the estimators accept: numbers and booleans, never codes in disguise.

A pandas ``category`` column would be treated as categorical by HistGradientBoosting but as the
numbers of its codes here; an object, string or date column has no meaningful order as numbers.
Rather than guess, the estimators refuse such a column in one line naming it and the fix (encode
it first), before any computation. Booleans are accepted as 0/1. Missing values (NaN, pandas'
``pd.NA`` in a nullable numeric column, None in an object array) are accepted: scikit-learn's
conversion makes them NaN, which every tree engine handles (``docs/engines.md``). pandas is
never imported: a data frame is recognised by its ``dtypes``.
"""

from __future__ import annotations

import numpy as np

ENCODE_HINT = (
    "encode it first, e.g. with sklearn.preprocessing.OrdinalEncoder or OneHotEncoder in a Pipeline"
)


def _kind(dtype) -> str | None:
    """The refused kind of a column's dtype ("category", "object", "string", "datetime",
    "timedelta"), or None for a numeric or boolean column."""
    name = str(getattr(dtype, "name", dtype))
    if name == "category":
        return "category"
    if name.startswith("string") or name == "str":
        return "string"
    if name.startswith("datetime64") or name.startswith("period"):
        return "datetime"
    kind = getattr(dtype, "kind", None)
    if kind in ("U", "S"):
        return "string"
    if kind == "M":
        return "datetime"
    if kind == "m":
        return "timedelta"
    if kind == "O":
        return "object"
    return None


def check_feature_kinds(X, what: str = "X") -> None:
    """Raise ``ValueError`` (one line) if ``X`` holds a column that is not numeric or boolean.

    ``X`` is a data frame (checked per column, named in the message) or anything array-like (its
    dtype checked as a whole; an object array is refused when it holds a string, and otherwise
    left to scikit-learn's conversion, which accepts numbers and booleans).
    """
    dtypes = getattr(X, "dtypes", None)
    if dtypes is not None and hasattr(dtypes, "items"):
        for column, dtype in dtypes.items():
            kind = _kind(dtype)
            if kind is not None:
                described = str(dtype) if str(dtype) == kind else f"{dtype} ({kind})"
                raise ValueError(
                    f"{what} column {column!r} has dtype {described}, not numbers: {ENCODE_HINT}"
                )
        return
    array = X if isinstance(X, np.ndarray) else None
    if array is None:
        return  # lists and other array-likes: scikit-learn's conversion says what is wrong
    kind = _kind(array.dtype)
    if kind == "object":
        text = _IS_TEXT(array).astype(bool) if array.size else np.zeros(0, bool)
        if text.any():
            where = tuple(int(i) for i in np.argwhere(text)[0])
            bad = array[where]
            column = f" in column {where[1]}" if len(where) == 2 else ""
            raise ValueError(
                f"{what} holds a non-numeric value {bad!r} (type {type(bad).__name__}){column}: "
                f"{ENCODE_HINT}"
            )
    elif kind is not None:
        described = str(array.dtype) if str(array.dtype) == kind else f"{array.dtype} ({kind})"
        raise ValueError(f"{what} has dtype {described}, not numbers: {ENCODE_HINT}")


#: Elementwise "is this object text" for object arrays.
_IS_TEXT = np.frompyfunc(lambda v: isinstance(v, (str, bytes)), 1, 1)
