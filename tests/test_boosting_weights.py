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
    y = (
        rng.choice([-1.0, 1.0], size=n)
        if LOSSES[name].task == "classification"
        else rng.normal(size=n)
    )
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
    np.testing.assert_allclose(
        _loss(name).init(y, w), _loss(name).init(y[rep]), rtol=1e-12, atol=1e-14
    )
    np.testing.assert_allclose(
        _loss(name).value(y, z, w), _loss(name).value(y[rep], z[rep]), rtol=1e-12
    )


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
        np.testing.assert_allclose(
            weighted, removed, rtol=0 if exact else 1e-12, atol=0 if exact else 1e-14
        )
    np.testing.assert_allclose(
        _loss(name).init(y, w), _loss(name).init(y[keep]), rtol=1e-12, atol=1e-14
    )
    np.testing.assert_allclose(
        _loss(name).value(y, z, w), _loss(name).value(y[keep], z[keep]), rtol=1e-12
    )


def test_weighted_value_does_not_overflow():
    loss = make_loss("exponential")
    y = np.ones(20_000)
    z = np.full(20_000, -1e4)  # every term saturates at exp(700)
    v = loss.value(y, z, np.full(20_000, 1e300))
    assert np.isfinite(v) and v == pytest.approx(np.exp(700.0), rel=1e-12)


# ---------------------------------------------------------------------------------------------
# Whole fits: every loss, algorithm and engine
# ---------------------------------------------------------------------------------------------
# Design: one continuous feature (two features can separate the same training rows: which one a
# tree takes then decides where new points fall), targets on a 1/8 grid, lambda = 1/2, tau = 1/4
# and nu = 1, so that the trees' sums of lad / pinball / hinge targets are exact in floating
# point. Some exactly tied splits remain (the residual variants' targets repeat values): weighted
# sums and repeated rows round them differently and may pick different, equally good trees. The
# oracle then checks, in exact arithmetic, that the first two trees that differ fit the same
# target equally well (a tie, not a weighting error); up to that tree the fits agree.
def _fit_data(loss, seed, n=90):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 1))
    if LOSSES[loss].task == "classification":
        y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1, -1)
    else:
        y = np.round(8 * (X[:, 0] - X[:, 0] ** 2 + rng.standard_t(3, size=n))) / 8
    w = rng.integers(0, 4, size=n).astype(float)
    return X, y, w


def _estimator(loss, algo, engine, **kw):
    Est = BoostingClassifier if LOSSES[loss].task == "classification" else BoostingRegressor
    extra = {"tau": 0.25} if loss == "pinball" else {}
    settings = dict(n_estimators=25, learning_rate=1.0, max_depth=3, step=0.5, random_state=0)
    return Est(loss=loss, algo=algo, engine=engine, **{**settings, **extra, **kw})


def _raw(est, X):
    return est.decision_function(X) if hasattr(est, "decision_function") else est.predict(X)


def _fit_logged(est, monkeypatch, X, y, **fit_kw):
    """Fit, recording the target and weights given to each tree.

    The compiled loop calls the tree kernels directly, past ``engine.grow``: the fit runs the
    Python reference loop (the compiled loop equals it, checked in test_compiled_loop) so that
    every tree is recorded."""
    import proxboost._compiled_loop as _compiled_loop
    import proxboost._fit_loop as _fit_loop

    force_python = _compiled_loop.FORCE_PYTHON
    monkeypatch.setattr(_compiled_loop, "FORCE_PYTHON", True)

    log, make = [], _fit_loop.make_engine

    def spy(name):
        engine = make(name)
        grow = engine.grow

        def logged(Xp, target, max_depth, random_state=None, sample_weight=None):
            log.append((target.copy(), sample_weight))
            return grow(Xp, target, max_depth, random_state, sample_weight=sample_weight)

        engine.grow = logged
        return engine

    monkeypatch.setattr(_fit_loop, "make_engine", spy)
    est.fit(X, y, **fit_kw)
    monkeypatch.setattr(_fit_loop, "make_engine", make)
    monkeypatch.setattr(_compiled_loop, "FORCE_PYTHON", force_python)
    assert len(log) == len(est.estimators_) > 0, "a tree was grown without being recorded"
    return est, log


def _exact_sse(tree, Xp, target, w):
    """Weighted sum of squared errors of the tree's least-squares fit, in exact arithmetic."""
    from fractions import Fraction

    leaves = tree.apply(Xp)
    total = Fraction(0)
    for leaf in np.unique(leaves[w > 0]):
        rows = np.flatnonzero((leaves == leaf) & (w > 0))
        ws = [Fraction(float(w[i])) for i in rows]
        ts = [Fraction(float(target[i])) for i in rows]
        mean = sum(a * b for a, b in zip(ws, ts)) / sum(ws)
        total += sum(a * (b - mean) ** 2 for a, b in zip(ws, ts))
    return total


