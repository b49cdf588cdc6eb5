"""The exact engine: scikit-learn's ``DecisionTreeRegressor`` (SPEC §3)."""

import numpy as np
from sklearn.tree import DecisionTreeRegressor
DTYPE = np.float32  # scikit-learn trees work on float32 features internally


class ExactTree:
    """A fitted scikit-learn tree reduced to what boosting needs: rows -> compact leaf ids."""

    def __init__(self, tree_, node_to_leaf, n_leaves):
        self.tree_ = tree_
        self.node_to_leaf = node_to_leaf
        self.n_leaves = n_leaves

    def apply(self, Xp):
        return self.node_to_leaf[self.tree_.apply(Xp)]


class ExactEngine:
    """Grow trees with ``DecisionTreeRegressor(criterion="squared_error", splitter="best")``.

    X is converted once per fit to C-contiguous float32 (scikit-learn's internal dtype), so
    that each tree is fitted with ``check_input=False`` and no per-iteration copy.
    """

    name = "exact"

    def prepare(self, X, fit=False):
        return np.ascontiguousarray(X, dtype=DTYPE)

    def grow(self, Xp, target, max_depth, random_state=None):
        reg = DecisionTreeRegressor(
            criterion="squared_error", max_depth=max_depth, random_state=random_state
        )
        reg.fit(Xp, target, check_input=False)
        tree_ = reg.tree_
        is_leaf = tree_.children_left == -1
        node_to_leaf = np.full(tree_.node_count, -1, dtype=np.intp)
        n_leaves = int(is_leaf.sum())
        node_to_leaf[is_leaf] = np.arange(n_leaves)
        tree = ExactTree(tree_, node_to_leaf, n_leaves)
        return tree.apply(Xp), tree
