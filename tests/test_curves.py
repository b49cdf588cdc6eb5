"""The synthetic experiments (proxboost.experiments.fits.curves): the runs of their Hydra configs,
stored curves with identity and provenance, resumability."""

import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from proxboost.experiments.fits.curves import run_curves, run_one
from proxboost.experiments.plan.curves_plan import RunSpec, curve_path, specs_from_config
from proxboost.experiments.store.results import load_curves, load_intro, read_curve
from proxboost.experiments.system.sealed import read_sealed

ROOT = Path(__file__).resolve().parents[1]


def _specs(experiment, *overrides):
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base=None):
        cfg = compose(config_name="config", overrides=[f"+experiment={experiment}", *overrides])
    assert cfg.results_dir == "results"  # named experiments write the committed reproduction
    return specs_from_config(
        OmegaConf.to_container(cfg.synthetic, resolve=True), engine=cfg.engine.name
    )


SEEDS = {0, 1, 2, 3, 4}


@pytest.mark.slow
def test_convergence_settings():
    specs = _specs("convergence")
    assert len(specs) == 6 * 2 * 4 * 5 == len({curve_path("r", s) for s in specs})
    assert {(s.dataset, s.loss) for s in specs} == {
        ("regression", "ls"),
        ("regression", "lad"),
        ("regression", "pinball"),
        ("classification", "exponential"),
        ("classification", "logistic"),
        ("classification", "hinge"),
    }
    assert {s.max_depth for s in specs} == {3, 15}
    assert {s.algo for s in specs} == {"gradient", "prox", "residual_gradient", "residual_prox"}
    assert all(s.n_estimators == 1000 and s.learning_rate == 0.05 and s.beta == 1.0 for s in specs)
    assert {s.tau for s in specs if s.loss == "pinball"} == {0.9}
    assert {s.seed for s in specs} == SEEDS
    assert {s.step for s in specs if s.algo.endswith("prox")} == {1.0}
    assert {s.step for s in specs if s.algo.endswith("gradient")} == {None}
    assert {s.tie_rule for s in specs} == {"midpoint"}


@pytest.mark.slow
def test_convergence_authors_is_convergence_for_the_losses_with_ties_under_the_authors_rule():
    """convergence_authors composes convergence: the same runs, restricted to lad, hinge and
    pinball, with only the tie rule changed."""
    from dataclasses import replace

    ties = {"lad", "hinge", "pinball"}
    authors = _specs("convergence_authors")
    expected = [replace(s, tie_rule="authors") for s in _specs("convergence") if s.loss in ties]
    assert authors == expected and len(authors) == 3 * 2 * 4 * 5


@pytest.mark.slow
def test_specs_cover_every_combination_once_gradient_algorithms_without_step():
    """An independent count: prox-type algorithms once per λ, gradient ones once in all."""
    specs = _specs("proximal_step")
    n_prox, n_grad = 3, 3  # prox, residual_prox, accelerated_prox / their gradient counterparts
    per_cell = len(SEEDS) * 2  # seeds x tie rules
    assert len(specs) == len(set(specs)) == 2 * 1 * (n_prox * 5 + n_grad) * per_cell


@pytest.mark.slow
def test_convergence_authors_repeats_the_losses_with_ties_under_the_other_rule():
    default, authors = _specs("convergence"), _specs("convergence_authors")
    assert {s.tie_rule for s in authors} == {"authors"}
    assert {s.loss for s in authors} == {"lad", "hinge", "pinball"}
    # the same runs as the default experiment's, but for the rule: no collision with them
    key = lambda s: (s.dataset, s.loss, s.algo, s.max_depth, s.step, s.seed, s.tau)  # noqa: E731
    assert {key(s) for s in authors} == {
        key(s) for s in default if s.loss in ("lad", "hinge", "pinball")
    }
    assert not {curve_path("r", s) for s in authors} & {curve_path("r", s) for s in default}


@pytest.mark.slow
def test_seeds_and_tie_rules_multiply_the_runs_without_collisions():
    specs = _specs(
        "convergence", "synthetic.seed=[0,1,2,3,4]", "synthetic.tie_rule=[midpoint,authors]"
    )
    assert len(specs) == 48 * 5 * 2
    assert len({(s.name, s.dataset, s.loss, s.algo) for s in specs}) == len(specs)


@pytest.mark.slow
def test_proximal_step_settings():
    specs = _specs("proximal_step")
    assert len(specs) == 2 * (3 + 3 * 5) * 5 * 2 == len({curve_path("r", s) for s in specs})
    assert {s.loss for s in specs} == {"lad", "hinge"}
    assert {s.step for s in specs if s.algo.endswith("prox")} == {0.01, 0.1, 1.0, 10.0, 100.0}
    assert all(
        s.max_depth == 3 and s.n_estimators == 1000 and s.learning_rate == 0.05 for s in specs
    )
    assert {s.algo for s in specs} == {
        "gradient",
        "prox",
        "residual_gradient",
        "residual_prox",
        "accelerated_gradient",
        "accelerated_prox",
    }
    assert {s.seed for s in specs} == SEEDS and {s.tie_rule for s in specs} == {
        "midpoint",
        "authors",
    }


@pytest.mark.slow
def test_intro_settings():
    specs = _specs("intro", "synthetic.seed=[0]", "synthetic.tie_rule=[midpoint]")
    assert [
        (s.dataset, s.loss, s.algo, s.max_depth, s.n_estimators, s.learning_rate, s.step)
        for s in specs
    ] == [
        ("sines", "lad", "gradient", 2, 500, 0.05, None),
        ("sines", "lad", "prox", 2, 500, 0.05, 1.0),
    ]
    assert all(s.grid_predictions > 0 for s in specs)
    assert len(_specs("intro")) == 2 * 5 * 2


