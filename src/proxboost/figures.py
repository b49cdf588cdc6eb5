"""The paper's figures and the claims overview, drawn from stored results only (nothing is fitted).

    python -m proxboost.figures --results results --out figures

writes ``figures/<id>.png`` and ``figures/<id>.pdf`` for the ids ``intro``, ``convergence``,
``convergence_time``, ``proximal_step`` (synthetic curves, :mod:`proxboost.curves`),
``regression_loss``, ``classification_loss``, ``classification_error`` (real-world rows,
:func:`proxboost.results.load`) and ``claims`` (the verdicts of ``results/claims.csv``, or
computed by :func:`proxboost.claims.judge` when that file is absent).

Conventions, the same in every figure: one colour, marker and short name per method
(:data:`proxboost.naming.METHOD_STYLES`); λ is the per-sample proximal step (docs/method.md);
Δ = value − value of ``gradient`` on the same split (paired); every figure states where its
data came from. Synthetic curves show seed 0 under the default tie rule, with the min–max band
over the stored seeds when there are several; the numerical floor of the convergence curves
(docs/claims.md) is shaded. Missing data never stops a figure: what exists is drawn and what is
missing is written on it.

Each ``fig_*`` function returns a :class:`matplotlib.figure.Figure` (no pyplot state) built
inside :func:`matplotlib.rc_context`, so importing or calling this module changes no global
setting; :func:`save` writes it with fixed metadata (no date, no software string) so that the
files are the same bytes when rebuilt from the same results.
"""

from __future__ import annotations

import argparse
import functools
import math
import textwrap
import time
from pathlib import Path

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import (
    FixedLocator,
    FuncFormatter,
    LogLocator,
    MaxNLocator,
    NullFormatter,
    NullLocator,
)

from . import versions
from ._io import atomic_path
from .analysis import loss_differences, paired_deltas, rows_per_dataset, shared_methods
from .claims import (
    CONFIRMED,
    CONTRADICTED,
    INCONCLUSIVE,
    STATEMENTS,
    floor_start,
    judge,
    stated_curves,
)
from .naming import (
    CLASSIFICATION_DATASETS,
    DEFAULT_TIE_RULE,
    EXTRA_BASELINES,
    LOSS_NAMES,
    METHOD_ORDER,
    REGRESSION_DATASETS,
    STEP_GRID,
    style,
)
from .results import stops_on_damage, verify_stored

__all__ = [
    "FIGURE_IDS",
    "STYLE",
    "fig_claims",
    "fig_classification_error",
    "fig_classification_loss",
    "fig_convergence",
    "fig_intro",
    "fig_proximal_step",
    "fig_regression_loss",
    "main",
    "make_all",
    "panel_groups",
    "save",
]

FIGURE_IDS = (
    "intro",
    "convergence",
    "convergence_time",
    "proximal_step",
    "regression_loss",
    "classification_loss",
    "classification_error",
    "claims",
)

#: Matplotlib settings of every figure, applied with ``rc_context`` (never globally).
STYLE = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "figure.dpi": 100,
    "svg.hashsalt": "proxboost",
}
#: Metadata written into the files: no creation date, no software string (reproducible bytes).
PNG_METADATA = {"Software": None}
PDF_METADATA = {"CreationDate": None, "Creator": None, "Producer": None}

DEPTH_STYLES = {3: "-", 15: "--"}
VERDICT_COLORS = {CONFIRMED: "#2ca02c", CONTRADICTED: "#d62728", INCONCLUSIVE: "#bdbdbd"}
FLOOR_COLOR = "#fde0c5"
N_MARKS = 8


