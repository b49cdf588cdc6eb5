"""A full disk or a lost permission (proxboost.experiments.system.io_errors), wherever it is met —
the command's own process, a joblib-launcher worker, a Slurm job (submitit's local launcher runs the
same path), Hydra's .hydra/ files, its log files and multirun.yaml, /dev/shm: one line naming the
file, its file system and the free space, with the fix; exit code 2; no partial file; no "---
Logging error ---" block, traceback or Hydra error line.

The faults are injected in every process of the command by tests/fault_injection/sitecustomize.py
(ENOSPC after half of a write, EACCES at an open or mkdir, ENOSPC at a named semaphore).
"""

import errno
import fnmatch
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from conftest import run_py_command, run_py_env

from proxboost.experiments.store import results
from proxboost.experiments.system import io_errors

FAULTS = Path(__file__).with_name("fault_injection")

_TINY = [
    "dataset.params.n_samples=200",
    "dataset.params.n_features=5",
    "grid=smoke",
    "protocol.n_splits=2",
    "protocol.max_estimators=20",
    "progress=false",
]


def _run_with_fault(tmp_path, fault: dict, *args):
    """run.py ``args`` with ``fault`` injected; (completed process, pids that met the fault)."""
    env = run_py_env(tmp_path)
    env["PYTHONPATH"] = os.pathsep.join([str(FAULTS), env.get("PYTHONPATH", "")])
    env["PROXBOOST_TEST_FAULT"] = json.dumps(fault)
    env["PROXBOOST_TEST_FAULT_LOG"] = str(tmp_path / "faults.log")
    flags = [a for a in args if a.startswith("-")]  # before the overrides, which win over _TINY
    overrides = [*_TINY, *(a for a in args if not a.startswith("-"))]
    proc = subprocess.Popen(
        run_py_command(*flags, *overrides, f"results_dir={tmp_path / 'res'}"),
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = proc.communicate(timeout=600)
    log = tmp_path / "faults.log"
    met = {int(line.split()[0]) for line in log.read_text().splitlines()} if log.exists() else set()
    return proc.pid, proc.returncode, out, err, met


def _the_line(err: str, out: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("error: cannot write ")]
    assert len(lines) == 1, err + out
    for noise in ("Traceback", "--- Logging error ---", "Error executing job", "leaked"):
        assert noise not in err + out, err + out
    return lines[0]


# (site, fault, run.py arguments, the file the line names (a glob under tmp_path), who meets it)
CASES = [
    (
        "row, command",
        {"errno": "ENOSPC", "path": "*split-01.csv*", "at": "write"},
        ["algo=prox", "n_jobs=2"],
        "res/*/split-01.csv",
        "command",
    ),
    (
        "row, command, permission",
        {"errno": "EACCES", "path": "*split-0*.csv*", "at": "open", "after": 1},
        ["algo=prox"],
        "res/*/split-0?.csv",
        "command",
    ),
    (
        ".hydra, command",
        {"errno": "ENOSPC", "path": "*/.hydra/config.yaml", "at": "write"},
        ["algo=prox"],
        "outputs/*/*/.hydra/config.yaml",
        "command",
    ),
    (
        "log, command, permission",
        {"errno": "EACCES", "path": "*/run.log", "at": "open"},
        ["algo=prox"],
        "outputs/*/*/run.log",
        "command",
    ),
    (
        "log, command",
        {"errno": "ENOSPC", "path": "*/run.log", "at": "write", "after": 1},
        ["-m", "algo=prox,gradient"],
        "multirun/*/*/0/run.log",
        "command",
    ),
    (
        "multirun.yaml, command",
        {"errno": "ENOSPC", "path": "*/multirun.yaml", "at": "write"},
        ["-m", "algo=prox,gradient"],
        "multirun/*/*/multirun.yaml",
        "command",
    ),
    (
        "/dev/shm semaphore, command",
        {"errno": "ENOSPC", "path": "*", "at": "semaphore"},
        ["algo=prox", "n_jobs=2"],
        io_errors.SEMAPHORES,
        "command",
    ),
    (
        "/dev/shm joblib folder, command, permission",
        {"errno": "EACCES", "path": "*/joblib_memmapping_folder_*", "at": "mkdir"},
        ["algo=prox", "n_jobs=2", "dataset.params.n_samples=20000", "dataset.params.n_features=20"],
        "/*/joblib_memmapping_folder_*",
        "command",
    ),
    (
        "row, joblib worker",
        {"errno": "ENOSPC", "path": "*split-01.csv*", "at": "write"},
        ["-m", "algo=prox,gradient", "hydra/launcher=joblib"],
        "res/*/split-01.csv",
        "worker",
    ),
    (
        ".hydra, joblib worker, permission",
        {"errno": "EACCES", "path": "*/1/.hydra/hydra.yaml", "at": "open"},
        ["-m", "algo=prox,gradient", "hydra/launcher=joblib"],
        "multirun/*/*/1/.hydra/hydra.yaml",
        "worker",
    ),
    (
        "log, joblib worker",
        {"errno": "ENOSPC", "path": "*/0/run.log", "at": "write", "after": 1},
        ["-m", "algo=prox,gradient", "hydra/launcher=joblib"],
        "multirun/*/*/0/run.log",
        "worker",
    ),
    # the other errno at each site
    (
        ".hydra, command, permission",
        {"errno": "EACCES", "path": "*/.hydra/hydra.yaml", "at": "open"},
        ["algo=prox"],
        "outputs/*/*/.hydra/hydra.yaml",
        "command",
    ),
    (
        "multirun.yaml, command, permission",
        {"errno": "EACCES", "path": "*/multirun.yaml", "at": "open"},
        ["-m", "algo=prox,gradient"],
        "multirun/*/*/multirun.yaml",
        "command",
    ),
    (
        "/dev/shm semaphore, command, permission",
        {"errno": "EACCES", "path": "*", "at": "semaphore"},
        ["-m", "algo=prox,gradient", "hydra/launcher=joblib"],  # the launcher's own pool
        io_errors.SEMAPHORES,
        "command",
    ),
    (
        "/dev/shm joblib folder, command",
        {"errno": "ENOSPC", "path": "*/joblib_memmapping_folder_*", "at": "mkdir"},
        ["algo=prox", "n_jobs=2", "dataset.params.n_samples=20000", "dataset.params.n_features=20"],
        "/*/joblib_memmapping_folder_*",
        "command",
    ),
    (
        "row, joblib worker, permission",
        {"errno": "EACCES", "path": "*split-01.csv*", "at": "open"},
        ["-m", "algo=prox,gradient", "hydra/launcher=joblib"],
        "res/*/split-01.csv",
        "worker",
    ),
    (
        ".hydra, joblib worker",
        {"errno": "ENOSPC", "path": "*/1/.hydra/config.yaml", "at": "write"},
        ["-m", "algo=prox,gradient", "hydra/launcher=joblib"],
        "multirun/*/*/1/.hydra/config.yaml",
        "worker",
    ),
    (
        "log, joblib worker, permission",
        {"errno": "EACCES", "path": "*/0/run.log", "at": "open"},
        ["-m", "algo=prox,gradient", "hydra/launcher=joblib"],
        "multirun/*/*/0/run.log",
        "worker",
    ),
    (
        "row, Slurm job, permission",
        {"errno": "EACCES", "path": "*split-01.csv*", "at": "open"},
        ["-m", "algo=prox", "hydra/launcher=submitit_local"],
        "res/*/split-01.csv",
        "job",
    ),
    (
        ".hydra, Slurm job",
        {"errno": "ENOSPC", "path": "*/0/.hydra/config.yaml", "at": "write"},
        ["-m", "algo=prox", "hydra/launcher=submitit_local"],
        "multirun/*/*/0/.hydra/config.yaml",
        "job",
    ),
    (
        "row, Slurm job",
        {"errno": "ENOSPC", "path": "*split-01.csv*", "at": "write"},
        ["-m", "algo=prox", "hydra/launcher=submitit_local"],
        "res/*/split-01.csv",
        "job",
    ),
    (
        ".hydra, Slurm job, permission",
        {"errno": "EACCES", "path": "*/0/.hydra/config.yaml", "at": "open"},
        ["-m", "algo=prox", "hydra/launcher=submitit_local"],
        "multirun/*/*/0/.hydra/config.yaml",
        "job",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("site, fault, args, named, who", CASES, ids=[c[0] for c in CASES])
def test_a_full_disk_or_a_lost_permission_is_one_line_and_exit_code_2(
    tmp_path, site, fault, args, named, who
):
    pid, code, out, err, met = _run_with_fault(tmp_path, fault, *args)
    assert met, f"the fault was never met: {err}{out}"
    assert code == io_errors.EXIT_STORAGE, err + out
    line = _the_line(err, out)
    file = re.match(r"error: cannot write (.+?): ", line).group(1)
    pattern = named if named.startswith("/") else str(tmp_path / named)  # shared memory
    assert fnmatch.fnmatch(file, pattern), (line, pattern)  # (fnmatch: * spans folders)
    assert re.search(r"\(file system \S+ \[\w+\], [\d.]+ \w*B free\); ", line), line
    fix = "free space" if fault["errno"] == "ENOSPC" else "make it writable again"
    assert line.endswith("then rerun the same command") and fix in line, line
    # who met it: the command's own process, or one of its workers or jobs
    assert (pid in met) == (who == "command"), (pid, met)
    # no partial file: what was cut short is gone, every stored row is whole
    if fault["at"] == "write" and not file.endswith(".log"):
        assert not Path(file).exists(), file
    assert not list(tmp_path.rglob("*.tmp"))
    results.load(tmp_path / "res")  # raises on a damaged row
    assert not list((tmp_path / "res").rglob("*.claim"))


def test_the_line_names_the_file_its_file_system_and_the_free_space(tmp_path):
    target = tmp_path / "deep" / "folder" / "split-03.csv"  # not created yet: its parent's
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    line = io_errors.describe(full, target)
    st = os.statvfs(tmp_path)
    assert line.startswith(f"error: cannot write {target}: No space left on device (file system ")
    assert line.endswith("; free space, then rerun the same command")
    free = re.search(r"\], ([\d.]+) (\w+) free\)", line)
    scale = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}[free.group(2)]
    assert abs(float(free.group(1)) * scale - st.f_bavail * st.f_frsize) <= 0.1 * scale + 2**20
    mount = re.search(r"\(file system (\S+) \[", line).group(1)
    assert os.stat(mount).st_dev == os.stat(tmp_path).st_dev
    assert os.path.ismount(mount)
    lost = OSError(errno.EACCES, os.strerror(errno.EACCES), str(target))
    assert "make it writable again" in io_errors.describe(lost)
    assert io_errors.storage_error(ValueError("x")) is None
    wrapped = ValueError("Unable to configure handler 'file'")
    wrapped.__cause__ = lost
    assert io_errors.storage_error(wrapped) is lost
