"""The seven figures of SPEC §6, from stored results only (nothing is fitted).

    python -m proxboost.figures --results results --out figures

writes ``figures/<id>.png`` and ``figures/<id>.pdf`` for the ids ``intro``, ``convergence``,
``convergence_time``, ``proximal_step`` (synthetic curves, :mod:`proxboost.curves`) and
``regression_loss``, ``classification_loss``, ``classification_error`` (real-world rows,
:func:`proxboost.results.load`).

Conventions, the same in every figure: one colour and one marker per method
(:data:`METHOD_STYLES`); λ is the per-sample proximal step (SPEC §2.1); Δ = value − value of
``gradient`` on the same split (paired); every figure states where its data came from (the
synthetic settings, or the real-world protocol of each dataset). Missing data never stops a
figure: what exists is drawn and what is missing is written on the figure.
"""

from __future__ import annotations

import argparse
import textwrap
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import to_rgb  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from ._io import atomic_path  # noqa: E402
from .summary import (  # noqa: E402
    CLASSIFICATION_DATASETS,
    REGRESSION_DATASETS,
    loss_differences,
    missing_reason,
    paired_deltas,
    select_real_rows,
)

__all__ = [
    "FIGURE_IDS",
    "METHOD_STYLES",
    "fig_classification_error",
    "fig_classification_loss",
    "fig_convergence",
    "fig_intro",
    "fig_proximal_step",
    "fig_regression_loss",
    "main",
    "make_all",
]

FIGURE_IDS = ("intro", "convergence", "convergence_time", "proximal_step", "regression_loss",
              "classification_loss", "classification_error")

#: One colour, marker and short name per method, used by every figure (the paper draws its
#: proposed methods in blue, orange and green, residual gradient in red and XGBoost in pink).
METHOD_STYLES = {
    "gradient": {"color": "#222222", "marker": "o", "short": "G", "label": "gradient (G)"},
    "prox": {"color": "#1f77b4", "marker": "s", "short": "P", "label": "prox (P)"},
    "residual_prox": {"color": "#ff7f0e", "marker": "^", "short": "RP", "label": "residual prox (RP)"},
    "accelerated_prox": {"color": "#2ca02c", "marker": "D", "short": "AP", "label": "accelerated prox (AP)"},
    "residual_gradient": {"color": "#d62728", "marker": "v", "short": "RG", "label": "residual gradient (RG)"},
    "accelerated_gradient": {"color": "#9467bd", "marker": "P", "short": "AG", "label": "accelerated gradient (AG)"},
    "xgboost": {"color": "#e377c2", "marker": "X", "short": "XGB", "label": "XGBoost (XGB)"},
    "random_forest": {"color": "#8c564b", "marker": "*", "short": "RF", "label": "random forest (RF)"},
    "lightgbm": {"color": "#17becf", "marker": "h", "short": "LGBM", "label": "LightGBM (LGBM)"},
    "sklearn_hgb": {"color": "#bcbd22", "marker": "p", "short": "HGB", "label": "scikit-learn HGB (HGB)"},
}
METHOD_ORDER = tuple(METHOD_STYLES)
DEPTH_STYLES = {3: "-", 15: "--"}
LOSS_NAMES = {"ls": "least squares (ls)", "lad": "least absolute deviation (lad)", "pinball": "pinball τ=0.9",
              "exponential": "exponential β=1", "hinge": "hinge"}
STEPS = (1e-2, 1e-1, 1.0, 10.0, 100.0)
N_MARKS = 8

plt.rcParams.update({"font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9, "legend.fontsize": 8,
                     "xtick.labelsize": 8, "ytick.labelsize": 8, "figure.dpi": 100})


def style(algo) -> dict:
    return METHOD_STYLES.get(algo, {"color": "grey", "marker": ".", "short": algo, "label": algo})


def _shade(color, frac):
    """``color`` blended with white: frac = 1 the colour itself, smaller = lighter."""
    c = np.array(to_rgb(color))
    return tuple(1 - frac * (1 - c))


