"""`python -m proxboost.quantile_measurements`: the command, kept short.

Its code is :mod:`proxboost.experiments.report.quantile_measurements`.

Nothing to import here: the library (the estimators) never imports the experiments.
"""

if __name__ == "__main__":
    import runpy

    runpy.run_module(
        "proxboost.experiments.report.quantile_measurements", run_name="__main__", alter_sys=True
    )
