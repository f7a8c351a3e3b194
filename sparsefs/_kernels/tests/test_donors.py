"""Donor-level kernels against independent references.

References: brute-force group means (numpy loops), scipy's ``f_oneway`` / ``ttest_ind`` /
``ttest_1samp`` on hand-built donor tables, statsmodels' OLS ANOVA (type II) for the two-way
block model, and complete enumeration of relabelings (itertools) for their counts.
"""

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats

from sparsefs._kernels import donors as dk


def cells(rng, table, p=6, donor_sd=0.5):
    """Cells for a donor x class table of counts: Gaussian values with donor x class offsets."""
    rows, y, g = [], [], []
    for d, c in zip(*np.nonzero(table)):
        n = table[d, c]
        rows.append(rng.normal(donor_sd * rng.normal(size=p), 1.0, size=(n, p)))
        y += [c] * n
        g += [d] * n
    order = rng.permutation(len(y))
    return np.vstack(rows)[order], np.asarray(y)[order], np.asarray(g)[order]


def brute_means(X, y, g):
    keys = sorted(set(zip(g.tolist(), y.tolist())))
    return keys, np.array([X[(g == d) & (y == c)].mean(axis=0) for d, c in keys])


# ------------------------------------------------------------------------------------ design


@pytest.mark.parametrize(
    ("table", "design", "df", "n_rel"),
    [
        ([[5, 0], [4, 0], [0, 3], [0, 6]], "nested", 2, 6),  # C(4, 2)
        ([[5, 0, 0], [4, 0, 0], [0, 3, 0], [0, 6, 0], [0, 0, 2]], "nested", 2, 30),
        ([[3, 4], [2, 5], [1, 1]], "crossed", 2, 8),  # 6 units - 3 - 2 + 1; 2!^3
        ([[3, 4, 1], [2, 5, 2]], "crossed", 2, 36),
        ([[3, 4, 0], [2, 0, 2], [0, 1, 3]], "crossed", 1, 8),  # incomplete blocks, linked
        ([[3, 4], [2, 0], [1, 1]], "crossed", 1, 4),  # one single-class donor, noted
        ([[5, 3]], "neither", 0, 1),  # one donor
        ([[5, 0], [0, 3]], "neither", 0, 2),  # one donor per class
        ([[3, 4, 0, 0], [2, 5, 0, 0], [0, 0, 3, 3], [0, 0, 1, 1]], "neither", 0, 1),  # unlinked
        ([[3, 4], [2, 0], [0, 1]], "neither", 0, 2),  # one linking donor: no residual df
    ],
)
def test_detect_design(table, design, df, n_rel):
    out = dk.detect_design(np.array(table))
    assert out.design == design, out.reason
    assert out.df == df
    if design != "neither" or n_rel > 1:
        assert out.n_relabelings == n_rel
    assert out.reason
    if table == [[3, 4], [2, 0], [1, 1]]:
        assert "single class" in out.describe()


def test_design_table_and_units():
    y = np.array([0, 1, 1, 0, 2, 2, 0])
    g = np.array([1, 1, 0, 0, 2, 2, 2])
    table = dk.design_table(y, g, 3, 3)
    assert_array_equal(table, [[1, 1, 0], [1, 1, 0], [1, 0, 2]])
    unit_of_cell, donor, klass = dk.unit_index(y, g, 3)
    assert_array_equal(donor, [0, 0, 1, 1, 2, 2])
    assert_array_equal(klass, [0, 1, 0, 1, 0, 2])
    assert_array_equal(donor[unit_of_cell], g)
    assert_array_equal(klass[unit_of_cell], y)


# -------------------------------------------------------------------------------- pseudobulk


