"""Sparse k-means: L0KMeans (fixed s, and the gap path) timed against scikit-learn KMeans.

Two figures, each with its peer timed in the same run on the same seeded data
(benchmarks/README.md):

1. **fixed s**: ``L0KMeans(n_clusters=5, n_features_to_select=m, n_init=1)`` on dense float64
   matrices (5 balanced clusters, m informative columns at random positions shifted by the
   cluster's offset, the rest N(0, 1)) against ONE ``sklearn.cluster.KMeans(n_clusters=5,
   n_init=1)`` fit on all columns, at 2000 x 10000 (m = 500) and, for the n scaling, at
   10 000 x 2000 and 50 000 x 2000 (m = 200). Target at every size: L0KMeans at most 3x the
   KMeans time. For information also ``SparseKMeans`` (l1) at a fixed bound on the first
   size, and the fitted log-log slope of time against n for both. Checks: the l0 support
   recovers the informative columns.
2. **gap path**: ``L0KMeans(n_clusters=6)`` with ``n_features_to_select=None`` (the default
   tuning: 20 log-spaced values of s, B = 10 permuted copies, n_init = 20) on the
   Experiment 1 design of Chang et al. (120 x 2000, 200 relevant). Target <= 60 s. Peer:
   one ``KMeans(n_clusters=6, n_init=20)`` fit. Check: chosen s in [120, 300] (spec 3.8).

``--quick``: 1000 x 5000 (250 informative) and 5000 / 10 000 x 1000 (100) for (1), and a
10-value grid with B = 5 for (2).

Run: ``python benchmarks/bench_sparse_kmeans.py [--quick] [--repeat N] [--out FILE]``.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.cluster import KMeans
from sklearn.preprocessing import StandardScaler

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import (
    BenchRun,
    bench_parser,
    call_peak_memory,
    emit_json,
    fl_flag,
    print_table,
    repeat_for,
    time_call,
)

SEED = 0
MAX_SLOWDOWN = 3.0  # fixed-s target: L0KMeans <= 3x one KMeans fit
GAP_TARGET_S = 60.0


def make_fixed_case(n: int, p: int, n_informative: int, k: int = 5, seed: int = SEED):
    """k balanced clusters; informative columns shifted by 1.5 * (cluster offset)."""
    rng = np.random.default_rng(seed)
    y = rng.permutation(np.arange(n) % k)
    X = rng.standard_normal((n, p))
    informative = np.sort(rng.choice(p, n_informative, replace=False))
    offsets = rng.normal(scale=1.5, size=(k, n_informative))
    X[:, informative] += offsets[y]
    truth = np.zeros(p, dtype=bool)
    truth[informative] = True
    return X, y, truth


def fixed_s_case(args, repeat, n, p, m, with_l1=True):
    from sparsefs.clustering import L0KMeans, SparseKMeans
    from sparsefs.metrics import clustering_error_rate

    X, y, truth = make_fixed_case(n, p, m)

    def fit_l0():
        return L0KMeans(n_clusters=5, n_features_to_select=m, n_init=1, random_state=SEED).fit(X)

    def fit_l1():
        return SparseKMeans(n_clusters=5, wbound=float(np.sqrt(m)), n_init=1,
                            random_state=SEED).fit(X)

    def fit_km():
        return KMeans(n_clusters=5, n_init=1, random_state=SEED).fit(X)

    timings = {}
    cases = (("l0", fit_l0), ("kmeans", fit_km)) + ((("l1", fit_l1),) if with_l1 else ())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a ConvergenceWarning would not change the timing
        for name, fn in cases:
            print(f"  fixed s: timing {name} on {n}x{p} ...", file=sys.stderr, flush=True)
            timings[name] = time_call(fn, repeat=repeat, warmup=args.warmup, name=name)
        memory = ({name: call_peak_memory(fn) for name, fn in cases[:2]}
                  if n * p <= 20_000_000 else {})
    l0, km = timings["l0"].result, timings["kmeans"].result
    row = {
        "case": f"fixed s={m}: {n}x{p}, K=5",
        "n": n,
        "p": p,
        "l0_s": timings["l0"].median,
        "kmeans_s": timings["kmeans"].median,
        "l1_s": timings["l1"].median if with_l1 else None,
        "ratio_kmeans_over_l0": timings["kmeans"].median / timings["l0"].median,
        "l0_over_kmeans": timings["l0"].median / timings["kmeans"].median,
        "l0_n_iter": l0.n_iter_,
        "l1_n_iter": timings["l1"].result.n_iter_ if with_l1 else None,
        "l0_support_recall": float((l0.support_ & truth).sum() / m),
        "l0_cer": clustering_error_rate(y, l0.labels_),
        "kmeans_cer": clustering_error_rate(y, km.labels_),
        "l0_objective": float(l0.objective_path_[-1]),
        "l1_nonzero": int(np.count_nonzero(timings["l1"].result.weights_)) if with_l1 else None,
        "mem_traced_mib": {k: v["traced_mib"] for k, v in memory.items()},
        "timings": {k: t.to_dict() for k, t in timings.items()},
        "fl": timings["l0"].fl,
    }
    row["within_target"] = row["l0_over_kmeans"] <= MAX_SLOWDOWN
    row["check_ok"] = row["l0_support_recall"] >= 0.95
    return row


def fixed_s_cases(args, repeat):
    """The fixed-s figure at every size, and the n scaling (log-log slopes)."""
    if args.quick:
        sizes = [(1000, 5000, 250), (5000, 1000, 100), (10_000, 1000, 100)]
    else:
        sizes = [(2000, 10_000, 500), (10_000, 2000, 200), (50_000, 2000, 200)]
    rows = []
    for i, (n, p, m) in enumerate(sizes):
        rows.append(fixed_s_case(args, repeat if i < 2 else 1, n, p, m, with_l1=i == 0))
    a, b = rows[1], rows[2]  # same p, n differs
    scale = np.log(b["n"] / a["n"])
    slopes = {"l0": float(np.log(b["l0_s"] / a["l0_s"]) / scale),
              "kmeans": float(np.log(b["kmeans_s"] / a["kmeans_s"]) / scale)}
    return rows, slopes


def gap_case(args, repeat):
    from sparsefs.clustering import L0KMeans
    from sparsefs.datasets import make_sparse_clusters_exp1
    from sparsefs.metrics import clustering_error_rate

    data = make_sparse_clusters_exp1(random_state=SEED)
    X = StandardScaler().fit_transform(data.X)
    params = {}
    if args.quick:
        params = {"n_features_grid": np.unique(np.geomspace(6, 1000, 10).astype(int)),
                  "n_permutations": 5}

    def fit_gap():
        return L0KMeans(n_clusters=6, random_state=SEED, **params).fit(X)

    def fit_km():
        return KMeans(n_clusters=6, n_init=20, random_state=SEED).fit(X)

    print("  gap path: timing L0KMeans(n_features_to_select=None) ...", file=sys.stderr,
          flush=True)
    t_gap = time_call(fit_gap, repeat=repeat, warmup=0, name="l0_gap")
    t_km = time_call(fit_km, repeat=repeat, warmup=args.warmup, name="kmeans_n_init20")
    model, km = t_gap.result, t_km.result
    grid = model.gap_.grid
    row = {
        "case": f"gap path: 120x2000, {grid.shape[0]} values of s, "
        f"B={model.gap_.ref_log_objectives.shape[0]}",
        "l0_gap_s": t_gap.median,
        "l0_gap_cpu_s": t_gap.load.get("own_cpu_s"),
        "kmeans_s": t_km.median,
        "kmeans_fits_equivalent": t_gap.median / t_km.median,
        "chosen_s": model.n_features_to_select_,
        "noise_kept": int((model.support_ & ~data.support).sum()),
        "l0_cer": clustering_error_rate(data.y, model.labels_),
        "kmeans_cer": clustering_error_rate(data.y, km.labels_),
        "gap_curve": {"s": grid, "gap": model.gap_.gap, "sd": model.gap_.sd},
        "timings": {"l0_gap": t_gap.to_dict(), "kmeans": t_km.to_dict()},
        "fl": t_gap.fl,
    }
    row["within_target"] = row["l0_gap_s"] <= GAP_TARGET_S
    row["check_ok"] = 120 <= row["chosen_s"] <= 300
    return row


def main(argv=None) -> int:
    parser = bench_parser(__doc__.splitlines()[0], default_repeat=3)
    args = parser.parse_args(argv)
    repeat = repeat_for(args)
    run = BenchRun("sparse_kmeans", args)
    fixed, slopes = fixed_s_cases(args, repeat)
    gap = gap_case(args, 1)  # one timed fit: it is the long one
    for r in (*fixed, gap):
        r["load_flag"] = fl_flag(r["fl"])

    print(
        f"\nL0KMeans with fixed s vs ONE sklearn KMeans fit (n_init=1 both, same data); median of "
        f"{repeat} after {args.warmup} warm-up (1 timed fit at the largest n). Target: "
        f"L0KMeans <= {MAX_SLOWDOWN:g}x KMeans at every size.\n"
    )
    print_table(
        fixed,
        [
            ("case", "case"),
            ("l0_s", "L0KMeans s"),
            ("kmeans_s", "KMeans s"),
            ("l0_over_kmeans", "L0/KMeans"),
            ("within_target", "<= 3x"),
            ("l0_n_iter", "l0 iters"),
            ("l0_support_recall", "l0 recall"),
            ("l0_cer", "l0 CER"),
            ("kmeans_cer", "KMeans CER"),
            ("l1_s", "SparseKMeans s"),
            ("l1_nonzero", "l1 nonzero"),
            ("fl", "fl"),
        ],
    )
    print(f"\nn scaling (time ~ n^slope, from the two sizes with p = {fixed[1]['p']}): "
          f"L0KMeans {slopes['l0']:.2f}, KMeans {slopes['kmeans']:.2f}")
    print(f"\nGap path (one timed fit); target <= {GAP_TARGET_S:g} s; peer: one "
          "KMeans(n_init=20).\n")
    print_table(
        [gap],
        [
            ("case", "case"),
            ("l0_gap_s", "L0KMeans(tuned) s"),
            ("l0_gap_cpu_s", "CPU s"),
            ("kmeans_s", "KMeans(n_init=20) s"),
            ("kmeans_fits_equivalent", "= KMeans fits"),
            ("within_target", "<= 60 s"),
            ("chosen_s", "chosen s"),
            ("noise_kept", "noise kept"),
            ("l0_cer", "l0 CER"),
            ("kmeans_cer", "KMeans CER"),
            ("fl", "fl"),
        ],
    )
    bad = [r["case"] for r in (*fixed, gap) if not r["check_ok"]]
    print()
    print("checks: " + ("all passed." if not bad else f"!!! FAILED in: {', '.join(bad)} !!!"))
    payload = run.finish({"seed": SEED, "results": [*fixed, gap], "n_scaling_slopes": slopes,
                          "checks_ok": not bad})
    flag = payload["load"]["load_flag"]
    print(
        f"machine load over the run: fl={payload['load']['fl']}, loadavg "
        f"{payload['load']['loadavg_before']} -> {payload['load']['loadavg_after']}"
        + (f"  !!! {flag}" if flag else "")
    )
    emit_json(payload, out=args.out)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
