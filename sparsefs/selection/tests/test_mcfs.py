"""MCFS against an independent dense reference, the lasso optimality conditions and #23.

References: Cai, Zhang & He (2010) computed densely (W from scikit-learn's ``kneighbors_graph``,
the generalised problem :math:`Ly = \\lambda Dy` solved by ``scipy.linalg.eigh(L, D)``, the
lasso path of each eigenvector at the requested cardinality); the lasso KKT conditions at the
returned coefficients (equal absolute correlations on the active set, no larger ones off it);
the peers' regression test for ``jundongl/scikit-feature#23`` (score by max |a|).
"""

import numpy as np
import pytest
import scipy.linalg as la
from sklearn.linear_model import lars_path
from sklearn.neighbors import kneighbors_graph

from sparsefs._kernels.mcfs import mcfs_scores
from sparsefs.datasets import make_planted_classification
from sparsefs.selection import MCFS


def _reference_embedding(X, k, t, n_clusters):
    G = kneighbors_graph(X, k, mode="distance", include_self=False).toarray()
    G = np.maximum(G, G.T) ** 2
    S = np.where(G > 0, np.exp(-G / t), 0.0)
    D = np.diag(S.sum(1))
    lam, Y = la.eigh(D - S, D)  # ascending, Y^T D Y = I
    return lam[1 : n_clusters + 1], Y[:, 1 : n_clusters + 1]


def _reference_mcfs(X, k, t, n_clusters, cardinality):
    lam, Y = _reference_embedding(X, k, t, n_clusters)
    Xc = X - X.mean(0)
    coefs = []
    for y in Y.T:
        _, _, path = lars_path(Xc, y - y.mean(), method="lasso", max_iter=1000)
        hit = np.flatnonzero(np.count_nonzero(path, axis=0) >= cardinality)
        coefs.append(path[:, hit[0] if hit.size else -1])
    A = np.column_stack(coefs)
    return lam, A, np.abs(A).max(1)


@pytest.fixture(scope="module")
def clustered():
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(3), 20)
    X = rng.normal(size=(60, 30))
    X[:, [3, 11, 17, 25]] += 2.0 * np.eye(3)[y][:, [0, 1, 2, 0]]
    return X


def test_equals_dense_reference(clustered):
    """Reference: dense generalised eigh + lasso path to the cardinality, max |a|."""
    est = MCFS(n_features_to_select=6, n_clusters=3, n_neighbors=5, bandwidth=40.0)
    est.fit(clustered)
    lam, A, ref = _reference_mcfs(clustered, 5, 40.0, 3, 6)
    np.testing.assert_allclose(est.eigenvalues_, lam, rtol=1e-8, atol=1e-12)
    # eigenvector signs are arbitrary: coefficients agree up to the sign of each column
    np.testing.assert_allclose(np.abs(est.coef_), np.abs(A), rtol=1e-6, atol=1e-10)
    np.testing.assert_allclose(est.scores_, ref, rtol=1e-6, atol=1e-10)
    assert np.all(np.count_nonzero(est.coef_, axis=0) == 6)
    assert est.n_nonzero_coefs_ == 6
    assert {3, 11, 17, 25} <= set(np.flatnonzero(est.support_))


def test_coefficients_meet_lasso_optimality(clustered):
    """KKT of min ||y - Xa||^2 + lam |a|_1 at each returned a_k (centred X and y)."""
    est = MCFS(n_features_to_select=8, n_clusters=3).fit(clustered)
    _, Y = _reference_embedding(clustered, 5, est.bandwidth_, 3)
    Xc = clustered - clustered.mean(0)
    for k in range(3):
        a = est.coef_[:, k]
        # the sign of the eigenvector is arbitrary: use the one the coefficients fit
        y = Y[:, k] - Y[:, k].mean()
        y = y if np.linalg.norm(y - Xc @ a) < np.linalg.norm(-y - Xc @ a) else -y
        corr = Xc.T @ (y - Xc @ a)
        lam = np.abs(corr).max()
        active = a != 0
        np.testing.assert_allclose(corr[active], lam * np.sign(a[active]), rtol=1e-7)
        assert np.all(np.abs(corr[~active]) <= lam * (1 + 1e-7))


