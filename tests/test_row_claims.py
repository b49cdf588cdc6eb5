"""Concurrent sweeps (proxboost.experiments.store.row_claims): a row is claimed by one process only
(exclusive create); a claim of a dead process on this host, or one not refreshed for 10 minutes by
the file server's clock (another host's), is taken over by rename, never unlink-then-create; claims
are released and none remains; two identical sweeps started together compute every row exactly once;
every run.py gets its own Hydra output folder, with any launcher.
"""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import run_py_command, run_py_env

from proxboost.experiments.store import results
from proxboost.experiments.store import row_claims as claims


def _rows(tmp_path, n=3):
    return {k: tmp_path / "run" / f"split-{k:02d}.csv" for k in range(n)}


def _plant(path: Path, host=None, pid=None, started=None, age=0.0) -> str:
    """A claim file of another owner; returns its token."""
    token = f"planted-{pid}-{age}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(
            {
                "host": host or socket.gethostname(),
                "pid": pid,
                "started": started,
                "token": token,
            }
        )
    )
    if age:  # older than written, by the file system's own clock
        now = path.stat().st_mtime
        os.utime(path, (now - age, now - age))
    return token


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _live_other_process():
    """A process of this host other than this one (alive while the test runs)."""
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])


def test_a_row_is_claimed_by_one_process_only_and_released_at_the_end(tmp_path):
    rows = _rows(tmp_path)
    with claims.RowClaims(rows, lambda k: False, "run") as mine:
        assert mine.take(0) and mine.take(1)
        path = claims.claim_path(rows[0])
        assert path.name == ".split-00.claim" and path.exists()
        owner = json.loads(path.read_text())
        assert owner["host"] == socket.gethostname() and owner["pid"] == os.getpid()
        # a second claimer (another sweep; here the same process, which is alive): refused
        other = claims.RowClaims(rows, lambda k: False, "run")
        assert not other.take(0)
        assert other.others == {0: f"{socket.gethostname()}:{os.getpid()}"}
        mine.done(1)  # its row is stored: released at once
        assert not claims.claim_path(rows[1]).exists()
    assert not list((tmp_path / "run").glob("*.claim"))  # none remains


def test_an_interrupt_while_a_new_claims_row_is_checked_leaves_it_to_the_runs_exit(tmp_path):
    # a claim is recorded as the run's before the stored check (which reads the row's file), so
    # an interrupt there leaves nothing behind once the run exits
    rows = _rows(tmp_path)

    def interrupted(k):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt), claims.RowClaims(rows, interrupted, "run") as mine:
        mine.take(0)
    assert not mine.mine
    assert not list((tmp_path / "run").glob("*.claim"))
    assert claims.claim_path(rows[0]) not in claims._HELD.tokens


def test_an_interrupt_between_a_claim_and_its_record_leaves_it_to_release_all(
    tmp_path, monkeypatch
):
    # the claim file is written and the run never recorded it (an interrupt as the creation
    # returns): RowClaims' exit cannot release it, release_all (which run.py's interrupt
    # handling and a launcher worker's exit call) does; without it the claim stays until this
    # process ends
    rows = _rows(tmp_path)
    close = os.close

    def interrupted_close(fd):
        close(fd)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt), claims.RowClaims(rows, lambda k: False, "run") as mine:
        monkeypatch.setattr(claims.os, "close", interrupted_close)
        try:
            mine.take(0)
        finally:
            monkeypatch.undo()
    assert claims.claim_path(rows[0]).exists() and not mine.mine
    claims.release_all()
    assert not list((tmp_path / "run").glob("*.claim"))


