"""scikit-learn's `check_estimator` of registered methods with their defaults (issue #31 row 11).

Every check scikit-learn yields for the estimator built with no parameters (`legacy=True`, as
`check_estimator` runs them) is run once, on one BLAS thread, and timed: the total wall and
process CPU seconds (CPU time is the figure to compare with a quiet machine when this one is
shared), the slowest checks, and any check that fails (exit status 1). A check that skips
itself (e.g. the array-API one without `SCIPY_ARRAY_API`) counts as passed, as in
`check_estimator`. Warnings of the checks are not shown (the default test suite asserts them).

    python benchmarks/bench_check_estimator.py [--methods sparse_kos,l1_kmeans] [--params JSON]

`--params` (a JSON object) is passed to every estimator, e.g. `'{"sigma2_selection": "joint"}'`
for sparse KOS with the paper's tuning. Target (issue #31 row 11): <= 60 s per method on a quiet
2-core machine.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import json
import time
import warnings

from _bench import BenchRun, bench_parser, emit_json, print_table

from sparsefs.utils import get_method

TARGET_S = 60.0


def _time_checks(stem: str, params: dict) -> dict:
    from sklearn.base import clone
    from sklearn.utils.estimator_checks import _yield_all_checks

    est = get_method(stem).estimator(**params)
    name = type(est).__name__
    c0, w0 = time.process_time(), time.perf_counter()
    per_check, failed = [], []
    for check in _yield_all_checks(est, legacy=True):
        label = getattr(getattr(check, "func", check), "__name__", str(check))
        t = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                check(name, clone(est))
        except Exception as exc:  # reported; the exit status says it
            if type(exc).__name__ != "SkipTest":
                failed.append(f"{label}: {type(exc).__name__}: {str(exc)[:120]}")
        per_check.append((time.perf_counter() - t, label))
    slowest = sorted(per_check, reverse=True)[:3]
    return {"method": stem, "params": json.dumps(params) if params else "",
            "cpu_s": time.process_time() - c0, "wall_s": time.perf_counter() - w0,
            "n_checks": len(per_check), "failed": failed,
            "slowest": ", ".join(f"{lbl} {t:.1f} s" for t, lbl in slowest)}


def main() -> int:
    parser = bench_parser(__doc__.splitlines()[0], default_repeat=1)
    parser.add_argument("--methods", default="sparse_kos,l1_kmeans",
                        help="comma-separated stems (default: sparse_kos,l1_kmeans)")
    parser.add_argument("--params", default="{}", help="JSON parameters for every estimator")
    args = parser.parse_args()
    run = BenchRun("check_estimator", args)
    params = json.loads(args.params)
    rows = [_time_checks(stem.strip(), params) for stem in args.methods.split(",")
            if stem.strip()]
    for r in rows:
        r["met"] = r["cpu_s"] <= TARGET_S
    print_table(rows, ["method", "params", ("cpu_s", "CPU s"), ("wall_s", "wall s"),
                       ("n_checks", "checks"), ("met", f"CPU <= {TARGET_S:g} s"), "slowest"])
    for r in rows:
        for f in r["failed"]:
            print(f"FAILED {r['method']}: {f}")
    emit_json(run.finish({"methods": rows, "target_s": TARGET_S}), out=args.out)
    return 1 if any(r["failed"] for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
