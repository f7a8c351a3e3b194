"""Tests of sparsefs.selection.SMBA.

Independent references, named in each test: scikit-learn's Lasso (q = 1 columns), the kernel's
closed forms (C = 0 above the threshold), the definitions of the tie-break orders (a lexsort /
numpy's argsort written here), scale equivariance of the problem, and the spec's pitfall
(authors' lambda scale with q = 1). The kernel itself is tested against a naive dense ADMM in
sparsefs/_kernels/tests/test_smba.py.
"""

import warnings

import numpy as np
import pytest
from sklearn.linear_model import Lasso

from sparsefs._kernels import smba as K
from sparsefs.datasets import fetch_asu
from sparsefs.datasets._asu import shared_data_dir
from sparsefs.exceptions import ConvergenceWarning, NoFeatureSelectedWarning
from sparsefs.selection import SMBA

VARIANTS = [
    {"penalty": "l1,2", "affine": True},
    {"penalty": "l1,2", "affine": False},
    {"penalty": "l1", "affine": False},
    {"penalty": "l1", "affine": True},
]


def _data(n=15, M=40, seed=0):
    return np.random.default_rng(seed).standard_normal((n, M))


def _low_rank(n=20, M=30, rank=3, seed=0):
    rng = np.random.default_rng(seed)
    basis = rng.standard_normal((n, rank))
    return np.hstack([basis, basis @ rng.uniform(0.2, 1.0, (rank, M - rank))])


@pytest.mark.parametrize("params", VARIANTS, ids=lambda p: f"{p['penalty']}-{p['affine']}")
def test_attributes_and_contract(params):
    """Reference: the documented attribute definitions (row norms of C with the penalty's q,
    the eta prefix, the dual-tie-break score formula)."""
    X = _data()
    est = SMBA(alpha=6, tol=1e-9, **params).fit(X)
    q = 1 if params["penalty"] == "l1" else 2
    C = est.coef_
    assert C.shape == (40, 40)
    np.testing.assert_allclose(est.row_norms_, np.linalg.norm(C, ord=q, axis=1), rtol=1e-12)
    assert est.converged_ and est.n_iter_ == est.history_["err1"].size
    assert est.history_["err1"][-1] <= 1e-9
    assert est.lambda_ == pytest.approx(est.lambda_max_ / 6)
    t = 1 / 6
    expected = np.where(est.row_norms_ > 0, est.row_norms_, est.dual_scores_ - t)
    np.testing.assert_allclose(est.scores_, expected)
    # representatives: the shortest prefix of the ranking reaching eta of the total
    order = np.argsort(est.ranking_)
    cum = np.cumsum(est.row_norms_[order])
    k = est.representatives_.size
    assert cum[k - 1] >= 0.99 * cum[-1] and (k == 1 or cum[k - 2] < 0.99 * cum[-1])
    np.testing.assert_array_equal(est.representatives_, order[:k])
    assert est.n_features_to_select_ == k
    np.testing.assert_array_equal(np.flatnonzero(est.support_), np.sort(order[:k]))


def test_l1_coef_columns_are_lasso():
    """Reference: scikit-learn Lasso without intercept, alpha = lambda / n, per column."""
    X = _data(20, 25, seed=3)
    est = SMBA(alpha=8, penalty="l1", affine=False, tol=1e-12, max_iter=20000).fit(X)
    for j in range(25):
        ref = Lasso(alpha=est.lambda_ / 20, fit_intercept=False, tol=1e-14, max_iter=100000)
        np.testing.assert_allclose(est.coef_[:, j], ref.fit(X, X[:, j]).coef_, atol=1e-7)


def test_representatives_of_a_low_rank_set():
    """Reference: construction. Three features span the others with positive weights; the
    l1,2 affine default picks at most a handful of representatives, including a basis feature
    (the row-sparse solution uses the basis)."""
    X = _low_rank()
    est = SMBA(alpha=5).fit(X)
    assert est.converged_
    assert 1 <= est.representatives_.size <= 6
    assert np.count_nonzero(est.row_norms_) < 30


