"""ClassSpecificSelector: per-class subsets, GF-CSFS one-vs-rest, the combined ranking.

Independent references: the per-class selector run by hand on each class's rows (SMBA-CSFS
style) or on the binarised, SMOTE-balanced labels built by hand with imbalanced-learn (GF-CSFS,
specs/smba-csfs.md A.9); a brute-force lexicographic sort and explicit set unions for the
combined ranking.
"""

import sys

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin

from sparsefs.datasets import make_planted_classification
from sparsefs.selection import ClassSpecificSelector, FisherScore, LaplacianScore


def _data(n_classes=3, n_samples=60, n_features=30, seed=0):
    d = make_planted_classification(n_samples=n_samples, n_features=n_features,
                                    n_classes=n_classes, n_informative=min(5, n_features),
                                    random_state=seed)
    return d.X, d.y


def _imbalanced(seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], [24, 9, 7])
    X = rng.normal(size=(y.size, 12))
    X[:, 3] += 2.0 * (y == 1)
    X[:, 7] -= 2.0 * (y == 2)
    return X, y


class _Recorder(SelectorMixin, BaseEstimator):
    """An unsupervised stub that ranks by variance and keeps what it was fitted on."""

    def __init__(self, n_features_to_select=1):
        self.n_features_to_select = n_features_to_select

    def fit(self, X, y=None):
        self.X_seen_ = np.array(X)
        self.y_seen_ = None if y is None else np.array(y)
        var = self.X_seen_.var(axis=0)
        order = np.argsort(-var, kind="stable")
        self.ranking_ = np.empty(X.shape[1], dtype=int)
        self.ranking_[order] = np.arange(1, X.shape[1] + 1)
        return self

    def _get_support_mask(self):
        return self.ranking_ <= self.n_features_to_select


def test_samples_strategy_equals_the_selector_on_each_class_by_hand():
    X, y = _data()
    m = 4
    sel = ClassSpecificSelector(LaplacianScore(n_neighbors=3), strategy="samples",
                                n_features_to_select=m).fit(X, y)
    for i, c in enumerate(sel.classes_):
        by_hand = LaplacianScore(n_neighbors=3, n_features_to_select=m).fit(X[y == c])
        np.testing.assert_array_equal(sel.class_rankings_[i], by_hand.ranking_)
        np.testing.assert_array_equal(sel.class_supports_[i], by_hand.support_)
        np.testing.assert_array_equal(np.sort(sel.class_features(i)),
                                      np.flatnonzero(by_hand.support_))


def test_samples_strategy_shows_the_selector_only_that_class_without_labels():
    X, y = _data()
    sel = ClassSpecificSelector(_Recorder(), n_features_to_select=2).fit(X, y)
    for i, c in enumerate(sel.classes_):
        np.testing.assert_array_equal(sel.estimators_[i].X_seen_, X[y == c])
        assert sel.estimators_[i].y_seen_ is None


def test_one_vs_rest_without_balancing_equals_a_binarised_run_by_hand():
    X, y = _data()
    sel = ClassSpecificSelector(FisherScore(), strategy="one_vs_rest", balance="none",
                                n_features_to_select=3).fit(X, y)
    for i, c in enumerate(sel.classes_):
        by_hand = FisherScore(n_features_to_select=3).fit(X, (y == c).astype(int))
        np.testing.assert_array_equal(sel.class_rankings_[i], by_hand.ranking_)


def test_one_vs_rest_with_smote_equals_a_balanced_binarised_run_by_hand():
    imblearn = pytest.importorskip("imblearn.over_sampling")
    X, y = _imbalanced()
    sel = ClassSpecificSelector(FisherScore(), strategy="one_vs_rest", balance="smote",
                                n_features_to_select=3, random_state=7).fit(X, y)
    # the documented seeds: one (selector, SMOTE) pair per class from random_state
    seeds = np.random.RandomState(7).randint(np.iinfo(np.int32).max, size=(3, 2))
    for i, c in enumerate(sel.classes_):
        yb = (y == c).astype(int)
        minority = min(yb.sum(), yb.size - yb.sum())
        smote = imblearn.SMOTE(k_neighbors=max(1, minority - 1), random_state=int(seeds[i, 1]))
        Xb, yb = smote.fit_resample(X, yb)
        assert np.bincount(yb)[0] == np.bincount(yb)[1]
        by_hand = FisherScore(n_features_to_select=3).fit(Xb, yb)
        np.testing.assert_array_equal(sel.class_rankings_[i], by_hand.ranking_)


