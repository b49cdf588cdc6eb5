"""Shared fixtures of the test suite: the data mirror, the paper's synthetic data, no network.

- The real-data tests read the public data files from a **mirror**: a read-only folder laid out as
  ``<mirror>/<dataset>/<file>``. It is ``$PROXBOOST_DATA_MIRROR`` (``.ci/run`` sets it to the CI
  machine's mirror), else the repository's ``data/`` when it is a mirror (``make datasets``
  fills it on a machine with internet). A test that needs real data asks for the ``data_mirror``
  fixture and is skipped, with that explanation, where neither exists.
- No test touches the network or writes to the mirror: for the whole session downloads are
  disabled (``PROXBOOST_OFFLINE=1``, inherited by the subprocesses that tests start) and the cache
  is a temporary folder (``PROXBOOST_DATA_HOME``), so ``data/`` is only ever read. Tests of the
  download path replace the downloader themselves.
- ``synthetic_data`` draws the paper's synthetic models through the package's own generators,
  so that no test re-implements them as a data source (the generator tests in
  ``test_datasets.py`` check them against independent formulas).
- ``toy_data`` draws a small four-feature problem (not the paper's models) for the method and
  protocol tests that only need some signal and speed.
- ``compare_trees`` walks two regression trees grown on the same rows and target node by node
  and fails unless every difference is a genuine tie (both splits' gains recomputed exactly in
  rational arithmetic): the engine equality tests and the comparisons with scikit-learn use it.
- ``curve_frame`` builds a hand-made synthetic curve in the stored layout (claims, report and
  figure tests).
- ``compose`` composes the repository's Hydra configuration (``conf/``) with overrides, as
  ``run.py`` would; ``run_py`` runs ``run.py`` in a subprocess inside ``tmp_path`` with its results
  and Hydra folders there (``run_dirs``), for the command-line, pipeline and interrupt tests;
  ``kill_run_py_at_first_row`` starts one and kills it outright once it has stored a row.
"""

from __future__ import annotations

import os

# NumPy's AVX2 path on every machine (as the Makefile and run.py set it; docs/results.md, "Same
# numbers on every machine"): set before NumPy is first imported, for a bare `pytest` too.
os.environ.setdefault("NPY_DISABLE_CPU_FEATURES", "X86_V4 AVX512_ICL AVX512_SPR")
import signal
import subprocess
import sys
import time
from collections import namedtuple
from fractions import Fraction
from pathlib import Path

import pytest

# proxboost before any test module can import numba: importing it points numba's cache at the
# folder of this source version (proxboost._numba_cache), which numba reads once per process; a
# test module importing numba first (test_threads.py does) would leave the cache beside the
# sources, where a kernel calling an edited kernel of another file runs stale code.
import proxboost  # noqa: E402, F401  (also after the NPY_DISABLE_CPU_FEATURES line above)

REPO = Path(__file__).resolve().parents[1]


@pytest.hookimpl(tryfirst=True)  # before pytest's own -m selection reads the marks
def pytest_collection_modifyitems(config, items):
    """A test marked ``grid`` (a parametrised grid) keeps its first case in ``make test-fast``;
    its other cases are marked ``slow``, so they run in ``make test`` only. A test marked
    ``serial`` is marked ``slow`` too: ``make test-fast`` runs tests in parallel, and ``make
    test`` runs the serial ones on their own after the others."""
    seen = set()
    for item in items:
        if item.get_closest_marker("serial") is not None:
            item.add_marker(pytest.mark.slow)
        if item.get_closest_marker("grid") is None:
            continue
        key = (item.path, item.originalname)
        if key in seen:
            item.add_marker(pytest.mark.slow)
        seen.add(key)
    # The few tests that take minutes (they declare a timeout above the suite's) start first: with
    # `make test`'s parallel workers their minutes then overlap the many short tests, instead of
    # running alone at the end (a stable sort: every other test keeps its place).
    items.sort(key=lambda item: not _takes_minutes(item, config))


def _takes_minutes(item, config) -> bool:
    marker = item.get_closest_marker("timeout")
    suite = float(config.getini("timeout") or 0)
    return marker is not None and bool(marker.args) and float(marker.args[0]) > suite


MIRROR_ENV = "PROXBOOST_DATA_MIRROR"
TIE_RTOL = 1e-12  # two different splits tie when their exact gains agree to this, relative


