"""Sparse k-means kernels (BCSS, l0 and l1 w-steps, gap helpers) and the Pan & Shen EM kernel.

Each test's docstring names its independent reference: explicit loops over the definitions,
exhaustive search, scipy's root finder / SLSQP solver, or scipy.stats densities.
"""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import optimize, stats

from sparsefs._kernels import penalized_gmm as em
from sparsefs._kernels.l1_kmeans import (
    l1_delta_bisection,
    l1_delta_exact,
    l1_weights,
    soft_threshold,
)
from sparsefs._kernels.sparse_kmeans import (
    between_cluster_ss,
    cluster_means,
    fill_empty_clusters,
    gap_statistic,
    l0_weights,
    log_spaced_ints,
    permute_columns,
    select_gap,
    total_ss,
    weight_change,
    within_cluster_ss,
)

scores = arrays(
    np.float64,
    st.integers(1, 25),
    elements=st.one_of(st.floats(0, 100), st.sampled_from([0.0, 1.0, 2.0])),
)


def _problem(n=30, p=7, k=3, seed=0):
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % k
    X = rng.normal(size=(n, p)) + labels[:, None] * rng.normal(size=p)
    return X, labels


# ---------------------------------------------------------------------------- BCSS


def test_bcss_equals_tss_minus_wcss_by_loops():
    """Reference: TSS and WCSS by explicit loops over samples and clusters (spec 3.2)."""
    X, labels = _problem()
    n, p = X.shape
    tss = np.array([sum((X[i, j] - X[:, j].mean()) ** 2 for i in range(n)) for j in range(p)])
    wcss = np.zeros(p)
    for k in range(3):
        rows = X[labels == k]
        wcss += ((rows - rows.mean(axis=0)) ** 2).sum(axis=0)
    np.testing.assert_allclose(between_cluster_ss(X, labels, 3), tss - wcss, rtol=1e-10)
    np.testing.assert_allclose(total_ss(X), tss, rtol=1e-12)
    np.testing.assert_allclose(within_cluster_ss(X, labels, 3), wcss, rtol=1e-12)


def test_bcss_is_half_the_pairwise_form_of_the_paper():
    """Reference: the paper's eq. (4), 1/n sum d_ii' - sum_k 1/n_k sum_{i,i' in C_k} d_ii',
    by explicit double sums; it equals 2 (TSS - WCSS)."""
    X, labels = _problem(n=12, p=3)
    n = X.shape[0]
    d = (X[:, None, :] - X[None, :, :]) ** 2
    pair = d.sum(axis=(0, 1)) / n
    for k in range(3):
        idx = np.flatnonzero(labels == k)
        pair -= d[np.ix_(idx, idx)].sum(axis=(0, 1)) / idx.size
    np.testing.assert_allclose(2 * between_cluster_ss(X, labels, 3), pair, rtol=1e-10)


def test_bcss_constant_feature_is_exactly_zero_and_means_by_loop():
    """Reference: a constant column has no between-cluster spread; means by np.mean per group."""
    X, labels = _problem()
    X[:, 2] = 3.7
    assert between_cluster_ss(X, labels, 3)[2] == 0.0
    counts, means = cluster_means(X, labels, 3)
    for k in range(3):
        assert counts[k] == (labels == k).sum()
        np.testing.assert_allclose(means[k], X[labels == k].mean(axis=0))


# ---------------------------------------------------------------------------- l0 w-step


@given(scores, st.floats(1, 30))
def test_l0_weights_are_the_top_floor_s_with_lower_index_ties(a, s):
    """Reference: a stable sort by (-a_j, j), the top floor(s) entries set to 1."""
    w = l0_weights(a, s)
    k = min(math.floor(s), a.shape[0])
    expected = np.zeros_like(a)
    expected[np.argsort(-a, kind="stable")[:k]] = 1.0
    np.testing.assert_array_equal(w, expected)


def test_l0_weights_solve_the_linf_l0_problem_by_exhaustive_search():
    """Reference: maximise w.a over every 0/1 vector with at most floor(s) ones (Theorem 2)."""
    rng = np.random.default_rng(1)
    for _ in range(20):
        a = rng.exponential(size=6)
        s = rng.uniform(1, 6)
        best = max(
            sum(a[list(c)])
            for r in range(math.floor(s) + 1)
            for c in itertools.combinations(range(6), r)
        )
        assert l0_weights(a, s) @ a == pytest.approx(best)


