"""Sparse KOS kernels against independent references.

References, named in each test: explicit loops over pairs and features (the paper's formulas
written out naively, binary case with a vector alpha), central finite differences,
``scipy.optimize`` minimisers of the stated objectives, ``scipy.spatial.distance.cdist``,
``numpy.quantile`` over explicitly enumerated pairs, the shrinkage intensity computed in an
explicit feature space, and the optimality (KKT) conditions of the box-constrained lasso.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize
from scipy.spatial.distance import cdist

from sparsefs._kernels import sparse_kos as k


def _data(n=14, p=4, seed=0, n_classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = np.arange(n) % n_classes
    X[:, 0] += 1.5 * y
    return X, y


def _centering(n):
    return np.eye(n) - np.ones((n, n)) / n


def _naive_kernel(X, w, sigma2, Y=None):
    Y = X if Y is None else Y
    K = np.empty((X.shape[0], Y.shape[0]))
    for i in range(X.shape[0]):
        for j in range(Y.shape[0]):
            K[i, j] = np.exp(-np.sum(w**2 * (X[i] - Y[j]) ** 2) / sigma2)
    return K


def _naive_T(X, w, sigma2, alpha):
    """T[:, l] = C dK/dw_l C alpha, one n x n derivative matrix per feature (the slow way)."""
    n, p = X.shape
    C = _centering(n)
    K = _naive_kernel(X, w, sigma2)
    T = np.zeros((n, p))
    for l in range(p):
        D = (X[:, l][:, None] - X[:, l][None, :]) ** 2
        dK = -(2 * w[l] / sigma2) * D * K
        T[:, l] = C @ dK @ C @ alpha
    return T


def _kkt_violation(Q, beta, w, lam):
    """Largest violation of the KKT conditions of min w'Qw - 2b'w + lam|w|_1, |w| <= 1."""
    g = 2 * (Q @ w - beta)
    viol = np.zeros_like(w)
    inside = (np.abs(w) > 0) & (np.abs(w) < 1)
    viol[inside] = np.abs(g[inside] + lam * np.sign(w[inside]))
    zero = w == 0
    viol[zero] = np.maximum(np.abs(g[zero]) - lam, 0)
    up, down = w == 1, w == -1
    viol[up] = np.maximum(g[up] + lam, 0)  # moving inward must not decrease the objective
    viol[down] = np.maximum(-(g[down] - lam), 0)
    return viol.max()


# --------------------------------------------------------------------------------------------
# optimal scores and kernels
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("counts", [[7, 5], [3, 9, 4], [2, 2, 5, 11]])
def test_score_vectors_are_optimal_scoring_normalised(counts):
    """Reference: the optimal-scoring constraints Theta' D_pi Theta = I, pi' Theta = 0."""
    counts = np.array(counts)
    pi = counts / counts.sum()
    theta = k.score_vectors(counts)
    np.testing.assert_allclose(theta.T @ np.diag(pi) @ theta, np.eye(len(counts) - 1), atol=1e-12)
    np.testing.assert_allclose(pi @ theta, 0, atol=1e-12)
    y = np.repeat(np.arange(len(counts)), counts)
    Z = k.optimal_scores(y, len(counts))
    np.testing.assert_allclose(Z.T @ Z / len(y), np.eye(len(counts) - 1), atol=1e-12)


def test_binary_scores_are_the_papers_theta():
    """Reference: the paper's theta = (sqrt(n2/n1), -sqrt(n1/n2)) (Section 2)."""
    theta = k.score_vectors(np.array([7, 5]))
    np.testing.assert_allclose(theta[:, 0], [np.sqrt(5 / 7), -np.sqrt(7 / 5)], rtol=1e-14)


def test_gaussian_kernel_matches_cdist():
    """Reference: scipy cdist of the weighted points, and explicit loops."""
    X, _ = _data(n=9, p=5, seed=1)
    Y = np.random.default_rng(2).normal(size=(4, 5))
    w = np.array([1.0, 0.0, -0.5, 0.3, 1.0])
    K = k.gaussian_kernel(X, 2.5, w)
    np.testing.assert_allclose(K, np.exp(-cdist(X * w, X * w, "sqeuclidean") / 2.5), atol=1e-13)
    np.testing.assert_allclose(K, _naive_kernel(X, w, 2.5), atol=1e-13)
    np.testing.assert_allclose(np.diag(K), 1.0)
    Kxy = k.gaussian_kernel(Y, 2.5, w, Y=X)
    np.testing.assert_allclose(Kxy, _naive_kernel(Y, w, 2.5, X), atol=1e-13)
    np.testing.assert_allclose(k.gaussian_kernel(X, 2.5, np.zeros(5)), 1.0)


