"""Paired timing of the estimators touched by issue #34 item 1-3 (the shared scale guard, the
n_jobs rule, the l2,1 solvers in group_lasso): the tree before and after, in alternating
worker processes (ABAB...), so that load drifts hit both alike.

Each worker imports one tree (``PYTHONPATH``), fits every case once to compile and warm up,
then times ``--reps`` fits per case and reports the fastest. The driver runs ``--rounds``
pairs of workers and prints, per case, the median over rounds of each tree's time and the
ratio after / before, with the load average before and after::

    python benchmarks/bench_guards.py --before 13845bc            # a git revision, or
    python benchmarks/bench_guards.py --before-tree /tmp/guards_base --only KOS,KMeans
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def _cases():
    import scipy.sparse as sp

    from sparsefs.classification import SparseCenterClassifier, SparseKOSClassifier
    from sparsefs.clustering import L0KMeans, SparseKMeans
    from sparsefs.datasets import make_planted_classification
    from sparsefs.selection import (
        RFS,
        SMBA,
        ClassSpecificSelector,
        ErrorControlSelector,
        FisherScore,
        LassoSelector,
        LlL21,
        LsL21,
        StabilitySelector,
        UnivariateScore,
        VarianceScore,
    )

    def data(n, p, seed=0, k=3):
        d = make_planted_classification(n_samples=n, n_features=p, n_informative=10,
                                        n_classes=k, random_state=seed)
        return np.asarray(d.X, dtype=np.float64), d.y

    Xk, _ = data(300, 200)
    Xb, yb = data(2000, 2000, 1)
    Xm, ym = data(200, 1000, 2)
    Xs, _ = data(100, 500, 3)
    Xo, yo = data(120, 20, 4, k=2)
    yi = np.where(np.arange(Xm.shape[0]) % 10 == 0, 0, 1)  # imbalanced, for SMOTE
    Xsp = sp.csr_array(Xm * (np.random.default_rng(0).random(Xm.shape) < 0.3))
    return {
        "L0KMeans 300x200": lambda: L0KMeans(3, 10, n_init=3, random_state=0).fit(Xk),
        "L0KMeans 300x200 *1e300": lambda: L0KMeans(3, 10, n_init=3, random_state=0).fit(
            Xk * 1e300),
        "SparseKMeans 300x200": lambda: SparseKMeans(3, 3.0, n_init=3, random_state=0).fit(Xk),
        "FisherScore 2000x2000": lambda: FisherScore().fit(Xb, yb),
        "UnivariateScore 2000x2000": lambda: UnivariateScore().fit(Xb, yb),
        "VarianceScore 2000x2000": lambda: VarianceScore().fit(Xb),
        "SparseCenter l1 2000x2000": lambda: SparseCenterClassifier(norm="l1").fit(Xb, yb),
        "SparseKOS 120x20 n_jobs=2": lambda: SparseKOSClassifier(
            n_alphas=4, max_iter=30, n_jobs=2, random_state=0).fit(Xo, yo),
        "SMBA 100x500": lambda: SMBA(alpha=2.0).fit(Xs),
        "LsL21 200x1000": lambda: LsL21(n_features_to_select=20).fit(Xm, ym),
        "LlL21 200x1000": lambda: LlL21(n_features_to_select=20).fit(Xm, ym),
        "LsL21 sparse 200x1000": lambda: LsL21(n_features_to_select=20).fit(Xsp, ym),
        "RFS 200x1000": lambda: RFS(n_features_to_select=20).fit(Xm, ym),
        "Lasso 200x1000": lambda: LassoSelector(n_features_to_select=20).fit(Xm, ym),
        "Stability(Fisher) 200x1000": lambda: StabilitySelector(
            FisherScore(n_features_to_select=20), n_resamples=40, random_state=0).fit(Xm, ym),
        "ErrorControl perm 200x1000": lambda: ErrorControlSelector(
            pvalues="permutation", n_permutations=99, random_state=0).fit(Xm, ym),
        "ClassSpecific smote 200x1000": lambda: ClassSpecificSelector(
            selector="fisher_score", strategy="one_vs_rest", n_features_to_select=20,
            random_state=0).fit(Xm, yi),
    }


def worker(reps: int, only: str | None) -> None:
    import warnings

    warnings.simplefilter("ignore")
    out = {}
    for name, fit in _cases().items():
        if only and not any(w.strip() in name for w in only.split(",")):
            continue
        fit()  # compile, warm caches
        best = np.inf
        for _ in range(reps):
            t0 = time.perf_counter()
            fit()
            best = min(best, time.perf_counter() - t0)
        out[name] = best
    print(json.dumps(out))


def _run(tree: Path, reps: int, only: str | None) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "--reps", str(reps)]
    if only:
        cmd += ["--only", only]
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True,
                         cwd=str(tree))
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", help="git revision of the tree before")
    ap.add_argument("--before-tree", help="a checkout of the tree before")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", help="comma-separated substrings of the case names")
    ap.add_argument("--worker", action="store_true")
    args = ap.parse_args()
    if args.worker:
        worker(args.reps, args.only)
        return
    tmp = None
    if args.before_tree:
        before = Path(args.before_tree)
    else:
        tmp = tempfile.TemporaryDirectory()
        before = Path(tmp.name)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.before or "main"],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(before)], input=archive, check=True)
    load0 = os.getloadavg()
    times = {"before": [], "after": []}
    for _ in range(args.rounds):
        times["before"].append(_run(before, args.reps, args.only))
        times["after"].append(_run(ROOT, args.reps, args.only))
    load1 = os.getloadavg()
    print(f"load average before {load0[0]:.2f} / after {load1[0]:.2f} "
          f"({os.cpu_count()} CPUs); {args.rounds} rounds, best of {args.reps}")
    print(f"{'case':32s} {'before s':>9s} {'after s':>9s} {'ratio':>6s}")
    ratios = []
    for case in times["before"][0]:
        b = float(np.median([t[case] for t in times["before"]]))
        a = float(np.median([t[case] for t in times["after"]]))
        ratios.append(a / b)
        print(f"{case:32s} {b:9.4f} {a:9.4f} {a / b:6.3f}")
    print(f"geometric mean ratio {float(np.exp(np.mean(np.log(ratios)))):.3f}")
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
