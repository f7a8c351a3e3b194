"""Sparse l1 / l2 center classifiers: fit time and memory against NearestCentroid.

For each case (dense float64, 3 classes, 10 planted features), in the same run and on the same
data: ``SparseCenterClassifier(10, norm="l2")`` against ``NearestCentroid()`` (class means) and
``SparseCenterClassifier(10, norm="l1")`` against ``NearestCentroid(metric="manhattan")`` (class
medians). The sparse classifiers compute more than their peer (the shared centers and the gain
of every feature, then the selection); the peer computes only the class centers. Also timed:
both norms on one thread (``n_jobs=1``; the default uses every CPU) and, at full size, a CSR
case for l2.

Each figure is the median of ``--repeat`` timed fits after ``--warmup`` untimed ones, each fit
on a fresh copy of X made outside the timing. numba's first-call cost (compilation, or loading
the cached machine code) is paid before any timing, by a tiny warm-up fit, and reported apart.

Also recorded: the CPU time of each call (this process, all threads; median), and the
CPU-time ratio peer / sparsefs, which other processes on a shared machine disturb much less than
wall time (for the threaded l1 fit it compares total work, not elapsed time).

Correctness in passing: the class centers of the sparse classifiers (``class_centers_``) must
equal the peer's ``centroids_`` (means to 1e-10 relative, medians exactly); a disagreement is
printed loudly and makes the script exit with status 1 (after the JSON line).

Targets (issue #4): at 200 x 20000, l2 >= 20x and l1 >= 5x faster than the peer.

Run: ``python benchmarks/bench_sparse_centers.py [--quick] [--repeat N] [--out FILE]``.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.neighbors import NearestCentroid

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import (
    BenchRun,
    LoadMonitor,
    bench_parser,
    call_peak_memory,
    emit_json,
    fl_flag,
    print_table,
    repeat_for,
    time_call,
)

N_CLASSES = 3
K_SELECT = 10
SEED = 0
TARGETS = {"l2": 20.0, "l1": 5.0}  # at 200 x 20000
TARGET_CASE = (200, 20_000)


@dataclass(frozen=True)
class Case:
    n: int
    p: int
    density: float | None = None  # None: dense; else CSR at this density (l2 only)

    @property
    def label(self) -> str:
        kind = "dense" if self.density is None else f"csr {self.density:.1%}"
        return f"{self.n}x{self.p} {kind}"


FULL_CASES = [Case(200, 20_000), Case(20_000, 2_000), Case(2_000, 50_000, 0.005)]
QUICK_CASES = [Case(200, 20_000), Case(4_000, 1_000)]


def make_data(case: Case, seed: int = SEED):
    """Gaussian noise (dense) or exponential counts (CSR), 3 shuffled classes, 10 planted
    features whose class means (dense) or per-class densities (CSR) differ."""
    rng = np.random.default_rng(seed)
    y = rng.permutation(np.arange(case.n) % N_CLASSES)
    planted = rng.choice(case.p, K_SELECT, replace=False)
    if case.density is None:
        X = rng.standard_normal((case.n, case.p))
        X[:, planted] += 1.5 * (y[:, None] - 1.0)
        return X, y
    nnz = round(case.n * case.p * case.density)
    rows, cols = rng.integers(0, case.n, nnz), rng.integers(0, case.p, nnz)
    vals = rng.exponential(1.0, nnz)
    X = sp.coo_matrix((vals, (rows, cols)), shape=(case.n, case.p)).tocsr()
    X.sum_duplicates()
    X = X.tolil()
    for j in planted:
        members = np.flatnonzero(rng.random(case.n) < 0.1 * (1 + y))
        X[members, j] = rng.exponential(2.0, members.size)
    return X.tocsr(), y


def numba_first_call_s() -> float:
    """Wall time of the first l1 fit of this process on a tiny problem (numba compiles, or
    loads its cached machine code); later fits do not pay it."""
    from sparsefs.classification import SparseCenterClassifier

    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(30, 8)), np.arange(30) % 3
    t0 = time.perf_counter()
    SparseCenterClassifier(2, norm="l1").fit(X, y)
    SparseCenterClassifier(2, norm="l1").fit(X[:, :4], np.arange(30) % 2)
    return time.perf_counter() - t0


def run_case(case: Case, repeat: int, warmup: int) -> list[dict]:
    from sparsefs.classification import SparseCenterClassifier

    X, y = make_data(case)

    def fresh():
        return X.copy()

    pairs = [("l2", {}, "NearestCentroid()", {})]
    if case.density is None:
        pairs.append(("l1", {}, 'NearestCentroid(metric="manhattan")', {"metric": "manhattan"}))
    rows = []
    for norm, extra, peer_name, peer_kw in pairs:

        def fit_ours(Xc, norm=norm, extra=extra):
            return SparseCenterClassifier(K_SELECT, norm=norm, **extra).fit(Xc, y)

        def fit_peer(Xc, peer_kw=peer_kw):
            return NearestCentroid(**peer_kw).fit(Xc, y)

        methods = {"sparsefs": fit_ours, "peer": fit_peer}
        methods["sparsefs_1thread"] = lambda Xc, norm=norm, extra=extra: SparseCenterClassifier(
            K_SELECT, norm=norm, n_jobs=1, **extra
        ).fit(Xc, y)
        cpu: dict[str, list[float]] = {}

        def with_cpu(name, fn, cpu=cpu):
            """``fn`` that also records this process's CPU time of the call (all threads)."""

            def call(Xc):
                t0 = time.process_time()
                out = fn(Xc)
                cpu.setdefault(name, []).append(time.process_time() - t0)
                return out

            return call

        mon = LoadMonitor().start()
        timings = {
            name: time_call(with_cpu(name, fn), setup=fresh, repeat=repeat, warmup=warmup,
                            name=name)
            for name, fn in methods.items()
        }
        load = mon.stop()
        cpu_med = {k: float(np.median(v[warmup:])) for k, v in cpu.items()}
        memory = {name: call_peak_memory(methods[name], setup=fresh) for name in ("sparsefs",
                                                                                  "peer")}
        ours, peer = timings["sparsefs"].result, timings["peer"].result
        if norm == "l2":
            same = bool(np.allclose(ours.class_centers_, peer.centroids_, rtol=1e-10,
                                    atol=1e-12))
        else:
            same = bool(np.array_equal(ours.class_centers_, peer.centroids_))
        med = {k: t.median for k, t in timings.items()}
        row = {
            "case": case.label,
            "n": case.n,
            "p": case.p,
            "format": "dense" if case.density is None else "csr",
            "norm": norm,
            "peer": peer_name,
            "sparsefs_s": med["sparsefs"],
            "peer_s": med["peer"],
            "ratio": med["peer"] / med["sparsefs"],
            "sparsefs_1thread_s": med.get("sparsefs_1thread"),
            "ratio_1thread": (
                med["peer"] / med["sparsefs_1thread"] if "sparsefs_1thread" in med else None
            ),
            "cpu_s": cpu_med,
            # CPU-time ratio (this process, all threads, per call): robust to other processes
            # taking the CPUs; for the threaded l1 fit it compares total work, not wall time.
            "cpu_ratio": cpu_med["peer"] / cpu_med["sparsefs"],
            "centers_equal_peer": same,
            "mem_traced_mib": {k: m["traced_mib"] for k, m in memory.items()},
            "mem_rss_mib": {k: m["rss_mib"] for k, m in memory.items()},
            "timings": {k: t.to_dict() for k, t in timings.items()},
            "fl": load["fl"],
            "fl_coarse": load["fl_coarse"],
        }
        target = TARGETS[norm] if (case.n, case.p) == TARGET_CASE and case.density is None else None
        row["target"] = target
        row["target_met"] = None if target is None else bool(row["ratio"] >= target)
        rows.append(row)
    return rows


