"""The generated block of a docs page (``experiments/report/docs_block.py``)."""

import pytest

from proxboost.experiments.report.docs_block import write_block


def test_only_the_block_is_replaced_and_again_the_same(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("intro\n<!-- m -->\nold\n<!-- /m -->\nafter <!-- m2 -->\n")
    write_block(page, "m", "new\ntext")
    assert page.read_text() == "intro\n<!-- m -->\nnew\ntext\n<!-- /m -->\nafter <!-- m2 -->\n"
    write_block(page, "m", "new\ntext")  # idempotent
    assert page.read_text().count("new\ntext") == 1


def test_a_page_without_the_block_is_refused_in_one_line(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("<!-- m -->\nno end\n")
    with pytest.raises(SystemExit, match="no <!-- m --> … <!-- /m --> block"):
        write_block(page, "m", "x")
    assert page.read_text() == "<!-- m -->\nno end\n"
