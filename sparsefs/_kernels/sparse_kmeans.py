r"""Sparse k-means kernels: per-feature cluster statistics, the w-steps, the gap statistic.

The two sparse k-means models of sparsefs both maximise a weighted between-cluster sum of squares

.. math::

    \max_{C, w} \sum_{j=1}^p w_j\, a_j(C), \qquad
    a_j(C) = \mathrm{BCSS}_j(C) = \mathrm{TSS}_j - \mathrm{WCSS}_j(C)
           = \sum_{k=1}^K n_k (\bar x_{kj} - \bar x_j)^2,

over partitions :math:`C = (C_1, \dots, C_K)` and non-negative weights :math:`w`, under

* :math:`\|w\|_\infty \le 1,\ \|w\|_0 \le s` (l0-k-means, Chang, Wang, Li & Xu 2018, model 21),
  whose w-step is the top-:math:`\lfloor s \rfloor` indicator of :math:`a` (their Theorem 2,
  eq. 23): :func:`l0_weights`;
* :math:`\|w\|_2 \le 1,\ \|w\|_1 \le s` (Witten & Tibshirani 2010), whose w-step is the
  normalised soft-threshold :math:`S(a, \Delta)/\|S(a, \Delta)\|_2` (their eq. 16), in
  :mod:`sparsefs._kernels.l1_kmeans`.

The sparsity level is chosen by the gap statistic over column-permuted copies of X
(:func:`permute_columns`, :func:`gap_statistic`, :func:`select_gap`).

Pure numpy/scipy/numba: no scikit-learn here; the weighted k-means of the C-step (Hartigan–Wong on
the column-scaled matrix) is :mod:`sparsefs._kernels.kmeans`.

References
----------
.. [1] X. Chang, Y. Wang, R. Li and Z. Xu, "Sparse K-means with l_inf/l_0 penalty for
   high-dimensional data clustering", Statistica Sinica 28(3):1265-1284, 2018;
   arXiv:1403.7890.
.. [2] D. M. Witten and R. Tibshirani, "A framework for feature selection in clustering",
   JASA 105(490):713-726, 2010.
.. [3] R. Tibshirani, G. Walther and T. Hastie, "Estimating the number of clusters in a data
   set via the gap statistic", JRSS B 63(2):411-423, 2001.
"""

import math

import numpy as np
import scipy.sparse as sp
from numba import njit

from sparsefs._kernels.kmeans import ImplicitRows, implicit_cluster_means, means_into

__all__ = [
    "bcss_from_means",
    "between_cluster_ss",
    "cluster_means",
    "cluster_stats",
    "fill_empty_clusters",
    "gap_statistic",
    "l0_weights",
    "log_spaced_ints",
    "permute_columns",
    "select_gap",
    "standardize_columns",
    "standardize_sparse",
    "total_ss",
    "weight_change",
    "within_cluster_ss",
]


# --------------------------------------------------------------------------------------------
# Per-feature cluster statistics (spec 3.2)
# --------------------------------------------------------------------------------------------


def cluster_means(
    X: np.ndarray, labels: np.ndarray, n_clusters: int
) -> tuple[np.ndarray, np.ndarray]:
    """Cluster sizes and per-cluster column means, in one pass over X.

    A compiled row loop for C-ordered float64 X (no per-call overhead: the alternation calls
    this thousands of times on small matrices); otherwise one product with the sparse K x n
    one-hot matrix. Both are single-threaded, memory-bound passes, steady on a loaded machine.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    labels : ndarray of shape (n_samples,)
        Integer cluster labels in ``0..n_clusters-1``.
    n_clusters : int

    Returns
    -------
    counts : ndarray of shape (n_clusters,)
    means : ndarray of shape (n_clusters, n_features)
        Row ``k`` is the mean of cluster ``k``; an empty cluster's row is 0.
    """
    if isinstance(X, ImplicitRows):  # sparse input: b + the means of E's rows
        counts, D = implicit_cluster_means(X, labels, n_clusters)
        return counts, np.where(counts[:, None] > 0, D + X.background, 0.0)
    X = np.asarray(X, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.intp)
    n = labels.shape[0]
    if X.ndim == 2 and X.flags.c_contiguous:  # the k-means kernel's compiled pass
        means = np.empty((int(n_clusters), X.shape[1]))
        nc = np.empty(int(n_clusters), dtype=np.int64)
        means_into(X, labels, means, nc)
        return nc.astype(np.float64), means
    else:
        counts = np.bincount(labels, minlength=n_clusters).astype(np.float64)
        indicator = sp.csr_array((np.ones(n), (labels, np.arange(n))), shape=(n_clusters, n))
        sums = np.asarray(indicator @ X)  # a single pass over X
    means = sums / np.maximum(counts, 1.0)[:, None]
    return counts, means


