"""LsL21 against independent references.

References: scikit-learn's ``MultiTaskLasso`` (coordinate descent on the same objective,
``alpha`` absolute) on the same standardised data and one-hot Y; the KKT conditions computed
here from scratch; lambda_max (W = 0 at and above it); planted-signal recovery
(specs/peers.md §5.2 item 20).
"""

import numpy as np
import pytest
from sklearn.linear_model import MultiTaskLasso

from sparsefs.datasets import make_planted_classification
from sparsefs.exceptions import NoFeatureSelectedWarning
from sparsefs.selection import LsL21


def standardized(X):
    return (X - X.mean(0)) / X.std(0)


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(0)
    n = 50
    y = rng.integers(0, 3, size=n)
    X = rng.normal(size=(n, 35)) * rng.uniform(0.5, 4, size=35)
    X[:, 6] += 2 * y
    X[:, 30] += 1.5 * (y == 1)
    return X, y


@pytest.mark.parametrize("alpha", [0.1, 0.4, 0.8])
def test_equals_multitask_lasso(small, alpha):
    X, y = small
    est = LsL21(alpha=alpha, tol=1e-12, max_iter=50000).fit(X, y)
    lam = alpha * est.alpha_max_
    ref = MultiTaskLasso(alpha=lam, tol=1e-14, max_iter=200000).fit(standardized(X), np.eye(3)[y])
    np.testing.assert_allclose(est.coef_, ref.coef_.T, atol=1e-7)
    np.testing.assert_allclose(est.intercept_, np.bincount(y) / y.size)


def test_kkt(small):
    X, y = small
    est = LsL21(alpha=0.3, tol=1e-11, max_iter=50000).fit(X, y)
    Xs, Y = standardized(X), np.eye(3)[y]
    Yc = Y - Y.mean(0)
    lam = 0.3 * est.alpha_max_
    G = Xs.T @ (Xs @ est.coef_ - Yc) / X.shape[0]
    norms = np.linalg.norm(est.coef_, axis=1)
    nz = norms > 0
    np.testing.assert_allclose(G[nz] + lam * est.coef_[nz] / norms[nz, None], 0, atol=1e-9)
    assert np.all(np.linalg.norm(G[~nz], axis=1) <= lam + 1e-9)
    assert est.alpha_max_ == pytest.approx(np.linalg.norm(Xs.T @ Yc, axis=1).max() / X.shape[0])


def test_penalty_scale_is_interpretable(small):
    """§5.2 item 20: alpha >= 1 gives an all-zero W; smaller alpha a row-sparse W."""
    X, y = small
    with pytest.warns(NoFeatureSelectedWarning):
        zero = LsL21(alpha=1.0).fit(X, y)
    assert not zero.coef_.any()
    sparse = LsL21(alpha=0.5).fit(X, y)
    assert 0 < sparse.support_.sum() < X.shape[1] // 4
    assert LsL21(alpha=0.05).fit(X, y).support_.sum() > sparse.support_.sum()


def test_planted_recovery():
    """>= 18/20 at random indices; at the default alpha only a few of the 2000 rows are nonzero
    (scikit-feature's absolute z = 0.05 left all 2000 nonzero)."""
    data = make_planted_classification(random_state=0)
    est = LsL21(n_features_to_select=20).fit(data.X, data.y)
    assert (est.support_ & data.support).sum() >= 18
    assert 0 < (np.abs(est.coef_).sum(1) > 0).sum() < 100


def test_coefficients_in_the_callers_units_without_standardizing(small):
    X, y = small
    X = X * 1e3
    est = LsL21(alpha=0.3, standardize=False, tol=1e-12, max_iter=50000).fit(X, y)
    ref = MultiTaskLasso(alpha=0.3 * est.alpha_max_, tol=1e-14, max_iter=200000).fit(
        X, np.eye(3)[y])
    np.testing.assert_allclose(est.coef_, ref.coef_.T, atol=1e-9)


def test_several_continuous_targets_equal_multitask_lasso():
    """A 2-d continuous y: the multi-task lasso, scikit-learn's MultiTaskLasso at the same
    penalty (on the standardised columns)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 40))
    W = np.zeros((40, 3))
    W[[3, 17, 30]] = rng.normal(size=(3, 3)) * 2
    Y = X @ W + 0.3 * rng.normal(size=(60, 3))
    sel = LsL21(alpha=0.3, tol=1e-10, max_iter=100_000).fit(X, Y)
    assert sel.target_type_ == "regression" and sel.coef_.shape == (40, 3)
    Xs = (X - X.mean(axis=0)) / X.std(axis=0)
    ref = MultiTaskLasso(alpha=0.3 * sel.alpha_max_, tol=1e-12, max_iter=100_000).fit(Xs, Y)
    np.testing.assert_allclose(sel.coef_, ref.coef_.T, atol=1e-6)
    assert set(np.flatnonzero(sel.support_)) == {3, 17, 30}
