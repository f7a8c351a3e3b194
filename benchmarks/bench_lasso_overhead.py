"""Benchmark: the per-iteration Python overhead of the lasso's solver (issue #33).

``LassoSelector(n_features_to_select=k).fit`` (the multinomial lasso path to k features,
proximal gradient on working sets, ``sparsefs._kernels.group_lasso``) on

* the embedded default data (``load_default()``, 178 x 500, 3 classes, k = 20: what
  ``sparsefs demo`` fits);
* one training fold of it as ``sparsefs compare`` fits it by default (the z-scored data, the
  first of 5 stratified folds, 142 x 500, ``rank`` mode: k = 80; as
  ``benchmarks/bench_method_costs.py``);
* a planted design, 200 x 2000, 3 classes, 20 informative features, k = 20;
* ALLAML (72 x 7129, 2 classes, k = 20 and the compare fold's k = 80 on a training fold,
  57 x 7129; from ``$SPARSEFS_DATA``, skipped when absent).

Two FISTA loops are timed in the same run, alternating fit by fit: the compiled kernel (the
default, ``sparsefs._kernels.fista``) and the numpy loop it replaced (``engine="numpy"``,
patched in). The fits are checked equal: same support and penalty path, the same solver
iteration count, scores and coefficients to 1e-9 relative (exit 1 otherwise).

Measured per loop:

* ``fit_s``: the median fit time; ``speedup``: numpy's over the compiled one;
* ``iterations``: FISTA iterations of the fit (all penalties and working sets); ``loop_s``:
  time inside the loop (the kernel call with its argument copies / the numpy loop),
  ``us_per_iter`` = loop_s / iterations, and ``gflops``: the loop's arithmetic rate, counting
  the two passes over the working set per iteration (``4 n |ws| K`` flops, the bound of the
  loop: X W and X^T dZ) - how far the loop is from its flops;
* ``fixed_us``: the fixed cost of one iteration, the time per iteration of the same loop on a
  4 x 2 problem with the same number of classes (compute negligible, 2000 iterations, never
  converging); ``overhead_share`` = fixed_us * iterations / fit_s, the share of the fit that
  is per-iteration overhead. Target (issue #33): <= 10 % of a fit.

Run: ``python benchmarks/bench_lasso_overhead.py [--repeat N] [--quick]`` (``--quick``: the
planted design at 200 x 1000, no ALLAML).
"""

from __future__ import annotations

import functools
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import BenchRun, LoadMonitor, bench_parser, emit_json, print_table, repeat_for

from sparsefs._kernels import group_lasso
from sparsefs._kernels.elastic_net import ElasticNetPenalty
from sparsefs.datasets import load, load_default, make_planted_classification
from sparsefs.selection import LassoSelector

TARGET = 0.10
ENGINES = ("compiled", "numpy")
FISTA = group_lasso._fista


class Loop:
    """``group_lasso._fista`` with one engine, counting iterations, time and flops inside the
    block."""

    def __init__(self, engine):
        self.engine = engine
        self.iterations = 0
        self.seconds = 0.0
        self.flops = 0.0

    def _fista(self, X, Y, *args, **kwargs):
        kwargs["engine"] = self.engine
        t0 = time.perf_counter()
        out = FISTA(X, Y, *args, **kwargs)
        self.seconds += time.perf_counter() - t0
        self.iterations += out[2]
        self.flops += 4.0 * X.shape[0] * X.shape[1] * Y.shape[1] * out[2]
        return out

    def __enter__(self):
        group_lasso._fista = self._fista
        return self

    def __exit__(self, *exc):
        group_lasso._fista = FISTA


