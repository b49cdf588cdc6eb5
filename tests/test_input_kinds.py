"""Feature columns that are not numbers are refused in one line naming the column and the fix."""

import numpy as np
import pandas as pd
import pytest

from proxboost import BoostingClassifier, BoostingRegressor
from proxboost._input_kinds import ENCODE_HINT

N = 24
RNG = np.random.RandomState(0)
BASE = pd.DataFrame({"x": RNG.normal(size=N), "flag": np.arange(N) % 3 == 0})
Y = BASE["x"].to_numpy() + RNG.normal(scale=0.1, size=N)

REFUSED = {
    "category of strings": pd.Categorical(["red", "blue", "green"] * (N // 3)),
    "category of numbers": pd.Categorical([1.0, 2.5, 4.0] * (N // 3)),  # codes are not values
    "object": pd.Series(["a", "b"] * (N // 2), dtype=object),
    "string": pd.Series(["a", "b"] * (N // 2), dtype="string"),
    "datetime": pd.date_range("2020-01-01", periods=N),
    "datetime with zone": pd.date_range("2020-01-01", periods=N, tz="UTC"),
    "timedelta": pd.to_timedelta(np.arange(N), unit="D"),
}


def _with(column):
    frame = BASE.copy()
    frame["bad"] = column
    return frame


@pytest.mark.parametrize("kind", sorted(REFUSED))
def test_fit_refuses_the_column_by_name(kind):
    with pytest.raises(ValueError) as info:
        BoostingRegressor(n_estimators=2).fit(_with(REFUSED[kind]), Y)
    message = str(info.value)
    assert "column 'bad'" in message and ENCODE_HINT in message and "\n" not in message


@pytest.mark.parametrize("kind", ["category of numbers", "string", "datetime"])
def test_predict_and_eval_set_refuse_it_too(kind):
    bad = _with(REFUSED[kind])
    good = _with(np.arange(N, dtype=float))
    est = BoostingRegressor(n_estimators=2).fit(good, Y)
    for call in (est.predict, lambda X: list(est.staged_predict(X))):
        with pytest.raises(ValueError, match="column 'bad'"):
            call(bad)
    with pytest.raises(ValueError, match="eval_set's X_eval column 'bad'"):
        BoostingRegressor(n_estimators=2).fit(good, Y, eval_set=(bad, Y))
    labels = np.where(Y > 0, "up", "down")
    with pytest.raises(ValueError, match="column 'bad'"):
        BoostingClassifier(n_estimators=2).fit(bad, labels)


def test_bool_columns_are_zero_and_one():
    as_float = BASE.assign(flag=BASE["flag"].astype(float))
    a = BoostingRegressor(n_estimators=10, random_state=0).fit(BASE, Y)
    b = BoostingRegressor(n_estimators=10, random_state=0).fit(as_float, Y)
    np.testing.assert_array_equal(a.predict(BASE), b.predict(as_float))
    np.testing.assert_array_equal(a.train_loss_, b.train_loss_)


def test_numpy_arrays_of_strings_or_mixed_objects_are_refused():
    X = np.column_stack([BASE["x"].to_numpy(), np.where(BASE["flag"], "yes", "no")])
    with pytest.raises(ValueError, match=r"X has dtype <U\d+ \(string\), not numbers"):
        BoostingRegressor(n_estimators=2).fit(X, Y)
    mixed = X.astype(object)
    mixed[:, 0] = BASE["x"].to_numpy()
    with pytest.raises(ValueError, match="non-numeric value 'yes' .*in column 1"):
        BoostingRegressor(n_estimators=2).fit(mixed, Y)


def test_object_arrays_of_numbers_are_accepted():
    numeric = np.column_stack([BASE["x"], BASE["flag"]]).astype(object)
    a = BoostingRegressor(n_estimators=5, random_state=0).fit(numeric, Y)
    b = BoostingRegressor(n_estimators=5, random_state=0).fit(numeric.astype(float), Y)
    np.testing.assert_array_equal(a.predict(numeric), b.predict(numeric.astype(float)))
