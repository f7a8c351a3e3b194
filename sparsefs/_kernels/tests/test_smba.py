"""Tests of the SMBA kernel (sparsefs._kernels.smba).

Independent references, named in each test: a naive dense ADMM written here (explicit M x M
system matrix and its inverse, as the authors' code does), the optimality (KKT) conditions of the
convex problem derived by hand, exact closed forms (C = 0 above the zero threshold, C = I for the
degenerate l1 + affine problem), scikit-learn's coordinate-descent Lasso, and the dense
P = X^T X for the lambda_max formulas.
"""

import numpy as np
import pytest
from sklearn.linear_model import Lasso

from sparsefs._kernels import smba as K
from sparsefs._kernels import smba_reduced as KR
from sparsefs._kernels.columns import duplicate_partition

VARIANTS = [(q, affine) for q in (1, 2) for affine in (False, True)]


def naive_admm(X, mu1, mu2, q, affine, tol, max_iter):
    """The ADMM of spec A.4 written literally: K = mu1 P + mu2 I + a mu2 11^T, inverted densely."""
    M = X.shape[1]
    P = X.T @ X
    a = 1.0 if affine else 0.0
    J = np.ones((M, M))
    Kinv = np.linalg.inv(mu1 * P + mu2 * np.eye(M) + a * mu2 * J)
    C = np.zeros((M, M))
    Lam = np.zeros((M, M))
    l3 = np.zeros(M)
    err1 = []
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - the count is returned
        Z = Kinv @ (mu1 * P + mu2 * C - Lam + a * (mu2 * J + np.ones((M, 1)) @ l3[None, :]))
        V = Z + Lam / mu2
        t = 1.0 / mu2
        if q == 1:
            C = np.sign(V) * np.maximum(np.abs(V) - t, 0.0)
        else:
            nr = np.linalg.norm(V, axis=1)
            C = V * np.where(nr > t, 1.0 - t / np.where(nr > 0, nr, 1.0), 0.0)[:, None]
        Lam = Lam + mu2 * (Z - C)
        if affine:
            l3 = l3 + mu2 * (1.0 - Z.sum(axis=0))
        e1 = np.abs(Z - C).mean()
        e2 = np.abs(1.0 - Z.sum(axis=0)).mean() if affine else 0.0
        err1.append(e1)
        if e1 <= tol and (not affine or e2 <= tol):
            break
    return C, it, np.asarray(err1)


def kkt_residual(X, C, lam, q, affine):
    r"""Relative violation of the optimality conditions of min 1/2||X - XC||^2 + lam ||C||_{1,q}.

    With H = X^T (X - XC) - 1 nu^T (nu = 0 without the affine constraint):
    q = 1: H_ij = lam sign(C_ij) where C_ij != 0, |H_ij| <= lam elsewhere;
    q = 2: H_i = lam c^i / ||c^i|| on non-zero rows, ||H_i|| <= lam on zero rows.
    The affine multiplier nu is estimated from the equalities (its least-squares value).
    """
    G = X.T @ (X - X @ C)
    M = C.shape[0]
    if q == 1:
        nz = C != 0
        nu = np.zeros(M)
        if affine:
            nu = np.array([np.mean(G[nz[:, j], j] - lam * np.sign(C[nz[:, j], j]))
                           for j in range(M)])
        H = G - nu[None, :]
        eq = np.abs(H[nz] - lam * np.sign(C[nz])).max(initial=0.0)
        ineq = np.maximum(np.abs(H[~nz]) - lam, 0.0).max(initial=0.0)
    else:
        rn = np.linalg.norm(C, axis=1)
        nzr = rn > 0
        D = C[nzr] / rn[nzr, None]
        nu = (G[nzr] - lam * D).mean(axis=0) if affine else np.zeros(M)
        H = G - nu[None, :]
        eq = np.abs(H[nzr] - lam * D).max(initial=0.0)
        ineq = np.maximum(np.linalg.norm(H[~nzr], axis=1) - lam, 0.0).max(initial=0.0)
    return max(eq, ineq) / lam


def _data(n=12, M=30, seed=0):
    return np.random.default_rng(seed).standard_normal((n, M))


