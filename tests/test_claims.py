"""Each criterion of docs/claims.md on hand-made curves and rows whose verdict is known by
construction.
"""

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from proxboost.experiments.claims import (
    CLAIMS_COLUMNS,
    STATEMENTS,
    Curve,
    CurveSet,
    aggregate_runs,
    combine_all,
    count_rule,
    criteria_sha,
    faster_verdict,
    floor_start,
    judge,
    judge_real,
    judge_synthetic,
    levels_rule,
    linear_fit,
    mixed_up,
    scope,
)
from proxboost.experiments.claims.analysis import protocol_units

T = 1000
t = np.arange(T + 1)


def _c(train, test=None, seconds=None, n_leaves=None):
    return Curve(
        train,
        train * 1.1 if test is None else test,
        np.linspace(0, 1, len(train)) if seconds is None else seconds,
        n_leaves,
    )


def _decay(decades_per_iter, floor=0.0, c0=1.0):
    """c0 · 10^(−r t), held constant once it reaches ``floor`` · c0."""
    y = c0 * 10.0 ** (-decades_per_iter * t)
    return np.maximum(y, floor * c0) if floor else y


# -- floor -----------------------------------------------------------------------------------------
def test_floor_from_the_curve():
    y = _decay(0.1, floor=1e-9)  # reaches 1e-9 at t = 90, then flat
    assert floor_start(y) == 90
    plateau = np.maximum(_decay(0.01), 0.1)  # flat far above zero: not a floor
    assert floor_start(plateau) is None
    assert floor_start(_decay(0.001)) is None  # still moving


def test_floor_from_leaf_counts():
    y = _decay(0.001)  # the curve alone shows no floor
    leaves = np.full(T + 1, 8.0)
    leaves[300:] = 1
    assert floor_start(y, leaves) == 300
    leaves[-1] = 2  # a split at the end: not a floor
    assert floor_start(y, leaves) is None


# -- levels rule -----------------------------------------------------------------------------------
def test_levels_rule_faster_slower_similar():
    a, b = _c(_decay(0.02)), _c(_decay(0.01))
    assert levels_rule(a, b)[0] == "a faster" and faster_verdict("a faster") == "confirmed"
    assert levels_rule(b, a)[0] == "b faster" and faster_verdict("b faster") == "contradicted"
    assert levels_rule(_c(_decay(0.0100)), _c(_decay(0.0104)))[0] == "similar"
    assert faster_verdict("similar") == "contradicted"  # within 20 % at every level is not "faster"


def test_levels_rule_mixed_and_inside_the_floor():
    fast_then_slow = np.where(t < 100, 10.0 ** (-0.02 * t), 10.0 ** (-2 - 0.001 * (t - 100)))
    assert levels_rule(_c(fast_then_slow), _c(_decay(0.004)))[0] == "mixed"
    assert faster_verdict("mixed") == "inconclusive"
    # single-leaf trees from t = 60 (a) and 120 (b): both floors at 10^-1.2 C0, no level 10x above
    # them
    leaves_a, leaves_b = np.where(t < 60, 4.0, 1.0), np.where(t < 120, 4.0, 1.0)
    a, b = _c(_decay(0.02), n_leaves=leaves_a), _c(_decay(0.01), n_leaves=leaves_b)
    assert a.floor == 60 and b.floor == 120
    assert levels_rule(a, b)[0] == "unmeasurable"
    assert (
        levels_rule(_c(_decay(0.02)), _c(_decay(0.01)))[0] == "a faster"
    )  # the same curves without floors


def test_levels_rule_in_seconds():
    a, b = (
        _c(_decay(0.01), seconds=t * 3.0),
        _c(_decay(0.01), seconds=t * 1.0),
    )  # same iterations, 3x the time
    assert levels_rule(a, b)[0] == "similar" and levels_rule(a, b, x="seconds")[0] == "b faster"


# -- mixed up --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "gap, verdict", [(0.05, "confirmed"), (0.2, "inconclusive"), (0.5, "contradicted")]
)
def test_mixed_up(gap, verdict):
    a = _decay(0.005)
    b = a * 10 ** (gap * np.minimum(t, 100) / 100)  # the gap opens to ``gap`` decades
    v, measured = mixed_up(_c(a), _c(b))
    assert v == verdict and measured == pytest.approx(gap)


def test_mixed_up_ignores_the_floor():
    a = _decay(0.02, floor=1e-9)
    b = a.copy()
    b[460:] = 1e-12  # differs only once a is at its floor (t >= 450)
    assert mixed_up(_c(a), _c(b))[0] == "confirmed"


# -- linear fit ------------------------------------------------------------------------------------
def _r2(y):
    x, ly = t[50:], np.log10(y[50:])
    resid = ly - np.polyval(np.polyfit(x, ly, 1), x)
    return 1 - resid.var() / ly.var()


def test_linear_fit_agrees_with_numpy():
    y = 10.0 ** (-0.003 * t + 0.2 * np.sin(t / 80))
    slope, r2, n = linear_fit(_c(y))
    assert (
        r2 == pytest.approx(_r2(y))
        and n == T - 49
        and slope == pytest.approx(np.polyfit(t[50:], np.log10(y[50:]), 1)[0])
    )


