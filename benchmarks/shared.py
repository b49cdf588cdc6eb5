"""What the benchmark scripts share: the run's stamp (commit, machine, load), writing a measured
table into a docs page between two markers (``--write-docs``), and LightGBM's parameters for the
trees proxboost grows.

The scripts run as ``python benchmarks/<script>.py``, so this module is imported from their own
folder (not part of the package)."""

import os
import platform
import subprocess
from pathlib import Path

from proxboost.experiments.report.docs_block import write_block

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def commit() -> str:
    """The checkout's short commit, "unknown" outside git."""
    out = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO
    )
    return out.stdout.strip() or "unknown"


def machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


#: Speed ratios count only when the 1-minute load average before them is below this, on the
#: 2-core machine (docs/engines.md says why).
MAX_LOAD = 1.5


def load() -> float:
    """The 1-minute load average."""
    return os.getloadavg()[0]


def write_between_markers(page: str, marker: str, text: str) -> None:
    """Replace what lies between ``<!-- marker -->`` and ``<!-- /marker -->`` in ``docs/<page>``
    by ``text`` (the package's ``write_block``, which the report commands use too); exits with
    one line when the page lacks the two markers."""
    write_block(Path(REPO) / "docs" / page, marker, text)
    print(f"wrote the table into docs/{page}")


def lightgbm_params(depth, learning_rate, **objective) -> dict:
    """LightGBM's parameters for proxboost's trees of ``depth``: num_leaves = 2^depth, leaves of
    one row allowed, 255 bins, one thread, deterministic; ``objective`` gives the objective
    (and its metric or level, or a default it overrides), e.g. ``objective="l1"``."""
    defaults = dict(
        num_leaves=2**depth,
        max_depth=depth,
        max_bin=255,
        num_threads=1,
        min_data_in_leaf=1,
        min_sum_hessian_in_leaf=0.0,
        learning_rate=learning_rate,
        verbose=-1,
        feature_pre_filter=False,
        deterministic=True,
    )
    return {**defaults, **objective}


def exact_tree_inputs(dataset, depth):
    """What the tree benchmarks grow: the ``exact`` engine's in-loop record for trees of ``depth``
    on split 0's training half of ``dataset``, a Gaussian target (unit weights) and that half's
    shape. Imports proxboost only when called (``profile_tree.py`` sets numba's cache first)."""
    import numpy as np

    from proxboost.engines import make_engine
    from proxboost.experiments.datasets import load_dataset
    from proxboost.experiments.plan.protocol import split_indices

    X, _, _ = load_dataset(dataset)
    train, _, _ = split_indices(X.shape[0], 0)
    engine = make_engine("exact")
    _, _, record, _ = engine.compiled(engine.prepare(X[train], fit=True), depth, None)
    target = np.random.default_rng(0).normal(size=len(train))
    return record, target, X[train].shape
