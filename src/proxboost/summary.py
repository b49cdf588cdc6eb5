"""``results/SUMMARY.md``: real-world statistics per dataset and the claims of SPEC §7.

    python -m proxboost.summary [--results results] [--out results/SUMMARY.md]

Reads the stored results only (nothing is fitted):

- real-world rows (:func:`proxboost.results.load`): for each dataset and loss, mean ± std of
  the test loss (and misclassification rate) per method over the splits, the median paired
  difference to ``gradient`` (Δ = value − value of ``gradient`` on the same split), the
  win / tie / loss counts and the Wilcoxon signed-rank p-value (:func:`scipy.stats.wilcoxon`,
  two-sided; 1 when every difference is 0);
- synthetic curves (:func:`proxboost.curves.load_curves`): the checks of claims 1–5 and 7.

Every claim gets one line: **confirmed**, **not confirmed** or **not measurable** (data
missing), with the numbers behind it. The criteria are fixed in :data:`CRITERIA` (written
before the full experiments were run) and are never adjusted to make a claim pass.

Choice of rows: a dataset can have rows under several protocols (e.g. the paper grid and a
reduced one) and engines. For each dataset the protocol with the most methods stored (then
the most rows, then a name starting with ``paper``) is used, and within it the boosting engine
with the most rows (``exact`` on a tie); the baselines (engine ``none``) are kept. The chosen
protocol is printed with every table and on every figure (:func:`select_real_rows`).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from ._io import atomic_path
from .datasets import list_datasets
from .protocol import ALGOS

__all__ = [
    "CLASSIFICATION_DATASETS",
    "CRITERIA",
    "REGRESSION_DATASETS",
    "check_claims",
    "compare",
    "main",
    "paired_deltas",
    "real_world_tables",
    "select_real_rows",
    "wilcoxon_p",
    "write_summary",
]

REGRESSION_DATASETS = tuple(list_datasets(task="regression", synthetic=False))
CLASSIFICATION_DATASETS = tuple(list_datasets(task="classification", synthetic=False))
REGRESSION_LOSSES = ("ls", "lad", "pinball")      # the paper's losses per task (SPEC §5.4)
CLASSIFICATION_LOSSES = ("exponential", "hinge")
METHODS = ALGOS
REFERENCE = "gradient"
SHORT = {"gradient": "G", "prox": "P", "residual_gradient": "RG", "residual_prox": "RP",
         "accelerated_gradient": "AG", "accelerated_prox": "AP", "xgboost": "XGB", "random_forest": "RF",
         "lightgbm": "LGBM", "sklearn_hgb": "HGB"}

#: Thresholds of the claim checks (fixed before the full runs; see the claims table for their use).
CRITERIA = {
    # below this fraction of the initial loss, curves are at the floating-point floor and
    # relative comparisons are meaningless (depth-15 trees drive ls/exponential losses to ~0)
    "floor": 1e-8,
    "coincide_rtol": 1e-6,        # claim 1, ls: max relative gap over iterations
    "nearly_rtol": 0.05,          # claim 1, exponential: max relative gap over iterations
    "equal_iter_fraction": 0.9,   # claim 2: prox below gradient on >= 90 % of iterations (and at T)
    "stall_rdecrease": 0.01,      # claims 2, 7: < 1 % relative decrease over the second half = stalls
    "alike_rtol": 0.10,           # claim 2: residual_prox like prox, median relative gap <= 10 %
    "monotone_rtol": 0.01,        # claim 3: L(larger λ) <= (1 + 1 %) L(smaller λ)
    "monotone_iters": (100, 1000),  # claim 3: iterations where the ordering in λ is checked
    "argmin_rtol": 1e-3,          # claim 3: λ's within 0.1 % of the best minimal test loss tie
    "intermediate_steps": (0.1, 1.0, 10.0),
    "early_iter": 50,             # claim 4: "at first" = iteration 50 (5 % of T)
    "diverge_rtol": 0.10,         # claim 4: L(T) > 1.1 min_t L(t) = diverges
    "time_ratio": 1.2,            # claim 5: prox seconds <= 1.2 x gradient seconds (shared machine)
}


# =====================================================================================
# real-world rows
# =====================================================================================
def missing_reason(dataset) -> str:
    """Why a dataset has no stored rows: its data file is unavailable here, or not computed yet."""
    from .datasets import is_available

    return "not computed yet" if is_available(dataset) else "data file unavailable here"


def select_real_rows(df: pd.DataFrame, datasets=None):
    """Rows of one protocol (and boosting engine) per dataset; returns ``(rows, info)``.

    ``info[dataset] = {"protocol", "engine", "n_splits", "other_protocols"}``. Only the real
    datasets (or ``datasets``) are kept; duplicated keys keep the last row.
    """
    datasets = tuple(datasets or (REGRESSION_DATASETS + CLASSIFICATION_DATASETS))
    if df is None or df.empty:
        return pd.DataFrame(columns=getattr(df, "columns", [])), {}
    df = df[df["dataset"].astype(str).isin(datasets)].copy()
    if "engine" not in df.columns:
        df["engine"] = "exact"
    df["engine"] = df["engine"].fillna("exact").astype(str)
    kept, info = [], {}
    for ds, g in df.groupby("dataset", sort=False):
        stats = []
        for proto, gp in g.groupby("protocol"):
            stats.append((gp["algo"].nunique(), len(gp), str(proto).startswith("paper"), str(proto)))
        stats.sort(reverse=True)
        proto = stats[0][3]
        gp = g[g["protocol"] == proto]
        boost = gp[gp["engine"] != "none"]
        engine = "exact"
        if not boost.empty:
            counts = boost["engine"].value_counts()
            best = counts.max()
            engine = "exact" if counts.get("exact", 0) == best else str(counts.idxmax())
        rows = gp[(gp["engine"] == engine) | (gp["engine"] == "none")]
        rows = rows.drop_duplicates(subset=["loss", "algo", "split"], keep="last")
        kept.append(rows)
        info[ds] = {"protocol": proto, "engine": engine, "n_splits": int(rows["split"].nunique()),
                    "other_protocols": sorted(p for p in g["protocol"].unique() if p != proto)}
    rows = pd.concat(kept, ignore_index=True) if kept else df.iloc[:0]
    return rows, info


def paired_deltas(rows: pd.DataFrame, dataset, loss, metric="test_loss", reference=REFERENCE):
    """Δ = metric(method) − metric(reference) per split, paired by split.

    Returns a DataFrame ``algo, split, value, ref, delta`` (NaNs dropped) for every method
    other than the reference with at least one paired split.
    """
    g = rows[(rows["dataset"] == dataset) & (rows["loss"] == loss)]
    ref = g[g["algo"] == reference][["split", metric]].dropna().rename(columns={metric: "ref"})
    out = []
    for algo, ga in g[g["algo"] != reference].groupby("algo"):
        m = ga[["split", metric]].dropna().merge(ref, on="split").rename(columns={metric: "value"})
        if m.empty:
            continue
        m["algo"] = algo
        m["delta"] = m["value"] - m["ref"]
        out.append(m)
    if not out:
        return pd.DataFrame(columns=["algo", "split", "value", "ref", "delta"])
    return pd.concat(out, ignore_index=True)[["algo", "split", "value", "ref", "delta"]]


def loss_differences(rows, dataset, metric="test_error", loss_a="hinge", loss_b="exponential"):
    """Per method and split: metric under ``loss_a`` − metric under ``loss_b`` (paired by split)."""
    g = rows[rows["dataset"] == dataset]
    a = g[g["loss"] == loss_a][["algo", "split", metric]].dropna()
    b = g[g["loss"] == loss_b][["algo", "split", metric]].dropna()
    m = a.merge(b, on=["algo", "split"], suffixes=("_a", "_b"))
    m["delta"] = m[f"{metric}_a"] - m[f"{metric}_b"]
    return m[["algo", "split", "delta"]]


def wilcoxon_p(d) -> float:
    """Two-sided Wilcoxon signed-rank p-value of the paired differences ``d``.

    1.0 when every difference is 0 (no evidence of a difference); NaN without data.
    """
    d = np.asarray(d, dtype=float)
    d = d[np.isfinite(d)]
    if d.size == 0:
        return math.nan
    if np.all(d == 0):
        return 1.0
    from scipy.stats import wilcoxon

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(wilcoxon(d).pvalue)


def compare(a, b) -> dict:
    """Paired comparison of A and B (arrays over the same splits): "A beats B" (SPEC §7) iff
    the median of A − B is < 0. Returns n, median, wins (A < B), ties, losses, p, beats."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    d = d[np.isfinite(d)]
    if d.size == 0:
        return {"n": 0, "median": math.nan, "wins": 0, "ties": 0, "losses": 0, "p": math.nan, "beats": None}
    med = float(np.median(d))
    return {"n": int(d.size), "median": med, "wins": int((d < 0).sum()), "ties": int((d == 0).sum()),
            "losses": int((d > 0).sum()), "p": wilcoxon_p(d), "beats": bool(med < 0)}


