"""Tree engines: grow one regression tree on a target, map rows to leaf ids.

An engine is the only part of proxboost that knows how trees are grown. The boosting loop
(:mod:`proxboost.boosting`) talks to it through three calls and owns the leaf values:

``engine.prepare(X, fit=True)``
    Convert the feature matrix once per fit (float32 for ``exact``; bins for ``hist``). With
    ``fit=True`` the engine learns whatever it needs from X (e.g. bin edges); new data is then
    prepared with ``fit=False`` and the learned state.
``engine.grow(Xp, target, max_depth, random_state) -> (leaf_ids, tree)``
    Fit one least-squares regression tree on ``target`` (float64, shape (n,)) and return the
    training rows' leaf ids (int, compact in ``0 .. tree.n_leaves - 1``) and a small object.
``tree.apply(Xp) -> leaf_ids``
    Leaf ids of (prepared) rows, same numbering as ``grow``.

Engines are picklable and deterministic for a given input and random state.
"""

from .exact import ExactEngine

ENGINES = {"exact": ExactEngine}


def _register_hist():
    try:
        from .hist import HistEngine  # noqa: F401  (optional: needs numba)
    except ImportError:  # pragma: no cover - numba is a declared dependency
        return
    ENGINES["hist"] = HistEngine


_register_hist()


def make_engine(name):
    """Return a new engine instance by name (``"exact"`` or ``"hist"``)."""
    if name not in ENGINES:
        raise ValueError(
            f"engine={name!r} is not a known tree engine; allowed values: {sorted(ENGINES)}"
        )
    return ENGINES[name]()


__all__ = ["ENGINES", "ExactEngine", "make_engine"]
