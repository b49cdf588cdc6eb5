"""Nothing left behind after kill -9 (proxboost.experiments.launch.orphans): every worker of a
killed run.py ends within 10 s whatever it is doing (a fit of a minute or more, or nothing), stores
no row and prints no "leaked" warning; the next run removes the shared memory of processes that no
longer run, and says how many entries in one line.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import run_py_command, run_py_env

from proxboost.experiments.launch import orphans, parent_watch


@pytest.mark.slow
def test_a_worker_ends_as_soon_as_its_recorded_parent_is_not_its_parent():
    # the watch compares os.getppid() with the pid recorded when the pool was made: a worker
    # adopted by a subreaper (or pid 1) has another parent, whatever its pid
    code = (
        "import os, sys, time; from proxboost.experiments.launch import parent_watch\n"
        "parent_watch.watch_parent(int(sys.argv[1])); time.sleep(30); sys.exit(5)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(orphans.__file__).parents[1])}
    t0 = time.monotonic()
    orphan = subprocess.run(
        [sys.executable, "-c", code, str(os.getpid() + 10**7)], env=env, timeout=60
    )
    assert orphan.returncode == parent_watch.EXIT_ORPHANED and time.monotonic() - t0 < 20
    watched = subprocess.Popen([sys.executable, "-c", code, str(os.getpid())], env=env)
    try:
        time.sleep(3 * parent_watch.POLL)
        assert watched.poll() is None  # its parent is alive: it goes on
    finally:
        watched.kill()
        watched.wait()


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_the_entries_of_dead_processes_of_this_user_are_removed(tmp_path, monkeypatch):
    shm, joblib_folder = tmp_path / "shm", tmp_path / "shm" / "proxboost-joblib"
    joblib_folder.mkdir(parents=True)
    monkeypatch.setattr(orphans, "SHM", shm)
    monkeypatch.setattr(orphans, "joblib_temp_folder", lambda: joblib_folder)
    dead, alive = _dead_pid(), os.getpid()
    for pid in (dead, alive):
        (shm / f"sem.loky-{pid}-abcd1234").write_bytes(b"\0" * 32)
        folder = joblib_folder / f"joblib_memmapping_folder_{pid}_0123abcd_4567ef"
        folder.mkdir()
        (folder / f"{pid}-1-x.pkl").write_bytes(b"data")
    (shm / f"sem.mp-{dead}xyz").write_bytes(b"\0")  # not named after its creator: kept
    (shm / f"other_{dead}_file").write_bytes(b"\0")  # not ours to know: kept
    monkeypatch.setattr(os, "getuid", lambda: os.stat(shm).st_uid + 1)  # another user's
    assert orphans.remove_dead_entries() == 0
    monkeypatch.undo()
    monkeypatch.setattr(orphans, "SHM", shm)
    monkeypatch.setattr(orphans, "joblib_temp_folder", lambda: joblib_folder)
    assert orphans.remove_dead_entries() == 2
    left = sorted(p.name for p in shm.rglob("*"))
    assert f"sem.loky-{dead}-abcd1234" not in left and f"sem.loky-{alive}-abcd1234" in left
    assert not any(f"_{dead}_" in name and "joblib" in name for name in left)
    assert any(f"joblib_memmapping_folder_{alive}_" in name for name in left)
    assert f"sem.mp-{dead}xyz" in left and f"other_{dead}_file" in left


# A minute-long fit at least: 20 000 training rows x 20 features, 50 000 iterations of depth-2
# trees (about 3 ms each on an idle core): whatever the machine, it is running when killed.
_LONG_FIT = [
    "dataset.params.n_samples=40000",
    "dataset.params.n_features=20",
    "loss=lad",
    "grid=smoke",
    "protocol.n_splits=1",
    "protocol.max_estimators=50000",
    "progress=false",
]


def _group(pgid) -> list:
    out = subprocess.run(["pgrep", "-g", str(pgid)], capture_output=True, text=True).stdout
    return out.split()


def _shm_names(pids) -> list:
    """Entries of /dev/shm (and of the project's joblib folder) named after one of ``pids``."""
    found = []
    for folder in (orphans.SHM, orphans.joblib_temp_folder()):
        if folder.is_dir():
            found += [
                n for n in os.listdir(folder) if any(f"-{p}-" in n or f"_{p}_" in n for p in pids)
            ]
    return found


def _start_and_kill(tmp_path, args, whole_group):
    """Start run.py in its own session; once its fits run, SIGKILL the main process (or the
    whole group); return (output, seconds until every process of the group ended, the pids of
    the group, the lines written meanwhile)."""
    proc = subprocess.Popen(
        run_py_command(*args, f"results_dir={tmp_path / 'res'}"),
        cwd=tmp_path,
        env=run_py_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    lines = []
    for line in proc.stdout:  # the job says when its fits are dispatched
        print(line, end="")  # shown with -s
        lines.append(line)
        if " refits on " in line:
            break
    time.sleep(3)  # every fit and worker under way
    group = _group(proc.pid)
    t0 = time.monotonic()
    (os.killpg if whole_group else os.kill)(proc.pid, signal.SIGKILL)
    proc.wait()
    while _group(proc.pid) and time.monotonic() - t0 < 60:
        time.sleep(0.2)
    ended = time.monotonic() - t0
    lines += proc.stdout.readlines()  # written by the workers until they ended
    return "".join(lines), ended, group


@pytest.mark.slow
@pytest.mark.serial  # the next run's clean-up is machine-wide: another test's run would do it
@pytest.mark.parametrize(
    "args",
    [
        ["algo=prox", "n_jobs=3"],  # 3 pool workers, 2 fits: one never runs a task
        ["-m", "algo=prox,gradient", "hydra/launcher=joblib", "hydra.launcher.n_jobs=3"],
    ],
    ids=["basic", "joblib"],
)
def test_after_kill_9_of_the_main_process_every_worker_ends_and_stores_nothing(tmp_path, args):
    text, ended, group = _start_and_kill(tmp_path, [*args, *_LONG_FIT], whole_group=False)
    print(f"every worker ended {ended:.1f} s after the kill")  # reported with -s
    assert len(group) >= 4, group  # the main process, its 3 workers (and resource trackers)
    assert ended <= 10, f"processes left {ended:.0f} s after the kill: {text}"
    assert not list((tmp_path / "res").rglob("split-*.csv"))  # no fit finished, none stored
    assert "leaked" not in text and "Traceback" not in text and "Warning" not in text, text
    if "-m" in args:  # the workers held the claims: released before they ended
        assert not list((tmp_path / "res").rglob("*.claim"))
    # what remains in shared memory (the pool's named semaphores) goes with the next run
    left = _shm_names(group)
    again = subprocess.run(
        run_py_command("--cfg", "job"),
        cwd=tmp_path,
        env=run_py_env(tmp_path),
        capture_output=True,
        text=True,
    )
    assert again.returncode == 0, again.stderr
    if left:
        assert "semaphore(s) and memory-mapping folder(s) left in shared memory" in again.stderr
    assert not _shm_names(group)


@pytest.mark.slow
@pytest.mark.serial  # the next run's clean-up is machine-wide: another test's run would do it
def test_after_kill_9_of_the_process_group_the_next_run_removes_its_shared_memory(tmp_path):
    text, ended, group = _start_and_kill(tmp_path, ["algo=prox", "n_jobs=2", *_LONG_FIT], True)
    assert ended <= 10
    left = _shm_names(group)
    # the pool's semaphores and the memory-mapped copy of the data (40000 x 20 floats)
    assert any(n.startswith("sem.loky-") for n in left), left
    assert any(n.startswith("joblib_memmapping_folder_") for n in left), left
    again = subprocess.run(
        run_py_command("--cfg", "job"),
        cwd=tmp_path,
        env=run_py_env(tmp_path),
        capture_output=True,
        text=True,
    )
    assert again.returncode == 0, again.stderr
    lines = [line for line in again.stderr.splitlines() if "left in shared memory" in line]
    assert len(lines) == 1 and int(lines[0].split()[1]) >= len(left), again.stderr
    assert not _shm_names(group)
