"""Benchmark: StabilitySelector (100 complementary half-samples) vs a naive loop of refits.

Data: ``ALLAML.mat`` (72 x 7129, two classes) read from ``$SPARSEFS_DATA`` or
``../shared/data`` (never copied); skipped with a message (exit 0, a JSON line) when absent.
``--quick`` uses 30 resamples.

For each base selector, ``FisherScore(n_features_to_select=50)`` and
``SparseCenterClassifier(norm="l1", n_features_to_select=50)``, times

* ``StabilitySelector(base, n_resamples=100, random_state=0).fit(X, y)`` (which also
  computes the count path, the bound and the Nogueira index), and
* the peer: a plain Python loop that clones and refits ``base`` on the same 100 halves
  (drawn by the same kernel with the same seed) and averages the supports,

in the same run. The two frequency vectors must be equal (checked; a mismatch makes the
script exit 1 after the JSON line). Targets (issue #20): FisherScore < 2 s,
SparseCenterClassifier(l1) < 5 s for the 100 resamples.

Run: ``python benchmarks/bench_stability.py [--quick] [--repeat N] [--out FILE]``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import BenchRun, bench_parser, emit_json, fl_flag, print_table, repeat_for, time_call

TARGETS_S = {"FisherScore": 2.0, "SparseCenterClassifier": 5.0}


def _data_dir() -> Path | None:
    env = os.environ.get("SPARSEFS_DATA")
    for cand in ([Path(env)] if env else []) + [Path(__file__).resolve().parents[2] / "shared"
                                                  / "data"]:
        if cand.is_dir():
            return cand
    return None


def _naive(base, X, y, halves):
    from sklearn.base import clone

    counts = np.zeros(X.shape[1])
    for idx in halves:
        counts += clone(base).fit(X[idx], y[idx]).get_support()
    return counts / len(halves)


def main() -> int:
    args = bench_parser(__doc__.splitlines()[0], default_repeat=3).parse_args()
    run = BenchRun("stability_selection", args)
    data_dir = _data_dir()
    path = None if data_dir is None else data_dir / "ALLAML.mat"
    if path is None or not path.exists():
        print("skipped: ALLAML.mat not found (set SPARSEFS_DATA)", file=sys.stderr)
        emit_json(run.finish({"skipped": "ALLAML.mat not found"}), out=args.out)
        return 0

    from scipy.io import loadmat

    from sparsefs._kernels.stability import complementary_pairs
    from sparsefs.classification import SparseCenterClassifier
    from sparsefs.selection import FisherScore, StabilitySelector

    mat = loadmat(path)
    X = np.ascontiguousarray(mat["X"], dtype=np.float64)
    y = np.unique(mat["Y"].ravel(), return_inverse=True)[1].astype(np.intp)
    m = 30 if args.quick else 100
    repeat = repeat_for(args)
    halves = complementary_pairs(X.shape[0], m // 2, np.random.RandomState(0), y)

    rows, results, ok = [], [], True
    for base in (FisherScore(n_features_to_select=50),
                 SparseCenterClassifier(norm="l1", n_features_to_select=50)):
        name = type(base).__name__
        sel = StabilitySelector(base, n_resamples=m, random_state=0)
        t_sel = time_call(lambda sel=sel: sel.fit(X, y), repeat=repeat, warmup=args.warmup,
                          name=f"StabilitySelector({name})")
        t_naive = time_call(lambda base=base: _naive(base, X, y, halves), repeat=repeat,
                            warmup=args.warmup, name=f"naive loop ({name})")
        same = bool(np.array_equal(t_sel.result.frequencies_, t_naive.result))
        ok &= same
        target = TARGETS_S[name] * m / 100
        row = {
            "base": name,
            "resamples": m,
            "stability_s": t_sel.median,
            "naive_s": t_naive.median,
            "ratio_naive_over_stability": t_naive.median / t_sel.median,
            "target_s": target,
            "meets_target": t_sel.median < target,
            "same_frequencies": same,
            "nogueira": t_sel.result.stability_index_.value,
            "selected": int(t_sel.result.support_.sum()),
            "load": fl_flag(t_sel.fl, t_sel.load.get("fl_coarse", True)) or "",
        }
        rows.append(row)
        results += [t_sel.to_dict(), t_naive.to_dict()]
    print_table(rows, ["base", "resamples", "stability_s", "naive_s",
                       ("ratio_naive_over_stability", "naive/stab"), "target_s",
                       "meets_target", "same_frequencies", "nogueira", "selected", "load"],
                title=f"StabilitySelector on ALLAML {X.shape[0]} x {X.shape[1]}")
    if not ok:
        print("MISMATCH: StabilitySelector and the naive loop disagree", file=sys.stderr)
    emit_json(run.finish({"rows": rows, "results": results, "ok": ok}), out=args.out)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
