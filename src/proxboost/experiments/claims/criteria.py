"""Curve criteria and verdict rules of ``docs/claims.md``: the named thresholds (each defined once
here), the three verdicts, the numerical floor, the levels rule, "mixed up", linear convergence,
identical curves, the readings of a statement's scope, and the rules that combine cells and runs
into one verdict."""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import stats

CONFIRMED, CONTRADICTED, INCONCLUSIVE = "confirmed", "contradicted", "inconclusive"
CLAIMS_COLUMNS = ("id", "scope", "verdict", "numbers", "protocol", "n_support", "criteria_sha")
SCOPE_KEYS = (
    "test",
    "reading",
    "loss",
    "dataset",
    "depth",
    "lambda",
    "methods",
    "metric",
    "tie_rule",
    "seed",
)
CRITERIA_FILE = Path("docs") / "claims.md"
# docs/claims.md, real data: the test of "A better than B" in the headline verdicts, and the test of
# the second reading of every real-world statement (the splits overlap, so Wilcoxon is optimistic)
WILCOXON, CORRECTED_T = "Wilcoxon", "corrected t-test"
TESTS = (WILCOXON, CORRECTED_T)
# docs/claims.md, how the criteria came about: the criteria were first committed after the first
# results had been stored and read; the summary dates the stored results against that commit
CRITERIA_FIRST_COMMIT, CRITERIA_FIRST_WRITTEN = "02d9bd1c", "2026-11-26T03:03:04+00:00"
FIRST_RESULTS_COMMIT, FIRST_RESULTS_STORED = "7f1fb207", "2026-11-25T22:58:47+00:00"

# thresholds of docs/claims.md (the table there is the reference; these are its numbers)
FLOOR_LEVEL = 1e-6  # floor: C(t) <= 1e-6 C(f_0) ...
FLOOR_STEP = 1e-10  # ... and |C(t+j) - C(t)| <= 1e-10 C(f_0) for j = 1..50
FLOOR_WINDOW = 50
FASTER, SIMILAR_HI = 0.8, 1.25
MIXED_OK, MIXED_BAD = 0.1, 0.3
# docs/claims.md, "Runs and aggregation": share of the runs that must agree for a verdict over runs
RUNS_AGREE = 0.8
# docs/claims.md, 7c: share of the seeds with P below G to confirm (at most SEEDS_FEW to contradict)
SEEDS_MOST, SEEDS_FEW = 0.8, 0.2
# docs/claims.md, 3a and 3b: Spearman rank correlation of (λ, time) needed to confirm
RANK_DECREASING = -0.9
# docs/claims.md, 3b: the test loss has converged once within 1 % of its minimum
TEST_MIN_WITHIN = 1.01
# docs/claims.md, 4c: a minimal test loss is lower than another's when below 0.99 times it
LOWER_BY = 0.99
FIT_START, FIT_MIN_POINTS = 50, 50


# =====================================================================================
# verdict helpers
# =====================================================================================
@dataclass(frozen=True)
class Same:
    """Two compared training curves that are bit-identical over every iteration the cell's
    criterion reads (docs/claims.md, identical curves): ``pair`` names them ("P and G"), ``until``
    is the first iteration where they differ (None: identical throughout)."""

    pair: str
    until: int | None


@dataclass(frozen=True)
class Cell:
    """One judged cell: its verdict, the numbers that decided it, its support, and the compared
    pairs whose curves are identical wherever the criterion looked (:class:`Same`)."""

    verdict: str
    numbers: str
    n_support: int = 1
    same: tuple[Same, ...] = ()


