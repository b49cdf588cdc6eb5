"""Monotone constraints (``monotonic_cst``, :mod:`proxboost._monotone`).

Oracles: the definition itself (a sweep of a constrained feature over a grid, the other
features fixed, never moves a prediction the wrong way: every loss, algorithm and engine, with
weights, every stage and every level of a multi-level model), while the same fits without
constraints do move the wrong way on these data; scikit-learn's ``DecisionTreeRegressor(
monotonic_cst=...)`` for the engines' trees; ``scipy.optimize.minimize_scalar(method="bounded")``
and brute force over breakpoints for the bounded line searches, a linear program
(``scipy.optimize.linprog``) for the joint bounded solve of several quantiles; repeated rows for
integer weights; constraints of zeros give the unconstrained fit bit for bit.
"""

import pickle
import re
import zlib

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog, minimize_scalar
from sklearn.base import clone
from sklearn.tree import DecisionTreeRegressor

from proxboost import BoostingClassifier, BoostingRegressor
from proxboost._monotone import leaf_bounds
from proxboost.boosting import ALGOS
from proxboost.engines import ExactEngine, HistEngine
from proxboost.experiments.plan.methods import estimator_options, make_estimator
from proxboost.losses import NEWTON_STEP_CAP, MultiQuantile, make_loss

REGRESSION = ("ls", "lad", "pinball", "quantiles")  # "quantiles": pinball at tau=[.1, .5, .9]
CLASSIFICATION = ("logistic", "exponential", "hinge")
CST = [1, -1, 0]  # x0 increasing, x1 decreasing, x2 free
GRID = np.linspace(-3.0, 3.0, 41)


def _seed(*key):
    return zlib.crc32(repr(key).encode())


@pytest.fixture(scope="module")
def data():
    """Rows whose target is not monotone in x0 (a sine on a trend) nor in x1, with integer
    weights (zeros included), and sweep lines: each row of ``base`` with one feature on GRID."""
    rng = np.random.default_rng(0)
    n = 240
    X = rng.normal(size=(n, 3))
    y = (
        X[:, 0]
        + 1.5 * np.sin(3 * X[:, 0])
        - 0.5 * X[:, 1]
        + np.cos(3 * X[:, 1])
        + np.cos(2 * X[:, 2])
        + (0.3 + np.abs(X[:, 2])) * rng.standard_t(3, size=n)
    )
    labels = np.where(y + 0.5 * rng.normal(size=n) > 0.4, "yes", "no")
    w = rng.integers(0, 4, size=n).astype(float)
    base = rng.normal(size=(12, 3))
    return X, y, labels, w, base


def _estimator(loss, **kw):
    if loss in CLASSIFICATION:
        return BoostingClassifier(loss=loss, **kw)
    if loss == "quantiles":
        return BoostingRegressor(loss="pinball", tau=[0.1, 0.5, 0.9], **kw)
    return BoostingRegressor(loss=loss, tau=0.3, **kw)


def _fit(loss, data, weights=True, **kw):
    X, y, labels, w, _ = data
    settings = dict(n_estimators=12, max_depth=3, learning_rate=0.3, random_state=0)
    est = _estimator(loss, **{**settings, **kw})
    target = labels if loss in CLASSIFICATION else y
    return est.fit(X, target, sample_weight=w if weights else None)


def _values(est, X):
    return est.decision_function(X) if isinstance(est, BoostingClassifier) else est.predict(X)


def _staged(est, X):
    if isinstance(est, BoostingClassifier):
        return est.staged_decision_function(X)
    return est.staged_predict(X)


def _worst_move(predictions, sign):
    """The largest move against ``sign`` along the sweep (axis 0): <= 0 when monotone."""
    return float(np.max(-sign * np.diff(predictions, axis=0), initial=0.0))


def _sweeps(base, feature):
    """(len(base) * len(GRID), p) rows: each base row with ``feature`` swept over GRID."""
    rows = np.repeat(base, len(GRID), axis=0)
    rows[:, feature] = np.tile(GRID, len(base))
    return rows


def _violation(est, base, staged=False):
    """The largest wrong-way move of any prediction (every level) along any sweep of a
    constrained feature of CST: of ``predict`` (a sum of monotone trees with positive weights:
    exactly monotone in floating point), and with ``staged`` of every stage too — those of the
    accelerated algorithms follow Nesterov's recursion, whose differences (1 + alpha) F_t -
    alpha F_t-1 round: a move of a few ulps of the predictions is not counted there."""
    worst = 0.0
    for feature, sign in ((0, 1), (1, -1)):
        X = _sweeps(base, feature)
        P = _values(est, X)
        worst = max(worst, _worst_move(np.moveaxis(_lines(P, base), 1, 0), sign))
        if not staged:
            continue
        for P in _staged(est, X):
            move = _worst_move(np.moveaxis(_lines(P, base), 1, 0), sign)
            if ALGOS[est.algo].accelerated:
                move = max(move - 64 * np.finfo(float).eps * np.max(np.abs(P)), 0.0)
            worst = max(worst, move)
    return worst


