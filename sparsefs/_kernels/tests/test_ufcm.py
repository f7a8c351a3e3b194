"""UFCM kernel identities (specs/ufcm.md B.11), each against an independent reference.

References used: explicit per-sample / per-cluster loops and explicit n x n indicator matrices
for the closed forms (centroids, k-means cost, scatter matrices); central finite differences for
the gradient of the l2,p penalty; ``numpy.linalg.eigh`` of matrices formed here from the scatter
definitions for the W-step (Ky Fan); brute-force minima over fixed candidate sets for the restart
rule; and the re-weighting inequality (concavity of t -> (t + eps)^(p/2)) checked directly.
"""

import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import pdist

from sparsefs._kernels import ufcm as K

# ------------------------------------------------------------------------------------------
# Independent references (written from the definitions, not from the kernel)
# ------------------------------------------------------------------------------------------


def _indicator(labels, k):
    U = np.zeros((labels.shape[0], k))
    U[np.arange(labels.shape[0]), labels] = 1.0
    return U


def _scatters(X, labels):
    """S_t and S_w by explicit sums of outer products over the samples."""
    d = X.shape[1]
    mean = X.mean(axis=0)
    St = np.zeros((d, d))
    Sw = np.zeros((d, d))
    for i, x in enumerate(X):
        St += np.outer(x - mean, x - mean)
        m = X[labels == labels[i]].mean(axis=0)
        Sw += np.outer(x - m, x - m)
    return St, Sw


def _reference_objective(X, W, labels, alpha, beta, p):
    """Eq. 6 from the scatter definitions: Tr(W'StW) - alpha Tr(W'SwW) - beta sum ||w^i||^p."""
    St, Sw = _scatters(X, labels)
    pen = sum(np.linalg.norm(row) ** p for row in W)
    return np.trace(W.T @ St @ W) - alpha * np.trace(W.T @ Sw @ W) - beta * pen


def _top_eigvecs(A, k):
    vals, vecs = np.linalg.eigh(0.5 * (A + A.T))
    return vals[::-1][:k], vecs[:, ::-1][:, :k]


def _projector(W):
    return W @ W.T


def _lloyd_proposer(n_clusters, r, seed):
    """r fresh numpy Lloyd runs (random samples as initial centres), seeded once."""
    rng = np.random.default_rng(seed)

    def propose(Y, previous):
        out = []
        for _ in range(r):
            centres = Y[rng.choice(Y.shape[0], n_clusters, replace=False)]
            labels = np.zeros(Y.shape[0], dtype=np.intp)
            for _ in range(50):
                dist = ((Y[:, None, :] - centres[None]) ** 2).sum(-1)
                new = dist.argmin(1)
                if np.array_equal(new, labels):
                    break
                labels = new
                for k in range(n_clusters):
                    if np.any(labels == k):
                        centres[k] = Y[labels == k].mean(0)
            out.append(labels)
        return out

    return propose


def _data(n=40, d=12, k=3, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 2.0, size=d)
    X[:, :3] += 2.0 * rng.normal(size=(k, 3))[y]
    return X, y


# ------------------------------------------------------------------------------------------
# Closed forms (B.11 i, ii)
# ------------------------------------------------------------------------------------------


def test_cluster_means_are_the_closed_form_centroids():
    """G = W'XU(U'U)^-1 (eq. 10) equals the per-cluster means by loops; empty clusters are 0."""
    rng = np.random.default_rng(1)
    Y = rng.normal(size=(17, 4))
    labels = rng.integers(0, 3, 17)
    labels[labels == 1] = 4  # clusters 1 and 3 empty
    G, counts = K.cluster_means(Y, labels, 5)
    for k in range(5):
        members = Y[labels == k]
        assert counts[k] == len(members)
        expected = members.mean(0) if len(members) else np.zeros(4)
        np.testing.assert_allclose(G[k], expected, rtol=1e-13, atol=1e-15)
    nonempty = counts > 0
    U = _indicator(labels, 5)[:, nonempty]
    np.testing.assert_allclose(G[nonempty], np.linalg.solve(U.T @ U, U.T @ Y), rtol=1e-12)


def test_kmeans_cost_equals_the_trace_form():
    """||Y - UG||^2 (loops) = Tr(W'X'L_U XW) with the explicit L_U = I - U(U'U)^-1U' (eq. 11)."""
    X, _ = _data(seed=2)
    rng = np.random.default_rng(2)
    W = np.linalg.qr(rng.normal(size=(X.shape[1], 3)))[0]
    labels = rng.integers(0, 4, X.shape[0])
    Y = X @ W
    brute = sum(np.sum((Y[i] - Y[labels == labels[i]].mean(0)) ** 2) for i in range(len(Y)))
    U = _indicator(labels, 4)
    L = np.eye(len(Y)) - U @ np.linalg.solve(U.T @ U, U.T)
    np.testing.assert_allclose(L @ L, L, atol=1e-12)  # idempotent
    trace = np.trace(W.T @ X.T @ L @ X @ W)
    assert K.kmeans_cost(Y, labels) == pytest.approx(brute, rel=1e-12)
    assert K.kmeans_cost(Y, labels) == pytest.approx(trace, rel=1e-10)


