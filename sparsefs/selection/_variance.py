"""The variance filter: the unsupervised baseline of the survival and regression benchmarks."""

from numbers import Real
from typing import ClassVar

import numpy as np

from sparsefs._kernels import variance as _kernel
from sparsefs.base import BaseSelector
from sparsefs.utils._sklearn_compat import Interval

__all__ = ["VarianceScore"]


class VarianceScore(BaseSelector):
    r"""Rank features by their variance; keep the most variable ones.

    .. math:: s_j^2 = \frac1n \sum_i (x_{ij} - \bar x_j)^2 .

    The filter that needs no target: in the benchmark of Bommert, Welchowski, Schmid &
    Rahnenführer (Briefings in Bioinformatics 23(1), 2022) on 14 gene-expression survival data
    sets, keeping the most variable genes was hard to beat by the supervised filters - the
    baseline any survival or regression selection should be compared with. ``y`` is ignored
    (a class, continuous or survival target may be given).

    The score depends on the features' units: standardised features all have variance 1
    (every score ties). Use it on data on one scale (log expression, counts).

    Sparse X (CSR/CSC) is read once through its stored values (:math:`\sum x`, :math:`\sum x^2`),
    never densified. A constant feature has variance 0, the lowest score, and ranks last
    (ties to the lower index). Values of 1e300 or 1e-300 are handled by dividing X by one
    common power of two, which keeps the order (``scores_`` are the variances of that scaled
    X; ``variances_`` of X itself, ``inf`` where they overflow).

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
        An int count, a float fraction in (0, 1] (rounded down, at least 1), or ``None``:
        with ``threshold=None`` the best 10 % (at least one), like
        :class:`sklearn.feature_selection.SelectPercentile`; with a ``threshold``, every
        feature whose variance exceeds ``threshold`` times the largest variance.
    threshold : float in [0, 1) or None, default=None
        Under ``n_features_to_select=None``: keep the features whose variance exceeds this
        fraction of the largest one (0: every non-constant feature, as
        :class:`sklearn.feature_selection.VarianceThreshold()`). Relative, so that the rule
        does not depend on X's units (``VarianceThreshold(t)`` is ``threshold = t / max
        variance``).

    Attributes
    ----------
    scores_ : ndarray of shape (n_features_in_,)
        The variances of ``X / scale_`` (higher = better).
    variances_ : ndarray of shape (n_features_in_,)
        The variances of X (``scores_ * scale_**2``).
    scale_ : float
        The power of two X was divided by.
    ranking_, support_, n_features_to_select_, n_features_in_, feature_names_in_ :
        As for every selector.

    See Also
    --------
    sklearn.feature_selection.VarianceThreshold : the threshold rule, in X's units.

    References
    ----------
    .. [1] A. Bommert, T. Welchowski, M. Schmid and J. Rahnenführer, "Benchmark of filter
           methods for feature selection in high-dimensional gene expression survival data",
           Briefings in Bioinformatics 23(1), bbab354, 2022.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsefs.selection import VarianceScore
    >>> X = np.array([[0.0, 1.0, 5.0], [0.0, 3.0, 5.1], [0.0, 5.0, 4.9]])
    >>> VarianceScore(n_features_to_select=1).fit(X).get_support(indices=True)
    array([1])
    """

    _parameter_constraints: ClassVar[dict] = {
        **BaseSelector._parameter_constraints,
        "threshold": [Interval(Real, 0, 1, closed="left"), None],
    }
    _supervised = False
    _accept_sparse = ("csr", "csc")
    #: the kernel raises scikit-learn's errors for NaN / inf
    _fit_checks_finite: ClassVar[bool] = False

    def __init__(self, n_features_to_select=None, *, threshold=None):
        self.n_features_to_select = n_features_to_select
        self.threshold = threshold

    def _fit(self, X, y=None):
        var, c = _kernel.scaled_variances(X)
        self.scale_ = c
        with np.errstate(over="ignore"):
            self.variances_ = var * c * c
        support = None
        if self.n_features_to_select_ is None:
            if self.threshold is None:
                k = max(1, X.shape[1] // 10)
                self.n_features_to_select_ = k
            else:
                support = var > self.threshold * var.max(initial=0.0)
        self._set_selection(var, support)