def cluster_stats(X, labels: np.ndarray, n_clusters: int):
    """Cluster sizes, means and the BCSS vector of a partition (:func:`cluster_means` and
    :func:`bcss_from_means`). For sparse input (an
    :class:`~sparsefs._kernels.kmeans.ImplicitRows`) the BCSS comes from the means of the
    sparse part alone: the background cancels in :math:`\bar x_{kj} - \bar x_j`."""
    if isinstance(X, ImplicitRows):
        counts, D = implicit_cluster_means(X, labels, n_clusters)
        means = np.where(counts[:, None] > 0, D + X.background, 0.0)
        return counts, means, bcss_from_means(counts, D)
    counts, means = cluster_means(X, labels, n_clusters)
    return counts, means, bcss_from_means(counts, means)


def standardize_columns(
    X: np.ndarray, c: float = 1.0, colmax: np.ndarray | None = None,
    colmin: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Column-standardised copy :math:`(x_{ij}/c - \bar x_j)/s_j` (ddof 0), in three passes.

    A constant column (``colmax == colmin``) becomes exactly 0 with mean its value and
    :math:`s_j = 1`. ``c`` (a power of two, exact) brings huge or tiny data into range first.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), C-ordered float64
    c : float, default=1.0
    colmax, colmin : ndarray of shape (n_features,) or None
        Column extremes of X (computed when None).

    Returns
    -------
    out : ndarray of shape (n_samples, n_features)
    mean, sd : ndarray of shape (n_features,)
        In the units of ``X / c``.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    if colmax is None or colmin is None:
        colmax, colmin = X.max(axis=0), X.min(axis=0)
    constant = np.asarray(colmax == colmin)
    n = X.shape[0]
    # numpy, in the order of the former compiled loop (column sums accumulate row by row,
    # sequentially, along axis 0): the same bits, and no compilation on first use
    out = X / c if c != 1.0 else X.copy()
    mean = out.sum(axis=0) / n
    mean[constant] = out[0, constant]
    out -= mean
    sq = out * out
    ss = sq.sum(axis=0)
    del sq
    sd = np.sqrt(ss / n)
    sd[constant] = 1.0
    out /= sd
    out[:, constant] = 0.0
    return out, mean, sd


def between_cluster_ss(X: np.ndarray, labels: np.ndarray, n_clusters: int) -> np.ndarray:
    r"""Per-feature between-cluster sum of squares :math:`a_j(C)` (spec 3.2).

    .. math::

        a_j(C) = \mathrm{TSS}_j - \mathrm{WCSS}_j(C) = \sum_k n_k (\bar x_{kj} - \bar x_j)^2,

    computed in the second (algebraically equal) form from one one-hot product: no
    cancellation, so :math:`a_j \ge 0` always and a constant feature gets exactly 0. It is
    half the pairwise form of Chang et al. (their eq. 4); the factor changes neither the
    selection nor the gap statistic.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    labels : ndarray of shape (n_samples,)
        Integer labels in ``0..n_clusters-1``.
    n_clusters : int

    Returns
    -------
    ndarray of shape (n_features,)
    """
    counts, means = cluster_means(X, labels, n_clusters)
    return bcss_from_means(counts, means)


def bcss_from_means(counts: np.ndarray, means: np.ndarray) -> np.ndarray:
    r""":math:`a_j = \sum_k n_k (\bar x_{kj} - \bar x_j)^2` from cluster sizes and means."""
    grand = counts @ means / counts.sum()
    return counts @ (means - grand) ** 2


