"""
Unsupervised feature selection
==============================

Without labels, a feature is important when it carries the structure of the samples: the
Laplacian score (He, Cai & Niyogi 2005) and SPEC (Zhao & Liu 2007) score how smoothly each
feature varies on the nearest-neighbour graph of the samples; MCFS (Cai, Zhang & He 2010) keeps
the features that best reconstruct its spectral embedding. The labels of the embedded default
data are used only to count how many of its 13 real features each method finds among 500.
"""

# %%
import matplotlib.pyplot as plt
from sklearn.preprocessing import StandardScaler

from sparsefs.datasets import load_default
from sparsefs.plotting import plot_feature_scores
from sparsefs.selection import MCFS, SPEC, LaplacianScore

data = load_default()
X = StandardScaler().fit_transform(data.X)
selectors = {
    "Laplacian score": LaplacianScore(n_features_to_select=13),
    "SPEC": SPEC(n_features_to_select=13),
    "MCFS": MCFS(n_features_to_select=13, n_clusters=3),
}
for name, selector in selectors.items():
    selector.fit(X)  # no y
    found = int((selector.support_ & data.support).sum())
    print(f"{name:<16} {found:2d} of the 13 real features in its top 13")

# %%
# The scores, real features marked
# --------------------------------
fig, axes = plt.subplots(len(selectors), 1, figsize=(7, 7), sharex=True)
for ax, (name, selector) in zip(axes, selectors.items()):
    plot_feature_scores(selector.scores_, support=selector.support_,
                        true_support=data.support, top=40, ax=ax)
    ax.set_title(name)
fig.tight_layout()
