"""Paired statistics on hand-made differences whose outcome is known, checked against independent
oracles.
"""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from proxboost.experiments.claims.analysis import (
    compare,
    hodges_lehmann,
    holm,
    loss_differences,
    nadeau_bengio_p,
    paired_deltas,
    paired_values,
    protocol_units,
    rows_per_dataset,
    variant_differences,
    wilcoxon_p,
)


def _rows(
    dataset, loss, values_by_algo, protocol="paper/20splits/T1000", engine="exact", tie_rule=None
):
    out = []
    for algo, values in values_by_algo.items():
        for k, v in enumerate(values):
            row = dict(
                protocol=protocol,
                dataset=dataset,
                loss=loss,
                algo=algo,
                split=k,
                test_loss=v,
                engine="none" if algo in ("xgboost", "random_forest") else engine,
            )
            if tie_rule is not None:
                row["tie_rule"] = tie_rule
            out.append(row)
    return pd.DataFrame(out)


# -- Wilcoxon and the "A better than B" rule -------------------------------------------------------
def test_always_lower_is_confirmed_always_higher_contradicted():
    rng = np.random.default_rng(0)
    b = rng.normal(10, 1, 20)
    a = b - rng.uniform(0.1, 1.0, 20)
    c = compare(a, b)
    assert (c.n, c.wins, c.ties, c.losses) == (20, 20, 0, 0) and c.median < 0
    assert c.p == pytest.approx(2 / 2**20)  # exact two-sided p of 20 positive ranks
    assert c.verdict() == "confirmed" and compare(b, a).verdict() == "contradicted"


def test_symmetric_noise_is_inconclusive():
    d = np.array([1.0, -1.1, 2.0, -2.1, 3.0, -3.1, 4.0, -4.1, 0.5, -0.6])
    c = compare(d, np.zeros_like(d))
    assert c.p > 0.5 and c.verdict() == "inconclusive"


def test_zero_differences_and_the_tie_tolerance():
    assert wilcoxon_p(np.zeros(20)) == 1.0 and math.isnan(wilcoxon_p([]))
    b = np.full(6, 1e3)
    c = compare(
        b + np.array([0, 1e-10, -1e-10, 1.0, -1.0, 1.0]), b
    )  # |d| <= 1e-12 * 1e3 counts as a tie
    assert (c.wins, c.ties, c.losses) == (1, 3, 2)
    assert compare([], []).n == 0 and compare([], []).verdict() == "inconclusive"


# -- Holm ------------------------------------------------------------------------------------------
def _holm_rejections(p, alpha):
    """The step-down procedure as written: reject p_(i) while p_(i) <= alpha / (m - i + 1)."""
    order = np.argsort(p, kind="stable")
    rejected = np.zeros(len(p), bool)
    for i, j in enumerate(order):
        if p[j] > alpha / (len(p) - i):
            break
        rejected[j] = True
    return rejected


def test_holm_matches_the_step_down_procedure():
    rng = np.random.default_rng(1)
    for _ in range(200):
        p = rng.uniform(0, 0.1, rng.integers(1, 13)) ** rng.uniform(0.5, 2)
        adj = holm(p)
        assert np.all(adj >= p - 1e-15) and np.all(adj <= 1)
        for alpha in (0.01, 0.05, 0.1):
            assert np.array_equal(adj <= alpha, _holm_rejections(p, alpha))


def test_holm_ignores_missing_pvalues():
    adj = holm([0.01, math.nan, 0.02])
    assert math.isnan(adj[1]) and adj[0] == pytest.approx(0.02) and adj[2] == pytest.approx(0.02)


# -- Hodges–Lehmann --------------------------------------------------------------------------------
@pytest.mark.parametrize("n, seed", [(8, 0), (12, 1), (20, 2)])
def test_hodges_lehmann_inverts_the_exact_wilcoxon_test(n, seed):
    d = np.random.default_rng(seed).normal(0.3, 1.0, n)
    est, lo, hi = hodges_lehmann(d)
    i, j = np.triu_indices(n)
    walsh = np.sort((d[i] + d[j]) / 2)
    assert est == pytest.approx(np.median(walsh))
    k = int(np.searchsorted(walsh, lo)) + 1  # lo is the k-th Walsh average

    def p(theta):
        return stats.wilcoxon(d - theta, method="exact").pvalue

    assert p((walsh[k - 2] + walsh[k - 1]) / 2) <= 0.05  # just below lo: rejected
    assert p((walsh[k - 1] + walsh[k]) / 2) > 0.05  # just above lo: kept
    m = len(walsh)
    assert hi == walsh[m - k]
    assert p((walsh[m - k] + walsh[m - k + 1]) / 2) <= 0.05  # just above hi: rejected


