"""Where an ``exact`` tree's time goes: the share of CPU samples in each compiled kernel.

Grows trees of the given depth on split 0's training half of a dataset (a Gaussian target, unit
weights) in a compiled loop for about ``--seconds`` seconds under ``perf record``, then maps every
sample to the compiled function holding it. numba's JIT code carries no symbols perf can read, so
the script reads each function's address from the compiled libraries, which requires compiling
them in this process: it runs with an empty numba cache (a temporary folder; compiling takes a
minute or more). A kernel that LLVM inlined into its caller counts toward the caller.

With ``--fit``, the whole boosting iteration instead of the tree alone: fits of ``lad``/prox
(T = 1000, nu = 0.1, the other half as eval set, its loss recorded every iteration) one after the
other, each sample mapped to the compiled loop's kernels or, outside them, to the library holding
it (the Python interpreter, NumPy: the fit's work before and after the loop).

With ``--fit --loss pinball``, the fits are ``pinball``/prox at tau = 0.9 (the paper's level, as
in ``bench_whole_fit.py``) instead of ``lad``; with ``--fit --loss hinge``, ``hinge``/prox
classifier fits (spam, adult: the classification datasets of ``bench_whole_fit.py``). With
``--fit --levels 0.05,0.5,0.95``, the fits are one ``pinball`` model of those levels (the
several-level compiled loop).

With ``--fit``, ``--engine`` (``exact`` or ``hist``) and ``--n-jobs`` choose the fits' engine
and threads; the dataset ``regression`` with ``--n-samples N`` profiles the package's synthetic
regression model (20 features) at any size, with T = 20 and no eval set (the threads' setting of
``bench_threads.py``; ``--T 200`` makes the preparation of the rows, about two thirds of a fit of
20 iterations at 2·10^5 rows, a small part of it). With several threads the shares are of CPU
time summed over the threads, including the time a thread spends waiting in the thread pool
(numba's ``omp`` layer spins): a kernel's share on two threads against its share on one says
how well it is parallel.

With ``--annotate KERNEL`` (part of a compiled function's name, e.g. ``grow_nodes``), also where
inside that kernel the samples fall: LLVM inlines most of the node loop (split search,
partitions, subtractions) into ``grower.grow_nodes``, so its share alone says little. The
kernel's machine code is disassembled (``objdump``) with each instruction's sample count into
``--annotate-out``, and the hottest stretches of 50 instructions are printed with their share;
reading which loop a stretch is (its loads, sums and compares) is left to you.

Usage: ``python benchmarks/profile_tree.py whitewine 5 [--seconds 8] [--fit [--engine hist]
[--n-jobs 2]] [--annotate grow_nodes]``, ``python benchmarks/profile_tree.py regression 3 --fit
--n-samples 200000`` (Linux with ``perf``). The shares are relative: a loaded machine slows
every kernel alike, roughly.
"""

import argparse
import bisect
import collections
import ctypes
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

MARK = "PROFILE_TREE_CHILD"
ANNOTATE = "PROFILE_TREE_ANNOTATE"


def _grow_loop():
    """A compiled loop growing T trees with the exact engine's in-loop kernel."""
    from numba import njit

    from proxboost.engines import exact

    @njit
    def loop(record, target, T):
        leaves = 0
        for t in range(T):
            _, n_leaves = exact.grow_in_loop(record, target, t + 1)
            leaves += n_leaves
        return leaves

    return loop


def _functions(dispatcher):
    """(address, mangled name) of every function in the libraries linked into ``dispatcher``."""
    found, seen = [], set()

    def walk(library):
        if id(library) in seen:
            return
        seen.add(id(library))
        for fn in library._final_module.functions:  # numba's codegen library (no public API)
            if not fn.is_declaration:
                address = library.get_pointer_to_function(fn.name)
                if address:
                    found.append((address, fn.name))
        for linked in getattr(library, "_linking_libraries", ()):
            walk(linked)

    for cres in dispatcher.overloads.values():
        walk(cres.library)
    return sorted(set(found))


def _mapping_end(address):
    """The end of the memory mapping of this process that holds ``address``."""
    with open("/proc/self/maps") as f:
        for line in f:
            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
            if lo <= address < hi:
                return hi
    return address


def _write_symbols(functions, symbols_path):
    """The compiled functions' addresses, and with ``ANNOTATE`` in the environment the machine
    code of the first function whose name holds it (up to the next function or the end of its
    mapping) with its address, for ``annotate``."""
    with open(symbols_path, "w") as f:
        f.writelines(f"{a:x} {name}\n" for a, name in functions)
    wanted = os.environ.get(ANNOTATE)
    if not wanted:
        return
    starts = sorted(a for a, _ in functions)
    for address, name in functions:
        if wanted in _short(name):
            after = [a for a in starts if a > address]
            end = min(after[0] if after else address + (1 << 20), _mapping_end(address))
            with open(symbols_path + ".code", "wb") as f:
                f.write(ctypes.string_at(address, end - address))
            with open(symbols_path + ".where", "w") as f:
                f.write(f"{address} {_short(name)}\n")
            return


