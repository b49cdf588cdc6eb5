"""The browsable HTML report of the stored results: ``results/report/index.html`` and its pages.

    python -m proxboost.html_report [--results results] [--figures figures] [--out results/report]

Static files that open from ``file://`` without a server or a network (no CDN, font or script
from elsewhere): ``index.html`` lists the paper's 34 statements, filterable by verdict and by
family (a few lines of vanilla JavaScript, ``report.js``; without it every statement is written
open and the filters are hidden); each opens onto its text, the paper's sentence quoted with its
section (:mod:`proxboost.experiments.claims.paper`), its criterion (``docs/claims.md``), its
per-scope verdicts and numbers, the runs it rests on and its figure. Further pages: one per
dataset (its tables, a figure of its paired differences and the verdict cells on it), the
tree-engine and tie-rule comparisons, the baselines (opening on the methods' mean rank per
dataset) and compute time, the synthetic runs, the quantile benchmark (its tables, interval table
and rank figure, :mod:`proxboost.experiments.report.benchmark`, from its stored rows; without
them the page says the sweep has not run), the criteria (``docs/claims.md`` as a page) and
the provenance (commits and library versions read from the stored rows, never from the checkout).

Nothing is judged anew here: the verdicts and numbers are the rows of ``claims.csv`` and the
tables are the sections of ``SUMMARY.md``, both written just before by
:mod:`proxboost.experiments.report.summary` (``make figures`` runs it first), rendered from their
Markdown. The stored rows give the provenance, the run counts, the mean ranks and the per-dataset
figures (drawn by :mod:`proxboost.experiments.report.figures`' own panel code) and the quantile
benchmark's page and rank figure (drawn as SVG into ``fig/``). The folder stands
alone: the figures of ``figures/`` the pages show are copied into its ``figures/``, and
``claims.csv`` and ``SUMMARY.md`` next to the pages. The output is deterministic: no generation
time, no absolute path, a fixed order, SVG without a date and with a fixed hash salt; rebuilding
it from the same results gives the same bytes. The page templates, style sheet and script live in
``templates/report/``."""

from __future__ import annotations

import argparse
import hashlib
import io
import re
from collections.abc import Iterable
from pathlib import Path

import matplotlib as mpl
import pandas as pd

from proxboost.experiments.claims import (
    CONFIRMED,
    CONTRADICTED,
    INCONCLUSIVE,
    STATEMENTS,
    families,
    paper,
)
from proxboost.experiments.claims.analysis import protocol_units
from proxboost.experiments.claims.criteria import CRITERIA_FILE
from proxboost.experiments.claims.judging import SECOND_READING, second_readings
from proxboost.experiments.claims.statements import REAL_WORLD
from proxboost.experiments.plan import versions
from proxboost.experiments.report.markdown import (
    inline,
    markdown_html,
    subsections,
    summary_sections,
    table_cells,
)
from proxboost.experiments.store.naming import (
    CLASSIFICATION_DATASETS,
    PAPER_CLASSIFICATION_LOSSES,
    PAPER_REGRESSION_LOSSES,
    tie_rule_of,
)
from proxboost.experiments.store.results import LATER_ROW_COLUMNS, stops_on_damage
from proxboost.experiments.system.sealed import atomic_path

__all__ = ["build_report", "main", "markdown_html", "summary_sections", "write_report"]

TEMPLATES = Path(__file__).resolve().parent / "templates" / "report"
#: Files copied as they are next to the pages.
ASSETS = ("style.css", "report.js")
#: What this module writes under its output folder (anything else there is left alone).
OWNED = ("*.html", "*.css", "*.js", "fig/*.svg", "figures/*.png", "claims.csv", "SUMMARY.md")
#: Where the pages find the figures of figures/ they show: copied into the report folder, so that
#: the folder copied anywhere shows every image (the copies are the same bytes as figures/, which
#: git stores once).
FIGURES_HERE = "figures"
VERDICTS = (CONFIRMED, CONTRADICTED, INCONCLUSIVE)
#: The verdict of a registry statement that claims.csv does not judge (an older claims.csv).
NOT_JUDGED = "not judged"
#: claims.csv columns read by name; any other column is shown as it is, after these.
KNOWN_CLAIMS_COLUMNS = ("id", "scope", "verdict", "numbers", "protocol", "n_support")
REQUIRED_CLAIMS_COLUMNS = ("id", "scope", "verdict")