def _assert_same_fit_or_tie(a, b, log_a, X, X_eval, w):
    """a (weighted) equals b (repeated / removed rows), up to an exactly tied tree."""
    Xp = a.engine_.prepare(X)
    T = len(a.estimators_)
    first = next(
        (
            t
            for t in range(T)
            if not np.array_equal(
                a.estimators_[t].apply(Xp)[w > 0], b.estimators_[t].apply(Xp)[w > 0]
            )
        ),
        T,
    )
    if first < T:  # two different partitions of the weighted rows: they must tie exactly
        target, _ = log_a[first]  # of the positive-weight rows, the only ones the trees fit
        keep = w > 0
        sse_a = _exact_sse(a.estimators_[first], Xp[keep], target, w[keep])
        sse_b = _exact_sse(b.estimators_[first], Xp[keep], target, w[keep])
        assert sse_a == sse_b, f"tree {first}: not a tie ({float(sse_a)} vs {float(sse_b)})"
    np.testing.assert_allclose(a.train_loss_[: first + 1], b.train_loss_[: first + 1], rtol=RTOL)
    np.testing.assert_allclose(a.eval_loss_[: first + 1], b.eval_loss_[: first + 1], rtol=RTOL)
    if first == T:
        for Xq in (X, X_eval):
            ra, rb = _raw(a, Xq), _raw(b, Xq)
            np.testing.assert_allclose(ra, rb, rtol=RTOL, atol=RTOL * np.abs(rb).max())
    return first


# every loss x algorithm on the default engine; every loss x three algorithms on the others
CASES = [(loss, algo, "exact") for loss in LOSSES for algo in ALGOS] + [
    (loss, algo, engine)
    for engine in sorted(set(ENGINES) - {"exact"})
    for loss in LOSSES
    for algo in ("prox", "residual_gradient", "accelerated_gradient")
]


@pytest.mark.parametrize("loss, algo, engine", CASES)
@pytest.mark.grid
def test_fit_integer_weights_are_repeated_rows(loss, algo, engine, monkeypatch):
    X, y, w = _fit_data(loss, _seed("fit", loss, algo))
    X_eval, y_eval, w_eval = _fit_data(loss, _seed("eval", loss, algo), n=30)
    rep, eval_rep = (np.repeat(np.arange(len(v)), v.astype(int)) for v in (w, w_eval))
    weighted, log = _fit_logged(
        _estimator(loss, algo, engine),
        monkeypatch,
        X,
        y,
        sample_weight=w,
        eval_set=(X_eval, y_eval, w_eval),
    )
    repeated = _estimator(loss, algo, engine).fit(
        X[rep], y[rep], eval_set=(X_eval[eval_rep], y_eval[eval_rep])
    )
    # the trees got the weights, on the positive-weight rows only (rows of weight 0 are not
    # fitted), scaled by the power of two that puts the largest in [0.5, 1) (an exact scaling)
    scale = np.ldexp(1.0, -np.frexp(np.max(w))[1])
    assert all(np.array_equal(sw, w[w > 0] * scale) for _, sw in log)
    _assert_same_fit_or_tie(weighted, repeated, log, X, X_eval, w)


@pytest.mark.parametrize("loss, algo, engine", CASES[::3])
def test_fit_zero_weights_are_removed_rows(loss, algo, engine, monkeypatch):
    X, y, w = _fit_data(loss, _seed("zero-fit", loss, algo))
    w = (w > 0).astype(float)
    keep = w > 0
    X_eval, y_eval, _ = _fit_data(loss, _seed("eval", loss, algo), n=30)
    weighted, log = _fit_logged(
        _estimator(loss, algo, engine),
        monkeypatch,
        X,
        y,
        sample_weight=w,
        eval_set=(X_eval, y_eval),
    )
    removed = _estimator(loss, algo, engine).fit(X[keep], y[keep], eval_set=(X_eval, y_eval))
    _assert_same_fit_or_tie(weighted, removed, log, X, X_eval, w)


@pytest.mark.parametrize("engine", sorted(ENGINES))
@pytest.mark.parametrize(
    "loss, algo", [("lad", "accelerated_prox"), ("logistic", "residual_gradient")]
)
def test_training_predictions_of_zero_weight_rows(loss, algo, engine):
    """The fit runs on the positive-weight rows; the others' training predictions, replayed tree
    by tree, are the model's predictions on those rows (in the training rows' order)."""
    X, y, w = _fit_data(loss, _seed("idle", loss, algo))
    est = _estimator(loss, algo, engine).fit(X, y, sample_weight=w)
    assert len(est.train_prediction_) == len(y) and np.any(w == 0)
    raw = _raw(est, X)
    np.testing.assert_allclose(est.train_prediction_, raw, rtol=RTOL, atol=RTOL * np.abs(raw).max())


@pytest.mark.slow
def test_most_fits_have_no_tie(monkeypatch):
    """The tie escape is rare: on the default engine, most loss x algorithm fits agree fully."""
    full = 0
    for loss, algo, engine in CASES[:36]:
        X, y, w = _fit_data(loss, _seed("fit", loss, algo))
        rep = np.repeat(np.arange(len(y)), w.astype(int))
        a = _estimator(loss, algo, engine).fit(X, y, sample_weight=w)
        b = _estimator(loss, algo, engine).fit(X[rep], y[rep])
        full += bool(np.allclose(a.train_loss_, b.train_loss_, rtol=RTOL, atol=0))
    assert full >= 30