@pytest.mark.parametrize(("q", "affine"), VARIANTS)
@pytest.mark.parametrize(("n", "M"), [(12, 30), (25, 10)])
def test_woodbury_equals_naive_dense_admm(q, affine, n, M):
    """Reference: the naive dense ADMM above (explicit M x M inverse); same iterates to 1e-8,
    both at a fixed iteration count and with the stopping rule (same n_iter)."""
    X = _data(n, M, seed=n + M)
    alpha = 5.0
    lmax = K.lambda_max(X, q, affine)
    mu1, mu2 = alpha / lmax, alpha
    fixed = K.admm_woodbury(X, mu1, mu2, q=q, affine=affine, tol=0.0, max_iter=150)
    C_ref, _, err_ref = naive_admm(X, mu1, mu2, q, affine, 0.0, 150)
    np.testing.assert_allclose(fixed["coef"], C_ref, atol=1e-8, rtol=0)
    np.testing.assert_allclose(fixed["err1"], err_ref, rtol=1e-5, atol=1e-12)
    stop = K.admm_woodbury(X, mu1, mu2, q=q, affine=affine, tol=1e-8, max_iter=3000)
    C_ref, it_ref, _ = naive_admm(X, mu1, mu2, q, affine, 1e-8, 3000)
    assert stop["converged"]
    assert stop["n_iter"] == it_ref
    np.testing.assert_allclose(stop["coef"], C_ref, atol=1e-8, rtol=0)


@pytest.mark.parametrize(("q", "affine"), VARIANTS)
def test_kkt_conditions_at_convergence(q, affine):
    """Reference: the optimality conditions (derived in kkt_residual's docstring)."""
    X = _data(12, 30, seed=1)
    res = K.smba(X, 5.0, q=q, affine=affine, tol=1e-12, max_iter=20000, keep_coef=True)
    assert res.converged
    assert kkt_residual(X, res.coef, res.lambda_, q, affine) < 1e-6
    if affine:
        np.testing.assert_allclose(res.coef.sum(axis=0), 1.0, atol=1e-9)


@pytest.mark.parametrize(("q", "affine"), VARIANTS)
def test_affine_column_sums_at_default_tol(q, affine):
    """Reference: the constraint 1^T C = 1^T itself, met to the stopping tolerance: each
    |1 - 1^T z_j| <= M err2 and sum_i |Z_ij - C_ij| <= M^2 err1, so |1 - 1^T c_j| <= (M + M^2) tol.
    """
    X = _data(15, 40, seed=2)
    tol = 1e-8
    res = K.smba(X, 10.0, q=q, affine=affine, tol=tol, keep_coef=True)
    assert res.converged
    assert res.err1[-1] <= tol
    if affine:
        assert res.err2[-1] <= tol
        np.testing.assert_allclose(res.coef.sum(axis=0), 1.0, atol=(40 + 40**2) * tol)
        if q == 2:  # in practice much tighter
            np.testing.assert_allclose(res.coef.sum(axis=0), 1.0, atol=1e-6)
    else:
        assert not res.err2.any()


def test_l1_columns_are_lasso_solutions():
    """Reference: scikit-learn's coordinate-descent Lasso, no intercept, alpha = lambda / n,
    one column at a time (q = 1 decouples the columns)."""
    X = _data(20, 25, seed=3)
    res = K.smba(X, 8.0, q=1, affine=False, tol=1e-12, max_iter=20000, keep_coef=True)
    assert res.converged
    n = X.shape[0]
    for j in range(X.shape[1]):
        lasso = Lasso(alpha=res.lambda_ / n, fit_intercept=False, tol=1e-14, max_iter=100000)
        lasso.fit(X, X[:, j])
        np.testing.assert_allclose(res.coef[:, j], lasso.coef_, atol=1e-7)


def test_l1_affine_is_the_identity():
    """Reference: closed form. ||c||_1 >= |1^T c| = 1 and c = e_j has zero loss, so C = I for
    every lambda under the affine constraint with q = 1 (the degenerate variant). The stopping
    rule bounds the primal residual Z - C only, so C approaches I more slowly."""
    X = _data(10, 20, seed=4)
    for alpha in (2.0, 20.0):
        res = K.smba(X, alpha, q=1, affine=True, tol=1e-12, max_iter=50000, keep_coef=True)
        np.testing.assert_allclose(res.coef, np.eye(20), atol=1e-6)