@pytest.mark.parametrize(
    "wiggle, verdict", [(0.0, "confirmed"), (0.35, "inconclusive"), (1.0, "contradicted")]
)
def test_statement_2c_linear_fit(curve_frame, wiggle, verdict):
    y = 10.0 ** (-0.003 * t + wiggle * np.sin(t / 80))
    r2 = _r2(y)
    assert {"confirmed": r2 >= 0.95, "inconclusive": 0.8 <= r2 < 0.95, "contradicted": r2 < 0.8}[
        verdict
    ]
    frames = [
        curve_frame("convergence", loss, "prox", d, y, step=1.0)
        for loss in ("lad", "hinge")
        for d in (3, 15)
    ]
    rows = judge_synthetic("2c", CurveSet(pd.concat(frames)))
    assert rows[0]["scope"] == "all" and rows[0]["verdict"] == verdict


def test_statement_1c_needs_deeper_trees_steeper(curve_frame):
    def frames(slope15):
        out = []
        for loss in ("ls", "exponential"):
            for algo, step in (("gradient", None), ("prox", 1.0)):
                out.append(curve_frame("convergence", loss, algo, 3, _decay(0.004), step=step))
                out.append(curve_frame("convergence", loss, algo, 15, _decay(slope15), step=step))
        return CurveSet(pd.concat(out))

    assert judge_synthetic("1c", frames(0.008))[0]["verdict"] == "confirmed"  # 2x steeper
    assert (
        judge_synthetic("1c", frames(0.005))[0]["verdict"] == "inconclusive"
    )  # 1.25x: steeper, not 1.5x
    assert judge_synthetic("1c", frames(0.003))[0]["verdict"] == "contradicted"  # shallower


# -- aggregation -----------------------------------------------------------------------------------
def test_aggregation_over_runs():
    assert aggregate_runs(["confirmed"] * 4 + ["inconclusive"])[0] == "confirmed"
    assert aggregate_runs(["confirmed"] * 4 + ["contradicted"])[0] == "inconclusive"
    assert aggregate_runs(["contradicted"] * 5)[0] == "contradicted"
    assert (
        aggregate_runs(["confirmed"] * 3 + ["inconclusive"] * 2)[0] == "inconclusive"
    )  # 60 % < 80 %
    assert aggregate_runs([])[0] == "inconclusive"
    assert (
        "4 confirmed, 1 contradicted, 0 inconclusive of 5"
        in aggregate_runs(["confirmed"] * 4 + ["contradicted"])[1]
    )
    assert combine_all(["confirmed", "confirmed"]) == "confirmed"
    assert combine_all(["confirmed", "inconclusive"]) == "inconclusive"
    assert combine_all(["confirmed", "contradicted", "inconclusive"]) == "contradicted"


def test_count_rule_with_missing_cells():
    assert count_rule(3, 0, 3, 1) == "confirmed"
    assert count_rule(1, 0, 3, 1) == "contradicted"
    assert count_rule(1, 3, 3, 1) == "inconclusive"  # missing cells could still confirm it
    assert count_rule(2, 0, 3, 1) == "inconclusive"


def _convergence(curve_frame, p_rate, g_rate, seed=0, tie_rule=None, losses=("lad", "hinge")):
    out = []
    for loss in losses:
        for d in (3, 15):
            out.append(
                curve_frame(
                    "convergence",
                    loss,
                    "prox",
                    d,
                    _decay(p_rate),
                    step=1.0,
                    seed=seed,
                    tie_rule=tie_rule,
                )
            )
            out.append(
                curve_frame(
                    "convergence", loss, "gradient", d, _decay(g_rate), seed=seed, tie_rule=tie_rule
                )
            )
    return out


@pytest.mark.slow
def test_statement_2a_per_run_and_aggregated(curve_frame):
    ok = CurveSet(pd.concat(_convergence(curve_frame, 0.02, 0.01)))
    rows = judge_synthetic("2a", ok)
    assert rows[0]["verdict"] == "confirmed" and rows[0]["n_support"] == 1
    assert {r["scope"] for r in rows[1:]} == {
        scope(loss=lo, depth=d) for lo in ("lad", "hinge") for d in (3, 15)
    }
    bad = CurveSet(pd.concat(_convergence(curve_frame, 0.01, 0.02)))
    assert judge_synthetic("2a", bad)[0]["verdict"] == "contradicted"
    # 3 seeds x 2 tie rules; one run (seed 2, authors) has G faster: 5 of 6 confirmed, 1
    # contradicted
    frames = []
    for seed in range(3):
        for rule in ("midpoint", "authors"):
            flip = seed == 2 and rule == "authors"
            frames += _convergence(
                curve_frame, 0.01 if flip else 0.02, 0.02 if flip else 0.01, seed, rule
            )
    rows = judge_synthetic("2a", CurveSet(pd.concat(frames)))
    top = rows[0]
    assert top["verdict"] == "inconclusive" and top["n_support"] == 6
    assert (
        "5 confirmed, 1 contradicted" in top["numbers"]
        and "tie rule midpoint/authors" in top["protocol"]
    )
    by_scope = {r["scope"]: r for r in rows}
    assert by_scope["tie_rule=midpoint"]["verdict"] == "confirmed"
    assert by_scope["tie_rule=authors"]["verdict"] == "inconclusive"
    assert by_scope["tie_rule=authors;seed=2"]["verdict"] == "contradicted"


