"""Baselines of the reproductions that are not sparsefs methods (not in the registry).

They live on the estimator floor; this module keeps the path that configs and user code name
(``estimator = "sparsefs.harness.baselines:<Class>"``):

* :class:`~sparsefs.selection.OddsRatioSelector`: odds-ratio ranking of terms for two-class
  text (Mladenic & Grobelnik 1999), a baseline of the sparse center classifiers' paper
  (spec 1.12);
* :class:`~sparsefs.classification.ShrunkenCentroidsAtK`: nearest shrunken centroids (PAM,
  Tibshirani et al. 2002) with the shrinkage threshold set to keep ``k`` features,
  scikit-learn's ``NearestCentroid(shrink_threshold=...)`` computed without densifying sparse X;
* :func:`odds_ratio_scores`: the odds-ratio score itself.
"""

from sparsefs._kernels.odds_ratio import odds_ratio_scores
from sparsefs.classification._shrunken_centroids import ShrunkenCentroidsAtK
from sparsefs.selection._odds_ratio import OddsRatioSelector

__all__ = ["OddsRatioSelector", "ShrunkenCentroidsAtK", "odds_ratio_scores"]
