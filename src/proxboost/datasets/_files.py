"""Where dataset files come from: the cache, a local mirror, or the network.

Resolution order for one file ``<dataset id>/<file name>``:

1. the **cache** ``<data_home>/<id>/<name>``; ``data_home`` is the argument, else the
   environment variable ``PROXBOOST_DATA_HOME``, else ``<repo>/data`` when the package runs
   from a source checkout (``src/`` layout, the folder is git-ignored), else
   ``~/.cache/proxboost``;
2. a **mirror** ``<mirror>/<id>/<name>`` (the layout of the project's ``../shared/datasets``);
   ``mirror`` is the argument, else the environment variable ``PROXBOOST_DATA_MIRROR`` (an
   empty value means no mirror). A mirror file is copied into the cache;
3. a **download** from the file's URLs (canonical first, then a pinned copy), with a short
   timeout (``PROXBOOST_DOWNLOAD_TIMEOUT`` seconds, default 5) so that machines without
   internet fail fast. ``download=False`` or ``PROXBOOST_OFFLINE=1`` skips this step.

Every copy and download streams into a temporary file in the cache folder while hashing it;
the temporary file is renamed onto its final name (``os.replace``, atomic) only when its
sha256 matches, and is deleted on any failure, so the cache never holds a partial or
unverified file. Cached files are re-hashed on every use (all files are a few MB). A file
without a known checksum (``ad.data``) is accepted by this module as is and flagged
``verified=False``: its loader checks its size after preprocessing.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import os
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO
from urllib.error import HTTPError, URLError
from urllib.parse import urlparse
from urllib.request import Request, urlopen

from .._io import atomic_path
from ._manifest import RemoteFile

__all__ = [
    "ENV_DATA_HOME",
    "ENV_MIRROR",
    "ENV_OFFLINE",
    "ENV_TIMEOUT",
    "ChecksumError",
    "DatasetUnavailableError",
    "Resolved",
    "fetch",
    "get_data_home",
    "get_mirror",
    "locate",
    "sha256_file",
]

ENV_DATA_HOME = "PROXBOOST_DATA_HOME"
ENV_MIRROR = "PROXBOOST_DATA_MIRROR"
ENV_OFFLINE = "PROXBOOST_OFFLINE"
ENV_TIMEOUT = "PROXBOOST_DOWNLOAD_TIMEOUT"
DEFAULT_TIMEOUT = 5.0
CHUNK_SIZE = 1 << 16

#: hosts that failed at connection level in this process; not retried (fail fast offline).
_UNREACHABLE_HOSTS: set[str] = set()


class DatasetUnavailableError(FileNotFoundError):
    """A dataset file is in neither the cache nor a mirror and could not be downloaded."""


class ChecksumError(ValueError):
    """A file's sha256 differs from the expected one; the file was refused.

    Attributes
    ----------
    filename : str
        The file's name.
    expected, actual : str
        The expected and the computed sha256 (hex).
    source : str
        Where the bytes came from (cache path, mirror path or URL).
    """

    def __init__(self, filename: str, expected: str, actual: str, source: str, fix: str):
        self.filename = filename
        self.expected = expected
        self.actual = actual
        self.source = source
        super().__init__(
            f"checksum mismatch for {filename!r} from {source}: expected sha256 {expected}, "
            f"got {actual}. The file was refused and not used. {fix}"
        )


@dataclass(frozen=True)
class Resolved:
    """A local, checked copy of a remote file.

    Attributes
    ----------
    path : Path
        Where to read the file.
    origin : {"cache", "mirror", "download"}
        Where it came from in this call ("cache": it was already cached).
    verified : bool
        True if its sha256 was checked; False for a file without known checksum.
    stored : bool
        True if this call wrote the file into the cache (copy or download); False when
        it was already cached or is read in place from a read-only setup.
    """

    path: Path
    origin: str
    verified: bool
    stored: bool = False


# ---------------------------------------------------------------------------- locations


def _repo_root() -> Path | None:
    """The source checkout this package runs from (``<repo>/src/proxboost/...``), if any."""
    repo = Path(__file__).resolve().parents[3]
    if (repo / "pyproject.toml").is_file() and (repo / "src" / "proxboost").is_dir():
        return repo
    return None


def get_data_home(data_home: str | os.PathLike | None = None) -> Path:
    """The cache folder: argument, else ``$PROXBOOST_DATA_HOME``, else ``<repo>/data``.

    Outside a source checkout the last fallback is ``~/.cache/proxboost``.
    """
    if data_home is not None:
        return Path(data_home).expanduser()
    env = os.environ.get(ENV_DATA_HOME, "").strip()
    if env:
        return Path(env).expanduser()
    repo = _repo_root()
    if repo is not None:
        return repo / "data"
    return Path.home() / ".cache" / "proxboost"


def get_mirror(mirror: str | os.PathLike | None = None) -> Path | None:
    """The mirror folder: argument, else ``$PROXBOOST_DATA_MIRROR`` (empty: none)."""
    if mirror is not None and str(mirror).strip():
        return Path(mirror).expanduser()
    env = os.environ.get(ENV_MIRROR, "").strip()
    return Path(env).expanduser() if env else None


def _download_enabled(download: bool | None) -> bool:
    if download is not None:
        return bool(download)
    return os.environ.get(ENV_OFFLINE, "").strip().lower() in ("", "0", "false", "no")


def _timeout() -> float:
    try:
        return float(os.environ.get(ENV_TIMEOUT, DEFAULT_TIMEOUT))
    except ValueError:
        return DEFAULT_TIMEOUT


def locate(
    dataset: str,
    file: RemoteFile,
    mirror: str | os.PathLike | None = None,
    data_home: str | os.PathLike | None = None,
) -> tuple[Path, str] | None:
    """Where a file is present locally, without reading it: ``(path, "cache"|"mirror")``."""
    cached = get_data_home(data_home) / dataset / file.name
    if cached.is_file():
        return cached, "cache"
    root = get_mirror(mirror)
    if root is not None and (root / dataset / file.name).is_file():
        return root / dataset / file.name, "mirror"
    return None


# ---------------------------------------------------------------------------- bytes


def _iter_stream(stream: BinaryIO) -> Iterator[bytes]:
    while chunk := stream.read(CHUNK_SIZE):
        yield chunk


def _iter_file(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as stream:
        yield from _iter_stream(stream)


def sha256_file(path: str | os.PathLike) -> str:
    """The sha256 (hex) of a file, read in chunks."""
    digest = hashlib.sha256()
    for chunk in _iter_file(Path(path)):
        digest.update(chunk)
    return digest.hexdigest()


def _write_atomic(
    dest: Path, chunks: Iterable[bytes], expected: str | None, source: str
) -> str:
    """Stream ``chunks`` into ``dest`` atomically, accepting them only if the sha256 matches.

    The bytes go to a temporary file in ``dest``'s folder, which is renamed onto ``dest``
    only after a full, checked write; on any failure (checksum, I/O, interruption) it is
    deleted and ``dest`` is left untouched.

    Returns
    -------
    str
        The sha256 of the written bytes.
    """
    with atomic_path(dest, suffix=".part") as tmp:
        digest = hashlib.sha256()
        with open(tmp, "wb") as out:
            for chunk in chunks:
                digest.update(chunk)
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        actual = digest.hexdigest()
        if expected is not None and actual != expected:
            raise ChecksumError(
                dest.name, expected, actual, source,
                f"Nothing was written to {dest.parent}. Replace the source file with a "
                "correct copy (see the URLs in proxboost/datasets/_manifest.py).",
            )
    return actual


# ---------------------------------------------------------------------------- resolution


def _check_cached(path: Path, file: RemoteFile) -> None:
    if file.sha256 is None:
        return
    actual = sha256_file(path)
    if actual != file.sha256:
        raise ChecksumError(
            file.name, file.sha256, actual, str(path),
            f"Delete {path} and run again: it will be copied from the mirror or downloaded.",
        )


def _from_mirror(dataset: str, file: RemoteFile, source: Path, dest: Path) -> Resolved:
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        writable = os.access(dest.parent, os.W_OK)
    except OSError:
        writable = False
    if not writable:
        warnings.warn(
            f"cache folder {dest.parent} is not writable; reading {source} in place",
            stacklevel=3,
        )
        _check_cached(source, file)
        return Resolved(source, "mirror", file.sha256 is not None)
    _write_atomic(dest, _iter_file(source), file.sha256, str(source))
    return Resolved(dest, "mirror", file.sha256 is not None, stored=True)


def _is_connection_error(exc: BaseException) -> bool:
    return isinstance(exc, URLError) and not isinstance(exc, HTTPError)


def _download(
    file: RemoteFile, dest: Path
) -> tuple[Resolved | None, list[str], list[ChecksumError]]:
    """Try the URLs in order; returns (result or None, failure notes, checksum errors)."""
    notes: list[str] = []
    mismatches: list[ChecksumError] = []
    for url in file.urls:
        host = urlparse(url).netloc
        if host in _UNREACHABLE_HOSTS:
            notes.append(f"{url}: skipped, {host} was unreachable earlier in this process")
            continue
        try:
            request = Request(url, headers={"User-Agent": "proxboost-datasets"})
            with urlopen(request, timeout=_timeout()) as response:
                _write_atomic(dest, _iter_stream(response), file.sha256, url)
            resolved = Resolved(dest, "download", file.sha256 is not None, stored=True)
            return resolved, notes, mismatches
        except ChecksumError as exc:
            mismatches.append(exc)
            notes.append(f"{url}: sha256 mismatch (got {exc.actual})")
        except (URLError, http.client.HTTPException, ConnectionError, TimeoutError) as exc:
            if _is_connection_error(exc) or isinstance(exc, (ConnectionError, TimeoutError)):
                _UNREACHABLE_HOSTS.add(host)
            notes.append(f"{url}: {type(exc).__name__}: {exc}")
    return None, notes, mismatches


def _unavailable_message(
    dataset: str, file: RemoteFile, dest: Path, mirror: Path | None, notes: list[str], hint: str
) -> str:
    urls = "\n".join(f"    {url}" for url in file.urls) or "    (no public URL)"
    mirror_note = (
        f"not in the mirror {mirror / dataset}" if mirror is not None
        else f"no mirror set (argument mirror= or ${ENV_MIRROR})"
    )
    tried = "\n".join(f"    {note}" for note in notes) or "    (none)"
    checksum = (
        f"expected sha256: {file.sha256}" if file.sha256
        else "no checksum is known for this file: it is checked by its size after preprocessing"
    )
    return (
        f"dataset {dataset!r} needs the file {file.name!r}: it is not in the cache "
        f"{dest.parent}, {mirror_note}, and could not be downloaded.\n"
        f"  Get it from:\n{urls}\n"
        f"  Put it in:  {dest.parent}/  (as {dest})\n"
        f"  or set ${ENV_MIRROR} to a folder holding {dataset}/{file.name}.\n"
        f"  {checksum}.\n"
        f"  Download attempts:\n{tried}"
        + (f"\n  {hint}" if hint else "")
    )


def fetch(
    dataset: str,
    file: RemoteFile,
    *,
    mirror: str | os.PathLike | None = None,
    data_home: str | os.PathLike | None = None,
    download: bool | None = None,
    hint: str = "",
) -> Resolved:
    """A checked local copy of ``file`` of ``dataset``: cache, else mirror, else download.

    Parameters
    ----------
    dataset : str
        Dataset id (the sub-folder in the cache and the mirror).
    file : RemoteFile
        The file (name, sha256, URLs).
    mirror, data_home : path-like, optional
        See :func:`get_mirror` and :func:`get_data_home`.
    download : bool, optional
        Allow downloads (default: yes unless ``$PROXBOOST_OFFLINE`` is set).
    hint : str
        Extra text for the error message when the file is unavailable.

    Raises
    ------
    ChecksumError
        The cached or mirror copy, or every download, has the wrong sha256.
    DatasetUnavailableError
        The file could not be found or downloaded; the message names the file, its URLs
        and the folder to put it in.
    """
    dest = get_data_home(data_home) / dataset / file.name
    if dest.is_file():
        _check_cached(dest, file)
        return Resolved(dest, "cache", file.sha256 is not None)
    root = get_mirror(mirror)
    if root is not None and (root / dataset / file.name).is_file():
        return _from_mirror(dataset, file, root / dataset / file.name, dest)
    if _download_enabled(download):
        resolved, notes, mismatches = _download(file, dest)
        if resolved is not None:
            return resolved
        if mismatches:
            raise mismatches[0]
    else:
        notes = [f"download disabled (download=False or ${ENV_OFFLINE} set)"]
    raise DatasetUnavailableError(_unavailable_message(dataset, file, dest, root, notes, hint))
