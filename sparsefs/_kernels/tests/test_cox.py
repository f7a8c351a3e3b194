"""Cox partial likelihood, derivatives, score tests and the penalised Cox fit.

Independent references: lifelines (MIT; ``CoxPHFitter``, its Efron likelihood values and
``logrank_test``), a brute-force double loop over the risk sets (Breslow), finite
differences, and cvxpy (a generic conic solver) for the penalised solution.
"""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from sparsefs._kernels import coordinate_descent as cd
from sparsefs._kernels import cox

lifelines = pytest.importorskip("lifelines")


def _data(n=70, p=3, ties=True, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    t = rng.exponential(size=n) / np.exp(0.8 * X[:, 0] - 0.5 * X[:, 1])
    if ties:
        t = np.ceil(t * 4) / 4  # many tied times
    c = rng.exponential(1.5, size=n)
    event = t <= c
    time = np.where(event, t, np.ceil(c * 4) / 4 if ties else c)
    return X, time, event


def _lifelines_efron(X, time, event, beta):
    from lifelines.fitters.coxph_fitter import SemiParametricPHFitter

    o = np.argsort(time, kind="stable")
    H, g, ll = SemiParametricPHFitter()._get_efron_values_single(
        pd.DataFrame(X[o]), pd.Series(time[o]), pd.Series(event[o]),
        pd.Series(np.ones(len(time))), None, beta)
    return ll, g, H


def _breslow_brute(X, time, event, beta):
    """Breslow's log-likelihood and gradient by a double loop over samples (no sorting)."""
    eta = X @ beta
    ll, grad = 0.0, np.zeros(X.shape[1])
    for i in np.flatnonzero(event):
        risk = time >= time[i]
        w = np.exp(eta[risk])
        ll += eta[i] - np.log(w.sum())
        grad += X[i] - w @ X[risk] / w.sum()
    return ll, grad


@pytest.mark.parametrize("seed", [0, 1])
def test_efron_likelihood_gradient_hessian_equal_lifelines(seed):
    X, time, event = _data(seed=seed)
    data = cox.cox_data(time, event)
    beta = np.array([0.3, -0.2, 0.1])
    ll, g, H = cox.loglik_beta(X, beta, data, "efron")
    ref_ll, ref_g, ref_H = _lifelines_efron(X, time, event, beta)
    assert ll == pytest.approx(ref_ll, rel=1e-12)
    np.testing.assert_allclose(g, ref_g, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(H, ref_H, rtol=1e-10, atol=1e-10)


def test_breslow_likelihood_and_gradient_equal_brute_force():
    X, time, event = _data(seed=2)
    data = cox.cox_data(time, event)
    beta = np.array([-0.4, 0.25, 0.6])
    ll, g, _ = cox.loglik_beta(X, beta, data, "breslow")
    ref_ll, ref_g = _breslow_brute(X, time, event, beta)
    assert ll == pytest.approx(ref_ll, rel=1e-12)
    np.testing.assert_allclose(g, ref_g, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("ties", ["breslow", "efron"])
def test_eta_derivatives_are_the_likelihoods_derivatives(ties):
    """Gradient and diagonal Hessian in eta: X = I in loglik_beta gives them exactly, and
    central finite differences agree."""
    _X, time, event = _data(n=40, seed=3)
    data = cox.cox_data(time, event)
    eta = np.random.default_rng(0).normal(size=40)
    ll, g, h = cox.eta_derivatives(eta, data, ties)
    ref_ll, ref_g, ref_H = cox.loglik_beta(np.eye(40), eta, data, ties)
    assert ll == pytest.approx(ref_ll, rel=1e-12)
    np.testing.assert_allclose(g, ref_g, atol=1e-12)
    np.testing.assert_allclose(h, -np.diag(ref_H), atol=1e-12)
    eps = 1e-6
    for k in (0, 7, 21):
        e = np.zeros(40)
        e[k] = eps
        num = (cox.eta_derivatives(eta + e, data, ties)[0]
               - cox.eta_derivatives(eta - e, data, ties)[0]) / (2 * eps)
        assert num == pytest.approx(g[k], abs=1e-7)


def test_unpenalised_fit_equals_lifelines_coxph():
    """Coefficients and log-likelihood of the Efron fit equal CoxPHFitter's (tight
    tolerances on both sides) to 1e-6."""
    X, time, event = _data(n=90, seed=4)
    beta, ll, _ = cox.newton_cox(X, cox.cox_data(time, event), "efron", tol=1e-14)
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(T=time, E=event)
    ref = lifelines.CoxPHFitter().fit(df, "T", "E",
                                      fit_options={"precision": 1e-14, "r_precision": 1e-14})
    np.testing.assert_allclose(beta, ref.params_.to_numpy(), atol=1e-6)
    assert ll == pytest.approx(ref.log_likelihood_, abs=1e-8)


def test_logrank_is_the_exact_score_test_of_a_binary_feature():
    """With tied times, ties="exact" equals lifelines' log-rank statistic (hypergeometric
    variance); without ties, all three handlings equal it."""
    from lifelines.statistics import logrank_test

    for tied in (True, False):
        X, time, event = _data(n=80, seed=5, ties=tied)
        x = (X[:, 0] > 0).astype(float)
        ref = logrank_test(time[x == 1], time[x == 0], event[x == 1], event[x == 0])
        data = cox.cox_data(time, event)
        stat, _, _ = cox.score_tests(x[:, None], data, "exact")
        assert stat[0] == pytest.approx(ref.test_statistic, rel=1e-10)
        assert cox.chi2_pvalues(stat)[0] == pytest.approx(ref.p_value, rel=1e-8)
        if not tied:
            for ties in ("breslow", "efron"):
                assert cox.score_tests(x[:, None], data, ties)[0][0] == pytest.approx(
                    ref.test_statistic, rel=1e-10)


@pytest.mark.parametrize("ties", ["breslow", "efron"])
def test_score_tests_equal_the_one_feature_derivatives_at_zero(ties):
    """U = dl/dbeta and I = -d2l/dbeta2 at beta = 0 of each one-feature model (Efron: the
    values lifelines computes)."""
    X, time, event = _data(n=60, p=4, seed=6)
    data = cox.cox_data(time, event)
    stat, U, info = cox.score_tests(X * 3.0 + 7.0, data, ties)
    for j in range(4):
        if ties == "efron":
            _, g, H = _lifelines_efron(X[:, [j]] * 3.0 + 7.0, time, event, np.zeros(1))
        else:
            _, g, H = cox.loglik_beta(X[:, [j]] * 3.0 + 7.0, np.zeros(1), data, ties)
        assert U[j] == pytest.approx(g[0], rel=1e-9)
        assert info[j] == pytest.approx(-H[0, 0], rel=1e-9)
        assert stat[j] == pytest.approx(g[0] ** 2 / -H[0, 0], rel=1e-9)


def test_score_tests_sparse_scale_and_constant_columns():
    X, time, event = _data(n=50, p=5, seed=7)
    X[:, 3] = 2.5  # constant: no information, statistic 0
    X[X[:, 4] < 0.3, 4] = 0.0
    data = cox.cox_data(time, event)
    stat, _, info = cox.score_tests(X, data)
    assert stat[3] == 0.0 and info[3] == 0.0
    np.testing.assert_allclose(cox.score_tests(sp.csr_array(X), data)[0], stat, rtol=1e-10)
    np.testing.assert_allclose(cox.score_tests(X * 1e300, data)[0], stat, rtol=1e-10)
    np.testing.assert_allclose(cox.score_tests(X * 1e-300, data)[0], stat, rtol=1e-10)


def _cvxpy_cox(X, time, event, lam, l1_ratio):
    cp = pytest.importorskip("cvxpy")
    n = X.shape[0]
    b = cp.Variable(X.shape[1])
    eta = X @ b
    terms = [cp.log_sum_exp(eta[np.flatnonzero(time >= time[i])]) - eta[i]
             for i in np.flatnonzero(event)]
    obj = cp.sum(cp.hstack(terms)) / n + lam * (
        l1_ratio * cp.norm1(b) + (1 - l1_ratio) / 2 * cp.sum_squares(b))
    cp.Problem(cp.Minimize(obj)).solve(solver=cp.CLARABEL, tol_gap_abs=1e-12,
                                       tol_gap_rel=1e-12, tol_feas=1e-12)
    return b.value


@pytest.mark.parametrize("l1_ratio", [1.0, 0.6])
def test_penalised_breslow_fit_equals_cvxpy(l1_ratio):
    """The Cox elastic net at a fixed penalty equals a generic convex solver's to 1e-6."""
    X, time, event = _data(n=60, p=12, ties=True, seed=8)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    design = cd.ENetDesign.from_prepared(X)
    loss = cd.CoxLoss(time, event, "breslow")
    lam = 0.2 * cd.enet_lambda_max(design, loss, l1_ratio)
    res = cd.enet_fit(design, loss, lam, l1_ratio, tol=1e-12)
    assert res.converged
    np.testing.assert_allclose(res.coef, _cvxpy_cox(X, time, event, lam, l1_ratio), atol=1e-6)


def test_penalised_efron_fit_satisfies_kkt_with_lifelines_gradient():
    """Efron's likelihood is not DCP (cvxpy cannot take it): the optimality conditions are
    checked with lifelines' gradient instead."""
    X, time, event = _data(n=60, p=10, seed=9)
    design = cd.ENetDesign.from_prepared(X - X.mean(axis=0))
    loss = cd.CoxLoss(time, event, "efron")
    lam = 0.3 * cd.enet_lambda_max(design, loss, 1.0)
    res = cd.enet_fit(design, loss, lam, 1.0, tol=1e-12)
    _, g, _ = _lifelines_efron(X, time, event, res.coef)
    grad = g / X.shape[0]
    nz = res.coef != 0
    assert nz.any() and (~nz).any()
    np.testing.assert_allclose(grad[nz], lam * np.sign(res.coef[nz]), atol=1e-9)
    assert np.all(np.abs(grad[~nz]) <= lam + 1e-9)


def test_warm_start_and_sparse_design_give_the_same_solution():
    X, time, event = _data(n=60, p=15, seed=10)
    X[np.abs(X) < 0.7] = 0.0
    dense = cd.ENetDesign.from_prepared(X - X.mean(axis=0))

    class _Centred:  # the CenteredSparse interface of prepare_design
        S = sp.csc_array(X)
        m = X.mean(axis=0)

    sparse = cd.ENetDesign.from_prepared(_Centred)
    loss = cd.CoxLoss(time, event)
    lam_max = cd.enet_lambda_max(dense, loss, 1.0)
    cold = cd.enet_fit(dense, loss, 0.3 * lam_max, tol=1e-12)
    warm = cd.enet_fit(dense, loss, 0.5 * lam_max, tol=1e-12)
    warm = cd.enet_fit(dense, loss, 0.3 * lam_max, coef0=warm.coef, lam_prev=0.5 * lam_max,
                       tol=1e-12)
    on_sparse = cd.enet_fit(sparse, loss, 0.3 * lam_max, tol=1e-12)
    np.testing.assert_allclose(warm.coef, cold.coef, atol=1e-9)
    np.testing.assert_allclose(on_sparse.coef, cold.coef, atol=1e-9)
