"""
Clustering without labels: l0-k-means
=====================================

When most features are noise, k-means on all of them finds noise clusters.
:class:`~sparsefs.clustering.L0KMeans` (Chang, Wang, Li & Xu, Statistica Sinica 2018) runs
k-means on the :math:`s` features with the largest between-cluster sum of squares, and picks
:math:`s` by the gap statistic: the objective on the data against column-permuted copies.

The data: experiment 1 of the paper (:func:`~sparsefs.datasets.make_sparse_clusters_exp1`),
6 clusters of 20 samples whose means differ on the first 200 of 2000 features; the labels are
used only to score the result.
"""

# %%
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score

from sparsefs.clustering import L0KMeans
from sparsefs.datasets import make_sparse_clusters_exp1
from sparsefs.metrics import clustering_error_rate
from sparsefs.plotting import plot_gap_curve

data = make_sparse_clusters_exp1(random_state=0)
print(data.X.shape, "true relevant features:", int(data.support.sum()))

# %%
# k-means on every feature
# ------------------------
plain = KMeans(n_clusters=6, n_init=20, random_state=0).fit(data.X)
print(f"k-means, all 2000 features: ARI {adjusted_rand_score(data.y, plain.labels_):.2f}, "
      f"CER {clustering_error_rate(data.y, plain.labels_):.3f}")

# %%
# l0-k-means, s chosen by the gap statistic
# -----------------------------------------
model = L0KMeans(n_clusters=6, n_features_grid=[50, 100, 200, 400, 1000],
                 n_permutations=5, n_init=5, random_state=0).fit(data.X)
kept = model.support_
print(f"l0-k-means: s = {model.n_features_to_select_}, "
      f"ARI {adjusted_rand_score(data.y, model.labels_):.2f}, "
      f"CER {clustering_error_rate(data.y, model.labels_):.3f}")
print(f"{(kept & data.support).sum()} of the {kept.sum()} kept features are relevant")

gap = model.gap_
plot_gap_curve(gap.grid, gap.gap, gap.sd, chosen=gap.grid[gap.best_index])
