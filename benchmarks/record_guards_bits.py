"""Bit-for-bit record of fitted estimators (issue #34 item 1: the shared scale guard, threads
and the l2,1 solvers in one place).

Fits every registered method with each of its registry test settings, plus extra settings of
the estimators whose scale guard, n_jobs rule or solver moved (the sparse k-means family with
and without ``standardize``, SMBA's penalties, the l2,1 selectors, the center and KOS
classifiers), on dense, sparse and dask data at ordinary and extreme scales (``X * 1e300``,
``X * 1e-300``, ``X * 1e60``: the guards' branches), and records every public fitted
attribute (arrays as dtype + shape + bytes). ``compare`` refits and demands exact equality::

    git stash   # or: a worktree at the commit before the change
    NUMBA_CACHE_DIR=/tmp/nc_g python benchmarks/record_guards_bits.py record /tmp/g_before.pkl
    git stash pop
    NUMBA_CACHE_DIR=/tmp/nc_g python benchmarks/record_guards_bits.py compare /tmp/g_before.pkl

(one numba cache for both: machine code loaded from the cache can round differently from code
compiled in-process, see ``record_kmeans_bits.py``). ``--only a,b`` restricts to
registry stems.
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp
from _bits import fitted, main


def _data():
    """(name, X, y) problems: two dense classification sets, sparse twins, extreme scales."""
    out = []
    for seed, (n, p, k) in enumerate(((60, 12, 3), (45, 30, 2))):
        rng = np.random.default_rng(seed)
        y = np.arange(n) % k
        X = rng.normal(size=(n, p))
        X[:, :3] += 2.0 * y[:, None]
        X[:, 5] = X[:, 4]  # a duplicated column
        out.append((f"d{seed}", X, y))
        for s in (1e300, 1e-300, 1e60):
            out.append((f"d{seed}*{s:g}", X * s, y))
        Xs = X * (rng.random(X.shape) < 0.5)
        Xs[:, :3] += np.abs(y[:, None]) * (rng.random((n, 3)) < 0.5)
        out.append((f"s{seed}", sp.csr_array(Xs), y))
        out.append((f"s{seed}*1e300", sp.csr_array(Xs * 1e300), y))
    try:  # dask twins of the dense sets ("k..."), for the methods that take them
        import dask.array as da
    except ImportError:
        return out
    for name, X, y in list(out):
        if name.startswith("d") and not sp.issparse(X):
            out.append(("k" + name[1:], da.from_array(X, chunks=(20, X.shape[1])), y))
    return out


EXTRA = {
    "l0_kmeans": ({"n_clusters": 3, "n_init": 2, "standardize": False, "n_features_to_select": 3,
                   "random_state": 1},
                  {"n_clusters": 2, "n_init": 2, "standardize": True, "n_features_to_select": 4,
                   "random_state": 2},
                  {"n_clusters": 3, "n_init": 3, "n_features_to_select": 5, "algorithm": "lloyd",
                   "random_state": 0}),
    "l1_kmeans": ({"n_clusters": 3, "wbound": 2.0, "n_init": 2, "standardize": False,
                   "random_state": 1},
                  {"n_clusters": 2, "wbound": 1.5, "n_init": 2, "standardize": True,
                   "random_state": 3}),
    "smba": ({"alpha": 2.0}, {"penalty": "l1", "alpha": 1.0, "affine": True},
             {"alpha": 1.0, "center": False}),
    "ls_l21": ({"alpha": 0.1}, {"alpha": 1.0, "n_features_to_select": 3}),
    "ll_l21": ({"alpha": 0.05}, {"alpha": 0.5, "n_features_to_select": 3}),
    "sparse_centers": ({"n_jobs": None}, {"n_jobs": 2}, {"norm": "l1", "n_jobs": -1}),
    "sparse_kos": ({"sigma2": 1.0, "ridge": 0.1, "alpha": 0.001, "n_alphas": 3, "max_iter": 20,
                    "n_jobs": 2},),
}


#: methods whose solver moved (#34 item 3) also fit a larger problem (the working sets grow)
LARGE = ("ls_l21", "ll_l21", "rfs", "lasso", "elastic_net", "smba")


def _large():
    from sparsefs.datasets import make_planted_classification

    d = make_planted_classification(n_samples=120, n_features=400, n_informative=12,
                                    n_classes=3, random_state=5)
    X = np.asarray(d.X, dtype=np.float64)
    Xs = X * (np.random.default_rng(5).random(X.shape) < 0.3)
    return [("L", X, d.y), ("Ls", sp.csr_array(Xs), d.y)]


def run(only=None):
    from sparsefs.utils._registry import build_params, list_methods

    rec, times = {}, {}
    data = _data()
    large = _large()
    for m in list_methods():
        if only and m.stem not in only:
            continue
        t0 = time.perf_counter()
        settings = tuple(m.test_params) + EXTRA.get(m.stem, ())
        for i, params in enumerate(settings):
            for name, X, y in data + (large if m.stem in LARGE else []):
                if sp.issparse(X) and "sparse" not in m.inputs:
                    continue
                if name.startswith("k") and "dask" not in m.inputs:
                    continue
                key = (m.stem, i, name)
                try:
                    est = m.estimator(**build_params(params))
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        est.fit(X, y)
                    rec[key] = fitted(est)
                except Exception as exc:  # the error is a result too
                    rec[key] = ("error", type(exc).__name__, str(exc)[:200])
        times[m.stem] = time.perf_counter() - t0
        print(f"{m.stem:26s} {times[m.stem]:7.1f} s", flush=True)
    return rec


def _main(argv) -> int:
    only = None
    if "--only" in argv:
        i = argv.index("--only")
        only = set(argv[i + 1].split(","))
        argv = argv[:i] + argv[i + 2:]
    return main(argv, lambda: run(only), __doc__)


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