def test_hodges_lehmann_small_and_empty():
    est, lo, hi = hodges_lehmann([1.0, 2.0, 3.0])  # 3 values cannot reach 95 %
    assert est == 2.0 and lo == -math.inf and hi == math.inf
    assert all(math.isnan(v) for v in hodges_lehmann([]))


# -- Nadeau–Bengio ---------------------------------------------------------------------------------
def test_nadeau_bengio_reduces_to_the_t_test_without_overlap():
    d = np.random.default_rng(3).normal(0.2, 1.0, 20)
    assert nadeau_bengio_p(d, 0.0) == pytest.approx(stats.ttest_1samp(d, 0.0).pvalue)
    assert nadeau_bengio_p(d, 1 / 3) > nadeau_bengio_p(d, 0.0)  # overlap makes it conservative
    assert nadeau_bengio_p(np.zeros(5), 0.3) == 1.0 and math.isnan(nadeau_bengio_p([1.0], 0.3))


# -- rows ------------------------------------------------------------------------------------------
def test_nadeau_bengio_matches_the_formula_on_a_small_example():
    # oracle: t = mean(d) / sqrt((1/J + n2/n1) var(d)), J − 1 degrees of freedom, written out by
    # hand for J = 5 splits and the protocol's n_test/n_train = 25/75 (refit on train ∪ validation)
    d = np.array([0.3, -0.1, 0.5, 0.2, 0.4])
    J, n2, n1 = 5, 25, 75
    mean = (0.3 - 0.1 + 0.5 + 0.2 + 0.4) / 5  # 0.26
    var = ((0.04) ** 2 + (-0.36) ** 2 + 0.24**2 + (-0.06) ** 2 + 0.14**2) / (J - 1)  # 0.053
    t = mean / math.sqrt((1 / J + n2 / n1) * var)
    assert var == pytest.approx(0.053) and t == pytest.approx(1.546451, rel=1e-6)
    expected = 2.0 * stats.t.sf(t, J - 1)
    assert expected == pytest.approx(0.19694, abs=1e-4)
    assert nadeau_bengio_p(d, n2 / n1) == pytest.approx(expected, rel=1e-12)
    assert nadeau_bengio_p(-d, n2 / n1) == pytest.approx(expected, rel=1e-12)  # two-sided
    assert compare(d, np.zeros(J), n2 / n1).p_nb == pytest.approx(expected, rel=1e-12)
    # the naive t-test (ratio 0) is the smaller p-value: the overlap term only inflates the variance
    assert stats.ttest_1samp(d, 0.0).pvalue < expected


def test_a_reading_reads_the_p_value_of_its_test():
    from proxboost.experiments.claims.criteria import CORRECTED_T, EVERY_CELL, WILCOXON

    c = compare(np.arange(1.0, 21.0), np.arange(1.0, 21.0) + 0.5 + 0.01 * np.arange(20))
    second = EVERY_CELL.corrected()
    assert EVERY_CELL.test == WILCOXON and EVERY_CELL.p(c) == c.p
    assert second.test == CORRECTED_T and second.p(c) == c.p_nb
    assert second.name == EVERY_CELL.name and second.keep == EVERY_CELL.keep
    with pytest.raises(ValueError):
        type(EVERY_CELL)("x", (), "why", "sign test")


def test_paired_deltas_pair_by_split():
    g = np.arange(20, dtype=float)
    df = _rows("engel", "lad", {"gradient": g, "prox": g - 1.0, "xgboost": g + 2.0})
    df = df[~((df["algo"] == "xgboost") & (df["split"] == 5))]
    d = paired_deltas(df, "engel", "lad")
    assert np.allclose(d[d["algo"] == "prox"]["delta"], -1.0)
    assert len(d[d["algo"] == "xgboost"]) == 19 and np.allclose(
        d[d["algo"] == "xgboost"]["delta"], 2.0
    )


