"""The claims overview: one cell per statement and protocol, coloured by its verdict."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from proxboost.experiments.claims import (
    CONFIRMED,
    CONTRADICTED,
    INCONCLUSIVE,
    STATEMENTS,
    paper,
)
from proxboost.experiments.report.figures.common import (
    VERDICT_COLORS,
    _styled,
)


def _cell_rows(claims, sid, protocol):
    """A statement's cell rows (per loss, dataset, …) on the protocol its verdict rests on, without
    the per-reading, per-test (the corrected t-test's second reading), per-tie-rule and per-run
    rows."""
    g = claims[
        (claims["id"] == sid) & (claims["scope"] != "all") & (claims["protocol"] == protocol)
    ]
    return g[~g["scope"].str.startswith(("tie_rule=", "reading=", "test="))]


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
            f"{sid}  {statement.text} (§{paper.section_of(statement.paper_line)})",
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
