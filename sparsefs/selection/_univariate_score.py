"""Per-feature tests against a continuous or a survival target (the univariate filters)."""

from numbers import Real
from typing import ClassVar

import numpy as np

from sparsefs._kernels import cox as _cox
from sparsefs._kernels import univariate_score as _kernel
from sparsefs._kernels.multiple_testing import benjamini_hochberg
from sparsefs.base import BaseSelector
from sparsefs.utils._sklearn_compat import Interval, StrOptions

__all__ = ["UnivariateScore", "univariate_score"]

_REGRESSION_TESTS = ("f", "pearson", "spearman")
_SURVIVAL_TESTS = ("cox",)


class UnivariateScore(BaseSelector):
    r"""Rank features by a per-feature test against a continuous or survival target.

    The twin of :class:`FisherScore` for the targets beyond classes
    (``docs/outcomes.md``). For a **continuous** target :math:`y` (``test`` ``"f"``,
    ``"pearson"`` or ``"spearman"``), with the Pearson correlation :math:`r_j` of feature
    :math:`j` with :math:`y`,

    .. math::

        F_j = \frac{r_j^2}{1 - r_j^2}\,(n - 2), \qquad p_j = P(F_{1, n-2} \ge F_j),

    the F test of the simple linear regression of :math:`y` on :math:`x_j` (identical to the
    two-sided t test of :math:`r_j`):

    * ``"f"``: scores :math:`F_j` (:func:`sklearn.feature_selection.f_regression`: equal
      statistics and p-values);
    * ``"pearson"``: scores :math:`|r_j|` (:func:`sklearn.feature_selection.r_regression`
      gives :math:`r_j`); the same p-values and ranking as ``"f"``;
    * ``"spearman"``: :math:`|\rho_j|`, Spearman's rank correlation (Pearson's :math:`r` of the
      average ranks: robust to outliers and monotone non-linear trends), tested as
      :func:`scipy.stats.spearmanr` does (t approximation, :math:`n - 2` degrees of freedom).

    For a **survival** target (a structured array of event indicators and times,
    :func:`sparsefs.utils.survival_target`; ``test`` ``"cox"``), the Cox score test of
    :math:`\beta_j = 0` in the one-feature proportional-hazards model,

    .. math::

        U_j = \sum_{i:\,\delta_i = 1}\big(x_{ij} - \bar x_j(R_i)\big), \qquad
        I_j = \sum_{i:\,\delta_i = 1}\mathrm{var}_{R_i}(x_j), \qquad
        \chi^2_j = U_j^2 / I_j \sim \chi^2_1,

    (:math:`R_i` the risk set of event :math:`i`; Breslow's handling of tied times; ``ties``
    chooses Efron's, or ``"exact"``: the discrete partial likelihood, whose score test is the
    log-rank test with the hypergeometric variance). For a binary feature this is the log-rank
    test. All features in one compiled pass over X after one sort of the times
    (:func:`sparsefs._kernels.cox.score_tests`).

    ``test="auto"`` takes ``"f"`` for a continuous target and ``"cox"`` for a survival one.

    Edge cases, never NaN: a constant feature (or one constant on every risk set) has no
    association, its score is ``-inf`` and it ranks last (p-value 1); a perfect linear relation
    has :math:`F = +\infty` and p-value 0. Every statistic is invariant to shifting and scaling
    a feature.

    Sparse X (CSR/CSC) is never densified for ``"f"`` / ``"pearson"``: one compiled pass over
    the stored values gives :math:`\sum x`, :math:`\sum x^2` and :math:`\sum x (y - \bar y)` per
    column; ``"spearman"`` and ``"cox"`` read one dense block of columns at a time.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
        An int count, a float fraction in (0, 1] (rounded down, at least 1), or ``None``: every
        feature whose p-value passes the Benjamini-Hochberg procedure at level ``fdr`` (the
        rule of :class:`sklearn.feature_selection.SelectFdr`). The rule may keep no feature,
        with a :class:`~sparsefs.exceptions.NoFeatureSelectedWarning`.
    test : {"auto", "f", "pearson", "spearman", "cox"}, default="auto"
        The statistic (see above); it must fit the target.
    ties : {"breslow", "efron", "exact"}, default="breslow"
        Tied event times in the Cox score test (unused for continuous targets).
    fdr : float in (0, 1], default=0.05
        False-discovery rate of the ``n_features_to_select=None`` rule.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features_in_,)
        :math:`F_j` (``"f"``), :math:`|r_j|`, :math:`|\rho_j|` or :math:`\chi^2_j` (``"cox"``);
        ``-inf`` for features without variation.
    statistic_ : ndarray of shape (n_features_in_,)
        The test statistic: :math:`F_j` (continuous tests) or :math:`\chi^2_j`.
    correlations_ : ndarray of shape (n_features_in_,) or None
        The signed :math:`r_j` or :math:`\rho_j` (continuous targets).
    cox_score_, cox_information_ : ndarray of shape (n_features_in_,) or None
        :math:`U_j` (its sign is that of the log hazard ratio) and :math:`I_j` (survival).
    pvalues_ : ndarray of shape (n_features_in_,)
        Two-sided p-values; NaN for continuous targets when ``n_samples <= 2``.
    test_ : str
        The test used.
    target_type_ : str
        ``"regression"`` or ``"survival"``.
    ranking_, support_, n_features_to_select_, n_features_in_, feature_names_in_ :
        As for every selector.

    See Also
    --------
    FisherScore : the same for class labels.
    sklearn.feature_selection.f_regression : the F statistic and p-values (test reference).
    sparsefs.selection.ErrorControlSelector : these p-values with BY, Holm or permutations.

    References
    ----------
    .. [1] D. R. Cox, "Regression models and life-tables", JRSS-B 34(2), 187-220, 1972.
    .. [2] N. Mantel, "Evaluation of survival data and two new rank order statistics arising
           in its consideration", Cancer Chemother. Rep. 50(3), 163-170, 1966.
    .. [3] C. Spearman, "The proof and measurement of association between two things", Am. J.
           Psychol. 15(1), 72-101, 1904.

    Examples
    --------
    >>> from sparsefs.datasets import make_planted_regression, make_planted_survival
    >>> from sparsefs.selection import UnivariateScore
    >>> data = make_planted_regression(n_samples=200, n_features=300, n_informative=5,
    ...                                random_state=0)
    >>> selector = UnivariateScore(n_features_to_select=5).fit(data.X, data.y)
    >>> int((selector.support_ & data.support).sum())
    5
    >>> surv = make_planted_survival(n_samples=200, n_features=300, effect=1.0,
    ...                              random_state=0)
    >>> selector = UnivariateScore(n_features_to_select=10).fit(surv.X, surv.y)
    >>> selector.test_, int((selector.support_ & surv.support).sum()) >= 8
    ('cox', True)
    """

    _parameter_constraints: ClassVar[dict] = {
        **BaseSelector._parameter_constraints,
        "test": [StrOptions({"auto", *_REGRESSION_TESTS, *_SURVIVAL_TESTS})],
        "ties": [StrOptions({"breslow", "efron", "exact"})],
        "fdr": [Interval(Real, 0, 1, closed="right")],
    }
    _accept_sparse = ("csr", "csc")
    _targets = ("regression", "survival")
    _outputs = frozenset({"pvalues_"})
    _target_hint = "For class labels use FisherScore (or ErrorControlSelector)."
    #: the kernels raise scikit-learn's errors for NaN / inf in the columns they read
    _fit_checks_finite: ClassVar[bool] = False

    def __init__(self, n_features_to_select=None, *, test="auto", ties="breslow", fdr=0.05):
        self.n_features_to_select = n_features_to_select
        self.test = test
        self.ties = ties
        self.fdr = fdr

    #: the dask path takes scipy.sparse blocks (one pass over their stored values)
    _dask_sparse_blocks: ClassVar[bool] = True

    def _fit_dask(self, X, y):
        """``fit`` on a dask array: the F / Pearson tests of a continuous target, one pass of
        column sums, squared deviations and cross products (docs/dask.md)."""
        from sparsefs._dask._univariate import dask_correlations

        test = self._resolve_test()
        if test not in ("f", "pearson"):
            raise TypeError(
                f"UnivariateScore(test={test!r}) does not take dask arrays (the ranks and the "
                "risk sets need every row of a feature at once); use test='f' or 'pearson' "
                "with a continuous target, or pass X.compute()."
            )
        self._store(X.shape[0], test, dask_correlations(X, y))

    def _resolve_test(self) -> str:
        survival = self.target_type_ == "survival"
        if self.test == "auto":
            return "cox" if survival else "f"
        if survival != (self.test in _SURVIVAL_TESTS):
            wanted = _SURVIVAL_TESTS if survival else _REGRESSION_TESTS
            kind = "a survival" if survival else "a continuous"
            raise ValueError(
                f"UnivariateScore(test={self.test!r}) does not fit {kind} target; use one of "
                f"{wanted} or 'auto'."
            )
        return self.test

    def _fit(self, X, y):
        n = X.shape[0]
        test = self._resolve_test()
        if test == "cox":
            data = _cox.cox_data(y["time"], y["event"])
            stat, U, info = _cox.score_tests(X, data, self.ties)
            self.correlations_ = None
            self.cox_score_, self.cox_information_ = U, info
            self._finish(n, test, stat, _cox.chi2_pvalues(stat), stat, ~(info > 0))
        elif test == "spearman":
            self._store(n, test, _kernel.spearman_correlations(X, y))
        else:
            self._store(n, test, _kernel.correlations(X, y))

    def _store(self, n, test, res):
        """Statistics and selection from the correlations with a continuous target."""
        constant = res.constant
        r = np.where(constant, 0.0, res.r)
        self.correlations_ = r
        self.cox_score_ = self.cox_information_ = None
        stat = _kernel.f_from_r(r, n)
        scores = stat if test == "f" else np.abs(r)
        self._finish(n, test, stat, _kernel.pvalues_from_r(r, n), scores, constant)

    def _finish(self, n, test, stat, pvalues, scores, constant):
        self.test_ = test
        pvalues[constant] = 1.0
        self.statistic_ = stat
        self.pvalues_ = pvalues
        scores = np.where(constant, -np.inf, scores)
        support = None
        if self.n_features_to_select_ is None:
            if test != "cox" and n <= 2:
                raise ValueError(
                    "UnivariateScore(n_features_to_select=None) tests each feature, which "
                    f"needs at least 3 samples; got n_samples={n}. Pass an explicit "
                    "n_features_to_select."
                )
            support = benjamini_hochberg(np.where(np.isnan(pvalues), 1.0, pvalues), self.fdr)
            support &= ~constant
        # every kernel treats each column with the same arithmetic in the same order: exact
        # copies of a column get bit-identical scores (no duplicate search needed)
        self._set_selection(scores, support)


def univariate_score(X, y) -> tuple[np.ndarray, np.ndarray]:
    """Test statistics and p-values against a continuous or survival target.

    A scikit-learn score function (``SelectKBest(univariate_score, k=50)``): for a
    continuous ``y`` the values of ``f_regression``, computed without densifying sparse X; for
    a survival ``y`` the Cox score tests (Breslow).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : array-like of shape (n_samples,) or structured survival array

    Returns
    -------
    statistics : ndarray of shape (n_features,)
        :attr:`UnivariateScore.statistic_`.
    pvalues : ndarray of shape (n_features,)
        :attr:`UnivariateScore.pvalues_`.
    """
    fitted = UnivariateScore(n_features_to_select=1).fit(X, y)
    return fitted.statistic_, fitted.pvalues_
