"""Threads: wall time per iteration with ``n_jobs=1`` and ``n_jobs=2``, for ``exact`` and ``hist``.

Setting (the target of docs/engines.md, "Threads"): ``loss="lad"``, ``algo="prox"``, depth 3,
nu = 0.05, lambda = 1, the package's ``regression`` model (continuous features) at
2·10^5 x 20 and 10^6 x 20. Per iteration = (wall time of a fit with T iterations - wall time of
a fit with 1 iteration) / (T - 1), so the one-off preparation (codes, sorted orders, binning)
is excluded. Thread counts are interleaved within each round; the table gives the median over
rounds and the speed-up (1 thread / 2 threads). Wall time, not CPU time: two threads spend
more CPU time than one by design.

Threads give the one-thread numbers bit for bit (``tests/test_threads.py``); this script checks
that too on each case's first round (the two fits' training curves must be equal).

Before the fits, the same two thread counts run two trivially parallel ``prange`` kernels, the
machine's own reference measured in the same run: a compute-bound one (a short recurrence per
element, no memory traffic to speak of) and a streaming one (doubling 4·10^6 float64, the size
of the 2·10^5 x 20 data, into another array). Their speed-up is the most two threads can give
here: on a virtual machine whose two cores share a physical core, or a host that is busy, it is
well below 2, and the fits' speed-up should be read against it.

The 1-minute load average is printed before each table and after it: a speed-up is judged only
when the load before is below 1.5 on this 2-core machine (a 2-thread measurement loads both
cores itself, so the load after it is printed, not judged).

With ``--kernels``, instead: the wall time of each of the hist engine's tree kernels on 10^6 x
20 random bins (a node's histogram on half the rows, the root's histogram, the partition of all
rows, the last level's labels and sums of two splits of a quarter of the rows each), serial
and on 2 threads (the two splits one after the other, or one per thread), median of
``--rounds`` interleaved rounds: which parts of a tree the threads speed up, and which not.

With ``--draws K``, the whole table is taken K times, ``--pause`` seconds apart: on a virtual
machine two draws of the same table can differ more than the differences it is meant to show
(the two vCPUs do not always behave as two independent cores), so the speed-up is judged on the
median over the draws, printed with the lowest and highest draw.

Usage: ``python benchmarks/bench_threads.py [--rounds 5] [--T 20] [--sizes 200000,1000000]
[--engines exact,hist] [--draws 1] [--pause 60] [--write-docs]``,
``python benchmarks/bench_threads.py --kernels``
"""

import argparse
import datetime
import time

import numpy as np
from numba import njit, prange
from shared import MAX_LOAD, commit, load, machine, write_between_markers

from proxboost import BoostingRegressor
from proxboost.engines._hist import grower as hist_grower
from proxboost.engines._hist import histogram as hist_histogram
from proxboost.engines._nodes import HIST_GAP
from proxboost.engines._threads import numba_threads, threading_layer
from proxboost.experiments.datasets import load_dataset

DEPTH, NU, STEP, D = 3, 0.05, 1.0, 20


@njit(parallel=True, nogil=True)
def _compute_bound(a):
    out = np.empty_like(a)
    for i in prange(a.shape[0]):
        x = a[i]
        for _ in range(200):
            x = x * 0.999 + 0.001
        out[i] = x
    return out


@njit(parallel=True, nogil=True)
def _streaming(a, out, repeats):
    for _ in range(repeats):
        for i in prange(a.shape[0]):
            out[i] = 2.0 * a[i]


def reference(rounds):
    """{kernel: {threads: median wall seconds}} of the two reference kernels."""
    if threading_layer() is None:
        raise SystemExit("numba has no thread-safe threading layer (omp or tbb): no threads")
    a = np.random.RandomState(0).random_sample(4_000_000)
    out = np.empty_like(a)
    kernels = {
        "compute-bound prange": lambda: _compute_bound(a[:400_000]),
        "streaming prange (32 MB in, 32 MB out)": lambda: _streaming(a, out, 10),
    }
    medians = {}
    for name, run in kernels.items():
        times = {1: [], 2: []}
        for k in (1, 2):  # warm-up: compilation
            with numba_threads(k):
                run()
        for _ in range(rounds):
            for k in (1, 2):
                with numba_threads(k):
                    t0 = time.perf_counter()
                    run()
                    times[k].append(time.perf_counter() - t0)
        medians[name] = {k: float(np.median(v)) for k, v in times.items()}
    return medians


