"""Benchmark: sparsefs on Dask, out of core and in memory (not run in CI).

(a) **Out of core.** A dense float32 array larger than this machine's memory (default 1.5x
MemTotal, ``--size-gb`` to change it) is written to disk as a zarr store (uncompressed, tiles of
``n/4`` rows x 2048 columns), one column block at a time, never held in memory. Two balanced
classes; ``N_PLANTED`` features, spread over the columns, are shifted by ``SHIFT`` in class 1,
so the answer is known: the top ``N_PLANTED`` of every ranking must be the planted features.
``SparseCenterClassifier`` (l2, l1) and ``FisherScore`` are fitted on ``da.from_zarr`` through
the threaded scheduler (``--cluster`` for a ``LocalCluster`` of worker processes). The peak RSS
of the process tree (this process and its children: psutil, else /proc) is sampled every 50 ms
during each fit; target under 8 GB.

(b) **In memory.** The same three fits on an in-memory float64 array, numpy path against
``da.from_array`` (row chunks; l1 rechunks to feature blocks itself), timed in the same run,
ratio dask / numpy printed.

Run (writes ~1.5x RAM to ``--store``; check free disk first)::

    python benchmarks/bench_dask.py [--quick] [--size-gb G] [--store PATH] [--keep]

The store is deleted at the end unless ``--keep``. Progress goes to stderr; last stdout line
``BENCH_JSON {...}``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import BenchRun, LoadMonitor, bench_parser, emit_json, print_table, time_call

N_PLANTED = 50
SHIFT = 1.0
SEED = 0
COLS_PER_BLOCK = 2048
TARGET_PEAK_GB = 8.0


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def mem_total_bytes() -> int:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no MemTotal in /proc/meminfo")


# --------------------------------------------------------------------------- RSS sampling


def _tree_rss_bytes() -> int:
    """RSS of this process and all its descendants."""
    try:
        import psutil

        me = psutil.Process()
        total = me.memory_info().rss
        for child in me.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                total += child.memory_info().rss
        return total
    except ImportError:  # /proc fallback: this process and its direct children
        pid = os.getpid()
        pids = [pid]
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                pids += [int(x) for x in f.read().split()]
        except OSError:
            pass
        total = 0
        for q in pids:
            try:
                with open(f"/proc/{q}/statm") as f:
                    total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            except OSError:
                pass
        return total


class PeakSampler:
    """Sample the process tree's RSS every ``interval`` s in a thread; ``peak`` in bytes."""

    def __init__(self, interval: float = 0.05) -> None:
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, _tree_rss_bytes())
            self._stop.wait(self.interval)

    def __enter__(self) -> PeakSampler:
        self.peak = _tree_rss_bytes()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _tree_rss_bytes())


# --------------------------------------------------------------------------- data


def planted_columns(p: int) -> np.ndarray:
    return np.linspace(0, p - 1, N_PLANTED).astype(np.int64)


def labels(n: int) -> np.ndarray:
    y = np.arange(n) % 2
    return np.random.default_rng(SEED).permutation(y)


