r"""UFCM: unsupervised feature analysis with class-margin optimisation (Wang et al., 2015).

The model, in the library's orientation (``X`` is ``n_samples x n_features``, centred; feature
:math:`i` is row :math:`i` of :math:`W`), reconstructed in ``specs/ufcm.md`` from the paper's
prose (its equations are not in the available text; equation numbers below are the spec's):

.. math::

    \max_{W^\top W = I,\ G,\ U}\ J(W, U) = \operatorname{Tr}(W^\top S_t W)
        - \alpha\,\|X W - U G\|_F^2 - \beta\,\|W\|_{2,p}^p                        \quad (6)

with the total scatter :math:`S_t = X^\top X`, a hard cluster indicator :math:`U` (the
pseudo-labels), centroids :math:`G` and :math:`\|W\|_{2,p}^p = \sum_i \|w^i\|_2^p`. For fixed
:math:`U` the optimal centroids are the cluster means of :math:`Y = XW` (eq. 10), and the k-means
term becomes :math:`\operatorname{Tr}(W^\top X^\top L_U X W)` with the idempotent
:math:`L_U = I - U(U^\top U)^{-1}U^\top` (eq. 11), so with the re-weighting matrix
:math:`D = \operatorname{diag}(d_{ii})` of eq. 7, frozen at the previous :math:`W`, the W-step
(eqs. 12-13) is the top-:math:`d'` eigenproblem of

.. math::

    A = X^\top B X - \beta D, \qquad B = I - \alpha L_U = (1-\alpha) I + \alpha P_U,

:math:`P_U = U(U^\top U)^{-1}U^\top` the cluster-averaging projector. :math:`A` is never formed
when the data are wide: :func:`w_operator` applies it to a vector in :math:`O(nd)`
(``specs/performance-notes.md`` §8), and :func:`w_step` hands ARPACK's implicitly restarted
Lanczos method (``scipy.sparse.linalg.eigsh``) a matrix-free operator, warm-started from the
previous iterate. For wide data (``n < d``) that operator is the shift-inverted
:math:`(\sigma I - A)^{-1}`, applied by Woodbury's identity in :math:`O(nd + n^2)` per product
(:func:`w_inverse_operator`): the re-weighting drives rows of :math:`W` towards zero and their
weights :math:`\beta d_{ii}` towards :math:`\beta (p/2)\varepsilon^{(p-2)/2}`, spreading the
spectrum of :math:`A` over many orders of magnitude, which stalls plain Lanczos (thousands of
products per W-step) but not the inverted operator (tens). :func:`w_matrix` forms :math:`A` for
the dense path (small ``d``, tests).

Everything here is pure numpy/scipy. The U-step's candidate labellings are injected by the
caller through the ``propose`` callable of :func:`ufcm` (the estimator proposes runs of
:func:`kmeans`, a seeded numpy Lloyd's k-means sized for the ``n x d'`` projection).

References
----------
.. [1] S. Wang, F. Nie, X. Chang, L. Yao, X. Li and Q. Z. Sheng, "Unsupervised feature analysis
   with class margin optimization", ECML-PKDD 2015, LNCS 9284, pp. 383-398; arXiv:1506.01330.
.. [2] F. Nie, H. Huang, X. Cai and C. Ding, "Efficient and robust feature selection via joint
   l2,1-norms minimization", NIPS 2010 (the re-weighting lemma behind eq. 7).
.. [3] R. B. Lehoucq, D. C. Sorensen and C. Yang, *ARPACK Users' Guide*, SIAM, 1998.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy import linalg
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

from sparsefs._kernels.centered import CenteredSparse, center_sparse, sparse_col_extrema

__all__ = [
    "DENSE_MAX_FEATURES",
    "DENSE_TALL_MAX_FEATURES",
    "CenteredSparse",
    "UFCMResult",
    "best_candidate",
    "certified_shift",
    "cluster_means",
    "correlation_screen",
    "data_scale",
    "hinted_shift",
    "inverse_shift",
    "isometric_coordinates",
    "kmeans",
    "kmeans_cost",
    "l2p_penalty",
    "objective",
    "prepare_data",
    "resolve_solver",
    "reweight",
    "screened_columns",
    "smoothing_eps",
    "ufcm",
    "w_inverse_operator",
    "w_matrix",
    "w_operator",
    "w_step",
]

#: ``solver="auto"`` uses the dense eigendecomposition up to this many (non-constant) features
#: and Lanczos on the matrix-free operator above it. Below ~500 features forming the d x d
#: matrix costs nothing and LAPACK's ``eigh`` is robust for any d'; above, the O(d^3)
#: decomposition loses to O(n d) matrix-vector products (performance-notes.md §8).
DENSE_MAX_FEATURES = 500
#: ... and, for tall data (``n_features <= n_samples``), up to this many: there the low-rank
#: structure that makes the matrix-free shift-invert cheap is absent, and a dense top-d'
#: ``eigh`` at d = 2000 takes about 0.3 s (performance-notes.md §8).
DENSE_TALL_MAX_FEATURES = 2000

# Relative size of the smoothing epsilon of the l2,p weights (specs/ufcm.md B.4).
_EPS_REL = 1e-8
# prepare_data rescales X by a power of two when its largest magnitude is outside this range.
_SAFE_RANGE = (1e-100, 1e100)
# Smallest Lanczos basis on A itself: more vectors than ARPACK's default 20 cut the products by
# a third to a half when the d'-th eigenvalue sits in the cluster of -beta*d_ii values.
_NCV_MIN = 40
# Smallest Lanczos basis on the shift-inverted operator: its wanted eigenvalues are well
# separated, and a warm-started W-step converges within 2 d' + 1 vectors; the basis is the
# least number of products ARPACK makes (a basis of 20: 21 products per W-step at d = 10^4;
# 10: 15, issue #33).
_NCV_INVERTED_MIN = 10
#: Relative accuracy of the Ritz values of the W-steps inside :func:`ufcm` (ARPACK's ``tol``;
#: 0 is machine precision). The objective depends on the subspace only to second order in the
#: residual, so 1e-8 leaves it unchanged to ~1e-12 relative (measured: the same objective to 10
#: digits and the same path at d = 10^4) with a third fewer products.
W_STEP_TOL = 1e-8
# Share of the random start vector mixed into the warm start (keeps Lanczos off breakdown).
_V0_NOISE = 1e-2


# --------------------------------------------------------------------------------------------
# Data, centroids, costs
# --------------------------------------------------------------------------------------------


def _prepare_sparse(X, standardize: bool) -> tuple[CenteredSparse, int, np.ndarray]:
    """:func:`prepare_data` for sparse X: the same scaling, centring kept implicit (the
    shared :func:`sparsefs._kernels.centered.center_sparse`, row access)."""
    X = sp.csr_array(X, dtype=np.float64)
    if not X.has_canonical_format:  # (a copy: the caller's X is not modified)
        X = X.copy()
        X.sum_duplicates()
    n, d = X.shape
    if n == 0:
        return CenteredSparse(X, np.zeros(d)), 0, np.zeros(d, dtype=bool)
    exponent = 0
    if not standardize:
        cmax, cmin = sparse_col_extrema(X)
        amax = float(max(np.abs(cmax).max(initial=0.0), np.abs(cmin).max(initial=0.0)))
        if amax > _SAFE_RANGE[1] or 0.0 < amax < _SAFE_RANGE[0]:
            exponent = int(np.frexp(amax)[1])
    Xc, _, _, constant = center_sparse(X, standardize=standardize, exponent=exponent,
                                       fmt="csr")
    return Xc, exponent, ~constant


def prepare_data(
    X: np.ndarray, *, standardize: bool = False
) -> tuple[np.ndarray, int, np.ndarray]:
    """Centre X (a float64 copy), rescale it by a power of two if needed, find constant columns.

    The objective is homogeneous, :math:`J(W; X/s, \\beta/s^2) = J(W; X, \\beta)/s^2`, and the
    estimator takes ``beta`` relative to the scatter (:func:`data_scale`), so the scale of X
    drops out. Data whose largest magnitude lies outside [1e-100, 1e100] (where scatter
    matrices overflow or underflow) are divided by :math:`s = 2^e`, exactly, before anything
    is squared; the caller multiplies the objective back by :math:`4^e`. Ordinary data are
    untouched (e = 0).

    With ``standardize=True`` every column is z-scored instead (divided by its largest
    magnitude first, so no square over- or underflows, then centred and divided by its
    standard deviation; ``exponent`` is 0): the fit then ignores the features' units.

    Sparse X (any scipy format) is never densified: the result is a :class:`CenteredSparse`,
    the scaled sparse data and their column means, with the centring kept implicit.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Finite values. Not modified.
    standardize : bool, default=False

    Returns
    -------
    Xc : ndarray of shape (n_samples, n_features), float64, or CenteredSparse
        ``(X - mean) / 2**exponent`` (or the z-scores); a new array.
    exponent : int
    varying : ndarray of bool, shape (n_features,)
        False for the columns that are exactly constant in X.
    """
    if sp.issparse(X):
        return _prepare_sparse(X, standardize)
    X = np.asarray(X)
    varying = (X.max(axis=0) != X.min(axis=0)) if X.shape[0] else np.zeros(X.shape[1], bool)
    Xc = np.array(X, dtype=np.float64, order="C", copy=True)
    if standardize:
        colmax = np.abs(Xc).max(axis=0) if Xc.shape[0] else np.ones(Xc.shape[1])
        Xc /= np.where(colmax > 0, colmax, 1.0)
        Xc -= Xc.mean(axis=0)
        std = np.sqrt(np.mean(Xc * Xc, axis=0)) if Xc.shape[0] else np.ones(Xc.shape[1])
        Xc /= np.where(varying & (std > 0), std, 1.0)
        Xc[:, ~varying] = 0.0
        return Xc, 0, varying
    amax = float(np.abs(Xc).max()) if Xc.size else 0.0
    exponent = 0
    if amax > _SAFE_RANGE[1] or 0.0 < amax < _SAFE_RANGE[0]:
        exponent = int(np.frexp(amax)[1])
        Xc = np.ldexp(Xc, -exponent)
    Xc -= Xc.mean(axis=0)
    Xc[:, ~varying] = 0.0
    return Xc, exponent, varying


def isometric_coordinates(Xc: np.ndarray) -> np.ndarray:
    r"""Coordinates of the samples in their own span: the same pairwise distances, n columns.

    For ``n_features > n_samples``: :math:`R = V\Lambda^{1/2}` from the eigendecomposition
    :math:`XX^\top = V \Lambda V^\top`, so :math:`RR^\top = XX^\top` - the rows of ``R``
    (``n x n``) have the inner products, hence the distances, of the rows of ``Xc``: k-means on
    them is k-means on ``Xc`` at ``n/d`` of the cost, and :func:`inverse_shift` reuses ``R``.
    Otherwise ``Xc`` itself is returned.
    """
    n_samples, n_features = Xc.shape
    if n_features <= n_samples:
        return Xc
    gram = Xc.row_gram() if isinstance(Xc, CenteredSparse) else Xc @ Xc.T
    vals, vecs = linalg.eigh(gram, check_finite=False)
    return vecs * np.sqrt(np.clip(vals, 0.0, None))


# correlation_screen works on column blocks of about this many float64 entries (32 MB)
_SCREEN_BLOCK_ENTRIES = 1 << 22
#: screened_columns keeps the features whose screen exceeds the median by this many robust
#: standard deviations (1.4826 x the median absolute deviation) ...
SCREEN_Z = 3.0
#: ... at least ``2 * n_clusters`` and at most this many of them
SCREEN_MAX_COLUMNS = 1000


def _col_sq_sums(Xc) -> np.ndarray:
    """The columns' sums of squares of the centred data (dense or :class:`CenteredSparse`)."""
    if isinstance(Xc, CenteredSparse):
        return Xc.col_sq_sums()
    return np.einsum("ij,ij->j", Xc, Xc)