def test_l0_weights_edge_cases():
    """Reference: s >= p keeps every feature; s < 1 is invalid (floor(s) = 0)."""
    a = np.array([0.0, 2.0, 1.0])
    np.testing.assert_array_equal(l0_weights(a, 3), np.ones(3))
    np.testing.assert_array_equal(l0_weights(a, 10.5), np.ones(3))
    with pytest.raises(ValueError, match=r"s=0\.5"):
        l0_weights(a, 0.5)


# ---------------------------------------------------------------------------- l1 w-step


def _delta_by_root_finding(a, s):
    """Independent Delta: brentq on ||S(a,D)||_1/||S(a,D)||_2 - s over [0, max a).

    Delta is homogeneous in a: solved for a / max(a) (no underflow of tiny scores), rescaled."""
    scale = float(np.max(a)) if a.size else 0.0
    if scale <= 0:
        return 0.0
    a = a / scale
    norm = np.linalg.norm(a)
    if norm == 0 or a.sum() / norm <= s:
        return 0.0

    def f(d):
        t = np.maximum(a - d, 0) / a.max()
        return t.sum() / np.linalg.norm(t) - s

    top = np.sort(a)[::-1]
    hi = top[0] - 1e-12 * top[0]
    second = top[top < top[0]]
    if second.size:  # on (a_(2), a_(1)) the ratio is 1: stop just above the second value
        hi = max(second[0], top[0] - 1e-9 * top[0])
    return scale * optimize.brentq(f, 0.0, hi, xtol=1e-15 * top[0], rtol=1e-15)


@settings(max_examples=200)
@given(
    arrays(np.float64, st.integers(2, 25), elements=st.floats(0, 50)),
    st.floats(1.0001, 6),
)
def test_l1_weights_norms_and_soft_threshold_at_exact_delta(a, s):
    """Reference: Delta by scipy.optimize.brentq on the ratio equation (independent of the
    sort-based closed form); then ||w||_2 = 1, ||w||_1 <= s (= s when Delta > 0) and
    w = S(a, Delta)/||S(a, Delta)||_2."""
    top = np.sort(a)[::-1]
    if top[0] == 0 or (top.size > 1 and top[1] >= top[0] * (1 - 1e-6)):
        return  # a tied top: covered by test_l1_weights_tied_top_block
    delta = l1_delta_exact(a, s)
    ref = _delta_by_root_finding(a, s)
    assert delta == pytest.approx(ref, abs=1e-8 * top[0])
    w = l1_weights(a, s)
    assert np.linalg.norm(w) == pytest.approx(1.0, rel=1e-12)
    assert w.sum() <= s * (1 + 1e-9)
    if delta > 0:
        assert w.sum() == pytest.approx(s, rel=1e-7)
    t = soft_threshold(a, ref) / top[0]
    np.testing.assert_allclose(w, t / np.linalg.norm(t), atol=1e-7)


def test_l1_weights_are_optimal_against_slsqp():
    """Reference: scipy SLSQP on max w.a s.t. ||w||_2 <= 1, sum w <= s, w >= 0."""
    rng = np.random.default_rng(3)
    for _ in range(10):
        a = rng.exponential(size=8) ** 2
        s = rng.uniform(1.1, 2.5)
        res = optimize.minimize(
            lambda w, a=a: -w @ a,
            np.full(8, 0.1),
            jac=lambda w, a=a: -a,
            bounds=[(0, None)] * 8,
            constraints=[
                {"type": "ineq", "fun": lambda w: 1 - w @ w},
                {"type": "ineq", "fun": lambda w, s=s: s - w.sum()},
            ],
            method="SLSQP",
            options={"ftol": 1e-12, "maxiter": 500},
        )
        assert l1_weights(a, s) @ a >= -res.fun - 1e-6


def test_l1_weights_no_shrinkage_when_the_bound_is_loose():
    """Reference: Delta = 0 when ||a||_1/||a||_2 <= s, so w = a/||a||_2 (W&T eq. 16)."""
    a = np.array([1.0, 2.0, 3.0])
    assert l1_delta_exact(a, 10.0) == 0.0
    np.testing.assert_allclose(l1_weights(a, 10.0), a / np.linalg.norm(a))
    np.testing.assert_array_equal(l1_weights(np.zeros(4), 2.0), np.zeros(4))


