"""UDFS against an independent dense reference written from the paper's matrices.

Reference: Yang et al. (2011) computed densely — neighbours from scikit-learn's
``NearestNeighbors``, the explicit 0-1 selection matrices
:math:`S_i \\in \\{0,1\\}^{n\\times(k+1)}`,
:math:`H_{k+1}`, :math:`(\\tilde X_i^\\top\\tilde X_i + \\lambda I)^{-1}`, the d x d matrix M, and
the re-weighted iteration with a full ``numpy.linalg.eigh`` of :math:`M + \\gamma D`. Also the
regression tests of ``jundongl/scikit-feature#69`` (λ and γ distinct, S_i indexed by the sample
and its own neighbours), the monotone objective (Nie et al., 2010) and the agreement of the
Woodbury/Lanczos path with the dense one.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.neighbors import NearestNeighbors

from sparsefs._kernels import udfs as kernel
from sparsefs.datasets import make_planted_classification
from sparsefs.selection import UDFS


def _neighbours(X, k):
    return NearestNeighbors(n_neighbors=k).fit(X).kneighbors(return_distance=False)


def _reference_mhat(X, k, lam, shuffle_members=False):
    """sum_i S_i H (X~_i^T X~_i + lam I)^{-1} H S_i^T with explicit S_i (paper notation)."""
    n = X.shape[0]
    nbrs = _neighbours(X, k)
    H = np.eye(k + 1) - 1.0 / (k + 1)
    Mhat = np.zeros((n, n))
    for i in range(n):
        members = [i, *nbrs[i]]
        if shuffle_members:  # S_i may list N_i in any order: the sum is the same
            members = members[::-1]
        S = np.zeros((n, k + 1))
        S[members, np.arange(k + 1)] = 1.0
        Xi = X[members].T  # d x (k+1), columns are samples
        Xt = Xi @ H
        Mhat += S @ H @ np.linalg.inv(Xt.T @ Xt + lam * np.eye(k + 1)) @ H @ S.T
    return Mhat


def _reference_udfs(X, k, c, gamma, lam, n_iter):
    """The paper's iteration with dense eigh; the degenerate first step averaged (see docs)."""
    n, d = X.shape
    M = X.T @ _reference_mhat(X, k, lam) @ X
    M = 0.5 * (M + M.T)
    ev, Q = np.linalg.eigh(M)
    null = ev <= ev.max() * max(n, d) * np.finfo(float).eps
    # when the null space is larger than c, every c-frame of it minimises the first step
    rows = c * (Q[:, null] ** 2).sum(1) / null.sum() if null.sum() > c else np.ones(d)
    D = 0.5 / np.sqrt(rows + 1e-12 * rows.max()) if null.sum() > c else np.ones(d)
    history = []
    for _ in range(n_iter):
        W = np.linalg.eigh(M + gamma * np.diag(D))[1][:, :c]
        r2 = (W**2).sum(1)
        history.append(np.trace(W.T @ M @ W) + gamma * np.sqrt(r2).sum())
        D = 0.5 / np.sqrt(r2 + 1e-12 * r2.max())
    return np.sqrt(r2), np.array(history)