def test_sigma2_candidates_are_quantiles_of_between_class_pairs():
    """Reference: numpy.quantile over the explicitly enumerated between-class pairs."""
    X, y = _data(n=20, p=3, seed=3, n_classes=3)
    pairs = [np.sum((X[i] - X[j]) ** 2) for i in range(20) for j in range(i + 1, 20)
             if y[i] != y[j]]
    qs = (0.05, 0.1, 0.2, 0.3, 0.5)
    np.testing.assert_allclose(k.sigma2_candidates(X, y, qs, "paper"), np.quantile(pairs, qs),
                               rtol=1e-10)
    np.testing.assert_allclose(k.sigma2_candidates(X, y, qs, "package"),
                               np.quantile(np.sqrt(pairs), qs), rtol=1e-10)


def test_stabilization_equals_shrinkage_intensity_in_feature_space():
    """Reference: t = n/((n-1)^2 (n-2)) sum_ab sum_k (z_ka z_kb - s_ab)^2 / ||S||_F^2 computed
    from explicit centred features z (a linear kernel), spec 2.9 item 2."""
    rng = np.random.default_rng(4)
    n, d = 15, 4
    F = rng.normal(size=(n, d)) * [3.0, 1.0, 0.5, 0.1]
    Zc = F - F.mean(axis=0)
    M = Zc @ Zc.T
    prods = Zc[:, :, None] * Zc[:, None, :]  # (n, d, d)
    s_bar = prods.mean(axis=0)
    S = Zc.T @ Zc / (n - 1)
    t = n / ((n - 1) ** 2 * (n - 2)) * np.sum((prods - s_bar) ** 2) / np.sum(S**2)
    gamma, t_hat = k.stabilization_ridge(M)
    assert t_hat == pytest.approx(min(max(t, 0), 1 - 1e-8), rel=1e-10)
    assert gamma == pytest.approx(t_hat / (1 - t_hat), rel=1e-10)


# --------------------------------------------------------------------------------------------
# KOS: closed form (5) and projection (6)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("eps", [1e-5, 0.05])
def test_closed_form_equals_numerical_minimisation(n_classes, eps):
    """Reference: scipy.optimize (BFGS) on the KOS objective (4) itself."""
    X, y = _data(n=12, p=3, seed=5, n_classes=n_classes)
    sigma2, ridge = 3.0, 0.05
    Z = k.optimal_scores(y, n_classes)
    M, _ = k.double_center(_naive_kernel(X, np.ones(3), sigma2))
    n, q = Z.shape

    def objective(a):
        A = a.reshape(n, q)
        return (np.sum((Z - M @ A) ** 2) / n
                + ridge * np.trace(A.T @ (M + eps * np.eye(n)) @ A))

    def gradient(a):
        A = a.reshape(n, q)
        G = -2 / n * M @ (Z - M @ A) + 2 * ridge * (M + eps * np.eye(n)) @ A
        return G.ravel()

    res = minimize(objective, np.zeros(n * q), jac=gradient, method="BFGS",
                   options={"gtol": 1e-13, "maxiter": 20000})
    A_num = res.x.reshape(n, q)
    for solver in ("cholesky", "eigh"):
        A = k.kos_dual_coef(M, Z, ridge, eps=eps, form="paper", solver=solver)
        assert objective(A.ravel()) <= res.fun + 1e-12
        np.testing.assert_allclose(A, A_num, atol=1e-6)
        np.testing.assert_allclose(M @ A, M @ A_num, atol=1e-8)
    # the internal kernel-level solver (partial fractions, CG on the easy factor)
    K = _naive_kernel(X, np.ones(3), sigma2)
    A_int, MA = k._dual_coef_from_kernel(K, Z, ridge, eps, "paper", "cholesky", None)
    np.testing.assert_allclose(A_int, A_num, atol=1e-6)
    np.testing.assert_allclose(MA, M @ A_int, atol=1e-12)


