"""Per-call cost of the array-type dispatch (issue #34): the small fits, predictions and
transforms that stability selection, permutation p-values and CV repeat hundreds of times,
on this tree and on a baseline revision, interleaved round by round in the same run.

Each round runs one child process per tree (``PYTHONPATH`` = that tree; the baseline is the
``sparsefs/`` of ``--baseline`` exported with ``git archive``); a child times every case
(best of 7 repeats of ``--number`` calls after a warm-up) and prints them as JSON. The figure
is the median over the rounds of each tree's per-call time, and the ratio this / baseline.

    python benchmarks/bench_dispatch_overhead.py            # ~1 min
    python benchmarks/bench_dispatch_overhead.py --quick    # smoke test
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import numpy as np
from _bench import REPO_ROOT, BenchRun, bench_parser, emit_json, print_table, repeat_for

CHILD = r"""
import json, sys, timeit
import numpy as np
from sparsefs.classification import SparseCenterClassifier
from sparsefs.selection import FisherScore
number = int(sys.argv[1])
rng = np.random.default_rng(0)
X = rng.standard_normal((50, 100)); y = np.arange(50) % 2
c = SparseCenterClassifier(5).fit(X, y); f = FisherScore(5).fit(X, y)
cases = {"SparseCenterClassifier(5).fit 50x100": lambda: SparseCenterClassifier(5).fit(X, y),
         "FisherScore(5).fit 50x100": lambda: FisherScore(5).fit(X, y),
         "SparseCenterClassifier.predict 50x100": lambda: c.predict(X),
         "FisherScore.transform 50x100": lambda: f.transform(X)}
out = {}
for name, fn in cases.items():
    fn()
    out[name] = min(timeit.repeat(fn, number=number, repeat=7)) / number
print(json.dumps(out))
"""


def _export(rev: str, into: Path) -> Path:
    """``sparsefs/`` of ``rev`` under ``into`` (git archive: the committed files only)."""
    archive = into / "base.tar"
    with open(archive, "wb") as fh:
        subprocess.run(["git", "archive", rev, "sparsefs"], cwd=REPO_ROOT, stdout=fh, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into


def _child(tree: Path, number: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    res = subprocess.run([sys.executable, "-c", CHILD, str(number)], env=env,
                         cwd=tempfile.gettempdir(), capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    p = bench_parser(__doc__.splitlines()[0], default_repeat=5)
    p.add_argument("--baseline", default="ead73c0", help="revision before the dispatch (#34)")
    p.add_argument("--number", type=int, default=200, help="calls per timing")
    args = p.parse_args()
    rounds = repeat_for(args)
    number = 20 if args.quick else args.number
    run = BenchRun("dispatch_overhead", args)
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"baseline": _export(args.baseline, Path(tmp)), "this": REPO_ROOT}
        for tree in trees.values():  # numba caches and imports, outside the rounds
            _child(tree, 1)
        times: dict[str, list[dict[str, float]]] = {k: [] for k in trees}
        for _ in range(rounds):
            for label, tree in trees.items():
                times[label].append(_child(tree, number))
    rows = []
    for case in times["this"][0]:
        base = float(np.median([t[case] for t in times["baseline"]]))
        this = float(np.median([t[case] for t in times["this"]]))
        rows.append({"case": case, "baseline_us": base * 1e6, "this_us": this * 1e6,
                     "ratio": this / base})
    print_table(rows, ["case", "baseline_us", "this_us", "ratio"])
    emit_json(run.finish({"baseline": args.baseline, "rounds": rounds, "number": number,
                          "results": rows}), out=args.out)


if __name__ == "__main__":
    main()