#: The figures of figures/ that draw a statement's runs, per experiment; statement 5 compares the
#: curves against iterations with those against seconds.
EXPERIMENT_FIGURES = {
    "convergence": ("convergence",),
    "proximal_step": ("proximal_step",),
    "intro": ("intro",),
}
STATEMENT_FIGURES = {"5": ("convergence", "convergence_time")}
REGRESSION_FIGURES = ("regression_loss",)
CLASSIFICATION_FIGURES = ("classification_loss", "classification_error")

#: (page, words of a SUMMARY.md section title that put it there), the first match wins; the
#: statement sections are rebuilt from claims.csv, sections matching nothing go to "more".
SECTION_PAGES = (
    ("statements", ("statement", "details of the verdicts")),
    ("datasets", ("real-world", "real world")),
    ("comparisons", ("engine", "tie rule")),
    ("baselines", ("lightgbm", "baseline", "compute time")),
    ("synthetic", ("introduction", "synthetic")),
)
#: Navigation: (file, title) of every page but the per-dataset ones, in order.
PAGES = (
    ("index.html", "Statements"),
    ("datasets.html", "Datasets"),
    ("comparisons.html", "Engines and tie rules"),
    ("baselines.html", "Baselines and compute time"),
    ("synthetic.html", "Synthetic runs"),
    ("benchmark.html", "Quantile benchmark"),
    ("provenance.html", "Provenance"),
)
#: The quantile benchmark's page and its rank figure, drawn from the stored rows.
BENCHMARK_PAGE = "benchmark.html"
BENCHMARK_FIGURE = "fig/quantile_benchmark_ranks.svg"


def page_of(title: str) -> str:
    """The page a SUMMARY.md section goes to (:data:`SECTION_PAGES`), ``"more"`` if none."""
    low = title.lower()
    for page, words in SECTION_PAGES:
        if any(w in low for w in words):
            return page
    return "more"


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-") or "x"


# =====================================================================================
# inputs
# =====================================================================================
def read_claims(path) -> pd.DataFrame:
    """``claims.csv`` as text columns; the columns this module does not know are kept."""
    claims = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in REQUIRED_CLAIMS_COLUMNS if c not in claims.columns]
    if missing:
        raise ValueError(
            f"{path} has no column {', '.join(missing)}: rewrite it with "
            "`python -m proxboost.report --results <results>`"
        )
    for c in KNOWN_CLAIMS_COLUMNS:
        if c not in claims.columns:
            claims[c] = ""
    return claims


def criteria_file() -> Path | None:
    """``docs/claims.md`` of this checkout (as :func:`proxboost.experiments.claims.criteria_sha`
    finds it)."""
    for root in (Path(__file__).resolve().parents[4], Path.cwd()):
        if (root / CRITERIA_FILE).is_file():
            return root / CRITERIA_FILE
    return None


def criteria_texts(path) -> dict[str, tuple[str, str]]:
    """id -> (statement as docs/claims.md words it, criterion), from its statement tables."""
    out = {}
    if path is None:
        return out
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.startswith("| "):
            continue
        cells = table_cells(line)
        if len(cells) == 3 and cells[0] in STATEMENTS:
            out[cells[0]] = (cells[1], cells[2])
    return out


def _short_commit(c: str) -> str:
    return c[:12] + ("-dirty" if c.endswith("-dirty") else "")


def _commits(df: pd.DataFrame) -> str:
    """The commits of ``df``'s rows, shortened, in a fixed order."""
    if "commit" not in df:
        return "not recorded"
    return ", ".join(
        _short_commit(c) for c in sorted(set(df["commit"].fillna("unknown").astype(str)))
    )


def _counts(values: Iterable) -> list[tuple[str, int]]:
    """(value, count) sorted by count (descending), then value: a fixed order."""
    s = pd.Series([str(v) for v in values], dtype=object).value_counts()
    return sorted(((str(k), int(n)) for k, n in s.items()), key=lambda kv: (-kv[1], kv[0]))


#: Row order before drawing: the figures jitter points in row order.
ROW_ORDER = ("protocol", "dataset", "loss", "algo", "engine", "tie_rule", "split", "identity_hash")


def _in_key_order(real: pd.DataFrame) -> pd.DataFrame:
    """``real`` sorted by its key columns, so that the same rows in any order draw the same."""
    if real is None or real.empty:
        return real
    keys = [c for c in ROW_ORDER if c in real]
    return real.sort_values(keys, kind="stable", na_position="last").reset_index(drop=True)