def _markevery(n, slot, n_slots):
    """Marker positions: N_MARKS per curve, shifted by ``slot`` so overlapping curves show all markers."""
    step = max(n // N_MARKS, 1)
    start = int(step * (slot + 0.5) / max(n_slots, 1))
    return slice(min(start, n - 1), None, step)


def _save(fig, out_dir, fid) -> list[Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext in ("png", "pdf"):
        path = out_dir / f"{fid}.{ext}"
        with atomic_path(path, suffix=f".{ext}") as tmp:
            fig.savefig(tmp, format=ext, dpi=150 if ext == "png" else None, bbox_inches="tight",
                        metadata={"CreationDate": None} if ext == "pdf" else None)
        paths.append(path)
    plt.close(fig)
    return paths


def _share_log_ylim(axes):
    """Give ``axes`` one common y range (the union of theirs), on a log scale."""
    lo = min(a.get_ylim()[0] for a in axes)
    hi = max(a.get_ylim()[1] for a in axes)
    for a in axes:
        a.set_ylim(lo, hi)
        _log_y(a)


def _empty(ax, text):
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, fontsize=9, color="0.35", wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])


def _log_y(ax):
    """Log y axis; plain tick labels (0.2, 0.3, ...) when it spans less than two decades."""
    from matplotlib.ticker import FuncFormatter, LogLocator

    ax.set_yscale("log")
    lo, hi = ax.get_ylim()
    if lo > 0 and hi / lo < 100:
        fmt = FuncFormatter(lambda v, _: f"{v:g}")
        ax.yaxis.set_major_formatter(fmt)
        ax.yaxis.set_minor_locator(LogLocator(subs=(2, 3, 5) if hi / lo > 10 else (2, 3, 4, 5, 6, 7, 8, 9)))
        ax.yaxis.set_minor_formatter(fmt)


def _runs(curves, **where):
    """Curves matching ``where`` (column == value; ``step`` matched with a tolerance), as a list of runs."""
    if curves is None or curves.empty:
        return []
    g = curves
    for k, v in where.items():
        if k == "step" and v is not None:
            g = g[np.isclose(g["step"].astype(float), v, rtol=1e-9)]
        else:
            g = g[g[k] == v]
    if g.empty:
        return []
    key = ["experiment", "dataset", "loss", "algo", "max_depth", g["step"].fillna(-1.0)]
    return [run.sort_values("iteration") for _, run in g.groupby(key, sort=False)]


def _first(runs):
    return runs[0] if runs else None


def _settings_text(curves, what):
    """One line stating the synthetic settings read from the stored curves."""
    if curves is None or curves.empty:
        return f"{what}: no stored curves"
    r = curves.iloc[0]
    T = sorted(set(curves["n_estimators"].astype(int)))
    nus = sorted(set(curves["learning_rate"].astype(float)))
    engines = sorted(set(curves["engine"].astype(str)))
    commits = sorted({str(c)[:10] + ("-dirty" if str(c).endswith("-dirty") else "") for c in curves["commit"]})
    return (f"{what} — data seed {int(r['seed'])}, 50/50 train/test split, T = {'/'.join(map(str, T))}, "
            f"ν = {'/'.join(f'{v:g}' for v in nus)}, engine {'/'.join(engines)}, commit {', '.join(commits)}")