def _paired(rows, dataset, loss, algo_a, algo_b, metric="test_loss"):
    g = rows[(rows["dataset"] == dataset) & (rows["loss"] == loss)]
    a = g[g["algo"] == algo_a][["split", metric]].dropna()
    b = g[g["algo"] == algo_b][["split", metric]].dropna()
    m = a.merge(b, on="split", suffixes=("_a", "_b"))
    return compare(m[f"{metric}_a"], m[f"{metric}_b"])


def _num(x, digits=4):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    x = float(x)
    if x == 0:
        return "0"
    if abs(x) >= 1e4 or abs(x) < 1e-3:
        return f"{x:.{digits - 1}e}"
    return f"{x:.{digits}g}"


def _p(p):
    if p is None or not math.isfinite(p):
        return "—"
    return f"{p:.2g}"


def _metric_cells(rows, ga, ds, loss, algo, metric, missing):
    """Cells "mean ± std | median Δ | W/T/L | p" of one method and metric (vs the reference)."""
    v = ga[metric].astype(float).dropna()
    if v.empty:
        return [missing, "—", "—", "—"]
    cells = [f"{_num(v.mean())} ± {_num(v.std(ddof=1) if len(v) > 1 else math.nan)}"]
    if algo == REFERENCE:
        return cells + ["(reference)", "", ""]
    c = _paired(rows, ds, loss, algo, REFERENCE, metric)
    return cells + [_num(c["median"]), f"{c['wins']}/{c['ties']}/{c['losses']}", _p(c["p"])]


