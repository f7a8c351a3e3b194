"""A million cells out of core: per-feature selectors on a stored CSR matrix through dask.

Issue #22, item 3. A synthetic cells x genes CSR count matrix (default 1 000 000 x 20 000,
~5% density, float32, 5 groups; 10 planted marker genes per group) is written to disk
**block by block** (``GEN_BLOCK`` cells at a time, never the whole matrix in memory) as an
AnnData store, by default a ``.h5ad`` file (``--format zarr`` for a zarr store), X uncompressed.
It is read back the way a scverse user would: ``anndata.experimental.read_elem_lazy(X,
chunks=(--block-rows, n_genes))``, a dask array whose blocks are scipy CSR matrices, fitted
through sparsefs's dask path (docs/dask.md: one compiled pass over each block's stored values,
nothing densified, float32 read as stored, float64 accumulators) on the threaded scheduler:

* ``FisherScore(n_features_to_select=50)``;
* ``SparseCenterClassifier(50, norm="l2")``.

Each fit runs in its own child process (this script with ``--_child``): wall time of the fit
alone (imports, opening the store and reading the labels outside it; the compiled pass is
warmed up on a small block first) and the child's lifetime peak RSS
(``VmHWM`` of ``/proc/self/status``, imports included; not ``ru_maxrss``, which after fork +
exec also counts the parent's RSS). Target (#22): peak RSS < 8 GB.

``L0KMeans`` is not run: its dask path (``sparsefs/_dask/_kmeans.py``) needs dense row blocks
(Lloyd distances over all selected genes of a row) and rejects sparse blocks with a TypeError;
densifying would make every Lloyd pass read 80 GB of float32 at this size.

Checks, all printed and in the JSON:

* **equality with the in-memory path**: the generator is seeded per block, so the first
  ``--check-cells`` (20 000) rows of the store equal ``make_cells(20 000)`` built in memory;
  those rows read back from the store are compared exactly with it, and both methods fitted on
  the lazy ``X[:20000]`` (dask, sparse blocks) and on the in-memory CSR matrix must give scores
  / gains equal to ``1e-10`` relative and the same support;
* **planted markers**: at full size, the 50 selected genes of each fit are the 50 planted ones.

Generator: per cell, ``d`` gene indices drawn uniformly with replacement and deduplicated
(``d`` chosen so that the expected density is ``--density`` exactly), values 1 + Poisson(1.5)
(inverse CDF on 8 random bits); a marker gene stored in a cell of its own group gets +4 (the
convention of ``bench_single_cell.py``). Storage choice: ``.h5ad`` is what single-cell users
hold (``sc.read_h5ad(..., backed="r")`` opens this file); it is written through anndata's own
``write_elem`` + ``sparse_dataset(...).append``, the supported incremental writer. zarr
(``--format zarr``) is the choice for a dask cluster whose workers read in parallel (h5py
serialises reads in one process).

Run (writes ~8 GB at the default size under ``--store``, default the temp directory; deleted
at the end unless ``--keep``)::

    python benchmarks/bench_single_cell_out_of_core.py [--quick] [--cells N] [--genes P]
        [--density D] [--format h5ad|zarr] [--block-rows R] [--store DIR] [--keep]

``--quick``: 50 000 cells. Progress on stderr; last stdout line ``BENCH_JSON {...}``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import BenchRun, LoadMonitor, bench_parser, emit_json, print_table

N_GROUPS = 5
MARKERS_PER_GROUP = 10
N_SELECT = N_GROUPS * MARKERS_PER_GROUP
MARKER_BOOST = 4.0
#: Cells generated (and appended to the store) at a time; the seed of block b depends on
#: (SEED, b) only, so a matrix's first rows do not depend on how many cells it has.
GEN_BLOCK = 10_000
SEED = 0
TARGET_PEAK_GB = 8.0
RTOL_CHECK = 1e-10
METHODS = ("FisherScore", "SparseCenterClassifier l2")


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- generator


def marker_genes(n_genes: int, seed: int = SEED) -> np.ndarray:
    """The planted genes, ``(N_GROUPS, MARKERS_PER_GROUP)``: row g is raised in group g."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(2**31,)))
    return rng.choice(n_genes, N_GROUPS * MARKERS_PER_GROUP, replace=False).reshape(N_GROUPS, -1)


