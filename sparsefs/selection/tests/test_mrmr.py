"""MRMR against independent references.

References: a brute-force greedy mRMR written here (every criterion recomputed in full at every
step, relevance and redundancy from ``sklearn.metrics.mutual_info_score`` on the three-state
codes, from ``sklearn.feature_selection.f_classif`` and ``numpy.corrcoef``, or from scikit-learn's
KSG ``mutual_info_classif`` / ``mutual_info_regression``); the peers' regression test
(specs/peers.md §5.2 item 12: a discrete estimator run on raw continuous values recovers ~0/20);
planted-signal recovery.
"""

import warnings

import numpy as np
import pytest
from scipy.special import digamma
from sklearn.feature_selection import f_classif, mutual_info_classif, mutual_info_regression
from sklearn.metrics import mutual_info_score

from sparsefs._kernels.mutual_info import three_state_codes
from sparsefs.datasets import make_planted_classification
from sparsefs.selection import MRMR


def _brute_force(relevance, redundancy, k, quotient, floor=1e-12):
    """Greedy mRMR with the full criterion recomputed for every candidate at every step."""
    selected = [int(np.argmax(relevance))]
    while len(selected) < k:
        best, best_j = -np.inf, None
        for j in range(relevance.size):
            if j in selected:
                continue
            r = np.mean([redundancy[j, s] for s in selected])
            c = relevance[j] / max(r, floor) if quotient else relevance[j] - r
            if c > best:
                best, best_j = c, j
        selected.append(best_j)
    return selected


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(0)
    n, d = 60, 25
    y = rng.integers(0, 3, size=n)
    X = rng.normal(size=(n, d))
    X[:, [3, 8, 11]] += np.outer(y, [1.0, 0.8, -0.6])
    X[:, 15] = X[:, 3] + 0.3 * rng.normal(size=n)  # redundant copy of a relevant feature
    return X, y


@pytest.mark.parametrize("criterion", ["mid", "miq"])
def test_three_state_equals_brute_force(small, criterion):
    X, y = small
    codes = three_state_codes(X)
    d = X.shape[1]
    rel = np.array([mutual_info_score(codes[:, j], y) for j in range(d)])
    red = np.array([[mutual_info_score(codes[:, i], codes[:, j]) for j in range(d)]
                    for i in range(d)])
    est = MRMR(n_features_to_select=8, criterion=criterion).fit(X, y)
    floor = 2 / X.shape[0]  # (3 - 1)(3 - 1) / (2n): the plug-in estimate's null level
    assert est.selection_order_.tolist() == _brute_force(rel, red, 8, criterion == "miq", floor)
    np.testing.assert_allclose(est.relevance_, rel, atol=1e-12)


@pytest.mark.parametrize("criterion", ["fcd", "fcq"])
def test_f_correlation_equals_brute_force(small, criterion):
    X, y = small
    rel = f_classif(X, y)[0]
    red = np.abs(np.corrcoef(X.T))
    est = MRMR(n_features_to_select=8, criterion=criterion).fit(X, y)
    floor = np.sqrt(2 / (np.pi * (X.shape[0] - 1)))  # E|r| for independent Gaussian columns
    assert est.selection_order_.tolist() == _brute_force(rel, red, 8, criterion == "fcq", floor)
    np.testing.assert_allclose(est.relevance_, rel, rtol=1e-9)


def _ross_reference(X, y, k, seed):
    """Ross's estimate written out sample by sample (numpy), on X scaled and jittered as
    scikit-learn does (standard normal noise from ``RandomState(seed)``)."""
    n = X.shape[0]
    Xs = X / X.std(0)
    Xs = Xs + 1e-10 * np.maximum(1, np.abs(Xs).mean(0)) * np.random.RandomState(seed).normal(
        size=X.shape)
    out = []
    for x in Xs.T:
        total = 0.0
        for i in range(n):
            same = np.flatnonzero((y == y[i]) & (np.arange(n) != i))
            r = np.nextafter(np.sort(np.abs(x[same] - x[i]))[k - 1], 0)
            m = (np.abs(x - x[i]) <= r).sum()
            total += digamma(k) - digamma(same.size + 1) - digamma(m)
        out.append(max(0.0, digamma(n) + total / n))
    return np.array(out)