# ------------------------------------------------------------------------------------------
# The l2,p re-weighting (eq. 7)
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [0.25, 0.5, 1.0, 1.5, 2.0])
def test_reweight_gives_the_gradient_and_the_trace_identity(p):
    """With eps = 0: 2DW is the gradient of sum ||w^i||^p (central differences) and
    Tr(W'DW) = (p/2) sum ||w^i||^p."""
    rng = np.random.default_rng(3)
    W = rng.normal(size=(6, 3))
    D = K.reweight(W, p, 0.0)
    assert np.trace(W.T @ (D[:, None] * W)) == pytest.approx(
        p / 2 * np.sum(np.linalg.norm(W, axis=1) ** p), rel=1e-12
    )
    h = 1e-6
    grad = np.zeros_like(W)
    for idx in np.ndindex(W.shape):
        E = np.zeros_like(W)
        E[idx] = h
        grad[idx] = (K.l2p_penalty(W + E, p) - K.l2p_penalty(W - E, p)) / (2 * h)
    np.testing.assert_allclose(2 * D[:, None] * W, grad, rtol=1e-6, atol=1e-8)


@settings(max_examples=60, deadline=None)
@given(
    st.floats(0.05, 2.0),
    st.integers(0, 10_000),
    st.sampled_from([0.0, 1e-3, 1.0]),
)
def test_reweighting_majorises_the_smoothed_penalty(p, seed, zero_share):
    """Concavity of t -> (t + eps)^(p/2), the inequality behind eq. 16:
    P(W~) <= P(W) + Tr(W~'DW~) - Tr(W'DW), with D from W."""
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(8, 2)) * (rng.random((8, 1)) > zero_share)
    Wt = rng.normal(size=(8, 2))
    eps = 1e-6
    D = K.reweight(W, p, eps)
    lhs = K.l2p_penalty(Wt, p, eps)
    rhs = K.l2p_penalty(W, p, eps) + np.sum(D * (Wt**2).sum(1)) - np.sum(D * (W**2).sum(1))
    assert lhs <= rhs + 1e-9 * max(1.0, abs(rhs))


# ------------------------------------------------------------------------------------------
# The W-step (eqs. 12-13; B.11 iv, vi)
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [0.0, 0.3, 1.0, 2.0])
def test_operator_and_matrix_match_the_scatter_definitions(alpha):
    """A = S_t - alpha S_w - beta D, with S_t, S_w by explicit outer-product sums."""
    X, _ = _data(n=30, d=9, seed=4)
    rng = np.random.default_rng(4)
    labels = rng.integers(0, 3, 30)
    bd = rng.uniform(0.1, 3.0, 9)
    St, Sw = _scatters(X, labels)
    A = St - alpha * Sw - np.diag(bd)
    Xc = X - X.mean(0)
    np.testing.assert_allclose(K.w_matrix(Xc, labels, alpha, bd), A, rtol=1e-10, atol=1e-10)
    V = rng.normal(size=(9, 4))
    op = K.w_operator(Xc, labels, alpha, bd)
    np.testing.assert_allclose(op @ V, A @ V, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(op @ V[:, 0], A @ V[:, 0], rtol=1e-10, atol=1e-9)


@pytest.mark.parametrize(
    ("n", "d", "k", "alpha", "beta", "seed"),
    [
        (40, 12, 3, 1.0, 1.0, 0),
        (40, 12, 5, 0.2, 5.0, 1),
        (25, 80, 4, 2.0, 0.5, 2),  # wide: d >> n
        (60, 30, 1, 0.0, 0.0, 3),
        (30, 200, 6, 1.0, 20.0, 4),
    ],
)
def test_lanczos_and_dense_w_steps_agree(n, d, k, alpha, beta, seed):
    """Matrix-free Lanczos (on A and shift-inverted), the kernel's dense path and numpy's eigh of
    the matrix formed from the scatter definitions give the same top-k eigenvalues and the same
    subspace."""
    X, _ = _data(n=n, d=d, seed=seed)
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, n)
    bd = beta * rng.uniform(0.5, 2.0, d)
    Xc = X - X.mean(0)
    St, Sw = _scatters(X, labels)
    ref_vals, ref_vecs = _top_eigvecs(St - alpha * Sw - np.diag(bd), k)
    v0 = rng.normal(size=d)
    runs = [K.w_step(Xc, labels, alpha, bd, k, solver="dense")]
    for shift_invert in (False, True):  # Lanczos on A and on (sigma I - A)^-1
        runs.append(K.w_step(Xc, labels, alpha, bd, k, solver="arpack", v0=v0,
                             shift_invert=shift_invert))
    scale = np.abs(ref_vals).max()
    for W, vals in runs:
        np.testing.assert_allclose(W.T @ W, np.eye(k), atol=1e-12)  # orthonormal columns
        np.testing.assert_allclose(vals, ref_vals, rtol=1e-9, atol=1e-10 * scale)
        np.testing.assert_allclose(_projector(W), _projector(ref_vecs), atol=1e-7)
        A = St - alpha * Sw - np.diag(bd)
        assert np.trace(W.T @ A @ W) == pytest.approx(ref_vals.sum(), rel=1e-10, abs=1e-9)