def _lines(P, base):
    """Predictions of ``_sweeps(base, feature)`` as (len(base), len(GRID), levels...)."""
    return P.reshape((len(base), len(GRID)) + P.shape[1:])


# ---------------------------------------------------------------------------------------------
# The key property: sweeps never move a prediction the wrong way
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("algo", list(ALGOS))
@pytest.mark.parametrize("loss", REGRESSION + CLASSIFICATION)
@pytest.mark.grid
def test_sweeps_never_move_the_wrong_way(loss, algo, data):
    """Every loss and algorithm (exact engine), with weights, every stage and every level; the
    same fit without constraints moves the wrong way on these data (the test can fail)."""
    base = data[4]
    est = _fit(loss, data, algo=algo, monotonic_cst=CST)
    assert _violation(est, base, staged=True) == 0.0
    if loss == "quantiles":  # the levels never cross, along the sweeps and far from the data
        far = np.random.default_rng(1).normal(scale=50.0, size=(500, 3))
        for X in (_sweeps(base, 0), _sweeps(base, 1), far):
            assert np.all(np.diff(est.predict(X), axis=1) >= 0)
    assert _violation(_fit(loss, data, algo=algo), base) > 0.0


@pytest.mark.parametrize("engine", ["exact", "hist"])
@pytest.mark.parametrize("algo", [a for a in ALGOS if ALGOS[a].accelerated])
@pytest.mark.grid
def test_staged_accelerated_predictions_on_these_data_never_round_the_wrong_way(algo, engine, data):
    """docs/quantiles.md ("Rounding and stages"): ``_violation`` allows a staged prediction of
    an accelerated algorithm 64 ulps of the stage's largest |prediction| against the
    constraint; on these fits (every loss) the measured move is none at all, without tolerance."""
    base = data[4]
    for loss in REGRESSION + CLASSIFICATION:
        est = _fit(loss, data, algo=algo, engine=engine, monotonic_cst=CST)
        for feature, sign in ((0, 1), (1, -1)):
            X = _sweeps(base, feature)
            for P in _staged(est, X):
                assert _worst_move(np.moveaxis(_lines(P, base), 1, 0), sign) == 0.0, loss


@pytest.mark.parametrize("engine", ["hist", "sklearn"])
@pytest.mark.parametrize("algo", ["prox", "accelerated_gradient"])
@pytest.mark.parametrize("loss", REGRESSION + CLASSIFICATION)
def test_sweeps_with_every_engine(loss, algo, engine, data):
    est = _fit(loss, data, algo=algo, engine=engine, monotonic_cst=CST)
    assert _violation(est, data[4], staged=True) == 0.0


@pytest.fixture(scope="module")
def missing_data(data):
    """``data`` with 20 % of every feature missing, the missing rows' targets moved beyond the
    top of the constraint in x0 (up) and x1 (down) (``beyond``) or beyond its bottom
    (``below``), and sweep lines of rows missing one of the features."""
    X, y, labels, w, base = data
    rng = np.random.default_rng(_seed("missing"))
    miss = rng.random(X.shape) < 0.2
    Xm = np.where(miss, np.nan, X)
    base = base.copy()
    base[::3, 2] = np.nan
    base[1::3, 1] = np.nan
    base[2::3, 0] = np.nan
    out = {}
    for name, shift in (("beyond", 4.0), ("below", -4.0)):
        ym = y + shift * miss[:, 0] - 0.75 * shift * miss[:, 1]
        out[name] = (Xm, ym, np.where(ym > 0.4, "yes", "no"), w, base)
    return out


@pytest.mark.parametrize("engine", ["exact", "hist", "sklearn"])
@pytest.mark.parametrize("loss", REGRESSION + CLASSIFICATION)
@pytest.mark.grid
def test_missing_values_are_unconstrained(loss, engine, missing_data):
    """Missing values (NaN) in every feature, fitted and predicted. Rows missing another
    feature: their sweeps never move the wrong way. A row missing the swept feature x_j itself
    has no place on its axis: at each split on x_j it goes with one child, whose value is
    ordered against its sibling as if the missing value lay on that side, so it predicts at
    least what the row predicts at x_j below every threshold (+1; at most for -1) — and, where a
    split sends the missing rows alone right (scikit-learn's threshold +inf), possibly more than
    at any value of x_j: on data whose missing rows lie beyond the top, some do."""
    beyond = 0.0
    for name, data in missing_data.items():
        base = data[4]
        est = _fit(loss, data, algo="prox", engine=engine, monotonic_cst=CST)
        for feature, sign in ((0, 1), (1, -1)):
            known = base[~np.isnan(base[:, feature])]
            P = _values(est, _sweeps(known, feature))
            assert _worst_move(np.moveaxis(_lines(P, known), 1, 0), sign) == 0.0
            at = {}
            for end, value in (("missing", np.nan), ("lowest", -1e30), ("highest", 1e30)):
                rows = base.copy()
                rows[:, feature] = value
                at[end] = _values(est, rows)
            assert np.all(sign * (at["missing"] - at["lowest"]) >= 0.0)
            if name == "beyond":
                beyond = max(beyond, float(np.max(sign * (at["missing"] - at["highest"]))))
    assert beyond > 0.0


