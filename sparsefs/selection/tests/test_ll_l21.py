"""LlL21 against independent references.

References: the KKT conditions of the l2,1-penalised multinomial logistic problem (gradient by
softmax, computed here); a plain proximal-gradient (ISTA) solver written here, without
acceleration, working sets or restarts; lambda_max (W = 0 at and above it); planted-signal
recovery; the peers' regression test (specs/peers.md §5.2 item 19: scikit-feature's ll_l21
crashes on numpy 2 for binary and multiclass labels).
"""

import numpy as np
import pytest

from sparsefs.datasets import make_planted_classification
from sparsefs.exceptions import NoFeatureSelectedWarning
from sparsefs.selection import LlL21


def standardized(X):
    return (X - X.mean(0)) / X.std(0)


def gradient(Xs, Y, W, b):
    Z = Xs @ W + b
    P = np.exp(Z - Z.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    return Xs.T @ (P - Y) / Xs.shape[0], (P - Y).mean(0)


def ista(Xs, Y, lam, n_iter=20000):
    """Proximal gradient with a fixed step 1/L, L = ||[X, 1]||^2 / (2n)."""
    n, d = Xs.shape
    A = np.column_stack([Xs, np.ones(n)])
    step = 2 * n / np.linalg.norm(A, 2) ** 2
    W, b = np.zeros((d, Y.shape[1])), np.zeros(Y.shape[1])
    for _ in range(n_iter):
        G, g = gradient(Xs, Y, W, b)
        V = W - step * G
        norms = np.linalg.norm(V, axis=1, keepdims=True)
        W = V * np.maximum(0, 1 - step * lam / np.maximum(norms, 1e-300))
        b = b - step * g
    return W, b


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(0)
    n = 40
    y = rng.integers(0, 3, size=n)
    X = rng.normal(size=(n, 20))
    X[:, 2] += 1.5 * y
    X[:, 13] -= 1.0 * (y == 0)
    return X, y


@pytest.mark.parametrize("n_classes", [2, 3])
def test_kkt_binary_and_multiclass(small, n_classes):
    """§5.2 item 19: runs (numpy 2) and is optimal for binary and multiclass labels."""
    X, y = small
    y = y % n_classes
    est = LlL21(alpha=0.3, tol=1e-10, max_iter=50000).fit(X, y)
    Xs, Y = standardized(X), np.eye(n_classes)[y]
    lam = 0.3 * est.alpha_max_
    G, g = gradient(Xs, Y, est.coef_, est.intercept_)
    np.testing.assert_allclose(g, 0, atol=1e-9)
    norms = np.linalg.norm(est.coef_, axis=1)
    nz = norms > 0
    assert nz.any()
    np.testing.assert_allclose(G[nz] + lam * est.coef_[nz] / norms[nz, None], 0, atol=1e-9)
    assert np.all(np.linalg.norm(G[~nz], axis=1) <= lam + 1e-9)


def test_equals_plain_proximal_gradient(small):
    X, y = small
    est = LlL21(alpha=0.4, tol=1e-11, max_iter=50000).fit(X, y)
    W, b = ista(standardized(X), np.eye(3)[y], 0.4 * est.alpha_max_)
    np.testing.assert_allclose(est.coef_, W, atol=1e-6)
    # the intercept is defined up to a common shift of the K classes
    np.testing.assert_allclose(est.intercept_ - est.intercept_.mean(), b - b.mean(), atol=1e-6)


def test_lambda_max_gives_zero(small):
    X, y = small
    with pytest.warns(NoFeatureSelectedWarning):
        est = LlL21(alpha=1.0).fit(X, y)
    assert not est.coef_.any()
    assert LlL21(alpha=0.95).fit(X, y).support_.any()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_runs_on_random_data_sets(seed):
    """skfeature's ll_l21 crashed on 0/10 random data sets; every one runs here."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(30, 50))
    y = rng.integers(0, 2 + seed, size=30)
    est = LlL21(n_features_to_select=5).fit(X, y)
    assert est.support_.sum() == 5 and np.isfinite(est.coef_).all()


def test_planted_recovery():
    """>= 18/20 planted features at random indices."""
    data = make_planted_classification(random_state=0)
    est = LlL21(n_features_to_select=20).fit(data.X, data.y)
    assert (est.support_ & data.support).sum() >= 18


@pytest.mark.parametrize("name", ["LlL21", "LsL21", "LassoSelector", "ElasticNetSelector"])
def test_iterations_objective_and_convergence_warning(small, name):
    """Every iterative solver reports n_iter_ and its objective, and warns when it stops early."""
    import sparsefs.selection as sel
    from sparsefs.exceptions import ConvergenceWarning

    X, y = small
    cls = getattr(sel, name)
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        est = cls(alpha=0.05, max_iter=3, tol=1e-14).fit(X, y)
    assert est.n_iter_ == 3 and est.objective_.size >= 1
    done = cls(alpha=0.3, tol=1e-6, max_iter=5000).fit(X, y)
    assert 0 < done.n_iter_ < 5000 and np.all(np.isfinite(done.objective_))
    assert done.objective_[-1] <= done.objective_[0] + 1e-12
