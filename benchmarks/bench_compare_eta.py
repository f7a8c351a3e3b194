"""How good is `compare`'s remaining-time estimate over every method (issue #31 row 8)?

Runs `sparsefs compare default --methods every --k 1:80 --cv 5` through the harness (the same
spec `compare` builds, figures off) and records, after every finished task, the progress bar's
estimate of the remaining time: the cost-weighted one of this version
(`sparsefs.harness._costs.TaskProgress`, priors from the registry's `fit_seconds`) and the
plain task-count one of tqdm (elapsed * remaining tasks / done tasks), beside the true
remaining time known at the end. Printed: the ratio estimate / truth at 10, 25, 50 and 75 % of
the tasks, for both. A ratio of 1 is a perfect estimate; the issue saw 4x off.

    python benchmarks/bench_compare_eta.py [--quick] [--n-jobs 1]

`--quick`: `--k 1:20 --cv 3` over the same methods.
"""

from __future__ import annotations

import time
import warnings

from _bench import BenchRun, bench_parser, emit_json, print_table

from sparsefs.harness import CVSpec, DataSpec, ExperimentSpec, MethodSpec, _costs, load_dataset, run
from sparsefs.utils import list_methods


def main() -> int:
    parser = bench_parser(__doc__.splitlines()[0], default_repeat=1)
    parser.add_argument("--n-jobs", type=int, default=1)
    args = parser.parse_args()
    bench = BenchRun("compare_eta", args)
    k, folds = ("1:20", 3) if args.quick else ("1:80", 5)
    spec = ExperimentSpec(name="compare", datasets=[DataSpec(name="default")],
                          methods=[MethodSpec(stem=m.stem) for m in list_methods()], k=k,
                          cv=CVSpec(scheme="kfold", n_splits=folds), preprocessing=["zscore"])
    loaded = [load_dataset(d, seed=spec.seed) for d in spec.datasets]
    prior = _costs.task_costs(spec, loaded)
    records = []  # (wall time, weighted eta, tasks done, tasks total)
    original = _costs.TaskProgress.done

    def done(self, key, seconds):
        original(self, key, seconds)
        records.append((time.perf_counter(), self.eta(), self.n_done, len(self.keys)))

    _costs.TaskProgress.done = done
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run(spec, n_jobs=args.n_jobs, progress=False, task_cost=prior)
    end = time.perf_counter()
    _costs.TaskProgress.done = original
    expected = sum(prior.values()) * folds
    rows = []
    for share in (0.1, 0.25, 0.5, 0.75):
        t, eta, n, total = next(r for r in records if r[2] >= share * r[3])
        truth = end - t
        naive = (t - start) * (total - n) / n
        rows.append({"progress": f"{n}/{total}", "true_left_s": truth, "weighted_eta_s": eta,
                     "weighted_ratio": eta / truth if truth > 0 else None,
                     "task_count_eta_s": naive,
                     "task_count_ratio": naive / truth if truth > 0 else None})
    print_table(rows, ["progress", ("true_left_s", "true s left"),
                       ("weighted_eta_s", "weighted ETA s"), ("weighted_ratio", "ratio"),
                       ("task_count_eta_s", "task-count ETA s"), ("task_count_ratio", "ratio")])
    print(f"\nwhole run {end - start:.0f} s wall; up-front expectation {expected:.0f} s "
          "(registry CPU costs, quiet machine)")
    emit_json(bench.finish({"rows": rows, "wall_s": end - start, "expected_s": expected}),
              out=args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