@pytest.mark.parametrize("alpha", [0.0, 0.4, 1.0, 2.5])
def test_shift_inverted_operator_is_the_inverse(alpha):
    """sigma from inverse_shift exceeds the largest eigenvalue (numpy eigvalsh of the matrix
    formed from the scatter definitions), and the Woodbury operator equals numpy's solve with
    sigma I - A, on matrices and on vectors."""
    X, _ = _data(n=20, d=50, seed=12)
    rng = np.random.default_rng(12)
    labels = rng.integers(0, 3, 20)
    bd = rng.uniform(0.0, 5.0, 50)
    St, Sw = _scatters(X, labels)
    A = St - alpha * Sw - np.diag(bd)
    Xc = X - X.mean(0)
    sigma = K.inverse_shift(Xc, labels, alpha, bd)
    assert sigma > np.linalg.eigvalsh(A)[-1]
    op = K.w_inverse_operator(Xc, labels, alpha, bd, sigma)
    V = rng.normal(size=(50, 3))
    ref = np.linalg.solve(sigma * np.eye(50) - A, V)
    np.testing.assert_allclose(op @ V, ref, rtol=1e-9, atol=1e-12 * np.abs(ref).max())
    np.testing.assert_allclose(op @ V[:, 1], ref[:, 1], rtol=1e-9,
                               atol=1e-12 * np.abs(ref).max())
    with pytest.raises(ValueError, match="sigma="):
        K.w_inverse_operator(Xc, labels, alpha, bd, -10.0)


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0, 2.5])
def test_certified_shift_decides_whether_sigma_is_above_the_spectrum(alpha):
    """Reference: numpy eigvalsh of A formed from the scatter definitions. For alpha <= 1 the
    n x n inertia test is exact (accepts every sigma above lambda_max by more than the slack,
    rejects every sigma below); for alpha > 1 it is sufficient (never accepts a sigma below).
    An accepted sigma's M gives the same operator as the one built from scratch."""
    X, _ = _data(n=20, d=50, seed=21)
    rng = np.random.default_rng(21)
    labels = rng.integers(0, 3, 20)
    bd = rng.uniform(0.5, 5.0, 50)
    St, Sw = _scatters(X, labels)
    top = np.linalg.eigvalsh(St - alpha * Sw - np.diag(bd))[-1]
    Xc = X - X.mean(0)
    scale = abs(top) + 1.0
    for rel in (-0.5, -1e-3, 1e-3, 0.05, 1.0):
        sigma = top + rel * scale
        M = K.certified_shift(Xc, labels, alpha, bd, sigma)
        if rel < 0:
            assert M is None, (alpha, rel)
        elif alpha <= 1.0:
            assert M is not None, (alpha, rel)
        if M is not None:
            V = rng.normal(size=(50, 2))
            np.testing.assert_allclose(
                K.w_inverse_operator(Xc, labels, alpha, bd, sigma, gram=M) @ V,
                K.w_inverse_operator(Xc, labels, alpha, bd, sigma) @ V, rtol=1e-12)
    assert K.certified_shift(Xc, labels, alpha, bd, -10.0) is None  # Lambda not positive


@pytest.mark.parametrize("hint", ["good", "too low"])
def test_w_step_with_a_shift_hint_is_the_dense_w_step(hint):
    """A hinted shift (certified, or rejected for the Weyl bound when it lies below the
    spectrum) changes only Lanczos's speed: the same eigenvalues and subspace as LAPACK."""
    X, _ = _data(n=15, d=120, seed=22)
    rng = np.random.default_rng(22)
    labels = rng.integers(0, 3, 15)
    bd = rng.uniform(0.1, 30.0, 120)
    Xc = X - X.mean(0)
    W_ref, vals_ref = K.w_step(Xc, labels, 1.0, bd, 3, solver="dense")
    hint_vals = vals_ref if hint == "good" else vals_ref - 10.0 * abs(vals_ref[0])
    W, vals = K.w_step(Xc, labels, 1.0, bd, 3, solver="arpack", v0=rng.normal(size=120),
                       shift_hint=hint_vals)
    np.testing.assert_allclose(vals, vals_ref, rtol=1e-9, atol=1e-9 * abs(vals_ref).max())
    np.testing.assert_allclose(W @ W.T, W_ref @ W_ref.T, atol=1e-8)