def main(argv=None) -> int:
    parser = bench_parser(__doc__.splitlines()[0])
    args = parser.parse_args(argv)
    repeat = repeat_for(args)
    try:
        from sparsefs._kernels.sparse_centers import HAVE_NUMBA
    except ImportError as exc:
        print(
            f"error: cannot import sparsefs: {exc}\ninstall the package first: "
            "pip install -e . --no-deps",
            file=sys.stderr,
        )
        return 2

    run = BenchRun("sparse_centers", args)
    first_call = numba_first_call_s()  # before any timing: JIT / cache load kept out
    cases = QUICK_CASES if args.quick else FULL_CASES
    rows = []
    for case in cases:
        print(f"  running {case.label} ...", file=sys.stderr, flush=True)
        rows.extend(run_case(case, repeat, args.warmup))

    for r in rows:
        r["load_flag"] = fl_flag(r["fl"], r["fl_coarse"])
        r["fl_shown"] = (
            None
            if r["fl"] is None
            else f"{r['fl']:.3f}" + ("~" if r["fl_coarse"] else "")
            + (" HIGH" if r["load_flag"] else "")
        )
        r["target_shown"] = (
            None if r["target"] is None
            else f">= {r['target']:g}x: " + ("met" if r["target_met"] else "NOT MET")
        )
        r["mem_shown"] = "/".join(
            f"{r['mem_traced_mib'][k]:.1f}" for k in ("sparsefs", "peer")
        )
    print(
        f"\nSparse center classifiers: SparseCenterClassifier(n_features_to_select={K_SELECT}).fit "
        f"vs NearestCentroid.fit; {N_CLASSES} classes. median of {repeat} after {args.warmup} "
        "warm-up (fresh copy of X per call, outside the timing); ratio = peer time / sparsefs "
        f"time (> 1: sparsefs faster). numba: {'yes' if HAVE_NUMBA else 'NO (numpy fallback)'}; "
        f"its first call in this process (JIT or cache load, not in any timing): "
        f"{first_call:.2f} s\n"
    )
    print_table(
        rows,
        [
            ("case", "case"),
            ("norm", "norm"),
            ("sparsefs_s", "sparsefs s"),
            ("peer_s", "peer s"),
            ("ratio", "peer/sparsefs"),
            ("ratio_1thread", "peer/sparsefs 1 thread"),
            ("cpu_ratio", "CPU-time ratio"),
            ("target_shown", "target"),
            ("centers_equal_peer", "centers = peer"),
            ("mem_shown", "MiB traced sfs/peer"),
            ("fl_shown", "fl (~ coarse)"),
        ],
    )
    bad = [f"{r['case']} {r['norm']}" for r in rows if not r["centers_equal_peer"]]
    missed = [f"{r['case']} {r['norm']}" for r in rows if r["target_met"] is False]
    print()
    if bad:
        print("!!! CENTERS DIFFER from NearestCentroid in: " + ", ".join(bad) + " !!!")
    else:
        print("class centers: equal to NearestCentroid's centroids_ in every case.")
    print("targets (l2 >= 20x, l1 >= 5x at 200x20000): "
          + ("met." if not missed else "NOT met in: " + ", ".join(missed)))
    for r in rows:
        for k in ("fl_shown", "target_shown", "mem_shown"):
            r.pop(k)
    payload = run.finish(
        {
            "peers": {"l2": "sklearn NearestCentroid()",
                      "l1": 'sklearn NearestCentroid(metric="manhattan")'},
            "k_select": K_SELECT,
            "n_classes": N_CLASSES,
            "seed": SEED,
            "numba": HAVE_NUMBA,
            "numba_first_call_s": first_call,
            "targets": TARGETS,
            "centers_agree_all": not bad,
            "targets_met_all": not missed,
            "results": rows,
        }
    )
    flag = payload["load"]["load_flag"]
    print(
        f"machine load over the run: fl={payload['load']['fl']}, loadavg "
        f"{payload['load']['loadavg_before']} -> {payload['load']['loadavg_after']}"
        + (f"  !!! {flag}" if flag else "")
    )
    emit_json(payload, out=args.out)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
