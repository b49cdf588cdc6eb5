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

The folders before ``<hash>`` are for people (see
:func:`proxboost.experiments.store.naming.protocol_name`); ``<hash>`` is the first 12 hex digits of
:func:`identity_hash`. Baselines, which use no proxboost tree engine, are stored under
``engine=none``.

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
(:mod:`proxboost.experiments.fits.curves`) give the same guarantees.
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import functools
import hashlib
import io
import json
import logging
import math
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from proxboost._vocabulary import library_version
from proxboost.experiments.store.naming import (
    ALGO_GRID_AXES,
    DEFAULT_FRACTIONS,
    DEFAULT_INTERVAL_TIES,
    protocol_name,
)
from proxboost.experiments.system.sealed import (
    DamagedFileError,
    atomic_path,
    read_sealed,
    seal,
    unseal,
)

log = logging.getLogger("proxboost.experiments.store.results")

__all__ = [
    "HASH_LENGTH",
    "KEY_COLUMNS",
    "LATER_ROW_COLUMNS",
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
    "same_rows_elsewhere",
    "store_reused",
    "write_row",
]

#: Version of the numbers this code computes. Raise it by one with any change that alters a
#: computed number (a loss, line search, tree engine, protocol rule, ...): stored rows and
#: curves of an older version are then never reused. ``tests/test_results.py`` pins it next
#: to a few reference values, so a change that moves them fails until it is raised.
#: Version 0 marks artifacts made before identities existed (migrated, never reused).
# 3: pure nodes are leaves (exact comparison); the weighted mean loss (docs/engines.md)
NUMERICS_VERSION = 3

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
    return Path(__file__).resolve().parents[4]


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
        # --no-optional-locks: a plain `git status` refreshes the index under .git/index.lock;
        # a sweep interrupted (Ctrl-C, a killed process group) while it ran would leave the
        # lock behind and make the user's next `git commit` fail.
        status = subprocess.run(
            [
                "git",
                "--no-optional-locks",
                "status",
                "--porcelain",
                "--",
                ".",
                *(f":(exclude){d}" for d in _OUTPUT_DIRS),
            ],
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
    :func:`os.replace`), sealed by its checksum line (:mod:`proxboost.experiments.system.sealed`).
    Parent directories are created. ``index=False`` unless given.
    """
    path = Path(path)
    to_csv_kwargs.setdefault("index", False)
    text = seal(df.to_csv(lineterminator="\n", **to_csv_kwargs))
    with atomic_path(path) as tmp:
        with open(tmp, "w", newline="") as fh:
            fh.write(text)
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


def same_rows_elsewhere(results_dir, protocol, dataset, loss, algo, engine, identity) -> dict:
    """Rows of this very computation (the same identity) stored under another protocol folder,
    e.g. a benchmark reading whose grid equals the paper's: ``{split: path}`` (the first folder
    in path order holding that split). A row whose stored identity differs does not count."""
    text = identity if isinstance(identity, str) else canonical_json(identity)
    own = run_dir(results_dir, protocol, dataset, loss, algo, engine, text)
    short = identity_hash(text)[:HASH_LENGTH]
    found: dict[int, Path] = {}
    root = Path(results_dir)
    if not root.is_dir():
        return found
    for directory in sorted(root.glob(f"**/{dataset}/{loss}/{algo}/{engine}/{short}")):
        if directory == own:
            continue
        for p in sorted(directory.glob(ROW_FILE_GLOB)):
            stem = p.stem[len("split-") :]
            if stem.isdigit() and int(stem) not in found and stored_identity(p) == text:
                found[int(stem)] = p
    return found


def store_reused(results_dir, source, columns: dict) -> Path:
    """Store the row of ``source`` again at the location ``columns`` give it (``protocol``,
    ``grid``: the run reusing it), every other field's text unchanged (no number is parsed and
    printed again), with ``reused_from``: the source's path under ``results_dir``."""
    source = Path(source)
    header, *lines = list(csv.reader(io.StringIO(read_sealed(source))))
    if len(lines) != 1:
        raise ValueError(f"{source}: a row file holds one row, found {len(lines)}")
    row = dict(zip(header, lines[0], strict=True))
    where = source.resolve().relative_to(Path(results_dir).resolve()).as_posix()
    row.update({k: str(v) for k, v in columns.items()}, reused_from=where)
    return write_row(results_dir, row)


def stored_identity(path) -> str | None:
    """The ``identity`` column of a stored row file; ``None`` if it has none, or if the file is
    damaged (logged in one line: the resume check then recomputes it)."""
    try:
        text = read_sealed(path)
    except DamagedFileError as exc:
        log.warning("damaged stored file, recomputed: %s", exc)
        return None
    except OSError:
        return None
    return identity_of_text(text)


