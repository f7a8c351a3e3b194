"""Multiple-testing kernels against independent references.

References: hand-computed examples (each step written out in the test); scipy's
``false_discovery_control`` (BH/BY adjusted p-values); brute force over every candidate
rejection count (the textbook definitions of the step-up / step-down rules); scipy's
per-column tests (``f_oneway``, ``ttest_ind(equal_var=False)``, ``mannwhitneyu`` asymptotic,
``kruskal``); an exact enumeration of the permutation distribution of Mann-Whitney's U.
"""

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats

from sparsefs._kernels import multiple_testing as mt

# Hand example (Benjamini & Hochberg's style): m = 10, alpha = 0.05.
P_HAND = np.array([0.001, 0.008, 0.039, 0.041, 0.042, 0.060, 0.074, 0.205, 0.212, 0.216])


def test_bh_hand_example():
    # thresholds i * 0.05 / 10 = 0.005, 0.010, 0.015, 0.020, 0.025, ...: p_(1), p_(2) pass,
    # p_(3) = 0.039 > 0.015, ... none later passes (0.042 > 0.025, 0.060 > 0.030, ...).
    assert mt.reject(P_HAND, 0.05, "bh").tolist() == [True, True] + [False] * 8
    # at alpha = 0.25: thresholds 0.025 i; p_(5) = 0.042 <= 0.125 and p_(10) = 0.216 <= 0.25:
    # the step-up rule rejects all 10 although p_(8) = 0.205 > 0.2 (step-up, not step-down)
    assert mt.reject(P_HAND, 0.25, "bh").all()
    # adjusted: q_(10) = 0.216; q_(9) = min(0.216, 10/9 * 0.212) = 0.216; q_(1) = 0.01,
    # q_(2) = min(10/2*0.008=0.04, q_(3..)) with q_(3) = min(10/3*0.039=0.13, q_(4..)) and
    # q_(5) = 10/5*0.042 = 0.084 < q_(4) = 0.1025: q_(3) = q_(4) = 0.084
    q = mt.adjust_pvalues(P_HAND, "bh")
    np.testing.assert_allclose(q[[0, 1, 2, 3, 4, 9]], [0.01, 0.04, 0.084, 0.084, 0.084, 0.216])


def test_by_hand_example():
    c = sum(1 / i for i in range(1, 11))  # 2.9289682539682538
    # BY = BH at 0.05 / c = 0.01707: thresholds 0.001707 i; p_(1) = 0.001 passes,
    # p_(2) = 0.008 > 0.003414, p_(3) = 0.039 > 0.005121, ... nothing later
    assert mt.reject(P_HAND, 0.05, "by").tolist() == [True] + [False] * 9
    np.testing.assert_allclose(mt.adjust_pvalues(P_HAND, "by")[0], 10 * 0.001 * c)


def test_holm_and_bonferroni_hand_example():
    # Holm: 0.001 <= 0.05/10, 0.008 > 0.05/9 = 0.00556: stop after one rejection
    assert mt.reject(P_HAND, 0.05, "holm").tolist() == [True] + [False] * 9
    # at alpha = 0.1: 0.001 <= 0.01, 0.008 <= 0.0111, 0.039 > 0.0125: two rejections
    assert mt.reject(P_HAND, 0.1, "holm").tolist() == [True, True] + [False] * 8
    # Holm adjusted: 10*0.001 = 0.01, max(0.01, 9*0.008 = 0.072), max(0.072, 8*0.039 = 0.312)
    np.testing.assert_allclose(mt.adjust_pvalues(P_HAND, "holm")[:3], [0.01, 0.072, 0.312])
    # Bonferroni at 0.1: p <= 0.01: 0.001 and 0.008
    assert mt.reject(P_HAND, 0.1, "bonferroni").tolist() == [True, True] + [False] * 8
    np.testing.assert_allclose(mt.adjust_pvalues(P_HAND, "bonferroni")[:2], [0.01, 0.08])
    assert mt.adjust_pvalues(P_HAND, "bonferroni").max() == 1.0