def test_tie_break_dual_is_lexsort_of_norms_and_certificate():
    """Reference: the definition, a lexsort by (-r, -s, index) written here."""
    X = _data(10, 60, seed=4)
    est = SMBA(alpha=3, penalty="l1", affine=False, tol=1e-10).fit(X)
    r, s = est.row_norms_, est.dual_scores_
    assert (r == 0).sum() > 10
    order = np.lexsort((np.arange(60), -s, -r))
    np.testing.assert_array_equal(np.argsort(est.ranking_), order)


def test_tie_break_index_and_numpy():
    """Reference: the definitions: 'index' is a stable sort of -r; 'numpy' is the authors'
    np.argsort(r)[::-1]."""
    X = _data(10, 60, seed=4)
    base = {"alpha": 3, "penalty": "l1", "affine": False, "tol": 1e-10}
    idx = SMBA(tie_break="index", **base).fit(X)
    np.testing.assert_array_equal(np.argsort(idx.ranking_),
                                  np.argsort(-idx.row_norms_, kind="stable"))
    npy = SMBA(tie_break="numpy", **base).fit(X)
    np.testing.assert_array_equal(np.argsort(npy.ranking_), np.argsort(npy.row_norms_)[::-1])
    np.testing.assert_array_equal(npy.row_norms_, idx.row_norms_)


@pytest.mark.parametrize("tie_break", ["dual", "index", "numpy"])
def test_tie_break_is_deterministic(tie_break):
    """Reference: two fits of the same data agree exactly (no randomness anywhere)."""
    X = _data(10, 50, seed=5)
    a = SMBA(alpha=4, tie_break=tie_break).fit(X)
    b = SMBA(alpha=4, tie_break=tie_break).fit(X.copy())
    np.testing.assert_array_equal(a.ranking_, b.ranking_)
    np.testing.assert_array_equal(a.scores_, b.scores_)


def test_authors_scale_pitfall_zero_coef():
    """Reference: spec A.3. penalty='l1' with the 'smba_code' scale gives C == 0 whenever
    alpha <= max_i ||X^T x_i|| / max_j ||x_j||^2; the representatives are then empty (warned),
    and the ranking is pure tie order. The 'dual' scale at the same alpha does select."""
    X = _data(8, 60, seed=6)
    ratio = K.lambda_max(X, 2, False) / K.lambda_max(X, 1, False)
    params = {"alpha": 0.95 * ratio, "penalty": "l1", "affine": False,
              "lambda_scale": "smba_code", "tie_break": "index"}
    with pytest.warns(NoFeatureSelectedWarning):
        est = SMBA(**params).fit(X)
    assert not est.coef_.any() and est.representatives_.size == 0
    np.testing.assert_array_equal(est.ranking_, np.arange(1, 61))
    fixed = SMBA(**params, n_features_to_select=5).fit(X)
    assert fixed.support_[:5].all()  # tie order = index order
    dual = SMBA(**{**params, "lambda_scale": "dual"}).fit(X)
    assert dual.representatives_.size > 0


@pytest.mark.parametrize("center", [False, True])
@pytest.mark.parametrize("params", VARIANTS, ids=lambda p: f"{p['penalty']}-{p['affine']}")
def test_constant_and_zero_columns_rank_last(params, center):
    """Reference: the documented rule (constant features are removed, score -inf); the other
    features get the scores of the fit without them."""
    X = _data(12, 20, seed=7)
    Xc = np.column_stack([X[:, :5], np.zeros(12), X[:, 5:], np.full(12, 3.0)])
    est = SMBA(alpha=5, center=center, tol=1e-9, **params).fit(Xc)
    ref = SMBA(alpha=5, center=center, tol=1e-9, **params).fit(X)
    assert np.isneginf(est.scores_[[5, 21]]).all()
    assert set(est.ranking_[[5, 21]]) == {21, 22}
    np.testing.assert_allclose(np.delete(est.scores_, [5, 21]), ref.scores_, rtol=1e-10,
                               atol=1e-12)
    assert not est.coef_[[5, 21]].any() and not est.coef_[:, [5, 21]].any()


