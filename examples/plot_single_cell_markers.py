"""
Marker genes on pbmc68k_reduced with scanpy
===========================================

:func:`sparsefs.tl.select` runs any registered method on an :class:`~anndata.AnnData` object
and writes the result the way scanpy's ``rank_genes_groups`` does, so scanpy's plots and
getters read it unchanged. ``pbmc68k_reduced`` (700 cells, 765 genes, 10 annotated cell types)
ships inside scanpy: nothing is downloaded. See :doc:`/single_cell`.
"""

# %%
import scanpy as sc

import sparsefs.get
import sparsefs.tl

sc.settings.verbosity = 0
adata = sc.datasets.pbmc68k_reduced()
print(adata)

# %%
# Sparse centers: one set of genes for all cell types
# ---------------------------------------------------
# The sparse center classifier keeps the 30 genes on which the cell types' centers differ
# most (standardised genes). Like scanpy's ``rank_genes_groups``, ``tl.select`` reads
# ``adata.raw`` (the log-normalised values) when it exists; ``adata.X`` is scaled here.
sparsefs.tl.select(adata, "sparse_centers", groupby="bulk_labels", n_features=30,
                   standardize=True)
print(sparsefs.get.selection_df(adata, selected_only=True).head(10).to_string(index=False))

# %%
# scanpy's dot plot reads the result under ``key="sparsefs"``: the top three genes of each
# cell type among the selected ones.
sc.pl.rank_genes_groups_dotplot(adata, key="sparsefs", n_genes=3, dendrogram=False,
                                show=False)

# %%
# Class-specific selection: three genes per cell type
# ---------------------------------------------------
# A Fisher score of each type against the rest, three genes each.
from sparsefs.selection import FisherScore

sparsefs.tl.select(adata, "class_specific", groupby="bulk_labels", n_features=3,
                   selector=FisherScore(), strategy="one_vs_rest", balance="none",
                   key_added="per_type")
sc.pl.rank_genes_groups_dotplot(adata, key="per_type", n_genes=3, dendrogram=False,
                                show=False)

# %%
# The table scanpy users know, for one cell type: the genes higher in B cells than in the
# rest come first, the selected ones before the others (``scores`` are the method's own
# scores, ``logfoldchanges`` scanpy's log2 fold changes).
print(sc.get.rank_genes_groups_df(adata, group="CD19+ B", key="sparsefs").head(5))

# %%
# Error control at the level of donors
# ------------------------------------
# Cells of one donor are not independent. With ``sample_key`` the per-group p-values come
# from donor pseudobulks (here simulated: 6 donors, 4 cell types in each, 20 planted markers
# per type), where scanpy's cell-level t-test calls hundreds of genes that were not planted.
from sparsefs.datasets import make_multi_donor_counts

data = make_multi_donor_counts(n_genes=2000, n_groups=4, n_donors=6, log_fc=2.0,
                               random_state=0)
cells = data.to_anndata()
sc.tl.rank_genes_groups(cells, "group", method="t-test")
sparsefs.tl.select(cells, "fisher_score", groupby="group", sample_key="donor")
print("design:", cells.uns["sparsefs"]["params"]["design"])
for key in ("rank_genes_groups", "sparsefs"):
    df = sc.get.rank_genes_groups_df(cells, group="type0", key=key, pval_cutoff=0.05)
    planted = df["names"].isin(data.feature_names[data.support]).sum()
    print(f"{key}: {len(df)} genes at adjusted p <= 0.05, {len(df) - planted} not planted")
