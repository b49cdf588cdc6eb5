"""The end of a recompute (proxboost.experiments.plan.retire): the sources removed only once every
computation is stored at its target, exactly those files, and the cost as the rows recorded it.
Tiny results folders as in tests/test_versions.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_versions import (
    GRADIENT,
    N_SPLITS,
    PROX,
    _versions_in,
    _write_curve,
    _write_legacy_row,
    _write_run,
)

from proxboost.experiments.plan import retire, versions, versions_cli
from proxboost.experiments.store import results


def _files(root):
    return {p.relative_to(root).as_posix() for p in root.rglob("*.csv")}


@pytest.fixture
def recomputed(tmp_path):
    """Version-2 runs and curve, a version-0 row, the manifest, then every version-3
    counterpart (the legacy row's included) and a predictions file beside each curve."""
    _write_run(tmp_path, "gradient", 2, GRADIENT, fit_seconds=np.full(N_SPLITS, 1.0))
    _write_run(tmp_path, "prox", 2, PROX)
    old_curve = _write_curve(tmp_path, 2)
    _write_legacy_row(tmp_path)
    versions.write_manifest(tmp_path)
    assert versions.progress(tmp_path) == (0, 4)
    return tmp_path, old_curve


def _complete(root):
    _write_run(root, "gradient", 3, GRADIENT, fit_seconds=np.full(N_SPLITS, 2.0))
    _write_run(root, "prox", 3, PROX, fit_seconds=np.full(N_SPLITS, 4.0))
    new_curve = _write_curve(root, 3)
    manifest = versions.read_manifest(root)
    legacy = manifest[manifest["source_version"] == versions.LEGACY_VERSION].iloc[0]
    identity = versions.target_identity(_legacy_identity(root), 3)
    assert results.identity_hash(identity) == legacy["hash"]
    results.write_row(
        root,
        {
            "protocol": "paper/20splits/T10",
            "dataset": "sniffer",
            "loss": "lad",
            "algo": "gradient",
            "engine": "hist",
            "split": 0,
            "test_loss": 1.0,
            "n_splits": 1,
            "fit_seconds": 8.0,
            "identity": identity,
            "commit": "v3",
        },
    )
    assert versions.progress(root) == (4, 4)
    return new_curve


def _legacy_identity(root):
    rows = results.load(root)
    return rows.loc[rows["engine"] == "hist", "identity"].iloc[0]


def test_a_partial_recompute_is_refused_and_nothing_moves(recomputed):
    root, _ = recomputed
    _write_run(root, "gradient", 3, GRADIENT)  # 1 of 4 stored
    before = _files(root)
    with pytest.raises(retire.RecomputeIncomplete, match=r"partial \(1 of 4"):
        retire.retire_sources(root)
    assert _files(root) == before


def test_without_a_manifest_nothing_is_retired(tmp_path):
    _write_run(tmp_path, "gradient", 2, GRADIENT)
    with pytest.raises(retire.RecomputeIncomplete, match="no recompute manifest"):
        retire.retire_sources(tmp_path)


def test_exactly_the_sources_and_their_predictions_are_removed(recomputed):
    root, old_curve = recomputed
    new_curve = _complete(root)
    for curve in (old_curve, new_curve):  # each curve's predictions beside it
        beside = curve.with_name(curve.stem + retire.PREDICTIONS_SUFFIX)
        results.atomic_write_csv(pd.DataFrame({"x": [0.0], "prediction": [1.0]}), beside)
    before = _files(root)
    listed = retire.retire_sources(root, dry_run=True)
    assert _files(root) == before  # a dry run removes nothing
    done = retire.retire_sources(root)
    assert done == listed and done.versions == {0, 2} and done.kept_older == ()
    removed = before - _files(root)
    assert removed == set(done.files)
    # every version-2 and version-0 artifact gone, every version-3 one kept
    assert len(removed) == 2 * N_SPLITS + 1 + 1 + 1  # two runs, the legacy row, curve + its preds
    assert old_curve.with_name(old_curve.stem + retire.PREDICTIONS_SUFFIX).as_posix() not in {
        (root / f).as_posix() for f in _files(root)
    }
    assert new_curve.with_name(new_curve.stem + retire.PREDICTIONS_SUFFIX).is_file()
    assert _versions_in(results.load(root)) == {3}
    assert _versions_in(results.load_curves(root)) == {3}
    # no empty folder left behind, the manifest kept and still complete: version 3 reported
    assert not [d for d in root.rglob("*") if d.is_dir() and not any(d.iterdir())]
    assert versions.progress(root) == (4, 4) and versions.reported_version(root) == 3
    # rewriting the manifest (as `make results` does first) keeps its lines: nothing to compute
    versions.write_manifest(root)
    assert versions.progress(root) == (4, 4)


def test_older_files_no_manifest_line_supersedes_are_kept(recomputed):
    root, _ = recomputed
    _complete(root)
    _write_run(root, "residual_prox", 2, PROX)  # stored after the manifest: not one of its lines
    done = retire.retire_sources(root)
    assert len(done.kept_older) == N_SPLITS
    assert all("residual_prox" in f for f in done.kept_older)
    assert all((root / f).is_file() for f in done.kept_older)


def test_the_cost_is_what_the_target_rows_recorded(recomputed):
    root, _ = recomputed
    _complete(root)
    table = retire.recompute_cost(root).set_index("group")
    sniffer = table.loc["sniffer"]
    # three computations at version 3: 20 x 2 s, 20 x 4 s, and the engine comparison's 8 s
    assert (sniffer["computations"], sniffer["files"]) == (3, 2 * N_SPLITS + 1)
    assert sniffer["fit_hours"] == pytest.approx((20 * 2.0 + 20 * 4.0 + 8.0) / 3600)
    assert sniffer["commits"] == "v3"
    curve = table.loc["synthetic/convergence"]
    assert (curve["computations"], curve["files"]) == (1, 1)
    assert curve["fit_hours"] == pytest.approx(0.05 / 3600)  # the curve's last time
    text = retire.cost_markdown(root)
    assert "| sniffer | 3 | 41 |" in text and "| **all** | 4 | 42 |" in text


def test_the_command_line(recomputed, capsys):
    root, _ = recomputed
    assert versions_cli.main(["--results", str(root), "--retire-sources"]) == 2
    assert "error: the recompute is partial (0 of 4" in capsys.readouterr().err
    _complete(root)
    assert versions_cli.main(["--results", str(root), "--retire-sources", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would remove 42 files of numerics versions 0, 2" in out
    assert versions_cli.main(["--results", str(root), "--cost", "--retire-sources"]) == 0
    out = capsys.readouterr().out
    assert "| sniffer |" in out and "removed 42 files" in out
    assert pd.isna(versions.read_manifest(root)["hash"]).sum() == 0