def real_world_tables(rows: pd.DataFrame, info: dict) -> list[str]:
    """Markdown lines: one table per (dataset, loss)."""
    lines = []
    for ds in REGRESSION_DATASETS + CLASSIFICATION_DATASETS:
        losses = REGRESSION_LOSSES if ds in REGRESSION_DATASETS else CLASSIFICATION_LOSSES
        if ds not in info:
            lines += [f"### {ds}", "", f"_No stored rows ({missing_reason(ds)})._", ""]
            continue
        meta = info[ds]
        other = f"; other protocols stored, not used here: {', '.join(meta['other_protocols'])}" if meta["other_protocols"] else ""
        lines += [f"### {ds}", "", f"Protocol `{meta['protocol']}`, engine `{meta['engine']}`, "
                  f"{meta['n_splits']} splits stored{other}.", ""]
        clf = ds in CLASSIFICATION_DATASETS
        for loss in losses:
            g = rows[(rows["dataset"] == ds) & (rows["loss"] == loss)]
            if g.empty:
                lines += [f"**{loss}**: no stored rows.", ""]
                continue
            head = "| method | splits | test loss mean ± std | median Δ loss | W/T/L vs gradient | p |"
            sep = "|---|---|---|---|---|---|"
            if clf:
                head += " error mean ± std | median Δ error | W/T/L | p |"
                sep += "---|---|---|---|"
            lines += [f"**{loss}**", "", head, sep]
            for algo in METHODS:
                ga = g[g["algo"] == algo]
                if ga.empty:
                    continue
                cells = [algo, str(ga["split"].nunique())]
                cells += _metric_cells(rows, ga, ds, loss, algo, "test_loss", missing="not reported")
                if clf:
                    cells += _metric_cells(rows, ga, ds, loss, algo, "test_error", missing="—")
                lines.append("| " + " | ".join(cells) + " |")
            lines.append("")
    return lines


def engine_tables(real: pd.DataFrame) -> list[str]:
    """Markdown lines comparing the tree engines where both ran the same runs (issue 6): per
    (protocol, dataset, loss, algo), the per-split test-loss differences exact − hist."""
    if real is None or real.empty or "engine" not in real:
        return []
    key = ["protocol", "dataset", "loss", "algo", "split"]
    ex = real[real["engine"] == "exact"].drop_duplicates(key, keep="last")
    hi = real[real["engine"] == "hist"].drop_duplicates(key, keep="last")
    m = ex.merge(hi, on=key, suffixes=("_exact", "_hist"))
    if m.empty:
        return []
    lines = ["| protocol | dataset | loss | algo | splits | median Δ (exact − hist) | mean \\|Δ\\| / loss | "
             "hist W/T/L | p | median fit s exact / hist |", "|---|---|---|---|---|---|---|---|---|---|"]
    for (proto, ds, loss, algo), g in m.groupby(key[:-1], sort=True):
        d = g["test_loss_exact"].astype(float) - g["test_loss_hist"].astype(float)
        c = compare(g["test_loss_hist"], g["test_loss_exact"])
        rel = float(np.mean(np.abs(d) / g["test_loss_exact"].abs()))
        fe, fh = g["fit_seconds_exact"].median(), g["fit_seconds_hist"].median()
        lines.append(f"| {proto} | {ds} | {loss} | {algo} | {c['n']} | {_num(float(np.median(d)))} | {_num(rel)} | "
                     f"{c['wins']}/{c['ties']}/{c['losses']} | {_p(c['p'])} | {_num(fe, 3)} / {_num(fh, 3)} |")
    return ["## Tree engines compared on the protocol", "",
            "Same runs with `engine=exact` (scikit-learn trees) and `engine=hist` (histogram trees): Δ = test loss "
            "exact − hist on the same split; W/T/L = splits where hist is lower / equal / higher; p = Wilcoxon; "
            "fit seconds = grid fits + refit of one split (on a possibly shared machine).", ""] + lines + [""]


