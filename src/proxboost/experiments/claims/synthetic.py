"""Judges of the synthetic statements (convergence, proximal step, introduction).

Each judge takes one run (:class:`~proxboost.experiments.claims.curveset.RunView`) and returns its
judged cells, ``{scope: Cell}``; :func:`proxboost.experiments.claims.judge_synthetic` combines the
runs.
"""

from __future__ import annotations

import math

import numpy as np

from proxboost.experiments.claims.criteria import (
    CONFIRMED,
    CONTRADICTED,
    FIT_MIN_POINTS,
    INCONCLUSIVE,
    LOWER_BY,
    RANK_DECREASING,
    TEST_MIN_WITHIN,
    Cell,
    Same,
    combine_all,
    faster_verdict,
    first_difference,
    first_reach,
    fmt_g,
    kept_levels,
    levels_rule,
    linear_fit,
    max_relative_gap,
    mixed_up,
    rise,
    same_over_levels,
    same_over_window,
    same_through,
    scope,
    spearman,
)
from proxboost.experiments.claims.curveset import missing_cell
from proxboost.experiments.store.naming import (
    CONVERGENCE_DEPTHS,
    STEP_GRID,
    TIE_LOSSES,
    short,
)


# -- convergence -----------------------------------------------------------------------------------
def judge_ls_prox_equals_gradient(R):
    """Statement 1a: ls: proximal and gradient boosting are exactly equivalent (criterion:
    docs/claims.md, 1a).
    """
    out = {}
    for d in CONVERGENCE_DEPTHS:
        g, p = R.get("ls", "gradient", d), R.get("ls", "prox", d, 1.0)
        if g is None or p is None:
            out[scope(loss="ls", depth=d)] = missing_cell("ls G/P")
            continue
        gap = max_relative_gap(p, g)
        v = CONFIRMED if gap <= 1e-6 else CONTRADICTED if gap > 1e-3 else INCONCLUSIVE
        if not np.isfinite(gap):
            v = INCONCLUSIVE
        out[scope(loss="ls", depth=d)] = Cell(
            v,
            f"max |C_P − C_G|/C_G before the floor (t < {min(g.end, p.end)}) {gap:.2g}",
            same=same_over_window(p, g, "P and G"),
        )
    return out


def _mixed_up_cells(R, losses, a, b, label):
    """ "Curves mixed up" per (loss, depth) for runs a and b, each an (algo, step) pair."""
    out = {}
    for loss in losses:
        for d in CONVERGENCE_DEPTHS:
            ca, cb = R.get(loss, a[0], d, a[1]), R.get(loss, b[0], d, b[1])
            if ca is None or cb is None:
                out[scope(loss=loss, depth=d)] = missing_cell(f"{loss} {label}")
                continue
            v, gap = mixed_up(ca, cb)
            out[scope(loss=loss, depth=d)] = Cell(
                v,
                f"max gap {gap:.3g} decade before t = {min(ca.end, cb.end)}",
                same=same_over_window(ca, cb, f"{short(a[0])} and {short(b[0])}"),
            )
    return out


def judge_prox_gradient_mixed_up_ls_exponential(R, losses=("ls", "exponential")):
    """Statement 1b: ls, exponential: P and G behave exactly the same (curves mixed up) (criterion:
    docs/claims.md, 1b).
    """
    return _mixed_up_cells(R, losses, ("prox", 1.0), ("gradient", None), "G/P")


def judge_linear_convergence_deeper_steeper_ls_exponential(R):
    """Statement 1c: ls, exponential: linear convergence, steeper with deeper trees (criterion:
    docs/claims.md, 1c).
    """
    out = {}
    for loss in ("ls", "exponential"):
        # one cell per method: the sentence names proximal boosting, the criteria also G (readings)
        for algo, step in (("gradient", None), ("prox", 1.0)):
            sc = scope(loss=loss, methods=short(algo))
            fits = {d: R.get(loss, algo, d, step) for d in CONVERGENCE_DEPTHS}
            fits = {d: linear_fit(c) if c is not None else None for d, c in fits.items()}
            if any(f is None for f in fits.values()):
                out[sc] = Cell(
                    INCONCLUSIVE,
                    f"no fit window of {FIT_MIN_POINTS} points above the floor or no curve",
                )
                continue
            (s3, r3, _), (s15, r15, _) = fits[3], fits[15]
            ratio = s15 / s3 if s3 < 0 else math.nan
            if min(r3, r15) < 0.9 or not (ratio > 1.0):
                v = CONTRADICTED
            elif min(r3, r15) >= 0.98 and ratio >= 1.5:
                v = CONFIRMED
            else:
                v = INCONCLUSIVE
            out[sc] = Cell(v, f"R² {r3:.3f} (d3) / {r15:.3f} (d15), slope d15/d3 {ratio:.2f}")
    return out


