"""Monotone constraints (``monotonic_cst``, ``proxboost._monotone``): every prediction moves the
right way along a constrained feature, for every loss, algorithm and engine; the bounded leaf
line searches against independent minimisers; bad constraints refused in one line."""

import pickle

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from sklearn.base import clone

from proxboost import BoostingClassifier, BoostingRegressor
from proxboost.losses import make_loss

RNG = np.random.default_rng(0)
N = 300
X = RNG.normal(size=(N, 3))
# non-monotone in x0 (the sine) and x1 (the cosine), so that unconstrained fits move both ways
Y = X[:, 0] + np.sin(3 * X[:, 0]) + np.cos(2 * X[:, 1]) + 0.5 * RNG.standard_t(3, size=N)
LABELS = np.where(X[:, 0] - 0.5 * np.sin(3 * X[:, 0]) + 0.5 * RNG.normal(size=N) > 0, 1, -1)
W = RNG.integers(0, 4, size=N).astype(float)
SWEEP = np.linspace(-4.0, 4.0, 201)  # beyond the training rows on both sides
BASES = RNG.normal(size=(30, 3))
CLASSIFICATION = ("hinge", "logistic", "exponential")


def _fit(loss, algo="prox", engine="exact", cst=None, w=None, **kw):
    Est = BoostingClassifier if loss in CLASSIFICATION else BoostingRegressor
    est = Est(
        loss=loss,
        algo=algo,
        engine=engine,
        n_estimators=30,
        max_depth=3,
        learning_rate=0.3,
        random_state=0,
        monotonic_cst=cst,
        **kw,
    )
    return est.fit(X, LABELS if loss in CLASSIFICATION else Y, sample_weight=w)


def _raw(est, Z):
    return est.decision_function(Z) if hasattr(est, "decision_function") else est.predict(Z)


def _worst_step(est, feature, sign):
    """The most negative step of sign * prediction along ``feature`` over the sweep, from many
    random rows (0 or more: monotone)."""
    worst = 0.0
    for base in BASES:
        Z = np.tile(base, (len(SWEEP), 1))
        Z[:, feature] = SWEEP
        p = _raw(est, Z)
        assert np.all(np.isfinite(p))
        worst = min(worst, float(np.min(sign * np.diff(p))))
    return worst


@pytest.mark.parametrize("engine", ["exact", "hist", "sklearn"])
@pytest.mark.parametrize("loss", ["ls", "lad", "pinball", "hinge", "logistic", "exponential"])
def test_predictions_never_move_the_wrong_way(loss, engine):
    for algo, sign, w in [
        ("prox", 1, None),
        ("accelerated_prox", -1, W),
        ("residual_gradient", 1, W),
        ("gradient", -1, None),
    ]:
        cst = [sign, 0, 0]
        est = _fit(loss, algo, engine, cst, w)
        assert _worst_step(est, 0, sign) >= 0.0, (algo, sign)
        if "accelerated" in algo:  # staged: Nesterov's recursion, exact up to rounding only
            continue
        # the staged models too: every partial sum of trees is monotone
        Z = np.tile(BASES[0], (len(SWEEP), 1))
        Z[:, 0] = SWEEP
        stages = est.staged_decision_function(Z) if loss in CLASSIFICATION else None
        stages = stages if stages is not None else est.staged_predict(Z)
        assert all(np.min(sign * np.diff(s)) >= 0.0 for s in stages)


@pytest.mark.parametrize("engine", ["exact", "hist", "sklearn"])
@pytest.mark.parametrize("algo", ["prox", "gradient", "accelerated_prox"])
def test_several_quantiles_monotone_and_never_crossing(algo, engine):
    """Every level of a multi-level model is monotone, and the levels still never cross, also
    far outside the training rows."""
    for sign, w, taus in [(1, None, [0.05, 0.5, 0.95]), (-1, W, [0.1, 0.2, 0.3, 0.9])]:
        est = _fit("pinball", algo, engine, [sign, 0, 0], w, tau=taus)
        for base in BASES:
            Z = np.tile(base, (len(SWEEP), 1))
            Z[:, 0] = SWEEP
            P = est.predict(Z)
            assert np.min(sign * np.diff(P, axis=0)) >= 0.0
            assert np.min(np.diff(P, axis=1)) >= 0.0
        far = RNG.normal(scale=50.0, size=(500, 3))
        assert np.min(np.diff(est.predict(far), axis=1)) >= 0.0


@pytest.mark.parametrize("loss", ["lad", "hinge"])
def test_without_the_constraint_the_same_fits_move_both_ways(loss):
    """The data make the sweep fail without constraints (the test above can fail)."""
    assert _worst_step(_fit(loss), 0, 1) < 0.0
    assert _worst_step(_fit(loss), 0, -1) < 0.0


def test_zero_constraints_are_no_constraints():
    a, b = _fit("pinball", cst=None, tau=0.8), _fit("pinball", cst=[0, 0, 0], tau=0.8)
    np.testing.assert_array_equal(a.train_loss_, b.train_loss_)
    np.testing.assert_array_equal(a.predict(BASES), b.predict(BASES))


def test_unconstrained_features_keep_their_freedom():
    """Constraining x0 leaves x1 free: the fit still moves both ways along x1 (it would not if
    the bounds leaked into the splits on other features)."""
    est = _fit("lad", cst=[1, 0, 0])
    steps = []
    for base in BASES:
        Z = np.tile(base, (len(SWEEP), 1))
        Z[:, 1] = SWEEP
        steps.append(np.diff(est.predict(Z)))
    steps = np.concatenate(steps)
    assert steps.min() < 0.0 < steps.max()


