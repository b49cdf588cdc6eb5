"""The paper's 34 statements judged on stored curves and rows: three-state verdicts,
``results/claims.csv``.

    python -m proxboost.claims [--results results] [--out results/claims.csv]

The criteria are those of ``docs/claims.md`` (the file's sha256 is written in every row's
``criteria_sha``); this module is their executable form and changes only with that file.

- Curve criteria (synthetic experiments): the numerical floor (:func:`floor_start`), the levels
  rule (:func:`levels_rule`), "mixed up" (:func:`mixed_up`), linear convergence
  (:func:`linear_fit`). A synthetic statement is judged per run (seed × tie rule) and the runs are
  aggregated (:func:`aggregate_runs`).
- Real-data criteria: paired comparisons (:mod:`proxboost.analysis`), the "always" rule with
  Holm-adjusted p-values, equivalence margins, counting rules with missing cells; one protocol
  unit per verdict.

:func:`judge` returns the rows of ``claims.csv``: ``id, scope, verdict, numbers, protocol,
n_support, criteria_sha``; nothing is fitted here.
"""

from __future__ import annotations

import argparse
import hashlib
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from ._io import atomic_path
from .analysis import ALPHA, Comparison, ProtocolUnit, compare, holm, paired_values, protocol_units
from .naming import (
    CONVERGENCE_DEPTHS,
    DEFAULT_TIE_RULE,
    ENGINE_PREFERENCE,
    LS_AND_ERROR_ONLY,
    PAPER_CLASSIFICATION_LOSSES,
    PAPER_METHODS,
    PAPER_REGRESSION_LOSSES,
    STEP_GRID,
    TIE_LOSSES,
    short,
    tie_rule_of,
)
from .results import load, load_curves, stops_on_damage

__all__ = [
    "CLAIMS_COLUMNS",
    "CONFIRMED",
    "CONTRADICTED",
    "INCONCLUSIVE",
    "STATEMENTS",
    "Curve",
    "CurveSet",
    "aggregate_runs",
    "combine_all",
    "count_rule",
    "criteria_sha",
    "floor_start",
    "intro_grid",
    "judge",
    "levels_rule",
    "linear_fit",
    "mixed_up",
    "scope",
    "stated_curves",
    "with_noise_column",
    "write_claims",
]

CONFIRMED, CONTRADICTED, INCONCLUSIVE = "confirmed", "contradicted", "inconclusive"
CLAIMS_COLUMNS = ("id", "scope", "verdict", "numbers", "protocol", "n_support", "criteria_sha")
SCOPE_KEYS = ("loss", "dataset", "depth", "lambda", "methods", "metric", "tie_rule", "seed")
CRITERIA_FILE = Path("docs") / "claims.md"

#: id -> (statement, paper line), in the order of docs/claims.md
STATEMENTS = {
    "1a": ("ls: proximal and gradient boosting are exactly equivalent", "782"),
    "1b": ("ls, exponential: P and G behave exactly the same (curves mixed up)", "822"),
    "1c": ("ls, exponential: linear convergence, steeper with deeper trees", "824"),
    "1d": ("ls, exponential: the residual does not help convergence", "826"),
    "1e": ("pinball behaves like lad, logistic like exponential", "784–785"),
    "2a": ("lad, hinge: P converges faster than G", "828"),
    "2b": ("hinge: G does not seem to converge", "828"),
    "2c": ("lad, hinge: P's convergence almost linear", "829"),
    "2d": ("lad, hinge: the residual helps G converge (RG faster than G)", "831"),
    "2e": ("lad, hinge: RP behaves like P (curves mixed up)", "832"),
    "5": ("same behaviour vs iterations and vs seconds; a proximal step costs no more", "846–847"),
    "3a": ("bigger λ, faster decrease of the training loss", "868"),
    "3b": ("bigger λ, faster decrease of the test loss", "868"),
    "3c": ("large enough λ: P faster than G on the training loss", "869"),
    "3d": ("test loss: P and RP below G and RG for λ in 0.1–10", "872"),
    "3e": ("large λ: P similar to RP and faster than RG (training loss)", "870"),
    "4a": ("acceleration speeds up the decrease of training and test losses", "880"),
    "4b": ("both accelerated variants diverge, on training and test", "881"),
    "4c": ("non-accelerated methods reach a lower test loss", "882"),
    "4d": ("AP definitely better than AG", "883"),
    "4e": ("training divergence occurs after the minimal test loss", "889"),
    "6a": ("ls: P = G, comparable to XGBoost, better than random forests", "936–937"),
    "6b": ("ls: residual boosting most accurate on 3 of the 6 datasets", "938"),
    "6c": ("lad, pinball: P always better than G", "941"),
    "6d": ("lad, pinball: P or RP most accurate in most situations", "942"),
    "6e": ("lad, pinball: AP better than AG, except on Engel", "946"),
    "6j": ("regression: accelerated variants not more accurate than plain ones", "945"),
    "6f": ("classification: P, RP, RG and XGBoost share the podium", "984"),
    "6g": ("hinge: P or RP always better than G and RG (loss and error)", "985"),
    "6h": ("classification: AP always better than G and AG (loss and accuracy)", "986"),
    "6i": ("hinge instead of exponential rarely a big advantage in error", "990"),
    "7a": ("introduction: G's training loss attains a plateau", "307"),
    "7b": ("introduction: P constantly improves the objective", "308"),
    "7c": ("introduction: P achieves a lower test loss", "310"),
}

# thresholds of docs/claims.md (the table there is the reference; these are its numbers)
FLOOR_LEVEL = 1e-6  # floor: C(t) <= 1e-6 C(f_0) ...
FLOOR_STEP = 1e-10  # ... and |C(t+j) - C(t)| <= 1e-10 C(f_0) for j = 1..50
FLOOR_WINDOW = 50
FASTER, SIMILAR_HI = 0.8, 1.25
MIXED_OK, MIXED_BAD = 0.1, 0.3
FIT_START, FIT_MIN_POINTS = 50, 50


# =====================================================================================
# verdict helpers
# =====================================================================================
@dataclass(frozen=True)
class Cell:
    """One judged cell: its verdict, the numbers that decided it, and its support."""

    verdict: str
    numbers: str
    n_support: int = 1


def scope(**keys) -> str:
    """``all`` or ``key=value;…`` in the order of :data:`SCOPE_KEYS` (None values dropped)."""
    unknown = set(keys) - set(SCOPE_KEYS)
    if unknown:
        raise ValueError(f"scope keys {sorted(unknown)} are not among {SCOPE_KEYS}")
    parts = [f"{k}={_fmt_key(keys[k])}" for k in SCOPE_KEYS if keys.get(k) is not None]
    return ";".join(parts) or "all"


def _fmt_key(v):
    return f"{v:g}" if isinstance(v, float) else str(v)


def combine_all(verdicts) -> str:
    """Cells of one statement in one run: all confirmed → confirmed; any contradicted →
    contradicted.
    """
    verdicts = list(verdicts)
    if verdicts and all(v == CONFIRMED for v in verdicts):
        return CONFIRMED
    if any(v == CONTRADICTED for v in verdicts):
        return CONTRADICTED
    return INCONCLUSIVE


def aggregate_runs(verdicts) -> tuple[str, str]:
    """Runs of one statement: confirmed in ≥ 80 % and contradicted in none → confirmed (and the
    mirror rule); otherwise inconclusive. Returns (verdict, counts text)."""
    verdicts = list(verdicts)
    n = len(verdicts)
    c, x = verdicts.count(CONFIRMED), verdicts.count(CONTRADICTED)
    text = f"runs: {c} confirmed, {x} contradicted, {n - c - x} inconclusive of {n}"
    if n and c >= 0.8 * n and x == 0:
        return CONFIRMED, text
    if n and x >= 0.8 * n and c == 0:
        return CONTRADICTED, text
    return INCONCLUSIVE, text


