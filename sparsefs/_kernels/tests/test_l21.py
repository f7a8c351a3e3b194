"""The shared l2,1 / proximal machinery against independent references.

References: the definition of a proximal operator (the prox minimises its objective; checked by
random perturbations and by hypothesis); dense solves of the reweighted normal equations
(``numpy.linalg.solve`` on the d x d system, and the paper's (n+d) x (n+d) form for RFS); the
largest singular value from ``numpy.linalg.svd``; a counting function for the path search.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sparsefs._kernels.elastic_net import ElasticNetPenalty
from sparsefs._kernels.group_lasso import (
    GroupL21Penalty,
    LeastSquares,
    Multinomial,
    group_soft_threshold,
    irls_l21_step,
    l21_norm,
    lipschitz_bound,
    prox_grad_working_set,
    row_norms,
)
from sparsefs._kernels.l21 import path_to_n_nonzero, prepare_design, selection_scores

finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


@settings(max_examples=40, deadline=None)
@given(V=arrays(np.float64, (6, 3), elements=finite), t=st.floats(0.0, 50.0))
def test_group_soft_threshold_is_the_prox(V, t):
    """prox minimises 0.5||U - V||^2 + t||U||_{2,1}: no random perturbation does better."""
    U = group_soft_threshold(V, t)

    def objective(A):
        return 0.5 * np.sum((A - V) ** 2) + t * l21_norm(A)

    rng = np.random.default_rng(0)
    best = objective(U)
    for _ in range(20):
        assert objective(U + 1e-3 * rng.normal(size=U.shape)) >= best - 1e-9
    # rows with norm <= t vanish, the others shrink by exactly t
    norms = np.linalg.norm(V, axis=1)
    np.testing.assert_allclose(np.linalg.norm(U, axis=1), np.maximum(norms - t, 0), atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(V=arrays(np.float64, (5, 2), elements=finite), t=st.floats(0.0, 50.0),
       rho=st.floats(0.05, 1.0))
def test_elastic_net_prox_minimises_its_objective(V, t, rho):
    pen = ElasticNetPenalty(rho)
    U = pen.prox(V, t)

    def objective(A):
        return 0.5 * np.sum((A - V) ** 2) + pen.value(A, t)

    rng = np.random.default_rng(1)
    for _ in range(20):
        assert objective(U + 1e-3 * rng.normal(size=U.shape)) >= objective(U) - 1e-9


def test_row_norms_do_not_overflow():
    W = np.array([[3e300, 4e300], [0.0, 0.0], [3e-300, 4e-300]])
    np.testing.assert_allclose(row_norms(W), [5e300, 0.0, 5e-300], rtol=1e-12)


@pytest.mark.parametrize("shape", [(8, 30), (30, 8)])
def test_irls_step_equals_dense_normal_equations(shape):
    """Both small-dimension forms equal the d x d normal equations of the majoriser."""
    rng = np.random.default_rng(2)
    n, d = shape
    X, Y = rng.normal(size=(n, d)), rng.normal(size=(n, 3))
    b = rng.uniform(0.1, 2.0, size=d)  # previous row norms
    a = rng.uniform(0.1, 2.0, size=n)  # previous residual norms
    gamma = 0.7
    W, Z = irls_l21_step(X, Y, b, a, gamma)
    # minimiser of sum_i ||y_i - x_i W||^2 / a_i + gamma sum_j ||w_j||^2 / b_j
    ref = np.linalg.solve(X.T @ (X / a[:, None]) + gamma * np.diag(1 / b), X.T @ (Y / a[:, None]))
    np.testing.assert_allclose(W, ref, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(gamma * Z * a[:, None], Y - X @ W, rtol=1e-7, atol=1e-9)


def test_irls_step_equals_the_papers_augmented_form():
    """Nie et al.'s U = D^-1 A^T (A D^-1 A^T)^-1 Y with A = [X, gamma I], formed densely."""
    rng = np.random.default_rng(3)
    n, d, gamma = 7, 12, 0.4
    X, Y = rng.normal(size=(n, d)), rng.normal(size=(n, 2))
    b, a = rng.uniform(0.2, 1.5, size=d), rng.uniform(0.2, 1.5, size=n)
    A = np.hstack([X, gamma * np.eye(n)])
    # U = [W; E / gamma]: row norms of E/gamma are a_i / gamma
    Dinv = np.diag(np.concatenate([b, a / gamma]))
    U = Dinv @ A.T @ np.linalg.solve(A @ Dinv @ A.T, Y)
    W, _ = irls_l21_step(X, Y, b, a, gamma)
    np.testing.assert_allclose(W, U[:d], rtol=1e-8, atol=1e-10)


