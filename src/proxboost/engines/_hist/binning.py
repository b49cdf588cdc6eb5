"""Binning of the hist engine: per feature at most ``max_bins`` bins, one per distinct value or
quantile bins with heavy values on their own, and a bin of its own for the missing values (see
:mod:`proxboost.engines.hist`). Pure numpy, once per fit."""

import numpy as np


def midpoints(a, b):
    """scikit-learn's threshold between consecutive values: a/2 + b/2, or a if that rounds to b."""
    mid = a / 2.0 + b / 2.0
    return np.where(mid == b, a, mid)


def fit_feature(col, max_bins, weight=None):
    """Edges, bin codes, representative values of one training column (weighted counts) and
    whether it holds missing values (NaN).

    The edges come from the values that are not missing; a missing value's code is the bin after
    the values' (``len(edges) + 1``, at most 255 with at most 255 value bins).
    """
    missing = np.isnan(col)
    if not missing.any():
        return (*fit_values(col, max_bins, weight), False)
    edges, codes, rep = fit_values(
        col[~missing], max_bins, None if weight is None else weight[~missing]
    )
    out = np.full(len(col), len(edges) + 1, dtype=np.int64)
    out[~missing] = codes
    return edges, out, rep, True


def fit_values(col, max_bins, weight=None):
    """Edges, bin codes and representative values of a column of values (weighted counts).

    With ``weight``, the distinct values and counts come from the same sort of the whole column
    as without (no second sort of the positive-weight rows): the counts are the weights' sums
    per distinct value, and the values whose rows all have weight 0 are dropped before the edges
    are placed, so they make no edge and no representative value.
    """
    uniq, inverse, counts = np.unique(col, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    if weight is None:
        edges, bin_of_uniq, rep = edges_of(uniq, counts, len(col), max_bins)
        return edges, (inverse if bin_of_uniq is None else bin_of_uniq[inverse]), rep
    counts = np.bincount(inverse, weights=weight, minlength=len(uniq))
    seen = counts > 0
    if seen.all():  # every value has positive weight: the unweighted steps on weighted counts
        edges, bin_of_uniq, rep = edges_of(uniq, counts, None, max_bins)
        return edges, (inverse if bin_of_uniq is None else bin_of_uniq[inverse]), rep
    edges, _, rep = edges_of(uniq[seen], counts[seen], None, max_bins)
    # bin of each distinct value = number of edges below it (searchsorted(edges, uniq), counted
    # from where each edge falls among the sorted values: O(#values), not O(#values log #edges))
    first_above = np.searchsorted(uniq, edges, side="right")
    bin_of_uniq = np.cumsum(np.bincount(first_above, minlength=len(uniq) + 1)[: len(uniq)])
    return edges, bin_of_uniq[inverse], rep


def edges_of(uniq, counts, n, max_bins):
    """Edges, bin of each distinct value (None: one bin each) and representative value per bin.

    ``uniq``: sorted distinct values, ``counts``: their (weighted) counts, ``n``: their total
    (None: summed here).
    """
    if len(uniq) <= max_bins:
        return midpoints(uniq[:-1], uniq[1:]), None, uniq.copy()
    n = counts.sum() if n is None else n
    cum = np.cumsum(counts)
    heavy = np.flatnonzero(counts >= n / max_bins)  # values worth a bin of their own
    n_quantile = max_bins - 2 * len(heavy)
    if n_quantile < 2:
        heavy, n_quantile = heavy[:0], max_bins
    targets = np.arange(1, n_quantile) * (n / n_quantile)
    cut = np.searchsorted(cum, targets, side="left")  # an edge right after uniq[cut]
    cut = np.unique(np.concatenate([cut, heavy - 1, heavy]))
    cut = cut[(cut >= 0) & (cut < len(uniq) - 1)]
    edges = midpoints(uniq[cut], uniq[cut + 1])
    bin_of_uniq = np.searchsorted(edges, uniq, side="left")
    n_bins = len(edges) + 1
    lo = np.full(n_bins, np.inf)
    hi = np.full(n_bins, -np.inf)
    np.minimum.at(lo, bin_of_uniq, uniq)
    np.maximum.at(hi, bin_of_uniq, uniq)
    return edges, bin_of_uniq, lo / 2.0 + hi / 2.0
