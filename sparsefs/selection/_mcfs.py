"""MCFS: multi-cluster feature selection by spectral embedding and sparse regression."""

import warnings
from numbers import Integral
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import lars_path

from sparsefs._kernels import mcfs as _kernel
from sparsefs._kernels.columns import constant_columns, duplicate_column_groups, power_of_two_scale
from sparsefs._kernels.mcfs_lars import lasso_at_cardinality_sparse
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

__all__ = ["MCFS"]

#: score of a constant feature, below every max |coefficient| (which is >= 0)
CONSTANT_SCORE = -1.0


class MCFS(BaseSelector):
    r"""Multi-cluster feature selection (Cai, Zhang & He, 2010); unsupervised.

    1. Build the kNN graph W of the samples (as :class:`LaplacianScore`), with
       :math:`D = \mathrm{diag}(W\mathbf 1)`, :math:`L = D - W`, and take the :math:`K`
       generalised eigenvectors :math:`y_1..y_K` of :math:`Ly = \lambda Dy` with the smallest
       eigenvalues, leaving out the trivial :math:`y = \mathbf 1`: the flat embedding of the
       :math:`K` clusters.
    2. For each :math:`y_k` solve the :math:`\ell_1`-constrained regression
       :math:`\min_{a_k}\|y_k - Xa_k\|^2` s.t. :math:`|a_k|_1 \le \gamma` with LARS (the lasso
       path, :func:`sklearn.linear_model.lars_path`, features and :math:`y_k` centred), stopped
       as the paper does when :math:`a_k` has ``n_nonzero_coefs`` non-zero entries (at most
       ``n_samples - 1``: the path ends there).
    3. Score :math:`\mathrm{MCFS}(j) = \max_k |a_{k,j}|` and keep the best.

    The **absolute** value is the paper's: a feature whose coefficients are all large and
    negative explains the cluster structure as well as a positive one (the sign of an
    eigenvector is arbitrary). scikit-feature ranks by the signed maximum
    (``jundongl/scikit-feature#23``, closed as fixed but still present in 1.2.1).

    The eigenvectors come from a dense ``eigh`` up to 1000 samples, from Lanczos (``eigsh``)
    on the sparse graph above. The method is deterministic (no random initialisation).
    Constant features are left out of the regressions and score ``-1``, below every other
    feature; features that never enter a regression score 0 and tie (lower index first).

    ``X`` : {array-like, sparse matrix} of shape (n_samples, n_features). Sparse X (CSR/CSC,
    float64 or float32) is never densified: the kNN graph comes from sparse row products, and
    the LARS steps run on the implicitly centred columns (correlations
    :math:`X^\top v - \mu(\mathbf 1^\top v)` by sparse products, only the at most
    ``n_samples - 1`` active columns densified); the result equals the dense fit up to rounding.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
        An int count, a float fraction in (0, 1] (rounded down, at least 1), or ``None``:
        the best 10 % (at least one), as scikit-learn's ``SelectPercentile``. The paper sets
        the cardinality of every :math:`a_k` to this number unless ``n_nonzero_coefs`` is given.
    n_clusters : int, default=5
        :math:`K`, the number of clusters = eigenvectors (at most ``n_samples - 1``).
    n_neighbors : int, default=5
        :math:`p`, the number of nearest neighbours (capped at ``n_samples - 1``).
    affinity : {"heat", "binary", "cosine"}, default="heat"
        Edge weights: heat kernel, 0-1, or cosine (see :class:`LaplacianScore`).
    bandwidth : float or None, default=None
        The heat-kernel :math:`t`; ``None``: the mean squared neighbour distance.
    n_nonzero_coefs : int or None, default=None
        Cardinality at which each LARS path stops; ``None``: the number of features to select.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features_in_,)
        :math:`\max_k|a_{k,j}|` (``-1`` for constant features). LARS runs on the distinct
        columns (it would enter one of two identical columns arbitrarily); an exact copy of a
        column gets the score of its first occurrence (equal scores, lower index first) and
        a zero row in ``coef_``.
    mcfs_scores_ : ndarray of shape (n_features_in_,)
        :math:`\max_k|a_{k,j}|` (0 for constant features).
    coef_ : ndarray of shape (n_features_in_, n_clusters)
        The sparse coefficient vectors :math:`a_k` as columns, in the units of X.
    eigenvalues_ : ndarray of shape (n_clusters,)
        :math:`\lambda_1..\lambda_K` of the embedding, increasing.
    n_nonzero_coefs_ : int
        The cardinality used.
    n_neighbors_ : int
    bandwidth_ : float or None
    ranking_, support_, n_features_to_select_, n_features_in_, feature_names_in_
        As in every sparsefs selector.

    References
    ----------
    .. [1] D. Cai, C. Zhang and X. He, "Unsupervised feature selection for multi-cluster
       data", Proceedings of the 16th ACM SIGKDD International Conference on Knowledge
       Discovery and Data Mining (KDD 2010), pp. 333-342.

    Examples
    --------
    >>> from sparsefs.datasets import make_planted_classification
    >>> from sparsefs.selection import MCFS
    >>> data = make_planted_classification(random_state=0)  # 100 x 2000, 20 planted
    >>> selector = MCFS(n_features_to_select=20, n_clusters=3).fit(data.X)
    >>> int((selector.support_ & data.support).sum())  # chance level: 0.2
    9
    """

    _parameter_constraints: ClassVar[dict] = {
        **BaseSelector._parameter_constraints,
        **AFFINITY_CONSTRAINTS,
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "n_nonzero_coefs": [Interval(Integral, 1, None, closed="left"), None],
    }
    _supervised = False
    _accept_sparse = ("csr", "csc")

    def __init__(self, n_features_to_select=None, *, n_clusters=5, n_neighbors=5,
                 affinity="heat", bandwidth=None, n_nonzero_coefs=None):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.n_neighbors = n_neighbors
        self.affinity = affinity
        self.bandwidth = bandwidth
        self.n_nonzero_coefs = n_nonzero_coefs

    _blas_flops = _zero_blas_flops

    def _fit(self, X, y_idx):
        X = as_float_input(self, X)
        n, d = X.shape
        check_n_clusters(self, self.n_clusters, n - 1, "n_samples - 1")
        graph = build_knn_graph(X, self.n_neighbors, self.affinity, self.bandwidth)
        eigenvalues, Y = _kernel.mcfs_embedding(graph.W, self.n_clusters)
        self.n_features_to_select_ = default_n_select(self, d)
        const = constant_columns(X)
        # LARS runs on the distinct columns: a copy adds nothing to the regressions and LARS
        # would enter one of two identical columns arbitrarily; each copy then gets the score
        # of its first occurrence (exact ties, lower index first, as the contract asks)
        first = duplicate_column_groups(X)
        copies = first != np.arange(d)
        keep = np.flatnonzero(~const & ~copies)
        card = self.n_nonzero_coefs if self.n_nonzero_coefs is not None else (
            self.n_features_to_select_
        )
        card = int(min(card, keep.size, n - 1)) if keep.size else 0
        coef = np.zeros((d, self.n_clusters))
        if card > 0 and sp.issparse(X):
            # the same LARS steps on the implicitly centred sparse columns (never densified)
            scale = power_of_two_scale(X[:, keep])
            Sk = sp.csc_array(X[:, keep]) / scale
            mean = np.asarray(Sk.sum(axis=0)).ravel() / n
            for k in range(self.n_clusters):
                res = lasso_at_cardinality_sparse(Sk, mean, Y[:, k], card)
                if res.stopped_early:  # scikit-learn's lars_path warns there (dense X)
                    warnings.warn(
                        "Early stopping the lars path, as the residues are small and the "
                        "current value of alpha is no longer well controlled.",
                        ConvergenceWarning, stacklevel=2,
                    )
                coef[keep, k] = res.coef / scale
        elif card > 0:
            scale = power_of_two_scale(X[:, keep])
            Xc = X[:, keep] / scale
            Xc -= Xc.mean(axis=0)
            for k in range(self.n_clusters):
                coef[keep, k] = _lasso_at_cardinality(Xc, Y[:, k], card) / scale
        raw = _kernel.mcfs_scores(coef)
        raw[copies] = raw[first[copies]]
        scores = raw.copy()
        scores[const] = CONSTANT_SCORE
        self.coef_ = coef
        self.mcfs_scores_ = raw
        self.eigenvalues_ = eigenvalues
        self.n_nonzero_coefs_ = card
        self.n_neighbors_ = effective_neighbors(self.n_neighbors, n)
        self.bandwidth_ = graph.bandwidth
        self._set_selection(scores)


def _lasso_at_cardinality(Xc: np.ndarray, y: np.ndarray, cardinality: int) -> np.ndarray:
    """Lasso-path (LARS) coefficients at the first knot with ``cardinality`` non-zeros.

    ``Xc`` has centred columns; ``y`` is centred here (an intercept). When the path ends
    before reaching the cardinality (at most ``n_samples - 1`` non-zeros), its last point is
    returned.
    """
    yc = y - y.mean()
    if not np.any(yc):
        return np.zeros(Xc.shape[1])
    # One LARS step adds or drops one variable: cardinality + 1 steps suffice unless variables
    # leave the active set; the path is extended (doubling the steps) only when they do.
    max_iter = cardinality + 1
    while True:
        _, _, coefs, n_iter = lars_path(
            Xc, yc, method="lasso", max_iter=max_iter, return_n_iter=True
        )
        reached = np.flatnonzero(np.count_nonzero(coefs, axis=0) >= cardinality)
        if reached.size or n_iter < max_iter:  # reached, or the path ended before max_iter
            return coefs[:, reached[0] if reached.size else -1]
        max_iter *= 2
