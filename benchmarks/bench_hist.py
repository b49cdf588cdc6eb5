"""Per-iteration cost of the tree engines against LightGBM, and numba start-up costs.

Setting: ``algo="prox"``, loss ``lad``, depth 3, nu = 0.05, lambda = 1 (per-sample step,
docs/method.md),
The synthetic regression model of docs/protocol.md (X ~ N(0, Sigma), Sigma_ij = 2^-|i-j|) at several
sizes.

Methods, interleaved within each repetition (median of ``--repeats`` fits):

* ``hist``: ``BoostingRegressor(engine="hist")`` as the library stands (its line search is
  whatever :mod:`proxboost.losses` uses);
* ``hist+leafops``: the same, with :func:`proxboost._leafops.quantile_line_search` patched into
  :mod:`proxboost.losses` for the duration of the fit (what wiring the compiled kernels gives;
  identical to ``hist`` once the wiring is done);
* ``LightGBM l1``: LightGBM's native ``l1`` objective, num_leaves = 2^depth, max_depth = depth,
  max_bin = 255, num_threads = 1, min_data_in_leaf = 1, min_sum_hessian_in_leaf = 0,
  learning_rate = 0.05;
* ``exact``: ``BoostingRegressor(engine="exact")`` (scikit-learn's tree), fewer iterations.

Per-iteration time = (time at the end of the last iteration - time at the end of the first) /
(T - 1): the first iteration (binning, LightGBM's dataset checks) is excluded for every method.
The proxboost times are the estimator's own ``train_time_`` (loss recording excluded);
LightGBM's come from a per-iteration callback.

Start-up: ``cold`` runs a fresh interpreter with an empty ``NUMBA_CACHE_DIR`` (every kernel is
compiled), ``warm`` a fresh interpreter on the filled cache; both time the import of proxboost
and the first small fit + predict + compiled line searches (which compile or load every kernel).

Also (``--sections``): ``linesearch``, the share of an iteration spent in the ``lad`` line search
at 10^5 x 20 with the hist engine (lexsort version of :mod:`proxboost.losses` vs
:mod:`proxboost._leafops`); ``kernels``, the two line-search kernels alone (numpy vs compiled)
at 10^5 rows; ``compare`` (not run by default, a few minutes), the engines on the
convergence setting (depth 3, T = 1000, nu = 0.05, lambda = 1, 50/50 split of one seed-0
draw): final train / test loss of every (loss, algo), exact vs hist.

Usage: ``python benchmarks/bench_hist.py [--repeats 5] [--quick] [--sections ...]``. The machine
may be shared: the load average is printed with the results.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np
from shared import lightgbm_params

from proxboost import BoostingClassifier, BoostingRegressor, _leafops, losses
from proxboost.boosting import ALGOS

DEPTH, NU, STEP = 3, 0.05, 1.0


def spec_regression(n, d, seed=0):
    rng = np.random.RandomState(seed)
    idx = np.arange(d)
    cov = 2.0 ** -np.abs(idx[:, None] - idx[None, :])
    X = rng.multivariate_normal(np.zeros(d), cov, size=n)
    y = (
        -np.sin(2 * X[:, 0])
        + X[:, 1] ** 2
        + X[:, 2]
        - np.exp(-X[:, 3])
        + rng.normal(0, np.sqrt(0.5), n)
    )
    return X, y


def time_proxboost(X, y, engine, T, leafops=False):
    original = losses.quantile_line_search
    if leafops:
        losses.quantile_line_search = _leafops.quantile_line_search
    try:
        model = BoostingRegressor(
            loss="lad",
            algo="prox",
            n_estimators=T,
            learning_rate=NU,
            step=STEP,
            max_depth=DEPTH,
            engine=engine,
            random_state=0,
        ).fit(X, y)
    finally:
        losses.quantile_line_search = original
    tt = model.train_time_
    return (tt[T] - tt[1]) / (T - 1), model.train_loss_[-1]


def time_lightgbm(X, y, T):
    import lightgbm as lgb  # lazy: the reference library, needed by this section only

    params = lightgbm_params(DEPTH, NU, objective="l1")
    data = lgb.Dataset(X, y, params=params, free_raw_data=False)
    data.construct()
    stamps = []
    booster = lgb.train(
        params, data, num_boost_round=T, callbacks=[lambda env: stamps.append(time.perf_counter())]
    )
    train_loss = float(np.mean(np.abs(y - booster.predict(X))))
    return (stamps[-1] - stamps[0]) / (T - 1), train_loss


def run_sizes(sizes, repeats, with_exact):
    rows = []
    for n, d, T, T_exact in sizes:
        X, y = spec_regression(n, d)
        # warm-up: compile / load every kernel outside the timings
        time_proxboost(X[:2000], y[:2000], "hist", 3, leafops=True)
        time_proxboost(X[:2000], y[:2000], "hist", 3)
        load0 = os.getloadavg()[0]
        res = {k: [] for k in ("hist", "hist+leafops", "lightgbm", "exact")}
        losses_ = {}
        for _ in range(repeats):
            t, losses_["hist"] = time_proxboost(X, y, "hist", T)
            res["hist"].append(t)
            t, losses_["hist+leafops"] = time_proxboost(X, y, "hist", T, leafops=True)
            res["hist+leafops"].append(t)
            t, losses_["lightgbm"] = time_lightgbm(X, y, T)
            res["lightgbm"].append(t)
            if with_exact:
                t, _ = time_proxboost(X, y, "exact", T_exact)
                res["exact"].append(t)
        med = {k: float(np.median(v)) * 1e3 if v else float("nan") for k, v in res.items()}
        spread = {
            k: (float(np.min(v)) * 1e3, float(np.max(v)) * 1e3) if v else (np.nan, np.nan)
            for k, v in res.items()
        }
        rows.append(
            dict(
                n=n,
                d=d,
                T=T,
                T_exact=T_exact,
                med=med,
                spread=spread,
                losses=losses_,
                load=(load0, os.getloadavg()[0]),
            )
        )
        print(
            f"  done {n} x {d}: " + ", ".join(f"{k} {v:.3f} ms" for k, v in med.items()), flush=True
        )
    return rows


def print_table(rows, repeats):
    print(
        f"\nPer-iteration time, ms (median of {repeats}; min-max in brackets), algo=prox, loss=lad,"
        f" depth {DEPTH}, nu={NU}, 1 thread\n"
    )
    print(
        "| n x d | T | hist | hist+leafops | LightGBM l1 | exact (T) | hist / LightGBM "
        "| hist+leafops / LightGBM | exact / hist | exact / hist+leafops | load avg |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        m, s = r["med"], r["spread"]

        def cell(k, m=m, s=s):
            return f"{m[k]:.2f} [{s[k][0]:.2f}-{s[k][1]:.2f}]"

        print(
            f"| {r['n']} x {r['d']} | {r['T']} | {cell('hist')} | {cell('hist+leafops')} |"
            f" {cell('lightgbm')} | {m['exact']:.1f} ({r['T_exact']}) |"
            f" {m['hist'] / m['lightgbm']:.2f} | {m['hist+leafops'] / m['lightgbm']:.2f} |"
            f" {m['exact'] / m['hist']:.1f} | {m['exact'] / m['hist+leafops']:.1f} |"
            f" {r['load'][0]:.1f} -> {r['load'][1]:.1f} |"
        )
    print("\nFinal training loss (mean |y - f_T|) of the last repetition, a sanity check:")
    for r in rows:
        print(
            f"  {r['n']} x {r['d']}: " + ", ".join(f"{k} {v:.4f}" for k, v in r["losses"].items())
        )


# The lexsort line searches of proxboost.losses as written before the compiled kernels (kept
# here so that the comparison survives the wiring of _leafops into losses.py).
def _lexsort_points(values, leaf_ids, n_leaves, ranks_of):
    """Sort once by (leaf, value); ranks_of(counts) -> 1-based (lo, hi) ranks; tie rule."""
    order = np.lexsort((values, leaf_ids))
    sorted_v = values[order]
    counts = np.bincount(leaf_ids, minlength=n_leaves)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    picked = []
    for rank in ranks_of(counts):
        out = np.empty(n_leaves)
        below, above = rank < 1, rank > counts
        inside = ~below & ~above
        out[below], out[above] = -np.inf, np.inf
        out[inside] = sorted_v[starts[inside] + rank[inside] - 1]
        picked.append(out)
    lo, hi = picked
    with np.errstate(invalid="ignore"):
        mid = np.where(
            np.isfinite(lo) & np.isfinite(hi), 0.5 * (lo + hi), np.where(np.isfinite(lo), lo, hi)
        )
    out = np.where((lo <= 0.0) & (0.0 <= hi), 0.0, mid)
    out[counts == 0] = 0.0
    return out


def lexsort_quantile_line_search(u, leaf_ids, n_leaves, tau):
    def ranks_of(counts):
        tm = tau * counts
        k = np.rint(tm).astype(np.int64)
        integer = np.abs(tm - k) <= 1e-9 * np.maximum(counts, 1)
        lo = np.where(integer, k, np.ceil(tm).astype(np.int64))
        return lo, np.where(integer, k + 1, lo)

    return _lexsort_points(u, leaf_ids, n_leaves, ranks_of)


def lexsort_hinge_line_search(y, z, leaf_ids, n_leaves):
    n_pos = np.bincount(leaf_ids, weights=(y > 0), minlength=n_leaves).astype(np.int64)
    return _lexsort_points(y - z, leaf_ids, n_leaves, lambda counts: (n_pos, n_pos + 1))


def _timed(fn, calls):
    def wrapper(*args):
        t0 = time.perf_counter()
        out = fn(*args)
        calls.append(time.perf_counter() - t0)
        return out

    return wrapper


def line_search_share(n=100_000, d=20, T=60, repeats=3):
    """Per-iteration ms and the share spent in the lad line search, numpy vs compiled.

    Iterations 2..T (the first one includes the binning), as the timing table.
    """
    X, y = spec_regression(n, d)
    original = losses.quantile_line_search
    out = {}
    for name, fn in (
        ("lexsort (numpy)", lexsort_quantile_line_search),
        ("_leafops (compiled)", _leafops.quantile_line_search),
    ):
        iters, shares = [], []
        for _ in range(repeats):
            calls = []
            losses.quantile_line_search = _timed(fn, calls)
            try:
                model = BoostingRegressor(
                    loss="lad",
                    algo="prox",
                    n_estimators=T,
                    learning_rate=NU,
                    step=STEP,
                    max_depth=DEPTH,
                    engine="hist",
                ).fit(X, y)
            finally:
                losses.quantile_line_search = original
            total = model.train_time_[T] - model.train_time_[1]
            iters.append(total / (T - 1))
            shares.append(sum(calls[-(T - 1) :]) / total)  # the f_0 line search (init) comes first
        out[name] = (float(np.median(iters)) * 1e3, float(np.median(shares)))
    return out


def kernel_speedups(n=100_000, repeats=20):
    rng = np.random.RandomState(0)
    u = rng.normal(size=n)
    y = rng.choice([-1.0, 1.0], size=n)
    rows = []
    for n_leaves in (8, 1024):
        ids = rng.randint(0, n_leaves, n).astype(np.intp)
        cases = [
            (
                "quantile tau=0.5",
                lexsort_quantile_line_search,
                _leafops.quantile_line_search,
                (u, ids, n_leaves, 0.5),
            ),
            (
                "quantile tau=0.9",
                lexsort_quantile_line_search,
                _leafops.quantile_line_search,
                (u, ids, n_leaves, 0.9),
            ),
            ("hinge", lexsort_hinge_line_search, _leafops.hinge_line_search, (y, u, ids, n_leaves)),
        ]
        for name, slow, fast, args in cases:
            assert np.array_equal(slow(*args), fast(*args))
            t_slow, t_fast = [], []
            for _ in range(repeats):
                t0 = time.perf_counter()
                slow(*args)
                t_slow.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                fast(*args)
                t_fast.append(time.perf_counter() - t0)
            rows.append(
                (name, n_leaves, float(np.median(t_slow)) * 1e3, float(np.median(t_fast)) * 1e3)
            )
    return rows


def spec_classification(n, d, seed=0):
    rng = np.random.RandomState(seed)
    idx = np.arange(d)
    cov = 2.0 ** -np.abs(idx[:, None] - idx[None, :])
    X = rng.multivariate_normal(np.zeros(d), cov, size=n)
    s = (
        X[:, 0]
        + X[:, 3] ** 3
        + X[:, 8]
        + np.sin(X[:, 11] * X[:, 17])
        + rng.normal(0, np.sqrt(0.1), n)
    )
    return X, np.where(s > 0.38, 1.0, -1.0)


def compare_engines(T=1000, depth=3):
    """The convergence setting (docs/protocol.md): final train / test loss and fit seconds, exact vs
    hist.
    """
    out = []
    for task, (X, y), loss_names in (
        ("regression", spec_regression(800, 100), ("ls", "lad")),
        ("classification", spec_classification(1500, 50), ("exponential", "hinge")),
    ):
        perm = np.random.RandomState(0).permutation(len(y))
        tr, te = perm[: len(y) // 2], perm[len(y) // 2 :]
        Est = BoostingRegressor if task == "regression" else BoostingClassifier
        for loss in loss_names:
            for algo in ALGOS:
                res = {}
                for engine in ("exact", "hist"):
                    t0 = time.perf_counter()
                    model = Est(
                        loss=loss,
                        algo=algo,
                        n_estimators=T,
                        learning_rate=NU,
                        step=STEP,
                        max_depth=depth,
                        engine=engine,
                        random_state=0,
                    ).fit(X[tr], y[tr], eval_set=(X[te], y[te]))
                    res[engine] = (
                        model.train_loss_[-1],
                        model.eval_loss_[-1],
                        time.perf_counter() - t0,
                    )
                out.append((loss, algo, res))
                print(
                    f"  {loss:12s} {algo:22s} "
                    + "  ".join(
                        f"{k}: train {v[0]:.4f} test {v[1]:.4f} ({v[2]:.1f} s)"
                        for k, v in res.items()
                    ),
                    flush=True,
                )
    return out


_STARTUP = textwrap.dedent("""
    import time
    t0 = time.perf_counter()
    import numpy as np
    import proxboost
    from proxboost import BoostingRegressor, BoostingClassifier, _leafops
    t1 = time.perf_counter()
    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, 5)); y = X[:, 0] + rng.normal(size=300)
    BoostingRegressor(loss="lad", n_estimators=3, engine="hist").fit(X, y).predict(X)
    ids = rng.randint(0, 4, 300)
    _leafops.quantile_line_search(y, ids, 4, 0.5)
    _leafops.hinge_line_search(np.sign(y), y, ids, 4)
    t2 = time.perf_counter()
    print(f"{t1 - t0:.3f} {t2 - t1:.3f}")
