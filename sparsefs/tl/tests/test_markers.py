"""Markers a biologist accepts (issue #30): what ``tl.select`` reads, the per-group order, log
fold changes, adjusted p-values and donor-level p-values.

Independent references: scanpy itself (``rank_genes_groups`` with its t-test and Wilcoxon; its
``logfoldchanges``; ``rank_genes_groups_df``; dot plots), scipy's
``false_discovery_control`` and its t tests on hand-computed donor means.
"""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats

sc = pytest.importorskip("scanpy")
anndata = pytest.importorskip("anndata")
import pandas as pd  # noqa: E402

import sparsefs.tl  # noqa: E402
from sparsefs.datasets import make_multi_donor_counts  # noqa: E402
from sparsefs.selection import FisherScore  # noqa: E402
from sparsefs.tl._select import LEVEL_METHODS  # noqa: E402


@pytest.fixture(scope="module")
def pbmc_reference():
    """scanpy's defaults on pbmc68k_reduced: the t-test (it reads raw) and, for every gene and
    group, scanpy's own log fold change (n_genes = all)."""
    ref = sc.datasets.pbmc68k_reduced()
    sc.tl.rank_genes_groups(ref, "bulk_labels", method="t-test", n_genes=ref.raw.n_vars)
    df = sc.get.rank_genes_groups_df(ref, group=None)
    lfc = df.pivot(index="names", columns="group", values="logfoldchanges")
    names = ref.uns["rank_genes_groups"]["names"]
    top = {g: set(names[g][:10]) for g in names.dtype.names}
    return top, lfc


def _top10(adata, key="sparsefs"):
    names = adata.uns[key]["names"]
    return {g: list(names[g][:10]) for g in names.dtype.names}


PBMC_RUNS = {  # method -> tl.select arguments (defaults but for the n_features=30)
    "fisher_score": {},
    "error_control": {},
    "sparse_centers": {"n_features": 30},
    "class_specific": {"n_features": 3, "selector": FisherScore(), "strategy": "one_vs_rest",
                       "balance": "none"},
}


@pytest.mark.parametrize("method", list(PBMC_RUNS))
def test_pbmc68k_reduced_acceptance(method, pbmc_reference):
    """The issue's measurement: top 10 of every group against scanpy's t-test top 10 (summed
    over the 10 types; the t-test against scanpy's own Wilcoxon gives 80), and >= 8 of every
    top 10 higher in its group by scanpy's own log fold changes. Measured 2026-12-04:
    fisher_score 78, error_control 78, sparse_centers (30 genes) 61, class_specific 35 (3 per
    type, its own per-type rankings); every top 10 fully positive (before issue #30:
    fisher_score 53, sparse_centers 15 with a type at 1 of 10)."""
    top_t, lfc = pbmc_reference
    adata = sc.datasets.pbmc68k_reduced()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # raw is read: no scaled-data warning
        sparsefs.tl.select(adata, method, groupby="bulk_labels", **PBMC_RUNS[method])
    assert adata.uns["sparsefs"]["params"]["source"] == "raw"
    top = _top10(adata)
    overlap = sum(len(set(top[g]) & top_t[g]) for g in top)
    floor = {"fisher_score": 75, "error_control": 75, "sparse_centers": 55,
             "class_specific": 30}[method]
    assert overlap >= floor, overlap
    for g, genes in top.items():
        assert (lfc.loc[genes, g] > 0).sum() >= 8, (g, lfc.loc[genes, g].tolist())
    # our logfoldchanges are scanpy's, gene by gene
    ours = sc.get.rank_genes_groups_df(adata, group=None, key="sparsefs")
    merged = ours.merge(lfc.stack().rename("ref").reset_index(), on=["group", "names"])
    assert len(merged) == len(ours)
    assert_allclose(merged["logfoldchanges"], merged["ref"], rtol=1e-4, atol=1e-4)


def test_pbmc68k_fisher_score_pvals_adj_is_bh_within_each_group():
    adata = sc.datasets.pbmc68k_reduced()
    sparsefs.tl.select(adata, "fisher_score", groupby="bulk_labels")
    df = sc.get.rank_genes_groups_df(adata, group=None, key="sparsefs")
    assert not df["pvals_adj"].isna().any()
    for _, part in df.groupby("group", observed=True):
        assert_allclose(part["pvals_adj"], stats.false_discovery_control(part["pvals"]),
                        rtol=1e-12)
    # scanpy's readers: a cutoff on the adjusted p-values, dot plots
    kept = sc.get.rank_genes_groups_df(adata, group="CD14+ Monocyte", key="sparsefs",
                                       pval_cutoff=0.01)
    assert 0 < len(kept) < adata.raw.n_vars
    import matplotlib

    matplotlib.use("Agg")
    sc.pl.rank_genes_groups_dotplot(adata, key="sparsefs", n_genes=3, show=False,
                                    dendrogram=False)