def test_l1_weights_tied_top_block():
    """Reference: with a tied top block of m > s^2 features every normalised soft threshold
    is infeasible; w = s/m on the block is feasible and attains the optimum s * max(a)."""
    a = np.array([5.0, 1.0, 5.0, 0.5])
    w = l1_weights(a, 1.2)
    assert w.sum() == pytest.approx(1.2) and np.linalg.norm(w) <= 1
    assert w @ a == pytest.approx(1.2 * 5.0)
    np.testing.assert_allclose(w, [0.6, 0, 0.6, 0])


def test_l1_bisection_is_close_to_the_exact_level():
    """Reference: the exact closed-form level; the spec's bisection (15 halvings, interval
    1e-4) ends within max(a) / 2^15 of it."""
    rng = np.random.default_rng(5)
    for _ in range(20):
        a = rng.exponential(size=30)
        s = rng.uniform(1.5, 4)
        exact = l1_delta_exact(a, s)
        approx = l1_delta_bisection(a, s)
        assert abs(exact - approx) <= max(a.max() / 2**15, 1e-4)
        w = l1_weights(a, s, exact=False)
        assert np.linalg.norm(w) == pytest.approx(1.0)
        assert w.sum() == pytest.approx(s, rel=0.05)


# ---------------------------------------------------------------------------- helpers


def test_fill_empty_clusters_reseeds_with_the_farthest_point():
    """Reference: by hand; cluster 2 is empty and sample 5 (x = 10, mean 7) is the farthest
    from its cluster mean."""
    X = np.array([[0.0], [0.1], [0.2], [5.0], [6.0], [10.0]])
    labels = np.array([0, 0, 0, 1, 1, 1])
    out = fill_empty_clusters(X, labels, 3)
    np.testing.assert_array_equal(out, [0, 0, 0, 1, 1, 2])
    np.testing.assert_array_equal(labels, [0, 0, 0, 1, 1, 1])  # input untouched
    assert within_cluster_ss(X, out, 3).sum() <= within_cluster_ss(X, labels, 3).sum()
    with pytest.raises(ValueError, match="n_samples=2"):
        fill_empty_clusters(X[:2], np.zeros(2, dtype=int), 3)


def test_permute_columns_permutes_each_column_independently():
    """Reference: sorted columns are unchanged; rows are not all moved alike; seeded."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 4))
    X_copy = X.copy()
    P = permute_columns(X, 7)
    np.testing.assert_array_equal(X, X_copy)
    np.testing.assert_array_equal(np.sort(P, axis=0), np.sort(X, axis=0))
    orders = [np.argsort(np.argsort(P[:, j])) for j in range(4)]
    assert not all(np.array_equal(orders[0], o) for o in orders[1:])
    np.testing.assert_array_equal(P, permute_columns(X, 7))


def test_gap_statistic_and_rules():
    """Reference: the formulas by hand (numpy mean and ddof=1 sd)."""
    log_o = np.array([1.0, 2.0, 2.5, 2.6])
    ref = np.array([[0.5, 1.0, 1.5, 2.0], [0.7, 1.2, 1.3, 1.8]])
    gap, sd = gap_statistic(log_o, ref)
    np.testing.assert_allclose(gap, log_o - ref.mean(axis=0))
    np.testing.assert_allclose(sd, ref.std(axis=0, ddof=1))
    assert select_gap(gap, sd, "max") == 2
    assert select_gap(gap, np.full(4, 0.25), "1se") == 1
    with pytest.raises(ValueError, match="rule="):
        select_gap(gap, sd, "median")
    assert weight_change(np.ones(3), np.ones(3)) == 0.0
    assert weight_change(np.array([1.0, 0, 0]), np.array([0.5, 0.5, 0])) == 1.0


def test_log_spaced_ints():
    """Reference: the spec's grid: log-spaced, truncated to integers, deduplicated."""
    grid = log_spaced_ints(6, 1000, 20)
    assert grid[0] == 6 and grid[-1] == 1000 and np.all(np.diff(grid) > 0)
    assert len(grid) <= 20
    np.testing.assert_array_equal(log_spaced_ints(2, 4, 20), [2, 3, 4])
    with pytest.raises(ValueError, match="low"):
        log_spaced_ints(0, 4, 5)


