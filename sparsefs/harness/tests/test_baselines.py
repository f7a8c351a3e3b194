"""Tests of the reproduction baselines (odds ratio, nearest shrunken centroids at k)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.neighbors import NearestCentroid

from sparsefs._kernels.ranking import rank_scores
from sparsefs.harness.baselines import (
    OddsRatioSelector,
    ShrunkenCentroidsAtK,
    odds_ratio_scores,
)


def test_odds_ratio_definition():
    rng = np.random.default_rng(0)
    X = (rng.random((40, 12)) < 0.3) * rng.integers(1, 4, (40, 12)).astype(float)
    y = np.arange(40) % 2
    df1 = (X[y == 1] > 0).sum(0)
    df0 = (X[y == 0] > 0).sum(0)
    p1, p0 = (df1 + 1) / (20 + 2), (df0 + 1) / (20 + 2)
    expected = np.abs(np.log(p1 / (1 - p1)) - np.log(p0 / (1 - p0)))
    np.testing.assert_allclose(odds_ratio_scores(X, y), expected)
    np.testing.assert_allclose(odds_ratio_scores(sp.csr_matrix(X), y), expected)
    sel = OddsRatioSelector(4).fit(sp.csr_matrix(X), y)
    np.testing.assert_array_equal(sel.ranking_, rank_scores(expected))
    assert sel.support_.sum() == 4 and sel.transform(X).shape == (40, 4)


def test_odds_ratio_needs_two_classes():
    X, y = np.ones((6, 3)), np.arange(6) % 3
    with pytest.raises(ValueError, match="two classes"):
        OddsRatioSelector(1).fit(X, y)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("k", [1, 5, 12, 40])
def test_shrunken_centroids_match_sklearn(n_classes, k):
    rng = np.random.default_rng(n_classes * 100 + k)
    X = rng.normal(size=(60, 40))
    y = rng.integers(0, n_classes, 60)
    X[:, :5] += y[:, None]
    model = ShrunkenCentroidsAtK(k).fit(X, y)
    assert model.support_.sum() == k
    # scikit-learn with the same threshold (a hair above: its rounding of the (k+1)-th
    # deviation may differ in the last bit) keeps the same features and centroids.
    delta = model.shrink_threshold_ * (1 + 1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        peer = NearestCentroid(shrink_threshold=delta or None).fit(X, y)
    kept = (peer.deviations_ != 0).any(axis=0) if delta else np.ones(40, dtype=bool)
    np.testing.assert_array_equal(kept, model.support_)
    np.testing.assert_allclose(model.centroids_, peer.centroids_, rtol=1e-9, atol=1e-10)
    X_test = rng.normal(size=(100, 40))
    np.testing.assert_array_equal(model.predict(X_test), peer.predict(X_test))
    sparse = ShrunkenCentroidsAtK(k).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.centroids_, model.centroids_, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(sparse.support_, model.support_)
    np.testing.assert_array_equal(sparse.predict(sp.csr_matrix(X_test)), model.predict(X_test))
