"""Paired statistics of the real-world rows: protocol units, paired deltas, Wilcoxon, Holm,
Hodges–Lehmann, Nadeau–Bengio.

Methods are compared on the same splits (paired). The conventions are those of
``docs/claims.md`` (real data): "A better than B" is judged on d = value(A) − value(B) per split
with the two-sided Wilcoxon signed-rank test; W/T/L counts a tie when |d| ≤ 1e-12 × the median
|value of B|; the Hodges–Lehmann estimate and its exact 95 % interval measure equivalence; the
Nadeau–Bengio corrected resampled t-test is a secondary, more conservative p-value (the splits
overlap, so the Wilcoxon p-values are optimistic).

A *protocol unit* is a set of rows that may enter one verdict: one protocol (grid, splits,
T_max), one tree engine and one tie rule, plus the baselines (``engine = none``) of the same
protocol. Rows of two units are never combined (:func:`protocol_units`).

Methods that do not depend on the classification loss
(:data:`~proxboost.experiments.store.naming.LOSS_INDEPENDENT`) are fitted once per dataset and
split; inside a unit their rows are shown under every classification loss of the dataset
(:func:`share_loss_independent`). The column ``run_loss`` names the loss a row was run with, so a
shared row is used for pairing within a loss but never counted twice (a difference between two
losses skips it).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from proxboost.experiments.store.naming import (
    BENCHMARK_GRIDS,
    DEFAULT_TIE_RULE,
    ENGINE_PREFERENCE,
    LOSS_INDEPENDENT,
    PAPER_CLASSIFICATION_LOSSES,
    REFERENCE,
    tie_rule_of,
)

__all__ = [
    "ALPHA",
    "TIE_RTOL",
    "Comparison",
    "ProtocolUnit",
    "compare",
    "hodges_lehmann",
    "holm",
    "loss_differences",
    "nadeau_bengio_p",
    "paired_deltas",
    "paired_values",
    "protocol_units",
    "rows_per_dataset",
    "share_loss_independent",
    "shared_methods",
    "variant_differences",
    "wilcoxon_p",
]

ALPHA = 0.05
#: |d| ≤ TIE_RTOL × median |value of B| counts as a tie in W/T/L.
TIE_RTOL = 1e-12


# =====================================================================================
# protocol units
# =====================================================================================
@dataclass(frozen=True)
class ProtocolUnit:
    """Rows that may be judged together: one protocol, engine and tie rule (+ that protocol's
    baselines).
    """

    protocol: str
    engine: str
    tie_rule: str
    rows: pd.DataFrame

    @property
    def label(self) -> str:
        if self.engine == "none":
            return f"{self.protocol}, baselines only"
        tie = "" if self.tie_rule == DEFAULT_TIE_RULE else f", tie rule {self.tie_rule}"
        return f"{self.protocol}, {self.engine} trees{tie}"

    @property
    def datasets(self) -> tuple:
        return tuple(sorted(self.rows["dataset"].astype(str).unique()))

    def sort_key(self):
        """Preference among units with as many cells: paper protocols, then exact engines, then the
        default rule.
        """
        engine = (
            ENGINE_PREFERENCE.index(self.engine)
            if self.engine in ENGINE_PREFERENCE
            else len(ENGINE_PREFERENCE)
        )
        return (
            not self.protocol.startswith("paper"),
            engine,
            self.tie_rule != DEFAULT_TIE_RULE,
            self.protocol,
            self.engine,
            self.tie_rule,
        )


def _normalise(real: pd.DataFrame) -> pd.DataFrame:
    df = real.copy()
    df["engine"] = df["engine"].fillna("exact").astype(str) if "engine" in df else "exact"
    df["tie_rule"] = (
        [tie_rule_of(v) for v in df["tie_rule"]] if "tie_rule" in df else DEFAULT_TIE_RULE
    )
    for c in ("protocol", "dataset", "loss", "algo"):
        df[c] = df[c].astype(str)
    df["run_loss"] = df["run_loss"].astype(str) if "run_loss" in df else df["loss"]
    return df


def share_loss_independent(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` plus, for each loss-independent method, its rows repeated under the other
    classification losses of their dataset (one protocol unit's rows).

    A copy keeps ``run_loss`` (the loss it was run with) and the split, sets ``loss`` to the loss
    it is shown under and its loss values to NaN (the classifier's loss under another loss was
    never measured); its misclassification rate is that of the single fit. A method already
    stored under a loss for a split is not copied there (rows run once per loss stay as they are).
    """
    df = rows.copy()
    if "run_loss" not in df:
        df["run_loss"] = df["loss"]
    real = df[df["loss"] == df["run_loss"]]
    source = real[
        real["algo"].isin(LOSS_INDEPENDENT) & real["loss"].isin(PAPER_CLASSIFICATION_LOSSES)
    ]
    if source.empty:
        return df
    copies = []
    for ds, g in source.groupby("dataset", sort=True):
        mine = real[(real["dataset"] == ds) & real["loss"].isin(PAPER_CLASSIFICATION_LOSSES)]
        present = set(mine["loss"])
        have = set(zip(mine["algo"], mine["loss"], mine["split"]))
        # one source row per (method, split): the first loss in the paper's order
        order = {name: i for i, name in enumerate(PAPER_CLASSIFICATION_LOSSES)}
        g = (
            g.assign(_o=g["loss"].map(order))
            .sort_values(["algo", "split", "_o"])
            .drop_duplicates(["algo", "split"])
        )
        for loss in sorted(present, key=order.get):
            c = (
                g[[(a, loss, k) not in have for a, k in zip(g["algo"], g["split"])]]
                .drop(columns="_o")
                .copy()
            )
            if c.empty:
                continue
            c["loss"] = loss
            for col in ("test_loss", "val_loss"):
                if col in c:
                    c[col] = math.nan
            copies.append(c)
    if not copies:
        return df
    return pd.concat([df] + copies, ignore_index=True)