def test_package_form_solves_its_system_and_matches_the_fitted_values():
    """Reference: the biClassify system (M + n gamma I) A = Z by numpy.linalg.solve; fitted
    values equal to those of (5) up to O(eps)."""
    X, y = _data(n=16, p=3, seed=6, n_classes=3)
    Z = k.optimal_scores(y, 3)
    K = _naive_kernel(X, np.ones(3), 2.0)
    M, _ = k.double_center(K)
    ridge = 0.2
    ref = np.linalg.solve(M + 16 * ridge * np.eye(16), Z)
    for solver in ("cholesky", "eigh", "cg"):
        np.testing.assert_allclose(
            k.kos_dual_coef(M, Z, ridge, form="package", solver=solver), ref, atol=1e-9)
    A_cg, MA = k._dual_coef_from_kernel(K, Z, ridge, 1e-5, "package", "cg", None)
    np.testing.assert_allclose(A_cg, ref, atol=1e-7 * np.abs(ref).max())
    np.testing.assert_allclose(MA, M @ A_cg, atol=1e-10)
    A_paper = k.kos_dual_coef(M, Z, ridge, form="paper")
    np.testing.assert_allclose(M @ A_paper, M @ ref, atol=1e-4)
    with pytest.raises(ValueError, match="solver='cg' needs form='package'"):
        k.kos_dual_coef(M, Z, ridge, form="paper", solver="cg")


def test_projection_equals_fitted_values_on_training_points():
    """Reference: P(x_i) = (M A)_i, the fitted values (spec 2.5 (6))."""
    X, y = _data(n=15, p=4, seed=7, n_classes=3)
    w = np.array([1.0, 0.4, 0.0, -0.8])
    K = _naive_kernel(X, w, 1.7)
    M, col_mean = k.double_center(K)
    Z = k.optimal_scores(y, 3)
    A = k.kos_dual_coef(M, Z, 0.1)
    P = k.project(k.gaussian_kernel(X, 1.7, w, Y=X), col_mean, A)
    np.testing.assert_allclose(P, M @ A, atol=1e-12)
    # and the definition <Phi(x) - Phi_bar, f> with f = sum_i (CA)_i (Phi(x_i) - Phi_bar)
    x_new = np.random.default_rng(8).normal(size=(3, 4))
    kx = _naive_kernel(x_new, w, 1.7, X)
    C = _centering(15)
    expected = (kx - K.mean(axis=0)) @ C @ A
    np.testing.assert_allclose(k.project(kx, col_mean, A), expected, atol=1e-12)


# --------------------------------------------------------------------------------------------
# linearisation, gradients, coordinate descent
# --------------------------------------------------------------------------------------------


def test_kernel_jacobian_matches_naive_formula_and_finite_differences():
    """References: the per-feature n x n derivative (naive loop) and central finite
    differences of w -> M_w A."""
    X, _y = _data(n=11, p=4, seed=9, n_classes=3)
    w = np.array([0.9, -0.6, 0.0, 0.35])
    sigma2 = 2.2
    A = np.random.default_rng(10).normal(size=(11, 2))
    T = k.kernel_jacobian(k.gaussian_kernel(X, sigma2, w), X, A, w, sigma2)
    for c in range(2):
        np.testing.assert_allclose(T[c], _naive_T(X, w, sigma2, A[:, c]), atol=1e-12)
    h = 1e-6
    for l in range(4):
        e = np.zeros(4)
        e[l] = h
        Mp, _ = k.double_center(_naive_kernel(X, w + e, sigma2))
        Mm, _ = k.double_center(_naive_kernel(X, w - e, sigma2))
        fd = (Mp @ A - Mm @ A) / (2 * h)
        np.testing.assert_allclose(T[:, :, l].T, fd, atol=1e-7)