# =====================================================================================
# synthetic curves
# =====================================================================================
class _Curves:
    """Lookup of synthetic curves by (experiment, loss, algo, depth, step)."""

    def __init__(self, curves: pd.DataFrame):
        self.df = curves if curves is not None else pd.DataFrame()
        self._groups = {}
        if not self.df.empty:
            for key, g in self.df.groupby(["experiment", "loss", "algo", "max_depth"], sort=False):
                self._groups.setdefault(key, []).append(g)

    def get(self, experiment, loss, algo, depth, step=None):
        """The run's curve sorted by iteration, or None. ``step`` ignored for gradient algos."""
        for g in self._groups.get((experiment, loss, algo, depth), []):
            for _, run in g.groupby(g["step"].fillna(-1.0)):
                s = run["step"].iloc[0]
                if step is None or not np.isfinite(s) or math.isclose(float(s), float(step), rel_tol=1e-9):
                    return run.sort_values("iteration").reset_index(drop=True)
        return None


def _rel_gap(a, b, floor_ref):
    """|a − b| / b over iterations where b is above the floating-point floor."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    keep = b >= CRITERIA["floor"] * floor_ref
    if not keep.any():
        return np.array([0.0])
    return np.abs(a[keep] - b[keep]) / b[keep]


def _rdecrease_second_half(loss):
    loss = np.asarray(loss, float)
    T = len(loss) - 1
    mid = loss[T // 2]
    return (mid - loss[T]) / mid if mid > 0 else 0.0


def _status(parts):
    """Claim status from its parts (each True / False / None = not measurable)."""
    parts = [None if p is None else bool(p) for p in parts]
    if not parts or all(p is None for p in parts):
        return "not measurable"
    if any(p is False for p in parts):
        return "not confirmed"
    if any(p is None for p in parts):
        return "not measurable (partly: the measured parts hold)"
    return "confirmed"


def _mark(ok):
    return "?" if ok is None else ("✓" if ok else "✗")


def _claim1(C):
    parts, notes = [], []
    for loss, key, label in (("ls", "coincide_rtol", "coincide"), ("exponential", "nearly_rtol", "nearly coincide")):
        for depth in (3, 15):
            g, p = C.get("convergence", loss, "gradient", depth), C.get("convergence", loss, "prox", depth)
            if g is None or p is None:
                parts.append(None)
                notes.append(f"{loss} depth {depth}: missing")
                continue
            gap = float(_rel_gap(p["train_loss"], g["train_loss"], g["train_loss"].iloc[0]).max())
            ok = gap <= CRITERIA[key]
            parts.append(ok)
            notes.append(f"{_mark(ok)} {loss} depth {depth}: max relative gap {gap:.2g} (≤ {CRITERIA[key]:g} to {label})")
    return parts, notes


def _claim2(C):
    parts, notes = [], []
    for loss in ("lad", "hinge"):
        for depth in (3, 15):
            g = C.get("convergence", loss, "gradient", depth)
            p = C.get("convergence", loss, "prox", depth)
            rg = C.get("convergence", loss, "residual_gradient", depth)
            rp = C.get("convergence", loss, "residual_prox", depth)
            tag = f"{loss} d{depth}"
            if g is None or p is None:
                parts.append(None)
                notes.append(f"{tag}: gradient/prox missing")
            else:
                lg, lp = g["train_loss"].to_numpy(), p["train_loss"].to_numpy()
                keep = lg[1:] >= CRITERIA["floor"] * lg[0]
                frac = float(np.mean((lp[1:] < lg[1:])[keep])) if keep.any() else 1.0
                floor = CRITERIA["floor"] * lg[0]
                at_T = bool(lp[-1] < lg[-1]) or max(lp[-1], lg[-1]) < floor   # both at the floor: no verdict at T
                ok = bool(at_T and frac >= CRITERIA["equal_iter_fraction"])
                parts.append(ok)
                notes.append(f"{_mark(ok)} {tag} prox < gradient: at T {_num(lp[-1])} vs {_num(lg[-1])}, "
                             f"on {frac:.0%} of the iterations where gradient is above the floor")
                if loss == "hinge":
                    dec = _rdecrease_second_half(lg)
                    ok = dec < CRITERIA["stall_rdecrease"]
                    parts.append(ok)
                    notes.append(f"{_mark(ok)} {tag} gradient stalls: decrease over t=500→1000 {dec:.2%} "
                                 f"(< {CRITERIA['stall_rdecrease']:.0%}); prox {_rdecrease_second_half(lp):.2%}")
            if g is None or rg is None:
                parts.append(None)
                notes.append(f"{tag}: residual_gradient missing")
            else:
                a, b = float(rg["train_loss"].iloc[-1]), float(g["train_loss"].iloc[-1])
                if max(a, b) < CRITERIA["floor"] * float(g["train_loss"].iloc[0]):
                    ok, extra = None, " (both at the floor: not measurable)"
                else:
                    ok, extra = a < b, ""
                parts.append(ok)
                notes.append(f"{_mark(ok)} {tag} residual helps gradient: RG {_num(a)} vs G {_num(b)} at T{extra}")
            if p is None or rp is None:
                parts.append(None)
                notes.append(f"{tag}: residual_prox missing")
            else:
                gap = float(np.median(_rel_gap(rp["train_loss"], p["train_loss"], p["train_loss"].iloc[0])))
                ok = gap <= CRITERIA["alike_rtol"]
                parts.append(ok)
                notes.append(f"{_mark(ok)} {tag} residual_prox ≈ prox: median relative gap {gap:.2%} "
                             f"(≤ {CRITERIA['alike_rtol']:.0%})")
    return parts, notes


STEPS = (1e-2, 1e-1, 1.0, 10.0, 100.0)


def _claim3(C):
    parts, notes = [], []
    for loss in ("lad", "hinge"):
        for algo in ("prox", "residual_prox"):
            runs = [C.get("proximal_step", loss, algo, 3, s) for s in STEPS]
            if any(r is None for r in runs):
                parts += [None, None]
                notes.append(f"{loss} {algo}: {sum(r is None for r in runs)} of {len(STEPS)} λ missing")
                continue
            for it in sorted({min(i, len(runs[0]) - 1) for i in CRITERIA["monotone_iters"]}):
                vals = [float(r["train_loss"].iloc[it]) for r in runs]
                ok = all(b <= (1 + CRITERIA["monotone_rtol"]) * a for a, b in zip(vals, vals[1:]))
                parts.append(ok)
                notes.append(f"{_mark(ok)} {loss} {algo} train loss at t={it} for λ=" +
                             "/".join(f"{s:g}" for s in STEPS) + ": " + ", ".join(_num(v, 3) for v in vals))
            mins = [float(r["test_loss"].min()) for r in runs]
            best = min(mins)
            ties = [s for s, m in zip(STEPS, mins) if m <= best * (1 + CRITERIA["argmin_rtol"])]
            ok = any(s in CRITERIA["intermediate_steps"] for s in ties)
            parts.append(ok)
            g = C.get("proximal_step", loss, "gradient", 3)
            gtxt = f"; gradient {_num(float(g['test_loss'].min()), 4)}" if g is not None else ""
            notes.append(f"{_mark(ok)} {loss} {algo} min test loss per λ: " + ", ".join(_num(m, 4) for m in mins) +
                         f" → best λ {'/'.join(f'{s:g}' for s in ties)}{gtxt}")
    return parts, notes


def _rise(loss):
    """(L(T) − min_t L) / max(min_t L, floor × L(0)): how far the curve ends above its minimum
    (a hinge loss can reach exactly 0, hence the floor)."""
    loss = np.asarray(loss, float)
    return float((loss[-1] - loss.min()) / max(loss.min(), CRITERIA["floor"] * loss[0]))


def _claim4(C):
    parts, notes = [], []
    t_early = CRITERIA["early_iter"]
    for loss in ("lad", "hinge"):
        pairs = [("gradient", "accelerated_gradient", None)] + [("prox", "accelerated_prox", s) for s in STEPS]
        early_train, early_test, n = 0, 0, 0
        for base, acc, s in pairs:
            b, a = C.get("proximal_step", loss, base, 3, s), C.get("proximal_step", loss, acc, 3, s)
            if a is None or b is None:
                continue
            it = min(t_early, len(a) - 1)
            n += 1
            early_train += a["train_loss"].iloc[it] < b["train_loss"].iloc[it]
            early_test += a["test_loss"].iloc[it] < b["test_loss"].iloc[it]
        if n == 0:
            parts.append(None)
            notes.append(f"{loss}: accelerated runs missing")
        else:
            ok = early_train == n
            parts.append(ok)
            notes.append(f"{_mark(ok)} {loss} accelerated below its counterpart at t={t_early}: "
                         f"train {early_train}/{n}, test {early_test}/{n} (pairs over λ)")
        div_all = []
        for acc, s in (("accelerated_gradient", None), ("accelerated_prox", 1.0)):
            a = C.get("proximal_step", loss, acc, 3, s)
            if a is None:
                parts.append(None)
                continue
            rt = [_rise(a[c]) for c in ("train_loss", "test_loss")]
            ok = all(r > CRITERIA["diverge_rtol"] for r in rt)
            parts.append(ok)
            lam = "" if s is None else f" λ={s:g}"
            notes.append(f"{_mark(ok)} {loss} {acc}{lam} diverges: L(T)/min L − 1 = train {rt[0]:.1%}, "
                         f"test {rt[1]:.1%} (> {CRITERIA['diverge_rtol']:.0%})")
        for s in STEPS:
            a = C.get("proximal_step", loss, "accelerated_prox", 3, s)
            if a is not None:
                div_all.append(all(_rise(a[c]) > CRITERIA["diverge_rtol"] for c in ("train_loss", "test_loss")))
        if div_all:
            notes.append(f"  {loss} accelerated_prox diverging on train and test for {sum(div_all)}/{len(div_all)} λ")
        ag = C.get("proximal_step", loss, "accelerated_gradient", 3)
        ap = C.get("proximal_step", loss, "accelerated_prox", 3, 1.0)
        if ag is None or ap is None:
            parts.append(None)
        else:
            ok = bool(ap["test_loss"].min() < ag["test_loss"].min())
            parts.append(ok)
            better = [s for s in STEPS if (r := C.get("proximal_step", loss, "accelerated_prox", 3, s)) is not None
                      and r["test_loss"].min() < ag["test_loss"].min()]
            notes.append(f"{_mark(ok)} {loss} accelerated_prox (λ=1) vs accelerated_gradient, min test loss "
                         f"{_num(float(ap['test_loss'].min()))} vs {_num(float(ag['test_loss'].min()))}; "
                         f"AP better for λ ∈ {{{', '.join(f'{s:g}' for s in better)}}}")
    return parts, notes


def _claim5(C):
    parts, notes, ratios, per_iter = [], [], [], []
    for loss in ("ls", "exponential", "lad", "hinge"):
        for depth in (3, 15):
            for p_algo, g_algo in (("prox", "gradient"), ("residual_prox", "residual_gradient")):
                p, g = C.get("convergence", loss, p_algo, depth), C.get("convergence", loss, g_algo, depth)
                if p is None or g is None:
                    parts.append(None)
                    continue
                r = float(p["seconds"].iloc[-1] / g["seconds"].iloc[-1])
                ratios.append((f"{loss} d{depth} {p_algo}/{g_algo}", r))
                if depth == 3:   # depth 15 ends with cheap single-leaf trees at the floor (see notes)
                    per_iter.append(float(np.median(np.diff(p["seconds"])) / np.median(np.diff(g["seconds"]))))
                parts.append(r <= CRITERIA["time_ratio"])
    if ratios:
        vals = np.array([r for _, r in ratios])
        worst = max(ratios, key=lambda x: x[1])
        notes.append(f"seconds at T, proximal / gradient: median {np.median(vals):.2f}, range "
                     f"{vals.min():.2f}–{vals.max():.2f} over {len(vals)} pairs (≤ {CRITERIA['time_ratio']} each); "
                     f"largest: {worst[0]} {worst[1]:.2f}")
        if per_iter:
            notes.append(f"(supplementary, less sensitive to load bursts: ratio of the median seconds per iteration "
                         f"at depth 3, median {np.median(per_iter):.2f}, range {min(per_iter):.2f}–{max(per_iter):.2f} "
                         f"over {len(per_iter)} pairs)")
        over = [f"{k} {r:.2f}" for k, r in ratios if r > CRITERIA["time_ratio"]]
        if over:
            notes.append("above the threshold: " + ", ".join(over))
    return parts, notes


def _claim7(C):
    g, p = C.get("intro", "lad", "gradient", 2), C.get("intro", "lad", "prox", 2)
    if g is None or p is None:
        return [None], ["intro runs missing"]
    dg, dp = _rdecrease_second_half(g["train_loss"]), _rdecrease_second_half(p["train_loss"])
    T = len(g) - 1
    parts = [dg < CRITERIA["stall_rdecrease"], dp >= CRITERIA["stall_rdecrease"],
             bool(p["train_loss"].iloc[-1] < g["train_loss"].iloc[-1])]
    notes = [f"{_mark(parts[0])} gradient levels off: train loss {_num(g['train_loss'].iloc[T // 2])} at t={T // 2} → "
             f"{_num(g['train_loss'].iloc[-1])} at t={T} ({dg:.2%} decrease; the paper reads ≈ 0.12)",
             f"{_mark(parts[1])} prox keeps decreasing: {_num(p['train_loss'].iloc[T // 2])} → "
             f"{_num(p['train_loss'].iloc[-1])} ({dp:.2%} decrease, ≥ {CRITERIA['stall_rdecrease']:.0%})",
             f"{_mark(parts[2])} final train loss prox {_num(p['train_loss'].iloc[-1])} < gradient "
             f"{_num(g['train_loss'].iloc[-1])}; test loss prox {_num(p['test_loss'].iloc[-1])}, gradient "
             f"{_num(g['test_loss'].iloc[-1])}"]
    return parts, notes


def _claim6(rows, info):
    parts, notes = [], []
    # (a) lad, pinball: prox beats gradient on every regression dataset
    for loss in ("lad", "pinball"):
        res = []
        for ds in REGRESSION_DATASETS:
            c = _paired(rows, ds, loss, "prox", "gradient") if ds in info else {"n": 0}
            if c["n"] == 0:
                parts.append(None)
                res.append(f"{ds} —")
                continue
            parts.append(c["beats"])
            res.append(f"{_mark(c['beats'])} {ds} {_num(c['median'], 3)} ({c['wins']}/{c['n']}, p={_p(c['p'])})")
        notes.append(f"{loss}, prox − gradient median (wins, p): " + "; ".join(res))
    # (b) hinge: prox or residual_prox beats gradient and residual_gradient
    res = []
    for ds in CLASSIFICATION_DATASETS:
        if ds not in info:
            parts.append(None)
            res.append(f"{ds} —")
            continue
        cs = {(a, b): _paired(rows, ds, "hinge", a, b) for a in ("prox", "residual_prox")
              for b in ("gradient", "residual_gradient")}
        if any(c["n"] == 0 for c in cs.values()):
            parts.append(None)
            res.append(f"{ds} incomplete")
            continue
        ok = any(cs[(a, "gradient")]["beats"] and cs[(a, "residual_gradient")]["beats"] for a in ("prox", "residual_prox"))
        parts.append(ok)
        res.append(f"{_mark(ok)} {ds} " + ", ".join(
            f"{SHORT[a]}−{SHORT[b]} {_num(c['median'], 3)} ({c['wins']}/{c['n']})" for (a, b), c in cs.items()))
    notes.append("hinge, medians (wins): " + "; ".join(res))
    # (c) accelerated_prox beats accelerated_gradient on loss (non-differentiable losses) and error (hinge)
    res, wins, n = [], 0, 0
    for ds, loss, metric in ([(d, l, "test_loss") for d in REGRESSION_DATASETS for l in ("lad", "pinball")] +
                             [(d, "hinge", m) for d in CLASSIFICATION_DATASETS for m in ("test_loss", "test_error")]):
        c = _paired(rows, ds, loss, "accelerated_prox", "accelerated_gradient", metric) if ds in info else {"n": 0}
        if c["n"] == 0:
            parts.append(None)
            continue
        parts.append(c["beats"])
        n += 1
        wins += bool(c["beats"])
        if not c["beats"]:
            res.append(f"{ds}/{loss}/{metric.replace('test_', '')} {_num(c['median'], 3)} ({c['wins']}/{c['n']})")
    notes.append(f"accelerated_prox beats accelerated_gradient in {wins}/{n} measured (dataset, loss, metric)"
                 + (f"; not in: {'; '.join(res)}" if res else ""))
    missing = [d for d in REGRESSION_DATASETS + CLASSIFICATION_DATASETS if d not in info]
    if missing:
        notes.append("datasets without stored rows: " + ", ".join(missing))
    return parts, notes


CLAIMS = {
    1: "With `ls`, `prox` and `gradient` training curves coincide; with `exponential` they nearly coincide.",
    2: "With `lad` and `hinge`, `prox` reaches a lower training loss than `gradient` at equal iterations; "
       "`gradient` with `hinge` stalls; the residual helps `gradient` converge; `residual_prox` behaves like `prox`.",
    3: "The larger λ, the faster the training loss decreases; the lowest test loss comes at intermediate λ (0.1–10).",
    4: "Accelerated variants decrease the losses fastest at first, then become unstable and diverge on training "
       "and test sets; `accelerated_prox` does better than `accelerated_gradient`.",
    5: "A proximal iteration costs no more wall-clock time than a subgradient one.",
    6: "Real-world: with `lad`/`pinball`, `prox` beats `gradient` on every regression dataset; with `hinge`, "
       "`prox` or `residual_prox` beats `gradient` and `residual_gradient`; `accelerated_prox` beats "
       "`accelerated_gradient` on loss and error.",
    7: "Introduction example: the subgradient method's training loss levels off (≈ 0.12) while the proximal one "
       "keeps decreasing.",
}
CLAIM_SOURCES = {1: "convergence", 2: "convergence", 3: "proximal_step", 4: "proximal_step",
                 5: "convergence_time", 6: "real-world rows", 7: "intro"}


def check_claims(curves: pd.DataFrame, rows: pd.DataFrame, info: dict) -> list[dict]:
    """One dict per claim of SPEC §7: ``id, claim, source, status, notes`` (list of strings)."""
    C = _Curves(curves)
    out = []
    for cid, fn in ((1, _claim1), (2, _claim2), (3, _claim3), (4, _claim4), (5, _claim5), (6, None), (7, _claim7)):
        parts, notes = _claim6(rows, info) if cid == 6 else fn(C)
        out.append({"id": cid, "claim": CLAIMS[cid], "source": CLAIM_SOURCES[cid], "status": _status(parts),
                    "notes": notes, "parts": parts})
    return out


def _synthetic_tables(curves: pd.DataFrame) -> list[str]:
    if curves is None or curves.empty:
        return ["_No synthetic curves stored._", ""]
    lines = []
    last = curves.sort_values("iteration").groupby(
        ["experiment", "dataset", "loss", "algo", "max_depth", curves["step"].fillna(-1.0)], sort=False).tail(1)
    for exp in ("intro", "convergence", "proximal_step"):
        g = last[last["experiment"] == exp]
        if g.empty:
            lines += [f"**{exp}**: no stored runs.", ""]
            continue
        first = g.iloc[0]
        lines += [f"**{exp}** (T = {int(first['n_estimators'])}, ν = {first['learning_rate']:g}, data seed "
                  f"{int(first['seed'])}, engine {first['engine']}, commit `{str(first['commit'])[:12]}{'-dirty' if str(first['commit']).endswith('-dirty') else ''}`)", "",
                  "| dataset | loss | algo | depth | λ | train loss at T | min test loss (t) | test loss at T | fit s |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for _, r in g.sort_values(["loss", "max_depth", "algo", "step"]).iterrows():
            run = curves[(curves["experiment"] == exp) & (curves["loss"] == r["loss"]) & (curves["algo"] == r["algo"])
                         & (curves["max_depth"] == r["max_depth"]) & (curves["step"].fillna(-1.0) == (r["step"] if np.isfinite(r["step"]) else -1.0))]
            imin = run["test_loss"].idxmin()
            lam = "—" if not np.isfinite(r["step"]) else f"{r['step']:g}"
            lines.append(f"| {r['dataset']} | {r['loss']} | {r['algo']} | {int(r['max_depth'])} | {lam} | "
                         f"{_num(r['train_loss'])} | {_num(run.loc[imin, 'test_loss'])} ({int(run.loc[imin, 'iteration'])}) | "
                         f"{_num(r['test_loss'])} | {r['seconds']:.2f} |")
        lines.append("")
    return lines


def build_summary(curves: pd.DataFrame, real: pd.DataFrame, results_dir="results") -> str:
    rows, info = select_real_rows(real)
    claims = check_claims(curves, rows, info)
    now = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    commits = set()
    if curves is not None and not curves.empty and "commit" in curves:
        commits |= set(curves["commit"].astype(str))
    if real is not None and not real.empty and "commit" in real:
        commits |= set(real["commit"].astype(str))
    commits = sorted(commits)
    L = ["# Results summary", "",
         f"Generated by `python -m proxboost.summary` from `{results_dir}/` ({now}); nothing is fitted here.",
         "Code versions (commit) found in the stored results: " + (", ".join(f"`{c}`" for c in commits) or "none") + ".",
         "λ is the per-sample proximal step (SPEC §2.1). Δ = value − value of `gradient` on the same split. "
         "\"A beats B\": the median of A − B over the paired splits is < 0 (SPEC §7); W/T/L = splits where A is "
         "lower / equal / higher; p = two-sided Wilcoxon signed-rank p-value (1 when every Δ is 0).", "",
         "## Claims of the paper (SPEC §7)", "",
         "Criteria fixed before the full runs (never adjusted to make a claim pass): "
         + "; ".join(f"{k} = {v}" for k, v in CRITERIA.items()) + ". "
         "Synthetic curves come from one data draw and one run per setting; wall-clock times were measured on a "
         "shared 2-core machine and are noisy.", "",
         "| # | claim | checked on | status | numbers |", "|---|---|---|---|---|"]
    for c in claims:
        L.append(f"| {c['id']} | {c['claim']} | {c['source']} | **{c['status']}** | " + "<br>".join(c["notes"]) + " |")
    L += ["", "Notes on reading the synthetic checks:",
          "- Depth-15 curves flatten at a floor (≈ 1e-8 for `lad`, `hinge`, `exponential`; ≈ 1e-15 for `ls`): "
          "scikit-learn's tree does not split a node whose target variance is at most machine epsilon "
          "(≈ 2.2e-16, i.e. targets of size ≈ 1e-8), so once the direction is that small every tree is a single "
          "leaf and the loss stops moving. Proximal directions shrink with the residual (u/λ) and reach the floor, "
          "the `lad`/`hinge` subgradients (±1) do not. Comparisons where both curves are below "
          f"{CRITERIA['floor']:g} × C(f_0) are not counted.",
          "- Wall-clock seconds are cumulative fit times (recording the losses excluded) of runs executed one at a "
          "time; other jobs may have shared the machine (each curve file records when and where it was made).", ""]
    L += ["## Real-world datasets (SPEC §5.4)", ""]
    if not info:
        L += ["_No real-world rows stored yet._", ""]
    L += real_world_tables(rows, info)
    L += engine_tables(real)
    L += ["## Synthetic experiments (SPEC §5.1–5.3)", ""]
    L += _synthetic_tables(curves)
    return "\n".join(L) + "\n"


def write_summary(results_dir="results", out=None) -> Path:
    from .curves import load_curves
    from .results import load

    curves = load_curves(results_dir)
    real = load(results_dir)
    text = build_summary(curves, real, results_dir)
    out = Path(out) if out else Path(results_dir) / "SUMMARY.md"
    with atomic_path(out) as tmp:
        tmp.write_text(text)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m proxboost.summary", description=__doc__.splitlines()[0])
    p.add_argument("--results", default="results", help="results directory (default: results)")
    p.add_argument("--out", default=None, help="output file (default: <results>/SUMMARY.md)")
    args = p.parse_args(argv)
    out = write_summary(args.results, args.out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
