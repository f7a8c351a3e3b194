"""Marker genes with sparsefs on scanpy's bundled pbmc68k_reduced (no download).

Writes the dot plots of docs/single_cell.md into docs/single_cell/ and prints the numbers the
page quotes. Run: ``python docs/examples/marker_genes.py`` (needs scanpy and matplotlib).
"""

import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import scanpy as sc
from sklearn.metrics import adjusted_rand_score

import sparsefs.get
import sparsefs.tl
from sparsefs.selection import FisherScore

OUT = Path(__file__).resolve().parent.parent / "single_cell"
OUT.mkdir(exist_ok=True)
sc.settings.verbosity = 0
sc.settings.figdir = OUT

adata = sc.datasets.pbmc68k_reduced()  # 700 cells x 765 genes, log-normalised and scaled
print(adata.shape, adata.obs["bulk_labels"].nunique(), "cell types")

t = time.perf_counter()
sc.tl.rank_genes_groups(adata, "bulk_labels", method="t-test", key_added="ttest")
t_ttest = time.perf_counter() - t
names_t = adata.uns["ttest"]["names"]
top_t = {g: list(names_t[g][:5]) for g in names_t.dtype.names}
union_t = set().union(*top_t.values())

runs = {
    "sparse_centers": {"method": "sparse_centers", "groupby": "bulk_labels", "n_features": 30,
                           "standardize": True},
    "class_specific": {"method": "class_specific", "groupby": "bulk_labels", "n_features": 3,
                           "selector": FisherScore(),
                           "strategy": "one_vs_rest", "balance": "none"},
    "l0_kmeans": {"method": "sparse_kmeans", "n_features": 30, "n_clusters": 10,
                      "n_features_grid": None, "random_state": 0},
}
rows = []
for key, kw in runs.items():
    kw = dict(kw)
    method = kw.pop("method")
    t = time.perf_counter()
    sparsefs.tl.select(adata, method, key_added=key, **kw)
    dt = time.perf_counter() - t
    sel = set(sparsefs.get.selection_df(adata, key, selected_only=True)["feature"])
    rows.append((key, len(sel), len(sel & union_t), dt))
    if key != "l0_kmeans":
        sc.pl.rank_genes_groups_dotplot(adata, key=key, n_genes=3, show=False,
                                        save=f"_{key}.png", dendrogram=False)
sc.pl.rank_genes_groups_dotplot(adata, key="ttest", n_genes=3, show=False, save="_ttest.png",
                                dendrogram=False)
print(f"rank_genes_groups t-test: {t_ttest:.2f} s, {len(union_t)} genes in the top 5 of a type")
for key, n_sel, n_common, dt in rows:
    print(f"{key}: {n_sel} genes selected, {n_common} among the t-test's top-5 union, {dt:.2f} s")

# l0-k-means: clusters vs the annotated cell types
from sparsefs.clustering import L0KMeans  # noqa: E402

km = L0KMeans(n_clusters=10, n_features_to_select=30, random_state=0).fit(adata.X)
ari = adjusted_rand_score(adata.obs["bulk_labels"], km.labels_)
print("l0-k-means ARI vs bulk_labels:", round(ari, 3))
