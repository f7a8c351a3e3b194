"""Baselines of the sparse k-means experiments that do not select features."""

from numbers import Integral
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.cluster import KMeans
from sklearn.decomposition import PCA
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from sparsefs.utils._sklearn_compat import Interval, _fit_context

__all__ = ["PCAKMeans"]

_INT32_MAX = np.iinfo(np.int32).max


class PCAKMeans(ClusterMixin, BaseEstimator):
    r"""k-means on the leading principal component scores ("PCA + k-means").

    The PCA-k-means baseline of Chang et al. (2018): project the (centred) data on its first
    ``n_components`` principal directions, then run k-means on the scores. With the default
    ``n_components=1`` this is the authors' version (first principal direction only). It uses
    every feature in the projection, so it selects none and is not a sparsefs selector (it is
    not in the method registry).

    Parameters
    ----------
    n_clusters : int, default=8
    n_components : int, default=1
        Number of principal directions kept (at most ``min(n_samples, n_features)``).
    n_init : int, default=20
        k-means++ restarts.
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    pca_ : sklearn.decomposition.PCA
        The fitted projection (full SVD solver: deterministic).
    kmeans_ : sklearn.cluster.KMeans
        k-means fitted on the scores.
    n_features_in_ : int

    References
    ----------
    .. [1] X. Chang, Y. Wang, R. Li and Z. Xu, Statistica Sinica 28(3):1265-1284, 2018.

    Examples
    --------
    >>> from sparsefs.clustering import PCAKMeans
    >>> from sparsefs.datasets import make_sparse_clusters_exp3
    >>> data = make_sparse_clusters_exp3("a", random_state=0)
    >>> PCAKMeans(n_clusters=3, random_state=0).fit(data.X).labels_.shape
    (30,)
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_clusters=8, *, n_components=1, n_init=20, random_state=None):
        self.n_clusters = n_clusters
        self.n_components = n_components
        self.n_init = n_init
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Project on the principal directions and run k-means.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self : object
        """
        X = validate_data(self, X, dtype=[np.float64, np.float32])
        n, p = X.shape
        if n < self.n_clusters:
            raise ValueError(f"n_samples={n} should be >= n_clusters={self.n_clusters}.")
        if self.n_components > min(n, p):
            raise ValueError(
                f"n_components={self.n_components} must be <= min(n_samples, n_features)="
                f"{min(n, p)}."
            )
        seed = int(check_random_state(self.random_state).randint(_INT32_MAX))
        self.pca_ = PCA(n_components=self.n_components, svd_solver="full").fit(X)
        scores = self.pca_.transform(X)
        self.kmeans_ = KMeans(self.n_clusters, n_init=self.n_init, random_state=seed).fit(scores)
        self.labels_ = self.kmeans_.labels_.astype(np.intp)
        return self

    def predict(self, X) -> np.ndarray:
        """Nearest k-means centre of the projected samples.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "kmeans_")
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        return self.kmeans_.predict(self.pca_.transform(X)).astype(np.intp)
