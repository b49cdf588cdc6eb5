"""Results store: identity spelling and hash, atomic writes, one row per identity and split, load,
skip of stored rows, provenance."""

import io
import json
import math
import os

import numpy as np
import pandas as pd
import pytest

from proxboost.experiments.store import results

IDENTITY = {"algo": "prox", "grid": {"learning_rate": [0.1, 0.3]}, "note": "x,y"}


def _row(split, algo="prox", identity=None, **extra):
    row = dict(
        protocol="smoke/2splits/T20",
        dataset="engel",
        loss="lad",
        algo=algo,
        engine="exact",
        split=split,
        task="regression",
        test_loss=0.5 + split,
        test_error=math.nan,
        val_loss=0.4,
        n_estimators=7,
        max_depth=3,
        learning_rate=0.1,
        step=1.0,
        max_features=math.nan,
        tau=math.nan,
        beta=math.nan,
        identity={**IDENTITY, "algo": algo} if identity is None else identity,
    )
    row.update(extra)
    return {**row, **results.provenance()}


KEY = ("smoke/2splits/T20", "engel", "lad", "prox", "exact")


# -- identity -------------------------------------------------------------------------------------
def test_canonical_json_one_spelling():
    a = {"b": [0.1, 2], "a": {"y": 1.0, "x": None}, "c": (True, "s")}
    b = {"c": [True, "s"], "a": {"x": None, "y": 1.0}, "b": [0.1, 2]}
    assert (
        results.canonical_json(a)
        == results.canonical_json(b)
        == '{"a":{"x":null,"y":1.0},"b":[0.1,2],"c":[true,"s"]}'
    )
    # floats spelled exactly (repr: reads back to the same double), 1 and 1.0 told apart
    x = 0.1 + 0.2
    assert json.loads(results.canonical_json({"x": x}))["x"] == x != 0.3
    assert results.canonical_json({"x": 1}) != results.canonical_json({"x": 1.0})
    assert results.canonical_json({"x": np.float64(0.25), "n": np.int64(3)}) == '{"n":3,"x":0.25}'
    for bad in (math.nan, math.inf):
        with pytest.raises(ValueError, match="non-finite"):
            results.canonical_json({"x": bad})
    with pytest.raises(TypeError, match="JSON values only"):
        results.canonical_json({"x": object()})
    h = results.identity_hash(a)
    assert h == results.identity_hash(results.canonical_json(b)) and len(h) == 64
    assert h != results.identity_hash({**a, "d": 0})


def test_atomic_write_csv(tmp_path):
    import io

    from proxboost.experiments.system.sealed import read_sealed

    df = pd.DataFrame({"a": [1, 2], "b": ["x", "y,z"]})
    path = results.atomic_write_csv(df, tmp_path / "deep" / "dir" / "f.csv")
    assert pd.read_csv(io.StringIO(read_sealed(path))).equals(df)  # sealed, then the same data
    assert [p.name for p in path.parent.iterdir()] == ["f.csv"]  # no temporary file left

    class Boom(pd.DataFrame):
        def to_csv(self, *args, **kwargs):
            raise RuntimeError("killed while writing")

    with pytest.raises(RuntimeError):
        results.atomic_write_csv(Boom({"a": [3]}), path)
    assert pd.read_csv(io.StringIO(read_sealed(path))).equals(df)  # the old content is intact
    assert [p.name for p in path.parent.iterdir()] == ["f.csv"]


