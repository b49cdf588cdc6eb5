"""Datasets of the reproduction: the paper's synthetic models and its nine real datasets.

Usage
-----
>>> from proxboost.datasets import load_dataset
>>> X, y, info = load_dataset("regression", random_state=0)   # SPEC §4.1, (800, 100)
>>> X, y = load_dataset("engel")[:2]                          # SPEC §4.2, (235, 1)
>>> X, y, info = load_dataset("synthetic", task="classification", random_state=0)

Datasets (:func:`list_datasets`):

- synthetic (no files): ``regression``, ``classification``, ``sines``, and ``synthetic``,
  an alias picking ``regression`` or ``classification`` from ``task=`` (its
  :func:`dataset_info` has ``task="any"`` and ``n = d = None``);
- real: ``whitewine``, ``redwine``, ``bostonhousing``, ``crabs``, ``engel``, ``sniffer``,
  ``adult``, ``advertisements``, ``spam``.

Files come from the cache (``data_home``, ``$PROXBOOST_DATA_HOME``, else ``<repo>/data``),
else a mirror (``mirror``, ``$PROXBOOST_DATA_MIRROR``; copied into the cache after its sha256
check), else the URLs of :data:`FILES` (accepted only if the sha256 matches, written
atomically). See :mod:`proxboost.datasets._files` for details, ``_manifest`` for the table
of files, ``_synthetic`` for the generators (``numpy.random.default_rng``) and ``_real`` for
the parsers and encodings (adult's categorical attributes as integer codes).

``python -m proxboost.datasets`` lists the datasets and their availability;
``--prefetch`` fills the cache.
"""

from ._files import (
    ENV_DATA_HOME,
    ENV_MIRROR,
    ENV_OFFLINE,
    ChecksumError,
    DatasetUnavailableError,
    get_data_home,
    get_mirror,
    sha256_file,
)
from ._manifest import FILES, RemoteFile
from ._real import read_advertisements_table
from ._registry import (
    ADVERTISEMENTS_D,
    ADVERTISEMENTS_N,
    Dataset,
    DatasetInfo,
    DatasetShapeError,
    UnverifiedDataWarning,
    dataset_info,
    is_available,
    list_datasets,
    load_dataset,
    prefetch,
)
from ._synthetic import (
    classification_score,
    make_classification,
    make_regression,
    make_sines,
    regression_function,
    sines_function,
    toeplitz_covariance,
)

__all__ = [
    "ADVERTISEMENTS_D",
    "ADVERTISEMENTS_N",
    "ENV_DATA_HOME",
    "ENV_MIRROR",
    "ENV_OFFLINE",
    "FILES",
    "ChecksumError",
    "Dataset",
    "DatasetInfo",
    "DatasetShapeError",
    "DatasetUnavailableError",
    "RemoteFile",
    "UnverifiedDataWarning",
    "classification_score",
    "dataset_info",
    "get_data_home",
    "get_mirror",
    "is_available",
    "list_datasets",
    "load_dataset",
    "make_classification",
    "make_regression",
    "make_sines",
    "prefetch",
    "read_advertisements_table",
    "regression_function",
    "sha256_file",
    "sines_function",
    "toeplitz_covariance",
]