def judge_residual_not_helping_ls_exponential(R, losses=("ls", "exponential")):
    """Statement 1d: ls, exponential: the residual does not help convergence (criterion:
    docs/claims.md, 1d).
    """
    out = {}
    for loss in losses:
        for d in CONVERGENCE_DEPTHS:
            vs, notes, same = [], [], ()
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
                same += same_over_levels(a, b, f"{short(res)} and {short(plain)}")
            out[scope(loss=loss, depth=d)] = Cell(combine_all(vs), "; ".join(notes), same=same)
    return out


def _faster_cells(R, a_algo, b_algo, losses=("lad", "hinge")):
    out = {}
    for loss in losses:
        for d in CONVERGENCE_DEPTHS:
            a = R.get(loss, a_algo, d, 1.0 if "prox" in a_algo else None)
            b = R.get(loss, b_algo, d, 1.0 if "prox" in b_algo else None)
            if a is None or b is None:
                out[scope(loss=loss, depth=d)] = missing_cell(
                    f"{loss} {short(a_algo)}/{short(b_algo)}"
                )
                continue
            outcome, num = levels_rule(a, b)
            out[scope(loss=loss, depth=d)] = Cell(
                faster_verdict(outcome),
                f"{short(a_algo)} vs {short(b_algo)}: {outcome} ({num})",
                same=same_over_levels(a, b, f"{short(a_algo)} and {short(b_algo)}"),
            )
    return out


def judge_prox_faster_than_gradient_lad_hinge(R, losses=("lad", "hinge")):
    """Statement 2a: lad, hinge: P converges faster than G (criterion: docs/claims.md, 2a)."""
    return _faster_cells(R, "prox", "gradient", losses)


def judge_residual_helps_gradient_lad_hinge(R, losses=("lad", "hinge")):
    """Statement 2d: lad, hinge: the residual helps G converge (RG faster than G) (criterion:
    docs/claims.md, 2d).
    """
    return _faster_cells(R, "residual_gradient", "gradient", losses)


def judge_residual_prox_like_prox_lad_hinge(R, losses=("lad", "hinge")):
    """Statement 2e: lad, hinge: RP behaves like P (curves mixed up) (criterion: docs/claims.md,
    2e).
    """
    return _mixed_up_cells(R, losses, ("residual_prox", 1.0), ("prox", 1.0), "RP/P")


def judge_gradient_not_converging_hinge(R):
    """Statement 2b: hinge: G does not seem to converge (criterion: docs/claims.md, 2b)."""
    out = {}
    for d in CONVERGENCE_DEPTHS:
        g, p = R.get("hinge", "gradient", d), R.get("hinge", "prox", d, 1.0)
        if g is None or p is None:
            out[scope(loss="hinge", depth=d)] = missing_cell("hinge G/P")
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


def judge_prox_almost_linear_lad_hinge(R):
    """Statement 2c: lad, hinge: P's convergence almost linear (criterion: docs/claims.md, 2c)."""
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


def judge_pinball_like_lad_logistic_like_exponential(R):
    """Statement 1e: pinball behaves like lad, logistic like exponential (criterion:
    docs/claims.md, 1e).
    """
    out = {}
    pairs = (
        (
            "pinball",
            "lad",
            (
                ("2a", judge_prox_faster_than_gradient_lad_hinge),
                ("2d", judge_residual_helps_gradient_lad_hinge),
                ("2e", judge_residual_prox_like_prox_lad_hinge),
            ),
        ),
        (
            "logistic",
            "exponential",
            (
                ("1b", judge_prox_gradient_mixed_up_ls_exponential),
                ("1d", judge_residual_not_helping_ls_exponential),
            ),
        ),
    )
    for new, ref, checks in pairs:
        if all(R.get(new, "gradient", d) is None for d in CONVERGENCE_DEPTHS):
            out[scope(loss=new)] = Cell(INCONCLUSIVE, f"no {new} convergence curves stored", 0)
            continue
        for sid, fn in checks:
            a, b = fn(R, (new,)), fn(R, (ref,))
            for d in CONVERGENCE_DEPTHS:
                ca, cb = a[scope(loss=new, depth=d)], b[scope(loss=ref, depth=d)]
                va, vb = ca.verdict, cb.verdict
                v = (
                    CONFIRMED
                    if va == vb
                    else CONTRADICTED
                    if {va, vb} == {CONFIRMED, CONTRADICTED}
                    else INCONCLUSIVE
                )
                same = tuple(
                    Same(f"{loss}: {x.pair}", x.until)
                    for loss, c in ((new, ca), (ref, cb))
                    for x in c.same
                )
                out[scope(loss=new, depth=d, methods=sid)] = Cell(
                    v, f"{sid}: {new} {va}, {ref} {vb}", same=same
                )
    return out