def test_a_final_release_waits_for_a_claim_under_way_and_no_claim_follows(tmp_path, monkeypatch):
    # a launcher worker leaving on an interrupt (or an orphaned one) releases its claims for the
    # last time while joblib's callback thread may still be dispatching its job's next fits, so
    # claiming rows: a claim under way ends first and is released, and none is made after
    monkeypatch.setattr(claims, "_HELD", claims._Held())  # this process's registry stays open
    rows = _rows(tmp_path)
    entered, go = threading.Event(), threading.Event()
    real_open = os.open

    def slow_open(*args, **kwargs):
        entered.set()
        go.wait(5)
        return real_open(*args, **kwargs)

    monkeypatch.setattr(claims.os, "open", slow_open)
    mine = claims.RowClaims(rows, lambda k: False, "run")
    taker = threading.Thread(target=mine.take, args=(0,))
    taker.start()
    assert entered.wait(5)
    ender = threading.Thread(target=claims.release_all, kwargs={"final": True})
    ender.start()
    time.sleep(0.3)
    assert ender.is_alive()  # waits for the claim under way
    go.set()
    taker.join(5)
    ender.join(5)
    assert not ender.is_alive() and not list((tmp_path / "run").glob("*.claim"))
    assert not mine.take(1) and not list((tmp_path / "run").glob("*.claim"))
    assert not claims._HELD.tokens


def test_an_interrupt_while_a_claim_is_written_leaves_no_claim(tmp_path, monkeypatch):
    rows = _rows(tmp_path)

    def write(fd, data):
        raise KeyboardInterrupt

    monkeypatch.setattr(claims.os, "write", write)
    with pytest.raises(KeyboardInterrupt):
        claims.RowClaims(rows, lambda k: False, "run").take(0)
    monkeypatch.undo()
    assert not list((tmp_path / "run").glob("*.claim"))
    assert claims.claim_path(rows[0]) not in claims._HELD.tokens


def test_an_interrupt_as_a_claim_is_created_waits_until_it_is_written(tmp_path, monkeypatch):
    # Ctrl-C arriving just after the exclusive create, before the owner is written: handled once
    # the claim holds its token, so release_all recognises it as this process's and removes it
    # (else an empty claim was left behind, neither released nor stale for half a minute)
    rows = _rows(tmp_path)
    create = os.open

    def interrupted_open(*args):
        fd = create(*args)
        signal.raise_signal(signal.SIGINT)
        return fd

    monkeypatch.setattr(claims.os, "open", interrupted_open)
    with pytest.raises(KeyboardInterrupt):
        claims.RowClaims(rows, lambda k: False, "run").take(0)
    monkeypatch.undo()
    path = claims.claim_path(rows[0])
    assert json.loads(path.read_text())["token"] == claims._HELD.tokens[path]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    claims.release_all()
    assert not list((tmp_path / "run").glob("*.claim"))


def test_an_interrupt_while_a_claim_is_released_leaves_it_to_release_all(tmp_path, monkeypatch):
    # the row is stored and its claim being released when the interrupt arrives: the claim is
    # still known to this process, and release_all removes it
    rows = _rows(tmp_path)
    mine = claims.RowClaims(rows, lambda k: False, "run")
    assert mine.take(0)

    def interrupted(path):
        raise KeyboardInterrupt

    monkeypatch.setattr(claims, "_token", interrupted)
    with pytest.raises(KeyboardInterrupt):
        mine.done(0)
    monkeypatch.undo()
    assert claims.claim_path(rows[0]).exists()
    claims.release_all()
    assert not list((tmp_path / "run").glob("*.claim"))


def test_a_claim_taken_in_another_thread_while_the_run_stops_does_not_outlive_it(
    tmp_path, monkeypatch
):
    # joblib dispatches the next fits (and so takes their claims) from its callback thread: a
    # claim being made when the run stops (an interrupt) is released by the run's exit, and no
    # claim is taken after it
    rows = _rows(tmp_path)
    mine = claims.RowClaims(rows, lambda k: False, "run")
    entered, go = threading.Event(), threading.Event()
    create = claims._create

    def slow_create(path):
        entered.set()
        assert go.wait(10)
        return create(path)

    monkeypatch.setattr(claims, "_create", slow_create)
    taker = threading.Thread(target=mine.take, args=(0,))
    taker.start()
    assert entered.wait(10)
    stopper = threading.Thread(target=mine.__exit__, args=(None, None, None))
    stopper.start()
    time.sleep(0.2)  # the exit has started while the claim is being made
    waited = stopper.is_alive()  # and waits for it: it cannot release a claim not made yet
    go.set()
    taker.join(10)
    stopper.join(10)
    assert waited
    assert not taker.is_alive() and not stopper.is_alive()
    assert not list((tmp_path / "run").glob("*.claim"))
    assert not mine.take(1) and not list((tmp_path / "run").glob("*.claim"))