def test_combined_ranking_is_best_rank_then_sum_then_index_and_support_the_union():
    X, y = _data(n_classes=4, n_samples=80)
    m = 3
    sel = ClassSpecificSelector("fisher_score", strategy="one_vs_rest", balance="none",
                                n_features_to_select=m).fit(X, y)
    R = sel.class_rankings_
    brute = sorted(range(X.shape[1]), key=lambda j: (R[:, j].min(), R[:, j].sum(), j))
    assert np.argsort(sel.ranking_).tolist() == brute
    union = set()
    for i in range(R.shape[0]):
        union |= set(np.flatnonzero(R[i] <= m).tolist())
    assert set(np.flatnonzero(sel.support_).tolist()) == union
    assert sel.n_features_to_select_ == len(union) and sel.n_features_per_class_ == m
    np.testing.assert_array_equal(sel.support_, sel.ranking_ <= len(union))
    np.testing.assert_array_equal(sel.class_supports_.sum(axis=1), [m] * 4)


def test_a_supervised_selector_needs_one_vs_rest():
    X, y = _data()
    with pytest.raises(ValueError, match="one_vs_rest"):
        ClassSpecificSelector(FisherScore(), strategy="samples").fit(X, y)


def test_defaults_and_stems():
    X, y = _data(n_features=12)
    sel = ClassSpecificSelector("laplacian_score").fit(X, y)
    assert isinstance(sel.estimators_[0], LaplacianScore)
    assert sel.n_features_per_class_ == 12  # None: min(20, n_features)
    with pytest.raises(ValueError, match="unknown method"):
        ClassSpecificSelector("no_such_stem").fit(X, y)


def test_default_selector_is_smba():
    smba = pytest.importorskip("sparsefs.selection._smba")
    X, y = _data(n_features=10, n_samples=30)
    sel = ClassSpecificSelector(n_features_to_select=2).fit(X, y)
    assert all(isinstance(e, smba.SMBA) for e in sel.estimators_)


def test_missing_imbalanced_learn_is_a_clear_import_error(monkeypatch):
    X, y = _imbalanced()
    monkeypatch.setitem(sys.modules, "imblearn", None)
    monkeypatch.setitem(sys.modules, "imblearn.over_sampling", None)
    with pytest.raises(ImportError, match=r'pip install "sparsefs\[smote\]"'):
        ClassSpecificSelector(FisherScore(), strategy="one_vs_rest").fit(X, y)
    # balance="none" needs no extra
    ClassSpecificSelector(FisherScore(), strategy="one_vs_rest", balance="none").fit(X, y)


def test_same_seed_same_result():
    pytest.importorskip("imblearn")
    X, y = _imbalanced(1)
    a = ClassSpecificSelector("relieff", strategy="one_vs_rest", random_state=3,
                              n_features_to_select=2).fit(X, y)
    b = ClassSpecificSelector("relieff", strategy="one_vs_rest", random_state=3,
                              n_features_to_select=2).fit(X, y)
    np.testing.assert_array_equal(a.class_rankings_, b.class_rankings_)


def test_smote_repeats_a_lone_row_and_interpolates_the_others():
    pytest.importorskip("imblearn")
    from sparsefs.selection._class_specific import smote_resample

    X, y = _imbalanced()
    y = y.copy()
    y[0] = 5  # a class with one row
    Xr, yr = smote_resample(X, y, 4, 0)
    np.testing.assert_array_equal(np.unique(yr, return_counts=True)[1], [23, 23, 23, 23])
    lone = Xr[yr == 5]
    np.testing.assert_array_equal(lone, np.repeat(X[:1], 23, axis=0))
    np.testing.assert_array_equal(Xr[: X.shape[0]], X)  # originals first


@pytest.mark.parametrize("scale", [1e-300, 2.0**-900, 1e300, 2.0**900])
@pytest.mark.parametrize("sparse", [False, True])
def test_smote_is_unit_free(scale, sparse):
    """Issue #31 row 9. Reference: imbalanced-learn's SMOTE on X at scale 1. At 1e+-300 its
    squared neighbour distances overflow or underflow; sparsefs's smote_resample must give
    ``scale`` times the scale-1 rows (the originals exactly; the synthetic ones to rounding,
    exactly for a power-of-two scale)."""
    import scipy.sparse as sparse_mod
    from imblearn.over_sampling import SMOTE

    from sparsefs.selection._class_specific import smote_resample

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 5))
    y = np.repeat([0, 1], [28, 12])
    ref_X, ref_y = SMOTE(k_neighbors=3, random_state=7).fit_resample(X, y)
    data = X * scale
    got_X, got_y = smote_resample(sparse_mod.csr_matrix(data) if sparse else data, y, 3, 7)
    got_X = got_X.toarray() if sparse else got_X
    np.testing.assert_array_equal(got_y, ref_y)
    np.testing.assert_array_equal(got_X[:40], data)
    exact = np.frexp(scale)[0] == 0.5
    np.testing.assert_allclose(got_X / scale, ref_X, rtol=0 if exact else 1e-12, atol=0)
