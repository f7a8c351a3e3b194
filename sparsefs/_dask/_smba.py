"""SMBA with the element-wise penalty (``penalty="l1"``) on Dask: one task per column block.

With the l1 penalty the columns of C decouple (:mod:`sparsefs._kernels.smba`): every column
block is an independent ADMM that needs only the Woodbury factors ``U`` and ``Q^{-1}U^T``
(``M x (n+1)`` each, computed once on the client and shared by all tasks as one graph key). The
blocks are exactly those of the in-memory solver (same width, each stopping on its own
criterion), solved by the same kernel function
(:func:`sparsefs._kernels.smba.admm_l1_columns`), so the result is **identical** to the
in-memory one; only the blocks run in parallel, on the threads or the workers of the cluster.

X itself (``n x M``, few samples) is gathered on the client: the memory of SMBA is in C and
the ADMM iterates (``M x M``), which stay one block per task.
"""

from __future__ import annotations

import dask
import numpy as np

from sparsefs._kernels import smba as _kernel

__all__ = ["gather_finite", "smba_l1"]


def _solve_block(U, QinvUt, mu2, start, stop, affine, tol, max_iter, keep_coef):
    return _kernel.admm_l1_columns(U, QinvUt, mu2, slice(start, stop), affine=affine, tol=tol,
                                   max_iter=max_iter, keep_coef=keep_coef)


def smba_l1(Xv: np.ndarray, alpha: float, *, affine: bool, lambda_scale: str = "dual",
            tol: float = 1e-8, max_iter: int = 3000, block_size: int | None = None,
            keep_coef: bool = False) -> _kernel.SMBAResult:
    """:func:`sparsefs._kernels.smba.smba` with ``q=1``, its column blocks as dask tasks.

    Parameters
    ----------
    Xv : ndarray of shape (n_samples, n_features)
        Preprocessed as for :func:`~sparsefs._kernels.smba.smba`.
    alpha : float > 0
    affine : bool
    lambda_scale : {"dual", "smba_code"}
    tol, max_iter : float, int
    block_size : int or None
        Column block width (None: :func:`~sparsefs._kernels.smba.auto_block_size`, as the
        in-memory solver).
    keep_coef : bool

    Returns
    -------
    SMBAResult
    """
    if alpha <= 0:
        raise ValueError(f"alpha must be > 0; got {alpha!r}.")
    Xv = np.ascontiguousarray(Xv, dtype=np.float64)
    M = Xv.shape[1]
    lmax = _kernel.lambda_max(Xv, 1, affine, lambda_scale)
    if lmax <= 0.0:  # X = 0: the in-memory solver's closed-form answer
        return _kernel.smba(Xv, alpha, q=1, affine=affine, lambda_scale=lambda_scale, tol=tol,
                            max_iter=max_iter, block_size=block_size, keep_coef=keep_coef)
    lam = lmax / alpha
    mu1, mu2 = 1.0 / lam, float(alpha)
    U, QinvUt = _kernel.woodbury_factors(Xv, mu1, mu2, affine)
    width = (_kernel.auto_block_size(M) if block_size is None
             else max(1, min(int(block_size), M)))
    U_d, Q_d = dask.delayed(U), dask.delayed(QinvUt)  # one key each, shared by every task
    solve = dask.delayed(_solve_block, pure=True)
    edges = [(s, min(s + width, M)) for s in range(0, M, width)]
    results = dask.compute(*[solve(U_d, Q_d, mu2, a, b, affine, tol, max_iter, keep_coef)
                             for a, b in edges])
    r, s = np.zeros(M), np.zeros(M)
    coef = np.empty((M, M)) if keep_coef else None
    sums, e2s, n_iter, converged = [], [], 0, True
    for (a, b), res in zip(edges, results, strict=True):  # the in-memory driver's combination
        r += res.row_abs
        np.maximum(s, res.row_dual, out=s)
        if keep_coef:
            coef[:, a:b] = res.coef
        sums.append(res.sum_abs_zc)
        e2s.append(res.err2 * (b - a))
        n_iter = max(n_iter, res.n_iter)
        converged &= res.converged
    err1 = _kernel._pad_last(sums, n_iter) / float(M * M)
    err2 = _kernel._pad_last(e2s, n_iter) / float(M)
    return _kernel.SMBAResult(r, s, coef, n_iter, bool(converged), err1, err2, lam, lmax, mu1,
                              mu2)


def gather_finite(X, name: str) -> np.ndarray:
    """``X.compute()`` as float64, rejecting NaN / inf as the in-memory validation does."""
    X = np.asarray(X.compute(), dtype=np.float64)
    if not np.isfinite(X).all():
        from sparsefs._dask._core import raise_nonfinite

        raise_nonfinite(name, bool(np.isnan(X).any()), bool(np.isinf(X).any()))
    return X