REPO_DATA = REPO / "data"
NO_MIRROR = (
    "needs the real data files: set $PROXBOOST_DATA_MIRROR to a mirror folder "
    "(<mirror>/<dataset>/<file>), or run `make datasets` on a machine with internet to fill data/"
)


def find_mirror(environ=os.environ, repo_data: Path = REPO_DATA) -> Path | None:
    """The mirror the tests read: ``$PROXBOOST_DATA_MIRROR``, else ``repo_data`` if it is a
    mirror — it carries ``manifest.json``, which ``make datasets`` writes there and the shared
    mirror carries — else None. A ``data/`` that runs filled as their cache (one dataset at a
    time, no manifest) is not a mirror."""
    value = environ.get(MIRROR_ENV, "").strip()
    if value:
        return Path(value).expanduser()
    if (repo_data / "manifest.json").is_file():
        return repo_data
    return None


@pytest.fixture(scope="session", autouse=True)
def _offline_session_cache(tmp_path_factory):
    """Downloads off, a temporary cache and the mirror in the environment for the whole session
    (subprocesses inherit them; restored afterwards)."""
    names = ("PROXBOOST_OFFLINE", "PROXBOOST_DATA_HOME", MIRROR_ENV)
    saved = {k: os.environ.get(k) for k in names}
    mirror = find_mirror()
    os.environ["PROXBOOST_OFFLINE"] = "1"
    os.environ["PROXBOOST_DATA_HOME"] = str(tmp_path_factory.mktemp("data-cache"))
    if mirror is not None:
        os.environ[MIRROR_ENV] = str(mirror)
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(scope="session")
def data_mirror() -> Path:
    """The dataset mirror (:func:`find_mirror`); skips the test, saying how to get one, without."""
    path = find_mirror()
    if path is None:
        pytest.skip(NO_MIRROR)
    if not path.is_dir():
        pytest.skip(f"{MIRROR_ENV}={path} is not a folder; {NO_MIRROR}")
    return path


@pytest.fixture(scope="session")
def synthetic_data():
    """``synthetic_data(name, n, d, seed) -> (X, y)``: the paper's ``regression`` or
    ``classification`` model drawn by the package's generator (n, d None: the model's sizes;
    classification needs d >= 18)."""
    from proxboost.experiments.datasets import load_dataset

    def draw(name: str, n: int, d: int, seed: int = 0):
        X, y, _ = load_dataset(name, random_state=seed, n_samples=n, n_features=d)
        return X, y

    return draw


@pytest.fixture(scope="session")
def toy_data():
    """``toy_data(task, n=120, seed=0) -> (X, y)``: X ~ N(0, I_4), s = X¹ + (X²)²/2 + 0.3 Z;
    y = s (regression) or +1 where s > 0.4 else -1 (classification)."""
    import numpy as np

    def draw(task, n=120, seed=0):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(n, 4))
        s = X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=n)
        return X, (np.where(s > 0.4, 1.0, -1.0) if task == "classification" else s)

    return draw


