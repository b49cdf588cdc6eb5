"""Fault injection for the tests of full disks and lost permissions (tests/test_io_errors.py).

Put this folder first on ``PYTHONPATH`` and describe the fault in ``$PROXBOOST_TEST_FAULT``
(JSON): every Python process of the command imports this module at start (``site`` does), the
command's own, its loky workers, Hydra's joblib-launcher workers and submitit's jobs alike.

``{"errno": "ENOSPC" | "EACCES", "path": <fnmatch pattern of the absolute path>, "at":
"open" | "write" | "mkdir" | "semaphore", "after": <matching writes that succeed first>}``

- ``open``: opening a matching file for writing fails (``open``, ``io.open``, ``os.open``), as
  when a folder's permission was removed;
- ``write``: writing to a matching file fails after half of the bytes, as on a full disk (the
  file is left cut short, unless the writer removes it);
- ``mkdir``: creating a matching folder fails;
- ``semaphore``: creating a named semaphore of loky (``/dev/shm/sem.loky-*``) fails.

Each injected fault appends one line to ``$PROXBOOST_TEST_FAULT_LOG`` (if set): the pid and the
path, so that a test knows which process met it.

A Slurm job that meets the fault ends without its result file, and submitit waits 15 s for that
file (time for a slow shared file system to show it) before it hands the command the job's error
stream. submitit's local jobs, which the tests run, write their file before they end: the wait is
cut to none, and the command's handling of the job is unchanged.
"""

import errno as _errno
import json as _json
import os as _os

_SPEC = _os.environ.get("PROXBOOST_TEST_FAULT")

if _SPEC:
    import builtins as _builtins
    import fnmatch as _fnmatch
    import io as _io

    _FAULT = _json.loads(_SPEC)
    _CODE = getattr(_errno, _FAULT["errno"])
    _AT = _FAULT["at"]
    _SEEN = {"writes": 0}  # matching writes (or opens, for "open") so far

    def _matches(path) -> bool:
        try:
            path = _os.path.abspath(_os.fsdecode(path))
        except TypeError:  # a file descriptor
            return False
        return _fnmatch.fnmatch(path, _FAULT["path"])

    def _fail(path=None):
        log = _os.environ.get("PROXBOOST_TEST_FAULT_LOG")
        if log:  # no file object here: the code under test looks for the one it was writing
            fd = _OS_OPEN(log, _os.O_WRONLY | _os.O_APPEND | _os.O_CREAT, 0o644)
            _os.write(fd, f"{_os.getpid()} {path}\n".encode())
            _os.close(fd)
        if path is None:
            raise OSError(_CODE, _os.strerror(_CODE))
        raise OSError(_CODE, _os.strerror(_CODE), str(path))

    def _due() -> bool:
        _SEEN["writes"] += 1
        return _SEEN["writes"] > int(_FAULT.get("after", 0))

    class _FailingFile(_io.FileIO):
        """A file whose writes fail after half of their bytes (a full disk)."""

        def write(self, data):
            if not _due():
                return super().write(data)
            super().write(bytes(data)[: len(data) // 2])
            _fail()

    _OPEN = _builtins.open
    _OS_OPEN = _os.open
    _WRITING = set("wax+")

    def open(
        file,
        mode="r",
        buffering=-1,
        encoding=None,
        errors=None,
        newline=None,
        closefd=True,
        opener=None,
    ):  # noqa: A001 - replaces the builtin
        if not (_WRITING & set(mode) and _matches(file)):
            return _OPEN(file, mode, buffering, encoding, errors, newline, closefd, opener)
        if _AT == "open" and _due():
            _fail(file)
        if _AT != "write":
            return _OPEN(file, mode, buffering, encoding, errors, newline, closefd, opener)
        raw_mode = mode.replace("t", "").replace("b", "")
        raw = _FailingFile(file, raw_mode, closefd=closefd, opener=opener)
        buffered = _io.BufferedRandom(raw) if "+" in mode else _io.BufferedWriter(raw)
        if "b" in mode:
            return buffered
        text = _io.TextIOWrapper(buffered, encoding, errors, newline, line_buffering=buffering == 1)
        text.mode = mode
        return text

    def _os_open(path, flags, mode=0o777, *, dir_fd=None):
        writing = flags & (_os.O_WRONLY | _os.O_RDWR | _os.O_CREAT)
        if _AT == "open" and writing and _matches(path) and _due():
            _fail(path)
        return _OS_OPEN(path, flags, mode, dir_fd=dir_fd)

    _builtins.open = _io.open = open
    _os.open = _os_open

    if _AT == "mkdir":
        _MKDIR = _os.mkdir

        def _mkdir(path, mode=0o777, *, dir_fd=None):
            if _matches(path):
                _fail(path)
            return _MKDIR(path, mode, dir_fd=dir_fd)

        _os.mkdir = _mkdir

    if _AT == "semaphore":
        import _multiprocessing

        class _SemLock(_multiprocessing.SemLock):
            def __new__(cls, kind, value, maxvalue, name, unlink):
                if str(name).startswith("/loky-"):
                    _fail()
                return super().__new__(cls, kind, value, maxvalue, name, unlink)

        _multiprocessing.SemLock = _SemLock

    import importlib.abc as _abc
    import importlib.machinery as _machinery
    import sys as _sys

    class _NoResultWait(_abc.MetaPathFinder):
        """Imports ``submitit.core.core`` with ``Job._results_timeout_s`` set to 0."""

        def find_spec(self, name, path, target=None):
            if name != "submitit.core.core":
                return None
            spec = _machinery.PathFinder.find_spec(name, path)
            if spec is None:
                return None
            run = spec.loader.exec_module

            def exec_module(module):
                run(module)
                module.Job._results_timeout_s = 0

            spec.loader.exec_module = exec_module
            return spec

    _sys.meta_path.insert(0, _NoResultWait())
