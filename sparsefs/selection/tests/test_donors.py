"""``groups=`` (donors) in ErrorControlSelector and StabilitySelector.

References: scipy's ``f_oneway`` on hand-computed donor means (nested); the closed-form
two-way ANOVA without replication (crossed, complete blocks); the exact permutation
distribution by enumerating every assignment of the classes to the donors, each scored with
scikit-learn's ``f_classif`` (an independent implementation of the statistic); and the
multi-donor simulation, whose null genes cell-level procedures call significant.
"""

import logging
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin, f_classif

from sparsefs.datasets import make_multi_donor_counts
from sparsefs.exceptions import NoFeatureSelectedWarning
from sparsefs.selection import ErrorControlSelector, FisherScore, StabilitySelector


def donor_cells(rng, table, p=30, donor_sd=0.8, shift=None):
    """Gaussian cells for a donor x class table, with a donor x class offset per feature."""
    rows, y, g = [], [], []
    for d, c in zip(*np.nonzero(table)):
        n = table[d, c]
        offset = donor_sd * rng.normal(size=p)
        if shift is not None:
            offset = offset + shift[c]
        rows.append(rng.normal(offset, 1.0, size=(n, p)))
        y += [c] * n
        g += [f"donor{d}"] * n
    return np.vstack(rows), np.asarray(y), np.asarray(g)


@pytest.fixture(scope="module")
def nested_sim():
    return make_multi_donor_counts(n_genes=400, n_groups=2, design="nested", n_donors=12,
                                   cells_per_donor=(50, 150), n_markers=10, log_fc=2.5,
                                   donor_sd=0.6, random_state=0)


@pytest.fixture(scope="module")
def crossed_sim():
    return make_multi_donor_counts(n_genes=400, n_groups=3, design="crossed", n_donors=6,
                                   cells_per_donor=(60, 150), n_markers=8, log_fc=1.5,
                                   donor_sd=0.6, random_state=0)


# ---------------------------------------------------------------------------- error control


def test_nested_pvalues_are_the_f_test_on_donor_means(nested_sim, caplog):
    d = nested_sim
    with caplog.at_level(logging.INFO, logger="sparsefs.donors"):
        sel = ErrorControlSelector(level=0.1).fit(d.X, d.y, groups=d.donors)
    assert sel.design_ == "nested" and sel.pvalue_method_ == "pseudobulk-anova"
    assert "nested design" in caplog.text and "the donor is the unit" in caplog.text
    X = d.X.toarray().astype(np.float64)
    donors = sorted(set(d.donors))
    means = np.array([X[d.donors == k].mean(axis=0) for k in donors])
    label = np.array([d.y[d.donors == k][0] for k in donors])
    ref = stats.f_oneway(*[means[label == c] for c in sorted(set(label))]).pvalue
    ref = np.where(np.isnan(ref), 1.0, ref)
    assert_allclose(sel.pvalues_, ref, rtol=1e-6, atol=1e-12)
    assert_array_equal(sel.support_, stats.false_discovery_control(ref) <= 0.1)


def test_crossed_pvalues_are_the_two_way_anova(crossed_sim, caplog):
    d = crossed_sim
    with caplog.at_level(logging.INFO, logger="sparsefs.donors"):
        sel = ErrorControlSelector(level=0.1).fit(d.X, d.y, groups=d.donors)
    assert sel.design_ == "crossed" and sel.pvalue_method_ == "blocked-anova"
    assert "crossed design" in caplog.text
    # closed form, complete blocks: two-way ANOVA without replication on the unit means
    X = d.X.toarray().astype(np.float64)
    donors, types = sorted(set(d.donors)), sorted(set(d.y))
    M = np.array([[X[(d.donors == k) & (d.y == t)].mean(axis=0) for t in types]
                  for k in donors])  # D x K x p
    D, K = M.shape[:2]
    grand = M.mean(axis=(0, 1))
    ss_type = D * ((M.mean(axis=0) - grand) ** 2).sum(axis=0)
    resid = M - M.mean(axis=1, keepdims=True) - M.mean(axis=0, keepdims=True) + grand
    ss_err = (resid**2).sum(axis=(0, 1))
    f = (ss_type / (K - 1)) / (ss_err / ((D - 1) * (K - 1)))
    ref = stats.f.sf(f, K - 1, (D - 1) * (K - 1))
    ok = ss_err > 1e-20
    assert_allclose(sel.pvalues_[ok], ref[ok], rtol=1e-6)
    assert (sel.pvalues_[~ok] == 1.0).all()  # genes never expressed
    assert sel.design_info_.df == (D - 1) * (K - 1)


