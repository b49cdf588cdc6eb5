"""``python -m proxboost.figures``: every figure from the stored results."""

from proxboost.experiments.report.figures import main

main()
