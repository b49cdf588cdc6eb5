"""Kernels of the exact engine (:mod:`proxboost.engines.exact`), one module per concern as in
scikit-learn's ``_hist_gradient_boosting``: ``records`` (the named records the kernels share),
``binning`` (codes and sorted orders of the training rows), ``histogram`` (per-node bin sums),
``splitting`` (the best split of a node), ``grower`` (the node loop) and ``predictor`` (rows to
leaves)."""
