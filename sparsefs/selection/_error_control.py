"""Error-controlled selection: p-values for any score, then BH / BY / Holm / Bonferroni."""

import math
import warnings
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.utils import check_random_state

from sparsefs._kernels import donors as _donors
from sparsefs._kernels import multiple_testing as _mt
from sparsefs._kernels.threads import resolve_n_jobs
from sparsefs.base import BaseSelector, SupportMixin
from sparsefs.utils._factory import make_estimator
from sparsefs.utils._sklearn_compat import Hidden, Interval, StrOptions

__all__ = ["ErrorControlSelector"]

_ANALYTIC = ("anova", "welch", "mannwhitney", "kruskal", "f", "pearson", "spearman", "cox")
#: the target kind each analytic test needs
_TEST_KIND = {"anova": "classification", "welch": "classification",
              "mannwhitney": "classification", "kruskal": "classification",
              "f": "regression", "pearson": "regression", "spearman": "regression",
              "cox": "survival"}
#: the test of pvalues="auto" without an estimator, per kind of target
_AUTO_TEST = {"classification": "anova", "regression": "f", "survival": "cox"}


def default_estimator():
    """The score that ``estimator=None`` permutes: ``FisherScore(n_features_to_select=1)``."""
    from sparsefs.selection._fisher_score import FisherScore

    return FisherScore(n_features_to_select=1)


def base_estimator(estimator: Any) -> Any:
    """``None`` -> :func:`default_estimator`; a registry stem or ``"module:Class"`` -> that
    estimator with its defaults; an estimator -> itself (not cloned): one
    :func:`~sparsefs.utils._factory.make_estimator` call, as every front end makes."""
    return make_estimator(estimator, clone=False, default=default_estimator,
                          what=f"estimator={estimator!r}")


def fitted_scores(est: Any, X, y) -> np.ndarray:
    """``est.fit(X, y).scores_`` as float64; ``TypeError`` when the estimator has none."""
    est.fit(X, y)
    scores = getattr(est, "scores_", None)
    if scores is None:
        raise TypeError(f"{type(est).__name__} has no scores_ after fit; ErrorControlSelector "
                        "needs a sparsefs estimator (higher scores_ = more important).")
    return np.asarray(scores, dtype=np.float64)