def shared_methods(rows: pd.DataFrame, dataset) -> list[str]:
    """Methods whose rows of ``dataset`` are shown under a loss they were not run with."""
    if "run_loss" not in rows:
        return []
    g = rows[(rows["dataset"] == dataset) & (rows["loss"] != rows["run_loss"])]
    return sorted(set(g["algo"]))


def protocol_units(real: pd.DataFrame) -> list[ProtocolUnit]:
    """Split stored rows into :class:`ProtocolUnit` s (sorted by preference); the rows of the
    quantile benchmark's protocols (:data:`BENCHMARK_GRIDS`) are left out.

    The baselines (``engine = none``) of a dataset are shared by every engine and tie rule of their
    protocol that has trees on that dataset; the baselines of datasets without any trees in the
    protocol form one more unit (engine ``none``, "baselines only"), so that a unit never judges
    another unit's baseline rows as its own. Duplicated keys keep the last row. Rows of
    loss-independent methods are shared between classification losses
    (:func:`share_loss_independent`).
    """
    if real is None or real.empty:
        return []
    df = _normalise(real)
    # the quantile benchmark's rows (its grids' protocols) are judged by its own report: some are
    # the paper protocol's computations stored again, and its 19 datasets would outnumber the
    # paper's cells and become a statement's headline
    df = df[~df["protocol"].str.split("/").str[0].isin(BENCHMARK_GRIDS)]
    units = []

    def unit(proto, engine, tie, rows):
        rows = rows.drop_duplicates(subset=["dataset", "loss", "algo", "split"], keep="last")
        return ProtocolUnit(
            str(proto), engine, tie, share_loss_independent(rows).reset_index(drop=True)
        )

    for proto, g in df.groupby("protocol", sort=True):
        base = g[g["engine"] == "none"]
        boost = g[g["engine"] != "none"]
        for engine, tie in sorted({(e, t) for e, t in zip(boost["engine"], boost["tie_rule"])}):
            part = boost[(boost["engine"] == engine) & (boost["tie_rule"] == tie)]
            units.append(
                unit(
                    proto,
                    engine,
                    tie,
                    pd.concat(
                        [part, base[base["dataset"].isin(set(part["dataset"]))]], ignore_index=True
                    ),
                )
            )
        alone = base[~base["dataset"].isin(set(boost["dataset"]))]
        if not alone.empty:
            units.append(unit(proto, "none", DEFAULT_TIE_RULE, alone))
    return sorted(units, key=ProtocolUnit.sort_key)


