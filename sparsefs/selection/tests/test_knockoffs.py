"""KnockoffSelector against independent references.

References: the FDR guarantee itself by seeded Monte-Carlo over designs with a known truth
(Candès et al. 2018; mean FDP <= q + 2 SE); the sign symmetry of null statistics (a binomial
test: the defining property of valid knockoffs); the knockoff+ threshold recomputed by brute
force from the fitted statistics; tracemalloc for the memory claim; the guards of the issue
(an infinite threshold selects nothing; fewer than 1/q possible selections warn).
"""

import tracemalloc
import warnings

import numpy as np
import pytest
from scipy import stats

from sparsefs.exceptions import KnockoffModelWarning, NoFeatureSelectedWarning
from sparsefs.selection import FisherScore, KnockoffSelector
from sparsefs.selection.tests.test_error_control import (
    fdp_and_power,
    gaussian_design,
    quiet_empty_selection,
)


def _monte_carlo(n_seeds, q=0.1, **params):
    fdp, power = [], []
    for seed in range(n_seeds):
        X, y, support = gaussian_design(seed, shift=0.4)
        with quiet_empty_selection(), warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            sel = KnockoffSelector(fdr=q, random_state=seed, **params).fit(X, y).support_
        f, w = fdp_and_power(sel, support)
        fdp.append(f)
        power.append(w)
    return np.mean(fdp), np.std(fdp, ddof=1) / np.sqrt(n_seeds), np.mean(power)


def test_lasso_knockoffs_fdr_and_power_monte_carlo():
    """Acceptance: n = 200, p = 500, 20 true features, 40 seeds, q = 0.1, the lasso
    coefficient difference on spiked-model knockoffs: mean FDP <= q + 2 SE, mean power >= 0.5.
    Measured: mean FDP 0.089 (SE 0.016), mean power 0.80."""
    mean, se, power = _monte_carlo(40, statistic="lasso_coef_diff")
    assert mean <= 0.1 + 2 * se, f"mean FDP {mean:.3f} (SE {se:.3f}), power {power:.2f}"
    assert power >= 0.5, f"mean power {power:.2f}"


def test_fisher_score_difference_knockoffs_monte_carlo():
    """The same design with W = Fisher score difference (statistic="score_diff").
    Measured: mean FDP 0.041 (SE 0.009), mean power 0.97."""
    mean, se, power = _monte_carlo(40, estimator=FisherScore())
    assert mean <= 0.1 + 2 * se, f"mean FDP {mean:.3f} (SE {se:.3f}), power {power:.2f}"
    assert power >= 0.5


def test_null_statistics_are_sign_symmetric_when_p_much_larger_than_n():
    """p = 3000 >> n = 60, 10 true features. With the default spiked model the signs of the
    null W_j are fair coins: Fisher-score differences, 2990 nulls, binomial test p > 0.01
    (measured 1471 positive, p = 0.39); lasso differences, 5 of the 11 nonzero null W_j
    positive. Ledoit-Wolf shrinkage keeps much of the inflated sample eigenvalues, so its
    knockoffs copy the observed rows and the lasso prefers them over null features: 0 of the
    8 nonzero null W_j positive (a conservative, powerless filter), hence the default."""
    X, y, support = gaussian_design(0, n=60, p=3000, k=10, shift=0.8)

    def null_signs(**params):
        with quiet_empty_selection(), warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            W = KnockoffSelector(random_state=0, **params).fit(X, y).statistics_[0]
        null = W[~support]
        return int((null > 0).sum()), int((null != 0).sum())

    pos, nonzero = null_signs(estimator=FisherScore())
    assert nonzero == 2990 and stats.binomtest(pos, nonzero).pvalue > 0.01, (pos, nonzero)
    pos, nonzero = null_signs(statistic="lasso_coef_diff")
    assert nonzero >= 8 and pos >= 0.25 * nonzero, (pos, nonzero)
    pos_lw, nonzero_lw = null_signs(statistic="lasso_coef_diff", covariance="ledoit_wolf")
    assert nonzero_lw >= 5 and pos_lw < 0.25 * nonzero_lw, (pos_lw, nonzero_lw)


def test_default_statistic_for_class_labels_is_the_fisher_difference(planted_small):
    """Issue #33: for class labels the default statistic is the Fisher score difference
    (the same statistics as estimator=FisherScore()); a continuous target keeps the lasso."""
    X, y, _ = planted_small
    default = KnockoffSelector(fdr=0.2, random_state=0).fit(X, y)
    fisher = KnockoffSelector(FisherScore(), fdr=0.2, random_state=0).fit(X, y)
    np.testing.assert_array_equal(default.statistics_, fisher.statistics_)
    assert default.lasso_alphas_ is None
    target = X[:, :3].sum(axis=1) + np.random.default_rng(0).normal(size=X.shape[0])
    with quiet_empty_selection(), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        reg = KnockoffSelector(random_state=0, n_features_to_select=5).fit(X, target)
    assert reg.lasso_alphas_ is not None


