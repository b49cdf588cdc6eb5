"""``tie_rule="authors_float"``: the authors' public code's choices, in its floating point.

The authors' code (github msangnier/optboosting) states the rule that ``tie_rule="authors"``
applies in exact arithmetic, but computes it in floating point: per leaf it lists the unique
multipliers b = fl(u_i / g) (u_i = y_i - z_i, g the tree's fitted leaf value; for the hinge
fl((1 - y_i z_i) / (y_i g)), the same number), evaluates the leaf's mean loss at *every* one,
fl(sum / m) with the sum taken row by row in row order, takes the first ``argmin`` and writes
the leaf value fl(g * b). At an exact tie the two ends of the interval of minimisers then
differ by rounding (~1e-16), and rounding, not the rule, picks one. This module repeats those
operations with the same numpy expressions, so that the choice is the one their code makes.

What the rule takes from their code (``docs/method.md``, "Tie rules"):

* the leaf line search above, with g the tree's own leaf value (scikit-learn's ``tree_.value``
  with ``engine="sklearn"``; the other engines' least-squares leaf means);
* the proximal pseudo-residual as their code computes it, (prox(z) - z) / step, with their
  proximal operators (the absolute loss's has a 1e-15 guard: |u| is replaced by 1e-15 + |u|);
* f_0 as their code computes it: ``np.percentile(y, 100 tau)`` (lad: tau = 1/2) and
  ``np.sign(np.sum(y))`` (hinge).

Losses: ``lad``, ``pinball`` and ``hinge`` (the piecewise-linear losses, whose line search has
ties). On ``ls``, ``logistic`` and ``exponential`` the minimiser is unique and the rule changes
nothing (as the other rules). Row weights are refused: the authors' code has none.

Cost: a leaf of m rows with k distinct multipliers costs O(m k) (the authors' cost), against
O(m) for the other rules; the columns are evaluated in blocks to bound the memory.
"""

import numpy as np

#: The losses whose line search and proximal direction the rule reproduces.
FLOAT_LOSSES = ("lad", "pinball", "hinge")

_BLOCK = 512  # multipliers evaluated at once (memory m x _BLOCK)


def _tau(loss):
    return 0.5 if loss.name == "lad" else loss.tau


def _mean_losses(loss, y, z, g, b):
    """Mean loss of a leaf at each multiplier in b, as the authors' ``loss(y, z + outer(t, b))``.

    ``np.mean(..., axis=0)`` of an (m, k) C-contiguous array sums row by row (no pairwise
    summation across rows) when k >= 2; blocks keep at least 2 columns.
    """
    t = np.full(len(y), g)
    yc, zc = y.reshape(-1, 1), z.reshape(-1, 1)
    out = np.empty(len(b))
    starts = list(range(0, len(b), _BLOCK))
    if len(starts) > 1 and len(b) - starts[-1] < 2:
        starts.pop()  # the last block would have one column: merge it into the previous one
    for i, s in enumerate(starts):
        e = starts[i + 1] if i + 1 < len(starts) else len(b)
        zu = zc + np.outer(t, b[s:e])
        if loss.name == "hinge":
            out[s:e] = np.mean(np.fmax(0, 1 - (yc * zu)), axis=0)
        elif loss.name == "lad":
            out[s:e] = np.mean(np.abs(yc - zu), axis=0)
        else:
            q = loss.tau
            out[s:e] = np.mean(np.fmax(q * (yc - zu), (q - 1) * (yc - zu)), axis=0)
    return out


def line_search(loss, y, z, leaf_ids, n_leaves, leaf_values):
    """Leaf values c = fl(g * b) with b the authors' first ``argmin`` multiplier (module doc).

    A leaf with g = 0 (or no row) gets 0, as in their code.
    """
    if leaf_values is None:
        raise ValueError('tie_rule="authors_float" needs leaf_values (the tree\'s leaf values)')
    g_all = np.asarray(leaf_values, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    leaf_ids = np.asarray(leaf_ids)
    order = np.argsort(leaf_ids, kind="stable")  # rows grouped by leaf, in row order
    bounds = np.searchsorted(leaf_ids[order], np.arange(n_leaves + 1))
    c = np.zeros(int(n_leaves))
    for leaf in range(int(n_leaves)):
        ind = order[bounds[leaf] : bounds[leaf + 1]]
        g = g_all[leaf]
        if len(ind) == 0 or g == 0:
            continue
        yl, zl = y[ind], z[ind]
        if loss.name == "hinge":
            b = np.unique((1 - yl * zl) / (yl * g))
        else:
            b = np.unique((yl - zl) / g)
        best = b[np.argmin(_mean_losses(loss, yl, zl, g, b))]
        c[leaf] = g * best
    return c


def prox_residual(loss, y, z, step):
    """(prox(z) - z) / step with the authors' proximal operators (module doc)."""
    coef = step
    if loss.name == "lad":
        prox = np.fmax(0, 1 - coef / (1e-15 + np.abs(z - y))) * (z - y) + y
    elif loss.name == "pinball":
        q = loss.tau
        prox = (
            y
            + (y - z < coef * (q - 1)) * (z - y + coef * (q - 1))
            + (y - z > coef * q) * (z - y + coef * q)
        )
    else:
        prox = y + (y * z > 1) * (z - y) + (y * z < 1 - coef) * (z - y + y * coef)
    return (prox - z) / step


def init(loss, y):
    """f_0 as the authors' code computes it (their initial estimators)."""
    if loss.name == "hinge":
        return float(np.sign(np.sum(y)))
    return float(np.percentile(y, 100 * _tau(loss)))


def tree_leaf_values(tree, fit):
    """The tree's own fitted leaf values: scikit-learn's ``tree_.value`` when the tree has one
    (the authors' g, which can differ from the least-squares mean ``fit`` by rounding), else
    ``fit``."""
    tree_ = getattr(tree, "tree_", None)
    if tree_ is None:
        return fit
    g = np.zeros(tree.n_leaves)
    nodes = np.flatnonzero(tree.node_to_leaf >= 0)
    g[tree.node_to_leaf[nodes]] = tree_.value[nodes, 0, 0]
    return g