@pytest.mark.parametrize("scale", ["dual", "smba_code"])
@pytest.mark.parametrize("q", [1, 2])
def test_lambda_at_or_above_lambda_max_gives_zero(q, scale):
    """Reference: closed form. Without the affine constraint C = 0 is optimal iff lambda >= the
    dual-norm threshold (the 'dual' scale); any larger lambda (the 'smba_code' scale for q = 1
    is larger) also gives C = 0."""
    X = _data(12, 30, seed=5)
    for alpha in (1.0, 0.5):
        res = K.smba(X, alpha, q=q, affine=False, lambda_scale=scale, tol=1e-10, keep_coef=True)
        assert res.converged
        assert not res.coef.any()
        assert not res.row_norms.any()
    # just below the (dual) threshold the solution is not zero
    thr = K.lambda_max(X, q, False, "dual")
    lmax = K.lambda_max(X, q, False, scale)
    res = K.smba(X, 1.02 * lmax / thr, q=q, affine=False, lambda_scale=scale, tol=1e-10,
                 keep_coef=True)
    assert res.row_norms.max() > 0


def test_smba_code_scale_pitfall_with_l1():
    """Reference: spec A.3. With q = 1 and the authors' l2 scale, lambda = lambda_max^(2)/alpha
    >= max_j ||x_j||^2 (the true threshold), i.e. C == 0, whenever alpha <= the ratio."""
    X = _data(8, 60, seed=6)
    ratio = K.lambda_max(X, 2, False) / K.lambda_max(X, 1, False)
    assert ratio > 2
    below = K.smba(X, 0.98 * ratio, q=1, affine=False, lambda_scale="smba_code", tol=1e-10)
    assert not below.row_norms.any()
    above = K.smba(X, 1.05 * ratio, q=1, affine=False, lambda_scale="smba_code", tol=1e-10)
    assert 0 < np.count_nonzero(above.row_norms) < 60
    dual = K.smba(X, 0.98 * ratio, q=1, affine=False, lambda_scale="dual", tol=1e-10)
    assert np.count_nonzero(dual.row_norms) > 0


@pytest.mark.parametrize(("q", "affine"), VARIANTS)
@pytest.mark.parametrize("scale", ["dual", "smba_code"])
def test_lambda_max_matches_dense_formulas(q, affine, scale):
    """Reference: the formulas evaluated on the formed P = X^T X (or X^T R0 when affine)."""
    X = _data(9, 23, seed=7)
    R = X - X.mean(axis=1, keepdims=True) if affine else X
    A = X.T @ R
    expected = (np.linalg.norm(A, axis=1).max() if (q == 2 or scale == "smba_code")
                else np.abs(A).max())
    assert K.lambda_max(X, q, affine, scale) == pytest.approx(expected, rel=1e-12)
    if not affine and q == 1 and scale == "dual":
        assert expected == pytest.approx((X ** 2).sum(axis=0).max(), rel=1e-12)


def test_lambda_max_affine_q2_is_gradient_norm_at_mean_point():
    """Reference: the loss gradient at C0 = 11^T / M is -X^T (X - X C0)."""
    X = _data(9, 23, seed=8)
    C0 = np.full((23, 23), 1 / 23)
    grad = X.T @ (X - X @ C0)
    assert K.lambda_max(X, 2, True) == pytest.approx(np.linalg.norm(grad, axis=1).max())


