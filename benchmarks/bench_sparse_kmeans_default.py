"""The sparse k-means defaults on the embedded data: time and work of the gap tuning (issue #33).

``L0KMeans()`` and ``SparseKMeans()`` (the registry's demo settings: every default but
SparseKMeans' ``max_iter=20``; ``n_clusters=8``; the sparsity chosen by the gap statistic) on
the embedded default (178 x 500, ``sparsefs.datasets.load_default``), with the gap path by
chains (``gap_path="chains"``, the default) and the former path (``gap_path="restarts"``)
PAIRED in the same run, seed by seed. Per fit: CPU and wall seconds, the chosen value, the
features kept and how many of them are the 13 real ones, the final objective, and the work
counted: k-means runs and C-steps inside the tuning path and in the final restart search.

Target (issue #33): each default fit <= 5 s on a quiet machine. Run::

    python benchmarks/bench_sparse_kmeans_default.py                  # seeds 0-3, both paths
    python benchmarks/bench_sparse_kmeans_default.py --seeds 0 --methods l0_kmeans
    python benchmarks/bench_sparse_kmeans_default.py --paths chains   # the default only
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import BenchRun, bench_parser, emit_json, print_table

TARGET_S = 5.0


class _Counter:
    """Counts k-means runs and C-steps, split by stage (tuning path / final search)."""

    def __init__(self):
        import sparsefs.clustering._sparse_kmeans as skm
        from sparsefs._kernels import kmeans as km
        from sparsefs._kernels import sparse_kmeans_alternation as alt

        self.stage = "other"
        self.counts: dict = {}
        kmeans, c_step = km.kmeans, alt.c_step
        fit_path, search = skm._BaseSparseKMeans._fit_path, skm._BaseSparseKMeans._search

        def counted_kmeans(X, n_clusters, *args, init="k-means++", n_init=10, **kw):
            self._add("kmeans_runs", n_init if isinstance(init, str) else 1)
            return kmeans(X, n_clusters, *args, init=init, n_init=n_init, **kw)

        def counted_c_step(*args, **kw):
            self._add("c_steps", 1)
            return c_step(*args, **kw)

        def staged(fn, stage):
            def run(est, *args, **kw):
                self.stage = stage
                try:
                    return fn(est, *args, **kw)
                finally:
                    self.stage = "other"
            return run

        km.kmeans = counted_kmeans
        alt.c_step = counted_c_step
        skm._BaseSparseKMeans._fit_path = staged(fit_path, "path")
        skm._BaseSparseKMeans._search = staged(search, "search")

    def _add(self, what, n):
        key = f"{self.stage}_{what}"
        self.counts[key] = self.counts.get(key, 0) + n

    def reset(self):
        self.counts = {}


def main() -> int:
    p = bench_parser("sparse k-means defaults on the embedded data: gap path by chains vs "
                     "the former path, paired")
    p.add_argument("--methods", default="l0_kmeans,l1_kmeans")
    p.add_argument("--seeds", default="0,1,2,3")
    p.add_argument("--paths", default="restarts,chains")
    args = p.parse_args()
    run = BenchRun("sparse_kmeans_default", args)
    from sparsefs.datasets import load_default
    from sparsefs.utils._registry import build_params, get_method

    counter = _Counter()
    data = load_default()
    real = np.asarray(data.support)
    seeds = [int(s) for s in args.seeds.split(",")]
    paths = args.paths.split(",")
    warnings.simplefilter("ignore")
    rows = []
    for stem in args.methods.split(","):
        m = get_method(stem)
        params = build_params(m.demo_params)
        m.estimator(**params, random_state=0, n_permutations=1).fit(data.X)  # compile
        for seed in seeds:
            for path in paths:
                est = m.estimator(**params, random_state=seed, gap_path=path)
                counter.reset()
                t, c = time.perf_counter(), time.process_time()
                est.fit(data.X)
                wall, cpu = time.perf_counter() - t, time.process_time() - c
                sup = est.support_
                rows.append({
                    "method": stem, "seed": seed, "gap_path": path,
                    "cpu_s": cpu, "wall_s": wall, "chosen": est.gap_.best,
                    "n_selected": int(sup.sum()), "real": int((sup & real).sum()),
                    "objective": float(est.objective_[-1]),
                    "objective_str": f"{float(est.objective_[-1]):.3f}",
                    "chosen_str": f"{est.gap_.best:.4g}",
                    **{k: counter.counts.get(k, 0) for k in
                       ("path_kmeans_runs", "path_c_steps", "search_kmeans_runs",
                        "search_c_steps")},
                })
                print(f"{stem} seed {seed} {path}: {cpu:.2f} CPU s", file=sys.stderr, flush=True)
    print_table(rows, ["method", "seed", "gap_path", ("cpu_s", "CPU s"), ("wall_s", "wall s"),
                       ("chosen_str", "chosen"), ("n_selected", "kept"), ("real", "real of 13"),
                       ("objective_str", "objective"),
                       ("path_kmeans_runs", "path k-means"), ("path_c_steps", "path C-steps"),
                       ("search_kmeans_runs", "search k-means"),
                       ("search_c_steps", "search C-steps")],
                title=f"Sparse k-means defaults on the embedded data (target <= {TARGET_S} s)")
    summary = []
    for stem in args.methods.split(","):
        for path in paths:
            sel = [r for r in rows if r["method"] == stem and r["gap_path"] == path]
            summary.append({"method": stem, "gap_path": path,
                            "median_cpu_s": float(np.median([r["cpu_s"] for r in sel])),
                            "median_wall_s": float(np.median([r["wall_s"] for r in sel])),
                            "chosen": [r["chosen_str"] for r in sel],
                            "real": [r["real"] for r in sel]})
    print_table(summary, ["method", "gap_path", ("median_cpu_s", "median CPU s"),
                          ("median_wall_s", "median wall s"), "chosen", "real"],
                title="Summary")
    print(f"\nload: {os.getloadavg()}")
    emit_json(run.finish({"target_s": TARGET_S, "results": rows, "summary": summary}),
              out=args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
