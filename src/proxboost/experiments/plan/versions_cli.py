"""``python -m proxboost.versions``: the reported numerics version and the recompute's progress
(:mod:`proxboost.experiments.plan.versions`), its manifest, and at its end its cost and the
removal of its sources (:mod:`proxboost.experiments.plan.retire`). docs/results.md describes
each option."""

from __future__ import annotations

import argparse
import sys

from proxboost.experiments.plan import retire
from proxboost.experiments.plan.versions import (
    MANIFEST,
    TARGET_VERSION,
    cost_line,
    progress,
    reading_line,
    reported_version,
    write_manifest,
)
from proxboost.experiments.store import results


def main(argv=None) -> int:
    """``python -m proxboost.versions``: print the reported version and the recompute's progress;
    ``--write-manifest`` first writes the manifest from the stored identities."""
    p = argparse.ArgumentParser(prog="python -m proxboost.versions", description=main.__doc__)
    p.add_argument("--results", default=results.DEFAULT_RESULTS_DIR)
    p.add_argument(
        "--write-manifest",
        action="store_true",
        help=f"write <results>/{MANIFEST}: the computations of the recompute to version"
        f" {TARGET_VERSION}",
    )
    p.add_argument("--cost", action="store_true", help="print the recompute's cost per dataset")
    p.add_argument(
        "--retire-sources",
        action="store_true",
        help="once the recompute is complete: remove the files it recomputed (its sources)",
    )
    p.add_argument("--dry-run", action="store_true", help="with --retire-sources: list only")
    args = p.parse_args(argv)
    if args.cost or args.retire_sources:
        return _end_of_recompute(args)
    if args.write_manifest:
        path, n = write_manifest(args.results)
        print(f"wrote {path}: {n} computations to store under numerics version {TARGET_VERSION}")
    k, n = progress(args.results)
    print(f"reported version: {reported_version(args.results)}; stored at the target: {k} of {n}")
    print(reading_line(args.results))
    if n:
        print(cost_line(args.results))
    return 0


def _end_of_recompute(args) -> int:
    """``--cost`` and ``--retire-sources`` (:mod:`proxboost.experiments.plan.retire`)."""
    if args.cost:
        print(retire.cost_markdown(args.results))
    if not args.retire_sources:
        return 0
    try:
        done = retire.retire_sources(args.results, dry_run=args.dry_run)
    except retire.RecomputeIncomplete as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.dry_run:
        print("\n".join(done.files))
    old = ", ".join(str(v) for v in sorted(done.versions)) or "none"
    verb = "would remove" if args.dry_run else "removed"
    print(
        f"{verb} {len(done.files)} files of numerics versions {old};"
        f" the last commit holding them: {results.git_commit()} (commit the removal next)"
    )
    if done.kept_older:
        print(f"kept {len(done.kept_older)} older-version files no manifest line supersedes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
