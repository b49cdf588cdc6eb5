"""The tie rules and the weighted line searches of ``lad``, ``pinball`` and ``hinge``, against a
brute force that decides optimality in exact arithmetic.

Data are integers (targets, predictions, weights) and tau a fraction, so every leaf objective
is evaluated exactly with ``fractions.Fraction`` at every breakpoint of the leaf's rows of
positive weight: the optimal breakpoints, the interval of minimisers (unbounded when the
objective at a point beyond the extreme breakpoints equals the minimum) and each rule's choice
follow from the definitions:

* ``midpoint``: 0 if 0 is a minimiser, else the midpoint of the interval, else its finite end;
* ``authors``: with g the tree's fitted leaf value, among the optimal breakpoints the one with
  the smallest multiplier c / g; 0 when g = 0.

Breakpoints, midpoints of integers and the chosen breakpoints are exact in floating point, so
the line searches must return exactly the brute force's value.
"""

import zlib
from fractions import Fraction

import numpy as np
import pytest

from proxboost.losses import make_loss

TAUS = [Fraction(1, 2), Fraction(1, 4), Fraction(3, 10), Fraction(9, 10)]


def _objective(name, tau, y, z, w, c):
    """Exact sum_i w_i l(y_i, z_i + c) over Fractions."""
    total = Fraction(0)
    for yi, zi, wi in zip(y, z, w):
        if name == "hinge":
            total += wi * max(Fraction(0), 1 - yi * (zi + c))
        else:
            u = yi - zi - c
            total += wi * (tau * u if u >= 0 else (tau - 1) * u)
    return total


def _brute_force(name, tau, y, z, w, g, rule):
    """The leaf value chosen by ``rule``, decided exactly (module docstring)."""
    y = [Fraction(int(v)) for v in y]
    z = [Fraction(int(v)) for v in z]
    w = [Fraction(int(v)) for v in w]
    keep = [i for i in range(len(y)) if w[i] > 0]
    if not keep:
        return 0.0
    y, z, w = [y[i] for i in keep], [z[i] for i in keep], [w[i] for i in keep]
    breakpoints = sorted({yi - zi for yi, zi in zip(y, z)})
    values = {b: _objective(name, tau, y, z, w, b) for b in breakpoints}
    best = min(values.values())
    optimal = [b for b in breakpoints if values[b] == best]
    lo = -np.inf if _objective(name, tau, y, z, w, breakpoints[0] - 1) == best else optimal[0]
    hi = np.inf if _objective(name, tau, y, z, w, breakpoints[-1] + 1) == best else optimal[-1]
    if rule == "authors":
        if g == 0:
            return 0.0
        return float(min(optimal, key=lambda b: b / Fraction(g)))
    if _objective(name, tau, y, z, w, Fraction(0)) == best:
        return 0.0
    if np.isfinite(float(lo)) and np.isfinite(float(hi)):
        return float((lo + hi) / 2)
    return float(lo if np.isfinite(float(lo)) else hi)


