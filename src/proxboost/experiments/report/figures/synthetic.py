"""The synthetic experiments' figures: the introduction, the convergence curves (by iteration and
by time) and the proximal step."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from proxboost.experiments.report.figures.common import (
    DEPTH_STYLES,
    FLOOR_COLOR,
    _data_ylim,
    _empty,
    _exp,
    _floor_of,
    _log_y,
    _markevery,
    _plot_series,
    _prepare_curves,
    _series,
    _settings_text,
    _shade,
    _shade_floor,
    _share_log_y,
    _styled,
)
from proxboost.experiments.store.naming import (
    LOSS_NAMES,
    STEP_GRID,
    style,
)


def _note_missing(fig, missing, y):
    """Name the runs a figure lacks, in red below its panels (at figure height ``y``)."""
    if missing:
        fig.text(
            0.5,
            y,
            "missing runs: " + ", ".join(missing),
            ha="center",
            color="firebrick",
            fontsize=8,
            wrap=True,
        )


@_styled
def fig_intro(curves, predictions, data) -> Figure:
    """Introduction example: predictions f_T (left; top gradient, bottom prox), and the training and
    test losses of both methods on one pair of axes (right)."""
    curves = _exp(_prepare_curves(curves), "intro")
    fig = Figure(figsize=(10, 6.2))
    gs = fig.add_gridspec(2, 2, width_ratios=[1.5, 1])
    pred_axes = [fig.add_subplot(gs[0, 0]), fig.add_subplot(gs[1, 0])]
    axl = fig.add_subplot(gs[:, 1])
    missing, drawn = [], 0
    for axp, algo in zip(pred_axes, ("gradient", "prox")):
        st = style(algo)
        if data is not None and not data.empty:
            tr = data[data["part"] == "train"]
            axp.scatter(tr["x"], tr["y"], s=5, color="0.65", lw=0, label="training data", zorder=1)
        xs = np.linspace(0, 1, 2000)
        axp.plot(
            xs,
            np.sin(2 * np.pi * xs) + np.sin(32 * np.pi * xs),
            color="0.3",
            lw=0.6,
            ls=":",
            label="sin(2πx) + sin(32πx)",
            zorder=2,
        )
        run, band, _ = _series(curves, algo=algo, **({"step": 1.0} if algo == "prox" else {}))
        pred = (
            predictions[predictions["algo"] == algo]
            if predictions is not None and not predictions.empty
            else None
        )
        if pred is not None and not pred.empty:
            if run is not None and "identity_hash" in pred and "identity_hash" in run:
                pred = pred[
                    pred["identity_hash"] == run["identity_hash"].iloc[0]
                ]  # the drawn run's f_T
            elif "seed" in pred:
                pred = pred[pred["seed"].astype(int) == int(pred["seed"].astype(int).min())]
        if pred is not None and not pred.empty:
            pred = pred.sort_values("x")
            axp.plot(
                pred["x"],
                pred["prediction"],
                color=st["color"],
                lw=1.6,
                label=f"f_T, {st['label']}",
                zorder=3,
            )
        else:
            missing.append(f"{algo} predictions")
        axp.set_xlabel("x")
        axp.set_ylabel("y")
        axp.set_title(f"{st['label']}: prediction f_T")
        lo, hi = axp.get_ylim()
        axp.set_ylim(lo, hi + 0.22 * (hi - lo))  # room for the legend above the data
        axp.legend(loc="upper center", ncol=3, fontsize=7, framealpha=0.9)
        if run is None:
            missing.append(f"{algo} curves")
            continue
        drawn += 1
        for k, (col, ls, what) in enumerate(
            (("train_loss", "-", "training"), ("test_loss", "--", "test"))
        ):
            _plot_series(
                axl,
                run,
                band,
                col,
                color=st["color"],
                ls=ls,
                marker=st["marker"],
                ms=4,
                markevery=_markevery(len(run), 2 * drawn + k, 4),
                label=f"{st['short']}, {what} loss",
            )
    if drawn:
        axl.axhline(0.12, color="0.5", lw=0.8, ls=":", label="0.12 (the paper's plateau)")
        _log_y(axl)
        axl.set_xlabel("iteration t")
        axl.set_ylabel("lad loss C(f_t)")
        axl.set_title("training (solid) and test (dashed) loss")
        axl.legend(fontsize=7, handlelength=3)
        axl.grid(True, which="both", alpha=0.25)
    else:
        _empty(axl, "no stored intro runs")
    sub = _settings_text(
        curves, "sines data (docs/protocol.md), lad loss, depth 2, λ = 1 per sample"
    )
    fig.suptitle(
        "Introduction example: subgradient (G) vs proximal (P) boosting\n" + sub, fontsize=9
    )
    if missing:
        fig.text(
            0.5, -0.01, "missing: " + ", ".join(missing), ha="center", color="firebrick", fontsize=8
        )
    fig.tight_layout()
    return fig


@_styled
def fig_convergence(curves, x="iteration") -> Figure:
    """Convergence: training loss vs iteration (``x="iteration"``) or seconds (``x="seconds"``),
    floor shaded.
    """
    curves = _exp(_prepare_curves(curves), "convergence")
    algos = ("gradient", "prox", "residual_gradient", "residual_prox")
    panels = (
        ("ls", "regression"),
        ("exponential", "classification"),
        ("lad", "regression"),
        ("hinge", "classification"),
    )
    fig = Figure(figsize=(10, 7.2))
    axes = fig.subplots(2, 2)
    missing, n_seeds = [], 1
    for ax, (loss, dataset) in zip(axes.ravel(), panels):
        n, floors = 0, []
        for depth in (3, 15):
            for k, algo in enumerate(algos):
                st = style(algo)
                run, band, ns = _series(
                    curves,
                    loss=loss,
                    algo=algo,
                    max_depth=depth,
                    **({"step": 1.0} if "prox" in algo else {}),
                )
                if run is None:
                    missing.append(f"{loss}/{st['short']}/depth {depth}")
                    continue
                n += 1
                n_seeds = max(n_seeds, ns)
                floors.append(_floor_of(run))
                # vs seconds, iterations are not evenly spaced (a tree that stops splitting is
                # cheap):
                # markers evenly spaced along the drawn line instead
                every = (
                    _markevery(len(run), k, len(algos))
                    if x == "iteration"
                    else (0.02 + 0.03 * k, 0.12)
                )
                _plot_series(
                    ax,
                    run,
                    band,
                    "train_loss",
                    x=x,
                    color=st["color"],
                    ls=DEPTH_STYLES[depth],
                    lw=1.3,
                    marker=st["marker"],
                    ms=4.5,
                    mfc="none" if depth == 15 else st["color"],
                    markevery=every,
                )
        if n == 0:
            _empty(ax, f"no stored run for {loss}")
            continue
        _log_y(ax)
        levels = [f for f in floors if f is not None]
        _shade_floor(ax, max(levels) if levels else None)
        ax.set_title(f"{LOSS_NAMES[loss]} — synthetic {dataset}")
        ax.set_xlabel(
            "iteration t" if x == "iteration" else "wall-clock seconds (cumulative fit time)"
        )
        ax.set_ylabel("training loss C(f_t)")
        ax.grid(True, which="both", alpha=0.25)
    handles = [
        Line2D([], [], color=style(a)["color"], marker=style(a)["marker"], label=style(a)["label"])
        for a in algos
    ]
    handles += [
        Line2D(
            [], [], color="0.2", ls=ls, label=f"depth {d}" + (" (open markers)" if d == 15 else "")
        )
        for d, ls in DEPTH_STYLES.items()
    ]
    handles.append(Patch(color=FLOOR_COLOR, label="numerical floor (≤ 10 × floor level)"))
    fig.legend(
        handles=handles, loc="lower center", ncol=4, bbox_to_anchor=(0.5, -0.01), frameon=False
    )
    what = "vs iteration" if x == "iteration" else "vs wall-clock seconds"
    sub = _settings_text(curves, "λ = 1 per sample")
    if x == "seconds":
        sub += "\nruns executed one at a time on a shared machine: times are noisy" + (
            "; seed 0 only (seconds differ per seed)" if n_seeds > 1 else ""
        )
    fig.suptitle(
        f"Convergence: training loss {what}, trees of depth 3 (solid) and 15 (dashed)\n{sub}",
        fontsize=9,
    )
    _note_missing(fig, missing, y=-0.06)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


@_styled
def fig_proximal_step(curves) -> Figure:
    """Proximal step: training and test loss vs iteration for each λ; lad (top two rows) and hinge
    (bottom).
    """
    curves = _exp(_prepare_curves(curves), "proximal_step")
    families = (
        ("prox", "gradient", "plain"),
        ("residual_prox", "residual_gradient", "residual"),
        ("accelerated_prox", "accelerated_gradient", "accelerated"),
    )
    rows = (
        ("lad", "train_loss"),
        ("lad", "test_loss"),
        ("hinge", "train_loss"),
        ("hinge", "test_loss"),
    )
    fig = Figure(figsize=(12, 12.5))
    axes = fig.subplots(4, 3, sharex=True)
    missing = []
    for r, (loss, col) in enumerate(rows):
        row_axes = []
        for c, (palgo, galgo, fam) in enumerate(families):
            ax = axes[r, c]
            n = 0
            run, band, _ = _series(curves, loss=loss, algo=galgo)
            if run is not None:
                n += 1
                st = style(galgo)
                _plot_series(
                    ax,
                    run,
                    band,
                    col,
                    color=st["color"],
                    lw=1.4,
                    marker=st["marker"],
                    ms=4,
                    markevery=_markevery(len(run), 0, 6),
                    label=f"{st['short']} (no λ)",
                )
            elif r % 2 == 0:
                missing.append(f"{loss}/{galgo}")
            st = style(palgo)
            for k, s in enumerate(STEP_GRID):
                run, band, _ = _series(curves, loss=loss, algo=palgo, step=s)
                if run is None:
                    if r % 2 == 0:
                        missing.append(f"{loss}/{st['short']} λ={s:g}")
                    continue
                n += 1
                _plot_series(
                    ax,
                    run,
                    band,
                    col,
                    color=_shade(st["color"], 0.25 + 0.75 * k / (len(STEP_GRID) - 1)),
                    lw=1.2,
                    marker=st["marker"],
                    ms=3.5,
                    markevery=_markevery(len(run), k + 1, 6),
                    label=f"{st['short']} λ={s:g}",
                )
            if n == 0:
                _empty(ax, f"no stored run for {loss} / {fam}")
                continue
            ax.grid(True, which="both", alpha=0.25)
            ax.set_title(
                f"{loss}, {'training' if col == 'train_loss' else 'test'} loss — "
                f"{style(palgo)['short']} vs {style(galgo)['short']}"
            )
            if c == 0:
                ax.set_ylabel(f"{loss}: {'training' if col == 'train_loss' else 'test'} loss")
            if r == len(rows) - 1:
                ax.set_xlabel("iteration t")
            if r % 2 == 0:
                ax.legend(fontsize=7, ncol=2, loc="best")
            if c < 2:
                row_axes.append(ax)
                continue
            # accelerated runs can diverge upwards or reach a loss of exactly 0 (hinge): their own
            # y axis, at most 3 decades below the initial loss, saying so when curves leave it
            lo, hi = _data_ylim(ax)
            first = max(float(np.asarray(ln.get_ydata(), float)[0]) for ln in ax.get_lines())
            bottom = 1e-3 * first
            ys = np.concatenate([np.asarray(ln.get_ydata(), float) for ln in ax.get_lines()])
            if np.nanmin(ys) < bottom:
                ax.text(
                    0.99,
                    0.01,
                    "curves leaving the bottom go below 1e-3 × C(f_0) (down to 0)",
                    transform=ax.transAxes,
                    ha="right",
                    va="bottom",
                    fontsize=6.5,
                    color="0.3",
                )
            _log_y(ax, max(lo, bottom) if lo is not None else bottom, hi)
        if row_axes:  # plain and residual variants share their y axis (comparable at a glance)
            _share_log_y(row_axes)
    sub = _settings_text(curves, "depth 3, λ per sample (darker = larger λ)")
    fig.suptitle(
        "Proximal step: training and test loss vs iteration for λ ∈ {0.01, 0.1, 1, 10, 100}; "
        "gradient counterparts do not use λ\n" + sub,
        fontsize=9,
    )
    _note_missing(fig, missing, y=-0.01)
    fig.tight_layout()
    return fig


# =====================================================================================
# real-world figures
# =====================================================================================
