"""ElasticNetSelector against independent references.

References: the KKT conditions of the elastic-net multinomial logistic problem (gradient
computed from scratch, see test_lasso.py); scikit-learn's ``LogisticRegression``
(``solver="saga"``, ``l1_ratio``, ``C = 1 / (n lambda)``); planted-signal recovery.
"""

import numpy as np
import pytest

from sparsefs.datasets import make_planted_classification
from sparsefs.exceptions import NoFeatureSelectedWarning
from sparsefs.selection import ElasticNetSelector, LassoSelector
from sparsefs.selection.tests.test_lasso import (
    assert_kkt,
    objective,
    sklearn_l1,
    standardized,
)


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


@pytest.mark.parametrize("l1_ratio", [0.2, 0.5, 0.9])
def test_equals_sklearn_saga(small, l1_ratio):
    """Reference: scikit-learn's multinomial saga (penalty "elasticnet", written with
    ``l1_ratio``) at C = 1 / (n lambda), same l1_ratio: its objective C sum_i loss_i +
    rho ||W||_1 + (1 - rho)/2 ||W||_F^2, divided by n C, is ours. Coefficients equal to 1e-4
    relative (measured 2e-10 - 8e-10), objectives equal to 1e-12."""
    X, y = small
    Xs = standardized(X)
    est = ElasticNetSelector(l1_ratio=l1_ratio, alpha=0.2, tol=1e-10, max_iter=50000).fit(X, y)
    lam = est.alpha_ * est.alpha_max_
    ref = sklearn_l1(Xs, y, lam, l1_ratio=l1_ratio)
    rel = np.linalg.norm(est.coef_ - ref.coef_.T) / np.linalg.norm(ref.coef_)
    assert rel <= 1e-4, rel
    ours = objective(Xs, y, est.coef_, est.intercept_, lam, l1_ratio)
    theirs = objective(Xs, y, ref.coef_.T, ref.intercept_, lam, l1_ratio)
    assert abs(ours - theirs) <= 1e-12 * abs(theirs) + 1e-14
    np.testing.assert_array_equal(est.support_, np.abs(ref.coef_).sum(0) > 1e-6)


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