def test_resolve_solver_threshold_and_fallback():
    """Dense up to DENSE_MAX_FEATURES, or for tall data up to DENSE_TALL_MAX_FEATURES; ARPACK
    needs k < d - 1, else dense."""
    small, tall = K.DENSE_MAX_FEATURES, K.DENSE_TALL_MAX_FEATURES
    assert K.resolve_solver("auto", 50, small, 5) == "dense"
    assert K.resolve_solver("auto", 50, small + 1, 5) == "arpack"
    assert K.resolve_solver("auto", tall, tall, 5) == "dense"
    assert K.resolve_solver("auto", 10 * tall, tall + 1, 5) == "arpack"
    assert K.resolve_solver("dense", 50, 10 * tall, 5) == "dense"
    assert K.resolve_solver("arpack", 50, 10, 9) == "dense"
    assert K.resolve_solver("arpack", 50, 10, 8) == "arpack"
    with pytest.raises(ValueError, match="solver='eig'"):
        K.resolve_solver("eig", 50, 10, 2)


def test_lanczos_w_step_never_forms_the_d_by_d_matrix():
    """d = 20 000: the d x d matrix would take 3.2 GB; the matrix-free step's traced peak
    memory stays below 40 MB (a few n x d and d x ncv arrays)."""
    rng = np.random.default_rng(5)
    n, d = 20, 20_000
    Xc = rng.normal(size=(n, d))
    Xc -= Xc.mean(0)
    labels = np.arange(n) % 3
    tracemalloc.start()
    try:
        W, _ = K.w_step(Xc, labels, 1.0, np.ones(d), 3, solver="arpack", v0=rng.normal(size=d))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40e6
    np.testing.assert_allclose(W.T @ W, np.eye(3), atol=1e-12)


def test_pca_limit():
    """alpha = beta = 0: W spans the top-k eigenvectors of the total scatter (PCA)."""
    X, y = _data(n=50, d=10, seed=6)
    St, _ = _scatters(X, y)
    _, ref = _top_eigvecs(St, 3)
    Xc = X - X.mean(0)
    res = K.ufcm(
        Xc, y, n_components=3, alpha=0.0, beta=0.0, p=1.0,
        propose=_lloyd_proposer(3, 2, 0), v0=np.ones(10), max_iter=5,
    )
    np.testing.assert_allclose(_projector(res.components), _projector(ref), atol=1e-10)
    # the ranking by row norms only depends on the subspace (B.11 v, vii)
    np.testing.assert_allclose(
        np.linalg.norm(res.components, axis=1), np.linalg.norm(ref, axis=1), atol=1e-10
    )


def test_scores_invariant_to_rotations_of_w():
    """Row norms of W Q equal those of W for any orthogonal Q (B.11 v)."""
    rng = np.random.default_rng(7)
    W = np.linalg.qr(rng.normal(size=(15, 4)))[0]
    Q = np.linalg.qr(rng.normal(size=(4, 4)))[0]
    np.testing.assert_allclose(
        np.linalg.norm(W @ Q, axis=1), np.linalg.norm(W, axis=1), rtol=1e-12
    )


# ------------------------------------------------------------------------------------------
# The restart rule (eq. 14)
# ------------------------------------------------------------------------------------------


def test_best_candidate_is_the_brute_force_minimum_with_ties_to_the_first():
    """A fixed candidate set; costs by loops; the argmin; an exact tie goes to the lower index."""
    rng = np.random.default_rng(8)
    Y = np.vstack([rng.normal(0, 0.3, (6, 2)), rng.normal(4, 0.3, (6, 2))])
    truth = np.repeat([0, 1], 6)
    candidates = [
        rng.integers(0, 2, 12),  # random
        1 - truth,  # the truth with permuted names: same cost as the truth
        np.zeros(12, dtype=int),  # one cluster
        truth,
    ]

    def cost(lab):
        return sum(np.sum((Y[i] - Y[lab == lab[i]].mean(0)) ** 2) for i in range(12))

    index, costs = K.best_candidate(Y, candidates)
    np.testing.assert_allclose(costs, [cost(c) for c in candidates], rtol=1e-12)
    assert index == 1  # the minimum, first among the two equal ones
    assert K.best_candidate(Y, [candidates[2], candidates[0]])[0] == int(
        cost(candidates[0]) < cost(candidates[2])
    )
    with pytest.raises(ValueError, match="at least one candidate"):
        K.best_candidate(Y, [])