def test_loss_differences_pair_method_and_split():
    df = pd.concat(
        [
            _rows("spam", "hinge", {"prox": [0.1, 0.2]}),
            _rows("spam", "exponential", {"prox": [0.3, 0.1]}),
        ]
    )
    df["test_error"] = df["test_loss"]
    d = loss_differences(df, "spam")
    assert d.sort_values("split")["delta"].tolist() == pytest.approx([-0.2, 0.1])


def test_protocol_units_never_mix_protocols_engines_or_tie_rules():
    g = [1.0, 2.0]
    df = pd.concat(
        [
            _rows(
                "crabs",
                "lad",
                {"gradient": g, "prox": g, "xgboost": g},
                protocol="paper/2splits/T10",
            ),
            _rows(
                "crabs",
                "lad",
                {"gradient": g, "prox": g},
                protocol="paper/2splits/T10",
                engine="hist",
            ),
            _rows(
                "crabs", "lad", {"gradient": g}, protocol="paper/2splits/T10", tie_rule="authors"
            ),
            _rows("crabs", "lad", {"gradient": g, "prox": g}, protocol="reduced/2splits/T10"),
        ]
    )
    units = protocol_units(df)
    labels = [u.label for u in units]
    assert labels[0] == "paper/2splits/T10, exact trees"  # preferred: paper, exact, default rule
    assert "paper/2splits/T10, exact trees, tie rule authors" in labels and len(units) == 4
    for u in units:
        assert u.rows["protocol"].nunique() == 1
        assert set(u.rows["engine"]) - {"none"} == {u.engine}
        if u.protocol.startswith("paper"):
            assert "xgboost" in set(u.rows["algo"])  # baselines shared by the protocol's units


def test_rows_per_dataset_prefers_the_unit_with_more_methods():
    a = _rows(
        "crabs", "ls", {"gradient": [1.0] * 3, "prox": [1.0] * 3}, protocol="reduced/3splits/T100"
    )
    b = _rows("crabs", "ls", {"gradient": [2.0] * 2, "prox": [2.0] * 2, "xgboost": [2.0] * 2})
    rows, info = rows_per_dataset(pd.concat([a, b]))
    assert info["crabs"]["protocol"] == "paper/20splits/T1000, exact trees"
    assert info["crabs"]["other_protocols"] == ["reduced/3splits/T100, exact trees"]
    assert set(rows["protocol"]) == {"paper/20splits/T1000"} and len(rows) == 6


def test_baselines_join_only_the_units_with_trees_on_their_dataset():
    # adult: boosting rows only under the reduced protocol; under the paper protocol only a
    # baseline, which must not join the paper units of crabs' trees (exact and hist)
    crabs = pd.concat(
        [
            _rows("crabs", "lad", {"gradient": [1.0] * 2}),
            _rows("crabs", "lad", {"gradient": [1.0] * 2}, engine="hist"),
        ]
    )
    reduced = _rows(
        "adult", "hinge", {"gradient": [1.0] * 2, "prox": [1.0] * 2}, protocol="reduced/2splits/T10"
    )
    base = _rows("adult", "hinge", {"xgboost": [1.0] * 2})
    _, info = rows_per_dataset(pd.concat([crabs, reduced, base]))
    assert info["adult"]["protocol"] == "reduced/2splits/T10, exact trees"
    assert info["adult"]["other_protocols"] == ["paper/20splits/T1000, baselines only"]
    assert info["crabs"]["other_protocols"] == ["paper/20splits/T1000, hist trees"]
    for u in protocol_units(pd.concat([crabs, reduced, base])):
        with_trees = set(u.rows.loc[u.rows["engine"] != "none", "dataset"])
        assert set(u.rows["dataset"]) == (with_trees or {"adult"}), u.label


