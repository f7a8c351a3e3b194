"""Knockoff kernels against independent references.

References: scikit-learn's ``ledoit_wolf_shrinkage`` (the shrinkage intensity); a dense p x p
implementation of the Gaussian knockoff formulas of Candès et al. (2018) (explicit inverse and
symmetric square root) driven by the same Gaussian draw; the defining covariance of knockoffs,
``Cov([Z, Z~]) = [[S, S - sI], [S - sI, S]]``, by Monte-Carlo; brute force over all thresholds
for knockoff(+); BH on ``1/e`` for e-BH (Wang & Ramdas 2022, their Proposition); tracemalloc
for the O(n p r) memory claim.
"""

import tracemalloc

import numpy as np
import pytest
from sklearn.covariance import ledoit_wolf_shrinkage

from sparsefs._kernels import knockoffs as ko
from sparsefs._kernels.multiple_testing import reject


def _data(n, p, seed=0):
    rng = np.random.default_rng(seed)
    mix = rng.normal(size=(p, p)) * 0.3 / np.sqrt(p)
    return rng.normal(size=(n, p)) @ (np.eye(p) + mix) * rng.uniform(0.5, 4, size=p) + 7.0


@pytest.mark.parametrize("shape", [(30, 80), (120, 15)])
def test_ledoit_wolf_equals_scikit_learn(shape):
    Z, _, _ = ko.standardize(_data(*shape))
    np.testing.assert_allclose(ko.ledoit_wolf_shrinkage(Z),
                               ledoit_wolf_shrinkage(Z, assume_centered=True), rtol=1e-10)


def test_standardize():
    X = _data(20, 6)
    X[:, 2] = 3.0
    Z, mean, scale = ko.standardize(X)
    np.testing.assert_allclose(Z.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(Z[:, [0, 1, 3]].std(axis=0), 1)
    np.testing.assert_allclose(Z[:, [0, 1, 3]], ((X - mean) / scale)[:, [0, 1, 3]])
    assert np.all(Z[:, 2] == 0)
    for factor in (1e-300, 1e300):  # no underflow or overflow in the squares
        np.testing.assert_allclose(ko.standardize(X * factor)[0], Z, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(25, 90), (80, 12)])
@pytest.mark.parametrize("shrinkage", [None, 0.3])
def test_low_rank_sampler_equals_dense_formulas(shape, shrinkage):
    n, p = shape
    Z, _, _ = ko.standardize(_data(n, p, seed=1))
    model = ko.fit_knockoff_model(Z, shrinkage)
    delta = model.shrinkage
    sigma = (1 - delta) * Z.T @ Z / n + delta * np.eye(p)
    eig = np.linalg.eigvalsh(sigma)
    np.testing.assert_allclose(model.min_eigenvalue, eig.min(), rtol=1e-8)
    s = min(2 * eig.min(), 1.0)
    np.testing.assert_allclose(model.s, s, rtol=1e-8)
    inv = np.linalg.inv(sigma)
    w, V = np.linalg.eigh(2 * s * np.eye(p) - s * s * inv)
    root = (V * np.sqrt(np.maximum(w, 0))) @ V.T
    G = np.random.default_rng(7).standard_normal((n, p))
    dense = Z - s * Z @ inv + G @ root
    got = ko.sample_knockoffs(model, Z, np.random.default_rng(7))
    # at s = 2 lambda_min the dense C has a zero eigenvalue, whose rounding (+-1e-16) the
    # square root in the reference amplifies to ~1e-8
    np.testing.assert_allclose(got, dense, atol=1e-6)


def test_knockoff_covariance_by_monte_carlo():
    """Rows drawn from N(0, S) with S the model's own estimate: [z, z~] has covariance
    [[S, S - sI], [S - sI, S]] (the swap-exchangeability of Gaussian knockoffs)."""
    p = 6
    Z0, _, _ = ko.standardize(_data(4, p, seed=2))  # rank 3 < p: the p >> n regime
    model = ko.fit_knockoff_model(Z0, 0.4)
    U, lam, delta, s = model.components, model.eigenvalues, model.shrinkage, model.s
    sigma = delta * np.eye(p) + (U * lam) @ U.T
    rng = np.random.default_rng(3)
    N = 200_000
    z = rng.multivariate_normal(np.zeros(p), sigma, size=N)
    zk = ko.sample_knockoffs(model, z, rng)
    cov = np.cov(np.hstack([z, zk]).T)
    np.testing.assert_allclose(cov[p:, p:], sigma, atol=0.02)
    np.testing.assert_allclose(cov[:p, p:], sigma - s * np.eye(p), atol=0.02)
    assert s == pytest.approx(min(2 * delta, 1.0))


