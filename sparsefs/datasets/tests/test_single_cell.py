"""Tests of make_multi_donor_counts: the NB draws, the design, donor effects, markers, seeds."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats

from sparsefs.datasets import Dataset, MultiDonorCounts, make_multi_donor_counts
from sparsefs.datasets._single_cell import _donor_counts

SMALL = {"n_genes": 200, "n_groups": 3, "n_donors": 4, "cells_per_donor": (30, 60), "n_markers": 5}


def _nb_pmf(k, mu, phi):
    """scipy's negative binomial (n = 1/phi, p = n/(n + mu)), or Poisson for phi = 0."""
    if phi == 0:
        return stats.poisson.pmf(k, mu)
    n = 1.0 / phi
    return stats.nbinom.pmf(k, n, n / (n + mu))


@pytest.mark.parametrize(
    ("mu", "phi"),
    [(0.05, 0.5), (0.3, 1.0), (1.0, 0.1), (4.0, 0.4), (12.0, 0.0), (0.8, 0.0), (30.0, 1.0)],
)
def test_counts_follow_the_negative_binomial(mu, phi):
    """The compiled sampler against scipy's NB pmf (an independent reference): a chi-squared
    goodness-of-fit over 20 000 draws (cells pooled into bins of expected count >= 20). The last
    two cases have P(0) below 1e-304: drawn from the gamma-Poisson mixture instead."""
    n = 20_000
    base = np.full((1, 3), mu)
    phis = np.full(3, phi)
    gen = np.random.default_rng(7)
    counts = _donor_counts(gen, np.zeros(n, dtype=np.intp), base, phis, 0.0).toarray()
    for g in range(3):
        x = counts[:, g].astype(np.int64)
        kmax = int(x.max()) + 1
        expected = n * _nb_pmf(np.arange(kmax), mu, phi)
        expected[-1] += n * (1.0 - _nb_pmf(np.arange(kmax), mu, phi).sum())  # the tail
        observed = np.bincount(x, minlength=kmax).astype(float)
        # bins of expected count >= 20, the upper tail merged into the last one
        obs_b, exp_b, acc_o, acc_e = [], [], 0.0, 0.0
        for o, e in zip(observed, expected):
            acc_o += o
            acc_e += e
            if acc_e >= 20:
                obs_b.append(acc_o)
                exp_b.append(acc_e)
                acc_o = acc_e = 0.0
        obs_b[-1] += acc_o
        exp_b[-1] += acc_e
        chi2 = float(np.sum((np.array(obs_b) - exp_b) ** 2 / np.array(exp_b)))
        assert stats.chi2.sf(chi2, max(1, len(obs_b) - 1)) > 1e-4, (g, chi2, len(obs_b))
        # and the first two moments, to 5 standard errors
        var = mu + phi * mu * mu
        assert abs(x.mean() - mu) < 5 * np.sqrt(var / n)


def test_moments_of_a_big_draw():
    """Without donor effects, library sizes or markers, gene g's counts are NB(m_g, phi_g):
    mean and variance of every gene against the stated ``gene_means`` / ``dispersions``."""
    data = make_multi_donor_counts(
        n_genes=40, n_groups=2, n_donors=2, cells_per_donor=15_000, n_markers=0,
        donor_sd=0.0, library_sd=0.0, dispersion=(0.1, 1.0), random_state=3,
    )
    counts = data.counts.toarray().astype(np.float64)
    n = counts.shape[0]
    m, phi = data.gene_means, data.dispersions
    var = m + phi * m**2
    z = (counts.mean(axis=0) - m) / np.sqrt(var / n)
    assert np.abs(z).max() < 4.5
    assert 0.4 < np.mean(z**2) < 2.0  # about chi2_40 / 40
    ratio = counts.var(axis=0, ddof=1) / var
    assert np.abs(np.log(ratio)).max() < 0.2
    assert abs(np.median(ratio) - 1.0) < 0.05