@pytest.mark.parametrize("affine", [False, True])
def test_column_blocks_equal_full_run(affine):
    """Reference: the full (one block) run. With a fixed iteration count (tol = 0) the blocked
    iterates are those of the full run; with per-block stopping they agree to ~tol."""
    X = _data(10, 37, seed=9)
    alpha = 6.0
    lmax = K.lambda_max(X, 1, affine)
    mu1, mu2 = alpha / lmax, alpha
    U, QinvUt = K.woodbury_factors(X, mu1, mu2, affine)
    full = K.admm_l1_columns(U, QinvUt, mu2, slice(None), affine=affine, tol=0.0, max_iter=80,
                             keep_coef=True)
    parts = []
    for cols in (np.arange(0, 37, 3), np.setdiff1d(np.arange(37), np.arange(0, 37, 3))):
        part = K.admm_l1_columns(U, QinvUt, mu2, cols, affine=affine, tol=0.0, max_iter=80,
                                 keep_coef=True)
        C = np.zeros((37, 37))
        C[:, cols] = part.coef
        parts.append((cols, part, C))
    C_blocks = parts[0][2] + parts[1][2]
    np.testing.assert_allclose(C_blocks, full.coef, atol=1e-12)
    np.testing.assert_allclose(parts[0][1].row_abs + parts[1][1].row_abs, full.row_abs,
                               atol=1e-12)
    np.testing.assert_allclose(np.maximum(parts[0][1].row_dual, parts[1][1].row_dual),
                               full.row_dual, atol=1e-12)
    # the driver with per-block stopping
    one = K.smba(X, alpha, q=1, affine=affine, tol=1e-11, max_iter=50000, keep_coef=True)
    blk = K.smba(X, alpha, q=1, affine=affine, tol=1e-11, max_iter=50000, keep_coef=True,
                 block_size=5)
    assert one.converged and blk.converged
    atol = 1e-5 if affine else 1e-7  # l1 + affine (C = I) converges slowly in C itself
    np.testing.assert_allclose(blk.coef, one.coef, atol=atol)
    np.testing.assert_allclose(blk.row_norms, one.row_norms, atol=10 * atol)
    assert blk.err1.shape == (blk.n_iter,)
    assert blk.err1[-1] <= 1e-11


def test_history_and_max_iter():
    """Reference: the stopping rule of spec A.4 (at most max_iter iterations, err1 recorded)."""
    X = _data(12, 30, seed=10)
    res = K.smba(X, 10.0, q=2, affine=True, tol=1e-8, max_iter=5)
    assert res.n_iter == 5 and not res.converged
    assert res.err1.shape == res.err2.shape == (5,)
    done = K.smba(X, 10.0, q=2, affine=True, tol=1e-8)
    assert done.converged and done.err1[-1] <= 1e-8 and done.err2[-1] <= 1e-8


def test_dual_certificate_bounds_zero_rows():
    """Reference: the prox definition. A row is zero iff ||v^i||_{q*} <= 1/mu2, and for q = 2 the
    row norm is ||v^i|| - 1/mu2."""
    X = _data(12, 40, seed=11)
    for q in (1, 2):
        res = K.smba(X, 4.0, q=q, affine=False, tol=1e-10)
        zero = res.row_norms == 0
        assert zero.any() and (~zero).any()
        assert np.all(res.dual[zero] <= 1.0 / res.mu2 + 1e-15)
        assert np.all(res.dual[~zero] > 1.0 / res.mu2)
        if q == 2:
            np.testing.assert_allclose(res.row_norms[~zero], res.dual[~zero] - 1 / res.mu2,
                                       rtol=1e-10)


def test_prox_operators():
    """Reference: the textbook formulas of the prox of t||.||_1 and t||.||_2 (rows)."""
    V = np.random.default_rng(12).standard_normal((6, 5))
    t = 0.7
    np.testing.assert_allclose(K.prox_l1(V, t), np.sign(V) * np.maximum(np.abs(V) - t, 0))
    out, norms = K.prox_l12_rows(V, t)
    nr = np.linalg.norm(V, axis=1)
    np.testing.assert_allclose(norms, nr)
    np.testing.assert_allclose(out, V * np.maximum(1 - t / nr, 0)[:, None])
    zero, _ = K.prox_l12_rows(np.zeros((3, 2)), t)
    assert not zero.any() and not np.isnan(zero).any()


def test_representatives_prefix():
    """Reference: the definition (shortest prefix reaching eta * total, crossing index kept)."""
    r = np.array([0.0, 5.0, 3.0, 2.0, 0.0])
    order = np.array([1, 2, 3, 0, 4])
    assert K.representatives_prefix(r, order, 0.5).tolist() == [1]
    assert K.representatives_prefix(r, order, 0.51).tolist() == [1, 2]
    assert K.representatives_prefix(r, order, 0.8).tolist() == [1, 2]
    assert K.representatives_prefix(r, order, 0.81).tolist() == [1, 2, 3]
    assert K.representatives_prefix(r, order, 1.0).tolist() == [1, 2, 3]
    assert K.representatives_prefix(np.zeros(5), order, 0.9).size == 0


def test_zero_data():
    """Reference: closed form (X = 0: lambda_max = 0, C = 0 without the affine constraint)."""
    res = K.smba(np.zeros((4, 6)), 10.0, q=2, affine=False, keep_coef=True)
    assert res.converged and not res.coef.any() and res.lambda_max == 0.0


