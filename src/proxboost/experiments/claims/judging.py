"""Every statement of the registry judged: the rows of ``results/claims.csv``.

A statement's ``all`` row and cell rows are judged under its headline reading; a statement whose
sentence leaves its scope open also gets one ``reading=<name>`` row per reading
(:attr:`~proxboost.experiments.claims.statements.Statement.readings`). Every real-world statement
also gets its second reading, the corrected resampled t-test in place of Wilcoxon: one
``test=corrected t-test`` row (``test=corrected t-test;reading=<name>`` per reading of an open
scope), whose numbers say whether the Wilcoxon verdict survives it (:func:`second_readings`).
Cells whose compared curves are identical wherever the criterion looked are named, with the first
iteration where the curves differ, in the cell rows and in the ``all`` row (docs/claims.md,
identical curves).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from proxboost.experiments.claims.analysis import protocol_units
from proxboost.experiments.claims.criteria import (
    CLAIMS_COLUMNS,
    CONTRADICTED,
    CORRECTED_T,
    INCONCLUSIVE,
    Reading,
    claims_row,
    combine_all,
    criteria_sha,
    scope,
)
from proxboost.experiments.claims.curveset import CurveSet, RunView
from proxboost.experiments.claims.paper import sections_for_lines
from proxboost.experiments.claims.realworld import MEDIANS_ONLY
from proxboost.experiments.claims.statements import REAL_WORLD, STATEMENTS
from proxboost.experiments.store.naming import (
    DEFAULT_TIE_RULE,
)
from proxboost.experiments.system.sealed import atomic_path


# =====================================================================================
# texts
# =====================================================================================
def cell_label(sc: str) -> str:
    """A cell's scope in words: ``loss=hinge;depth=15`` → ``hinge depth 15``."""
    if sc == "all":
        return "all"
    words = []
    for part in sc.split(";"):
        key, value = part.split("=", 1)
        words.append({"depth": f"depth {value}", "lambda": f"λ = {value}"}.get(key, value))
    return " ".join(words)


def _span(untils) -> str:
    """The first differing iterations of one pair over runs: ``until t = 314–321``, ``throughout``
    (never differ), or both."""
    ts = sorted(u for u in untils if u is not None)
    never = len(untils) - len(ts)
    if not ts:
        return "throughout"
    span = f"until t = {ts[0]}" + (f"–{ts[-1]}" if ts[-1] != ts[0] else "")
    return span + (f" (throughout in {never})" if never else "")


def same_text(cells) -> str:
    """The identical pairs of one cell over its runs (``cells``: its Cell in each run), e.g.
    ``P and G identical until t = 314–321 in 10 of 10 runs``; empty when there are none."""
    pairs: dict[str, list] = {}
    for c in cells:
        for s in c.same:
            pairs.setdefault(s.pair, []).append(s.until)
    return "; ".join(
        f"{pair} identical {_span(u)} in {len(u)} of {len(cells)} runs" for pair, u in pairs.items()
    )


def _identical_summary(verdict, per_run, run_verdict, over_runs) -> str:
    """The cells of identical curves for the ``all`` row: which, with their verdict over runs; and,
    when every contradicted cell of every contradicted run is one of them, that the statement is
    contradicted only there (with the other cells' verdicts)."""
    flagged = {k: (cv, cells) for k, (cv, cells) in over_runs.items() if any(c.same for c in cells)}
    if not flagged:
        return ""
    described = "; ".join(
        f"{cell_label(k)} {cv} ({same_text(cells)})" for k, (cv, cells) in flagged.items()
    )
    only_there = verdict == CONTRADICTED and all(
        c.same
        for run, cells in per_run.items()
        if run_verdict[run] == CONTRADICTED
        for c in cells.values()
        if c.verdict == CONTRADICTED
    )
    if not only_there:
        return f"; identical curves in {described}"
    others = ", ".join(
        f"{cell_label(k)} {cv}" for k, (cv, _) in over_runs.items() if k not in flagged
    )
    return f"; contradicted only in cells of identical curves: {described}" + (
        f"; other cells: {others}" if others else ""
    )


def _readings_summary(verdicts: dict) -> str:
    """``; readings: <headline> (headline) <verdict>, <other> <verdict>`` (empty without any)."""
    if not verdicts:
        return ""
    parts = [
        f"{name}{' (headline)' if i == 0 else ''} {v}"
        for i, (name, v) in enumerate(verdicts.items())
    ]
    return "; readings: " + ", ".join(parts)


def _reading_why(i: int, r: Reading) -> str:
    return f"{'Headline reading: ' if i == 0 else 'Reading: '}{r.why}"