def test_write_load_and_skip(tmp_path):
    assert results.load(tmp_path).empty
    assert list(results.load(tmp_path / "missing").columns) == list(results.ROW_COLUMNS)
    for k in (1, 0):
        results.write_row(tmp_path, _row(k))
    results.write_row(tmp_path, _row(0, algo="gradient", extra_column="kept"))
    # a stray temporary file and another CSV (e.g. curves) are ignored by load
    d = results.run_dir(tmp_path, *KEY, IDENTITY)
    (d / ".split-05.csv.abc.tmp").write_text("protocol,dataset\nhalf")
    (tmp_path / "curves.csv").write_text("x,y\n1,2\n")
    short = results.identity_hash(IDENTITY)[: results.HASH_LENGTH]
    assert d == tmp_path / "smoke" / "2splits" / "T20" / "engel" / "lad" / "prox" / "exact" / short
    assert sorted(p.name for p in d.glob("*.csv")) == ["split-00.csv", "split-01.csv"]
    assert results.stored_splits(tmp_path, *KEY, IDENTITY) == {0, 1}
    assert (
        results.stored_splits(tmp_path, *KEY, {**IDENTITY, "grid": {"learning_rate": [0.1]}})
        == set()
    )
    assert (
        results.stored_splits(
            tmp_path, "smoke/2splits/T20", "engel", "lad", "xgboost", "none", IDENTITY
        )
        == set()
    )
    # a file whose stored identity differs from its folder's (edited, or a hash collision) is not
    # reused
    other = results.write_row(tmp_path, _row(1, identity={"other": 1}))
    os.replace(other, d / "split-01.csv")
    assert results.stored_splits(tmp_path, *KEY, IDENTITY) == {0}
    results.write_row(tmp_path, _row(1))

    df = results.load(tmp_path)
    assert len(df) == 3
    assert list(df[["algo", "split"]].itertuples(index=False, name=None)) == [
        ("gradient", 0),
        ("prox", 0),
        ("prox", 1),
    ]
    assert list(df.columns[:6]) == list(results.KEY_COLUMNS)
    assert df.loc[2, "test_loss"] == 1.5 and math.isnan(df.loc[2, "test_error"])
    assert df.loc[0, "extra_column"] == "kept" and pd.isna(df.loc[1, "extra_column"])
    assert json.loads(df.loc[1, "identity"]) == IDENTITY  # stored in full
    assert df.loc[1, "identity_hash"] == results.identity_hash(IDENTITY)
    assert (
        "config" not in df.columns
        and not df.astype(str).apply(lambda c: c.str.contains(str(tmp_path))).any().any()
    )
    for col in (
        "commit",
        "python_version",
        "numpy_version",
        "scikit_learn_version",
        "xgboost_version",
        "proxboost_version",
        "created",
    ):
        assert isinstance(df.loc[0, col], str) and df.loc[0, col]

    # rewriting a key replaces its row: still one row per key
    results.write_row(tmp_path, _row(1, test_loss=9.0))
    df = results.load(tmp_path)
    assert len(df) == 3 and df.loc[2, "test_loss"] == 9.0
    with pytest.raises(ValueError, match="key columns"):
        results.write_row(tmp_path, {"dataset": "engel"})


def _identity_by_pandas(text):
    """The oracle: the first row's ``identity`` as pandas reads it (what the store read before)."""
    try:
        df = pd.read_csv(io.StringIO(text), usecols=lambda c: c == "identity", dtype=str)
    except (ValueError, pd.errors.ParserError):
        return None
    if "identity" not in df.columns or not len(df) or pd.isna(df["identity"].iloc[0]):
        return None
    return str(df["identity"].iloc[0])


def test_the_identity_is_read_as_pandas_reads_it(tmp_path):
    """The resume check's reading of a row file's identity (the csv module) gives pandas' value
    on written rows (quotes, commas and nested lists inside the JSON), on files whose identity
    is missing or empty, and on text that is not a row file."""
    identities = [IDENTITY, {"a": 'quote " inside', "b": [[1, 2], {"c": 'x,"y'}]}, {}]
    texts = []
    for k, identity in enumerate(identities):
        path = results.write_row(tmp_path, _row(k, identity=identity))
        texts.append(results.read_sealed(path))
    texts += [
        "a,b\n1,2\n",  # no identity column
        "identity,b\n",  # a header only
        "identity,b\n,2\n",  # an empty identity
        'b,identity\n2,"{""k"": 1}"\n3,other\n',  # not the first column; the first row's
        "",
        'identity\n"unterminated\n',
    ]
    for text in texts:
        assert results.identity_of_text(text) == _identity_by_pandas(text), text
    assert json.loads(results.identity_of_text(texts[1])) == identities[1]


