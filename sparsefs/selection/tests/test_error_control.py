"""ErrorControlSelector against independent references.

References: scipy's per-column tests and ``false_discovery_control``; scikit-learn's
``f_classif`` and ``SelectFdr`` (the BH rule that FisherScore kept before it moved to the
shared kernel); the exact permutation distribution by enumeration of every labelling (tiny n);
the analytic F-test p-value that the permutation p-value of the Fisher score estimates; and
seeded Monte-Carlo over designs with a known truth (the FDR / FWER guarantees themselves,
as scikit-learn's ``test_select_fdr_regression``).
"""

from contextlib import contextmanager
from itertools import combinations

import numpy as np
import pytest
from joblib import parallel_config
from scipy import stats
from sklearn.feature_selection import SelectFdr, f_classif

from sparsefs.classification import SparseCenterClassifier
from sparsefs.datasets import make_planted_classification
from sparsefs.exceptions import NoFeatureSelectedWarning
from sparsefs.selection import ErrorControlSelector, FisherScore, LaplacianScore
from sparsefs.selection._error_control import stratified_permutations
from sparsefs.utils.estimator_checks import expected_warnings


def gaussian_design(seed, n=200, p=500, k=20, shift=0.5, rho=0.0, block=10):
    """Class-conditional Gaussian design: two balanced classes, ``k`` features shifted by
    +-``shift`` between them, optional equicorrelated blocks of ``block`` features with
    correlation ``rho``; the true features fill whole blocks (nulls are independent of y)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    if rho:
        shared = np.repeat(rng.normal(size=(n, p // block)), block, axis=1)
        X = np.sqrt(1 - rho) * X + np.sqrt(rho) * shared
    blocks = rng.choice(p // block, k // block, replace=False) if rho else None
    support = np.zeros(p, dtype=bool)
    if rho:
        for b in blocks:
            support[b * block:(b + 1) * block] = True
    else:
        support[rng.choice(p, k, replace=False)] = True
    y = rng.permutation(np.arange(n) % 2)
    X[:, support] += shift * (2 * y[:, None] - 1) * rng.choice([-1.0, 1.0], size=k)
    return X, y, support


@contextmanager
def quiet_empty_selection(*more):
    """Asserts that the only warnings are the empty-selection one, where it is the expected
    outcome, and ``more`` (category, pattern) pairs."""
    with expected_warnings((NoFeatureSelectedWarning, "selected no feature"), *more) as caught:
        yield caught


#: the permutation floor: 1/(B+1) above BH's first threshold (the tests' B on purpose)
FLOOR = (UserWarning, r"the smallest p-value is 1/\(B\+1\)")


def fdp_and_power(selected, support):
    """False discovery proportion and power of one selection."""
    n_false = int((selected & ~support).sum())
    return n_false / max(1, int(selected.sum())), (selected & support).sum() / support.sum()


@pytest.fixture(scope="module")
def planted():
    return make_planted_classification(n_samples=90, n_features=300, n_classes=3,
                                       random_state=0)


def test_fisher_score_rule_is_the_shared_bh(planted):
    """FisherScore's BH rule now calls the shared kernel: same result as before (SelectFdr on
    f_classif, the reference of test_fisher_score) and as ErrorControlSelector's F test."""
    for q in (0.001, 0.05, 0.3):
        fs = FisherScore(fdr=q).fit(planted.X, planted.y)
        ref = SelectFdr(f_classif, alpha=q).fit(planted.X, planted.y).get_support()
        ec = ErrorControlSelector(level=q).fit(planted.X, planted.y)
        assert np.array_equal(fs.support_, ref)
        assert np.array_equal(ec.support_, ref)
        np.testing.assert_allclose(ec.pvalues_, f_classif(planted.X, planted.y)[1], rtol=1e-9)
        assert ec.pvalue_method_ == "anova"


def test_analytic_pvalues_equal_scipy(planted):
    X, y3 = planted.X, planted.y
    y = (y3 == 0).astype(int)
    cases = {
        "welch": stats.ttest_ind(X[y == 1], X[y == 0], equal_var=False).pvalue,
        "mannwhitney": stats.mannwhitneyu(X[y == 1], X[y == 0], method="asymptotic").pvalue,
        "anova": f_classif(X, y)[1],
    }
    for kind, ref in cases.items():
        sel = ErrorControlSelector(pvalues=kind).fit(X, y)
        np.testing.assert_allclose(sel.pvalues_, ref, rtol=1e-9, err_msg=kind)
    kw = [stats.kruskal(*[X[y3 == c, j] for c in range(3)]).pvalue for j in range(X.shape[1])]
    np.testing.assert_allclose(ErrorControlSelector(pvalues="kruskal").fit(X, y3).pvalues_, kw,
                               rtol=1e-9)