def test_tie_rules_do_not_multiply_runs_of_losses_without_ties(curve_frame):
    frames = []
    for rule in ("midpoint", "authors"):
        for d in (3, 15):
            frames.append(
                curve_frame("convergence", "ls", "gradient", d, _decay(0.01), tie_rule=rule)
            )
            frames.append(
                curve_frame("convergence", "ls", "prox", d, _decay(0.01), step=1.0, tie_rule=rule)
            )
    rows = judge_synthetic("1a", CurveSet(pd.concat(frames)))
    assert rows[0]["verdict"] == "confirmed" and rows[0]["n_support"] == 1


def test_statement_1a_is_strict(curve_frame):
    def cs(factor):
        return CurveSet(
            pd.concat(
                [
                    curve_frame(
                        "convergence",
                        "ls",
                        a,
                        d,
                        _decay(0.01) * (factor if a == "prox" else 1),
                        step=1.0 if a == "prox" else None,
                    )
                    for a in ("gradient", "prox")
                    for d in (3, 15)
                ]
            )
        )

    assert judge_synthetic("1a", cs(1.0))[0]["verdict"] == "confirmed"
    assert judge_synthetic("1a", cs(1 + 1e-4))[0]["verdict"] == "inconclusive"
    assert judge_synthetic("1a", cs(1.01))[0]["verdict"] == "contradicted"


def test_statement_2b_plateau_and_floor(curve_frame):
    def cs(g):
        return CurveSet(
            pd.concat(
                [curve_frame("convergence", "hinge", "gradient", d, g) for d in (3, 15)]
                + [
                    curve_frame("convergence", "hinge", "prox", d, _decay(0.003), step=1.0)
                    for d in (3, 15)
                ]
            )
        )

    plateau = np.maximum(_decay(0.01), 0.2)  # G stuck at 0.2 C0, P at 1e-3 C0
    assert judge_synthetic("2b", cs(plateau))[0]["verdict"] == "confirmed"
    assert judge_synthetic("2b", cs(_decay(0.003)))[0]["verdict"] == "contradicted"  # G as low as P
    assert (
        judge_synthetic("2b", cs(_decay(0.02, floor=1e-9)))[0]["verdict"] == "contradicted"
    )  # G at its floor


def test_statements_7a_7b_7c(curve_frame):
    tt = np.arange(501)
    plateau = 0.12 + 0.5 * np.exp(-tt / 20)
    decreasing = 0.6 * np.exp(-tt / 200)

    def cs(g, p, seeds=(0,)):
        return CurveSet(
            pd.concat(
                [
                    f
                    for s in seeds
                    for f in (
                        curve_frame("intro", "lad", "gradient", 2, g, test=g + 0.1, seed=s),
                        curve_frame("intro", "lad", "prox", 2, p, test=p + 0.05, step=1.0, seed=s),
                    )
                ]
            )
        )

    good = cs(plateau, decreasing)
    assert [judge_synthetic(s, good)[0]["verdict"] for s in ("7a", "7b", "7c")] == ["confirmed"] * 3
    bad = cs(decreasing, plateau)
    assert [judge_synthetic(s, bad)[0]["verdict"] for s in ("7a", "7b")] == ["contradicted"] * 2
    mild = 0.3 * (1 - 0.07 * np.clip((tt - 250) / 250, 0, 1))  # 7 % decrease: between 5 and 10 %
    assert judge_synthetic("7a", cs(mild, decreasing))[0]["verdict"] == "inconclusive"
    # 7c counts seeds: P below G on 4 of 5 seeds confirms it
    frames = [
        curve_frame("intro", "lad", "gradient", 2, plateau, test=np.full(501, 0.3), seed=s)
        for s in range(5)
    ]
    frames += [
        curve_frame(
            "intro",
            "lad",
            "prox",
            2,
            decreasing,
            test=np.full(501, 0.4 if s == 4 else 0.2),
            step=1.0,
            seed=s,
        )
        for s in range(5)
    ]
    top = judge_synthetic("7c", CurveSet(pd.concat(frames)))[0]
    assert top["verdict"] == "confirmed" and "4 of 5" in top["numbers"]


def test_statements_4b_4e_divergence(curve_frame):
    frames = []
    for loss in ("lad", "hinge"):
        u = np.concatenate(
            [np.linspace(1, 0.1, 301), np.linspace(0.1, 1.0, 700)]
        )  # min at 300, ends 10x higher
        test = np.concatenate(
            [np.linspace(1, 0.3, 101), np.linspace(0.3, 1.5, 900)]
        )  # min test at 100
        frames.append(curve_frame("proximal_step", loss, "accelerated_gradient", 3, u, test=test))
        for s in (0.01, 0.1, 1.0, 10.0, 100.0):
            frames.append(
                curve_frame("proximal_step", loss, "accelerated_prox", 3, u, test=test, step=s)
            )
    cs = CurveSet(pd.concat(frames))
    assert judge_synthetic("4b", cs)[0]["verdict"] == "confirmed"
    assert judge_synthetic("4e", cs)[0]["verdict"] == "confirmed"
    early = [
        f.assign(test_loss=np.concatenate([np.linspace(1, 0.3, 501), np.linspace(0.3, 1.5, 500)]))
        for f in frames
    ]
    assert (
        judge_synthetic("4e", CurveSet(pd.concat(early)))[0]["verdict"] == "contradicted"
    )  # train min before test min
    flat = [f.assign(train_loss=_decay(0.001), test_loss=_decay(0.001)) for f in frames]
    assert judge_synthetic("4b", CurveSet(pd.concat(flat)))[0]["verdict"] == "contradicted"
    assert (
        judge_synthetic("4e", CurveSet(pd.concat(flat)))[0]["verdict"] == "inconclusive"
    )  # nothing diverges