def test_a_row_stored_meanwhile_is_neither_claimed_nor_recomputed(tmp_path):
    rows = _rows(tmp_path)
    with claims.RowClaims(rows, lambda k: k == 2, "run") as mine:
        assert not mine.take(2) and 2 not in mine.others
    assert not list((tmp_path / "run").glob("*.claim"))


def test_a_claim_of_a_dead_process_on_this_host_is_taken_over(tmp_path):
    rows = _rows(tmp_path)
    path = claims.claim_path(rows[0])
    _plant(path, pid=_dead_pid())
    with claims.RowClaims(rows, lambda k: False, "run") as mine:
        assert mine.take(0)
        assert json.loads(path.read_text())["pid"] == os.getpid()
    # the stale claim was renamed aside and removed: nothing else is left
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == []


def test_a_claim_whose_pid_is_another_process_by_now_is_stale(tmp_path):
    # pids are reused: the claim records its owner's start time, which this pid's differs from
    rows = _rows(tmp_path)
    path = claims.claim_path(rows[0])
    with _live_other_process() as proc:
        try:
            _plant(path, pid=proc.pid, started=claims._process_start(proc.pid))
            reason, _, _ = claims.stale_reason(path)
            assert reason is None  # the same process: live
            _plant(path, pid=proc.pid, started=claims._process_start(proc.pid) - 3600)
            reason, _, _ = claims.stale_reason(path)
            assert reason and "no longer running" in reason
        finally:
            proc.kill()


def test_a_claim_from_another_host_goes_stale_after_ten_minutes_of_the_file_servers_clock(
    tmp_path, monkeypatch
):
    rows = _rows(tmp_path)
    path = claims.claim_path(rows[0])
    # its pid means nothing here (pid 1 runs on this host): only its age counts
    _plant(path, host="node-17.elsewhere", pid=1, age=9 * 60)
    monkeypatch.setattr(time, "time", lambda: 1e10)  # this host's clock: far off, not used
    assert claims.stale_reason(path)[0] is None
    assert not claims.RowClaims(rows, lambda k: False, "run").take(0)
    _plant(path, host="node-17.elsewhere", pid=1, age=11 * 60)
    claims._CLOCKS.clear()
    with claims.RowClaims(rows, lambda k: False, "run") as mine:
        assert mine.take(0)
        assert json.loads(path.read_text())["host"] == socket.gethostname()


@pytest.mark.parametrize("content", ["", '{"host": "node'], ids=["empty", "cut short"])
def test_a_claim_without_an_owner_is_stale_after_half_a_minute(tmp_path, content):
    # its process was killed between creating the file and filling it (a sweep killed outright):
    # no pid to check, and a live owner fills it at once, so the rerun does not wait ten minutes
    rows = _rows(tmp_path)
    path = claims.claim_path(rows[0])
    path.parent.mkdir(parents=True)
    path.write_text(content)
    assert claims.stale_reason(path)[0] is None  # as one being written right now
    assert not claims.RowClaims(rows, lambda k: False, "run").take(0)
    now = path.stat().st_mtime
    age = claims.UNFILLED_SECONDS + 2
    os.utime(path, (now - age, now - age))
    claims._CLOCKS.clear()
    assert "no owner" in claims.stale_reason(path)[0]
    with claims.RowClaims(rows, lambda k: False, "run") as mine:
        assert mine.take(0)
        assert json.loads(path.read_text())["pid"] == os.getpid()
    assert not list((tmp_path / "run").glob("*.claim"))


