"""Claims of the rows being computed, so that sweeps started side by side share the work.

Two commands that compute the same run (the same identity, hence the same folder) — two
identical sweeps started together, a rerun while the first still runs, jobs of two Slurm
submissions — would otherwise compute every missing row twice. A row (a split of a run; a curve
of a synthetic experiment) is therefore **claimed** when its first fit is dispatched:

- a claim is a file beside the row, ``.<row>.claim`` (ignored by git, never read as results),
  created with ``O_CREAT | O_EXCL``, so that of two processes exactly one gets it; it holds the
  owner's host, pid, process start time and a random token;
- the owner refreshes its modification time every :data:`REFRESH_SECONDS` (a daemon thread) and
  removes it once the row is stored, or when the run ends in any way it can handle (normal end,
  error, interrupt; an orphaned worker before it ends: :mod:`proxboost.experiments.launch.orphans`);
- a claim is **stale** when its pid is no longer running on this host (or is another process by
  now: its start time differs), or when its modification time is more than
  :data:`STALE_SECONDS` older than that of a file the checker has just written in the same
  folder: the file server's clock, not the checker's, which may differ on a cluster; one that
  names no owner (a process killed between creating and filling it) after
  :data:`UNFILLED_SECONDS`;
- a stale claim is taken over by renaming it to a unique name and then creating a new one
  (never unlink-then-create, which could remove a claim another checker has just made); the
  renamed file is checked to be the one judged stale, and given back otherwise.

A run skips the rows claimed by others, computes the rest, then waits for the claimed ones
(:meth:`RowClaims.wait`): each is stored by its owner, or its claim goes stale or disappears
without the row, and this run computes it. A row stored meanwhile is never recomputed: a claim is
taken first and the store checked after, and an owner stores its row before releasing its claim.
Remaining race: two checkers taking over the same stale claim in the same instant, with a third
creating one in between, can compute that row twice (the same numbers, written atomically).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "REFRESH_SECONDS",
    "STALE_SECONDS",
    "RowClaims",
    "claim_path",
    "release_all",
    "remove_dead_claims",
]

log = logging.getLogger(__name__)

#: Seconds between two refreshes of a held claim's modification time.
REFRESH_SECONDS = 60.0

#: A claim not refreshed for this long (by the file server's clock) is stale.
STALE_SECONDS = 600.0

#: A claim without a readable owner (its process was killed between creating and filling it, a
#: matter of microseconds, or it is damaged) is stale once this old: a live owner fills it at once.
UNFILLED_SECONDS = 30.0

#: Seconds between two looks at the rows another process is computing.
WAIT_POLL = 2.0

#: Seconds between two "still waiting" lines.
WAIT_REPORT = 300.0

CLAIM_SUFFIX = ".claim"


def claim_path(row) -> Path:
    """The claim file of a row file (``split-03.csv`` → ``.split-03.claim``)."""
    row = Path(row)
    return row.with_name(f".{row.stem}{CLAIM_SUFFIX}")


# -- this process ---------------------------------------------------------------------------------
def _process_start(pid: int) -> float | None:
    """When process ``pid`` started (a time.time() value, to the clock tick), or None if unknown."""
    try:
        ticks = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
        boot = next(
            int(line.split()[1])
            for line in Path("/proc/stat").read_text().splitlines()
            if line.startswith("btime ")
        )
    except (OSError, ValueError, IndexError, StopIteration):
        return None
    return boot + ticks / os.sysconf("SC_CLK_TCK")


def _alive(pid: int, started: float | None) -> bool:
    """Whether ``pid`` runs on this host and is the process that started at ``started``."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    now = _process_start(pid)
    # btime is rounded to the second: allow for it
    return started is None or now is None or abs(now - started) < 2.0


@dataclass
class _Held:
    """The claims this process holds (path → token) and the thread that refreshes them."""

    tokens: dict = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    refresher: threading.Thread | None = None
    pid: int = -1
    # held while a claim is created, and by the last release of a process that ends (reentrant:
    # a signal handler may end the process from inside a creation, in the same thread)
    creating: threading.RLock = field(default_factory=threading.RLock)
    closed: bool = False  # the process is ending: no claim is made any more

    def add(self, path: Path, token: str) -> bool:
        """Hold ``path`` with ``token``; False (and nothing changed) if it is held already."""
        with self.lock:
            if self.pid != os.getpid():  # a forked child: its parent's claims are not its own
                self.tokens.clear()
            if path in self.tokens:
                return False
            self.tokens[path] = token
            if self.refresher is None or not self.refresher.is_alive() or self.pid != os.getpid():
                self.pid = os.getpid()
                self.refresher = threading.Thread(
                    target=self._refresh, name="proxboost-claims", daemon=True
                )
                self.refresher.start()
            return True

    def forget(self, path: Path, token: str):
        """Drop ``path`` from the held claims if it is still registered with ``token``."""
        with self.lock:
            if self.tokens.get(path) == token:
                del self.tokens[path]

    def _refresh(self):
        while True:
            time.sleep(REFRESH_SECONDS)
            with self.lock:
                held = list(self.tokens.items())
            for path, token in held:
                if _token(path) == token:
                    with contextlib.suppress(OSError):
                        os.utime(path)