# =====================================================================================
# synthetic figures
# =====================================================================================
def fig_intro(curves, predictions, data, out_dir="figures"):
    """§5.3: predictions f_T over x (left; top gradient, bottom prox) and train / test loss (right)."""
    fig, axes = plt.subplots(2, 2, figsize=(10, 6.2), gridspec_kw={"width_ratios": [1.5, 1]})
    missing = []
    loss_axes = []
    for row, algo in enumerate(("gradient", "prox")):
        st = style(algo)
        axp, axl = axes[row]
        run = _first(_runs(curves, experiment="intro", algo=algo))
        pred = predictions[predictions["algo"] == algo] if predictions is not None and not predictions.empty else None
        if data is not None and not data.empty:
            tr = data[data["part"] == "train"]
            axp.scatter(tr["x"], tr["y"], s=5, color="0.65", lw=0, label="training data", zorder=1)
        xs = np.linspace(0, 1, 2000)
        axp.plot(xs, np.sin(2 * np.pi * xs) + np.sin(32 * np.pi * xs), color="0.3", lw=0.6, ls=":",
                 label="sin(2πx) + sin(32πx)", zorder=2)
        if pred is not None and not pred.empty:
            pred = pred.sort_values("x")
            axp.plot(pred["x"], pred["prediction"], color=st["color"], lw=1.6, label=f"f_T, {st['label']}", zorder=3)
        else:
            missing.append(f"{algo} predictions")
        axp.set_xlabel("x")
        axp.set_ylabel("y")
        axp.set_title(f"{st['label']}: prediction f_T")
        lo, hi = axp.get_ylim()
        axp.set_ylim(lo, hi + 0.22 * (hi - lo))          # room for the legend above the data
        axp.legend(loc="upper center", ncol=3, fontsize=7, framealpha=0.9)
        if run is not None:
            it = run["iteration"].to_numpy()
            for col, ls, lab in (("train_loss", "-", "training loss"), ("test_loss", "--", "test loss")):
                axl.plot(it, run[col], color=st["color"], ls=ls, marker=st["marker"], ms=4,
                         markevery=_markevery(len(it), 0 if col == "train_loss" else 1, 2), label=lab)
            axl.axhline(0.12, color="0.5", lw=0.8, ls=":", label="0.12 (paper's plateau)")
            _log_y(axl)
            axl.set_xlabel("iteration t")
            axl.set_ylabel("lad loss C(f_t)")
            axl.set_title(f"{st['label']}: loss vs iteration")
            axl.legend(fontsize=7, handlelength=3)
            axl.grid(True, which="both", alpha=0.25)
            loss_axes.append(axl)
        else:
            missing.append(f"{algo} curves")
            _empty(axl, f"no stored run for {algo}")
    if len(loss_axes) == 2:
        _share_log_ylim(loss_axes)
    ref = curves[curves["experiment"] == "intro"] if curves is not None and not curves.empty else curves
    sub = _settings_text(ref, "sines data (SPEC §4.1), lad loss, depth 2, λ = 1 per sample")
    fig.suptitle("Introduction example: subgradient (top) vs proximal (bottom) boosting\n" + sub, fontsize=9)
    if missing:
        fig.text(0.5, -0.01, "missing: " + ", ".join(missing), ha="center", color="firebrick", fontsize=8)
    fig.tight_layout()
    return _save(fig, out_dir, "intro")


def fig_convergence(curves, out_dir="figures", x="iteration"):
    """§5.1: training loss vs iteration (``x="iteration"``) or seconds (``x="seconds"``)."""
    fid = "convergence" if x == "iteration" else "convergence_time"
    algos = ("gradient", "prox", "residual_gradient", "residual_prox")
    panels = (("ls", "regression"), ("exponential", "classification"), ("lad", "regression"), ("hinge", "classification"))
    fig, axes = plt.subplots(2, 2, figsize=(10, 7.2))
    missing = []
    for ax, (loss, dataset) in zip(axes.ravel(), panels):
        n = 0
        for depth in (3, 15):
            for k, algo in enumerate(algos):
                st = style(algo)
                run = _first(_runs(curves, experiment="convergence", loss=loss, algo=algo, max_depth=depth))
                if run is None:
                    missing.append(f"{loss}/{st['short']}/depth {depth}")
                    continue
                n += 1
                xs = run["iteration"] if x == "iteration" else run["seconds"]
                ys = run["train_loss"].to_numpy()
                # vs seconds, iterations are not evenly spaced (a tree that stops splitting is cheap):
                # markers evenly spaced along the drawn line instead
                every = _markevery(len(ys), k, len(algos)) if x == "iteration" else (0.02 + 0.03 * k, 0.12)
                ax.plot(xs, ys, color=st["color"], ls=DEPTH_STYLES[depth], lw=1.3, marker=st["marker"], ms=4.5,
                        mfc="none" if depth == 15 else st["color"], markevery=every)
        if n == 0:
            _empty(ax, f"no stored run for {loss}")
            continue
        _log_y(ax)
        ax.set_title(f"{LOSS_NAMES[loss]} — synthetic {dataset}")
        ax.set_xlabel("iteration t" if x == "iteration" else "wall-clock seconds (cumulative fit time)")
        ax.set_ylabel("training loss C(f_t)")
        ax.grid(True, which="both", alpha=0.25)
    handles = [Line2D([], [], color=style(a)["color"], marker=style(a)["marker"], label=style(a)["label"]) for a in algos]
    handles += [Line2D([], [], color="0.2", ls=ls, label=f"depth {d}" + (" (open markers)" if d == 15 else ""))
                for d, ls in DEPTH_STYLES.items()]
    fig.legend(handles=handles, loc="lower center", ncol=6, bbox_to_anchor=(0.5, -0.005), frameon=False)
    what = "vs iteration" if x == "iteration" else "vs wall-clock seconds"
    ref = curves[curves["experiment"] == "convergence"] if curves is not None and not curves.empty else curves
    sub = _settings_text(ref, "λ = 1 per sample")
    if x == "seconds":
        sub += "\nruns executed one at a time on a shared 2-core machine: times are noisy"
    fig.suptitle(f"Convergence (SPEC §5.1): training loss {what}, trees of depth 3 (solid) and 15 (dashed)\n{sub}",
                 fontsize=9)
    if missing:
        fig.text(0.5, -0.04, "missing runs: " + ", ".join(missing), ha="center", color="firebrick", fontsize=8, wrap=True)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return _save(fig, out_dir, fid)


