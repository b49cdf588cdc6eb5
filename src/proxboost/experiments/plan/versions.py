"""Which numerics version the report reads while a recompute is partial (docs/results.md).

Every stored artifact names the :data:`~proxboost.experiments.store.results.NUMERICS_VERSION` that
computed it (key ``numerics_version`` of its identity). When that version is raised, every stored
result is computed again, over days and in pieces, so a results folder holds the old version and
part of the new one. The report (claims.csv, SUMMARY.md, every figure, the HTML report) then reads
**one version, the reported one**, never a mix:

- The **manifest** ``<results>/manifest.csv`` lists the computations of the recompute, one line
  each: a real-world run (one identity, all its splits) or one synthetic curve (one file: two
  experiments that fit the same identity store it twice), named by the
  identity hash it has at :data:`TARGET_VERSION`, with the version and hash it is stored under
  today (``source_version``, ``source_hash``), its readable path and the number of row files it
  needs. ``python -m proxboost.versions --write-manifest`` writes it from the stored identities
  (no data file, no dry run); ``make results`` does so first.
- **Reported version**: :data:`TARGET_VERSION` once every computation of the manifest is stored
  under it; until then the versions the manifest's computations are stored under today (the
  version before, plus the version-0 rows of the engine comparison made before identities
  existed, read as before). A folder without a manifest has no recompute in progress: it reads
  the newest version it holds (plus version-0 rows, which no later version supersedes there).
- Results that never had a row of an older version (new experiments) are computed under the new
  version only: they are not in the manifest, and they are read once that version is reported.
- While the recompute is partial, SUMMARY.md and the report's first page carry
  :func:`progress_line`, whose counts are read from the manifest and the stored files.

The readers go through :func:`load`, :func:`load_curves` and :func:`load_intro`, which keep the
artifacts of the reported version only.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pandas as pd

from proxboost.experiments.plan.curves_plan import RunSpec
from proxboost.experiments.store import results
from proxboost.experiments.system.sealed import DamagedFileError, read_sealed

__all__ = [
    "LEGACY_VERSION",
    "MANIFEST",
    "TARGET_VERSION",
    "load",
    "load_curves",
    "load_intro",
    "manifest_entries",
    "progress",
    "progress_line",
    "read_manifest",
    "read_versions",
    "reading_line",
    "reported_version",
    "select",
    "write_manifest",
]

#: The numerics version the recompute produces: the manifest names each computation by its identity
#: at this version. It is the version after the one the stored results hold; it is set here ahead of
#: :data:`~proxboost.experiments.store.results.NUMERICS_VERSION` so that the manifest
# (and the rule)
#: exist before the code that computes it is merged; from then on the two are equal, and the
#: next raise of NUMERICS_VERSION raises this one with it (tests/test_versions.py checks that
#: NUMERICS_VERSION is never above it).
TARGET_VERSION = 3

#: The version of the artifacts made before identities existed (migrated, never reused).
LEGACY_VERSION = 0

#: The manifest's file name under a results folder.
MANIFEST = "manifest.csv"

MANIFEST_COLUMNS = (
    "kind",  # run | curve
    "path",  # readable path under the results folder at the target version (run folder / file)
    "splits",  # row files the computation stores (a run's n_splits; 1 for a curve)
    "version",  # TARGET_VERSION
    "hash",  # sha256 of the identity at the target version
    "source_version",  # the version it is stored under today
    "source_hash",  # its identity hash under that version
)

PROGRESS_TEXT = (
    "Recompute to numerics version {version} in progress: {k} of {n} computations stored"
    " — `make results` resumes it"
)


# -- identities at the target version -----------------------------------------------------------
def _version(identity_text) -> int:
    """The numerics version of an identity; :data:`LEGACY_VERSION` when it names none."""
    try:
        value = json.loads(identity_text).get("numerics_version")
    except (TypeError, ValueError, AttributeError):
        return LEGACY_VERSION
    return LEGACY_VERSION if value is None else int(value)


def _boosting_method(identity: dict, loss_identity: dict) -> dict | None:
    """The identity the current code gives a boosting method (its options and libraries as
    this code sets them); None for a baseline, whose stored method identity is kept."""
    from proxboost.experiments.plan.methods import BOOSTING_ALGOS, BoostingMethod
    from proxboost.losses import make_loss

    method = identity["method"]
    if method.get("algo") not in BOOSTING_ALGOS:
        return None
    params = {k: v for k, v in loss_identity.items() if k != "name"}
    loss = make_loss(loss_identity["name"], **params)
    tie_rule = method.get("options", {}).get("tie_rule")
    kwargs = {"tie_rule": tie_rule} if tie_rule else {}
    return BoostingMethod(method["algo"], loss, engine=method["engine"], **kwargs).identity()


def target_identity(identity_text: str, version: int = TARGET_VERSION) -> str:
    """The canonical identity the computation of a stored identity has at ``version``: the same
    data, loss, grid and protocol, ``numerics_version`` set to ``version`` and, for a boosting
    method, the method's identity as this code gives it (the version-0 rows hold an older
    spelling of it). Rebuilding the stored version-2 identities at version 2 gives them back
    unchanged (tests/test_versions.py)."""
    identity = json.loads(identity_text)
    identity["numerics_version"] = int(version)
    try:
        method = _boosting_method(identity, identity["loss"])
    except (KeyError, TypeError, ValueError):
        method = None
    if method is not None:
        identity["method"] = method
    return results.canonical_json(identity)


def _relative(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def manifest_entries(results_dir, version: int = TARGET_VERSION) -> pd.DataFrame:
    """The computations of the recompute to ``version``: every run and curve stored under an
    older version (one line per identity), with its identity hash at ``version``."""
    root = Path(results_dir)
    lines = []
    rows = results.load(root)
    if len(rows):
        runs = rows.drop_duplicates("identity_hash")
        for r in runs.itertuples(index=False):
            source = _version(r.identity)
            if source >= version:
                continue
            text = target_identity(r.identity, version)
            digest = results.identity_hash(text)
            where = results.run_dir(root, r.protocol, r.dataset, r.loss, r.algo, r.engine, text)
            lines.append(
                ("run", _relative(where, root), int(r.n_splits), version, digest, source)
                + (r.identity_hash,)
            )
    curves = results.load_curves(root)
    if len(curves):
        first = curves.drop_duplicates(["experiment", "identity_hash"])
        for r in first.itertuples(index=False):
            source = _version(r.identity)
            if source >= version:
                continue
            text = target_identity(r.identity, version)
            digest = results.identity_hash(text)
            name = _curve_name(r)
            folder = Path("synthetic", r.experiment, r.dataset, r.loss, r.algo)
            path = folder / f"{name}_{digest[: results.HASH_LENGTH]}.csv"
            lines.append(("curve", path.as_posix(), 1, version, digest, source, r.identity_hash))
    df = pd.DataFrame(lines, columns=list(MANIFEST_COLUMNS))
    # the sources: the newest version stored below the target, and the legacy rows (version 0);
    # a computation also stored under a version between them is the same computation
    base = df.loc[df["source_version"] != LEGACY_VERSION, "source_version"].max()
    df = df[df["source_version"].isin({LEGACY_VERSION, base})]
    df = df.sort_values(["kind", "path", "source_version"], ascending=[True, True, False])
    return df.drop_duplicates("path").reset_index(drop=True)


def _curve_name(r) -> str:
    """The readable part of a stored curve's file name (its settings, before the hash)."""
    step = None if pd.isna(r.step) else float(r.step)
    spec = RunSpec(
        r.experiment,
        r.dataset,
        r.loss,
        r.algo,
        max_depth=int(r.max_depth),
        learning_rate=float(r.learning_rate),
        n_estimators=int(r.n_estimators),
        step=step,
        seed=int(r.seed),
        engine=str(r.engine),
        tie_rule=str(r.tie_rule),
    )
    return spec.name