def test_fisher_score_auto_is_the_pseudobulk_f(nested_sim):
    d = nested_sim
    plain = ErrorControlSelector().fit(d.X, d.y, groups=d.donors)
    fs = ErrorControlSelector(FisherScore(n_features_to_select=1)).fit(d.X, d.y,
                                                                       groups=d.donors)
    assert fs.pvalue_method_ == "pseudobulk-anova"
    assert_allclose(fs.pvalues_, plain.pvalues_)
    assert fs.estimator_ is None and fs.estimator_scores_ is None  # replaced, not fitted


def test_welch_with_groups(nested_sim, crossed_sim):
    d = nested_sim
    sel = ErrorControlSelector(pvalues="welch").fit(d.X, d.y, groups=d.donors)
    X = d.X.toarray().astype(np.float64)
    donors = sorted(set(d.donors))
    means = np.array([X[d.donors == k].mean(axis=0) for k in donors])
    label = np.array([d.y[d.donors == k][0] for k in donors])
    ref = stats.ttest_ind(means[label == "condition1"], means[label == "condition0"],
                          equal_var=False).pvalue
    ok = ~np.isnan(ref)
    assert sel.pvalue_method_ == "pseudobulk-welch"
    assert_allclose(sel.pvalues_[ok], ref[ok], rtol=1e-6)
    two = crossed_sim.y != "type2"
    c = crossed_sim
    sel = ErrorControlSelector(pvalues="welch", n_features_to_select=5).fit(
        c.X[two], c.y[two], groups=c.donors[two])
    Xc = c.X[two].toarray().astype(np.float64)
    a = np.array([Xc[(c.donors[two] == k) & (c.y[two] == "type1")].mean(axis=0)
                  for k in sorted(set(c.donors))])
    b = np.array([Xc[(c.donors[two] == k) & (c.y[two] == "type0")].mean(axis=0)
                  for k in sorted(set(c.donors))])
    ref = stats.ttest_rel(a, b).pvalue
    ok = ~np.isnan(ref)
    assert sel.pvalue_method_ == "paired-t"
    assert_allclose(sel.pvalues_[ok], ref[ok], rtol=1e-6)


def test_exact_donor_permutations_equal_the_enumeration():
    """3 + 3 donors: all 20 assignments of the classes to the donors; the p-value is the share
    of assignments whose F statistic (scikit-learn's f_classif on the cells) is at least the
    observed one, the observed assignment included."""
    rng = np.random.default_rng(0)
    table = np.zeros((6, 2), dtype=int)
    for k, c in enumerate([0, 1, 0, 1, 0, 1]):
        table[k, c] = rng.integers(5, 15)
    X, y, g = donor_cells(rng, table, p=12, shift={0: np.zeros(12), 1: np.r_[3.0, np.zeros(11)]})
    sel = ErrorControlSelector(FisherScore(n_features_to_select=1), pvalues="permutation",
                               n_features_to_select=3, random_state=0).fit(X, y, groups=g)
    assert sel.exact_permutations_ and sel.n_permutations_ == 20
    assert sel.pvalue_method_ == "donor-permutation-exact"
    observed = f_classif(X, y)[0]
    donors = np.unique(g)
    count = np.zeros(12)
    from itertools import combinations

    for ones in combinations(range(6), 3):
        new = np.isin(g, donors[list(ones)]).astype(int)
        count += f_classif(X, new)[0] >= observed * (1 - 1e-9)
    assert_allclose(sel.pvalues_, count / 20)
    # F is symmetric in the two classes: an assignment and its mirror tie, the floor is 2/20
    assert sel.pvalues_.min() == pytest.approx(2 / 20)