def identity_of_text(text: str) -> str | None:
    """The ``identity`` column of a stored file's text (without its seal), in its first row, or
    None. Read by the csv module, field for field as pandas writes and reads it: a sweep's
    resume check reads every row file of its runs, and pandas took 40 times as long per file."""
    rows = csv.reader(io.StringIO(text), strict=True)  # a quote left open: no identity
    try:
        header = next(rows)
        value = next(rows)[header.index("identity")]
    except (StopIteration, ValueError, IndexError, csv.Error):
        return None
    return value or None


# -- reading ---------------------------------------------------------------------------------------
def load(path=None, on_damaged="raise"):
    """All result rows stored under ``path`` (default ``results/``) as one tidy DataFrame.

    One row per stored (identity, split), sorted by the readable keys, the identity hash and
    the split; columns as :data:`ROW_COLUMNS`. Only row files (``split-XX.csv``) are read, so
    other files under the directory (curves of the synthetic experiments, temporary files) are
    ignored. Returns an empty DataFrame with the row columns when nothing is stored.

    Every file's checksum is verified before anything is read from it. ``on_damaged="raise"``
    (default): :class:`DamagedResultsError` listing every damaged file. ``on_damaged="skip"``:
    returns ``(rows of the intact files, list of DamagedFileError)``.
    """
    if on_damaged not in ("raise", "skip"):
        raise ValueError(f"on_damaged={on_damaged!r}; allowed values: 'raise', 'skip'")
    root = Path(DEFAULT_RESULTS_DIR if path is None else path)
    files = sorted(root.rglob(ROW_FILE_GLOB)) if root.is_dir() else []
    texts, damaged = _read_all_sealed(files)
    if damaged and on_damaged == "raise":
        raise DamagedResultsError(damaged, root)
    df = _rows_frame(texts)
    return (df, damaged) if on_damaged == "skip" else df


def _read_all_sealed(files):
    """(verified texts of the intact files, DamagedFileError of each damaged one)."""
    texts, damaged = [], []
    for f in files:
        try:
            texts.append(read_sealed(f))
        except DamagedFileError as exc:
            damaged.append(exc)
    return texts, damaged


def _rows_frame(texts) -> pd.DataFrame:
    if not texts:
        return pd.DataFrame(columns=list(ROW_COLUMNS))
    # Files sharing a header are parsed in one read_csv call (fast for thousands of rows).
    groups: dict[str, list[str]] = {}
    for text in texts:
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


# -- curves of the synthetic experiments -----------------------------------------------------------
CURVE_COLUMNS = ("iteration", "seconds", "train_loss", "test_loss", "n_leaves")
SETTING_COLUMNS = (
    "experiment",
    "dataset",
    "task",
    "loss",
    "algo",
    "max_depth",
    "learning_rate",
    "step",
    "n_estimators",
    "tau",
    "beta",
    "newton_steps",
    "seed",
    "random_state",
    "engine",
    "tie_rule",
    "n_train",
    "n_test",
    "n_features",
    "split",
    "fit_seconds",
    "identity_hash",
    "identity",
)


# -- reading curves --------------------------------------------------------------------------------
def read_curve(path) -> pd.DataFrame:
    """One (verified) curve file with its settings and provenance filled down to every row."""
    df = pd.read_csv(io.StringIO(read_sealed(path)))
    fill = [c for c in df.columns if c not in CURVE_COLUMNS]
    df[fill] = df[fill].ffill()
    return df


def load_curves(results_dir="results", experiment=None) -> pd.DataFrame:
    """Every curve stored under ``<results_dir>/synthetic[/<experiment>]`` as one tidy DataFrame.

    One row per (run, iteration); settings and provenance columns on every row. Empty (with the
    curve and setting columns) when nothing is stored. Every file is verified first:
    :class:`DamagedResultsError` lists the damaged ones (curves, predictions, data draws).
    """
    root = Path(results_dir) / "synthetic"
    if experiment is not None:
        root = root / experiment
    files = (
        sorted(
            p
            for p in root.rglob("*.csv")
            if not p.name.endswith(".predictions.csv")
            and not p.name.startswith("data")
            and not p.name.startswith(".")
        )
        if root.is_dir()
        else []
    )
    _check_sealed(sorted(root.rglob("*.csv")) if root.is_dir() else [], root)
    if not files:
        return pd.DataFrame(columns=[*CURVE_COLUMNS, *SETTING_COLUMNS])
    df = pd.concat([read_curve(p) for p in files], ignore_index=True)
    for c in ("experiment", "dataset", "task", "loss", "algo", "engine", "commit"):
        if c in df.columns:
            df[c] = df[c].astype(str)
    for c in ("iteration", "max_depth", "n_estimators", "seed"):
        if c in df.columns:
            df[c] = df[c].astype(int)
    return df


