"""Pan & Shen's penalised model-based clustering, as a selecting clusterer."""

import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from sparsefs._kernels import penalized_gmm as _em
from sparsefs._kernels.columns import TINY
from sparsefs.base import BaseSelectingClusterer
from sparsefs.clustering._sparse_kmeans import (
    _INT32_MAX,
    _SINGLE_THREAD_SIZE,
    _column_transform,
    _kmeans,
)
from sparsefs.utils._sklearn_compat import Interval

__all__ = ["PenalizedGaussianMixture"]


class PenalizedGaussianMixture(BaseSelectingClusterer):
    r"""Diagonal Gaussian mixture with l1-penalised cluster means (Pan & Shen 2007).

    On column-centred data the model is :math:`x_i \sim \sum_k \pi_k N(\mu_k, V)` with a
    common diagonal covariance :math:`V = \mathrm{diag}(\sigma^2_j)`, fitted by maximising

    .. math::

        \sum_i \log \sum_k \pi_k \phi(x_i; \mu_k, V) - \alpha \sum_k \sum_j |\mu_{kj}|

    by EM, whose M-step soft-thresholds each weighted cluster mean at
    :math:`\alpha\sigma_j^2/n_k`. A feature whose K means are all shrunk to 0 (the grand
    mean) is noise; the others are selected. Started from a Hartigan–Wong k-means partition
    (``n_init`` k-means++ starts, :mod:`sparsefs._kernels.kmeans`). The baseline
    "P-likelihood" / penalised EM of Chang et al. (2018, Experiment 3).

    Dense X only (sparse X is a ``TypeError``): the mixture is fitted on column-centred
    data, which is dense.

    Parameters
    ----------
    n_clusters : int, default=8
        Number of mixture components K.
    n_features_to_select : int, float or None, default=None
        ``None``: the features with at least one nonzero mean. An int count (or a float
        fraction of the features) keeps the top ones by ``scores_`` instead.
    alpha : float or None, default=None
        The penalty :math:`\alpha \ge 0`. ``None``: chosen by Pan & Shen's BIC,
        :math:`-2\ell_0 + \log(n)\,[(K-1) + p + \#\{\mu_{kj} \ne 0\}]`, over ``alpha_grid``.
    alpha_grid : array-like of float or None, default=None
        Penalties tried when ``alpha=None``. ``None``: ``n_alphas`` values log-spaced from
        :math:`10^{-3}\alpha_{\max}` to :math:`\alpha_{\max}`, the smallest penalty that
        zeroes every mean in the first M-step.
    n_alphas : int, default=20
    n_init : int, default=10
        k-means++ restarts of the starting partition.
    max_iter : int, default=100
        EM iterations per fit.
    tol : float, default=1e-6
        Relative improvement of the penalised log-likelihood below which EM stops.
    reg_covar : float, default=1e-6
        Added to every variance (keeps constant features finite).
    standardize : bool, default=True
        Scale every column to unit variance before fitting, as Pan & Shen do (the threshold
        compares :math:`|\tilde\mu_{kj}|` with :math:`\alpha\sigma_j^2/n_k`); the data are
        always centred. ``alpha`` is then in units of the standardised data.
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Most probable component of each sample (0..n_components_-1, none empty).
    n_components_ : int
        Components kept: ``n_clusters`` unless EM left a component with no sample, which is
        then dropped (and EM rerun).
    mixing_weights_ : ndarray of shape (n_components_,)
    means_ : ndarray of shape (n_components_, n_features_in_)
        Penalised means, as deviations from ``mean_`` (0 on noise features).
    cluster_centers_ : ndarray of shape (n_components_, n_features_in_)
        ``mean_ + means_``.
    mean_ : ndarray of shape (n_features_in_,)
        Column means of X.
    variances_ : ndarray of shape (n_features_in_,)
    scores_ : ndarray of shape (n_features_in_,)
        On the support :math:`\sum_k \pi_k \mu_{kj}^2 / \sigma_j^2 > 0`; off it (all K
        means shrunk to 0) :math:`-1/(1 + R_j) \in [-1, 0)`, with :math:`R_j` the same ratio
        for the unpenalised means and pooled variances of the starting k-means partition, so
        the unselected features are still ordered by their cluster signal and a constant
        feature ranks last.
    ranking_, support_, n_features_to_select_
        As for every sparsefs estimator.
    alpha_ : float
        The penalty used.
    alphas_, bic_path_, n_selected_path_ : ndarray or None
        The tuning grid, the BIC and the number of selected features at each value (None when
        ``alpha`` was given).
    bic_ : float
    log_likelihood_ : float
        Unpenalised log-likelihood of the final fit.
    objective_ : ndarray of shape (n_iter_,)
        Penalised log-likelihood per EM iteration (never decreasing).
    n_iter_ : int
    converged_ : bool
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    Notes
    -----
    ``means_``, ``variances_`` and ``cluster_centers_`` are in the units of X; ``alpha_`` and
    the grid in those of the fitted (standardised, or for huge/tiny data rescaled by a power of
    two) data; ``scores_`` are scale free.

    References
    ----------
    .. [1] W. Pan and X. Shen, "Penalized model-based clustering with application to variable
       selection", JMLR 8:1145-1164, 2007.
    .. [2] X. Chang, Y. Wang, R. Li and Z. Xu, Statistica Sinica 28(3):1265-1284, 2018.

    Examples
    --------
    >>> from sparsefs.clustering import PenalizedGaussianMixture
    >>> from sparsefs.datasets import make_sparse_clusters_exp2
    >>> data = make_sparse_clusters_exp2(n_features=200, mu=1.2, random_state=0)
    >>> model = PenalizedGaussianMixture(n_clusters=3, random_state=0).fit(data.X)
    >>> int((model.support_ & data.support).sum())  # of the 50 relevant features
    50
    """

    _dense_reason = (
        "the mixture is fitted on column-centred (standardised) data, which is dense, by EM "
        "and a k-means start on those dense columns"
    )
    _parameter_constraints: ClassVar[dict] = {
        **BaseSelectingClusterer._parameter_constraints,
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "alpha": [Interval(Real, 0, None, closed="left"), None],
        "alpha_grid": ["array-like", None],
        "n_alphas": [Interval(Integral, 1, None, closed="left")],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "reg_covar": [Interval(Real, 0, None, closed="neither")],
        "standardize": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_clusters=8,
        n_features_to_select=None,
        *,
        alpha=None,
        alpha_grid=None,
        n_alphas=20,
        n_init=10,
        max_iter=100,
        tol=1e-6,
        reg_covar=1e-6,
        standardize=True,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.n_features_to_select = n_features_to_select
        self.alpha = alpha
        self.alpha_grid = alpha_grid
        self.n_alphas = n_alphas
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.reg_covar = reg_covar
        self.standardize = standardize
        self.random_state = random_state

    def _em(self, Xc, resp, alpha):
        return _em.penalized_gmm_em(Xc, resp, alpha, max_iter=self.max_iter, tol=self.tol,
                                    reg_covar=self.reg_covar)

    def _grid(self, Xc, resp0):
        if self.alpha_grid is not None:
            grid = np.asarray(self.alpha_grid, dtype=np.float64)
            if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid)) or grid.min() < 0:
                raise ValueError(
                    f"alpha_grid={self.alpha_grid!r} must be a non-empty 1-d sequence of finite "
                    "numbers >= 0."
                )
            return np.unique(grid)
        _, _, variances = _em.m_step(Xc, resp0, 0.0, np.ones(Xc.shape[1]), self.reg_covar)
        alpha_max = float(np.max(np.abs(resp0.T @ Xc) / variances))
        if alpha_max <= 0:
            return np.zeros(1)
        return alpha_max * np.logspace(-3, 0, self.n_alphas)

    def _blas_flops(self, X) -> float:
        """0 (one BLAS thread) for X of at most ``_SINGLE_THREAD_SIZE`` entries, as the
        sparse k-means: an EM path of many small products."""
        n, p = X.shape
        return 0.0 if n * p <= _SINGLE_THREAD_SIZE else super()._blas_flops(X)

    def _fit(self, X, y_idx):
        n, K = X.shape[0], self.n_clusters
        if n < K:
            raise ValueError(f"n_samples={n} should be >= n_clusters={K}.")
        X = np.asarray(X, dtype=np.float64)
        if self.standardize:
            Xc, self.mean_, scale = _column_transform(X, True)
        else:
            self.mean_ = X.mean(axis=0)
            Xc, _, scale = _column_transform(X - self.mean_, False)
        self._x_scale = scale
        seed = int(check_random_state(self.random_state).randint(_INT32_MAX))
        labels0 = _kmeans(Xc, K, init="k-means++", n_init=self.n_init, seed=seed)
        resp0 = np.zeros((n, K))
        resp0[np.arange(n), labels0] = 1.0

        self.alphas_ = self.bic_path_ = self.n_selected_path_ = None
        if self.alpha is None:
            self.alphas_ = self._grid(Xc, resp0)
            fits = [self._em(Xc, resp0, a) for a in self.alphas_]
            self.bic_path_ = np.array([_em.bic(f.log_likelihood, n, K, f.means) for f in fits])
            self.n_selected_path_ = np.array([int(np.any(f.means != 0, axis=0).sum())
                                              for f in fits])
            best = int(np.argmin(self.bic_path_))
            alpha, fit = float(self.alphas_[best]), fits[best]
        else:
            alpha = float(self.alpha)
            fit = self._em(Xc, resp0, alpha)

        labels = np.argmax(fit.resp, axis=1)
        for _ in range(K):  # drop components that no sample prefers, and refit
            used = np.unique(labels)
            if used.shape[0] == fit.resp.shape[1]:
                break
            resp = fit.resp[:, used]
            resp /= np.maximum(resp.sum(axis=1, keepdims=True), TINY)
            fit = self._em(Xc, resp, alpha)
            labels = np.argmax(fit.resp, axis=1)

        self.alpha_ = alpha
        self.labels_ = labels.astype(np.intp)
        self.n_components_ = fit.resp.shape[1]
        self.mixing_weights_ = fit.weights
        # the fitted model in the standardised space, where predict works: free of overflow
        # and underflow at any scale of X (variances_ ~ X**2 do not exist at X ~ 1e300)
        self._std_means, self._std_variances = fit.means, fit.variances
        with np.errstate(over="ignore", under="ignore"):
            self.means_ = fit.means * scale
            self.variances_ = fit.variances * scale * scale
        self.cluster_centers_ = self.mean_ + self.means_
        self.log_likelihood_ = fit.log_likelihood
        self.bic_ = _em.bic(fit.log_likelihood, n, self.n_components_, fit.means)
        self.objective_ = fit.objective
        self.n_iter_ = fit.n_iter
        self.converged_ = fit.converged
        if not fit.converged:
            warnings.warn(
                f"PenalizedGaussianMixture: EM stopped at max_iter={self.max_iter} before the "
                f"penalised log-likelihood changed by less than tol={self.tol}; increase "
                "max_iter.",
                ConvergenceWarning,
                stacklevel=3,
            )
        scores = fit.weights @ (fit.means**2) / fit.variances
        # Off the support all penalised means are 0: order those features by the unpenalised
        # ratio R_j of the starting k-means partition, as -1 / (1 + R_j) in [-1, 0).
        w0, raw, var0 = _em.m_step(Xc, resp0, 0.0, np.ones(Xc.shape[1]), self.reg_covar)
        ratio = w0 @ (raw**2) / var0
        off = scores <= 0
        scores[off] = -1.0 / (1.0 + ratio[off])
        support = scores > 0 if self.n_features_to_select_ is None else None
        self._set_selection_tied(X, scores, support)

    def _predict_in_memory(self, X) -> np.ndarray:
        """Most probable component of each sample.

        Computed in the standardised space of the fit (``(X - mean_) / scale``, the model's
        own means and variances there), so the labels do not depend on the scale of X: at
        X * 1e300 or X * 1e-300 they equal those at scale 1, although ``variances_`` (in the
        units of X squared) then overflows or underflows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "means_")
        X = self._validate(X, reset=False)
        scale = self._x_scale
        Xc = (np.asarray(X, dtype=np.float64) - self.mean_) / scale
        log_resp, _ = _em.e_step(Xc, self.mixing_weights_, self._std_means,
                                 self._std_variances)
        return np.argmax(log_resp, axis=1).astype(np.intp)
