"""MutualInfo against scikit-learn's ``mutual_info_classif`` (the estimator it reproduces).

References: ``sklearn.feature_selection.mutual_info_classif`` called directly;
``sklearn.feature_selection.SelectKBest`` with it; planted-signal recovery; the peers'
reproducibility items (specs/peers.md §5.2 items 13-14).
"""

import numpy as np
import pytest
from scipy.special import digamma
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


def test_planted_recovery():
    """>= 18/20 planted features at random indices (the issue's acceptance; 18 measured). With
    the compiled kernel the 100 x 2000 fit takes ~0.1 s (scikit-learn: ~5-12 s)."""
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


@pytest.mark.parametrize("seed", [0, 7])
def test_equals_sklearn_on_tied_data_with_the_same_jitter(seed):
    """Reference: ``mutual_info_classif(X, y, n_neighbors=3, random_state=seed)``. On integer
    data (many ties) the 1e-10 jitter decides the neighbour counts; MutualInfo draws the same
    jitter (standard normal (n, d) from ``RandomState(seed)``), so the estimates agree to
    rounding - the kernel reproduces scikit-learn, it does not just approximate it."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, size=80)
    X = rng.integers(0, 4, size=(80, 15)).astype(float)
    X[:, 3] += y
    X[:, 9] = 2 * y + rng.integers(0, 2, size=80)
    est = MutualInfo(n_neighbors=3, random_state=seed).fit(X, y)
    ref = mutual_info_classif(X, y, n_neighbors=3, random_state=seed)
    np.testing.assert_allclose(est.mutual_info_, ref, rtol=1e-9, atol=1e-12)
    assert est.mutual_info_[9] > 0.5


def test_equals_sklearn_with_tiny_classes():
    """Reference: ``mutual_info_classif``; a single-member class is left out and k is capped at
    a class's size - 1, as there."""
    rng = np.random.default_rng(1)
    y = np.array([0] * 20 + [1] * 3 + [2])
    X = rng.normal(size=(24, 6))
    X[:, 1] += 3 * (y == 1)
    est = MutualInfo(n_neighbors=5, random_state=2).fit(X, y)
    ref = mutual_info_classif(X, y, n_neighbors=5, random_state=2)
    np.testing.assert_allclose(est.mutual_info_, ref, rtol=1e-9, atol=1e-12)


def test_exact_where_sklearn_rounds():
    """With k >= half a class, scikit-learn's ``NearestNeighbors`` (algorithm "auto") switches to
    brute-force distances computed as sqrt(x^2 - 2xy + y^2), whose rounding moves the k-th
    neighbour's radius and changes the counts: its estimates then drift by ~1e-2. MutualInfo
    computes the distances exactly; reference: Ross's estimate written out per sample."""
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 20)
    X = rng.normal(size=(60, 4)) + np.outer(y, [1.0, 0.0, 0.5, 0.2])
    k = 10
    est = MutualInfo(n_neighbors=k, random_state=0).fit(X, y)
    Xs = X / X.std(0)
    Xs = Xs + 1e-10 * np.maximum(1, np.abs(Xs).mean(0)) * np.random.RandomState(0).normal(
        size=X.shape)
    ref = []
    for x in Xs.T:
        total = 0.0
        for i in range(60):
            same = np.flatnonzero((y == y[i]) & (np.arange(60) != i))
            r = np.nextafter(np.sort(np.abs(x[same] - x[i]))[k - 1], 0)
            total += digamma(k) - digamma(20) - digamma((np.abs(x - x[i]) <= r).sum())
        ref.append(max(0.0, digamma(60) + total / 60))
    np.testing.assert_allclose(est.mutual_info_, ref, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("random_state", [0, 7])
def test_continuous_target_equals_mutual_info_regression(random_state):
    """The KSG estimate against a continuous y: scikit-learn's mutual_info_regression with
    the same seed (its jitter of X, then of y)."""
    from sklearn.feature_selection import mutual_info_regression

    rng = np.random.default_rng(random_state)
    X = rng.normal(size=(90, 12))
    X[:, 3] = np.round(X[:, 3])  # ties: the jitter decides
    y = np.sin(2 * X[:, 0]) + X[:, 3] + 0.2 * rng.normal(size=90)
    sel = MutualInfo(n_features_to_select=3, n_neighbors=4, random_state=random_state)
    sel.fit(X, y)
    ref = mutual_info_regression(X, y, n_neighbors=4, random_state=random_state)
    np.testing.assert_allclose(sel.mutual_info_, ref, atol=1e-12)
    assert sel.target_type_ == "regression"
    ages = np.rint(10 * y).astype(int)
    forced = MutualInfo(n_neighbors=4, random_state=random_state, target_type="regression")
    ref = mutual_info_regression(X, ages.astype(float), n_neighbors=4,
                                 random_state=random_state)
    np.testing.assert_allclose(forced.fit(X, ages).mutual_info_, ref, atol=1e-12)