def load_intro(results_dir="results"):
    """``(curves, predictions, data)`` of the introduction example (empty frames if missing)."""
    root = Path(results_dir) / "synthetic" / "intro"
    curves = load_curves(results_dir, "intro")
    preds = (
        [read_curve(p) for p in sorted(root.rglob("*.predictions.csv"))] if root.is_dir() else []
    )
    predictions = (
        pd.concat(preds, ignore_index=True)
        if preds
        else pd.DataFrame(columns=["x", "prediction", "algo"])
    )
    data_files = sorted(root.rglob("data*.csv")) if root.is_dir() else []
    data = (
        pd.read_csv(io.StringIO(read_sealed(data_files[0])))
        if data_files
        else pd.DataFrame(columns=["x", "y", "part"])
    )
    return curves, predictions, data


def _check_sealed(files, root):
    """Raise :class:`DamagedResultsError` naming every damaged one of ``files``."""
    damaged = _read_all_sealed(files)[1]
    if damaged:
        raise DamagedResultsError(damaged, root)


class DamagedResultsError(ValueError):
    """Stored files whose checksum does not hold: each named, with a command that recomputes
    only what it held (see :func:`recompute_command`)."""

    def __init__(self, damaged, root):
        self.damaged, self.root = list(damaged), Path(root)
        lines = [f"{len(self.damaged)} damaged stored file(s) under {self.root}; nothing was read:"]
        lines += [
            f"  {exc.path}: {exc.reason}; recompute it with: {recompute_command(exc.path)}"
            for exc in self.damaged
        ]
        super().__init__("\n".join(lines))


def recompute_command(path) -> str:
    """A command that recomputes only the damaged file ``path`` (the others are resumed, i.e.
    only read): for a row file, the ``run.py`` line of its run, built from the identity that the
    intact rows of its folder (or the file itself, if that part survived) hold; for a curve, its
    experiment. A damaged file counts as missing, so the command recomputes exactly it."""
    path = Path(path)
    if path.name.startswith("split-"):
        identity = _identity_of_run(path)
        try:
            return run_command(identity, path)
        except (KeyError, TypeError, IndexError):  # no identity left, or not a run's
            return f"python run.py with the settings of the run that wrote {path.parent}"
    folder = _synthetic_experiment(path)
    if folder in SYNTHETIC_WRITERS:
        return " && ".join(f"python run.py {job}" for job in SYNTHETIC_WRITERS[folder])
    return f"python run.py (the experiment that wrote {path})"


#: The named experiments that write each folder of ``results/synthetic`` (each resumes: the
#: runs already stored are only read). tests/test_results.py checks it against conf/experiment/.
SYNTHETIC_WRITERS = {
    "intro": ("+experiment=intro", "-m +experiment=intro_sensitivity"),
    "convergence": ("+experiment=convergence", "+experiment=convergence_authors"),
    "proximal_step": ("+experiment=proximal_step",),
}


def _synthetic_experiment(path: Path):
    parts = path.parts
    if "synthetic" in parts:
        i = parts.index("synthetic")
        if i + 1 < len(parts) - 1:
            return parts[i + 1]
    return None


def _identity_of_run(path: Path):
    """The identity (dict) of the run whose folder holds ``path``: from an intact sibling row,
    else from ``path`` itself when its identity column is complete and hashes to the folder."""
    for candidate in [*sorted(path.parent.glob(ROW_FILE_GLOB)), path]:
        try:
            text = read_sealed(candidate) if candidate != path else path.read_text()
            frame = pd.read_csv(io.StringIO(text), usecols=lambda c: c == "identity", dtype=str)
            identity = str(frame["identity"].iloc[0])
            if identity_hash(identity)[:HASH_LENGTH] == path.parent.name:
                return json.loads(identity)
        except (DamagedFileError, OSError, ValueError, KeyError, IndexError, pd.errors.ParserError):
            continue
    return None


def _override_value(value) -> str:
    """A Hydra override's value: a list as ``[a,b,c]`` (no spaces, so that it stays one word of
    the command line), anything else as ``str`` gives it."""
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(str(v) for v in value) + "]"
    return str(value)


