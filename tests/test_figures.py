"""Every figure of SPEC §6 from small results tables built here (nothing is fitted)."""

import math

import numpy as np
import pandas as pd
import pytest

from proxboost import figures
from proxboost.results import write_row

T = 40


def _curve(experiment, dataset, loss, algo, depth, step, rate):
    t = np.arange(T + 1)
    train = np.exp(-rate * t) + 0.05
    return pd.DataFrame({
        "iteration": t, "seconds": 0.01 * t, "train_loss": train, "test_loss": train + 0.1,
        "experiment": experiment, "dataset": dataset, "loss": loss, "algo": algo, "max_depth": depth,
        "step": math.nan if algo.endswith("gradient") else step, "learning_rate": 0.05, "n_estimators": T,
        "seed": 0, "engine": "exact", "commit": "c0ffee"})


@pytest.fixture(scope="module")
def curves():
    runs = []
    for k, (dataset, loss) in enumerate((("regression", "ls"), ("classification", "exponential"),
                                         ("regression", "lad"), ("classification", "hinge"))):
        for depth in (3, 15):
            for j, algo in enumerate(("gradient", "prox", "residual_gradient", "residual_prox")):
                if (loss, depth, algo) == ("hinge", 15, "residual_prox"):
                    continue                                   # a missing run is reported, not fatal
                runs.append(_curve("convergence", dataset, loss, algo, depth, 1.0, 0.01 * (1 + j + depth / 5)))
    for dataset, loss in (("regression", "lad"), ("classification", "hinge")):
        for algo in ("gradient", "residual_gradient", "accelerated_gradient"):
            runs.append(_curve("proximal_step", dataset, loss, algo, 3, None, 0.02))
        for algo in ("prox", "residual_prox", "accelerated_prox"):
            for i, s in enumerate((0.01, 0.1, 1.0, 10.0, 100.0)):
                runs.append(_curve("proximal_step", dataset, loss, algo, 3, s, 0.01 * (i + 1)))
    for algo in ("gradient", "prox"):
        runs.append(_curve("intro", "sines", "lad", algo, 2, 1.0, 0.05))
    return pd.concat(runs, ignore_index=True)


@pytest.fixture(scope="module")
def real():
    rng = np.random.default_rng(0)
    rows = []
    plan = [("engel", ("ls", "lad", "pinball"), "paper/20splits/T1000", 20),
            ("crabs", ("ls", "lad"), "reduced/4splits/T200", 4),          # pinball missing
            ("spam", ("exponential", "hinge"), "reduced/4splits/T200", 4)]  # adult, advertisements missing
    for ds, losses, proto, n in plan:
        clf = ds == "spam"
        for loss in losses:
            for algo in figures.METHOD_ORDER:
                if algo == "xgboost" and ds == "crabs":
                    continue
                for k in range(n):
                    loss_value = 1 + rng.normal(0, 0.1) + (50 if algo == "accelerated_gradient" and k == 0 else 0)
                    if algo == "random_forest" and (clf or loss != "ls"):
                        loss_value = math.nan                       # reported for ls only
                    rows.append(dict(protocol=proto, dataset=ds, loss=loss, algo=algo,
                                     engine="none" if algo in ("xgboost", "random_forest") else "exact", split=k,
                                     test_loss=loss_value, test_error=0.1 + rng.normal(0, 0.01) if clf else math.nan))
    return pd.DataFrame(rows)


def _assert_written(paths, fid, out):
    assert sorted(p.name for p in paths) == [f"{fid}.pdf", f"{fid}.png"]
    for ext in ("png", "pdf"):
        p = out / f"{fid}.{ext}"
        assert p.exists() and p.stat().st_size > 1000
    assert not list(out.glob(".*"))                          # no temporary file left behind


def test_method_styles_are_unique():
    colors = [s["color"] for s in figures.METHOD_STYLES.values()]
    markers = [s["marker"] for s in figures.METHOD_STYLES.values()]
    assert len(set(colors)) == len(colors) and len(set(markers)) == len(markers)
    from proxboost.protocol import ALGOS

    assert set(figures.METHOD_STYLES) == set(ALGOS)  # every method has a style


def test_intro(curves, tmp_path):
    x = np.linspace(0, 1, 50)
    preds = pd.concat([pd.DataFrame({"x": x, "prediction": np.sin(2 * np.pi * x), "algo": a}) for a in ("gradient", "prox")])
    data = pd.DataFrame({"x": x, "y": np.sin(2 * np.pi * x), "part": ["train", "test"] * 25})
    _assert_written(figures.fig_intro(curves[curves["experiment"] == "intro"], preds, data, tmp_path), "intro", tmp_path)


@pytest.mark.parametrize("x, fid", [("iteration", "convergence"), ("seconds", "convergence_time")])
def test_convergence(curves, tmp_path, x, fid):
    _assert_written(figures.fig_convergence(curves, tmp_path, x), fid, tmp_path)


def test_proximal_step(curves, tmp_path):
    _assert_written(figures.fig_proximal_step(curves, tmp_path), "proximal_step", tmp_path)


@pytest.mark.parametrize("fn, fid", [(figures.fig_regression_loss, "regression_loss"),
                                     (figures.fig_classification_loss, "classification_loss"),
                                     (figures.fig_classification_error, "classification_error")])
def test_real_world(real, tmp_path, fn, fid):
    _assert_written(fn(real, tmp_path), fid, tmp_path)


@pytest.mark.slow
def test_make_all_from_an_empty_results_dir(tmp_path):
    """Nothing stored yet: every figure is still written, saying what is missing."""
    out = tmp_path / "figs"
    written = figures.make_all(tmp_path / "results", out, log=lambda *_: None)
    assert set(written) == set(figures.FIGURE_IDS)
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{f}.{e}" for f in figures.FIGURE_IDS for e in ("pdf", "png"))


def test_cli_reads_stored_rows(real, tmp_path):
    for _, r in real[real["dataset"] == "crabs"].iterrows():
        write_row(tmp_path / "results", r.to_dict())
    figures.main(["--results", str(tmp_path / "results"), "--out", str(tmp_path / "figs"), "--only", "regression_loss"])
    assert (tmp_path / "figs" / "regression_loss.png").stat().st_size > 1000
    with pytest.raises(SystemExit):
        figures.main(["--only", "nope"])