def _fit_child(data, depth, seconds, symbols_path, fit_options):
    """``child`` with ``--fit``: whole fits (the compiled loop and the Python work around it).
    ``data`` is (X, y, eval set or None); ``fit_options`` the engine, n_jobs, T, the levels and
    the loss."""
    from proxboost import BoostingClassifier, BoostingRegressor, _compiled_loop, _compiled_multi

    X, y, eval_set = data
    engine, n_jobs, T, levels, loss_name = fit_options
    loss = dict(loss="pinball", tau=levels) if levels else dict(loss=loss_name)
    if loss_name == "pinball" and not levels:
        loss["tau"] = 0.9

    model = BoostingClassifier if loss_name == "hinge" else BoostingRegressor

    def fit():
        est = model(
            **loss,
            algo="prox",
            max_depth=depth,
            learning_rate=0.1,
            n_estimators=T,
            engine=engine,
            n_jobs=n_jobs,
        )
        est.fit(X, y, eval_set=eval_set)

    fit()
    t0 = time.perf_counter()
    fit()
    per_fit = time.perf_counter() - t0
    runs = _compiled_loop.RUNS_PAR if n_jobs > 1 else _compiled_loop.RUNS
    if levels:
        runs = _compiled_multi.RUNS
    _write_symbols(_functions(runs[engine]), symbols_path)
    print(
        f"({X.shape[0]} x {X.shape[1]}), depth {depth}, {engine}, n_jobs {n_jobs}: "
        f"{per_fit / T * 1e6:.0f} us/iteration"
    )
    sys.stdout.flush()
    t_start = time.clock_gettime(time.CLOCK_MONOTONIC)
    for _ in range(max(1, int(seconds / per_fit))):
        fit()
    t_end = time.clock_gettime(time.CLOCK_MONOTONIC)
    with open(symbols_path + ".window", "w") as f:
        f.write(f"{t_start} {t_end}\n")


def child(dataset, depth, seconds, symbols_path, args):
    """In the profiled process: compile, write the symbols, then grow trees (or fit, with
    ``args.fit``) for ``seconds``."""
    from shared import exact_tree_inputs

    from proxboost.experiments.datasets import load_dataset
    from proxboost.experiments.plan.protocol import split_indices

    if args.fit and dataset == "regression":
        X, y, _ = load_dataset(dataset, n_samples=args.n_samples, n_features=20, random_state=0)
        options = (args.engine, args.n_jobs, args.T or 20, args.levels, args.loss)
        return _fit_child((X, y, None), depth, seconds, symbols_path, options)
    if args.fit:
        X, y, _ = load_dataset(dataset)
        train, _, test = split_indices(len(y), 0)
        data = (X[train], y[train], (X[test], y[test]))
        return _fit_child(
            data,
            depth,
            seconds,
            symbols_path,
            (args.engine, args.n_jobs, args.T or 1000, args.levels, args.loss),
        )
    record, target, shape = exact_tree_inputs(dataset, depth)
    loop = _grow_loop()
    loop(record, target, 2)
    t0 = time.perf_counter()
    loop(record, target, 5)
    per_tree = (time.perf_counter() - t0) / 5
    _write_symbols(_functions(loop), symbols_path)
    print(f"{dataset} ({shape[0]} x {shape[1]}), depth {depth}: {per_tree * 1e6:.0f} us/tree")
    sys.stdout.flush()
    t_start = time.clock_gettime(time.CLOCK_MONOTONIC)
    loop(record, target, max(1, int(seconds / per_tree)))
    t_end = time.clock_gettime(time.CLOCK_MONOTONIC)
    with open(symbols_path + ".window", "w") as f:
        f.write(f"{t_start} {t_end}\n")


def _short(mangled):
    """``module.function`` of a numba-mangled name."""
    s = re.sub(r"^(cfunc\.)?_ZN(7cpython)?", "", mangled)
    parts = []
    while (m := re.match(r"\d+", s)) and len(parts) < 12:
        k = int(m.group())
        s = s[len(m.group()) :]
        parts.append(s[:k])
        s = s[k:]
    return ".".join(parts[-2:]) if parts else mangled[:40]


def shares(perf_data, symbols_path):
    """{kernel or library: share of the samples} in the profiled window."""
    symbols = []
    with open(symbols_path) as f:
        for line in f:
            address, name = line.split(" ", 1)
            symbols.append((int(address, 16), _short(name.strip())))
    starts = [a for a, _ in symbols]
    counts, total = collections.Counter(), 0
    for ip, dso in _samples(perf_data, symbols_path):
        total += 1
        if "perf-" in dso:  # JIT code: the nearest function start below the sample
            i = bisect.bisect_right(starts, ip) - 1
            counts[symbols[i][1] if i >= 0 else "compiled (unknown)"] += 1
        else:
            counts[os.path.basename(dso)] += 1
    return {k: v / max(total, 1) for k, v in counts.most_common()}


