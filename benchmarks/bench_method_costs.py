"""The cost of one `sparsefs compare` fold fit of every registered method (issue #31 row 8).

Each method is built as `compare` builds it by default (`rank` mode: n_features_to_select = 80,
its other defaults, a seed, n_clusters = the number of classes) and fitted on one stratified
training fold (4/5 of the rows) of the z-scored embedded default data (178 x 500). One untimed
warm-up fit (numba compilation, caches), then the median of `--repeat` fits, wall and process
CPU seconds (CPU time is the figure to compare with a quiet machine when this one is shared:
the fits here run on one BLAS thread). The table also prints the registry's `fit_seconds`
(what `compare`'s cost note and progress bar start from) and the ratio measured / registry.

Then the downstream evaluation: `compare default --methods fisher_score --k 1:80 --cv 5`'s
tasks minus the Fisher fit, per (k, estimator): the registry's EVAL_SECONDS counterpart.

    python benchmarks/bench_method_costs.py [--quick] [--methods a,b]
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import warnings

import numpy as np
from _bench import BenchRun, bench_parser, emit_json, print_table, repeat_for

from sparsefs.datasets import load_default
from sparsefs.harness import MethodSpec
from sparsefs.harness._costs import EVAL_SECONDS, REFERENCE_SIZE
from sparsefs.harness._protocols import build_method, method_requires_y
from sparsefs.utils import list_methods


def _fold():
    from sklearn.model_selection import StratifiedKFold

    data = load_default(random_state=0)
    X = (data.X - data.X.mean(0)) / data.X.std(0)
    y = np.unique(data.y, return_inverse=True)[1]
    train, _ = next(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    return X[train], y[train]


def _fit_times(stem: str, X, y, repeat: int) -> tuple[float, float]:
    spec = MethodSpec(stem=stem)
    walls, cpus = [], []
    for i in range(repeat + 1):
        est = build_method(spec, seed=0, n_classes=3, n_features_to_select=80)
        yy = y if method_requires_y(spec, est) else None
        w0, c0 = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, yy)
        if i:  # the first fit warms numba's cache and is not counted
            walls.append(time.perf_counter() - w0)
            cpus.append(time.process_time() - c0)
    return float(np.median(walls)), float(np.median(cpus))


def _eval_seconds() -> float:
    """Seconds per (k, estimator) of the downstream evaluation of one fold task."""
    from sparsefs.harness import CVSpec, DataSpec, ExperimentSpec, run

    spec = ExperimentSpec(name="eval", datasets=[DataSpec(name="default")],
                          methods=[MethodSpec(stem="fisher_score")], k="1:80",
                          cv=CVSpec(scheme="kfold", n_splits=5), preprocessing=["zscore"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run(spec, progress=False)  # warm-up
        start = time.process_time()
        res = run(spec, progress=False)
        total = time.process_time() - start
    fit = res.table[res.table["metric"] == "fit_time"].groupby("fold")["value"].first().sum()
    return float((total - fit) / (5 * 80 * len(spec.estimators)))


def main() -> int:
    parser = bench_parser(__doc__.splitlines()[0], default_repeat=3)
    parser.add_argument("--methods", help="comma-separated stems (default: every method)")
    args = parser.parse_args()
    run = BenchRun("method_costs", args)
    X, y = _fold()
    assert X.shape[0] * X.shape[1] == REFERENCE_SIZE, X.shape
    stems = args.methods.split(",") if args.methods else [m.stem for m in list_methods()]
    repeat = 1 if args.quick else repeat_for(args)
    rows = []
    for info in list_methods():
        if info.stem not in stems:
            continue
        wall, cpu = _fit_times(info.stem, X, y, repeat)
        rows.append({"method": info.stem, "wall_s": wall, "cpu_s": cpu,
                     "registry_s": info.fit_seconds,
                     "ratio": None if not info.fit_seconds else cpu / info.fit_seconds})
    print_table(rows, ["method", ("wall_s", "wall s"), ("cpu_s", "CPU s"),
                       ("registry_s", "registry s"), ("ratio", "CPU / registry")])
    evaluation = _eval_seconds()
    print(f"\nevaluation per (k, estimator): {evaluation * 1000:.2f} ms CPU "
          f"(harness._costs.EVAL_SECONDS = {EVAL_SECONDS * 1000:.1f} ms)")
    emit_json(run.finish({"fits": rows, "eval_seconds": evaluation}), out=args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
