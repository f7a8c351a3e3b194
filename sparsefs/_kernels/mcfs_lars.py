"""Lasso-LARS at a fixed cardinality on an implicitly centred sparse X (MCFS's regressions).

It repeats scikit-learn's :func:`~sklearn.linear_model.lars_path` (``method="lasso"``) step for
step, with the two helpers of ``sklearn.utils.arrayfuncs`` it needs written here on the same
BLAS routines (``drotg`` / ``drot`` of the BLAS scipy links, so the Cholesky downdates are the
same to the bit), so that the kernel imports no scikit-learn.
"""

import ctypes
from functools import cache
from typing import NamedTuple

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp

__all__ = ["LarsResult", "lasso_at_cardinality_sparse"]


class LarsResult(NamedTuple):
    """What :func:`lasso_at_cardinality_sparse` returns."""

    coef: np.ndarray
    stopped_early: bool


def _min_pos(x: np.ndarray) -> float:
    """The smallest positive entry of ``x``, or the largest float when none is positive
    (``sklearn.utils.arrayfuncs.min_pos``)."""
    largest = np.finfo(x.dtype).max
    pos = x[(x > 0) & (x < largest)]
    return float(pos.min()) if pos.size else float(largest)


@cache
def _drotg():
    """BLAS ``drotg(a, b, c, s)`` of scipy's BLAS (the one scikit-learn's Cython calls), from
    ``scipy.linalg.cython_blas``'s C API: the f2py wrapper does not return ``r``."""
    import scipy.linalg.cython_blas as cython_blas

    capsule = cython_blas.__pyx_capi__["drotg"]
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype = ctypes.c_char_p
    api.PyCapsule_GetName.argtypes = [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    pointer = api.PyCapsule_GetPointer(capsule, api.PyCapsule_GetName(capsule))
    double_p = ctypes.POINTER(ctypes.c_double)
    return ctypes.CFUNCTYPE(None, double_p, double_p, double_p, double_p)(pointer)


def _cholesky_delete(L: np.ndarray, go_out: int) -> None:
    """Remove row and column ``go_out`` from the lower Cholesky factor ``L`` in place, by
    Givens rotations (``sklearn.utils.arrayfuncs.cholesky_delete``, same BLAS calls)."""
    n = L.shape[0]
    for i in range(go_out, n - 1):
        L[i, : i + 2] = L[i + 1, : i + 2]
    drotg = _drotg()
    for i in range(go_out, n - 1):
        r, z, c, s = (ctypes.c_double(L[i, i]), ctypes.c_double(L[i, i + 1]),
                      ctypes.c_double(), ctypes.c_double())
        drotg(r, z, c, s)
        r, c, s = r.value, c.value, s.value
        if r < 0:  # diagonals cannot be negative
            r, c, s = -r, -c, -s
        L[i, i] = r
        L[i, i + 1] = 0.0
        if n - i - 2 > 0:
            x, y = la.blas.drot(L[i + 1 : n - 1, i], L[i + 1 : n - 1, i + 1], c, s)
            L[i + 1 : n - 1, i] = x
            L[i + 1 : n - 1, i + 1] = y


def lasso_at_cardinality_sparse(S, mean: np.ndarray, y: np.ndarray,
                                cardinality: int) -> LarsResult:
    r"""Lasso-path (LARS) coefficients of the implicit design :math:`S - \mathbf 1 m^\top`.

    The same algorithm, step for step, as :func:`sklearn.linear_model.lars_path`
    (``method="lasso"``, no Gram, ``alpha_min=0``) on the dense centred matrix, stopped at the
    first knot with ``cardinality`` non-zeros (or the path's last point), but the design is
    never formed: correlations come from sparse products
    :math:`(S - \mathbf 1m^\top)^\top v = S^\top v - m\,(\mathbf 1^\top v)` and only the
    active columns (at most ``cardinality <= n_samples - 1``) are densified.

    Parameters
    ----------
    S : scipy.sparse array of shape (n_samples, n_features)
        CSC preferred.
    mean : ndarray of shape (n_features,)
        The column means subtracted (implicitly) from S.
    y : ndarray of shape (n_samples,)
        Centred here (an intercept).
    cardinality : int

    Returns
    -------
    LarsResult
        ``coef`` of shape (n_features,); ``stopped_early`` where scikit-learn would stop with
        its ``ConvergenceWarning`` ("Early stopping the lars path"): alpha no longer decreases
        as the residues are small (the caller warns).
    """
    S = sp.csc_array(S)
    n, p = S.shape
    yc = y - y.mean()
    coef = np.zeros(p)
    if not np.any(yc) or p == 0:
        return LarsResult(coef, False)

    def corr(v):  # (S - 1 m^T)^T v
        return S.T @ v - mean * v.sum()

    def column(j):
        lo, hi = S.indptr[j], S.indptr[j + 1]
        col = np.zeros(n)
        col[S.indices[lo:hi]] = S.data[lo:hi]
        return col - mean[j]

    Cov = corr(yc)
    max_features = min(n, p) + 1  # the active set never exceeds n - 1 (path ends) or p
    L = np.empty((max_features, max_features))
    XA = np.empty((n, max_features), order="F")  # the active columns, in ``indices`` order
    (solve_cholesky,) = la.get_lapack_funcs(("potrs",), (L,))
    (nrm2,) = la.get_blas_funcs(("nrm2",), (XA,))
    tiny32 = np.finfo(np.float32).tiny
    cov_precision = np.finfo(Cov.dtype).precision
    equality_tolerance = np.finfo(np.float32).eps
    eps = np.finfo(float).eps
    n_iter, n_active = 0, 0
    active, indices = [], np.arange(p)
    sign_active = np.empty(max_features, dtype=np.int8)
    drop = False
    prev_alpha = 0.0
    while True:
        if Cov.size:
            C_idx = int(np.argmax(np.abs(Cov)))
            C_ = Cov[C_idx]
            C = np.fabs(C_)
        else:
            C = 0.0
        alpha = C / n
        if alpha <= equality_tolerance:  # the path ends (alpha_min = 0)
            return LarsResult(coef, False)
        if n_active >= p:
            return LarsResult(coef, False)
        if not drop:
            sign_active[n_active] = np.sign(C_)
            m, j = n_active, C_idx + n_active
            Cov[C_idx], Cov[0] = Cov[0], Cov[C_idx]
            indices[j], indices[m] = indices[m], indices[j]
            Cov_not_shortened = Cov
            Cov = Cov[1:]
            col = column(indices[m])
            c = nrm2(col) ** 2
            L[n_active, :n_active] = col @ XA[:, :n_active]
            if n_active:
                la.solve_triangular(
                    L[:n_active, :n_active], L[n_active, :n_active], trans=0, lower=1,
                    overwrite_b=True, check_finite=False,
                )
            v = np.dot(L[n_active, :n_active], L[n_active, :n_active])
            diag = max(np.sqrt(np.abs(c - v)), eps)
            L[n_active, n_active] = diag
            if diag < 1e-7:  # degenerate regressor: left out (as scikit-learn does)
                Cov = Cov_not_shortened
                Cov[0] = 0
                Cov[C_idx], Cov[0] = Cov[0], Cov[C_idx]  # (indices stay swapped, as there)
                continue
            XA[:, n_active] = col
            active.append(indices[n_active])
            n_active += 1
        if n_iter > 0 and prev_alpha < alpha:  # scikit-learn warns and stops here
            return LarsResult(coef, True)
        least_squares, _ = solve_cholesky(
            L[:n_active, :n_active], sign_active[:n_active], lower=True
        )
        if least_squares.size == 1 and least_squares == 0:
            least_squares[...] = 1
            AA = 1.0
        else:
            AA = 1.0 / np.sqrt(np.sum(least_squares * sign_active[:n_active]))
            if not np.isfinite(AA):
                i = 0
                L_ = L[:n_active, :n_active].copy()
                while not np.isfinite(AA):
                    L_.flat[:: n_active + 1] += (2**i) * eps
                    least_squares, _ = solve_cholesky(L_, sign_active[:n_active], lower=True)
                    tmp = max(np.sum(least_squares * sign_active[:n_active]), eps)
                    AA = 1.0 / np.sqrt(tmp)
                    i += 1
            least_squares *= AA
        eq_dir = XA[:, :n_active] @ least_squares
        corr_eq_dir = corr(eq_dir)[indices[n_active:]]
        np.around(corr_eq_dir, decimals=cov_precision, out=corr_eq_dir)
        g1 = _min_pos((C - Cov) / (AA - corr_eq_dir + tiny32))
        g2 = _min_pos((C + Cov) / (AA + corr_eq_dir + tiny32))
        gamma_ = min(g1, g2, C / AA)
        drop = False
        z = -coef[active] / (least_squares + tiny32)
        z_pos = _min_pos(z)
        if z_pos < gamma_:
            idx = np.where(z == z_pos)[0][::-1]
            sign_active[idx] = -sign_active[idx]
            gamma_ = z_pos
            drop = True
        n_iter += 1
        prev_coef = coef
        prev_alpha = alpha
        coef = np.zeros(p)
        coef[active] = prev_coef[active] + gamma_ * least_squares
        Cov -= gamma_ * corr_eq_dir
        if np.count_nonzero(coef) >= cardinality:
            return LarsResult(coef, False)
        if drop:
            for ii in idx:
                _cholesky_delete(L[:n_active, :n_active], ii)
            n_active -= 1
            for ii in idx:
                active.pop(ii)
            for ii in idx:
                for i in range(ii, n_active):
                    indices[i], indices[i + 1] = indices[i + 1], indices[i]
                    XA[:, [i, i + 1]] = XA[:, [i + 1, i]]
            residual = yc - XA[:, :n_active] @ coef[active]
            temp = XA[:, n_active] @ residual
            Cov = np.r_[temp, Cov]
            sign_active = np.delete(sign_active, idx)
            sign_active = np.append(sign_active, 0)
