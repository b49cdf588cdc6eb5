"""Monotone constraints (``monotonic_cst``): every tree's leaf values made monotone in the
constrained features, whatever the loss, the algorithm and the engine (``docs/quantiles.md``).

A feature of constraint +1 (-1) must never make a prediction decrease (increase) when it grows,
all other features fixed. Each iteration:

1. **Growing** (the engines): the tree on the direction is grown as scikit-learn's
   ``DecisionTreeRegressor(monotonic_cst=...)`` grows it — a candidate split on a constrained
   feature is rejected when the children's means (direction units) leave the node's bounds or
   come in the wrong order, and the children of a constrained split are bounded at the mean of
   their two means (``engines/_nodes.py``). The tree's least-squares fit g (``fit`` in the
   boosting loop: the ``authors`` tie rule, the residual Delta and the "a leaf whose fit is 0
   keeps 0" rule read it) stays the unclipped leaf means.
2. **Bounds pass** (:func:`leaf_bounds`, this module), top down over the grown tree, in value
   units: at a split on a constrained feature, the two children's values are line-searched
   under the node's bounds [lo, hi]; the children are bounded at their midpoint m (+1: the left
   child in [lo, m], the right one in [m, hi]; -1: the other way round). Every other child
   inherits its parent's bounds. **A split whose two line-searched values come in the wrong
   order is kept**, and bounded at the node's own bounded line-searched value instead of the
   midpoint: for two leaves that is exactly the constrained optimum (both take the value of
   their union, which is what rejecting — pruning — the split would give), and a deeper split
   keeps its structure below (pruning would discard it).
3. **Leaves**: each leaf's line search is solved under its bounds (the losses'
   ``bounded_line_search``); a leaf whose fit g is exactly 0 takes the point of its bounds
   nearest 0.

Why every tree is monotone: take two rows that differ only in a constrained feature x_j (+1),
x_j < x'_j. Their paths share every node up to the first split on x_j (the other splits see
the same values), where x goes left and x' right. The bounds only shrink down the tree, so every
leaf below the left child lies in [lo, m] and every leaf below the right child in [m, hi]:
value(x) <= m <= value(x'). The model f_0 + sum_t w_t nu c_t has positive weights (shrinkage,
Nesterov's model weights), so every stage f_t is monotone too (``predict``, exactly in floating
point: rounding is monotone; ``staged_predict`` of the accelerated algorithms follows Nesterov's
recursion, whose differences may move a stage by a few ulps against the constraint). Rows with a
missing value in x_j are unconstrained (no place on x_j's axis), as in scikit-learn: they take
the side each split sends them to and count in that child's mean; a split may send them alone
right (threshold +inf), never alone left, so such a row predicts at least its prediction with x_j
below every threshold (+1), and possibly more than with any value (``docs/quantiles.md``).

Several quantiles (``tau=[...]``, :mod:`proxboost._multi_quantile`): the bounds are per level,
and every line search above is the joint one of the K levels under the non-crossing
constraints c_k - c_k-1 >= b_k. The bound vectors then satisfy those constraints themselves:
the root's are infinite; a midpoint of two feasible value vectors is feasible (the constraints
are linear), and so is a node's own joint value. So at every leaf the two constraint sets always
intersect (the lower bound vector is in both) and the joint bounded solve is exact
(``MultiQuantile.bounded_line_search``): every level is monotone and no two levels cross.

Cost per tree: at most two line searches per level over the rows below the constrained splits
of that level, and one over the leaves: O(n * depth); the bookkeeping is over the tree's nodes.
"""

from __future__ import annotations

from numbers import Real

import numpy as np


def check_monotonic_cst(monotonic_cst, n_features, feature_names=None):
    """The constraints of a fit as an int8 array of shape (n_features,), or None when there are
    none (None, or all zeros: the unconstrained fit, bit for bit).

    ``monotonic_cst``: None, one of -1, 0, 1 per feature, or a dict {feature name: -1, 0, 1}
    (scikit-learn's ``HistGradientBoostingRegressor`` convention; names from
    ``feature_names``, the fitted ``feature_names_in_``). The values were checked by the
    estimator's parameter constraint; here, against the data. Raises one line otherwise.
    """
    if monotonic_cst is None:
        return None
    if isinstance(monotonic_cst, dict):
        if feature_names is None:
            raise ValueError(
                "monotonic_cst is a dict of feature names but X has none: fit on a DataFrame"
                " with column names, or give one of -1, 0, 1 per feature as a list"
            )
        names = [str(name) for name in feature_names]
        unknown = sorted(set(monotonic_cst) - set(names))
        if unknown:
            raise ValueError(
                f"monotonic_cst names features X does not have: {unknown[:5]}"
                f"{' ...' if len(unknown) > 5 else ''}; X's features are {names[:10]}"
                f"{' ...' if len(names) > 10 else ''}"
            )
        cst = np.array([monotonic_cst.get(name, 0) for name in names], dtype=np.int8)
    else:
        cst = np.asarray(monotonic_cst).astype(np.int8)
        if cst.shape != (n_features,):
            raise ValueError(
                f"monotonic_cst has {cst.size} values but X has {n_features} features: give one"
                " of -1, 0, 1 per feature"
            )
    return cst if np.any(cst != 0) else None