def write_manifest(results_dir, version: int = TARGET_VERSION) -> tuple[Path, int]:
    """Write ``<results>/manifest.csv`` from the stored identities; returns (path, lines).

    A line of an earlier manifest whose source is no longer stored is kept (its computation
    still counts), so removing old rows never shrinks the recompute."""
    root = Path(results_dir)
    df = manifest_entries(root, version)
    old = read_manifest(root)
    if old is not None and len(old):
        old = old[old["version"] == version]
        kept = old[~old["path"].isin(df["path"]) & ~old["source_hash"].isin(df["source_hash"])]
        df = pd.concat([df, kept], ignore_index=True)
        df = df.drop_duplicates("path").sort_values(["kind", "path"], kind="stable")
    path = results.atomic_write_csv(df.reset_index(drop=True), root / MANIFEST)
    return path, len(df)


def read_manifest(results_dir) -> pd.DataFrame | None:
    """The manifest of ``results_dir`` (verified), or None when it has none."""
    path = Path(results_dir) / MANIFEST
    if not path.is_file():
        return None
    df = pd.read_csv(io.StringIO(read_sealed(path)), dtype={"hash": str, "source_hash": str})
    for c in ("splits", "version", "source_version"):
        df[c] = df[c].astype(int)
    return df


# -- the rule -------------------------------------------------------------------------------------
def _stored(root: Path, entry) -> bool:
    """Whether a computation of the manifest is stored at its target: every row file of the run
    in its folder (named by the target hash), or the curve file."""
    where = root / entry.path
    if entry.kind == "curve":
        return where.is_file()
    return all((where / f"split-{s:02d}.csv").is_file() for s in range(int(entry.splits)))


