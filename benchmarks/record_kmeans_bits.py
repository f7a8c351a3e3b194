"""Bit-for-bit record of every k-means result (issue #34 item 2: one k-means core).

Records labels, centres, WCSS, stage counts and flags of the k-means kernels (Hartigan-Wong,
Lloyd, k-means++; dense and CSR :class:`~sparsefs._kernels.kmeans.ImplicitRows`), of the
cluster means (the kernels', UFCM's and the dask path's), of UFCM's k-means, and of the fitted
estimators that use them (L0KMeans, SparseKMeans, PenalizedGaussianMixture, UFCM; dense,
sparse and dask input), over many seeds, sizes and k, including exact ties (integer data,
duplicated rows) and emptied clusters. Then compares a later checkout with exact equality
(the bytes of every float array).

The CSR results depend on the state of numba's on-disk cache (found in #34: machine code
loaded from the cache rounds some centre norms differently from code compiled in the same
process, last-bit differences in the WCSS), so record and compare both with a cold cache and
with the warm one it leaves::

    git stash   # (or a checkout of the commit before the change)
    rm -rf /tmp/nc_a && NUMBA_CACHE_DIR=/tmp/nc_a python benchmarks/record_kmeans_bits.py \
        record /tmp/bits_cold.pkl
    NUMBA_CACHE_DIR=/tmp/nc_a python benchmarks/record_kmeans_bits.py record /tmp/bits_warm.pkl
    git stash pop
    rm -rf /tmp/nc_b && NUMBA_CACHE_DIR=/tmp/nc_b python benchmarks/record_kmeans_bits.py \
        compare /tmp/bits_cold.pkl          # exit 1 on any difference
    NUMBA_CACHE_DIR=/tmp/nc_b python benchmarks/record_kmeans_bits.py compare /tmp/bits_warm.pkl
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
import scipy.sparse as sp
from _bits import main, snapshot


def _problems():
    """(name, X) dense problems: blobs, integer data with ties, duplicated rows, wide."""
    out = []
    for seed in range(4):
        rng = np.random.default_rng(seed)
        for n, p, K0 in ((12, 2, 3), (40, 5, 3), (150, 8, 4), (400, 3, 6), (90, 60, 3)):
            lab = rng.integers(K0, size=n)
            X = rng.normal(size=(n, p)) + 3.0 * rng.normal(size=(K0, p))[lab]
            out.append((f"blobs{seed}_{n}x{p}", X))
        out.append((f"ints{seed}", rng.integers(0, 3, size=(60, 2)).astype(float)))
        base = rng.normal(size=(5, 4))
        out.append((f"dups{seed}", base[rng.integers(5, size=30)]))
        out.append((f"tiny{seed}", rng.normal(size=(6, 2))))
    return out


def _sparse_of(X, seed):
    """An ImplicitRows Z = b + E with E sparse, and its dense twin."""
    from sparsefs._kernels.kmeans import ImplicitRows

    rng = np.random.default_rng(100 + seed)
    E = X * (rng.random(X.shape) < 0.4)
    b = rng.normal(size=X.shape[1])
    return ImplicitRows(sp.csr_array(E), b), E + b


def record_kernels(rec):
    from sparsefs._kernels import kmeans as km
    from sparsefs._kernels import sparse_kmeans as skm

    for name, X in _problems():
        n = X.shape[0]
        for si, (kind, Xs) in enumerate((("dense", X), ("implicit", None))):
            if kind == "implicit":
                Xs, _ = _sparse_of(X, len(name) + si)
            for K in (1, 2, 3, 5, 8):
                if n < K:
                    continue
                for alg in ("hartigan", "lloyd"):
                    for seed in (0, 1, 7):
                        r = km.kmeans(Xs, K, n_init=3, seed=seed, algorithm=alg, return_all=True)
                        rec[(name, kind, K, alg, seed)] = snapshot(r)
                    r = km.kmeans(Xs, K, n_init=2, seed=5, init="random", algorithm=alg,
                                  return_all=True)
                    rec[(name, kind, K, alg, "random")] = snapshot(r)
                    dense = X if kind == "dense" else Xs.toarray()
                    C0 = dense[np.arange(K) * (n // K)] + 0.05
                    r = km.kmeans(Xs, K, n_init=2, seed=2, init=C0, algorithm=alg,
                                  return_all=True)
                    rec[(name, kind, K, alg, "given")] = snapshot(r)
                    # all starts at one point: empties to fill
                    C1 = np.repeat(dense[:1], K, axis=0) + np.arange(K)[:, None] * 1e-9
                    r = km.kmeans(Xs, K, n_init=1, init=C1, algorithm=alg)
                    rec[(name, kind, K, alg, "collapsed")] = snapshot(r)
                labels = np.arange(n) % K
                rec[(name, kind, K, "means")] = snapshot(skm.cluster_means(Xs, labels, K))
                rec[(name, kind, K, "stats")] = snapshot(skm.cluster_stats(Xs, labels, K))
                w = np.abs(np.random.default_rng(K).normal(size=X.shape[1]))
                w[::3] = 0.0
                if w.sum() > 0:
                    Xw = km.weighted_columns(Xs, w)
                    rec[(name, kind, K, "weighted")] = snapshot(
                        km.kmeans(Xw, K, n_init=2, seed=K, return_all=True))
            if kind == "dense":
                for K in (2, 3, 5):
                    if n < K:
                        continue
                    rng = np.random.default_rng(K)
                    rec[(name, "pp", K)] = snapshot(km.kmeans_plusplus(X, K, rng))
                    C0 = X[rng.choice(n, size=K, replace=False)]
                    rec[(name, "hw", K)] = snapshot(km.hartigan_wong(X, C0))
                    rec[(name, "hw_lf", K)] = snapshot(km.hartigan_wong(X, C0, lloyd_first=True))
                    rec[(name, "lloyd", K)] = snapshot(km.lloyd(X, C0))
                    labels = rng.integers(K, size=n)
                    rec[(name, "wcss", K)] = snapshot(km.wcss(X, labels, K))
                    rec[(name, "gains", K)] = snapshot(km.transfer_gains(X, labels, K))
                    rec[(name, "means_f", K)] = snapshot(skm.cluster_means(np.asfortranarray(X),
                                                                       labels, K))


def record_ufcm(rec):
    from sparsefs._kernels import ufcm as uk

    for name, X in _problems():
        n = X.shape[0]
        Xc = X - X.mean(axis=0)
        Cs = uk.CenteredSparse(sp.csr_array(X * (np.abs(X) > 0.5)), (X * (np.abs(X) > 0.5))
                               .mean(axis=0))
        for K in (2, 3, 5):
            if n < K:
                continue
            for seed in (0, 3):
                for kind, Y in (("dense", Xc), ("centered", Cs)):
                    rng = np.random.default_rng(seed)
                    rec[("ufcm", name, kind, K, seed)] = snapshot(
                        uk.kmeans(Y, K, rng, n_init=3))
                    labels = np.arange(n) % K
                    rec[("ufcm_means", name, kind, K)] = snapshot(uk.cluster_means(Y, labels, K))
                    rec[("ufcm_cost", name, kind, K)] = snapshot(uk.kmeans_cost(Y, labels))
            rec[("ufcm_init", name, K)] = snapshot(uk.kmeans(Xc, K, np.random.default_rng(1),
                                                         init=Xc[:K] + 0.01))


def record_estimators(rec):
    from sparsefs.clustering import L0KMeans, PenalizedGaussianMixture, SparseKMeans
    from sparsefs.selection import UFCM

    for seed in range(3):
        rng = np.random.default_rng(seed)
        n, p = 60, 30
        lab = rng.integers(3, size=n)
        X = rng.normal(size=(n, p))
        X[:, :4] += 3.0 * rng.normal(size=(3, 4))[lab]
        Xs = sp.csr_array(X * (rng.random((n, p)) < 0.5))
        for kind, Xi in (("dense", X), ("sparse", Xs)):
            for est in (
                L0KMeans(3, n_permutations=2, n_init=3, random_state=seed),
                L0KMeans(3, 5, n_init=3, random_state=seed, algorithm="lloyd"),
                SparseKMeans(3, n_permutations=2, n_init=3, wbound_grid=(1.2, 2.0, 3.0),
                             random_state=seed),
                SparseKMeans(3, 2.0, n_init=3, random_state=seed),
                UFCM(n_clusters=3, n_restarts=2, max_iter=8, random_state=seed),
            ):
                est.fit(Xi)
                key = ("est", type(est).__name__, repr(est.get_params()), kind, seed)
                rec[key] = snapshot({k: v for k, v in vars(est).items()
                                 if k.endswith("_") and isinstance(v, (np.ndarray, float, int))})
        g = PenalizedGaussianMixture(3, n_alphas=3, n_init=2, max_iter=20, random_state=seed)
        g.fit(X)
        rec[("est", "pgmm", seed)] = snapshot({k: v for k, v in vars(g).items() if k.endswith("_")
                                           and isinstance(v, (np.ndarray, float, int))})


def record_dask(rec):
    try:
        import dask.array as da
    except ImportError:
        return
    from sparsefs._dask import _kmeans as dk
    from sparsefs.clustering import L0KMeans

    for seed in range(2):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(90, 12))
        X[:, :3] += 3.0 * rng.normal(size=(3, 3))[rng.integers(3, size=90)]
        Xd = da.from_array(X, chunks=(25, 12))
        labels = rng.integers(3, size=90)
        rec[("dask_means", seed)] = snapshot(dk.cluster_means(Xd, labels, 3))
        est = L0KMeans(3, 4, n_init=3, random_state=seed).fit(Xd)
        rec[("dask_est", seed)] = snapshot({k: v for k, v in vars(est).items() if k.endswith("_")
                                        and isinstance(v, (np.ndarray, float, int))})


def record():
    rec = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for part in (record_kernels, record_ufcm, record_estimators, record_dask):
            part(rec)
    return rec


if __name__ == "__main__":
    sys.exit(main(sys.argv, record, __doc__))