def fig_proximal_step(curves, out_dir="figures"):
    """§5.2: training and test loss vs iteration for each λ; lad (top two rows) and hinge (bottom)."""
    families = (("prox", "gradient", "plain"), ("residual_prox", "residual_gradient", "residual"),
                ("accelerated_prox", "accelerated_gradient", "accelerated"))
    rows = (("lad", "train_loss"), ("lad", "test_loss"), ("hinge", "train_loss"), ("hinge", "test_loss"))
    fig, axes = plt.subplots(4, 3, figsize=(12, 12.5), sharex=True)
    missing = []
    for r, (loss, col) in enumerate(rows):
        row_axes = []
        for c, (palgo, galgo, fam) in enumerate(families):
            ax = axes[r, c]
            n = 0
            g = _first(_runs(curves, experiment="proximal_step", loss=loss, algo=galgo))
            if g is not None:
                n += 1
                st = style(galgo)
                ax.plot(g["iteration"], g[col], color=st["color"], lw=1.4, marker=st["marker"], ms=4,
                        markevery=_markevery(len(g), 0, 6), label=f"{st['short']} (no λ)")
            elif r % 2 == 0:
                missing.append(f"{loss}/{galgo}")
            st = style(palgo)
            for k, s in enumerate(STEPS):
                run = _first(_runs(curves, experiment="proximal_step", loss=loss, algo=palgo, step=s))
                if run is None:
                    if r % 2 == 0:
                        missing.append(f"{loss}/{st['short']} λ={s:g}")
                    continue
                n += 1
                ax.plot(run["iteration"], run[col], color=_shade(st["color"], 0.25 + 0.75 * k / (len(STEPS) - 1)),
                        lw=1.2, marker=st["marker"], ms=3.5, markevery=_markevery(len(run), k + 1, 6),
                        label=f"{st['short']} λ={s:g}")
            if n == 0:
                _empty(ax, f"no stored run for {loss} / {fam}")
                continue
            _log_y(ax)
            ax.grid(True, which="both", alpha=0.25)
            ax.set_title(f"{loss}, {'training' if col == 'train_loss' else 'test'} loss — "
                         f"{style(palgo)['short']} vs {style(galgo)['short']}")
            if c == 0:
                ax.set_ylabel(f"{loss}: {'training' if col == 'train_loss' else 'test'} loss")
            if r == len(rows) - 1:
                ax.set_xlabel("iteration t")
            if r % 2 == 0:
                ax.legend(fontsize=7, ncol=2, loc="best")
            if c < 2:
                row_axes.append(ax)
            else:
                # accelerated runs can diverge upwards or hit a loss of exactly 0 (hinge): own y axis,
                # at most 3 decades below the initial loss, and say so when curves leave it
                ys = np.concatenate([ln.get_ydata() for ln in ax.get_lines()])
                floor = 1e-3 * float(np.nanmax(ys[:1])) if ys.size else 0.0
                lo, hi = ax.get_ylim()
                if floor > 0 and (np.nanmin(ys) < floor):
                    ax.set_ylim(max(lo, floor), hi)
                    ax.text(0.99, 0.01, "curves leaving the bottom go below 1e-3 × C(f_0) (down to 0)",
                            transform=ax.transAxes, ha="right", va="bottom", fontsize=6.5, color="0.3")
                _log_y(ax)
        # plain and residual variants share their y axis (same scale, comparable at a glance)
        if row_axes:
            _share_log_ylim(row_axes)
    ref = curves[curves["experiment"] == "proximal_step"] if curves is not None and not curves.empty else curves
    sub = _settings_text(ref, "depth 3, λ per sample (darker = larger λ)")
    fig.suptitle("Proximal step (SPEC §5.2): training and test loss vs iteration for λ ∈ {0.01, 0.1, 1, 10, 100}; "
                 "gradient counterparts do not use λ\n" + sub, fontsize=9)
    if missing:
        fig.text(0.5, -0.01, "missing runs: " + ", ".join(missing), ha="center", color="firebrick", fontsize=8, wrap=True)
    fig.tight_layout()
    return _save(fig, out_dir, "proximal_step")


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
    parts = [f"{p} ({', '.join(d)})" for p, d in by.items()]
    return "protocol (grid/splits/T_max): " + "; ".join(parts)