@pytest.mark.parametrize("k", [3, 10])
def test_ksg_equals_brute_force_with_sklearn_estimates(small, k):
    """Relevance: ``mutual_info_classif`` for k = 3; for k = 10 (at least half a class here)
    scikit-learn switches to brute-force neighbour distances whose rounding shifts the counts,
    so the exact estimate written out in numpy is the reference. Redundancy:
    ``mutual_info_regression`` (exact KD-tree search at both k)."""
    X, y = small
    d = X.shape[1]
    rel = (mutual_info_classif(X, y, n_neighbors=k, random_state=0) if k == 3
           else _ross_reference(X, y, k, 0))
    red = np.array([mutual_info_regression(X, X[:, j], n_neighbors=k, random_state=0)
                    for j in range(d)]).T
    est = MRMR(n_features_to_select=6, mi_estimator="ksg", n_neighbors=k,
               random_state=0).fit(X, y)
    np.testing.assert_allclose(est.relevance_, rel, atol=1e-10)
    assert est.selection_order_.tolist() == _brute_force(rel, red, 6, False)
    miq = MRMR(n_features_to_select=6, criterion="miq", mi_estimator="ksg", n_neighbors=k,
               random_state=0).fit(X, y)
    assert 0 < miq.quotient_floor_ < 0.1  # the KSG estimate's null level, from a permutation
    assert miq.selection_order_.tolist() == _brute_force(rel, red, 6, True, miq.quotient_floor_)


