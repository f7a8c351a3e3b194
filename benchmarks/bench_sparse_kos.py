"""Sparse KOS on the credit-card data: tuned fit, CD sweep vs one kernel read, KOS vs peers.

Data: ``UCI_Credit_Card.csv`` (Yeh & Lien 2009; columns X1..X23, target Y) read from
``$SPARSEFS_DATA`` or ``../shared/data`` (never copied); subsampled to n = 3000 rows without
replacement with ``numpy.random.default_rng(SEED)`` as the paper does (n = 1000 with
``--quick``). Skipped with a message (exit 0, a JSON line with ``"skipped"``) when absent.

Three measurements, all in the same process and on the same rows:

1. **Fully tuned fit** (sigma2, gamma, lambda all ``None``: 5 sigma2 quantiles x 5 folds x a
   20-value warm-started lambda path, then the final path), timed once (it is long), for
   ``SparseKOSClassifier(sigma2_selection="joint", random_state=0)`` (the paper's tuning and
   closed form (5) by Cholesky), ``closed_form="package"`` (matrix-free conjugate gradients,
   joint), and ``closed_form="package", sigma2_selection="kos"`` (sigma2 first by the KOS CV
   error; sparsefs's default tuning since issue #31). Target (issue #5): <= 60 s.
   Recorded: the chosen sigma2, gamma, lambda, the selected features (the paper: feature 6,
   X6, is always selected) and the time. ``--variants`` picks among ``kos``, ``joint`` and
   ``paper`` (default: all three); ``--skip-paper`` leaves the slow paper variant out;
   ``--n-jobs`` passes ``n_jobs`` (threads over the CV paths) to every variant.
   Recorded too: the outer iterations (linearisations) and how many training kernels (one
   per line-search trial and per closed-form solve) were dense n x n or grouped, the kernel of
   the distinct rows (exact; the credit data has integer-coded features, so once few features
   remain most rows repeat).
2. **One coordinate-descent sweep vs one read of the n x n kernel**: at w = 1 on all n rows (the
   tuned sigma2 and gamma of the fastest variant), the quadratic model (14) is built, then
   ``coordinate_descent(max_sweeps=1)`` is timed against ``K @ v`` (one pass over the 72 MB
   kernel). Target: sweep <= 2 x read. Also timed, as context: the whole linearised weight step
   (T by one GEMM + Q, beta + CD to convergence).
3. **Plain KOS** (``alpha=0``, fixed sigma2 and gamma) against scikit-learn's ``KernelRidge``
   (rbf, ``gamma=1/sigma2``, ``alpha=n*gamma``, on the optimal scores) and ``SVC(kernel="rbf")``
   at the same n, median of ``--repeat`` fits after ``--warmup``.

Ratios are peer time / sparsefs time (> 1: sparsefs faster). The numba first-call cost is paid
by a tiny warm-up fit before any timing and reported apart.

Run: ``python benchmarks/bench_sparse_kos.py [--quick] [--variants kos,joint,paper]
[--skip-paper] [--n-jobs N] [--repeat N] [--out F]``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import (
    BenchRun,
    LoadMonitor,
    bench_parser,
    emit_json,
    fl_flag,
    print_table,
    repeat_for,
    time_call,
)

SEED = 0
TARGET_TUNED_S = 60.0
TARGET_SWEEP_OVER_READ = 2.0
FILE = "UCI_Credit_Card.csv"


def load_credit(n: int):
    """(X, y, path) for ``n`` rows drawn without replacement, or (None, None, None)."""
    import pandas as pd

    from sparsefs.datasets._asu import shared_data_dir

    root = shared_data_dir()
    path = None if root is None else root / FILE
    if path is None or not path.is_file():
        return None, None, None
    frame = pd.read_csv(path)
    X = frame[[f"X{i}" for i in range(1, 24)]].to_numpy(dtype=np.float64)
    y = frame["Y"].to_numpy()
    rows = np.random.default_rng(SEED).choice(X.shape[0], n, replace=False)
    return X[rows], y[rows], path


VARIANTS = {
    "kos": ("package CG, sigma2 by KOS CV",
            {"closed_form": "package", "sigma2_selection": "kos"}),
    "joint": ("package CG, joint (sigma2, lambda)",
              {"closed_form": "package", "sigma2_selection": "joint"}),
    "paper": ("paper's tuning: paper (5), joint (sigma2, lambda)", {"sigma2_selection": "joint"}),
}


def numba_first_call_s() -> float:
    """First fit of the process on a tiny problem (numba compiles or loads its cache)."""
    from sparsefs.classification import SparseKOSClassifier

    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(30, 3)), np.arange(30) % 2
    t0 = time.perf_counter()
    SparseKOSClassifier(1.0, 0.1, 1e-3, n_alphas=2).fit(X, y)
    return time.perf_counter() - t0


class _SolveCounter:
    """Counts outer iterations and dense / grouped training kernels (wraps the kernels)."""

    def __enter__(self):
        from sparsefs._kernels import sparse_kos as k

        self.k = k
        self.counts = {"outer_iterations": 0, "dense_kernels": 0, "grouped_kernels": 0}
        self.saved = (k.kernel_jacobian, k.weighted_kernel)
        jacobian, kernel = self.saved

        def counted_jacobian(*args, **kwargs):
            self.counts["outer_iterations"] += 1
            return jacobian(*args, **kwargs)

        def counted_kernel(*args, **kwargs):
            K = kernel(*args, **kwargs)
            grouped = isinstance(K, k.GroupedKernel)
            self.counts["grouped_kernels" if grouped else "dense_kernels"] += 1
            return K

        k.kernel_jacobian, k.weighted_kernel = counted_jacobian, counted_kernel
        return self

    def __exit__(self, *exc):
        self.k.kernel_jacobian, self.k.weighted_kernel = self.saved


def tuned_fit(X, y, name: str, params: dict) -> dict:
    from sparsefs.classification import SparseKOSClassifier

    print(f"tuned fit: {name} ...", file=sys.stderr, flush=True)
    mon = LoadMonitor().start()
    with _SolveCounter() as counter:
        t0 = time.perf_counter()
        clf = SparseKOSClassifier(random_state=0, **params).fit(X, y)
        elapsed = time.perf_counter() - t0
    load = mon.stop()
    print(f"  {name}: {elapsed:.1f} s (cpu {load['own_cpu_s']:.1f} s, fl {load['fl']}), "
          f"sigma2 {clf.sigma2_:.4g}, gamma {clf.ridge_:.4g}, lambda {clf.alpha_:.4g}, "
          f"selected {np.flatnonzero(clf.support_) + 1}", file=sys.stderr, flush=True)
    return {
        "variant": name,
        "params": params,
        "seconds": elapsed,
        "meets_target": elapsed <= TARGET_TUNED_S,
        "sigma2": clf.sigma2_,
        "ridge": clf.ridge_,
        "alpha": clf.alpha_,
        "alpha_over_max": clf.alpha_ / clf.alpha_max_ if clf.alpha_max_ > 0 else None,
        "cv_error": float(np.nanmin(clf.cv_errors_)),
        "selected": [f"X{j + 1}" for j in np.flatnonzero(clf.support_)],
        "x6_selected": bool(clf.support_[5]),
        "n_iter_final": clf.n_iter_,
        **counter.counts,
        "cpu_s": load["own_cpu_s"],
        "fl": load["fl"],
        "load_flag": fl_flag(load["fl"], load["fl_coarse"]),
        "_clf": clf,
    }


def sweep_vs_read(X, y, sigma2: float, ridge: float, repeat: int, warmup: int) -> dict:
    from sparsefs._kernels import sparse_kos as k
    from sparsefs.classification._sparse_kos import _standardize

    Xs, _, _, usable = _standardize(X, True)
    Z = k.optimal_scores(np.unique(y, return_inverse=True)[1], 2)
    w = usable.astype(np.float64)
    state = k.kos_state(Xs, Z, sigma2, ridge, w, form="package", solver="cg")
    K = np.asarray(state.K)  # dense at w = 1 (grouped only when rows repeat)
    T = k.kernel_jacobian(K, Xs, state.dual_coef, w, sigma2)
    Q, beta = k.quadratic_model(T, Z - state.fitted, state.dual_coef, w, ridge)
    lam = 0.2 * 2 * np.abs(beta).max()
    v = np.random.default_rng(2).normal(size=K.shape[0])
    many = max(50, 10 * repeat)
    read = time_call(lambda: K @ v, repeat=many, warmup=warmup, name="K @ v (one read)")
    sweep = time_call(
        lambda: k.coordinate_descent(Q, beta, w, lam, max_sweeps=1),
        repeat=many, warmup=max(1, warmup), name="one CD sweep",
    )

    def weight_step():
        T_ = k.kernel_jacobian(K, Xs, state.dual_coef, w, sigma2)
        Q_, b_ = k.quadratic_model(T_, Z - state.fitted, state.dual_coef, w, ridge)
        return k.coordinate_descent(Q_, b_, w, lam)

    step = time_call(weight_step, repeat=repeat, warmup=warmup, name="weight step")
    return {
        "n": K.shape[0],
        "p": Xs.shape[1],
        "kernel_mib": K.nbytes / 2**20,
        "read_s": read.median,
        "sweep_s": sweep.median,
        "sweep_over_read": sweep.median / read.median,
        "meets_target": sweep.median <= TARGET_SWEEP_OVER_READ * read.median,
        "weight_step_s": step.median,
        "weight_step_over_read": step.median / read.median,
        "cd_sweeps_in_step": int(step.result[1]),
        "timings": [read.to_dict(), sweep.to_dict(), step.to_dict()],
    }


def kos_vs_peers(X, y, sigma2: float, ridge: float, repeat: int, warmup: int) -> dict:
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.svm import SVC

    from sparsefs._kernels import sparse_kos as k
    from sparsefs.classification import SparseKOSClassifier

    n = X.shape[0]
    mean, sd = X.mean(axis=0), X.std(axis=0)
    Xs = (X - mean) / np.where(sd > 0, sd, 1.0)
    Z = k.optimal_scores(np.unique(y, return_inverse=True)[1], 2)[:, 0]
    fits = {
        "KOS paper (5)": lambda: SparseKOSClassifier(sigma2, ridge, 0.0).fit(X, y),
        "KOS package (CG)": lambda: SparseKOSClassifier(
            sigma2, ridge, 0.0, closed_form="package").fit(X, y),
        "KernelRidge rbf": lambda: KernelRidge(
            alpha=n * ridge, kernel="rbf", gamma=1.0 / sigma2).fit(Xs, Z),
        "SVC rbf": lambda: SVC(kernel="rbf", gamma=1.0 / sigma2).fit(Xs, y),
    }
    timings = {name: time_call(fn, repeat=repeat, warmup=warmup, name=name)
               for name, fn in fits.items()}
    ours = timings["KOS paper (5)"].median
    rows = [{"fit": name, "seconds": t.median, "peer_over_kos": ours and t.median / ours,
             "fl": t.load["fl"]} for name, t in timings.items()]
    return {"rows": rows, "timings": [t.to_dict() for t in timings.values()]}


def main() -> int:
    parser = bench_parser("sparse KOS on the credit-card data (tuned fit, CD sweep, peers)")
    parser.add_argument("--variants", default="kos,joint,paper", metavar="LIST",
                        help="tuned fits to time, from kos,joint,paper (default: all three)")
    parser.add_argument("--skip-paper", action="store_true",
                        help="leave out the tuned fit with the paper's closed form and tuning")
    parser.add_argument("--n-jobs", type=int, default=None, metavar="N",
                        help="n_jobs of every tuned fit (threads over the CV paths)")
    args = parser.parse_args()
    wanted = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = sorted(set(wanted) - set(VARIANTS))
    if unknown:
        parser.error(f"--variants: unknown {unknown}; choose from {sorted(VARIANTS)}")
    if args.skip_paper and "paper" in wanted:
        wanted.remove("paper")
    repeat, warmup = repeat_for(args), args.warmup
    n = 1000 if args.quick else 3000
    run = BenchRun("sparse_kos", args)
    X, y, path = load_credit(n)
    if X is None:
        print(f"{FILE} not found in $SPARSEFS_DATA or ../shared/data: benchmark skipped.",
              file=sys.stderr)
        emit_json(run.finish({"skipped": f"{FILE} not found"}), out=args.out)
        return 0
    first = numba_first_call_s()

    extra = {} if args.n_jobs is None else {"n_jobs": args.n_jobs}
    tuned = [tuned_fit(X, y, VARIANTS[v][0], {**VARIANTS[v][1], **extra}) for v in wanted]
    if not tuned:
        parser.error("--variants: nothing to run")
    ref = tuned[0]["_clf"]
    for t in tuned:
        t.pop("_clf")
    print_table(
        tuned,
        ["variant", ("seconds", "s"), ("cpu_s", "cpu s"), ("meets_target", "<= 60 s"),
         "sigma2", "ridge",
         ("alpha_over_max", "alpha/max"), ("cv_error", "cv err"), "selected",
         ("outer_iterations", "outer it"), ("dense_kernels", "dense K"),
         ("grouped_kernels", "grouped K"), "fl"],
        title=f"\nFully tuned fit, credit data n = {n} (target <= {TARGET_TUNED_S:.0f} s)",
    )
    print(f"numba first call (compile or cache load): {first:.2f} s")

    print("sweep vs read ...", file=sys.stderr, flush=True)
    sweep = sweep_vs_read(X, y, ref.sigma2_, ref.ridge_, repeat, warmup)
    print_table(
        [sweep],
        ["n", "p", ("kernel_mib", "K MiB"), ("read_s", "K@v s"), ("sweep_s", "sweep s"),
         ("sweep_over_read", "sweep/read"), ("meets_target", "<= 2x"),
         ("weight_step_s", "weight step s"), ("weight_step_over_read", "step/read")],
        title="\nOne coordinate-descent sweep vs one read of the n x n kernel",
    )

    print("KOS vs peers ...", file=sys.stderr, flush=True)
    peers = kos_vs_peers(X, y, ref.sigma2_, ref.ridge_, repeat, warmup)
    print_table(peers["rows"], ["fit", ("seconds", "s"), ("peer_over_kos", "t / t(KOS (5))"),
                                "fl"],
                title=f"\nPlain KOS (alpha=0) vs peers, n = {n}, sigma2 = {ref.sigma2_:.3g}")

    payload = {
        "data": {"file": str(path), "n": n, "p": int(X.shape[1]), "seed": SEED,
                 "class_counts": np.bincount(np.unique(y, return_inverse=True)[1]).tolist()},
        "numba_first_call_s": first,
        "targets": {"tuned_fit_s": TARGET_TUNED_S, "sweep_over_read": TARGET_SWEEP_OVER_READ},
        "tuned": tuned,
        "sweep_vs_read": sweep,
        "kos_vs_peers": peers,
    }
    emit_json(run.finish(payload), out=args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
