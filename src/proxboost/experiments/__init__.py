"""The experiments: everything that reproduces the paper and needs the ``experiments`` extra.

The estimators (:mod:`proxboost`) never import from here. The stages, each importing only the
stages below it (docs/index.md, "Code map", draws them):

- ``launch``: the command line (``run.py``), its checks, budgets, interrupts and worker clean-up;
- ``report``: SUMMARY.md and claims.csv, the figures, the HTML report, the sweep and benchmark
  reports;
- ``claims``: the paper's statements judged on the stored rows, and the paired statistics;
- ``fits``: one split of the paper protocol, one synthetic curve, their progress and deadlines;
- ``plan``: the protocol (splits, grids), the methods and baselines, the curve specs, the manifest;
- ``store``: the row files and their folder names, the claims that keep two sweeps apart;
- ``datasets``: the real and synthetic data, downloaded, checked and cached;
- ``system``: sealed atomic files, one-line I/O errors, joblib's private API.
"""
