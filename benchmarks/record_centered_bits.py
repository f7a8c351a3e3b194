"""Bit-for-bit record of everything the implicitly centred sparse operator feeds (issue #34).

Records, on sparse input (CSR and CSC, several seeds, sizes and densities, standardised or
not), every fitted attribute ending in ``_`` of the estimators whose sparse path runs on the
centred operator - LsL21, LlL21, RFS, LassoSelector, ElasticNetSelector, UDFS, UFCM - and the
kernel functions that take the operator (``l21.prepare_design``, ``lipschitz_bound``,
``irls_l21_step``; ``ufcm.prepare_data``, ``correlation_screen``, ``screened_columns``,
``isometric_coordinates``, ``data_scale``, ``w_matrix``, ``w_step``, ``kmeans``,
``cluster_means``, ``kmeans_cost``, ``objective``; ``udfs.udfs`` on both of its paths).
Then compares a later checkout with exact equality (the bytes of every float array).

Record on the commit before the change, compare after::

    git stash   # (or a checkout of the commit before the change)
    python benchmarks/record_centered_bits.py record /tmp/centered_bits.pkl
    git stash pop
    python benchmarks/record_centered_bits.py compare /tmp/centered_bits.pkl   # exit 1 on any
                                                                                # difference
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
import scipy.sparse as sp
from _bits import fitted, main, snapshot


def _data(n, d, seed, density, shift=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(loc=shift, size=(n, d)) * (rng.random((n, d)) < density)
    lab = rng.integers(3, size=n)
    X[:, : min(5, d)] += 2.0 * lab[:, None] * (rng.random((n, min(5, d))) < 0.7)
    X[:, d // 2] = 0.0                      # an all-zero column
    X[:, d // 3] = 1.5                      # a constant column without implicit zeros
    X[:, d - 1] = X[:, 0]                   # an exact duplicate
    return X, lab


def record_linear(rec):
    from sparsefs.selection import RFS, ElasticNetSelector, LassoSelector, LlL21, LsL21

    for seed in range(3):
        for n, d, dens in ((30, 80, 0.2), (90, 25, 0.4), (50, 50, 0.1)):
            X, y = _data(n, d, seed, dens)
            for fmt in ("csr", "csc"):
                Xs = sp.csr_array(X) if fmt == "csr" else sp.csc_array(X)
                for std in (True, False):
                    for cls, kw in ((LsL21, {}), (LlL21, {}), (RFS, {}),
                                    (LassoSelector, {}), (ElasticNetSelector, {}),
                                    (LsL21, {"n_features_to_select": 6}),
                                    (RFS, {"n_features_to_select": 5})):
                        est = cls(standardize=std, **kw)
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            est.fit(Xs, y)
                        rec[(cls.__name__, str(kw), seed, n, d, fmt, std)] = fitted(est)


def record_l21_kernels(rec):
    from sparsefs._kernels import group_lasso as gl
    from sparsefs._kernels import l21

    for seed in range(3):
        for n, d in ((20, 60), (70, 15)):
            X, _ = _data(n, d, 10 + seed, 0.3)
            rng = np.random.default_rng(seed)
            for std in (True, False):
                for center in (True, False):
                    prep = l21.prepare_design(sp.csr_array(X), center=center, standardize=std)
                    Z = prep.X
                    key = ("l21", seed, n, d, std, center)
                    rec[(*key, "prep")] = snapshot([prep.offset, prep.scale, prep.constant])
                    W = rng.normal(size=(d, 3))
                    R = rng.normal(size=(n, 3))
                    rec[(*key, "mv")] = snapshot([Z @ W, Z.T @ R, Z @ W[:, 0], Z.T @ R[:, 0]])
                    for c in (True, False):
                        rec[(*key, "lip", c)] = snapshot(gl.lipschitz_bound(Z, 0.5, c))
                    b = rng.random(d)
                    a = rng.random(n) + 0.5
                    rec[(*key, "irls")] = snapshot(gl.irls_l21_step(Z, R, b, a, 0.3))
                    cols = np.array([1, 4, 7])
                    rec[(*key, "sub")] = snapshot(Z[:, cols] @ W[cols])
                    saved = gl._SMALL_GRAM
                    try:  # the matrix-free Lanczos route of lipschitz_bound
                        gl._SMALL_GRAM = 5
                        rec[(*key, "lip_lanczos")] = snapshot(gl.lipschitz_bound(Z, 0.5, True))
                    finally:
                        gl._SMALL_GRAM = saved


def record_ufcm(rec):
    from sparsefs._kernels import ufcm as uk

    for seed in range(3):
        for n, d in ((25, 120), (60, 20), (30, 600)):
            X, _lab = _data(n, d, 20 + seed, 0.3)
            for std in (True, False):
                for scale in (1.0, 1e-150):
                    Xc, e, varying = uk.prepare_data(sp.csr_array(X * scale), standardize=std)
                    key = ("ufcm_k", seed, n, d, std, scale)
                    rec[(*key, "prep")] = snapshot([e, varying, Xc @ np.eye(d)[:, :4]])
                    S = Xc[:, varying]
                    dv = S.shape[1]
                    rng = np.random.default_rng(seed)
                    rec[(*key, "screen")] = snapshot(uk.correlation_screen(S))
                    rec[(*key, "screened")] = snapshot(uk.screened_columns(S, 3))
                    rec[(*key, "iso")] = snapshot(uk.isometric_coordinates(S))
                    rec[(*key, "scale")] = snapshot(uk.data_scale(S))
                    labels = np.arange(n) % 3
                    beta_d = rng.random(dv) * 0.1 * uk.data_scale(S)
                    if dv <= 200:
                        rec[(*key, "wm")] = snapshot(uk.w_matrix(S, labels, 0.7, beta_d))
                    v0 = rng.normal(size=dv)
                    for solver in ("dense", "arpack"):
                        W, vals = uk.w_step(S, labels, 0.7, beta_d, 2, solver=solver, v0=v0)
                        rec[(*key, "ws", solver)] = snapshot([W, vals])
                    rec[(*key, "obj")] = snapshot(uk.objective(S, W, labels, 0.7, 0.1, 0.5, 1e-9))
                    rec[(*key, "km")] = snapshot(uk.kmeans(S, 3, np.random.default_rng(seed),
                                                        n_init=2))
                    rec[(*key, "means")] = snapshot(uk.cluster_means(S, labels, 3))
                    rec[(*key, "cost")] = snapshot(uk.kmeans_cost(S, labels))


def record_ufcm_estimator(rec):
    from sparsefs.selection import UFCM

    for seed in range(2):
        for n, d in ((40, 60), (30, 700), (80, 30)):
            X, _ = _data(n, d, 30 + seed, 0.3)
            for fmt in ("csr", "csc"):
                Xs = sp.csr_array(X) if fmt == "csr" else sp.csc_array(X)
                for std in (True, False):
                    est = UFCM(3, n_restarts=2, max_iter=15, standardize=std,
                               random_state=seed)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        est.fit(Xs)
                    rec[("UFCM", seed, n, d, fmt, std)] = fitted(est)


def record_udfs(rec):
    from sparsefs._kernels import udfs as uk
    from sparsefs.selection import UDFS

    for seed in range(3):
        for n, d in ((30, 50), (25, 1100), (60, 20)):
            X, _ = _data(n, d, 40 + seed, 0.3)
            for fmt in ("csr", "csc"):
                Xs = sp.csr_array(X) if fmt == "csr" else sp.csc_array(X)
                for std in (True, False):
                    est = UDFS(n_clusters=3, standardize=std, max_iter=40)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        est.fit(Xs)
                    rec[("UDFS", seed, n, d, fmt, std)] = fitted(est)
            # the kernel on plain sparse input, and with a small dense_max (low-rank path)
            nb = np.array([[(i + j + 1) % n for j in range(4)] for i in range(n)])
            for dm in (1000, 10):
                rec[("udfs_k", seed, n, d, dm)] = snapshot(uk.udfs(
                    sp.csr_array(X), nb, 3, gamma=0.5, ridge=1.0, max_iter=30, dense_max=dm))


def record_all() -> dict:
    rec: dict = {}
    for part in (record_linear, record_l21_kernels, record_ufcm, record_ufcm_estimator,
                 record_udfs):
        part(rec)
    return rec


if __name__ == "__main__":
    sys.exit(main(sys.argv, record_all, __doc__))
