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


@pytest.mark.slow
def test_code_map_lists_every_module_and_every_module_says_what_it_owns():
    import ast

    index = (REPO / "docs" / "index.md").read_text()
    code_map = index[index.index("## Code map") :]
    src = REPO / "src" / "proxboost"
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src)
        docstring = ast.get_docstring(ast.parse(path.read_text()))
        assert docstring and docstring.strip(), f"{rel} has no first docstring line"
        if path.name in ("__init__.py", "__main__.py"):
            continue
        # the experiments' table gives paths under experiments/; a row may name a folder and the
        # files in it (`claims/` ... `judging.py`)
        short = rel.relative_to("experiments") if rel.parts[0] == "experiments" else rel
        named = f"`{rel.as_posix()}`" in code_map or f"`{short.as_posix()}`" in code_map
        folder = (
            len(short.parts) > 1
            and f"`{short.parent.as_posix()}/`" in code_map
            and (f"`{path.name}`" in code_map or path.stem.startswith("_"))
        )
        assert named or folder, f"{rel} is missing from the code map in docs/index.md"


def test_code_map_lists_every_test_file_benchmark_and_script():
    index = (REPO / "docs" / "index.md").read_text()
    code_map = index[index.index("## Code map") :]
    listed = set(re.findall(r"`(test_\w+\.py)`", code_map))
    on_disk = {p.name for p in (REPO / "tests").glob("test_*.py")}
    assert listed == on_disk, (on_disk - listed, listed - on_disk)
    for folder in ("benchmarks", "experiments"):
        for path in sorted((REPO / folder).iterdir()):
            if path.suffix in (".py", ".sh"):
                assert f"`{path.name}`" in code_map, f"{folder}/{path.name} is not in the code map"


#: Pages whose python examples read real data files (run with the data mirror only).
NEEDS_DATA = {"data.md"}


@pytest.mark.parametrize(
    "page",
    [p for p in PAGES if p.name != "README.md" and "```python" in p.read_text()],
    ids=lambda p: p.name,
)
@pytest.mark.grid
def test_every_python_example_of_the_docs_runs(page, request, capsys, clean_registries):
    """Each docs page's python blocks run as written, in order, in one namespace (what they
    register, docs/extending.md, is removed afterwards)."""
    if page.name in NEEDS_DATA:
        request.getfixturevalue("data_mirror")
    namespace = {}
    for block in re.findall(r"```python\n(.*?)```", page.read_text(), re.S):
        exec(compile(block, str(page.relative_to(REPO)), "exec"), namespace)


def test_data_folder_tracks_only_its_readme():
    """data/ is in a fresh clone by its README; the files runs and `make datasets` put there
    (a dataset's folder, manifest.json) stay git-ignored."""
    import shutil
    import subprocess

    assert (REPO / "data" / "README.md").is_file()
    if not shutil.which("git") or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    paths = ["data/README.md", "data/engel/engel.csv", "data/manifest.json", "tests/data/x.csv"]
    done = subprocess.run(
        ["git", "check-ignore", "--no-index", *paths], cwd=REPO, capture_output=True, text=True
    )
    assert done.stdout.split() == ["data/engel/engel.csv", "data/manifest.json"]
