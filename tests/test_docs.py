"""The documentation is self-contained: every relative link and anchor resolves, nothing cites a
file outside the repository or a tracker."""

import re
import unicodedata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = sorted((REPO / "docs").glob("*.md")) + [REPO / "README.md"]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    anchors = set()
    for heading in re.findall(r"^#+\s+(.*)$", page.read_text(), re.M):
        text = heading.strip().lower()
        text = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
        anchors.add(text.replace(" ", "-"))
    return anchors


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_and_anchors_resolve(page):
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target):
            continue  # an external URL
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        assert linked.exists(), f"{page.name}: link to {target} (no such file)"
        if anchor and linked.suffix == ".md":
            assert anchor in _anchors(linked), f"{page.name}: link to {target} (no such heading)"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_reference_outside_the_repository(page):
    text = page.read_text()
    assert not re.search(r"\bSPEC\b|/work/|shared/datasets|\bissue #?\d", text), page.name
