"""The names every stage shares (proxboost._vocabulary): the tie rules, what counts as an integer
and how a library's version is recorded."""

import sys
import types

import numpy as np

from proxboost._leafops import RULE_CODES
from proxboost._vocabulary import DEFAULT_TIE_RULE, TIE_RULES, is_integer, library_version


def test_the_default_tie_rule_is_a_tie_rule_and_the_compiled_rules_are_tie_rules():
    assert DEFAULT_TIE_RULE in TIE_RULES and len(set(TIE_RULES)) == len(TIE_RULES)
    assert set(RULE_CODES) <= set(TIE_RULES)


def test_integers_are_python_and_numpy_integers_and_not_bools():
    for value in (0, -3, 10**30, np.int8(1), np.int64(2), np.uint16(3)):
        assert is_integer(value), value
    for value in (True, False, np.bool_(True), 1.0, np.float64(2), "1", None, [1]):
        assert not is_integer(value), value


def test_a_library_version_is_its_version_or_says_why_not(monkeypatch):
    assert library_version("numpy") == np.__version__
    assert library_version("proxboost_no_such_module") == "not installed"
    monkeypatch.setitem(sys.modules, "proxboost_unversioned", types.ModuleType("unversioned"))
    assert library_version("proxboost_unversioned") == "unknown"
