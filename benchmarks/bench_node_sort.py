"""Would sorting a node's rows by code beat the histogram path on nodes of 32 to 600 rows?

The ``exact`` engine splits a node of more than ``SMALL_NODE`` (32) rows from histograms: per
node it zeroes its features' ranges of bins, adds its rows' ``w g`` and ``w`` into them (or takes
its parent's minus its sibling's), lists each feature's non-empty bins and scans their running
sums. On whitewine at depth 5 that per-bin work dominates the iteration (nodes of about 150 rows,
features' ranges of up to 230 bins). The alternative, a counting sort of the node's rows by code
per feature and a scan of the runs of equal codes, costs per row instead of per bin.

This script times both on one node, as two small compiled models that keep only what the two
paths differ in (the same candidate arithmetic on each non-empty bin; no pruning bound, no
subtraction, no partition): the exact engine's codes of whitewine's training half (split 0), a
Gaussian target, nodes of m rows drawn at random or as a slab of one feature's order, each
feature's range narrowed to the node's smallest and largest code (the narrowest the engine's
ranges can be). It prints microseconds per node for each path (medians) and their ratio (sort /
histogram, above 1: the sort is slower): the median of the ratios of 15 rounds of 100 nodes each,
the two paths alternating within a round, with the lowest and highest beside it.

Usage: ``python benchmarks/bench_node_sort.py [--dataset whitewine]`` (seconds; judge it on an
idle machine: the load average is printed before and after).
"""

import argparse
import datetime
import time

import numpy as np
from numba import njit
from shared import MAX_LOAD, commit, load, machine

SIZES = (32, 64, 100, 150, 300, 600)
ROUNDS, NODES = 15, 100


@njit(error_model="numpy", cache=False, nogil=True)
def histogram_path(codes, rows, g, offset, lo, hi, H, nonempty, reps):
    """``reps`` times: zero the node's ranges, add its rows, list each feature's non-empty bins
    and scan their running sums (the candidates' proxy); returns the best proxies' sum."""
    p = codes.shape[1]
    total = 0.0
    for _ in range(reps):
        for f in range(p):
            for b in range(offset[f] + lo[f], offset[f] + hi[f] + 1):
                H[2 * b] = 0.0
                H[2 * b + 1] = 0.0
        for r in rows:
            gr = g[r]
            for f in range(p):
                b = np.uint64(offset[f] + codes[r, f])
                H[2 * b] += gr
                H[2 * b + 1] += 1.0
        for f in range(p):
            o = offset[f]
            k = 0
            for b in range(lo[f], hi[f] + 1):  # branch-free, as the engine's listing
                nonempty[np.uint64(k)] = b
                k += H[np.uint64(2 * (o + b) + 1)] > 0.0
            sl = 0.0
            wl = 0.0
            best = -np.inf
            for j in range(k):
                b = nonempty[j]
                best = max(best, sl * sl / (wl + 1e-300))
                sl += H[np.uint64(2 * (o + b))]
                wl += H[np.uint64(2 * (o + b) + 1)]
            total += best
    return total


@njit(error_model="numpy", cache=False, nogil=True)
def sort_path(codes, rows, g, counts, sorted_g, sorted_c, reps):
    """``reps`` times: per feature a counting sort of the node's rows by code (stable: equal
    codes in row order), then the runs of equal codes scanned as the histogram path scans its
    bins; returns the best proxies' sum."""
    p = codes.shape[1]
    m = rows.shape[0]
    total = 0.0
    for _ in range(reps):
        for f in range(p):
            counts[:] = 0
            for r in rows:
                counts[np.uint64(codes[r, f])] += 1
            s = 0
            for b in range(256):
                c = counts[b]
                counts[b] = s
                s += c
            for r in rows:
                c = np.uint64(codes[r, f])
                k = counts[c]
                counts[c] = k + 1
                sorted_g[np.uint64(k)] = g[r]
                sorted_c[np.uint64(k)] = c
            sl = 0.0
            wl = 0.0
            best = -np.inf
            j = 0
            while j < m:
                c = sorted_c[j]
                run_s = 0.0
                run_w = 0.0
                while j < m and sorted_c[j] == c:
                    run_s += sorted_g[j]
                    run_w += 1.0
                    j += 1
                best = max(best, sl * sl / (wl + 1e-300))
                sl += run_s
                wl += run_w
            total += best
    return total