def test_weight_gradient_is_the_models_gradient_and_matches_finite_differences():
    """References: central finite differences of F(A fixed, w); the quadratic model's
    gradient 2Qw - 2beta (built from T, an independent route)."""
    X, y = _data(n=12, p=3, seed=11, n_classes=2)
    Z = k.optimal_scores(y, 2)
    w = np.array([0.8, 0.5, -0.3])
    sigma2, ridge = 1.9, 0.15
    K = k.gaussian_kernel(X, sigma2, w)
    M, _ = k.double_center(K)
    A = k.kos_dual_coef(M, Z, ridge) + 0.01  # any A, not only the optimal one
    R = Z - M @ A
    grad = k.weight_gradient(K, X, A, R, w, sigma2, ridge)

    def smooth(v):
        Mv, _ = k.double_center(_naive_kernel(X, v, sigma2))
        return k.kos_objective(Mv, Z, A, v, ridge, 0.0)

    h = 1e-6
    fd = [(smooth(w + h * e) - smooth(w - h * e)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-9)
    T = k.kernel_jacobian(K, X, A, w, sigma2)
    Q, beta = k.quadratic_model(T, R, A, w, ridge)
    np.testing.assert_allclose(2 * Q @ w - 2 * beta, grad, atol=1e-12)


def test_quadratic_model_is_the_papers_binary_model():
    """Reference: the paper's (14)-(15) written out for K = 2 with a vector alpha and the naive
    T: Q = T'T/n, beta = T'(Y theta - M alpha + T w)/n - (gamma/2) T' alpha."""
    X, y = _data(n=13, p=4, seed=12, n_classes=2)
    w = np.array([1.0, 0.7, -0.2, 0.5])
    sigma2, ridge = 2.0, 0.1
    K = _naive_kernel(X, w, sigma2)
    M, _ = k.double_center(K)
    theta = k.score_vectors(np.bincount(y))[:, 0]
    yt = theta[y]
    alpha = k.kos_dual_coef(M, yt[:, None], ridge)[:, 0]
    T = _naive_T(X, w, sigma2, alpha)
    Q_ref = T.T @ T / 13
    beta_ref = T.T @ (yt - M @ alpha + T @ w) / 13 - ridge / 2 * T.T @ alpha
    Q, beta = k.quadratic_model(k.kernel_jacobian(K, X, alpha[:, None], w, sigma2),
                                (yt - M @ alpha)[:, None], alpha[:, None], w, ridge)
    np.testing.assert_allclose(Q, Q_ref, atol=1e-12)
    np.testing.assert_allclose(beta, beta_ref, atol=1e-12)


def _random_model(seed, p=6, rank=None):
    rng = np.random.default_rng(seed)
    B = rng.normal(size=(rank or p + 2, p))
    return B.T @ B / 4, rng.normal(size=p)


@pytest.mark.parametrize("lam", [0.0, 0.3, 2.0, 50.0])
def test_coordinate_descent_matches_a_generic_bound_constrained_solver(lam):
    """References: KKT conditions of the box lasso; scipy L-BFGS-B on the split form
    w = u - v, u, v in [0, 1]."""
    Q, beta = _random_model(13)
    w, _sweeps, ok = k.coordinate_descent(Q, beta, np.ones(6), lam, tol=1e-12,
                                         max_sweeps=100000)
    assert ok
    assert _kkt_violation(Q, beta, w, lam) < 1e-8

    def f(uv):
        u, v = uv[:6], uv[6:]
        x = u - v
        return x @ Q @ x - 2 * beta @ x + lam * (u + v).sum()

    def g(uv):
        x = uv[:6] - uv[6:]
        gx = 2 * Q @ x - 2 * beta
        return np.concatenate([gx + lam, -gx + lam])

    res = minimize(f, np.full(12, 0.5), jac=g, method="L-BFGS-B", bounds=[(0, 1)] * 12,
                   options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10000})
    assert f(np.concatenate([np.maximum(w, 0), np.maximum(-w, 0)])) <= res.fun + 1e-9


def test_coordinate_descent_keeps_zeros_and_respects_bounds():
    """Reference: spec 2.7 step 4 (zero weights are absorbing); the box restriction."""
    Q, beta = _random_model(14)
    w0 = np.array([1.0, 0.0, 1.0, 0.0, 1.0, 1.0])
    w, _, _ = k.coordinate_descent(Q, beta, w0, 0.0)
    assert w[1] == 0 and w[3] == 0
    lo, hi = np.full(6, 0.2), np.full(6, 0.6)
    w, _, _ = k.coordinate_descent(Q, beta, np.full(6, 0.4), 0.1, lower=lo, upper=hi,
                                   tol=1e-12, max_sweeps=100000)
    assert np.all((w >= 0.2) & (w <= 0.6))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.0, 5.0), st.integers(1, 8))