def count_rule(n_yes, n_missing, need_yes, max_yes_contradicted) -> str:
    """Counting statement with missing cells: confirmed when ``n_yes ≥ need_yes``; contradicted
    when even every missing cell going the statement's way leaves ``n_yes ≤ max_yes_contradicted``.
    """
    if n_yes >= need_yes:
        return CONFIRMED
    if n_yes + n_missing <= max_yes_contradicted:
        return CONTRADICTED
    return INCONCLUSIVE


# =====================================================================================
# curve criteria
# =====================================================================================
def floor_start(loss, n_leaves=None) -> int | None:
    """First iteration of the curve's numerical floor, or None (docs/claims.md, numerical floor).

    ``loss[t]`` for t = 0..T; ``n_leaves[t]`` the leaf count of the tree added at t (t ≥ 1;
    entry 0 ignored) when stored.
    """
    y = np.asarray(loss, dtype=float)
    c0 = y[0]
    starts = []
    if n_leaves is not None:
        nl = np.asarray(n_leaves, dtype=float)[1:]
        if nl.size and np.all(np.isfinite(nl)) and nl[-1] == 1:
            multi = np.flatnonzero(nl != 1)
            starts.append(int(multi[-1]) + 2 if multi.size else 1)
    tol, level = FLOOR_STEP * c0, FLOOR_LEVEL * c0
    for t in range(len(y) - FLOOR_WINDOW):
        if y[t] <= level and np.all(np.abs(y[t + 1 : t + 1 + FLOOR_WINDOW] - y[t]) <= tol):
            starts.append(t)
            break
    return min(starts) if starts else None


@dataclass
class Curve:
    """One stored run: losses per iteration t = 0..T, cumulative seconds, leaf counts if stored."""

    train: np.ndarray
    test: np.ndarray
    seconds: np.ndarray
    n_leaves: np.ndarray | None = None

    def __post_init__(self):
        self.train = np.asarray(self.train, float)
        self.test = np.asarray(self.test, float)
        self.seconds = np.asarray(self.seconds, float)
        self.floor = floor_start(self.train, self.n_leaves)

    @property
    def T(self) -> int:
        return len(self.train) - 1

    @property
    def c0(self) -> float:
        return float(self.train[0])

    @property
    def floor_level(self) -> float:
        return 0.0 if self.floor is None else float(self.train[self.floor])

    @property
    def end(self) -> int:
        """Last iteration above the floor (T when there is none)."""
        return self.T if self.floor is None else self.floor


def _first_reach(values, xs, level) -> float:
    hit = np.flatnonzero(values <= level)
    return float(xs[hit[0]]) if hit.size else math.inf


LEVEL_MIN = 1e-12  # levels stop at 1e-12 C(f_0) (a loss reaching exactly 0 has its floor at 0)


def _levels(c0, floors, reach_min) -> list[float]:
    """Levels 10^(−k/2)·c0, k ≥ 1, down to 10 × the highest floor, the lowest value reached and
    1e-12·c0.
    """
    bottom = max(10.0 * max(floors), LEVEL_MIN * c0, reach_min)
    out, k = [], 1
    while True:
        L = 10.0 ** (-k / 2.0) * c0
        if L < bottom:
            return out
        out.append(L)
        k += 1


