"""Hydra entry point of proxboost's experiments (docs/protocol.md).

    python run.py loss=hinge algo=residual_prox                  # embedded synthetic data
    python run.py dataset=engel loss=lad algo=prox grid=paper
    python run.py -m dataset=engel,sniffer loss=lad,pinball algo=gradient,prox
    python run.py -m ... hydra/launcher=joblib                   # sweep jobs on every core
    python run.py -m +experiment=paper                           # the paper's protocol -> results/
    python run.py +experiment=convergence                        # a synthetic experiment ->
    results/
    python run.py --cfg job                                      # the composed configuration

Everything is done by :mod:`proxboost.experiments.launch.cli` (checks, errors),
:mod:`proxboost.experiments.launch.interrupts` (Ctrl-C, SIGTERM) and
:mod:`proxboost.experiments.fits.pipeline` (the runs); this file only starts Hydra.
"""

import os

# One BLAS/OpenMP thread per process, set before numpy/scikit-learn/xgboost are imported: the
# pipeline parallelises across fits (processes), so threaded kernels would only oversubscribe
# the cores. Worker processes (loky, joblib launcher, submitit) inherit these variables. A
# value already set in the environment wins.
for _var in (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
):
    os.environ.setdefault(_var, "1")

# NumPy's AVX-512 kernels (its X86_V4 dispatch targets) compute exp, sin, ... to within an ulp,
# not bit for bit as its AVX2 and baseline kernels do: a fit on synthetic data (or with the
# exponential and logistic losses) then differs in the last bits between machines, and a tie
# can turn them into different trees. Every computation of the experiments uses the AVX2 path,
# on every x86-64 machine, so that rows computed on different machines are the same computation
# (docs/results.md, "Same numbers on every machine"). The Makefile and the tests set the same.
os.environ.setdefault("NPY_DISABLE_CPU_FEATURES", "X86_V4 AVX512_ICL AVX512_SPR")

import hydra  # noqa: E402
from omegaconf import DictConfig  # noqa: E402

from proxboost.experiments.launch.cli import main as run  # noqa: E402
from proxboost.experiments.launch.interrupts import interruptible  # noqa: E402


@hydra.main(version_base=None, config_path="conf", config_name="config")
def main(cfg: DictConfig):
    return run(cfg)


if __name__ == "__main__":
    import sys

    from proxboost.experiments.launch.cli import refuse_unknown_overrides

    unknown = refuse_unknown_overrides(sys.argv[1:])
    if unknown:  # one line, exit code 2, before Hydra composes anything
        print(f"error: {unknown}", file=sys.stderr)
        sys.exit(2)
    interruptible(main)
