"""Nearest shrunken centroids (PAM, Tibshirani et al. 2002) at a number of kept features: a
baseline of the sparse center classifiers' reproduction, not a registered sparsefs method.

Estimator only: the statistics are
:func:`sparsefs._kernels.shrunken_centroids.shrunken_centroids_at_k`.
"""

import numpy as np
from sklearn.utils.validation import check_is_fitted, validate_data

from sparsefs._kernels.shrunken_centroids import shrunken_centroids_at_k
from sparsefs.base import BaseSelectingClassifier

__all__ = ["ShrunkenCentroidsAtK"]

#: ``n_features_to_select=None``: this many features, capped at p (as the sparse centers).
_DEFAULT_K = 10


class ShrunkenCentroidsAtK(BaseSelectingClassifier):
    r"""Nearest shrunken centroids (PAM) with the threshold that keeps ``k`` features.

    The statistics of scikit-learn's ``NearestCentroid(shrink_threshold=delta)``
    (:func:`sparsefs._kernels.shrunken_centroids.shrunken_centroids_at_k`: standardised
    class-mean deviations :math:`d_{ic}`, soft-thresholded at ``delta``) with ``delta`` the
    ``(k+1)``-th largest :math:`\max_c |d_{ic}|` (0 when ``k = p``), so exactly ``k``
    features are kept unless that value is tied (then fewer). ``predict`` returns the nearest
    shrunken centroid in Euclidean distance (scikit-learn's rule with uniform priors),
    computed on the kept features (the others are equal for every class). Sparse X is not
    densified. Not a registered sparsefs method: a baseline of the sparse center classifiers'
    reproduction (Tibshirani, Hastie, Narasimhan & Chu, PNAS 2002).

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
        if self.n_features_to_select_ is None:
            self.n_features_to_select_ = min(_DEFAULT_K, X.shape[1])
        res = shrunken_centroids_at_k(X, y_idx, self.classes_.shape[0],
                                      self.n_features_to_select_)
        self.shrink_threshold_ = res.threshold
        self.deviations_ = res.deviations
        self.centroids_ = res.centroids
        self._set_selection(res.scores, res.scores > res.threshold)
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
        check_is_fitted(self, "support_")
        X = validate_data(self, X, reset=False, accept_sparse=self._accept_sparse,
                          dtype=[np.float64, np.float32])
        cols = self._kept
        cent = self.centroids_[:, cols]
        Xs = X[:, cols]
        lin = np.asarray(Xs @ cent.T)
        return 2.0 * lin - (cent * cent).sum(axis=1)

    def _predict_in_memory(self, X):
        """The class of the nearest shrunken centroid (ties: the first class)."""
        return self._labels_from_decision(self.decision_function(X))
