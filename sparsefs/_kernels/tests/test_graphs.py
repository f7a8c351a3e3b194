"""The kNN graph kernels against scikit-learn's ``kneighbors_graph`` and dense formulas.

Independent references: :func:`sklearn.neighbors.kneighbors_graph` (the oracle named by
``jundongl/scikit-feature#78``), dense ``n x n`` Laplacians written from their definitions,
``scipy.linalg.eigh`` on the dense normalised adjacency, and hypothesis-generated inputs for the
structural properties.
"""

import numpy as np
import pytest
import scipy.linalg as la
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.neighbors import kneighbors_graph

from sparsefs._kernels import columns, graphs


def _reference_graph(X, k, weight="heat", bandwidth=None):
    """He et al.'s graph from kneighbors_graph: union of the kNN relations, then weights."""
    if weight == "cosine":
        G = kneighbors_graph(X, k, mode="distance", metric="cosine", include_self=False)
        G.data = np.maximum(1.0 - G.data, 0.0)
        return G.maximum(G.T).toarray(), None
    G = kneighbors_graph(X, k, mode="distance", include_self=False)
    sq = G.multiply(G).tocsr()
    t = sq.data.mean() if bandwidth is None else bandwidth
    W = sq.copy()
    W.data = np.exp(-sq.data / t) if weight == "heat" else np.ones_like(sq.data)
    return W.maximum(W.T).toarray(), t


@pytest.mark.parametrize("weight", ["heat", "binary", "cosine"])
@pytest.mark.parametrize("k", [1, 5, 12])
def test_knn_affinity_equals_kneighbors_graph(weight, k):
    """Oracle: sklearn.neighbors.kneighbors_graph, symmetrised by the union (max)."""
    rng = np.random.default_rng(k)
    X = rng.normal(size=(70, 9)) * rng.uniform(0.5, 3, size=9)
    ref, t = _reference_graph(X, k, weight)
    got = graphs.knn_affinity(X, k, weight=weight)
    np.testing.assert_allclose(got.W.toarray(), ref, rtol=1e-10, atol=1e-12)
    if weight == "heat":
        assert got.bandwidth == pytest.approx(t, rel=1e-12)
    W = got.W.toarray()
    np.testing.assert_array_equal(W, W.T)
    assert np.all(np.diag(W) == 0)


def test_explicit_bandwidth_and_sparse_input():
    """Oracle: kneighbors_graph with t given; CSR input gives the dense result."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 6))
    X[X < 0.3] = 0.0
    ref, _ = _reference_graph(X, 4, "heat", bandwidth=2.5)
    for Xin in (X, sp.csr_array(X)):
        got = graphs.knn_affinity(Xin, 4, bandwidth=2.5)
        np.testing.assert_allclose(got.W.toarray(), ref, rtol=1e-10, atol=1e-14)


def test_blocked_search_equals_one_block(monkeypatch):
    """The row-blocked search (tiny blocks) gives the one-block result exactly."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(50, 4))
    one = graphs.knn_search(X, 6)
    monkeypatch.setattr(graphs, "_BLOCK_ELEMENTS", 7 * 50)
    blocked = graphs.knn_search(X, 6)
    np.testing.assert_array_equal(one[0], blocked[0])
    np.testing.assert_allclose(one[1], blocked[1], rtol=1e-15)


def test_ties_go_to_the_lower_index():
    """Points on a line at equal spacing: the two nearest of an interior point are tied."""
    X = np.arange(10, dtype=float)[:, None]
    idx, d2 = graphs.knn_search(X, 3)
    # point 5: neighbours 4 and 6 at distance 1, then 3 and 7 tied at 2 -> 3 wins
    np.testing.assert_array_equal(idx[5], [4, 6, 3])
    np.testing.assert_array_equal(d2[5], [1.0, 1.0, 4.0])
    dup = np.vstack([X, X[:1]])  # a duplicate of sample 0 is at distance 0, never itself
    idx, d2 = graphs.knn_search(dup, 1)
    assert idx[0, 0] == 10 and idx[10, 0] == 0 and d2[0, 0] == 0.0