def test_driver_keeps_the_best_of_the_r_plus_one_candidates():
    """A proposer that returns r = 3 fixed labellings; at every iteration the driver's labels are
    the brute-force minimum over {previous, the 3 fixed ones} on Y = XW of the previous W."""
    X, y = _data(n=30, d=8, seed=9)
    rng = np.random.default_rng(9)
    fixed = [rng.integers(0, 3, 30), y.copy(), np.arange(30) % 3]
    Xc = X - X.mean(0)
    seen = []

    def propose(Y, previous):
        seen.append((Y.copy(), previous.copy()))
        return [f.copy() for f in fixed]

    chosen = []
    K.ufcm(
        Xc, rng.integers(0, 3, 30), n_components=2, alpha=1.0, beta=1.0, p=1.0,
        propose=propose, v0=np.ones(8), max_iter=4, tol=0.0,
        callback=lambda it, W, labels: chosen.append(labels.copy()),
    )
    assert len(seen) == 4
    for (Y, previous), labels in zip(seen, chosen[1:], strict=True):
        cands = [previous, *fixed]
        costs = [
            sum(np.sum((Y[i] - Y[c == c[i]].mean(0)) ** 2) for i in range(len(Y))) for c in cands
        ]
        best = int(np.argmin(costs))
        np.testing.assert_array_equal(labels, cands[best])


# ------------------------------------------------------------------------------------------
# Monotone ascent (eqs. 15-16)
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("alpha", "beta", "p", "seed"),
    [(1.0, 1.0, 1.0, 0), (0.5, 5.0, 0.5, 1), (2.0, 0.3, 1.5, 2), (1.0, 50.0, 0.25, 3),
     (0.1, 10.0, 1.0, 4)],
)
@pytest.mark.parametrize("solver", ["dense", "arpack"])
def test_objective_is_non_decreasing(alpha, beta, p, seed, solver):
    """The recorded (smoothed) objective never decreases beyond 1e-9 relative (the eigensolver's
    rounding); eq. 6 itself, recomputed from the scatter definitions at every iterate, never
    decreases by more than beta * d * eps^(p/2) + 1e-9 |J| (the smoothing's bound)."""
    X, _ = _data(n=36, d=14, k=3, seed=seed)
    rng = np.random.default_rng(seed)
    Xc = X - X.mean(0)
    exact = []
    res = K.ufcm(
        Xc, rng.integers(0, 3, 36), n_components=3, alpha=alpha, beta=beta, p=p,
        propose=_lloyd_proposer(3, 3, seed), v0=rng.normal(size=14), max_iter=15, tol=0.0,
        solver=solver,
        callback=lambda it, W, labels: exact.append(
            _reference_objective(X, W, labels, alpha, beta, p)
        ),
    )
    hist = res.objective
    assert np.all(np.diff(hist) >= -1e-9 * np.abs(hist[:-1]))
    eps = K.smoothing_eps(14, 3)
    slack = beta * 14 * eps ** (p / 2) + 1e-9 * np.abs(exact[:-1])
    assert np.all(np.diff(exact) >= -slack)
    assert np.all(np.isfinite(hist)) and len(exact) == len(hist)


# ------------------------------------------------------------------------------------------
# Data preparation
# ------------------------------------------------------------------------------------------


def test_prepare_data_centres_flags_constants_and_rescales_exactly():
    """Centred copy, constants flagged and zeroed, input untouched; extreme data rescaled by a
    power of two, so the objective is homogeneous: J(W; X/s, beta/s^2) = J(W; X, beta)/s^2."""
    X, _ = _data(n=20, d=6, seed=10)
    X[:, 2] = 3.0
    X0 = X.copy()
    Xc, e, varying = K.prepare_data(X)
    np.testing.assert_array_equal(X, X0)
    assert e == 0 and varying.tolist() == [True, True, False, True, True, True]
    np.testing.assert_allclose(Xc, np.where(varying, X - X.mean(0), 0.0), atol=1e-14)
    big = X * 2.0**400
    Xb, eb, _ = K.prepare_data(big)
    assert eb > 0
    np.testing.assert_allclose(np.ldexp(Xb, eb), np.where(varying, big - big.mean(0), 0.0),
                               rtol=1e-12, atol=1e-12 * np.abs(big).max())
    rng = np.random.default_rng(10)
    W = np.linalg.qr(rng.normal(size=(6, 2)))[0]
    labels = np.arange(20) % 2
    s = 2.0**7
    J1 = K.objective(Xc, W, labels, 1.0, 3.0, 0.5)
    J2 = K.objective(Xc / s, W, labels, 1.0, 3.0 / s**2, 0.5)
    np.testing.assert_allclose(J2, J1 / s**2, rtol=1e-12)