def _runs_of_curves(curves: pd.DataFrame) -> pd.DataFrame:
    """One row per stored synthetic run (its first iteration carries its settings)."""
    if curves is None or curves.empty:
        return pd.DataFrame()
    runs = curves[curves["iteration"] == 0].copy()
    runs["tie_rule"] = (
        [tie_rule_of(v) for v in runs["tie_rule"]] if "tie_rule" in runs else tie_rule_of(None)
    )
    return runs.reset_index(drop=True)


# =====================================================================================
# statements
# =====================================================================================
def _scope_text(scope: str) -> str:
    return "; ".join(p.strip() for p in str(scope).split(";"))


def _scope_parts(scope: str) -> dict[str, str]:
    return dict(p.split("=", 1) for p in str(scope).split(";") if "=" in p)


def _figure_ids(statement) -> tuple[str, ...]:
    if statement.id in STATEMENT_FIGURES:
        return STATEMENT_FIGURES[statement.id]
    if statement.experiment != REAL_WORLD:
        return EXPERIMENT_FIGURES.get(statement.experiment, ())
    ids = ()
    if set(statement.losses) & set(PAPER_REGRESSION_LOSSES):
        ids += REGRESSION_FIGURES
    if set(statement.losses) & set(PAPER_CLASSIFICATION_LOSSES):
        ids += CLASSIFICATION_FIGURES
    return ids


def _synthetic_runs(runs: pd.DataFrame, statement, label: str) -> dict:
    """The stored runs of a synthetic statement's experiment and losses, on the engine and tie
    rules its label names: per loss, the stored curves (one per method, setting, seed and rule),
    seeds, tie rules, methods and commits."""
    if runs.empty:
        return {"columns": [], "rows": [], "where": ""}
    g = runs[(runs["experiment"] == statement.experiment) & runs["loss"].isin(statement.losses)]
    engine = re.search(r", (\S+) trees", label)
    if engine and "engine" in g:
        g = g[g["engine"] == engine.group(1)]
    rules = re.search(r"tie rule (\S+?),", label)
    if rules:
        g = g[g["tie_rule"].isin(rules.group(1).split("/"))]
    rows = []
    for loss in [v for v in statement.losses if v in set(g["loss"])]:
        r = g[g["loss"] == loss]
        rows.append(
            [
                loss,
                str(len(r)),
                ", ".join(str(int(s)) for s in sorted(set(r["seed"]))),
                ", ".join(sorted(set(r["tie_rule"]))),
                ", ".join(sorted(set(r["algo"]))),
                _commits(r),
            ]
        )
    return {
        "columns": ["loss", "stored curves", "seeds", "tie rules", "methods", "commits"],
        "rows": rows,
        "where": f"results/synthetic/{statement.experiment}/",
    }


def _real_runs(units: dict, statement, label: str, datasets: dict) -> dict:
    """The stored rows of the protocol unit a real-world verdict rests on, per dataset and loss."""
    unit = units.get(label)
    if unit is None:
        return {"columns": [], "rows": [], "where": ""}
    g = unit[unit["loss"].isin(statement.losses)]
    rows = []
    for (ds, loss), r in g.groupby(["dataset", "loss"], sort=True):
        rows.append(
            [
                {"text": ds, "href": datasets.get(ds, "")},
                loss,
                str(r["algo"].nunique()),
                str(r["split"].nunique()),
                str(len(r)),
                _commits(r),
            ]
        )
    return {
        "columns": ["dataset", "loss", "methods", "splits", "rows", "commits"],
        "rows": rows,
        "where": f"results/{label.split(',')[0]}/",
    }


#: What the figures of figures/ that redraw no figure of the paper show.
OWN_FIGURES = {
    "claims": "the verdicts of this reproduction, one row per statement",
}


def _figure(fid: str, figures_dir: Path) -> dict:
    """A figure of figures/ as the pages show it (its copy in the report folder), whether it is
    drawn yet, and the figure of the paper it redraws (``paper``, else ``own``: what it shows)."""
    redraws = paper.figure_of(fid)
    return {
        "id": fid,
        "src": f"{FIGURES_HERE}/{fid}.png",
        "exists": (figures_dir / f"{fid}.png").is_file(),
        "paper": (
            f"{redraws[0]} of the paper (Section {redraws[2]}): {redraws[1]}" if redraws else ""
        ),
        "own": OWN_FIGURES.get(fid, "this repository's own figure"),
    }