@dataclass(frozen=True)
class Reading:
    """One reading of a statement whose sentence leaves its scope open (docs/claims.md, scopes).

    ``keep`` = ((scope key, allowed values), …): a cell is judged under this reading when each of
    these keys that its scope carries has an allowed value (a key the cell does not carry does not
    narrow it). Calling the reading with a cell's keys (``reading(loss="hinge", …)``) or
    :meth:`admits` with its scope string says whether the cell is kept.

    ``test``: the paired test a real-world judge reads its p-values from (:meth:`p`):
    :data:`WILCOXON` (the headline) or :data:`CORRECTED_T`, the Nadeau–Bengio corrected resampled
    t-test of the second reading (:meth:`corrected`; docs/claims.md, real data).
    """

    name: str
    keep: tuple[tuple[str, tuple[str, ...]], ...]
    why: str
    test: str = WILCOXON

    def __post_init__(self):
        if not self.name or set(self.name) & set(";="):
            raise ValueError(f"reading name {self.name!r} must be non-empty without ';' or '='")
        unknown = {k for k, _ in self.keep} - set(SCOPE_KEYS)
        if unknown:
            raise ValueError(f"reading keys {sorted(unknown)} are not among {SCOPE_KEYS}")
        if self.test not in TESTS:
            raise ValueError(f"reading test {self.test!r} is not among {TESTS}")

    @property
    def is_corrected(self) -> bool:
        return self.test == CORRECTED_T

    def corrected(self) -> Reading:
        """The same cells judged with the corrected resampled t-test in place of Wilcoxon."""
        return Reading(self.name, self.keep, self.why, CORRECTED_T)

    def p(self, comparison) -> float:
        """The p-value this reading's test gives a paired comparison (``Comparison.p`` or
        ``Comparison.p_nb``)."""
        return comparison.p_nb if self.is_corrected else comparison.p

    def __call__(self, **keys) -> bool:
        return self._admits({k: _fmt_key(v) for k, v in keys.items() if v is not None})

    def admits(self, cell_scope: str) -> bool:
        """Whether the cell with scope ``key=value;…`` (or ``all``) is judged under this reading."""
        parts = [] if cell_scope == "all" else cell_scope.split(";")
        return self._admits(dict(p.split("=", 1) for p in parts))

    def _admits(self, keys: dict) -> bool:
        return all(keys[k] in allowed for k, allowed in self.keep if k in keys)


def reading(name, why, **keep) -> Reading:
    """A :class:`Reading` from ``key=(allowed values, …)`` keywords (values as :func:`scope` writes
    them; ``**{"lambda": (…)}`` for λ)."""
    return Reading(name, tuple((k, tuple(_fmt_key(v) for v in vs)) for k, vs in keep.items()), why)


#: the reading of a statement whose sentence leaves no scope open: every judged cell
EVERY_CELL = Reading("every cell", (), "the statement's whole scope")


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
    if n and c >= RUNS_AGREE * n and x == 0:
        return CONFIRMED, text
    if n and x >= RUNS_AGREE * n and c == 0:
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


def first_reach(values, xs, level) -> float:
    """The first ``xs`` at which ``values`` is at most ``level`` (inf when never)."""
    hit = np.flatnonzero(values <= level)
    return float(xs[hit[0]]) if hit.size else math.inf


LEVEL_MIN = 1e-12  # levels stop at 1e-12 C(f_0) (a loss reaching exactly 0 has its floor at 0)


def kept_levels(c0, floors, reach_min) -> list[float]:
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


def _level_times(a: Curve, b: Curve, x) -> tuple[np.ndarray, np.ndarray]:
    """t_A(L) and t_B(L) (iterations or seconds) at the compared levels: kept, and reached by at
    least one of the two curves."""
    xa = np.arange(a.T + 1, dtype=float) if x == "iteration" else a.seconds
    xb = np.arange(b.T + 1, dtype=float) if x == "iteration" else b.seconds
    levels = kept_levels(a.c0, (a.floor_level, b.floor_level), min(a.train.min(), b.train.min()))
    ta = np.array([first_reach(a.train, xa, L) for L in levels])
    tb = np.array([first_reach(b.train, xb, L) for L in levels])
    keep = np.isfinite(ta) | np.isfinite(tb)
    return ta[keep], tb[keep]


def levels_rule(a: Curve, b: Curve, x="iteration") -> tuple[str, str]:
    """Compare how fast two training curves reach the levels: returns (outcome, numbers).

    outcome: ``a faster`` | ``b faster`` | ``similar`` | ``mixed`` | ``unmeasurable`` (fewer
    than two compared levels above both floors). ``x`` = ``iteration`` or ``seconds``.
    """
    ta, tb = _level_times(a, b, x)
    n = ta.size
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(np.isfinite(tb), ta / tb, np.where(np.isfinite(ta), 0.0, np.nan))
    unit = "" if x == "iteration" else " s"
    shown = ", ".join(f"{fmt_g(u)}/{fmt_g(v)}" for u, v in zip(ta[:6], tb[:6])) + (
        " …" if n > 6 else ""
    )
    numbers = f"{n} levels down to {fmt_g(10 ** (-n / 2))}·C0, t{unit} {shown}"
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


