"""LaplacianScore against an independent dense reference and the scikit-feature regressions.

References: He, Cai & Niyogi (2005) computed densely (n x n W from scikit-learn's
``kneighbors_graph``, D, L = D - W, the D-centred feature, the Rayleigh quotient); the peers'
regression tests (`specs/peers.md` §5.2 items 3, 7, 8, 9, 18; ``jundongl/scikit-feature#78``).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.neighbors import kneighbors_graph
from sklearn.preprocessing import normalize

from sparsefs._kernels.laplacian_score import laplacian_score
from sparsefs.datasets import make_planted_classification
from sparsefs.selection import LaplacianScore


def _paper_graph(X, k, t=None):
    """S_ij = exp(-||xi - xj||^2 / t) when i, j are kNN of one another (either way), dense."""
    G = kneighbors_graph(X, k, mode="distance", include_self=False).toarray()
    G = np.maximum(G, G.T) ** 2
    mask = G > 0
    t = G[mask].mean() if t is None else t  # the mean over the (symmetrised) edges, see below
    return np.where(mask, np.exp(-G / t), 0.0)


def _laplacian_score_dense(X, S):
    """The paper's four steps, densely: D, L, the D-centred f, L_r = f~'Lf~ / f~'Df~."""
    D = np.diag(S.sum(1))
    L = D - S
    one = np.ones(X.shape[0])
    out = []
    for f in X.T:
        ft = f - (f @ D @ one) / (one @ D @ one) * one
        out.append((ft @ L @ ft) / (ft @ D @ ft))
    return np.array(out)


def test_equals_dense_reference():
    """Reference: the paper's formulas with kneighbors_graph and an explicit bandwidth."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 12)) * rng.uniform(0.1, 10, size=12) + 3.0
    for t in (0.7, 30.0):
        est = LaplacianScore(n_features_to_select=3, n_neighbors=6, bandwidth=t).fit(X)
        ref = _laplacian_score_dense(X, _paper_graph(X, 6, t))
        np.testing.assert_allclose(est.laplacian_scores_, ref, rtol=1e-10)
        np.testing.assert_allclose(est.scores_, 1.0 / (1.0 + ref), rtol=1e-10)
        order = np.argsort(est.ranking_)
        assert np.all(np.diff(est.laplacian_scores_[order]) >= -1e-12)
        assert est.bandwidth_ == t


def test_default_bandwidth_is_mean_neighbour_distance():
    """Reference: t = mean squared distance of the directed kNN pairs (kneighbors_graph)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 5))
    G = kneighbors_graph(X, 5, mode="distance", include_self=False)
    t = (G.data**2).mean()
    est = LaplacianScore(n_neighbors=5).fit(X)
    assert est.bandwidth_ == pytest.approx(t, rel=1e-12)
    np.testing.assert_allclose(est.laplacian_scores_,
                               _laplacian_score_dense(X, _paper_graph(X, 5, t)), rtol=1e-10)


def test_binary_weights_and_sparse_input():
    """0-1 weights (dense reference); CSR input equals the dense result (no densifying)."""
    rng = np.random.default_rng(2)
    X = rng.exponential(size=(45, 20)) * (rng.random((45, 20)) < 0.4)  # no distance ties
    S = (_paper_graph(X, 4) > 0).astype(float)
    ref = _laplacian_score_dense(X, S)
    dense = LaplacianScore(n_neighbors=4, affinity="binary").fit(X)
    np.testing.assert_allclose(dense.laplacian_scores_, ref, rtol=1e-10)
    sparse = LaplacianScore(n_neighbors=4, affinity="binary").fit(sp.csr_array(X))
    np.testing.assert_allclose(sparse.laplacian_scores_, ref, rtol=1e-8)


def test_x_is_not_modified_and_graph_is_the_papers():
    """#78 / peers §5.1 item 3: skfeature row-normalises X in place and builds another graph.

    The score must equal the reference built on the raw X, not the one built on the
    row-normalised X, and X must be unchanged.
    """
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 10)) * rng.uniform(0.2, 5.0, size=(60, 1))  # varied row norms
    X_copy = X.copy()
    est = LaplacianScore(n_neighbors=5, bandwidth=10.0).fit(X)
    np.testing.assert_array_equal(X, X_copy)
    raw = _laplacian_score_dense(X, _paper_graph(X, 5, 10.0))
    np.testing.assert_allclose(est.laplacian_scores_, raw, rtol=1e-10)
    wrong = _laplacian_score_dense(X, _paper_graph(normalize(X), 5, 10.0))
    assert not np.allclose(est.laplacian_scores_, wrong, rtol=1e-3)


def test_constant_features_last_and_finite_scores():
    """Peers §5.2 item 7: constant features get the lowest score, a number (not NaN)."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 6))
    X[:, [0, 3]] = 2.5
    est = LaplacianScore(n_features_to_select=2).fit(X)
    assert np.all(np.isinf(est.laplacian_scores_[[0, 3]]))
    np.testing.assert_array_equal(est.scores_[[0, 3]], 0.0)
    assert set(est.ranking_[[0, 3]]) == {5, 6}
    assert np.all(est.scores_[[1, 2, 4, 5]] >= 1.0 / 3.0)


def test_nan_is_rejected_not_ranked_first():
    """Peers §5.1 item 4: a NaN never makes a feature rank first; it is a clear error."""
    X = np.random.default_rng(5).normal(size=(20, 4))
    X[2, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        LaplacianScore().fit(X)


def test_shift_scale_invariance():
    """L_r is invariant to shifting X (same graph) and to scaling a feature on a fixed graph."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(40, 5))
    a = LaplacianScore(bandwidth=3.0).fit(X).laplacian_scores_
    shifted = X + np.array([5.0, -3.0, 0.0, 1e3, 2.0])
    np.testing.assert_allclose(LaplacianScore(bandwidth=3.0).fit(shifted).laplacian_scores_, a,
                               rtol=1e-8)
    W = _paper_graph(X, 5, 3.0)
    scaled = X * np.array([1e-200, 1.0, 1e6, 1e200, -2.0])
    np.testing.assert_allclose(laplacian_score(scaled, sp.csr_array(W)), a, rtol=1e-10)


def test_planted_recovery():
    """Clustered design: 100 x 2000, 20 planted features at random indices, labels unused."""
    data = make_planted_classification(random_state=0)
    est = LaplacianScore(n_features_to_select=20).fit(data.X)
    assert (est.support_ & data.support).sum() >= 18


def test_none_keeps_ten_percent():
    """n_features_to_select=None: the best 10 % (documented rule, like SelectPercentile)."""
    X = np.random.default_rng(7).normal(size=(30, 55))
    est = LaplacianScore().fit(X)
    assert est.n_features_to_select_ == 5
    np.testing.assert_array_equal(est.support_, est.ranking_ <= 5)
