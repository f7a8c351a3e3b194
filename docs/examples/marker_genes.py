"""Marker genes with sparsefs on scanpy's bundled pbmc68k_reduced (no download), and donor-level
p-values on a simulated multi-donor data set.

Writes the dot plots of docs/single_cell.md into docs/single_cell/ and prints the numbers the
page quotes. Run: ``python docs/examples/marker_genes.py`` (needs scanpy and matplotlib;
about a minute).
"""

import time
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np
import scanpy as sc
from sklearn.metrics import adjusted_rand_score
from sklearn.model_selection import StratifiedKFold, cross_val_score

import sparsefs.get
import sparsefs.tl
from sparsefs.classification import SparseCenterClassifier
from sparsefs.clustering import L0KMeans
from sparsefs.datasets import make_multi_donor_counts
from sparsefs.selection import FisherScore

OUT = Path(__file__).resolve().parent.parent / "single_cell"
OUT.mkdir(exist_ok=True)
sc.settings.verbosity = 0
sc.settings.figdir = OUT

# ------------------------------------------------------------------ pbmc68k_reduced
adata = sc.datasets.pbmc68k_reduced()  # 700 cells x 765 genes; X scaled, raw log-normalised
print(adata.shape, adata.obs["bulk_labels"].nunique(), "cell types")

t = time.perf_counter()
sc.tl.rank_genes_groups(adata, "bulk_labels", method="t-test", key_added="ttest",
                        n_genes=adata.raw.n_vars)
t_ttest = time.perf_counter() - t
sc.tl.rank_genes_groups(adata, "bulk_labels", method="wilcoxon", key_added="wilcoxon")
groups = list(adata.uns["ttest"]["names"].dtype.names)
top_t = {g: set(adata.uns["ttest"]["names"][g][:10]) for g in groups}
lfc = sc.get.rank_genes_groups_df(adata, group=None, key="ttest").pivot(
    index="names", columns="group", values="logfoldchanges")
wil = sum(len(set(adata.uns["wilcoxon"]["names"][g][:10]) & top_t[g]) for g in groups)
print(f"scanpy t-test: {t_ttest:.2f} s; its top 10 vs scanpy's Wilcoxon: {wil}/100")

runs = {
    "fisher_score": {"method": "fisher_score", "groupby": "bulk_labels"},
    "error_control": {"method": "error_control", "groupby": "bulk_labels"},
    "sparse_centers": {"method": "sparse_centers", "groupby": "bulk_labels",
                       "n_features": 30},
    "class_specific": {"method": "class_specific", "groupby": "bulk_labels", "n_features": 3,
                       "selector": FisherScore(), "strategy": "one_vs_rest",
                       "balance": "none"},
    "l0_kmeans": {"method": "l0_kmeans", "groupby": "bulk_labels", "n_features": 30,
                  "n_clusters": 10, "n_features_grid": None},
}
for key, kw in runs.items():
    kw = dict(kw)
    method = kw.pop("method")
    t = time.perf_counter()
    sparsefs.tl.select(adata, method, key_added=key, **kw)
    dt = time.perf_counter() - t
    names = adata.uns[key]["names"]
    overlap = sum(len(set(names[g][:10]) & top_t[g]) for g in groups)
    positive = min(int((lfc.loc[list(names[g][:10]), g] > 0).sum()) for g in groups)
    n_sel = int(sparsefs.get.selection_df(adata, key, selected_only=True).shape[0])
    print(f"{key}: {n_sel} genes selected; top 10 vs the t-test's: {overlap}/100; fewest "
          f"positive log fold changes in a top 10: {positive}/10; {dt:.2f} s")
    if key in ("fisher_score", "sparse_centers", "class_specific"):
        sc.pl.rank_genes_groups_dotplot(adata, key=key, n_genes=3, show=False,
                                        save=f"_{key}.png", dendrogram=False)
sc.pl.rank_genes_groups_dotplot(adata, key="ttest", n_genes=3, show=False, save="_ttest.png",
                                dendrogram=False)
print("CD14+ Monocyte, fisher_score:", list(adata.uns["fisher_score"]["names"]
                                            ["CD14+ Monocyte"][:5]))
print("CD14+ Monocyte, sparse_centers:", list(adata.uns["sparse_centers"]["names"]
                                              ["CD14+ Monocyte"][:5]))

# the 30-gene panel: cross-validated accuracy of the sparse center classifier (the panel is
# chosen inside every training fold), against all 765 genes
X, y = adata.raw.X, adata.obs["bulk_labels"].astype(str).to_numpy()
cv = StratifiedKFold(5, shuffle=True, random_state=0)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # folds with 8 cells of a type
    panel = cross_val_score(SparseCenterClassifier(30), X, y, cv=cv).mean()
    full = cross_val_score(SparseCenterClassifier(X.shape[1]), X, y, cv=cv).mean()
print(f"30-gene panel (sparse l2 centers): CV accuracy {panel:.3f}; all genes {full:.3f}")

km = L0KMeans(n_clusters=10, n_features_to_select=30, random_state=0).fit(X)
ari = adjusted_rand_score(y, km.labels_)
print(f"l0-k-means on raw, 30 genes: ARI vs bulk_labels {ari:.3f}")

# ------------------------------------------------------------------ donors (simulated)
data = make_multi_donor_counts(n_genes=2000, n_groups=4, design="crossed", n_donors=6,
                               n_markers=20, log_fc=2.0, donor_sd=0.5, random_state=0)
sim = data.to_anndata()
sc.tl.rank_genes_groups(sim, "group", method="t-test", n_genes=sim.n_vars)
sparsefs.tl.select(sim, "fisher_score", groupby="group", sample_key="donor")
print(f"simulated crossed data: {sim.n_obs} cells, 6 donors, 4 types, 20 planted markers per "
      f"type; design read as {sim.uns['sparsefs']['params']['design']}")
for g in data.markers:
    for key, name in (("rank_genes_groups", "scanpy t-test"), ("sparsefs", "donor-level")):
        df = sc.get.rank_genes_groups_df(sim, group=g, key=key)
        hits = set(df.loc[df["pvals_adj"] <= 0.05, "names"])
        planted = int(np.isin(list(hits), data.feature_names[data.support]).sum())
        print(f"  {g}, {name}: {len(hits)} genes at pvals_adj <= 0.05, {len(hits) - planted} "
              "of them not planted")