def test_local_matrix_equals_explicit_selection_matrices():
    """#69 (S_i indexing): the sparse M-hat equals the sum with explicit S_i, any member order."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(25, 7))
    got = kernel.udfs_local_matrix(X, _neighbours(X, 4), 0.5).toarray()
    np.testing.assert_allclose(got, _reference_mhat(X, 4, 0.5), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got, _reference_mhat(X, 4, 0.5, shuffle_members=True),
                               rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("shape", [(60, 8), (30, 45)])
def test_equals_dense_reference(shape):
    """Reference: the dense iteration (n > d: the paper's exact steps; d > n: averaged start)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=shape) * rng.uniform(0.5, 2.0, size=shape[1])
    est = UDFS(n_features_to_select=3, n_clusters=2, n_neighbors=4, gamma=0.7, ridge=0.3,
               max_iter=6, tol=0.0, standardize=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X)
    scores, history = _reference_udfs(X, 4, 2, 0.7, 0.3, 6)
    np.testing.assert_allclose(est.objective_, history, rtol=1e-8)
    np.testing.assert_allclose(est.scores_, scores, rtol=1e-6, atol=1e-9)
    assert est.degenerate_start_ == (shape[1] > shape[0])


def test_ridge_and_gamma_are_distinct():
    """#69: lambda (ridge) and gamma are separate; conflating them gives another answer."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(50, 6))
    kw = {"n_clusters": 2, "n_neighbors": 4, "max_iter": 5, "tol": 0.0, "standardize": False}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = UDFS(gamma=2.0, ridge=0.05, **kw).fit(X)
        same_gamma = UDFS(gamma=2.0, ridge=5.0, **kw).fit(X)
    good, _ = _reference_udfs(X, 4, 2, 2.0, 0.05, 5)
    conflated, _ = _reference_udfs(X, 4, 2, 2.0, 2.0, 5)
    np.testing.assert_allclose(est.scores_, good, rtol=1e-6, atol=1e-10)
    assert not np.allclose(est.scores_, conflated, rtol=1e-3)
    assert not np.allclose(est.objective_, same_gamma.objective_)


@pytest.mark.parametrize("shape", [(60, 8), (30, 45)])
def test_standardize_equals_dense_reference_on_standardised_data(shape):
    """Reference: the dense iteration on X scaled to unit variance (the default
    ``standardize=True``); the answer no longer depends on the features' units."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=shape) * rng.uniform(0.5, 2.0, size=shape[1]) + 3.0
    kw = {"n_features_to_select": 3, "n_clusters": 2, "n_neighbors": 4, "gamma": 0.7,
          "ridge": 0.3, "max_iter": 6, "tol": 0.0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = UDFS(**kw).fit(X)
        rescaled = UDFS(**kw).fit(X * np.logspace(-2, 2, shape[1]))
    Z = (X - X.mean(0)) / X.std(0)
    scores, history = _reference_udfs(Z, 4, 2, 0.7, 0.3, 6)
    np.testing.assert_allclose(est.objective_, history, rtol=1e-8)
    np.testing.assert_allclose(est.scores_, scores, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(rescaled.scores_, est.scores_, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("shape", [(40, 12), (25, 60)])
def test_lowrank_path_equals_dense_path(shape):
    """The Woodbury/Lanczos path (forced by dense_max=0) gives the dense-path results."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=shape)
    nb = _neighbours(X, 5)
    kw = {"gamma": 1.0, "ridge": 1.0, "max_iter": 8, "tol": 0.0}
    dense = kernel.udfs(X, nb, 3, dense_max=10**6, **kw)
    low = kernel.udfs(X, nb, 3, dense_max=0, **kw) if shape[0] < shape[1] else dense
    np.testing.assert_allclose(low.objective, dense.objective, rtol=1e-8)
    np.testing.assert_allclose(np.linalg.norm(low.W, axis=1), np.linalg.norm(dense.W, axis=1),
                               rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(low.W.T @ low.W, np.eye(3), atol=1e-10)


@pytest.mark.parametrize(("shape", "c"), [((60, 1500), 3), ((30, 400), 5), ((25, 60), 1)])
def test_warm_block_solver_equals_arpack(shape, c, monkeypatch):
    """The warm-started block eigen-solver of the low-rank path against ARPACK alone (the
    block solver disabled): same objective history and row norms."""
    rng = np.random.default_rng(shape[1])
    X = rng.normal(size=shape)
    X[:, :5] += 3.0 * rng.integers(0, 2, size=(shape[0], 1))
    nb = _neighbours(X, 5)
    kw = {"gamma": 1.0, "ridge": 1.0, "max_iter": 12, "tol": 0.0, "dense_max": 0}
    calls = []
    block = kernel._block_smallest

    def counted(*args, **kwargs):
        out = block(*args, **kwargs)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(kernel, "_block_smallest", counted)
    fast = kernel.udfs(X, nb, c, **kw)
    assert sum(calls) >= 8  # the block solver did the warm steps
    monkeypatch.setattr(kernel, "_block_smallest", lambda *args, **kwargs: None)  # ARPACK only
    slow = kernel.udfs(X, nb, c, **kw)
    np.testing.assert_allclose(fast.objective, slow.objective, rtol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(fast.W, axis=1), np.linalg.norm(slow.W, axis=1),
                               rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(fast.W.T @ fast.W, np.eye(c), atol=1e-10)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_objective_never_increases(seed):
    """Nie et al.'s lemma: the re-weighted iteration does not increase the objective."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(35, 20))
    est = UDFS(n_clusters=3, gamma=10.0 ** rng.uniform(-2, 2), max_iter=30, tol=1e-10).fit(X)
    assert np.all(np.diff(est.objective_) <= 1e-9 * np.abs(est.objective_[:-1]))
    np.testing.assert_allclose(est.weights_.T @ est.weights_, np.eye(3), atol=1e-8)


def test_convergence_warning_and_history():
    """Stopping at max_iter warns; n_iter_ and objective_ are reported."""
    X = np.random.default_rng(4).normal(size=(30, 8))
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        est = UDFS(n_clusters=2, max_iter=1).fit(X)
    assert est.n_iter_ == 1 and est.objective_.shape == (1,) and not est.converged_


def test_n_clusters_larger_than_features_is_a_clear_error():
    """W (d x c) has orthonormal columns, so c <= d; the error names both (STYLE C9)."""
    X = np.random.default_rng(5).normal(size=(20, 3))
    with pytest.raises(ValueError, match="n_clusters=5 exceeds n_features=3"):
        UDFS(n_clusters=5).fit(X)


def test_planted_recovery():
    """100 x 2000 planted design (labels unused), raw X: the default standardisation gives
    11/20 (measured; scikit-feature's UDFS: 6-7/20 on raw, 11/20 on standardised X; chance level
    0.2 hits in the top 20), as good as on X standardised by the caller. Without it the
    class-shifted features, whose variance the between-class spread inflates, are never picked
    (0/20 measured; see the class docstring)."""
    data = make_planted_classification(random_state=0)
    est = UDFS(n_features_to_select=20, n_clusters=3).fit(data.X)
    assert (est.support_ & data.support).sum() >= 11
    Z = (data.X - data.X.mean(0)) / data.X.std(0)
    np.testing.assert_array_equal(UDFS(n_features_to_select=20, n_clusters=3).fit(Z).support_,
                                  est.support_)
    raw = UDFS(n_features_to_select=20, n_clusters=3, standardize=False).fit(data.X)
    assert (raw.support_ & data.support).sum() <= 2


@pytest.mark.parametrize("fmt", ["csr", "csc", "csr-float32"])
@pytest.mark.parametrize(
    ("n", "d", "standardize"),
    [(60, 1500, True), (60, 1500, False), (80, 300, True), (150, 40, False)],
)  # the low-rank (implicit U) path, and M formed from sparse products
def test_sparse_x_gives_the_dense_fit(fmt, n, d, standardize):
    """Sparse X (#18) on a planted design with 60 % zeros and an exact column copy.

    Reference: the dense fit of the same matrix (``X.toarray()``): the same ranking (ties
    included), number of updates and degenerate start, and scores to rounding.
    """
    import scipy.sparse as sp

    data = make_planted_classification(n_samples=n, n_features=d, random_state=0)
    X = data.X * (np.random.default_rng(1).random(data.X.shape) < 0.4)
    X[:, 7] = X[:, 4]
    dtype = np.float32 if fmt.endswith("float32") else np.float64
    X = X.astype(dtype)
    Xs = sp.csc_array(X) if fmt == "csc" else sp.csr_array(X)
    kw = {"n_features_to_select": 20, "n_clusters": 3, "standardize": standardize}
    dense, got = UDFS(**kw).fit(X), UDFS(**kw).fit(Xs)
    np.testing.assert_array_equal(got.ranking_, dense.ranking_)
    assert got.n_iter_ == dense.n_iter_
    assert got.degenerate_start_ == dense.degenerate_start_
    np.testing.assert_allclose(got.scores_, dense.scores_, rtol=1e-7, atol=1e-12)
    assert got.scores_[7] == got.scores_[4]