def test_scale_invariance_of_the_default_heat_graph():
    """Exact power-of-two rescaling: 1e300 and 1e-300 data give the same weights."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 5))
    W = graphs.knn_affinity(X, 4).W.toarray()
    for factor in (1e300, 1e-300):
        np.testing.assert_allclose(graphs.knn_affinity(X * factor, 4).W.toarray(), W,
                                   rtol=1e-12)


def test_complete_affinity_definition():
    """Every pair, exp(-||xi - xj||^2 / t), t = mean over distinct pairs (dense definition)."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(25, 4))
    diff = X[:, None, :] - X[None, :, :]
    sq = (diff**2).sum(-1)
    t = sq[~np.eye(25, dtype=bool)].mean()
    ref = np.exp(-sq / t)
    np.fill_diagonal(ref, 0.0)
    got = graphs.complete_affinity(X)
    np.testing.assert_allclose(got.W, ref, rtol=1e-10, atol=1e-14)
    assert got.bandwidth == pytest.approx(t)


def test_laplacians_and_smoothness_against_dense_definitions():
    """L = D - W, the normalised forms, and f^T L f = 1/2 sum W_ij (f_i - f_j)^2."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 7))
    W = graphs.knn_affinity(X, 5).W
    Wd = W.toarray()
    d = Wd.sum(1)
    Dm = np.diag(d ** -0.5)
    np.testing.assert_allclose(graphs.normalized_adjacency(W).toarray(), Dm @ Wd @ Dm, rtol=1e-12)
    np.testing.assert_allclose(graphs.normalized_laplacian(W).toarray(),
                               np.eye(30) - Dm @ Wd @ Dm, atol=1e-14)
    F = rng.normal(size=(30, 4)) + 5.0
    brute = 0.5 * np.array([(Wd * (f[:, None] - f[None, :]) ** 2).sum() for f in F.T])
    np.testing.assert_allclose(graphs.graph_smoothness(F, W), brute, rtol=1e-10)
    np.testing.assert_allclose(graphs.graph_smoothness(F, Wd), brute, rtol=1e-8)
    np.testing.assert_allclose(graphs.graph_smoothness(sp.csr_array(F), W), brute, rtol=1e-10)
    centred, fdf = graphs.weighted_centered_ss(F, d)
    mu = d @ F / d.sum()
    np.testing.assert_allclose(centred, d @ (F - mu) ** 2, rtol=1e-10)
    np.testing.assert_allclose(graphs.weighted_centered_ss(sp.csr_array(F), d)[0], centred,
                               rtol=1e-8)
    np.testing.assert_allclose(fdf, d @ F**2, rtol=1e-12)


@pytest.mark.parametrize("dense_max", [10_000, 0])
def test_spectral_embedding_dense_and_lanczos(dense_max):
    """Reference: scipy.linalg.eigh of the dense normalised adjacency, trivial vector dropped."""
    rng = np.random.default_rng(6)
    centres = np.repeat(np.eye(3) * 1.5, 20, axis=0)  # overlapping: one connected graph
    X = centres + rng.normal(size=(60, 3))
    W = graphs.knn_affinity(X, 6).W
    A = graphs.normalized_adjacency(W).toarray()
    mu_all, Z_all = la.eigh(A)
    mu, Z = graphs.spectral_embedding(W, 3, dense_max=dense_max)
    np.testing.assert_allclose(mu, mu_all[::-1][1:4], atol=1e-8)
    # same subspace (eigenvalues are distinct here): projectors agree
    ref = Z_all[:, ::-1][:, 1:4]
    np.testing.assert_allclose(Z @ Z.T, ref @ ref.T, atol=1e-6)
    xi = np.sqrt(W.toarray().sum(1))
    np.testing.assert_allclose(Z.T @ xi, 0.0, atol=1e-8)


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(3, 25),
    p=st.integers(1, 5),
    k=st.integers(1, 6),
    seed=st.integers(0, 10_000),
    weight=st.sampled_from(["heat", "binary", "cosine"]),
)
def test_graph_structure(n, p, k, seed, weight):
    """Symmetric, non-negative, zero diagonal; every sample has at least k stored edges."""
    k = min(k, n - 1)
    X = np.random.default_rng(seed).normal(size=(n, p)).round(1)  # rounding makes ties
    g = graphs.knn_affinity(X, k, weight=weight)
    W = g.W.toarray()
    np.testing.assert_array_equal(W, W.T)
    assert np.all(W >= 0) and np.all(np.diag(W) == 0)
    idx, _ = graphs.knn_search(X, k)
    assert idx.shape == (n, k) and not np.any(idx == np.arange(n)[:, None])
    assert all(len(set(row)) == k for row in idx)


def _brute_force_first_copy(X):
    """For each column, the first column equal to it, by comparing every pair."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    d = X.shape[1]
    return np.array([next(i for i in range(d) if np.array_equal(X[:, i], X[:, j]))
                     for j in range(d)])


