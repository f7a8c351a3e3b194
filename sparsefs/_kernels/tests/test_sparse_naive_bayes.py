"""Sparse naive Bayes kernels, checked against brute force over every support.

Independent references: the constrained log-likelihood evaluated directly from its definition
(a generic maximum-likelihood fit of each support, written here from the model, not from the
kernel's closed forms) and maximised by enumerating all supports.
"""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import xlogy

from sparsefs._kernels import sparse_naive_bayes as K


def _bernoulli_loglik(ones, totals, support):
    """Max log-likelihood of the Bernoulli model free on ``support`` (from the definition)."""
    zeros = totals[:, None] - ones
    theta = ones / totals[:, None]
    pooled = ones.sum(0) / totals.sum()
    theta = np.where(np.isin(np.arange(ones.shape[1]), support)[None, :], theta, pooled)
    return float((xlogy(ones, theta) + xlogy(zeros, 1 - theta)).sum())


def _multinomial_loglik(counts, support):
    """Max log-likelihood of the multinomial model free on ``support``, by a generic solver.

    For a fixed support the likelihood is maximised over the mass ``B`` kept off the support
    (shared by all classes) by a bounded scalar search, the class distributions inside and
    outside the support being proportional to the counts: an independent route to the optimum.
    """
    from scipy.optimize import minimize_scalar

    mask = np.zeros(counts.shape[1], dtype=bool)
    mask[list(support)] = True
    g = counts.sum(0)

    def neg(B):
        ll = 0.0
        if (~mask).any():
            ll += xlogy(g[~mask], B * g[~mask] / g[~mask].sum()).sum()
        if mask.any():
            fS = counts[:, mask]
            ll += xlogy(fS, (1 - B) * fS / fS.sum(1, keepdims=True)).sum()
        return -ll

    if not mask.any():
        return -neg(1.0)
    if mask.all():
        return -neg(0.0)
    res = minimize_scalar(neg, bounds=(1e-12, 1 - 1e-12), method="bounded",
                          options={"xatol": 1e-12})
    return -res.fun