def run_command(identity: dict, row_file) -> str:
    """The ``python run.py`` line that computes the run of ``identity`` into the folder of
    ``row_file`` (``<results_dir>/<grid>/<n>splits/T<T>/<dataset>/<loss>/<algo>/<engine>/<hash>/
    split-XX.csv``): the same grid option (and, for a custom grid, its values), loss, method and
    protocol, so that its rows land in the same folder under the same identity."""
    row_file = Path(row_file)
    method, loss, protocol = identity["method"], identity["loss"], identity["protocol"]
    fractions = protocol.get("fractions", DEFAULT_FRACTIONS)
    ties = protocol.get("interval_ties", DEFAULT_INTERVAL_TIES)  # in the identity when not closed
    # the protocol's folders (protocol_name: <grid>/<n>splits/T<T> and one more for each
    # setting that is not its default) sit between the results directory and the dataset's
    depth = protocol_name(
        "grid", protocol["n_splits"], protocol["max_estimators"], fractions, protocol["seed"], ties
    ).count("/")
    results_dir, grid_label = row_file.parents[6 + depth], row_file.parents[5 + depth].name
    args = [
        "python run.py",
        f"dataset={identity['dataset']['name']}",
        f"loss={loss['name']}",
        f"algo={method['algo']}",
    ]
    # a list (several quantile levels) is written without spaces: one shell word, Hydra's list
    args += [f"loss.{k}={_override_value(v)}" for k, v in sorted(loss.items()) if k != "name"]
    if method.get("engine", "none") != "none":
        args.append(f"engine={method['engine']}")
    tie_rule = method.get("options", {}).get("tie_rule")
    if tie_rule:
        args.append(f"tie_rule={tie_rule}")
    grid_name, _, custom = grid_label.partition("-custom")
    args.append(f"grid={grid_name}")
    if custom:  # the folder of a custom grid is named by its values: give them all
        for key, values in sorted(identity.get("grid", {}).items()):
            # the forests' axes sit with their algo's option (conf/algo/), the others in the grid's
            node = "algo.grid" if key in ALGO_GRID_AXES else "grid"
            args.append(f"'++{node}.{key}={_override_value(values)}'")
    # ``++``: a generator's parameter that its dataset config does not list (the noise level of
    # the synthetic sets) is added, one it lists overridden (plain ``key=value`` refuses the first)
    args += [
        f"++dataset.params.{k}={_override_value(v)}"
        for k, v in sorted(identity["dataset"].get("params", {}).items())
    ]
    args += [
        f"protocol.fractions.{part}={f}"
        for part, f in zip(("train", "validation", "test"), fractions)
    ]
    args += [
        f"protocol.n_splits={protocol['n_splits']}",
        f"protocol.max_estimators={protocol['max_estimators']}",
        f"protocol.seed={protocol['seed']}",
    ]
    if ties != DEFAULT_INTERVAL_TIES:
        args.append(f"protocol.interval_ties={ties}")
    args.append(f"results_dir={results_dir}")
    return " ".join(args)


# -- sealing files written before checksums existed -------------------------------------------
#: Row columns added after the first rows were stored (a row written before them lacks them).
LATER_ROW_COLUMNS = ("lightgbm_version",)


def _check_unsealed_row(path: Path, text: str):
    """Why a row file written before checksums is not whole and consistent (None if it is)."""
    df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    missing = [c for c in ROW_COLUMNS if c not in df.columns and c not in LATER_ROW_COLUMNS]
    if missing:
        return f"columns missing: {missing}"
    if len(df) != 1:
        return f"{len(df)} rows instead of 1"
    row = df.iloc[0]
    digest = identity_hash(row["identity"])
    if row["identity_hash"] != digest or path.parent.name != digest[:HASH_LENGTH]:
        return "its identity does not hash to its identity_hash and folder"
    if f"split-{int(row['split']):02d}.csv" != path.name:
        return f"split {row['split']} does not match the file name"
    keys = [row[k] for k in KEY_COLUMNS[1:-1]]  # dataset, loss, algo, engine
    if list(path.parts[-6:-2]) != keys or "/".join(path.parts[-9:-6]) != row["protocol"]:
        return "its key columns do not match its folders"
    return None


def _check_unsealed_curve(path: Path, text: str):
    """Why a curve, prediction or data file written before checksums is not consistent."""
    df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    if path.name.startswith("data-"):
        return None if list(df.columns) == ["x", "y", "part"] else "not a data draw (x, y, part)"
    if path.name.endswith(".predictions.csv"):
        curve_hash = path.name[: -len(".predictions.csv")].rsplit("_", 1)[-1]
        ok = "identity_hash" in df and df["identity_hash"].iloc[0][:HASH_LENGTH] == curve_hash
        return None if ok else "its identity_hash does not match its curve's file name"
    missing = [c for c in (*CURVE_COLUMNS, *SETTING_COLUMNS) if c not in df.columns]
    if missing:
        return f"columns missing: {missing}"
    digest = identity_hash(df["identity"].iloc[0])
    if df["identity_hash"].iloc[0] != digest or not path.stem.endswith("_" + digest[:HASH_LENGTH]):
        return "its identity does not hash to its identity_hash and file name"
    return None