def _scope_groups(cells: pd.DataFrame, label: str, extra: list[str]) -> list[dict]:
    """A statement's cells per protocol unit: the one its verdict rests on first, then the
    others (reported, not combined), each in claims.csv's order."""
    groups = []
    for proto in [label] + sorted(set(cells["protocol"]) - {label}):
        part = cells[cells["protocol"] == proto]
        if part.empty:
            continue
        rows = [
            {
                "scope": _scope_text(r["scope"]),
                "verdict": r["verdict"],
                "numbers": r["numbers"],
                "n": r["n_support"],
                "extra": [r[c] for c in extra],
            }
            for _, r in part.iterrows()
        ]
        groups.append({"protocol": proto, "rests_on": proto == label, "rows": rows})
    return groups


def statement_entries(claims, runs, units, figures_dir, datasets) -> list[dict]:
    """What the index shows of each registry statement, in registry order."""
    crit = criteria_texts(criteria_file())
    extra = [c for c in claims.columns if c not in KNOWN_CLAIMS_COLUMNS and c != "criteria_sha"]
    family_of = {sid: name for name, ids in families() for sid in ids}
    entries = []
    for sid, st in STATEMENTS.items():
        g = claims[claims["id"] == sid]
        top = g[g["scope"] == "all"]
        top = top.iloc[0] if len(top) else None
        label = str(top["protocol"]) if top is not None else ""
        groups = _scope_groups(g[g["scope"] != "all"], label, extra)
        if st.experiment == REAL_WORLD:
            rested = _real_runs(units, st, label, datasets)
        else:
            rested = _synthetic_runs(runs, st, label)
        figs = [_figure(f, figures_dir) for f in _figure_ids(st)]
        long_text, criterion = crit.get(sid, ("", ""))
        entries.append(
            {
                "id": sid,
                "anchor": f"s-{slug(sid)}",
                "text": st.text,
                "long_text": _markup(inline(paper.sections_for_lines(long_text))),
                "criterion": _markup(inline(paper.sections_for_lines(criterion))),
                "where": paper.where(st.paper_line),
                "quote": paper.QUOTES.get(sid, ""),
                "family": family_of.get(sid, ""),
                "experiment": st.experiment,
                "losses": ", ".join(st.losses),
                "verdict": str(top["verdict"]) if top is not None else NOT_JUDGED,
                "numbers": str(top["numbers"]) if top is not None else "",
                "protocol": label,
                "n_support": str(top["n_support"]) if top is not None else "",
                "top_extra": [(c, str(top[c])) for c in extra if top is not None and str(top[c])],
                "extra_columns": extra,
                "groups": groups,
                "runs": rested,
                "figures": figs,
            }
        )
    return entries


def corrected_rows(claims: pd.DataFrame) -> dict:
    """The real-world verdicts under the second reading (the corrected resampled t-test) beside the
    Wilcoxon ones (:func:`~proxboost.experiments.claims.judging.second_readings`): ``rows`` for the
    index's table, ``what`` (the reading) and ``line`` (which survive)."""
    second = second_readings(claims)
    rows = [
        {
            "id": r["id"],
            "anchor": f"s-{slug(r['id'])}",
            "reading": r["reading"] or "headline",
            "wilcoxon": r["wilcoxon"],
            "corrected": r["corrected"],
            "survives": bool(r["survives"]),
            "cells": r["cells"],
        }
        for _, r in second.iterrows()
    ]
    kept = [r for r in rows if r["survives"]]
    line = f"{len(kept)} of {len(rows)} verdicts survive the corrected test" + (
        "."
        if len(kept) == len(rows)
        else "; they change for "
        + ", ".join(
            f"{r['id']} ({r['reading']}) {r['wilcoxon']} → {r['corrected']}"
            for r in rows
            if not r["survives"]
        )
        + "."
    )
    return {"rows": rows, "what": SECOND_READING.removeprefix("Second reading: "), "line": line}


def verdict_counts(entries: list[dict]) -> dict:
    """Per family (registry order) and in all: how many statements have each verdict."""
    names = [name for name, _ in families()]
    verdicts = list(VERDICTS) + sorted({e["verdict"] for e in entries} - set(VERDICTS))
    table = []
    for name in [*names, "All"]:
        mine = [e for e in entries if name == "All" or e["family"] == name]
        table.append(
            {"family": name, "counts": [sum(e["verdict"] == v for e in mine) for v in verdicts]}
        )
        table[-1]["total"] = len(mine)
    return {"verdicts": verdicts, "rows": table}