def test_coordinate_descent_kkt_property(seed, lam, p):
    """Reference: KKT conditions of the box-constrained lasso, for random PSD models."""
    Q, beta = _random_model(seed, p=p, rank=max(1, p // 2))
    Q += 1e-3 * np.eye(p)
    w, _, ok = k.coordinate_descent(Q, beta, np.ones(p), lam, tol=1e-13, max_sweeps=200000)
    assert ok
    assert np.all(np.abs(w) <= 1)
    assert _kkt_violation(Q, beta, w, lam) < 1e-7


# --------------------------------------------------------------------------------------------
# lambda_max and the alternating algorithm
# --------------------------------------------------------------------------------------------


def _rings(seed=0, n=120):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 4))
    X[:, 2:] = rng.normal(size=(n, 2))
    y = (np.hypot(X[:, 0], X[:, 1]) > 0.6).astype(int)
    return (X - X.mean(0)) / X.std(0), y


def test_lambda_max_is_the_smallest_penalty_zeroing_the_first_step():
    """Reference: Lemma 1 - at w = 0 the subgradient condition is |2 beta_k| <= lambda."""
    X, y = _rings()
    Z = k.optimal_scores(y, 2)
    state = k.kos_state(X, Z, 2.0, 0.2, np.ones(4))
    lmax = k.lambda_max(X, Z, 2.0, 0.2, state)
    T = k.kernel_jacobian(state.K, X, state.dual_coef, state.weights, 2.0)
    Q, beta = k.quadratic_model(T, Z - state.fitted, state.dual_coef, state.weights, 0.2)
    w_above, _, _ = k.coordinate_descent(Q, beta, np.ones(4), lmax * (1 + 1e-9))
    w_below, _, _ = k.coordinate_descent(Q, beta, np.ones(4), lmax * 0.98)
    assert not w_above.any()
    assert w_below.any()
    # cold start at lambda >= lambda_max: w = 0 (a constant classifier)
    out, _, _, _ = k.sparse_kos(X, Z, 2.0, 0.2, 1.5 * lmax)
    assert not out.weights.any()


def test_alternating_algorithm_decreases_and_satisfies_kkt_at_convergence():
    """References: monotonicity of F (computed independently by kos_objective) and the KKT
    conditions of the weight update (14) at the converged w."""
    X, y = _rings(seed=1)
    Z = k.optimal_scores(y, 2)
    sigma2, ridge = 2.0, 0.2
    state = k.kos_state(X, Z, sigma2, ridge, np.ones(4))
    lam = 0.3 * k.lambda_max(X, Z, sigma2, ridge, state)
    out, hist, _n_iter, ok = k.sparse_kos(X, Z, sigma2, ridge, lam, tol=1e-13, max_iter=500,
                                         cd_tol=1e-12, cd_max_sweeps=100000)
    assert ok
    assert np.all(np.diff(hist) <= 1e-12)
    M, _ = k.double_center(out.K)
    assert hist[-1] == pytest.approx(
        k.kos_objective(M, Z, out.dual_coef, out.weights, ridge, lam), rel=1e-10)
    T = k.kernel_jacobian(out.K, X, out.dual_coef, out.weights, sigma2)
    Q, beta = k.quadratic_model(T, Z - out.fitted, out.dual_coef, out.weights, ridge)
    scale = max(1.0, np.abs(beta).max())
    assert _kkt_violation(Q, beta, out.weights, lam) < 1e-5 * scale
    assert out.weights[:2].all() and not out.weights[2:].any()


def test_extrapolated_point_lands_on_the_limit_of_a_geometric_run():
    """Reference: closed form - steps d, r d, r^2 d, ... sum to d r/(1 - r) after the second,
    so the jump from w_t = w_0 + d + r d lands on w_0 + d/(1 - r); a jump that would reach zero
    stops halfway, and no jump when the direction turns or the support changes."""
    w0, d, r = np.array([0.9, -0.8, 0.0]), np.array([-0.01, 0.02, 0.0]), 0.8
    w_t = w0 + d + r * d
    np.testing.assert_allclose(k._extrapolated_point(d, r * d, w_t), w0 + d / (1 - r))
    # a weight heading for zero: the jump stops at half its distance to zero
    d2 = np.array([-0.3, 0.02, 0.0])
    w2 = np.array([0.3, -0.8, 0.0])
    ext = k._extrapolated_point(d2, 0.9 * d2, w2)
    np.testing.assert_allclose(ext[0], 0.15)
    assert np.all(np.sign(ext) == np.sign(w2))
    assert k._extrapolated_point(d, -r * d, w_t) is None  # direction turned
    assert k._extrapolated_point(d, 1.2 * d, w_t) is None  # not shrinking
    w_off = w_t.copy()
    w_off[0] = 0.0
    assert k._extrapolated_point(d, r * d, w_off) is None  # support changed