def _fit(X, y, engine, T, n_jobs):
    """(wall seconds, training curve) of one fit."""
    est = BoostingRegressor(
        loss="lad",
        algo="prox",
        n_estimators=T,
        learning_rate=NU,
        step=STEP,
        max_depth=DEPTH,
        engine=engine,
        random_state=0,
        n_jobs=n_jobs,
    )
    t0 = time.perf_counter()
    est.fit(X, y)
    return time.perf_counter() - t0, np.asarray(est.train_loss_)


def per_iteration(X, y, engine, T, n_jobs):
    """(seconds per iteration, training curve of the T-iteration fit)."""
    t_long, curve = _fit(X, y, engine, T, n_jobs)
    t_one, _ = _fit(X, y, engine, 1, n_jobs)
    return (t_long - t_one) / (T - 1), curve


def run_case(n, engine, T, rounds):
    X, y, _ = load_dataset("regression", n_samples=n, n_features=D, random_state=0)
    for k in (1, 2):  # warm-up: compilation (the parallel kernels at their first use)
        _fit(X, y, engine, 2, k)
    times = {1: [], 2: []}
    for r in range(rounds):
        curves = {}
        for k in (1, 2):
            t, curves[k] = per_iteration(X, y, engine, T, k)
            times[k].append(t)
        if r == 0 and not np.array_equal(curves[1], curves[2]):
            raise SystemExit(f"{engine} at n = {n}: 2 threads changed the training curve")
    return {k: float(np.median(v)) for k, v in times.items()}


