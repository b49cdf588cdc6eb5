"""Every statement of the registry judged: the rows of ``results/claims.csv``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .._io import atomic_path
from ..analysis import protocol_units
from ..naming import (
    DEFAULT_TIE_RULE,
)
from .criteria import CLAIMS_COLUMNS, INCONCLUSIVE, claims_row, combine_all, criteria_sha, scope
from .curveset import CurveSet, RunView
from .statements import REAL_WORLD, STATEMENTS


def judge_synthetic(sid, cs: CurveSet) -> list[dict]:
    """Rows of one synthetic statement: ``all``, per cell, per tie rule and per run (when
    several).
    """
    statement = STATEMENTS[sid]
    exp, fn, agg = statement.experiment, statement.judge, statement.aggregation
    runs = cs.runs(exp, statement.losses)
    proto = cs.protocol(exp, runs)
    if not runs:
        return [claims_row(sid, "all", INCONCLUSIVE, f"no stored {exp} curves", proto, 0)]
    per_run = {run: fn(RunView(cs, exp, *run)) for run in runs}
    run_verdict = {
        run: combine_all(c.verdict for c in cells.values()) for run, cells in per_run.items()
    }
    first = per_run[runs[0]]
    v, counts = agg(list(run_verdict.values()))
    detail = "; ".join(f"{k}: {c.numbers}" if k != "all" else c.numbers for k, c in first.items())
    lead = f"seed {runs[0][0]}, {runs[0][1]} rule — " if len(runs) > 1 else ""
    rows = [claims_row(sid, "all", v, f"{counts}. {lead}{detail}", proto, len(runs))]
    for key in first:
        if key == "all":
            continue
        cells = [per_run[run][key] for run in runs if key in per_run[run]]
        cv, ctext = agg([c.verdict for c in cells])
        rows.append(
            claims_row(
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
            rows.append(claims_row(sid, scope(tie_rule=rule), rv, rtext, proto, len(vs)))
        for run in runs:
            seed, rule = run
            text = "; ".join(
                f"{k}: {c.verdict}" if k != "all" else c.numbers for k, c in per_run[run].items()
            )
            rows.append(
                claims_row(sid, scope(tie_rule=rule, seed=seed), run_verdict[run], text, proto, 1)
            )
    return rows


def judge_real(sid, units) -> list[dict]:
    """Rows of one real-data statement: per unit its cells; ``all`` from the unit with most judged
    cells.
    """
    fn = STATEMENTS[sid].judge
    results = [(u, *fn(u, units)) for u in units]
    results = [r for r in results if r[3]]
    if not results:
        return [
            claims_row(
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
    rows = [claims_row(sid, "all", v, text + "." + extra, unit.label, len(cells))]
    for u, _, _, c in results:
        for key, cell in c.items():
            rows.append(claims_row(sid, key, cell.verdict, cell.numbers, u.label, cell.n_support))
    return rows


def judge(
    curves: pd.DataFrame | None, real: pd.DataFrame | None, sha: str | None = None
) -> pd.DataFrame:
    """Every statement of :data:`STATEMENTS` judged: the rows of ``claims.csv`` (ids in order,
    ``all`` first).
    """
    cs = CurveSet(curves)
    units = protocol_units(real) if real is not None else []
    rows = []
    for sid, statement in STATEMENTS.items():
        real_world = statement.experiment == REAL_WORLD
        rows += judge_real(sid, units) if real_world else judge_synthetic(sid, cs)
    df = pd.DataFrame(rows)
    df["criteria_sha"] = sha or criteria_sha()
    return df[list(CLAIMS_COLUMNS)]


def write_claims(claims: pd.DataFrame, path) -> Path:
    """Write the rows of :func:`judge` to ``path`` (atomically, LF line ends); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        claims.to_csv(tmp, index=False, lineterminator="\n")
    return path
