"""SPEC against an independent dense reference built from the full eigen-decomposition.

Reference: Zhao & Liu (2007) computed from the spectrum: the dense normalised Laplacian of the
complete RBF graph (or of the kNN graph from scikit-learn's ``kneighbors_graph``), all its
eigenpairs from ``numpy.linalg.eigh``, :math:`\\alpha_j = \\xi_j^\\top \\hat f` and the three
ranking functions as sums over the spectrum (sparsefs computes phi1 and phi2 without any
eigen-decomposition, phi3 from the leading eigenvectors only). Also: phi2 equals the Laplacian
score of the same graph (an identity), and the peers' regression tests (constant features).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.neighbors import kneighbors_graph

from sparsefs.datasets import make_planted_classification
from sparsefs.selection import SPEC, LaplacianScore
from sparsefs.selection import _spec as spec_module


def _complete_graph(X, t):
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    S = np.exp(-sq / t)
    np.fill_diagonal(S, 0.0)
    return S


def _knn_graph(X, k, t):
    G = kneighbors_graph(X, k, mode="distance", include_self=False).toarray()
    G = np.maximum(G, G.T) ** 2
    return np.where(G > 0, np.exp(-G / t), 0.0)


def _spec_from_spectrum(X, S, n_clusters):
    """phi1, phi2, phi3 as sums over the eigenpairs of the normalised Laplacian."""
    d = S.sum(1)
    Dh = np.diag(d**-0.5)
    lap = np.eye(len(d)) - Dh @ S @ Dh
    lam, xi = np.linalg.eigh(lap)  # ascending; xi[:, 0] is the trivial eigenvector
    phi = {"phi1": [], "phi2": [], "phi3": []}
    for f in X.T:
        fh = np.sqrt(d) * f
        fh /= np.linalg.norm(fh)
        a2 = (xi.T @ fh) ** 2
        phi["phi1"].append(a2 @ lam)
        phi["phi2"].append(a2[1:] @ lam[1:] / a2[1:].sum())
        phi["phi3"].append((2.0 - lam[1:n_clusters]) @ a2[1:n_clusters])
    return {k: np.array(v) for k, v in phi.items()}


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(0)
    centres = np.repeat(rng.normal(size=(3, 4)) * 1.5, 15, axis=0)
    X = np.hstack([centres, np.zeros((45, 6))]) + rng.normal(size=(45, 10))
    return X * rng.uniform(0.5, 2, size=10) + rng.normal(size=10)


@pytest.mark.parametrize("variant", ["phi1", "phi2", "phi3"])
@pytest.mark.parametrize("graph", ["complete", "knn"])
def test_equals_spectral_reference(small, variant, graph):
    """Reference: the full eigen-decomposition of the dense normalised Laplacian."""
    t = 20.0
    S = _complete_graph(small, t) if graph == "complete" else _knn_graph(small, 7, t)
    ref = _spec_from_spectrum(small, S, n_clusters=3)[variant]
    est = SPEC(n_features_to_select=3, variant=variant, n_clusters=3, bandwidth=t,
               n_neighbors=None if graph == "complete" else 7).fit(small)
    np.testing.assert_allclose(est.spec_scores_, ref, rtol=1e-8, atol=1e-12)
    expected = ref if variant == "phi3" else 1.0 / (1.0 + ref)
    np.testing.assert_allclose(est.scores_, expected, rtol=1e-8, atol=1e-12)


def test_phi3_lanczos_path_equals_reference():
    """n > 1000: the eigenvectors come from eigsh on the sparse graph; same values."""
    rng = np.random.default_rng(1)
    n = 1100
    X = rng.normal(size=(n, 4))
    X[:, 0] += np.repeat([0.0, 2.5], n // 2)
    S = _knn_graph(X, 8, 2.0)
    ref = _spec_from_spectrum(X, S, n_clusters=3)["phi3"]
    est = SPEC(variant="phi3", n_clusters=3, n_neighbors=8, bandwidth=2.0).fit(X)
    np.testing.assert_allclose(est.spec_scores_, ref, rtol=1e-6, atol=1e-10)


def test_phi2_is_the_laplacian_score(small):
    """Identity: phi2 = f'Lf / f~'Df~, the Laplacian score of the same kNN graph."""
    a = SPEC(variant="phi2", n_neighbors=5).fit(small).spec_scores_
    b = LaplacianScore(n_neighbors=5).fit(small).laplacian_scores_
    np.testing.assert_allclose(a, b, rtol=1e-10)


@pytest.mark.parametrize("variant", ["phi1", "phi2", "phi3"])
def test_constant_features_rank_last(small, variant):
    """Peers §5.2 item 7. Under phi1 a constant feature is xi_1 (phi1 = 0, naively best)."""
    X = small.copy()
    X[:, [1, 7]] = 4.0
    est = SPEC(variant=variant, n_clusters=3).fit(X)
    assert set(est.ranking_[[1, 7]]) == {9, 10}
    assert np.all(est.scores_[[1, 7]] == 0.0)
    ref = _spec_from_spectrum(X[:, [1]], _complete_graph(X, est.bandwidth_), 3)["phi1"]
    assert ref[0] == pytest.approx(0.0, abs=1e-12)  # what the naive formula would give


def test_sparse_equals_dense(small):
    """CSR input gives the dense result for every variant."""
    X = np.where(np.abs(small) > 1.0, small, 0.0)
    for variant in ("phi1", "phi2", "phi3"):
        for k in (None, 6):
            kw = {"variant": variant, "n_clusters": 3, "n_neighbors": k}
            a = SPEC(**kw).fit(X).spec_scores_
            b = SPEC(**kw).fit(sp.csr_array(X)).spec_scores_
            np.testing.assert_allclose(b, a, rtol=1e-8)


def test_complete_graph_size_guard(monkeypatch):
    """The dense complete graph is refused beyond its documented size, with advice."""
    monkeypatch.setattr(spec_module, "COMPLETE_GRAPH_MAX_SAMPLES", 20)
    X = np.random.default_rng(2).normal(size=(30, 3))
    with pytest.raises(ValueError, match="n_neighbors"):
        SPEC().fit(X)
    SPEC(n_neighbors=5).fit(X)


def test_planted_recovery():
    """Clustered design: 100 x 2000, 20 planted features at random indices, labels unused."""
    data = make_planted_classification(random_state=0)
    for est in (SPEC(20), SPEC(20, variant="phi3", n_clusters=3)):
        assert (est.fit(data.X).support_ & data.support).sum() >= 18
