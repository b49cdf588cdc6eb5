"""Judges of the real-world statements: each takes one protocol unit (and all units) and returns
``(verdict, text, {scope: Cell})`` from paired comparisons of stored rows.

``keep`` (a :class:`~proxboost.experiments.claims.criteria.Reading`, called with a cell's scope
keys) says which cells a judge judges: the cells it leaves out are neither compared nor expected, so
the Holm adjustment and the counting rules run over the kept cells only (docs/claims.md, scopes).
``keep.p(comparison)`` is the p-value the judge reads: the Wilcoxon p-value, or under the second
reading (``keep.corrected()``) the Nadeau–Bengio corrected resampled t-test's, Holm-adjusted over
the same cells; nothing else in a criterion changes with it. The judges of
:data:`MEDIANS_ONLY` compare medians and read no p-value, so the test does not change their
verdicts.
"""

from __future__ import annotations

import math

from proxboost.experiments.claims.analysis import (
    ALPHA,
    Comparison,
    ProtocolUnit,
    compare,
    holm,
    paired_values,
)
from proxboost.experiments.claims.criteria import (
    CONFIRMED,
    CONTRADICTED,
    EVERY_CELL,
    INCONCLUSIVE,
    Cell,
    count_rule,
    scope,
)
from proxboost.experiments.store.naming import (
    LS_AND_ERROR_ONLY,
    PAPER_CLASSIFICATION_LOSSES,
    PAPER_METHODS,
    PAPER_REGRESSION_LOSSES,
    short,
)


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


def _every_cell_rule(verdicts, missing) -> str:
    """Contradicted when a cell is; confirmed when every cell is and no expected cell is
    missing; inconclusive otherwise."""
    if CONTRADICTED in verdicts:
        return CONTRADICTED
    if verdicts and all(x == CONFIRMED for x in verdicts) and missing <= 0:
        return CONFIRMED
    return INCONCLUSIVE


def _holm_adjusted(comparisons, keys, keep) -> dict:
    """{key: Holm-adjusted p-value} over ``comparisons[key]`` for ``keys``, each p-value read
    by ``keep``'s test (Wilcoxon, or the corrected t-test of the second reading)."""
    return dict(zip(keys, holm([keep.p(comparisons[k]) for k in keys])))


def _always(unit, comparisons, expected_cells, keep=EVERY_CELL):
    """The "always" rule on ``comparisons`` = {scope: Comparison} (Holm over them, p-values of
    ``keep``'s test).

    ``expected_cells``: how many cells every-dataset coverage needs. Returns (verdict, text, cells).
    """
    keys = [k for k, c in comparisons.items() if c.n > 0]
    adj = _holm_adjusted(comparisons, keys, keep)
    nb = keep.is_corrected
    cells = {
        k: Cell(comparisons[k].verdict(adj[k]), comparisons[k].text(adj[k], nb), comparisons[k].n)
        for k in keys
    }
    raw = [comparisons[k].verdict(keep.p(comparisons[k])) for k in keys]
    held = [c.verdict for c in cells.values()]
    missing = expected_cells - len(keys)
    v = _every_cell_rule(held, missing)
    raw_v = _every_cell_rule(raw, missing)
    text = (
        f"Holm: {held.count(CONFIRMED)} confirmed, {held.count(CONTRADICTED)} contradicted,"
        f" {held.count(INCONCLUSIVE)} inconclusive of {len(keys)} cells ({max(missing, 0)}"
        f" missing); raw rule: {raw_v}"
        f" ({raw.count(CONFIRMED)}/{raw.count(CONTRADICTED)}/{raw.count(INCONCLUSIVE)})"
    )
    return v, text, cells


def judge_ls_prox_equals_gradient_vs_baselines(unit, units, keep=EVERY_CELL):
    """Statement 6a: ls: P = G, comparable to XGBoost, better than random forests (criterion:
    docs/claims.md, 6a).
    """
    exp = _expected_datasets(units, ("ls",))
    pairs = [f"{short(a)} ~ {short(b)}" for a, b in _6A_EQUIV] + [
        f"{short(a)} vs RF" for a in ("gradient", "prox")
    ]
    n_exp = sum(keep(loss="ls", dataset=ds, methods=m) for ds in exp for m in pairs)
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
        for a, b in _6A_EQUIV:
            m = f"{short(a)} ~ {short(b)}"
            c = _cmp(unit, ds, "ls", a, b)
            if c.n and keep(loss="ls", dataset=ds, methods=m):
                equiv[scope(dataset=ds, methods=m)] = (c, scale)
        for a in ("gradient", "prox"):
            m = f"{short(a)} vs RF"
            c = _cmp(unit, ds, "ls", a, "random_forest")
            if c.n and keep(loss="ls", dataset=ds, methods=m):
                better[scope(dataset=ds, methods=m)] = c
    comps = {k: c for k, (c, _) in equiv.items()} | better
    adj = _holm_adjusted(comps, list(comps), keep)
    nb = keep.is_corrected
    cells = {}
    for k, (c, s) in equiv.items():
        rel, lo, hi = c.median / s, c.hl_low / s, c.hl_high / s
        if abs(rel) <= 0.01 and lo >= -0.02 and hi <= 0.02:
            v = CONFIRMED
        elif adj[k] < ALPHA and abs(rel) > 0.02:
            v = CONTRADICTED
        else:
            v = INCONCLUSIVE
        tested = f"NB p {c.p_nb:.2g}, Holm NB p" if nb else "Holm p"
        cells[k] = Cell(
            v,
            f"median Δ {rel:+.2%} of G's median loss, HL 95 % [{lo:+.2%}, {hi:+.2%}], "
            f"p {c.p:.2g}, {tested} {adj[k]:.2g}",
            c.n,
        )
    for k, c in better.items():
        cells[k] = Cell(c.verdict(adj[k]), c.text(adj[k], nb), c.n)
    held = [c.verdict for c in cells.values()]
    missing = n_exp - len(cells)
    v = _every_cell_rule(held, missing)
    text = (
        f"{held.count(CONFIRMED)} confirmed, {held.count(CONTRADICTED)} contradicted, "
        f"{held.count(INCONCLUSIVE)} inconclusive of {len(cells)} judged comparisons "
        f"({missing} of {n_exp} missing: 5 per dataset with ls rows)"
    )
    return v, text, cells


