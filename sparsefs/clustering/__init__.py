"""Clusterers that keep only the features that separate the clusters, and their baselines."""

from sparsefs.clustering._baselines import PCAKMeans
from sparsefs.clustering._penalized_gmm import PenalizedGaussianMixture
from sparsefs.clustering._sparse_kmeans import L0KMeans, SparseKMeans
from sparsefs.clustering._tuning import GapResult

__all__ = ["GapResult", "L0KMeans", "PCAKMeans", "PenalizedGaussianMixture", "SparseKMeans"]