def test_ksg_quotient_floor_is_the_null_level():
    """The KSG floor is the mean estimate for independent variables: it matches the mean of
    scikit-learn's ``mutual_info_regression`` between independent Gaussian columns."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(100, 300))
    y = rng.integers(0, 3, size=100)
    est = MRMR(n_features_to_select=3, criterion="miq", mi_estimator="ksg",
               random_state=0).fit(X, y)
    ref = mutual_info_regression(X[:, 1:201], X[:, 0], n_neighbors=10, random_state=0).mean()
    assert abs(est.quotient_floor_ - ref) < 0.5 * ref


def test_lazy_evaluation_saves_work(small):
    X, y = small
    est = MRMR(n_features_to_select=8).fit(X, y)
    assert est.n_evaluations_ < 7 * (X.shape[1] - 1)


@pytest.fixture(scope="module")
def planted():
    return make_planted_classification(random_state=0)


@pytest.mark.parametrize("criterion", ["mid", "fcd", "fcq"])
def test_planted_recovery(planted, criterion):
    """>= 18/20 planted features at random indices (the issue's acceptance; 19, 20, 19
    measured)."""
    est = MRMR(n_features_to_select=20, criterion=criterion).fit(planted.X, planted.y)
    assert (est.support_ & planted.support).sum() >= 18


def test_no_discrete_estimator_on_raw_continuous_values(planted):
    """§5.2 item 12. Treating each distinct float as a symbol (scikit-feature's MRMR) makes every
    feature look maximally informative - recovery at chance - while the explicit, documented
    discretisation recovers >= 18/20 (and MIQ, the weakest variant here, 17/20: the quotient
    prefers features independent of the selected ones, and all planted features share the class
    structure; 15/20 before its denominator was floored at the estimator's null level)."""
    X, y = planted.X[:, :400], planted.y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # scikit-learn: "expects discrete values"
        raw = np.array([mutual_info_score(X[:, j], y) for j in range(X.shape[1])])
    assert np.ptp(raw) < 1e-12  # all features tie: the raw-symbol estimate carries no signal
    est = MRMR(n_features_to_select=20).fit(planted.X, planted.y)
    assert (est.support_ & planted.support).sum() >= 18
    miq = MRMR(n_features_to_select=20, criterion="miq").fit(planted.X, planted.y)
    assert (miq.support_ & planted.support).sum() >= 17
    assert miq.quotient_floor_ == 2 / planted.X.shape[0]


def test_planted_recovery_ksg(planted):
    """KSG relevance and redundancy with the default k = 10: >= 18/20 (18 measured; k = 3, the
    scikit-learn default, gives 15/20: see the class docstring). MIQ-KSG stays weak (5/20
    measured, 3/20 before the quotient floor) and is only checked to beat chance."""
    est = MRMR(n_features_to_select=20, mi_estimator="ksg", random_state=0)
    est.fit(planted.X, planted.y)
    assert (est.support_ & planted.support).sum() >= 18
    miq = MRMR(n_features_to_select=20, criterion="miq", mi_estimator="ksg", random_state=0)
    miq.fit(planted.X, planted.y)
    assert (miq.support_ & planted.support).sum() >= 4


def test_small_subsets_give_no_nan():
    """§5.2 item 12 (mifs "All-NaN slice", mRMRe NA scores): tiny data, constant columns."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(5, 6))
    X[:, 2] = 1.0
    y = np.array([0, 0, 1, 1, 2])
    for criterion in ("mid", "miq", "fcd", "fcq"):
        est = MRMR(n_features_to_select=6, criterion=criterion).fit(X, y)
        assert not np.isnan(est.scores_).any() and not np.isnan(est.criterion_).any()
        assert est.ranking_[2] == 6  # the constant feature last
    est = MRMR(n_features_to_select=3, mi_estimator="ksg", random_state=0, n_neighbors=2)
    assert not np.isnan(est.fit(X, y).scores_).any()


def test_scores_follow_selection_order_then_relevance(small):
    X, y = small
    est = MRMR(n_features_to_select=5).fit(X, y)
    order = np.argsort(est.ranking_)
    np.testing.assert_array_equal(order[:5], est.selection_order_)
    rest = order[5:]
    assert np.all(np.diff(est.relevance_[rest]) <= 0)


def test_own_rule_stops_when_the_criterion_shows_no_gain(small):
    X, y = small
    est = MRMR(n_features_to_select=None, criterion="fcd").fit(X, y)
    assert np.all(est.criterion_ > 0)
    assert est.support_.sum() == est.selection_order_.size


def test_ksg_caps_the_neighbours_below_the_sample_count(small):
    """k >= n_samples is capped at n_samples - 1 (the default k = 10 must work on 10 samples);
    the result equals an explicit k = n_samples - 1."""
    X, y = small
    est = MRMR(mi_estimator="ksg", n_neighbors=60, random_state=0).fit(X, y)
    assert est.n_neighbors_ == X.shape[0] - 1
    ref = MRMR(mi_estimator="ksg", n_neighbors=X.shape[0] - 1, random_state=0).fit(X, y)
    np.testing.assert_array_equal(est.scores_, ref.scores_)
    tiny = MRMR(n_features_to_select=2, mi_estimator="ksg", random_state=0).fit(X[:10], y[:10])
    assert tiny.n_neighbors_ == 9 and not np.isnan(tiny.scores_).any()


@pytest.mark.parametrize("criterion", ["fcd", "mid", "miq"])
def test_continuous_target_relevance_and_greedy_order(criterion):
    """On a continuous target the relevance is f_regression's F (FCD) or
    mutual_info_regression's estimate (KSG, same seed and k), and the first pick is the most
    relevant feature; the planted features are found."""
    from sklearn.feature_selection import f_regression, mutual_info_regression

    from sparsefs.datasets import make_planted_regression

    d = make_planted_regression(n_samples=120, n_features=60, n_informative=4, effect=1.5,
                                random_state=1)
    mi = "ksg" if criterion != "mid" else "three_state"
    sel = MRMR(n_features_to_select=4, criterion=criterion, mi_estimator=mi, n_neighbors=5,
               random_state=0).fit(d.X, d.y)
    assert sel.target_type_ == "regression"
    if criterion == "fcd":
        np.testing.assert_allclose(sel.relevance_, f_regression(d.X, d.y)[0], rtol=1e-10)
    elif mi == "ksg":
        ref = mutual_info_regression(d.X, d.y, n_neighbors=5, random_state=0)
        np.testing.assert_allclose(sel.relevance_, ref, atol=1e-12)
    assert sel.selection_order_[0] == np.argmax(sel.relevance_)
    # the KSG quotient prefers independent features to relevant ones (class docstring)
    assert (sel.support_ & d.support).sum() >= (2 if criterion == "miq" else 3)