def test_threshold_and_selection_are_knockoff_plus(planted_small):
    X, y, support = planted_small
    sel = KnockoffSelector(estimator=FisherScore(), fdr=0.2, random_state=0).fit(X, y)
    w = sel.statistics_[0]
    T = min((t for t in np.abs(w[w != 0])
             if (1 + np.sum(w <= -t)) / max(1, np.sum(w >= t)) <= 0.2), default=np.inf)
    assert sel.threshold_ == T
    assert np.array_equal(sel.support_, w >= T)
    np.testing.assert_array_equal(sel.scores_, w)
    assert sel.support_.sum() >= 10 and (sel.support_ & support).sum() >= 10
    top = KnockoffSelector(estimator=FisherScore(), n_features_to_select=4,
                           random_state=0).fit(X, y)
    assert set(np.flatnonzero(top.support_)) == set(np.argsort(-w, kind="stable")[:4])


@pytest.fixture(scope="module")
def planted_small():
    return gaussian_design(3, n=100, p=300, k=20, shift=0.6)


def test_infinite_threshold_selects_nothing():
    """The peer bug: with T = +inf nothing may be selected. Nine perfect features, q = 0.1:
    knockoff+ needs ceil(1/q) = 10 positive statistics, so T = inf, with both warnings."""
    rng = np.random.default_rng(0)
    y = np.arange(40) % 2
    X = rng.normal(size=(40, 9)) + 5.0 * y[:, None]
    with pytest.warns(UserWarning, match=r"n_features=9 < 1/q"), \
            pytest.warns(NoFeatureSelectedWarning):
        sel = KnockoffSelector(estimator=FisherScore(), fdr=0.1, random_state=0).fit(X, y)
    assert sel.threshold_ == np.inf and not sel.support_.any()
    assert (sel.statistics_ > 0).sum() == 9  # every feature beats its knockoff, yet none kept


def test_warns_when_too_few_positive_statistics():
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(50, 40)), np.arange(50) % 2
    with quiet_empty_selection((UserWarning, r"fewer than ceil\(1/q\) = 20")) as caught:
        sel = KnockoffSelector(statistic="lasso_coef_diff", alpha=0.3, fdr=0.05,
                               random_state=0).fit(X, y)
    assert any("fewer than ceil(1/q) = 20" in str(w.message) for w in caught)
    assert (sel.statistics_ > 0).sum() < 20 and not sel.support_.any()


def test_derandomised_is_stabler_and_keeps_fdr(planted_small):
    """Ren & Barber: averaging e-values over draws makes the selection depend much less on
    the random draw. Over 6 random states, the mean pairwise Jaccard index of the selections
    is higher with 8 draws than with 1 (measured 0.96 vs 0.84); all selections are FDR-sane."""
    X, y, support = planted_small

    def selections(n_draws):
        out = []
        for rs in range(6):
            with quiet_empty_selection():
                sel = KnockoffSelector(estimator=FisherScore(), fdr=0.2, n_draws=n_draws,
                                       random_state=rs).fit(X, y)
            out.append(sel.support_)
            if n_draws > 1:
                assert sel.evalues_.shape == (X.shape[1],)
                assert np.array_equal(sel.support_, sel.evalues_ >= sel.threshold_)
        return out

    def mean_jaccard(sets):
        vals = [(a & b).sum() / max(1, (a | b).sum())
                for i, a in enumerate(sets) for b in sets[i + 1:]]
        return float(np.mean(vals))

    one, many = selections(1), selections(8)
    assert mean_jaccard(many) > mean_jaccard(one), (mean_jaccard(many), mean_jaccard(one))
    for sel in many:
        assert fdp_and_power(sel, support)[0] <= 0.25
        assert fdp_and_power(sel, support)[1] >= 0.5


