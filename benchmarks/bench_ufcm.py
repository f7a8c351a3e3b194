"""Benchmark: UFCM end to end at d = 10^4 (matrix-free Lanczos W-step) and the dense eigen-step.

Times ``sparsefs.selection.UFCM(n_clusters=5, beta=BETA, random_state=0).fit(X)`` on seeded
wide data (n = 200 samples, 5 balanced clusters, 50 planted features at random indices, the
rest N(0, 1) noise):

* **e2e**: d = 10 000 with the default solver (matrix-free shift-inverted Lanczos) and default
  stopping - target **<= 10 s** (issue #33; issue #8's was 30 s); plus the same fit forced
  to a fixed 20 outer iterations (tol=0, one call), a heavier workload of the order of the
  ``max_iter=30`` budget;
* **dense vs Lanczos**: the same fit (same seed, same stopping) at d = 2000 with
  ``eigen_solver="dense"`` (LAPACK ``eigh`` of the formed d x d matrix) and with
  ``eigen_solver="arpack"``; ratio = dense time / Lanczos time (> 1: Lanczos faster). The two
  fits must follow the same path (same labels, same subspace): checked;
* **W-step**: one W-step alone (kernel ``w_step``) at d = 10 000 (Lanczos) and d = 2000 (dense
  and Lanczos), to show where the time goes;
* **memory**: tracemalloc peak of one d = 10 000 fit against the 800 MB the d x d matrix would
  take;
* **small fit** (issue #16): ``UFCM(n_clusters=3, n_features_to_select=13)`` on the embedded
  default (178 x 500, dense eigen-step) and on its N(0, 1)-noise variant, and
  ``UFCM(n_clusters=3)`` on issue #33's 90 x 200 case (three clusters of 30, 10 planted
  features each in two of them); target **<= 2 s** each (issue #33); the ratio to the
  d = 10 000 fit must be below 1 (the cost follows the sizes: it took 6-9 s before, longer than
  the large fit, when every k-means run paid scikit-learn's fixed overhead).

Checks (exit 1 after the JSON line if any fails): the objective history is non-decreasing
(relative slack 1e-9) in every fit; the dense and Lanczos fits at d = 2000 agree; at least 40
of the 50 planted features are in the top 50 at d = 10 000.

Median of 3 calls, no warm-up by default (a fit takes seconds); ``--quick``: d = 2000 and 500,
one call each, no fixed-iteration run.

Run: ``python benchmarks/bench_ufcm.py [--quick] [--repeat N] [--warmup N] [--out FILE]``.
"""

from __future__ import annotations

import sys
import warnings
from functools import partial
from pathlib import Path

import numpy as np

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

N_SAMPLES = 200
N_CLUSTERS = 5
N_INFORMATIVE = 50
SHIFT = 2.5
# relative to the mean feature scatter (the default; absolute 0.5 * n = 100 here): strong
# enough that rows of W shrink, the hard case for Lanczos on A itself
BETA = 0.5
SEED = 0
TARGET_S = 10.0
SMALL_TARGET_S = 2.0
FIXED_ITER = 20
MONOTONE_RTOL = 1e-9
MIN_HITS = 40

FULL = {"d_large": 10_000, "d_dense": 2_000}
QUICK = {"d_large": 2_000, "d_dense": 500}


def make_data(n: int, d: int, seed: int = SEED):
    """Balanced clusters; each planted feature has the cluster means SHIFT times a random
    permutation of linspace(-1, 1, k); noise N(0, 1)."""
    rng = np.random.default_rng(seed)
    y = rng.permutation(np.arange(n) % N_CLUSTERS)
    X = rng.standard_normal((n, d))
    informative = rng.choice(d, N_INFORMATIVE, replace=False)
    levels = np.linspace(-1.0, 1.0, N_CLUSTERS)
    means = np.column_stack([rng.permutation(levels) for _ in informative])
    X[:, informative] += SHIFT * means[y]
    return X, y, np.sort(informative)


def monotone(hist: np.ndarray) -> bool:
    return bool(np.all(np.diff(hist) >= -MONOTONE_RTOL * np.abs(hist[:-1])))


def fit_fn(UFCM, **params):
    def fit(X):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ConvergenceWarning of the fixed-iteration runs
            return UFCM(N_CLUSTERS, beta=BETA, random_state=SEED, **params).fit(X)

    return fit


def describe(t, est, informative=None) -> dict:
    row = {
        "median_s": t.median,
        "n_iter": int(est.n_iter_),
        "monotone": monotone(est.objective_),
        "timing": t.to_dict(),
        "fl": t.fl,
        "fl_coarse": t.load.get("fl_coarse"),
    }
    if informative is not None:
        row["hits_top50"] = int((est.ranking_[informative] <= N_INFORMATIVE).sum())
    return row