def test_curves_without_leaf_counts_say_so(curve_frame):
    cs = CurveSet(pd.concat(_convergence(curve_frame, 0.02, 0.01)))
    assert "no leaf counts" in judge_synthetic("2a", cs)[0]["protocol"]
    with_leaves = [f.assign(n_leaves=8.0) for f in _convergence(curve_frame, 0.02, 0.01)]
    assert (
        "no leaf counts"
        not in judge_synthetic("2a", CurveSet(pd.concat(with_leaves)))[0]["protocol"]
    )


# -- real data -------------------------------------------------------------------------------------
def _rows(values_by_cell, protocol="paper/20splits/T1000", engine="exact"):
    out = []
    for (ds, loss, algo), values in values_by_cell.items():
        for k, v in enumerate(values):
            out.append(
                dict(
                    protocol=protocol,
                    dataset=ds,
                    loss=loss,
                    algo=algo,
                    split=k,
                    test_loss=v,
                    engine="none" if algo in ("xgboost", "random_forest") else engine,
                )
            )
    return pd.DataFrame(out)


DATASETS = ("whitewine", "redwine", "bostonhousing", "crabs", "engel", "sniffer")
G = np.linspace(1.0, 2.0, 20)


def _6c_rows(p_shift, protocol="paper/20splits/T1000", datasets=DATASETS):
    cells = {}
    for ds in datasets:
        for loss in ("lad", "pinball"):
            cells[(ds, loss, "gradient")] = G
            cells[(ds, loss, "prox")] = G + p_shift(ds, loss)
    return _rows(cells, protocol)


@pytest.mark.slow
def test_always_rule_confirmed_contradicted_inconclusive():
    units = protocol_units(_6c_rows(lambda ds, loss: -0.1 - 0.01 * np.arange(20)))
    top = judge_real("6c", units)[0]
    assert top["verdict"] == "confirmed" and top["n_support"] == 12
    worse = protocol_units(
        _6c_rows(
            lambda ds, loss: (
                (0.1 if ds == "crabs" and loss == "lad" else -0.1) + 0.01 * np.arange(20)
            )
        )
    )
    assert judge_real("6c", worse)[0]["verdict"] == "contradicted"
    noisy = protocol_units(
        _6c_rows(
            lambda ds, loss: (
                (np.tile([0.1, -0.1], 10) if ds == "engel" else -0.1) + 0.001 * np.arange(20)
            )
        )
    )
    assert judge_real("6c", noisy)[0]["verdict"] == "inconclusive"


@pytest.mark.slow
def test_holm_decides_the_always_rule():
    # two cells worse with a raw p in (0.025, 0.05): contradicted by the raw rule, not after Holm (2
    # p > 0.05)
    d = np.array(
        [
            0.5,
            0.4,
            -0.3,
            0.6,
            0.2,
            -0.1,
            0.35,
            0.45,
            -0.05,
            0.25,
            0.15,
            0.55,
            -0.2,
            0.3,
            0.1,
            -0.2,
            -0.15,
            0.4,
            0.05,
            -0.25,
        ]
    )
    from scipy.stats import wilcoxon

    p = wilcoxon(d).pvalue
    assert 0.025 < p < 0.05 and np.median(d) > 0
    worse = {("crabs", "lad"), ("engel", "lad")}
    units = protocol_units(
        _6c_rows(lambda ds, loss: d if (ds, loss) in worse else -0.1 - 0.01 * np.arange(20))
    )
    top = judge_real("6c", units)[0]
    assert top["verdict"] == "inconclusive" and "raw rule: contradicted" in top["numbers"]
    once = protocol_units(
        _6c_rows(
            lambda ds, loss: d if (ds, loss) == ("crabs", "lad") else -0.1 - 0.01 * np.arange(20)
        )
    )
    assert (
        judge_real("6c", once)[0]["verdict"] == "contradicted"
    )  # alone, the largest p is not inflated


@pytest.mark.slow
def test_the_corrected_t_test_reading_can_flip_a_verdict():
    # P below G on every split (Wilcoxon: p = 2 / 2^20 per cell, confirmed after Holm over 12), but
    # one split carries nearly all of the mean: the corrected resampled t-test (variance inflated by
    # 1/J + n_test/n_train, J − 1 df) finds nothing
    from scipy import stats

    from proxboost.experiments.claims.analysis import nadeau_bengio_p

    d = -np.concatenate([0.001 * (1 + np.arange(19)), [10.0]])
    units = protocol_units(_6c_rows(lambda ds, loss: d))
    rows = {r["scope"]: r for r in judge_real("6c", units)}
    assert rows["all"]["verdict"] == "confirmed"  # the headline stays the Wilcoxon verdict
    second = rows["test=corrected t-test"]
    assert second["verdict"] == "inconclusive" and second["n_support"] == 12
    assert "Wilcoxon confirmed → corrected t-test inconclusive" in second["numbers"]
    assert "cells whose verdict changes: " in second["numbers"]
    assert "lad whitewine confirmed → inconclusive" in second["numbers"]
    # the p-value it read is the formula's, with n_test/n_train = 1/3 (no sizes stored)
    J = d.size
    t = d.mean() / np.sqrt((1 / J + 1 / 3) * d.var(ddof=1))
    p = 2 * stats.t.sf(abs(t), J - 1)
    assert p > 0.05 and nadeau_bengio_p(d, 1 / 3) == pytest.approx(p, rel=1e-12)
    assert f"NB p {p:.2g}" in rows["loss=lad;dataset=whitewine"]["numbers"]
    # only the second-reading row is added: the cell rows are those of the headline
    assert [k for k in rows if k.startswith("test=")] == ["test=corrected t-test"]
    # a clear effect survives the corrected test
    clear = {
        r["scope"]: r
        for r in judge_real("6c", protocol_units(_6c_rows(lambda *_: -0.5 + 0.01 * np.arange(20))))
    }
    assert clear["all"]["verdict"] == clear["test=corrected t-test"]["verdict"] == "confirmed"
    assert "the Wilcoxon verdict survives (confirmed)" in clear["test=corrected t-test"]["numbers"]