def test_scaled_values_warn():
    adata = sc.datasets.pbmc68k_reduced()  # X is sc.pp.scale'd
    with pytest.warns(UserWarning, match=r"X holds negative values.*sparse_centers compares"):
        sparsefs.tl.select(adata, "sparse_centers", groupby="bulk_labels", n_features=30,
                           use_raw=False)
    with pytest.warns(UserWarning, match="X holds negative values") as record:
        sparsefs.tl.select(adata, "fisher_score", groupby="bulk_labels", use_raw=False)
    assert "compares expression levels" not in str(record[0].message)  # F is invariant
    assert adata.uns["sparsefs"]["params"]["source"] == "X"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sparsefs.tl.select(adata, "fisher_score", groupby="bulk_labels")  # raw: silent


def test_level_methods_are_the_ones_per_gene_scaling_changes():
    """LEVEL_METHODS is honest on an example: centring and scaling each gene changes their
    selection and not that of the invariant ones."""
    from sparsefs.utils import get_method

    rng = np.random.default_rng(0)
    X = rng.poisson(1.0, size=(90, 40)).astype(float)
    y = np.repeat([0, 1, 2], 30)
    X[y == 1, :4] += 2.0
    X[y == 2, 4:8] += 1.5
    X[:, 30:] *= 6.0  # noisy high-variance genes
    Xs = (X - X.mean(axis=0)) / X.std(axis=0) * rng.uniform(0.2, 3.0, 40)
    for stem in ("sparse_centers", "laplacian_score", "spec", "fisher_score", "error_control",
                 "relieff"):
        est = get_method(stem).estimator(n_features_to_select=8)
        yy = y if get_method(stem).supervision == "supervised" else None
        a = est.fit(X, yy).support_.copy()
        b = est.fit(Xs, yy).support_
        assert (stem in LEVEL_METHODS) == (not np.array_equal(a, b)), stem


def test_use_raw_default_is_scanpys():
    adata = sc.datasets.pbmc68k_reduced()
    adata.layers["lognorm"] = adata.raw.X.copy()
    sparsefs.tl.select(adata, "fisher_score", groupby="bulk_labels", layer="lognorm",
                       key_added="lay")
    assert adata.uns["lay"]["params"]["source"] == "layers['lognorm']"
    assert adata.uns["lay"]["params"]["use_raw"] is False
    sparsefs.tl.select(adata, "fisher_score", groupby="bulk_labels")
    assert adata.uns["sparsefs"]["params"]["use_raw"] is True
    assert_array_equal(adata.var["lay_rank"], adata.var["sparsefs_rank"])


