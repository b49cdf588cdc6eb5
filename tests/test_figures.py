"""Figures from small results tables built here: their content (axes, labels, series), metadata and
determinism.
"""

import hashlib
import math

import matplotlib as mpl
import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PolyCollection

from proxboost.experiments.claims import STATEMENTS, judge
from proxboost.experiments.report import figures
from proxboost.experiments.report.figures import common as figure_common
from proxboost.experiments.report.figures import realworld as figure_panels
from proxboost.experiments.store.naming import METHOD_ORDER
from proxboost.experiments.store.results import write_row

T = 60
STEPS = (0.01, 0.1, 1.0, 10.0, 100.0)


def _curve(experiment, dataset, loss, algo, depth, step, rate, seed=0, floor=None):
    t = np.arange(T + 1)
    train = np.exp(-rate * t) + 0.05
    if floor is not None:
        train = np.maximum(10.0 ** (-2.0 * t), floor)  # reaches a numerical floor
    test = train + 0.1 + 0.01 * seed
    if loss == "hinge" and experiment == "proximal_step":
        test = 0.32 + 0.5 * np.exp(-rate * t)  # test losses between 0.32 and 0.82
    return pd.DataFrame(
        {
            "iteration": t,
            "seconds": 0.01 * t,
            "train_loss": train * (1 + 0.02 * seed),
            "test_loss": test,
            "experiment": experiment,
            "dataset": dataset,
            "loss": loss,
            "algo": algo,
            "max_depth": depth,
            "step": math.nan if algo.endswith("gradient") else step,
            "learning_rate": 0.05,
            "n_estimators": T,
            "seed": seed,
            "engine": "exact",
            "commit": "c0ffee",
        }
    )


@pytest.fixture(scope="module")
def curves():
    runs = []
    for dataset, loss in (
        ("regression", "ls"),
        ("classification", "exponential"),
        ("regression", "lad"),
        ("classification", "hinge"),
    ):
        for depth in (3, 15):
            for j, algo in enumerate(("gradient", "prox", "residual_gradient", "residual_prox")):
                if (loss, depth, algo) == ("hinge", 15, "residual_prox"):
                    continue  # a missing run is reported, not fatal
                for seed in (0, 1, 2):
                    runs.append(
                        _curve(
                            "convergence",
                            dataset,
                            loss,
                            algo,
                            depth,
                            1.0,
                            0.01 * (1 + j + depth / 5),
                            seed,
                            floor=1e-8 if (loss, depth) == ("ls", 15) else None,
                        )
                    )
    for dataset, loss in (("regression", "lad"), ("classification", "hinge")):
        for algo in ("gradient", "residual_gradient", "accelerated_gradient"):
            runs.append(_curve("proximal_step", dataset, loss, algo, 3, None, 0.02))
        for algo in ("prox", "residual_prox", "accelerated_prox"):
            for i, s in enumerate(STEPS):
                runs.append(_curve("proximal_step", dataset, loss, algo, 3, s, 0.01 * (i + 1)))
    for algo in ("gradient", "prox"):
        runs.append(_curve("intro", "sines", "lad", algo, 2, 1.0, 0.05))
    return pd.concat(runs, ignore_index=True)


@pytest.fixture(scope="module")
def real():
    rng = np.random.default_rng(0)
    rows = []
    plan = [
        ("engel", ("ls", "lad", "pinball"), "paper/20splits/T1000", 20),
        ("crabs", ("ls", "lad"), "reduced/4splits/T200", 4),  # pinball missing
        ("spam", ("exponential", "hinge"), "reduced/4splits/T200", 4),
    ]  # adult, advertisements missing
    for ds, losses, proto, n in plan:
        clf = ds == "spam"
        for loss in losses:
            for algo in METHOD_ORDER:
                if algo == "xgboost" and ds == "crabs" or algo == "sklearn_hgb":
                    continue
                for k in range(n):
                    value = (
                        1
                        + rng.normal(0, 0.1)
                        + (50 if algo == "accelerated_gradient" and k == 0 else 0)
                    )
                    if algo == "random_forest" and (clf or loss != "ls"):
                        value = math.nan  # reported for ls only
                    rows.append(
                        dict(
                            protocol=proto,
                            dataset=ds,
                            loss=loss,
                            algo=algo,
                            engine=(
                                "none"
                                if algo in ("xgboost", "random_forest", "lightgbm")
                                else "exact"
                            ),
                            split=k,
                            test_loss=value,
                            test_error=0.1 + rng.normal(0, 0.01) if clf else math.nan,
                        )
                    )
    return pd.DataFrame(rows)


