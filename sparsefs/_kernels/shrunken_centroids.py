"""Nearest shrunken centroids (PAM, Tibshirani et al. 2002) with the threshold that keeps k
features, computed without densifying sparse X."""

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

__all__ = ["ShrunkenCentroids", "shrunken_centroids_at_k"]


class ShrunkenCentroids(NamedTuple):
    """What :func:`shrunken_centroids_at_k` returns."""

    scores: np.ndarray  #: ``max_c |d_ic|``, shape (n_features,)
    threshold: float  #: ``delta``
    deviations: np.ndarray  #: the thresholded ``d_ic``, shape (n_classes, n_features)
    centroids: np.ndarray  #: the shrunken centroids, shape (n_classes, n_features)


def shrunken_centroids_at_k(X, y_idx: np.ndarray, n_classes: int, k: int) -> ShrunkenCentroids:
    r"""The statistics of scikit-learn's ``NearestCentroid(shrink_threshold=delta)`` with the
    ``delta`` that keeps ``k`` features.

    Class means :math:`\bar x^c`, overall mean :math:`\bar x`, pooled within-class standard
    deviation :math:`s_i` (``n - C`` degrees of freedom), :math:`s_0 = \mathrm{median}(s)`,
    :math:`m_c = \sqrt{1/n_c - 1/n}` and the standardised deviations
    :math:`d_{ic} = (\bar x^c_i - \bar x_i) / (m_c (s_i + s_0))`. A feature is kept by the
    soft threshold ``delta`` when :math:`\max_c |d_{ic}| > \delta`; ``delta`` is the
    ``(k+1)``-th largest :math:`\max_c |d_{ic}|` (0 when ``k = p``: no shrinkage). The shrunken
    centroids are :math:`\bar x_i + m_c (s_i + s_0)\, \mathrm{sign}(d_{ic}) (|d_{ic}| -
    \delta)_+` (Tibshirani, Hastie, Narasimhan & Chu, PNAS 2002). Sparse X is not densified:
    the moments come from sparse products.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
    y_idx : ndarray of shape (n_samples,)
        Class indices ``0..n_classes-1``, every class present.
    n_classes : int
    k : int
        The number of features to keep, ``1 <= k <= n_features``.

    Returns
    -------
    ShrunkenCentroids

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 1.0, 5.0], [0.2, 1.1, 5.0], [1.0, 0.9, 5.0], [1.2, 1.0, 5.0]])
    >>> res = shrunken_centroids_at_k(X, np.array([0, 0, 1, 1]), 2, 1)
    >>> (res.scores > res.threshold).tolist()
    [True, False, False]
    """
    n, p = X.shape
    C = n_classes
    counts = np.bincount(y_idx, minlength=C).astype(np.float64)
    Y = sp.csr_array((np.ones(n), (y_idx, np.arange(n))), shape=(C, n))
    if sp.issparse(X):
        Xc = sp.csr_array(X, dtype=np.float64)
        sums = np.asarray((Y @ Xc).toarray())
        sq = np.asarray(Xc.multiply(Xc).sum(axis=0), dtype=np.float64).ravel()
        means = sums / counts[:, None]
        wss = np.maximum(sq - counts @ (means * means), 0.0)
    else:
        Xd = np.asarray(X, dtype=np.float64)
        means = (Y @ Xd) / counts[:, None]
        wss = ((Xd - means[y_idx]) ** 2).sum(axis=0)
    overall = counts @ means / n
    std = np.sqrt(wss / (n - C)) if n > C else np.zeros(p)
    s = std + np.median(std)
    m = np.sqrt(1.0 / counts - 1.0 / n)
    ms = m[:, None] * s
    with np.errstate(divide="ignore", invalid="ignore"):
        dev = np.where(ms > 0, (means - overall) / ms, 0.0)
    score = np.abs(dev).max(axis=0)
    delta = float(np.sort(score)[::-1][k]) if k < p else 0.0
    shrunk = np.sign(dev) * np.clip(np.abs(dev) - delta, 0.0, None)
    return ShrunkenCentroids(score, delta, shrunk, overall + ms * shrunk)
