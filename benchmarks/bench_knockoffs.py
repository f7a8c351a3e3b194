"""Benchmark: the model-X knockoff filter for p >> n (issue #21).

(1) ``KnockoffSelector(statistic="lasso_coef_diff").fit(X, y)`` (5-fold CV penalty),
``KnockoffSelector(FisherScore())`` and the default ``KnockoffSelector()`` (the Fisher
difference for class labels since issue #33) at n = 100, p = 20000: wall
time (median of repeats) and extra peak memory (tracemalloc and RSS) against the 3.2 GB of one
p x p float64 matrix; planted features found and false discoveries recorded. Peer in the same
run: scikit-learn's ``LassoCV`` on the same augmented n x 2p matrix (the statistic alone,
without knockoffs), so the ratio shows what the construction and the filter add.

(2) One knockoff draw, low-rank (``sparsefs._kernels.knockoffs``) against the dense p x p
formulas (explicit inverse and symmetric square root: the textbook construction, written
here) at p = 2000, from the same Gaussian draw, both on one BLAS thread (the policy of the
knockoff fit); the two draws are checked equal.

Targets (issue #21): (1) < 60 s without a p x p allocation (traced peak < 1/10 of p x p).
A failed target or check exits with status 1 after the JSON line.

Run: ``python benchmarks/bench_knockoffs.py [--quick] [--repeat N] [--out FILE]``.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.linear_model import LassoCV

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import (
    BenchRun,
    bench_parser,
    call_peak_memory,
    emit_json,
    print_table,
    repeat_for,
    time_call,
)

from sparsefs._kernels import knockoffs as ko
from sparsefs.datasets import make_planted_classification
from sparsefs.selection import FisherScore, KnockoffSelector
from sparsefs.utils._threads import blas_single_thread

TIME_LIMIT_S = 60.0
SEED = 0


def dense_knockoffs(Z: np.ndarray, model: ko.KnockoffModel, G: np.ndarray) -> np.ndarray:
    """The p x p construction: Sigma formed, inverted, C = 2sI - s^2 Sigma^-1 square-rooted."""
    p = Z.shape[1]
    U, lam, delta, s = model.components, model.eigenvalues, model.shrinkage, model.s
    sigma = delta * np.eye(p) + (U * lam) @ U.T
    inv = np.linalg.inv(sigma)
    w, V = np.linalg.eigh(2 * s * np.eye(p) - s * s * inv)
    return Z - s * Z @ inv + G @ ((V * np.sqrt(np.maximum(w, 0))) @ V.T)


def main() -> int:
    args = bench_parser("knockoff filter for p >> n", default_repeat=3).parse_args()
    run = BenchRun("knockoffs", args)
    repeat = repeat_for(args)
    n, p = 100, 20000
    p_dense = 1000 if args.quick else 2000
    data = make_planted_classification(n_samples=n, n_features=p, n_informative=20,
                                       n_classes=2, shift=1.5, random_state=SEED)
    X, y, truth = data.X, data.y, data.support
    ok = True
    rows, results = [], {}
    fits = {
        "lasso_coef_diff": lambda: KnockoffSelector(statistic="lasso_coef_diff",
                                                    random_state=SEED),
        "fisher_score_diff": lambda: KnockoffSelector(FisherScore(), random_state=SEED),
        # issue #33: the default statistic for class labels (the Fisher difference)
        "default": lambda: KnockoffSelector(random_state=SEED),
    }
    for name, make in fits.items():
        print(f"timing {name} ...", file=sys.stderr)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = time_call(lambda make=make: make().fit(X, y), repeat=repeat, warmup=0,
                          name=name)
            mem = call_peak_memory(lambda make=make: make().fit(X, y))
            sel = make().fit(X, y)
        hits = int((sel.support_ & truth).sum())
        false = int((sel.support_ & ~truth).sum())
        pass_time = t.median < TIME_LIMIT_S
        pass_mem = mem["traced_mib"] * 1024**2 < p * p * 8 / 10
        ok &= pass_time and pass_mem
        rows.append({"fit": name, "median_s": t.median, "traced_mib": mem["traced_mib"],
                     "rss_mib": mem["rss_mib"], "pxp_mib": p * p * 8 / 1024**2,
                     "selected": int(sel.support_.sum()), "planted_hits": hits,
                     "false": false, "within_60s": pass_time, "no_pxp": pass_mem})
        results[name] = {"timing": t.to_dict(), "memory": mem, "hits": hits, "false": false,
                         "n_components": sel.n_components_,
                         "noise_variance": sel.noise_variance_}
    # peer: the lasso statistic alone (LassoCV, same augmented matrix shape, same grid size)
    print("timing LassoCV peer ...", file=sys.stderr)
    Z, _, _ = ko.standardize(X)
    model = ko.fit_spiked_model(Z)
    A = np.hstack([Z, ko.sample_knockoffs(model, Z, np.random.default_rng(SEED))])
    grid = {"n_alphas": 10} if "n_alphas" in LassoCV().get_params() else {"alphas": 10}
    peer = time_call(lambda: LassoCV(cv=5, eps=0.05, tol=1e-4, **grid).fit(A, y),
                     repeat=1, warmup=0, name="LassoCV")  # slow: timed once
    rows.append({"fit": "peer: LassoCV on [X, X~]", "median_s": peer.median})
    results["lasso_cv_peer"] = {"timing": peer.to_dict(),
                                "ratio_peer_over_sparsefs": peer.median
                                / results["lasso_coef_diff"]["timing"]["median_s"]}
    print_table(rows, ["fit", "median_s", "traced_mib", "rss_mib", "pxp_mib", "selected",
                       "planted_hits", "false", "within_60s", "no_pxp"])

    # (2) one draw: low rank against the dense p x p formulas
    print(f"timing one draw at p = {p_dense} ...", file=sys.stderr)
    Zd, _, _ = ko.standardize(X[:, :p_dense])
    md = ko.fit_spiked_model(Zd)
    G = np.random.default_rng(1).standard_normal(Zd.shape)
    with blas_single_thread():  # both on one BLAS thread (the knockoff fit's own policy)
        low = time_call(lambda: ko.sample_knockoffs(md, Zd, np.random.default_rng(1)),
                        repeat=repeat, warmup=1, name="low_rank")
        dense = time_call(lambda: dense_knockoffs(Zd, md, G), repeat=repeat, warmup=0,
                          name="dense")
    err = float(np.abs(ko.sample_knockoffs(md, Zd, np.random.default_rng(1))
                       - dense_knockoffs(Zd, md, G)).max())
    same = err < 1e-6
    ok &= same
    draw_rows = [{"p": p_dense, "low_rank_s": low.median, "dense_s": dense.median,
                  "ratio_dense_over_low_rank": dense.median / low.median, "max_abs_diff": err,
                  "equal": same}]
    print_table(draw_rows, ["p", "low_rank_s", "dense_s", "ratio_dense_over_low_rank",
                            "max_abs_diff", "equal"])
    results["one_draw"] = {"low_rank": low.to_dict(), "dense": dense.to_dict(),
                           "max_abs_diff": err}
    emit_json(run.finish({"n": n, "p": p, "rows": rows, "draw": draw_rows,
                          "results": results, "ok": bool(ok)}), out=args.out)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