def draws_per_cell(n_genes: int, density: float) -> int:
    """Uniform draws with replacement whose distinct count has expectation density x n_genes."""
    return max(1, round(np.log1p(-density) / np.log1p(-1.0 / n_genes)))


def _value_table() -> np.ndarray:
    from scipy.stats import poisson

    return (1.0 + poisson.ppf((np.arange(256) + 0.5) / 256, 1.5)).astype(np.float32)


_VALUES = None


def make_block(b: int, n_rows: int, n_genes: int, density: float, markers: np.ndarray,
               seed: int = SEED) -> tuple[np.ndarray, sp.csr_matrix]:
    """Labels and float32 CSR counts of generator block ``b`` (its first ``n_rows`` cells)."""
    global _VALUES
    if _VALUES is None:
        _VALUES = _value_table()
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(b,)))
    y = rng.integers(0, N_GROUPS, GEN_BLOCK)[:n_rows]
    d = draws_per_cell(n_genes, density)
    cols = rng.integers(0, n_genes, (GEN_BLOCK, d), dtype=np.int32)[:n_rows]
    cols.sort(axis=1)
    keep = np.ones(cols.shape, dtype=bool)
    keep[:, 1:] = cols[:, 1:] != cols[:, :-1]
    indices = cols[keep]
    data = _VALUES[rng.integers(0, 256, GEN_BLOCK * d, dtype=np.uint8)[: indices.size]]
    owner = np.full(n_genes, -1, dtype=np.int64)  # the group whose marker a gene is
    owner[markers.ravel()] = np.repeat(np.arange(N_GROUPS), markers.shape[1])
    row = np.repeat(np.arange(n_rows), keep.sum(axis=1))
    data[owner[indices] == y[row]] += MARKER_BOOST
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(keep.sum(axis=1), out=indptr[1:])
    return y, sp.csr_matrix((data, indices, indptr), shape=(n_rows, n_genes))


