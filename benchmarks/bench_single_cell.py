"""Single-cell scale: per-feature selectors on CSR cells x genes against scanpy and f_classif.

In the same run and on the same synthetic CSR matrix (cells x 20000 genes, ~5% density,
5 groups, Poisson-like counts; each of the first 50 genes raised in one group):

* ``FisherScore().fit`` and ``SparseCenterClassifier(norm="l2").fit`` (sparsefs);
* scikit-learn's ``f_classif`` (the same one-way ANOVA F, ranks identical to Fisher);
* scanpy's ``sc.tl.rank_genes_groups(method="t-test")`` (the scverse default for marker
  genes; needs scanpy, else reported absent).

For each: the median wall time of ``--repeat`` calls (min also kept), the extra peak memory of
one call (tracemalloc, above the input; numba's own buffers are not traced, but sparsefs's
kernels allocate their O(K p) accumulators from Python), and that memory over the size of X.
Also checked: Fisher's ranking equals f_classif's (near-ties allowed).

Targets (issue #22), at 100 000 x 20 000 float32: FisherScore and SparseCenterClassifier(l2)
each >= 3x faster than scanpy's t-test and not slower than f_classif, extra peak memory
<= 0.25x the size of X. The million-cell out-of-core run is
``benchmarks/bench_single_cell_out_of_core.py``.

Run: ``python benchmarks/bench_single_cell.py [--quick] [--sizes 10000,100000]
[--dtype float32] [--repeat N] [--out FILE]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import (
    BenchRun,
    bench_parser,
    call_peak_memory,
    emit_json,
    print_table,
    repeat_for,
    time_call,
)

N_GENES = 20_000
N_GROUPS = 5
DENSITY = 0.05


def make_cells(n_cells: int, dtype, seed: int = 0):
    """CSR counts with ~DENSITY stored entries per row, built row-block by row-block."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, N_GROUPS, n_cells)
    nnz_row = int(DENSITY * N_GENES)
    indptr = np.arange(n_cells + 1, dtype=np.int64) * nnz_row
    indices = np.empty(n_cells * nnz_row, dtype=np.int32)
    data = np.empty(n_cells * nnz_row, dtype=dtype)
    block = 5000
    for start in range(0, n_cells, block):
        stop = min(n_cells, start + block)
        m = stop - start
        cols = np.sort(rng.random((m, N_GENES)).argpartition(nnz_row, axis=1)[:, :nnz_row], axis=1)
        vals = rng.poisson(1.5, (m, nnz_row)).astype(dtype) + 1
        marker = cols < 50
        vals[marker & ((cols % N_GROUPS) == y[start:stop, None])] += 4
        indices[start * nnz_row : stop * nnz_row] = cols.ravel()
        data[start * nnz_row : stop * nnz_row] = vals.ravel()
    X = sp.csr_matrix((data, indices, indptr), shape=(n_cells, N_GENES))
    return X, y


def main() -> int:
    parser = bench_parser("sparsefs per-feature selectors at single-cell scale")
    parser.add_argument("--sizes", default=None, help="comma-separated cell counts")
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    args = parser.parse_args()
    repeat = repeat_for(args)
    sizes = (
        [int(s) for s in args.sizes.split(",")]
        if args.sizes
        else ([5_000] if args.quick else [10_000, 100_000])
    )
    dtype = np.dtype(args.dtype)
    from sklearn.feature_selection import f_classif

    from sparsefs.classification import SparseCenterClassifier
    from sparsefs.selection import FisherScore

    try:
        import anndata
        import scanpy as sc
        sc.settings.verbosity = 0  # the counts are not log-transformed: no warning per call
    except ImportError:
        sc = None
    run = BenchRun("single_cell", args)
    rows = []
    for n in sizes:
        print(f"  generating {n} x {N_GENES} ...", file=sys.stderr, flush=True)
        X, y = make_cells(n, dtype)
        x_mib = (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 1024**2
        FisherScore().fit(X[:100], y[:100])  # compilation outside the timing
        SparseCenterClassifier().fit(X[:100], y[:100])
        calls = {
            "FisherScore": lambda X=X, y=y: FisherScore().fit(X, y),
            "SparseCenterClassifier l2": lambda X=X, y=y: SparseCenterClassifier().fit(X, y),
            "f_classif": lambda X=X, y=y: f_classif(X, y),
        }
        if sc is not None:
            adata = anndata.AnnData(X)
            adata.obs["group"] = np.asarray(y).astype(str)
            adata.obs["group"] = adata.obs["group"].astype("category")

            def ttest(adata=adata):
                sc.tl.rank_genes_groups(adata, "group", method="t-test", use_raw=False)

            calls["scanpy t-test"] = ttest
        res = {}
        for name, fn in calls.items():
            print(f"  {n}: timing {name} ...", file=sys.stderr, flush=True)
            t = time_call(fn, repeat=repeat, warmup=args.warmup, name=name)
            mem = call_peak_memory(fn)
            res[name] = t
            rows.append(
                {
                    "cells": n,
                    "call": name,
                    "median_s": t.median,
                    "min_s": t.min,
                    "extra_mib": mem["traced_mib"],
                    "extra_over_X": mem["traced_mib"] / x_mib,
                    "fl": t.fl,
                }
            )
        fs = res["FisherScore"].result
        F, _ = res["f_classif"].result
        same = np.array_equal(np.argsort(-fs.scores_, kind="stable")[:50],
                              np.argsort(-np.nan_to_num(F), kind="stable")[:50])
        for r in rows:
            if r["cells"] == n:
                base = res[r["call"]].median
                r["vs_f_classif"] = res["f_classif"].median / base
                if "scanpy t-test" in res:
                    r["vs_scanpy"] = res["scanpy t-test"].median / base
        print(f"  {n}: top-50 of FisherScore == top-50 of f_classif: {same}", file=sys.stderr)
    print(
        f"\nCSR {N_GENES} genes, {DENSITY:.0%} density, {N_GROUPS} groups, {dtype}; median of "
        f"{repeat}; ratios = peer time / this call's time (> 1: this call faster)."
    )
    print_table(
        rows,
        [
            ("cells", "cells"),
            ("call", "call"),
            ("median_s", "median s"),
            ("vs_f_classif", "f_classif/this"),
            ("vs_scanpy", "scanpy/this"),
            ("extra_mib", "extra MiB"),
            ("extra_over_X", "extra/X"),
            ("fl", "fl"),
        ],
    )
    emit_json(run.finish({"dtype": str(dtype), "results": rows}), out=args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