def total_ss(X: np.ndarray) -> np.ndarray:
    r""":math:`\mathrm{TSS}_j = \sum_i (x_{ij} - \bar x_j)^2` of every column (two passes)."""
    X = np.asarray(X, dtype=np.float64)
    centred = X - X.mean(axis=0)
    return np.einsum("ij,ij->j", centred, centred)


def within_cluster_ss(X: np.ndarray, labels: np.ndarray, n_clusters: int) -> np.ndarray:
    r""":math:`\mathrm{WCSS}_j(C) = \sum_k \sum_{i \in C_k} (x_{ij} - \bar x_{kj})^2` per column."""
    X = np.asarray(X, dtype=np.float64)
    _, means = cluster_means(X, labels, n_clusters)
    resid = X - means[np.asarray(labels, dtype=np.intp)]
    return np.einsum("ij,ij->j", resid, resid)


def fill_empty_clusters(X: np.ndarray, labels: np.ndarray, n_clusters: int) -> np.ndarray:
    """Give every empty cluster one sample: the one farthest from its own cluster mean.

    The moved sample is taken only from a cluster with at least two samples, so no cluster is
    emptied; moving a sample out of a cluster never raises the within-cluster sum of squares of
    the rest, so the k-means objective does not get worse (spec 3.9, "re-seed with the
    farthest point"). Requires ``n_samples >= n_clusters``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The (weighted) space in which distances are measured.
    labels : ndarray of shape (n_samples,)
    n_clusters : int

    Returns
    -------
    ndarray of shape (n_samples,), dtype intp
        A new label array (the input is not modified); equal to ``labels`` when no cluster is
        empty.
    """
    labels = np.array(labels, dtype=np.intp)
    counts = np.bincount(labels, minlength=n_clusters)
    if counts.min() > 0:
        return labels
    if labels.shape[0] < n_clusters:
        raise ValueError(
            f"n_samples={labels.shape[0]} should be >= n_clusters={n_clusters}."
        )
    X = np.asarray(X, dtype=np.float64)
    for k in np.flatnonzero(counts == 0):
        _, means = cluster_means(X, labels, n_clusters)
        dist = ((X - means[labels]) ** 2).sum(axis=1)
        dist[counts[labels] < 2] = -np.inf
        i = int(np.argmax(dist))  # first index among equal distances: deterministic
        counts[labels[i]] -= 1
        labels[i] = k
        counts[k] = 1
    return labels


# --------------------------------------------------------------------------------------------
# The w-steps
# --------------------------------------------------------------------------------------------


def l0_weights(a: np.ndarray, s: float) -> np.ndarray:
    r"""The l0 w-step (Chang et al. 2018, Theorem 2, eq. 23): the top-:math:`\lfloor s \rfloor`
    indicator of :math:`a`.

    Solves :math:`\max_w \sum_j w_j a_j` subject to :math:`\|w\|_\infty \le 1`,
    :math:`\|w\|_0 \le s`, :math:`w \ge 0` for :math:`a \ge 0`: the objective is linear with
    non-negative coefficients, so an optimum is a 0/1 vector with :math:`\lfloor s \rfloor`
    ones on the largest :math:`a_j`. Ties are broken by the lower feature index, so exactly
    :math:`\min(\lfloor s \rfloor, p)` weights are 1. O(p) via ``np.argpartition``.

    Parameters
    ----------
    a : ndarray of shape (n_features,)
        Per-feature BCSS (finite).
    s : float
        The sparsity level, ``>= 1``.

    Returns
    -------
    ndarray of shape (n_features,), float64, entries in {0, 1}
    """
    a = np.asarray(a, dtype=np.float64)
    if not s >= 1:
        raise ValueError(f"s={s!r} must be >= 1 (floor(s) = 0 keeps no feature).")
    p = a.shape[0]
    k = min(math.floor(s), p)
    w = np.zeros(p)
    if k == p:
        w[:] = 1.0
        return w
    kth = a[np.argpartition(-a, k - 1)[k - 1]]  # the k-th largest value
    above = a > kth
    w[above] = 1.0
    need = k - int(above.sum())
    w[np.flatnonzero(a == kth)[:need]] = 1.0  # ties at the threshold: lower indices first
    return w


