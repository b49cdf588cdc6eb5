"""Kernels of the hist engine (:mod:`proxboost.engines.hist`), one module per concern as in
scikit-learn's ``_hist_gradient_boosting``: ``binning`` (edges and bin codes), ``histogram``
(per-node bin sums), ``splitting`` (the best split of a node), ``grower`` (the node loop, its
records) and ``predictor`` (rows to leaves)."""
