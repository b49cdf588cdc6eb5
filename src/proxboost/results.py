"""The results store: identity of a computation, atomic row files with provenance, ``load()``.

Identity
--------
Every stored artifact (a real-world row, a synthetic curve) is keyed by its **identity**: a
dict of everything that determines its numbers, with every default written out — the data
(generator parameters and seed, or the sha256 of the data file), the loss and its parameters,
the algorithm, tree engine, tie rule and every other estimator option, the grid values
searched, the protocol values, the versions of the libraries the method depends on, and
:data:`NUMERICS_VERSION`. What does not change the numbers is left out (number of workers,
progress bars, folders, the launcher). :func:`canonical_json` spells an identity one way only
(sorted keys, floats by ``repr``, no whitespace); its sha256 (:func:`identity_hash`) names
the folder, so a run with any other setting never reads these rows. The row stores the
identity in full (column ``identity``), and a stored row is reused only when its identity
equals the one asked for.

Layout (every file is a one-row CSV with a header, so pandas reads each one natively)::

    <results_dir>/<protocol>/<dataset>/<loss>/<algo>/<engine>/<hash>/split-XX.csv

The folders before ``<hash>`` are for people (see :func:`proxboost.protocol.protocol_name`);
``<hash>`` is the first 12 hex digits of :func:`identity_hash`. Baselines, which use no
proxboost tree engine, are stored under ``engine=none``.

Guarantees
----------
- **Atomic**: a row is written to a temporary file in the same directory and moved into place
  with :func:`os.replace`, so a reader (or a killed run) never sees a half-written row.
- **Idempotent keys**: a rerun asks :func:`stored_splits` which rows of the same identity
  exist and computes only the others, so a sweep killed halfway and rerun ends with every
  row exactly once.
- **Provenance**: every row carries the code version (``commit``, ``git rev-parse HEAD`` plus
  ``-dirty`` when tracked files differ from it, ``unknown`` outside git), the library
  versions and a UTC timestamp (:func:`provenance`), and no path of the machine that made it.

:func:`load` gathers every stored row under a results directory into one tidy DataFrame.
:func:`provenance` and :func:`atomic_write_csv` are public so that the synthetic curves
(:mod:`proxboost.curves`) give the same guarantees.
"""

from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import io
import json
import math
import os
import platform
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd

from ._io import atomic_path
from ._vocabulary import library_version

__all__ = [
    "HASH_LENGTH",
    "KEY_COLUMNS",
    "NUMERICS_VERSION",
    "ROW_COLUMNS",
    "atomic_write_csv",
    "canonical",
    "canonical_json",
    "identity_hash",
    "load",
    "provenance",
    "row_path",
    "run_dir",
    "stored_identity",
    "stored_splits",
    "write_row",
]

#: Version of the numbers this code computes. Raise it by one with any change that alters a
#: computed number (a loss, line search, tree engine, protocol rule, ...): stored rows and
#: curves of an older version are then never reused. ``tests/test_results.py`` pins it next
#: to a few reference values, so a change that moves them fails until it is raised.
#: Version 0 marks artifacts made before identities existed (migrated, never reused).
NUMERICS_VERSION = 2  # 2: the exact engine decides some tied splits otherwise (docs/engines.md)

#: Hex digits of the identity hash in folder and file names.
HASH_LENGTH = 12

#: Columns that name a row for people (its readable path, then the split); the identity
#: (``identity``, ``identity_hash``) is what tells two computations apart.
KEY_COLUMNS = ("protocol", "dataset", "loss", "algo", "engine", "split")

#: Column order of a stored row (any extra column is appended after these).
ROW_COLUMNS = (
    *KEY_COLUMNS,
    "task",
    "test_loss",
    "test_error",
    "val_loss",
    "val_metric",
    "n_estimators",
    "max_depth",
    "learning_rate",
    "step",
    "max_features",
    "tau",
    "beta",
    "newton_steps",
    "params",
    "grid",
    "grid_index",
    "n_grid",
    "max_estimators",
    "n_splits",
    "train_fraction",
    "validation_fraction",
    "test_fraction",
    "seed",
    "random_state",
    "n_train",
    "n_validation",
    "n_test",
    "fit_seconds",
    "refit_seconds",
    "dataset_params",
    "tie_rule",
    "identity_hash",
    "identity",
    "commit",
    "created",
    "python_version",
    "numpy_version",
    "scikit_learn_version",
    "xgboost_version",
    "lightgbm_version",
    "pandas_version",
    "proxboost_version",
)

