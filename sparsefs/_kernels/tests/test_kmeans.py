"""Hartigan–Wong k-means kernel (AS 136), k-means++ seeding and the local-optimality certificate.

Each test's docstring names its independent reference: scikit-learn's Lloyd ``KMeans`` from the
same start, the brute-force optimum over every partition of tiny problems, the WCSS recomputed
from scratch after every single-point move, or explicit numpy formulas.
"""

import itertools

import numpy as np
import pytest
from sklearn.cluster import KMeans

from sparsefs._kernels.kmeans import (
    hartigan_wong,
    is_hartigan_optimal,
    kmeans,
    kmeans_plusplus,
    lloyd,
    transfer_gains,
    wcss,
    weighted_columns,
)


def _wcss_numpy(X, labels):
    """WCSS by an explicit loop over clusters (independent of the kernel)."""
    return sum(((X[labels == k] - X[labels == k].mean(axis=0)) ** 2).sum()
               for k in np.unique(labels))


def _random_problem(rng):
    n = int(rng.integers(8, 60))
    p = int(rng.integers(1, 6))
    K = int(rng.integers(2, 6))
    X = rng.normal(size=(n, p)) + rng.normal(scale=2.0, size=(K, p))[rng.integers(0, K, n)]
    return X, K


def _single_move_improves(X, labels, K):
    """True if moving one point to another cluster lowers the WCSS: every move, recomputed."""
    base = _wcss_numpy(X, labels)
    counts = np.bincount(labels, minlength=K)
    for i in range(X.shape[0]):
        if counts[labels[i]] == 1:
            continue
        for k in range(K):
            if k == labels[i]:
                continue
            moved = labels.copy()
            moved[i] = k
            if _wcss_numpy(X, moved) < base * (1 - 1e-10) - 1e-12:
                return True
    return False


def test_hartigan_wong_never_worse_than_lloyd_from_the_same_start_and_certified():
    """Reference: scikit-learn Lloyd KMeans (tol=0, strict convergence) from the same initial
    centres, on 200 random small problems: the Hartigan–Wong WCSS is never larger, strictly
    smaller on a good share of them, and the certificate holds (no single move helps,
    checked both by the gain formula and by recomputing the WCSS after every move)."""
    rng = np.random.default_rng(0)
    better = 0
    for trial in range(200):
        X, K = _random_problem(rng)
        C0 = X[rng.choice(X.shape[0], K, replace=False)]
        ours = kmeans(X, K, init=C0, n_init=1)
        ref = KMeans(K, init=C0, n_init=1, algorithm="lloyd", tol=0, max_iter=1000).fit(X)
        assert ours.inertia <= ref.inertia_ * (1 + 1e-10) + 1e-12, trial
        better += ours.inertia < ref.inertia_ * (1 - 1e-9)
        assert ours.inertia == pytest.approx(_wcss_numpy(X, ours.labels), rel=1e-10)
        assert np.bincount(ours.labels, minlength=K).min() > 0
        assert is_hartigan_optimal(X, ours.labels, K)
        if trial < 40:  # the slow, formula-free check on a subset
            assert not _single_move_improves(X, ours.labels, K), trial
    assert better >= 20, better


def test_pure_as136_from_random_centres_is_certified():
    """Reference: the WCSS recomputed after every single-point move (formula-free): plain
    AS 136 (no Lloyd phase) from random centres always ends Hartigan-optimal."""
    rng = np.random.default_rng(1)
    for trial in range(60):
        X, K = _random_problem(rng)
        C0 = X[rng.choice(X.shape[0], K, replace=False)] + rng.normal(size=(K, X.shape[1]))
        res = hartigan_wong(X, C0)
        assert res.converged
        assert np.bincount(res.labels, minlength=K).min() > 0
        assert not _single_move_improves(X, res.labels, K), trial
        assert res.inertia == pytest.approx(_wcss_numpy(X, res.labels), rel=1e-10)


def _brute_force_optimum(X, K):
    """Minimum WCSS over every labelling with no empty cluster (K^n enumeration)."""
    n = X.shape[0]
    A = np.array(list(itertools.product(range(K), repeat=n)))
    onehot = A[:, :, None] == np.arange(K)
    counts = onehot.sum(axis=1)
    ok = counts.min(axis=1) > 0
    onehot, counts = onehot[ok], counts[ok]
    sums = np.einsum("ank,np->akp", onehot.astype(float), X)
    between = (np.einsum("akp,akp->ak", sums, sums) / counts).sum(axis=1)
    return float((X * X).sum() - between.max())


