"""Multinomial logistic regression with an l2,1 penalty."""

from sparsefs._kernels import ll_l21 as _kernel
from sparsefs.selection._sparse_linear import SparseLinearSelector

__all__ = ["LlL21"]


class LlL21(SparseLinearSelector):
    r"""Select features by l2,1-penalised multinomial logistic regression (ll-l21).

    .. math::

        \min_{W, b}\; \frac1n \sum_{i=1}^n \Big[\log \sum_{k=1}^K e^{x_i w_k + b_k}
            - (x_i w_{y_i} + b_{y_i})\Big] + \lambda \|W\|_{2,1},

    one weight row :math:`w^j \in \mathbb{R}^K` per feature, removed as a whole by the penalty
    (Liu, Ji & Ye 2009; Obozinski, Taskar & Jordan 2010). Binary and multiclass labels are
    handled alike (K = 2 is the symmetric binary model). Solved by accelerated proximal gradient
    (FISTA with adaptive restart) with group soft-thresholding on working sets of features,
    stopped when the KKT residual is below ``tol`` (relative to :math:`\lambda_{max}`).

    The penalty is relative: :math:`\lambda = \alpha\,\lambda_{max}`, :math:`\lambda_{max} =
    \max_j \|x_j^\top(P_0 - Y)\|_2/n` with :math:`P_0` the class priors, the smallest penalty
    giving :math:`W = 0`; ``alpha >= 1`` gives :math:`W = 0`.

    scikit-feature's ``ll_l21`` crashes on numpy 2 for binary and multiclass labels alike
    (specs/peers.md §5.2 item 19); this implementation shares nothing with it.

    ``scores_``: a nonzero row scores its norm :math:`\|w^j\|_2`; a zero row
    :math:`\|\nabla_{w^j} f\|_2/\lambda - 1 \in [-1, 0]`, how close it is to entering the model;
    constant features ``-inf``. ``n_features_to_select`` keeps the top of that order at the given
    ``alpha``.

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
        Centre and scale every feature to unit variance before fitting.
    max_iter : int, default=1000
        Proximal-gradient iterations.
    tol : float, default=1e-4
        KKT residual tolerance, relative to :math:`\lambda_{max}`.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features_in_,)
    coef_ : ndarray of shape (n_features_in_, n_classes)
        :math:`W`, for the standardised features when ``standardize`` (for X itself otherwise).
    intercept_ : ndarray of shape (n_classes,)
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
    LsL21 : least squares instead of the logistic loss.
    LassoSelector : an entry-wise l1 penalty, with the penalty chosen on a path.

    References
    ----------
    .. [1] J. Liu, S. Ji and J. Ye, "Multi-task feature learning via efficient l2,1-norm
           minimization", UAI 2009.
    .. [2] G. Obozinski, B. Taskar and M. I. Jordan, "Joint covariate selection and joint
           subspace selection for multiple classification problems", Statistics and Computing
           20(2), 2010.
    .. [3] B. O'Donoghue and E. Candès, "Adaptive restart for accelerated gradient schemes",
           Foundations of Computational Mathematics 15, 2015.

    Examples
    --------
    >>> from sparsefs.datasets import make_planted_classification
    >>> from sparsefs.selection import LlL21
    >>> data = make_planted_classification(n_samples=90, n_features=300, random_state=0)
    >>> selector = LlL21(n_features_to_select=20).fit(data.X, data.y)
    >>> int((selector.support_ & data.support).sum()) >= 17
    True
    """

    _lambda_max = staticmethod(_kernel.lambda_max)
    _solver = staticmethod(_kernel.ll_l21)
    # sparse X: the centred design as an operator (never densified; _kernels.l21)
    _accept_sparse = ("csr", "csc")
