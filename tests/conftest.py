"""Shared fixtures of the test suite: the data mirror, the paper's synthetic data, no network.

- The dataset mirror is found only through ``$PROXBOOST_DATA_MIRROR`` (``make test`` sets it where
  a mirror exists); a test that needs real data asks for the ``data_mirror`` fixture and is skipped,
  with the reason, where the variable is unset.
- No test touches the network or the repository's ``data/`` cache: for the whole session
  downloads are disabled (``PROXBOOST_OFFLINE=1``, inherited by the subprocesses that tests start)
  and the cache is a temporary folder (``PROXBOOST_DATA_HOME``). Tests of the download path
  replace the downloader themselves.
- ``synthetic_data`` draws the paper's synthetic models through the package's own generators,
  so that no test re-implements them as a data source (the generator tests in
  ``test_datasets.py`` check them against independent formulas).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

MIRROR_ENV = "PROXBOOST_DATA_MIRROR"


@pytest.fixture(scope="session", autouse=True)
def _offline_session_cache(tmp_path_factory):
    """Downloads off and a temporary cache for the whole session (restored afterwards)."""
    saved = {k: os.environ.get(k) for k in ("PROXBOOST_OFFLINE", "PROXBOOST_DATA_HOME")}
    os.environ["PROXBOOST_OFFLINE"] = "1"
    os.environ["PROXBOOST_DATA_HOME"] = str(tmp_path_factory.mktemp("data-cache"))
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(scope="session")
def data_mirror() -> Path:
    """The dataset mirror named by ``$PROXBOOST_DATA_MIRROR``; skips the test where it is unset."""
    value = os.environ.get(MIRROR_ENV, "").strip()
    if not value:
        pytest.skip(f"needs the real data files: set {MIRROR_ENV} to a dataset mirror folder")
    path = Path(value).expanduser()
    if not path.is_dir():
        pytest.skip(f"{MIRROR_ENV}={value} is not a folder")
    return path


@pytest.fixture(scope="session")
def synthetic_data():
    """``synthetic_data(name, n, d, seed) -> (X, y)``: the paper's ``regression`` or
    ``classification`` model (classification needs d >= 18), drawn by the package's generator."""
    from proxboost.datasets import load_dataset

    def draw(name: str, n: int, d: int, seed: int = 0):
        X, y, _ = load_dataset(name, random_state=seed, n_samples=n, n_features=d)
        return X, y

    return draw