def weight_change(w_new: np.ndarray, w_old: np.ndarray) -> float:
    r"""Relative change :math:`\sum_j |w^{t}_j - w^{t-1}_j| / \sum_j |w^{t-1}_j|` (spec 3.4)."""
    diff = float(np.abs(w_new - w_old).sum())
    base = float(np.abs(w_old).sum())
    if base == 0:
        return 0.0 if diff == 0 else math.inf
    return diff / base


# --------------------------------------------------------------------------------------------
# The gap statistic (spec 3.5, 3.6)
# --------------------------------------------------------------------------------------------


def permute_columns(X: np.ndarray, seed: int | np.random.Generator) -> np.ndarray:
    """A copy of X with every column permuted independently (the gap's reference data).

    Destroys the cluster structure and keeps every column's marginal distribution.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    seed : int or numpy.random.Generator

    Returns
    -------
    ndarray of shape (n_samples, n_features)
    """
    rng = np.random.default_rng(seed)
    if isinstance(X, ImplicitRows):
        return _permute_implicit(X, rng)
    return rng.permuted(np.asarray(X, dtype=np.float64), axis=0)


_PERMUTE_BLOCK = 512


def _permute_implicit(X: ImplicitRows, rng: np.random.Generator) -> ImplicitRows:
    """:func:`permute_columns` of sparse input, entry by entry the dense result.

    ``Generator.permuted(Z, axis=0)`` shuffles the columns of Z one after another; the same
    generator shuffling row indices, a block of columns at a time, draws the same stream and
    gives every column's permutation :math:`\\pi_j` (new row i holds old row
    :math:`\\pi_j(i)`). The background of a column is constant, so only its stored entries
    move: old row r goes to :math:`\\pi_j^{-1}(r)`. Memory: one n x 512 index block.
    """
    n, q = X.shape
    Ec = X.op.csc
    rows = np.empty_like(Ec.indices, dtype=np.int64)
    ar = np.arange(n, dtype=np.int64)
    for s in range(0, q, _PERMUTE_BLOCK):
        m = min(_PERMUTE_BLOCK, q - s)
        P = rng.permuted(np.repeat(ar[:, None], m, axis=1), axis=0)
        inv = np.empty_like(P)
        np.put_along_axis(inv, P, ar[:, None], axis=0)
        lo, hi = Ec.indptr[s], Ec.indptr[s + m]
        cols = np.repeat(np.arange(m), np.diff(Ec.indptr[s:s + m + 1]))
        rows[lo:hi] = inv[Ec.indices[lo:hi], cols]
    E = sp.csc_array((Ec.data, rows, Ec.indptr), shape=(n, q))
    return ImplicitRows(E.tocsr(), X.background)


def standardize_sparse(X, standardize: bool, c: float):
    r"""The column transform of sparse X as an implicit matrix (never densified).

    ``standardize``: :math:`z_{ij} = (x_{ij}/c - ar x_j)/s_j` (ddof 0; a constant column
    is 0) held as :math:`E + \mathbf 1 b^	op` with :math:`e_{ij} = (x_{ij}/c)/s_j` on the
    stored entries and :math:`b_j = -ar x_j/s_j`; the means sum the stored entries in row
    order (bitwise the dense sums), the sums of squares add :math:`(n - \mathrm{nnz}_j)
    ar x_j^2` for the zeros. Otherwise :math:`Z = X/c` (b = 0).

    Returns
    -------
    Z : ImplicitRows
    mean, sd : ndarray of shape (n_features,)
        In the units of ``X / c`` (0 and 1 without ``standardize``).
    """
    n, p = X.shape
    Xc = sp.csc_array(X, dtype=np.float64)
    if not Xc.has_sorted_indices:
        Xc = Xc.sorted_indices()
    data = Xc.data / c if c != 1.0 else Xc.data.copy()
    if not standardize:
        Z = ImplicitRows(sp.csc_array((data, Xc.indices, Xc.indptr), shape=(n, p)), np.zeros(p))
        return Z, np.zeros(p), np.ones(p)
    mean, sd, constant = _sparse_column_moments(data, Xc.indptr, n)
    inv = np.where(constant, 0.0, 1.0 / sd)
    counts = np.diff(Xc.indptr)
    data *= np.repeat(inv, counts)
    b = np.where(constant, 0.0, -mean * inv)
    Z = ImplicitRows(sp.csc_array((data, Xc.indices, Xc.indptr), shape=(n, p)), b)
    return Z, mean, sd


