"""SparseNaiveBayes (Askari, d'Aspremont & El Ghaoui, AISTATS 2020).

Independent references: scikit-learn's ``BernoulliNB`` / ``MultinomialNB`` (k = p, same
smoothing), brute force over every support of the constrained log-likelihood (written here
from the model's definition), and scikit-learn's estimator checks.
"""

import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import xlogy
from sklearn.exceptions import SkipTestWarning
from sklearn.naive_bayes import BernoulliNB, MultinomialNB
from sklearn.utils.estimator_checks import check_estimator

from sparsefs.classification import SparseNaiveBayes


def _binary_problem(seed=0, n=90, p=10, n_classes=3):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(n_classes), n // n_classes)
    rates = rng.uniform(0.1, 0.9, (n_classes, p))
    X = (rng.random((y.size, p)) < rates[y]).astype(float)
    return X, y


def _count_problem(seed=0, n=90, p=12, n_classes=3):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(n_classes), n // n_classes)
    lam = rng.uniform(0.2, 4, (n_classes, p))
    return rng.poisson(lam[y]).astype(float), y


def _bernoulli_constrained_loglik(X, y, support, alpha=1.0):
    """Training log-likelihood (smoothed counts) of the Bernoulli model free on ``support``."""
    classes = np.unique(y)
    ones = np.stack([X[y == c].sum(0) for c in classes]) + alpha
    totals = np.array([np.sum(y == c) for c in classes], float) + 2 * alpha
    theta = ones / totals[:, None]
    pooled = ones.sum(0) / totals.sum()
    free = np.isin(np.arange(X.shape[1]), support)
    theta = np.where(free, theta, pooled)
    return float((xlogy(ones, theta) + xlogy(totals[:, None] - ones, 1 - theta)).sum())


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("k", [1, 2, 3])
def test_bernoulli_support_maximises_the_constrained_likelihood(seed, k):
    X, y = _binary_problem(seed, p=8)
    clf = SparseNaiveBayes(k).fit(X, y)
    best = max(
        _bernoulli_constrained_loglik(X, y, list(S))
        for S in itertools.combinations(range(X.shape[1]), k)
    )
    got = _bernoulli_constrained_loglik(X, y, np.flatnonzero(clf.support_))
    assert got == pytest.approx(best, rel=1e-12)
    assert clf.duality_gap_ == 0.0


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("alpha", [1.0, 0.3])
def test_bernoulli_with_every_feature_is_bernoulli_nb(n_classes, alpha):
    X, y = _binary_problem(1, n_classes=n_classes)
    ours = SparseNaiveBayes(X.shape[1], alpha=alpha).fit(X, y)
    ref = BernoulliNB(alpha=alpha).fit(X, y)
    np.testing.assert_allclose(ours.feature_log_prob_, ref.feature_log_prob_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.predict_log_proba(X), ref.predict_log_proba(X), atol=1e-12)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_multinomial_with_every_feature_is_multinomial_nb(n_classes):
    X, y = _count_problem(2, n_classes=n_classes)
    ours = SparseNaiveBayes(X.shape[1], model="multinomial", alpha=0.5).fit(X, y)
    ref = MultinomialNB(alpha=0.5).fit(X, y)
    np.testing.assert_allclose(ours.feature_log_prob_, ref.feature_log_prob_, atol=1e-12)
    np.testing.assert_allclose(ours.predict_log_proba(X), ref.predict_log_proba(X), atol=1e-12)
    assert ours.duality_gap_ == 0.0


def test_multinomial_within_its_bound_of_brute_force():
    """The reported gap bounds the distance to the brute-force optimum of the estimator's own
    objective (log-likelihood gain over the all-shared model)."""
    from sparsefs._kernels.sparse_naive_bayes import multinomial_gain

    for seed in range(6):
        X, y = _count_problem(seed, p=8)
        for k in (1, 2, 3):
            if k == 1:  # the model says one free feature cannot discriminate (and fits)
                with pytest.warns(UserWarning, match="one free feature cannot differ"):
                    clf = SparseNaiveBayes(k, model="multinomial").fit(X, y)
            else:
                clf = SparseNaiveBayes(k, model="multinomial").fit(X, y)
            counts = clf.feature_count_ + clf.alpha
            supports = itertools.combinations(range(8), k)
            opt = max(multinomial_gain(counts, list(S)) for S in supports)
            assert clf.log_likelihood_gain_ >= opt - clf.duality_gap_ - 1e-9
            assert clf.upper_bound_ >= opt - 1e-9


