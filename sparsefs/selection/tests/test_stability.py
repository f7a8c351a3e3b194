"""StabilitySelector: error control on planted designs, the path, determinism, validation.

Independent references: the Meinshausen-Bühlmann / Shah-Samworth bound evaluated by hand
(thresholds and bounds); the planted truth of ``make_planted_classification`` (false
selections counted against it over many seeds, Monte Carlo); refits at every k (the path);
scikit-learn's ``SelectKBest(f_classif)`` as a peer base selector (rank-identical to the Fisher
score); :func:`sparsefs.metrics.nogueira_index` on the stored supports.
"""

import warnings

import numpy as np
import pytest
from sklearn.feature_selection import SelectKBest, f_classif

from sparsefs.classification import SparseCenterClassifier
from sparsefs.datasets import make_planted_classification
from sparsefs.exceptions import NoFeatureSelectedWarning
from sparsefs.metrics import nogueira_index
from sparsefs.selection import (
    FisherScore,
    LaplacianScore,
    LassoSelector,
    MutualInfo,
    StabilitySelector,
)
from sparsefs.utils.estimator_checks import expected_warnings


def _planted(seed, n=100, p=1000, shift=1.5):
    return make_planted_classification(n, p, 10, 2, shift=shift, random_state=seed)


def _monte_carlo(base, seeds, n_resamples=50, shift=1.5):
    noise, bounds, planted_freq = [], [], []
    for seed in seeds:
        d = _planted(seed, shift=shift)
        sel = StabilitySelector(base, n_resamples=n_resamples, pfer=1, random_state=seed)
        sel.fit(d.X, d.y)
        noise.append(int((sel.support_ & ~d.support).sum()))
        bounds.append(sel.pfer_bound_)
        planted_freq.append(sel.frequencies_[d.support].mean())
    return np.array(noise), np.array(bounds), np.array(planted_freq)


def _check_error_control(noise, bounds):
    """Mean false selections <= mean bound (<= pfer = 1) plus two Monte-Carlo standard errors."""
    assert bounds.max() <= 1.0 + 1e-9
    se = noise.std(ddof=1) / np.sqrt(noise.size) if noise.size > 1 else 0.0
    assert noise.mean() <= bounds.mean() + 2 * se + 1e-12, (noise.mean(), bounds.mean(), se)


def test_fisher_pfer_controlled_and_planted_found_30_seeds():
    """Acceptance: n=100, p=1000, 10 planted, FisherScore(k=20), pfer=1, 30 seeds."""
    noise, bounds, freq = _monte_carlo(FisherScore(n_features_to_select=20), range(30))
    _check_error_control(noise, bounds)
    assert freq.mean() >= 0.9, freq.mean()


def test_lasso_pfer_controlled_few_seeds():
    """The fast version of the Lasso acceptance test (4 seeds): with ``pfer`` the lasso is
    sized by ``q="auto"`` (31 features per half-sample) and finds most planted features."""
    noise, bounds, freq = _monte_carlo(LassoSelector(), range(4), n_resamples=20, shift=2.0)
    _check_error_control(noise, bounds)
    assert freq.mean() > 0.75, freq.mean()


@pytest.mark.slow
def test_lasso_pfer_controlled_30_seeds():
    """Acceptance: StabilitySelector(LassoSelector()), pfer=1, 30 seeds, on the easy design
    (class means 2 sd apart on each planted feature): mean false selections within the bound
    (measured 0.17 against 0.96) and the planted features' mean frequency >= 0.9 (measured
    0.925). Each half-sample's lasso keeps q = 31 features (``q="auto"``); the lasso's own
    penalty (alpha = 0.5 of the largest) keeps about 3 and gave 0.3. At shift 1.5 (the
    Fisher test's design) the lasso reaches about 0.85: of 10 equally informative features
    it leaves some out on each half-sample (it needs only a few to separate 50 samples),
    which the Fisher score, a per-feature filter, does not."""
    noise, bounds, freq = _monte_carlo(LassoSelector(), range(30), shift=2.0)
    _check_error_control(noise, bounds)
    assert freq.mean() >= 0.9, freq.mean()


