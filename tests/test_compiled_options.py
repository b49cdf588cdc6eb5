"""Every compiled function of the package is compiled with NumPy's error model.

numba's default ("python") checks every division for a zero divisor so that it can raise
``ZeroDivisionError``; NumPy's returns inf or nan (0 for integers) instead, as the Python
loop's NumPy arithmetic does. A division by a nonzero number gives the same result under both,
so the error model moves no number; the checks cost a compare and a branch per division, in the
split search's bounds, the impurities, the leaf values and the row passes
(docs/engines.md, "Compiled with NumPy's error model")."""

import ast
import pathlib

import pytest
from numba import njit

import proxboost

PACKAGE = pathlib.Path(proxboost.__file__).parent


def _compiled_functions(source):
    """(line, error model or None) of every ``njit`` use in ``source``: calls and bare names."""
    tree = ast.parse(source)
    calls = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _is_njit(node.func):
            model = [k.value for k in node.keywords if k.arg == "error_model"]
            found.append((node.lineno, model[0].value if model else None))
        elif _is_njit(node) and id(node) not in calls:
            found.append((node.lineno, None))  # a bare @njit: numba's default
    return sorted(found)


def _is_njit(node):
    return (isinstance(node, ast.Name) and node.id == "njit") or (
        isinstance(node, ast.Attribute) and node.attr == "njit"
    )


def _modules():
    return sorted(p for p in PACKAGE.rglob("*.py") if "njit" in p.read_text())


def test_the_scan_finds_the_compiled_modules():
    names = {p.name for p in _modules()}
    assert {"_compiled_loop.py", "_row_passes.py", "grower.py", "splitting.py"} <= names
    assert sum(len(_compiled_functions(p.read_text())) for p in _modules()) > 100


def test_the_scan_sees_a_missing_or_other_error_model():
    source = (
        "from numba import njit\n"
        "@njit(cache=True)\ndef f(x):\n    return x\n"
        "@njit\ndef g(x):\n    return x\n"
        "h = njit(error_model='python')(lambda x: x)\n"
        "@njit(error_model='numpy')\ndef k(x):\n    return x\n"
    )
    assert _compiled_functions(source) == [(2, None), (5, None), (8, "python"), (9, "numpy")]


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_compiled_function_uses_numpys_error_model(path):
    wrong = [line for line, model in _compiled_functions(path.read_text()) if model != "numpy"]
    assert not wrong, f"{path.name}: njit without error_model='numpy' at lines {wrong}"


def test_the_error_model_changes_only_a_division_by_zero():
    """The property the module docstring relies on, on numba itself."""

    def divide(a, b):
        return a / b, a // b, a % b

    default = njit(divide)
    numpy_model = njit(error_model="numpy")(divide)
    for a, b in [(7.5, 2.0), (-7.5, 2.0), (1e308, 1e-10), (-0.0, 3.0), (5e-324, 0.5)]:
        assert numpy_model(a, b) == default(a, b)
        assert str(numpy_model(a, b)) == str(default(a, b))  # signed zeros alike
    for a, b in [(-7, 2), (7, -2), (2**62, 3)]:
        assert numpy_model(a, b) == default(a, b)
    with pytest.raises(ZeroDivisionError):
        default(1.0, 0.0)
    quotient = numpy_model(1.0, 0.0)[0]
    assert quotient == float("inf")