_HELD = _Held()


def _token(path) -> str | None:
    try:
        return json.loads(Path(path).read_text()).get("token")
    except (OSError, ValueError, AttributeError):
        return None


def _release(path: Path):
    # forgotten only once the file is gone: an interrupt in between leaves it to release_all
    with _HELD.lock:
        token = _HELD.tokens.get(path)
    if token is None:
        return
    if _token(path) == token:  # still ours (not taken over)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    _HELD.forget(path, token)


def release_all(final: bool = False):
    """Release every claim this process holds (an interrupt, an orphaned worker).

    ``final``: the process ends now (a launcher worker leaving on an interrupt, an orphaned
    worker): no claim is made after this call, by any thread. A launcher worker's job may still
    dispatch fits from joblib's callback thread while its main thread leaves, and a claim made
    after the release would outlive the process, left for others to find stale."""
    if final:
        with _HELD.creating:  # a creation under way ends first; none starts after
            _HELD.closed = True
    with _HELD.lock:
        paths = list(_HELD.tokens)
    for path in paths:
        _release(path)


def _create(path: Path) -> bool:
    """Create the claim ``path`` exclusively; False if it exists.

    The claim is registered in :data:`_HELD` before the file is created, so that an interrupt
    at any point after the creation leaves it to :func:`release_all` (the owner still runs, so
    no other process would find it stale); one that arrives while it is being written removes
    it here (a file without its token could not be told from another owner's)."""
    token = uuid.uuid4().hex
    content = {
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "started": _process_start(os.getpid()),
        "token": token,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    with _HELD.creating:
        if _HELD.closed:  # the process is ending (``release_all(final=True)``)
            return False
        return _create_held(path, token, content)


def _create_held(path: Path, token: str, content: dict) -> bool:
    """``_create`` once no final release can run: the claim registered, then written.

    An interrupt is held back from the file's creation to the end of its writing
    (:func:`_interrupts_held`): arriving in between, it would leave a claim without its token,
    which this process could no longer tell from another owner's, nor release."""
    if not _HELD.add(path, token):  # this process holds it already (another run of it)
        return False
    with _interrupts_held():
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:  # another owner's
            _HELD.forget(path, token)
            return False
        except BaseException:
            _HELD.forget(path, token)
            raise
        try:
            os.write(fd, json.dumps(content).encode())
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                path.unlink()
            _HELD.forget(path, token)
            raise
        os.close(fd)
    return True


@contextlib.contextmanager
def _interrupts_held():
    """SIGINT and SIGTERM arriving inside the block are handled at its end, by the handler they
    would have met (Python runs signal handlers in the main thread only: elsewhere, nothing to
    hold). A handler installed outside Python cannot be put back: nothing is held then."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught = []
    kinds = (signal.SIGINT, signal.SIGTERM)
    previous = {kind: signal.getsignal(kind) for kind in kinds}
    if any(handler is None for handler in previous.values()):
        yield
        return
    for kind in kinds:
        signal.signal(kind, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        for kind in kinds:
            signal.signal(kind, previous[kind])
        if caught:  # the first one, as it would have been met
            signal.raise_signal(caught[0])


#: folder -> (the file server's time there, time.monotonic() when it was read)
_CLOCKS: dict = {}


def _server_now(folder: Path) -> float:
    """The file server's time: the modification time of a file written in ``folder`` (once a
    minute per folder; in between, that time plus the seconds elapsed since)."""
    key = str(folder)
    if key in _CLOCKS and time.monotonic() - _CLOCKS[key][1] < 60.0:
        then, at = _CLOCKS[key]
        return then + (time.monotonic() - at)
    with tempfile.NamedTemporaryFile(dir=folder, prefix=".clock-", suffix=CLAIM_SUFFIX) as probe:
        probe.write(b"now")
        probe.flush()
        _CLOCKS[key] = (os.fstat(probe.fileno()).st_mtime, time.monotonic())
    return _CLOCKS[key][0]


def stale_reason(path: Path):
    """``(reason, inode, token)`` if the claim ``path`` is stale (see the module docstring),
    ``(None, inode, token)`` if it is live, None if there is no claim."""
    try:
        st = path.stat()
        text = path.read_text()
    except FileNotFoundError:
        return None
    try:
        owner = json.loads(text)
        host, pid, started, token = (
            owner["host"],
            int(owner["pid"]),
            owner.get("started"),
            owner["token"],
        )
    except (ValueError, KeyError, TypeError):
        # being written (created, not filled yet), or never filled, or damaged: judged by its age
        host = pid = started = token = None
    if host == socket.gethostname() and pid is not None and not _alive(pid, started):
        return f"process {pid} on {host} is no longer running", st.st_ino, token
    age = _server_now(path.parent) - st.st_mtime
    if token is None and age > UNFILLED_SECONDS:
        return f"no owner written in it for {age:.0f} s", st.st_ino, token
    if age > STALE_SECONDS:
        return f"not refreshed for {age / 60:.0f} min", st.st_ino, token
    return None, st.st_ino, token


def _move_aside(path: Path, inode: int, token) -> bool:
    """Remove the stale claim ``path`` (judged on its ``inode`` and ``token``) by renaming it to a
    unique name; if the renamed file is not the one judged (a claim made in between), give it
    back. Returns whether the judged claim was removed (or had gone already)."""
    aside = path.with_name(f"{path.stem}.stale-{uuid.uuid4().hex[:12]}{CLAIM_SUFFIX}")
    try:
        os.rename(path, aside)
    except FileNotFoundError:  # another checker moved it first
        return True
    try:
        judged = aside.stat().st_ino == inode and _token(aside) == token
        if not judged:  # give it back, unless replaced already
            with contextlib.suppress(FileExistsError):
                os.link(aside, path)
        return judged
    finally:
        with contextlib.suppress(FileNotFoundError):
            aside.unlink()


def _take_over(path: Path, inode: int, token) -> bool:
    """Take over the stale claim ``path``: move it aside (:func:`_move_aside`), then create a
    new claim (never unlink-then-create)."""
    return _move_aside(path, inode, token) and _create(path)


def remove_dead_claims(folders) -> int:
    """Remove the claims in ``folders`` whose owner is a process of this host that no longer runs
    (e.g. a launcher worker that joblib killed when another job failed); the number removed."""
    removed = 0
    for folder in folders:
        for path in Path(folder).glob(f".*{CLAIM_SUFFIX}"):
            if ".stale-" in path.name or path.name.startswith(".clock-"):
                continue
            judged = stale_reason(path)
            if judged is not None and judged[0] is not None and "no longer running" in judged[0]:
                removed += _move_aside(path, judged[1], judged[2])
    return removed


# -- the rows of a run ----------------------------------------------------------------------------
class RowClaims:
    """The claims of one run's rows (or one experiment's curves), by key (a split, a curve).

    ``rows``: key → the row's file; ``is_stored(key)``: whether the row is stored with the run's
    identity; ``label``: the run, for the log lines. Use as a context manager: every claim still
    held at its exit is released, and none is taken after it.

    :meth:`take` may run in another thread than the exit (joblib dispatches the next fits from
    its callback thread): a lock keeps the two apart, else a claim made while the run stops
    (an interrupt) would outlive it."""

    def __init__(self, rows: dict, is_stored, label: str):
        self.rows, self.is_stored, self.label = dict(rows), is_stored, label
        self.mine, self.others = set(), {}  # key -> (owner, since)
        self.closed = False
        self._lock = threading.RLock()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        with self._lock:
            self.closed = True
            for key in list(self.mine):
                self.done(key)
        return False

    def take(self, key) -> bool:
        """Claim the row ``key`` before its first fit: True if this process is to compute it;
        False if it is stored already, another process computes it (then :meth:`wait`), or the
        run has stopped."""
        with self._lock:
            return not self.closed and self._take(key)

    def _take(self, key) -> bool:
        if key in self.mine:  # taken while waiting (wait): computed now
            return True
        path = claim_path(self.rows[key])
        if not _create(path):
            judged = stale_reason(path)
            if judged is None:  # released meanwhile
                if not _create(path):
                    self.others[key] = _owner(path)
                    return False
            elif judged[0] is None or not _take_over(path, judged[1], judged[2]):
                self.others[key] = _owner(path)
                return False
            else:
                log.warning("%s: took over row %s (%s)", self.label, key, judged[0])
        # recorded at once, so that an interrupt during the check below (it reads the row's file)
        # leaves the claim to this run's exit
        self.mine.add(key)
        self.others.pop(key, None)
        if self.is_stored(key):  # stored before the claim was made: nothing to do
            self.done(key)
            return False
        return True

    def done(self, key):
        """Release the claim of ``key`` (its row is stored, or the run stops)."""
        with self._lock:
            if key in self.mine:
                _release(claim_path(self.rows[key]))
                self.mine.discard(key)

    def wait(self) -> list:
        """Wait for the rows claimed by other processes; returns the keys this process must now
        compute (their claim went stale or disappeared without the row), empty when every row
        is stored."""
        if not self.others:
            return []
        owners = sorted(set(self.others.values()))
        log.info(
            "%s: waiting for %d row(s) being computed by %s",
            self.label,
            len(self.others),
            ", ".join(owners),
        )
        last_report = time.monotonic()
        while True:
            todo = []
            for key in sorted(self.others):
                if self.is_stored(key):
                    del self.others[key]
                elif self.take(key):
                    todo.append(key)
            if todo or not self.others:
                return todo
            if time.monotonic() - last_report > WAIT_REPORT:
                last_report = time.monotonic()
                log.info("%s: still waiting for %d row(s)", self.label, len(self.others))
            time.sleep(WAIT_POLL)


def _owner(path: Path) -> str:
    try:
        owner = json.loads(path.read_text())
        return f"{owner['host']}:{owner['pid']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "another process"
