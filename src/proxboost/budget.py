"""`python -m proxboost.budget`: the command, kept short.

Its code is :mod:`proxboost.experiments.launch.budget`.

Nothing to import here: the library (the estimators) never imports the experiments.
"""

if __name__ == "__main__":
    import runpy

    runpy.run_module("proxboost.experiments.launch.budget", run_name="__main__", alter_sys=True)
