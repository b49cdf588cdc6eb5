"""The paper's figures and the claims overview, drawn from stored results only (nothing is fitted).

    python -m proxboost.figures --results results --out figures

writes ``figures/<id>.png`` and ``figures/<id>.pdf`` for the ids ``intro``, ``convergence``,
``convergence_time``, ``proximal_step`` (synthetic curves,
:mod:`proxboost.experiments.fits.curves`), ``regression_loss``, ``classification_loss``,
``classification_error`` (real-world rows, :func:`proxboost.experiments.store.results.load`) and
``claims`` (the verdicts of ``results/claims.csv``, or computed by
:func:`proxboost.experiments.claims.judge` when that file is absent).

Conventions, the same in every figure: one colour, marker and short name per method
(:data:`proxboost.experiments.store.naming.METHOD_STYLES`); λ is the per-sample proximal step
(docs/method.md); Δ = value − value of ``gradient`` on the same split (paired); every figure states
where its data came from. Synthetic curves show seed 0 under the default tie rule, with the min–max
band over the stored seeds when there are several; the numerical floor of the convergence curves
(docs/claims.md) is shaded. Missing data never stops a figure: what exists is drawn and what is
missing is written on it.

Each ``fig_*`` function returns a :class:`matplotlib.figure.Figure` (no pyplot state) built
inside :func:`matplotlib.rc_context`, so importing or calling this module changes no global
setting; :func:`save` writes it with fixed metadata (no date, no software string) so that the
files are the same bytes when rebuilt from the same results.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from proxboost.experiments.claims import judge
from proxboost.experiments.plan import versions
from proxboost.experiments.report.figures.claims import fig_claims
from proxboost.experiments.report.figures.common import FIGURE_IDS, STYLE, save
from proxboost.experiments.report.figures.realworld import (
    fig_classification_error,
    fig_classification_loss,
    fig_regression_loss,
    panel_groups,
)
from proxboost.experiments.report.figures.synthetic import (
    fig_convergence,
    fig_intro,
    fig_proximal_step,
)
from proxboost.experiments.store.results import stops_on_damage, verify_stored

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