@pytest.mark.parametrize("engine", sorted(ENGINES))
@pytest.mark.parametrize(
    "loss, algo",
    [
        ("lad", "prox"),
        ("pinball", "accelerated_gradient"),
        ("logistic", "residual_prox"),
        ("hinge", "gradient"),
    ],
)
def test_unit_weights_change_nothing(loss, algo, engine, monkeypatch):
    """Unit weights (training and eval) give the unweighted fit bit for bit: they are routed to
    the unweighted code paths (the trees get no weights)."""
    X, y, _ = _fit_data(loss, _seed("unit", loss))
    X_eval, y_eval, _ = _fit_data(loss, _seed("unit-eval", loss), n=30)
    a = _estimator(loss, algo, engine).fit(X, y, eval_set=(X_eval, y_eval))
    b, log = _fit_logged(
        _estimator(loss, algo, engine),
        monkeypatch,
        X,
        y,
        sample_weight=np.ones(len(y)),
        eval_set=(X_eval, y_eval, np.ones(len(y_eval))),
    )
    assert all(sw is None for _, sw in log)
    for attr in ("train_loss_", "eval_loss_", "train_prediction_"):
        np.testing.assert_array_equal(getattr(a, attr), getattr(b, attr))
    np.testing.assert_array_equal(_raw(a, X_eval), _raw(b, X_eval))


def test_sample_weight_is_not_modified():
    X, y, w = _fit_data("hinge", 2)
    w0 = w.copy()
    _estimator("hinge", "prox", "exact").fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(w, w0)


@pytest.mark.parametrize("loss", ["ls", "lad"])
def test_hist_weighted_bins_are_repeated_rows_bins(loss):
    """700 distinct values, 255 bins: the bin edges come from weighted counts, which are the
    repeated rows' counts, so the binned fits coincide too."""
    rng = np.random.default_rng(_seed("hist-bins", loss))
    n = 700
    X = rng.normal(size=(n, 1))
    y = np.round(8 * (X[:, 0] + rng.standard_t(3, size=n))) / 8
    w = rng.integers(0, 4, size=n).astype(float)
    rep = np.repeat(np.arange(n), w.astype(int))
    a = _estimator(loss, "prox", "hist").fit(X, y, sample_weight=w)
    b = _estimator(loss, "prox", "hist").fit(X[rep], y[rep])
    assert a.engine_.prepare(X).max() == 254  # really binned
    np.testing.assert_allclose(a.train_loss_, b.train_loss_, rtol=RTOL)
    np.testing.assert_allclose(
        a.predict(X), b.predict(X), rtol=RTOL, atol=RTOL * np.abs(b.predict(X)).max()
    )


# -- bit for bit where the sums are exact ---------------------------------------------------------
# On dyadic data (X on a grid of quarters, y of 24 significant bits, learning rate and step powers
# of two) every sum of values in the fit is exact, so integer weights must give the rows repeated
# bit for bit. Two rules make it so: the weighted mean loss sum(w l) / sum(w) (weights scaled by a
# power of two), and the engines' pure-node rule. The squares of the prox directions need more
# than 53 bits: square sums are rounded, differently for w * g * g summed once and g * g summed w
# times, so scikit-learn's rule (impurity <= epsilon) splits a pure node in one fit and not in the
# other (lad/prox on the exact engine at depth 5, here); the exact comparison decides it alike.
def _dyadic_data(loss, seed, n=64):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 16, size=(n, 3)) / 4.0
    if LOSSES[loss].task == "classification":
        y = np.where(X[:, 0] + rng.integers(-4, 5, size=n) / 2.0 > 2.0, 1, -1)
    else:
        y = rng.integers(-(2**24), 2**24, size=n) / 2.0**18 + 4.0 * X[:, 0]
    return X, y, rng.integers(0, 4, size=n).astype(float)


DYADIC = [
    (loss, algo, engine, depth)
    for loss in ("lad", "pinball", "hinge")
    for algo in ("prox", "gradient")
    for engine in ("exact", "hist")
    for depth in (2, 3, 4, 5)
]


@pytest.mark.parametrize("loss, algo, engine, depth", DYADIC)
@pytest.mark.grid
def test_integer_weights_are_repeated_rows_bit_for_bit(loss, algo, engine, depth):
    for seed in range(3):
        X, y, w = _dyadic_data(loss, _seed("dyadic", loss, algo, engine, depth, seed))
        rep = np.repeat(np.arange(len(y)), w.astype(int))
        kw = dict(n_estimators=15, max_depth=depth, learning_rate=0.5, step=2.0, random_state=seed)
        weighted = _estimator(loss, algo, engine, **kw).fit(X, y, sample_weight=w)
        repeated = _estimator(loss, algo, engine, **kw).fit(X[rep], y[rep])
        assert np.array_equal(weighted.train_loss_, repeated.train_loss_), (seed, "losses")
        assert np.array_equal(_raw(weighted, X), _raw(repeated, X)), (seed, "predictions")