def test_auto_q_is_the_largest_count_the_bound_allows():
    """Closed forms: worst case q = floor(sqrt(pfer (2 tau - 1) p)) = floor(sqrt(500)) = 22 at
    tau = 0.75, p = 1000, pfer = 1; the unimodal bound allows more (31), and the bound at the
    chosen q holds while q + 1 breaks it."""
    from sparsefs._kernels import stability as k

    assert k.count_for_pfer(1000, 1.0, 50, 0.75) == 22 == int(np.sqrt(500))
    q = k.count_for_pfer(1000, 1.0, 50, 0.75, unimodal=True)
    assert q == 31
    assert k.pfer_bound(q, 1000, 0.75, 50, unimodal=True) <= 1.0
    assert k.pfer_bound(q + 1, 1000, 0.75, 50, unimodal=True) > 1.0
    assert k.count_for_pfer(10, 1e-6, 50, 0.75) == 1  # nothing reaches it: the smallest size


def test_q_sets_the_base_count_and_none_keeps_the_base():
    d = _planted(0)
    auto = StabilitySelector(LassoSelector(), n_resamples=4, pfer=1, random_state=0)
    auto.fit(d.X, d.y)
    # 2 pairs: the unimodal bound does not apply at tau = 0.75, the worst case gives 22
    assert auto.q_target_ == 22 and auto.q_ == 22.0
    assert auto.estimator_.get_params()["n_features_to_select"] == 22
    own = StabilitySelector(LassoSelector(), n_resamples=4, pfer=1, q=None, random_state=0)
    own.fit(d.X, d.y)
    assert own.q_target_ is None and own.q_ < 10  # the default penalty keeps a few
    fixed = StabilitySelector(FisherScore(), n_resamples=4, threshold=0.7, q=12,
                              random_state=0).fit(d.X, d.y)
    np.testing.assert_array_equal(fixed.n_selected_, 12)
    # a base count given by the user wins over "auto"
    given = StabilitySelector(FisherScore(n_features_to_select=20), n_resamples=4, pfer=1,
                              random_state=0).fit(d.X, d.y)
    assert given.q_target_ is None and given.q_ == 20
    # no pfer: "auto" leaves the base estimator as it is
    plain = StabilitySelector(LassoSelector(), n_resamples=4, random_state=0).fit(d.X, d.y)
    assert plain.q_target_ is None


def test_q_validation():
    d = _planted(0)
    with pytest.raises(ValueError, match="exceeds the number of features"):
        StabilitySelector(FisherScore(), n_resamples=4, q=5000).fit(d.X, d.y)
    with pytest.raises(ValueError, match="does not have"):
        StabilitySelector(SelectKBest(f_classif, k=5), n_resamples=4, q=5).fit(d.X, d.y)


def test_global_null_selects_about_nothing():
    """No signal: every selection is false; the mean over 20 seeds stays below the bound."""
    noise = []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        X, y = rng.normal(size=(60, 300)), np.arange(60) % 2
        with expected_warnings((NoFeatureSelectedWarning, "selected no feature")) as caught:
            sel = StabilitySelector(FisherScore(n_features_to_select=15), n_resamples=40,
                                    pfer=1, random_state=seed).fit(X, y)
        assert len(caught) == int(sel.support_.sum() == 0)  # warned exactly when empty
        noise.append(sel.support_.sum())
        assert sel.pfer_bound_ <= 1 + 1e-9
    assert np.mean(noise) <= 1.0