@pytest.mark.slow
def test_second_reading_per_reading_and_for_medians_only_criteria(classification_rows):
    units = protocol_units(classification_rows())
    six_h = {r["scope"]: r for r in judge_real("6h", units)}
    assert {k for k in six_h if k.startswith("test=")} == {
        "test=corrected t-test;reading=exponential and hinge",
        "test=corrected t-test;reading=hinge",
    }
    six_f = {r["scope"]: r for r in judge_real("6f", units)}
    second = six_f["test=corrected t-test"]
    assert second["verdict"] == six_f["all"]["verdict"] and "reads no p-value" in second["numbers"]


@pytest.mark.slow
def test_one_protocol_per_verdict_and_missing_cells():
    a = _6c_rows(lambda ds, loss: -0.1 - 0.01 * np.arange(20), datasets=DATASETS[:4])
    b = _6c_rows(
        lambda ds, loss: -0.1 - 0.01 * np.arange(20),
        protocol="reduced/20splits/T1000",
        datasets=DATASETS[4:],
    )
    rows = judge_real("6c", protocol_units(pd.concat([a, b])))
    top = rows[0]
    # every cell is confirmed, but no protocol covers every dataset: an "always" statement stays
    # inconclusive
    assert (
        top["verdict"] == "inconclusive" and top["protocol"] == "paper/20splits/T1000, exact trees"
    )
    assert "4 missing" in top["numbers"] and "reduced/20splits/T1000" in top["numbers"]
    assert {r["protocol"] for r in rows[1:]} == {
        "paper/20splits/T1000, exact trees",
        "reduced/20splits/T1000, exact trees",
    }


def _6a_rows(xgb):
    cells = {}
    rf = G + 0.5 + 0.01 * np.arange(20)
    for ds in DATASETS:
        cells[(ds, "ls", "gradient")] = G
        cells[(ds, "ls", "prox")] = G
        cells[(ds, "ls", "xgboost")] = xgb
        cells[(ds, "ls", "random_forest")] = rf
    return protocol_units(_rows(cells))


@pytest.mark.slow
def test_equivalence_margins_6a():
    jitter = np.tile([1.0, -1.0], 10) * np.linspace(0.001, 0.002, 20)  # within ±0.2 % of the loss
    assert judge_real("6a", _6a_rows(G + jitter))[0]["verdict"] == "confirmed"
    assert (
        judge_real("6a", _6a_rows(G * 1.05 + 0.001 * np.arange(20)))[0]["verdict"] == "contradicted"
    )  # 5 % apart
    wide = np.tile([1.0, -1.0], 10) * 0.1  # ±10 %: interval too wide to tell
    assert judge_real("6a", _6a_rows(G + wide))[0]["verdict"] == "inconclusive"


@pytest.mark.slow
def test_counting_statement_6b():
    def units(winners):
        cells = {}
        for i, ds in enumerate(DATASETS):
            for k, algo in enumerate(
                (
                    "gradient",
                    "prox",
                    "residual_gradient",
                    "residual_prox",
                    "accelerated_gradient",
                    "accelerated_prox",
                    "xgboost",
                    "random_forest",
                )
            ):
                cells[(ds, "ls", algo)] = G + (0.0 if algo == winners[i] else 0.1 + 0.01 * k)
        return protocol_units(_rows(cells))

    assert (
        judge_real("6b", units(["residual_prox"] * 3 + ["xgboost"] * 3))[0]["verdict"]
        == "confirmed"
    )
    assert (
        judge_real("6b", units(["residual_gradient"] + ["prox"] * 5))[0]["verdict"]
        == "contradicted"
    )
    assert (
        judge_real("6b", units(["residual_gradient"] * 2 + ["prox"] * 4))[0]["verdict"]
        == "inconclusive"
    )


# -- the whole table -------------------------------------------------------------------------------
def test_judge_without_data_gives_34_inconclusive_statements():
    claims = judge(pd.DataFrame(), pd.DataFrame(), sha="s")
    top = claims[claims["scope"] == "all"]
    assert tuple(claims.columns) == CLAIMS_COLUMNS
    assert list(top["id"]) == list(STATEMENTS) and len(top) == 34
    assert set(top["verdict"]) == {"inconclusive"} and set(claims["criteria_sha"]) == {"s"}


def test_criteria_sha_is_the_hash_of_docs_claims():
    path = Path(__file__).resolve().parents[1] / "docs" / "claims.md"
    assert criteria_sha() == hashlib.sha256(path.read_bytes()).hexdigest()