@pytest.mark.parametrize("affine", [False, True])
def test_working_set_equals_full_admm(affine):
    """Reference: the full Woodbury ADMM (itself checked against the naive dense ADMM above)
    and the KKT conditions; a low-rank problem with few non-zero rows at a small alpha, the
    working set starting far too small (5 rows) so that it must grow."""
    rng = np.random.default_rng(13)
    X = rng.standard_normal((12, 3)) @ rng.standard_normal((3, 80))
    X += 0.3 * rng.standard_normal((12, 80))
    lam = K.lambda_max(X, 2, affine) / 4.0
    full = K.smba(X, 4.0, q=2, affine=affine, tol=1e-12, max_iter=50000, keep_coef=True)
    ws = K.smba(X, 4.0, q=2, affine=affine, tol=1e-12, max_iter=50000, keep_coef=True,
                solver="working_set")
    direct = K.smba_working_set(X, lam, 4.0, affine=affine, tol=1e-12, max_iter=50000,
                                initial_size=5)
    assert full.converged and ws.converged and direct["converged"]
    assert direct["n_outer"] >= 2 and direct["rows"].size < 80
    np.testing.assert_allclose(ws.coef, full.coef, atol=1e-6)
    np.testing.assert_allclose(ws.row_norms, full.row_norms, atol=1e-5)
    zero = full.row_norms == 0
    np.testing.assert_allclose(ws.dual[zero], full.dual[zero], atol=1e-5)
    assert kkt_residual(X, ws.coef, lam, 2, affine) < 1e-5


@pytest.mark.parametrize("q", [1, 2])
def test_zero_solution_shortcut_is_the_admm_fixed_point(q):
    """Reference: the ADMM itself (run from the same start with the shortcut bypassed through
    admm_woodbury): above the threshold it converges to C = 0 and its dual certificate to
    (mu1/mu2) ||P_i||_{q*}, which the shortcut returns without iterating."""
    X = _data(10, 30, seed=14)
    res = K.smba(X, 0.8, q=q, affine=False, lambda_scale="dual", tol=1e-12, keep_coef=True)
    assert res.n_iter == 0 and not res.coef.any()
    admm = K.admm_woodbury(X, res.mu1, res.mu2, q=q, affine=False, tol=1e-14, max_iter=20000)
    assert not admm["coef"].any()
    np.testing.assert_allclose(res.dual, admm["dual"], rtol=1e-6)


# --------------------------------------------------------------------------------------------
# the exact reduced solver (solver="group_lasso")
# --------------------------------------------------------------------------------------------

GL_CASES = [(12, 30, 3.0), (12, 30, 8.0), (12, 30, 20.0), (10, 60, 5.0)]


def _low_rank_data(n=12, M=40, rank=3, seed=21):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, rank)) @ rng.standard_normal((rank, M))


@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize(("n", "M", "alpha"), GL_CASES)
def test_group_lasso_equals_admm_at_tight_tol(affine, n, M, alpha):
    """Reference: the Woodbury ADMM (itself = the naive dense ADMM above) run to tol 1e-13.
    Same C and row norms to 1e-6 relative, the same support and the same order of the
    non-zero rows; the dual certificate of the zero rows (the tie-break) equal to 1e-6."""
    X = _data(n, M, seed=100 + n + M + int(alpha))
    ref = K.smba(X, alpha, q=2, affine=affine, tol=1e-13, max_iter=300000, keep_coef=True)
    gl = K.smba(X, alpha, q=2, affine=affine, tol=1e-14, max_iter=100000, keep_coef=True,
                solver="group_lasso")
    assert ref.converged and gl.converged and gl.solver == "group_lasso"
    scale = ref.row_norms.max()
    np.testing.assert_allclose(gl.row_norms, ref.row_norms, atol=1e-6 * scale, rtol=0)
    np.testing.assert_allclose(gl.coef, ref.coef, atol=1e-6 * scale, rtol=0)
    nz = ref.row_norms > 1e-6 * scale
    np.testing.assert_array_equal(gl.row_norms > 0, ref.row_norms > 0)
    order_ref = np.argsort(-ref.row_norms[nz], kind="stable")
    order_gl = np.argsort(-gl.row_norms[nz], kind="stable")
    gaps_ref = np.diff(np.sort(ref.row_norms[nz]))
    if gaps_ref.size == 0 or gaps_ref.min() > 1e-5 * scale:
        np.testing.assert_array_equal(order_gl, order_ref)
    np.testing.assert_allclose(gl.dual, ref.dual, atol=1e-6 * max(1.0, ref.dual.max()))
    assert gl.gap[-1] <= 1e-14 and gl.err1.size == gl.n_iter


