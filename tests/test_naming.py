"""The shared names (proxboost.experiments.store.naming): every method a run can name has one style
of its own, the method, loss and dataset lists agree with the modules that define those things, and
a stored value names its tie rule."""

import math
from pathlib import Path

import pytest

from proxboost.boosting import ALGOS as BOOSTING_ALGOS
from proxboost.experiments.datasets import dataset_info
from proxboost.experiments.plan.methods import ALGOS, BASELINE_ALGOS
from proxboost.experiments.store import naming
from proxboost.experiments.store.naming import METHOD_STYLES
from proxboost.losses import LOSSES, Hinge, Pinball

REPO = Path(__file__).resolve().parents[1]


def test_method_styles_are_unique():
    colors = [s["color"] for s in METHOD_STYLES.values()]
    markers = [s["marker"] for s in METHOD_STYLES.values()]
    shorts = [s["short"] for s in METHOD_STYLES.values()]
    assert len(set(colors)) == len(set(markers)) == len(set(shorts)) == len(METHOD_STYLES)
    assert set(ALGOS) <= set(METHOD_STYLES)  # every method has a style
    configured = {p.stem for p in (REPO / "conf" / "algo").glob("*.yaml")}
    assert configured and configured <= set(METHOD_STYLES)  # every method a run can name


def test_an_unknown_method_is_drawn_in_grey_dots_under_its_own_name():
    assert naming.style("mystery") == {
        "short": "mystery",
        "color": "grey",
        "marker": ".",
        "label": "mystery",
    }
    assert naming.short("prox") == "P" and naming.short("mystery") == "mystery"


def test_method_lists_agree_with_the_methods():
    assert set(naming.BOOSTING_METHODS) == set(BOOSTING_ALGOS)
    assert sorted(naming.METHOD_ORDER) == sorted(ALGOS)  # each method once
    assert set(naming.PAPER_METHODS) <= set(naming.METHOD_ORDER)
    assert set(naming.EXTRA_BASELINES + naming.PAPER_BASELINES) <= set(BASELINE_ALGOS)
    assert set(naming.LOSS_INDEPENDENT) <= set(BASELINE_ALGOS)
    assert naming.REFERENCE in naming.BOOSTING_METHODS


def test_loss_and_dataset_lists_agree_with_their_definitions():
    assert set(naming.LOSS_NAMES) == set(LOSSES)
    assert all(LOSSES[name].task == "regression" for name in naming.PAPER_REGRESSION_LOSSES)
    assert all(LOSSES[name].task == "classification" for name in naming.PAPER_CLASSIFICATION_LOSSES)
    # the losses whose line searches can tie: the piecewise-linear ones
    assert set(naming.TIE_LOSSES) == {
        name for name, cls in LOSSES.items() if issubclass(cls, (Pinball, Hinge))
    }
    assert {dataset_info(d).task for d in naming.REGRESSION_DATASETS} == {"regression"}
    assert {dataset_info(d).task for d in naming.CLASSIFICATION_DATASETS} == {"classification"}


@pytest.mark.parametrize("empty", [None, math.nan, "", "nan", "None"])
def test_a_stored_value_without_a_tie_rule_names_the_default(empty):
    assert naming.tie_rule_of(empty) == naming.DEFAULT_TIE_RULE == "midpoint"


def test_a_stored_tie_rule_is_read_as_written():
    assert naming.tie_rule_of("authors") == "authors"
    assert naming.tie_rule_of("authors_float") == "authors_float"