def test_scores_use_absolute_coefficients():
    """#23: a feature with only large negative coefficients must rank near the top."""
    coefs = np.array([[0.3, 0.1], [0.2, -0.1], [-5.0, -4.0], [0.0, 0.0], [1.0, 0.5]])
    scores = mcfs_scores(coefs)
    np.testing.assert_array_equal(scores, [0.3, 0.2, 5.0, 0.0, 1.0])
    assert np.argmax(scores) == 2
    assert np.argmax(coefs.max(axis=1)) != 2  # the signed maximum (skfeature) demotes it


def test_sign_of_the_data_does_not_matter(clustered):
    """#23 end to end: X and -X have the same graph, negated coefficients, equal scores."""
    a = MCFS(n_features_to_select=6, n_clusters=3).fit(clustered)
    b = MCFS(n_features_to_select=6, n_clusters=3).fit(-clustered)
    np.testing.assert_allclose(b.coef_, -a.coef_, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(b.scores_, a.scores_, rtol=1e-8)
    np.testing.assert_array_equal(b.support_, a.support_)
    signed = [np.argsort(-est.coef_.max(1), kind="stable")[:6] for est in (a, b)]
    assert set(signed[0]) != set(signed[1])  # a signed maximum would depend on the sign


def test_constant_features_score_below_all():
    """Peers §5.2 item 7: constant features score -1, below unused features (score 0)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 12))
    X[:, [0, 5]] = 3.0
    est = MCFS(n_features_to_select=2, n_clusters=2).fit(X)
    np.testing.assert_array_equal(est.scores_[[0, 5]], -1.0)
    np.testing.assert_array_equal(est.mcfs_scores_[[0, 5]], 0.0)
    assert set(est.ranking_[[0, 5]]) == {11, 12}


def test_cardinality_defaults_and_cap():
    """Cardinality = n_features_to_select (paper), or n_nonzero_coefs; capped at n - 1."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(15, 40))
    est = MCFS(n_features_to_select=30, n_clusters=2).fit(X)
    assert est.n_nonzero_coefs_ == 14
    est = MCFS(n_features_to_select=5, n_clusters=2, n_nonzero_coefs=3).fit(X)
    assert est.n_nonzero_coefs_ == 3 and np.all(np.count_nonzero(est.coef_, axis=0) <= 3)


def test_deterministic_and_input_unchanged(clustered):
    """Peers §5.2 items 8 and 13: no randomness, X untouched."""
    X = clustered.copy()
    a = MCFS(n_clusters=3).fit(X)
    b = MCFS(n_clusters=3).fit(X)
    np.testing.assert_array_equal(a.scores_, b.scores_)
    np.testing.assert_array_equal(X, clustered)


def test_planted_recovery():
    """Clustered design 100 x 2000, 20 planted features at random indices (chance: 0.2 hits)."""
    data = make_planted_classification(random_state=0)
    est = MCFS(n_features_to_select=20, n_clusters=3).fit(data.X)
    assert (est.support_ & data.support).sum() >= 6


@pytest.mark.parametrize("fmt", ["csr", "csc", "csr-float32"])
@pytest.mark.parametrize("affinity", ["heat", "cosine"])
def test_sparse_x_gives_the_dense_fit(fmt, affinity):
    """Sparse X (#18), 120 x 600 planted design with 70 % zeros and an exact column copy.

    Reference: the dense fit of the same matrix (``X.toarray()``): the same ranking (ties
    included), scores and coefficients to rounding. The LARS steps run on the implicitly
    centred sparse columns (``lasso_at_cardinality_sparse``), here long enough (100 of at most
    119 non-zeros) for the lasso path to drop variables.
    """
    import scipy.sparse as sp

    data = make_planted_classification(n_samples=120, n_features=600, random_state=0)
    X = data.X * (np.random.default_rng(1).random(data.X.shape) < 0.3)
    X[:, 5] = X[:, 3]
    dtype = np.float32 if fmt.endswith("float32") else np.float64
    X = X.astype(dtype)
    Xs = sp.csc_array(X) if fmt == "csc" else sp.csr_array(X)
    kw = {"n_features_to_select": 100, "n_clusters": 4, "affinity": affinity}
    dense, got = MCFS(**kw).fit(X), MCFS(**kw).fit(Xs)
    np.testing.assert_array_equal(got.ranking_, dense.ranking_)
    np.testing.assert_allclose(got.scores_, dense.scores_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got.coef_, dense.coef_, rtol=1e-8, atol=1e-10)
    assert got.scores_[5] == got.scores_[3]