def _styled(fn):
    """Run ``fn`` inside ``rc_context(STYLE)``: the figure's look without touching global state."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with mpl.rc_context(STYLE):
            return fn(*args, **kwargs)

    return wrapper


def save(fig: Figure, out_dir, fid) -> list[Path]:
    """Write ``<out_dir>/<fid>.png`` and ``.pdf`` atomically, with fixed metadata."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    with mpl.rc_context(STYLE):
        for ext, meta in (("png", PNG_METADATA), ("pdf", PDF_METADATA)):
            path = out_dir / f"{fid}.{ext}"
            with atomic_path(path, suffix=f".{ext}") as tmp:
                fig.savefig(
                    tmp,
                    format=ext,
                    dpi=150 if ext == "png" else None,
                    bbox_inches="tight",
                    metadata=meta,
                )
            paths.append(path)
    return paths


def _shade(color, frac):
    """``color`` blended with white: frac = 1 the colour itself, smaller = lighter."""
    c = np.array(to_rgb(color))
    return tuple(1 - frac * (1 - c))


def _markevery(n, slot, n_slots):
    """Marker positions: N_MARKS per curve, shifted by ``slot`` so overlapping curves show all
    markers.
    """
    step = max(n // N_MARKS, 1)
    start = int(step * (slot + 0.5) / max(n_slots, 1))
    return slice(min(start, n - 1), None, step)


def _empty(ax, text):
    ax.text(
        0.5,
        0.5,
        text,
        ha="center",
        va="center",
        transform=ax.transAxes,
        fontsize=9,
        color="0.35",
        wrap=True,
    )
    ax.set_xticks([])
    ax.set_yticks([])


def _data_ylim(ax):
    """(min, max) of the positive y values drawn in ``ax`` (lines and bands)."""
    ys = [np.asarray(ln.get_ydata(), float) for ln in ax.get_lines() if ln.get_label() != "_floor"]
    ys += [
        np.asarray(c.get_paths()[0].vertices[:, 1], float)
        for c in ax.collections
        if c.get_label() == "_band"
    ]
    ys = np.concatenate(ys) if ys else np.array([])
    ys = ys[np.isfinite(ys) & (ys > 0)]
    return (float(ys.min()), float(ys.max())) if ys.size else (None, None)


def _log_y(ax, lo=None, hi=None):
    """Log y axis around the data, with labelled ticks at the bottom of the data too.

    Less than one decade: 3–6 plain ticks (0.3, 0.35, 0.4, …); up to 2.5 decades: 1, 2, 5 × 10^k;
    beyond: decades.
    """
    ax.set_yscale("log")
    dlo, dhi = _data_ylim(ax)
    lo = dlo if lo is None else lo
    hi = dhi if hi is None else hi
    if lo is None or hi is None:
        return
    pad = (hi / lo) ** 0.04 if hi > lo else 1.05
    lo, hi = lo / pad, hi * pad
    ax.set_ylim(lo, hi)
    decades = math.log10(hi / lo)
    fmt = FuncFormatter(lambda v, _: f"{v:g}")
    if decades < 1:
        ticks = [
            t
            for t in MaxNLocator(nbins=8, steps=[1, 2, 2.5, 5, 10]).tick_values(lo, hi)
            if lo <= t <= hi and t > 0
        ]
        low = float(f"{dlo:.2g}") if dlo is not None else None
        if (
            low is not None
            and lo <= low < min(ticks, default=hi)
            and (not ticks or ticks[0] > lo * (hi / lo) ** 0.15)
        ):
            ticks = [
                low
            ] + ticks  # a labelled tick at the bottom of the data, however the round ticks fall
        ax.yaxis.set_major_locator(FixedLocator(ticks))
        ax.yaxis.set_major_formatter(fmt)
        ax.yaxis.set_minor_locator(NullLocator())
    elif decades < 2.5:
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(fmt)
        ax.yaxis.set_minor_locator(LogLocator(subs=(3.0, 4.0, 6.0, 7.0, 8.0, 9.0)))
        ax.yaxis.set_minor_formatter(NullFormatter())
    else:
        ax.yaxis.set_major_locator(LogLocator(numticks=8))
        ax.yaxis.set_minor_formatter(NullFormatter())


def _share_log_y(axes):
    """One common y range (the union of the axes' data), on a log scale."""
    lims = [_data_ylim(a) for a in axes]
    lims = [lim for lim in lims if lim[0] is not None]
    if not lims:
        return
    lo, hi = min(lim[0] for lim in lims), max(lim[1] for lim in lims)
    for a in axes:
        _log_y(a, lo, hi)


# =====================================================================================
# synthetic curves
# =====================================================================================
def _prepare_curves(curves):
    """The curves judged by the claims: one engine and the stated settings per experiment."""
    return stated_curves(curves)


def _series(curves, x="iteration", **where):
    """Seed 0 (else the smallest) under the default tie rule, and the min–max band over seeds.

    Returns ``(run, band, n_seeds)``: ``run`` the sorted curve (None if absent), ``band`` a
    DataFrame ``x, lo, hi`` per column (``train_lo``…) or None with a single seed.
    """
    if curves is None or curves.empty:
        return None, None, 0
    g = curves[curves["tie_rule"] == DEFAULT_TIE_RULE]
    for k, v in where.items():
        if k == "step":
            g = g[np.isclose(g["step"].astype(float), v, rtol=1e-9)] if v is not None else g
        else:
            g = g[g[k] == v]
    if g.empty:
        return None, None, 0
    seeds = sorted(g["seed"].astype(int).unique())
    run = g[g["seed"] == (0 if 0 in seeds else seeds[0])].sort_values("iteration")
    band = None
    if len(seeds) > 1:
        band = (
            g.groupby("iteration")
            .agg(
                train_lo=("train_loss", "min"),
                train_hi=("train_loss", "max"),
                test_lo=("test_loss", "min"),
                test_hi=("test_loss", "max"),
            )
            .reset_index()
        )
    return run, band, len(seeds)


def _plot_series(ax, run, band, col, x="iteration", **kw):
    xs = run[x].to_numpy(float)
    ax.plot(xs, run[col].to_numpy(float), **kw)
    if band is not None and x == "iteration":
        which = "train" if col == "train_loss" else "test"
        ax.fill_between(
            band["iteration"],
            band[f"{which}_lo"],
            band[f"{which}_hi"],
            color=kw.get("color", "grey"),
            alpha=0.12,
            lw=0,
            label="_band",
        )


def _floor_of(run) -> float | None:
    """Floor level of a stored curve (docs/claims.md), None when it has none."""
    nl = (
        run["n_leaves"].to_numpy(float)
        if "n_leaves" in run and run["n_leaves"].notna().any()
        else None
    )
    t = floor_start(run["train_loss"].to_numpy(float), nl)
    return None if t is None else float(run["train_loss"].iloc[t])


def _shade_floor(ax, level):
    """Shade y ≤ 10 × the highest floor level in ``ax`` (comparisons there are not made)."""
    if level is None:
        return
    lo, hi = ax.get_ylim()
    top = min(max(10.0 * level, lo), hi)
    ax.axhspan(lo, top, color=FLOOR_COLOR, zorder=0, lw=0)
    ax.set_ylim(lo, hi)


def _settings_text(curves, what):
    """One line stating the synthetic settings read from the stored curves."""
    if curves is None or curves.empty:
        return f"{what}: no stored curves"
    T = sorted(set(curves["n_estimators"].astype(int)))
    nus = sorted(set(curves["learning_rate"].astype(float)))
    seeds = sorted(set(curves["seed"].astype(int)))
    rules = sorted(set(curves["tie_rule"].astype(str)))
    engines = sorted(set(curves["engine"].astype(str)))
    seed_txt = (
        f"data/tree seed {seeds[0]}"
        if len(seeds) == 1
        else f"seed 0 drawn, band = min–max over seeds {seeds[0]}–{seeds[-1]} ({len(seeds)})"
    )
    rule_txt = f", tie rule {DEFAULT_TIE_RULE}" + (
        f" (also stored: {', '.join(r for r in rules if r != DEFAULT_TIE_RULE)})"
        if len(rules) > 1
        else ""
    )
    return (
        f"{what} — {seed_txt}{rule_txt}, 50/50 train/test split, T = {'/'.join(map(str, T))}, "
        f"ν = {'/'.join(f'{v:g}' for v in nus)}, {'/'.join(engines)} trees"
    )


def _exp(curves, name):
    if curves is None or curves.empty:
        return curves
    return curves[curves["experiment"] == name]


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
    if missing:
        fig.text(
            0.5,
            -0.06,
            "missing runs: " + ", ".join(missing),
            ha="center",
            color="firebrick",
            fontsize=8,
            wrap=True,
        )
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
    if missing:
        fig.text(
            0.5,
            -0.01,
            "missing runs: " + ", ".join(missing),
            ha="center",
            color="firebrick",
            fontsize=8,
            wrap=True,
        )
    fig.tight_layout()
    return fig


# =====================================================================================
# real-world figures
# =====================================================================================
def _protocol_caption(info, datasets):
    by = {}
    for ds in datasets:
        if ds in info:
            by.setdefault(info[ds]["protocol"], []).append(ds)
    if not by:
        return "protocol: no stored real-world rows"
    return "protocol (grid/splits/T_max, trees): " + "; ".join(
        f"{p} ({', '.join(d)})" for p, d in by.items()
    )


def _strip_box(ax, groups, marked=(), reference_line=0.0):
    """Box plot + jittered points of each (algo, values) in ``groups``, coloured per method; the
    tick labels of the methods in ``marked`` get a star."""
    rng = np.random.default_rng(0)
    positions = np.arange(len(groups))
    data = [np.asarray(v, float) for _, v in groups]
    bp = ax.boxplot(
        data,
        positions=positions,
        widths=0.6,
        showfliers=False,
        patch_artist=True,
        medianprops={"color": "black", "lw": 1.2},
        whiskerprops={"lw": 0.8},
        capprops={"lw": 0.8},
    )
    for patch, (algo, _) in zip(bp["boxes"], groups):
        patch.set_facecolor(_shade(style(algo)["color"], 0.35))
        patch.set_edgecolor(style(algo)["color"])
    for pos, (algo, v) in zip(positions, groups):
        st = style(algo)
        ax.scatter(
            pos + rng.uniform(-0.18, 0.18, len(v)),
            v,
            s=10,
            color=st["color"],
            marker=st["marker"],
            lw=0,
            alpha=0.85,
            zorder=3,
            label=f"_points {algo}",
        )
    ax.axhline(reference_line, color="0.25", lw=0.8, ls="--", zorder=0)
    ax.set_xticks(positions)
    crowded = (
        len(groups) > 7
    )  # e.g. nine methods with the starred baselines: upright labels would overlap
    ax.set_xticklabels(
        [style(a)["short"] + ("*" if a in marked else "") for a, _ in groups],
        rotation=45 if crowded else 0,
        ha="right" if crowded else "center",
        rotation_mode="anchor" if crowded else "default",
    )
    ax.set_xlim(-0.7, len(groups) - 0.3)
    _maybe_symlog(ax, np.concatenate(data) if data else np.array([]))


def _maybe_symlog(ax, values):
    """Symmetric log scale when a few values (diverging methods) dwarf the bulk of them."""
    v = np.abs(values[np.isfinite(values)])
    v = v[v > 0]
    if v.size < 4:
        return
    bulk = np.quantile(v, 0.75)
    if bulk > 0 and v.max() > 30 * bulk:
        ax.set_yscale("symlog", linthresh=float(bulk), linscale=1.0)
        # ticks at 0 and at the decades outside the linear part only: the default locator also puts
        # decades inside it, whose labels then overlap around 0
        decades = 10.0 ** np.arange(np.ceil(np.log10(bulk)), np.ceil(np.log10(v.max())) + 1)
        # margins in the symlog coordinates: the largest points clear the top edge
        ax.autoscale_view()
        limits = ax.get_ylim()
        ax.set_yticks(np.concatenate([-decades[::-1], [0.0], decades]))
        ax.set_ylim(limits)  # set_yticks widens the view to every tick
        ax.text(
            0.99,
            0.01,
            "symlog scale",
            transform=ax.transAxes,
            ha="right",
            va="bottom",
            fontsize=6,
            color="0.4",
        )


def panel_groups(rows, ds, loss, metric, mode) -> list[tuple[str, np.ndarray]]:
    """The (method, Δ per split) groups of one panel, in display order: the paper's methods that
    report ``metric`` and the extra baselines when stored. Loss-independent methods appear under
    every loss (paired with that loss's gradient run), never in a hinge − exponential panel."""
    if mode == "hinge_minus_exp":
        d = loss_differences(rows, ds, metric, "hinge", "exponential")
    else:
        d = paired_deltas(rows, ds, loss, metric)
    shown = _expected(loss, metric, mode) + list(EXTRA_BASELINES)
    return [
        (a, d[d["algo"] == a]["delta"].to_numpy())
        for a in METHOD_ORDER
        if a in shown and (d["algo"] == a).any()
    ]


def _expected(loss, metric, mode):
    """The paper's methods expected in a panel (the extra baselines are drawn when stored, never
    required).
    """
    boost = [
        "prox",
        "residual_gradient",
        "residual_prox",
        "accelerated_gradient",
        "accelerated_prox",
        "xgboost",
    ]
    if mode == "hinge_minus_exp":
        return ["gradient"] + boost
    if metric == "test_error" or loss == "ls":
        return boost + ["random_forest"]
    return boost


@_styled
def _delta_figure(real, datasets, panel_rows, title, figsize_per=(2.9, 2.6)) -> Figure:
    """Grid of Δ panels: one row per entry of ``panel_rows`` (label, loss, metric, mode), one column
    per dataset.
    """
    rows, info = (
        rows_per_dataset(real, datasets) if real is not None and not real.empty else (None, {})
    )
    ncol = len(datasets)
    fig = Figure(figsize=(figsize_per[0] * ncol, figsize_per[1] * len(panel_rows) + 1.2))
    axes = fig.subplots(len(panel_rows), ncol, squeeze=False)
    used, any_shared = set(), False
    for r, (label, loss, metric, mode) in enumerate(panel_rows):
        for c, ds in enumerate(datasets):
            ax = axes[r, c]
            if c == 0:
                ax.set_ylabel(label)
            if ds not in info:
                _empty(ax, f"{ds}\nno stored rows")
                ax.set_title(ds)
                continue
            expected = _expected(loss, metric, mode)
            groups = panel_groups(rows, ds, loss, metric, mode)
            shared = set(shared_methods(rows, ds)) if mode != "hinge_minus_exp" else set()
            any_shared |= bool(shared & {a for a, _ in groups})
            meta = info[ds]
            ax.set_title(f"{ds}\n{meta['protocol']}, {meta['n_splits']} splits", fontsize=8)
            if not groups:
                _empty(
                    ax,
                    "no paired rows for"
                    f" {loss if mode != 'hinge_minus_exp' else 'hinge & exponential'}",
                )
                continue
            used.update(a for a, _ in groups)
            _strip_box(ax, groups, shared)
            ax.grid(True, axis="y", alpha=0.25)
            miss = [style(a)["short"] for a in expected if a not in {g for g, _ in groups}]
            if miss:
                ax.text(
                    0.01,
                    0.99,
                    "missing: " + ", ".join(miss),
                    transform=ax.transAxes,
                    ha="left",
                    va="top",
                    fontsize=6.5,
                    color="firebrick",
                )
    handles = [
        Line2D(
            [],
            [],
            color=style(a)["color"],
            marker=style(a)["marker"],
            ls="",
            label=style(a)["label"],
        )
        for a in METHOD_ORDER
        if a in used
    ]
    if handles:
        fig.legend(
            handles=handles,
            loc="lower center",
            ncol=min(len(handles), 5),
            frameon=False,
            bbox_to_anchor=(0.5, -0.01),
        )
    width = int(fig.get_figwidth() * 13)
    caption = (
        f"{_protocol_caption(info, datasets)}; box = quartiles over splits (whiskers 1.5 IQR), "
        "points = splits, dashed line = 0"
        + (
            "; * = loss-independent: one fit per split, the same rows under every loss"
            if any_shared
            else ""
        )
    )
    fig.suptitle(textwrap.fill(title, width) + "\n" + textwrap.fill(caption, width), fontsize=9)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig


def fig_regression_loss(real) -> Figure:
    """Δ test loss vs gradient per regression dataset; rows ls, lad, pinball."""
    rows = [
        (f"Δ test loss ({loss})", loss, "test_loss", "delta") for loss in ("ls", "lad", "pinball")
    ]
    return _delta_figure(
        real,
        REGRESSION_DATASETS,
        rows,
        "Regression: Δ test loss = test loss − that of gradient boosting on the same split; "
        "rows: least squares, least absolute deviation, pinball τ=0.9",
    )


def fig_classification_loss(real) -> Figure:
    """Δ test loss vs gradient per classification dataset; rows exponential, hinge."""
    rows = [
        (f"Δ test loss ({loss})", loss, "test_loss", "delta") for loss in ("exponential", "hinge")
    ]
    return _delta_figure(
        real,
        CLASSIFICATION_DATASETS,
        rows,
        "Classification: Δ test loss = test loss − that of gradient boosting on the same split; "
        "rows: exponential β=1, hinge",
        figsize_per=(3.6, 2.8),
    )


def fig_classification_error(real) -> Figure:
    """Δ misclassification rate (exponential, hinge) and hinge − exponential per method."""
    rows = [
        ("Δ test error (exponential)", "exponential", "test_error", "delta"),
        ("Δ test error (hinge)", "hinge", "test_error", "delta"),
        ("hinge − exponential\ntest error", None, "test_error", "hinge_minus_exp"),
    ]
    return _delta_figure(
        real,
        CLASSIFICATION_DATASETS,
        rows,
        "Classification: misclassification rate; Δ = error − that of gradient boosting (same loss, "
        "same split); bottom: error with hinge − error with exponential (same method, same split; "
        "random forests, LightGBM and HGB do not depend on the loss)",
        figsize_per=(3.6, 2.8),
    )


# =====================================================================================
# claims overview
# =====================================================================================
def _cell_rows(claims, sid, protocol):
    """A statement's cell rows (per loss, dataset, …) on the protocol its verdict rests on, without
    the per-reading, per-tie-rule and per-run rows."""
    g = claims[
        (claims["id"] == sid) & (claims["scope"] != "all") & (claims["protocol"] == protocol)
    ]
    return g[~g["scope"].str.startswith(("tie_rule=", "reading="))]


@_styled
def fig_claims(claims: pd.DataFrame) -> Figure:
    """One row per statement: its verdict, and how its cells split between the three verdicts."""
    ids = list(STATEMENTS)
    fig = Figure(figsize=(10, 0.26 * len(ids) + 1.4))
    ax = fig.add_subplot(1, 1, 1)
    top = (
        claims[claims["scope"] == "all"].set_index("id")
        if claims is not None and not claims.empty
        else None
    )
    for i, sid in enumerate(ids):
        y = len(ids) - 1 - i
        verdict = top.loc[sid, "verdict"] if top is not None and sid in top.index else INCONCLUSIVE
        ax.barh(y, 1.0, left=0.0, color=VERDICT_COLORS[verdict], edgecolor="white").patches[
            0
        ].set_label(f"_verdict {sid}")
        cells = (
            _cell_rows(claims, sid, top.loc[sid, "protocol"])
            if top is not None and sid in top.index
            else pd.DataFrame()
        )
        left = 1.3
        if not cells.empty:
            n = len(cells)
            for v in (CONFIRMED, CONTRADICTED, INCONCLUSIVE):
                w = 2.0 * (cells["verdict"] == v).sum() / n
                if w:
                    ax.barh(y, w, left=left, color=VERDICT_COLORS[v], edgecolor="white")
                    left += w
            ax.text(3.4, y, f"{n} cells", va="center", fontsize=7, color="0.3")
        statement = STATEMENTS[sid]
        ax.text(
            4.1,
            y,
            f"{sid}  {statement.text} (l. {statement.paper_line})",
            va="center",
            fontsize=7.5,
        )
    ax.set_xlim(0, 12)
    ax.set_ylim(-0.7, len(ids) - 0.3)
    ax.set_yticks(range(len(ids)))
    ax.set_yticklabels(list(reversed(ids)), fontsize=7)
    ax.set_xticks([0.5, 2.3])
    ax.set_xticklabels(["verdict", "cells (share)"], fontsize=7)
    for s in ("top", "right", "bottom"):
        ax.spines[s].set_visible(False)
    handles = [Patch(color=c, label=v) for v, c in VERDICT_COLORS.items()]
    fig.legend(handles=handles, loc="lower center", ncol=3, frameon=False)
    protos = sorted(set(top["protocol"])) if top is not None else []
    sub = "criteria: docs/claims.md; verdicts: results/claims.csv" + (
        f"; {len(protos)} protocols" if protos else ""
    )
    fig.suptitle(
        "The paper's statements: verdict of each (left) and of its cells on the same protocol"
        " (right)\n" + sub,
        fontsize=9,
    )
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return fig


# =====================================================================================
def make_all(results_dir="results", out_dir="figures", only=None, log=print) -> dict:
    """Write every figure (or those in ``only``) from ``results_dir``; returns {id: [paths]}."""

    only = set(only or FIGURE_IDS)
    t0 = time.perf_counter()
    verify_stored(results_dir)  # a damaged file stops everything before any figure is written
    out = {}
    read = versions.read_versions(results_dir)  # one numerics version (docs/results.md)
    curves = (
        versions.load_curves(results_dir, versions=read)
        if only & {"convergence", "convergence_time", "proximal_step", "claims"}
        else None
    )
    if "intro" in only:
        c, p, d = versions.load_intro(results_dir, versions=read)
        out["intro"] = save(fig_intro(c, p, d), out_dir, "intro")
    if "convergence" in only:
        out["convergence"] = save(fig_convergence(curves, "iteration"), out_dir, "convergence")
    if "convergence_time" in only:
        out["convergence_time"] = save(
            fig_convergence(curves, "seconds"), out_dir, "convergence_time"
        )
    if "proximal_step" in only:
        out["proximal_step"] = save(fig_proximal_step(curves), out_dir, "proximal_step")
    real = (
        versions.load(results_dir, versions=read)
        if only & {"regression_loss", "classification_loss", "classification_error", "claims"}
        else None
    )
    for fid, fn in (
        ("regression_loss", fig_regression_loss),
        ("classification_loss", fig_classification_loss),
        ("classification_error", fig_classification_error),
    ):
        if fid in only:
            out[fid] = save(fn(real), out_dir, fid)
    if "claims" in only:
        stored = Path(results_dir) / "claims.csv"
        if stored.is_file():
            claims = pd.read_csv(stored, dtype=str, keep_default_na=False)
        else:
            claims = judge(curves, real)
        out["claims"] = save(fig_claims(claims), out_dir, "claims")
    log(
        f"wrote {sum(len(v) for v in out.values())} files to {out_dir}/ in"
        f" {time.perf_counter() - t0:.1f} s"
    )
    return out


@stops_on_damage
def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m proxboost.figures", description=__doc__.splitlines()[0]
    )
    p.add_argument("--results", default="results", help="results directory (default: results)")
    p.add_argument("--out", default="figures", help="output directory (default: figures)")
    p.add_argument(
        "--only",
        default=None,
        help="comma-separated figure ids (default: all of " + ", ".join(FIGURE_IDS) + ")",
    )
    args = p.parse_args(argv)
    only = [s.strip() for s in args.only.split(",")] if args.only else None
    if only:
        bad = sorted(set(only) - set(FIGURE_IDS))
        if bad:
            p.error(f"unknown figure id(s) {bad}; valid: {', '.join(FIGURE_IDS)}")
    make_all(args.results, args.out, only)


if __name__ == "__main__":
    main()