def test_scope_order_and_bad_keys():
    assert scope() == "all"
    assert (
        scope(seed=1, loss="lad", depth=3, tie_rule="authors")
        == "loss=lad;depth=3;tie_rule=authors;seed=1"
    )
    assert scope(**{"lambda": 0.1}) == "lambda=0.1"
    with pytest.raises(ValueError, match="scope keys"):
        scope(algo="prox")


def test_noise_read_from_the_run_identity(curve_frame):
    from proxboost.experiments.claims import with_noise_column

    df = curve_frame("intro", "lad", "gradient", 2, np.linspace(1, 0.5, 11))
    df["identity"] = (
        '{"dataset": {"name": "sines", "params": {"noise_std": 0.1, "n_samples": 1000}}, "seed": 0}'
    )
    assert set(with_noise_column(df)["noise_std"]) == {0.1}
    assert with_noise_column(df.drop(columns="identity"))["noise_std"].isna().all()


@pytest.mark.slow
def test_classification_statements_use_the_loss_independent_rows_under_both_losses(
    classification_rows,
):
    units = protocol_units(classification_rows())
    cells = {r["scope"]: r for r in judge_real("6f", units)[1:]}
    # the error podium is judged under hinge too: random forests' single fit stands in for both
    # losses
    for loss in ("exponential", "hinge"):
        assert cells[f"loss={loss};dataset=spam;metric=error"]["n_support"] == 20
    six_i = [r["scope"] for r in judge_real("6i", units)[1:]]
    assert six_i and not any("RF" in s for s in six_i)  # no hinge − exponential for one fit


# -- identical curves ------------------------------------------------------------------------------
def test_first_difference():
    from proxboost.experiments.claims import first_difference

    a = _decay(0.01)
    assert first_difference(a, a.copy()) is None
    b = a.copy()
    b[417:] *= 1 + 1e-12  # the smallest change counts: bit for bit
    assert first_difference(a, b) == 417
    assert first_difference(a, a * (1 + 1e-9)) == 0  # different from t = 0
    assert first_difference(a, a[:300]) is None  # over the common length


def _level_crossings_by_loop(a, b):
    """Brute force: the last iteration at which either curve first reaches a compared level of the
    levels rule: 10^(-k/2) C0 down to max(10 × the floor levels, 1e-12 C0, the lowest value
    reached)."""
    ca, cb = _c(a), _c(b)
    c0, last = a[0], 0
    bottom = max(10 * ca.floor_level, 10 * cb.floor_level, 1e-12 * c0, min(a.min(), b.min()))
    k = 1
    while 10.0 ** (-k / 2) * c0 >= bottom:
        level = 10.0 ** (-k / 2) * c0
        hits = [next((t for t, v in enumerate(y) if v <= level), None) for y in (a, b)]
        last = max([last] + [h for h in hits if h is not None])
        k += 1
    return last


@pytest.mark.parametrize("seed", range(6))
def test_identity_over_the_levels_matches_a_brute_force(seed):
    from proxboost.experiments.claims.criteria import same_over_levels

    rng = np.random.default_rng(seed)
    rate = rng.uniform(0.004, 0.03)
    a = 10.0 ** (-rate * t)
    for split in rng.integers(1, T, 4):
        b = a.copy()
        b[split:] *= 1.5  # parts at ``split``
        last = _level_crossings_by_loop(a, b)
        same = same_over_levels(_c(a), _c(b), "A and B")
        assert bool(same) == (split > last), (split, last)
        if same:
            assert same[0].until == split and same[0].pair == "A and B"


def _2a_frames(curve_frame, hinge15, seed=0, tie_rule=None):
    """Convergence curves where P is faster than G, except at hinge depth 15, where
    ``hinge15(p)`` gives G's curve from P's."""
    frames = []
    for loss in ("lad", "hinge"):
        for d in (3, 15):
            p = _decay(0.02)
            g = hinge15(p) if (loss, d) == ("hinge", 15) else _decay(0.01)
            frames.append(
                curve_frame(
                    "convergence", loss, "prox", d, p, step=1.0, seed=seed, tie_rule=tie_rule
                )
            )
            frames.append(
                curve_frame("convergence", loss, "gradient", d, g, seed=seed, tie_rule=tie_rule)
            )
    return frames


def _part_at(k):
    def g(p):
        out = p.copy()
        out[k:] *= 1.001  # identical before k, different from k on
        return out

    return g


def test_identical_prox_and_gradient_curves_are_named_with_their_first_difference(curve_frame):
    # two seeds; P and G identical at hinge depth 15 until t = 700 and 731; every compared level
    # (down to 1e-12 C0, reached at t = 600) lies before
    parts = {0: 700, 1: 731}
    frames = [f for s, k in parts.items() for f in _2a_frames(curve_frame, _part_at(k), seed=s)]
    rows = judge_synthetic("2a", CurveSet(pd.concat(frames)))
    top, cells = rows[0], {r["scope"]: r for r in rows}
    assert top["verdict"] == "contradicted"
    lead = top["numbers"].split(". ")[0]
    assert (
        "contradicted only in cells of identical curves: hinge depth 15 contradicted"
        f" (P and G identical until t = {min(parts.values())}–{max(parts.values())} in 2 of 2 runs)"
        in lead
    )
    assert (
        "other cells: lad depth 3 confirmed, lad depth 15 confirmed, hinge depth 3 confirmed"
        in lead
    )
    assert "P and G identical until t = 700–731" in cells["loss=hinge;depth=15"]["numbers"]
    assert "identical" not in cells["loss=lad;depth=15"]["numbers"]
    # the numbers are the curves': move where they part and the text follows
    moved = [f for s in (0, 1) for f in _2a_frames(curve_frame, _part_at(650 + s), seed=s)]
    assert (
        "until t = 650–651 in 2 of 2 runs"
        in judge_synthetic("2a", CurveSet(pd.concat(moved)))[0]["numbers"]
    )