def test_exact_permutations_refuse_when_nothing_can_be_selected(nested_sim):
    d = nested_sim  # 6 + 6 donors: 924 relabelings, smallest p 1/924 > 0.05 / 400
    with pytest.raises(ValueError, match=r"only 924 distinct relabelings.*1/924"):
        ErrorControlSelector(FisherScore(1), pvalues="permutation").fit(d.X, d.y,
                                                                         groups=d.donors)


def test_crossed_permutations_hold_the_level_where_cell_permutations_do_not():
    """Null genes with donor x type offsets: p-values from relabeling the types within donors
    (whole units) are about uniform; permuting cells within donors (strata) is not."""
    d = make_multi_donor_counts(n_genes=150, n_groups=3, design="crossed", n_donors=5,
                                cells_per_donor=(60, 100), n_markers=0, donor_sd=0.9,
                                mean_log=0.5, sd_log=0.5, random_state=3)
    kw = {"pvalues": "permutation", "n_permutations": 99, "n_features_to_select": 5,
          "random_state": 0}
    donor = ErrorControlSelector(FisherScore(1), **kw).fit(d.X, d.y, groups=d.donors)
    cell = ErrorControlSelector(FisherScore(1), **kw).fit(d.X, d.y, strata=d.donors)
    assert donor.pvalue_method_ == "donor-permutation" and not donor.exact_permutations_
    assert np.mean(donor.pvalues_ <= 0.05) <= 0.12
    assert np.mean(cell.pvalues_ <= 0.05) >= 0.3


@pytest.mark.parametrize("design", ["nested", "crossed"])
def test_fdp_on_a_few_simulated_data_sets(design):
    """Loose check on 3 seeds (the Monte Carlo is benchmarks/bench_donors.py and the slow
    test): cell-level BH calls the donor-driven null genes, donor-level BH does not."""
    fdp_cell, fdp_donor = [], []
    for seed in range(3):
        d = make_multi_donor_counts(n_genes=300, n_groups=2 if design == "nested" else 3,
                                    design=design, n_donors=8, cells_per_donor=(40, 120),
                                    n_markers=8, log_fc=2.0, donor_sd=0.6, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NoFeatureSelectedWarning)
            cell = ErrorControlSelector(level=0.1).fit(d.X, d.y).support_
            donor = ErrorControlSelector(level=0.1).fit(d.X, d.y, groups=d.donors).support_
        fdp_cell.append((cell & ~d.support).sum() / max(1, cell.sum()))
        fdp_donor.append((donor & ~d.support).sum() / max(1, donor.sum()))
    assert np.mean(fdp_cell) > 0.5
    assert np.mean(fdp_donor) < 0.25


def test_errors(nested_sim, crossed_sim):
    d = nested_sim
    one = np.full(d.X.shape[0], "only")
    with pytest.raises(ValueError, match="single donor"):
        ErrorControlSelector().fit(d.X, d.y, groups=one)
    per_class = np.where(d.y == "condition0", "a", "b")
    with pytest.raises(ValueError, match="confounded"):
        ErrorControlSelector().fit(d.X, d.y, groups=per_class)
    with pytest.raises(ValueError, match="not both"):
        ErrorControlSelector().fit(d.X, d.y, groups=d.donors, strata=d.donors)
    for kind in ("mannwhitney", "kruskal"):
        with pytest.raises(ValueError, match="rank test"):
            ErrorControlSelector(pvalues=kind).fit(d.X, d.y, groups=d.donors)
    with pytest.raises(ValueError, match="one label per sample"):
        ErrorControlSelector().fit(d.X, d.y, groups=d.donors[:-1])
    missing = d.donors.astype(object)
    missing[3] = None
    with pytest.raises(ValueError, match="missing labels"):
        ErrorControlSelector().fit(d.X, d.y, groups=missing)
    lone = np.where(d.donors == "donor0", "A", "B")  # nested, 1 + 7 donors
    with pytest.raises(ValueError, match="at least 2 donors per class"):
        ErrorControlSelector(pvalues="welch").fit(d.X, lone, groups=d.donors)


