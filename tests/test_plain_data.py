"""``_plain_data``: ``fit``'s input checks on plain arrays against scikit-learn's
``validate_data`` (the oracle), on valid and invalid inputs: the same arrays returned, the same
attributes left on the estimator, the same errors and warnings."""

import warnings

import numpy as np
import pytest
from sklearn.utils.validation import validate_data

from proxboost import BoostingClassifier, BoostingRegressor
from proxboost._plain_data import fit_data, more_data

pd = pytest.importorskip("pandas")

RNG = np.random.default_rng(0)
X = RNG.normal(size=(20, 3))
Y = RNG.normal(size=20)


def _with(a, where, value):
    a = a.copy()
    a[where] = value
    return a


X_CASES = {
    "plain": X,
    "nan": _with(X, (2, 1), np.nan),
    "inf": _with(X, (2, 1), np.inf),
    "-inf": _with(X, (0, 0), -np.inf),
    "fortran": np.asfortranarray(X),
    "strided": X[::2],
    "float32": X.astype(np.float32),
    "int": np.arange(60).reshape(20, 3),
    "list": X.tolist(),
    "1-d": X[:, 0],
    "no rows": X[:0],
    "no columns": X[:, :0],
    "frame": pd.DataFrame(X, columns=["a", "b", "c"]),
    "read-only": np.frombuffer(X.tobytes()).reshape(X.shape),
}
Y_CASES = {
    "plain": Y,
    "nan": _with(Y, 3, np.nan),
    "inf": _with(Y, 3, np.inf),
    "strided": np.repeat(Y, 2)[::2],
    "column": Y[:, None],
    "int": np.arange(20),
    "short": Y[:19],
    "list": Y.tolist(),
    "object": Y.astype(object),
}


def _outcome(call):
    """(result or the error's type and message, the warnings' messages)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = call()
        except Exception as error:  # noqa: BLE001 - the error itself is compared
            result = (type(error), str(error))
    return result, [str(w.message) for w in caught]


def _same(a, b):
    if isinstance(a, tuple) and isinstance(a[0], type):  # an error
        assert a == b
        return
    for u, v in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
        assert type(u) is type(v) and u.dtype == v.dtype and u.shape == v.shape
        assert np.array_equal(u, v, equal_nan=u.dtype.kind == "f")
        assert u.flags.writeable == v.flags.writeable
        assert u.flags.c_contiguous == v.flags.c_contiguous


def _attributes(est):
    return {k: v for k, v in vars(est).items() if k in ("n_features_in_", "feature_names_in_")}


@pytest.mark.parametrize("Est", [BoostingRegressor, BoostingClassifier])
@pytest.mark.parametrize("x_case", sorted(X_CASES))
@pytest.mark.parametrize("y_case", sorted(Y_CASES))
@pytest.mark.parametrize("fitted_on_frame", [False, True])
def test_fit_data_is_validate_data(Est, x_case, y_case, fitted_on_frame):
    X_in, y_in = X_CASES[x_case], Y_CASES[y_case]
    numeric = Est is BoostingRegressor
    if not numeric:
        y_in = np.sign(y_in) if isinstance(y_in, np.ndarray) else y_in
    ours, theirs = Est(), Est()
    if fitted_on_frame:  # a model fitted on named columns, fitted again
        for est in (ours, theirs):
            validate_data(est, X_CASES["frame"], Y, y_numeric=True)
    got = _outcome(lambda: fit_data(ours, X_in, y_in, y_numeric=numeric))
    want = _outcome(
        lambda: validate_data(theirs, X_in, y_in, ensure_all_finite="allow-nan", y_numeric=numeric)
    )
    _same(got[0], want[0])
    assert got[1] == want[1]
    assert _attributes(ours).keys() == _attributes(theirs).keys()
    assert ours.__dict__.get("n_features_in_") == theirs.__dict__.get("n_features_in_")


@pytest.mark.parametrize("x_case", sorted(X_CASES))
@pytest.mark.parametrize("fitted_on", ["plain", "frame", "no columns seen"])
def test_more_data_is_validate_data(x_case, fitted_on):
    ours, theirs = BoostingRegressor(), BoostingRegressor()
    if fitted_on != "no columns seen":
        for est in (ours, theirs):
            validate_data(est, X_CASES[fitted_on], Y, y_numeric=True)
    X_in = X_CASES[x_case]
    got = _outcome(lambda: more_data(ours, X_in))
    want = _outcome(lambda: validate_data(theirs, X_in, reset=False, ensure_all_finite="allow-nan"))
    _same(got[0], want[0])
    assert got[1] == want[1]
    assert _attributes(ours).keys() == _attributes(theirs).keys()


def test_plain_data_takes_the_short_path(monkeypatch):
    """The inputs of a plain fit never reach ``validate_data`` (else the module saves nothing)."""
    from proxboost import _plain_data

    def refuse(*args, **kwargs):
        raise AssertionError("validate_data called")

    monkeypatch.setattr(_plain_data, "validate_data", refuse)
    est = BoostingRegressor()
    assert fit_data(est, X, Y, y_numeric=True)[0] is X
    rows = X[:5]
    assert more_data(est, rows) is rows
    with pytest.raises(AssertionError, match="validate_data called"):
        fit_data(est, X_CASES["inf"], Y, y_numeric=True)