def test_a_takeover_renames_the_stale_claim_and_gives_back_a_fresh_one_met_instead(
    tmp_path, monkeypatch
):
    # checker A judges a claim stale; checker B takes it over first and makes a fresh claim;
    # A's rename then moves B's fresh claim: A sees that it is not the one judged and gives it
    # back. A never unlinks the claim's path (which could remove a claim made in between).
    path = claims.claim_path(_rows(tmp_path)[0])
    _plant(path, pid=_dead_pid())
    reason, inode, token = claims.stale_reason(path)
    assert reason is not None
    path.unlink()
    fresh = _plant(path, host="node-3.elsewhere", pid=1)  # B's claim
    unlinked = []
    real_unlink = Path.unlink
    monkeypatch.setattr(Path, "unlink", lambda p, *a, **k: unlinked.append(p) or real_unlink(p))
    assert not claims._take_over(path, inode, token)
    assert json.loads(path.read_text())["token"] == fresh  # B's claim is back in place
    assert path not in unlinked
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # the renamed copy is gone


def test_a_held_claim_is_refreshed(tmp_path, monkeypatch):
    monkeypatch.setattr(claims, "REFRESH_SECONDS", 0.05)
    monkeypatch.setattr(claims, "_HELD", claims._Held())
    rows = _rows(tmp_path)
    with claims.RowClaims(rows, lambda k: False, "run") as mine:
        assert mine.take(0)
        path = claims.claim_path(rows[0])
        os.utime(path, (0, 0))
        deadline = time.monotonic() + 10
        while path.stat().st_mtime == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert path.stat().st_mtime > time.time() - 60