#: what the second reading of a real-world statement is (docs/claims.md, real data)
SECOND_READING = (
    "Second reading: the Nadeau–Bengio corrected resampled t-test (n_test/n_train = 25/75, the"
    " refitted models' training set being train ∪ validation) in place of Wilcoxon, Holm-adjusted"
    " alike"
)


SECOND_READING_COLUMNS = ("id", "reading", "wilcoxon", "corrected", "survives", "cells")


def _second_why(fn, wilcoxon_verdict, corrected_verdict) -> str:
    """The end of a second-reading row: what it is, and whether the Wilcoxon verdict survives."""
    if fn in MEDIANS_ONLY:
        return f"{SECOND_READING}; this criterion compares medians and reads no p-value"
    if corrected_verdict == wilcoxon_verdict:
        return f"{SECOND_READING}; the Wilcoxon verdict survives ({wilcoxon_verdict})"
    return f"{SECOND_READING}; Wilcoxon {wilcoxon_verdict} → corrected t-test {corrected_verdict}"


def _cells_changed(wilcoxon_cells, corrected_cells) -> str:
    """``; cells whose verdict changes: <cell> <before> → <after>, …`` (``; no cell's verdict
    changes`` when none does)."""
    moved = [
        f"{cell_label(k)} {c.verdict} → {corrected_cells[k].verdict}"
        for k, c in wilcoxon_cells.items()
        if k in corrected_cells and corrected_cells[k].verdict != c.verdict
    ]
    if not moved:
        return "; no cell's verdict changes"
    return f"; cells whose verdict changes: {', '.join(moved)}"


def second_readings(claims: pd.DataFrame) -> pd.DataFrame:
    """Per second-reading row of ``claims`` (``test=corrected t-test``, :func:`judge_real`): ``id``,
    ``reading`` (empty for the headline), ``wilcoxon`` (the verdict of the same cells under
    Wilcoxon: the ``all`` row or the ``reading=<name>`` row), ``corrected``, ``survives`` (the two
    verdicts equal) and ``cells`` (the cells whose verdict changes, as the row's numbers name them;
    ``none``, or ``no p-value read`` for a criterion of :data:`MEDIANS_ONLY`)."""
    prefix = f"test={CORRECTED_T}"
    out = []
    for _, r in claims[claims["scope"].astype(str).str.startswith(prefix)].iterrows():
        name = str(r["scope"])[len(prefix) :].removeprefix(";reading=")
        same = "all" if not name else f"reading={name}"
        w = claims[(claims["id"] == r["id"]) & (claims["scope"] == same)]["verdict"]
        wv = str(w.iloc[0]) if len(w) else ""
        numbers = str(r["numbers"])
        moved = re.search(r"cells whose verdict changes: (.*?)\. Second reading", numbers)
        out.append(
            {
                "id": str(r["id"]),
                "reading": name,
                "wilcoxon": wv,
                "corrected": str(r["verdict"]),
                "survives": wv == str(r["verdict"]),
                "cells": moved.group(1)
                if moved
                else "no p-value read"
                if "reads no p-value" in numbers
                else "none",
            }
        )
    return pd.DataFrame(out, columns=SECOND_READING_COLUMNS)


# =====================================================================================
# synthetic
# =====================================================================================
def judge_synthetic(sid, cs: CurveSet) -> list[dict]:
    """Rows of one synthetic statement: ``all``, per reading (when several), per cell, per tie rule
    and per run (when several).
    """
    statement = STATEMENTS[sid]
    exp, fn, agg = statement.experiment, statement.judge, statement.aggregation
    runs = cs.runs(exp, statement.losses)
    proto = cs.protocol(exp, runs)
    if not runs:
        return [claims_row(sid, "all", INCONCLUSIVE, f"no stored {exp} curves", proto, 0)]
    judged = {run: fn(RunView(cs, exp, *run)) for run in runs}

    def under(r: Reading) -> dict:
        return {
            run: {k: c for k, c in cells.items() if r.admits(k)} for run, cells in judged.items()
        }

    per_run = under(statement.headline)
    run_verdict = {
        run: combine_all(c.verdict for c in cells.values()) for run, cells in per_run.items()
    }
    v, counts = agg(list(run_verdict.values()))
    first = per_run[runs[0]]
    over_runs, cell_rows = {}, []
    for key in first:
        cells = [per_run[run][key] for run in runs if key in per_run[run]]
        cv, ctext = agg([c.verdict for c in cells])
        over_runs[key] = (cv, cells)
        if key == "all":
            continue
        head = "; ".join(x for x in (ctext if len(cells) > 1 else "", same_text(cells)) if x)
        cell_rows.append(
            claims_row(
                sid,
                key,
                cv,
                f"{head}. {cells[0].numbers}" if head else cells[0].numbers,
                proto,
                sum(c.n_support > 0 for c in cells),
            )
        )
    reading_rows, reading_verdicts = [], {}
    for i, r in enumerate(statement.readings):
        kept = under(r)
        rv, rtext = agg([combine_all(c.verdict for c in cells.values()) for cells in kept.values()])
        reading_verdicts[r.name] = rv
        n_cells = len(kept[runs[0]])
        reading_rows.append(
            claims_row(
                sid,
                scope(reading=r.name),
                rv,
                f"{rtext}; {n_cells} cells per run. {_reading_why(i, r)}",
                proto,
                len(runs),
            )
        )
    detail = "; ".join(f"{k}: {c.numbers}" if k != "all" else c.numbers for k, c in first.items())
    lead = f"seed {runs[0][0]}, {runs[0][1]} rule — " if len(runs) > 1 else ""
    summary = (
        counts
        + _identical_summary(v, per_run, run_verdict, over_runs)
        + _readings_summary(reading_verdicts)
    )
    rows = [claims_row(sid, "all", v, f"{summary}. {lead}{detail}", proto, len(runs))]
    rows += reading_rows + cell_rows
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