def _strip_box(ax, groups, reference_line=0.0):
    """Box plot + jittered points of each (algo, values) in ``groups``, coloured per method."""
    rng = np.random.default_rng(0)
    positions = np.arange(len(groups))
    data = [np.asarray(v, float) for _, v in groups]
    bp = ax.boxplot(data, positions=positions, widths=0.6, showfliers=False, patch_artist=True,
                    medianprops={"color": "black", "lw": 1.2}, whiskerprops={"lw": 0.8}, capprops={"lw": 0.8})
    for patch, (algo, _) in zip(bp["boxes"], groups):
        patch.set_facecolor(_shade(style(algo)["color"], 0.35))
        patch.set_edgecolor(style(algo)["color"])
    for pos, (algo, v) in zip(positions, groups):
        st = style(algo)
        ax.scatter(pos + rng.uniform(-0.18, 0.18, len(v)), v, s=10, color=st["color"], marker=st["marker"],
                   lw=0, alpha=0.85, zorder=3)
    ax.axhline(reference_line, color="0.25", lw=0.8, ls="--", zorder=0)
    ax.set_xticks(positions)
    ax.set_xticklabels([style(a)["short"] for a, _ in groups], rotation=0)
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
        ax.text(0.99, 0.01, "symlog scale", transform=ax.transAxes, ha="right", va="bottom", fontsize=6, color="0.4")


def _expected(loss, metric, mode):
    boost = ["prox", "residual_gradient", "residual_prox", "accelerated_gradient", "accelerated_prox", "xgboost"]
    if mode == "hinge_minus_exp":
        return ["gradient"] + boost
    if metric == "test_error" or loss == "ls":
        return boost + ["random_forest"]
    return boost


def _delta_figure(real, fid, datasets, panel_rows, title, out_dir, figsize_per=(2.9, 2.6)):
    """Grid of Δ panels: one row per entry of ``panel_rows`` (label, loss, metric, mode), one column per dataset."""
    rows, info = select_real_rows(real, datasets)
    ncol = len(datasets)
    fig, axes = plt.subplots(len(panel_rows), ncol, figsize=(figsize_per[0] * ncol, figsize_per[1] * len(panel_rows) + 1.2),
                             squeeze=False)
    used = set()
    for r, (label, loss, metric, mode) in enumerate(panel_rows):
        for c, ds in enumerate(datasets):
            ax = axes[r, c]
            if ds not in info:
                _empty(ax, f"{ds}\n{missing_reason(ds)}\n(no stored rows)")
                ax.set_title(ds)
                if c == 0:
                    ax.set_ylabel(label)
                continue
            if mode == "hinge_minus_exp":
                d = loss_differences(rows, ds, metric, "hinge", "exponential")
            else:
                d = paired_deltas(rows, ds, loss, metric)
            expected = _expected(loss, metric, mode)
            groups = [(a, d[d["algo"] == a]["delta"].to_numpy()) for a in METHOD_ORDER
                      if a in expected and (d["algo"] == a).any()]
            meta = info[ds]
            ax.set_title(f"{ds}\n{meta['protocol']}, {meta['n_splits']} splits, {meta['engine']} trees", fontsize=8)
            if c == 0:
                ax.set_ylabel(label)
            if not groups:
                _empty(ax, f"no paired rows for {loss if mode != 'hinge_minus_exp' else 'hinge & exponential'}")
                continue
            used.update(a for a, _ in groups)
            _strip_box(ax, groups)
            ax.grid(True, axis="y", alpha=0.25)
            miss = [style(a)["short"] for a in expected if a not in {g for g, _ in groups}]
            if miss:
                ax.text(0.01, 0.99, "missing: " + ", ".join(miss), transform=ax.transAxes, ha="left", va="top",
                        fontsize=6.5, color="firebrick")
    handles = [Line2D([], [], color=style(a)["color"], marker=style(a)["marker"], ls="", label=style(a)["label"])
               for a in METHOD_ORDER if a in used]
    if handles:
        fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 8), frameon=False,
                   bbox_to_anchor=(0.5, -0.01))
    width = int(fig.get_figwidth() * 13)
    caption = (f"{_protocol_caption(info, datasets)}; box = quartiles over splits (whiskers 1.5 IQR), "
               "points = splits, dashed line = 0")
    fig.suptitle(textwrap.fill(title, width) + "\n" + textwrap.fill(caption, width), fontsize=9)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return _save(fig, out_dir, fid)


