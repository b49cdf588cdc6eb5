"""The results store: one row per (protocol, dataset, loss, algo, engine, split), with provenance.

Layout (every file is a one-row CSV with a header, so pandas reads each one natively)::

    <results_dir>/<protocol>/<dataset>/<loss>/<algo>/<engine>/split-XX.csv

``protocol`` names the grid and the protocol values (e.g. ``paper/20splits/T1000``; see
:func:`proxboost.protocol.protocol_name`), so it spans several directory levels. ``engine`` is
the proxboost tree engine (``exact`` | ``hist``); the baselines do not use one and are stored
under ``engine=none`` (shared by both engines, never recomputed when the engine changes).

Guarantees
----------
- **Atomic**: a row is written to a temporary file in the same directory and moved into place
  with :func:`os.replace`, so a reader (or a killed run) never sees a half-written row.
- **Idempotent keys**: the path is the key. A rerun asks :func:`stored_splits` which rows exist
  and computes only the others, so a sweep killed halfway and rerun ends with every row
  exactly once.
- **Provenance**: every row carries the code version (``commit``, ``git rev-parse HEAD`` plus
  ``-dirty`` when tracked files differ from it, ``unknown`` outside git), the library
  versions and a UTC timestamp (:func:`provenance`); the pipeline adds the full run
  configuration as a JSON string (column ``config``).

:func:`load` gathers every stored row under a results directory into one tidy DataFrame.
:func:`provenance` and :func:`atomic_write_csv` are public so that other writers (the
synthetic
experiments' curves) give the same guarantees.
"""

from __future__ import annotations

import datetime as _dt
import functools
import io
import os
import platform
import subprocess
from pathlib import Path

import pandas as pd

from ._io import atomic_path

__all__ = [
    "KEY_COLUMNS",
    "ROW_COLUMNS",
    "atomic_write_csv",
    "load",
    "provenance",
    "row_path",
    "run_dir",
    "stored_splits",
    "write_row",
]

#: Columns that identify a row (its path in the store).
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
    "commit",
    "created",
    "python_version",
    "numpy_version",
    "scikit_learn_version",
    "xgboost_version",
    "lightgbm_version",
    "pandas_version",
    "proxboost_version",
    "config",
)

ROW_FILE_GLOB = "split-*.csv"
DEFAULT_RESULTS_DIR = "results"


# -- provenance ------------------------------------------------------------------------------------
def _package_root() -> Path:
    """The directory holding this source tree (the repository root for an editable install)."""
    return Path(__file__).resolve().parents[2]


_OUTPUT_DIRS = ("results", "figures")


@functools.lru_cache(maxsize=None)
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
            cwd=cwd, capture_output=True, text=True, timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    commit = head.stdout.strip()
    if status.returncode != 0 or status.stdout.strip():
        commit += "-dirty"
    return commit


def _version(module: str) -> str:
    try:
        mod = __import__(module)
    except ImportError:
        return "not installed"
    return str(getattr(mod, "__version__", "unknown"))


@functools.lru_cache(maxsize=None)
def library_versions() -> dict:
    """Versions of Python and of the libraries that shape the numbers."""
    return {
        "python_version": platform.python_version(),
        "numpy_version": _version("numpy"),
        "scikit_learn_version": _version("sklearn"),
        "xgboost_version": _version("xgboost"),
        "lightgbm_version": _version("lightgbm"),
        "pandas_version": _version("pandas"),
        "proxboost_version": _version("proxboost"),
    }


def provenance() -> dict:
    """Code version, library versions and a UTC timestamp, to store with every result.

    Keys: ``commit``, ``created`` (ISO 8601, UTC, seconds), ``python_version``,
    ``numpy_version``, ``scikit_learn_version``, ``xgboost_version``, ``lightgbm_version``,
    ``pandas_version``, ``proxboost_version``. The git call and the imports are done once per process.
    """
    created = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    return {"commit": git_commit(), "created": created, **library_versions()}


# -- writing ----------------------------------------------------------------------------------------
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


def run_dir(results_dir, protocol: str, dataset: str, loss: str, algo: str, engine: str) -> Path:
    """Directory holding the rows of one run (one (dataset, loss, algo, engine) under a protocol)."""
    return Path(results_dir).joinpath(*protocol.split("/"), dataset, loss, algo, engine)


def row_path(results_dir, protocol, dataset, loss, algo, engine, split) -> Path:
    """Path of one row: ``<run_dir>/split-XX.csv``."""
    return run_dir(results_dir, protocol, dataset, loss, algo, engine) / f"split-{int(split):02d}.csv"


def write_row(results_dir, row: dict) -> Path:
    """Store one result row atomically at its key path and return the path.

    ``row`` must hold the :data:`KEY_COLUMNS`; columns are ordered as :data:`ROW_COLUMNS`, any
    other key is appended.
    """
    missing = [k for k in KEY_COLUMNS if k not in row]
    if missing:
        raise ValueError(f"a result row needs the key columns {missing}")
    columns = [c for c in ROW_COLUMNS if c in row] + [c for c in row if c not in ROW_COLUMNS]
    df = pd.DataFrame([[row[c] for c in columns]], columns=columns)
    path = row_path(results_dir, *(row[k] for k in KEY_COLUMNS))
    return atomic_write_csv(df, path)


def stored_splits(results_dir, protocol, dataset, loss, algo, engine) -> set[int]:
    """Split indices whose row is already stored for this run."""
    directory = run_dir(results_dir, protocol, dataset, loss, algo, engine)
    if not directory.is_dir():
        return set()
    splits = set()
    for p in directory.glob(ROW_FILE_GLOB):
        stem = p.stem[len("split-"):]
        if stem.isdigit():
            splits.add(int(stem))
    return splits


# -- reading ----------------------------------------------------------------------------------------
def load(path=None) -> pd.DataFrame:
    """All result rows stored under ``path`` (default ``results/``) as one tidy DataFrame.

    One row per (protocol, dataset, loss, algo, engine, split), sorted by these keys; columns as
    :data:`ROW_COLUMNS`. Only row files (``split-XX.csv``) are read, so other files under the
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
    columns = [c for c in ROW_COLUMNS if c in df.columns] + [c for c in df.columns if c not in ROW_COLUMNS]
    df = df[columns]
    for c in ("protocol", "dataset", "loss", "algo", "engine", "commit"):
        if c in df.columns:
            df[c] = df[c].astype(str)
    return df.sort_values(list(KEY_COLUMNS), kind="stable").reset_index(drop=True)
