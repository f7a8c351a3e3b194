"""RFS against independent references.

References: the duality certificate of min ||Y - XW||_{2,1} + gamma ||W||_{2,1} recomputed here
from the returned primal and dual variables (the dual max <Y, L> s.t. ||L_i|| <= 1,
||x_j^T L|| <= gamma is derived in the test's docstring); the subgradient conditions; the
paper's literal algorithm (Nie et al. 2010, Alg. 1: U = D^-1 A^T (A D^-1 A^T)^-1 Y with the dense
(n+d) x (n+d) diagonal D), run here as a dense reference on small data; planted-signal recovery
under the documented preprocessing (specs/peers.md §5.2 items 20, 21, 25).
"""

import numpy as np
import pytest

from sparsefs.datasets import make_planted_classification
from sparsefs.exceptions import NoFeatureSelectedWarning
from sparsefs.selection import RFS


def prepared(X, standardize=True):
    return (X - X.mean(0)) / X.std(0) if standardize else X


def certificate(est, X, y):
    """Primal value, dual value and feasibility of the returned pair (W, Lambda).

    Weak duality: for ||L_i|| <= 1 and ||x_j^T L|| <= gamma,
    ||Y - XW||_{2,1} >= <Y - XW, L> and gamma ||W||_{2,1} >= <W, X^T L>, so the primal objective
    is >= <Y, L>, with equality only at optimal pairs.
    """
    Xs = prepared(X, est.standardize)
    Y = np.eye(int(y.max()) + 1)[y]
    W, L, g = est.coef_, est.dual_coef_, est.gamma_
    primal = np.linalg.norm(Y - Xs @ W, axis=1).sum() + g * np.linalg.norm(W, axis=1).sum()
    dual = float(np.sum(Y * L))
    feasible = (np.linalg.norm(L, axis=1).max() <= 1 + 1e-12
                and np.linalg.norm(Xs.T @ L, axis=1).max() <= g * (1 + 1e-12))
    return primal, dual, feasible


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(0)
    n = 30
    y = rng.integers(0, 3, size=n)
    X = rng.normal(size=(n, 40))
    X[:, 7] += 2 * y
    X[:, 21] -= 1.5 * (y == 1)
    return X, y


@pytest.mark.parametrize("alpha", [0.2, 0.5, 0.8])
def test_duality_gap_certifies_the_solution(small, alpha):
    X, y = small
    est = RFS(alpha=alpha, tol=1e-8, max_iter=5000).fit(X, y)
    primal, dual, feasible = certificate(est, X, y)
    assert feasible
    assert 0 <= primal - dual <= 1e-8 * primal
    assert np.all(np.diff(est.objective_) <= 1e-12 * est.objective_[0])  # monotone (Theorem 1)


def test_subgradient_conditions(small):
    X, y = small
    est = RFS(alpha=0.5, tol=1e-10, max_iter=10000).fit(X, y)
    Xs = prepared(X)
    L, g, W = est.dual_coef_, est.gamma_, est.coef_
    norms = np.linalg.norm(W, axis=1)
    big = norms > 1e-3 * norms.max()
    np.testing.assert_allclose(Xs[:, big].T @ L, g * W[big] / norms[big, None], atol=1e-4 * g)
    E = np.eye(3)[y] - Xs @ W
    en = np.linalg.norm(E, axis=1)
    far = en > 1e-3 * en.max()
    np.testing.assert_allclose(L[far], E[far] / en[far, None], atol=1e-4)


def _paper_algorithm(X, Y, gamma, n_iter):
    """Nie et al. (2010) Algorithm 1, literally: dense A = [X, gamma I] and (n+d) x (n+d) D."""
    n, d = X.shape
    A = np.hstack([X, gamma * np.eye(n)])
    D = np.eye(n + d)
    for _ in range(n_iter):
        Dinv = np.linalg.inv(D)
        U = Dinv @ A.T @ np.linalg.solve(A @ Dinv @ A.T, Y)
        D = np.diag(1 / (2 * np.maximum(np.linalg.norm(U, axis=1), 1e-300)))
    W = U[:d]
    return W, np.linalg.norm(Y - X @ W, axis=1).sum() + gamma * np.linalg.norm(W, axis=1).sum()