def test_order_and_ties():
    """Rejections do not depend on the order of the input; tied p-values share a fate."""
    rng = np.random.default_rng(0)
    p = np.round(rng.uniform(size=60) ** 4, 3)  # many ties
    perm = rng.permutation(60)
    for method in mt.METHODS:
        for alpha in (0.01, 0.05, 0.2):
            r = mt.reject(p, alpha, method)
            assert np.array_equal(mt.reject(p[perm], alpha, method), r[perm])
            for v in np.unique(p):
                assert len(set(r[p == v].tolist())) == 1


@pytest.mark.parametrize("method", ["bh", "by"])
def test_adjusted_pvalues_equal_scipy(method):
    rng = np.random.default_rng(3)
    for m in (1, 2, 17, 500):
        p = rng.uniform(size=m) ** rng.uniform(0.5, 5)
        np.testing.assert_allclose(mt.adjust_pvalues(p, method),
                                   stats.false_discovery_control(p, method=method),
                                   rtol=1e-12, atol=0)


def _brute_force(p, alpha, method):
    """The definitions, checked for every candidate count k = 0..m."""
    m = p.shape[0]
    ordered = np.sort(p)
    if method == "bonferroni":
        return p <= alpha / m
    if method == "holm":
        k = 0
        while k < m and ordered[k] <= alpha / (m - k):
            k += 1
    else:
        level = alpha / (sum(1 / i for i in range(1, m + 1)) if method == "by" else 1.0)
        k = max([i for i in range(1, m + 1) if ordered[i - 1] <= i * level / m], default=0)
    return p <= ordered[k - 1] if k else np.zeros(m, dtype=bool)


@settings(max_examples=150, deadline=None)
@given(arrays(np.float64, st.integers(1, 30), elements=st.floats(0, 1)),
       st.sampled_from(sorted(mt.METHODS)), st.sampled_from([0.01, 0.05, 0.1, 0.5, 1.0]))
def test_reject_equals_definition_and_adjusted(p, method, alpha):
    r = mt.reject(p, alpha, method)
    assert np.array_equal(r, _brute_force(p, alpha, method))
    q = mt.adjust_pvalues(p, method)
    assert np.all(q >= p - 1e-15) and np.all(q <= 1.0)
    # rejected exactly when the adjusted p-value is <= alpha (up to one rounding)
    assert np.all(q[r] <= alpha * (1 + 1e-12))
    assert np.all(q[~r] >= alpha * (1 - 1e-12))


def test_step_up_is_at_least_holm_at_least_bonferroni():
    rng = np.random.default_rng(4)
    for _ in range(50):
        p = rng.uniform(size=40) ** 3
        bh, holm, bonf = (mt.reject(p, 0.05, m) for m in ("bh", "holm", "bonferroni"))
        assert np.all(bonf <= holm) and np.all(holm <= bh)
        assert np.all(mt.reject(p, 0.05, "by") <= bh)


def test_bad_inputs():
    with pytest.raises(ValueError, match="NaN"):
        mt.reject([0.1, np.nan], 0.05)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        mt.adjust_pvalues([0.1, 1.5])
    with pytest.raises(ValueError, match="method="):
        mt.reject([0.1], 0.05, "hommel")
    with pytest.raises(ValueError, match="alpha="):
        mt.reject([0.1], 0.0)
    assert mt.reject(np.zeros(0), 0.05).shape == (0,)


# --------------------------------------------------------------------------------------------
# p-values
# --------------------------------------------------------------------------------------------


