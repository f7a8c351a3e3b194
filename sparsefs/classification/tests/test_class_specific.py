"""ClassSpecificEnsembleClassifier: leak-free SMOTE, members, decision rule, fit_path.

Independent references: a recording stub selector and a recording wrapper of the SMOTE step
that store fingerprints of every row they see, checked against scikit-learn's own
``cross_val_score`` folds; per-class linear SVMs fitted by hand on each class's columns; the
literal decision rule of ``sparsefs._kernels.class_specific.ensemble_decision`` applied to the
members' predictions; separate fits for ``fit_path``.
"""

import json
import sys

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.svm import SVC

from sparsefs._kernels.class_specific import ensemble_decision
from sparsefs.classification import ClassSpecificEnsembleClassifier
from sparsefs.classification import _class_specific as module
from sparsefs.selection import ClassSpecificSelector, FisherScore


def _imbalanced(seed=0, n_features=15):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], [30, 12, 9])
    X = rng.normal(size=(y.size, n_features))
    X[:, 3] += 2.5 * (y == 1)
    X[:, 7] -= 2.5 * (y == 2)
    X[:, 11] += 1.5 * (y == 0)
    return X, y


def _fingerprints(X):
    return {np.asarray(r, dtype=np.float64).tobytes() for r in np.asarray(X)}


class RecordingClassSelector(BaseEstimator):
    """Class rankings by one-vs-rest mean difference; logs the rows (bytes, hex) it sees."""

    def __init__(self, log=None, n_features_to_select=1, random_state=None):
        self.log = log
        self.n_features_to_select = n_features_to_select
        self.random_state = random_state

    def fit(self, X, y):
        X = np.asarray(X, dtype=np.float64)
        if self.log is not None:
            with open(self.log, "a") as fh:
                fh.write(json.dumps({"who": "selector",
                                     "rows": [r.tobytes().hex() for r in X]}) + "\n")
        classes = np.unique(y)
        ranks = []
        for c in classes:
            gap = np.abs(X[y == c].mean(axis=0) - X[y != c].mean(axis=0))
            order = np.argsort(-gap, kind="stable")
            r = np.empty(X.shape[1], dtype=int)
            r[order] = np.arange(1, X.shape[1] + 1)
            ranks.append(r)
        self.class_rankings_ = np.array(ranks)
        return self


def test_no_test_row_reaches_smote_or_the_selector(tmp_path, monkeypatch):
    pytest.importorskip("imblearn")
    log = tmp_path / "seen.jsonl"
    original = module.smote_resample

    def recording_smote(X, y, k, seed):
        with open(log, "a") as fh:
            fh.write(json.dumps({"who": "smote",
                                 "rows": [np.asarray(r, np.float64).tobytes().hex()
                                          for r in X]}) + "\n")
        return original(X, y, k, seed)

    monkeypatch.setattr(module, "smote_resample", recording_smote)
    X, y = _imbalanced()
    cv = StratifiedKFold(n_splits=3, shuffle=True, random_state=0)
    clf = ClassSpecificEnsembleClassifier(RecordingClassSelector(log=str(log)),
                                          n_features_to_select=3, random_state=0)
    scores = cross_val_score(clf, X, y, cv=cv)
    assert np.all(scores > 0.5)
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    by_who = {"smote": [], "selector": []}
    for e in entries:
        by_who[e["who"]].append({bytes.fromhex(h) for h in e["rows"]})
    assert len(by_who["smote"]) == 3 and len(by_who["selector"]) == 3
    for fold, (train, test) in enumerate(cv.split(X, y)):
        test_rows = _fingerprints(X[test])
        train_rows = _fingerprints(X[train])
        smote_seen, selector_seen = by_who["smote"][fold], by_who["selector"][fold]
        assert smote_seen == train_rows  # exactly the training rows enter SMOTE
        assert test_rows.isdisjoint(smote_seen)
        assert test_rows.isdisjoint(selector_seen)  # originals + synthetic, no test row
        assert train_rows <= selector_seen and len(selector_seen) > len(train_rows)


