"""The l1 sparse-center kernel (class medians, shared weighted median, gains): where its time
goes, against the bounds, the previous kernel and NearestCentroid(metric="manhattan").

Issue #33 row: ``SparseCenterClassifier(norm="l1")`` at 200 x 20 000 should fit >= 5x faster
than ``NearestCentroid(metric="manhattan")`` (the peer computes only the class medians; the
sparse classifier also the shared weighted median, the gain of every feature and the
selection). Every figure of a case is taken in the same run, the methods interleaved round by
round (each round: one fresh copy of X per call, outside the timing), so that a change of
machine load hits all of them alike; figures are medians over the rounds, wall and CPU time
(this process, all threads).

Per case (dense float64, classes of equal size in random order):

* fits: the peer; ``SparseCenterClassifier(10, norm="l1")`` with its default threads and with
  ``n_jobs=1``; the same with the previous kernel (``_NETWORK_MAX_CLASS_SIZE = 0``: each
  feature's class runs sorted or partitioned by numpy on transposed blocks), which is what
  runs for classes of more than 90 samples;
* where the time goes (one thread, network kernel only): cumulative stages of
  ``_l1_rows_chunk`` - the gather of the rows in class order, the sorting networks, the class
  medians, the dispersions and window counts, the shared weighted median and the gain terms;
* bounds measured in the same run: one read of X (``X.sum()``: the bytes the kernel must
  read), and numpy's SIMD sort of every class run of every feature laid out contiguously
  (``np.sort`` on the transposed class blocks, without the gather): a selection bound for a
  sort-based median.

Also: the first l1 fit in a fresh process with an empty numba cache (compilation) and with
the cache filled (load), for small classes (network kernel) and then large ones (previous
kernel), in subprocesses.

Run: ``python benchmarks/bench_l1_medians.py [--quick] [--repeat N] [--out FILE]``
(``--quick``: 200 x 20000 and 4000 x 1000 only, fewer rounds; the full run adds 4 classes at
200 x 20000 and 20000 x 2000).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn.neighbors import NearestCentroid

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import (
    REPO_ROOT,
    BenchRun,
    LoadMonitor,
    bench_parser,
    emit_json,
    fl_flag,
    print_table,
    repeat_for,
)

K_SELECT = 10
TARGET = 5.0  # issue #33: l1 fit >= 5x faster than the peer at 200 x 20000
TARGET_CASE = (200, 20_000)
FULL_CASES = [(200, 20_000, 3), (200, 20_000, 4), (20_000, 2_000, 3)]
QUICK_CASES = [(200, 20_000, 3), (4_000, 1_000, 3)]
STAGES = ["gather rows in class order", "+ sorting networks", "+ class medians",
          "+ dispersions, window counts", "+ weighted median, gain terms (all)"]


def make_data(n: int, p: int, n_classes: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    y = rng.permutation(np.arange(n) % n_classes)
    X = rng.standard_normal((n, p))
    X[:, rng.choice(p, K_SELECT, replace=False)] += 1.5 * (y[:, None] - 1.0)
    return X, y


def paired_rounds(methods: dict, X, rounds: int) -> dict:
    """Median wall / CPU seconds of each method, the methods interleaved round by round."""
    wall = {k: [] for k in methods}
    cpu = {k: [] for k in methods}
    for fn in methods.values():  # warm-up (JIT, pools, caches)
        fn(X.copy())
    mon = LoadMonitor().start()
    for _ in range(rounds):
        for name, fn in methods.items():
            Xc = X.copy()
            c0, t0 = time.process_time(), time.perf_counter()
            fn(Xc)
            wall[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
    load = mon.stop()
    return {
        "wall_s": {k: float(np.median(v)) for k, v in wall.items()},
        "cpu_s": {k: float(np.median(v)) for k, v in cpu.items()},
        "wall_all_s": wall,
        "fl": load["fl"],
        "fl_coarse": load["fl_coarse"],
    }


def stage_times(X, y, n_classes: int, rounds: int) -> list[float]:
    """CPU seconds (median) of the network kernel run up to each stage, one thread."""
    from sparsefs._kernels import sparse_centers as K

    n, p = X.shape
    counts = np.bincount(y, minlength=n_classes)
    order = np.argsort(y, kind="stable").astype(np.int64)
    bounds = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    nets = [K._merge_exchange_pairs(int(c)) for c in counts]
    pairs = np.concatenate(nets)
    pair_ptr = np.concatenate([[0], np.cumsum([len(q) for q in nets])]).astype(np.int64)
    wint, total = K._integer_weights(counts, True)
    width = K.block_width(n, p, 1)
    tile = K._NETWORK_TILE
    C = n_classes
    work = (np.empty((n, width)), np.empty((2, tile)), np.empty((4, tile)),
            np.empty((2 * C, tile), dtype=np.int64), np.empty((3, C), dtype=np.int64))
    out = (np.empty((C, p)), np.empty(p), np.empty((C, p)), np.empty((C, p)),
           1.0 / counts, np.empty(p), np.empty(p), np.empty(p, dtype=np.bool_), np.empty(p))
    chunks = [(c0, min(p, c0 + width)) for c0 in range(0, p, width)]
    res = [[] for _ in STAGES]
    for _ in range(rounds):
        for s in range(1, len(STAGES) + 1):
            Xc = X.copy()
            t0 = time.process_time()
            for c0, c1 in chunks:
                K._l1_rows_chunk(Xc, order, c0, c1, tile, bounds, pairs, pair_ptr, wint, total,
                                 *work, *out, s)
            res[s - 1].append(time.process_time() - t0)
    return [float(np.median(r)) for r in res]


def bound_times(X, y, n_classes: int, rounds: int) -> dict:
    """One read of X, and numpy's sort of every class run laid out contiguously."""
    order = np.argsort(y, kind="stable")
    counts = np.bincount(y, minlength=n_classes)
    bounds = np.concatenate([[0], np.cumsum(counts)])
    blocks = [np.ascontiguousarray(X[order[bounds[c]:bounds[c + 1]]].T) for c in range(n_classes)]
    read, sort = [], []
    for _ in range(rounds):
        Xc = X.copy()
        t0 = time.process_time()
        Xc.sum()
        read.append(time.process_time() - t0)
        copies = [b.copy() for b in blocks]
        t0 = time.process_time()
        for b in copies:
            b.sort(axis=1)
        sort.append(time.process_time() - t0)
    return {"read_s": float(np.median(read)), "sort_s": float(np.median(sort))}