@pytest.mark.parametrize("seed", [0, 1])
def test_extrapolated_loop_reaches_the_plain_loops_stationary_point_in_fewer_steps(seed):
    """Reference: the plain Algorithm 1 (``acceleration="none"``) at a tight tolerance, along
    the same warm path, on scikit-learn's tight two-blob design (where the plain loop converges
    at a rate of ~0.97 per step). At every lambda the accelerated run stops at the same weights
    (to the plain loop's own distance from its limit) and at an objective no higher, F never
    increases, and it needs several times fewer linearisations."""
    from sklearn.datasets import make_blobs

    X, y = make_blobs(n_samples=30, centers=[[0, 0, 0], [1, 1, 1]], random_state=seed,
                      n_features=2, cluster_std=0.1)
    X = (X - X.mean(0)) / X.std(0)
    Z = k.optimal_scores(y, 2)
    sigma2 = 9.0
    ridge = k.stabilization_ridge(k.double_center(k.gaussian_kernel(X, sigma2))[0])[0]
    state = k.kos_state(X, Z, sigma2, ridge, np.ones(3))
    alphas = np.linspace(1e-10, 0.15, 4) * k.lambda_max(X, Z, sigma2, ridge, state)
    kw = {"tol": 1e-12, "max_iter": 5000, "cd_tol": 1e-12, "cd_max_sweeps": 100000}
    plain = k.sparse_kos_path(X, Z, sigma2, ridge, alphas, acceleration="none", **kw)
    fast = k.sparse_kos_path(X, Z, sigma2, ridge, alphas, **kw)
    for p_fit, f_fit in zip(plain, fast):
        assert p_fit.converged and f_fit.converged
        assert np.all(np.diff(f_fit.objective) <= 1e-14)
        np.testing.assert_allclose(f_fit.weights, p_fit.weights, atol=5e-5)
        assert f_fit.objective[-1] <= p_fit.objective[-1] + 1e-13
    assert 4 * sum(f.n_iter for f in fast) < sum(f.n_iter for f in plain)
    with pytest.raises(ValueError, match="acceleration"):
        k.sparse_kos(X, Z, sigma2, ridge, alphas[1], state=state, acceleration="aitken")


def test_multiclass_objective_is_invariant_to_the_score_basis():
    """Reference: the derivation - replacing Theta by Theta R (R orthogonal) maps A to A R and
    leaves w, the objective and the projections' geometry unchanged."""
    X, y = _rings(seed=2)
    y = np.where(X[:, 0] > 0.8, 2, y)
    Z = k.optimal_scores(y, 3)
    R, _ = np.linalg.qr(np.random.default_rng(3).normal(size=(2, 2)))
    kw = {"tol": 1e-12, "max_iter": 30}
    a, ha, _, _ = k.sparse_kos(X, Z, 2.0, 0.1, 0.01, **kw)
    b, hb, _, _ = k.sparse_kos(X, Z @ R, 2.0, 0.1, 0.01, **kw)
    np.testing.assert_allclose(a.weights, b.weights, atol=1e-7)
    np.testing.assert_allclose(ha[-1], hb[-1], rtol=1e-9)
    np.testing.assert_allclose(a.dual_coef @ R, b.dual_coef, atol=1e-6)


def test_path_is_warm_started_and_zero_is_absorbing():
    """Reference: running sparse_kos by hand from the previous state at each lambda."""
    X, y = _rings(seed=4)
    Z = k.optimal_scores(y, 2)
    state = k.kos_state(X, Z, 2.0, 0.2, np.ones(4))
    lmax = k.lambda_max(X, Z, 2.0, 0.2, state)
    alphas = np.linspace(1e-10 * lmax, 3 * lmax, 6)
    fits = k.sparse_kos_path(X, Z, 2.0, 0.2, alphas, state=state)
    st_ = state
    for lam, fit in zip(alphas, fits):
        st_, _, _, _ = k.sparse_kos(X, Z, 2.0, 0.2, lam, state=st_)
        np.testing.assert_array_equal(fit.weights, st_.weights)
    zero = [not f.weights.any() for f in fits]
    assert zero == sorted(zero)  # once zero, zero for every larger lambda


