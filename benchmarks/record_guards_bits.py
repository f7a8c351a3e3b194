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
compiled in-process, see ``record_kmeans_bits.py`` on s4-kmcore). ``--only a,b`` restricts to
registry stems.
"""

from __future__ import annotations

import pickle
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp


def _val(x):
    if isinstance(x, np.ndarray):
        if x.dtype == object:
            return ("obj", [_val(v) for v in x.ravel()])
        return ("nd", str(x.dtype), x.shape, np.ascontiguousarray(x).tobytes())
    if sp.issparse(x):
        x = sp.csr_array(x)
        return ("sp", _val(x.data), _val(x.indices), _val(x.indptr), x.shape)
    if isinstance(x, (list, tuple)):
        return [_val(v) for v in x]
    if isinstance(x, dict):
        return {str(k): _val(v) for k, v in sorted(x.items(), key=lambda kv: str(kv[0]))}
    if isinstance(x, (float, np.floating)):
        return ("f", np.float64(x).tobytes())
    if isinstance(x, (bool, np.bool_, int, np.integer, str)) or x is None:
        return x.item() if isinstance(x, np.generic) else x
    return ("repr", type(x).__name__)


def _snapshot(est):
    out = {}
    for k, v in sorted(vars(est).items()):
        if k.endswith("_") and not k.startswith("_"):
            out[k] = _val(v)
    return out


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
                    rec[key] = _snapshot(est)
                except Exception as exc:  # the error is a result too
                    rec[key] = ("error", type(exc).__name__, str(exc)[:200])
        times[m.stem] = time.perf_counter() - t0
        print(f"{m.stem:26s} {times[m.stem]:7.1f} s", flush=True)
    return rec


def _diff(a, b, path=""):
    if type(a) is not type(b):
        return [path]
    if isinstance(a, dict):
        out = [f"{path}/{k} (missing)" for k in set(a) ^ set(b)]
        for k in sorted(set(a) & set(b), key=str):
            out += _diff(a[k], b[k], f"{path}/{k}")
        return out
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return [path]
        return [d for i, (u, v) in enumerate(zip(a, b)) for d in _diff(u, v, f"{path}[{i}]")]
    return [] if a == b else [path]


def main(argv):
    mode, path = argv[1], argv[2]
    only = None
    if "--only" in argv:
        only = set(argv[argv.index("--only") + 1].split(","))
    rec = run(only)
    if mode == "record":
        with open(path, "wb") as fh:
            pickle.dump(rec, fh)
        print(f"recorded {len(rec)} fits")
        return 0
    with open(path, "rb") as fh:
        old = pickle.load(fh)
    bad = 0
    for key in sorted(set(old) | set(rec), key=str):
        if only and key[0] not in only:
            continue
        if key not in old or key not in rec:
            print("missing", key)
            bad += 1
            continue
        d = _diff(old[key], rec[key])
        if d:
            bad += 1
            print("DIFF", key, d[:5])
    print(f"compared {len(rec)} fits: {bad} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