def test_permutation_pvalues_hand_example():
    observed = np.array([3.0, 0.0, 1.0])
    null = np.array([[1.0, 0.0, 2.0], [4.0, -1.0, 0.5], [2.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    # feature 0: null >= 3 once (4): (1+1)/5; feature 1: 0, 0, 1 >= 0: (1+3)/5;
    # feature 2: 2 and 1 >= 1: (1+2)/5
    np.testing.assert_allclose(mt.permutation_pvalues(observed, null), [0.4, 0.8, 0.6])
    assert mt.permutation_pvalues(observed, np.full((9, 3), -1.0)).min() == 0.1  # never 0
    # max-T: row maxima 2, 4, 2, 1; T = 3: one maximum >= 3: 2/5; T = 0 and T = 1: all four
    np.testing.assert_allclose(mt.maxt_pvalues(observed, null.max(axis=1)), [0.4, 1.0, 1.0])


def _column_data(seed=0, n=31, m=25):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m)) * rng.uniform(0.5, 3, size=m)
    X[:, 3] = np.round(X[:, 3])  # ties
    X[:, 4] = np.round(X[:, 4] * 3) / 3
    return X


def test_anova_equals_scipy_f_oneway():
    X = _column_data()
    y = np.arange(X.shape[0]) % 3
    ref = stats.f_oneway(*[X[y == c] for c in range(3)]).pvalue
    np.testing.assert_allclose(mt.anova_f_pvalues(X, y, 3), ref, rtol=1e-10)
    Xc = X.copy()
    Xc[:, 0] = 2.0  # constant: 0/0 -> 1
    Xc[:, 1] = y * 1e300  # no within-class spread, separated: 0
    p = mt.anova_f_pvalues(Xc, y, 3)
    assert p[0] == 1.0 and p[1] == 0.0


def test_welch_equals_scipy_ttest():
    X = _column_data(1)
    y = (np.arange(X.shape[0]) % 3 == 0).astype(int)  # unbalanced
    ref = stats.ttest_ind(X[y == 1], X[y == 0], equal_var=False).pvalue
    np.testing.assert_allclose(mt.welch_t_pvalues(X, y), ref, rtol=1e-10)


def test_mann_whitney_equals_scipy_asymptotic():
    X = _column_data(2)
    y = (np.arange(X.shape[0]) % 3 == 0).astype(int)
    ref = stats.mannwhitneyu(X[y == 1], X[y == 0], method="asymptotic").pvalue
    np.testing.assert_allclose(mt.mann_whitney_pvalues(X, y), ref, rtol=1e-10)


def test_mann_whitney_close_to_exact_enumeration():
    """Against the exact permutation distribution of U (all C(16, 8) labellings)."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=16) + np.r_[np.zeros(8), np.full(8, 1.2)]
    y = np.r_[np.zeros(8, int), np.ones(8, int)]
    ranks = stats.rankdata(x)
    u_obs = ranks[y == 1].sum() - 36
    us = np.array([ranks[list(c)].sum() - 36 for c in combinations(range(16), 8)])
    exact = np.mean(np.abs(us - 32) >= abs(u_obs - 32))
    got = mt.mann_whitney_pvalues(x[:, None], y)[0]
    assert abs(got - exact) < 0.01, (got, exact)


def test_kruskal_equals_scipy():
    X = _column_data(3)
    y = np.arange(X.shape[0]) % 4
    ref = [stats.kruskal(*[X[y == c, j] for c in range(4)]).pvalue for j in range(X.shape[1])]
    np.testing.assert_allclose(mt.kruskal_pvalues(X, y, 4), ref, rtol=1e-10)
    Xc = X.copy()
    Xc[:, 0] = 1.0
    assert mt.kruskal_pvalues(Xc, y, 4)[0] == 1.0
    assert mt.mann_whitney_pvalues(Xc, (y == 0).astype(int))[0] == 1.0


def test_tests_need_their_classes():
    X = _column_data()
    with pytest.raises(ValueError, match="2 samples per class"):
        mt.welch_t_pvalues(X[:3], np.array([0, 1, 1]))
    with pytest.raises(ValueError, match="more samples"):
        mt.anova_f_pvalues(X[:3], np.array([0, 1, 2]), 3)


def test_ties_up_to_rounding_count_as_exceedances():
    """A permuted statistic equal to the observed one in exact arithmetic but one rounding
    below it (another summation order) still counts: the p-value stays valid."""
    t = np.array([0.3, 5.0, np.inf, -2.0])
    below = np.nextafter(t, -np.inf)  # one rounding below (inf stays inf)
    below[2] = np.inf
    p = mt.permutation_pvalues(t, below[None, :])
    np.testing.assert_array_equal(p, [1.0, 1.0, 1.0, 1.0])
    assert mt.permutation_pvalues(t, (t * 0.99)[None, :])[1] == 0.5  # a real difference
    np.testing.assert_array_equal(mt.maxt_pvalues([5.0], [np.nextafter(5.0, 0)]), [1.0])