""")


def startup_times(repeats=3):
    """(import s, first fit s, process wall s) medians, cold (empty cache) and warm."""
    out = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for kind in ("cold", "warm"):
            vals = []
            for _ in range(1 if kind == "cold" else repeats):
                t0 = time.perf_counter()
                res = subprocess.run(
                    [sys.executable, "-c", _STARTUP],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                wall = time.perf_counter() - t0
                imp, first = map(float, res.stdout.split())
                vals.append((imp, first, wall))
            out[kind] = tuple(float(np.median([v[i] for v in vals])) for i in range(3))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--quick", action="store_true", help="smaller T, 3 repeats, skip 10^5 exact"
    )
    parser.add_argument("--no-exact", action="store_true")
    parser.add_argument(
        "--sections",
        default="timing,linesearch,kernels,startup",
        help="comma-separated: timing, linesearch, kernels, startup, compare",
    )
    parser.add_argument(
        "--no-startup", action="store_true", help="same as leaving startup out of --sections"
    )
    args = parser.parse_args()
    sections = set(args.sections.split(","))
    if args.no_startup:
        sections.discard("startup")
    # (n, d, T for hist / LightGBM, T for exact)
    sizes = [(400, 100, 200, 50), (10_000, 20, 200, 20), (100_000, 20, 100, 6)]
    repeats = args.repeats
    if args.quick:
        sizes = [(400, 100, 60, 20), (10_000, 20, 60, 10), (100_000, 20, 30, 3)]
        repeats = min(repeats, 3)
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, load avg {os.getloadavg()}",
        flush=True,
    )
    if "timing" in sections:
        rows = run_sizes(sizes, repeats, with_exact=not args.no_exact)
        print_table(rows, repeats)
    if "linesearch" in sections:
        share = line_search_share(T=30 if args.quick else 60)
        print(
            "\nlad line search in one prox iteration, hist engine, 100000 x 20, depth 3 (median of"
            " 3 fits):"
        )
        for name, (it, sh) in share.items():
            print(
                f"  {name:20s}: iteration {it:.2f} ms, line search {sh * it:.2f} ms ="
                f" {100 * sh:.0f} %"
            )
    if "kernels" in sections:
        print(
            "\nLine-search kernels alone, 100000 rows (median of 20 calls, bit-identical"
            " results):\n"
        )
        print("| kernel | leaves | lexsort (numpy), ms | _leafops, ms | speed-up |")
        print("|---|---|---|---|---|")
        for name, n_leaves, slow, fast in kernel_speedups():
            print(f"| {name} | {n_leaves} | {slow:.2f} | {fast:.2f} | {slow / fast:.1f}x |")
    if "compare" in sections:
        print(
            "\nEngines on the convergence setting (depth 3, T = 1000, nu = 0.05, lambda = 1, 50/50"
            " split):",
            flush=True,
        )
        res = compare_engines()
        print(
            "\n| loss | algo | train exact | train hist | test exact | test hist | fit s exact |"
            " fit s hist |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for loss, algo, r in res:
            e, h = r["exact"], r["hist"]
            print(
                f"| {loss} | {algo} | {e[0]:.4f} | {h[0]:.4f} | {e[1]:.4f} | {h[1]:.4f} |"
                f" {e[2]:.1f} | {h[2]:.1f} |"
            )
    if "startup" in sections:
        st = startup_times()
        print(
            "\nNumba start-up in a fresh interpreter (import proxboost | first small fit + predict"
            " + line searches | whole process), seconds:"
        )
        for kind, (imp, first, wall) in st.items():
            print(f"  {kind:4s}: import {imp:.2f} | first fit {first:.2f} | process {wall:.2f}")
    print(f"\nload avg at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