def kernels(rounds, n=1_000_000):
    """{kernel: (serial seconds, 2-thread seconds)} of the hist engine's tree kernels (median
    over interleaved rounds) on n x 20 random bins with 255 bins per feature."""
    rng = np.random.RandomState(0)
    bins = rng.randint(0, 255, size=(n, D)).astype(np.uint8)
    offsets = np.arange(D + 1) * 256
    target = rng.normal(size=n)
    every = np.arange(n, dtype=np.intp)
    half = np.sort(rng.choice(n, n // 2, replace=False)).astype(np.intp)
    H = np.zeros(2 * offsets[-1])
    spare = np.empty(n, np.intp)
    ids = np.empty(n, np.intp)
    stats = hist_histogram.root_stats(bins, offsets, None, every, n)
    own = np.empty((2, len(H) + HIST_GAP))  # each thread's own histogram
    # the node's rows and every feature's full bin range
    node_args = ((0, n // 2), (np.zeros(D, np.int32), np.full(D, 255, np.int32)))
    h, g = hist_histogram, hist_grower
    split = (3, 127, -1)
    # the last level's two splits of a quarter of the rows each (as a depth-2 tree's), shared
    # between the threads one split each (``label_pending_par``)
    quarters = np.array([[0, n // 4], [n // 4, n // 2]], np.int64)
    pending = (bins, target, None, half)
    two_splits = (quarters, np.array([split, split], np.int64), np.array([0, 2], np.int64))
    two_splits += ((np.empty(2, np.int64), np.empty((2, 4))),)
    order = np.arange(2, dtype=np.int64)
    cases = {
        "histogram of a node (5·10^5 rows)": (
            lambda: h.build_hist(H, bins, offsets, target, None, half, 0, n // 2),
            lambda: h.build_hist_par(H, bins, offsets, target, None, half, *node_args, own),
        ),
        "histogram of the root (10^6 rows)": (
            lambda: h.build_root_sums(H, bins, offsets, target, None, every, n, stats),
            lambda: h.build_root_sums_par(H, bins, offsets, target, None, n, stats, own),
        ),
        "partition (10^6 rows)": (
            lambda: g.partition(bins, target, None, every.copy(), spare, 0, n, *split),
            lambda: g.partition_par(bins, target, None, every.copy(), spare, 0, n, split, 2),
        ),
        "last level's labels and sums, two splits (5·10^5 rows)": (
            lambda: [
                g.label_last_level(bins, target, None, half, tuple(seg), split, ids, 2 * i)
                for i, seg in enumerate(quarters)
            ],
            lambda: g.label_pending_par(*pending, ids, *two_splits, order, np.zeros(1, np.int64)),
        ),
    }
    times = {name: ([], []) for name in cases}
    with numba_threads(2):
        for pair in cases.values():  # warm-up: compilation
            for run in pair:
                run()
        for _ in range(rounds):
            for name, pair in cases.items():
                for i, run in enumerate(pair):
                    t0 = time.perf_counter()
                    run()
                    times[name][i].append(time.perf_counter() - t0)
    return {name: tuple(float(np.median(v)) for v in pair) for name, pair in times.items()}


def print_kernels(rounds):
    print(f"hist tree kernels, 10^6 x {D} random bins, wall time, median of {rounds} rounds")
    print(f"load before: {load():.2f}")
    print("| kernel | serial | 2 threads | speed-up |\n|---|---|---|---|")
    for name, (one, two) in kernels(rounds).items():
        print(f"| {name} | {one * 1e3:.2f} ms | {two * 1e3:.2f} ms | {one / two:.2f}× |")
    print(f"load after: {load():.2f}")


def one_draw(sizes, engines, T, rounds):
    """{case: (1-thread seconds, 2-thread seconds, load before, load after)} of one draw: the
    machine's references, then every (size, engine) case, each the median of ``rounds``
    interleaved rounds."""
    cases = {}
    before = load()
    for name, m in reference(rounds).items():
        cases[("machine reference", name)] = (m[1], m[2], before, load())
    for n in sizes:
        for engine in engines:
            before = load()
            m = run_case(n, engine, T, rounds)
            cases[(f"{n:,} × {D}", engine)] = (m[1], m[2], before, load())
    return cases


def _row(case, m):
    return (
        f"| {case[0]} | {case[1]} | {m[0] * 1e3:.1f} ms | {m[1] * 1e3:.1f} ms |"
        f" {m[0] / m[1]:.2f}× | {m[2]:.2f} → {m[3]:.2f} |"
    )


def spread_table(draws, max_load=MAX_LOAD):
    """Markdown rows over several draws: per case the median over the draws whose load before
    the case was below ``max_load`` of each draw's speed-up, with the lowest and highest."""
    lines = [
        f"| n × d | engine | draws (load < {max_load}) | 1 thread, median | speed-up: median"
        " | lowest | highest |",
        "|---|---|---|---|---|---|---|",
    ]
    for case in draws[0]:
        kept = [d[case] for d in draws if d[case][2] < max_load]
        if not kept:
            lines.append(f"| {case[0]} | {case[1]} | 0 of {len(draws)} | | | | |")
            continue
        ups = [m[0] / m[1] for m in kept]
        one = float(np.median([m[0] for m in kept]))
        lines.append(
            f"| {case[0]} | {case[1]} | {len(kept)} of {len(draws)} | {one * 1e3:.1f} ms |"
            f" {np.median(ups):.2f}× | {min(ups):.2f}× | {max(ups):.2f}× |"
        )
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--T", type=int, default=20)
    parser.add_argument("--sizes", default="200000,1000000")
    parser.add_argument("--engines", default="exact,hist")
    parser.add_argument("--draws", type=int, default=1, help="repeat the whole table")
    parser.add_argument("--pause", type=float, default=60.0, help="seconds between draws")
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument("--kernels", action="store_true", help="the hist tree kernels alone")
    args = parser.parse_args()
    if args.kernels:
        return print_kernels(args.rounds)
    if args.T < 2 or args.rounds < 1 or args.draws < 1 or args.pause < 0:
        raise SystemExit(
            "--T must be at least 2, --rounds and --draws at least 1, --pause at least 0"
        )
    sizes = [int(s) for s in args.sizes.split(",")]
    engines = args.engines.split(",")
    command = (
        "python benchmarks/bench_threads.py"
        + (f" --rounds {args.rounds}" if args.rounds != 5 else "")
        + (f" --draws {args.draws}" if args.draws > 1 else "")
        + " --write-docs"
    )
    lines = [
        f"Measured {datetime.date.today()} at commit {commit()} ({machine()}); lad/prox, depth"
        f" {DEPTH}, T = {args.T}, wall time per iteration, median of {args.rounds} interleaved"
        f" rounds per draw, {args.draws} draw(s) {args.pause:.0f} s apart (`{command}`):",
    ]
    print(lines[0], flush=True)
    draws = []
    for k in range(args.draws):
        if k:
            time.sleep(args.pause)
        started = datetime.datetime.now().strftime("%H:%M")
        draws.append(one_draw(sizes, engines, args.T, args.rounds))
        lines += ["", f"Draw {k + 1} ({started}):", ""]
        lines += [
            "| n × d | engine | 1 thread | 2 threads | speed-up | load before → after |",
            "|---|---|---|---|---|---|",
        ]
        lines += [_row(case, m) for case, m in draws[-1].items()]
        print("\n".join(lines[-len(draws[-1]) - 5 :]), flush=True)
    if args.draws > 1:
        lines += [
            "",
            "Over the draws (a case counts in a draw only if the load before it was below"
            f" {MAX_LOAD}):",
            "",
        ] + spread_table(draws)
        print("\n".join(lines[-len(draws[0]) - 2 :]), flush=True)
    if args.write_docs:
        write_between_markers("engines.md", "bench-threads", "\n".join(lines))


if __name__ == "__main__":
    main()
