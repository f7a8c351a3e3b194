"""NDFS against an independent dense reference written from the paper's matrices.

Reference: Li et al. (2012) computed densely — W from scikit-learn's ``kneighbors_graph`` with
heat weights, the normalised Laplacian, :math:`M = \\mathcal L + \\alpha(I - X(X^\\top X +
\\beta D)^{-1}X^\\top)` formed with a d x d solve, the multiplicative F update (square-root form,
see ``docs/methods/ndfs.md``), :math:`W = (X^\\top X + \\beta D)^{-1}X^\\top F` and the
re-weighting of D. Also: the period-two cycle of the literal update (why the square root), the
reproducibility regressions of scikit-feature (`specs/peers.md` §5.2 item 13) and exact
scale equivalence.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.neighbors import kneighbors_graph

from sparsefs.datasets import make_planted_classification
from sparsefs.selection import NDFS


def _heat_graph(X, k, t):
    G = kneighbors_graph(X, k, mode="distance", include_self=False).toarray()
    G = np.maximum(G, G.T) ** 2
    return np.where(G > 0, np.exp(-G / t), 0.0)


def _initial_indicator(labels, c):
    G = np.eye(c)[labels]
    scale = 1.0 / np.sqrt(G.sum(0))
    return G * scale + 0.2 * scale.mean()


def _reference_ndfs(X, S, F, alpha, beta, gamma, n_iter, d0=1.0):
    n, d = X.shape
    deg = S.sum(1)
    L = np.eye(n) - S / np.sqrt(np.outer(deg, deg))
    Dw = np.full(d, d0)
    history = []
    for _ in range(n_iter):
        A = X.T @ X + beta * np.diag(Dw)
        M = L + alpha * (np.eye(n) - X @ np.linalg.solve(A, X.T))
        MF = M @ F
        num = gamma * F + np.maximum(-MF, 0)
        F = F * np.sqrt(num / (np.maximum(MF, 0) + gamma * F @ F.T @ F))
        W = np.linalg.solve(A, X.T @ F)
        r2 = (W**2).sum(1)
        Dw = 0.5 / np.sqrt(r2 + 1e-12 * r2.max())
        history.append(
            np.trace(F.T @ L @ F)
            + alpha * (((X @ W - F) ** 2).sum() + beta * np.sqrt(r2).sum())
            + 0.5 * gamma * ((F.T @ F - np.eye(F.shape[1])) ** 2).sum()
        )
    return W, F, np.array(history)


@pytest.mark.parametrize("shape", [(30, 50), (60, 8)])
@pytest.mark.parametrize("gamma", [1e8, 3.0])
def test_equals_dense_reference(shape, gamma):
    """Reference: the dense iteration (d x d solves); n < d and n > d use other code paths."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=shape)
    X[: shape[0] // 2, :3] += 2.0
    est = NDFS(n_features_to_select=3, n_clusters=2, n_neighbors=4, bandwidth=9.0, alpha=0.8,
               beta=3.0, gamma=gamma, max_iter=15, tol=0.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X)
    F0 = _initial_indicator(est.labels_init_, 2)
    # beta is relative to the root-mean-square entry of X: the absolute weight is 3 * rms
    rms = np.sqrt(np.mean(X**2))
    np.testing.assert_allclose(est.beta_, 3.0 * rms, rtol=1e-12)
    # the start D = rms * I: the paper's D = I in units where the rms entry of X is 1
    W, F, history = _reference_ndfs(X, _heat_graph(X, 4, 9.0), F0, 0.8, est.beta_, gamma, 15,
                                    d0=rms)
    np.testing.assert_allclose(est.objective_, history, rtol=1e-8)
    np.testing.assert_allclose(est.indicator_, F, rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(est.weights_, W, rtol=1e-6, atol=1e-12)
    norms = np.linalg.norm(W, axis=1)
    np.testing.assert_allclose(est.scores_, norms / norms.max(), rtol=1e-6, atol=1e-12)


def test_literal_update_cycles_square_root_settles():
    """Why the square root: with the penalty dominant, F = sQ -> Q/s (paper) but -> Q (sqrt)."""
    Q = np.zeros((12, 3))
    Q[np.arange(12), np.arange(12) % 3] = 0.5  # nonnegative, orthonormal columns
    F = 2.0 * Q
    on = Q > 0  # multiplicative updates leave the zeros of F at zero
    ratio = F[on] / (F @ F.T @ F)[on]
    np.testing.assert_allclose(F[on] * ratio, Q[on] / 2.0)  # literal rule: period two in scale
    np.testing.assert_allclose(F[on] * np.sqrt(ratio), Q[on])  # square-root rule: settled


def test_reproducible_with_random_state_and_global_rng_untouched():
    """Peers §5.2 items 13-14: same seed, same output; the global RNG is neither read nor set."""
    data = make_planted_classification(n_samples=60, n_features=200, random_state=1)
    state = np.random.get_state()  # noqa: NPY002 (checking the legacy global RNG)
    a = NDFS(n_clusters=3, random_state=5).fit(data.X)
    b = NDFS(n_clusters=3, random_state=5).fit(data.X)
    c = NDFS(n_clusters=3, random_state=np.random.RandomState(5)).fit(data.X)
    assert np.array_equal(np.random.get_state()[1], state[1])  # noqa: NPY002
    for other in (b, c):
        np.testing.assert_array_equal(other.scores_, a.scores_)
        np.testing.assert_array_equal(other.labels_init_, a.labels_init_)


def test_convergence_and_warning():
    """Default settings converge on the planted design; stopping early warns."""
    data = make_planted_classification(n_samples=60, n_features=200, random_state=2)
    est = NDFS(n_clusters=3, random_state=0).fit(data.X)
    assert est.converged_ and est.n_iter_ == est.objective_.shape[0] < est.max_iter
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        est = NDFS(n_clusters=3, max_iter=2, random_state=0).fit(data.X)
    assert est.n_iter_ == 2 and not est.converged_


def test_extreme_scales():
    """beta is relative to the rms entry of X, so (X * s, beta) is the problem (X, beta).

    Issue #16 (NDFS at 1e300 selected other features: the absolute beta = 100 vanished next to
    the scatter). For s = 2^+-900 every step is the same up to rounding (the graph's bandwidth
    and the weight are both relative), so the scores agree to 1e-9; 1e+-300 (not powers of
    two) and 3.7 select the same features. Reference: the fit at scale 1.
    """
    data = make_planted_classification(n_samples=40, n_features=120, random_state=3)
    base = NDFS(n_clusters=3, beta=50.0, random_state=0).fit(data.X)
    for s in (2.0**900, 2.0**-900, 1e300, 1e-300, 3.7):
        est = NDFS(n_clusters=3, beta=50.0, random_state=0).fit(data.X * s)
        assert est.converged_ and np.all(np.isfinite(est.scores_))
        if np.log2(s) == round(np.log2(s)):
            np.testing.assert_allclose(est.scores_, base.scores_, rtol=1e-9, atol=1e-12)
        np.testing.assert_array_equal(est.support_, base.support_)


def test_constant_features_last():
    """Peers §5.2 item 7: constant features are left out and score 0."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 10))
    X[:, [2, 6]] = -1.0
    est = NDFS(n_features_to_select=2, n_clusters=2, random_state=0).fit(X)
    np.testing.assert_array_equal(est.scores_[[2, 6]], 0.0)
    assert set(est.ranking_[[2, 6]]) == {9, 10}


def test_planted_recovery():
    """Clustered design 100 x 2000, 20 planted features at random indices, labels unused."""
    data = make_planted_classification(random_state=0)
    est = NDFS(n_features_to_select=20, n_clusters=3, random_state=0).fit(data.X)
    assert (est.support_ & data.support).sum() >= 18


@pytest.mark.parametrize("fmt", ["csr", "csc", "csr-float32"])
@pytest.mark.parametrize(("n", "d"), [(90, 300), (200, 60)])  # the n x n and d x d solves
def test_sparse_x_gives_the_dense_fit(fmt, n, d):
    """Sparse X (#18) on a planted design with 60 % zeros and an exact column copy.

    Reference: the dense fit of the same matrix (``X.toarray()``): the same k-means start,
    ranking (ties included), scores and indicator to rounding; and, as the dense fit is
    scale invariant (#16), sparse X * 1e300 and X * 1e-300 give the same ranking.
    """
    import scipy.sparse as sp

    data = make_planted_classification(n_samples=n, n_features=d, random_state=0)
    X = data.X * (np.random.default_rng(1).random(data.X.shape) < 0.4)
    X[:, 7] = X[:, 4]
    dtype = np.float32 if fmt.endswith("float32") else np.float64
    X = X.astype(dtype)
    to_sparse = sp.csc_array if fmt == "csc" else sp.csr_array
    kw = {"n_features_to_select": 20, "n_clusters": 3, "random_state": 0}
    dense, got = NDFS(**kw).fit(X), NDFS(**kw).fit(to_sparse(X))
    np.testing.assert_array_equal(got.labels_init_, dense.labels_init_)
    np.testing.assert_array_equal(got.ranking_, dense.ranking_)
    rtol = 1e-5 if dtype == np.float32 else 1e-7
    np.testing.assert_allclose(got.scores_, dense.scores_, rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(got.indicator_, dense.indicator_, rtol=rtol, atol=1e-10)
    assert got.scores_[7] == got.scores_[4]
    if dtype == np.float64:
        for c in (1e300, 1e-300):
            scaled = NDFS(**kw).fit(to_sparse(X * c))
            np.testing.assert_array_equal(scaled.ranking_, dense.ranking_)
