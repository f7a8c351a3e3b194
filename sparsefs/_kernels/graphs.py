r"""Nearest-neighbour affinity graphs and graph Laplacians over the samples (rows) of X.

Shared by the graph-based unsupervised selectors (Laplacian score, SPEC, MCFS, UDFS, NDFS).

The k-nearest-neighbour (kNN) graph of He, Cai & Niyogi (2005): samples :math:`i` and
:math:`j` are joined when :math:`x_j` is among the :math:`k` nearest neighbours of
:math:`x_i` **or** :math:`x_i` among those of :math:`x_j` (a sample is never its own
neighbour), with weight

* ``"heat"``: :math:`W_{ij} = \exp(-\|x_i - x_j\|^2 / t)`;
* ``"binary"``: :math:`W_{ij} = 1`;
* ``"cosine"``: :math:`W_{ij} = \max(0, \cos(x_i, x_j))`, neighbours by the largest cosine.

The exact neighbour search is blocked over rows: each block of ``b`` rows computes a
``b x n`` distance block (``b * n`` stays near ``_BLOCK_ELEMENTS``), so no ``n x n`` matrix is
ever formed. Ties at the k-th distance go to the lower sample index. The squared distances of
the kept edges are then recomputed exactly as :math:`\sum_f (x_{if} - x_{jf})^2` (no
cancellation), and X is scaled by a power of two beforehand, so values near ``1e300`` or
``1e-300`` neither overflow nor underflow.

With :math:`D = \mathrm{diag}(W\mathbf 1)`: the Laplacian :math:`L = D - W`, the normalised
adjacency :math:`D^{-1/2} W D^{-1/2}` and the normalised Laplacian
:math:`\mathcal L = I - D^{-1/2} W D^{-1/2}` (von Luxburg, 2007). Isolated samples (degree 0)
get :math:`D^{-1/2}_{ii} = 0`.

References
----------
X. He, D. Cai and P. Niyogi, "Laplacian score for feature selection", NIPS 2005.
U. von Luxburg, "A tutorial on spectral clustering", Statistics and Computing 17, 2007.
"""

from dataclasses import dataclass

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, eigsh

from sparsefs._kernels.columns import power_of_two_scale

__all__ = [
    "DENSE_EIGEN_MAX",
    "AffinityGraph",
    "complete_affinity",
    "degrees",
    "graph_smoothness",
    "knn_affinity",
    "knn_search",
    "normalized_adjacency",
    "normalized_laplacian",
    "spectral_embedding",
    "weighted_centered_ss",
]

# Elements per temporary block (8 M float64 = 64 MB at most, usually far less).
_BLOCK_ELEMENTS = 1 << 22
#: Largest n for which eigenvectors of an n x n graph matrix come from a dense ``eigh``;
#: above it a Lanczos solver (``eigsh``) on the sparse matrix is used.
DENSE_EIGEN_MAX = 1000


def _row_sq_norms(X) -> np.ndarray:
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X)


def _as_dense_block(A) -> np.ndarray:
    return A.toarray() if sp.issparse(A) else np.asarray(A)


def _select_k_lowest(dist: np.ndarray, k: int) -> np.ndarray:
    """Column indices of the k smallest entries of every row, ties to the lower index.

    Returns an array of shape (rows, k), each row sorted by (distance, index).
    """
    rows = dist.shape[0]
    kth = np.partition(dist, k - 1, axis=1)[:, k - 1 : k]
    less = dist < kth
    need = k - less.sum(axis=1, keepdims=True)
    equal = dist == kth
    keep = less | (equal & (np.cumsum(equal, axis=1) <= need))
    cols = np.nonzero(keep)[1].reshape(rows, k)
    picked = np.take_along_axis(dist, cols, axis=1)
    # cols is ascending within each row, so a stable sort by distance keeps the lower index
    # first among equal distances.
    order = np.argsort(picked, axis=1, kind="stable")
    return np.take_along_axis(cols, order, axis=1)