ROW_FILE_GLOB = "split-*.csv"
DEFAULT_RESULTS_DIR = "results"


# -- identity --------------------------------------------------------------------------------------
def canonical(value):
    """``value`` as plain JSON types, one spelling per value: dict keys as strings, tuples as
    lists, NumPy scalars as Python numbers, integral floats kept as floats (``1.0`` is not
    ``1``). NaN and infinities are refused: an identity never holds them."""
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value):
            raise ValueError(f"an identity cannot hold the non-finite number {value!r}")
        return float(value)
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"an identity holds JSON values only, got {type(value).__name__} {value!r}")


def canonical_json(identity: dict) -> str:
    """The one spelling of an identity: sorted keys, no whitespace, floats by ``repr``
    (the shortest string that reads back to the same double)."""
    return json.dumps(canonical(identity), sort_keys=True, separators=(",", ":"), allow_nan=False)


def identity_hash(identity) -> str:
    """sha256 (hex) of :func:`canonical_json` (``identity`` may already be that string)."""
    text = identity if isinstance(identity, str) else canonical_json(identity)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- provenance ------------------------------------------------------------------------------------
def _package_root() -> Path:
    """The directory holding this source tree (the repository root for an editable install)."""
    return Path(__file__).resolve().parents[2]


_OUTPUT_DIRS = ("results", "figures")


