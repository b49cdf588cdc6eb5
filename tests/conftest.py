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
- ``curve_frame`` builds a hand-made synthetic curve in the stored layout (claims, report and
  figure tests).
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
    ``classification`` model drawn by the package's generator (n, d None: the model's sizes;
    classification needs d >= 18)."""
    from proxboost.datasets import load_dataset

    def draw(name: str, n: int, d: int, seed: int = 0):
        X, y, _ = load_dataset(name, random_state=seed, n_samples=n, n_features=d)
        return X, y

    return draw


@pytest.fixture
def curve_frame():
    """Build one stored synthetic curve (the columns :func:`proxboost.curves.load_curves` returns).

    ``curve_frame(experiment, loss, algo, depth, train, test=None, step=None, seed=0, tie_rule=None,
    seconds=None, n_leaves=None, learning_rate=0.05)``; ``train`` (and ``test``) give C(f_t) for t = 0..T.
    """
    import math

    import numpy as np
    import pandas as pd

    def make(experiment, loss, algo, depth, train, test=None, step=None, seed=0, tie_rule=None, seconds=None,
             n_leaves=None, learning_rate=0.05):
        train = np.asarray(train, float)
        T = len(train) - 1
        df = pd.DataFrame({
            "iteration": np.arange(T + 1),
            "seconds": np.linspace(0, 1, T + 1) if seconds is None else np.asarray(seconds, float),
            "train_loss": train, "test_loss": train * 1.1 if test is None else np.asarray(test, float),
            "experiment": experiment, "dataset": "x", "loss": loss, "algo": algo, "max_depth": depth,
            "step": math.nan if step is None else step, "learning_rate": learning_rate, "n_estimators": T,
            "seed": seed, "engine": "exact", "commit": "c0ffee"})
        if tie_rule is not None:
            df["tie_rule"] = tie_rule
        if n_leaves is not None:
            df["n_leaves"] = np.asarray(n_leaves, float)
        return df
    return make


@pytest.fixture
def classification_rows():
    """Stored rows of one classification dataset as the full protocol writes them.

    ``classification_rows(dataset="spam", n_splits=20, seed=0)``: the six boosting methods and
    XGBoost under ``exponential`` and ``hinge`` (loss and error); random forests, LightGBM and
    HistGradientBoosting once per split, under ``exponential``, error only (test loss NaN). Values
    are random draws, different per loss, so a shared row paired with the wrong loss shows.
    """
    import numpy as np
    import pandas as pd

    boosting = ("gradient", "prox", "residual_gradient", "residual_prox", "accelerated_gradient",
                "accelerated_prox", "xgboost")
    once = ("random_forest", "lightgbm", "sklearn_hgb")

    def make(dataset="spam", n_splits=20, seed=0, protocol="paper/20splits/T1000"):
        rng = np.random.default_rng(seed)
        rows = []
        for loss in ("exponential", "hinge"):
            for algo in boosting + (once if loss == "exponential" else ()):
                for k in range(n_splits):
                    rows.append(dict(protocol=protocol, dataset=dataset, loss=loss, algo=algo, split=k,
                                     engine="exact" if algo in boosting[:6] else "none", task="classification",
                                     test_loss=rng.uniform(0.2, 0.6) if algo in boosting else np.nan,
                                     test_error=rng.uniform(0.04, 0.08), fit_seconds=1.0 + k, refit_seconds=0.5))
        return pd.DataFrame(rows)
    return make