def test_constrained_fit_is_not_the_unconstrained_one(data):
    """The constraints act (the fit differs) and cost training loss, not the other way round."""
    free = _fit("lad", data, algo="prox")
    bound = _fit("lad", data, algo="prox", monotonic_cst=CST)
    assert not np.array_equal(free.predict(data[0]), bound.predict(data[0]))
    assert bound.train_loss_[-1] > free.train_loss_[-1]
    assert bound.train_loss_[-1] < bound.train_loss_[0]  # it still learns


def test_unconstrained_features_keep_their_freedom(data):
    """Constraining x0 and x1 leaves x2 free: the fit still moves both ways along x2 (it would
    not if the bounds leaked into the other features' splits)."""
    est = _fit("lad", data, monotonic_cst=CST)
    steps = np.diff(_lines(est.predict(_sweeps(data[4], 2)), data[4]), axis=1)
    assert steps.min() < 0.0 < steps.max()


def test_decreasing_in_the_decision_function_means_towards_classes_0(data):
    """Classifier: +1 makes the decision function (towards ``classes_[1]``) non-decreasing, so
    P(classes_[1]) too; -1 the other way."""
    est = _fit("logistic", data, algo="prox", monotonic_cst=CST)
    X = _sweeps(data[4], 0)
    p1 = est.predict_proba(X)[:, 1].reshape(len(data[4]), len(GRID))
    assert np.all(np.diff(p1, axis=1) >= 0)
    X = _sweeps(data[4], 1)
    p1 = est.predict_proba(X)[:, 1].reshape(len(data[4]), len(GRID))
    assert np.all(np.diff(p1, axis=1) <= 0)


# ---------------------------------------------------------------------------------------------
# Defaults and zeros change nothing; the option enters identities only when set
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ["exact", "hist", "sklearn"])
@pytest.mark.parametrize("loss", REGRESSION + CLASSIFICATION)
@pytest.mark.grid
def test_zeros_are_the_unconstrained_fit_bit_for_bit(loss, engine, data):
    """Every algorithm family and both tie rules, weighted or not, warm-started once."""
    settings = [
        ("prox", "midpoint", True),
        ("accelerated_prox", "authors", False),
        ("residual_gradient", "authors", True),
        ("gradient", "midpoint", False),
    ]
    for algo, rule, weights in settings:
        kw = dict(engine=engine, algo=algo, tie_rule=rule, weights=weights)
        none = _fit(loss, data, **kw)
        zeros = _fit(loss, data, monotonic_cst=[0, 0, 0], **kw)
        for a, b in zip(none.leaf_values_, zeros.leaf_values_):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(none.train_loss_, zeros.train_loss_)
        np.testing.assert_array_equal(_values(none, data[4]), _values(zeros, data[4]))
        X, y, labels, w, _ = data
        for est in (none, zeros):  # warm start: 6 more trees on the same data
            est.set_params(warm_start=True, n_estimators=18)
            est.fit(
                X, labels if loss in CLASSIFICATION else y, sample_weight=w if weights else None
            )
        assert len(none.estimators_) == len(zeros.estimators_) == 18
        np.testing.assert_array_equal(_values(none, data[4]), _values(zeros, data[4]))


def test_option_enters_identities_only_when_set():
    loss = make_loss("pinball", tau=0.9)
    base = estimator_options(make_estimator(loss, "prox"))
    assert "monotonic_cst" not in base
    assert estimator_options(make_estimator(loss, "prox", monotonic_cst=[1, 0]))[
        "monotonic_cst"
    ] == [1, 0]


# ---------------------------------------------------------------------------------------------
# The scikit-learn conventions: feature names, weights, pickling, clone, warm start, stopping
# ---------------------------------------------------------------------------------------------
def test_dict_by_feature_name_is_the_list(data):
    X, y, _, w, base = data
    frame = pd.DataFrame(X, columns=["size", "age", "noise"])
    settings = dict(loss="lad", n_estimators=8, random_state=0)
    by_name = BoostingRegressor(monotonic_cst={"size": 1, "age": -1}, **settings)
    by_name.fit(frame, y, sample_weight=w)
    listed = BoostingRegressor(monotonic_cst=CST, **settings).fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(
        by_name.predict(pd.DataFrame(base, columns=frame.columns)), listed.predict(base)
    )