def _data_axes(fig):
    return [ax for ax in fig.axes if ax.get_lines() or ax.collections]


def _labelled_ticks(ax):
    """Major y ticks inside the axis with a non-empty label."""
    fig = ax.figure
    fig.canvas.draw()
    lo, hi = ax.get_ylim()
    return [
        t.get_loc()
        for t in ax.yaxis.get_major_ticks()
        if lo <= t.get_loc() <= hi and t.label1.get_visible() and t.label1.get_text()
    ]


def _assert_labelled_around_data(ax):
    ticks = _labelled_ticks(ax)
    lo, hi = ax.get_ylim()
    assert len(ticks) >= 2, ax.get_title()
    if ax.get_yscale() == "log":  # a labelled tick in the lowest 30 % of the axis (in decades)
        assert min(ticks) <= lo * (hi / lo) ** 0.3, (ax.get_title(), ticks, lo, hi)


@pytest.mark.slow
def test_figures_leave_global_settings_alone(curves):
    before = dict(mpl.rcParams)
    figures.fig_convergence(curves)
    assert dict(mpl.rcParams) == before


@pytest.mark.slow
def test_intro_loss_curves_on_shared_axes(curves):
    x = np.linspace(0, 1, 50)
    preds = pd.concat(
        [
            pd.DataFrame({"x": x, "prediction": np.sin(2 * np.pi * x), "algo": a})
            for a in ("gradient", "prox")
        ]
    )
    data = pd.DataFrame({"x": x, "y": np.sin(2 * np.pi * x), "part": ["train", "test"] * 25})
    fig = figures.fig_intro(curves[curves["experiment"] == "intro"], preds, data)
    loss_axes = [ax for ax in fig.axes if ax.get_ylabel().startswith("lad loss")]
    assert len(loss_axes) == 1
    labels = [ln.get_label() for ln in loss_axes[0].get_lines()]
    assert {"G, training loss", "G, test loss", "P, training loss", "P, test loss"} <= set(labels)
    assert [ax.get_xlabel() for ax in fig.axes].count("x") == 2
    _assert_labelled_around_data(loss_axes[0])


@pytest.mark.slow
def test_convergence_panels_floor_and_seed_bands(curves):
    fig = figures.fig_convergence(curves)
    panels = _data_axes(fig)
    assert len(panels) == 4
    for ax in panels:
        assert ax.get_xlabel() == "iteration t" and ax.get_ylabel() == "training loss C(f_t)"
        _assert_labelled_around_data(ax)
        bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
        assert len(bands) == len(ax.get_lines())  # three seeds: one band per curve
    ls = next(ax for ax in panels if ax.get_title().startswith("least squares"))
    lad = next(ax for ax in panels if ax.get_title().startswith("least absolute"))
    hinge = next(ax for ax in panels if ax.get_title().startswith("hinge"))
    assert (
        len(ls.patches) == 1 and len(lad.patches) == 0
    )  # only the ls depth-15 curves reach a floor
    assert len(hinge.get_lines()) == 7  # the missing run is not drawn ...
    assert "hinge/RP/depth 15" in " ".join(t.get_text() for t in fig.texts)  # ... and is named


@pytest.mark.slow
def test_convergence_time_draws_seed_0_only(curves):
    fig = figures.fig_convergence(curves, "seconds")
    for ax in _data_axes(fig):
        assert ax.get_xlabel().startswith("wall-clock seconds")
        assert not [c for c in ax.collections if isinstance(c, PolyCollection)]


@pytest.mark.slow
def test_proximal_step_panels(curves):
    fig = figures.fig_proximal_step(curves)
    panels = _data_axes(fig)
    assert len(panels) == 12
    for ax in panels:
        assert len(ax.get_lines()) == 6  # the gradient counterpart and five λ
        _assert_labelled_around_data(ax)
    hinge_test = [ax for ax in panels if ax.get_title().startswith("hinge, test")]
    assert len(hinge_test) == 3 and all(min(_labelled_ticks(ax)) < 0.4 for ax in hinge_test)


