"""Least squares with an l2,1 penalty (multi-task lasso on the class indicators)."""

from typing import ClassVar

import numpy as np

from sparsefs._kernels import ls_l21 as _kernel
from sparsefs.selection._sparse_linear import SparseLinearSelector
from sparsefs.utils._sklearn_compat import StrOptions

__all__ = ["LsL21"]


class LsL21(SparseLinearSelector):
    r"""Select features by l2,1-penalised least squares on the class indicators.

    .. math::

        \min_{W, b}\; \frac{1}{2n}\|Y - XW - \mathbf{1}b^\top\|_F^2 + \lambda\|W\|_{2,1},
        \qquad \|W\|_{2,1} = \sum_j \|w^j\|_2,

    :math:`Y` the one-hot class matrix (Obozinski, Taskar & Jordan 2010; the ls-l21 of Liu, Ji &
    Ye 2009): each feature has one row :math:`w^j` over all classes and the penalty removes whole
    rows, i.e. features. Solved by accelerated proximal gradient with group soft-thresholding on
    working sets of features, stopped when the KKT residual is below ``tol`` (relative to
    :math:`\lambda_{max}`). The intercept is eliminated by centring X and Y.

    The penalty is on an interpretable scale (specs/peers.md §5.2 item 20):
    :math:`\lambda = \alpha\,\lambda_{max}` with :math:`\lambda_{max} = \max_j
    \|x_j^\top(Y - \bar Y)\|_2 / n`, the smallest penalty giving :math:`W = 0`; ``alpha >= 1``
    gives :math:`W = 0`, smaller values keep more rows (scikit-feature's absolute ``z = 0.05``
    left all 2000 rows of a 100 x 2000 problem nonzero).

    **Continuous targets.** With a continuous ``y`` (one or several columns: a 2-d ``y`` of
    ``n_targets`` continuous targets, ``type_of_target`` "continuous-multioutput"), :math:`Y`
    is ``y`` itself: the multi-task lasso, one row per feature over the targets (one target:
    the lasso). The same problem as :class:`sklearn.linear_model.MultiTaskLasso` with
    ``alpha`` :math:`= \lambda` (the tests compare the coefficients).

    ``scores_``: a nonzero row scores its norm :math:`\|w^j\|_2`; a zero row scores
    :math:`\|\nabla_{w^j} f\|_2/\lambda - 1 \in [-1, 0]`, how close it is to entering the model
    (it enters when the gradient norm reaches :math:`\lambda`); constant features score
    ``-inf``. ``n_features_to_select`` keeps the top of that order at the given ``alpha``.

    Sparse X (CSR/CSC, e.g. word counts) is never densified: the centred (and standardised)
    design is kept as the sparse matrix and its column means
    (:class:`sparsefs._kernels.l21.CenteredSparse`), every product of the solver stays
    sparse; the result equals that of the dense copy up to rounding.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
        An int count or a float fraction in (0, 1] (rounded down, at least 1) of the best
        ``scores_``; ``None``: this method's own rule, the nonzero rows at ``alpha``.
    alpha : float > 0, default=0.5
        :math:`\lambda / \lambda_{max}`.
    standardize : bool, default=True
        Scale every feature to unit variance before fitting (features are always centred).
    max_iter : int, default=1000
        Proximal-gradient iterations.
    tol : float, default=1e-4
        KKT residual tolerance, relative to :math:`\lambda_{max}`.
    target_type : {"auto", "classification", "regression"}, default="auto"
        How ``y`` is read: ``"auto"`` follows scikit-learn's ``type_of_target`` (float values:
        continuous targets; integers: classes); ``"regression"`` reads integer values as
        numbers.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features_in_,)
    coef_ : ndarray of shape (n_features_in_, n_classes or n_targets)
        :math:`W`, for the standardised features when ``standardize`` (for X itself otherwise).
    intercept_ : ndarray of shape (n_classes,) or (n_targets,)
        The class frequencies or target means (the fit of centred data at the column means).
    target_type_ : str
        ``"classification"`` or ``"regression"``.
    alpha_max_ : float
        :math:`\lambda_{max}` (absolute).
    n_iter_ : int
    objective_ : ndarray
        Objective every 10 iterations.
    kkt_residual_ : float
        Largest KKT residual at the solution, relative to :math:`\lambda_{max}`.
    ranking_, support_, n_features_to_select_, n_features_in_, feature_names_in_ :
        As for every selector.

    See Also
    --------
    sklearn.linear_model.MultiTaskLasso : the same problem (``alpha`` absolute).
    LlL21 : the multinomial logistic loss instead of least squares.

    References
    ----------
    .. [1] G. Obozinski, B. Taskar and M. I. Jordan, "Joint covariate selection and joint
           subspace selection for multiple classification problems", Statistics and Computing
           20(2), 2010.
    .. [2] J. Liu, S. Ji and J. Ye, "Multi-task feature learning via efficient l2,1-norm
           minimization", UAI 2009.

    Examples
    --------
    >>> from sparsefs.datasets import make_planted_classification
    >>> from sparsefs.selection import LsL21
    >>> data = make_planted_classification(n_samples=90, n_features=300, random_state=0)
    >>> selector = LsL21(n_features_to_select=20).fit(data.X, data.y)
    >>> int((selector.support_ & data.support).sum()) >= 17
    True
    """

    _lambda_max = staticmethod(_kernel.lambda_max)
    _solver = staticmethod(_kernel.ls_l21)
    # sparse X: the centred design as an operator (never densified; _kernels.l21)
    _accept_sparse = ("csr", "csc")
    _targets = ("classification", "regression")
    _multi_target = True
    _parameter_constraints: ClassVar[dict] = {
        **SparseLinearSelector._parameter_constraints,
        "target_type": [StrOptions({"auto", "classification", "regression"})],
    }

    def __init__(self, n_features_to_select=None, *, alpha=0.5, standardize=True, max_iter=1000,
                 tol=1e-4, target_type="auto"):
        super().__init__(n_features_to_select, alpha=alpha, standardize=standardize,
                         max_iter=max_iter, tol=tol)
        self.target_type = target_type

    def _target_matrix(self, y) -> np.ndarray:
        if self.target_type_ == "regression":
            return np.asarray(y, dtype=np.float64).reshape(y.shape[0], -1)
        return super()._target_matrix(y)
