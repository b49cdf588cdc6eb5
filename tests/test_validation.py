"""The estimators' parameter constraints (proxboost._validation): each accepts exactly its values
and refuses the others in one line naming the parameter, what is allowed and a hint; the loss
parameters are checked by the losses' own rules.

Oracles: the values written out by hand on each side of every bound, and the losses'
constructors (``make_loss``) for the loss parameters.
"""

import math

import numpy as np
import pytest
from sklearn.utils._param_validation import (
    InvalidParameterError,
    validate_parameter_constraints,
)

from proxboost._validation import (
    Choice,
    Flag,
    Levels,
    LossParameter,
    NJobs,
    Number,
    Step,
    Verbose,
    integer_at_least_one,
)
from proxboost.losses import PARAMETER_RULES, make_loss


def _accepts(constraint, value) -> bool:
    try:
        validate_parameter_constraints({"p": [constraint]}, {"p": value}, "Estimator")
    except InvalidParameterError:
        return False
    return True


@pytest.mark.parametrize(
    "constraint, good, bad",
    [
        (Choice("p", ["a", "b"]), ["a", "b"], ["c", 1, None, ["a"]]),
        (
            Number("p", 0.0, 1.0, closed="right", allowed="a float in (0, 1]"),
            [1e-9, 0.5, 1, 1.0, np.float32(0.25)],
            [0, 0.0, 1.0000001, -1, True, "0.5", math.nan],
        ),
        (
            Number("p", 0.0, 1.0, closed="neither", allowed="a float in (0, 1)"),
            [0.5],
            [0.0, 1.0],
        ),
        (integer_at_least_one("p"), [1, 7, np.int64(3)], [0, -1, 1.0, 2.5, True, np.bool_(True)]),
        (Flag("p"), [True, False, np.bool_(False)], [0, 1, "true", None]),
        (Verbose("p"), [0, 2, True, False], [-1, 0.5, "1"]),
        (NJobs("p"), [1, 2, -1, -2, -100, np.int64(4)], [0, 1.0, 2.5, "2", True, np.bool_(True)]),
        (Step("p"), [1e-3, 1.0, 100, "auto"], [0.0, -1.0, "Auto", math.inf, True]),
        (
            Levels("p"),
            [0.5, [0.1, 0.9], (0.05, 0.5, 0.95)],
            [0.0, 1.0, [], [0.9, 0.1], [0.1, 0.1], [0.1, 1.0], True],
        ),
    ],
)
def test_each_constraint_accepts_its_values_and_refuses_the_others(constraint, good, bad):
    for value in good:
        assert _accepts(constraint, value), value
    for value in bad:
        assert not _accepts(constraint, value), value


def test_a_refusal_is_one_line_naming_the_value_what_is_allowed_and_a_hint():
    hint = Choice("loss", ["ls", "lad"], hint=lambda v: " (use BoostingClassifier)")
    with pytest.raises(InvalidParameterError) as exc:
        hint.is_satisfied_by("hinge")
    assert str(exc.value) == (
        "loss='hinge' is not allowed; allowed values: ['ls', 'lad'] (use BoostingClassifier)"
    )
    with pytest.raises(InvalidParameterError, match=r"^p=0 is not allowed; allowed values: an "):
        integer_at_least_one("p").is_satisfied_by(0)


@pytest.mark.parametrize("name", sorted(PARAMETER_RULES))
def test_a_loss_parameter_is_refused_exactly_where_the_loss_refuses_it(name):
    loss = {"tau": "pinball", "beta": "exponential", "newton_steps": "logistic"}[name]
    constraint = LossParameter(name)
    for value in (0, 1, 2, 0.5, 1.0, 1e-9, -0.5, 3.5, math.inf, math.nan, True, "1", None):
        try:
            make_loss(loss, **{name: value})
            built = True
        except ValueError:
            built = False
        assert _accepts(constraint, value) == built, (name, value)
    assert constraint.allowed == PARAMETER_RULES[name].allowed


def test_levels_of_one_quantile_follow_the_pinball_loss():
    for value in (0.0, 0.3, 1.0, 1.5, -0.1, math.nan):
        try:
            make_loss("pinball", tau=value)
            built = True
        except ValueError:
            built = False
        assert _accepts(Levels("tau"), value) == built, value