# =====================================================================================
# provenance
# =====================================================================================
def provenance(real: pd.DataFrame, runs: pd.DataFrame, claims: pd.DataFrame) -> dict:
    """Commits and library versions of the stored rows and synthetic runs (the rows' own
    columns), and the criteria's sha256 the verdicts were judged under."""
    commits = {}
    for name, df, what in (("real", real, "protocol"), ("synthetic", runs, "experiment")):
        if df is None or df.empty or "commit" not in df:
            continue
        for c, g in df.groupby(df["commit"].astype(str), sort=True):
            entry = commits.setdefault(c, {"real": 0, "synthetic": 0, "where": set()})
            entry[name] += len(g)
            entry["where"] |= set(g[what].astype(str)) if what in g else set()
    columns = sorted(
        {c for df in (real, runs) if df is not None for c in df.columns if c.endswith("_version")}
    )
    versions = []
    for col in columns:
        cells = []
        for df in (real, runs):
            if df is None or df.empty:
                cells.append("—")
                continue
            values = df[col].fillna("not recorded") if col in df else ["not recorded"] * len(df)
            cells.append(", ".join(f"{v} ({n})" for v, n in _counts(values)))
        versions.append([col.removesuffix("_version").replace("_", "-"), *cells])
    unrecorded = [
        note
        for col in columns
        for what, df in (("real-world rows", real), ("synthetic runs", runs))
        if (note := _unrecorded(df, col, what))
    ]
    sha = sorted(set(claims["criteria_sha"])) if "criteria_sha" in claims else []
    docs = criteria_file()
    here = hashlib.sha256(docs.read_bytes()).hexdigest() if docs else None
    return {
        "commits": [
            {
                "commit": c,
                "dirty": c.endswith("-dirty"),
                "real": e["real"],
                "synthetic": e["synthetic"],
                "where": ", ".join(sorted(e["where"])),
            }
            for c, e in sorted(commits.items())
        ],
        "versions": versions,
        "unrecorded": unrecorded,
        "criteria_sha": sha,
        "criteria_match": bool(here) and sha == [here],
        "criteria_found": docs is not None,
    }


#: Why a row has no value in a version column, by whether the column came after the first rows.
_WHY_LATER = (
    "they were stored before rows recorded this version (the column was added later, and a"
    " stored row is never rewritten)"
)
_WHY_OTHER = "their runs did not record it"


def _unrecorded(df: pd.DataFrame | None, col: str, what: str) -> dict | None:
    """Which rows of ``df`` have no ``col`` (a version column) and why, or None if all have it:
    ``rows`` (per protocol, dataset and engine, with counts), ``commits`` and ``why``."""
    if df is None or df.empty:
        return None
    missing = df[df[col].isna()] if col in df else df
    if missing.empty:
        return None
    keys = [c for c in ("protocol", "experiment", "dataset", "engine") if c in missing]
    groups = missing.groupby(keys, sort=True).size() if keys else pd.Series(dtype=int)
    where = [
        f"{' '.join(str(k) for k in (key if isinstance(key, tuple) else (key,)))} ({n})"
        for key, n in groups.items()
    ]
    return {
        "library": col.removesuffix("_version").replace("_", "-"),
        "what": what,
        "n": len(missing),
        "rows": ", ".join(where),
        "commits": _commits(missing),
        "why": _WHY_LATER if col in LATER_ROW_COLUMNS else _WHY_OTHER,
    }


