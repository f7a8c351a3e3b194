"""Fisher score: the ratio of between-class to within-class scatter of each feature."""

from numbers import Real
from typing import ClassVar

import numpy as np
from scipy import special

from sparsefs._kernels import fisher_score as _kernel
from sparsefs._kernels.multiple_testing import benjamini_hochberg
from sparsefs.base import BaseSelector
from sparsefs.utils._sklearn_compat import Interval

__all__ = ["FisherScore", "fisher_score"]


class FisherScore(BaseSelector):
    r"""Rank features by their Fisher score; keep the best ones.

    For feature :math:`j`, with class sizes :math:`n_c`, class means :math:`m_{cj}` and grand mean
    :math:`m_j`,

    .. math::

        F_j = \frac{\sum_c n_c\,(m_{cj} - m_j)^2}{\sum_c \sum_{i \in c} (x_{ij} - m_{cj})^2},

    the between-class over the within-class scatter (Duda, Hart & Stork, 2001; Gu, Li & Han, 2011).
    The one-way ANOVA statistic of :func:`sklearn.feature_selection.f_classif` is
    :math:`F_j (n-K)/(K-1)`, so both rank the features identically.

    Edge cases are defined, never NaN: a perfect separator (no within-class scatter, some between)
    scores ``+inf`` and ranks first; a constant feature scores ``0``, the lowest possible value, and
    ranks last among the zero scores (ties go to the lower feature index). The statistic is
    invariant to shifting and scaling a feature, and huge values (``1e300``) are handled by
    rescaling the affected columns.

    Sparse input (CSR/CSC) is never densified: class sums come from one sparse product with the
    class indicator matrix, scatter from the sums of squares.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
        How many features to keep: an int count, a float fraction in (0, 1] (rounded down, at
        least 1), or ``None`` for this method's own rule: every feature whose ANOVA F-test p-value
        passes the Benjamini-Hochberg false-discovery-rate procedure at level ``fdr`` (the rule of
        :class:`sklearn.feature_selection.SelectFdr`). The rule may keep no feature, with a
        :class:`~sparsefs.exceptions.NoFeatureSelectedWarning`.
    fdr : float in (0, 1], default=0.05
        False-discovery rate of the ``n_features_to_select=None`` rule; unused otherwise.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features_in_,)
        The Fisher scores (higher = better).
    fisher_scores_ : ndarray of shape (n_features_in_,)
        The same raw statistic, under its own name.
    f_statistic_ : ndarray of shape (n_features_in_,)
        The ANOVA F statistic :math:`F_j (n-K)/(K-1)`; ``+inf`` when ``n == K``.
    pvalues_ : ndarray of shape (n_features_in_,)
        p-values of the F test; NaN when ``n == K`` (no within-class degrees of freedom).
    ranking_ : ndarray of shape (n_features_in_,)
        1 = best; ties broken by the lower feature index.
    support_ : ndarray of shape (n_features_in_,), dtype bool
        The selected features.
    n_features_to_select_ : int
        How many features were selected.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined when X is a DataFrame with string column names.

    See Also
    --------
    sklearn.feature_selection.f_classif : the ANOVA F statistic, rank-identical.

    References
    ----------
    .. [1] R. O. Duda, P. E. Hart and D. G. Stork, *Pattern Classification*, 2nd ed., Wiley, 2001.
    .. [2] Q. Gu, Z. Li and J. Han, "Generalized Fisher score for feature selection", UAI 2011.

    Examples
    --------
    >>> from sparsefs.datasets import make_planted_classification
    >>> from sparsefs.selection import FisherScore
    >>> data = make_planted_classification(n_samples=90, n_features=300, random_state=0)
    >>> selector = FisherScore(n_features_to_select=20).fit(data.X, data.y)
    >>> int((selector.support_ & data.support).sum())
    20
    """

    _parameter_constraints: ClassVar[dict] = {
        **BaseSelector._parameter_constraints,
        "fdr": [Interval(Real, 0, 1, closed="right")],
    }
    _accept_sparse = ("csr", "csc")
    _outputs = frozenset({"pvalues_"})
    #: the dask path takes scipy.sparse blocks (one pass over their stored values)
    _dask_sparse_blocks: ClassVar[bool] = True
    #: NaN / inf in X make a column's scatter non-finite, and only those columns are scanned
    #: (the kernel raises scikit-learn's errors): no separate read of X for validation
    _fit_checks_finite: ClassVar[bool] = False

    def __init__(self, n_features_to_select=None, *, fdr=0.05):
        self.n_features_to_select = n_features_to_select
        self.fdr = fdr

    def _fit(self, X, y_idx):
        n_classes = int(y_idx.max()) + 1
        scores, _, _ = _kernel.fisher_ratios(X, y_idx, n_classes)
        self._store_scores(scores, X.shape[0], n_classes)

    def _fit_dask(self, X, y_idx):
        """``fit`` on a dask array: one pass of class moments (docs/dask.md)."""
        from sparsefs._dask._fisher_score import dask_fisher_ratios

        n_classes = int(y_idx.max()) + 1
        self._store_scores(dask_fisher_ratios(X, y_idx, n_classes), X.shape[0], n_classes)

    def _store_scores(self, scores, n_samples, n_classes):
        """The F statistic, p-values and the selection from the Fisher scores."""
        df_between, df_within = n_classes - 1, n_samples - n_classes
        with np.errstate(invalid="ignore", divide="ignore"):
            self.f_statistic_ = (
                scores * (df_within / df_between) if df_within > 0 else np.full_like(scores, np.inf)
            )
        if df_within > 0:
            # scipy.stats.f.sf without its argument broadcasting (a quarter of the fit's time)
            self.pvalues_ = special.fdtrc(df_between, df_within, self.f_statistic_)
        else:
            self.pvalues_ = np.full_like(scores, np.nan)
        self.fisher_scores_ = scores
        support = None
        if self.n_features_to_select_ is None:
            if df_within == 0:
                raise ValueError(
                    "FisherScore(n_features_to_select=None) tests each feature, which needs more "
                    f"samples than classes; got n_samples={n_samples} and {n_classes} classes. "
                    "Pass an explicit n_features_to_select."
                )
            support = benjamini_hochberg(self.pvalues_, self.fdr)
        self._set_selection(scores, support)


def fisher_score(X, y) -> tuple[np.ndarray, np.ndarray]:
    """Fisher scores and ANOVA F-test p-values, as a score function for scikit-learn.

    Usable wherever scikit-learn takes a ``score_func``, e.g.
    ``SelectKBest(fisher_score, k=50)`` or ``SelectFdr(fisher_score)``.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)

    Returns
    -------
    scores : ndarray of shape (n_features,)
        :attr:`FisherScore.fisher_scores_`.
    pvalues : ndarray of shape (n_features,)
        :attr:`FisherScore.pvalues_`.
    """
    fitted = FisherScore(n_features_to_select=1).fit(X, y)
    return fitted.fisher_scores_, fitted.pvalues_
