"""Generated text in a docs page: the block between ``<!-- marker -->`` and ``<!-- /marker -->``.

The commands that write their tables into docs/ (``quantile_measurements``, ``benchmark_report``,
and the benchmark scripts' ``--write-docs`` through ``benchmarks/shared.py``) replace that block
and nothing else, so the prose around it stays hand-written."""

from __future__ import annotations

from pathlib import Path


def write_block(path: Path, marker: str, text: str) -> Path:
    """Replace the block of ``marker`` in ``path`` by ``text``; exits with one line when the page
    lacks either comment."""
    begin, end = f"<!-- {marker} -->", f"<!-- /{marker} -->"
    page = Path(path).read_text(encoding="utf-8")
    if begin not in page or end not in page:
        raise SystemExit(f"{path}: no {begin} … {end} block to write into")
    head, rest = page.split(begin, 1)
    tail = rest.split(end, 1)[1]
    Path(path).write_text(f"{head}{begin}\n{text}\n{end}{tail}", encoding="utf-8")
    return Path(path)
