"""A full disk or a lost permission, wherever it is met: one line, exit code 2, no partial file.

A write can fail in any process of ``run.py`` — the command's own (rows, Hydra's ``.hydra/``
files and ``multirun.yaml``, its log file, the named semaphores and joblib folders in
``/dev/shm``), a worker of the joblib launcher (its job's rows and Hydra files), a Slurm job.
Whichever meets ``ENOSPC``, ``EDQUOT``, ``EFBIG``, ``EACCES``, ``EPERM`` or ``EROFS`` stops with
one line on stderr naming the file, its file system and the free space there, and what to do::

    error: cannot write <file>: No space left on device (file system <mount point> [<type>],
    0 B free); free space, then rerun the same command

and the command exits with code 2 (rows stored so far are kept: the rerun computes the others). No
partial file is left: rows and curves are written whole or not at all
(:mod:`proxboost.experiments.system.sealed`), a ``.hydra/*.yaml`` or ``multirun.yaml`` cut short is
removed, and the log file's handler (:class:`LogFileHandler`,
``conf/hydra/job_logging/proxboost.yaml``) reports its own failure the same way instead of printing
a "--- Logging error ---" block for every record.

How the exit reaches the command: :class:`StorageExit` (a ``SystemExit``, which Hydra lets through
without its "Error executing job" line), raised where the error is met; joblib hands it from a
launcher worker to the command; a Slurm job ends with it, and submitit gives the command the
job's error stream, which holds the line (or, for a failed write of Hydra's own files in the
job, the traceback of the ``OSError``). In the command, Hydra's report of a failed run (a
traceback, exit code 1) is wrapped (:func:`install`) to print the line and exit with code 2
instead.
"""

from __future__ import annotations

import contextlib
import errno
import io
import logging
import multiprocessing
import os
import re
import sys
from pathlib import Path

from proxboost.experiments.system import private_api

__all__ = [
    "EXIT_STORAGE",
    "LogFileHandler",
    "StorageExit",
    "describe",
    "install",
    "is_storage_error",
    "stop",
    "storage_error",
]

#: Exit code of a command stopped by a full disk or a lost permission (as for a user error).
EXIT_STORAGE = 2

#: The errors of a file system that is full, or no longer writable.
STORAGE_ERRNOS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EROFS, errno.EFBIG}
)

_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


class StorageExit(SystemExit):
    """End of the command (exit code 2) after the line :attr:`line` was printed."""

    def __init__(self, line: str):
        super().__init__(EXIT_STORAGE)
        self.line = line

    def __reduce__(self):  # joblib hands it from a worker to the command
        return type(self), (self.line,)


def storage_error(exc: BaseException | None) -> OSError | None:
    """The disk-full or permission error behind ``exc`` (itself, or its cause or context), if
    any."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in STORAGE_ERRNOS:
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


#: What a failed write without a file name was writing, when the traceback passes through the
#: code that creates named semaphores (multiprocessing's, loky's): shared memory.
SEMAPHORES = "/dev/shm/sem.* (a named semaphore)"


def _file_being_written(tb):
    """``(file, cut short)`` of a failed ``write`` (whose ``OSError`` names no file): the
    innermost open file object (cut short if opened to be rewritten, not appended to) or logging
    file handler among the locals of the traceback's frames; a named semaphore's creation; or
    ``(None, False)``."""
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        if frame.f_code.co_filename.endswith("synchronize.py"):
            return SEMAPHORES, False
        for value in list(frame.f_locals.values()):
            if isinstance(value, io.IOBase) and isinstance(getattr(value, "name", None), str):
                return value.name, "w" in str(getattr(value, "mode", ""))
            if isinstance(value, logging.FileHandler):
                return value.baseFilename, False
    return None, False


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"  # pragma: no cover


def file_system(path) -> str:
    """``<mount point> [<type>], <free> free`` for the file system that holds ``path`` (or would:
    its nearest existing folder)."""
    path = Path(os.path.abspath(path))
    existing = next((p for p in (path, *path.parents) if p.exists()), Path("/"))
    try:
        st = os.statvfs(existing)
        free = _size(st.f_bavail * st.f_frsize)
        device = existing.stat().st_dev
        mount = existing
        while mount != mount.parent and mount.parent.stat().st_dev == device:
            mount = mount.parent
    except OSError:
        return "file system unknown"
    kind = "?"
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mounts").read_text().splitlines():
            fields = line.split()
            if len(fields) > 2 and fields[1] == str(mount):
                kind = fields[2]  # the last mount at that point wins
    return f"{mount} [{kind}], {free} free"


def describe(error: OSError, path=None) -> str:
    """The one line of a storage error (see the module docstring)."""
    path = path or error.filename or "a file"
    reason = error.strerror or os.strerror(error.errno or 0)
    if error.errno in _FULL:
        fix = "free space, then rerun the same command"
    else:
        fix = "make it writable again (or free space), then rerun the same command"
    return f"error: cannot write {path}: {reason} (file system {file_system(path)}); {fix}"


def _line(exc: BaseException) -> str | None:
    """The line for ``exc``, if it is (or carries) a storage error; a partial file it was
    writing is removed."""
    if isinstance(exc, StorageExit):
        return exc.line
    error = storage_error(exc)
    if error is None:
        return _carried_line(exc)
    path = error.filename
    if path is None:  # a write, not an open
        path, cut_short = _file_being_written(error.__traceback__)
        if path is None:
            path, cut_short = _file_being_written(exc.__traceback__)
        if cut_short:  # never leave a partial file
            with contextlib.suppress(OSError):
                os.unlink(path)
    return describe(error, path)


#: The line as a Slurm job printed it, and an OSError's last line in a job's traceback.
_LINE = re.compile(r"^(error: cannot write .*)$", re.MULTILINE)
_OSERROR = re.compile(r"^\w*Error: \[Errno (\d+)\] ([^\n]+?)(?:: '([^'\n]*)')?$", re.MULTILINE)


def _carried_line(exc: BaseException) -> str | None:
    """The line of a storage error met in another process and handed over as text only: by
    submitit, for a Slurm job (the job printed the line before it stopped, in the error stream
    that comes with a job "without output"; or it failed while Hydra wrote its files: a
    traceback), or by loky (a remote traceback: joblib could not create its memory-mapping
    folder, for instance)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        text = str(exc)
        if match := _LINE.search(text):
            return match.group(1)
        found = _OSERROR.findall(text)
        if found and int(found[-1][0]) in STORAGE_ERRNOS:
            code, reason, path = found[-1]
            return describe(OSError(int(code), reason, path or None))
        exc = exc.__cause__ or exc.__context__
    return None