def test_provenance(tmp_path):
    p = results.provenance()
    assert set(p) >= {
        "commit",
        "created",
        "python_version",
        "numpy_version",
        "scikit_learn_version",
        "xgboost_version",
        "pandas_version",
        "proxboost_version",
    }
    import xgboost

    assert p["xgboost_version"] == xgboost.__version__
    assert results.git_commit(str(tmp_path)) == "unknown"  # not a git checkout
    c = results.git_commit()
    assert c == "unknown" or len(c.removesuffix("-dirty")) == 40


def test_git_commit_takes_no_index_lock(tmp_path):
    """The commit stamp must not write .git/index: a sweep killed while a plain `git status`
    refreshed it left .git/index.lock behind, and the user's next `git commit` failed."""
    import subprocess
    import time

    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "f.py").write_text("x = 1\n")
    git("add", "f.py")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    index = tmp_path / ".git" / "index"
    before = index.read_bytes()
    # the same content with a new modification time: a status that refreshes rewrites the index
    later = time.time() + 5
    os.utime(tmp_path / "f.py", (later, later))
    commit = results.git_commit(str(tmp_path))
    assert len(commit) == 40  # clean: the content did not change
    assert index.read_bytes() == before
    assert not (tmp_path / ".git" / "index.lock").exists()
    # the oracle that the check can fail: plain `git status` does rewrite it here
    git("status", "--porcelain")
    assert index.read_bytes() != before


def test_load_default_path_is_results_in_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    results.write_row("results", _row(0))
    assert len(results.load()) == 1
    assert os.path.isfile(results.row_path("results", *KEY, IDENTITY, 0))


