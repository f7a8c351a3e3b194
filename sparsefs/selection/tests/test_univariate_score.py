"""UnivariateScore: per-feature tests against continuous and survival targets.

Independent references: scikit-learn's ``f_regression`` / ``r_regression`` / ``SelectFdr``,
SciPy's ``spearmanr``, lifelines' ``logrank_test``.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats
from sklearn.feature_selection import SelectFdr, f_regression, r_regression

from sparsefs.datasets import make_planted_regression, make_planted_survival
from sparsefs.selection import UnivariateScore, univariate_score


@pytest.fixture(scope="module")
def reg():
    d = make_planted_regression(n_samples=80, n_features=120, effect=1.0, random_state=0)
    X = d.X.copy()
    X[:, 7] = 3.0  # constant
    X[np.abs(X) < 0.5] = 0.0  # sparse-friendly
    return X, d.y


@pytest.mark.parametrize("fmt", ["dense", "csr", "csc", "fortran"])
def test_f_and_pearson_equal_scikit_learn(reg, fmt):
    X, y = reg
    Xin = {"dense": X, "csr": sp.csr_array(X), "csc": sp.csc_array(X),
           "fortran": np.asfortranarray(X)}[fmt]
    F, p = f_regression(X, y)
    r = r_regression(X, y)
    sel = UnivariateScore(n_features_to_select=10).fit(Xin, y)
    ok = np.isfinite(r) & (np.ptp(X, axis=0) > 0)
    np.testing.assert_allclose(sel.statistic_[ok], F[ok], rtol=1e-10)
    np.testing.assert_allclose(sel.pvalues_[ok], p[ok], rtol=1e-10, atol=1e-300)
    np.testing.assert_allclose(sel.correlations_[ok], r[ok], rtol=1e-10, atol=1e-14)
    # the constant column: no association, last (scikit-learn forces its r and F to finite)
    assert sel.scores_[7] == -np.inf and sel.pvalues_[7] == 1.0 and sel.ranking_[7] == 120
    order = np.argsort(-np.where(ok, F, -1.0), kind="stable")
    np.testing.assert_array_equal(np.argsort(sel.ranking_), order)
    pearson = UnivariateScore(n_features_to_select=10, test="pearson").fit(Xin, y)
    np.testing.assert_array_equal(pearson.ranking_, sel.ranking_)
    np.testing.assert_allclose(pearson.scores_[ok], np.abs(r[ok]), rtol=1e-10)


def test_spearman_equals_scipy(reg):
    X, y = reg
    sel = UnivariateScore(test="spearman", n_features_to_select=5).fit(sp.csr_array(X), y)
    for j in (0, 3, 50, 119):
        res = stats.spearmanr(X[:, j], y)
        assert sel.correlations_[j] == pytest.approx(res.statistic, rel=1e-10)
        assert sel.pvalues_[j] == pytest.approx(res.pvalue, rel=1e-8)


def test_own_rule_is_select_fdr(reg):
    X, y = reg
    sel = UnivariateScore(fdr=0.1).fit(X, y)
    ref = SelectFdr(f_regression, alpha=0.1).fit(X, y)
    np.testing.assert_array_equal(sel.support_, ref.get_support())
    assert sel.support_.sum() > 0


def test_score_function_and_integer_targets_are_numbers(reg):
    X, y = reg
    ages = np.rint(10 * y).astype(int)  # integers: read as numbers by a regression-only method
    F, _p = univariate_score(X, ages)
    ref = f_regression(X, ages)
    ok = np.isfinite(ref[0]) & (np.ptp(X, axis=0) > 0)
    np.testing.assert_allclose(F[ok], ref[0][ok], rtol=1e-10)


def test_cox_statistic_is_the_logrank_test_of_a_binary_feature():
    lifelines_stats = pytest.importorskip("lifelines.statistics")
    d = make_planted_survival(n_samples=120, n_features=6, n_informative=2, effect=1.0,
                              random_state=1)
    X = (d.X > 0).astype(float)
    t, e = d.y["time"], d.y["event"]
    sel = UnivariateScore(n_features_to_select=2).fit(X, d.y)
    assert sel.test_ == "cox" and sel.target_type_ == "survival"
    for j in range(6):
        ref = lifelines_stats.logrank_test(t[X[:, j] == 1], t[X[:, j] == 0],
                                           e[X[:, j] == 1], e[X[:, j] == 0])
        assert sel.statistic_[j] == pytest.approx(ref.test_statistic, rel=1e-10)
        assert sel.pvalues_[j] == pytest.approx(ref.p_value, rel=1e-8)
    assert set(np.flatnonzero(sel.support_)) == set(np.flatnonzero(d.support))


@pytest.mark.parametrize(("test", "target"), [("cox", "regression"), ("f", "survival")])
def test_a_test_that_does_not_fit_the_target_is_refused(test, target):
    d = (make_planted_regression if target == "regression" else make_planted_survival)(
        n_samples=30, n_features=5, n_informative=1, random_state=0)
    with pytest.raises(ValueError, match=rf"test='{test}'\) does not fit"):
        UnivariateScore(test=test).fit(d.X, d.y)


def test_class_labels_are_refused_with_a_pointer():
    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(ValueError, match="FisherScore"):
        UnivariateScore().fit(X, np.array(["a", "b"] * 10))


def test_dask_arrays_give_f_regression(reg):
    """Dask input (dense and CSR blocks, uneven chunks): one pass of sums, the values of
    f_regression; the rank and risk-set tests refuse dask clearly."""
    da = pytest.importorskip("dask.array")
    X, y = reg
    F, _ = f_regression(X, y)
    ok = np.isfinite(F) & (np.ptp(X, axis=0) > 0)
    dense = da.from_array(X, chunks=(23, 50))
    for Xd in (dense, dense.map_blocks(sp.csr_matrix)):
        sel = UnivariateScore(n_features_to_select=10).fit(Xd, y)
        np.testing.assert_allclose(sel.statistic_[ok], F[ok], rtol=1e-10)
        assert sel.scores_[7] == -np.inf
    with pytest.raises(TypeError, match="does not take dask"):
        UnivariateScore(test="spearman").fit(dense, y)