@pytest.mark.parametrize("factor", [1e300, 1e-300, 3.0])
def test_scale_invariance(factor):
    """Reference: C is invariant to X -> cX (lambda_max scales with c^2), so the scores are
    those of the unscaled data; lambda_ scales with c^2."""
    X = _data(12, 25, seed=8)
    ref = SMBA(alpha=5, tol=1e-10).fit(X)
    est = SMBA(alpha=5, tol=1e-10).fit(X * factor)
    np.testing.assert_allclose(est.scores_, ref.scores_, rtol=1e-6, atol=1e-9)
    assert not np.isnan(est.scores_).any()
    if factor == 3.0:
        assert est.lambda_ == pytest.approx(9 * ref.lambda_)


def test_float32_input_is_computed_in_float64():
    """Reference: the float64 fit of the same (float32-rounded) values."""
    X = _data(12, 25, seed=9).astype(np.float32)
    a = SMBA(alpha=5).fit(X)
    b = SMBA(alpha=5).fit(X.astype(np.float64))
    np.testing.assert_array_equal(a.scores_, b.scores_)


def test_block_size_matches_single_block():
    """Reference: the single-block (full) run; per-block stopping differs by ~tol."""
    X = _data(12, 45, seed=10)
    one = SMBA(alpha=6, penalty="l1", affine=False, tol=1e-11, max_iter=20000).fit(X)
    blk = SMBA(alpha=6, penalty="l1", affine=False, tol=1e-11, max_iter=20000,
               block_size=7).fit(X)
    np.testing.assert_allclose(blk.row_norms_, one.row_norms_, atol=1e-7)
    np.testing.assert_array_equal(blk.ranking_[one.row_norms_ > 1e-6],
                                  one.ranking_[one.row_norms_ > 1e-6])


def test_keep_coef_and_convergence_warning():
    """Reference: the documented options."""
    X = _data(10, 30, seed=11)
    assert SMBA(keep_coef=False).fit(X).coef_ is None
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        est = SMBA(max_iter=3).fit(X)
    assert est.n_iter_ == 3 and not est.converged_
    with pytest.raises(ValueError, match="n_samples=1"):
        SMBA().fit(X[:1])


def test_y_is_ignored():
    """Reference: SMBA is unsupervised; labels change nothing."""
    X = _data(10, 30, seed=12)
    a = SMBA(alpha=5).fit(X)
    b = SMBA(alpha=5).fit(X, np.arange(10) % 2)
    np.testing.assert_array_equal(a.scores_, b.scores_)


@pytest.fixture(scope="module")
def lung():
    path = shared_data_dir()
    if path is None:
        pytest.skip("real data not available (set SPARSEFS_DATA or keep ../shared/data)")
    try:
        ds = fetch_asu("lung_discrete", data_home=path, download=False)
    except (FileNotFoundError, OSError) as exc:
        pytest.skip(f"lung_discrete not available: {exc}")
    return np.asarray(ds.X, dtype=np.float64), np.asarray(ds.y)


def test_lung_discrete_smoke(lung):
    """Reference: spec A.3/A.11. On every class block of LUNG_DISCRETE (73 x 325), the default
    SMBA converges within max_iter and selects a non-empty representative set; the authors'
    code variant (l1, no affine, their scale, alpha=10) has C == 0 or a handful of non-zero rows
    wherever alpha <= the scale ratio, as the spec reports."""
    X, y = lung
    for cls in np.unique(y)[:3]:
        Xk = X[y == cls]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            est = SMBA().fit(Xk)
        assert est.representatives_.size > 0
        assert np.isfinite(est.scores_[est.row_norms_ > 0]).all()
        code = SMBA(alpha=10, penalty="l1", affine=False, lambda_scale="smba_code",
                    tie_break="index", n_features_to_select=20).fit(Xk)
        varying = np.ptp(Xk, axis=0) > 0
        ratio = K.lambda_max(Xk[:, varying], 2, False) / K.lambda_max(Xk[:, varying], 1, False)
        if ratio >= 10:
            assert not code.row_norms_.any()
        else:
            assert 0 < np.count_nonzero(code.row_norms_) < 325