@pytest.mark.parametrize("fmt", ["dense", "csr", "csc"])
def test_duplicate_column_groups_match_pairwise_comparison(fmt):
    """Reference: pairwise np.array_equal of every column pair (issue #16 ties). -0.0 equals 0.0;
    columns equal up to rounding only are not copies."""
    rng = np.random.default_rng(3)
    X = np.where(rng.random((12, 9)) < 0.5, 0.0, rng.normal(size=(12, 9)))
    X[:, 4] = X[:, 1]
    X[:, 7] = X[:, 1]
    X[:, 8] = X[:, 2] * (1.0 + 1e-15)  # equal up to rounding only: not a copy
    X[:, 6] = 0.0
    X[:, 5] = -0.0
    Xf = {"dense": X, "csr": sp.csr_array(X), "csc": sp.csc_array(X)}[fmt]
    first = columns.duplicate_column_groups(Xf)
    np.testing.assert_array_equal(first, _brute_force_first_copy(X))
    assert first[4] == first[7] == 1 and first[6] == 5 and first[8] == 8


def test_tie_duplicate_scores_averages_groups_and_leaves_singletons_exact():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(10, 5))
    X[:, 3] = X[:, 0]
    scores = np.array([0.3, 0.7, 0.1, 0.3000000000000001, 0.9])
    out = columns.tie_duplicate_scores(X, scores)
    assert out[0] == out[3] == pytest.approx(0.3)
    np.testing.assert_array_equal(out[[1, 2, 4]], scores[[1, 2, 4]])
    np.testing.assert_array_equal(columns.tie_duplicate_scores(X[:, :3], scores[:3]), scores[:3])


@pytest.mark.parametrize("fmt", ["dense", "csr", "csc", "float32"])
def test_duplicate_groups_prefilter_equals_the_exact_comparison(fmt):
    """Above 2**20 entries (dense) or stored values (sparse) only columns of equal probes are
    compared; reference: the exact comparison of all columns (``_exact_groups`` /
    ``_sparse_exact_groups``). Copies, a near copy (one entry off by 1e-3), -0.0 against
    0.0, and empty columns."""
    rng = np.random.default_rng(3)
    n, d = 3000, 420
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.9)
    X[:, 10], X[:, 400] = X[:, 5], X[:, 5]
    X[:, 11] = X[:, 6]
    X[7, 11] += 1e-3
    X[:, 12], X[:, 13] = 0.0, -0.0
    X[:, 14] = -0.0 * X[:, 14]
    if fmt == "float32":
        X = X.astype(np.float32)
    if fmt in ("csr", "csc"):
        X = sp.csr_array(X) if fmt == "csr" else sp.csc_array(X)
        assert X.nnz > columns._DUPLICATE_EXACT_SIZE
        expected = columns._sparse_exact_groups(X)
    else:
        assert X.size > columns._DUPLICATE_EXACT_SIZE
        expected = columns._exact_groups(X)
    got = columns.duplicate_column_groups(X)
    np.testing.assert_array_equal(got, expected)
    assert got[10] == got[400] == 5 and got[11] == 11 and got[13] == 12


def test_column_signatures_by_hand():
    from sparsefs._kernels.stats import column_signatures

    X = sp.csr_array(np.array([[1.0, 0.0, 2.0], [3.0, 0.0, 0.0]]))
    np.testing.assert_array_equal(column_signatures(X), [[2, 4, 10], [0, 0, 0], [1, 2, 4]])
    np.testing.assert_array_equal(column_signatures(sp.csc_array(X)), column_signatures(X))
