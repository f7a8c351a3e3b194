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
# most (standardised genes).
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
# The table scanpy users know, for one cell type: the selected genes higher in B cells than
# in the rest come first (``scores`` are the method's own scores, ``logfoldchanges`` the
# group-vs-rest mean difference).
print(sc.get.rank_genes_groups_df(adata, group="CD19+ B", key="sparsefs").head(5))