#: the equivalences of 6a (P = G, both comparable to XGBoost)
_6A_EQUIV = (("prox", "gradient"), ("gradient", "xgboost"), ("prox", "xgboost"))


def _n_splits(unit, ds, loss) -> int:
    r = unit.rows
    return int(r[(r["dataset"] == ds) & (r["loss"] == loss)]["split"].nunique())


def _winners(unit, ds, loss, metric, methods, k=1):
    g = unit.rows[
        (unit.rows["dataset"] == ds) & (unit.rows["loss"] == loss) & unit.rows["algo"].isin(methods)
    ]
    med = g.groupby("algo")[metric].median().dropna().sort_values(kind="stable")
    return list(med.index[:k]), med


def judge_ls_residual_most_accurate(unit, units, keep=EVERY_CELL):
    """Statement 6b: ls: residual boosting most accurate on 3 of the 6 datasets (criterion:
    docs/claims.md, 6b).
    """
    exp = [ds for ds in _expected_datasets(units, ("ls",)) if keep(loss="ls", dataset=ds)]
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


def judge_prox_beats_gradient_lad_pinball(unit, units, keep=EVERY_CELL):
    """Statement 6c: lad, pinball: P always better than G (criterion: docs/claims.md, 6c)."""
    cells = [
        (loss, ds)
        for loss in ("lad", "pinball")
        for ds in _expected_datasets(units, (loss,))
        if keep(loss=loss, dataset=ds)
    ]
    comps = {}
    for loss, ds in cells:
        c = _cmp(unit, ds, loss, "prox", "gradient")
        if c.n:
            comps[scope(loss=loss, dataset=ds)] = c
    return _always(unit, comps, len(cells), keep)


def judge_prox_or_rp_most_accurate_lad_pinball(unit, units, keep=EVERY_CELL):
    """Statement 6d: lad, pinball: P or RP most accurate in most situations (criterion:
    docs/claims.md, 6d).
    """
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
            if not keep(loss=loss, dataset=ds):
                continue
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


