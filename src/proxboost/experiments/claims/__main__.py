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

COMPARE_COLUMNS = (
    "statement",
    "scope",
    "protocol",
    "verdict_a",
    "verdict_b",
    "numbers_a",
    "numbers_b",
)
#: What names one judged cell: a statement's scope is judged once per protocol (the engines'
#: comparison judges the same scope on exact and on hist trees).
CELL = ["id", "scope", "protocol"]


def _paired(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """The cells of two judgements side by side (suffixes ``_a``, ``_b``), matched on statement,
    scope and protocol; a scope whose protocol text changed between them (a synthetic
    experiment that gained a tie rule: "10 runs" then "15 runs") and that is judged once on each
    side is matched on statement and scope, its protocol shown as ``old → new``."""
    both = a.merge(b, on=CELL, how="outer", suffixes=("_a", "_b"), validate="one_to_one")
    only_a, only_b = both["verdict_b"].isna(), both["verdict_a"].isna()
    key = ["id", "scope"]
    once_a = both[only_a].drop_duplicates(key, keep=False)
    once_b = both[only_b].drop_duplicates(key, keep=False)
    moved = once_a[key + ["protocol", "verdict_a", "numbers_a"]].merge(
        once_b[key + ["protocol", "verdict_b", "numbers_b"]], on=key, suffixes=("_a", "_b")
    )
    if moved.empty:
        return both
    moved["protocol"] = moved["protocol_a"] + " → " + moved["protocol_b"]
    moved = moved.drop(columns=["protocol_a", "protocol_b"])
    names = set(map(tuple, moved[key].to_numpy()))
    single = (only_a | only_b) & both[key].apply(tuple, axis=1).isin(names)
    return pd.concat([both[~single], moved[both.columns]], ignore_index=True)


def compare_versions(results_dir, a: int, b: int) -> pd.DataFrame:
    """The claims judged on the stored results of numerics version ``a`` and, separately, of
    version ``b`` (the same criteria); one row per (statement, scope, protocol) whose verdict or
    numbers differ. A scope with no stored result under a version (absent from its judgement, or
    judged on nothing) shows :data:`NOT_COMPUTED` instead of a verdict. Columns: ``statement,
    scope, protocol, verdict_<a>, verdict_<b>, numbers_<a>, numbers_<b>``."""
    curves, real = load_curves(results_dir), load(results_dir)
    judged = []
    for v in (a, b):
        # the older version as it was reported: with the rows made before identities existed
        # (version 0), read beside it until the newer version has their counterparts
        read = {v, versions.LEGACY_VERSION} if v == min(a, b) else {v}
        c = judge(versions.select(curves, read), versions.select(real, read))
        c = c[[*CELL, "verdict", "numbers", "n_support"]].copy()
        c["protocol"] = c["protocol"].fillna("")
        empty = pd.to_numeric(c["n_support"], errors="coerce").fillna(0) <= 0
        c.loc[empty, "verdict"] = NOT_COMPUTED
        c.loc[empty, "numbers"] = ""
        judged.append(c.drop(columns="n_support"))
    both = _paired(*judged)
    for side in ("a", "b"):
        missing = both[f"verdict_{side}"].isna()
        both.loc[missing, f"verdict_{side}"] = NOT_COMPUTED
        both[f"numbers_{side}"] = both[f"numbers_{side}"].fillna("")
    differ = (both["verdict_a"] != both["verdict_b"]) | (both["numbers_a"] != both["numbers_b"])
    out = both[differ].rename(columns={"id": "statement"})[list(COMPARE_COLUMNS)]
    out.columns = [c.replace("_a", f"_v{a}").replace("_b", f"_v{b}") for c in COMPARE_COLUMNS]
    order = {sid: k for k, sid in enumerate(judged[0]["id"].drop_duplicates())}
    out = out.assign(_o=out["statement"].map(order).fillna(len(order)))
    keys = ["_o", "statement", "scope", "protocol"]
    return out.sort_values(keys, kind="stable").drop(columns="_o")


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
    p.add_argument(
        "--verdicts-only",
        action="store_true",
        help="with --compare-versions: only the cells whose verdict differs",
    )
    args = p.parse_args(argv)
    if args.verdicts_only and not args.compare_versions:
        p.error("--verdicts-only goes with --compare-versions A B")
    if args.compare_versions:
        a, b = args.compare_versions
        diff = compare_versions(args.results, a, b)
        what = "differ"
        if args.verdicts_only:
            diff, what = diff[diff[f"verdict_v{a}"] != diff[f"verdict_v{b}"]], "differ in verdict"
        print(f"claims judged on numerics version {a} and on version {b}: {len(diff)} {what}")
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