@pytest.mark.parametrize(
    "fn, ncol, nrow",
    [
        (figures.fig_regression_loss, 6, 3),
        (figures.fig_classification_loss, 3, 2),
        (figures.fig_classification_error, 3, 3),
    ],
)
@pytest.mark.slow
def test_real_world_panels(real, fn, ncol, nrow):
    fig = fn(real)
    assert len(fig.axes) == ncol * nrow
    drawn = [ax for ax in fig.axes if ax.get_xticklabels() and ax.get_xticklabels()[0].get_text()]
    for ax in drawn:
        shorts = [t.get_text() for t in ax.get_xticklabels()]
        assert "G" not in shorts or fn is figures.fig_classification_error
        assert "LGBM" in shorts  # the extra baseline is shown when stored
        assert (
            ax.get_title()
            .split("\n")[1]
            .startswith(("paper/20splits/T1000", "reduced/4splits/T200"))
        )
    empty = [ax for ax in fig.axes if any("no stored rows" in t.get_text() for t in ax.texts)]
    assert len(empty) == ncol * nrow - len(drawn) - sum(
        1 for ax in fig.axes if any("no paired rows" in t.get_text() for t in ax.texts)
    )


@pytest.mark.slow
def test_claims_figure_has_one_row_per_statement(curves, real):
    claims = judge(curves, real, sha="x")
    fig = figures.fig_claims(claims)
    ax = fig.axes[0]
    verdict_bars = [p for p in ax.patches if p.get_label().startswith("_verdict")]
    assert len(verdict_bars) == len(STATEMENTS) == 34
    assert [t.get_text() for t in ax.get_yticklabels()] == list(reversed(STATEMENTS))
    top = claims[claims["scope"] == "all"].set_index("id")["verdict"]
    colors = {p.get_label().split()[1]: mpl.colors.to_hex(p.get_facecolor()) for p in verdict_bars}
    assert all(colors[sid] == figure_common.VERDICT_COLORS[v] for sid, v in top.items())


def test_the_cells_of_a_statement_leave_out_its_other_readings():
    """A statement's cells in the claims figure are its cell rows on its protocol: the rows of a
    reading, of the corrected t-test's second reading, of a tie rule and the headline are not
    cells (with them, 6a showed 31 cells for its 30 comparisons)."""
    from proxboost.experiments.report.figures.claims import _cell_rows

    rows = [
        ("all", "contradicted"),
        ("loss=ls;dataset=crabs", "confirmed"),
        ("loss=ls;dataset=engel", "contradicted"),
        ("reading=P", "confirmed"),
        ("test=corrected t-test", "contradicted"),
        ("tie_rule=authors", "confirmed"),
    ]
    claims = pd.DataFrame(
        [{"id": "6a", "scope": s, "verdict": v, "protocol": "paper"} for s, v in rows]
    )
    cells = _cell_rows(claims, "6a", "paper")
    assert list(cells["scope"]) == ["loss=ls;dataset=crabs", "loss=ls;dataset=engel"]


@pytest.mark.slow
def test_saved_files_have_no_date_or_software_and_are_reproducible(curves, tmp_path):
    paths = figures.save(figures.fig_convergence(curves), tmp_path / "a", "convergence")
    again = figures.save(figures.fig_convergence(curves), tmp_path / "b", "convergence")
    for p, q in zip(paths, again):
        assert hashlib.sha256(p.read_bytes()).digest() == hashlib.sha256(q.read_bytes()).digest()
    png, pdf = paths
    assert b"Software" not in png.read_bytes() and b"matplotlib" not in png.read_bytes().lower()
    assert b"CreationDate" not in pdf.read_bytes() and b"Matplotlib" not in pdf.read_bytes()
    assert not list((tmp_path / "a").glob(".*"))  # no temporary file left behind


@pytest.mark.slow
@pytest.mark.slow
def test_make_all_from_an_empty_results_dir(tmp_path):
    """Nothing stored yet: every figure is still written, saying what is missing."""
    out = tmp_path / "figs"
    written = figures.make_all(tmp_path / "results", out, log=lambda *_: None)
    assert set(written) == set(figures.FIGURE_IDS)
    assert sorted(p.name for p in out.iterdir()) == sorted(
        f"{f}.{e}" for f in figures.FIGURE_IDS for e in ("pdf", "png")
    )


