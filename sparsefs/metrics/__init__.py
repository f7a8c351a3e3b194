"""Metrics: agreement of partitions (CER, ACC, NMI), of selected with true features, the
stability of selected feature sets (Nogueira, Jaccard, Kuncheva), and prediction quality for
continuous and survival targets (R², RMSE, Harrell's C-index)."""

from sparsefs.metrics._clustering import (
    clustering_accuracy,
    clustering_error_rate,
    normalized_mutual_info,
)
from sparsefs.metrics._outcomes import concordance_index, r2, rmse
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
    "concordance_index",
    "jaccard_index",
    "kuncheva_index",
    "nogueira_index",
    "normalized_mutual_info",
    "r2",
    "rmse",
    "support_scores",
]