def knn_search(
    X, n_neighbors: int, *, metric: str = "euclidean"
) -> tuple[np.ndarray, np.ndarray]:
    r"""Exact k nearest neighbours of every row of X among the other rows.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
        Already scaled to moderate magnitudes (see :func:`power_of_two_scale`).
    n_neighbors : int
        ``1 <= n_neighbors <= n_samples - 1``.
    metric : {"euclidean", "cosine"}
        ``"cosine"`` ranks neighbours by the largest cosine similarity (rows of zero norm have
        cosine 0 with every row).

    Returns
    -------
    indices : ndarray of shape (n_samples, n_neighbors), dtype intp
        Neighbours of each row, nearest first; ties go to the lower index.
    values : ndarray of shape (n_samples, n_neighbors)
        Squared euclidean distances (recomputed exactly) for ``"euclidean"``; cosine
        similarities for ``"cosine"``.
    """
    n = X.shape[0]
    k = int(n_neighbors)
    if not 1 <= k <= n - 1:
        raise ValueError(f"n_neighbors={k} must be in [1, n_samples - 1] = [1, {n - 1}].")
    if metric == "cosine":
        norms = np.sqrt(_row_sq_norms(X))
        inv = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
        Xn = sp.csr_array(sp.diags_array(inv) @ X) if sp.issparse(X) else X * inv[:, None]
        sq = None
    elif metric == "euclidean":
        Xn = X
        sq = _row_sq_norms(X)
    else:
        raise ValueError(f"metric={metric!r} must be 'euclidean' or 'cosine'.")
    XnT = Xn.T.tocsr() if sp.issparse(Xn) else Xn.T
    block = max(1, _BLOCK_ELEMENTS // max(n, 1))
    indices = np.empty((n, k), dtype=np.intp)
    for start in range(0, n, block):
        stop = min(n, start + block)
        gram = _as_dense_block(Xn[start:stop] @ XnT)
        if sq is None:
            dist = 1.0 - gram
        else:
            dist = sq[start:stop, None] + sq[None, :] - 2.0 * gram
            np.maximum(dist, 0.0, out=dist)
        dist[np.arange(stop - start), np.arange(start, stop)] = np.inf
        indices[start:stop] = _select_k_lowest(dist, k)
    rows = np.repeat(np.arange(n), k)
    cols = indices.ravel()
    if metric == "cosine":
        values = _pair_dots(Xn, rows, cols).reshape(n, k)
    else:
        values = _pair_sq_dists(X, rows, cols).reshape(n, k)
    return indices, values


def _pair_sq_dists(X, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    r"""Exact :math:`\|x_r - x_c\|^2` for the given pairs, blocked over pairs."""
    out = np.empty(rows.shape[0])
    block = max(1, _BLOCK_ELEMENTS // max(X.shape[1], 1))
    for start in range(0, rows.shape[0], block):
        stop = min(rows.shape[0], start + block)
        if sp.issparse(X):
            diff = X[rows[start:stop]] - X[cols[start:stop]]
            out[start:stop] = np.asarray(diff.multiply(diff).sum(axis=1)).ravel()
        else:
            diff = X[rows[start:stop]]
            diff -= X[cols[start:stop]]
            out[start:stop] = np.einsum("ij,ij->i", diff, diff)
    return out


def _pair_dots(X, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    out = np.empty(rows.shape[0])
    block = max(1, _BLOCK_ELEMENTS // max(X.shape[1], 1))
    for start in range(0, rows.shape[0], block):
        stop = min(rows.shape[0], start + block)
        a, b = X[rows[start:stop]], X[cols[start:stop]]
        if sp.issparse(a):
            out[start:stop] = np.asarray(a.multiply(b).sum(axis=1)).ravel()
        else:
            out[start:stop] = np.einsum("ij,ij->i", a, b)
    return out


@dataclass(frozen=True)
class AffinityGraph:
    """A symmetric affinity matrix over the samples and how it was built.

    Attributes
    ----------
    W : scipy.sparse.csr_array or ndarray of shape (n_samples, n_samples)
        Symmetric, non-negative, zero diagonal.
    bandwidth : float or None
        The heat-kernel :math:`t` used, in the units of the caller's X (None for other weights).
    """

    W: "sp.csr_array | np.ndarray"
    bandwidth: float | None


def _heat(sq_scaled: np.ndarray, mean_sq_scaled: float, bandwidth: float | None, scale: float):
    """Heat weights from squared distances of X / scale; the bandwidth is in caller units.

    ``bandwidth=None`` uses ``mean_sq_scaled`` (the mean squared distance of X / scale over
    the graph's pairs; 1 when it is 0, i.e. all weights 1). Returns the weights and t in the
    caller's units (``inf`` if that overflows).
    """
    if bandwidth is None:
        t_scaled = mean_sq_scaled if mean_sq_scaled > 0 else 1.0
    else:
        t_scaled = float(bandwidth) / (scale * scale)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        t = float(bandwidth) if bandwidth is not None else t_scaled * scale * scale
        ratio = sq_scaled / t_scaled if t_scaled > 0 else np.where(sq_scaled > 0, np.inf, 0.0)
        ratio = np.where(sq_scaled == 0.0, 0.0, ratio)
        weights = np.exp(-ratio)
    return weights, t


def knn_affinity(
    X, n_neighbors: int, *, weight: str = "heat", bandwidth: float | None = None
) -> AffinityGraph:
    r"""The symmetrised kNN affinity graph of the rows of X (sparse).

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
    n_neighbors : int
        :math:`k`, in ``[1, n_samples - 1]``.
    weight : {"heat", "binary", "cosine"}
        Edge weights (module docstring).
    bandwidth : float or None
        Heat-kernel :math:`t > 0`; None: the mean squared distance over the kNN pairs (1 if
        they are all 0). Unused by the other weights.

    Returns
    -------
    AffinityGraph
        ``W`` a CSR array, :math:`W = \max(W_{\mathrm{knn}}, W_{\mathrm{knn}}^\top)`.
    """
    n = X.shape[0]
    scale = power_of_two_scale(X)
    Xs = X / scale if scale != 1.0 else X
    if weight == "cosine":
        idx, sims = knn_search(Xs, n_neighbors, metric="cosine")
        vals, t = np.maximum(sims, 0.0).ravel(), None
    elif weight in ("heat", "binary"):
        idx, sq = knn_search(Xs, n_neighbors, metric="euclidean")
        if weight == "heat":
            vals, t = _heat(sq.ravel(), float(sq.mean()), bandwidth, scale)
        else:
            vals, t = np.ones(sq.size), None
    else:
        raise ValueError(f"weight={weight!r} must be 'heat', 'binary' or 'cosine'.")
    rows = np.repeat(np.arange(n), idx.shape[1])
    directed = sp.csr_array((vals, (rows, idx.ravel())), shape=(n, n))
    W = directed.maximum(directed.T).tocsr()
    W.setdiag(0.0)
    W.eliminate_zeros()
    W.sort_indices()
    return AffinityGraph(W=W, bandwidth=t)


def complete_affinity(X, *, bandwidth: float | None = None) -> AffinityGraph:
    r"""The complete heat-kernel graph :math:`W_{ij} = \exp(-\|x_i - x_j\|^2/t)`, dense.

    Every pair of distinct samples is joined (zero diagonal). This is an ``n x n`` dense
    matrix: callers only use it below a documented size. ``bandwidth=None``: :math:`t` is the
    mean squared distance over all pairs of distinct samples.
    """
    n = X.shape[0]
    scale = power_of_two_scale(X)
    Xs = X / scale if scale != 1.0 else X
    sq = _row_sq_norms(Xs)
    gram = _as_dense_block(Xs @ Xs.T)
    dist = sq[:, None] + sq[None, :] - 2.0 * gram
    np.maximum(dist, 0.0, out=dist)
    np.fill_diagonal(dist, 0.0)
    mean_sq = float(dist.sum() / (n * (n - 1))) if n > 1 else 0.0
    weights, t = _heat(dist, mean_sq, bandwidth, scale)
    np.fill_diagonal(weights, 0.0)
    return AffinityGraph(W=weights, bandwidth=t)


def degrees(W) -> np.ndarray:
    """Row sums :math:`d = W\\mathbf 1`."""
    return np.asarray(W.sum(axis=1)).ravel().astype(np.float64)


def _inv_sqrt(d: np.ndarray) -> np.ndarray:
    return np.divide(1.0, np.sqrt(d), out=np.zeros_like(d), where=d > 0)


def normalized_adjacency(W):
    r""":math:`D^{-1/2} W D^{-1/2}` (same format as W)."""
    s = _inv_sqrt(degrees(W))
    if sp.issparse(W):
        return sp.csr_array(sp.diags_array(s) @ W @ sp.diags_array(s))
    return W * s[:, None] * s[None, :]


def normalized_laplacian(W):
    r""":math:`\mathcal L = I - D^{-1/2} W D^{-1/2}` (same format as W)."""
    A = normalized_adjacency(W)
    n = W.shape[0]
    if sp.issparse(W):
        return sp.csr_array(sp.eye_array(n) - A)
    return np.eye(n) - A


def graph_smoothness(X, W) -> np.ndarray:
    r"""Per feature :math:`f^\top L f = \frac12 \sum_{ij} W_{ij} (f_i - f_j)^2`.

    For a sparse W the sum runs over the stored edges (exact, no cancellation, blocked);
    for a dense W it is :math:`\sum_i d_i \tilde f_i^2 - \tilde f^\top W \tilde f` on features
    centred by their mean (L annihilates constants).
    """
    if sp.issparse(W):
        upper = sp.triu(sp.coo_array(W), k=1)
        rows, cols, w = upper.row, upper.col, upper.data
        out = np.zeros(X.shape[1])
        block = max(1, _BLOCK_ELEMENTS // max(X.shape[1], 1))
        for start in range(0, w.shape[0], block):
            stop = min(w.shape[0], start + block)
            if sp.issparse(X):
                diff = X[rows[start:stop]] - X[cols[start:stop]]
                out += np.asarray(diff.multiply(diff).T @ w[start:stop]).ravel()
            else:
                diff = X[rows[start:stop]]
                diff -= X[cols[start:stop]]
                np.square(diff, out=diff)
                out += w[start:stop] @ diff
        return out
    d = degrees(W)
    if sp.issparse(X):  # dense column blocks of 2**20 entries (8 MB): never all of X dense
        X = sp.csc_array(X)
        width = max(1, (1 << 20) // max(X.shape[0], 1))
        out = np.empty(X.shape[1])
        for a in range(0, X.shape[1], width):
            b = min(X.shape[1], a + width)
            out[a:b] = _dense_smoothness(_as_dense_block(X[:, a:b]), W, d)
        return out
    return _dense_smoothness(_as_dense_block(X), W, d)


def _dense_smoothness(Xc: np.ndarray, W, d: np.ndarray) -> np.ndarray:
    """:func:`graph_smoothness` of a dense block of columns on a dense W."""
    Xc = Xc - Xc.mean(axis=0)
    out = d @ (Xc * Xc) - np.einsum("ij,ij->j", Xc, W @ Xc)
    return np.maximum(out, 0.0)


def weighted_centered_ss(X, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Per feature :math:`\tilde f^\top D \tilde f` and :math:`f^\top D f`.

    :math:`\tilde f = f - \frac{f^\top d}{\mathbf 1^\top d}\mathbf 1` is the degree-weighted
    centred feature. Dense X: an exact two-pass computation; sparse X: the moment identity
    :math:`f^\top D f - (f^\top d)^2 / \mathbf 1^\top d` (X is never densified).
    """
    total = float(d.sum())
    if sp.issparse(X):
        fd = np.asarray(X.T @ d).ravel()
        fdf = np.asarray(X.multiply(X).T @ d).ravel()
        centred = fdf - fd * fd / total if total > 0 else np.zeros_like(fdf)
        return np.maximum(centred, 0.0), fdf
    mu = (d @ X) / total if total > 0 else np.zeros(X.shape[1])
    fdf = d @ (X * X)
    Xc = X - mu
    return d @ (Xc * Xc), fdf


def spectral_embedding(
    W, n_components: int, *, dense_max: int = DENSE_EIGEN_MAX
) -> tuple[np.ndarray, np.ndarray]:
    r"""The leading non-trivial eigenvectors of the normalised adjacency.

    With :math:`A = D^{-1/2} W D^{-1/2}` (eigenvalues :math:`\mu \in [-1, 1]`, normalised
    Laplacian eigenvalues :math:`\lambda = 1 - \mu`) and the trivial eigenvector
    :math:`\xi_1 = D^{1/2}\mathbf 1 / \|D^{1/2}\mathbf 1\|` (:math:`\mu = 1`), returns the
    ``n_components`` eigenpairs of largest :math:`\mu` orthogonal to :math:`\xi_1`: the top
    eigenpairs of the deflated :math:`A - 2\xi_1\xi_1^\top` (which moves :math:`\xi_1` to
    :math:`\mu = -1`, the bottom of the spectrum). For a disconnected graph the other
    :math:`\mu = 1` eigenvectors (component indicators orthogonal to :math:`\xi_1`) are kept.

    Dense ``eigh`` for ``n <= dense_max``; above it ``eigsh`` on a linear operator
    (sparse W, never densified) with a fixed start vector, so the result is deterministic.

    Returns
    -------
    mu : ndarray of shape (n_components,)
        Eigenvalues of A, decreasing.
    Z : ndarray of shape (n_samples, n_components)
        Orthonormal eigenvectors of A (and of :math:`\mathcal L`); the generalised
        eigenvectors of :math:`L y = \lambda D y` are :math:`y = D^{-1/2} z`.
    """
    n = W.shape[0]
    m = int(n_components)
    if not 1 <= m <= n - 1:
        raise ValueError(f"n_components={m} must be in [1, n_samples - 1] = [1, {n - 1}].")
    d = degrees(W)
    xi = np.sqrt(d)
    norm = np.linalg.norm(xi)
    xi = xi / norm if norm > 0 else xi
    A = normalized_adjacency(W)
    if n <= dense_max:
        Ad = _as_dense_block(A).astype(np.float64, copy=True)
        Ad -= 2.0 * np.outer(xi, xi)
        Ad = 0.5 * (Ad + Ad.T)
        mu, Z = la.eigh(Ad, subset_by_index=[n - m, n - 1])
    else:

        def matvec(v):
            v = np.asarray(v).reshape(n, -1)
            return A @ v - 2.0 * np.outer(xi, xi @ v)

        op = LinearOperator((n, n), matvec=matvec, matmat=matvec, dtype=np.float64)
        v0 = np.cos(np.arange(n) * 0.7) + 1.5  # fixed, deterministic start vector
        mu, Z = eigsh(op, k=m, which="LA", v0=v0, ncv=min(n, max(2 * m + 1, 20)), tol=1e-10)
    order = np.argsort(-mu, kind="stable")
    mu, Z = mu[order], Z[:, order]
    # A deterministic sign: the largest-magnitude entry of each eigenvector is positive.
    flip = np.sign(Z[np.argmax(np.abs(Z), axis=0), np.arange(m)])
    flip[flip == 0] = 1.0
    return mu, Z * flip