def write_store(path: Path, n: int, p: int) -> None:
    """Write the planted float32 array to a zarr store, one column block at a time."""
    import zarr

    y = labels(n)
    planted = planted_columns(p)
    z = zarr.create_array(store=str(path), shape=(n, p), chunks=(max(1, n // 4), COLS_PER_BLOCK),
                          dtype="float32", compressors=None, overwrite=True)
    t0 = time.perf_counter()
    for j, c0 in enumerate(range(0, p, COLS_PER_BLOCK)):
        c1 = min(p, c0 + COLS_PER_BLOCK)
        rng = np.random.default_rng([SEED, j])
        block = rng.standard_normal((n, c1 - c0), dtype=np.float32)
        cols = planted[(planted >= c0) & (planted < c1)] - c0
        if cols.size:
            block[np.ix_(y == 1, cols)] += np.float32(SHIFT)
        z[:, c0:c1] = block
        if j % 20 == 0:
            done = c1 * n * 4 / 1e9
            _log(f"wrote {done:.1f} GB ({done / (time.perf_counter() - t0):.2f} GB/s)")


def recovered(est, p: int) -> bool:
    top = np.flatnonzero(est.ranking_ <= N_PLANTED)
    return bool(np.array_equal(np.sort(top), planted_columns(p)))


def make_estimators():
    from sparsefs.classification import SparseCenterClassifier
    from sparsefs.selection import FisherScore

    return {
        "SparseCenterClassifier(l2)": lambda: SparseCenterClassifier(N_PLANTED, norm="l2"),
        "SparseCenterClassifier(l1)": lambda: SparseCenterClassifier(N_PLANTED, norm="l1"),
        "FisherScore": lambda: FisherScore(N_PLANTED),
    }


# --------------------------------------------------------------------------- (a) out of core


def out_of_core(args) -> list[dict]:
    import dask.array as da

    n = args.n_samples
    size = int(args.size_gb * 1e9)
    p = max(N_PLANTED, size // (4 * n))
    store = Path(args.store)
    free = shutil.disk_usage(store.parent).free
    if free < 1.05 * n * p * 4:
        raise SystemExit(f"not enough free disk at {store.parent}: {free / 1e9:.1f} GB free, "
                         f"{n * p * 4 / 1e9:.1f} GB needed (use --size-gb)")
    _log(f"(a) writing {n} x {p} float32 = {n * p * 4 / 1e9:.1f} GB to {store}")
    t0 = time.perf_counter()
    write_store(store, n, p)
    write_s = time.perf_counter() - t0
    _log(f"(a) written in {write_s:.0f} s")
    y = labels(n)
    rows = []
    try:
        for name, make in make_estimators().items():
            X = da.from_zarr(str(store))
            mon = LoadMonitor().start()
            with PeakSampler() as sampler:
                t0 = time.perf_counter()
                est = make().fit(X, y)
                wall = time.perf_counter() - t0
            load = mon.stop()
            row = {
                "case": "out-of-core", "method": name, "n": n, "p": p,
                "data_gb": round(n * p * 4 / 1e9, 2), "fit_s": round(wall, 1),
                "read_gb_s": round(n * p * 4 / 1e9 / wall, 2),
                "peak_rss_gb": round(sampler.peak / 1e9, 3),
                "under_target": sampler.peak < TARGET_PEAK_GB * 1e9,
                "recovered": recovered(est, p), "fl": load["fl"],
            }
            _log(f"(a) {row}")
            rows.append(row)
    finally:
        if not args.keep:
            shutil.rmtree(store, ignore_errors=True)
            _log(f"(a) deleted {store}")
    rows.append({"case": "out-of-core", "method": "write store", "n": n, "p": p,
                 "data_gb": round(n * p * 4 / 1e9, 2), "fit_s": round(write_s, 1)})
    return rows


# --------------------------------------------------------------------------- (b) in memory


def in_memory(args) -> list[dict]:
    import dask.array as da

    n, p = (4000, 1000) if args.quick else (20000, 2000)
    rng = np.random.default_rng(SEED)
    y = labels(n)
    X = rng.standard_normal((n, p))
    X[np.ix_(y == 1, planted_columns(p))] += SHIFT
    Xd = da.from_array(X, chunks=(2500, p))
    rows = []
    for name, make in make_estimators().items():
        t_np = time_call(lambda make=make: make().fit(X, y), repeat=args.repeat_n, name=name)
        t_da = time_call(lambda make=make: make().fit(Xd, y), repeat=args.repeat_n,
                         name=name + " dask")
        a, b = t_np.result, t_da.result
        rows.append({
            "case": "in-memory", "method": name, "n": n, "p": p,
            "numpy_s": round(t_np.median, 4), "dask_s": round(t_da.median, 4),
            "ratio_dask_over_numpy": round(t_da.median / t_np.median, 2),
            "same_ranking": bool(np.array_equal(a.ranking_, b.ranking_)),
            "fl": t_da.fl,
        })
        _log(f"(b) {rows[-1]}")
    return rows


def main() -> int:
    parser = bench_parser("sparsefs on Dask: out-of-core peak memory and in-memory throughput",
                          default_repeat=3)
    parser.add_argument("--size-gb", type=float, default=None,
                        help="size of the on-disk array (default 1.5x MemTotal; 2 with --quick)")
    parser.add_argument("--n-samples", type=int, default=20000)
    parser.add_argument("--store", default="/tmp/dask_bench_store.zarr")
    parser.add_argument("--keep", action="store_true", help="keep the zarr store")
    parser.add_argument("--skip-out-of-core", action="store_true")
    parser.add_argument("--cluster", action="store_true",
                        help="LocalCluster(n_workers=2, threads_per_worker=1) instead of threads")
    args = parser.parse_args()
    if args.size_gb is None:
        args.size_gb = 2.0 if args.quick else 1.5 * mem_total_bytes() / 1e9
    args.repeat_n = args.repeat or (1 if args.quick else 3)
    run = BenchRun("bench_dask", args)
    client = None
    if args.cluster:
        from distributed import Client, LocalCluster

        client = Client(LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     dashboard_address=None))
    try:
        rows = in_memory(args)
        if not args.skip_out_of_core:
            rows += out_of_core(args)
    finally:
        if client is not None:
            client.close()
    print_table([r for r in rows if r["case"] == "in-memory"],
                ["method", "n", "p", "numpy_s", "dask_s", "ratio_dask_over_numpy",
                 "same_ranking"])
    print_table([r for r in rows if r["case"] == "out-of-core"],
                ["method", "n", "p", "data_gb", "fit_s", "read_gb_s", "peak_rss_gb",
                 "under_target", "recovered"])
    ok = all(r.get("same_ranking", True) and r.get("recovered", True)
             and r.get("under_target", True) for r in rows)
    emit_json(run.finish({"results": rows, "mem_total_gb": round(mem_total_bytes() / 1e9, 2),
                          "ok": ok}), out=args.out)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