def progress(results_dir) -> tuple[int, int]:
    """(computations of the manifest stored at their target version, computations in it);
    (0, 0) without a manifest."""
    root = Path(results_dir)
    manifest = read_manifest(root)
    if manifest is None or manifest.empty:
        return 0, 0
    k = sum(_stored(root, e) for e in manifest.itertuples(index=False))
    return int(k), len(manifest)


def remaining_cost(results_dir) -> tuple[int, float, int]:
    """What the recompute still has to compute, before any fit (the first lines of ``make
    results``): (computations of the manifest not stored at their target, their CPU-seconds as
    the stored source computations took them — the fit times of the source rows of the splits
    still missing, a source curve's last ``seconds`` —, how many of them have no stored time)."""
    root = Path(results_dir)
    manifest = read_manifest(root)
    if manifest is None or manifest.empty:
        return 0, 0.0, 0
    todo = [e for e in manifest.itertuples(index=False) if not _stored(root, e)]
    if not todo:
        return 0, 0.0, 0
    rows = results.load(root)
    fit_time = {}
    if len(rows) and "fit_seconds" in rows.columns:
        seconds = rows["fit_seconds"].astype(float)  # NaN: a row stored without its time
        grouped = seconds.groupby([rows["identity_hash"], rows["split"].astype(int)])
        fit_time = grouped.sum(min_count=1).dropna().to_dict()
    curves = results.load_curves(root)
    curve_time = {}
    if len(curves):
        last = curves.sort_values("iteration").groupby("identity_hash")["seconds"].last()
        curve_time = last.astype(float).to_dict()
    total, unknown = 0.0, 0
    for e in todo:
        if e.kind == "curve":
            cost = curve_time.get(e.source_hash)
        else:
            folder = root / e.path
            missing = [
                s for s in range(int(e.splits)) if not (folder / f"split-{s:02d}.csv").is_file()
            ]
            costs = [fit_time.get((e.source_hash, s)) for s in missing]
            cost = None if any(c is None for c in costs) else sum(costs)
        if cost is None:
            unknown += 1
        else:
            total += cost
    return len(todo), total, unknown


def cost_line(results_dir, cores: int | None = None) -> str:
    """The recompute's remaining work in one line (see :func:`remaining_cost`)."""
    m, seconds, unknown = remaining_cost(results_dir)
    if m == 0:
        return f"nothing left to recompute: every computation is stored under {TARGET_VERSION}"
    cores = cores or os.cpu_count() or 1
    hours = seconds / 3600
    return (
        f"left to recompute: {m} computations, about {hours:.1f} CPU-hours as their stored "
        f"source computations took them (about {hours / cores:.1f} hours on {cores} cores)"
        + (f"; {unknown} without a stored time (not counted)" if unknown else "")
    )