# ---------------------------------------------------------------------------- Pan & Shen EM


def _mixture(seed=0):
    rng = np.random.default_rng(seed)
    labels = np.arange(60) % 3
    X = rng.normal(size=(60, 6))
    X[:, :2] += 1.5 * (labels[:, None] - 1)
    X -= X.mean(axis=0)
    resp = np.zeros((60, 3))
    resp[np.arange(60), labels] = 1.0
    return X, resp


def test_e_step_matches_scipy_densities():
    """Reference: scipy.stats.multivariate_normal with the diagonal covariance."""
    X, _ = _mixture()
    rng = np.random.default_rng(1)
    w = np.array([0.2, 0.5, 0.3])
    mu = rng.normal(size=(3, 6))
    var = rng.uniform(0.5, 2, size=6)
    dens = np.column_stack(
        [w[k] * stats.multivariate_normal(mu[k], np.diag(var)).pdf(X) for k in range(3)]
    )
    log_resp, ll = em.e_step(X, w, mu, var)
    assert ll == pytest.approx(np.log(dens.sum(axis=1)).sum(), rel=1e-10)
    np.testing.assert_allclose(np.exp(log_resp), dens / dens.sum(axis=1, keepdims=True),
                               atol=1e-10)


def test_m_step_means_maximise_the_penalised_expected_loglik():
    """Reference: scipy.optimize.minimize_scalar per (k, j) on
    sum_i tau_ik (x_ij - m)^2 / (2 sigma_j^2) + alpha |m|."""
    X, resp = _mixture()
    rng = np.random.default_rng(2)
    resp = resp * 0.8 + 0.2 * rng.dirichlet(np.ones(3), size=60)
    var = rng.uniform(0.5, 2, size=6)
    alpha = 3.0
    _, means, _ = em.m_step(X, resp, alpha, var, 0.0)
    for k in range(3):
        for j in range(6):
            def f(m, k=k, j=j):
                return resp[:, k] @ (X[:, j] - m) ** 2 / (2 * var[j]) + alpha * abs(m)

            best = optimize.minimize_scalar(f, bounds=(-5, 5), method="bounded",
                                            options={"xatol": 1e-10})
            assert f(means[k, j]) <= best.fun + 1e-8


def test_em_penalised_loglik_never_decreases_and_alpha_limits():
    """Reference: the ECM ascent property; alpha >= alpha_max zeroes every mean (first
    M-step threshold); alpha = 0 gives the unpenalised weighted means."""
    X, resp = _mixture()
    fit = em.penalized_gmm_em(X, resp, 2.0, reg_covar=1e-10)
    assert np.all(np.diff(fit.objective) >= -1e-9 * np.abs(fit.objective[1:]))
    assert np.any(fit.means[:, :2] != 0) and fit.n_iter >= 1
    _, _, var0 = em.m_step(X, resp, 0.0, np.ones(6), 1e-6)
    alpha_max = np.max(np.abs(resp.T @ X) / var0)
    first = em.m_step(X, resp, alpha_max * 1.0001, var0, 1e-6)[1]
    assert np.all(first == 0)
    _, means, _ = em.m_step(X, resp, 0.0, var0, 0.0)
    np.testing.assert_allclose(means, (resp.T @ X) / resp.sum(axis=0)[:, None])
    assert em.bic(-100.0, 60, 3, means) == pytest.approx(200 + math.log(60) * (2 + 6 + 18))


# ---------------------------------------------------------------------------- sparse input (#18)


def _sparse_matrix(seed=0, n=60, p=700):
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * (rng.random((n, p)) < 0.2)
    X[:, 5] = 0.0
    X[:, 6] = 3.0  # a constant column
    return sp.csr_array(X), X