@pytest.mark.parametrize("loss", ["pinball", "logistic"])
def test_integer_weights_are_repeated_rows(loss, data):
    X, y, labels, w, _ = data
    target = labels if loss in CLASSIFICATION else y
    rep = np.repeat(np.arange(len(y)), w.astype(int))
    settings = dict(n_estimators=8, max_depth=3, random_state=0, monotonic_cst=CST)
    weighted = _estimator(loss, **settings).fit(X, target, sample_weight=w)
    repeated = _estimator(loss, **settings).fit(X[rep], target[rep])
    np.testing.assert_allclose(weighted.train_loss_, repeated.train_loss_, rtol=1e-9)
    np.testing.assert_allclose(_values(weighted, X), _values(repeated, X), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("tie_rule", ["midpoint", "authors"])
def test_pickle_clone_params_warm_start_and_early_stopping(tie_rule, data):
    X, y, _, w, base = data
    est = BoostingRegressor(
        loss="pinball",
        tau=[0.2, 0.8],
        n_estimators=6,
        random_state=0,
        tie_rule=tie_rule,
        monotonic_cst=CST,
    )
    assert clone(est).get_params()["monotonic_cst"] == CST
    est.set_params(monotonic_cst=[-1, 0, 1]).set_params(monotonic_cst=CST)
    est.fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(est)).predict(base), est.predict(base))
    # warm start: 6 then 12 trees is the fit of 12 at once, bit for bit
    warm = clone(est).set_params(warm_start=True).fit(X, y, sample_weight=w)
    warm.set_params(n_estimators=12).fit(X, y, sample_weight=w)
    once = clone(est).set_params(n_estimators=12).fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(warm.predict(base), once.predict(base))
    with pytest.raises(ValueError, match="warm_start=True cannot change monotonic_cst"):
        warm.set_params(n_estimators=14, monotonic_cst=[1, 0, 0]).fit(X, y, sample_weight=w)
    # early stopping and an evaluation set
    stop = _fit(
        "lad", data, monotonic_cst=CST, n_estimators=200, n_iter_no_change=3, learning_rate=0.5
    )
    assert stop.n_iter_ < 200
    assert _violation(stop, base, staged=True) == 0.0
    ev = _fit("lad", data, monotonic_cst=CST, n_estimators=5)
    evaluated = _fit("lad", data, monotonic_cst=CST, n_estimators=5)
    evaluated.fit(X, y, sample_weight=w, eval_set=(X[:50], y[:50]))
    np.testing.assert_array_equal(evaluated.predict(base), ev.predict(base))
    assert evaluated.eval_loss_.shape == (6,)


# ---------------------------------------------------------------------------------------------
# Refused before any compute, in one line
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "value, message",
    [
        ([1, 2, 0], "monotonic_cst=[1, 2, 0] is not allowed"),
        ([1, 0], "monotonic_cst has 2 values but X has 3 features"),
        ([[1, 0, 0]], "is not allowed"),
        ("increasing", "is not allowed"),
        ([True, False, False], "is not allowed"),
        ({"a": 1}, "monotonic_cst is a dict of feature names but X has none"),
        ({0: 1}, "is not allowed"),
        ({"a": 0.5}, "is not allowed"),
    ],
)
def test_bad_constraints_are_refused_in_one_line(value, message, data, monkeypatch):
    X, y = data[0], data[1]
    monkeypatch.setattr(ExactEngine, "prepare", _no_compute)
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        BoostingRegressor(monotonic_cst=value, n_estimators=2).fit(X, y)
    assert "\n" not in str(info.value)


def _no_compute(*args, **kwargs):
    raise AssertionError("the fit started before refusing the constraints")


def test_unknown_feature_names_and_authors_float_are_refused(data, monkeypatch):
    X, y, labels = data[0], data[1], data[2]
    monkeypatch.setattr(ExactEngine, "prepare", _no_compute)
    frame = pd.DataFrame(X, columns=["size", "age", "noise"])
    with pytest.raises(ValueError, match=r"names features X does not have: \['weight'\]"):
        BoostingRegressor(monotonic_cst={"size": 1, "weight": -1}).fit(frame, y)
    with pytest.raises(ValueError, match='tie_rule="authors_float"'):
        BoostingClassifier(loss="hinge", tie_rule="authors_float", monotonic_cst=CST).fit(X, labels)


# ---------------------------------------------------------------------------------------------
# The engines grow scikit-learn's constrained trees
# ---------------------------------------------------------------------------------------------
def _discrete_X(rng, n):
    """Features with < 256 distinct values (the hist engine's candidates are then
    scikit-learn's)."""
    return np.column_stack(
        [
            rng.randint(0, 2, n),
            rng.randint(0, 7, n),
            rng.randint(0, 200, n) * 0.37,
            np.where(rng.rand(n) < 0.7, 0.0, rng.randint(1, 50, n)),
            np.round(rng.normal(size=n), 1),
        ]
    ).astype(np.float64)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("depth", [2, 5, 8])
