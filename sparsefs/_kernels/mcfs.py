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

__all__ = ["mcfs_embedding", "mcfs_scores"]


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
