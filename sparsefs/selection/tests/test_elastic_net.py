"""ElasticNetSelector against independent references.

References: the KKT conditions of the elastic-net multinomial logistic problem (gradient
computed from scratch, see test_lasso.py); scikit-learn's ``LogisticRegression``
(``solver="saga"``, ``l1_ratio``, ``C = 1 / (n lambda)``); planted-signal recovery.
"""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from sparsefs.datasets import make_planted_classification
from sparsefs.exceptions import NoFeatureSelectedWarning
from sparsefs.selection import ElasticNetSelector, LassoSelector
from sparsefs.selection.tests.test_lasso import assert_kkt, standardized


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(1)
    n = 60
    y = rng.integers(0, 3, size=n)
    X = rng.normal(size=(n, 25))
    X[:, 3] += 1.5 * y
    X[:, 9] = X[:, 3] + 0.5 * rng.normal(size=n)  # correlated pair
    return X, y


@pytest.mark.parametrize("l1_ratio", [0.2, 0.5, 0.9])
def test_kkt(small, l1_ratio):
    X, y = small
    est = ElasticNetSelector(l1_ratio=l1_ratio, alpha=0.3, tol=1e-10, max_iter=20000).fit(X, y)
    assert_kkt(est, X, y, l1_ratio=l1_ratio)
    est = ElasticNetSelector(4, l1_ratio=l1_ratio, tol=1e-10, max_iter=20000).fit(X, y)
    assert_kkt(est, X, y, l1_ratio=l1_ratio)


def test_equals_sklearn_saga(small):
    X, y = small
    est = ElasticNetSelector(l1_ratio=0.5, alpha=0.2, tol=1e-10, max_iter=50000).fit(X, y)
    lam = est.alpha_ * est.alpha_max_
    ref = LogisticRegression(C=1 / (X.shape[0] * lam), l1_ratio=0.5, solver="saga", tol=1e-10,
                             max_iter=100000).fit(standardized(X), y)
    np.testing.assert_allclose(est.coef_, ref.coef_.T, atol=2e-5)


def test_lambda_max_gives_zero(small):
    X, y = small
    with pytest.warns(NoFeatureSelectedWarning):
        est = ElasticNetSelector(alpha=1.0, l1_ratio=0.3).fit(X, y)
    assert not est.coef_.any()
    assert ElasticNetSelector(alpha=0.95, l1_ratio=0.3).fit(X, y).support_.any()


def test_l1_ratio_one_is_the_lasso(small):
    X, y = small
    a = ElasticNetSelector(l1_ratio=1.0, alpha=0.3).fit(X, y)
    b = LassoSelector(alpha=0.3).fit(X, y)
    np.testing.assert_allclose(a.coef_, b.coef_)


def test_planted_recovery():
    """>= 18/20 planted features at random indices (the issue's acceptance)."""
    data = make_planted_classification(random_state=0)
    est = ElasticNetSelector(n_features_to_select=20).fit(data.X, data.y)
    assert (est.support_ & data.support).sum() >= 18