def judge_same_vs_iterations_and_seconds(R):
    """Statement 5: same behaviour vs iterations and vs seconds; a proximal step costs no more
    (criterion: docs/claims.md, 5).
    """
    out = {}
    for loss in ("ls", "exponential", "lad", "hinge"):
        for d in CONVERGENCE_DEPTHS:
            p, g = R.get(loss, "prox", d, 1.0), R.get(loss, "gradient", d)
            if p is None or g is None:
                out[scope(loss=loss, depth=d)] = missing_cell(f"{loss} P/G")
                continue
            end = min(p.end, g.end)
            if end < 2:
                out[scope(loss=loss, depth=d)] = Cell(INCONCLUSIVE, "no iteration above the floors")
                continue
            ratio = float(
                np.median(np.diff(p.seconds[: end + 1])) / np.median(np.diff(g.seconds[: end + 1]))
            )
            notes = [f"median s/iteration P/G {ratio:.2f} over t ≤ {end}"]
            same, flips, identical = True, False, ()
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
                    identical += same_over_levels(a, b, f"{short(a_algo)} and {short(b_algo)}")
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
            out[scope(loss=loss, depth=d)] = Cell(v, "; ".join(notes), same=identical)
    return out


# -- proximal step --------------------------------------------------------------------------------
#: the losses of the proximal-step experiment
PROXIMAL_STEP_LOSSES = ("lad", "hinge")


def _step_curves(R, loss, algo):
    return {s: R.get(loss, algo, 3, s) for s in STEP_GRID}


def _over_steps(R, out):
    """(scope, curves over STEP_GRID) of each proximal method on lad and hinge; a method missing
    a λ gets its missing cell in ``out`` instead."""
    for loss in PROXIMAL_STEP_LOSSES:
        for algo in ("prox", "residual_prox", "accelerated_prox"):
            cur = _step_curves(R, loss, algo)
            sc = scope(loss=loss, methods=short(algo))
            if any(c is None for c in cur.values()):
                out[sc] = missing_cell(f"{loss} {short(algo)} at some λ")
            else:
                yield sc, list(cur.values())


def judge_bigger_step_faster_train(R):
    """Statement 3a: bigger λ, faster decrease of the training loss (criterion: docs/claims.md,
    3a).
    """
    out = {}
    for sc, cs in _over_steps(R, out):
        levels = kept_levels(cs[0].c0, [c.floor_level for c in cs], min(c.train.min() for c in cs))
        lam = np.log10(STEP_GRID)
        rhos, times = [], []
        for L in levels:
            t = np.array([first_reach(c.train, np.arange(c.T + 1), L) for c in cs])
            if not np.isfinite(t).any():
                continue
            rhos.append(spearman(lam, np.where(np.isfinite(t), t, 1e12)))
            times.append(t)
        if len(rhos) < 2:
            out[sc] = Cell(INCONCLUSIVE, f"{len(rhos)} level(s) above the floors")
            continue
        same = _same_steps(cs, np.array(times))
        rhos = np.array(rhos)
        v = (
            CONFIRMED
            if np.all(rhos <= RANK_DECREASING)
            else CONTRADICTED
            if np.sum(rhos >= 0) > len(rhos) / 2
            else INCONCLUSIVE
        )
        out[sc] = Cell(
            v,
            f"Spearman ρ(λ, t(L)) over {len(rhos)} levels: " + ", ".join(f"{r:.2f}" for r in rhos),
            same=same,
        )
    return out


def _same_steps(cs, times):
    """Neighbouring λ of the grid whose training curves are identical through every compared level
    (``times``: levels × λ, t(L) of each curve): their t(L) tie at every level."""
    out = ()
    for i in range(len(cs) - 1):
        t = times[:, i : i + 2]
        if np.isfinite(t).any():
            last = float(t[np.isfinite(t)].max())
            out += same_through(
                cs[i], cs[i + 1], last, f"λ = {STEP_GRID[i]:g} and {STEP_GRID[i + 1]:g}"
            )
    return out


