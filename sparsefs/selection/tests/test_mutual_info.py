"""MutualInfo against scikit-learn's ``mutual_info_classif`` (the estimator it wraps).

References: ``sklearn.feature_selection.mutual_info_classif`` called directly;
``sklearn.feature_selection.SelectKBest`` with it; planted-signal recovery; the peers'
reproducibility items (specs/peers.md §5.2 items 13-14).
"""

import numpy as np
import pytest
from sklearn.feature_selection import SelectKBest, mutual_info_classif

from sparsefs.datasets import make_planted_classification
from sparsefs.selection import MutualInfo


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, size=50)
    X = rng.normal(size=(50, 10))
    X[:, 4] += 2 * y
    return X, y


def test_equals_sklearn(small):
    X, y = small
    est = MutualInfo(n_features_to_select=3, n_neighbors=4, random_state=7).fit(X, y)
    ref = mutual_info_classif(X, y, n_neighbors=4, random_state=7)
    np.testing.assert_allclose(est.mutual_info_, ref, rtol=1e-9, atol=1e-12)
    kbest = SelectKBest(lambda X, y: mutual_info_classif(X, y, n_neighbors=4, random_state=7),
                        k=3).fit(X, y)
    np.testing.assert_array_equal(est.get_support(), kbest.get_support())


@pytest.mark.slow
def test_planted_recovery():
    """>= 18/20 planted features at random indices (the issue's acceptance). Slow: scikit-learn
    estimates column by column (~5-9 s at 100 x 2000 on the 2-core machine)."""
    data = make_planted_classification(random_state=0)
    est = MutualInfo(n_features_to_select=20, random_state=0).fit(data.X, data.y)
    assert (est.support_ & data.support).sum() >= 18


def test_planted_recovery_smaller():
    """The same design with 500 features (default run; 18/20 measured, >= 17 asserted)."""
    data = make_planted_classification(n_features=500, random_state=0)
    est = MutualInfo(n_features_to_select=20, random_state=0).fit(data.X, data.y)
    assert (est.support_ & data.support).sum() >= 17


def test_same_seed_same_scores_and_global_state_untouched(small):
    X, y = small
    before = np.random.get_state()[1].copy()  # noqa: NPY002 - checking the global state
    a = MutualInfo(random_state=3).fit(X, y)
    b = MutualInfo(random_state=3).fit(X, y)
    MutualInfo().fit(X, y)
    np.testing.assert_array_equal(a.scores_, b.scores_)
    np.testing.assert_array_equal(np.random.get_state()[1], before)  # noqa: NPY002


def test_own_rule_and_constant_feature(small):
    X, y = small
    X = X.copy()
    X[:, 0] = 2.0
    est = MutualInfo(threshold=0.1, random_state=0).fit(X, y)
    np.testing.assert_array_equal(est.support_, est.scores_ > 0.1)
    assert est.support_[4] and est.scores_[0] == -np.inf and est.ranking_[0] == 10


def test_huge_values_do_not_overflow(small):
    X, y = small
    a = MutualInfo(random_state=0).fit(X, y)
    b = MutualInfo(random_state=0).fit(X * 1e300, y)
    np.testing.assert_allclose(a.scores_, b.scores_, atol=1e-9)
