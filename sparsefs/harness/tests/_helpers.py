"""Small estimators that let the harness tests see what the runner does."""

from __future__ import annotations

import json

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, ClusterMixin
from sklearn.cluster import KMeans
from sklearn.feature_selection import SelectorMixin


class RecordingSelector(SelectorMixin, BaseEstimator):
    """Ranks column 0 first (the tests put a row id there) and logs what ``fit`` saw.

    Each ``fit`` appends one JSON line to ``log``: its ``random_state`` (which identifies the
    task), the ids (column 0) of the rows it was fitted on, and the column means.
    """

    def __init__(self, log=None, n_features_to_select=1, random_state=None):
        self.log = log
        self.n_features_to_select = n_features_to_select
        self.random_state = random_state

    def fit(self, X, y=None):
        X = np.asarray(X, dtype=float)
        if self.log is not None:
            with open(self.log, "a") as fh:
                fh.write(json.dumps({"who": "selector", "seed": self.random_state,
                                     "ids": X[:, 0].tolist(),
                                     "means": X.mean(axis=0).tolist()}) + "\n")
        p = X.shape[1]
        self.scores_ = np.r_[np.inf, -np.arange(1, p, dtype=float)]
        self.ranking_ = np.arange(1, p + 1)
        self.support_ = self.ranking_ <= self.n_features_to_select
        return self

    def _get_support_mask(self):
        return self.support_


class RecordingClassifier(ClassifierMixin, BaseEstimator):
    """Predicts the majority class; logs the ids (column 0) of the rows of fit and predict."""

    def __init__(self, log=None, random_state=None):
        self.log = log
        self.random_state = random_state

    def _write(self, what, X):
        if self.log is not None:
            with open(self.log, "a") as fh:
                fh.write(json.dumps({"who": what, "seed": self.random_state,
                                     "ids": np.asarray(X)[:, 0].tolist()}) + "\n")

    def fit(self, X, y):
        self._write("fit", X)
        self.classes_, counts = np.unique(y, return_counts=True)
        self.majority_ = self.classes_[np.argmax(counts)]
        return self

    def predict(self, X):
        self._write("predict", X)
        return np.full(np.asarray(X).shape[0], self.majority_)


class TopFisherCentroid(ClassifierMixin, SelectorMixin, BaseEstimator):
    """Nearest centroid on the ``n_features_to_select`` best Fisher features (a selecting
    classifier for the 'self' estimator)."""

    def __init__(self, n_features_to_select=2):
        self.n_features_to_select = n_features_to_select

    def fit(self, X, y):
        from sparsefs.selection import FisherScore

        sel = FisherScore(n_features_to_select=self.n_features_to_select).fit(X, y)
        self.support_ = sel.support_
        self.scores_ = sel.scores_
        self.ranking_ = sel.ranking_
        self.classes_ = np.unique(y)
        Xs = np.asarray(X)[:, self.support_]
        self.centers_ = np.array([Xs[y == c].mean(axis=0) for c in self.classes_])
        return self

    def decision_function(self, X):
        Xs = np.asarray(X)[:, self.support_]
        return -((Xs[:, None, :] - self.centers_[None]) ** 2).sum(axis=2)

    def predict(self, X):
        return self.classes_[np.argmax(self.decision_function(X), axis=1)]

    def _get_support_mask(self):
        return self.support_


class TopVarianceKMeans(ClusterMixin, BaseEstimator):
    """k-means on the ``n_features_to_select`` highest-variance features (a selecting
    clusterer for the clustering protocol)."""

    def __init__(self, n_clusters=2, n_features_to_select=None, random_state=None):
        self.n_clusters = n_clusters
        self.n_features_to_select = n_features_to_select
        self.random_state = random_state

    def fit(self, X, y=None):
        X = np.asarray(X, dtype=float)
        var = X.var(axis=0)
        k = self.n_features_to_select or max(1, X.shape[1] // 5)
        order = np.argsort(-var, kind="stable")
        self.support_ = np.zeros(X.shape[1], dtype=bool)
        self.support_[order[:k]] = True
        self.scores_ = var
        km = KMeans(self.n_clusters, n_init=3, random_state=self.random_state)
        self.labels_ = km.fit_predict(X[:, self.support_])
        return self


def read_log(path):
    """The JSON lines of a log file."""
    with open(path) as fh:
        return [json.loads(line) for line in fh if line.strip()]