# =====================================================================================
# the methods ranked on each dataset
# =====================================================================================
def rank_table(units: list) -> str:
    """Markdown of the methods' mean rank on each dataset of the preferred protocol unit (the first
    of :func:`~proxboost.experiments.claims.analysis.protocol_units`): per loss and split the
    methods are ranked by test loss (regression) or misclassification rate (classification), 1 =
    lowest, ties averaged; a cell is the mean over its dataset's losses and splits. Empty when no
    rows are stored."""
    if not units or units[0].rows.empty:
        return ""
    rows = units[0].rows
    clf = rows["task"].eq("classification") if "task" in rows else False
    value = rows["test_error"].where(clf, rows["test_loss"]) if "test_error" in rows else None
    if value is None:
        value = rows["test_loss"]
    ranked = rows.assign(value=value.astype(float)).dropna(subset=["value"])
    ranked["rank"] = ranked.groupby(["dataset", "loss", "split"])["value"].rank(method="average")
    table = ranked.pivot_table(index="algo", columns="dataset", values="rank", aggfunc="mean")
    table["all datasets"] = table.mean(axis=1)
    table = table.sort_values(["all datasets"], kind="stable")
    head = ["method", *table.columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for algo, r in table.iterrows():
        cells = ["—" if pd.isna(v) else f"{v:.2f}" for v in r]
        lines.append(f"| {algo} | " + " | ".join(cells) + " |")
    return "\n".join(
        [
            f"Over the stored rows of **{units[0].label}**: per dataset, loss and split the methods"
            " are ranked by test loss (regression) or misclassification rate (classification),"
            " 1 = the lowest, ties sharing their mean rank; a cell is the mean rank over the"
            " dataset's losses and splits (— = no rows), *all datasets* the mean of the cells."
            " Rows in order of that mean.",
            "",
            *lines,
        ]
    )


# =====================================================================================
# per-dataset figure
# =====================================================================================
def _panel_rows(classification: bool) -> list[tuple]:
    """The Δ panels of a dataset, those of the regression / classification figures."""
    if not classification:
        return [(f"Δ test loss ({v})", v, "test_loss", "delta") for v in PAPER_REGRESSION_LOSSES]
    return [
        *[(f"Δ test loss ({v})", v, "test_loss", "delta") for v in PAPER_CLASSIFICATION_LOSSES],
        *[(f"Δ test error ({v})", v, "test_error", "delta") for v in PAPER_CLASSIFICATION_LOSSES],
        ("hinge − exponential\ntest error", None, "test_error", "hinge_minus_exp"),
    ]


def _is_classification(real: pd.DataFrame, dataset: str) -> bool:
    return dataset in CLASSIFICATION_DATASETS or bool(
        "task" in real and (real[real["dataset"] == dataset]["task"] == "classification").any()
    )


def _paper_figures(real: pd.DataFrame, dataset: str) -> str:
    """The paper's figures that draw ``dataset`` among the others."""
    ids = CLASSIFICATION_FIGURES if _is_classification(real, dataset) else REGRESSION_FIGURES
    names = [paper.figure_of(f)[0] for f in ids]
    return "the paper's " + " and ".join(names)


def dataset_svg(real: pd.DataFrame, dataset: str) -> bytes:
    """SVG of the paired Δ panels of one dataset (no date, ids from a fixed hash salt)."""
    from proxboost.experiments.report.figures.realworld import delta_figure

    clf = _is_classification(real, dataset)
    title = f"{dataset}: Δ = value − that of gradient boosting on the same split" + (
        "; bottom: error with hinge − with exponential (same method and split)" if clf else ""
    )
    return _svg(delta_figure(real, [dataset], _panel_rows(clf), title, figsize_per=(6.5, 2.4)))


def _svg(fig) -> bytes:
    """SVG of a matplotlib figure (no date, ids from a fixed hash salt); the figure is closed."""
    import matplotlib.pyplot as plt

    from proxboost.experiments.report.figures.common import STYLE

    buf = io.BytesIO()
    with mpl.rc_context(STYLE):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    return buf.getvalue()


# =====================================================================================
# the quantile benchmark
# =====================================================================================
def benchmark_page(real: pd.DataFrame | None) -> tuple[dict, dict[str, bytes]]:
    """(context of ``benchmark.html``, {file: bytes} it shows) from the stored rows: per reading
    the tables of :func:`~proxboost.experiments.report.benchmark.markdown`, the intervals section
    (:func:`~proxboost.experiments.report.benchmark.interval_markdown`) and the rank figure
    (:data:`BENCHMARK_FIGURE`, SVG). ``ran`` is False when no benchmark row is stored (the page
    then says the sweep has not run); ``error`` the message when the rows cannot be tabulated
    (two stored runs of one cell), the rest of the report being built all the same."""
    from proxboost.experiments.report import benchmark

    real = real if real is not None else pd.DataFrame()
    context = {"ran": False, "error": "", "sections": [], "figure": ""}
    try:
        rows, intervals = benchmark.benchmark_rows(real), benchmark.interval_rows(real)
    except ValueError as e:
        return context | {"error": str(e)}, {}
    text = benchmark.interval_markdown(intervals)
    if not rows.empty:
        text = benchmark.markdown(rows) + "\n" + text
    if not (rows.empty and intervals.empty):
        text = benchmark.status_markdown(rows, intervals) + "\n" + text
    context["sections"] = [
        {"title": t, "anchor": slug(t), "html": _markup(markdown_html(b, 1))}
        for t, b in subsections(text)[1]
    ]
    if rows.empty:
        return context, {}
    files = {BENCHMARK_FIGURE: _svg(benchmark.draw_ranks(rows))}
    return context | {"ran": True, "figure": BENCHMARK_FIGURE}, files


# =====================================================================================
# pages
# =====================================================================================
def _environment():
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

    env = Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        autoescape=select_autoescape(("html",)),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=StrictUndefined,
    )
    env.filters["md"] = lambda text: _markup(markdown_html(str(text), 1))
    env.filters["inline"] = lambda text: _markup(inline(text))
    return env