def stored_files(root) -> list[Path]:
    """Every stored file of results under ``root``: row files and synthetic curves, predictions
    and data draws (not the report's own outputs such as ``claims.csv``)."""
    root = Path(root)
    rows = root.rglob(ROW_FILE_GLOB)
    curves = (root / "synthetic").rglob("*.csv") if (root / "synthetic").is_dir() else []
    return sorted({*rows, *curves})


def process_started() -> float:
    """When this process started (a :func:`time.time` value): from ``/proc`` on Linux, else when
    this module was imported."""
    try:
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        boot = next(
            int(line.split()[1])
            for line in Path("/proc/stat").read_text().splitlines()
            if line.startswith("btime ")
        )
        return boot + ticks / os.sysconf("SC_CLK_TCK") - 1.0  # btime is rounded down
    except (OSError, ValueError, IndexError, StopIteration):
        return _IMPORTED


_IMPORTED = time.time()


def stored_since(results_dir, since=None) -> int:
    """Rows and curves stored under ``results_dir`` since ``since`` (a :func:`time.time` value;
    default: since this process started): their files' modification times. A file is moved into
    place whole, so its time is that of its writing: the store, not a counter in memory, says
    what was stored."""
    since = process_started() if since is None else since
    n = 0
    for f in stored_files(results_dir):
        if f.name.endswith(".predictions.csv") or f.name.startswith("data-"):
            continue
        try:
            n += f.stat().st_mtime >= since
        except OSError:
            continue
    return n


def verify_stored(root) -> None:
    """Check the seal of every stored file under ``root`` before anything is read or written:
    :class:`DamagedResultsError` names each damaged one."""
    _check_sealed(stored_files(root), root)


def stops_on_damage(main):
    """For the command lines that read stored results (the report, the figures, a sweep's
    report): a damaged file ends the command with exit code 2 and, per file, one line with the
    command that recomputes it; nothing is written, and no traceback is printed."""

    @functools.wraps(main)
    def wrapper(argv=None):
        try:
            return main(argv)
        except DamagedResultsError as exc:
            print(f"error: {exc}", file=sys.stderr)
            raise SystemExit(2) from None

    return wrapper


def seal_existing(root):
    """Seal the stored files under ``root`` that have no checksum yet, after checking each one
    (see :func:`_check_unsealed_row`, :func:`_check_unsealed_curve`); the bytes before the seal
    are left as they are. Returns ``(sealed, already sealed, {path: reason not sealed})``."""
    sealed, already, refused = [], [], {}
    for path in stored_files(root):
        data = path.read_bytes()
        try:
            unseal(data, path)
            already.append(path)
            continue
        except DamagedFileError:
            pass
        text = data.decode()
        if not text.endswith("\n"):
            refused[path] = "does not end with a newline (cut short?)"
            continue
        check = _check_unsealed_row if path.name.startswith("split-") else _check_unsealed_curve
        try:
            reason = check(path, text)
        except (ValueError, KeyError, IndexError, pd.errors.ParserError) as exc:
            reason = f"unreadable ({exc})"
        if reason is not None:
            refused[path] = reason
            continue
        with atomic_path(path) as tmp:
            tmp.write_bytes(seal(text).encode())
        sealed.append(path)
    return sealed, already, refused


def main(argv=None) -> int:
    """``python -m proxboost.results seal <folder>``: seal the stored files of a results folder
    written before checksums existed (each is checked first; a file that fails a check is left
    untouched and named). Exit code 1 if any file was refused."""
    parser = argparse.ArgumentParser(prog="python -m proxboost.results", description=main.__doc__)
    parser.add_argument("command", choices=["seal"])
    parser.add_argument("folder", nargs="?", default=DEFAULT_RESULTS_DIR)
    args = parser.parse_args(argv)
    sealed, already, refused = seal_existing(args.folder)
    for path, reason in refused.items():
        print(f"not sealed: {path}: {reason}")
    print(f"{len(sealed)} file(s) sealed, {len(already)} already sealed, {len(refused)} refused")
    return 1 if refused else 0


if __name__ == "__main__":
    raise SystemExit(main())
