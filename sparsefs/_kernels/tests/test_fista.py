"""The compiled FISTA loop (sparsefs._kernels.fista) against the numpy loop it replaced.

Reference: ``group_lasso._fista_numpy``, the numpy loop (``engine="numpy"``), itself checked against
the KKT conditions computed from scratch (test_l21.py, test_lasso.py) and scikit-learn
(test_lasso.py). The two loops do the same arithmetic element by element and differ only in
the order of the sums inside the products, so their iterates agree to rounding (asserted to
1e-11 relative after hundreds of iterations) and they stop at the same iteration. Also: the
dispatch rules of ``engine="auto"`` (dense designs of the lasso / elastic net only; threaded
BLAS kept for products of at least MIN_BLAS_FLOPS when the plan gives BLAS threads).
"""

import numpy as np
import pytest
import scipy.sparse as sp

from sparsefs._kernels import fista as _fista_kernel
from sparsefs._kernels import group_lasso, l21
from sparsefs._kernels import threads as _threads
from sparsefs._kernels.elastic_net import ElasticNetPenalty
from sparsefs._kernels.group_lasso import GroupL21Penalty, LeastSquares, Multinomial
from sparsefs._kernels.l21 import prepare_design
from sparsefs.datasets import make_planted_classification
from sparsefs.selection import ElasticNetSelector, LassoSelector


def problem(n_classes, seed=0, n=50, m=14):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, size=n)
    X = rng.normal(size=(n, m))
    X[:, 3] += 1.5 * y
    X[:, 7] -= (y == 0)
    Y = np.eye(n_classes)[y]
    return prepare_design(X, center=True, standardize=True).X, Y


def run_loop(engine, X, Y, penalty, lam, W0, b0, **kw):
    history = []
    W, b, it, conv = group_lasso._fista(X, Y, Multinomial(), penalty, lam, W0, b0,
                                fit_intercept=True, history=history, engine=engine, **kw)
    return W, b, it, conv, np.asarray(history)


@pytest.mark.parametrize("n_classes", [2, 3, 5])
@pytest.mark.parametrize("l1_ratio", [1.0, 0.35])
@pytest.mark.parametrize("warm", [False, True])
def test_compiled_iterates_equal_numpy_loop(n_classes, l1_ratio, warm):
    """300 iterations that never stop (tol < 0): same W, b and objective history."""
    X, Y = problem(n_classes, seed=n_classes)
    rng = np.random.default_rng(1)
    m = X.shape[1]
    W0 = rng.normal(size=(m, n_classes)) * (rng.random((m, 1)) < 0.5) if warm else \
        np.zeros((m, n_classes))
    b0 = Multinomial().intercept_at_zero(Y)
    lam = 0.05
    penalty = ElasticNetPenalty(l1_ratio)
    W0_copy, b0_copy = W0.copy(), b0.copy()
    ref = run_loop("numpy", X, Y, penalty, lam, W0, b0, max_iter=300, tol_abs=-1.0)
    new = run_loop("compiled", X, Y, penalty, lam, W0, b0, max_iter=300, tol_abs=-1.0)
    assert ref[2] == new[2] == 300 and not ref[3] and not new[3]
    scale = np.abs(ref[0]).max()
    assert scale > 0 and (ref[0] == 0).any()  # a sparse, nonzero iterate
    np.testing.assert_allclose(new[0], ref[0], rtol=0, atol=1e-11 * scale)
    np.testing.assert_array_equal(new[0] == 0, ref[0] == 0)
    np.testing.assert_allclose(new[1], ref[1], rtol=0, atol=1e-11 * np.abs(ref[1]).max())
    assert new[4].shape == ref[4].shape == (30,)
    np.testing.assert_allclose(new[4], ref[4], rtol=1e-12)
    # the caller's start is not modified (the kernel updates its own copies in place)
    np.testing.assert_array_equal(W0, W0_copy)
    np.testing.assert_array_equal(b0, b0_copy)