def _markup(html: str):
    from markupsafe import Markup

    return Markup(html)


def _sections(by_page: dict, page: str) -> list[dict]:
    return [
        {"title": t, "anchor": slug(t), "html": _markup(markdown_html(b, 1))}
        for t, b in by_page.get(page, [])
    ]


def build_report(
    summary: str,
    claims: pd.DataFrame,
    curves: pd.DataFrame,
    real: pd.DataFrame,
    figures_dir=Path("figures"),
    results_name: str = "results",
    reading: str = "",
    progress: str = "",
    attachments: dict[str, bytes] | None = None,
) -> dict[str, bytes]:
    """Every file of the report: {path relative to the report folder: bytes}.

    ``summary`` is SUMMARY.md's text and ``claims`` claims.csv (:func:`read_claims`); ``curves`` and
    ``real`` the stored curves and rows (provenance, run counts, per-dataset figures);
    ``figures_dir`` is figures/, whose figures the pages show are copied into ``figures/`` of the
    report; ``reading`` and ``progress`` the lines of :mod:`proxboost.experiments.plan.versions`
    for the first page; ``attachments`` files put next to the pages as they are and linked from
    every page (``claims.csv`` and ``SUMMARY.md``)."""
    env, figures_dir = _environment(), Path(figures_dir)
    attachments = dict(attachments or {})
    real = _in_key_order(real)
    # a line number of the paper's LaTeX source means nothing to a reader: say its section
    summary = paper.sections_for_lines(summary)
    claims = claims.assign(
        **{c: claims[c].map(paper.sections_for_lines) for c in claims.columns if c != "id"}
    )
    by_page: dict[str, list] = {}
    for title, body in summary_sections(summary):
        by_page.setdefault(page_of(title), []).append((title, body))
    ds_intro, ds_parts = "", []
    for _, body in by_page.pop("datasets", []):
        intro, parts = subsections(body)
        ds_intro, ds_parts = ds_intro + intro, ds_parts + parts
    datasets = {ds: f"dataset-{slug(ds)}.html" for ds, _ in ds_parts}
    nav = [{"href": h, "title": t} for h, t in PAGES]
    if by_page.get("more"):
        nav.append({"href": "more.html", "title": "More tables"})
    criteria = criteria_file()
    if criteria:
        nav.append({"href": "criteria.html", "title": "Criteria"})
    common = {
        "nav": nav,
        "datasets": datasets,
        "results_name": results_name,
        "attachments": sorted(attachments),
        "criteria_page": "criteria.html" if criteria else "",
    }
    all_units = protocol_units(real)
    units = {u.label: u.rows for u in all_units}
    runs = _runs_of_curves(curves)
    entries = statement_entries(claims, runs, units, figures_dir, datasets)
    files = {a: (TEMPLATES / a).read_bytes() for a in ASSETS} | attachments
    shown = [f for e in entries for f in e["figures"]]

    def render(name, template, **context):
        text = env.get_template(template).render(page=name, **common, **context)
        files[name] = text.encode("utf-8")

    def fig(f):
        shown.append(_figure(f, figures_dir))
        return shown[-1]

    render(
        "index.html",
        "index.html",
        title="The paper's statements",
        entries=entries,
        counts=verdict_counts(entries),
        corrected=corrected_rows(claims),
        families=[name for name, _ in families()],
        overview=fig("claims"),
        reading=_markup(inline(reading)) if reading else "",
        progress=_markup(inline(progress)) if progress else "",
    )
    cells = claims[claims["scope"] != "all"]
    for ds, body in ds_parts:
        mine = cells[[_scope_parts(s).get("dataset") == ds for s in cells["scope"]]]
        has_rows = real is not None and not real.empty and (real["dataset"] == ds).any()
        if has_rows:
            files[f"fig/{slug(ds)}.svg"] = dataset_svg(real, ds)
        render(
            datasets[ds],
            "dataset.html",
            title=f"Dataset {ds}",
            dataset=ds,
            body=_markup(markdown_html(body, 1)),
            figure=f"fig/{slug(ds)}.svg" if has_rows else "",
            paper_figures=_paper_figures(real, ds) if has_rows else "",
            cells=[
                {
                    "id": r["id"],
                    "anchor": f"s-{slug(r['id'])}",
                    "scope": _scope_text(r["scope"]),
                    "verdict": r["verdict"],
                    "numbers": r["numbers"],
                    "protocol": r["protocol"],
                }
                for _, r in mine.iterrows()
            ],
        )
    render(
        "datasets.html",
        "datasets.html",
        title="Real-world datasets",
        intro=_markup(markdown_html(ds_intro, 1)),
        figures=[fig(f) for f in REGRESSION_FIGURES + CLASSIFICATION_FIGURES],
    )
    ranks = rank_table(all_units)
    if ranks:  # the cross-dataset view opens the baselines page
        ranked = ("Mean rank of each method per dataset", ranks)
        by_page.setdefault("baselines", []).insert(0, ranked)
    for name, title, figs in (
        ("comparisons", "Tree engines and tie rules compared", ()),
        ("baselines", "Baselines and compute time", ()),
        (
            "synthetic",
            "Synthetic runs",
            ("intro", "convergence", "convergence_time", "proximal_step"),
        ),
        ("more", "More tables", ()),
    ):
        if name == "more" and not by_page.get("more"):
            continue
        render(
            f"{name}.html",
            "page.html",
            title=title,
            sections=_sections(by_page, name),
            figures=[fig(f) for f in figs],
        )
    bench, bench_files = benchmark_page(real)
    files |= bench_files
    render(BENCHMARK_PAGE, "benchmark.html", title="The quantile benchmark", **bench)
    render(
        "provenance.html",
        "provenance.html",
        title="Provenance",
        prov=provenance(real, runs, claims),
    )
    if criteria:
        render(
            "criteria.html",
            "criteria.html",
            title="The criteria",
            body=_markup(markdown_html(paper.sections_for_lines(criteria.read_text("utf-8")), 1)),
        )
    for f in shown:  # the figures the pages show, copied: the folder then stands alone
        if f["exists"]:
            files[f["src"]] = (figures_dir / f"{f['id']}.png").read_bytes()
    return dict(sorted(files.items()))


