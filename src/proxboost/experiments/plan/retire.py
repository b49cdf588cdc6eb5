"""The end of a recompute (docs/results.md): what it cost, and the old version's files removed.

When every computation of the manifest (:mod:`proxboost.experiments.plan.versions`) is stored at
its target version, the report reads that version only, and the files the computations were
recomputed *from* — the manifest's sources, named by their identity hashes — are dead weight
that a reader of ``results/`` could still mistake for results. They are removed in one commit,
after the one that stores the last target rows, so that the commit before it names where the
old version can still be read (``git checkout <commit> -- results``).

* :func:`retire_sources` removes them: every stored row file and synthetic curve whose identity
  hash is a source of the manifest, and the predictions file beside a removed curve. It refuses
  (one line, nothing removed) while the recompute is partial. Files of an older version that no
  manifest line supersedes are kept and counted, never removed silently. The manifest itself is
  kept: its lines are all stored, so the reported version stays the target and ``make results``
  finds nothing to compute.
* :func:`recompute_cost` is the recompute as it happened: per dataset (or synthetic
  experiment), the computations, the row files, the fit time their rows recorded and the commits
  that computed them.

``python -m proxboost.versions --cost`` prints the table; ``--retire-sources`` removes the files
(``--dry-run`` lists them).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from proxboost.experiments.plan import versions
from proxboost.experiments.store import results
from proxboost.experiments.system.sealed import read_sealed

#: A synthetic curve's predictions are stored beside it under this suffix (its stem + suffix).
PREDICTIONS_SUFFIX = ".predictions.csv"


class RecomputeIncomplete(ValueError):
    """The recompute is partial: its sources are still the reported numbers."""


@dataclass(frozen=True)
class Retired:
    """What :func:`retire_sources` removed (or would remove): the files, their numerics
    versions, and the older-version files no manifest line supersedes (kept)."""

    files: tuple
    versions: frozenset
    kept_older: tuple


def _complete_manifest(root: Path) -> pd.DataFrame:
    manifest = versions.read_manifest(root)
    if manifest is None or manifest.empty:
        raise RecomputeIncomplete(
            f"{root} has no recompute manifest: nothing to retire"
            " (`python -m proxboost.versions --write-manifest` writes one)"
        )
    k, n = versions.progress(root)
    if k != n:
        raise RecomputeIncomplete(
            f"the recompute is partial ({k} of {n} computations stored at version"
            f" {int(manifest['version'].max())}): its sources are still the reported numbers;"
            " run `make results` until it is complete, then retire them"
        )
    return manifest


def _identity_and_version(path: Path):
    """(identity hash, numerics version) of a stored row or curve file."""
    text = results.identity_of_text(read_sealed(path))
    if text is None:
        return None, versions.LEGACY_VERSION
    return results.identity_hash(text), versions._version(text)


def retire_sources(results_dir, dry_run: bool = False) -> Retired:
    """Remove the manifest's source files once every computation is stored at its target (see
    the module docstring); ``dry_run``: list them only. Raises :class:`RecomputeIncomplete`."""
    root = Path(results_dir)
    manifest = _complete_manifest(root)
    target = int(manifest["version"].max())
    sources = set(manifest["source_hash"].astype(str))
    removed, found, kept = [], set(), []
    for path in results.stored_files(root):
        if path.name.endswith(PREDICTIONS_SUFFIX) or path.name.startswith("data-"):
            continue
        digest, version = _identity_and_version(path)
        if digest in sources:
            removed.append(path)
            found.add(version)
            predictions = path.with_name(path.stem + PREDICTIONS_SUFFIX)
            if predictions.is_file():
                removed.append(predictions)
        elif version < target:
            kept.append(path)
    if not dry_run:
        for path in removed:
            path.unlink()
        _remove_empty_folders(root, {p.parent for p in removed})
    rel = tuple(p.relative_to(root).as_posix() for p in removed)
    return Retired(rel, frozenset(found), tuple(p.relative_to(root).as_posix() for p in kept))


def _remove_empty_folders(root: Path, folders) -> None:
    """Remove each of ``folders`` left empty, and its parents up to ``root`` left empty."""
    for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        while folder != root and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
            folder = folder.parent


# -- the cost as it happened --------------------------------------------------------------
def _target_rows(root: Path, hashes: set) -> pd.DataFrame:
    rows = results.load(root)
    if rows.empty:
        return pd.DataFrame(columns=["group", "computation", "seconds", "commit"])
    rows = rows[rows["identity_hash"].isin(hashes)]
    seconds = rows["fit_seconds"].astype(float).fillna(0.0)
    if "refit_seconds" in rows.columns:
        seconds = seconds + rows["refit_seconds"].astype(float).fillna(0.0)
    return pd.DataFrame(
        {
            "group": rows["dataset"].astype(str),
            "computation": rows["identity_hash"],
            "seconds": seconds,
            "commit": rows["commit"].astype(str),
        }
    )


def _target_curves(root: Path, hashes: set) -> pd.DataFrame:
    curves = results.load_curves(root)
    if curves.empty:
        return pd.DataFrame(columns=["group", "computation", "seconds", "commit"])
    curves = curves[curves["identity_hash"].isin(hashes)]
    last = curves.sort_values("iteration").groupby(["experiment", "identity_hash"]).last()
    last = last.reset_index()
    return pd.DataFrame(
        {
            "group": "synthetic/" + last["experiment"].astype(str),
            "computation": last["identity_hash"],
            "seconds": last["seconds"].astype(float),
            "commit": last["commit"].astype(str),
        }
    )


def recompute_cost(results_dir) -> pd.DataFrame:
    """Per dataset (synthetic curves: per experiment) of the manifest's computations stored at
    their target: ``computations``, ``files`` (row files; a curve is one), ``fit_hours`` (the fit
    and refit times the rows recorded, wall time of each fit, summed; a curve's last time) and
    ``commits`` (those that computed them, abbreviated to 8 characters, sorted). A computation
    with part of its splits stored counts with the rows it has."""
    root = Path(results_dir)
    manifest = versions.read_manifest(root)
    if manifest is None or manifest.empty:
        return pd.DataFrame(columns=["group", "computations", "files", "fit_hours", "commits"])
    hashes = set(manifest["hash"].astype(str))
    parts = [p for p in (_target_rows(root, hashes), _target_curves(root, hashes)) if len(p)]
    if not parts:
        return pd.DataFrame(columns=["group", "computations", "files", "fit_hours", "commits"])
    done = pd.concat(parts, ignore_index=True)
    table = done.groupby("group").agg(
        computations=("computation", "nunique"),
        files=("computation", "size"),
        fit_hours=("seconds", lambda s: float(s.sum()) / 3600),
        commits=("commit", lambda c: ", ".join(sorted({v[:8] for v in c}))),
    )
    return table.reset_index()


def cost_markdown(results_dir) -> str:
    """:func:`recompute_cost` as a Markdown table with a total line."""
    table = recompute_cost(results_dir)
    lines = [
        "| dataset or experiment | computations | row files | fit time (h) | commits |",
        "|---|---|---|---|---|",
    ]
    for r in table.itertuples(index=False):
        lines.append(
            f"| {r.group} | {r.computations} | {r.files} | {r.fit_hours:.2f} | {r.commits} |"
        )
    lines.append(
        f"| **all** | {int(table['computations'].sum())} | {int(table['files'].sum())} |"
        f" {float(table['fit_hours'].sum()):.2f} | |"
    )
    return "\n".join(lines)