def _leaf(rng, kind, m, name):
    """One leaf of m rows: y, z (integers) and integer weights of the given kind."""
    if name == "hinge":
        y = {"pure_pos": np.ones(m), "pure_neg": -np.ones(m)}.get(
            kind, rng.choice([-1.0, 1.0], size=m)
        )
        if kind == "balanced":
            y = np.repeat([1.0, -1.0], [m // 2, m - m // 2])
        z = rng.integers(-3, 4, size=m).astype(float)
    else:
        y = rng.integers(-4, 5, size=m).astype(float)
        z = rng.integers(-2, 3, size=m).astype(float)
        if kind == "distinct":
            y = rng.permutation(np.arange(m, dtype=float) * 3 - m)
    if kind in ("weighted", "zeros"):
        w = rng.integers(0 if kind == "zeros" else 1, 4, size=m).astype(float)
        if kind == "zeros" and not w.any():
            w[0] = 1.0
    else:
        w = np.ones(m)
    return y, z, w


KINDS = {
    "regression": ["distinct", "duplicates", "weighted", "zeros"],
    "hinge": ["mixed", "balanced", "pure_pos", "pure_neg", "weighted", "zeros"],
}
SIZES = [1, 2, 3, 4, 5, 6, 7, 10, 11, 20]  # odd and even; tau m integer for some, not others


def _cases(name, seed):
    rng = np.random.default_rng(seed)
    ys, zs, ws, ids, gs = [], [], [], [], []
    for kind in KINDS["hinge" if name == "hinge" else "regression"]:
        for m in SIZES:
            for g in (1.5, -0.5, 0.0):  # g > 0, g < 0, g = 0
                y, z, w = _leaf(rng, kind, m, name)
                ids.append(np.full(m, len(gs)))
                ys.append(y)
                zs.append(z)
                ws.append(w)
                gs.append(g)
    y, z, w, ids = map(np.concatenate, (ys, zs, ws, ids))
    perm = rng.permutation(len(y))  # leaves interleaved
    return y[perm], z[perm], w[perm], ids[perm], np.array(gs)


def _seed(*key):
    return zlib.crc32(repr(key).encode())


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("rule", ["midpoint", "authors"])
@pytest.mark.parametrize(
    "name,tau",
    [("lad", Fraction(1, 2)), ("hinge", Fraction(1, 2))]
    + [("pinball", t) for t in TAUS if t != Fraction(1, 2)],
)
@pytest.mark.grid
def test_line_search_against_exact_brute_force(name, tau, rule, weighted):
    y, z, w, ids, g = _cases(name, _seed(name, tau, rule, weighted))
    if not weighted:
        w = np.ones_like(w)
    n_leaves = len(g) + 2  # two trailing empty leaves: 0
    loss = make_loss(name, tau=float(tau)) if name == "pinball" else make_loss(name)
    c = loss.line_search(
        y, z, ids, n_leaves, w if weighted else None, rule, np.append(g, [1.0, -1.0])
    )
    assert c[-2:].tolist() == [0.0, 0.0]
    for leaf in range(len(g)):
        m = ids == leaf
        expected = _brute_force(name, tau, y[m], z[m], w[m], g[leaf], rule)
        assert c[leaf] == expected, (
            name,
            float(tau),
            rule,
            leaf,
            y[m],
            z[m],
            w[m],
            g[leaf],
            c[leaf],
            expected,
        )


@pytest.mark.parametrize("name,tau", [("lad", 0.5), ("pinball", 0.3), ("hinge", 0.5)])
def test_authors_rule_by_hand(name, tau):
    loss = make_loss(name, tau=tau) if name == "pinball" else make_loss(name)
    if name == "hinge":
        # leaf 0: y = (+1, -1), z = 0: breakpoints {1, -1}, minimisers [-1, 1]; leaf 1 pure +1:
        # breakpoints 1 - z = {1, 3}, minimisers [3, inf)
        y = np.array([1.0, -1.0, 1.0, 1.0])
        z = np.array([0.0, 0.0, 0.0, -2.0])
        ids = np.array([0, 0, 1, 1])
        np.testing.assert_array_equal(
            loss.line_search(y, z, ids, 2, None, "authors", [2.0, 2.0]), [-1.0, 3.0]
        )
        np.testing.assert_array_equal(
            loss.line_search(y, z, ids, 2, None, "authors", [-2.0, -2.0]), [1.0, 3.0]
        )
        np.testing.assert_array_equal(
            loss.line_search(y, z, ids, 2, None, "midpoint", [-2.0, -2.0]), [0.0, 3.0]
        )
        return
    # u = (1, 3, 6, 8): lad minimisers [3, 6]; pinball 0.3: 0.3 * 4 = 1.2 -> the 2nd value, 3
    u = np.array([8.0, 1.0, 6.0, 3.0])
    lo, hi = (3.0, 6.0) if name == "lad" else (3.0, 3.0)
    ids = np.zeros(4, dtype=int)
    assert loss.line_search(u, np.zeros(4), ids, 1, None, "authors", [0.7]).tolist() == [lo]
    assert loss.line_search(u, np.zeros(4), ids, 1, None, "authors", [-0.7]).tolist() == [hi]
    assert loss.line_search(u, np.zeros(4), ids, 1, None, "authors", [0.0]).tolist() == [0.0]
    # 0 is not a candidate: u = (-1, 2) has minimisers [-1, 2] containing 0
    c = loss.line_search(
        np.array([-1.0, 2.0]), np.zeros(2), np.zeros(2, int), 1, None, "authors", [1.0]
    )
    assert c.tolist() == ([-1.0] if name == "lad" else [-1.0])


def test_weighted_tie_uses_cumulative_weight():
    """pinball tau = 0.25 with weights (1, 3) on u = (0.5, 4): tau W = 1 equals the weight of the
    first value, so the minimisers are [0.5, 4] (midpoint 2.25); weights (2, 3): unique 0.5."""
    loss = make_loss("pinball", tau=0.25)
    u, ids = np.array([0.5, 4.0]), np.zeros(2, dtype=int)
    assert loss.line_search(u, np.zeros(2), ids, 1, np.array([1.0, 3.0])).tolist() == [2.25]
    assert loss.line_search(u, np.zeros(2), ids, 1, np.array([2.0, 3.0])).tolist() == [0.5]
    # tau W within 1e-9 W of a cumulative weight still counts as equal (0.1 * 30 =
    # 3.0000000000000004)
    loss = make_loss("pinball", tau=0.1)
    u = np.arange(1.0, 31.0)
    c = loss.line_search(u, np.zeros(30), np.zeros(30, int), 1, np.ones(30))
    assert c.tolist() == [3.5]


def test_authors_rule_needs_leaf_values():
    with pytest.raises(ValueError, match="leaf_values"):
        make_loss("lad").line_search(np.ones(3), np.zeros(3), np.zeros(3, int), 1, None, "authors")
    with pytest.raises(ValueError, match="tie_rule='lowest'"):
        make_loss("lad").line_search(np.ones(3), np.zeros(3), np.zeros(3, int), 1, None, "lowest")


def _sorted_pick(b, wl, target, rule, g):
    """The rules by sorting: smallest value v with cumulative weight >= target, the next larger
    value when the cumulative weight at v equals the target (to 1e-9 W)."""
    order = np.argsort(b, kind="stable")
    b, cum = b[order], np.cumsum(wl[order])
    tol = 1e-9 * cum[-1]
    if target <= tol:
        lo, hi = -np.inf, b[0]
    else:
        k = np.searchsorted(cum, target - tol)
        lo = b[k]
        last = np.searchsorted(b, lo, side="right") - 1  # the last copy of v
        hi = lo if abs(cum[last] - target) > tol else (b[last + 1] if last + 1 < len(b) else np.inf)
    if rule == "authors":
        return (
            0.0
            if g == 0
            else ((lo if np.isfinite(lo) else hi) if g > 0 else (hi if np.isfinite(hi) else lo))
        )
    if lo <= 0 <= hi:
        return 0.0
    return (
        0.5 * (lo + hi) if np.isfinite(lo) and np.isfinite(hi) else (lo if np.isfinite(lo) else hi)
    )


@pytest.mark.slow
@pytest.mark.parametrize("rule", ["midpoint", "authors"])
@pytest.mark.parametrize("integer", [False, True], ids=["continuous", "integer"])
@pytest.mark.parametrize("name,tau", [("lad", 0.5), ("pinball", 0.3), ("hinge", 0.5)])
def test_large_weighted_leaves_against_sorting(name, tau, integer, rule):
    """Leaves of 2 to 200,000 rows (the sample-select and quickselect paths), weights with zeros
    (continuous, or integers on integer data: many exact ties): the weighted kernel equals a
    sort-and-cumsum implementation."""
    rng = np.random.default_rng(_seed("large", name, integer))
    n, n_leaves = 400_000, 6
    ids = rng.integers(1, n_leaves, size=n)
    ids[rng.random(n) < 0.5] = 0  # one big leaf
    ids[ids == n_leaves - 1] = 1
    ids[:3] = n_leaves - 1  # and a tiny one
    y = rng.choice([-1.0, 1.0], size=n) if name == "hinge" else rng.normal(size=n)
    z = rng.normal(size=n)
    w = rng.exponential(size=n) * (rng.random(n) < 0.9)
    if integer:
        y = y if name == "hinge" else rng.integers(-50, 50, size=n).astype(float)
        z = rng.integers(-20, 20, size=n).astype(float)
        w = rng.integers(0, 4, size=n).astype(float)
    g = rng.choice([-1.0, 1.0], size=n_leaves)
    loss = make_loss(name, tau=tau) if name == "pinball" else make_loss(name)
    c = loss.line_search(y, z, ids, n_leaves, w, rule, g)
    for leaf in range(n_leaves):
        m = (ids == leaf) & (w > 0)
        if not m.any():
            assert c[leaf] == 0.0
            continue
        b, wl = y[m] - z[m], w[m]
        target = np.sum(wl[y[m] > 0]) if name == "hinge" else tau * np.sum(wl)
        assert c[leaf] == _sorted_pick(b, wl, target, rule, g[leaf]), (leaf, m.sum())


def test_a_reused_scratch_gives_a_fresh_ones_intervals():
    """The compiled loop keeps one ``LeafScratch`` for a whole fit (``leaf_intervals_in``): after
    calls on other rows, other leaf counts, levels and hinge signs, left dirty on purpose, each
    call gives the intervals and counts of a call with a scratch of its own, bit for bit (also
    when the caller gives the leaf counts, as the loop does: the same grouping); and
    the loop's leaf means in its scratch are ``losses.leaf_means``."""
    from proxboost._compiled_loop import leaf_means_in, leaf_work
    from proxboost._leafops import _leaf_intervals, leaf_intervals_in, leaf_scratch
    from proxboost.losses import leaf_means

    rng = np.random.RandomState(3)
    n_max, leaves_max = 3000, 40
    work = leaf_scratch(n_max, leaves_max)
    for name in work._fields:
        getattr(work, name)[:] = 7  # dirty: whatever a previous fit left
    means = leaf_work(n_max, leaves_max)
    for trial in range(60):
        n = rng.randint(1, n_max + 1)
        n_leaves = rng.randint(1, leaves_max + 1)
        values = np.round(rng.normal(size=n), 1 if trial % 2 else 8)  # ties on odd trials
        leaf_ids = rng.randint(0, n_leaves, size=n)  # some leaves may be empty
        signs = np.sign(rng.normal(size=n)) if trial % 3 == 0 else np.empty(0)
        tau = rng.uniform(0.01, 0.99)
        leaf_intervals_in(values, leaf_ids, n_leaves, tau, signs, work, False)
        los, his, counts = _leaf_intervals(values, leaf_ids, n_leaves, tau, signs)
        np.testing.assert_array_equal(work.los[:n_leaves], los)
        np.testing.assert_array_equal(work.his[:n_leaves], his)
        np.testing.assert_array_equal(work.counts[:n_leaves], counts)
        if not signs.size:  # the counts given (the compiled loop's leaf weights): the same
            grouped = work.grouped[:n].copy()
            work.grouped[:] = 7
            work.counts[:n_leaves] = np.bincount(leaf_ids, minlength=n_leaves)
            leaf_intervals_in(values, leaf_ids, n_leaves, tau, signs, work, True)
            np.testing.assert_array_equal(work.los[:n_leaves], los)
            np.testing.assert_array_equal(work.his[:n_leaves], his)
            np.testing.assert_array_equal(work.counts[:n_leaves], counts)
            if n_leaves > 2:  # a stump's grouping counts its two leaves itself
                np.testing.assert_array_equal(work.grouped[:n], grouped)
        w = rng.uniform(0.5, 2.0, size=n) if trial % 4 == 1 else np.empty(0)
        found = leaf_means_in(values, leaf_ids, n_leaves, w, means)
        expected = leaf_means(values, leaf_ids, n_leaves, w if w.size else None)
        np.testing.assert_array_equal(found, expected)


def test_two_leaves_against_sorting_and_bincount():
    """A stump's two leaves take their own paths (``_leafops._group_two``, one pass from both
    ends; ``_compiled_loop._two_leaf_sums``, the sums in registers): each leaf's interval of
    minimisers equals its order statistics from a full sort, and the least-squares means equal
    ``np.bincount``'s bit for bit (also with weights, ties, hinge signs and an empty leaf)."""
    from proxboost._compiled_loop import leaf_means_in, leaf_work
    from proxboost._leafops import _leaf_ranks, leaf_intervals_in, leaf_scratch

    rng = np.random.RandomState(11)
    work = leaf_scratch(3000, 2)
    means = leaf_work(3000, 2)
    for trial in range(80):
        n = rng.choice([1, 2, 3, 7, 64, 1100, 2500])  # both sides of the sample-select size
        values = np.round(rng.standard_t(3, size=n), 1 if trial % 2 else 9)
        leaf_ids = rng.randint(0, 2, size=n)
        if trial % 5 == 0:
            leaf_ids[:] = trial % 2  # one leaf empty
        hinge = trial % 3 == 0
        signs = np.sign(rng.normal(size=n)) if hinge else np.empty(0)
        tau = 0.5 if hinge else rng.choice([0.5, 0.1, 0.9, rng.uniform(0.01, 0.99)])
        leaf_intervals_in(values, leaf_ids, 2, tau, signs, work, False)
        for leaf in (0, 1):
            v = np.sort(values[leaf_ids == leaf])
            m = v.size
            assert work.counts[leaf] == m
            if m == 0:
                continue
            n_pos = int(np.sum(signs[leaf_ids == leaf] > 0)) if hinge else 0
            lo_rank, hi_rank = _leaf_ranks(m, tau, n_pos, hinge)
            padded = np.concatenate([[-np.inf], v, [np.inf]])  # rank r is padded[r]
            expected = (padded[min(max(lo_rank, 0), m + 1)], padded[min(max(hi_rank, 0), m + 1)])
            assert (work.los[leaf], work.his[leaf]) == expected, (trial, leaf, m, tau)
        w = rng.uniform(0.5, 2.0, size=n) if trial % 4 == 1 else np.empty(0)
        found = leaf_means_in(values, leaf_ids, 2, w, means)
        weights = w if w.size else None
        counts = np.bincount(leaf_ids, weights=weights, minlength=2)
        sums = np.bincount(leaf_ids, weights=values * w if w.size else values, minlength=2)
        with np.errstate(invalid="ignore", divide="ignore"):
            expected = np.where(counts > 0, sums / counts, 0.0)
        assert found.tobytes() == expected.tobytes(), trial


def test_select_is_the_order_statistic():
    """``_select`` (quickselect with branch-free partitions) against a full sort: the returned
    value is the k-th smallest of a[lo:hi], the range keeps its values, smaller ones before k and
    larger ones after; continuous values, heavy ties, sorted and reversed runs, all equal."""
    from proxboost._leafops import _select

    rng = np.random.RandomState(8)
    for case in range(400):
        n = int(rng.choice([1, 2, 3, 7, 33, 77, 300, 1500]))
        kind = case % 5
        a = {
            0: rng.randn(n),
            1: rng.randint(-3, 4, n).astype(float),
            2: np.sort(rng.randn(n)),
            3: np.sort(rng.randint(0, 5, n).astype(float))[::-1].copy(),
            4: np.full(n, 2.5),
        }[kind]
        lo, hi = (0, n) if case % 2 else (rng.randint(0, n), n)
        hi = max(hi, lo + 1)
        k = rng.randint(lo, hi)
        before = a.copy()
        v = _select(a, lo, hi, k)
        expected = np.sort(before[lo:hi])
        assert v == expected[k - lo] == a[k], (case, n, kind)
        np.testing.assert_array_equal(np.sort(a[lo:hi]), expected)
        assert np.all(a[lo:k] <= v) and np.all(a[k + 1 : hi] >= v)
        np.testing.assert_array_equal(a[:lo], before[:lo])
        np.testing.assert_array_equal(a[hi:], before[hi:])
