"""VarianceScore, the variance filter.

Independent references: NumPy's ``var`` and scikit-learn's ``VarianceThreshold``.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.feature_selection import VarianceThreshold

from sparsefs.selection import VarianceScore
from sparsefs.utils import survival_target


def _X():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 30)) * rng.uniform(0.1, 3.0, size=30) + 5.0
    X[np.abs(X - 5.0) < 0.4] = 0.0
    X[:, 4] = 2.0
    return X


def test_variances_and_ranking_equal_numpy():
    X = _X()
    sel = VarianceScore(n_features_to_select=5).fit(X)
    np.testing.assert_allclose(sel.variances_, X.var(axis=0), rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(sel.get_support(indices=True),
                                  np.sort(np.argsort(-X.var(axis=0), kind="stable")[:5]))
    assert sel.ranking_[4] == 30  # constant last


def test_sparse_equals_dense_and_y_is_ignored():
    X = _X()
    y = survival_target(np.arange(40) % 2 == 0, np.arange(40.0))
    dense = VarianceScore(n_features_to_select=7).fit(X, y)
    sparse = VarianceScore(n_features_to_select=7).fit(sp.csr_array(X))
    np.testing.assert_allclose(sparse.scores_, dense.scores_, rtol=1e-10, atol=1e-15)
    np.testing.assert_array_equal(sparse.support_, dense.support_)


def test_threshold_rule_is_variance_threshold():
    X = _X()
    sel = VarianceScore(threshold=0.3).fit(X)
    ref = VarianceThreshold(0.3 * X.var(axis=0).max()).fit(X)
    np.testing.assert_array_equal(sel.support_, ref.get_support())
    assert VarianceScore().fit(X).support_.sum() == 3  # the best 10 %
