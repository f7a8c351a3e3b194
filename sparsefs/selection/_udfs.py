"""UDFS: unsupervised discriminative feature selection with an l2,1 penalty."""

import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from sparsefs._kernels import udfs as _kernel
from sparsefs._kernels.centered import CenteredSparse
from sparsefs._kernels.columns import constant_columns, power_of_two_scale, tie_duplicate_scores
from sparsefs._kernels.graphs import knn_search
from sparsefs._kernels.l21 import prepare_design
from sparsefs.base import BaseSelector, _zero_blas_flops
from sparsefs.selection._graph_common import (
    as_float_input,
    default_n_select,
    effective_neighbors,
)
from sparsefs.utils._sklearn_compat import Interval

__all__ = ["UDFS"]


class UDFS(BaseSelector):
    r"""l2,1-norm regularised discriminative feature selection (Yang et al., 2011); unsupervised.

    For every sample :math:`x_i`, its local set :math:`N_i` is the sample and its :math:`k`
    nearest neighbours, :math:`\tilde X_i` their data centred by
    :math:`H = I_{k+1} - \frac1{k+1}\mathbf 1\mathbf 1^\top`, and :math:`S_i` the 0-1 matrix
    that selects :math:`N_i` from the n samples. In the paper's notation (X is d x n),

    .. math::

        M = X\Big[\sum_{i=1}^n S_i H(\tilde X_i^\top\tilde X_i + \lambda I)^{-1}HS_i^\top\Big]
            X^\top,
        \qquad
        \min_{W^\top W = I_c}\ \operatorname{Tr}(W^\top MW) + \gamma\|W\|_{2,1},

    the local discriminative criterion (local total scatter regularised by :math:`\lambda`)
    plus a row-sparsity penalty weighted by :math:`\gamma`. It is solved by the paper's
    iteration: :math:`D = I`; repeat W = the c eigenvectors of :math:`M + \gamma D` with the
    smallest eigenvalues, :math:`D_{ii} = 1/(2\|w^i\|)`; until the objective settles. Features
    are ranked by :math:`\|w^i\|_2` (``scores_``).

    :math:`\lambda` (``ridge``) and :math:`\gamma` (``gamma``) are separate parameters, and
    :math:`S_i` selects the sample and its own neighbours (scikit-feature conflates
    :math:`\lambda` with :math:`\gamma` and mis-indexes :math:`S_i`,
    ``jundongl/scikit-feature#69``).

    **Solved in the small dimension.** M has rank at most n. For d > 1000 features and fewer
    samples than features, :math:`M + \gamma D` is diagonal plus rank :math:`\le n` and its
    smallest eigenvectors come from Lanczos on its inverse applied by Woodbury's identity
    (O(nd) per product); no d x d matrix is formed. Below that, M is formed and ``eigh``
    is used. The method is deterministic. The fit runs on one BLAS thread (threadpoolctl): the
    eigen-solves gain nothing from threads and, on shared cores, lose up to 100-fold.

    **First step.** When d - rank(M) > c (always when d > n + c), the paper's first step
    (D = I) has a whole eigenspace of minimisers; sparsefs averages over it (the expected row
    norms of a random orthonormal c-frame of the null space of M) instead of letting an
    eigensolver pick one arbitrarily. See ``docs/methods/udfs.md``.

    **Scale.** UDFS is not invariant to rescaling features. When d > n the trace term is 0 on
    the whole null space of M (the directions orthogonal to the samples), so the ranking is
    decided by how each feature's column lies in the span of the samples - which depends
    directly on the features' variances. On the raw 100 x 2000 planted design the
    class-shifted features, whose variance is inflated by the between-class spread, never
    reach the top 20 (0/20). So by default (``standardize=True``) every feature is scaled to
    unit variance first, the usual protocol of the unsupervised feature-selection papers, and
    the neighbourhoods are found on the scaled data too: 11/20 on that design (scikit-feature's
    UDFS: 6-7/20 on raw, 11/20 on standardised X). ``standardize=False`` uses X as given.
    Constant features are left out and score 0, below every other feature.

    ``X`` : {array-like, sparse matrix} of shape (n_samples, n_features). Sparse X (CSR/CSC,
    float64 or float32) is never densified: the standardised design is the scaled sparse
    matrix with implicit column means, the local Gram matrices come from sparse row products,
    and in the low-rank path :math:`U = X^\top R` is only applied (its capacitance matrices
    from the n x n row Gram); the result equals the dense fit up to rounding.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
        An int count, a float fraction in (0, 1] (rounded down, at least 1), or ``None``:
        the l2,1 iteration shrinks rows without zeroing them, so there is no count of its
        own; ``None`` keeps the best 10 % (at least one), as ``SelectPercentile``.
    n_clusters : int or None, default=None
        :math:`c`, the number of clusters = columns of W (at most the number of non-constant
        features). ``None``: ``min(5, number of non-constant features)``, so that ``UDFS()``
        works on few features; the value used is ``n_clusters_``.
    n_neighbors : int, default=5
        :math:`k`, the neighbours in each local set (capped at ``n_samples - 1``).
    gamma : float, default=1.0
        :math:`\gamma > 0`, the weight of :math:`\|W\|_{2,1}`.
    ridge : float, default=1.0
        :math:`\lambda > 0`, the ridge of the local total scatter
        :math:`\tilde X_i^\top\tilde X_i + \lambda I` (in squared units of the features, after
        ``standardize``).
    max_iter : int, default=300
        Maximum number of W updates (the re-weighting converges linearly; 20-150 updates
        are typical).
    tol : float, default=1e-5
        Stop when the objective changes by at most ``tol`` times its magnitude (the
        re-weighting converges slowly near the end; the ranking is settled long before).
    standardize : bool, default=True
        Scale every feature to unit variance before building the neighbourhoods and M (see
        **Scale**); centring changes nothing (M and the neighbours are translation invariant).

    Attributes
    ----------
    scores_ : ndarray of shape (n_features_in_,)
        :math:`\|w^i\|_2` (0 for constant features).
    weights_ : ndarray of shape (n_features_in_, n_clusters_)
        W, with zero rows for constant features.
    n_clusters_ : int
        :math:`c` used (``n_clusters``, or its default resolved on the data).
    n_iter_ : int
        W updates made.
    objective_ : ndarray of shape (n_iter_,)
        :math:`\operatorname{Tr}(W^\top MW) + \gamma\|W\|_{2,1}` after each update.
    converged_ : bool
    degenerate_start_ : bool
        Whether the first step was the null-space average.
    n_neighbors_ : int
    ranking_, support_, n_features_to_select_, n_features_in_, feature_names_in_
        As in every sparsefs selector.

    References
    ----------
    .. [1] Y. Yang, H. T. Shen, Z. Ma, Z. Huang and X. Zhou, "l2,1-norm regularized
       discriminative feature selection for unsupervised learning", Proceedings of the 22nd
       International Joint Conference on Artificial Intelligence (IJCAI 2011), pp. 1589-1594.
    .. [2] F. Nie, H. Huang, X. Cai and C. Ding, "Efficient and robust feature selection via
       joint l2,1-norms minimization", NIPS 2010 (the re-weighting iteration).

    Examples
    --------
    >>> import numpy as np
    >>> from sparsefs.selection import UDFS
    >>> X = np.random.default_rng(0).normal(size=(40, 12))
    >>> UDFS(n_features_to_select=3, n_clusters=2).fit(X).get_support().sum()
    np.int64(3)
    """

    _parameter_constraints: ClassVar[dict] = {
        **BaseSelector._parameter_constraints,
        "n_clusters": [Interval(Integral, 1, None, closed="left"), None],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "gamma": [Interval(Real, 0, None, closed="neither")],
        "ridge": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "standardize": ["boolean"],
    }
    _supervised = False
    _accept_sparse = ("csr", "csc")

    def __init__(self, n_features_to_select=None, *, n_clusters=None, n_neighbors=5, gamma=1.0,
                 ridge=1.0, max_iter=300, tol=1e-5, standardize=True):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.n_neighbors = n_neighbors
        self.gamma = gamma
        self.ridge = ridge
        self.max_iter = max_iter
        self.tol = tol
        self.standardize = standardize

    _blas_flops = _zero_blas_flops

    def _fit(self, X, y_idx):
        X = as_float_input(self, X)
        n, d = X.shape
        const = constant_columns(X)
        keep = np.flatnonzero(~const)
        c = min(5, keep.size) if self.n_clusters is None else self.n_clusters
        if c > keep.size or c < 1:
            raise ValueError(
                f"UDFS: n_clusters={self.n_clusters} exceeds n_features={keep.size} (the "
                "number of non-constant features); W has orthonormal columns, so pass "
                f"n_clusters <= {keep.size}."
            )
        Xk = X[:, keep]
        if self.standardize:  # sparse X: the scaled sparse matrix and its (implicit) means
            Xk = prepare_design(Xk, center=True, standardize=True).X
        k = effective_neighbors(self.n_neighbors, n)
        # the neighbourhoods are translation invariant: sparse X searches its uncentred rows
        rows = Xk.S if isinstance(Xk, CenteredSparse) else Xk
        neighbors, _ = knn_search(rows / power_of_two_scale(rows), k)
        res = _kernel.udfs(
            Xk, neighbors, c, gamma=self.gamma, ridge=self.ridge,
            max_iter=self.max_iter, tol=self.tol,
        )
        W = np.zeros((d, c))
        self.n_clusters_ = c
        W[keep] = res.W
        self.weights_ = W
        self.n_iter_ = res.n_iter
        self.objective_ = res.objective
        self.converged_ = res.converged
        self.degenerate_start_ = res.degenerate_start
        self.n_neighbors_ = k
        if not res.converged:
            warnings.warn(
                f"UDFS stopped at max_iter={self.max_iter} before the objective settled "
                f"(tol={self.tol}); increase max_iter.",
                ConvergenceWarning,
                stacklevel=3,
            )
        self.n_features_to_select_ = default_n_select(self, d)
        # exact copies of a column get exactly equal scores (rounding removed)
        self._set_selection(tie_duplicate_scores(X, np.linalg.norm(W, axis=1)))