def first_difference(x, y) -> int | None:
    """First index at which ``x`` and ``y`` differ bit for bit, over their common length (None when
    they never do)."""
    n = min(len(x), len(y))
    differ = np.flatnonzero(np.asarray(x[:n]) != np.asarray(y[:n]))
    return int(differ[0]) if differ.size else None


def same_through(a: Curve, b: Curve, last, pair) -> tuple[Same, ...]:
    """``(Same(pair, t_diff),)`` when the training curves of ``a`` and ``b`` are identical at every
    t ≤ ``last`` (the last iteration a criterion reads), else ``()``."""
    until = first_difference(a.train, b.train)
    return (Same(pair, until),) if until is None or until > last else ()


def same_over_levels(a: Curve, b: Curve, pair) -> tuple[Same, ...]:
    """:func:`same_through` over the iterations the levels rule reads: every compared level is
    reached by both curves before they differ, so every ratio t_A/t_B is exactly 1 (fewer than two
    compared levels: nothing to report)."""
    ta, tb = _level_times(a, b, "iteration")
    both = np.concatenate([ta, tb])
    if ta.size < 2 or not np.isfinite(both).all():
        return ()
    return same_through(a, b, float(both.max()), pair)


def same_over_window(a: Curve, b: Curve, pair) -> tuple[Same, ...]:
    """:func:`same_through` over the window of "mixed up" and of 1a: 1 ≤ t < the first floor of the
    two curves."""
    end = min(a.end, b.end)
    return same_through(a, b, end - 1, pair) if end > 1 else ()


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
    """max_t |C_a(t) - C_b(t)| / C_b(t) over the iterations above both floors (nan when none)."""
    end = min(a.end, b.end)
    ya, yb = a.train[1:end], b.train[1:end]
    ok = yb > 0
    return float(np.max(np.abs(ya[ok] - yb[ok]) / yb[ok])) if ok.any() else math.nan


def rise(values, c0) -> float:
    """C(T) / max(min_t C(t), 1e-6·C(f_0)): how far a curve ends above its minimum."""
    v = np.asarray(values, float)
    return float(v[-1] / max(v.min(), FLOOR_LEVEL * c0))


def spearman(x, y) -> float:
    """Spearman's rank correlation of ``x`` and ``y`` (ties averaged)."""
    if np.all(y == y[0]):
        return 0.0
    return float(stats.spearmanr(x, y).statistic)


def fmt_g(v) -> str:
    """A number as the ``numbers`` column shows it (integers without a decimal point)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if math.isinf(v):
        return "∞"
    if v == int(v) and abs(v) < 1e6:
        return str(int(v))
    return f"{v:.3g}"


def seed_share_rule(verdicts) -> tuple[str, str]:
    """7c: P below G on ≥ 80 % of the seeds → confirmed; on ≤ 20 % → contradicted."""
    n, c = len(verdicts), list(verdicts).count(CONFIRMED)
    text = f"P below G on {c} of {n} runs"
    if n and c >= SEEDS_MOST * n:
        return CONFIRMED, text
    if n and c <= SEEDS_FEW * n:
        return CONTRADICTED, text
    return INCONCLUSIVE, text


def criteria_sha(root=None) -> str:
    """sha256 of ``docs/claims.md`` (searched from ``root``, the repository of this package, then
    the cwd).
    """
    candidates = [Path(root) / CRITERIA_FILE] if root else []
    candidates += [Path(__file__).resolve().parents[4] / CRITERIA_FILE, Path.cwd() / CRITERIA_FILE]
    for path in candidates:
        if path.is_file():
            return hashlib.sha256(path.read_bytes()).hexdigest()
    return "unknown"


def claims_row(sid, sc, verdict, numbers, protocol, n_support) -> dict:
    """One row of ``claims.csv`` (without ``criteria_sha``, added once for all rows)."""
    return {
        "id": sid,
        "scope": sc,
        "verdict": verdict,
        "numbers": numbers,
        "protocol": protocol,
        "n_support": int(n_support),
    }