def levels_rule(a: Curve, b: Curve, x="iteration") -> tuple[str, str]:
    """Compare how fast two training curves reach the levels: returns (outcome, numbers).

    outcome: ``a faster`` | ``b faster`` | ``similar`` | ``mixed`` | ``unmeasurable`` (fewer
    than two compared levels above both floors). ``x`` = ``iteration`` or ``seconds``.
    """
    c0 = a.c0
    xa = np.arange(a.T + 1, dtype=float) if x == "iteration" else a.seconds
    xb = np.arange(b.T + 1, dtype=float) if x == "iteration" else b.seconds
    levels = _levels(c0, (a.floor_level, b.floor_level), min(a.train.min(), b.train.min()))
    ta = np.array([_first_reach(a.train, xa, L) for L in levels])
    tb = np.array([_first_reach(b.train, xb, L) for L in levels])
    keep = np.isfinite(ta) | np.isfinite(tb)
    ta, tb = ta[keep], tb[keep]
    n = int(keep.sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(np.isfinite(tb), ta / tb, np.where(np.isfinite(ta), 0.0, np.nan))
    unit = "" if x == "iteration" else " s"
    shown = ", ".join(f"{_g(u)}/{_g(v)}" for u, v in zip(ta[:6], tb[:6])) + (" …" if n > 6 else "")
    numbers = f"{n} levels down to {_g(10 ** (-n / 2))}·C0, t{unit} {shown}"
    if n < 2:
        return "unmeasurable", numbers + " (fewer than two levels above the floors)"
    if np.isfinite(ta).sum() >= 2 and np.all(ratio <= FASTER):
        return "a faster", numbers
    if np.isfinite(tb).sum() >= 2 and np.all(
        np.where(np.isfinite(ta), tb / np.where(ta > 0, ta, np.nan), 0.0) <= FASTER
    ):
        return "b faster", numbers
    if np.all(np.isfinite(ta) & np.isfinite(tb)) and np.all(
        (ratio >= FASTER) & (ratio <= SIMILAR_HI)
    ):
        return "similar", numbers
    return "mixed", numbers


def faster_verdict(outcome) -> str:
    """Statement "A converges faster than B" from a levels-rule outcome."""
    return {"a faster": CONFIRMED, "b faster": CONTRADICTED, "similar": CONTRADICTED}.get(
        outcome, INCONCLUSIVE
    )


def mixed_up(a: Curve, b: Curve) -> tuple[str, float]:
    """(verdict, max decade gap) over 1 ≤ t < the first floor of the two curves."""
    end = min(a.end, b.end)
    ya, yb = a.train[1:end], b.train[1:end]
    ok = (ya > 0) & (yb > 0)
    if not ok.any():
        return INCONCLUSIVE, math.nan
    gap = float(np.max(np.abs(np.log10(ya[ok]) - np.log10(yb[ok]))))
    if gap <= MIXED_OK:
        return CONFIRMED, gap
    if gap > MIXED_BAD:
        return CONTRADICTED, gap
    return INCONCLUSIVE, gap


def linear_fit(c: Curve) -> tuple[float, float, int] | None:
    """(slope in decades per iteration, R², points) of log₁₀C(t) on t ∈ [50, min(floor, T)]; None if
    < 50 points.
    """
    t = np.arange(FIT_START, c.end + 1)
    y = c.train[FIT_START : c.end + 1]
    ok = y > 0
    t, y = t[ok], np.log10(y[ok])
    if t.size < FIT_MIN_POINTS:
        return None
    fit = stats.linregress(t, y)
    return float(fit.slope), float(fit.rvalue**2), int(t.size)


def max_relative_gap(a: Curve, b: Curve) -> float:
    end = min(a.end, b.end)
    ya, yb = a.train[1:end], b.train[1:end]
    ok = yb > 0
    return float(np.max(np.abs(ya[ok] - yb[ok]) / yb[ok])) if ok.any() else math.nan


def rise(values, c0) -> float:
    """C(T) / max(min_t C(t), 1e-6·C(f_0)): how far a curve ends above its minimum."""
    v = np.asarray(values, float)
    return float(v[-1] / max(v.min(), FLOOR_LEVEL * c0))


def _spearman(x, y) -> float:
    if np.all(y == y[0]):
        return 0.0
    return float(stats.spearmanr(x, y).statistic)


def _g(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if math.isinf(v):
        return "∞"
    if v == int(v) and abs(v) < 1e6:
        return str(int(v))
    return f"{v:.3g}"


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
        import json

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
    """The curves each experiment is judged and drawn on: one tree engine per experiment (the
    first of :data:`~proxboost.naming.ENGINE_PREFERENCE` stored, else the one with most curves) and
    the settings of :data:`STATED` (a column absent from the curves is not filtered on); tie
    rules named (:func:`~proxboost.naming.tie_rule_of`) and a ``noise_std`` column."""
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


class _Run:
    """One run (seed, tie rule) of one experiment: ``get(loss, algo, depth, step)``."""

    def __init__(self, cs: CurveSet, exp, seed, tie_rule):
        self.cs, self.exp, self.seed, self.tie_rule = cs, exp, seed, tie_rule

    def get(self, loss, algo, depth, step=None):
        return self.cs.get(self.exp, loss, algo, depth, step, self.seed, self.tie_rule)


def _missing(*names) -> Cell:
    return Cell(INCONCLUSIVE, "no stored curve for " + ", ".join(names), 0)


# -- convergence -----------------------------------------------------------------------------------
def _s1a(R):
    out = {}
    for d in CONVERGENCE_DEPTHS:
        g, p = R.get("ls", "gradient", d), R.get("ls", "prox", d, 1.0)
        if g is None or p is None:
            out[scope(loss="ls", depth=d)] = _missing("ls G/P")
            continue
        gap = max_relative_gap(p, g)
        v = CONFIRMED if gap <= 1e-6 else CONTRADICTED if gap > 1e-3 else INCONCLUSIVE
        if not np.isfinite(gap):
            v = INCONCLUSIVE
        out[scope(loss="ls", depth=d)] = Cell(
            v, f"max |C_P − C_G|/C_G before the floor (t < {min(g.end, p.end)}) {gap:.2g}"
        )
    return out


def _mixed_up_cells(R, losses, a, b, label):
    """ "Curves mixed up" per (loss, depth) for runs a and b, each an (algo, step) pair."""
    out = {}
    for loss in losses:
        for d in CONVERGENCE_DEPTHS:
            ca, cb = R.get(loss, a[0], d, a[1]), R.get(loss, b[0], d, b[1])
            if ca is None or cb is None:
                out[scope(loss=loss, depth=d)] = _missing(f"{loss} {label}")
                continue
            v, gap = mixed_up(ca, cb)
            out[scope(loss=loss, depth=d)] = Cell(
                v, f"max gap {gap:.3g} decade before t = {min(ca.end, cb.end)}"
            )
    return out


def _s1b(R, losses=("ls", "exponential")):
    return _mixed_up_cells(R, losses, ("prox", 1.0), ("gradient", None), "G/P")


def _s1c(R):
    out = {}
    for loss in ("ls", "exponential"):
        parts, bad, missing, notes = [], False, False, []
        for algo, step in (("gradient", None), ("prox", 1.0)):
            fits = {d: R.get(loss, algo, d, step) for d in CONVERGENCE_DEPTHS}
            fits = {d: linear_fit(c) if c is not None else None for d, c in fits.items()}
            if any(f is None for f in fits.values()):
                missing = True
                notes.append(
                    f"{short(algo)}: no fit window of {FIT_MIN_POINTS} points above the floor or no"
                    " curve"
                )
                continue
            (s3, r3, _), (s15, r15, _) = fits[3], fits[15]
            ratio = s15 / s3 if s3 < 0 else math.nan
            parts.append(min(r3, r15) >= 0.98 and ratio >= 1.5)
            bad |= min(r3, r15) < 0.9 or not (ratio > 1.0)
            notes.append(
                f"{short(algo)}: R² {r3:.3f} (d3) / {r15:.3f} (d15), slope d15/d3 {ratio:.2f}"
            )
        v = (
            CONTRADICTED
            if bad
            else CONFIRMED
            if (parts and all(parts) and not missing)
            else INCONCLUSIVE
        )
        out[scope(loss=loss)] = Cell(v, "; ".join(notes))
    return out


def _residual_not_helping(R, losses=("ls", "exponential")):
    out = {}
    for loss in losses:
        for d in CONVERGENCE_DEPTHS:
            vs, notes = [], []
            for res, plain, step in (
                ("residual_gradient", "gradient", None),
                ("residual_prox", "prox", 1.0),
            ):
                a, b = R.get(loss, res, d, step), R.get(loss, plain, d, step)
                if a is None or b is None:
                    vs.append(INCONCLUSIVE)
                    notes.append(f"{short(res)}/{short(plain)} missing")
                    continue
                outcome, num = levels_rule(a, b)
                vs.append(
                    {"b faster": CONFIRMED, "similar": CONFIRMED, "a faster": CONTRADICTED}.get(
                        outcome, INCONCLUSIVE
                    )
                )
                notes.append(f"{short(res)} vs {short(plain)}: {outcome} ({num})")
            out[scope(loss=loss, depth=d)] = Cell(combine_all(vs), "; ".join(notes))
    return out


def _faster_cells(R, a_algo, b_algo, losses=("lad", "hinge")):
    out = {}
    for loss in losses:
        for d in CONVERGENCE_DEPTHS:
            a = R.get(loss, a_algo, d, 1.0 if "prox" in a_algo else None)
            b = R.get(loss, b_algo, d, 1.0 if "prox" in b_algo else None)
            if a is None or b is None:
                out[scope(loss=loss, depth=d)] = _missing(f"{loss} {short(a_algo)}/{short(b_algo)}")
                continue
            outcome, num = levels_rule(a, b)
            out[scope(loss=loss, depth=d)] = Cell(
                faster_verdict(outcome), f"{short(a_algo)} vs {short(b_algo)}: {outcome} ({num})"
            )
    return out


def _s2a(R, losses=("lad", "hinge")):
    return _faster_cells(R, "prox", "gradient", losses)


def _s2d(R, losses=("lad", "hinge")):
    return _faster_cells(R, "residual_gradient", "gradient", losses)


def _s2e(R, losses=("lad", "hinge")):
    return _mixed_up_cells(R, losses, ("residual_prox", 1.0), ("prox", 1.0), "RP/P")


def _s2b(R):
    out = {}
    for d in CONVERGENCE_DEPTHS:
        g, p = R.get("hinge", "gradient", d), R.get("hinge", "prox", d, 1.0)
        if g is None or p is None:
            out[scope(loss="hinge", depth=d)] = _missing("hinge G/P")
            continue
        T = g.T
        gT, gh, pT = g.train[-1], g.train[T // 2], p.train[-1]
        num = f"C_G({T}) {gT:.3g}, C_G({T // 2}) {gh:.3g}, C_P({T}) {pT:.3g}"
        if g.floor is not None:
            v, num = CONTRADICTED, num + f"; G reaches its numerical floor at t = {g.floor}"
        elif gT >= 0.8 * gh and gT >= 10 * pT:
            v = CONFIRMED
        elif gT <= 2 * pT:
            v = CONTRADICTED
        else:
            v = INCONCLUSIVE
        out[scope(loss="hinge", depth=d)] = Cell(v, num)
    return out


def _s2c(R):
    out = {}
    for loss in ("lad", "hinge"):
        for d in CONVERGENCE_DEPTHS:
            p = R.get(loss, "prox", d, 1.0)
            fit = linear_fit(p) if p is not None else None
            if fit is None:
                out[scope(loss=loss, depth=d)] = Cell(
                    INCONCLUSIVE,
                    "no curve or fewer than 50 points above the floor",
                    0 if p is None else 1,
                )
                continue
            slope, r2, n = fit
            v = CONFIRMED if r2 >= 0.95 else CONTRADICTED if r2 < 0.8 else INCONCLUSIVE
            out[scope(loss=loss, depth=d)] = Cell(
                v, f"R² {r2:.3f} over {n} iterations, slope {slope:.3g} decade/it"
            )
    return out


def _s1e(R):
    out = {}
    pairs = (
        ("pinball", "lad", (("2a", _s2a), ("2d", _s2d), ("2e", _s2e))),
        ("logistic", "exponential", (("1b", _s1b), ("1d", _residual_not_helping))),
    )
    for new, ref, checks in pairs:
        if all(R.get(new, "gradient", d) is None for d in CONVERGENCE_DEPTHS):
            out[scope(loss=new)] = Cell(INCONCLUSIVE, f"no {new} convergence curves stored", 0)
            continue
        for sid, fn in checks:
            a, b = fn(R, (new,)), fn(R, (ref,))
            for d in CONVERGENCE_DEPTHS:
                va, vb = a[scope(loss=new, depth=d)].verdict, b[scope(loss=ref, depth=d)].verdict
                v = (
                    CONFIRMED
                    if va == vb
                    else CONTRADICTED
                    if {va, vb} == {CONFIRMED, CONTRADICTED}
                    else INCONCLUSIVE
                )
                out[scope(loss=new, depth=d, methods=sid)] = Cell(
                    v, f"{sid}: {new} {va}, {ref} {vb}"
                )
    return out


def _s5(R):
    out = {}
    for loss in ("ls", "exponential", "lad", "hinge"):
        for d in CONVERGENCE_DEPTHS:
            p, g = R.get(loss, "prox", d, 1.0), R.get(loss, "gradient", d)
            if p is None or g is None:
                out[scope(loss=loss, depth=d)] = _missing(f"{loss} P/G")
                continue
            end = min(p.end, g.end)
            if end < 2:
                out[scope(loss=loss, depth=d)] = Cell(INCONCLUSIVE, "no iteration above the floors")
                continue
            ratio = float(
                np.median(np.diff(p.seconds[: end + 1])) / np.median(np.diff(g.seconds[: end + 1]))
            )
            notes = [f"median s/iteration P/G {ratio:.2f} over t ≤ {end}"]
            same, flips = True, False
            if loss in TIE_LOSSES:
                for a_algo, b_algo in (("prox", "gradient"), ("residual_gradient", "gradient")):
                    a = R.get(loss, a_algo, d, 1.0 if a_algo == "prox" else None)
                    b = R.get(loss, b_algo, d)
                    if a is None or b is None:
                        same = False
                        notes.append(f"{short(a_algo)} vs {short(b_algo)} missing")
                        continue
                    vi = faster_verdict(levels_rule(a, b)[0])
                    vs = faster_verdict(levels_rule(a, b, x="seconds")[0])
                    same &= vi == vs
                    flips |= {vi, vs} == {CONFIRMED, CONTRADICTED}
                    notes.append(
                        f"{short(a_algo)} faster than {short(b_algo)}: {vi} (iterations) / {vs}"
                        " (seconds)"
                    )
            if ratio <= 1.1 and same:
                v = CONFIRMED
            elif ratio > 1.25 or flips:
                v = CONTRADICTED
            else:
                v = INCONCLUSIVE
            out[scope(loss=loss, depth=d)] = Cell(v, "; ".join(notes))
    return out


# -- proximal step --------------------------------------------------------------------------------
_PS = ("lad", "hinge")


def _step_curves(R, loss, algo):
    return {s: R.get(loss, algo, 3, s) for s in STEP_GRID}


def _over_steps(R, out):
    """(scope, curves over STEP_GRID) of each proximal method on lad and hinge; a method missing
    a λ gets its missing cell in ``out`` instead."""
    for loss in _PS:
        for algo in ("prox", "residual_prox", "accelerated_prox"):
            cur = _step_curves(R, loss, algo)
            sc = scope(loss=loss, methods=short(algo))
            if any(c is None for c in cur.values()):
                out[sc] = _missing(f"{loss} {short(algo)} at some λ")
            else:
                yield sc, list(cur.values())


def _s3a(R):
    out = {}
    for sc, cs in _over_steps(R, out):
        levels = _levels(cs[0].c0, [c.floor_level for c in cs], min(c.train.min() for c in cs))
        lam = np.log10(STEP_GRID)
        rhos = []
        for L in levels:
            t = np.array([_first_reach(c.train, np.arange(c.T + 1), L) for c in cs])
            if not np.isfinite(t).any():
                continue
            rhos.append(_spearman(lam, np.where(np.isfinite(t), t, 1e12)))
        if len(rhos) < 2:
            out[sc] = Cell(INCONCLUSIVE, f"{len(rhos)} level(s) above the floors")
            continue
        rhos = np.array(rhos)
        v = (
            CONFIRMED
            if np.all(rhos <= -0.9)
            else CONTRADICTED
            if np.sum(rhos >= 0) > len(rhos) / 2
            else INCONCLUSIVE
        )
        out[sc] = Cell(
            v,
            f"Spearman ρ(λ, t(L)) over {len(rhos)} levels: " + ", ".join(f"{r:.2f}" for r in rhos),
        )
    return out


def _s3b(R):
    out = {}
    for sc, cs in _over_steps(R, out):
        ts = np.array([float(np.argmax(c.test <= 1.01 * c.test.min())) for c in cs])
        rho = _spearman(np.log10(STEP_GRID), ts)
        v = CONFIRMED if rho <= -0.9 else CONTRADICTED if rho >= 0 else INCONCLUSIVE
        out[sc] = Cell(
            v,
            f"t* (test within 1 % of its minimum) per λ {', '.join(_g(t) for t in ts)}; ρ"
            f" {rho:.2f}",
        )
    return out


def _s3c(R):
    out = {}
    for loss in _PS:
        g = R.get(loss, "gradient", 3)
        cur = _step_curves(R, loss, "prox")
        if g is None or any(c is None for c in cur.values()):
            out[scope(loss=loss)] = _missing(f"{loss} G or P at some λ")
            continue
        outcomes = {s: levels_rule(c, g)[0] for s, c in cur.items()}
        lam0 = None
        for s in sorted(STEP_GRID, reverse=True):
            if outcomes[s] != "a faster":
                break
            lam0 = s
        if lam0 is not None and lam0 <= 10:
            v = CONFIRMED
        elif outcomes[100.0] in ("similar", "b faster"):
            v = CONTRADICTED
        else:
            v = INCONCLUSIVE
        out[scope(loss=loss)] = Cell(
            v,
            "P vs G per λ: "
            + ", ".join(f"{s:g} {o}" for s, o in outcomes.items())
            + f"; λ₀ {'—' if lam0 is None else f'{lam0:g}'}",
        )
    return out


def _s3d(R):
    out = {}
    for loss in _PS:
        g, rg = R.get(loss, "gradient", 3), R.get(loss, "residual_gradient", 3)
        lows = {
            (a, s): R.get(loss, a, 3, s)
            for a in ("prox", "residual_prox")
            for s in (0.1, 1.0, 10.0)
        }
        if g is None or rg is None or any(c is None for c in lows.values()):
            out[scope(loss=loss)] = _missing(f"{loss} G/RG/P/RP")
            continue
        refs = (g.test.min(), rg.test.min())
        ok = sum(int(c.test.min() < r) for c in lows.values() for r in refs)
        v = CONFIRMED if ok == 12 else CONTRADICTED if ok <= 6 else INCONCLUSIVE
        out[scope(loss=loss)] = Cell(
            v,
            f"{ok}/12 comparisons hold; min test G {refs[0]:.4g}, RG {refs[1]:.4g}, "
            + ", ".join(f"{short(a)} λ={s:g} {c.test.min():.4g}" for (a, s), c in lows.items()),
        )
    return out


def _s3e(R):
    out = {}
    for loss in _PS:
        rg = R.get(loss, "residual_gradient", 3)
        for s in (10.0, 100.0):
            p, rp = R.get(loss, "prox", 3, s), R.get(loss, "residual_prox", 3, s)
            if p is None or rp is None or rg is None:
                out[scope(loss=loss, **{"lambda": s})] = _missing(f"{loss} P/RP/RG")
                continue
            o1, o2 = levels_rule(p, rp)[0], levels_rule(p, rg)[0]
            if o1 == "similar" and o2 == "a faster":
                v = CONFIRMED
            elif o1 in ("a faster", "b faster") or o2 in ("similar", "b faster"):
                v = CONTRADICTED
            else:
                v = INCONCLUSIVE
            out[scope(loss=loss, **{"lambda": s})] = Cell(v, f"P vs RP: {o1}; P vs RG: {o2}")
    return out


def _acc_pairs(R, loss):
    """(λ, plain name, accelerated name, plain curve, accelerated curve) for G/AG and P/AP at each
    λ.
    """
    yield (
        None,
        "gradient",
        "accelerated_gradient",
        R.get(loss, "gradient", 3),
        R.get(loss, "accelerated_gradient", 3),
    )
    for s in STEP_GRID:
        yield (
            s,
            "prox",
            "accelerated_prox",
            R.get(loss, "prox", 3, s),
            R.get(loss, "accelerated_prox", 3, s),
        )


def _s4a(R):
    out = {}
    for loss in _PS:
        for s, plain, acc, b, a in _acc_pairs(R, loss):
            sc = scope(loss=loss, **{"lambda": s}, methods=f"{short(acc)} vs {short(plain)}")
            if a is None or b is None:
                out[sc] = _missing(f"{loss} {short(acc)}/{short(plain)}")
                continue
            levels = _levels(
                b.c0, (a.floor_level, b.floor_level), min(a.train.min(), b.train.min())
            )[:2]
            it_a, it_b = np.arange(a.T + 1), np.arange(b.T + 1)
            ta = [_first_reach(a.train, it_a, L) for L in levels] + [
                float(np.argmax(a.test <= 1.05 * a.test.min()))
            ]
            tb = [_first_reach(b.train, it_b, L) for L in levels] + [
                float(np.argmax(b.test <= 1.05 * b.test.min()))
            ]
            if len(levels) < 2:
                v = INCONCLUSIVE
            elif all(x < y for x, y in zip(ta, tb)):
                v = CONFIRMED
            elif any(y < x for x, y in zip(ta, tb)):
                v = CONTRADICTED
            else:
                v = INCONCLUSIVE
            out[sc] = Cell(
                v,
                "t to the first two training levels and to 5 % of the min test loss: "
                f"{short(acc)} {', '.join(map(_g, ta))} vs {short(plain)} {', '.join(map(_g, tb))}",
            )
    return out


def _diverging(R, loss):
    for s, _, acc, _, a in _acc_pairs(R, loss):
        yield s, acc, a


def _s4b(R):
    out = {}
    for loss in _PS:
        for s, acc, a in _diverging(R, loss):
            sc = scope(loss=loss, **{"lambda": s}, methods=short(acc))
            if a is None:
                out[sc] = _missing(f"{loss} {short(acc)}")
                continue
            rt, re = rise(a.train, a.c0), rise(a.test, a.c0)
            v = (
                CONFIRMED
                if min(rt, re) >= 2
                else CONTRADICTED
                if max(rt, re) <= 1.1
                else INCONCLUSIVE
            )
            out[sc] = Cell(v, f"C(T)/min C: training {rt:.3g}, test {re:.3g}")
    return out


def _s4c(R):
    out = {}
    for loss in _PS:
        for s, plain, acc, b, a in _acc_pairs(R, loss):
            sc = scope(loss=loss, **{"lambda": s}, methods=f"{short(plain)} vs {short(acc)}")
            if a is None or b is None:
                out[sc] = _missing(f"{loss} {short(acc)}/{short(plain)}")
                continue
            mb, ma = b.test.min(), a.test.min()
            v = CONFIRMED if mb < 0.99 * ma else CONTRADICTED if ma < 0.99 * mb else INCONCLUSIVE
            out[sc] = Cell(v, f"min test loss {short(plain)} {mb:.4g}, {short(acc)} {ma:.4g}")
    return out


def _s4d(R):
    out = {}
    for loss in _PS:
        ag = R.get(loss, "accelerated_gradient", 3)
        for s in STEP_GRID:
            if s < 0.1:
                continue
            ap = R.get(loss, "accelerated_prox", 3, s)
            sc = scope(loss=loss, **{"lambda": s})
            if ap is None or ag is None:
                out[sc] = _missing(f"{loss} AP/AG")
                continue
            mp, mg = ap.test.min(), ag.test.min()
            if mp <= 0.95 * mg and ap.train[-1] < ag.train[-1]:
                v = CONFIRMED
            elif mp >= mg:
                v = CONTRADICTED
            else:
                v = INCONCLUSIVE
            out[sc] = Cell(
                v,
                f"min test AP {mp:.4g} vs AG {mg:.4g} (ratio {mp / mg:.3f}); training at T "
                f"AP {ap.train[-1]:.3g} vs AG {ag.train[-1]:.3g}",
            )
    return out


def _s4e(R):
    out = {}
    for loss in _PS:
        div, bad, notes, seen = 0, 0, [], 0
        for s, acc, a in _diverging(R, loss):
            if a is None:
                continue
            seen += 1
            if rise(a.train, a.c0) < 2:
                continue
            div += 1
            tr, te = int(np.argmin(a.train)), int(np.argmin(a.test))
            bad += tr < te
            notes.append(
                f"{short(acc)}{'' if s is None else f' λ={s:g}'} argmin train {tr} / test {te}"
            )
        if not seen:
            out[scope(loss=loss)] = _missing(f"{loss} accelerated curves")
            continue
        v = INCONCLUSIVE if div == 0 else CONTRADICTED if bad else CONFIRMED
        out[scope(loss=loss)] = Cell(
            v, f"{div} diverging curve(s) of {seen}" + ("; " + "; ".join(notes) if notes else "")
        )
    return out


# -- introduction ----------------------------------------------------------------------------------
def _decrease(c, which="train"):
    v = c.train if which == "train" else c.test
    return 1.0 - v[-1] / v[c.T // 2]


def _s7a(R):
    g = R.get("lad", "gradient", 2)
    if g is None:
        return {"all": _missing("intro G")}
    dec = _decrease(g)
    v = CONFIRMED if dec < 0.05 else CONTRADICTED if dec >= 0.10 else INCONCLUSIVE
    return {
        "all": Cell(
            v,
            f"C_G({g.T // 2}) {g.train[g.T // 2]:.4g} → C_G({g.T}) {g.train[-1]:.4g}: {dec:.1%}"
            " decrease",
        )
    }


def _s7b(R):
    p = R.get("lad", "prox", 2, 1.0)
    if p is None:
        return {"all": _missing("intro P")}
    dec = _decrease(p)
    v = CONFIRMED if dec >= 0.10 else CONTRADICTED if dec < 0.05 else INCONCLUSIVE
    return {
        "all": Cell(
            v,
            f"C_P({p.T // 2}) {p.train[p.T // 2]:.4g} → C_P({p.T}) {p.train[-1]:.4g}: {dec:.1%}"
            " decrease",
        )
    }


def _s7c(R):
    g, p = R.get("lad", "gradient", 2), R.get("lad", "prox", 2, 1.0)
    if g is None or p is None:
        return {"all": _missing("intro G/P")}
    v = CONFIRMED if p.test[-1] < g.test[-1] else CONTRADICTED
    return {"all": Cell(v, f"test loss at T: P {p.test[-1]:.4g}, G {g.test[-1]:.4g}")}


#: id -> (experiment, losses involved (for the tie rules), cell function)
SYNTHETIC = {
    "1a": ("convergence", ("ls",), _s1a),
    "1b": ("convergence", ("ls", "exponential"), _s1b),
    "1c": ("convergence", ("ls", "exponential"), _s1c),
    "1d": ("convergence", ("ls", "exponential"), _residual_not_helping),
    "1e": ("convergence", ("pinball", "lad", "logistic", "exponential"), _s1e),
    "2a": ("convergence", ("lad", "hinge"), _s2a),
    "2b": ("convergence", ("hinge",), _s2b),
    "2c": ("convergence", ("lad", "hinge"), _s2c),
    "2d": ("convergence", ("lad", "hinge"), _s2d),
    "2e": ("convergence", ("lad", "hinge"), _s2e),
    "5": ("convergence", ("ls", "exponential", "lad", "hinge"), _s5),
    "3a": ("proximal_step", _PS, _s3a),
    "3b": ("proximal_step", _PS, _s3b),
    "3c": ("proximal_step", _PS, _s3c),
    "3d": ("proximal_step", _PS, _s3d),
    "3e": ("proximal_step", _PS, _s3e),
    "4a": ("proximal_step", _PS, _s4a),
    "4b": ("proximal_step", _PS, _s4b),
    "4c": ("proximal_step", _PS, _s4c),
    "4d": ("proximal_step", _PS, _s4d),
    "4e": ("proximal_step", _PS, _s4e),
    "7a": ("intro", ("lad",), _s7a),
    "7b": ("intro", ("lad",), _s7b),
    "7c": ("intro", ("lad",), _s7c),
}


def _seed_count_rule(verdicts) -> tuple[str, str]:
    """7c: P below G on ≥ 80 % of the seeds → confirmed; on ≤ 20 % → contradicted."""
    n, c = len(verdicts), list(verdicts).count(CONFIRMED)
    text = f"P below G on {c} of {n} runs"
    if n and c >= 0.8 * n:
        return CONFIRMED, text
    if n and c <= 0.2 * n:
        return CONTRADICTED, text
    return INCONCLUSIVE, text


def judge_synthetic(sid, cs: CurveSet) -> list[dict]:
    """Rows of one synthetic statement: ``all``, per cell, per tie rule and per run (when
    several).
    """
    exp, losses, fn = SYNTHETIC[sid]
    runs = cs.runs(exp, losses)
    proto = cs.protocol(exp, runs)
    agg = _seed_count_rule if sid == "7c" else aggregate_runs
    if not runs:
        return [_row(sid, "all", INCONCLUSIVE, f"no stored {exp} curves", proto, 0)]
    per_run = {run: fn(_Run(cs, exp, *run)) for run in runs}
    run_verdict = {
        run: combine_all(c.verdict for c in cells.values()) for run, cells in per_run.items()
    }
    first = per_run[runs[0]]
    v, counts = agg(list(run_verdict.values()))
    detail = "; ".join(f"{k}: {c.numbers}" if k != "all" else c.numbers for k, c in first.items())
    lead = f"seed {runs[0][0]}, {runs[0][1]} rule — " if len(runs) > 1 else ""
    rows = [_row(sid, "all", v, f"{counts}. {lead}{detail}", proto, len(runs))]
    for key in first:
        if key == "all":
            continue
        cells = [per_run[run][key] for run in runs if key in per_run[run]]
        cv, ctext = agg([c.verdict for c in cells])
        rows.append(
            _row(
                sid,
                key,
                cv,
                f"{ctext}. {cells[0].numbers}" if len(cells) > 1 else cells[0].numbers,
                proto,
                sum(c.n_support > 0 for c in cells),
            )
        )
    rules = sorted({r for _, r in runs}, key=lambda r: (r != DEFAULT_TIE_RULE, r))
    if len(runs) > 1:
        for rule in rules:
            vs = [run_verdict[run] for run in runs if run[1] == rule]
            rv, rtext = agg(vs)
            rows.append(_row(sid, scope(tie_rule=rule), rv, rtext, proto, len(vs)))
        for run in runs:
            seed, rule = run
            text = "; ".join(
                f"{k}: {c.verdict}" if k != "all" else c.numbers for k, c in per_run[run].items()
            )
            rows.append(
                _row(sid, scope(tie_rule=rule, seed=seed), run_verdict[run], text, proto, 1)
            )
    return rows


# =====================================================================================
# real data
# =====================================================================================
def _ratio(unit: ProtocolUnit, dataset) -> float:
    """n_test / n_train of the refitted models (train ∪ validation), 1/3 when not stored."""
    r = unit.rows[unit.rows["dataset"] == dataset]
    if {"n_test", "n_train", "n_validation"} <= set(r.columns):
        v = (
            r["n_test"].astype(float)
            / (r["n_train"].astype(float) + r["n_validation"].astype(float))
        ).dropna()
        if not v.empty:
            return float(v.median())
    return 1.0 / 3.0


def _cmp(unit, ds, loss, a, b, metric="test_loss") -> Comparison:
    va, vb = paired_values(unit.rows, ds, loss, a, b, metric)
    return compare(va, vb, _ratio(unit, ds))


def _expected_datasets(real_units, losses, datasets=None) -> tuple:
    """Datasets with stored rows for every loss of ``losses`` in at least one unit."""
    found = set()
    for u in real_units:
        r = u.rows
        for ds, g in r.groupby("dataset"):
            if set(losses) <= set(g["loss"].astype(str)) and (datasets is None or ds in datasets):
                found.add(str(ds))
    return tuple(sorted(found))


def _has(unit, ds, loss, methods, metric="test_loss") -> bool:
    g = unit.rows[(unit.rows["dataset"] == ds) & (unit.rows["loss"] == loss)]
    g = g[g[metric].notna()] if metric in g else g.iloc[:0]
    return set(methods) <= set(g["algo"])


def _metric_name(metric):
    return "loss" if metric == "test_loss" else "error"


def _always(unit, comparisons, expected_cells):
    """The "always" rule on ``comparisons`` = {scope: Comparison} (Holm over them).

    ``expected_cells``: how many cells every-dataset coverage needs. Returns (verdict, text, cells).
    """
    keys = [k for k, c in comparisons.items() if c.n > 0]
    adj = dict(zip(keys, holm([comparisons[k].p for k in keys])))
    cells = {
        k: Cell(comparisons[k].verdict(adj[k]), comparisons[k].text(adj[k]), comparisons[k].n)
        for k in keys
    }
    raw = [comparisons[k].verdict() for k in keys]
    held = [c.verdict for c in cells.values()]
    missing = expected_cells - len(keys)
    v = (
        CONTRADICTED
        if CONTRADICTED in held
        else (
            CONFIRMED
            if (held and all(x == CONFIRMED for x in held) and missing <= 0)
            else INCONCLUSIVE
        )
    )
    raw_v = (
        CONTRADICTED
        if CONTRADICTED in raw
        else (
            CONFIRMED
            if (raw and all(x == CONFIRMED for x in raw) and missing <= 0)
            else INCONCLUSIVE
        )
    )
    text = (
        f"Holm: {held.count(CONFIRMED)} confirmed, {held.count(CONTRADICTED)} contradicted,"
        f" {held.count(INCONCLUSIVE)} inconclusive of {len(keys)} cells ({max(missing, 0)}"
        f" missing); raw rule: {raw_v}"
        f" ({raw.count(CONFIRMED)}/{raw.count(CONTRADICTED)}/{raw.count(INCONCLUSIVE)})"
    )
    return v, text, cells


def _r6a(unit, units):
    exp = _expected_datasets(units, ("ls",))
    better, equiv = {}, {}
    for ds in exp:
        if not _has(unit, ds, "ls", ("gradient",)):
            continue
        scale = float(
            unit.rows[
                (unit.rows["dataset"] == ds)
                & (unit.rows["loss"] == "ls")
                & (unit.rows["algo"] == "gradient")
            ]["test_loss"].median()
        )
        for a, b in (("prox", "gradient"), ("gradient", "xgboost"), ("prox", "xgboost")):
            c = _cmp(unit, ds, "ls", a, b)
            if c.n:
                equiv[scope(dataset=ds, methods=f"{short(a)} ~ {short(b)}")] = (c, scale)
        for a in ("gradient", "prox"):
            c = _cmp(unit, ds, "ls", a, "random_forest")
            if c.n:
                better[scope(dataset=ds, methods=f"{short(a)} vs RF")] = c
    keys = list(equiv) + list(better)
    comps = [equiv[k][0] for k in equiv] + [better[k] for k in better]
    adj = dict(zip(keys, holm([c.p for c in comps])))
    cells = {}
    for k, (c, s) in equiv.items():
        rel, lo, hi = c.median / s, c.hl_low / s, c.hl_high / s
        if abs(rel) <= 0.01 and lo >= -0.02 and hi <= 0.02:
            v = CONFIRMED
        elif adj[k] < ALPHA and abs(rel) > 0.02:
            v = CONTRADICTED
        else:
            v = INCONCLUSIVE
        cells[k] = Cell(
            v,
            f"median Δ {rel:+.2%} of G's median loss, HL 95 % [{lo:+.2%}, {hi:+.2%}], "
            f"p {c.p:.2g}, Holm p {adj[k]:.2g}",
            c.n,
        )
    for k, c in better.items():
        cells[k] = Cell(c.verdict(adj[k]), c.text(adj[k]), c.n)
    held = [c.verdict for c in cells.values()]
    missing = 5 * len(exp) - len(cells)
    v = (
        CONTRADICTED
        if CONTRADICTED in held
        else (
            CONFIRMED
            if (held and all(x == CONFIRMED for x in held) and missing <= 0)
            else INCONCLUSIVE
        )
    )
    text = (
        f"{held.count(CONFIRMED)} confirmed, {held.count(CONTRADICTED)} contradicted, "
        f"{held.count(INCONCLUSIVE)} inconclusive of {len(cells)} judged comparisons "
        f"({missing} of {5 * len(exp)} missing: 5 per dataset with ls rows)"
    )
    return v, text, cells


def _n_splits(unit, ds, loss) -> int:
    r = unit.rows
    return int(r[(r["dataset"] == ds) & (r["loss"] == loss)]["split"].nunique())


def _winners(unit, ds, loss, metric, methods, k=1):
    g = unit.rows[
        (unit.rows["dataset"] == ds) & (unit.rows["loss"] == loss) & unit.rows["algo"].isin(methods)
    ]
    med = g.groupby("algo")[metric].median().dropna().sort_values(kind="stable")
    return list(med.index[:k]), med


def _r6b(unit, units):
    exp = _expected_datasets(units, ("ls",))
    methods = PAPER_METHODS
    cells, yes = {}, 0
    for ds in exp:
        if not _has(unit, ds, "ls", methods):
            continue
        (best,), med = _winners(unit, ds, "ls", "test_loss", methods)
        ok = best in ("residual_gradient", "residual_prox")
        yes += ok
        cells[scope(dataset=ds)] = Cell(
            CONFIRMED if ok else CONTRADICTED,
            f"lowest median ls test loss: {short(best)} ({med.iloc[0]:.4g}); "
            f"RG {med.get('residual_gradient', math.nan):.4g}, "
            f"RP {med.get('residual_prox', math.nan):.4g}",
            _n_splits(unit, ds, "ls"),
        )
    missing = len(exp) - len(cells)
    v = count_rule(yes, missing, 3, 1)
    return (
        v,
        (
            f"residual method lowest on {yes} of {len(cells)} datasets ({missing} missing; ≥ 3"
            " confirms, ≤ 1 contradicts)"
        ),
        cells,
    )


def _r6c(unit, units):
    n_exp = sum(len(_expected_datasets(units, (loss,))) for loss in ("lad", "pinball"))
    comps = {}
    for loss in ("lad", "pinball"):
        for ds in _expected_datasets(units, (loss,)):
            c = _cmp(unit, ds, loss, "prox", "gradient")
            if c.n:
                comps[scope(loss=loss, dataset=ds)] = c
    return _always(unit, comps, n_exp)


def _r6d(unit, units):
    methods = (
        "gradient",
        "prox",
        "residual_gradient",
        "residual_prox",
        "accelerated_gradient",
        "accelerated_prox",
        "xgboost",
    )
    cells, yes, n_exp = {}, 0, 0
    for loss in ("lad", "pinball"):
        for ds in _expected_datasets(units, (loss,)):
            n_exp += 1
            if not _has(unit, ds, loss, methods):
                continue
            (best,), med = _winners(unit, ds, loss, "test_loss", methods)
            ok = best in ("prox", "residual_prox")
            yes += ok
            cells[scope(loss=loss, dataset=ds)] = Cell(
                CONFIRMED if ok else CONTRADICTED,
                f"lowest median test loss: {short(best)} ({med.iloc[0]:.4g})",
                _n_splits(unit, ds, loss),
            )
    missing = n_exp - len(cells)
    need, worst = math.ceil(7 / 12 * n_exp), math.floor(4 / 12 * n_exp)
    v = count_rule(yes, missing, need, worst) if n_exp else INCONCLUSIVE
    return (
        v,
        (
            f"P or RP lowest in {yes} of {len(cells)} cells ({missing} missing; ≥ {need} of {n_exp}"
            f" confirms, ≤ {worst} contradicts)"
        ),
        cells,
    )


def _r6e(unit, units):
    comps, engel = {}, {}
    n_exp = 0
    for loss in ("lad", "pinball"):
        for ds in _expected_datasets(units, (loss,)):
            c = _cmp(unit, ds, loss, "accelerated_prox", "accelerated_gradient")
            if ds == "engel":
                if c.n:
                    engel[scope(loss=loss, dataset=ds)] = c
                continue
            n_exp += 1
            if c.n:
                comps[scope(loss=loss, dataset=ds)] = c
    keys = list(comps)
    adj = dict(zip(keys, holm([comps[k].p for k in keys])))
    cells = {k: Cell(comps[k].verdict(adj[k]), comps[k].text(adj[k]), comps[k].n) for k in keys}
    for k, c in engel.items():
        cells[k] = Cell(
            c.verdict(), "reported, not counted (the paper's exception): " + c.text(), c.n
        )
    held = [cells[k].verdict for k in keys]
    conf, contra = held.count(CONFIRMED), held.count(CONTRADICTED)
    need = math.ceil(0.8 * n_exp)
    v = CONTRADICTED if contra else CONFIRMED if (n_exp and conf >= need) else INCONCLUSIVE
    return (
        v,
        (
            f"non-Engel cells (Holm): {conf} confirmed, {contra} contradicted of {len(keys)}"
            f" judged, {n_exp - len(keys)} missing; ≥ {need} of {n_exp} confirms"
        ),
        cells,
    )


def _r6j(unit, units):
    cells, better, n_exp = {}, 0, 0
    for loss in PAPER_REGRESSION_LOSSES:
        for ds in _expected_datasets(units, (loss,)):
            for acc, plain in (("accelerated_gradient", "gradient"), ("accelerated_prox", "prox")):
                n_exp += 1
                c = _cmp(unit, ds, loss, acc, plain)
                if not c.n:
                    continue
                isb = c.verdict() == CONFIRMED
                better += isb
                cells[scope(loss=loss, dataset=ds, methods=f"{short(acc)} vs {short(plain)}")] = (
                    Cell(
                        CONTRADICTED if isb else CONFIRMED,
                        ("accelerated confirmed better: " if isb else "") + c.text(),
                        c.n,
                    )
                )
    notbetter = len(cells) - better
    if n_exp and notbetter >= 0.8 * n_exp:
        v = CONFIRMED
    elif n_exp and better >= 0.5 * n_exp:
        v = CONTRADICTED
    else:
        v = INCONCLUSIVE
    return (
        v,
        (
            f"accelerated confirmed better in {better} of {len(cells)} cells ({n_exp - len(cells)}"
            f" missing); not better in ≥ 80 % of {n_exp} confirms"
        ),
        cells,
    )


def _r6f(unit, units):
    podium = ("prox", "residual_prox", "residual_gradient", "xgboost")
    cells, filled, seen, n_exp = {}, 0, set(), 0
    for ds in _expected_datasets(units, PAPER_CLASSIFICATION_LOSSES):
        for loss in PAPER_CLASSIFICATION_LOSSES:
            for metric in ("test_loss", "test_error"):
                n_exp += 1
                methods = [
                    m for m in PAPER_METHODS if metric == "test_error" or m not in LS_AND_ERROR_ONLY
                ]
                if not _has(unit, ds, loss, methods, metric):
                    continue
                top, med = _winners(unit, ds, loss, metric, methods, k=3)
                f = sum(m in podium for m in top)
                filled += f
                seen |= set(top) & set(podium)
                cells[scope(loss=loss, dataset=ds, metric=_metric_name(metric))] = Cell(
                    CONFIRMED if f >= 3 * 0.75 else CONTRADICTED if f < 3 * 0.5 else INCONCLUSIVE,
                    "top 3 by median: " + ", ".join(f"{short(m)} {med[m]:.4g}" for m in top),
                    _n_splits(unit, ds, loss),
                )
    places, missing = 3 * n_exp, 3 * (n_exp - len(cells))
    if n_exp and filled >= 0.75 * places and seen == set(podium):
        v = CONFIRMED
    elif n_exp and filled + missing < 0.5 * places:
        v = CONTRADICTED
    else:
        v = INCONCLUSIVE
    return (
        v,
        (
            f"P/RP/RG/XGB fill {filled} of {3 * len(cells)} podium places in {len(cells)} cells"
            f" ({n_exp - len(cells)} missing); present:"
            f" {', '.join(short(m) for m in podium if m in seen) or 'none'}"
        ),
        cells,
    )


def _r6g(unit, units):
    exp = _expected_datasets(units, ("hinge",))
    comps = {}
    for ds in exp:
        for metric in ("test_loss", "test_error"):
            for a in ("prox", "residual_prox"):
                for b in ("gradient", "residual_gradient"):
                    c = _cmp(unit, ds, "hinge", a, b, metric)
                    if c.n:
                        comps[(ds, metric, a, b)] = c
    keys = list(comps)
    adj = dict(zip(keys, holm([comps[k].p for k in keys])))
    cells = {}
    for ds in exp:
        for metric in ("test_loss", "test_error"):
            ks = [k for k in keys if k[:2] == (ds, metric)]
            if len(ks) < 4:
                continue
            ver = {(k[2], k[3]): comps[k].verdict(adj[k]) for k in ks}
            good = any(
                ver[(a, "gradient")] == CONFIRMED and ver[(a, "residual_gradient")] == CONFIRMED
                for a in ("prox", "residual_prox")
            )
            bad = all(
                CONTRADICTED in (ver[(a, "gradient")], ver[(a, "residual_gradient")])
                for a in ("prox", "residual_prox")
            )
            v = CONFIRMED if good else CONTRADICTED if bad else INCONCLUSIVE
            cells[scope(loss="hinge", dataset=ds, metric=_metric_name(metric))] = Cell(
                v,
                "; ".join(f"{short(k[2])} vs {short(k[3])}: {comps[k].text(adj[k])}" for k in ks),
                comps[ks[0]].n,
            )
    held = [c.verdict for c in cells.values()]
    missing = 2 * len(exp) - len(cells)
    v = (
        CONTRADICTED
        if CONTRADICTED in held
        else (
            CONFIRMED
            if (held and all(x == CONFIRMED for x in held) and missing <= 0)
            else INCONCLUSIVE
        )
    )
    return (
        v,
        (
            f"{held.count(CONFIRMED)} confirmed, {held.count(CONTRADICTED)} contradicted,"
            f" {held.count(INCONCLUSIVE)} inconclusive of {len(cells)} (dataset, metric) cells"
            f" ({missing} missing; Holm over {len(keys)} comparisons)"
        ),
        cells,
    )


def _r6h(unit, units):
    exp = _expected_datasets(units, PAPER_CLASSIFICATION_LOSSES)
    comps = {}
    for ds in exp:
        for loss in PAPER_CLASSIFICATION_LOSSES:
            for metric in ("test_loss", "test_error"):
                for b in ("gradient", "accelerated_gradient"):
                    c = _cmp(unit, ds, loss, "accelerated_prox", b, metric)
                    if c.n:
                        comps[
                            scope(
                                loss=loss,
                                dataset=ds,
                                methods=f"AP vs {short(b)}",
                                metric=_metric_name(metric),
                            )
                        ] = c
    return _always(unit, comps, 8 * len(exp))


def _r6i(unit, units):
    exp = _expected_datasets(units, PAPER_CLASSIFICATION_LOSSES)
    methods = [m for m in PAPER_METHODS if m not in LS_AND_ERROR_ONLY]
    cells, big, n_exp = {}, 0, 0
    for ds in exp:
        for m in methods:
            n_exp += 1
            va, vb = paired_values(unit.rows, ds, "hinge", m, m, "test_error", loss_b="exponential")
            c = compare(va, vb, _ratio(unit, ds))
            if not c.n:
                continue
            isbig = c.median <= -0.01 and c.p < ALPHA
            big += isbig
            cells[scope(dataset=ds, methods=short(m), metric="error")] = Cell(
                CONTRADICTED if isbig else CONFIRMED,
                ("big advantage: " if isbig else "") + c.text(),
                c.n,
            )
    missing = n_exp - len(cells)
    if n_exp and big + missing <= 0.25 * n_exp:
        v = CONFIRMED
    elif n_exp and big > 0.5 * n_exp:
        v = CONTRADICTED
    else:
        v = INCONCLUSIVE
    return (
        v,
        (
            f"big advantage of hinge in {big} of {len(cells)} (method, dataset) cells ({missing}"
            " missing)"
        ),
        cells,
    )


REAL = {
    "6a": _r6a,
    "6b": _r6b,
    "6c": _r6c,
    "6d": _r6d,
    "6e": _r6e,
    "6j": _r6j,
    "6f": _r6f,
    "6g": _r6g,
    "6h": _r6h,
    "6i": _r6i,
}


def judge_real(sid, units) -> list[dict]:
    """Rows of one real-data statement: per unit its cells; ``all`` from the unit with most judged
    cells.
    """
    fn = REAL[sid]
    results = [(u, *fn(u, units)) for u in units]
    results = [r for r in results if r[3]]
    if not results:
        return [
            _row(
                sid,
                "all",
                INCONCLUSIVE,
                "no stored rows for this statement",
                "real-world: no stored rows",
                0,
            )
        ]
    # the unit with the most judged cells; ties go to the preferred one (units are sorted by
    # preference)
    most = max(len(r[3]) for r in results)
    best = next(r for r in results if len(r[3]) == most)
    unit, v, text, cells = best
    others = [f"{u.label}: {vv}" for u, vv, _, c in results if u is not unit]
    extra = f" Other protocols (not combined): {'; '.join(others)}." if others else ""
    rows = [_row(sid, "all", v, text + "." + extra, unit.label, len(cells))]
    for u, _, _, c in results:
        for key, cell in c.items():
            rows.append(_row(sid, key, cell.verdict, cell.numbers, u.label, cell.n_support))
    return rows


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
                    "7a": _s7a(R)["all"].verdict,
                    "7b": _s7b(R)["all"].verdict,
                    "7c": _s7c(R)["all"].verdict,
                },
            )
            out.append(row)
    return pd.DataFrame(out)


# =====================================================================================
# all statements
# =====================================================================================
def criteria_sha(root=None) -> str:
    """sha256 of ``docs/claims.md`` (searched from ``root``, the repository of this package, then
    the cwd).
    """
    candidates = [Path(root) / CRITERIA_FILE] if root else []
    candidates += [Path(__file__).resolve().parents[2] / CRITERIA_FILE, Path.cwd() / CRITERIA_FILE]
    for path in candidates:
        if path.is_file():
            return hashlib.sha256(path.read_bytes()).hexdigest()
    return "unknown"


def _row(sid, sc, verdict, numbers, protocol, n_support) -> dict:
    return {
        "id": sid,
        "scope": sc,
        "verdict": verdict,
        "numbers": numbers,
        "protocol": protocol,
        "n_support": int(n_support),
    }


def judge(
    curves: pd.DataFrame | None, real: pd.DataFrame | None, sha: str | None = None
) -> pd.DataFrame:
    """Every statement of :data:`STATEMENTS` judged: the rows of ``claims.csv`` (ids in order,
    ``all`` first).
    """
    cs = CurveSet(curves)
    units = protocol_units(real) if real is not None else []
    rows = []
    for sid in STATEMENTS:
        rows += judge_synthetic(sid, cs) if sid in SYNTHETIC else judge_real(sid, units)
    df = pd.DataFrame(rows)
    df["criteria_sha"] = sha or criteria_sha()
    return df[list(CLAIMS_COLUMNS)]


def write_claims(claims: pd.DataFrame, path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        claims.to_csv(tmp, index=False, lineterminator="\n")
    return path


@stops_on_damage
def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m proxboost.claims", description=__doc__.splitlines()[0]
    )
    p.add_argument("--results", default="results", help="results directory (default: results)")
    p.add_argument("--out", default=None, help="output file (default: <results>/claims.csv)")
    args = p.parse_args(argv)

    claims = judge(load_curves(args.results), load(args.results))
    out = write_claims(claims, args.out or Path(args.results) / "claims.csv")
    counts = claims[claims["scope"] == "all"]["verdict"].value_counts()
    print(
        f"wrote {out}: "
        + ", ".join(f"{counts.get(v, 0)} {v}" for v in (CONFIRMED, CONTRADICTED, INCONCLUSIVE))
    )


if __name__ == "__main__":
    main()