# =====================================================================================
# real world
# =====================================================================================
def judge_real(sid, units) -> list[dict]:
    """Rows of one real-data statement: per unit its cells; ``all`` from the unit with most judged
    cells, and per reading (when several) on that same unit.
    """
    statement = STATEMENTS[sid]
    fn = statement.judge
    results = [(u, *fn(u, units, statement.headline)) for u in units]
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
    # every reading judged on the unit of the headline, so the readings differ in scope only
    readings = [(r, *fn(unit, units, r)) for r in statement.readings]
    summary = _readings_summary({r.name: rv for r, rv, _, _ in readings})
    others = [f"{u.label}: {vv}" for u, vv, _, c in results if u is not unit]
    extra = f" Other protocols (not combined): {'; '.join(others)}." if others else ""
    rows = [claims_row(sid, "all", v, text + summary + "." + extra, unit.label, len(cells))]
    for i, (r, rv, rtext, rcells) in enumerate(readings):
        rows.append(
            claims_row(
                sid,
                scope(reading=r.name),
                rv,
                f"{rtext}. {_reading_why(i, r)}",
                unit.label,
                len(rcells),
            )
        )
    # the second reading: every reading (the headline alone when the scope is not open) judged
    # with the corrected resampled t-test, on the same unit and cells
    wilcoxon = [(r, rv, rc) for r, rv, _, rc in readings] or [(statement.headline, v, cells)]
    for r, wv, wcells in wilcoxon:
        cv, ctext, ccells = fn(unit, units, r.corrected())
        rows.append(
            claims_row(
                sid,
                scope(test=CORRECTED_T, reading=r.name if statement.readings else None),
                cv,
                f"{ctext}{_cells_changed(wcells, ccells)}. {_second_why(fn, wv, cv)}",
                unit.label,
                len(ccells),
            )
        )
    for u, _, _, c in results:
        for key, cell in c.items():
            rows.append(claims_row(sid, key, cell.verdict, cell.numbers, u.label, cell.n_support))
    return rows


def _with_context(statement, rows: list[dict], curves) -> list[dict]:
    """The rows of a synthetic statement, the ``all`` row's numbers ending with the statement's
    context sentence (:attr:`Statement.context`) when it has one and the curves give one."""
    text = statement.context(curves) if statement.context and curves is not None else ""
    if text:
        rows[0] = {**rows[0], "numbers": f"{rows[0]['numbers'].rstrip('.')}. {text}"}
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
        if real_world:
            rows += judge_real(sid, units)
        else:
            rows += _with_context(statement, judge_synthetic(sid, cs), curves)
    df = pd.DataFrame(rows)
    # the registry's notes cite lines of the paper's LaTeX source, which a reader of the
    # published paper cannot use: claims.csv says their sections
    texts = [c for c in ("scope", "numbers", "protocol") if c in df.columns]
    df[texts] = df[texts].map(lambda v: sections_for_lines(v) if isinstance(v, str) else v)
    df["criteria_sha"] = sha or criteria_sha()
    return df[list(CLAIMS_COLUMNS)]


def write_claims(claims: pd.DataFrame, path) -> Path:
    """Write the rows of :func:`judge` to ``path`` (atomically, LF line ends); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        claims.to_csv(tmp, index=False, lineterminator="\n")
    return path
