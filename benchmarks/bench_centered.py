"""Paired timing of the sparse fits that run on the centred operator, before and after a change.

Times LsL21, RFS, LassoSelector, UDFS and UFCM on sparse (CSR) input, alternating worker
processes on two source trees (``--base``: a copy of the package before the change, e.g. from
``git archive <commit> sparsefs | tar -x -C /tmp/base``; the other: this checkout), so both
see the same machine load. Each worker fits every method once untimed (first-use compilation,
caches) and then ``--inner`` times, keeping the fastest; the figure per method is the median
over ``--rounds`` of the paired ratio new / base. Prints a table and, last, one
``BENCH_JSON {...}`` line::

    mkdir -p /tmp/base && git archive <commit> sparsefs | tar -x -C /tmp/base
    python benchmarks/bench_centered.py --base /tmp/base
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve()


def _problems():
    import numpy as np
    import scipy.sparse as sp

    def data(n, d, seed, density=0.03):
        rng = np.random.default_rng(seed)
        X = sp.random_array((n, d), density=density, random_state=rng, format="csr")
        y = rng.integers(3, size=n)
        X = sp.csr_array(X + sp.csr_array(np.outer(y == 1, np.arange(d) < 10) * 1.0))
        return X, y

    from sparsefs.selection import RFS, UDFS, UFCM, LassoSelector, LsL21

    X1, y1 = data(500, 8000, 0)
    X2, y2 = data(200, 2000, 1)
    X3, _ = data(300, 4000, 2)
    X4, _ = data(150, 2000, 3)
    return {
        "LsL21 500x8000": lambda: LsL21(n_features_to_select=100).fit(X1, y1),
        "RFS 200x2000": lambda: RFS(n_features_to_select=20).fit(X2, y2),
        "Lasso 500x8000": lambda: LassoSelector(n_features_to_select=100).fit(X1, y1),
        "UDFS 300x4000": lambda: UDFS(n_clusters=5, max_iter=50).fit(X3),
        "UFCM 150x2000": lambda: UFCM(3, n_restarts=2, max_iter=20, random_state=0).fit(X4),
    }


def worker(inner: int) -> None:
    import warnings

    warnings.simplefilter("ignore")
    out = {}
    for name, fit in _problems().items():
        fit()
        best = float("inf")
        for _ in range(inner):
            t0 = time.perf_counter()
            fit()
            best = min(best, time.perf_counter() - t0)
        out[name] = best
    print(json.dumps(out))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", nargs="?", default="run", choices=["run", "worker"])
    ap.add_argument("--base", help="source tree holding the package before the change")
    ap.add_argument("--new", default=str(HERE.parent.parent), help="the tree after it")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--inner", type=int, default=3)
    args = ap.parse_args()
    if args.mode == "worker":
        worker(args.inner)
        return 0
    if not args.base:
        ap.error("--base is required")
    times: dict[str, dict[str, list[float]]] = {"base": {}, "new": {}}
    load = []
    for r in range(args.rounds):
        order = ("base", "new") if r % 2 == 0 else ("new", "base")
        for side in order:
            env = dict(os.environ, PYTHONPATH=getattr(args, side))
            res = subprocess.run([sys.executable, str(HERE), "worker", "--inner",
                                  str(args.inner)], env=env, capture_output=True, text=True,
                                 check=True)
            for name, t in json.loads(res.stdout.strip().splitlines()[-1]).items():
                times[side].setdefault(name, []).append(t)
            load.append(os.getloadavg()[0])
    rows = []
    for name in times["base"]:
        ratios = [n / b for n, b in zip(times["new"][name], times["base"][name])]
        rows.append({"fit": name, "base_s": statistics.median(times["base"][name]),
                     "new_s": statistics.median(times["new"][name]),
                     "ratio_median": statistics.median(ratios),
                     "ratios": ratios})
    print(f"{'fit':<18}{'base s':>9}{'new s':>9}{'new/base':>10}  paired ratios")
    for row in rows:
        print(f"{row['fit']:<18}{row['base_s']:9.3f}{row['new_s']:9.3f}"
              f"{row['ratio_median']:10.3f}  " + " ".join(f"{x:.2f}" for x in row["ratios"]))
    print(f"load average (1 min) during the run: {min(load):.2f} - {max(load):.2f}")
    print("BENCH_JSON " + json.dumps({"results": rows, "loadavg": load}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