@pytest.mark.parametrize("affine", [False, True])
def test_working_set_solver_matches_admm(affine):
    """Reference: the full ADMM (solver='admm') at a tight tolerance; same ranking of the
    non-zero rows and the same representatives on a low-rank problem."""
    X = _low_rank(n=15, M=60, rank=4, seed=1) + 0.05 * _data(15, 60, seed=2)
    kw = {"alpha": 3, "affine": affine, "tol": 1e-11, "max_iter": 100000}
    full = SMBA(**kw).fit(X)
    ws = SMBA(solver="working_set", **kw).fit(X)
    assert full.converged_ and ws.converged_
    np.testing.assert_allclose(ws.row_norms_, full.row_norms_, atol=1e-5)
    np.testing.assert_array_equal(np.sort(ws.representatives_), np.sort(full.representatives_))
    assert ws.history_["err1"].size == ws.n_iter_


def test_default_solver_is_group_lasso_for_l12():
    """Reference: the documented 'auto' rule (group_lasso for l1,2, the ADMM for l1) and the
    restriction of group_lasso to l1,2."""
    X = _data(10, 30, seed=20)
    assert SMBA().fit(X).solver_ == "group_lasso"
    assert SMBA(penalty="l1", affine=False).fit(X).solver_ == "admm"
    est = SMBA(solver="group_lasso").fit(X)
    assert est.converged_ and est.history_["gap"][-1] <= 1e-8
    assert est.history_["gap"].size == est.n_iter_
    with pytest.raises(ValueError, match="group_lasso"):
        SMBA(solver="group_lasso", penalty="l1").fit(X)


@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("alpha", [3.0, 10.0])
def test_group_lasso_matches_admm_ranking(affine, alpha):
    """Reference: SMBA(solver='admm') at tol 1e-13 (the authors' iteration converged). Same
    row norms to 1e-6 relative, the same ranking of the non-zero rows, the same
    representatives, and the dual tie-break certificate of the zero rows equal to 1e-6."""
    X = _low_rank(n=15, M=60, rank=4, seed=3) + 0.1 * _data(15, 60, seed=4)
    admm = SMBA(alpha=alpha, affine=affine, solver="admm", tol=1e-13, max_iter=300000).fit(X)
    gl = SMBA(alpha=alpha, affine=affine, tol=1e-14, max_iter=100000).fit(X)
    assert admm.converged_ and gl.converged_ and gl.solver_ == "group_lasso"
    top = admm.row_norms_.max()
    np.testing.assert_allclose(gl.row_norms_, admm.row_norms_, atol=1e-6 * top, rtol=0)
    nz = admm.row_norms_ > 0
    np.testing.assert_array_equal(gl.row_norms_ > 0, nz)
    np.testing.assert_array_equal(gl.ranking_[nz], admm.ranking_[nz])
    np.testing.assert_array_equal(gl.representatives_, admm.representatives_)
    np.testing.assert_allclose(gl.dual_scores_[~nz], admm.dual_scores_[~nz], atol=1e-6)
    np.testing.assert_allclose(gl.scores_, admm.scores_, atol=1e-6 * max(top, 1.0))


def _objective(X, C, lam, q):
    """0.5 ||X - XC||_F^2 + lam sum_i ||c^i||_q, from scratch."""
    R = X - X @ C
    return 0.5 * float(np.sum(R * R)) + lam * float(np.linalg.norm(C, ord=q, axis=1).sum())


def _cvxpy_optimum(X, lam, q, affine):
    """The same problem by a generic conic solver (cvxpy + Clarabel, interior point)."""
    cp = pytest.importorskip("cvxpy")
    M = X.shape[1]
    C = cp.Variable((M, M))
    pen = cp.sum(cp.norm(C, 2, axis=1)) if q == 2 else cp.sum(cp.abs(C))
    cons = [cp.sum(C, axis=0) == 1] if affine else []
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(X - X @ C) + lam * pen), cons)
    prob.solve(solver=cp.CLARABEL)  # its default tolerances: gaps and feasibility 1e-8
    assert prob.status == "optimal", prob.status
    return float(prob.value)