def test_engines_grow_sklearns_constrained_trees(depth, weighted):
    """Same partition as ``DecisionTreeRegressor(monotonic_cst=...)`` (continuous target: no
    ties), on discrete features (exact and hist) and continuous ones (exact)."""
    rng = np.random.RandomState(_seed(depth, weighted))
    n = 1200
    cst = np.array([1, -1, 1, 0, -1])
    for X in (_discrete_X(rng, n), rng.normal(size=(n, 5))):
        y = np.sin(X[:, 2]) + 0.3 * X[:, 1] - X[:, 0] + X[:, 4] + rng.standard_t(3, size=n)
        w = rng.exponential(size=n) if weighted else None
        X32 = X.astype(np.float32)
        sk = DecisionTreeRegressor(max_depth=depth, monotonic_cst=cst, random_state=3)
        sk_ids = sk.fit(X32, y, sample_weight=w).apply(X32)
        if depth >= 5:  # the constraints act: the free tree's partition is another one
            free = DecisionTreeRegressor(max_depth=depth, random_state=3)
            free_ids = free.fit(X32, y, sample_weight=w).apply(X32)
            assert len(set(zip(free_ids.tolist(), sk_ids.tolist()))) > len(set(sk_ids.tolist()))
        engines = [ExactEngine()] + [HistEngine()] * (len(np.unique(X[:, 4])) < 256)
        for engine in engines:
            Xp = engine.prepare(X, fit=True, sample_weight=w)
            rs = np.random.RandomState(3)
            ids, tree = engine.grow(Xp, y, depth, rs, sample_weight=w, monotonic_cst=cst)
            assert tree.n_leaves == sk.get_n_leaves()
            assert len(set(zip(ids.tolist(), sk_ids.tolist()))) == tree.n_leaves


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("depth", [2, 5, 8])
def test_engines_grow_sklearns_constrained_trees_with_missing_values(depth, weighted):
    """15 % of every feature missing, the missing rows' targets shifted up in an increasing
    feature and down in a decreasing one and in an increasing one (so that sending them alone
    right is admitted for some and refused for others): the same partition as scikit-learn's
    ``DecisionTreeRegressor(monotonic_cst=...)``, where the missing rows count in the child they
    go to, on discrete features (exact and hist) and continuous ones (exact)."""
    rng = np.random.RandomState(_seed("nan", depth, weighted))
    n = 1200
    cst = np.array([1, -1, 1, 0, -1])
    for X in (_discrete_X(rng, n), rng.normal(size=(n, 5))):
        miss = rng.rand(n, 5) < 0.15
        y = np.sin(X[:, 2]) + 0.3 * X[:, 1] - X[:, 0] + X[:, 4] + rng.standard_t(3, size=n)
        y += 3.0 * miss[:, 0] - 2.0 * miss[:, 1] - 2.5 * miss[:, 2]
        X[miss] = np.nan
        w = rng.exponential(size=n) if weighted else None
        X32 = X.astype(np.float32)
        sk = DecisionTreeRegressor(max_depth=depth, monotonic_cst=cst, random_state=3)
        sk_ids = sk.fit(X32, y, sample_weight=w).apply(X32)
        free = DecisionTreeRegressor(max_depth=depth, random_state=3)
        free_ids = free.fit(X32, y, sample_weight=w).apply(X32)
        assert len(set(zip(free_ids.tolist(), sk_ids.tolist()))) > len(set(sk_ids.tolist()))
        engines = [ExactEngine()] + [HistEngine()] * (len(np.unique(X[:, 4])) < 256)
        for engine in engines:
            Xp = engine.prepare(X, fit=True, sample_weight=w)
            rs = np.random.RandomState(3)
            ids, tree = engine.grow(Xp, y, depth, rs, sample_weight=w, monotonic_cst=cst)
            assert tree.n_leaves == sk.get_n_leaves()
            assert len(set(zip(ids.tolist(), sk_ids.tolist()))) == tree.n_leaves


# ---------------------------------------------------------------------------------------------
# The bounds pass
# ---------------------------------------------------------------------------------------------
class _Tree:
    """A depth-2 tree: root splits x0 (nodes 1, 4), node 1 splits x1 (leaves 0, 1 at nodes 2,
    3), node 4 splits x0 again (leaves 2, 3 at nodes 5, 6)."""

    feature = np.array([0, 1, -1, -1, 0, -1, -1])
    left = np.array([1, 2, -1, -1, 5, -1, -1])
    right = np.array([4, 3, -1, -1, 6, -1, -1])
    leaf_of_node = np.array([-1, -1, 0, 1, -1, 2, 3])