@pytest.mark.parametrize("standardize", [True, False])
def test_standardize_sparse_is_the_dense_column_transform(standardize):
    """Reference: ``standardize_columns`` of the dense matrix (means bitwise, the rest to
    rounding); constant columns exactly 0."""
    from sparsefs._kernels.sparse_kmeans import standardize_columns, standardize_sparse

    Xs, X = _sparse_matrix()
    Z, mean, sd = standardize_sparse(Xs, standardize, 0.5)
    if standardize:
        ref, ref_mean, ref_sd = standardize_columns(X, 0.5)
        np.testing.assert_array_equal(mean, ref_mean)
        np.testing.assert_allclose(sd, ref_sd, rtol=1e-13)
    else:
        ref = X / 0.5
    np.testing.assert_allclose(Z.toarray(), ref, rtol=1e-12, atol=1e-13)
    if standardize:
        assert np.all(Z.toarray()[:, [5, 6]] == 0.0)


def test_permute_columns_of_sparse_input_is_the_dense_permutation():
    """Reference: ``permute_columns`` of the dense matrix with the same seed, entry by entry
    (more columns than one 512-column block)."""
    from sparsefs._kernels.kmeans import ImplicitRows

    Xs, X = _sparse_matrix(seed=1)
    b = np.random.default_rng(2).normal(size=X.shape[1])
    P = permute_columns(ImplicitRows(Xs, b), 11)
    np.testing.assert_array_equal(P.toarray(), permute_columns(X + b, 11))
    assert P.nnz == Xs.nnz