def test_members_are_svms_on_all_rows_restricted_to_each_class_features():
    X, y = _imbalanced()
    m = 4
    clf = ClassSpecificEnsembleClassifier(
        ClassSpecificSelector(FisherScore(), strategy="one_vs_rest", balance="none"),
        n_features_to_select=m, balance="none", random_state=0,
    ).fit(X, y)
    assert len(clf.estimators_) == 3
    for i, (est, cols) in enumerate(zip(clf.estimators_, clf.class_features_, strict=True)):
        np.testing.assert_array_equal(cols, np.argsort(clf.class_rankings_[i],
                                                       kind="stable")[:m])
        by_hand = SVC(kernel="linear", C=1.0).fit(X[:, cols], np.searchsorted(clf.classes_, y))
        np.testing.assert_array_equal(est.classes_, [0, 1, 2])  # every class, all rows
        np.testing.assert_allclose(est.coef_, by_hand.coef_, atol=1e-10)
    union = set().union(*(set(c.tolist()) for c in clf.class_features_))
    assert set(np.flatnonzero(clf.support_).tolist()) == union
    assert clf.n_features_per_class_ == m and clf.n_features_to_select_ == len(union)


def test_predict_is_the_decision_rule_on_the_members_predictions():
    X, y = _imbalanced(2)
    for rule in ("code", "restricted"):
        clf = ClassSpecificEnsembleClassifier("fisher_score", n_features_to_select=1,
                                              balance="none", tie_rule=rule,
                                              random_state=1).fit(X, y)
        members = clf.predict_members(X)
        P = np.searchsorted(clf.classes_, members)
        expected = ensemble_decision(P, clf._tie_draws(X), rule)
        np.testing.assert_array_equal(clf.predict(X), clf.classes_[expected])
        votes = clf.predict_votes(X)
        np.testing.assert_array_equal(votes.sum(axis=1), [3] * X.shape[0])


def test_predictions_do_not_depend_on_the_batch_and_are_seeded():
    X, y = _imbalanced(3)
    clf = ClassSpecificEnsembleClassifier("fisher_score", n_features_to_select=1,
                                          random_state=4).fit(X, y)
    whole = clf.predict(X)
    parts = np.concatenate([clf.predict(X[i:i + 7]) for i in range(0, X.shape[0], 7)])
    np.testing.assert_array_equal(whole, parts)
    again = ClassSpecificEnsembleClassifier("fisher_score", n_features_to_select=1,
                                            random_state=4).fit(X, y)
    np.testing.assert_array_equal(again.predict(X), whole)


def test_smote_inside_fit_balances_what_the_members_see():
    pytest.importorskip("imblearn")

    class Counting(ClassifierMixin, BaseEstimator):
        def fit(self, X, y):
            self.counts_ = np.bincount(y)
            self.classes_ = np.unique(y)
            return self

        def predict(self, X):
            return np.zeros(X.shape[0], dtype=int)

    X, y = _imbalanced()
    clf = ClassSpecificEnsembleClassifier("fisher_score", Counting(), n_features_to_select=2,
                                          random_state=0).fit(X, y)
    for est in clf.estimators_:
        np.testing.assert_array_equal(est.counts_, [30, 30, 30])
    plain = ClassSpecificEnsembleClassifier("fisher_score", Counting(), n_features_to_select=2,
                                            balance="none").fit(X, y)
    np.testing.assert_array_equal(plain.estimators_[0].counts_, [30, 12, 9])


def test_fit_path_equals_separate_fits():
    pytest.importorskip("imblearn")
    X, y = _imbalanced(5)
    clf = ClassSpecificEnsembleClassifier("fisher_score", random_state=2)
    grid = [1, 3, 6]
    models = clf.fit_path(X, y, grid)
    assert not hasattr(clf, "estimators_")  # the template is not modified
    for m, model in zip(grid, models, strict=True):
        single = ClassSpecificEnsembleClassifier("fisher_score", n_features_to_select=m,
                                                 random_state=2).fit(X, y)
        assert model.n_features_to_select == m
        np.testing.assert_array_equal(model.support_, single.support_)
        np.testing.assert_array_equal(model.predict(X), single.predict(X))
    with pytest.raises(ValueError, match="n_features_to_select=99"):
        clf.fit_path(X, y, [1, 99])