def test_lipschitz_bound_is_sigma_max_squared():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(9, 25))
    sigma = np.linalg.svd(np.column_stack([X, np.ones(9)]), compute_uv=False)[0]
    assert lipschitz_bound(X, 0.5, True) == pytest.approx(0.5 * sigma**2, rel=1e-8)


def test_prepare_design_standardizes_without_touching_x():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(20, 4)) * [1, 1e300, 1e-300, 0] + [0, 0, 0, 7]
    before = X.copy()
    P = prepare_design(X, center=True, standardize=True)
    np.testing.assert_array_equal(X, before)
    np.testing.assert_allclose(P.X[:, :3].std(axis=0), 1.0, rtol=1e-12)
    np.testing.assert_allclose(P.X.mean(axis=0), 0.0, atol=1e-12)
    assert P.constant.tolist() == [False, False, False, True]
    assert np.all(P.X[:, 3] == 0)
    np.testing.assert_allclose((X[:, :3] - P.offset[:3]) / P.scale[:3], P.X[:, :3], rtol=1e-9)


def test_selection_scores_order_active_then_closeness():
    coef = np.array([[0.0, 0.0], [3.0, 4.0], [0.0, 0.0], [0.1, 0.0]])
    closeness = np.array([-0.1, 0.0, -0.5, 0.0])
    s = selection_scores(coef, closeness, np.array([False, False, False, False]))
    assert list(np.argsort(-s, kind="stable")) == [1, 3, 0, 2]


@pytest.mark.parametrize("datafit", [LeastSquares(), Multinomial()])
def test_prox_grad_meets_kkt(datafit):
    """The returned point satisfies the KKT conditions computed here from scratch."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(40, 60))
    y = rng.integers(0, 3, size=40)
    X[:, 5] += y
    Y = np.eye(3)[y]
    fit_b = isinstance(datafit, Multinomial)
    if not fit_b:
        X, Y = X - X.mean(0), Y - Y.mean(0)
    lam = 0.02
    res = prox_grad_working_set(X, Y, datafit, GroupL21Penalty(), lam, fit_intercept=fit_b,
                                max_iter=20000, tol=1e-9, scale=1.0)
    assert res.converged
    Z = X @ res.coef + res.intercept
    if fit_b:
        P = np.exp(Z - Z.max(1, keepdims=True))
        P /= P.sum(1, keepdims=True)
        G = X.T @ (P - Y) / 40
        np.testing.assert_allclose((P - Y).sum(0) / 40, 0, atol=1e-8)
    else:
        G = X.T @ (Z - Y) / 40
    norms = np.linalg.norm(res.coef, axis=1)
    nz = norms > 0
    assert nz.any() and not nz.all()
    np.testing.assert_allclose(G[nz] + lam * res.coef[nz] / norms[nz, None], 0, atol=1e-8)
    assert np.all(np.linalg.norm(G[~nz], axis=1) <= lam + 1e-8)


def test_path_reaches_exact_count_when_possible():
    """A monotone step function of the penalty: the search lands on the count asked for."""
    thresholds = np.sort(np.random.default_rng(7).uniform(0, 1, size=50))[::-1]

    def fit_at(ratio, warm):
        n = int((thresholds > ratio).sum())
        return n, n

    for k in (1, 7, 30, 50):
        res = path_to_n_nonzero(fit_at, k)
        assert res.n_nonzero == k
        assert res.ratio <= thresholds[k - 1] and res.ratio > thresholds[k] if k < 50 else True
    # unreachable: the smallest penalty's count is returned
    res = path_to_n_nonzero(lambda r, w: (0, 0), 3)
    assert res.n_nonzero == 0 and res.ratio == pytest.approx(1e-4)
