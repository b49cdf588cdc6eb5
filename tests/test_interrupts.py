"""Interrupts (proxboost.experiments.launch.interrupts): Ctrl-C or SIGTERM → one line, exit code
130, no traceback or warning, no process, named semaphore, memory-mapping folder or row claim left
behind, the rerun finishes; a launcher worker between jobs leaves quietly; an interrupted loky pool
is torn down.

Runs ``run.py`` in subprocesses with tiny settings; results and Hydra directories live in
``tmp_path``.
"""

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import run_py_command, run_py_env

from proxboost.experiments.store import results

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_interrupt_line_counts_the_rows_and_curves_stored_since_the_start(
    tmp_path, monkeypatch, capsys
):
    # the count of a sweep whose jobs run in other processes: files in the sweep's folders
    from proxboost.experiments.launch import interrupts

    experiment = tmp_path / "synthetic" / "intro"
    sweep = interrupts.Interrupts(experiments=[experiment])
    old = experiment / "sines" / "lad" / "gradient" / "old_abc.csv"
    old.parent.mkdir(parents=True)
    old.write_text("stored before\n")
    os.utime(old, (0, 0))

    def app():
        time.sleep(0.05)  # file times come from a coarser clock than time.time()
        folder = experiment / "sines" / "lad" / "prox"
        folder.mkdir(parents=True)
        for name in ("run_abc.csv", "run_abc.predictions.csv", "../../data-seed-0.csv"):
            (folder / name).write_text("x\n")
        raise KeyboardInterrupt

    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with pytest.raises(SystemExit) as exc:
            interrupts.interruptible(app, sweep)
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    assert exc.value.code == 130
    assert (
        capsys.readouterr().err == "interrupted: 1 rows stored; rerun the same command to finish\n"
    )


def test_an_interrupted_run_releases_the_claims_it_holds(tmp_path, capsys):
    # Ctrl-C between a row's claim and its run's record of it (RowClaims.take): the claim is
    # this process's and it still runs, so no one else would remove it; the interrupt handling
    # releases every claim this process holds
    from proxboost.experiments.launch import interrupts
    from proxboost.experiments.store import row_claims

    row = tmp_path / "run" / "split-00.csv"

    def app():
        def interrupted(k):
            raise KeyboardInterrupt

        with row_claims.RowClaims({0: row}, interrupted, "run") as claims:
            claims.take(0)

    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with pytest.raises(SystemExit) as exc:
            interrupts.interruptible(app, interrupts.Interrupts())
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    assert exc.value.code == 130
    assert not list(row.parent.glob("*.claim"))
    assert "interrupted: 0 rows stored" in capsys.readouterr().err


def test_a_storage_error_from_a_launcher_worker_tears_the_pool_down_before_the_exit():
    # joblib hands a worker's full disk to the sweep's process as StorageExit, after killing the
    # other workers: the pool must be torn down there (stop_workers), as on an interrupt, or its
    # named semaphores are released by a daemon thread racing the exit ("leaked semlock")
    from proxboost.experiments.launch import interrupts
    from proxboost.experiments.system import io_errors

    class Recorded(interrupts.Interrupts):
        stops = 0

        def stop_workers(self):
            Recorded.stops += 1

    def app():
        raise io_errors.StorageExit("error: cannot write x: No space left on device")

    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with pytest.raises(io_errors.StorageExit) as exc:
            interrupts.interruptible(app, Recorded())
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    assert exc.value.code == io_errors.EXIT_STORAGE
    assert Recorded.stops == 1