@pytest.mark.parametrize("fmt", ["dense", "csr", "csc", "float32"])
def test_pseudobulk_equals_brute_force_means(fmt):
    rng = np.random.default_rng(0)
    table = rng.integers(0, 6, size=(5, 3))
    table[:, 0] += 1
    X, y, g = cells(rng, table)
    X[np.abs(X) < 0.7] = 0.0  # sparse-looking
    Xf = {"dense": X, "csr": sp.csr_matrix(X), "csc": sp.csc_matrix(X),
          "float32": sp.csr_matrix(X.astype(np.float32))}[fmt]
    pb = dk.pseudobulk(Xf, y, g, 3, 5)
    keys, means = brute_means(X, y, g)
    assert list(zip(pb.donor.tolist(), pb.klass.tolist())) == keys
    tol = 1e-6 if fmt == "float32" else 1e-12
    assert_allclose(pb.means, means, rtol=tol, atol=tol)
    assert_array_equal(pb.counts, [table[d, c] for d, c in keys])
    assert_allclose(pb.total_ss, ((X - X.mean(axis=0)) ** 2).sum(axis=0), rtol=1e-5)


def test_pseudobulk_constant_column_has_zero_total():
    rng = np.random.default_rng(1)
    X, y, g = cells(rng, np.array([[4, 3], [2, 5]]), p=3)
    X[:, 1] = 0.3
    X[:, 2] = 0.0
    for Xf in (X, sp.csr_matrix(X)):
        pb = dk.pseudobulk(Xf, y, g, 2, 2)
        assert pb.total_ss[1] == 0.0 and pb.total_ss[2] == 0.0 and pb.total_ss[0] > 0
        assert_array_equal(pb.constant, [False, True, True])


# ----------------------------------------------------------------------------------- tests


def test_nested_pvalues_equal_scipy_on_donor_means():
    rng = np.random.default_rng(2)
    table = np.zeros((7, 3), dtype=int)
    for d, c in enumerate([0, 0, 1, 1, 1, 2, 2]):
        table[d, c] = rng.integers(5, 30)
    X, y, g = cells(rng, table, p=20)
    pb = dk.pseudobulk(sp.csr_matrix(X), y, g, 3, 7)
    keys, means = brute_means(X, y, g)
    k = np.array([c for _, c in keys])
    ref = stats.f_oneway(*[means[k == c] for c in range(3)]).pvalue
    assert_allclose(dk.nested_pvalues(pb, "anova"), ref, rtol=1e-9)
    two = np.zeros((7, 2), dtype=int)  # 3 + 4 donors of two classes
    for d, c in enumerate([0, 1, 0, 1, 1, 0, 1]):
        two[d, c] = rng.integers(5, 30)
    X2, y2, g2 = cells(rng, two, p=20)
    pb2 = dk.pseudobulk(X2, y2, g2, 2, 7)
    keys2, means2 = brute_means(X2, y2, g2)
    k2 = np.array([c for _, c in keys2])
    ref2 = stats.ttest_ind(means2[k2 == 1], means2[k2 == 0], equal_var=False).pvalue
    assert_allclose(dk.nested_pvalues(pb2, "welch"), ref2, rtol=1e-9)
    # group vs rest: the contrast t test of the one-way model (closed form: pooled variance)
    gvr = dk.group_vs_rest_pvalues(pb, "nested")
    resid = means - np.array([means[k == c].mean(axis=0) for c in range(3)])[k]
    df = means.shape[0] - 3
    s2 = (resid**2).sum(axis=0) / df
    n_c = np.bincount(k)
    for c in range(3):
        others = [o for o in range(3) if o != c]
        est = means[k == c].mean(axis=0) - np.mean([means[k == o].mean(axis=0)
                                                    for o in others], axis=0)
        var = s2 * (1 / n_c[c] + sum(1 / n_c[o] for o in others) / 4)
        ref = 2 * stats.t.sf(np.abs(est / np.sqrt(var)), df)
        assert_allclose(gvr[c], ref, rtol=1e-9)