@pytest.mark.slow
def test_intro_sensitivity_contains_the_stated_intro_runs():
    stated = {curve_path("r", s) for s in _specs("intro")}
    cell = _specs("intro_sensitivity")  # the experiment's own values: nu = 0.05, sigma = 0.15
    assert {s.step for s in cell if s.algo == "prox"} == {1.0, 100.0}
    assert stated <= {curve_path("r", s) for s in cell}


@pytest.mark.slow
def test_intro_through_run_py_writes_curves_with_identity_and_rerun_skips(tmp_path):
    cmd = [
        sys.executable,
        str(ROOT / "run.py"),
        "+experiment=intro",
        "synthetic.n_estimators=5",
        "synthetic.seed=[0]",
        "synthetic.tie_rule=[midpoint]",
        f"results_dir={tmp_path / 'res'}",
        f"hydra.run.dir={tmp_path / 'run'}",
        "progress=false",
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    files = sorted((tmp_path / "res" / "synthetic" / "intro").rglob("*.csv"))
    curves = [
        f
        for f in files
        if not f.name.endswith(".predictions.csv") and not f.name.startswith("data")
    ]
    assert len(curves) == 2
    raw = pd.read_csv(io.StringIO(read_sealed(curves[0])))  # the file as stored, unsealed
    assert list(raw.columns[:5]) == ["iteration", "seconds", "train_loss", "test_loss", "n_leaves"]
    assert raw["iteration"].tolist() == list(range(6))  # T = 5
    for col in (
        "commit",
        "numpy_version",
        "scikit_learn_version",
        "created",
        "dataset",
        "algo",
        "max_depth",
        "learning_rate",
        "n_estimators",
        "seed",
        "engine",
        "tie_rule",
        "identity",
        "identity_hash",
    ):
        assert col in raw.columns and pd.notna(raw[col].iloc[0]), col
    assert np.all(np.diff(raw["seconds"]) >= 0) and np.all(np.isfinite(raw["train_loss"]))
    assert np.all(raw["n_leaves"].iloc[1:] >= 1) and np.all(
        raw["n_leaves"].iloc[1:] <= 4
    )  # depth 2
    full = read_curve(curves[0])
    assert full["commit"].notna().all() and (full["loss"] == "lad").all()
    c, p, d = load_intro(tmp_path / "res")
    assert set(c["algo"]) == {"gradient", "prox"} and set(p["algo"]) == {"gradient", "prox"}
    assert (
        len(d) == 1000
        and set(d["part"]) == {"train", "test"}
        and (d["part"] == "train").sum() == 500
    )
    mtimes = [f.stat().st_mtime_ns for f in files]
    again = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert again.returncode == 0, again.stderr
    assert "2 already stored, 0 to do" in again.stdout + again.stderr
    assert [f.stat().st_mtime_ns for f in files] == mtimes


def test_run_one_resumes_after_interruption(tmp_path):
    specs = [
        RunSpec(
            "convergence",
            "regression",
            "lad",
            algo,
            max_depth=2,
            learning_rate=0.1,
            n_estimators=3,
            step=1.0,
            dataset_params={"n_samples": 60, "n_features": 5},
        )
        for algo in ("gradient", "prox")
    ]
    assert run_one(specs[0], tmp_path) is not None  # "killed" after the first run
    run_curves("convergence", specs, tmp_path, progress=False, log=lambda *_: None)
    df = load_curves(tmp_path, "convergence")
    assert sorted(df.groupby("algo").size().to_dict().items()) == [("gradient", 4), ("prox", 4)]
    assert df.loc[df["algo"] == "gradient", "step"].isna().all()  # gradient does not use λ
    assert (df.loc[df["algo"] == "prox", "step"] == 1.0).all()
    assert not list(tmp_path.rglob("*.tmp"))
    assert run_one(specs[1], tmp_path) is None  # stored: skipped


def test_curve_identity_keeps_seeds_tie_rules_and_settings_apart(tmp_path):
    from dataclasses import replace

    from proxboost.experiments.plan.curves_plan import curve_identity, is_stored

    base = RunSpec(
        "convergence",
        "regression",
        "lad",
        "prox",
        max_depth=2,
        learning_rate=0.1,
        n_estimators=3,
        step=1.0,
        dataset_params={"n_samples": 60, "n_features": 5},
    )
    variants = [
        replace(base, seed=1),
        replace(base, engine="hist"),
        replace(base, step=2.0),
        replace(base, learning_rate=0.1 + 1e-12),
        replace(base, n_estimators=4),
        replace(base, dataset_params={"n_samples": 61, "n_features": 5}),
        replace(base, tie_rule="authors"),
    ]
    paths = {curve_path(tmp_path, s) for s in [base, *variants]}
    assert len(paths) == len(variants) + 1
    assert len({curve_identity(s) for s in [base, *variants]}) == len(variants) + 1
    path = run_one(base, tmp_path)
    raw = pd.read_csv(io.StringIO(read_sealed(path)))
    assert raw.loc[0, "identity"] == curve_identity(base) and raw.loc[0, "tie_rule"] == "midpoint"
    assert "n_leaves" in raw.columns and np.isnan(raw.loc[0, "n_leaves"])
    assert is_stored(tmp_path, base) and not any(is_stored(tmp_path, s) for s in variants)
    assert '"seed":0' in raw.loc[0, "identity"] and str(tmp_path) not in raw.loc[0, "identity"]