@pytest.mark.parametrize("l1_ratio", [1.0, 0.5])
def test_compiled_stops_at_the_same_iteration(l1_ratio):
    """With a tolerance, both loops converge at the same check with the same point."""
    X, Y = problem(3, seed=7, n=60, m=20)
    b0 = Multinomial().intercept_at_zero(Y)
    W0 = np.zeros((X.shape[1], 3))
    penalty = ElasticNetPenalty(l1_ratio)
    ref = run_loop("numpy", X, Y, penalty, 0.03, W0, b0, max_iter=5000, tol_abs=1e-7)
    new = run_loop("compiled", X, Y, penalty, 0.03, W0, b0, max_iter=5000, tol_abs=1e-7)
    assert ref[3] and new[3] and ref[2] == new[2] and ref[2] % 10 == 0
    np.testing.assert_allclose(new[0], ref[0], rtol=0, atol=1e-11 * np.abs(ref[0]).max())
    # max_iter not a multiple of the check interval: the last iteration is checked too
    ref = run_loop("numpy", X, Y, penalty, 0.03, W0, b0, max_iter=23, tol_abs=1e-12)
    new = run_loop("compiled", X, Y, penalty, 0.03, W0, b0, max_iter=23, tol_abs=1e-12)
    assert ref[2] == new[2] == 23 and len(ref[4]) == len(new[4]) == 3
    np.testing.assert_allclose(new[4], ref[4], rtol=1e-12)


def _numpy_only(monkeypatch):
    fista = group_lasso._fista

    def numpy_fista(*args, **kwargs):
        kwargs["engine"] = "numpy"
        return fista(*args, **kwargs)

    monkeypatch.setattr(group_lasso, "_fista", numpy_fista)


@pytest.mark.parametrize("cls", [LassoSelector, ElasticNetSelector])
def test_selector_fit_equals_numpy_loop(cls, monkeypatch):
    """A whole path to 12 features (planted 80 x 300): same path, iterations, scores."""
    data = make_planted_classification(n_samples=80, n_features=300, n_informative=10,
                                       n_classes=3, random_state=2)
    new = cls(n_features_to_select=12).fit(data.X, data.y)
    _numpy_only(monkeypatch)
    ref = cls(n_features_to_select=12).fit(data.X, data.y)
    np.testing.assert_array_equal(new.support_, ref.support_)
    np.testing.assert_array_equal(new.alphas_, ref.alphas_)
    np.testing.assert_array_equal(new.n_nonzero_path_, ref.n_nonzero_path_)
    assert new.n_iter_ == ref.n_iter_ > 0
    np.testing.assert_allclose(new.coef_, ref.coef_, rtol=0, atol=1e-10 * np.abs(ref.coef_).max())
    fin = np.isfinite(ref.scores_)
    np.testing.assert_array_equal(fin, np.isfinite(new.scores_))
    np.testing.assert_allclose(new.scores_[fin], ref.scores_[fin], rtol=1e-9, atol=1e-12)


def test_engine_validation():
    X, Y = problem(3)
    W0, b0 = np.zeros((X.shape[1], 3)), np.zeros(3)
    with pytest.raises(ValueError, match="engine must be one of"):
        run_loop("fast", X, Y, ElasticNetPenalty(1.0), 0.1, W0, b0, max_iter=5, tol_abs=0.0)
    with pytest.raises(ValueError, match="compiled FISTA loop takes"):
        run_loop("compiled", X, Y, GroupL21Penalty(), 0.1, W0, b0, max_iter=5, tol_abs=0.0)
    with pytest.raises(ValueError, match="compiled FISTA loop takes"):
        run_loop("compiled", l21.CenteredSparse(sp.csr_array(X), np.zeros(X.shape[1])), Y,
                 ElasticNetPenalty(1.0), 0.1, W0, b0, max_iter=5, tol_abs=0.0)


def test_auto_dispatch(monkeypatch):
    """auto: compiled for the dense lasso / elastic net; numpy for sparse designs, other
    data fits and penalties, no intercept, and for products big enough for BLAS threads
    when the thread plan gives them."""
    X, _ = problem(3)
    enet, mult = ElasticNetPenalty(0.5), Multinomial()
    applies = group_lasso._compiled_applies
    assert applies(X, mult, enet, 3, True, "auto")
    assert not applies(X, mult, enet, 3, True, "numpy")
    assert not applies(X, mult, enet, 3, False, "auto")
    assert not applies(X, LeastSquares(), enet, 3, True, "auto")
    assert not applies(X, mult, GroupL21Penalty(), 3, True, "auto")
    Xs = l21.CenteredSparse(sp.csr_array(X), np.zeros(X.shape[1]))
    assert not applies(Xs, mult, enet, 3, True, "auto")
    flops = 2.0 * X.shape[0] * X.shape[1] * 3
    monkeypatch.setattr(_threads, "MIN_BLAS_FLOPS", flops)
    with _threads.applied(_threads.ThreadPlan(blas=2, pool=1)):
        assert not applies(X, mult, enet, 3, True, "auto")
        assert applies(X, mult, enet, 3, True, "compiled")
    with _threads.applied(_threads.ThreadPlan(blas=1, pool=1)):
        assert applies(X, mult, enet, 3, True, "auto")
    monkeypatch.setattr(_threads, "MIN_BLAS_FLOPS", flops * 1.01)
    with _threads.applied(_threads.ThreadPlan(blas=2, pool=1)):
        assert applies(X, mult, enet, 3, True, "auto")