def test_nested_pvalues_refuse_crossed_units():
    rng = np.random.default_rng(3)
    X, y, g = cells(rng, np.array([[3, 3], [3, 3]]))
    with pytest.raises(ValueError, match="one class per donor"):
        dk.nested_pvalues(dk.pseudobulk(X, y, g, 2, 2))


@pytest.mark.parametrize(
    "table",
    [
        np.full((6, 3), 8),  # complete blocks
        np.array([[5, 3, 0], [2, 4, 6], [0, 7, 2], [3, 3, 3], [4, 0, 5], [6, 2, 2]]),
    ],
)
def test_blocked_f_equals_statsmodels_two_way_anova(table):
    """The additive donor + class model's class F test: statsmodels OLS, type II ANOVA (the
    class effect adjusted for donors) on the same unit means."""
    smf = pytest.importorskip("statsmodels.formula.api")
    sm = pytest.importorskip("statsmodels.api")
    import pandas as pd

    rng = np.random.default_rng(4)
    X, y, g = cells(rng, table, p=5)
    pb = dk.pseudobulk(sp.csr_matrix(X), y, g, 3, table.shape[0])
    pvals, df = dk.blocked_f_pvalues(pb)
    n_units = int((table > 0).sum())
    assert df == n_units - table.shape[0] - 3 + 1
    for j in range(5):
        frame = pd.DataFrame({"m": pb.means[:, j], "d": pb.donor.astype(str),
                              "c": pb.klass.astype(str)})
        fit = smf.ols("m ~ C(d) + C(c)", data=frame).fit()
        ref = sm.stats.anova_lm(fit, typ=2).loc["C(c)", "PR(>F)"]
        assert_allclose(pvals[j], ref, rtol=1e-8)


def test_blocked_f_blocks_donor_effects():
    """A donor offset shared by all classes (any size) does not change the blocked F test."""
    rng = np.random.default_rng(5)
    X, y, g = cells(rng, np.full((5, 3), 6), p=4)
    pb = dk.pseudobulk(X, y, g, 3, 5)
    shifted = X + 100.0 * rng.normal(size=(5, 4))[g]
    pb2 = dk.pseudobulk(shifted, y, g, 3, 5)
    assert_allclose(dk.blocked_f_pvalues(pb2)[0], dk.blocked_f_pvalues(pb)[0], rtol=1e-6)


def test_paired_t_equals_scipy_on_within_donor_differences():
    rng = np.random.default_rng(6)
    table = rng.integers(2, 9, size=(6, 3))
    table[5, 2] = 0  # donor 5 lacks class 2
    X, y, g = cells(rng, table, p=8)
    pb = dk.pseudobulk(sp.csr_matrix(X), y, g, 3, 6)
    for c in range(3):
        diffs = []
        for d in range(6):
            own, rest = (g == d) & (y == c), (g == d) & (y != c)
            if own.any() and rest.any():
                diffs.append(X[own].mean(axis=0) - X[rest].mean(axis=0))
        ref = stats.ttest_1samp(np.array(diffs), 0.0)
        pvals, t, k = dk.paired_t_pvalues(pb, c)
        assert k == len(diffs) == (5 if c == 2 else 6)
        assert_allclose(pvals, ref.pvalue, rtol=1e-9)
        assert_allclose(t, ref.statistic, rtol=1e-9)
    # two classes: the paired t test of class 1 vs class 0 is scipy's ttest_rel
    X2, y2, g2 = cells(rng, np.full((5, 2), 4), p=3)
    pb2 = dk.pseudobulk(X2, y2, g2, 2, 5)
    a = np.array([X2[(g2 == d) & (y2 == 1)].mean(axis=0) for d in range(5)])
    b = np.array([X2[(g2 == d) & (y2 == 0)].mean(axis=0) for d in range(5)])
    assert_allclose(dk.paired_t_pvalues(pb2, 1)[0], stats.ttest_rel(a, b).pvalue, rtol=1e-9)
    # two classes, complete blocks: the contrast t of the additive model is the paired t
    p_c, t_c, df = dk.contrast_t_pvalues(pb2, "crossed")
    assert df == 4
    assert_allclose(p_c[1], stats.ttest_rel(a, b).pvalue, rtol=1e-9)
    assert_allclose(t_c[1], stats.ttest_rel(a, b).statistic, rtol=1e-9)
    assert_allclose(t_c[0], -t_c[1], rtol=1e-12)


