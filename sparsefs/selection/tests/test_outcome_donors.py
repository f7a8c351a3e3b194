"""``groups=`` (donors) with a continuous or survival target (issues #30 and #32 together).

What is supported, and checked against an independent computation:

* ErrorControlSelector, a target constant within every donor (a donor attribute): the F test
  of the donor pseudobulks on the donors' values = scikit-learn's ``f_regression`` and scipy's
  ``pearsonr`` on hand-computed donor means; donor-level permutations of a survival target =
  the enumeration of every assignment of the donors' (time, event) pairs, each scored by a
  brute-force Breslow score test written here;
* StabilitySelector: halves of the donors for any target (set arithmetic on the rows a
  recording base estimator saw).

And what is refused, with the message naming what is supported: a target that varies within
donors in ErrorControlSelector, the Spearman / Cox approximations with a handful of donors,
fewer than 3 donors, ``strata`` with ``groups``, exact permutations that cannot select.
"""

import itertools

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats
from sklearn.feature_selection import f_regression

from sparsefs.selection import ErrorControlSelector, StabilitySelector, UnivariateScore
from sparsefs.utils import survival_target


def donor_data(n_donors=10, cells=(15, 40), p=40, donor_sd=0.8, n_signal=3, seed=0):
    """Gaussian cells with a per-donor offset of every feature; the first ``n_signal``
    features track the donor's age (a donor attribute)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(cells[0], cells[1], size=n_donors)
    g = np.repeat(np.arange(n_donors), sizes)
    age = rng.uniform(20, 80, size=n_donors)
    offsets = donor_sd * rng.normal(size=(n_donors, p))
    offsets[:, :n_signal] += (age[:, None] - 50) / 15
    X = offsets[g] + rng.normal(size=(g.shape[0], p))
    return X, g, age


def donor_means(X, g):
    return np.array([X[g == d].mean(axis=0) for d in np.unique(g)])


def breslow_score_stat(x, time, event):
    """The Cox score statistic U^2 / I at beta = 0 with Breslow ties, by its definition:
    U = sum over events of (x_i - mean of x over the risk set), I = sum over events of the
    (population) variance of x over the risk set."""
    u = info = 0.0
    for i in np.flatnonzero(event):
        risk = x[time >= time[i]]
        u += x[i] - risk.mean()
        info += risk.var()
    return u * u / info if info > 0 else -np.inf


# ---------------------------------------------------------------------------- error control


def test_continuous_donor_attribute_is_the_f_test_on_donor_means():
    X, g, age = donor_data()
    y = age[g]
    sel = ErrorControlSelector(level=0.1).fit(X, y, groups=[f"d{k}" for k in g])
    assert sel.design_ == "nested" and sel.design_info_ is None
    assert sel.pvalue_method_ == "pseudobulk-f"
    M = donor_means(X, g)
    ref = f_regression(M, age)[1]
    assert_allclose(sel.pvalues_, ref, rtol=1e-9)
    assert_allclose(sel.pvalues_, [stats.pearsonr(M[:, j], age).pvalue for j in range(40)],
                    rtol=1e-9)
    assert_array_equal(sel.support_, stats.false_discovery_control(ref) <= 0.1)
    assert sel.support_[:3].all()
    # pearson gives the same p-values; a UnivariateScore of the F test is replaced by it
    same = ErrorControlSelector(pvalues="pearson", level=0.1).fit(X, y, groups=g)
    assert same.pvalue_method_ == "pseudobulk-pearson"
    assert_allclose(same.pvalues_, ref, rtol=1e-9)
    uni = ErrorControlSelector(UnivariateScore(test="f"), level=0.1).fit(X, y, groups=g)
    assert uni.pvalue_method_ == "pseudobulk-f" and uni.estimator_ is None
    # cells counted as independent: the donor offsets make null features "significant"
    cell = ErrorControlSelector(level=0.1).fit(X, y)
    assert cell.design_ is None and cell.pvalue_method_ == "f"
    assert (cell.support_[3:].sum() > 3 * max(1, sel.support_[3:].sum()))


def test_continuous_donor_permutations_move_whole_donors():
    """5 donors: all 120 orders of the donors' ages; each scored by f_regression on the
    cells (an independent implementation of UnivariateScore's F)."""
    X, g, age = donor_data(n_donors=5, cells=(6, 12), p=8, seed=1)
    y = age[g]
    sel = ErrorControlSelector(pvalues="permutation", n_features_to_select=2,
                               random_state=0).fit(X, y, groups=g)
    assert sel.exact_permutations_ and sel.n_permutations_ == 120
    assert sel.pvalue_method_ == "donor-permutation-exact"
    observed = f_regression(X, y)[0]
    count = np.zeros(8)
    for order in itertools.permutations(range(5)):
        count += f_regression(X, age[list(order)][g])[0] >= observed * (1 - 1e-9)
    assert_allclose(sel.pvalues_, count / 120)


def test_survival_donor_permutations_equal_the_enumeration():
    """A survival target constant within donors ("auto": donor permutations, time and event
    together); p = #{assignments with a score statistic >= the observed} / 120."""
    X, g, _ = donor_data(n_donors=5, cells=(5, 9), p=6, seed=2)
    time = np.array([3.0, 7.5, 1.2, 9.9, 5.1])
    event = np.array([True, False, True, True, False])
    X[:, 0] += 0.8 * np.log(time)[g]
    y = survival_target(event[g], time[g])
    sel = ErrorControlSelector(n_features_to_select=2, random_state=0).fit(X, y, groups=g)
    assert sel.design_ == "nested" and sel.pvalue_method_ == "donor-permutation-exact"
    assert sel.n_permutations_ == 120 and type(sel.estimator_).__name__ == "UnivariateScore"
    stat = np.array([[breslow_score_stat(X[:, j], t[g], e[g]) for j in range(6)]
                     for t, e in ((time[list(o)], event[list(o)])
                                  for o in itertools.permutations(range(5)))])
    observed = np.array([breslow_score_stat(X[:, j], time[g], event[g]) for j in range(6)])
    assert_allclose(sel.estimator_scores_, observed, rtol=1e-9)
    ref = (stat >= observed * (1 - 1e-9)).sum(axis=0) / 120
    assert_allclose(sel.pvalues_, ref)


def test_exact_survival_permutations_refuse_when_nothing_can_be_selected():
    X, g, _ = donor_data(n_donors=4, cells=(5, 9), p=30, seed=3)
    time = np.array([3.0, 7.5, 1.2, 9.9])
    y = survival_target(np.array([True, True, False, True])[g], time[g])
    with pytest.raises(ValueError, match=r"only 24 distinct relabelings \(the survival target "
                       r"values of whole donors\).*Use more donors"):
        ErrorControlSelector().fit(X, y, groups=g)


def test_outcome_groups_refusals_name_what_is_supported():
    X, g, age = donor_data()
    rng = np.random.default_rng(0)
    varying = age[g] + rng.normal(size=g.shape[0])  # e.g. pseudotime: not a donor attribute
    with pytest.raises(ValueError, match=r"continuous target that varies within donors.*"
                       r"constant within every donor.*class labels are supported in both the "
                       r"nested and the crossed design.*StabilitySelector"):
        ErrorControlSelector().fit(X, varying, groups=g)
    surv = survival_target(rng.random(g.shape[0]) < 0.6, rng.exponential(5, g.shape[0]))
    with pytest.raises(ValueError, match="survival target that varies within donors"):
        ErrorControlSelector().fit(X, surv, groups=g)
    with pytest.raises(ValueError, match=r"pvalues='spearman' with groups=.*pvalues='f'"):
        ErrorControlSelector(pvalues="spearman").fit(X, age[g], groups=g)
    donor_surv = survival_target((np.arange(10) % 3 > 0)[g], (1.0 + np.arange(10))[g])
    with pytest.raises(ValueError, match=r"pvalues='cox' with groups=.*'permutation'"):
        ErrorControlSelector(pvalues="cox").fit(X, donor_surv, groups=g)
    two = g < 2
    with pytest.raises(ValueError, match="at least 3 donors"):
        ErrorControlSelector().fit(X[two], age[g][two], groups=g[two])
    with pytest.raises(ValueError, match="groups= or strata=, not both"):
        ErrorControlSelector().fit(X, age[g], groups=g, strata=g % 2)
    # class labels keep their own rules (the nested F test on the same donors)
    classes = (age[g] > 50).astype(int)
    assert ErrorControlSelector().fit(X, classes, groups=g).pvalue_method_ == "pseudobulk-anova"


# -------------------------------------------------------------------------------- stability


class RecordUnivariate(UnivariateScore):
    """UnivariateScore that records the donors (column 0 holds the donor code) of every fit
    and how many rows it saw (a class-level list: clones share it)."""

    seen: list = []  # noqa: RUF012 - shared on purpose between clones

    def fit(self, X, y=None):
        codes = np.asarray(X[:, 0]).astype(int)
        RecordUnivariate.seen.append((frozenset(codes.tolist()), codes.shape[0]))
        return super().fit(X, y)


def _halves(sel_kw, X, y, g):
    RecordUnivariate.seen = []
    sel = StabilitySelector(RecordUnivariate(n_features_to_select=2), **sel_kw).fit(X, y,
                                                                                  groups=g)
    return sel, RecordUnivariate.seen


@pytest.mark.parametrize("kind", ["continuous", "survival"])
def test_stability_outcomes_resample_whole_donors(kind):
    X, g, age = donor_data(n_donors=10, cells=(5, 9), p=6, seed=4)
    X[:, 0] = g
    if kind == "continuous":
        y = age[g]
    else:
        event = np.array([1, 1, 1, 1, 0, 0, 0, 0, 0, 0], dtype=bool)  # 4 of 10 donors
        y = survival_target(event[g], (1.0 + np.arange(10))[g])
    sel, seen = _halves({"n_resamples": 8, "random_state": 0, "threshold": 0.5}, X, y, g)
    assert sel.design_ == "nested" and sel.design_info_ is None
    assert sel.target_type_ == ("regression" if kind == "continuous" else "survival")
    sizes = np.bincount(g)
    assert len(seen) == 8
    for b in range(4):
        (a, na), (c, nc) = seen[2 * b], seen[2 * b + 1]
        assert not a & c and len(a | c) == 10  # complementary halves of the donors
        assert na == sizes[list(a)].sum() and nc == sizes[list(c)].sum()  # every cell
        if kind == "survival":  # stratified by the donors' events: 2 event donors each
            assert len(a & {0, 1, 2, 3}) == 2 and len(c & {0, 1, 2, 3}) == 2


def test_stability_outcome_varying_within_donors_is_crossed():
    X, g, age = donor_data(n_donors=8, cells=(5, 9), p=6, seed=5)
    X[:, 0] = g
    pseudotime = age[g] + np.random.default_rng(0).normal(size=g.shape[0])
    sel, seen = _halves({"n_resamples": 4, "random_state": 0, "threshold": 0.5}, X,
                        pseudotime, g)
    assert sel.design_ == "crossed"
    for b in range(2):
        assert not seen[2 * b][0] & seen[2 * b + 1][0]
        assert len(seen[2 * b][0] | seen[2 * b + 1][0]) == 8


def test_stability_survival_needs_two_event_donors():
    X, g, _ = donor_data(n_donors=6, cells=(5, 9), p=6, seed=6)
    event = np.array([1, 0, 0, 0, 0, 0], dtype=bool)
    y = survival_target(event[g], (1.0 + np.arange(6))[g])
    with pytest.raises(ValueError, match=r"1 donor\(s\) with an observed event.*at least 2 "
                       r"donors with an event"):
        StabilitySelector(UnivariateScore(n_features_to_select=2), n_resamples=4).fit(
            X, y, groups=g)


def test_stability_donor_halves_bound_donor_driven_false_selections():
    """A continuous donor attribute with donor offsets: halves of the cells (every donor in
    both) select donor-driven null features in most resamples; halves of the donors keep the
    false selections within the bound (the first 3 features, which track age, are the
    true ones)."""
    X, g, age = donor_data(n_donors=12, cells=(20, 40), p=200, donor_sd=1.0, seed=7)
    y = age[g]
    kw = {"n_resamples": 20, "threshold": 0.8, "random_state": 0}
    cell = StabilitySelector(UnivariateScore(n_features_to_select=10), **kw).fit(X, y)
    donor = StabilitySelector(UnivariateScore(n_features_to_select=10), **kw).fit(X, y,
                                                                                groups=g)
    assert donor.pfer_bound_ == pytest.approx(cell.pfer_bound_)
    assert cell.support_[3:].sum() > 2 * cell.pfer_bound_
    assert donor.support_[3:].sum() <= donor.pfer_bound_
    assert donor.support_[:3].any()  # and it still finds true ones
