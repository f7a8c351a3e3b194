"""Classifiers that select features while they learn."""

from sparsefs.classification._class_specific import ClassSpecificEnsembleClassifier
from sparsefs.classification._shrunken_centroids import ShrunkenCentroidsAtK
from sparsefs.classification._sparse_centers import (
    SparseCenterClassifier,
    SparseCenterClassifierCV,
)
from sparsefs.classification._sparse_kos import SparseKOSClassifier
from sparsefs.classification._sparse_naive_bayes import SparseNaiveBayes

__all__ = [
    "ClassSpecificEnsembleClassifier",
    "ShrunkenCentroidsAtK",
    "SparseCenterClassifier",
    "SparseCenterClassifierCV",
    "SparseKOSClassifier",
    "SparseNaiveBayes",
]
