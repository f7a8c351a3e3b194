"""Metrics: agreement of partitions (CER, ACC, NMI) and of selected with true features."""

from sparsefs.metrics._clustering import (
    clustering_accuracy,
    clustering_error_rate,
    normalized_mutual_info,
)
from sparsefs.metrics._support import support_scores

__all__ = [
    "clustering_accuracy",
    "clustering_error_rate",
    "normalized_mutual_info",
    "support_scores",
]