def test_no_p_by_p_allocation():
    n, p = 40, 6000
    Z, _, _ = ko.standardize(np.random.default_rng(0).normal(size=(n, p)))
    tracemalloc.start()
    model = ko.fit_knockoff_model(Z)
    ko.sample_knockoffs(model, Z, np.random.default_rng(1))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 12 * n * p * 8, f"peak {peak / 1e6:.1f} MB"  # a p x p matrix: 288 MB
    assert peak < p * p * 8 / 20


def _threshold_brute_force(w, q, offset):
    for t in sorted(set(np.abs(w[w != 0]).tolist())):
        n_neg, n_pos = np.count_nonzero(w <= -t), np.count_nonzero(w >= t)
        if (offset + n_neg) / max(1, n_pos) <= q:
            return t
    return np.inf


def test_threshold_hand_example():
    W = np.array([5, 4, 3, -1, 2, 0, -0.5, 6, 7, 8, 9, 10.0])
    # t = 0.5: (1 + 2)/9 > 0.2; t = 1: (1 + 1)/9 = 0.22 > 0.2; t = 2: 1/9 <= 0.2
    assert ko.knockoff_threshold(W, 0.2, 1) == 2.0
    # knockoff (offset 0): t = 0.5: 2/9 > 0.2; t = 1: 1/9 <= 0.2
    assert ko.knockoff_threshold(W, 0.2, 0) == 1.0


def test_threshold_brute_force_and_infinite_cases():
    rng = np.random.default_rng(0)
    for _ in range(300):
        p = int(rng.integers(1, 40))
        W = np.round(rng.normal(size=p) + rng.uniform(0, 2), 1) * (rng.random(p) < 0.8)
        q = float(rng.choice([0.05, 0.1, 0.2, 0.5]))
        for offset in (0, 1):
            assert ko.knockoff_threshold(W, q, offset) == _threshold_brute_force(W, q, offset)
    # nine huge positive statistics, q = 0.1: (1 + 0)/9 > 0.1, so T = inf (select nothing)
    assert ko.knockoff_threshold(np.full(9, 100.0), 0.1, 1) == np.inf
    assert ko.knockoff_threshold(np.full(10, 100.0), 0.1, 1) == 100.0
    assert ko.knockoff_threshold(np.zeros(5), 0.5) == np.inf
    assert not ko.knockoff_evalues(np.full(9, 100.0), 0.1).any()


def test_evalues_and_ebh():
    W = np.array([5, 4, 3, -1, 2, 0, -0.5, 6, 7, 8, 9, 10.0])
    e = ko.knockoff_evalues(W, 0.2)  # T = 2, one W <= -2? none: e = 12 / 1 on W >= 2
    np.testing.assert_array_equal(e, np.where(W >= 2, 12.0, 0.0))
    rng = np.random.default_rng(1)
    for _ in range(200):
        ev = rng.exponential(size=30) ** 3 * rng.choice([0, 1], size=30)
        with np.errstate(divide="ignore"):
            p = np.minimum(1.0, 1.0 / ev)
        for alpha in (0.05, 0.2):
            assert np.array_equal(ko.e_benjamini_hochberg(ev, alpha), reject(p, alpha, "bh"))


def _factor_data(n, p, n_loaded, loading, seed):
    rng = np.random.default_rng(seed)
    L = np.zeros(p)
    L[:n_loaded] = loading
    return rng.normal(size=(n, 1)) * L + rng.normal(size=(n, p)) * np.sqrt(1 - L**2), L


def test_spiked_model_ignores_noise_and_recovers_a_factor():
    """Independent features: no eigenvalue above the Marchenko-Pastur edge, so the estimate is
    sigma^2 I with sigma^2 = 1. One factor (loading 0.6 on 400 of 2000 features, n = 100,
    gamma = 20; population spike l = 0.64 + 0.36 * 400 = 144.6): one strong component, aligned
    with the loadings, and over 10 seeds the mean estimated eigenvalue is within 10% of the
    Frobenius-optimal oracle 1 + (l - 1) c^2 = 127.0, c^2 = (1 - gamma/(l-1)^2) /
    (1 + gamma/(l-1)) = 0.877 (measured mean 121.5)."""
    Z, _, _ = ko.standardize(np.random.default_rng(0).normal(size=(100, 2000)))
    model = ko.fit_spiked_model(Z)
    assert model.components.shape == (2000, 0)
    assert model.shrinkage == pytest.approx(1.0) and model.s == 1.0
    ell, gamma = 144.64, 20.0
    c2 = (1 - gamma / (ell - 1) ** 2) / (1 + gamma / (ell - 1))
    oracle = 1 + (ell - 1) * c2
    tops = []
    for seed in range(10):
        X, L = _factor_data(100, 2000, 400, 0.6, seed=seed)
        Z, _, _ = ko.standardize(X)
        model = ko.fit_spiked_model(Z)
        # the factor, plus at most an edge fluctuation that the shrinker sets near 0
        assert model.components.shape[1] >= 1 and np.all(model.eigenvalues[1:] < 1.0)
        assert abs(model.components[:, 0] @ L / np.linalg.norm(L)) > 0.9
        tops.append(model.shrinkage + model.eigenvalues[0])
    assert abs(np.mean(tops) - oracle) / oracle < 0.10, (np.mean(tops), oracle)