# ---------------------------------------------------------------------------------------------
# The configuration and run.py
# ---------------------------------------------------------------------------------------------
@pytest.fixture
def compose():
    """``compose(overrides=(), hydra_config=False)``: the configuration ``run.py`` composes from
    ``conf/`` with these overrides (``hydra_config``: with Hydra's record, ``cfg.hydra``). Hydra
    stays initialised on ``conf/`` for the whole test, as in a job of ``run.py``."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    def composed(overrides=(), hydra_config=False):
        return hydra_compose(
            config_name="config", overrides=list(overrides), return_hydra_config=hydra_config
        )

    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base=None):
        yield composed


@pytest.fixture
def clean_registries():
    """What ``register_loss``, ``register_dataset`` and ``register_method`` add during the test
    (docs/extending.md) is gone afterwards: the registries are restored as they were."""
    from proxboost import losses
    from proxboost.experiments.datasets import _registry
    from proxboost.experiments.plan import methods

    registries = (losses.LOSSES, _registry.REGISTRY, _registry.INFOS, methods._REGISTERED)
    saved = [dict(r) for r in registries]
    yield
    for registry, before in zip(registries, saved):
        registry.clear()
        registry.update(before)


def run_py_env(tmp_path) -> dict:
    """The environment of a ``run.py`` subprocess: Hydra's short errors, a data cache in
    ``tmp_path``."""
    env = dict(os.environ)
    env.pop("HYDRA_FULL_ERROR", None)
    env["PROXBOOST_DATA_HOME"] = str(tmp_path / "data")
    return env


def run_py_command(*args) -> list:
    return [sys.executable, str(REPO / "run.py"), *args]


def kill_run_py_at_first_row(tmp_path, *args, timeout: float) -> dict:
    """``python run.py *args`` started in ``tmp_path`` and killed outright (SIGKILL) once it has
    stored its first row in ``tmp_path / "res"``, or when it exits or ``timeout`` seconds pass.

    The whole process group is killed, so that joblib workers die with the run as on a crashed
    machine. Returns each stored row's file → its modification time (ns): what the rerun must
    leave alone.
    """
    proc = subprocess.Popen(
        run_py_command(*args),
        cwd=tmp_path,
        env=run_py_env(tmp_path),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    res = tmp_path / "res"
    try:
        deadline = time.monotonic() + timeout
        while (
            not list(res.rglob("split-*.csv"))
            and proc.poll() is None
            and time.monotonic() < deadline
        ):
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    return {f: f.stat().st_mtime_ns for f in res.rglob("split-*.csv")}


@pytest.fixture
def run_dirs(tmp_path) -> list:
    """Overrides that put a run's rows (``res``) and Hydra's folders (``run``, ``sweep``) in
    ``tmp_path``."""
    return [
        f"results_dir={tmp_path / 'res'}",
        f"hydra.run.dir={tmp_path / 'run'}",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
    ]


@pytest.fixture
def run_py(tmp_path):
    """``run_py(*args, timeout=180)``: ``python run.py *args`` started in ``tmp_path``; the
    completed process (output captured as text)."""

    def run(*args, timeout=180):
        try:
            return subprocess.run(
                run_py_command(*args),
                cwd=tmp_path,
                env=run_py_env(tmp_path),
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired as stuck:
            pytest.fail(_timed_out(stuck, tmp_path), pytrace=False)

    return run


def _timed_out(stuck: subprocess.TimeoutExpired, tmp_path) -> str:
    """What a command that did not end printed last, and the row claims it found (a claim it
    waits for is the usual reason), for the failure's message."""

    def text(out):
        out = out.decode(errors="replace") if isinstance(out, bytes) else out or ""
        return "\n".join(out.splitlines()[-25:])

    claims = []
    for path in sorted(Path(tmp_path).rglob(".*.claim")):
        try:
            content = path.read_text() or "(empty)"
        except OSError as err:
            content = f"({err})"
        claims.append(f"{path.relative_to(tmp_path)}: {content}")
    return (
        f"run.py did not end within {stuck.timeout:.0f} s\n--- last output:\n{text(stuck.output)}"
        f"\n--- stderr:\n{text(stuck.stderr)}\n--- claims:\n" + ("\n".join(claims) or "none")
    )


# ---------------------------------------------------------------------------------------------
# Tree-by-tree comparison up to genuine ties
# ---------------------------------------------------------------------------------------------
TreeMatch = namedtuple("TreeMatch", "nodes ties proxy_ties split_ties")
TreeMatch.__doc__ = """What :func:`compare_trees` found.

nodes: node pairs compared; ties: nodes decided by a tie (two different splits of equal exact
gain, or a split against a leaf at the impurity floor); proxy_ties: of those, ties only to the
rounding of the proxy; split_ties: ``(node_a, node_b, children)`` for every tie between two
different splits, ``children`` "same" when both splits send the same training rows left,
"crossed" when the rows one sends left the other sends right (one partition of the node reached
through two features: equal gains by construction), "other" for two different partitions.
"""


def _structure(tree):
    """(feature, threshold, left child, right child) of a scikit-learn ``tree_`` or an exact tree
    (a leaf has a negative left child in both)."""
    if hasattr(tree, "children_left"):
        return tree.feature, tree.threshold, tree.children_left, tree.children_right
    return tree.feature, tree.threshold, tree.left, tree.right