def test_data_scale_is_the_mean_feature_scatter_and_makes_beta_scale_free():
    """sigma = Tr(S_t)/d from the explicit scatter sum; with beta * sigma(X) the objective of cX
    is c^2 times that of X (so the W-step and the selection do not depend on c)."""
    X, labels = _data(n=20, d=6, seed=12)
    Xc = X - X.mean(0)
    St, _ = _scatters(X, labels)
    np.testing.assert_allclose(K.data_scale(Xc), np.trace(St) / 6, rtol=1e-12)
    assert K.data_scale(np.zeros((5, 3))) == 1.0
    W = np.linalg.qr(np.random.default_rng(12).normal(size=(6, 2)))[0]
    c = 3.7
    J1 = K.objective(Xc, W, labels, 1.0, 0.5 * K.data_scale(Xc), 0.5)
    J2 = K.objective(c * Xc, W, labels, 1.0, 0.5 * K.data_scale(c * Xc), 0.5)
    np.testing.assert_allclose(J2, c**2 * J1, rtol=1e-12)


def _brute_force_kmeans_cost(Y, k):
    """The global k-means minimum by enumerating every labelling (tiny n only)."""
    import itertools

    best = np.inf
    for lab in itertools.product(range(k), repeat=Y.shape[0]):
        lab = np.asarray(lab)
        if len(np.unique(lab)) < k:
            continue
        cost = sum(((Y[lab == j] - Y[lab == j].mean(0)) ** 2).sum() for j in range(k))
        best = min(best, cost)
    return best


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kmeans_reaches_the_brute_force_minimum_and_is_a_lloyd_fixed_point(seed):
    """numpy k-means (best of 10 k-means++ starts) on 9 points, 3 clusters: its cost equals the
    minimum over all 3^9 labellings; every point is nearest to its own cluster's mean; the same
    generator seed gives the same labels."""
    rng = np.random.default_rng(seed)
    Y = rng.normal(size=(9, 2)) + np.repeat(rng.normal(scale=2.0, size=(3, 2)), 3, axis=0)
    labels = K.kmeans(Y, 3, np.random.default_rng(seed), n_init=10)
    np.testing.assert_allclose(K.kmeans_cost(Y, labels), _brute_force_kmeans_cost(Y, 3),
                               rtol=1e-12)
    means, counts = K.cluster_means(Y, labels, 3)
    assert np.all(counts > 0)
    dist = ((Y[:, None, :] - means[None]) ** 2).sum(-1)
    np.testing.assert_array_equal(dist.argmin(1), labels)
    again = K.kmeans(Y, 3, np.random.default_rng(seed), n_init=10)
    np.testing.assert_array_equal(again, labels)


def test_kmeans_warm_start_never_increases_the_cost_and_keeps_clusters_non_empty():
    """Lloyd from given centres cannot raise the cost of the labelling they came from; a centre
    that attracts no point is re-seeded (every cluster keeps a point); heavily tied rows (as
    many distinct rows as clusters) are clustered exactly."""
    rng = np.random.default_rng(5)
    Y = rng.normal(size=(30, 3))
    previous = np.arange(30) % 4
    centres, _ = K.cluster_means(Y, previous, 4)
    refined = K.kmeans(Y, 4, rng, init=centres)
    assert K.kmeans_cost(Y, refined) <= K.kmeans_cost(Y, previous)
    far = np.vstack([centres[:3], [[1e6, 1e6, 1e6]]])  # the 4th centre attracts no point
    labels = K.kmeans(Y, 4, rng, init=far)
    assert np.all(np.bincount(labels, minlength=4) > 0)
    tied = np.repeat(rng.normal(size=(4, 2)), 5, axis=0)  # 4 distinct rows, 4 clusters
    labels = K.kmeans(tied, 4, rng)
    assert K.kmeans_cost(tied, labels) == pytest.approx(0.0, abs=1e-20)
    with pytest.raises(ValueError, match="n_clusters=5"):
        K.kmeans(Y[:4], 5, rng)