def main(argv=None) -> int:
    parser = bench_parser(__doc__.splitlines()[0], default_repeat=3)
    # A fit takes seconds: no warm-up by default (--warmup N to add some); --quick: 1 call.
    parser.set_defaults(warmup=0)
    args = parser.parse_args(argv)
    repeat = args.repeat if args.repeat is not None else (1 if args.quick else repeat_for(args))
    try:
        from sparsefs._kernels import ufcm as kernel
        from sparsefs.selection import UFCM
    except ImportError as exc:
        print(f"error: cannot import sparsefs: {exc}\ninstall it: pip install -e . --no-deps",
              file=sys.stderr)
        return 2
    sizes = QUICK if args.quick else FULL
    d_large, d_dense = sizes["d_large"], sizes["d_dense"]
    run = BenchRun("ufcm", args)

    # ---------------------------------------------------------------- end to end, d large
    X, _, informative = make_data(N_SAMPLES, d_large)
    print(f"  e2e d={d_large} (default stopping) ...", file=sys.stderr, flush=True)
    t_auto = time_call(fit_fn(UFCM), setup=X.copy, repeat=repeat, warmup=args.warmup,
                       name=f"e2e d={d_large}")
    e2e = [{"case": f"{N_SAMPLES}x{d_large} auto (Lanczos), default stop",
            **describe(t_auto, t_auto.result, informative)}]
    if not args.quick:
        print(f"  e2e d={d_large} ({FIXED_ITER} iterations) ...", file=sys.stderr, flush=True)
        t_fixed = time_call(fit_fn(UFCM, tol=0.0, max_iter=FIXED_ITER), setup=X.copy,
                            repeat=1, warmup=0, name=f"e2e d={d_large} fixed")
        e2e.append({"case": f"{N_SAMPLES}x{d_large} auto (Lanczos), {FIXED_ITER} iterations",
                    **describe(t_fixed, t_fixed.result, informative)})
    for row in e2e:
        row["within_target"] = row["median_s"] <= TARGET_S
    print("  memory ...", file=sys.stderr, flush=True)
    mem = call_peak_memory(fit_fn(UFCM), setup=X.copy)
    dxd_mib = d_large**2 * 8 / 1024**2

    # ---------------------------------------------------------------- dense vs Lanczos
    Xd, _, _ = make_data(N_SAMPLES, d_dense)
    timings = {}
    for solver in ("arpack", "dense"):
        print(f"  d={d_dense} eigen_solver={solver} ...", file=sys.stderr, flush=True)
        timings[solver] = time_call(fit_fn(UFCM, eigen_solver=solver), setup=Xd.copy,
                                    repeat=repeat, warmup=args.warmup,
                                    name=f"d={d_dense} {solver}")
    a, b = timings["arpack"].result, timings["dense"].result
    agree = {
        "same_labels": bool(np.array_equal(a.labels_, b.labels_)),
        "same_n_iter": bool(a.n_iter_ == b.n_iter_),
        "projector_max_diff": float(np.abs(a.components_ @ a.components_.T
                                           - b.components_ @ b.components_.T).max()),
        "objective_max_rel_diff": float(np.max(np.abs(a.objective_ - b.objective_)
                                               / np.abs(b.objective_)))
        if a.objective_.shape == b.objective_.shape else None,
    }
    agree["ok"] = bool(agree["same_labels"] and agree["same_n_iter"]
                       and agree["projector_max_diff"] < 1e-6)
    dense_rows = [
        {"case": f"{N_SAMPLES}x{d_dense} {solver}", **describe(t, t.result)}
        for solver, t in timings.items()
    ]
    ratio_dense = timings["dense"].median / timings["arpack"].median
    ratio_dense_vs_large = timings["dense"].median / t_auto.median

    # ---------------------------------------------------------------- one W-step
    print("  single W-steps ...", file=sys.stderr, flush=True)
    step_rows = []
    for d, solver, data in ((d_large, "arpack", X), (d_dense, "arpack", Xd),
                            (d_dense, "dense", Xd)):
        Xc, _, _ = kernel.prepare_data(data)
        rng = np.random.default_rng(SEED)
        labels = rng.permutation(np.arange(N_SAMPLES) % N_CLUSTERS)
        k = N_CLUSTERS - 1
        W0 = np.linalg.qr(rng.standard_normal((d, k)))[0]
        weights = BETA * kernel.data_scale(Xc) * kernel.reweight(
            W0, 0.5, kernel.smoothing_eps(d, k))
        factor = kernel.isometric_coordinates(Xc)
        v0 = rng.standard_normal(d)
        step = partial(kernel.w_step, Xc, labels, 1.0, weights, k, solver=solver, v0=v0,
                       factor=factor)
        t = time_call(step, repeat=repeat, warmup=args.warmup, name=f"w_step d={d} {solver}")
        step_rows.append({"case": f"W-step {N_SAMPLES}x{d} {solver} (d'={k})",
                          "median_s": t.median, "timing": t.to_dict(), "fl": t.fl,
                          "fl_coarse": t.load.get("fl_coarse")})

    # ---------------------------------------------------------------- small fits (#16)
    from sparsefs.datasets import load_default

    ds = load_default()
    Xg = ds.X.copy()
    Xg[:, ~ds.support] = np.random.default_rng(0).standard_normal((Xg.shape[0], 487))
    r90 = np.random.default_rng(0)
    X90 = r90.normal(size=(90, 200))
    X90[:30, :10] += 2.0
    X90[30:60, 10:20] += 2.0
    small_rows = []
    for name, data, k in (("178x500 embedded default", ds.X, 13),
                          ("178x500 N(0,1)-noise variant", Xg, 13),
                          ("90x200 issue #33 case", X90, None)):
        print(f"  small fit {name} ...", file=sys.stderr, flush=True)

        def small(X, k=k):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return UFCM(3, n_features_to_select=k, random_state=SEED).fit(X)

        t = time_call(small, setup=data.copy, repeat=max(repeat, 3), warmup=1,
                      name=f"small {name}")
        row = {"case": name, **describe(t, t.result),
               "ratio_to_large": t.median / t_auto.median,
               "within_target": t.median <= SMALL_TARGET_S}
        if k is not None:
            row["wine_hits"] = int((t.result.support_ & ds.support).sum())
        small_rows.append(row)

    # ---------------------------------------------------------------- report
    for r in e2e + dense_rows + step_rows + small_rows:
        flag = fl_flag(r["fl"], r["fl_coarse"])
        r["fl_shown"] = None if r["fl"] is None else (
            f"{r['fl']:.3f}" + ("~" if r["fl_coarse"] else "") + (" HIGH" if flag else ""))
        r["load_flag"] = flag
    print(f"\nUFCM(n_clusters={N_CLUSTERS}, beta={BETA:g}) on {N_SAMPLES} samples, "
          f"{N_INFORMATIVE} planted features; median of {repeat} after {args.warmup} warm-up "
          f"(fixed-iteration run: 1 call)\n")
    print_table(e2e, [("case", "end to end"), ("median_s", "s"), ("n_iter", "iters"),
                      ("within_target", f"<= {TARGET_S:g} s"), ("hits_top50", "hits@50"),
                      ("monotone", "monotone"), ("fl_shown", "fl")])
    print()
    print_table(dense_rows, [("case", "same fit, d = " + str(d_dense)), ("median_s", "s"),
                             ("n_iter", "iters"), ("monotone", "monotone"),
                             ("fl_shown", "fl")])
    print(f"ratio dense / Lanczos at d={d_dense}: {ratio_dense:.2f}; dense at d={d_dense} / "
          f"Lanczos at d={d_large}: {ratio_dense_vs_large:.2f}; paths agree: "
          + ("yes" if agree["ok"] else f"!!! NO !!! {agree}"))
    print()
    print_table(step_rows, [("case", "one W-step"), ("median_s", "s"), ("fl_shown", "fl")])
    print()
    print_table(small_rows, [("case", "small fit, UFCM(3)"), ("median_s", "s"),
                             ("n_iter", "iters"), ("wine_hits", "wine/13"),
                             ("within_target", f"<= {SMALL_TARGET_S:g} s"),
                             ("ratio_to_large", f"/ e2e d={d_large}"), ("fl_shown", "fl")])
    print(f"\nextra peak memory of one d={d_large} fit (tracemalloc): "
          f"{mem['traced_mib']:.1f} MiB; the d x d matrix alone would take {dxd_mib:.0f} MiB")

    checks = {
        "monotone_all": all(r["monotone"] for r in e2e + dense_rows),
        "dense_lanczos_agree": agree["ok"],
        "planted_hits_ok": all(r["hits_top50"] >= MIN_HITS for r in e2e),
        "target_met": all(r["within_target"] for r in e2e),
        "small_target_met": all(r["within_target"] for r in small_rows),
        "small_fit_cheaper_than_large": all(r["ratio_to_large"] < 1.0 for r in small_rows),
        "monotone_small": all(r["monotone"] for r in small_rows),
    }
    failed = [k for k in ("monotone_all", "dense_lanczos_agree", "planted_hits_ok",
                          "monotone_small") if not checks[k]]
    print(f"targets (issue #33: <= {TARGET_S:g} s at d = 10^4, <= {SMALL_TARGET_S:g} s for "
          "the small fits): "
          + ("met" if checks["target_met"] and checks["small_target_met"] else "NOT met")
          + ("" if not args.quick else " [--quick: smaller d, not the target size]"))
    if failed:
        print(f"!!! CHECKS FAILED: {', '.join(failed)} !!!")
    for r in e2e + dense_rows + step_rows + small_rows:
        r.pop("fl_shown")
    payload = run.finish({
        "n_samples": N_SAMPLES, "n_clusters": N_CLUSTERS, "n_informative": N_INFORMATIVE,
        "beta": BETA, "seed": SEED, "d_large": d_large, "d_dense": d_dense,
        "target_s": TARGET_S, "end_to_end": e2e, "dense_vs_lanczos": dense_rows,
        "ratio_dense_over_lanczos": ratio_dense,
        "ratio_dense_small_over_lanczos_large": ratio_dense_vs_large,
        "paths_agree": agree, "w_step": step_rows, "small_fit": small_rows,
        "memory": {**mem, "dxd_matrix_mib": dxd_mib}, "checks": checks,
    })
    print(f"machine load over the run: fl={payload['load']['fl']}"
          + (f" -- {payload['load']['load_flag']}" if payload["load"]["load_flag"] else ""))
    emit_json(payload, out=args.out)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
