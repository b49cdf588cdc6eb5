"""Time per ``exact`` tree, the tree alone: for comparing two revisions of the engine.

Grows trees of the given depth on split 0's training half of each dataset (a Gaussian target,
unit weights; seeds 1, 2, ...) in a compiled loop, with the engine's in-loop kernel, and prints
the median and the smallest of ``--rounds`` rounds of CPU time per tree, and a checksum of the
``--trees`` trees (equal checksums: the same trees). To compare two revisions, run it from a
worktree of each, alternately (A B A B ...), on an idle machine; the date, load and commit head
the output.

Usage: ``PROXBOOST_DATA_MIRROR=... python benchmarks/bench_tree.py crabs:3 spam:5 [--rounds 7]``
"""

import argparse
import datetime
import time

import numpy as np
from numba import njit
from shared import commit, exact_tree_inputs, load, machine

from proxboost.engines import exact


@njit
def _grow(record, target, first, T, check):
    """Grow T trees (seeds first, first + 1, ...), adding their thresholds and leaf ids to
    ``check``."""
    nodes, leaf_ids = exact.tree_in_loop(record)
    for t in range(T):
        m, _ = exact.grow_in_loop(record, target, first + t)
        check[0] += nodes[1][:m].sum()
        check[1] += leaf_ids.sum()


def per_tree(dataset, depth, rounds, trees, seconds=0.3):
    """(median, smallest) CPU seconds per tree over ``rounds`` (each growing the ``trees`` trees
    as often as fills about ``seconds``), and the checksum of the ``trees`` trees."""
    record, target, _ = exact_tree_inputs(dataset, depth)
    check = np.zeros(2)
    _grow(record, target, 1, trees, check)  # compiles on the first use; the checksum
    t0 = time.process_time()
    _grow(record, target, 1, trees, np.zeros(2))
    repeats = max(1, int(seconds / max(time.process_time() - t0, 1e-9)))
    times = []
    for _ in range(rounds):
        t0 = time.process_time()
        for _ in range(repeats):
            _grow(record, target, 1, trees, np.zeros(2))
        times.append((time.process_time() - t0) / (repeats * trees))
    return float(np.median(times)), min(times), check


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="+", help="dataset:depth, e.g. crabs:3")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--trees", type=int, default=200, help="trees per pass (seeds 1, 2, ...)")
    args = parser.parse_args()
    stamp = datetime.datetime.now().isoformat(timespec="seconds")
    print(f"{stamp}  commit {commit()}  ({machine()}); load {load():.2f}")
    for case in args.cases:
        dataset, _, depth = case.partition(":")
        median, smallest, check = per_tree(dataset, int(depth or 3), args.rounds, args.trees)
        print(
            f"{dataset:>14s} depth {depth}: {median * 1e6:9.1f} us/tree (smallest "
            f"{smallest * 1e6:.1f}; median of {args.rounds}); checksum {check[0]!r} {check[1]!r}"
        )
    print(f"load {load():.2f}")


if __name__ == "__main__":
    main()