def fig_regression_loss(real, out_dir="figures"):
    """§5.4: Δ test loss vs gradient per regression dataset; rows ls, lad, pinball."""
    rows = [(f"Δ test loss ({loss})", loss, "test_loss", "delta") for loss in ("ls", "lad", "pinball")]
    return _delta_figure(real, "regression_loss", REGRESSION_DATASETS, rows,
                         "Regression (SPEC §5.4): Δ test loss = test loss − that of gradient boosting on the same split; "
                         "rows: least squares, least absolute deviation, pinball τ=0.9", out_dir)


def fig_classification_loss(real, out_dir="figures"):
    """§5.4: Δ test loss vs gradient per classification dataset; rows exponential, hinge."""
    rows = [(f"Δ test loss ({loss})", loss, "test_loss", "delta") for loss in ("exponential", "hinge")]
    return _delta_figure(real, "classification_loss", CLASSIFICATION_DATASETS, rows,
                         "Classification (SPEC §5.4): Δ test loss = test loss − that of gradient boosting on the same "
                         "split; rows: exponential β=1, hinge", out_dir, figsize_per=(3.6, 2.8))


def fig_classification_error(real, out_dir="figures"):
    """§5.4: Δ misclassification rate (exponential, hinge) and hinge − exponential per method."""
    rows = [("Δ test error (exponential)", "exponential", "test_error", "delta"),
            ("Δ test error (hinge)", "hinge", "test_error", "delta"),
            ("hinge − exponential\ntest error", None, "test_error", "hinge_minus_exp")]
    return _delta_figure(real, "classification_error", CLASSIFICATION_DATASETS, rows,
                         "Classification (SPEC §5.4): misclassification rate; Δ = error − that of gradient boosting "
                         "(same loss, same split); bottom: error with hinge − error with exponential (same method, "
                         "same split; random forests do not depend on the loss)", out_dir, figsize_per=(3.6, 2.8))


# =====================================================================================
def make_all(results_dir="results", out_dir="figures", only=None, log=print) -> dict:
    """Write every figure (or those in ``only``) from ``results_dir``; returns {id: [paths]}."""
    from .curves import load_curves, load_intro
    from .results import load

    only = set(only or FIGURE_IDS)
    t0 = time.perf_counter()
    out = {}
    synthetic = only & {"intro", "convergence", "convergence_time", "proximal_step"}
    curves = load_curves(results_dir) if synthetic - {"intro"} else None
    if "intro" in only:
        c, p, d = load_intro(results_dir)
        out["intro"] = fig_intro(c, p, d, out_dir)
    if "convergence" in only:
        out["convergence"] = fig_convergence(curves, out_dir, "iteration")
    if "convergence_time" in only:
        out["convergence_time"] = fig_convergence(curves, out_dir, "seconds")
    if "proximal_step" in only:
        out["proximal_step"] = fig_proximal_step(curves, out_dir)
    if only & {"regression_loss", "classification_loss", "classification_error"}:
        real = load(results_dir)
        for fid, fn in (("regression_loss", fig_regression_loss), ("classification_loss", fig_classification_loss),
                        ("classification_error", fig_classification_error)):
            if fid in only:
                out[fid] = fn(real, out_dir)
    log(f"wrote {sum(len(v) for v in out.values())} files to {out_dir}/ in {time.perf_counter() - t0:.1f} s")
    return out


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m proxboost.figures", description=__doc__.splitlines()[0])
    p.add_argument("--results", default="results", help="results directory (default: results)")
    p.add_argument("--out", default="figures", help="output directory (default: figures)")
    p.add_argument("--only", default=None, help="comma-separated figure ids (default: all of " + ", ".join(FIGURE_IDS) + ")")
    args = p.parse_args(argv)
    only = [s.strip() for s in args.only.split(",")] if args.only else None
    if only:
        bad = sorted(set(only) - set(FIGURE_IDS))
        if bad:
            p.error(f"unknown figure id(s) {bad}; valid: {', '.join(FIGURE_IDS)}")
    make_all(args.results, args.out, only)


if __name__ == "__main__":
    main()