def write_report(results_dir="results", figures_dir="figures", out_dir=None) -> Path:
    """Write the report of ``results_dir`` into ``out_dir`` (default ``<results>/report``) and
    return its ``index.html``; files of earlier reports that are no longer produced are removed.
    """
    results_dir = Path(results_dir)
    out_dir = Path(out_dir) if out_dir is not None else results_dir / "report"
    summary_md, claims_csv = results_dir / "SUMMARY.md", results_dir / "claims.csv"
    for path in (summary_md, claims_csv):
        if not path.is_file():
            raise FileNotFoundError(
                f"{path} not found: run `python -m proxboost.report --results {results_dir}`"
                " first (`make figures` does)"
            )
    claims = read_claims(claims_csv)
    read = versions.read_versions(results_dir)  # one numerics version (docs/results.md)
    files = build_report(
        summary_md.read_text(encoding="utf-8"),
        claims,
        versions.load_curves(results_dir, versions=read),
        versions.load(results_dir, versions=read),
        figures_dir=Path(figures_dir),
        results_name=results_dir.resolve().name,
        reading=versions.reading_line(results_dir),
        progress=versions.progress_line(results_dir) or "",
        attachments={p.name: p.read_bytes() for p in (claims_csv, summary_md)},
    )
    for pattern in OWNED:
        for old in out_dir.glob(pattern):
            if old.relative_to(out_dir).as_posix() not in files:
                old.unlink()
    for name, data in files.items():
        path = out_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_file() and path.read_bytes() == data:
            continue  # unchanged: keep the file (and its time stamp) as it is
        with atomic_path(path, suffix=path.suffix) as tmp:
            tmp.write_bytes(data)
    return out_dir / "index.html"


@stops_on_damage
def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m proxboost.html_report", description=__doc__.splitlines()[0]
    )
    p.add_argument("--results", default="results", help="results directory (default: results)")
    p.add_argument("--figures", default="figures", help="the figures to link (default: figures)")
    p.add_argument("--out", default=None, help="output directory (default: <results>/report)")
    args = p.parse_args(argv)
    if not Path(args.results).is_dir():
        p.error(f"--results {args.results}: no such directory (the stored results live there)")
    try:
        index = write_report(args.results, args.figures, args.out)
    except (FileNotFoundError, ValueError) as e:
        p.error(str(e))
    print(f"wrote {index} (open it in a browser)")


if __name__ == "__main__":
    main()
