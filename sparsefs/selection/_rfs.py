"""RFS: robust feature selection by joint l2,1-norm minimisation (Nie et al. 2010)."""

import warnings

import numpy as np

from sparsefs._kernels import rfs as _kernel
from sparsefs._kernels.columns import duplicate_partition
from sparsefs._kernels.l21 import prepare_design, row_norms, selection_scores
from sparsefs._kernels.smba import merge_duplicate_rows
from sparsefs._kernels.stats import one_hot_dense
from sparsefs.base import _zero_blas_flops
from sparsefs.exceptions import ConvergenceWarning
from sparsefs.selection._sparse_linear import SparseLinearSelector

__all__ = ["RFS"]

#: rows whose norm is below this fraction of the largest count as zero (the reweighting drives
#: rows to zero geometrically, never in one step)
ZERO_ROW = 1e-6


class RFS(SparseLinearSelector):
    r"""Robust feature selection: l2,1 loss and l2,1 penalty (Nie, Huang, Cai & Ding 2010).

    .. math::

        \min_W\; \|Y - XW\|_{2,1} + \gamma\|W\|_{2,1}, \qquad \|A\|_{2,1} = \sum_i \|a^i\|_2,

    with :math:`Y` the one-hot class matrix. The loss sums the *unsquared* residual norm of each
    sample, so outlying samples weigh less than under least squares; the penalty removes whole
    feature rows :math:`w^j`. Features are ranked by :math:`\|w^j\|_2`, as in the paper.

    Solved by the paper's reweighting: with :math:`A = [X,\ \gamma I]` and
    :math:`U = [W;\ E/\gamma]`, repeat :math:`U \leftarrow D^{-1}A^\top(AD^{-1}A^\top)^{-1}Y`,
    :math:`D_{ii} = 1/(2\|u^i\|)`. The system :math:`AD^{-1}A^\top = XD_W^{-1}X^\top +
    \gamma^2 D_E^{-1}` is n x n and is solved as such (d x d when fewer features than samples
    remain nonzero), with the diagonal matrices applied element-wise - never the
    (n+d) x (n+d) inverse scikit-feature forms at each iteration (60-70 s at 100 x 2000,
    specs/peers.md §4.1). The objective decreases monotonically. The iteration stops when the
    relative duality gap is below ``tol``: the dual problem :math:`\max\langle Y, \Lambda
    \rangle` s.t. :math:`\|\Lambda_i\| \le 1`, :math:`\|x_j^\top\Lambda\| \le \gamma` certifies
    the solution.

    **Preprocessing and penalty scale** (specs/peers.md §5.2 item 21). The model has no
    intercept, and with an absolute :math:`\gamma` its answer depends on the scale of X
    (scikit-feature's RFS at :math:`\gamma = 1` recovered 1/20 planted features on raw data and
    20/20 on row-normalised data). Here

    * ``standardize=True`` (default) centres and scales every feature to unit variance, the
      preprocessing this class assumes; ``standardize=False`` uses X as given (the paper's
      model, no centring);
    * :math:`\gamma = \alpha\,\gamma_{max}`, with :math:`\gamma_{max} = \max_j \|x_j^\top
      \hat Y\|_2` the smallest penalty at which :math:`W = 0` (:math:`\hat y_i = y_i /
      \|y_i\|`). ``alpha >= 1`` gives :math:`W = 0`, and rescaling X changes nothing.

    ``scores_``: rows with :math:`\|w^j\|` above ``1e-6`` of the largest score their norm; the
    others (numerically zero) score :math:`\|x_j^\top\Lambda\|/\gamma - 1 \in [-1, 0]`, how close
    their dual constraint is to active (a row can only be nonzero when it is); constant
    features score ``-inf``.

    Sparse X (CSR/CSC, e.g. word counts) is never densified: the centred (and standardised)
    design is kept as the sparse matrix and its column means
    (:class:`sparsefs._kernels.l21.CenteredSparse`), every product of the solver stays
    sparse; the result equals that of the dense copy up to rounding.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
        An int count or a float fraction in (0, 1] (rounded down, at least 1) of the best
        ``scores_``; ``None``: this method's own rule, the rows that are nonzero (above ``1e-6``
        of the largest norm) at ``alpha``. Tighten ``tol`` to let slowly vanishing rows reach
        zero.
    alpha : float > 0, default=0.5
        :math:`\gamma / \gamma_{max}`.
    standardize : bool, default=True
        See above.
    max_iter : int, default=300
        Reweighting iterations.
    tol : float, default=1e-4
        Relative duality gap at which to stop.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features_in_,)
    coef_ : ndarray of shape (n_features_in_, n_classes)
        :math:`W` (for the standardised features when ``standardize``, for X itself otherwise).
    dual_coef_ : ndarray of shape (n_samples, n_classes)
        A dual-feasible :math:`\Lambda`; ``primal - <Y, dual_coef_>`` bounds the suboptimality.
    gamma_ : float
        :math:`\gamma` (absolute).
    gamma_max_ : float
        :math:`\gamma_{max}` (absolute).
    n_iter_ : int
    objective_ : ndarray
        Primal objective after each iteration (non-increasing).
    duality_gap_ : ndarray
        Relative duality gap after each iteration.
    ranking_, support_, n_features_to_select_, n_features_in_, feature_names_in_ :
        As for every selector.

    References
    ----------
    .. [1] F. Nie, H. Huang, X. Cai and C. Ding, "Efficient and robust feature selection via
           joint l2,1-norms minimization", NIPS 2010.

    Examples
    --------
    >>> from sparsefs.datasets import make_planted_classification
    >>> from sparsefs.selection import RFS
    >>> data = make_planted_classification(n_samples=90, n_features=300, random_state=0)
    >>> selector = RFS(n_features_to_select=20).fit(data.X, data.y)
    >>> int((selector.support_ & data.support).sum()) >= 17
    True
    """

    # sparse X: the centred design as an operator (never densified; _kernels.l21)
    _accept_sparse = ("csr", "csc")

    def __init__(self, n_features_to_select=None, *, alpha=0.5, standardize=True, max_iter=300,
                 tol=1e-4):
        super().__init__(n_features_to_select, alpha=alpha, standardize=standardize,
                         max_iter=max_iter, tol=tol)

    _blas_flops = _zero_blas_flops

    def _fit(self, X, y_idx):
        prep = prepare_design(X, center=self.standardize, standardize=self.standardize)
        Y = one_hot_dense(y_idx, int(y_idx.max()) + 1)
        gmax = _kernel.gamma_max(prep.X, Y)
        gamma = self.alpha * gmax
        res = _kernel.rfs(prep.X, Y, gamma, max_iter=self.max_iter, tol=self.tol)
        if not res.converged:
            warnings.warn(
                f"RFS did not converge in max_iter={self.max_iter} iterations (relative duality "
                f"gap {res.gap[-1]:.1e} > tol={self.tol}); increase max_iter or tol.",
                ConvergenceWarning,
                stacklevel=3,
            )
        # exactly duplicated features: the mean of their rows keeps the optimum (the loss sees
        # their sum, the l2,1 penalty is convex) and gives them bit-identical rows and scores
        groups = duplicate_partition(prep.X) if isinstance(prep.X, np.ndarray) else None
        res_coef = merge_duplicate_rows(res.coef, groups)
        norms = row_norms(res_coef)
        nonzero = norms > ZERO_ROW * norms.max(initial=0.0)
        coef = np.where(nonzero[:, None], res_coef, 0.0)
        corr = merge_duplicate_rows(np.asarray(prep.X.T @ res.dual), groups)
        closeness = row_norms(corr) / max(gamma, 1e-300) - 1.0
        scores = selection_scores(coef, closeness, prep.constant)
        unit = self._unit(prep)
        self.coef_ = res_coef / unit
        self.dual_coef_ = res.dual
        self.gamma_ = float(gamma) * unit
        self.gamma_max_ = float(gmax) * unit
        self.n_iter_ = int(res.n_iter)
        self.objective_ = res.objective
        self.duality_gap_ = res.gap
        support = None
        if self.n_features_to_select_ is None:
            support = nonzero & ~prep.constant
        self._set_selection(scores, support)