def test_alpha_is_a_deprecated_alias_of_level(planted):
    """The former spelling (issue #34): a FutureWarning naming ``level``, and the same fit as
    ``level`` at that value (the level-0.2 fit differs from a level-1e-12 one, so an alias
    that were ignored would be seen); a value out of (0, 1] is refused by name."""
    new = ErrorControlSelector(method="holm", level=0.2).fit(planted.X, planted.y)
    strict = ErrorControlSelector(method="holm", level=1e-12).fit(planted.X, planted.y)
    assert new.support_.sum() > strict.support_.sum()
    old = ErrorControlSelector(method="holm", alpha=0.2)
    with pytest.warns(FutureWarning, match=r"alpha=.*deprecated.*level="):
        old.fit(planted.X, planted.y)
    np.testing.assert_array_equal(old.support_, new.support_)
    np.testing.assert_array_equal(old.qvalues_, new.qvalues_)
    assert old.min_permutations(300) == new.min_permutations(300)
    with pytest.warns(FutureWarning), pytest.raises(ValueError, match="alpha"):
        ErrorControlSelector(alpha=2.0).fit(planted.X, planted.y)


@pytest.mark.parametrize("method", ["bh", "by", "holm", "bonferroni"])
def test_qvalues_and_selection(planted, method):
    sel = ErrorControlSelector(method=method, level=0.05).fit(planted.X, planted.y)
    if method in ("bh", "by"):
        np.testing.assert_allclose(
            sel.qvalues_, stats.false_discovery_control(sel.pvalues_, method=method), rtol=1e-12)
    assert np.array_equal(sel.support_, sel.qvalues_ <= 0.05)
    assert sel.error_rate_ == ("FDR" if method in ("bh", "by") else "FWER")
    # planted: 20 strong features, F test: all found, no false one for the FWER rules
    assert (sel.support_ & planted.support).sum() == 20
    if method in ("holm", "bonferroni"):
        assert not (sel.support_ & ~planted.support).any()
    top = ErrorControlSelector(method=method, n_features_to_select=5).fit(planted.X, planted.y)
    assert set(np.flatnonzero(top.support_)) == set(np.argsort(sel.pvalues_, kind="stable")[:5])


def test_bh_fdr_monte_carlo():
    """Acceptance: n = 200, p = 500, 20 true features, 40 seeds, q = 0.1: mean FDP of BH on F
    p-values <= q + 2 SE. Measured: mean FDP 0.093 (SE 0.011), mean power 0.90."""
    q, fdp, power = 0.1, [], []
    for seed in range(40):
        X, y, support = gaussian_design(seed, shift=0.3)
        sel = ErrorControlSelector(method="bh", level=q).fit(X, y).support_
        f, w = fdp_and_power(sel, support)
        fdp.append(f)
        power.append(w)
    mean, se = np.mean(fdp), np.std(fdp, ddof=1) / np.sqrt(len(fdp))
    # BH controls FDR at q * m0 / m = 0.096 here
    assert mean <= q + 2 * se, f"mean FDP {mean:.3f} (SE {se:.3f}), power {np.mean(power):.2f}"
    assert np.mean(power) >= 0.5, f"mean power {np.mean(power):.2f}"


def test_by_fdr_block_correlated_monte_carlo():
    """Acceptance: BY under a block-correlated design (blocks of 10, correlation 0.6; two
    blocks carry the signal, so null p-values are dependent within blocks), 40 seeds, q = 0.1.
    Measured: mean FDP 0.014 (SE 0.005), mean power 0.95."""
    q, fdp, power = 0.1, [], []
    for seed in range(40):
        X, y, support = gaussian_design(seed, rho=0.6, shift=0.35)
        sel = ErrorControlSelector(method="by", level=q).fit(X, y).support_
        f, w = fdp_and_power(sel, support)
        fdp.append(f)
        power.append(w)
    mean, se = np.mean(fdp), np.std(fdp, ddof=1) / np.sqrt(len(fdp))
    assert mean <= q + 2 * se, f"mean FDP {mean:.3f} (SE {se:.3f}), power {np.mean(power):.2f}"
    assert np.mean(power) >= 0.5


