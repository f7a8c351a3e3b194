"""Baselines of the reproductions that are not sparsefs methods (not in the registry).

Used by ``configs/*.toml`` as ``estimator = "sparsefs.harness.baselines:<Class>"``:

* :class:`OddsRatioSelector`: odds-ratio ranking of terms for two-class text (Mladenic &
  Grobelnik 1999), a baseline of the sparse center classifiers' paper (spec 1.12);
* :class:`ShrunkenCentroidsAtK`: nearest shrunken centroids (PAM, Tibshirani et al. 2002) with
  the shrinkage threshold set to keep ``k`` features, scikit-learn's ``NearestCentroid
  (shrink_threshold=...)`` computed without densifying sparse X.
"""

from __future__ import annotations

from numbers import Real
from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from sparsefs.base import BaseSelectingClassifier, BaseSelector
from sparsefs.utils._sklearn_compat import Interval

__all__ = ["OddsRatioSelector", "ShrunkenCentroidsAtK", "odds_ratio_scores"]

#: ``n_features_to_select=None``: this many features, capped at p (as the sparse centers).
_DEFAULT_K = 10


def odds_ratio_scores(X, y_idx: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    r"""Absolute log odds ratio of each term's presence between two classes.

    With :math:`p_c` the smoothed fraction of the documents of class :math:`c` that contain
    the term, :math:`p_c = (\mathrm{df}_c + \alpha) / (n_c + 2\alpha)`, the score is

    .. math::

        \left|\log \frac{p_1 (1 - p_0)}{(1 - p_1)\, p_0}\right|,

    the odds ratio of Mladenic & Grobelnik (1999) made symmetric, so that words typical of
    either class rank high (sentiment: positive and negative words). Presence is ``x != 0``.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
    y_idx : ndarray of shape (n_samples,)
        Class indices 0 and 1.
    alpha : float, default=1.0
        Additive (Laplace) smoothing of the document frequencies.

    Returns
    -------
    scores : ndarray of shape (n_features,)
    """
    y_idx = np.asarray(y_idx)
    df = np.empty((2, X.shape[1]))
    n = np.empty(2)
    for c in (0, 1):
        rows = X[y_idx == c]
        n[c] = rows.shape[0]
        if sp.issparse(rows):
            df[c] = np.asarray((rows != 0).sum(axis=0), dtype=np.float64).ravel()
        else:
            df[c] = np.count_nonzero(rows, axis=0)
    p = (df + alpha) / (n[:, None] + 2.0 * alpha)
    logit = np.log(p) - np.log1p(-p)
    return np.abs(logit[1] - logit[0])


class OddsRatioSelector(BaseSelector):
    """Odds-ratio term ranking for two-class text (not a registered sparsefs method).

    Scores are :func:`odds_ratio_scores` (absolute log odds ratio of term presence, Laplace
    smoothing); the ``k`` highest are selected, ties to the lower index.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
        A count, a fraction, or ``None``: ``min(10, n_features)``.
    alpha : float, default=1.0
        Smoothing of the document frequencies.

    Attributes
    ----------
    scores_, ranking_, support_, n_features_to_select_, n_features_in_
        As every sparsefs selector.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsefs.harness.baselines import OddsRatioSelector
    >>> X = np.array([[1, 0, 1], [2, 0, 1], [0, 1, 1], [0, 3, 1]], dtype=float)
    >>> OddsRatioSelector(1).fit(X, [1, 1, 0, 0]).ranking_.tolist()
    [1, 2, 3]
    """

    _parameter_constraints: ClassVar[dict] = {
        **BaseSelector._parameter_constraints,
        "alpha": [Interval(Real, 0, None, closed="neither")],
    }
    _accept_sparse = ("csr", "csc")

    def __init__(self, n_features_to_select=None, *, alpha=1.0):
        self.n_features_to_select = n_features_to_select
        self.alpha = alpha

    def _fit(self, X, y_idx):
        if int(y_idx.max()) != 1:
            raise ValueError("OddsRatioSelector needs exactly two classes.")
        if self.n_features_to_select_ is None:
            self.n_features_to_select_ = min(_DEFAULT_K, X.shape[1])
        self._set_selection(odds_ratio_scores(X, y_idx, self.alpha))


class ShrunkenCentroidsAtK(BaseSelectingClassifier):
    """Nearest shrunken centroids (PAM) with the threshold that keeps ``k`` features.

    The statistics of scikit-learn's ``NearestCentroid(shrink_threshold=delta)``: class means
    :math:`\\bar x^c`, overall mean :math:`\\bar x`, pooled within-class standard deviation
    :math:`s_i` (``n - C`` degrees of freedom), :math:`s_0 = \\mathrm{median}(s)`,
    :math:`m_c = \\sqrt{1/n_c - 1/n}` and the standardised deviations
    :math:`d_{ic} = (\\bar x^c_i - \\bar x_i) / (m_c (s_i + s_0))`. A feature is kept by the
    soft threshold ``delta`` when :math:`\\max_c |d_{ic}| > \\delta`; ``delta`` is set to the
    ``(k+1)``-th largest :math:`\\max_c |d_{ic}|` (0 when ``k = p``: no shrinkage), so exactly
    ``k`` features are kept unless that value is tied (then fewer). The shrunken centroids are
    :math:`\\bar x_i + m_c (s_i + s_0)\\, \\mathrm{sign}(d_{ic}) (|d_{ic}| - \\delta)_+` and
    ``predict`` returns the nearest one in Euclidean distance (scikit-learn's rule with
    uniform priors), computed on the kept features (the others are equal for every class).
    Sparse X is not densified (moments by sparse products). Not a registered sparsefs
    method: a baseline of the sparse center classifiers' reproduction.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
        ``k``: a count, a fraction, or ``None``: ``min(10, n_features)``.

    Attributes
    ----------
    classes_, scores_ (``max_c |d_ic|``), ranking_, support_ (the kept features),
    n_features_to_select_, n_features_in_
        As every sparsefs selecting classifier.
    shrink_threshold_ : float
        ``delta``.
    centroids_ : ndarray of shape (n_classes, n_features_in_)
        The shrunken centroids (as scikit-learn's ``centroids_``).
    deviations_ : ndarray of shape (n_classes, n_features_in_)
        The thresholded :math:`d_{ic}` (as scikit-learn's ``deviations_``).
    """

    _accept_sparse = ("csr", "csc")

    def __init__(self, n_features_to_select=None):
        self.n_features_to_select = n_features_to_select

    def _fit(self, X, y_idx):
        n, p = X.shape
        if self.n_features_to_select_ is None:
            self.n_features_to_select_ = min(_DEFAULT_K, p)
        k = self.n_features_to_select_
        C = self.classes_.shape[0]
        counts = np.bincount(y_idx, minlength=C).astype(np.float64)
        Y = sp.csr_array((np.ones(n), (y_idx, np.arange(n))), shape=(C, n))
        if sp.issparse(X):
            Xc = sp.csr_array(X, dtype=np.float64)
            sums = np.asarray((Y @ Xc).toarray())
            sq = np.asarray(Xc.multiply(Xc).sum(axis=0), dtype=np.float64).ravel()
            means = sums / counts[:, None]
            wss = np.maximum(sq - counts @ (means * means), 0.0)
        else:
            Xd = np.asarray(X, dtype=np.float64)
            means = (Y @ Xd) / counts[:, None]
            wss = ((Xd - means[y_idx]) ** 2).sum(axis=0)
        overall = counts @ means / n
        std = np.sqrt(wss / (n - C)) if n > C else np.zeros(p)
        s = std + np.median(std)
        m = np.sqrt(1.0 / counts - 1.0 / n)
        ms = m[:, None] * s
        with np.errstate(divide="ignore", invalid="ignore"):
            dev = np.where(ms > 0, (means - overall) / ms, 0.0)
        score = np.abs(dev).max(axis=0)
        delta = float(np.sort(score)[::-1][k]) if k < p else 0.0
        shrunk = np.sign(dev) * np.clip(np.abs(dev) - delta, 0.0, None)
        self.shrink_threshold_ = delta
        self.deviations_ = shrunk
        self.centroids_ = overall + ms * shrunk
        self._set_selection(score, score > delta)
        self._kept = np.flatnonzero(self.support_)

    def _decision_function_in_memory(self, X):
        """Minus the squared distance to each shrunken centroid, up to a term equal for all
        classes (computed on the kept features).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        from sklearn.utils.validation import check_is_fitted, validate_data

        check_is_fitted(self, "support_")
        X = validate_data(self, X, reset=False, accept_sparse=self._accept_sparse,
                          dtype=[np.float64, np.float32])
        cols = self._kept
        cent = self.centroids_[:, cols]
        Xs = X[:, cols]
        lin = np.asarray(Xs @ cent.T)
        return 2.0 * lin - (cent * cent).sum(axis=1)

    def _predict_in_memory(self, X):
        """The class of the nearest shrunken centroid (ties: the first class).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self.classes_[np.argmax(self.decision_function(X), axis=1)]
