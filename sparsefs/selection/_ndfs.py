"""NDFS: nonnegative spectral analysis with an l2,1-regularised regression."""

import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from sparsefs._kernels import ndfs as _kernel
from sparsefs._kernels.columns import constant_columns, power_of_two_scale, tie_duplicate_scores
from sparsefs._kernels.graphs import normalized_laplacian
from sparsefs.base import BaseSelector, _zero_blas_flops
from sparsefs.selection._graph_common import (
    AFFINITY_CONSTRAINTS,
    as_float_input,
    build_knn_graph,
    check_n_clusters,
    default_n_select,
    effective_neighbors,
)
from sparsefs.utils._sklearn_compat import Interval

__all__ = ["NDFS"]


class NDFS(BaseSelector):
    r"""Nonnegative discriminative feature selection (Li et al., 2012); unsupervised.

    Jointly learns nonnegative scaled cluster indicators :math:`F` (n x c) that are smooth on
    the kNN graph of the samples and a row-sparse regression :math:`W` (d x c) predicting them
    from the features:

    .. math::

        \min_{F, W}\ \operatorname{Tr}(F^\top\mathcal LF)
          + \alpha\big(\|XW - F\|_F^2 + \beta\|W\|_{2,1}\big)
          + \frac\gamma2\|F^\top F - I\|_F^2 \quad\text{s.t. } F \ge 0,

    with :math:`\mathcal L` the normalised Laplacian of the heat-kernel kNN graph (the
    orthogonality :math:`F^\top F = I` of the paper is enforced by the penalty with a large
    :math:`\gamma`). For fixed :math:`D = \mathrm{diag}(1/(2\|w^i\|))`,
    :math:`W = (X^\top X + \beta D)^{-1}X^\top F`; F follows a multiplicative update; D is
    re-weighted; until the objective settles. Features are ranked by :math:`\|w^i\|_2`.

    **Solved in the small dimension**: the d x d system is never formed when n < d — by
    Woodbury, :math:`W = \Lambda^{-1}X^\top(I + X\Lambda^{-1}X^\top)^{-1}F` with
    :math:`\Lambda = \beta D`, one n x n Cholesky factor per iteration (a d x d one when
    n > d), and the n x n matrix M of the F-update is only ever applied to F.

    **Update of F.** The paper's rule :math:`F \leftarrow F\circ\gamma F / (MF + \gamma FF^\top F)`
    maps a scaled orthonormal :math:`F = sQ` to :math:`Q/s`: once :math:`\gamma` dominates it
    cycles with period two and never converges. sparsefs uses the square root of the same
    ratio (the orthogonal-NMF update of Ding et al., 2006), which has the same fixed points
    and converges; entries of :math:`MF` that are negative move to the numerator, so F stays
    nonnegative for any :math:`\gamma`. See ``docs/methods/ndfs.md``.

    **Initialisation.** F starts from k-means on X (scikit-learn ``KMeans`` with ``n_init``
    starts, seeded from ``random_state``) as the scaled indicator
    :math:`G(G^\top G)^{-1/2}` plus 0.2 times its mean non-zero entry (a multiplicative update
    cannot move an exact zero). Two fits with the same ``random_state`` agree exactly.

    Constant features are left out and score 0, below every other feature. X is used as
    given (no centring, as in the paper).

    ``X`` : {array-like, sparse matrix} of shape (n_samples, n_features). Sparse X (CSR/CSC,
    float64 or float32) is never densified: the kNN graph, k-means (scikit-learn's sparse
    ``KMeans``), the n x n matrix :math:`X\Lambda^{-1}X^\top` (the d x d Gram when n > d)
    and every product with X are sparse; the result equals the dense fit up to rounding.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
        An int count, a float fraction in (0, 1] (rounded down, at least 1), or ``None``:
        the l2,1 re-weighting shrinks rows without zeroing them, so there is no count of its
        own; ``None`` keeps the best 10 % (at least one), as ``SelectPercentile``.
    n_clusters : int, default=5
        :math:`c`, the number of clusters (at most ``n_samples``).
    n_neighbors : int, default=5
        :math:`k` of the kNN graph (capped at ``n_samples - 1``).
    affinity : {"heat", "binary", "cosine"}, default="heat"
        Edge weights (see :class:`LaplacianScore`).
    bandwidth : float or None, default=None
        The heat-kernel :math:`t`; ``None``: the mean squared neighbour distance.
    alpha : float, default=1.0
        :math:`\alpha > 0`, the weight of the regression block.
    beta : float, default=100.0
        :math:`\beta > 0`, the weight of :math:`\|W\|_{2,1}`, **relative to the data's
        scale**: the fit uses :math:`\beta\, r` with :math:`r = \|X\|_F / \sqrt{nd}` the
        root-mean-square entry of X (stored as ``beta_``), so X and cX give the same
        selection for every c > 0 (the absolute weight has the units of X, as
        :math:`\beta D` competes with :math:`X^\top X`). For unit-variance features
        :math:`r \approx 1`, the paper's absolute scale. The paper tunes
        :math:`\alpha, \beta` over :math:`\{10^{-6}, \dots, 10^6\}`; 100 recovered the
        planted features best on unit-variance designs (``docs/methods/ndfs.md``).
    gamma : float, default=1e8
        :math:`\gamma > 0`, the orthogonality penalty (the paper's :math:`10^8`).
    max_iter : int, default=300
        Maximum number of iterations.
    tol : float, default=1e-6
        Stop when the objective changes by at most ``tol`` times its magnitude.
    n_init : int, default=10
        Starts of the k-means initialisation.
    random_state : int, RandomState instance or None, default=None
        Seeds the k-means initialisation.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features_in_,)
        :math:`\|w^i\|_2 / \max_j\|w^j\|_2` (1 for the best feature, 0 for constant
        features): the row norms, relative so that they stay representable at any scale of X.
    weights_ : ndarray of shape (n_features_in_, n_clusters)
        W in the units of X (zero rows for constant features; for X near 1e+-300 with extreme
        ``beta`` it can under- or overflow, ``scores_`` cannot).
    indicator_ : ndarray of shape (n_samples, n_clusters)
        The final nonnegative indicator F.
    labels_init_ : ndarray of shape (n_samples,)
        The k-means labels F started from.
    n_iter_ : int
    objective_ : ndarray of shape (n_iter_,)
        The penalised objective above after each iteration.
    converged_ : bool
    beta_ : float
        The absolute weight :math:`\beta r` used (``inf`` / 0 only for X near 1e+-300,
        where the fit itself runs in rescaled units and is unaffected).
    n_neighbors_ : int
    bandwidth_ : float or None
    ranking_, support_, n_features_to_select_, n_features_in_, feature_names_in_
        As in every sparsefs selector.

    References
    ----------
    .. [1] Z. Li, Y. Yang, J. Liu, X. Zhou and H. Lu, "Unsupervised feature selection using
       nonnegative spectral analysis", Proceedings of the 26th AAAI Conference on Artificial
       Intelligence (AAAI 2012), pp. 1026-1032.
    .. [2] C. Ding, T. Li, W. Peng and H. Park, "Orthogonal nonnegative matrix
       tri-factorizations for clustering", KDD 2006 (the square-root update).

    Examples
    --------
    >>> from sparsefs.datasets import make_planted_classification
    >>> from sparsefs.selection import NDFS
    >>> data = make_planted_classification(n_samples=90, n_features=300, random_state=0)
    >>> selector = NDFS(n_features_to_select=20, n_clusters=3, random_state=0).fit(data.X)
    >>> int((selector.support_ & data.support).sum()) >= 15
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        **BaseSelector._parameter_constraints,
        **AFFINITY_CONSTRAINTS,
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "beta": [Interval(Real, 0, None, closed="neither")],
        "gamma": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }
    _supervised = False
    _accept_sparse = ("csr", "csc")

    def __init__(self, n_features_to_select=None, *, n_clusters=5, n_neighbors=5,
                 affinity="heat", bandwidth=None, alpha=1.0, beta=100.0, gamma=1e8,
                 max_iter=300, tol=1e-6, n_init=10, random_state=None):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.n_neighbors = n_neighbors
        self.affinity = affinity
        self.bandwidth = bandwidth
        self.alpha = alpha
        self.beta = beta
        self.gamma = gamma
        self.max_iter = max_iter
        self.tol = tol
        self.n_init = n_init
        self.random_state = random_state

    _blas_flops = _zero_blas_flops

    def _fit(self, X, y_idx):
        X = as_float_input(self, X)
        n, d = X.shape
        check_n_clusters(self, self.n_clusters, n, "n_samples")
        rng = check_random_state(self.random_state)
        seed = int(rng.randint(np.iinfo(np.int32).max))
        graph = build_knn_graph(X, self.n_neighbors, self.affinity, self.bandwidth)
        const = constant_columns(X)
        keep = np.flatnonzero(~const)
        Xk = X[:, keep]
        if keep.size:
            # k-means labels do not change when X is scaled; a power of two keeps values near
            # 1e+-300 representable in its squared distances
            labels = KMeans(
                n_clusters=self.n_clusters, n_init=self.n_init, random_state=seed
            ).fit(_kmeans_input(Xk / power_of_two_scale(Xk))).labels_
        else:
            labels = np.arange(n) % self.n_clusters
        F0 = _kernel.ndfs_initial_indicator(labels, self.n_clusters)
        W = np.zeros((d, self.n_clusters))
        scores = np.zeros(d)
        if keep.size:
            res = _kernel.ndfs(
                Xk, normalized_laplacian(graph.W), F0, alpha=self.alpha, beta=self.beta,
                gamma=self.gamma, max_iter=self.max_iter, tol=self.tol, relative_beta=True,
            )
            W[keep] = res.W
            scores[keep] = np.linalg.norm(res.V, axis=1)
            F, n_iter, objective, converged = res.F, res.n_iter, res.objective, res.converged
        else:
            F, n_iter, objective, converged = F0, 0, np.zeros(0), True
        with np.errstate(over="ignore", under="ignore"):
            s = power_of_two_scale(Xk) if keep.size else 1.0
            rms = float(np.sqrt(_kernel.mean_square(Xk / s))) if keep.size else 0.0
            self.beta_ = float(self.beta * rms * s) if rms > 0 else float(self.beta)
        self.weights_ = W
        self.indicator_ = F
        self.labels_init_ = labels
        self.n_iter_ = n_iter
        self.objective_ = objective
        self.converged_ = converged
        self.n_neighbors_ = effective_neighbors(self.n_neighbors, n)
        self.bandwidth_ = graph.bandwidth
        if not converged:
            warnings.warn(
                f"NDFS stopped at max_iter={self.max_iter} before the objective settled "
                f"(tol={self.tol}); increase max_iter.",
                ConvergenceWarning,
                stacklevel=3,
            )
        self.n_features_to_select_ = default_n_select(self, d)
        # exact copies of a column get exactly equal scores (rounding removed)
        self._set_selection(tie_duplicate_scores(X, scores))


def _kmeans_input(X):
    """X for scikit-learn's ``KMeans``: sparse X as CSR with 32-bit indices (which it needs)."""
    if not sp.issparse(X):
        return X
    X = sp.csr_array(X)
    if X.indices.dtype != np.int32 and max(X.nnz, *X.shape) < np.iinfo(np.int32).max:
        X = sp.csr_array(
            (X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), shape=X.shape
        )
    return X