def test_children_bounded_at_their_midpoint_or_at_the_nodes_value():
    """Least squares on five rows (two in leaf 0). x0 increasing: the root's children (means 2
    and 6.5) are ordered, so they are bounded at their midpoint 4.25; under node 4 the leaves'
    bounded values 9 and 4.25 come in the wrong order, so both are bounded at node 4's own value
    6.5 (the optimum of the two leaves, which pruning the split would give); x1 is free, its
    split's leaves inherit. x0 decreasing: the root's children come in the wrong order, so they
    are bounded at the root's value 19 / 5, not at the midpoint 4.25."""
    y = np.array([1.0, 1.0, 4.0, 9.0, 4.0])
    leaf_ids = np.array([0, 0, 1, 2, 3])
    loss = make_loss("ls")

    def solve(groups, n_groups, lower, upper):
        rows = groups >= 0
        return loss.bounded_line_search(
            y[rows], 0 * y[rows], groups[rows], n_groups, (lower, upper)
        )

    def values(lower, upper):
        return loss.bounded_line_search(y, 0 * y, leaf_ids, 4, (lower, upper))

    lower, upper = leaf_bounds(_Tree, leaf_ids, np.array([1, 0], np.int8), solve)
    np.testing.assert_array_equal(lower, [-np.inf, -np.inf, 4.25, 6.5])
    np.testing.assert_array_equal(upper, [4.25, 4.25, 6.5, np.inf])
    np.testing.assert_array_equal(values(lower, upper), [1.0, 4.0, 6.5, 6.5])
    lower, upper = leaf_bounds(_Tree, leaf_ids, np.array([-1, 0], np.int8), solve)
    root = 19.0 / 5.0
    np.testing.assert_array_equal(lower, [root, root, root, -np.inf])
    np.testing.assert_array_equal(upper, [np.inf, np.inf, root, root])
    np.testing.assert_array_equal(values(lower, upper), [root, 4.0, root, root])


# ---------------------------------------------------------------------------------------------
# Bounded line searches against scipy and brute force
# ---------------------------------------------------------------------------------------------
def _random_bounds(rng, n_leaves):
    lower = rng.normal(size=n_leaves) - rng.uniform(0, 1.5)
    upper = lower + rng.exponential(size=n_leaves)
    lower[0], upper[1] = -np.inf, np.inf  # one-sided leaves
    lower[2], upper[2] = -np.inf, np.inf  # a free leaf
    return lower, upper


@pytest.mark.parametrize("name", ["ls", "lad", "pinball", "hinge", "logistic", "exponential"])
@pytest.mark.slow
def test_bounded_line_search_is_the_bounded_minimiser(name):
    """On random leaves, weighted or not: the value lies in its bounds and its objective is the
    bounded minimum (scipy's bounded scalar minimiser and a fine grid); a free leaf keeps the
    unbounded line search bit for bit. An infinite side of a Newton loss's leaf stands for the
    Newton line search's reach, newton_steps x NEWTON_STEP_CAP."""
    rng = np.random.default_rng(_seed("bounded", name))
    loss = make_loss(name, tau=0.3, beta=0.7, newton_steps=2)
    reach = 2 * NEWTON_STEP_CAP if name in ("logistic", "exponential") else np.inf
    for trial in range(24):
        n, n_leaves = 30, 6
        ids = rng.integers(0, n_leaves, n)
        classify = loss.task == "classification"
        y = rng.choice([-1.0, 1.0], n) if classify else rng.normal(size=n)
        z = rng.normal(size=n)
        w = rng.integers(0, 4, n).astype(float) if trial % 2 else None
        lower, upper = _random_bounds(rng, n_leaves)
        c = loss.bounded_line_search(y, z, ids, n_leaves, (lower, upper), w)
        assert np.all((c >= lower) & (c <= upper))
        free = loss.line_search(y, z, ids, n_leaves, w)
        assert c[2] == free[2]
        for leaf in np.flatnonzero(np.isfinite(lower) | np.isfinite(upper)):
            r = ids == leaf
            wr = np.ones(r.sum()) if w is None else w[r]
            if wr.sum() == 0:
                continue

            def objective(v, yr=y[r], zr=z[r], wr=wr):
                return float(np.sum(wr * loss.pointwise(yr, zr + v)))

            lo = max(lower[leaf], min(-reach, upper[leaf]), -50.0)
            hi = min(upper[leaf], max(reach, lower[leaf]), 50.0)
            found = minimize_scalar(objective, bounds=(lo, hi), method="bounded")
            grid = min(objective(v) for v in np.linspace(lo, hi, 1001))
            best = min(found.fun, grid, objective(lo), objective(hi))
            assert objective(c[leaf]) <= best + 1e-12 * (1.0 + abs(best))