def test_per_group_order_higher_first():
    """Hand-made groups: the selected genes higher in a group come first (by how much), then
    the other genes higher there, then the selected genes lower there, then the rest."""
    rng = np.random.default_rng(1)
    n = 60
    y = np.repeat(["a", "b", "c"], n // 3)
    X = rng.poisson(1.0, size=(n, 8)).astype(np.float32)
    X[y == "a", 0] += 6  # strong marker of a
    X[y == "a", 1] += 2  # weaker marker of a
    X[y == "b", 2] += 6
    X[y == "c", 3] += 6
    adata = anndata.AnnData(np.log1p(X), obs=pd.DataFrame({"t": y}, index=[str(i) for i in
                                                                           range(n)]))
    sparsefs.tl.select(adata, "fisher_score", groupby="t", n_features=4)
    names = adata.uns["sparsefs"]["names"]["a"]
    lfc = adata.uns["sparsefs"]["logfoldchanges"]["a"]
    assert list(names[:2]) == ["0", "1"]
    selected = set(adata.var_names[adata.var["sparsefs_selected"]])
    positive = lfc > 0
    tiers = [0 if (g in selected and up) else 1 if up else 2 if g in selected else 3
             for g, up in zip(names, positive)]
    assert tiers == sorted(tiers)


# ------------------------------------------------------------------------------- sample_key


@pytest.fixture(scope="module")
def crossed_adata():
    data = make_multi_donor_counts(n_genes=300, n_groups=3, design="crossed", n_donors=6,
                                   cells_per_donor=(60, 120), n_markers=8, log_fc=2.0,
                                   donor_sd=0.5, random_state=0)
    return data, data.to_anndata()


def test_sample_key_crossed_gives_donor_level_contrast_pvalues(crossed_adata):
    data, adata0 = crossed_adata
    adata = adata0.copy()
    sparsefs.tl.select(adata, "fisher_score", groupby="group", sample_key="donor",
                       n_features=40)
    params = adata.uns["sparsefs"]["params"]
    assert params["design"] == "crossed" and params["sample_key"] == "donor"
    assert "sparsefs_pval" not in adata.var  # FisherScore's cell-level p-values not written
    df = sc.get.rank_genes_groups_df(adata, group="type1", key="sparsefs").set_index("names")
    # closed form, complete blocks: the additive donor + type model on the unit means, the
    # contrast type1 - mean(type0, type2), residual variance on (D - 1)(K - 1) df
    X = data.X.toarray().astype(np.float64)
    M = np.array([[X[(data.donors == d) & (data.y == t)].mean(axis=0) for t in data.markers]
                  for d in sorted(set(data.donors))])  # D x K x p
    D, K = M.shape[:2]
    resid = M - M.mean(axis=1, keepdims=True) - M.mean(axis=0, keepdims=True) + M.mean((0, 1))
    s2 = (resid**2).sum(axis=(0, 1)) / ((D - 1) * (K - 1))
    col = M.mean(axis=0)
    est = col[1] - (col[0] + col[2]) / 2
    tstat = est / np.sqrt(s2 * (1 / D) * (1 + 1 / (K - 1)))
    ref = pd.Series(2 * stats.t.sf(np.abs(tstat), (D - 1) * (K - 1)), index=data.feature_names)
    ok = ref.notna() & (s2 > 0)
    assert_allclose(df.loc[ref.index[ok], "pvals"], ref[ok], rtol=1e-6)
    tested = df["pvals"].notna()
    assert_allclose(df.loc[tested, "pvals_adj"],
                    stats.false_discovery_control(df.loc[tested, "pvals"]), rtol=1e-12)
    # the planted markers of type1 lead its list
    top = df.index[:8]
    assert data.markers["type1"][np.isin(data.feature_names, top)].sum() >= 6


def test_sample_key_nested_and_donor_aware_estimators():
    data = make_multi_donor_counts(n_genes=300, n_groups=2, design="nested", n_donors=10,
                                   cells_per_donor=(60, 120), n_markers=10, log_fc=3.0,
                                   donor_sd=0.4, random_state=1)
    adata = data.to_anndata()
    sparsefs.tl.select(adata, "error_control", groupby="group", sample_key="donor",
                       level=0.1)
    params = adata.uns["sparsefs"]["params"]
    assert params["design"] == "nested"
    ref = sparsefs.selection.ErrorControlSelector(level=0.1).fit(data.X, data.y,
                                                                 groups=data.donors)
    assert_allclose(adata.var["sparsefs_pval"], ref.pvalues_)  # donor-level: written
    assert_array_equal(adata.var["sparsefs_selected"], ref.support_)
    df = sc.get.rank_genes_groups_df(adata, group="condition1", key="sparsefs")
    X = data.X.toarray().astype(np.float64)
    donors = sorted(set(data.donors))
    means = np.array([X[data.donors == d].mean(axis=0) for d in donors])
    label = np.array([data.y[data.donors == d][0] for d in donors])
    # two groups: the one-way model's contrast t is the pooled two-sample t test
    pooled = pd.Series(stats.ttest_ind(means[label == "condition1"],
                                       means[label == "condition0"]).pvalue,
                       index=data.feature_names)
    df = df.set_index("names")
    ok = pooled.notna()
    assert_allclose(df.loc[pooled.index[ok], "pvals"], pooled[ok], rtol=1e-6)
    with pytest.raises(ValueError, match="confounded"):
        adata.obs["one_per_group"] = adata.obs["group"].astype(str)
        sparsefs.tl.select(adata, "fisher_score", groupby="group", sample_key="one_per_group",
                           n_features=5)
    with pytest.raises(KeyError, match="sample_key='nope'"):
        sparsefs.tl.select(adata, "fisher_score", groupby="group", sample_key="nope")


def test_sample_key_output_is_read_by_scanpy(crossed_adata, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    _, adata0 = crossed_adata
    adata = adata0.copy()
    sparsefs.tl.select(adata, "stability", groupby="group", sample_key="donor",
                       estimator=FisherScore(10), n_resamples=10)
    assert adata.uns["sparsefs"]["params"]["design"] == "crossed"
    assert "sparsefs_freq" in adata.var
    df = sc.get.rank_genes_groups_df(adata, group=None, key="sparsefs")
    assert set(df["group"]) == {"type0", "type1", "type2"}
    sc.pl.rank_genes_groups_dotplot(adata, key="sparsefs", n_genes=3, show=False,
                                    dendrogram=False)
    path = tmp_path / "x.h5ad"
    adata.write_h5ad(path)
    back = anndata.read_h5ad(path)
    assert back.uns["sparsefs"]["params"]["design"] == "crossed"
    assert_array_equal(back.uns["sparsefs"]["names"]["type0"][:5],
                       adata.uns["sparsefs"]["names"]["type0"][:5])