@pytest.mark.parametrize("seed", range(20))
def test_bernoulli_top_k_is_the_brute_force_optimum(seed):
    rng = np.random.default_rng(seed)
    C, p = rng.integers(2, 4), rng.integers(3, 9)
    totals = rng.integers(3, 30, C).astype(float) + 2.0
    ones = np.floor(rng.random((C, p)) * (totals[:, None] - 2)) + 1.0
    gains = K.bernoulli_gains(ones, totals)
    base = _bernoulli_loglik(ones, totals, [])
    for k in (1, 2, 3):
        if k > p:
            continue
        best = max(
            _bernoulli_loglik(ones, totals, list(S)) for S in itertools.combinations(range(p), k)
        )
        chosen = np.argsort(-gains, kind="stable")[:k]
        assert _bernoulli_loglik(ones, totals, chosen) == pytest.approx(best, rel=1e-12, abs=1e-9)
        assert gains[chosen].sum() == pytest.approx(best - base, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("seed", range(40))
def test_multinomial_support_within_its_bound_of_brute_force(seed):
    rng = np.random.default_rng(seed)
    C, p = int(rng.integers(2, 5)), int(rng.integers(4, 9))
    counts = rng.poisson(rng.uniform(0.3, 6, (C, p))).astype(float) + 0.5
    base = _multinomial_loglik(counts, [])
    for k in range(1, p):
        supports = list(itertools.combinations(range(p), k))
        opt = max(_multinomial_loglik(counts, S) for S in supports) - base
        res = K.multinomial_support(counts, k)
        assert len(res.support) == k
        # the gain is the true log-likelihood gain of the support (generic solver)
        got = _multinomial_loglik(counts, res.support) - base
        assert res.gain == pytest.approx(got, rel=1e-7, abs=1e-7)
        # the bound is an upper bound of the optimum, and the gap certifies the result
        assert res.upper_bound >= opt - 1e-7
        assert res.gain >= opt - res.duality_gap - 1e-7
        assert res.duality_gap >= 0


def test_multinomial_reaches_the_optimum_in_most_cases():
    """Frank–Wolfe candidates + swaps: the brute-force optimum on >= 95% of small problems."""
    rng = np.random.default_rng(123)
    hits = total = 0
    for _ in range(60):
        C, p = int(rng.integers(2, 4)), int(rng.integers(4, 9))
        counts = rng.poisson(rng.uniform(0.3, 6, (C, p))).astype(float) + 0.5
        k = int(rng.integers(1, p))
        opt = max(K.multinomial_gain(counts, list(S))
                  for S in itertools.combinations(range(p), k))
        hits += K.multinomial_support(counts, k).gain >= opt - 1e-9
        total += 1
    assert hits >= 0.95 * total


def test_multinomial_gain_is_count_weighted_mutual_information():
    """Closed form: Delta(S) = G(S) * MI(class; feature | feature in S)."""
    rng = np.random.default_rng(0)
    counts = rng.poisson(5, (3, 10)).astype(float) + 1.0
    S = [1, 4, 7]
    t = counts[:, S]
    P = t / t.sum()
    mi = (P * np.log(P / P.sum(1, keepdims=True) / P.sum(0, keepdims=True))).sum()
    assert K.multinomial_gain(counts, S) == pytest.approx(t.sum() * mi, rel=1e-12)


def test_multinomial_weak_duality_at_any_pi():
    rng = np.random.default_rng(5)
    counts = rng.poisson(3, (2, 7)).astype(float) + 1.0
    opt = max(K.multinomial_gain(counts, list(S)) for S in itertools.combinations(range(7), 3))
    for a in np.linspace(0.05, 0.95, 19):
        assert K.multinomial_upper_bound(counts, 3, np.array([a, 1 - a])) >= opt - 1e-10


def test_multinomial_params_are_distributions_and_shared_off_support():
    rng = np.random.default_rng(1)
    counts = rng.poisson(4, (3, 12)).astype(float) + 1.0
    S = np.array([0, 5, 6])
    theta = np.exp(K.multinomial_log_params(counts, S))
    np.testing.assert_allclose(theta.sum(1), 1.0, rtol=1e-12)
    off = np.setdiff1d(np.arange(12), S)
    np.testing.assert_allclose(theta[:, off], np.broadcast_to(theta[0, off], (3, off.size)))


@pytest.mark.parametrize("threshold", [0.0, 0.3, -0.5])
@pytest.mark.parametrize("fmt", ["dense", "csr", "csc", "float32"])
def test_class_counts_every_format(threshold, fmt):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 9)) * (rng.random((40, 9)) < 0.4)
    y = rng.integers(0, 3, 40)
    expected = np.stack([(X[y == c] > threshold).sum(0) for c in range(3)]).astype(float)
    sums = np.stack([X[y == c].sum(0) for c in range(3)])
    Xf = {"dense": X, "csr": sp.csr_array(X), "csc": sp.csc_array(X),
          "float32": X.astype(np.float32)}[fmt]
    np.testing.assert_array_equal(K.binary_class_counts(Xf, y, 3, threshold), expected)
    tol = 1e-6 if fmt == "float32" else 1e-12
    np.testing.assert_allclose(K.class_count_sums(Xf, y, 3), sums, rtol=tol, atol=tol)


@pytest.mark.parametrize("threshold", [-0.5, 0.0, 0.5])
def test_class_counts_read_csc_and_csr_as_stored(threshold):
    """Reference: the dense counts of the same matrix (numpy, brute force), for CSR and for
    CSC read column by column (no conversion), the implicit zeros counted for a negative
    threshold."""
    from sparsefs._kernels.sparse_naive_bayes import binary_class_counts, class_count_sums

    rng = np.random.default_rng(5)
    X = rng.poisson(0.7, (40, 9)).astype(np.float64) * (rng.random((40, 9)) < 0.5)
    y = rng.integers(0, 3, 40)
    sums = np.vstack([X[y == c].sum(axis=0) for c in range(3)])
    ones = np.vstack([(X[y == c] > threshold).sum(axis=0) for c in range(3)]).astype(float)
    for S in (sp.csr_array(X), sp.csc_array(X)):
        np.testing.assert_array_equal(class_count_sums(S, y, 3), sums)
        np.testing.assert_array_equal(binary_class_counts(S, y, 3, threshold), ones)
