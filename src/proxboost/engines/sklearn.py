"""The scikit-learn engine: trees grown by scikit-learn's ``DecisionTreeRegressor`` (reference).

``engine="sklearn"`` fits ``DecisionTreeRegressor(criterion="squared_error", max_depth=D)`` on
float32 features. It is the reference the compiled engines are tested against (see
``docs/engines.md``); it is 60-100x slower than them.

Missing values (NaN): each tree is fitted with ``check_input=False`` (no per-tree copy or
check), which also skips scikit-learn's computation of the features holding NaN; without it
the splitter would sort NaN among the values. The engine computes that mask once per fit
(``prepare(X, fit=True)``) and hands it to each fit through the private
``BaseDecisionTree._fit(..., missing_values_in_feature_mask=...)`` (the one private name used
here; where a scikit-learn release lacks it, the trees of data with NaN are fitted with
``check_input=True`` instead, which computes the same mask per tree).
"""

import inspect

import numpy as np
from sklearn.tree import DecisionTreeRegressor

#: Whether this scikit-learn's private ``_fit`` takes the missing-value mask.
_FIT_TAKES_MASK = (
    "missing_values_in_feature_mask" in inspect.signature(DecisionTreeRegressor._fit).parameters
)

DTYPE = np.float32  # scikit-learn trees work on float32 features internally


def node_gains(tree_):
    """Per internal node of a scikit-learn ``tree_``: (split feature, weighted impurity decrease).

    gain = (W_node imp_node - W_left imp_left - W_right imp_right) / W_root, so that
    ``np.bincount(feature, gain, minlength=p)`` is ``tree_.compute_feature_importances(
    normalize=False)``.
    """
    left, right = tree_.children_left, tree_.children_right
    internal = np.flatnonzero(left != -1)
    w, imp = tree_.weighted_n_node_samples, tree_.impurity
    lc, rc = left[internal], right[internal]
    gain = (w[internal] * imp[internal] - w[lc] * imp[lc] - w[rc] * imp[rc]) / w[0]
    return tree_.feature[internal].astype(np.intp), gain.astype(np.float64)


class SklearnTree:
    """A fitted scikit-learn tree reduced to what boosting needs: rows -> compact leaf ids.

    ``split_feature`` / ``split_gain``: one entry per internal node (see :func:`node_gains`).
    """

    def __init__(self, tree_, node_to_leaf, n_leaves):
        self.tree_ = tree_
        self.node_to_leaf = node_to_leaf
        self.n_leaves = n_leaves
        self.split_feature, self.split_gain = node_gains(tree_)

    def apply(self, Xp):
        return self.node_to_leaf[self.tree_.apply(Xp)]


class SklearnEngine:
    """Grow trees with ``DecisionTreeRegressor(criterion="squared_error", splitter="best")``.

    X is converted once per fit to C-contiguous float32 (scikit-learn's internal dtype), so
    that each tree is fitted with ``check_input=False`` and no per-iteration copy; the features
    holding NaN are found then too (see the module docstring). With ``sample_weight``, the tree
    is fitted on the rows of positive weight only (rows of weight 0 take no part in the split
    search) and then applied to every row.
    """

    name = "sklearn"

    def __init__(self):
        self.missing_mask_ = None

    def prepare(self, X, fit=False, sample_weight=None):
        with np.errstate(over="ignore"):  # values beyond float32's range become inf: refused
            X32 = np.ascontiguousarray(X, dtype=DTYPE)
        if np.isinf(X32).any():  # also finite float64 values beyond float32's range
            raise ValueError(
                "X contains infinity (or values beyond float32's range, about 3.4e38): "
                "scikit-learn's tree splits float32 values and NaN (missing) only; rescale the "
                "features"
            )
        if fit:
            # scikit-learn's own mask (``_compute_missing_values_in_feature_mask``): None
            # without NaN, so that NaN-free data is fitted exactly as before
            mask = np.isnan(X32).any(axis=0) if X32.ndim == 2 else None
            self.missing_mask_ = mask if mask is not None and mask.any() else None
        return X32

    def _fit(self, reg, X, y, sample_weight):
        """``reg.fit`` without input checks, with the mask of the features holding NaN."""
        mask = getattr(self, "missing_mask_", None)
        if mask is None:
            reg.fit(X, y, sample_weight=sample_weight, check_input=False)
        elif _FIT_TAKES_MASK:
            reg._fit(
                X,
                y,
                sample_weight=sample_weight,
                check_input=False,
                missing_values_in_feature_mask=mask,
            )
        else:
            reg.fit(X, y, sample_weight=sample_weight, check_input=True)

    def grow(
        self, Xp, target, max_depth, random_state=None, sample_weight=None, monotonic_cst=None
    ):
        reg = DecisionTreeRegressor(
            criterion="squared_error",
            max_depth=max_depth,
            random_state=random_state,
            monotonic_cst=monotonic_cst,
        )
        if sample_weight is None:
            self._fit(reg, Xp, target, None)
        else:
            sample_weight = np.asarray(sample_weight, dtype=np.float64)
            if np.all(sample_weight > 0):  # no row to drop: no copy
                self._fit(reg, Xp, target, sample_weight)
            else:
                pos = np.flatnonzero(sample_weight > 0)
                self._fit(
                    reg,
                    np.ascontiguousarray(Xp[pos]),
                    np.asarray(target)[pos],
                    sample_weight[pos],
                )
        tree_ = reg.tree_
        is_leaf = tree_.children_left == -1
        node_to_leaf = np.full(tree_.node_count, -1, dtype=np.intp)
        n_leaves = int(is_leaf.sum())
        node_to_leaf[is_leaf] = np.arange(n_leaves)
        tree = SklearnTree(tree_, node_to_leaf, n_leaves)
        return tree.apply(Xp), tree