@pytest.mark.parametrize("model", ["bernoulli", "multinomial"])
@pytest.mark.parametrize("fmt", [sp.csr_array, sp.csc_array, sp.csr_matrix])
def test_sparse_input_gives_the_dense_model(model, fmt):
    X, y = _count_problem(3, p=30)
    X[X < 2] = 0  # sparse
    dense = SparseNaiveBayes(5, model=model).fit(X, y)
    sparse = SparseNaiveBayes(5, model=model).fit(fmt(X), y)
    np.testing.assert_array_equal(dense.support_, sparse.support_)
    np.testing.assert_allclose(dense.feature_log_prob_, sparse.feature_log_prob_, atol=1e-12)
    np.testing.assert_allclose(dense.predict_proba(X), sparse.predict_proba(fmt(X)), atol=1e-12)


def test_sparse_negative_threshold_counts_the_implicit_zeros():
    X, y = _count_problem(4, p=15)
    X = X - 1.0 * (X == 1)  # values 0, 2, 3, ... and zeros stay zeros
    X[X < 0] = 0
    dense = SparseNaiveBayes(4, binarize=-0.5).fit(X, y)
    sparse = SparseNaiveBayes(4, binarize=-0.5).fit(sp.csr_array(X), y)
    np.testing.assert_array_equal(dense.feature_count_, sparse.feature_count_)
    np.testing.assert_allclose(dense.predict_proba(X), sparse.predict_proba(sp.csr_array(X)))


def test_float32_and_pandas():
    import pandas as pd

    X, y = _count_problem(5)
    a = SparseNaiveBayes(3, model="multinomial").fit(X, y)
    b = SparseNaiveBayes(3, model="multinomial").fit(X.astype(np.float32), y)
    np.testing.assert_array_equal(a.support_, b.support_)
    df = pd.DataFrame(X, columns=[f"w{j}" for j in range(X.shape[1])])
    c = SparseNaiveBayes(3).fit(df, y)
    assert list(c.get_feature_names_out()) == [f"w{j}" for j in np.flatnonzero(c.support_)]


def test_planted_word_is_found_and_prediction_uses_only_the_support():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 100)
    X = rng.poisson(1.0, (200, 300)).astype(float)
    X[:, 17] = rng.poisson(np.where(y == 1, 4.0, 0.5))
    clf = SparseNaiveBayes(2, model="multinomial").fit(X, y)
    assert 17 in np.flatnonzero(clf.support_)
    assert clf.score(X, y) > 0.8
    X2 = X.copy()
    off = ~clf.support_
    X2[:, off] = rng.poisson(1.0, (200, off.sum()))  # features off the support: irrelevant
    np.testing.assert_allclose(clf.decision_function(X2), clf.decision_function(X))


def test_multinomial_k1_warns():
    """One free feature cannot differ: both class distributions sum to one (closed form)."""
    X, y = _count_problem(9)
    with pytest.warns(UserWarning, match="k >= 2"):
        clf = SparseNaiveBayes(1, model="multinomial").fit(X, y)
    assert clf.log_likelihood_gain_ == pytest.approx(0.0, abs=1e-9)


def test_priors():
    X, y = _binary_problem(6, n_classes=2)
    u = SparseNaiveBayes(3, fit_prior=False).fit(X, y)
    np.testing.assert_allclose(u.class_log_prior_, np.log([0.5, 0.5]))
    c = SparseNaiveBayes(3, class_prior=[0.2, 0.8]).fit(X, y)
    np.testing.assert_allclose(c.class_log_prior_, np.log([0.2, 0.8]))
    with pytest.raises(ValueError, match="class_prior"):
        SparseNaiveBayes(3, class_prior=[0.2, 0.3, 0.5]).fit(X, y)


def test_clear_errors():
    X, y = _count_problem(7)
    with pytest.raises(ValueError, match="Negative values"):
        SparseNaiveBayes(2, model="multinomial").fit(X - 1, y)
    with pytest.raises(ValueError, match="0/1"):
        SparseNaiveBayes(2, binarize=None).fit(X, y)
    with pytest.raises(ValueError, match="alpha"):
        SparseNaiveBayes(2, alpha=0).fit(X, y)


def test_default_k_is_capped():
    X, y = _binary_problem(8, p=4)
    assert SparseNaiveBayes().fit(X, y).n_features_to_select_ == 4
    X, y = _binary_problem(8, p=40)
    assert SparseNaiveBayes().fit(X, y).n_features_to_select_ == 10


@pytest.mark.parametrize(
    "est", [SparseNaiveBayes(2, model="multinomial"), SparseNaiveBayes(2, binarize=0.5)],
    ids=["multinomial", "bernoulli"],
)
def test_sklearn_checks(est):
    expected = {}
    if est.model == "multinomial":
        # this check feeds negative X whatever the positive_only tag says (scikit-learn 1.6-1.9)
        expected["check_decision_proba_consistency"] = "draws negative X"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_estimator(est, expected_failed_checks=expected)
    # scikit-learn reports the checks it skips as warnings: only the array-API check, which
    # needs SCIPY_ARRAY_API set (and then runs), may be skipped here
    for w in caught:
        assert issubclass(w.category, SkipTestWarning), w
        assert "array_api" in str(w.message), w