@pytest.mark.parametrize("K", [2, 3])
def test_tiny_problems_reach_the_brute_force_optimum(K):
    """Reference: the exact optimum by enumerating every partition (n <= 10). With 10
    starts the kernel finds it in most cases, never goes below it, and every start (pure AS
    136 from random centres) ends in a locally optimal partition."""
    rng = np.random.default_rng(K)
    hits = 0
    trials = 40
    for _ in range(trials):
        n = int(rng.integers(K + 2, 11))
        X = rng.normal(size=(n, int(rng.integers(1, 4))))
        opt = _brute_force_optimum(X, K)
        res = kmeans(X, K, n_init=10, seed=int(rng.integers(1 << 30)))
        assert res.inertia >= opt * (1 - 1e-10) - 1e-12
        hits += res.inertia <= opt * (1 + 1e-9) + 1e-12
        for _ in range(3):
            start = hartigan_wong(X, X[rng.choice(n, K, replace=False)])
            assert not _single_move_improves(X, start.labels, K)
    assert hits >= 0.9 * trials, hits


def test_transfer_gains_equal_the_recomputed_change_of_wcss():
    """Reference: WCSS recomputed from scratch after moving point i to cluster B."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(15, 3))
    labels = np.arange(15) % 4
    labels[[3, 7, 11]] = 0
    labels[14] = 3  # cluster 3 = {14}: a singleton, which cannot move
    gains = transfer_gains(X, labels, 4)
    base = _wcss_numpy(X, labels)
    counts = np.bincount(labels, minlength=4)
    for i in range(15):
        for k in range(4):
            if k == labels[i] or counts[labels[i]] == 1:
                assert gains[i, k] == np.inf
                continue
            moved = labels.copy()
            moved[i] = k
            assert gains[i, k] == pytest.approx(_wcss_numpy(X, moved) - base, abs=1e-10)
    assert wcss(X, labels, 4) == pytest.approx(base, rel=1e-12)


def test_lloyd_matches_scikit_learn_from_the_same_start():
    """Reference: scikit-learn's Lloyd KMeans (tol=0) from the same centres: the same fixed
    point (equal WCSS) on at least 95% of 100 random problems."""
    rng = np.random.default_rng(4)
    same = 0
    for _ in range(100):
        X, K = _random_problem(rng)
        C0 = X[rng.choice(X.shape[0], K, replace=False)]
        ours = lloyd(X, C0)
        ref = KMeans(K, init=C0, n_init=1, algorithm="lloyd", tol=0, max_iter=1000).fit(X)
        same += ours.inertia == pytest.approx(ref.inertia_, rel=1e-9)
        assert ours.converged
    assert same >= 95, same


def test_empty_clusters_are_refilled_and_k_equals_n():
    """Reference: definitions. Centres far from every point leave clusters empty after the
    first assignment; none stays empty. K = n puts every point alone (WCSS 0); K = 1 is the
    total sum of squares."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(20, 2))
    C0 = np.array([[0.0, 0.0], [100.0, 100.0], [200.0, -50.0]])
    for res in (hartigan_wong(X, C0), lloyd(X, C0), kmeans(X, 3, init=C0, n_init=1),
                hartigan_wong(X, C0, lloyd_first=True)):
        assert np.bincount(res.labels, minlength=3).min() > 0
        assert res.inertia == pytest.approx(_wcss_numpy(X, res.labels), rel=1e-12)
    # the Lloyd passes' repair (outside their compiled loop) still ends Hartigan-optimal
    assert is_hartigan_optimal(X, hartigan_wong(X, C0, lloyd_first=True).labels, 3)
    Y = X[:5]
    assert kmeans(Y, 5, n_init=1, seed=0).inertia == pytest.approx(0.0, abs=1e-12)
    one = kmeans(X, 1, seed=0)
    assert one.inertia == pytest.approx(((X - X.mean(axis=0)) ** 2).sum())
    dup = np.repeat(X[:2], 5, axis=0)  # two distinct points, three clusters
    res = kmeans(dup, 3, n_init=3, seed=0)
    assert np.bincount(res.labels, minlength=3).min() > 0 and res.inertia == 0.0


