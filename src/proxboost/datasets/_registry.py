"""Registry of datasets and the public loading API."""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from . import _real, _synthetic
from ._files import Resolved, fetch, locate
from ._manifest import FILES, RemoteFile

__all__ = [
    "ADVERTISEMENTS_D",
    "ADVERTISEMENTS_N",
    "Dataset",
    "DatasetInfo",
    "DatasetShapeError",
    "UnverifiedDataWarning",
    "dataset_info",
    "is_available",
    "list_datasets",
    "load_dataset",
    "prefetch",
]

TASKS = ("regression", "classification")
ADVERTISEMENTS_N = 2359
ADVERTISEMENTS_D = 1558


class DatasetShapeError(ValueError):
    """A file parsed to a different (n, d) than the paper's after preprocessing."""


class UnverifiedDataWarning(UserWarning):
    """A file without a known checksum was accepted on its size check only (``ad.data``)."""


@dataclass(frozen=True)
class DatasetInfo:
    """What a dataset is, without its data.

    Attributes
    ----------
    name : str
        Dataset id (``load_dataset(name)``).
    task : {"regression", "classification", "any"}
        "any" only for ``synthetic``, which picks its generator from ``task=``.
    n, d : int or None
        Number of samples and features (SPEC sizes; after loading, the actual shape).
        None for ``synthetic`` before a task is chosen.
    source : str
        Short origin (as in SPEC §4.2), e.g. "UCI Wine Quality (white)".
    licence : str
    synthetic : bool
    target : str
        What y is.
    description : str
        The model (synthetic) or the preprocessing from the original file (real).
    encoding : str
        How features and labels are encoded.
    reference : str
        Full bibliographic origin.
    files : tuple of str
        Names of the files the loader reads (``<id>/<name>`` in the cache and mirror).
    verified : bool
        False when a file was accepted without checksum (``advertisements``: size check
        only); True otherwise (checked sha256, or generated data).
    paths : tuple of str
        After loading: the files actually read.
    origin : str or None
        After loading a real dataset: "cache", "mirror" or "download".
    params : dict
        After loading: the generator parameters used (synthetic), or the size check (ads).
    feature_names : tuple of str
        After loading: column names of X.
    alias : str or None
        "synthetic" when loaded through the ``synthetic`` alias.
    """

    name: str
    task: str
    n: int | None
    d: int | None
    source: str
    licence: str
    synthetic: bool
    target: str = ""
    description: str = ""
    encoding: str = ""
    reference: str = ""
    files: tuple[str, ...] = ()
    verified: bool = True
    paths: tuple[str, ...] = ()
    origin: str | None = None
    params: dict = field(default_factory=dict, hash=False)
    feature_names: tuple[str, ...] = ()
    alias: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict (for provenance records)."""
        return dataclasses.asdict(self)


class Dataset(NamedTuple):
    """``(X, y, info)``; ``load_dataset(name)[:2]`` is ``(X, y)``."""

    X: np.ndarray
    y: np.ndarray
    info: DatasetInfo


@dataclass(frozen=True)
class _Entry:
    info: DatasetInfo
    generate: Callable[..., tuple[np.ndarray, np.ndarray]] | None = None
    read: Callable[..., Any] | None = None

    @property
    def data_files(self) -> tuple[RemoteFile, ...]:
        return tuple(f for f in FILES.get(self.info.name, ()) if f.role == "data")


# ---------------------------------------------------------------------------- registry

_GAUSSIAN = "X ~ N(0, Σ), Σ_ij = 2^{-|i-j|}"
_SYNTH_LICENCE = "generated (no data files)"
_UCI_LICENCE = "CC BY 4.0 (as stated by the UCI Machine Learning Repository)"
_MASS_LICENCE = "MASS: GPL-2 | GPL-3; Rdatasets export repository: GPL-3"


def _synthetic_info(name: str, task: str, n: int, d: int, description: str) -> DatasetInfo:
    return DatasetInfo(
        name=name, task=task, n=n, d=d, source="synthetic (SPEC §4.1)",
        licence=_SYNTH_LICENCE, synthetic=True, description=description,
        encoding="numpy.random.default_rng(random_state)", reference="paper, SPEC §4.1",
    )


def _real_info(name, task, n, d, source, licence, target, description, encoding, reference):
    files = tuple(f.name for f in FILES[name] if f.role == "data")
    verified = all(f.sha256 is not None for f in FILES[name] if f.role == "data")
    return DatasetInfo(
        name=name, task=task, n=n, d=d, source=source, licence=licence, synthetic=False,
        target=target, description=description, encoding=encoding, reference=reference,
        files=files, verified=verified,
    )


_NUMERIC = "numeric as published"

_ENTRIES: dict[str, _Entry] = {
    "synthetic": _Entry(DatasetInfo(
        name="synthetic", task="any", n=None, d=None, source="synthetic (SPEC §4.1)",
        licence=_SYNTH_LICENCE, synthetic=True,
        description="alias: `regression` if task='regression', `classification' if "
        "task='classification' (load_dataset('synthetic', task=...))",
        encoding="numpy.random.default_rng(random_state)", reference="paper, SPEC §4.1",
    )),
    "regression": _Entry(
        _synthetic_info(
            "regression", "regression", 800, 100,
            f"{_GAUSSIAN}; Y = -sin(2X¹) + (X²)² + X³ - exp(-X⁴) + Z, Z ~ N(0, 0.5)",
        ),
        generate=_synthetic.make_regression,
    ),
    "classification": _Entry(
        _synthetic_info(
            "classification", "classification", 1500, 50,
            f"{_GAUSSIAN}; Y = +1 if X¹ + (X⁴)³ + X⁹ + sin(X¹²X¹⁸) + Z > 0.38 else -1, "
            "Z ~ N(0, 0.1)",
        ),
        generate=_synthetic.make_classification,
    ),
    "sines": _Entry(
        _synthetic_info(
            "sines", "regression", 1000, 1,
            "X ~ U[0, 1]; Y = sin(2πX) + sin(32πX) + ε, ε ~ N(0, 0.15²)",
        ),
        generate=_synthetic.make_sines,
    ),
    "whitewine": _Entry(
        _real_info(
            "whitewine", "regression", 4898, 11, "UCI Wine Quality (white)", _UCI_LICENCE,
            "quality", "winequality-white.csv (';'-separated); X = the 11 physico-chemical "
            "columns; y = quality; no row dropped", _NUMERIC,
            "Cortez et al. (2009), UCI Machine Learning Repository: Wine Quality",
        ),
        read=_real.read_wine,
    ),
    "redwine": _Entry(
        _real_info(
            "redwine", "regression", 1599, 11, "UCI Wine Quality (red)", _UCI_LICENCE,
            "quality", "winequality-red.csv (';'-separated); X = the 11 physico-chemical "
            "columns; y = quality; no row dropped", _NUMERIC,
            "Cortez et al. (2009), UCI Machine Learning Repository: Wine Quality",
        ),
        read=_real.read_wine,
    ),
    "bostonhousing": _Entry(
        _real_info(
            "bostonhousing", "regression", 506, 13,
            "R MASS Boston (= mlbench BostonHousing)",
            "mlbench: GPL-2; MASS: GPL-2 | GPL-3; Rdatasets export repository: GPL-3", "medv",
            "Boston.csv (Rdatasets export of MASS::Boston); X = crim, zn, indus, chas, nox, "
            "rm, age, dis, rad, tax, ptratio, black, lstat; y = medv", "chas is a 0/1 dummy",
            "Harrison & Rubinfeld (1978); R packages MASS and mlbench",
        ),
        read=_real.read_bostonhousing,
    ),
    "crabs": _Entry(
        _real_info(
            "crabs", "regression", 200, 4, "R MASS crabs (target CW)", _MASS_LICENCE, "CW",
            "crabs.csv (Rdatasets export of MASS::crabs); drop sp, sex, index; "
            "X = FL, RW, CL, BD; y = CW", "the factors sp and sex are dropped (not encoded)",
            "Campbell & Mahon (1974); R package MASS",
        ),
        read=_real.read_crabs,
    ),
    "engel": _Entry(
        _real_info(
            "engel", "regression", 235, 1, "R quantreg engel",
            "quantreg: GPL (>= 2); statsmodels: BSD-3-Clause", "foodexp",
            "engel.csv (Rdatasets export of quantreg::engel); X = income; y = foodexp",
            _NUMERIC, "Koenker & Bassett (1982); R package quantreg",
        ),
        read=_real.read_engel,
    ),
    "sniffer": _Entry(
        _real_info(
            "sniffer", "regression", 125, 4, "R alr4 sniffer (public file: sniffer.rda)",
            "alr4: GPL (>= 2)", "Y",
            "sniffer.rda read with the rdata package; X = TankTemp, GasTemp, TankPres, "
            "GasPres; y = Y", _NUMERIC,
            "Weisberg, Applied Linear Regression; R package alr4",
        ),
        read=_real.read_sniffer,
    ),
    "adult": _Entry(
        _real_info(
            "adult", "classification", 30162, 13,
            "UCI Adult (complete rows of adult.data)", _UCI_LICENCE,
            "income: >50K -> +1, <=50K -> -1",
            "adult.data; complete rows ('?' = missing); attribute 'education' dropped "
            "(one-to-one relabelling of education-num); adult.test not used",
            "categorical attributes (workclass, marital-status, occupation, relationship, "
            "race, sex, native-country) as integer codes 0..K-1 in lexicographic order of "
            "the categories present in the complete rows",
            "Becker & Kohavi (1996), UCI Machine Learning Repository: Adult",
        ),
        read=_real.read_adult,
    ),
    "advertisements": _Entry(
        _real_info(
            "advertisements", "classification", ADVERTISEMENTS_N, ADVERTISEMENTS_D,
            "UCI Internet Advertisements (complete rows)", _UCI_LICENCE,
            "last column: ad. -> +1, nonad. -> -1",
            "ad.data; complete rows ('?' = missing); X = columns 0..1557 (height, width, "
            "aratio, local + 1554 binary terms); no checksum known: accepted only if "
            f"n = {ADVERTISEMENTS_N} and d = {ADVERTISEMENTS_D}, recorded as unverified",
            "binary term columns as 0/1",
            "Kushmerick (1999), UCI Machine Learning Repository: Internet Advertisements",
        ),
    ),
    "spam": _Entry(
        _real_info(
            "spam", "classification", 4601, 57, "UCI Spambase", _UCI_LICENCE,
            "column 57: 1 (spam) -> +1, 0 -> -1",
            "spambase.data; X = columns 0..56; y = column 57; no row dropped", _NUMERIC,
            "Hopkins, Reeber, Forman & Suermondt (1999), UCI Machine Learning Repository",
        ),
        read=_real.read_spam,
    ),
}

_AD_HINT = (
    "ad.data is NOT in the project's mirror (no complete public copy could be obtained "
    "offline) and has no checksum: download it from the UCI URL above, put it in the folder "
    f"above, and it will be accepted after checking n = {ADVERTISEMENTS_N}, "
    f"d = {ADVERTISEMENTS_D} after preprocessing (recorded as unverified). Experiments "
    "sweeping datasets skip it while it is unavailable."
)


def _entry(name: str) -> _Entry:
    try:
        return _ENTRIES[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown dataset {name!r}; valid names: {', '.join(_ENTRIES)}"
        ) from None


# ---------------------------------------------------------------------------- public API


def list_datasets(task: str | None = None, synthetic: bool | None = None) -> list[str]:
    """Dataset ids: synthetic first, then real ones in SPEC order.

    Parameters
    ----------
    task : {"regression", "classification"}, optional
        Keep datasets of this task (``synthetic``, task "any", is kept for both).
    synthetic : bool, optional
        Keep only synthetic (True) or only real (False) datasets.
    """
    if task is not None and task not in TASKS:
        raise ValueError(f"task must be one of {TASKS} or None, got {task!r}")
    return [
        name for name, entry in _ENTRIES.items()
        if (task is None or entry.info.task in (task, "any"))
        and (synthetic is None or entry.info.synthetic == synthetic)
    ]


def dataset_info(name: str) -> DatasetInfo:
    """The :class:`DatasetInfo` of a dataset, without loading it (SPEC sizes)."""
    return _entry(name).info


def is_available(
    name: str,
    mirror: str | os.PathLike | None = None,
    data_home: str | os.PathLike | None = None,
) -> bool:
    """Whether the dataset can be loaded without the network.

    True for synthetic datasets; for a real one, True if every file its loader reads is in
    the cache or the mirror (checksums are checked at load time, not here).
    """
    entry = _entry(name)
    return entry.info.synthetic or all(
        locate(name, f, mirror, data_home) is not None for f in entry.data_files
    )


def _resolve_synthetic(name: str, task: str | None) -> str:
    if name != "synthetic":
        return name
    if task not in TASKS:
        raise ValueError(
            "the dataset 'synthetic' picks 'regression' or 'classification' from the loss's "
            f"task: call load_dataset('synthetic', task='regression'|'classification'), "
            f"got task={task!r}"
        )
    return task


def _load_synthetic(entry: _Entry, random_state, params: dict) -> Dataset:
    # None means "the SPEC default" (Hydra configs write n_samples: null).
    kwargs = {k: v for k, v in params.items() if v is not None}
    allowed = ("n_samples", "n_features", "noise_std")
    unknown = sorted(set(kwargs) - set(allowed))
    if unknown:
        raise TypeError(
            f"unknown parameters {unknown} for dataset {entry.info.name!r}; allowed: {allowed}"
        )
    X, y = entry.generate(random_state=random_state, **kwargs)
    used = {k: kwargs.get(k) for k in allowed}
    used["random_state"] = random_state if isinstance(random_state, (int, np.integer)) else (
        None if random_state is None else repr(random_state)
    )
    info = dataclasses.replace(entry.info, n=X.shape[0], d=X.shape[1], params=used)
    return Dataset(X, y, info)


def _check_shape(name: str, path: Path, shape: tuple[int, int], expected: tuple[int, int]):
    if tuple(shape) != tuple(expected):
        raise DatasetShapeError(
            f"dataset {name!r}: {path} gives (n, d) = {tuple(shape)} after preprocessing, "
            f"expected {tuple(expected)}; the file is not the published one. Replace it with "
            f"a copy from {', '.join(f.urls[0] for f in FILES[name] if f.role == 'data')}."
        )


def _real_params(name: str, params: dict) -> tuple[int, int]:
    """Validate the parameters of a real dataset; returns the expected (n, d)."""
    info = _ENTRIES[name].info
    params = {k: v for k, v in params.items() if v is not None}
    allowed = ("expected_n", "expected_d") if name == "advertisements" else ()
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        extra = (
            " (advertisements accepts expected_n / expected_d, the size check)"
            if name == "advertisements" else ""
        )
        raise TypeError(
            f"dataset {name!r} takes no parameters {unknown}: a real dataset is loaded whole"
            f"{extra}"
        )
    return int(params.get("expected_n", info.n)), int(params.get("expected_d", info.d))


def _load_advertisements(resolved: Resolved, expected: tuple[int, int]):
    try:
        X, y, names, n_rows = _real.read_advertisements_table(resolved.path)
        _check_shape("advertisements", resolved.path, X.shape, expected)
    except Exception:
        if resolved.stored:  # written into the cache by this call: never leave a refused file
            resolved.path.unlink(missing_ok=True)
        raise
    if not resolved.verified:
        warnings.warn(
            f"advertisements: {resolved.path} has no known checksum; accepted on its size "
            f"check only ({n_rows} rows -> n = {X.shape[0]} complete rows, d = {X.shape[1]}); "
            "recorded as unverified (info.verified = False)",
            UnverifiedDataWarning, stacklevel=4,  # the caller of load_dataset
        )
    return X, y, names


def _load_real(entry: _Entry, mirror, data_home, download, params: dict) -> Dataset:
    name = entry.info.name
    expected = _real_params(name, params)
    (file,) = entry.data_files
    hint = _AD_HINT if name == "advertisements" else ""
    resolved = fetch(name, file, mirror=mirror, data_home=data_home, download=download, hint=hint)
    if name == "advertisements":
        X, y, names = _load_advertisements(resolved, expected)
        used = {"expected_n": expected[0], "expected_d": expected[1]}
    else:
        X, y, names = entry.read(resolved.path)
        _check_shape(name, resolved.path, X.shape, expected)
        used = {}
    info = dataclasses.replace(
        entry.info, n=X.shape[0], d=X.shape[1], verified=resolved.verified,
        paths=(str(resolved.path),), origin=resolved.origin, params=used,
        feature_names=tuple(names),
    )
    return Dataset(X, y, info)


def _finalise(dataset: Dataset) -> Dataset:
    """float64, C-contiguous, finite, labels in {-1, +1}: the contract of load_dataset."""
    X = np.ascontiguousarray(dataset.X, dtype=np.float64)
    y = np.ascontiguousarray(dataset.y, dtype=np.float64)
    name = dataset.info.name
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise AssertionError(f"{name}: bad shapes X {X.shape}, y {y.shape}")
    if not (np.isfinite(X).all() and np.isfinite(y).all()):
        raise ValueError(f"dataset {name!r}: non-finite values after preprocessing")
    if dataset.info.task == "classification" and not np.isin(y, (-1.0, 1.0)).all():
        raise AssertionError(f"{name}: classification labels outside {{-1, +1}}")
    return Dataset(X, y, dataset.info)


def load_dataset(
    name: str,
    random_state=None,
    mirror: str | os.PathLike | None = None,
    data_home: str | os.PathLike | None = None,
    *,
    download: bool | None = None,
    **params,
) -> Dataset:
    """Load a dataset by id: ``X, y, info = load_dataset(name, ...)``.

    Parameters
    ----------
    name : str
        One of :func:`list_datasets`.
    random_state : int, numpy Generator or None
        Seed of the synthetic generators (``numpy.random.default_rng``); ignored by real
        datasets, which are returned whole in file order (splitting is the protocol's job).
    mirror : path-like, optional
        Local mirror (``<mirror>/<id>/<file>``); default ``$PROXBOOST_DATA_MIRROR``.
    data_home : path-like, optional
        Cache folder; default ``$PROXBOOST_DATA_HOME``, else ``<repo>/data``.
    download : bool, optional
        Allow downloading missing files (default: yes unless ``$PROXBOOST_OFFLINE`` is set).
    **params
        ``task``: "regression" or "classification"; required by ``synthetic`` (which loads
        the generator of that name), checked against the dataset's task otherwise.
        Synthetic generators: ``n_samples``, ``n_features``, ``noise_std`` (None = SPEC
        default). ``advertisements``: ``expected_n``, ``expected_d`` (the size check,
        default 2359 and 1558). Real datasets accept ``n_samples=None`` /
        ``n_features=None`` and nothing else.

    Returns
    -------
    Dataset
        Named tuple ``(X, y, info)``: X float64 (n, d), y float64 (n,) (labels in
        {-1.0, +1.0} for classification), info a :class:`DatasetInfo` with the actual n
        and d and where the data came from.

    Raises
    ------
    ValueError
        Unknown name, or ``task`` missing (``synthetic``) or mismatched.
    DatasetUnavailableError
        A file is missing and cannot be fetched (the message says where to get it and where
        to put it).
    ChecksumError
        A file's sha256 differs from the manifest's; the file is refused.
    DatasetShapeError
        A file parses to a different (n, d) than the paper's.
    """
    task = params.pop("task", None)
    entry = _entry(_resolve_synthetic(_entry(name).info.name, task))
    if task is not None and task != entry.info.task:
        raise ValueError(
            f"dataset {entry.info.name!r} is a {entry.info.task} dataset; "
            f"it cannot be used with a {task} loss (task={task!r})"
        )
    if entry.info.synthetic:
        dataset = _load_synthetic(entry, random_state, params)
    else:
        dataset = _load_real(entry, mirror, data_home, download, params)
    if name == "synthetic":
        dataset = dataset._replace(info=dataclasses.replace(dataset.info, alias="synthetic"))
    return _finalise(dataset)


def prefetch(
    names: list[str] | None = None,
    mirror: str | os.PathLike | None = None,
    data_home: str | os.PathLike | None = None,
    *,
    download: bool | None = None,
    docs: bool = False,
    log: Callable[[str], None] = print,
) -> dict[str, str]:
    """Copy (from the mirror) or download the files of real datasets into the cache.

    Parameters
    ----------
    names : list of str, optional
        Datasets to fetch (default: all real ones); synthetic ones need nothing.
    mirror, data_home, download
        As in :func:`load_dataset`.
    docs : bool
        Also fetch the description files (``.names``, ``DOCUMENTATION``); a missing one is
        reported but does not make the dataset unavailable.
    log : callable
        Receives one line per dataset.

    Returns
    -------
    dict
        ``{name: status}``, status "ok", "unavailable" or "failed" (checksum or size check:
        the file was refused).
    """
    from ._files import DatasetUnavailableError

    statuses: dict[str, str] = {}
    for name in names if names is not None else list_datasets(synthetic=False):
        entry = _entry(name)
        if entry.info.synthetic:
            continue
        try:
            if entry.info.verified:
                origins = [
                    fetch(name, f, mirror=mirror, data_home=data_home, download=download).origin
                    for f in entry.data_files
                ]
            else:  # no checksum: loading runs the size check and removes a refused file
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UnverifiedDataWarning)
                    loaded = load_dataset(
                        name, mirror=mirror, data_home=data_home, download=download
                    )
                origins = [loaded.info.origin]
        except DatasetUnavailableError as exc:
            statuses[name] = "unavailable"
            first_line = str(exc).splitlines()[0]
            log(f"{name}: unavailable, skipped ({first_line})")
            continue
        except ValueError as exc:  # ChecksumError, DatasetShapeError, unreadable file
            statuses[name] = "failed"
            log(f"{name}: REFUSED: {exc}")
            continue
        statuses[name] = "ok"
        note = "" if entry.info.verified else " (unverified: size check only)"
        log(f"{name}: ok ({', '.join(sorted(set(origins)))}){note}")
        if docs:
            _prefetch_docs(name, mirror, data_home, download, log)
    return statuses


def _prefetch_docs(name, mirror, data_home, download, log) -> None:
    from ._files import ChecksumError, DatasetUnavailableError

    for f in FILES[name]:
        if f.role != "doc":
            continue
        try:
            fetch(name, f, mirror=mirror, data_home=data_home, download=download)
        except (DatasetUnavailableError, ChecksumError) as exc:
            log(f"{name}: description file {f.name} not fetched: {str(exc).splitlines()[0]}")