def judge_bigger_step_faster_test(R):
    """Statement 3b: bigger λ, faster decrease of the test loss (criterion: docs/claims.md, 3b)."""
    out = {}
    for sc, cs in _over_steps(R, out):
        ts = np.array([float(np.argmax(c.test <= TEST_MIN_WITHIN * c.test.min())) for c in cs])
        rho = spearman(np.log10(STEP_GRID), ts)
        v = CONFIRMED if rho <= RANK_DECREASING else CONTRADICTED if rho >= 0 else INCONCLUSIVE
        # t* reads the whole test curve: neighbouring λ tie when their test curves never differ
        same = tuple(
            Same(f"λ = {STEP_GRID[i]:g} and {STEP_GRID[i + 1]:g} (test)", None)
            for i in range(len(cs) - 1)
            if first_difference(cs[i].test, cs[i + 1].test) is None
        )
        out[sc] = Cell(
            v,
            f"t* (test within 1 % of its minimum) per λ {', '.join(fmt_g(t) for t in ts)}; ρ"
            f" {rho:.2f}",
            same=same,
        )
    return out


def judge_large_step_prox_faster_train(R):
    """Statement 3c: large enough λ: P faster than G on the training loss (criterion:
    docs/claims.md, 3c).
    """
    out = {}
    for loss in PROXIMAL_STEP_LOSSES:
        g = R.get(loss, "gradient", 3)
        cur = _step_curves(R, loss, "prox")
        if g is None or any(c is None for c in cur.values()):
            out[scope(loss=loss)] = missing_cell(f"{loss} G or P at some λ")
            continue
        outcomes = {s: levels_rule(c, g)[0] for s, c in cur.items()}
        same = tuple(
            x for s, c in cur.items() for x in same_over_levels(c, g, f"P (λ = {s:g}) and G")
        )
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
            same=same,
        )
    return out


def judge_prox_below_gradient_test_moderate_steps(R):
    """Statement 3d: test loss: P and RP below G and RG for λ in 0.1–10 (criterion: docs/claims.md,
    3d).
    """
    out = {}
    for loss in PROXIMAL_STEP_LOSSES:
        g, rg = R.get(loss, "gradient", 3), R.get(loss, "residual_gradient", 3)
        lows = {
            (a, s): R.get(loss, a, 3, s)
            for a in ("prox", "residual_prox")
            for s in (0.1, 1.0, 10.0)
        }
        if g is None or rg is None or any(c is None for c in lows.values()):
            out[scope(loss=loss)] = missing_cell(f"{loss} G/RG/P/RP")
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


def judge_large_step_prox_like_rp_faster_than_rg(R):
    """Statement 3e: large λ: P similar to RP and faster than RG (training loss) (criterion:
    docs/claims.md, 3e).
    """
    out = {}
    for loss in PROXIMAL_STEP_LOSSES:
        rg = R.get(loss, "residual_gradient", 3)
        for s in (10.0, 100.0):
            p, rp = R.get(loss, "prox", 3, s), R.get(loss, "residual_prox", 3, s)
            if p is None or rp is None or rg is None:
                out[scope(loss=loss, **{"lambda": s})] = missing_cell(f"{loss} P/RP/RG")
                continue
            o1, o2 = levels_rule(p, rp)[0], levels_rule(p, rg)[0]
            if o1 == "similar" and o2 == "a faster":
                v = CONFIRMED
            elif o1 in ("a faster", "b faster") or o2 in ("similar", "b faster"):
                v = CONTRADICTED
            else:
                v = INCONCLUSIVE
            out[scope(loss=loss, **{"lambda": s})] = Cell(
                v,
                f"P vs RP: {o1}; P vs RG: {o2}",
                same=same_over_levels(p, rp, "P and RP") + same_over_levels(p, rg, "P and RG"),
            )
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


def judge_acceleration_speeds_up(R):
    """Statement 4a: acceleration speeds up the decrease of training and test losses (criterion:
    docs/claims.md, 4a).
    """
    out = {}
    for loss in PROXIMAL_STEP_LOSSES:
        for s, plain, acc, b, a in _acc_pairs(R, loss):
            sc = scope(loss=loss, **{"lambda": s}, methods=f"{short(acc)} vs {short(plain)}")
            if a is None or b is None:
                out[sc] = missing_cell(f"{loss} {short(acc)}/{short(plain)}")
                continue
            levels = kept_levels(
                b.c0, (a.floor_level, b.floor_level), min(a.train.min(), b.train.min())
            )[:2]
            it_a, it_b = np.arange(a.T + 1), np.arange(b.T + 1)
            ta = [first_reach(a.train, it_a, L) for L in levels] + [
                float(np.argmax(a.test <= 1.05 * a.test.min()))
            ]
            tb = [first_reach(b.train, it_b, L) for L in levels] + [
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
                f"{short(acc)} {', '.join(map(fmt_g, ta))} vs "
                f"{short(plain)} {', '.join(map(fmt_g, tb))}",
            )
    return out