@pytest.mark.parametrize("shape", [(20, 35), (40, 6)])
def test_equals_the_papers_dense_algorithm(shape):
    rng = np.random.default_rng(1)
    n, d = shape
    y = rng.integers(0, 2, size=n)
    X = rng.normal(size=(n, d))
    X[:, 1] += 2 * y
    est = RFS(alpha=0.4, tol=1e-10, max_iter=5000).fit(X, y)
    W_ref, obj_ref = _paper_algorithm(prepared(X), np.eye(2)[y], est.gamma_, 400)
    assert est.objective_[-1] == pytest.approx(obj_ref, rel=1e-6)
    assert est.objective_[-1] <= obj_ref * (1 + 1e-9)
    np.testing.assert_allclose(est.coef_, W_ref, atol=1e-3 * np.abs(W_ref).max())


def test_gamma_max_gives_zero(small):
    """§5.2 item 20 applied to RFS: alpha >= 1 gives W = 0, just below some rows enter."""
    X, y = small
    with pytest.warns(NoFeatureSelectedWarning):
        est = RFS(alpha=1.0).fit(X, y)
    assert not est.coef_.any() and not est.support_.any()
    primal, dual, feasible = certificate(est, X, y)
    assert feasible and primal == pytest.approx(dual)
    assert RFS(alpha=0.9).fit(X, y).support_.any()


def test_preprocessing_and_scale(small):
    """§5.2 item 21: the penalty is relative to gamma_max, so a global rescaling of X (which made
    scikit-feature's absolute gamma = 1 recover 1/20 on raw and 20/20 on row-normalised data)
    changes nothing; with standardize=True the units of each feature do not matter either."""
    X, y = small
    ref = RFS(n_features_to_select=5).fit(X, y)
    for Xt in (X * 1e3, X * 1e-3, X * np.logspace(-2, 2, 40) - 7.0):
        np.testing.assert_array_equal(RFS(n_features_to_select=5).fit(Xt, y).support_,
                                      ref.support_)
    raw = RFS(n_features_to_select=5, standardize=False).fit(X, y)
    np.testing.assert_array_equal(
        RFS(n_features_to_select=5, standardize=False).fit(X * 1e4, y).support_, raw.support_)


@pytest.fixture(scope="module")
def planted():
    return make_planted_classification(random_state=0)


def test_planted_recovery_under_documented_preprocessing(planted):
    """>= 18/20 at random indices with the documented preprocessing (standardize=True), and also
    on the raw and on the row-L2-normalised data (skfeature: 1/20 raw, 20/20 row-normalised)."""
    X, y, truth = planted.X, planted.y, planted.support
    est = RFS(n_features_to_select=20).fit(X, y)
    assert est.n_iter_ < 300 and (est.support_ & truth).sum() >= 18
    raw = RFS(n_features_to_select=20, standardize=False).fit(X, y)
    assert (raw.support_ & truth).sum() >= 18
    Xr = X / np.linalg.norm(X, axis=1, keepdims=True)
    assert (RFS(n_features_to_select=20, standardize=False).fit(Xr, y).support_ & truth).sum() >= 18


def test_own_rule_keeps_nonzero_rows(small):
    X, y = small
    est = RFS(alpha=0.5).fit(X, y)
    norms = np.linalg.norm(est.coef_, axis=1)
    np.testing.assert_array_equal(est.support_, norms > 1e-6 * norms.max())


def test_reports_iterations_and_warns(small):
    X, y = small
    from sparsefs.exceptions import ConvergenceWarning

    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        est = RFS(max_iter=2, tol=1e-12).fit(X, y)
    assert est.n_iter_ == 2 and est.objective_.shape == (2,) and est.duality_gap_.shape == (2,)


def test_certificate_in_the_callers_units_without_standardizing(small):
    """standardize=False: coef_, gamma_ and the certificate refer to X itself (here x 1e3)."""
    X, y = small
    X = X * 1e3
    est = RFS(alpha=0.4, standardize=False, tol=1e-8, max_iter=5000).fit(X, y)
    primal, dual, feasible = certificate(est, X, y)
    assert feasible and 0 <= primal - dual <= 1e-8 * primal