@njit(cache=True)
def _sparse_column_moments(data, indptr, n):
    p = indptr.shape[0] - 1
    mean = np.zeros(p)
    sd = np.ones(p)
    constant = np.zeros(p, dtype=np.bool_)
    for j in range(p):
        lo, hi = indptr[j], indptr[j + 1]
        nz = hi - lo
        s = 0.0
        mx = -np.inf
        mn = np.inf
        for t in range(lo, hi):
            v = data[t]
            s += v
            mx = max(mx, v)
            mn = min(mn, v)
        if nz < n:
            mx = max(mx, 0.0)
            mn = min(mn, 0.0)
        if mx == mn:
            constant[j] = True
            mean[j] = mx
            continue
        m = s / n
        ss = (n - nz) * m * m
        for t in range(lo, hi):
            u = data[t] - m
            ss += u * u
        mean[j] = m
        sd[j] = math.sqrt(ss / n)
    return mean, sd, constant


def log_spaced_ints(low: float, high: float, num: int) -> np.ndarray:
    """``num`` log-spaced values in ``[low, high]``, truncated to integers, deduplicated.

    ``low`` and ``high`` must be >= 1; the result is sorted and always contains
    ``floor(low)`` and ``floor(high)``.
    """
    if not (1 <= low <= high):
        raise ValueError(f"need 1 <= low <= high; got low={low!r}, high={high!r}.")
    grid = np.exp(np.linspace(math.log(low), math.log(high), max(int(num), 1)))
    ints = np.floor(grid + 1e-9).astype(np.int64)
    return np.unique(np.concatenate([ints, [int(low), int(high)]]))


def gap_statistic(
    log_objective: np.ndarray, ref_log_objectives: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    r"""Gap curve and its standard deviation.

    .. math::

        \mathrm{Gap}(s) = \log O(s) - \frac1B \sum_{b=1}^B \log O^*_b(s), \qquad
        \mathrm{sd}(s) = \mathrm{sd}_b\bigl(\log O^*_b(s)\bigr),

    where :math:`O(s) = \sum_j w_j(s) a_j(C(s))` is the converged objective on the data and
    :math:`O^*_b(s)` on the b-th column-permuted copy (Chang et al. 2018, section 3; Witten &
    Tibshirani 2010, section 4.1). The sd uses ``ddof=1`` (0 when B = 1).

    Parameters
    ----------
    log_objective : ndarray of shape (n_grid,)
    ref_log_objectives : ndarray of shape (n_permutations, n_grid)

    Returns
    -------
    gap, sd : ndarray of shape (n_grid,)
    """
    ref = np.atleast_2d(np.asarray(ref_log_objectives, dtype=np.float64))
    gap = np.asarray(log_objective, dtype=np.float64) - ref.mean(axis=0)
    sd = ref.std(axis=0, ddof=1) if ref.shape[0] > 1 else np.zeros(ref.shape[1])
    return gap, sd


def select_gap(gap: np.ndarray, sd: np.ndarray, rule: str = "max") -> int:
    """Index of the chosen grid value.

    ``"max"``: the argmax of the gap (the first on ties; Chang et al. and ``sparcl``).
    ``"1se"``: the smallest grid index whose gap is within one sd of the maximum,
    ``gap >= gap[best] - sd[best]`` (the one-standard-error rule).
    """
    gap = np.asarray(gap, dtype=np.float64)
    best = int(np.argmax(gap))
    if rule == "max":
        return best
    if rule == "1se":
        return int(np.flatnonzero(gap >= gap[best] - sd[best])[0])
    raise ValueError(f"rule={rule!r} must be 'max' or '1se'.")