def _column_blocks(Xc, width: int, csc=None):
    """``(slice, dense block)`` over the columns of ``Xc``: views of dense data, centred
    dense copies of one block at a time for :class:`CenteredSparse` (``csc``: its CSC form)."""
    d = Xc.shape[1]
    for start in range(0, d, width):
        cols = slice(start, min(start + width, d))
        if csc is None:
            yield cols, Xc[:, cols]
        else:
            yield cols, csc[:, cols].toarray() - Xc.m[cols]


def _screen(Xc, csc=None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`correlation_screen` and the columns' sums of squares it divides by."""
    n, d = Xc.shape
    sq = _col_sq_sums(Xc)
    inv = np.zeros(d)
    np.divide(1.0, sq, out=inv, where=sq > 0.0)
    scores = np.zeros(d)
    if d == 0 or n == 0:
        return scores, sq
    if isinstance(Xc, CenteredSparse) and csc is None:
        csc = Xc.csc
    width = max(1, min(d, _SCREEN_BLOCK_ENTRIES // max(n, d)))
    if n < d:
        if csc is not None:
            gram = Xc.row_gram(inv)  # Z Z^T
        else:  # Z Z^T block by block: no scaled copy of X
            gram = np.zeros((n, n))
            for cols, block in _column_blocks(Xc, width):
                gram += (block * inv[cols]) @ block.T
        for cols, block in _column_blocks(Xc, width, csc):
            scores[cols] = np.einsum("ij,ij->j", block, gram @ block) * inv[cols]
    else:
        for cols, block in _column_blocks(Xc, width, csc):
            cross = Xc.T @ block  # x_k . x_j, d x block width
            scores[cols] = np.einsum("kj,kj,k->j", cross, cross, inv) * inv[cols]
    return scores, sq


def correlation_screen(Xc) -> np.ndarray:
    r"""Each feature's sum of squared correlations with all features, :math:`(C^2)_{jj}`.

    :math:`s_j = \sum_k r_{jk}^2` with :math:`r_{jk}` the Pearson correlation of columns j and k
    of the centred data (:math:`s_j \ge 1`, from :math:`r_{jj} = 1`). Without shared structure
    every :math:`s_j` is about :math:`1 + (d-1)/n`; a feature that moves with others - a block
    of features carrying the same cluster structure - stands out above that level. The statistic
    is scale-free: multiplying any column by a nonzero constant leaves every :math:`s_j`
    unchanged. :math:`s_j = z_j^\top Z Z^\top z_j` with the unit-norm columns :math:`Z`, so for
    wide data it is computed from the ``n x n`` Gram :math:`ZZ^\top` (:math:`O(n^2 d)`), for
    tall data from column blocks of :math:`Z^\top Z` (:math:`O(n d^2)`); memory is bounded by
    blocks of about :math:`2^{22}` entries besides the Gram. Zero columns score 0.

    Parameters
    ----------
    Xc : ndarray of shape (n_samples, n_features) or CenteredSparse
        Centred data (:func:`prepare_data`).

    Returns
    -------
    ndarray of shape (n_features,)
    """
    return _screen(Xc)[0]


def screened_columns(Xc, n_clusters: int) -> np.ndarray:
    r"""The features that stand out in :func:`correlation_screen`, as unit-norm dense columns.

    Keeps the features whose screen exceeds the median by ``SCREEN_Z`` robust standard
    deviations (:math:`1.4826\,\mathrm{MAD}`), the highest first, at least
    :math:`\min(2c, d)` and at most ``SCREEN_MAX_COLUMNS`` (ties by the lower index); returns
    them divided by their norms (``n x m``), so that k-means on them ignores the features'
    units. UFCM's ``init="screen"`` starts from k-means on these columns: in data with many
    independent noise features (d >> n), k-means on all features returns labels that the noise
    fits as well as any, and the alternation cannot leave them (``docs/methods/ufcm.md``).

    Parameters
    ----------
    Xc : ndarray of shape (n_samples, n_features) or CenteredSparse
        Centred data without constant columns.
    n_clusters : int

    Returns
    -------
    ndarray of shape (n_samples, m)
    """
    d = Xc.shape[1]
    csc = Xc.csc if isinstance(Xc, CenteredSparse) else None  # column access, once
    scores, sq = _screen(Xc, csc)
    med = float(np.median(scores))
    spread = 1.4826 * float(np.median(np.abs(scores - med)))
    m = int(np.count_nonzero(scores > med + SCREEN_Z * spread))
    m = min(max(m, 2 * n_clusters), SCREEN_MAX_COLUMNS, d)
    top = np.argsort(-scores, kind="stable")[:m]
    block = Xc[:, top] if csc is None else csc[:, top].toarray() - Xc.m[top]
    norms = np.sqrt(sq[top])
    return block / np.where(norms > 0.0, norms, 1.0)


def data_scale(Xc: np.ndarray) -> float:
    r"""The mean per-feature scatter :math:`\sigma = \|X_c\|_F^2 / d = \operatorname{Tr}(S_t)/d`.

    The unit in which :func:`ufcm` takes ``beta``: every data term of the objective (eq. 6) is
    quadratic in X, so :math:`A(cX, \beta\,\sigma(cX)) = c^2 A(X, \beta\,\sigma(X))` and the
    W-step, the U-step and the selection are the same for every :math:`c \neq 0`. For
    standardised features :math:`\sigma = n`. Returns 1.0 for all-zero data (nothing to scale).

    Parameters
    ----------
    Xc : ndarray of shape (n_samples, n_features)
        Centred data, within the safe range of :func:`prepare_data` (the squares are finite).
    """
    total = float(_col_sq_sums(Xc).sum())
    if Xc.shape[1] == 0 or not total > 0.0:
        return 1.0
    return total / Xc.shape[1]


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


# --------------------------------------------------------------------------------------------
# The l2,p penalty and its re-weighting
# --------------------------------------------------------------------------------------------


def smoothing_eps(n_features: int, n_components: int) -> float:
    r"""The smoothing :math:`\varepsilon = 10^{-8}\,\overline{\|w^i\|^2} = 10^{-8} d'/d`.

    Constant over the iterations (:math:`\|W\|_F^2 = d'` whenever :math:`W^\top W = I`), which
    keeps the re-weighting a true minorise-maximise step for the smoothed penalty.
    """
    return _EPS_REL * n_components / max(n_features, 1)


def l2p_penalty(W: np.ndarray, p: float, eps: float = 0.0) -> float:
    r""":math:`\sum_i (\|w^i\|_2^2 + \varepsilon)^{p/2}`; ``eps=0`` gives :math:`\|W\|_{2,p}^p`."""
    sq = np.einsum("ij,ij->i", W, W)
    if eps == 0.0:
        return float(np.sum(np.sqrt(sq) ** p))
    return float(np.sum((sq + eps) ** (p / 2)))


def reweight(W: np.ndarray, p: float, eps: float) -> np.ndarray:
    r"""Diagonal of the re-weighting matrix :math:`D` (eq. 7), smoothed.

    .. math::

        d_{ii} = \frac{p}{2}\,\bigl(\|w^i\|_2^2 + \varepsilon\bigr)^{(p-2)/2},

    which for :math:`\varepsilon = 0` is :math:`p / (2\|w^i\|_2^{2-p})`: then :math:`2DW` is the
    gradient of :math:`\sum_i \|w^i\|^p` and :math:`\operatorname{Tr}(W^\top D W) =
    (p/2)\sum_i\|w^i\|^p`. By concavity of :math:`t \mapsto (t + \varepsilon)^{p/2}` for
    :math:`0 < p \le 2`, :math:`\sum_i (\|\tilde w^i\|^2 + \varepsilon)^{p/2} \le
    \sum_i (\|w^i\|^2+\varepsilon)^{p/2} + \operatorname{Tr}(\tilde W^\top D \tilde W) -
    \operatorname{Tr}(W^\top D W)`, the inequality behind the monotone ascent (eq. 16).

    Parameters
    ----------
    W : ndarray of shape (n_features, n_components)
    p : float in (0, 2]
    eps : float >= 0
        Must be positive when ``p < 2`` and a row of W can be zero.

    Returns
    -------
    ndarray of shape (n_features,)
    """
    sq = np.einsum("ij,ij->i", W, W)
    return (p / 2.0) * (sq + eps) ** ((p - 2.0) / 2.0)


def objective(
    Xc: np.ndarray,
    W: np.ndarray,
    labels: np.ndarray,
    alpha: float,
    beta: float,
    p: float,
    eps: float = 0.0,
) -> float:
    r"""The UFCM objective (eq. 6) at :math:`(W, U)` with the optimal centroids.

    :math:`\|XW\|_F^2 - \alpha\,\mathrm{KM}(XW, U) - \beta \sum_i (\|w^i\|^2+\varepsilon)^{p/2}`;
    ``eps=0`` is eq. 6 itself, ``eps > 0`` its smoothed form that :func:`ufcm` increases
    monotonically. ``Xc`` must be centred.
    """
    Y = Xc @ W
    total = float(np.einsum("ij,ij->", Y, Y))
    km = kmeans_cost(Y, labels) if alpha else 0.0
    pen = l2p_penalty(W, p, eps) if beta else 0.0
    return total - alpha * km - beta * pen


# --------------------------------------------------------------------------------------------
# The W-step
# --------------------------------------------------------------------------------------------


def _averaging(labels: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """``Z -> P_U Z``: replace every row by the mean of its cluster (O(n k))."""
    labels = np.asarray(labels)
    k = int(labels.max()) + 1
    counts = np.bincount(labels, minlength=k).astype(np.float64)
    inv = np.divide(1.0, counts, out=np.zeros_like(counts), where=counts > 0)

    def apply(Z: np.ndarray) -> np.ndarray:
        if Z.ndim == 1:
            return (np.bincount(labels, weights=Z, minlength=k) * inv)[labels]
        sums = np.zeros((k, Z.shape[1]))
        np.add.at(sums, labels, Z)
        return (sums * inv[:, None])[labels]

    return apply


def w_operator(
    Xc: np.ndarray, labels: np.ndarray, alpha: float, beta_d: np.ndarray
) -> LinearOperator:
    r"""The W-step matrix as a matrix-free symmetric operator (eq. 13).

    :math:`A = X^\top((1-\alpha)I + \alpha P_U)X - \operatorname{diag}(\beta d)`.

    Each product costs two passes over ``Xc`` (:math:`O(nd)` flops, :math:`O(n + d)` extra
    memory); the ``d x d`` matrix is never formed.

    Parameters
    ----------
    Xc : ndarray of shape (n_samples, n_features)
        Centred data.
    labels : ndarray of int, shape (n_samples,)
    alpha : float
    beta_d : ndarray of shape (n_features,)
        :math:`\beta\,d_{ii}`, the penalty weight times the re-weighting diagonal.

    Returns
    -------
    scipy.sparse.linalg.LinearOperator of shape (n_features, n_features)
    """
    n_features = Xc.shape[1]
    average = _averaging(labels)
    beta_d = np.asarray(beta_d, dtype=np.float64)

    def matmat(V: np.ndarray) -> np.ndarray:
        V = np.asarray(V, dtype=np.float64)
        Z = Xc @ V
        BZ = (1.0 - alpha) * Z + alpha * average(Z) if alpha else Z
        out = Xc.T @ BZ
        return out - (beta_d[:, None] * V if V.ndim == 2 else beta_d * V)

    return LinearOperator(
        (n_features, n_features), matvec=matmat, matmat=matmat, rmatvec=matmat,
        dtype=np.float64,
    )


def _apply_b(labels: np.ndarray, alpha: float) -> Callable[[np.ndarray], np.ndarray]:
    """``Z -> B Z = (1 - alpha) Z + alpha P_U Z`` (n-dimensional, O(n k))."""
    average = _averaging(labels)

    def apply(Z: np.ndarray) -> np.ndarray:
        return (1.0 - alpha) * Z + alpha * average(Z) if alpha else Z

    return apply


def inverse_shift(
    Xc: np.ndarray,
    labels: np.ndarray,
    alpha: float,
    beta_d: np.ndarray,
    factor: np.ndarray | None = None,
) -> float:
    r"""A shift :math:`\sigma` above the largest eigenvalue of :math:`A` (Weyl's inequality).

    :math:`\lambda_{\max}(A) \le \lambda_{\max}(X^\top B X) - \beta \min_i d_{ii}`, and the
    nonzero eigenvalues of :math:`X^\top B X` are those of the ``n x n`` matrix
    :math:`R^\top B R` with :math:`XX^\top = RR^\top`; :math:`\sigma` adds 10% of the larger
    magnitude as a margin (it keeps :math:`\sigma I - A` well conditioned without pushing
    :math:`\sigma` so far away that the wanted eigenvalues bunch up after the inversion).
    ``factor``: the ``R`` of :func:`isometric_coordinates` (constant over the iterations),
    computed here when not given.
    """
    R = isometric_coordinates(Xc) if factor is None else factor
    T = R.T @ _apply_b(labels, alpha)(R)
    top = float(linalg.eigvalsh(0.5 * (T + T.T), check_finite=False)[-1])
    bound = top - float(np.min(beta_d))
    margin = 0.1 * max(abs(top), abs(bound))
    return bound + (margin if margin > 0 else 1.0)


# A shift from the previous W-step's eigenvalues lies this share of their spread (or of the top
# eigenvalue's magnitude, if larger) above the top one; it must pass certified_shift.
_HINT_MARGIN = 0.2
# certified_shift accepts sigma when the n x n test matrix's top eigenvalue is below 1 - this
_CERTIFY_SLACK = 1e-6


def _shifted_gram(Xc, beta_d: np.ndarray, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    r"""``inv = 1 / (beta d + sigma)`` and :math:`M = X \operatorname{diag}(inv) X^\top`."""
    inv = 1.0 / (np.asarray(beta_d, dtype=np.float64) + sigma)
    if not np.all(inv > 0) or not np.all(np.isfinite(inv)):
        raise ValueError(f"sigma={sigma!r} must exceed -beta*d_ii for every feature.")
    M = Xc.row_gram(inv) if isinstance(Xc, CenteredSparse) else (Xc * inv) @ Xc.T
    return inv, M


def certified_shift(
    Xc, labels: np.ndarray, alpha: float, beta_d: np.ndarray, sigma: float
) -> np.ndarray | None:
    r"""Whether :math:`\sigma > \lambda_{\max}(A)`, decided in ``n`` dimensions; its ``M`` if so.

    With :math:`\Lambda = \operatorname{diag}(\beta d) + \sigma I \succ 0` and a factor
    :math:`C` with :math:`B \preceq CC^\top` (:math:`C = P_U + \sqrt{1-\alpha}\,L_U`, so
    :math:`CC^\top = B`, for :math:`\alpha \le 1`; :math:`C = P_U \succeq B` for
    :math:`\alpha > 1`), :math:`A - \sigma I \preceq X^\top CC^\top X - \Lambda
    = \Lambda^{1/2}(GG^\top - I)\Lambda^{1/2}` with :math:`G = \Lambda^{-1/2}X^\top C`.
    By Sylvester's law of inertia the right-hand side is negative definite iff every
    eigenvalue of :math:`G^\top G = C^\top M C` (``n x n``, :math:`M = X\Lambda^{-1}X^\top`)
    is below 1. Exact for :math:`\alpha \le 1`, sufficient otherwise; accepted with a
    relative slack of ``1e-6``. Returns :math:`M` (reused by :func:`w_inverse_operator`) when
    the test passes, ``None`` when it fails or :math:`\Lambda` is not positive.
    """
    if not np.all(np.asarray(beta_d) + sigma > 0):
        return None
    _, M = _shifted_gram(Xc, beta_d, sigma)
    average = _averaging(labels)
    within = np.sqrt(max(1.0 - alpha, 0.0))

    def apply_c(Z: np.ndarray) -> np.ndarray:
        mean = average(Z)
        return mean + within * (Z - mean) if within else mean

    T = apply_c(apply_c(M).T)
    top = float(linalg.eigvalsh(0.5 * (T + T.T), check_finite=False)[-1])
    return M if top < 1.0 - _CERTIFY_SLACK else None


def hinted_shift(eigenvalues: np.ndarray) -> float:
    r"""A shift just above the previous W-step's eigenvalues (to be certified).

    :math:`\lambda_1 + 0.2\max(\lambda_1 - \lambda_{d'}, |\lambda_1|)`. Lanczos on
    :math:`(\sigma I - A)^{-1}` separates the wanted eigenvalues by the ratios
    :math:`(\sigma - \lambda_{d'+1}) / (\sigma - \lambda_{d'})`, which the Weyl bound of
    :func:`inverse_shift` - far above the spectrum once the penalty has removed most features -
    pushes towards 1 (about 100 products per W-step at 200 x 10^4 against about 20 here).
    """
    vals = np.asarray(eigenvalues, dtype=np.float64)
    top = float(vals.max())
    return top + _HINT_MARGIN * max(top - float(vals.min()), abs(top))


def w_inverse_operator(
    Xc: np.ndarray,
    labels: np.ndarray,
    alpha: float,
    beta_d: np.ndarray,
    sigma: float,
    gram: np.ndarray | None = None,
) -> LinearOperator:
    r"""The shift-inverted W-step matrix :math:`(\sigma I - A)^{-1}`, matrix-free (wide data).

    With :math:`\Lambda = \operatorname{diag}(\beta d) + \sigma I` (positive) and
    :math:`M = X\Lambda^{-1}X^\top` (``n x n``), Woodbury's identity gives

    .. math::

        (\sigma I - A)^{-1} = (\Lambda - X^\top B X)^{-1}
        = \Lambda^{-1} + \Lambda^{-1} X^\top B\,(I - M B)^{-1} X \Lambda^{-1},

    valid for a singular :math:`B` too (:math:`\alpha = 1`). Setup: one ``n x n x d`` product
    and an ``n x n`` LU factorisation; each product then costs :math:`O(nd + n^2)`. For
    :math:`\sigma > \lambda_{\max}(A)` the operator is positive definite and its largest
    eigenvalues :math:`1/(\sigma - \lambda)` belong to the largest :math:`\lambda`: the
    eigenvalues :math:`-\beta d_{ii}` of rows driven to zero, which spread the spectrum of
    :math:`A` over many orders of magnitude and stall plain Lanczos, are mapped next to 0.

    Parameters
    ----------
    Xc : ndarray of shape (n_samples, n_features)
    labels : ndarray of int, shape (n_samples,)
    alpha : float
    beta_d : ndarray of shape (n_features,)
    sigma : float
        Above the largest eigenvalue of :math:`A` (see :func:`inverse_shift` and
        :func:`certified_shift`).
    gram : ndarray of shape (n_samples, n_samples), optional
        :math:`M` for this ``sigma`` if the caller has it (:func:`certified_shift`).

    Returns
    -------
    scipy.sparse.linalg.LinearOperator of shape (n_features, n_features)
    """
    n_samples, n_features = Xc.shape
    inv, M = _shifted_gram(Xc, beta_d, sigma) if gram is None else (
        1.0 / (np.asarray(beta_d, dtype=np.float64) + sigma), gram)
    apply_b = _apply_b(labels, alpha)
    lu = linalg.lu_factor(np.eye(n_samples) - apply_b(M).T, check_finite=False)

    def matmat(V: np.ndarray) -> np.ndarray:
        V = np.asarray(V, dtype=np.float64)
        scale = inv[:, None] if V.ndim == 2 else inv
        U = scale * V
        T = linalg.lu_solve(lu, Xc @ U, check_finite=False)
        return U + scale * (Xc.T @ apply_b(T))

    return LinearOperator(
        (n_features, n_features), matvec=matmat, matmat=matmat, rmatvec=matmat,
        dtype=np.float64,
    )


def w_matrix(Xc: np.ndarray, labels: np.ndarray, alpha: float, beta_d: np.ndarray) -> np.ndarray:
    r"""The W-step matrix, formed densely (eq. 13; the dense path and tests only).

    :math:`A = (1-\alpha)S_t + \alpha S_b^{(U)} - \operatorname{diag}(\beta d)`, in
    :math:`O(nd^2)` time and :math:`d^2` memory.

    :math:`S_b^{(U)} = X^\top P_U X = \sum_k n_k m_k m_k^\top` with the cluster means
    :math:`m_k` of the centred data. Exactly symmetric.
    """
    A = Xc.col_gram() if isinstance(Xc, CenteredSparse) else Xc.T @ Xc
    if alpha:
        A *= 1.0 - alpha
        means, counts = cluster_means(Xc, labels)
        Mw = means * np.sqrt(counts)[:, None]
        A += alpha * (Mw.T @ Mw)
    A = 0.5 * (A + A.T)
    A[np.diag_indices_from(A)] -= np.asarray(beta_d, dtype=np.float64)
    return A


def resolve_solver(solver: str, n_samples: int, n_features: int, n_components: int) -> str:
    """``"dense"`` or ``"arpack"`` for a W-step of this size.

    ``"auto"``: dense up to :data:`DENSE_MAX_FEATURES` features, and also for tall data with at
    most :data:`DENSE_TALL_MAX_FEATURES` features (``n_features <= n_samples``: forming A costs
    no more than one pass of products, and the Woodbury shift-invert of :func:`w_step` only pays
    for wide data); Lanczos otherwise. ARPACK needs ``n_components < n_features - 1``; when that
    fails the dense path is used whatever was asked.
    """
    if solver not in ("auto", "arpack", "dense"):
        raise ValueError(f"solver={solver!r} is not one of 'auto', 'arpack', 'dense'.")
    if n_components >= n_features - 1:
        return "dense"
    if solver == "auto":
        small = n_features <= DENSE_MAX_FEATURES
        tall = n_features <= min(n_samples, DENSE_TALL_MAX_FEATURES)
        return "dense" if small or tall else "arpack"
    return solver


def _top_eigh(A: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` largest eigenpairs of the symmetric ``A`` by LAPACK.

    The subset driver (``dsyevr``) can return fewer pairs than asked when the k-th eigenvalue
    lies in a large degenerate cluster - measured at the first W-step (D = I, so
    :math:`A = X^\top BX - \beta I` has ``d - rank`` equal eigenvalues :math:`-\beta`) with
    d' above the rank; then the full decomposition is used.
    """
    d = A.shape[0]
    vals, vecs = linalg.eigh(A, subset_by_index=[d - k, d - 1], check_finite=False)
    if vecs.shape[1] != k:
        vals, vecs = linalg.eigh(A, check_finite=False, driver="evd")
        vals, vecs = vals[d - k:], vecs[:, d - k:]
    return vals, vecs


def _orient(vals: np.ndarray, vecs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Columns by decreasing eigenvalue, each signed so its largest-magnitude entry is positive."""
    order = np.argsort(vals)[::-1]
    vals, vecs = vals[order], vecs[:, order]
    pivot = vecs[np.argmax(np.abs(vecs), axis=0), np.arange(vecs.shape[1])]
    vecs = vecs * np.where(pivot < 0, -1.0, 1.0)
    return vals, vecs


def w_step(
    Xc: np.ndarray,
    labels: np.ndarray,
    alpha: float,
    beta_d: np.ndarray,
    n_components: int,
    *,
    solver: str = "auto",
    v0: np.ndarray | None = None,
    tol: float = 0.0,
    shift_invert: bool | None = None,
    factor: np.ndarray | None = None,
    shift_hint: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Solve :math:`\max_{W^\top W = I} \operatorname{Tr}(W^\top A W)` (eqs. 12-13).

    By Ky Fan's theorem the maximiser is spanned by the eigenvectors of the ``n_components``
    largest algebraic eigenvalues of the symmetric :math:`A` (see :func:`w_operator`).

    Parameters
    ----------
    Xc : ndarray of shape (n_samples, n_features)
        Centred data.
    labels : ndarray of int, shape (n_samples,)
    alpha : float
    beta_d : ndarray of shape (n_features,)
        :math:`\beta\,d_{ii}`.
    n_components : int
        :math:`d'`, at most ``n_features``.
    solver : {"auto", "arpack", "dense"}, default="auto"
        ``"arpack"``: implicitly restarted Lanczos (``eigsh(which="LA")``) on the matrix-free
        operator; ``"dense"``: LAPACK ``eigh`` on the formed matrix (test reference, small d).
        See :func:`resolve_solver`.
    v0 : ndarray of shape (n_features,), optional
        Lanczos start vector (the warm start). Pass one: without it ARPACK draws its own, from
        a generator that is not under the caller's control.
    tol : float, default=0.0
        ARPACK's relative accuracy of the Ritz values (0 = machine precision).
    shift_invert : bool or None, default=None
        Lanczos on :math:`(\sigma I - A)^{-1}` (:func:`w_inverse_operator`) rather than on
        :math:`A` (:func:`w_operator`); ``None``: when ``n_samples < n_features``, where the
        Woodbury form is cheap. Both are matrix-free; only the ``"arpack"`` path uses it. If
        ARPACK does not converge on :math:`A` the inverted operator is tried, and if that
        fails too, LAPACK's ``eigh`` on the formed matrix (the result is the same subspace).
    factor : ndarray of shape (n_samples, n_samples), optional
        :func:`isometric_coordinates` of ``Xc``, reused by the shift-invert across W-steps.
    shift_hint : ndarray, optional
        The previous W-step's eigenvalues: the shift-invert then tries :func:`hinted_shift`,
        used only if :func:`certified_shift` proves it above the spectrum (else the Weyl bound
        of :func:`inverse_shift`). Either way the operator is exact; the hint only makes
        Lanczos converge in fewer products.

    Returns
    -------
    W : ndarray of shape (n_features, n_components)
        Orthonormal columns, by decreasing eigenvalue, each with its largest-magnitude entry
        positive.
    eigenvalues : ndarray of shape (n_components,)
        Decreasing.
    """
    n_features = Xc.shape[1]
    if not 1 <= n_components <= n_features:
        raise ValueError(
            f"n_components={n_components} must be between 1 and n_features={n_features}."
        )
    how = resolve_solver(solver, Xc.shape[0], n_features, n_components)
    if how == "dense":
        A = w_matrix(Xc, labels, alpha, beta_d)
        vals, vecs = _top_eigh(A, n_components)
    else:
        op = w_operator(Xc, labels, alpha, beta_d)
        if shift_invert is None:
            shift_invert = Xc.shape[0] < n_features
        vecs = None
        for inverted in (shift_invert, True) if not shift_invert else (True,):
            target = op
            if inverted:
                gram = None
                if shift_hint is not None and len(shift_hint):
                    sigma = hinted_shift(shift_hint)
                    gram = certified_shift(Xc, labels, alpha, beta_d, sigma)
                if gram is None:
                    sigma = inverse_shift(Xc, labels, alpha, beta_d, factor)
                target = w_inverse_operator(Xc, labels, alpha, beta_d, sigma, gram)
            ncv = min(n_features, max(2 * n_components + 1,
                                      _NCV_INVERTED_MIN if inverted else _NCV_MIN))
            try:
                _, vecs = eigsh(target, k=n_components, which="LA", v0=v0, tol=tol, ncv=ncv)
                break
            except ArpackNoConvergence:
                # Lanczos on A stalls when the penalty spreads its spectrum (tall data, strong
                # beta): retry on the shift-inverted operator, then fall back to LAPACK
                continue
        if vecs is None:
            _, vecs = _top_eigh(w_matrix(Xc, labels, alpha, beta_d), n_components)
        # ARPACK's vectors are orthonormal to working precision; one QR pass (same span)
        # makes W^T W = I to rounding, which the constraint and the tests rely on.
        vecs, r = np.linalg.qr(vecs)
        vecs = vecs * np.sign(np.diag(r))
        vals = np.einsum("ij,ij->j", vecs, op @ vecs)  # Rayleigh quotients of A
    vals, vecs = _orient(vals, vecs)
    return vecs, vals


# --------------------------------------------------------------------------------------------
# The U-step: the restart rule
# --------------------------------------------------------------------------------------------


def best_candidate(Y: np.ndarray, candidates: Sequence[np.ndarray]) -> tuple[int, np.ndarray]:
    r"""The candidate labelling with the lowest k-means cost on ``Y`` (eq. 14).

    :math:`U^* = \arg\min_j \|Y - U_j G_j\|_F^2`, each :math:`G_j` the cluster means of
    :math:`U_j`. Ties go to the lowest index, so a caller that lists the previous optimum first
    keeps it unless a candidate is strictly better - which makes the U-step monotone.

    Parameters
    ----------
    Y : ndarray of shape (n_samples, n_dims)
        The projected data :math:`XW`.
    candidates : sequence of ndarray of int, each of shape (n_samples,)

    Returns
    -------
    index : int
    costs : ndarray of shape (len(candidates),)
    """
    if len(candidates) == 0:
        raise ValueError("best_candidate needs at least one candidate labelling.")
    costs = np.array([kmeans_cost(Y, np.asarray(c)) for c in candidates])
    return int(np.argmin(costs)), costs


# --------------------------------------------------------------------------------------------
# The alternating optimisation
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UFCMResult:
    """What :func:`ufcm` returns.

    Attributes
    ----------
    components : ndarray of shape (n_features, n_components)
        :math:`W`, orthonormal columns.
    labels : ndarray of shape (n_samples,)
        The final pseudo-labels :math:`U`.
    objective : ndarray of shape (n_iter + 1,)
        The smoothed objective after the initialisation and after each iteration.
    n_iter : int
        Outer iterations run (re-weighting, U-step, W-step, and the extrapolated W-step of
        ``accelerate`` where one was tried).
    converged : bool
        Whether the relative change fell to ``tol`` before ``max_iter``.
    eigenvalues : ndarray of shape (n_components,)
        Of the last W-step's matrix, decreasing.
    n_w_steps : int
        W-steps solved, rejected extrapolations included.
    abandoned : bool
        Whether ``abandon`` stopped the run (the result is then incomplete).
    """

    components: np.ndarray
    labels: np.ndarray
    objective: np.ndarray
    n_iter: int
    converged: bool
    eigenvalues: np.ndarray
    n_w_steps: int = 0
    abandoned: bool = False


#: Extrapolation (``accelerate``) starts once the labels have not changed for this many
#: U-steps (the three iterates it combines share one labelling).
_ACCEL_STABLE = 2
#: The SQUAREM step length is clipped to [-_ACCEL_MAX_STEP, -1].
_ACCEL_MAX_STEP = 16.0


def _squarem_weights(q0, q1, q2, p: float, eps: float) -> np.ndarray | None:
    r"""Re-weighting diagonal at the SQUAREM extrapolation of three successive squared row
    norms (Varadhan & Roland 2008, scheme S3), or None when there is nothing to extrapolate.

    :math:`r = q_1 - q_0`, :math:`v = q_2 - 2q_1 + q_0`, :math:`a = -\|r\|/\|v\|` (clipped to
    ``[-16, -1]``; -1 is the plain step), :math:`q = \max(q_0 - 2ar + a^2 v, 0)`, then
    :func:`reweight`'s formula at q.
    """
    r = q1 - q0
    v = q2 - 2.0 * q1 + q0
    nv = float(np.linalg.norm(v))
    if nv == 0.0 or not np.isfinite(nv):
        return None
    a = min(max(-float(np.linalg.norm(r)) / nv, -_ACCEL_MAX_STEP), -1.0)
    q = np.maximum(q0 - 2.0 * a * r + a * a * v, 0.0)
    return (p / 2.0) * (q + eps) ** ((p - 2.0) / 2.0)


def ufcm(
    Xc: np.ndarray,
    labels: np.ndarray,
    *,
    n_components: int,
    alpha: float,
    beta: float,
    p: float,
    propose: Callable[[np.ndarray, np.ndarray], Sequence[np.ndarray]],
    v0: np.ndarray,
    max_iter: int = 30,
    tol: float = 1e-5,
    solver: str = "auto",
    callback: Callable[[int, np.ndarray, np.ndarray], None] | None = None,
    factor: np.ndarray | None = None,
    accelerate: bool = True,
    abandon: Callable[[int, np.ndarray, np.ndarray, np.ndarray], bool] | None = None,
    w_step_tol: float = W_STEP_TOL,
) -> UFCMResult:
    r"""The UFCM alternating optimisation (specs/ufcm.md B.5-B.7).

    Initialisation: :math:`D = I`, :math:`U` = ``labels``, :math:`W` from the W-step. Then,
    until the relative change of the objective is at most ``tol`` or ``max_iter`` iterations:

    1. :math:`D` from :math:`W` (eq. 7, smoothed with :func:`smoothing_eps`);
    2. U-step (eq. 14): the candidates are the previous :math:`U` followed by
       ``propose(Y, U)`` (:math:`Y = XW`); :func:`best_candidate` keeps the cheapest, the
       previous one on ties;
    3. W-step (eq. 13) on :math:`A(U, D)`, Lanczos warm-started from the previous :math:`W`;
    4. the objective.

    Both steps cannot decrease the smoothed objective :math:`J_\varepsilon` (the U-step keeps
    the previous labels among its candidates and uses optimal centroids; the W-step maximises a
    minorant of :math:`J_\varepsilon` that touches it at the previous :math:`W`), so the recorded
    history is non-decreasing up to the eigensolver's rounding (eqs. 15-16).

    **Acceleration** (``accelerate``). With fixed labels the re-weighting is a fixed-point
    iteration on the squared row norms :math:`q_i = \|w^i\|^2`, linearly convergent and slow
    for :math:`p < 1` (relative gains of 1e-4 over tens of iterations at d = 10^4). Once the
    labels have held for two U-steps, the last three :math:`q` are extrapolated by SQUAREM
    (:func:`_squarem_weights`) and one W-step is solved with the re-weighting at the
    extrapolated point; that W replaces the iteration's own when its objective is at least
    as high (so the history stays non-decreasing; a rejected try costs one W-step). Measured
    (issue #33) on the design of ``benchmarks/bench_ufcm.py`` at 200 x 10^4, screen start:
    24 iterations instead of 48 to the stopping rule, and a higher final objective (3556.3
    against 3549.5, where the plain iteration stopped on its slow tail); on the embedded
    default the plain iteration stops at 251.5 with ``tol=1e-4`` and reaches 264.3 only with
    ``tol=1e-5`` (38 iterations), the accelerated one reaches 264.3 at ``tol=1e-4``.

    Parameters
    ----------
    Xc : ndarray of shape (n_samples, n_features)
        Centred data without constant columns (see :func:`prepare_data`).
    labels : ndarray of int, shape (n_samples,)
        Initial pseudo-labels (k-means on the data).
    n_components : int
        :math:`d'`.
    alpha, beta : float >= 0
        Weights of the k-means term and of the penalty (``beta`` in the scale of ``Xc``).
    p : float in (0, 2]
    propose : callable ``(Y, labels) -> sequence of label arrays``
        The candidate labellings of the U-step other than the previous one (the estimator
        returns the k-means refinement of ``labels`` and ``r`` fresh k-means runs on ``Y``).
    v0 : ndarray of shape (n_features,)
        Random start vector of the first Lanczos run; later runs start from the previous
        :math:`W` (its columns summed, plus 1% of ``v0``).
    max_iter : int, default=30
    tol : float, default=1e-5
        Stop when :math:`|J_t - J_{t-1}| \le` ``tol`` :math:`\cdot |J_{t-1}|`.
    solver : {"auto", "arpack", "dense"}, default="auto"
        See :func:`w_step`.
    callback : callable ``(iteration, W, labels)``, optional
        Called after the initialisation (iteration 0) and after every iteration.
    factor : ndarray, optional
        :func:`isometric_coordinates` of ``Xc`` if the caller has it; for wide data it is
        otherwise computed once here (the shift-invert W-steps reuse it).
    accelerate : bool, default=True
        Extrapolate the re-weighting (above).
    abandon : callable ``(iteration, history, W, labels) -> bool``, optional
        Asked after every iteration; True stops the run (``abandoned`` in the result): the
        estimator's rule for a start that cannot win (``sparsefs.selection.UFCM``).
    w_step_tol : float, default=W_STEP_TOL
        ARPACK's relative accuracy of the Ritz values (:func:`w_step`'s ``tol``).

    Returns
    -------
    UFCMResult
    """
    n_features = Xc.shape[1]
    eps = smoothing_eps(n_features, n_components)
    v0 = np.asarray(v0, dtype=np.float64)
    v0 = v0 / np.linalg.norm(v0)
    labels = np.asarray(labels)
    n_samples = Xc.shape[0]
    wide = n_samples < n_features
    if factor is None and wide and resolve_solver(solver, *Xc.shape, n_components) == "arpack":
        factor = isometric_coordinates(Xc)
    n_w_steps = 0

    def step(d_weights: np.ndarray, start: np.ndarray, hint=None) -> tuple[np.ndarray, np.ndarray]:
        nonlocal n_w_steps
        n_w_steps += 1
        return w_step(
            Xc, labels, alpha, beta * d_weights, n_components, solver=solver, v0=start,
            factor=factor if wide else None, shift_hint=hint, tol=w_step_tol,
        )

    def warm(W: np.ndarray) -> np.ndarray:
        start = W.sum(axis=1)
        size = float(np.linalg.norm(start))
        # the columns of W can cancel (sum 0): then the random start alone
        return start / size + _V0_NOISE * v0 if size > 0.0 else v0

    W, vals = step(np.ones(n_features), v0)
    history = [objective(Xc, W, labels, alpha, beta, p, eps)]
    if callback is not None:
        callback(0, W, labels)
    converged = abandoned = False
    n_iter = 0
    stable = 0  # U-steps since the labels last changed
    norms: list[np.ndarray] = []  # squared row norms of the iterates since then (last 3)
    while n_iter < max_iter:
        n_iter += 1
        d_weights = reweight(W, p, eps)
        Y = Xc @ W
        candidates = [labels, *propose(Y, labels)]
        best, _ = best_candidate(Y, candidates)
        labels = np.asarray(candidates[best])
        stable = stable + 1 if best == 0 else 0
        if best != 0:
            norms = []
        W, vals = step(d_weights, warm(W), vals)
        value = objective(Xc, W, labels, alpha, beta, p, eps)
        norms = [*norms, np.einsum("ij,ij->i", W, W)][-3:]
        settled = abs(value - history[-1]) <= tol * abs(history[-1])
        if accelerate and not settled and stable >= _ACCEL_STABLE and len(norms) == 3:
            # the extrapolated W-step; kept (as this iteration's W) only if it is not worse,
            # so the history stays non-decreasing
            d_acc = _squarem_weights(*norms, p, eps)
            norms = norms[-1:]
            if d_acc is not None:
                W_acc, vals_acc = step(d_acc, warm(W), vals)
                value_acc = objective(Xc, W_acc, labels, alpha, beta, p, eps)
                if value_acc >= value:
                    W, vals, value = W_acc, vals_acc, value_acc
                    norms = [np.einsum("ij,ij->i", W, W)]
        history.append(value)
        if callback is not None:
            callback(n_iter, W, labels)
        if abs(history[-1] - history[-2]) <= tol * abs(history[-2]):
            converged = True
            break
        if abandon is not None and abandon(n_iter, np.asarray(history), W, labels):
            abandoned = True
            break
    return UFCMResult(
        components=W,
        labels=labels,
        objective=np.asarray(history),
        n_iter=n_iter,
        converged=converged,
        eigenvalues=vals,
        n_w_steps=n_w_steps,
        abandoned=abandoned,
    )
