"""Small selectors and specs for the standing tests (importable by worker processes)."""

from __future__ import annotations

import time
from typing import ClassVar

import numpy as np

from sparsefs.base import BaseSelector
from sparsefs.datasets import Dataset, make_planted_classification

SEEN: list[np.ndarray] = []


class RecordingSelector(BaseSelector):
    """Scores = column variances; records column 0 of every X it is fitted on (row ids);
    ``burn`` seconds of CPU spent in a busy loop (a slow method)."""

    _parameter_constraints: ClassVar[dict] = {**BaseSelector._parameter_constraints,
                                              "burn": [float, int]}

    def __init__(self, n_features_to_select=None, burn=0.0):
        self.n_features_to_select = n_features_to_select
        self.burn = burn

    def _fit(self, X, y_idx):
        SEEN.append(np.asarray(X[:, 0]).copy())
        start = time.process_time()
        while time.process_time() - start < self.burn:
            pass
        if self.n_features_to_select_ is None:
            self.n_features_to_select_ = 1
        self._set_selection(np.asarray(X).var(axis=0))


class FailingSelector(BaseSelector):
    """Always raises in fit."""

    def __init__(self, n_features_to_select=None):
        self.n_features_to_select = n_features_to_select

    def _fit(self, X, y_idx):
        raise ArithmeticError("this selector always fails")


def with_row_ids(n_samples: int = 40, n_features: int = 30, random_state: int = 0) -> Dataset:
    """A planted classification whose column 0 is the row id 0..n-1 (so a recording selector
    fed the data as stored tells which rows it saw)."""
    ds = make_planted_classification(n_samples=n_samples, n_features=n_features,
                                     n_informative=5, n_classes=2, random_state=random_state)
    X = np.array(ds.X, dtype=float)
    X[:, 0] = np.arange(n_samples)
    return Dataset(X=X, y=ds.y, feature_names=ds.feature_names, support=ds.support,
                   name="ids")


TINY_MICROARRAY = """
[standing]
benchmark = "microarray"
title = "tiny microarray"
description = "test"
budget_s = 120
simple = ["f_classif", "variance"]

[protocol]
k = [1, 3, 10]
outer_splits = 3
inner_splits = 2
classifiers = ["svm", "knn"]
stability_k = 5
similarity_k = 5

[[datasets]]
label = "P1"
loader = "sparsefs.datasets:make_planted_classification"
half = "A"
[datasets.params]
n_samples = 36
n_features = 40
n_informative = 4
n_classes = 2
shift = 2.0
random_state = 1

[[datasets]]
label = "P2"
loader = "sparsefs.datasets:make_planted_classification"
half = "B"
[datasets.params]
n_samples = 36
n_features = 40
n_informative = 4
n_classes = 3
shift = 2.0
random_state = 2

[[datasets]]
label = "P3"
loader = "sparsefs.datasets:make_planted_classification"
half = "A"
[datasets.params]
n_samples = 30
n_features = 40
n_informative = 6
n_classes = 2
shift = 1.5
random_state = 3

[[methods]]
stem = "fisher_score"

[[methods]]
stem = "sparse_centers"
own_predictions = true

[[methods]]
label = "f_classif"
estimator = "sparsefs.harness.peers:FClassif"

[[methods]]
label = "variance"
estimator = "sparsefs.harness.peers:VarianceFilter"
input = "raw"

[[methods]]
label = "random"
estimator = "sparsefs.harness.peers:RandomRanking"
kind = "baseline"

[[methods]]
label = "all features"
kind = "baseline"
"""


def scaled_planted(**params) -> Dataset:
    """``make_planted_classification`` with each feature scaled by 10**(j mod 5) and shifted:
    stored intensities of very different sizes."""
    ds = make_planted_classification(**params)
    j = np.arange(ds.X.shape[1])
    X = np.asarray(ds.X, dtype=float) * 10.0 ** (j % 5) + 3.0 * j
    return Dataset(X=X, y=ds.y, feature_names=ds.feature_names, support=ds.support,
                   name="scaled planted")
