"""Benchmark: the per-iteration Python overhead of the lasso's solver (issue #33).

``LassoSelector(n_features_to_select=20).fit`` (the multinomial lasso path to 20 features,
proximal gradient on working sets, ``sparsefs._kernels.l21``) on

* the embedded default data (``load_default()``, 178 x 500, 3 classes: what ``sparsefs
  demo`` / ``compare`` fit);
* a planted design, 200 x 2000, 3 classes, 20 informative features.

The former data fit (``scipy.special.logsumexp`` inside ``Multinomial.value_grad``, which
ran once per solver iteration, and the objective computed at every iteration) is timed
beside in the same run, patched in, and the two fits are checked equal (same support,
scores to 1e-9 relative; exit 1 otherwise). The solver loop itself is today's in both (the
gradient alone per iteration, ndarray methods instead of the ``np.*`` wrappers): ``git
stash`` the issue #33 change to time the whole former solver.

The overhead: the fixed cost of one solver iteration, measured as the time per iteration of
the same FISTA loop on a 4 x 2 problem with the same number of classes (compute negligible,
2000 iterations, never converging), times the number of data-fit evaluations of the fit
(counted), over the fit's time. Target (issue #33): <= 10 % of a fit.

Run: ``python benchmarks/bench_lasso_overhead.py [--repeat N] [--quick]``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from scipy.special import logsumexp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import BenchRun, bench_parser, emit_json, print_table, repeat_for, time_call

from sparsefs._kernels import l21
from sparsefs._kernels.elastic_net import ElasticNetPenalty
from sparsefs.datasets import load_default, make_planted_classification
from sparsefs.selection import LassoSelector

TARGET = 0.10


def former_value_grad(self, Z, Y):
    """The data fit before issue #33 (scipy's logsumexp, then a second exp)."""
    n = Y.shape[0]
    lse = logsumexp(Z, axis=1)
    value = float(np.sum(lse) - np.sum(Z * Y)) / n
    P = np.exp(Z - lse[:, None])
    return value, (P - Y) / n


class Counting:
    """Counts the data-fit evaluations of a fit."""

    def __init__(self, fn):
        self.fn, self.calls = fn, 0


def _patched(value_grad, counter=None):
    """(value_grad, grad) for Multinomial from a value_grad function, counted."""
    def vg(self, Z, Y):
        if counter is not None:
            counter.calls += 1
        return value_grad(self, Z, Y)

    def grad(self, Z, Y):
        if counter is not None:
            counter.calls += 1
        return value_grad(self, Z, Y)[1] if value_grad is former_value_grad else \
            NOW_GRAD(self, Z, Y)
    return vg, grad


NOW_VALUE_GRAD = l21.Multinomial.value_grad
NOW_GRAD = l21.Multinomial.grad


class Patch:
    """Multinomial's data fit replaced (and its evaluations counted) inside the block."""

    def __init__(self, value_grad, counter=None):
        self.vg, self.grad = _patched(value_grad, counter)

    def __enter__(self):
        l21.Multinomial.value_grad, l21.Multinomial.grad = self.vg, self.grad

    def __exit__(self, *exc):
        l21.Multinomial.value_grad, l21.Multinomial.grad = NOW_VALUE_GRAD, NOW_GRAD


def iteration_cost(n_classes: int, value_grad) -> float:
    """Seconds per FISTA iteration on a 4 x 2 problem: the fixed (Python) cost."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((4, 2))
    Y = np.eye(n_classes)[rng.integers(0, n_classes, 4)]
    with Patch(value_grad):
        penalty = ElasticNetPenalty(1.0)  # the lasso's penalty
        datafit = l21.Multinomial()
        W, b = np.zeros((2, n_classes)), np.zeros(n_classes)
        n_iter = 2000
        t0 = time.perf_counter()
        l21._fista(X, Y, datafit, penalty, 1e-12, W, b, fit_intercept=True,
                   max_iter=n_iter, tol_abs=-1.0, history=[])
        return (time.perf_counter() - t0) / n_iter


def measure(name, X, y, repeat):
    rows, fits = [], {}
    n_classes = int(np.unique(y).size)
    for variant, vg in (("now", NOW_VALUE_GRAD), ("former", former_value_grad)):
        counter = Counting(vg)
        with Patch(vg, counter):
            fits[variant] = LassoSelector(n_features_to_select=20).fit(X, y)
            calls = counter.calls
        with Patch(vg):
            t = time_call(lambda: LassoSelector(n_features_to_select=20).fit(X, y),
                          repeat=repeat, warmup=0, name=f"{name}:{variant}")
        per_iter = iteration_cost(n_classes, vg)
        share = per_iter * calls / t.median
        rows.append({"data": name, "solver": variant, "fit_s": t.median,
                     "evaluations": calls, "per_iteration_us": per_iter * 1e6,
                     "overhead_share": share, "target": TARGET,
                     "met": bool(share <= TARGET) if variant == "now" else None,
                     "fl": t.fl})
    a, b = fits["now"], fits["former"]
    same = bool(np.array_equal(a.support_, b.support_)) and bool(np.allclose(
        np.nan_to_num(a.scores_), np.nan_to_num(b.scores_), rtol=1e-9, atol=0))
    rows[0]["speedup"] = rows[1]["fit_s"] / rows[0]["fit_s"]
    rows[0]["same_result"] = same
    return rows, same


def main() -> int:
    args = bench_parser("lasso per-iteration overhead", default_repeat=5).parse_args()
    run = BenchRun("lasso_overhead", args)
    repeat = repeat_for(args)
    default = load_default()
    planted = make_planted_classification(n_samples=200, n_features=1000 if args.quick else 2000,
                                          n_informative=20, n_classes=3, random_state=0)
    rows, ok = [], True
    for name, X, y in (("embedded 178x500", default.X, default.y),
                       (f"planted {planted.X.shape[0]}x{planted.X.shape[1]}", planted.X,
                        planted.y)):
        r, same = measure(name, X, y, repeat)
        rows += r
        ok &= same and bool(r[0]["met"])
    print_table(rows, ["data", "solver", "fit_s", "evaluations", "per_iteration_us",
                       "overhead_share", "target", "met", "speedup", "same_result", "fl"])
    emit_json(run.finish({"results": rows, "targets_met": ok}), out=args.out)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
