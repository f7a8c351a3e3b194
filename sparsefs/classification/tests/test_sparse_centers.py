"""SparseCenterClassifier / SparseCenterClassifierCV against independent references.

References: exhaustive search over **every** feature subset of the training objective, with each
per-feature minimum found by brute force (l1: every data value is tried, the cost being convex
piecewise linear; l2: the weighted mean, the stationary point of a convex quadratic);
scikit-learn's ``NearestCentroid`` (plain and ``metric="manhattan"``) for ``k = p``; its
``shrink_threshold`` (nearest shrunken centroids, PAM) for the two-class link; invariances of
the objective; ``cross_val_score`` of the plain classifier, refitted per ``k``, for the CV
estimator; the dense result for CSR input.
"""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.neighbors import NearestCentroid
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC

from sparsefs.classification import SparseCenterClassifier, SparseCenterClassifierCV
from sparsefs.datasets import make_planted_classification
from sparsefs.utils._sklearn_compat import InvalidParameterError


def _rho(t, norm):
    return t * t if norm == "l2" else np.abs(t)


def _class_weights(y, n_classes, balanced):
    """a_c: 1/n_c (balanced objective) or 1 (pooled)."""
    counts = np.bincount(y, minlength=n_classes)
    return 1.0 / counts if balanced else np.ones(n_classes)


def _objective(X, y, centers, norm, balanced, scale=None):
    """The training objective sum_c a_c sum_{j in c} rho((x_j - theta^c) / scale),
    evaluated directly."""
    a = _class_weights(y, centers.shape[0], balanced)
    scale = np.ones(X.shape[1]) if scale is None else scale
    return sum(a[c] * _rho((X[y == c] - centers[c]) / scale, norm).sum()
               for c in range(centers.shape[0]))


def _min_cost(x, w, norm):
    """min_t sum_j w_j rho(x_j - t) by brute force (l1: all data values; l2: weighted mean)."""
    if norm == "l2":
        t = np.sum(w * x) / np.sum(w)
        return np.sum(w * (x - t) ** 2)
    return min(np.sum(w * np.abs(x - t)) for t in np.unique(x))


def _exhaustive_minima(X, y, norm, balanced):
    """best[k] = min over ALL subsets D with |D| <= k of the objective with D free (X is
    already in the units of the objective)."""
    n_classes = y.max() + 1
    a = _class_weights(y, n_classes, balanced)
    p = X.shape[1]
    free = np.array([
        sum(_min_cost(X[y == c, i], np.full((y == c).sum(), a[c]), norm)
            for c in range(n_classes))
        for i in range(p)
    ])
    shared = np.array([_min_cost(X[:, i], a[y], norm) for i in range(p)])
    best = np.full(p + 1, np.inf)
    for size in range(p + 1):
        for D in itertools.combinations(range(p), size):
            mask = np.zeros(p, dtype=bool)
            mask[list(D)] = True
            value = free[mask].sum() + shared[~mask].sum()
            best[size:] = np.minimum(best[size:], value)
    return best