def test_variant_differences_pair_two_engines_by_split():
    rows = []
    for split, (ex, hi) in enumerate([(5.0, 4.0), (6.0, 5.0), (7.0, 6.0), (3.0, 3.0)]):
        for engine, loss in (("exact", ex), ("hist", hi)):
            rows.append(
                dict(
                    protocol="p/4splits/T10",
                    dataset="engel",
                    loss="lad",
                    algo="prox",
                    split=split,
                    engine=engine,
                    test_loss=loss,
                    fit_seconds=1.0,
                )
            )
    rows.append(
        dict(
            protocol="p/4splits/T10",
            dataset="engel",
            loss="lad",
            algo="gradient",
            split=0,
            engine="exact",
            test_loss=1.0,
            fit_seconds=1.0,
        )
    )  # no twin: not paired
    m = variant_differences(pd.DataFrame(rows), "engine", "exact", "hist")
    assert len(m) == 4 and m["delta"].tolist() == [1.0, 1.0, 1.0, 0.0]


# -- loss-independent methods ----------------------------------------------------------------------
ONCE = ("random_forest", "lightgbm", "sklearn_hgb")


@pytest.mark.slow
def test_loss_independent_rows_are_shown_under_every_classification_loss(classification_rows):
    raw = classification_rows()
    (unit,) = protocol_units(raw)
    rows = unit.rows
    assert not rows.duplicated(["dataset", "loss", "algo", "split"]).any()
    # every stored row exactly once among the rows run with their loss; the copies are the hinge
    # ones
    run = rows[rows["loss"] == rows["run_loss"]]
    assert len(run) == len(raw)
    copies = rows[rows["loss"] != rows["run_loss"]]
    assert (
        set(copies["algo"]) == set(ONCE)
        and set(copies["loss"]) == {"hinge"}
        and len(copies) == 3 * 20
    )
    assert copies["test_loss"].isna().all()
    for algo in ONCE:
        exp = raw[(raw["algo"] == algo)].set_index("split")["test_error"]
        # hinge: the same fit's error, paired with the hinge run of gradient boosting on the same
        # split
        a, b = paired_values(rows, "spam", "hinge", algo, "gradient", "test_error")
        g = raw[(raw["algo"] == "gradient") & (raw["loss"] == "hinge")].set_index("split")[
            "test_error"
        ]
        assert np.array_equal(a, exp.sort_index().to_numpy()) and np.array_equal(
            b, g.sort_index().to_numpy()
        )
        d = paired_deltas(rows, "spam", "hinge", "test_error")
        assert np.allclose(
            d[d["algo"] == algo].sort_values("split")["delta"], (exp - g).sort_index()
        )
    # a difference between two losses never pairs a fit with itself
    assert not set(loss_differences(rows, "spam")["algo"]) & set(ONCE)
    a, _ = paired_values(
        rows, "spam", "hinge", "random_forest", "random_forest", "test_error", loss_b="exponential"
    )
    assert a.size == 0


def test_rows_run_per_loss_are_not_shared():
    # an older layout: random forests run under both losses; a regression forest under ls only
    rf = _rows("spam", "exponential", {"gradient": np.ones(4), "random_forest": np.ones(4)})
    rf = pd.concat([rf, rf.assign(loss="hinge")], ignore_index=True).assign(test_error=0.1)
    reg = _rows("engel", "ls", {"gradient": np.ones(4), "random_forest": np.ones(4)})
    reg = pd.concat([reg, _rows("engel", "lad", {"gradient": np.ones(4)})], ignore_index=True)
    for raw in (rf, reg):
        (unit,) = protocol_units(raw)
        assert len(unit.rows) == len(raw) and (unit.rows["loss"] == unit.rows["run_loss"]).all()


def test_the_quantile_benchmark_protocols_are_not_protocol_units():
    from proxboost.experiments.report.benchmark import READINGS
    from proxboost.experiments.store.naming import BENCHMARK_GRIDS

    assert set(READINGS) == set(BENCHMARK_GRIDS)
    g = [1.0, 2.0]
    paper = _rows("crabs", "lad", {"gradient": g, "prox": g}, protocol="paper/2splits/T10")
    # more cells than the paper's, under the benchmark's protocols: never a statement's headline
    bench = pd.concat(
        [
            _rows(d, loss, {"gradient": g, "prox": g}, protocol=f"{grid}/2splits/T10")
            for grid in BENCHMARK_GRIDS
            for d in ("crabs", "engel", "barro")
            for loss in ("lad", "pinball")
        ]
    )
    units = protocol_units(pd.concat([paper, bench]))
    assert [u.label for u in units] == ["paper/2splits/T10, exact trees"]
    assert set(units[0].rows["protocol"]) == {"paper/2splits/T10"}
