"""The real-world figures: the paired differences against ``gradient`` per dataset, for the
regression loss, the classification loss and the classification error."""

from __future__ import annotations

import textwrap

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from proxboost.experiments.claims.analysis import (
    loss_differences,
    paired_deltas,
    rows_per_dataset,
    shared_methods,
)
from proxboost.experiments.report.figures.common import (
    _empty,
    _shade,
    _styled,
)
from proxboost.experiments.store.naming import (
    CLASSIFICATION_DATASETS,
    EXTRA_BASELINES,
    METHOD_ORDER,
    REGRESSION_DATASETS,
    style,
)


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
def delta_figure(real, datasets, panel_rows, title, figsize_per=(2.9, 2.6)) -> Figure:
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
    return delta_figure(
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
    return delta_figure(
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
    return delta_figure(
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
