r"""UFCM's k-means: the U-step's candidate labellings and the k-means term of the objective.

Part of the UFCM kernel (:mod:`sparsefs._kernels.ufcm`, Wang et al., 2015): the closed-form
centroids of eq. 10 (:func:`cluster_means`), the k-means cost :math:`\|Y - UG\|_F^2` with
those centroids (:func:`kmeans_cost`, eqs. 4 and 11) and a seeded numpy Lloyd's k-means
(:func:`kmeans`) sized for the ``n x d'`` projection :math:`Y = XW`, on dense data or the
implicitly centred sparse data (:class:`~sparsefs._kernels.centered.CenteredSparse`).
"""

from __future__ import annotations

import numpy as np

from sparsefs._kernels.centered import CenteredSparse

__all__ = ["cluster_means", "kmeans", "kmeans_cost"]


def cluster_means(
    Y: np.ndarray, labels: np.ndarray, n_clusters: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    r"""Closed-form centroids: the cluster means of the projected data (eq. 10).

    :math:`G = W^\top X U (U^\top U)^{-1}` in the paper's orientation; here, with
    :math:`Y = XW` of shape ``(n, d')``, row ``k`` of the result is the mean of the rows of
    ``Y`` labelled ``k``.

    Parameters
    ----------
    Y : ndarray of shape (n_samples, n_dims)
    labels : ndarray of int, shape (n_samples,)
        Cluster index of each sample, ``0 <= label``.
    n_clusters : int, optional
        Number of centroid rows (default ``labels.max() + 1``).

    Returns
    -------
    means : ndarray of shape (n_clusters, n_dims)
        Rows of empty clusters are zero (an empty cluster is a column of zeros in U; it is
        dropped rather than inverted).
    counts : ndarray of shape (n_clusters,)
    """
    labels = np.asarray(labels)
    k = int(labels.max()) + 1 if n_clusters is None else int(n_clusters)
    counts = np.bincount(labels, minlength=k).astype(np.float64)
    if isinstance(Y, CenteredSparse):
        sums = Y.group_sums(labels, k)
    else:
        sums = np.zeros((k, Y.shape[1]))
        np.add.at(sums, labels, Y)
    means = np.divide(sums, counts[:, None], out=np.zeros_like(sums), where=counts[:, None] > 0)
    return means, counts


def kmeans_cost(Y: np.ndarray, labels: np.ndarray) -> float:
    r"""The k-means cost :math:`\|Y - U G\|_F^2` with the optimal centroids (eqs. 4, 11).

    Equals :math:`\operatorname{Tr}(W^\top X^\top L_U X W)` for :math:`Y = XW`.
    """
    means, _ = cluster_means(Y, labels)
    if isinstance(Y, CenteredSparse):  # summed row by row (label-permutation exact)
        labels = np.asarray(labels)
        cross = (Y @ means.T)[np.arange(Y.shape[0]), labels]
        gsq = (means * means).sum(axis=1)[labels]
        return float(np.maximum(Y.row_sq_norms() - 2.0 * cross + gsq, 0.0).sum())
    resid = Y - means[labels]
    return float(np.einsum("ij,ij->", resid, resid))


def _sq_distances(Y: np.ndarray, sq_norms: np.ndarray, centers: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances of the rows of ``Y`` to ``centers`` (clipped at 0)."""
    D = sq_norms[:, None] - 2.0 * (Y @ centers.T) + np.einsum("ij,ij->i", centers, centers)
    return np.maximum(D, 0.0, out=D)


def _kmeans_plus_plus(
    Y: np.ndarray, sq_norms: np.ndarray, n_clusters: int, rng: np.random.Generator
) -> np.ndarray:
    """Greedy k-means++ seeding (Arthur & Vassilvitskii, 2007): ``2 + log k`` trials a centre."""
    n = Y.shape[0]
    trials = 2 + int(np.log(n_clusters))
    centers = np.empty((n_clusters, Y.shape[1]))
    rows = Y.rows if isinstance(Y, CenteredSparse) else Y.__getitem__
    centers[0] = rows(rng.integers(n))
    closest = _sq_distances(Y, sq_norms, centers[:1])[:, 0]
    for k in range(1, n_clusters):
        total = closest.sum()
        if total > 0.0:
            cum = np.cumsum(closest)
            picks = np.searchsorted(cum, rng.random(trials) * cum[-1], side="right")
            picks = np.minimum(picks, n - 1)
        else:  # every point sits on a centre already
            picks = rng.integers(n, size=trials)
        cand = np.minimum(closest[None, :], _sq_distances(Y, sq_norms, rows(picks)).T)
        best = int(np.argmin(cand.sum(axis=1)))
        centers[k] = rows(picks[best])
        closest = cand[best]
    return centers


def kmeans(
    Y: np.ndarray,
    n_clusters: int,
    rng: np.random.Generator,
    *,
    init: np.ndarray | None = None,
    n_init: int = 1,
    max_iter: int = 300,
) -> np.ndarray:
    r"""Lloyd's k-means (eq. 9 alternated with eq. 10), best of ``n_init`` seeded starts.

    Each start is the greedy k-means++ seeding (or ``init``, the warm start of the U-step's
    refinement), then Lloyd's iterations - assign every row to its nearest centre, move every
    centre to its cluster's mean - until the labels stop changing (or ``max_iter``). An empty
    cluster is re-seeded at the point farthest from its centre, so every cluster keeps a point
    when the data have at least ``n_clusters`` distinct rows. Returns the labels of the start
    with the lowest cost :math:`\|Y - UG\|_F^2` (the first on ties).

    Pure numpy, :math:`O(n\,c\,d')` per iteration: the U-step runs it ``r + 1`` times per outer
    iteration on the ``n x d'`` projection, where a general-purpose k-means's fixed overhead
    (threads, validation) would dominate the fit.

    Parameters
    ----------
    Y : ndarray of shape (n_samples, n_dims)
    n_clusters : int
        At most ``n_samples``.
    rng : numpy.random.Generator
        Draws the seedings.
    init : ndarray of shape (n_clusters, n_dims), optional
        Initial centres (then ``n_init`` is 1).
    n_init : int, default=1
    max_iter : int, default=300

    Returns
    -------
    ndarray of int, shape (n_samples,)
    """
    if isinstance(Y, CenteredSparse):
        sq_norms = Y.row_sq_norms()
    else:
        Y = np.asarray(Y, dtype=np.float64)
        sq_norms = np.einsum("ij,ij->i", Y, Y)
    n = Y.shape[0]
    if not 1 <= n_clusters <= n:
        raise ValueError(f"n_clusters={n_clusters} must be between 1 and n_samples={n}.")
    best_labels, best_cost = None, np.inf
    for _ in range(1 if init is not None else max(1, n_init)):
        if init is not None:
            centers = np.array(init, dtype=np.float64, copy=True)
        else:
            centers = _kmeans_plus_plus(Y, sq_norms, n_clusters, rng)
        labels = np.full(n, -1, dtype=np.intp)
        for _ in range(max_iter):
            D = _sq_distances(Y, sq_norms, centers)
            new = np.argmin(D, axis=1)
            counts = np.bincount(new, minlength=n_clusters)
            for k in np.flatnonzero(counts == 0):  # re-seed empty clusters
                far = int(np.argmax(D[np.arange(n), new]))
                new[far] = k
                D[far] = 0.0
                counts = np.bincount(new, minlength=n_clusters)
            if np.array_equal(new, labels):
                break
            labels = new
            centers, _ = cluster_means(Y, labels, n_clusters)
        cost = kmeans_cost(Y, labels)
        if cost < best_cost:
            best_labels, best_cost = labels, cost
    return best_labels