@pytest.mark.parametrize("method", ["holm", "bonferroni", "bh"])
def test_global_null_selects_nothing_in_95_percent_of_100_seeds(method):
    """Acceptance: no feature carries signal; at alpha = 0.05 the FWER (for BH under the
    global null FDR = FWER) is <= 0.05, so >= 95% of 100 seeds select nothing (up to MC
    error: the binomial 95% quantile of 100 draws at 0.05 is 9 failures, we allow <= 9; the
    measured count is 2 for each rule)."""
    failures = 0
    for seed in range(100):
        rng = np.random.default_rng(1000 + seed)
        X, y = rng.normal(size=(60, 200)), rng.permutation(np.arange(60) % 2)
        with quiet_empty_selection():
            sel = ErrorControlSelector(method=method, level=0.05).fit(X, y)
        failures += bool(sel.support_.any())
    assert failures <= 9, failures  # >= 95% up to the binomial tail (see docstring)


# --------------------------------------------------------------------------------------------
# permutation p-values
# --------------------------------------------------------------------------------------------


def test_permutation_pvalues_uniform_under_the_null_and_never_zero():
    """Acceptance: independent null features, B = 199: the p-values are never below
    1/(B+1) and a KS test against U(0, 1) does not reject (p > 0.01; measured 0.78)."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 400)), rng.permutation(np.arange(40) % 2)
    with quiet_empty_selection(FLOOR):
        sel = ErrorControlSelector(pvalues="permutation", n_permutations=199,
                                   random_state=0).fit(X, y)
    p = sel.pvalues_
    assert p.min() >= 1 / 200 and sel.n_permutations_ == 199
    assert np.allclose(p * 200, np.round(p * 200))  # on the (b + 1)/(B + 1) grid
    # discrete p-values: test the mid-points of their steps against U(0, 1)
    ks = stats.kstest(p - 0.5 / 200, "uniform").pvalue
    assert ks > 0.01, ks


def test_permutation_pvalue_matches_exact_enumeration():
    """Tiny problem: 10 samples (5 per class), every one of the C(10, 5) = 252 labellings; the
    Monte-Carlo p-value with B = 3000 is within 3 standard errors of the exact one."""
    rng = np.random.default_rng(4)
    y = np.r_[np.zeros(5, int), np.ones(5, int)]
    X = rng.normal(size=(10, 3)) + np.outer(y, [1.0, 0.3, 0.0])
    fs = FisherScore(n_features_to_select=1)
    observed = fs.fit(X, y).scores_
    exact = np.zeros(3)
    for ones in combinations(range(10), 5):
        yy = np.zeros(10, int)
        yy[list(ones)] = 1
        exact += FisherScore(n_features_to_select=1).fit(X, yy).scores_ >= observed - 1e-12
    exact /= 252
    sel = ErrorControlSelector(fs, pvalues="permutation", n_permutations=3000,
                               random_state=1, n_features_to_select=1).fit(X, y)
    se = np.sqrt(exact * (1 - exact) / 3000)
    assert np.all(np.abs(sel.pvalues_ - exact) <= 3 * se + 1 / 3001), (sel.pvalues_, exact)


def test_permutation_pvalues_of_fisher_score_estimate_the_f_test(planted):
    """The Fisher score is monotone in the F statistic, whose null is exact for Gaussian
    noise: the permutation p-values estimate the analytic ones (within 4 SE + 1/(B+1))."""
    B = 999
    with expected_warnings(FLOOR, required=True):  # the test is about the p-values
        sel = ErrorControlSelector(FisherScore(n_features_to_select=1), pvalues="permutation",
                                   n_permutations=B, random_state=0).fit(planted.X, planted.y)
    analytic = f_classif(planted.X, planted.y)[1]
    se = np.sqrt(analytic * (1 - analytic) / B)
    assert np.all(np.abs(sel.pvalues_ - analytic) <= 4 * se + 2 / (B + 1))
    assert sel.pvalue_method_ == "permutation"
    auto = ErrorControlSelector(FisherScore(n_features_to_select=1)).fit(planted.X, planted.y)
    assert auto.pvalue_method_ == "estimator"  # FisherScore's own F-test p-values
    np.testing.assert_allclose(auto.pvalues_, analytic, rtol=1e-9)


def test_permutations_deterministic_and_independent_of_n_jobs(planted):
    kw = {"pvalues": "permutation", "n_permutations": 40, "random_state": 3,
          "n_features_to_select": 10}
    a = ErrorControlSelector(**kw).fit(planted.X, planted.y)
    with parallel_config(backend="threading"):  # same draws whatever the backend
        b = ErrorControlSelector(**kw, n_jobs=2).fit(planted.X, planted.y)
    c = ErrorControlSelector(**kw).fit(planted.X, planted.y)
    np.testing.assert_array_equal(a.pvalues_, b.pvalues_)
    np.testing.assert_array_equal(a.pvalues_, c.pvalues_)
    d = ErrorControlSelector(**{**kw, "random_state": 4}).fit(planted.X, planted.y)
    assert not np.array_equal(a.pvalues_, d.pvalues_)


def test_stratified_permutations_stay_within_strata():
    strata = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2, 1])
    perms = stratified_permutations(strata, 50, np.random.RandomState(0))
    for perm in perms:
        assert np.array_equal(strata[perm], strata)
        assert np.array_equal(np.sort(perm), np.arange(10))
    assert len({tuple(p) for p in perms}) > 10


def test_strata_give_a_valid_null_under_confounding():
    """A batch variable drives both the labels and every feature: unstratified permutations
    call everything significant, permutations within batches do not."""
    rng = np.random.default_rng(0)
    n = 80
    batch = np.repeat([0, 1], n // 2)
    y = np.where(rng.random(n) < np.where(batch == 1, 0.85, 0.15), 1, 0)
    X = rng.normal(size=(n, 60)) + 1.5 * batch[:, None]
    kw = {"pvalues": "permutation", "n_permutations": 199, "random_state": 0, "method": "bh"}
    with expected_warnings(FLOOR):
        plain = ErrorControlSelector(**kw).fit(X, y)
    with quiet_empty_selection(FLOOR):
        strat = ErrorControlSelector(**kw).fit(X, y, strata=batch)
    assert plain.support_.sum() > 30
    assert strat.support_.sum() == 0
    with pytest.raises(ValueError, match="strata must have shape"):
        ErrorControlSelector(**kw).fit(X, y, strata=batch[:-1])


def test_sparse_center_gain_permutation_null(planted):
    """The permutation null of the sparse l2 center classifier's gains: the planted features
    are found by Holm at FWER 0.05 (p-values at the floor 1/(B+1), with B the smallest that
    allows a rejection among 120 features), no other feature is."""
    sel = ErrorControlSelector(SparseCenterClassifier(), pvalues="permutation", method="holm",
                               random_state=0)
    B = sel.min_permutations(120)
    sel.set_params(n_permutations=B)
    sel.fit(planted.X[:, :120], planted.y)
    truth = planted.support[:120]
    assert sel.pvalues_[truth].max() == 1 / (B + 1)
    assert np.array_equal(sel.support_, truth)
    np.testing.assert_allclose(sel.estimator_scores_, sel.estimator_.gains_)


def test_min_permutations_is_the_bonferroni_floor():
    rng = np.random.default_rng(0)
    y = np.arange(30) % 2
    X = rng.normal(size=(30, 50))
    X[:, 7] = y * 10.0 + rng.normal(size=30) * 0.01  # a perfect separator
    sel = ErrorControlSelector(pvalues="permutation", method="bonferroni", level=0.05)
    B = sel.min_permutations(50)
    assert B == 999  # 1/(B+1) <= 0.05/50
    assert ErrorControlSelector(method="by").min_permutations(10) == 585
    got = sel.set_params(n_permutations=B, random_state=0).fit(X, y)
    assert got.support_[7] and got.support_.sum() == 1
    with pytest.warns(NoFeatureSelectedWarning), \
            pytest.warns(UserWarning, match=r"no feature can be rejected.*>= 999"):
        sel.set_params(n_permutations=B - 1).fit(X, y)


def test_errors(planted):
    X, y = planted.X, planted.y
    with pytest.raises(ValueError, match="compares two classes"):
        ErrorControlSelector(pvalues="welch").fit(X, y)
    with pytest.raises(ValueError, match="takes no estimator"):
        ErrorControlSelector(FisherScore(), pvalues="kruskal").fit(X, y)
    with pytest.raises(ValueError, match="unsupervised"):
        ErrorControlSelector(LaplacianScore(), pvalues="permutation").fit(X, y)
    with pytest.raises(ValueError, match="method"):
        ErrorControlSelector(method="fdr").fit(X, y)
    with pytest.raises(TypeError, match="not a scikit-learn estimator"):
        ErrorControlSelector(object(), pvalues="permutation").fit(X, y)
    with quiet_empty_selection():  # the inner FisherScore's own rule, on some permutations
        sel = ErrorControlSelector("fisher_score", pvalues="permutation", n_permutations=5,
                                   n_features_to_select=3, random_state=0).fit(X, y)
    assert sel.support_.sum() == 3 and isinstance(sel.estimator_, FisherScore)


def test_constant_features_rank_last_with_p_one(planted):
    X = planted.X.copy()
    X[:, [0, 5]] = 3.0
    for kw in ({}, {"pvalues": "kruskal"}, {"pvalues": "permutation", "n_permutations": 9,
                                            "random_state": 0}):
        with quiet_empty_selection(FLOOR):  # B = 9: no rejection possible, and it says so
            sel = ErrorControlSelector(**kw).fit(X, planted.y)
        assert np.all(sel.pvalues_[[0, 5]] == 1.0)
        assert np.all(sel.ranking_[[0, 5]] > X.shape[1] - 2)


def test_maxt_controls_fwer_under_the_global_null():
    """Westfall-Young max-T on permutation p-values of the Fisher score: correlated null
    features (blocks, rho = 0.6), 60 seeds, B = 49, alpha = 0.1: the share of seeds with any
    selection is <= alpha + 2 SE (measured 6 of 60 = 0.10). B = 49 is enough for max-T
    (B + 1 >= 1/alpha); Bonferroni would need B + 1 >= m/alpha = 400."""
    failures = 0
    for seed in range(60):
        X, y, _ = gaussian_design(seed, n=40, p=40, k=0, rho=0.6, block=10)
        with quiet_empty_selection():
            sel = ErrorControlSelector(method="maxt", level=0.1, n_permutations=49,
                                       random_state=seed).fit(X, y)
        failures += bool(sel.support_.any())
        assert sel.error_rate_ == "FWER" and sel.pvalue_method_ == "permutation"
    se = np.sqrt(0.1 * 0.9 / 60)
    assert failures / 60 <= 0.1 + 2 * se, failures


def test_maxt_finds_planted_features_with_few_permutations(planted):
    """300 features, B = 99: Bonferroni's floor 1/(B+1) = 0.01 > 0.05/300 rejects nothing,
    max-T rejects the planted features only."""
    kw = {"pvalues": "permutation", "n_permutations": 99, "random_state": 0, "level": 0.05}
    sel = ErrorControlSelector(method="maxt", **kw).fit(planted.X, planted.y)
    assert np.array_equal(sel.support_, planted.support)
    np.testing.assert_array_equal(sel.qvalues_, sel.maxt_pvalues_)
    assert sel.min_permutations(300) == 19
    with quiet_empty_selection(), pytest.warns(UserWarning, match="no feature can be rejected"):
        bonf = ErrorControlSelector(method="bonferroni", **kw).fit(planted.X, planted.y)
    assert not bonf.support_.any()
    with pytest.raises(ValueError, match="maxt"):
        ErrorControlSelector(method="maxt", pvalues="anova").fit(planted.X, planted.y)


@pytest.mark.parametrize("kind", ["anova", "welch", "mannwhitney", "kruskal", "permutation"])
def test_sparse_input_equals_dense(kind):
    """CSR / CSC give the dense p-values (the F test from one pass of class sums, the other
    tests on dense blocks of columns; permutations pass the sparse matrix to the estimator);
    zeros tie in the rank tests as in the dense copy."""
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    y = np.arange(40) % 2
    X = rng.normal(size=(40, 30)) * (rng.random((40, 30)) < 0.3)
    X[:, 4] += 2.0 * y
    X[:, 9] = 0.0
    kw = {"pvalues": kind, "n_features_to_select": 5}
    if kind == "permutation":
        kw.update(n_permutations=49, random_state=0)
    dense = ErrorControlSelector(**kw).fit(X, y)
    for fmt in (sp.csr_array, sp.csc_array):
        got = ErrorControlSelector(**kw).fit(fmt(X), y)
        np.testing.assert_allclose(got.pvalues_, dense.pvalues_, rtol=1e-10, atol=1e-300)
        np.testing.assert_array_equal(got.ranking_, dense.ranking_)
    assert dense.pvalues_[9] == 1.0 and dense.ranking_[9] == 30  # the empty column: last
