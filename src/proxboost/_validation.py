"""Parameter constraints of the estimators, in scikit-learn's validation framework.

The estimators declare ``_parameter_constraints`` and validate them through scikit-learn's
``_fit_context`` (``sklearn.utils._param_validation``; private scikit-learn API, hence the upper
bound on scikit-learn in pyproject.toml). scikit-learn's own message reads "The 'loss' parameter
of BoostingRegressor must be ... Got 'hinge' instead."; it cannot say *what to do instead* (use
BoostingClassifier). The constraints below therefore raise their one-line message themselves
when a value does not satisfy them: ``name=value``, what is allowed, and a hint where there is
one. Each constraint is the only one of its parameter (or the last, after ``None``), so raising
does not cut a search through alternatives short.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import InvalidParameterError, Options

from proxboost._monotone import valid_constraint
from proxboost.losses import LOSSES, PARAMETER_RULES, check_taus


class _Refusing(Options):
    """A constraint that raises its own one-line message (see the module docstring). It derives
    from scikit-learn's ``Options`` only because ``make_constraint`` accepts no other custom
    constraint class; it overrides everything ``Options`` does."""

    def __init__(self, name, allowed):
        super().__init__(type=object, options=set())
        self.name, self.allowed = name, allowed

    def check(self, value) -> bool:
        raise NotImplementedError

    def hint(self, value) -> str:
        return ""

    def is_satisfied_by(self, value):
        if self.check(value):
            return True
        raise InvalidParameterError(
            f"{self.name}={value!r} is not allowed; allowed values: {self.allowed}"
            f"{self.hint(value)}"
        )

    def __str__(self):
        return str(self.allowed)


class Choice(_Refusing):
    """One of a fixed list of strings; ``hint(value)`` may add what to do instead."""

    def __init__(self, name, options, hint=None):
        super().__init__(name, list(options))
        self._hint = hint

    def check(self, value):
        return isinstance(value, str) and value in self.allowed

    def hint(self, value):
        return self._hint(value) if self._hint is not None else ""


class LossChoice(Choice):
    """A loss of one task: the built-in ones and those registered since
    (:func:`proxboost.losses.register_loss`), read at each check."""

    def __init__(self, task, hint=None):
        super().__init__("loss", (), hint)
        self.task = task

    @property
    def allowed(self):
        return [name for name, cls in LOSSES.items() if cls.task == self.task]

    @allowed.setter
    def allowed(self, value):  # _Refusing sets it: the list is read from LOSSES instead
        pass


class Number(_Refusing):
    """A real (or, with ``integer=True``, an integral) number in an interval; bools refused."""

    def __init__(self, name, low, high, *, closed, allowed, integer=False):
        super().__init__(name, allowed)
        self.low, self.high, self.closed, self.integer = low, high, closed, integer

    def check(self, value):
        kind = Integral if self.integer else Real
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, kind):
            return False
        low_ok = value >= self.low if self.closed in ("left", "both") else value > self.low
        high_ok = value <= self.high if self.closed in ("right", "both") else value < self.high
        return bool(low_ok and high_ok)


class Flag(_Refusing):
    """True or False."""

    def __init__(self, name):
        super().__init__(name, "a bool")

    def check(self, value):
        return isinstance(value, (bool, np.bool_))


class Verbose(_Refusing):
    """A bool, or an integer >= 0 (scikit-learn's ``verbose``)."""

    def __init__(self, name="verbose"):
        super().__init__(name, "an integer >= 0 or a bool")

    def check(self, value):
        if isinstance(value, (bool, np.bool_)):
            return True
        return isinstance(value, Integral) and value >= 0


class Step(Number):
    """The proximal step: a float > 0, or "auto" (a step in the units of the target)."""

    def __init__(self, name="step"):
        super().__init__(
            name,
            0.0,
            np.inf,
            closed="neither",
            allowed='a float > 0 (per-sample proximal step) or "auto"',
        )

    def check(self, value):
        return (isinstance(value, str) and value == "auto") or super().check(value)


class Levels(_Refusing):
    """A quantile level in (0, 1), or a strictly increasing list of them (several quantiles)."""

    def __init__(self, name="tau"):
        super().__init__(
            name,
            "a float in (0, 1), or a non-empty, strictly increasing list of floats in (0, 1)",
        )

    def check(self, value):
        if np.ndim(value) == 0:
            return PARAMETER_RULES["tau"].check(value)
        try:
            check_taus(value)
        except ValueError:
            return False
        return True


class LossParameter(_Refusing):
    """A parameter of the loss (``beta``, ``newton_steps``): the loss's own rule
    (:data:`proxboost.losses.PARAMETER_RULES`, which the loss's constructor applies too)."""

    def __init__(self, name):
        self.rule = PARAMETER_RULES[name]
        super().__init__(name, self.rule.allowed)

    def check(self, value):
        return self.rule.check(value)


class MonotonicCst(_Refusing):
    """Monotone constraints (after ``None``): a 1-D list of -1, 0, 1, or a dict {feature name:
    -1, 0 or 1}. Their number and the names are checked against X at fit
    (:func:`proxboost._monotone.check_monotonic_cst`)."""

    def __init__(self, name="monotonic_cst"):
        super().__init__(
            name,
            "None, a list of -1, 0, 1 (one per feature) or a dict {feature name: -1, 0 or 1}",
        )

    def check(self, value):
        if isinstance(value, dict):
            return all(isinstance(k, str) and valid_constraint(v) for k, v in value.items())
        if isinstance(value, (str, bytes)) or np.ndim(value) != 1:
            return False
        return all(valid_constraint(v) for v in np.asarray(value, dtype=object))


class NJobs(_Refusing):
    """Threads (after ``None``): scikit-learn's ``n_jobs``, an integer other than 0 (-1: all
    cores, -k: all cores but k - 1); bools refused."""

    def __init__(self, name="n_jobs"):
        super().__init__(name, "None, -1 (all cores) or an integer != 0 (-k: all cores but k - 1)")

    def check(self, value):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, Integral):
            return False
        return value != 0


def integer_at_least_one(name):
    return Number(name, 1, np.inf, closed="left", allowed="an integer >= 1", integer=True)