@pytest.mark.parametrize("affine", [False, True])
def test_group_lasso_low_rank_equals_admm(affine):
    """Reference: the Woodbury ADMM at tol 1e-13 on rank-3 data (the rank cutoff of the
    reduction drops the zero singular values)."""
    X = _low_rank_data()
    ref = K.smba(X, 4.0, q=2, affine=affine, tol=1e-13, max_iter=300000, keep_coef=True)
    gl = K.smba(X, 4.0, q=2, affine=affine, tol=1e-14, max_iter=100000, keep_coef=True,
                solver="group_lasso")
    assert ref.converged and gl.converged
    red = K.reduce_smba(X - X.mean(axis=1, keepdims=True) if affine else X, False)
    assert red["At"].shape[1] == 3
    np.testing.assert_allclose(gl.row_norms, ref.row_norms, atol=1e-6 * ref.row_norms.max())


def test_group_lasso_equals_sklearn_multitask_lasso_full_problem():
    """Reference: scikit-learn's MultiTaskLasso on the full non-affine problem (design X,
    targets X, W = C): its objective (1/(2n))||Y - XW||^2 + a sum_i ||w^i|| is ours / n with
    a = lambda / n."""
    from sklearn.linear_model import MultiTaskLasso

    X = _data(12, 30, seed=31)
    n = X.shape[0]
    for alpha in (3.0, 10.0):
        gl = K.smba(X, alpha, q=2, affine=False, tol=1e-14, max_iter=100000, keep_coef=True,
                    solver="group_lasso")
        mtl = MultiTaskLasso(alpha=gl.lambda_ / n, fit_intercept=False, tol=1e-14,
                             max_iter=1_000_000).fit(X, X)
        np.testing.assert_allclose(gl.coef, mtl.coef_.T, atol=1e-7)


def test_group_lasso_bcd_equals_sklearn_multitask_lasso_reduced():
    """Reference: scikit-learn's MultiTaskLasso on the reduced problem (design A = S V^T with
    r samples, targets S): alpha = lambda / r. Exercises the coordinate-descent stage alone."""
    from sklearn.linear_model import MultiTaskLasso

    X = _data(10, 40, seed=32)
    red = K.reduce_smba(X, False)
    At, T = red["At"], red["T"]
    r = At.shape[1]
    lam = K.lambda_max(X, 2, False) / 6.0
    out = K.group_lasso_bcd(At, T, lam, tol=1e-14 * red["scale"], max_sweeps=100000)
    assert out["converged"]
    mtl = MultiTaskLasso(alpha=lam / r, fit_intercept=False, tol=1e-14,
                         max_iter=1_000_000).fit(At.T, T)
    np.testing.assert_allclose(out["coef"], mtl.coef_.T, atol=1e-8)
    # the same C as the full solver
    full = K.smba_group_lasso(X, lam, affine=False, tol=1e-14, max_iter=100000)
    np.testing.assert_allclose(out["coef"] @ red["W"].T, full["B"] @ full["W"].T, atol=1e-8)


@pytest.mark.parametrize("affine", [False, True])
def test_group_lasso_kkt_of_the_full_problem(affine):
    """Reference: the optimality conditions of the full problem at the returned C, with the
    returned affine multiplier nu: H = X^T(X - XC) - 1 nu^T equals lambda c^i/||c^i|| on the
    non-zero rows and has ||H_i|| <= lambda on the zero rows; the constraint 1^T C = 1^T holds.
    Also kkt_residual above (nu estimated independently)."""
    X = _data(15, 50, seed=33)
    res = K.smba(X, 6.0, q=2, affine=affine, tol=1e-14, max_iter=100000, keep_coef=True,
                 solver="group_lasso")
    assert res.converged
    C, lam = res.coef, res.lambda_
    H = X.T @ (X - X @ C) - res.nu[None, :]
    rn = np.linalg.norm(C, axis=1)
    nz = rn > 0
    assert nz.any() and (~nz).any()
    assert np.abs(H[nz] - lam * C[nz] / rn[nz, None]).max() / lam < 1e-8
    assert np.linalg.norm(H[~nz], axis=1).max() <= lam * (1 + 1e-8)
    assert kkt_residual(X, C, lam, 2, affine) < 1e-8
    if affine:
        np.testing.assert_allclose(C.sum(axis=0), 1.0, atol=1e-10)
    else:
        assert not res.nu.any()