def _exceedances(base: Any, X, source: np.ndarray, rows: np.ndarray, index: np.ndarray | None,
                 observed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``#{b : T^(b)_j >= T_j}`` and ``max_k T^(b)_k`` over relabelings (one fit each).

    Relabeling ``b``'s labels are ``source[rows[b]]`` (cell permutations: ``source = y_idx``,
    ``rows`` the permutations, ``index=None``) or ``rows[b][index]`` (donor-level relabelings:
    ``rows`` the new label of every (donor, class) unit, ``index`` each cell's unit).
    """
    count = np.zeros(observed.shape[0], dtype=np.int64)
    maxima = np.empty(rows.shape[0])
    threshold = _mt.tie_threshold(observed)  # ties up to rounding count as exceedances
    for b, row in enumerate(rows):
        labels = source[row] if index is None else row[index]
        scores = fitted_scores(clone(base), X, labels)
        count += scores >= threshold
        maxima[b] = scores.max()
    return count, maxima


def stratified_permutations(strata: np.ndarray, n_permutations: int,
                            rng: np.random.RandomState) -> np.ndarray:
    """``n_permutations`` row permutations that move samples only within their stratum.

    Parameters
    ----------
    strata : ndarray of shape (n_samples,)
        Stratum label of each sample (one stratum: plain permutations).
    n_permutations : int
    rng : numpy.random.RandomState

    Returns
    -------
    ndarray of int, shape (n_permutations, n_samples)
        Row ``b`` maps position ``i`` to the sample whose label ``i`` receives.
    """
    _, codes = np.unique(strata, return_inverse=True)
    groups = [np.flatnonzero(codes == g) for g in range(codes.max() + 1)]
    perms = np.empty((n_permutations, strata.shape[0]), dtype=np.intp)
    for b in range(n_permutations):
        for idx in groups:
            perms[b, idx] = idx[rng.permutation(idx.shape[0])]
    return perms


def outcome_column_tests(test: str, X, y) -> tuple[np.ndarray, np.ndarray]:
    """p-values of a per-feature test against a continuous or survival target, and the
    features without variation (:class:`~sparsefs.selection.UnivariateScore`'s tests)."""
    from sparsefs._kernels import cox as _cox
    from sparsefs._kernels import univariate_score as _uni

    if test == "cox":
        stat, _, info = _cox.score_tests(X, _cox.cox_data(y["time"], y["event"]), "breslow")
        return _cox.chi2_pvalues(stat), ~(info > 0)
    res = (_uni.spearman_correlations(X, y) if test == "spearman"
           else _uni.correlations(X, y))
    return _uni.pvalues_from_r(np.where(res.constant, 0.0, res.r), X.shape[0]), res.constant


def _constant_columns(X) -> np.ndarray:
    """Columns with a single value (sparse X: one pass over the stored values, no copy)."""
    if not sp.issparse(X):
        return np.ptp(X, axis=0) == 0
    from sparsefs._kernels.stats import sparse_constant_columns

    return sparse_constant_columns(X)


class ErrorControlSelector(BaseSelector):
    r"""Select features with a false-discovery-rate or family-wise error guarantee.

    Every feature :math:`j` gets a p-value :math:`p_j` for the null "feature :math:`j` is not
    associated with the target" (class labels, a continuous target or a censored survival
    target; ``docs/outcomes.md``); a multiple-testing procedure then keeps the features it
    rejects:

    * ``method="bh"`` (Benjamini & Hochberg 1995): the :math:`k` smallest p-values,
      :math:`k = \max\{i : p_{(i)} \le i\alpha/m\}`; FDR :math:`\le \alpha` when the p-values
      are independent or positively dependent (PRDS);
    * ``"by"`` (Benjamini & Yekutieli 2001): BH at :math:`\alpha/\sum_{i \le m} 1/i`; FDR
      :math:`\le \alpha` under any dependence;
    * ``"holm"`` (Holm 1979): step-down, reject while :math:`p_{(i)} \le \alpha/(m - i + 1)`;
      FWER :math:`\le \alpha` under any dependence;
    * ``"bonferroni"``: :math:`p_j \le \alpha/m`; FWER :math:`\le \alpha` under any dependence;
    * ``"maxt"`` (Westfall & Young 1993, single step; permutations only): from the same
      permutations, :math:`\tilde p_j = (1 + \#\{b : \max_k T_k^{(b)} \ge T_j\})/(1 + B)`,
      reject :math:`\tilde p_j \le \alpha`; FWER :math:`\le \alpha` under any dependence
      (subset pivotality), for statistics on a common scale across features (e.g. the Fisher
      score). It uses the dependence instead of bounding it, and needs only
      :math:`B + 1 \ge 1/\alpha` permutations where Bonferroni needs :math:`m/\alpha`.

    p-values (``pvalues``):

    * ``"anova"``: the one-way ANOVA F test (any number of classes); ``"welch"``: Welch's
      two-sided t test (two classes); ``"mannwhitney"``: the two-sided Wilcoxon-Mann-Whitney
      test (two classes, normal approximation with tie and continuity corrections);
      ``"kruskal"``: the Kruskal-Wallis test (any number of classes, tie-corrected). The test is
      the statistic: ``estimator`` must be ``None``.
    * continuous targets: ``"f"`` / ``"pearson"`` (the F test of the simple regression, equal
      to :func:`sklearn.feature_selection.f_regression`'s p-values; the two names give the
      same p-values), ``"spearman"`` (Spearman's rank correlation, t approximation);
      survival targets: ``"cox"``, the Cox score test of each feature (Breslow ties; the
      log-rank test for a binary feature). These are
      :class:`~sparsefs.selection.UnivariateScore`'s tests; pass
      ``estimator=UnivariateScore(ties="efron")`` (``pvalues="auto"``) for its other options.
    * ``"permutation"``: for any supervised sparsefs score (``estimator.scores_``, higher =
      more important; for the sparse center classifiers, their gains), the labels are permuted
      :math:`B` times (within ``strata`` when given to ``fit``), the estimator is refitted once
      per permutation (a survival target's rows move as (time, event) pairs) and

      .. math::

          p_j = \frac{1 + \#\{b : T_j^{(b)} \ge T_j\}}{1 + B},

      an exact Monte-Carlo p-value (valid at every :math:`B`, never 0; Phipson & Smyth 2010);
      a permuted value within one rounding (relative 1e-9) of :math:`T_j` counts as a tie,
      i.e. as :math:`\ge T_j`.
      The permutations are drawn from ``random_state`` before any fit, so the result does not
      depend on ``n_jobs``. The estimator's own ``random_state`` (if it has one) is set to one
      seed drawn from ``random_state`` and shared by every fit.
    * ``"auto"``: ``"anova"`` (class labels), ``"f"`` (continuous) or ``"cox"`` (survival)
      when ``estimator`` is ``None``; the estimator's own analytic
      ``pvalues_`` when it sets them (e.g. :class:`~sparsefs.selection.FisherScore`: the F
      test); ``"permutation"`` otherwise.

    **Donors** (``fit(X, y, groups=donors)``). Cells of one donor share its expression offsets,
    so cell-level p-values are far too small when the classes differ by donor (Squair et al.
    2021). With ``groups`` the donor is the unit; the design is detected (``design_``, logged
    on the ``sparsefs.donors`` logger) and the p-values follow it:

    * *nested* (every donor in one class: case vs control donors): pseudobulk per donor (the
      mean of each feature over its cells, one pass of class sums), then the F test
      (``"anova"``, :math:`D - K` residual degrees of freedom) or Welch's t test (``"welch"``)
      on the donors; ``"permutation"`` relabels whole donors between the classes (all
      distinct relabelings when they are at most ``n_permutations``: an exact p-value
      :math:`\#\{T_b \ge T\}/N`, smallest :math:`1/N`; an error when that floor is above
      the procedure's first threshold, since nothing could be selected);
    * *crossed* (donors have cells of several classes: cell types): pseudobulk per
      (donor, class), then the randomised-block F test (``"anova"``: two-way additive model
      with a donor effect, the donor x class variation as error) or, for two classes, the
      paired t test of the within-donor differences (``"welch"``); ``"permutation"`` relabels
      the classes within each donor, all cells of a (donor, class) unit together;
    * neither (one donor, or donors confounded with the classes): an error saying why.

    ``"auto"`` is the pseudobulk F test for ``estimator=None`` or a
    :class:`~sparsefs.selection.FisherScore` (the donor-level version of its F statistic,
    which replaces it: no cell-level fit, one pass over X in all), donor-level permutations
    otherwise.
    Rank tests are refused with ``groups`` (their approximation fails in the far tail with a
    handful of donors; use the permutations). The level holds when the donors are independent;
    the F and t tests assume Gaussian pseudobulk errors, the permutations exchangeable donors
    (nested) or exchangeable (donor, class) units within a donor (crossed: approximate when
    unit sizes differ systematically between classes).

    A continuous or survival target with ``groups`` must be a donor attribute, constant within
    every donor (age, a donor's relapse-free time): the donors are then the observations, and
    ``"f"`` / ``"pearson"`` (``"auto"`` for a continuous target with ``estimator=None`` or a
    :class:`~sparsefs.selection.UnivariateScore` of the F test) is the F test of the donor
    pseudobulks on the donors' values (``"pseudobulk-f"``; :math:`D - 2` degrees of freedom,
    at least 3 donors), and ``"permutation"`` (``"auto"`` otherwise, survival included)
    permutes the target values of whole donors (time and event together), scoring
    :class:`~sparsefs.selection.UnivariateScore`'s test on the cells for ``estimator=None``.
    ``"spearman"`` and ``"cox"`` are refused, as the rank tests are. A target that varies
    within donors (pseudotime) is an error: its donor-level test needs a mixed model, not
    implemented; :class:`~sparsefs.selection.StabilitySelector` with ``groups`` resamples
    donors for any target.

    A p-value that cannot be computed (NaN, e.g. a constant feature under an estimator's own
    test) is set to 1, and so is that of a constant feature. ``scores_`` is
    :math:`-\log_{10} p_j` (of the max-T adjusted :math:`\tilde p_j` for ``"maxt"``; ``+inf``
    for :math:`p_j = 0`; ``-inf`` for a constant feature), so
    ``ranking_`` orders the features by p-value, ties (frequent with permutation p-values, which
    take only :math:`B + 1` values) broken by the lower feature index; the estimator's own
    scores are kept as ``estimator_scores_``.

    Parameters
    ----------
    estimator : estimator, str or None, default=None
        The score to test (``pvalues="permutation"`` or ``"auto"``): a sparsefs estimator
        exposing ``scores_``, or a registry stem (``"fisher_score"``, see ``sparsefs methods``).
        ``None``: the ANOVA F test (``"auto"``), or permutations of the Fisher score
        (of :class:`~sparsefs.selection.UnivariateScore`'s test for a continuous or survival
        target).
    method : {"bh", "by", "holm", "bonferroni", "maxt"}, default="bh"
        The multiple-testing procedure (FDR: ``bh``, ``by``; FWER: ``holm``, ``bonferroni``,
        ``maxt``; ``maxt`` implies permutation p-values).
    level : float in (0, 1], default=0.05
        :math:`\alpha`, the level of the error rate that ``method`` controls (FDR or FWER).
        Spelt ``level``, not ``alpha`` (docs/contract.md, "Parameter names"): ``alpha`` is a
        penalty in sparsefs, as in scikit-learn (``KnockoffSelector(alpha=...)`` beside it).
    alpha : float in (0, 1]
        Deprecated alias of ``level`` (a ``FutureWarning`` at fit; removed in the next
        release).
    pvalues : str, default="auto"
        How the p-values are obtained (see above): ``"auto"``, ``"permutation"``, ``"anova"``,
        ``"welch"``, ``"mannwhitney"``, ``"kruskal"``, ``"f"``, ``"pearson"``, ``"spearman"``
        or ``"cox"``.
    n_permutations : int, default=1000
        :math:`B`. The smallest possible p-value is :math:`1/(B+1)`: with :math:`m` features,
        Bonferroni can only reject when :math:`B + 1 \ge m/\alpha` (BH similarly needs
        :math:`1/(B+1) \le \alpha/m` for a single discovery).
    n_features_to_select : int, float or None, default=None
        ``None``: the features rejected by ``method`` at ``level`` (possibly none, with
        a :class:`~sparsefs.exceptions.NoFeatureSelectedWarning`). An int or a fraction keeps
        that many features with the smallest p-values instead (no error guarantee).
    random_state : int, RandomState instance or None, default=None
        Seeds the permutations.
    n_jobs : int or None, default=None
        Parallel permutation fits (joblib; ``None``: 1, unless inside
        ``joblib.parallel_config(n_jobs=k)``; ``-1``: all CPUs; docs/contract.md, "n_jobs").
    target_type : {"auto", "classification", "regression"}, default="auto"
        How a non-structured ``y`` is read: ``"auto"`` follows scikit-learn's
        ``type_of_target`` (float values: continuous, integers: classes; with an estimator
        that has a ``target_type``, its setting; with ``pvalues`` ``"f"``, ``"pearson"`` or
        ``"spearman"``, numbers); ``"regression"`` reads integer values (ages, counts) as
        numbers (and is passed on to the estimator).

    Attributes
    ----------
    pvalues_ : ndarray of shape (n_features_in_,)
        :math:`p_j`.
    qvalues_ : ndarray of shape (n_features_in_,)
        The adjusted p-values of ``method`` (BH/BY q-values; Holm/Bonferroni/max-T adjusted
        p-values): feature :math:`j` is rejected at level :math:`\alpha` exactly when
        ``qvalues_[j] <= level`` (up to one rounding at the boundary).
    maxt_pvalues_ : ndarray of shape (n_features_in_,) or None
        The max-T adjusted p-values (with permutation p-values, whatever ``method``).
    pvalue_method_ : str
        The p-values used: one of the analytic tests, ``"estimator"`` (its own ``pvalues_``) or
        ``"permutation"``; with ``groups``: ``"pseudobulk-anova"``, ``"pseudobulk-welch"``
        (nested), ``"blocked-anova"``, ``"paired-t"`` (crossed), ``"pseudobulk-f"``,
        ``"pseudobulk-pearson"`` (a continuous target constant within donors),
        ``"donor-permutation"`` or ``"donor-permutation-exact"``.
    error_rate_ : {"FDR", "FWER"}
        What ``method`` controls.
    estimator_ : estimator or None
        The estimator fitted on the data (``None`` for an analytic test).
    estimator_scores_ : ndarray of shape (n_features_in_,) or None
        Its ``scores_``.
    n_permutations_ : int
        :math:`B` used (0 without permutations; with ``groups``, the number of donor-level
        relabelings: all of them when ``exact_permutations_``).
    exact_permutations_ : bool
        Whether the permutations were a complete enumeration (the observed labels among them).
    design_ : {"nested", "crossed"} or None
        The donor design found for ``groups`` (``None`` without ``groups``; ``"nested"`` for
        a continuous or survival target, which must be constant within donors).
    design_info_ : DonorDesign or None
        Its donor x class table of cell counts, reason, degrees of freedom and notes
        (:class:`sparsefs._kernels.donors.DonorDesign`; ``None`` for a continuous or survival
        target).
    scores_ : ndarray of shape (n_features_in_,)
        :math:`-\log_{10} p_j`.
    ranking_ : ndarray of shape (n_features_in_,)
    support_ : ndarray of bool, shape (n_features_in_,)
    n_features_to_select_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined when X is a DataFrame with string column names.
    target_type_ : str
        ``"classification"``, ``"regression"`` or ``"survival"``.

    See Also
    --------
    sparsefs.selection.KnockoffSelector : FDR control from model-X knockoffs, without p-values.
    scipy.stats.false_discovery_control : BH/BY adjusted p-values.

    Notes
    -----
    Guarantees and their assumptions are tabulated in ``docs/methods/error_control.md``.
    Fitting with ``fit(X, y, strata=batch)`` permutes the labels only within each stratum
    (e.g. batch or sex), the null then being "no association given the stratum"; samples are
    still independent. ``groups=`` is for samples that are not (cells of donors).

    References
    ----------
    .. [1] Y. Benjamini and Y. Hochberg, "Controlling the false discovery rate", JRSS-B 57,
       289-300, 1995.
    .. [2] Y. Benjamini and D. Yekutieli, "The control of the false discovery rate in multiple
       testing under dependency", Ann. Statist. 29, 1165-1188, 2001.
    .. [3] S. Holm, "A simple sequentially rejective multiple test procedure", Scand. J.
       Statist. 6, 65-70, 1979.
    .. [4] P. H. Westfall and S. S. Young, *Resampling-Based Multiple Testing*, Wiley, 1993.
    .. [5] B. Phipson and G. K. Smyth, "Permutation p-values should never be zero", Stat. Appl.
       Genet. Mol. Biol. 9(1), 2010.

    Examples
    --------
    >>> from sparsefs.datasets import make_planted_classification
    >>> from sparsefs.selection import ErrorControlSelector
    >>> data = make_planted_classification(n_samples=90, n_features=300, random_state=0)
    >>> sel = ErrorControlSelector(method="holm", level=0.05).fit(data.X, data.y)
    >>> bool((sel.qvalues_[sel.support_] <= 0.05).all())
    True
    >>> int((sel.support_ & ~data.support).sum())
    0
    """

    _parameter_constraints: ClassVar[dict] = {
        **BaseSelector._parameter_constraints,
        "estimator": "no_validation",
        "method": [StrOptions({*_mt.METHODS, "maxt"})],
        "level": [Interval(Real, 0, 1, closed="right")],
        "alpha": [Interval(Real, 0, 1, closed="right"), Hidden(StrOptions({"deprecated"}))],
        "pvalues": [StrOptions({"auto", "permutation", *_ANALYTIC})],
        "n_permutations": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
        "target_type": [StrOptions({"auto", "classification", "regression"})],
    }
    #: sparse X: the tests run on dense blocks of columns; permutations pass X to the estimator
    _accept_sparse = ("csr", "csc")
    _outputs = frozenset({"pvalues_", "qvalues_"})

    def _resolved_target_type(self) -> str:
        if self.target_type == "auto" and self.pvalues in ("f", "pearson", "spearman"):
            return "regression"  # a test against a continuous target reads y as numbers
        if self.target_type != "auto" or self.estimator is None:
            return self.target_type
        base = base_estimator(self.estimator)
        return base.get_params(deep=False).get("target_type", "auto")

    @property
    def _targets(self):  # type: ignore[override]
        """Every kind of target with the analytic tests; the estimator's kinds otherwise."""
        if self.estimator is None or self.pvalues in _ANALYTIC:
            return ("classification", "regression", "survival")
        base = base_estimator(self.estimator)
        if isinstance(base, SupportMixin):
            return tuple(base._targets)
        return ("classification",)

    def __init__(
        self,
        estimator=None,
        *,
        method="bh",
        level=0.05,
        pvalues="auto",
        n_permutations=1000,
        n_features_to_select=None,
        random_state=None,
        n_jobs=None,
        target_type="auto",
        alpha="deprecated",
    ):
        self.estimator = estimator
        self.method = method
        self.level = level
        self.pvalues = pvalues
        self.n_permutations = n_permutations
        self.n_features_to_select = n_features_to_select
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.target_type = target_type
        self.alpha = alpha

    def _level(self) -> float:
        """The error-rate level: ``level``, or the deprecated ``alpha`` when given."""
        return self.level if isinstance(self.alpha, str) else self.alpha

    def fit(self, X, y, groups=None, strata=None):
        """Compute a p-value per feature and select the features the procedure rejects.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels, a continuous target or a structured survival array
            (``docs/outcomes.md``).
        groups : array-like of shape (n_samples,), default=None
            Donor / sample labels (scikit-learn's ``groups``, as in ``cross_validate``): the
            p-values are then donor-valid (module docstring, "Donors"); ``design_`` says
            which design was found. ``None``: samples are independent. With a continuous or
            survival target, the target must be constant within every donor.
        strata : array-like of shape (n_samples,), default=None
            Permutations move labels only within each stratum (batch, sex); not with
            ``groups``.

        Returns
        -------
        self : object
        """
        if not isinstance(self.alpha, str):
            warnings.warn(
                "ErrorControlSelector(alpha=...) is deprecated and will be removed in the next "
                "release: pass level=... (the FDR / FWER level; alpha is a penalty elsewhere "
                "in sparsefs).",
                FutureWarning,
                stacklevel=2,
            )
        return super().fit(X, y, groups=groups, strata=strata)

    def _fit(self, X, y_idx, groups=None, strata=None):
        target = self.target_type_
        n_classes = int(y_idx.max()) + 1 if target == "classification" else 0
        kind = self.pvalues
        if kind in _ANALYTIC and _TEST_KIND[kind] != target:
            words = {"classification": "class labels", "regression": "a continuous target",
                     "survival": "a survival target"}
            fitting = ", ".join(repr(t) for t, k in _TEST_KIND.items() if k == target)
            raise ValueError(
                f"pvalues={kind!r} tests against {words[_TEST_KIND[kind]]}; y is "
                f"{words[target]}. Use {fitting} or 'auto'."
            )
        if kind in _ANALYTIC and self.estimator is not None:
            raise ValueError(
                f"pvalues={kind!r} is a test on the features themselves; it takes no estimator "
                f"(got estimator={self.estimator!r}). Use pvalues='permutation' to test an "
                "estimator's scores."
            )
        if kind in ("welch", "mannwhitney") and n_classes != 2:
            raise ValueError(f"pvalues={kind!r} compares two classes; y has {n_classes}. Use "
                             "'anova' or 'kruskal'.")
        if self.method == "maxt":
            if kind not in ("auto", "permutation"):
                raise ValueError(f"method='maxt' adjusts permutation p-values; got "
                                 f"pvalues={kind!r}. Use pvalues='permutation'.")
            kind = "permutation"
        donors = None
        self.design_ = None
        self.design_info_ = None
        if groups is not None and target != "classification":
            donors = self._outcome_donor_setup(X, y_idx, groups, strata, kind)
            kind = donors["kind"]
        elif groups is not None:
            donors = self._donor_setup(X, y_idx, n_classes, groups, strata, kind)
            kind = donors["kind"]
        if kind == "auto" and self.estimator is None:
            kind = _AUTO_TEST[target]
        self.estimator_ = None
        self.maxt_pvalues_ = None
        self.estimator_scores_ = None
        self.n_permutations_ = 0
        self.exact_permutations_ = False
        if donors is not None and kind in _ANALYTIC:
            pvals, constant, kind = self._donor_analytic(X, y_idx, kind, donors)
        elif kind in _ANALYTIC and target != "classification":
            pvals, constant = outcome_column_tests(kind, X, y_idx)
        elif kind in _ANALYTIC:
            pvals, constant = _mt.column_tests(kind, X, y_idx, n_classes)
        else:
            pvals, kind = self._estimator_pvalues(X, y_idx, kind, strata, donors)
            constant = _constant_columns(X)
        pvals = np.where(np.isnan(pvals), 1.0, np.clip(pvals, 0.0, 1.0))
        pvals[constant] = 1.0
        self.pvalue_method_ = kind
        self.pvalues_ = pvals
        if self.method == "maxt":
            self.maxt_pvalues_[constant] = 1.0
            self.error_rate_ = "FWER"
            self.qvalues_ = self.maxt_pvalues_
            rejected = self.qvalues_ <= self._level()
            ordering = self.qvalues_  # monotone in the statistic: the selection is its top
        else:
            self.error_rate_ = _mt.METHODS[self.method]
            self.qvalues_ = _mt.adjust_pvalues(pvals, self.method)
            rejected = _mt.reject(pvals, self._level(), self.method)
            ordering = pvals
        if self.n_features_to_select_ is None:
            self.n_features_to_select_ = int(rejected.sum())
        with np.errstate(divide="ignore"):
            scores = -np.log10(ordering)
        scores[constant] = -np.inf  # untestable: ranked last
        self._set_selection(scores + 0.0)  # + 0.0: no -0.0 for p = 1

    # -- donors ------------------------------------------------------------------------------

    def _donor_setup(self, X, y_idx, n_classes, groups, strata, kind) -> dict:
        """Validate ``groups``, detect the design, resolve ``pvalues`` at the donor level."""
        from sparsefs.selection._donors import check_groups, donor_design

        if strata is not None:
            raise ValueError(
                "give groups= or strata=, not both: with donor labels the permutations are "
                "donor-level (whole donors between classes, or classes within donors)."
            )
        g_idx, names = check_groups(groups, X.shape[0])
        design = donor_design(y_idx, g_idx, n_classes, names.shape[0], type(self).__name__)
        self.design_ = design.design
        self.design_info_ = design
        if kind in ("mannwhitney", "kruskal"):
            raise ValueError(
                f"pvalues={kind!r} with groups=: a rank test on a handful of donor pseudobulks "
                "has a coarse null whose normal / chi-squared approximation is not valid in "
                "the far tail that multiple testing uses. Use pvalues='anova' or 'welch' "
                "(pseudobulk tests) or 'permutation' (donor-level relabelings, exact when "
                "they are few)."
            )
        if kind == "welch" and design.design == "nested" and design.donors_per_class.min() < 2:
            raise ValueError(
                "pvalues='welch' with groups= needs at least 2 donors per class; got "
                f"{design.donors_per_class.tolist()}. Use pvalues='anova'."
            )
        if kind == "auto":
            base = None if self.estimator is None else base_estimator(self.estimator)
            from sparsefs.selection._fisher_score import FisherScore

            # the Fisher score is the F statistic: its donor-level test is the pseudobulk F
            kind = "anova" if base is None or isinstance(base, FisherScore) else "permutation"
        return {"kind": kind, "g_idx": g_idx, "n_groups": names.shape[0], "design": design}

    def _outcome_donor_setup(self, X, y, groups, strata, kind) -> dict:
        """``groups`` with a continuous or survival target: the target must be a donor
        attribute (constant within every donor); ``pvalues`` resolved at the donor level."""
        from sparsefs.selection._donors import check_groups, donor_outcome, logger
        from sparsefs.selection._univariate_score import UnivariateScore

        if strata is not None:
            raise ValueError(
                "give groups= or strata=, not both: with donor labels the permutations are "
                "donor-level (the target values of whole donors)."
            )
        target = self.target_type_
        what = "continuous" if target == "regression" else "survival"
        example = ("the donor's age or a lab value" if target == "regression"
                   else "the donor's relapse-free time and relapse")
        g_idx, names = check_groups(groups, X.shape[0])
        n_groups = names.shape[0]
        per_donor = donor_outcome(y, g_idx, n_groups)
        if per_donor is None:
            raise ValueError(
                f"ErrorControlSelector: groups= with a {what} target that varies within donors "
                "(crossed with the donors, e.g. pseudotime or a cell-level score) has no "
                "donor-level test here: it would need a mixed model with a donor effect. "
                f"Donor-level p-values for a {what} target need it constant within every donor "
                f"(a donor attribute: {example}), tested on the donor "
                "pseudobulks; class labels are supported in both the nested and the crossed "
                "design. For a target that varies within donors, StabilitySelector(groups=...) "
                "resamples halves of the donors."
            )
        if n_groups < 3:
            raise ValueError(
                f"ErrorControlSelector: groups= with a {what} target constant within donors "
                f"makes the {n_groups} donors the observations; a donor-level test of the "
                "target needs at least 3 donors."
            )
        if kind in ("spearman", "cox"):
            test = ("Spearman's t approximation" if kind == "spearman"
                    else "the Cox score test's chi-squared approximation")
            raise ValueError(
                f"pvalues={kind!r} with groups=: {test} is not valid in the far tail that "
                f"multiple testing uses with a handful of donors. Use "
                + ("pvalues='f' (the F test of the donor pseudobulks on the target) or "
                   if kind == "spearman" else "")
                + "'permutation' (the target values of whole donors permuted, exact when the "
                "permutations are few)."
            )
        if kind == "auto":
            base = None if self.estimator is None else base_estimator(self.estimator)
            # the F test of UnivariateScore's regression tests is the pseudobulk F test
            f_like = target == "regression" and (base is None or (
                isinstance(base, UnivariateScore) and base.test in ("auto", "f", "pearson")))
            kind = "f" if f_like else "permutation"
        self.design_ = "nested"
        self.design_info_ = None
        logger.info("ErrorControlSelector: groups= with a %s target constant within each of "
                    "%d donors: the donors are the observations (%s).", what, n_groups,
                    "pseudobulk F test" if kind in ("f", "pearson")
                    else "permutations of whole donors' target values")
        return {"kind": kind, "g_idx": g_idx, "n_groups": n_groups, "outcome": per_donor}

    def _donor_analytic(self, X, y_idx, kind, donors):
        """Pseudobulk p-values: nested, one-way tests on the donors; crossed, the blocked F
        test (``anova``) or the paired t test (``welch``, two classes); a continuous target
        constant within donors, the F test of the donor means on the donors' values."""
        if "outcome" in donors:
            pb = _donors.pseudobulk(X, np.zeros(X.shape[0], dtype=np.intp), donors["g_idx"], 1,
                                    donors["n_groups"])  # one unit per donor, in donor order
            pvals, constant = outcome_column_tests(kind, pb.means, donors["outcome"])
            return pvals, pb.constant | constant, f"pseudobulk-{kind}"
        n_classes = int(y_idx.max()) + 1
        # "auto" with a FisherScore: its donor-level test replaces it (no cell-level fit, so
        # one pass over X in all; estimator_ stays None as for any analytic test)
        pb = _donors.pseudobulk(X, y_idx, donors["g_idx"], n_classes, donors["n_groups"])
        if donors["design"].design == "nested":
            pvals = _donors.nested_pvalues(pb, kind)
            name = f"pseudobulk-{kind}"
        elif kind == "anova":
            pvals, _ = _donors.blocked_f_pvalues(pb)
            name = "blocked-anova"
        else:
            pvals = _donors.paired_t_pvalues(pb, 1)[0]
            name = "paired-t"
        return pvals, pb.constant, name

    def _estimator_pvalues(self, X, y_idx, kind, strata, donors=None):
        if self.estimator is None and self.target_type_ != "classification":
            from sparsefs.selection._univariate_score import UnivariateScore

            # the permutation statistic of a continuous / survival target: its per-feature
            # test (F, Cox score), as the Fisher score is for classes
            base = UnivariateScore(n_features_to_select=1)
        else:
            base = clone(base_estimator(self.estimator))
        tags = base.__sklearn_tags__()
        if not tags.target_tags.required:
            raise ValueError(
                f"{type(base).__name__} is unsupervised: permuting the labels cannot change its "
                "scores, so there is no permutation null. Use a supervised estimator."
            )
        rng = check_random_state(self.random_state)
        params = base.get_params(deep=False)
        if "random_state" in params:
            base.set_params(random_state=int(rng.randint(np.iinfo(np.int32).max)))
        if params.get("target_type") == "auto" and self.target_type != "auto":
            base.set_params(target_type=self.target_type)  # read y as this selector does
        fitted = clone(base)
        observed = fitted_scores(fitted, X, y_idx)
        self.estimator_ = fitted
        self.estimator_scores_ = observed
        if donors is None and kind == "auto" and getattr(fitted, "pvalues_", None) is not None:
            return np.asarray(fitted.pvalues_, dtype=np.float64), "estimator"
        B = int(self.n_permutations)
        exact = False
        if donors is not None:
            rows, index, exact = self._donor_relabelings(y_idx, donors, B, rng)
            source = None
        else:
            if strata is None:
                strata = np.zeros(X.shape[0], dtype=np.intp)
            strata = np.asarray(strata)
            if strata.shape != (X.shape[0],):
                raise ValueError(f"strata must have shape ({X.shape[0]},); got {strata.shape}.")
            self._warn_floor(B, X.shape[1])
            rows, index, source = stratified_permutations(strata, B, rng), None, y_idx
        n_jobs = resolve_n_jobs(self.n_jobs)
        n_rows = rows.shape[0]
        if n_jobs == 1:
            exceed, maxima = _exceedances(base, X, source, rows, index, observed)
        else:
            chunks = np.array_split(rows, min(n_rows, 4 * n_jobs))
            parts = Parallel(n_jobs=n_jobs)(
                delayed(_exceedances)(base, X, source, chunk, index, observed)
                for chunk in chunks
            )
            exceed = np.sum([c for c, _ in parts], axis=0)
            maxima = np.concatenate([m for _, m in parts])
        self.n_permutations_ = n_rows
        self.exact_permutations_ = exact
        self.maxt_pvalues_ = _mt.maxt_pvalues(observed, maxima, exact=exact)
        if exact:  # every relabeling, the observed one among them: #{T_b >= T} / N
            return exceed / n_rows, "donor-permutation-exact"
        name = "permutation" if donors is None else "donor-permutation"
        return (1.0 + exceed) / (1.0 + n_rows), name

    def _donor_relabelings(self, y_idx, donors, B, rng):
        """Donor-level relabelings (unit labels, each cell's unit, exact?) and the check that
        the smallest attainable p-value lets the procedure select anything."""
        if "outcome" in donors:  # a donor attribute: the donors' values permuted
            rows, exact = _donors.nested_relabelings(donors["outcome"], B, rng)
            unit_of_cell, design = donors["g_idx"], "nested"
            what = f"the {self.target_type_} target values of whole donors"
            instead = ("pvalues='f' (the pseudobulk F test), "
                       if self.target_type_ == "regression" else "")
        else:
            n_classes = int(y_idx.max()) + 1
            unit_of_cell, u_donor, u_class = _donors.unit_index(y_idx, donors["g_idx"],
                                                                n_classes)
            design = donors["design"].design
            if design == "nested":
                rows, exact = _donors.nested_relabelings(u_class, B, rng)
            else:
                rows, exact = _donors.crossed_relabelings(u_donor, u_class, B, rng)
            what = ("whole donors between the classes" if design == "nested"
                    else "classes within each donor")
            instead = "pvalues='anova' (the pseudobulk F test), "
        m = self.n_features_in_
        if exact:
            floor = 1.0 / rows.shape[0]
            first = self._first_threshold(m)
            if floor > first * (1 + 1e-12) and self.n_features_to_select_ is None:
                raise ValueError(
                    f"ErrorControlSelector: groups= gives a {design} design with only "
                    f"{rows.shape[0]} distinct relabelings ({what}), so the smallest "
                    f"permutation p-value is 1/{rows.shape[0]} = {floor:.3g}, above the first "
                    f"threshold {first:.3g} of method={self.method!r} over {m} features: no "
                    f"feature can be selected. Use {instead}more donors, or "
                    "n_features_to_select=k (a ranking without guarantee)."
                )
        else:
            self._warn_floor(B, m, stacklevel=8)
        return rows, unit_of_cell, exact

    def _first_threshold(self, m: int) -> float:
        """The level the smallest p-value must reach for one rejection."""
        if self.method == "maxt":
            return self._level()
        level = self._level() / m
        if self.method == "by":
            level /= float(np.sum(1.0 / np.arange(1, m + 1)))
        return level

    def _warn_floor(self, B: int, m: int, stacklevel: int = 7) -> None:
        # 7: _warn_floor, _estimator_pvalues, _fit, the base fit, its context, fit, the caller
        needed = self.min_permutations(m)
        if needed > B and self.n_features_to_select_ is None:
            floor = 1.0 / (B + 1)
            level = self._level() / (float(np.sum(1.0 / np.arange(1, m + 1)))
                                  if self.method == "by" else 1.0)
            together = math.ceil(floor * m / level - 1e-12)
            what = ("no feature can be rejected"
                    if self.method in ("holm", "bonferroni", "maxt") or together > m
                    else f"a rejection needs >= {together} features at that floor together")
            warnings.warn(
                f"ErrorControlSelector: with n_permutations={B} the smallest p-value is "
                f"1/(B+1) = {floor:.3g}, above the first threshold "
                f"{self._level() if self.method == 'maxt' else level / m:.3g} of "
                f"method={self.method!r}; "
                f"{what}. Use n_permutations >= {needed} (min_permutations).",
                UserWarning, stacklevel=stacklevel,
            )

    def min_permutations(self, n_features: int) -> int:
        r"""The smallest :math:`B` at which one rejection is possible with ``n_features``
        features: :math:`1/(B+1) \le \alpha/m` (Bonferroni, BH) or
        :math:`\le \alpha/(m\sum_{i\le m}1/i)` (BY), :math:`\le \alpha` (max-T). Holm's first
        step is Bonferroni's.

        Parameters
        ----------
        n_features : int

        Returns
        -------
        int
        """
        if self.method == "maxt":
            return max(1, math.ceil(1.0 / self._level() - 1.0 - 1e-9))
        level = self._level() / n_features
        if self.method == "by":
            level /= float(np.sum(1.0 / np.arange(1, n_features + 1)))
        return max(1, math.ceil(1.0 / level - 1.0 - 1e-9))