def test_isometric_coordinates_keep_every_distance():
    """k-means on the n-dimensional coordinates is k-means on X: same pairwise distances."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(15, 300))
    Z = K.isometric_coordinates(X)
    assert Z.shape == (15, 15)
    np.testing.assert_allclose(pdist(Z), pdist(X), rtol=1e-10)
    np.testing.assert_allclose(Z @ Z.T, X @ X.T, rtol=1e-10, atol=1e-10)
    tall = rng.normal(size=(30, 4))
    assert K.isometric_coordinates(tall) is tall


def test_dense_w_step_with_d_prime_inside_a_degenerate_cluster():
    """The first W-step (D = I) with d' above the rank of the data part: A = X'BX - beta I has
    d - rank equal eigenvalues -beta, where LAPACK's subset driver returned no vectors for the
    issue #16 wine design; the W-step still returns d' orthonormal eigenvectors (numpy's eigh
    as the reference of the eigenvalues)."""
    rng = np.random.default_rng(21)
    Xc = rng.normal(size=(30, 200))
    Xc -= Xc.mean(0)
    labels = np.arange(30) % 3
    beta_d = np.full(200, 89.0)
    W, vals = K.w_step(Xc, labels, 1.0, beta_d, 3, solver="dense")
    A = K.w_matrix(Xc, labels, 1.0, beta_d)
    ref, _ = _top_eigvecs(A, 3)
    assert W.shape == (200, 3)
    np.testing.assert_allclose(W.T @ W, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(np.sort(vals), np.sort(ref), rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(A @ W, W * vals, atol=1e-8 * np.abs(A).max())


# ------------------------------------------------------------------------------------------
# Sparse data (#18): the implicit centring against the dense centred copy
# ------------------------------------------------------------------------------------------


def _sparse_data(n=30, d=50, seed=40, density=0.3):
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    X = rng.normal(loc=1.5, size=(n, d)) * (rng.random((n, d)) < density)
    X[:, 3] = 0.0  # an all-zero column
    X[:, 4] = 2.0  # a constant column with no implicit zero
    return X, sp.csr_array(X)


@pytest.mark.parametrize("standardize", [False, True])
@pytest.mark.parametrize("scale", [1.0, 1e-300, 1e300])
def test_prepare_data_on_sparse_x_is_the_dense_preparation(standardize, scale):
    """Reference: the dense ``prepare_data`` of ``X.toarray()``: same exponent, same constant
    columns, and the implicit centred matrix equals the dense one (checked through products
    with the identity, which form it here only)."""
    X, Xs = _sparse_data()
    Xc, e, varying = K.prepare_data(X * scale, standardize=standardize)
    S, es, vs = K.prepare_data(Xs * scale, standardize=standardize)
    assert isinstance(S, K.CenteredSparse) and es == e
    np.testing.assert_array_equal(vs, varying)
    assert not varying[[3, 4]].any()
    np.testing.assert_allclose(S @ np.eye(X.shape[1]), Xc, rtol=1e-12, atol=1e-13)
    sub = S[:, varying]
    np.testing.assert_allclose(sub @ np.eye(sub.shape[1]), Xc[:, varying], rtol=1e-12,
                               atol=1e-13)
    assert K.data_scale(sub) == pytest.approx(K.data_scale(Xc[:, varying]), rel=1e-12)


def test_centered_sparse_products_and_grams_match_the_dense_centred_matrix():
    """Reference: numpy on the explicitly centred dense copy, for every product the fit uses:
    ``Xc @ v``, ``Xc @ V``, ``Xc.T @ z``, ``Xc.T @ Z``, the weighted n x n Gram, the d x d
    Gram, row norms, rows, per-cluster sums and the k-means cost."""
    X, Xs = _sparse_data(seed=41)
    mean = X.mean(axis=0)
    Xc = X - mean
    S = K.CenteredSparse(Xs, mean)
    rng = np.random.default_rng(0)
    v, V = rng.normal(size=X.shape[1]), rng.normal(size=(X.shape[1], 3))
    z, Z = rng.normal(size=X.shape[0]), rng.normal(size=(X.shape[0], 2))
    w = rng.random(X.shape[1]) + 0.1
    labels = np.arange(X.shape[0]) % 4
    close = {"rtol": 1e-12, "atol": 1e-12}
    np.testing.assert_allclose(S @ v, Xc @ v, **close)
    np.testing.assert_allclose(S @ V, Xc @ V, **close)
    np.testing.assert_allclose(S.T @ z, Xc.T @ z, **close)
    np.testing.assert_allclose(S.T @ Z, Xc.T @ Z, **close)
    np.testing.assert_allclose(S.row_gram(), Xc @ Xc.T, **close)
    np.testing.assert_allclose(S.row_gram(w), (Xc * w) @ Xc.T, **close)
    np.testing.assert_allclose(S.col_gram(), Xc.T @ Xc, **close)
    np.testing.assert_allclose(S.row_sq_norms(), (Xc**2).sum(1), **close)
    np.testing.assert_allclose(S.rows(np.array([2, 5])), Xc[[2, 5]], **close)
    np.testing.assert_allclose(S.rows(7), Xc[7], **close)
    means_s, counts_s = K.cluster_means(S, labels)
    means_d, counts_d = K.cluster_means(Xc, labels)
    np.testing.assert_array_equal(counts_s, counts_d)
    np.testing.assert_allclose(means_s, means_d, **close)
    assert K.kmeans_cost(S, labels) == pytest.approx(K.kmeans_cost(Xc, labels), rel=1e-12)
    # relabelling the clusters leaves the cost bit-for-bit equal (the restart rule's ties)
    perm = np.array([2, 0, 3, 1])[labels]
    assert K.kmeans_cost(S, perm) == K.kmeans_cost(S, labels)
    np.testing.assert_allclose(K.isometric_coordinates(S) @ K.isometric_coordinates(S).T,
                               Xc @ Xc.T, atol=1e-10)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kmeans_on_centered_sparse_data_is_the_dense_kmeans(seed):
    """Reference: the kernel's k-means on the dense centred copy with the same generator
    seed: the same labels (k-means++ seeding and Lloyd on the implicit rows)."""
    X, Xs = _sparse_data(n=60, d=12, seed=50 + seed, density=0.5)
    X[:20, :4] += 4.0
    Xs = Xs.__class__(X)
    S = K.CenteredSparse(Xs, X.mean(0))
    a = K.kmeans(X - X.mean(0), 3, np.random.default_rng(seed), n_init=3)
    b = K.kmeans(S, 3, np.random.default_rng(seed), n_init=3)
    np.testing.assert_array_equal(b, a)


def test_w_steps_on_centered_sparse_data_match_the_dense_ones():
    """Reference: ``w_step`` on the dense centred copy, dense solver and the shift-inverted
    Lanczos path: the same subspace (projectors equal)."""
    X, Xs = _sparse_data(n=25, d=120, seed=60)
    mean = X.mean(0)
    S, Xc = K.CenteredSparse(Xs, mean), X - mean
    labels = np.arange(25) % 3
    beta_d = np.random.default_rng(1).random(120) * 5.0
    v0 = np.random.default_rng(2).normal(size=120)
    for solver in ("dense", "arpack"):
        Wd, vd = K.w_step(Xc, labels, 1.0, beta_d, 2, solver=solver, v0=v0)
        Ws, vs = K.w_step(S, labels, 1.0, beta_d, 2, solver=solver, v0=v0)
        np.testing.assert_allclose(vs, vd, rtol=1e-9)
        np.testing.assert_allclose(_projector(Ws), _projector(Wd), atol=1e-9)


# ------------------------------------------------------------------------------------------
# The correlation screen of init="screen" (issue #16)
# ------------------------------------------------------------------------------------------


def _screen_reference(X):
    """Sum over k of the squared Pearson correlations, from numpy's corrcoef (zero columns 0)."""
    X = np.asarray(X, dtype=np.float64)
    sd = X.std(axis=0)
    live = sd > 0
    out = np.zeros(X.shape[1])
    out[live] = (np.corrcoef(X[:, live], rowvar=False) ** 2).sum(axis=0)
    return out


