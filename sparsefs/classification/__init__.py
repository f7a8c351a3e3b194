"""Classifiers that select features while they learn."""

from sparsefs.classification._sparse_centers import (
    SparseCenterClassifier,
    SparseCenterClassifierCV,
)
from sparsefs.classification._sparse_kos import SparseKOSClassifier

__all__ = ["SparseCenterClassifier", "SparseCenterClassifierCV", "SparseKOSClassifier"]