def test_threshold_and_bound_closed_form_subsample_scheme():
    """Meinshausen-Bühlmann by hand: q = 20, p = 1000, pfer = 1 -> tau = (1 + q^2/p)/2 = 0.7,
    bound q^2 / ((2 tau - 1) p) = 1; threshold 0.8 -> bound 400 / 600."""
    d = _planted(0)
    base = FisherScore(n_features_to_select=20)
    sel = StabilitySelector(base, scheme="subsample", pfer=1, random_state=0).fit(d.X, d.y)
    assert sel.q_ == 20 and sel.bound_ == "worst_case"
    assert sel.threshold_ == pytest.approx(0.7)
    assert sel.pfer_bound_ == pytest.approx(1.0)
    np.testing.assert_array_equal(sel.support_, sel.frequencies_ >= 0.7 - 1e-12)
    sel = StabilitySelector(base, scheme="subsample", threshold=0.8, random_state=0)
    sel.fit(d.X, d.y)
    assert sel.pfer_bound_ == pytest.approx(400 / 600)
    np.testing.assert_array_equal(sel.support_, sel.frequencies_ >= 0.8 - 1e-12)


def test_complementary_pairs_unimodal_threshold_is_lower_than_worst_case():
    """Shah-Samworth Theorem 2 by hand at B = 25, q = 20, p = 1000: C(tau) q^2/p <= 1 first at
    tau = 0.62 (C = 1/(2 (0.24 - 0.02)) = 2.27 -> 0.909), below the worst-case 0.7."""
    d = _planted(0)
    base = FisherScore(n_features_to_select=20)
    uni = StabilitySelector(base, pfer=1, random_state=0).fit(d.X, d.y)
    worst = StabilitySelector(base, pfer=1, bound="worst_case", random_state=0).fit(d.X, d.y)
    assert uni.bound_ == "unimodal"
    assert uni.threshold_ == pytest.approx(0.62)
    assert uni.pfer_bound_ == pytest.approx(400 / 1000 / (2 * (0.24 - 0.02)))
    assert worst.threshold_ == pytest.approx(0.7)
    np.testing.assert_array_equal(uni.frequencies_, worst.frequencies_)
    assert uni.support_.sum() >= worst.support_.sum()


def test_rank_path_equals_refits_at_every_k():
    """For a ranker, the path from one fit per resample equals refitting with each k."""
    d = _planted(1, n=60, p=200)
    sel = StabilitySelector(FisherScore(n_features_to_select=5), n_resamples=10,
                            random_state=3).fit(d.X, d.y)
    assert sel.path_values_[0] == 1 and sel.frequency_path_.shape == (200, 20)
    for k in (1, 5, 12, 20):
        refit = StabilitySelector(FisherScore(n_features_to_select=k), n_resamples=10,
                                  random_state=3).fit(d.X, d.y)
        np.testing.assert_allclose(sel.frequency_path_[:, k - 1], refit.frequencies_)
    np.testing.assert_allclose(sel.frequency_path_[:, 4], sel.frequencies_)


def test_sklearn_selector_as_base_matches_fisher():
    """Peer: SelectKBest(f_classif) selects what FisherScore does (same ranking, ANOVA F)."""
    d = _planted(2, n=60, p=150)
    a = StabilitySelector(SelectKBest(f_classif, k=8), n_resamples=10, random_state=0)
    b = StabilitySelector(FisherScore(n_features_to_select=8), n_resamples=10, random_state=0)
    a.fit(d.X, d.y)
    b.fit(d.X, d.y)
    np.testing.assert_array_equal(a.frequencies_, b.frequencies_)
    assert a.frequency_path_ is None and b.frequency_path_ is not None


@pytest.mark.parametrize(
    "base",
    [FisherScore(n_features_to_select=6), MutualInfo(n_features_to_select=6),
     SparseCenterClassifier(norm="l1", n_features_to_select=6)],
    ids=lambda e: type(e).__name__,
)
def test_same_result_for_one_and_two_jobs(base):
    """Identical frequencies, supports and path with n_jobs=1 and n_jobs=2 (MutualInfo has a
    random_state left at None: each resample gets its own drawn seed)."""
    d = _planted(3, n=40, p=60)
    one = StabilitySelector(base, n_resamples=8, n_jobs=1, random_state=5).fit(d.X, d.y)
    two = StabilitySelector(base, n_resamples=8, n_jobs=2, random_state=5).fit(d.X, d.y)
    np.testing.assert_array_equal(one.supports_, two.supports_)
    np.testing.assert_array_equal(one.frequencies_, two.frequencies_)
    np.testing.assert_array_equal(one.frequency_path_, two.frequency_path_)
    assert one.stability_index_ == two.stability_index_


