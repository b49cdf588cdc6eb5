"""The registry of statements: complete, consistent with docs/claims.md, read by the report, and the
claims package stays on the analysis side of the imports."""

import ast
import re
from pathlib import Path

import pytest

from proxboost.experiments.claims import FAMILIES, STATEMENTS, families
from proxboost.experiments.claims.statements import REAL_WORLD

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "proxboost" / "experiments" / "claims"


def test_registry_lists_the_statements_of_docs_in_their_order():
    doc = (ROOT / "docs" / "claims.md").read_text(encoding="utf-8")
    ids = re.findall(r"^\| (\d[a-z]?) \|", doc, flags=re.M)
    assert list(STATEMENTS) == ids and len(ids) == 34
    for sid, s in STATEMENTS.items():
        assert s.id == sid
        assert f"l. {s.paper_line})" in doc.split(f"\n| {sid} |", 1)[1].split("\n", 1)[0]


def test_every_record_is_complete_and_real_world_records_have_no_run_aggregation():
    for s in STATEMENTS.values():
        assert callable(s.judge) and s.judge.__doc__ and s.id in s.judge.__doc__
        assert s.losses and s.family in FAMILIES and s.text
        assert (s.aggregation is None) == (s.experiment == REAL_WORLD)


def test_families_partition_the_statements():
    ids = [sid for _, group in families() for sid in group]
    assert sorted(ids) == sorted(STATEMENTS) and len(ids) == len(set(ids))
    assert [name for name, _ in families()] == list(FAMILIES)


def test_report_and_figures_define_no_grouping_of_their_own():
    report = ROOT / "src" / "proxboost" / "experiments" / "report"
    paths = [report / "summary.py", *sorted((report / "figures").glob("*.py"))]
    assert len(paths) > 2
    for path in paths:
        assert not re.search(r'\("1a", "1b"', path.read_text(encoding="utf-8")), path.name


@pytest.mark.slow
def test_claims_package_does_not_import_the_fitting_side():
    fitting = {"boosting", "engines", "pipeline", "losses", "baselines", "methods"}
    for path in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not fitting & set(node.module.split(".")), f"{path.name}: {node.module}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    assert not fitting & set(alias.name.split(".")), f"{path.name}: {alias.name}"


def test_readings_are_registry_data_and_docs_name_the_headline():
    from proxboost.experiments.claims import EVERY_CELL

    doc = (ROOT / "docs" / "claims.md").read_text(encoding="utf-8")
    section = doc.split("### Scopes", 1)[1].split("The other sentences", 1)[0]
    listed = {
        sid
        for row in re.findall(r"^\| \*\*([\d a-z,]+)\*\* \|", section, flags=re.M)
        for sid in row.split(", ")
    }
    assert {sid for sid, s in STATEMENTS.items() if s.readings} == listed
    for sid, s in STATEMENTS.items():
        if not s.readings:
            assert s.headline is EVERY_CELL
            continue
        names = [r.name for r in s.readings]
        assert len(names) >= 2 and len(set(names)) == len(names) and s.headline is s.readings[0]
        # the headline is the scope fixed before the runs, as the docs say
        assert "fixed before the rows they judge were computed" in s.readings[0].why
        row = doc.split(f"\n| {sid} |", 1)[1].split("\n", 1)[0]
        assert f"Readings: {names[0]} (headline), {', '.join(names[1:])}." in row


def test_the_judging_loop_names_no_statement():
    """Scopes are data of the registry, never a special case of the generic loop."""
    text = (PACKAGE / "judging.py").read_text(encoding="utf-8")
    for sid in STATEMENTS:
        assert f'"{sid}"' not in text and f"'{sid}'" not in text, sid
