"""Metrics: agreement of partitions (CER, ACC, NMI), of selected with true features, and the
stability of selected feature sets (Nogueira, Jaccard, Kuncheva)."""

from sparsefs.metrics._clustering import (
    clustering_accuracy,
    clustering_error_rate,
    normalized_mutual_info,
)
from sparsefs.metrics._stability import (
    StabilityEstimate,
    jaccard_index,
    kuncheva_index,
    nogueira_index,
)
from sparsefs.metrics._support import support_scores

__all__ = [
    "StabilityEstimate",
    "clustering_accuracy",
    "clustering_error_rate",
    "jaccard_index",
    "kuncheva_index",
    "nogueira_index",
    "normalized_mutual_info",
    "support_scores",
]