def _diverging(R, loss):
    for s, _, acc, _, a in _acc_pairs(R, loss):
        yield s, acc, a


def judge_accelerated_diverge(R):
    """Statement 4b: both accelerated variants diverge, on training and test (criterion:
    docs/claims.md, 4b).
    """
    out = {}
    for loss in PROXIMAL_STEP_LOSSES:
        for s, acc, a in _diverging(R, loss):
            sc = scope(loss=loss, **{"lambda": s}, methods=short(acc))
            if a is None:
                out[sc] = missing_cell(f"{loss} {short(acc)}")
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


def judge_plain_lower_test_than_accelerated(R):
    """Statement 4c: non-accelerated methods reach a lower test loss (criterion: docs/claims.md,
    4c).
    """
    out = {}
    for loss in PROXIMAL_STEP_LOSSES:
        for s, plain, acc, b, a in _acc_pairs(R, loss):
            sc = scope(loss=loss, **{"lambda": s}, methods=f"{short(plain)} vs {short(acc)}")
            if a is None or b is None:
                out[sc] = missing_cell(f"{loss} {short(acc)}/{short(plain)}")
                continue
            mb, ma = b.test.min(), a.test.min()
            v = (
                CONFIRMED
                if mb < LOWER_BY * ma
                else CONTRADICTED
                if ma < LOWER_BY * mb
                else INCONCLUSIVE
            )
            out[sc] = Cell(v, f"min test loss {short(plain)} {mb:.4g}, {short(acc)} {ma:.4g}")
    return out


def judge_ap_better_than_ag(R):
    """Statement 4d: AP definitely better than AG (criterion: docs/claims.md, 4d)."""
    out = {}
    for loss in PROXIMAL_STEP_LOSSES:
        ag = R.get(loss, "accelerated_gradient", 3)
        for s in STEP_GRID:  # every λ; the readings of 4d (statements.py) say which count
            ap = R.get(loss, "accelerated_prox", 3, s)
            sc = scope(loss=loss, **{"lambda": s})
            if ap is None or ag is None:
                out[sc] = missing_cell(f"{loss} AP/AG")
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


def judge_divergence_after_test_minimum(R):
    """Statement 4e: training divergence occurs after the minimal test loss (criterion:
    docs/claims.md, 4e).
    """
    out = {}
    for loss in PROXIMAL_STEP_LOSSES:
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
            out[scope(loss=loss)] = missing_cell(f"{loss} accelerated curves")
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


def judge_intro_gradient_plateaus(R):
    """Statement 7a: introduction: G's training loss attains a plateau (criterion: docs/claims.md,
    7a).
    """
    g = R.get("lad", "gradient", 2)
    if g is None:
        return {"all": missing_cell("intro G")}
    dec = _decrease(g)
    v = CONFIRMED if dec < 0.05 else CONTRADICTED if dec >= 0.10 else INCONCLUSIVE
    return {
        "all": Cell(
            v,
            f"C_G({g.T // 2}) {g.train[g.T // 2]:.4g} → C_G({g.T}) {g.train[-1]:.4g}: {dec:.1%}"
            " decrease",
        )
    }


def judge_intro_prox_keeps_improving(R):
    """Statement 7b: introduction: P constantly improves the objective (criterion: docs/claims.md,
    7b).
    """
    p = R.get("lad", "prox", 2, 1.0)
    if p is None:
        return {"all": missing_cell("intro P")}
    dec = _decrease(p)
    v = CONFIRMED if dec >= 0.10 else CONTRADICTED if dec < 0.05 else INCONCLUSIVE
    return {
        "all": Cell(
            v,
            f"C_P({p.T // 2}) {p.train[p.T // 2]:.4g} → C_P({p.T}) {p.train[-1]:.4g}: {dec:.1%}"
            " decrease",
        )
    }


def judge_intro_prox_lower_test(R):
    """Statement 7c: introduction: P achieves a lower test loss (criterion: docs/claims.md, 7c)."""
    g, p = R.get("lad", "gradient", 2), R.get("lad", "prox", 2, 1.0)
    if g is None or p is None:
        return {"all": missing_cell("intro G/P")}
    v = CONFIRMED if p.test[-1] < g.test[-1] else CONTRADICTED
    return {"all": Cell(v, f"test loss at T: P {p.test[-1]:.4g}, G {g.test[-1]:.4g}")}
