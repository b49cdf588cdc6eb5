"""`python -m proxboost.versions`: the command, kept short.

Its code is :mod:`proxboost.experiments.plan.versions_cli`.

Nothing to import here: the library (the estimators) never imports the experiments.
"""

if __name__ == "__main__":
    import runpy

    runpy.run_module("proxboost.experiments.plan.versions_cli", run_name="__main__", alter_sys=True)