def test_dict_by_feature_name_equals_the_list():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=["income", "age", "size"])
    a = BoostingRegressor(loss="lad", n_estimators=20, random_state=0, monotonic_cst=[1, 0, -1])
    b = BoostingRegressor(
        loss="lad", n_estimators=20, random_state=0, monotonic_cst={"income": 1, "size": -1}
    )
    np.testing.assert_array_equal(a.fit(X, Y).predict(X), b.fit(frame, Y).predict(frame))


@pytest.mark.parametrize(
    "cst, match",
    [
        ([1, 0], "has 2 values and X has 3 features"),
        ([1, 0, 2], "value 2 is not allowed"),
        ([True, 0, 0], "value True is not allowed"),
        ({"x0": 1}, "X has no feature names"),
    ],
)
def test_bad_constraints_are_refused_in_one_line(cst, match):
    with pytest.raises(ValueError, match=match) as info:
        BoostingRegressor(loss="lad", monotonic_cst=cst).fit(X, Y)
    assert "\n" not in str(info.value)


def test_unknown_feature_names_and_unsupported_settings_are_refused():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    with pytest.raises(ValueError, match="names features that X does not have: \\['z'\\]"):
        BoostingRegressor(loss="lad", monotonic_cst={"z": 1}).fit(frame, Y)
    with pytest.raises(ValueError, match="authors_float"):
        BoostingRegressor(loss="lad", tie_rule="authors_float", monotonic_cst=[1, 0, 0]).fit(X, Y)


def test_clone_pickle_warm_start_and_the_authors_rule():
    est = _fit("pinball", cst=[1, -1, 0], tau=0.3, tie_rule="authors")
    assert clone(est).get_params()["monotonic_cst"] == [1, -1, 0]
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict(BASES), est.predict(BASES))
    half = BoostingRegressor(
        loss="pinball",
        tau=0.3,
        tie_rule="authors",
        n_estimators=15,
        max_depth=3,
        learning_rate=0.3,
        random_state=0,
        monotonic_cst=[1, -1, 0],
        warm_start=True,
    ).fit(X, Y)
    half.set_params(n_estimators=30).fit(X, Y)
    np.testing.assert_array_equal(half.train_loss_, est.train_loss_)
    assert _worst_step(est, 0, 1) >= 0.0 and _worst_step(est, 1, -1) >= 0.0


# -- the bounded leaf line searches against independent minimisers ----------------------------
def _objective(loss, y, z, w):
    return lambda c: float(np.sum(w * loss.pointwise(y, z + c)))


def _slope(loss, y, z, w, c):
    """The derivative of the leaf's mean loss at c (central difference)."""
    f, h = _objective(loss, y, z, w / np.sum(w)), 1e-6
    return (f(c + h) - f(c - h)) / (2 * h)


@pytest.mark.parametrize("name", ["ls", "lad", "pinball", "hinge", "logistic", "exponential"])
@pytest.mark.parametrize("weighted", [False, True])
def test_bounded_line_search_minimises_within_the_bounds(name, weighted):
    rng = np.random.default_rng(1)
    loss = make_loss(name, tau=0.3) if name == "pinball" else make_loss(name)
    n, n_leaves = 400, 8
    leaf_ids = rng.integers(0, n_leaves, size=n)
    if name in CLASSIFICATION:
        y = np.where(rng.random(n) < 0.6, 1.0, -1.0)
        y[leaf_ids == 7] = 1.0  # one class only: no finite minimiser without an upper bound
    else:
        y = rng.normal(size=n)
    z = rng.normal(scale=0.5, size=n)
    w = rng.integers(1, 4, size=n).astype(float) if weighted else None
    lower = rng.normal(size=n_leaves) - 1.5
    upper = lower + rng.uniform(0.0, 2.0, size=n_leaves)
    lower[0], upper[1] = -np.inf, np.inf  # half-open intervals
    upper[7] = 0.5
    c = loss.bounded_line_search(y, z, leaf_ids, n_leaves, (lower, upper), w)
    assert np.all((c >= lower) & (c <= upper))
    free = loss.line_search(y, z, leaf_ids, n_leaves, w)  # the unbounded line search
    weights = np.ones(n) if w is None else w
    for leaf in range(n_leaves):
        rows = leaf_ids == leaf
        f = _objective(loss, y[rows], z[rows], weights[rows])
        if name in ("logistic", "exponential") and lower[leaf] < c[leaf] < upper[leaf]:
            # bounds that do not bind leave the leaf as without them: the Newton line search's
            # value (an approximation of the interior minimiser), or the exact interior root
            # when that value fell outside the bounds
            at_root = abs(_slope(loss, y[rows], z[rows], weights[rows], c[leaf])) < 1e-9
            assert c[leaf] == free[leaf] or at_root, leaf
            continue
        lo = lower[leaf] if np.isfinite(lower[leaf]) else c[leaf] - 20.0
        hi = upper[leaf] if np.isfinite(upper[leaf]) else c[leaf] + 20.0
        # the best of a bounded scalar minimiser and a fine grid (piecewise-linear losses: the
        # grid holds the breakpoints' neighbourhood) never beats the returned value
        best = minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12})
        grid = np.linspace(lo, hi, 4001)
        reference = min(best.fun, min(f(t) for t in grid))
        assert f(c[leaf]) <= reference + 1e-9 * max(1.0, abs(reference)), (leaf, c[leaf])
