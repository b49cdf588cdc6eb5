"""Monotone constraints (``monotonic_cst``): the bounds that make every tree monotone.

A tree's contribution is monotone in a feature f with constraint +1 (non-decreasing) when, at
every node split on f, every leaf value of its left subtree is at most every leaf value of its
right subtree (−1: at least). scikit-learn bounds the children of such a node at the midpoint of
their two values (its ``_tree`` and HistGradientBoosting's grower); here the values are the
children's line-searched values — the leaf values boosting actually adds, whose units are those
of F (the trees' least-squares means are in the units of the direction, not of F):

* top-down over the tree, a node split on a constrained feature line-searches its two children
  (each over all the rows of its subtree, within the node's own bounds), and bounds the left
  child's subtree by [lower, mid] and the right one's by [mid, upper] (+1; −1 the other way),
  mid being the midpoint of the two values; a node split on another feature passes its bounds
  on to both children;
* each leaf's value is then its line search solved within its bounds
  (:meth:`proxboost.losses.Loss.bounded_line_search`).

Every value of the left subtree is then at most mid and every value of the right one at least
mid, whatever order the two children's values came in: the tree is monotone by construction,
and so is the model, a sum of trees with positive weights. A split whose children's values come
in the wrong order is kept, its leaves bounded at the midpoint (its two sides then often take
the same value). The trees themselves are grown as without constraints. Cost: one bounded line
search per tree level holding a constrained split, O(n) each.
"""

from __future__ import annotations

import numpy as np


def check_monotonic_cst(monotonic_cst, n_features, feature_names=None) -> np.ndarray | None:
    """The constraints as an int8 array of length ``n_features`` (None: no constraint), from a
    sequence of -1 / 0 / 1 per feature or a dict {feature name: -1 / 0 / 1} (features not named
    are unconstrained; needs X with feature names). Raises ``ValueError`` with one line."""
    if monotonic_cst is None:
        return None
    if isinstance(monotonic_cst, dict):
        if feature_names is None:
            raise ValueError(
                "monotonic_cst is a dict of feature names, but X has no feature names: pass a "
                "pandas DataFrame, or a list of -1/0/1 per feature"
            )
        names = list(feature_names)
        unknown = [k for k in monotonic_cst if k not in names]
        if unknown:
            raise ValueError(
                f"monotonic_cst names features that X does not have: {unknown[:3]}; "
                f"X's features are {names[:5]}{'...' if len(names) > 5 else ''}"
            )
        cst = np.zeros(n_features, dtype=np.int8)
        for name, value in monotonic_cst.items():
            cst[names.index(name)] = _one_value(value)
        return cst
    values = np.asarray(monotonic_cst, dtype=object).ravel()
    if len(values) != n_features:
        raise ValueError(
            f"monotonic_cst has {len(values)} values and X has {n_features} features: give "
            "one of -1, 0, 1 per feature"
        )
    cst = np.array([_one_value(v) for v in values], dtype=np.int8)
    return None if not cst.any() else cst


def _one_value(value) -> int:
    if isinstance(value, (bool, np.bool_)) or value not in (-1, 0, 1):
        raise ValueError(
            f"monotonic_cst value {value!r} is not allowed: use -1 (non-increasing), "
            "0 (no constraint) or 1 (non-decreasing)"
        )
    return int(value)


def tree_nodes(tree):
    """(feature, left, right, leaf_of_node) node arrays of a tree of any engine (root 0; a
    leaf has ``left == -1`` and its leaf id in ``leaf_of_node``)."""
    if hasattr(tree, "tree_"):  # scikit-learn's tree (engine="sklearn")
        t = tree.tree_
        return t.feature, t.children_left, t.children_right, tree.node_to_leaf
    return tree.feature, tree.left, tree.right, tree.leaf_of_node


def leaf_bounds(tree, leaf_ids, cst, solve, n_levels=None):
    """(lower, upper) bounds of each leaf of ``tree`` (see the module docstring).

    ``leaf_ids``: the fitted rows' leaves; ``cst``: the constraint per feature;
    ``solve(group_ids, n_groups, (lower, upper))``: bounded line-searched values of row groups
    (every row in a group; ``group_ids`` -1 for rows outside every group). Several quantile
    levels (``n_levels``): bounds and values have one column per level, and each midpoint is
    made non-decreasing over the levels (then clipped to the node's bounds, themselves ordered
    so), so that every leaf's intervals are ordered like the levels: clipping ordered values
    into ordered intervals keeps them ordered, and the levels cannot cross.
    """
    feature, left, right, leaf_of_node = (np.asarray(a) for a in tree_nodes(tree))
    n_nodes = len(left)
    shape = n_nodes if n_levels is None else (n_nodes, n_levels)
    lower = np.full(shape, -np.inf)
    upper = np.full(shape, np.inf)
    # each row's node at the current depth, starting from the root
    leaf_node = np.empty(int(leaf_of_node.max()) + 1, dtype=np.intp)
    is_leaf = left < 0
    leaf_node[leaf_of_node[is_leaf]] = np.flatnonzero(is_leaf)
    parent = np.full(n_nodes, -1, dtype=np.intp)
    internal = np.flatnonzero(~is_leaf)
    parent[left[internal]] = internal
    parent[right[internal]] = internal
    # the path of every leaf, root first: rows follow their leaf's path one level at a time
    paths = [_path(node, parent) for node in leaf_node]
    depth = max(len(p) for p in paths)
    at_level = np.array([[p[min(d, len(p) - 1)] for d in range(depth)] for p in paths])
    for d in range(depth - 1):
        nodes = np.unique(at_level[:, d])
        split = nodes[left[nodes] >= 0]
        if split.size == 0:
            break
        for child_of in (left, right):  # unconstrained splits pass their bounds on
            lower[child_of[split]] = lower[split]
            upper[child_of[split]] = upper[split]
        constrained = split[cst[feature[split]] != 0]
        if constrained.size == 0:
            continue
        children = np.concatenate([left[constrained], right[constrained]])
        group_of_node = np.full(n_nodes, -1, dtype=np.intp)
        group_of_node[children] = np.arange(children.size)
        row_node = at_level[leaf_ids, d + 1]
        groups = group_of_node[row_node]
        bounds = (
            np.concatenate([lower[constrained]] * 2),
            np.concatenate([upper[constrained]] * 2),
        )
        # within the bounds, whatever rounding the solver's last operation did (a mean of
        # bounded values can round past the bound): nested midpoints then never cross
        values = np.clip(solve(groups, children.size, bounds), *bounds)
        v_left, v_right = values[: constrained.size], values[constrained.size :]
        mid = 0.5 * (v_left + v_right)
        if n_levels is not None:  # ordered over the levels, within the node's (ordered) bounds
            mid = np.clip(
                np.maximum.accumulate(mid, axis=1), lower[constrained], upper[constrained]
            )
        increasing = cst[feature[constrained]] > 0
        low_side = np.where(increasing, left[constrained], right[constrained])
        high_side = np.where(increasing, right[constrained], left[constrained])
        upper[low_side] = mid
        lower[high_side] = mid
    return lower[leaf_node], upper[leaf_node]


def _path(node, parent):
    path = [node]
    while parent[path[-1]] >= 0:
        path.append(parent[path[-1]])
    return path[::-1]
