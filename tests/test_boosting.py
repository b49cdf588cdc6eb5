"""Tests of the boosting loop and the estimators (SPEC §3), against independent oracles."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

from proxboost import BoostingClassifier, BoostingRegressor
from proxboost.boosting import ALGOS, model_weights, nesterov_alphas
from proxboost.losses import make_loss

REG_LOSSES = ["ls", "lad", "pinball"]
CLF_LOSSES = ["exponential", "logistic", "hinge"]


def _spec_X(rng, n, d):
    """SPEC §4.1 design: X ~ N(0, Sigma), Sigma_ij = 2^-|i-j| (continuous features)."""
    idx = np.arange(d)
    cov = 2.0 ** -np.abs(idx[:, None] - idx[None, :])
    return rng.multivariate_normal(np.zeros(d), cov, size=n)


@pytest.fixture(scope="module")
def reg_data():
    rng = np.random.RandomState(0)
    X = _spec_X(rng, 300, 8)
    y = -np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + X[:, 2] - np.exp(-X[:, 3]) + rng.normal(0, np.sqrt(0.5), 300)
    return X[:200], y[:200], X[200:], y[200:]


@pytest.fixture(scope="module")
def clf_data():
    rng = np.random.RandomState(1)
    X = _spec_X(rng, 300, 8)
    s = X[:, 0] + X[:, 3] ** 3 + X[:, 5] + np.sin(X[:, 6] * X[:, 7]) + rng.normal(0, np.sqrt(0.1), 300)
    y = np.where(s > 0.38, 1.0, -1.0)
    return X[:200], y[:200], X[200:], y[200:]


# ---------------------------------------------------------------------------------------------
# Nesterov's weights
# ---------------------------------------------------------------------------------------------
def test_nesterov_alphas_values():
    alphas = nesterov_alphas(4)
    beta = [1.0]
    for _ in range(4):
        beta.append((1 + np.sqrt(1 + 4 * beta[-1] ** 2)) / 2)
    expected = [(beta[t] - 1) / beta[t + 1] for t in range(4)]
    np.testing.assert_allclose(alphas, expected, rtol=1e-15)
    assert alphas[0] == 0.0  # alpha_1 = 0 (beta_0 = 1), the paper's Property
    assert abs(alphas[1] - 0.2818) < 1e-4


@pytest.mark.parametrize("T", [1, 2, 3, 10, 57])
def test_weights_closed_form_matches_coefficient_recursion(T):
    """w_t from the closed form equals the coefficients of c_t obtained by running
    f_{t+1} = h_t + c_{t+1}, h_{t+1} = f_{t+1} + alpha_{t+1}(f_{t+1} - f_t) on coefficient vectors."""
    alphas = nesterov_alphas(T)
    f = np.eye(T + 1)[0]
    h = f.copy()
    for t in range(T):
        f_new = h + np.eye(T + 1)[t + 1]
        h = f_new + alphas[t] * (f_new - f)
        f = f_new
    np.testing.assert_allclose(model_weights(alphas), f, rtol=1e-12)
    # the sum form of SPEC §3: w_t = 1 + sum_{j=t}^{T-1} prod_{k=t}^{j} alpha_k
    sums = [1.0] + [1 + sum(np.prod(alphas[t - 1 : j]) for j in range(t, T)) for t in range(1, T + 1)]
    np.testing.assert_allclose(model_weights(alphas), sums, rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# The identity of SPEC §3 for the six algorithms, and staged predictions
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("algo", list(ALGOS))
@pytest.mark.parametrize("loss", REG_LOSSES + CLF_LOSSES)
def test_tracked_predictions_equal_recomputed_model(algo, loss, reg_data, clf_data):
    Est = BoostingRegressor if loss in REG_LOSSES else BoostingClassifier
    X, y, Xe, ye = reg_data if loss in REG_LOSSES else clf_data
    est = Est(loss=loss, algo=algo, n_estimators=60, learning_rate=0.3, step=0.5, random_state=0)
    est.fit(X, y, eval_set=(Xe, ye))
    raw = est.predict(X) if loss in REG_LOSSES else est.decision_function(X)
    F = est.train_prediction_
    assert np.linalg.norm(F - raw) <= 1e-10 * np.linalg.norm(raw)
    # the recorded training curve is the loss of the tracked predictions
    yy = y if loss in REG_LOSSES else y  # already +-1
    assert est.train_loss_[-1] == pytest.approx(est.loss_.value(yy, F), rel=1e-12)
    # staged predictions replay the recursion: the last one is the model; the eval curve matches
    staged = list(est.staged_predict(Xe) if loss in REG_LOSSES else est.staged_decision_function(Xe))
    assert len(staged) == 60
    final = est.predict(Xe) if loss in REG_LOSSES else est.decision_function(Xe)
    np.testing.assert_allclose(staged[-1], final, rtol=1e-10, atol=1e-10 * np.abs(final).max())
    eval_curve = [est.loss_.value(ye, s) for s in staged]
    np.testing.assert_allclose(est.eval_loss_[1:], eval_curve, rtol=1e-9)
    assert est.train_loss_.shape == est.eval_loss_.shape == est.train_time_.shape == (61,)
    assert est.train_time_[0] == 0 and np.all(np.diff(est.train_time_) >= 0)


def test_staged_prefix_equals_shorter_fit(reg_data):
    """f_T of a T-tree fit is stage T of a longer fit (the recursion is causal)."""
    X, y, Xe, _ = reg_data
    long = BoostingRegressor(loss="lad", algo="accelerated_prox", n_estimators=30, random_state=3).fit(X, y)
    short = BoostingRegressor(loss="lad", algo="accelerated_prox", n_estimators=12, random_state=3).fit(X, y)
    np.testing.assert_allclose(list(long.staged_predict(Xe))[11], short.predict(Xe), rtol=1e-12, atol=1e-12)


def test_weights_are_ones_without_acceleration(reg_data):
    X, y, _, _ = reg_data
    est = BoostingRegressor(loss="lad", algo="residual_prox", n_estimators=5).fit(X, y)
    assert np.all(est.weights_ == 1.0) and np.all(est.alphas_ == 0.0)


# ---------------------------------------------------------------------------------------------
# Algorithm-level oracles
# ---------------------------------------------------------------------------------------------
def test_ls_prox_and_gradient_give_the_same_training_predictions(reg_data):
    """With ls the proximal direction is the residual divided by 1 + lambda: same trees (SPEC §3)."""
    X, y, _, _ = reg_data
    kw = dict(loss="ls", n_estimators=100, learning_rate=0.1, max_depth=3, step=1.0, random_state=0)
    g = BoostingRegressor(algo="gradient", **kw).fit(X, y)
    p = BoostingRegressor(algo="prox", **kw).fit(X, y)
    np.testing.assert_allclose(p.train_prediction_, g.train_prediction_, atol=1e-8, rtol=0)
    np.testing.assert_allclose(p.train_loss_, g.train_loss_, rtol=1e-8)


def test_gradient_ls_reproduces_sklearn_training_curve(reg_data):
    """scikit-learn's squared_error reports twice our (y - f)^2 / 2 and grows the same trees."""
    X, y, _, _ = reg_data
    sk = GradientBoostingRegressor(loss="squared_error", n_estimators=150, learning_rate=0.1, max_depth=3, random_state=0)
    sk.fit(X, y)
    ours = BoostingRegressor(loss="ls", algo="gradient", n_estimators=150, learning_rate=0.1, max_depth=3, random_state=0)
    ours.fit(X, y)
    np.testing.assert_allclose(2 * ours.train_loss_[1:], sk.train_score_, rtol=1e-8)
    np.testing.assert_allclose(ours.predict(X), sk.predict(X), rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("loss, sk_loss, tau", [("lad", "absolute_error", 0.5), ("pinball", "quantile", 0.9)])
def test_gradient_lad_pinball_track_sklearn(loss, sk_loss, tau, reg_data):
    """Close but not exact: scikit-learn takes the lower end of a tie interval in its leaf
    median / quantile where we take 0 or the midpoint (SPEC §2 tie rule), and sign targets create
    many split ties that each implementation breaks its own way, so trees drift apart."""
    X, y, _, _ = reg_data
    extra = {"alpha": tau} if sk_loss == "quantile" else {}
    sk = GradientBoostingRegressor(loss=sk_loss, n_estimators=150, learning_rate=0.1, max_depth=3, random_state=0, **extra)
    sk.fit(X, y)
    ours = BoostingRegressor(loss=loss, algo="gradient", n_estimators=150, learning_rate=0.1, max_depth=3, tau=tau, random_state=0)
    ours.fit(X, y)
    rel = np.abs(ours.train_loss_[1:] - sk.train_score_) / sk.train_score_
    assert rel[0] < 1e-3  # the first tree: same target up to the sign-tie at the initial quantile
    # measured on this data: lad mean 0.03, max 0.07; pinball mean 0.09, max 0.24, final 0.055
    assert rel.mean() < 0.12 and rel[-1] < 0.1 and rel.max() < 0.3
    assert ours.train_loss_[-1] < 0.6 * ours.train_loss_[0] and sk.train_score_[-1] < 0.6 * sk.train_score_[0]


@pytest.mark.parametrize("loss", ["lad", "hinge"])
def test_prox_beats_gradient_on_training_loss(loss, reg_data, clf_data):
    """A sanity check of the paper's main observation on its synthetic designs (SPEC §7, claim 2)."""
    Est = BoostingRegressor if loss == "lad" else BoostingClassifier
    X, y, _, _ = reg_data if loss == "lad" else clf_data
    kw = dict(loss=loss, n_estimators=200, learning_rate=0.05, max_depth=3, step=1.0, random_state=0)
    g = Est(algo="gradient", **kw).fit(X, y)
    p = Est(algo="prox", **kw).fit(X, y)
    assert p.train_loss_[-1] < g.train_loss_[-1]


def test_residual_target_is_the_carried_residual(reg_data):
    """residual_gradient with ls: Delta_{t+1} = r_t + Delta_t - g_{t+1}(X); check the first two
    iterations by hand with scikit-learn trees grown on the same targets."""
    from sklearn.tree import DecisionTreeRegressor

    X, y, _, _ = reg_data
    est = BoostingRegressor(loss="lad", algo="residual_gradient", n_estimators=2, learning_rate=0.5, random_state=0).fit(X, y)
    rng = np.random.RandomState(0)
    X32 = X.astype(np.float32)
    f = np.full(len(y), est.init_)
    delta = np.zeros(len(y))
    for t in range(2):
        target = np.sign(y - f) + delta
        tree = DecisionTreeRegressor(max_depth=3, random_state=rng).fit(X32, target)
        g = tree.predict(X32)
        leaves = tree.apply(X32)
        c = np.zeros(len(y))
        for leaf in np.unique(leaves):
            m = leaves == leaf
            u = np.sort(y[m] - f[m])
            k = len(u)
            lo, hi = (u[k // 2], u[k // 2]) if k % 2 else (u[k // 2 - 1], u[k // 2])
            c[m] = 0.0 if (lo <= 0 <= hi or g[m][0] == 0) else 0.5 * (lo + hi)
        f = f + 0.5 * c
        delta = target - g
    np.testing.assert_allclose(est.train_prediction_, f, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# Overflow policy
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("loss", ["exponential", "logistic"])
def test_no_overflow_with_1000_iterations_at_nu_1(loss, clf_data):
    X, y, Xe, ye = clf_data
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        est = BoostingClassifier(loss=loss, algo="prox", n_estimators=1000, learning_rate=1.0, step=10.0, random_state=0)
        est.fit(X, y, eval_set=(Xe, ye))
    assert np.all(np.isfinite(est.train_loss_)) and np.all(np.isfinite(est.eval_loss_))
    assert np.all(np.isfinite(est.decision_function(Xe)))


def test_diverging_accelerated_run_records_saturating_loss(clf_data):
    X, y, Xe, ye = clf_data
    est = BoostingClassifier(loss="exponential", algo="accelerated_gradient", n_estimators=400, learning_rate=1.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        est.fit(X, y, eval_set=(Xe, ye))
    assert np.all(np.isfinite(est.eval_loss_)) and np.all(np.isfinite(est.train_loss_))
    assert est.eval_loss_.max() > 1e3  # it did diverge on the held-out set, and it saturates
    assert est.eval_loss_.max() <= np.exp(700)


# ---------------------------------------------------------------------------------------------
# scikit-learn contract
# ---------------------------------------------------------------------------------------------
# Both estimators pass every check of check_estimator; the only one skipped is scikit-learn's own
# check_array_api_input (it skips itself unless SCIPY_ARRAY_API=1: we do not claim array-API
# support). The classifier is
# binary only (tag classifier_tags.multi_class = False), so the multi-class checks are not run.
@pytest.mark.parametrize("est", [BoostingRegressor(n_estimators=20), BoostingClassifier(n_estimators=20)], ids=["regressor", "classifier"])
def test_check_estimator(est):
    check_estimator(est)


def test_classifier_returns_original_labels_and_decision_sign():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(120, 3))
    y = np.where(X[:, 0] > 0, "spam", "ham")
    clf = BoostingClassifier(loss="hinge", algo="residual_prox", n_estimators=30).fit(X, y)
    assert list(clf.classes_) == ["ham", "spam"]
    pred = clf.predict(X)
    assert set(pred) <= {"ham", "spam"}
    np.testing.assert_array_equal(pred == "spam", clf.decision_function(X) >= 0)
    assert clf.score(X, y) > 0.9
    assert [list(p) for p in clf.staged_predict(X)][-1] == list(pred)


def test_clone_gridsearch_pipeline_pickle(reg_data):
    X, y, Xe, _ = reg_data
    est = BoostingRegressor(loss="lad", algo="prox", n_estimators=20)
    c = clone(est)
    assert c.get_params() == est.get_params()
    grid = GridSearchCV(make_pipeline(StandardScaler(), est), {"boostingregressor__step": [0.1, 10.0]}, cv=2)
    grid.fit(X, y)
    assert grid.best_params_["boostingregressor__step"] in (0.1, 10.0)
    fitted = est.fit(X, y)
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(again.predict(Xe), fitted.predict(Xe))


# ---------------------------------------------------------------------------------------------
# Bad input: ValueError in fit, before any tree is grown, naming the parameter
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "Est, params, match",
    [
        (BoostingRegressor, dict(loss="hinge"), r"loss='hinge'.*allowed values.*'ls'.*BoostingClassifier"),
        (BoostingClassifier, dict(loss="lad"), r"loss='lad'.*allowed values.*'exponential'.*BoostingRegressor"),
        (BoostingRegressor, dict(loss="huber"), r"loss='huber'.*allowed values"),
        (BoostingRegressor, dict(algo="newton"), r"algo='newton'.*allowed values.*residual_prox"),
        (BoostingRegressor, dict(learning_rate=0.0), r"learning_rate=0.0.*\(0, 1\]"),
        (BoostingRegressor, dict(learning_rate=1.5), r"learning_rate=1.5.*\(0, 1\]"),
        (BoostingRegressor, dict(step=0.0), r"step=0.0.*> 0"),
        (BoostingRegressor, dict(step=-1.0), r"step=-1.0.*> 0"),
        (BoostingRegressor, dict(loss="pinball", tau=1.0), r"tau=1.0.*\(0, 1\)"),
        (BoostingRegressor, dict(loss="pinball", tau=0), r"tau=0.*\(0, 1\)"),
        (BoostingClassifier, dict(loss="exponential", beta=0.0), r"beta=0.0.*> 0"),
        (BoostingRegressor, dict(n_estimators=0), r"n_estimators=0.*>= 1"),
        (BoostingRegressor, dict(max_depth=0), r"max_depth=0.*>= 1"),
        (BoostingClassifier, dict(newton_steps=0), r"newton_steps=0.*>= 1"),
        (BoostingRegressor, dict(engine="gpu"), r"engine='gpu'.*allowed values"),
    ],
)
def test_bad_parameters_raise_before_any_tree(Est, params, match, monkeypatch):
    import proxboost.boosting as boosting

    monkeypatch.setattr(boosting, "make_engine", lambda name: pytest.fail("a tree engine was built"))
    X = np.random.RandomState(0).normal(size=(20, 2))
    y = np.arange(20.0) if Est is BoostingRegressor else np.arange(20) % 2
    with pytest.raises(ValueError, match=match):
        Est(**params).fit(X, y)


@pytest.mark.parametrize("bad", ["nan_X", "inf_X", "nan_y", "inf_y"])
def test_non_finite_input_raises(bad, monkeypatch):
    import proxboost.boosting as boosting

    monkeypatch.setattr(boosting, "make_engine", lambda name: pytest.fail("a tree engine was built"))
    X = np.random.RandomState(0).normal(size=(20, 2))
    y = np.arange(20.0)
    if bad.endswith("X"):
        X[3, 1] = np.nan if bad.startswith("nan") else np.inf
    else:
        y[3] = np.nan if bad.startswith("nan") else np.inf
    with pytest.raises(ValueError, match="NaN|infinity"):
        BoostingRegressor().fit(X, y)


@pytest.mark.parametrize("labels, count", [([1] * 20, 1), (list(range(3)) * 6 + [0, 1], 3)])
def test_classifier_needs_exactly_two_classes(labels, count):
    X = np.random.RandomState(0).normal(size=(20, 2))
    with pytest.raises(ValueError, match=f"binary classifier: y has {count} class"):
        BoostingClassifier().fit(X, np.array(labels))


def test_regression_loss_value_matches_loss_object(reg_data):
    X, y, _, _ = reg_data
    est = BoostingRegressor(loss="pinball", tau=0.9, n_estimators=10).fit(X, y)
    loss = make_loss("pinball", tau=0.9)
    assert est.train_loss_[-1] == pytest.approx(loss.value(y, est.predict(X)), rel=1e-10)
