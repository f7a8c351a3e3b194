"""FisherScore against independent references.

References: the definition computed by explicit per-class loops (brute force); scikit-learn's
``f_classif`` (ANOVA F, a monotone transform: identical ranking, equal F and p-values) and
``SelectFdr`` (the ``n_features_to_select=None`` rule); invariances of the statistic; the
peers' regression tests (`specs/peers.md` §5.2 items 1, 2, 6, 7, 9).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import spearmanr
from sklearn.feature_selection import SelectFdr, SelectKBest, f_classif
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC

from sparsefs.datasets import make_planted_classification
from sparsefs.exceptions import NoFeatureSelectedWarning
from sparsefs.selection import FisherScore, fisher_score


def _fisher_by_definition(X, y):
    scores = []
    for j in range(X.shape[1]):
        x, m = X[:, j], X[:, j].mean()
        between = sum((y == c).sum() * (x[y == c].mean() - m) ** 2 for c in np.unique(y))
        within = sum(((x[y == c] - x[y == c].mean()) ** 2).sum() for c in np.unique(y))
        scores.append(between / within)
    return np.array(scores)


@pytest.fixture(scope="module")
def planted():
    return make_planted_classification(random_state=0)


def test_matches_definition():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(37, 9)) * rng.uniform(0.1, 50, size=9) + rng.normal(size=9) * 100
    y = rng.integers(0, 4, size=37)
    X[:, 3] += y
    np.testing.assert_allclose(FisherScore(3).fit(X, y).fisher_scores_,
                               _fisher_by_definition(X, y), rtol=1e-10)


def test_rank_identical_to_f_classif(planted):
    est = FisherScore(n_features_to_select=20).fit(planted.X, planted.y)
    F, p = f_classif(planted.X, planted.y)
    assert spearmanr(est.scores_, F).statistic == pytest.approx(1.0)
    np.testing.assert_array_equal(np.argsort(-est.scores_, kind="stable"),
                                  np.argsort(-F, kind="stable"))
    np.testing.assert_allclose(est.f_statistic_, F, rtol=1e-9)
    np.testing.assert_allclose(est.pvalues_, p, rtol=1e-6, atol=1e-300)


def test_planted_recovery_20_of_20(planted):
    # peers.md §5.2 item 1: a correct Fisher score finds all 20 planted features at random indices
    assert not planted.support[:20].all()
    est = FisherScore(n_features_to_select=20).fit(planted.X, planted.y)
    assert (est.support_ & planted.support).sum() == 20
    kbest = SelectKBest(fisher_score, k=20).fit(planted.X, planted.y)
    np.testing.assert_array_equal(kbest.get_support(), est.support_)


def test_none_rule_is_benjamini_hochberg(planted):
    for fdr in (0.01, 0.05, 0.2):
        est = FisherScore(fdr=fdr).fit(planted.X, planted.y)
        ref = SelectFdr(f_classif, alpha=fdr).fit(planted.X, planted.y)
        np.testing.assert_array_equal(est.support_, ref.get_support())
        assert est.support_.sum() >= 20


def test_none_rule_can_select_nothing():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 20)), np.arange(30) % 2
    with pytest.warns(NoFeatureSelectedWarning):
        est = FisherScore(fdr=1e-12).fit(X, y)
    assert est.support_.sum() == 0 and est.n_features_to_select_ == 0


def test_none_rule_needs_more_samples_than_classes():
    X, y = np.arange(6.0).reshape(3, 2), np.array([0, 1, 2])
    with pytest.raises(ValueError, match="more samples than classes"):
        FisherScore().fit(X, y)
    est = FisherScore(n_features_to_select=1).fit(X, y)
    assert np.isnan(est.pvalues_).all() and np.isinf(est.f_statistic_).all()


def test_perfect_separator_is_infinite_and_first():
    # featrs/featrs#147: perfect separators must rank first, not get F = 0
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 10)
    X = rng.normal(size=(30, 5))
    X[:, 3] = y * 2.0
    est = FisherScore(n_features_to_select=1).fit(X, y)
    assert est.scores_[3] == np.inf and est.ranking_[3] == 1


def test_constant_feature_scores_zero_and_ranks_last():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 5))
    X[:, 1] = 4.2
    y = np.arange(30) % 2
    est = FisherScore(n_features_to_select=2).fit(X, y)
    assert est.scores_[1] == 0.0 and est.ranking_[1] == 5


def test_duplicate_columns_tie_and_lower_index_first():
    X, y = make_planted_classification(n_samples=40, n_features=30, random_state=2).as_tuple()
    X = np.column_stack([X[:, :5], X[:, 4], X[:, 5:]])
    est = FisherScore(n_features_to_select=3).fit(X, y)
    assert est.scores_[4] == est.scores_[5]
    assert est.ranking_[5] == est.ranking_[4] + 1


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_equals_dense(fmt):
    rng = np.random.default_rng(0)
    X = sp.random_array((80, 300), density=0.05, format=fmt, random_state=0)
    y = rng.integers(0, 3, size=80)
    dense = FisherScore(n_features_to_select=10).fit(X.toarray(), y)
    sparse = FisherScore(n_features_to_select=10).fit(X, y)
    np.testing.assert_allclose(sparse.scores_, dense.scores_, rtol=1e-9)
    np.testing.assert_array_equal(sparse.support_, dense.support_)
    assert sp.issparse(sparse.transform(X))


def test_shift_scale_and_permutation_invariance(planted):
    X, y = planted.X[:, :200], planted.y
    base = FisherScore(n_features_to_select=10).fit(X, y)
    rng = np.random.default_rng(3)
    scaled = X * rng.uniform(1e-3, 1e3, size=200) + rng.normal(size=200) * 1e3
    np.testing.assert_allclose(FisherScore(10).fit(scaled, y).scores_, base.scores_, rtol=1e-6)
    for factor in (1e300, 1e-300):
        np.testing.assert_allclose(FisherScore(10).fit(X * factor, y).scores_, base.scores_,
                                   rtol=1e-9)
    perm = rng.permutation(200)
    np.testing.assert_array_equal(FisherScore(10).fit(X[:, perm], y).scores_, base.scores_[perm])
    rows = rng.permutation(X.shape[0])
    np.testing.assert_allclose(FisherScore(10).fit(X[rows], y[rows]).scores_, base.scores_,
                               rtol=1e-12)


def test_string_labels_and_float32(planted):
    labels = np.array(["ALL", "AML", "MLL"])[planted.y]
    a = FisherScore(20).fit(planted.X, labels)
    b = FisherScore(20).fit(planted.X.astype(np.float32), planted.y)
    np.testing.assert_array_equal(a.support_, b.support_)
    assert b.scores_.dtype == np.float64


def test_in_a_pipeline(planted):
    pipe = make_pipeline(FisherScore(n_features_to_select=20), LinearSVC()).fit(planted.X,
                                                                               planted.y)
    assert pipe.score(planted.X, planted.y) > 0.9