# --------------------------------------------------------------------------------------------
# grouped kernel (repeated rows): exact, checked against the dense computation
# --------------------------------------------------------------------------------------------


def _discrete(seed=0, n=90):
    """Rings on a coarse grid (many repeated rows on x0, x1) plus continuous noise features."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.uniform(-1, 1, size=(n, 4)) * 3) / 3
    X[:, 3] = rng.normal(size=n)
    y = (np.hypot(X[:, 0], X[:, 1]) > 0.6).astype(int)
    return (X - X.mean(0)) / X.std(0), y


def test_grouped_kernel_equals_the_dense_kernel():
    """Reference: the dense kernel of all rows (gaussian_kernel) - products, column means,
    the expanded matrix and the doubly centred kernel U M_r U' of the grouped form."""
    X, _ = _discrete()
    w = np.array([0.9, -0.6, 0.0, 0.0])
    G = k.weighted_kernel(X, 1.7, w)
    assert isinstance(G, k.GroupedKernel) and G.Ku.shape[0] <= 49
    K = k.gaussian_kernel(X, 1.7, w)
    V = np.random.default_rng(0).normal(size=(X.shape[0], 3))
    np.testing.assert_allclose(np.asarray(G), K, atol=1e-14)
    np.testing.assert_allclose(G @ V, K @ V, atol=1e-12)
    np.testing.assert_allclose(G.mean(axis=0), K.mean(axis=0), atol=1e-14)
    U = np.zeros((X.shape[0], G.Ku.shape[0]))
    U[np.arange(X.shape[0]), G.inv] = 1.0 / np.sqrt(G.counts[G.inv])
    np.testing.assert_allclose(U @ G.reduced_centered() @ U.T, k.double_center(K)[0],
                               atol=1e-12)
    # continuous active feature: no repeats, dense kernel
    assert isinstance(k.weighted_kernel(X, 1.7, np.ones(4)), np.ndarray)
    assert isinstance(k.weighted_kernel(X, 1.7, w, group_ratio=0.0), np.ndarray)


@pytest.mark.parametrize(("form", "solver"), [("paper", "cholesky"), ("paper", "eigh"),
                                              ("package", "cholesky"), ("package", "cg")])
def test_grouped_closed_form_equals_the_dense_closed_form(form, solver):
    """Reference: kos_dual_coef on the dense doubly centred kernel (equation (5), or the
    package form), for every solver; the grouped solve works at size m."""
    X, y = _discrete(seed=1)
    Z = k.optimal_scores(y, 2)
    w = np.array([1.0, 0.7, 0.0, 0.0])
    dense = k.kos_state(X, Z, 1.3, 0.05, w, form=form, solver=solver, group_ratio=0.0)
    grouped = k.kos_state(X, Z, 1.3, 0.05, w, form=form, solver=solver)
    assert isinstance(grouped.K, k.GroupedKernel)
    ref = k.kos_dual_coef(k.double_center(dense.K)[0], Z, 0.05, form=form,
                          solver="cholesky" if solver == "cg" else solver)
    scale = np.abs(ref).max()
    np.testing.assert_allclose(grouped.dual_coef, ref, atol=1e-8 * scale)
    np.testing.assert_allclose(grouped.fitted, dense.fitted, atol=1e-8)
    np.testing.assert_allclose(grouped.smooth, dense.smooth, rtol=1e-9)
    np.testing.assert_allclose(grouped.col_mean, dense.col_mean, atol=1e-14)


@pytest.mark.parametrize("form", ["paper", "package"])
def test_grouped_path_equals_the_dense_path(form):
    """Reference: the same warm-started lambda path with grouping disabled (group_ratio=0):
    identical weights, outer iterations and objectives (the grouping is exact)."""
    X, y = _discrete(seed=2, n=120)
    Z = k.optimal_scores(y, 2)
    solver = "cholesky" if form == "paper" else "cg"
    state = k.kos_state(X, Z, 1.5, 0.1, np.ones(4), form=form, solver=solver)
    lmax = k.lambda_max(X, Z, 1.5, 0.1, state)
    alphas = np.linspace(1e-10 * lmax, lmax, 8)
    kw = {"form": form, "solver": solver}
    dense = k.sparse_kos_path(X, Z, 1.5, 0.1, alphas, group_ratio=0.0, **kw)
    grouped = k.sparse_kos_path(X, Z, 1.5, 0.1, alphas, **kw)
    assert any(f.weights.any() and not f.weights[3] for f in grouped)  # a grouped stretch
    for a, b in zip(dense, grouped):
        assert a.n_iter == b.n_iter
        np.testing.assert_allclose(b.weights, a.weights, atol=1e-9)
        np.testing.assert_allclose(b.objective, a.objective, rtol=1e-9, atol=1e-12)