def test_spiked_sampler_equals_dense_formulas():
    X, _ = _factor_data(40, 300, 60, 0.7, seed=2)
    Z, _, _ = ko.standardize(X)
    model = ko.fit_spiked_model(Z)
    U, lam, sigma2, s = model.components, model.eigenvalues, model.shrinkage, model.s
    p = Z.shape[1]
    sigma = sigma2 * np.eye(p) + (U * lam) @ U.T
    assert s == pytest.approx(min(2 * np.linalg.eigvalsh(sigma).min(), 1.0))
    inv = np.linalg.inv(sigma)
    w, V = np.linalg.eigh(2 * s * np.eye(p) - s * s * inv)
    root = (V * np.sqrt(np.maximum(w, 0))) @ V.T
    G = np.random.default_rng(9).standard_normal(Z.shape)
    dense = Z - s * Z @ inv + G @ root
    np.testing.assert_allclose(ko.sample_knockoffs(model, Z, np.random.default_rng(9)), dense,
                               atol=1e-6)


def _ar1(n, p, rho, seed):
    from scipy.linalg import toeplitz

    corr = toeplitz(rho ** np.arange(p))
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, p)) @ np.linalg.cholesky(corr).T, corr


def test_model_from_correlation_covariance_by_monte_carlo():
    """Exact knockoffs of a known correlation: Cov([z, z~]) = [[C, C - sI], [C - sI, C]]
    (the defining property, Candès et al. 2018), by Monte-Carlo on 200 000 rows of AR(1)."""
    Z, corr = _ar1(200_000, 5, 0.7, 0)
    model = ko.model_from_correlation(corr)
    assert model.s == pytest.approx(min(2 * np.linalg.eigvalsh(corr).min(), 1.0))
    Zk = ko.sample_knockoffs(model, Z, np.random.default_rng(1))
    cov = np.cov(np.hstack([Z, Zk]).T)
    off = corr - model.s * np.eye(5)
    expected = np.block([[corr, off], [off, corr]])
    np.testing.assert_allclose(cov, expected, atol=0.012)
    with pytest.raises(ValueError, match="not positive definite"):
        ko.model_from_correlation(np.ones((3, 3)))


def test_offdiag_u_statistic_equals_brute_force():
    """The Gram-matrix form equals the explicit sum over row pairs i != i' and feature
    pairs j != k."""
    rng = np.random.default_rng(2)
    A, B = rng.normal(size=(7, 4)), rng.normal(size=(7, 4))
    total = sum(A[i, j] * B[i, k] * A[m, j] * B[m, k]
                for i in range(7) for m in range(7) if m != i
                for j in range(4) for k in range(4) if k != j)
    stat, _ = ko._offdiag_u_statistic(A, B)
    assert stat == pytest.approx(total / 49, rel=1e-12)


def test_residual_check_calibrated_on_true_model_and_flags_low_rank_misfit():
    """The model check against closed forms. With the true AR(1) correlation (exact
    knockoffs) the held-out residual is noise: |z| < 3, fraction ~0, over 5 seeds. The spiked
    (low-rank) model fitted on other rows misses most of an AR(1) rho = 0.8 correlation:
    z > 10 and fraction > 0.3 (measured 0.5); the features' correlation energy is
    sum_k rho^(2|k|) - 1 = 2 rho^2 / (1 - rho^2) = 3.56 per feature (the estimate within
    15%). Independent features: no energy detected, nothing flagged."""
    for seed in range(5):
        Z, corr = _ar1(400, 300, 0.8, seed)
        fit, held = ko.standardize(Z[:200])[0], Z[200:]
        true = ko.knockoff_residual(ko.model_from_correlation(corr), held,
                                    np.random.default_rng(seed))
        assert abs(true.z) < 3 and abs(true.fraction) < 0.05, true
        assert true.energy == pytest.approx(2 * 0.64 / 0.36, rel=0.15)
        spiked = ko.knockoff_residual(ko.fit_spiked_model(fit), held,
                                      np.random.default_rng(seed))
        assert spiked.z > 10 and spiked.fraction > 0.3, spiked
    iid = np.random.default_rng(9).standard_normal((200, 300))
    check = ko.knockoff_residual(ko.fit_spiked_model(iid[:100]), iid[100:],
                                 np.random.default_rng(0))
    assert abs(check.z) < 3 and check.energy == 0.0 and check.fraction == 0.0