# =====================================================================================
# paired values
# =====================================================================================
def paired_values(rows, dataset, loss, algo_a, algo_b, metric="test_loss", loss_b=None):
    """Aligned arrays (a, b) of ``metric`` over the splits where both methods have a value.

    ``loss_b`` (default ``loss``) pairs the same method under two losses (hinge − exponential);
    rows shown under a loss they were not run with are then left out (they would pair a fit with
    itself).
    """
    g = rows[rows["dataset"] == dataset]
    if loss_b is not None and loss_b != loss and "run_loss" in g:
        g = g[g["loss"] == g["run_loss"]]
    a = g[(g["loss"] == loss) & (g["algo"] == algo_a)][["split", metric]].dropna()
    b = g[(g["loss"] == (loss_b or loss)) & (g["algo"] == algo_b)][["split", metric]].dropna()
    m = a.merge(b, on="split", suffixes=("_a", "_b")).sort_values("split")
    return m[f"{metric}_a"].to_numpy(float), m[f"{metric}_b"].to_numpy(float)


def paired_deltas(
    rows: pd.DataFrame, dataset, loss, metric="test_loss", reference=REFERENCE
) -> pd.DataFrame:
    """Δ = metric(method) − metric(reference) per split: columns ``algo, split, value, ref,
    delta``.
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


def loss_differences(
    rows, dataset, metric="test_error", loss_a="hinge", loss_b="exponential"
) -> pd.DataFrame:
    """Per method and split: ``metric`` under ``loss_a`` − under ``loss_b``; columns ``algo, split,
    delta``.

    Only rows run with their loss count: a loss-independent method (one fit shown under both
    losses) has no such difference."""
    g = rows[rows["dataset"] == dataset]
    if "run_loss" in g:
        g = g[g["loss"] == g["run_loss"]]
    a = g[g["loss"] == loss_a][["algo", "split", metric]].dropna()
    b = g[g["loss"] == loss_b][["algo", "split", metric]].dropna()
    m = a.merge(b, on=["algo", "split"], suffixes=("_a", "_b"))
    m["delta"] = m[f"{metric}_a"] - m[f"{metric}_b"]
    return m[["algo", "split", "delta"]]


def variant_differences(real: pd.DataFrame, column: str, a, b, metric="test_loss") -> pd.DataFrame:
    """Rows run twice, once with ``column = a`` and once with ``column = b`` (e.g. two engines or
    tie rules).

    Returns one row per (protocol, dataset, loss, algo, split) present under both, with
    ``value_a``, ``value_b``, ``delta = value_a − value_b`` and the fit seconds of both when stored.
    """
    if real is None or real.empty:
        return pd.DataFrame(
            columns=["protocol", "dataset", "loss", "algo", "split", "value_a", "value_b", "delta"]
        )
    df = _normalise(real)
    key = ["protocol", "dataset", "loss", "algo", "split"]
    other = [c for c in ("engine", "tie_rule") if c != column]
    cols = key + other + [metric] + (["fit_seconds"] if "fit_seconds" in df else [])
    sa = df[df[column] == a][cols].drop_duplicates(key + other, keep="last")
    sb = df[df[column] == b][cols].drop_duplicates(key + other, keep="last")
    m = sa.merge(sb, on=key + other, suffixes=("_a", "_b"))
    m = m.rename(columns={f"{metric}_a": "value_a", f"{metric}_b": "value_b"})
    m["delta"] = m["value_a"].astype(float) - m["value_b"].astype(float)
    return m.sort_values(key + other).reset_index(drop=True)


# =====================================================================================
# tests and estimates
# =====================================================================================
def wilcoxon_p(d) -> float:
    """Two-sided Wilcoxon signed-rank p-value of ``d`` (zeros dropped); 1 when every d = 0, NaN
    without data.
    """
    d = np.asarray(d, dtype=float)
    d = d[np.isfinite(d)]
    if d.size == 0:
        return math.nan
    if np.all(d == 0):
        return 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(stats.wilcoxon(d, zero_method="wilcox", alternative="two-sided").pvalue)


def holm(pvalues) -> np.ndarray:
    """Holm-adjusted p-values (step-down; NaNs stay NaN and do not count in the family)."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out[order] = adj
    return out