def valid_constraint(value) -> bool:
    """Whether ``value`` is one constraint: -1, 0 or 1 (a number, not a bool)."""
    return (
        isinstance(value, (Real, np.integer, np.floating))
        and not isinstance(value, (bool, np.bool_))
        and value in (-1, 0, 1)
    )


def tree_structure(tree):
    """(feature, left, right, leaf_of_node) node arrays of a tree of any engine: root 0, children
    after their parent, ``left == -1`` at leaves, ``leaf_of_node`` the leaf id of a leaf node."""
    if hasattr(tree, "tree_"):  # the sklearn engine: scikit-learn's own arrays
        t = tree.tree_
        return t.feature, t.children_left, t.children_right, tree.node_to_leaf
    return tree.feature, tree.left, tree.right, tree.leaf_of_node


def leaf_bounds(tree, leaf_ids, cst, solve, n_levels=None):
    """The bounds (lower, upper) of every leaf's value (module docstring, "Bounds pass"), arrays
    of shape (n_leaves,), or (n_leaves, n_levels) with several quantile levels.

    ``leaf_ids``: the fitted rows' leaves; ``cst``: int8 constraints per feature;
    ``solve(groups, n_groups, lower, upper)``: the bounded line-search values of groups of rows
    (``groups``: each row's group, -1 for rows in none; ``lower``, ``upper``: per group), shape
    (n_groups,) or (n_groups, n_levels).
    """
    feature, left, right, leaf_of_node = (np.asarray(a) for a in tree_structure(tree))
    n_nodes = len(left)
    internal = left >= 0
    splits = np.flatnonzero(internal)
    parent = np.full(n_nodes, -1)
    parent[left[splits]] = splits
    parent[right[splits]] = splits
    depth = np.zeros(n_nodes, dtype=np.intp)
    above = parent.copy()
    while np.any(above >= 0):
        depth += above >= 0
        above = np.where(above >= 0, parent[np.maximum(above, 0)], -1)
    leaf_nodes = np.flatnonzero(~internal)
    node_of_leaf = np.empty(len(leaf_nodes), dtype=np.intp)
    node_of_leaf[leaf_of_node[leaf_nodes]] = leaf_nodes
    # path[d, leaf]: the leaf's ancestor at depth d (the leaf itself below its own depth)
    path = np.empty((depth.max() + 1, len(node_of_leaf)), dtype=np.intp)
    node = node_of_leaf.copy()
    for d in range(depth.max(), -1, -1):
        path[d] = node
        node = np.where(depth[node] == d, parent[node], node)
    shape = (n_nodes,) if n_levels is None else (n_nodes, n_levels)
    lower, upper = np.full(shape, -np.inf), np.full(shape, np.inf)
    sign = np.zeros(n_nodes, dtype=np.int8)
    sign[splits] = cst[feature[splits]]
    for d in range(depth.max()):
        level = np.flatnonzero(internal & (depth == d))
        for child in (left[level], right[level]):  # inherited, unless set below
            lower[child], upper[child] = lower[level], upper[level]
        constrained = level[sign[level] != 0]
        if len(constrained):
            _split_bounds(
                constrained, (left, right, sign), (lower, upper), path[d : d + 2], leaf_ids, solve
            )
    return lower[node_of_leaf], upper[node_of_leaf]


def _split_bounds(nodes, children, bounds, paths, leaf_ids, solve):
    """Bound the children of the constrained split ``nodes`` (all at one depth; ``paths``: the
    leaves' ancestors at that depth and the next): at the midpoint of their bounded values, or
    at the node's own bounded value where those come in the wrong order."""
    left, right, sign = children
    lower, upper = bounds
    m = len(nodes)
    kids = np.concatenate([left[nodes], right[nodes]])
    at_node, at_child = paths[0][leaf_ids], paths[1][leaf_ids]
    group = np.full(len(left), -1)
    group[kids] = np.arange(2 * m)
    is_split = np.zeros(len(left), dtype=bool)
    is_split[nodes] = True
    rows = np.where(is_split[at_node], group[at_child], -1)
    node_lower, node_upper = lower[nodes], upper[nodes]
    values = solve(rows, 2 * m, np.concatenate([node_lower] * 2), np.concatenate([node_upper] * 2))
    v_left, v_right = values[:m], values[m:]
    s = sign[nodes].reshape((m,) + (1,) * (values.ndim - 1))
    wrong = s * (v_left - v_right) > 0.0
    if values.ndim > 1:
        wrong = np.any(wrong, axis=1)  # several levels: the split's value vectors, jointly
    mid = 0.5 * (v_left + v_right)
    if np.any(wrong):
        group[:] = -1
        group[nodes[wrong]] = np.arange(int(wrong.sum()))
        own = solve(group[at_node], int(wrong.sum()), node_lower[wrong], node_upper[wrong])
        mid[wrong] = own
    up = sign[nodes] > 0
    upper[left[nodes[up]]] = mid[up]
    lower[right[nodes[up]]] = mid[up]
    lower[left[nodes[~up]]] = mid[~up]
    upper[right[nodes[~up]]] = mid[~up]