def test_stems_choose_the_strategy():
    X, y = _imbalanced()
    clf = ClassSpecificEnsembleClassifier("fisher_score", n_features_to_select=2,
                                          balance="none").fit(X, y)
    assert clf.selector_.strategy == "one_vs_rest"  # GF-CSFS for a supervised method
    clf = ClassSpecificEnsembleClassifier("laplacian_score", n_features_to_select=2,
                                          balance="none").fit(X, y)
    assert clf.selector_.strategy == "samples"


def test_a_selector_without_class_rankings_is_refused():
    X, y = _imbalanced()
    with pytest.raises(TypeError, match="class_rankings_"):
        ClassSpecificEnsembleClassifier(FisherScore(), n_features_to_select=2,
                                        balance="none").fit(X, y)


def test_missing_imbalanced_learn_is_a_clear_import_error(monkeypatch):
    X, y = _imbalanced()
    monkeypatch.setitem(sys.modules, "imblearn", None)
    monkeypatch.setitem(sys.modules, "imblearn.over_sampling", None)
    with pytest.raises(ImportError, match=r'pip install "sparsefs\[smote\]"'):
        ClassSpecificEnsembleClassifier("fisher_score", n_features_to_select=2).fit(X, y)


def test_default_is_smba_csfs():
    pytest.importorskip("sparsefs.selection._smba")
    X, y = _imbalanced(n_features=12)
    clf = ClassSpecificEnsembleClassifier(n_features_to_select=2, balance="none",
                                          random_state=0).fit(X, y)
    assert clf.selector_.strategy == "samples"
    assert type(clf.selector_.estimators_[0]).__name__ == "SMBA"


@pytest.mark.parametrize("balance", ["smote", "none"])
def test_a_class_with_one_training_row(balance):
    """DLBCL has classes of 2 samples: some training folds hold one (specs A.11)."""
    pytest.importorskip("imblearn")
    pytest.importorskip("sparsefs.selection._smba")
    X, y = _imbalanced(4, n_features=12)
    y = y.copy()
    y[0] = 3  # a fourth class with a single row
    clf = ClassSpecificEnsembleClassifier(n_features_to_select=2, balance=balance,
                                          random_state=0).fit(X, y)
    assert clf.class_rankings_.shape == (4, 12)
    assert all(e.classes_.size == 4 for e in clf.estimators_)
    assert set(clf.predict(X)) <= set(clf.classes_)


def test_rescale_option_extreme_keeps_the_data_max_abs_is_unit_free():
    """``rescale="extreme"`` (default) fits the paper's SVMs on X as given at ordinary scales;
    ``"max_abs"`` is unit-free: fits on X and X * s predict identically (independent check:
    the same fit by hand on X / max|X|)."""
    from sklearn.svm import SVC

    from sparsefs.classification import ClassSpecificEnsembleClassifier

    rng = np.random.default_rng(3)
    y = np.repeat([0, 1, 2], 15)
    X = rng.normal(size=(45, 12)) + 1.5 * np.eye(3)[y] @ rng.normal(size=(3, 12))
    params = {"selector": "fisher_score", "n_features_to_select": 3, "random_state": 0}
    default = ClassSpecificEnsembleClassifier(**params).fit(X, y)
    assert default.scale_ == 1.0
    cols = default.class_features_[0]
    ref = SVC(kernel="linear", C=1.0).fit(X[:, cols], y)
    np.testing.assert_allclose(default.estimators_[0].coef_, ref.coef_, atol=1e-10)
    free = ClassSpecificEnsembleClassifier(rescale="max_abs", **params).fit(X, y)
    assert free.scale_ == np.abs(X).max()
    scaled = ClassSpecificEnsembleClassifier(rescale="max_abs", **params).fit(X * 1e300, y)
    np.testing.assert_array_equal(scaled.predict(X * 1e300), free.predict(X))
    # the default at an extreme scale: rescaled, finite, no overflow
    big = ClassSpecificEnsembleClassifier(**params).fit(X * 1e300, y)
    assert big.scale_ == np.abs(X * 1e300).max()
    assert set(big.predict(X * 1e300)) <= {0, 1, 2}