def test_normalisation_is_scanpys():
    """X equals scanpy's normalize_total(target_sum=1e4) + log1p of the counts."""
    sc = pytest.importorskip("scanpy")
    anndata = pytest.importorskip("anndata")
    data = make_multi_donor_counts(**SMALL, random_state=0)
    adata = anndata.AnnData(X=data.counts.astype(np.float64))
    sc.pp.normalize_total(adata, target_sum=1e4)
    sc.pp.log1p(adata)
    assert data.X.format == "csr" and data.X.dtype == np.float32
    assert_allclose(data.X.toarray(), adata.X.toarray(), rtol=1e-6, atol=1e-6)
    assert data.counts.format == "csr"
    assert_array_equal(data.counts.data, np.round(data.counts.data))


@pytest.mark.parametrize("design", ["crossed", "nested"])
def test_design(design):
    data = make_multi_donor_counts(**{**SMALL, "n_donors": 6}, design=design, random_state=1)
    assert isinstance(data, MultiDonorCounts) and isinstance(data, Dataset)
    label = "type" if design == "crossed" else "condition"
    groups = [f"{label}{t}" for t in range(3)]
    assert list(data.markers) == groups
    assert set(data.y) == set(groups) and data.y.dtype.kind == "U"
    assert data.donors.dtype.kind == "U" and len(set(data.donors)) == 6
    for d in sorted(set(data.donors)):
        cells = data.donors == d
        assert 30 <= cells.sum() <= 60
        present = sorted(set(data.y[cells]))
        assert present == sorted(data.donor_groups[d])
        assert present == (groups if design == "crossed" else [groups[int(d[5:]) % 3]])
    if design == "nested":  # donors split evenly over the conditions
        per_group = [sum(v == [g] for v in data.donor_groups.values()) for g in groups]
        assert per_group == [2, 2, 2]
    masks = np.array(list(data.markers.values()))
    assert (masks.sum(axis=1) == 5).all() and masks.sum(axis=0).max() == 1  # disjoint
    assert_array_equal(data.support, masks.any(axis=0))
    # markers are drawn among the genes expressed at or above the median
    assert data.gene_means[data.support].min() >= np.median(data.gene_means)
    assert data.name == f"multi_donor_counts_{design}" and data.design == design
    assert data.feature_names[0] == "gene0"


@pytest.mark.parametrize("design", ["crossed", "nested"])
def test_markers_are_higher_in_their_group(design):
    data = make_multi_donor_counts(
        n_genes=300, n_groups=2, design=design, n_donors=6, cells_per_donor=300, n_markers=10,
        log_fc=1.5, donor_sd=0.1, random_state=2,
    )
    counts = data.counts.toarray()
    X = data.X.toarray()
    for g, mask in data.markers.items():
        inside = data.y == g
        assert (X[inside][:, mask].mean(axis=0) > X[~inside][:, mask].mean(axis=0)).all()
        ratio = counts[inside][:, mask].mean(axis=0) / counts[~inside][:, mask].mean(axis=0)
        assert abs(np.median(np.log2(ratio)) - 1.5) < 0.35


def test_donor_offsets_make_between_donor_variance():
    """The donor ANOVA of the null genes' per-cell values: uniform p-values without donor
    effects, mostly significant with them; the donors' log mean ratios spread by donor_sd."""
    kw = {"n_genes": 300, "n_groups": 2, "n_donors": 8, "cells_per_donor": 200,
          "n_markers": 0, "mean_log": 1.0, "sd_log": 0.5, "random_state": 4}
    for sd in (0.0, 0.6):
        data = make_multi_donor_counts(**kw, donor_sd=sd, donor_correlation=1.0)
        X = data.X.toarray()
        p = stats.f_oneway(*[X[data.donors == d] for d in sorted(set(data.donors))]).pvalue
        if sd == 0.0:
            assert 0.0 < np.mean(p < 0.05) < 0.12
        else:
            assert np.mean(p < 0.05) > 0.9
            counts = data.counts.toarray().astype(float)
            size = counts.sum(axis=1, keepdims=True)
            donor_means = np.array([(counts / size)[data.donors == d].mean(axis=0)
                                    for d in sorted(set(data.donors))])
            spread = np.log(donor_means / donor_means.mean(axis=0)).std(axis=0, ddof=1)
            assert abs(np.median(spread) - sd) < 0.15