# --------------------------------------------------------------------------------------------
# the factored weight model (p > n q: microarrays)
# --------------------------------------------------------------------------------------------


def _wide(seed=0, n=14, p=40):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = np.arange(n) % 3
    X[:, :3] += 1.2 * np.eye(3)[y]
    return (X - X.mean(0)) / X.std(0), y


def test_factored_model_is_the_dense_model():
    """Reference: the dense Q = (1/n) sum_c T_c^T T_c and beta of (14)-(15). The factor gives
    the same matrix, diagonal, products and beta, and coordinate descent on it the same
    minimiser (KKT of the dense model); inactive features are outside the factor."""
    X, y = _wide()
    Z = k.optimal_scores(y, 3)
    w = np.ones(X.shape[1])
    w[[5, 17]] = 0.0
    state = k.kos_state(X, Z, 30.0, 0.2, w)
    T = k.kernel_jacobian(state.K, X, state.dual_coef, w, 30.0)
    R = Z - state.fitted
    Q, beta = k.quadratic_model(T, R, state.dual_coef, w, 0.2)
    Qf, beta_f = k.quadratic_model(T, R, state.dual_coef, w, 0.2, factored=True)
    assert isinstance(Qf, k.FactoredQ) and 5 not in Qf.index and Qf.Tt.shape == (38, 28)
    np.testing.assert_allclose(Qf.toarray(), Q, rtol=1e-12, atol=1e-14 * np.abs(Q).max())
    np.testing.assert_allclose(Qf.diagonal(), np.diag(Q), rtol=1e-12)
    v = np.random.default_rng(1).normal(size=X.shape[1]) * (w != 0)
    np.testing.assert_allclose(Qf.matvec(v), Q @ v, rtol=1e-10, atol=1e-12 * np.abs(Q).max())
    np.testing.assert_allclose(beta_f, beta, rtol=1e-10, atol=1e-12 * np.abs(beta).max())
    auto_q, _ = k.quadratic_model(T, R, state.dual_coef, w, 0.2, factored=None)
    assert isinstance(auto_q, k.FactoredQ)  # 38 active features > n q = 28
    lam = 0.3 * 2 * np.abs(beta).max()
    kw = {"tol": 1e-13, "max_sweeps": 100000}
    wd, _, ok_d = k.coordinate_descent(Q, beta, w, lam, **kw)
    wf, _, ok_f = k.coordinate_descent(Qf, beta_f, w, lam, **kw)
    assert ok_d and ok_f
    np.testing.assert_allclose(wf, wd, atol=1e-9)
    assert _kkt_violation(Q, beta, wf, lam) < 1e-7 * max(1.0, np.abs(beta).max())
    with pytest.raises(ValueError, match="active features only"):
        k.coordinate_descent(Qf, beta_f, np.ones(X.shape[1]), lam)


def test_factored_path_equals_the_dense_path():
    """Reference: the same warm lambda path with the dense Q (the form used for p <= n q):
    equal iteration counts, objectives and weights to rounding."""
    X, y = _wide(seed=2, n=12, p=30)
    Z = k.optimal_scores(y, 3)
    st = k.kos_state(X, Z, 25.0, 0.2, np.ones(30))
    lmax = k.lambda_max(X, Z, 25.0, 0.2, st)
    alphas = np.linspace(1e-10 * lmax, lmax, 6)
    dense = k.sparse_kos_path(X, Z, 25.0, 0.2, alphas, state=st, factored=False)
    fact = k.sparse_kos_path(X, Z, 25.0, 0.2, alphas, state=st, factored=True)
    for a, b in zip(dense, fact):
        assert a.n_iter == b.n_iter
        np.testing.assert_allclose(b.weights, a.weights, atol=1e-9)
        np.testing.assert_allclose(b.objective, a.objective, rtol=1e-10)
