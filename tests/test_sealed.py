"""Stored files (proxboost.experiments.system.sealed): a sealed text reads back as written; a file
cut at any byte, edited by one byte or emptied is refused with its path and the reason; a file is
written whole at its path or not at all; what a killed writer left is removed, what a live one
writes is not."""

import os
import socket
import stat
import subprocess
import sys

import pytest

from proxboost.experiments.system.sealed import (
    SEAL_PREFIX,
    DamagedFileError,
    atomic_path,
    read_sealed,
    remove_dead_temporaries,
    seal,
    unseal,
)

TEXT = "a,b\n1,2.5\n"


def test_a_sealed_text_reads_back_as_written(tmp_path):
    sealed = seal(TEXT)
    assert sealed.startswith(TEXT) and sealed.splitlines()[-1].startswith(SEAL_PREFIX)
    assert unseal(sealed.encode()) == TEXT
    assert seal("no newline") == seal("no newline\n")  # a text is sealed ending with a newline
    path = tmp_path / "x.csv"
    path.write_text(sealed)
    assert read_sealed(path) == TEXT


def test_every_cut_and_every_one_byte_edit_is_refused():
    data = seal(TEXT).encode()
    for cut in range(len(data)):
        with pytest.raises(DamagedFileError):
            unseal(data[:cut])
    for i in range(len(data)):
        edited = bytearray(data)
        edited[i] ^= 0x01
        with pytest.raises((DamagedFileError, UnicodeDecodeError)):
            unseal(bytes(edited))


def test_a_damaged_file_is_named_with_the_reason(tmp_path):
    path = tmp_path / "row.csv"
    for content, reason in (
        (b"", "empty file"),
        (TEXT.encode(), "no checksum line"),
        (seal(TEXT).replace("2.5", "2.6").encode(), "checksum mismatch"),
    ):
        path.write_bytes(content)
        with pytest.raises(DamagedFileError) as exc:
            read_sealed(path)
        assert exc.value.path == path and reason in exc.value.reason
        assert str(exc.value).startswith(f"{path}: ") and "\n" not in str(exc.value)


def test_a_file_is_written_whole_or_not_at_all(tmp_path):
    path = tmp_path / "sub" / "x.csv"
    with atomic_path(path) as tmp:
        assert tmp.parent == path.parent and not path.exists()
        tmp.write_text("first")
    assert path.read_text() == "first"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    with pytest.raises(RuntimeError):
        with atomic_path(path) as tmp:
            tmp.write_text("half")
            raise RuntimeError("interrupted")
    assert path.read_text() == "first"  # the old file stays whole
    assert sorted(os.listdir(path.parent)) == ["x.csv"]  # no temporary file left beside it


@pytest.mark.slow
def test_only_the_temporary_files_of_dead_writers_of_this_host_are_removed(tmp_path):
    # a writer killed inside atomic_path (no handler runs) leaves its temporary file behind
    code = (
        "import os, sys\n"
        "from proxboost.experiments.system.sealed import atomic_path\n"
        "with atomic_path(sys.argv[1]) as tmp:\n"
        "    tmp.write_text('half')\n"
        "    os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "split-00.csv")], check=True)
    (dead,) = tmp_path.glob(".split-00.csv.*.tmp")
    host = socket.gethostname()
    alive = tmp_path / f".split-01.csv.{host}-{os.getpid()}.abcd1234.tmp"  # being written
    elsewhere = tmp_path / f".split-02.csv.other-host-{2**22 + 1}.abcd1234.tmp"
    unrelated = tmp_path / ".notes.tmp"
    for path in (alive, elsewhere, unrelated):
        path.write_text("x")
    assert remove_dead_temporaries([tmp_path]) == 1
    assert not dead.exists()
    assert alive.exists() and elsewhere.exists() and unrelated.exists()
    assert not (tmp_path / "split-00.csv").exists()