def run_case(n: int, p: int, n_classes: int, rounds: int) -> dict:
    from sparsefs._kernels import sparse_centers as K
    from sparsefs.classification import SparseCenterClassifier

    X, y = make_data(n, p, n_classes)
    network = int(np.bincount(y).max()) <= K._NETWORK_MAX_CLASS_SIZE

    def ours(n_jobs=None, previous=False):
        def fit(Xc):
            saved = K._NETWORK_MAX_CLASS_SIZE
            if previous:
                K._NETWORK_MAX_CLASS_SIZE = 0
            try:
                return SparseCenterClassifier(K_SELECT, norm="l1", n_jobs=n_jobs).fit(Xc, y)
            finally:
                K._NETWORK_MAX_CLASS_SIZE = saved

        return fit

    methods = {
        "peer": lambda Xc: NearestCentroid(metric="manhattan").fit(Xc, y),
        "sparsefs": ours(),
        "sparsefs_1thread": ours(1),
    }
    if network:
        methods["previous"] = ours(previous=True)
        methods["previous_1thread"] = ours(1, previous=True)
    timing = paired_rounds(methods, X, rounds)
    a = ours()(X.copy())
    b = NearestCentroid(metric="manhattan").fit(X.copy(), y)
    same_peer = bool(np.array_equal(a.class_centers_, b.centroids_))
    same_previous = True
    if network:
        c = ours(previous=True)(X.copy())
        same_previous = all(
            np.array_equal(getattr(a, k), getattr(c, k))
            for k in ("class_centers_", "shared_center_", "gains_", "ranking_")
        )
    w, cpu = timing["wall_s"], timing["cpu_s"]
    row = {
        "case": f"{n}x{p} K={n_classes}",
        "n": n, "p": p, "n_classes": n_classes,
        "kernel": "networks" if network else "transposed (numpy sort/partition)",
        "wall_s": w, "cpu_s": cpu,
        "ratio": w["peer"] / w["sparsefs"],
        "ratio_1thread": w["peer"] / w["sparsefs_1thread"],
        "cpu_ratio_1thread": cpu["peer"] / cpu["sparsefs_1thread"],
        "ratio_previous": w["peer"] / w["previous"] if network else None,
        "ratio_previous_1thread": w["peer"] / w["previous_1thread"] if network else None,
        "centers_equal_peer": same_peer,
        "equal_previous_kernel": same_previous,
        "fl": timing["fl"], "fl_coarse": timing["fl_coarse"],
        "wall_all_s": timing["wall_all_s"],
    }
    if (n, p) == TARGET_CASE:
        row["target"] = TARGET
        row["target_met"] = bool(row["ratio"] >= TARGET)
    row["bounds"] = bound_times(X, y, n_classes, max(3, rounds // 2))
    row["bounds"]["read_gbps"] = X.nbytes / row["bounds"]["read_s"] / 1e9
    if network:
        row["stages_cpu_s"] = dict(zip(STAGES, stage_times(X, y, n_classes,
                                                           max(3, rounds // 2))))
    return row


_FIRST_USE = r"""
import json, time, numpy as np
t0 = time.perf_counter()
from sparsefs.classification import SparseCenterClassifier
rng = np.random.default_rng(1)
t1 = time.perf_counter()
SparseCenterClassifier(2, norm="l1").fit(rng.normal(size=(30, 8)), np.arange(30) % 3)
t2 = time.perf_counter()
SparseCenterClassifier(2, norm="l1").fit(rng.normal(size=(400, 8)), np.arange(400) % 2)
t3 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "small_classes_s": t2 - t1, "large_classes_s": t3 - t2}))
"""


def first_use() -> dict:
    """First l1 fits in fresh processes: numba cache empty (compile) and then filled (load)."""
    out = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache,
                   PYTHONPATH=str(REPO_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        for label in ("cold", "warm"):
            r = subprocess.run([sys.executable, "-c", _FIRST_USE], env=env, capture_output=True,
                               text=True, check=True, cwd=tempfile.gettempdir())
            out[label] = json.loads(r.stdout.strip().splitlines()[-1])
    return out


def main(argv=None) -> int:
    parser = bench_parser(__doc__.splitlines()[0], default_repeat=9)
    args = parser.parse_args(argv)
    rounds = repeat_for(args)
    run = BenchRun("l1_medians", args)
    compile_times = first_use()
    rows = [run_case(n, p, k, rounds) for n, p, k in (QUICK_CASES if args.quick else FULL_CASES)]

    print(f"\nl1 sparse centers: SparseCenterClassifier({K_SELECT}, norm='l1').fit vs "
          f"NearestCentroid(metric='manhattan').fit, interleaved, median of {rounds} rounds; "
          "ratio = peer wall time / sparsefs wall time (CPU: this process, all threads)\n")
    table = []
    for r in rows:
        w = r["wall_s"]
        table.append({
            "case": r["case"], "kernel": r["kernel"],
            "peer ms": 1e3 * w["peer"], "sfs ms": 1e3 * w["sparsefs"],
            "sfs 1thr ms": 1e3 * w["sparsefs_1thread"],
            "ratio": r["ratio"], "ratio 1thr": r["ratio_1thread"],
            "CPU ratio 1thr": r["cpu_ratio_1thread"],
            "previous ratio": r["ratio_previous"],
            "previous 1thr": r["ratio_previous_1thread"],
            "target": None if "target" not in r else
            f">= {r['target']:g}x: " + ("met" if r["target_met"] else "NOT MET"),
            "fl": None if r["fl"] is None else f"{r['fl']:.2f}"
            + (" HIGH" if fl_flag(r["fl"], r["fl_coarse"]) else ""),
        })
    print_table(table, [(k, k) for k in table[0]])
    for r in rows:
        b = r["bounds"]
        print(f"\n{r['case']}: one read of X {1e3 * b['read_s']:.2f} ms ({b['read_gbps']:.1f} GB/s "
              f"now); numpy sort of every contiguous class run {1e3 * b['sort_s']:.2f} ms")
        if "stages_cpu_s" in r:
            prev = 0.0
            for name, t in r["stages_cpu_s"].items():
                print(f"    {name:40s} {1e3 * t:7.2f} ms CPU (+{1e3 * (t - prev):.2f})")
                prev = t
        print(f"    centers = peer: {r['centers_equal_peer']}; same fit as the previous "
              f"kernel: {r['equal_previous_kernel']}")
    print("\nfirst l1 fit in a fresh process (numba cache empty / filled): "
          + "; ".join(f"{k}: small classes {v['small_classes_s']:.2f} s, then large classes "
                      f"{v['large_classes_s']:.2f} s" for k, v in compile_times.items()))
    payload = run.finish({"k_select": K_SELECT, "target": TARGET, "first_use": compile_times,
                          "results": rows})
    flag = payload["load"]["load_flag"]
    print(f"machine load over the run: fl={payload['load']['fl']}, loadavg "
          f"{payload['load']['loadavg_before']} -> {payload['load']['loadavg_after']}"
          + (f"  !!! {flag}" if flag else ""))
    emit_json(payload, out=args.out)
    bad = [r["case"] for r in rows if not (r["centers_equal_peer"] and r["equal_previous_kernel"])]
    if bad:
        print("!!! RESULTS DIFFER in: " + ", ".join(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