@pytest.mark.parametrize(
    "table",
    [
        np.full((5, 4), 7),  # complete blocks
        np.array([[5, 3, 0, 2], [2, 4, 6, 1], [0, 7, 2, 3], [3, 3, 3, 0], [4, 0, 5, 5],
                  [6, 2, 2, 2]]),
    ],
)
def test_contrast_t_equals_statsmodels(table):
    """Class t against the average of the others in the additive donor + class model:
    statsmodels' OLS t test of the same contrast (treatment coding, class 0 the baseline)."""
    smf = pytest.importorskip("statsmodels.formula.api")
    import pandas as pd

    rng = np.random.default_rng(9)
    X, y, g = cells(rng, table, p=4)
    pb = dk.pseudobulk(X, y, g, 4, table.shape[0])
    pvals, tstat, df = dk.contrast_t_pvalues(pb, "crossed")
    assert df == int((table > 0).sum()) - table.shape[0] - 4 + 1
    for j in range(4):
        frame = pd.DataFrame({"m": pb.means[:, j], "d": pb.donor.astype(str),
                              "c": pb.klass.astype(str)})
        fit = smf.ols("m ~ C(d) + C(c)", data=frame).fit()
        names = list(fit.params.index)
        for t in range(4):
            beta = np.zeros(len(names))  # beta_t - mean of the others, beta_0 = 0
            for c in range(4):
                w = 1.0 if c == t else -1.0 / 3
                if c > 0:
                    beta[names.index(f"C(c)[T.{c}]")] += w
            ref = fit.t_test(beta)
            assert_allclose(tstat[t, j], float(np.squeeze(ref.tvalue)), rtol=1e-8)
            assert_allclose(pvals[t, j], float(np.squeeze(ref.pvalue)), rtol=1e-8)


def test_paired_t_edge_cases():
    # identical within-donor differences: p = 0 (shifted) or 1 (no difference); 1 donor: NaN
    means = np.array([[1.0, 5.0], [0.0, 5.0], [3.0, 2.0], [2.0, 2.0]])
    pb = dk.Pseudobulk(np.array([0, 0, 1, 1]), np.array([1, 0, 1, 0]), np.ones(4), means,
                       2, 2, np.ones(2), np.zeros(2, dtype=bool))
    pvals, t, k = dk.paired_t_pvalues(pb, 1)
    assert k == 2
    assert_array_equal(pvals, [0.0, 1.0])
    assert t[0] == np.inf and t[1] == 0.0
    one = dk.Pseudobulk(np.array([0, 0]), np.array([1, 0]), np.ones(2), means[:2], 1, 2,
                        np.ones(2), np.zeros(2, dtype=bool))
    assert np.isnan(dk.paired_t_pvalues(one, 1)[0]).all()


# ------------------------------------------------------------------------------ relabelings


def test_nested_relabelings_enumerate_every_assignment():
    labels = np.array([0, 1, 0, 2, 1, 0])
    rows, exact = dk.nested_relabelings(labels, 1000, np.random.RandomState(0))
    n = math.factorial(6) // (math.factorial(3) * math.factorial(2))
    assert exact and rows.shape == (n, 6)
    ref = set(itertools.permutations(labels.tolist()))  # brute force
    assert {tuple(r) for r in rows.tolist()} == ref
    assert any(np.array_equal(r, labels) for r in rows)
    rows, exact = dk.nested_relabelings(labels, 50, np.random.RandomState(0))
    assert not exact and rows.shape == (50, 6)
    assert all(sorted(r) == sorted(labels) for r in rows.tolist())