@pytest.mark.parametrize("shape", [(12, 40), (40, 12)], ids=["wide", "tall"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_correlation_screen_is_the_sum_of_squared_correlations(shape, sparse, monkeypatch):
    """Reference: numpy.corrcoef squared and summed, on wide (Gram route) and tall (blocks of
    X^T X) data, dense and CenteredSparse, with block sizes forced below the width so the
    block loop runs; a constant column scores 0."""
    import scipy.sparse as sp

    rng = np.random.default_rng(3)
    X = rng.normal(size=shape) * (rng.random(shape) < 0.6)
    X[:, 1] = 0.0
    X[:, 2] = 2.5 * X[:, 0] + 1.0  # perfectly correlated with column 0
    monkeypatch.setattr(K, "_SCREEN_BLOCK_ENTRIES", 3 * max(shape))
    Xc, _, _ = K.prepare_data(sp.csr_array(X) if sparse else X)
    got = K.correlation_screen(Xc)
    np.testing.assert_allclose(got, _screen_reference(X), rtol=1e-10, atol=1e-12)
    assert got[1] == 0.0 and got[0] == pytest.approx(got[2], rel=1e-12)


def test_correlation_screen_is_scale_free():
    """Multiplying columns by arbitrary nonzero constants changes no score (corr is unit-free)."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 50))
    units = rng.choice([-1.0, 1.0], 50) * 10.0 ** rng.uniform(-8, 8, 50)
    a = K.correlation_screen(K.prepare_data(X)[0])
    b = K.correlation_screen(K.prepare_data(X * units)[0])
    np.testing.assert_allclose(a, b, rtol=1e-9)


def test_screened_columns_pick_the_correlated_block_in_unit_norm():
    """A block of 12 features sharing one factor among 300 independent ones: the block stands out
    (it and nothing else is kept), the columns come back centred with unit norm, and the count
    is clipped below at 2 * n_clusters when nothing stands out. Reference: the planted block."""
    rng = np.random.default_rng(5)
    n, d = 60, 300
    X = rng.normal(size=(n, d))
    factor = rng.normal(size=n)
    X[:, 100:112] += 1.5 * factor[:, None]
    Xc, _, _ = K.prepare_data(X)
    Z = K.screened_columns(Xc, 3)
    assert Z.shape == (n, 12)
    np.testing.assert_allclose(np.linalg.norm(Z, axis=0), 1.0, rtol=1e-12)
    ref = Xc[:, 100:112] / np.linalg.norm(Xc[:, 100:112], axis=0)
    got = {int(np.argmax(np.abs(ref.T @ z))) for z in Z.T}
    assert got == set(range(12))
    noise, _, _ = K.prepare_data(rng.normal(size=(n, d)))
    assert K.screened_columns(noise, 4).shape[1] >= 8
