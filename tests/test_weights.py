"""Row weights (``sample_weight``) against the two oracles that define them: an integer weight
is the row repeated that many times, a zero weight is the row removed.

Loss level (f_0, line searches, loss values) for the six losses, then whole fits for every loss,
algorithm and tree engine: training curves and predictions to 1e-9 relative.
"""

import zlib

import numpy as np
import pytest

from proxboost import BoostingClassifier, BoostingRegressor
from proxboost.boosting import ALGOS
from proxboost.engines import ENGINES
from proxboost.losses import LOSSES, make_loss

RTOL = 1e-9


def _seed(*key):
    return zlib.crc32(repr(key).encode())


def _loss_data(name, rng, n=300, n_leaves=7):
    y = rng.choice([-1.0, 1.0], size=n) if LOSSES[name].task == "classification" else rng.normal(size=n)
    if name in ("lad", "pinball", "hinge"):  # integer data: ties happen, and must be kept
        y = y if name == "hinge" else rng.integers(-4, 5, size=n).astype(float)
        z = rng.integers(-2, 3, size=n).astype(float)
    else:
        z = rng.normal(size=n)
    return y, z, rng.integers(0, n_leaves, size=n), rng.integers(0, 4, size=n).astype(float)


def _loss(name):
    return make_loss(name, tau=0.3) if name == "pinball" else make_loss(name)


@pytest.mark.parametrize("name", list(LOSSES))
def test_loss_weights_are_repeated_rows(name):
    rng = np.random.default_rng(_seed("loss", name))
    y, z, ids, w = _loss_data(name, rng)
    rep = np.repeat(np.arange(len(y)), w.astype(int))
    g = rng.normal(size=7)
    for rule in ("midpoint", "authors"):
        weighted = _loss(name).line_search(y, z, ids, 7, w, rule, g)
        repeated = _loss(name).line_search(y[rep], z[rep], ids[rep], 7, None, rule, g)
        np.testing.assert_allclose(weighted, repeated, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(_loss(name).init(y, w), _loss(name).init(y[rep]), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(_loss(name).value(y, z, w), _loss(name).value(y[rep], z[rep]), rtol=1e-12)


@pytest.mark.parametrize("name", list(LOSSES))
def test_loss_zero_weights_are_removed_rows(name):
    """Rows of weight 0 are no breakpoints: their value cannot be chosen, and it cannot move
    the interval of minimisers (0/1 weights versus the rows removed)."""
    rng = np.random.default_rng(_seed("zero", name))
    y, z, ids, w = _loss_data(name, rng)
    w = (w > 0).astype(float)
    keep = w > 0
    g = rng.normal(size=7)
    exact = name in ("lad", "pinball", "hinge")  # order statistics: bit for bit
    for rule in ("midpoint", "authors"):
        weighted = _loss(name).line_search(y, z, ids, 7, w, rule, g)
        removed = _loss(name).line_search(y[keep], z[keep], ids[keep], 7, None, rule, g)
        np.testing.assert_allclose(weighted, removed, rtol=0 if exact else 1e-12, atol=0 if exact else 1e-14)
    np.testing.assert_allclose(_loss(name).init(y, w), _loss(name).init(y[keep]), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(_loss(name).value(y, z, w), _loss(name).value(y[keep], z[keep]), rtol=1e-12)


def test_weighted_value_does_not_overflow():
    loss = make_loss("exponential")
    y = np.ones(20_000)
    z = np.full(20_000, -1e4)  # every term saturates at exp(700)
    v = loss.value(y, z, np.full(20_000, 1e300))
    assert np.isfinite(v) and v == pytest.approx(np.exp(700.0), rel=1e-12)
