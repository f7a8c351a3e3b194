"""The nearest-neighbour and plug-in mutual-information kernels against scikit-learn.

References: ``sklearn.feature_selection.mutual_info_classif`` (Ross's estimator, a KD-tree per
column) and ``mutual_info_regression`` (Kraskov's estimator 1); ``sklearn.metrics.
mutual_info_score`` for the plug-in estimate of discrete codes. On continuous data without ties
scikit-learn's own 1e-10 jitter changes no neighbour count, so the values agree to rounding.
"""

import numpy as np
import pytest
from sklearn.feature_selection import mutual_info_classif, mutual_info_regression
from sklearn.metrics import mutual_info_score

from sparsefs._kernels.mutual_info import (
    ksg_mi_classif,
    ksg_mi_pairs,
    plugin_mi,
    scale_and_jitter,
    three_state_codes,
)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 70
    y = rng.integers(0, 3, size=n)
    y[5] = 3  # a class with a single sample: left out of Ross's estimate, as scikit-learn does
    X = rng.normal(size=(n, 12)) * rng.uniform(0.1, 30, size=12)
    X[:, 2] = rng.normal(size=n) + 2 * y
    X[:, 7] = X[:, 2] + rng.normal(size=n)
    return X, y, rng


@pytest.mark.parametrize("k", [1, 3, 6])
def test_classif_equals_sklearn(data, k):
    X, y, rng = data
    Xj = scale_and_jitter(X, rng.standard_normal(X.shape))
    ours = ksg_mi_classif(Xj, y, k)
    ref = mutual_info_classif(X, y, n_neighbors=k, random_state=0)
    np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-12)
    assert ours[2] > 0.3


@pytest.mark.parametrize("k", [1, 3, 6])
def test_pairs_equal_sklearn_regression(data, k):
    X, _, rng = data
    Xj = scale_and_jitter(X, rng.standard_normal(X.shape))
    XT = np.ascontiguousarray(Xj.T)
    target = XT[7]
    ours = ksg_mi_pairs(XT, target, k, columns=np.array([0, 1, 2, 3, 4, 5, 6, 8, 9]))
    ref = mutual_info_regression(X[:, [0, 1, 2, 3, 4, 5, 6, 8, 9]], X[:, 7], n_neighbors=k,
                                 random_state=0)
    np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-12)
    assert ours[2] > 0.2


def test_pairs_reject_too_many_neighbours():
    with pytest.raises(ValueError, match="n_neighbors=5"):
        ksg_mi_pairs(np.zeros((2, 5)), np.arange(5.0), 5)


def test_plugin_mi_equals_mutual_info_score(data):
    X, y, _ = data
    codes = three_state_codes(X)
    assert set(np.unique(codes)) <= {0, 1, 2}
    ours = plugin_mi(codes, y, 3, 4)
    ref = [mutual_info_score(codes[:, j], y) for j in range(X.shape[1])]
    np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-14)


def test_three_state_codes_cut_at_mean_plus_minus_half_sd():
    x = np.array([-3.0, -1.0, 0.0, 0.1, 1.0, 3.0])[:, None]
    mu, sd = x.mean(), x.std()
    expected = np.where(x > mu + sd / 2, 2, np.where(x < mu - sd / 2, 0, 1))
    np.testing.assert_array_equal(three_state_codes(x), expected)
    np.testing.assert_array_equal(three_state_codes(np.full((4, 1), 7.0)), 1)
    np.testing.assert_array_equal(three_state_codes(x * 1e300), expected)