CERT_CASES = [
    # (penalty, affine, solver, tol): the default solver at its default tol, and the ADMMs
    ("l1,2", True, "auto", 1e-8),
    ("l1,2", False, "auto", 1e-8),
    ("l1,2", True, "admm", 1e-11),
    ("l1,2", False, "admm", 1e-11),
    ("l1,2", True, "working_set", 1e-11),
    ("l1", False, "auto", 1e-11),
    ("l1", True, "auto", 1e-11),
]


@pytest.mark.parametrize(("penalty", "affine", "solver", "tol"), CERT_CASES)
@pytest.mark.parametrize(("n", "M", "alpha", "seed"),
                         [(8, 12, 5.0, 0), (6, 15, 10.0, 1), (15, 10, 2.0, 2)])
def test_objective_certified_by_a_generic_solver(penalty, affine, solver, tol, n, M, alpha,
                                                 seed):
    """Solver certificate (issue #16). Reference: an independent generic solver, cvxpy's
    Clarabel interior-point method on the same convex program; the objective of the returned
    ``coef_`` at ``lambda_``, computed from scratch, equals its optimum to 1e-6 relative, and
    C is feasible (affine: column sums 1 to 1e-6). Measured worst relative difference over
    these cases: 3e-9, within Clarabel's own 1e-8 accuracy."""
    X = np.random.default_rng(seed).standard_normal((n, M))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = SMBA(alpha=alpha, penalty=penalty, affine=affine, solver=solver, tol=tol,
                   max_iter=200000, keep_coef=True).fit(X)
    q = 1 if penalty == "l1" else 2
    ours = _objective(X, est.coef_, est.lambda_, q)
    ref = _cvxpy_optimum(X, est.lambda_, q, affine)
    assert abs(ours - ref) <= 1e-6 * abs(ref), (ours, ref, (ours - ref) / ref)
    if affine:
        np.testing.assert_allclose(est.coef_.sum(axis=0), 1.0, atol=1e-6)


DUP_VARIANTS = [
    {},
    {"affine": False},
    {"solver": "admm", "tol": 1e-9},
    {"solver": "working_set", "tol": 1e-9},
    {"solver": "working_set", "tol": 1e-9, "keep_coef": False},
    {"penalty": "l1", "affine": False},
    {"penalty": "l1", "affine": False, "block_size": 7},
    {"penalty": "l1", "affine": True},
    {"penalty": "l1", "affine": False, "lambda_scale": "smba_code", "tie_break": "index"},
    {"center": True},
    {"keep_coef": False},
]