def _data(seed, n_classes, n, p, discrete):
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.arange(n_classes), rng.integers(0, n_classes, n - n_classes)])
    rng.shuffle(y)
    if discrete:  # few distinct values: ties in medians, gains and the top-k
        X = rng.integers(-1, 2, size=(n, p)).astype(float)
        X[:, 1] = X[:, 0]  # duplicated column: tied gains
    else:
        X = rng.normal(size=(n, p))
    X[:, p // 2] += 1.5 * y
    return X, y


@pytest.mark.parametrize("norm", ["l2", "l1"])
@pytest.mark.parametrize("objective", ["balanced", "pooled"])
@pytest.mark.parametrize(
    "n_classes,n,p,discrete,standardize",
    [(2, 13, 8, False, False), (2, 16, 10, True, False), (3, 14, 7, True, False),
     (3, 21, 9, False, False), (4, 19, 6, True, False), (3, 18, 8, False, True),
     (2, 15, 7, True, True)],
)
def test_centers_reach_the_exhaustive_minimum(norm, objective, n_classes, n, p, discrete,
                                              standardize):
    """Every k: the returned centers satisfy the k-sparsity constraint and their objective
    equals the minimum over all feature subsets (exhaustive search, brute-force minima). With
    standardize=True the objective is in the units of scale_ (X / scale_ for the search)."""
    X, y = _data(10 * n_classes + p, n_classes, n, p, discrete)
    balanced = objective == "balanced"
    scale = None
    if standardize:
        scale = SparseCenterClassifier(1, norm=norm, standardize=True).fit(X, y).scale_
    best = _exhaustive_minima(X if scale is None else X / scale, y, norm, balanced)
    for k in range(1, p + 1):
        clf = SparseCenterClassifier(k, norm=norm, objective=objective,
                                     standardize=standardize).fit(X, y)
        differs = np.any(clf.centers_ != clf.centers_[0], axis=0)
        assert differs.sum() <= k and not differs[~clf.support_].any()
        value = _objective(X, y, clf.centers_, norm, balanced, scale)
        assert value == pytest.approx(best[k], rel=1e-10, abs=1e-12), (k, value, best[k])
        assert clf.support_.sum() == k and np.all(clf.gains_ >= 0)
        # the objective drop equals the summed gains of the selected features
        base = _objective(X, y, np.tile(clf.shared_center_, (n_classes, 1)), norm, balanced,
                          scale)
        assert base - value == pytest.approx(clf.gains_[clf.support_].sum(), rel=1e-9, abs=1e-12)


def test_ties_in_gains_go_to_the_lower_index():
    """Spec 1.8.1: duplicated / equally informative features are taken by index."""
    X, y = _data(3, 2, 16, 10, discrete=True)
    X = np.column_stack([X[:, 5], X, X[:, 5]])  # copies of the planted column at 0, 6, 11
    for norm in ("l2", "l1"):
        clf = SparseCenterClassifier(2, norm=norm).fit(X, y)
        assert clf.gains_[0] == clf.gains_[6] == clf.gains_[11]
        assert np.flatnonzero(clf.support_).tolist() == [0, 6]
        assert clf.ranking_[11] == 3


@pytest.mark.parametrize("n_classes", [2, 3])
def test_k_equals_p_is_nearest_centroid(n_classes):
    """k = p: the class means and predictions of scikit-learn's NearestCentroid (l2)."""
    X, y = _data(1, n_classes, 60, 7, discrete=False)
    X_new = np.random.default_rng(9).normal(size=(40, 7)) * 2
    ref = NearestCentroid().fit(X, y)
    for objective in ("balanced", "pooled"):
        clf = SparseCenterClassifier(7, objective=objective).fit(X, y)
        np.testing.assert_allclose(clf.centers_, ref.centroids_, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(clf.predict(X_new), ref.predict(X_new))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_k_equals_p_is_nearest_median(n_classes):
    """k = p, l1: the class medians and predictions of NearestCentroid(metric="manhattan")."""
    X, y = _data(2, n_classes, 61, 7, discrete=False)
    X_new = np.random.default_rng(8).normal(size=(40, 7)) * 2
    ref = NearestCentroid(metric="manhattan").fit(X, y)
    clf = SparseCenterClassifier(7, norm="l1").fit(X, y)
    np.testing.assert_array_equal(clf.centers_, ref.centroids_)
    np.testing.assert_array_equal(clf.predict(X_new), ref.predict(X_new))


@pytest.mark.parametrize("norm", ["l2", "l1"])
def test_decision_on_selected_features_equals_full_distance_decision(norm):
    """O(k) decision = nearest center over ALL features (shared features cancel, spec 1.13)."""
    X, y = _data(4, 3, 45, 9, discrete=False)
    clf = SparseCenterClassifier(3, norm=norm).fit(X, y)
    X_new = np.random.default_rng(1).normal(size=(50, 9)) * 3
    full = np.stack([_rho(X_new - c, norm).sum(1) for c in clf.centers_], axis=1)
    np.testing.assert_array_equal(clf.predict(X_new), clf.classes_[np.argmin(full, axis=1)])
    if norm == "l1":  # minus the l1 distance to each center on the selected features
        on_support = np.stack(
            [np.abs(X_new[:, clf.support_] - c[clf.support_]).sum(1) for c in clf.centers_],
            axis=1)
        np.testing.assert_allclose(clf.decision_function(X_new), -on_support, rtol=1e-12)


def test_two_class_decisions_are_the_papers():
    """Two classes: l2 decision = 2 delta_D . (x - midpoint) (eq. 11); l1 = sum_D |x-mu-| -
    |x-mu+| (spec 1.7); classes_[1] exactly when the decision is > 0."""
    X, y = _data(5, 2, 40, 8, discrete=False)
    y = np.where(y == 1, "pos", "neg")
    X_new = np.random.default_rng(2).normal(size=(30, 8))
    clf = SparseCenterClassifier(3).fit(X, y)
    D = clf.support_
    pos, neg = X[y == "pos"].mean(0), X[y == "neg"].mean(0)
    expected = 2 * ((pos - neg)[D] * (X_new[:, D] - (pos + neg)[D] / 2)).sum(1)
    np.testing.assert_allclose(clf.decision_function(X_new), expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(
        clf.predict(X_new), np.where(expected > 0, "pos", "neg"))
    l1 = SparseCenterClassifier(3, norm="l1").fit(X, y)
    D = l1.support_
    mu_pos, mu_neg = np.median(X[y == "pos"], 0), np.median(X[y == "neg"], 0)
    expected = (np.abs(X_new[:, D] - mu_neg[D]) - np.abs(X_new[:, D] - mu_pos[D])).sum(1)
    np.testing.assert_allclose(l1.decision_function(X_new), expected, rtol=1e-12)


def test_zero_gain_support_gives_ties_to_the_first_class():
    """Features with no gain: the decision is 0 and every sample goes to classes_[0]."""
    X = np.tile(np.array([[1.0, 2.0, 3.0]]), (6, 1))
    y = np.array([3, 3, 3, 7, 7, 7])
    for norm in ("l2", "l1"):
        clf = SparseCenterClassifier(2, norm=norm).fit(X, y)
        assert clf.n_informative_ == 0 and np.all(clf.gains_ == 0)
        assert np.all(clf.decision_function(X + 1) == 0)
        assert np.all(clf.predict(X + 1) == 3)


@pytest.mark.parametrize("norm", ["l2", "l1"])
def test_selection_is_invariant_to_shifts_scale_and_feature_order(norm):
    """Spec 1.13: adding a constant to a feature, scaling X, permuting features."""
    X, y = _data(6, 3, 50, 12, discrete=False)
    X[:, 3] += 0.8 * (y == 2)
    ref = SparseCenterClassifier(4, norm=norm).fit(X, y)
    shift = np.random.default_rng(0).uniform(-100, 100, size=12)
    for Xt in (X + shift, 3.0 * X):
        got = SparseCenterClassifier(4, norm=norm).fit(Xt, y)
        np.testing.assert_array_equal(got.ranking_, ref.ranking_)
    np.testing.assert_allclose(
        SparseCenterClassifier(4, norm=norm).fit(X + shift, y).gains_, ref.gains_,
        rtol=1e-9, atol=1e-9)
    perm = np.random.default_rng(1).permutation(12)
    got = SparseCenterClassifier(4, norm=norm).fit(X[:, perm], y)
    np.testing.assert_array_equal(got.support_, ref.support_[perm])


def test_l1_is_robust_to_one_outlier_per_class_and_l2_is_not():
    """Spec 1.13: one outlier per class on a noise feature takes over the l2 ranking; the l1
    ranking keeps the informative features."""
    rng = np.random.default_rng(7)
    n, p = 60, 15
    y = np.arange(n) % 2
    X = rng.normal(size=(n, p))
    X[:, [2, 9]] += 1.2 * y[:, None]
    before = SparseCenterClassifier(2, norm="l1").fit(X, y)
    assert np.flatnonzero(before.support_).tolist() == [2, 9]
    X_out = X.copy()
    X_out[np.flatnonzero(y == 0)[0], 5] = -80.0
    X_out[np.flatnonzero(y == 1)[0], 5] = 80.0
    l2 = SparseCenterClassifier(2, norm="l2").fit(X_out, y)
    assert l2.ranking_[5] == 1
    l1 = SparseCenterClassifier(2, norm="l1").fit(X_out, y)
    np.testing.assert_array_equal(l1.support_, before.support_)
    assert l1.ranking_[5] > 2


def _pam_features(X, y, k):
    """Features kept by NearestCentroid(shrink_threshold) when it keeps exactly k (bisection)."""
    lo, hi = 0.0, 100.0
    for _ in range(200):
        mid = (lo + hi) / 2
        nc = NearestCentroid(shrink_threshold=mid).fit(X, y)
        kept = np.any(np.abs(nc.centroids_ - X.mean(0)) > 1e-12, axis=0)
        if kept.sum() == k:
            return kept
        lo, hi = (mid, hi) if kept.sum() > k else (lo, mid)
    raise AssertionError("no threshold keeps exactly k features")


def test_two_class_link_to_pam_after_standardisation():
    """Spec 1.11: with two classes, sparse-l2 on X / (s_i + s_0) keeps the features that
    hard-thresholded nearest shrunken centroids (scikit-learn's shrink_threshold) keeps."""
    rng = np.random.default_rng(11)
    n, p = 40, 30
    y = np.arange(n) % 2
    X = rng.normal(size=(n, p)) * rng.uniform(0.5, 3, size=p)
    X[:, :6] += rng.uniform(0.5, 2.0, size=6) * y[:, None]
    within = sum(((X[y == c] - X[y == c].mean(0)) ** 2).sum(0) for c in (0, 1))
    s = np.sqrt(within / (n - 2))
    X_std = X / (s + np.median(s))
    for k in (1, 3, 5):
        ours = SparseCenterClassifier(k).fit(X_std, y).support_
        np.testing.assert_array_equal(ours, _pam_features(X, y, k))
        built_in = SparseCenterClassifier(k, standardize=True).fit(X, y)
        np.testing.assert_array_equal(built_in.support_, ours)
        np.testing.assert_allclose(built_in.scale_, s + np.median(s), rtol=1e-12)
    # ...whereas on the raw scale the rules differ (raw mean difference vs standardised)
    raw = SparseCenterClassifier(5).fit(X, y).support_
    assert not np.array_equal(raw, _pam_features(X, y, 5))


@pytest.mark.parametrize("norm", ["l2", "l1"])
def test_sparse_input_equals_dense(norm):
    """CSR / CSC input gives the dense fit and predictions (never densified for l2), also
    standardised (scale from the moment identity on sparse input)."""
    rng = np.random.default_rng(12)
    X = rng.exponential(size=(50, 40)) * (rng.random((50, 40)) < 0.2)
    y = rng.integers(0, 3, 50)
    X[:, 7] += (y == 1) * rng.exponential(size=50)
    dense = SparseCenterClassifier(5, norm=norm, standardize=True).fit(X, y)
    for fmt in (sp.csr_array, sp.csc_matrix):
        got = SparseCenterClassifier(5, norm=norm, standardize=True).fit(fmt(X), y)
        np.testing.assert_allclose(got.gains_, dense.gains_, rtol=1e-12, atol=1e-15)
        np.testing.assert_array_equal(got.support_, dense.support_)
        np.testing.assert_allclose(got.centers_, dense.centers_, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(got.decision_function(fmt(X)), dense.decision_function(X),
                                   rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(got.predict(fmt(X)), dense.predict(X))
        assert sp.issparse(got.transform(fmt(X)))
    # extreme scales (the rescaled-copy path of the spread): the same selection and gains
    for c in (1e-300, 1e300):
        got = SparseCenterClassifier(5, norm=norm, standardize=True).fit(sp.csr_array(X * c), y)
        np.testing.assert_array_equal(got.support_, dense.support_)
        np.testing.assert_allclose(got.gains_, dense.gains_, rtol=1e-9)


@pytest.mark.parametrize("norm,standardize", [("l2", False), ("l1", False), ("l2", True)])
def test_cv_curve_equals_cross_val_score_of_the_plain_classifier(norm, standardize):
    """One fit per fold, accumulated along the ranking = refitting the plain classifier per k
    with scikit-learn's cross_val_score on the same stratified folds."""
    data = make_planted_classification(n_samples=60, n_features=40, random_state=3)
    grid = [1, 3, 8, 20, 40]
    cv = SparseCenterClassifierCV(n_features_grid=grid, norm=norm, cv=4, random_state=0,
                                  standardize=standardize)
    cv.fit(data.X, data.y)
    folds = StratifiedKFold(4, shuffle=True, random_state=0)
    for g, k in enumerate(grid):
        ref = cross_val_score(SparseCenterClassifier(k, norm=norm, standardize=standardize),
                              data.X, data.y, cv=folds)
        np.testing.assert_allclose(
            [cv.cv_results_[f"split{i}_test_score"][g] for i in range(4)], ref, atol=1e-12)
        assert cv.cv_results_["mean_test_score"][g] == pytest.approx(ref.mean())
        assert cv.cv_results_["std_test_score"][g] == pytest.approx(ref.std())
    mean = cv.cv_results_["mean_test_score"]
    best = grid[int(np.flatnonzero(mean == mean.max())[0])]
    assert cv.best_n_features_ == cv.n_features_to_select_ == best
    final = SparseCenterClassifier(best, norm=norm, standardize=standardize).fit(data.X, data.y)
    np.testing.assert_array_equal(cv.support_, final.support_)
    np.testing.assert_array_equal(cv.centers_, final.centers_)


def test_cv_default_grid_fixed_k_splitter_and_errors():
    data = make_planted_classification(n_samples=45, n_features=30, random_state=1)
    cv = SparseCenterClassifierCV(random_state=0).fit(data.X, data.y)
    assert cv.cv_results_["n_features"].tolist() == [1, 2, 5, 10, 20, 30]
    assert len([key for key in cv.cv_results_ if key.startswith("split")]) == 5
    fixed = SparseCenterClassifierCV(4, random_state=0).fit(data.X, data.y)
    assert fixed.n_features_to_select_ == 4 and fixed.best_n_features_ == cv.best_n_features_
    again = SparseCenterClassifierCV(random_state=0).fit(data.X, data.y)
    np.testing.assert_array_equal(again.cv_results_["mean_test_score"],
                                  cv.cv_results_["mean_test_score"])
    splitter = SparseCenterClassifierCV(cv=StratifiedKFold(3), n_features_grid=[2, 5])
    assert len(splitter.fit(data.X, data.y).cv_results_) == 6
    for bad in ([0, 2], [31], [], [1.5]):
        with pytest.raises(ValueError, match="n_features_grid"):
            SparseCenterClassifierCV(n_features_grid=bad).fit(data.X, data.y)
    # tiny classes: the number of folds is capped at the largest class
    tiny = SparseCenterClassifierCV(cv=5).fit(data.X[:6], np.array([0, 0, 0, 1, 1, 1]))
    assert len([key for key in tiny.cv_results_ if key.startswith("split")]) == 3


def test_cv_curve_plots_with_the_harness():
    """cv_results_ feeds sparsefs.plotting.plot_cv_curve (mean +- sd band, chosen k)."""
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from sparsefs.plotting import plot_cv_curve

    data = make_planted_classification(n_samples=45, n_features=30, random_state=2)
    cv = SparseCenterClassifierCV(random_state=0).fit(data.X, data.y)
    r = cv.cv_results_
    ax = plot_cv_curve(r["n_features"], r["mean_test_score"], r["std_test_score"],
                       cv.n_features_to_select_, ylabel="CV accuracy")
    assert ax.get_ylabel() == "CV accuracy" and len(ax.lines) >= 1
    import matplotlib.pyplot as plt

    plt.close(ax.figure)


def test_parameters_are_validated():
    X, y = _data(0, 2, 20, 5, discrete=False)
    with pytest.raises(InvalidParameterError, match="norm"):
        SparseCenterClassifier(norm="l3").fit(X, y)
    with pytest.raises(InvalidParameterError, match="objective"):
        SparseCenterClassifier(objective="auto").fit(X, y)
    with pytest.raises(ValueError, match="n_jobs=0"):
        SparseCenterClassifier(norm="l1", n_jobs=0).fit(X, y)
    assert SparseCenterClassifier(norm="l1", n_jobs=-2).fit(X, y).support_.sum() == 5
    assert SparseCenterClassifier().fit(X, y).n_features_to_select_ == 5  # min(10, p)
    X_wide = np.random.default_rng(0).normal(size=(20, 30))
    assert SparseCenterClassifier().fit(X_wide, y).n_features_to_select_ == 10


def test_fast_selection_equals_the_base_contract():
    """The estimator's faster _set_selection gives what SupportMixin._set_selection gives."""
    from sparsefs.base import SupportMixin

    X, y = _data(3, 2, 16, 10, discrete=True)  # many tied gains
    for norm in ("l2", "l1"):
        clf = SparseCenterClassifier(4, norm=norm).fit(X, y)
        ref = SparseCenterClassifier(4, norm=norm).fit(X, y)
        ref.n_features_to_select_ = 4
        SupportMixin._set_selection(ref, clf.gains_)
        for attr in ("scores_", "ranking_", "support_", "n_features_to_select_"):
            np.testing.assert_array_equal(getattr(clf, attr), getattr(ref, attr))


@pytest.mark.parametrize("norm", ["l2", "l1"])
def test_bad_inputs_both_norms(norm):
    """The common bad-input matrix runs on the default (l2) instance; repeat the numeric cases
    for l1: non-finite X is refused with scikit-learn's message (X is scanned only when the
    class statistics are not finite), huge/tiny values give no NaN, constants rank last."""
    X, y = _data(0, 3, 30, 6, discrete=False)
    for bad, word in ((np.nan, "NaN"), (np.inf, "infinity"), (-np.inf, "infinity")):
        Xb = X.copy()
        Xb[3, 2] = bad
        with pytest.raises(ValueError, match=word):
            SparseCenterClassifier(2, norm=norm).fit(Xb, y)
        with pytest.raises(ValueError, match=word):
            SparseCenterClassifier(2, norm=norm).fit(sp.csr_array(Xb), y)
        with pytest.raises(ValueError, match=word):
            SparseCenterClassifier(2, norm=norm).fit(X, y).predict(Xb)
    for scale in (1e300, 1e-300):
        clf = SparseCenterClassifier(2, norm=norm).fit(X * scale, y)
        assert not np.isnan(clf.scores_).any()
    Xc = X.copy()
    Xc[:, [0, 4]] = 0.1
    clf = SparseCenterClassifier(2, norm=norm).fit(Xc, y)
    assert np.all(clf.ranking_[[0, 4]] > 4) and np.all(clf.gains_[[0, 4]] == 0)
    with pytest.raises(ValueError, match="overflow"):
        SparseCenterClassifier(2, norm=norm).fit(np.vstack([X, -X]) * 1e307, np.r_[y, y])


def test_selector_in_a_pipeline_and_planted_recovery():
    """transform keeps the selected columns, so the classifier is a selector for an SVM."""
    data = make_planted_classification(n_samples=90, n_features=300, random_state=0)
    for norm in ("l2", "l1"):
        clf = SparseCenterClassifier(20, norm=norm).fit(data.X, data.y)
        assert (clf.support_ & data.support).sum() == 20
        pipe = make_pipeline(SparseCenterClassifier(20, norm=norm), LinearSVC()).fit(
            data.X, data.y)
        assert pipe[-1].n_features_in_ == 20 and pipe.score(data.X, data.y) > 0.9


def test_cv_is_deterministic_by_default_and_unshuffled():
    """Issue #31 row 10. Reference: scikit-learn's StratifiedKFold without shuffling (the
    folds of GridSearchCV(cv=5)): with random_state=None two fits give the same folds, scores
    and k, and the CV curve equals the one computed on those folds by hand."""
    data = make_planted_classification(n_samples=60, n_features=40, random_state=5)
    a = SparseCenterClassifierCV().fit(data.X, data.y)
    b = SparseCenterClassifierCV().fit(data.X, data.y)
    assert a.best_n_features_ == b.best_n_features_
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"],
                                  b.cv_results_["mean_test_score"])
    grid = a.cv_results_["n_features"]
    ref = SparseCenterClassifierCV(n_features_grid=grid, cv=StratifiedKFold(5)).fit(
        data.X, data.y)
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"],
                                  ref.cv_results_["mean_test_score"])


@pytest.mark.parametrize("standardize", [False, True])
@pytest.mark.parametrize("objective", ["balanced", "pooled"])
def test_l1_network_kernel_gives_the_same_fit_as_the_transposed_kernel(
    standardize, objective, monkeypatch
):
    """Small classes take the sorting-network kernel; forcing the transposed kernel (each
    class sorted by numpy) gives the same fitted classifier bit for bit: centers, gains,
    scale, ranking, support, decision scores and predictions (odd and even class sizes)."""
    from sparsefs._kernels import sparse_centers as kernel

    rng = np.random.default_rng(17)
    y = np.repeat([0, 1, 2], [31, 24, 40])
    rng.shuffle(y)
    X = rng.normal(size=(y.size, 300))
    X[:, :6] += y[:, None] * 0.8
    X[:, 6:20] = np.round(X[:, 6:20])  # ties
    Xt = rng.normal(size=(25, 300))

    def fit():
        return SparseCenterClassifier(8, norm="l1", objective=objective,
                                      standardize=standardize).fit(X, y)

    net = fit()
    with monkeypatch.context() as m:
        m.setattr(kernel, "_NETWORK_MAX_CLASS_SIZE", 0)
        old = fit()
    for name in ("class_centers_", "shared_center_", "gains_", "ranking_", "support_"):
        np.testing.assert_array_equal(getattr(net, name), getattr(old, name), err_msg=name)
    if standardize:
        np.testing.assert_array_equal(net.scale_, old.scale_)
    np.testing.assert_array_equal(net.decision_function(Xt), old.decision_function(Xt))
    np.testing.assert_array_equal(net.predict(Xt), old.predict(Xt))
