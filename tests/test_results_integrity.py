"""Row integrity: every stored file ends with a checksum; damaged files are named, never read
as data, recomputed by the resume check, and stop the report with the command that recomputes
them."""

import json
import logging
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from proxboost.experiments.store import results
from proxboost.experiments.system.sealed import DamagedFileError, read_sealed, unseal

REPO = Path(__file__).resolve().parents[1]


def _row(split=0, **extra):
    identity = {"numerics_version": 2, "dataset": {"name": "toy"}, "x": 1}
    return {
        **{column: "x" for column in results.ROW_COLUMNS},
        "protocol": "paper/2splits/T5",
        "dataset": "toy",
        "loss": "lad",
        "algo": "prox",
        "engine": "exact",
        "split": split,
        "test_loss": 0.123456789,
        "identity": identity,
        **extra,
    }


def test_every_cut_and_every_one_byte_edit_is_detected(tmp_path):
    path = results.write_row(tmp_path, _row())
    data = path.read_bytes()
    assert unseal(data) == data.decode().rsplit("#sha256=", 1)[0]
    for cut in range(len(data)):
        with pytest.raises(DamagedFileError):
            unseal(data[:cut])
    for i in range(len(data)):
        for flip in (0x01, 0x20):
            edited = bytearray(data)
            edited[i] ^= flip
            with pytest.raises((DamagedFileError, UnicodeDecodeError)):
                unseal(bytes(edited))


def _damage(path, how):
    data = path.read_bytes()
    if how == "cut after the test loss":  # the digits of test_loss are the file's last bytes
        header, line = data.decode().split("\n")[:2]
        fields = header.split(",").index("test_loss") + 1  # test_loss comes before any quote
        path.write_text(header + "\n" + ",".join(line.split(",")[:fields]))
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "edited test loss":
        header, line = data.decode().split("\n")[:2]
        at = header.split(",").index("test_loss")
        fields = line.split(",")
        fields[at] = fields[at][:-1] + ("1" if fields[at][-1] != "1" else "2")
        path.write_bytes(data.replace(line.encode(), ",".join(fields).encode(), 1))
    elif how == "trailing columns cut":
        path.write_bytes(data[: data.rindex(b",")] + b"\n")


@pytest.mark.parametrize(
    "how", ["cut after the test loss", "empty", "edited test loss", "trailing columns cut"]
)
def test_load_names_every_damaged_file_and_skip_returns_the_rest(tmp_path, how):
    paths = [results.write_row(tmp_path, _row(split=k)) for k in range(3)]
    _damage(paths[1], how)
    with pytest.raises(results.DamagedResultsError) as info:
        results.load(tmp_path)
    message = str(info.value)
    assert str(paths[1]) in message and str(paths[0]) not in message
    assert len(message.splitlines()) == 2  # the summary line and one line for the file
    df, damaged = results.load(tmp_path, on_damaged="skip")
    assert sorted(df["split"]) == [0, 2] and [d.path for d in damaged] == [paths[1]]
    # the resume check treats it as missing, with one line naming it
    assert results.stored_splits(
        tmp_path, "paper/2splits/T5", "toy", "lad", "prox", "exact", _row()["identity"]
    ) == {0, 2}


def test_the_resume_check_logs_the_damaged_file(tmp_path, caplog):
    path = results.write_row(tmp_path, _row())
    _damage(path, "edited test loss")
    with caplog.at_level(logging.WARNING, logger="proxboost.experiments.store.results"):
        assert results.stored_identity(path) is None
    assert [r.getMessage() for r in caplog.records] == [
        f"damaged stored file, recomputed: {path}: checksum mismatch (the file was edited or cut"
        " short)"
    ]


def test_sealing_files_of_an_earlier_version(tmp_path):
    """The one-time command checks each unsealed file and appends the seal without rewriting
    the bytes before it; an inconsistent file is refused and left as it is."""
    good = results.write_row(tmp_path, _row(split=0))
    bad = results.write_row(tmp_path, _row(split=1))
    unsealed = read_sealed(good)
    good.write_text(unsealed)
    bad.write_text(read_sealed(bad).replace(",1,", ",7,", 1))  # its split no longer its name
    before = bad.read_bytes()
    sealed, already, refused = results.seal_existing(tmp_path)
    assert sealed == [good] and already == [] and list(refused) == [bad], refused
    assert good.read_bytes().startswith(unsealed.encode()) and read_sealed(good) == unsealed
    assert bad.read_bytes() == before
    assert results.seal_existing(tmp_path)[1] == [good]  # idempotent