def test_cluster_stats_of_sparse_input():
    """Reference: ``cluster_means`` and ``between_cluster_ss`` of the dense matrix."""
    from sparsefs._kernels.kmeans import ImplicitRows
    from sparsefs._kernels.sparse_kmeans import cluster_stats

    Xs, X = _sparse_matrix(seed=3, p=40)
    b = np.random.default_rng(4).normal(size=40)
    labels = np.arange(60) % 4
    counts, means, bcss = cluster_stats(ImplicitRows(Xs, b), labels, 5)  # cluster 4 empty
    ref_counts, ref_means = cluster_means(X + b, labels, 5)
    np.testing.assert_array_equal(counts, ref_counts)
    np.testing.assert_allclose(means, ref_means, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(bcss, between_cluster_ss(X + b, labels, 5), rtol=1e-10,
                               atol=1e-12)


# --------------------------------------------------------------------------------------------
# The module exchange of the restart search (issue #33)
# --------------------------------------------------------------------------------------------


def _three_block_design(seed=0):
    """80 samples, three blocks of 10 co-varying columns and 70 noise columns.

    Block A carries a sample factor ``a`` (rows 0-39 vs 40-79), B a factor ``b`` (blocks of 20)
    and C, slightly weaker, a factor ``c`` (blocks of 10) that crosses both. With K = 4 and
    s = 20 the partitions by (a, b), (a, c) and (b, c) are local optima of the l0 objective;
    (a, b) is the best (C's effect is 0.9 of the others'), and under (a, c) the B columns have
    no between-cluster sum of squares at all (b averages out in every cell), so no w-step
    from (a, c) ever looks at B."""
    rng = np.random.default_rng(seed)
    i = np.arange(80)
    a = np.where(i < 40, 1.0, -1.0)
    b = np.where((i // 20) % 2 == 0, 1.0, -1.0)
    c = np.where((i // 10) % 2 == 0, 1.0, -1.0)
    blocks = [np.outer(f, np.ones(10)) * scale + 0.3 * rng.standard_normal((80, 10))
              for f, scale in ((a, 1.0), (b, 1.0), (c, 0.9))]
    X = np.hstack([*blocks, rng.standard_normal((80, 70))])
    labels = {name: (np.asarray(f > 0, dtype=np.intp) * 2 + np.asarray(g > 0, dtype=np.intp))
              for name, (f, g) in {"ab": (a, b), "ac": (a, c), "bc": (b, c)}.items()}
    return np.ascontiguousarray(X), labels


def _profile(X, labels, s=20):
    """The l0 objective of a partition with its exact w-step (the top-s between-cluster sums
    of squares), by a loop over the clusters: independent of the kernels."""
    tss = ((X - X.mean(axis=0)) ** 2).sum(axis=0)
    wcss = sum(((X[labels == k] - X[labels == k].mean(axis=0)) ** 2).sum(axis=0)
               for k in np.unique(labels))
    return float(np.sort(tss - wcss)[::-1][:s].sum())


def test_feature_modules_are_the_planted_blocks():
    """Reference: the planted blocks. Columns of one block correlate at about 0.9 (factor 1,
    noise 0.3), columns of different blocks and the noise columns at about 0: the modules
    are exactly the three blocks, and every noise column is a module of its own or joins
    other noise columns only."""
    from sparsefs._kernels.sparse_kmeans_alternation import InMemory, feature_modules

    X, _ = _three_block_design()
    modules = feature_modules(InMemory(X), np.arange(100))
    as_sets = [set(m.tolist()) for m in modules]
    for lo in (0, 10, 20):
        assert set(range(lo, lo + 10)) in as_sets
    for m in as_sets:  # a noise column never joins a block
        assert m <= set(range(30, 100)) or max(m) < 30
    assert sum(len(m) for m in as_sets) == 100
    assert [m.tolist() for m in feature_modules(InMemory(X), np.array([5]))] == [[5]]


def test_module_exchange_reaches_the_best_combination_of_blocks():
    """Reference: the objective of the planted (a, b) partition, by an independent loop.

    The alternation from the (a, c) and (b, c) partitions stays there (their objectives are
    below (a, b)'s: C's effect is weaker); the exchange swaps module C of the best support
    for module B (or A) and reaches the (a, b) optimum."""
    from sparsefs._kernels import sparse_kmeans_alternation as alt
    from sparsefs._kernels.sparse_kmeans import l0_weights

    X, labels = _three_block_design()
    ops = alt.InMemory(X)
    solver = alt.Solver(4, 1, "hartigan", np.random.default_rng(0))

    def w_step(a):
        return l0_weights(a, 20)

    kept = []

    def run(labels0):
        fit = alt.alternate(ops, np.asarray(labels0, dtype=np.intp), w_step, max_iter=100,
                            tol=1e-4, solver=solver)
        kept.append(fit)
        return fit

    stuck = [run(labels["ac"]), run(labels["bc"])]
    best_known = _profile(X, labels["ab"])
    for fit in stuck:
        assert fit.objective < 0.99 * best_known, "the design should trap the alternation"
    start = max(stuck, key=lambda f: f.objective)
    followed = list(alt._module_exchange(ops, list(kept), start, w_step, run, n_exchange=15,
                                         solver=solver))
    assert followed, "the exchange followed no candidate"
    best = max(f.objective for f in followed)
    assert best >= best_known * (1 - 1e-12), (best, best_known)
    top = max(followed, key=lambda f: f.objective)
    assert set(np.flatnonzero(top.weights > 0)) == set(range(20))


def test_feature_subset_starts_cover_the_columns():
    """Reference: counting. The random seeds of the feature-subset starts are drawn from the
    columns that no earlier subset holds (a cover): each is a column outside every earlier
    subset (the seed's 10 most correlated columns, recomputed here with numpy), until all
    are held."""
    from sparsefs._kernels import sparse_kmeans_alternation as alt
    from sparsefs._kernels.sparse_kmeans import l0_weights

    rng = np.random.default_rng(1)
    X = rng.standard_normal((30, 120))
    ops = alt.InMemory(X)
    seeds = []
    correlations = ops.correlations

    def recording(j):
        seeds.append(j)
        return correlations(j)

    ops.correlations = recording
    solver = alt.Solver(3, 0, "hartigan", np.random.default_rng(0))
    first = alt.starts(ops, [rng.integers(3, size=30)], 3)
    alt.restart_search(ops, first, lambda a: l0_weights(a, 10), max_iter=20, tol=1e-4,
                       solver=solver, subset_size=10,
                       restarts=alt.Restarts(1, 60, 0, 0, 0, 0))
    assert len(seeds) == 60
    corr = np.abs(np.corrcoef(X, rowvar=False))
    held = np.zeros(120, dtype=bool)
    for r, j in enumerate(seeds):
        if r >= 20 and not held.all():  # the 40 random seeds (after 60 // 3 tail seeds)
            assert not held[j], f"seed {r} (column {j}) was held by an earlier subset"
        c = corr[j].copy()
        c[j] = np.inf
        held[np.argsort(-c, kind="stable")[:10]] = True
    assert held.sum() >= 40 + 10