@pytest.mark.slow
def test_a_run_waits_for_the_rows_of_another_process_and_computes_those_it_leaves(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(claims, "WAIT_POLL", 0.05)
    rows = _rows(tmp_path)
    stored = set()
    with _live_other_process() as proc:
        try:
            started = claims._process_start(proc.pid)
            for k in (0, 1):
                _plant(claims.claim_path(rows[k]), pid=proc.pid, started=started)
            with claims.RowClaims(rows, lambda k: k in stored, "run") as mine:
                assert not mine.take(0) and not mine.take(1) and mine.take(2)
                mine.done(2)

                def other_process():  # stores row 0; stops without storing row 1
                    time.sleep(0.3)
                    stored.add(0)
                    claims.claim_path(rows[0]).unlink()
                    claims.claim_path(rows[1]).unlink()

                threading.Thread(target=other_process).start()
                assert mine.wait() == [1]  # row 0 stored by it; row 1 left to this process
                assert mine.take(1)  # its first fit, now dispatched here
                mine.done(1)
                assert mine.wait() == []
        finally:
            proc.kill()
    assert not list((tmp_path / "run").glob("*.claim"))


def test_claims_of_dead_processes_left_in_a_sweeps_folders_are_removed(tmp_path):
    rows = _rows(tmp_path)
    _plant(claims.claim_path(rows[0]), pid=_dead_pid())
    _plant(claims.claim_path(rows[1]), host="node-3.elsewhere", pid=1)  # may be alive there
    assert claims.remove_dead_claims([tmp_path / "run"]) == 1
    assert [p.name for p in (tmp_path / "run").iterdir()] == [".split-01.claim"]


# -- run.py ---------------------------------------------------------------------------------------
_SWEEP = [
    "-m",
    "algo=prox,gradient",
    "dataset.params.n_samples=200",
    "dataset.params.n_features=5",
    "grid=smoke",
    "protocol.n_splits=4",
    "protocol.max_estimators=30",
    "progress=false",
    "n_jobs=1",
]

_STORED = re.compile(r"\] - (\S+) split (\d+): .* -> ")


def _start(tmp_path, *args, cwd=None):
    return subprocess.Popen(
        run_py_command(*args, f"results_dir={tmp_path / 'res'}"),
        cwd=cwd or tmp_path,
        env=run_py_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _sweep_folders(root: Path) -> list:
    return sorted(p.parent for p in root.rglob("multirun.yaml"))


@pytest.mark.slow
@pytest.mark.parametrize("launcher", [[], ["hydra/launcher=joblib", "hydra.launcher.n_jobs=2"]])
def test_two_identical_sweeps_started_together_compute_every_row_exactly_once(tmp_path, launcher):
    procs = [_start(tmp_path, *_SWEEP, *launcher) for _ in range(2)]
    outputs = [p.communicate(timeout=600)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    computed = Counter(m for text in outputs for m in _STORED.findall(text))
    labels = {label for label, _ in computed}
    assert len(labels) == 2 and set(computed.values()) == {1}, computed
    assert sorted(int(k) for _, k in computed) == sorted(list(range(4)) * 2)
    df = results.load(tmp_path / "res")
    assert len(df) == 8 and not df.duplicated(["algo", "split"]).any()
    assert not list((tmp_path / "res").rglob("*.claim"))  # every claim released
    # each sweep in its own Hydra folder, its jobs (in the launcher's workers) included
    folders = _sweep_folders(tmp_path / "multirun")
    assert len(folders) == 2, folders
    for folder in folders:
        assert sorted(p.name for p in folder.iterdir() if p.is_dir()) == ["0", "1"]
        assert all((folder / job / "run.log").stat().st_size > 0 for job in ("0", "1"))


@pytest.mark.slow
def test_a_sweep_takes_over_stale_claims_and_waits_for_live_ones(tmp_path):
    # split 0: claimed by a process that died; split 1: by another host, not refreshed for 11
    # minutes (stale); split 2: by a live process here (this test), which stops without storing
    # its row while the run waits: the run computes it then
    base = ["algo=prox", *_SWEEP[2:]]
    dry = subprocess.run(
        run_py_command(*base, f"results_dir={tmp_path / 'res'}", "dry_run=true"),
        cwd=tmp_path,
        env=run_py_env(tmp_path),
        capture_output=True,
        text=True,
    )
    folder = Path(re.search(r"rows in (\S+)", dry.stdout + dry.stderr).group(1))
    _plant(folder / ".split-00.claim", pid=_dead_pid())
    _plant(folder / ".split-01.claim", host="node-5.elsewhere", pid=1, age=11 * 60)
    live = folder / ".split-02.claim"
    _plant(live, pid=os.getpid(), started=claims._process_start(os.getpid()))
    proc = _start(tmp_path, *base)
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if "waiting for 1 row(s) being computed by" in line:
            live.unlink()  # this "other process" stops without storing its row
    proc.wait(timeout=600)
    text = "".join(lines)
    assert proc.returncode == 0, text
    assert text.count("took over row") == 2, text  # 0 and 1; 2 was released, then claimed
    assert sorted(int(k) for _, k in _STORED.findall(text)) == [0, 1, 2, 3]
    waited = text.index("waiting for 1 row(s) being computed by")
    assert [int(k) for _, k in _STORED.findall(text[waited:])] == [2]  # after the wait
    assert len(results.load(tmp_path / "res")) == 4
    assert not list(folder.glob("*.claim"))


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ["algo=prox"],  # single runs: outputs/<date>/<time>-<id>
        ["-m", "algo=prox", "hydra/launcher=submitit_local"],  # multirun/<date>/<time>-<id>
    ],
    ids=["run", "submitit"],
)
def test_every_command_gets_its_own_hydra_output_folder(tmp_path, args):
    tiny = ["dataset.params.n_samples=100", "grid=smoke", "protocol.n_splits=1"]
    tiny += ["protocol.max_estimators=5", "progress=false"]
    procs = [_start(tmp_path, *args, *tiny) for _ in range(2)]
    outputs = [p.communicate(timeout=600)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    root = tmp_path / ("multirun" if "-m" in args else "outputs")
    logs = sorted(root.rglob("run.log"))
    assert len(logs) == 2, logs
    folders = {p.parent if "-m" not in args else p.parent.parent for p in logs}
    assert len(folders) == 2  # the two commands' folders differ ...
    for folder in folders:  # ... and each holds its own command's files only
        names = {p.name for p in folder.rglob("*") if p.is_file()}
        assert "run.log" in names and "config.yaml" in names
        if "-m" in args:
            assert (folder / "multirun.yaml").exists() and list(folder.glob(".submitit/*"))
