"""Layout of the tree engines: every function in ``proxboost.engines`` takes at most 12
parameters and spans at most 80 lines (kernel state travels in named records, not in long
positional argument lists)."""

import ast
from pathlib import Path

import pytest

import proxboost.engines

ENGINES_DIR = Path(proxboost.engines.__file__).parent
MAX_PARAMETERS = 12
MAX_LINES = 80


def _functions():
    for path in sorted(ENGINES_DIR.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield path.relative_to(ENGINES_DIR), node


def _n_parameters(fn):
    a = fn.args
    n = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs)
    return n + (a.vararg is not None) + (a.kwarg is not None)


def test_the_scan_finds_the_modules_and_their_functions():
    names = {(str(path), fn.name) for path, fn in _functions()}
    assert ("exact.py", "grow") in names  # ExactEngine.grow
    assert len({path for path, _ in names}) >= 5


@pytest.mark.parametrize("path,fn", list(_functions()), ids=lambda x: getattr(x, "name", str(x)))
def test_function_is_small(path, fn):
    n_lines = fn.end_lineno - fn.lineno + 1  # decorators excluded, docstring included
    where = f"{path}:{fn.lineno} {fn.name}"
    assert _n_parameters(fn) <= MAX_PARAMETERS, f"{where} takes {_n_parameters(fn)} parameters"
    assert n_lines <= MAX_LINES, f"{where} spans {n_lines} lines"
