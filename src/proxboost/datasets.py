"""`python -m proxboost.datasets`: the command, kept short.

Its code is :mod:`proxboost.experiments.datasets`.

Nothing to import here: the library (the estimators) never imports the experiments.
"""

if __name__ == "__main__":
    import runpy

    runpy.run_module("proxboost.experiments.datasets", run_name="__main__", alter_sys=True)
