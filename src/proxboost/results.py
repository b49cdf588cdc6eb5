"""`python -m proxboost.results`: the command, kept short.

Its code is :mod:`proxboost.experiments.store.results`.

Nothing to import here: the library (the estimators) never imports the experiments.
"""

if __name__ == "__main__":
    import runpy

    runpy.run_module("proxboost.experiments.store.results", run_name="__main__", alter_sys=True)
