"""Stored convergence curves as a judge sees them: the stated settings of each experiment, and
one run (seed, tie rule) at a time."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from proxboost.experiments.claims.criteria import INCONCLUSIVE, Cell, Curve
from proxboost.experiments.store.naming import (
    DEFAULT_TIE_RULE,
    ENGINE_PREFERENCE,
    TIE_LOSSES,
    tie_rule_of,
)

# =====================================================================================
# synthetic curves: runs
# =====================================================================================
#: The settings each experiment is judged at (docs/claims.md); other settings are ignored here.
STATED = {
    "convergence": {"learning_rate": 0.05, "step": 1.0},
    "proximal_step": {"learning_rate": 0.05, "max_depth": 3},
    "intro": {"learning_rate": 0.05, "step": 1.0, "max_depth": 2, "noise_std": 0.15},
}


def _find_key(obj, key):
    """The value of ``key`` anywhere in a nested dict / list (None if absent)."""
    if isinstance(obj, dict):
        if key in obj:
            return obj[key]
        obj = list(obj.values())
    if isinstance(obj, list):
        for v in obj:
            found = _find_key(v, key)
            if found is not None:
                return found
    return None


def with_noise_column(curves: pd.DataFrame) -> pd.DataFrame:
    """``curves`` with a ``noise_std`` column (the generator's noise), read from the stored run
    identity (JSON) when the curves do not carry the column; NaN when unknown."""
    if curves is None or curves.empty or "noise_std" in curves:
        return curves
    out = curves.copy()
    if "identity" in out:
        cache = {}
        for v in out["identity"].dropna().unique():
            try:
                found = _find_key(json.loads(v), "noise_std")
            except (TypeError, ValueError):
                found = None
            cache[v] = math.nan if found is None else float(found)
        out["noise_std"] = out["identity"].map(cache).astype(float)
    else:
        out["noise_std"] = math.nan
    return out


def stated_curves(curves: pd.DataFrame | None, stated=None) -> pd.DataFrame | None:
    """The curves each experiment is judged and drawn on: one tree engine per experiment (the first
    of :data:`~proxboost.experiments.store.naming.ENGINE_PREFERENCE` stored, else the one with most
    curves) and the settings of :data:`STATED` (a column absent from the curves is not filtered on);
    tie rules named (:func:`~proxboost.experiments.store.naming.tie_rule_of`) and a ``noise_std``
    column."""
    if curves is None or curves.empty:
        return curves
    stated = STATED if stated is None else stated
    df = with_noise_column(curves)
    df["tie_rule"] = (
        [tie_rule_of(v) for v in df["tie_rule"]] if "tie_rule" in df else DEFAULT_TIE_RULE
    )
    df["engine"] = df["engine"].astype(str) if "engine" in df else "exact"
    kept = []
    for exp, g in df.groupby("experiment", sort=True):
        counts = g.groupby("engine").size()
        engine = next((e for e in ENGINE_PREFERENCE if e in counts.index), None) or str(
            counts.idxmax()
        )
        g = g[g["engine"] == engine]
        for col, value in stated.get(exp, {}).items():
            if col not in g:
                continue
            v = g[col].astype(float)
            keep = (
                np.isclose(v, value) | v.isna()
                if col in ("step", "noise_std")
                else np.isclose(v, value)
            )
            g = g[keep]
        kept.append(g)
    return pd.concat(kept, ignore_index=True)


class CurveSet:
    """Stored synthetic curves indexed by (experiment, loss, algo, depth, λ, seed, tie rule), on
    the engine and settings of :func:`stated_curves`."""

    def __init__(self, curves: pd.DataFrame | None, stated=None):
        self.curves: dict = {}
        self.engines: dict = {}
        self.leaf_counts: dict = {}
        df = stated_curves(curves, stated)
        if df is None or df.empty:
            return
        for exp, g in df.groupby("experiment", sort=True):
            self.engines[exp] = str(g["engine"].iloc[0])
            step = (
                g["step"].astype(float).fillna(-1.0)
                if "step" in g
                else pd.Series(-1.0, index=g.index)
            )
            keys = ["loss", "algo", "max_depth", step.rename("_step"), "seed", "tie_rule"]
            for (loss, algo, depth, s, seed, tie), run in g.groupby(keys, sort=True):
                run = run.sort_values("iteration")
                nl = (
                    run["n_leaves"].to_numpy(float)
                    if "n_leaves" in run and run["n_leaves"].notna().any()
                    else None
                )
                self.curves[
                    (exp, loss, algo, int(depth), None if s < 0 else float(s), int(seed), tie)
                ] = Curve(
                    run["train_loss"].to_numpy(),
                    run["test_loss"].to_numpy(),
                    run["seconds"].to_numpy(),
                    nl,
                )
                self.leaf_counts.setdefault(exp, set()).add(nl is not None)

    def get(self, exp, loss, algo, depth, step, seed, tie_rule) -> Curve | None:
        """The run's curve; the tie rule is ignored for losses without ties (default rule
        preferred).
        """
        rules = [tie_rule] if loss in TIE_LOSSES else [DEFAULT_TIE_RULE, *sorted(self._rules(exp))]
        for rule in rules:
            for s in (step, None) if step is not None else (None,):
                c = self.curves.get(
                    (exp, loss, algo, int(depth), None if s is None else float(s), int(seed), rule)
                )
                if c is not None:
                    return c
        return None

    def _rules(self, exp):
        return {k[6] for k in self.curves if k[0] == exp}

    def runs(self, exp, losses) -> list[tuple[int, str]]:
        """(seed, tie rule) runs of ``exp``: tie rules only when one of ``losses`` has ties."""
        seeds = sorted({k[5] for k in self.curves if k[0] == exp})
        rules = sorted(self._rules(exp), key=lambda r: (r != DEFAULT_TIE_RULE, r))
        if not any(loss in TIE_LOSSES for loss in losses):
            rules = [DEFAULT_TIE_RULE]
        return [(s, r) for r in rules or [DEFAULT_TIE_RULE] for s in seeds]

    def protocol(self, exp, runs) -> str:
        if exp not in self.engines:
            return f"synthetic {exp}: no stored curves"
        seeds = sorted({s for s, _ in runs})
        rules = sorted({r for _, r in runs}, key=lambda r: (r != DEFAULT_TIE_RULE, r))
        seed_txt = (
            f"seed {seeds[0]}"
            if len(seeds) == 1
            else f"seeds {seeds[0]}–{seeds[-1]} ({len(seeds)})"
        )
        floors = self.leaf_counts.get(exp, set())
        floor_txt = (
            "" if floors == {True} else "; floors from the curves alone (no leaf counts stored)"
        )
        return (
            f"synthetic {exp}, {self.engines[exp]} trees, {seed_txt}, tie rule {'/'.join(rules)}, "
            f"{len(runs)} run{'s' if len(runs) != 1 else ''}{floor_txt}"
        )


class RunView:
    """One run (seed, tie rule) of one experiment: ``get(loss, algo, depth, step)``."""

    def __init__(self, cs: CurveSet, exp, seed, tie_rule):
        self.cs, self.exp, self.seed, self.tie_rule = cs, exp, seed, tie_rule

    def get(self, loss, algo, depth, step=None):
        return self.cs.get(self.exp, loss, algo, depth, step, self.seed, self.tie_rule)


def missing_cell(*names) -> Cell:
    """An inconclusive cell for curves that are not stored, naming them."""
    return Cell(INCONCLUSIVE, "no stored curve for " + ", ".join(names), 0)
