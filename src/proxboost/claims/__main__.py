"""python -m proxboost.claims: judge the stored results and write ``claims.csv``."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..results import load, load_curves, stops_on_damage
from .criteria import CONFIRMED, CONTRADICTED, INCONCLUSIVE
from .judging import judge, write_claims

_DESCRIPTION = "Judge the paper's statements on the stored results and write claims.csv."


@stops_on_damage
def main(argv=None):
    """Judge the stored curves and rows of ``--results`` and write ``claims.csv``."""
    p = argparse.ArgumentParser(prog="python -m proxboost.claims", description=_DESCRIPTION)
    p.add_argument("--results", default="results", help="results directory (default: results)")
    p.add_argument("--out", default=None, help="output file (default: <results>/claims.csv)")
    args = p.parse_args(argv)
    claims = judge(load_curves(args.results), load(args.results))
    out = write_claims(claims, args.out or Path(args.results) / "claims.csv")
    counts = claims[claims["scope"] == "all"]["verdict"].value_counts()
    print(
        f"wrote {out}: "
        + ", ".join(f"{counts.get(v, 0)} {v}" for v in (CONFIRMED, CONTRADICTED, INCONCLUSIVE))
    )


if __name__ == "__main__":
    main()
