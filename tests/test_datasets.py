"""Tests of proxboost.datasets: generators, real loaders, files, cache.

No test touches the network (``urlopen`` is replaced) or the repository's ``data/``
(``tmp_path`` is the cache). Real datasets are read from the mirror named by
``$PROXBOOST_DATA_MIRROR`` (the ``data_mirror`` fixture of conftest.py); tests needing it are
skipped with a reason where it is unset.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from urllib.error import URLError

import numpy as np
import pytest
from scipy.stats import norm

import proxboost.datasets as ds
from proxboost.datasets import (
    ChecksumError,
    DatasetShapeError,
    DatasetUnavailableError,
    UnverifiedDataWarning,
    dataset_info,
    is_available,
    list_datasets,
    load_dataset,
)
from proxboost.datasets import _files
from proxboost.datasets.__main__ import main as cli_main

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


@pytest.fixture(autouse=True)
def _isolated(monkeypatch):
    """No network, no environment-provided cache or mirror, a clean unreachable-host memo."""

    def no_network(*args, **kwargs):
        raise URLError("network disabled in tests")

    monkeypatch.setattr(_files, "urlopen", no_network)
    monkeypatch.setattr(_files, "_UNREACHABLE_HOSTS", set())
    for var in ("PROXBOOST_DATA_MIRROR", "PROXBOOST_DATA_HOME", "PROXBOOST_OFFLINE"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def cache(tmp_path) -> Path:
    return tmp_path / "cache"


def _mirror_with(source: Path, tmp_path: Path, dataset: str, name: str, corrupt: bool = False) -> Path:
    """A temporary mirror holding one file of the mirror ``source`` (one byte changed if corrupt)."""
    mirror = tmp_path / "mirror"
    (mirror / dataset).mkdir(parents=True)
    data = bytearray((source / dataset / name).read_bytes())
    if corrupt:
        data[len(data) // 2] ^= 0x01
    (mirror / dataset / name).write_bytes(bytes(data))
    return mirror


def _files_in(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


# ---------------------------------------------------------------------------- registry


def test_registry_lists_all_datasets_with_info():
    names = list_datasets()
    assert set(names) == {"synthetic", *SYNTHETIC, *REAL}
    for name, (n, d, task) in REAL.items():
        info = dataset_info(name)
        assert (info.name, info.n, info.d, info.task, info.synthetic) == (name, n, d, task, False)
        assert info.source and info.licence and info.files
    assert dataset_info("advertisements").verified is False
    assert dataset_info("regression").n == 800 and dataset_info("regression").d == 100
    assert dataset_info("classification").n == 1500 and dataset_info("classification").d == 50
    assert dataset_info("sines").n == 1000 and dataset_info("sines").d == 1
    assert dataset_info("synthetic").task == "any" and dataset_info("synthetic").synthetic
    assert set(list_datasets(task="classification")) == {
        "synthetic", "classification", "adult", "advertisements", "spam"
    }
    assert set(list_datasets(synthetic=True)) == {"synthetic", *SYNTHETIC}


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


def test_file_table_matches_mirror_manifest(data_mirror):
    manifest = json.loads((data_mirror / "manifest.json").read_text())["datasets"]
    assert set(ds.FILES) == set(manifest)
    for dataset, files in ds.FILES.items():
        listed = {f["name"]: f for f in manifest[dataset]["files"]}
        for f in files:
            ref = listed[f.name]
            assert ref["public"] and f.sha256 == ref["sha256"] and list(f.urls) == ref["urls"]


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
    _, y0, _ = load_dataset("regression", random_state=4, n_samples=100_000, n_features=4,
                            noise_std=0.0)
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
    assert load_dataset("synthetic", task="regression", n_samples=None, n_features=None,
                        random_state=0).X.shape == (800, 100)
    with pytest.raises(ValueError, match="task="):
        load_dataset("synthetic")
    with pytest.raises(ValueError, match="regression dataset"):
        load_dataset("regression", task="classification")
    assert is_available("synthetic") and all(is_available(n) for n in SYNTHETIC)


# ---------------------------------------------------------------------------- real data


@pytest.mark.parametrize("name", [n for n in REAL if n != "advertisements"])
def test_real_dataset_loads_from_mirror(name, cache, data_mirror):
    if not is_available(name, mirror=data_mirror, data_home=cache):
        pytest.skip(f"{name} is not in the mirror {data_mirror}")
    n, d, task = REAL[name]
    X, y, info = load_dataset(name, mirror=data_mirror, data_home=cache)
    assert X.shape == (n, d) and y.shape == (n,)
    assert X.dtype == y.dtype == np.float64
    assert np.isfinite(X).all() and np.isfinite(y).all()
    assert (info.task, info.n, info.d, info.verified, info.origin) == (task, n, d, True, "mirror")
    assert len(info.feature_names) == d
    if task == "classification":
        assert set(np.unique(y)) == {-1.0, 1.0}
    # now cached: read from the cache, same data, the mirror is not needed any more
    X2, y2, info2 = load_dataset(name, data_home=cache)
    assert info2.origin == "cache"
    np.testing.assert_array_equal(X2, X)
    np.testing.assert_array_equal(y2, y)


def test_real_label_and_encoding_details(cache, data_mirror):
    if not is_available("adult", mirror=data_mirror):
        pytest.skip("adult not in the mirror")
    X, y, info = load_dataset("adult", mirror=data_mirror, data_home=cache)
    assert "education" not in info.feature_names and "education-num" in info.feature_names
    assert int((y == 1).sum()) == 7508  # >50K among the 30162 complete rows of adult.data
    sex = X[:, info.feature_names.index("sex")]
    assert set(np.unique(sex)) == {0.0, 1.0}  # integer codes, 'Female' < 'Male'
    spam = load_dataset("spam", mirror=data_mirror, data_home=cache)
    assert int((spam.y == 1).sum()) == 1813


def test_real_dataset_rejects_unknown_params(cache):
    with pytest.raises(TypeError, match="takes no parameters"):
        load_dataset("engel", data_home=cache, n_samples=10)


def test_corrupted_mirror_copy_is_refused_and_not_cached(tmp_path, cache, data_mirror):
    mirror = _mirror_with(data_mirror, tmp_path, "crabs", "crabs.csv", corrupt=True)
    with pytest.raises(ChecksumError) as err:
        load_dataset("crabs", mirror=mirror, data_home=cache)
    expected = ds.FILES["crabs"][0].sha256
    message = str(err.value)
    assert "crabs.csv" in message and expected in message and err.value.actual in message
    assert err.value.actual != expected
    assert _files_in(cache) == []  # neither the file nor a temporary part


def test_corrupted_cache_file_is_refused(cache, data_mirror):
    (cache / "engel").mkdir(parents=True)
    data = bytearray((data_mirror / "engel" / "engel.csv").read_bytes())
    data[100] ^= 0x01
    (cache / "engel" / "engel.csv").write_bytes(bytes(data))
    with pytest.raises(ChecksumError, match="Delete .*engel.csv"):
        load_dataset("engel", mirror=data_mirror, data_home=cache)


def test_missing_file_gives_instructive_error(tmp_path, cache):
    empty_mirror = tmp_path / "empty_mirror"
    empty_mirror.mkdir()
    with pytest.raises(DatasetUnavailableError) as err:
        load_dataset("crabs", mirror=empty_mirror, data_home=cache)
    message = str(err.value)
    assert "crabs.csv" in message
    assert "https://vincentarelbundock.github.io/Rdatasets/csv/MASS/crabs.csv" in message
    assert str(cache / "crabs") in message
    assert "network disabled in tests" in message  # the download was tried and failed
    assert isinstance(err.value, FileNotFoundError)
    assert not is_available("crabs", mirror=empty_mirror, data_home=cache)
    with pytest.raises(DatasetUnavailableError, match="download disabled"):
        load_dataset("crabs", data_home=cache, download=False)
    assert _files_in(cache) == []


def test_unreachable_host_is_not_retried(cache, monkeypatch):
    calls = []

    def failing(request, timeout):
        calls.append(request.full_url)
        raise URLError("Name or service not known")

    monkeypatch.setattr(_files, "urlopen", failing)
    for _ in range(2):
        with pytest.raises(DatasetUnavailableError):
            load_dataset("spam", data_home=cache)
    assert len(calls) == 2  # the UCI host and the GitHub host, once each


class _Response(io.BytesIO):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def test_download_is_checked_and_atomic(cache, monkeypatch, data_mirror):
    good = (data_mirror / "engel" / "engel.csv").read_bytes()
    served = {}

    def fake_urlopen(request, timeout):
        assert timeout <= 30
        return _Response(served[request.full_url])

    monkeypatch.setattr(_files, "urlopen", fake_urlopen)
    canonical, pinned = ds.FILES["engel"][0].urls
    served.update({canonical: good[:-1] + b"!", pinned: good[:-1] + b"?"})
    with pytest.raises(ChecksumError, match="engel.csv"):
        load_dataset("engel", data_home=cache)
    assert _files_in(cache) == []
    served[pinned] = good  # canonical serves other bytes, the pinned copy the right ones
    X, y, info = load_dataset("engel", data_home=cache)
    assert info.origin == "download" and X.shape == (235, 1)
    assert [p.name for p in _files_in(cache)] == ["engel.csv"]


def test_failure_mid_copy_leaves_no_partial_file(tmp_path, cache, monkeypatch, data_mirror):
    mirror = _mirror_with(data_mirror, tmp_path, "spam", "spambase.data")
    real_iter = _files._iter_file

    def broken(path):
        chunks = real_iter(path)
        yield next(chunks)
        raise OSError("disk failure in the middle of the copy")

    monkeypatch.setattr(_files, "_iter_file", broken)
    with pytest.raises(OSError, match="middle of the copy"):
        load_dataset("spam", mirror=mirror, data_home=cache)
    assert _files_in(cache) == []
    monkeypatch.setattr(_files, "_iter_file", real_iter)
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


def test_advertisements_parses_uci_format(cache):
    X_expected, y_expected = _write_uci_ad_file(cache / "advertisements" / "ad.data")
    n, d = X_expected.shape
    with pytest.warns(UnverifiedDataWarning, match="no known checksum"):
        X, y, info = load_dataset("advertisements", data_home=cache, expected_n=n, expected_d=d)
    np.testing.assert_allclose(X, X_expected)
    np.testing.assert_array_equal(y, y_expected)
    assert info.verified is False and (info.n, info.d) == (n, d)
    assert info.params == {"expected_n": n, "expected_d": d}
    assert is_available("advertisements", data_home=cache)


def test_advertisements_size_check(tmp_path, cache):
    X_expected, _ = _write_uci_ad_file(cache / "advertisements" / "ad.data")
    n, d = X_expected.shape
    with pytest.raises(DatasetShapeError, match=r"expected \(2359, 1558\)"):
        load_dataset("advertisements", data_home=cache)  # the paper's size: refused
    with pytest.raises(DatasetShapeError):
        load_dataset("advertisements", data_home=cache, expected_n=n + 1, expected_d=d)
    assert (cache / "advertisements" / "ad.data").is_file()  # a user's file is left in place
    # a file fetched from a mirror and refused is not left in the cache
    mirror, other_cache = tmp_path / "mirror", tmp_path / "cache2"
    shutil.copytree(cache, mirror)
    with pytest.raises(DatasetShapeError):
        load_dataset("advertisements", mirror=mirror, data_home=other_cache)
    assert _files_in(other_cache) == []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnverifiedDataWarning)
        loaded = load_dataset("advertisements", mirror=mirror, data_home=other_cache,
                              expected_n=n, expected_d=d)
    assert loaded.info.origin == "mirror" and loaded.X.shape == (n, d)


def test_read_only_cache_reads_mirror_in_place(tmp_path, cache, monkeypatch):
    X_expected, _ = _write_uci_ad_file(tmp_path / "mirror" / "advertisements" / "ad.data")
    mirror = tmp_path / "mirror"
    monkeypatch.setattr(_files.os, "access", lambda path, mode: False)
    with pytest.warns(UserWarning, match="not writable"):
        with pytest.raises(DatasetShapeError):
            load_dataset("advertisements", mirror=mirror, data_home=cache)
    assert (mirror / "advertisements" / "ad.data").is_file()  # never deletes a mirror file
    with pytest.warns(UserWarning, match="not writable"), pytest.warns(UnverifiedDataWarning):
        X, _, info = load_dataset("advertisements", mirror=mirror, data_home=cache,
                                  expected_n=X_expected.shape[0], expected_d=X_expected.shape[1])
    assert info.paths == (str(mirror / "advertisements" / "ad.data"),) and _files_in(cache) == []


def test_advertisements_absence_is_explained(cache):
    with pytest.raises(DatasetUnavailableError) as err:
        load_dataset("advertisements", data_home=cache)
    message = str(err.value)
    assert "ad.data" in message and "NOT in the project's mirror" in message
    assert ds.FILES["advertisements"][0].urls[0] in message
    assert ds.FILES["advertisements"][0].urls[0].startswith("https://archive.ics.uci.edu/")
    assert str(cache / "advertisements") in message and "2359" in message


# ---------------------------------------------------------------------------- CLI, configs


def test_cli_lists_and_prefetches(tmp_path, cache, capsys, data_mirror):
    assert cli_main(["--data-home", str(cache), "--mirror", str(data_mirror)]) == 0
    out = capsys.readouterr().out
    for name in list_datasets():
        assert name in out
    assert "MISSING" in out or is_available("advertisements", mirror=data_mirror)
    mirror = _mirror_with(data_mirror, tmp_path, "crabs", "crabs.csv")
    assert cli_main(["--data-home", str(cache), "--mirror", str(mirror), "--prefetch"]) == 0
    out = capsys.readouterr().out
    assert "crabs: ok (mirror)" in out and "spam: unavailable, skipped" in out
    assert [p.name for p in _files_in(cache)] == ["crabs.csv"]
    bad = _mirror_with(data_mirror, tmp_path / "bad", "engel", "engel.csv", corrupt=True)
    assert cli_main(["--data-home", str(cache), "--mirror", str(bad), "--prefetch"]) == 1
    assert "engel: REFUSED" in capsys.readouterr().out
    assert not (cache / "engel").exists() or _files_in(cache / "engel") == []


def test_cli_runs_as_module(tmp_path):
    env = {**os.environ, "PROXBOOST_DATA_HOME": str(tmp_path), "PROXBOOST_OFFLINE": "1"}
    env.pop("PROXBOOST_DATA_MIRROR", None)
    result = subprocess.run(
        [sys.executable, "-m", "proxboost.datasets"], capture_output=True, text=True,
        env=env, timeout=60, check=True,
    )
    assert "whitewine" in result.stdout and "licence" in result.stdout


def test_hydra_dataset_configs():
    from omegaconf import OmegaConf

    folder = REPO / "conf" / "dataset"
    configs = {p.stem: OmegaConf.to_container(OmegaConf.load(p)) for p in folder.glob("*.yaml")}
    assert set(configs) == set(list_datasets())
    for stem, cfg in configs.items():
        assert cfg["name"] == stem
        assert set(cfg) <= {"name", "params"}
    for name in (*SYNTHETIC, "synthetic"):
        params = configs[name].get("params") or {}
        task = {"task": "regression"} if name == "synthetic" else {}
        X, _, info = load_dataset(name, random_state=0, **params, **task)
        assert X.shape == (info.n, info.d) == (
            dataset_info(info.name).n, dataset_info(info.name).d
        )