def test_synthetic_writers_are_the_experiments_that_write_each_folder():
    import yaml

    writers = {}
    for cfg in sorted((REPO / "conf" / "experiment").glob("*.yaml")):
        text = yaml.safe_load(cfg.read_text())
        parent = text.get("defaults", [None])[0] if text.get("defaults") else None
        synthetic = text.get("synthetic") or {}
        folder = synthetic.get("experiment")
        if folder is None and isinstance(parent, str):  # inherits its parent's folder
            folder = (
                yaml.safe_load((cfg.parent / f"{parent}.yaml").read_text()).get("synthetic") or {}
            ).get("experiment")
        if folder is not None:
            multirun = "sweeper" in json.dumps(text.get("hydra", {}))
            writers.setdefault(folder, set()).add(
                f"{'-m ' if multirun else ''}+experiment={cfg.stem}"
            )
    assert {k: set(v) for k, v in results.SYNTHETIC_WRITERS.items()} == writers


@pytest.mark.slow
def test_a_damaged_row_stops_the_report_with_a_command_that_recomputes_only_it(
    tmp_path, data_mirror
):
    env = {**os.environ, "PROXBOOST_DATA_HOME": str(tmp_path / "data")}
    tiny = [
        "dataset=engel",
        "loss=lad",
        "algo=prox",
        "protocol.n_splits=3",
        "protocol.max_estimators=5",
        "grid.max_depth=[1]",
        "grid.learning_rate=[0.5]",
        "grid.step=[1.0]",
        "n_jobs=1",
        "progress=false",
        "results_dir=res",
    ]
    run = [sys.executable, str(REPO / "run.py"), *tiny]
    subprocess.run(run, cwd=tmp_path, env=env, check=True, capture_output=True)
    rows = sorted((tmp_path / "res").rglob("split-*.csv"))
    assert len(rows) == 3
    untouched = {p: p.read_bytes() for p in rows if p != rows[1]}
    _damage(rows[1], "cut after the test loss")
    report = subprocess.run(
        [sys.executable, "-m", "proxboost.experiments.report.summary", "--results", "res"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert report.returncode == 2 and "Traceback" not in report.stderr
    assert not (tmp_path / "res" / "SUMMARY.md").exists()
    (line,) = [ln for ln in report.stderr.splitlines() if str(rows[1].relative_to(tmp_path)) in ln]
    command = line.split("recompute it with: ", 1)[1]
    assert command.startswith("python run.py ")
    for cli in ("proxboost.experiments.report.sweep", "proxboost.experiments.report.figures"):
        args = (
            ["res"]
            if cli == "proxboost.experiments.report.sweep"
            else ["--results", "res", "--out", "figs"]
        )
        other = subprocess.run(
            [sys.executable, "-m", cli, *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
        )
        assert other.returncode == 2 and command in other.stderr and "Traceback" not in other.stderr
    assert not (tmp_path / "figs").exists()
    redo = subprocess.run(
        [sys.executable, str(REPO / "run.py"), *shlex.split(command)[2:], "progress=false"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert redo.returncode == 0, redo.stderr[-2000:]
    assert re.search(r"2/3 splits stored, 1 to run", redo.stderr + redo.stdout)
    read_sealed(rows[1])  # recomputed whole, in place
    assert all(p.read_bytes() == b for p, b in untouched.items())  # the others were only read
    ok = subprocess.run(
        [sys.executable, "-m", "proxboost.experiments.report.summary", "--results", "res"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0, ok.stderr[-2000:]


def test_damaged_curve_files_are_named_and_recomputed(tmp_path):
    from proxboost.experiments.fits.curves import run_one
    from proxboost.experiments.plan.curves_plan import RunSpec, curve_path, is_stored

    spec = RunSpec(
        "convergence",
        "regression",
        "lad",
        "prox",
        max_depth=2,
        learning_rate=0.1,
        n_estimators=3,
        dataset_params={"n_samples": 60, "n_features": 5},
    )
    path = run_one(spec, tmp_path)
    assert is_stored(tmp_path, spec)
    path.write_bytes(b"")  # a 0-byte curve file
    with pytest.raises(results.DamagedResultsError, match="empty file.*convergence"):
        results.load_curves(tmp_path)
    assert not is_stored(tmp_path, spec)
    assert run_one(spec, tmp_path) == curve_path(tmp_path, spec)
    assert len(results.load_curves(tmp_path)) == 4


@pytest.mark.slow
def test_every_committed_result_is_sealed():
    """Every stored file of the committed reproduction carries a valid checksum."""
    results.verify_stored(REPO / "results")


def test_stored_rows_are_counted_from_the_store(tmp_path):
    """No counter in memory: the rows and curves written since a time, by their files."""
    import time

    old = results.write_row(tmp_path, _row(split=0))
    os.utime(old, (0, 0))
    since = time.time() - 0.5
    results.write_row(tmp_path, _row(split=1))
    results.write_row(tmp_path, _row(split=2))
    assert results.stored_since(tmp_path, since) == 2
    assert results.stored_since(tmp_path, 0) == 3
    assert results.process_started() <= time.time()