def test_a_launcher_worker_between_jobs_leaves_quietly_on_an_interrupt(monkeypatch):
    # a joblib-launcher worker whose job has ended waits in loky's loop for the next one; an
    # interrupt there must end it (nothing to stop or release), not raise inside loky's loop,
    # which prints a traceback; during a job it raises, so that the job stops its fits
    from proxboost.experiments.launch import cli, interrupts

    class Left(Exception):
        pass

    def leave(code):
        raise Left(code)

    seen = []
    worker = interrupts.Interrupts()
    monkeypatch.setattr(cli, "this_process", lambda: worker)
    monkeypatch.setattr(interrupts, "in_launcher_worker", lambda: True)
    monkeypatch.setattr(worker, "install", lambda: None)
    monkeypatch.setattr(
        cli, "_job", lambda cfg, in_worker, state: seen.append(state.idle_worker) or 1.0
    )
    monkeypatch.setattr(interrupts, "leave_worker", leave)
    monkeypatch.setattr(worker, "drain_pool", lambda: None)
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        assert cli.main(None) == 1.0 and seen == [False]
        assert worker.idle_worker
        with pytest.raises(Left):
            worker.handle(signal.SIGINT, None)
        worker.idle_worker = False
        with pytest.raises(KeyboardInterrupt):
            worker.handle(signal.SIGINT, None)
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)


@pytest.mark.slow
def test_an_interrupted_pool_is_torn_down_before_the_interpreter_exits():
    # the queued work ids are dropped (loky's kill would otherwise trip over them: a KeyError
    # traceback), then the pool's manager and feeder threads end and its queues close in this
    # thread, so no daemon thread is cut off at exit while releasing a named semaphore
    from joblib.externals.loky import get_reusable_executor

    from proxboost.experiments.launch.interrupts import Interrupts

    executor = get_reusable_executor(max_workers=2)
    for _ in range(8):
        executor.submit(time.sleep, 60)
    manager, call_queue, work_ids = (
        executor._executor_manager_thread,
        executor._call_queue,
        executor._work_ids,
    )
    assert not work_ids.empty()
    interrupted = Interrupts()
    interrupted.drain_pool()
    assert work_ids.empty()
    interrupted.stop_workers()
    assert not manager.is_alive()
    assert call_queue._closed and not (call_queue._thread and call_queue._thread.is_alive())


