"""Atomic file writes: a file appears whole at its final path, or not at all."""

import contextlib
import os
import tempfile
from pathlib import Path


@contextlib.contextmanager
def atomic_path(path, suffix=".tmp"):
    """Yield a temporary path beside ``path``; on success it is renamed onto ``path``.

    The temporary file lives in the destination folder (so :func:`os.replace` is atomic), gets
    the usual 0644 permissions (``mkstemp`` creates 0600), and is deleted if the block raises:
    no partial file is ever left at ``path`` or beside it.

    Examples
    --------
    >>> with atomic_path("results/x.csv") as tmp:      # doctest: +SKIP
    ...     df.to_csv(tmp, index=False)
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
    os.close(fd)
    tmp = Path(tmp)
    try:
        yield tmp
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