# -- NUMERICS_VERSION -----------------------------------------------------------------------------
#: (final training loss, final test loss) of small fits, per (loss, algo, engine), as computed by
#: this code for the current NUMERICS_VERSION (and a new one while it is being prepared). A change
#: that moves one of them changes stored numbers: raise results.NUMERICS_VERSION and add the new
#: values under it (an entry is removed once no stored row has its version).
REFERENCE = {
    2: {
        ("ls", "prox", "exact"): (0.2629655750304316, 1.8810889174318963),
        ("ls", "accelerated_prox", "exact"): (0.11956631138583855, 2.2306746690361594),
        ("ls", "prox", "hist"): (0.2629655750304316, 1.4402390654157766),
        ("ls", "accelerated_prox", "hist"): (0.11956631138583855, 1.7253975263541679),
        ("ls", "prox", "sklearn"): (0.2629655750304316, 1.8810889174318963),
        ("ls", "accelerated_prox", "sklearn"): (0.11956631138583855, 2.2306746690361594),
        ("lad", "prox", "exact"): (0.6963861030365396, 1.3411073747915938),
        ("lad", "accelerated_prox", "exact"): (0.46139063228093474, 1.6573344648410455),
        ("lad", "prox", "hist"): (0.6963861030365396, 1.3411073747915938),
        ("lad", "accelerated_prox", "hist"): (0.46139063228093474, 1.6573344648410455),
        ("lad", "prox", "sklearn"): (0.6798757012115182, 1.342701142724491),
        ("lad", "accelerated_prox", "sklearn"): (0.46139063228093474, 1.6573344648410455),
        ("pinball", "prox", "exact"): (0.2843113944297319, 0.3171998712227929),
        ("pinball", "accelerated_prox", "exact"): (0.2198733576243944, 0.2883807478327517),
        ("pinball", "prox", "hist"): (0.2685932524456335, 0.3103095810544888),
        ("pinball", "accelerated_prox", "hist"): (0.2289631523821139, 0.2894291434304789),
        ("pinball", "prox", "sklearn"): (0.28524613989374, 0.3171998712227929),
        ("pinball", "accelerated_prox", "sklearn"): (0.22432905849645746, 0.27826121656216535),
        ("hinge", "prox", "exact"): (0.13009705500000002, 0.6410349200000001),
        ("hinge", "accelerated_prox", "exact"): (0.051031817189416996, 0.6071573109440146),
        ("hinge", "prox", "hist"): (0.13898011062500001, 0.63358389675),
        ("hinge", "accelerated_prox", "hist"): (0.051031817189416996, 0.6221573109440145),
        ("hinge", "prox", "sklearn"): (0.13009705500000002, 0.6410349200000001),
        ("hinge", "accelerated_prox", "sklearn"): (0.051031817189416996, 0.6071573109440146),
        ("exponential", "prox", "exact"): (0.2896165678366014, 0.9641056023876144),
        ("exponential", "accelerated_prox", "exact"): (0.13000250547938097, 1.8510218001808076),
        ("exponential", "prox", "hist"): (0.2896165678366014, 1.0048824025854024),
        ("exponential", "accelerated_prox", "hist"): (0.13000250547938097, 1.8852447969696216),
        ("exponential", "prox", "sklearn"): (0.2896165678366014, 0.9641056023876144),
        ("exponential", "accelerated_prox", "sklearn"): (0.13000250547938097, 1.8510218001808076),
        ("logistic", "prox", "exact"): (0.18199806346700467, 0.8456917082134445),
        ("logistic", "accelerated_prox", "exact"): (0.07028359395950232, 1.3744595501827266),
        ("logistic", "prox", "hist"): (0.18199806346700467, 0.8946572395416016),
        ("logistic", "accelerated_prox", "hist"): (0.07028359395950232, 1.5067927603992561),
        ("logistic", "prox", "sklearn"): (0.18199806346700467, 0.8456917082134445),
        ("logistic", "accelerated_prox", "sklearn"): (0.07028359395950232, 1.3744595501827266),
    },
    3: {
        ("ls", "prox", "exact"): (0.2629655750304316, 1.8810889174318963),
        ("ls", "accelerated_prox", "exact"): (0.11956631138583866, 2.23067466903616),
        ("ls", "prox", "hist"): (0.2629655750304316, 1.4402390654157766),
        ("ls", "accelerated_prox", "hist"): (0.11956631138583866, 1.6474960620071617),
        ("ls", "prox", "sklearn"): (0.2629655750304316, 1.8810889174318963),
        ("ls", "accelerated_prox", "sklearn"): (0.11956631138583866, 2.2068782620951954),
        ("lad", "prox", "exact"): (0.6963861030365397, 1.3411073747915936),
        ("lad", "accelerated_prox", "exact"): (0.4613906322809348, 1.6573344648410455),
        ("lad", "prox", "hist"): (0.6963861030365397, 1.3411073747915936),
        ("lad", "accelerated_prox", "hist"): (0.4613906322809348, 1.6573344648410455),
        ("lad", "prox", "sklearn"): (0.6798757012115182, 1.3427011427244913),
        ("lad", "accelerated_prox", "sklearn"): (0.4613906322809348, 1.6573344648410455),
        ("pinball", "prox", "exact"): (0.28524613989374, 0.3171998712227929),
        ("pinball", "accelerated_prox", "exact"): (0.22432905849645746, 0.27826121656216535),
        ("pinball", "prox", "hist"): (0.2685932524456335, 0.3103095810544888),
        ("pinball", "accelerated_prox", "hist"): (0.2289631523821139, 0.2894291434304789),
        ("pinball", "prox", "sklearn"): (0.28524613989374, 0.3171998712227929),
        ("pinball", "accelerated_prox", "sklearn"): (0.22432905849645746, 0.27826121656216535),
        ("hinge", "prox", "exact"): (0.13009705500000002, 0.6410349200000001),
        ("hinge", "accelerated_prox", "exact"): (0.051031817189416996, 0.6071573109440146),
        ("hinge", "prox", "hist"): (0.13898011062500001, 0.63358389675),
        ("hinge", "accelerated_prox", "hist"): (0.051031817189416996, 0.6221573109440145),
        ("hinge", "prox", "sklearn"): (0.13009705500000002, 0.6410349200000001),
        ("hinge", "accelerated_prox", "sklearn"): (0.051031817189416996, 0.6071573109440146),
        ("exponential", "prox", "exact"): (0.2896165678366014, 0.9641056023876144),
        ("exponential", "accelerated_prox", "exact"): (0.13000250547938097, 1.8510218001808085),
        ("exponential", "prox", "hist"): (0.2896165678366014, 1.0048824025854024),
        ("exponential", "accelerated_prox", "hist"): (0.13000250547938097, 1.8852447969696222),
        ("exponential", "prox", "sklearn"): (0.2896165678366014, 0.9641056023876144),
        ("exponential", "accelerated_prox", "sklearn"): (0.13000250547938097, 1.8510218001808085),
        ("logistic", "prox", "exact"): (0.18199806346700467, 0.8456917082134445),
        ("logistic", "accelerated_prox", "exact"): (0.07028359395950232, 1.3744595501827266),
        ("logistic", "prox", "hist"): (0.18199806346700467, 0.8946572395416016),
        ("logistic", "accelerated_prox", "hist"): (0.07028359395950232, 1.5067927603992561),
        ("logistic", "prox", "sklearn"): (0.18199806346700467, 0.8456917082134445),
        ("logistic", "accelerated_prox", "sklearn"): (0.07028359395950232, 1.3744595501827266),
    },
}


