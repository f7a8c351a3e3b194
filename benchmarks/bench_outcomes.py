"""Continuous and survival targets (issue #32): sparsefs against scikit-learn and lifelines.

Timed in the same run, on the same seeded data:

1. **Per-feature Cox tests**, 500 x 20 000 dense (``make_planted_survival``):
   ``UnivariateScore().fit`` (Breslow score tests of every gene) and the kernel alone; peer:
   lifelines' ``logrank_test``, one call per gene, timed on ``--peer-genes`` genes and
   scaled to 20 000 (lifelines has no vectorised per-feature test). The statistics are
   checked equal: sparsefs's ``ties="exact"`` score test of the median-split genes is the
   log-rank test.
2. **Cox lasso path to 50 features**, 500 x 20 000: ``LassoSelector(n_features_to_select=50)``
   (warm-started path, strong rules); and one Cox lasso fit at a fixed penalty on 500 x 200
   against lifelines' ``CoxPHFitter(penalizer=lam, l1_ratio=1)`` (same objective up to its
   smooth approximation of |b|; the coefficients' largest difference is reported).
3. **Regression F on CSR**, 100 000 x 20 000 (5% density, the single-cell matrix of
   ``bench_single_cell.py``; a continuous target from the first 50 genes): ``UnivariateScore``
   against scikit-learn's ``f_regression``; the top-50 sets are checked equal.
4. **Gaussian lasso**, 500 x 20 000 at one penalty: ``LassoSelector(alpha=0.3)`` against
   scikit-learn's ``Lasso`` on the standardised matrix (coefficients' largest difference).

Targets: (1) <= 1 s; (2) path <= 30 s; (3) not slower than ``f_regression``.

Run: ``python benchmarks/bench_outcomes.py [--quick] [--repeat N] [--out FILE]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import BenchRun, bench_parser, emit_json, print_table, repeat_for, time_call
from bench_single_cell import make_cells


def _row(case, call, t, peer=None, **extra):
    row = {"case": case, "call": call, "median_s": t.median, "min_s": t.min, "fl": t.fl}
    if peer is not None:
        row["peer_over_this"] = peer / t.median
    row.update(extra)
    return row


def cox_tests(rows, args, repeat):
    from lifelines.statistics import logrank_test

    from sparsefs._kernels import cox
    from sparsefs.datasets import make_planted_survival
    from sparsefs.selection import UnivariateScore

    n, p = (500, 2000) if args.quick else (500, 20_000)
    d = make_planted_survival(n_samples=n, n_features=p, n_informative=20, effect=0.4,
                              random_state=0)
    UnivariateScore(n_features_to_select=50).fit(d.X[:, :50], d.y)  # compile
    t_fit = time_call(lambda: UnivariateScore(n_features_to_select=50).fit(d.X, d.y),
                      repeat=repeat, warmup=args.warmup, name="UnivariateScore cox")
    data = cox.cox_data(d.y["time"], d.y["event"])
    t_kernel = time_call(lambda: cox.score_tests(d.X, data), repeat=repeat,
                         warmup=args.warmup, name="score_tests kernel")
    # the peer on binarised genes: the log-rank test, one gene at a time
    genes = args.peer_genes
    B = (d.X - np.median(d.X, axis=0) > 0).astype(np.float64)
    t, e = d.y["time"], d.y["event"]

    def peer():
        out = np.empty(genes)
        for j in range(genes):
            g = B[:, j] == 1
            out[j] = logrank_test(t[g], t[~g], e[g], e[~g]).test_statistic
        return out

    t_peer = time_call(peer, repeat=max(1, repeat // 2), warmup=1, name="lifelines logrank")
    mine = cox.score_tests(B, data, "exact")[0][:genes]
    peer_full = t_peer.median * p / genes
    t_binary = time_call(lambda: cox.score_tests(B, data, "exact"), repeat=repeat,
                         warmup=args.warmup, name="score_tests exact (binary)")
    same = float(np.max(np.abs(mine - t_peer.result) / np.maximum(t_peer.result, 1e-12)))
    case = f"Cox tests {n}x{p}"
    rows.append(_row(case, "UnivariateScore(test='cox').fit", t_fit, peer_full,
                     target_s=1.0))
    rows.append(_row(case, "cox.score_tests (Breslow)", t_kernel, peer_full))
    rows.append(_row(case, "cox.score_tests exact, binary genes", t_binary, peer_full,
                     max_rel_diff_vs_peer=same))
    rows.append({"case": case, "call": f"lifelines logrank_test x {p} (from {genes})",
                 "median_s": peer_full, "fl": t_peer.fl})


def cox_lasso(rows, args, repeat):
    import warnings

    from lifelines import CoxPHFitter

    from sparsefs._kernels import coordinate_descent as cd
    from sparsefs.datasets import make_planted_survival
    from sparsefs.selection import LassoSelector

    n, p = (500, 2000) if args.quick else (500, 20_000)
    d = make_planted_survival(n_samples=n, n_features=p, n_informative=20, effect=0.4,
                              random_state=1)
    LassoSelector(n_features_to_select=5).fit(d.X[:, :100], d.y)  # compile
    t_path = time_call(lambda: LassoSelector(n_features_to_select=50).fit(d.X, d.y),
                       repeat=max(1, repeat // 2), warmup=args.warmup,
                       name="Cox lasso path to 50")
    sel = t_path.result
    rows.append(_row(f"Cox lasso path {n}x{p}", "LassoSelector(50).fit (survival)", t_path,
                     target_s=30.0, n_selected=int(sel.support_.sum()),
                     n_penalties=len(sel.alphas_),
                     true_in_50=int((sel.support_ & d.support).sum())))
    # one penalty on 500 x 200, against lifelines
    Xs = d.X[:, :200]
    Xs = (Xs - Xs.mean(axis=0)) / Xs.std(axis=0)
    design = cd.ENetDesign.from_prepared(Xs)
    loss = cd.CoxLoss(d.y["time"], d.y["event"])
    lam = 0.3 * cd.enet_lambda_max(design, loss, 1.0)
    t_one = time_call(lambda: cd.enet_fit(design, loss, lam, 1.0, tol=1e-9), repeat=repeat,
                      warmup=args.warmup, name="enet_fit one penalty")
    import pandas as pd

    df = pd.DataFrame(Xs, columns=[f"g{j}" for j in range(200)])
    df["T"], df["E"] = d.y["time"], d.y["event"]

    def peer():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # lifelines' penalty is lam * (l1 |b| + ...) on the mean log-likelihood (the same
            # scaling as -l/n): penalizer = lam, l1_ratio = 1
            return CoxPHFitter(penalizer=lam, l1_ratio=1.0).fit(df, "T", "E")

    t_peer = time_call(peer, repeat=max(1, repeat // 2), warmup=1, name="lifelines penalised")
    diff = float(np.max(np.abs(t_peer.result.params_.to_numpy() - t_one.result.coef)))
    case = f"Cox lasso, one penalty {n}x200"
    rows.append(_row(case, "coordinate_descent.enet_fit", t_one, t_peer.median,
                     max_coef_diff_vs_peer=diff))
    rows.append({"case": case, "call": "lifelines CoxPHFitter(penalizer, l1_ratio=1)",
                 "median_s": t_peer.median, "fl": t_peer.fl})


def regression_f(rows, args, repeat):
    from sklearn.feature_selection import f_regression

    from sparsefs.selection import UnivariateScore

    n = 10_000 if args.quick else args.cells
    X, _ = make_cells(n, np.float32)
    rng = np.random.default_rng(0)
    y = np.asarray(X[:, :50].sum(axis=1)).ravel() + rng.normal(0, 5.0, n)
    UnivariateScore(n_features_to_select=50).fit(X[:200], y[:200])  # compile
    t_me = time_call(lambda: UnivariateScore(n_features_to_select=50).fit(X, y),
                     repeat=repeat, warmup=args.warmup, name="UnivariateScore f")
    t_sk = time_call(lambda: f_regression(X, y), repeat=repeat, warmup=args.warmup,
                     name="f_regression")
    F = np.nan_to_num(t_sk.result[0])
    same = set(np.argsort(-F, kind="stable")[:50]) == set(np.flatnonzero(t_me.result.support_))
    case = f"regression F, CSR {n}x{X.shape[1]}"
    rows.append(_row(case, "UnivariateScore(test='f').fit", t_me, t_sk.median,
                     top50_equal=same))
    rows.append({"case": case, "call": "sklearn f_regression", "median_s": t_sk.median,
                 "fl": t_sk.fl})


def gaussian_lasso(rows, args, repeat):
    from sklearn.linear_model import Lasso

    from sparsefs.datasets import make_planted_regression
    from sparsefs.selection import LassoSelector

    n, p = (500, 2000) if args.quick else (500, 20_000)
    d = make_planted_regression(n_samples=n, n_features=p, n_informative=20, random_state=2)
    LassoSelector(alpha=0.5).fit(d.X[:, :100], d.y)
    t_me = time_call(lambda: LassoSelector(alpha=0.3, tol=1e-6).fit(d.X, d.y), repeat=repeat,
                     warmup=args.warmup, name="LassoSelector gaussian")
    sel = t_me.result
    Xs = (d.X - d.X.mean(axis=0)) / d.X.std(axis=0)
    lam = sel.alpha_ * sel.alpha_max_
    t_sk = time_call(lambda: Lasso(alpha=lam, tol=1e-6).fit(Xs, d.y), repeat=repeat,
                     warmup=args.warmup, name="sklearn Lasso")
    diff = float(np.max(np.abs(t_sk.result.coef_ - sel.coef_)))
    case = f"Gaussian lasso, one penalty {n}x{p}"
    rows.append(_row(case, "LassoSelector(alpha=0.3).fit", t_me, t_sk.median,
                     max_coef_diff_vs_peer=diff))
    rows.append({"case": case, "call": "sklearn Lasso (standardised X)",
                 "median_s": t_sk.median, "fl": t_sk.fl})


def main() -> int:
    parser = bench_parser("sparsefs on continuous and survival targets vs sklearn / lifelines")
    parser.add_argument("--cells", type=int, default=100_000, help="rows of the CSR case")
    parser.add_argument("--peer-genes", type=int, default=200,
                        help="genes the per-gene lifelines peer is timed on")
    parser.add_argument("--cases", default="cox_tests,cox_lasso,regression_f,gaussian_lasso")
    args = parser.parse_args()
    repeat = repeat_for(args)
    run = BenchRun("outcomes", args)
    rows: list[dict] = []
    cases = {"cox_tests": cox_tests, "cox_lasso": cox_lasso, "regression_f": regression_f,
             "gaussian_lasso": gaussian_lasso}
    for name in args.cases.split(","):
        print(f"  {name} ...", file=sys.stderr, flush=True)
        cases[name](rows, args, repeat)
    print(f"\nmedian of {repeat}; peer/this > 1: sparsefs faster.")
    print_table(rows, [("case", "case"), ("call", "call"), ("median_s", "median s"),
                       ("peer_over_this", "peer/this"), ("target_s", "target s"),
                       ("fl", "fl")])
    emit_json(run.finish({"results": rows}), out=args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