def test_groups_accept_pandas_and_ints(nested_sim):
    pd = pytest.importorskip("pandas")
    d = nested_sim
    ref = ErrorControlSelector().fit(d.X, d.y, groups=d.donors).pvalues_
    codes = np.unique(d.donors, return_inverse=True)[1]
    for groups in (pd.Series(d.donors, dtype="category"), codes, list(d.donors)):
        assert_allclose(ErrorControlSelector().fit(d.X, d.y, groups=groups).pvalues_, ref)


# -------------------------------------------------------------------------------- stability


class RecordRows(SelectorMixin, BaseEstimator):
    """Keeps the first feature; records which donors (column 0 holds the donor code) and how
    many rows each fit saw (a class-level list: clones share it)."""

    seen: list = []  # noqa: RUF012 - shared on purpose between clones

    def fit(self, X, y=None):
        codes = np.asarray(X[:, 0]).ravel().astype(int)
        RecordRows.seen.append((frozenset(codes.tolist()), codes.shape[0]))
        self.n_features_in_ = X.shape[1]
        return self

    def _get_support_mask(self):
        mask = np.zeros(self.n_features_in_, dtype=bool)
        mask[0] = True
        return mask


def test_stability_resamples_whole_donors(nested_sim):
    d = nested_sim
    codes, idx = np.unique(d.donors, return_inverse=True)
    X = np.column_stack([idx.astype(float), np.ones(idx.shape[0])])
    RecordRows.seen = []
    sel = StabilitySelector(RecordRows(), n_resamples=10, random_state=0, threshold=0.5)
    sel.fit(X, d.y, groups=d.donors)
    assert sel.design_ == "nested"
    sizes = np.bincount(idx)
    donor_class = np.array([d.y[idx == k][0] for k in range(len(codes))])
    assert len(RecordRows.seen) == 10
    for b in range(5):
        (a, na), (c, nc) = RecordRows.seen[2 * b], RecordRows.seen[2 * b + 1]
        assert not a & c and len(a | c) == 12  # complementary halves of the donors
        assert na == sizes[list(a)].sum() and nc == sizes[list(c)].sum()  # every cell
        assert sorted(donor_class[list(a)]) == ["condition0"] * 3 + ["condition1"] * 3


def test_stability_with_donors_bounds_false_selections(nested_sim):
    """Nested design, donor-driven null genes: cell-level halves (every donor in both) select
    them in every resample; donor-level halves keep their frequency low."""
    d = nested_sim
    kw = {"n_resamples": 20, "threshold": 0.75, "random_state": 0}
    cell = StabilitySelector(FisherScore(n_features_to_select=40), **kw).fit(d.X, d.y)
    donor = StabilitySelector(FisherScore(n_features_to_select=40), **kw).fit(
        d.X, d.y, groups=d.donors)
    false_cell = int((cell.support_ & ~d.support).sum())
    false_donor = int((donor.support_ & ~d.support).sum())
    assert donor.design_ == "nested" and cell.design_ is None
    assert donor.pfer_bound_ == pytest.approx(cell.pfer_bound_)  # same q, p, threshold
    assert false_cell > 2 * cell.pfer_bound_  # 11 against a bound of 4.4
    assert false_donor <= donor.pfer_bound_  # 1


def test_stability_groups_errors(nested_sim):
    d = nested_sim
    with pytest.raises(ValueError, match="single donor"):
        StabilitySelector(FisherScore(5), n_resamples=4).fit(d.X, d.y,
                                                           groups=np.zeros(d.X.shape[0]))
    lone = np.where(d.donors == "donor0", "A", "B")  # nested, 1 + 7 donors
    with pytest.raises(ValueError, match="at least 2 donors per class"):
        StabilitySelector(FisherScore(5), n_resamples=4).fit(d.X, lone, groups=d.donors)


def test_stability_crossed_and_unsupervised(crossed_sim):
    from sparsefs.selection import LaplacianScore

    c = crossed_sim
    sel = StabilitySelector(FisherScore(10), n_resamples=6, random_state=0).fit(
        c.X, c.y, groups=c.donors)
    assert sel.design_ == "crossed" and sel.supports_.shape == (6, c.X.shape[1])
    un = StabilitySelector(LaplacianScore(n_features_to_select=10), n_resamples=4,
                           random_state=0).fit(c.X[:300], groups=c.donors[:300])
    assert un.design_ == "unlabelled"