def test_crossed_relabelings_permute_within_donors():
    donor = np.array([0, 0, 0, 1, 1, 2, 2])
    klass = np.array([0, 1, 2, 0, 2, 1, 2])
    rows, exact = dk.crossed_relabelings(donor, klass, 1000, np.random.RandomState(0))
    assert exact and rows.shape == (6 * 2 * 2, 7)
    assert len({tuple(r) for r in rows.tolist()}) == 24
    for r in rows:
        for d in range(3):
            assert sorted(r[donor == d]) == sorted(klass[donor == d])
    rows, exact = dk.crossed_relabelings(donor, klass, 10, np.random.RandomState(1))
    assert not exact and rows.shape == (10, 7)
    for r in rows:
        for d in range(3):
            assert sorted(r[donor == d]) == sorted(klass[donor == d])
    unit_of_cell = np.array([0, 0, 3, 6, 5])
    assert_array_equal(dk.relabel_cells(unit_of_cell, rows[0]), rows[0][unit_of_cell])


def test_donor_halves_are_complementary_and_stratified():
    class_of_donor = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    halves = dk.donor_halves(class_of_donor, 8, 10, np.random.RandomState(0))
    assert halves.shape == (20, 4)
    for b in range(10):
        a, c = set(halves[2 * b]), set(halves[2 * b + 1])
        assert not a & c and len(a | c) == 8
        assert sorted(class_of_donor[halves[2 * b]]) == [0, 0, 1, 1]


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_constant_columns_equal_the_dense_range(fmt):
    """The one-pass constant-column detector (used by ErrorControlSelector on sparse X)
    against ``np.ptp == 0`` of the dense matrix, with explicit zeros and full columns."""
    from sparsefs._kernels.stats import sparse_constant_columns

    rng = np.random.default_rng(7)
    X = rng.poisson(0.4, size=(30, 12)).astype(float)
    X[:, 0] = 0.0  # nothing stored
    X[:, 1] = 2.5  # full and constant
    X[:, 2] = 0.0
    X[3, 2] = 1.0  # one value
    X[:, 3] = 2.5
    X[7, 3] = 0.0  # full but for one implicit zero
    X[:, 4] = 0.0
    coo = sp.coo_matrix(X)
    # explicitly stored zeros: one in the zero column 4, one among the values of column 5
    rows = np.r_[coo.row, 5, 6]
    cols = np.r_[coo.col, 4, 5]
    vals = np.r_[coo.data, 0.0, 0.0]
    M = sp.csr_matrix((vals, (rows, cols)), shape=X.shape) if fmt == "csr" else \
        sp.csc_matrix((vals, (rows, cols)), shape=X.shape)
    assert M.nnz == coo.nnz + 2 - int(X[6, 5] != 0)  # (6, 5) may already be stored
    expected = np.ptp(M.toarray(), axis=0) == 0
    assert_array_equal(sparse_constant_columns(M), expected)
    assert expected[[0, 1, 4]].all() and not expected[[2, 3]].any()


def test_blocked_f_extreme_scales():
    """The blocked F test is scale-invariant: the same p-values at 1e-200 and 1e200 times the
    values (the squares would underflow / overflow without the rescaled recomputation)."""
    rng = np.random.default_rng(8)
    X, y, g = cells(rng, np.full((5, 3), 6), p=4)
    ref = dk.blocked_f_pvalues(dk.pseudobulk(X, y, g, 3, 5))[0]
    for scale in (1e-200, 1e200):
        for M in (X * scale, sp.csr_matrix(X * scale)):
            pb = dk.pseudobulk(M, y, g, 3, 5)
            assert_allclose(dk.blocked_f_pvalues(pb)[0], ref, rtol=1e-9)
            assert not pb.constant.any()  # not mistaken for constant columns