def _signed_rank_cdf(n: int) -> np.ndarray:
    """P(T+ ≤ k), k = 0..n(n+1)/2, of the signed-rank statistic of n non-zero untied values
    (exact).
    """
    M = n * (n + 1) // 2
    counts = np.zeros(M + 1)
    counts[0] = 1.0
    for r in range(1, n + 1):
        counts[r:] = counts[r:] + counts[:-r].copy()
    return np.cumsum(counts) / 2.0**n


def hodges_lehmann(d, alpha=ALPHA) -> tuple[float, float, float]:
    """(estimate, low, high): the Hodges–Lehmann estimate of the centre of ``d`` (median of the
    Walsh averages) and its 1 − alpha interval from the exact signed-rank distribution (normal
    approximation above 60 values). (NaN, NaN, NaN) without data; infinite ends when n is too
    small for the level."""
    d = np.asarray(d, dtype=float)
    d = d[np.isfinite(d)]
    n = d.size
    if n == 0:
        return math.nan, math.nan, math.nan
    i, j = np.triu_indices(n)
    walsh = np.sort((d[i] + d[j]) / 2.0)
    M = walsh.size
    est = float(np.median(walsh))
    if n <= 60:
        cdf = _signed_rank_cdf(n)
        # k = largest c >= 1 with P(T+ <= c - 1) <= alpha / 2
        ok = np.flatnonzero(cdf <= alpha / 2.0)
        if ok.size == 0:
            return est, -math.inf, math.inf
        k = int(ok[-1]) + 1
    else:
        z = stats.norm.ppf(1 - alpha / 2.0)
        k = int(math.floor(M / 2.0 - z * math.sqrt(n * (n + 1) * (2 * n + 1) / 24.0)))
        if k < 1:
            return est, -math.inf, math.inf
    return est, float(walsh[k - 1]), float(walsh[M - k])


def nadeau_bengio_p(d, test_train_ratio) -> float:
    """Two-sided p-value of the corrected resampled t-test (Nadeau & Bengio, 2003).

    t = mean(d) / sqrt((1/J + n_test/n_train) · var(d)), J − 1 degrees of freedom; the second
    term accounts for the overlap of the J training sets. NaN with fewer than 2 values; 1 when
    every d is equal to 0.
    """
    d = np.asarray(d, dtype=float)
    d = d[np.isfinite(d)]
    J = d.size
    if J < 2:
        return math.nan
    var = float(np.var(d, ddof=1))
    mean = float(np.mean(d))
    if var == 0.0:
        return 1.0 if mean == 0.0 else 0.0
    t = mean / math.sqrt((1.0 / J + float(test_train_ratio)) * var)
    return float(2.0 * stats.t.sf(abs(t), J - 1))