@pytest.mark.parametrize(
    "name, beta", [("logistic", 1.0), ("exponential", 1.0), ("exponential", 25.0)]
)
def test_bounded_margin_minimiser_meets_its_optimality_conditions_when_saturated(name, beta):
    """Margins far past the exponent clip (|beta m| up to ~2000, where the clipped objective is
    flat and scipy's minimiser is no oracle) and a leaf of 20,000 saturated rows (a plain sum of
    its e^700 derivatives overflows): every value is finite, in its bounds, and satisfies the
    optimality conditions of the leaf's (clipped) increasing derivative F' — F'(lo) >= 0 at the
    lower bound, F'(hi) <= 0 at the upper one, a sign change of F' at an interior value — up
    to the rounding of F' (relative to the sum of |terms|, which cancel)."""
    rng = np.random.default_rng(_seed("saturated", name, beta))
    loss = make_loss(name, beta=beta)

    def slope(v, y, z, w):  # F'(v) / sum |terms|
        terms = w / w.sum() * y * loss._dphi(y * (z + v))
        return np.sum(terms) / np.sum(np.abs(terms))

    for trial in range(30):
        n, n_leaves = (20000, 1) if trial == 0 else (60, 5)
        ids = rng.integers(0, n_leaves, n)
        y = rng.choice([-1.0, 1.0], n)
        z = rng.normal(size=n) * (750.0 / beta if trial == 0 else [1.0, 30.0, 900.0][trial % 3])
        w = rng.integers(0, 4, n).astype(float) if trial % 2 else None
        lower = 3.0 * rng.normal(size=n_leaves) - 1.0
        upper = lower + 3.0 * rng.exponential(size=n_leaves)
        c = loss.bounded_line_search(y, z, ids, n_leaves, (lower, upper), w)
        assert np.all(np.isfinite(c)) and np.all((c >= lower) & (c <= upper))
        for leaf in range(n_leaves):
            r = ids == leaf
            wr = np.ones(r.sum()) if w is None else w[r]
            if wr.sum() == 0:
                continue
            args = (y[r], z[r], wr)
            noise = 1e-13
            if c[leaf] == lower[leaf]:
                assert slope(c[leaf], *args) >= -noise
            elif c[leaf] == upper[leaf]:
                assert slope(c[leaf], *args) <= noise
            else:
                step = 4 * np.spacing(abs(c[leaf]))
                assert abs(slope(c[leaf], *args)) <= noise or (
                    slope(c[leaf] - step, *args) <= 0.0 <= slope(c[leaf] + step, *args)
                )
    # Two saturated positives against three negatives at e^(700 + beta c): F' = 0 at
    # e^(beta c) = 2/3, where the curvature beta^2 e^700 of the first points overflows
    y, z = np.array([1.0, 1.0, -1.0, -1.0, -1.0]), np.array([-1.0, -1.0, 1.0, 1.0, 1.0])
    c = make_loss("exponential", beta=200.0).bounded_line_search(
        y, 3.5 * z, np.zeros(5, np.intp), 1, ([-1.0], [3.0])
    )
    np.testing.assert_allclose(c, np.log(2.0 / 3.0) / 200.0, rtol=1e-12)
    # 20,000 saturated positives then 40,000 saturated negatives (every margin -1000): F' =
    # beta e^700 / 3 > 0 everywhere, so the lower bound; summed unscaled in this order, F' would
    # overflow to -inf on the positives and stay there (the upper bound)
    y = np.repeat([1.0, -1.0], [20000, 40000])
    c = make_loss("exponential").bounded_line_search(
        y, -1000.0 * y, np.zeros(len(y), np.intp), 1, ([-1.0], [3.0])
    )
    assert c[0] == -1.0


def _minimisers(values, weights, tau, lower, upper):
    """Brute force: the leaf's minimisers on [lower, upper] of sum w rho_tau(values - c), from
    the objective at every breakpoint and bound (exact sums: integer data, tau a dyadic)."""
    points = np.unique(np.clip(np.concatenate([values, [lower, upper]]), lower, upper))
    f = np.array(
        [np.sum(weights * np.maximum(tau * (values - c), (tau - 1) * (values - c))) for c in points]
    )
    best = points[f == f.min()]
    return best.min(), best.max()


@pytest.mark.parametrize("rule", ["midpoint", "authors"])
def test_bounded_ties_take_the_rule_on_the_minimisers_inside(rule):
    """Integer data: the minimisers form intervals. The bounded value is the tie rule applied
    to (minimisers inside the bounds) — 0 if it lies there (midpoint), else the midpoint; the
    end of smallest multiplier (authors) — or the nearest bound when they miss the bounds."""
    rng = np.random.default_rng(_seed("ties", rule))
    loss = make_loss("pinball", tau=0.25)
    for trial in range(300):
        n = int(rng.integers(1, 9))
        u = rng.integers(-4, 5, n).astype(float)
        w = rng.integers(1, 3, n).astype(float) if trial % 2 else np.ones(n)
        lower = float(rng.integers(-5, 3)) + rng.choice([0.0, 0.5])
        upper = lower + float(rng.integers(0, 5))
        g = float(rng.choice([-1.0, 1.0]))
        got = loss.bounded_line_search(
            u,
            np.zeros(n),
            np.zeros(n, np.intp),
            1,
            ([lower], [upper]),
            None if trial % 2 == 0 else w,
            rule,
            [g],
        )[0]
        a, b = _minimisers(u, w, 0.25, lower, upper)
        if rule == "authors":
            expected = a if g > 0 else b
        else:
            expected = 0.0 if a <= 0.0 <= b else 0.5 * (a + b)
        assert got == expected, (u, w, lower, upper, got, (a, b))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.grid