def test_unsupervised_base_ignores_labels_and_verbose_changes_nothing():
    d = _planted(4, n=40, p=30)
    base = LaplacianScore(n_features_to_select=5)
    a = StabilitySelector(base, n_resamples=6, random_state=0).fit(d.X)
    b = StabilitySelector(base, n_resamples=6, random_state=0).fit(d.X, d.y)
    c = StabilitySelector(base, n_resamples=6, random_state=0, verbose=True).fit(d.X)
    np.testing.assert_array_equal(a.frequencies_, b.frequencies_)
    np.testing.assert_array_equal(a.frequencies_, c.frequencies_)
    assert not a.__sklearn_tags__().target_tags.required


def test_attributes_are_consistent():
    d = _planted(5, n=50, p=80)
    sel = StabilitySelector(FisherScore(n_features_to_select=4), n_resamples=12,
                            threshold=0.5, random_state=0).fit(d.X, d.y)
    assert sel.supports_.shape == (12, 80) and (sel.n_selected_ == 4).all()
    np.testing.assert_allclose(sel.frequencies_, sel.supports_.mean(axis=0))
    np.testing.assert_array_equal(sel.scores_, sel.frequencies_)
    assert sel.stability_index_ == nogueira_index(sel.supports_)
    assert sel.pfer_bound_ == np.inf  # tau = 1/2: no bound
    top = StabilitySelector(FisherScore(n_features_to_select=4), n_resamples=12,
                            n_features_to_select=3, random_state=0).fit(d.X, d.y)
    assert top.support_.sum() == 3
    assert top.threshold_ == top.frequencies_[top.support_].min()


def test_stratified_halves_keep_class_shares():
    """Each half of a stratified pair holds floor or ceil of half of every class."""
    X = np.random.default_rng(0).normal(size=(31, 5))
    y = np.repeat([0, 1], [25, 6])
    sel = StabilitySelector(FisherScore(n_features_to_select=2), n_resamples=4, random_state=0)
    sel.fit(X, y)  # 3 of 6 minority samples in each half: the fit succeeds on every half
    assert sel.supports_.shape == (4, 5)


def test_unreachable_pfer_warns_and_uses_threshold_one():
    d = _planted(6, n=40, p=50)
    with pytest.warns(UserWarning, match="no threshold bounds"):
        sel = StabilitySelector(FisherScore(n_features_to_select=30), n_resamples=10,
                                pfer=0.5, random_state=0).fit(d.X, d.y)
    assert sel.threshold_ == 1.0 and sel.pfer_bound_ > 0.5


@pytest.mark.parametrize(
    ("params", "pattern"),
    [
        ({"n_resamples": 7}, "must be even"),
        ({"sample_fraction": 0.4}, "sample_fraction=0.4"),
        ({"threshold": 0.7, "pfer": 1.0}, "at most one of"),
        ({"pfer": 1.0, "n_features_to_select": 3}, "at most one of"),
        ({"scheme": "subsample", "bound": "unimodal"}, "bound='unimodal'"),
        ({"threshold": 1.5}, "threshold"),
        ({"pfer": 0}, "pfer"),
        ({"scheme": "bootstrap"}, "scheme"),
    ],
)
def test_clear_errors(params, pattern):
    d = _planted(7, n=30, p=20)
    sel = StabilitySelector(FisherScore(n_features_to_select=3), **{"n_resamples": 6, **params})
    with pytest.raises(ValueError, match=pattern):
        sel.fit(d.X, d.y)