def test_kmeans_plusplus_and_restarts_are_seeded():
    """Reference: equal seeds give equal results; centres are rows of X; more starts never
    give a larger WCSS than the first of them (the best is kept)."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(80, 4))
    a = kmeans_plusplus(X, 5, np.random.default_rng(3))
    b = kmeans_plusplus(X, 5, np.random.default_rng(3))
    np.testing.assert_array_equal(a, b)
    rows = {tuple(r) for r in X}
    assert all(tuple(c) in rows for c in a) and len({tuple(c) for c in a}) == 5
    r1 = kmeans(X, 5, n_init=10, seed=11)
    r2 = kmeans(X, 5, n_init=10, seed=11)
    np.testing.assert_array_equal(r1.labels, r2.labels)
    every = kmeans(X, 5, n_init=10, seed=11, return_all=True)
    assert len(every) == 10 and r1.inertia == min(e.inertia for e in every)


def test_weighted_columns_give_the_weighted_wcss():
    """Reference: sum_j w_j WCSS_j(C) computed per column by numpy equals the WCSS of the
    scaled matrix; zero-weight columns are dropped; unit weights return X itself."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(30, 6))
    w = np.array([0.0, 0.5, 1.0, 0.0, 2.0, 0.25])
    labels = np.arange(30) % 3
    Xw = weighted_columns(X, w)
    assert Xw.shape == (30, 4)
    per_col = [((X[labels == k, j] - X[labels == k, j].mean()) ** 2).sum()
               for j in range(6) for k in range(3)]
    weighted = (np.array(per_col).reshape(6, 3).sum(axis=1) * w).sum()
    assert wcss(Xw, labels, 3) == pytest.approx(weighted, rel=1e-12)
    assert weighted_columns(X, np.ones(6)) is X


def test_kernel_errors():
    """Reference: the contract's error rules (a ValueError naming parameter and value)."""
    X = np.zeros((5, 2))
    with pytest.raises(ValueError, match="n_clusters=6"):
        kmeans(X, 6)
    with pytest.raises(ValueError, match="n_init=0"):
        kmeans(X, 2, n_init=0)
    with pytest.raises(ValueError, match="algorithm='elkan'"):
        kmeans(X, 2, algorithm="elkan")
    with pytest.raises(ValueError, match="do not match"):
        hartigan_wong(X, np.zeros((2, 3)))
    with pytest.raises(ValueError, match="max_iter=0"):
        hartigan_wong(X, np.zeros((2, 2)), max_iter=0)
    assert is_hartigan_optimal(X + np.arange(5)[:, None], np.array([0, 0, 1, 1, 1]), 2)
    assert not is_hartigan_optimal(np.arange(6.0)[:, None], np.array([0, 1, 0, 1, 0, 1]), 2)


# ---------------------------------------------------------------------------- sparse input (#18)