def judge_ap_beats_ag_except_engel(unit, units, keep=EVERY_CELL):
    """Statement 6e: lad, pinball: AP better than AG, except on Engel (criterion: docs/claims.md,
    6e).
    """
    comps, engel = {}, {}
    n_exp = 0
    for loss in ("lad", "pinball"):
        for ds in _expected_datasets(units, (loss,)):
            if not keep(loss=loss, dataset=ds):
                continue
            c = _cmp(unit, ds, loss, "accelerated_prox", "accelerated_gradient")
            if ds == "engel":
                if c.n:
                    engel[scope(loss=loss, dataset=ds)] = c
                continue
            n_exp += 1
            if c.n:
                comps[scope(loss=loss, dataset=ds)] = c
    keys = list(comps)
    adj = _holm_adjusted(comps, keys, keep)
    nb = keep.is_corrected
    cells = {k: Cell(comps[k].verdict(adj[k]), comps[k].text(adj[k], nb), comps[k].n) for k in keys}
    for k, c in engel.items():
        cells[k] = Cell(
            c.verdict(keep.p(c)),
            "reported, not counted (the paper's exception): " + c.text(corrected=nb),
            c.n,
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


def judge_accelerated_not_more_accurate_regression(unit, units, keep=EVERY_CELL):
    """Statement 6j: regression: accelerated variants not more accurate than plain ones (criterion:
    docs/claims.md, 6j).
    """
    cells, better, n_exp = {}, 0, 0
    for loss in PAPER_REGRESSION_LOSSES:
        for ds in _expected_datasets(units, (loss,)):
            for acc, plain in (("accelerated_gradient", "gradient"), ("accelerated_prox", "prox")):
                m = f"{short(acc)} vs {short(plain)}"
                if not keep(loss=loss, dataset=ds, methods=m):
                    continue
                n_exp += 1
                c = _cmp(unit, ds, loss, acc, plain)
                if not c.n:
                    continue
                isb = c.verdict(keep.p(c)) == CONFIRMED
                better += isb
                cells[scope(loss=loss, dataset=ds, methods=m)] = Cell(
                    CONTRADICTED if isb else CONFIRMED,
                    ("accelerated confirmed better: " if isb else "")
                    + c.text(corrected=keep.is_corrected),
                    c.n,
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


def judge_classification_podium(unit, units, keep=EVERY_CELL):
    """Statement 6f: classification: P, RP, RG and XGBoost share the podium (criterion:
    docs/claims.md, 6f).
    """
    podium = ("prox", "residual_prox", "residual_gradient", "xgboost")
    cells, filled, seen, n_exp = {}, 0, set(), 0
    for ds in _expected_datasets(units, PAPER_CLASSIFICATION_LOSSES):
        for loss in PAPER_CLASSIFICATION_LOSSES:
            for metric in ("test_loss", "test_error"):
                if not keep(loss=loss, dataset=ds, metric=_metric_name(metric)):
                    continue
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


def judge_prox_beats_gradient_hinge(unit, units, keep=EVERY_CELL):
    """Statement 6g: hinge: P or RP always better than G and RG (loss and error) (criterion:
    docs/claims.md, 6g).
    """
    exp = _expected_datasets(units, ("hinge",))
    judged = [
        (ds, metric)
        for ds in exp
        for metric in ("test_loss", "test_error")
        if keep(loss="hinge", dataset=ds, metric=_metric_name(metric))
    ]
    comps = {}
    for ds, metric in judged:
        for a in ("prox", "residual_prox"):
            for b in ("gradient", "residual_gradient"):
                c = _cmp(unit, ds, "hinge", a, b, metric)
                if c.n:
                    comps[(ds, metric, a, b)] = c
    keys = list(comps)
    adj = _holm_adjusted(comps, keys, keep)
    nb = keep.is_corrected
    cells = {}
    for ds, metric in judged:
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
            "; ".join(f"{short(k[2])} vs {short(k[3])}: {comps[k].text(adj[k], nb)}" for k in ks),
            comps[ks[0]].n,
        )
    held = [c.verdict for c in cells.values()]
    missing = len(judged) - len(cells)
    v = _every_cell_rule(held, missing)
    return (
        v,
        (
            f"{held.count(CONFIRMED)} confirmed, {held.count(CONTRADICTED)} contradicted,"
            f" {held.count(INCONCLUSIVE)} inconclusive of {len(cells)} (dataset, metric) cells"
            f" ({missing} missing; Holm over {len(keys)} comparisons)"
        ),
        cells,
    )


def judge_ap_beats_g_and_ag_classification(unit, units, keep=EVERY_CELL):
    """Statement 6h: classification: AP always better than G and AG (loss and accuracy) (criterion:
    docs/claims.md, 6h).
    """
    exp = _expected_datasets(units, PAPER_CLASSIFICATION_LOSSES)
    comps, n_exp = {}, 0
    for ds in exp:
        for loss in PAPER_CLASSIFICATION_LOSSES:
            for metric in ("test_loss", "test_error"):
                for b in ("gradient", "accelerated_gradient"):
                    keys = dict(
                        loss=loss,
                        dataset=ds,
                        methods=f"AP vs {short(b)}",
                        metric=_metric_name(metric),
                    )
                    if not keep(**keys):
                        continue
                    n_exp += 1
                    c = _cmp(unit, ds, loss, "accelerated_prox", b, metric)
                    if c.n:
                        comps[scope(**keys)] = c
    return _always(unit, comps, n_exp, keep)


def judge_hinge_rarely_big_advantage(unit, units, keep=EVERY_CELL):
    """Statement 6i: hinge instead of exponential rarely a big advantage in error (criterion:
    docs/claims.md, 6i).
    """
    exp = _expected_datasets(units, PAPER_CLASSIFICATION_LOSSES)
    methods = [m for m in PAPER_METHODS if m not in LS_AND_ERROR_ONLY]
    cells, big, n_exp = {}, 0, 0
    for ds in exp:
        for m in methods:
            if not keep(dataset=ds, methods=short(m), metric="error"):
                continue
            n_exp += 1
            va, vb = paired_values(unit.rows, ds, "hinge", m, m, "test_error", loss_b="exponential")
            c = compare(va, vb, _ratio(unit, ds))
            if not c.n:
                continue
            isbig = c.median <= -0.01 and keep.p(c) < ALPHA
            big += isbig
            cells[scope(dataset=ds, methods=short(m), metric="error")] = Cell(
                CONTRADICTED if isbig else CONFIRMED,
                ("big advantage: " if isbig else "") + c.text(corrected=keep.is_corrected),
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


#: judges that compare medians only and read no p-value: their second reading (the corrected
#: resampled t-test in place of Wilcoxon) gives their headline verdict by construction
MEDIANS_ONLY = (
    judge_ls_residual_most_accurate,
    judge_prox_or_rp_most_accurate_lad_pinball,
    judge_classification_podium,
)