def _samples(perf_data, symbols_path):
    """(instruction address, library) of every sample in the profiled window."""
    with open(symbols_path + ".window") as f:
        t_start, t_end = map(float, f.read().split())
    out = subprocess.run(
        ["perf", "script", "-i", perf_data, "-F", "time,ip,dso"], capture_output=True, text=True
    ).stdout
    for line in out.splitlines():
        m = re.match(r"\s*([\d.]+):\s+([0-9a-f]+)\s+\((.*)\)", line)
        if m and t_start <= float(m[1]) <= t_end:
            yield int(m[2], 16), m[3]


def annotate(perf_data, symbols_path, out_path, stretch=50):
    """Write the annotated kernel's disassembly with each instruction's samples (in the
    profiled window) to ``out_path``; print its hottest stretches of ``stretch`` instructions."""
    if not os.path.exists(symbols_path + ".where"):
        print("--annotate: no compiled function of that name (see the shares above)")
        return
    with open(symbols_path + ".where") as f:
        start, name = f.read().split()
    start = int(start)
    size = os.path.getsize(symbols_path + ".code")
    hits, total = collections.Counter(), 0
    for ip, _ in _samples(perf_data, symbols_path):
        total += 1
        if 0 <= ip - start < size:
            hits[ip - start] += 1
    listing = subprocess.run(
        ["objdump", "-D", "-b", "binary", "-mi386:x86-64", symbols_path + ".code"],
        capture_output=True,
        text=True,
    ).stdout
    rows = []
    for line in listing.splitlines():
        m = re.match(r"\s*([0-9a-f]+):\s", line)
        if m:
            rows.append((hits.get(int(m[1], 16), 0), line.strip()))
    with open(out_path, "w") as f:
        f.write(f"{name}: {sum(hits.values())} of {total} samples; per instruction:\n")
        f.writelines(f"{n:6d}  {text}\n" for n, text in rows)
    blocks = [rows[i : i + stretch] for i in range(0, len(rows), stretch)]
    ranked = sorted(range(len(blocks)), key=lambda i: -sum(n for n, _ in blocks[i]))
    print(f"{name}: {sum(hits.values()) / max(total, 1):.1%} of the samples; hottest stretches:")
    for i in ranked[:10]:
        n = sum(c for c, _ in blocks[i])
        if n == 0:
            break
        top = max(blocks[i], key=lambda r: r[0])[1]
        print(f"  {n / max(total, 1):6.1%}  from {blocks[i][0][1].split(':')[0]}: hottest {top}")
    print(f"the annotated disassembly: {out_path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset")
    parser.add_argument("depth", type=int)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--fit", action="store_true", help="whole fits, not the tree alone")
    parser.add_argument("--engine", choices=("exact", "hist"), default="exact")
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--n-samples", type=int, default=200_000)
    parser.add_argument(
        "--T", type=int, help="with --fit: iterations per fit (20 on `regression`, else 1000)"
    )
    parser.add_argument(
        "--loss",
        choices=("lad", "pinball", "hinge"),
        default="lad",
        help="with --fit: the fits' loss (hinge: a classification dataset)",
    )
    parser.add_argument(
        "--levels", help="with --fit: pinball at these levels in one model (e.g. 0.05,0.5,0.95)"
    )
    parser.add_argument(
        "--annotate", metavar="KERNEL", help="where the samples fall inside this kernel"
    )
    parser.add_argument("--annotate-out", default="profile_annotated.txt")
    args = parser.parse_args()
    if args.annotate and shutil.which("objdump") is None:
        raise SystemExit("--annotate needs objdump (apt-get install binutils)")
    if args.levels:
        args.levels = [float(v) for v in args.levels.split(",")]
    if (args.engine != "exact" or args.n_jobs != 1 or args.loss != "lad") and not args.fit:
        raise SystemExit("--engine, --n-jobs and --loss apply to whole fits: add --fit")
    if os.environ.get(MARK):
        return child(args.dataset, args.depth, args.seconds, os.environ[MARK], args)
    if shutil.which("perf") is None:
        raise SystemExit("profile_tree.py needs Linux perf (apt-get install linux-perf)")
    with tempfile.TemporaryDirectory() as tmp:
        symbols, data = os.path.join(tmp, "symbols.txt"), os.path.join(tmp, "perf.data")
        env = {**os.environ, MARK: symbols, "NUMBA_CACHE_DIR": os.path.join(tmp, "numba")}
        if args.annotate:
            env[ANNOTATE] = args.annotate
        command = ["perf", "record", "-q", "-F", "999", "-k", "CLOCK_MONOTONIC", "-o", data]
        command += [sys.executable, *sys.argv]
        if subprocess.run(command, env=env).returncode != 0:
            raise SystemExit("the profiled run failed (see above)")
        print(f"share of the CPU samples (load {os.getloadavg()[0]:.2f}):")
        for name, share in list(shares(data, symbols).items())[:20]:
            print(f"  {share:6.1%}  {name}")
        if args.annotate:
            annotate(data, symbols, os.path.abspath(args.annotate_out))


if __name__ == "__main__":
    main()