def test_several_quantiles_bounded_solve_is_the_linear_programs_optimum(weighted):
    """K levels of one leaf under gaps c_k - c_k-1 >= b_k (b of either sign) and bounds whose
    rows satisfy the gaps themselves (as the bounds pass makes them): the joint solve meets
    both and its objective is the linear program's minimum."""
    rng = np.random.default_rng(_seed("lp", weighted))
    for _ in range(150):
        K, m = int(rng.integers(2, 5)), int(rng.integers(1, 7))
        taus = np.sort(rng.choice(np.arange(1, 20) / 20, K, replace=False))
        y, H = rng.normal(size=m), rng.normal(size=(m, K))
        w = rng.integers(1, 4, size=m).astype(float) if weighted else np.ones(m)
        b = 0.5 * rng.normal(size=K - 1)
        shifts = np.concatenate([[0.0], np.cumsum(b)])
        low = np.sort(rng.normal(size=K)) - 0.5
        lower = low + shifts
        upper = np.maximum.accumulate(low + rng.uniform(0, 2, K)) + shifts
        c = MultiQuantile(taus).bounded_line_search(
            y,
            H,
            np.zeros(m, np.intp),
            1,
            (lower[None], upper[None]),
            w if weighted else None,
            "midpoint",
            None,
            b,
        )[0]
        assert np.all(np.diff(c) >= b - 1e-12)
        assert np.all((c >= lower) & (c <= upper))  # exactly: a leaf at a bound meets its sibling
        U = y[:, None] - H
        objective = sum(
            np.sum(w * np.maximum(t * (U[:, k] - c[k]), (t - 1) * (U[:, k] - c[k])))
            for k, t in enumerate(taus)
        )
        assert objective <= _lp_minimum(U, w, taus, b, lower, upper) + 1e-9


@pytest.mark.slow
def test_several_quantiles_bounded_solve_stays_exactly_in_its_bounds():
    """Bounds of no particular form (as the bounds pass makes them: midpoints), gaps b of
    either sign, some upper bounds infinite: every value lies in its bounds exactly — the
    pooled solve works in shifted variables, and a value rounded one ulp past a bound would put
    the leaf in the wrong order against a sibling sitting at that bound."""
    rng = np.random.default_rng(_seed("exact bounds"))
    for _ in range(2000):
        K, m = int(rng.integers(2, 5)), int(rng.integers(1, 9))
        taus = np.sort(rng.choice(np.arange(1, 20) / 20, K, replace=False))
        y, H = rng.normal(size=m), 2.0 * rng.normal(size=(m, K))
        b = rng.normal(size=K - 1)
        lower = np.cumsum(np.concatenate([[rng.normal()], b + rng.exponential(size=K - 1)]))
        upper = np.where(rng.random(K) < 0.3, np.inf, lower + 2.0 * rng.exponential(size=K))
        for k in range(1, K):  # the upper rows satisfy the gaps too
            upper[k] = max(upper[k], upper[k - 1] + b[k - 1])
        c = MultiQuantile(taus).bounded_line_search(
            y, H, np.zeros(m, np.intp), 1, (lower[None], upper[None]), None, "midpoint", None, b
        )[0]
        assert np.all((c >= lower) & (c <= upper)), (c, lower, upper)


def _lp_minimum(U, w, taus, b, lower, upper):
    """min sum_k sum_i w_i rho_tau_k(U_ik - c_k) s.t. c_k - c_k-1 >= b_k, lower <= c <= upper:
    variables c (K), then positive and negative parts of the residuals."""
    m, K = U.shape
    n_var = K + 2 * m * K
    cost = np.zeros(n_var)
    A_eq, b_eq = np.zeros((m * K, n_var)), np.zeros(m * K)
    for k in range(K):
        for i in range(m):
            row = k * m + i
            plus, minus = K + row, K + m * K + row
            cost[plus], cost[minus] = w[i] * taus[k], w[i] * (1 - taus[k])
            A_eq[row, [k, plus, minus]] = [1.0, 1.0, -1.0]
            b_eq[row] = U[i, k]
    A_ub = np.zeros((K - 1, n_var))
    for k in range(1, K):
        A_ub[k - 1, [k - 1, k]] = [1.0, -1.0]
    bounds = [(lo, hi) for lo, hi in zip(lower, upper)] + [(0, None)] * (2 * m * K)
    res = linprog(cost, A_ub=A_ub, b_ub=-b, A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs")
    assert res.status == 0
    return res.fun