def _goes_left(X32, rows, tree, node):
    """Which of ``rows`` node ``node`` of ``tree`` sends left: ``x <= threshold``, and a missing
    value (NaN) where the node's ``missing_go_to_left`` says (scikit-learn's and exact's)."""
    import numpy as np

    feature, threshold, _, _ = _structure(tree)
    x = X32[rows, feature[node]]
    return (x <= threshold[node]) | (np.isnan(x) & bool(tree.missing_go_to_left[node]))


def _exact_gain(y, go_left):
    """(gain, proxy) in rational arithmetic (unit weights): proxy = S_L^2 / W_L + S_R^2 / W_R is
    the quantity scikit-learn compares, gain = proxy - S^2 / W."""
    yl = [Fraction(v) for v in y[go_left]]
    yr = [Fraction(v) for v in y[~go_left]]
    sl, sr = sum(yl, Fraction(0)), sum(yr, Fraction(0))
    nl, nr = len(yl), len(yr)
    if nl == 0 or nr == 0:
        return Fraction(0), Fraction(0)
    proxy = sl * sl / nl + sr * sr / nr
    return proxy - (sl + sr) ** 2 / (nl + nr), proxy


def _exact_impurity(y):
    v = [Fraction(x) for x in y]
    m = sum(v, Fraction(0)) / len(v)
    return float(sum(((x - m) ** 2 for x in v), Fraction(0)) / len(v))


def _compare_trees(X32, y, a, b, names=("scikit-learn", "exact")):
    """Walk trees ``a`` and ``b`` (scikit-learn ``tree_``s or exact trees) from the root on the
    training rows ``X32`` (float32) with target ``y``; returns a :class:`TreeMatch`. Raises
    AssertionError on a genuine difference.

    A split is its feature, threshold and direction of the missing values (NaN; per node, also
    where the node had none: scikit-learn's ``missing_go_to_left``), which a node's rows follow.
    Two different splits are a tie when their exact gains agree to 1e-12 relative, or, for
    ``proxy_ties``, to 1e-12 relative to the exact proxy: scikit-learn compares proxies, whose
    float64 rounding (~1e-16 of the proxy) can exceed a tiny gain (deep nodes, nearly pure). Below
    a tie of one partition reached through two features the walk goes on (the children grow on
    the same rows); below a tie of two partitions it stops (the subtrees grow on other rows). A
    leaf against a split is allowed only where the node's exact impurity is within the rounding
    error of scikit-learn's q/W - (S/W)^2 (the impurity floor).
    """
    import numpy as np

    floor_tol = 16 * np.finfo(np.float64).eps  # rounding error of an impurity, relative to mean^2
    fa, ta, la, ra = _structure(a)
    fb, tb, lb, rb = _structure(b)
    nodes = ties = proxy_ties = 0
    split_ties = []
    stack = [(0, 0, np.arange(len(y)))]
    while stack:
        i, j, rows = stack.pop()
        nodes += 1
        leaf_a, leaf_b = la[i] < 0, lb[j] < 0
        if leaf_a and leaf_b:
            continue
        if leaf_a != leaf_b:
            assert _exact_impurity(y[rows]) <= floor_tol * max(1.0, float(np.mean(y[rows])) ** 2), (
                f"leaf / split mismatch on a node of {len(rows)} rows"
            )
            ties += 1
            continue
        left_a = _goes_left(X32, rows, a, i)
        if fa[i] == fb[j] and ta[i] == tb[j]:
            # one split: without missing values in the node, where a missing value goes is
            # decided by the rows' counts, the same in both (a search decides it otherwise)
            same = a.missing_go_to_left[i] == b.missing_go_to_left[j]
            assert same or np.isnan(X32[rows, fa[i]]).any(), (
                f"missing values go {'left' if a.missing_go_to_left[i] else 'right'} "
                f"({names[0]}) and the other way ({names[1]}) on a node of {len(rows)} rows"
            )
            if same:
                stack.append((la[i], lb[j], rows[left_a]))
                stack.append((ra[i], rb[j], rows[~left_a]))
                continue
        left_b = _goes_left(X32, rows, b, j)
        if np.array_equal(left_a, left_b):
            children = "same"
            stack.append((la[i], lb[j], rows[left_a]))
            stack.append((ra[i], rb[j], rows[~left_a]))
        elif np.array_equal(left_a, ~left_b):
            children = "crossed"
            stack.append((la[i], rb[j], rows[left_a]))
            stack.append((ra[i], lb[j], rows[~left_a]))
        else:
            children = "other"
            (g_a, p_a), (g_b, p_b) = _exact_gain(y[rows], left_a), _exact_gain(y[rows], left_b)
            if abs(g_a - g_b) > TIE_RTOL * max(abs(g_a), abs(g_b)):
                proxy_ties += 1
            assert abs(g_a - g_b) <= TIE_RTOL * max(abs(p_a), abs(p_b)), (
                f"different splits, gains {float(g_a)!r} ({names[0]}, feature {fa[i]}) and"
                f" {float(g_b)!r} ({names[1]}, feature {fb[j]}) on a node of {len(rows)} rows"
            )
        ties += 1
        split_ties.append((int(i), int(j), children))
    return TreeMatch(nodes, ties, proxy_ties, split_ties)


