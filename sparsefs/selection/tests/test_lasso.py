"""LassoSelector against independent references.

References: the KKT conditions of the l1-penalised multinomial logistic problem, with the
gradient computed here from scratch (softmax); scikit-learn's ``LogisticRegression``
(``l1_ratio=1``, ``solver="saga"``, ``C = 1 / (n lambda)``) on the same standardised data;
the definition of lambda_max (W = 0 exactly at and above it); planted-signal recovery.
"""

import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from sparsefs.datasets import make_planted_classification
from sparsefs.exceptions import NoFeatureSelectedWarning
from sparsefs.selection import ElasticNetSelector, FisherScore, LassoSelector


def standardized(X):
    return (X - X.mean(0)) / X.std(0)


def softmax_gradient(Xs, y, coef, intercept):
    n, K = Xs.shape[0], coef.shape[1]
    Z = Xs @ coef + intercept
    P = np.exp(Z - Z.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    R = (P - np.eye(K)[y]) / n
    return Xs.T @ R, R.sum(0)


def assert_kkt(est, X, y, l1_ratio=1.0, atol=1e-7):
    """Stationarity of the elastic-net logistic problem at the returned (coef_, intercept_)."""
    Xs = standardized(X)
    lam = est.alpha_ * est.alpha_max_
    G, g0 = softmax_gradient(Xs, y, est.coef_, est.intercept_)
    np.testing.assert_allclose(g0, 0, atol=atol)
    W = est.coef_
    nz = W != 0
    resid = G + lam * (1 - l1_ratio) * W + lam * l1_ratio * np.sign(W)
    np.testing.assert_allclose(resid[nz], 0, atol=atol)
    assert np.all(np.abs(G[~nz]) <= lam * l1_ratio + atol)


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(0)
    n = 60
    y = rng.integers(0, 3, size=n)
    X = rng.normal(size=(n, 30)) * rng.uniform(0.5, 3, size=30)
    X[:, 4] += 1.5 * y
    X[:, 17] -= 1.2 * (y == 2)
    X[:, 22] += 0.8 * (y == 0)
    return X, y


def test_kkt_at_given_penalty(small):
    X, y = small
    est = LassoSelector(alpha=0.3, tol=1e-10, max_iter=20000).fit(X, y)
    assert est.support_.sum() >= 2
    assert_kkt(est, X, y)
    assert est.kkt_residual_ <= 1e-10


def test_kkt_on_the_path_for_a_count(small):
    X, y = small
    est = LassoSelector(n_features_to_select=6, tol=1e-10, max_iter=20000).fit(X, y)
    assert_kkt(est, X, y)
    assert est.n_nonzero_path_[-1] >= 6 and est.support_.sum() == 6


def sklearn_l1(Xs, y, lam, l1_ratio=1.0, tol=1e-10):
    """scikit-learn's saga at the same penalty: its objective C sum_i loss_i + ||W||_1 (+ the
    l2 part) divided by n C is ours with lambda = 1 / (n C), i.e. C = 1 / (n lambda)."""
    return LogisticRegression(C=1 / (Xs.shape[0] * lam), l1_ratio=l1_ratio, solver="saga",
                              tol=tol, max_iter=100000).fit(Xs, y)


def objective(Xs, y, coef, intercept, lam, l1_ratio=1.0):
    """The multinomial objective of the docstring, computed from scratch."""
    Z = Xs @ coef + intercept
    zmax = Z.max(1, keepdims=True)
    lse = np.log(np.exp(Z - zmax).sum(1)) + zmax[:, 0]
    loss = float(np.mean(lse - Z[np.arange(len(y)), y]))
    pen = l1_ratio * np.abs(coef).sum() + 0.5 * (1 - l1_ratio) * (coef**2).sum()
    return loss + lam * pen


def test_equals_sklearn_saga(small):
    """Reference: scikit-learn's multinomial saga (penalty "l1", written ``l1_ratio=1``) at
    C = 1 / (n lambda): coefficients equal to 1e-4 relative, same support, same objective."""
    X, y = small
    Xs = standardized(X)
    est = LassoSelector(alpha=0.2, tol=1e-10, max_iter=50000).fit(X, y)
    lam = est.alpha_ * est.alpha_max_
    ref = sklearn_l1(Xs, y, lam)
    rel = np.linalg.norm(est.coef_ - ref.coef_.T) / np.linalg.norm(ref.coef_)
    assert rel <= 1e-4, rel  # measured 1.1e-9
    np.testing.assert_array_equal(est.support_, np.abs(ref.coef_).sum(0) > 1e-6)
    ours = objective(Xs, y, est.coef_, est.intercept_, lam)
    theirs = objective(Xs, y, ref.coef_.T, ref.intercept_, lam)
    assert ours <= theirs + 1e-10 and theirs - ours <= 1e-8 * abs(theirs)


@pytest.mark.parametrize("k", [3, 6, 9])
def test_same_support_as_sklearn_at_the_same_count(small, k):
    """Reference: scikit-learn's saga at the penalty our path chose for k features has the
    same k nonzero rows (support overlap k/k) and the same coefficients (1e-4 relative)."""
    X, y = small
    Xs = standardized(X)
    est = LassoSelector(n_features_to_select=k, tol=1e-10, max_iter=50000).fit(X, y)
    lam = est.alpha_ * est.alpha_max_
    ref = sklearn_l1(Xs, y, lam)
    ref_support = np.abs(ref.coef_).sum(0) > 1e-6
    assert ref_support.sum() == k
    np.testing.assert_array_equal(est.support_, ref_support)
    rel = np.linalg.norm(est.coef_ - ref.coef_.T) / np.linalg.norm(ref.coef_)
    assert rel <= 1e-4, rel


def test_binary_equals_sklearn_binary_model(small):
    """Reference: scikit-learn's *binary* l1 logistic regression at C = 1 / (n lambda). With
    K = 2 the multinomial form is over-parametrised (only w_1 - w_0 enters the loss and the l1
    penalty of the split is |w_1 - w_0| at best), so w_1 - w_0 equals sklearn's single row."""
    X, y = small
    yb = (y == 0).astype(int)
    Xs = standardized(X)
    est = LassoSelector(alpha=0.3, tol=1e-10, max_iter=50000).fit(X, yb)
    lam = est.alpha_ * est.alpha_max_
    ref = sklearn_l1(Xs, yb, lam)
    diff = est.coef_[:, 1] - est.coef_[:, 0]
    rel = np.linalg.norm(diff - ref.coef_[0]) / np.linalg.norm(ref.coef_[0])
    assert rel <= 1e-4, rel


def test_lambda_max_gives_zero(small):
    """§5.2 item 20: alpha >= 1 gives W = 0 (nothing selected); just below, something enters."""
    X, y = small
    for alpha in (1.0, 3.0):
        with pytest.warns(NoFeatureSelectedWarning):
            est = LassoSelector(alpha=alpha).fit(X, y)
        assert not est.coef_.any() and not est.support_.any()
    assert LassoSelector(alpha=0.95).fit(X, y).support_.any()


def test_path_hits_the_count_exactly(small):
    X, y = small
    for k in (1, 3, 5, 8):
        est = LassoSelector(n_features_to_select=k).fit(X, y)
        assert est.support_.sum() == k
        assert (est.coef_[est.support_] != 0).any(axis=1).sum() >= min(k, est.n_nonzero_path_[-1])


def test_binary_labels(small):
    X, y = small
    yb = (y == 0).astype(int)
    est = LassoSelector(alpha=0.3, tol=1e-10, max_iter=20000).fit(X, yb)
    assert est.coef_.shape == (X.shape[1], 2)
    assert_kkt(est, X, yb)


def test_units_do_not_matter_when_standardized(small):
    X, y = small
    a = LassoSelector(n_features_to_select=4).fit(X, y)
    b = LassoSelector(n_features_to_select=4).fit(X * np.logspace(-3, 3, 30) + 5.0, y)
    np.testing.assert_array_equal(a.support_, b.support_)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_planted_recovery(seed):
    """Issue #16's design: 3 classes, n = 100, p = 2000, 20 planted features (shifts of +-1.5
    on non-constant class patterns), ``make_planted_classification``. Reference: the planted
    truth, and Fisher's count on the same data (20/20 on all three seeds).

    Acceptance: >= 15/20. Measured at HEAD of this change: 15, 17, 16/20 (seeds 0, 1, 2; 15-17
    over seeds 0-19); the issue's 11/20 is not reproduced. The path is exact (KKT below,
    equal to scikit-learn's saga above); the lasso stops short of 20/20 by its nature
    (documented in the class docstring and docs/methods/lasso.md): once ~15 features separate
    the 100 samples, a weak single-class feature fits the boundary samples no better than
    noise.
    """
    data = make_planted_classification(random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = LassoSelector(n_features_to_select=20).fit(data.X, data.y)
    assert (est.support_ & data.support).sum() >= 15
    fisher = FisherScore(n_features_to_select=20).fit(data.X, data.y)
    assert (fisher.support_ & data.support).sum() == 20
    if seed == 0:
        top = LassoSelector(n_features_to_select=15).fit(data.X, data.y)
        assert (top.support_ & data.support).sum() == 15  # the first 15 on the path: planted


def test_planted_design_kkt_at_the_chosen_penalty():
    """Reference: the KKT conditions from scratch on issue #16's design (seed 0) at the penalty
    chosen for 20 features (alpha_ ~ 1e-3): the solution the selection is read from is the
    optimum, to the default tolerance (1e-4 lambda_max)."""
    data = make_planted_classification(random_state=0)
    est = LassoSelector(n_features_to_select=20).fit(data.X, data.y)
    assert est.kkt_residual_ <= 1e-4
    assert_kkt(est, data.X, data.y, atol=1e-4 * est.alpha_max_)


@pytest.mark.slow
def test_planted_design_objective_below_unconverged_saga():
    """Why scikit-learn's saga "keeps 15-17/20 at 15-24 nonzero rows" on issue #16's design
    while we keep 15/20 at 20: at the penalties where 20 rows enter (lambda ~ 1e-3 lambda_max,
    C ~ 24) the data are nearly separable, the coefficients grow and saga does not converge
    (max_iter reached). Reference: the objective from scratch. Ours is lower than saga's at
    the same penalty, so saga's extra nonzero rows are those of an unconverged iterate, not of
    the optimum. Measured (seed 0, C = 5 i.e. lambda = 0.002 = 0.0048 lambda_max): ours 0.03107
    with 15 nonzero rows (all planted; KKT residual <= 1e-8); saga after 2000 epochs 0.03686
    with 86 nonzero rows, after 20 000 epochs (150 s) 20 rows, 17 planted, coefficients still
    0.77 away from ours.
    """
    data = make_planted_classification(random_state=0)
    Xs = standardized(data.X)
    lam = 1 / (100 * 5.0)
    est0 = LassoSelector(alpha=0.5).fit(data.X, data.y)
    est = LassoSelector(alpha=lam / est0.alpha_max_, tol=1e-8, max_iter=100000).fit(data.X,
                                                                                  data.y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = LogisticRegression(C=5.0, l1_ratio=1.0, solver="saga", tol=1e-8,
                                 max_iter=2000).fit(Xs, data.y)
    ours = objective(Xs, data.y, est.coef_, est.intercept_, lam)
    theirs = objective(Xs, data.y, ref.coef_.T, ref.intercept_, lam)
    assert est.kkt_residual_ <= 1e-8
    assert ours < theirs


@pytest.mark.parametrize("make", [
    lambda: LassoSelector(alpha=0.3),
    lambda: LassoSelector(n_features_to_select=4),
    lambda: ElasticNetSelector(alpha=0.3, l1_ratio=0.5),
    lambda: ElasticNetSelector(n_features_to_select=4, l1_ratio=0.2),
])
def test_duplicated_columns_tie_exactly(small, make):
    """Contract (issue #16 item 5): exact copies score exactly alike, the original first.
    Reference: the symmetry - the loss sees only the sum of the copies' rows of W, so their
    mean is optimal too (merge and split). Copies of a planted (4), a weak (22) and a noise
    (0) feature, one of them twice."""
    X, y = small
    src = [4, 22, 0, 4]
    Xd = np.hstack([X, X[:, src]])
    est = make().fit(Xd, y)
    for orig, copy in zip(src, range(30, 34), strict=True):
        assert est.scores_[orig] == est.scores_[copy]
        np.testing.assert_array_equal(est.coef_[orig], est.coef_[copy])
        assert est.ranking_[orig] < est.ranking_[copy]
