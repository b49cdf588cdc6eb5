"""The benchmark scripts' own logic that a wrong number could hide behind (the scripts print
ratios and are not tests, docs/engines.md): `bench_weights.py` loads a base revision beside this
checkout only when the base is really another revision."""

import importlib.util
import os
import shutil
import sys

import pytest

import proxboost

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def _no_base_left(monkeypatch):
    """import_base registers the base as ``proxboost_base``: removed after each test."""
    monkeypatch.setitem(sys.modules, "proxboost_base", None)


def _script(name):
    spec = importlib.util.spec_from_file_location(
        f"bench_{name}", os.path.join(ROOT, "benchmarks", f"{name}.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_base_with_absolute_imports_is_refused_in_one_line(tmp_path):
    """A copy of this checkout's package imports its modules as ``proxboost``: loaded as the
    base, its estimators would be this checkout's, and the comparison a comparison with itself."""
    package = os.path.dirname(proxboost.__file__)
    shutil.copytree(package, tmp_path / "src" / "proxboost", ignore=shutil.ignore_patterns("*.pyc"))
    with pytest.raises(SystemExit) as stop:
        _script("bench_weights").import_base(str(tmp_path))
    message = str(stop.value)
    assert message.startswith("error: ") and "\n" not in message
    assert "absolute imports" in message and str(tmp_path) in message


def test_a_base_with_relative_imports_is_loaded_as_itself(tmp_path):
    """A base whose modules import each other relatively gives its own estimators."""
    src = tmp_path / "src" / "proxboost"
    src.mkdir(parents=True)
    (src / "__init__.py").write_text("from .boosting import BoostingRegressor\n")
    (src / "boosting.py").write_text("class BoostingRegressor:\n    revision = 'base'\n")
    base = _script("bench_weights").import_base(str(tmp_path))
    assert base.BoostingRegressor.revision == "base"
    assert base.BoostingRegressor is not proxboost.BoostingRegressor
