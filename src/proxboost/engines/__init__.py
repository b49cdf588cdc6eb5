"""Tree engines: grow one regression tree on a target, map rows to leaf ids.

An engine is the only part of proxboost that knows how trees are grown. The boosting loop
(:mod:`proxboost.boosting`) talks to it through three calls and owns the leaf values:

``engine.prepare(X, fit=False, sample_weight=None)``
    Convert the feature matrix once per fit (float32 for ``sklearn``; float32 plus codes and
    sorted orders for ``exact``; bins for ``hist``). With
    ``fit=True`` the engine learns whatever it needs from X (e.g. bin edges; from the rows of
    positive weight when ``sample_weight`` is given); new data is then prepared with
    ``fit=False`` and the learned state.
``engine.grow(Xp, target, max_depth, random_state=None, sample_weight=None) -> (leaf_ids, tree)``
    Fit one least-squares regression tree on ``target`` (float64, shape (n,)), with optional
    non-negative row weights (rows of weight 0 take no part in the split search), and return
    every training row's leaf id (int, compact in ``0 .. tree.n_leaves - 1``) and a small object.
``tree.apply(Xp) -> leaf_ids``
    Leaf ids of (prepared) rows, same numbering as ``grow``.

Each tree also carries, per internal node, ``tree.split_feature`` (int) and ``tree.split_gain``
(float64): the weighted impurity decrease ``(W_node imp_node - W_left imp_left - W_right
imp_right) / W_root``, so that ``np.bincount(split_feature, split_gain, minlength=p)`` is the
tree's unnormalised feature importance. How each engine grows its trees: ``docs/engines.md``.

Engines are picklable and deterministic for a given input and random state.
"""

from proxboost.engines.exact import ExactEngine
from proxboost.engines.hist import HistEngine
from proxboost.engines.sklearn import SklearnEngine

ENGINES = {"exact": ExactEngine, "hist": HistEngine, "sklearn": SklearnEngine}


def make_engine(name, n_jobs=None):
    """Return a new engine instance by name (one of ``ENGINES``), its ``n_jobs`` attribute set:
    the threads of the exact and hist engines' kernels (scikit-learn's rule, None: one; the same
    trees for any value); the sklearn engine grows on one thread whatever its value."""
    if name not in ENGINES:
        raise ValueError(
            f"engine={name!r} is not a known tree engine; allowed values: {sorted(ENGINES)}"
        )
    engine = ENGINES[name]()
    engine.n_jobs = n_jobs
    return engine


__all__ = ["ENGINES", "ExactEngine", "HistEngine", "SklearnEngine", "make_engine"]