def test_curves_that_differ_from_t0_or_before_the_last_level_are_not_called_identical(
    curve_frame,
):
    # G = P·(1 + 1e-9) at every t, t = 0 included: the levels rule sees the same crossings
    # ("similar", so contradicted), but the curves are not identical anywhere
    from0 = judge_synthetic(
        "2a", CurveSet(pd.concat(_2a_frames(curve_frame, lambda p: p * (1 + 1e-9))))
    )
    assert from0[0]["verdict"] == "contradicted" and "identical" not in from0[0]["numbers"]
    # identical until t = 300, but the levels are reached until t = 600: the rule read iterations
    # where the curves differ
    early = judge_synthetic("2a", CurveSet(pd.concat(_2a_frames(curve_frame, _part_at(300)))))
    assert "identical" not in early[0]["numbers"]


def test_curves_identical_throughout(curve_frame):
    frames = []
    for loss in ("lad", "hinge"):
        for d in (3, 15):
            g = _decay(0.01)
            rg = g.copy() if (loss, d) == ("hinge", 15) else _decay(0.02)
            frames.append(curve_frame("convergence", loss, "gradient", d, g))
            frames.append(curve_frame("convergence", loss, "residual_gradient", d, rg))
    rows = judge_synthetic("2d", CurveSet(pd.concat(frames)))
    assert rows[0]["verdict"] == "contradicted"
    assert (
        "hinge depth 15 contradicted (RG and G identical throughout in 1 of 1 runs)"
        in rows[0]["numbers"]
    )


def test_identical_mixed_up_window(curve_frame):
    # 1b: ls P and G identical throughout at depth 3 (the exact equivalence), apart at depth 15
    frames = []
    for loss in ("ls", "exponential"):
        for d in (3, 15):
            g = _decay(0.01)
            p = g.copy() if (loss, d) == ("ls", 3) else g * (1 + 1e-9)
            frames.append(curve_frame("convergence", loss, "gradient", d, g))
            frames.append(curve_frame("convergence", loss, "prox", d, p, step=1.0))
    top = judge_synthetic("1b", CurveSet(pd.concat(frames)))[0]
    assert top["verdict"] == "confirmed"
    assert (
        "identical curves in ls depth 3 confirmed (P and G identical throughout" in top["numbers"]
    )
    assert "exponential depth" not in top["numbers"].split(". ")[0]


# -- readings of an open scope ---------------------------------------------------------------------
def test_reading_filters_cells_by_their_scope():
    from proxboost.experiments.claims import EVERY_CELL, Reading, reading

    hinge = reading("hinge", "why", loss=("hinge",))
    assert hinge.admits("loss=hinge;dataset=spam;metric=loss")
    assert not hinge.admits("loss=exponential;dataset=spam")
    assert hinge.admits("dataset=spam") and hinge.admits("all")  # no loss key: not narrowed
    assert hinge(loss="hinge", dataset="adult") and not hinge(loss="exponential")
    steps = reading("big", "why", **{"lambda": (10.0, 100.0)})
    assert steps.admits(scope(loss="lad", **{"lambda": 10.0})) and steps(**{"lambda": 100.0})
    assert not steps.admits(scope(loss="lad", **{"lambda": 0.1}))
    assert EVERY_CELL.admits("loss=x;depth=3")
    with pytest.raises(ValueError, match="reading keys"):
        Reading("x", (("algo", ("P",)),), "why")
    with pytest.raises(ValueError, match="without ';' or '='"):
        reading("a=b", "why")


def _4d_frames(curve_frame, ap_small_lambda_worse):
    """AP better than AG at every λ (lower minimal test loss, lower training loss at T), except at
    λ = 0.01 when ``ap_small_lambda_worse``."""
    frames = []
    for loss in ("lad", "hinge"):
        frames.append(
            curve_frame(
                "proximal_step",
                loss,
                "accelerated_gradient",
                3,
                _decay(0.001),
                test=np.full(T + 1, 1.0),
            )
        )
        for s in (0.01, 0.1, 1.0, 10.0, 100.0):
            worse = ap_small_lambda_worse and s == 0.01
            frames.append(
                curve_frame(
                    "proximal_step",
                    loss,
                    "accelerated_prox",
                    3,
                    _decay(0.0005 if worse else 0.002),
                    test=np.full(T + 1, 1.2 if worse else 0.8),
                    step=s,
                )
            )
    return frames