def test_a_launcher_worker_leaving_releases_the_claims_it_holds(tmp_path):
    # a claim the worker made and its run had not recorded yet (an interrupt as it was made):
    # the worker ends with os._exit, so nothing but leave_worker can release it
    claim = tmp_path / "run" / ".split-00.claim"
    code = (
        "import sys, pathlib\n"
        "from proxboost.experiments.store import row_claims\n"
        "from proxboost.experiments.launch.interrupts import leave_worker\n"
        "assert row_claims._create(pathlib.Path(sys.argv[1]))\n"
        "leave_worker(130)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(claim)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 130, done.stderr
    assert claim.parent.is_dir() and not claim.exists()


def _shm_entries(pids, since):
    """Entries of /dev/shm named after one of ``pids`` (joblib names its memory-mapping folders and
    loky its semaphores after the creating process) and created at ``since`` or later: process ids
    are reused, and an earlier process of that id may have left its own behind."""
    if not os.path.isdir("/dev/shm"):
        return []
    found = []
    for name in os.listdir("/dev/shm"):
        if any(f"_{pid}_" in name or f"-{pid}-" in name for pid in pids):
            with contextlib.suppress(FileNotFoundError):
                if os.stat(f"/dev/shm/{name}").st_mtime >= since - 1:  # file times: a coarser clock
                    found.append(name)
    return found


def _interrupt(tmp_path, args, sig, whole_group):
    """Start ``run.py args`` in its own session, send ``sig`` once its first row is stored (to
    the process group, as a terminal's Ctrl-C does, or to the main process only, as ``kill`` and
    ``scancel`` do); return its output, exit code, latency and rows stored. Asserts that no
    process of the run and no named semaphore or memory-mapping folder of it is left behind."""
    started = time.time()
    proc = subprocess.Popen(
        run_py_command(*args),
        cwd=tmp_path,
        env=run_py_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    res = tmp_path / "res"
    deadline = time.monotonic() + 120
    while (
        not list(res.rglob("split-*.csv")) and proc.poll() is None and time.monotonic() < deadline
    ):
        time.sleep(0.02)
    group = subprocess.run(
        ["pgrep", "-g", str(proc.pid)], capture_output=True, text=True
    ).stdout.split()
    t0 = time.monotonic()
    if whole_group:
        os.killpg(proc.pid, sig)
    else:
        os.kill(proc.pid, sig)
    text, _ = proc.communicate(timeout=30)
    latency = time.monotonic() - t0
    deadline = time.monotonic() + 10  # workers and loky's resource tracker exit with it
    while (
        left := subprocess.run(
            ["pgrep", "-g", str(proc.pid)], capture_output=True, text=True
        ).stdout.split()
    ) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left, (
        f"processes left behind: {[Path(f'/proc/{p}/cmdline').read_text()[:120] for p in left]}"
    )
    assert not _shm_entries(group, since=started), (
        f"left in /dev/shm: {_shm_entries(group, since=started)}"
    )
    claims = {p.name: p.read_text() for p in res.rglob("*.claim")}  # their owners
    assert not claims, (
        f"claims left behind: {claims}; the run's processes were {group} (first: the command)"
    )  # proxboost.experiments.store.row_claims
    return text, proc.returncode, latency, len(list(res.rglob("split-*.csv")))


# Twelve splits of 300 iterations: after the first row is stored, the others take several times
# longer than the signal needs to arrive, so the run cannot finish before it. (With six, a
# loaded machine could store a joblib sweep's twelve rows, about 0.7 s of fits, before the
# test's signal was sent and handled.)
_N_SPLITS = 12
_INTERRUPTED_RUN = [
    "dataset.params.n_samples=200",
    "dataset.params.n_features=5",
    "loss=lad",
    "grid=smoke",
    f"protocol.n_splits={_N_SPLITS}",
    "protocol.max_estimators=300",
    "progress=false",
]


@pytest.mark.slow
@pytest.mark.parametrize(
    "launcher, sig, whole_group, rerun",
    [
        ([], signal.SIGINT, True, True),  # Ctrl-C in a terminal; the jobs run in this process
        # the jobs run in the launcher's workers; SIGTERM (kill, scancel, a session cut off)
        # reaches this process only, which stops them
        (["hydra/launcher=joblib", "algo=prox,gradient"], signal.SIGINT, True, False),
        (["hydra/launcher=joblib", "algo=prox,gradient"], signal.SIGTERM, False, True),
    ],
    ids=["basic-ctrl-c", "joblib-ctrl-c", "joblib-sigterm"],
)
def test_an_interrupt_stops_at_once_and_the_rerun_finishes(
    tmp_path, run_py, run_dirs, launcher, sig, whole_group, rerun
):
    # one line, exit code 130, no traceback or warning (no "leaked semaphore/folder" from the
    # resource tracker), nothing left behind; the rerun computes exactly the missing rows.
    # n_jobs=2: a pool of 2 processes per job, or of 2 threads in each joblib-launcher worker.
    run = ["-m", *_INTERRUPTED_RUN, *launcher] if launcher else [*_INTERRUPTED_RUN, "algo=prox"]
    text, code, latency, stored = _interrupt(
        tmp_path, [*run, "n_jobs=2", *run_dirs], sig, whole_group
    )
    print(f"{sig.name} latency {latency:.2f} s")  # reported with -s
    n_rows = 2 * _N_SPLITS if launcher else _N_SPLITS  # two algos in the launcher's sweeps
    assert stored < n_rows, f"the run ended before the signal (exit code {code}): {text[-800:]}"
    assert code == 130 and latency <= 10, (code, latency, text[-2000:])
    assert f"interrupted: {stored} rows stored; rerun the same command to finish" in text
    assert "Traceback" not in text and "leaked" not in text and "Warning" not in text, text
    if not rerun:
        return
    again = run_py(*run, "n_jobs=1", *run_dirs)  # n_jobs is not part of the rows' identity
    assert again.returncode == 0, again.stdout + again.stderr
    if not launcher:
        expected = f"{stored}/{_N_SPLITS} splits stored, {_N_SPLITS - stored} to run"
        assert expected in again.stdout + again.stderr
    df = results.load(tmp_path / "res")
    assert len(df) == n_rows and not df.duplicated(["algo", "split"]).any()