def kkt_from_scratch(X, Y, W, b, lam, rho):
    """KKT residuals of the elastic-net multinomial problem (softmax written here): the
    largest over zero entries, over nonzero entries, and of the intercept."""
    Z = X @ W + b
    P = np.exp(Z - Z.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    R = (P - Y) / X.shape[0]
    G = X.T @ R
    nz = W != 0
    zero = np.maximum(np.abs(G[~nz]) - lam * rho, 0.0).max(initial=0.0)
    nonzero = np.abs(G[nz] + lam * (1 - rho) * W[nz] + lam * rho * np.sign(W[nz])).max(
        initial=0.0)
    return {"zero": zero, "nonzero": nonzero, "intercept": np.abs(R.sum(0)).max()}


@pytest.mark.parametrize("rho", [1.0, 0.4])
def test_penalty_and_kkt_residual(rho):
    """The kernel's objective / stopping quantities against ElasticNetPenalty (value,
    row_violation) and the intercept's gradient, on random W with zero entries and random
    gradients (each of the three parts made the largest in turn)."""
    rng = np.random.default_rng(5)
    m, c, n, lam = 9, 3, 12, 0.7
    penalty = ElasticNetPenalty(rho)
    for case in ("zero", "nonzero", "intercept"):
        W = rng.normal(size=(m, c)) * (rng.random((m, c)) < 0.5)
        G = rng.normal(size=(m, c)) * 0.3
        dZ = rng.normal(size=(n, c)) * 0.01
        if case == "zero":
            G[W == 0] *= 20.0
        elif case == "nonzero":
            G[W != 0] *= 20.0
        else:
            dZ += 5.0
        value, worst = _fista_kernel._penalty_kkt(W, np.ascontiguousarray(G.T),
                                                 np.ascontiguousarray(dZ.T), lam, rho)
        viol = penalty.row_violation(W, G, lam)
        parts = {"zero": np.where(W == 0, np.maximum(np.abs(G) - lam * rho, 0), 0).max(),
                 "nonzero": np.where(W != 0, np.abs(G + lam * (1 - rho) * W
                                                    + lam * rho * np.sign(W)), 0).max(),
                 "intercept": np.abs(dZ.sum(0)).max()}
        assert max(parts, key=parts.get) == case
        np.testing.assert_allclose(worst, max(viol.max(), parts["intercept"]), rtol=1e-13)
        np.testing.assert_allclose(value, penalty.value(W, lam), rtol=1e-13)


# (lam, start intercept, l1_ratio): which residual is the largest after 10 iterations differs
STOP_CASES = [(0.3, (0.0, 0.0, 0.0), 1.0), (0.002, (0.0, 0.0, 0.0), 0.5),
              (0.02, (4.0, -4.0, 0.0), 1.0), (0.05, (0.0, 0.0, 0.0), 1.0)]


def test_compiled_stopping_rule():
    """The loop stops at a check exactly when the KKT residual (computed here from scratch)
    is at most tol_abs: with tol_abs just above the residual after 10 iterations it stops at
    10, just below it does not. The cases make each part of the residual (zero entries,
    nonzero entries, intercept) the largest in at least one case."""
    X, Y = problem(3, seed=11, n=60, m=20)
    W0 = np.zeros((X.shape[1], 3))
    binding = set()
    for lam, b_start, rho in STOP_CASES:
        b0 = np.array(b_start)
        penalty = ElasticNetPenalty(rho)
        W, b, it, conv, _ = run_loop("compiled", X, Y, penalty, lam, W0, b0, max_iter=10,
                                     tol_abs=-1.0)
        parts = kkt_from_scratch(X, Y, W, b, lam, rho)
        r = max(parts.values())
        binding.add(max(parts, key=parts.get))
        assert r > 0
        *_, it, conv, _ = run_loop("compiled", X, Y, penalty, lam, W0, b0, max_iter=20,
                                   tol_abs=r * (1 + 1e-9))
        assert conv and it == 10
        *_, it, conv, _ = run_loop("compiled", X, Y, penalty, lam, W0, b0, max_iter=20,
                                   tol_abs=r * (1 - 1e-9))
        assert it == 20
    assert binding == {"nonzero", "intercept"}
