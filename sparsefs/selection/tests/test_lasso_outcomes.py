"""LassoSelector / ElasticNetSelector on continuous and survival targets.

Independent references: scikit-learn's ``Lasso`` / ``ElasticNet`` (same objective at the same
penalty, tight tolerances) and cvxpy (a generic conic solver) for the Cox lasso.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import ElasticNet, Lasso

from sparsefs.datasets import make_planted_regression, make_planted_survival
from sparsefs.exceptions import NoFeatureSelectedWarning
from sparsefs.selection import ElasticNetSelector, LassoSelector


def _standardised(X):
    X = np.asarray(X, dtype=np.float64)
    return (X - X.mean(axis=0)) / X.std(axis=0)


@pytest.fixture(scope="module")
def reg():
    d = make_planted_regression(n_samples=70, n_features=150, random_state=1)
    X = d.X.copy()
    X[np.abs(X) < 0.6] = 0.0
    return X, d.y


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("l1_ratio", [1.0, 0.5])
def test_gaussian_coefficients_equal_scikit_learn(reg, sparse, l1_ratio):
    X, y = reg
    est = (LassoSelector(alpha=0.25, tol=1e-12) if l1_ratio == 1.0 else
           ElasticNetSelector(alpha=0.25, l1_ratio=l1_ratio, tol=1e-12))
    est.fit(sp.csr_array(X) if sparse else X, y)
    lam = est.alpha_ * est.alpha_max_
    ref = (Lasso(alpha=lam, tol=1e-14, max_iter=10**6) if l1_ratio == 1.0 else
           ElasticNet(alpha=lam, l1_ratio=l1_ratio, tol=1e-14, max_iter=10**6))
    ref.fit(_standardised(X), y)
    assert est.target_type_ == "regression"
    np.testing.assert_allclose(est.coef_, ref.coef_, atol=1e-8)
    np.testing.assert_array_equal(est.support_, ref.coef_ != 0)
    # the intercept on X's own columns reproduces the prediction
    pred = X @ (est.coef_ / X.std(axis=0)) + est.intercept_
    np.testing.assert_allclose(pred, ref.predict(_standardised(X)), atol=1e-8)


def test_alpha_max_is_where_the_path_starts(reg):
    X, y = reg
    lam_max = np.abs(_standardised(X).T @ (y - y.mean())).max() / len(y)
    est = LassoSelector(alpha=0.999).fit(X, y)
    assert est.alpha_max_ == pytest.approx(lam_max, rel=1e-12)
    assert est.support_.sum() <= 1
    with pytest.warns(NoFeatureSelectedWarning):
        assert not LassoSelector(alpha=1.0).fit(X, y).coef_.any()


def test_path_to_k_features_with_warm_starts():
    d = make_planted_regression(n_samples=100, n_features=300, effect=1.5, random_state=2)
    est = LassoSelector(n_features_to_select=8).fit(d.X, d.y)
    assert est.support_.sum() == 8
    assert (est.support_ & d.support).sum() >= 7
    assert np.all(np.diff(est.alphas_[: np.argmin(est.alphas_) + 1]) < 0)


def test_integer_targets_need_target_type():
    d = make_planted_regression(n_samples=60, n_features=40, effect=2.0, random_state=3)
    ages = np.rint(5 * d.y).astype(int)
    est = LassoSelector(n_features_to_select=3, target_type="regression").fit(d.X, ages)
    assert est.target_type_ == "regression" and est.coef_.ndim == 1
    with pytest.warns(UserWarning, match="regression problem"):  # scikit-learn's hint
        as_classes = LassoSelector(n_features_to_select=3, max_iter=50).fit(d.X, ages)
    assert as_classes.target_type_ == "classification"


def _cvxpy_cox(X, time, event, lam):
    cp = pytest.importorskip("cvxpy")
    n = X.shape[0]
    b = cp.Variable(X.shape[1])
    eta = X @ b
    terms = [cp.log_sum_exp(eta[np.flatnonzero(time >= time[i])]) - eta[i]
             for i in np.flatnonzero(event)]
    obj = cp.sum(cp.hstack(terms)) / n + lam * cp.norm1(b)
    cp.Problem(cp.Minimize(obj)).solve(solver=cp.CLARABEL, tol_gap_abs=1e-10,
                                       tol_gap_rel=1e-10, tol_feas=1e-10)
    return b.value


def test_cox_lasso_equals_cvxpy_at_the_chosen_penalty():
    d = make_planted_survival(n_samples=60, n_features=12, n_informative=3, effect=0.8,
                              random_state=4)
    est = LassoSelector(n_features_to_select=4, tol=1e-12).fit(d.X, d.y)
    assert est.target_type_ == "survival" and est.support_.sum() == 4
    ref = _cvxpy_cox(_standardised(d.X), d.y["time"], d.y["event"],
                     est.alpha_ * est.alpha_max_)
    np.testing.assert_allclose(est.coef_, ref, atol=1e-6)


def test_cox_ties_option_changes_only_tied_data():
    d = make_planted_survival(n_samples=80, n_features=20, n_informative=3, effect=0.8,
                              random_state=5)
    a = LassoSelector(alpha=0.3, tol=1e-12).fit(d.X, d.y)
    b = LassoSelector(alpha=0.3, tol=1e-12, ties="efron").fit(d.X, d.y)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-10)  # continuous times: no ties
    y = d.y.copy()
    y["time"] = np.ceil(y["time"] * 2) / 2
    a = LassoSelector(alpha=0.3, tol=1e-12).fit(d.X, y)
    b = LassoSelector(alpha=0.3, tol=1e-12, ties="efron").fit(d.X, y)
    assert np.abs(a.coef_ - b.coef_).max() > 1e-4


def test_cox_sparse_equals_dense():
    d = make_planted_survival(n_samples=80, n_features=40, n_informative=3, effect=0.8,
                              random_state=6)
    X = d.X.copy()
    X[np.abs(X) < 0.5] = 0.0
    a = ElasticNetSelector(n_features_to_select=5, tol=1e-10).fit(X, d.y)
    b = ElasticNetSelector(n_features_to_select=5, tol=1e-10).fit(sp.csr_array(X), d.y)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-7)
    np.testing.assert_array_equal(a.support_, b.support_)