def test_no_p_by_p_allocation():
    """p = 8000, n = 40: a p x p matrix would take 512 MB; the fit peaks far below it."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 8000)), np.arange(40) % 2
    tracemalloc.start()
    with quiet_empty_selection(), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        KnockoffSelector(estimator=FisherScore(), random_state=0).fit(X, y)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 8000 * 8000 * 8 / 20, f"peak {peak / 1e6:.0f} MB"


def test_lasso_penalty_and_errors(planted_small):
    X, y, _ = planted_small
    lasso = {"statistic": "lasso_coef_diff", "random_state": 0, "n_features_to_select": 5}
    sel = KnockoffSelector(alpha=0.05, **lasso).fit(X, y)
    assert sel.lasso_alphas_.tolist() == [0.05]
    cv = KnockoffSelector(**lasso).fit(X, y)
    assert cv.lasso_alphas_[0] > 0 and cv.n_components_ >= 0 and cv.knockoff_s_ == 1.0
    with pytest.raises(ValueError, match="statistic='score_diff' only"):
        KnockoffSelector(FisherScore(), statistic="lasso_coef_diff").fit(X, y)
    with pytest.raises(ValueError, match="need offset=1"):
        KnockoffSelector(n_draws=3, offset=0).fit(X, y)
    with pytest.raises(ValueError, match="fdr"):
        KnockoffSelector(fdr=1.0).fit(X, y)


def test_constant_features_are_untested_and_rank_last(planted_small):
    X, y, _ = planted_small
    X = X.copy()
    X[:, [0, 7]] = 2.5
    sel = KnockoffSelector(estimator=FisherScore(), fdr=0.2, random_state=0).fit(X, y)
    assert np.all(sel.statistics_[:, [0, 7]] == 0)
    assert np.all(sel.ranking_[[0, 7]] > X.shape[1] - 2)


def _ar1_regression(seed, n=300, p=300, rho=0.8, k=20, amplitude=0.3):
    """Rows N(0, Toeplitz(rho)); y = X beta + noise on k random features (the nulls are
    exactly the others: y depends on X only through the support)."""
    from scipy.linalg import toeplitz

    rng = np.random.default_rng(seed)
    corr = toeplitz(rho ** np.arange(p))
    X = rng.standard_normal((n, p)) @ np.linalg.cholesky(corr).T
    support = np.zeros(p, dtype=bool)
    support[rng.choice(p, k, replace=False)] = True
    y = X[:, support] @ (amplitude * rng.choice([-1.0, 1.0], k)) + rng.standard_normal(n)
    return X, y, support, corr


def test_auto_model_check_on_ar1_correlation():
    """AR(1) rho = 0.8, n = p = 300: the spiked (low-rank) model misses most of the
    correlation on held-out rows; "auto" takes the Ledoit-Wolf model, which misses less, scales
    s down for what it still misses and warns. With the true correlation matrix passed
    (exact knockoffs, the model-X setting) the check is clean: no warning, s unscaled."""
    X, y, _, corr = _ar1_regression(0)
    with quiet_empty_selection((KnockoffModelWarning, "misses")) as caught:
        sel = KnockoffSelector(random_state=0, target_type="regression").fit(X, y)
    assert any(isinstance(w.message, KnockoffModelWarning) for w in caught)
    checks = sel.model_check_
    assert sel.covariance_ == "ledoit_wolf"
    assert checks["spiked"].z > 3 and checks["spiked"].fraction > 0.3
    assert checks["ledoit_wolf"].excess < 0.75 * checks["spiked"].excess
    expected = max(np.sqrt(0.1 / checks["ledoit_wolf"].fraction), 0.2)
    assert sel.s_scale_ == pytest.approx(expected) and sel.s_scale_ < 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", KnockoffModelWarning)
        with quiet_empty_selection():
            given = KnockoffSelector(random_state=0, covariance=corr,
                                     target_type="regression").fit(X, y)
    assert given.covariance_ == "given" and given.s_scale_ == 1.0
    assert given.knockoff_s_ == pytest.approx(min(2 * np.linalg.eigvalsh(corr).min(), 1))
    with pytest.raises(ValueError, match="n_features x n_features"):
        KnockoffSelector(covariance=corr[:5, :5]).fit(X, y)


def test_auto_on_independent_features_is_the_spiked_fit():
    """Independent features: the check finds nothing, "auto" is the spiked model with the
    same knockoff draws and statistics as covariance="spiked" (the check has its own spawned
    generator), no warning."""
    X, y, _ = gaussian_design(1, n=100, p=300, k=10, shift=0.6)
    with warnings.catch_warnings():
        warnings.simplefilter("error", KnockoffModelWarning)
        auto = KnockoffSelector(estimator=FisherScore(), random_state=0).fit(X, y)
    spiked = KnockoffSelector(estimator=FisherScore(), covariance="spiked",
                              random_state=0).fit(X, y)
    assert auto.covariance_ == "spiked" and auto.s_scale_ == 1.0
    assert abs(auto.model_check_["spiked"].z) < 3
    np.testing.assert_array_equal(auto.statistics_, spiked.statistics_)


@pytest.mark.slow
def test_fdr_on_ar1_correlation_monte_carlo():
    """Issue #33: knockoffs on AR(1) rho = 0.8 correlation, n = p = 300, 20 true features,
    q = 0.1, 40 seeds. The default (model check, Ledoit-Wolf with s scaled) keeps mean FDP
    <= q + 2 SE; so do exact knockoffs of the true correlation (the independent reference).
    The former default (the spiked model) is recorded beside it (not asserted)."""
    fdp = {"auto": [], "given": [], "spiked": []}
    for seed in range(40):
        X, y, support, corr = _ar1_regression(seed)
        for name, cov in (("auto", "auto"), ("given", corr), ("spiked", "spiked")):
            with warnings.catch_warnings(), quiet_empty_selection():
                warnings.simplefilter("ignore", KnockoffModelWarning)
                sel = KnockoffSelector(random_state=seed, covariance=cov,
                                       target_type="regression").fit(X, y).support_
            fdp[name].append(fdp_and_power(sel, support)[0])
    for name in ("auto", "given"):
        f = np.asarray(fdp[name])
        se = f.std(ddof=1) / np.sqrt(f.size)
        assert f.mean() <= 0.1 + 2 * se, (name, f.mean(), se, np.mean(fdp["spiked"]))