def test_group_lasso_affine_constraint_at_default_tol():
    """Reference: the constraint itself; stage 1 meets it exactly (to rounding), the polish
    to tol, at the default tolerance."""
    X = _data(15, 40, seed=34)
    res = K.smba(X, 10.0, q=2, affine=True, keep_coef=True, solver="group_lasso")
    assert res.converged and res.gap[-1] <= 1e-8
    np.testing.assert_allclose(res.coef.sum(axis=0), 1.0, atol=1e-8)


def test_group_lasso_zero_above_lambda_max():
    """Reference: closed form. Non-affine, lambda >= lambda_max: C = 0 (the driver certifies it
    without iterating; the solver called directly reaches C = 0 up to its gap tolerance)."""
    X = _data(12, 30, seed=35)
    for alpha in (1.0, 0.5):
        res = K.smba(X, alpha, q=2, affine=False, keep_coef=True, solver="group_lasso")
        assert res.converged and not res.coef.any() and res.n_iter == 0
    lmax = K.lambda_max(X, 2, False)
    out = K.smba_group_lasso(X, 1.001 * lmax, affine=False, tol=1e-14)
    assert out["converged"]
    assert out["row_norms"].max() <= 1e-6
    below = K.smba_group_lasso(X, 0.98 * lmax, affine=False, tol=1e-12)
    assert below["row_norms"].max() > 0


def test_group_lasso_rejects_q1():
    """Reference: the documented restriction (q = 2 only)."""
    with pytest.raises(ValueError, match="group_lasso"):
        K.smba(_data(), 5.0, q=1, affine=False, solver="group_lasso")


def test_group_lasso_has_no_square_arrays_without_keep_coef():
    """Reference: the design. Without keep_coef nothing M x M is returned, and the reduced
    arrays are M x k with k <= n + 1."""
    X = _data(8, 200, seed=36)
    out = K.smba_group_lasso(X, K.lambda_max(X, 2, True) / 10, affine=True, tol=1e-8)
    assert out["B"].shape[1] <= 9 and out["W"].shape == out["B"].shape
    res = K.smba(X, 10.0, q=2, affine=True, solver="group_lasso")
    assert res.coef is None and res.converged