def is_storage_error(exc: BaseException) -> bool:
    """Whether ``exc`` is, or carries, a full disk or a lost permission."""
    return (
        isinstance(exc, StorageExit)
        or storage_error(exc) is not None
        or _carried_line(exc) is not None
    )


_PRINTED: set = set()


def report(line: str) -> None:
    """Print ``line`` once in this process (stderr)."""
    if line not in _PRINTED:
        _PRINTED.add(line)
        with contextlib.suppress(OSError, ValueError):
            print(line, file=sys.stderr, flush=True)


def stop(exc: BaseException):
    """End on the storage error ``exc`` (:class:`StorageExit`), after printing its line in the
    command's own process or a Slurm job (its log, which submitit hands to the command). A
    joblib-launcher worker leaves it to the command, which gets the exception: two workers
    failing at once would print two lines otherwise."""
    line = _line(exc)
    if multiprocessing.parent_process() is None:
        report(line)
    raise StorageExit(line) from None


class LogFileHandler(logging.FileHandler):
    """Hydra's log file handler, except on a full disk or a lost permission: the first failed
    record stops the command (:func:`stop`), later records are dropped, and no "--- Logging
    error ---" block is printed."""

    def __init__(self, filename, *args, **kwargs):
        self.failed = False
        try:
            super().__init__(filename, *args, **kwargs)
        except OSError as exc:
            if storage_error(exc) is None:
                raise
            stop(exc)  # a SystemExit: logging.config does not wrap it in its ValueError

    def emit(self, record):
        if not self.failed:
            super().emit(record)

    def handleError(self, record):
        exc = sys.exc_info()[1]
        if self.failed or storage_error(exc) is None:
            return super().handleError(record)
        self.failed = True
        error = storage_error(exc)
        if error.filename is None:
            error.filename = self.baseFilename
        stop(error)

    def flush(self):
        if not self.failed:  # after a failure, the buffer cannot be written: reported once
            super().flush()

    def close(self):
        with contextlib.suppress(OSError):  # the buffer of a failed write cannot be flushed
            super().close()


def _save_config(original, cfg, filename, output_dir):
    """Hydra's writer of ``.hydra/*.yaml``: a failed write names its file and leaves none."""
    path = Path(output_dir) / filename
    try:
        original(cfg, filename, output_dir)
    except OSError as exc:
        if exc.filename is None:  # the file was opened, then cut short
            exc.filename = str(path)
            with contextlib.suppress(OSError):
                path.unlink()
        raise


def _run_and_report(original, func):
    """Hydra's report of a failed command, except for a storage error: the line, exit code 2."""

    def guarded():
        try:
            return func()
        except StorageExit as exc:  # from this process (printed already) or from a worker
            report(exc.line)
            raise
        except Exception as exc:
            line = _line(exc)
            if line is None:
                raise
            report(line)
            raise StorageExit(line) from None

    return original(guarded)


def install():
    """Wrap Hydra's writer of ``.hydra/*.yaml`` and its report of a failed command (idempotent; done
    when :mod:`proxboost.experiments.launch.cli` is imported: by ``run.py``, and by every launcher
    worker and Slurm job, which import it before Hydra writes the job's files)."""
    private_api.wrap_hydra_writes(_save_config, _run_and_report)