@dataclass(frozen=True)
class Comparison:
    """Paired comparison of A and B on the same splits (d = A − B)."""

    n: int
    median: float
    wins: int  # A lower
    ties: int
    losses: int  # A higher
    p: float  # two-sided Wilcoxon
    p_nb: float  # Nadeau–Bengio corrected resampled t-test
    hl: float  # Hodges–Lehmann estimate and 95 % interval
    hl_low: float
    hl_high: float
    scale: float  # median |B|: the scale of relative margins and of the tie tolerance

    def verdict(self, p=None, alpha=ALPHA) -> str:
        """ "A better than B": confirmed / contradicted / inconclusive (``p`` overrides, e.g.
        Holm-adjusted).
        """
        p = self.p if p is None else p
        if self.n == 0 or not np.isfinite(p) or p >= alpha or self.median == 0:
            return "inconclusive"
        return "confirmed" if self.median < 0 else "contradicted"

    def text(self, p=None, corrected=False) -> str:
        """The comparison in words; ``p`` is the Holm-adjusted p-value that decided, of the
        Wilcoxon test or (``corrected``) of the Nadeau–Bengio test."""
        s = (
            f"median Δ {format_number(self.median)}, W/T/L {self.wins}/{self.ties}/{self.losses}, p"
            f" {format_p(self.p)}"
        )
        if corrected:
            s += f", NB p {format_p(self.p_nb)}"
            return s + (f", Holm NB p {format_p(p)}" if p is not None else "")
        if p is not None:
            s += f", Holm p {format_p(p)}"
        return s + f", NB p {format_p(self.p_nb)}"


def compare(a, b, test_train_ratio=1.0 / 3.0) -> Comparison:
    """Paired comparison of arrays ``a`` and ``b`` (same splits, same order).

    ``test_train_ratio`` = n_test / n_train of the fitted models, for the Nadeau–Bengio test
    (1/3 in the 50/25/25 protocol, whose final model is refitted on train ∪ validation).
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    ok = np.isfinite(a) & np.isfinite(b)
    a, b = a[ok], b[ok]
    d = a - b
    if d.size == 0:
        nan = math.nan
        return Comparison(0, nan, 0, 0, 0, nan, nan, nan, nan, nan, nan)
    scale = float(np.median(np.abs(b)))
    tie = np.abs(d) <= TIE_RTOL * scale
    hl, lo, hi = hodges_lehmann(d)
    return Comparison(
        int(d.size),
        float(np.median(d)),
        int(((d < 0) & ~tie).sum()),
        int(tie.sum()),
        int(((d > 0) & ~tie).sum()),
        wilcoxon_p(d),
        nadeau_bengio_p(d, test_train_ratio),
        hl,
        lo,
        hi,
        scale,
    )


def format_number(x, digits=4) -> str:
    """A number for the tables: ``digits`` significant digits, scientific outside [1e-3, 1e4);
    "—" for a missing value (None, NaN), "∞" / "−∞" for an infinite one."""
    if x is None or not np.isfinite(x):
        return "—" if x is None or np.isnan(x) else ("∞" if x > 0 else "−∞")
    x = float(x)
    if x == 0:
        return "0"
    if abs(x) >= 1e4 or abs(x) < 1e-3:
        return f"{x:.{digits - 1}e}"
    return f"{x:.{digits}g}"


def format_p(p) -> str:
    """A p-value for the tables (two significant digits; "—" when missing)."""
    return "—" if p is None or not np.isfinite(p) else f"{p:.2g}"


def rows_per_dataset(real: pd.DataFrame, datasets=None):
    """For each dataset, the rows of one protocol unit: ``(rows, info)``.

    The unit with the most methods for the dataset (then the most rows, then the preferred one)
    is used; ``info[dataset] = {"protocol": unit label, "n_splits", "other_protocols": [labels]}``.
    """
    units = protocol_units(real)
    kept, info = [], {}
    for ds in sorted({d for u in units for d in u.datasets}):
        if datasets is not None and ds not in datasets:
            continue
        cands = []
        for rank, u in enumerate(units):
            r = u.rows[u.rows["dataset"] == ds]
            if not r.empty:
                cands.append((-r["algo"].nunique(), -len(r), rank, u, r))
        cands.sort(key=lambda c: c[:3])
        _, _, _, unit, rows = cands[0]
        kept.append(rows)
        info[ds] = {
            "protocol": unit.label,
            "n_splits": int(rows["split"].nunique()),
            "other_protocols": [c[3].label for c in cands[1:]],
        }
    if not kept:
        return pd.DataFrame(columns=getattr(real, "columns", [])), {}
    return pd.concat(kept, ignore_index=True), info
