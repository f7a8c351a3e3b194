"""Sparse naive Bayes: Naive Feature Selection (Askari, d'Aspremont & El Ghaoui, AISTATS 2020).

Estimator only: the math lives in :mod:`sparsefs._kernels.sparse_naive_bayes`.
"""

import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp
from sklearn.utils.validation import check_is_fitted, validate_data

from sparsefs._kernels import sparse_naive_bayes as _kernel
from sparsefs.base import BaseSelectingClassifier
from sparsefs.utils._sklearn_compat import Interval, StrOptions

__all__ = ["SparseNaiveBayes"]

_FLOAT_DTYPES = [np.float64, np.float32]
#: ``n_features_to_select=None``: this many features, capped at p.
DEFAULT_N_FEATURES = 10


class SparseNaiveBayes(BaseSelectingClassifier):
    r"""Naive Bayes whose class-conditional parameters differ on at most k features.

    Naive Feature Selection [1]_: the maximum-likelihood naive Bayes model under the constraint
    that the classes share their parameters outside a support of at most ``k`` features (one
    parameter per feature there, fitted on the pooled data). Only the support enters the
    decision, so the model selects features and classifies at once.

    * ``model="bernoulli"`` (binary features, ``x > binarize`` is a one): the likelihood is
      separable, and the exact optimum keeps the ``k`` features of largest gain

      .. math::

          \Delta_j = \sum_c n_c\,H_2(\hat p_j) - \sum_c n_c\,H_2(\hat p_{cj})
          \quad (\text{in smoothed counts}),

      the log-likelihood gained by freeing feature :math:`j` — the paper's sorting solution.
    * ``model="multinomial"`` (counts, e.g. bag of words): the gain of a support,
      :math:`\Delta(S) = G(S)\,\widehat{MI}_S(\text{class};\text{feature})`, is not separable.
      The support is found from the paper's convex bound :math:`\psi(k) = \min_\pi
      s_k(b(\pi))` (Frank–Wolfe on its relaxation, then 1-swap local search); the bound is
      kept, so ``duality_gap_`` :math:`= \psi(k) - \Delta(S)` certifies how much
      log-likelihood the support can be short of the optimum (often exactly 0). See
      :mod:`sparsefs._kernels.sparse_naive_bayes` for the derivation. Since every class
      distribution sums to one, a single free feature is forced to be equal across classes:
      the multinomial model needs ``k >= 2`` (``k = 1`` warns and selects nothing useful).

    With ``k = n_features`` both models are exactly scikit-learn's ``BernoulliNB`` /
    ``MultinomialNB`` with the same ``alpha``.

    Choices where the paper leaves room:

    * smoothing: ``alpha`` pseudo-counts in every cell (as scikit-learn), so the shared
      (pooled) parameter of a feature is the smoothed pooled rate; the paper states the
      unsmoothed maximum-likelihood problem (``alpha -> 0``);
    * more than two classes (the paper has two): the classes share one support, and the
      parameters of every class are free on it — the row-sparse extension of the multiclass
      sparse center classifiers. For Bernoulli this is still exact; for multinomial the same
      bound holds over the class simplex;
    * ties in the gains go to the lower feature index; ties in the decision to the first class
      of ``classes_`` (``predict == classes_[decision_function > 0]`` for two classes).

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
        ``k``: an int count (at most n_features), a float fraction in (0, 1] (rounded down, at
        least 1), or ``None`` for ``min(10, n_features)``.
    model : {"bernoulli", "multinomial"}, default="bernoulli"
        The class-conditional distribution of each feature.
    alpha : float, default=1.0
        Additive (Laplace / Lidstone) smoothing, > 0.
    binarize : float or None, default=0.0
        Bernoulli only: threshold above which a value is a one; ``None`` means X is already
        0/1 (checked).
    fit_prior : bool, default=True
        Learn the class priors from the class frequencies; otherwise uniform.
    class_prior : array-like of shape (n_classes,) or None, default=None
        Prior probabilities of the classes (overrides ``fit_prior``).
    max_iter : int, default=200
        Multinomial only: Frank–Wolfe iterations on the bound.
    tol : float, default=1e-6
        Multinomial only: stop when the relative duality gap ``duality_gap_ / upper_bound_``
        is at most ``tol``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_count_ : ndarray of shape (n_classes,)
        Samples per class.
    class_log_prior_ : ndarray of shape (n_classes,)
    feature_count_ : ndarray of shape (n_classes, n_features_in_)
        Unsmoothed per-class sums of the (binarised, for Bernoulli) features.
    feature_log_prob_ : ndarray of shape (n_classes, n_features_in_)
        :math:`\log\theta_{cj}` of the fitted (support-constrained) model; rows coincide off
        ``support_``.
    gains_ : ndarray of shape (n_features_in_,)
        Bernoulli: :math:`\Delta_j`, the exact gain of freeing feature ``j`` alone.
        Multinomial: :math:`b_j(\pi_S) = g_j\,KL(\hat p_{\cdot|j}\,\|\,\pi_S)`, each feature's
        term at the support's class distribution (:math:`\Delta(S) = \sum_{j \in S}
        b_j(\pi_S)`).
    scores_ : ndarray of shape (n_features_in_,)
        ``gains_``; for multinomial, the support's entries are raised by one common constant
        when the jointly chosen support is not the top-``k`` of ``gains_`` (so that
        ``support_`` is the top of ``ranking_``; within the support and within the rest the
        order is that of ``gains_``).
    ranking_, support_, n_features_to_select_ : see the selection contract.
    log_likelihood_gain_ : float
        :math:`\Delta(S)`: the training log-likelihood of the fitted model minus that of the
        model with every feature shared.
    upper_bound_ : float
        An upper bound on :math:`\Delta` over all supports of size ``k`` (equal to
        ``log_likelihood_gain_`` for Bernoulli, where the solution is exact).
    duality_gap_ : float
        ``upper_bound_ - log_likelihood_gain_ >= 0``.
    n_iter_ : int
        Frank–Wolfe iterations (at least 1); 1 for Bernoulli (one exact sort).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined when X is a DataFrame with string column names.

    See Also
    --------
    sparsefs.classification.SparseCenterClassifier : the exact k-sparse nearest-center peer.
    sklearn.naive_bayes.BernoulliNB, sklearn.naive_bayes.MultinomialNB : the dense models.

    References
    ----------
    .. [1] A. Askari, A. d'Aspremont and L. El Ghaoui, "Naive Feature Selection: Sparsity in
       Naive Bayes", AISTATS 2020, PMLR 108:1813-1822 (arXiv:1905.09884).

    Examples
    --------
    >>> import numpy as np
    >>> from sparsefs.classification import SparseNaiveBayes
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 50)
    >>> X = (rng.random((100, 30)) < 0.3).astype(float)
    >>> X[:, 4] = (rng.random(100) < np.where(y == 1, 0.9, 0.1))
    >>> clf = SparseNaiveBayes(n_features_to_select=1).fit(X, y)
    >>> np.flatnonzero(clf.support_).tolist()
    [4]
    >>> round(clf.score(X, y), 2)
    0.95
    """

    _parameter_constraints: ClassVar[dict] = {
        **BaseSelectingClassifier._parameter_constraints,
        "model": [StrOptions({"bernoulli", "multinomial"})],
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "binarize": [Real, None],
        "fit_prior": ["boolean"],
        "class_prior": ["array-like", None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
    }
    _accept_sparse = ("csr", "csc")

    def __init__(
        self,
        n_features_to_select: int | float | None = None,
        *,
        model: str = "bernoulli",
        alpha: float = 1.0,
        binarize: float | None = 0.0,
        fit_prior: bool = True,
        class_prior=None,
        max_iter: int = 200,
        tol: float = 1e-6,
    ):
        self.n_features_to_select = n_features_to_select
        self.model = model
        self.alpha = alpha
        self.binarize = binarize
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.max_iter = max_iter
        self.tol = tol

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = self.model == "multinomial"
        # k features (2 in scikit-learn's checks) of a generic problem: not a full classifier
        tags.classifier_tags.poor_score = True
        return tags

    # -- fitting -------------------------------------------------------------------------

    def _check_input_values(self, X) -> None:
        values = X.data if sp.issparse(X) else X
        if self.model == "multinomial" and values.size and values.min() < 0:
            raise ValueError(
                "Negative values in data passed to SparseNaiveBayes(model='multinomial'), "
                "which needs counts or frequencies; use model='bernoulli' for signed data."
            )
        binary_input = self.model == "bernoulli" and self.binarize is None
        if binary_input and values.size and not np.isin(values, (0.0, 1.0)).all():
            raise ValueError(
                "SparseNaiveBayes(binarize=None) needs 0/1 X; X holds other values. Pass "
                "a threshold (binarize=0.0: positive values are ones)."
            )

    def _class_log_prior(self, class_count: np.ndarray) -> np.ndarray:
        n_classes = class_count.shape[0]
        if self.class_prior is not None:
            prior = np.asarray(self.class_prior, dtype=np.float64)
            if prior.shape != (n_classes,):
                raise ValueError(
                    f"class_prior has {prior.size} entries for {n_classes} classes."
                )
            if (prior < 0).any() or not np.isclose(prior.sum(), 1.0):
                raise ValueError("class_prior must be nonnegative and sum to 1.")
            with np.errstate(divide="ignore"):
                return np.log(prior)
        if self.fit_prior:
            return np.log(class_count) - np.log(class_count.sum())
        return np.full(n_classes, -np.log(n_classes))

    def _fit(self, X, y_idx):
        self._check_input_values(X)
        n_classes, p = self.classes_.shape[0], X.shape[1]
        if self.n_features_to_select_ is None:
            self.n_features_to_select_ = min(DEFAULT_N_FEATURES, p)
        k = self.n_features_to_select_
        class_count = np.bincount(y_idx, minlength=n_classes).astype(np.float64)
        self.class_count_ = class_count
        self.class_log_prior_ = self._class_log_prior(class_count)
        alpha = float(self.alpha)
        if self.model == "bernoulli":
            threshold = 0.5 if self.binarize is None else float(self.binarize)
            ones = _kernel.binary_class_counts(X, y_idx, n_classes, threshold)
            self.feature_count_ = ones
            gains = _kernel.bernoulli_gains(ones + alpha, class_count + 2 * alpha)
            self.gains_ = gains
            self._set_selection(gains)
            log_p, log_1mp = _kernel.bernoulli_log_params(
                ones + alpha, class_count + 2 * alpha, self.support_
            )
            self.feature_log_prob_ = log_p
            self._neg_log_prob = log_1mp
            self.log_likelihood_gain_ = float(gains[self.support_].sum())
            self.upper_bound_ = self.log_likelihood_gain_
            self.duality_gap_ = 0.0
            self.n_iter_ = 1
        else:
            if k == 1 and p > 1:
                warnings.warn(
                    "SparseNaiveBayes(model='multinomial') with k=1: one free feature cannot "
                    "differ between classes whose distributions all sum to one, so the model "
                    "cannot discriminate; use k >= 2.",
                    UserWarning,
                    stacklevel=3,
                )
            counts = _kernel.class_count_sums(X, y_idx, n_classes)
            if not np.isfinite(counts).all():
                raise ValueError(
                    f"SparseNaiveBayes: the class count sums overflow float64 (X holds values "
                    f"up to {abs(X).max():.3g}); multinomial naive Bayes needs counts."
                )
            self.feature_count_ = counts
            result = _kernel.multinomial_support(
                counts + alpha, k, max_iter=self.max_iter, tol=self.tol
            )
            gains = result.feature_gains
            self.gains_ = gains
            mask = np.zeros(p, dtype=bool)
            mask[result.support] = True
            scores = gains.copy()
            if k < p:
                lift = gains[~mask].max() - gains[mask].min()
                if lift >= 0:  # not the top-k of the gains: lift the support above the rest
                    scores[mask] += lift + max(1.0, abs(gains).max()) * 1e-9
                # exact ties between a lifted score and an outside one cannot remain
            self._set_selection(scores, mask)
            self.feature_log_prob_ = _kernel.multinomial_log_params(
                counts + alpha, result.support
            )
            self.log_likelihood_gain_ = result.gain
            self.upper_bound_ = result.upper_bound
            self.duality_gap_ = result.duality_gap
            self.n_iter_ = max(1, result.n_iter)
        self._support_idx = np.flatnonzero(self.support_)

    # -- prediction ----------------------------------------------------------------------

    def _joint_log_likelihood(self, X) -> np.ndarray:
        """Class log-prior plus the log-likelihood of the selected features (n x C).

        The features off the support have one parameter for all classes, so their terms are
        the same for every class and are left out: the posterior is exact.
        """
        check_is_fitted(self, "support_")
        X = validate_data(
            self, X, reset=False, accept_sparse=self._accept_sparse, dtype=_FLOAT_DTYPES
        )
        Xs = X[:, self._support_idx]
        log_p = self.feature_log_prob_[:, self._support_idx]
        if self.model == "bernoulli":
            threshold = 0.5 if self.binarize is None else float(self.binarize)
            if sp.issparse(Xs):
                Xs = sp.csr_array(Xs)
                Xs = (Xs > threshold) if threshold >= 0 else (Xs.toarray() > threshold)
                Xs = Xs.astype(np.float64)  # an n x k slice: never the whole X
            else:
                Xs = (Xs > threshold).astype(np.float64)
            log_1mp = self._neg_log_prob[:, self._support_idx]
            jll = Xs @ (log_p - log_1mp).T + log_1mp.sum(axis=1)
        else:
            if sp.issparse(Xs):
                Xs = sp.csr_array(Xs, dtype=np.float64)
            jll = Xs @ log_p.T
        return np.asarray(jll) + self.class_log_prior_

    def _decision_function_in_memory(self, X):
        """Log posterior odds (two classes: ``classes_[1]`` over ``classes_[0]``), else the
        joint log-likelihood of each class, computed on the selected features only.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        jll = self._joint_log_likelihood(X)
        if jll.shape[1] == 2:
            return jll[:, 1] - jll[:, 0]
        return jll

    def _predict_in_memory(self, X):
        """The class of largest posterior (ties to the first class of ``classes_``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self._labels_from_decision(self.decision_function(X))

    def predict_log_proba(self, X):
        """Log posterior class probabilities.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        jll = self._joint_log_likelihood(X)
        return jll - logsumexp(jll, axis=1, keepdims=True)

    def predict_proba(self, X):
        """Posterior class probabilities.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        return np.exp(self.predict_log_proba(X))
