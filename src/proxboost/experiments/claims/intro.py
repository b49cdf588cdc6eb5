"""The introduction sensitivity grid: 7a–7c judged on every stored intro setting."""

from __future__ import annotations

import pandas as pd

from proxboost.experiments.claims.criteria import CONFIRMED, Curve
from proxboost.experiments.claims.curveset import with_noise_column
from proxboost.experiments.claims.synthetic import (
    judge_intro_gradient_plateaus,
    judge_intro_prox_keeps_improving,
    judge_intro_prox_lower_test,
)
from proxboost.experiments.store.naming import (
    DEFAULT_TIE_RULE,
    tie_rule_of,
)


# =====================================================================================
# introduction sensitivity grid
# =====================================================================================
class _Pair:
    """A run view holding one G and one P curve (the intro grid's cells)."""

    def __init__(self, g: Curve, p: Curve):
        self.g, self.p = g, p

    def get(self, loss, algo, depth, step=None):
        return self.g if algo == "gradient" else self.p


def intro_grid(curves: pd.DataFrame) -> pd.DataFrame:
    """Per intro setting (ν, λ, σ, tie rule) and seed: C(f_T/2) and C(f_T) of G and P, and 7a–7c.

    Returns one row per (setting, seed) with ``learning_rate, step, noise_std, tie_rule, seed,
    G_half, G_end, P_half, P_end, P_test_end, G_test_end, 7a, 7b, 7c``.
    """
    if curves is None or curves.empty:
        return pd.DataFrame()
    df = with_noise_column(curves[curves["experiment"] == "intro"])
    if df.empty:
        return pd.DataFrame()
    df["tie_rule"] = (
        [tie_rule_of(v) for v in df["tie_rule"]] if "tie_rule" in df else DEFAULT_TIE_RULE
    )
    out = []
    keys = ["learning_rate", "noise_std", "tie_rule", "seed"]
    for key, g in df.groupby(keys, dropna=False, sort=True):
        gr = g[g["algo"] == "gradient"].sort_values("iteration")
        for step, pr in g[g["algo"] == "prox"].groupby("step", sort=True):
            pr = pr.sort_values("iteration")
            if gr.empty or pr.empty:
                continue
            cg = Curve(
                gr["train_loss"].to_numpy(), gr["test_loss"].to_numpy(), gr["seconds"].to_numpy()
            )
            cp = Curve(
                pr["train_loss"].to_numpy(), pr["test_loss"].to_numpy(), pr["seconds"].to_numpy()
            )
            R = _Pair(cg, cp)
            row = dict(zip(keys, key))
            row.update(
                step=float(step),
                G_half=cg.train[cg.T // 2],
                G_end=cg.train[-1],
                P_half=cp.train[cp.T // 2],
                P_end=cp.train[-1],
                G_test_end=cg.test[-1],
                P_test_end=cp.test[-1],
                **{
                    "7a": judge_intro_gradient_plateaus(R)["all"].verdict,
                    "7b": judge_intro_prox_keeps_improving(R)["all"].verdict,
                    "7c": judge_intro_prox_lower_test(R)["all"].verdict,
                },
            )
            out.append(row)
    return pd.DataFrame(out)


#: The level at which the paper reads G's plateau in its introduction (l. 307: 1.2·10⁻¹).
PAPER_PLATEAU_LEVEL = 0.12


def plateau_context(curves: pd.DataFrame) -> str:
    """What produces G's plateau, from the introduction's sensitivity grid (not a verdict): per
    learning rate and tie rule, the runs of G whose 7a is confirmed (a G curve does not depend on
    λ: each (ν, σ, tie rule, seed) counts once) with their median C_G(T), and the setting whose
    median C_G(T) over seeds lies nearest the paper's level. Empty without a grid of several ν."""
    grid = intro_grid(curves)
    if grid.empty or grid["learning_rate"].nunique() < 2:
        return ""
    g = grid.drop_duplicates(["learning_rate", "noise_std", "tie_rule", "seed"])
    parts = []
    for nu, at_nu in sorted(g.groupby("learning_rate"), key=lambda item: -item[0]):
        rules = []
        for rule, r in at_nu.groupby("tie_rule", sort=True):
            flat = r[r["7a"] == CONFIRMED]
            level = f" at {flat['G_end'].median():.3g}" if len(flat) else ""
            rules.append(f"{rule} {len(flat)}/{len(r)}{level}")
        parts.append(f"ν = {nu:g}: " + ", ".join(rules))
    keys = ["learning_rate", "noise_std", "tie_rule"]
    medians = g.groupby(keys, dropna=False)["G_end"].median()
    nearest = int((medians - PAPER_PLATEAU_LEVEL).abs().to_numpy().argmin())
    (nu, sigma, rule), near = medians.index[nearest], medians.iloc[nearest]
    sigma_text = "" if pd.isna(sigma) else f", σ = {sigma:g}"
    return (
        "Where G plateaus in the introduction's sensitivity grid (runs of G whose 7a is confirmed,"
        " with their median C_G(T)): "
        + "; ".join(parts)
        + f". Nearest the paper's level {PAPER_PLATEAU_LEVEL:g}: ν = {nu:g}{sigma_text}, {rule}"
        f" rule, median C_G(T) {near:.4g}."
    )