def test_base_must_be_a_selector():
    from sklearn.linear_model import LogisticRegression

    d = _planted(8, n=30, p=20)
    with pytest.raises(TypeError, match="must be a selector"):
        StabilitySelector(LogisticRegression(), n_resamples=4).fit(d.X, d.y)


def test_default_estimator_is_the_lasso():
    d = _planted(9, n=40, p=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sel = StabilitySelector(n_resamples=4, random_state=0).fit(d.X, d.y)
    assert type(sel.estimator_).__name__ == "LassoSelector"


def test_nested_random_states_are_seeded_per_resample():
    """SelectFromModel(RandomForestClassifier()) has a nested random_state left at None: each
    resample's clone gets a drawn seed, so two fits (and one or two jobs) agree exactly."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.feature_selection import SelectFromModel

    d = _planted(10, n=40, p=25)
    base = SelectFromModel(RandomForestClassifier(n_estimators=5), max_features=4,
                           threshold=-np.inf)
    a = StabilitySelector(base, n_resamples=6, random_state=1).fit(d.X, d.y)
    b = StabilitySelector(base, n_resamples=6, random_state=1, n_jobs=2).fit(d.X, d.y)
    np.testing.assert_array_equal(a.supports_, b.supports_)
    assert base.estimator.random_state is None  # the caller's estimator is left alone
    assert (a.n_selected_ == 4).all()


def test_refit_path_over_the_count_equals_the_rank_path():
    """Two routes to the same path: refitting FisherScore at each k (path_param) and the top-k
    of one fit per resample."""
    d = _planted(11, n=60, p=120)
    base = FisherScore(n_features_to_select=5)
    rank = StabilitySelector(base, n_resamples=8, random_state=2).fit(d.X, d.y)
    ks = [1, 5, 12, 20]
    refit = StabilitySelector(base, n_resamples=8, random_state=2,
                              path_param="n_features_to_select", path_values=ks).fit(d.X, d.y)
    assert refit.path_param_ == "n_features_to_select"
    np.testing.assert_array_equal(refit.path_values_, ks)
    np.testing.assert_allclose(refit.frequency_path_, rank.frequency_path_[:, np.array(ks) - 1])
    np.testing.assert_array_equal(refit.frequencies_, rank.frequencies_)


def test_lasso_penalty_path():
    """The lasso along its penalty: alpha >= 1 (of lambda_max) selects nothing (closed form:
    W = 0 there); each column equals a StabilitySelector of LassoSelector(alpha=value)."""
    d = _planted(12, n=60, p=40)
    alphas = [1.0, 0.5, 0.2]
    with expected_warnings((NoFeatureSelectedWarning, "LassoSelector selected no feature"),
                           required=True):  # alpha = 1: every half-sample's lasso is empty
        sel = StabilitySelector(LassoSelector(), n_resamples=4, random_state=0,
                                path_param="alpha", path_values=alphas).fit(d.X, d.y)
    assert sel.frequency_path_.shape == (40, 3) and sel.path_param_ == "alpha"
    np.testing.assert_array_equal(sel.frequency_path_[:, 0], 0.0)
    for i, a in enumerate(alphas[1:], start=1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            one = StabilitySelector(LassoSelector(alpha=a), n_resamples=4, random_state=0)
            one.fit(d.X, d.y)
        np.testing.assert_array_equal(sel.frequency_path_[:, i], one.frequencies_)
    assert sel.frequency_path_[:, 2].sum() >= sel.frequency_path_[:, 1].sum()


@pytest.mark.parametrize(
    ("params", "pattern"),
    [({"path_param": "alpha"}, "give both"),
     ({"path_values": [1, 2]}, "give both"),
     ({"path_param": "nope", "path_values": [1]}, "not a parameter"),
     ({"path_param": "n_features_to_select", "path_values": []}, "empty")],
)
def test_path_errors(params, pattern):
    d = _planted(13, n=30, p=20)
    with pytest.raises(ValueError, match=pattern):
        StabilitySelector(FisherScore(n_features_to_select=3), n_resamples=4,
                          **params).fit(d.X, d.y)