@pytest.mark.parametrize("params", DUP_VARIANTS, ids=str)
def test_duplicated_columns_tie_exactly(params):
    """Contract (issue #16 item 5): exactly duplicated columns get exactly equal scores, the
    lower index first. Reference: the problem's symmetry - equal features can swap their rows
    of C, so the mean of the two rows is optimal too (merge and split: the loss is unchanged,
    the penalty does not rise). Several copies of columns at the front, middle and end of X
    (before the merge the group-lasso solver's copies differed by rounding, ~1e-15)."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((12, 25))
    src = [0, 9, 9, 24]
    Xd = np.hstack([X, X[:, src]])  # copies at 25, 26, 27, 28
    est = SMBA(alpha=4, **params).fit(Xd)
    for orig, copy in zip(src, range(25, 29), strict=True):
        assert est.scores_[orig] == est.scores_[copy]
        assert est.row_norms_[orig] == est.row_norms_[copy]
        assert est.ranking_[orig] < est.ranking_[copy]
    assert est.scores_[9] == est.scores_[26] == est.scores_[27]
    if est.coef_ is not None:
        np.testing.assert_array_equal(est.coef_[9], est.coef_[26])
        q = 1 if params.get("penalty") == "l1" else 2
        np.testing.assert_allclose(est.row_norms_, np.linalg.norm(est.coef_, ord=q, axis=1),
                                   rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_anchor_design_recovers_the_anchors_at_the_default(seed):
    """Issue #16 acceptance: SMBA's premise. 390 features are convex combinations (Dirichlet
    weights) of 10 anchor features, plus noise 0.05, columns shuffled; the anchors are the
    representatives. Reference: the construction. At the default parameters >= 9/10 anchors
    are in the top 10 (measured 10/10 on each seed) and among the representatives."""
    rng = np.random.default_rng(seed)
    n, a, M = 60, 10, 400
    A = rng.standard_normal((n, a))
    W = rng.dirichlet(np.full(a, 0.5), size=M - a).T
    X = np.hstack([A, A @ W]) + 0.05 * rng.standard_normal((n, M))
    perm = rng.permutation(M)
    X, anchors = X[:, perm], np.flatnonzero(perm < a)
    est = SMBA().fit(X)
    top = np.argsort(est.ranking_)[:10]
    assert len(set(top) & set(anchors)) >= 9
    assert len(set(est.representatives_) & set(anchors)) >= 9


# ------------------------------------------------------------------------------------------
# Sparse input (#18)
# ------------------------------------------------------------------------------------------


def _sparse_low_rank(seed=0):
    """Anchors and their convex combinations, 55 % of the entries zeroed, plus an all-zero and
    a constant column: sparse data with representative structure."""
    X = _low_rank(n=24, M=60, rank=4, seed=seed)
    X = X * (np.random.default_rng(seed + 7).random(X.shape) < 0.45)
    X[:, 10] = 0.0
    X[:, 11] = 1.5
    return X


@pytest.mark.parametrize("fmt", ["csr", "csc", "csr-float32"])
@pytest.mark.parametrize("params", [*VARIANTS, {"penalty": "l1,2", "affine": True,
                                                "center": True, "solver": "admm"}],
                         ids=lambda p: "-".join(str(v) for v in p.values()))
def test_sparse_fit_equals_the_dense_fit(params, fmt):
    """Reference: the dense fit of the same matrix (``X.toarray()``): the solvers need X's
    varying columns dense anyway (the M x (n+1) basis / Woodbury factor), so after the
    constant columns are dropped on the sparse matrix the result is the dense one exactly."""
    import scipy.sparse as sp

    dtype = np.float32 if fmt.endswith("float32") else np.float64
    X = _sparse_low_rank().astype(dtype)
    Xs = sp.csc_array(X) if fmt == "csc" else sp.csr_array(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        dense = SMBA(alpha=5, tol=1e-7, **params).fit(Xs.toarray())
        got = SMBA(alpha=5, tol=1e-7, **params).fit(Xs)
    np.testing.assert_array_equal(got.ranking_, dense.ranking_)
    np.testing.assert_array_equal(got.support_, dense.support_)
    np.testing.assert_array_equal(got.scores_, dense.scores_)
    np.testing.assert_array_equal(got.coef_, dense.coef_)
    assert got.scores_[10] == got.scores_[11] == -np.inf
    assert sp.issparse(got.transform(Xs))


def test_sparse_input_keeps_scale_invariance():
    """Issue #16's property on sparse input: 1e-300 X and 1e300 X (CSR) give the scores of the
    dense fit at scale 1 (reference: that fit), lambda_ scales with c^2."""
    import scipy.sparse as sp

    X = _sparse_low_rank(seed=3)
    ref = SMBA(alpha=5, tol=1e-10).fit(X)
    for c in (1e-300, 1e300, 3.0):
        est = SMBA(alpha=5, tol=1e-10).fit(sp.csr_array(X * c))
        np.testing.assert_allclose(est.scores_, ref.scores_, rtol=1e-6, atol=1e-9)
        np.testing.assert_array_equal(est.ranking_, ref.ranking_)
        assert not np.isnan(est.scores_).any()
    assert est.lambda_ == pytest.approx(9 * ref.lambda_)