def test_a_statement_with_two_readings_reports_both(curve_frame):
    rows = judge_synthetic("4d", CurveSet(pd.concat(_4d_frames(curve_frame, True))))
    by = {r["scope"]: r for r in rows}
    # headline λ ≥ 0.1: every cell confirmed; every λ: λ = 0.01 contradicts it
    assert by["all"]["verdict"] == "confirmed"
    assert by["reading=λ ≥ 0.1"]["verdict"] == "confirmed"
    assert by["reading=every λ"]["verdict"] == "contradicted"
    assert "readings: λ ≥ 0.1 (headline) confirmed, every λ contradicted" in by["all"]["numbers"]
    assert "8 cells per run" in by["reading=λ ≥ 0.1"]["numbers"]
    assert "10 cells per run" in by["reading=every λ"]["numbers"]
    # the cell rows are the headline's: λ = 0.01 is judged only inside the other reading
    cells = [s for s in by if s != "all" and not s.startswith("reading=")]
    assert len(cells) == 8 and not any("lambda=0.01" in s for s in cells)
    same = judge_synthetic("4d", CurveSet(pd.concat(_4d_frames(curve_frame, False))))
    assert {r["scope"]: r["verdict"] for r in same}["reading=every λ"] == "confirmed"


def _holm(p):
    """Holm's step-down adjustment, written out: sorted p times (m − rank), running maximum."""
    p = np.asarray(p, float)
    order = np.argsort(p, kind="stable")
    adj = np.minimum(1.0, np.maximum.accumulate(p[order] * (len(p) - np.arange(len(p)))))
    out = np.empty_like(adj)
    out[order] = adj
    return out


@pytest.mark.slow
def test_a_real_world_reading_holm_adjusts_over_its_own_cells(classification_rows):
    from scipy.stats import wilcoxon

    from proxboost.experiments.claims.realworld import (
        judge_ap_beats_g_and_ag_classification as judge_6h,
    )

    raw = classification_rows()
    ap = (raw["algo"] == "accelerated_prox") & (raw["loss"] == "exponential")
    raw.loc[ap, "test_loss"] += 1.0  # AP far worse on the exponential loss: contradicted there
    raw.loc[ap, "test_error"] += 0.1
    units = protocol_units(raw)
    rows = {r["scope"]: r for r in judge_real("6h", units)}
    assert rows["all"]["verdict"] == "contradicted"
    assert rows["reading=exponential and hinge"]["verdict"] == "contradicted"
    assert rows["reading=hinge"]["verdict"] == "inconclusive"  # random draws on hinge
    assert (
        "readings: exponential and hinge (headline) contradicted, hinge inconclusive"
        in rows["all"]["numbers"]
    )
    assert rows["reading=hinge"]["n_support"] == 4 and rows["all"]["n_support"] == 8
    # the hinge reading's Holm p-values are adjusted over its 4 cells, not over all 8
    hinge = STATEMENTS["6h"].readings[1]
    _, _, cells = judge_6h(units[0], units, hinge)
    g = raw[raw["loss"] == "hinge"].set_index(["algo", "split"])
    raw_p, keys = [], list(cells)
    for k in keys:
        b = "gradient" if "AP vs G;" in k else "accelerated_gradient"
        metric = "test_loss" if k.endswith("metric=loss") else "test_error"
        d = g.loc["accelerated_prox", metric].to_numpy() - g.loc[b, metric].to_numpy()
        raw_p.append(wilcoxon(d).pvalue)
    for k, adj in zip(keys, _holm(raw_p)):
        assert f"Holm p {adj:.2g}" in cells[k].numbers


@pytest.mark.slow
def test_every_real_world_judge_judges_only_the_cells_its_reading_keeps(classification_rows):
    from proxboost.experiments.claims import Reading
    from proxboost.experiments.claims.statements import REAL_WORLD

    methods = (
        "gradient",
        "prox",
        "residual_gradient",
        "residual_prox",
        "accelerated_gradient",
        "accelerated_prox",
        "xgboost",
    )
    rng = np.random.default_rng(0)
    regression = _rows(
        {
            (ds, loss, algo): rng.uniform(1, 2, 20)
            for ds in DATASETS
            for loss in ("ls", "lad", "pinball")
            for algo in methods + (("random_forest",) if loss == "ls" else ())
        }
    )
    units = protocol_units(pd.concat([regression, classification_rows()]))
    nothing = Reading("no dataset", (("dataset", ("none",)),), "keeps no cell")
    one = {ds: Reading(ds, (("dataset", (ds,)),), "one dataset") for ds in ("spam", "crabs")}
    judged = set()
    for sid, s in STATEMENTS.items():
        if s.experiment != REAL_WORLD:
            continue
        for u in units:
            every = set(s.judge(u, units)[2])
            assert s.judge(u, units, nothing)[2] == {}, sid
            for ds, r in one.items():
                kept = set(s.judge(u, units, r)[2])
                assert kept == {k for k in every if f"dataset={ds}" in k}, (sid, ds)
                judged |= {sid} if kept else set()
    assert judged == {sid for sid, s in STATEMENTS.items() if s.experiment == REAL_WORLD}


def test_claims_cite_the_papers_sections_not_lines_of_its_latex_source():
    """The registry's notes cite LaTeX lines ("l. 822"), which a reader of the paper cannot use:
    claims.csv (the stored one, written by ``make figures``) says their sections."""
    from proxboost.experiments.claims.statements import STATEMENTS as registry

    assert any("(l. " in repr(s) for s in registry.values()), "nothing left to convert"
    stored = pd.read_csv(Path(__file__).resolve().parents[1] / "results" / "claims.csv")
    texts = stored[["scope", "numbers", "protocol"]].astype(str).agg(" ".join, axis=1)
    assert not texts.str.contains(r"\bl\. ?\d", regex=True).any()
    assert texts.str.contains("(Section 5.1.", regex=False).any()