def _implicit_problem(seed=0, n=120, q=40):
    """A clustered sparse matrix E (70 % zeros) and a dense background row b."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    labels = np.arange(n) % 3
    X = (rng.normal(size=(n, q)) + 2.5 * (labels[:, None] == np.arange(q) % 3))
    X *= rng.random((n, q)) < 0.3
    b = rng.normal(size=q)
    return sp.csr_array(X), b, X + b


@pytest.mark.parametrize("algorithm", ["hartigan", "lloyd"])
@pytest.mark.parametrize("K", [1, 2, 3, 5])
def test_kmeans_on_implicit_rows_equals_kmeans_on_the_dense_matrix(algorithm, K):
    """Reference: the kernel on the dense matrix b + E (same seeds): every start's labels
    equal, centres and WCSS equal up to rounding; also from given centres."""
    from sparsefs._kernels.kmeans import ImplicitRows

    E, b, Z = _implicit_problem()
    got = kmeans(ImplicitRows(E, b), K, n_init=4, seed=3, algorithm=algorithm, return_all=True)
    ref = kmeans(Z, K, n_init=4, seed=3, algorithm=algorithm, return_all=True)
    for g, r in zip(got, ref, strict=True):
        np.testing.assert_array_equal(g.labels, r.labels)
        np.testing.assert_allclose(g.inertia, r.inertia, rtol=1e-10)
        np.testing.assert_allclose(g.centers, r.centers, rtol=1e-10, atol=1e-12)
        assert g.converged == r.converged
    C0 = Z[[0, 7, 11, 50, 90][:max(K, 2)]] + 0.1
    g = kmeans(ImplicitRows(E, b), C0.shape[0], n_init=1, init=C0, algorithm=algorithm)
    r = kmeans(Z, C0.shape[0], n_init=1, init=C0, algorithm=algorithm)
    np.testing.assert_array_equal(g.labels, r.labels)
    if algorithm == "hartigan":
        assert is_hartigan_optimal(Z, g.labels, C0.shape[0])


def test_weighted_columns_of_implicit_rows():
    """Reference: ``weighted_columns`` of the dense matrix."""
    from sparsefs._kernels.kmeans import ImplicitRows

    E, b, Z = _implicit_problem(seed=1)
    w = np.abs(np.random.default_rng(0).normal(size=Z.shape[1]))
    w[::3] = 0.0
    Iw = weighted_columns(ImplicitRows(E, b), w)
    assert isinstance(Iw, ImplicitRows) and Iw.nnz <= E.nnz
    np.testing.assert_allclose(Iw.toarray(), weighted_columns(Z, w), rtol=1e-14, atol=1e-14)
    Z1 = ImplicitRows(E, b)
    assert weighted_columns(Z1, np.ones(Z.shape[1])) is Z1


def test_a_fit_compiles_each_kernel_for_one_signature():
    """Reference: numba's own record of the compiled signatures (issue #33, first use). Inputs
    of every dtype and memory layout are normalised at the Python boundary, so each compiled
    kernel of the dense k-means holds exactly one specialisation after fits on float32,
    Fortran-ordered, integer and float64 data (each further one would cost its own
    compilation on first use)."""
    import numba

    from sparsefs._kernels import kmeans as km

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 6))
    for Xi in (X, X.astype(np.float32), np.asfortranarray(X), (10 * X).astype(np.int64)):
        kmeans(Xi, 3, n_init=2, seed=0)
        kmeans(Xi, 2, n_init=1, seed=1, algorithm="lloyd")
        wcss(Xi, np.arange(40) % 3, 3)
    hartigan_wong(X.astype(np.float32), X[:3], lloyd_first=True)
    kernels = {name: obj for name, obj in vars(km).items()
               if isinstance(obj, numba.core.registry.CPUDispatcher)}
    assert {"_hw_lloyd", "_hw_transfers", "_sqdist_to", "_wcss_of"} <= {
        name for name, d in kernels.items() if d.signatures}
    for name, d in kernels.items():
        if not name.startswith("_s_"):  # the sparse kernels: their own inputs, other tests
            assert len(d.signatures) <= 1, (name, d.signatures)


def test_cluster_sums_add_the_rows_in_order():
    """Reference: ``np.add.at`` and the product with the one-hot K x n matrix (the former
    dask and UFCM passes), equal bit for bit; for ImplicitRows, ``np.add.at`` on E's dense
    rows. Rows of very different magnitudes, so a different order of additions would show."""
    import scipy.sparse as sp

    from sparsefs._kernels.kmeans import ImplicitRows, cluster_sums

    rng = np.random.default_rng(0)
    n = 50
    X = rng.normal(size=(n, 7)) * 10.0 ** rng.integers(-8, 8, size=(n, 1))
    labels = rng.integers(4, size=n)
    labels[labels == 3] = 2  # cluster 3 empty
    counts, sums = cluster_sums(np.asfortranarray(X), labels, 4)
    ref = np.zeros((4, 7))
    np.add.at(ref, labels, X)
    assert counts.tolist() == np.bincount(labels, minlength=4).tolist()
    assert sums.tobytes() == ref.tobytes()
    onehot = sp.csr_array((np.ones(n), (labels, np.arange(n))), shape=(4, n))
    assert sums.tobytes() == np.asarray(onehot @ X).tobytes()
    E, b, _ = _implicit_problem()
    lab = np.arange(E.shape[0]) % 3
    c2, s2 = cluster_sums(ImplicitRows(E, b), lab, 3)
    ref2 = np.zeros((3, E.shape[1]))
    np.add.at(ref2, lab, E.toarray())
    np.testing.assert_array_equal(s2, ref2)
    assert c2.tolist() == np.bincount(lab).tolist()
    with pytest.raises(ValueError, match="labels must be in"):
        cluster_sums(X, np.full(n, 4), 4)
    with pytest.raises(ValueError, match="do not match"):
        cluster_sums(X, labels[:-1], 4)


def test_implicit_rows_sum_duplicate_entries_like_the_dense_matrix():
    """Reference: the dense matrix E + b (scipy adds duplicate COO entries when densifying).
    ImplicitRows is a view of the shared centred operator, which sums duplicates once: the
    compiled distances use e_ij(e_ij - 2 D_kj) per stored entry, wrong for split entries."""
    import scipy.sparse as sp

    from sparsefs._kernels.kmeans import ImplicitRows

    rng = np.random.default_rng(3)
    n, q = 60, 8
    cols = np.sort(rng.integers(q, size=(n, 4)), axis=1).ravel()  # repeats within rows
    vals = rng.normal(size=4 * n) + 3.0 * (np.arange(4 * n) // 4 < 30)
    E = sp.csr_array((vals, cols, np.arange(0, 4 * n + 1, 4)), shape=(n, q))  # duplicates kept
    assert E.nnz > sp.csr_array(E.toarray()).nnz
    b = rng.normal(size=q)
    Z = ImplicitRows(E, b)
    np.testing.assert_allclose(Z.toarray(), E.toarray() + b, rtol=0, atol=1e-12)
    dense = kmeans(E.toarray() + b, 2, n_init=3, seed=0)
    implicit = kmeans(Z, 2, n_init=3, seed=0)
    assert (dense.labels == implicit.labels).all()
    assert implicit.inertia == pytest.approx(dense.inertia, rel=1e-10)