def node_rows(rng, codes, m, kind):
    """m rows of a node: drawn at random, or a slab of one feature's order (a region)."""
    n = codes.shape[0]
    if kind == "random":
        rows = rng.choice(n, m, replace=False)
    else:
        order = np.argsort(codes[:, rng.randint(codes.shape[1])], kind="stable")
        start = rng.randint(0, n - m)
        rows = order[start : start + m]
    return np.sort(rows).astype(np.int64)  # a node's rows are in row order (stable partitions)


def time_node(codes, offset, rows, g, buffers):
    """(bins in the node's ranges, histogram and sort microseconds per node (medians), the
    ratios sort / histogram of the ROUNDS rounds)."""
    H, nonempty, counts, sorted_g, sorted_c = buffers
    lo = codes[rows].min(axis=0).astype(np.int64)
    hi = codes[rows].max(axis=0).astype(np.int64)
    a = histogram_path(codes, rows, g, offset, lo, hi, H, nonempty, 1)
    b = sort_path(codes, rows, g, counts, sorted_g, sorted_c, 1)
    assert a == b, (a, b)  # the same candidates: the same sums in the same order
    hist_t, sort_t = [], []
    for _ in range(ROUNDS):
        t = time.perf_counter()
        histogram_path(codes, rows, g, offset, lo, hi, H, nonempty, NODES)
        hist_t.append(time.perf_counter() - t)
        t = time.perf_counter()
        sort_path(codes, rows, g, counts, sorted_g, sorted_c, NODES)
        sort_t.append(time.perf_counter() - t)
    bins = int((hi - lo + 1).sum())
    ratios = np.array(sort_t) / np.array(hist_t)
    return bins, np.median(hist_t) / NODES * 1e6, np.median(sort_t) / NODES * 1e6, ratios


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="whitewine")
    args = parser.parse_args()

    from proxboost.engines._exact.binning import code_features
    from proxboost.experiments.datasets import load_dataset
    from proxboost.experiments.plan.protocol import split_indices

    X, _, _ = load_dataset(args.dataset)
    train, _, _ = split_indices(X.shape[0], 0)
    record, _ = code_features(np.ascontiguousarray(X[train], dtype=np.float32))
    codes, offset = record.codes, record.bin_offset
    n = codes.shape[0]
    rng = np.random.RandomState(0)
    g = rng.randn(n)
    buffers = (
        np.zeros(2 * int(offset[-1])),
        np.empty(int(record.n_bins.max()) + 1, np.int64),
        np.empty(256, np.int64),
        np.empty(n),
        np.empty(n, np.uint8),
    )
    before = load()
    print(f"{datetime.datetime.now():%Y-%m-%d %H:%M}  commit {commit()}  ({machine()})")
    print(f"load average before: {before:.2f}")
    if before >= MAX_LOAD:
        print(f"the load is {MAX_LOAD} or more: these ratios do not count")
    print(
        f"{args.dataset}: {n} training rows, {codes.shape[1]} features, "
        f"bins per feature {record.n_bins.tolist()}"
    )
    print("node rows | kind   | bins in ranges | histogram | counting sort | sort / histogram")
    medians = []
    for kind in ("random", "slab"):
        for m in SIZES:
            if m >= n:
                continue
            rows = node_rows(rng, codes, m, kind)
            bins, hist_us, sort_us, ratios = time_node(codes, offset, rows, g, buffers)
            medians.append(np.median(ratios))
            print(
                f"{m:9d} | {kind:6s} | {bins:14d} | {hist_us:6.2f} us | {sort_us:10.2f} us |"
                f" {np.median(ratios):.2f} ({ratios.min():.2f}–{ratios.max():.2f})"
            )
    print(f"the sort is slower than the histogram at every node size: {min(medians) > 1.0}")
    print(f"load average after: {load():.2f}")


if __name__ == "__main__":
    main()
