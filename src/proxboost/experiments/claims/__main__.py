"""python -m proxboost.claims: judge the stored results and write ``claims.csv``; with
``--compare-versions A B``, judge each numerics version's stored results separately and list the
verdicts and numbers that differ."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from proxboost.experiments.claims.criteria import CONFIRMED, CONTRADICTED, INCONCLUSIVE
from proxboost.experiments.claims.judging import judge, write_claims
from proxboost.experiments.plan import versions
from proxboost.experiments.store.results import atomic_write_csv, load, load_curves, stops_on_damage

_DESCRIPTION = "Judge the paper's statements on the stored results and write claims.csv."

#: What the comparison shows for a scope that has no stored result under a version.
NOT_COMPUTED = "not yet computed"

COMPARE_COLUMNS = ("statement", "scope", "verdict_a", "verdict_b", "numbers_a", "numbers_b")


def compare_versions(results_dir, a: int, b: int) -> pd.DataFrame:
    """The claims judged on the stored results of numerics version ``a`` and, separately, of
    version ``b`` (the same criteria); one row per (statement, scope) whose verdict or numbers
    differ. A scope with no stored result under a version (absent from its judgement, or judged
    on nothing) shows :data:`NOT_COMPUTED` instead of a verdict. Columns: ``statement, scope,
    verdict_<a>, verdict_<b>, numbers_<a>, numbers_<b>``."""
    curves, real = load_curves(results_dir), load(results_dir)
    judged = []
    for v in (a, b):
        c = judge(versions.select(curves, {v}), versions.select(real, {v}))
        c = c[["id", "scope", "verdict", "numbers", "n_support"]].copy()
        empty = pd.to_numeric(c["n_support"], errors="coerce").fillna(0) <= 0
        c.loc[empty, "verdict"] = NOT_COMPUTED
        c.loc[empty, "numbers"] = ""
        judged.append(c.drop(columns="n_support"))
    both = judged[0].merge(judged[1], on=["id", "scope"], how="outer", suffixes=("_a", "_b"))
    for side in ("a", "b"):
        missing = both[f"verdict_{side}"].isna()
        both.loc[missing, f"verdict_{side}"] = NOT_COMPUTED
        both[f"numbers_{side}"] = both[f"numbers_{side}"].fillna("")
    differ = (both["verdict_a"] != both["verdict_b"]) | (both["numbers_a"] != both["numbers_b"])
    out = both[differ].rename(columns={"id": "statement"})[list(COMPARE_COLUMNS)]
    out.columns = [c.replace("_a", f"_v{a}").replace("_b", f"_v{b}") for c in COMPARE_COLUMNS]
    order = {sid: k for k, sid in enumerate(judged[0]["id"].drop_duplicates())}
    out = out.assign(_o=out["statement"].map(order).fillna(len(order)))
    return out.sort_values(["_o", "statement", "scope"], kind="stable").drop(columns="_o")


def _markdown(df: pd.DataFrame) -> list[str]:
    cells = [[str(x).replace("|", "\\|") for x in row] for row in df.itertuples(index=False)]
    return [
        "| " + " | ".join(df.columns) + " |",
        "|" + "---|" * len(df.columns),
        *("| " + " | ".join(row) + " |" for row in cells),
    ]


@stops_on_damage
def main(argv=None):
    """Judge the stored curves and rows of ``--results`` and write ``claims.csv``."""
    p = argparse.ArgumentParser(prog="python -m proxboost.claims", description=_DESCRIPTION)
    p.add_argument("--results", default="results", help="results directory (default: results)")
    p.add_argument("--out", default=None, help="output file (default: <results>/claims.csv)")
    p.add_argument(
        "--compare-versions",
        nargs=2,
        type=int,
        metavar=("A", "B"),
        help="judge numerics versions A and B separately and print (and write to --out, if"
        " given) the verdicts and numbers that differ",
    )
    args = p.parse_args(argv)
    if args.compare_versions:
        a, b = args.compare_versions
        diff = compare_versions(args.results, a, b)
        print(f"claims judged on numerics version {a} and on version {b}: {len(diff)} differ")
        if len(diff):
            print("\n".join(_markdown(diff)))
        if args.out:
            print(f"wrote {atomic_write_csv(diff, args.out)}")
        return
    # the reported version only (docs/results.md), as `make figures` judges
    read = versions.read_versions(args.results)
    claims = judge(
        versions.load_curves(args.results, versions=read),
        versions.load(args.results, versions=read),
    )
    out = write_claims(claims, args.out or Path(args.results) / "claims.csv")
    counts = claims[claims["scope"] == "all"]["verdict"].value_counts()
    print(
        f"wrote {out}: "
        + ", ".join(f"{counts.get(v, 0)} {v}" for v in (CONFIRMED, CONTRADICTED, INCONCLUSIVE))
    )


if __name__ == "__main__":
    main()
