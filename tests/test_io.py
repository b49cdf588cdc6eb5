"""Stored files (proxboost._io): a sealed text reads back as written; a file cut at any byte,
edited by one byte or emptied is refused with its path and the reason; a file is written whole
at its path or not at all."""

import os
import stat

import pytest

from proxboost._io import SEAL_PREFIX, DamagedFileError, atomic_path, read_sealed, seal, unseal

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