@pytest.fixture(scope="session")
def compare_trees():
    """``compare_trees(X32, y, a, b, names=("scikit-learn", "exact")) -> TreeMatch``: two trees
    grown on the same rows and target, equal up to genuine ties (see :func:`_compare_trees`)."""
    return _compare_trees


@pytest.fixture
def curve_frame():
    """Build one stored synthetic curve (the columns
    :func:`proxboost.experiments.store.results.load_curves` returns).

    ``curve_frame(experiment, loss, algo, depth, train, test=None, step=None, seed=0, tie_rule=None,
    seconds=None, n_leaves=None, learning_rate=0.05)``; ``train`` (and ``test``) give C(f_t) for t =
    0..T.
    """
    import math

    import numpy as np
    import pandas as pd

    def make(
        experiment,
        loss,
        algo,
        depth,
        train,
        test=None,
        step=None,
        seed=0,
        tie_rule=None,
        seconds=None,
        n_leaves=None,
        learning_rate=0.05,
    ):
        train = np.asarray(train, float)
        T = len(train) - 1
        df = pd.DataFrame(
            {
                "iteration": np.arange(T + 1),
                "seconds": (
                    np.linspace(0, 1, T + 1) if seconds is None else np.asarray(seconds, float)
                ),
                "train_loss": train,
                "test_loss": train * 1.1 if test is None else np.asarray(test, float),
                "experiment": experiment,
                "dataset": "x",
                "loss": loss,
                "algo": algo,
                "max_depth": depth,
                "step": math.nan if step is None else step,
                "learning_rate": learning_rate,
                "n_estimators": T,
                "seed": seed,
                "engine": "exact",
                "commit": "c0ffee",
            }
        )
        if tie_rule is not None:
            df["tie_rule"] = tie_rule
        if n_leaves is not None:
            df["n_leaves"] = np.asarray(n_leaves, float)
        return df

    return make


@pytest.fixture
def classification_rows():
    """Stored rows of one classification dataset as the full protocol writes them.

    ``classification_rows(dataset="spam", n_splits=20, seed=0)``: the six boosting methods and
    XGBoost under ``exponential`` and ``hinge`` (loss and error); random forests, LightGBM and
    HistGradientBoosting once per split, under ``exponential``, error only (test loss NaN). Values
    are random draws, different per loss, so a shared row paired with the wrong loss shows.
    """
    import numpy as np
    import pandas as pd

    boosting = (
        "gradient",
        "prox",
        "residual_gradient",
        "residual_prox",
        "accelerated_gradient",
        "accelerated_prox",
        "xgboost",
    )
    once = ("random_forest", "lightgbm", "sklearn_hgb")

    def make(dataset="spam", n_splits=20, seed=0, protocol="paper/20splits/T1000"):
        rng = np.random.default_rng(seed)
        rows = []
        for loss in ("exponential", "hinge"):
            for algo in boosting + (once if loss == "exponential" else ()):
                for k in range(n_splits):
                    rows.append(
                        dict(
                            protocol=protocol,
                            dataset=dataset,
                            loss=loss,
                            algo=algo,
                            split=k,
                            engine="exact" if algo in boosting[:6] else "none",
                            task="classification",
                            test_loss=rng.uniform(0.2, 0.6) if algo in boosting else np.nan,
                            test_error=rng.uniform(0.04, 0.08),
                            fit_seconds=1.0 + k,
                            refit_seconds=0.5,
                        )
                    )
        return pd.DataFrame(rows)

    return make
