"""Stored files: written atomically (whole at their final path, or not at all) and sealed by a
checksum (a file cut short or edited is detected, never read as data).

Every stored file of results (row files, curves, predictions, data draws) ends with one line
``#sha256=<hex>`` whose digest covers every byte before that line. A file without a valid last line
is *damaged*: truncated at any byte, edited by one byte, emptied, or written by a version that did
not seal its files (:mod:`proxboost.experiments.store.results` adds the line to those once, after
checking them). Readers go through :func:`read_sealed`, which returns the text before the seal or
raises :class:`DamagedFileError`.
"""

import contextlib
import hashlib
import os
import re
import socket
import tempfile
from pathlib import Path

SEAL_PREFIX = "#sha256="


class DamagedFileError(ValueError):
    """A stored file whose seal is missing or does not match its bytes."""

    def __init__(self, path, reason):
        super().__init__(f"{path}: {reason}")
        self.path, self.reason = Path(path), reason


def seal(text: str) -> str:
    """``text`` (ending with a newline) followed by its checksum line."""
    if not text.endswith("\n"):
        text += "\n"
    return f"{text}{SEAL_PREFIX}{hashlib.sha256(text.encode()).hexdigest()}\n"


def unseal(data: bytes, path="<bytes>") -> str:
    """The text before a valid seal; :class:`DamagedFileError` saying why otherwise."""
    if not data:
        raise DamagedFileError(path, "empty file")
    body, sep, last = data.rstrip(b"\n").rpartition(b"\n")
    if not data.endswith(b"\n") or not sep or not last.startswith(SEAL_PREFIX.encode()):
        raise DamagedFileError(path, "no checksum line at its end (cut short, or never sealed)")
    body += b"\n"
    expected = last[len(SEAL_PREFIX) :].decode("ascii", "replace")
    if hashlib.sha256(body).hexdigest() != expected or data != body + last + b"\n":
        raise DamagedFileError(path, "checksum mismatch (the file was edited or cut short)")
    return body.decode()


def read_sealed(path) -> str:
    """The verified text of a stored file (see the module docstring)."""
    return unseal(Path(path).read_bytes(), path)


@contextlib.contextmanager
def atomic_path(path, suffix=".tmp"):
    """Yield a temporary path beside ``path``; on success it is renamed onto ``path``.

    The temporary file lives in the destination folder (so :func:`os.replace` is atomic), gets
    the usual 0644 permissions (``mkstemp`` creates 0600), and is deleted if the block raises:
    no partial file is ever left at ``path`` or beside it. A process killed while writing (no
    handler runs: joblib kills a launcher's other workers when one job fails) leaves its
    temporary file, whose name carries the writer's host and pid, so that
    :func:`remove_dead_temporaries` can tell it from one being written. An ``OSError`` (a full
    disk, a lost permission) names ``path``, not the temporary file.

    Examples
    --------
    >>> with atomic_path("results/x.csv") as tmp:      # doctest: +SKIP
    ...     df.to_csv(tmp, index=False)
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        prefix = f".{path.name}.{_writer()}."
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=path.parent)
    except OSError as exc:
        _name(exc, path)
        raise
    os.close(fd)
    tmp = Path(tmp)
    try:
        yield tmp
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        _name(exc, path)
        raise


def _writer() -> str:
    """``<host>-<pid>`` of this process, as the temporary files' names carry it."""
    return f"{socket.gethostname()}-{os.getpid()}"


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_dead_temporaries(folders, suffixes=(".tmp", ".part")) -> int:
    """Remove the temporary files of :func:`atomic_path` in ``folders`` whose writer was a process
    of this host that no longer runs (killed while writing); the number removed. Files being
    written (a live writer, or one on another host) are left alone."""
    host = re.escape(socket.gethostname())
    written_by = re.compile(rf"^\..+\.{host}-(\d+)\.[^.]+$")
    removed = 0
    for folder in folders:
        for path in Path(folder).glob(".*"):
            if path.suffix not in suffixes:
                continue
            match = written_by.match(path.name[: -len(path.suffix)])
            if match and not _running(int(match.group(1))):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                    removed += 1
    return removed


def _name(exc, path: Path):
    """Let a system error met while writing ``path`` name it rather than its temporary file (a
    full disk is then reported on the file meant); any other exception is left as it is."""
    if not isinstance(exc, OSError) or exc.errno is None:
        return
    if exc.filename is None or os.path.basename(str(exc.filename)).startswith(f".{path.name}."):
        exc.filename = str(path)