def fixed_cost(n_classes: int, engine: str, n_iter: int = 2000) -> float:
    """Seconds per FISTA iteration on a 4 x 2 problem: the fixed cost of one iteration."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((4, 2))
    Y = np.eye(n_classes)[rng.integers(0, n_classes, 4)]
    W, b = np.zeros((2, n_classes)), np.zeros(n_classes)
    run = functools.partial(FISTA, X, Y, group_lasso.Multinomial(), ElasticNetPenalty(1.0),
                            1e-12, W, b, fit_intercept=True, max_iter=n_iter, tol_abs=-1.0,
                            engine=engine)
    run(history=[])  # compiled on first use
    best = np.inf
    for _ in range(3):
        t0 = time.perf_counter()
        _, _, it, _ = run(history=[])
        best = min(best, (time.perf_counter() - t0) / it)
    return best


def same_fit(a, b) -> bool:
    def close(u, v):
        u, v = np.nan_to_num(u), np.nan_to_num(v)
        return bool(np.allclose(u, v, rtol=1e-9, atol=1e-12 * max(np.abs(u).max(), 1e-300)))

    return (bool(np.array_equal(a.support_, b.support_))
            and bool(np.array_equal(a.alphas_, b.alphas_))
            and bool(np.array_equal(a.n_nonzero_path_, b.n_nonzero_path_))
            and a.n_iter_ == b.n_iter_
            and close(a.scores_, b.scores_) and close(a.coef_, b.coef_))


def measure(name, X, y, k, repeat):
    n_classes = int(np.unique(y).size)
    fits, times, loops = {}, {e: [] for e in ENGINES}, {}
    for engine in ENGINES:  # warm-up (compilation), then the counted fit
        with Loop(engine):
            LassoSelector(n_features_to_select=k).fit(X, y)
        with Loop(engine) as loop:
            fits[engine] = LassoSelector(n_features_to_select=k).fit(X, y)
        loops[engine] = loop
    mon = LoadMonitor().start()
    for _ in range(repeat):  # alternating, so both see the same load
        for engine in ENGINES:
            with Loop(engine):
                t0 = time.perf_counter()
                LassoSelector(n_features_to_select=k).fit(X, y)
                times[engine].append(time.perf_counter() - t0)
    fl = mon.stop().get("fl")
    rows = []
    for engine in ENGINES:
        fit_s = float(np.median(times[engine]))
        loop = loops[engine]
        fixed = fixed_cost(n_classes, engine)
        rows.append({
            "data": name, "k": k, "loop": engine, "fit_s": fit_s, "iterations": loop.iterations,
            "loop_s": loop.seconds, "us_per_iter": loop.seconds / max(loop.iterations, 1) * 1e6,
            "gflops": loop.flops / max(loop.seconds, 1e-12) / 1e9, "fixed_us": fixed * 1e6,
            "overhead_share": fixed * loop.iterations / fit_s, "target": TARGET,
            "met": bool(fixed * loop.iterations / fit_s <= TARGET) if engine == "compiled"
            else None,
            "fl": fl,
        })
    same = same_fit(fits["compiled"], fits["numpy"])
    rows[0]["speedup"] = rows[1]["fit_s"] / rows[0]["fit_s"]
    rows[0]["same_result"] = same
    return rows, same


def compare_fold(X, y):
    """The first training fold of ``compare``'s default protocol on z-scored X."""
    from sklearn.model_selection import StratifiedKFold

    X = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)
    y = np.unique(y, return_inverse=True)[1]
    train, _ = next(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    return X[train], y[train]


def main() -> int:
    args = bench_parser("lasso per-iteration overhead", default_repeat=5).parse_args()
    run = BenchRun("lasso_overhead", args)
    repeat = repeat_for(args)
    default = load_default()
    planted = make_planted_classification(n_samples=200, n_features=1000 if args.quick else 2000,
                                          n_informative=20, n_classes=3, random_state=0)
    sets = [("embedded 178x500", default.X, default.y, 20),
            ("compare fold 142x500", *compare_fold(default.X, default.y), 80),
            (f"planted {planted.X.shape[0]}x{planted.X.shape[1]}", planted.X, planted.y, 20)]
    allaml = Path(os.environ.get("SPARSEFS_DATA", "")) / "ALLAML.mat"
    if not args.quick and os.environ.get("SPARSEFS_DATA") and allaml.is_file():
        data = load(allaml)
        X, y = np.asarray(data.X, dtype=float), data.y
        sets.append(("ALLAML 72x7129", X, y, 20))
        sets.append(("ALLAML fold 57x7129", *compare_fold(X, y), 80))
    rows, ok = [], True
    for name, X, y, k in sets:
        r, same = measure(name, X, y, k, repeat)
        rows += r
        ok &= same and bool(r[0]["met"])
    print_table(rows, ["data", "k", "loop", "fit_s", "iterations", "loop_s", "us_per_iter",
                       "gflops", "fixed_us", "overhead_share", "target", "met", "speedup",
                       "same_result", "fl"])
    emit_json(run.finish({"results": rows, "targets_met": ok}), out=args.out)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
