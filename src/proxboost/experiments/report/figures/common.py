"""What every figure shares: the style, the saving with fixed metadata, and the plotting helpers
of curves, bands, floors and log axes."""

from __future__ import annotations

import functools
import math
from pathlib import Path

import matplotlib as mpl
import numpy as np
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.ticker import (
    FixedLocator,
    FuncFormatter,
    LogLocator,
    MaxNLocator,
    NullFormatter,
    NullLocator,
)

from proxboost.experiments.claims import (
    CONFIRMED,
    CONTRADICTED,
    INCONCLUSIVE,
    floor_start,
    stated_curves,
)
from proxboost.experiments.store.naming import (
    DEFAULT_TIE_RULE,
)
from proxboost.experiments.system.sealed import atomic_path

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
