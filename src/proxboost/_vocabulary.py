"""Names every stage shares and nothing else: tie rules, integer checks, library versions.

A dependency-free module (numpy only), so that the fitting side (``_leafops``, ``boosting``,
``pipeline``) and the report side (``naming``, ``analysis``) read the same definitions without the
report importing the compiled fitting code.
"""

from __future__ import annotations

import numpy as np

#: Leaf rules for an interval of minimisers of a piecewise-linear line search (docs/method.md):
#: 0 if it minimises, else the midpoint (or the finite end); the authors' rule in exact
#: arithmetic; or the authors' rule as their code computes it in floating point.
TIE_RULES = ("midpoint", "authors", "authors_float")
#: The rule of the estimators by default, and of a stored row or curve that names none.
DEFAULT_TIE_RULE = "midpoint"


def is_integer(value) -> bool:
    """A Python or numpy integer, not a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def library_version(module: str) -> str:
    """``module.__version__``, "not installed" when it cannot be imported (the versions that
    determined a result are part of its identity and of its row)."""
    try:
        mod = __import__(module)
    except ImportError:
        return "not installed"
    return str(getattr(mod, "__version__", "unknown"))