def make_cells(n_cells: int, n_genes: int, density: float, seed: int = SEED):
    """The first ``n_cells`` cells in memory (the same numbers as the store's first rows)."""
    markers = marker_genes(n_genes, seed)
    parts = [make_block(b, min(GEN_BLOCK, n_cells - b * GEN_BLOCK), n_genes, density, markers,
                        seed) for b in range(-(-n_cells // GEN_BLOCK))]
    return np.concatenate([p[0] for p in parts]), sp.vstack([p[1] for p in parts], format="csr")


# --------------------------------------------------------------------------- the store


def write_store(path: Path, fmt: str, n_cells: int, n_genes: int, density: float) -> dict:
    """Write the AnnData store block by block; labels in ``obs["group"]`` (categorical)."""
    import anndata as ad
    import pandas as pd

    markers = marker_genes(n_genes)
    n_blocks = -(-n_cells // GEN_BLOCK)
    t0 = time.perf_counter()
    ys = []
    if fmt == "h5ad":
        import h5py

        handle = h5py.File(path, "w")
        kwargs = {"dataset_kwargs": {"chunks": (1 << 18,)}}
    else:
        import zarr

        handle = zarr.open_group(path, mode="w", zarr_format=2)
        kwargs = {"dataset_kwargs": {"compressor": None}}
    nnz = 0
    try:
        for b in range(n_blocks):
            rows = min(GEN_BLOCK, n_cells - b * GEN_BLOCK)
            y, X = make_block(b, rows, n_genes, density, markers)
            ys.append(y)
            nnz += X.nnz
            if b == 0:
                ad.io.write_elem(handle, "X", X, **kwargs)
                stored = ad.io.sparse_dataset(handle["X"])
            else:
                stored.append(X)
            if b % max(1, n_blocks // 20) == 0 or b == n_blocks - 1:
                _log(f"  written {b * GEN_BLOCK + rows} / {n_cells} cells")
        y = np.concatenate(ys)
        obs = pd.DataFrame(
            {"group": pd.Categorical.from_codes(y, [f"g{g}" for g in range(N_GROUPS)])},
            index=pd.RangeIndex(n_cells).astype(str),
        )
        var = pd.DataFrame(index=[f"gene{j}" for j in range(n_genes)])
        var["planted_group"] = -1
        var.iloc[markers.ravel(), 0] = np.repeat(np.arange(N_GROUPS), MARKERS_PER_GROUP)
        ad.io.write_elem(handle, "obs", obs)
        ad.io.write_elem(handle, "var", var)
        for key in ("obsm", "varm", "obsp", "varp", "layers", "uns"):
            ad.io.write_elem(handle, key, {})
        handle.attrs["encoding-type"] = "anndata"
        handle.attrs["encoding-version"] = "0.1.0"
    finally:
        if fmt == "h5ad":
            handle.close()
    seconds = time.perf_counter() - t0
    size = (path.stat().st_size if path.is_file()
            else sum(f.stat().st_size for f in path.rglob("*") if f.is_file()))
    return {"write_s": seconds, "nnz": nnz, "density": nnz / (n_cells * n_genes),
            "store_gb": size / 1e9, "markers": markers}


def open_lazy(path: Path, fmt: str, block_rows: int):
    """``(X, y, handle)``: X the lazy CSR dask array of ``read_elem_lazy``, y the group codes."""
    import anndata as ad

    if fmt == "h5ad":
        import h5py

        handle = h5py.File(path, "r")
    else:
        import zarr

        handle = zarr.open_group(path, mode="r")
    obs = ad.io.read_elem(handle["obs"])
    n_genes = int(handle["X"].attrs["shape"][1])
    X = ad.experimental.read_elem_lazy(handle["X"], chunks=(block_rows, n_genes))
    return X, np.asarray(obs["group"].cat.codes, dtype=np.intp), handle


def make_estimator(method: str):
    from sparsefs.classification import SparseCenterClassifier
    from sparsefs.selection import FisherScore

    if method == "FisherScore":
        return FisherScore(n_features_to_select=N_SELECT)
    return SparseCenterClassifier(N_SELECT, norm="l2")


def fitted_scores(est) -> np.ndarray:
    return np.asarray(est.scores_ if hasattr(est, "scores_") else est.gains_, dtype=np.float64)


# --------------------------------------------------------------------------- the child fit


def _maxrss_gb() -> float:
    """This process's peak RSS in GB: VmHWM of /proc/self/status, else ``ru_maxrss``.

    VmHWM belongs to the memory map of the running program. ``ru_maxrss`` of a process started
    by fork + exec also counts the parent's RSS at the fork (Linux carries the maximum across
    exec), which would charge the parent's in-memory check matrix to the child.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024 / 1e9
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9  # KiB on Linux


def child_main(spec: dict) -> int:
    """One fit in this (child) process; prints a JSON line, saves the scores to ``spec["out"]``."""
    import dask
    import dask.array as da

    X, y, handle = open_lazy(Path(spec["store"]), spec["format"], spec["block_rows"])
    if spec.get("rows"):
        X, y = X[: spec["rows"]], y[: spec["rows"]]
    # compile / load the sparse moment pass outside the timing, on a small CSR block
    warm = sp.random(200, X.shape[1], density=0.01, format="csr", dtype=np.float32,
                     random_state=0)
    make_estimator(spec["method"]).fit(da.from_array(warm, chunks=(100, -1), asarray=False),
                                       np.arange(200) % N_GROUPS)
    rss_before = _maxrss_gb()
    with dask.config.set(scheduler="threads"):
        t0 = time.perf_counter()
        est = make_estimator(spec["method"]).fit(X, y)
        wall = time.perf_counter() - t0
    if spec["format"] == "h5ad":
        handle.close()
    np.save(spec["out"], np.stack([fitted_scores(est), est.support_.astype(np.float64)]))
    print("CHILD_JSON " + json.dumps({"fit_s": wall, "peak_rss_gb": _maxrss_gb(),
                                      "rss_before_fit_gb": rss_before,
                                      "numblocks": list(X.numblocks)}), flush=True)
    return 0


def run_child(spec: dict, tmp: Path) -> tuple[dict, np.ndarray, np.ndarray]:
    """Fit in a child process; ``(record, scores, support)``."""
    out = tmp / f"scores_{os.getpid()}_{time.monotonic_ns()}.npy"
    spec = {**spec, "out": str(out)}
    mon = LoadMonitor().start()
    proc = subprocess.run([sys.executable, __file__, "--_child", json.dumps(spec)],
                          capture_output=True, text=True)
    load = mon.stop()
    if proc.returncode != 0:
        raise RuntimeError(f"child fit {spec['method']} failed:\n{proc.stderr[-4000:]}")
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("CHILD_JSON ")][-1]
    rec = json.loads(line.split(" ", 1)[1])
    rec["fl"] = load["fl"]
    arr = np.load(out)
    out.unlink()
    return rec, arr[0], arr[1].astype(bool)


# --------------------------------------------------------------------------- main


def _rel_diff(a: np.ndarray, b: np.ndarray) -> float:
    finite = np.isfinite(a) & np.isfinite(b)
    if not np.array_equal(np.isfinite(a), np.isfinite(b)):
        return float("inf")
    scale = np.maximum(np.abs(a[finite]), 1e-300)
    return float(np.max(np.abs(a[finite] - b[finite]) / scale)) if finite.any() else 0.0


def main() -> int:
    parser = bench_parser("sparsefs at a million cells, out of core through dask")
    parser.add_argument("--cells", type=int, default=None,
                        help="cells (default 1 000 000; 50 000 with --quick)")
    parser.add_argument("--genes", type=int, default=20_000)
    parser.add_argument("--density", type=float, default=0.05)
    parser.add_argument("--format", choices=["h5ad", "zarr"], default="h5ad")
    parser.add_argument("--block-rows", type=int, default=10_000,
                        help="cells per dask block when reading (default 10 000)")
    parser.add_argument("--check-cells", type=int, default=20_000,
                        help="cells of the in-memory equality check (default 20 000)")
    parser.add_argument("--store", type=Path, default=None,
                        help="directory for the store (default: the temp directory)")
    parser.add_argument("--keep", action="store_true", help="keep the store")
    parser.add_argument("--_child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args._child is not None:
        return child_main(json.loads(args._child))
    n_cells = args.cells or (50_000 if args.quick else 1_000_000)
    n_genes, density = args.genes, args.density
    n_check = min(args.check_cells, n_cells)
    run = BenchRun("single_cell_out_of_core", args)
    tmp = Path(tempfile.mkdtemp(prefix="sparsefs_ooc_", dir=args.store))
    path = tmp / f"cells.{args.format}"
    usage = shutil.disk_usage(tmp)
    est_gb = n_cells * n_genes * density * 8 / 1e9
    _log(f"store {path}: ~{est_gb:.1f} GB to write, {usage.free / 1e9:.0f} GB free")
    if usage.free < 1.2 * est_gb * 1e9:
        raise SystemExit(f"not enough free disk under {tmp} for ~{est_gb:.1f} GB")
    try:
        _log(f"writing {n_cells} x {n_genes} CSR, density {density}, {args.format} ...")
        info = write_store(path, args.format, n_cells, n_genes, density)
        markers = info.pop("markers")
        planted = set(markers.ravel().tolist())
        _log(f"  {info['nnz']:.3e} stored values, {info['store_gb']:.2f} GB, "
             f"{info['write_s']:.0f} s")
        base = {"store": str(path), "format": args.format, "block_rows": args.block_rows}

        # equality with the in-memory path on the first n_check cells
        _log(f"equality check on the first {n_check} cells ...")
        y_mem, X_mem = make_cells(n_check, n_genes, density)
        Xd, y_st, handle = open_lazy(path, args.format, args.block_rows)
        head = Xd[:n_check].compute()
        if args.format == "h5ad":
            handle.close()
        same_rows = (np.array_equal(y_st[:n_check], y_mem) and head.nnz == X_mem.nnz
                     and np.array_equal(head.indptr, X_mem.indptr)
                     and np.array_equal(head.indices, X_mem.indices)
                     and np.array_equal(head.data, X_mem.data))
        del head
        checks = {"stored_rows_equal_generator": bool(same_rows)}
        for method in METHODS:
            ref = make_estimator(method).fit(X_mem, y_mem)
            _, s_dask, sup_dask = run_child({**base, "method": method, "rows": n_check}, tmp)
            rel = _rel_diff(fitted_scores(ref), s_dask)
            checks[method] = {"max_rel_diff": rel, "rel_ok": rel <= RTOL_CHECK,
                              "same_support": bool(np.array_equal(ref.support_, sup_dask))}
            _log(f"  {method}: max relative difference {rel:.2e}, same support "
                 f"{checks[method]['same_support']}")
        del X_mem

        # the full-size fits, each in its own process
        rows = []
        for method in METHODS:
            _log(f"fitting {method} on {n_cells} cells out of core ...")
            rec, _, support = run_child({**base, "method": method, "rows": None}, tmp)
            found = set(np.flatnonzero(support).tolist())
            rows.append({
                "method": method,
                "cells": n_cells,
                "fit_s": rec["fit_s"],
                "peak_rss_gb": rec["peak_rss_gb"],
                "rss_before_fit_gb": rec["rss_before_fit_gb"],
                "under_target": rec["peak_rss_gb"] < TARGET_PEAK_GB,
                "planted_found": len(found & planted),
                "all_planted": found == planted,
                "blocks": rec["numblocks"][0],
                "fl": rec["fl"],
            })
            _log(f"  {rec['fit_s']:.1f} s, peak RSS {rec['peak_rss_gb']:.2f} GB, "
                 f"{len(found & planted)}/{N_SELECT} planted")
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    x_gb = info["nnz"] * 8 / 1e9
    print(f"\n{n_cells} cells x {n_genes} genes, CSR float32, density {info['density']:.4f} "
          f"({info['nnz']:.3e} stored values, {x_gb:.2f} GB of values + indices), "
          f"{N_GROUPS} groups, {args.format} store {info['store_gb']:.2f} GB written in "
          f"{info['write_s']:.0f} s; dask blocks of {args.block_rows} cells, threaded "
          f"scheduler; peak RSS = the fitting child process's lifetime maximum.")
    print_table(rows, [("method", "fit"), ("fit_s", "fit s"), ("peak_rss_gb", "peak RSS GB"),
                       ("rss_before_fit_gb", "RSS before fit GB"),
                       ("under_target", f"< {TARGET_PEAK_GB:.0f} GB"),
                       ("planted_found", f"planted in top {N_SELECT}"), ("fl", "fl")])
    print(f"\nequality on the first {n_check} cells (dask on the store vs in-memory CSR): "
          f"stored rows == generator: {checks['stored_rows_equal_generator']}")
    for method in METHODS:
        c = checks[method]
        print(f"  {method}: max relative difference {c['max_rel_diff']:.2e} "
              f"(<= {RTOL_CHECK:g}: {c['rel_ok']}), same support: {c['same_support']}")
    emit_json(run.finish({
        "cells": n_cells, "genes": n_genes, "density_target": density, "format": args.format,
        "block_rows": args.block_rows, "store": info, "x_gb": x_gb,
        "target_peak_gb": TARGET_PEAK_GB, "results": rows, "check_cells": n_check,
        "checks": checks, "planted": sorted(planted),
    }), out=args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