@functools.cache
def git_commit(repo: str | None = None) -> str:
    """``git rev-parse HEAD`` of the proxboost checkout, ``+ "-dirty"`` if tracked files changed.

    Any change counts (modified, staged or untracked files) except under the output folders
    ``results/`` and ``figures/`` (results being written do not make the code dirty). Returns
    ``"unknown"`` outside a git checkout, without commits, or without ``git``.
    """
    cwd = repo or str(_package_root())
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=10
        )
        if head.returncode != 0:
            return "unknown"
        status = subprocess.run(
            ["git", "status", "--porcelain", "--", ".", *(f":(exclude){d}" for d in _OUTPUT_DIRS)],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    commit = head.stdout.strip()
    if status.returncode != 0 or status.stdout.strip():
        commit += "-dirty"
    return commit


@functools.cache
def library_versions() -> dict:
    """Versions of Python and of the libraries that shape the numbers."""
    return {
        "python_version": platform.python_version(),
        "numpy_version": library_version("numpy"),
        "scikit_learn_version": library_version("sklearn"),
        "xgboost_version": library_version("xgboost"),
        "lightgbm_version": library_version("lightgbm"),
        "pandas_version": library_version("pandas"),
        "proxboost_version": library_version("proxboost"),
    }


def provenance() -> dict:
    """Code version, library versions and a UTC timestamp, to store with every result.

    Keys: ``commit``, ``created`` (ISO 8601, UTC, seconds), ``python_version``,
    ``numpy_version``, ``scikit_learn_version``, ``xgboost_version``, ``lightgbm_version``,
    ``pandas_version``, ``proxboost_version``. The git call and the imports are done once per
    process.
    """
    created = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    return {"commit": git_commit(), "created": created, **library_versions()}


# -- writing ---------------------------------------------------------------------------------------
def atomic_write_csv(df: pd.DataFrame, path, **to_csv_kwargs) -> Path:
    """Write ``df`` to ``path`` as CSV atomically (temporary file in the same directory, then
    :func:`os.replace`). Parent directories are created. ``index=False`` unless given.
    """
    path = Path(path)
    to_csv_kwargs.setdefault("index", False)
    with atomic_path(path) as tmp:
        with open(tmp, "w", newline="") as fh:
            df.to_csv(fh, **to_csv_kwargs)
            fh.flush()
            os.fsync(fh.fileno())
    return path


def run_dir(
    results_dir, protocol: str, dataset: str, loss: str, algo: str, engine: str, identity
) -> Path:
    """Directory holding the rows of one run: its readable path, then its identity's short hash."""
    short = identity_hash(identity)[:HASH_LENGTH]
    return Path(results_dir).joinpath(*protocol.split("/"), dataset, loss, algo, engine, short)


def row_path(results_dir, protocol, dataset, loss, algo, engine, identity, split) -> Path:
    """Path of one row: ``<run_dir>/split-XX.csv``."""
    return (
        run_dir(results_dir, protocol, dataset, loss, algo, engine, identity)
        / f"split-{int(split):02d}.csv"
    )


def write_row(results_dir, row: dict) -> Path:
    """Store one result row atomically at its path and return the path.

    ``row`` must hold the :data:`KEY_COLUMNS` and ``identity`` (a dict or its canonical JSON);
    the identity is stored in full with its hash. Columns are ordered as :data:`ROW_COLUMNS`,
    any other key is appended.
    """
    missing = [k for k in (*KEY_COLUMNS, "identity") if k not in row]
    if missing:
        raise ValueError(f"a result row needs the key columns {missing}")
    text = row["identity"] if isinstance(row["identity"], str) else canonical_json(row["identity"])
    row = {**row, "identity": text, "identity_hash": identity_hash(text)}
    columns = [c for c in ROW_COLUMNS if c in row] + [c for c in row if c not in ROW_COLUMNS]
    df = pd.DataFrame([[row[c] for c in columns]], columns=columns)
    path = row_path(results_dir, *(row[k] for k in KEY_COLUMNS[:-1]), text, row["split"])
    return atomic_write_csv(df, path)


def stored_splits(results_dir, protocol, dataset, loss, algo, engine, identity) -> set[int]:
    """Split indices whose row is stored for this run **with this identity**.

    A file in the run's folder whose stored identity differs (a hash collision, an edited
    file) does not count: it is recomputed and overwritten.
    """
    text = identity if isinstance(identity, str) else canonical_json(identity)
    directory = run_dir(results_dir, protocol, dataset, loss, algo, engine, text)
    if not directory.is_dir():
        return set()
    splits = set()
    for p in directory.glob(ROW_FILE_GLOB):
        stem = p.stem[len("split-") :]
        if stem.isdigit() and stored_identity(p) == text:
            splits.add(int(stem))
    return splits


def stored_identity(path) -> str | None:
    """The ``identity`` column of a stored row file (``None`` if it has none)."""
    try:
        df = pd.read_csv(path, usecols=lambda c: c == "identity", dtype=str)
    except (OSError, ValueError, pd.errors.ParserError):
        return None
    return str(df["identity"].iloc[0]) if "identity" in df.columns and len(df) else None


# -- reading ---------------------------------------------------------------------------------------
def load(path=None) -> pd.DataFrame:
    """All result rows stored under ``path`` (default ``results/``) as one tidy DataFrame.

    One row per stored (identity, split), sorted by the readable keys, the identity hash and
    the split; columns as :data:`ROW_COLUMNS`. Only row files (``split-XX.csv``) are read, so other
    files under the
    directory (curves of the synthetic experiments, temporary files) are ignored. Returns an
    empty DataFrame with the row columns when nothing is stored.
    """
    root = Path(DEFAULT_RESULTS_DIR if path is None else path)
    files = sorted(root.rglob(ROW_FILE_GLOB)) if root.is_dir() else []
    if not files:
        return pd.DataFrame(columns=list(ROW_COLUMNS))
    # Files sharing a header are parsed in one read_csv call (fast for thousands of rows).
    groups: dict[str, list[str]] = {}
    for f in files:
        text = f.read_text()
        header, _, body = text.partition("\n")
        if body and not body.endswith("\n"):
            body += "\n"
        groups.setdefault(header, []).append(body)
    frames = [
        pd.read_csv(io.StringIO(header + "\n" + "".join(bodies)), dtype={"max_features": str})
        for header, bodies in groups.items()
    ]
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    columns = [c for c in ROW_COLUMNS if c in df.columns] + [
        c for c in df.columns if c not in ROW_COLUMNS
    ]
    df = df[columns]
    for c in ("protocol", "dataset", "loss", "algo", "engine", "commit", "identity_hash"):
        if c in df.columns:
            df[c] = df[c].astype(str)
    order = [
        *KEY_COLUMNS[:-1],
        *(["identity_hash"] if "identity_hash" in df.columns else []),
        "split",
    ]
    return df.sort_values(order, kind="stable").reset_index(drop=True)