@pytest.mark.slow
def test_cli_reads_stored_rows(real, tmp_path):
    for _, r in real[real["dataset"] == "crabs"].iterrows():
        write_row(tmp_path / "results", {**r.to_dict(), "identity": {}})
    figures.main(
        [
            "--results",
            str(tmp_path / "results"),
            "--out",
            str(tmp_path / "figs"),
            "--only",
            "regression_loss",
        ]
    )
    assert sorted(p.name for p in (tmp_path / "figs").iterdir()) == [
        "regression_loss.pdf",
        "regression_loss.png",
    ]
    with pytest.raises(SystemExit):
        figures.main(["--only", "nope"])


@pytest.mark.slow
def test_intro_draws_the_predictions_of_the_drawn_run(curves):
    intro = curves[curves["experiment"] == "intro"].assign(identity_hash=lambda d: "h-" + d["algo"])
    x = np.linspace(0, 1, 50)
    preds = pd.concat(
        [
            pd.DataFrame({"x": x, "prediction": v, "algo": a, "identity_hash": h})
            for a, h, v in (
                ("gradient", "h-gradient", 1.0),
                ("gradient", "other", 5.0),
                ("prox", "h-prox", 2.0),
                ("prox", "other", 5.0),
            )
        ]
    )
    fig = figures.fig_intro(intro, preds, pd.DataFrame(columns=["x", "y", "part"]))
    drawn = [ln for ax in fig.axes for ln in ax.get_lines() if ln.get_label().startswith("f_T")]
    assert sorted(float(ln.get_ydata()[0]) for ln in drawn) == [1.0, 2.0]


@pytest.mark.slow
def test_hinge_error_panels_show_the_loss_independent_methods(classification_rows):
    from proxboost.experiments.claims.analysis import rows_per_dataset

    raw = classification_rows()
    rows, _ = rows_per_dataset(raw)
    once = ["lightgbm", "sklearn_hgb", "random_forest"]
    exp = dict(figures.panel_groups(rows, "spam", "exponential", "test_error", "delta"))
    hinge = dict(figures.panel_groups(rows, "spam", "hinge", "test_error", "delta"))
    assert set(once) <= set(hinge) and set(once) <= set(exp)
    for algo in once:  # one fit per split, paired with each loss's own gradient run
        err = raw[raw["algo"] == algo].sort_values("split")["test_error"].to_numpy()
        for loss, groups in (("exponential", exp), ("hinge", hinge)):
            g = (
                raw[(raw["algo"] == "gradient") & (raw["loss"] == loss)]
                .sort_values("split")["test_error"]
                .to_numpy()
            )
            assert np.allclose(np.sort(groups[algo]), np.sort(err - g)) and len(groups[algo]) == 20
    assert not set(once) & set(
        dict(figures.panel_groups(rows, "spam", None, "test_error", "hinge_minus_exp"))
    )
    assert not set(once) & set(
        dict(figures.panel_groups(rows, "spam", "hinge", "test_loss", "delta"))
    )
    fig = figures.fig_classification_error(raw)
    spam = [ax for ax in fig.axes if ax.get_title().startswith("spam")]
    assert (
        len(spam) == 3 and fig.axes[3].get_ylabel() == "Δ test error (hinge)"
    )  # rows: exponential, hinge, difference
    ticks = [t.get_text() for t in spam[1].get_xticklabels()]
    assert {"RF*", "LGBM*", "HGB*"} <= set(ticks) and "XGB" in ticks
    assert "loss-independent" in fig._suptitle.get_text()


def test_symlog_panels_keep_every_point_inside_the_axes_with_ticks_at_zero_and_decades():
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(0)
    groups = [
        ("prox", rng.normal(0, 0.01, 20)),
        ("residual_prox", np.r_[rng.normal(0, 0.01, 19), 98.0]),
    ]
    fig, ax = plt.subplots()
    try:
        figure_panels._strip_box(ax, groups)
        assert ax.get_yscale() == "symlog"
        to_axes = ax.transData + ax.transAxes.inverted()  # data -> axes fraction (0 bottom, 1 top)
        top = to_axes.transform([[0, 98.0]])[0, 1]
        bottom = to_axes.transform([[0, min(v.min() for _, v in groups)]])[0, 1]
        assert (
            0.9 < top < 0.99 and 0.01 < bottom < 0.2
        )  # a margin above the outlier, none wasted below
        ticks = [t for t in ax.get_yticks() if ax.get_ylim()[0] <= t <= ax.get_ylim()[1]]
        assert 0.0 in ticks and all(t == 0 or math.log10(abs(t)).is_integer() for t in ticks)
    finally:
        plt.close(fig)