def _stored_versions(root: Path) -> set[int]:
    """The numerics versions of the stored artifacts. A damaged file is skipped here without a
    word: the readers that follow refuse it, naming it and the command that recomputes it."""
    found = set()
    for path in results.stored_files(root):
        if path.name.endswith(".predictions.csv") or path.name.startswith("data-"):
            continue
        try:
            text = read_sealed(path)
        except (DamagedFileError, OSError):
            continue
        found.add(_version(results.identity_of_text(text)))  # the file is read once
    return found


def read_versions(results_dir) -> frozenset[int]:
    """The numerics versions whose artifacts the report reads (see the module's docstring)."""
    root = Path(results_dir)
    manifest = read_manifest(root)
    if manifest is not None and len(manifest):
        target = int(manifest["version"].max())
        k, n = progress(root)
        if k == n:
            return frozenset({target})
        return frozenset(int(v) for v in manifest["source_version"].unique())
    stored = _stored_versions(root)
    newest = max(stored - {LEGACY_VERSION}, default=results.NUMERICS_VERSION)
    return frozenset({newest} | (stored & {LEGACY_VERSION}))


def reported_version(results_dir) -> int:
    """The numerics version the report of ``results_dir`` reads (its newest read version)."""
    return max(read_versions(results_dir))


def progress_line(results_dir) -> str | None:
    """The line SUMMARY.md and the report's first page carry while the recompute is partial."""
    root = Path(results_dir)
    manifest = read_manifest(root)
    if manifest is None or manifest.empty:
        return None
    k, n = progress(root)
    if k == n:
        return None
    return PROGRESS_TEXT.format(version=int(manifest["version"].max()), k=k, n=n)


def reading_line(results_dir, results_name=None) -> str:
    """What the report reads, in one sentence (SUMMARY.md, the report's first page)."""
    read = sorted(read_versions(results_dir), reverse=True)
    main, *older = read
    text = f"Numbers read: numerics version {main} only"
    if older:
        text = (
            f"Numbers read: numerics version {main}, with the rows of version"
            f" {', '.join(str(v) for v in older)} made before identities existed, read as before"
        )
    return text + " (the reported version, docs/results.md)."


# -- the readers ----------------------------------------------------------------------------------
def select(df: pd.DataFrame, versions) -> pd.DataFrame:
    """The rows (result rows or curve rows) of ``df`` whose identity has one of ``versions``."""
    if df.empty or "identity" not in df.columns:
        return df
    versions = set(versions)
    of = {text: _version(text) for text in df["identity"].dropna().unique()}
    keep = df["identity"].map(of).isin(versions)
    return df[keep.to_numpy()].reset_index(drop=True)


def load(results_dir="results", versions=None) -> pd.DataFrame:
    """:func:`proxboost.experiments.store.results.load` of the reported version's rows only."""
    versions = read_versions(results_dir) if versions is None else versions
    return select(results.load(results_dir), versions)


def load_curves(results_dir="results", experiment=None, versions=None) -> pd.DataFrame:
    """:func:`proxboost.experiments.store.results.load_curves` of the reported version's curves
    only."""
    versions = read_versions(results_dir) if versions is None else versions
    return select(results.load_curves(results_dir, experiment), versions)


def load_intro(results_dir="results", versions=None):
    """:func:`proxboost.experiments.store.results.load_intro` of the reported version: its curves,
    and the predictions of those curves (the data draws have no version: they are the
    generator's)."""
    versions = read_versions(results_dir) if versions is None else versions
    curves, predictions, data = results.load_intro(results_dir)
    curves = select(curves, versions)
    if not predictions.empty and "identity_hash" in predictions.columns:
        keep = set(curves["identity_hash"]) if "identity_hash" in curves.columns else set()
        predictions = predictions[predictions["identity_hash"].isin(keep)].reset_index(drop=True)
    return curves, predictions, data