@pytest.mark.slow
def test_numerics_version_is_pinned_by_reference_values():
    from proxboost.engines import ENGINES
    from proxboost.experiments.datasets import load_dataset
    from proxboost.experiments.plan.methods import make_estimator
    from proxboost.losses import make_loss

    assert results.NUMERICS_VERSION in REFERENCE, (
        "add the reference values of the new NUMERICS_VERSION"
    )
    reference = REFERENCE[results.NUMERICS_VERSION]
    assert {engine for _, _, engine in reference} == set(ENGINES), (
        "reference values for every engine"
    )
    for (loss_name, algo, engine), expected in reference.items():
        loss = make_loss(loss_name, tau=0.9)
        X, y, _ = load_dataset(loss.task, n_samples=120, n_features=20, random_state=0)
        est = make_estimator(
            loss,
            algo,
            engine=engine,
            n_estimators=10,
            max_depth=2,
            learning_rate=0.3,
            step=1.0,
            random_state=0,
        ).fit(X[:80], y[:80], eval_set=(X[80:], y[80:]))
        got = (est.train_loss_[-1], est.eval_loss_[-1])
        assert got == pytest.approx(expected, rel=1e-12, abs=0), (
            f"{loss_name}/{algo}/{engine}: the computed numbers changed: raise"
            " results.NUMERICS_VERSION (stored rows and curves of the old version are then never"
            " reused) and add its values here"
        )


def test_numpy_runs_its_avx2_path_as_the_makefile_and_run_py_set_it():
    """The machine-independent numbers (docs/results.md): the test process runs without NumPy's
    AVX-512 kernels, and the Makefile, run.py and conftest.py disable the same ones."""
    import re
    from pathlib import Path

    from numpy._core._multiarray_umath import __cpu_features__

    root = Path(__file__).resolve().parents[1]
    value = os.environ["NPY_DISABLE_CPU_FEATURES"]
    assert value.split() == ["X86_V4", "AVX512_ICL", "AVX512_SPR"]
    assert not any(__cpu_features__.get(name) for name in value.split())
    makefile = re.search(
        r"export NPY_DISABLE_CPU_FEATURES \?= (.+)", (root / "Makefile").read_text()
    )
    assert makefile and makefile.group(1).strip() == value
    for path in (root / "run.py", root / "tests" / "conftest.py"):
        assert f'os.environ.setdefault("NPY_DISABLE_CPU_FEATURES", "{value}")' in path.read_text()
