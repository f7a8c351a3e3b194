r"""MCFS, multi-cluster feature selection (Cai, Zhang & He, KDD 2010).

1. **Spectral embedding.** On a kNN affinity W with :math:`D = \mathrm{diag}(W\mathbf 1)` and
   :math:`L = D - W`, take the :math:`K` generalised eigenvectors of
   :math:`L y = \lambda D y` with the smallest eigenvalues, leaving out the trivial
   :math:`y = \mathbf 1` (:math:`\lambda = 0`): :math:`Y = [y_1, \dots, y_K]`, the flat
   embedding of the :math:`K` clusters (:func:`mcfs_embedding`).
2. **Sparse regression.** For each :math:`y_k`, an :math:`\ell_1`-constrained least squares
   :math:`\min_{a_k} \|y_k - X a_k\|^2` s.t. :math:`|a_k|_1 \le \gamma`, solved by LARS (the
   lasso path) and stopped at a given cardinality (done by the estimator).
3. **Score.** :math:`\mathrm{MCFS}(j) = \max_k |a_{k,j}|` (:func:`mcfs_scores`): the absolute
   value matters — a feature with only large negative coefficients explains the cluster
   structure as well as one with positive coefficients (scikit-feature ranks by the signed
   maximum, ``jundongl/scikit-feature#23``).
"""

import numpy as np

from sparsefs._kernels.graphs import degrees, spectral_embedding

__all__ = ["lasso_at_cardinality_sparse", "mcfs_embedding", "mcfs_scores"]


def mcfs_embedding(W, n_clusters: int) -> tuple[np.ndarray, np.ndarray]:
    r"""The K non-trivial generalised eigenvectors of :math:`L y = \lambda D y`.

    Parameters
    ----------
    W : scipy.sparse array or ndarray of shape (n_samples, n_samples)
    n_clusters : int
        :math:`K`, in ``[1, n_samples - 1]``.

    Returns
    -------
    eigenvalues : ndarray of shape (K,)
        :math:`\lambda_k`, increasing.
    Y : ndarray of shape (n_samples, K)
        :math:`y_k = D^{-1/2} z_k` (so :math:`Y^\top D Y = I`); zero on isolated samples.
    """
    mu, Z = spectral_embedding(W, n_clusters)
    d = degrees(W)
    inv = np.divide(1.0, np.sqrt(d), out=np.zeros_like(d), where=d > 0)
    return 1.0 - mu, Z * inv[:, None]


def mcfs_scores(coefs: np.ndarray) -> np.ndarray:
    r""":math:`\max_k |a_{k,j}|` for a coefficient matrix of shape (n_features, K)."""
    coefs = np.asarray(coefs, dtype=np.float64)
    if coefs.ndim != 2:
        raise ValueError(f"coefs must be 2-D (n_features, K); got shape {coefs.shape}.")
    if coefs.shape[1] == 0:
        return np.zeros(coefs.shape[0])
    return np.max(np.abs(coefs), axis=1)


def lasso_at_cardinality_sparse(S, mean: np.ndarray, y: np.ndarray, cardinality: int) -> np.ndarray:
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
    """
    import warnings

    import scipy.linalg as la
    import scipy.sparse as sp
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.utils import arrayfuncs

    S = sp.csc_array(S)
    n, p = S.shape
    yc = y - y.mean()
    coef = np.zeros(p)
    if not np.any(yc) or p == 0:
        return coef

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
            return coef
        if n_active >= p:
            return coef
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
        if n_iter > 0 and prev_alpha < alpha:
            warnings.warn(
                "Early stopping the lars path, as the residues are small and the current "
                "value of alpha is no longer well controlled.", ConvergenceWarning,
                stacklevel=2,
            )
            return coef
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
        g1 = arrayfuncs.min_pos((C - Cov) / (AA - corr_eq_dir + tiny32))
        g2 = arrayfuncs.min_pos((C + Cov) / (AA + corr_eq_dir + tiny32))
        gamma_ = min(g1, g2, C / AA)
        drop = False
        z = -coef[active] / (least_squares + tiny32)
        z_pos = arrayfuncs.min_pos(z)
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
            return coef
        if drop:
            for ii in idx:
                arrayfuncs.cholesky_delete(L[:n_active, :n_active], ii)
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