def test_crossed_donor_correlation():
    """rho = 1: one offset per donor and gene (a donor's types move together); rho = 0:
    independent offsets per donor and type."""
    kw = {"n_genes": 400, "n_groups": 2, "n_donors": 10, "cells_per_donor": 400,
          "n_markers": 0, "mean_log": 1.5, "sd_log": 0.3, "donor_sd": 0.7, "random_state": 5}
    corr = {}
    for rho in (0.0, 1.0):
        data = make_multi_donor_counts(**kw, donor_correlation=rho)
        X = data.X.toarray()
        means = np.array([[X[(data.donors == d) & (data.y == t)].mean(axis=0)
                           for d in sorted(set(data.donors))] for t in ("type0", "type1")])
        a, b = means[0] - means[0].mean(axis=0), means[1] - means[1].mean(axis=0)
        corr[rho] = np.median(np.sum(a * b, axis=0) / np.sqrt(np.sum(a * a, 0) * np.sum(b * b, 0)))
    assert corr[1.0] > 0.8
    assert abs(corr[0.0]) < 0.3


def test_reproducible_and_thread_independent():
    a = make_multi_donor_counts(**SMALL, random_state=0)
    b = make_multi_donor_counts(**SMALL, random_state=np.random.RandomState(0), n_jobs=2)
    c = make_multi_donor_counts(**SMALL, random_state=1)
    for attr in ("y", "donors", "support", "gene_means"):
        assert_array_equal(getattr(a, attr), getattr(b, attr))
    assert (a.X != b.X).nnz == 0 and (a.counts != b.counts).nnz == 0
    assert a.X.shape != c.X.shape or (a.X != c.X).nnz > 0


def test_pure_null():
    for kw in ({"n_markers": 0}, {"log_fc": 0.0}):
        data = make_multi_donor_counts(**{**SMALL, **kw}, random_state=0)
        assert not data.support.any()
    data = make_multi_donor_counts(**{**SMALL, "log_fc": 0.0}, random_state=0)
    assert all(mask.sum() == 5 for mask in data.markers.values())  # chosen, not shifted


def test_to_anndata_is_read_by_scanpy():
    sc = pytest.importorskip("scanpy")
    data = make_multi_donor_counts(**SMALL, log_fc=3.0, donor_sd=0.2, random_state=0)
    adata = data.to_anndata()
    assert adata.shape == data.X.shape
    assert list(adata.obs["group"].cat.categories) == list(data.markers)
    assert adata.obs["donor"].dtype.name == "category"
    assert_array_equal(adata.obs["donor"].astype(str), data.donors)
    assert (adata.layers["counts"] != data.counts).nnz == 0
    assert adata.raw is not None and (adata.raw.X != data.X).nnz == 0
    assert list(adata.raw.var_names) == list(data.feature_names)
    assert (adata.var["marker_of"] != "none").sum() == data.support.sum()
    sc.tl.rank_genes_groups(adata, "group", method="t-test")
    top = sc.get.rank_genes_groups_df(adata, group="type0").head(5)["names"]
    assert data.markers["type0"][np.isin(data.feature_names, top)].all()


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"design": "blocked"}, ValueError, "crossed' or 'nested"),
        ({"n_groups": 1}, ValueError, "n_groups"),
        ({"design": "nested", "n_groups": 4, "n_donors": 3}, ValueError, "n_donors"),
        ({"cells_per_donor": (2, 10), "n_groups": 4}, ValueError, "at least 4 cells"),
        ({"cells_per_donor": (10, 5)}, ValueError, "low <= high"),
        ({"cells_per_donor": 1.5}, TypeError, "cells_per_donor"),
        ({"n_markers": 600, "n_genes": 1000}, ValueError, "do not fit"),
        ({"dispersion": -0.1}, ValueError, "dispersion"),
        ({"donor_sd": -1.0}, ValueError, "donor_sd"),
        ({"donor_correlation": 1.5}, ValueError, "donor_correlation"),
        ({"log_fc": float("nan")}, ValueError, "log_fc"),
    ],
)
def test_validation(kwargs, error, match):
    with pytest.raises(error, match=match):
        make_multi_donor_counts(**{**SMALL, **kwargs})