def test_duplicate_groups_and_merge_keep_the_loss_and_lower_the_penalty():
    """Reference: the merge-and-split argument, checked numerically on an arbitrary C. With
    features 1 = 4 = 6 and 2 = 7 of X, replacing the copies' rows of C by their mean leaves XC
    (the loss) unchanged to rounding and the column sums (the affine constraint) exactly as
    they were, and does not raise sum_i ||c^i||_q for q = 1, 2; the groups are found exactly
    (-0.0 equals 0.0, a one-ulp change makes a column distinct)."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((6, 8))
    X[:, 4] = X[:, 1]
    X[:, 6] = X[:, 1]
    X[:, 7] = X[:, 2]
    inverse, counts = duplicate_partition(X)
    assert inverse[1] == inverse[4] == inverse[6] and inverse[2] == inverse[7]
    assert len(set(inverse.tolist())) == 5 and counts.sum() == 8
    Y = X.copy()
    Y[0, 7] = np.nextafter(Y[0, 7], np.inf)
    inv_y, _ = duplicate_partition(Y)
    assert inv_y[2] != inv_y[7]
    assert duplicate_partition(rng.standard_normal((6, 8))) is None
    inv_z, counts_z = duplicate_partition(np.array([[0.0, -0.0], [1.0, 1.0]]))
    assert inv_z[0] == inv_z[1] and counts_z.tolist() == [2]
    C = rng.standard_normal((8, 8))
    Cm = K.merge_duplicate_rows(C, (inverse, counts))
    np.testing.assert_array_equal(Cm[1], Cm[4])
    np.testing.assert_array_equal(Cm[1], Cm[6])
    np.testing.assert_array_equal(Cm[2], Cm[7])
    np.testing.assert_array_equal(Cm[[0, 3, 5]], C[[0, 3, 5]])
    np.testing.assert_allclose(X @ Cm, X @ C, atol=1e-12)
    np.testing.assert_allclose(Cm.sum(axis=0), C.sum(axis=0), atol=1e-12)
    for q in (1, 2):
        assert (np.linalg.norm(Cm, ord=q, axis=1).sum()
                <= np.linalg.norm(C, ord=q, axis=1).sum() + 1e-12)


# ------------------------------------------------------------------ eta stage (issue #33)


def _reduced_affine(X, alpha=2.0):
    red = K.reduce_smba(X, True)
    At = red["At"]
    M, r = At.shape
    Ap = np.empty((M, r + 1))
    Ap[:, :r] = At
    Ap[:, r] = 1.0
    Tp = np.vstack([red["T"], red["wbar"][None, :]])
    e = np.r_[np.ones(r), 0.0]
    lam = K.lambda_max(X, 2, True, "dual") / alpha
    return Ap, Tp, e, r, lam, red["scale"]


def test_eta_hessian_equals_finite_differences_of_the_gradient():
    """Reference: central finite differences of the analytic gradient of F(eta) (itself the
    independent formula 0.5 (lambda - ||g_i||^2 / lambda)). The Newton phase's Hessian
    (A' H^-1 A'^T) o (G G^T) / lambda^2 agrees to 1e-5 relative on the free variables."""
    from scipy.linalg import solve_triangular

    from sparsefs._kernels import threads

    rng = np.random.default_rng(3)
    X = rng.standard_normal((12, 30))
    Ap, Tp, e, p, lam, _ = _reduced_affine(X)
    eta = rng.uniform(0.05, 1.0, Ap.shape[0])
    h = 1e-6
    with threads.applied(threads.plan(0.0)):
        _, _, _, G, chol, _, _ = KR._eta_eval(Ap, Tp, e, p, lam, eta)
        Z = solve_triangular(chol[0], Ap.T, lower=True)
        hess = (Z.T @ Z) * (G @ G.T) / lam**2
        fd = np.empty_like(hess)
        for j in range(Ap.shape[0]):
            up, dn = eta.copy(), eta.copy()
            up[j] += h
            dn[j] -= h
            fd[:, j] = (KR._eta_eval(Ap, Tp, e, p, lam, up)[1]
                        - KR._eta_eval(Ap, Tp, e, p, lam, dn)[1]) / (2 * h)
    np.testing.assert_allclose(hess, fd, rtol=1e-5, atol=1e-6 * np.abs(hess).max())


def test_eta_stage_newton_reaches_the_gap_in_bounded_evaluations(monkeypatch):
    """Reference: the former solver (L-BFGS-B alone: ``ETA_LBFGS_EVALS`` never reached) on the
    same reduced problem, sparse non-negative data like term counts, z-scored. Both reach the
    relative duality gap 1e-8; the L-BFGS-B + projected Newton stage needs at most a third of
    the evaluations (measured here 43 against 154; 83 against 863 at 150 x 3165) and returns
    the same row norms to 1e-3 of the largest (the solution is exact to the gap: both are
    optimal). One BLAS thread, as the estimator runs it (threaded tiny products on a loaded
    machine take 100x longer)."""
    from sparsefs._kernels import threads

    rng = np.random.default_rng(0)
    X = (rng.random((40, 300)) < 0.08) * rng.integers(1, 5, (40, 300)).astype(float)
    X = X[:, X.std(axis=0) > 0]
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    Ap, Tp, e, p, lam, scale = _reduced_affine(X)
    with threads.applied(threads.plan(0.0)):
        new = KR._eta_stage(Ap, Tp, e, p, lam, scale, 1e-8 * scale, 5000, [])
        monkeypatch.setattr(KR, "ETA_LBFGS_EVALS", 10**9)
        old = KR._eta_stage(Ap, Tp, e, p, lam, scale, 1e-8 * scale, 5000, [])
    assert new[4] <= 1e-8 * scale and old[4] <= 1e-8 * scale
    assert new[5] * 3 <= old[5], (new[5], old[5])
    rn_new = np.linalg.norm(new[1], axis=1)
    rn_old = np.linalg.norm(old[1], axis=1)
    assert np.abs(rn_new - rn_old).max() <= 1e-3 * rn_old.max()
