"""Every synthetic experiment (SPEC §5.1–§5.3), one after the other, one run at a time.

    python experiments/run_all.py [--results results] [--quick] [--only intro,convergence,proximal_step]

Resumable: stored runs are skipped, so rerunning after an interruption finishes the rest.
Prints the wall time of each stage. (``make results`` runs this for the synthetic part.)
"""

import argparse
import importlib.util
import sys
import time
from pathlib import Path

from proxboost.curves import run_experiment

HERE = Path(__file__).resolve().parent
EXPERIMENTS = ("intro", "convergence", "proximal_step")


def _module(name):
    spec = importlib.util.spec_from_file_location(f"experiments_{name}", HERE / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--results", default="results")
    p.add_argument("--quick", action="store_true", help="tiny T; curves under <results>/synthetic-quick/")
    p.add_argument("--only", default=",".join(EXPERIMENTS), help="comma-separated subset of " + ", ".join(EXPERIMENTS))
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = sorted(set(names) - set(EXPERIMENTS))
    if unknown:
        p.error(f"unknown experiment(s) {unknown}; valid: {', '.join(EXPERIMENTS)}")
    times = {}
    t0 = time.perf_counter()
    for name in names:
        mod = _module(name)
        times[name] = run_experiment(mod.EXPERIMENT, mod.make_specs(args.quick), args.results, args.quick,
                                     progress=not args.no_progress)
    total = time.perf_counter() - t0
    print("stage times: " + ", ".join(f"{k} {v:.1f} s" for k, v in times.items()) + f"; total {total:.1f} s")
    return times


if __name__ == "__main__":
    main(sys.argv[1:])
